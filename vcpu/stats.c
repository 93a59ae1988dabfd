/* SPDX-License-Identifier: MIT */
/*
 * vcpu/stats.c - what a machine tells of itself: counters, the event
 * hash, clocks, the report, the schedule, the cost model.
 *
 * Locking: the machine's host thread or one of its vCPUs.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

int vs_machine_stats(struct vs_machine *m, int cpu, struct vs_machine_stats *st)
{
	struct vs_coherence_stats cs;
	unsigned int i, w;

	if (!m || !st || cpu >= (int)m->nr || cpu < -1)
		return -EINVAL;
	if (cpu >= 0) {
		*st = m->cpus[cpu].st;
		if (m->coh) {
			vs_coherence_stats(m->coh, (unsigned int)cpu, &cs);
			st->transfers = cs.transfers;
		}
		return 0;
	}
	memset(st, 0, sizeof(*st));
	for (i = 0; i < m->nr; i++) {
		struct vs_machine_stats one;

		(void)vs_machine_stats(m, (int)i, &one);
		st->cycles += one.cycles;
		st->events += one.events;
		st->switches += one.switches;
		st->transfers += one.transfers;
		st->rmws += one.rmws;
		st->sleeps += one.sleeps;
		st->access_cycles += one.access_cycles;
		st->pause_cycles += one.pause_cycles;
		for (w = 0; w < VS_VCPU_WORK_NR; w++)
			st->work_cycles[w] += one.work_cycles[w];
		st->futex_cycles += one.futex_cycles;
		st->switch_cycles += one.switch_cycles;
		st->charge_cycles += one.charge_cycles;
		st->sleep_cycles += one.sleep_cycles;
	}
	return 0;
}

uint64_t vs_machine_hash(struct vs_machine *m)
{
	return m ? m->hash : 0;
}

int vs_machine_abandoned(struct vs_machine *m)
{
	return m && (m->failed || m->deadlocked);
}

const char *vs_machine_report(struct vs_machine *m)
{
	return m ? m->report : "";
}

int vs_machine_decisions(struct vs_machine *m,
			 const struct vs_vcpu_decision **dec, size_t *nr)
{
	if (!m || !dec || !nr)
		return -EINVAL;
	*dec = m->dec;
	*nr = m->dec_n;
	return m->dec_lost ? -ENOMEM : 0;
}

uint64_t vs_machine_clock(struct vs_machine *m, int cpu)
{
	uint64_t max = 0;
	unsigned int i;

	if (!m)
		return 0;
	if (cpu >= 0) {
		if ((unsigned int)cpu >= m->nr)
			return 0;
		/* The running context's clock is ahead of its vCPU's mark. */
		if (m->cur && m->cur->cpu == (unsigned int)cpu)
			return m->cur->clock;
		return m->cpus[cpu].clock;
	}
	for (i = 0; i < m->nr; i++) {
		uint64_t c = vs_machine_clock(m, (int)i);

		max = c > max ? c : max;
	}
	return max;
}

unsigned int vs_machine_nr_vcpus(struct vs_machine *m)
{
	return m ? m->nr : 0;
}

struct vs_coherence *vs_machine_coherence(struct vs_machine *m)
{
	return m ? m->coh : NULL;
}
