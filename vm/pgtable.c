/* SPDX-License-Identifier: MIT */
/*
 * vm/pgtable.c - four-level page tables with RCU-deferred table frees.
 *
 * Populating: vs_pte_alloc() installs a missing table with a fully
 * ordered compare-and-swap on the empty upper-level entry.  Any number
 * of allocators may race (mmap_lock for read, per-VMA locks, speculative
 * faults); one wins, the others free their unpublished tables at once.
 *
 * Freeing: under mmap_lock for write, an empty table is unlinked with a
 * compare-and-swap to 0 (a PTE page with its PTL held) and handed to
 * vs_free_rcu().  A walker inside vs_rcu_read_lock() that loaded the old
 * entry keeps reading valid memory until its section ends.  A stale
 * speculative allocator may still install a child into a table after it
 * was unlinked; the RCU callback therefore frees the whole subtree it is
 * given: when it runs, every section that could reach that subtree has
 * ended, so nothing else can reach those children.
 *
 * PT_RECLAIM (6.14 on; mm/pt_reclaim.c): a MADV_DONTNEED zap that
 * leaves a whole PTE page empty also unlinks it, under the mmap_lock or
 * the VMA's lock for read only (vs_zap_range_reclaim()).  A walker that
 * holds one of those locks may therefore meet a PTE page that is going:
 * vs_pte_offset_map_lock() walks inside an RCU section until it holds
 * the PTL and has rechecked the PMD entry, as 6.18's
 * pte_offset_map_lock() does, and returns NULL when the table is gone.
 */
#include <vmsim/pgtable.h>
#include <vmsim/rcu.h>

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/page.h>
#include <vmsim/slab.h>
#include <vmsim/vcpu_annotate.h>

#include "../sync/internal.h"

#define PTPAGE_BYTES \
	((sizeof(struct vs_ptpage) + VS_PTPAGE_ALIGN - 1) & \
	 ~(size_t)(VS_PTPAGE_ALIGN - 1))

#define LEVEL_PTE 0
#define LEVEL_PMD 1
#define LEVEL_PGD 3

static unsigned long level_span(int level)
{
	return 1UL << (VS_PTE_SHIFT + 9 * level);
}

/* End of the entry of @level that holds @addr, clamped to @end. */
static unsigned long entry_end(unsigned long addr, int level,
			       unsigned long end)
{
	unsigned long next = (addr | (level_span(level) - 1)) + 1;

	return next < end ? next : end;
}

/* Table pages of every level: the kernel takes them from the page
 * allocator, the model from a cache of its own. */
static struct vs_kmem_cache ptpage_cache =
	VS_KMEM_CACHE_INIT("pgtable", PTPAGE_BYTES, VS_PTPAGE_ALIGN);

static struct vs_ptpage *ptpage_alloc(struct vs_pgtable *pt, int level)
{
	struct vs_ptpage *tbl = vs_kmem_cache_zalloc(&ptpage_cache);

	if (!tbl)
		return NULL;
	vs_spin_lock_init(&tbl->ptl);
	vs_lockdep_set_class(&tbl->ptl, "ptl");
	vs_vcpu_name(tbl->entries, sizeof(tbl->entries), level == LEVEL_PTE ?
		     "PTEs" : "upper-level table entries");
	if (level == LEVEL_PTE)
		vs_vcpu_name(&tbl->ptl, sizeof(tbl->ptl), "a PTE page's PTL");
	tbl->level = (uint32_t)level;
	tbl->pt = pt;
	return tbl;
}

/* Free @tbl and every table below it now; return how many. */
static long free_subtree(struct vs_ptpage *tbl)
{
	long n = 1;
	uint64_t v;
	int i;

	if (tbl->level > LEVEL_PTE) {
		for (i = 0; i < VS_PTRS_PER_TABLE; i++) {
			v = vs_read_once(&tbl->entries[i]);
			if (vs_pte_present(v))
				n += free_subtree(vs_pxd_table(v));
		}
	}
	vs_kmem_cache_free(&ptpage_cache, tbl);
	return n;
}

