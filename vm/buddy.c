/* SPDX-License-Identifier: MIT */
/*
 * vm/buddy.c - a node's zone: buddy free lists under zone->lock, and the
 * per-CPU lists in front of them (mm/page_alloc.c of Linux: the buddy
 * allocator of order-0 pages, rmqueue_bulk() and free_pcppages_bulk()).
 *
 * A slot's per-CPU list of a zone takes pcp_batch pages from the zone
 * when empty and gives pcp_batch of its coldest back once it holds more
 * than pcp_high (the kernel profile's sizes).  A freed page goes to the
 * freeing slot's list for the page's own zone, so pages never leave
 * their node.  Giving a page back merges it with its buddy while the
 * buddy is free, as __free_one_page() does, reading the buddy's struct
 * page; taking one splits the smallest block that has one (expand()).
 *
 * Every struct page a list operation reads or writes is an access of
 * the cost model (VS__TOUCH), as the kernel's list_head writes are.
 */
#include <assert.h>

#include <vmsim/vcpu_annotate.h>

#include "../sync/broken.h"
#include "page_internal.h"

/* ---- lists of pages ----------------------------------------------------- */

static struct vs_page *pg(struct vs_page_pool *pool, uint32_t pfn)
{
	return &pool->pages[pfn];
}

/* Add @pfn at the head of @l.  Caller holds @l's lock. */
void vs__plist_add(struct vs_page_pool *pool, struct plist *l, uint32_t pfn)
{
	struct vs_page *p = pg(pool, pfn);

	VS__TOUCH(&p->lru_next, VS_VCPU_STORE);
	p->lru_prev = PFN_NONE;
	p->lru_next = l->first;
	if (l->first != PFN_NONE) {
		VS__TOUCH(&pg(pool, l->first)->lru_prev, VS_VCPU_STORE);
		pg(pool, l->first)->lru_prev = pfn;
	} else {
		l->last = pfn;
	}
	l->first = pfn;
}

/* Add @pfn at the tail of @l.  Caller holds @l's lock. */
void vs__plist_add_tail(struct vs_page_pool *pool, struct plist *l,
			uint32_t pfn)
{
	struct vs_page *p = pg(pool, pfn);

	VS__TOUCH(&p->lru_next, VS_VCPU_STORE);
	p->lru_next = PFN_NONE;
	p->lru_prev = l->last;
	if (l->last != PFN_NONE) {
		VS__TOUCH(&pg(pool, l->last)->lru_next, VS_VCPU_STORE);
		pg(pool, l->last)->lru_next = pfn;
	} else {
		l->first = pfn;
	}
	l->last = pfn;
}

/* Take @pfn off @l: its neighbours' links are written.  Caller holds
 * @l's lock. */
void vs__plist_del(struct vs_page_pool *pool, struct plist *l, uint32_t pfn)
{
	struct vs_page *p = pg(pool, pfn);
	uint32_t next, prev;

	VS__TOUCH(&p->lru_next, VS_VCPU_LOAD);
	next = p->lru_next;
	prev = p->lru_prev;
	if (prev != PFN_NONE) {
		VS__TOUCH(&pg(pool, prev)->lru_next, VS_VCPU_STORE);
		pg(pool, prev)->lru_next = next;
	} else {
		l->first = next;
	}
	if (next != PFN_NONE) {
		VS__TOUCH(&pg(pool, next)->lru_prev, VS_VCPU_STORE);
		pg(pool, next)->lru_prev = prev;
	} else {
		l->last = prev;
	}
}

/* ---- the buddy lists ---------------------------------------------------- */

static void set_buddy(struct vs_page *p, unsigned int order)
{
	p->order = (uint16_t)order;
	vs_write_once(&p->flags, VS_PG_BUDDY);
}

