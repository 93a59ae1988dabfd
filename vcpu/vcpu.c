/* SPDX-License-Identifier: MIT */
/*
 * vcpu/vcpu.c - the virtual-CPU engine: contexts, the scheduler, futex
 * queues in virtual time, deadlock reports.
 *
 * One host thread runs a machine.  Exactly one vCPU runs at a time (or
 * the host, outside vs_machine_run()); the others are idle, runnable
 * (in the heap, keyed by their clock) or blocked (on a futex queue, and
 * in the heap keyed by their deadline when they have one).  At every
 * seam event the running vCPU is charged the event's cost, after it
 * gave way to any vCPU earlier in virtual time: memory is touched in
 * virtual-time order.
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../sync/internal.h"
#include <vmsim/lockdep.h>
#include <vmsim/lockstat.h>
#include <vmsim/vcpu_cost.h>

#if defined(__SANITIZE_ADDRESS__)
#define VCPU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VCPU_ASAN 1
#endif
#endif
#ifdef VCPU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

struct vs_machine *vs__vcpu_machine;
int vs__vcpu_cur = -1;
int vs__vcpu_own_slots = VS_VCPU_MAX;
int vs__vcpu_post;

#define DEFAULT_STACK (256 * 1024)
#define FNV_BASIS 0xcbf29ce484222325ull	/* the event hash's start */

/* ---- small helpers ---------------------------------------------------- */

static uint64_t rng_next(struct vs_machine *m)
{
	return vs__splitmix64(&m->rng);
}

static void hash_event(struct vs_machine *m, unsigned int id, unsigned int op,
		       uint64_t clock)
{
	uint64_t h = m->hash;

	h = (h ^ (id | (uint64_t)op << 16)) * 0x100000001b3ull;
	h = (h ^ clock) * 0x100000001b3ull;
	m->hash = h;
}

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

static void heap_push(struct vs_machine *m, struct vs__vcpu *v)
{
	v->tiebreak = rng_next(m);
	m->heap[m->heap_n] = v;
	v->heap_idx = (int)m->heap_n++;
	heap_up(m, m->heap_n - 1);
}

static void heap_remove(struct vs_machine *m, struct vs__vcpu *v)
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

/* ---- futex queues ---------------------------------------------------------- */

static unsigned int fq_bucket(const volatile void *word)
{
	uintptr_t a = (uintptr_t)word >> 2;

	return (unsigned int)((a ^ (a >> 10) ^ (a >> 20)) % VS__FQ_BUCKETS);
}

static void fq_add(struct vs_machine *m, struct vs__vcpu *v)
{
	struct vs__vcpu **p = &m->fq[fq_bucket(v->wait_word)];

	while (*p)
		p = &(*p)->wait_next;
	v->wait_next = NULL;
	*p = v;
}

