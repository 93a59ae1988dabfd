/* SPDX-License-Identifier: MIT */
/*
 * test/check/checker.c - the invariant checker of the stress run: every
 * present PTE against its VMA, RSS and mapcounts against the PTEs,
 * after every operation; at the end, once quiet, the records each
 * faulter expects against the memory, and every page back in the pool
 * at teardown (internal.h).
 */
#include <string.h>

#include <vmsim/rcu.h>

#include "internal.h"

/* ---- the invariant checker ----------------------------------------------- */

struct walk_ctx {
	struct stress *r;
	struct vs_mm *mm;
	long pages;
};

/*
 * A present PTE must lie in a VMA that allows what it allows, and map a
 * live page of the right kind.  Context: @mm's mmap_lock held, and the
 * PTL of @pte.  Return: 0, or 1 after vs__stress_bug().
 */
static int check_pte(struct stress *r, struct vs_mm *mm, uint64_t pte,
		     unsigned long addr, const char *who)
{
	struct vs_vma *vma = vs_vma_lookup(mm, addr);
	unsigned long fl, pfn = vs_pte_pfn(pte);
	struct vs_page *page = vs_pfn_to_page(mm->pool, pfn);
	const char *bad = NULL;

	if (!vma)
		bad = "outside every VMA";
	else if ((fl = vma->vm_flags, (pte & VS_PTE_WRITE) &&
		  !(fl & VS_VM_WRITE)))
		bad = "writable in a VMA without VM_WRITE";
	else if ((pte & VS_PTE_USER) &&
		 !(fl & (VS_VM_READ | VS_VM_WRITE | VS_VM_EXEC)))
		bad = "user-accessible in a PROT_NONE VMA";
	else if (!page)
		bad = "mapping a pfn outside the pool";
	else if (pfn == 0 && (pte & VS_PTE_WRITE))
		bad = "mapping the zero page writable";
	else if (pfn == 0 && (fl & VS_VM_SHARED))
		bad = "mapping the zero page in a shared VMA";
	else if (pfn && !vs_page_count(page))
		bad = "mapping a free page";
	else if (pfn && (fl & VS_VM_SHARED) &&
		 !vs_page_test_flags(page, VS_PG_FILE))
		bad = "mapping a non-shmem page in a shared VMA";
	else if (pfn && !(fl & VS_VM_SHARED) &&
		 !vs_page_test_flags(page, VS_PG_ANON))
		bad = "mapping a non-anonymous page in a private VMA";
	if (!bad)
		return 0;
	vs__stress_bug(r, "%s PTE "
	    "%#" PRIx64 " at %#lx (page %ld) %s", who, pte, addr,
	    ((long)addr - (long)ARENA) / (long)PG, bad);
	return 1;
}

/* Context: vs_pgtable_walk() on the child, under its PTL. */
static int child_pte(vs_atomic64_t *ptep, unsigned long addr, void *arg)
{
	struct walk_ctx *c = arg;
	uint64_t pte = vs_ptep_get(ptep);

	if (check_pte(c->r, c->mm, pte, addr, "child"))
		return 1;
	if (vs_pte_pfn(pte)) {
		c->r->ccnt[vs_pte_pfn(pte)]++;
		c->pages++;
	}
	return 0;
}

static long rss(struct vs_mm *mm)
{
	return vs_get_mm_counter(mm, VS_MM_ANONPAGES) +
	       vs_get_mm_counter(mm, VS_MM_FILEPAGES) +
	       vs_get_mm_counter(mm, VS_MM_SHMEMPAGES);
}

/* The child's PTEs into ccnt[].  Context: the writer (the child is its). */
static void count_child(struct stress *r)
{
	struct walk_ctx c = { r, r->child, 0 };

	memset(r->ccnt, 0, (POOL + 1) * sizeof(*r->ccnt));
	if (!r->child)
		return;
	vs_mmap_write_lock(r->child);
	if (vs_pgtable_walk(&r->child->pgtable, r->child->start,
			    r->child->end, child_pte, &c) == 0 &&
	    c.pages != rss(r->child))
		vs__stress_bug(r, "child: %ld PTEs map pages, RSS %ld", c.pages,
		    rss(r->child));
	vs_mmap_write_unlock(r->child);
}

