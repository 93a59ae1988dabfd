/* SPDX-License-Identifier: MIT */
/*
 * Tests for vmsim/vma_tree.h: the edge cases and error codes of every
 * operation, a randomized differential test against a sorted array with
 * the balance invariants checked after each update, failed allocations
 * that must leave the tree unchanged, and RCU readers that walk the tree
 * while a writer changes it.
 *
 * Each test runs in its own process (Check's fork mode) with the main
 * thread attached; it is the only writer.  Every test empties its trees
 * and waits for the RCU callbacks, then checks that no node is left.
 */
#include <check.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/atomic.h>
#include <vmsim/fail.h>
#include <vmsim/rcu.h>
#include <vmsim/thread.h>
#include <vmsim/vma_tree.h>

#include "hooks.h"
#include "test.h"

#define FAKE_MAGIC UINT64_C(0x7a6d61766d617601)

/* A fake vma: the tree only stores the pointer; it records its range. */
struct vs_vma {
	uint64_t magic;
	unsigned long start;
	unsigned long end;
};

static struct vs_vma fake(unsigned long start, unsigned long end)
{
	struct vs_vma v = { FAKE_MAGIC, start, end };

	return v;
}

/* xorshift64*: deterministic and cheap, also in reader threads. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static void setup(void)
{
	ck_assert_int_eq(vs_thread_attach(), 0);
}

/* Empty @t, wait for its RCU callbacks, and check that nothing leaked. */
static void teardown_tree(struct vs_vma_tree *t)
{
	vs_vma_tree_destroy(t);
	ck_assert_uint_eq(t->count, 0);
	vs_rcu_barrier();
	ck_assert_int_eq(vs__vma_tree_live_nodes(), 0);
}

/* Assert that vs_vma_tree_find(@addr) is @want with range [@s, @e). */
static void expect_find(struct vs_vma_tree *t, unsigned long addr,
			struct vs_vma *want)
{
	unsigned long s = 1, e = 1;
	struct vs_vma *v = vs_vma_tree_find(t, addr, &s, &e);

	ck_assert_ptr_eq(v, want);
	if (want) {
		ck_assert_uint_eq(s, want->start);
		ck_assert_uint_eq(e, want->end);
	} else {
		ck_assert_uint_eq(s, 1);
		ck_assert_uint_eq(e, 1);
	}
}

static void expect_prev(struct vs_vma_tree *t, unsigned long addr,
			struct vs_vma *want)
{
	unsigned long s = 1, e = 1;
	struct vs_vma *v = vs_vma_tree_prev(t, addr, &s, &e);

	ck_assert_ptr_eq(v, want);
	if (want) {
		ck_assert_uint_eq(s, want->start);
		ck_assert_uint_eq(e, want->end);
	}
}

static void insert_fake(struct vs_vma_tree *t, struct vs_vma *v)
{
	ck_assert_int_eq(vs_vma_tree_insert(t, v->start, v->end, v), 0);
	ck_assert_int_eq(vs__vma_tree_check(t), 0);
}

/* ---- edge cases ------------------------------------------------------- */

START_TEST(vma_tree_empty)
{
	struct vs_vma_tree t;
	struct vs_vma a = fake(10, 20);

	setup();
	ck_assert_int_eq(vs_vma_tree_init(NULL), -EINVAL);
	ck_assert_int_eq(vs_vma_tree_init(&t), 0);
	ck_assert_uint_eq(t.count, 0);
	ck_assert_int_eq(vs__vma_tree_check(&t), 0);
	expect_find(&t, 0, NULL);
	expect_find(&t, ULONG_MAX, NULL);
	expect_prev(&t, ULONG_MAX, NULL);
	ck_assert_ptr_null(vs_vma_tree_lookup(&t, 0));
	ck_assert_int_eq(vs_vma_tree_erase(&t, 0), -ENOENT);
	ck_assert_int_eq(vs_vma_tree_replace(&t, 0, 10, 20, &a), -ENOENT);
	ck_assert_ptr_null(vs_vma_tree_find(NULL, 0, NULL, NULL));
	ck_assert_ptr_null(vs_vma_tree_lookup(NULL, 0));
	ck_assert_ptr_null(vs_vma_tree_prev(NULL, 0, NULL, NULL));
	ck_assert_int_eq(vs_vma_tree_erase(NULL, 0), -EINVAL);
	vs_vma_tree_destroy(NULL);
	teardown_tree(&t);
}
END_TEST

