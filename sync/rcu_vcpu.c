/* SPDX-License-Identifier: MIT */
/*
 * sync/rcu_vcpu.c - RCU on virtual CPUs (the vCPU build's vmsim/rcu.h).
 *
 * liburcu cannot serve vCPUs: its reader state is per host thread, and
 * every vCPU runs on the same one.  Here each vCPU has its nesting
 * depth and a count of the outermost sections it has left.  A grace
 * period that starts takes a snapshot of the vCPUs inside a section and
 * waits, blocked in virtual time, until each has left the section it
 * was in (its count moved); readers that enter later are not waited
 * for.  vs_call_rcu() callbacks run on a daemon vCPU of the machine,
 * after a grace period that started after they were queued, in queue
 * order: deterministic like everything else.
 *
 * What RCU orders, for the weak memory models (vcpu/memory_model.c): a
 * reader's section happens before the end of a grace period that
 * waited for it; vs_call_rcu() before its callback; a callback before
 * the rcu_barrier() that waited for it.  A grace period's start and a
 * reader's entry are full fences, as in liburcu's urcu-mb: the later of
 * the two sees what came before the earlier.
 *
 * Off every machine (the host thread) there are no readers: a grace
 * period is over at once and a callback runs at once.
 */
#include <vmsim/rcu.h>

#include <stdlib.h>
#include <string.h>

#include <vmsim/wait.h>

#include "../vcpu/client.h"
#include "internal.h"

/* The orderings RCU makes, as cells of the engine (vcpu/client.h). */
enum {
	CELL_READERS,	/* readers' sections, for grace periods */
	CELL_CALLS,	/* vs_call_rcu(), for the callbacks */
	CELL_RAN,	/* callbacks run, for rcu_barrier() */
};

struct rcu_vcpu {
	/* A line per context, as liburcu's per-thread reader state:
	 * a reader's own line is a hit, not a transfer. */
	struct {
		VS_CACHELINE_ALIGNED int depth;
		vs_atomic32_t left;
	} rd[VS__VCPU_CONTEXTS];
	int gp_waiting;			/* synchronize calls blocked */
	vs_atomic32_t gp_word;		/* they sleep here */
	struct rcu_head *head, **tail;	/* queued callbacks */
	vs_atomic32_t cb_word;		/* the daemon sleeps here */
	uint64_t queued, done;		/* callbacks queued and run */
	vs_atomic32_t done_word;	/* barriers sleep here */
	int daemon;			/* started */
};

/* A machine's RCU state, made on its first use, goes with it. */
static struct vs__vcpu_client rcu_client = { .machine_end = free };

__attribute__((constructor)) static void rcu_client_register(void)
{
	vs__vcpu_client_register(&rcu_client);
}

/* The running machine's RCU state, made on first use; NULL on the host. */
static struct rcu_vcpu *state(void)
{
	void **slot = vs__vcpu_state(&rcu_client);
	struct rcu_vcpu *r;

	if (!slot)
		return NULL;
	if (*slot)
		return *slot;
	r = aligned_alloc(VS_CACHELINE, sizeof(*r));
	if (!r)
		vs__die("vcpu rcu", ENOMEM);
	memset(r, 0, sizeof(*r));
	r->tail = &r->head;
	vs_vcpu_name(r, sizeof(*r), "vCPU RCU state");
	vs_vcpu_name(r->rd, sizeof(r->rd), "vCPU RCU readers (a line each)");
	*slot = r;
	return r;
}

void vs__vcpu_rcu_read_lock(void)
{
	struct rcu_vcpu *r = state();

	if (!r)
		return;
	/* The nesting count is the reader's own line: a hit, as a
	 * compiler barrier is under urcu-memb. */
	vs__vcpu_event(&r->rd[vs__vcpu_cur].depth, VS_VCPU_STORE);
	if (r->rd[vs__vcpu_cur].depth++ == 0)
		vs__vcpu_fence();
}

void vs__vcpu_rcu_read_unlock(void)
{
	struct rcu_vcpu *r = state();
	int me = vs__vcpu_cur;

	if (!r)
		return;
	vs__vcpu_event(&r->rd[me].depth, VS_VCPU_STORE);
	if (--r->rd[me].depth > 0)
		return;
	vs__vcpu_release(CELL_READERS);
	/* Release: pairs with the acquire of @left in vs_synchronize_rcu():
	 * a grace period that sees the count moved sees the section. */
	vs_store_release(&r->rd[me].left, vs_read_once(&r->rd[me].left) + 1);
	if (r->gp_waiting) {
		/* Release: pairs with the acquire of @gp_word there: who
		 * sees it moved sees @left moved. */
		vs_store_release(&r->gp_word, vs_read_once(&r->gp_word) + 1);
		vs_futex_wake(&r->gp_word, INT32_MAX);
	}
}

