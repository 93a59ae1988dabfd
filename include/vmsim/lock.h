/* SPDX-License-Identifier: MIT */
/*
 * vmsim/lock.h - a reader-writer lock of a kind chosen at run time.
 *
 * This is what struct vs_mm uses as its mmap_lock.  The kinds:
 *
 *   rwsem    vmsim/rwsem.h, Linux semantics (the default)
 *   pthread  pthread_rwlock_t, glibc's default (reader-preferring)
 *   percpu   vmsim/percpu_rwsem.h, per-slot reader counts + rcu_sync
 *   brlock   vmsim/brlock.h, a mutex per slot, writers take them all
 *   prwlock  vmsim/prwlock.h, passive readers, writers use membarrier
 *
 * docs/lock-kinds.md compares them.  Every kind is not recursive; percpu,
 * brlock and prwlock readers must unlock on the thread that locked.
 * A lock belongs to a class (vmsim/lockstat.h) for statistics.
 */
#ifndef VMSIM_LOCK_H
#define VMSIM_LOCK_H

#include <stdbool.h>
#include <stddef.h>

#include "atomic.h"
#include "common.h"
#include "lockdep_annotate.h"
#include "lockstat.h"

struct vs_lock;

/**
 * struct vs_lock_ops - the operations of a lock kind
 * @name: the kind's name, what vs_lock_init() takes as its kind; unique
 *        among kinds
 * @size: bytes of the implementation object, which vs_lock_init()
 *        allocates (cache-line aligned, not zeroed) and
 *        vs_lock_destroy() frees
 * @init: set up the implementation object; 0, or a negative errno that
 *        vs_lock_init() returns
 * @destroy: check that the implementation object is unheld before it
 *           is freed; 0, or a negative errno (-EBUSY while held) that
 *           vs_lock_destroy() returns, freeing nothing
 * @read_lock: take the lock for reading, as vs_lock_read_lock()
 * @read_trylock: take it for reading without waiting for a holder, as
 *                vs_lock_read_trylock(); 1 when taken, 0 otherwise
 * @read_unlock: release a read hold, as vs_lock_read_unlock()
 * @write_lock: take the lock for writing, as vs_lock_write_lock()
 * @write_trylock: take it for writing without waiting for a holder, as
 *                 vs_lock_write_trylock(); 1 when taken, 0 otherwise
 * @write_unlock: release the write hold, as vs_lock_write_unlock()
 * @downgrade_write: turn the caller's write hold into a read hold, as
 *                   vs_lock_downgrade_write()
 *
 * init and destroy take the implementation object; the others take the
 * lock and reach it through lock->impl.  Each operation keeps the rules
 * of the vs_lock_* call that reaches it.  A table passed to
 * vs_lock_kind_register() has every member set.
 */
struct vs_lock_ops {
	const char *name;
	size_t size;
	int (*init)(void *impl);
	int (*destroy)(void *impl);
	void (*read_lock)(struct vs_lock *lock);
	int (*read_trylock)(struct vs_lock *lock);
	void (*read_unlock)(struct vs_lock *lock);
	void (*write_lock)(struct vs_lock *lock);
	int (*write_trylock)(struct vs_lock *lock);
	void (*write_unlock)(struct vs_lock *lock);
	void (*downgrade_write)(struct vs_lock *lock);
};

/**
 * struct vs_lock - a lock of a kind chosen at run time
 * @ops: the table every call goes through: @kind, or the hooked table
 *       while statistics or trace hooks are on
 * @kind: the kind's own table
 * @impl: the implementation object, allocated by vs_lock_init()
 * @class: the statistics class; NULL: no statistics
 * @last_slot: private to lockstat: the thread slot of the last
 *             acquisition it recorded
 * @reg_next, @reg_prev: private: the lock registry's list
 *
 * Set up with vs_lock_init().  @ops is the table every call goes
 * through: the kind's own table, or, while lock statistics or trace
 * hooks are on, the hooked table, which records and then calls @kind.
 * Switching the hooks rewrites @ops of every lock (the way the kernel
 * patches a static key), so with hooks off a call costs exactly what
 * the kind costs: no flag, no branch.
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
	struct vs_lock_class *class;
	vs_atomic32_t last_slot;
	struct vs_lock *reg_next, *reg_prev;
	VS__LD_MAP	/* lockdep builds: the statistics class's name */
};

