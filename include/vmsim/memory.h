/* SPDX-License-Identifier: MIT */
/*
 * vmsim/memory.h - the building blocks of a fault path, after
 * mm/memory.c: what the built-in strategies are made of, exported so
 * that a strategy registered with vs_fault_strategy_register() can be
 * composed of them too (docs/strategies.md, "Writing your own
 * strategy"; docs/examples/spf_strategy.c).
 *
 * A fault is described by a struct vs_vm_fault (the kernel's struct
 * vm_fault).  A strategy fills in @mm, @address and @flags, finds the
 * VMA under the lock it chose, reads the VMA's fields into the
 * descriptor (vs_vmf_read_vma(), or vs_vma_snapshot() under RCU),
 * checks the access (vs_access_error()) and calls vs_handle_pte_fault(),
 * or handles a case itself with the pieces below.
 *
 * What the caller holds is said by two bits of @flags:
 *
 *   neither                  mmap_lock held for read: page tables may
 *                            be allocated, an anon_vma prepared.
 *   VS_FAULT_FLAG_VMA_LOCK   the VMA read-locked: tables may be
 *                            allocated, an anon_vma may not (the fault
 *                            returns VS_VM_FAULT_RETRY with @abort -1).
 *   VS_FAULT_FLAG_SPECULATIVE  only vs_rcu_read_lock(), and a
 *                            vm_sequence sample in @sequence: nothing is
 *                            allocated but pages, the snapshot is
 *                            revalidated under the PTL, and every
 *                            failure returns VS_VM_FAULT_RETRY with the
 *                            reason (enum vs_spf_abort) in @abort.
 *
 * Every function here that installs a PTE prepares what it installs
 * (allocates, clears or copies the page) with no lock held, then takes
 * the PTL with vs_pte_map_lock(), checks that the PTE is still the one
 * the fault saw (vs_vmf_pte_changed()), and installs with
 * vs_set_pte_range(), which follows the accounting rule: a PTE that
 * maps a page other than the zero page holds one reference, one
 * mapcount and one count of the mm's RSS (vs_add_mm_counter()).
 */
#ifndef VMSIM_MEMORY_H
#define VMSIM_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "mm.h"
#include "fault.h"

/**
 * VS_FAULT_FLAG_VMA_LOCK - the fault holds the VMA's read lock, not the
 * mmap_lock (the kernel's FAULT_FLAG_VMA_LOCK).  Set by a strategy in
 * vs_vm_fault.flags; vs_handle_mm_fault() refuses it.
 */
#define VS_FAULT_FLAG_VMA_LOCK 0x1000
/**
 * VS_FAULT_FLAG_SPECULATIVE - the fault holds no lock but RCU (the
 * speculative page fault series' FAULT_FLAG_SPECULATIVE; its value
 * there is taken by later kernel flags, so this one is the model's).
 * Set by a strategy in vs_vm_fault.flags; vs_handle_mm_fault() refuses
 * it.
 */
#define VS_FAULT_FLAG_SPECULATIVE 0x20000

/**
 * struct vs_vm_fault - one fault in flight (struct vm_fault)
 * @mm: the mm (set by the strategy)
 * @address: the faulting address, page aligned (set by the strategy)
 * @flags: VS_FAULT_FLAG_*, the mode bits above included (set by the
 *         strategy)
 * @vma: the VMA (vs_vmf_read_vma(), vs_vma_snapshot())
 * @vm_start, @vm_end, @vm_flags, @vm_pgoff, @vm_file, @anon_vma: the
 *         VMA's fields, read once when the fault began: stable under
 *         the mmap_lock or the VMA lock; under RCU a snapshot that
 *         @sequence validates
 * @sequence: speculative: the VMA's vm_sequence sampled before the
 *            snapshot
 * @orig_pte: the PTE the fault saw, read without the PTL
 * @pte: the PTE slot, set by vs_pte_map_lock() (valid under @ptl)
 * @ptl: the PTL held, set by vs_pte_map_lock()
 * @abort: set with a VS_VM_FAULT_RETRY return: the enum vs_spf_abort
 *         reason (speculative), or -1: the fault needs the mmap_lock
 *         (VMA lock)
 *
 * Lives on the faulting thread's stack; zero what the strategy does
 * not set (a designated initializer does).
 */
