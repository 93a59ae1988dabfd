/* SPDX-License-Identifier: MIT */
/*
 * vmsim/page.h - the page allocator of the model.
 *
 * A pool owns nr_pages frames of VS_PAGE_SIZE bytes in one anonymous
 * mapping, and one struct vs_page per frame in a separate array (the
 * kernel's mem_map).  Frame 0 is the shared zero page: pfn 0, read-only
 * (a store into it faults for real), refcount pinned, never on a free
 * list.  The allocatable pages are pfns 1..nr_pages.
 *
 * Free pages sit on a global free list under the pool's zone lock, and
 * on small per-slot caches (the kernel's per-cpu page lists): a slot is
 * vmsim/thread.h's stand-in for "this CPU".  vs_alloc_page() takes from
 * the caller's slot cache and refills it in batches; vs_put_page() frees
 * into the caller's cache and drains a batch when it grows too long.
 * When everything else is empty, an allocation drains every other slot's
 * cache before it fails (the kernel's drain_all_pages()).
 *
 * Locking: docs/locking.md, "struct vs_page and the pool".
 *
 * Under AddressSanitizer the frame of a free page is poisoned, so a
 * store through a stale page->data is reported.
 */
#ifndef VMSIM_PAGE_H
#define VMSIM_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "common.h"
#include "kernel.h"

#define VS_PAGE_SHIFT 12	/* log2 of VS_PAGE_SIZE */
#define VS_PAGE_SIZE (1UL << VS_PAGE_SHIFT)	/* bytes in a page, 4096 */
#define VS_PAGE_MASK (~(VS_PAGE_SIZE - 1))	/* clears the page offset */

/**
 * VS_PAGE_POOL_MAX_PAGES - the largest pool: 1 TiB of frames (reserved
 * lazily, MAP_NORESERVE)
 */
#define VS_PAGE_POOL_MAX_PAGES (1UL << 28)

/* page->flags */
#define VS_PG_ZERO (1u << 0)    /* the shared zero page */
#define VS_PG_DIRTY (1u << 1)   /* written since it was last cleaned */
#define VS_PG_ANON (1u << 2)    /* anonymous memory */
#define VS_PG_FILE (1u << 3)    /* in a file's page cache */
#define VS_PG_UPTODATE (1u << 4) /* contents valid (page cache) */
#define VS_PG_LRU (1u << 5)     /* on an LRU list (private) */
#define VS_PG_BUDDY (1u << 6)   /* heads a free buddy block (private) */

/**
 * struct vs_page - metadata of one frame: one 64-byte cache line, as the
 * kernel's struct page
 * @refcount: references; 0 means free.  Public, atomic.
 * @mapcount: PTEs mapping the page.  Public, atomic; the caller that
 *            sets or clears a PTE adjusts it under that PTE's lock.
 * @flags: VS_PG_*.  Public, atomic (vs_page_set_flags ...).
 * @order: a free buddy block's order, on its first page.  Private.
 * @lru_next, @lru_prev: the links of the one list the page is on: a
 *            buddy list, a per-CPU list or an LRU list (pfns; 0 ends
 *            it).  Private.
 * @node: the node whose zone the page belongs to.  Constant.
 * @data: the frame, VS_PAGE_SIZE bytes.  Read-only.
 * @mapping: the owner (an anon_vma or a file), set by the owner under
 *           its own lock; NULL when the page is allocated.  Public.
 * @memcg_data: the memory cgroup that owns the page (kernels that keep
 *           it in struct page; 0: none).  Private.
 * @pad_: fills the line.  Private.
 */
struct vs_page {
	VS_CACHELINE_ALIGNED vs_atomic32_t refcount;
	vs_atomic32_t mapcount;
	vs_atomic32_t flags;
	uint16_t order;
	uint16_t node;
	uint32_t lru_next;
	uint32_t lru_prev;
	void *data;
	void *mapping;
	vs_atomic_long_t memcg_data;
	char pad_[16];
};

struct vs_page_pool;

/**
 * vs_page_pool_create - make a pool of @nr_pages pages plus the zero page
 * @pool: set to the new pool on success
 * @nr_pages: allocatable pages, 1..VS_PAGE_POOL_MAX_PAGES
 *
 * Context: any; may sleep.
 * Return: 0, -EINVAL for a size out of range, -ENOMEM.
 */
