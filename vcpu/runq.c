/* SPDX-License-Identifier: MIT */
/*
 * vcpu/runq.c - the run queue: who runs next, and the clock scheduler.
 *
 * Exactly one context runs at a time (or the host, outside
 * vs_machine_run()); the others are idle, ready (waiting, FIFO, for
 * their vCPU, which another context occupies), runnable (the occupant
 * of their vCPU, in the heap, keyed by their clock) or blocked (on a
 * futex queue, vcpu/futex.c, and in the heap keyed by their deadline
 * when they have one).  Before every seam event the running context
 * gives way as the machine's scheduler says: with the clock scheduler
 * (vs_vcpu_sched_clock, the default) to any context earlier in virtual
 * time, so that memory is touched in virtual-time order; with an
 * exploring one, at its choice points (vcpu/choice.c).
 *
 * Locking: the machine's host thread, between events.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* The heap key: a runnable vCPU's clock, a sleeper's deadline. */
static uint64_t key_of(const struct vs__vcpu *v)
{
	return v->state == VS__V_BLOCKED ? v->deadline : v->clock;
}

static int before(const struct vs__vcpu *a, const struct vs__vcpu *b)
{
	uint64_t ka = key_of(a), kb = key_of(b);

	if (ka != kb)
		return ka < kb;
	if (a->tiebreak != b->tiebreak)
		return a->tiebreak < b->tiebreak;
	return a->id < b->id;
}

/* ---- the heap of runnable vCPUs and timed sleepers --------------------- */

static void heap_set(struct vs_machine *m, unsigned int i, struct vs__vcpu *v)
{
	m->heap[i] = v;
	v->heap_idx = (int)i;
}

static void heap_up(struct vs_machine *m, unsigned int i)
{
	struct vs__vcpu *v = m->heap[i];

	while (i > 0 && before(v, m->heap[(i - 1) / 2])) {
		heap_set(m, i, m->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(m, i, v);
}

static void heap_down(struct vs_machine *m, unsigned int i)
{
	struct vs__vcpu *v = m->heap[i];
	unsigned int c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= m->heap_n)
			break;
		if (c + 1 < m->heap_n && before(m->heap[c + 1], m->heap[c]))
			c++;
		if (!before(m->heap[c], v))
			break;
		heap_set(m, i, m->heap[c]);
		i = c;
	}
	heap_set(m, i, v);
}

void vs__heap_push(struct vs_machine *m, struct vs__vcpu *v)
{
	v->tiebreak = vs__rng_next(m);
	m->heap[m->heap_n] = v;
	v->heap_idx = (int)m->heap_n++;
	heap_up(m, m->heap_n - 1);
}

void vs__heap_remove(struct vs_machine *m, struct vs__vcpu *v)
{
	unsigned int i = (unsigned int)v->heap_idx;
	struct vs__vcpu *last = m->heap[--m->heap_n];

	v->heap_idx = -1;
	if (last == v)
		return;
	heap_set(m, i, last);
	heap_down(m, i);
	heap_up(m, (unsigned int)last->heap_idx);
}

/* ---- futex queues (vcpu/futex.c sleeps and wakes on them) ---------------- */

struct vs__vcpu **vs__fq_head(struct vs_machine *m,
			      const volatile void *word)
{
	uintptr_t a = (uintptr_t)word >> 2;

	return &m->fq[(a ^ (a >> 10) ^ (a >> 20)) % VS__FQ_BUCKETS];
}

void vs__fq_add(struct vs_machine *m, struct vs__vcpu *v)
{
	struct vs__vcpu **p = vs__fq_head(m, v->wait_word);

	while (*p)
		p = &(*p)->wait_next;
	v->wait_next = NULL;
	*p = v;
}

void vs__fq_del(struct vs_machine *m, struct vs__vcpu *v)
{
	struct vs__vcpu **p = vs__fq_head(m, v->wait_word);

	while (*p != v)
		p = &(*p)->wait_next;
	*p = v->wait_next;
	v->wait_next = NULL;
}

/* ---- vCPUs and the contexts bound to them ---------------------------- */

/*
 * Move @v's clock to @to if that is later, accounting the jump to its
 * vCPU: up to @switch_cost cycles of it are a context switch, the rest
 * time it slept or waited for the vCPU.
 */
static void clock_advance(struct vs_machine *m, struct vs__vcpu *v,
			  uint64_t to, uint64_t switch_cost)
{
	struct vs_machine_stats *st = &m->cpus[v->cpu].st;
	uint64_t jump, sw;

	if (to <= v->clock)
		return;
	jump = to - v->clock;
	sw = jump < switch_cost ? jump : switch_cost;
	st->switch_cycles += sw;
	st->sleep_cycles += jump - sw;
	st->cycles += jump;
	v->clock = to;
}

/*
 * Give @v's vCPU to @v, or queue @v for it; @v is runnable at @now, of
 * which the last @switch_cost cycles are a context switch.
 */
void vs__make_runnable(struct vs_machine *m, struct vs__vcpu *v,
		       uint64_t now, uint64_t switch_cost)
{
	struct vs__cpu *c = &m->cpus[v->cpu];

	clock_advance(m, v, now, switch_cost);
	if (!c->occupant) {
		c->occupant = v;
		c->slice_start = v->clock;
		v->state = VS__V_RUNNABLE;
		vs__heap_push(m, v);
		return;
	}
	v->state = VS__V_READY;
	v->ready_next = NULL;
	if (c->ready_tail)
		c->ready_tail->ready_next = v;
	else
		c->ready_head = v;
	c->ready_tail = v;
}