struct vs_vm_fault {
	struct vs_mm *mm;
	unsigned long address;
	unsigned int flags;
	struct vs_vma *vma;
	unsigned long vm_start, vm_end, vm_flags, vm_pgoff;
	struct vs_file *vm_file;
	struct vs_anon_vma *anon_vma;
	uint32_t sequence;
	uint64_t orig_pte;
	vs_atomic64_t *pte;
	vs_spinlock_t *ptl;
	int abort;
};

/**
 * vs_vmf_assert_vma_locked - assert, in a lockdep build, what @vmf->flags
 * says the fault holds (vmsim/lockdep.h; nothing without lockdep)
 * @vmf: the fault
 * @vma: the VMA whose lock VS_FAULT_FLAG_VMA_LOCK means (@vmf->vma once
 *       vs_vmf_read_vma() has set it)
 *
 * VS_FAULT_FLAG_SPECULATIVE: inside vs_rcu_read_lock();
 * VS_FAULT_FLAG_VMA_LOCK: @vma's vm_lock held; neither: @vmf->mm's
 * mmap_lock held.
 */
#define vs_vmf_assert_vma_locked(vmf, vma) \
	vs_lockdep_assert(((vmf)->flags & VS_FAULT_FLAG_SPECULATIVE) ? \
			  vs__lockdep_rcu_depth() > 0 : \
			  ((vmf)->flags & VS_FAULT_FLAG_VMA_LOCK) ? \
			  vs__lockdep_held(&(vma)->vm_lock, 0) : \
			  vs__lockdep_held(&(vmf)->mm->mmap_lock, 0), \
			  "as vmf->flags says: inside RCU (speculative), " \
			  "the VMA's vm_lock (VMA lock), else mmap_lock held")
/**
 * vs_vmf_assert_locked - vs_vmf_assert_vma_locked() of @vmf->vma
 * @vmf: the fault
 */
#define vs_vmf_assert_locked(vmf) vs_vmf_assert_vma_locked((vmf), (vmf)->vma)

/**
 * vs_spf_abort - give up a speculative fault for @reason
 * @vmf: the fault
 * @reason: a value of enum vs_spf_abort
 *
 * Context: any.
 * Return: VS_VM_FAULT_RETRY, with @vmf->abort set to @reason.
 */
static inline int vs_spf_abort(struct vs_vm_fault *vmf, int reason)
{
	vmf->abort = reason;
	return VS_VM_FAULT_RETRY;
}

/* ---- the VMA --------------------------------------------------------- */

/**
 * vs_access_error - does @vm_flags forbid the access @flags asks for?
 * @flags: VS_FAULT_FLAG_*
 * @vm_flags: the VMA's flags (VS_VM_*)
 *
 * arch/x86/mm/fault.c's access_error(): a write needs VM_WRITE, an
 * instruction fetch VM_EXEC, a read any access at all.
 *
 * Context: any.
 * Return: true when the fault is SIGSEGV.
 */
VS_EXTERN bool vs_access_error(unsigned int flags, unsigned long vm_flags);

/**
 * vs_vmf_read_vma - read @vma's fields into @vmf
 * @vmf: the fault
 * @vma: the VMA that contains vmf->address
 *
 * Context: as @vmf->flags says: @vma is stable, the mmap_lock held
 * (either side) or its VMA lock for read; or, speculative, inside
 * vs_rcu_read_lock(), as vs_vma_snapshot() calls it between its
 * vm_sequence sample and check (under RCU only, call that instead).
 */
VS_EXTERN void vs_vmf_read_vma(struct vs_vm_fault *vmf, struct vs_vma *vma);

/**
 * vs_vma_snapshot - a consistent snapshot of @vma, under RCU
 * @vmf: the fault; @vmf->flags has VS_FAULT_FLAG_SPECULATIVE
 * @vma: what vs_vma_lookup() found
 *
 * Samples vm_sequence into @vmf->sequence (odd: a writer is inside),
 * reads the fields as vs_vmf_read_vma() does, checks that @vma is not
 * detached and not marked by the current mmap_lock writer (which may be
 * between two steps of one operation, its fields consistent but
 * stale), and checks that vm_sequence did not move meanwhile.  The
 * snapshot may still go stale afterwards: the fault revalidates
 * @vmf->sequence under the PTL before it installs (vs_pte_map_lock(),
 * or vs_vma_has_changed() under a PTL taken otherwise).  Whether the
 * snapshot contains @vmf->address is for the caller to check.
 *
 * Context: inside vs_rcu_read_lock(), which keeps @vma from being freed.
 * Return: 0; VS_VM_FAULT_RETRY with @vmf->abort VS_SPF_ABORT_SEQ_ODD,
 * _NO_VMA (detached), _VMA_WRITE or _SEQ_CHANGED.
 */
