/* SPDX-License-Identifier: MIT */
/*
 * vm/page.c - the page pool: its creation, struct page, and the public
 * allocation and free of pages.  The zones and per-CPU lists are
 * buddy.c's, the LRU and the release of pages lru.c's, the counters
 * vmstat.c's (vm/page_internal.h says how they fit).
 *
 * A pool made on a vCPU of a machine with a profile has a node per
 * socket, its pfns split evenly among them; a vCPU allocates from its
 * own socket's node (the kernel's default local policy).  A pool made
 * on a host thread has one node.
 */
#include <vmsim/page.h>

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vmsim/vcpu_annotate.h>

#include "asan.h"
#include "fail.h"
#include "internal.h"
#include "page_internal.h"

#define ZERO_PFN 0u

static unsigned int this_node(struct vs_page_pool *pool)
{
	int node = vs_vcpu_node();

	return node < 0 ? 0 : (unsigned int)node % pool->nr_nodes;
}

static void *map_array(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static size_t pages_bytes(const struct vs_page_pool *pool)
{
	return (pool->nr_pages + 1) * sizeof(struct vs_page);
}

static size_t cgroup_bytes(const struct vs_page_pool *pool)
{
	return (pool->nr_pages + 1) * sizeof(struct vs_page_cgroup);
}

static void pool_unmap(struct vs_page_pool *pool)
{
	if (pool->frames)
		munmap(pool->frames, pool->frames_len);
	if (pool->pages)
		munmap(pool->pages, pages_bytes(pool));
	if (pool->page_cgroup)
		munmap(pool->page_cgroup, cgroup_bytes(pool));
}

static int pool_map(struct vs_page_pool *pool, size_t nr_pages)
{
	size_t i;

	pool->nr_pages = nr_pages;
	pool->pages = map_array(pages_bytes(pool));
	if (pool->kernel.memcg == VS_MEMCG_PAGE_CGROUP)
		pool->page_cgroup = map_array(cgroup_bytes(pool));
	pool->frames_len = (nr_pages + 1) * VS_PAGE_SIZE;
	pool->frames = map_array(pool->frames_len);
	if (!pool->pages || !pool->frames ||
	    (pool->kernel.memcg == VS_MEMCG_PAGE_CGROUP && !pool->page_cgroup))
		goto fail;
	/* The zero page: a store into it is a real fault, not a bug hunt. */
	if (mprotect(pool->frames, VS_PAGE_SIZE, PROT_READ) != 0)
		goto fail;
	for (i = 0; i <= nr_pages; i++)
		pool->pages[i].data = pool->frames + i * VS_PAGE_SIZE;
	return 0;
fail:
	pool_unmap(pool);
	return -ENOMEM;
}

/* The most a slot's list of a zone of @span pages keeps, its node
 * having @cpus CPUs (zone_highsize()). */
static uint32_t zone_pcp_high(const struct vs_kernel *k, size_t span,
			      unsigned int cpus)
{
	size_t high;

	if (!k->pcp_high_fraction)
		return k->pcp_high;
	high = span / k->pcp_high_fraction / (cpus ? cpus : 1);
	if (high < 4 * (size_t)k->pcp_batch)
		high = 4 * (size_t)k->pcp_batch;
	return high < k->pcp_high ? (uint32_t)high : k->pcp_high;
}

/*
 * The size of the zone the kernel would have, for its per-CPU lists'
 * high and its vmstat threshold: on host threads the host's memory, a
 * node's share of it (the pool is a slice of the host's memory); on
 * vCPUs, whose profiles give no memory size, the pool's zone of @span
 * pages.
 */
static size_t zone_size(size_t span, unsigned int nodes)
{
	long phys = sysconf(_SC_PHYS_PAGES);

	if (vs_vcpu_node() >= 0 || phys <= 0)
		return span;
	return (size_t)phys / nodes;
}

/* Split pfns 1..nr_pages among the nodes, a zone each. */
static void pool_zones(struct vs_page_pool *pool)
{
	unsigned int nodes = vs_vcpu_nr_nodes(), i, cpus = vs_vcpu_nr_cpus();
	size_t per, base = 1, span, size, p;

	if (nodes > VS_MAX_NODES)
		nodes = VS_MAX_NODES;
	if (nodes > pool->nr_pages)
		nodes = (unsigned int)pool->nr_pages;
	pool->nr_nodes = nodes;
	per = pool->nr_pages / nodes;
	for (i = 0; i < nodes; i++) {
		span = i + 1 < nodes ? per : pool->nr_pages + 1 - base;
		for (p = base; p < base + span; p++)
			pool->pages[p].node = (uint16_t)i;
		vs__zone_init(pool, &pool->zone[i], (uint32_t)base,
			      (uint32_t)span);
		size = zone_size(span, nodes);
		pool->zone[i].threshold =
			vs_kernel_vmstat_threshold(&pool->kernel, cpus, size);
		pool->zone[i].pcp_high =
			zone_pcp_high(&pool->kernel, size, cpus / nodes);
		vs_atomic_init(&pool->zone[i].vm_stat[VS_NR_FREE_PAGES],
			       (long)span);
		base += span;
	}
	vs_atomic_init(&pool->vm_stat[VS_NR_FREE_PAGES], (long)pool->nr_pages);
}

/* The lockdep classes of the slots' locks (page_internal.h); a pool is
 * born zeroed, each lock unlocked and without a class. */
static void pool_lock_classes(struct vs_page_pool *pool)
{
	size_t s, i;

	for (s = 0; s < VS_SLOT_ARRAY; s++) {
		vs_lockdep_set_class(&pool->lru[s], "lru_batch_lock");
		for (i = 0; i < pool->nr_nodes; i++)
			vs_lockdep_set_class(&pool->pcp[s][i], "pcp_lock");
	}
}

static void pool_name(struct vs_page_pool *pool)
{
	vs_vcpu_name(pool->pages, pages_bytes(pool), "struct page");
	if (pool->page_cgroup)
		vs_vcpu_name(pool->page_cgroup, cgroup_bytes(pool),
			     "page_cgroup");
	vs_vcpu_name(pool->pcp, sizeof(pool->pcp), "per-CPU page lists");
	vs_vcpu_name(pool->lru, sizeof(pool->lru), "per-CPU LRU batches");
	vs_vcpu_name(pool->zone, sizeof(pool->zone), "zone");
	vs_vcpu_name(pool->vm_stat, sizeof(pool->vm_stat), "vm_stat");
}

int vs_page_pool_create_kernel(struct vs_page_pool **poolp, size_t nr_pages,
			       const struct vs_kernel *kernel)
{
	struct vs_page_pool *pool;
	struct vs_page *zero;
	int err;

	if (!poolp || nr_pages == 0 || nr_pages > VS_PAGE_POOL_MAX_PAGES)
		return -EINVAL;
	if (vs__fail_alloc(VS_FAIL_SLAB, "vs_page_pool"))
		return -ENOMEM;
	pool = map_array(sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	if (kernel)
		pool->kernel = *kernel;
	else if ((err = vs_kernel_load(&pool->kernel, NULL, NULL, 0)) != 0)
		goto fail;
	err = pool_map(pool, nr_pages);
	if (err)
		goto fail;
	pool_zones(pool);
	pool_lock_classes(pool);
	pool_name(pool);
	vs__poison(pool->frames + VS_PAGE_SIZE, nr_pages * VS_PAGE_SIZE);
	zero = &pool->pages[ZERO_PFN];
	vs_atomic_init(&zero->refcount, 1);
	vs_atomic_init(&zero->flags, VS_PG_ZERO | VS_PG_UPTODATE);
	*poolp = pool;
	return 0;
fail:
	munmap(pool, sizeof(*pool));
	return err;
}

int vs_page_pool_create(struct vs_page_pool **poolp, size_t nr_pages)
{
	return vs_page_pool_create_kernel(poolp, nr_pages, NULL);
}

int vs_page_pool_destroy(struct vs_page_pool *pool)
{
	size_t i;

	if (!pool)
		return -EINVAL;
	vs_lru_drain_all(pool);
	for (i = 1; i <= pool->nr_pages; i++)
		if (vs_load_acquire(&pool->pages[i].refcount) != 0)
			return -EBUSY;
	/* Unpoisoned, so that a later mapping at this address starts clean. */
	vs__unpoison(pool->frames, pool->frames_len);
	pool_unmap(pool);
	munmap(pool, sizeof(*pool));
	return 0;
}

struct vs_page *vs_alloc_page(struct vs_page_pool *pool)
{
	/* 6.18's alloc_pages() of a GFP_KERNEL page: might_alloc(). */
	VS__LD(vs__lockdep_might_alloc("vs_alloc_page()"));
	return vs__alloc_page_nowait(pool);
}

struct vs_page *vs__alloc_page_nowait(struct vs_page_pool *pool)
{
	unsigned int node = this_node(pool), i;
	struct vs_page *page;
	uint32_t pfn;

	if (vs__fail_alloc(VS_FAIL_PAGE, NULL))
		return NULL;
	KCHARGE(pool, VS_KSTEP_ALLOC, 1);
	pfn = vs__pcp_alloc(pool, node);
	/* The local zone is dry: the others', through this slot's lists
	 * for them, as the kernel's zonelist falls back node by node. */
	for (i = 1; pfn == PFN_NONE && i < pool->nr_nodes; i++)
		pfn = vs__pcp_alloc(pool, (node + i) % pool->nr_nodes);
	if (vs_unlikely(pfn == PFN_NONE)) {
		pfn = vs__alloc_slow(pool, node);
		if (pfn == PFN_NONE)
			return NULL;
	}
	page = &pool->pages[pfn];
	vs__unpoison(page->data, VS_PAGE_SIZE);
	assert(vs_read_once(&page->refcount) == 0);
	assert(vs_read_once(&page->mapcount) == 0);
	page->mapping = NULL;
	vs_write_once(&page->flags, 0);
	/*
	 * Release: a lockless vs_get_page_unless_zero() that sees the new
	 * count also sees the fields above (its cmpxchg is fully ordered).
	 */
	vs_store_release(&page->refcount, 1);
	return page;
}

/* Give @pages, refcount 0 and off every LRU, to this CPU's lists of
 * their zones (free_hot_cold_page_list, free_unref_folios). */
void vs__free_pages(struct vs_page_pool *pool, struct vs_page **pages,
		    size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		assert(vs_read_once(&pages[i]->mapcount) == 0);
		assert(!vs_page_test_flags(pages[i], VS_PG_LRU));
		vs__poison(pages[i]->data, VS_PAGE_SIZE);
	}
	KCHARGE(pool, VS_KSTEP_FREE, n);
	vs__pcp_free(pool, pages, n);
}

void vs__free_page(struct vs_page_pool *pool, struct vs_page *page)
{
	vs__free_pages(pool, &page, 1);
}

void vs_put_page(struct vs_page_pool *pool, struct vs_page *page)
{
	struct zone *z;

	vs_lockdep_assert_not_held(&page_zone(pool, page)->lock);
	/*
	 * Fully ordered, like the kernel's put_page(): every access of the
	 * page by this reference holder happens before the free, and the
	 * thread that drops the last reference sees all other holders'
	 * accesses before it frees (and a new owner reuses) the frame.
	 */
	if (vs_fetch_sub(&page->refcount, 1) != 1)
		return;
	if (vs_unlikely(pfn_of(pool, page) == ZERO_PFN))
		return; /* unbalanced puts of the zero page: never free it */
	if (vs_page_test_flags(page, VS_PG_LRU)) {	/* __page_cache_release */
		z = page_zone(pool, page);
		vs_spin_lock(&z->lru_lock);
		vs__lru_del_locked(pool, page);
		vs_spin_unlock(&z->lru_lock);
	}
	vs__memcg_uncharge(pool, page);
	vs__free_page(pool, page);
}

void vs_clear_page(struct vs_page *page)
{
	VS_VCPU_WORK(VS_VCPU_CLEAR, page->data, VS_PAGE_SIZE);
	memset(page->data, 0, VS_PAGE_SIZE);
}

void vs_copy_page(struct vs_page *dst, const struct vs_page *src)
{
	VS_VCPU_WORK(VS_VCPU_COPY, dst->data, VS_PAGE_SIZE);
	memcpy(dst->data, src->data, VS_PAGE_SIZE);
}

struct vs_page *vs_zero_page(struct vs_page_pool *pool)
{
	return &pool->pages[ZERO_PFN];
}

unsigned long vs_page_to_pfn(struct vs_page_pool *pool, struct vs_page *page)
{
	return pfn_of(pool, page);
}

struct vs_page *vs_pfn_to_page(struct vs_page_pool *pool, unsigned long pfn)
{
	if (pfn > pool->nr_pages)
		return NULL;
	return &pool->pages[pfn];
}

size_t vs_page_pool_size(struct vs_page_pool *pool)
{
	return pool->nr_pages;
}

size_t vs_page_pool_free_pages(struct vs_page_pool *pool)
{
	return vs__pool_free_pages(pool);
}

const struct vs_kernel *vs_page_pool_kernel(struct vs_page_pool *pool)
{
	return pool ? &pool->kernel : NULL;
}