VS_EXTERN int vs_page_pool_create(struct vs_page_pool **pool,
				  size_t nr_pages);

/**
 * vs_page_pool_create_kernel - vs_page_pool_create() following @kernel
 * @pool: set to the new pool on success
 * @nr_pages: allocatable pages, 1..VS_PAGE_POOL_MAX_PAGES
 * @kernel: the kernel profile (vmsim/kernel.h) whose batch sizes and
 *	costs the pool follows, copied; NULL: vs_kernel_load(NULL)'s
 *
 * vs_page_pool_create() is this with @kernel NULL.  Made on a vCPU of a
 * machine with a profile, the pool has a node per socket.
 * Context: any; may sleep.
 * Return: 0, -EINVAL for a size out of range, -ENOMEM, or
 * vs_kernel_load()'s error for a bad $VMSIM_KERNEL.
 */
VS_EXTERN int vs_page_pool_create_kernel(struct vs_page_pool **pool,
					 size_t nr_pages,
					 const struct vs_kernel *kernel);

/**
 * vs_page_pool_destroy - free a pool whose pages are all free
 *
 * A page other than the zero page that is still referenced makes it
 * fail and free nothing (a leak report rather than a use-after-free).
 *
 * Context: no other thread uses @pool.
 * Return: 0, -EINVAL for NULL, -EBUSY when a page is still referenced.
 */
VS_EXTERN int vs_page_pool_destroy(struct vs_page_pool *pool);

/**
 * vs_alloc_page - take a free page: refcount 1, mapcount 0, flags 0
 *
 * The contents are whatever the last owner left: clear or copy the page
 * outside any lock, before publishing it (as the kernel's
 * alloc_page_vma() then clear_user_highpage()).
 *
 * Context: any thread; no spinlock held (a PTL, a pool lock): 6.18's
 * GFP_KERNEL allocation may sleep (might_alloc(), which a lockdep build
 * checks).  Takes the slot and zone locks; it may drain every slot
 * cache when memory is short.
 * Return: the page, or NULL when the pool is exhausted.
 */
VS_EXTERN struct vs_page *vs_alloc_page(struct vs_page_pool *pool);

/**
 * vs_put_page - drop a reference; free the page at zero
 *
 * The zero page is never freed.  The final put must find mapcount 0.
 *
 * Context: any thread, any lock held except the pool's own.
 */
VS_EXTERN void vs_put_page(struct vs_page_pool *pool, struct vs_page *page);

/**
 * vs_clear_page - fill the frame with zeroes
 * @page: the page
 *
 * Context: the page's owner, before the page is published in a PTE.
 */
VS_EXTERN void vs_clear_page(struct vs_page *page);

/**
 * vs_copy_page - copy @src's frame into @dst's (copy-on-write)
 * @dst: the new page, not yet published
 * @src: the page copied; a reference or its PTE's lock keeps it alive
 *
 * Context: the owner of @dst, before @dst is published in a PTE.
 */
VS_EXTERN void vs_copy_page(struct vs_page *dst, const struct vs_page *src);

/**
 * vs_zero_page - the pool's shared zero page
 *
 * Always zero (its frame is read-only), refcount pinned at 1 plus the
 * references taken with vs_get_page().
 * Context: any.
 * Return: the zero page (pfn 0).
 */
VS_EXTERN struct vs_page *vs_zero_page(struct vs_page_pool *pool);

/**
 * vs_page_to_pfn - the index of @page in @pool (page_to_pfn)
 * @pool: the pool
 * @page: a page of @pool
 *
 * Context: any.
 * Return: the pfn; 0 is the zero page.
 */
VS_EXTERN unsigned long vs_page_to_pfn(struct vs_page_pool *pool,
				       struct vs_page *page);

/**
 * vs_pfn_to_page - the page of @pfn (pfn_to_page)
 * @pool: the pool
 * @pfn: 0..vs_page_pool_size()
 *
 * Context: any.  The page may be free: the caller knows it is not (a PTE
 * maps it, under the PTE's lock), or takes a reference with
 * vs_get_page_unless_zero().
 * Return: the page, or NULL when @pfn is out of range.
 */
VS_EXTERN struct vs_page *vs_pfn_to_page(struct vs_page_pool *pool,
					 unsigned long pfn);

/**
 * vs_page_pool_size - allocatable pages (the zero page not counted)
 * @pool: the pool
 *
 * Context: any.
 * Return: the nr_pages given to vs_page_pool_create().
 */
