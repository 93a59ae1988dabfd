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

struct vs_lock;

/*
 * The operations of a kind.  init and destroy take the implementation
 * object; the others take the lock and reach it through lock->impl.
 */
struct vs_lock_ops {
	const char *name;
	size_t size; /* of the implementation object */
	int (*init)(void *impl);
	int (*destroy)(void *impl); /* 0, or -EBUSY while held */
	void (*read_lock)(struct vs_lock *lock);
	int (*read_trylock)(struct vs_lock *lock);
	void (*read_unlock)(struct vs_lock *lock);
	void (*write_lock)(struct vs_lock *lock);
	int (*write_trylock)(struct vs_lock *lock);
	void (*write_unlock)(struct vs_lock *lock);
	void (*downgrade_write)(struct vs_lock *lock);
};

/*
 * struct vs_lock - a lock of a kind chosen at run time
 *
 * @ops is the table every call goes through: the kind's own table, or,
 * while lock statistics or trace hooks are on, the hooked table, which
 * records and then calls @kind.  Switching the hooks rewrites @ops of
 * every lock (the way the kernel patches a static key), so with hooks
 * off a call costs exactly what the kind costs: no flag, no branch.
 *
 *	field      read                  write
 *	ops        any (vs_read_once)    vs_lock_init, hook switching
 *	kind, impl, class                vs_lock_init only
 *	last_slot  lockstat              lockstat (atomic)
 *	reg_*      lock registry         lock registry (its spinlock)
 */
struct vs_lock {
	VS_ATOMIC(const struct vs_lock_ops *) ops;
	const struct vs_lock_ops *kind;
	void *impl;
	struct vs_lock_class *class; /* NULL: no statistics */
	vs_atomic32_t last_slot;     /* private */
	struct vs_lock *reg_next, *reg_prev; /* private */
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
 *
 * Valid only once every user has returned from its last unlock: a lock
 * cannot protect its own freeing.
 * Return: 0; -EBUSY while it is held (nothing is freed); -EINVAL.
 */
VS_EXTERN int vs_lock_destroy(struct vs_lock *lock);

/* Lock kinds that can exist at once: the 5 built-in ones and 11 more. */
#define VS_LOCK_MAX_KINDS 16

/*
 * vs_lock_kind_name - the name of kind @i (0, 1, ... in registration
 * order, the built-in ones first), or NULL past the last.
 * Context: any.
 */
VS_EXTERN const char *vs_lock_kind_name(int i);

/*
 * vs_lock_kind_ops - the ops table of kind @name, or NULL.
 * Context: any.
 */
VS_EXTERN const struct vs_lock_ops *vs_lock_kind_ops(const char *name);

/**
 * vs_lock_kind_register - add a lock kind, e.g. one under test
 * @ops: every member set; lives as long as the process (not copied)
 *
 * The kind then works wherever a kind name does: vs_lock_init(),
 * vs_mm_options.lock_kind, vs_stress_run().  A new kind can start from
 * a built-in table (*vs_lock_kind_ops("rwsem")) and replace members.
 * There is no unregister.
 *
 * Context: any thread; takes a mutex.
 * Return: the kind's index for vs_lock_kind_name(); -EINVAL for NULL, an
 * empty name, a zero size or a missing operation; -EEXIST for a name in
 * use; -EBUSY when VS_LOCK_MAX_KINDS exist.
 */
VS_EXTERN int vs_lock_kind_register(const struct vs_lock_ops *ops);

/* Private: point every lock at the hooked table (@on) or at its kind's. */
VS_EXTERN void vs__lock_set_hooks(const struct vs_lock_ops *hooked, int on);

/*
 * The operations.  Lock calls may sleep; unlock, trylock and downgrade
 * never wait for a holder (percpu's write trylock may still wait for a
 * grace period, see vs_rcu_sync_enter()).  Trylocks return 1 when taken,
 * 0 otherwise.  The caller of an unlock or of vs_lock_downgrade_write()
 * holds @lock in that mode.
 */
static inline void vs_lock_read_lock(struct vs_lock *lock)
{
	vs_read_once(&lock->ops)->read_lock(lock);
}

static inline int vs_lock_read_trylock(struct vs_lock *lock)
{
	return vs_read_once(&lock->ops)->read_trylock(lock);
}

static inline void vs_lock_read_unlock(struct vs_lock *lock)
{
	vs_read_once(&lock->ops)->read_unlock(lock);
}

static inline void vs_lock_write_lock(struct vs_lock *lock)
{
	vs_read_once(&lock->ops)->write_lock(lock);
}

static inline int vs_lock_write_trylock(struct vs_lock *lock)
{
	return vs_read_once(&lock->ops)->write_trylock(lock);
}

static inline void vs_lock_write_unlock(struct vs_lock *lock)
{
	vs_read_once(&lock->ops)->write_unlock(lock);
}

static inline void vs_lock_downgrade_write(struct vs_lock *lock)
{
	vs_read_once(&lock->ops)->downgrade_write(lock);
}

#endif /* VS_SYNC_LOCK_H */