/* Is the page at zone index @idx the free head of a block of @order? */
static int is_buddy(struct vs_page_pool *pool, struct zone *z, uint32_t idx,
		    unsigned int order)
{
	struct vs_page *p;

	if (idx >= z->span)
		return 0;
	p = pg(pool, z->base + idx);
	return (vs_read_once(&p->flags) & VS_PG_BUDDY) && p->order == order;
}

/*
 * Give the page at @pfn back to its zone's buddy lists, merging it with
 * its buddy while that is free (__free_one_page).  Caller holds z->lock.
 */
static void free_one_page(struct vs_page_pool *pool, struct zone *z,
			  uint32_t pfn)
{
	uint32_t idx = pfn - z->base, buddy;
	unsigned int order = 0;

	vs_lockdep_assert_held(&z->lock);
	while (order < VS_MAX_ORDER - 1) {
		buddy = idx ^ (1u << order);
		if (!is_buddy(pool, z, buddy, order))
			break;
		vs__plist_del(pool, &z->free_area[order], z->base + buddy);
		vs_write_once(&pg(pool, z->base + buddy)->flags, 0);
		idx &= buddy;
		order++;
	}
	set_buddy(pg(pool, z->base + idx), order);
	/* The buddy of the block one order up is free: this block is
	 * likely to merge soon, so it goes to the tail, less likely to be
	 * taken first (both kernels' __free_one_page). */
	if (order + 2 < VS_MAX_ORDER &&
	    is_buddy(pool, z, (idx & ~(1u << order)) ^ (2u << order),
		     order + 1))
		vs__plist_add_tail(pool, &z->free_area[order], z->base + idx);
	else
		vs__plist_add(pool, &z->free_area[order], z->base + idx);
}

/*
 * Take one page off the smallest block that has one, putting the halves
 * it does not use back on their lists (__rmqueue_smallest, expand).
 * Caller holds z->lock.  Return: the pfn, or PFN_NONE.
 */
static uint32_t rmqueue_one(struct vs_page_pool *pool, struct zone *z)
{
	unsigned int order = 0;
	uint32_t pfn;

	vs_lockdep_assert_held(&z->lock);
	while (order < VS_MAX_ORDER && z->free_area[order].first == PFN_NONE)
		order++;
	if (order == VS_MAX_ORDER)
		return PFN_NONE;
	pfn = z->free_area[order].first;
	vs__plist_del(pool, &z->free_area[order], pfn);
	while (order > 0) {
		order--;
		set_buddy(pg(pool, pfn + (1u << order)), order);
		vs__plist_add(pool, &z->free_area[order], pfn + (1u << order));
	}
	vs_write_once(&pg(pool, pfn)->flags, 0);
	return pfn;
}

/* The zone's pages, free, in the largest aligned blocks. */
void vs__zone_init(struct vs_page_pool *pool, struct zone *z, uint32_t base,
		   uint32_t span)
{
	uint32_t idx = 0;
	unsigned int order;

	vs_spin_lock_init(&z->lock);
	vs_lockdep_set_class(&z->lock, "zone_lock");
	vs_spin_lock_init(&z->lru_lock);
	vs_lockdep_set_class(&z->lru_lock, "lru_lock");
	z->base = base;
	z->span = span;
	while (idx < span) {
		order = VS_MAX_ORDER - 1;
		while ((idx & ((1u << order) - 1)) || idx + (1u << order) > span)
			order--;
		set_buddy(pg(pool, base + idx), order);
		vs__plist_add_tail(pool, &z->free_area[order], base + idx);
		idx += 1u << order;
	}
	vs_atomic_init(&z->nr_free, (long)span);
}

/* ---- the per-CPU lists --------------------------------------------------- */

static struct pcp *this_pcp(struct vs_page_pool *pool, unsigned int node)
{
	return &pool->pcp[vs__thread_slot()][node];
}

/* Take @pcp's lock (6.18's pcp_spin_lock()), a spinlock of class
 * pcp_lock to lockdep.  Context: no zone lock held (page_internal.h). */
