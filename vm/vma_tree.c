/* SPDX-License-Identifier: MIT */
/*
 * vm/vma_tree.c - the RCU-safe VMA index: a persistent B+tree with
 * path copying, in the manner of the Bonsai tree (Clements et al.,
 * ASPLOS 2012) but with fat, cache-line-aligned nodes.
 *
 * Shape.  Every entry lives in a leaf; leaves hold up to VT_FAN entries
 * as three arrays (ends, starts, vma pointers), internal nodes hold up
 * to VT_FAN children with, for each child, the highest end in that
 * child's subtree.  All leaves are at the same depth; the root has at
 * least one entry (a leaf) or two children (an internal node); every
 * other node has at least VT_MIN entries or children.  The keys of a
 * node are one 128-byte, cache-line-aligned array padded with ULONG_MAX,
 * so that a walk reads, per level, the key lines and one line of
 * pointers, and never the node's header except at the root.
 *
 * Search.  Everything is keyed by END: the rank of @addr in a node (how
 * many keys are <= @addr) is the slot of the first entry, or of the
 * subtree holding the first entry, that ends above @addr.  That is
 * vs_vma_tree_find() directly; lookup adds one start comparison and prev
 * one step back.
 *
 * Updates.  A writer never stores to a node that is reachable from the
 * published root.  It copies the nodes of the root-to-leaf path (and a
 * sibling that lends or merges), splitting a node that overflows and
 * merging or rebalancing one that underflows.  Nodes built by the update
 * are "fresh"; published nodes it replaces are "old".  Then it commits:
 * one release store of the new root, then the old nodes go to
 * vs_free_rcu(), which returns them to their cache after a grace period
 * (batched, so no allocation).  Every allocation happens before the
 * commit, so when one fails the fresh nodes are freed at once and
 * nothing was ever published.
 *
 * Readers.  The acquire load of the root pairs with the writer's release
 * store of it.  Every node reachable from a root was completely written
 * before that root was released and is never written again, so the
 * child pointers below it need no further ordering: they are read with
 * vs_read_once() only so that they are atomic accesses.
 */
#include <vmsim/vma_tree.h>

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/atomic.h>
#include <vmsim/rcu.h>
#include <vmsim/slab.h>

#include "../sync/internal.h"

/* Most entries of a leaf, children of an internal node. */
#define VT_FAN 16U
/*
 * Fewest entries or children of a node other than the root.  A quarter
 * lets a split that appends (or prepends) leave the old node 13/16 full,
 * so that mapping in address order packs the leaves; a node that drops
 * below it borrows from or merges with a sibling (3 + 4 <= 16).
 */
#define VT_MIN 4U

/*
 * Height bound: a tree of height h >= 2 holds at least 2 * VT_MIN^(h-1)
 * entries, so VS_VMA_TREE_MAX_COUNT (2^31) entries need at most 16
 * levels; one more while a root splits.
 */
#define VT_MAX_HEIGHT 20

/*
 * Nodes one update may allocate and may replace: per level, two (a split
 * or a borrow) built and two (the path node and a sibling) replaced, one
 * new root; two passes for vs_vma_tree_replace().
 */
#define VT_MAX_CHANGED (2 * (2 * VT_MAX_HEIGHT + 2))

#define VT_NONE ULONG_MAX	/* key of an unused slot */

/*
 * struct vs__vt_node - a leaf (level 0) or an internal node.  Immutable
 * once published.  The header has a line of its own: a reader reads it
 * only at the root.  Leaves and internal nodes are allocated at their own
 * sizes (the union is cut short for internal nodes).
 *
 * @key: leaf: the end of entry i; internal: the highest end below child i;
 *	 VT_NONE in unused slots, ascending
 * @start, @vma: leaf: entry i; NULL @vma in unused slots
 * @child: internal: the subtrees, NULL in unused slots
 */
struct vs__vt_node {
	unsigned short nr;	/* entries or children */
	unsigned char level;	/* 0: leaf; the same in a whole level */
	unsigned char fresh;	/* built by the update in progress */
	VS_CACHELINE_ALIGNED unsigned long key[VT_FAN];
	union {
		struct {
			unsigned long start[VT_FAN];
			struct vs_vma *vma[VT_FAN];
		} leaf;
		VS_ATOMIC(struct vs__vt_node *) child[VT_FAN];
	} u;
};

