/* SPDX-License-Identifier: MIT */
/*
 * fault/memory.c - handle_pte_fault and its cases, after mm/memory.c:
 * do_anonymous_page, do_fault (do_read_fault / do_cow_fault /
 * do_shared_fault), do_wp_page, the spurious-fault fixup, and the
 * pieces they are made of (vmsim/memory.h): pte_map_lock,
 * vmf_pte_changed, set_pte_range, finish_fault, alloc_anon_folio.
 *
 * Who may do what depends on the mode bits of vmf->flags (see
 * vmsim/memory.h): under the mmap_lock anything; under the VMA lock no
 * anon_vma; speculative nothing but pages, every failure an abort with
 * its reason.
 *
 * The pieces every fault goes through are defined inline (external all
 * the same, through vmsim/memory.h's declarations), as in fault.c.
 */
#include <vmsim/memory.h>
#include <vmsim/rcu.h>

#include "internal.h"

#define PTE_USER_FLAGS (VS_PTE_PRESENT | VS_PTE_USER | VS_PTE_ACCESSED)
#define PTE_DIRTY_FLAGS (VS_PTE_WRITE | VS_PTE_DIRTY)

static int speculative(const struct vs_vm_fault *vmf)
{
	return vmf->flags & VS_FAULT_FLAG_SPECULATIVE;
}

/* Out of pages: spf retries locked, which reports the OOM itself. */
static int fault_oom(struct vs_vm_fault *vmf)
{
	if (speculative(vmf))
		return vs_spf_abort(vmf, VS_SPF_ABORT_NOMEM);
	return VS_VM_FAULT_OOM;
}

/*
 * The PTE changed between the fault's look and the PTL: another fault
 * or a zap won.  Locked and pervma return 0 and the access retries, as
 * every version's handle_pte_fault() does (3.18 to 6.18); spf aborts,
 * so that its count shows the race.
 */
static int fault_pte_changed(struct vs_vm_fault *vmf)
{
	if (speculative(vmf))
		return vs_spf_abort(vmf, VS_SPF_ABORT_PTE_CHANGED);
	return 0;
}

inline bool vs_pte_map_lock(struct vs_vm_fault *vmf)
{
	vs_vmf_assert_locked(vmf);
	if (speculative(vmf) && vs_vma_has_changed(vmf)) {
		vmf->abort = VS_SPF_ABORT_SEQ_CHANGED;
		return false;
	}
	vmf->pte = vs_pte_offset_map_lock(&vmf->mm->pgtable, vmf->address,
					  &vmf->ptl);
	if (!vmf->pte) {
		/* The PTE page went away: spf's VMA changed, or, under a
		 * lock, PT_RECLAIM (6.14 on) freed the emptied table. */
		vmf->abort = VS_SPF_ABORT_NO_TABLE;
		return false;
	}
	if (speculative(vmf) && !VS_BROKEN(spf_skip_seq_revalidate) &&
	    !VS_BROKEN(spf_seq_checked_once) && vs_vma_has_changed(vmf)) {
		vs_pte_unmap_unlock(vmf->ptl);
		vmf->abort = VS_SPF_ABORT_SEQ_PTL;
		return false;
	}
	return true;
}

inline bool vs_vmf_pte_changed(struct vs_vm_fault *vmf)
{
	vs_assert_ptl_held(vmf->ptl);
	return vs_ptep_get(vmf->pte) != vmf->orig_pte &&
	       !VS_BROKEN(fault_no_pte_same);
}

/* vs_pte_map_lock() succeeded: the PTL is held, the PTE unchanged. */
#define PTE_LOCKED (-1)

/*
 * Take the PTL and check the PTE: what every case does before it
 * installs.  Return: PTE_LOCKED; else, with no PTL held, what the fault
 * returns.
 */
static int fault_pte_lock(struct vs_vm_fault *vmf)
{
	/* Under a lock only a reclaimed table fails: 0, and the access
	 * faults again, as 6.18's fault does when pte_offset_map_lock()
	 * returns NULL. */
	if (!vs_pte_map_lock(vmf))
		return speculative(vmf) ? VS_VM_FAULT_RETRY : 0;
	if (vs_vmf_pte_changed(vmf)) {
		vs_pte_unmap_unlock(vmf->ptl);
		return fault_pte_changed(vmf);
	}
	return PTE_LOCKED;
}

