/* SPDX-License-Identifier: MIT */
/*
 * vmsim/vma_tree.h - the RCU-safe VMA index of an mm.
 *
 * A persistent B+tree keyed by address ranges, updated by path copying
 * as the Bonsai tree of Clements, Kaashoek and Zeldovich ("Scalable
 * Address Spaces Using RCU Balanced Trees", ASPLOS 2012) is, but with
 * fat, cache-line-aligned nodes so that a lookup in a large tree touches
 * few cache lines.  Entries are [start, end) ranges that never overlap,
 * each with a struct vs_vma pointer that the tree stores but never
 * dereferences.
 *
 * Readers take no lock: inside vs_rcu_read_lock() they load the root and
 * walk down.  Writers are serialized by the caller (the mm's mmap_lock
 * held for write).  An update never changes a node that readers can
 * reach: it copies the path from the root to the change (and a sibling
 * that a merge or rebalance involves), publishes the new root with one
 * release store, and frees the replaced nodes after a grace period
 * (vs_free_rcu(), batched).  A reader therefore sees the whole tree before or the whole
 * tree after each update, never a mix.
 *
 * Locking: the writers' lock (the mmap_lock for writing) serializes
 * updates; readers hold it or are inside vs_rcu_read_lock()
 * (docs/locking.md, "The VMA index").
 *
 * Lifetime: a node replaced by an update stays readable until a grace
 * period has passed; call vs_rcu_barrier() before checking for leaks.
 * vs_vma_tree_destroy() frees the nodes of the current tree at once.
 * The tree does not own the vmas: a reader may dereference a vma it found
 * only if the vma's owner, too, frees it through RCU.
 */
#ifndef VMSIM_VMA_TREE_H
#define VMSIM_VMA_TREE_H

#include "atomic.h"
#include "common.h"

struct vs_vma;		/* opaque here: the tree stores a pointer */
struct vs__vt_node;	/* private: vm/vma_tree.c */

/*
 * The most entries one tree holds.  Like the kernel's max_map_count, an
 * insert beyond it fails with -ENOMEM.  It also bounds the height, so
 * that an update's bookkeeping fits on the writer's stack.
 */
#define VS_VMA_TREE_MAX_COUNT 0x7fffffffUL

/**
 * struct vs_vma_tree - the VMA index of one mm
 * @root: private; the published tree, NULL when empty
 * @count: read-only; entries in the tree, updated by writers only
 */
struct vs_vma_tree {
	VS_ATOMIC(struct vs__vt_node *) root;
	unsigned long count;
};

/**
 * vs_vma_tree_init - make @t an empty tree
 * @t: the tree
 *
 * Context: before any other thread can see @t.
 * Return: 0, or -EINVAL when @t is NULL.
 */
VS_EXTERN int vs_vma_tree_init(struct vs_vma_tree *t);

/**
 * vs_vma_tree_destroy - free every node of @t now, leaving it empty
 * @t: the tree (NULL does nothing)
 *
 * Nodes that earlier updates replaced are freed by their RCU callbacks,
 * not here.
 *
 * Context: no reader can still see the nodes of @t (for example after
 * vs_synchronize_rcu() once @t became unreachable, or when no reader ever
 * existed), and no writer runs.
 */
VS_EXTERN void vs_vma_tree_destroy(struct vs_vma_tree *t);

/**
 * vs_vma_tree_find - the first entry that ends above @addr (find_vma)
 * @t: the tree
 * @addr: the address
 * @start: if not NULL, receives the entry's start
 * @end: if not NULL, receives the entry's end
 *
 * The entry may start above @addr.  Iterate in address order with
 *
 *	for (v = vs_vma_tree_find(t, 0, &s, &e); v;
 *	     v = vs_vma_tree_find(t, e, &s, &e))
 *
 * Context: caller holds the writer's lock, or is inside vs_rcu_read_lock()
 * and treats the result as a snapshot that may already be stale.
 * Return: the entry's vma pointer, or NULL when every entry ends at or
 * below @addr (then *@start and *@end are unchanged).
 */
VS_EXTERN struct vs_vma *vs_vma_tree_find(struct vs_vma_tree *t,
					  unsigned long addr,
					  unsigned long *start,
					  unsigned long *end);

/**
 * vs_vma_tree_lookup - the entry that contains @addr (vma_lookup)
 * @t: the tree
 * @addr: the address
 *
 * Context: as vs_vma_tree_find().
 * Return: the vma pointer of the entry with start <= @addr < end, or NULL.
 */
VS_EXTERN struct vs_vma *vs_vma_tree_lookup(struct vs_vma_tree *t,
					    unsigned long addr);

/**
 * vs_vma_tree_prev - the last entry that starts below @addr
 * @t: the tree
 * @addr: the address
 * @start: if not NULL, receives the entry's start
 * @end: if not NULL, receives the entry's end
 *
 * For find_vma_prev() and for merging with the previous VMA.
 *
 * Context: as vs_vma_tree_find().
 * Return: the vma pointer of the entry with the highest start < @addr, or
 * NULL (then *@start and *@end are unchanged).
 */
VS_EXTERN struct vs_vma *vs_vma_tree_prev(struct vs_vma_tree *t,
					  unsigned long addr,
					  unsigned long *start,
					  unsigned long *end);

/**
 * vs_vma_tree_insert - add the entry [@start, @end) -> @vma
 * @t: the tree
 * @start: first address of the range
 * @end: first address past the range
 * @vma: the pointer to store; not dereferenced
 *
 * Context: writers serialized by the caller (mmap_lock held for write);
 * the calling thread is attached (vs_free_rcu()).  Readers may run.
 * Return: 0; -EINVAL when @t or @vma is NULL or @start >= @end; -EEXIST
 * when the range overlaps an entry; -ENOMEM when memory ran out or the
 * tree holds VS_VMA_TREE_MAX_COUNT entries.  On error @t is unchanged.
 */
VS_EXTERN int vs_vma_tree_insert(struct vs_vma_tree *t, unsigned long start,
				 unsigned long end, struct vs_vma *vma);

/**
 * vs_vma_tree_erase - remove the entry that starts at @start
 * @t: the tree
 * @start: the entry's start
 *
 * Context: as vs_vma_tree_insert().
 * Return: 0; -EINVAL when @t is NULL; -ENOENT when no entry starts at
 * @start; -ENOMEM when memory ran out.  On error @t is unchanged.
 */
VS_EXTERN int vs_vma_tree_erase(struct vs_vma_tree *t, unsigned long start);

/**
 * vs_vma_tree_replace - swap one entry for another in one update
 * @t: the tree
 * @old_start: start of the entry to remove
 * @start: first address of the new range
 * @end: first address past the new range
 * @vma: the new pointer (may equal the old one)
 *
 * For VMA splits, merges and adjustments: a reader sees either the old
 * entry or the new one, never both and never neither.  The new range may
 * overlap the old entry's range, not any other entry's.
 *
 * Context: as vs_vma_tree_insert().
 * Return: 0; -EINVAL when @t or @vma is NULL or @start >= @end; -ENOENT
 * when no entry starts at @old_start; -EEXIST when the new range overlaps
 * another entry; -ENOMEM when memory ran out.  On error @t is unchanged.
 */
VS_EXTERN int vs_vma_tree_replace(struct vs_vma_tree *t,
				  unsigned long old_start, unsigned long start,
				  unsigned long end, struct vs_vma *vma);

#endif /* VMSIM_VMA_TREE_H */