VS_EXTERN int vs_vma_snapshot(struct vs_vm_fault *vmf, struct vs_vma *vma);

/**
 * vs_vma_has_changed - did a writer change the VMA since the snapshot?
 * @vmf: a speculative fault, after vs_vma_snapshot()
 *
 * The speculative page fault series' vma_has_changed().  Under the PTL
 * of the fault's PTE the answer is final until the PTL is dropped:
 * every VMA change that affects PTEs (munmap's zap, mprotect's
 * change_protection, fork's write-protect) takes that PTL after its
 * vm_write_begin, so either its count change is visible here, or its
 * PTE pass comes after our unlock and sees what we installed.
 *
 * Context: inside vs_rcu_read_lock().
 * Return: true when vm_sequence moved: the snapshot is stale.
 */
static inline bool vs_vma_has_changed(struct vs_vm_fault *vmf)
{
	vs_rcu_lockdep_assert();
	return vs_read_seqcount_retry(&vmf->vma->vm_sequence, vmf->sequence);
}

/* ---- the page-table lock ---------------------------------------------- */

/**
 * vs_pte_map_lock - take the PTL of @vmf->address (pte_map_lock)
 * @vmf: the fault
 *
 * The speculative page fault series' pte_map_lock(): for a speculative
 * fault, vs_vma_has_changed() before the lock (cheap: most races show
 * there) and again under it (the check that matters); otherwise
 * vs_pte_offset_map_lock() alone.
 *
 * Context: as @vmf->flags says; takes the PTL.
 * Return: true with the PTL held, @vmf->pte and @vmf->ptl set; false
 * without it and with @vmf->abort set (VS_SPF_ABORT_SEQ_CHANGED,
 * _SEQ_PTL, or _NO_TABLE: the PTE page went away, which only a
 * speculative fault can see): the fault returns VS_VM_FAULT_RETRY.
 */
VS_EXTERN bool vs_pte_map_lock(struct vs_vm_fault *vmf);

/**
 * vs_vmf_pte_changed - is the PTE no longer the one the fault saw?
 * @vmf: the fault, @vmf->orig_pte read before the PTL was taken
 *
 * Another fault or a zap won the race (vmf_pte_changed): the fault
 * drops what it prepared and returns 0, and the access retries (a
 * speculative fault may give up instead, VS_SPF_ABORT_PTE_CHANGED).
 *
 * Context: the PTL held (vs_pte_map_lock()).
 * Return: true when *@vmf->pte != @vmf->orig_pte.
 */
VS_EXTERN bool vs_vmf_pte_changed(struct vs_vm_fault *vmf);

/**
 * vs_set_pte_range - map @page at @vmf->address (set_pte_range, one page)
 * @vmf: the fault, with the PTL held and the PTE unchanged
 * @page: the page; the caller's reference passes to the PTE (the zero
 *        page takes none)
 * @prot: VS_PTE_* bits besides PRESENT, USER and ACCESSED (WRITE and
 *        DIRTY for a writable mapping)
 *
 * Adds the PTE's mapcount and RSS count (vs_add_mm_counter()) unless
 * @page is the zero page, then installs the PTE with a release store,
 * so that a lockless walker that sees it sees the page's contents.
 *
 * Context: the PTL held (vs_pte_map_lock()); returns with it held.
 */
VS_EXTERN void vs_set_pte_range(struct vs_vm_fault *vmf, struct vs_page *page,
				uint64_t prot);

/**
 * vs_finish_fault - install a page the fault prepared (finish_fault)
 * @vmf: the fault, @vmf->orig_pte read
 * @page: the page, with a reference that passes to the PTE
 * @prot: as for vs_set_pte_range()
 *
 * vs_pte_map_lock(), vs_vmf_pte_changed(), vs_set_pte_range(), unlock.
 * When the PTE cannot be installed, the reference on @page is dropped.
 *
 * Context: as @vmf->flags says; no PTL held; takes and drops the PTL.
 * Return: 0 (installed, or the PTE changed and the access retries);
 * VS_VM_FAULT_RETRY with @vmf->abort for a speculative fault that gave
 * up.
 */
