/* SPDX-License-Identifier: MIT */
/*
 * vm/internal.h - what the files of vm/ share and nobody else uses.
 *
 * Page accounting, the convention every file of vm/ and fault/ follows:
 *
 *   - A PTE that maps a page other than the zero page holds one
 *     reference on it and one mapcount, and counts once in the mm's RSS:
 *     VS_MM_ANONPAGES for VS_PG_ANON pages, VS_MM_SHMEMPAGES for pages
 *     of a shmem file (anonymous shared mappings), VS_MM_FILEPAGES for
 *     other file pages.
 *   - A PTE that maps the zero page holds nothing and counts nowhere
 *     (the kernel's special zero-page PTE: vm_normal_page() is NULL).
 *
 * vs__mm_map_page() and vs__zap() are the two halves of that rule.
 */
#ifndef VS_VM_INTERNAL_H
#define VS_VM_INTERNAL_H

#include <vmsim/fail.h>
#include <vmsim/file.h>
#include <vmsim/mm.h>
#include <vmsim/vcpu_annotate.h>

#include "fail.h"

#define VS__PAGE_ALIGN(x) (((x) + VS_PAGE_SIZE - 1) & VS_PAGE_MASK)

/*
 * struct vs_anon_vma - the anonymous memory of a VMA (and of the VMAs
 * split from it or forked from it), reference counted.  It stands for
 * the kernel's anon_vma in merge decisions and as page->mapping of
 * anonymous pages; the model keeps no reverse map.  Freed through RCU.
 */
struct vs_anon_vma {
	vs_atomic_long_t refcount;
};

/* One thread slot's RSS counters, a cache line of their own, and its
 * faults since they were last folded (3.18's task rss_stat.events). */
struct vs__mm_rss {
	VS_CACHELINE_ALIGNED vs_atomic_long_t count[VS_NR_MM_COUNTERS];
	vs_atomic32_t events;
};

/*
 * struct vs__mm_shared - what every CPU of an mm writes: the mm's own
 * RSS counters (mm->rss_stat, folded into from the slots'), and the
 * cpumask of the CPUs that ran it (mm_cpumask), a line each
 */
struct vs__mm_shared {
	VS_CACHELINE_ALIGNED vs_atomic_long_t rss[VS_NR_MM_COUNTERS];
	uint32_t rss_batch;	/* percpu: a slot's most before a fold */
	VS_CACHELINE_ALIGNED vs_atomic_long_t cpumask[VS_VCPU_MAX / 64];
};

/*
 * struct vs_mmu_gather - the pages a zap cleared, until the TLB flush
 * (vm/tlb.c)
 */
struct vs_mmu_gather {
	struct vs_mm *mm;
	const struct vs_kernel *k;
	unsigned long start, end;
	int need_flush;
	unsigned int nr_local, nr_batches, used, nr_last;
	struct vs_page *local[VS_KERNEL_GATHER_LOCAL_MAX];
	struct vs_page *batch[VS_KERNEL_GATHER_BATCHES_MAX];
};

/* struct vs__pool_ref - a page pool shared by an mm and its children. */
struct vs__pool_ref {
	struct vs_page_pool *pool;
	vs_atomic_long_t refs;
};

/* ---- vm/mm.c: vm_refcnt's attach and detach (6.15) --------------------- */

void vs__vma_mark_attached(struct vs_vma *vma);
void vs__vma_mark_detached(struct vs_vma *vma);

/* ---- vm/vma.c ---------------------------------------------------------- */

struct vs_vma *vs__vma_alloc(struct vs_mm *mm);
struct vs_vma *vs__vma_dup(struct vs_mm *mm, const struct vs_vma *vma);
void vs__vma_free(struct vs_vma *vma);
int vs__vma_insert(struct vs_mm *mm, struct vs_vma *vma);
void vs__vma_remove(struct vs_mm *mm, struct vs_vma *vma, int zap);
int vs__vma_split(struct vs_mm *mm, struct vs_vma *vma, unsigned long addr,
		  struct vs_vma **newp);
int vs__vma_mergeable(const struct vs_vma *a, const struct vs_vma *b);
struct vs_vma *vs__vma_merge_neighbours(struct vs_mm *mm, struct vs_vma *vma);
int vs__vma_set_range(struct vs_mm *mm, struct vs_vma *vma,
		      unsigned long start, unsigned long end,
		      unsigned long pgoff);
struct vs_vma *vs__vma_next(struct vs_mm *mm, struct vs_vma *vma);
struct vs_vma *vs__vma_prev(struct vs_mm *mm, struct vs_vma *vma);