/**
 * vs_lock_init - set up @lock as a lock of kind @kind
 * @lock: the lock
 * @kind: "rwsem", "pthread", "percpu", "brlock" or "prwlock", or a kind
 *        added with vs_lock_kind_register(); NULL means "rwsem"
 * @class: statistics class name (see vs_lock_class_get()), or NULL
 *
 * Allocates the kind's implementation object, sets it up with the
 * kind's init, and adds @lock to the lock registry, which points its
 * ops at the hooked table while statistics or trace hooks are on.
 *
 * Context: any thread; @lock is not shared yet and not set up (a
 * destroyed lock may be set up again).  Takes the class table's
 * spinlock (with @class) and the lock registry's spinlock.
 * Return: 0; -EINVAL for a NULL @lock, an unknown @kind or a bad @class;
 * -EOPNOTSUPP for "pthread" in the vCPU build (vmsim/vcpu.h); -ENOMEM;
 * or the error the kind's init returned.
 */
VS_EXTERN int vs_lock_init(struct vs_lock *lock, const char *kind,
			   const char *class);

/**
 * vs_lock_destroy - free @lock
 * @lock: the lock
 *
 * Asks the kind whether @lock is held (its destroy); if not, removes
 * @lock from the lock registry and frees the implementation object.
 *
 * Context: valid only once every user has returned from its last
 * unlock, and no thread calls on @lock again: a lock cannot protect its
 * own freeing.  Takes the lock registry's spinlock.  A percpu lock's
 * destroy may sleep (it waits for a pending rcu_sync callback) and must
 * not be called inside vs_rcu_read_lock().
 * Return: 0; -EBUSY while it is held (nothing is freed; an rwsem also
 * while it is waited for); -EINVAL for a NULL @lock or one that is not
 * set up (zeroed, or destroyed already).
 */
VS_EXTERN int vs_lock_destroy(struct vs_lock *lock);

/**
 * VS_LOCK_MAX_KINDS - lock kinds that can exist at once: the 5 built-in
 * ones and 11 more
 */
#define VS_LOCK_MAX_KINDS 16

/**
 * vs_lock_kind_name - the name of lock kind @i
 * @i: 0, 1, ... in registration order, the built-in ones first
 *
 * Context: any; takes no lock.
 * Return: the name, or NULL past the last kind (and for a negative @i).
 */
VS_EXTERN const char *vs_lock_kind_name(int i);

/**
 * vs_lock_kind_ops - the ops table of the lock kind called @name
 * @name: a kind's name, built in or registered
 *
 * Context: any; takes no lock.
 * Return: the table, or NULL for a NULL or unknown @name.
 */
VS_EXTERN const struct vs_lock_ops *vs_lock_kind_ops(const char *name);

/**
 * vs_lock_kind_register - add a lock kind, such as one under test
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

/*
 * The operations, on a lock set up with vs_lock_init() and not yet
 * destroyed.  Lock calls may sleep; unlock, trylock and downgrade never
 * wait for a holder (percpu's write trylock may still wait for a grace
 * period, see vs_rcu_sync_enter(); pthread's downgrade is an unlock and
 * a read lock, which may wait for a writer that got in between).
 * Trylocks return 1 when taken, 0 otherwise.  The caller of an unlock
 * or of vs_lock_downgrade_write() holds @lock in that mode.
 */

/* The vCPU build's trace of @lock's waits and holds, by its class name
 * (VS_VCPU_SPAN_BEGIN(): the engine's bookkeeping, no event). */
#define VS__LOCK_SPAN(lock, what) \
	VS_VCPU_SPAN_BEGIN("lock", (lock)->class ? (lock)->class->name : \
			   "lock", (what), (lock))

/**
 * vs_lock_read_lock - take @lock for reading
 * @lock: the lock
 *
 * Context: may sleep.  The caller does not hold @lock (no kind is
 * recursive).  percpu and prwlock: an attached (or attachable) thread.
 * percpu, brlock and prwlock: unlock on the same thread.
 */
static inline void vs_lock_read_lock(struct vs_lock *lock)
{
	VS__LD(vs__lockdep_acquire(&lock->dep_map, lock, 0,
				   VS__LD_READ | VS__LD_SLEEP, VS__LD_IP));
	VS__LOCK_SPAN(lock, "wait R");
	vs_read_once(&lock->ops)->read_lock(lock);
	VS_VCPU_SPAN_END(lock);
	VS__LOCK_SPAN(lock, "R");
}

/**
 * vs_lock_read_trylock - take @lock for reading if that needs no wait
 * @lock: the lock
 *
 * Fails when a writer holds @lock and, depending on the kind, when one
 * waits for it.
 *
 * Context: never sleeps.  percpu, brlock and prwlock: unlock on the same
 * thread.
 * Return: 1 when taken, 0 otherwise.
 */