START_TEST(vma_tree_insert_errors)
{
	struct vs_vma_tree t;
	struct vs_vma a = fake(100, 200), b = fake(300, 400);
	struct vs_vma *x = &a;
	static const unsigned long overlap[][2] = {
		{ 100, 200 }, { 50, 101 }, { 199, 250 }, { 120, 130 },
		{ 0, 1000 }, { 150, 350 }, { 399, 400 }, { 0, ULONG_MAX },
	};
	size_t i;

	setup();
	vs_vma_tree_init(&t);
	insert_fake(&t, &a);
	insert_fake(&t, &b);
	ck_assert_int_eq(vs_vma_tree_insert(NULL, 1, 2, x), -EINVAL);
	ck_assert_int_eq(vs_vma_tree_insert(&t, 1, 2, NULL), -EINVAL);
	ck_assert_int_eq(vs_vma_tree_insert(&t, 2, 2, x), -EINVAL);
	ck_assert_int_eq(vs_vma_tree_insert(&t, 3, 2, x), -EINVAL);
	for (i = 0; i < VS_ARRAY_SIZE(overlap); i++)
		ck_assert_int_eq(vs_vma_tree_insert(&t, overlap[i][0],
						    overlap[i][1], x), -EEXIST);
	ck_assert_uint_eq(t.count, 2);
	ck_assert_int_eq(vs__vma_tree_check(&t), 0);
	teardown_tree(&t);
}
END_TEST

/* Adjacent ranges touch without overlapping; ranges at both extremes. */
START_TEST(vma_tree_adjacent)
{
	struct vs_vma_tree t;
	struct vs_vma a = fake(0, 10), b = fake(10, 20), c = fake(20, 30);
	struct vs_vma top = fake(ULONG_MAX - 10, ULONG_MAX);

	setup();
	vs_vma_tree_init(&t);
	insert_fake(&t, &b);
	insert_fake(&t, &a);
	insert_fake(&t, &c);
	insert_fake(&t, &top);
	ck_assert_ptr_eq(vs_vma_tree_lookup(&t, 0), &a);
	ck_assert_ptr_eq(vs_vma_tree_lookup(&t, 9), &a);
	ck_assert_ptr_eq(vs_vma_tree_lookup(&t, 10), &b);
	ck_assert_ptr_eq(vs_vma_tree_lookup(&t, 19), &b);
	ck_assert_ptr_eq(vs_vma_tree_lookup(&t, 20), &c);
	ck_assert_ptr_null(vs_vma_tree_lookup(&t, 30));
	ck_assert_ptr_eq(vs_vma_tree_lookup(&t, ULONG_MAX - 1), &top);
	ck_assert_ptr_null(vs_vma_tree_lookup(&t, ULONG_MAX));
	expect_find(&t, 10, &b);
	expect_find(&t, ULONG_MAX - 1, &top);
	expect_find(&t, ULONG_MAX, NULL);
	expect_prev(&t, 0, NULL);
	expect_prev(&t, 1, &a);
	expect_prev(&t, 10, &a);
	expect_prev(&t, 11, &b);
	expect_prev(&t, ULONG_MAX, &top);
	teardown_tree(&t);
}
END_TEST

