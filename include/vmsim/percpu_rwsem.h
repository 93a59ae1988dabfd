/* SPDX-License-Identifier: MIT */
/*
 * vmsim/percpu_rwsem.h - per-slot reader counts with a writer flag, the
 * protocol of Gautham Shenoy's 2006 lock_cpu_hotplug redesign
 * (docs/references.md) as it grew into the kernel's percpu_rw_semaphore,
 * with rcu_sync so that back-to-back writers skip the grace period.
 *
 * Reader fast path, inside an RCU read-side section: if rcu_sync is idle
 * (no writer for at least a grace period), add one to the caller's slot
 * count.  No read-modify-write, no shared line written.
 * Writer: rcu_sync_enter() (flip readers to the slow path; waits for a
 * grace period unless one already passed for an earlier writer), set
 * block, wait for the slot counts to drain.
 *
 * Readers must unlock on the thread that locked.  Writers may starve
 * readers (a new writer can take the lock before readers woken by the
 * last one get in); readers cannot starve a writer.
 */
#ifndef VMSIM_PERCPU_RWSEM_H
#define VMSIM_PERCPU_RWSEM_H

#include "atomic.h"
#include "common.h"
#include "rcu.h"
#include "spinlock.h"
#include "thread.h"

/**
 * enum vs_rcu_sync_state - where an rcu_sync is (kernel/rcu/sync.c)
 */
enum vs_rcu_sync_state {
	VS_GP_IDLE = 0, /* readers use their fast path */
	VS_GP_ENTER,    /* a writer waits for a grace period */
	VS_GP_PASSED,   /* readers are all on the slow path */
	VS_GP_EXIT,     /* last writer left; a callback will go idle */
	VS_GP_REPLAY,   /* a writer came and went while EXIT was pending */
};

/**
 * struct vs_rcu_sync - is a writer around, as RCU readers see it?
 * @lock: protects the state changes
 * @cb_head: for the callback that ends a state a grace period later
 *
 * Set up with vs_rcu_sync_init(); every member is private.
 */
struct vs_rcu_sync {
	vs_atomic32_t gp_state; /* written under lock, read by anyone */
	int gp_count;           /* writers between enter and exit; lock */
	vs_spinlock_t lock;
	struct vs_rcu_head cb_head;
};

struct vs__percpu_count {
	VS_CACHELINE_ALIGNED vs_atomic_long_t n;
};

/**
 * struct vs_percpu_rwsem - a per-slot reader-writer semaphore
 * @rss: sends readers to their slow path while a writer is around
 * @read_count: readers inside, per thread slot (one cache line each)
 *
 * Set up with vs_percpu_init_rwsem(); every member is private.
 */
struct vs_percpu_rwsem {
	struct vs_rcu_sync rss;
	vs_spinlock_t writer;           /* one writer at a time */
	VS_CACHELINE_ALIGNED vs_atomic32_t block; /* a writer is in */
	vs_atomic32_t writer_wake;      /* futex word of the draining writer */
	struct vs__percpu_count read_count[VS_SLOT_ARRAY];
};

/**
 * vs_rcu_sync_init - initialize @rss, idle (readers on their fast path)
 * @rss: the rcu_sync
 *
 * Context: before @rss is shared.
 */
VS_EXTERN void vs_rcu_sync_init(struct vs_rcu_sync *rss);

/**
 * vs_rcu_sync_enter - make readers take their slow path
 * @rss: the rcu_sync
 *
 * Waits for a grace period only when readers were on their fast path;
 * a writer that follows another within a grace period of its exit goes
 * straight through.  Writers may be inside together: each enter is
 * matched by one vs_rcu_sync_exit().
 *
 * Context: may sleep; an attached thread, not inside an RCU read-side
 * section.
 */
VS_EXTERN void vs_rcu_sync_enter(struct vs_rcu_sync *rss);

/**
 * vs_rcu_sync_exit - the writer is done; readers go fast again a grace
 * period after the last exit
 * @rss: the rcu_sync
 *
 * Context: entered with vs_rcu_sync_enter().  Never sleeps.
 */
VS_EXTERN void vs_rcu_sync_exit(struct vs_rcu_sync *rss);

/**
 * vs_rcu_sync_dtor - wait for a pending callback before @rss is freed
 * @rss: the rcu_sync
 *
 * Context: may sleep (vs_rcu_barrier()); no writer inside, not inside an
 * RCU read-side section or callback.
 */