inline void vs_set_pte_range(struct vs_vm_fault *vmf,
			     struct vs_page *page, uint64_t prot)
{
	struct vs_mm *mm = vmf->mm;

	vs_assert_ptl_held(vmf->ptl);
	if (!vs_page_test_flags(page, VS_PG_ZERO)) {
		vs_page_add_rmap(mm->pool, page);
		vs__inc_mm_counter_fast(mm, vs_mm_counter(page), 1);
	}
	/* Release: the page's contents before the PTE (see vs_set_pte). */
	vs_set_pte(vmf->pte, vs_mk_pte(vs_page_to_pfn(mm->pool, page),
				       PTE_USER_FLAGS | prot));
}

/*
 * The planted bug fault_rmap_after_ptl: set the PTE, drop the PTL, then
 * count the mapping and RSS, where a holder of the PTL sees a PTE that
 * its page's mapcount and the mm's RSS do not count yet.
 * Context: the PTL held, the PTE unchanged; drops the PTL.
 */
static void set_pte_rmap_late(struct vs_vm_fault *vmf, struct vs_page *page,
			      uint64_t prot)
{
	struct vs_mm *mm = vmf->mm;

	vs_assert_ptl_held(vmf->ptl);
	vs_set_pte(vmf->pte, vs_mk_pte(vs_page_to_pfn(mm->pool, page),
				       PTE_USER_FLAGS | prot));
	vs_pte_unmap_unlock(vmf->ptl);
	vs_page_add_rmap(mm->pool, page);
	vs__inc_mm_counter_fast(mm, vs_mm_counter(page), 1);
}

int vs_finish_fault(struct vs_vm_fault *vmf, struct vs_page *page,
		    uint64_t prot)
{
	int ret;

	vs_vmf_assert_locked(vmf);
	vs_lockdep_assert_not_held(vmf->ptl);
	ret = fault_pte_lock(vmf);
	if (ret != PTE_LOCKED) {
		vs_put_page(vmf->mm->pool, page);
		return ret;
	}
	if (VS_BROKEN(fault_rmap_after_ptl) &&
	    !vs_page_test_flags(page, VS_PG_ZERO)) {
		set_pte_rmap_late(vmf, page, prot);
		return 0;
	}
	vs_set_pte_range(vmf, page, prot);
	vs_pte_unmap_unlock(vmf->ptl);
	return 0;
}

/*
 * vmf_anon_prepare under the VMA lock: 6.8's vmf_anon_prepare() takes
 * the mmap_lock for read if that needs no wait (a writer that holds it
 * may be reading the VMA's anon_vma to merge it with a neighbour, which
 * it has not write-locked), prepares, and drops it; it retries only if
 * the trylock fails (mm->mech.anon_prepare_trylock).  Before 6.8 the
 * fault always retries under the mmap_lock.
 * Context: @vmf->vma's per-VMA lock held for reading.
 */
static int anon_prepare_vma_locked(struct vs_vm_fault *vmf)
{
	/* The planted bug: prepare holding only the VMA lock. */
	int nolock = VS_BROKEN(anon_prepare_no_mmap_lock);
	int err;

	vs_vmf_assert_locked(vmf);
	if (!vmf->mm->mech.anon_prepare_trylock ||
	    (!nolock && !vs_mmap_read_trylock(vmf->mm))) {
		vmf->abort = -1;
		return VS_VM_FAULT_RETRY;
	}
	err = vs__anon_vma_prepare(vmf->vma);
	if (!nolock)
		vs_mmap_read_unlock(vmf->mm);
	if (err)
		return VS_VM_FAULT_OOM;
	vmf->anon_vma = vs_load_acquire(&vmf->vma->anon_vma);
	return 0;
}

/*
 * The anon_vma a new anonymous page needs.  Locked prepares one (the
 * mmap_lock read side serializes nothing here: the cmpxchg does);
 * pervma as the kernel version does (above); spf leaves it to the
 * mmap_lock path.
 */
static int fault_anon_prepare(struct vs_vm_fault *vmf)
{
	if (vmf->anon_vma)
		return 0;
	if (speculative(vmf))
		return vs_spf_abort(vmf, VS_SPF_ABORT_ANON_VMA);
	if (vmf->flags & VS_FAULT_FLAG_VMA_LOCK)
		return anon_prepare_vma_locked(vmf);
	if (vs__anon_vma_prepare(vmf->vma))
		return VS_VM_FAULT_OOM;
	vmf->anon_vma = vs_load_acquire(&vmf->vma->anon_vma);
	return 0;
}

