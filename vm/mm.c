/* SPDX-License-Identifier: MIT */
/*
 * vm/mm.c - struct vs_mm: creation, teardown, the mmap_lock wrappers,
 * VMA lookup, per-VMA write marking, page accounting and the
 * /proc/pid/maps dump.
 *
 * The program break: vs_mm_create() puts start_brk at mm->start plus a
 * quarter of the range, at most 16 MiB, rounded down to a page (the
 * kernel puts it after the binary's bss, at a random offset; a fixed
 * spot keeps the model deterministic).  Mappings chosen top-down start
 * at mm->end, so they meet the heap only when the range is full.
 */
#include <vmsim/mm.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/thread.h>
#include <vmsim/vcpu_annotate.h>
#include <vmsim/wait.h>

#include "../sync/internal.h"
#include "internal.h"

#define DEFAULT_POOL_PAGES 4096
#define DEFAULT_START 0x10000UL
#define DEFAULT_END (1UL << 47)
#define BRK_OFFSET_MAX (16UL << 20)

/* ---- the mmap_lock ------------------------------------------------------- */

void vs_mmap_read_lock(struct vs_mm *mm)
{
	vs_lock_read_lock(&mm->mmap_lock);
}

int vs_mmap_read_trylock(struct vs_mm *mm)
{
	return vs_lock_read_trylock(&mm->mmap_lock);
}

void vs_mmap_read_unlock(struct vs_mm *mm)
{
	vs_mmap_assert_read_locked(mm);
	vs_lock_read_unlock(&mm->mmap_lock);
}

/*
 * mm_lock_seqcount_begin: 6.13's mmap_write_lock() makes mm_lock_seq
 * odd (mm_lock_seqcount_begin()); with a counter (before 6.13) only the
 * unlock advances it.
 * Context: mmap_lock held for write, just taken.
 */
static void mm_lock_seqcount_begin(struct vs_mm *mm)
{
	vs_mmap_assert_write_locked(mm);
	if (!mm->mech.mm_lock_seqcount)
		return;
	vs_write_once(&mm->mm_lock_seq, vs_read_once(&mm->mm_lock_seq) + 1);
	/* The odd count before the writer's stores; pairs with the
	 * vs_smp_rmb() in vs_mmap_lock_speculate_retry().  The planted
	 * bug drops it: a speculating reader may see the VMA changes and
	 * still the old even count. */
	if (!VS_BROKEN(mm_lock_seq_begin_no_wmb))
		vs_smp_wmb();
}

void vs_mmap_write_lock(struct vs_mm *mm)
{
	vs_lock_write_lock(&mm->mmap_lock);
	mm_lock_seqcount_begin(mm);
}

void vs_mmap_write_lock_nested(struct vs_mm *mm, int subclass)
{
	vs_lock_write_lock_nested(&mm->mmap_lock, subclass);
	mm_lock_seqcount_begin(mm);
}

/*
 * vma_end_write_all: advance mm_lock_seq, unmarking every VMA marked
 * under this write lock (with the seqcount, 6.13's
 * mm_lock_seqcount_end(): even again).  Release: the VMA changes made
 * under the lock are visible to a per-VMA reader that sees the new
 * sequence (pairs with the acquire load of mm_lock_seq in
 * vma_start_read, and the speculative reader's in
 * vs_mmap_lock_speculate_try_begin()).
 * Context: mmap_lock held for write.
 */
static void vma_end_write_all(struct vs_mm *mm)
{
	vs_mmap_assert_write_locked(mm);
	vs_store_release(&mm->mm_lock_seq,
			 vs_read_once(&mm->mm_lock_seq) + 1);
}

void vs_mmap_write_unlock(struct vs_mm *mm)
{
	vs_mmap_assert_write_locked(mm);
	/* The planted bug: as downgrade_keeps_mm_lock_seq's, at unlock. */
	if (!VS_BROKEN(write_unlock_keeps_mm_lock_seq))
		vma_end_write_all(mm);
	vs_lock_write_unlock(&mm->mmap_lock);
	/* The write section's RCU frees, now that the lock is free. */
	vs_rcu_free_handover();
}