static void fq_del(struct vs_machine *m, struct vs__vcpu *v)
{
	struct vs__vcpu **p = &m->fq[fq_bucket(v->wait_word)];

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
static void make_runnable(struct vs_machine *m, struct vs__vcpu *v,
			  uint64_t now, uint64_t switch_cost)
{
	struct vs__cpu *c = &m->cpus[v->cpu];

	clock_advance(m, v, now, switch_cost);
	if (!c->occupant) {
		c->occupant = v;
		c->slice_start = v->clock;
		v->state = VS__V_RUNNABLE;
		heap_push(m, v);
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
static void cpu_release(struct vs_machine *m, struct vs__vcpu *v)
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
	make_runnable(m, n, v->clock + sw, sw);
}

/* ---- contexts -------------------------------------------------------------- */

#if defined(__x86_64__)
void vs__ctx_switch(void **save_sp, void *load_sp);
void vs__ctx_start(void);

/* Lay out a fresh stack that vs__ctx_switch() "returns" into
 * vs__ctx_start with r12 = @fn and r13 = @arg (vcpu/switch.S). */
static void ctx_make(struct vs__vcpu *v, void (*fn)(void *), void *arg)
{
	uint64_t *top = (uint64_t *)(((uintptr_t)(v->stack_lo + v->stack_len))
				     & ~(uintptr_t)15);
	uint32_t *ctl;

	*--top = (uint64_t)(uintptr_t)vs__ctx_start;	/* ret */
	*--top = 0;					/* rbp */
	*--top = 0;					/* rbx */
	*--top = (uint64_t)(uintptr_t)fn;		/* r12 */
	*--top = (uint64_t)(uintptr_t)arg;		/* r13 */
	*--top = 0;					/* r14 */
	*--top = 0;					/* r15 */
	*--top = 0;
	ctl = (uint32_t *)top;
	ctl[0] = 0x1f80;	/* MXCSR: all exceptions masked */
	ctl[1] = 0x037f;	/* x87 control word at reset */
	v->sp = top;
}

static void ctx_switch(void **save, void *load)
{
	vs__ctx_switch(save, load);
}
#else
/* Portable: ucontext.  @sp points at the vCPU's ucontext_t. */
struct uctx {
	ucontext_t uc;
};

static void ctx_entry(unsigned int hi, unsigned int lo, unsigned int ahi,
		      unsigned int alo)
{
	void (*fn)(void *) = (void (*)(void *))(((uintptr_t)hi << 32) | lo);
	void *arg = (void *)(((uintptr_t)ahi << 32) | alo);

	fn(arg);
	abort();
}

static void ctx_make(struct vs__vcpu *v, void (*fn)(void *), void *arg)
{
	struct uctx *u = v->sp ? v->sp : malloc(sizeof(*u));
	uintptr_t f = (uintptr_t)fn, a = (uintptr_t)arg;

	if (!u)
		vs__die("vcpu context", ENOMEM);
	getcontext(&u->uc);
	u->uc.uc_stack.ss_sp = v->stack_lo;
	u->uc.uc_stack.ss_size = v->stack_len;
	u->uc.uc_link = NULL;
	makecontext(&u->uc, (void (*)(void))ctx_entry, 4,
		    (unsigned int)(f >> 32), (unsigned int)f,
		    (unsigned int)(a >> 32), (unsigned int)a);
	v->sp = u;
}

static void ctx_switch(void **save, void *load)
{
	struct uctx *from = *save, *to = load;

	if (!from) {
		from = malloc(sizeof(*from));
		if (!from)
			vs__die("vcpu context", ENOMEM);
		*save = from;
	}
	swapcontext(&from->uc, &to->uc);
}
#endif

/*
 * Switch from @from (NULL: the host) to @to (NULL: the host).  @from's
 * context is dead when @dying (its work ended), so ASan may drop its
 * fake stack.
 */
static void switch_to(struct vs_machine *m, struct vs__vcpu *from,
		      struct vs__vcpu *to, int dying)
{
	void **save = from ? &from->sp : &m->host_sp;
	void *load = to ? to->sp : m->host_sp;

	m->cur = to;
	vs__vcpu_cur = to ? (int)to->id : -1;
	if (to)
		to->state = VS__V_RUNNING;
#ifdef VCPU_ASAN
	{
		void **fake = dying ? NULL :
			      from ? &from->asan_fake : &m->host_asan_fake;
		const void *lo = to && !(m->entered && to->id == 0) ?
				 to->stack_lo : m->host_stack_lo;
		size_t len = to && !(m->entered && to->id == 0) ?
			     to->stack_len : m->host_stack_len;

		__sanitizer_start_switch_fiber(fake, lo, len);
		ctx_switch(save, load);
		__sanitizer_finish_switch_fiber(from ? from->asan_fake :
						m->host_asan_fake, NULL, NULL);
	}
#else
	(void)dying;
	ctx_switch(save, load);
#endif
}

/* ---- deadlocks ----------------------------------------------------------- */

/* Write the deadlock report: every vCPU with work, what it waits on. */
static void deadlock_report(struct vs_machine *m)
{
	int at = snprintf(m->report, sizeof(m->report),
			  "vcpu: deadlock: every vCPU with work is blocked "
			  "(virtual time %llu cycles)\n",
			  (unsigned long long)vs_machine_clock(m, -1));

	(void)vs__vcpu_report_contexts(m, at < 0 ? 0 : (size_t)at);
}

/* Nothing may run: end the run, or report the deadlock. */
static void no_runnable(struct vs_machine *m, struct vs__vcpu *from,
			int dying)
{
	if (m->nr_busy == 0 && !m->entered) {
		m->done = 1;
		switch_to(m, from, NULL, dying);
		return;
	}
	deadlock_report(m);
	m->deadlocked = 1;
	if (m->entered) {
		fputs(m->report, stderr);
		abort();
	}
	switch_to(m, from, NULL, dying);
}

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
		vs__die("vcpu scheduler chose past its alternatives", EINVAL);
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

unsigned int vs__vcpu_choose_mem(struct vs_machine *m, struct vs__vcpu *v,
				 enum vs_vcpu_choice_kind kind,
				 unsigned int nr)
{
	unsigned int cand[VS__VCPU_CONTEXTS + 1], i;
	struct vs_vcpu_choice c;

	if (nr < 2)
		return 0;
	if (!m->cfg.sched)
		return (unsigned int)(rng_next(m) % nr);
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

/* ---- scheduling -------------------------------------------------------- */

/*
 * Take @v, chosen to run, out of the heap.  A sleeper times out first
 * (its deadline came first, or the scheduler chose it) and runs when
 * its vCPU is free.  Return: @v, or NULL when it now waits for its vCPU.
 */
static struct vs__vcpu *take(struct vs_machine *m, struct vs__vcpu *v)
{
	heap_remove(m, v);
	if (v->state != VS__V_BLOCKED)
		return v;
	fq_del(m, v);
	v->wait_ret = -ETIMEDOUT;
	make_runnable(m, v, v->deadline, 0);
	if (v->state != VS__V_RUNNABLE)
		return NULL;
	heap_remove(m, v);
	return v;
}

/* The next context to run after @stopped stopped (NULL: the run
 * starts), taken out of the heap, or NULL when none can run. */
static struct vs__vcpu *take_next(struct vs_machine *m,
				  struct vs__vcpu *stopped)
{
	struct vs__vcpu *v;

	do {
		if (!m->heap_n)
			return NULL;
		if (!m->cfg.sched) {
			v = m->heap[0];
			continue;
		}
		if (stopped)
			stopped->nev++;
		else
			m->host_nev++;
		v = choose(m, NULL, stopped, 0, NULL);
	} while (!take(m, v));
	return v;
}

/* The running context @v stops running (it blocked, its work ended or
 * its slice is over). */
static void run_next(struct vs_machine *m, struct vs__vcpu *v, int dying)
{
	struct vs__vcpu *next = take_next(m, v);

	if (!next) {
		no_runnable(m, v, dying);
		return;
	}
	if (next == v) {	/* its own timeout came first */
		v->state = VS__V_RUNNING;
		return;
	}
	m->cpus[v->cpu].st.switches++;
	switch_to(m, v, next, dying);
}

/*
 * Before @v's event @op on @addr: give way to an earlier context, if
 * any (the default scheduler), or to whichever the scheduler chooses.
 */
static void maybe_yield(struct vs_machine *m, struct vs__vcpu *v,
			unsigned int op, const volatile void *addr)
{
	struct vs__cpu *c = &m->cpus[v->cpu];
	struct vs__vcpu *next = NULL;

	c->clock = v->clock;
	v->nev++;
	/* Its slice is over and another context waits for the vCPU. */
	if (c->ready_head && v->clock - c->slice_start >= VS__VCPU_SLICE) {
		vs__mem_stop(m, v);	/* a context switch drains */
		cpu_release(m, v);
		make_runnable(m, v, v->clock, 0);	/* queued behind it */
		m->cpus[v->cpu].st.switches++;
		run_next(m, v, 0);
		return;
	}
	if (!m->heap_n)
		return;
	if (m->cfg.sched) {
		next = choose(m, v, NULL, op, addr);
		if (next == v)
			return;
	} else if (!before(m->heap[0], v)) {
		return;
	}
	v->state = VS__V_RUNNABLE;
	heap_push(m, v);
	if (!next || !take(m, next))
		next = take_next(m, v);
	if (next == v) {
		v->state = VS__V_RUNNING;
		return;
	}
	m->cpus[v->cpu].st.switches++;
	switch_to(m, v, next, 0);
}

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

void vs__vcpu_event(const volatile void *addr, unsigned int code)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__vcpu *v = m->cur;
	enum vs_vcpu_op op = (enum vs_vcpu_op)(code & 0xf);
	struct vs_machine_stats *st;
	uint64_t cost, lead, seq;
	unsigned int by, back = 0;

	count_event(m, v);
	maybe_yield(m, v, op, addr);
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
		/* With a scheduler the clocks do not decide who runs: the
		 * event had its choice point. */
		if (!m->cfg.sched)
			maybe_yield(m, v, op, addr);
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
	hash_event(m, v->id, op, v->clock);
	vs__vcpu_log(m, v, addr, op, back);
	if (m->cfg.flags & VS_MACHINE_TRACE)
		vs__vcpu_trace(m, v, addr, op, back, cost + lead);
}

void vs_vcpu_work(enum vs_vcpu_work what, const void *addr, uint64_t bytes)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__vcpu *v = m ? m->cur : NULL;
	uint64_t cost = 0;

	if (!v || !m->coh || (unsigned int)what >= VS_VCPU_WORK_NR)
		return;
	maybe_yield(m, v, VS_VCPU_OP_WORK + (unsigned int)what, addr);
	switch (what) {
	case VS_VCPU_CLEAR:
		cost = vs_coherence_charge_clear(m->coh, cost_cpu(m, v), addr,
						 bytes, v->clock);
		break;
	case VS_VCPU_COPY:
		cost = vs_coherence_charge_copy(m->coh, cost_cpu(m, v), bytes,
						v->clock);
		break;
	case VS_VCPU_FAULT:
		cost = (uint64_t)m->profile.fault_entry + m->profile.fault_exit;
		break;
	case VS_VCPU_SYSCALL:
	default:	/* VS_VCPU_WORK_NR: refused above */
		cost = m->profile.syscall;
		break;
	}
	if ((m->cfg.flags & VS_MACHINE_NO_TRAPS) &&
	    (what == VS_VCPU_FAULT || what == VS_VCPU_SYSCALL))
		cost = 0;
	v->clock += cost;
	m->cpus[v->cpu].st.cycles += cost;
	m->cpus[v->cpu].st.work_cycles[what] += cost;
	hash_event(m, v->id, 0x400 | (unsigned int)what, v->clock);
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

struct vs_coherence *vs_machine_coherence(struct vs_machine *m)
{
	return m ? m->coh : NULL;
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

int vs__vcpu_block(const volatile void *word, int64_t timeout_ns)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__vcpu *v = m->cur;

	if (m->coh) {		/* the sleeper's system call */
		v->clock += m->profile.syscall;
		m->cpus[v->cpu].st.cycles += m->profile.syscall;
		m->cpus[v->cpu].st.futex_cycles += m->profile.syscall;
	}
	v->wait_word = word;
	v->wait_ret = 0;
	v->deadline = UINT64_MAX;
	v->state = VS__V_BLOCKED;
	m->cpus[v->cpu].st.sleeps++;
	vs__mem_stop(m, v);	/* the system call drains its stores */
	cpu_release(m, v);
	fq_add(m, v);
	if (timeout_ns >= 0) {
		v->deadline = v->clock + (uint64_t)((double)timeout_ns *
						    m->ghz);
		heap_push(m, v);
	}
	hash_event(m, v->id, 0x100, v->clock);
	if (m->cfg.flags & VS_MACHINE_TRACE)
		vs__vcpu_trace(m, v, word, VS__TRACE_SLEEP, 0, 0);
	run_next(m, v, 0);
	return v->wait_ret;
}

/* What the kernel says of a futex word: -EINVAL misaligned, -EFAULT
 * unmapped, 0 fine. */
static int word_check(const volatile void *word)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char vec;

	if ((uintptr_t)word & 3)
		return -EINVAL;
	if (mincore((void *)((uintptr_t)word & ~((uintptr_t)page - 1)),
		    (size_t)page, &vec) != 0)
		return -EFAULT;
	return 0;
}

int vs__vcpu_futex_wait(const volatile void *word, uint32_t val,
			int64_t timeout_ns)
{
	int err = word_check(word);

	if (err)
		return err;
	vs__vcpu_event(word, VS_VCPU_LOAD);
	if (*(const volatile uint32_t *)word != val)
		return -EAGAIN;
	return vs__vcpu_block(word, timeout_ns);
}

/* Wake up to @nr sleepers on @word, FIFO, at the waker's time at the
 * earliest.  No event: the caller accounts for it. */
static int wake(struct vs_machine *m, const volatile void *word, int nr,
		uint64_t now)
{
	struct vs__vcpu **p = &m->fq[fq_bucket(word)], *w;
	int woken = 0;

	while (*p && woken < nr) {
		w = *p;
		if (w->wait_word != word) {
			p = &w->wait_next;
			continue;
		}
		*p = w->wait_next;
		w->wait_next = NULL;
		vs__mem_sync(m, m->cur, w);	/* the wake orders */
		if (w->heap_idx >= 0)
			heap_remove(m, w);
		/* The sleeper is scheduled again after the wake latency. */
		make_runnable(m, w, now + (m->coh ?
					   m->profile.wake_latency : 0), 0);
		woken++;
	}
	return woken;
}

int vs__vcpu_futex_wake(const volatile void *word, int nr)
{
	struct vs_machine *m = vs__vcpu_machine;
	uint64_t cost;
	int woken;

	if (nr <= 0 || ((uintptr_t)word & 3))
		return -EINVAL;
	vs__vcpu_event(word, VS_VCPU_RMW);
	cost = m->coh ? m->profile.futex_wake : 0;
	woken = wake(m, word, nr, m->cur->clock + cost);
	if (!woken && m->coh)	/* nobody asleep: a system call, no more */
		cost = m->profile.syscall;
	m->cur->clock += cost;
	m->cpus[m->cur->cpu].st.cycles += cost;
	m->cpus[m->cur->cpu].st.futex_cycles += cost;
	hash_event(m, m->cur->id, 0x200 | (unsigned int)woken, m->cur->clock);
	return woken;
}

void vs__vcpu_yield(void)
{
	vs__vcpu_event(NULL, VS_VCPU_RELAX);
}

int vs_machine_fail(const char *fmt, ...)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__vcpu *v = m ? m->cur : NULL;
	size_t len = sizeof(m->report), at;
	va_list ap;

	if (!v || !fmt)
		return -EINVAL;
	at = (size_t)snprintf(m->report, len, "vcpu: failed: work %u on vCPU "
			      "%u at virtual time %llu cycles: ", v->id,
			      v->cpu, (unsigned long long)v->clock);
	if (at < len) {
		va_start(ap, fmt);
		at += (size_t)vsnprintf(m->report + at, len - at, fmt, ap);
		va_end(ap);
	}
	if (at < len - 1)
		strcat(m->report, "\n");
	(void)vs__vcpu_report_contexts(m, strlen(m->report));
	m->failed = 1;
	if (m->entered) {
		fputs(m->report, stderr);
		abort();
	}
	switch_to(m, v, NULL, 0);
	vs__die("vcpu: a failed vCPU was resumed", EINVAL);
}

