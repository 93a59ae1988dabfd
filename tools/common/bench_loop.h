/* SPDX-License-Identifier: MIT */
/*
 * tools/common/bench_loop.h - what faultbench and uffd-floor share: the
 * multi-fault loop over one 2 MiB slice per faulting thread, timed on
 * each thread, and its rows measured over rounds.
 *
 * A faulting thread writes every page of its slice, zaps the slice and
 * goes round again until bench_stop.  A measurement gives faults/s over
 * the wall time, from the first thread's start to the last one's end,
 * and ns per fault per thread: the threads' summed loop times over the
 * faults, the zaps included.  A tool lists its rows, one per thing it
 * measures, and bench_loop_run() measures each once a round, --repeat
 * rounds, interleaved; a row then has its median and range over the
 * rounds and the sample of its median round:
 *
 *   struct row { struct bench_loop_row loop; int strategy; ... };
 *   struct sample { struct bench_loop_sample loop; ... };
 *
 *   struct bench_loop_rows t = { .row = rows, .size = sizeof(rows[0]),
 *				 .nr = nr_rows };
 *   ret = bench_loop_run(&t, sizeof(struct sample), measure_row);
 *   ... rows[i].loop.faults_per_s.med ...
 *   bench_loop_free(&t);
 *
 * Main thread only, but bench_loop_begin() and the workers' fields,
 * which are the workers'.
 */
#ifndef VS_TOOLS_BENCH_LOOP_H
#define VS_TOOLS_BENCH_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"

#define BENCH_SLICE_PAGES VS_PTRS_PER_TABLE	/* one PTE page: 2 MiB */
#define BENCH_SLICE_BYTES (BENCH_SLICE_PAGES * VS_PAGE_SIZE)

/**
 * bench_pool_pages - the model's page pool for @nr slices: their pages
 * and 1024 more, at least 4096
 */
size_t bench_pool_pages(unsigned int nr);

/* ---- one measurement -------------------------------------------------- */

/*
 * struct bench_loop_worker - the first member of a tool's worker
 * @b:		the timed run's (bench.h), first
 * @pages:	pages the thread wrote to, one fault each
 * @t0, @t1:	uv_hrtime() around its loop
 */
struct bench_loop_worker {
	struct bench_worker b;
	uint64_t pages;
	uint64_t t0, t1;
};

/*
 * struct bench_loop_sample - the first member of a tool's sample
 * @faults_per_s: all faulting threads, over the wall time
 * @ns_per_fault: the threads' summed loop times over the faults
 * @pages:	pages written to, summed over the threads
 */
struct bench_loop_sample {
	double faults_per_s;
	double ns_per_fault;
	uint64_t pages;
};

/**
 * bench_loop_begin - a worker's start: bench_wait_go(), then the clock
 * @l:		the worker's bench_loop_worker
 *
 * Context: the worker's thread, first thing.
 * Return: 0, or the error of bench_wait_go() (in @l->b.err too): then
 * the worker leaves at once.
 */
int bench_loop_begin(struct bench_loop_worker *l);

/**
 * bench_loop_measure - one measurement of @nr workers: bench_start(),
 * bench_run() for --duration, bench_join()
 * @w, @size, @fn: as bench_start()'s; each worker begins with a struct
 *		bench_loop_worker
 *
 * The main thread is offline for RCU while it waits: under qsbr it would
 * hold up the grace periods of the workers (a writer's, those that free
 * VMAs).
 * Context: the main thread, attached (vs_thread_attach()).
 * Return: as bench_start(), or as bench_join().
 */
int bench_loop_measure(void *w, size_t size, unsigned int nr,
		       void *(*fn)(void *));

/**
 * bench_loop_summarise - @s from the faulting workers @w[0..@nr)
 * @faults:	the faults counted over the measurement, or NULL: one a
 *		page written to
 */
void bench_loop_summarise(const void *w, size_t size, unsigned int nr,
			  const uint64_t *faults, struct bench_loop_sample *s);

/* ---- rows over rounds ------------------------------------------------- */

/*
 * struct bench_loop_row - the first member of a tool's row, written by
 * bench_loop_run()
 * @done:	measured in one round or more
 * @faults_per_s, @ns_per_fault: median and range over the rounds
 * @at_med:	the tool's sample of the round with the median faults/s
 *		(in the grid, until bench_loop_free())
 */
struct bench_loop_row {
	bool done;
	struct bench_range faults_per_s;
	struct bench_range ns_per_fault;
	const void *at_med;
};

/*
 * struct bench_loop_rows - a tool's rows, each an arm of the grid
 * @row:	@nr rows of @size bytes, each beginning with a struct
 *		bench_loop_row
 * @grid:	the samples, an arm per row (read-only): for
 *		bench_grid_range() and bench_grid_ratio() of a row's
 *		index, at BENCH_LOOP_FAULTS_PER_S or BENCH_LOOP_NS_PER_FAULT
 */
struct bench_loop_rows {
	void *row;
	size_t size;
	unsigned int nr;
	struct bench_grid grid;
};

#define BENCH_LOOP_FAULTS_PER_S offsetof(struct bench_loop_sample, faults_per_s)
#define BENCH_LOOP_NS_PER_FAULT offsetof(struct bench_loop_sample, ns_per_fault)

/**
 * bench_loop_run - measure every row once a round, --repeat rounds
 * (bench_grid_measure()), then give each its figures over the rounds
 * done
 * @sample_size: the tool's sample, which begins with a struct
 *		bench_loop_sample
 * @measure:	fills @sample (zeroed) for @row; returns 0 or a negative
 *		errno, which it has reported
 *
 * A SIGINT ends the rounds (bench_interrupted); the rounds done count.
 * Return: 0, or 1 after a failure (an exit status).
 */
int bench_loop_run(struct bench_loop_rows *t, size_t sample_size,
		   int (*measure)(void *row, void *sample));

/** bench_loop_free - free what bench_loop_run() took */
void bench_loop_free(struct bench_loop_rows *t);

#endif /* VS_TOOLS_BENCH_LOOP_H */