void vs_mmap_write_downgrade(struct vs_mm *mm)
{
	vs_mmap_assert_write_locked(mm);
	/* The planted bug: the marks outlive the write lock, and at 6.18
	 * mm_lock_seq stays odd, so that the next write lock makes it
	 * even while held (vs_mmap_lock_speculate_try_begin() below). */
	if (!VS_BROKEN(downgrade_keeps_mm_lock_seq))
		vma_end_write_all(mm);
	vs_lock_downgrade_write(&mm->mmap_lock);
}

bool vs_mmap_lock_speculate_try_begin(struct vs_mm *mm, uint32_t *seq)
{
	if (!mm || !seq || !mm->mech.mm_lock_seqcount)
		return false;
	/* Acquire: pairs with the release store of vma_end_write_all(),
	 * so the last writer's changes are seen. */
	*seq = vs_load_acquire(&mm->mm_lock_seq);
	/* The planted bug: speculate while a writer holds the lock. */
	return VS_BROKEN(mmap_speculate_ignores_odd) || !(*seq & 1);
}

bool vs_mmap_lock_speculate_retry(struct vs_mm *mm, uint32_t seq)
{
	if (!mm)
		return true;
	/* The speculative loads before the recheck; pairs with the
	 * vs_smp_wmb() of mm_lock_seqcount_begin(). */
	vs_smp_rmb();
	return vs_read_once(&mm->mm_lock_seq) != seq;
}

/* ---- lookup -------------------------------------------------------------- */

struct vs_vma *vs_find_vma(struct vs_mm *mm, unsigned long addr)
{
	vs_mmap_assert_locked_or_rcu(mm);
	return vs_vma_tree_find(&mm->mm_mt, addr, NULL, NULL);
}

struct vs_vma *vs_vma_lookup(struct vs_mm *mm, unsigned long addr)
{
	vs_mmap_assert_locked_or_rcu(mm);
	return vs_vma_tree_lookup(&mm->mm_mt, addr);
}

/* ---- page accounting (see vm/internal.h) --------------------------------- */

int vs_mm_counter(struct vs_page *page)
{
	struct vs_file *f;

	if (!page)
		return -EINVAL;
	if (vs_page_test_flags(page, VS_PG_ANON))
		return VS_MM_ANONPAGES;
	f = page->mapping;
	return f && f->shmem ? VS_MM_SHMEMPAGES : VS_MM_FILEPAGES;
}

/* Fold this slot's counters into the mm's (sync_mm_rss). */
static void rss_fold(struct vs_mm *mm, struct vs__mm_rss *r)
{
	long v;
	int i;

	for (i = 0; i < VS_NR_MM_COUNTERS; i++)
		if (vs_read_once(&r->count[i]) &&
		    (v = vs_xchg(&r->count[i], 0)) != 0)
			vs_fetch_add_relaxed(&mm->shared->rss[i], v);
}

/*
 * percpu_counter_add(): this slot's share, folded at the batch.  An
 * owned slot's owner is its only writer (a load and a release store,
 * as vs__slot_add()); the shared slot's users add atomically, and
 * whoever passes the batch folds what it took.
 */
static void rss_percpu_add(struct vs_mm *mm, int member, long value)
{
	unsigned int slot = vs__thread_slot();
	vs_atomic_long_t *c = &mm->rss[slot].count[member];
	long batch = (long)mm->shared->rss_batch, v;

	if (vs_likely(slot != VS_SLOT_SHARED)) {
		v = vs_read_once(c) + value;
		if (v >= batch || v <= -batch) {
			vs_fetch_add_relaxed(&mm->shared->rss[member], v);
			v = 0;
		}
		vs_store_release(c, v);
		return;
	}
	v = vs_fetch_add(c, value) + value;
	if (v >= batch || v <= -batch)
		vs_fetch_add_relaxed(&mm->shared->rss[member],
				     vs_xchg(c, 0));
}

