/* SPDX-License-Identifier: MIT */
/*
 * vmsim/fault.h - the page fault: one entry, three strategies, and the
 * simulated CPU that raises faults.
 *
 * vs_handle_mm_fault() is the model's do_user_addr_fault() plus
 * handle_mm_fault(): it resolves a fault at @addr the way the mm's
 * strategy says, and returns the kernel's VM_FAULT_* bits.
 *
 *   locked  mmap_read_lock, find_vma, access check, handle, unlock.
 *   spf     the speculative page fault (Zijlstra's 2010/2014 series, Dufour's
 *           series): under rcu_read_lock, look the VMA up, sample its
 *           vm_sequence (odd: abort), snapshot its fields (a VMA that
 *           the current mmap_lock writer marked: abort), check access,
 *           walk the page tables (a missing table: abort), allocate and
 *           clear the page with no lock held, take the PTL and
 *           revalidate vm_sequence there (pte_map_lock), install.  Any
 *           abort counts its reason and falls back to locked.
 *   pervma  mainline since 6.4: lock_vma_under_rcu (RCU lookup, then
 *           vma_start_read: read-trylock vm_lock, and back off when
 *           vm_lock_seq equals mm_lock_seq), fault under the VMA read
 *           lock, vma_end_read.  Falls back to locked on failure, or
 *           when the handler needs the mmap_lock (VM_FAULT_RETRY, e.g.
 *           no anon_vma yet).
 *
 * Fault handling (mm/memory.c): an anonymous read maps the zero page;
 * an anonymous write allocates and clears a page; a write to a
 * read-only PTE of a writable VMA copies (the zero page, a page shared
 * after vs_fork, a private file page) or reuses (an anonymous page
 * mapped once) or, in a shared file mapping, makes the page-cache page
 * writable and dirty.  File read faults map the page-cache page
 * read-only; private file write faults copy it.  Every PTE follows the
 * accounting rule of vm/internal.h.
 *
 * Errors: VM_FAULT_SIGSEGV for an address outside every VMA or an
 * access the VMA forbids (no stack expansion: the model has no
 * VM_GROWSDOWN), VM_FAULT_SIGBUS for a file page beyond the end of the
 * file, VM_FAULT_OOM when the page pool is empty.  Bad arguments (NULL
 * mm, unknown flags or strategy) return a negative errno instead.
 *
 * The pieces the strategies are made of (handle_pte_fault and its
 * cases, the PTL helpers, the install) are in vmsim/memory.h, for a
 * strategy of one's own (vs_fault_strategy_register()).
 */
#ifndef VMSIM_FAULT_H
#define VMSIM_FAULT_H

#include <stddef.h>

#include "common.h"
#include "mm.h"

/* Fault flags: the kernel's FAULT_FLAG_* values. */
#define VS_FAULT_FLAG_WRITE 0x0001	/* a write: needs VM_WRITE */
#define VS_FAULT_FLAG_USER 0x0040	/* from user mode (no effect here) */
#define VS_FAULT_FLAG_INSTRUCTION 0x0100 /* instruction fetch: needs VM_EXEC */
/**
 * VS_FAULT_FLAG_NO_FALLBACK - model only: return VM_FAULT_RETRY where
 * spf or pervma would fall back to locked, instead of falling back (the
 * arch code's retry, made visible to tests).  No effect on locked.
 */
#define VS_FAULT_FLAG_NO_FALLBACK 0x10000

/* Return bits: the kernel's VM_FAULT_* values. */
#define VS_VM_FAULT_OOM 0x0001	/* no free page, table or anon_vma */
#define VS_VM_FAULT_SIGBUS 0x0002	/* a file page past the end of file */
#define VS_VM_FAULT_MAJOR 0x0004	/* the kernel's; never set here */
#define VS_VM_FAULT_SIGSEGV 0x0040	/* no VMA, or it forbids the access */
#define VS_VM_FAULT_NOPAGE 0x0100	/* the kernel's; never set here */
/**
 * VS_VM_FAULT_RETRY - the fault was not resolved; retry it (the
 * built-in strategies return it only with VS_FAULT_FLAG_NO_FALLBACK)
 */
