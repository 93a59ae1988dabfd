/* SPDX-License-Identifier: MIT */
/*
 * fault/uffd_mirror.c - the model's changes, mirrored onto real memory.
 *
 * The region's mmu notifier (vmsim/mm.h).  Real memory is a secondary MMU
 * of the model: invalidate_range_start drops or write-protects the real
 * pages before the model's PTEs change, invalidate_range_end gives the
 * real range the protection of the model's VMAs.  What real stores
 * wrote is copied back into the model's page first wherever that page
 * outlives the change:
 *
 *   event            write back                  then
 *   CLEAR, UNMAP     file pages (page cache)     MADV_DONTNEED;
 *                                                UNMAP: PROT_NONE
 *   MOVE             every page (it moves)       MADV_DONTNEED
 *   FORK             every page (the child       the range stays write-
 *                    copies it)                  protected
 *   PROTECTION_VMA   -                           mprotect to the new flags
 *   MAP              -                           mprotect to the flags
 *
 * A real page holds stores the model has not seen only if it is present
 * and not write-protected (pagemap bits 63 and 57): those are the pages
 * copied, through /proc/self/mem, which reads whatever the real
 * protection.  It reads only pages present in real memory, and no other
 * invalidation can zap them meanwhile (inv_mutex), so it never faults;
 * no fault installs a page meanwhile (inv_in_progress).
 *
 * Context: the callbacks run with the model's mmap_lock held (for read
 * with CLEAR, and with UNMAP after 6.18's munmap downgrade), or, for a
 * 6.18 CLEAR inside one VMA, that VMA's lock alone
 * (vs_mmu_notifier_assert_locked()), so the model's page tables and
 * VMAs of the range are stable; they may sleep.
 */
#include <errno.h>
#include <linux/userfaultfd.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vmsim/rcu.h>

#include "uffd_internal.h"

#define PAGE VS_PAGE_SIZE
#define PM_PRESENT (1ULL << 63)
#define PM_UFFD_WP (1ULL << 57)
#define PM_BATCH 512	/* pagemap entries read at once: 2 MiB */

static struct vs_uffd *to_uffd(struct vs_mmu_notifier *mn)
{
	return (struct vs_uffd *)((char *)mn - offsetof(struct vs_uffd, mn));
}

static int vm_prot(unsigned long vm_flags)
{
	return (vm_flags & VS_VM_READ ? PROT_READ : 0) |
	       (vm_flags & VS_VM_WRITE ? PROT_WRITE : 0) |
	       (vm_flags & VS_VM_EXEC ? PROT_EXEC : 0);
}

/*
 * Copy the real page at @addr into the model's page, if the model maps
 * one there that @file_only does not exclude.  Context: a callback's
 * (above); takes the PTL, since vs_read()/vs_write() copy under it.
 */
static void writeback_page(struct vs_uffd *u, unsigned long addr,
			   int file_only)
{
	struct vs_mm *mm = u->mm;
	struct vs_page *page;
	vs_spinlock_t *ptl;
	vs_atomic64_t *ptep;
	uint64_t v;

	/* The weakest rule a callback runs under: a CLEAR's. */
	vs_mmu_notifier_assert_locked(mm, VS_MMU_NOTIFY_CLEAR);
	ptep = vs_pte_offset_map_lock(&mm->pgtable, addr, &ptl);
	if (!ptep)
		return;
	v = vs_ptep_get(ptep);
	page = vs_pte_present(v) ?
		       vs_pfn_to_page(mm->pool, vs_pte_pfn(v)) : NULL;
	if (page && !vs_page_test_flags(page, VS_PG_ZERO) &&
	    !(file_only && vs_page_test_flags(page, VS_PG_ANON)) &&
	    pread(u->mem_fd, page->data, PAGE, (off_t)addr) == PAGE)
		vs__uffd_count(u, VS__US_WRITEBACKS);
	vs_pte_unmap_unlock(ptl);
}

/* Write-protect the real range [start, end). */
static void wrprotect(struct vs_uffd *u, unsigned long start,
		      unsigned long end)
{
	struct uffdio_writeprotect wp = {
		{ start, end - start }, UFFDIO_WRITEPROTECT_MODE_WP
	};

	while (ioctl(u->uffd, UFFDIO_WRITEPROTECT, &wp) && errno == EAGAIN)
		;
}

