/* SPDX-License-Identifier: MIT */
/*
 * vmsim/mm.h - the address space: struct vs_mm, struct vs_vma, and the
 * operations with the kernel's semantics and error codes.
 *
 * The rule every change to a VMA follows (6.18's, with Zijlstra's
 * vm_sequence from the speculative page fault series):
 *
 *   1. the mm's mmap_lock is held for write (vs_mmap_write_lock());
 *   2. vs_vma_start_write(vma) marks the VMA: its vm_lock_seq becomes the
 *      mm's mm_lock_seq, so per-VMA readers that check vm_lock_seq back
 *      off, and it waits for per-VMA readers already inside (a new VMA
 *      is born marked, vs__vma_alloc()); how it waits is the kernel
 *      version's per-VMA lock (mm->mech.vma_lock: none, rwsem, or
 *      6.15's vm_refcnt);
 *   3. vs_vm_write_begin(vma) makes vm_sequence odd; the fields change;
 *      vs_vm_write_end(vma) makes it even again, so a speculative reader
 *      that sampled vm_sequence before the change sees it moved;
 *   4. the VMA index is updated (one published step per VMA);
 *   5. a VMA that leaves the index goes back to its cache after a grace
 *      period (vs_free_rcu(), batched), as do page-table pages and
 *      index nodes: a lockless reader never touches freed memory.  With
 *      mm->mech.vma_typesafe (6.15's SLAB_TYPESAFE_BY_RCU VMA cache) the
 *      VMA itself goes back at once and may be reused, even by another
 *      mm, while a lockless reader holds its pointer: the reader
 *      rechecks vm_mm and the range once it has locked or snapshotted
 *      it (vm/vma.c);
 *   6. vs_mmap_write_unlock() advances mm_lock_seq, which unmarks every
 *      VMA marked in step 2 at once (with mm->mech.mm_lock_seqcount,
 *      6.13's seqcount, vs_mmap_write_lock() has made it odd first).
 *
 * What protects each field of struct vs_mm and struct vs_vma, and the
 * order the locks nest in: docs/locking.md.  A build with lockdep
 * (VS_LOCKDEP=ON) checks them: see the assertions below.
 */
#ifndef VMSIM_MM_H
#define VMSIM_MM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "atomic.h"
#include "common.h"
#include "kernel.h"
#include "lock.h"
#include "rcu.h"
#include "rwsem.h"
#include "seqcount.h"
#include "page.h"
#include "pgtable.h"
#include "vma_tree.h"

/* mmap(2) and friends: the Linux values, so a test can pass either. */
#define VS_PROT_NONE 0x0	/* PROT_NONE: no access */
#define VS_PROT_READ 0x1	/* PROT_READ */
#define VS_PROT_WRITE 0x2	/* PROT_WRITE */
#define VS_PROT_EXEC 0x4	/* PROT_EXEC */

#define VS_MAP_SHARED 0x01	/* MAP_SHARED */
#define VS_MAP_PRIVATE 0x02	/* MAP_PRIVATE */
#define VS_MAP_FIXED 0x10	/* MAP_FIXED: at addr, replacing mappings */
#define VS_MAP_ANONYMOUS 0x20	/* MAP_ANONYMOUS: no file */
#define VS_MAP_POPULATE 0x8000	/* MAP_POPULATE: fault the pages in */
#define VS_MAP_FIXED_NOREPLACE 0x100000 /* at addr, or -EEXIST */

#define VS_MADV_DONTNEED 4	/* MADV_DONTNEED: zap, keep the VMAs */

#define VS_MREMAP_MAYMOVE 1	/* MREMAP_MAYMOVE */
#define VS_MREMAP_FIXED 2	/* MREMAP_FIXED: move to new_addr */

/* vm_flags: the kernel's bits. */
#define VS_VM_READ 0x00000001UL	/* VM_READ */
#define VS_VM_WRITE 0x00000002UL	/* VM_WRITE */
#define VS_VM_EXEC 0x00000004UL	/* VM_EXEC */
#define VS_VM_SHARED 0x00000008UL	/* VM_SHARED: writes reach the file */
#define VS_VM_MAYREAD 0x00000010UL	/* VM_MAYREAD: mprotect may allow */
#define VS_VM_MAYWRITE 0x00000020UL	/* VM_MAYWRITE */
#define VS_VM_MAYEXEC 0x00000040UL	/* VM_MAYEXEC */
#define VS_VM_MAYSHARE 0x00000080UL	/* VM_MAYSHARE: a MAP_SHARED mapping */
#define VS_VM_ACCOUNT 0x00100000UL	/* VM_ACCOUNT: commit charged; VMAs
					 * that differ in it never merge */

struct vs_file;
struct vs_anon_vma;
struct vs_mm;
struct vs__pool_ref;	/* private: vm/internal.h */
struct vs__mm_rss;	/* private: vm/internal.h */
struct vs__mm_shared;	/* private: vm/internal.h */

