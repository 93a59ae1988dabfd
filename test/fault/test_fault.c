/* SPDX-License-Identifier: MIT */
/*
 * Tests for vmsim/fault.h: the page fault and the simulated CPU, one
 * thread at a time.  Each behavioural test runs once per strategy
 * (locked, spf, pervma: the loop index is the strategy) and checks the
 * PTE, the page's counts and flags, the RSS and the bytes seen through
 * vs_read; the counter tests check which path each fault took.  Every
 * test ends with vs_mm_destroy() == 0: all pages back in the pool.
 */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/error.h>
#include <vmsim/fault.h>
#include <vmsim/file.h>
#include <vmsim/memory.h>
#include <vmsim/mm.h>
#include <vmsim/rcu.h>
#include <vmsim/thread.h>

#include "test.h"

#define PG VS_PAGE_SIZE
#define POOL 512
#define RW (VS_PROT_READ | VS_PROT_WRITE)
#define ANON (VS_MAP_PRIVATE | VS_MAP_ANONYMOUS)
#define SHANON (VS_MAP_SHARED | VS_MAP_ANONYMOUS)
#define A0 0x100000000UL /* a fixed spot well inside the default range */

/* Fault flags, as the simulated CPU raises them. */
#define U VS_FAULT_FLAG_USER
#define UW (VS_FAULT_FLAG_USER | VS_FAULT_FLAG_WRITE)
#define UX (VS_FAULT_FLAG_USER | VS_FAULT_FLAG_INSTRUCTION)
#define NF VS_FAULT_FLAG_NO_FALLBACK

static const char zeroes[PG];

/* ---- helpers ------------------------------------------------------------- */

/*
 * The kernel a case of @strategy runs at: $VMSIM_KERNEL's, but for
 * pervma on one without a per-VMA lock (3.18), where 6.4's stands in
 * (pervma_unsupported tests the refusal).
 */
static const char *kernel_for(int strategy)
{
	struct vs_kernel k;

	if (strategy != VS_FAULT_PERVMA)
		return NULL;
	ck_assert_int_eq(vs_kernel_load(&k, NULL, NULL, 0), 0);
	return k.mech.vma_lock == VS_VMA_LOCK_NONE ? "6.4" : NULL;
}

static struct vs_mm *mm_new_kernel(int strategy, size_t pages,
				   const char *kernel)
{
	struct vs_mm_options o = { .pool_pages = pages, .kernel = kernel };
	struct vs_mm *mm = NULL;

	ck_assert_int_eq(vs_thread_attach(), 0);
	ck_assert_int_eq(vs_mm_create(&mm, &o), 0);
	ck_assert_int_eq(vs_mm_set_fault_strategy(mm, strategy), 0);
	ck_assert_int_eq(vs_mm_fault_strategy(mm), strategy);
	return mm;
}

static struct vs_mm *mm_new_pool(int strategy, size_t pages)
{
	return mm_new_kernel(strategy, pages, kernel_for(strategy));
}

static struct vs_mm *mm_new(int strategy)
{
	return mm_new_pool(strategy, POOL);
}

/* Every page back in the pool: vs_mm_destroy() fails (-EBUSY) else. */
static void mm_done(struct vs_mm *mm)
{
	ck_assert_int_eq(vs_mm_destroy(mm), 0);
}

static void map(struct vs_mm *mm, unsigned long a, unsigned long pages,
		int prot, int flags, struct vs_file *f, off_t off)
{
	ck_assert_int_eq(vs_mmap(mm, a, pages * PG, prot, flags | VS_MAP_FIXED,
				 f, off), (long)a);
}

/* The PTE of @addr (0 when no table), read under mmap_lock. */
static uint64_t pte_at(struct vs_mm *mm, unsigned long addr)
{
	vs_atomic64_t *ptep;
	uint64_t v = 0;

	vs_mmap_read_lock(mm);
	ptep = vs_pte_offset(&mm->pgtable, addr);
	if (ptep)
		v = vs_ptep_get_lockless(ptep);
	vs_mmap_read_unlock(mm);
	return v;
}

/* The page a present PTE maps. */
static struct vs_page *page_at(struct vs_mm *mm, unsigned long addr)
{
	uint64_t v = pte_at(mm, addr);
	struct vs_page *page;

	ck_assert_msg(vs_pte_present(v), "no PTE at %lx", addr);
	page = vs_pfn_to_page(mm->pool, vs_pte_pfn(v));
	ck_assert_ptr_nonnull(page);
	return page;
}

static unsigned long pfn_at(struct vs_mm *mm, unsigned long addr)
{
	return vs_page_to_pfn(mm->pool, page_at(mm, addr));
}

/* The anon_vma of the VMA containing @addr. */
static void *anon_vma_of(struct vs_mm *mm, unsigned long addr)
{
	struct vs_vma *v;
	void *av = NULL;

	vs_mmap_read_lock(mm);
	v = vs_vma_lookup(mm, addr);
	if (v)
		av = vs_load_acquire(&v->anon_vma);
	vs_mmap_read_unlock(mm);
	ck_assert_ptr_nonnull(v);
	return av;
}

static long rss_anon(struct vs_mm *mm)
{
	return vs_get_mm_counter(mm, VS_MM_ANONPAGES);
}

static long rss_file(struct vs_mm *mm)
{
	return vs_get_mm_counter(mm, VS_MM_FILEPAGES);
}

static long rss_all(struct vs_mm *mm)
{
	return vs_get_mm_counter(mm, VS_MM_ANONPAGES) + vs_get_mm_counter(mm, VS_MM_FILEPAGES) +
	       vs_get_mm_counter(mm, VS_MM_SHMEMPAGES);
}

/* Free pages once the LRU batches have dropped their references. */
static size_t free_pages(struct vs_mm *mm)
{
	vs_lru_drain_all(mm->pool);
	return vs_page_pool_free_pages(mm->pool);
}

/* The string at @addr is @want (its NUL included). */
static void expect_str(struct vs_mm *mm, unsigned long addr,
		       const char *want)
{
	char buf[64];
	size_t n = strlen(want) + 1;

	ck_assert_uint_lt(n, sizeof(buf));
	ck_assert_int_eq(vs_read(mm, addr, buf, n), 0);
	ck_assert_str_eq(buf, want);
}

static void put_str(struct vs_mm *mm, unsigned long addr, const char *s)
{
	ck_assert_int_eq(vs_write(mm, addr, s, strlen(s) + 1), 0);
}

/* The whole page at @addr reads as zeroes. */
static void expect_zero_page(struct vs_mm *mm, unsigned long addr)
{
	static char buf[PG];

	memset(buf, 0xa5, sizeof(buf));
	ck_assert_int_eq(vs_read(mm, addr, buf, PG), 0);
	ck_assert_mem_eq(buf, zeroes, PG);
}

static struct vs_fault_stats stats(void)
{
	struct vs_fault_stats s;

	ck_assert_int_eq(vs_fault_stats_get(&s), 0);
	return s;
}

static unsigned long spf_aborts(const struct vs_fault_stats *s)
{
	unsigned long n = 0;
	int i;

	for (i = 0; i < VS_SPF_ABORT_NR; i++)
		n += s->spf_abort[i];
	return n;
}

/* Every abort count but @reason (-1: all of them) is zero. */
static void expect_only_abort(const struct vs_fault_stats *s, int reason)
{
	int i;

	for (i = 0; i < VS_SPF_ABORT_NR; i++)
		if (i != reason)
			ck_assert_msg(s->spf_abort[i] == 0,
				      "spf_abort[%s] = %lu",
				      vs_spf_abort_name(i), s->spf_abort[i]);
}

/*
 * The accounting rule of vm/internal.h, over every mm that shares a
 * pool: each mm's RSS is its present PTEs that map a page other than
 * the zero page; each page's mapcount is the PTEs that map it, its
 * refcount that plus one for a page-cache page; a page nobody maps is
 * free or held by a page cache only.
 */
struct acct {
	struct vs_mm *mm;
	unsigned int *maps;	/* per pfn */
	size_t nr;		/* pfns 1..nr are pages */
	long pages;
	int bad;
};

/* Context: called by vs_pgtable_walk() under the PTL: no ck_assert. */
static int acct_pte(vs_atomic64_t *ptep, unsigned long addr, void *arg)
{
	struct acct *a = arg;
	unsigned long pfn = vs_pte_pfn(vs_ptep_get(ptep));

	(void)addr;
	if (pfn == 0)
		return 0;
	if (pfn > a->nr) {
		a->bad = 1;
		return 1;
	}
	a->maps[pfn]++;
	a->pages++;
	return 0;
}

static void check_accounting(struct vs_mm **mms, int n)
{
	struct acct a = { 0 };
	struct vs_page *page;
	unsigned long pfn;
	uint32_t cache;
	int i;

	vs_rcu_barrier(); /* RCU-deferred file puts, if any */
	a.nr = vs_page_pool_size(mms[0]->pool);
	a.maps = calloc(a.nr + 1, sizeof(*a.maps));
	ck_assert_ptr_nonnull(a.maps);
	for (i = 0; i < n; i++) {
		ck_assert_ptr_eq(mms[i]->pool, mms[0]->pool);
		a.mm = mms[i];
		a.pages = 0;
		vs_mmap_read_lock(mms[i]);
		ck_assert_int_eq(vs_pgtable_walk(&mms[i]->pgtable,
						 mms[i]->start, mms[i]->end,
						 acct_pte, &a), 0);
		vs_mmap_read_unlock(mms[i]);
		ck_assert_int_eq(a.bad, 0);
		ck_assert_int_eq(rss_all(mms[i]), a.pages);
	}
	vs_lru_drain_all(mms[0]->pool);	/* the LRU batches' references */
	for (pfn = 1; pfn <= a.nr; pfn++) {
		page = vs_pfn_to_page(mms[0]->pool, pfn);
		if (!a.maps[pfn]) {
			ck_assert_uint_eq(vs_page_mapcount(page), 0);
			ck_assert_msg(vs_page_count(page) == 0 ||
				      (vs_page_test_flags(page, VS_PG_FILE) &&
				       vs_page_count(page) == 1),
				      "pfn %lu: unmapped, refcount %u", pfn,
				      vs_page_count(page));
			continue;
		}
		cache = vs_page_test_flags(page, VS_PG_FILE) ? 1 : 0;
		ck_assert_msg(vs_page_mapcount(page) == a.maps[pfn],
			      "pfn %lu: mapcount %u, %u PTEs", pfn,
			      vs_page_mapcount(page), a.maps[pfn]);
		ck_assert_msg(vs_page_count(page) == a.maps[pfn] + cache,
			      "pfn %lu: refcount %u, %u PTEs%s", pfn,
			      vs_page_count(page), a.maps[pfn],
			      cache ? " + cache" : "");
		ck_assert(vs_page_test_flags(page, VS_PG_ANON) != (cache != 0));
	}
	free(a.maps);
}

