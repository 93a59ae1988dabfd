/* SPDX-License-Identifier: MIT */
/*
 * sync/rwsem.h - reader-writer semaphore with Linux semantics
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
#ifndef VS_SYNC_RWSEM_H
#define VS_SYNC_RWSEM_H

#include "atomic.h"
#include "common.h"
#include "spinlock.h"

#define VS_RWSEM_WRITER_LOCKED (1L << 0)
#define VS_RWSEM_FLAG_WAITERS (1L << 1)
#define VS_RWSEM_FLAG_HANDOFF (1L << 2)
#define VS_RWSEM_READER_SHIFT 8
#define VS_RWSEM_READER_BIAS (1L << VS_RWSEM_READER_SHIFT)
#define VS_RWSEM_READER_MASK (~(VS_RWSEM_READER_BIAS - 1))
#define VS_RWSEM_LOCK_MASK (VS_RWSEM_WRITER_LOCKED | VS_RWSEM_READER_MASK)
#define VS_RWSEM_READ_FAILED_MASK \
	(VS_RWSEM_WRITER_LOCKED | VS_RWSEM_FLAG_WAITERS | VS_RWSEM_FLAG_HANDOFF)

/* How long the first waiter waits before it asks for a handoff (4 ms,
 * the kernel's RWSEM_WAIT_TIMEOUT at HZ=250). */
#define VS_RWSEM_WAIT_TIMEOUT_NS 4000000
#define VS_RWSEM_MAX_READERS_WAKEUP 256

struct vs__rwsem_waiter;

struct vs_rwsem {
	vs_atomic_long_t count;          /* see above */
	vs_spinlock_t wait_lock;         /* protects the list */
	struct vs__rwsem_waiter *first;  /* FIFO, under wait_lock */
	struct vs__rwsem_waiter *last;
	uint32_t spin;                   /* writer spin bound, read-only */
};

/**
 * vs_rwsem_init - initialize an unlocked rwsem
 * Return: 0, or -EINVAL when @sem is NULL.
 */
VS_EXTERN int vs_rwsem_init(struct vs_rwsem *sem);

/**
 * vs_rwsem_set_spin - let a writer retry @iterations times before it
 * queues
 * Context: before the rwsem is shared.  Return: 0, or -EINVAL.
 */
VS_EXTERN int vs_rwsem_set_spin(struct vs_rwsem *sem, uint32_t iterations);

/**
 * vs_rwsem_destroy - check that @sem is unlocked with no waiter
 * Return: 0, or -EBUSY.
 */
VS_EXTERN int vs_rwsem_destroy(struct vs_rwsem *sem);

/*
 * Lock and unlock.  down_* may sleep; up_* and trylocks never do.
 * Return of trylocks: 1 when taken, 0 otherwise.  A caller of up_read,
 * up_write or downgrade_write holds the lock in that mode.
 */
VS_EXTERN void vs_down_read(struct vs_rwsem *sem);
VS_EXTERN int vs_down_read_trylock(struct vs_rwsem *sem);
VS_EXTERN void vs_up_read(struct vs_rwsem *sem);
VS_EXTERN void vs_down_write(struct vs_rwsem *sem);
VS_EXTERN int vs_down_write_trylock(struct vs_rwsem *sem);
VS_EXTERN void vs_up_write(struct vs_rwsem *sem);
/* vs_downgrade_write - turn the caller's write lock into a read lock,
 * waking queued readers at the front; never sleeps. */
VS_EXTERN void vs_downgrade_write(struct vs_rwsem *sem);

static inline int vs_rwsem_is_locked(struct vs_rwsem *sem)
{
	return (vs_read_once(&sem->count) & VS_RWSEM_LOCK_MASK) != 0;
}

static inline int vs_rwsem_is_write_locked(struct vs_rwsem *sem)
{
	return (vs_read_once(&sem->count) & VS_RWSEM_WRITER_LOCKED) != 0;
}

#endif /* VS_SYNC_RWSEM_H */
