/* SPDX-License-Identifier: MIT */
/*
 * vmsim/seqcount.h - sequence counters, after include/linux/seqlock.h.
 *
 * A writer makes the count odd, changes the data, makes it even again.
 * A reader samples the count, reads the data, and retries if the count
 * was odd or has moved.  Writers must be serialized by the caller (the
 * kernel's seqcount_t has no lock of its own either).  Data read inside
 * the loop may be torn and must be read with vs_read_once().
 *
 * Layers, as in the kernel: raw_ variants skip nothing here (vmsim has
 * no lockdep) but keep the kernel's names so call sites read the same;
 * __ variants omit the barrier and say who provides it.
 */
#ifndef VMSIM_SEQCOUNT_H
#define VMSIM_SEQCOUNT_H

#include "atomic.h"
#include "lockdep_annotate.h"

/* A planted-bug build (sync/broken.def; VS_BROKEN_ID on the command line,
 * the source tree on the include path) compiles its bug into every file
 * that includes this header, the tests' too; otherwise it is 0. */
#ifdef VS_BROKEN_ID
#include "sync/broken.h"
#define VS__SEQCOUNT_NO_WMB VS_BROKEN(seqcount_begin_no_wmb)
#define VS__SEQCOUNT_END_NO_WMB VS_BROKEN(seqcount_end_no_wmb)
#define VS__SEQCOUNT_RETRY_NO_RMB VS_BROKEN(seqcount_retry_no_rmb)
#define VS__SEQCOUNT_BEGIN_NO_RMB VS_BROKEN(seqcount_read_begin_no_rmb)
#else
#define VS__SEQCOUNT_NO_WMB 0
#define VS__SEQCOUNT_END_NO_WMB 0
#define VS__SEQCOUNT_RETRY_NO_RMB 0
#define VS__SEQCOUNT_BEGIN_NO_RMB 0
#endif

/**
 * struct vs_seqcount - a sequence counter (vs_seqcount_t, seqcount_t)
 * @sequence: even when no writer is inside, odd while one is; private
 */
typedef struct vs_seqcount {
	vs_atomic32_t sequence;
	VS__LD_MAP	/* lockdep builds: class and writers' lock */
} vs_seqcount_t;

/** VS_SEQCOUNT_ZERO - initializer of a vs_seqcount_t (count 0) */
#define VS_SEQCOUNT_ZERO { 0 }

/**
 * vs_seqcount_init - set the count of @s to 0
 * @s: the seqcount
 *
 * Context: before @s is shared.
 */
static inline void vs_seqcount_init(vs_seqcount_t *s)
{
	vs_atomic_init(&s->sequence, 0);
	VS__LD(s->dep_map = (struct vs_lockdep_map){ 0 });
}

/**
 * vs_seqcount_set_lock - name the lock that serializes @s's writers
 * @s: the seqcount, with a lockdep class (vs_lockdep_set_class())
 * @lock: the lock's address (a vs_spinlock_t, struct vs_rwsem or struct
 *        vs_lock)
 *
 * Lockdep then reports a write section entered without @lock held for
 * writing, as the kernel's seqcount_LOCKNAME_t.  Compiled out without
 * lockdep.
 *
 * Context: before @s is shared.
 */
#define vs_seqcount_set_lock(s, lock) \
	VS__LD((void)((s)->dep_map.assoc = (lock)))

/**
 * vs__read_seqcount_begin - wait for an even count; no barrier
 * @s: the seqcount
 *
 * Context: any; spins while a writer is inside.
 * Return: the count to pass to vs_read_seqcount_retry().  The caller
 * issues vs_smp_rmb() before reading the protected data.
 */
static inline uint32_t vs__read_seqcount_begin(const vs_seqcount_t *s)
{
	uint32_t seq;

	while ((seq = vs_read_once((vs_atomic32_t *)&s->sequence)) & 1)
		vs_cpu_relax();
	return seq;
}

/**
 * vs_raw_read_seqcount_begin - start a read section, waiting out writers
 * @s: the seqcount
 *
 * Context: any; spins while a writer is inside, so not where the writer
 * may be waiting for the caller.
 * Return: an even count to pass to vs_read_seqcount_retry().
 */
static inline uint32_t vs_raw_read_seqcount_begin(const vs_seqcount_t *s)
{
	uint32_t seq = vs__read_seqcount_begin(s);

	/* Orders the count load before the data loads; pairs with the
	 * vs_smp_wmb() in vs_write_seqcount_end(). */
	if (!VS__SEQCOUNT_BEGIN_NO_RMB)
		vs_smp_rmb();
	return seq;
}

/**
 * vs_read_seqcount_begin - start a read section (read_seqcount_begin)
 * @s: the seqcount
 *
 * The same as vs_raw_read_seqcount_begin() (vmsim has no lockdep).
 *
 * Context: as vs_raw_read_seqcount_begin().
 * Return: an even count to pass to vs_read_seqcount_retry().
 */
static inline uint32_t vs_read_seqcount_begin(const vs_seqcount_t *s)
{
	return vs_raw_read_seqcount_begin(s);
}

/**
 * vs_raw_read_seqcount - sample the count without waiting
 * @s: the seqcount
 *
 * Context: any; never waits.
 * Return: the count, possibly odd (a writer is inside).
 */
static inline uint32_t vs_raw_read_seqcount(const vs_seqcount_t *s)
{
	uint32_t seq = vs_read_once((vs_atomic32_t *)&s->sequence);

	vs_smp_rmb(); /* as in vs_raw_read_seqcount_begin() */
	return seq;
}

