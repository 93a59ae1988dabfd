/* SPDX-License-Identifier: MIT */
/*
 * tools/mf.h - what the parts of multi-fault share.
 *
 *   multi-fault.c  options, the runs, Ctrl-C, the progress line
 *   mf_run.c       one configuration on one backing: Kamezawa's loop
 *   mf_report.c    the perf-stat block, the PRE/POST table, JSON, SVG
 *   mf_trace.c     the Chrome Trace Event file (--trace)
 *
 * The loop (multi-fault.c of January 2010, which seed 004 ran): thread
 * i of N, pinned to CPU i, owns the i-th 8 MiB slot of one private
 * anonymous mapping and writes one byte to each page of the slot's
 * first 2 MiB; a barrier; thread 0 alone zaps every thread's 2 MiB with
 * MADV_DONTNEED; a barrier; again, for the run's duration.
 */
#ifndef VS_TOOLS_MF_H
#define VS_TOOLS_MF_H

#include <stdint.h>
#include <stdio.h>

#include "vmsim.h"

#define MF_SLOT_BYTES (8UL << 20)	/* MMAP_LENGTH of the original */
#define MF_FAULT_BYTES (2UL << 20)	/* FAULT_LENGTH */
#define MF_MAX_THREADS 256
#define MF_MAX_REPEAT 100

enum mf_backing { MF_SIM, MF_UFFD, MF_NATIVE, MF_NR_BACKINGS };

enum mf_writer {
	MF_WRITER_NONE,
	MF_WRITER_MMAP,		/* mmap + munmap of an unrelated VMA */
	MF_WRITER_MPROTECT,	/* mprotect of an unrelated VMA, RO <-> RW */
	MF_WRITER_FORK,		/* fork, then the child goes */
	MF_NR_WRITERS
};

/* One configuration: what a perf-stat block and a JSON line describe. */
struct mf_config {
	int backing;			/* enum mf_backing */
	int uffd_mode;			/* enum vs_uffd_mode (uffd only) */
	int strategy;			/* enum vs_fault_strategy; -1: native */
	const char *lock;		/* mmap_lock kind; NULL: native */
	unsigned int threads;
	int writer;			/* enum mf_writer */
	unsigned int writer_rate;	/* operations/s; 0: flat out */
	unsigned int duration_ms;
	unsigned int repeats;
	unsigned long seed;
};

/*
 * What one configuration measured.  @repeats_done < @cfg.repeats when
 * Ctrl-C ended it (a repeat cut short counts, with its own duration).
 * Abort counters are summed over the repeats (0 for native).
 */
struct mf_result {
	struct mf_config cfg;
	unsigned int repeats_done;
	double faults[MF_MAX_REPEAT];		/* page faults of each repeat */
	double seconds[MF_MAX_REPEAT];		/* its elapsed time */
	double faults_mean, faults_stddev;	/* over the repeats */
	double faults_per_s, faults_per_s_stddev;
	double elapsed_s;			/* mean per repeat */
	unsigned long writer_ops;
	struct vs_fault_stats st;		/* sim and uffd */
};

/* Names, for options, reports and JSON; NULL for a bad value. */
const char *mf_backing_name(int backing);
const char *mf_writer_name(int writer);

/* ---- mf_run.c ----------------------------------------------------------- */

/*
 * Called on the calling thread of mf_run() about every 100 ms: the
 * repeat under way (from 0), its seconds so far and pages touched.
 */
typedef void mf_tick_fn(const struct mf_config *cfg, unsigned int repeat,
			double elapsed_s, double touched);

/*
 * mf_run - run @r->cfg (its repeats) and fill in @r
 * @stop: raised by the caller (Ctrl-C, from a signal handler) to end
 *        the run at the end of the current pass
 * @tick: the progress callback, or NULL
 *
 * Return: 0; a negative errno (vs_strerror) when the backing cannot be
 * set up, e.g. -EPERM for a refused userfaultfd.
 */