/*
 * @v leaves its vCPU (it blocked, finished or was preempted) at its
 * clock: the next context waiting for the vCPU gets it, paying a
 * context switch.
 */
void vs__cpu_release(struct vs_machine *m, struct vs__vcpu *v)
{
	struct vs__cpu *c = &m->cpus[v->cpu];
	struct vs__vcpu *n = c->ready_head;
	uint64_t sw;

	if (c->occupant != v)
		return;
	c->occupant = NULL;
	c->clock = v->clock;
	if (!n)
		return;
	c->ready_head = n->ready_next;
	if (!c->ready_head)
		c->ready_tail = NULL;
	n->ready_next = NULL;
	sw = m->coh ? m->profile.context_switch : 0;
	vs__make_runnable(m, n, v->clock + sw, sw);
}

/* Nothing may run: end the run, or report the deadlock. */
static void no_runnable(struct vs_machine *m, struct vs__vcpu *from,
			int dying)
{
	if (m->nr_busy == 0 && !m->entered) {
		m->done = 1;
		vs__switch_to(m, from, NULL, dying);
		return;
	}
	vs__vcpu_report_deadlock(m);
	m->deadlocked = 1;
	if (m->entered) {
		fputs(m->report, stderr);
		abort();
	}
	vs__switch_to(m, from, NULL, dying);
}

/* ---- scheduling -------------------------------------------------------- */

/*
 * Take @v, chosen to run, out of the heap.  A sleeper times out first
 * (its deadline came first, or the scheduler chose it) and runs when
 * its vCPU is free.  Return: @v, or NULL when it now waits for its vCPU.
 */
static struct vs__vcpu *take(struct vs_machine *m, struct vs__vcpu *v)
{
	vs__heap_remove(m, v);
	if (v->state != VS__V_BLOCKED)
		return v;
	vs__fq_del(m, v);
	v->wait_ret = -ETIMEDOUT;
	vs__make_runnable(m, v, v->deadline, 0);
	if (v->state != VS__V_RUNNABLE)
		return NULL;
	vs__heap_remove(m, v);
	return v;
}

/* The next context to run after @stopped stopped (NULL: the run
 * starts), taken out of the heap, or NULL when none can run. */
struct vs__vcpu *vs__take_next(struct vs_machine *m,
			       struct vs__vcpu *stopped)
{
	struct vs__vcpu *v;

	do {
		if (!m->heap_n)
			return NULL;
		v = m->policy->after_stop(m, stopped);
	} while (!take(m, v));
	return v;
}

/* The running context @v stops running (it blocked, its work ended or
 * its slice is over). */
void vs__run_next(struct vs_machine *m, struct vs__vcpu *v, int dying)
{
	struct vs__vcpu *next = vs__take_next(m, v);

	if (!next) {
		no_runnable(m, v, dying);
		return;
	}
	if (next == v) {	/* its own timeout came first */
		v->state = VS__V_RUNNING;
		return;
	}
	m->cpus[v->cpu].st.switches++;
	vs__switch_to(m, v, next, dying);
}

/*
 * Before @v's event @op on @addr: give way as the scheduler says (the
 * clock scheduler: to an earlier context, if any), or because @v's
 * slice is over.
 */
void vs__yield(struct vs_machine *m, struct vs__vcpu *v, unsigned int op,
	       const volatile void *addr)
{
	struct vs__cpu *c = &m->cpus[v->cpu];
	struct vs__vcpu *next;

	c->clock = v->clock;
	v->nev++;
	/* Its slice is over and another context waits for the vCPU. */
	if (c->ready_head && v->clock - c->slice_start >= VS__VCPU_SLICE) {
		vs__mem_stop(m, v);	/* a context switch drains */
		vs__cpu_release(m, v);
		vs__make_runnable(m, v, v->clock, 0);	/* queued behind it */
		m->cpus[v->cpu].st.switches++;
		vs__run_next(m, v, 0);
		return;
	}
	if (!m->heap_n)
		return;
	next = m->policy->before_event(m, v, op, addr);
	if (next == v)
		return;
	v->state = VS__V_RUNNABLE;
	vs__heap_push(m, v);
	if (!next || !take(m, next))
		next = vs__take_next(m, v);
	if (next == v) {
		v->state = VS__V_RUNNING;
		return;
	}
	m->cpus[v->cpu].st.switches++;
	vs__switch_to(m, v, next, 0);
}

/* ---- the clock scheduler ------------------------------------------------ */

/* Give way to the earliest context when it is earlier than @v. */
static struct vs__vcpu *clock_before_event(struct vs_machine *m,
					   struct vs__vcpu *v, unsigned int op,
					   const volatile void *addr)
{
	(void)op;
	(void)addr;
	return before(m->heap[0], v) ? NULL : v;
}

/* The earliest context runs. */
static struct vs__vcpu *clock_after_stop(struct vs_machine *m,
					 struct vs__vcpu *stopped)
{
	(void)stopped;
	return m->heap[0];
}

/* What a load reads, or which buffered store is written: drawn from the
 * machine's PRNG. */
static unsigned int clock_memory(struct vs_machine *m, struct vs__vcpu *v,
				 enum vs_vcpu_choice_kind kind,
				 unsigned int nr)
{
	(void)v;
	(void)kind;
	return (unsigned int)(vs__rng_next(m) % nr);
}

const struct vs__policy vs__clock_policy = {
	.before_event = clock_before_event,
	.after_stop = clock_after_stop,
	.memory = clock_memory,
	.by_clock = 1,
};

const struct vs_vcpu_sched_ops vs_vcpu_sched_clock = {
	.name = "clock",
};