/* RSS counters: the kernel's mm_counter members. */
#define VS_MM_FILEPAGES 0	/* pages of a file other than shmem */
#define VS_MM_ANONPAGES 1	/* anonymous pages */
#define VS_MM_SHMEMPAGES 2	/* pages of anonymous shared mappings */
#define VS_NR_MM_COUNTERS 3	/* RSS counters there are */

/**
 * struct vs_vma - one mapping, [vm_start, vm_end)
 * @vm_start: the first address
 * @vm_end: the first address past the mapping
 * @vm_flags: VS_VM_* bits
 * @vm_sequence: odd while a writer changes the fields (vm_write_begin)
 * @vm_lock_seq: the mm_lock_seq of the write section that marked the
 *               VMA (vs_vma_start_write())
 * @vm_mm: the mm the VMA belongs to; fixed while it is allocated, but a
 *         lockless reader of a typesafe VMA may meet it reused by
 *         another mm, so it is an atomic too
 *
 * Allocated by the operations, freed through RCU (or at once, into a
 * typesafe cache: step 5 above); never embedded.  The
 * fields a speculative fault snapshots are atomics, so that its reads
 * beside a writer are reads of whole values (the writer's vm_sequence
 * tells it whether they belong together); writers under the lock rule
 * above may use them as plain lvalues.
 */
struct vs_vma {
	/* locking: docs/locking.md, "struct vs_vma" */
	VS_ATOMIC(unsigned long) vm_start;
	VS_ATOMIC(unsigned long) vm_end;
	VS_ATOMIC(unsigned long) vm_flags;
	VS_ATOMIC(unsigned long) vm_pgoff; /* file offset, in pages */
	VS_ATOMIC(struct vs_file *) vm_file; /* NULL: anonymous */
	VS_ATOMIC(struct vs_anon_vma *) anon_vma; /* NULL until first
						   * anonymous page */
	VS_ATOMIC(struct vs_mm *) vm_mm; /* fixed while allocated */
	vs_seqcount_t vm_sequence;
	vs_atomic32_t vm_lock_seq;
	/**
	 * @vm_refcnt: the per-VMA lock of 6.15 on (VS_VMA_LOCK_REFCNT): 0
	 * detached, 1 attached (in the index), one more per reader, and
	 * VS_VMA_LOCK_OFFSET more while a writer waits for the readers
	 * (vs_vma_start_write(), detaching); a reader takes it only while
	 * it is nonzero and below VS_VMA_REF_LIMIT.
	 */
	vs_atomic32_t vm_refcnt;
	/**
	 * @vm_detached: 1 while the VMA is out of the index: from its
	 * allocation to its insert, and once it left (set between
	 * vm_write_begin and vm_write_end); a typesafe VMA keeps the 1
	 * across its reuse until the next insert, which clears it in a
	 * write section.  A speculative fault (and 6.4's per-VMA one)
	 * that found the VMA before checks this after snapshotting (or
	 * locking).
	 */
	vs_atomic32_t vm_detached;
	struct vs_rwsem vm_lock;         /* the per-VMA lock of 6.4 to
					  * 6.14 (VS_VMA_LOCK_RWSEM); its
					  * lockdep map also stands for
					  * vm_refcnt's lock */
};

/** VS_VMA_LOCK_OFFSET - what a writer adds to vm_refcnt (VMA_LOCK_OFFSET) */
#define VS_VMA_LOCK_OFFSET 0x40000000u
/** VS_VMA_REF_LIMIT - a reader takes vm_refcnt only below this
 * (VMA_REF_LIMIT): never while a writer's offset is in it */
#define VS_VMA_REF_LIMIT (VS_VMA_LOCK_OFFSET - 1)

/**
 * struct vs_mm_options - vs_mm_create() settings; zero means default
 * @lock_kind: mmap_lock kind (vmsim/lock.h), default "rwsem"
 * @ptl_per_mm: 1 for one page-table lock per mm; 0 (default) for a
 *              lock per PTE page (split PTL)
 * @pool_pages: page pool size, default 4096 (16 MiB)
 * @start, @end: the address range the mm manages, page aligned; default
 *               [0x10000, 1 << 47)
 * @kernel: the kernel the model follows (vmsim/kernel.h): a version
 *          built in ("6.18", "6.4", "3.18") or a kernel profile's path; NULL:
 *          $VMSIM_KERNEL, else "6.18"
 */
struct vs_mm_options {
	const char *lock_kind;
	int ptl_per_mm;
	size_t pool_pages;
	unsigned long start;
	unsigned long end;
	const char *kernel;
};

