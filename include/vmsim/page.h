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

/**
 * struct vs_page - metadata of one frame (32 bytes)
 * @refcount: references; 0 means free.  Public, atomic.
 * @mapcount: PTEs mapping the page.  Public, atomic; the caller that
 *            sets or clears a PTE adjusts it under that PTE's lock.
 * @flags: VS_PG_*.  Public, atomic (vs_page_set_flags ...).
 * @next_free: free-list link (a pfn; 0 ends the list).  Private.
 * @data: the frame, VS_PAGE_SIZE bytes.  Read-only.
 * @mapping: the owner (an anon_vma or a file), set by the owner under
 *           its own lock; NULL when the page is allocated.  Public.
 */
struct vs_page {
	vs_atomic32_t refcount;
	vs_atomic32_t mapcount;
	vs_atomic32_t flags;
	uint32_t next_free;
	void *data;
	void *mapping;
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
 * Context: any thread; takes the slot and zone locks (never sleeps
 * long).  Not from inside a PTL-protected section of a hot path if it
 * can be avoided: it may drain every slot cache when memory is short.
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

#endif /* VMSIM_PAGE_H */
