/* SPDX-License-Identifier: MIT */
/*
 * Reader-writer semaphore, after kernel/locking/rwsem.c.  See rwsem.h for
 * the rules; here each function says which lock it enters with.
 */
#include <vmsim/rwsem.h>

#include <stddef.h>

#include <vmsim/wait.h>

#include "internal.h"

#define WRITER_LOCKED VS_RWSEM_WRITER_LOCKED
#define WAITERS VS_RWSEM_FLAG_WAITERS
#define HANDOFF VS_RWSEM_FLAG_HANDOFF
#define BIAS VS_RWSEM_READER_BIAS
#define READER_MASK VS_RWSEM_READER_MASK
#define LOCK_MASK VS_RWSEM_LOCK_MASK

enum waiter_type { WAIT_READ, WAIT_WRITE };

enum wake_type {
	WAKE_ANY,        /* wake the front waiter, writer or readers */
	WAKE_READERS,    /* wake readers at the front, if any */
	WAKE_READ_OWNED, /* the waker holds a read lock: just wake readers */
};

struct vs__rwsem_waiter {
	struct vs__rwsem_waiter *next, *prev;
	enum waiter_type type;
	uint64_t timeout;   /* when the waiter may ask for a handoff */
	vs_atomic32_t wake; /* 1: reader granted, or writer told to retry */
};

/* Words to futex-wake once wait_lock is dropped (the kernel's wake_q). */
struct wake_q {
	int n;
	vs_atomic32_t *word[VS_RWSEM_MAX_READERS_WAKEUP + 1];
};

static void wake_up_q(struct wake_q *q)
{
	int i;

	/* A word may belong to a waiter that has already returned; a stale
	 * futex wake is harmless (see vs_futex_wake()). */
	for (i = 0; i < q->n; i++)
		vs_futex_wake(q->word[i], 1);
	q->n = 0;
}

/* Caller holds wait_lock. */
static void waiter_add(struct vs_rwsem *sem, struct vs__rwsem_waiter *w)
{
	w->next = NULL;
	w->prev = sem->last;
	if (sem->last)
		sem->last->next = w;
	else
		sem->first = w;
	sem->last = w;
}

/* Caller holds wait_lock. */
static void waiter_del(struct vs_rwsem *sem, struct vs__rwsem_waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		sem->first = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		sem->last = w->prev;
}

int vs_rwsem_init(struct vs_rwsem *sem)
{
	if (!sem)
		return -EINVAL;
	vs_atomic_init(&sem->count, 0);
	vs_spin_lock_init(&sem->wait_lock);
	sem->first = sem->last = NULL;
	sem->spin = 0;
	sem->handoff_ns = VS_RWSEM_WAIT_TIMEOUT_NS;
	VS__LD(sem->dep_map = (struct vs_lockdep_map){ 0 });
	return 0;
}

int vs_rwsem_set_spin(struct vs_rwsem *sem, uint32_t iterations)
{
	if (!sem)
		return -EINVAL;
	sem->spin = iterations;
	return 0;
}

int vs_rwsem_set_handoff_timeout(struct vs_rwsem *sem, uint32_t ns)
{
	if (!sem)
		return -EINVAL;
	sem->handoff_ns = ns;
	return 0;
}

int vs_rwsem_destroy(struct vs_rwsem *sem)
{
	if (!sem)
		return -EINVAL;
	if (vs_read_once(&sem->count) != 0 || sem->first)
		return -EBUSY;
	return 0;
}

/*
 * mark_wake - hand the lock to the front of the queue
 *
 * A writer at the front is only told to retry (it stays queued and takes
 * the lock itself in try_write_lock()).  Readers at the front are granted
 * the lock here: every queued reader, up to the bound, is removed from
 * the list and counted in, so they wake up as one batch already holding
 * it.
 *
 * Caller holds wait_lock, and the list is not empty.
 */
static void mark_wake(struct vs_rwsem *sem, enum wake_type type,
		      struct wake_q *q)
{
	struct vs__rwsem_waiter *w = sem->first, *next;
	struct vs__rwsem_waiter *granted[VS_RWSEM_MAX_READERS_WAKEUP];
	long adjustment = 0, oldcount;
	int woken = 0, i;

	if (w->type == WAIT_WRITE) {
		if (type == WAKE_ANY) {
			/* Pairs with the acquire in down_write_slowpath(). */
			vs_store_release(&w->wake, 1);
			q->word[q->n++] = &w->wake;
		}
		return;
	}

	if (type != WAKE_READ_OWNED) {
		/*
		 * Claim a read lock for the first reader before granting, so
		 * that a writer cannot slip in between.  If one already
		 * holds the lock, back out; a reader that has waited too long
		 * sets HANDOFF on the way out so the lock comes to it next.
		 */
		adjustment = BIAS;
		oldcount = vs_fetch_add(&sem->count, adjustment);
		if (oldcount & WRITER_LOCKED) {
			if (vs__now_ns() > w->timeout && !(oldcount & HANDOFF))
				adjustment -= HANDOFF;
			vs_fetch_add(&sem->count, -adjustment);
			return;
		}
	}

