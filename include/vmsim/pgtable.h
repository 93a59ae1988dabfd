/* SPDX-License-Identifier: MIT */
/*
 * vmsim/pgtable.h - four-level page tables, x86-64 shape.
 *
 * PGD -> PUD -> PMD -> PTE, 512 64-bit entries per level, 48-bit user
 * addresses (below VS_TASK_SIZE, 2^47).  Entries are vs_atomic64_t.
 *
 * Leaf (PTE) entry: bit 0 PRESENT, 1 WRITE, 2 USER, 5 ACCESSED,
 * 6 DIRTY, bits 12..51 the pfn (vs_page_to_pfn()).  0 is pte_none.
 * Upper-level entry: the address of the next table (a struct vs_ptpage,
 * VS_PTPAGE_ALIGN aligned) with PRESENT | WRITE | USER | ACCESSED in
 * the low bits (vs_pxd_table()).
 *
 * Lifetime.  Table pages are allocated on demand by vs_pte_alloc() and
 * published with a compare-and-swap; they are freed only by
 * vs_free_pgd_range() (after a grace period, through vs_free_rcu()) and
 * by vs_pgtable_destroy(); vs_zap_range() clears PTEs and frees no
 * table.  A walker inside
 * vs_rcu_read_lock() therefore never touches freed memory, but the table
 * it reached may already be unlinked: it revalidates under the PTL
 * (vs_pte_offset_map_lock() does) or by its own sequence count.
 *
 * Locking: docs/locking.md, "Page tables".
 *
 * The PTL is the PTE page's own lock with split_ptl, else pt->mm_ptl
 * (the kernel's USE_SPLIT_PTE_PTLOCKS and mm->page_table_lock).  When a
 * PTE page is freed, its PMD entry is cleared with the PTL held, so
 * that a walker that takes the PTL and rereads the PMD entry knows
 * whether the table is still live.
 */
#ifndef VMSIM_PGTABLE_H
#define VMSIM_PGTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "common.h"
#include "rcu.h"
#include "spinlock.h"

#define VS_TASK_SIZE (1UL << 47)	/* the end of user addresses */

#define VS_PTRS_PER_TABLE 512	/* entries in a table, at every level */
#define VS_PTE_SHIFT 12		/* a PTE maps 1 << 12 bytes (a page) */
#define VS_PMD_SHIFT 21		/* a PMD entry maps 1 << 21 bytes */
#define VS_PUD_SHIFT 30		/* a PUD entry maps 1 << 30 bytes */
#define VS_PGDIR_SHIFT 39	/* a PGD entry maps 1 << 39 bytes */
#define VS_PMD_SIZE (1UL << VS_PMD_SHIFT)	/* bytes a PMD entry maps */
#define VS_PUD_SIZE (1UL << VS_PUD_SHIFT)	/* bytes a PUD entry maps */
#define VS_PGDIR_SIZE (1UL << VS_PGDIR_SHIFT)	/* bytes a PGD entry maps */

/* Entry bits. */
#define VS_PTE_PRESENT (UINT64_C(1) << 0)	/* the entry maps something */
#define VS_PTE_WRITE (UINT64_C(1) << 1)	/* writable */
#define VS_PTE_USER (UINT64_C(1) << 2)	/* user-accessible */
#define VS_PTE_ACCESSED (UINT64_C(1) << 5)	/* young: accessed */
#define VS_PTE_DIRTY (UINT64_C(1) << 6)	/* written */
#define VS_PTE_FLAGS_MASK UINT64_C(0xfff)	/* the flag bits of a PTE */
#define VS_PTE_PFN_SHIFT 12	/* where the pfn starts in a PTE */
#define VS_PTE_PFN_MASK UINT64_C(0x000ffffffffff000) /* the pfn bits */