/**
 * enum vs_mmu_notifier_event - what changes in an mmu notifier range
 * @VS_MMU_NOTIFY_UNMAP: the VMAs of the range go (munmap, MAP_FIXED over
 *                       them, mremap's shrink and the old range of a
 *                       move, brk shrink); afterwards nothing is mapped
 *                       there
 * @VS_MMU_NOTIFY_CLEAR: MADV_DONTNEED: the PTEs go, the VMAs stay
 * @VS_MMU_NOTIFY_PROTECTION_VMA: mprotect: @vm_flags is the range's new
 *                                flags
 * @VS_MMU_NOTIFY_MOVE: mremap moves the range's PTEs (and pages)
 *                      elsewhere; an UNMAP of the range follows
 * @VS_MMU_NOTIFY_FORK: vs_fork copies the range's VMA (@vm_flags): a COW
 *                      mapping's writable PTEs become read-only (the
 *                      kernel's MMU_NOTIFY_PROTECTION_PAGE)
 * @VS_MMU_NOTIFY_MAP: model only: a new VMA covers the range (mmap, brk,
 *                     the new range of mremap); nothing is invalidated
 *
 * mmu notifiers (include/linux/mmu_notifier.h): a secondary MMU - the
 * real memory of vmsim/uffd.h - that maps what the model maps learns of
 * every change to the model's PTEs and VMAs, so it can drop or protect
 * its own mappings first.
 *
 * invalidate_range_start() runs before the model's PTEs of the range
 * change, invalidate_range_end() after, both with the mmap_lock held
 * (for read with CLEAR, for write otherwise; for read with UNMAP where
 * munmap downgrades, and with CLEAR the VMA's lock instead where
 * MADV_DONTNEED takes it: vs_mmu_notifier_assert_locked()) and no PTL,
 * sometimes inside a VMA's vm_sequence write section (mremap's move).
 * The callbacks may sleep; they must not take @mm's mmap_lock (they may
 * take a PTL).
 */
enum vs_mmu_notifier_event {
	VS_MMU_NOTIFY_UNMAP,
	VS_MMU_NOTIFY_CLEAR,
	VS_MMU_NOTIFY_PROTECTION_VMA,
	VS_MMU_NOTIFY_MOVE,
	VS_MMU_NOTIFY_FORK,
	VS_MMU_NOTIFY_MAP
};

/**
 * struct vs_mmu_notifier_range - what an mmu notifier callback is told
 * @mm: the mm that changes
 * @start: the first address of the range
 * @end: the first address past the range
 * @event: enum vs_mmu_notifier_event
 * @vm_flags: the VMA's flags after the change (MAP, PROTECTION_VMA,
 *            FORK), else 0
 */
struct vs_mmu_notifier_range {
	struct vs_mm *mm;
	unsigned long start, end;
	int event;
	unsigned long vm_flags;
};

struct vs_mmu_notifier;

/**
 * struct vs_mmu_notifier_ops - the callbacks of a secondary MMU
 * @invalidate_range_start: before the model's PTEs of @r change
 * @invalidate_range_end: after they changed
 *
 * Both are required.  They run with the mmap_lock held (for read with
 * CLEAR, for write otherwise) and no PTL; they may sleep and must not
 * take @r->mm's mmap_lock.
 */
struct vs_mmu_notifier_ops {
	void (*invalidate_range_start)(struct vs_mmu_notifier *mn,
				       const struct vs_mmu_notifier_range *r);
	void (*invalidate_range_end)(struct vs_mmu_notifier *mn,
				     const struct vs_mmu_notifier_range *r);
};

/**
 * struct vs_mmu_notifier - a secondary MMU, as vs_mmu_notifier_register()
 * takes it
 * @ops: its callbacks
 *
 * Embedded in the secondary MMU's own structure.
 */
struct vs_mmu_notifier {
	const struct vs_mmu_notifier_ops *ops;
};

/**
 * struct vs_mm - an address space
 * @start: the first address the mm manages (read-only)
 * @end: the first address past that range (read-only)
 * @pool: the page pool, shared with forked children (read-only)
 * @mmap_lock: the mmap_lock; take it with vs_mmap_read_lock() ...
 * @mm_lock_seq: advanced by each mmap_lock write unlock, which unmarks
 *               every VMA marked under it; with mech.mm_lock_seqcount
 *               also at write lock, so it is odd while the lock is
 *               write-held (6.13's seqcount)
 * @vma_writer_wait: a futex word (vmsim/wait.h) that a writer waiting
 *                   for a VMA's readers (vm_refcnt) sleeps on; the
 *                   reader that leaves it alone advances it and wakes it
 * @mm_mt: the VMA index (vmsim/vma_tree.h)
 * @pgtable: the page tables
 * @fault_strategy: how faults are resolved (vmsim/fault.h); atomic, any
 *                  context
 * @start_brk: where the heap starts (under mmap_lock)
 * @brk: the program break (under mmap_lock)
 * @map_count: VMAs in the mm (under mmap_lock; private)
 * @notifier: the one secondary MMU, or NULL; set and read under mmap_lock
 * @mech: the mechanisms of the kernel the mm follows, its pool's
 *        (vmsim/kernel.h, vs_mm_options.kernel; read-only)
 *
 * Made by vs_mm_create() or vs_fork(); never embedded.
 */