/* What vs_add_mm_counter() and a fault's count share: the arguments. */
static int rss_check(struct vs_mm *mm, int member)
{
	return !mm || member < 0 || member >= VS_NR_MM_COUNTERS ? -EINVAL
								 : 0;
}

int vs_add_mm_counter(struct vs_mm *mm, int member, long value)
{
	if (rss_check(mm, member))
		return -EINVAL;
	if (vs_page_pool_kernel(mm->pool)->rss == VS_RSS_TASK_EVENTS)
		vs_fetch_add_relaxed(&mm->shared->rss[member], value);
	else
		rss_percpu_add(mm, member, value);
	return 0;
}

/*
 * 3.18's task counts are folded once rss_threshold faults have entered
 * since the last fold (check_sync_rss_stat()).  3.18 folds at the
 * fault's entry, unlocked, where its get_mm_counter() reads only the
 * mm's counters; the model's vs_get_mm_counter() sums the slots too,
 * and a fold between its reads would be counted twice or not at all,
 * so the fold waits for the fault's own count, under the PTL that
 * makes a sum exact.
 */
void vs__inc_mm_counter_fast(struct vs_mm *mm, int member, long value)
{
	const struct vs_kernel *k = vs_page_pool_kernel(mm->pool);
	unsigned int slot = vs__thread_slot();
	struct vs__mm_rss *r = &mm->rss[slot];

	if (k->rss != VS_RSS_TASK_EVENTS) {
		rss_percpu_add(mm, member, value);
		return;
	}
	vs__slot_add(&r->count[member], slot, value);
	if (vs_read_once(&r->events) > k->rss_threshold) {
		vs_write_once(&r->events, 0);
		rss_fold(mm, r);
	}
}

void vs__mm_fault_enter(struct vs_mm *mm)
{
	const struct vs_kernel *k = vs_page_pool_kernel(mm->pool);
	struct vs__mm_rss *r = &mm->rss[vs__thread_slot()];

	VS_VCPU_WORK(VS_VCPU_KERNEL, NULL, k->cycles[VS_KSTEP_FAULT]);
	vs__mm_enter(mm);
	if (k->rss == VS_RSS_TASK_EVENTS)
		vs_fetch_add_relaxed(&r->events, 1);
}

long vs_get_mm_counter(struct vs_mm *mm, int member)
{
	long sum;

	if (rss_check(mm, member))
		return -EINVAL;
	sum = vs__slot_sum(&mm->rss[0].count[member], sizeof(mm->rss[0])) +
	      vs_load_acquire(&mm->shared->rss[member]);
	return sum < 0 ? 0 : sum;
}

/* What a zap gathers: the RSS it drops, applied once at the end, and
 * the pages, freed after the TLB flush. */
struct zap_ctx {
	struct vs_mm *mm;
	long rss[VS_NR_MM_COUNTERS];
	struct vs_mmu_gather tlb;
};

/*
 * Drop what a cleared PTE held: mapcount and (gathered) RSS; the
 * reference goes with the gather, after the flush.  A file page
 * remembers a dirty PTE (set_page_dirty); an anonymous page has nowhere
 * to write it back, so no flag is set.
 * Context: called by vs_zap_range() under the PTL, after the clear.
 */
static void zap_pte(uint64_t pte, unsigned long addr, void *arg)
{
	struct zap_ctx *z = arg;
	struct vs_page_pool *pool = z->mm->pool;
	struct vs_page *page = vs_pfn_to_page(pool, vs_pte_pfn(pte));
	int member;

	vs_assert_ptl_held(vs_pte_lockptr(&z->mm->pgtable, addr));
	VS_VCPU_WORK(VS_VCPU_KERNEL, NULL,
		     vs_page_pool_kernel(pool)->cycles[VS_KSTEP_ZAP_PTE]);
	if (!page || vs_page_test_flags(page, VS_PG_ZERO)) {
		vs__tlb_need_flush(&z->tlb);
		return;
	}
	member = vs_mm_counter(page);
	if (member != VS_MM_ANONPAGES && vs_pte_dirty(pte))
		vs_page_set_flags(page, VS_PG_DIRTY);
	z->rss[member]++;
	vs_page_remove_rmap(pool, page);
	vs__tlb_remove_page(&z->tlb, page);
}