#define VT_LEAF_SIZE sizeof(struct vs__vt_node)
#define VT_INNER_SIZE \
	(offsetof(struct vs__vt_node, u) + VT_FAN * sizeof(void *))

/* Bookkeeping of one update; lives on the writer's stack. */
struct vt_update {
	int err;
	unsigned int nr_fresh;
	unsigned int nr_old;
	struct vs__vt_node *fresh[VT_MAX_CHANGED];
	struct vs__vt_node *old[VT_MAX_CHANGED];
};

/*
 * The contents of one node while an update builds it: up to two nodes'
 * worth plus one, so that an overflowing node or two siblings being
 * merged or rebalanced fit.  @ptr is the vma (leaf) or the child.
 */
#define VT_ITEMS (2 * VT_FAN + 1)

struct vt_items {
	unsigned int nr;
	unsigned int level;
	unsigned long key[VT_ITEMS];
	unsigned long start[VT_ITEMS];	/* leaf only */
	void *ptr[VT_ITEMS];
};

/* The root-to-leaf path of a writer's walk: @node[l] at level l. */
struct vt_path {
	unsigned int height;	/* levels: root->level + 1 */
	struct vs__vt_node *node[VT_MAX_HEIGHT];
	unsigned int idx[VT_MAX_HEIGHT];	/* slot taken at node[l] */
};

/* Leaves and inner nodes, each in a cache of its own size. */
static struct vs_kmem_cache vt_leaf_cache =
	VS_KMEM_CACHE_INIT("vma_tree_leaf", VT_LEAF_SIZE, VS_CACHELINE);
static struct vs_kmem_cache vt_inner_cache =
	VS_KMEM_CACHE_INIT("vma_tree_inner", VT_INNER_SIZE, VS_CACHELINE);

static struct vs_kmem_cache *vt_cache(unsigned int level)
{
	return level ? &vt_inner_cache : &vt_leaf_cache;
}

static void vt_free_node(struct vs__vt_node *n)
{
	vs_kmem_cache_free(vt_cache(n->level), n);
}



/* ---- reading ------------------------------------------------------------ */

static inline struct vs__vt_node *vt_root(struct vs_vma_tree *t)
{
	/*
	 * Pairs with the vs_store_release() in vt_commit(): every node
	 * reachable from the root we see was fully written before it.
	 */
	return vs_load_acquire(&t->root);
}

static inline struct vs__vt_node *vt_child(struct vs__vt_node *n,
					   unsigned int i)
{
	/* Ordered by the acquire in vt_root(); see the top of this file. */
	return vs_read_once(&n->u.child[i]);
}

/*
 * How many keys of @n are <= @addr: the slot of the first entry or
 * subtree that ends above @addr.  VT_FAN when @addr is ULONG_MAX; a slot
 * >= nr when every key is <= @addr.  No branches, so that both key lines
 * are fetched at once and nothing mispredicts.
 */
static inline unsigned int vt_rank(const struct vs__vt_node *n,
				   unsigned long addr)
{
	const unsigned long *k = n->key;
	unsigned int i, r0 = 0, r1 = 0, r2 = 0, r3 = 0;

	/* Four independent sums: no chain of 16 dependent additions. */
	for (i = 0; i < VT_FAN; i += 4) {
		r0 += k[i] <= addr;
		r1 += k[i + 1] <= addr;
		r2 += k[i + 2] <= addr;
		r3 += k[i + 3] <= addr;
	}
	return (r0 + r1) + (r2 + r3);
}

/*
 * Start fetching the lines of @n that a walk reads: the keys and the
 * pointers (children, or vmas and, when @starts, starts).  Issued as soon
 * as the pointer to @n is known, so that these misses overlap instead of
 * the pointer line waiting for the rank that the key lines give.
 * Always inlined: GCC finds a function made of prefetches alone free of
 * side effects, and drops the calls to it.
 */
