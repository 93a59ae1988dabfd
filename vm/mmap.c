/* SPDX-License-Identifier: MIT */
/*
 * vm/mmap.c - vs_mmap, vs_munmap, vs_brk, and the pieces they share:
 * get_unmapped_area (top-down), unmapping a range, populating one.
 *
 * Errors follow mm/mmap.c (do_mmap, __get_unmapped_area,
 * do_vmi_munmap, brk) with the model's range [mm->start, mm->end)
 * standing for [mmap_min_addr, TASK_SIZE).
 */
#include <stdlib.h>

#include <vmsim/rcu.h>
#include <vmsim/vcpu_annotate.h>

#include "../sync/internal.h"
#include "internal.h"

#define MAP_TYPE 0x0f
#define MAP_SHARED_VALIDATE 0x03
/* The flags MAP_SHARED accepts silently (LEGACY_MAP_MASK, as far as
 * the model has them). */
#define LEGACY_MAP_MASK                                                 \
	(VS_MAP_SHARED | VS_MAP_PRIVATE | VS_MAP_FIXED | VS_MAP_ANONYMOUS | \
	 VS_MAP_POPULATE)

/* ---- helpers ------------------------------------------------------------- */

/* Does any VMA intersect [start, end)?  Context: mmap_lock held. */
int vs__range_has_vma(struct vs_mm *mm, unsigned long start,
		      unsigned long end)
{
	struct vs_vma *vma;

	vs_mmap_assert_locked(mm);
	vma = vs_find_vma(mm, start);
	return vma && vma->vm_start < end;
}

/**
 * vs__get_unmapped_area - a free range of @len bytes
 * @hint: used, rounded up to a page (and up to mm->start), when the
 *        range there is free
 *
 * Otherwise the highest gap of [mm->start, mm->end) that fits (the
 * kernel's vm_unmapped_area() top-down from mmap_base).
 * Context: mmap_lock held.
 * Return: the address, or -ENOMEM (as unsigned long).
 */
unsigned long vs__get_unmapped_area(struct vs_mm *mm, unsigned long hint,
				    unsigned long len)
{
	unsigned long top = mm->end, s, e;

	vs_mmap_assert_locked(mm);
	if (len > mm->end - mm->start)
		return (unsigned long)-ENOMEM;
	if (hint) {
		/* round_hint_to_min: a low hint moves up to the floor. */
		hint = hint < mm->start ? mm->start : VS__PAGE_ALIGN(hint);
		if (hint >= mm->start && hint <= mm->end - len &&
		    !vs__range_has_vma(mm, hint, hint + len))
			return hint;
	}
	for (;;) {
		if (!vs_vma_tree_prev(&mm->mm_mt, top, &s, &e))
			e = mm->start;
		if (e < mm->start)
			e = mm->start;
		if (top >= e && top - e >= len)
			return top - len;
		if (e <= mm->start)
			return (unsigned long)-ENOMEM;
		top = s;
	}
}

/**
 * vs__unmap_region - free the page tables left empty around a range
 * whose VMAs are gone (free_pgtables), with floor and ceiling from the
 * neighbouring VMAs: only tables wholly inside that gap, which no VMA
 * and therefore no fault under a lock can reach.
 * Context: mmap_lock held for write, or for read after a munmap's
 * downgrade (6.18's vms_complete_munmap_vmas()): the index cannot
 * change either way.
 */
void vs__unmap_region(struct vs_mm *mm, unsigned long start,
		      unsigned long end)
{
	unsigned long floor = 0, ceiling = 0, s, e;

	vs_mmap_assert_locked(mm);
	if (mm->fault_noalloc)
		return; /* faults there must find their tables */
	if (vs_vma_tree_prev(&mm->mm_mt, start, &s, &e))
		floor = e;
	if (vs_vma_tree_find(&mm->mm_mt, end, &s, &e))
		ceiling = s;
	(void)vs_free_pgd_range(&mm->pgtable, start, end, floor, ceiling);
}

/*
 * munmap_split - split the VMAs that straddle @start or @end, so that
 * [start, end) holds whole VMAs (vms_gather_munmap_vmas()'s splits).
 * Context: mmap_lock held for write.
 * Return: 1 when a VMA meets the range, 0 when none does, -ENOMEM (a
 * split failed; the other end may be split).
 */
