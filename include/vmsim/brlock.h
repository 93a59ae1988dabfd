/* SPDX-License-Identifier: MIT */
/*
 * vmsim/brlock.h - big-reader lock: one mutex per slot (Linux 2.4's brlock
 * as Paul McKenney's "Recent read-mostly research", LWN 2014, describes
 * it; docs/references.md).
 *
 * A reader takes only its own slot's mutex: an atomic on its own cache
 * line, never a miss while no writer comes.  Threads beyond VS_NR_SLOTS
 * share one slot, which is an rwsem so that they still read together.
 * A writer takes every slot's lock, in slot order.  A writer first
 * raises wpending, which holds new readers back, so a stream of readers
 * cannot starve it; writers can starve readers.  Readers must unlock on
 * the thread that locked.
 */
#ifndef VMSIM_BRLOCK_H
#define VMSIM_BRLOCK_H

#include "atomic.h"
#include "common.h"
#include "rwsem.h"
#include "spinlock.h"
#include "thread.h"

struct vs__brlock_slot {
	VS_CACHELINE_ALIGNED vs_spinlock_t lock;
};

/**
 * struct vs_brlock - a big-reader lock
 * @slot: the lock of each owned thread slot (vmsim/thread.h), one cache
 *        line each
 * @shared: the lock of VS_SLOT_SHARED, for the threads beyond
 *          VS_NR_SLOTS
 *
 * Set up with vs_brlock_init(); every member is private to sync/brlock.c.
 */
struct vs_brlock {
	vs_spinlock_t writer;                        /* one writer at a time */
	VS_CACHELINE_ALIGNED vs_atomic32_t wpending; /* futex word */
	struct vs__brlock_slot slot[VS_NR_SLOTS];
	struct vs_rwsem shared;                      /* VS_SLOT_SHARED */
};

/**
 * vs_brlock_init - initialize an unlocked brlock
 * @br: the lock
 *
 * Context: before @br is shared.
 * Return: 0, or -EINVAL when @br is NULL.
 */
VS_EXTERN int vs_brlock_init(struct vs_brlock *br);

/**
 * vs_brlock_destroy - check that @br is unlocked, before it is freed
 * @br: the lock
 *
 * Nothing is allocated, so there is nothing to free: a successful call
 * only says that no holder or waiter is left.
 *
 * Context: every user has returned from its last unlock.
 * Return: 0; -EINVAL when @br is NULL; -EBUSY while it is held.
 */
VS_EXTERN int vs_brlock_destroy(struct vs_brlock *br);

/**
 * vs_br_read_lock - take @br for reading
 * @br: the lock
 *
 * Waits while a writer is pending, then takes the caller's slot lock
 * (the shared slot's rwsem for read beyond VS_NR_SLOTS).  Attaches the
 * calling thread on first use.
 *
 * Context: may sleep.  Not recursive; unlock on the same thread.
 */
VS_EXTERN void vs_br_read_lock(struct vs_brlock *br);

/**
 * vs_br_read_trylock - take @br for reading if that needs no waiting
 * @br: the lock
 *
 * Context: never sleeps.  Unlock on the same thread.
 * Return: 1 when taken, 0 when a writer is pending or holds the
 * caller's slot.
 */
VS_EXTERN int vs_br_read_trylock(struct vs_brlock *br);

/**
 * vs_br_read_unlock - release a read lock of @br
 * @br: the lock
 *
 * Context: the calling thread holds @br for reading (it took the lock:
 * the slot is the thread's).  Never sleeps.
 */
VS_EXTERN void vs_br_read_unlock(struct vs_brlock *br);

/**
 * vs_br_write_lock - take @br for writing
 * @br: the lock
 *
 * Raises wpending, which holds new readers back, then takes every slot
 * lock in slot order, waiting for the readers of each.
 *
 * Context: may sleep.  The caller holds no lock of @br.
 */
VS_EXTERN void vs_br_write_lock(struct vs_brlock *br);

/**
 * vs_br_write_trylock - take @br for writing if no one holds it
 * @br: the lock
 *
 * Context: never sleeps.
 * Return: 1 when taken; 0 when another writer or any reader holds it
 * (the slots taken so far are released again).
 */
VS_EXTERN int vs_br_write_trylock(struct vs_brlock *br);

/**
 * vs_br_write_unlock - release the write lock of @br, waking readers
 * @br: the lock
 *
 * Context: the caller holds @br for writing.  Never sleeps.
 */
VS_EXTERN void vs_br_write_unlock(struct vs_brlock *br);

/**
 * vs_br_downgrade_write - turn the caller's write lock into a read lock
 * @br: the lock
 *
 * Keeps the caller's own slot and releases the others, so that no
 * writer can get in between.
 *
 * Context: the caller holds @br for writing; it then unlocks with
 * vs_br_read_unlock() on the same thread.  Never sleeps.
 */
VS_EXTERN void vs_br_downgrade_write(struct vs_brlock *br);

#endif /* VMSIM_BRLOCK_H */