static inline __attribute__((always_inline)) void vt_prefetch(const struct vs__vt_node *n, int leaf,
			       int starts)
{
	__builtin_prefetch(&n->key[0]);
	__builtin_prefetch(&n->key[VT_FAN / 2]);
	if (!leaf) {
		__builtin_prefetch(&n->u.child[0]);
		__builtin_prefetch(&n->u.child[VT_FAN / 2]);
		return;
	}
	__builtin_prefetch(&n->u.leaf.vma[0]);
	__builtin_prefetch(&n->u.leaf.vma[VT_FAN / 2]);
	if (starts) {
		__builtin_prefetch(&n->u.leaf.start[0]);
		__builtin_prefetch(&n->u.leaf.start[VT_FAN / 2]);
	}
}

/*
 * The leaf that holds the first entry ending above @addr, if any, and in
 * *@slot the rank of @addr there.  NULL when every entry of @root ends at
 * or below @addr.  @starts: the caller reads the starts of the leaf.
 */
static inline struct vs__vt_node *vt_find_leaf(struct vs__vt_node *n,
					       unsigned long addr,
					       unsigned int *slot, int starts)
{
	unsigned int lvl, i;

	if (!n)
		return NULL;
	for (lvl = n->level; lvl; lvl--) {
		i = vt_rank(n, addr);
		if (i >= VT_FAN)
			return NULL;
		n = vt_child(n, i);	/* NULL past the last child */
		if (!n)
			return NULL;
		vt_prefetch(n, lvl == 1, starts);
	}
	*slot = vt_rank(n, addr);
	return n;
}

static inline struct vs_vma *vt_entry(struct vs__vt_node *leaf,
				      unsigned int i, unsigned long *start,
				      unsigned long *end)
{
	struct vs_vma *v;

	if (!leaf || i >= VT_FAN)
		return NULL;
	v = leaf->u.leaf.vma[i];	/* NULL past the last entry */
	if (v) {
		if (start)
			*start = leaf->u.leaf.start[i];
		if (end)
			*end = leaf->key[i];
	}
	return v;
}

struct vs_vma *vs_vma_tree_find(struct vs_vma_tree *t, unsigned long addr,
				unsigned long *start, unsigned long *end)
{
	struct vs__vt_node *leaf;
	unsigned int i = 0;

	if (!t)
		return NULL;
	leaf = vt_find_leaf(vt_root(t), addr, &i, start != NULL);
	return vt_entry(leaf, i, start, end);
}

struct vs_vma *vs_vma_tree_lookup(struct vs_vma_tree *t, unsigned long addr)
{
	struct vs__vt_node *leaf;
	unsigned int i = 0;

	if (!t)
		return NULL;
	leaf = vt_find_leaf(vt_root(t), addr, &i, 1);
	/* The first entry ending above @addr contains it, or nothing does. */
	if (!leaf || i >= VT_FAN || leaf->u.leaf.start[i] > addr)
		return NULL;
	return leaf->u.leaf.vma[i];
}

/* The last entry of the subtree @n. */
static struct vs_vma *vt_last(struct vs__vt_node *n, unsigned long *start,
			      unsigned long *end)
{
	while (n->level)
		n = vt_child(n, n->nr - 1U);
	return vt_entry(n, n->nr - 1U, start, end);
}

struct vs_vma *vs_vma_tree_prev(struct vs_vma_tree *t, unsigned long addr,
				unsigned long *start, unsigned long *end)
{
	struct vs__vt_node *n, *c, *left = NULL;
	unsigned int i;

	if (!t)
		return NULL;
	n = vt_root(t);
	if (!n)
		return NULL;
	/*
	 * Entries that end at or below @addr start below it; the first one
	 * that ends above may start below too.  @left is the subtree just
	 * before the walk's path at the lowest level that has one: its last
	 * entry precedes everything on the path.
	 */
	while (n->level) {
		i = vt_rank(n, addr);
		c = i < n->nr ? vt_child(n, i) : NULL;
		if (!c)		/* everything ends at or below @addr */
			return vt_last(n, start, end);
		if (i)
			left = vt_child(n, i - 1U);
		n = c;
	}
	i = vt_rank(n, addr);
	if (i < n->nr && n->u.leaf.start[i] < addr)
		return vt_entry(n, i, start, end);
	if (i > n->nr)
		i = n->nr;
	if (i)
		return vt_entry(n, i - 1U, start, end);
	return left ? vt_last(left, start, end) : NULL;
}