int vs_alloc_anon_page(struct vs_vm_fault *vmf, struct vs_page *src,
		       struct vs_page **pagep)
{
	struct vs_page *page;
	int ret;

	vs_vmf_assert_locked(vmf);
	vs_lockdep_assert_not_held(vmf->ptl);
	ret = fault_anon_prepare(vmf);
	if (ret)
		return ret;
	page = vs_alloc_page(vmf->mm->pool);
	if (!page)
		return fault_oom(vmf);
	/* Nobody else sees the page yet: a plain store sets its flags
	 * (the kernel's __folio_set_anon), before the clear's stores. */
	vs_write_once(&page->flags, VS_PG_ANON);
	if (src)
		vs_copy_page(page, src);
	else
		vs_clear_page(page);
	page->mapping = vmf->anon_vma;
	/* do_anonymous_page's own work, then its memcg charge and LRU add
	 * (before the PTE lock here; a page whose PTE changed meanwhile is
	 * put, which undoes both). */
	VS_VCPU_WORK(VS_VCPU_KERNEL, NULL,
		     vs_page_pool_kernel(vmf->mm->pool)->cycles[VS_KSTEP_ANON]);
	vs_memcg_charge(vmf->mm->pool, page);
	vs_lru_add(vmf->mm->pool, page);
	*pagep = page;
	return 0;
}

int vs_do_anonymous_page(struct vs_vm_fault *vmf)
{
	struct vs_page *page;
	int ret;

	vs_vmf_assert_locked(vmf);
	vs_lockdep_assert_not_held(vmf->ptl);
	if (!(vmf->flags & VS_FAULT_FLAG_WRITE)) {
		ret = fault_pte_lock(vmf);
		if (ret != PTE_LOCKED)
			return ret;
		vs_set_pte_range(vmf, vs_zero_page(vmf->mm->pool), 0);
		vs_pte_unmap_unlock(vmf->ptl);
		return 0;
	}
	ret = vs_alloc_anon_page(vmf, NULL, &page);
	if (ret)
		return ret;
	return vs_finish_fault(vmf, page, PTE_DIRTY_FLAGS);
}

int vs_do_fault(struct vs_vm_fault *vmf)
{
	unsigned long pgoff = vmf->vm_pgoff +
			      ((vmf->address - vmf->vm_start) >> VS_PAGE_SHIFT);
	struct vs_page *fpage, *page;
	int write = vmf->flags & VS_FAULT_FLAG_WRITE, err, ret;

	vs_vmf_assert_locked(vmf);
	vs_lockdep_assert_not_held(vmf->ptl);
	err = vs_file_get_page(vmf->vm_file, pgoff, &fpage);
	if (err == -EFAULT)
		return VS_VM_FAULT_SIGBUS;
	if (err)
		return fault_oom(vmf);
	if (!write)
		return vs_finish_fault(vmf, fpage, 0);
	if (vmf->vm_flags & VS_VM_SHARED) {
		vs_page_set_flags(fpage, VS_PG_DIRTY);
		return vs_finish_fault(vmf, fpage, PTE_DIRTY_FLAGS);
	}
	ret = vs_alloc_anon_page(vmf, fpage, &page);
	vs_put_page(vmf->mm->pool, fpage);
	if (ret)
		return ret;
	return vs_finish_fault(vmf, page, PTE_DIRTY_FLAGS);
}

/* Make the locked, unchanged PTE writable and dirty, and unlock. */
static int wp_reuse(struct vs_vm_fault *vmf, struct vs_page *page)
{
	if (vs_page_test_flags(page, VS_PG_FILE))
		vs_page_set_flags(page, VS_PG_DIRTY);
	vs_set_pte(vmf->pte,
		   vmf->orig_pte | VS_PTE_ACCESSED | PTE_DIRTY_FLAGS);
	vs_pte_unmap_unlock(vmf->ptl);
	return 0;
}

/*
 * wp_page_copy: replace the read-only page at the locked PTE with a
 * private copy.  @old is the mapped page (the zero page included); the
 * PTE's reference, mapcount and RSS move from it to the copy, under the
 * PTL that sees the PTE unchanged.  (The planted bug
 * wp_copy_puts_pte_ref_early drops the PTE's reference first, which a
 * fault that then loses the PTE to another one has no right to.)
 */
