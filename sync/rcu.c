/* SPDX-License-Identifier: MIT */
#include "rcu.h"

#include <stddef.h>
#include <stdlib.h>

#include "internal.h"
#include "spinlock.h"

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

static vs_atomic_long_t nr_callbacks;

void vs_call_rcu(struct vs_rcu_head *head,
		 void (*func)(struct vs_rcu_head *head))
{
	(void)vs__thread_slot();
	head->func = func;
	vs_fetch_add_relaxed(&nr_callbacks, 1);
	vs__tsan_release(head);
	urcu_call(call_rcu)(&head->urcu, rcu_trampoline);
}

/* ---- vs_free_rcu(): per-slot batches -------------------------------------- */

/*
 * struct free_batch - objects that wait for one grace period together
 * @next: link on the spare list while unused
 */
struct free_batch {
	struct vs_rcu_head rcu;
	struct free_batch *next;
	unsigned int nr;
	struct {
		void (*fn)(void *arg, void *obj);
		void *arg, *obj;
	} ent[VS_RCU_BATCH];
};

/*
 * struct batch_slot - the batch a slot is filling
 * @lock: protects @cur; a slot's owner is its only user but for the
 *        shared slot and vs_rcu_barrier() emptying every slot
 * @deferred: objects passed through this slot; written under @lock
 */
struct batch_slot {
	VS_CACHELINE_ALIGNED vs__slot_lock_t lock;
	struct free_batch *cur;
	vs_atomic_long_t deferred;
};

static struct batch_slot batch_slots[VS_SLOT_ARRAY];

/*
 * Batches not in use.  They are never given back to the host: a steady
 * stream of frees recycles the same few, with no malloc() on the way.
 */
static vs_spinlock_t spare_lock = VS_SPINLOCK_INIT;
static struct free_batch *spare;

static struct free_batch *batch_get(void)
{
	struct free_batch *b;

	vs_spin_lock(&spare_lock);
	b = spare;
	if (b)
		spare = b->next;
	vs_spin_unlock(&spare_lock);
	if (!b)
		b = malloc(sizeof(*b));
	if (b)
		b->nr = 0;
	return b;
}

static void batch_put(struct free_batch *b)
{
	vs_spin_lock(&spare_lock);
	b->next = spare;
	spare = b;
	vs_spin_unlock(&spare_lock);
}

static void batch_run(struct vs_rcu_head *head)
{
	struct free_batch *b = (struct free_batch *)head;
	unsigned int i;

	for (i = 0; i < b->nr; i++)
		b->ent[i].fn(b->ent[i].arg, b->ent[i].obj);
	batch_put(b);
}

/* Hand @s's batch to RCU, if it has one; return whether it had. */
static int batch_flush(struct batch_slot *s)
{
	struct free_batch *b;

	vs__slot_lock(&s->lock);
	b = s->cur;
	s->cur = NULL;
	vs__slot_unlock(&s->lock);
	if (b)
		vs_call_rcu(&b->rcu, batch_run);
	return b != NULL;
}

void vs_free_rcu(void (*fn)(void *arg, void *obj), void *arg, void *obj)
{
	struct batch_slot *s = &batch_slots[vs__thread_slot()];
	struct free_batch *b;

	if (VS_BROKEN(free_rcu_no_grace_period)) {
		fn(arg, obj);
		return;
	}
	vs__slot_lock(&s->lock);
	b = s->cur;
	if (vs_unlikely(!b)) {
		b = s->cur = batch_get();
		if (!b) {
			vs__slot_unlock(&s->lock);
			vs_synchronize_rcu();
			fn(arg, obj);
			return;
		}
	}
	b->ent[b->nr].fn = fn;
	b->ent[b->nr].arg = arg;
	b->ent[b->nr].obj = obj;
	if (++b->nr == VS_RCU_BATCH)
		s->cur = NULL;
	else
		b = NULL;
	vs_write_once(&s->deferred, vs_read_once(&s->deferred) + 1);
	vs__slot_unlock(&s->lock);
	/* Outside the slot lock: call_rcu may wake liburcu's worker. */
	if (b)
		vs_call_rcu(&b->rcu, batch_run);
}

void vs_rcu_stats(struct vs_rcu_stats *st)
{
	size_t i;

	st->callbacks = vs_read_once(&nr_callbacks);
	st->deferred = 0;
	for (i = 0; i < VS_ARRAY_SIZE(batch_slots); i++)
		st->deferred += vs_read_once(&batch_slots[i].deferred);
}

void vs_rcu_barrier(void)
{
	size_t i;
	int flushed;

	/*
	 * The callbacks of one round may free into batches again (a VMA
	 * drops its anon_vma): repeat until a round finds nothing to flush.
	 */
	do {
		flushed = 0;
		for (i = 0; i < VS_ARRAY_SIZE(batch_slots); i++)
			flushed |= batch_flush(&batch_slots[i]);
		urcu_call(barrier)();
	} while (flushed);
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
