/* SPDX-License-Identifier: MIT */
/*
 * test/hooks.h - the library's test hooks: functions that exist for
 * vmsim's own tests and its test library (libvmsim-check), no part of
 * the API.  Not installed; hidden in libvmsim.so (the tests and
 * libvmsim-check-vcpu link the static libraries).  Each is defined in
 * the file its comment names.
 *
 * A white-box test of one layer includes that layer's internal.h
 * instead (sync/internal.h, vm/internal.h, fault/uffd_internal.h).
 */
#ifndef VS_TEST_HOOKS_H
#define VS_TEST_HOOKS_H

#include <stddef.h>

struct vs_vma_tree;

/* ---- vm/vma_tree.c --------------------------------------------------------- */

/**
 * vs__vma_tree_check - verify every invariant of @t
 * @t: the tree
 *
 * Order and disjointness of the ranges, the separator keys, the fill
 * bounds of every node, all leaves at the same depth, the height bound
 * and @t->count.
 *
 * Context: caller holds the writer's lock.
 * Return: 0 when the tree is sound, -EINVAL otherwise.
 */
int vs__vma_tree_check(struct vs_vma_tree *t);

/* The height of @t.  Context: the writer's lock. */
int vs__vma_tree_height(struct vs_vma_tree *t);

/*
 * Nodes allocated and not yet freed, in all trees
 * (after vs_rcu_barrier(), the nodes of the live trees).  A node's
 * allocation is made to fail through vmsim/fail.h (cache "vma_tree").
 */
long vs__vma_tree_live_nodes(void);

/* ---- vm/vma_lock.c --------------------------------------------------------- */

/**
 * vs__vma_read_yields - a test mode: 6.18's vma_start_read() yields
 * after its early check of the mark and after it takes its reference
 * @on: 1 to yield there, 0 not to
 *
 * Each yield is an event where a vCPU gives way to another, as a
 * reader preempted in its RCU section: a writer's mark, detach and
 * free may fall into those few events without a change point of the
 * exploring scheduler on each.
 *
 * Context: no fault in flight.
 * Return: the mode before.
 */
int vs__vma_read_yields(int on);

/* ---- vm/buddy.c ------------------------------------------------------------ */

struct vs_page_pool;

/**
 * vs__page_pool_check - verify the pool's lists: every buddy block
 * aligned, marked with its order and not mergeable with its buddy, each
 * zone's free count, each per-CPU list's count, every list's links, and
 * every page on its own node's lists
 * @pool: the pool
 *
 * Context: no other thread uses @pool.
 * Return: 0 when sound, -EINVAL otherwise.
 */
int vs__page_pool_check(struct vs_page_pool *pool);

/* ---- vm/slab.c ------------------------------------------------------------- */

/**
 * vs__kmem_caches_reset - every cache back to empty, so that a run on a
 * new virtual machine does not depend on the runs before it (for
 * vs_explore(): the number of events an allocation takes depends on
 * what the cache holds)
 * @abandoned: the last run failed, its contexts abandoned where they
 *	       stood (vs_machine_run()): its objects are never freed and
 *	       the caches' locks may be held.  Each cache is then emptied
 *	       without a lock and without waiting; the chunks that hold
 *	       objects still allocated are kept, never reused (whatever
 *	       points into them stays valid memory).  Otherwise RCU frees
 *	       are flushed (vs_rcu_barrier()) and each cache with no object
 *	       out is emptied (its chunks freed); a cache with objects out
 *	       is left as it is
 *
 * Context: the host thread, no machine running, no other thread using
 * vm/; with @abandoned, no object made before the abandoned run may be
 * freed afterwards (the free would find no room: the process aborts,
 * saying so).
 * Return: the objects still out in the caches left as they were.
 */
long vs__kmem_caches_reset(int abandoned);

/* ---- sync/lockstat.c -------------------------------------------------------- */

/* The held locks of vCPU context @cpu (natively: of the caller), as
 * text in @buf of @len bytes.  Return: the bytes written. */
size_t vs__lockstat_held_of(int cpu, char *buf, size_t len);

#endif /* VS_TEST_HOOKS_H */