/* vs_free_rcu() callback: @arg is the vs_pgtable, @obj the table. */
static void ptpage_free_rcu(void *arg, void *obj)
{
	struct vs_pgtable *pt = arg;
	struct vs_ptpage *tbl = obj;

	vs_fetch_sub(&pt->nr_pages, free_subtree(tbl));
	/*
	 * The last access to @pt.  Release pairs with the acquire in
	 * vs_pgtable_destroy(): a destroyer that sees 0 may free @pt.
	 */
	vs_fetch_sub_release(&pt->nr_rcu_pending, 1);
}

/* Queue @tbl, already unlinked, for a free after a grace period. */
static void ptpage_free_deferred(struct vs_pgtable *pt, struct vs_ptpage *tbl)
{
	vs_fetch_add(&pt->nr_rcu_pending, 1);
	vs_free_rcu(ptpage_free_rcu, pt, tbl);
}

int vs_pgtable_init(struct vs_pgtable *pt, int split_ptl)
{
	struct vs_ptpage *pgd;

	if (!pt)
		return -EINVAL;
	pgd = ptpage_alloc(pt, LEVEL_PGD);
	if (!pgd)
		return -ENOMEM;
	pt->split_ptl = !!split_ptl;
	vs_spin_lock_init(&pt->mm_ptl);
	vs_lockdep_set_class(&pt->mm_ptl, "page_table_lock");
	vs_atomic_init(&pt->nr_pages, 1);
	vs_atomic_init(&pt->nr_rcu_pending, 0);
	/* Pairs with the acquire in walk(): pt may be shared right away. */
	vs_store_release(&pt->pgd, pgd);
	return 0;
}

void vs_pgtable_destroy(struct vs_pgtable *pt)
{
	struct vs_ptpage *pgd = vs_read_once(&pt->pgd);

	vs_lockdep_assert(vs__lockdep_rcu_depth() == 0,
			  "not inside an RCU read-side section");
	/* Pairs with the release in ptpage_free_rcu(). */
	if (vs_load_acquire(&pt->nr_rcu_pending) != 0)
		vs_rcu_barrier();
	if (!pgd)
		return;
	vs_fetch_sub(&pt->nr_pages, free_subtree(pgd));
	assert(vs_read_once(&pt->nr_pages) == 0);
	vs_write_once(&pt->pgd, NULL);
}

/*
 * Install a new table of @level in the empty upper-level entry @slot;
 * return the entry now there (ours or a racing winner's), 0 on ENOMEM.
 */
static uint64_t populate(struct vs_pgtable *pt, vs_atomic64_t *slot,
			 int level)
{
	struct vs_ptpage *tbl = ptpage_alloc(pt, level);
	uint64_t old = 0, v;

	if (!tbl)
		return 0;
	v = (uint64_t)(uintptr_t)tbl | VS_PXD_TABLE_FLAGS;
	/*
	 * Fully ordered: the zeroed entries and the initialised PTL are
	 * visible before the entry.  Pairs with the acquire loads in walk().
	 * The planted bug stores it over a racing populate's table.
	 */
	if (VS_BROKEN(populate_plain_store)) {
		vs_store_release(slot, v);
		vs_fetch_add_relaxed(&pt->nr_pages, 1);
		return v;
	}
	if (vs_cmpxchg(slot, &old, v)) {
		vs_fetch_add_relaxed(&pt->nr_pages, 1);
		return v;
	}
	vs_kmem_cache_free(&ptpage_cache, tbl); /* never published */
	return old;
}

/*
 * The slot of @addr in the table of @to_level, populating missing
 * levels when @alloc.  NULL for a non-user address, a missing level
 * (!@alloc) or ENOMEM.
 */
