/* SPDX-License-Identifier: MIT */
/*
 * vcpu/event.c - the seam's events and the work the model charges: what
 * each costs the running context (vmsim/vcpu_cost.h), after it gave way
 * as the scheduler says (vcpu/runq.c); and what the running context
 * asks of itself (vs_vcpu_self(), its virtual time).
 *
 * Locking: the running context, between events.
 */
#include <errno.h>
#include <unistd.h>

#include "internal.h"

/* ---- the seam hooks ---------------------------------------------------- */

/* The profile's CPU that context @v runs on. */
static unsigned int cost_cpu(const struct vs_machine *m,
			     const struct vs__vcpu *v)
{
	(void)m;
	return v->cpu;
}

static uint64_t event_cost(struct vs_machine *m, struct vs__vcpu *v,
			   const volatile void *addr, enum vs_vcpu_op op,
			   uint64_t *lead)
{
	static const enum vs_access kind[] = {
		[VS_VCPU_LOAD] = VS_ACCESS_LOAD,
		[VS_VCPU_STORE] = VS_ACCESS_STORE,
		[VS_VCPU_RMW] = VS_ACCESS_RMW,
		[VS_VCPU_FENCE] = VS_ACCESS_FENCE,
	};

	*lead = 0;
	if (!m->coh)
		return 1;
	if (op == VS_VCPU_RELAX)
		return m->profile.pause;
	if (op == VS_VCPU_ORDER)	/* no instruction on x86-64 */
		return 0;
	return vs_coherence_access_lead(m->coh, cost_cpu(m, v),
					(const void *)addr, kind[op],
					v->clock, lead);
}

/* More events than max_events: the run fails as stuck. */
static void count_event(struct vs_machine *m, const struct vs__vcpu *v)
{
	if (v->id == m->streak_id) {
		m->streak++;
	} else {
		m->streak_id = v->id;
		m->streak = 1;
	}
	if (!m->cfg.max_events || ++m->nevents <= m->cfg.max_events)
		return;
	(void)vs_machine_fail("stuck: more than %llu events (max_events); "
			      "the last %llu in a row were this work's",
			      (unsigned long long)m->cfg.max_events,
			      (unsigned long long)m->streak);
}

/* Interrupt handlers sent to @v's vCPU since its last event: it pays
 * them now, before its own event, as a CPU takes an interrupt between
 * two instructions. */
static void take_irqs(struct vs_machine *m, struct vs__vcpu *v)
{
	struct vs__cpu *c = &m->cpus[v->cpu];
	uint64_t cost = c->irq_pending;

	if (!cost)
		return;
	c->irq_pending = 0;
	v->clock += cost;
	c->st.cycles += cost;
	c->st.work_cycles[VS_VCPU_IRQ] += cost;
	vs__hash_event(m, v->id, 0x400 | VS_VCPU_IRQ, v->clock);
}

void vs__vcpu_event(const volatile void *addr, unsigned int code)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__vcpu *v = m->cur;
	enum vs_vcpu_op op = (enum vs_vcpu_op)(code & 0xf);
	struct vs_machine_stats *st;
	uint64_t cost, lead, seq;
	unsigned int by, back = 0;

	count_event(m, v);
	if (vs__vcpu_watch)
		vs__vcpu_watch_event(m, v);
	take_irqs(m, v);
	vs__yield(m, v, op, addr);
	if (m->poison && addr && op <= VS_VCPU_RMW &&
	    vs__vcpu_poisoned(m, addr, &seq, &by))
		vs__vcpu_fail_freed(m, addr, op, seq, by);
	st = &m->cpus[v->cpu].st;
	cost = event_cost(m, v, addr, op, &lead);
	if (lead) {
		/* The line is another's until then: whoever is earlier
		 * goes first and its access is seen by this one. */
		v->clock += lead;
		st->cycles += lead;
		st->access_cycles += lead;
		cost -= lead;
		/* With a scheduler that chooses, the clocks do not decide
		 * who runs: the event had its choice point. */
		if (m->policy->by_clock)
			vs__yield(m, v, op, addr);
		st = &m->cpus[v->cpu].st;
	}
	/* After the last yield: another context's event in between would
	 * take the model's place for this access's end. */
	if (m->mem)
		back = vs__mem_event(m, v, addr, code);
	v->clock += cost;
	st->cycles += cost;
	if (op == VS_VCPU_RELAX)
		st->pause_cycles += cost;
	else
		st->access_cycles += cost;
	st->events++;
	if (op == VS_VCPU_RMW)
		st->rmws++;
	vs__hash_event(m, v->id, op, v->clock);
	vs__vcpu_log(m, v, addr, op, back);
	if (m->cfg.flags & VS_MACHINE_TRACE)
		vs__vcpu_trace(m, v, addr, op, back, cost + lead);
}

