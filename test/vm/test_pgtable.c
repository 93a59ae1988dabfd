/* SPDX-License-Identifier: MIT */
/*
 * Tests for vmsim/pgtable.h: allocation and lookup at every level, address
 * checks, zapping with table frees after a grace period, split and
 * per-mm PTLs, range walks, speculative walkers racing a writer that
 * frees tables (ASan reports a table freed without RCU), and racing
 * allocators of one address (LeakSanitizer reports a lost table).
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/atomic.h>
#include <vmsim/page.h>
#include <vmsim/pgtable.h>
#include <vmsim/rcu.h>
#include <vmsim/spinlock.h>
#include <vmsim/thread.h>

#include "test.h"

#define PTE_FLAGS (VS_PTE_PRESENT | VS_PTE_WRITE | VS_PTE_USER)
#define BASE (UINT64_C(3) << VS_PGDIR_SHIFT) /* a PGD entry of its own */
#define NR_READERS 2

static void attach(void)
{
	if (vs_thread_attach() != 0)
		abort();
}

static void pt_new(struct vs_pgtable *pt, int split)
{
	ck_assert_int_eq(vs_thread_attach(), 0);
	ck_assert_int_eq(vs_pgtable_init(pt, split), 0);
	ck_assert_uint_eq(vs_pgtable_pages(pt), 1);
}

/* The pfn the tests store for @addr: recognisable, never 0. */
static unsigned long pfn_for(unsigned long addr)
{
	return (addr >> VS_PAGE_SHIFT) ^ 0x5a5a5;
}

static void set_pte(struct vs_pgtable *pt, unsigned long addr)
{
	vs_atomic64_t *ptep;
	vs_spinlock_t *ptl;

	ptep = vs_pte_alloc(pt, addr);
	ck_assert_ptr_nonnull(ptep);
	ptl = vs_pte_lockptr(pt, addr);
	ck_assert_ptr_nonnull(ptl);
	vs_spin_lock(ptl);
	vs_set_pte(ptep, vs_mk_pte(pfn_for(addr), PTE_FLAGS));
	vs_spin_unlock(ptl);
}

/* Entry helpers round-trip. */
START_TEST(pgtable_entry_helpers)
{
	uint64_t v = vs_mk_pte(0x12345, PTE_FLAGS);

	ck_assert(vs_pte_present(v));
	ck_assert(vs_pte_write(v));
	ck_assert(!vs_pte_dirty(v));
	ck_assert_uint_eq(vs_pte_pfn(v), 0x12345);
	ck_assert_uint_eq(vs_pte_flags(v), PTE_FLAGS);
	ck_assert(!vs_pte_write(vs_pte_wrprotect(v)));
	ck_assert(vs_pte_dirty(vs_pte_mkdirty(v)));
	ck_assert(vs_pte_young(vs_pte_mkyoung(v)));
	ck_assert(!vs_pte_young(vs_pte_mkold(vs_pte_mkyoung(v))));
	ck_assert_uint_eq(vs_pte_pfn(vs_pte_mkdirty(v)), 0x12345);
	ck_assert(vs_pte_none(0));
	ck_assert_uint_eq(vs_pt_index(BASE, 3), 3);
	ck_assert_uint_eq(vs_pt_index(BASE + 5 * VS_PAGE_SIZE, 0), 5);
}
END_TEST

/*
 * vs_ptep_set_flags() sets its bits over another CPU's ACCESSED or
 * DIRTY, and over nothing else: not into a PTE write-protected, made
 * PROT_NONE, unmapped or remapped since the caller read it.
 */
START_TEST(pgtable_set_flags)
{
	const uint64_t old = vs_mk_pte(0x12345, PTE_FLAGS);
	const uint64_t changed[] = { vs_pte_wrprotect(old),
				     old & ~VS_PTE_USER, 0,
				     vs_mk_pte(0x12346, PTE_FLAGS) };
	vs_atomic64_t e = 0;
	size_t k;

	vs_write_once(&e, vs_pte_mkyoung(old));
	ck_assert_int_eq(vs_ptep_set_flags(&e, old, VS_PTE_DIRTY), 1);
	ck_assert_uint_eq(vs_read_once(&e),
			  vs_pte_mkdirty(vs_pte_mkyoung(old)));
	for (k = 0; k < VS_ARRAY_SIZE(changed); k++) {
		vs_write_once(&e, changed[k]);
		ck_assert_int_eq(vs_ptep_set_flags(&e, old, VS_PTE_ACCESSED |
						   VS_PTE_DIRTY), 0);
		ck_assert_uint_eq(vs_read_once(&e), changed[k]);
	}
}
END_TEST

