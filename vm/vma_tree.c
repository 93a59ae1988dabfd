/* SPDX-License-Identifier: MIT */
/*
 * vm/vma_tree.c - the RCU-safe VMA index: a persistent weight-balanced
 * tree in the manner of the Bonsai tree (Clements et al., ASPLOS 2012).
 *
 * Balance.  The weight of a subtree is its size plus one.  Every node
 * keeps DELTA * weight(one child) >= weight(other child), with the
 * parameters (DELTA, GAMMA) = (3, 2) that Hirai and Yamamoto proved
 * correct for Adams' single and double rotations ("Balancing
 * weight-balanced trees", JFP 2011).  A child then weighs at most 3/4 of
 * its parent, so the height is below log_{4/3}(n + 1) + 1, about
 * 2.4 log2(n).
 *
 * Updates.  A writer never stores to a node that is reachable from the
 * published root.  It builds the new version of every node on the
 * changed path ("fresh" nodes: allocated by this update, not yet
 * published), may rebuild a fresh node in place as often as it likes,
 * records every published node it replaces ("old" nodes), and then
 * commits: one release store of the new root, and one vs_call_rcu() that
 * frees all old nodes after a grace period.  When an allocation fails
 * the fresh nodes are freed at once and nothing was ever published.
 *
 * Readers.  The acquire load of the root pairs with the writer's release
 * store of it.  Every node reachable from a root was completely written
 * before that root was released and is never written again, so the
 * child pointers below it need no further ordering: they are read with
 * vs_read_once() only so that they are atomic accesses.
 */
#include <stdlib.h>
#include <string.h>

#include "sync/atomic.h"
#include "sync/rcu.h"
#include "vm/vma_tree.h"

#define VT_DELTA 3U
#define VT_GAMMA 2U

/*
 * Height bound for VS_VMA_TREE_MAX_COUNT entries (log_{4/3}(2^31) + 1 is
 * about 76), with room for the transient height inside an update.
 */
#define VT_MAX_HEIGHT 80

/*
 * Nodes one update may allocate and may replace: per level of the path,
 * the path node and the two or three nodes of a double rotation; two
 * passes for vs_vma_tree_replace().
 */
#define VT_MAX_CHANGED (2 * (3 * VT_MAX_HEIGHT + 2))

/*
 * struct vs__vt_node - one entry.  Immutable once published.  The fields
 * a walk compares come first, so that they share a cache line.
 */
struct vs__vt_node {
	unsigned long start;
	unsigned long end;
	VS_ATOMIC(struct vs__vt_node *) child[2];	/* left, right */
	struct vs_vma *vma;
	unsigned int size;	/* entries in this subtree; writer only */
	unsigned int fresh;	/* built by the update in progress */
};

/* The nodes one update replaced, freed together after a grace period. */
struct vt_batch {
	struct vs_rcu_head rcu;
	unsigned int nr;
	struct vs__vt_node *node[];
};

/* Bookkeeping of one update; lives on the writer's stack. */
struct vt_update {
	int err;
	unsigned int nr_fresh;
	unsigned int nr_old;
	struct vs__vt_node *fresh[VT_MAX_CHANGED];
	struct vs__vt_node *old[VT_MAX_CHANGED];
};

/*
 * Test hooks (writer side, plain): live node count, and the allocation
 * that is made to fail.
 */
static vs_atomic_long_t vt_live_nodes;
static long vt_fail_nth = -1;

static void *vt_malloc(size_t size)
{
	if (vt_fail_nth >= 0 && vt_fail_nth-- == 0)
		return NULL;
	return malloc(size);
}

