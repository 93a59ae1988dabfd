/* SPDX-License-Identifier: MIT */
/*
 * vmsim/rwsem.h - reader-writer semaphore with Linux semantics
 * (kernel/locking/rwsem.c).
 *
 * The count word holds, from bit 0: WRITER_LOCKED, WAITERS, HANDOFF, and
 * from bit 8 the number of readers.  Waiters queue FIFO on a list under
 * wait_lock and sleep on a word of their own (vs_futex_wait()).
 *
 * - A reader takes the fast path only when nobody waits: a stream of
 *   readers cannot starve a queued writer.
 * - A writer may steal a free lock from queued waiters until the first
 *   waiter has waited VS_RWSEM_WAIT_TIMEOUT_NS; then that waiter sets
 *   HANDOFF and the lock goes to it next: a stream of writers cannot
 *   starve queued readers either.
 * - Readers at the front are woken as a batch: every queued reader (up
 *   to VS_RWSEM_MAX_READERS_WAKEUP) is granted the lock at once.
 * - A writer may spin a bounded number of times on a busy lock before it
 *   queues (vs_rwsem_set_spin(); 0 by default).
 *
 * Read locks are not recursive (a queued writer deadlocks a reader that
 * locks again), exactly as in the kernel.
 */
#ifndef VMSIM_RWSEM_H
#define VMSIM_RWSEM_H

#include "atomic.h"
#include "common.h"
#include "lockdep_annotate.h"
#include "spinlock.h"

/* The count word (struct vs_rwsem.count), as the kernel's rwsem.c. */
#define VS_RWSEM_WRITER_LOCKED (1L << 0)	/* a writer holds it */
#define VS_RWSEM_FLAG_WAITERS (1L << 1)	/* the wait list is not empty */
#define VS_RWSEM_FLAG_HANDOFF (1L << 2)	/* the lock goes to the first waiter */
#define VS_RWSEM_READER_SHIFT 8	/* the reader count starts at this bit */
#define VS_RWSEM_READER_BIAS (1L << VS_RWSEM_READER_SHIFT) /* one reader */
#define VS_RWSEM_READER_MASK (~(VS_RWSEM_READER_BIAS - 1)) /* the readers */
/** VS_RWSEM_LOCK_MASK - the bits that say the rwsem is held */
#define VS_RWSEM_LOCK_MASK (VS_RWSEM_WRITER_LOCKED | VS_RWSEM_READER_MASK)
/** VS_RWSEM_READ_FAILED_MASK - the bits that send a reader to its slow path */
#define VS_RWSEM_READ_FAILED_MASK \
	(VS_RWSEM_WRITER_LOCKED | VS_RWSEM_FLAG_WAITERS | VS_RWSEM_FLAG_HANDOFF)

/**
 * VS_RWSEM_WAIT_TIMEOUT_NS - how long the first waiter waits before it
 * asks for a handoff (4 ms, the kernel's RWSEM_WAIT_TIMEOUT at HZ=250)
 */
#define VS_RWSEM_WAIT_TIMEOUT_NS 4000000
/** VS_RWSEM_MAX_READERS_WAKEUP - most readers woken as one batch */
#define VS_RWSEM_MAX_READERS_WAKEUP 256

struct vs__rwsem_waiter;

/**
 * struct vs_rwsem - a reader-writer semaphore
 * @last: the last waiter, under wait_lock
 *
 * Set up with vs_rwsem_init(); every member is private to sync/rwsem.c.
 */
struct vs_rwsem {
	vs_atomic_long_t count;          /* see above */
	vs_spinlock_t wait_lock;         /* protects the list */
	struct vs__rwsem_waiter *first;  /* FIFO, under wait_lock */
	struct vs__rwsem_waiter *last;
	uint32_t spin;                   /* writer spin bound, read-only */
	uint32_t handoff_ns;             /* wait before a handoff; in the
					  * padding, so the layout stays */
	VS__LD_MAP	/* lockdep builds: the class (vmsim/lockdep.h) */
};

/**
 * vs_rwsem_init - initialize an unlocked rwsem
 * @sem: the rwsem
 *
 * Context: before @sem is shared.
 * Return: 0, or -EINVAL when @sem is NULL.
 */
VS_EXTERN int vs_rwsem_init(struct vs_rwsem *sem);

/**
 * vs_rwsem_set_spin - let a writer retry @iterations times before it
 * queues
 * @sem: the rwsem
 * @iterations: retries; 0 (the default) queues at once
 *
 * Context: before the rwsem is shared.
 * Return: 0, or -EINVAL when @sem is NULL.
 */
VS_EXTERN int vs_rwsem_set_spin(struct vs_rwsem *sem, uint32_t iterations);