#define VS_VM_FAULT_RETRY 0x0400
/** VS_VM_FAULT_ERROR - the bits that mean the fault failed */
#define VS_VM_FAULT_ERROR \
	(VS_VM_FAULT_OOM | VS_VM_FAULT_SIGBUS | VS_VM_FAULT_SIGSEGV)

/**
 * enum vs_fault_strategy - how faults are resolved
 * @VS_FAULT_LOCKED: under the mmap_lock's read side; a new mm's
 *                   strategy
 * @VS_FAULT_SPF: the speculative page fault, under RCU; falls back to
 *                locked
 * @VS_FAULT_PERVMA: under the per-VMA lock; falls back to locked
 * @VS_FAULT_NR_STRATEGIES: the number of built-in strategies;
 *                          vs_fault_strategy_register() hands out the
 *                          values from here on
 */
enum vs_fault_strategy {
	VS_FAULT_LOCKED,
	VS_FAULT_SPF,
	VS_FAULT_PERVMA,
	VS_FAULT_NR_STRATEGIES
};

/**
 * enum vs_spf_abort - why a speculative fault gave up
 * @VS_SPF_ABORT_NO_VMA: "no_vma": the RCU lookup found no VMA containing
 *                       the address (or found one detached, or whose
 *                       snapshot does not contain it)
 * @VS_SPF_ABORT_SEQ_ODD: "seq_odd": vm_sequence was odd at the start: a
 *                        writer is inside
 * @VS_SPF_ABORT_VMA_WRITE: "vma_write": the VMA is marked by the current
 *                          mmap_lock writer (vm_lock_seq ==
 *                          mm_lock_seq): it may be between two steps of
 *                          one operation, as when mremap has moved its
 *                          PTEs but not yet unmapped it
 * @VS_SPF_ABORT_SEQ_CHANGED: "seq_changed": vm_sequence moved while the
 *                            VMA was snapshotted, or before the PTL was
 *                            taken
 * @VS_SPF_ABORT_SEQ_PTL: "seq_ptl": vm_sequence moved, seen under the
 *                        PTL (pte_map_lock)
 * @VS_SPF_ABORT_NO_TABLE: "no_table": a page-table level is missing
 *                         (pte_alloc needs the mmap_lock)
 * @VS_SPF_ABORT_PTE_CHANGED: "pte_changed": the PTE under the PTL is not
 *                            the one the fault saw
 * @VS_SPF_ABORT_ANON_VMA: "anon_vma": an anonymous write needs an
 *                         anon_vma and the VMA has none yet
 *                         (anon_vma_prepare needs the mmap_lock)
 * @VS_SPF_ABORT_NOMEM: "nomem": the page pool was empty
 * @VS_SPF_ABORT_NR: the number of reasons
 *
 * Each abort is counted (vs_fault_stats.spf_abort), then the fault is
 * retried locked, or, with VS_FAULT_FLAG_NO_FALLBACK, returns
 * VS_VM_FAULT_RETRY.  The names are those of vs_spf_abort_name().
 */
enum vs_spf_abort {
	VS_SPF_ABORT_NO_VMA,
	VS_SPF_ABORT_SEQ_ODD,
	VS_SPF_ABORT_VMA_WRITE,
	VS_SPF_ABORT_SEQ_CHANGED,
	VS_SPF_ABORT_SEQ_PTL,
	VS_SPF_ABORT_NO_TABLE,
	VS_SPF_ABORT_PTE_CHANGED,
	VS_SPF_ABORT_ANON_VMA,
	VS_SPF_ABORT_NOMEM,
	VS_SPF_ABORT_NR
};

/**
 * struct vs_fault_stats - process-wide fault counters (like vmstat)
 * @faults: vs_handle_mm_fault() calls
 * @locked: faults handled under the mmap_lock, fallbacks included
 * @spf_success: speculative faults that completed without the mmap_lock
 *               (a SIGSEGV decided on the validated snapshot included)
 * @spf_abort: speculative faults that gave up, per reason
 * @vma_lock_success: pervma faults completed under the VMA lock
 * @vma_lock_abort: lock_vma_under_rcu failed (no VMA, VMA being
 *                  written, address moved out of it)
 * @vma_lock_retry: the handler returned VM_FAULT_RETRY under the VMA lock
 * @vma_lock_miss: the VMA was detached after it was locked
 * @sigsegv, @sigbus, @oom: faults that ended with that error
 */