/* Upper-level entries: table address | VS_PXD_TABLE_FLAGS. */
#define VS_PTPAGE_ALIGN 64	/* alignment of a struct vs_ptpage */
/** VS_PXD_ADDR_MASK - the table address bits of an upper-level entry */
#define VS_PXD_ADDR_MASK UINT64_C(0x0000ffffffffffc0)
/** VS_PXD_TABLE_FLAGS - the flags of an upper-level entry */
#define VS_PXD_TABLE_FLAGS \
	(VS_PTE_PRESENT | VS_PTE_WRITE | VS_PTE_USER | VS_PTE_ACCESSED)

/**
 * struct vs_ptpage - one page-table page, at any level
 * @entries: the 512 entries (public through the walk functions)
 * @ptl: the split page-table lock (PTE pages, split_ptl only)
 * @level: 0 PTE, 1 PMD, 2 PUD, 3 PGD (read-only)
 * @pt: owner, for accounting in the RCU callback (private)
 *
 * 4112 bytes (4160 in its cache, at 64-byte alignment): 4096 of
 * entries, then the lock, the level and the owner.
 */
struct vs_ptpage {
	vs_atomic64_t entries[VS_PTRS_PER_TABLE];
	vs_spinlock_t ptl;
	uint32_t level;
	struct vs_pgtable *pt;
};

/**
 * struct vs_pgtable - the page tables of one address space
 * @pgd: the root, allocated by vs_pgtable_init() (read-only after)
 * @split_ptl: 1 for a lock per PTE page, 0 for @mm_ptl (read-only)
 * @mm_ptl: the PTL of every PTE page when !@split_ptl
 * @nr_pages: table pages allocated and not yet freed (private)
 * @nr_rcu_pending: RCU frees queued and not yet run (private)
 */
struct vs_pgtable {
	VS_ATOMIC(struct vs_ptpage *) pgd;
	int split_ptl;
	vs_spinlock_t mm_ptl;
	vs_atomic_long_t nr_pages;
	vs_atomic_long_t nr_rcu_pending;
};

/* ---- entry helpers ---------------------------------------------------- */

/**
 * vs_pte_none - is @v an empty entry (pte_none)?
 * @v: an entry value (vs_ptep_get() ...)
 *
 * Context: any: @v is a value, not the entry.
 * Return: 1 for 0, else 0.
 */
static inline int vs_pte_none(uint64_t v)
{
	return v == 0;
}

/**
 * vs_pte_present - does @v map something (pte_present)?
 * @v: an entry value (vs_ptep_get() ...)
 *
 * Context: any: @v is a value, not the entry.
 * Return: 1 when VS_PTE_PRESENT is set, else 0.
 */
static inline int vs_pte_present(uint64_t v)
{
	return (v & VS_PTE_PRESENT) != 0;
}

/**
 * vs_pte_write - is @v writable (pte_write)?
 * @v: an entry value (vs_ptep_get() ...)
 *
 * Context: any: @v is a value, not the entry.
 * Return: 1 when VS_PTE_WRITE is set, else 0.
 */
static inline int vs_pte_write(uint64_t v)
{
	return (v & VS_PTE_WRITE) != 0;
}

/**
 * vs_pte_dirty - is @v dirty (pte_dirty)?
 * @v: an entry value (vs_ptep_get() ...)
 *
 * Context: any: @v is a value, not the entry.
 * Return: 1 when VS_PTE_DIRTY is set, else 0.
 */
static inline int vs_pte_dirty(uint64_t v)
{
	return (v & VS_PTE_DIRTY) != 0;
}

/**
 * vs_pte_young - was @v accessed (pte_young)?
 * @v: an entry value (vs_ptep_get() ...)
 *
 * Context: any: @v is a value, not the entry.
 * Return: 1 when VS_PTE_ACCESSED is set, else 0.
 */
static inline int vs_pte_young(uint64_t v)
{
	return (v & VS_PTE_ACCESSED) != 0;
}

/**
 * vs_pte_pfn - the pfn a leaf entry maps (pte_pfn)
 * @v: an entry value (vs_ptep_get() ...)
 *
 * Context: any: @v is a value, not the entry.
 * Return: the pfn (vs_pfn_to_page()).
 */
