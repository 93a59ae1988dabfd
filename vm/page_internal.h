/* SPDX-License-Identifier: MIT */
/*
 * vm/page_internal.h - the page pool's insides, shared by page.c (the
 * pool and its public calls), buddy.c (zones, buddy lists, per-CPU
 * lists), lru.c (LRU lists, release_pages, the memcg line) and
 * vmstat.c (per-CPU counter diffs).
 *
 * The pool is the machine's memory as the kernel's page allocator sees
 * it: one node per socket (of the running vCPU machine's profile; one
 * on host threads), each with one zone of its own pfns.  A slot
 * (vmsim/thread.h) stands for a CPU: each slot has a per-CPU page list
 * for every zone, an LRU batch, and vmstat diffs.
 *
 * Lock order: an LRU batch's slot lock, then a node's lru_lock or a
 * per-CPU list's slot lock, then a zone lock; never two zone locks, two
 * lru_locks or two slot locks of a kind at once.  Lockdep (a lockdep
 * build) checks it: the slot locks have the classes lru_batch_lock and
 * pcp_lock, taken through pcp_lock() (buddy.c) and batch_lock()
 * (lru.c), and all four are spinlocks to it, under which nothing may
 * sleep.
 */
#ifndef VMSIM_VM_PAGE_INTERNAL_H
#define VMSIM_VM_PAGE_INTERNAL_H

#include <vmsim/kernel.h>
#include <vmsim/page.h>
#include <vmsim/spinlock.h>
#include <vmsim/thread.h>

#define VS_MAX_NODES 8		/* sockets beyond share nodes */
#define VS_MAX_ORDER 11		/* buddy orders 0..10, 4 MiB blocks */
#define PFN_NONE 0u		/* pfn 0 is the zero page, on no list */

/* A list of pages linked through page->lru_next/lru_prev (pfns). */
struct plist {
	uint32_t first, last;
};

/*
 * struct zone - one node's memory
 * @lock: zone->lock; protects @free_area and the links of its pages
 * @free_area: the buddy lists by order; their heads have VS_PG_BUDDY
 *	and page->order
 * @nr_free: pages on @free_area, written under @lock
 * @base, @span: the zone's pfns, [@base, @base + @span); constant
 * @lru_lock: the node's (3.18: zone's) lru_lock; protects @lru and the
 *	links of its pages (VS_PG_LRU)
 * @lru: the LRU list, newest first
 * @vm_stat: the zone's counters, folded from the slots' diffs
 * @threshold: the slots' diff threshold (calculate_normal_threshold)
 * @pcp_high: the most a slot's list of this zone keeps
 */
struct zone {
	VS_CACHELINE_ALIGNED vs_spinlock_t lock;
	struct plist free_area[VS_MAX_ORDER];
	vs_atomic_long_t nr_free;
	uint32_t base, span;

	VS_CACHELINE_ALIGNED vs_spinlock_t lru_lock;
	struct plist lru;

	VS_CACHELINE_ALIGNED vs_atomic_long_t vm_stat[VS_NR_VMSTAT];
	uint32_t threshold;
	uint32_t pcp_high;
};

/*
 * struct pcp - one slot's list of one zone's free pages, and the slot's
 * vmstat diffs for that zone (the kernel's per_cpu_pageset)
 * @lock: protects @list and its pages' links
 * @list: hot pages first
 * @count: pages on @list; written under @lock, read without it
 * @diff: vmstat diffs, atomic (a shared slot has several users)
 * @dep_map: @lock's lockdep class, pcp_lock (lockdep builds)
 */
struct pcp {
	VS_CACHELINE_ALIGNED vs__slot_lock_t lock;
	VS__LD_MAP
	struct plist list;
	vs_atomic32_t count;
	vs_atomic32_t diff[VS_NR_VMSTAT];
};

/*
 * struct lru_batch - pages a slot has not yet added to their LRU (a
 * pagevec or folio_batch), each holding a reference
 * @lock: protects the rest
 * @dep_map: @lock's lockdep class, lru_batch_lock (lockdep builds)
 */