static void check_mm(struct vs_mm *mm)
{
	check_accounting(&mm, 1);
}

/* ---- arguments and names ------------------------------------------------- */

START_TEST(fault_bad_args)
{
	struct vs_mm *mm = mm_new(VS_FAULT_LOCKED);
	int i;

	map(mm, A0, 1, RW, ANON, NULL, 0);
	ck_assert_int_eq(vs_get_mm_counter(NULL, VS_MM_ANONPAGES), -EINVAL);
	ck_assert_int_eq(vs_get_mm_counter(mm, -1), -EINVAL);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_NR_MM_COUNTERS), -EINVAL);
	ck_assert_int_eq(vs_add_mm_counter(NULL, VS_MM_ANONPAGES, 1), -EINVAL);
	ck_assert_int_eq(vs_add_mm_counter(mm, VS_NR_MM_COUNTERS, 1), -EINVAL);
	ck_assert_int_eq(vs_mm_counter(NULL), -EINVAL);
	ck_assert_int_eq(vs_handle_mm_fault(NULL, A0, U), -EINVAL);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, U | 0x2), -EINVAL);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, UW | 0x80000000u),
			 -EINVAL);
	ck_assert_int_eq(vs_handle_mm_fault_as(NULL, A0, U, VS_FAULT_LOCKED),
			 -EINVAL);
	ck_assert_int_eq(vs_handle_mm_fault_as(mm, A0, U, -1), -EINVAL);
	ck_assert_int_eq(vs_handle_mm_fault_as(mm, A0, U,
					       VS_FAULT_NR_STRATEGIES),
			 -EINVAL);
	ck_assert_int_eq(vs_handle_mm_fault_as(mm, A0, UW | 0x20,
					       VS_FAULT_SPF), -EINVAL);
	/* The mode bits are the strategies' own. */
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0,
					    U | VS_FAULT_FLAG_SPECULATIVE),
			 -EINVAL);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0,
					    U | VS_FAULT_FLAG_VMA_LOCK),
			 -EINVAL);
	/* Refused calls fault nothing in. */
	ck_assert_uint_eq(pte_at(mm, A0), 0);
	ck_assert_int_eq(vs_mm_set_fault_strategy(NULL, VS_FAULT_SPF),
			 -EINVAL);
	ck_assert_int_eq(vs_mm_set_fault_strategy(mm, -1), -EINVAL);
	ck_assert_int_eq(vs_mm_set_fault_strategy(mm, VS_FAULT_NR_STRATEGIES),
			 -EINVAL);
	ck_assert_int_eq(vs_mm_fault_strategy(mm), VS_FAULT_LOCKED);
	ck_assert_int_eq(vs_mm_fault_strategy(NULL), VS_FAULT_LOCKED);
	for (i = VS_FAULT_NR_STRATEGIES - 1; i >= 0; i--) {
		if (i == VS_FAULT_PERVMA &&
		    mm->mech.vma_lock == VS_VMA_LOCK_NONE) {
			ck_assert_int_eq(vs_mm_set_fault_strategy(mm, i),
					 -EOPNOTSUPP);
			continue;
		}
		ck_assert_int_eq(vs_mm_set_fault_strategy(mm, i), 0);
		ck_assert_int_eq(vs_mm_fault_strategy(mm), i);
	}
	ck_assert_int_eq(vs_fault_stats_get(NULL), -EINVAL);
	/* Every known flag alone is valid (0: a kernel-mode read). */
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, 0), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, NF), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, VS_FAULT_FLAG_WRITE), 0);
	ck_assert(vs_pte_write(pte_at(mm, A0)));
	mm_done(mm);
}
END_TEST

START_TEST(fault_names)
{
	static const char *const aborts[VS_SPF_ABORT_NR] = {
		[VS_SPF_ABORT_NO_VMA] = "no_vma",
		[VS_SPF_ABORT_VMA_WRITE] = "vma_write",
		[VS_SPF_ABORT_SEQ_ODD] = "seq_odd",
		[VS_SPF_ABORT_SEQ_CHANGED] = "seq_changed",
		[VS_SPF_ABORT_SEQ_PTL] = "seq_ptl",
		[VS_SPF_ABORT_NO_TABLE] = "no_table",
		[VS_SPF_ABORT_PTE_CHANGED] = "pte_changed",
		[VS_SPF_ABORT_ANON_VMA] = "anon_vma",
		[VS_SPF_ABORT_NOMEM] = "nomem",
	};
	int i;

	ck_assert_int_eq(vs_fault_strategy_parse("locked"), VS_FAULT_LOCKED);
	ck_assert_int_eq(vs_fault_strategy_parse("spf"), VS_FAULT_SPF);
	ck_assert_int_eq(vs_fault_strategy_parse("pervma"), VS_FAULT_PERVMA);
	ck_assert_int_eq(vs_fault_strategy_parse("bogus"), -EINVAL);
	ck_assert_int_eq(vs_fault_strategy_parse(""), -EINVAL);
	ck_assert_int_eq(vs_fault_strategy_parse("spff"), -EINVAL);
	ck_assert_int_eq(vs_fault_strategy_parse(NULL), -EINVAL);
	ck_assert_str_eq(vs_fault_strategy_name(VS_FAULT_LOCKED), "locked");
	ck_assert_str_eq(vs_fault_strategy_name(VS_FAULT_SPF), "spf");
	ck_assert_str_eq(vs_fault_strategy_name(VS_FAULT_PERVMA), "pervma");
	ck_assert_ptr_null(vs_fault_strategy_name(-1));
	ck_assert_ptr_null(vs_fault_strategy_name(VS_FAULT_NR_STRATEGIES));
	for (i = 0; i < VS_FAULT_NR_STRATEGIES; i++)
		ck_assert_int_eq(vs_fault_strategy_parse(
					 vs_fault_strategy_name(i)), i);
	for (i = 0; i < VS_SPF_ABORT_NR; i++) {
		ck_assert_ptr_nonnull(vs_spf_abort_name(i));
		ck_assert_str_eq(vs_spf_abort_name(i), aborts[i]);
	}
	ck_assert_ptr_null(vs_spf_abort_name(VS_SPF_ABORT_NR));
	ck_assert_ptr_null(vs_spf_abort_name(-1));
}
END_TEST

START_TEST(access_bad_args)
{
	struct vs_mm *mm = mm_new(VS_FAULT_LOCKED);
	unsigned long wrap = ULONG_MAX - 10;
	char buf[128] = "x";
	struct vs_fault_stats s;

	map(mm, A0, 1, RW, ANON, NULL, 0);
	vs_fault_stats_reset();
	ck_assert_int_eq(vs_access(NULL, A0, 1, 0), -EINVAL);
	ck_assert_int_eq(vs_read(NULL, A0, buf, 1), -EINVAL);
	ck_assert_int_eq(vs_write(NULL, A0, buf, 1), -EINVAL);
	ck_assert_int_eq(vs_read(mm, A0, NULL, 1), -EINVAL);
	ck_assert_int_eq(vs_write(mm, A0, NULL, 1), -EINVAL);
	ck_assert_int_eq(vs_access(mm, wrap, 100, 0), -EINVAL);
	ck_assert_int_eq(vs_access(mm, wrap, 100, 1), -EINVAL);
	ck_assert_int_eq(vs_read(mm, wrap, buf, 100), -EINVAL);
	ck_assert_int_eq(vs_write(mm, wrap, buf, 100), -EINVAL);
	/* Length 0 touches nothing, mapped or not. */
	ck_assert_int_eq(vs_access(mm, A0, 0, 1), 0);
	ck_assert_int_eq(vs_access(mm, A0 + 4 * PG, 0, 0), 0);
	ck_assert_int_eq(vs_read(mm, A0 + 4 * PG, buf, 0), 0);
	ck_assert_int_eq(vs_read(mm, A0, NULL, 0), 0);
	ck_assert_int_eq(vs_write(mm, A0, NULL, 0), 0);
	ck_assert_int_eq(vs_write(mm, A0, buf, 0), 0);
	s = stats();
	ck_assert_uint_eq(s.faults, 0);
	ck_assert_uint_eq(pte_at(mm, A0), 0);
	ck_assert_int_eq(rss_all(mm), 0);
	mm_done(mm);
}
END_TEST

/* The simulated CPU sets ACCESSED and DIRTY on a hit, with no fault. */
START_TEST(access_sets_young_dirty)
{
	struct vs_mm *mm = mm_new(VS_FAULT_LOCKED);
	vs_atomic64_t *ptep;
	vs_spinlock_t *ptl;
	char c = 0;
	int round;

	map(mm, A0, 1, RW, ANON, NULL, 0);
	put_str(mm, A0, "x");
	for (round = 0; round < 2; round++) {
		/* Age and clean the PTE, as reclaim would. */
		vs_mmap_read_lock(mm);
		ptep = vs_pte_offset_map_lock(&mm->pgtable, A0, &ptl);
		ck_assert_ptr_nonnull(ptep);
		vs_set_pte(ptep, vs_pte_mkold(vs_pte_mkclean(
					 vs_ptep_get(ptep))));
		vs_pte_unmap_unlock(ptl);
		vs_mmap_read_unlock(mm);
		ck_assert(!vs_pte_young(pte_at(mm, A0)));
		vs_fault_stats_reset();
		if (round == 0)
			ck_assert_int_eq(vs_access(mm, A0, 1, 0), 0);
		else
			ck_assert_int_eq(vs_read(mm, A0, &c, 1), 0);
		ck_assert(vs_pte_young(pte_at(mm, A0)));
		ck_assert(!vs_pte_dirty(pte_at(mm, A0)));
		if (round == 0)
			ck_assert_int_eq(vs_access(mm, A0, 1, 1), 0);
		else
			ck_assert_int_eq(vs_write(mm, A0, &c, 1), 0);
		ck_assert(vs_pte_dirty(pte_at(mm, A0)));
		ck_assert(vs_pte_write(pte_at(mm, A0)));
		ck_assert_uint_eq(stats().faults, 0);
	}
	ck_assert_int_eq(c, 'x');
	mm_done(mm);
}
END_TEST