static inline vs_atomic64_t *walk(struct vs_pgtable *pt, unsigned long addr,
				  int alloc, int to_level)
{
	struct vs_ptpage *tbl;
	vs_atomic64_t *slot;
	uint64_t v;
	int level;

	if (vs_unlikely(addr >= VS_TASK_SIZE))
		return NULL;
	/* Pairs with the release in vs_pgtable_init(). */
	tbl = vs_load_acquire(&pt->pgd);
	for (level = LEVEL_PGD; level > to_level; level--) {
		slot = &tbl->entries[vs_pt_index(addr, level)];
		/*
		 * Pairs with the cmpxchg in populate(): a walker that sees
		 * the entry sees the table initialised.
		 */
		v = vs_load_acquire(slot);
		if (vs_unlikely(!vs_pte_present(v))) {
			if (!alloc)
				return NULL;
			v = populate(pt, slot, level - 1);
			if (!v)
				return NULL;
		}
		tbl = vs_pxd_table(v);
	}
	return &tbl->entries[vs_pt_index(addr, to_level)];
}

vs_atomic64_t *vs_pte_offset(struct vs_pgtable *pt, unsigned long addr)
{
	return walk(pt, addr, 0, LEVEL_PTE);
}

vs_atomic64_t *vs_pte_alloc(struct vs_pgtable *pt, unsigned long addr)
{
	return walk(pt, addr, 1, LEVEL_PTE);
}

static vs_spinlock_t *ptlock(struct vs_pgtable *pt, struct vs_ptpage *ptp)
{
	return pt->split_ptl ? &ptp->ptl : &pt->mm_ptl;
}

vs_spinlock_t *vs_pte_lockptr(struct vs_pgtable *pt, unsigned long addr)
{
	vs_atomic64_t *pmdp = walk(pt, addr, 0, LEVEL_PMD);
	uint64_t v;

	if (!pmdp)
		return NULL;
	/* Pairs with the cmpxchg in populate(). */
	v = vs_load_acquire(pmdp);
	if (!vs_pte_present(v))
		return NULL;
	return ptlock(pt, vs_pxd_table(v));
}

/*
 * pte_page_lock - the PTE page that the PMD entry @pmdp holds, with its
 * PTL taken and the entry rechecked under it: free_child() and
 * try_free_pte() clear the entry with this PTL held, so the lock orders
 * their clear before our recheck, or our unlock before their clear, and
 * nobody frees the table while we hold the PTL.  An entry that changed
 * meanwhile is read again.  *@pmdv is set to the entry.
 * Context: inside vs_rcu_read_lock(), which keeps the table found
 * readable until the recheck (PT_RECLAIM frees PTE pages under read
 * locks, see vs_zap_range_reclaim()).
 * Return: the table, PTL held; NULL when the entry is empty.
 */
static struct vs_ptpage *pte_page_lock(struct vs_pgtable *pt,
				       vs_atomic64_t *pmdp, uint64_t *pmdv)
{
	vs_spinlock_t *ptl;
	uint64_t v;

	vs_rcu_lockdep_assert();
	for (;;) {
		/* Pairs with the cmpxchg in populate(). */
		v = vs_load_acquire(pmdp);
		if (!vs_pte_present(v))
			return NULL;
		ptl = ptlock(pt, vs_pxd_table(v));
		vs_spin_lock(ptl);
		/* The planted bug: trust the entry read before the PTL. */
		if (VS_BROKEN(pte_lock_no_pmd_recheck) ||
		    vs_read_once(pmdp) == v) {
			*pmdv = v;
			return vs_pxd_table(v);
		}
		vs_spin_unlock(ptl);
	}
}

vs_atomic64_t *vs_pte_offset_map_lock(struct vs_pgtable *pt,
				      unsigned long addr, vs_spinlock_t **ptlp)
{
	vs_atomic64_t *pmdp;
	struct vs_ptpage *ptp = NULL;
	uint64_t v;

	/* As 6.18's __pte_offset_map(): the walk runs inside a section of
	 * its own until the PTL is held (see pte_page_lock()). */
	vs_rcu_read_lock();
	pmdp = walk(pt, addr, 0, LEVEL_PMD);
	/* The planted bug leaves the section before the PTL is held. */
	if (VS_BROKEN(pte_walk_outside_rcu))
		vs_rcu_read_unlock();
	if (pmdp)
		ptp = pte_page_lock(pt, pmdp, &v);
	if (!VS_BROKEN(pte_walk_outside_rcu))
		vs_rcu_read_unlock();
	if (!ptp)
		return NULL;
	*ptlp = ptlock(pt, ptp);
	return &ptp->entries[vs_pt_index(addr, LEVEL_PTE)];
}