/* ---- building a new version --------------------------------------------- */

/* A fresh node with the contents @it[@from, @from + @nr). */
static struct vs__vt_node *vt_mk(struct vt_update *u,
				 const struct vt_items *it,
				 unsigned int from, unsigned int nr)
{
	struct vs__vt_node *n;
	unsigned int i;

	if (u->err)
		return NULL;
	/* The bound cannot be reached; fail cleanly rather than overrun. */
	if (u->nr_fresh == VT_MAX_CHANGED ||
	    !(n = vs_kmem_cache_alloc(vt_cache(it->level)))) {
		u->err = -ENOMEM;
		return NULL;
	}
	n->nr = (unsigned short)nr;
	n->level = (unsigned char)it->level;
	n->fresh = 1;
	for (i = 0; i < VT_FAN; i++) {
		int used = i < nr;

		n->key[i] = used ? it->key[from + i] : VT_NONE;
		if (it->level) {
			vs_atomic_init(&n->u.child[i],
				       used ? it->ptr[from + i] : NULL);
		} else {
			n->u.leaf.start[i] = used ? it->start[from + i] : 0;
			n->u.leaf.vma[i] = used ? it->ptr[from + i] : NULL;
		}
	}
	u->fresh[u->nr_fresh++] = n;
	return n;
}

/* @n leaves the tree: free it after a grace period, or now if fresh. */
static void vt_retire(struct vt_update *u, struct vs__vt_node *n)
{
	unsigned int i;

	if (!n->fresh) {
		if (u->nr_old == VT_MAX_CHANGED)
			u->err = -ENOMEM;
		else
			u->old[u->nr_old++] = n;
		return;
	}
	for (i = 0; i < u->nr_fresh; i++) {
		if (u->fresh[i] == n) {
			u->fresh[i] = u->fresh[--u->nr_fresh];
			vt_free_node(n);
			return;
		}
	}
}

/* Append the contents of @n to @it. */
static void vt_items_add(struct vt_items *it, struct vs__vt_node *n)
{
	unsigned int i, k = it->nr;

	for (i = 0; i < n->nr; i++, k++) {
		it->key[k] = n->key[i];
		if (n->level) {
			it->ptr[k] = vt_child(n, i);
		} else {
			it->start[k] = n->u.leaf.start[i];
			it->ptr[k] = n->u.leaf.vma[i];
		}
	}
	it->nr = k;
}

static void vt_items_load(struct vt_items *it, struct vs__vt_node *n)
{
	it->nr = 0;
	it->level = n->level;
	vt_items_add(it, n);
}

/* Make room at @i (shift up) or close the gap at @i (shift down). */
static void vt_items_open(struct vt_items *it, unsigned int i)
{
	unsigned int n = it->nr - i;

	memmove(&it->key[i + 1], &it->key[i], n * sizeof(it->key[0]));
	memmove(&it->start[i + 1], &it->start[i], n * sizeof(it->start[0]));
	memmove(&it->ptr[i + 1], &it->ptr[i], n * sizeof(it->ptr[0]));
	it->nr++;
}

static void vt_items_close(struct vt_items *it, unsigned int i)
{
	unsigned int n = it->nr - i - 1;

	memmove(&it->key[i], &it->key[i + 1], n * sizeof(it->key[0]));
	memmove(&it->start[i], &it->start[i + 1], n * sizeof(it->start[0]));
	memmove(&it->ptr[i], &it->ptr[i + 1], n * sizeof(it->ptr[0]));
	it->nr--;
}

static void vt_items_set_child(struct vt_items *it, unsigned int i,
			       struct vs__vt_node *c)
{
	it->key[i] = c->key[c->nr - 1U];
	it->ptr[i] = c;
}

/*
 * The size of the left node when @it (VT_FAN < nr <= 2 * VT_FAN) is cut
 * in two.  An overflow at either end (@at: the slot that was added) keeps
 * the old node nearly full, so that updates in address order, upward or
 * downward, pack the nodes; anything else cuts in the middle.
 */