/* ---- work on a vCPU ---------------------------------------------------- */

static void vcpu_finish(struct vs_machine *m, struct vs__vcpu *v)
{
	v->state = VS__V_IDLE;
	v->fn = NULL;
	cpu_release(m, v);
	m->cpus[v->cpu].works--;
	if (!v->daemon)
		m->nr_busy--;
	v->gen++;
	(void)wake(m, &v->gen, INT32_MAX, v->clock);
	if (!v->daemon && m->nr_busy <= 1)
		(void)wake(m, &m->busy_word, INT32_MAX, v->clock);
	hash_event(m, v->id, 0x300, v->clock);
	if (m->cfg.flags & VS_MACHINE_TRACE)
		vs__vcpu_trace(m, v, NULL, VS__TRACE_END, 0, 0);
	run_next(m, v, 1);
	vs__die("vcpu: a finished vCPU was resumed", EINVAL);
}

static void vcpu_main(void *arg)
{
	struct vs__vcpu *v = arg;
	struct vs_machine *m = vs__vcpu_machine;

#ifdef VCPU_ASAN
	__sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
	v->fn(v->arg);
	VS__LD(vs__lockdep_context_end((int)v->id, 0));
	vcpu_finish(m, v);
}

static int stack_map(struct vs__vcpu *v, size_t size);

