/* SPDX-License-Identifier: MIT */
/*
 * vmsim/thread.h - thread attachment and per-thread slots.
 *
 * A thread that uses RCU or a per-slot lock kind (percpu, brlock,
 * prwlock) is attached: registered with liburcu and given a slot, an
 * index that stands in for the kernel's "this CPU".  The first
 * VS_NR_SLOTS attached threads each own a slot alone, and a slot
 * counter written only by its owner needs no read-modify-write.  Threads
 * beyond that share slot VS_SLOT_SHARED and update it with atomics.
 *
 * Attachment is automatic on first use; vs_thread_attach() just does it
 * early.  A thread must not detach while it holds a
 * lock or is inside an RCU read-side critical section.
 */
#ifndef VMSIM_THREAD_H
#define VMSIM_THREAD_H

#include <stddef.h>

#include "atomic.h"
#include "common.h"

#if VS_VCPU
#define VS_NR_SLOTS VS_VCPU_MAX	/* vCPU build: context i owns slot i */
#else
#define VS_NR_SLOTS 64	/* slots that a thread owns alone */
#endif
/** VS_SLOT_SHARED - the slot of every thread beyond VS_NR_SLOTS */
#define VS_SLOT_SHARED VS_NR_SLOTS
/** VS_SLOT_ARRAY - entries of an array indexed by slot */
#define VS_SLOT_ARRAY (VS_NR_SLOTS + 1)

/**
 * vs_thread_attach - register the calling thread with RCU, take a slot
 *
 * Idempotent.  The thread detaches at exit by itself.  A thread that
 * uses RCU or a per-slot lock without calling this is attached on first
 * use.
 *
 * Context: not inside an RCU read-side critical section; not a signal
 * handler (registering with liburcu is not async-signal-safe).
 * Return: 0.
 */
VS_EXTERN int vs_thread_attach(void);

/**
 * vs_thread_detach - unregister the calling thread, give its slot back
 *
 * Context: holds no lock, outside any RCU read-side critical section.
 */
VS_EXTERN void vs_thread_detach(void);

/* Private: the slot and attach state of the calling thread. */
extern VS_EXTERN __thread int vs__tls_slot VS_TLS_IE;
VS_EXTERN int vs__thread_attach_slow(void);

/**
 * vs__thread_slot - the calling thread's slot, attaching it if needed
 *
 * Context: as vs_thread_attach() the first time; any afterwards.
 * Return: 0..VS_NR_SLOTS-1 for an owned slot, VS_SLOT_SHARED otherwise.
 */
static inline unsigned int vs__thread_slot(void)
{
	int slot = vs__tls_slot;

	/* vCPU build: a context's slot is its number (vs_vcpu_self()),
	 * below vs_machine_config.own_slots; the others share, as host
	 * threads do. */
	if (VS_VCPU)
		return vs__vcpu_cur >= 0 && vs__vcpu_cur < vs__vcpu_own_slots ?
		       (unsigned int)vs__vcpu_cur : VS_SLOT_SHARED;

	if (vs_unlikely(slot < 0))
		slot = vs__thread_attach_slow();
	return (unsigned int)slot;
}

/*
 * vs__slot_add - add @delta to a per-slot counter
 *
 * The owner of a slot is its only writer, so a load and a release store
 * suffice; the release orders the caller's earlier accesses (a read-side
 * critical section) before the new count, and pairs with the acquire
 * loads of whoever sums the counters.  The shared slot uses an atomic add.
 */
static inline void vs__slot_add(vs_atomic_long_t *count, unsigned int slot,
				long delta)
{
	if (vs_likely(slot != VS_SLOT_SHARED))
		vs_store_release(count, vs_read_once(count) + delta);
	else
		vs_fetch_add(count, delta);
}

/*
 * vs__slot_sum - the sum of one counter over every slot
 * @first: the counter in slot 0
 * @stride: bytes from one slot's counter to the next's
 *
 * Exact when no writer is in flight, a snapshot otherwise.
 * Context: any.  Acquire: pairs with the release in vs__slot_add().
 */
static inline long vs__slot_sum(const vs_atomic_long_t *first,
				size_t stride)
{
	const char *p = (const char *)first;
	long sum = 0;
	int s;

	for (s = 0; s < VS_SLOT_ARRAY; s++, p += stride)
		sum += vs_load_acquire((const vs_atomic_long_t *)p);
	return sum;
}

/*
 * vs__slot_lock - the lock of a per-slot structure (a page or object
 * cache, an RCU batch; vs__slot_lock_t)
 *
 * An owned slot's structure has one user nearly always: its owner.
 * Others lock it only for the shared slot (VS_SLOT_SHARED), a slot
 * passing to a new thread, and a drain of every slot.  So the lock is
 * a compare-and-swap and a release store, one locked instruction where
 * vs_spin_lock() and vs_spin_unlock() take two (its unlock must swap to
 * learn of sleepers), like the kernel's local_lock on these paths.  A
 * contender spins, yielding the CPU now and then in case the holder was
 * preempted.  Hold it for a few instructions only.
 */
typedef vs_atomic32_t vs__slot_lock_t;

VS_EXTERN void vs__slot_lock_slow(vs__slot_lock_t *lock);

static inline void vs__slot_lock(vs__slot_lock_t *lock)
{
	uint32_t old = 0;

	/* Acquire: pairs with the release in vs__slot_unlock(). */
	if (vs_unlikely(!vs_cmpxchg_acquire(lock, &old, 1)))
		vs__slot_lock_slow(lock);
}

static inline void vs__slot_unlock(vs__slot_lock_t *lock)
{
	/* Pairs with the acquire in vs__slot_lock(). */
	vs_store_release(lock, 0);
}

#endif /* VMSIM_THREAD_H */