/* pte_alloc builds the levels once; pte_offset finds the same slot. */
START_TEST(pgtable_alloc_offset)
{
	struct vs_pgtable pt;
	vs_atomic64_t *a, *b;
	unsigned long addr = BASE + 0x1234000;

	pt_new(&pt, 1);
	ck_assert_ptr_null(vs_pte_offset(&pt, addr));
	a = vs_pte_alloc(&pt, addr);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 4);
	ck_assert_ptr_eq(vs_pte_offset(&pt, addr), a);
	ck_assert_ptr_eq(vs_pte_offset(&pt, addr + 0xfff), a);
	ck_assert_ptr_eq(vs_pte_alloc(&pt, addr), a);
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 4);
	ck_assert_uint_eq(vs_test_read64(a), 0);

	/* Same PTE page. */
	b = vs_pte_alloc(&pt, addr + VS_PAGE_SIZE);
	ck_assert_ptr_eq(b, a + 1);
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 4);
	/* Another PMD entry: one more PTE page. */
	ck_assert_ptr_nonnull(vs_pte_alloc(&pt, addr + VS_PMD_SIZE));
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 5);
	/* Another PUD entry: PMD + PTE pages. */
	ck_assert_ptr_nonnull(vs_pte_alloc(&pt, addr + VS_PUD_SIZE));
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 7);
	/* Another PGD entry: PUD + PMD + PTE pages. */
	ck_assert_ptr_nonnull(vs_pte_alloc(&pt, addr + VS_PGDIR_SIZE));
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 10);
	/* The lowest and highest user pages. */
	ck_assert_ptr_nonnull(vs_pte_alloc(&pt, 0));
	ck_assert_ptr_nonnull(vs_pte_alloc(&pt, VS_TASK_SIZE - 1));
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 16);

	vs_set_pte(a, vs_mk_pte(42, PTE_FLAGS));
	ck_assert_uint_eq(vs_pte_pfn(vs_ptep_get_lockless(
		vs_pte_offset(&pt, addr))), 42);
	ck_assert_ptr_null(vs_pte_offset(&pt, addr + 2 * VS_PMD_SIZE));
	vs_pgtable_destroy(&pt);
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 0);
}
END_TEST

static int count_fn(vs_atomic64_t *pte, unsigned long addr, void *arg)
{
	(void)pte;
	(void)addr;
	(*(int *)arg)++;
	return 0;
}

/* Addresses at or above 2^47 are refused everywhere. */
START_TEST(pgtable_noncanonical)
{
	struct vs_pgtable pt;
	int n = 0;

	pt_new(&pt, 1);
	ck_assert_ptr_null(vs_pte_alloc(&pt, VS_TASK_SIZE));
	ck_assert_ptr_null(vs_pte_alloc(&pt, 1UL << 63));
	ck_assert_ptr_null(vs_pte_alloc(&pt, ~0UL));
	ck_assert_ptr_null(vs_pte_offset(&pt, VS_TASK_SIZE));
	ck_assert_ptr_null(vs_pte_lockptr(&pt, ~0UL << 47));
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 1);
	ck_assert_uint_eq(vs_zap_range(&pt, 0, VS_TASK_SIZE + 4096, NULL,
				       NULL), 0);
	ck_assert_uint_eq(vs_zap_range(&pt, BASE, BASE, NULL, NULL), 0);
	ck_assert_int_eq(vs_pgtable_walk(&pt, 0, VS_TASK_SIZE + 1, count_fn,
					 &n), -EINVAL);
	ck_assert_int_eq(vs_pgtable_walk(&pt, 2 * BASE, BASE, count_fn, &n),
			 -EINVAL);
	ck_assert_int_eq(vs_free_pgd_range(&pt, BASE, BASE + 4096,
					   BASE + 4096, 0), -EINVAL);
	ck_assert_int_eq(vs_pgtable_init(NULL, 1), -EINVAL);
	vs_pgtable_destroy(&pt);
}
END_TEST