VS_EXTERN void vs_rcu_sync_dtor(struct vs_rcu_sync *rss);

/**
 * vs_rcu_sync_is_idle - may readers use their fast path?
 * @rss: the rcu_sync
 *
 * Context: inside an RCU read-side critical section, which a writer's
 * vs_rcu_sync_enter() waits for.
 * Return: true when no writer has been around for a grace period.
 */
static inline bool vs_rcu_sync_is_idle(struct vs_rcu_sync *rss)
{
	/* Acquire pairs with the release that makes the state idle, after
	 * the last writer's critical section. */
	return vs_load_acquire(&rss->gp_state) == VS_GP_IDLE;
}

/**
 * vs_percpu_init_rwsem - initialize an unlocked semaphore
 * @sem: the semaphore
 *
 * Context: before @sem is shared.
 * Return: 0, or -EINVAL for NULL.
 */
VS_EXTERN int vs_percpu_init_rwsem(struct vs_percpu_rwsem *sem);

/**
 * vs_percpu_free_rwsem - check that @sem is unlocked, before it is freed
 * @sem: the semaphore
 *
 * Waits for a pending rcu_sync callback, which still uses @sem.
 *
 * Context: may sleep; every user has returned from its last unlock; not
 * inside an RCU read-side section or callback.
 * Return: 0; -EINVAL for NULL; -EBUSY while held (nothing waited for).
 */
VS_EXTERN int vs_percpu_free_rwsem(struct vs_percpu_rwsem *sem);

/**
 * vs_percpu_down_read - take @sem for reading
 * @sem: the semaphore
 *
 * Fast path, when no writer has been around for a grace period: add one
 * to the caller's slot count inside an RCU read-side section.  Otherwise
 * count in with a full barrier, and wait while a writer holds it.
 *
 * Context: may sleep; an attached (or attachable) thread.  Not
 * recursive; unlock on the same thread.
 */
VS_EXTERN void vs_percpu_down_read(struct vs_percpu_rwsem *sem);

/**
 * vs_percpu_down_read_trylock - take @sem for reading unless a writer
 * holds it
 * @sem: the semaphore
 *
 * Context: never sleeps.  Unlock on the same thread.
 * Return: 1 when taken, 0 otherwise.
 */
VS_EXTERN int vs_percpu_down_read_trylock(struct vs_percpu_rwsem *sem);

/**
 * vs_percpu_up_read - release a read lock, waking a waiting writer
 * @sem: the semaphore
 *
 * Context: the calling thread holds @sem for reading (it took the lock:
 * the count is its slot's).  Never sleeps.
 */
VS_EXTERN void vs_percpu_up_read(struct vs_percpu_rwsem *sem);

/**
 * vs_percpu_down_write - take @sem for writing
 * @sem: the semaphore
 *
 * vs_rcu_sync_enter() (a grace period unless a writer left less than
 * one ago), then the writer lock, then waits for the slot counts to
 * drain.
 *
 * Context: may sleep; not inside an RCU read-side section.  The caller
 * does not hold @sem.
 */
VS_EXTERN void vs_percpu_down_write(struct vs_percpu_rwsem *sem);

/**
 * vs_percpu_down_write_trylock - take @sem for writing if it is free
 * @sem: the semaphore
 *
 * Never waits for a holder, but may wait for a grace period in
 * vs_rcu_sync_enter() when the lock looked free.
 *
 * Context: may sleep (the grace period); not inside an RCU read-side
 * section.
 * Return: 1 when taken, 0 otherwise.
 */
VS_EXTERN int vs_percpu_down_write_trylock(struct vs_percpu_rwsem *sem);

/**
 * vs_percpu_up_write - release the write lock, waking readers
 * @sem: the semaphore
 *
 * Readers return to their fast path a grace period later, unless
 * another writer comes first.
 *
 * Context: the caller holds @sem for writing.  Never sleeps.
 */
VS_EXTERN void vs_percpu_up_write(struct vs_percpu_rwsem *sem);

/**
 * vs_percpu_downgrade_write - turn the caller's write lock into a read
 * lock
 * @sem: the semaphore
 *
 * Context: the caller holds @sem for writing; it then unlocks with
 * vs_percpu_up_read() on the same thread.  Never sleeps.
 */
VS_EXTERN void vs_percpu_downgrade_write(struct vs_percpu_rwsem *sem);

#endif /* VMSIM_PERCPU_RWSEM_H */
