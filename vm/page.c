/* SPDX-License-Identifier: MIT */
/*
 * vm/page.c - the page pool: a zone free list and per-slot page caches.
 *
 * Lock order: a slot cache's lock, then the zone lock.  Never the zone
 * lock first, never two slot locks at once.
 *
 * Every slot cache has a lock even though an owned slot has a single
 * user: the shared slot (VS_SLOT_SHARED) has many, a slot passes to a
 * new thread when its owner detaches, and drain_all_caches() empties the
 * caches of other slots.  An owned slot's lock is uncontended: a
 * vs__slot_lock_t, one compare-and-swap and a release store, as the
 * kernel's pcp->lock is a local lock.
 */
#include <vmsim/page.h>

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <vmsim/spinlock.h>
#include <vmsim/thread.h>
#include <vmsim/vcpu_annotate.h>

#include "asan.h"
#include "fail.h"


/*
 * A slot cache refills and drains this many pages at a time (the
 * kernel's pcp batch is 63 on a large zone) ...
 */
#define PCP_BATCH 64
/*
 * ... and holds at most this many: 4 MiB, two rounds of a 2 MiB
 * fault-and-zap loop, so that a thread that frees what it faulted
 * allocates it again without touching the shared free list (the kernel
 * raises pcp->high for such a pattern).  An empty pool drains every
 * cache before it fails, so the caches never cause an OOM.
 */
#define PCP_HIGH 1024

/* pfn 0 is the zero page, never free: it ends every free list. */
#define PFN_NONE 0u
#define ZERO_PFN 0u

/*
 * struct pcp - one slot's page cache
 * @lock: protects @head and the next_free links of the pages on it
 * @head: first free page (a pfn), PFN_NONE when empty
 * @count: pages on the list; written under @lock (by a refill or a
 *         drain under the zone lock too), read without them by
 *         vs_page_pool_free_pages() and drain_all_caches()
 */
struct pcp {
	VS_CACHELINE_ALIGNED vs__slot_lock_t lock;
	uint32_t head;
	vs_atomic32_t count;
};

/*
 * struct vs_page_pool
 * @pages, @nr_pages, @frames, @frames_len: constant after creation
 * @lock: the zone lock; protects @free_head and its pages' links
 * @nr_free: pages on the zone list; written under @lock
 * @pcp: the slot caches, indexed by vs__thread_slot()
 */
struct vs_page_pool {
	struct vs_page *pages;
	size_t nr_pages;
	char *frames;
	size_t frames_len;

	VS_CACHELINE_ALIGNED vs_spinlock_t lock;
	uint32_t free_head;
	vs_atomic_long_t nr_free;

	struct pcp pcp[VS_SLOT_ARRAY];
};

static uint32_t pfn_of(struct vs_page_pool *pool, const struct vs_page *page)
{
	return (uint32_t)(page - pool->pages);
}

/* Push @page on a list headed by *@head.  Caller holds that list's lock. */
static void list_push(struct vs_page_pool *pool, uint32_t *head,
		      struct vs_page *page)
{
	VS__TOUCH(&page->next_free, VS_VCPU_STORE);
	page->next_free = *head;
	*head = pfn_of(pool, page);
}

/* Move up to @n pages from the zone to @pcp.  Caller holds pcp->lock. */
static uint32_t pcp_refill(struct vs_page_pool *pool, struct pcp *pcp,
			   uint32_t n)
{
	struct vs_page *page;
	uint32_t moved = 0;

	vs_spin_lock(&pool->lock);
	while (moved < n && pool->free_head != PFN_NONE) {
		page = &pool->pages[pool->free_head];
		VS__TOUCH(&page->next_free, VS_VCPU_LOAD);
		pool->free_head = page->next_free;
		list_push(pool, &pcp->head, page);
		moved++;
	}
	vs_write_once(&pool->nr_free, vs_read_once(&pool->nr_free) - moved);
	/* Under the zone lock: alloc_slow(), finding the zone empty, sees
	 * that the pages are in a cache (cached_pages()). */
	vs_write_once(&pcp->count, vs_read_once(&pcp->count) + moved);
	vs_spin_unlock(&pool->lock);
	return moved;
}

