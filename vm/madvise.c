/* SPDX-License-Identifier: MIT */
/*
 * vm/madvise.c - vs_madvise, after mm/madvise.c (do_madvise,
 * madvise_walk_vmas, madvise_dontneed_single_vma).
 *
 * Advice: MADV_DONTNEED zaps; MADV_NORMAL (0) and MADV_WILLNEED (3)
 * are accepted and do nothing but the range walk (the model has no
 * readahead and no VM_RAND_READ/VM_SEQ_READ).  Every other value,
 * including ones the kernel accepts (MADV_FREE, MADV_COLD, ...),
 * returns -EINVAL here.
 *
 * MADV_DONTNEED zaps and marks no VMA: faults of every strategy run
 * beside it.  Up to 6.16 (3.18, 6.4) it holds the mmap_lock for read;
 * from 6.17 (mech.dontneed_vma_lock) a range inside one VMA is zapped
 * under that VMA's lock alone, taken as the per-VMA fault takes it
 * (6.17's madvise_lock()), and any other range under the mmap_lock.
 * Either lock keeps the VMA as it is, and vs_zap_range() clears each PTE
 * page under its PTL.  3.18 and 6.4 free no table: a fault that walks
 * the range finds the same tables.  6.18 with PT_RECLAIM
 * (mech.pt_reclaim) frees each PTE page the range covers whole and
 * empties, after a grace period: a fault that finds its table gone
 * faults again (vs_zap_range_reclaim(), vs_pte_offset_map_lock()).
 */
#include <vmsim/rcu.h>
#include <vmsim/vcpu_annotate.h>

#include "../sync/internal.h"
#include "internal.h"

#define MADV_NORMAL 0
#define MADV_WILLNEED 3

static int madvise_valid(int advice)
{
	return advice == MADV_NORMAL || advice == MADV_WILLNEED ||
	       advice == VS_MADV_DONTNEED;
}

/*
 * madvise_walk_vmas: apply @advice to the mapped parts of [start, end).
 * Context: mmap_lock held for read.
 * Return: 0, or -ENOMEM when part of the range was unmapped.
 */
static int madvise_walk(struct vs_mm *mm, unsigned long start,
			unsigned long end, int advice)
{
	struct vs_vma *vma;
	unsigned long tmp;
	int unmapped = 0;

	vs_mmap_assert_read_locked(mm);
	vma = vs_find_vma(mm, start);
	for (;;) {
		if (!vma)
			return -ENOMEM;
		if (start < vma->vm_start) {
			unmapped = -ENOMEM;
			start = vma->vm_start;
			if (start >= end)
				break;
		}
		tmp = vma->vm_end < end ? vma->vm_end : end;
		/* The planted bug: the VMA marked, to keep per-VMA faults
		 * out of the zap, under an mmap_lock held only for reading;
		 * two such callers would be two writers of its vm_lock. */
		if (VS_BROKEN(madvise_marks_under_read_lock))
			vs_vma_start_write(vma);
		if (advice == VS_MADV_DONTNEED)
			vs__zap_dontneed(mm, vma, start, tmp, 0);
		start = tmp;
		if (start >= end)
			break;
		vma = vs_find_vma(mm, start);
	}
	return unmapped;
}

/*
 * dontneed_vma_locked - 6.17's madvise_lock() for MADV_DONTNEED: when
 * the VMA holding @start holds all of [@start, @end), zap under its lock
 * alone.  Return: 1 when done; 0 when the caller must take the
 * mmap_lock (no VMA there, a writer has it, or the range goes on).
 * Context: no lock of @mm held.
 */
static int dontneed_vma_locked(struct vs_mm *mm, unsigned long start,
			       unsigned long end)
{
	unsigned long misses = 0;
	struct vs_vma *vma = vs__lock_vma_under_rcu(mm, start, &misses);

	if (!vma)
		return 0;
	if (end > vs_read_once(&vma->vm_end)) {
		vs__vma_end_read(vma);
		return 0;
	}
	/* The planted bug: the lock goes before the zap, which then runs
	 * with nothing keeping the VMA or its tables. */
	if (VS_BROKEN(dontneed_skips_vma_lock)) {
		vs__vma_end_read(vma);
		vs__zap(mm, start, end, VS_MMU_NOTIFY_CLEAR);
		return 1;
	}
	vs__zap_dontneed(mm, vma, start, end, 1);
	vs__vma_end_read(vma);
	return 1;
}

int vs_madvise(struct vs_mm *mm, unsigned long addr, size_t len, int advice)
{
	unsigned long end, alen;
	int err;
	/* A system call (on a vCPU: its charges and the mm's cpumask). */
	vs__mm_syscall(mm);

	if (!mm || !madvise_valid(advice) || (addr & ~VS_PAGE_MASK))
		return -EINVAL;
	alen = VS__PAGE_ALIGN(len);
	if (len && !alen)
		return -EINVAL;
	end = addr + alen;
	if (end < addr)
		return -EINVAL;
	if (end == addr)
		return 0;
	if (advice == VS_MADV_DONTNEED && mm->mech.dontneed_vma_lock &&
	    dontneed_vma_locked(mm, addr, end))
		return 0;
	if (!VS_BROKEN(madvise_no_mmap_lock))
		vs_mmap_read_lock(mm);
	err = madvise_walk(mm, addr, end, advice);
	if (!VS_BROKEN(madvise_no_mmap_lock))
		vs_mmap_read_unlock(mm);
	return err;
}