struct lru_batch {
	VS_CACHELINE_ALIGNED vs__slot_lock_t lock;
	VS__LD_MAP
	uint32_t nr;
	uint32_t pfn[VS_KERNEL_LRU_BATCH_MAX];
};

/*
 * struct vs_page_cgroup - 3.18's per-page memcg record, 16 bytes
 * @flags: PCG_USED while charged
 * @mem_cgroup: the owner (the root group's id, 1)
 */
struct vs_page_cgroup {
	vs_atomic32_t flags;
	uint32_t pad;
	vs_atomic_long_t mem_cgroup;
};

/*
 * struct vs_page_pool
 * @pages, @nr_pages, @frames, @frames_len: constant after creation
 * @kernel: the kernel profile whose batches and costs the pool follows
 * @nr_nodes: nodes, each with @zone[i]; constant
 * @page_cgroup: 3.18's array, NULL for memcg_data kernels
 * @vm_stat: the global counters (vm_zone_stat)
 * @pcp: [slot][node]
 * @lru: [slot]
 */
struct vs_page_pool {
	struct vs_page *pages;
	size_t nr_pages;
	char *frames;
	size_t frames_len;
	struct vs_kernel kernel;
	unsigned int nr_nodes;
	struct vs_page_cgroup *page_cgroup;

	VS_CACHELINE_ALIGNED vs_atomic_long_t vm_stat[VS_NR_VMSTAT];

	struct zone zone[VS_MAX_NODES];
	struct pcp pcp[VS_SLOT_ARRAY][VS_MAX_NODES];
	struct lru_batch lru[VS_SLOT_ARRAY];
};

static inline uint32_t pfn_of(struct vs_page_pool *pool,
			      const struct vs_page *page)
{
	return (uint32_t)(page - pool->pages);
}

static inline struct zone *page_zone(struct vs_page_pool *pool,
				     const struct vs_page *page)
{
	return &pool->zone[page->node];
}

/* The charge of the kernel profile's step @s, @n times, on a vCPU. */
#define KCHARGE(pool, s, n) \
	VS_VCPU_WORK(VS_VCPU_KERNEL, NULL, \
		     (uint64_t)(pool)->kernel.cycles[(s)] * (n))

/* ---- lists (buddy.c) ---------------------------------------------------- */

void vs__plist_add(struct vs_page_pool *pool, struct plist *l, uint32_t pfn);
void vs__plist_add_tail(struct vs_page_pool *pool, struct plist *l,
			uint32_t pfn);
void vs__plist_del(struct vs_page_pool *pool, struct plist *l, uint32_t pfn);

/* ---- buddy.c ------------------------------------------------------------ */

void vs__zone_init(struct vs_page_pool *pool, struct zone *z, uint32_t base,
		   uint32_t span);
uint32_t vs__pcp_alloc(struct vs_page_pool *pool, unsigned int node);
void vs__pcp_free(struct vs_page_pool *pool, struct vs_page **pages,
		  size_t n);
uint32_t vs__alloc_slow(struct vs_page_pool *pool, unsigned int node);
size_t vs__pool_free_pages(struct vs_page_pool *pool);

/* ---- page.c ------------------------------------------------------------- */

void vs__free_page(struct vs_page_pool *pool, struct vs_page *page);
void vs__free_pages(struct vs_page_pool *pool, struct vs_page **pages,
		    size_t n);

/* ---- lru.c -------------------------------------------------------------- */

void vs__lru_del_locked(struct vs_page_pool *pool, struct vs_page *page);
void vs__memcg_uncharge(struct vs_page_pool *pool, struct vs_page *page);

/* ---- vmstat.c ------------------------------------------------------------ */

void vs__vmstat_mod(struct vs_page_pool *pool, unsigned int node,
		    enum vs_vmstat_item item, int delta);

#endif /* VMSIM_VM_PAGE_INTERNAL_H */