/* find: the lowest end above addr, across gaps, exact ends, the end. */
START_TEST(vma_tree_find_semantics)
{
	struct vs_vma_tree t;
	struct vs_vma a = fake(0x1000, 0x2000), b = fake(0x3000, 0x4000);

	setup();
	vs_vma_tree_init(&t);
	insert_fake(&t, &a);
	insert_fake(&t, &b);
	expect_find(&t, 0, &a);
	expect_find(&t, 0xfff, &a);
	expect_find(&t, 0x1000, &a);
	expect_find(&t, 0x1fff, &a);
	expect_find(&t, 0x2000, &b);	/* exact end: the next one */
	expect_find(&t, 0x2800, &b);	/* gap */
	expect_find(&t, 0x3fff, &b);
	expect_find(&t, 0x4000, NULL);	/* past the last */
	expect_find(&t, ULONG_MAX, NULL);
	ck_assert_ptr_eq(vs_vma_tree_find(&t, 0, NULL, NULL), &a);
	ck_assert_ptr_null(vs_vma_tree_lookup(&t, 0xfff));
	ck_assert_ptr_null(vs_vma_tree_lookup(&t, 0x2000));
	ck_assert_ptr_eq(vs_vma_tree_lookup(&t, 0x3000), &b);
	ck_assert_ptr_null(vs_vma_tree_lookup(&t, 0x4000));
	expect_prev(&t, 0x1000, NULL);
	expect_prev(&t, 0x1001, &a);
	expect_prev(&t, 0x3000, &a);
	expect_prev(&t, 0x3001, &b);
	ck_assert_ptr_eq(vs_vma_tree_prev(&t, 0x2000, NULL, NULL), &a);
	teardown_tree(&t);
}
END_TEST

START_TEST(vma_tree_erase)
{
	struct vs_vma_tree t;
	struct vs_vma a = fake(10, 20), b = fake(30, 40), c = fake(50, 60);

	setup();
	vs_vma_tree_init(&t);
	insert_fake(&t, &a);
	insert_fake(&t, &b);
	insert_fake(&t, &c);
	ck_assert_int_eq(vs_vma_tree_erase(&t, 31), -ENOENT); /* inside */
	ck_assert_int_eq(vs_vma_tree_erase(&t, 40), -ENOENT);	/* end */
	ck_assert_int_eq(vs_vma_tree_erase(&t, 0), -ENOENT);
	ck_assert_int_eq(vs_vma_tree_erase(&t, 30), 0);
	ck_assert_int_eq(vs__vma_tree_check(&t), 0);
	ck_assert_uint_eq(t.count, 2);
	ck_assert_int_eq(vs_vma_tree_erase(&t, 30), -ENOENT);
	ck_assert_ptr_null(vs_vma_tree_lookup(&t, 35));
	expect_find(&t, 20, &c);
	expect_prev(&t, 50, &a);
	/* The range is free again. */
	insert_fake(&t, &b);
	ck_assert_int_eq(vs_vma_tree_erase(&t, 10), 0);
	ck_assert_int_eq(vs_vma_tree_erase(&t, 50), 0);
	ck_assert_int_eq(vs_vma_tree_erase(&t, 30), 0);
	ck_assert_uint_eq(t.count, 0);
	ck_assert_ptr_null(vs_vma_tree_find(&t, 0, NULL, NULL));
	teardown_tree(&t);
}
END_TEST

START_TEST(vma_tree_replace)
{
	struct vs_vma_tree t;
	struct vs_vma a = fake(10, 20), b = fake(30, 40), c = fake(50, 60);
	struct vs_vma b2 = fake(25, 45), b3 = fake(70, 80), b4 = fake(0, 5);

	setup();
	vs_vma_tree_init(&t);
	insert_fake(&t, &a);
	insert_fake(&t, &b);
	insert_fake(&t, &c);
	ck_assert_int_eq(vs_vma_tree_replace(NULL, 30, 30, 40, &b),
			 -EINVAL);
	ck_assert_int_eq(vs_vma_tree_replace(&t, 30, 40, 40, &b), -EINVAL);
	ck_assert_int_eq(vs_vma_tree_replace(&t, 30, 30, 40, NULL), -EINVAL);
	ck_assert_int_eq(vs_vma_tree_replace(&t, 31, 30, 40, &b), -ENOENT);
	/* Overlapping a neighbour, on either side. */
	ck_assert_int_eq(vs_vma_tree_replace(&t, 30, 19, 40, &b), -EEXIST);
	ck_assert_int_eq(vs_vma_tree_replace(&t, 30, 30, 51, &b), -EEXIST);
	ck_assert_int_eq(vs_vma_tree_replace(&t, 30, 0, 100, &b), -EEXIST);
	ck_assert_ptr_eq(vs_vma_tree_lookup(&t, 30), &b);
	/* Same pointer, same range: allowed. */
	ck_assert_int_eq(vs_vma_tree_replace(&t, 30, 30, 40, &b), 0);
	/* Grow around the old range, filling the gaps exactly. */
	ck_assert_int_eq(vs_vma_tree_replace(&t, 30, 20, 50, &b2), 0);
	b2 = fake(20, 50);
	ck_assert_int_eq(vs__vma_tree_check(&t), 0);
	expect_find(&t, 20, &b2);
	expect_find(&t, 19, &a);
	expect_prev(&t, 50, &b2);
	ck_assert_int_eq(vs_vma_tree_erase(&t, 30), -ENOENT);
	/* Move to another gap, beyond the last and before the first. */
	ck_assert_int_eq(vs_vma_tree_replace(&t, 20, 70, 80, &b3), 0);
	ck_assert_ptr_null(vs_vma_tree_lookup(&t, 25));
	expect_find(&t, 60, &b3);
	ck_assert_int_eq(vs_vma_tree_replace(&t, 70, 0, 5, &b4), 0);
	expect_find(&t, 0, &b4);
	expect_find(&t, 5, &a);
	ck_assert_uint_eq(t.count, 3);
	ck_assert_int_eq(vs__vma_tree_check(&t), 0);
	teardown_tree(&t);
}
END_TEST

