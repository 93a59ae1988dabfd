/* SPDX-License-Identifier: MIT */
/*
 * docs/examples/spf_strategy.c - a speculative page fault strategy of
 * one's own, composed of the building blocks of vmsim/memory.h and
 * checked by vs_stress_run() (docs/strategies.md, "Writing your own
 * strategy", walks through it).
 *
 * The fault runs under vs_rcu_read_lock() only: it looks the VMA up,
 * snapshots it between a vm_sequence sample and its check, allocates
 * and clears the page with no lock held, takes the page-table lock,
 * revalidates vm_sequence there, and sets the PTE.  The anonymous
 * write to an empty PTE (the multi-fault benchmark's case) is written
 * out step by step; the other cases go to vs_handle_pte_fault() under
 * the same snapshot.  Any abort falls back to the locked strategy.
 *
 * Built with -DBROKEN, the fault skips the revalidation under the
 * page-table lock: a fault that raced munmap or mprotect installs a
 * PTE its VMA no longer allows, and vs_stress_run() must say so.
 *
 * Exit status: 0 when the stress run agrees with the build (no
 * violation; with -DBROKEN, at least one), 1 otherwise.
 *
 *	cc spf_strategy.c $(pkg-config --cflags --libs vmsim-check) \
 *		-o spf_strategy
 */
#include <stdio.h>

#include <vmsim/check/stress.h>
#include <vmsim/vmsim.h>

#ifdef BROKEN
#define RUNS 10		/* seeds to try before calling the bug missed */
#else
#define RUNS 3		/* seeds to pass; one clean pass is no evidence */
#endif

/*
 * The anonymous write to an empty PTE.  Context: inside
 * vs_rcu_read_lock(), @vmf snapshotted and @ptep read into orig_pte.
 * Return: 0, or VS_VM_FAULT_RETRY with vmf->abort.
 */
static int anonymous_write(struct vs_vm_fault *vmf)
{
	struct vs_page *page;
	vs_atomic64_t *ptep;
	vs_spinlock_t *ptl;
	int ret;

	/* The page, cleared with no lock held (a VMA without an anon_vma
	 * yet aborts: preparing one needs the mmap_lock). */
	ret = vs_alloc_anon_page(vmf, NULL, &page);
	if (ret)
		return ret;
	ptep = vs_pte_offset_map_lock(&vmf->mm->pgtable, vmf->address, &ptl);
	if (!ptep) {
		vs_put_page(vmf->mm->pool, page);
		return vs_spf_abort(vmf, VS_SPF_ABORT_NO_TABLE);
	}
	vmf->pte = ptep;
	vmf->ptl = ptl;
#ifndef BROKEN
	/* Under the PTL, the snapshot is still good or the writer's PTE
	 * pass has yet to come (vs_vma_has_changed() says why). */
	if (vs_vma_has_changed(vmf)) {
		vs_pte_unmap_unlock(ptl);
		vs_put_page(vmf->mm->pool, page);
		return vs_spf_abort(vmf, VS_SPF_ABORT_SEQ_PTL);
	}
#endif
	if (vs_vmf_pte_changed(vmf)) {
		vs_pte_unmap_unlock(ptl);
		vs_put_page(vmf->mm->pool, page);
		return vs_spf_abort(vmf, VS_SPF_ABORT_PTE_CHANGED);
	}
	vs_set_pte_range(vmf, page, VS_PTE_WRITE | VS_PTE_DIRTY);
	vs_pte_unmap_unlock(ptl);
	return 0;
}

/*
 * The speculative fault.  Context: inside vs_rcu_read_lock(), which
 * keeps the VMA and the page tables found from being freed.
 * Return: as the fault, or VS_VM_FAULT_RETRY with vmf->abort.
 */
static int speculative_fault(struct vs_vm_fault *vmf)
{
	struct vs_vma *vma = vs_vma_lookup(vmf->mm, vmf->address);
	vs_atomic64_t *ptep;
	int ret;

	if (!vma)
		return vs_spf_abort(vmf, VS_SPF_ABORT_NO_VMA);
	ret = vs_vma_snapshot(vmf, vma);
	if (ret)
		return ret;
	if (vmf->address < vmf->vm_start || vmf->address >= vmf->vm_end)
		return vs_spf_abort(vmf, VS_SPF_ABORT_NO_VMA);
	if (vs_access_error(vmf->flags, vmf->vm_flags))
		return VS_VM_FAULT_SIGSEGV;
	if (vmf->vm_file || !(vmf->flags & VS_FAULT_FLAG_WRITE))
		return vs_handle_pte_fault(vmf);
	/* No table is allocated here: that needs the mmap_lock. */
	ptep = vs_pte_offset(&vmf->mm->pgtable, vmf->address);
	if (!ptep)
		return vs_spf_abort(vmf, VS_SPF_ABORT_NO_TABLE);
	vmf->orig_pte = vs_ptep_get_lockless(ptep);
	if (!vs_pte_none(vmf->orig_pte))
		return vs_handle_pte_fault(vmf);
	return anonymous_write(vmf);
}

/* The strategy's entry (struct vs_fault_strategy_ops.fault). */
static int example_fault(struct vs_mm *mm, unsigned long addr,
			 unsigned int flags)
{
	struct vs_vm_fault vmf = {
		.mm = mm,
		.address = addr & VS_PAGE_MASK,
		.flags = flags | VS_FAULT_FLAG_SPECULATIVE,
	};
	int ret;

	vs_rcu_read_lock();
	ret = speculative_fault(&vmf);
	vs_rcu_read_unlock();
	if (!(ret & VS_VM_FAULT_RETRY)) {
		vs_count_vm_event(VS_SPF_SUCCESS);
		return ret;
	}
	vs_count_vm_event(VS_SPF_ABORT_EVENT + vmf.abort);
	if (flags & VS_FAULT_FLAG_NO_FALLBACK)
		return VS_VM_FAULT_RETRY;
	return vs_fault_strategy_ops(VS_FAULT_LOCKED)->fault(mm, addr, flags);
}

static const struct vs_fault_strategy_ops example = {
	.name = "example-spf",
	.fault = example_fault,
};

int main(void)
{
	struct vs_stress_report rep;
	struct vs_stress_config cfg = {
		.lock_kind = "rwsem",
		.faults = 200000,
		.ops = 2000,
		.max_ms = 3000,
	};
	unsigned long spf_ok = 0, violations = 0;
	int run, err;

	cfg.strategy = vs_fault_strategy_register(&example);
	if (cfg.strategy < 0) {
		fprintf(stderr, "vs_fault_strategy_register: %s\n",
			vs_strerror(cfg.strategy));
		return 1;
	}
	for (run = 0; run < RUNS && !violations; run++) {
		cfg.seed = 0x5eed0000 + run;
		err = vs_stress_run(&cfg, &rep);
		if (err) {
			fprintf(stderr, "vs_stress_run: %s\n", vs_strerror(err));
			return 1;
		}
		printf("seed %#llx: %lu faults (%lu speculative), %lu "
		       "operations, %lu violations%s%s\n",
		       (unsigned long long)rep.seed, rep.faults,
		       rep.stats.spf_success, rep.ops, rep.violations,
		       rep.violations ? ": " : "", rep.first);
		spf_ok += rep.stats.spf_success;
		violations += rep.violations;
	}
#ifdef BROKEN
	printf(violations ? "caught\n" : "missed\n");
	return violations ? 0 : 1;
#else
	/* Passing by falling back on every fault would prove nothing. */
	return violations == 0 && spf_ok > 0 ? 0 : 1;
#endif
}
