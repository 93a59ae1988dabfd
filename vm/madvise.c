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
 * As the kernel's, MADV_DONTNEED zaps under the mmap_lock for read and
 * marks no VMA: faults of every strategy run beside it.  That is safe
 * because vs_zap_range() clears each PTE page under its PTL and frees
 * no table (a fault that walks the range finds the same tables), and
 * the VMAs cannot change while the read lock is held.
 */
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
		if (advice == VS_MADV_DONTNEED)
			vs__zap(mm, start, tmp, VS_MMU_NOTIFY_CLEAR);
		start = tmp;
		if (start >= end)
			break;
		vma = vs_find_vma(mm, start);
	}
	return unmapped;
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
	if (!VS_BROKEN(madvise_no_mmap_lock))
		vs_mmap_read_lock(mm);
	err = madvise_walk(mm, addr, end, advice);
	if (!VS_BROKEN(madvise_no_mmap_lock))
		vs_mmap_read_unlock(mm);
	return err;
}
