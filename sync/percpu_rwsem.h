/* SPDX-License-Identifier: MIT */
/*
 * sync/percpu_rwsem.h - per-slot reader counts with a writer flag, the
 * protocol of the 2006 lock_cpu_hotplug redesign (seed 002) as it grew
 * into the kernel's percpu_rw_semaphore, with rcu_sync so that
 * back-to-back writers skip the grace period.
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
#ifndef VS_SYNC_PERCPU_RWSEM_H
#define VS_SYNC_PERCPU_RWSEM_H

#include "atomic.h"
#include "common.h"
#include "rcu.h"
#include "spinlock.h"
#include "thread.h"

enum vs_rcu_sync_state {
	VS_GP_IDLE = 0, /* readers use their fast path */
	VS_GP_ENTER,    /* a writer waits for a grace period */
	VS_GP_PASSED,   /* readers are all on the slow path */
	VS_GP_EXIT,     /* last writer left; a callback will go idle */
	VS_GP_REPLAY,   /* a writer came and went while EXIT was pending */
};

struct vs_rcu_sync {
	vs_atomic32_t gp_state; /* written under lock, read by anyone */
	int gp_count;           /* writers between enter and exit; lock */
	vs_spinlock_t lock;
	struct vs_rcu_head cb_head;
};

struct vs__percpu_count {
	VS_CACHELINE_ALIGNED vs_atomic_long_t n;
};

struct vs_percpu_rwsem {
	struct vs_rcu_sync rss;
	vs_spinlock_t writer;           /* one writer at a time */
	VS_CACHELINE_ALIGNED vs_atomic32_t block; /* a writer is in */
	vs_atomic32_t writer_wake;      /* futex word of the draining writer */
	struct vs__percpu_count read_count[VS_SLOT_ARRAY];
};

VS_EXTERN void vs_rcu_sync_init(struct vs_rcu_sync *rss);
VS_EXTERN void vs_rcu_sync_enter(struct vs_rcu_sync *rss);
VS_EXTERN void vs_rcu_sync_exit(struct vs_rcu_sync *rss);
VS_EXTERN void vs_rcu_sync_dtor(struct vs_rcu_sync *rss);

/**
 * vs_rcu_sync_is_idle - may readers use their fast path?
 * Context: inside an RCU read-side critical section.
 */
static inline bool vs_rcu_sync_is_idle(struct vs_rcu_sync *rss)
{
	/* Acquire pairs with the release that makes the state idle, after
	 * the last writer's critical section. */
	return vs_load_acquire(&rss->gp_state) == VS_GP_IDLE;
}

/* Return: 0, or -EINVAL for NULL. */
VS_EXTERN int vs_percpu_init_rwsem(struct vs_percpu_rwsem *sem);
/* Return: 0; -EBUSY while held; waits for a pending rcu_sync callback. */
VS_EXTERN int vs_percpu_free_rwsem(struct vs_percpu_rwsem *sem);

VS_EXTERN void vs_percpu_down_read(struct vs_percpu_rwsem *sem);
VS_EXTERN int vs_percpu_down_read_trylock(struct vs_percpu_rwsem *sem);
VS_EXTERN void vs_percpu_up_read(struct vs_percpu_rwsem *sem);
VS_EXTERN void vs_percpu_down_write(struct vs_percpu_rwsem *sem);
VS_EXTERN int vs_percpu_down_write_trylock(struct vs_percpu_rwsem *sem);
VS_EXTERN void vs_percpu_up_write(struct vs_percpu_rwsem *sem);
VS_EXTERN void vs_percpu_downgrade_write(struct vs_percpu_rwsem *sem);

#endif /* VS_SYNC_PERCPU_RWSEM_H */