/* ---- anonymous memory (each strategy) ------------------------------------ */

START_TEST(anon_read_maps_zero_page)
{
	struct vs_mm *mm = mm_new(_i);
	struct vs_page *zero = vs_zero_page(mm->pool);
	uint32_t zcount = vs_page_count(zero);
	size_t free0 = free_pages(mm);
	uint64_t v;

	ck_assert_uint_eq(vs_page_to_pfn(mm->pool, zero), 0);
	map(mm, A0, 2, RW, ANON, NULL, 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 123, U), 0);
	v = pte_at(mm, A0);
	ck_assert(vs_pte_present(v));
	ck_assert(v & VS_PTE_USER);
	ck_assert(!vs_pte_write(v));
	ck_assert_uint_eq(vs_pte_pfn(v), 0);
	/* The zero page is held by nothing and counted nowhere. */
	ck_assert_uint_eq(vs_page_count(zero), zcount);
	ck_assert_uint_eq(vs_page_mapcount(zero), 0);
	ck_assert_int_eq(rss_all(mm), 0);
	ck_assert_uint_eq(free_pages(mm), free0);
	/* One page only. */
	ck_assert_uint_eq(pte_at(mm, A0 + PG), 0);
	expect_zero_page(mm, A0);
	expect_zero_page(mm, A0 + PG);
	ck_assert_uint_eq(vs_pte_pfn(pte_at(mm, A0 + PG)), 0);
	ck_assert_int_eq(rss_all(mm), 0);
	check_mm(mm);
	mm_done(mm);
}
END_TEST

START_TEST(anon_write_new_page)
{
	struct vs_mm *mm = mm_new(_i);
	static char junk[PG];
	struct vs_page *page;
	size_t free0;
	uint64_t v;

	map(mm, A0, 1, RW, ANON, NULL, 0);
	/* Leave a dirty frame in the allocator: the fault may get it. */
	map(mm, A0 + 8 * PG, 1, RW, ANON, NULL, 0);
	memset(junk, 0x5a, sizeof(junk));
	ck_assert_int_eq(vs_write(mm, A0 + 8 * PG, junk, PG), 0);
	ck_assert_int_eq(vs_munmap(mm, A0 + 8 * PG, PG), 0);
	free0 = free_pages(mm);

	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, UW), 0);
	v = pte_at(mm, A0);
	ck_assert(vs_pte_present(v));
	ck_assert(v & VS_PTE_USER);
	ck_assert(vs_pte_write(v));
	ck_assert(vs_pte_dirty(v));
	ck_assert_uint_ne(vs_pte_pfn(v), 0);
	page = page_at(mm, A0);
	vs_lru_drain_all(mm->pool);	/* the LRU batch's reference */
	ck_assert_uint_eq(vs_page_count(page), 1);
	ck_assert_uint_eq(vs_page_mapcount(page), 1);
	ck_assert(vs_page_test_flags(page, VS_PG_ANON));
	ck_assert(!vs_page_test_flags(page, VS_PG_FILE | VS_PG_ZERO));
	ck_assert_ptr_nonnull(page->mapping);
	ck_assert_ptr_eq(page->mapping, anon_vma_of(mm, A0));
	ck_assert_mem_eq(page->data, zeroes, PG);
	ck_assert_int_eq(rss_anon(mm), 1);
	ck_assert_int_eq(rss_all(mm), 1);
	ck_assert_uint_eq(free_pages(mm), free0 - 1);
	expect_zero_page(mm, A0);
	check_mm(mm);
	mm_done(mm);
}
END_TEST

START_TEST(anon_write_after_read)
{
	struct vs_mm *mm = mm_new(_i);
	struct vs_page *zero = vs_zero_page(mm->pool);
	uint32_t zcount = vs_page_count(zero);
	struct vs_page *page;

	map(mm, A0, 2, RW, ANON, NULL, 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, U), 0);
	ck_assert_uint_eq(vs_pte_pfn(pte_at(mm, A0)), 0);
	ck_assert_int_eq(rss_anon(mm), 0);
	/* Writing the zero page copies it (do_wp_page -> wp_page_copy). */
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, UW), 0);
	ck_assert_uint_ne(vs_pte_pfn(pte_at(mm, A0)), 0);
	ck_assert(vs_pte_write(pte_at(mm, A0)));
	ck_assert(vs_pte_dirty(pte_at(mm, A0)));
	page = page_at(mm, A0);
	vs_lru_drain_all(mm->pool);	/* the LRU batch's reference */
	ck_assert_uint_eq(vs_page_count(page), 1);
	ck_assert_uint_eq(vs_page_mapcount(page), 1);
	ck_assert(vs_page_test_flags(page, VS_PG_ANON));
	ck_assert_int_eq(rss_anon(mm), 1);
	ck_assert_uint_eq(vs_page_count(zero), zcount);
	expect_zero_page(mm, A0);
	/* The same through the simulated CPU. */
	ck_assert_int_eq(vs_access(mm, A0 + PG, 1, 0), 0);
	ck_assert_uint_eq(vs_pte_pfn(pte_at(mm, A0 + PG)), 0);
	ck_assert_int_eq(rss_anon(mm), 1);
	ck_assert_int_eq(vs_access(mm, A0 + PG, 1, 1), 0);
	ck_assert_uint_ne(vs_pte_pfn(pte_at(mm, A0 + PG)), 0);
	ck_assert_uint_ne(pfn_at(mm, A0 + PG), pfn_at(mm, A0));
	ck_assert_int_eq(rss_anon(mm), 2);
	check_mm(mm);
	mm_done(mm);
}
END_TEST

/* A fault the PTE already allows changes nothing. */
START_TEST(fault_spurious)
{
	struct vs_mm *mm = mm_new(_i);
	unsigned long pfn;
	size_t free0;

	map(mm, A0, 2, RW, ANON, NULL, 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, UW), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + PG, U), 0);
	pfn = pfn_at(mm, A0);
	free0 = free_pages(mm);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, UW), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 8, U), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + PG, U), 0);
	ck_assert_uint_eq(pfn_at(mm, A0), pfn);
	vs_lru_drain_all(mm->pool);	/* the LRU batch's reference */
	ck_assert_uint_eq(vs_page_count(page_at(mm, A0)), 1);
	ck_assert_uint_eq(vs_page_mapcount(page_at(mm, A0)), 1);
	ck_assert_uint_eq(vs_pte_pfn(pte_at(mm, A0 + PG)), 0);
	ck_assert(!vs_pte_write(pte_at(mm, A0 + PG)));
	ck_assert_uint_eq(free_pages(mm), free0);
	ck_assert_int_eq(rss_anon(mm), 1);
	check_mm(mm);
	mm_done(mm);
}
END_TEST

/* ---- copy-on-write (each strategy) --------------------------------------- */

START_TEST(cow_after_fork)
{
	struct vs_mm *mm = mm_new(_i), *child, *both[2];
	struct vs_page *old, *new;

	map(mm, A0, 2, RW, ANON, NULL, 0);
	put_str(mm, A0, "parent-1");
	old = page_at(mm, A0);
	ck_assert_int_eq(vs_access(mm, A0 + PG, 1, 0), 0); /* zero page */
	ck_assert_int_eq(vs_fork(mm, &child), 0);
	ck_assert_int_eq(vs_mm_set_fault_strategy(child, _i), 0);
	both[0] = mm;
	both[1] = child;
	/* Shared and write-protected in both. */
	ck_assert_ptr_eq(page_at(child, A0), old);
	ck_assert(!vs_pte_write(pte_at(mm, A0)));
	ck_assert(!vs_pte_write(pte_at(child, A0)));
	vs_lru_drain_all(mm->pool);	/* the LRU batch's reference */
	ck_assert_uint_eq(vs_page_count(old), 2);
	ck_assert_uint_eq(vs_page_mapcount(old), 2);
	ck_assert_uint_eq(vs_pte_pfn(pte_at(child, A0 + PG)), 0);
	ck_assert_int_eq(rss_anon(mm), 1);
	ck_assert_int_eq(rss_anon(child), 1);

	/* The parent's write copies. */
	put_str(mm, A0, "parent-2");
	new = page_at(mm, A0);
	ck_assert_ptr_ne(new, old);
	ck_assert(vs_pte_write(pte_at(mm, A0)));
	ck_assert(vs_pte_dirty(pte_at(mm, A0)));
	ck_assert(vs_page_test_flags(new, VS_PG_ANON));
	vs_lru_drain_all(mm->pool);	/* the LRU batch's reference */
	ck_assert_uint_eq(vs_page_count(new), 1);
	ck_assert_uint_eq(vs_page_mapcount(new), 1);
	ck_assert_uint_eq(vs_page_count(old), 1);
	ck_assert_uint_eq(vs_page_mapcount(old), 1);
	ck_assert_ptr_eq(page_at(child, A0), old);
	expect_str(mm, A0, "parent-2");
	expect_str(child, A0, "parent-1");
	ck_assert_int_eq(rss_anon(mm), 1);
	ck_assert_int_eq(rss_anon(child), 1);

	/* The child's page is mapped once now: its write reuses it. */
	put_str(child, A0, "child-1");
	ck_assert_ptr_eq(page_at(child, A0), old);
	ck_assert(vs_pte_write(pte_at(child, A0)));
	expect_str(child, A0, "child-1");
	expect_str(mm, A0, "parent-2");

	/* A zero-page PTE copied by fork: the child's write leaves the
	 * parent's alone. */
	put_str(child, A0 + PG, "z");
	ck_assert_uint_ne(pfn_at(child, A0 + PG), 0);
	ck_assert_uint_eq(vs_pte_pfn(pte_at(mm, A0 + PG)), 0);
	expect_zero_page(mm, A0 + PG);
	ck_assert_int_eq(rss_anon(child), 2);
	ck_assert_int_eq(rss_anon(mm), 1);
	check_accounting(both, 2);
	mm_done(child);
	mm_done(mm);
}
END_TEST