int mf_run(struct mf_result *r, vs_atomic32_t *stop, mf_tick_fn *tick);

/* ---- mf_report.c -------------------------------------------------------- */

/*
 * mf_print_stat - the perf-stat-like block of one configuration:
 *
 *   Performance counter stats for 'multi-fault sim spf rwsem 2' (3 runs):
 *
 *        1,234,567 page-faults         ( +- 1.25% )
 *          411,522 page-faults/s       ( +- 1.20% )
 *          205,761 page-faults/s/thread
 *   spf aborts: no_vma 0, seq_odd 12, ...   (sim/uffd; nonzero ones)
 *
 *      3.000123456 seconds time elapsed ( +- 0.01% )
 */
void mf_print_stat(FILE *out, const struct mf_result *r);

/*
 * mf_print_prepost - seed 004's PRE/POST comparison: for each group of
 * results that differ only in strategy, locked is PRE and each other
 * strategy a POST row, with page-faults, faults/s and the ratio POST /
 * PRE.
 */
void mf_print_prepost(FILE *out, const struct mf_result *r, int n);

/*
 * mf_print_json - one JSON object on one line: backing, uffd_mode (null
 * unless uffd), strategy, lock (null for native), threads, writer,
 * writer_rate, duration_s, repeats, faults, faults_stddev,
 * faults_per_s, faults_per_s_stddev, elapsed_s, writer_ops, aborts
 * ({spf reason: n, ..., vma_lock_abort, vma_lock_retry, vma_lock_miss}),
 * and the success counters.
 */
void mf_print_json(FILE *out, const struct mf_result *r);

/* mf_json_str - @s as a JSON string, escaped; null for NULL. */
void mf_json_str(FILE *out, const char *s);

/*
 * mf_plot_svg - faults/s against threads, one line per strategy (and
 * lock kind, backing, writer, when they vary), with labelled axes and a
 * legend, as a standalone SVG.
 * Return: 0, or -errno when @path cannot be written.
 */
int mf_plot_svg(const char *path, const struct mf_result *r, int n);

/* ---- mf_trace.c --------------------------------------------------------- */

/*
 * Chrome Trace Event Format (JSON object with "traceEvents"), for
 * Perfetto UI and chrome://tracing: per thread, "X" complete events for
 * faults ("fault"), mmap_lock waits ("mmap_lock wait R|W") and holds
 * ("mmap_lock R|W"), properly nested; "M" thread_name metadata; "C"
 * counter events "faults/s".  ts and dur in microseconds.  Bounded: one
 * fault in @sample is recorded (with the lock events inside it), and at
 * most @max_events in all, after which recording stops (said in the
 * file's "otherData").  Every function but open and close may be called
 * from any thread, and does nothing when no trace is open.
 */
int mf_trace_open(const char *path, unsigned int sample, size_t max_events);

/* The calling thread's name in the trace ("faulter 0", "writer"). */
void mf_trace_thread(const char *name);

/*
 * A fault of the calling thread begins, ends.  begin decides whether it
 * is sampled; the lock events between the two are recorded only if it
 * is.  Lock events outside any fault (the writer's) are always recorded.
 */
void mf_trace_fault_begin(void);
void mf_trace_fault_end(void);

/* A span of another kind (e.g. "munmap") on the calling thread. */
void mf_trace_span(const char *name, uint64_t t0_ns, uint64_t t1_ns);

/* A "C" counter sample, e.g. ("faults/s", now, 1.2e6). */
void mf_trace_counter(const char *name, uint64_t t_ns, double value);

/* The hooks that record lock waits and holds (vs_lock_trace_set()). */
const struct vs_lock_trace *mf_trace_lock_hooks(void);

/* Write the file and free everything.  Return: 0 or -errno. */
int mf_trace_close(void);

/* CLOCK_MONOTONIC in ns: the clock of every trace timestamp. */
uint64_t mf_now_ns(void);

#endif /* VS_TOOLS_MF_H */