void vs_vcpu_work(enum vs_vcpu_work what, const void *addr, uint64_t bytes)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__vcpu *v = m ? m->cur : NULL;
	uint64_t cost = 0;

	if (!v || !m->coh || (unsigned int)what >= VS_VCPU_WORK_NR ||
	    what == VS_VCPU_IRQ)
		return;
	take_irqs(m, v);
	vs__yield(m, v, VS_VCPU_OP_WORK + (unsigned int)what, addr);
	switch (what) {
	case VS_VCPU_CLEAR:
		cost = vs_coherence_charge_clear(m->coh, cost_cpu(m, v), addr,
						 bytes, v->clock);
		break;
	case VS_VCPU_COPY:
		/* vs_vcpu_work() has no source address: not cached. */
		cost = vs_coherence_charge_copy(m->coh, cost_cpu(m, v),
						addr, NULL, bytes,
						v->clock);
		break;
	case VS_VCPU_FAULT:
		cost = (uint64_t)m->profile.fault_entry + m->profile.fault_exit;
		break;
	case VS_VCPU_KERNEL:
		cost = bytes;
		break;
	case VS_VCPU_SYSCALL:
	default:	/* VS_VCPU_WORK_NR: refused above */
		cost = m->profile.syscall;
		break;
	}
	if ((m->cfg.flags & VS_MACHINE_NO_TRAPS) &&
	    (what == VS_VCPU_FAULT || what == VS_VCPU_SYSCALL ||
	     what == VS_VCPU_KERNEL))
		cost = 0;
	v->clock += cost;
	m->cpus[v->cpu].st.cycles += cost;
	m->cpus[v->cpu].st.work_cycles[what] += cost;
	vs__hash_event(m, v->id, 0x400 | (unsigned int)what, v->clock);
}

void vs_vcpu_name(const void *addr, size_t len, const char *name)
{
	struct vs_machine *m = vs__vcpu_machine;

	if (!m || !m->cur || !addr || !len || !name || !*name)
		return;
	vs__vcpu_name_range(m, addr, len, name);
	if (m->coh)
		(void)vs_coherence_name(m->coh, addr, len, name);
}

void vs_vcpu_charge(uint64_t cycles)
{
	struct vs_machine *m = vs__vcpu_machine;

	if (!m || !m->cur)
		return;
	m->cur->clock += cycles;
	m->cpus[m->cur->cpu].st.cycles += cycles;
	m->cpus[m->cur->cpu].st.charge_cycles += cycles;
}

int vs_vcpu_self(void)
{
	return vs__vcpu_cur;
}

struct vs_machine *vs_vcpu_machine(void)
{
	return vs__vcpu_cur >= 0 ? vs__vcpu_machine : NULL;
}

uint64_t vs_vcpu_now_ns(void)
{
	struct vs_machine *m = vs__vcpu_machine;

	if (!m || !m->cur)
		return 0;
	return (uint64_t)((double)m->cur->clock / m->ghz);
}

int vs_vcpu_cpu(void)
{
	struct vs_machine *m = vs__vcpu_machine;

	return m && m->cur ? (int)m->cur->cpu : -1;
}

int vs_vcpu_node(void)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs_cpu_place place;

	if (!m || !m->cur)
		return -1;
	if (!m->coh || vs_vcpu_cpu_place(&m->profile, m->cur->cpu, &place))
		return 0;
	return (int)place.socket;
}

unsigned int vs_vcpu_nr_nodes(void)
{
	struct vs_machine *m = vs__vcpu_machine;

	return m && m->cur && m->coh ? m->profile.sockets : 1;
}

unsigned int vs_vcpu_nr_cpus(void)
{
	struct vs_machine *m = vs__vcpu_machine;
	long n;

	if (m && m->cur)
		return m->coh ? m->profile.nr_cpus : m->nr;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned int)n : 1;
}

int vs_vcpu_interrupt(int cpu, uint64_t cycles)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__cpu *c;

	if (!m || !m->cur)
		return 0;
	if (cpu < 0 || (unsigned int)cpu >= m->nr || (unsigned int)cpu ==
	    m->cur->cpu)
		return -EINVAL;
	c = &m->cpus[cpu];
	if (!c->occupant || (c->occupant->state != VS__V_RUNNABLE &&
			     c->occupant->state != VS__V_RUNNING))
		return 0;
	if (!(m->cfg.flags & VS_MACHINE_NO_TRAPS))
		cycles += (uint64_t)m->profile.fault_entry +
			  m->profile.fault_exit;
	c->irq_pending += cycles;
	return 1;
}

uint64_t vs_vcpu_ipi_cycles(void)
{
	struct vs_machine *m = vs__vcpu_machine;

	return m && m->cur && m->coh ? m->profile.ipi : 0;
}