VS_EXTERN size_t vs_page_pool_size(struct vs_page_pool *pool);

/**
 * vs_page_pool_free_pages - free pages: global list plus every cache
 *
 * Context: any.  Exact when no allocation or free is in flight; a
 * snapshot otherwise.
 * Return: the number of free pages.
 */
VS_EXTERN size_t vs_page_pool_free_pages(struct vs_page_pool *pool);

/**
 * vs_get_page - take a reference on a page the caller already holds
 * one on (or that a PTE, under its lock, maps)
 *
 * Relaxed: acquiring a reference orders nothing by itself; the reference
 * that the caller already holds keeps the page alive.
 *
 * Context: any; never sleeps.
 */
static inline void vs_get_page(struct vs_page *page)
{
	vs_fetch_add_relaxed(&page->refcount, 1);
}

/**
 * vs_get_page_unless_zero - take a reference unless the page is free
 *
 * For lockless lookups (get_page_unless_zero): fully ordered on success,
 * so the caller's later reads of the page cannot move before it.
 *
 * Context: any; never sleeps.  The struct vs_page itself is never freed
 * while the pool lives, so a stale pointer is safe to try.
 * Return: 1 when a reference was taken, 0 when the page was free.
 */
static inline int vs_get_page_unless_zero(struct vs_page *page)
{
	uint32_t old = vs_read_once(&page->refcount);

	while (old != 0)
		if (vs_cmpxchg(&page->refcount, &old, old + 1))
			return 1;
	return 0;
}

/**
 * vs_page_count - the reference count of @page (page_count)
 * @page: the page
 *
 * Context: any; a snapshot unless the caller excludes the other holders.
 * Return: the references; 0 for a free page.
 */
static inline uint32_t vs_page_count(struct vs_page *page)
{
	return vs_read_once(&page->refcount);
}

/**
 * vs_page_mapcount - the PTEs mapping @page (page_mapcount)
 * @page: the page
 *
 * Context: any; exact for the PTEs whose locks the caller holds.
 * Return: the map count.
 */
static inline uint32_t vs_page_mapcount(struct vs_page *page)
{
	return vs_read_once(&page->mapcount);
}

/* Mapping count changes, by whoever sets or clears a PTE for the page. */

/**
 * vs_page_add_mapcount - count one more PTE mapping @page
 * @page: the page
 *
 * Context: the lock of the PTE being set is held, or, for a child's PTE
 * in vs_fork(), the parent's (the child is not yet visible).
 */
static inline void vs_page_add_mapcount(struct vs_page *page)
{
	vs_fetch_add_relaxed(&page->mapcount, 1);
}

/**
 * vs_page_remove_mapcount - count one PTE fewer mapping @page
 * @page: the page
 *
 * Fully ordered.
 *
 * Context: the lock of the PTE being cleared is held.
 */
static inline void vs_page_remove_mapcount(struct vs_page *page)
{
	vs_fetch_sub(&page->mapcount, 1);
}

/**
 * vs_page_add_rmap - a PTE now maps @page: its map count, and for the
 * first mapping of an anonymous page the NR_ANON_MAPPED counter
 * (page_add_anon_rmap)
 * @pool: its pool
 * @page: the page, not the zero page
 *
 * Context: as vs_page_add_mapcount().
 */
VS_EXTERN void vs_page_add_rmap(struct vs_page_pool *pool,
				struct vs_page *page);

/**
 * vs_page_remove_rmap - a PTE no longer maps @page (page_remove_rmap)
 * @pool: its pool
 * @page: the page, not the zero page
 *
 * Context: as vs_page_remove_mapcount().
 */
VS_EXTERN void vs_page_remove_rmap(struct vs_page_pool *pool,
				   struct vs_page *page);

/**
 * vs_page_set_flags - set the flags @f of @page, atomically
 * @page: the page
 * @f: VS_PG_* bits
 *
 * Context: any; the caller owns the page or holds a reference.
 */
static inline void vs_page_set_flags(struct vs_page *page, uint32_t f)
{
	vs_fetch_or(&page->flags, f);
}

/**
 * vs_page_clear_flags - clear the flags @f of @page, atomically
 * @page: the page
 * @f: VS_PG_* bits
 *
 * Context: any; the caller owns the page or holds a reference.
 */
