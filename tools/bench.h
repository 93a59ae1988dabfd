/* SPDX-License-Identifier: MIT */
/*
 * tools/bench.h - what the benchmarks of tools/ share: option parsing,
 * the median, and the timed run of one measurement.
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

#include "vmsim.h"

#define BENCH_EXIT_USAGE 2	/* a bad option */
#define BENCH_EXIT_INTR 130	/* SIGINT */
#define BENCH_MAX_LOCKS 8	/* names in a --lock list */

/* The tool's name, for messages; main() sets it before anything else. */
extern const char *bench_prog;

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

/* ---- options ---------------------------------------------------------- */

/**
 * bench_try_help - point at --help on stderr and exit BENCH_EXIT_USAGE
 *
 * For getopt_long()'s errors, which it has already printed.
 */
_Noreturn void bench_try_help(void);

/**
 * bench_usage_error - "<prog>: <message>", then as bench_try_help()
 * @fmt:	printf format of the message, no newline
 */
_Noreturn void bench_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/**
 * bench_parse_uint - parse a decimal in [@min, @max]: digits only
 * @s:		the text
 * @out:	the value, written only on success
 *
 * Return: 0 or -EINVAL.
 */
int bench_parse_uint(const char *s, unsigned long min, unsigned long max,
		     unsigned int *out);

/**
 * bench_parse_seconds - parse seconds, "1", "0.3", "2.50": digits with at
 * most one point, no sign, no exponent, at least 1 ms and at most @max_ms
 * @ms:		the value in milliseconds (nearest), written only on success
 *
 * Return: 0 or -EINVAL.
 */
int bench_parse_seconds(const char *s, unsigned int max_ms, unsigned int *ms);

/**
 * bench_for_each_item - call @fn on each comma-separated item of @list
 * @list:	a writable copy (optarg): the commas become NULs
 */
void bench_for_each_item(char *list, void (*fn)(const char *item));

/**
 * bench_col_of - the column of thread count @t in @threads[0..@nr)
 *
 * Return: the index, or -1.
 */
int bench_col_of(const unsigned int *threads, int nr, unsigned int t);

/**
 * bench_add_threads - add thread count @t to @threads, once
 * @nr:		the counts in @threads, updated
 * @max_cols:	the length of @threads; beyond it a usage error
 */
void bench_add_threads(unsigned int *threads, int *nr, int max_cols,
		       unsigned int t);

/**
 * bench_threads_item - add an item of --threads: "N" or "N-M"
 * @max_threads: the largest count; anything else is a usage error
 *
 * As bench_add_threads() for each count.
 */
void bench_threads_item(const char *item, unsigned int *threads, int *nr,
			int max_cols, unsigned int max_threads);

/**
 * bench_lock_item - add an item of --lock: a name of @name, or "all"
 * @name:	the valid names by index, in their order for "all"; NULL
 *		past the last
 * @what:	the noun of the usage error: "'x' is not @what (valid: ...)"
 * @lock:	BENCH_MAX_LOCKS names, each added once (more are dropped)
 * @nr:		the names in @lock, updated
 */
void bench_lock_item(const char *item, const char *(*name)(int),
		     const char *what, const char **lock, int *nr);

/* ---- results ---------------------------------------------------------- */

/**
 * bench_median - the median of @v[0..@nr), which it sorts
 *
 * An even @nr gives the mean of the two middle values.
 */
double bench_median(double *v, unsigned int nr);

/* Measurements a row may have: what bench_median_at() can take. */
#define BENCH_MAX_REPEAT 1000

/**
 * bench_sort_at - sort @nr measurements by one of their fields
 * @s:		an array of @nr structs of @size bytes
 * @offset:	of a double in each (offsetof()), the key, ascending
 *
 * Afterwards s[0], s[nr - 1] and s[(nr - 1) / 2] are the lowest, the
 * highest and the median measurement.  Context: one thread at a time.
 */
void bench_sort_at(void *s, unsigned int nr, size_t size, size_t offset);

/**
 * bench_median_at - the median of one field of @nr measurements
 * @s, @size, @offset: as bench_sort_at(); @nr <= BENCH_MAX_REPEAT
 *
 * Context: one thread at a time.
 */
double bench_median_at(const void *s, unsigned int nr, size_t size,
		       size_t offset);

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