/* ---- range walks -------------------------------------------------------- */

/* Called for each PMD entry holding a PTE page that meets a range, with
 * [addr, end) inside it; it locks the page itself (pte_page_lock()). */
typedef int (*pte_page_fn)(struct vs_pgtable *pt, vs_atomic64_t *pmdp,
			   unsigned long addr, unsigned long end, void *ctx);

static int walk_range(struct vs_pgtable *pt, struct vs_ptpage *tbl,
		      int level, unsigned long addr, unsigned long end,
		      pte_page_fn fn, void *ctx)
{
	vs_atomic64_t *slot;
	unsigned long next;
	uint64_t v;
	int err;

	for (; addr < end; addr = next) {
		next = entry_end(addr, level, end);
		slot = &tbl->entries[vs_pt_index(addr, level)];
		/* Pairs with the cmpxchg in populate(). */
		v = vs_load_acquire(slot);
		if (!vs_pte_present(v))
			continue;
		if (level - 1 == LEVEL_PTE)
			err = fn(pt, slot, addr, next, ctx);
		else
			err = walk_range(pt, vs_pxd_table(v), level - 1, addr,
					 next, fn, ctx);
		if (err)
			return err;
	}
	return 0;
}

/* Round [*start, *end) out to pages; 0 when it is a user range. */
static int check_range(unsigned long *start, unsigned long *end)
{
	if (*start >= *end || *end > VS_TASK_SIZE)
		return -EINVAL;
	*start &= VS_PAGE_MASK;
	*end = (*end + VS_PAGE_SIZE - 1) & VS_PAGE_MASK;
	return 0;
}

struct zap_ctx {
	void (*zap)(uint64_t pte, unsigned long addr, void *arg);
	void *arg;
	unsigned long nr;
	int reclaim;		/* free the PTE pages left empty */
	unsigned long nr_tables;	/* ... and how many were */
};

static int table_empty(struct vs_ptpage *tbl);

/*
 * try_free_pte - unlink the PTE page that the PMD entry @pmdp held as
 * @pmd if every PTE in it is none, and free it after a grace period
 * (6.18's try_to_free_pte()): under the PMD-level lock (the mm's
 * page_table_lock) and the PTE page's PTL, nested inside it when it is
 * another lock, the PMD entry must still be @pmd and the table empty.
 * A walker that loaded @pmd before the clear is inside an RCU section
 * (vs_pte_offset_map_lock(), or a speculative fault's), which the
 * grace period waits for.  Return: 1 when it was freed.
 * Context: the mmap_lock or the VMA's lock held for read (the table
 * lies wholly in one VMA's zapped range); no PTL held.
 */
static int try_free_pte(struct vs_pgtable *pt, vs_atomic64_t *pmdp,
			uint64_t pmd)
{
	struct vs_ptpage *ptp = vs_pxd_table(pmd);
	vs_spinlock_t *ptl = ptlock(pt, ptp);
	uint64_t old = pmd;
	int freed = 0;

	vs_spin_lock(&pt->mm_ptl);
	if (ptl != &pt->mm_ptl)
		vs_spin_lock(ptl);
	/* Fully ordered, and under the PTL that vs_pte_offset_map_lock()
	 * rechecks the entry with: a walker that takes the PTL after this
	 * sees the entry changed and lets go. */
	if (table_empty(ptp))
		freed = vs_cmpxchg(pmdp, &old, 0);
	if (ptl != &pt->mm_ptl)
		vs_spin_unlock(ptl);
	vs_spin_unlock(&pt->mm_ptl);
	if (!freed)
		return 0;
	if (VS_BROKEN(pt_reclaim_no_rcu))
		vs_fetch_sub(&pt->nr_pages, free_subtree(ptp));
	else
		ptpage_free_deferred(pt, ptp);
	return 1;
}

/* Lock the PTE page of @pmdp for a range walk (pte_page_lock(), in an
 * RCU section of its own).  Context: as vs_zap_range(); no PTL held. */
