/* SPDX-License-Identifier: MIT */
/*
 * Tests for vmsim/seqcount.h, after ck's ck_sequence validate test: a
 * writer keeps b == a + 1000 and c == a + 2000; readers copy a, b, c
 * inside the read loop and check every snapshot they accept.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <vmsim/atomic.h>
#include <vmsim/seqcount.h>

#include "test.h"

#define NR_READERS 2

struct triple {
	vs_atomic64_t a, b, c;
};

struct validate {
	vs_seqcount_t seq;
	struct triple data[2];  /* the latch test uses both copies */
	vs_atomic32_t stop;
	vs_atomic32_t readers_in;
	int latch;              /* use the latch protocol */
	int64_t deadline;
	uint64_t writes;        /* written by the writer only */
};

struct reader_result {
	struct validate *v;
	uint64_t reads;
	uint64_t retries;
	uint64_t torn;          /* accepted inconsistent snapshots */
	uint64_t backwards;     /* an accepted a older than the last one */
};

static void triple_write(struct triple *t, uint64_t a)
{
	vs_write_once(&t->a, a);
	vs_write_once(&t->b, a + 1000);
	vs_write_once(&t->c, a + 2000);
}

static void check_snapshot(struct reader_result *r, uint64_t a, uint64_t b,
			   uint64_t c, uint64_t *last)
{
	r->reads++;
	if (b != a + 1000 || c != a + 2000)
		r->torn++;
	if (a < *last)
		r->backwards++;
	*last = a;
}

static void *seq_reader_fn(void *arg)
{
	struct reader_result *r = arg;
	struct validate *v = r->v;
	uint64_t a, b, c, last = 0;
	uint32_t start;

	vs_fetch_add(&v->readers_in, 1);
	while (!vs_read_once(&v->stop)) {
		start = vs_read_seqcount_begin(&v->seq);
		for (;;) {
			a = vs_read_once(&v->data[0].a);
			b = vs_read_once(&v->data[0].b);
			c = vs_read_once(&v->data[0].c);
			if (!vs_read_seqcount_retry(&v->seq, start))
				break;
			r->retries++;
			start = vs_read_seqcount_begin(&v->seq);
		}
		check_snapshot(r, a, b, c, &last);
	}
	return NULL;
}

/* The writer: serialized by being the only one. */
static void seq_write(struct validate *v, uint64_t i)
{
	vs_write_seqcount_begin(&v->seq);
	vs_write_once(&v->data[0].a, i);
	/* Widen the window in which a reader could see a torn triple. */
	vs_cpu_relax();
	vs_write_once(&v->data[0].b, i + 1000);
	vs_cpu_relax();
	vs_write_once(&v->data[0].c, i + 2000);
	vs_write_seqcount_end(&v->seq);
}

static void latch_write(struct validate *v, uint64_t i)
{
	vs_raw_write_seqcount_latch(&v->seq);   /* readers use data[1] */
	vs_write_once(&v->data[0].a, i);
	vs_cpu_relax();
	vs_write_once(&v->data[0].b, i + 1000);
	vs_write_once(&v->data[0].c, i + 2000);
	vs_raw_write_seqcount_latch(&v->seq);   /* readers use data[0] */
	vs_write_once(&v->data[1].a, i);
	vs_cpu_relax();
	vs_write_once(&v->data[1].b, i + 1000);
	vs_write_once(&v->data[1].c, i + 2000);
}

static void *latch_reader_fn(void *arg)
{
	struct reader_result *r = arg;
	struct validate *v = r->v;
	uint64_t a, b, c, last = 0;
	struct triple *t;
	uint32_t seq;

	vs_fetch_add(&v->readers_in, 1);
	while (!vs_read_once(&v->stop)) {
		for (;;) {
			seq = vs_raw_read_seqcount_latch(&v->seq);
			t = &v->data[seq & 1];
			a = vs_read_once(&t->a);
			b = vs_read_once(&t->b);
			c = vs_read_once(&t->c);
			if (!vs_raw_read_seqcount_latch_retry(&v->seq, seq))
				break;
			r->retries++;
		}
		check_snapshot(r, a, b, c, &last);
	}
	return NULL;
}