static inline unsigned long vs_pte_pfn(uint64_t v)
{
	return (unsigned long)((v & VS_PTE_PFN_MASK) >> VS_PTE_PFN_SHIFT);
}

/**
 * vs_pte_flags - the flag bits of a leaf entry
 * @v: an entry value (vs_ptep_get() ...)
 *
 * Context: any: @v is a value, not the entry.
 * Return: @v & VS_PTE_FLAGS_MASK.
 */
static inline uint64_t vs_pte_flags(uint64_t v)
{
	return v & VS_PTE_FLAGS_MASK;
}

/**
 * vs_mk_pte - a leaf entry for @pfn with @flags (mk_pte)
 * @pfn: the page's pfn (vs_page_to_pfn())
 * @flags: VS_PTE_* bits
 *
 * Context: any.
 * Return: the entry value, to install with vs_set_pte().
 */
static inline uint64_t vs_mk_pte(unsigned long pfn, uint64_t flags)
{
	return (((uint64_t)pfn << VS_PTE_PFN_SHIFT) & VS_PTE_PFN_MASK) |
	       (flags & VS_PTE_FLAGS_MASK);
}

/**
 * vs_pte_mkwrite - @v made writable (pte_mkwrite)
 * @v: an entry value (vs_ptep_get() ...)
 *
 * Context: any: @v is a value, not the entry.
 * Return: the new entry value.
 */
static inline uint64_t vs_pte_mkwrite(uint64_t v)
{
	return v | VS_PTE_WRITE;
}

/**
 * vs_pte_wrprotect - @v made read-only (pte_wrprotect)
 * @v: an entry value (vs_ptep_get() ...)
 *
 * Context: any: @v is a value, not the entry.
 * Return: the new entry value.
 */
static inline uint64_t vs_pte_wrprotect(uint64_t v)
{
	return v & ~VS_PTE_WRITE;
}

/**
 * vs_pte_mkdirty - @v marked dirty (pte_mkdirty)
 * @v: an entry value (vs_ptep_get() ...)
 *
 * Context: any: @v is a value, not the entry.
 * Return: the new entry value.
 */
static inline uint64_t vs_pte_mkdirty(uint64_t v)
{
	return v | VS_PTE_DIRTY;
}

/**
 * vs_pte_mkclean - @v marked clean (pte_mkclean)
 * @v: an entry value (vs_ptep_get() ...)
 *
 * Context: any: @v is a value, not the entry.
 * Return: the new entry value.
 */
static inline uint64_t vs_pte_mkclean(uint64_t v)
{
	return v & ~VS_PTE_DIRTY;
}

/**
 * vs_pte_mkyoung - @v marked accessed (pte_mkyoung)
 * @v: an entry value (vs_ptep_get() ...)
 *
 * Context: any: @v is a value, not the entry.
 * Return: the new entry value.
 */
static inline uint64_t vs_pte_mkyoung(uint64_t v)
{
	return v | VS_PTE_ACCESSED;
}

/**
 * vs_pte_mkold - @v marked not accessed (pte_mkold)
 * @v: an entry value (vs_ptep_get() ...)
 *
 * Context: any: @v is a value, not the entry.
 * Return: the new entry value.
 */
static inline uint64_t vs_pte_mkold(uint64_t v)
{
	return v & ~VS_PTE_ACCESSED;
}

/**
 * vs_pxd_table - the next-level table an upper-level entry points to
 * @v: a present upper-level entry value
 *
 * Context: as the walk that read @v: the table may be unlinked and freed
 * after a grace period (see the file comment).
 * Return: the table.
 */
static inline struct vs_ptpage *vs_pxd_table(uint64_t v)
{
	return (struct vs_ptpage *)(uintptr_t)(v & VS_PXD_ADDR_MASK);
}

/**
 * vs_pt_index - the index of @addr in a table of @level
 * @addr: a user address
 * @level: 0 PTE, 1 PMD, 2 PUD, 3 PGD
 *
 * Context: any.
 * Return: 0..VS_PTRS_PER_TABLE-1.
 */