struct zap_log {
	int nr;
	int bad;
};

static void zap_cb(uint64_t pte, unsigned long addr, void *arg)
{
	struct zap_log *log = arg;

	log->nr++;
	if (!vs_pte_present(pte) || vs_pte_pfn(pte) != pfn_for(addr))
		log->bad++;
}

/* zap calls back for each present PTE and clears it, keeping the
 * tables; free_pgd_range then frees the table pages wholly inside the
 * range after a grace period. */
static unsigned long zap_free(struct vs_pgtable *pt, unsigned long s,
			      unsigned long e, struct zap_log *log)
{
	unsigned long n = vs_zap_range(pt, s, e, zap_cb, log);

	ck_assert_int_eq(vs_free_pgd_range(pt, s, e, s, e), 0);
	return n;
}

START_TEST(pgtable_zap_frees_tables)
{
	struct zap_log log = { 0, 0 };
	struct vs_pgtable pt;
	unsigned long a, end = BASE + 3 * VS_PMD_SIZE;

	pt_new(&pt, 1);
	/* 3 PTE pages, every 8th page mapped: 3 * 64 PTEs. */
	for (a = BASE; a < end; a += 8 * VS_PAGE_SIZE)
		set_pte(&pt, a);
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 6);

	/* Part of one PTE page: PTEs go, the table stays. */
	ck_assert_uint_eq(vs_zap_range(&pt, BASE, BASE + 64 * VS_PAGE_SIZE,
				       zap_cb, &log), 8);
	ck_assert_int_eq(log.nr, 8);
	ck_assert_int_eq(log.bad, 0);
	vs_rcu_barrier();
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 6);
	ck_assert_uint_eq(vs_test_read64(vs_pte_offset(&pt, BASE)), 0);
	ck_assert_uint_ne(vs_test_read64(vs_pte_offset(&pt, BASE + 64 *
							VS_PAGE_SIZE)), 0);

	/* The second PTE page, exactly: zap alone keeps it, the free
	 * that follows frees it. */
	log.nr = 0;
	ck_assert_uint_eq(vs_zap_range(&pt, BASE + VS_PMD_SIZE,
				       BASE + 2 * VS_PMD_SIZE, zap_cb, &log),
			  64);
	ck_assert_ptr_nonnull(vs_pte_offset(&pt, BASE + VS_PMD_SIZE));
	ck_assert_int_eq(vs_free_pgd_range(&pt, BASE + VS_PMD_SIZE,
					   BASE + 2 * VS_PMD_SIZE,
					   BASE + VS_PMD_SIZE,
					   BASE + 2 * VS_PMD_SIZE), 0);
	ck_assert_int_eq(log.nr, 64);
	ck_assert_ptr_null(vs_pte_offset(&pt, BASE + VS_PMD_SIZE));
	ck_assert_ptr_null(vs_pte_lockptr(&pt, BASE + VS_PMD_SIZE));
	vs_rcu_barrier();
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 5);

	/* Everything in the PGD entry: PTE, PMD and PUD pages go. */
	log.nr = 0;
	ck_assert_uint_eq(zap_free(&pt, BASE, BASE + VS_PGDIR_SIZE, &log),
			  2 * 64 - 8);
	ck_assert_int_eq(log.bad, 0);
	vs_rcu_barrier();
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 1);
	ck_assert_ptr_null(vs_pte_offset(&pt, BASE));

	/* Nothing left: zapping again finds nothing. */
	ck_assert_uint_eq(vs_zap_range(&pt, 0, VS_TASK_SIZE, zap_cb, &log),
			  0);
	vs_pgtable_destroy(&pt);
}
END_TEST

/* vs_zap_range_reclaim (PT_RECLAIM): a PTE page the range covers whole
 * goes once empty, after a grace period; a partly covered one stays.
 * Split and per-mm PTLs (the page_table_lock then is the PTE pages'
 * lock too). */
