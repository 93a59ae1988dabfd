/* SPDX-License-Identifier: MIT */
/*
 * sync/atomic.h - the one seam for shared memory.
 *
 * Every access to memory that another thread may touch at the same time
 * goes through these macros.  No other file in sync/, vm/ or fault/
 * includes <stdatomic.h>.  A later deterministic mode (virtual CPUs,
 * schedule exploration) replaces this header and sync/wait.h and nothing
 * else.
 *
 * Names follow the kernel (READ_ONCE, smp_load_acquire, cmpxchg, smp_mb).
 * Ordering follows the kernel too: value-returning read-modify-write
 * operations without a suffix are fully ordered; _relaxed, _acquire and
 * _release variants say what they order.
 */
#ifndef VS_SYNC_ATOMIC_H
#define VS_SYNC_ATOMIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define VS_ATOMIC(type) _Atomic(type)

typedef VS_ATOMIC(uint32_t) vs_atomic32_t;
typedef VS_ATOMIC(uint64_t) vs_atomic64_t;
typedef VS_ATOMIC(long) vs_atomic_long_t;

#define VS_CACHELINE 64
#define VS_CACHELINE_ALIGNED _Alignas(VS_CACHELINE)

#define vs_likely(x) __builtin_expect(!!(x), 1)
#define vs_unlikely(x) __builtin_expect(!!(x), 0)

/* Plain atomic access: no ordering, no tearing, no compiler fusion. */
#define vs_atomic_init(p, v) atomic_init((p), (v))
#define vs_read_once(p) atomic_load_explicit((p), memory_order_relaxed)
#define vs_write_once(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)

/* One-way barriers attached to an access. */
#define vs_load_acquire(p) atomic_load_explicit((p), memory_order_acquire)
#define vs_store_release(p, v) \
	atomic_store_explicit((p), (v), memory_order_release)

/*
 * vs_cmpxchg - if *p == *oldp, store new and return true; otherwise load
 * the current value into *oldp and return false.  Fully ordered on
 * success (like the kernel's try_cmpxchg); acquire on failure.
 */
#define vs_cmpxchg(p, oldp, new)                                       \
	atomic_compare_exchange_strong_explicit((p), (oldp), (new),    \
		memory_order_seq_cst, memory_order_seq_cst)
#define vs_cmpxchg_acquire(p, oldp, new)                               \
	atomic_compare_exchange_strong_explicit((p), (oldp), (new),    \
		memory_order_acquire, memory_order_acquire)
#define vs_cmpxchg_release(p, oldp, new)                               \
	atomic_compare_exchange_strong_explicit((p), (oldp), (new),    \
		memory_order_release, memory_order_relaxed)
#define vs_cmpxchg_relaxed(p, oldp, new)                               \
	atomic_compare_exchange_strong_explicit((p), (oldp), (new),    \
		memory_order_relaxed, memory_order_relaxed)

/* Read-modify-write; each returns the old value. */
#define vs_xchg(p, v) atomic_exchange_explicit((p), (v), memory_order_seq_cst)
#define vs_xchg_acquire(p, v) \
	atomic_exchange_explicit((p), (v), memory_order_acquire)
#define vs_xchg_release(p, v) \
	atomic_exchange_explicit((p), (v), memory_order_release)
#define vs_fetch_add(p, v) \
	atomic_fetch_add_explicit((p), (v), memory_order_seq_cst)
#define vs_fetch_add_relaxed(p, v) \
	atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define vs_fetch_add_acquire(p, v) \
	atomic_fetch_add_explicit((p), (v), memory_order_acquire)
#define vs_fetch_add_release(p, v) \
	atomic_fetch_add_explicit((p), (v), memory_order_release)
#define vs_fetch_sub(p, v) \
	atomic_fetch_sub_explicit((p), (v), memory_order_seq_cst)
#define vs_fetch_sub_release(p, v) \
	atomic_fetch_sub_explicit((p), (v), memory_order_release)
#define vs_fetch_or(p, v) \
	atomic_fetch_or_explicit((p), (v), memory_order_seq_cst)
#define vs_fetch_and(p, v) \
	atomic_fetch_and_explicit((p), (v), memory_order_seq_cst)

/* Fences.  vs_barrier() orders the compiler only. */
#define vs_barrier() atomic_signal_fence(memory_order_seq_cst)
#define vs_smp_mb() atomic_thread_fence(memory_order_seq_cst)
#define vs_smp_rmb() atomic_thread_fence(memory_order_acquire)
#define vs_smp_wmb() atomic_thread_fence(memory_order_release)

static inline void vs_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	vs_barrier();
#endif
}

/*
 * Asymmetric barriers: vs_smp_mb_light() on the frequent side (readers),
 * vs_smp_mb_heavy() on the rare side (writers).  A light barrier is only
 * ordered against heavy barriers, never against another light barrier:
 *
 *               light  heavy
 *        light    X      O
 *        heavy    O      O
 *
 * When membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is available the
 * light side is a compiler barrier and the heavy side makes every running
 * thread of the process execute a full barrier; otherwise both sides are
 * vs_smp_mb().  vs_membarrier_init() decides once, before any thread uses
 * them (vs_thread_attach() calls it); it returns 1 with membarrier, 0
 * without.
 */
extern int vs__have_membarrier;

int vs_membarrier_init(void);
void vs__smp_mb_heavy_slow(void);

static inline void vs_smp_mb_light(void)
{
	if (vs_likely(vs__have_membarrier))
		vs_barrier();
	else
		vs_smp_mb();
}

static inline void vs_smp_mb_heavy(void)
{
	if (vs_likely(vs__have_membarrier))
		vs__smp_mb_heavy_slow();
	else
		vs_smp_mb();
}

#endif /* VS_SYNC_ATOMIC_H */
