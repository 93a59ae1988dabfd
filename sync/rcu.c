/* SPDX-License-Identifier: MIT */
#include <vmsim/rcu.h>

#include <stddef.h>

#include "internal.h"

#ifdef __SANITIZE_THREAD__
/*
 * liburcu is not instrumented: TSan misses the ordering of its internal
 * atomics and reports races on its own objects, e.g. the completion that
 * urcu_memb_barrier() allocates and its call_rcu thread frees.  vmsim's
 * own use of RCU is annotated (vs__tsan_release/acquire); silence what
 * lies inside liburcu only, for every program linked with a TSan build
 * of vmsim.  TSAN_OPTIONS=suppressions=FILE adds to this list.
 */
VS_EXTERN const char *__tsan_default_suppressions(void);

const char *__tsan_default_suppressions(void)
{
	return "race:liburcu-memb.so\n"
	       "race:liburcu-qsbr.so\n"
	       "race:liburcu-common.so\n"
	       "called_from_lib:liburcu-memb.so\n"
	       "called_from_lib:liburcu-qsbr.so\n"
	       "called_from_lib:liburcu-common.so\n";
}

int vs__rcu_tsan_gp;
static int tsan_barrier; /* callbacks before vs_rcu_barrier() returns */
#endif

#if VS_RCU_QSBR
#define urcu_call(name) urcu_qsbr_##name
#define urcu_reader URCU_TLS(urcu_qsbr_reader)
#else
#define urcu_call(name) urcu_memb_##name
#define urcu_reader URCU_TLS(urcu_memb_reader)
#endif

/* Registered by vmsim, not by liburcu itself (its call_rcu threads). */
static __thread int registered_here;

void vs_rcu_register_thread(void)
{
	if (urcu_reader.registered)
		return;
	urcu_call(register_thread)();
	registered_here = 1;
}

void vs_rcu_unregister_thread(void)
{
	if (!registered_here)
		return;
	registered_here = 0;
	urcu_call(unregister_thread)();
}

void vs_synchronize_rcu(void)
{
	VS__LD(vs__lockdep_might_sleep("vs_synchronize_rcu()"));
	if (!VS_BROKEN(rcu_no_grace_period))
		urcu_call(synchronize_rcu)();
	/* Pairs with the release in vs_rcu_read_unlock(). */
	vs__tsan_acquire(&vs__rcu_tsan_gp);
}

static void rcu_trampoline(struct rcu_head *urcu)
{
	struct vs_rcu_head *head = (struct vs_rcu_head *)
		((char *)urcu - offsetof(struct vs_rcu_head, urcu));

	/* Pairs with the releases in vs_call_rcu() and vs_rcu_read_unlock(). */
	vs__tsan_acquire(head);
	vs__tsan_acquire(&vs__rcu_tsan_gp);
	head->func(head);
	/* Pairs with the acquire in vs_rcu_barrier(). */
	vs__tsan_release(&tsan_barrier);
}

void vs_call_rcu(struct vs_rcu_head *head,
		 void (*func)(struct vs_rcu_head *head))
{
	(void)vs__thread_slot();
	head->func = func;
	vs__rcu_count_callback();
	vs__tsan_release(head);
	urcu_call(call_rcu)(&head->urcu, rcu_trampoline);
}

/* The flavour's barrier; vs_rcu_barrier() (sync/rcu_free.c) wraps it. */
void vs__rcu_barrier_callbacks(void)
{
	urcu_call(barrier)();
	vs__tsan_acquire(&tsan_barrier);
}

#if VS_RCU_QSBR
__thread int vs__rcu_depth VS_TLS_IE;

void vs_rcu_quiescent_state(void)
{
	if (vs__tls_slot >= 0)
		urcu_qsbr_quiescent_state();
}

void vs_rcu_thread_offline(void)
{
	if (vs__tls_slot >= 0)
		urcu_qsbr_thread_offline();
}

void vs_rcu_thread_online(void)
{
	if (vs__tls_slot >= 0)
		urcu_qsbr_thread_online();
}

/*
 * Offline only between read-side sections: a thread that sleeps inside
 * one (a contended page-table lock) must keep the grace period waiting,
 * or what it is reading may be freed under it.
 */
int vs__rcu_sleep_begin(void)
{
	if (vs__tls_slot < 0 || vs__rcu_depth > 0 ||
	    !urcu_qsbr_read_ongoing())
		return 0;
	urcu_qsbr_thread_offline();
	return 1;
}

void vs__rcu_sleep_end(void)
{
	urcu_qsbr_thread_online();
}
#else
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
#endif