static inline unsigned int vs_pt_index(unsigned long addr, int level)
{
	return (addr >> (VS_PTE_SHIFT + 9 * level)) & (VS_PTRS_PER_TABLE - 1);
}

/* ---- PTE access --------------------------------------------------------- */

/**
 * vs_ptep_get - read a PTE (ptep_get)
 * @ptep: the PTE slot
 *
 * Context: the PTL held.
 * Return: the entry value.
 */
static inline uint64_t vs_ptep_get(vs_atomic64_t *ptep)
{
	return vs_read_once(ptep);
}

/**
 * vs_ptep_get_lockless - read a PTE without the PTL
 *
 * @ptep: the PTE slot
 *
 * Acquire: pairs with the release in vs_set_pte(), so that a reader that
 * sees a new PTE also sees the page contents written (cleared, copied)
 * before it was set.
 *
 * Context: mmap_lock, or inside vs_rcu_read_lock().
 * Return: the entry value, which may change at once.
 */
static inline uint64_t vs_ptep_get_lockless(vs_atomic64_t *ptep)
{
	return vs_load_acquire(ptep);
}

/**
 * vs_set_pte - install a PTE (set_pte_at)
 * @ptep: the PTE slot
 * @v: the new entry value
 *
 * Release: the page's contents and metadata, prepared before, are
 * visible to whoever reads the PTE with vs_ptep_get_lockless().
 * Context: the PTL held.
 */
static inline void vs_set_pte(vs_atomic64_t *ptep, uint64_t v)
{
	vs_store_release(ptep, v);
}

/**
 * vs_ptep_get_and_clear - clear a PTE (ptep_get_and_clear)
 * @ptep: the PTE slot
 *
 * Context: the PTL held.
 * Return: the last value, with any ACCESSED/DIRTY bit a lockless setter
 * added.
 */
static inline uint64_t vs_ptep_get_and_clear(vs_atomic64_t *ptep)
{
	return vs_xchg(ptep, 0);
}

/**
 * vs_ptep_set_flags - OR @flags into a present PTE, atomically (no PTL needed)
 * @ptep: the PTE slot
 * @old: the value the caller read, present
 * @flags: VS_PTE_ACCESSED and/or VS_PTE_DIRTY (a fault's fixup, under
 *	the PTL, may add VS_PTE_USER)
 *
 * The hardware's ACCESSED/DIRTY update: retries while only ACCESSED
 * and DIRTY change, as the hardware's atomic update sets DIRTY only in
 * a PTE that still allows the write.  Under the PTL too, where a plain
 * store would lose a bit another CPU's update set meanwhile.
 *
 * Context: mmap_lock or inside vs_rcu_read_lock(); the PTL may be held.
 * Return: 1 when set; 0 when the PTE changed meanwhile in anything but
 * ACCESSED and DIRTY (unmapped, another page, a permission taken or
 * given), leaving it as it is.
 */
static inline int vs_ptep_set_flags(vs_atomic64_t *ptep, uint64_t old,
				    uint64_t flags)
{
	uint64_t cur = old;

	while (!vs_cmpxchg(ptep, &cur, cur | flags))
		if ((cur ^ old) & ~(VS_PTE_ACCESSED | VS_PTE_DIRTY))
			return 0;
	return 1;
}

/* ---- tables ------------------------------------------------------------- */

/**
 * vs_pgtable_init - allocate the PGD of an empty address space
 * @pt: the page tables
 * @split_ptl: 1 for a lock per PTE page, 0 for one lock per mm
 *
 * Context: any.
 * Return: 0, -EINVAL for a NULL @pt, -ENOMEM.
 */
VS_EXTERN int vs_pgtable_init(struct vs_pgtable *pt, int split_ptl);

/**
 * vs_pgtable_destroy - free every table page
 * @pt: the page tables
 *
 * Waits for the RCU frees still queued (vs_rcu_barrier()) if any.
 * Pages that PTEs map are the caller's: it zaps first.
 *
 * Context: no walker of any kind; may sleep; not inside
 * vs_rcu_read_lock() or an RCU callback.
 */
