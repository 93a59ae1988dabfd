/* SPDX-License-Identifier: MIT */
/*
 * vcpu/choice.c - choice points: where two or more contexts may run,
 * an exploring scheduler (struct vs_vcpu_sched_ops.choose, vcpu/sched.c)
 * decides, and the engine records every decision other than the
 * default (vs_machine_decisions()): the run's schedule.
 *
 * Locking: the machine's host thread, between events.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* ---- a scheduler's choices (struct vs_vcpu_choice) --------------------- */

/* Put context @id into @cand[@from..*@n), kept in order of id. */
static void cand_insert(unsigned int *cand, unsigned int from,
			unsigned int *n, unsigned int id)
{
	unsigned int i = (*n)++;

	while (i > from && cand[i - 1] > id) {
		cand[i] = cand[i - 1];
		i--;
	}
	cand[i] = id;
}

/*
 * The contexts that may run now, the default first (struct
 * vs_vcpu_choice.cand): @cur unless it @spins while another can run,
 * then the runnable ones by id; sleepers with a timeout only when
 * nothing else can run or @cur spins.
 */
static unsigned int candidates(const struct vs_machine *m,
			       const struct vs__vcpu *cur, int spins,
			       unsigned int *cand)
{
	unsigned int i, n = 0, first;
	int timed;

	if (cur)
		cand[n++] = cur->id;
	first = n;
	for (timed = 0; timed < 2 && n == first; timed++) {
		if (timed && cur && !spins)
			break;
		for (i = 0; i < m->heap_n; i++)
			if ((m->heap[i]->state == VS__V_BLOCKED) == timed)
				cand_insert(cand, first, &n, m->heap[i]->id);
	}
	if (cur && spins && n > 1) {
		memmove(cand, cand + 1, (n - 1) * sizeof(*cand));
		n--;
	}
	return n;
}

static void record(struct vs_machine *m, const struct vs_vcpu_choice *c,
		   unsigned int run)
{
	struct vs_vcpu_decision *d;

	if (m->dec_n == m->dec_cap) {
		d = vs__grow(m->dec, &m->dec_cap, sizeof(*d), 64);
		if (!d) {
			m->dec_lost = 1;
			return;
		}
		m->dec = d;
	}
	d = &m->dec[m->dec_n++];
	d->at = c->at;
	d->ctx = (uint16_t)c->ctx;
	d->run = (uint16_t)run;
	d->kind = (uint8_t)c->kind;
	d->preempt = vs__choice_preempts(c);
}

/* Ask the scheduler choice @c, numbered here, and record an answer
 * other than the default.  Return: the index in @c->cand chosen. */
static unsigned int ask(struct vs_machine *m, struct vs_vcpu_choice *c)
{
	unsigned int i;

	c->index = m->nchoices++;
	i = m->cfg.sched->choose(m->sched, m, c);
	if (i >= c->nr)
		vs__vcpu_die("vcpu scheduler chose past its alternatives", EINVAL);
	if (i)
		record(m, c, c->cand[i]);
	return i;
}

/*
 * Ask the scheduler who runs: @cur before its event @op on @addr, or,
 * with @cur NULL, whoever after @anchor stopped (NULL: the run starts).
 * A decision other than the default is recorded.
 * Return: the context, NULL when none can run.
 */
static struct vs__vcpu *choose(struct vs_machine *m, struct vs__vcpu *cur,
			       const struct vs__vcpu *anchor, unsigned int op,
			       const volatile void *addr)
{
	unsigned int cand[VS__VCPU_CONTEXTS];
	struct vs_vcpu_choice c;

	c.nr = candidates(m, cur, cur && op == VS_VCPU_RELAX, cand);
	if (c.nr < 2)
		return c.nr ? &m->v[cand[0]] : NULL;
	if (cur)
		anchor = cur;
	c.kind = cur ? VS_VCPU_CHOOSE_RUN : VS_VCPU_CHOOSE_RUN_AFTER_STOP;
	c.ctx = anchor ? anchor->id : VS_VCPU_HOST;
	c.at = (anchor ? anchor->nev : m->host_nev) - 1;
	c.cand = cand;
	c.op = cur ? op : 0;
	c.addr = cur ? addr : NULL;
	return &m->v[cand[ask(m, &c)]];
}

/* ---- the policy of a scheduler that chooses ----------------------------- */

/* Before @v's event: a RUN choice point. */
static struct vs__vcpu *choice_before_event(struct vs_machine *m,
					    struct vs__vcpu *v,
					    unsigned int op,
					    const volatile void *addr)
{
	return choose(m, v, NULL, op, addr);
}

/* After @stopped stopped: a RUN_AFTER_STOP choice point, anchored to
 * the context that stopped or to the host. */
static struct vs__vcpu *choice_after_stop(struct vs_machine *m,
					  struct vs__vcpu *stopped)
{
	if (stopped)
		stopped->nev++;
	else
		m->host_nev++;
	return choose(m, NULL, stopped, 0, NULL);
}

/* A memory model's choice point, with an anchor of its own. */
static unsigned int choice_memory(struct vs_machine *m, struct vs__vcpu *v,
				  enum vs_vcpu_choice_kind kind,
				  unsigned int nr)
{
	unsigned int cand[VS__VCPU_CONTEXTS + 1], i;
	struct vs_vcpu_choice c;

	for (i = 0; i < nr; i++)
		cand[i] = i;
	c.kind = kind;
	c.ctx = v->id;
	c.at = v->nev++;	/* an anchor of its own */
	c.nr = nr;
	c.cand = cand;
	c.op = 0;
	c.addr = NULL;
	return ask(m, &c);
}

const struct vs__policy vs__choice_policy = {
	.before_event = choice_before_event,
	.after_stop = choice_after_stop,
	.memory = choice_memory,
	.by_clock = 0,
};