struct vs_mm {
	/* read-only after vs_mm_create() */
	unsigned long start, end;
	struct vs_page_pool *pool;
	/* the mmap_lock, and the sequence that unmarks VMAs at unlock */
	struct vs_lock mmap_lock;
	vs_atomic32_t mm_lock_seq;
	vs_atomic32_t vma_writer_wait;
	/* the VMAs and the page tables */
	struct vs_vma_tree mm_mt;
	struct vs_pgtable pgtable;
	/* how faults are resolved (vmsim/fault.h); atomic, any context */
	vs_atomic32_t fault_strategy;
	/* brk, under mmap_lock */
	unsigned long start_brk, brk;
	/* private */
	struct vs__mm_rss *rss;          /* per-slot RSS counters: read them
					  * with vs_get_mm_counter() */
	unsigned long map_count;
	struct vs__pool_ref *pool_ref;   /* private: the pool, shared with
					  * forked children (vm/internal.h) */
	struct vs__mm_shared *shared;    /* private: mm-wide RSS counters
					  * and cpumask (vm/internal.h) */
	/* one secondary MMU; set and read under mmap_lock */
	struct vs_mmu_notifier *notifier;
	/* the kernel version's mechanisms; read-only */
	struct vs_kernel_mech mech;
	/**
	 * @fault_noalloc: 1: faults never allocate anything but pages, so
	 * that they can run in a signal handler (vmsim/uffd.h): munmap
	 * and 6.18's MADV_DONTNEED (PT_RECLAIM) keep page tables, and
	 * private VMAs get their anon_vma at mmap.
	 * Set once, under mmap_lock for write, before the mm has VMAs.
	 */
	int fault_noalloc;
};

/**
 * vs_mm_create - a new, empty address space
 * @mmp: receives the mm
 * @opt: settings, or NULL for the defaults
 *
 * Context: any thread; may sleep.
 * Return: 0; -EINVAL for a NULL @mmp, an unknown lock kind, an unknown
 * kernel (vs_kernel_load() says why), or a range that is empty,
 * unaligned or beyond VS_TASK_SIZE; -ENOMEM.
 */
VS_EXTERN int vs_mm_create(struct vs_mm **mmp,
			   const struct vs_mm_options *opt);

/**
 * vs_mmu_notifier_register - attach a secondary MMU to @mm
 * @mm: the mm
 * @mn: the secondary MMU; stays valid until unregistered
 *
 * Context: takes mmap_lock for write.
 * Return: 0; -EINVAL for NULL or ops without both callbacks; -EBUSY
 * if @mm has one already (the model keeps one per mm).
 */
VS_EXTERN int vs_mmu_notifier_register(struct vs_mm *mm,
				       struct vs_mmu_notifier *mn);

/**
 * vs_mmu_notifier_unregister - detach it; no callback runs afterwards
 * @mm: the mm
 * @mn: the secondary MMU registered
 *
 * Context: takes mmap_lock for write.
 * Return: 0; -EINVAL for NULL, -ENOENT if @mn is not @mm's.
 */
VS_EXTERN int vs_mmu_notifier_unregister(struct vs_mm *mm,
					 struct vs_mmu_notifier *mn);

/**
 * vs_get_mm_counter - resident pages of one kind (get_mm_counter)
 * @mm: the mm
 * @member: VS_MM_FILEPAGES, VS_MM_ANONPAGES or VS_MM_SHMEMPAGES
 *
 * The counters are kept per thread slot, as the kernel keeps them per
 * CPU, so that faulting threads do not share a cache line; this sums
 * them.  Exact when no fault or zap is in flight (or, for a PTE range,
 * under its PTL), a snapshot otherwise; never below 0.
 * Context: any.
 * Return: the count; -EINVAL for a NULL @mm or an unknown @member.
 */
VS_EXTERN long vs_get_mm_counter(struct vs_mm *mm, int member);

/**
 * vs_mm_counter - the RSS counter a mapping of @page counts in (mm_counter)
 * @page: a page other than the zero page (which counts nowhere)
 *
 * Context: any.
 * Return: VS_MM_ANONPAGES, VS_MM_SHMEMPAGES or VS_MM_FILEPAGES; -EINVAL
 * for NULL.
 */
VS_EXTERN int vs_mm_counter(struct vs_page *page);

/**
 * vs_add_mm_counter - add @value to @mm's RSS counter @member
 * (add_mm_counter)
 * @mm: the mm
 * @member: VS_MM_FILEPAGES, VS_MM_ANONPAGES or VS_MM_SHMEMPAGES
 * @value: pages mapped (positive) or unmapped (negative)
 *
 * Adds to the calling thread's slot (see vs_get_mm_counter()).  The
 * accounting rule: a PTE that maps a page other than the zero page
 * counts once, in vs_mm_counter() of the page, from the moment it is
 * set to the moment it is cleared.
 *
 * Context: any; a fault adds under the PTL of the PTE it sets (so that
 * a sum taken under that PTL is exact), a zap gathers its counts and
 * adds them once it is done.
 * Return: 0; -EINVAL for a NULL @mm or an unknown @member.
 */
