/* SPDX-License-Identifier: MIT */
/*
 * sync/rcu_free.c - vs_free_rcu(): frees after a grace period in
 * per-slot batches, one callback of the flavour (liburcu natively,
 * sync/rcu_vcpu.c on vCPUs) per batch; and vs_rcu_barrier().
 */
#include <vmsim/rcu.h>

#include <stdlib.h>
#include <string.h>

#include <vmsim/spinlock.h>
#include <vmsim/thread.h>

#include "../vcpu/client.h"
#include "internal.h"

static vs_atomic_long_t nr_callbacks;

void vs__rcu_count_callback(void)
{
	vs_fetch_add_relaxed(&nr_callbacks, 1);
}

/*
 * struct free_batch - objects that wait for one grace period together
 * @next: link on the spare list while unused
 * @all: link on the list of every batch, under spare_lock
 * @flying: handed to RCU, its callback not yet run
 */
struct free_batch {
	struct vs_rcu_head rcu;
	struct free_batch *next;
	struct free_batch *all;
	int flying;
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
	struct free_batch *full;	/* full, not yet handed over */
	unsigned int nr_full;
	vs_atomic32_t full_hint;	/* @full is not empty; read unlocked */
	vs_atomic_long_t deferred;
};

/*
 * Full batches wait in their slot for vs_rcu_free_handover(), which
 * vs_mmap_write_unlock() calls after the unlock: call_rcu may wake
 * liburcu's worker with a futex call, which should not lengthen a
 * write hold of mmap_lock.  Past this many, a slot hands them over at
 * once (a huge munmap, or frees by a thread that never unlocks one).
 */
#define MAX_HELD 4

static struct batch_slot batch_slots[VS_SLOT_ARRAY];

/* vs_rcu_set_free_at_once(): each free is handed over in its call.
 * Written only while nobody frees, so a plain int: on a vCPU its reads
 * are no events, and the schedules of the batched mode stay as they
 * were. */
static int free_at_once;

int vs_rcu_set_free_at_once(int on)
{
	int old = free_at_once;

	free_at_once = on ? 1 : 0;
	return old;
}

/*
 * Batches not in use.  They are never given back to the host: a steady
 * stream of frees recycles the same few, with no malloc() on the way.
 */
static vs_spinlock_t spare_lock = VS_SPINLOCK_INIT;
static struct free_batch *spare;
static struct free_batch *all_batches;	/* under spare_lock */

/* A spare batch, or a new one, on the list of all batches: what
 * abandon() finds there flying belongs to a dead run. */
static struct free_batch *batch_get(void)
{
	struct free_batch *b;

	vs_spin_lock(&spare_lock);
	b = spare;
	if (b) {
		spare = b->next;
	} else {
		b = malloc(sizeof(*b));
		if (b) {
			b->all = all_batches;
			all_batches = b;
		}
	}
	vs_spin_unlock(&spare_lock);
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
	b->flying = 0;
	batch_put(b);
}

/* Hand every batch of the list @b (linked by ->next) to RCU. */
static void hand_over(struct free_batch *b)
{
	struct free_batch *next;

	for (; b; b = next) {
		next = b->next;
		/* vs_call_rcu() orders it before batch_run(). */
		b->flying = 1;
		vs_call_rcu(&b->rcu, batch_run);
	}
}

/* Take @s's full batches, and its partial one too when @all.  Caller
 * holds s->lock. */
static struct free_batch *take_batches(struct batch_slot *s, int all)
{
	struct free_batch *list = s->full;

	s->full = NULL;
	s->nr_full = 0;
	if (all && s->cur) {
		s->cur->next = list;
		list = s->cur;
		s->cur = NULL;
	}
	return list;
}

/* Hand all of @s's batches to RCU; return whether it had any. */
static int batch_flush(struct batch_slot *s)
{
	struct free_batch *list;

	vs__slot_lock(&s->lock);
	list = take_batches(s, 1);
	vs__slot_unlock(&s->lock);
	hand_over(list);
	return list != NULL;
}

void vs_rcu_free_handover(void)
{
	struct batch_slot *s = &batch_slots[vs__thread_slot()];
	struct free_batch *list;

	if (!vs_read_once(&s->full_hint))
		return;
	vs__slot_lock(&s->lock);
	list = take_batches(s, 0);
	vs_write_once(&s->full_hint, 0);
	vs__slot_unlock(&s->lock);
	hand_over(list);
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
	b = NULL;
	if (++s->cur->nr == VS_RCU_BATCH ||
	    vs_unlikely(free_at_once)) {
		s->cur->next = s->full;
		s->full = s->cur;
		s->cur = NULL;
		vs_write_once(&s->full_hint, 1);
		if (++s->nr_full >= MAX_HELD || free_at_once)
			b = take_batches(s, 0);
	}
	vs_write_once(&s->deferred, vs_read_once(&s->deferred) + 1);
	vs__slot_unlock(&s->lock);
	/* Outside the slot lock: call_rcu may wake liburcu's worker. */
	hand_over(b);
}

/*
 * The engine's hook (vcpu/client.h), after a run that failed or
 * deadlocked, whose contexts never run again: free the locks they may
 * have held, and give the batches of the vCPUs' slots, and those handed
 * to its RCU (vs_rcu_set_free_at_once() hands many over), back to the
 * spare list unrun (their objects are the dead run's: lost).
 */
static void abandon(void)
{
	struct batch_slot *s;
	struct free_batch *list, *next;
	size_t i;

	memset(&spare_lock, 0, sizeof(spare_lock));
	/* Not the shared slot: vCPUs never use it, the host's frees wait
	 * there. */
	for (i = 0; i < VS_NR_SLOTS; i++) {
		s = &batch_slots[i];
		vs_atomic_init(&s->lock, 0);
		for (list = take_batches(s, 1); list; list = next) {
			next = list->next;
			batch_put(list);
		}
		vs_atomic_init(&s->full_hint, 0);
	}
	/* Handed to the dead run's RCU: their callbacks never run. */
	for (list = all_batches; list; list = list->all)
		if (list->flying) {
			list->flying = 0;
			batch_put(list);
		}
}

static struct vs__vcpu_client rcu_free_client = { .abandon = abandon };

__attribute__((constructor)) static void rcu_free_client_register(void)
{
	vs__vcpu_client_register(&rcu_free_client);
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

	VS__LD(vs__lockdep_might_sleep("vs_rcu_barrier()"));
	/*
	 * The callbacks of one round may free into batches again (a VMA
	 * drops its anon_vma): repeat until a round finds nothing to flush.
	 */
	do {
		flushed = 0;
		for (i = 0; i < VS_ARRAY_SIZE(batch_slots); i++)
			flushed |= batch_flush(&batch_slots[i]);
		vs__rcu_barrier_callbacks();
	} while (flushed);
}