VS_EXTERN void vs_pgtable_destroy(struct vs_pgtable *pt);

/**
 * vs_pte_offset - find the PTE slot of @addr, allocating nothing
 *
 * Context: mmap_lock held (either mode) or the VMA's lock, or inside
 * vs_rcu_read_lock() for a speculative walk: then the slot may belong to
 * a table already unlinked (it stays readable until the section ends),
 * so the caller revalidates, e.g. under the PTL.
 * Return: the slot, or NULL when an upper level is missing or @addr is
 * not a user address.
 */
VS_EXTERN vs_atomic64_t *vs_pte_offset(struct vs_pgtable *pt,
				       unsigned long addr);

/**
 * vs_pte_alloc - find the PTE slot of @addr, allocating missing tables
 *
 * A new table is published with a fully ordered compare-and-swap (it
 * pairs with the walkers' acquire loads); the loser of a race frees its
 * own table, which no one else has seen.
 *
 * Context: mmap_lock held for read or write, or the VMA's lock, or
 * inside vs_rcu_read_lock() with revalidation under the PTL (a table
 * installed under an unlinked parent is freed with that parent).
 * Return: the slot, or NULL on -ENOMEM or a non-user @addr.
 */
VS_EXTERN vs_atomic64_t *vs_pte_alloc(struct vs_pgtable *pt,
				      unsigned long addr);

/**
 * vs_pte_lockptr - the lock protecting the PTE of @addr
 *
 * Context: as vs_pte_offset().  A speculative caller must recheck that
 * the PTE page is still linked after taking the lock
 * (vs_pte_offset_map_lock() does it).
 * Return: the PTE page's lock (split_ptl) or pt->mm_ptl; NULL when the
 * PTE page does not exist.
 */
VS_EXTERN vs_spinlock_t *vs_pte_lockptr(struct vs_pgtable *pt,
					unsigned long addr);

/**
 * vs_pte_offset_map_lock - find the PTE slot of @addr and lock its PTL
 * @ptlp: set to the lock taken
 *
 * Rechecks, under the PTL, that the PMD entry still points to the PTE
 * page found, and retries when it changed (pte_offset_map_lock() of
 * Linux 6.5).  Page tables are never freed while the caller holds the
 * PTL of a linked PTE page.  The walk up to that recheck runs inside an
 * RCU read-side section of its own, as 6.18's __pte_offset_map() does:
 * with PT_RECLAIM (vs_zap_range_reclaim()) a PTE page may be freed
 * under the mmap_lock or a VMA lock held for read, and NULL then tells
 * the caller that its table went (6.18's fault returns 0 and the access
 * faults again).
 *
 * Context: as vs_pte_offset(); sleeps briefly on the PTL.
 * Return: the slot with *@ptlp held, or NULL (no PTE page; no lock).
 */
VS_EXTERN vs_atomic64_t *vs_pte_offset_map_lock(struct vs_pgtable *pt,
						unsigned long addr,
						vs_spinlock_t **ptlp);

/**
 * vs_assert_ptl_held - assert that the caller holds @ptl (a PTE page's
 * lock, or the mm's page_table_lock), in a lockdep build (vmsim/lockdep.h)
 * @ptl: the lock, as vs_pte_lockptr() returns it
 */
#define vs_assert_ptl_held(ptl) vs_lockdep_assert_held(ptl)

/**
 * vs_pte_unmap_unlock - drop the PTL taken by vs_pte_offset_map_lock()
 * @ptl: the lock it returned in *ptlp
 *
 * Context: the caller holds @ptl.
 */
static inline void vs_pte_unmap_unlock(vs_spinlock_t *ptl)
{
	vs_assert_ptl_held(ptl);
	vs_spin_unlock(ptl);
}