struct vs_anon_vma *vs__anon_vma_alloc(void);
void vs__anon_vma_get(struct vs_anon_vma *av);
void vs__anon_vma_put(struct vs_anon_vma *av);
int vs__anon_vma_prepare(struct vs_vma *vma);

/* ---- vm/page.c ---------------------------------------------------------- */

/* vs_alloc_page() for a caller that may not sleep (6.18's GFP_NOWAIT:
 * the mmu_gather's batch page, under a PTL).  Context: any. */
struct vs_page *vs__alloc_page_nowait(struct vs_page_pool *pool);

/* ---- vm/mm.c ------------------------------------------------------------ */

/*
 * Tell @mm's secondary MMU, if any, that [start, end) changes (see
 * vmsim/mm.h).  Context: mmap_lock held, as vs_mmu_notifier_ops says;
 * no spinlock held, since the callbacks may sleep (6.18's
 * mmu_notifier_invalidate_range_start() and _end() call might_sleep();
 * lockdep builds report a PTL or a pool lock held).
 */
void vs__mmu_notify_start(struct vs_mm *mm, unsigned long start,
			  unsigned long end, int event, unsigned long flags);
void vs__mmu_notify_end(struct vs_mm *mm, unsigned long start,
			unsigned long end, int event, unsigned long flags);

/* @event: VS_MMU_NOTIFY_UNMAP or _CLEAR, for the secondary MMU. */
void vs__zap(struct vs_mm *mm, unsigned long start, unsigned long end,
	     int event);
void vs__zap_dontneed(struct vs_mm *mm, struct vs_vma *vma,
		      unsigned long start, unsigned long end, int vma_locked);
/* The VMA holding @addr, read-locked without the mmap_lock, or NULL
 * (vm/vma_lock.c: 6.18's lock_vma_under_rcu() and vma_end_read()). */
struct vs_vma *vs__lock_vma_under_rcu(struct vs_mm *mm, unsigned long addr,
				      unsigned long *misses);
void vs__vma_end_read(struct vs_vma *vma);
int vs__mm_map_page(struct vs_mm *mm, struct vs_vma *vma, unsigned long addr,
		    struct vs_page *page, int writable);
int vs__mm_alloc(struct vs_mm **mmp, const char *lock_kind, int ptl_per_mm,
		 unsigned long start, unsigned long end,
		 struct vs__pool_ref *pool_ref);

/*
 * vs__inc_mm_counter_fast - a fault's RSS change: 3.18 counts it in the
 * task's own counters (inc_mm_counter_fast), later kernels in the
 * percpu_counter.  Context: as vs_add_mm_counter().
 */
void vs__inc_mm_counter_fast(struct vs_mm *mm, int member, long value);

/*
 * vs__mm_fault_enter - what every fault does first: the handler's
 * instructions are charged, the vCPU joins the mm's cpumask, and under
 * 3.18 the task's RSS counters are folded every rss_threshold faults
 * (check_sync_rss_stat).  Context: a fault, no lock held.
 */
void vs__mm_fault_enter(struct vs_mm *mm);

/* ---- vm/tlb.c ------------------------------------------------------------ */

/* A vCPU that runs @mm (a fault, a VM system call) joins its cpumask. */
void vs__mm_enter(struct vs_mm *mm);
/* A VM system call's start: its fixed work, and vs__mm_enter(). */
void vs__mm_syscall(struct vs_mm *mm);
void vs__tlb_gather(struct vs_mmu_gather *tlb, struct vs_mm *mm,
		    unsigned long start, unsigned long end);
/* Gather @page, whose PTE was cleared; flushes first when full.
 * Context: the PTE's lock may be held. */
void vs__tlb_remove_page(struct vs_mmu_gather *tlb, struct vs_page *page);
/* A PTE was cleared that mapped no page to free (the zero page). */
static inline void vs__tlb_need_flush(struct vs_mmu_gather *tlb)
{
	tlb->need_flush = 1;
}
/* Flush, release what is gathered, free the batch pages. */
void vs__tlb_finish(struct vs_mmu_gather *tlb);

/* ---- vm/mmap.c ---------------------------------------------------------- */

void vs__unmap_region(struct vs_mm *mm, unsigned long start,
		      unsigned long end);
int vs__do_munmap(struct vs_mm *mm, unsigned long start, unsigned long end);
int vs__do_munmap_unlock(struct vs_mm *mm, unsigned long start,
			 unsigned long end);
unsigned long vs__get_unmapped_area(struct vs_mm *mm, unsigned long hint,
				    unsigned long len);
int vs__populate(struct vs_mm *mm, struct vs_vma *vma, unsigned long start,
		 unsigned long end);
int vs__range_has_vma(struct vs_mm *mm, unsigned long start,
		      unsigned long end);

#endif /* VS_VM_INTERNAL_H */
