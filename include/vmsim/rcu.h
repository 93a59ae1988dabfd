/* SPDX-License-Identifier: MIT */
/*
 * vmsim/rcu.h - kernel-named RCU over liburcu.
 *
 * The flavour is chosen when vmsim is built: urcu-memb (default; readers
 * pay a compiler barrier, synchronize_rcu uses membarrier(2)) or
 * urcu-qsbr (-DVS_RCU=qsbr; readers pay nothing, and every attached
 * thread must pass through vs_rcu_quiescent_state() now and then or be
 * offline; vs_futex_wait() puts a sleeping thread offline by itself).
 *
 * vs_rcu_read_lock() and vs_rcu_read_unlock() are inline, built on
 * liburcu's inline (LGPL static) read side.
 */
#ifndef VMSIM_RCU_H
#define VMSIM_RCU_H

#include "common.h"
#include <vmsim/config.h>
#include "lockdep_annotate.h"
#include "thread.h"

/*
 * The read side is liburcu's inline one, except under ThreadSanitizer:
 * the inline code would be instrumented and report liburcu's own
 * volatile-based protocol as races, so TSan builds call the library.
 * In the vCPU build it is the engine's (sync/rcu_vcpu.c): per-vCPU
 * nesting, grace periods in virtual time, no liburcu.
 */
#if VS_VCPU
void vs__vcpu_rcu_read_lock(void);
void vs__vcpu_rcu_read_unlock(void);
int vs__vcpu_rcu_read_ongoing(void);
#define vs__urcu_read_lock vs__vcpu_rcu_read_lock
#define vs__urcu_read_unlock vs__vcpu_rcu_read_unlock
#define vs__urcu_read_ongoing vs__vcpu_rcu_read_ongoing
/* The callback head of the engine's RCU (liburcu's otherwise). */
struct rcu_head {
	struct rcu_head *next;
	void (*func)(struct rcu_head *head);
};
#elif VS_RCU_QSBR
#include <urcu/urcu-qsbr.h>
#include <urcu/static/urcu-qsbr.h>
#ifdef __SANITIZE_THREAD__
#define vs__urcu_read_lock urcu_qsbr_read_lock
#define vs__urcu_read_unlock urcu_qsbr_read_unlock
#define vs__urcu_read_ongoing urcu_qsbr_read_ongoing
#else
#define vs__urcu_read_lock _urcu_qsbr_read_lock
#define vs__urcu_read_unlock _urcu_qsbr_read_unlock
#define vs__urcu_read_ongoing _urcu_qsbr_read_ongoing
#endif
#else
#include <urcu/urcu-memb.h>
#include <urcu/static/urcu-memb.h>
#ifdef __SANITIZE_THREAD__
#define vs__urcu_read_lock urcu_memb_read_lock
#define vs__urcu_read_unlock urcu_memb_read_unlock
#define vs__urcu_read_ongoing urcu_memb_read_ongoing
#else
#define vs__urcu_read_lock _urcu_memb_read_lock
#define vs__urcu_read_unlock _urcu_memb_read_unlock
#define vs__urcu_read_ongoing _urcu_memb_read_ongoing
#endif
#endif
#if !VS_VCPU
#include <urcu/call-rcu.h>
#endif

#ifdef __SANITIZE_THREAD__
#include <sanitizer/tsan_interface.h>
/*
 * ThreadSanitizer cannot see liburcu's grace periods (liburcu is not
 * instrumented).  Every read-side unlock releases this token and every
 * grace period acquires it, which is exactly the ordering RCU promises.
 */
extern VS_EXTERN int vs__rcu_tsan_gp;
#define vs__tsan_release(p) __tsan_release(p)
#define vs__tsan_acquire(p) __tsan_acquire(p)
#else
#define vs__tsan_release(p) ((void)0)
#define vs__tsan_acquire(p) ((void)0)
#endif

/**
 * struct vs_rcu_head - embed in an object to free it with vs_call_rcu()
 * @urcu: liburcu's callback head
 * @func: the callback passed to vs_call_rcu()
 */
