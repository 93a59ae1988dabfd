/* SPDX-License-Identifier: MIT */
/*
 * vmsim/prwlock.h - passive reader-writer lock (Liu et al., "Scalable
 * Read-mostly Synchronization Using Passive Reader-Writer Locks", seed
 * 000), with membarrier(2) where the paper sends IPIs.
 *
 * Reader: mark its slot active, a light barrier, check the writer flag.
 * No read-modify-write and no shared line written.  On unlock it reports
 * the lock version it has seen.
 * Writer: set the flag, bump the version, a heavy barrier (membarrier:
 * every running reader now either is visibly active or will see the
 * flag), then wait until every slot has reported the new version or is
 * inactive.  Without membarrier readers use a full barrier instead
 * (see vs_smp_mb_light()).
 *
 * A stream of readers cannot starve a writer; writers can starve
 * readers.  Readers must unlock on the thread that locked.
 */
#ifndef VMSIM_PRWLOCK_H
#define VMSIM_PRWLOCK_H

#include "atomic.h"
#include "common.h"
#include "spinlock.h"
#include "thread.h"

struct vs__prw_slot {
	VS_CACHELINE_ALIGNED vs_atomic_long_t active; /* read sections */
	vs_atomic64_t seen;   /* last version this slot reported */
};

/**
 * struct vs_prwlock - a passive reader-writer lock
 * @version: bumped by each writer; readers report the version they saw
 * @slot: per thread slot: read sections inside and the version last
 *        reported (one cache line each)
 *
 * Set up with vs_prwlock_init(); every member is private.
 */
struct vs_prwlock {
	vs_spinlock_t writer;                     /* one writer at a time */
	VS_CACHELINE_ALIGNED vs_atomic32_t wflag; /* futex word */
	vs_atomic64_t version;
	vs_atomic32_t writer_wake;                /* futex word */
	struct vs__prw_slot slot[VS_SLOT_ARRAY];
};

/**
 * vs_prwlock_init - initialize an unlocked lock
 * @rw: the lock
 *
 * Also decides, once per process, whether the barriers use membarrier
 * (vs_membarrier_init()).
 *
 * Context: before @rw is shared.
 * Return: 0, or -EINVAL for NULL.
 */
VS_EXTERN int vs_prwlock_init(struct vs_prwlock *rw);

/**
 * vs_prwlock_destroy - check that @rw is unlocked, before it is freed
 * @rw: the lock
 *
 * Nothing is allocated, so there is nothing to free: a successful call
 * only says that no holder is left.
 *
 * Context: every user has returned from its last unlock.
 * Return: 0; -EINVAL for NULL; -EBUSY while held.
 */
VS_EXTERN int vs_prwlock_destroy(struct vs_prwlock *rw);

/**
 * vs_prw_read_lock - take @rw for reading
 * @rw: the lock
 *
 * Marks the caller's slot active, a light barrier, and checks the
 * writer flag; while a writer is in, backs out and sleeps.
 *
 * Context: may sleep; an attached (or attachable) thread.  Not
 * recursive; unlock on the same thread.
 */
VS_EXTERN void vs_prw_read_lock(struct vs_prwlock *rw);

/**
 * vs_prw_read_trylock - take @rw for reading unless a writer is in
 * @rw: the lock
 *
 * Context: never sleeps.  Unlock on the same thread.
 * Return: 1 when taken, 0 otherwise.
 */
VS_EXTERN int vs_prw_read_trylock(struct vs_prwlock *rw);

/**
 * vs_prw_read_unlock - release a read lock; report the version seen
 * @rw: the lock
 *
 * Context: the calling thread holds @rw for reading (it took the lock:
 * the slot is its own).  Never sleeps.
 */
VS_EXTERN void vs_prw_read_unlock(struct vs_prwlock *rw);

/**
 * vs_prw_write_lock - take @rw for writing
 * @rw: the lock
 *
 * Sets the flag, bumps the version, a heavy barrier (membarrier), then
 * waits until every slot has reported the new version or is inactive.
 *
 * Context: may sleep.  The caller does not hold @rw.
 */
VS_EXTERN void vs_prw_write_lock(struct vs_prwlock *rw);

/**
 * vs_prw_write_trylock - take @rw for writing if no one holds it
 * @rw: the lock
 *
 * Context: never sleeps, but enters the kernel for the heavy barrier.
 * Return: 1 when taken, 0 otherwise.
 */
VS_EXTERN int vs_prw_write_trylock(struct vs_prwlock *rw);

/**
 * vs_prw_write_unlock - release the write lock, waking readers
 * @rw: the lock
 *
 * Context: the caller holds @rw for writing.  Never sleeps.
 */
VS_EXTERN void vs_prw_write_unlock(struct vs_prwlock *rw);

/**
 * vs_prw_downgrade_write - turn the caller's write lock into a read lock
 * @rw: the lock
 *
 * Context: the caller holds @rw for writing; it then unlocks with
 * vs_prw_read_unlock() on the same thread.  Never sleeps.
 */
VS_EXTERN void vs_prw_downgrade_write(struct vs_prwlock *rw);

#endif /* VMSIM_PRWLOCK_H */