VS_EXTERN int vs_add_mm_counter(struct vs_mm *mm, int member, long value);

/**
 * vs_mm_destroy - unmap everything and free the mm
 * @mm: the mm
 *
 * Context: no other thread uses @mm; may sleep (waits for RCU frees).
 * Return: 0; -EINVAL for NULL; -EBUSY if a page is still referenced
 * from outside the mm (nothing is freed then).
 */
VS_EXTERN int vs_mm_destroy(struct vs_mm *mm);

/*
 * The mmap_lock, as include/linux/mmap_lock.h names it.  Write unlock
 * and downgrade advance mm_lock_seq (release), unmarking every VMA that
 * vs_vma_start_write() marked under this write lock.  With
 * mm->mech.mm_lock_seqcount (6.13 on) mm_lock_seq is a seqcount: the
 * write lock advances it too, so it is odd while the lock is
 * write-held, and a reader may speculate without the lock
 * (vs_mmap_lock_speculate_try_begin()).
 */

/**
 * vs_mmap_read_lock - take @mm's mmap_lock for reading
 * @mm: the mm
 *
 * Context: may sleep.  Not recursive; not inside vs_rcu_read_lock().
 * The percpu, brlock and prwlock kinds unlock on the same thread.
 */
VS_EXTERN void vs_mmap_read_lock(struct vs_mm *mm);

/**
 * vs_mmap_read_trylock - take @mm's mmap_lock for reading if that needs
 * no waiting
 * @mm: the mm
 *
 * Context: never waits for a holder (the lock kind's trylock).
 * Return: 1 when taken, 0 otherwise.
 */
VS_EXTERN int vs_mmap_read_trylock(struct vs_mm *mm);

/**
 * vs_mmap_read_unlock - release a read lock of @mm's mmap_lock
 * @mm: the mm
 *
 * Context: the caller holds it for reading.  Never sleeps.
 */
VS_EXTERN void vs_mmap_read_unlock(struct vs_mm *mm);

/**
 * vs_mmap_write_lock - take @mm's mmap_lock for writing
 * @mm: the mm
 *
 * With mm->mech.mm_lock_seqcount, makes mm_lock_seq odd once taken.
 *
 * Context: may sleep.  The caller holds no lock of @mm; not inside
 * vs_rcu_read_lock().
 */
VS_EXTERN void vs_mmap_write_lock(struct vs_mm *mm);

/**
 * vs_mmap_write_lock_nested - take @mm's mmap_lock for writing while
 * holding another mm's (mmap_write_lock_nested)
 * @mm: the mm
 * @subclass: VS_SINGLE_DEPTH_NESTING (vmsim/lockdep.h)
 *
 * As vs_mmap_write_lock(); lockdep, when compiled in, takes the second
 * lock of the class as meant (vs_fork() holds the parent's and the
 * child's).
 *
 * Context: may sleep; the caller holds one other mm's mmap_lock, taken
 * first, and nothing that mm's lock nests inside.
 */
VS_EXTERN void vs_mmap_write_lock_nested(struct vs_mm *mm, int subclass);

/**
 * vs_mmap_write_unlock - release the write lock, unmarking the VMAs
 * @mm: the mm
 *
 * Advances mm_lock_seq first (release): every VMA marked under this
 * write lock is unmarked at once.
 *
 * Context: the caller holds @mm's mmap_lock for writing.  Never sleeps.
 */
VS_EXTERN void vs_mmap_write_unlock(struct vs_mm *mm);

/**
 * vs_mmap_write_downgrade - turn the write lock into a read lock,
 * unmarking the VMAs
 * @mm: the mm
 *
 * Context: the caller holds @mm's mmap_lock for writing; it then
 * releases it with vs_mmap_read_unlock().  Never sleeps.
 */
VS_EXTERN void vs_mmap_write_downgrade(struct vs_mm *mm);

/**
 * vs_mmap_lock_speculate_try_begin - start reading what the mmap_lock
 * protects without taking it (mmap_lock_speculate_try_begin(), 6.13)
 * @mm: the mm
 * @seq: receives the mm_lock_seq to pass to vs_mmap_lock_speculate_retry()
 *
 * The reads that follow, of the VMA index (vs_find_vma() inside
 * vs_rcu_read_lock()) and of VMA fields (with vs_read_once()), are
 * valid if vs_mmap_lock_speculate_retry() then says no writer took the
 * lock meanwhile.  A VMA so found is only read: lock it, or take the
 * mmap_lock, to act on it.
 *
 * Context: any; never waits.  Usually inside vs_rcu_read_lock(), which
 * keeps what the reads find from being freed (a typesafe VMA may still
 * be reused: the retry catches that too, since its removal takes the
 * write lock).
 * Return: true when speculation may start; false while the mmap_lock is
 * write-held, for a NULL argument, and always on a kernel whose
 * mm_lock_seq is a counter (as CONFIG_PER_VMA_LOCK=n makes it false):
 * then take the lock.
 */