/* Fork write-protected the PTE; the child is gone: reuse, not copy. */
START_TEST(cow_reuse_after_child_exit)
{
	struct vs_mm *mm = mm_new(_i), *child;
	struct vs_page *page;
	size_t free0;

	map(mm, A0, 1, RW, ANON, NULL, 0);
	put_str(mm, A0, "keep");
	page = page_at(mm, A0);
	ck_assert_int_eq(vs_fork(mm, &child), 0);
	ck_assert_uint_eq(vs_page_mapcount(page), 2);
	mm_done(child);
	ck_assert(!vs_pte_write(pte_at(mm, A0)));
	vs_lru_drain_all(mm->pool);	/* the LRU batch's reference */
	ck_assert_uint_eq(vs_page_count(page), 1);
	ck_assert_uint_eq(vs_page_mapcount(page), 1);
	free0 = free_pages(mm);
	put_str(mm, A0 + 8, "x");
	ck_assert_ptr_eq(page_at(mm, A0), page);
	ck_assert(vs_pte_write(pte_at(mm, A0)));
	ck_assert(vs_pte_dirty(pte_at(mm, A0)));
	ck_assert_uint_eq(free_pages(mm), free0);
	vs_lru_drain_all(mm->pool);	/* the LRU batch's reference */
	ck_assert_uint_eq(vs_page_count(page), 1);
	expect_str(mm, A0, "keep");
	expect_str(mm, A0 + 8, "x");
	ck_assert_int_eq(rss_anon(mm), 1);
	check_mm(mm);
	mm_done(mm);
}
END_TEST

/* ---- files (each strategy) ----------------------------------------------- */

START_TEST(file_shared_write)
{
	struct vs_mm *mm = mm_new(_i);
	unsigned long m1 = A0, m2 = A0 + 16 * PG;
	struct vs_page *p0, *p1, *cp;
	struct vs_file *f;

	ck_assert_int_eq(vs_file_create(&f, mm->pool, 2 * PG, O_RDWR), 0);
	map(mm, m1, 2, RW, VS_MAP_SHARED, f, 0);
	map(mm, m2, 2, RW, VS_MAP_SHARED, f, 0);
	/* A shared write maps the page-cache page writable and dirty. */
	put_str(mm, m1, "shared");
	ck_assert(vs_pte_write(pte_at(mm, m1)));
	ck_assert(vs_pte_dirty(pte_at(mm, m1)));
	p0 = page_at(mm, m1);
	ck_assert_int_eq(vs_file_get_page(f, 0, &cp), 0);
	ck_assert_ptr_eq(cp, p0);
	vs_put_page(mm->pool, cp);
	ck_assert(vs_page_test_flags(p0, VS_PG_FILE));
	ck_assert(vs_page_test_flags(p0, VS_PG_DIRTY));
	ck_assert(!vs_page_test_flags(p0, VS_PG_ANON));
	ck_assert_int_eq(rss_file(mm), 1);
	ck_assert_int_eq(rss_anon(mm), 0);
	/* Seen through the other mapping, which maps it read-only. */
	expect_str(mm, m2, "shared");
	ck_assert_ptr_eq(page_at(mm, m2), p0);
	ck_assert(!vs_pte_write(pte_at(mm, m2)));
	ck_assert_uint_eq(vs_page_mapcount(p0), 2);
	vs_lru_drain_all(mm->pool);	/* the LRU batch's reference */
	ck_assert_uint_eq(vs_page_count(p0), 3);
	ck_assert_int_eq(rss_file(mm), 2);
	/* A read leaves the page clean; the write that follows, through
	 * the read-only PTE, dirties it in place (no copy). */
	ck_assert_int_eq(vs_access(mm, m1 + PG, 1, 0), 0);
	p1 = page_at(mm, m1 + PG);
	ck_assert(!vs_pte_write(pte_at(mm, m1 + PG)));
	ck_assert(!vs_page_test_flags(p1, VS_PG_DIRTY));
	ck_assert_int_eq(vs_access(mm, m2 + PG, 1, 0), 0);
	ck_assert_ptr_eq(page_at(mm, m2 + PG), p1);
	put_str(mm, m2 + PG, "later");
	ck_assert_ptr_eq(page_at(mm, m2 + PG), p1);
	ck_assert(vs_pte_write(pte_at(mm, m2 + PG)));
	ck_assert(vs_page_test_flags(p1, VS_PG_DIRTY));
	ck_assert(!vs_page_test_flags(p1, VS_PG_ANON));
	expect_str(mm, m1 + PG, "later");
	ck_assert_int_eq(rss_file(mm), 4);
	ck_assert_int_eq(rss_anon(mm), 0);
	check_mm(mm);
	ck_assert_int_eq(vs_file_destroy(f), 0);
	mm_done(mm);
}
END_TEST

START_TEST(file_private_copy)
{
	struct vs_mm *mm = mm_new(_i);
	unsigned long m1 = A0, m2 = A0 + 16 * PG;
	struct vs_page *p0, *q, *cp;
	struct vs_file *f;

	ck_assert_int_eq(vs_file_create(&f, mm->pool, 2 * PG, O_RDWR), 0);
	map(mm, m1, 2, RW, VS_MAP_SHARED, f, 0);
	map(mm, m2, 2, RW, VS_MAP_PRIVATE, f, 0);
	put_str(mm, m1, "file");
	p0 = page_at(mm, m1);
	/* A private read maps the page-cache page read-only. */
	expect_str(mm, m2, "file");
	ck_assert_ptr_eq(page_at(mm, m2), p0);
	ck_assert(!vs_pte_write(pte_at(mm, m2)));
	ck_assert_int_eq(rss_file(mm), 2);
	ck_assert_int_eq(rss_anon(mm), 0);
	/* A private write copies it. */
	put_str(mm, m2, "mine");
	q = page_at(mm, m2);
	ck_assert_ptr_ne(q, p0);
	ck_assert(vs_page_test_flags(q, VS_PG_ANON));
	ck_assert(!vs_page_test_flags(q, VS_PG_FILE));
	ck_assert(vs_pte_write(pte_at(mm, m2)));
	ck_assert_uint_eq(vs_page_mapcount(p0), 1);
	vs_lru_drain_all(mm->pool);	/* the LRU batch's reference */
	ck_assert_uint_eq(vs_page_count(p0), 2);
	ck_assert_int_eq(rss_file(mm), 1);
	ck_assert_int_eq(rss_anon(mm), 1);
	expect_str(mm, m1, "file");
	expect_str(mm, m2, "mine");
	/* A private write with no PTE copies at once: the cache page is
	 * read, not written, and not mapped. */
	put_str(mm, m2 + PG, "cow");
	ck_assert(vs_page_test_flags(page_at(mm, m2 + PG), VS_PG_ANON));
	ck_assert_int_eq(vs_file_get_page(f, 1, &cp), 0);
	ck_assert_ptr_ne(cp, page_at(mm, m2 + PG));
	ck_assert(!vs_page_test_flags(cp, VS_PG_DIRTY));
	ck_assert_uint_eq(vs_page_mapcount(cp), 0);
	vs_put_page(mm->pool, cp);
	expect_zero_page(mm, m1 + PG);
	/* Later shared writes do not reach the private copy. */
	put_str(mm, m1, "FILE");
	expect_str(mm, m2, "mine");
	ck_assert_int_eq(rss_file(mm), 2);
	ck_assert_int_eq(rss_anon(mm), 2);
	check_mm(mm);
	ck_assert_int_eq(vs_file_destroy(f), 0);
	mm_done(mm);
}
END_TEST

START_TEST(file_sigbus)
{
	struct vs_mm *mm = mm_new(_i);
	struct vs_file *f, *f2;
	struct vs_fault_stats s;
	size_t free0;

	ck_assert_int_eq(vs_file_create(&f, mm->pool, PG, O_RDWR), 0);
	map(mm, A0, 2, RW, VS_MAP_SHARED, f, 0);
	map(mm, A0 + 16 * PG, 2, RW, VS_MAP_PRIVATE, f, 0);
	ck_assert_int_eq(vs_access(mm, A0 + 16 * PG, 1, 1), 0);
	free0 = free_pages(mm);
	vs_fault_stats_reset();
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + PG, U),
			 VS_VM_FAULT_SIGBUS);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + PG, UW),
			 VS_VM_FAULT_SIGBUS);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 17 * PG, UW),
			 VS_VM_FAULT_SIGBUS);
	ck_assert_int_eq(vs_access(mm, A0 + PG, 1, 0), -EFAULT);
	ck_assert_int_eq(vs_access(mm, A0 + 17 * PG, 1, 0), -EFAULT);
	s = stats();
	ck_assert_uint_eq(s.sigbus, 5);
	ck_assert_uint_eq(s.sigsegv, 0);
	ck_assert_uint_eq(s.faults, 5);
	ck_assert_uint_eq(pte_at(mm, A0 + PG), 0);
	ck_assert_uint_eq(pte_at(mm, A0 + 17 * PG), 0);
	ck_assert_uint_eq(free_pages(mm), free0);
	/* The page inside the file is fine. */
	ck_assert_int_eq(vs_access(mm, A0, 1, 1), 0);
	/* A partial last page is a whole page. */
	ck_assert_int_eq(vs_file_create(&f2, mm->pool, PG + 1, O_RDWR), 0);
	map(mm, A0 + 32 * PG, 3, RW, VS_MAP_SHARED, f2, 0);
	ck_assert_int_eq(vs_access(mm, A0 + 33 * PG + PG - 1, 1, 1), 0);
	ck_assert_int_eq(vs_access(mm, A0 + 34 * PG, 1, 0), -EFAULT);
	ck_assert_int_eq(rss_anon(mm), 1);
	ck_assert_int_eq(rss_file(mm), 2);
	check_mm(mm);
	ck_assert_int_eq(vs_file_destroy(f), 0);
	ck_assert_int_eq(vs_file_destroy(f2), 0);
	mm_done(mm);
}
END_TEST

/* ---- permissions (each strategy) ----------------------------------------- */

struct tally {
	unsigned long calls, segv;
};

static void fault_segv(struct tally *t, struct vs_mm *mm, unsigned long a,
		       unsigned int flags)
{
	ck_assert_msg(vs_handle_mm_fault(mm, a, flags) == VS_VM_FAULT_SIGSEGV,
		      "fault at %lx flags %#x: no SIGSEGV", a, flags);
	t->calls++;
	t->segv++;
}

static void fault_ok(struct tally *t, struct vs_mm *mm, unsigned long a,
		     unsigned int flags)
{
	ck_assert_msg(vs_handle_mm_fault(mm, a, flags) == 0,
		      "fault at %lx flags %#x failed", a, flags);
	t->calls++;
}

static void access_efault(struct tally *t, struct vs_mm *mm, unsigned long a,
			  int write)
{
	ck_assert_msg(vs_access(mm, a, 1, write) == -EFAULT,
		      "access at %lx (write %d): no -EFAULT", a, write);
	t->calls++;
	t->segv++;
}