static void pcp_lock(struct pcp *pcp)
{
	VS__LD(vs__lockdep_acquire(&pcp->dep_map, &pcp->lock, 0,
				   VS__LD_ATOMIC, VS__LD_IP));
	vs__slot_lock(&pcp->lock);
}

/* Context: the caller holds @pcp's lock. */
static void pcp_unlock(struct pcp *pcp)
{
	VS__LD(vs__lockdep_release(&pcp->dep_map, &pcp->lock));
	vs__slot_unlock(&pcp->lock);
}

/* Move up to @n pages from @z to @pcp (rmqueue_bulk).  Caller holds
 * pcp->lock. */
static uint32_t pcp_refill(struct vs_page_pool *pool, struct zone *z,
			   struct pcp *pcp, unsigned int node, uint32_t n)
{
	uint32_t moved = 0, pfn;

	vs_spin_lock(&z->lock);
	while (moved < n && (pfn = rmqueue_one(pool, z)) != PFN_NONE) {
		vs__plist_add_tail(pool, &pcp->list, pfn);
		moved++;
	}
	vs_write_once(&z->nr_free, vs_read_once(&z->nr_free) - moved);
	/* Under the zone lock: vs__alloc_slow(), finding the zone empty,
	 * sees that the pages are on a list (cached()). */
	vs_write_once(&pcp->count, vs_read_once(&pcp->count) + moved);
	vs__vmstat_mod(pool, node, VS_NR_FREE_PAGES, -(int)moved);
	vs_spin_unlock(&z->lock);
	KCHARGE(pool, VS_KSTEP_REFILL, moved);
	return moved;
}

/* Give up to @n of @pcp's coldest pages back to @z (free_pcppages_bulk's
 * loop).  Caller holds pcp->lock and z->lock.  Return: the pages moved. */
static uint32_t pcp_drain_locked(struct vs_page_pool *pool, struct zone *z,
				 struct pcp *pcp, unsigned int node,
				 uint32_t n)
{
	uint32_t moved = 0, pfn;

	vs_lockdep_assert_held(&pcp->lock);
	vs_lockdep_assert_held(&z->lock);
	while (moved < n && (pfn = pcp->list.last) != PFN_NONE) {
		vs__plist_del(pool, &pcp->list, pfn);
		free_one_page(pool, z, pfn);
		moved++;
	}
	vs_write_once(&z->nr_free, vs_read_once(&z->nr_free) + moved);
	vs_write_once(&pcp->count, vs_read_once(&pcp->count) - moved);
	vs__vmstat_mod(pool, node, VS_NR_FREE_PAGES, (int)moved);
	return moved;
}

/* Give up to @n of @pcp's coldest pages back to @z under its lock
 * (free_pcppages_bulk).  Caller holds pcp->lock.  Return: the pages
 * moved. */
static uint32_t pcp_drain(struct vs_page_pool *pool, struct zone *z,
			  struct pcp *pcp, unsigned int node, uint32_t n)
{
	uint32_t moved;

	vs_spin_lock(&z->lock);
	moved = pcp_drain_locked(pool, z, pcp, node, n);
	vs_spin_unlock(&z->lock);
	KCHARGE(pool, VS_KSTEP_DRAIN, moved);
	return moved;
}

/* A page of @node from this slot's list, refilled when empty. */
uint32_t vs__pcp_alloc(struct vs_page_pool *pool, unsigned int node)
{
	struct pcp *pcp = this_pcp(pool, node);
	struct zone *z = &pool->zone[node];
	uint32_t pfn = PFN_NONE;

	/* An empty zone is passed over without its lock: the kernel's
	 * zone_watermark_fast() reads the free count first. */
	if (!vs_read_once(&pcp->count) && !vs_read_once(&z->nr_free))
		return PFN_NONE;
	pcp_lock(pcp);
	if (pcp->list.first != PFN_NONE ||
	    pcp_refill(pool, z, pcp, node, pool->kernel.pcp_batch)) {
		pfn = pcp->list.first;
		vs__plist_del(pool, &pcp->list, pfn);
		vs_write_once(&pcp->count, vs_read_once(&pcp->count) - 1);
	}
	pcp_unlock(pcp);
	return pfn;
}