int vs__vcpu_rcu_read_ongoing(void)
{
	struct rcu_vcpu *r = state();

	return r ? r->rd[vs__vcpu_cur].depth > 0 : 0;
}

void vs_synchronize_rcu(void)
{
	struct rcu_vcpu *r = state();
	uint32_t snap[VS__VCPU_CONTEXTS], left;
	unsigned int i, n;
	uint32_t gen;
	int waiting;

	VS__LD(vs__lockdep_might_sleep("vs_synchronize_rcu()"));
	if (!r || VS_BROKEN(rcu_no_grace_period))
		return;
	n = VS__VCPU_CONTEXTS;
	vs__vcpu_fence();
	for (i = 0; i < n; i++) {
		snap[i] = 0;
		if (r->rd[i].depth == 0)
			continue;
		left = vs_read_once(&r->rd[i].left);
		/* Look again: the load was an event, and the reader may
		 * have left meanwhile, before we counted as waiting, so
		 * without waking us.  No event lies between this look and
		 * the load, nor between the last look and gp_waiting++. */
		if (r->rd[i].depth > 0)
			snap[i] = left + 1;
	}
	/* Counted before the check: a reader that leaves after it bumps
	 * gp_word, so the wait below cannot miss it. */
	r->gp_waiting++;
	for (;;) {
		gen = vs_load_acquire(&r->gp_word);	/* see above */
		waiting = 0;
		for (i = 0; i < n; i++)
			if (snap[i] &&
			    vs_load_acquire(&r->rd[i].left) < snap[i])
				waiting = 1;
		if (!waiting)
			break;
		(void)vs_futex_wait(&r->gp_word, gen, -1);
	}
	r->gp_waiting--;
	vs__vcpu_acquire(CELL_READERS);
}

/* The daemon: take the queued callbacks, wait a grace period, run them. */
static void rcu_daemon(void *arg)
{
	struct rcu_vcpu *r = arg;
	struct rcu_head *list, *next;
	uint32_t gen;

	for (;;) {
		gen = vs_read_once(&r->cb_word);
		if (!r->head) {
			(void)vs_futex_wait(&r->cb_word, gen, -1);
			continue;
		}
		/* Take the callbacks, then wait: each waits for a grace
		 * period that started after it was queued.  Those queued
		 * during this one wait for the next. */
		if (VS_BROKEN(rcu_cb_joins_running_gp))
			vs_synchronize_rcu();
		list = r->head;
		r->head = NULL;
		r->tail = &r->head;
		vs__vcpu_acquire(CELL_CALLS);
		if (!VS_BROKEN(rcu_cb_joins_running_gp))
			vs_synchronize_rcu();
		for (; list; list = next) {
			next = list->next;
			list->func(list);
			r->done++;
		}
		vs__vcpu_release(CELL_RAN);
		vs_write_once(&r->done_word, vs_read_once(&r->done_word) + 1);
		vs_futex_wake(&r->done_word, INT32_MAX);
	}
}

static void trampoline(struct rcu_head *urcu)
{
	struct vs_rcu_head *head = (struct vs_rcu_head *)
		((char *)urcu - offsetof(struct vs_rcu_head, urcu));

	head->func(head);
}

void vs_call_rcu(struct vs_rcu_head *head,
		 void (*func)(struct vs_rcu_head *head))
{
	struct rcu_vcpu *r = state();

	head->func = func;
	vs__rcu_count_callback();
	if (!r) {
		func(head);	/* no machine runs: no reader anywhere */
		return;
	}
	head->urcu.func = trampoline;
	head->urcu.next = NULL;
	*r->tail = &head->urcu;
	r->tail = &head->urcu.next;
	r->queued++;
	vs__vcpu_release(CELL_CALLS);
	if (!r->daemon) {
		if (vs__vcpu_spawn_daemon(rcu_daemon, r) < 0)
			vs__die("vcpu rcu: no daemon vCPU", EBUSY);
		r->daemon = 1;
	}
	vs_write_once(&r->cb_word, vs_read_once(&r->cb_word) + 1);
	vs_futex_wake(&r->cb_word, 1);
}

void vs__rcu_barrier_callbacks(void)
{
	struct rcu_vcpu *r = state();
	uint64_t target;
	uint32_t gen;

	if (!r)
		return;
	target = r->queued;
	while (r->done < target) {
		gen = vs_read_once(&r->done_word);
		if (r->done >= target)
			break;
		(void)vs_futex_wait(&r->done_word, gen, -1);
	}
	vs__vcpu_acquire(CELL_RAN);
}

/* Registration and quiescent states mean nothing on vCPUs. */
void vs_rcu_register_thread(void)
{
}

void vs_rcu_unregister_thread(void)
{
}

void vs_rcu_quiescent_state(void)
{
}

void vs_rcu_thread_offline(void)
{
}

void vs_rcu_thread_online(void)
{
}

int vs__rcu_sleep_begin(void)
{
	return 0;
}

void vs__rcu_sleep_end(void)
{
}
