/* SPDX-License-Identifier: MIT */
/*
 * sync/lock.h - a reader-writer lock of a kind chosen at run time.
 *
 * This is what struct vs_mm uses as its mmap_lock.  The kinds:
 *
 *   rwsem    sync/rwsem.h, Linux semantics (the default)
 *   pthread  pthread_rwlock_t, glibc's default (reader-preferring)
 *   percpu   sync/percpu_rwsem.h, per-slot reader counts + rcu_sync
 *   brlock   sync/brlock.h, a mutex per slot, writers take them all
 *   prwlock  sync/prwlock.h, passive readers, writers use membarrier
 *
 * docs/locks.md compares them.  Every kind is not recursive; percpu,
 * brlock and prwlock readers must unlock on the thread that locked.
 * A lock belongs to a class (sync/lockstat.h) for statistics.
 */
#ifndef VS_SYNC_LOCK_H
#define VS_SYNC_LOCK_H

#include <stdbool.h>
#include <stddef.h>

#include "atomic.h"
#include "common.h"
#include "lockstat.h"

struct vs_lock_ops {
	const char *name;
	size_t size; /* of the implementation object */
	int (*init)(void *impl);
	int (*destroy)(void *impl); /* 0, or -EBUSY while held */
	void (*read_lock)(void *impl);
	int (*read_trylock)(void *impl);
	void (*read_unlock)(void *impl);
	void (*write_lock)(void *impl);
	int (*write_trylock)(void *impl);
	void (*write_unlock)(void *impl);
	void (*downgrade_write)(void *impl);
};

struct vs_lock {
	/* read-only after vs_lock_init() */
	const struct vs_lock_ops *ops;
	void *impl;
	struct vs_lock_class *class; /* NULL: no statistics */
	/* private, used while statistics are on */
	vs_atomic32_t last_slot;
};

/**
 * vs_lock_init - set up @lock as a lock of kind @kind
 * @lock: the lock
 * @kind: "rwsem", "pthread", "percpu", "brlock" or "prwlock"; NULL means
 *        "rwsem"
 * @class: statistics class name (see vs_lock_class_get()), or NULL
 *
 * Return: 0; -EINVAL for a NULL @lock, an unknown @kind or a bad @class;
 * -ENOMEM.
 */
VS_EXTERN int vs_lock_init(struct vs_lock *lock, const char *kind,
			   const char *class);

/**
 * vs_lock_destroy - free @lock
 * Return: 0; -EBUSY while it is held (nothing is freed); -EINVAL.
 */
VS_EXTERN int vs_lock_destroy(struct vs_lock *lock);

/* vs_lock_kind_name - the name of kind @i, or NULL past the last. */
VS_EXTERN const char *vs_lock_kind_name(int i);

/* vs_lock_kind_ops - the ops table of kind @name, or NULL. */
VS_EXTERN const struct vs_lock_ops *vs_lock_kind_ops(const char *name);

/* Private: the slow paths taken while vs__lock_hooks is set. */
VS_EXTERN void vs__lock_hooked(struct vs_lock *lock, enum vs_lock_side side);
VS_EXTERN int vs__lock_trylock_hooked(struct vs_lock *lock,
				      enum vs_lock_side side);
VS_EXTERN void vs__unlock_hooked(struct vs_lock *lock, enum vs_lock_side side);
VS_EXTERN void vs__downgrade_hooked(struct vs_lock *lock);

#define VS__LOCK_HOOKS_ON() vs_unlikely(vs_read_once(&vs__lock_hooks))

/*
 * The operations.  Lock calls may sleep; unlock, trylock and downgrade
 * never wait for a holder (percpu's write trylock may still wait for a
 * grace period, see vs_rcu_sync_enter()).  Trylocks return 1 when taken, 0 otherwise.  The caller of
 * an unlock or of vs_lock_downgrade_write() holds @lock in that mode.
 */
static inline void vs_lock_read_lock(struct vs_lock *lock)
{
	if (VS__LOCK_HOOKS_ON())
		vs__lock_hooked(lock, VS_LOCK_READ);
	else
		lock->ops->read_lock(lock->impl);
}

static inline int vs_lock_read_trylock(struct vs_lock *lock)
{
	if (VS__LOCK_HOOKS_ON())
		return vs__lock_trylock_hooked(lock, VS_LOCK_READ);
	return lock->ops->read_trylock(lock->impl);
}

static inline void vs_lock_read_unlock(struct vs_lock *lock)
{
	if (VS__LOCK_HOOKS_ON())
		vs__unlock_hooked(lock, VS_LOCK_READ);
	else
		lock->ops->read_unlock(lock->impl);
}

static inline void vs_lock_write_lock(struct vs_lock *lock)
{
	if (VS__LOCK_HOOKS_ON())
		vs__lock_hooked(lock, VS_LOCK_WRITE);
	else
		lock->ops->write_lock(lock->impl);
}

static inline int vs_lock_write_trylock(struct vs_lock *lock)
{
	if (VS__LOCK_HOOKS_ON())
		return vs__lock_trylock_hooked(lock, VS_LOCK_WRITE);
	return lock->ops->write_trylock(lock->impl);
}

static inline void vs_lock_write_unlock(struct vs_lock *lock)
{
	if (VS__LOCK_HOOKS_ON())
		vs__unlock_hooked(lock, VS_LOCK_WRITE);
	else
		lock->ops->write_unlock(lock->impl);
}

static inline void vs_lock_downgrade_write(struct vs_lock *lock)
{
	if (VS__LOCK_HOOKS_ON())
		vs__downgrade_hooked(lock);
	else
		lock->ops->downgrade_write(lock->impl);
}

#endif /* VS_SYNC_LOCK_H */