static inline int vs_lock_read_trylock(struct vs_lock *lock)
{
	int ok = vs_read_once(&lock->ops)->read_trylock(lock);

	if (ok) {
		VS__LD(vs__lockdep_acquire(&lock->dep_map, lock, 0,
					   VS__LD_READ | VS__LD_TRY,
					   VS__LD_IP));
		VS__LOCK_SPAN(lock, "R");
	}
	return ok;
}

/**
 * vs_lock_read_unlock - release a read hold of @lock
 * @lock: the lock
 *
 * Context: the caller holds @lock for reading (vs_lock_read_lock(),
 * vs_lock_read_trylock() or vs_lock_downgrade_write()); percpu, brlock
 * and prwlock: it is the thread that took it.  Never sleeps.
 */
static inline void vs_lock_read_unlock(struct vs_lock *lock)
{
	VS__LD(vs__lockdep_release(&lock->dep_map, lock));
	vs_read_once(&lock->ops)->read_unlock(lock);
	VS_VCPU_SPAN_END(lock);
}

/**
 * vs_lock_write_lock_nested - take @lock for writing, one of its lockdep
 * class held on purpose by the caller already
 * @lock: the lock
 * @subclass: VS_SINGLE_DEPTH_NESTING for the second lock of the class
 *            (vmsim/lockdep.h); nothing but lockdep sees it
 *
 * Context: as vs_lock_write_lock().
 */
static inline void vs_lock_write_lock_nested(struct vs_lock *lock,
					     int subclass)
{
	(void)subclass;
	VS__LD(vs__lockdep_acquire(&lock->dep_map, lock, subclass,
				   VS__LD_SLEEP, VS__LD_IP));
	VS__LOCK_SPAN(lock, "wait W");
	vs_read_once(&lock->ops)->write_lock(lock);
	VS_VCPU_SPAN_END(lock);
	VS__LOCK_SPAN(lock, "W");
}

/**
 * vs_lock_write_lock - take @lock for writing
 * @lock: the lock
 *
 * Context: may sleep.  The caller does not hold @lock in either mode.
 * percpu: not inside vs_rcu_read_lock().
 */
static inline void vs_lock_write_lock(struct vs_lock *lock)
{
	vs_lock_write_lock_nested(lock, 0);
}

/**
 * vs_lock_write_trylock - take @lock for writing if no one holds it
 * @lock: the lock
 *
 * Context: never waits for a holder.  percpu's may still sleep for a
 * grace period (vs_rcu_sync_enter()) and must not be called inside
 * vs_rcu_read_lock(); prwlock's enters the kernel for its heavy barrier.
 * Return: 1 when taken, 0 otherwise.
 */
static inline int vs_lock_write_trylock(struct vs_lock *lock)
{
	int ok = vs_read_once(&lock->ops)->write_trylock(lock);

	if (ok) {
		VS__LD(vs__lockdep_acquire(&lock->dep_map, lock, 0,
					   VS__LD_TRY, VS__LD_IP));
		VS__LOCK_SPAN(lock, "W");
	}
	return ok;
}

/**
 * vs_lock_write_unlock - release the write hold of @lock
 * @lock: the lock
 *
 * Context: the caller holds @lock for writing.  Never sleeps.
 */
static inline void vs_lock_write_unlock(struct vs_lock *lock)
{
	VS__LD(vs__lockdep_release(&lock->dep_map, lock));
	vs_read_once(&lock->ops)->write_unlock(lock);
	VS_VCPU_SPAN_END(lock);
}

/**
 * vs_lock_downgrade_write - turn the caller's write hold of @lock into a
 * read hold
 * @lock: the lock
 *
 * Atomic for every built-in kind but pthread, which has no downgrade:
 * it unlocks and then read-locks, so a writer may get in between.
 *
 * Context: the caller holds @lock for writing; it then releases it with
 * vs_lock_read_unlock() (percpu, brlock and prwlock: on the same
 * thread).  Never sleeps, except pthread's, which may wait for the
 * writer that got in.
 */
static inline void vs_lock_downgrade_write(struct vs_lock *lock)
{
	VS__LD(vs__lockdep_downgrade(&lock->dep_map, lock));
	vs_read_once(&lock->ops)->downgrade_write(lock);
	VS_VCPU_SPAN_END(lock);
	VS__LOCK_SPAN(lock, "R");
}

#endif /* VMSIM_LOCK_H */
