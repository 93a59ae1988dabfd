/* SPDX-License-Identifier: MIT */
/*
 * fault/internal.h - what the files of fault/ share: the fault
 * descriptor (the kernel's struct vm_fault) and the counters.
 */
#ifndef VS_FAULT_INTERNAL_H
#define VS_FAULT_INTERNAL_H

#include <stdint.h>

#include "../sync/internal.h"
#include "../sync/thread.h"
#include "../vm/internal.h"
#include "fault.h"

/*
 * struct vs__fault - one fault in flight (struct vm_fault)
 *
 * @start ... @anon_vma are the VMA's fields, read once when the fault
 * began: under the mmap_lock or the VMA lock they are stable; for spf
 * they are a snapshot that @seq validates.  @abort is set with a
 * VM_FAULT_RETRY return: the vs_spf_abort reason (spf), or -1 when the
 * handler needs the mmap_lock (pervma).
 */
struct vs__fault {
	struct vs_mm *mm;
	struct vs_vma *vma;
	unsigned long start, end, vm_flags, pgoff;
	struct vs_file *file;
	struct vs_anon_vma *anon_vma;
	unsigned long address;		/* page aligned */
	unsigned int flags;		/* VS_FAULT_FLAG_* */
	int strategy;			/* who holds what, see above */
	uint32_t seq;			/* spf: vm_sequence sampled */
	int abort;
	uint64_t orig_pte;		/* the PTE the fault saw */
	vs_atomic64_t *ptep;		/* under @ptl, once locked */
	vs_spinlock_t *ptl;
};

/* Give up the speculative fault for @reason (enum vs_spf_abort). */
static inline int vs__spf_abort(struct vs__fault *f, int reason)
{
	f->abort = reason;
	return VS_VM_FAULT_RETRY;
}

/* fault/memory.c: handle_pte_fault, with the VMA fields in @f set. */
int vs__handle_pte_fault(struct vs__fault *f);

/* ---- counters (fault/fault.c) ------------------------------------------ */

enum {
	VS__FS_FAULTS,
	VS__FS_LOCKED,
	VS__FS_SPF_SUCCESS,
	VS__FS_SPF_ABORT,	/* VS_SPF_ABORT_NR of them */
	VS__FS_VMA_LOCK_SUCCESS = VS__FS_SPF_ABORT + VS_SPF_ABORT_NR,
	VS__FS_VMA_LOCK_ABORT,
	VS__FS_VMA_LOCK_RETRY,
	VS__FS_VMA_LOCK_MISS,
	VS__FS_SIGSEGV,
	VS__FS_SIGBUS,
	VS__FS_OOM,
	VS__FS_NR
};

/* One slot's counters, a cache line apart from the next slot's. */
struct vs__fault_slot {
	VS_CACHELINE_ALIGNED vs_atomic_long_t c[VS__FS_NR];
};

extern struct vs__fault_slot vs__fault_stats[VS_SLOT_ARRAY];

/* Count one event of the calling thread.  Context: any. */
static inline void vs__fault_count(int what)
{
	unsigned int slot = vs__thread_slot();

	vs__slot_add(&vs__fault_stats[slot].c[what], slot, 1);
}

#endif /* VS_FAULT_INTERNAL_H */