static struct vs_ptpage *walk_pte_lock(struct vs_pgtable *pt,
				       vs_atomic64_t *pmdp, uint64_t *pmdv)
{
	struct vs_ptpage *ptp;

	vs_rcu_read_lock();
	ptp = pte_page_lock(pt, pmdp, pmdv);
	vs_rcu_read_unlock();
	return ptp;
}

/*
 * Clear the PTE at @ptep and return what it held, with any ACCESSED or
 * DIRTY bit a lockless setter (vs_ptep_set_flags) added since the zap
 * read it: an exchange.  The planted bug reads, then stores 0, and
 * loses a DIRTY set between the two.  Context: its PTL held.
 */
static uint64_t zap_get_and_clear(vs_atomic64_t *ptep)
{
	uint64_t v;

	if (!VS_BROKEN(zap_clear_loses_dirty))
		return vs_ptep_get_and_clear(ptep);
	v = vs_ptep_get(ptep);
	vs_set_pte(ptep, 0);
	return v;
}

/* Clear the PTEs of [addr, end) in @pmdp's PTE page under its PTL; with
 * c->reclaim, then free the page if the range was all of it and it is
 * empty.  Context: as vs_zap_range_reclaim(); no PTL held. */
static int zap_pte_page(struct vs_pgtable *pt, vs_atomic64_t *pmdp,
			unsigned long addr, unsigned long end, void *ctx)
{
	struct zap_ctx *c = ctx;
	unsigned long first = addr;
	struct vs_ptpage *ptp;
	vs_spinlock_t *ptl;
	vs_atomic64_t *ptep;
	uint64_t v, pmd;

	ptp = walk_pte_lock(pt, pmdp, &pmd);
	if (!ptp)
		return 0;	/* reclaimed meanwhile: nothing to zap */
	ptl = ptlock(pt, ptp);
	for (; addr < end; addr += VS_PAGE_SIZE) {
		ptep = &ptp->entries[vs_pt_index(addr, LEVEL_PTE)];
		if (vs_pte_none(vs_ptep_get(ptep)))
			continue;
		v = zap_get_and_clear(ptep);
		if (!vs_pte_present(v))
			continue;
		c->nr++;
		if (c->zap)
			c->zap(v, addr, c->arg);
	}
	vs_spin_unlock(ptl);
	/* 6.18's zap_pte_range() reclaims only a table the zap covered
	 * whole (reclaim_pt_is_enabled()). */
	if (c->reclaim && end - first == level_span(LEVEL_PMD) &&
	    try_free_pte(pt, pmdp, pmd))
		c->nr_tables++;
	return 0;
}

struct free_ctx {
	unsigned long floor;
	unsigned long ceiling_last; /* last address of the gap */
};

static int table_empty(struct vs_ptpage *tbl)
{
	int i;

	for (i = 0; i < VS_PTRS_PER_TABLE; i++)
		if (!vs_pte_none(vs_read_once(&tbl->entries[i])))
			return 0;
	return 1;
}

/*
 * Unlink the child @v of @slot if it is empty.  A PTE page is checked
 * and unlinked under its PTL (see vs_pte_offset_map_lock()).
 */
static void free_child(struct vs_pgtable *pt, vs_atomic64_t *slot,
		       uint64_t v)
{
	struct vs_ptpage *child = vs_pxd_table(v);
	vs_spinlock_t *ptl = NULL;
	uint64_t old = v;
	int unlinked = 0;

	if (child->level == LEVEL_PTE) {
		ptl = ptlock(pt, child);
		vs_spin_lock(ptl);
	}
	/*
	 * Fully ordered: a walker that still loads the old entry is inside
	 * an RCU section that the grace period below waits for.
	 */
	if (table_empty(child))
		unlinked = vs_cmpxchg(slot, &old, 0);
	if (ptl)
		vs_spin_unlock(ptl);
	if (unlinked)
		ptpage_free_deferred(pt, child);
}