/*
 * Count the parent's PTEs into pcnt[], each checked against its VMA,
 * and compare RSS with them.  Context: @mm's mmap_lock for write and
 * the arena's PTL.  Return: 0, or 1 after vs__stress_bug().
 */
static int count_parent(struct stress *r, vs_atomic64_t *pte0)
{
	struct vs_mm *mm = r->mm;
	long pages = 0, anon = 0, shmem = 0;
	unsigned long pfn, i;
	uint64_t pte;

	for (i = 0; i < VS_PTRS_PER_TABLE; i++) {
		pte = vs_ptep_get(&pte0[i]);
		if (vs_pte_none(pte))
			continue;
		if (!vs_pte_present(pte) ||
		    check_pte(r, mm, pte, mm->start + i * PG, "parent"))
			return 1;
		pfn = vs_pte_pfn(pte);
		if (!pfn)
			continue;
		r->pcnt[pfn]++;
		pages++;
		if (vs_page_test_flags(vs_pfn_to_page(mm->pool, pfn),
				       VS_PG_ANON))
			anon++;
		else
			shmem++;
	}
	if (pages == rss(mm) &&
	    anon == vs_get_mm_counter(mm, VS_MM_ANONPAGES) &&
	    shmem == vs_get_mm_counter(mm, VS_MM_SHMEMPAGES))
		return 0;
	vs__stress_bug(r, "%ld PTEs map pages (%ld anon, %ld shmem), RSS %ld "
	    "(anon %ld, shmem %ld, file %ld)", pages, anon, shmem,
	    rss(mm), (long)vs_get_mm_counter(mm, VS_MM_ANONPAGES),
	    (long)vs_get_mm_counter(mm, VS_MM_SHMEMPAGES),
	    (long)vs_get_mm_counter(mm, VS_MM_FILEPAGES));
	return 1;
}

/*
 * Each mapped page's mapcount against the PTEs mapping it (pcnt[] and
 * ccnt[]), a private writable page mapped once, the refcount at least
 * the mapcount (plus the page-cache reference), exactly so if @quiet.
 * Context: as count_parent().
 */
static void check_mapcounts(struct stress *r, vs_atomic64_t *pte0,
			    int quiet)
{
	struct vs_page *page;
	unsigned long pfn, i;
	uint32_t mc, rc;
	uint64_t pte;
	long want;

	for (i = 0; i < VS_PTRS_PER_TABLE; i++) {
		pte = vs_ptep_get(&pte0[i]);
		pfn = vs_pte_pfn(pte);
		if (!vs_pte_present(pte) || !pfn)
			continue;
		page = vs_pfn_to_page(r->mm->pool, pfn);
		mc = vs_page_mapcount(page);
		rc = vs_page_count(page);
		want = vs_page_test_flags(page, VS_PG_FILE) ? mc + 1 : mc;
		if (mc != (uint32_t)r->pcnt[pfn] + r->ccnt[pfn] ||
		    (vs_pte_write(pte) && !vs_page_test_flags(page,
							     VS_PG_FILE) &&
		     mc != 1) ||
		    rc < want || (quiet && rc != want)) {
			vs__stress_bug(r, "page %ld (pfn %lu, PTE "
			    "%#" PRIx64 "): "
			    "mapcount %u, refcount %u; %u PTEs map it "
			    "here, %u in the child", (long)i - 64, pfn, pte,
			    mc, rc, r->pcnt[pfn], r->ccnt[pfn]);
			return;
		}
	}
}

/*
 * check_mm - every present PTE of the mm against its VMA, RSS against
 * the PTEs, each page's mapcount against the PTEs mapping it (the
 * child's too); @quiet (no fault in flight): refcounts exactly.
 *
 * The mm spans one PTE page, so its PTL, with the mmap_lock for write,
 * freezes every PTE and RSS counter: faults of every strategy change
 * them only under it.  Context: the writer.
 */
