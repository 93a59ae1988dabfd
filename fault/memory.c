/* SPDX-License-Identifier: MIT */
/*
 * fault/memory.c - handle_pte_fault and its cases, after mm/memory.c:
 * do_anonymous_page, do_read_fault / do_cow_fault / do_shared_fault,
 * do_wp_page, and the spurious-fault fixup.
 *
 * Every case prepares what it installs (allocates, clears or copies the
 * page, looks the page cache up) with no lock held, then takes the PTL
 * with fault_pte_lock(), checks that the PTE is still the one it saw
 * (pte_same), and installs.  The accounting follows vm/internal.h.
 *
 * Who may do what depends on f->strategy:
 *
 *   locked   mmap_lock held for read: tables may be allocated, an
 *            anon_vma prepared.
 *   pervma   the VMA read-locked: tables may be allocated (they are
 *            freed only under a write-marked VMA); an anon_vma may not
 *            (mainline's vmf_anon_prepare returns VM_FAULT_RETRY).
 *   spf      only rcu_read_lock: nothing is allocated but pages; the
 *            VMA snapshot is revalidated under the PTL; every failure
 *            aborts with a reason and the caller retries locked.
 */
#include "internal.h"

#define PTE_USER_FLAGS (VS_PTE_PRESENT | VS_PTE_USER | VS_PTE_ACCESSED)
#define PTE_DIRTY_FLAGS (VS_PTE_WRITE | VS_PTE_DIRTY)

/* Out of pages: spf retries locked, which reports the OOM itself. */
static int fault_oom(struct vs__fault *f)
{
	if (f->strategy == VS_FAULT_SPF)
		return vs__spf_abort(f, VS_SPF_ABORT_NOMEM);
	return VS_VM_FAULT_OOM;
}

/*
 * The PTE changed between the fault's look and the PTL: another fault
 * or a zap won.  Locked and pervma return 0 and the access retries, as
 * the kernel does; spf aborts, so that its count shows the race.
 */
static int fault_pte_changed(struct vs__fault *f)
{
	if (f->strategy == VS_FAULT_SPF)
		return vs__spf_abort(f, VS_SPF_ABORT_PTE_CHANGED);
	return 0;
}

/* fault_pte_lock() succeeded: the PTL is held. */
#define PTE_LOCKED (-1)

/*
 * fault_pte_lock - take the PTL of f->address (pte_map_lock)
 *
 * For spf, vm_sequence is checked once before the lock (cheap: most
 * races show there) and again under it.  The second check is the one
 * that matters: every VMA change that affects PTEs (munmap's zap,
 * mprotect's change_protection, fork's write-protect) takes this PTL
 * after its vm_write_begin, so either the writer's count change is
 * visible here, or the writer's PTE pass comes after our unlock and
 * sees what we install.
 * Return: PTE_LOCKED with f->ptep and f->ptl set and the PTL held;
 * else what the fault returns (an spf abort, or 0: someone else's
 * fault or zap won, and the access retries).
 */
static int fault_pte_lock(struct vs__fault *f)
{
	struct vs_vma *vma = f->vma;

	if (f->strategy == VS_FAULT_SPF &&
	    vs_read_seqcount_retry(&vma->vm_sequence, f->seq))
		return vs__spf_abort(f, VS_SPF_ABORT_SEQ_CHANGED);
	f->ptep = vs_pte_offset_map_lock(&f->mm->pgtable, f->address,
					 &f->ptl);
	if (!f->ptep) {
		/* The PTE page went away (spf only: under a lock, tables
		 * of a live VMA stay). */
		return f->strategy == VS_FAULT_SPF ?
		       vs__spf_abort(f, VS_SPF_ABORT_NO_TABLE) : 0;
	}
	if (f->strategy == VS_FAULT_SPF &&
	    !VS_BROKEN(spf_skip_seq_revalidate) &&
	    vs_read_seqcount_retry(&vma->vm_sequence, f->seq)) {
		vs_pte_unmap_unlock(f->ptl);
		return vs__spf_abort(f, VS_SPF_ABORT_SEQ_PTL);
	}
	if (vs_ptep_get(f->ptep) != f->orig_pte &&
	    !VS_BROKEN(fault_no_pte_same)) {
		vs_pte_unmap_unlock(f->ptl);
		return fault_pte_changed(f);
	}
	return PTE_LOCKED;
}

/*
 * Install @page at f->address and unlock.  The caller's reference
 * passes to the PTE (none for the zero page).  Context: the PTL held.
 */