struct vs_fault_stats {
	unsigned long faults;
	unsigned long locked;
	unsigned long spf_success;
	unsigned long spf_abort[VS_SPF_ABORT_NR];
	unsigned long vma_lock_success;
	unsigned long vma_lock_abort;
	unsigned long vma_lock_retry;
	unsigned long vma_lock_miss;
	unsigned long sigsegv;
	unsigned long sigbus;
	unsigned long oom;
};

/**
 * enum vs_vm_event_item - one counter of struct vs_fault_stats, for
 * vs_count_vm_event() (the kernel's vm_event_item)
 * @VS_PGFAULT: .faults
 * @VS_PGFAULT_LOCKED: .locked
 * @VS_SPF_SUCCESS: .spf_success
 * @VS_SPF_ABORT_EVENT: .spf_abort[0]; add the enum vs_spf_abort reason
 * @VS_VMA_LOCK_SUCCESS: .vma_lock_success
 * @VS_VMA_LOCK_ABORT: .vma_lock_abort
 * @VS_VMA_LOCK_RETRY: .vma_lock_retry
 * @VS_VMA_LOCK_MISS: .vma_lock_miss
 * @VS_FAULT_SIGSEGV: .sigsegv
 * @VS_FAULT_SIGBUS: .sigbus
 * @VS_FAULT_OOM: .oom
 * @VS_NR_VM_EVENT_ITEMS: the number of counters
 */
enum vs_vm_event_item {
	VS_PGFAULT,
	VS_PGFAULT_LOCKED,
	VS_SPF_SUCCESS,
	VS_SPF_ABORT_EVENT,
	VS_VMA_LOCK_SUCCESS = VS_SPF_ABORT_EVENT + VS_SPF_ABORT_NR,
	VS_VMA_LOCK_ABORT,
	VS_VMA_LOCK_RETRY,
	VS_VMA_LOCK_MISS,
	VS_FAULT_SIGSEGV,
	VS_FAULT_SIGBUS,
	VS_FAULT_OOM,
	VS_NR_VM_EVENT_ITEMS
};

/**
 * struct vs_fault_strategy_ops - one way to resolve faults
 * @name: unique among strategies; what vs_fault_strategy_parse() takes
 * @fault: resolve the fault at @addr of @mm for @flags (VS_FAULT_FLAG_*),
 *	as vs_handle_mm_fault() says: return 0 or VS_VM_FAULT_* bits.
 *	Called with no lock of @mm held and outside vs_rcu_read_lock(),
 *	after the fault was counted (VS_PGFAULT) and @addr checked
 *	against the mm's range; the result's SIGSEGV/SIGBUS/OOM are
 *	counted after it.  The strategy counts the rest of what it does
 *	with vs_count_vm_event(), as the built-in ones do.
 *
 * The built-in strategies are ops tables too (vs_fault_strategy_ops()),
 * so a new strategy may hand a case it does not handle to one of them
 * (the speculative ones fall back to VS_FAULT_LOCKED's).  A strategy of
 * one's own is composed of the pieces of vmsim/memory.h.
 */
struct vs_fault_strategy_ops {
	const char *name;
	int (*fault)(struct vs_mm *mm, unsigned long addr, unsigned int flags);
};

/**
 * VS_FAULT_MAX_STRATEGIES - strategies that can exist at once: the
 * built-in ones and 5 more
 */
#define VS_FAULT_MAX_STRATEGIES 8

/**
 * vs_fault_strategy_register - add a strategy, such as one under test
 * @ops: lives as long as the process; not copied
 *
 * The new value works everywhere a strategy does: vs_handle_mm_fault_as(),
 * vs_mm_set_fault_strategy(), vs_stress_run().  There is no unregister.
 *
 * Context: any thread; takes a mutex.
 * Return: the new strategy's value (>= VS_FAULT_NR_STRATEGIES); -EINVAL
 * for NULL, an empty name or no @fault; -EEXIST for a name in use;
 * -EBUSY when VS_FAULT_MAX_STRATEGIES exist.
 */