void vs__stress_check_mm(struct stress *r, int quiet)
{
	struct vs_mm *mm = r->mm;
	vs_atomic64_t *pte0;
	vs_spinlock_t *ptl;
	long n;

	vs__stress_doing(&r->writer_w, DO_CHECK, 0, NP);
	r->checks++;
	count_child(r);
	memset(r->pcnt, 0, (POOL + 1) * sizeof(*r->pcnt));
	if (quiet)	/* the LRU batches' references, for exact counts */
		vs_lru_drain_all(mm->pool);
	vs_mmap_write_lock(mm);
	pte0 = vs_pte_offset_map_lock(&mm->pgtable, mm->start, &ptl);
	/*
	 * No table yet: a per-VMA fault, which the mmap_lock does not stop,
	 * may be installing it, a PTE and its RSS count right now.  A
	 * count seen means the table was there before it (populated with
	 * a full barrier, the count added after the PTE), and only the
	 * writer, which is us, removes tables: look once more, and only
	 * then is no table a bug.  (Not a count read after that second
	 * look: a fault may have made the table and counted its page in
	 * between, as exploration found.)
	 */
	if (!pte0 && (n = rss(mm)) != 0) {
		pte0 = vs_pte_offset_map_lock(&mm->pgtable, mm->start, &ptl);
		if (!pte0)
			vs__stress_bug(r, "no page table, RSS %ld", n);
	}
	if (!pte0) {
		vs_mmap_write_unlock(mm);
		return;
	}
	if (!count_parent(r, pte0))
		check_mapcounts(r, pte0, quiet);
	vs_pte_unmap_unlock(ptl);
	vs_mmap_write_unlock(mm);
}
/* The records each faulter expects, against the memory, once quiet. */
void vs__stress_final_data(struct stress *r)
{
	struct faulter *f;
	struct rec v;
	int i, p, err;

	for (p = 0; p < NP; p++) {
		if ((r->cur[p] & (SH_MAPPED | SH_READ)) != SH_MAPPED)
			continue;
		err = vs_mprotect(r->mm, pg_addr(p), PG, VS_PROT_READ);
		if (err) {
			vs__stress_bug(r, "at the end: mprotect(page %d, READ) "
			    "returned "
			    "%d", p, err);
			return;
		}
	}
	for (i = 0; i < NF; i++) {
		f = &r->f[i];
		vs__stress_catch_up(f, r->nops);
		for (p = 0; p < NP; p++) {
			if (!f->valid[p] || !(r->cur[p] & SH_MAPPED) ||
			    (r->cur[p] & SH_EOF))
				continue;
			err = vs_read(r->mm, pg_addr(p) + 512 + 64 * i, &v,
				      sizeof(v));
			if (err || !rec_eq(&v, &f->exp[p])) {
				vs__stress_bug(r, "at the end: faulter %d page "
				    "%d read "
				    "%d {%#x %u %" PRIu64 "}, expected {%#x "
				    "%u %" PRIu64 "}", i, p, err, v.tag,
				    v.page, v.count, f->exp[p].tag,
				    f->exp[p].page, f->exp[p].count);
				return;
			}
			f->data_checks++;
		}
	}
}

static int pt_count(vs_atomic64_t *ptep, unsigned long addr, void *arg)
{
	(void)ptep;
	(void)addr;
	++*(long *)arg;
	return 0;
}

/* Teardown: everything back in the pool while the mm exists. */
void vs__stress_check_teardown(struct stress *r)
{
	struct vs_mm *mm = r->mm;
	long ptes = 0;
	int err;

	err = vs_munmap(mm, ARENA - PG, (NP + 2) * PG);
	if (err) {
		vs__stress_bug(r, "at teardown: munmap returned %d", err);
		return;
	}
	vs_rcu_barrier();
	vs_mmap_read_lock(mm);
	err = vs_pgtable_walk(&mm->pgtable, mm->start, mm->end, pt_count,
			      &ptes);
	vs_mmap_read_unlock(mm);
	if (err || ptes || rss(mm))
		vs__stress_bug(r, "at teardown: %ld PTEs, RSS %ld after munmap "
		    "(walk "
		    "%d)", ptes, rss(mm), err);
	else if ((vs_lru_drain_all(mm->pool),	/* the batches' references */
		  vs_page_pool_free_pages(mm->pool)) !=
		 vs_page_pool_size(mm->pool))
		vs__stress_bug(r, "at teardown: %zu of %zu pages free after "
		    "munmap",
		    vs_page_pool_free_pages(mm->pool),
		    vs_page_pool_size(mm->pool));
}