struct vs_rcu_head {
	struct rcu_head urcu; /* private */
	void (*func)(struct vs_rcu_head *head); /* private */
};

#if VS_RCU_QSBR && !VS_VCPU
/* Private: read-side nesting, so that a futex sleep inside a section
 * stays online (qsbr's own state only says "online"). */
extern VS_EXTERN __thread int vs__rcu_depth VS_TLS_IE;
#define vs__rcu_depth_add(d) (vs__rcu_depth += (d))
#else
#define vs__rcu_depth_add(d) ((void)0)
#endif

/**
 * vs_rcu_read_lock - enter an RCU read-side critical section
 *
 * Nests.  Attaches the calling thread on first use.
 * Context: any attached or attachable thread.  Inside, no sleeping lock
 * and no grace-period wait; a spinlock may be taken (its futex wait is
 * how user space spins), as may a trylock (lockdep checks this).
 */
static inline void vs_rcu_read_lock(void)
{
	(void)vs__thread_slot();
	vs__urcu_read_lock();
	vs__rcu_depth_add(1);
	VS__LD(vs__lockdep_rcu(1));
}

/**
 * vs_rcu_read_unlock - leave an RCU read-side critical section
 *
 * Context: inside a section opened by vs_rcu_read_lock() on this thread.
 */
static inline void vs_rcu_read_unlock(void)
{
	VS__LD(vs__lockdep_rcu(-1));
	vs__rcu_depth_add(-1);
	vs__tsan_release(&vs__rcu_tsan_gp);
	vs__urcu_read_unlock();
}

/**
 * vs_rcu_read_ongoing - is the calling thread inside a read-side section?
 *
 * Meaningful under urcu-memb; under urcu-qsbr it says whether the
 * thread is online.
 *
 * Context: any attached thread.
 * Return: nonzero inside a read-side critical section.
 */
static inline int vs_rcu_read_ongoing(void)
{
	return vs__urcu_read_ongoing();
}

/**
 * vs_synchronize_rcu - wait for every pre-existing reader to finish
 *
 * Context: may sleep; not inside an RCU read-side critical section, not
 * from a vs_call_rcu() callback.
 */
VS_EXTERN void vs_synchronize_rcu(void);

/**
 * vs_call_rcu - run @func(@head) after a grace period
 * @head: embedded in the object; must stay valid until @func runs
 * @func: runs on liburcu's call_rcu thread, may free the object
 *
 * Context: any attached thread, also inside a read-side section.
 */
VS_EXTERN void vs_call_rcu(struct vs_rcu_head *head,
			   void (*func)(struct vs_rcu_head *head));

/**
 * vs_free_rcu - run @fn(@arg, @obj) after a grace period, batched
 * @fn: frees @obj; runs on liburcu's call_rcu thread
 * @arg: passed to @fn as is (a cache, say)
 * @obj: the object; it needs no embedded head
 *
 * The cheap way to free many objects after a grace period: the calling
 * thread's slot collects entries and hands each full batch of
 * VS_RCU_BATCH to RCU with one callback, so that liburcu's worker is
 * woken once per batch, not per object (after the kernel's kfree_rcu()
 * batching); a full batch is handed over by vs_rcu_free_handover(), or
 * at once when a few wait.  vs_rcu_barrier() hands over the partial
 * batches and waits for them.  When no batch can be allocated it waits for a grace
 * period in place and calls @fn at once, as the kernel's
 * kvfree_rcu_mightsleep() does.
 *
 * Context: any attached thread, also a callback; not inside a
 * read-side section (see above: it may wait for a grace period).
 */
VS_EXTERN void vs_free_rcu(void (*fn)(void *arg, void *obj), void *arg,
			   void *obj);

