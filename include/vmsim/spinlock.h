/* SPDX-License-Identifier: MIT */
/*
 * vmsim/spinlock.h - the page-table lock and vmsim's short mutex.
 *
 * Test-and-test-and-set with a bounded spin, then a futex sleep: user
 * space cannot disable preemption, so a waiter whose holder was preempted
 * must not burn its time slice.  Three states (Drepper, "Futexes Are
 * Tricky"): 0 unlocked, 1 locked, 2 locked with possible sleepers.
 * Not recursive, not fair.
 */
#ifndef VMSIM_SPINLOCK_H
#define VMSIM_SPINLOCK_H

#include "atomic.h"
#include "common.h"
#include "lockdep_annotate.h"

/* A planted-bug build compiles its bug into every file that includes
 * this header (as vmsim/seqcount.h); otherwise it is 0. */
#ifdef VS_BROKEN_ID
#include "sync/broken.h"
#define VS__SPIN_UNLOCK_RELAXED VS_BROKEN(spin_unlock_no_release)
#else
#define VS__SPIN_UNLOCK_RELAXED 0
#endif

/**
 * struct vs_spinlock - a short lock (vs_spinlock_t)
 * @state: 0 unlocked, 1 locked, 2 locked with possible sleepers (the
 *         futex word); private
 */
typedef struct vs_spinlock {
	vs_atomic32_t state;
	VS__LD_MAP	/* lockdep builds: the class (vmsim/lockdep.h) */
} vs_spinlock_t;

/** VS_SPINLOCK_INIT - initializer of an unlocked vs_spinlock_t */
#define VS_SPINLOCK_INIT { 0 }

VS_EXTERN void vs__spin_lock_slow(vs_spinlock_t *lock);
VS_EXTERN void vs__spin_unlock_wake(vs_spinlock_t *lock);

/**
 * vs_spin_lock_init - initialize @lock, unlocked
 * @lock: the lock
 *
 * Context: before @lock is shared.
 */
static inline void vs_spin_lock_init(vs_spinlock_t *lock)
{
	vs_atomic_init(&lock->state, 0);
	VS__LD(lock->dep_map = (struct vs_lockdep_map){ 0 });
}

/* Private: take @lock if it is free, without telling lockdep.  Context:
 * as vs_spin_trylock(); vs_spin_lock() and the slow path use it. */
static inline int vs__spin_trylock(vs_spinlock_t *lock)
{
	uint32_t old = 0;

	return vs_cmpxchg_acquire(&lock->state, &old, 1);
}

/**
 * vs_spin_trylock - take @lock if it is free
 * @lock: the lock
 *
 * Context: any; never sleeps.
 * Return: 1 when taken (acquire), 0 otherwise.
 */
static inline int vs_spin_trylock(vs_spinlock_t *lock)
{
	int ok = vs__spin_trylock(lock);

	if (ok)
		VS__LD(vs__lockdep_acquire(&lock->dep_map, lock, 0,
					   VS__LD_TRY | VS__LD_ATOMIC,
					   VS__LD_IP));
	return ok;
}

/**
 * vs_spin_lock_nested - take @lock, one of its lockdep class held on
 * purpose by the caller already
 * @lock: the lock
 * @subclass: VS_SINGLE_DEPTH_NESTING for the second lock of the class
 *            (vmsim/lockdep.h); nothing but lockdep sees it
 *
 * Context: as vs_spin_lock().
 */
static inline void vs_spin_lock_nested(vs_spinlock_t *lock, int subclass)
{
	(void)subclass;
	VS__LD(vs__lockdep_acquire(&lock->dep_map, lock, subclass,
				   VS__LD_ATOMIC, VS__LD_IP));
	if (vs_unlikely(!vs__spin_trylock(lock)))
		vs__spin_lock_slow(lock);
}

/**
 * vs_spin_lock - take @lock, spinning briefly and then sleeping
 * @lock: the lock
 *
 * A spinlock in the kernel's sense: it may be taken inside an RCU
 * read-side section, as the kernel's page-table lock is (the futex
 * sleep is how user space spins without burning a preempted holder's
 * time).  Its holder must not call what may sleep: lockdep reports a
 * blocking vs_alloc_page() or an mmu notifier under it, unless the lock
 * is a mutex to lockdep (vs_lockdep_set_sleeping()).
 *
 * Context: may sleep.  The caller must not hold @lock.
 */
static inline void vs_spin_lock(vs_spinlock_t *lock)
{
	vs_spin_lock_nested(lock, 0);
}

/**
 * vs_spin_unlock - release @lock (release ordering), waking one sleeper
 * @lock: the lock
 *
 * Context: the caller holds @lock.  Never sleeps.
 */
static inline void vs_spin_unlock(vs_spinlock_t *lock)
{
	uint32_t old;

	VS__LD(vs__lockdep_release(&lock->dep_map, lock));
	if (VS__SPIN_UNLOCK_RELAXED) {
		old = vs_read_once(&lock->state);
		while (!vs_cmpxchg_relaxed(&lock->state, &old, 0))
			;
	} else {
		/* Pairs with the acquire of the next vs_spin_lock(). */
		old = vs_xchg_release(&lock->state, 0);
	}
	if (vs_unlikely(old == 2))
		vs__spin_unlock_wake(lock);
}

/**
 * vs_spin_is_locked - is @lock held?
 * @lock: the lock
 *
 * For assertions and destroy checks: the answer may be stale at once.
 *
 * Context: any.
 * Return: nonzero when some thread holds @lock.
 */
static inline int vs_spin_is_locked(vs_spinlock_t *lock)
{
	return vs_read_once(&lock->state) != 0;
}

#endif /* VMSIM_SPINLOCK_H */