START_TEST(pgtable_zap_reclaim)
{
	struct zap_log log = { 0, 0 };
	struct vs_pgtable pt;
	unsigned long a, n, end = BASE + 2 * VS_PMD_SIZE;

	pt_new(&pt, _i);
	for (a = BASE; a < end; a += 8 * VS_PAGE_SIZE)
		set_pte(&pt, a);
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 5);
	ck_assert_uint_eq(vs_zap_range_reclaim(&pt, BASE + VS_PAGE_SIZE, end,
					       zap_cb, &log, &n), 127);
	ck_assert_uint_eq(n, 1);	/* the second; the first keeps BASE */
	ck_assert_int_eq(log.bad, 0);
	ck_assert_ptr_nonnull(vs_pte_offset(&pt, BASE));
	ck_assert_ptr_null(vs_pte_offset(&pt, BASE + VS_PMD_SIZE));
	ck_assert_ptr_null(vs_pte_lockptr(&pt, BASE + VS_PMD_SIZE));
	vs_rcu_barrier();
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 4);
	/* Covered whole, and now empty: it goes too. */
	ck_assert_uint_eq(vs_zap_range_reclaim(&pt, BASE, BASE + VS_PMD_SIZE,
					       zap_cb, &log, &n), 1);
	ck_assert_uint_eq(n, 1);
	vs_rcu_barrier();
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 3);
	/* A new table where one was reclaimed. */
	set_pte(&pt, BASE + VS_PMD_SIZE);
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 4);
	ck_assert_uint_eq(vs_zap_range_reclaim(&pt, 0, 0, zap_cb, &log, &n),
			  0);
	ck_assert_uint_eq(n, 0);
	vs_pgtable_destroy(&pt);
}
END_TEST

/* free_pgd_range frees empty tables inside the gap, not beyond it. */
START_TEST(pgtable_free_pgd_range)
{
	struct vs_pgtable pt;
	unsigned long a = BASE + VS_PMD_SIZE + 5 * VS_PAGE_SIZE;

	pt_new(&pt, 0);
	set_pte(&pt, a);
	set_pte(&pt, BASE + 7 * VS_PUD_SIZE);
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 6);
	ck_assert_uint_eq(vs_zap_range(&pt, a, a + VS_PAGE_SIZE, NULL, NULL),
			  1);
	vs_rcu_barrier();
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 6);
	/* The gap ends before the PTE page does: nothing is freed. */
	ck_assert_int_eq(vs_free_pgd_range(&pt, a, a + VS_PAGE_SIZE, BASE,
					   a + VS_PAGE_SIZE), 0);
	vs_rcu_barrier();
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 6);
	/* A gap up to the other mapping: the PTE and PMD pages go. */
	ck_assert_int_eq(vs_free_pgd_range(&pt, a, a + VS_PAGE_SIZE, 0,
					   BASE + 7 * VS_PUD_SIZE), 0);
	vs_rcu_barrier();
	ck_assert_uint_eq(vs_pgtable_pages(&pt), 4);
	ck_assert_ptr_nonnull(vs_pte_offset(&pt, BASE + 7 * VS_PUD_SIZE));
	vs_pgtable_destroy(&pt);
}
END_TEST

/* Split PTL: one lock per PTE page.  Otherwise: the per-mm lock. */
START_TEST(pgtable_ptl)
{
	struct vs_pgtable split, mm;
	vs_spinlock_t *l1, *l2, *l3, *ptl;
	vs_atomic64_t *ptep;

	pt_new(&split, 1);
	ck_assert_ptr_null(vs_pte_lockptr(&split, BASE));
	ck_assert_ptr_nonnull(vs_pte_alloc(&split, BASE));
	ck_assert_ptr_nonnull(vs_pte_alloc(&split, BASE + VS_PMD_SIZE));
	l1 = vs_pte_lockptr(&split, BASE);
	l2 = vs_pte_lockptr(&split, BASE + VS_PAGE_SIZE);
	l3 = vs_pte_lockptr(&split, BASE + VS_PMD_SIZE);
	ck_assert_ptr_nonnull(l1);
	ck_assert_ptr_eq(l1, l2);
	ck_assert_ptr_ne(l1, l3);
	ck_assert_ptr_ne(l1, &split.mm_ptl);

	ptep = vs_pte_offset_map_lock(&split, BASE + VS_PAGE_SIZE, &ptl);
	ck_assert_ptr_eq(ptep, vs_pte_offset(&split, BASE + VS_PAGE_SIZE));
	ck_assert_ptr_eq(ptl, l1);
	ck_assert(vs_spin_is_locked(l1));
	ck_assert(!vs_spin_is_locked(l3));
	vs_pte_unmap_unlock(ptl);
	ck_assert(!vs_spin_is_locked(l1));
	ck_assert_ptr_null(vs_pte_offset_map_lock(&split, BASE +
						  VS_PUD_SIZE, &ptl));

	pt_new(&mm, 0);
	ck_assert_ptr_nonnull(vs_pte_alloc(&mm, BASE));
	ck_assert_ptr_nonnull(vs_pte_alloc(&mm, BASE + VS_PGDIR_SIZE));
	ck_assert_ptr_eq(vs_pte_lockptr(&mm, BASE), &mm.mm_ptl);
	ck_assert_ptr_eq(vs_pte_lockptr(&mm, BASE + VS_PGDIR_SIZE),
			 &mm.mm_ptl);
	ck_assert_ptr_null(vs_pte_lockptr(&mm, BASE + VS_PMD_SIZE));
	ptep = vs_pte_offset_map_lock(&mm, BASE, &ptl);
	ck_assert_ptr_nonnull(ptep);
	ck_assert_ptr_eq(ptl, &mm.mm_ptl);
	vs_pte_unmap_unlock(ptl);
	vs_pgtable_destroy(&split);
	vs_pgtable_destroy(&mm);
}
END_TEST

