/* SPDX-License-Identifier: MIT */
/*
 * vmsim/atomic.h - the one seam for shared memory.
 *
 * Every access to memory that another thread may touch at the same time
 * goes through these macros.  No other file in sync/, vm/ or fault/
 * includes <stdatomic.h>.  In the vCPU build each of them is also an
 * event of the virtual-CPU engine (see "The vCPU seam" below and
 * vmsim/vcpu.h); vmsim/wait.h is the other seam.
 *
 * Names follow the kernel (READ_ONCE, smp_load_acquire, cmpxchg, smp_mb).
 * Ordering follows the kernel too: value-returning read-modify-write
 * operations without a suffix are fully ordered; _relaxed, _acquire and
 * _release variants say what they order.
 */
#ifndef VMSIM_ATOMIC_H
#define VMSIM_ATOMIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "vcpu_annotate.h"

/*
 * The vCPU seam.  In the vCPU build (VS_VCPU=1, libvmsim-vcpu) every
 * operation below is first an event of the engine
 * (vmsim/vcpu_annotate.h) when the caller runs on a vCPU.  In the native
 * build VS__EV() is nothing at all.
 */
#if VS_VCPU
#define VS__EV(p, op) VS__EVC((p), (op))
#define VS__EVC(p, code) \
	(__builtin_expect(vs__vcpu_cur >= 0, 0) ? \
	 vs__vcpu_event((const volatile void *)(p), (code)) : (void)0)
#define VS__DONE(stored) \
	(__builtin_expect(vs__vcpu_post, 0) ? vs__vcpu_done(stored) : (void)0)
#define VS__SEAM(mo, op, expr) \
	(VS__EVC((void *)0, VS__CODE((op), (mo), 0)), (expr))
/*
 * VS__OP_P(p, op, mo, fn, ...) - fn(p, ...), an event of kind @op and
 * order @mo on @p first; VS__OP_PV() with a value @v, VS__OP_PON() with
 * the expected value's pointer @o and the new value @n; VS__OP_ST() a
 * store, which returns nothing.  The operands are evaluated before the
 * event, once each: an operand that is itself a seam operation
 * (vs_write_once(&x, vs_read_once(&y) + 1)) then takes its event before
 * this one, and a choice point lies between the two, as between the two
 * instructions on a CPU.  After the access, VS__DONE() lets a memory
 * model (vcpu/memory_model.c) see its result.
 */
#define VS__OP_P(p, op, mo, fn, ...) \
	VS__OP_P_(__COUNTER__, p, op, mo, fn, __VA_ARGS__)
#define VS__OP_PV(p, v, op, mo, fn, ...) \
	VS__OP_PV_(__COUNTER__, p, v, op, mo, fn, __VA_ARGS__)
#define VS__OP_PON(p, o, n, op, mo, fn, ...) \
	VS__OP_PON_(__COUNTER__, p, o, n, op, mo, fn, __VA_ARGS__)
#define VS__OP_ST(p, v, mo) VS__OP_ST_(__COUNTER__, p, v, mo)
/* Each expansion's names are its own (__COUNTER__): a nested operation
 * shadows nothing (-Wshadow). */
