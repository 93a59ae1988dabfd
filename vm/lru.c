/* SPDX-License-Identifier: MIT */
/*
 * vm/lru.c - a page's life between its allocation and its free: the LRU
 * lists and their per-CPU batches, the memcg's per-page record, and the
 * batched release of pages (mm/swap.c: lru_cache_add, release_pages;
 * mm/memcontrol.c: commit_charge, uncharge).
 *
 * The model keeps one LRU list a node (the kernel has several, by kind
 * and age, per zone in 3.18 and per node and memcg later; the
 * benchmark's pages all sit on the active anonymous one of the root
 * group).  Adding a page writes its neighbour's links and the list's
 * head under the node's lru_lock; taking it off writes both
 * neighbours'.
 */
#include <assert.h>

#include <vmsim/vcpu_annotate.h>

#include "page_internal.h"

#define PCG_USED 1u
#define ROOT_MEMCG 1L	/* the root group, the only one the model has */

static struct lru_batch *this_batch(struct vs_page_pool *pool)
{
	return &pool->lru[vs__thread_slot()];
}

/* Take @b's lock (6.18's local_lock of its folio_batch), a spinlock of
 * class lru_batch_lock to lockdep.  Context: no other pool lock held
 * (page_internal.h). */
static void batch_lock(struct lru_batch *b)
{
	VS__LD(vs__lockdep_acquire(&b->dep_map, &b->lock, 0, VS__LD_ATOMIC,
				   VS__LD_IP));
	vs__slot_lock(&b->lock);
}

/* Context: the caller holds @b's lock. */
static void batch_unlock(struct lru_batch *b)
{
	VS__LD(vs__lockdep_release(&b->dep_map, &b->lock));
	vs__slot_unlock(&b->lock);
}

/* Add the batch's pages to their LRUs, switching the lru_lock when the
 * node changes (__pagevec_lru_add); then drop the batch's references.
 * Caller holds b->lock. */
static void batch_drain(struct vs_page_pool *pool, struct lru_batch *b)
{
	struct vs_page *pages[VS_KERNEL_LRU_BATCH_MAX], *p;
	struct zone *z = NULL;
	uint32_t i, nr = b->nr;

	for (i = 0; i < nr; i++) {
		p = &pool->pages[b->pfn[i]];
		pages[i] = p;
		if (z != page_zone(pool, p)) {
			if (z)
				vs_spin_unlock(&z->lru_lock);
			z = page_zone(pool, p);
			vs_spin_lock(&z->lru_lock);
		}
		vs__plist_add(pool, &z->lru, b->pfn[i]);
		vs_page_set_flags(p, VS_PG_LRU);
		vs__vmstat_mod(pool, p->node, VS_NR_LRU, 1);
	}
	if (z)
		vs_spin_unlock(&z->lru_lock);
	b->nr = 0;
	KCHARGE(pool, VS_KSTEP_LRU_ADD, nr);
	vs_release_pages(pool, pages, nr);
}

void vs_lru_add(struct vs_page_pool *pool, struct vs_page *page)
{
	struct lru_batch *b;

	if (!pool || !page)
		return;
	b = this_batch(pool);
	vs_get_page(page);
	batch_lock(b);
	b->pfn[b->nr++] = pfn_of(pool, page);
	if (b->nr == pool->kernel.lru_batch)
		batch_drain(pool, b);
	batch_unlock(b);
}

void vs_lru_drain(struct vs_page_pool *pool)
{
	struct lru_batch *b;

	if (!pool)
		return;
	b = this_batch(pool);
	batch_lock(b);
	if (b->nr)
		batch_drain(pool, b);
	batch_unlock(b);
}

void vs_lru_drain_all(struct vs_page_pool *pool)
{
	struct lru_batch *b;
	size_t i;

	for (i = 0; pool && i < VS_SLOT_ARRAY; i++) {
		b = &pool->lru[i];
		if (!b->nr)
			continue;
		batch_lock(b);
		if (b->nr)
			batch_drain(pool, b);
		batch_unlock(b);
	}
}

/*
 * Take @page, refcount 0, off its LRU.  Nobody else may change the
 * flags of a page nobody holds: a load and a store clear the flag, as
 * the kernel's __ClearPageLRU().  Caller holds its lru_lock.
 */
void vs__lru_del_locked(struct vs_page_pool *pool, struct vs_page *page)
{
	vs_lockdep_assert_held(&page_zone(pool, page)->lru_lock);
	vs__plist_del(pool, &page_zone(pool, page)->lru, pfn_of(pool, page));
	vs_write_once(&page->flags, vs_read_once(&page->flags) & ~VS_PG_LRU);
	vs__vmstat_mod(pool, page->node, VS_NR_LRU, -1);
}

void vs_memcg_charge(struct vs_page_pool *pool, struct vs_page *page)
{
	struct vs_page_cgroup *pc;

	if (!pool || !page)
		return;
	if (!pool->page_cgroup) {
		vs_write_once(&page->memcg_data, ROOT_MEMCG);
		return;
	}
	pc = &pool->page_cgroup[pfn_of(pool, page)];
	vs_write_once(&pc->mem_cgroup, ROOT_MEMCG);
	vs_write_once(&pc->flags, PCG_USED);
}

/* The page's owner forgets it (uncharge_list's per-page part). */
void vs__memcg_uncharge(struct vs_page_pool *pool, struct vs_page *page)
{
	struct vs_page_cgroup *pc;

	if (!pool->page_cgroup) {
		if (vs_read_once(&page->memcg_data))
			vs_write_once(&page->memcg_data, 0);
		return;
	}
	pc = &pool->page_cgroup[pfn_of(pool, page)];
	if (vs_read_once(&pc->flags) & PCG_USED)
		vs_write_once(&pc->flags, 0);
}

/*
 * The pages of @pages whose last reference this drops: off their LRUs,
 * one hold of a node's lru_lock for at most lru_lock_batch pages, as
 * release_pages() does; returns how many it left in @pages to free.
 */
static size_t release_lru(struct vs_page_pool *pool, struct vs_page **pages,
			  size_t nr)
{
	struct zone *z = NULL;
	uint32_t held = 0;
	size_t i, n = 0;

	for (i = 0; i < nr; i++) {
		struct vs_page *p = pages[i];

		if (z && ++held == pool->kernel.lru_lock_batch) {
			vs_spin_unlock(&z->lru_lock);
			z = NULL;
		}
		if (vs_fetch_sub(&p->refcount, 1) != 1 ||
		    pfn_of(pool, p) == 0)
			continue;
		if (vs_page_test_flags(p, VS_PG_LRU)) {
			if (z != page_zone(pool, p)) {
				if (z)
					vs_spin_unlock(&z->lru_lock);
				z = page_zone(pool, p);
				vs_spin_lock(&z->lru_lock);
				held = 0;
			}
			vs__lru_del_locked(pool, p);
		}
		pages[n++] = p;
	}
	if (z)
		vs_spin_unlock(&z->lru_lock);
	return n;
}

void vs_release_pages(struct vs_page_pool *pool, struct vs_page **pages,
		      size_t nr)
{
	size_t i, n;

	if (!pool || !pages)
		return;
	KCHARGE(pool, VS_KSTEP_RELEASE, nr);
	n = release_lru(pool, pages, nr);
	for (i = 0; i < n; i++)
		vs__memcg_uncharge(pool, pages[i]);
	vs__free_pages(pool, pages, n);
}