static int start_work(struct vs_machine *m, struct vs__vcpu *v,
		      unsigned int cpu, void (*fn)(void *), void *arg,
		      uint64_t clock)
{
	int err;

	if (v->state != VS__V_IDLE)
		return -EBUSY;
	if (!v->map) {		/* a context's stack is made on first use */
		err = stack_map(v, m->cfg.stack_size ? m->cfg.stack_size :
				DEFAULT_STACK);
		if (err)
			return err;
	}
	vs__mem_start(m, v);
	v->fn = fn;
	v->arg = arg;
	v->cpu = cpu;
	ctx_make(v, vcpu_main, v);
	m->cpus[cpu].works++;
	if (!v->daemon)
		m->nr_busy++;
	/* Its time counts from here: no jump to account. */
	v->clock = v->clock > clock ? v->clock : clock;
	make_runnable(m, v, v->clock, 0);
	return 0;
}

/* A context with no work, or NULL. */
static struct vs__vcpu *free_context(struct vs_machine *m)
{
	unsigned int i;

	for (i = 0; i < VS__VCPU_WORKS; i++)
		if (m->v[i].state == VS__V_IDLE)
			return &m->v[i];
	return NULL;
}

int vs_machine_spawn(struct vs_machine *m, unsigned int cpu,
		     void (*fn)(void *), void *arg)
{
	struct vs__vcpu *v;
	int err;

	if (!m || !fn || cpu >= m->nr)
		return -EINVAL;
	if (m->cur)
		vs__vcpu_event(&m->cpus[cpu], VS_VCPU_RMW);
	v = free_context(m);
	if (!v || !vs__mem_may_spawn(m, v))
		return -EAGAIN;
	err = start_work(m, v, cpu, fn, arg, m->cur ? m->cur->clock : 0);
	if (err)
		return err;
	vs__mem_sync(m, m->cur, v);	/* the spawner's past is its */
	return (int)v->id;
}