/**
 * vs_zap_range - clear the PTEs of [@start, @end) (zap_page_range)
 * @zap: called for each present PTE, under its PTL, after the PTE was
 *       cleared: the caller drops mapcount, refcount and RSS (may be NULL)
 *
 * The table pages stay, as MADV_DONTNEED leaves them up to 6.13 (and
 * later without PT_RECLAIM; see vs_zap_range_reclaim()): unmapping
 * frees them afterwards with vs_free_pgd_range().  @start and @end are
 * rounded out to pages.
 *
 * Context: mmap_lock held.  Faults may run beside it (MADV_DONTNEED
 * holds mmap_lock for read): each PTE page is cleared under its PTL,
 * and a fault that installs a PTE after the zap passed it keeps it.
 * Return: the number of present PTEs cleared; 0 for an invalid range.
 */
VS_EXTERN unsigned long vs_zap_range(struct vs_pgtable *pt,
				     unsigned long start, unsigned long end,
				     void (*zap)(uint64_t pte,
						 unsigned long addr,
						 void *arg),
				     void *arg);

/**
 * vs_zap_range_reclaim - vs_zap_range(), and free each PTE page that the
 * range covers whole and that the zap left empty (PT_RECLAIM, 6.14 on)
 * @zap: as vs_zap_range()'s
 * @nr_tables: set to the number of PTE pages freed
 *
 * As 6.18's MADV_DONTNEED zap with mm/pt_reclaim.c's try_to_free_pte():
 * under the page_table_lock (the PMD-level lock) and the PTE page's PTL
 * the table is checked empty again, its PMD entry cleared, and the page
 * freed after a grace period: a walker that loaded the entry before is
 * inside an RCU section (vs_pte_offset_map_lock(), a speculative
 * fault).  A fault that installs into the table before the recheck
 * keeps it; one that finds the entry gone refaults and allocates anew.
 * The caller flushes the TLB before returning (its mmu_gather).
 *
 * Context: as vs_zap_range(), or the lock of the one VMA holding
 * [@start, @end) held for read; no PTL held.
 * Return: the number of present PTEs cleared; 0 for an invalid range.
 */
VS_EXTERN unsigned long vs_zap_range_reclaim(struct vs_pgtable *pt,
					     unsigned long start,
					     unsigned long end,
					     void (*zap)(uint64_t pte,
							 unsigned long addr,
							 void *arg),
					     void *arg,
					     unsigned long *nr_tables);

/**
 * vs_free_pgd_range - free the empty table pages under [@addr, @end)
 * @floor, @ceiling: the gap around the range that holds no mapping
 *                   (the previous VMA's end, the next VMA's start;
 *                   @ceiling 0 means the top of the address space)
 *
 * A table covering addresses in [@floor, @ceiling) only, and holding no
 * entry, is unlinked and freed after a grace period (free_pgd_range).
 *
 * Context: mmap_lock held for write, or for read after a munmap's
 * downgrade (6.18's vms_complete_munmap_vmas()); nothing mapped, and no
 * fault, in [@floor, @ceiling).
 * Return: 0, -EINVAL for a bad range.
 */
VS_EXTERN int vs_free_pgd_range(struct vs_pgtable *pt, unsigned long addr,
				unsigned long end, unsigned long floor,
				unsigned long ceiling);

/**
 * vs_pgtable_walk - visit the present PTEs of [@start, @end)
 * @fn: called under the PTL with the slot; may rewrite it (fork's COW
 *      write-protect, mprotect); a nonzero return stops the walk
 *
 * Context: mmap_lock held (write for changes that need it).  Takes the
 * PTLs, one PTE page at a time.
 * Return: 0, the first nonzero value of @fn, -EINVAL for a bad range.
 */
VS_EXTERN int vs_pgtable_walk(struct vs_pgtable *pt, unsigned long start,
			      unsigned long end,
			      int (*fn)(vs_atomic64_t *pte, unsigned long addr,
					void *arg),
			      void *arg);

/**
 * vs_pgtable_pages - table pages in use (the PGD included)
 * @pt: the page tables
 *
 * Context: any; a snapshot.
 * Return: the number of table pages allocated and not yet freed.
 */
VS_EXTERN size_t vs_pgtable_pages(struct vs_pgtable *pt);

#endif /* VMSIM_PGTABLE_H */
