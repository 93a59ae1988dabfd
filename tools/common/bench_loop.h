/* SPDX-License-Identifier: MIT */
/*
 * tools/common/bench_loop.h - what faultbench and uffd-floor add to a
 * run of the library's fault loop (vmsim/workload.h): one 2 MiB slice
 * per faulting task, each task's own clock, and their rows measured
 * over rounds.
 *
 * The loop is vs_workload_run()'s; a tool gives it a workload of its
 * own (struct vs_workload_ops) whose pass writes every page of the
 * task's slice and zaps it, with no serial phase: each task goes round
 * alone until --duration is over.  A measurement gives faults/s over
 * the wall time, from the first task's start to the last one's end,
 * and ns per fault per task: the tasks' summed loop times over the
 * faults, the zaps included.  A tool lists its rows, one per thing it
 * measures, and bench_loop_run() measures each once a round, --repeat
 * rounds, interleaved; a row then has its median and range over the
 * rounds and the sample of its median round:
 *
 *   struct task { struct bench_loop_task l; ... };	(t->priv)
 *   struct row { struct bench_loop_row loop; int strategy; ... };
 *   struct sample { struct bench_loop_sample loop; ... };
 *
 *   ret = bench_loop_measure(&cfg, tasks, sizeof(tasks[0]), NULL, &res);
 *   bench_loop_summarise(tasks, sizeof(tasks[0]), nr, NULL, &s->loop);
 *
 *   struct bench_loop_rows t = { .row = rows, .size = sizeof(rows[0]),
 *				 .nr = nr_rows };
 *   ret = bench_loop_run(&t, sizeof(struct sample), measure_row);
 *   ... rows[i].loop.faults_per_s.med ...
 *   bench_loop_free(&t);
 *
 * Main thread only, but the tasks' records, which are the tasks'.
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
 * struct bench_loop_task - the first member of a tool's record of a
 * task, which the task's priv points at from its start on
 * @t0, @t1:	uv_hrtime() around its loop
 * @pages:	pages it touched (vs_workload_touch()), one fault each
 * @passes:	passes it finished
 */
struct bench_loop_task {
	uint64_t t0, t1;
	uint64_t pages;
	uint64_t passes;
};

/*
 * struct bench_loop_sample - the first member of a tool's sample
 * @faults_per_s: all faulting tasks, over the wall time
 * @ns_per_fault: the tasks' summed loop times over the faults
 * @pages:	pages written to, summed over the tasks
 */
struct bench_loop_sample {
	double faults_per_s;
	double ns_per_fault;
	uint64_t pages;
};

/**
 * bench_loop_measure - one measurement: vs_workload_run() of @c for
 * --duration, until then or SIGINT
 * @c:		the run; its duration, stop flag and hooks are set here
 * @task:	@c->nr_tasks records of @size bytes, each beginning with a
 *		struct bench_loop_task, zeroed: task i's priv points at
 *		the i-th from its start on, and its figures land there
 * @task_end:	on each task after its last pass, once its record is
 *		filled in (read the thread's own counters), or NULL
 * @res:	receives what the run counted
 *
 * The hooks time each task on its own thread and, about every 100 ms,
 * poll the libuv loop of bench_control_init(), whose SIGINT watcher
 * raises bench_stop (bench_interrupted): the run ends at the end of a
 * pass.  The runner keeps the main thread offline for RCU while the
 * tasks run.
 * Context: the main thread, attached (vs_thread_attach()), after
 * bench_control_init().
 * Return: as vs_workload_run().
 */
int bench_loop_measure(struct vs_workload_config *c, void *task, size_t size,
		       void (*task_end)(struct vs_workload_task *t),
		       struct vs_workload_result *res);

/**
 * bench_loop_summarise - @s from the faulting tasks' records
 * @task[0..@nr)
 * @faults:	the faults counted over the measurement, or NULL: one a
 *		page written to
 */
void bench_loop_summarise(const void *task, size_t size, unsigned int nr,
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