VS_EXTERN int vs_fault_strategy_register(
	const struct vs_fault_strategy_ops *ops);

/**
 * vs_fault_strategy_ops - the ops table of @strategy
 *
 * Context: any.
 * Return: the table, or NULL for a value that is no strategy.
 */
VS_EXTERN const struct vs_fault_strategy_ops *
vs_fault_strategy_ops(int strategy);

/**
 * vs_handle_mm_fault - resolve a fault at @addr with the mm's strategy
 * @mm: the mm
 * @addr: the faulting address; one outside [start, end) of @mm is
 *        SIGSEGV
 * @flags: VS_FAULT_FLAG_*
 *
 * Context: the calling thread holds no lock of @mm and is not inside
 * vs_rcu_read_lock(); it is attached (vs_thread_attach()) or becomes so.
 * Return: 0 (the PTE now allows the access, or another thread's fault
 * made it so), or VM_FAULT_* error bits, or VS_VM_FAULT_RETRY with
 * VS_FAULT_FLAG_NO_FALLBACK; -EINVAL for a NULL @mm or unknown @flags.
 */
VS_EXTERN int vs_handle_mm_fault(struct vs_mm *mm, unsigned long addr,
				 unsigned int flags);

/**
 * vs_handle_mm_fault_as - the same with the strategy given per call
 * @mm, @addr, @flags: as for vs_handle_mm_fault()
 * @strategy: a value of enum vs_fault_strategy, or one returned by
 *            vs_fault_strategy_register(); for this call only (the
 *            mm's own strategy is not changed)
 *
 * Context: as vs_handle_mm_fault().
 * Return: as vs_handle_mm_fault(); -EINVAL for an unknown @strategy;
 * -EOPNOTSUPP for VS_FAULT_PERVMA on a kernel without a per-VMA lock
 * (mm->mech.vma_lock VS_VMA_LOCK_NONE, before 6.4).
 */
VS_EXTERN int vs_handle_mm_fault_as(struct vs_mm *mm, unsigned long addr,
				    unsigned int flags, int strategy);

/**
 * vs_mm_set_fault_strategy - choose how @mm's faults are resolved
 * @mm: the mm
 * @strategy: as for vs_handle_mm_fault_as()
 *
 * Takes effect for faults that start afterwards; a fault in flight
 * finishes with the strategy it started with.
 *
 * Context: any; an atomic store, no lock taken.
 * Return: 0; -EINVAL for a NULL @mm or an unknown @strategy;
 * -EOPNOTSUPP for VS_FAULT_PERVMA on a kernel without a per-VMA lock
 * (before 6.4).
 */
VS_EXTERN int vs_mm_set_fault_strategy(struct vs_mm *mm, int strategy);

/**
 * vs_mm_fault_strategy - how @mm's faults are resolved
 * @mm: the mm, or NULL
 *
 * Context: any; an atomic load (the answer may be stale at once).
 * Return: @mm's strategy; VS_FAULT_LOCKED for a NULL @mm.
 */
VS_EXTERN int vs_mm_fault_strategy(struct vs_mm *mm);

/**
 * vs_fault_strategy_parse - "locked", "spf" or "pervma" to its value
 * @name: a strategy's name: a built-in one, or one registered with
 *        vs_fault_strategy_register()
 *
 * Context: any; takes no lock.
 * Return: the strategy, or -EINVAL for NULL or an unknown name.
 */
VS_EXTERN int vs_fault_strategy_parse(const char *name);

/**
 * vs_fault_strategy_name - the name of @strategy
 * @strategy: a strategy's value, built in or registered
 *
 * Context: any; takes no lock.
 * Return: the name, or NULL for an unknown value.
 */
VS_EXTERN const char *vs_fault_strategy_name(int strategy);

/**
 * vs_spf_abort_name - the name of a speculative fault's abort reason
 * @reason: a value of enum vs_spf_abort
 *
 * Context: any.
 * Return: "no_vma" ... "nomem" (see enum vs_spf_abort), or NULL for an
 * unknown reason (VS_SPF_ABORT_NR included).
 */
VS_EXTERN const char *vs_spf_abort_name(int reason);