static unsigned int vt_cut(unsigned int nr, unsigned int at)
{
	if (nr == VT_FAN + 1 && at == nr - 1)
		return nr - VT_MIN;
	if (nr == VT_FAN + 1 && at == 0)
		return VT_MIN;
	return nr / 2;
}

/*
 * vt_ascend - build the new tree bottom-up from the new contents @it of
 * the leaf @p->node[0]; @at is the slot an insert added there (or -1).
 * Copies every node of @p, splitting, merging or rebalancing as needed.
 * Return: the new root (NULL for an empty tree, or on error).
 */
static struct vs__vt_node *vt_ascend(struct vt_update *u, struct vt_path *p,
				     struct vt_items *it, int at)
{
	struct vt_items up;
	struct vs__vt_node *a, *b, *sib;
	unsigned int l, i, j, cut;

	for (l = 0;; l++) {
		if (u->err)
			return NULL;
		if (l + 1 == p->height) {	/* the root */
			vt_retire(u, p->node[l]);
			if (it->nr == 0)
				return NULL;
			if (it->level && it->nr == 1)	/* collapse */
				return it->ptr[0];
			if (it->nr <= VT_FAN)
				return vt_mk(u, it, 0, it->nr);
			if (l + 1 == VT_MAX_HEIGHT) {
				u->err = -ENOMEM;
				return NULL;
			}
			cut = vt_cut(it->nr, (unsigned int)at);
			a = vt_mk(u, it, 0, cut);
			b = vt_mk(u, it, cut, it->nr - cut);
			if (u->err)
				return NULL;
			up.nr = 2;
			up.level = it->level + 1;
			vt_items_set_child(&up, 0, a);
			vt_items_set_child(&up, 1, b);
			return vt_mk(u, &up, 0, 2);
		}
		vt_items_load(&up, p->node[l + 1]);
		i = p->idx[l + 1];
		vt_retire(u, p->node[l]);
		if (it->nr > VT_FAN) {			/* split */
			cut = vt_cut(it->nr, (unsigned int)at);
			a = vt_mk(u, it, 0, cut);
			b = vt_mk(u, it, cut, it->nr - cut);
			if (u->err)
				return NULL;
			vt_items_set_child(&up, i, a);
			vt_items_open(&up, i + 1);
			vt_items_set_child(&up, i + 1, b);
			at = (int)i + 1;
		} else if (it->nr >= VT_MIN) {		/* copy */
			a = vt_mk(u, it, 0, it->nr);
			if (u->err)
				return NULL;
			vt_items_set_child(&up, i, a);
			at = -1;
		} else {	/* underflow: join a sibling */
			j = i ? i - 1 : i + 1;
			sib = up.ptr[j];
			if (j < i) {
				/* sibling first: prepend it to @it */
				struct vt_items tmp;

				vt_items_load(&tmp, sib);
				for (unsigned int k = 0; k < it->nr; k++) {
					tmp.key[tmp.nr] = it->key[k];
					tmp.start[tmp.nr] = it->start[k];
					tmp.ptr[tmp.nr++] = it->ptr[k];
				}
				*it = tmp;
			} else {
				vt_items_add(it, sib);
			}
			vt_retire(u, sib);
			if (j < i)
				i = j;	/* the pair starts at @i */
			if (it->nr <= VT_FAN) {		/* merge */
				a = vt_mk(u, it, 0, it->nr);
				if (u->err)
					return NULL;
				vt_items_set_child(&up, i, a);
				vt_items_close(&up, i + 1);
			} else {			/* rebalance */
				cut = it->nr / 2;
				a = vt_mk(u, it, 0, cut);
				b = vt_mk(u, it, cut, it->nr - cut);
				if (u->err)
					return NULL;
				vt_items_set_child(&up, i, a);
				vt_items_set_child(&up, i + 1, b);
			}
			at = -1;
		}
		*it = up;
	}
}

/*
 * vt_walk - the writer's walk to the leaf for @addr, as vt_find_leaf()
 * but recording the path, and taking the last child where everything
 * ends at or below @addr.  Return: the rank of @addr in the leaf.
 */