static int munmap_split(struct vs_mm *mm, unsigned long start,
			unsigned long end)
{
	struct vs_vma *vma, *new;
	int err;

	vs_mmap_assert_write_locked(mm);
	vma = vs_find_vma(mm, start);
	if (!vma || vma->vm_start >= end)
		return 0;
	if (vma->vm_start < start) {
		err = vs__vma_split(mm, vma, start, &new);
		if (err)
			return err;
	}
	vma = vs_find_vma(mm, end - 1);
	if (vma && vma->vm_start < end && vma->vm_end > end) {
		err = vs__vma_split(mm, vma, end, &new);
		if (err)
			return err;
	}
	return 1;
}

/* Take the VMAs of [start, end) out of the index, zapping each (@zap)
 * or not.  Context: mmap_lock held for write. */
static void munmap_remove(struct vs_mm *mm, unsigned long start,
			  unsigned long end, int zap)
{
	struct vs_vma *vma;

	while ((vma = vs_find_vma(mm, start)) && vma->vm_start < end)
		vs__vma_remove(mm, vma, zap);
}

/**
 * vs__do_munmap - unmap [start, end), splitting the VMAs at both ends
 * (do_vmi_align_munmap() with unlock false: MAP_FIXED over a mapping,
 * mremap's move, vs_mm_destroy), all under the write lock
 * Context: mmap_lock held for write; the range is page aligned.
 * Return: 0, -ENOMEM (a split failed; the other end may be split).
 */
int vs__do_munmap(struct vs_mm *mm, unsigned long start, unsigned long end)
{
	int err;

	vs_mmap_assert_write_locked(mm);
	err = munmap_split(mm, start, end);
	if (err <= 0)
		return err;
	munmap_remove(mm, start, end, 1);
	vs__unmap_region(mm, start, end);
	return 0;
}

/**
 * vs__do_munmap_unlock - unmap [start, end) and let go of the mmap_lock
 * (do_vmi_align_munmap() with unlock true: munmap, brk, mremap's shrink)
 *
 * From 4.20 (mech.munmap_downgrade), as 6.18's
 * vms_complete_munmap_vmas(): the VMAs are write-marked, detached inside
 * their vm_sequence section and erased from the index under the write
 * lock (vs__vma_remove()), which is then downgraded; the zap and
 * free_pgtables() run under the read lock, beside faults elsewhere (a
 * fault in the range finds no VMA), and the VMAs' RCU frees were queued
 * with their erase.  3.18 does it all under the write lock.
 * Context: mmap_lock held for write; released on success, still held
 * on failure.
 * Return: 0, -ENOMEM (a split failed; the other end may be split).
 */
int vs__do_munmap_unlock(struct vs_mm *mm, unsigned long start,
			 unsigned long end)
{
	int err;

	vs_mmap_assert_write_locked(mm);
	if (!mm->mech.munmap_downgrade) {
		err = vs__do_munmap(mm, start, end);
		if (!err)
			vs_mmap_write_unlock(mm);
		return err;
	}
	err = munmap_split(mm, start, end);
	if (err < 0)
		return err;
	if (err == 0) {
		vs_mmap_write_unlock(mm);
		return 0;
	}
	/* The planted bug: readers come in while the VMAs are still in
	 * the index, and a fault there installs behind the zap that
	 * vs__vma_remove() makes before the erase. */
	if (VS_BROKEN(munmap_downgrade_before_detach)) {
		vs_mmap_write_downgrade(mm);
		munmap_remove(mm, start, end, 1);
	} else {
		munmap_remove(mm, start, end, 0);
		vs_mmap_write_downgrade(mm);
		vs__zap(mm, start, end, VS_MMU_NOTIFY_UNMAP);
	}
	vs__unmap_region(mm, start, end);
	vs_mmap_read_unlock(mm);
	/* The RCU frees queued under the write lock, now that it is
	 * free (as vs_mmap_write_unlock() does). */
	vs_rcu_free_handover();
	return 0;
}

int vs_munmap(struct vs_mm *mm, unsigned long addr, size_t len)
{
	int err;
	/* A system call (on a vCPU: its charges and the mm's cpumask). */
	vs__mm_syscall(mm);

	if (!mm || (addr & ~VS_PAGE_MASK) || addr > mm->end ||
	    len > mm->end - addr)
		return -EINVAL;
	len = VS__PAGE_ALIGN(len);
	if (!len)
		return -EINVAL;
	/* A "munmap" slice in a vCPU machine's trace, as in multi-fault's. */
	VS_VCPU_SPAN_BEGIN("span", "munmap", NULL, mm);
	vs_mmap_write_lock(mm);
	err = vs__do_munmap_unlock(mm, addr, addr + len);
	if (err)
		vs_mmap_write_unlock(mm);
	VS_VCPU_SPAN_END(mm);
	return err;
}

/* ---- populate ------------------------------------------------------------ */

