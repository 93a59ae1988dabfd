/* SPDX-License-Identifier: MIT */
/*
 * vm/tlb.c - the mmu_gather of a zap, and TLB flushes with their IPIs
 * (mm/mmu_gather.c, include/asm-generic/tlb.h, arch/x86/mm/tlb.c of
 * Linux).
 *
 * A zap clears PTEs and gathers the pages they mapped; it must not free
 * a page before every CPU that may still hold a TLB entry for it has
 * flushed.  The gather holds gather_local pages in itself, then
 * gather_batch in each batch page it takes from the pool (the kernel
 * takes them with __get_free_page(GFP_NOWAIT)); with gather_batches
 * batch pages full, or none to be had, it flushes at once.  A flush
 * flushes this CPU's TLB and sends an IPI to every other CPU in the
 * mm's cpumask (the CPUs that ran the mm: a vCPU joins it when it
 * faults or makes a VM system call there), waits for their handlers,
 * then releases the gathered pages with vs_release_pages().
 *
 * The IPIs exist on vCPUs only: on host threads a flush is the release.
 */
#include <string.h>

#include <vmsim/mm.h>
#include <vmsim/vcpu_annotate.h>

#include "../sync/broken.h"
#include "internal.h"

/* A vCPU that runs @mm joins its cpumask (switch_mm's cpumask_set_cpu):
 * a load first, so that the line is written once per vCPU. */
void vs__mm_enter(struct vs_mm *mm)
{
	int cpu = vs_vcpu_cpu();
	vs_atomic_long_t *w;
	long bit;

	if (cpu < 0)
		return;
	w = &mm->shared->cpumask[cpu / 64];
	bit = (long)(1UL << (cpu % 64));
	if (!(vs_read_once(w) & bit))
		vs_fetch_or(w, bit);
}

void vs__mm_syscall(struct vs_mm *mm)
{
	VS_VCPU_WORK(VS_VCPU_SYSCALL, NULL, 0);
	if (!mm)
		return;		/* refused by the caller */
	VS_VCPU_WORK(VS_VCPU_KERNEL, NULL, vs_page_pool_kernel(mm->pool)->
		     cycles[VS_KSTEP_SYSCALL_MM]);
	vs__mm_enter(mm);
}

/*
 * Flush the TLBs of [@start, @end) on every CPU of @mm's cpumask: this
 * one's by its own work, the others' by an IPI whose handler each pays,
 * and whose round trip this CPU waits for (flush_tlb_mm_range ->
 * flush_tlb_others, with wait).
 */
#if VS_VCPU
static void tlb_flush(struct vs_mm *mm, unsigned long start,
		      unsigned long end)
{
	const struct vs_kernel *k = vs_page_pool_kernel(mm->pool);
	int self = vs_vcpu_cpu(), cpu, sent = 0;
	unsigned long pages = (end - start) >> VS_PAGE_SHIFT;
	uint64_t handler = k->cycles[VS_KSTEP_TLB_IPI];
	unsigned long bits = 0;

	if (self < 0)
		return;
	/* Up to the ceiling, one invlpg a page; beyond, the whole TLB. */
	VS_VCPU_WORK(VS_VCPU_KERNEL, NULL, pages <= k->tlb_single_page_ceiling
		     ? k->cycles[VS_KSTEP_TLB_PAGE] * pages
		     : k->cycles[VS_KSTEP_TLB_LOCAL]);
	for (cpu = 0; cpu < VS_VCPU_MAX; cpu++) {
		if (cpu % 64 == 0)
			bits = (unsigned long)vs_read_once(
				&mm->shared->cpumask[cpu / 64]);
		if (cpu == self || !(bits & (1UL << (cpu % 64))))
			continue;
		VS_VCPU_WORK(VS_VCPU_KERNEL, NULL, k->cycles[VS_KSTEP_IPI_SEND]);
		sent += vs_vcpu_interrupt(cpu, handler) > 0;
	}
	if (sent)
		VS_VCPU_WORK(VS_VCPU_KERNEL, NULL,
			     2 * vs_vcpu_ipi_cycles() + handler);
}
#else
static void tlb_flush(struct vs_mm *mm, unsigned long start,
		      unsigned long end)
{
	(void)mm, (void)start, (void)end;	/* host threads: no IPIs */
}
#endif

void vs__tlb_gather(struct vs_mmu_gather *tlb, struct vs_mm *mm,
		    unsigned long start, unsigned long end)
{
	memset(tlb, 0, sizeof(*tlb));
	tlb->mm = mm;
	tlb->start = start;
	tlb->end = end;
	tlb->k = vs_page_pool_kernel(mm->pool);
}

/* Flush, then release the gathered pages; the batch pages are kept for
 * what the zap gathers next (tlb_flush_mmu). */
static void tlb_flush_mmu(struct vs_mmu_gather *tlb)
{
	struct vs_page_pool *pool = tlb->mm->pool;
	unsigned int i;

	if (!tlb->need_flush)
		return;
	tlb->need_flush = 0;
	tlb_flush(tlb->mm, tlb->start, tlb->end);
	vs_release_pages(pool, tlb->local, tlb->nr_local);
	for (i = 0; i < tlb->used; i++)
		vs_release_pages(pool, (struct vs_page **)tlb->batch[i]->data,
				 i + 1 < tlb->used ? tlb->k->gather_batch
						   : tlb->nr_last);
	tlb->nr_local = 0;
	tlb->used = 0;
	tlb->nr_last = 0;
}

/* A place for one more page: the local bundle, the batch page in use,
 * the next batch page kept, or a new one.  Return: NULL when the
 * gather is full. */
static struct vs_page **tlb_slot(struct vs_mmu_gather *tlb)
{
	struct vs_page *bp;

	if (tlb->nr_local < tlb->k->gather_local)
		return &tlb->local[tlb->nr_local++];
	if (tlb->used && tlb->nr_last < tlb->k->gather_batch)
		return (struct vs_page **)tlb->batch[tlb->used - 1]->data +
		       tlb->nr_last++;
	if (tlb->used == tlb->nr_batches) {
		if (tlb->nr_batches == tlb->k->gather_batches)
			return NULL;
		/* GFP_NOWAIT, as 6.18's tlb_next_batch(): the PTL may be
		 * held.  The planted bug asks for a page that may sleep. */
		bp = VS_BROKEN(alloc_page_under_ptl) ?
		     vs_alloc_page(tlb->mm->pool) :
		     vs__alloc_page_nowait(tlb->mm->pool);
		if (!bp)
			return NULL;
		tlb->batch[tlb->nr_batches++] = bp;
	}
	tlb->used++;
	tlb->nr_last = 1;
	return (struct vs_page **)tlb->batch[tlb->used - 1]->data;
}

void vs__tlb_remove_page(struct vs_mmu_gather *tlb, struct vs_page *page)
{
	struct vs_page **slot = tlb_slot(tlb);

	if (!slot) {	/* full: flush now (zap_pte_range's force_flush) */
		tlb_flush_mmu(tlb);
		slot = tlb_slot(tlb);
	}
	*slot = page;
	tlb->need_flush = 1;	/* after a forced flush, which clears it */
}

void vs__tlb_finish(struct vs_mmu_gather *tlb)
{
	unsigned int i;

	tlb_flush_mmu(tlb);
	for (i = 0; i < tlb->nr_batches; i++)
		vs_put_page(tlb->mm->pool, tlb->batch[i]);
	tlb->nr_batches = 0;
}