static unsigned int vt_walk(struct vs__vt_node *n, unsigned long addr,
			    struct vt_path *p)
{
	unsigned int l, i;

	p->height = n->level + 1U;
	for (l = n->level;; l--) {
		i = vt_rank(n, addr);
		if (i > n->nr)
			i = n->nr;
		p->node[l] = n;
		p->idx[l] = i;
		if (!l)
			return i;
		if (i == n->nr)
			i--;
		p->idx[l] = i;
		n = vt_child(n, i);
	}
}

/*
 * vt_retire_old - queue the free of every old node of @u after a grace
 * period.  Only once the new root is published: the grace period then
 * waits for every reader that may still reach an old node (one that
 * loaded the old root), and a reader that begins later loads the new
 * one.  Readers that may still see the old nodes hold them up.
 * Context: the tree's writer (mmap_lock held for write), after the
 * publish in vt_commit().
 */
static void vt_retire_old(struct vt_update *u)
{
	unsigned int i;

	for (i = 0; i < u->nr_old; i++)
		vs_kmem_cache_free_rcu(vt_cache(u->old[i]->level), u->old[i]);
}

/*
 * vt_commit - publish @root and retire the old nodes, or, when the update
 * failed, free its fresh nodes.  Return: 0 or the update's error.
 */
static int vt_commit(struct vs_vma_tree *t, struct vt_update *u,
		     struct vs__vt_node *root, long dcount)
{
	unsigned int i;

	if (u->err) {
		for (i = 0; i < u->nr_fresh; i++)
			vt_free_node(u->fresh[i]);
		return u->err;
	}
	for (i = 0; i < u->nr_fresh; i++)
		u->fresh[i]->fresh = 0;
	/* The planted bug: a grace period that begins before the publish
	 * need not wait for a reader that loads the old root after it. */
	if (VS_BROKEN(vma_tree_free_before_publish))
		vt_retire_old(u);
	/*
	 * Pairs with the vs_load_acquire() in vt_root(): a reader that sees
	 * the new root sees every fresh node fully written.  Without it a
	 * reader could follow a pointer to a node whose fields it cannot
	 * see yet.
	 */
	if (VS_BROKEN(vma_tree_relaxed_root))
		vs_write_once(&t->root, root);
	else
		vs_store_release(&t->root, root);
	t->count += dcount;
	if (!VS_BROKEN(vma_tree_free_before_publish))
		vt_retire_old(u);
	return 0;
}

static void vt_update_init(struct vt_update *u)
{
	u->err = 0;
	u->nr_fresh = 0;
	u->nr_old = 0;
}

/* Add [@start, @end) -> @vma to @root, which it overlaps nowhere. */
static struct vs__vt_node *vt_insert(struct vt_update *u,
				     struct vs__vt_node *root,
				     unsigned long start, unsigned long end,
				     struct vs_vma *vma)
{
	struct vt_items it;
	struct vt_path p;
	unsigned int i;

	if (u->err)
		return NULL;
	if (!root) {
		it.nr = 1;
		it.level = 0;
		it.key[0] = end;
		it.start[0] = start;
		it.ptr[0] = vma;
		return vt_mk(u, &it, 0, 1);
	}
	i = vt_walk(root, start, &p);
	vt_items_load(&it, p.node[0]);
	vt_items_open(&it, i);
	it.key[i] = end;
	it.start[i] = start;
	it.ptr[i] = vma;
	return vt_ascend(u, &p, &it, (int)i);
}

/* Remove the entry at slot @i of the leaf at the end of @p. */
static struct vs__vt_node *vt_erase(struct vt_update *u, struct vt_path *p,
				    unsigned int i)
{
	struct vt_items it;

	vt_items_load(&it, p->node[0]);
	vt_items_close(&it, i);
	return vt_ascend(u, p, &it, -1);
}

/*
 * The slot of the entry starting at @start in the leaf at the end of the
 * path vt_walk() records into @p, or -1.
 */
static int vt_walk_start(struct vs__vt_node *root, unsigned long start,
			 struct vt_path *p)
{
	unsigned int i;