static int wrprotect_fn(vs_atomic64_t *pte, unsigned long addr, void *arg)
{
	(void)addr;
	(*(int *)arg)++;
	vs_set_pte(pte, vs_pte_wrprotect(vs_ptep_get(pte)));
	return 0;
}

static int stop_fn(vs_atomic64_t *pte, unsigned long addr, void *arg)
{
	(void)pte;
	if (++*(int *)arg == 3)
		return (int)(addr >> VS_PAGE_SHIFT & 0xff) + 1;
	return 0;
}

/* walk visits present PTEs only, in order, may rewrite them, stops on
 * a nonzero return. */
START_TEST(pgtable_walk)
{
	struct vs_pgtable pt;
	unsigned long a;
	int n = 0;

	pt_new(&pt, 1);
	for (a = BASE; a < BASE + 2 * VS_PMD_SIZE; a += 16 * VS_PAGE_SIZE)
		set_pte(&pt, a);
	ck_assert_ptr_nonnull(vs_pte_alloc(&pt, BASE + VS_PUD_SIZE));
	ck_assert_int_eq(vs_pgtable_walk(&pt, BASE, BASE + VS_PGDIR_SIZE,
					 wrprotect_fn, &n), 0);
	ck_assert_int_eq(n, 64);
	for (a = BASE; a < BASE + 2 * VS_PMD_SIZE; a += 16 * VS_PAGE_SIZE)
		ck_assert(!vs_pte_write(vs_test_read64(vs_pte_offset(&pt,
								     a))));
	n = 0;
	ck_assert_int_eq(vs_pgtable_walk(&pt, BASE + VS_PAGE_SIZE,
					 BASE + VS_PMD_SIZE, count_fn, &n), 0);
	ck_assert_int_eq(n, 31);
	n = 0;
	ck_assert_int_eq(vs_pgtable_walk(&pt, BASE, VS_TASK_SIZE, stop_fn,
					 &n), 32 + 1);
	ck_assert_int_eq(n, 3);
	vs_zap_range(&pt, 0, VS_TASK_SIZE, NULL, NULL);
	vs_pgtable_destroy(&pt);
}
END_TEST

/* ---- speculative walkers against a writer ------------------------------- */

#define NR_ADDRS 64

struct spec_test {
	struct vs_pgtable pt;
	unsigned long addr[NR_ADDRS];
	vs_atomic32_t stop;
	vs_atomic32_t readers_in;
};

struct spec_reader {
	struct spec_test *t;
	uint64_t reads, hits, bad, locked;
	uint64_t first_bad;
};

/* Spread over 4 PUD entries x 4 PMD entries x 4 pages. */
static unsigned long spec_addr(int i)
{
	return BASE + (unsigned long)(i % 4) * VS_PUD_SIZE +
	       (unsigned long)(i / 4 % 4) * VS_PMD_SIZE +
	       (unsigned long)(i / 16) * 3 * VS_PAGE_SIZE;
}