int vs__machine_spawn_daemon(struct vs_machine *m, void (*fn)(void *),
			     void *arg)
{
	unsigned int i;

	for (i = VS__VCPU_WORKS; i < m->nr_all; i++) {
		if (m->v[i].state != VS__V_IDLE)
			continue;
		if (start_work(m, &m->v[i], 0, fn, arg,
			       m->cur ? m->cur->clock : 0))
			return -EBUSY;
		vs__mem_sync(m, m->cur, &m->v[i]);
		return (int)i;
	}
	return -EBUSY;
}

int vs_machine_join(struct vs_machine *m, unsigned int work)
{
	struct vs__vcpu *t;

	if (!m || work >= VS__VCPU_WORKS || !m->cur || m->cur->id == work)
		return -EINVAL;
	t = &m->v[work];
	for (;;) {
		vs__vcpu_event(&t->gen, VS_VCPU_LOAD);
		/* No event between the check and the sleep: no lost wake. */
		if (t->state == VS__V_IDLE) {
			vs__mem_sync(m, t, m->cur);	/* its work, done */
			return 0;
		}
		(void)vs__vcpu_block(&t->gen, -1);
	}
}

int vs_machine_pick_vcpu(struct vs_machine *m)
{
	unsigned int i, best = 0;

	if (!m)
		return -EINVAL;
	for (i = 1; i < m->nr; i++)
		if (m->cpus[i].works < m->cpus[best].works)
			best = i;
	return (int)best;
}