/*
 * The page to map at @addr of @vma, with a reference for the PTE, and
 * whether the PTE is writable.  Private writable memory gets an
 * anonymous page (a copy of the file page, as a write fault would make);
 * private read-only anonymous memory the zero page; the rest the file's
 * page.  Context: mmap_lock held.
 * Return: 0; -EFAULT past the end of the file; -ENOMEM.
 */
static int populate_page(struct vs_mm *mm, struct vs_vma *vma,
			 unsigned long addr, struct vs_page **pgp, int *wr)
{
	unsigned long pgoff = vma->vm_pgoff +
			      ((addr - vma->vm_start) >> VS_PAGE_SHIFT);
	struct vs_page *fpage = NULL, *page;
	int err, priv = !(vma->vm_flags & VS_VM_SHARED);

	vs_mmap_assert_locked(mm);
	*wr = (vma->vm_flags & VS_VM_WRITE) != 0;
	if (vma->vm_file) {
		err = vs_file_get_page(vma->vm_file, pgoff, &fpage);
		if (err)
			return err;
		if (!priv || !*wr) {
			*pgp = fpage;
			return 0;
		}
	} else if (!*wr) {
		*pgp = vs_zero_page(mm->pool);
		return 0;
	}
	if (vs__anon_vma_prepare(vma) ||
	    !(page = vs_alloc_page(mm->pool))) {
		if (fpage)
			vs_put_page(mm->pool, fpage);
		return -ENOMEM;
	}
	if (fpage) {
		vs_copy_page(page, fpage);
		vs_put_page(mm->pool, fpage);
	} else {
		vs_clear_page(page);
	}
	vs_page_set_flags(page, VS_PG_ANON);
	page->mapping = vs_read_once(&vma->anon_vma);
	*pgp = page;
	return 0;
}

/**
 * vs__populate - fault in [start, end) of @vma (MAP_POPULATE)
 *
 * PROT_NONE VMAs are skipped; errors stop the loop and are otherwise
 * ignored, as mm_populate()'s are.
 * Context: mmap_lock held.
 */
int vs__populate(struct vs_mm *mm, struct vs_vma *vma, unsigned long start,
		 unsigned long end)
{
	struct vs_page *page;
	vs_atomic64_t *ptep;
	unsigned long a;
	int wr;

	vs_mmap_assert_locked(mm);
	if (!(vma->vm_flags & (VS_VM_READ | VS_VM_WRITE | VS_VM_EXEC)))
		return 0;
	for (a = start; a < end; a += VS_PAGE_SIZE) {
		ptep = vs_pte_offset(&mm->pgtable, a);
		if (ptep && !vs_pte_none(vs_ptep_get_lockless(ptep)))
			continue;
		if (populate_page(mm, vma, a, &page, &wr))
			return -ENOMEM;
		if (vs__mm_map_page(mm, vma, a, page, wr) &&
		    !vs_page_test_flags(page, VS_PG_ZERO))
			vs_put_page(mm->pool, page);
	}
	return 0;
}

/* ---- mmap ---------------------------------------------------------------- */

static unsigned long calc_vm_prot_bits(int prot)
{
	return (prot & VS_PROT_READ ? VS_VM_READ : 0) |
	       (prot & VS_PROT_WRITE ? VS_VM_WRITE : 0) |
	       (prot & VS_PROT_EXEC ? VS_VM_EXEC : 0);
}

/*
 * The checks of do_mmap() after the address is known: the mapping type
 * and the file's open mode.  Sets *@vm_flags and *@pgoff.
 */