/**
 * vs_fault_stats_get - sum the counters of every thread into @st
 * @st: receives the sums
 *
 * Exact when no fault is in flight; a snapshot otherwise.
 *
 * Context: any; takes no lock.
 * Return: 0, -EINVAL for NULL.
 */
VS_EXTERN int vs_fault_stats_get(struct vs_fault_stats *st);

/**
 * vs_fault_stats_reset - zero the counters of every thread
 *
 * Context: any thread, while no fault is in flight: a thread that
 * counts a fault meanwhile may store its old count back.
 */
VS_EXTERN void vs_fault_stats_reset(void);

/**
 * vs_fault_stats_sub - the counts between two vs_fault_stats_get() calls
 * @a: the later sums
 * @b: the earlier sums
 * @res: receives @a - @b, counter by counter; may be @a or @b
 *
 * Context: any.
 * Return: 0, -EINVAL for a NULL argument.
 */
VS_EXTERN int vs_fault_stats_sub(const struct vs_fault_stats *a,
				 const struct vs_fault_stats *b,
				 struct vs_fault_stats *res);

/**
 * vs_count_vm_event - count one event of the calling thread
 * @item: a value of enum vs_vm_event_item
 *
 * What a strategy calls to count what it did (count_vm_event): into the
 * calling thread's slot, summed by vs_fault_stats_get().
 *
 * Context: any; takes no lock.
 * Return: 0, -EINVAL for an unknown @item.
 */
VS_EXTERN int vs_count_vm_event(int item);

/**
 * vs_access - touch [addr, addr + len) as user code would
 * @mm: the mm
 * @addr: the first byte
 * @len: bytes; 0 accesses nothing
 * @write: nonzero for a store, 0 for a load
 *
 * The simulated CPU.  Each page of [addr, addr + len) is accessed in
 * order, as user code would: the page tables are walked without a lock
 * (inside vs_rcu_read_lock(), as the MMU walks them), and a missing
 * PTE, or one whose USER or WRITE bit forbids the access, raises
 * vs_handle_mm_fault() (a user fault, a write fault for a store) and
 * the access is retried.  A successful access sets ACCESSED (and DIRTY
 * for a write) in the PTE.  No data moves: vs_read() and vs_write()
 * copy.
 *
 * Context: as vs_handle_mm_fault().
 * Return: 0; -EFAULT when a fault ends in SIGSEGV or SIGBUS (pages
 * before the faulting page were accessed, as with a real copy); -ENOMEM
 * on VM_FAULT_OOM; -EINVAL for a NULL @mm or a range that wraps.  @len
 * 0 accesses nothing and returns 0.
 */
VS_EXTERN int vs_access(struct vs_mm *mm, unsigned long addr, size_t len,
			int write);

/**
 * vs_read - copy @len bytes at @addr of @mm's memory into @buf
 * @mm, @addr, @len: as for vs_access()
 * @buf: receives the bytes
 *
 * Each page is accessed as vs_access() accesses it (a load).  The copy
 * from each page is made under that page's PTL, so it never reads a
 * page being freed: a copy racing a zap either completes before it or
 * faults the page in again.
 *
 * Context: as vs_handle_mm_fault().
 * Return: as vs_access() (bytes before the faulting page were copied);
 * -EINVAL also for a NULL @buf with @len > 0.
 */
VS_EXTERN int vs_read(struct vs_mm *mm, unsigned long addr, void *buf,
		      size_t len);

/**
 * vs_write - copy @len bytes from @buf into @mm's memory at @addr
 * @mm, @addr, @len: as for vs_access()
 * @buf: the bytes
 *
 * Each page is accessed as vs_access() accesses it (a store).  The copy
 * to each page is made under that page's PTL, so it never lands in a
 * page being freed: a copy racing a zap either completes before it or
 * faults the page in again.
 *
 * Context: as vs_handle_mm_fault().
 * Return: as vs_access() (bytes before the faulting page were copied);
 * -EINVAL also for a NULL @buf with @len > 0.
 */
VS_EXTERN int vs_write(struct vs_mm *mm, unsigned long addr,
		       const void *buf, size_t len);

#endif /* VMSIM_FAULT_H */