static void vt_free_node(struct vs__vt_node *n)
{
	vs_fetch_sub_release(&vt_live_nodes, 1);
	free(n);
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

static inline struct vs__vt_node *vt_child(struct vs__vt_node *n, int dir)
{
	/* Ordered by the acquire in vt_root(); see the top of this file. */
	return vs_read_once(&n->child[dir]);
}

static inline unsigned int vt_size(struct vs__vt_node *n)
{
	return n ? n->size : 0;
}

/*
 * The node with the lowest end > @addr, or NULL.  A node that contains
 * @addr is that node: every node with a lower end ends at or below its
 * start.
 */
static inline struct vs__vt_node *vt_find(struct vs__vt_node *n,
					  unsigned long addr)
{
	struct vs__vt_node *best = NULL;

	while (n) {
		if (addr < n->end) {
			best = n;
			if (n->start <= addr)
				break;
			n = vt_child(n, 0);
		} else {
			n = vt_child(n, 1);
		}
	}
	return best;
}

/* The node that starts exactly at @start, or NULL. */
static struct vs__vt_node *vt_find_start(struct vs__vt_node *n,
					 unsigned long start)
{
	while (n && n->start != start)
		n = vt_child(n, start > n->start);
	return n;
}

static struct vs_vma *vt_result(struct vs__vt_node *n, unsigned long *start,
				unsigned long *end)
{
	if (!n)
		return NULL;
	if (start)
		*start = n->start;
	if (end)
		*end = n->end;
	return n->vma;
}

struct vs_vma *vs_vma_tree_find(struct vs_vma_tree *t, unsigned long addr,
				unsigned long *start, unsigned long *end)
{
	if (!t)
		return NULL;
	return vt_result(vt_find(vt_root(t), addr), start, end);
}

struct vs_vma *vs_vma_tree_lookup(struct vs_vma_tree *t, unsigned long addr)
{
	struct vs__vt_node *n;

	if (!t)
		return NULL;
	n = vt_root(t);
	while (n) {
		if (addr < n->start)
			n = vt_child(n, 0);
		else if (addr >= n->end)
			n = vt_child(n, 1);
		else
			return n->vma;
	}
	return NULL;
}

struct vs_vma *vs_vma_tree_prev(struct vs_vma_tree *t, unsigned long addr,
				unsigned long *start, unsigned long *end)
{
	struct vs__vt_node *n, *best = NULL;

	if (!t)
		return NULL;
	n = vt_root(t);
	while (n) {
		if (n->start < addr) {
			best = n;
			n = vt_child(n, 1);
		} else {
			n = vt_child(n, 0);
		}
	}
	return vt_result(best, start, end);
}

/* ---- building a new version --------------------------------------------- */

static struct vs__vt_node *vt_alloc(struct vt_update *u, unsigned long start,
				    unsigned long end, struct vs_vma *vma)
{
	struct vs__vt_node *n;

	if (u->err)
		return NULL;
	/* The bound cannot be reached; fail cleanly rather than overrun. */
	if (u->nr_fresh == VT_MAX_CHANGED || !(n = vt_malloc(sizeof(*n)))) {
		u->err = -ENOMEM;
		return NULL;
	}
	vs_fetch_add_relaxed(&vt_live_nodes, 1);
	n->start = start;
	n->end = end;
	n->vma = vma;
	n->size = 1;
	n->fresh = 1;
	vs_atomic_init(&n->child[0], NULL);
	vs_atomic_init(&n->child[1], NULL);
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

/*
 * vt_mk - the node with @k's entry and children @dir: @a, !@dir: @b.
 * Rebuilds @k in place when it is fresh, returns it unchanged when it
 * already has these children, and copies it otherwise.
 */
static struct vs__vt_node *vt_mk(struct vt_update *u, struct vs__vt_node *k,
				 int dir, struct vs__vt_node *a,
				 struct vs__vt_node *b)
{
	struct vs__vt_node *n = k;

	if (u->err)
		return NULL;
	if (!k->fresh) {
		if (vt_child(k, dir) == a && vt_child(k, !dir) == b)
			return k;
		n = vt_alloc(u, k->start, k->end, k->vma);
		if (!n)
			return NULL;
		vt_retire(u, k);
	}
	/* Not yet reachable by readers: vt_commit() publishes it. */
	vs_write_once(&n->child[dir], a);
	vs_write_once(&n->child[!dir], b);
	n->size = vt_size(a) + vt_size(b) + 1;
	return n;
}

/*
 * vt_rotate - rebuild @k whose child !@dir (@heavy) outweighs child @dir
 * (@light) by more than DELTA, with a single or a double rotation.
 */
static struct vs__vt_node *vt_rotate(struct vt_update *u,
				     struct vs__vt_node *k, int dir,
				     struct vs__vt_node *light,
				     struct vs__vt_node *heavy)
{
	struct vs__vt_node *inner = vt_child(heavy, dir);
	struct vs__vt_node *outer = vt_child(heavy, !dir);
	struct vs__vt_node *x, *y, *ia, *ib;

	if (vt_size(inner) + 1 < VT_GAMMA * (vt_size(outer) + 1)) {
		x = vt_mk(u, k, dir, light, inner);
		return vt_mk(u, heavy, dir, x, outer);
	}
	ia = vt_child(inner, dir);
	ib = vt_child(inner, !dir);
	x = vt_mk(u, k, dir, light, ia);
	y = vt_mk(u, heavy, dir, ib, outer);
	return vt_mk(u, inner, dir, x, y);
}

/* vt_balance - @k's entry over children @l and @r, rebalanced. */
static struct vs__vt_node *vt_balance(struct vt_update *u,
				      struct vs__vt_node *k,
				      struct vs__vt_node *l,
				      struct vs__vt_node *r)
{
	unsigned long wl = vt_size(l) + 1UL, wr = vt_size(r) + 1UL;

	if (u->err)
		return NULL;
	if (wr > VT_DELTA * wl)
		return vt_rotate(u, k, 0, l, r);
	if (wl > VT_DELTA * wr)
		return vt_rotate(u, k, 1, r, l);
	return vt_mk(u, k, 0, l, r);
}

/* Insert the fresh leaf @leaf below @n; its range overlaps nothing. */
static struct vs__vt_node *vt_insert(struct vt_update *u,
				     struct vs__vt_node *n,
				     struct vs__vt_node *leaf)
{
	struct vs__vt_node *l, *r;

	if (!n)
		return leaf;
	l = vt_child(n, 0);
	r = vt_child(n, 1);
	if (leaf->start < n->start)
		l = vt_insert(u, l, leaf);
	else
		r = vt_insert(u, r, leaf);
	return vt_balance(u, n, l, r);
}

/* Remove the leftmost node of the nonempty @n, returned in *@min. */
static struct vs__vt_node *vt_erase_min(struct vt_update *u,
					struct vs__vt_node *n,
					struct vs__vt_node **min)
{
	struct vs__vt_node *l = vt_child(n, 0), *r = vt_child(n, 1);

	if (!l) {
		*min = n;
		return r;
	}
	l = vt_erase_min(u, l, min);
	return vt_balance(u, n, l, r);
}

/* Remove the node starting at @start, which is below @n. */
static struct vs__vt_node *vt_erase(struct vt_update *u,
				    struct vs__vt_node *n,
				    unsigned long start)
{
	struct vs__vt_node *l = vt_child(n, 0), *r = vt_child(n, 1), *min;

	if (start < n->start)
		return vt_balance(u, n, vt_erase(u, l, start), r);
	if (start > n->start)
		return vt_balance(u, n, l, vt_erase(u, r, start));
	vt_retire(u, n);
	if (!l || !r)
		return l ? l : r;
	r = vt_erase_min(u, r, &min);
	/* @min moves up: vt_mk() copies it (retiring it) or reuses it. */
	return vt_balance(u, min, l, r);
}

static void vt_batch_free(struct vs_rcu_head *head)
{
	struct vt_batch *b = (struct vt_batch *)head;
	unsigned int i;

	for (i = 0; i < b->nr; i++)
		vt_free_node(b->node[i]);
	free(b);
}

/*
 * vt_commit - publish @root and retire the old nodes, or, when the update
 * failed, free its fresh nodes.  Return: 0 or the update's error.
 */
static int vt_commit(struct vs_vma_tree *t, struct vt_update *u,
		     struct vs__vt_node *root, long dcount)
{
	struct vt_batch *b = NULL;
	unsigned int i;

	if (!u->err && u->nr_old) {
		b = vt_malloc(sizeof(*b) + u->nr_old * sizeof(b->node[0]));
		if (!b)
			u->err = -ENOMEM;
	}
	if (u->err) {
		for (i = 0; i < u->nr_fresh; i++)
			vt_free_node(u->fresh[i]);
		return u->err;
	}
	for (i = 0; i < u->nr_fresh; i++)
		u->fresh[i]->fresh = 0;
	/*
	 * Pairs with the vs_load_acquire() in vt_root(): a reader that sees
	 * the new root sees every fresh node fully written.  Without it a
	 * reader could follow a pointer to a node whose fields it cannot
	 * see yet.
	 */
	vs_store_release(&t->root, root);
	t->count += dcount;
	if (b) {
		b->nr = u->nr_old;
		memcpy(b->node, u->old, u->nr_old * sizeof(b->node[0]));
		/* Readers that may still see the old nodes hold them up. */
		vs_call_rcu(&b->rcu, vt_batch_free);
	}
	return 0;
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
	if (!n)
		return;
	vt_free_all(vt_child(n, 0));
	vt_free_all(vt_child(n, 1));
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

/* Does [@start, @end) overlap an entry of @root other than @skip? */
static int vt_overlaps(struct vs__vt_node *root, struct vs__vt_node *skip,
		       unsigned long start, unsigned long end)
{
	struct vs__vt_node *n = vt_find(root, start);

	if (n && n == skip)
		n = vt_find(root, skip->end);
	return n && n->start < end;
}

int vs_vma_tree_insert(struct vs_vma_tree *t, unsigned long start,
		       unsigned long end, struct vs_vma *vma)
{
	struct vs__vt_node *root, *leaf;
	struct vt_update u;

	if (!t || !vma || start >= end)
		return -EINVAL;
	root = vs_read_once(&t->root);
	if (vt_overlaps(root, NULL, start, end))
		return -EEXIST;
	if (t->count >= VS_VMA_TREE_MAX_COUNT)
		return -ENOMEM;
	u.err = 0;
	u.nr_fresh = 0;
	u.nr_old = 0;
	leaf = vt_alloc(&u, start, end, vma);
	if (leaf)
		root = vt_insert(&u, root, leaf);
	return vt_commit(t, &u, root, 1);
}

int vs_vma_tree_erase(struct vs_vma_tree *t, unsigned long start)
{
	struct vs__vt_node *root;
	struct vt_update u;

	if (!t)
		return -EINVAL;
	root = vs_read_once(&t->root);
	if (!vt_find_start(root, start))
		return -ENOENT;
	u.err = 0;
	u.nr_fresh = 0;
	u.nr_old = 0;
	root = vt_erase(&u, root, start);
	return vt_commit(t, &u, root, -1);
}

int vs_vma_tree_replace(struct vs_vma_tree *t, unsigned long old_start,
			unsigned long start, unsigned long end,
			struct vs_vma *vma)
{
	struct vs__vt_node *root, *old, *leaf;
	struct vt_update u;

	if (!t || !vma || start >= end)
		return -EINVAL;
	root = vs_read_once(&t->root);
	old = vt_find_start(root, old_start);
	if (!old)
		return -ENOENT;
	if (vt_overlaps(root, old, start, end))
		return -EEXIST;
	u.err = 0;
	u.nr_fresh = 0;
	u.nr_old = 0;
	/* Two passes, one publication: erase, then insert into the result. */
	root = vt_erase(&u, root, old_start);
	leaf = vt_alloc(&u, start, end, vma);
	if (leaf)
		root = vt_insert(&u, root, leaf);
	return vt_commit(t, &u, root, 0);
}

/* ---- debugging ---------------------------------------------------------- */

struct vt_check {
	int bad;
	int have_prev;
	unsigned long prev_end;
};

/* Check the subtree @n in order; return its height. */
static int vt_check_node(struct vt_check *c, struct vs__vt_node *n)
{
	struct vs__vt_node *l, *r;
	unsigned long wl, wr;
	int hl, hr;

	if (!n || c->bad)
		return 0;
	l = vt_child(n, 0);
	r = vt_child(n, 1);
	hl = vt_check_node(c, l);
	if (n->start >= n->end || n->fresh || !n->vma ||
	    (c->have_prev && c->prev_end > n->start))
		c->bad = 1;
	c->have_prev = 1;
	c->prev_end = n->end;
	hr = vt_check_node(c, r);
	wl = vt_size(l) + 1UL;
	wr = vt_size(r) + 1UL;
	if (n->size != vt_size(l) + vt_size(r) + 1 ||
	    wl > VT_DELTA * wr || wr > VT_DELTA * wl)
		c->bad = 1;
	return 1 + (hl > hr ? hl : hr);
}

/* Most nodes on a path of a balanced tree of @n entries. */
static int vt_height_bound(unsigned long n)
{
	double w = 2.0;	/* the least weight of a node */
	int h = 1;

	/* Each level down, the weight shrinks by at least 3/4. */
	while (w * 4.0 / 3.0 <= (double)n + 1.0) {
		w = w * 4.0 / 3.0;
		h++;
	}
	return h;
}

int vs__vma_tree_check(struct vs_vma_tree *t)
{
	struct vt_check c = { 0, 0, 0 };
	struct vs__vt_node *root;
	int h;

	if (!t)
		return -EINVAL;
	root = vs_read_once(&t->root);
	h = vt_check_node(&c, root);
	if (c.bad || vt_size(root) != t->count)
		return -EINVAL;
	if (t->count && h > vt_height_bound(t->count))
		return -EINVAL;
	return 0;
}

static int vt_height(struct vs__vt_node *n)
{
	int hl, hr;

	if (!n)
		return 0;
	hl = vt_height(vt_child(n, 0));
	hr = vt_height(vt_child(n, 1));
	return 1 + (hl > hr ? hl : hr);
}

int vs__vma_tree_height(struct vs_vma_tree *t)
{
	return t ? vt_height(vs_read_once(&t->root)) : 0;
}

unsigned long vs__vma_tree_node_size(void)
{
	return sizeof(struct vs__vt_node);
}

long vs__vma_tree_live_nodes(void)
{
	/* Pairs with the release in vt_free_node() on the call_rcu thread. */
	return vs_load_acquire(&vt_live_nodes);
}

void vs__vma_tree_fail_alloc(long nth)
{
	vt_fail_nth = nth;
}