/**
 * vs_rwsem_set_handoff_timeout - how long the first waiter waits before
 * it asks for a handoff
 * @sem: the rwsem
 * @ns: the wait in nanoseconds (virtual ones on a vCPU); 0 asks at the
 *      first look at a held lock
 *
 * The default is VS_RWSEM_WAIT_TIMEOUT_NS.  A test hook: an exploration
 * runs far less than 4 ms of virtual time, so a short timeout lets it
 * reach the handoff and what comes after (test/sync/test_explore.c,
 * handoff).
 *
 * Context: before the rwsem is shared.
 * Return: 0, or -EINVAL when @sem is NULL.
 */
VS_EXTERN int vs_rwsem_set_handoff_timeout(struct vs_rwsem *sem,
					   uint32_t ns);
/**
 * vs_rwsem_destroy - check that @sem is unlocked with no waiter
 * @sem: the rwsem
 *
 * Nothing is allocated, so there is nothing to free: a successful call
 * only says that no holder or waiter is left.
 *
 * Context: every user has returned from its last unlock.
 * Return: 0; -EINVAL when @sem is NULL; -EBUSY while it is held or
 * waited for.
 */
VS_EXTERN int vs_rwsem_destroy(struct vs_rwsem *sem);

/*
 * Lock and unlock.  down_* may sleep; up_* and trylocks never do.
 * Return of trylocks: 1 when taken, 0 otherwise.  A caller of up_read,
 * up_write or downgrade_write holds the lock in that mode.
 */

/**
 * vs_down_read - take @sem for reading (down_read)
 * @sem: the rwsem
 *
 * Takes the fast path only when nobody waits; otherwise queues behind
 * the waiters and sleeps.
 *
 * Context: may sleep.  The caller does not hold @sem (not recursive).
 */
VS_EXTERN void vs_down_read(struct vs_rwsem *sem);

/**
 * vs_down_read_trylock - take @sem for reading if no writer holds or
 * waits for it
 * @sem: the rwsem
 *
 * Context: any; never sleeps.
 * Return: 1 when taken, 0 otherwise.
 */
VS_EXTERN int vs_down_read_trylock(struct vs_rwsem *sem);

/**
 * vs_up_read - release a read lock of @sem, waking a writer if it was
 * the last reader
 * @sem: the rwsem
 *
 * Context: the caller holds @sem for reading.  Never sleeps.
 */
VS_EXTERN void vs_up_read(struct vs_rwsem *sem);

/**
 * vs_down_write - take @sem for writing (down_write)
 * @sem: the rwsem
 *
 * May steal a free lock from queued waiters, unless a handoff is
 * pending; spins up to the vs_rwsem_set_spin() bound, then queues.
 *
 * Context: may sleep.  The caller does not hold @sem.
 */
VS_EXTERN void vs_down_write(struct vs_rwsem *sem);

/**
 * vs_down_write_trylock - take @sem for writing if it is free
 * @sem: the rwsem
 *
 * Context: any; never sleeps.
 * Return: 1 when taken, 0 otherwise.
 */
VS_EXTERN int vs_down_write_trylock(struct vs_rwsem *sem);

/**
 * vs_up_write - release the write lock of @sem, waking the waiters at
 * the front of the queue
 * @sem: the rwsem
 *
 * Context: the caller holds @sem for writing.  Never sleeps.
 */
VS_EXTERN void vs_up_write(struct vs_rwsem *sem);

/**
 * vs_downgrade_write - turn the caller's write lock into a read lock,
 * waking queued readers at the front
 * @sem: the rwsem
 *
 * Context: the caller holds @sem for writing; it then releases it with
 * vs_up_read().  Never sleeps.
 */
VS_EXTERN void vs_downgrade_write(struct vs_rwsem *sem);

/**
 * vs_rwsem_is_locked - is @sem held, in either mode?
 * @sem: the rwsem
 *
 * Context: any; for assertions, the answer may be stale at once.
 * Return: nonzero when held.
 */
static inline int vs_rwsem_is_locked(struct vs_rwsem *sem)
{
	return (vs_read_once(&sem->count) & VS_RWSEM_LOCK_MASK) != 0;
}

/**
 * vs_rwsem_is_write_locked - is @sem held for writing?
 * @sem: the rwsem
 *
 * Context: any; for assertions, the answer may be stale at once.
 * Return: nonzero when a writer holds it.
 */
static inline int vs_rwsem_is_write_locked(struct vs_rwsem *sem)
{
	return (vs_read_once(&sem->count) & VS_RWSEM_WRITER_LOCKED) != 0;
}

#endif /* VMSIM_RWSEM_H */