/*
 * zap_range - clear the PTEs of [@start, @end), flush the TLBs, and drop
 * what they held, with the RSS changes applied once (the kernel's
 * lru_add_drain, tlb_gather_mmu, unmap_page_range, add_mm_rss_vec,
 * tlb_finish_mmu)
 * @reclaim: also free the PTE pages the zap empties (PT_RECLAIM); the
 *	flush then covers their entries too
 * Context: as vs__zap() or vs__zap_dontneed(), which assert it.
 */
static void zap_range(struct vs_mm *mm, unsigned long start,
		      unsigned long end, int event, int reclaim)
{
	unsigned long nr_tables = 0;
	struct zap_ctx z;
	int i;

	memset(z.rss, 0, sizeof(z.rss));
	z.mm = mm;
	if (event != VS_MMU_NOTIFY_CLEAR ||
	    vs_page_pool_kernel(mm->pool)->dontneed_drains_lru)
		vs_lru_drain(mm->pool);
	vs__tlb_gather(&z.tlb, mm, start, end);
	vs__mmu_notify_start(mm, start, end, event, 0);
	if (reclaim)
		(void)vs_zap_range_reclaim(&mm->pgtable, start, end, zap_pte,
					   &z, &nr_tables);
	else
		(void)vs_zap_range(&mm->pgtable, start, end, zap_pte, &z);
	if (nr_tables)
		vs__tlb_need_flush(&z.tlb);
	for (i = 0; i < VS_NR_MM_COUNTERS; i++)
		if (z.rss[i])
			vs_add_mm_counter(mm, i, -z.rss[i]);
	vs__tlb_finish(&z.tlb);
	vs__mmu_notify_end(mm, start, end, event, 0);
}

/**
 * vs__zap - zap [@start, @end) for munmap (UNMAP) or MADV_DONTNEED under
 * the mmap_lock (CLEAR); the page tables stay (see zap_range())
 * Context: mmap_lock held: for write, or for read with CLEAR and with
 * UNMAP after a munmap's downgrade (mech.munmap_downgrade); faults may
 * run beside it (see vs_zap_range()).
 */
void vs__zap(struct vs_mm *mm, unsigned long start, unsigned long end,
	     int event)
{
	vs_mmap_assert_locked(mm);
	zap_range(mm, start, end, event, 0);
}

/**
 * vs__zap_dontneed - MADV_DONTNEED's zap of [@start, @end), which lies
 * in @vma: as vs__zap() with CLEAR, and where the version has
 * PT_RECLAIM (mech.pt_reclaim, 6.14 on) each PTE page the range covers
 * whole and leaves empty is freed (vs_zap_range_reclaim()), but for a
 * fault_noalloc mm; 3.18 and 6.4 keep every table until munmap.
 * @vma_locked: the caller holds @vma's lock for read, not the mmap_lock
 *	(6.17's madvise_lock() with mech.dontneed_vma_lock)
 * Context: @vma's lock held for read (@vma_locked), else mmap_lock held
 * for read.
 */
void vs__zap_dontneed(struct vs_mm *mm, struct vs_vma *vma,
		      unsigned long start, unsigned long end, int vma_locked)
{
	if (vma_locked)
		vs_vma_assert_locked(vma);
	else
		vs_mmap_assert_locked(mm);
	/* A fault_noalloc mm keeps its tables, as its munmap does: its
	 * faults, in a signal handler, may not allocate one again. */
	zap_range(mm, start, end, VS_MMU_NOTIFY_CLEAR,
		  mm->mech.pt_reclaim && !mm->fault_noalloc);
}