	if (!root)
		return -1;
	i = vt_walk(root, start, p);
	if (i >= p->node[0]->nr || p->node[0]->u.leaf.start[i] != start)
		return -1;
	return (int)i;
}

/* ---- updates ------------------------------------------------------------ */

int vs_vma_tree_init(struct vs_vma_tree *t)
{
	if (!t)
		return -EINVAL;
	vs_atomic_init(&t->root, NULL);
	t->count = 0;
	return 0;
}

static void vt_free_all(struct vs__vt_node *n)
{
	unsigned int i;

	if (!n)
		return;
	if (n->level)
		for (i = 0; i < n->nr; i++)
			vt_free_all(vt_child(n, i));
	vt_free_node(n);
}

void vs_vma_tree_destroy(struct vs_vma_tree *t)
{
	if (!t)
		return;
	vt_free_all(vs_read_once(&t->root));
	vs_write_once(&t->root, NULL);
	t->count = 0;
}

/*
 * Does [@start, @end) overlap an entry of @root other than the one that
 * starts at @skip_start (when @skip is set)?
 */
static int vt_overlaps(struct vs__vt_node *root, int skip,
		       unsigned long skip_start, unsigned long start,
		       unsigned long end)
{
	unsigned long s = 0, e = 0;
	struct vs__vt_node *leaf;
	unsigned int i = 0;

	leaf = vt_find_leaf(root, start, &i, 1);
	if (!vt_entry(leaf, i, &s, &e))
		return 0;
	if (skip && s == skip_start) {
		leaf = vt_find_leaf(root, e, &i, 1);
		if (!vt_entry(leaf, i, &s, &e))
			return 0;
	}
	return s < end;
}

int vs_vma_tree_insert(struct vs_vma_tree *t, unsigned long start,
		       unsigned long end, struct vs_vma *vma)
{
	struct vs__vt_node *root;
	struct vt_update u;

	if (!t || !vma || start >= end)
		return -EINVAL;
	root = vs_read_once(&t->root);
	if (vt_overlaps(root, 0, 0, start, end))
		return -EEXIST;
	if (t->count >= VS_VMA_TREE_MAX_COUNT)
		return -ENOMEM;
	vt_update_init(&u);
	root = vt_insert(&u, root, start, end, vma);
	return vt_commit(t, &u, root, 1);
}

int vs_vma_tree_erase(struct vs_vma_tree *t, unsigned long start)
{
	struct vs__vt_node *root;
	struct vt_update u;
	struct vt_path p;
	int i;

	if (!t)
		return -EINVAL;
	root = vs_read_once(&t->root);
	i = vt_walk_start(root, start, &p);
	if (i < 0)
		return -ENOENT;
	vt_update_init(&u);
	root = vt_erase(&u, &p, (unsigned int)i);
	return vt_commit(t, &u, root, -1);
}

/*
 * Can the entry at slot @i of the leaf at the end of @p become [@start,
 * @end) in place, keeping its rank?  Given that the new range overlaps no
 * other entry: when the entry before it ends at or below @start, and the
 * entry after it ends above @start.  Only neighbours in the same leaf are
 * looked at; at a leaf's edge only the tree's own edge counts.
 */
static int vt_same_slot(struct vt_path *p, unsigned int i,
			unsigned long start)
{
	struct vs__vt_node *leaf = p->node[0];
	int first = 1, last = 1;
	unsigned int l;

	for (l = 1; l < p->height; l++) {
		first &= p->idx[l] == 0;
		last &= p->idx[l] + 1U == p->node[l]->nr;
	}
	if (i ? leaf->key[i - 1] > start : !first)
		return 0;
	if (i + 1U < leaf->nr ? leaf->key[i + 1] <= start : !last)
		return 0;
	return 1;
}

int vs_vma_tree_replace(struct vs_vma_tree *t, unsigned long old_start,
			unsigned long start, unsigned long end,
			struct vs_vma *vma)
{
	struct vs__vt_node *root;
	struct vt_update u;
	struct vt_items it;
	struct vt_path p;
	int i;