VS_EXTERN bool vs_mmap_lock_speculate_try_begin(struct vs_mm *mm,
						uint32_t *seq);

/**
 * vs_mmap_lock_speculate_retry - end a speculative read
 * (mmap_lock_speculate_retry(), 6.13)
 * @mm: the mm
 * @seq: what vs_mmap_lock_speculate_try_begin() returned in its @seq
 *
 * Orders the reads since the begin before the check (acquire fence;
 * pairs with the release fence after vs_mmap_write_lock() makes
 * mm_lock_seq odd).
 *
 * Context: any; never waits.
 * Return: true when a writer took the mmap_lock since the begin (the
 * reads must be discarded), or for a NULL @mm; false when they are
 * valid.
 */
VS_EXTERN bool vs_mmap_lock_speculate_retry(struct vs_mm *mm, uint32_t seq);

/**
 * vs_find_vma - the first VMA that ends above @addr (find_vma)
 * @mm: the mm
 * @addr: the address
 *
 * Context: mmap_lock held (either side), or inside vs_rcu_read_lock()
 * (then the VMA is a snapshot to revalidate with vm_sequence, or with
 * vs_mmap_lock_speculate_retry(); a typesafe one, mm->mech.vma_typesafe,
 * may even have been freed and reused since, elsewhere or in another
 * mm).
 * Return: the VMA with the lowest vm_end > @addr, or NULL.
 */
VS_EXTERN struct vs_vma *vs_find_vma(struct vs_mm *mm, unsigned long addr);

/**
 * vs_vma_lookup - the VMA that contains @addr (vma_lookup)
 * @mm: the mm
 * @addr: the address
 *
 * Context: as vs_find_vma().
 * Return: the VMA with vm_start <= @addr < vm_end, or NULL.
 */
VS_EXTERN struct vs_vma *vs_vma_lookup(struct vs_mm *mm, unsigned long addr);

/**
 * vs_vma_start_write - mark @vma as being changed (per-VMA locks)
 * @vma: the VMA
 *
 * By mm->mech.vma_lock: VS_VMA_LOCK_REFCNT (6.15 on) adds
 * VS_VMA_LOCK_OFFSET to vm_refcnt, which stops new readers, and waits
 * on mm->vma_writer_wait until only it and the attach reference are
 * left; VS_VMA_LOCK_RWSEM (6.4) takes vm_lock for write; with
 * VS_VMA_LOCK_NONE (3.18) it only stores the mark, which the
 * speculative strategy reads.
 *
 * Context: mmap_lock held for write.  May sleep until per-VMA readers
 * inside @vma leave.
 */
VS_EXTERN void vs_vma_start_write(struct vs_vma *vma);

/**
 * vs_vma_is_write_marked - did the current mmap_lock writer mark @vma?
 * @vma: the VMA
 *
 * True from vs_vma_start_write() until vs_mmap_write_unlock() advances
 * mm_lock_seq.  Acquire on mm_lock_seq: pairs with the release there,
 * so a reader that sees the mark gone also sees the writer's changes.
 * Context: any; a reader rechecks after read-locking vm_lock, or under
 * the PTL through vm_sequence.
 * Return: nonzero while @vma is marked.
 */
static inline int vs_vma_is_write_marked(struct vs_vma *vma)
{
	return vs_read_once(&vma->vm_lock_seq) ==
	       vs_load_acquire(&vma->vm_mm->mm_lock_seq);
}

/*
 * The locking rules, asserted, as the kernel's mmap_assert_locked() and
 * vma_assert_write_locked(): in a build with lockdep (VS_LOCKDEP=ON,
 * vmsim/lockdep.h) each checks that the calling thread holds what the
 * rule says and reports the line that broke it; without lockdep they
 * compile to nothing.  docs/locking.md has the rules.
 */

/**
 * vs_mmap_assert_locked - @mm's mmap_lock is held, either side
 * @mm: the mm
 */
#define vs_mmap_assert_locked(mm) \
	vs_lockdep_assert_held(&(mm)->mmap_lock)

/**
 * vs_mmap_assert_read_locked - @mm's mmap_lock is held for reading
 * @mm: the mm
 */
#define vs_mmap_assert_read_locked(mm) \
	vs_lockdep_assert(vs__lockdep_held(&(mm)->mmap_lock, 0) && \
			  !vs__lockdep_held(&(mm)->mmap_lock, 1), \
			  "mmap_lock held for reading")

/**
 * vs_mmap_assert_write_locked - @mm's mmap_lock is held for writing
 * @mm: the mm
 */
#define vs_mmap_assert_write_locked(mm) \
	vs_lockdep_assert_held_write(&(mm)->mmap_lock)