VS_EXTERN int vs_finish_fault(struct vs_vm_fault *vmf, struct vs_page *page,
			      uint64_t prot);

/* ---- pages ------------------------------------------------------------ */

/**
 * vs_alloc_anon_page - a new anonymous page for @vmf (alloc_anon_folio)
 * @vmf: the fault; its VMA needs an anon_vma (anon_vma_prepare)
 * @src: the page to copy (a copy-on-write), or NULL for a cleared page
 * @pagep: receives the page, with one reference
 *
 * Prepares the VMA's anon_vma first when it has none: under the
 * mmap_lock only; a speculative or VMA-locked fault returns
 * VS_VM_FAULT_RETRY for it.  The page is cleared or copied here, with
 * no lock held, and nobody sees it until vs_set_pte_range() publishes it.
 *
 * Context: as @vmf->flags says; no PTL held.
 * Return: 0 and *@pagep; VS_VM_FAULT_OOM (the pool is empty, or no
 * anon_vma could be made); VS_VM_FAULT_RETRY with @vmf->abort
 * (VS_SPF_ABORT_ANON_VMA, _NOMEM; or -1 under the VMA lock).
 */
VS_EXTERN int vs_alloc_anon_page(struct vs_vm_fault *vmf,
				 struct vs_page *src, struct vs_page **pagep);

/* ---- the cases of a fault --------------------------------------------- */

/**
 * vs_handle_pte_fault - resolve the fault @vmf describes (handle_pte_fault)
 * @vmf: the fault, with the VMA's fields read and the access allowed
 *       (vs_access_error() false)
 *
 * Finds the PTE slot (allocating missing tables unless speculative),
 * reads @vmf->orig_pte without the PTL and dispatches: an empty PTE to
 * vs_do_fault() (file) or vs_do_anonymous_page(); a write to a
 * read-only PTE to vs_do_wp_page(); else the access bits the access
 * needs are set (a fault that raced another one).
 *
 * Context: as @vmf->flags says: the mmap_lock held for read, or the
 * VMA lock, or inside vs_rcu_read_lock(); no PTL held.  Returns with
 * the same held.
 * Return: 0, VS_VM_FAULT_* error bits, or VS_VM_FAULT_RETRY with
 * @vmf->abort.
 */
VS_EXTERN int vs_handle_pte_fault(struct vs_vm_fault *vmf);

/**
 * vs_do_anonymous_page - fill an empty PTE of an anonymous VMA
 * @vmf: as for vs_handle_pte_fault(), with @vmf->orig_pte read (empty)
 *
 * do_anonymous_page: a read maps the zero page; a write maps a new,
 * cleared page (vs_alloc_anon_page(), vs_finish_fault()).
 *
 * Context: as vs_handle_pte_fault().
 * Return: as vs_handle_pte_fault().
 */
VS_EXTERN int vs_do_anonymous_page(struct vs_vm_fault *vmf);

/**
 * vs_do_fault - fill an empty PTE of a file VMA
 * @vmf: as for vs_handle_pte_fault(), with @vmf->orig_pte read (empty)
 *
 * do_fault: a read maps the page-cache page read-only (do_read_fault;
 * a later write of a shared mapping comes back through vs_do_wp_page());
 * a shared write maps it writable and dirty (do_shared_fault); a
 * private write maps a copy (do_cow_fault).
 *
 * Context: as vs_handle_pte_fault().
 * Return: as vs_handle_pte_fault(); VS_VM_FAULT_SIGBUS for a page past
 * the end of the file.
 */
VS_EXTERN int vs_do_fault(struct vs_vm_fault *vmf);

/**
 * vs_do_wp_page - a write to a present, read-only PTE of a writable VMA
 * @vmf: as for vs_handle_pte_fault(), with @vmf->orig_pte read
 *
 * do_wp_page: a shared mapping's page is made writable and dirty; an
 * anonymous page that only this PTE maps and references is reused;
 * anything else (the zero page, a page shared after fork, a private
 * file page) is copied (wp_page_copy), and the PTE's reference,
 * mapcount and RSS count move to the copy.
 *
 * Context: as vs_handle_pte_fault().
 * Return: as vs_handle_pte_fault().
 */
VS_EXTERN int vs_do_wp_page(struct vs_vm_fault *vmf);

#endif /* VMSIM_MEMORY_H */