static void *writer_fn(void *arg)
{
	struct validate *v = arg;
	void (*write)(struct validate *, uint64_t) = v->latch ? latch_write
							      : seq_write;
	uint64_t i;
	int n = vs_test_scale(2000000);

	/* Start once the readers run, so that they overlap the writes. */
	vs_test_wait_eq(&v->readers_in, NR_READERS, VS_TEST_WAIT_NS);
	for (i = 1; i <= (uint64_t)n; i++) {
		write(v, i);
		v->writes++;
		if ((i & 1023) == 0 && vs_test_now_ns() > v->deadline)
			break;
	}
	vs_store_release(&v->stop, 1);
	return NULL;
}

/*
 * Run one writer and NR_READERS readers until the writer is done;
 * @latch selects the latch protocol.
 */
static void run_validate(int latch)
{
	struct validate v = { .deadline = vs_test_now_ns()
					  + vs_test_run_ns(1000) };
	struct reader_result r[NR_READERS];
	pthread_t wtid, rtid[NR_READERS];
	uint64_t reads = 0, retries = 0;
	int i;

	vs_seqcount_init(&v.seq);
	triple_write(&v.data[0], 0);
	triple_write(&v.data[1], 0);
	vs_atomic_init(&v.stop, 0);
	vs_atomic_init(&v.readers_in, 0);
	v.latch = latch;

	for (i = 0; i < NR_READERS; i++) {
		r[i] = (struct reader_result){ .v = &v };
		vs_test_thread_create(&rtid[i],
				      latch ? latch_reader_fn : seq_reader_fn,
				      &r[i]);
	}
	vs_test_thread_create(&wtid, writer_fn, &v);
	vs_test_thread_join(wtid);
	for (i = 0; i < NR_READERS; i++)
		vs_test_thread_join(rtid[i]);

	for (i = 0; i < NR_READERS; i++) {
		ck_assert_msg(r[i].torn == 0, "reader %d accepted %llu torn "
			      "snapshots of %llu", i,
			      (unsigned long long)r[i].torn,
			      (unsigned long long)r[i].reads);
		ck_assert_msg(r[i].backwards == 0, "reader %d went back in "
			      "time %llu times", i,
			      (unsigned long long)r[i].backwards);
		ck_assert_uint_gt(r[i].reads, 0);
		reads += r[i].reads;
		retries += r[i].retries;
	}
	ck_assert_uint_gt(v.writes, 0);
	/* Retries are likely but not guaranteed: report, don't assert. */
	if (getenv("VS_TEST_VERBOSE"))
		fprintf(stderr, "%s: %llu writes, %llu reads, %llu retries\n",
			latch ? "latch" : "seqcount",
			(unsigned long long)v.writes,
			(unsigned long long)reads,
			(unsigned long long)retries);
}

/* Readers of a seqcount never accept a torn or out-of-order snapshot. */
START_TEST(seqcount_validate)
{
	run_validate(0);
}
END_TEST

/* Latch readers never wait and never accept a torn copy. */
START_TEST(seqcount_latch_validate)
{
	run_validate(1);
}
END_TEST

/* raw_seqcount_try_begin fails while a writer is inside and succeeds
 * (with an even count) otherwise. */
START_TEST(seqcount_try_begin)
{
	vs_seqcount_t s = VS_SEQCOUNT_ZERO;
	uint32_t start, start2;

	ck_assert(vs_raw_seqcount_try_begin(&s, &start));
	ck_assert_uint_eq(start & 1, 0);
	ck_assert(!vs_seqcount_is_write_locked(&s));

	vs_write_seqcount_begin(&s);
	ck_assert(vs_seqcount_is_write_locked(&s));
	ck_assert(!vs_raw_seqcount_try_begin(&s, &start2));
	ck_assert_uint_eq(start2 & 1, 1);
	ck_assert_uint_eq(vs_raw_read_seqcount(&s) & 1, 1);
	vs_write_seqcount_end(&s);

	ck_assert(!vs_seqcount_is_write_locked(&s));
	ck_assert(vs_raw_seqcount_try_begin(&s, &start2));
	ck_assert_uint_eq(start2 & 1, 0);
	ck_assert_uint_ne(start2, start);
}
END_TEST

