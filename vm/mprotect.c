/* SPDX-License-Identifier: MIT */
/*
 * vm/mprotect.c - vs_mprotect, after mm/mprotect.c (do_mprotect_pkey,
 * mprotect_fixup, change_protection).
 *
 * PTEs: removing PROT_WRITE write-protects the present PTEs; PROT_NONE
 * also clears their USER bit (x86's PAGE_NONE has no _PAGE_USER), so a
 * simulated user access faults; making the range accessible again sets
 * USER back.  Adding PROT_WRITE leaves PTEs read-only: the next write
 * faults and upgrades them (the kernel may make some writable at once;
 * the difference is one fault).
 */
#include <vmsim/vcpu_annotate.h>

#include "../sync/broken.h"
#include "../sync/internal.h"
#include "internal.h"

#define PROT_SEM 0x8
#define PROT_GROWSDOWN 0x01000000
#define PROT_GROWSUP 0x02000000
#define VM_ACCESS_FLAGS (VS_VM_READ | VS_VM_WRITE | VS_VM_EXEC)

struct prot_walk {
	struct vs_mm *mm;	/* for the PTL assertion */
	int wrprotect;
	int user;
	unsigned long newflags;	/* the planted bug's notifications */
};

/* Context: called by vs_pgtable_walk() under the PTL. */
static int change_pte(vs_atomic64_t *ptep, unsigned long addr, void *arg)
{
	struct prot_walk *w = arg;
	uint64_t v, n;

	vs_assert_ptl_held(vs_pte_lockptr(&w->mm->pgtable, addr));
	/* The planted bug mprotect_notify_under_ptl: each PTE's change told
	 * to the secondary MMU here, under the PTL, as 3.18's
	 * ptep_clear_flush_notify() did for its invalidate_page callback;
	 * 6.18's callbacks may sleep, so they run around the walk. */
	if (VS_BROKEN(mprotect_notify_under_ptl)) {
		vs__mmu_notify_start(w->mm, addr, addr + VS_PAGE_SIZE,
				     VS_MMU_NOTIFY_PROTECTION_VMA, w->newflags);
		vs__mmu_notify_end(w->mm, addr, addr + VS_PAGE_SIZE,
				   VS_MMU_NOTIFY_PROTECTION_VMA, w->newflags);
	}
	v = vs_ptep_get(ptep);
	do {
		n = w->wrprotect ? vs_pte_wrprotect(v) : v;
		n = w->user ? n | VS_PTE_USER : n & ~VS_PTE_USER;
		/* A cmpxchg, not a store: a lockless ACCESSED/DIRTY setter
		 * (vs_ptep_set_flags) may race; its bits are kept.  The
		 * planted bug stores what it computed from its read. */
		if (VS_BROKEN(change_pte_store_loses_dirty) && n != v) {
			vs_set_pte(ptep, n);
			break;
		}
	} while (n != v && !vs_cmpxchg(ptep, &v, n));
	return 0;
}

/*
 * VM_ACCOUNT of @vma with @newflags (6.18's mprotect_fixup()): charged
 * when a private mapping first becomes writable; dropped when it stops
 * being writable while anonymous and never faulted (since 6.2; 3.18
 * keeps it: a difference the model has for 3.18, whose mechanisms name
 * no key for it).  Context: mmap_lock held for write.
 */
static unsigned long mprotect_account(struct vs_vma *vma,
				      unsigned long newflags)
{
	vs_mmap_assert_write_locked(vma->vm_mm);
	if (newflags & VS_VM_WRITE) {
		if (!(vma->vm_flags & (VS_VM_ACCOUNT | VS_VM_WRITE |
				       VS_VM_SHARED)))
			newflags |= VS_VM_ACCOUNT;
	} else if (!vma->vm_file && !vs_read_once(&vma->anon_vma)) {
		newflags &= ~VS_VM_ACCOUNT;
	}
	return newflags;
}

/*
 * mprotect_fixup: give [start, end) of @vma the flags @newflags,
 * splitting and merging.  Context: mmap_lock held for write.
 * Return: 0 or -ENOMEM; *@endp: the end of the VMA that now holds the
 * range (merged, it may reach past @end).
 */
