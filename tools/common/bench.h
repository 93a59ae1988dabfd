/* SPDX-License-Identifier: MIT */
/*
 * tools/common/bench.h - what the benchmarks of tools/ share: the options
 * (bench_opts.h), rounds and reports (bench_report.h), and the timed run
 * of one measurement.
 *
 * A measurement starts its workers together: each attaches, says it is
 * ready and spins until the main thread raises bench_go.  The main
 * thread then sleeps in a libuv loop until the run timer fires or
 * SIGINT arrives; either raises bench_stop, which the workers read
 * between chunks of their loop.
 *
 *   bench_start(w, sizeof(*w), nr, worker_main);
 *   bench_run(duration_ms);
 *   err = bench_join(w, sizeof(*w), nr);
 *
 * Main thread only, except bench_wait_go(), bench_quiescent() and a
 * read of bench_stop, which are the workers'.
 */
#ifndef VS_TOOLS_BENCH_H
#define VS_TOOLS_BENCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <vmsim/vmsim.h>
#include "bench_opts.h"
#include "bench_report.h"

#define BENCH_EXIT_INTR 130	/* SIGINT */
#define BENCH_MAX_LOCKS 8	/* names in a --lock list */

/* Set by SIGINT; the run stops and the tool exits BENCH_EXIT_INTR. */
extern bool bench_interrupted;

/* Raised by the main thread (bench_run()), read by the workers. */
extern vs_atomic32_t bench_stop;

/*
 * The first member of each worker of a measurement.
 * @tid:	private: bench_start() creates it, bench_join() joins it
 * @err:	of vs_thread_attach() (bench_wait_go()), or of the loop
 */
struct bench_worker {
	pthread_t tid;
	int err;
};

/**
 * bench_json_lockstat - one JSON object per side of lock class @class:
 * {"lockstat":"<class>","side":"read",...} with the fields of struct
 * vs_lockstat, times in ns
 *
 * Context: main thread; a snapshot while locks of @class are in use.
 */
void bench_json_lockstat(const struct vs_lock_class *class);

/* ---- one measurement -------------------------------------------------- */

/**
 * bench_control_init - the libuv loop: the run timer and the SIGINT
 * watcher
 *
 * Return: 0, or a libuv error (reported).
 */
int bench_control_init(void);

/**
 * bench_control_close - close what bench_control_init() opened
 * @ret:	the tool's exit status so far
 *
 * Return: BENCH_EXIT_INTR after a SIGINT (said on stderr), else @ret.
 */
int bench_control_close(int ret);

/**
 * bench_start - start @nr workers and wait until they are all ready
 * @w:		an array of @nr workers of @size bytes, each beginning
 *		with a struct bench_worker
 * @fn:		the thread function; it gets its worker and calls
 *		bench_wait_go() first
 *
 * On failure the workers already started run one chunk and are joined.
 * Return: 0, or a negative errno of pthread_create().
 */
int bench_start(void *w, size_t size, unsigned int nr, void *(*fn)(void *));

/**
 * bench_run - release the workers, and raise bench_stop after @ms ms or
 * at SIGINT (bench_interrupted)
 *
 * Context: after bench_start(); sleeps in the libuv loop meanwhile.
 */
void bench_run(unsigned int ms);

/**
 * bench_join - join the workers of bench_start()
 *
 * Return: 0, or the last nonzero bench_worker.err.
 */
int bench_join(void *w, size_t size, unsigned int nr);

/**
 * bench_wait_go - attach the calling worker, say it is ready and wait
 * for bench_run()
 *
 * Context: the first call of a worker's thread function.
 * Return: 0, or the error of vs_thread_attach(): then leave at once.
 */
int bench_wait_go(void);

/*
 * bench_quiescent - between two chunks of a worker's loop, outside any
 * read section.  Under urcu-qsbr a looping thread must pass quiescent
 * states, or grace periods (a percpu writer's, the ones that free
 * VMAs) never end.
 */
static inline void bench_quiescent(void)
{
#if VS_RCU_QSBR
	vs_rcu_quiescent_state();
#endif
}

#endif /* VS_TOOLS_BENCH_H */