static void spec_check(struct spec_reader *r, unsigned long addr,
		       uint64_t v)
{
	if (v == 0)
		return;
	r->hits++;
	if (v != vs_mk_pte(pfn_for(addr), PTE_FLAGS) && !r->bad++)
		r->first_bad = v;
}

static void spec_read_one(struct spec_reader *r, unsigned long addr, int i)
{
	vs_atomic64_t *ptep;
	vs_spinlock_t *ptl;

	if (i % 4 == 0) {
		/* Take the PTL of a table that may be unlinked meanwhile. */
		ptep = vs_pte_offset_map_lock(&r->t->pt, addr, &ptl);
		if (ptep) {
			spec_check(r, addr, vs_ptep_get(ptep));
			vs_pte_unmap_unlock(ptl);
			r->locked++;
		}
		return;
	}
	ptep = vs_pte_offset(&r->t->pt, addr);
	if (!ptep)
		return;
	spec_check(r, addr, vs_ptep_get_lockless(ptep));
	/* Linger in the table: a premature free would show. */
	vs_test_relax(16);
	spec_check(r, addr, vs_ptep_get_lockless(ptep));
}

static void *spec_reader_fn(void *arg)
{
	struct spec_reader *r = arg;
	struct spec_test *t = r->t;
	int i = 0;

	attach();
	vs_fetch_add(&t->readers_in, 1);
	while (!vs_read_once(&t->stop)) {
		vs_rcu_read_lock();
		spec_read_one(r, t->addr[i % NR_ADDRS], i);
		spec_read_one(r, t->addr[(i * 7 + 3) % NR_ADDRS], i + 1);
		vs_rcu_read_unlock();
		vs_rcu_quiescent_state();
		r->reads++;
		i++;
	}
	return NULL;
}

/* The writer: map every address, zap them all (tables go through RCU). */
static int spec_writer(struct spec_test *t)
{
	unsigned long end = BASE + 4 * VS_PUD_SIZE;
	int64_t deadline = vs_test_now_ns() + vs_test_run_ns(700);
	int round, rounds = vs_test_scale(3000), i;

	for (round = 0; round < rounds; round++) {
		for (i = 0; i < NR_ADDRS; i++)
			set_pte(&t->pt, t->addr[i]);
		ck_assert_uint_eq(vs_zap_range(&t->pt, BASE, end, NULL, NULL),
				  NR_ADDRS);
		ck_assert_int_eq(vs_free_pgd_range(&t->pt, BASE, end, BASE,
						   end), 0);
		vs_rcu_quiescent_state();
		if (vs_test_now_ns() > deadline)
			break;
	}
	return round;
}

static void run_spec(int split)
{
	struct spec_reader r[NR_READERS];
	pthread_t tid[NR_READERS];
	struct spec_test *t = calloc(1, sizeof(*t));
	int k, rounds;

	ck_assert_ptr_nonnull(t);
	pt_new(&t->pt, split);
	for (k = 0; k < NR_ADDRS; k++)
		t->addr[k] = spec_addr(k);
	for (k = 0; k < NR_READERS; k++) {
		r[k] = (struct spec_reader){ .t = t };
		vs_test_thread_create(&tid[k], spec_reader_fn, &r[k]);
	}
	ck_assert(vs_test_wait_eq(&t->readers_in, NR_READERS,
				  VS_TEST_WAIT_NS));
	rounds = spec_writer(t);
	vs_store_release(&t->stop, 1);
	for (k = 0; k < NR_READERS; k++)
		vs_test_thread_join(tid[k]);
	vs_rcu_barrier();
	for (k = 0; k < NR_READERS; k++) {
		ck_assert_msg(r[k].bad == 0, "reader %d: %llu bad PTEs "
			      "(first %#llx)", k, (unsigned long long)r[k].bad,
			      (unsigned long long)r[k].first_bad);
		ck_assert_uint_gt(r[k].reads, 0);
	}
	/* Only the PGD and the PUD page of BASE (it spans 512 GiB). */
	ck_assert_uint_eq(vs_pgtable_pages(&t->pt), 2);
	if (getenv("VS_TEST_VERBOSE"))
		fprintf(stderr, "pgtable spec (%s): %d rounds, reads %llu/%llu "
			"hits %llu/%llu locked %llu/%llu\n",
			split ? "split" : "mm", rounds,
			(unsigned long long)r[0].reads,
			(unsigned long long)r[1].reads,
			(unsigned long long)r[0].hits,
			(unsigned long long)r[1].hits,
			(unsigned long long)r[0].locked,
			(unsigned long long)r[1].locked);
	vs_pgtable_destroy(&t->pt);
	free(t);
}