/* ---- mmu notifiers -------------------------------------------------------- */

void vs__mmu_notify_start(struct vs_mm *mm, unsigned long start,
			  unsigned long end, int event, unsigned long flags)
{
	struct vs_mmu_notifier_range r = { mm, start, end, event, flags };

	vs_mmu_notifier_assert_locked(mm, event);
	VS__LD(vs__lockdep_might_sleep("an mmu notifier"));
	if (mm->notifier)
		mm->notifier->ops->invalidate_range_start(mm->notifier, &r);
}

void vs__mmu_notify_end(struct vs_mm *mm, unsigned long start,
			unsigned long end, int event, unsigned long flags)
{
	struct vs_mmu_notifier_range r = { mm, start, end, event, flags };

	vs_mmu_notifier_assert_locked(mm, event);
	VS__LD(vs__lockdep_might_sleep("an mmu notifier"));
	if (mm->notifier)
		mm->notifier->ops->invalidate_range_end(mm->notifier, &r);
}

int vs_mmu_notifier_register(struct vs_mm *mm, struct vs_mmu_notifier *mn)
{
	int err = 0;

	if (!mm || !mn || !mn->ops || !mn->ops->invalidate_range_start ||
	    !mn->ops->invalidate_range_end)
		return -EINVAL;
	vs_mmap_write_lock(mm);
	if (mm->notifier)
		err = -EBUSY;
	else
		mm->notifier = mn;
	vs_mmap_write_unlock(mm);
	return err;
}

int vs_mmu_notifier_unregister(struct vs_mm *mm, struct vs_mmu_notifier *mn)
{
	int err = 0;

	if (!mm || !mn)
		return -EINVAL;
	vs_mmap_write_lock(mm);
	if (mm->notifier != mn)
		err = -ENOENT;
	else
		mm->notifier = NULL;
	vs_mmap_write_unlock(mm);
	return err;
}

/**
 * vs__mm_map_page - map @page at @addr if the PTE is still empty
 * @page: the caller's reference passes to the PTE on success; the zero
 *        page takes none
 * @writable: set the WRITE bit (and DIRTY)
 *
 * Context: mmap_lock held; no PTL held (takes it).
 * Return: 0 mapped; -EEXIST (a PTE was there: the caller keeps its
 * reference); -ENOMEM (no page table).
 */
int vs__mm_map_page(struct vs_mm *mm, struct vs_vma *vma, unsigned long addr,
		    struct vs_page *page, int writable)
{
	uint64_t flags = VS_PTE_PRESENT | VS_PTE_USER | VS_PTE_ACCESSED;
	vs_spinlock_t *ptl;
	vs_atomic64_t *ptep;

	vs_mmap_assert_locked(mm);
	(void)vma;
	if (!vs_pte_alloc(&mm->pgtable, addr))
		return -ENOMEM;
	ptep = vs_pte_offset_map_lock(&mm->pgtable, addr, &ptl);
	if (!ptep)
		return -ENOMEM;
	if (!vs_pte_none(vs_ptep_get(ptep))) {
		vs_pte_unmap_unlock(ptl);
		return -EEXIST;
	}
	if (writable)
		flags |= VS_PTE_WRITE | VS_PTE_DIRTY;
	if (!vs_page_test_flags(page, VS_PG_ZERO)) {
		vs_page_add_rmap(mm->pool, page);
		vs_add_mm_counter(mm, vs_mm_counter(page), 1);
	}
	/* Release: the page's contents before the PTE (see vs_set_pte). */
	vs_set_pte(ptep, vs_mk_pte(vs_page_to_pfn(mm->pool, page), flags));
	vs_pte_unmap_unlock(ptl);
	return 0;
}

/* ---- create and destroy -------------------------------------------------- */

static void pool_ref_put(struct vs__pool_ref *ref, int *busy)
{
	if (vs_fetch_sub(&ref->refs, 1) != 1)
		return;
	if (vs_page_pool_destroy(ref->pool) == -EBUSY) {
		/* A page is referenced from outside (a file's cache):
		 * keep the pool, report it. */
		vs_fetch_add(&ref->refs, 1);
		*busy = 1;
		return;
	}
	free(ref);
}