static int mprotect_fixup(struct vs_mm *mm, struct vs_vma *vma,
			  unsigned long start, unsigned long end,
			  unsigned long newflags, unsigned long *endp)
{
	/* The whole VMA (6.18's vma_modify() with nothing to split): no
	 * split marked it or opened its section before. */
	int whole = start == vma->vm_start && end == vma->vm_end;
	struct prot_walk w;
	struct vs_vma *new;
	int err;

	vs_mmap_assert_write_locked(mm);
	*endp = vma->vm_end;
	if (newflags == vma->vm_flags)
		return 0;
	newflags = mprotect_account(vma, newflags);
	if (start > vma->vm_start) {
		err = vs__vma_split(mm, vma, start, &new);
		if (err)
			return err;
		vma = new;
	}
	if (end < vma->vm_end) {
		err = vs__vma_split(mm, vma, end, &new);
		if (err)
			return err;
	}
	w.mm = mm;
	w.wrprotect = !(newflags & VS_VM_WRITE);
	w.user = (newflags & VM_ACCESS_FLAGS) != 0;
	w.newflags = newflags;
	if (!VS_BROKEN(mprotect_notify_under_ptl))
		vs__mmu_notify_start(mm, start, end,
				     VS_MMU_NOTIFY_PROTECTION_VMA, newflags);
	/* The planted bugs: the whole VMA's flags change unmarked, so a
	 * per-VMA reader keeps faulting with the old ones, or outside a
	 * vm_sequence section, so a speculative one's snapshot stays
	 * valid. */
	if (!(whole && VS_BROKEN(mprotect_whole_no_mark)))
		vs_vma_start_write(vma);
	if (whole && VS_BROKEN(mprotect_whole_no_seq)) {
		vs_write_once(&vma->vm_flags, newflags);
	} else {
		vs_vm_write_begin(vma);
		vma->vm_flags = newflags;
		vs_vm_write_end(vma);
	}
	(void)vs_pgtable_walk(&mm->pgtable, start, end, change_pte, &w);
	if (!VS_BROKEN(mprotect_notify_under_ptl))
		vs__mmu_notify_end(mm, start, end,
				   VS_MMU_NOTIFY_PROTECTION_VMA, newflags);
	*endp = vs__vma_merge_neighbours(mm, vma)->vm_end;
	return 0;
}

/*
 * The loop of do_mprotect_pkey: VMA by VMA up to the first hole.
 * Context: mmap_lock held for write.
 */
static int mprotect_range(struct vs_mm *mm, unsigned long start,
			  unsigned long end, unsigned long bits, int grows)
{
	unsigned long tmp = start, newflags;
	struct vs_vma *vma;
	int err = 0;

	vs_mmap_assert_write_locked(mm);
	vma = vs_find_vma(mm, start);
	if (!vma || vma->vm_start >= end)
		return -ENOMEM;
	/* No VMA of the model grows (no VM_GROWSDOWN/UP stacks). */
	if (grows & PROT_GROWSDOWN)
		return -EINVAL;
	if (vma->vm_start > start)
		return -ENOMEM;
	if (grows)
		return -EINVAL;
	tmp = vma->vm_start;
	for (; vma && vma->vm_start < end; vma = vs_find_vma(mm, tmp)) {
		if (vma->vm_start != tmp)
			return -ENOMEM;
		newflags = (vma->vm_flags & ~VM_ACCESS_FLAGS) | bits;
		/* Each VM_x needs its VM_MAYx, four bits up. */
		if ((newflags & ~(newflags >> 4)) & VM_ACCESS_FLAGS)
			return -EACCES;
		tmp = vma->vm_end < end ? vma->vm_end : end;
		err = mprotect_fixup(mm, vma, start > vma->vm_start ?
					     start : vma->vm_start,
				     tmp, newflags, &tmp);
		if (err)
			return err;
	}
	return tmp < end ? -ENOMEM : 0;
}

int vs_mprotect(struct vs_mm *mm, unsigned long addr, size_t len, int prot)
{
	int err, grows = prot & (PROT_GROWSDOWN | PROT_GROWSUP);
	unsigned long end, bits;
	/* A system call (on a vCPU: its charges and the mm's cpumask). */
	vs__mm_syscall(mm);

	prot &= ~grows;
	if (!mm || grows == (PROT_GROWSDOWN | PROT_GROWSUP) ||
	    (addr & ~VS_PAGE_MASK))
		return -EINVAL;
	if (!len)
		return 0;
	len = VS__PAGE_ALIGN(len);
	end = addr + len;
	if (end <= addr)
		return -ENOMEM;
	if (prot & ~(VS_PROT_READ | VS_PROT_WRITE | VS_PROT_EXEC | PROT_SEM))
		return -EINVAL;
	bits = (prot & VS_PROT_READ ? VS_VM_READ : 0) |
	       (prot & VS_PROT_WRITE ? VS_VM_WRITE : 0) |
	       (prot & VS_PROT_EXEC ? VS_VM_EXEC : 0);
	/* An "mprotect" slice in a vCPU machine's trace, as multi-fault's. */
	VS_VCPU_SPAN_BEGIN("span", "mprotect", NULL, mm);
	vs_mmap_write_lock(mm);
	err = mprotect_range(mm, addr, end, bits, grows);
	vs_mmap_write_unlock(mm);
	VS_VCPU_SPAN_END(mm);
	return err;
}