	if (!t || !vma || start >= end)
		return -EINVAL;
	root = vs_read_once(&t->root);
	i = vt_walk_start(root, old_start, &p);
	if (i < 0)
		return -ENOENT;
	if (vt_overlaps(root, 1, old_start, start, end))
		return -EEXIST;
	vt_update_init(&u);
	if (vt_same_slot(&p, (unsigned int)i, start)) {
		/* One path copy: the entry changes, its rank does not. */
		vt_items_load(&it, p.node[0]);
		it.key[i] = end;
		it.start[i] = start;
		it.ptr[i] = vma;
		root = vt_ascend(&u, &p, &it, -1);
	} else {
		/* Two passes, one publication: erase, then insert. */
		root = vt_erase(&u, &p, (unsigned int)i);
		root = vt_insert(&u, root, start, end, vma);
	}
	return vt_commit(t, &u, root, 0);
}

/* ---- debugging ---------------------------------------------------------- */

struct vt_check {
	int bad;
	int have_prev;
	unsigned long prev_end;
	unsigned long count;
};

/*
 * Check the subtree @n at @level in order (@root: it is the root).
 * Return: the highest end in it.
 */
static unsigned long vt_check_node(struct vt_check *c, struct vs__vt_node *n,
				   unsigned int level, int root)
{
	unsigned int i, min = root ? (level ? 2U : 1U) : VT_MIN;
	unsigned long hi;

	if (c->bad)
		return 0;
	if (!n || n->level != level || n->fresh || n->nr < min ||
	    n->nr > VT_FAN || ((uintptr_t)n & (VS_CACHELINE - 1))) {
		c->bad = 1;
		return 0;
	}
	for (i = n->nr; i < VT_FAN; i++) {
		if (n->key[i] != VT_NONE ||
		    (level ? vt_child(n, i) != NULL :
			     n->u.leaf.vma[i] != NULL))
			c->bad = 1;
	}
	for (i = 0; i < n->nr && !c->bad; i++) {
		if (level) {
			/* The key is exactly the child's highest end. */
			hi = vt_check_node(c, vt_child(n, i), level - 1, 0);
			if (hi != n->key[i])
				c->bad = 1;
			continue;
		}
		if (n->u.leaf.start[i] >= n->key[i] || !n->u.leaf.vma[i] ||
		    (c->have_prev && c->prev_end > n->u.leaf.start[i]))
			c->bad = 1;
		c->have_prev = 1;
		c->prev_end = n->key[i];
		c->count++;
	}
	for (i = 1; i < n->nr; i++)
		if (n->key[i - 1] >= n->key[i])
			c->bad = 1;
	return n->key[n->nr - 1U];
}

/*
 * Most levels of a tree of @n entries (@n > 0): a tree of height h >= 2
 * has a root with two children and nodes of VT_MIN below it, so at least
 * 2 * VT_MIN^(h-1) entries.
 */
static unsigned int vt_height_bound(unsigned long n)
{
	unsigned long least = 2UL * VT_MIN;	/* entries at height 2 */
	unsigned int h = 1;

	while (least <= n) {
		h++;
		if (least > ULONG_MAX / VT_MIN)
			break;
		least *= VT_MIN;
	}
	return h;
}

/* Test hooks (test/hooks.h). */
int vs__vma_tree_check(struct vs_vma_tree *t)
{
	struct vt_check c = { 0, 0, 0, 0 };
	struct vs__vt_node *root;

	if (!t)
		return -EINVAL;
	root = vs_read_once(&t->root);
	if (!root)
		return t->count ? -EINVAL : 0;
	vt_check_node(&c, root, root->level, 1);
	if (c.bad || c.count != t->count ||
	    root->level + 1U > vt_height_bound(t->count))
		return -EINVAL;
	return 0;
}

int vs__vma_tree_height(struct vs_vma_tree *t)
{
	struct vs__vt_node *root = t ? vs_read_once(&t->root) : NULL;

	return root ? root->level + 1 : 0;
}

long vs__vma_tree_live_nodes(void)
{
	struct vs_kmem_cache_stats leaf, inner;

	/* The caches count what is out: no shared counter on the hot path. */
	vs_kmem_cache_stats(&vt_leaf_cache, &leaf);
	vs_kmem_cache_stats(&vt_inner_cache, &inner);
	return leaf.active + inner.active;
}