static void fault_set_pte(struct vs__fault *f, struct vs_page *page,
			  uint64_t flags)
{
	struct vs_mm *mm = f->mm;

	if (!vs_page_test_flags(page, VS_PG_ZERO)) {
		vs_page_add_mapcount(page);
		vs__mm_add_rss(mm, page, 1);
	}
	/* Release: the page's contents before the PTE (see vs_set_pte). */
	vs_set_pte(f->ptep, vs_mk_pte(vs_page_to_pfn(mm->pool, page),
				      PTE_USER_FLAGS | flags));
	vs_pte_unmap_unlock(f->ptl);
}

/*
 * The anon_vma a new anonymous page needs.  Locked prepares one (the
 * mmap_lock read side serializes nothing here: the cmpxchg does);
 * pervma and spf leave that to the mmap_lock path.
 */
static int fault_anon_prepare(struct vs__fault *f)
{
	if (f->anon_vma)
		return 0;
	if (f->strategy == VS_FAULT_SPF)
		return vs__spf_abort(f, VS_SPF_ABORT_ANON_VMA);
	if (f->strategy == VS_FAULT_PERVMA) {
		f->abort = -1;
		return VS_VM_FAULT_RETRY;
	}
	if (vs__anon_vma_prepare(f->vma))
		return VS_VM_FAULT_OOM;
	f->anon_vma = vs_load_acquire(&f->vma->anon_vma);
	return 0;
}

/*
 * A new anonymous page, cleared or copied from @src, with no lock
 * held.  Return: 0 and *@pagep, or a code.
 */
static int fault_new_anon_page(struct vs__fault *f, struct vs_page *src,
			       struct vs_page **pagep)
{
	struct vs_page *page;
	int ret = fault_anon_prepare(f);

	if (ret)
		return ret;
	page = vs_alloc_page(f->mm->pool);
	if (!page)
		return fault_oom(f);
	/* Nobody else sees the page yet: a plain store sets its flags
	 * (the kernel's __folio_set_anon), before the clear's stores. */
	vs_write_once(&page->flags, VS_PG_ANON);
	if (src)
		vs_copy_page(page, src);
	else
		vs_clear_page(page);
	page->mapping = f->anon_vma;
	*pagep = page;
	return 0;
}

/* Install a page the fault prepared, or drop it when the PTE moved. */
static int fault_install(struct vs__fault *f, struct vs_page *page,
			 uint64_t flags)
{
	int ret = fault_pte_lock(f);

	if (ret != PTE_LOCKED) {
		vs_put_page(f->mm->pool, page);
		return ret;
	}
	fault_set_pte(f, page, flags);
	return 0;
}

/* do_anonymous_page: the zero page for a read, a cleared page else. */
static int do_anonymous_page(struct vs__fault *f)
{
	struct vs_page *page;
	int ret;

	if (!(f->flags & VS_FAULT_FLAG_WRITE)) {
		ret = fault_pte_lock(f);
		if (ret != PTE_LOCKED)
			return ret;
		fault_set_pte(f, vs_zero_page(f->mm->pool), 0);
		return 0;
	}
	ret = fault_new_anon_page(f, NULL, &page);
	if (ret)
		return ret;
	return fault_install(f, page, PTE_DIRTY_FLAGS);
}

/*
 * do_fault: a file page at an empty PTE.  A read maps the page-cache
 * page read-only (a later write of a shared mapping comes back through
 * do_wp_page, which dirties it: write notification); a shared write
 * maps it writable and dirty; a private write copies it (do_cow_fault).
 */
static int do_fault(struct vs__fault *f)
{
	unsigned long pgoff = f->pgoff +
			      ((f->address - f->start) >> VS_PAGE_SHIFT);
	struct vs_page *fpage, *page;
	int write = f->flags & VS_FAULT_FLAG_WRITE, err, ret;

	err = vs_file_get_page(f->file, pgoff, &fpage);
	if (err == -EFAULT)
		return VS_VM_FAULT_SIGBUS;
	if (err)
		return fault_oom(f);
	if (!write)
		return fault_install(f, fpage, 0);
	if (f->vm_flags & VS_VM_SHARED) {
		vs_page_set_flags(fpage, VS_PG_DIRTY);
		return fault_install(f, fpage, PTE_DIRTY_FLAGS);
	}
	ret = fault_new_anon_page(f, fpage, &page);
	vs_put_page(f->mm->pool, fpage);
	if (ret)
		return ret;
	return fault_install(f, page, PTE_DIRTY_FLAGS);
}

/* Make the locked, unchanged PTE writable and dirty, and unlock. */
static int wp_reuse(struct vs__fault *f, struct vs_page *page)
{
	if (vs_page_test_flags(page, VS_PG_FILE))
		vs_page_set_flags(page, VS_PG_DIRTY);
	vs_set_pte(f->ptep, f->orig_pte | VS_PTE_ACCESSED | PTE_DIRTY_FLAGS);
	vs_pte_unmap_unlock(f->ptl);
	return 0;
}