/* Move up to @n pages from @pcp to the zone.  Caller holds pcp->lock. */
static void pcp_drain(struct vs_page_pool *pool, struct pcp *pcp, uint32_t n)
{
	struct vs_page *page;
	uint32_t moved = 0;

	vs_spin_lock(&pool->lock);
	while (moved < n && pcp->head != PFN_NONE) {
		page = &pool->pages[pcp->head];
		VS__TOUCH(&page->next_free, VS_VCPU_LOAD);
		pcp->head = page->next_free;
		list_push(pool, &pool->free_head, page);
		moved++;
	}
	vs_write_once(&pool->nr_free, vs_read_once(&pool->nr_free) + moved);
	vs_write_once(&pcp->count, vs_read_once(&pcp->count) - moved);
	vs_spin_unlock(&pool->lock);
}

/* Empty every slot cache into the zone (drain_all_pages). */
static void drain_all_caches(struct vs_page_pool *pool)
{
	struct pcp *pcp;
	size_t i;

	for (i = 0; i < VS_ARRAY_SIZE(pool->pcp); i++) {
		pcp = &pool->pcp[i];
		if (vs_read_once(&pcp->count) == 0)
			continue;
		vs__slot_lock(&pcp->lock);
		pcp_drain(pool, pcp, UINT32_MAX);
		vs__slot_unlock(&pcp->lock);
	}
}

static int pool_map(struct vs_page_pool *pool, size_t nr_pages)
{
	size_t i;

	pool->nr_pages = nr_pages;
	pool->pages = calloc(nr_pages + 1, sizeof(*pool->pages));
	if (!pool->pages)
		return -ENOMEM;
	pool->frames_len = (nr_pages + 1) * VS_PAGE_SIZE;
	pool->frames = mmap(NULL, pool->frames_len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (pool->frames == MAP_FAILED) {
		free(pool->pages);
		return -ENOMEM;
	}
	/* The zero page: a store into it is a real fault, not a bug hunt. */
	if (mprotect(pool->frames, VS_PAGE_SIZE, PROT_READ) != 0) {
		munmap(pool->frames, pool->frames_len);
		free(pool->pages);
		return -ENOMEM;
	}
	for (i = 0; i <= nr_pages; i++)
		pool->pages[i].data = pool->frames + i * VS_PAGE_SIZE;
	return 0;
}

int vs_page_pool_create(struct vs_page_pool **poolp, size_t nr_pages)
{
	struct vs_page_pool *pool;
	struct vs_page *zero;
	size_t i;
	int err;

	if (!poolp || nr_pages == 0 || nr_pages > VS_PAGE_POOL_MAX_PAGES)
		return -EINVAL;
	if (vs__fail_alloc(VS_FAIL_SLAB, "vs_page_pool"))
		return -ENOMEM;
	pool = aligned_alloc(VS_CACHELINE, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	memset(pool, 0, sizeof(*pool));
	err = pool_map(pool, nr_pages);
	if (err) {
		free(pool);
		return err;
	}
	vs_spin_lock_init(&pool->lock);
	vs_lockdep_set_class(&pool->lock, "zone_lock");
	vs_vcpu_name(pool->pages, (nr_pages + 1) * sizeof(*pool->pages),
		     "struct vs_page");
	vs_vcpu_name(pool->pcp, sizeof(pool->pcp), "page pool per-slot lists");
	vs_vcpu_name(&pool->lock, sizeof(pool->lock), "page pool zone lock");
	for (i = 0; i < VS_ARRAY_SIZE(pool->pcp); i++) {
		vs_atomic_init(&pool->pcp[i].lock, 0);
		pool->pcp[i].head = PFN_NONE;
		vs_atomic_init(&pool->pcp[i].count, 0);
	}
	/* Lowest pfns first off the zone list: easier to read in a dump. */
	pool->free_head = PFN_NONE;
	for (i = nr_pages; i >= 1; i--)
		list_push(pool, &pool->free_head, &pool->pages[i]);
	vs_atomic_init(&pool->nr_free, (long)nr_pages);
	vs__poison(pool->frames + VS_PAGE_SIZE, nr_pages * VS_PAGE_SIZE);

	zero = &pool->pages[ZERO_PFN];
	vs_atomic_init(&zero->refcount, 1);
	vs_atomic_init(&zero->flags, VS_PG_ZERO | VS_PG_UPTODATE);
	*poolp = pool;
	return 0;
}

int vs_page_pool_destroy(struct vs_page_pool *pool)
{
	size_t i;

	if (!pool)
		return -EINVAL;
	for (i = 1; i <= pool->nr_pages; i++)
		if (vs_load_acquire(&pool->pages[i].refcount) != 0)
			return -EBUSY;
	/* Unpoisoned, so that a later mapping at this address starts clean. */
	vs__unpoison(pool->frames, pool->frames_len);
	munmap(pool->frames, pool->frames_len);
	free(pool->pages);
	free(pool);
	return 0;
}

/* Pages in the slot caches.  Under the zone lock: the pages a refill
 * took from the zone are counted in its cache by then. */
static uint32_t cached_pages(struct vs_page_pool *pool)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < VS_ARRAY_SIZE(pool->pcp); i++)
		n += vs_read_once(&pool->pcp[i].count);
	return n;
}