/* retry is false with no writer in between and true after one, even a
 * writer that has already left. */
START_TEST(seqcount_retry)
{
	vs_seqcount_t s;
	uint32_t start;

	vs_seqcount_init(&s);
	start = vs_read_seqcount_begin(&s);
	ck_assert(!vs_read_seqcount_retry(&s, start));
	ck_assert(!vs__read_seqcount_retry(&s, start));

	vs_write_seqcount_begin(&s);
	ck_assert(vs_read_seqcount_retry(&s, start));
	vs_write_seqcount_end(&s);
	ck_assert(vs_read_seqcount_retry(&s, start));

	start = vs_raw_read_seqcount_begin(&s);
	ck_assert_uint_eq(start, 2);
	ck_assert(!vs_read_seqcount_retry(&s, start));
}
END_TEST

struct begin_waiter {
	vs_seqcount_t *s;
	vs_atomic32_t started;
	vs_atomic32_t done;
	uint32_t start;
};

static void *begin_waiter_fn(void *arg)
{
	struct begin_waiter *w = arg;

	vs_test_set(&w->started, 1);
	w->start = vs_read_seqcount_begin(w->s);
	vs_test_set(&w->done, 1);
	return NULL;
}

/* read_seqcount_begin waits while a writer is inside and returns the
 * even count the writer leaves. */
START_TEST(seqcount_begin_waits_for_writer)
{
	vs_seqcount_t s = VS_SEQCOUNT_ZERO;
	struct begin_waiter w = { .s = &s };
	pthread_t tid;

	vs_atomic_init(&w.started, 0);
	vs_atomic_init(&w.done, 0);
	vs_write_seqcount_begin(&s);
	vs_test_thread_create(&tid, begin_waiter_fn, &w);
	ck_assert(vs_test_wait_eq(&w.started, 1, VS_TEST_WAIT_NS));
	vs_test_sleep_ns(10 * VS_TEST_NS_PER_MS);
	ck_assert_uint_eq(vs_test_read32(&w.done), 0);
	vs_write_seqcount_end(&s);
	ck_assert(vs_test_wait_eq(&w.done, 1, VS_TEST_WAIT_NS));
	vs_test_thread_join(tid);
	ck_assert_uint_eq(w.start, 2);
}
END_TEST

/* The latch count selects copy (seq & 1); a latch moves readers to the
 * other copy, and retry notices it. */
START_TEST(seqcount_latch_switch)
{
	vs_seqcount_t s;
	uint32_t seq;

	vs_seqcount_init(&s);
	seq = vs_raw_read_seqcount_latch(&s);
	ck_assert_uint_eq(seq & 1, 0);
	ck_assert(!vs_raw_read_seqcount_latch_retry(&s, seq));
	vs_raw_write_seqcount_latch(&s);
	ck_assert(vs_raw_read_seqcount_latch_retry(&s, seq));
	seq = vs_raw_read_seqcount_latch(&s);
	ck_assert_uint_eq(seq & 1, 1);
	vs_raw_write_seqcount_latch(&s);
	ck_assert_uint_eq(vs_raw_read_seqcount_latch(&s) & 1, 0);
}
END_TEST

Suite *seqcount_suite(void)
{
	Suite *s = suite_create("seqcount");

	vs_test_add(vs_test_tcase(s, "basic"), seqcount_try_begin,
		    seqcount_retry, seqcount_begin_waits_for_writer,
		    seqcount_latch_switch);
	vs_test_add(vs_test_tcase(s, "validate"), seqcount_validate,
		    seqcount_latch_validate);
	return s;
}