START_TEST(perm_sigsegv)
{
	struct vs_mm *mm = mm_new(_i);
	struct tally t = { 0, 0 };
	unsigned long ro = A0, none = A0 + 2 * PG, rw = A0 + 4 * PG,
		      rx = A0 + 6 * PG, hole = A0 + PG;
	struct vs_fault_stats s;
	char c = 'c';

	map(mm, ro, 1, VS_PROT_READ, ANON, NULL, 0);
	map(mm, none, 1, VS_PROT_NONE, ANON, NULL, 0);
	map(mm, rw, 1, RW, ANON, NULL, 0);
	map(mm, rx, 1, VS_PROT_READ | VS_PROT_EXEC, ANON, NULL, 0);
	vs_fault_stats_reset();
	/* A write to a read-only VMA, before and after a read. */
	fault_segv(&t, mm, ro, UW);
	ck_assert_uint_eq(pte_at(mm, ro), 0);
	fault_ok(&t, mm, ro, U);
	fault_segv(&t, mm, ro, UW);
	ck_assert_uint_eq(vs_pte_pfn(pte_at(mm, ro)), 0);
	ck_assert(!vs_pte_write(pte_at(mm, ro)));
	/* PROT_NONE: everything. */
	fault_segv(&t, mm, none, U);
	fault_segv(&t, mm, none, UW);
	fault_segv(&t, mm, none, UX);
	ck_assert_uint_eq(pte_at(mm, none), 0);
	/* Outside every VMA. */
	fault_segv(&t, mm, hole, U);
	fault_segv(&t, mm, hole, UW);
	fault_segv(&t, mm, mm->start - PG, U);
	fault_segv(&t, mm, 0, U);
	fault_segv(&t, mm, mm->end, U);
	fault_segv(&t, mm, VS_TASK_SIZE, U);
	fault_segv(&t, mm, VS_TASK_SIZE + 5 * PG, UW);
	fault_segv(&t, mm, ULONG_MAX, U);
	/* Instruction fetches need PROT_EXEC. */
	fault_segv(&t, mm, rw, UX);
	fault_ok(&t, mm, rx, UX);
	fault_segv(&t, mm, rx, UW);
	fault_ok(&t, mm, rw, UW);
	/* The simulated CPU: -EFAULT. */
	access_efault(&t, mm, ro, 1);
	access_efault(&t, mm, none, 0);
	access_efault(&t, mm, none, 1);
	access_efault(&t, mm, hole, 0);
	access_efault(&t, mm, mm->start - PG, 0);
	access_efault(&t, mm, VS_TASK_SIZE, 0);
	access_efault(&t, mm, VS_TASK_SIZE + PG, 1);
	ck_assert_int_eq(vs_read(mm, none, &c, 1), -EFAULT);
	ck_assert_int_eq(vs_write(mm, ro, &c, 1), -EFAULT);
	t.calls += 2;
	t.segv += 2;
	s = stats();
	ck_assert_uint_eq(s.sigsegv, t.segv);
	ck_assert_uint_eq(s.faults, t.calls);
	ck_assert_uint_eq(s.sigbus, 0);
	ck_assert_uint_eq(s.oom, 0);
	ck_assert_int_eq(c, 'c');
	ck_assert_int_eq(rss_anon(mm), 1);
	check_mm(mm);
	mm_done(mm);
}
END_TEST

/* The bytes before the faulting page are accessed, as a real copy. */
START_TEST(access_partial)
{
	struct vs_mm *mm = mm_new(_i);
	const char in[8] = "abcdefg";
	char out[8];

	map(mm, A0, 1, RW, ANON, NULL, 0);
	ck_assert_int_eq(vs_write(mm, A0 + PG - 4, in, 8), -EFAULT);
	memset(out, 0, sizeof(out));
	ck_assert_int_eq(vs_read(mm, A0 + PG - 4, out, 4), 0);
	ck_assert_mem_eq(out, in, 4);
	ck_assert_int_eq(vs_read(mm, A0 + PG - 4, out, 8), -EFAULT);
	ck_assert_int_eq(vs_access(mm, A0, 2 * PG, 1), -EFAULT);
	/* Both pages mapped: the copy crosses. */
	map(mm, A0 + PG, 1, RW, ANON, NULL, 0);
	ck_assert_int_eq(vs_write(mm, A0 + PG - 4, in, 8), 0);
	memset(out, 0, sizeof(out));
	ck_assert_int_eq(vs_read(mm, A0 + PG - 4, out, 8), 0);
	ck_assert_mem_eq(out, in, 8);
	ck_assert_int_eq(rss_anon(mm), 2);
	check_mm(mm);
	mm_done(mm);
}
END_TEST

/* ---- mprotect and madvise (each strategy) -------------------------------- */

START_TEST(mprotect_none_and_back)
{
	struct vs_mm *mm = mm_new(_i);
	struct vs_page *page;
	char c = 0;
	uint64_t v;

	map(mm, A0, 2, RW, ANON, NULL, 0);
	put_str(mm, A0, "secret");
	page = page_at(mm, A0);
	ck_assert_int_eq(vs_mprotect(mm, A0, 2 * PG, VS_PROT_NONE), 0);
	v = pte_at(mm, A0);
	ck_assert(vs_pte_present(v));
	ck_assert(!(v & VS_PTE_USER));
	ck_assert_int_eq(vs_access(mm, A0, 1, 0), -EFAULT);
	ck_assert_int_eq(vs_read(mm, A0, &c, 1), -EFAULT);
	ck_assert_int_eq(vs_write(mm, A0, "X", 1), -EFAULT);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, U), VS_VM_FAULT_SIGSEGV);
	ck_assert_int_eq(c, 0);
	/* The PTE is kept while inaccessible. */
	ck_assert_ptr_eq(page_at(mm, A0), page);
	vs_lru_drain_all(mm->pool);	/* the LRU batch's reference */
	ck_assert_uint_eq(vs_page_count(page), 1);
	ck_assert_int_eq(rss_anon(mm), 1);
	/* Accessible again: the old data, the same page. */
	ck_assert_int_eq(vs_mprotect(mm, A0, 2 * PG, RW), 0);
	expect_str(mm, A0, "secret");
	ck_assert_ptr_eq(page_at(mm, A0), page);
	put_str(mm, A0, "again");
	ck_assert_ptr_eq(page_at(mm, A0), page);
	ck_assert(vs_pte_write(pte_at(mm, A0)));
	/* Read-only: reads work, writes fault. */
	ck_assert_int_eq(vs_mprotect(mm, A0, PG, VS_PROT_READ), 0);
	ck_assert(!vs_pte_write(pte_at(mm, A0)));
	ck_assert_int_eq(vs_write(mm, A0, "X", 1), -EFAULT);
	expect_str(mm, A0, "again");
	ck_assert_int_eq(vs_mprotect(mm, A0, PG, RW), 0);
	put_str(mm, A0, "third");
	ck_assert_ptr_eq(page_at(mm, A0), page);
	expect_str(mm, A0, "third");
	ck_assert_int_eq(rss_anon(mm), 1);
	check_mm(mm);
	mm_done(mm);
}
END_TEST

START_TEST(madvise_dontneed_zaps)
{
	struct vs_mm *mm = mm_new(_i);
	static char buf[PG];
	struct vs_file *f;
	size_t free0;

	map(mm, A0, 4, RW, ANON, NULL, 0);
	memset(buf, 0xaa, sizeof(buf));
	ck_assert_int_eq(vs_write(mm, A0, buf, PG), 0);
	ck_assert_int_eq(vs_write(mm, A0 + PG, buf, PG), 0);
	ck_assert_int_eq(vs_access(mm, A0 + 2 * PG, 1, 0), 0);
	ck_assert_int_eq(rss_anon(mm), 2);
	free0 = free_pages(mm);
	ck_assert_int_eq(vs_madvise(mm, A0, 4 * PG, VS_MADV_DONTNEED), 0);
	ck_assert_int_eq(rss_anon(mm), 0);
	ck_assert_uint_eq(free_pages(mm), free0 + 2);
	ck_assert_uint_eq(pte_at(mm, A0), 0);
	ck_assert_uint_eq(pte_at(mm, A0 + PG), 0);
	ck_assert_uint_eq(pte_at(mm, A0 + 2 * PG), 0);
	/* Zeroes again: first the zero page, then a fresh cleared page. */
	expect_zero_page(mm, A0);
	ck_assert_int_eq(rss_anon(mm), 0);
	put_str(mm, A0 + PG, "n");
	ck_assert_int_eq(rss_anon(mm), 1);
	ck_assert_uint_eq(free_pages(mm), free0 + 1);
	expect_str(mm, A0 + PG, "n");
	ck_assert_mem_eq((char *)page_at(mm, A0 + PG)->data + 2, zeroes,
			 PG - 2);
	ck_assert_int_eq(vs_access(mm, A0 + 3 * PG, 1, 1), 0);
	ck_assert_int_eq(rss_anon(mm), 2);
	/* A private file mapping drops its copy: the file shows again. */
	ck_assert_int_eq(vs_file_create(&f, mm->pool, PG, O_RDWR), 0);
	map(mm, A0 + 8 * PG, 1, RW, VS_MAP_SHARED, f, 0);
	map(mm, A0 + 16 * PG, 1, RW, VS_MAP_PRIVATE, f, 0);
	put_str(mm, A0 + 8 * PG, "file");
	put_str(mm, A0 + 16 * PG, "anon");
	ck_assert_int_eq(rss_anon(mm), 3);
	ck_assert_int_eq(vs_madvise(mm, A0 + 16 * PG, PG, VS_MADV_DONTNEED),
			 0);
	ck_assert_int_eq(rss_anon(mm), 2);
	expect_str(mm, A0 + 16 * PG, "file");
	ck_assert_int_eq(rss_file(mm), 2);
	check_mm(mm);
	ck_assert_int_eq(vs_file_destroy(f), 0);
	mm_done(mm);
}
END_TEST

/* ---- out of memory (each strategy) --------------------------------------- */

