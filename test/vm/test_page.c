/* SPDX-License-Identifier: MIT */
/*
 * Tests for vmsim/page.h: exhaustion and reuse, reference and mapping
 * counts, the zero page, pfn conversion, pool teardown, exact free-page
 * accounting, and concurrent allocation through the per-slot caches
 * with no page handed out twice.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/atomic.h>
#include <vmsim/page.h>
#include <vmsim/thread.h>

#include "test.h"

#define SMALL_POOL 100
#define MT_POOL 128
#define MT_THREADS 4
#define MT_HOLD 48 /* 4 x 48 > MT_POOL: threads run the pool dry */

static void attach(void)
{
	if (vs_thread_attach() != 0)
		abort();
}

static struct vs_page_pool *pool_new(size_t n)
{
	struct vs_page_pool *pool = NULL;

	ck_assert_int_eq(vs_page_pool_create(&pool, n), 0);
	ck_assert_ptr_nonnull(pool);
	return pool;
}

static int page_is_zero(struct vs_page *page)
{
	const unsigned char *p = page->data;
	size_t i;

	for (i = 0; i < VS_PAGE_SIZE; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Bad sizes are refused; the limits themselves work. */
START_TEST(page_create_invalid)
{
	struct vs_page_pool *pool = NULL;

	ck_assert_int_eq(vs_page_pool_create(&pool, 0), -EINVAL);
	ck_assert_int_eq(vs_page_pool_create(&pool, SIZE_MAX), -EINVAL);
	ck_assert_int_eq(vs_page_pool_create(&pool,
					     VS_PAGE_POOL_MAX_PAGES + 1),
			 -EINVAL);
	ck_assert_int_eq(vs_page_pool_create(NULL, 1), -EINVAL);
	ck_assert_ptr_null(pool);
	ck_assert_int_eq(vs_page_pool_destroy(NULL), -EINVAL);
	pool = pool_new(1);
	ck_assert_uint_eq(vs_page_pool_size(pool), 1);
	ck_assert_int_eq(vs_page_pool_destroy(pool), 0);
}
END_TEST

/* Allocation runs dry at exactly nr_pages, then reuses freed pages;
 * free_pages is exact at every step. */
START_TEST(page_alloc_exhaust)
{
	struct vs_page_pool *pool = pool_new(SMALL_POOL);
	struct vs_page *pages[SMALL_POOL], *p;
	int i, j;

	ck_assert_int_eq(vs_thread_attach(), 0);
	ck_assert_uint_eq(vs_page_pool_free_pages(pool), SMALL_POOL);
	for (i = 0; i < SMALL_POOL; i++) {
		pages[i] = vs_alloc_page(pool);
		ck_assert_ptr_nonnull(pages[i]);
		ck_assert_uint_eq(vs_page_count(pages[i]), 1);
		ck_assert_uint_eq(vs_page_mapcount(pages[i]), 0);
		ck_assert_ptr_ne(pages[i], vs_zero_page(pool));
		for (j = 0; j < i; j++)
			ck_assert_ptr_ne(pages[i], pages[j]);
		ck_assert_uint_eq(vs_page_pool_free_pages(pool),
				  SMALL_POOL - i - 1);
	}
	ck_assert_ptr_null(vs_alloc_page(pool));
	ck_assert_ptr_null(vs_alloc_page(pool));

	vs_put_page(pool, pages[7]);
	ck_assert_uint_eq(vs_page_pool_free_pages(pool), 1);
	p = vs_alloc_page(pool);
	ck_assert_ptr_eq(p, pages[7]);
	ck_assert_uint_eq(vs_page_count(p), 1);
	ck_assert_ptr_null(vs_alloc_page(pool));

	for (i = 0; i < SMALL_POOL; i++) {
		vs_put_page(pool, pages[i]);
		ck_assert_uint_eq(vs_page_pool_free_pages(pool), i + 1);
	}
	/* Everything again, now through the slot cache and the zone. */
	for (i = 0; i < SMALL_POOL; i++)
		ck_assert_ptr_nonnull(pages[i] = vs_alloc_page(pool));
	ck_assert_ptr_null(vs_alloc_page(pool));
	for (i = 0; i < SMALL_POOL; i++)
		vs_put_page(pool, pages[i]);
	ck_assert_uint_eq(vs_page_pool_free_pages(pool), SMALL_POOL);
	ck_assert_int_eq(vs_page_pool_destroy(pool), 0);
}
END_TEST

/* A page is freed by its last put only; mapcount is independent. */
START_TEST(page_refcount_mapcount)
{
	struct vs_page_pool *pool = pool_new(4);
	struct vs_page *p = vs_alloc_page(pool);

	ck_assert_ptr_nonnull(p);
	vs_get_page(p);
	vs_get_page(p);
	ck_assert_uint_eq(vs_page_count(p), 3);
	ck_assert(vs_get_page_unless_zero(p));
	ck_assert_uint_eq(vs_page_count(p), 4);
	vs_page_add_mapcount(p);
	vs_page_add_mapcount(p);
	ck_assert_uint_eq(vs_page_mapcount(p), 2);
	vs_page_remove_mapcount(p);
	vs_page_remove_mapcount(p);
	ck_assert_uint_eq(vs_page_mapcount(p), 0);

	vs_page_set_flags(p, VS_PG_ANON | VS_PG_DIRTY);
	ck_assert(vs_page_test_flags(p, VS_PG_DIRTY));
	vs_page_clear_flags(p, VS_PG_DIRTY);
	ck_assert(!vs_page_test_flags(p, VS_PG_DIRTY));
	ck_assert(vs_page_test_flags(p, VS_PG_ANON));

	vs_put_page(pool, p);
	vs_put_page(pool, p);
	vs_put_page(pool, p);
	ck_assert_uint_eq(vs_page_count(p), 1);
	ck_assert_uint_eq(vs_page_pool_free_pages(pool), 3);
	vs_put_page(pool, p);
	ck_assert_uint_eq(vs_page_count(p), 0);
	ck_assert(!vs_get_page_unless_zero(p));
	ck_assert_uint_eq(vs_page_pool_free_pages(pool), 4);

	/* A reallocated page starts with clean flags. */
	p = vs_alloc_page(pool);
	ck_assert(!vs_page_test_flags(p, VS_PG_ANON | VS_PG_DIRTY));
	vs_put_page(pool, p);
	ck_assert_int_eq(vs_page_pool_destroy(pool), 0);
}
END_TEST

/* The zero page: pfn 0, flagged, never handed out, never freed, zero. */
START_TEST(page_zero_page)
{
	struct vs_page_pool *pool = pool_new(8);
	struct vs_page *z = vs_zero_page(pool), *p[8];
	uint32_t base;
	int i;

	ck_assert_ptr_nonnull(z);
	ck_assert_uint_eq(vs_page_to_pfn(pool, z), 0);
	ck_assert(vs_page_test_flags(z, VS_PG_ZERO));
	ck_assert(page_is_zero(z));
	base = vs_page_count(z);
	ck_assert_uint_ge(base, 1);
	for (i = 0; i < 1000; i++)
		vs_get_page(z);
	for (i = 0; i < 1000; i++)
		vs_put_page(pool, z);
	ck_assert_uint_eq(vs_page_count(z), base);
	ck_assert_uint_eq(vs_page_pool_free_pages(pool), 8);

	for (i = 0; i < 8; i++) {
		p[i] = vs_alloc_page(pool);
		ck_assert_ptr_ne(p[i], z);
		memset(p[i]->data, 0xa5, VS_PAGE_SIZE);
	}
	/* A copy of the zero page is zero (the COW of a read fault). */
	vs_copy_page(p[0], z);
	ck_assert(page_is_zero(p[0]));
	for (i = 0; i < 8; i++)
		vs_put_page(pool, p[i]);
	ck_assert(page_is_zero(z));
	ck_assert_uint_eq(vs_page_count(z), base);

	/* A reference on the zero page does not hold the pool. */
	vs_get_page(z);
	ck_assert_int_eq(vs_page_pool_destroy(pool), 0);
}
END_TEST

/* pfn <-> page round trips; out of range is NULL. */
START_TEST(page_pfn)
{
	struct vs_page_pool *pool = pool_new(16);
	struct vs_page *p;
	unsigned long pfn;

	ck_assert_ptr_eq(vs_pfn_to_page(pool, 0), vs_zero_page(pool));
	for (pfn = 1; pfn <= 16; pfn++) {
		p = vs_pfn_to_page(pool, pfn);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq(vs_page_to_pfn(pool, p), pfn);
	}
	ck_assert_ptr_null(vs_pfn_to_page(pool, 17));
	ck_assert_ptr_null(vs_pfn_to_page(pool, ~0UL));
	p = vs_alloc_page(pool);
	pfn = vs_page_to_pfn(pool, p);
	ck_assert_uint_ge(pfn, 1);
	ck_assert_uint_le(pfn, 16);
	ck_assert_ptr_eq(vs_pfn_to_page(pool, pfn), p);
	/* Frames are distinct, page-aligned and page-sized apart. */
	ck_assert_uint_eq((uintptr_t)p->data % VS_PAGE_SIZE, 0);
	ck_assert_int_eq((char *)vs_pfn_to_page(pool, 2)->data -
			 (char *)vs_pfn_to_page(pool, 1)->data,
			 (long)VS_PAGE_SIZE);
	vs_put_page(pool, p);
	ck_assert_int_eq(vs_page_pool_destroy(pool), 0);
}
END_TEST

/* destroy refuses while a page is referenced, and frees nothing. */
START_TEST(page_destroy_busy)
{
	struct vs_page_pool *pool = pool_new(4);
	struct vs_page *p = vs_alloc_page(pool);

	ck_assert_int_eq(vs_page_pool_destroy(pool), -EBUSY);
	vs_get_page(p);
	vs_put_page(pool, p);
	ck_assert_int_eq(vs_page_pool_destroy(pool), -EBUSY);
	/* Still usable after the refusal. */
	memset(p->data, 1, VS_PAGE_SIZE);
	vs_put_page(pool, p);
	ck_assert_int_eq(vs_page_pool_destroy(pool), 0);
}
END_TEST

/* clear and copy move whole frames. */
START_TEST(page_clear_copy)
{
	struct vs_page_pool *pool = pool_new(2);
	struct vs_page *a = vs_alloc_page(pool), *b = vs_alloc_page(pool);
	size_t i;

	for (i = 0; i < VS_PAGE_SIZE; i++)
		((unsigned char *)a->data)[i] = (unsigned char)(i * 7 + 1);
	vs_copy_page(b, a);
	ck_assert_int_eq(memcmp(a->data, b->data, VS_PAGE_SIZE), 0);
	vs_clear_page(a);
	ck_assert(page_is_zero(a));
	ck_assert(!page_is_zero(b));
	vs_put_page(pool, a);
	vs_put_page(pool, b);
	ck_assert_int_eq(vs_page_pool_destroy(pool), 0);
}
END_TEST

/* ---- concurrent alloc/free ---------------------------------------------- */

struct mt_test {
	struct vs_page_pool *pool;
	vs_atomic32_t owner[MT_POOL + 1]; /* per pfn: 0 free, else tid + 1 */
	vs_atomic32_t started;
	int64_t deadline;
	int iters;
};

struct mt_thread {
	struct mt_test *t;
	uint32_t id;
	uint64_t allocs, frees, nulls, double_handout, bad_data;
};

/* Stamp @p with its owner: a second owner would overwrite or see it. */
static void mt_stamp(struct vs_page *p, uint32_t id, uint64_t seq)
{
	uint64_t *w = p->data;

	w[0] = id;
	w[1] = seq;
	w[VS_PAGE_SIZE / 8 - 1] = seq ^ id;
}

static int mt_stamp_ok(struct vs_page *p, uint32_t id, uint64_t seq)
{
	uint64_t *w = p->data;

	return w[0] == id && w[1] == seq && w[VS_PAGE_SIZE / 8 - 1] ==
	       (seq ^ id);
}

static void mt_free(struct mt_thread *me, struct vs_page *p, uint64_t seq)
{
	struct mt_test *t = me->t;
	unsigned long pfn = vs_page_to_pfn(t->pool, p);
	uint32_t mine = me->id + 1;

	if (!mt_stamp_ok(p, me->id, seq))
		me->bad_data++;
	if (!vs_cmpxchg(&t->owner[pfn], &mine, 0))
		me->double_handout++;
	vs_put_page(t->pool, p);
	me->frees++;
}

static void *mt_fn(void *arg)
{
	struct mt_thread *me = arg;
	struct mt_test *t = me->t;
	struct vs_page *held[MT_HOLD];
	uint64_t seq[MT_HOLD], n = 0;
	uint32_t free_id;
	int i, k, nr = 0, want;

	attach();
	vs_fetch_add(&t->started, 1);
	for (i = 0; i < t->iters; i++) {
		/* Not before the first round: a thread that starts late on
		 * a loaded machine still takes part. */
		if (i > 0 && (i & 63) == 0 && vs_test_now_ns() > t->deadline)
			break;
		want = (int)((i * 7 + me->id * 13) % MT_HOLD) + 1;
		while (nr < want) {
			struct vs_page *p = vs_alloc_page(t->pool);

			if (!p) {
				me->nulls++;
				break;
			}
			free_id = 0;
			if (!vs_cmpxchg(&t->owner[vs_page_to_pfn(t->pool, p)],
					&free_id, me->id + 1))
				me->double_handout++;
			mt_stamp(p, me->id, ++n);
			held[nr] = p;
			seq[nr++] = n;
			me->allocs++;
		}
		for (k = (i & 1) ? 0 : nr / 2; k < nr; k++)
			mt_free(me, held[k], seq[k]);
		nr = (i & 1) ? 0 : nr / 2;
	}
	while (nr > 0) {
		nr--;
		mt_free(me, held[nr], seq[nr]);
	}
	return NULL;
}

/* 4 threads allocate and free through their slot caches, running the
 * pool dry on purpose: no page is ever owned twice, and every page is
 * free again at the end. */
START_TEST(page_concurrent)
{
	struct mt_thread th[MT_THREADS];
	pthread_t tid[MT_THREADS];
	struct mt_test *t = calloc(1, sizeof(*t));
	uint64_t allocs = 0, frees = 0, nulls = 0;
	int i;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(vs_thread_attach(), 0);
	t->pool = pool_new(MT_POOL);
	t->iters = vs_test_scale(20000);
	t->deadline = vs_test_now_ns() + vs_test_run_ns(1000);
	for (i = 0; i < MT_THREADS; i++) {
		th[i] = (struct mt_thread){ .t = t, .id = (uint32_t)i };
		vs_test_thread_create(&tid[i], mt_fn, &th[i]);
	}
	for (i = 0; i < MT_THREADS; i++)
		vs_test_thread_join(tid[i]);
	for (i = 0; i < MT_THREADS; i++) {
		ck_assert_msg(th[i].double_handout == 0,
			      "thread %d: %llu pages handed out twice", i,
			      (unsigned long long)th[i].double_handout);
		ck_assert_msg(th[i].bad_data == 0,
			      "thread %d: %llu pages overwritten by another",
			      i, (unsigned long long)th[i].bad_data);
		ck_assert_uint_gt(th[i].allocs, 0);
		allocs += th[i].allocs;
		frees += th[i].frees;
		nulls += th[i].nulls;
	}
	ck_assert_uint_eq(allocs, frees);
	for (i = 0; i <= MT_POOL; i++)
		ck_assert_uint_eq(vs_test_read32(&t->owner[i]), 0);
	ck_assert_uint_eq(vs_page_pool_free_pages(t->pool), MT_POOL);
	/* The caches of exited threads' slots hold pages: all reachable. */
	for (i = 0; i < MT_POOL; i++)
		ck_assert_ptr_nonnull(vs_alloc_page(t->pool));
	ck_assert_ptr_null(vs_alloc_page(t->pool));
	ck_assert_uint_eq(vs_page_pool_free_pages(t->pool), 0);
	for (i = 1; i <= MT_POOL; i++)
		vs_put_page(t->pool, vs_pfn_to_page(t->pool, (unsigned long)i));
	ck_assert_uint_eq(vs_page_pool_free_pages(t->pool), MT_POOL);
	ck_assert_int_eq(vs_page_pool_destroy(t->pool), 0);
	if (getenv("VS_TEST_VERBOSE"))
		fprintf(stderr, "page concurrent: %llu allocs, %llu NULL\n",
			(unsigned long long)allocs, (unsigned long long)nulls);
	free(t);
}
END_TEST

Suite *page_suite(void)
{
	Suite *s = suite_create("page");

	vs_test_add(vs_test_tcase(s, "basic"), page_create_invalid,
		    page_alloc_exhaust, page_refcount_mapcount, page_zero_page,
		    page_pfn, page_destroy_busy, page_clear_copy);
	vs_test_add(vs_test_tcase(s, "concurrent"), page_concurrent);
	return s;
}