#define VS__OP_P_(k, ...) VS__OP_P__(k, __VA_ARGS__)
#define VS__OP_P__(k, p, op, mo, fn, ...) __extension__ ({ \
	__typeof__(p) vs__p##k = (p); \
	VS__EVC(vs__p##k, VS__CODE((op), (mo), sizeof(*vs__p##k))); \
	__typeof__((void)0, fn(vs__p##k, __VA_ARGS__)) vs__r##k = \
		fn(vs__p##k, __VA_ARGS__); \
	VS__DONE(0); \
	vs__r##k; })
#define VS__OP_PV_(k, ...) VS__OP_PV__(k, __VA_ARGS__)
#define VS__OP_PV__(k, p, v, op, mo, fn, ...) __extension__ ({ \
	__typeof__(p) vs__p##k = (p); \
	__typeof__(v) vs__v##k = (v); \
	VS__EVC(vs__p##k, VS__CODE((op), (mo), sizeof(*vs__p##k))); \
	__typeof__((void)0, fn(vs__p##k, vs__v##k, __VA_ARGS__)) vs__r##k = \
		fn(vs__p##k, vs__v##k, __VA_ARGS__); \
	VS__DONE(1); \
	vs__r##k; })
#define VS__OP_PON_(k, ...) VS__OP_PON__(k, __VA_ARGS__)
#define VS__OP_PON__(k, p, o, n, op, mo, fn, ...) __extension__ ({ \
	__typeof__(p) vs__p##k = (p); \
	__typeof__(o) vs__o##k = (o); \
	__typeof__(n) vs__n##k = (n); \
	VS__EVC(vs__p##k, VS__CODE((op), (mo), sizeof(*vs__p##k))); \
	_Bool vs__r##k = fn(vs__p##k, vs__o##k, vs__n##k, __VA_ARGS__); \
	VS__DONE(vs__r##k); \
	vs__r##k; })
#define VS__OP_ST_(k, ...) VS__OP_ST__(k, __VA_ARGS__)
#define VS__OP_ST__(k, p, v, mo) __extension__ ({ \
	__typeof__(p) vs__p##k = (p); \
	__typeof__(v) vs__v##k = (v); \
	VS__EVC(vs__p##k, VS__CODE(VS_VCPU_STORE, (mo), sizeof(*vs__p##k))); \
	atomic_store_explicit(vs__p##k, vs__v##k, (mo)); \
	VS__DONE(1); })
#else
#define VS__EV(p, op) ((void)0)
#define VS__SEAM(mo, op, expr) (expr)
#define VS__OP_P(p, op, mo, fn, ...) fn((p), __VA_ARGS__)
#define VS__OP_PV(p, v, op, mo, fn, ...) fn((p), (v), __VA_ARGS__)
#define VS__OP_PON(p, o, n, op, mo, fn, ...) fn((p), (o), (n), __VA_ARGS__)
#define VS__OP_ST(p, v, mo) atomic_store_explicit((p), (v), (mo))
#endif

/*
 * VS__TOUCH(p, op) - a plain access to *@p, one a lock protects (a free
 * list's link), that the vCPU model must charge as it charges a shared
 * access: an event of kind @op on a vCPU, nothing natively.  Put it just
 * before the access.
 */
#define VS__TOUCH(p, op) VS__EV((p), (op))

/**
 * VS_ATOMIC - the atomic version of @type, for a shared object
 * @type: a scalar or pointer type
 */
#define VS_ATOMIC(type) _Atomic(type)

typedef VS_ATOMIC(uint32_t) vs_atomic32_t;	/* an atomic uint32_t */
typedef VS_ATOMIC(uint64_t) vs_atomic64_t;	/* an atomic uint64_t */
typedef VS_ATOMIC(long) vs_atomic_long_t;	/* an atomic long */

#define VS_CACHELINE 64	/* bytes in a cache line (x86-64, arm64) */
/** VS_CACHELINE_ALIGNED - start a member or object on a cache line */
#define VS_CACHELINE_ALIGNED _Alignas(VS_CACHELINE)

/**
 * vs_likely - hint that @x is usually true (likely())
 * @x: a condition
 *
 * Return: !!@x.
 */
#define vs_likely(x) __builtin_expect(!!(x), 1)
/**
 * vs_unlikely - hint that @x is usually false (unlikely())
 * @x: a condition
 *
 * Return: !!@x.
 */
#define vs_unlikely(x) __builtin_expect(!!(x), 0)

/*
 * Plain atomic access: no ordering, no tearing, no compiler fusion.
 * In the macros below @p points to an atomic object (VS_ATOMIC(),
 * vs_atomic32_t ...) and @v is a value of its type; they may be used in
 * any context.
 */

/**
 * vs_atomic_init - set *@p before the object is shared (not atomic)
 * @p: the object
 * @v: its first value
 */
#define vs_atomic_init(p, v) atomic_init((p), (v))
/**
 * vs_read_once - load *@p whole, unordered (READ_ONCE)
 * @p: the object
 *
 * Return: the value.
 */
#define vs_read_once(p) \
	VS__OP_P((p), VS_VCPU_LOAD, memory_order_relaxed, \
		 atomic_load_explicit, memory_order_relaxed)
/**
 * vs_write_once - store @v into *@p whole, unordered (WRITE_ONCE)
 * @p: the object
 * @v: the value
 */
#define vs_write_once(p, v) \
	VS__OP_ST((p), (v), memory_order_relaxed)

/* One-way barriers attached to an access. */

/**
 * vs_load_acquire - load *@p; later accesses stay after it
 * @p: the object
 *
 * Pairs with a vs_store_release() (or a fully ordered operation) of the
 * value read: what the storer did before its store is visible after this.
 * Return: the value.
 */
#define vs_load_acquire(p) \
	VS__OP_P((p), VS_VCPU_LOAD, memory_order_acquire, \
		 atomic_load_explicit, memory_order_acquire)
/**
 * vs_store_release - store @v into *@p; earlier accesses stay before it
 * @p: the object
 * @v: the value
 */
#define vs_store_release(p, v) \
	VS__OP_ST((p), (v), memory_order_release)

/**
 * vs_cmpxchg - compare and exchange, fully ordered (try_cmpxchg)
 * @p: the object
 * @oldp: the value expected; receives the current value on failure
 * @new: the value to store
 *
 * If *@p == *@oldp, store @new; otherwise load the current value into
 * *@oldp.  Fully ordered on success (like the kernel's try_cmpxchg);
 * acquire on failure.
 *
 * Return: true when @new was stored, false otherwise.
 */
#define vs_cmpxchg(p, oldp, new) \
	VS__OP_PON((p), (oldp), (new), VS_VCPU_RMW, memory_order_seq_cst, \
		   atomic_compare_exchange_strong_explicit, \
		   memory_order_seq_cst, memory_order_seq_cst)
/**
 * vs_cmpxchg_acquire - vs_cmpxchg() with acquire ordering only
 * @p: the object
 * @oldp: the value expected; receives the current value on failure
 * @new: the value to store
 *
 * Return: true when @new was stored.
 */
#define vs_cmpxchg_acquire(p, oldp, new) \
	VS__OP_PON((p), (oldp), (new), VS_VCPU_RMW, memory_order_acquire, \
		   atomic_compare_exchange_strong_explicit, \
		   memory_order_acquire, memory_order_acquire)
/**
 * vs_cmpxchg_release - vs_cmpxchg() with release ordering on success
 * and none on failure
 * @p: the object
 * @oldp: the value expected; receives the current value on failure
 * @new: the value to store
 *
 * Return: true when @new was stored.
 */
#define vs_cmpxchg_release(p, oldp, new) \
	VS__OP_PON((p), (oldp), (new), VS_VCPU_RMW, memory_order_release, \
		   atomic_compare_exchange_strong_explicit, \
		   memory_order_release, memory_order_relaxed)
/**
 * vs_cmpxchg_relaxed - vs_cmpxchg() without ordering
 * @p: the object
 * @oldp: the value expected; receives the current value on failure
 * @new: the value to store
 *
 * Return: true when @new was stored.
 */
#define vs_cmpxchg_relaxed(p, oldp, new) \
	VS__OP_PON((p), (oldp), (new), VS_VCPU_RMW, memory_order_relaxed, \
		   atomic_compare_exchange_strong_explicit, \
		   memory_order_relaxed, memory_order_relaxed)

/* Read-modify-write; each returns the old value. */

/**
 * vs_xchg - store @v into *@p, fully ordered (xchg)
 * @p: the object
 * @v: the new value
 *
 * Return: the old value.
 */
#define vs_xchg(p, v) \
	VS__OP_PV((p), (v), VS_VCPU_RMW, memory_order_seq_cst, \
		  atomic_exchange_explicit, memory_order_seq_cst)
/**
 * vs_xchg_acquire - vs_xchg() with acquire ordering only
 * @p: the object
 * @v: the operand
 *
 * Return: the old value.
 */
#define vs_xchg_acquire(p, v) \
	VS__OP_PV((p), (v), VS_VCPU_RMW, memory_order_acquire, \
		  atomic_exchange_explicit, memory_order_acquire)
/**
 * vs_xchg_release - vs_xchg() with release ordering only
 * @p: the object
 * @v: the operand
 *
 * Return: the old value.
 */
#define vs_xchg_release(p, v) \
	VS__OP_PV((p), (v), VS_VCPU_RMW, memory_order_release, \
		  atomic_exchange_explicit, memory_order_release)
/**
 * vs_fetch_add - add @v to *@p, fully ordered
 * @p: the object
 * @v: the operand
 *
 * Return: the old value.
 */
#define vs_fetch_add(p, v) \
	VS__OP_PV((p), (v), VS_VCPU_RMW, memory_order_seq_cst, \
		  atomic_fetch_add_explicit, memory_order_seq_cst)
/**
 * vs_fetch_add_relaxed - vs_fetch_add() without ordering
 * @p: the object
 * @v: the operand
 *
 * Return: the old value.
 */
#define vs_fetch_add_relaxed(p, v) \
	VS__OP_PV((p), (v), VS_VCPU_RMW, memory_order_relaxed, \
		  atomic_fetch_add_explicit, memory_order_relaxed)
/**
 * vs_fetch_add_acquire - vs_fetch_add() with acquire ordering only
 * @p: the object
 * @v: the operand
 *
 * Return: the old value.
 */
#define vs_fetch_add_acquire(p, v) \
	VS__OP_PV((p), (v), VS_VCPU_RMW, memory_order_acquire, \
		  atomic_fetch_add_explicit, memory_order_acquire)
/**
 * vs_fetch_add_release - vs_fetch_add() with release ordering only
 * @p: the object
 * @v: the operand
 *
 * Return: the old value.
 */
#define vs_fetch_add_release(p, v) \
	VS__OP_PV((p), (v), VS_VCPU_RMW, memory_order_release, \
		  atomic_fetch_add_explicit, memory_order_release)
/**
 * vs_fetch_sub - subtract @v from *@p, fully ordered
 * @p: the object
 * @v: the operand
 *
 * Return: the old value.
 */
#define vs_fetch_sub(p, v) \
	VS__OP_PV((p), (v), VS_VCPU_RMW, memory_order_seq_cst, \
		  atomic_fetch_sub_explicit, memory_order_seq_cst)
/**
 * vs_fetch_sub_release - vs_fetch_sub() with release ordering only
 * @p: the object
 * @v: the operand
 *
 * Return: the old value.
 */
#define vs_fetch_sub_release(p, v) \
	VS__OP_PV((p), (v), VS_VCPU_RMW, memory_order_release, \
		  atomic_fetch_sub_explicit, memory_order_release)
/**
 * vs_fetch_or - OR @v into *@p, fully ordered
 * @p: the object
 * @v: the operand
 *
 * Return: the old value.
 */
#define vs_fetch_or(p, v) \
	VS__OP_PV((p), (v), VS_VCPU_RMW, memory_order_seq_cst, \
		  atomic_fetch_or_explicit, memory_order_seq_cst)
/**
 * vs_fetch_and - AND @v into *@p, fully ordered
 * @p: the object
 * @v: the operand
 *
 * Return: the old value.
 */
#define vs_fetch_and(p, v) \
	VS__OP_PV((p), (v), VS_VCPU_RMW, memory_order_seq_cst, \
		  atomic_fetch_and_explicit, memory_order_seq_cst)

/* Fences.  vs_barrier() orders the compiler only. */

/** vs_barrier - a compiler barrier, no CPU ordering (barrier()) */
#define vs_barrier() atomic_signal_fence(memory_order_seq_cst)
/** vs_smp_mb - a full memory barrier (smp_mb()) */
#define vs_smp_mb() \
	VS__SEAM(memory_order_seq_cst, VS_VCPU_FENCE, \
		 atomic_thread_fence(memory_order_seq_cst))
/**
 * vs_smp_rmb - order earlier loads before later loads (smp_rmb())
 *
 * An acquire fence: it also orders earlier loads before later stores.
 */
#define vs_smp_rmb() \
	VS__SEAM(memory_order_acquire, VS_VCPU_ORDER, \
		 atomic_thread_fence(memory_order_acquire))
/**
 * vs_smp_wmb - order earlier stores before later stores (smp_wmb())
 *
 * A release fence: it also orders earlier loads before later stores.
 */
#define vs_smp_wmb() \
	VS__SEAM(memory_order_release, VS_VCPU_ORDER, \
		 atomic_thread_fence(memory_order_release))

/**
 * vs_cpu_relax - pause inside a busy-wait loop (cpu_relax())
 *
 * Context: any.
 */
static inline void vs_cpu_relax(void)
{
	VS__EV((void *)0, VS_VCPU_RELAX);
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
/* Private: 1 when membarrier is used (vs_membarrier_init()), for the
 * inline light side: exported from libvmsim.so for that alone. */
extern VS_EXTERN int vs__have_membarrier;

/**
 * vs_membarrier_init - decide how the asymmetric barriers work
 *
 * Registers the process for MEMBARRIER_CMD_PRIVATE_EXPEDITED once
 * (unless VS_NO_MEMBARRIER=1 is in the environment); later calls return
 * the first answer.
 *
 * Context: any; before the first vs_smp_mb_light() or vs_smp_mb_heavy()
 * of any thread (vs_thread_attach() and the per-slot locks' init
 * functions call it).
 * Return: 1 when membarrier is used, 0 when both sides are vs_smp_mb().
 */
VS_EXTERN int vs_membarrier_init(void);

/**
 * vs_smp_mb_light - the frequent side of an asymmetric barrier
 *
 * A compiler barrier when membarrier is available, else vs_smp_mb().
 * Ordered only against vs_smp_mb_heavy(), not against another light one.
 *
 * Context: any.
 */
static inline void vs_smp_mb_light(void)
{
	if (VS_VCPU)
		vs_smp_mb();	/* vCPUs share one host thread */
	else if (vs_likely(vs__have_membarrier))
		vs_barrier();
	else
		vs_smp_mb();
}

/**
 * vs_smp_mb_heavy - the rare side of an asymmetric barrier
 *
 * With membarrier, every running thread of the process executes a full
 * barrier before this returns (a system call); else vs_smp_mb().
 *
 * Context: any thread; enters the kernel with membarrier.
 */
VS_EXTERN void vs_smp_mb_heavy(void);

#endif /* VMSIM_ATOMIC_H */