/* Walkers under rcu_read_lock while the writer frees tables: split PTL. */
START_TEST(pgtable_spec_walk_split)
{
	run_spec(1);
}
END_TEST

/* The same with the per-mm PTL. */
START_TEST(pgtable_spec_walk_mm)
{
	run_spec(0);
}
END_TEST

/* ---- racing allocators -------------------------------------------------- */

#define RACE_ROUNDS 200 /* distinct PGD entries: < 256 */

struct race_test {
	struct vs_pgtable pt;
	vs_atomic32_t arrive[2];
	vs_atomic64_t *slot[2][RACE_ROUNDS];
	int rounds;
	int timeout;
};

struct race_thread {
	struct race_test *t;
	int id;
};

static unsigned long race_addr(int round)
{
	return ((unsigned long)round << VS_PGDIR_SHIFT) + 0x1234000;
}

/* Both threads enter round @round together (bounded spin). */
static int race_meet(struct race_test *t, int id, int round)
{
	int64_t end = vs_test_now_ns() + VS_TEST_WAIT_NS;

	vs_store_release(&t->arrive[id], (uint32_t)round + 1);
	while (vs_load_acquire(&t->arrive[!id]) < (uint32_t)round + 1) {
		if (vs_test_now_ns() > end)
			return 0;
		vs_cpu_relax();
	}
	return 1;
}

static void *race_fn(void *arg)
{
	struct race_thread *me = arg;
	struct race_test *t = me->t;
	int round;

	attach();
	for (round = 0; round < t->rounds; round++) {
		if (!race_meet(t, me->id, round)) {
			vs_write_once(&t->arrive[me->id], UINT32_MAX);
			t->timeout = 1;
			return NULL;
		}
		t->slot[me->id][round] = vs_pte_alloc(&t->pt,
						      race_addr(round));
	}
	return NULL;
}

/* Two threads allocate the same address at once, round after round:
 * one set of tables wins, the loser's is freed (LSan would report it). */
START_TEST(pgtable_alloc_race)
{
	struct race_thread th[2];
	pthread_t tid[2];
	struct race_test *t = calloc(1, sizeof(*t));
	int k;

	ck_assert_ptr_nonnull(t);
	pt_new(&t->pt, 1);
	t->rounds = RACE_ROUNDS;
	for (k = 0; k < 2; k++) {
		vs_atomic_init(&t->arrive[k], 0);
		th[k] = (struct race_thread){ t, k };
		vs_test_thread_create(&tid[k], race_fn, &th[k]);
	}
	for (k = 0; k < 2; k++)
		vs_test_thread_join(tid[k]);
	ck_assert(!t->timeout);
	for (k = 0; k < t->rounds; k++) {
		ck_assert_ptr_nonnull(t->slot[0][k]);
		ck_assert_ptr_eq(t->slot[0][k], t->slot[1][k]);
		ck_assert_ptr_eq(t->slot[0][k],
				 vs_pte_offset(&t->pt, race_addr(k)));
	}
	ck_assert_uint_eq(vs_pgtable_pages(&t->pt), 1 + 3 * RACE_ROUNDS);
	vs_pgtable_destroy(&t->pt);
	free(t);
}
END_TEST

Suite *pgtable_suite(void)
{
	Suite *s = suite_create("pgtable");

	vs_test_add(vs_test_tcase(s, "basic"), pgtable_entry_helpers,
		    pgtable_set_flags, pgtable_alloc_offset, pgtable_noncanonical,
		    pgtable_zap_frees_tables, pgtable_free_pgd_range,
		    pgtable_ptl, pgtable_walk);
	vs_test_add_loop(vs_test_tcase(s, "reclaim"), 2, pgtable_zap_reclaim);
	vs_test_add(vs_test_tcase(s, "concurrent"), pgtable_spec_walk_split,
		    pgtable_spec_walk_mm, pgtable_alloc_race);
	return s;
}