static int mmap_check_type(unsigned long addr, int prot, int flags,
			   struct vs_file *file, unsigned long *vm_flags,
			   unsigned long *pgoff)
{
	if (file) {
		switch (flags & MAP_TYPE) {
		case VS_MAP_SHARED:
		case MAP_SHARED_VALIDATE:
			if ((flags & MAP_TYPE) == MAP_SHARED_VALIDATE &&
			    (flags & ~LEGACY_MAP_MASK))
				return -EOPNOTSUPP;
			if ((prot & VS_PROT_WRITE) && file->mode != O_RDWR)
				return -EACCES;
			*vm_flags |= VS_VM_SHARED | VS_VM_MAYSHARE;
			if (file->mode != O_RDWR)
				*vm_flags &= ~(VS_VM_MAYWRITE | VS_VM_SHARED);
			return 0;
		case VS_MAP_PRIVATE:
			return 0; /* both modes can read */
		default:
			return -EINVAL;
		}
	}
	switch (flags & MAP_TYPE) {
	case VS_MAP_SHARED:
		*pgoff = 0;
		*vm_flags |= VS_VM_SHARED | VS_VM_MAYSHARE;
		return 0;
	case VS_MAP_PRIVATE:
		*pgoff = addr >> VS_PAGE_SHIFT;
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * mmap_region: replace what is at [addr, addr + len) by a new VMA,
 * merged with its neighbours where possible.  A MAP_FIXED one that
 * replaces a mapping fails with the old one in place, as since Linux
 * 6.12 (vms_abort_munmap_vmas()): what can fail (the new VMA, a shared
 * anonymous mapping's file, the splits at either end, which may stay,
 * as the kernel's do) comes before the old range goes, and the insert
 * after it is retried until it succeeds (the kernel has preallocated
 * the index's nodes by then: no failure is injected there).
 * Context: mmap_lock held for write.
 */
static long mmap_region(struct vs_mm *mm, unsigned long addr,
			unsigned long len, unsigned long vm_flags,
			unsigned long pgoff, struct vs_file *file, int flags)
{
	struct vs_vma *vma;
	int err, replace;

	vs_mmap_assert_write_locked(mm);
	vma = (flags & VS_MAP_FIXED) ? vs_find_vma(mm, addr) : NULL;
	replace = vma && vma->vm_start < addr + len;
	vma = vs__vma_alloc(mm);
	if (!vma)
		return -ENOMEM;
	/* Not yet in the index: plain stores (vs__vma_insert() publishes). */
	vs_write_once(&vma->vm_start, addr);
	vs_write_once(&vma->vm_end, addr + len);
	vs_write_once(&vma->vm_flags, vm_flags);
	vs_write_once(&vma->vm_pgoff, pgoff);
	if (file) {
		vs_file_get(file);
	} else if (vm_flags & VS_VM_SHARED) {
		/* shmem_zero_setup: anonymous shared memory is a file. */
		err = vs_file_create(&file, mm->pool, len, O_RDWR);
		if (err) {
			vs__vma_free(vma);
			return err;
		}
		file->shmem = 1;
	}
	vs_write_once(&vma->vm_file, file);
	if (replace && (err = vs__do_munmap(mm, addr, addr + len))) {
		vs__vma_free(vma);
		return err;
	}
	vs__fail_nofail(replace);
	while ((err = vs__vma_insert(mm, vma)) == -ENOMEM && replace)
		;
	vs__fail_nofail(-replace);
	if (err) {
		vs__vma_free(vma);
		return err;
	}
	vma = vs__vma_merge_neighbours(mm, vma);
	/* A fault that may not allocate finds the anon_vma ready.  Past
	 * the old range's end too: no failure is injected there. */
	vs__fail_nofail(replace);
	err = mm->fault_noalloc && !(vm_flags & VS_VM_SHARED) &&
	      vs__anon_vma_prepare(vma);
	vs__fail_nofail(-replace);
	if (err) {
		(void)vs__do_munmap(mm, addr, addr + len);
		return -ENOMEM;
	}
	vs__mmu_notify_start(mm, addr, addr + len, VS_MMU_NOTIFY_MAP, vm_flags);
	vs__mmu_notify_end(mm, addr, addr + len, VS_MMU_NOTIFY_MAP, vm_flags);
	if (flags & VS_MAP_POPULATE)
		(void)vs__populate(mm, vma, addr, addr + len);
	return (long)addr;
}

/* The address checks of __get_unmapped_area() for a fixed mapping. */
static long mmap_fixed_addr(struct vs_mm *mm, unsigned long addr,
			    unsigned long len)
{
	if (len > mm->end - mm->start || addr > mm->end - len ||
	    addr < mm->start)
		return -ENOMEM;
	if (addr & ~VS_PAGE_MASK)
		return -EINVAL;
	return (long)addr;
}

long vs_mmap(struct vs_mm *mm, unsigned long addr, size_t len, int prot,
	     int flags, struct vs_file *file, off_t off)
{
	unsigned long vm_flags, pgoff, uoff = (unsigned long)off;
	long ret;
	/* A system call (on a vCPU: its charges and the mm's cpumask). */
	vs__mm_syscall(mm);

	if (!mm || (uoff & ~VS_PAGE_MASK))
		return -EINVAL;
	if (flags & VS_MAP_ANONYMOUS)
		file = NULL;
	else if (!file)
		return -EBADF;
	if (file && file->pool != mm->pool)
		return -EINVAL; /* the model's limit: one pool per mm */
	if (!len)
		return -EINVAL;
	len = VS__PAGE_ALIGN(len);
	if (!len)
		return -ENOMEM;
	pgoff = uoff >> VS_PAGE_SHIFT;
	if (pgoff + (len >> VS_PAGE_SHIFT) < pgoff)
		return -EOVERFLOW;
	if (flags & VS_MAP_FIXED_NOREPLACE)
		flags |= VS_MAP_FIXED;
	vm_flags = calc_vm_prot_bits(prot) | VS_VM_MAYREAD | VS_VM_MAYWRITE |
		   VS_VM_MAYEXEC;

	vs_mmap_write_lock(mm);
	if (flags & VS_MAP_FIXED)
		ret = mmap_fixed_addr(mm, addr, len);
	else
		ret = (long)vs__get_unmapped_area(mm, addr, len);
	if (ret < 0)
		goto out;
	addr = (unsigned long)ret;
	if ((flags & VS_MAP_FIXED_NOREPLACE) &&
	    vs__range_has_vma(mm, addr, addr + len)) {
		ret = -EEXIST;
		goto out;
	}
	ret = mmap_check_type(addr, prot, flags, file, &vm_flags, &pgoff);
	/* accountable_mapping() (6.18, 3.18): private and writable */
	if ((vm_flags & (VS_VM_SHARED | VS_VM_WRITE)) == VS_VM_WRITE)
		vm_flags |= VS_VM_ACCOUNT;
	if (ret == 0)
		ret = mmap_region(mm, addr, len, vm_flags, pgoff, file, flags);
out:
	vs_mmap_write_unlock(mm);
	return ret;
}

/* ---- brk ----------------------------------------------------------------- */

/*
 * Grow the heap over [oldbrk, newbrk) (do_brk_flags): a private
 * anonymous read-write mapping, merged with the heap below.
 * Context: mmap_lock held for write.
 */
static int do_brk(struct vs_mm *mm, unsigned long oldbrk,
		  unsigned long newbrk)
{
	struct vs_vma *next;
	long ret;

	vs_mmap_assert_write_locked(mm);
	next = vs_find_vma(mm, oldbrk);
	/* One page of guard gap to the next mapping, as the kernel keeps. */
	if (newbrk > mm->end || (next && newbrk + VS_PAGE_SIZE >
						 next->vm_start))
		return -ENOMEM;
	ret = mmap_region(mm, oldbrk, newbrk - oldbrk,
			  VS_VM_READ | VS_VM_WRITE | VS_VM_MAYREAD |
				  VS_VM_MAYWRITE | VS_VM_MAYEXEC |
				  VS_VM_ACCOUNT,
			  oldbrk >> VS_PAGE_SHIFT, NULL, 0);
	return ret < 0 ? (int)ret : 0;
}

/*
 * Shrink the heap to @brk (6.18's brk() shrink): only if a VMA lies in
 * [newbrk, oldbrk) (the kernel refuses when the heap was unmapped by
 * other means).  mm->brk moves first, under the write lock, as the
 * munmap may downgrade it (vs__do_munmap_unlock()), and moves back if
 * the unmap fails.
 * Context: mmap_lock held for write; released on success, still held
 * on failure.
 */
static int brk_shrink(struct vs_mm *mm, unsigned long brk,
		      unsigned long newbrk, unsigned long oldbrk)
{
	unsigned long origbrk = mm->brk;
	struct vs_vma *vma;
	int err;

	vs_mmap_assert_write_locked(mm);
	vma = vs_find_vma(mm, newbrk);
	if (!vma || vma->vm_start >= oldbrk)
		return -ENOMEM;
	mm->brk = brk;
	err = vs__do_munmap_unlock(mm, newbrk, oldbrk);
	if (err)
		mm->brk = origbrk;
	return err;
}

/*
 * Context: takes mmap_lock for write.  Like brk(2): below start_brk or
 * past the range, or when the heap cannot move, the old break stays.
 */
unsigned long vs_brk(struct vs_mm *mm, unsigned long brk)
{
	unsigned long newbrk, oldbrk, ret;

	if (!mm)
		return 0;
	vs_mmap_write_lock(mm);
	ret = mm->brk;
	if (brk < mm->start_brk || brk > mm->end)
		goto out;
	newbrk = VS__PAGE_ALIGN(brk);
	oldbrk = VS__PAGE_ALIGN(mm->brk);
	if (newbrk != oldbrk && brk <= mm->brk &&
	    !brk_shrink(mm, brk, newbrk, oldbrk))
		return brk;	/* the unmap let go of the lock */
	if (newbrk == oldbrk ||
	    (brk > mm->brk && !do_brk(mm, oldbrk, newbrk)))
		mm->brk = brk;
	ret = mm->brk;
out:
	vs_mmap_write_unlock(mm);
	return ret;
}