/*
 * A page from the zone once every slot cache is drained into it.  A
 * refill that ran after drain_all_caches() looked at its cache holds
 * what the zone lacks: drain again while the caches hold pages, so that
 * they never cause an OOM.
 */
static uint32_t alloc_slow(struct vs_page_pool *pool)
{
	uint32_t pfn, cached;

	do {
		drain_all_caches(pool);
		vs_spin_lock(&pool->lock);
		pfn = pool->free_head;
		cached = 0;
		if (pfn != PFN_NONE) {
			VS__TOUCH(&pool->pages[pfn].next_free, VS_VCPU_LOAD);
			pool->free_head = pool->pages[pfn].next_free;
			vs_write_once(&pool->nr_free,
				      vs_read_once(&pool->nr_free) - 1);
		} else {
			cached = cached_pages(pool);
		}
		vs_spin_unlock(&pool->lock);
	} while (pfn == PFN_NONE && cached);
	return pfn;
}

static uint32_t pcp_pop(struct vs_page_pool *pool, struct pcp *pcp)
{
	uint32_t pfn = pcp->head;

	VS__TOUCH(&pool->pages[pfn].next_free, VS_VCPU_LOAD);
	pcp->head = pool->pages[pfn].next_free;
	vs_write_once(&pcp->count, vs_read_once(&pcp->count) - 1);
	return pfn;
}

struct vs_page *vs_alloc_page(struct vs_page_pool *pool)
{
	struct pcp *pcp = &pool->pcp[vs__thread_slot()];
	struct vs_page *page;
	uint32_t pfn = PFN_NONE;

	if (vs__fail_alloc(VS_FAIL_PAGE, NULL))
		return NULL;
	vs__slot_lock(&pcp->lock);
	if (pcp->head != PFN_NONE || pcp_refill(pool, pcp, PCP_BATCH))
		pfn = pcp_pop(pool, pcp);
	vs__slot_unlock(&pcp->lock);
	if (vs_unlikely(pfn == PFN_NONE)) {
		pfn = alloc_slow(pool);
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

/* Give @page, refcount 0, back to the calling slot's cache. */
static void free_page(struct vs_page_pool *pool, struct vs_page *page)
{
	struct pcp *pcp = &pool->pcp[vs__thread_slot()];

	assert(vs_read_once(&page->mapcount) == 0);
	vs__poison(page->data, VS_PAGE_SIZE);
	vs__slot_lock(&pcp->lock);
	list_push(pool, &pcp->head, page);
	vs_write_once(&pcp->count, vs_read_once(&pcp->count) + 1);
	if (vs_read_once(&pcp->count) > PCP_HIGH)
		pcp_drain(pool, pcp, PCP_BATCH);
	vs__slot_unlock(&pcp->lock);
}

void vs_put_page(struct vs_page_pool *pool, struct vs_page *page)
{
	vs_lockdep_assert_not_held(&pool->lock);
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
	free_page(pool, page);
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
	size_t i, n = (size_t)vs_read_once(&pool->nr_free);

	for (i = 0; i < VS_ARRAY_SIZE(pool->pcp); i++)
		n += vs_read_once(&pool->pcp[i].count);
	return n;
}