/* The percpu_counter batch: the profile's, or the kernel's default,
 * max(32, 2 x CPUs) (lib/percpu_counter.c compute_batch_value). */
static uint32_t rss_batch(struct vs_page_pool *pool)
{
	const struct vs_kernel *k = vs_page_pool_kernel(pool);
	uint32_t n = 2 * vs_vcpu_nr_cpus();

	if (k->rss_threshold)
		return k->rss_threshold;
	return n > 32 ? n : 32;
}

/*
 * vs__mm_alloc - an empty mm on @pool_ref (a reference is taken), or a
 * new pool of @pool_pages when @pool_ref is NULL (vs_fork passes the
 * parent's).  Context: any.
 */
int vs__mm_alloc(struct vs_mm **mmp, const char *lock_kind, int ptl_per_mm,
		 unsigned long start, unsigned long end,
		 struct vs__pool_ref *pool_ref)
{
	size_t rss_size = VS_SLOT_ARRAY * sizeof(struct vs__mm_rss);
	struct vs_mm *mm;
	int err = -ENOMEM;

	if (vs__fail_alloc(VS_FAIL_SLAB, "mm_struct"))	/* mm_alloc() */
		return -ENOMEM;
	mm = calloc(1, sizeof(*mm));
	if (!mm)
		return -ENOMEM;
	mm->rss = aligned_alloc(VS_CACHELINE, rss_size);
	mm->shared = aligned_alloc(VS_CACHELINE, sizeof(*mm->shared));
	if (!mm->rss || !mm->shared)
		goto out_free;
	memset(mm->rss, 0, rss_size);
	memset(mm->shared, 0, sizeof(*mm->shared));
	(void)vs_thread_attach();
	err = vs_lock_init(&mm->mmap_lock, lock_kind, "mmap_lock");
	if (err)
		goto out_free;
	vs_vcpu_name(mm, sizeof(*mm), "struct vs_mm");
	err = vs_pgtable_init(&mm->pgtable, !ptl_per_mm);
	if (err)
		goto out_lock;
	(void)vs_vma_tree_init(&mm->mm_mt);
	vs_atomic_init(&mm->mm_lock_seq, 0);
	vs_atomic_init(&mm->fault_strategy, 0);
	vs_fetch_add_relaxed(&pool_ref->refs, 1);
	mm->pool_ref = pool_ref;
	mm->pool = pool_ref->pool;
	mm->mech = vs_page_pool_kernel(mm->pool)->mech;
	mm->shared->rss_batch = rss_batch(mm->pool);
	mm->start = start;
	mm->end = end;
	*mmp = mm;
	return 0;
out_lock:
	(void)vs_lock_destroy(&mm->mmap_lock);
out_free:
	free(mm->shared);
	free(mm->rss);
	free(mm);
	return err;
}

static int mm_check_options(const struct vs_mm_options *o)
{
	if (o->start >= o->end || (o->start & ~VS_PAGE_MASK) ||
	    (o->end & ~VS_PAGE_MASK) || o->end > VS_TASK_SIZE)
		return -EINVAL;
	if (o->pool_pages < 1 || o->pool_pages > VS_PAGE_POOL_MAX_PAGES)
		return -EINVAL;
	if (!vs_lock_kind_ops(o->lock_kind))
		return -EINVAL;
	return 0;
}