static void free_tables(struct vs_pgtable *pt, struct free_ctx *c,
			struct vs_ptpage *tbl, int level, unsigned long addr,
			unsigned long end)
{
	unsigned long next, base, span = level_span(level);
	vs_atomic64_t *slot;
	uint64_t v;

	for (; addr < end; addr = next) {
		next = entry_end(addr, level, end);
		slot = &tbl->entries[vs_pt_index(addr, level)];
		/* Pairs with the cmpxchg in populate(). */
		v = vs_load_acquire(slot);
		if (!vs_pte_present(v))
			continue;
		if (level - 1 > LEVEL_PTE)
			free_tables(pt, c, vs_pxd_table(v), level - 1, addr,
				    next);
		base = addr & ~(span - 1);
		if (base >= c->floor && base + (span - 1) <= c->ceiling_last)
			free_child(pt, slot, v);
	}
}

int vs_free_pgd_range(struct vs_pgtable *pt, unsigned long addr,
		      unsigned long end, unsigned long floor,
		      unsigned long ceiling)
{
	struct free_ctx c;

	if (check_range(&addr, &end) || floor > addr ||
	    (ceiling && ceiling < end))
		return -EINVAL;
	c.floor = floor;
	c.ceiling_last = ceiling ? ceiling - 1 : VS_TASK_SIZE - 1;
	free_tables(pt, &c, vs_load_acquire(&pt->pgd), LEVEL_PGD, addr, end);
	return 0;
}

unsigned long vs_zap_range(struct vs_pgtable *pt, unsigned long start,
			   unsigned long end,
			   void (*zap)(uint64_t pte, unsigned long addr,
				       void *arg),
			   void *arg)
{
	struct zap_ctx c = { zap, arg, 0, 0, 0 };

	if (check_range(&start, &end))
		return 0;
	walk_range(pt, vs_load_acquire(&pt->pgd), LEVEL_PGD, start, end,
		   zap_pte_page, &c);
	return c.nr;
}

unsigned long vs_zap_range_reclaim(struct vs_pgtable *pt,
				   unsigned long start, unsigned long end,
				   void (*zap)(uint64_t pte,
					       unsigned long addr, void *arg),
				   void *arg, unsigned long *nr_tables)
{
	struct zap_ctx c = { zap, arg, 0, 1, 0 };

	*nr_tables = 0;
	if (check_range(&start, &end))
		return 0;
	walk_range(pt, vs_load_acquire(&pt->pgd), LEVEL_PGD, start, end,
		   zap_pte_page, &c);
	*nr_tables = c.nr_tables;
	return c.nr;
}

struct visit_ctx {
	int (*fn)(vs_atomic64_t *pte, unsigned long addr, void *arg);
	void *arg;
};

static int visit_pte_page(struct vs_pgtable *pt, vs_atomic64_t *pmdp,
			  unsigned long addr, unsigned long end, void *ctx)
{
	struct visit_ctx *c = ctx;
	struct vs_ptpage *ptp;
	vs_atomic64_t *ptep;
	uint64_t pmd;
	int ret = 0;

	ptp = walk_pte_lock(pt, pmdp, &pmd);
	if (!ptp)
		return 0;
	for (; addr < end && !ret; addr += VS_PAGE_SIZE) {
		ptep = &ptp->entries[vs_pt_index(addr, LEVEL_PTE)];
		if (vs_pte_present(vs_ptep_get(ptep)))
			ret = c->fn(ptep, addr, c->arg);
	}
	vs_spin_unlock(ptlock(pt, ptp));
	return ret;
}

int vs_pgtable_walk(struct vs_pgtable *pt, unsigned long start,
		    unsigned long end,
		    int (*fn)(vs_atomic64_t *pte, unsigned long addr,
			      void *arg),
		    void *arg)
{
	struct visit_ctx c = { fn, arg };

	if (!fn || check_range(&start, &end))
		return -EINVAL;
	return walk_range(pt, vs_load_acquire(&pt->pgd), LEVEL_PGD, start,
			  end, visit_pte_page, &c);
}

size_t vs_pgtable_pages(struct vs_pgtable *pt)
{
	return (size_t)vs_read_once(&pt->nr_pages);
}