	for (w = sem->first; w && woken < VS_RWSEM_MAX_READERS_WAKEUP;
	     w = next) {
		next = w->next;
		if (w->type == WAIT_WRITE)
			continue;
		waiter_del(sem, w);
		granted[woken++] = w;
		if (VS_BROKEN(rwsem_wake_one_reader))
			break;
	}

	adjustment = woken * BIAS - adjustment;
	if (!sem->first)
		adjustment -= WAITERS;
	/* A pending handoff was for the front reader, which is served. */
	if (vs_read_once(&sem->count) & HANDOFF)
		adjustment -= HANDOFF;
	if (adjustment)
		vs_fetch_add(&sem->count, adjustment);

	for (i = 0; i < woken; i++) {
		/* The count holds their read locks now.  After this store the
		 * waiter may return: touch nothing of it but the address.
		 * Pairs with the acquire in down_read_slowpath(). */
		vs_store_release(&granted[i]->wake, 1);
		q->word[q->n++] = &granted[i]->wake;
	}
}

/* Caller holds wait_lock; @count was read after the caller's update. */
static void cond_wake_waiter(struct vs_rwsem *sem, long count,
			     struct wake_q *q)
{
	if (count & WRITER_LOCKED)
		return; /* the writer's up_write() wakes the queue */
	mark_wake(sem, (count & READER_MASK) ? WAKE_READERS : WAKE_ANY, q);
}

/* Wake the queue after an unlock that left WAITERS set.  Enters with no
 * lock held. */
static void rwsem_wake(struct vs_rwsem *sem)
{
	struct wake_q q = { 0 };

	vs_spin_lock(&sem->wait_lock);
	if (sem->first)
		mark_wake(sem, WAKE_ANY, &q);
	vs_spin_unlock(&sem->wait_lock);
	wake_up_q(&q);
}

/*
 * down_read_slowpath - queue a reader whose fast path failed
 *
 * Enters with the caller's READER_BIAS still added to the count, and no
 * lock held.  Returns holding the read lock.
 */
static void down_read_slowpath(struct vs_rwsem *sem)
{
	struct vs__rwsem_waiter w = { .type = WAIT_READ };
	struct wake_q q = { 0 };
	long adjustment = -BIAS, count;

	w.timeout = vs__now_ns() + sem->handoff_ns;
	vs_atomic_init(&w.wake, 0);

	vs_spin_lock(&sem->wait_lock);
	if (!sem->first) {
		/*
		 * Nobody is queued: unless a writer holds the lock or a
		 * handoff is pending, the bias already in the count makes us
		 * a reader.  Acquire pairs with the writer's release in
		 * vs_up_write().
		 */
		if (!(vs_load_acquire(&sem->count) &
		      (WRITER_LOCKED | HANDOFF))) {
			vs_spin_unlock(&sem->wait_lock);
			return;
		}
		adjustment += WAITERS;
	}
	waiter_add(sem, &w);
	count = vs_fetch_add(&sem->count, adjustment) + adjustment;
	/* If the lock is free now, or held by readers we can join, nobody
	 * else will wake the queue: do it (this may grant ourselves). */
	cond_wake_waiter(sem, count, &q);
	vs_spin_unlock(&sem->wait_lock);
	wake_up_q(&q);

	while (!vs_load_acquire(&w.wake))
		vs_futex_wait(&w.wake, 0, -1);
}

void vs_down_read(struct vs_rwsem *sem)
{
	long count;
	long fail = VS_BROKEN(rwsem_reader_barges) ? WRITER_LOCKED
						   : VS_RWSEM_READ_FAILED_MASK;

	VS__LD(vs__lockdep_acquire(&sem->dep_map, sem, 0,
				   VS__LD_READ | VS__LD_SLEEP, VS__LD_IP));
	count = vs_fetch_add_acquire(&sem->count, BIAS);
	if (vs_unlikely(count & fail))
		down_read_slowpath(sem);
}

int vs_down_read_trylock(struct vs_rwsem *sem)
{
	long count = vs_read_once(&sem->count);

	while (!(count & VS_RWSEM_READ_FAILED_MASK)) {
		if (vs_cmpxchg_acquire(&sem->count, &count, count + BIAS)) {
			VS__LD(vs__lockdep_acquire(&sem->dep_map, sem, 0,
						   VS__LD_READ | VS__LD_TRY,
						   VS__LD_IP));
			return 1;
		}
	}
	return 0;
}

void vs_up_read(struct vs_rwsem *sem)
{
	long count;

	VS__LD(vs__lockdep_release(&sem->dep_map, sem));
	if (VS_BROKEN(rwsem_up_read_looks_first)) {
		count = vs_read_once(&sem->count) - BIAS;
		(void)vs_fetch_sub_release(&sem->count, BIAS);
	} else {
		count = vs_fetch_sub_release(&sem->count, BIAS) - BIAS;
	}

	/* The last reader out wakes the queue. */
	if (vs_unlikely((count & (LOCK_MASK | WAITERS)) == WAITERS))
		rwsem_wake(sem);
}