START_TEST(oom_small_pool)
{
	struct vs_mm *mm = mm_new_pool(_i, 4);
	struct vs_fault_stats s;
	unsigned long i;

	map(mm, A0, 8, RW, ANON, NULL, 0);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(vs_access(mm, A0 + i * PG, 1, 1), 0);
	ck_assert_uint_eq(free_pages(mm), 0);
	vs_fault_stats_reset();
	ck_assert_int_eq(vs_access(mm, A0 + 4 * PG, 1, 1), -ENOMEM);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 4 * PG, UW),
			 VS_VM_FAULT_OOM);
	ck_assert_uint_eq(pte_at(mm, A0 + 4 * PG), 0);
	/* A read needs no memory: the zero page. */
	ck_assert_int_eq(vs_access(mm, A0 + 4 * PG, 1, 0), 0);
	ck_assert_uint_eq(vs_pte_pfn(pte_at(mm, A0 + 4 * PG)), 0);
	/* Its copy on write does. */
	ck_assert_int_eq(vs_write(mm, A0 + 4 * PG, "x", 1), -ENOMEM);
	ck_assert_uint_eq(vs_pte_pfn(pte_at(mm, A0 + 4 * PG)), 0);
	s = stats();
	ck_assert_uint_eq(s.oom, 3);
	ck_assert_uint_eq(s.sigsegv, 0);
	if (_i == VS_FAULT_SPF) {
		ck_assert_uint_eq(s.spf_abort[VS_SPF_ABORT_NOMEM], 3);
		ck_assert_uint_eq(s.locked, 3);
	}
	ck_assert_int_eq(rss_anon(mm), 4);
	/* Memory back: the write goes through. */
	ck_assert_int_eq(vs_munmap(mm, A0, PG), 0);
	put_str(mm, A0 + 4 * PG, "x");
	expect_str(mm, A0 + 4 * PG, "x");
	ck_assert_int_eq(rss_anon(mm), 4);
	check_mm(mm);
	mm_done(mm);
}
END_TEST

/* ---- accounting after a mixed sequence (each strategy) ------------------- */

START_TEST(rss_matches_ptes)
{
	struct vs_mm *mm = mm_new(_i), *child, *both[2];
	unsigned long an = A0, sh = A0 + 16 * PG, fp = A0 + 32 * PG,
		      fs = A0 + 48 * PG, ro = A0 + 64 * PG, i;
	struct vs_file *f;
	char c = 0;

	ck_assert_int_eq(vs_file_create(&f, mm->pool, 4 * PG, O_RDWR), 0);
	map(mm, an, 8, RW, ANON, NULL, 0);
	map(mm, sh, 4, RW, SHANON, NULL, 0);
	map(mm, fp, 4, RW, VS_MAP_PRIVATE, f, 0);
	map(mm, fs, 4, RW, VS_MAP_SHARED, f, 0);
	map(mm, ro, 2, VS_PROT_READ, ANON, NULL, 0);
	for (i = 0; i < 8; i++)
		ck_assert_int_eq(vs_access(mm, an + i * PG, 1, i % 2 == 0),
				 0);
	ck_assert_int_eq(vs_access(mm, sh, 1, 1), 0);
	ck_assert_int_eq(vs_access(mm, sh + PG, 1, 0), 0);
	ck_assert_int_eq(vs_access(mm, fp, 1, 0), 0);
	ck_assert_int_eq(vs_access(mm, fp + PG, 1, 1), 0);
	ck_assert_int_eq(vs_access(mm, fs, 1, 1), 0);
	ck_assert_int_eq(vs_access(mm, fs + 2 * PG, 1, 0), 0);
	ck_assert_int_eq(vs_access(mm, ro, 2 * PG, 0), 0);
	check_mm(mm);
	ck_assert_int_eq(rss_anon(mm), 5);
	ck_assert_int_eq(rss_file(mm), 3);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_SHMEMPAGES), 2);

	ck_assert_int_eq(vs_fork(mm, &child), 0);
	ck_assert_int_eq(vs_mm_set_fault_strategy(child, _i), 0);
	both[0] = mm;
	both[1] = child;
	check_accounting(both, 2);
	put_str(child, an, "c0");		/* COW of a shared page */
	put_str(child, an + PG, "c1");		/* COW of the zero page */
	put_str(mm, an + 2 * PG, "p2");		/* COW, parent side */
	put_str(child, fp + PG, "c3");		/* COW of a file copy */
	ck_assert_int_eq(vs_access(child, sh, 1, 0), 0); /* shmem */
	ck_assert_int_eq(vs_access(child, fs + 3 * PG, 1, 1), 0);
	ck_assert_int_eq(vs_madvise(mm, an + 4 * PG, 2 * PG,
				    VS_MADV_DONTNEED), 0);
	ck_assert_int_eq(vs_mprotect(mm, fp, 4 * PG, VS_PROT_NONE), 0);
	ck_assert_int_eq(vs_munmap(child, fs, 2 * PG), 0);
	ck_assert_int_eq(vs_munmap(child, an + 6 * PG, PG), 0);
	check_accounting(both, 2);
	expect_str(mm, an + 2 * PG, "p2");
	expect_str(child, an, "c0");
	ck_assert_int_eq(vs_read(mm, fp, &c, 1), -EFAULT);
	ck_assert_int_eq(c, 0);
	ck_assert_int_eq(vs_mprotect(mm, fp, 4 * PG, RW), 0);
	ck_assert_int_eq(vs_access(mm, fp + 2 * PG, PG, 1), 0);
	check_accounting(both, 2);
	ck_assert_int_eq(vs_file_destroy(f), 0);
	mm_done(child);
	mm_done(mm);
}
END_TEST

/* ---- counters: which path each fault took -------------------------------- */

START_TEST(stats_reset_zeroes)
{
	struct vs_mm *mm = mm_new(VS_FAULT_SPF);
	struct vs_fault_stats s, z;

	map(mm, A0, 1, RW, ANON, NULL, 0);
	ck_assert_int_eq(vs_access(mm, A0, 1, 1), 0);
	ck_assert_int_eq(vs_access(mm, A0 + 4 * PG, 1, 1), -EFAULT);
	s = stats();
	ck_assert_uint_ge(s.faults, 2);
	ck_assert_uint_ge(s.sigsegv, 1);
	vs_fault_stats_reset();
	memset(&z, 0, sizeof(z));
	s = stats();
	ck_assert_mem_eq(&s, &z, sizeof(s));
	mm_done(mm);
}
END_TEST

/* What a strategy counts shows in the sums, and a difference of two
 * snapshots is exactly what happened between them. */
START_TEST(stats_count_and_sub)
{
	struct vs_fault_stats a, b, d;

	ck_assert_int_eq(vs_count_vm_event(-1), -EINVAL);
	ck_assert_int_eq(vs_count_vm_event(VS_NR_VM_EVENT_ITEMS), -EINVAL);
	ck_assert_int_eq(vs_fault_stats_sub(NULL, &a, &d), -EINVAL);
	ck_assert_int_eq(vs_fault_stats_sub(&a, NULL, &d), -EINVAL);
	ck_assert_int_eq(vs_fault_stats_sub(&a, &b, NULL), -EINVAL);
	b = stats();
	ck_assert_int_eq(vs_count_vm_event(VS_SPF_SUCCESS), 0);
	ck_assert_int_eq(vs_count_vm_event(VS_SPF_ABORT_EVENT +
					   VS_SPF_ABORT_NOMEM), 0);
	ck_assert_int_eq(vs_count_vm_event(VS_FAULT_OOM), 0);
	a = stats();
	ck_assert_int_eq(vs_fault_stats_sub(&a, &b, &d), 0);
	ck_assert_uint_eq(d.spf_success, 1);
	ck_assert_uint_eq(d.spf_abort[VS_SPF_ABORT_NOMEM], 1);
	ck_assert_uint_eq(spf_aborts(&d), 1);
	ck_assert_uint_eq(d.oom, 1);
	ck_assert_uint_eq(d.faults + d.locked + d.sigsegv + d.sigbus, 0);
	/* @res may be @a. */
	ck_assert_int_eq(vs_fault_stats_sub(&a, &b, &a), 0);
	ck_assert_mem_eq(&a, &d, sizeof(d));
}
END_TEST

START_TEST(stats_locked)
{
	struct vs_mm *mm = mm_new(VS_FAULT_LOCKED);
	struct vs_fault_stats s;

	map(mm, A0, 4, RW, ANON, NULL, 0);
	vs_fault_stats_reset();
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, UW), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + PG, U), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + PG, UW), 0);
	/* NO_FALLBACK has no effect on locked. */
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 2 * PG, UW | NF), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 8 * PG, U),
			 VS_VM_FAULT_SIGSEGV);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 8 * PG, U | NF),
			 VS_VM_FAULT_SIGSEGV);
	s = stats();
	ck_assert_uint_eq(s.faults, 6);
	ck_assert_uint_eq(s.locked, 6);
	ck_assert_uint_eq(s.sigsegv, 2);
	ck_assert_uint_eq(s.spf_success, 0);
	ck_assert_uint_eq(spf_aborts(&s), 0);
	ck_assert_uint_eq(s.vma_lock_success, 0);
	ck_assert_uint_eq(s.vma_lock_abort, 0);
	ck_assert_uint_eq(s.vma_lock_retry, 0);
	ck_assert_int_eq(rss_anon(mm), 3);
	mm_done(mm);
}
END_TEST

/* Tables and an anon_vma in place: every fault completes speculatively. */
START_TEST(stats_spf_success)
{
	struct vs_mm *mm = mm_new(VS_FAULT_SPF);
	struct vs_fault_stats s;
	unsigned long i;

	map(mm, A0, 8, RW, ANON, NULL, 0);
	ck_assert_int_eq(vs_handle_mm_fault_as(mm, A0, UW, VS_FAULT_LOCKED),
			 0);
	vs_fault_stats_reset();
	for (i = 1; i <= 4; i++)
		ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + i * PG, UW | NF),
				 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 5 * PG, U | NF), 0);
	ck_assert_uint_eq(vs_pte_pfn(pte_at(mm, A0 + 5 * PG)), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 5 * PG, UW | NF), 0);
	ck_assert_uint_ne(vs_pte_pfn(pte_at(mm, A0 + 5 * PG)), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, UW | NF), 0);
	s = stats();
	ck_assert_uint_eq(s.faults, 7);
	ck_assert_uint_eq(s.spf_success, 7);
	ck_assert_uint_eq(s.locked, 0);
	ck_assert_uint_eq(spf_aborts(&s), 0);
	ck_assert_uint_eq(s.vma_lock_success + s.vma_lock_abort +
			  s.vma_lock_retry, 0);
	ck_assert_int_eq(rss_anon(mm), 6);
	check_mm(mm);
	mm_done(mm);
}
END_TEST

/*
 * The first write fault of a fresh VMA: no page table yet (checked
 * first, at the table walk), then no anon_vma.  Neither is fixed
 * without the mmap_lock: RETRY with NO_FALLBACK, nothing allocated.
 */