int vs_mm_create(struct vs_mm **mmp, const struct vs_mm_options *opt)
{
	struct vs_mm_options o = { "rwsem", 0, DEFAULT_POOL_PAGES,
				   DEFAULT_START, DEFAULT_END, NULL };
	struct vs__pool_ref *ref;
	struct vs_kernel k;
	unsigned long off;
	int err, busy = 0;

	if (!mmp)
		return -EINVAL;
	if (opt) {
		o.lock_kind = opt->lock_kind ? opt->lock_kind : o.lock_kind;
		o.ptl_per_mm = opt->ptl_per_mm;
		o.pool_pages = opt->pool_pages ? opt->pool_pages : o.pool_pages;
		o.start = opt->start ? opt->start : o.start;
		o.end = opt->end ? opt->end : o.end;
		o.kernel = opt->kernel;
	}
	err = mm_check_options(&o);
	if (err)
		return err;
	if (vs_kernel_load(&k, o.kernel, NULL, 0))
		return -EINVAL;	/* an unknown version or a bad profile */
	ref = calloc(1, sizeof(*ref));
	if (!ref)
		return -ENOMEM;
	err = vs_page_pool_create_kernel(&ref->pool, o.pool_pages, &k);
	if (err) {
		free(ref);
		return err;
	}
	vs_atomic_init(&ref->refs, 1);
	err = vs__mm_alloc(mmp, o.lock_kind, o.ptl_per_mm, o.start, o.end, ref);
	if (err == 0) {
		off = (o.end - o.start) / 4;
		if (off > BRK_OFFSET_MAX)
			off = BRK_OFFSET_MAX;
		(*mmp)->start_brk = (o.start + off) & VS_PAGE_MASK;
		(*mmp)->brk = (*mmp)->start_brk;
	}
	/* vs__mm_alloc took its own reference (none on failure). */
	pool_ref_put(ref, &busy);
	return err;
}

/*
 * Unmap every VMA.  Context: mmap_lock held for write.
 */
static void mm_unmap_all(struct vs_mm *mm)
{
	struct vs_vma *vma;

	vs_mmap_assert_write_locked(mm);
	while ((vma = vs_find_vma(mm, 0)))
		(void)vs__do_munmap(mm, vma->vm_start, vma->vm_end);
}

int vs_mm_destroy(struct vs_mm *mm)
{
	int busy = 0;

	if (!mm)
		return -EINVAL;
	vs_mmap_write_lock(mm);
	mm_unmap_all(mm);
	vs_mmap_write_unlock(mm);
	/* The VMAs' RCU frees drop file references, which free page-cache
	 * pages: wait for them before the pool is checked. */
	vs_rcu_barrier();
	pool_ref_put(mm->pool_ref, &busy);
	if (busy)
		return -EBUSY; /* the mm stays, empty; call again later */
	vs_pgtable_destroy(&mm->pgtable);
	vs_vma_tree_destroy(&mm->mm_mt);
	(void)vs_lock_destroy(&mm->mmap_lock);
	free(mm->shared);
	free(mm->rss);
	free(mm);
	return 0;
}

/* ---- /proc/pid/maps ------------------------------------------------------ */

/*
 * One line per VMA, as show_map_vma() prints it (the device and inode
 * are always 00:00 0 and no path is printed).  Context: takes mmap_lock
 * for read.
 */
int vs_mm_dump(struct vs_mm *mm, FILE *out)
{
	unsigned long s, e, f, off;
	struct vs_vma *vma;
	int err = 0;

	if (!mm || !out)
		return -EINVAL;
	vs_mmap_read_lock(mm);
	for (vma = vs_vma_tree_find(&mm->mm_mt, 0, &s, &e); vma;
	     vma = vs_vma_tree_find(&mm->mm_mt, e, &s, &e)) {
		f = vma->vm_flags;
		off = vma->vm_file ? vma->vm_pgoff << VS_PAGE_SHIFT : 0;
		if (fprintf(out, "%08lx-%08lx %c%c%c%c %08lx 00:00 0\n",
			    vma->vm_start, vma->vm_end,
			    f & VS_VM_READ ? 'r' : '-',
			    f & VS_VM_WRITE ? 'w' : '-',
			    f & VS_VM_EXEC ? 'x' : '-',
			    f & VS_VM_MAYSHARE ? 's' : 'p', off) < 0) {
			err = -EIO;
			break;
		}
	}
	vs_mmap_read_unlock(mm);
	return err;
}