/* @pages, refcount 0, onto this slot's lists of each page's own zone,
 * one hold of a list's lock for each run of pages of one node. */
void vs__pcp_free(struct vs_page_pool *pool, struct vs_page **pages,
		  size_t n)
{
	struct pcp *pcp = NULL;
	unsigned int node = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!pcp || pages[i]->node != node) {
			if (pcp)
				pcp_unlock(pcp);
			node = pages[i]->node;
			pcp = this_pcp(pool, node);
			pcp_lock(pcp);
		}
		vs__plist_add(pool, &pcp->list, pfn_of(pool, pages[i]));
		vs_write_once(&pcp->count, vs_read_once(&pcp->count) + 1);
		if ((uint32_t)vs_read_once(&pcp->count) >
		    pool->zone[node].pcp_high)
			(void)pcp_drain(pool, &pool->zone[node], pcp, node,
					pool->kernel.pcp_batch);
	}
	if (pcp)
		pcp_unlock(pcp);
}

/* Pages on every per-CPU list; a refill counts its pages on its list
 * before it drops the zone lock. */
static size_t cached(struct vs_page_pool *pool)
{
	size_t n = 0, s, i;

	for (s = 0; s < VS_SLOT_ARRAY; s++)
		for (i = 0; i < pool->nr_nodes; i++)
			n += (uint32_t)vs_read_once(&pool->pcp[s][i].count);
	return n;
}

/*
 * The planted bug drain_all_zone_lock_first: every slot's list of @node
 * drained under one hold of its zone lock, each list's lock taken inside
 * it, the order that 6.18's free_pcppages_bulk() and rmqueue_bulk()
 * (pcp lock, then zone lock) forbid: a refill waiting for the zone lock
 * while it holds its list's lock deadlocks with it.
 */
static void drain_node_zone_first(struct vs_page_pool *pool,
				  unsigned int node)
{
	struct zone *z = &pool->zone[node];
	uint32_t moved = 0;
	size_t s;

	vs_spin_lock(&z->lock);
	for (s = 0; s < VS_SLOT_ARRAY; s++) {
		if (vs_read_once(&pool->pcp[s][node].count) == 0)
			continue;
		pcp_lock(&pool->pcp[s][node]);
		moved += pcp_drain_locked(pool, z, &pool->pcp[s][node], node,
					  UINT32_MAX);
		pcp_unlock(&pool->pcp[s][node]);
	}
	vs_spin_unlock(&z->lock);
	KCHARGE(pool, VS_KSTEP_DRAIN, moved);
}

/* Empty every slot's lists into their zones (drain_all_pages). */
static void drain_all(struct vs_page_pool *pool)
{
	struct pcp *pcp;
	size_t s, i;

	if (VS_BROKEN(drain_all_zone_lock_first)) {
		for (i = 0; i < pool->nr_nodes; i++)
			drain_node_zone_first(pool, (unsigned int)i);
		return;
	}
	for (s = 0; s < VS_SLOT_ARRAY; s++)
		for (i = 0; i < pool->nr_nodes; i++) {
			pcp = &pool->pcp[s][i];
			if (vs_read_once(&pcp->count) == 0)
				continue;
			pcp_lock(pcp);
			(void)pcp_drain(pool, &pool->zone[i], pcp,
					(unsigned int)i, UINT32_MAX);
			pcp_unlock(pcp);
		}
}

