/* SPDX-License-Identifier: MIT */
/*
 * tools/common/bench_loop.c - the multi-fault loop's measurements and
 * rows, for faultbench and uffd-floor.  bench_loop.h documents each
 * function that is not static here.
 */
#include <stdint.h>

#include <uv.h>

#include "bench_loop.h"

#define POOL_SLACK 1024		/* pages beyond the slices */
#define MIN_POOL_PAGES 4096

size_t bench_pool_pages(unsigned int nr)
{
	size_t pages = (size_t)nr * BENCH_SLICE_PAGES + POOL_SLACK;

	return pages < MIN_POOL_PAGES ? MIN_POOL_PAGES : pages;
}

/* ---- one measurement -------------------------------------------------- */

int bench_loop_begin(struct bench_loop_worker *l)
{
	l->b.err = bench_wait_go();
	if (!l->b.err)
		l->t0 = uv_hrtime();
	return l->b.err;
}

int bench_loop_measure(void *w, size_t size, unsigned int nr,
		       void *(*fn)(void *))
{
	int err = bench_start(w, size, nr, fn);

	if (err)
		return err;
	vs_rcu_thread_offline();
	bench_run(bench_std.duration_ms);
	err = bench_join(w, size, nr);
	vs_rcu_thread_online();
	return err;
}

void bench_loop_summarise(const void *w, size_t size, unsigned int nr,
			  const uint64_t *faults, struct bench_loop_sample *s)
{
	uint64_t ns = 0, pages = 0, start = UINT64_MAX, end = 0, n;
	const struct bench_loop_worker *l;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		l = (const void *)((const char *)w + i * size);
		ns += l->t1 - l->t0;
		pages += l->pages;
		start = l->t0 < start ? l->t0 : start;
		end = l->t1 > end ? l->t1 : end;
	}
	n = faults ? *faults : pages;
	s->pages = pages;
	s->faults_per_s = (double)n * 1e9 / (double)(end - start);
	s->ns_per_fault = n ? (double)ns / (double)n : 0;
}

/* ---- rows over rounds ------------------------------------------------- */

static struct bench_loop_row *row_at(const struct bench_loop_rows *t,
				     unsigned int i)
{
	return (struct bench_loop_row *)((char *)t->row + i * t->size);
}

/* What bench_loop_run() hands bench_grid_measure(). */
struct loop_call {
	struct bench_loop_rows *t;
	int (*measure)(void *row, void *sample);
};

/* Row @arm into @sample.  Return: 0, 1 at SIGINT, or an errno. */
static int measure_arm(void *ctx, unsigned int arm, void *sample)
{
	struct loop_call *c = ctx;
	int err = c->measure(row_at(c->t, arm), sample);

	return err ? err : bench_interrupted;
}

int bench_loop_run(struct bench_loop_rows *t, size_t sample_size,
		   int (*measure)(void *row, void *sample))
{
	struct loop_call c = { t, measure };
	struct bench_loop_row *r;
	unsigned int i;
	int err;

	err = bench_grid_measure(&t->grid, t->nr, sample_size, measure_arm,
				 &c);
	for (i = 0; t->grid.done && i < t->nr; i++) {
		r = row_at(t, i);
		bench_grid_range(&t->grid, i, BENCH_LOOP_FAULTS_PER_S,
				 &r->faults_per_s);
		bench_grid_range(&t->grid, i, BENCH_LOOP_NS_PER_FAULT,
				 &r->ns_per_fault);
		r->at_med = bench_grid_median_at(&t->grid, i,
						 BENCH_LOOP_FAULTS_PER_S);
		r->done = true;
	}
	return err < 0;
}

void bench_loop_free(struct bench_loop_rows *t)
{
	bench_grid_free(&t->grid);
}