/**
 * vs_mm_assert_unlocked - @mm's mmap_lock is not held, and the caller is
 * not inside an RCU read-side section (it may take the lock, or fault)
 * @mm: the mm
 */
#define vs_mm_assert_unlocked(mm) \
	vs_lockdep_assert(!vs__lockdep_held(&(mm)->mmap_lock, 0) && \
			  vs__lockdep_rcu_depth() == 0, \
			  "mmap_lock not held, not inside an RCU read-side " \
			  "section")

/**
 * vs_mmap_assert_locked_or_rcu - @mm's mmap_lock is held, or the caller
 * is inside an RCU read-side section (a lockless walk)
 * @mm: the mm
 */
#define vs_mmap_assert_locked_or_rcu(mm) \
	vs_lockdep_assert(vs__lockdep_held(&(mm)->mmap_lock, 0) || \
			  vs__lockdep_rcu_depth() > 0, \
			  "mmap_lock held or inside an RCU read-side section")

/**
 * vs_vma_assert_write_locked - @vma is write-locked: its mm's mmap_lock
 * held for writing and @vma marked (vs_vma_start_write())
 * @vma: the VMA
 */
#define vs_vma_assert_write_locked(vma) \
	vs_lockdep_assert(vs__lockdep_held(&(vma)->vm_mm->mmap_lock, 1) && \
			  vs_vma_is_write_marked(vma), \
			  "VMA write-locked: mmap_lock held for writing, " \
			  "vs_vma_start_write() done")

/**
 * vs_vma_assert_locked - @vma's per-VMA lock is held for reading, or
 * @vma is write-locked
 * @vma: the VMA
 *
 * Either lock kind: lockdep knows a vm_refcnt read lock by vm_lock's
 * address and class ("vm_lock"), as 6.15 names it vmlock_dep_map.
 */
#define vs_vma_assert_locked(vma) \
	vs_lockdep_assert(vs__lockdep_held(&(vma)->vm_lock, 0) || \
			  (vs__lockdep_held(&(vma)->vm_mm->mmap_lock, 1) && \
			   vs_vma_is_write_marked(vma)), \
			  "VMA locked: its vm_lock held, or write-locked")

/**
 * vs_mmu_notifier_assert_locked - what an mmu notifier callback runs
 * under: @mm's mmap_lock held, for writing unless @event is CLEAR, or
 * UNMAP where munmap downgrades (mech.munmap_downgrade, 4.20 on); for
 * CLEAR, where MADV_DONTNEED runs under the VMA's lock
 * (mech.dontneed_vma_lock, 6.17 on), that lock instead, which the
 * zapper asserts itself (the range names no VMA)
 * @mm: the mm
 * @event: enum vs_mmu_notifier_event
 */
#define vs_mmu_notifier_assert_locked(mm, event) \
	vs_lockdep_assert(vs__lockdep_held(&(mm)->mmap_lock, \
		(event) != VS_MMU_NOTIFY_CLEAR && \
		((event) != VS_MMU_NOTIFY_UNMAP || \
		 !(mm)->mech.munmap_downgrade)) || \
		((event) == VS_MMU_NOTIFY_CLEAR && \
		 (mm)->mech.dontneed_vma_lock), \
		"mmap_lock held, for writing unless the event is CLEAR " \
		"(or UNMAP after a downgrade); for CLEAR the VMA's lock " \
		"will do where MADV_DONTNEED takes it")

/**
 * vs_vm_write_begin - make @vma's vm_sequence odd before its fields change
 * @vma: the VMA
 *
 * Context: mmap_lock held for write; @vma marked: after
 * vs_vma_start_write(@vma), or born marked (vs__vma_alloc(), as
 * move_vma() opens the new VMA's section before it is published).
 */
static inline void vs_vm_write_begin(struct vs_vma *vma)
{
	vs_vma_assert_write_locked(vma);
	vs_write_seqcount_begin(&vma->vm_sequence);
}

/**
 * vs_vm_write_end - make @vma's vm_sequence even again after the change
 * @vma: the VMA
 *
 * Context: after vs_vm_write_begin(@vma), mmap_lock still held for
 * write.
 */
static inline void vs_vm_write_end(struct vs_vma *vma)
{
	vs_mmap_assert_write_locked(vma->vm_mm);
	vs_write_seqcount_end(&vma->vm_sequence);
}

/*
 * The operations.  Each takes mmap_lock itself (for write; vs_madvise()
 * for read), so the caller holds no lock of the mm and is not inside
 * vs_rcu_read_lock(); each may sleep.  Errors are the
 * kernel's for the same arguments: -EINVAL (bad flags, length 0 where the
 * kernel refuses it, misaligned address, overflow), -ENOMEM (no room, a
 * hole where the kernel requires a mapping, or the range outside the
 * mm), -EEXIST (MAP_FIXED_NOREPLACE over a mapping), -EACCES (a
 * protection the file's open mode forbids).  Changes the kernel makes
 * before it fails (mprotect and madvise stopping at a hole) are made
 * here too.
 */