/*
 * wp_page_copy: replace the read-only page at the locked PTE with a
 * private copy.  @old is the mapped page (the zero page included); the
 * PTE's reference, mapcount and RSS move from it to the copy.
 */
static int wp_page_copy(struct vs__fault *f, struct vs_page *old)
{
	struct vs_mm *mm = f->mm;
	struct vs_page *page;
	int zero = vs_page_test_flags(old, VS_PG_ZERO), ret;

	/* Our own reference on @old keeps it while we copy it unlocked;
	 * when it is already free, the PTE changed under us. */
	if (!zero && !vs_get_page_unless_zero(old))
		return fault_pte_changed(f);
	ret = fault_new_anon_page(f, zero ? NULL : old, &page);
	if (ret)
		goto out;
	ret = fault_pte_lock(f);
	if (ret != PTE_LOCKED) {
		vs_put_page(mm->pool, page);
		goto out;
	}
	if (!zero) {
		vs__mm_add_rss(mm, old, -1);
		vs_page_remove_mapcount(old);
		vs_put_page(mm->pool, old);	/* the PTE's reference */
	}
	fault_set_pte(f, page, PTE_DIRTY_FLAGS);
	ret = 0;
out:
	if (!zero)
		vs_put_page(mm->pool, old);
	return ret;
}

/*
 * do_wp_page: a write to a present, read-only PTE of a writable VMA.
 * A shared mapping's page is made writable and dirty; an anonymous
 * page that only this PTE maps and references is reused (wp_can_reuse
 * _anon_folio); anything else (the zero page, a page shared after
 * fork, a private file page) is copied.
 */
static int do_wp_page(struct vs__fault *f)
{
	struct vs_page *page = vs_pfn_to_page(f->mm->pool,
					      vs_pte_pfn(f->orig_pte));
	int ret;

	if (!page)
		return VS_VM_FAULT_SIGBUS;	/* not a page of the pool */
	if ((f->vm_flags & VS_VM_SHARED) ||
	    (vs_page_test_flags(page, VS_PG_ANON) &&
	     vs_page_mapcount(page) == 1)) {
		ret = fault_pte_lock(f);
		if (ret != PTE_LOCKED)
			return ret;
		/* Under the PTL nothing new can map the page: fork takes
		 * this PTL to share it. */
		if ((f->vm_flags & VS_VM_SHARED) ||
		    (vs_page_mapcount(page) == 1 &&
		     vs_page_count(page) == 1))
			return wp_reuse(f, page);
		vs_pte_unmap_unlock(f->ptl);
	}
	return wp_page_copy(f, page);
}

/*
 * The PTE is present and writable enough: a fault that raced another
 * one, or a PTE that lost USER to PROT_NONE and whose VMA allows the
 * access again.  Set what the access needs.
 */
static int fault_fixup(struct vs__fault *f)
{
	uint64_t want = VS_PTE_USER | VS_PTE_ACCESSED;
	int ret;

	if (f->flags & VS_FAULT_FLAG_WRITE)
		want |= VS_PTE_DIRTY;
	if ((f->orig_pte & want) == want)
		return 0;
	ret = fault_pte_lock(f);
	if (ret != PTE_LOCKED)
		return ret;
	vs_set_pte(f->ptep, f->orig_pte | want);
	vs_pte_unmap_unlock(f->ptl);
	return 0;
}

/*
 * vs__handle_pte_fault - handle the fault described by @f
 * Context: f->strategy says what the caller holds (see the top).
 * Return: 0, VM_FAULT_* error bits, or VM_FAULT_RETRY with f->abort.
 */
int vs__handle_pte_fault(struct vs__fault *f)
{
	struct vs_pgtable *pt = &f->mm->pgtable;
	vs_atomic64_t *ptep;

	if (f->strategy == VS_FAULT_SPF) {
		ptep = vs_pte_offset(pt, f->address);
		if (!ptep)
			return vs__spf_abort(f, VS_SPF_ABORT_NO_TABLE);
	} else {
		ptep = vs_pte_alloc(pt, f->address);
		if (!ptep)
			return VS_VM_FAULT_OOM;
	}
	f->orig_pte = vs_ptep_get_lockless(ptep);
	if (!vs_pte_present(f->orig_pte))
		return f->file ? do_fault(f) : do_anonymous_page(f);
	if ((f->flags & VS_FAULT_FLAG_WRITE) && !vs_pte_write(f->orig_pte))
		return do_wp_page(f);
	return fault_fixup(f);
}