START_TEST(stats_spf_no_table_then_anon_vma)
{
	struct vs_mm *mm = mm_new(VS_FAULT_SPF);
	struct vs_fault_stats s;
	size_t tables, free0;

	map(mm, A0, 4, RW, ANON, NULL, 0);
	tables = vs_pgtable_pages(&mm->pgtable);
	free0 = free_pages(mm);
	vs_fault_stats_reset();
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, UW | NF),
			 VS_VM_FAULT_RETRY);
	s = stats();
	ck_assert_uint_eq(s.faults, 1);
	ck_assert_uint_eq(s.spf_abort[VS_SPF_ABORT_NO_TABLE], 1);
	expect_only_abort(&s, VS_SPF_ABORT_NO_TABLE);
	ck_assert_uint_eq(s.spf_success, 0);
	ck_assert_uint_eq(s.locked, 0);
	ck_assert_uint_eq(vs_pgtable_pages(&mm->pgtable), tables);
	ck_assert_uint_eq(free_pages(mm), free0);
	ck_assert_ptr_null(anon_vma_of(mm, A0));

	/* A locked read makes the table; the zero page needs no anon_vma. */
	ck_assert_int_eq(vs_handle_mm_fault_as(mm, A0 + PG, U,
					       VS_FAULT_LOCKED), 0);
	ck_assert_ptr_null(anon_vma_of(mm, A0));
	vs_fault_stats_reset();
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, UW | NF),
			 VS_VM_FAULT_RETRY);
	s = stats();
	ck_assert_uint_eq(s.spf_abort[VS_SPF_ABORT_ANON_VMA], 1);
	expect_only_abort(&s, VS_SPF_ABORT_ANON_VMA);
	ck_assert_uint_eq(s.locked, 0);
	ck_assert_uint_eq(pte_at(mm, A0), 0);
	ck_assert_uint_eq(free_pages(mm), free0);
	ck_assert_ptr_null(anon_vma_of(mm, A0));
	/* Writing the zero page needs one too. */
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + PG, UW | NF),
			 VS_VM_FAULT_RETRY);
	ck_assert_uint_eq(stats().spf_abort[VS_SPF_ABORT_ANON_VMA], 2);
	ck_assert_uint_eq(vs_pte_pfn(pte_at(mm, A0 + PG)), 0);
	/* A read does not: speculative. */
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 2 * PG, U | NF), 0);
	ck_assert_uint_eq(stats().spf_success, 1);
	/* Without NO_FALLBACK the locked retry prepares it... */
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, UW), 0);
	s = stats();
	ck_assert_uint_eq(s.spf_abort[VS_SPF_ABORT_ANON_VMA], 3);
	ck_assert_uint_eq(s.locked, 1);
	ck_assert_ptr_nonnull(anon_vma_of(mm, A0));
	ck_assert_int_eq(rss_anon(mm), 1);
	/* ... and speculative writes go through from then on. */
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + PG, UW | NF), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 3 * PG, UW | NF), 0);
	s = stats();
	ck_assert_uint_eq(s.spf_success, 3);
	ck_assert_uint_eq(s.locked, 1);
	ck_assert_uint_eq(s.faults, 6);
	ck_assert_int_eq(rss_anon(mm), 3);
	check_mm(mm);
	mm_done(mm);
}
END_TEST

START_TEST(stats_spf_no_vma)
{
	struct vs_mm *mm = mm_new(VS_FAULT_SPF);
	struct vs_fault_stats s;

	map(mm, A0, 1, RW, ANON, NULL, 0);
	vs_fault_stats_reset();
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 4 * PG, U | NF),
			 VS_VM_FAULT_RETRY);
	s = stats();
	ck_assert_uint_eq(s.spf_abort[VS_SPF_ABORT_NO_VMA], 1);
	expect_only_abort(&s, VS_SPF_ABORT_NO_VMA);
	ck_assert_uint_eq(s.sigsegv, 0);
	ck_assert_uint_eq(s.locked, 0);
	/* The locked retry decides: SIGSEGV. */
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 4 * PG, U),
			 VS_VM_FAULT_SIGSEGV);
	s = stats();
	ck_assert_uint_eq(s.spf_abort[VS_SPF_ABORT_NO_VMA], 2);
	expect_only_abort(&s, VS_SPF_ABORT_NO_VMA);
	ck_assert_uint_eq(s.sigsegv, 1);
	ck_assert_uint_eq(s.locked, 1);
	ck_assert_uint_eq(s.spf_success, 0);
	ck_assert_uint_eq(s.faults, 2);
	mm_done(mm);
}
END_TEST

/*
 * A VMA in the middle of a change.  A thread of the test stages the
 * writer: it holds the mmap_lock for write and marks the VMA, step by
 * step, while this thread faults with NO_FALLBACK, where neither spf
 * nor pervma takes the mmap_lock.  (A fault must not run on the
 * thread that holds the mmap_lock: vs_handle_mm_fault()'s rule.)
 */
struct staged_writer {
	struct vs_mm *mm;
	vs_atomic32_t step;	/* 1: marked, inside vm_write_begin/end;
				 * 2: go on; 3: section ended, still
				 * marked; 4: go on, unlock */
};

static void *staged_writer(void *arg)
{
	struct staged_writer *w = arg;
	struct vs_vma *v;

	vs_thread_attach();
	vs_mmap_write_lock(w->mm);
	v = vs_vma_lookup(w->mm, A0);
	vs_vma_start_write(v);
	vs_vm_write_begin(v);
	vs_test_set(&w->step, 1);
	(void)vs_test_wait_eq(&w->step, 2, VS_TEST_WAIT_NS);
	vs_vm_write_end(v);
	vs_test_set(&w->step, 3);
	(void)vs_test_wait_eq(&w->step, 4, VS_TEST_WAIT_NS);
	vs_mmap_write_unlock(w->mm);
	return NULL;
}

START_TEST(stats_vma_being_written)
{
	struct vs_mm *mm = mm_new_kernel(VS_FAULT_SPF, POOL,
					 kernel_for(VS_FAULT_PERVMA));
	struct vs_fault_stats s1, s2, s3;
	struct staged_writer w = { .mm = mm };
	pthread_t tid;
	int r1, r2, r3;

	map(mm, A0, 4, RW, ANON, NULL, 0);
	ck_assert_int_eq(vs_handle_mm_fault_as(mm, A0, UW, VS_FAULT_LOCKED),
			 0);
	vs_fault_stats_reset();
	vs_atomic_init(&w.step, 0);
	vs_test_thread_create(&tid, staged_writer, &w);
	ck_assert(vs_test_wait_eq(&w.step, 1, VS_TEST_WAIT_NS));
	r1 = vs_handle_mm_fault_as(mm, A0 + PG, UW | NF, VS_FAULT_SPF);
	vs_test_set(&w.step, 2);
	ck_assert(vs_test_wait_eq(&w.step, 3, VS_TEST_WAIT_NS));
	s1 = stats();
	/* Write-marked: lock_vma_under_rcu backs off. */
	r2 = vs_handle_mm_fault_as(mm, A0 + PG, UW | NF, VS_FAULT_PERVMA);
	s2 = stats();
	/* Marked, between two write sections (mremap's gap): spf backs
	 * off too. */
	vs_fault_stats_reset();
	r3 = vs_handle_mm_fault_as(mm, A0 + PG, UW | NF, VS_FAULT_SPF);
	s3 = stats();
	vs_test_set(&w.step, 4);
	vs_test_thread_join(tid);

	ck_assert_int_eq(r3, VS_VM_FAULT_RETRY);
	ck_assert_uint_eq(s3.spf_abort[VS_SPF_ABORT_VMA_WRITE], 1);
	expect_only_abort(&s3, VS_SPF_ABORT_VMA_WRITE);
	ck_assert_int_eq(r1, VS_VM_FAULT_RETRY);
	ck_assert_uint_eq(s1.spf_abort[VS_SPF_ABORT_SEQ_ODD], 1);
	expect_only_abort(&s1, VS_SPF_ABORT_SEQ_ODD);
	ck_assert_uint_eq(s1.spf_success, 0);
	ck_assert_int_eq(r2, VS_VM_FAULT_RETRY);
	ck_assert_uint_eq(s2.vma_lock_abort, 1);
	ck_assert_uint_eq(s2.vma_lock_success, 0);
	ck_assert_uint_eq(s2.locked, 0);
	ck_assert_uint_eq(pte_at(mm, A0 + PG), 0);
	/* Unlocked, both go through. */
	ck_assert_int_eq(vs_handle_mm_fault_as(mm, A0 + PG, UW | NF,
					       VS_FAULT_SPF), 0);
	ck_assert_int_eq(vs_handle_mm_fault_as(mm, A0 + 2 * PG, UW | NF,
					       VS_FAULT_PERVMA), 0);
	s2 = stats();
	ck_assert_uint_eq(s2.spf_success, 1);
	ck_assert_uint_eq(s2.vma_lock_success, 1);
	ck_assert_int_eq(rss_anon(mm), 3);
	check_mm(mm);
	mm_done(mm);
}
END_TEST

START_TEST(stats_pervma)
{
	struct vs_mm *mm = mm_new(VS_FAULT_PERVMA);
	/* 6.8's vmf_anon_prepare() prepares under the mmap_lock's trylock
	 * (anon_prepare_trylock_*); before, the fault retries. */
	unsigned long retry = !mm->mech.anon_prepare_trylock;
	struct vs_fault_stats s;

	map(mm, A0, 4, RW, ANON, NULL, 0);
	map(mm, A0 + 16 * PG, 1, RW, ANON, NULL, 0);
	vs_fault_stats_reset();
	/* No anon_vma: the handler needs the mmap_lock. */
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, UW | NF),
			 retry ? VS_VM_FAULT_RETRY : 0);
	s = stats();
	ck_assert_uint_eq(s.vma_lock_retry, retry);
	ck_assert_uint_eq(s.vma_lock_success, !retry);
	ck_assert_uint_eq(s.locked, 0);
	ck_assert_uint_eq(pte_at(mm, A0) == 0, retry);
	ck_assert((anon_vma_of(mm, A0) == NULL) == retry);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, UW), 0);
	s = stats();
	ck_assert_uint_eq(s.vma_lock_retry, 2 * retry);
	ck_assert_uint_eq(s.locked, retry);
	ck_assert_ptr_nonnull(anon_vma_of(mm, A0));
	/* With one: under the VMA lock. */
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + PG, UW | NF), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 2 * PG, U | NF), 0);
	/* A read in a VMA without one needs none. */
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 16 * PG, U | NF), 0);
	ck_assert_ptr_null(anon_vma_of(mm, A0 + 16 * PG));
	s = stats();
	ck_assert_uint_eq(s.vma_lock_success, 5 - 2 * retry);
	ck_assert_uint_eq(s.vma_lock_retry, 2 * retry);
	ck_assert_uint_eq(s.locked, retry);
	/* A hole: lock_vma_under_rcu finds nothing. */
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 8 * PG, U | NF),
			 VS_VM_FAULT_RETRY);
	s = stats();
	ck_assert_uint_eq(s.vma_lock_abort, 1);
	ck_assert_uint_eq(s.sigsegv, 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 8 * PG, U),
			 VS_VM_FAULT_SIGSEGV);
	s = stats();
	ck_assert_uint_eq(s.vma_lock_abort, 2);
	ck_assert_uint_eq(s.sigsegv, 1);
	ck_assert_uint_eq(s.locked, retry + 1);
	ck_assert_uint_eq(s.faults, 7);
	ck_assert_uint_eq(s.vma_lock_miss, 0);
	ck_assert_uint_eq(s.spf_success, 0);
	ck_assert_uint_eq(spf_aborts(&s), 0);
	ck_assert_int_eq(rss_anon(mm), 2);
	check_mm(mm);
	mm_done(mm);
}
END_TEST