/*
 * try_write_lock - take the lock for a queued writer
 *
 * The first waiter may also ask for a handoff once it has waited long
 * enough: HANDOFF stops readers' fast paths and other writers' steals, so
 * the lock comes to it at the next release.
 *
 * Caller holds wait_lock and @w is queued.  Return: true with the write
 * lock taken and @w dequeued; false otherwise.
 */
static bool try_write_lock(struct vs_rwsem *sem, struct vs__rwsem_waiter *w)
{
	bool first = sem->first == w;
	long count = vs_read_once(&sem->count), new;

	do {
		bool has_handoff = count & HANDOFF;

		if (has_handoff && !first &&
		    !VS_BROKEN(rwsem_handoff_ignored))
			return false;
		new = count;
		if (count & (VS_BROKEN(rwsem_writer_ignores_readers) ?
			     WRITER_LOCKED : LOCK_MASK)) {
			if (has_handoff || !first ||
			    vs__now_ns() < w->timeout ||
			    VS_BROKEN(rwsem_no_handoff))
				return false;
			new |= HANDOFF;
		} else {
			new |= WRITER_LOCKED;
			new &= ~HANDOFF;
			if (first && !w->next)
				new &= ~WAITERS;
		}
	} while (!vs_cmpxchg_acquire(&sem->count, &count, new));

	if (new & HANDOFF)
		return false;
	waiter_del(sem, w);
	return true;
}

/* Steal a free lock without queueing, unless a handoff is pending. */
static bool try_write_lock_unqueued(struct vs_rwsem *sem)
{
	long count = vs_read_once(&sem->count);

	while (!(count & (LOCK_MASK | HANDOFF))) {
		if (vs_cmpxchg_acquire(&sem->count, &count,
				       count | WRITER_LOCKED))
			return true;
	}
	return false;
}

/*
 * down_write_slowpath - spin a bounded while, then queue and sleep
 *
 * Enters with no lock held; returns holding the write lock.
 */
static void down_write_slowpath(struct vs_rwsem *sem)
{
	struct vs__rwsem_waiter w = { .type = WAIT_WRITE };
	struct wake_q q = { 0 };
	uint32_t i;

	for (i = 0; i < sem->spin; i++) {
		if (try_write_lock_unqueued(sem))
			return;
		vs_cpu_relax();
	}

	w.timeout = vs__now_ns() + sem->handoff_ns;
	vs_atomic_init(&w.wake, 0);

	vs_spin_lock(&sem->wait_lock);
	waiter_add(sem, &w);
	if (sem->first != &w) {
		/* Readers at the front may be able to join a reader-owned
		 * lock; wake them rather than leave them behind us. */
		cond_wake_waiter(sem, vs_read_once(&sem->count), &q);
		if (q.n) {
			vs_spin_unlock(&sem->wait_lock);
			wake_up_q(&q);
			vs_spin_lock(&sem->wait_lock);
		}
	} else {
		vs_fetch_or(&sem->count, WAITERS);
	}

	while (!try_write_lock(sem, &w)) {
		vs_spin_unlock(&sem->wait_lock);
		/* Pairs with the release in mark_wake(). */
		while (!vs_load_acquire(&w.wake))
			vs_futex_wait(&w.wake, 0, -1);
		vs_spin_lock(&sem->wait_lock);
		vs_write_once(&w.wake, 0);
	}
	vs_spin_unlock(&sem->wait_lock);
}

void vs_down_write(struct vs_rwsem *sem)
{
	long count = 0;

	VS__LD(vs__lockdep_acquire(&sem->dep_map, sem, 0, VS__LD_SLEEP,
				   VS__LD_IP));
	if (vs_unlikely(!vs_cmpxchg_acquire(&sem->count, &count,
					    WRITER_LOCKED)))
		down_write_slowpath(sem);
}

int vs_down_write_trylock(struct vs_rwsem *sem)
{
	long count = 0;

	if (!vs_cmpxchg_acquire(&sem->count, &count, WRITER_LOCKED))
		return 0;
	VS__LD(vs__lockdep_acquire(&sem->dep_map, sem, 0, VS__LD_TRY,
				   VS__LD_IP));
	return 1;
}

void vs_up_write(struct vs_rwsem *sem)
{
	long count;

	VS__LD(vs__lockdep_release(&sem->dep_map, sem));
	count = vs_fetch_add_release(&sem->count, -WRITER_LOCKED);

	if (vs_unlikely(count & WAITERS))
		rwsem_wake(sem);
}

void vs_downgrade_write(struct vs_rwsem *sem)
{
	struct wake_q q = { 0 };
	long count;

	VS__LD(vs__lockdep_downgrade(&sem->dep_map, sem));
	count = vs_fetch_add_release(&sem->count, BIAS - WRITER_LOCKED);
	if (!(count & WAITERS))
		return;
	vs_spin_lock(&sem->wait_lock);
	if (sem->first)
		mark_wake(sem, WAKE_READ_OWNED, &q);
	vs_spin_unlock(&sem->wait_lock);
	wake_up_q(&q);
}