/*
 * Write back every page of [start, end) that real stores may have
 * changed.  Each batch is write-protected between reading which pages
 * were writable and copying them, so that a store either lands before
 * the copy or faults (and waits for the invalidation to end).
 */
static void writeback(struct vs_uffd *u, unsigned long start,
		      unsigned long end, int file_only)
{
	uint64_t pm[PM_BATCH];
	unsigned long a, n, i;
	ssize_t got;

	for (a = start; a < end; a += n * PAGE) {
		n = (end - a) / PAGE < PM_BATCH ? (end - a) / PAGE : PM_BATCH;
		got = pread(u->pagemap_fd, pm, n * sizeof(pm[0]),
			    (off_t)(a / PAGE * sizeof(pm[0])));
		if (got != (ssize_t)(n * sizeof(pm[0])))
			return;	/* cannot happen for our own range */
		if (!VS_BROKEN(uffd_writeback_no_wp))
			wrprotect(u, a, a + n * PAGE);
		for (i = 0; i < n; i++)
			if ((pm[i] & (PM_PRESENT | PM_UFFD_WP)) == PM_PRESENT)
				writeback_page(u, a + i * PAGE, file_only);
	}
}

/* Does the model map only anonymous memory over [start, end)?  Looked
 * up inside an RCU section: a 6.18 CLEAR holds only the VMA's lock. */
static int range_is_anon(struct vs_uffd *u, unsigned long start)
{
	struct vs_vma *vma;
	int anon;

	vs_rcu_read_lock();
	vma = vs_vma_lookup(u->mm, start);
	anon = vma && !vs_read_once(&vma->vm_file);
	vs_rcu_read_unlock();
	return anon;
}

static void mirror_start(struct vs_mmu_notifier *mn,
			 const struct vs_mmu_notifier_range *r)
{
	struct vs_uffd *u = to_uffd(mn);
	unsigned long len = r->end - r->start;

	vs_mmu_notifier_assert_locked(r->mm, r->event);
	if (r->event == VS_MMU_NOTIFY_MAP)
		return;	/* nothing is invalidated */
	vs_spin_lock(&u->inv_mutex);
	vs_spin_lock(&u->mmu_lock);
	vs_write_once(&u->inv_in_progress,
		      vs_read_once(&u->inv_in_progress) + 1);
	vs_spin_unlock(&u->mmu_lock);
	vs__uffd_count(u, VS__US_INVALIDATIONS);
	switch (r->event) {
	case VS_MMU_NOTIFY_CLEAR:
	case VS_MMU_NOTIFY_UNMAP:
		if (!range_is_anon(u, r->start))
			writeback(u, r->start, r->end, 1);
		(void)madvise((void *)r->start, len, MADV_DONTNEED);
		break;
	case VS_MMU_NOTIFY_MOVE:
		writeback(u, r->start, r->end, 0);
		(void)madvise((void *)r->start, len, MADV_DONTNEED);
		break;
	case VS_MMU_NOTIFY_FORK:
		/* The pages stay write-protected: a later store faults,
		 * and the model copies a COW page first. */
		writeback(u, r->start, r->end, 0);
		break;
	default:
		break;
	}
}

static void mirror_end(struct vs_mmu_notifier *mn,
		       const struct vs_mmu_notifier_range *r)
{
	struct vs_uffd *u = to_uffd(mn);
	unsigned long len = r->end - r->start;

	vs_mmu_notifier_assert_locked(r->mm, r->event);
	if (r->event == VS_MMU_NOTIFY_MAP ||
	    r->event == VS_MMU_NOTIFY_PROTECTION_VMA)
		(void)mprotect((void *)r->start, len, vm_prot(r->vm_flags));
	else if (r->event == VS_MMU_NOTIFY_UNMAP)
		(void)mprotect((void *)r->start, len, PROT_NONE);
	if (r->event == VS_MMU_NOTIFY_MAP)
		return;
	/* Release by the unlock: pairs with the acquire in inv_begin(). */
	vs_spin_lock(&u->mmu_lock);
	vs_write_once(&u->inv_seq, vs_read_once(&u->inv_seq) + 1);
	vs_write_once(&u->inv_in_progress,
		      vs_read_once(&u->inv_in_progress) - 1);
	vs_spin_unlock(&u->mmu_lock);
	vs_spin_unlock(&u->inv_mutex);
}

const struct vs_mmu_notifier_ops vs__uffd_mirror_ops = {
	.invalidate_range_start = mirror_start,
	.invalidate_range_end = mirror_end,
};