/**
 * vs_raw_seqcount_try_begin - begin a read section unless a writer is in
 * @s: the seqcount
 * @start: receives the count for vs_read_seqcount_retry()
 *
 * Context: any; never waits.
 * Return: true when @start is even and the section may proceed; false
 * when a writer is inside (the speculative fault path then gives up
 * instead of spinning).
 */
static inline bool vs_raw_seqcount_try_begin(const vs_seqcount_t *s,
					     uint32_t *start)
{
	*start = vs_raw_read_seqcount(s);
	return !(*start & 1);
}

/**
 * vs__read_seqcount_retry - did a writer run since @start?  No barrier:
 * the caller has ordered its data loads before this call.
 * @s: the seqcount
 * @start: the count returned by the begin call
 *
 * Context: any.
 * Return: true when the section must be retried.
 */
static inline bool vs__read_seqcount_retry(const vs_seqcount_t *s,
					   uint32_t start)
{
	return vs_read_once((vs_atomic32_t *)&s->sequence) != start;
}

/**
 * vs_read_seqcount_retry - end a read section
 * @s: the seqcount
 * @start: the count returned by the begin call
 *
 * Context: any.
 * Return: true when the data read since @start may be inconsistent and
 * the section must be retried.
 */
static inline bool vs_read_seqcount_retry(const vs_seqcount_t *s,
					  uint32_t start)
{
	/* Orders the data loads before the count reload; pairs with the
	 * vs_smp_wmb() in vs_write_seqcount_end(). */
	if (!VS__SEQCOUNT_RETRY_NO_RMB)
		vs_smp_rmb();
	return vs__read_seqcount_retry(s, start);
}

/**
 * vs_write_seqcount_begin - enter a write section (count becomes odd)
 * @s: the seqcount
 *
 * Context: the caller serializes writers (holds the lock that protects
 * the data for writing).
 */
static inline void vs_write_seqcount_begin(vs_seqcount_t *s)
{
	VS__LD(vs__lockdep_seq_begin(&s->dep_map, s));
	vs_write_once(&s->sequence, vs_read_once(&s->sequence) + 1);
	/* Orders the odd count before the data stores; pairs with the
	 * vs_smp_rmb() in vs_read_seqcount_retry(). */
	if (!VS__SEQCOUNT_NO_WMB)
		vs_smp_wmb();
}

/**
 * vs_write_seqcount_end - leave a write section (count becomes even)
 * @s: the seqcount
 *
 * Context: the caller entered with vs_write_seqcount_begin().
 */
static inline void vs_write_seqcount_end(vs_seqcount_t *s)
{
	/* Orders the data stores before the even count; pairs with the
	 * vs_smp_rmb() in vs_raw_read_seqcount_begin(). */
	if (!VS__SEQCOUNT_END_NO_WMB)
		vs_smp_wmb();
	vs_write_once(&s->sequence, vs_read_once(&s->sequence) + 1);
	VS__LD(vs__lockdep_release(&s->dep_map, s));
}

/**
 * vs_seqcount_is_write_locked - is a writer inside?
 * @s: the seqcount
 *
 * Context: any; for assertions, the answer may be stale at once.
 * Return: true while the count is odd.
 */
static inline bool vs_seqcount_is_write_locked(const vs_seqcount_t *s)
{
	return vs_read_once((vs_atomic32_t *)&s->sequence) & 1;
}

/*
 * The latch variant (seqcount_latch_t): the writer keeps two copies of
 * the data, data[0] and data[1], and never makes readers wait:
 *
 *	vs_raw_write_seqcount_latch(s);  modify data[0];
 *	vs_raw_write_seqcount_latch(s);  modify data[1];
 *
 * and a reader uses copy (seq & 1), retrying if the count moved:
 *
 *	do {
 *		seq = vs_raw_read_seqcount_latch(s);
 *		read data[seq & 1];
 *	} while (vs_raw_read_seqcount_latch_retry(s, seq));
 */
/**
 * vs_raw_read_seqcount_latch - begin a latch read section
 * @s: the seqcount
 *
 * Context: any; never waits.
 * Return: the count: read copy (count & 1), then check with
 * vs_raw_read_seqcount_latch_retry().
 */
static inline uint32_t vs_raw_read_seqcount_latch(const vs_seqcount_t *s)
{
	/* Acquire: orders the count before the loads of data[seq & 1];
	 * pairs with the second vs_smp_wmb() of the writer's latch. */
	return vs_load_acquire((vs_atomic32_t *)&s->sequence);
}

/**
 * vs_raw_read_seqcount_latch_retry - end a latch read section
 * @s: the seqcount
 * @start: the count vs_raw_read_seqcount_latch() returned
 *
 * Context: any.
 * Return: true when the writer switched copies meanwhile and the
 * section must be retried.
 */
static inline bool vs_raw_read_seqcount_latch_retry(const vs_seqcount_t *s,
						    uint32_t start)
{
	vs_smp_rmb(); /* data loads before the recheck; pairs as above */
	return vs_read_once((vs_atomic32_t *)&s->sequence) != start;
}

/**
 * vs_raw_write_seqcount_latch - switch readers to the other copy
 * @s: the seqcount
 *
 * Context: writers serialized by the caller.
 */
static inline void vs_raw_write_seqcount_latch(vs_seqcount_t *s)
{
	/* Earlier stores to the copy readers may now use are visible
	 * before the switch ... */
	vs_smp_wmb();
	vs_write_once(&s->sequence, vs_read_once(&s->sequence) + 1);
	/* ... and the switch is visible before the writer modifies the
	 * copy that readers just left. */
	vs_smp_wmb();
}

#endif /* VMSIM_SEQCOUNT_H */