/* A thread of the test that holds the mmap_lock for write, marking
 * nothing, from step 1 until step 2. */
static void *write_holder(void *arg)
{
	struct staged_writer *w = arg;

	vs_thread_attach();
	vs_mmap_write_lock(w->mm);
	vs_test_set(&w->step, 1);
	(void)vs_test_wait_eq(&w->step, 2, VS_TEST_WAIT_NS);
	vs_mmap_write_unlock(w->mm);
	return NULL;
}

/*
 * 6.18's vmf_anon_prepare(): a write fault under the VMA lock in a VMA
 * without an anon_vma prepares one under vs_mmap_read_trylock(), and
 * retries only while a writer holds the mmap_lock; 6.4's always
 * retries.  _i: 0 at 6.18, 1 at 6.4.
 */
START_TEST(anon_prepare_trylock)
{
	struct vs_mm *mm = mm_new_kernel(VS_FAULT_PERVMA, POOL,
					 _i ? "6.4" : "6.18");
	struct staged_writer w = { .mm = mm };
	struct vs_fault_stats s;
	pthread_t tid;
	int r;

	ck_assert_uint_eq(mm->mech.anon_prepare_trylock, !_i);
	map(mm, A0, 4, RW, ANON, NULL, 0);
	vs_fault_stats_reset();
	vs_atomic_init(&w.step, 0);
	vs_test_thread_create(&tid, write_holder, &w);
	ck_assert(vs_test_wait_eq(&w.step, 1, VS_TEST_WAIT_NS));
	r = vs_handle_mm_fault(mm, A0, UW | NF);
	vs_test_set(&w.step, 2);
	vs_test_thread_join(tid);
	ck_assert_int_eq(r, VS_VM_FAULT_RETRY);
	ck_assert_ptr_null(anon_vma_of(mm, A0));
	r = vs_handle_mm_fault(mm, A0, UW | NF);
	s = stats();
	ck_assert_int_eq(r, _i ? VS_VM_FAULT_RETRY : 0);
	ck_assert((anon_vma_of(mm, A0) == NULL) == _i);
	ck_assert_uint_eq(s.vma_lock_retry, 1 + _i);
	ck_assert_uint_eq(s.vma_lock_success, !_i);
	ck_assert_uint_eq(s.locked, 0);
	check_mm(mm);
	mm_done(mm);
}
END_TEST

/* 3.18 has no per-VMA lock: pervma is refused, -EOPNOTSUPP. */
START_TEST(pervma_unsupported)
{
	struct vs_mm *mm = mm_new_kernel(VS_FAULT_LOCKED, POOL, "3.18");

	ck_assert_uint_eq(mm->mech.vma_lock, VS_VMA_LOCK_NONE);
	map(mm, A0, 1, RW, ANON, NULL, 0);
	ck_assert_int_eq(vs_mm_set_fault_strategy(mm, VS_FAULT_PERVMA),
			 -EOPNOTSUPP);
	ck_assert_int_eq(vs_mm_fault_strategy(mm), VS_FAULT_LOCKED);
	ck_assert_int_eq(vs_handle_mm_fault_as(mm, A0, UW, VS_FAULT_PERVMA),
			 -EOPNOTSUPP);
	ck_assert_uint_eq(pte_at(mm, A0), 0);
	ck_assert_str_eq(vs_err_name(-EOPNOTSUPP), "EOPNOTSUPP");
	ck_assert_ptr_nonnull(strstr(vs_strerror(-EOPNOTSUPP),
				     "not supported"));
	/* The others still fault. */
	ck_assert_int_eq(vs_handle_mm_fault_as(mm, A0, UW, VS_FAULT_SPF), 0);
	mm_done(mm);
}
END_TEST

/* vs_handle_mm_fault_as() uses its argument, not the mm's strategy. */
START_TEST(stats_strategy_per_call)
{
	struct vs_mm *mm = mm_new_kernel(VS_FAULT_LOCKED, POOL,
					 kernel_for(VS_FAULT_PERVMA));
	struct vs_fault_stats s;

	map(mm, A0, 8, RW, ANON, NULL, 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, UW), 0);
	vs_fault_stats_reset();
	ck_assert_int_eq(vs_handle_mm_fault_as(mm, A0 + PG, UW | NF,
					       VS_FAULT_SPF), 0);
	ck_assert_int_eq(vs_handle_mm_fault_as(mm, A0 + 2 * PG, UW | NF,
					       VS_FAULT_PERVMA), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 3 * PG, UW), 0);
	ck_assert_int_eq(vs_mm_fault_strategy(mm), VS_FAULT_LOCKED);
	s = stats();
	ck_assert_uint_eq(s.spf_success, 1);
	ck_assert_uint_eq(s.vma_lock_success, 1);
	ck_assert_uint_eq(s.locked, 1);
	/* A new strategy applies to the next fault. */
	ck_assert_int_eq(vs_mm_set_fault_strategy(mm, VS_FAULT_SPF), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 4 * PG, UW), 0);
	ck_assert_int_eq(vs_mm_set_fault_strategy(mm, VS_FAULT_PERVMA), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + 5 * PG, UW), 0);
	s = stats();
	ck_assert_uint_eq(s.spf_success, 2);
	ck_assert_uint_eq(s.vma_lock_success, 2);
	ck_assert_uint_eq(s.locked, 1);
	ck_assert_uint_eq(s.faults, 5);
	ck_assert_int_eq(rss_anon(mm), 6);
	mm_done(mm);
}
END_TEST

/* A strategy of the test's: counts its calls, hands them to locked. */
static vs_atomic32_t mine_calls;

static int mine_fault(struct vs_mm *mm, unsigned long addr,
		      unsigned int flags)
{
	vs_fetch_add(&mine_calls, 1);
	return vs_fault_strategy_ops(VS_FAULT_LOCKED)->fault(mm, addr, flags);
}

START_TEST(strategy_register)
{
	static const struct vs_fault_strategy_ops mine = { "mine",
							   mine_fault };
	static const struct vs_fault_strategy_ops dup = { "spf", mine_fault };
	static const struct vs_fault_strategy_ops noname = { "", mine_fault };
	static const struct vs_fault_strategy_ops nofn = { "x", NULL };
	struct vs_mm *mm;
	int s;

	ck_assert_int_eq(vs_fault_strategy_register(NULL), -EINVAL);
	ck_assert_int_eq(vs_fault_strategy_register(&noname), -EINVAL);
	ck_assert_int_eq(vs_fault_strategy_register(&nofn), -EINVAL);
	ck_assert_int_eq(vs_fault_strategy_register(&dup), -EEXIST);
	s = vs_fault_strategy_register(&mine);
	ck_assert_int_eq(s, VS_FAULT_NR_STRATEGIES);
	ck_assert_int_eq(vs_fault_strategy_register(&mine), -EEXIST);
	ck_assert_str_eq(vs_fault_strategy_name(s), "mine");
	ck_assert_int_eq(vs_fault_strategy_parse("mine"), s);
	ck_assert_ptr_eq(vs_fault_strategy_ops(s), &mine);
	ck_assert_ptr_null(vs_fault_strategy_ops(VS_FAULT_MAX_STRATEGIES));
	mm = mm_new(s);
	ck_assert_int_eq(vs_mm_fault_strategy(mm), s);
	ck_assert_int_eq(vs_mmap(mm, A0, PG, RW, ANON | VS_MAP_FIXED, NULL, 0),
			 (long)A0);
	ck_assert_int_eq(vs_access(mm, A0, 1, 1), 0);
	ck_assert_uint_eq(vs_read_once(&mine_calls), 1);
	/* Out of range: refused before the strategy is called. */
	ck_assert_int_eq(vs_handle_mm_fault(mm, 0, VS_FAULT_FLAG_USER),
			 VS_VM_FAULT_SIGSEGV);
	ck_assert_uint_eq(vs_read_once(&mine_calls), 1);
	mm_done(mm);
}
END_TEST

Suite *fault_suite(void)
{
	Suite *s = suite_create("fault");
	TCase *tc = vs_test_tcase(s, "api");
	int n = VS_FAULT_NR_STRATEGIES;

	vs_test_add(tc, fault_bad_args, fault_names, strategy_register,
		    access_bad_args, access_sets_young_dirty);

	/* Once per strategy: the loop index is the strategy. */
	tc = vs_test_tcase(s, "handle");
	vs_test_add_loop(tc, n, anon_read_maps_zero_page, anon_write_new_page,
			 anon_write_after_read, fault_spurious, cow_after_fork,
			 cow_reuse_after_child_exit, file_shared_write,
			 file_private_copy, file_sigbus, perm_sigsegv,
			 access_partial, mprotect_none_and_back,
			 madvise_dontneed_zaps, oom_small_pool,
			 rss_matches_ptes);

	tc = vs_test_tcase(s, "stats");
	vs_test_add(tc, stats_reset_zeroes, stats_count_and_sub, stats_locked,
		    stats_spf_success, stats_spf_no_table_then_anon_vma,
		    stats_spf_no_vma, stats_vma_being_written, stats_pervma,
		    stats_strategy_per_call, pervma_unsupported);
	vs_test_add_loop(tc, 2, anon_prepare_trylock);
	return s;
}