/* The documented iteration visits every entry once, in order. */
START_TEST(vma_tree_iterate)
{
	struct vs_vma_tree t;
	struct vs_vma v[100];
	unsigned long s, e, last_end = 0;
	struct vs_vma *x;
	int i, n = 0;

	setup();
	vs_vma_tree_init(&t);
	for (i = 0; i < 100; i++) {
		int k = (i * 37) % 100;	/* scrambled insertion order */
		unsigned long b = (unsigned long)k * 100;

		v[k] = fake(b, b + 50);
		insert_fake(&t, &v[k]);
	}
	for (x = vs_vma_tree_find(&t, 0, &s, &e); x;
	     x = vs_vma_tree_find(&t, e, &s, &e)) {
		ck_assert_ptr_eq(x, &v[n]);
		ck_assert_uint_ge(s, last_end);
		last_end = e;
		n++;
	}
	ck_assert_int_eq(n, 100);
	teardown_tree(&t);
}
END_TEST

static int ilog2_ceil(unsigned long n)
{
	int l = 0;

	while ((1UL << l) < n)
		l++;
	return l;
}

/* Sorted insertion and erasure, the worst case of an unbalanced tree. */
START_TEST(vma_tree_sequential)
{
	int n = vs_test_scale(20000), i;
	struct vs_vma_tree t;
	struct vs_vma *v;

	setup();
	v = calloc((size_t)n, sizeof(*v));
	ck_assert_ptr_nonnull(v);
	vs_vma_tree_init(&t);
	for (i = 0; i < n; i++) {
		v[i] = fake((unsigned long)i * 2, (unsigned long)i * 2 + 1);
		ck_assert_int_eq(vs_vma_tree_insert(&t, v[i].start, v[i].end,
						    &v[i]), 0);
	}
	ck_assert_int_eq(vs__vma_tree_check(&t), 0);
	ck_assert_int_le(vs__vma_tree_height(&t),
			 2 * ilog2_ceil((unsigned long)n + 1));
	/* Erase every odd one, from the top down. */
	for (i = n - 1 - (n % 2 == 0 ? 0 : 1); i > 0; i -= 2)
		ck_assert_int_eq(vs_vma_tree_erase(&t, v[i].start), 0);
	ck_assert_int_eq(vs__vma_tree_check(&t), 0);
	ck_assert_uint_eq(t.count, (unsigned long)(n + 1) / 2);
	for (i = 0; i < n; i++)
		ck_assert_ptr_eq(vs_vma_tree_lookup(&t, v[i].start),
				 i % 2 ? NULL : &v[i]);
	teardown_tree(&t);
	free(v);
}
END_TEST

/* ---- differential test against a sorted array ------------------------- */

#define DIFF_SPACE (1UL << 16)
#define DIFF_MAXLEN 64

struct model {
	struct vs_vma **ent;	/* sorted by start */
	int nr;
};

