/* SPDX-License-Identifier: MIT */
/*
 * vm/fork.c - vs_fork, after kernel/fork.c dup_mmap() and mm/memory.c
 * copy_page_range().
 *
 * Every VMA is copied.  PTEs are copied only for VMAs with an anon_vma
 * (6.18's vma_needs_copy(), 3.18's test in copy_page_range(): "don't
 * copy ptes where a page fault will fill them correctly"), so shared
 * and file mappings never written privately, and private anonymous
 * ones that only read the zero page, start empty in the child and fault
 * their pages in again.
 * A copied PTE takes a reference and a mapcount on its page and counts
 * in the child's RSS; in a private VMA a writable PTE is
 * write-protected in both mms, so the first write copies (COW).
 * The child shares the parent's page pool and anon_vmas (the model
 * keeps no anon_vma chain).
 */
#include "../sync/broken.h"
#include "internal.h"

struct copy_ctx {
	struct vs_mm *src;	/* for the PTL assertion */
	struct vs_mm *dst;
	int cow;
	int err;
};

/*
 * Write-protect the parent's COW PTE at @ptep, *@v its value read
 * under the PTL: a cmpxchg, since a lockless A/D setter may race (its
 * bits stay; *@v gets them).  The planted bugs: a store of the value
 * read, which loses a DIRTY set since; or no write-protect at all, so
 * that the parent's writes reach the page the child maps.
 * Context: the parent's PTL held.
 */
static void copy_wrprotect(vs_atomic64_t *ptep, uint64_t *v)
{
	if (VS_BROKEN(copy_pte_no_wrprotect))
		return;
	if (VS_BROKEN(copy_pte_store_loses_dirty)) {
		vs_set_pte(ptep, vs_pte_wrprotect(*v));
		return;
	}
	while (!vs_cmpxchg(ptep, v, vs_pte_wrprotect(*v)))
		;
}

/*
 * copy_pte: one present PTE.  Context: called by vs_pgtable_walk()
 * under the parent's PTL; takes the child's PTL inside it (no one else
 * can see the child yet, so the nesting cannot deadlock).
 */
static int copy_pte(vs_atomic64_t *ptep, unsigned long addr, void *arg)
{
	struct copy_ctx *c = arg;
	vs_atomic64_t *dptep;
	struct vs_page *page;
	vs_spinlock_t *ptl;
	uint64_t v;

	vs_assert_ptl_held(vs_pte_lockptr(&c->src->pgtable, addr));
	v = vs_ptep_get(ptep);
	page = vs_pfn_to_page(c->dst->pool, vs_pte_pfn(v));
	dptep = vs_pte_alloc(&c->dst->pgtable, addr);
	if (!dptep || !page) {
		c->err = -ENOMEM;
		return 1;
	}
	if (c->cow && vs_pte_write(v)) {
		copy_wrprotect(ptep, &v);
		v = vs_pte_wrprotect(v);
	}
	if (!vs_page_test_flags(page, VS_PG_ZERO)) {
		vs_get_page(page);
		vs_page_add_rmap(c->dst->pool, page);
		vs_add_mm_counter(c->dst, vs_mm_counter(page), 1);
	}
	ptl = vs_pte_lockptr(&c->dst->pgtable, addr);
	vs_spin_lock_nested(ptl, VS_SINGLE_DEPTH_NESTING);
	vs_set_pte(dptep, v);
	vs_spin_unlock(ptl);
	return 0;
}

/* dup one VMA into @child.  Context: both mmap_locks held for write. */
static int dup_vma(struct vs_mm *mm, struct vs_mm *child, struct vs_vma *vma)
{
	struct vs_vma *new = vs__vma_dup(child, vma);
	/* is_cow_mapping(): may become writable, and is not shared. */
	struct copy_ctx c = { mm, child, (vma->vm_flags & (VS_VM_SHARED |
							   VS_VM_MAYWRITE)) ==
						 VS_VM_MAYWRITE, 0 };
	int err;

	vs_mmap_assert_write_locked(mm);
	vs_mmap_assert_write_locked(child);
	if (!new)
		return -ENOMEM;
	err = vs__vma_insert(child, new);
	if (err) {
		vs__vma_free(new);
		return err;
	}
	/* Every anonymous page is mapped under its VMA's anon_vma
	 * (vs_alloc_anon_page()): without one there are only zero-page and
	 * file PTEs, which a fault in the child maps again. */
	if (!vs_read_once(&vma->anon_vma))
		return 0;
	/* The parent's COW write-protect must stop its per-VMA and
	 * speculative faults from racing the copy (already done with
	 * fork_lock_all). */
	vs_vma_start_write(vma);
	vs_vm_write_begin(vma);
	err = vs_pgtable_walk(&mm->pgtable, vma->vm_start, vma->vm_end,
			      copy_pte, &c);
	vs_vm_write_end(vma);
	return c.err ? c.err : err;
}

int vs_fork(struct vs_mm *mm, struct vs_mm **childp)
{
	struct vs_mm *child;
	struct vs_vma *vma;
	int err;

	if (!mm || !childp)
		return -EINVAL;
	err = vs__mm_alloc(&child, mm->mmap_lock.kind->name,
			   !mm->pgtable.split_ptl, mm->start, mm->end,
			   mm->pool_ref);
	if (err)
		return err;
	vs_mmap_write_lock(mm);
	vs_mmap_write_lock_nested(child, VS_SINGLE_DEPTH_NESTING);
	child->start_brk = mm->start_brk;
	child->brk = mm->brk;
	vs_write_once(&child->fault_strategy,
		      vs_read_once(&mm->fault_strategy));
	for (vma = vs_find_vma(mm, 0); vma && !err;
	     vma = vs_find_vma(mm, vma->vm_end)) {
		/* 6.4.1's dup_mmap() write-locks every VMA of the parent
		 * (mech.fork_lock_all): a per-VMA fault may not even set
		 * up an anon_vma in one whose PTEs are not copied; 3.18
		 * marks only those it copies (dup_vma). */
		if (mm->mech.fork_lock_all)
			vs_vma_start_write(vma);
		vs__mmu_notify_start(mm, vma->vm_start, vma->vm_end,
				     VS_MMU_NOTIFY_FORK, vma->vm_flags);
		err = dup_vma(mm, child, vma);
		vs__mmu_notify_end(mm, vma->vm_start, vma->vm_end,
				   VS_MMU_NOTIFY_FORK, vma->vm_flags);
	}
	vs_mmap_write_unlock(child);
	vs_mmap_write_unlock(mm);
	if (err) {
		(void)vs_mm_destroy(child);
		return err;
	}
	*childp = child;
	return 0;
}