static int wp_page_copy(struct vs_vm_fault *vmf, struct vs_page *old)
{
	struct vs_mm *mm = vmf->mm;
	struct vs_page *page;
	int zero = vs_page_test_flags(old, VS_PG_ZERO), ret;
	int early_put = VS_BROKEN(wp_copy_puts_pte_ref_early);

	/* Our own reference on @old keeps it while we copy it unlocked;
	 * when it is already free, the PTE changed under us. */
	if (!zero && !vs_get_page_unless_zero(old))
		return fault_pte_changed(vmf);
	if (!zero && early_put)
		vs_put_page(mm->pool, old);
	ret = vs_alloc_anon_page(vmf, zero ? NULL : old, &page);
	if (ret && VS_BROKEN(wp_copy_oom_keeps_ref))
		return ret;
	if (ret)
		goto out;
	ret = fault_pte_lock(vmf);
	if (ret != PTE_LOCKED) {
		vs_put_page(mm->pool, page);
		goto out;
	}
	if (!zero) {
		vs__inc_mm_counter_fast(mm, vs_mm_counter(old), -1);
		vs_page_remove_rmap(mm->pool, old);
		if (!early_put)
			vs_put_page(mm->pool, old);	/* the PTE's */
	}
	vs_set_pte_range(vmf, page, PTE_DIRTY_FLAGS);
	vs_pte_unmap_unlock(vmf->ptl);
	ret = 0;
out:
	if (!zero)
		vs_put_page(mm->pool, old);
	return ret;
}

/*
 * wp_can_reuse_anon - may the write fault keep the anonymous @page,
 * mapped at the locked PTE?  As 6.18's wp_can_reuse_anon_folio() for a
 * small folio: only if its reference count says this PTE is its only
 * user.  A page still in this CPU's LRU batch has the batch's reference
 * too, so the batch is added first (lru_add_drain()); one in another
 * CPU's batch is copied.  The model has no PageAnonExclusive: every
 * page takes this check, as 5.9 to 5.18's do_wp_page() did.
 * Context: the PTL held (no new mapping or PTL-holder's reference can
 * appear).
 */
static int wp_can_reuse_anon(struct vs_vm_fault *vmf, struct vs_page *page)
{
	vs_assert_ptl_held(vmf->ptl);
	if (VS_BROKEN(cow_reuse_ignores_refcount))
		return vs_page_mapcount(page) == 1;
	if (vs_page_count(page) > 3)
		return 0;
	if (!vs_page_test_flags(page, VS_PG_LRU))
		vs_lru_drain(vmf->mm->pool);
	return vs_page_count(page) == 1;
}

/*
 * wp_by_refcount: 5.9's and 6.18's do_wp_page(), entered with the PTL
 * held and the PTE unchanged: reuse a shared mapping's page, or an
 * anonymous page that wp_can_reuse_anon() allows; copy the rest.
 * Context: as vs_do_wp_page(); no PTL held (takes it first).
 */
static int wp_by_refcount(struct vs_vm_fault *vmf, struct vs_page *page)
{
	int ret = fault_pte_lock(vmf);

	if (ret != PTE_LOCKED)
		return ret;
	if ((vmf->vm_flags & VS_VM_SHARED) ||
	    (vs_page_test_flags(page, VS_PG_ANON) &&
	     wp_can_reuse_anon(vmf, page)))
		return wp_reuse(vmf, page);
	vs_pte_unmap_unlock(vmf->ptl);
	return wp_page_copy(vmf, page);
}

/*
 * The write fault on a read-only PTE.  With mech.cow_refcount (5.9 on)
 * the reference count decides (wp_by_refcount()); before, 3.18's
 * do_wp_page() reuses an anonymous page that only this PTE maps
 * (reuse_swap_page(): its mapcount, whatever other references it has).
 */
int vs_do_wp_page(struct vs_vm_fault *vmf)
{
	struct vs_page *page = vs_pfn_to_page(vmf->mm->pool,
					      vs_pte_pfn(vmf->orig_pte));
	int ret;

	vs_vmf_assert_locked(vmf);
	vs_lockdep_assert_not_held(vmf->ptl);
	if (!page)
		return VS_VM_FAULT_SIGBUS;	/* not a page of the pool */
	if (vmf->mm->mech.cow_refcount)
		return wp_by_refcount(vmf, page);
	if ((vmf->vm_flags & VS_VM_SHARED) ||
	    (vs_page_test_flags(page, VS_PG_ANON) &&
	     vs_page_mapcount(page) == 1)) {
		ret = fault_pte_lock(vmf);
		if (ret != PTE_LOCKED)
			return ret;
		/* Under the PTL nothing new can map the page: fork takes
		 * this PTL to share it. */
		if ((vmf->vm_flags & VS_VM_SHARED) ||
		    vs_page_mapcount(page) == 1)
			return wp_reuse(vmf, page);
		vs_pte_unmap_unlock(vmf->ptl);
	}
	return wp_page_copy(vmf, page);
}