/**
 * vs_mmap - map [@addr, @addr + @len) (mmap(2))
 * @mm: the mm
 * @addr: the address, or a hint
 * @len: bytes, rounded up to pages
 * @prot: VS_PROT_* bits
 * @flags: VS_MAP_* bits: exactly one of SHARED and PRIVATE
 * @file: NULL for MAP_ANONYMOUS, else an in-memory file (vmsim/file.h)
 * @off: file offset in bytes, page aligned
 *
 * Without MAP_FIXED / MAP_FIXED_NOREPLACE, @addr is a hint; the range is
 * chosen top-down within the mm's range like the kernel's
 * get_unmapped_area().  MAP_POPULATE faults the pages in.
 *
 * Context: takes mmap_lock for write; may sleep.
 * Return: the address mapped, or a negative errno.
 */
VS_EXTERN long vs_mmap(struct vs_mm *mm, unsigned long addr, size_t len,
		       int prot, int flags, struct vs_file *file, off_t off);

/**
 * vs_munmap - unmap [@addr, @addr + @len) (munmap(2))
 * @mm: the mm
 * @addr: page aligned
 * @len: bytes, rounded up to pages
 *
 * A hole is not an error.  The pages go back to the pool, and the page
 * tables and VMAs after a grace period.
 *
 * Context: takes mmap_lock for write; may sleep.
 * Return: 0, or a negative errno (see above).
 */
VS_EXTERN int vs_munmap(struct vs_mm *mm, unsigned long addr, size_t len);

/**
 * vs_mprotect - change the protection of [@addr, @addr + @len)
 * (mprotect(2))
 * @mm: the mm
 * @addr: page aligned
 * @len: bytes, rounded up to pages
 * @prot: VS_PROT_* bits
 *
 * Splits and merges VMAs.  Removing VS_PROT_WRITE write-protects the
 * present PTEs; adding it leaves them read-only until the next write
 * fault.
 *
 * Context: takes mmap_lock for write; may sleep.
 * Return: 0, or a negative errno (see above): -ENOMEM at a hole, after
 * changing what lies before it.
 */
VS_EXTERN int vs_mprotect(struct vs_mm *mm, unsigned long addr, size_t len,
			  int prot);

/**
 * vs_madvise - give advice about [@addr, @addr + @len) (madvise(2))
 * @mm: the mm
 * @addr: page aligned
 * @len: bytes, rounded up to pages
 * @advice: VS_MADV_DONTNEED zaps the pages and keeps the VMAs;
 *          MADV_NORMAL and MADV_WILLNEED do nothing
 *
 * Context: takes mmap_lock for read (faults may run beside it); may
 * sleep.
 * Return: 0, or a negative errno (see above): -EINVAL for other advice,
 * -ENOMEM when part of the range is unmapped.
 */
VS_EXTERN int vs_madvise(struct vs_mm *mm, unsigned long addr, size_t len,
			 int advice);

/**
 * vs_mremap - grow, shrink or move a mapping (mremap(2))
 * @mm: the mm
 * @old_addr: the start of the mapping, page aligned
 * @old_len: its length in bytes
 * @new_len: the length wanted
 * @flags: VS_MREMAP_MAYMOVE, VS_MREMAP_FIXED
 * @new_addr: the destination with VS_MREMAP_FIXED
 *
 * Context: takes mmap_lock for write; may sleep.
 * Return: the new address, or a negative errno.
 */
VS_EXTERN long vs_mremap(struct vs_mm *mm, unsigned long old_addr,
			 size_t old_len, size_t new_len, int flags,
			 unsigned long new_addr);

/**
 * vs_fork - copy @mm (dup_mmap): private anonymous PTEs become
 * write-protected in both for copy-on-write; shared mappings are shared
 * @mm: the parent
 * @child: receives the new mm, which shares @mm's page pool
 *
 * Context: takes both mmap_locks for write; may sleep.
 * Return: 0 and *@child, or a negative errno: -EINVAL for NULL, -ENOMEM.
 */
VS_EXTERN int vs_fork(struct vs_mm *mm, struct vs_mm **child);

/**
 * vs_brk - move the program break (brk(2))
 * @mm: the mm
 * @brk: the break wanted
 *
 * Context: takes mmap_lock for write; may sleep.
 * Return: the new break, or the old one when the move is refused (the
 * kernel's brk(2) convention): below start_brk, past the mm's range, or
 * no room; 0 for a NULL @mm.
 */
VS_EXTERN unsigned long vs_brk(struct vs_mm *mm, unsigned long brk);

/**
 * vs_mm_dump - print the VMAs as /proc/pid/maps lines
 * @mm: the mm
 * @out: the stream
 *
 * Context: takes mmap_lock for read.
 * Return: 0, -EINVAL for NULL, -EIO on a write error.
 */
VS_EXTERN int vs_mm_dump(struct vs_mm *mm, FILE *out);

#endif /* VMSIM_MM_H */
