/* SPDX-License-Identifier: MIT */
/*
 * tools/common/bench_loop.c - the hooks of faultbench's and uffd-floor's
 * runs of vmsim/workload.h, and their rows over rounds.  bench_loop.h
 * documents each function that is not static here.
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

/* What a measurement's hooks find in their arg. */
struct loop_run {
	char *task;
	size_t size;
	void (*task_end)(struct vs_workload_task *t);
};

static struct bench_loop_task *record(struct vs_workload_task *t)
{
	return t->priv;
}

/* On the task, before its first pass: its record, then its clock. */
static void loop_task_start(struct vs_workload_task *t)
{
	const struct loop_run *r = t->w->cfg.hooks->arg;

	t->priv = r->task + t->id * r->size;
	record(t)->t0 = uv_hrtime();
}

/* On the task, after its last pass: its clock first. */
static void loop_task_end(struct vs_workload_task *t)
{
	const struct loop_run *r = t->w->cfg.hooks->arg;
	struct bench_loop_task *l = record(t);

	l->t1 = uv_hrtime();
	l->pages = (uint64_t)t->pages;
	l->passes = t->passes;
	if (r->task_end)
		r->task_end(t);
}

/*
 * The main thread, about every 100 ms: run the libuv loop's ready
 * callbacks, without waiting.  A SIGINT since the last look raises
 * bench_stop (bench.c), which the runner reads after every pass.
 */
static void loop_tick(struct vs_workload *w, uint64_t elapsed_ns,
		      unsigned long pages)
{
	(void)w;
	(void)elapsed_ns;
	(void)pages;
	uv_run(uv_default_loop(), UV_RUN_NOWAIT);
}

int bench_loop_measure(struct vs_workload_config *c, void *task, size_t size,
		       void (*task_end)(struct vs_workload_task *t),
		       struct vs_workload_result *res)
{
	struct loop_run r = { task, size, task_end };
	const struct vs_workload_hooks hooks = {
		.task_start = loop_task_start,
		.task_end = loop_task_end,
		.tick = loop_tick,
		.arg = &r,
	};
	int err;

	vs_write_once(&bench_stop, 0);
	c->duration_ns = (uint64_t)bench_std.duration_ms * 1000000ULL;
	c->stop = &bench_stop;
	c->hooks = &hooks;
	err = vs_workload_run(c, res);
	c->hooks = NULL;		/* they were this frame's */
	return err;
}

void bench_loop_summarise(const void *task, size_t size, unsigned int nr,
			  const uint64_t *faults, struct bench_loop_sample *s)
{
	uint64_t ns = 0, pages = 0, start = UINT64_MAX, end = 0, n;
	const struct bench_loop_task *l;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		l = (const void *)((const char *)task + i * size);
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