/* Index of the first entry with end > @addr (nr when none). */
static int m_find(struct model *m, unsigned long addr)
{
	int lo = 0, hi = m->nr;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (m->ent[mid]->end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Index of the entry starting at @start, or -1. */
static int m_at(struct model *m, unsigned long start)
{
	int i = m_find(m, start);

	return i < m->nr && m->ent[i]->start == start ? i : -1;
}

static int m_overlaps(struct model *m, int skip, unsigned long s,
		      unsigned long e)
{
	int i = m_find(m, s);

	if (i == skip)
		i++;
	return i < m->nr && m->ent[i]->start < e;
}

static void m_del(struct model *m, int i)
{
	memmove(&m->ent[i], &m->ent[i + 1],
		(size_t)(m->nr - i - 1) * sizeof(m->ent[0]));
	m->nr--;
}

static void m_add(struct model *m, struct vs_vma *v)
{
	int i = m_find(m, v->start);

	memmove(&m->ent[i + 1], &m->ent[i],
		(size_t)(m->nr - i) * sizeof(m->ent[0]));
	m->ent[i] = v;
	m->nr++;
}

/* Compare find, lookup and prev at @addr with the model. */
static void diff_query(struct vs_vma_tree *t, struct model *m,
		       unsigned long addr)
{
	int i = m_find(m, addr), j;
	struct vs_vma *want = i < m->nr ? m->ent[i] : NULL;

	expect_find(t, addr, want);
	if (want && want->start > addr)
		want = NULL;
	ck_assert_ptr_eq(vs_vma_tree_lookup(t, addr), want);
	/* prev: the last entry starting below addr. */
	j = i < m->nr && m->ent[i]->start < addr ? i : i - 1;
	expect_prev(t, addr, j >= 0 ? m->ent[j] : NULL);
}

static void diff_iterate(struct vs_vma_tree *t, struct model *m)
{
	unsigned long s, e;
	struct vs_vma *v;
	int n = 0;

	for (v = vs_vma_tree_find(t, 0, &s, &e); v;
	     v = vs_vma_tree_find(t, e, &s, &e)) {
		ck_assert_int_lt(n, m->nr);
		ck_assert_ptr_eq(v, m->ent[n]);
		n++;
	}
	ck_assert_int_eq(n, m->nr);
}

static void diff_step(struct vs_vma_tree *t, struct model *m,
		      struct vs_vma *v, uint64_t *seed)
{
	unsigned long s = rnd(seed) % DIFF_SPACE;
	unsigned long e = s + 1 + rnd(seed) % DIFF_MAXLEN;
	int op = (int)(rnd(seed) % 10), i = -1, want;

	*v = fake(s, e);
	if (m->nr)
		i = (int)(rnd(seed) % (unsigned long)m->nr);
	if (op < 4 || i < 0) {		/* insert */
		want = m_overlaps(m, -1, s, e) ? -EEXIST : 0;
		ck_assert_int_eq(vs_vma_tree_insert(t, s, e, v), want);
		if (!want)
			m_add(m, v);
	} else if (op < 6) {		/* erase an entry */
		ck_assert_int_eq(vs_vma_tree_erase(t, m->ent[i]->start), 0);
		m_del(m, i);
	} else if (op < 7) {		/* erase anything */
		want = m_at(m, s) < 0 ? -ENOENT : 0;
		ck_assert_int_eq(vs_vma_tree_erase(t, s), want);
		if (!want)
			m_del(m, m_at(m, s));
	} else {			/* replace, sometimes nearby */
		if (op == 9) {
			s = m->ent[i]->start + rnd(seed) % 32;
			s = s >= 16 ? s - 16 : 0;
			e = s + 1 + rnd(seed) % DIFF_MAXLEN;
			*v = fake(s, e);
		}
		want = m_overlaps(m, i, s, e) ? -EEXIST : 0;
		ck_assert_int_eq(vs_vma_tree_replace(t, m->ent[i]->start, s,
						     e, v), want);
		if (!want) {
			m_del(m, i);
			m_add(m, v);
		}
	}
}

START_TEST(vma_tree_differential)
{
	int nops = vs_test_scale(10000), op, q;
	uint64_t seed = UINT64_C(0x9e3779b97f4a7c15) + (uint64_t)_i;
	struct vs_vma *pool;
	struct vs_vma_tree t;
	struct model m;

	setup();
	pool = calloc((size_t)nops, sizeof(*pool));
	m.ent = calloc((size_t)nops, sizeof(*m.ent));
	ck_assert(pool && m.ent);
	m.nr = 0;
	vs_vma_tree_init(&t);
	for (op = 0; op < nops; op++) {
		diff_step(&t, &m, &pool[op], &seed);
		ck_assert_msg(vs__vma_tree_check(&t) == 0,
			      "op %d (seed %d): invariant broken", op, _i);
		ck_assert_uint_eq(t.count, (unsigned long)m.nr);
		for (q = 0; q < 4; q++)
			diff_query(&t, &m, rnd(&seed) % (DIFF_SPACE + 128));
		if (m.nr) {
			struct vs_vma *v = m.ent[rnd(&seed) % m.nr];

			diff_query(&t, &m, v->start);
			diff_query(&t, &m, v->start - 1);
			diff_query(&t, &m, v->end);
			diff_query(&t, &m, v->end - 1);
		}
		if (op % 64 == 0)
			diff_iterate(&t, &m);
	}
	diff_iterate(&t, &m);
	teardown_tree(&t);
	free(m.ent);
	free(pool);
}
END_TEST

/* ---- allocation failures ---------------------------------------------- */

struct snap {
	unsigned long s[256], e[256];
	struct vs_vma *v[256];
	int nr;
	long live;
};

static void snap_take(struct vs_vma_tree *t, struct snap *sn)
{
	unsigned long s, e;
	struct vs_vma *v;

	sn->nr = 0;
	for (v = vs_vma_tree_find(t, 0, &s, &e); v;
	     v = vs_vma_tree_find(t, e, &s, &e)) {
		ck_assert_int_lt(sn->nr, 256);
		sn->s[sn->nr] = s;
		sn->e[sn->nr] = e;
		sn->v[sn->nr++] = v;
	}
	vs_rcu_barrier();
	sn->live = vs__vma_tree_live_nodes();
}

static void snap_same(struct vs_vma_tree *t, struct snap *before)
{
	struct snap now;

	ck_assert_int_eq(vs__vma_tree_check(t), 0);
	snap_take(t, &now);
	ck_assert_int_eq(now.nr, before->nr);
	ck_assert_int_eq(now.live, before->live);
	ck_assert(memcmp(now.s, before->s, sizeof(now.s[0]) * now.nr) == 0);
	ck_assert(memcmp(now.e, before->e, sizeof(now.e[0]) * now.nr) == 0);
	ck_assert(memcmp(now.v, before->v, sizeof(now.v[0]) * now.nr) == 0);
}

/* Run update @op with the nth allocation failing, for every n. */
static void enomem_op(struct vs_vma_tree *t, struct vs_vma *v, int op)
{
	static struct snap before;
	struct vs_fail_options fo = { .kinds = VS_FAIL_SLAB,
				      .cache = "vma_tree", .times = 1 };
	long nth;
	int err;

	snap_take(t, &before);
	for (nth = 0;; nth++) {
		fo.nth = (unsigned long)nth + 1;
		ck_assert_int_eq(vs_fail_set(&fo), 0);
		if (op == 0)
			err = vs_vma_tree_insert(t, v->start, v->end, v);
		else if (op == 1)
			err = vs_vma_tree_erase(t, 1000);
		else
			err = vs_vma_tree_replace(t, 2000, v->start, v->end,
						  v);
		ck_assert_int_eq(vs_fail_injected(), err ? 1 : 0);
		ck_assert_int_eq(vs_fail_set(NULL), 0);
		if (err == 0)
			break;
		ck_assert_int_eq(err, -ENOMEM);
		snap_same(t, &before);
	}
	ck_assert_int_gt(nth, 0);	/* at least one failure was seen */
}

START_TEST(vma_tree_enomem)
{
	struct vs_vma v[200], extra = fake(1500, 1510);
	struct vs_vma far = fake(300000, 300010), near = fake(1995, 2005);
	struct vs_vma_tree t;
	int i;

	setup();
	vs_vma_tree_init(&t);
	for (i = 0; i < 200; i++) {
		unsigned long s = (unsigned long)i * 1000;

		v[i] = fake(s, s + 10);
		insert_fake(&t, &v[i]);
	}
	enomem_op(&t, &extra, 0);	/* insert */
	enomem_op(&t, NULL, 1);		/* erase 1000 */
	enomem_op(&t, &near, 2);	/* replace 2000 in place */
	ck_assert_int_eq(vs_vma_tree_replace(&t, 1995, 2000, 2010, &v[2]), 0);
	enomem_op(&t, &far, 2);		/* replace 2000 far away */
	ck_assert_int_eq(vs__vma_tree_check(&t), 0);
	teardown_tree(&t);
}
END_TEST

/* ---- RCU readers against a writer ------------------------------------- */

/*
 * The writer inserts, erases and replaces ranges from a known set: slot i
 * covers [i * SLOT, (i + 1) * SLOT) and each of its variants lies inside
 * it and contains i * SLOT + MID.  Slot 0 is never erased, only replaced,
 * so a lookup of MID must always succeed: a replace is one update, with
 * no moment where neither entry is in the tree.  Readers check every
 * result against the fake vma it points to (a node seen half-written or
 * after it was freed gives a range that does not match) and walk the
 * tree.  Under ASan a node freed before its readers finished is a
 * use-after-free.
 */
#define NR_SLOTS 64
#define NR_VARIANTS 4
#define SLOT 0x1000UL
#define MID 0x800UL
#define NR_READERS 2

static const unsigned long variant[NR_VARIANTS][2] = {
	{ 0, SLOT }, { 0x100, 0x900 }, { MID, 0xc00 }, { MID - 1, MID + 1 },
};

struct rcu_test {
	struct vs_vma_tree tree;
	struct vs_vma vma[NR_SLOTS][NR_VARIANTS];
	vs_atomic32_t started;
	vs_atomic32_t stop;
	vs_atomic32_t errors;
	vs_atomic64_t iterations;
	uint64_t seed[NR_READERS];
};

static struct rcu_test rt;

static void reader_error(const char *what, unsigned long addr)
{
	/* Only the first one is printed; the main thread fails the test. */
	if (vs_fetch_add(&rt.errors, 1) == 0)
		fprintf(stderr, "vma_tree reader: %s at %#lx\n", what, addr);
}

/* Is @v one of the known fake vmas, with range [@s, @e)? */
static int vma_ok(struct vs_vma *v, unsigned long s, unsigned long e)
{
	uintptr_t p = (uintptr_t)v, base = (uintptr_t)&rt.vma[0][0];

	if (p < base || p >= base + sizeof(rt.vma) ||
	    (p - base) % sizeof(rt.vma[0][0]) != 0)
		return 0;
	return v->magic == FAKE_MAGIC && v->start == s && v->end == e &&
	       s < e;
}

/*
 * Walk the tree as the header's iteration does.  Each find is a snapshot
 * of its own, so consecutive entries may come from different versions
 * and overlap; but every end must lie above the previous one.
 */
static void reader_walk(void)
{
	unsigned long s, e, last_end = 0;
	struct vs_vma *v;
	int n = 0;

	vs_rcu_read_lock();
	for (v = vs_vma_tree_find(&rt.tree, 0, &s, &e); v;
	     v = vs_vma_tree_find(&rt.tree, e, &s, &e)) {
		if (!vma_ok(v, s, e) || (n && e <= last_end) ||
		    ++n > NR_SLOTS * NR_VARIANTS) {
			reader_error("walk: bad entry or no progress", s);
			break;
		}
		last_end = e;
	}
	vs_rcu_read_unlock();
}

static void reader_probe(unsigned long addr)
{
	unsigned long s = 0, e = 0;
	struct vs_vma *v;

	vs_rcu_read_lock();
	v = vs_vma_tree_find(&rt.tree, addr, &s, &e);
	if (v && (!vma_ok(v, s, e) || e <= addr))
		reader_error("find", addr);
	v = vs_vma_tree_lookup(&rt.tree, addr);
	if (v && (!vma_ok(v, v->start, v->end) || v->start > addr ||
		  v->end <= addr))
		reader_error("lookup", addr);
	v = vs_vma_tree_prev(&rt.tree, addr, &s, &e);
	if (v && (!vma_ok(v, s, e) || s >= addr))
		reader_error("prev", addr);
	if (!vs_vma_tree_lookup(&rt.tree, MID))
		reader_error("slot 0 missing", MID);
	vs_rcu_read_unlock();
}

static void *reader_fn(void *arg)
{
	uint64_t *seed = arg, i;

	if (vs_thread_attach() != 0)
		abort();
	vs_fetch_add(&rt.started, 1);
	for (i = 0; !vs_load_acquire(&rt.stop); i++) {
		reader_probe(rnd(seed) % ((NR_SLOTS + 1) * SLOT));
		if (i % 16 == 0)
			reader_walk();
		vs_rcu_quiescent_state();
	}
	vs_fetch_add(&rt.iterations, i);
	return NULL;
}

static void writer_step(int *cur, uint64_t *seed)
{
	int slot = (int)(rnd(seed) % NR_SLOTS);
	int var = (int)(rnd(seed) % NR_VARIANTS);
	unsigned long base = (unsigned long)slot * SLOT;
	struct vs_vma *v = &rt.vma[slot][var];

	if (cur[slot] < 0) {
		ck_assert_int_eq(vs_vma_tree_insert(&rt.tree, v->start, v->end,
						    v), 0);
		cur[slot] = var;
	} else if (slot && rnd(seed) % 3 == 0) {
		ck_assert_int_eq(vs_vma_tree_erase(&rt.tree,
				 base + variant[cur[slot]][0]), 0);
		cur[slot] = -1;
	} else {
		ck_assert_int_eq(vs_vma_tree_replace(&rt.tree,
				 base + variant[cur[slot]][0], v->start,
				 v->end, v), 0);
		cur[slot] = var;
	}
}

START_TEST(vma_tree_rcu_readers)
{
	int64_t deadline = vs_test_now_ns() + vs_test_run_ns(1000);
	int nops = vs_test_scale(50000), op, i, cur[NR_SLOTS];
	uint64_t seed = 42;
	pthread_t tid[NR_READERS];

	setup();
	memset(&rt, 0, sizeof(rt));
	vs_vma_tree_init(&rt.tree);
	for (i = 0; i < NR_SLOTS; i++) {
		int k;

		for (k = 0; k < NR_VARIANTS; k++)
			rt.vma[i][k] = fake(i * SLOT + variant[k][0],
					    i * SLOT + variant[k][1]);
		cur[i] = -1;
	}
	/* Slot 0 is present from the start and never erased. */
	ck_assert_int_eq(vs_vma_tree_insert(&rt.tree, 0, SLOT,
					    &rt.vma[0][0]), 0);
	cur[0] = 0;
	for (i = 0; i < NR_READERS; i++) {
		rt.seed[i] = UINT64_C(0x1234567) * (uint64_t)(i + 1);
		vs_test_thread_create(&tid[i], reader_fn, &rt.seed[i]);
	}
	ck_assert(vs_test_wait_ge(&rt.started, NR_READERS, VS_TEST_WAIT_NS));
	for (op = 0; op < nops && vs_test_now_ns() < deadline; op++) {
		writer_step(cur, &seed);
		if (op % 256 == 0)
			ck_assert_int_eq(vs__vma_tree_check(&rt.tree), 0);
	}
	vs_test_set(&rt.stop, 1);
	for (i = 0; i < NR_READERS; i++)
		vs_test_thread_join(tid[i]);
	ck_assert_uint_eq(vs_test_read32(&rt.errors), 0);
	ck_assert_uint_gt(vs_test_read64(&rt.iterations), 0);
	ck_assert_int_eq(vs__vma_tree_check(&rt.tree), 0);
	teardown_tree(&rt.tree);
}
END_TEST

Suite *vma_tree_suite(void)
{
	Suite *s = suite_create("vma_tree");
	TCase *tc;

	vs_test_add(vs_test_tcase(s, "api"), vma_tree_empty,
		    vma_tree_insert_errors, vma_tree_adjacent,
		    vma_tree_find_semantics, vma_tree_erase, vma_tree_replace,
		    vma_tree_iterate, vma_tree_enomem);

	tc = vs_test_tcase(s, "random");
	vs_test_add(tc, vma_tree_sequential);
	vs_test_add_loop(tc, 3, vma_tree_differential);

	vs_test_add(vs_test_tcase(s, "rcu"), vma_tree_rcu_readers);
	return s;
}