/* One page straight from a zone, @node's first, then the others'. */
static uint32_t zone_take(struct vs_page_pool *pool, unsigned int node)
{
	struct zone *z;
	uint32_t pfn = PFN_NONE;
	unsigned int i, n;

	for (i = 0; i < pool->nr_nodes && pfn == PFN_NONE; i++) {
		n = (node + i) % pool->nr_nodes;
		z = &pool->zone[n];
		vs_spin_lock(&z->lock);
		pfn = rmqueue_one(pool, z);
		if (pfn != PFN_NONE) {
			vs_write_once(&z->nr_free,
				      vs_read_once(&z->nr_free) - 1);
			vs__vmstat_mod(pool, n, VS_NR_FREE_PAGES, -1);
		}
		vs_spin_unlock(&z->lock);
	}
	return pfn;
}

/*
 * A page when this slot's lists and every zone are empty: every list is
 * drained into its zone and the zones are tried again, the local one
 * first (the kernel's slow path drains them).  A refill that ran after
 * drain_all() looked at its list holds what the zones lack: drain again
 * while the lists hold pages, so that they never cause an OOM.
 */
uint32_t vs__alloc_slow(struct vs_page_pool *pool, unsigned int node)
{
	uint32_t pfn;
	size_t left;

	do {
		drain_all(pool);
		pfn = zone_take(pool, node);
		/* After every zone's lock was taken: a refill that took
		 * pages before has its list's count published by then. */
		left = pfn == PFN_NONE ? cached(pool) : 0;
	} while (pfn == PFN_NONE && left);
	return pfn;
}

size_t vs__pool_free_pages(struct vs_page_pool *pool)
{
	size_t n = 0, i;

	for (i = 0; i < pool->nr_nodes; i++)
		n += (size_t)vs_read_once(&pool->zone[i].nr_free);
	return n + cached(pool);
}

/* ---- the test hook ------------------------------------------------------- */

/* Pages on @l, or -1 when its links are broken or a page is off @node. */
static long plist_check(struct vs_page_pool *pool, const struct plist *l,
			unsigned int node)
{
	uint32_t pfn = l->first, prev = PFN_NONE;
	long n = 0;

	while (pfn != PFN_NONE) {
		if (pfn > pool->nr_pages || pg(pool, pfn)->lru_prev != prev ||
		    pg(pool, pfn)->node != node || n > (long)pool->nr_pages)
			return -1;
		prev = pfn;
		pfn = pg(pool, pfn)->lru_next;
		n++;
	}
	return prev == l->last ? n : -1;
}

/* Every block on @z's lists: aligned, marked, its buddy not free at its
 * order (it would have merged).  Return: the pages, or -1. */
static long zone_check(struct vs_page_pool *pool, struct zone *z,
		       unsigned int node)
{
	unsigned int o;
	uint32_t pfn, idx;
	long pages = 0, n;

	for (o = 0; o < VS_MAX_ORDER; o++) {
		n = plist_check(pool, &z->free_area[o], node);
		if (n < 0)
			return -1;
		for (pfn = z->free_area[o].first; pfn != PFN_NONE;
		     pfn = pg(pool, pfn)->lru_next) {
			idx = pfn - z->base;
			if ((idx & ((1u << o) - 1)) || !is_buddy(pool, z, idx, o) ||
			    (o + 1 < VS_MAX_ORDER &&
			     is_buddy(pool, z, idx ^ (1u << o), o)))
				return -1;
		}
		pages += n << o;
	}
	return pages == vs_read_once(&z->nr_free) ? pages : -1;
}

int vs__page_pool_check(struct vs_page_pool *pool)
{
	size_t s;
	unsigned int i;
	long n;

	for (i = 0; i < pool->nr_nodes; i++) {
		if (zone_check(pool, &pool->zone[i], i) < 0)
			return -EINVAL;
		for (s = 0; s < VS_SLOT_ARRAY; s++) {
			n = plist_check(pool, &pool->pcp[s][i].list, i);
			if (n != (int32_t)vs_read_once(&pool->pcp[s][i].count))
				return -EINVAL;
		}
		n = plist_check(pool, &pool->zone[i].lru, i);
		if (n < 0)
			return -EINVAL;
	}
	return 0;
}