static inline void vs_page_clear_flags(struct vs_page *page, uint32_t f)
{
	vs_fetch_and(&page->flags, ~f);
}

/**
 * vs_page_test_flags - is any of the flags @f set on @page?
 * @page: the page
 * @f: VS_PG_* bits
 *
 * Context: any; unordered, a snapshot.
 * Return: 1 when at least one bit of @f is set, 0 otherwise.
 */
static inline int vs_page_test_flags(struct vs_page *page, uint32_t f)
{
	return (vs_read_once(&page->flags) & f) != 0;
}

/**
 * enum vs_vmstat_item - what the pool counts, as the kernel's vmstat
 * @VS_NR_FREE_PAGES: pages on the buddy lists (not on per-CPU lists)
 * @VS_NR_ANON_MAPPED: anonymous pages mapped (NR_ANON_PAGES)
 * @VS_NR_LRU: pages on an LRU list
 * @VS_NR_VMSTAT: the number of items
 */
enum vs_vmstat_item {
	VS_NR_FREE_PAGES,
	VS_NR_ANON_MAPPED,
	VS_NR_LRU,
	VS_NR_VMSTAT,
};

/**
 * vs_page_pool_stat - a vmstat counter of the pool
 * @pool: the pool
 * @item: an enum vs_vmstat_item
 * @exact: 0 for the global counter alone, as the kernel's
 *	global_zone_page_state() (off by up to the CPUs' diffs, never
 *	below 0); 1 to add every CPU's diff
 *
 * Context: any; exact only when nothing changes meanwhile.
 * Return: the count, or -EINVAL for a NULL pool or a bad @item.
 */
VS_EXTERN long vs_page_pool_stat(struct vs_page_pool *pool, int item,
				 int exact);

/**
 * vs_release_pages - drop a reference on each of @pages, as the kernel's
 * release_pages(): the pages that reach zero leave their LRU under one
 * hold of its lock per lru_lock_batch pages, then go to this CPU's
 * per-CPU lists
 * @pool: their pool
 * @pages: the pages; the zero page may be among them
 * @nr: how many
 *
 * @pages is the function's scratch: what it holds afterwards is
 * undefined.
 * Context: any thread, no pool lock held.
 */
VS_EXTERN void vs_release_pages(struct vs_page_pool *pool,
				struct vs_page **pages, size_t nr);

/**
 * vs_lru_add - put a page just made (a new anonymous page, a page-cache
 * page) on its node's LRU through this CPU's batch (lru_cache_add)
 * @pool: its pool
 * @page: the page, whose reference the caller holds; the batch takes
 *	one more until it drains
 *
 * A NULL @pool or @page does nothing.
 * Context: any thread, no pool lock held.
 */
VS_EXTERN void vs_lru_add(struct vs_page_pool *pool, struct vs_page *page);

/**
 * vs_lru_drain - add this CPU's batch to the LRU now (lru_add_drain)
 * @pool: the pool
 *
 * Context: any thread, no pool lock held.
 */
VS_EXTERN void vs_lru_drain(struct vs_page_pool *pool);

/**
 * vs_lru_drain_all - add every CPU's batch to the LRU (lru_add_drain_all)
 * @pool: the pool
 *
 * A page in a batch holds a reference of the batch's: a caller that
 * compares a page's references with its mappings drains first, as the
 * kernel's callers of lru_add_drain_all() do.
 * Context: any thread, no pool lock held.
 */
VS_EXTERN void vs_lru_drain_all(struct vs_page_pool *pool);

/**
 * vs_memcg_charge - charge a new page to the (root) memory cgroup
 * @pool: its pool
 * @page: the page, not yet mapped
 *
 * The root group has no counter to charge (3.18 skips its res_counter,
 * later kernels its page_counter): what is left is recording the
 * owner, in 3.18's page_cgroup or in page->memcg_data.
 * Context: the page's owner.
 */
VS_EXTERN void vs_memcg_charge(struct vs_page_pool *pool,
			       struct vs_page *page);

/**
 * vs_page_pool_kernel - the kernel profile the pool follows
 * @pool: the pool
 *
 * Context: any.
 * Return: the profile, constant while the pool lives; NULL for a NULL
 * @pool.
 */
VS_EXTERN const struct vs_kernel *vs_page_pool_kernel(
	struct vs_page_pool *pool);

#endif /* VMSIM_PAGE_H */