/**
 * vs_rcu_free_handover - hand the calling slot's full vs_free_rcu()
 * batches to RCU now
 *
 * A full batch waits in its slot until this call (or until a few more
 * fill), so that the call_rcu, which may wake liburcu's worker with a
 * futex call, happens outside a write hold of mmap_lock:
 * vs_mmap_write_unlock() calls it after the unlock.  Cheap when there
 * is nothing to hand over.
 *
 * Context: any attached thread, also inside a read-side section.
 */
VS_EXTERN void vs_rcu_free_handover(void);

/**
 * vs_rcu_set_free_at_once - a test mode: every vs_free_rcu() is handed
 * to RCU at once, a callback of its own
 * @on: nonzero turns the mode on, 0 back to batching
 *
 * Batched, a free waits in its slot until after the write section that
 * made it (vs_rcu_free_handover()), so the grace period never starts
 * before the section unpublished the object and a free queued too early
 * goes unseen.  At once, the grace period may start at the
 * vs_free_rcu() call, and a reader that finds the object still
 * published after that is not waited for: a use after free, which
 * exploration finds (test/sync/test_explore.c, free-at-once).  Partial
 * batches already in a slot are left to vs_rcu_barrier().
 *
 * Context: the host thread, between runs (an explore scenario's setup
 * and fini); no other thread frees meanwhile.
 * Return: the previous setting, 0 or 1.
 */
VS_EXTERN int vs_rcu_set_free_at_once(int on);

/** VS_RCU_BATCH - entries that vs_free_rcu() hands to RCU at once */
#define VS_RCU_BATCH 128

/**
 * struct vs_rcu_stats - what has been handed to RCU since the start
 * @callbacks: liburcu callbacks queued: one per vs_call_rcu() and one
 *             per vs_free_rcu() batch
 * @deferred: objects passed to vs_free_rcu()
 */
struct vs_rcu_stats {
	long callbacks;
	long deferred;
};

/**
 * vs_rcu_stats - read the counters of struct vs_rcu_stats
 * @st: filled in
 *
 * Context: any.
 */
VS_EXTERN void vs_rcu_stats(struct vs_rcu_stats *st);

/**
 * vs_rcu_barrier - wait until every callback queued so far has run
 *
 * Also the entries of every vs_free_rcu() batch, full or not, and the
 * ones those callbacks queue in turn.
 *
 * Context: may sleep; not inside a read-side section or a callback.
 */
VS_EXTERN void vs_rcu_barrier(void);

/**
 * vs_rcu_register_thread - register the calling thread with liburcu
 *
 * vs_thread_attach() calls it; idempotent.
 *
 * Context: outside any read-side section; not a signal handler.
 */
VS_EXTERN void vs_rcu_register_thread(void);

/**
 * vs_rcu_unregister_thread - undo vs_rcu_register_thread()
 *
 * A thread that liburcu registered by itself (its call_rcu thread) stays
 * registered.  vs_thread_detach() calls it.
 *
 * Context: outside any read-side section.
 */
VS_EXTERN void vs_rcu_unregister_thread(void);

/*
 * Quiescent states (urcu-qsbr).  Under urcu-memb they do nothing.  A
 * thread that is not attached is left alone.
 */

/**
 * vs_rcu_quiescent_state - report that this thread holds no RCU reference
 *
 * Under urcu-qsbr an attached thread calls it now and then, or grace
 * periods never end.
 *
 * Context: outside any read-side section.
 */
VS_EXTERN void vs_rcu_quiescent_state(void);

/**
 * vs_rcu_thread_offline - stop taking part in grace periods (urcu-qsbr)
 *
 * For a long sleep or block: grace periods then do not wait for the
 * thread.  It calls vs_rcu_thread_online() before its next read-side
 * section.
 *
 * Context: outside any read-side section.
 */
VS_EXTERN void vs_rcu_thread_offline(void);

/**
 * vs_rcu_thread_online - take part in grace periods again (urcu-qsbr)
 *
 * Context: an offline thread, outside any read-side section.
 */
VS_EXTERN void vs_rcu_thread_online(void);

#endif /* VMSIM_RCU_H */