/*
 * The PTE is present and writable enough: a fault that raced another
 * one, a PTE made old (the model has no reclaim; a test ages one), or
 * one that lost USER to PROT_NONE and whose VMA allows the access
 * again.  Set what the access needs: by cmpxchg, not a store, since the
 * PTL does not stop the simulated CPU setting ACCESSED and DIRTY
 * (vs_ptep_set_flags), and a store of orig_pte | want would lose a
 * DIRTY set after the check.
 */
static int fault_fixup(struct vs_vm_fault *vmf)
{
	uint64_t want = VS_PTE_USER | VS_PTE_ACCESSED;
	int ret;

	if (vmf->flags & VS_FAULT_FLAG_WRITE)
		want |= VS_PTE_DIRTY;
	if ((vmf->orig_pte & want) == want)
		return 0;
	ret = fault_pte_lock(vmf);
	if (ret != PTE_LOCKED)
		return ret;
	/* Cannot return 0: fault_pte_lock() saw orig_pte under the PTL,
	 * and without the PTL only ACCESSED and DIRTY change.  The planted
	 * bug stores the value it checked. */
	if (VS_BROKEN(fixup_stores_checked_pte))
		vs_set_pte(vmf->pte, vmf->orig_pte | want);
	else
		(void)vs_ptep_set_flags(vmf->pte, vmf->orig_pte, want);
	vs_pte_unmap_unlock(vmf->ptl);
	return 0;
}

/* handle_pte_fault()'s cases, once vmf->orig_pte is read.
 * Context: as vs_handle_pte_fault(). */
static int pte_fault_cases(struct vs_vm_fault *vmf)
{
	vs_vmf_assert_locked(vmf);
	if (!vs_pte_present(vmf->orig_pte))
		return vmf->vm_file ? vs_do_fault(vmf) :
				      vs_do_anonymous_page(vmf);
	if ((vmf->flags & VS_FAULT_FLAG_WRITE) &&
	    !vs_pte_write(vmf->orig_pte))
		return vs_do_wp_page(vmf);
	return fault_fixup(vmf);
}

/*
 * pte_read_reclaim - read the PTE of the faulting address where
 * PT_RECLAIM may free its table under our lock held for read: inside an
 * RCU section, as 6.18's pte_offset_map() reads it, walking again from
 * the top.  Return: 0 with vmf->orig_pte set; 1 when the table is gone
 * (the fault returns 0 and the access faults again).
 * Context: the mmap_lock or the VMA's lock held for read.
 */
static int pte_read_reclaim(struct vs_vm_fault *vmf)
{
	vs_atomic64_t *ptep;

	vs_rcu_read_lock();
	ptep = vs_pte_offset(&vmf->mm->pgtable, vmf->address);
	if (ptep)
		vmf->orig_pte = vs_ptep_get_lockless(ptep);
	vs_rcu_read_unlock();
	return !ptep;
}

int vs_handle_pte_fault(struct vs_vm_fault *vmf)
{
	struct vs_pgtable *pt = &vmf->mm->pgtable;
	vs_atomic64_t *ptep;

	vs_vmf_assert_locked(vmf);
	vs_lockdep_assert_not_held(vmf->ptl);
	if (speculative(vmf)) {
		ptep = vs_pte_offset(pt, vmf->address);
		if (!ptep)
			return vs_spf_abort(vmf, VS_SPF_ABORT_NO_TABLE);
		vmf->orig_pte = vs_ptep_get_lockless(ptep);
	} else {
		ptep = vs_pte_alloc(pt, vmf->address);
		if (!ptep)
			return VS_VM_FAULT_OOM;
		if (vmf->mm->mech.pt_reclaim)
			return pte_read_reclaim(vmf) ? 0 : pte_fault_cases(vmf);
		vmf->orig_pte = vs_ptep_get_lockless(ptep);
	}
	return pte_fault_cases(vmf);
}