/* ---- the machine ------------------------------------------------------- */

static int stack_map(struct vs__vcpu *v, size_t size)
{
	long page = sysconf(_SC_PAGESIZE);

	size = (size + (size_t)page - 1) & ~((size_t)page - 1);
	v->map_len = size + (size_t)page;
	v->map = mmap(NULL, v->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (v->map == MAP_FAILED) {
		v->map = NULL;
		return -ENOMEM;
	}
	/* The guard page: a stack overflow faults instead of corrupting. */
	if (mprotect(v->map, (size_t)page, PROT_NONE)) {
		munmap(v->map, v->map_len);
		v->map = NULL;
		return -ENOMEM;
	}
	v->stack_lo = v->map + page;
	v->stack_len = size;
	return 0;
}

/*
 * The machine's own structures come from mmap, zeroed, not from the
 * heap: they may grow without moving what the work allocates, whose
 * lines' offsets in their 4 KiB pages the cost model sees
 * (vmsim/vcpu_cost.h).  Return: the memory, or NULL.
 */
static void *engine_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void engine_free(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

/* Make context @v idle: drop it wherever it stood (its stack is kept),
 * and the locks lockstat says it holds, an earlier machine's too. */
static void context_reset(struct vs__vcpu *v)
{
#ifdef VCPU_ASAN
	if (v->map)	/* frames it never returned from stay poisoned */
		__asan_unpoison_memory_region(v->stack_lo, v->stack_len);
#endif
	v->ready_next = NULL;
	v->state = VS__V_IDLE;
	v->clock = 0;
	v->tiebreak = 0;
	v->heap_idx = -1;
	v->fn = NULL;
	v->arg = NULL;
	v->gen = 0;
	v->nev = 0;
	v->wait_word = NULL;
	v->wait_next = NULL;
	v->deadline = UINT64_MAX;
	v->wait_ret = 0;
	v->asan_fake = NULL;
	vs__lockstat_forget((int)v->id);
	VS__LD(vs__lockdep_context_end((int)v->id, 1));
}

static void machine_free(struct vs_machine *m)
{
	unsigned int i;

	for (i = 0; i < m->nr_all; i++) {
		if (!m->v[i].map)
			continue;
#ifdef VCPU_ASAN
		/* Frames of a context that never returned (a daemon, one
		 * a deadlock left) stay poisoned, and the shadow outlives
		 * the munmap: a later mapping there would inherit it. */
		__asan_unpoison_memory_region(m->v[i].stack_lo,
					      m->v[i].stack_len);
#endif
		munmap(m->v[i].map, m->v[i].map_len);
#if !defined(__x86_64__)
		free(m->v[i].sp);
#endif
	}
#if !defined(__x86_64__)
	free(m->host_sp);
#endif
	if (m->sched && m->cfg.sched && m->cfg.sched->fini)
		m->cfg.sched->fini(m->sched);
	if (m->coh)
		vs_coherence_destroy(m->coh);
	free(m->dec);
	free(m->trace);
	vs__vcpu_names_reset(m, 1);
	vs__vcpu_poison_reset(m, 1);
	vs__mem_destroy(m);
	engine_free(m->heap, m->nr_all * sizeof(*m->heap));
	engine_free(m->cpus, m->nr * sizeof(*m->cpus));
	engine_free(m->v, m->nr_all * sizeof(*m->v));
	engine_free(m, sizeof(*m));
}

int vs_machine_create(struct vs_machine **mp, const struct vs_machine_config *cfg)
{
	struct vs_machine *m;
	unsigned int i;
	int err = 0;

	if (!mp || !cfg || cfg->nr_vcpus < 1 || cfg->nr_vcpus > VS_VCPU_MAX)
		return -EINVAL;
	if (cfg->sched && !cfg->sched->choose)
		return -EINVAL;
	if (cfg->flags & ~(VS_MACHINE_NO_TRAPS | VS_MACHINE_CHECK_FREED |
			   VS_MACHINE_TRACE))
		return -EINVAL;
	if (cfg->profile && cfg->nr_vcpus > cfg->profile->nr_cpus)
		return -EINVAL;
	if (cfg->own_slots > VS_VCPU_MAX)
		return -EINVAL;
	m = engine_alloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->cfg = *cfg;
	m->nr = cfg->nr_vcpus;
	m->nr_all = VS__VCPU_CONTEXTS;
	m->rng = cfg->seed;
	m->hash = FNV_BASIS;
	m->ghz = 1.0;
	m->v = engine_alloc(m->nr_all * sizeof(*m->v));
	m->cpus = engine_alloc(m->nr * sizeof(*m->cpus));
	m->heap = engine_alloc(m->nr_all * sizeof(*m->heap));
	if (!m->v || !m->cpus || !m->heap) {
		machine_free(m);
		return -ENOMEM;
	}
	for (i = 0; i < m->nr_all; i++) {
		m->v[i].id = i;
		m->v[i].daemon = i >= VS__VCPU_WORKS;
		context_reset(&m->v[i]);
	}
	if (!err && cfg->profile) {
		m->profile = *cfg->profile;
		m->cfg.profile = &m->profile;
		m->ghz = m->profile.ghz;
		err = vs_coherence_create(&m->coh, &m->profile, m->nr);
	}
	if (!err)
		err = vs__mem_create(m);
	if (!err && cfg->sched && cfg->sched->init)
		err = cfg->sched->init(&m->sched, &m->cfg);
	if (err) {
		machine_free(m);
		return err;
	}
	*mp = m;
	return 0;
}

int vs_machine_destroy(struct vs_machine *m)
{
	if (!m)
		return -EINVAL;
	if (m->running)
		return -EBUSY;
	if (m->rcu_destroy)
		m->rcu_destroy(m);
	machine_free(m);
	return 0;
}

int vs_machine_reset(struct vs_machine *m, uint64_t seed)
{
	struct vs_coherence *coh = NULL;
	unsigned int i;
	int err;

	if (!m)
		return -EINVAL;
	if (m->running || vs__vcpu_machine)
		return -EBUSY;
	if (m->coh) {		/* first what can fail */
		err = vs_coherence_create(&coh, &m->profile, m->nr);
		if (err)
			return err;
		vs_coherence_destroy(m->coh);
		m->coh = coh;
	}
	for (i = 0; i < m->nr_all; i++)
		context_reset(&m->v[i]);
	memset(m->cpus, 0, m->nr * sizeof(*m->cpus));
	memset(m->fq, 0, sizeof(m->fq));
	m->heap_n = 0;
	m->nr_busy = 0;
	m->busy_word = 0;
	m->cfg.seed = seed;
	m->rng = seed;
	m->hash = FNV_BASIS;
	m->done = 0;
	m->deadlocked = 0;
	m->failed = 0;
	m->report[0] = 0;
	vs__vcpu_names_reset(m, 0);
	vs__vcpu_poison_reset(m, 0);
	if (m->rcu_destroy)
		m->rcu_destroy(m);
	return 0;
}

/* The host thread's stack, for ASan's fiber switches. */
static void host_stack(struct vs_machine *m)
{
#ifdef VCPU_ASAN
	pthread_attr_t a;
	void *lo;
	size_t len;

	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		if (pthread_attr_getstack(&a, &lo, &len) == 0) {
			m->host_stack_lo = lo;
			m->host_stack_len = len;
		}
		pthread_attr_destroy(&a);
	}
#else
	(void)m;
#endif
}

static int begin(struct vs_machine *m)
{
	unsigned int i;

	if (!m)
		return -EINVAL;
	if (m->running || vs__vcpu_machine || m->deadlocked || m->failed)
		return -EBUSY;
	for (i = 0; i < m->nr_all; i++) {
		m->v[i].nev = 0;
		m->v[i].nlog = 0;
	}
	m->seq = 0;
	m->nevents = 0;
	m->streak = 0;
	m->nchoices = 0;
	m->host_nev = 0;
	m->dec_n = 0;
	m->dec_lost = 0;
	m->ntrace = 0;
	m->trace_lost = 0;
	m->running = 1;
	m->done = 0;
	m->report[0] = 0;
	vs__mem_reset(m);	/* each run starts from memory as it is */
	vs__vcpu_machine = m;
	vs__vcpu_own_slots = m->cfg.own_slots ? (int)m->cfg.own_slots :
			     VS_VCPU_MAX;
	host_stack(m);
	return 0;
}

/* The run is over: what it returns, @err unless the scheduler says
 * otherwise. */
static int sched_end(struct vs_machine *m, int err)
{
	int e = 0;

	if (m->cfg.sched && m->cfg.sched->end)
		e = m->cfg.sched->end(m->sched, m);
	return e ? e : err;
}

static void end(struct vs_machine *m)
{
	vs__mem_end(m);
	m->running = 0;
	m->cur = NULL;
	vs__vcpu_machine = NULL;
	vs__vcpu_cur = -1;
	vs__vcpu_own_slots = VS_VCPU_MAX;
}

/* See sync/internal.h: after a run that failed or deadlocked. */
static void statics_abandon(void)
{
	vs__rcu_free_abandon();
	vs__lock_registry_abandon();
	vs__lockstat_abandon();
}

int vs_machine_run(struct vs_machine *m, void (*fn)(void *), void *arg)
{
	struct vs__vcpu *first;
	int err;

	if (!fn)
		return -EINVAL;
	err = begin(m);
	if (err)
		return err;
	err = start_work(m, &m->v[0], 0, fn, arg, m->cpus[0].clock);
	if (err) {
		end(m);
		return err;
	}
	first = take_next(m, NULL);
	switch_to(m, NULL, first, 0);
	/* Back on the host: every vCPU is idle, or a deadlock. */
	err = sched_end(m, m->failed ? -ECANCELED :
			m->deadlocked ? -EDEADLK : 0);
	end(m);
	/* A failed run's contexts never run again (begin() refuses until
	 * vs_machine_reset()): what they held of sync/'s statics is free. */
	if (vs_machine_abandoned(m))
		statics_abandon();
	return err;
}

int vs_machine_enter(struct vs_machine *m)
{
	struct vs__vcpu *v;
	int err = begin(m);

	if (err)
		return err;
	v = &m->v[0];
	if (v->state != VS__V_IDLE) {
		end(m);
		return -EBUSY;
	}
	m->entered = 1;
	vs__mem_start(m, v);
	v->cpu = 0;
	v->clock = m->cpus[0].clock;
	m->cpus[0].occupant = v;
	m->cpus[0].slice_start = v->clock;
	m->cpus[0].works++;
	v->state = VS__V_RUNNING;
	m->nr_busy++;
	m->cur = v;
	vs__vcpu_cur = 0;
	return 0;
}

int vs_machine_leave(struct vs_machine *m)
{
	int err;

	if (!m || !m->entered || m->cur != &m->v[0])
		return -EINVAL;
	while (m->nr_busy > 1)
		(void)vs__vcpu_block(&m->busy_word, -1);
	cpu_release(m, &m->v[0]);
	m->cpus[0].works--;
	m->v[0].state = VS__V_IDLE;
	m->nr_busy--;
	m->entered = 0;
	err = sched_end(m, 0);
	end(m);
	return err;
}

/* ---- questions --------------------------------------------------------- */

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
