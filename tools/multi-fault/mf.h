/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf.h - what the parts of multi-fault share.
 *
 *   multi-fault.c  options, the runs, Ctrl-C, the progress line
 *   mf_compare.c   the native tool's ways into the vCPU mode
 *   mf_jobs.c      the vCPU mode's repeats, each in a child process
 *   mf_shard.c     --shard's share of the repeats as JSON, --merge
 *   mf_vcpu.c      one repeat on virtual CPUs (multi-fault-vcpu)
 *   mf_run.c       one repeat on one backing: Kamezawa's loop
 *   mf_report.c    the perf-stat block, the PRE/POST table, JSON
 *   mf_vreport.c   the lines of the perf-stat block only a vCPU run has
 *   mf_plot.c      the SVG plot (--plot)
 *   mf_result.c    a configuration's result, repeat by repeat
 *   mf_trace.c     the Chrome Trace Event file (--trace)
 *   mf_stat.c      perf stat's figures and lines
 *   mf_config.c    a configuration's names, what two of them share
 *
 * Each file calls only files below it in this list.
 *
 * The loop is the library's (vmsim/workload.h): by default Kamezawa
 * Hiroyuki's multi-fault-all.c (linux-mm, 2010-01-06), the benchmark of
 * Zijlstra's 2014 PRE/POST table: thread i of N, pinned to CPU i, owns
 * the i-th 8 MiB slot of one private anonymous mapping and writes one
 * byte to each page of the slot's first 2 MiB; a barrier; thread 0
 * alone zaps every thread's 2 MiB with MADV_DONTNEED; a barrier; again,
 * for the run's duration.  --workload picks another built-in one.
 */
#ifndef VS_TOOLS_MF_H
#define VS_TOOLS_MF_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bench_report.h"
#include <vmsim/vmsim.h>

#define MF_MAX_THREADS VS_WORKLOAD_MAX_TASKS
#define MF_MAX_REPEAT BENCH_MAX_REPEAT

enum mf_backing { MF_SIM, MF_UFFD, MF_NATIVE, MF_NR_BACKINGS };

enum mf_writer {
	MF_WRITER_NONE,
	MF_WRITER_MMAP,		/* mmap + munmap of an unrelated VMA */
	MF_WRITER_MPROTECT,	/* mprotect of an unrelated VMA, RO <-> RW */
	MF_WRITER_FORK,		/* fork, then the child goes */
	MF_NR_WRITERS
};

#define MF_NAMED_MAX 6	/* named lines a breakdown lists */

/*
 * Where the virtual cycles of the faulting vCPUs went, between the start
 * of the first pass and the end of the last, summed over the repeats
 * (vCPU mode only; zero otherwise).  @all is vCPUs x elapsed cycles;
 * every other field is a part of it, and what none of them holds (the
 * vCPUs asleep at the barriers, in a futex, or waiting for a line's
 * turn inside a charged access, which @lines counts) is @all less their
 * sum.  @zap is vCPU 0's elapsed cycles inside MADV_DONTNEED, a part of
 * the others.  @named are the costliest lines of every vCPU's accesses
 * (a writer's too), each repeat's first MF_NAMED_MAX added by name.
 */
struct mf_cycles {
	double all;
	double lines;			/* shared-memory accesses, waits
					 * for the line included */
	double clear, fault, syscall;	/* vs_vcpu_work() charges; @clear
					 * holds page copies too */
	double kernel;			/* the kernel's instructions */
	double irq;			/* handlers run for other vCPUs */
	double futex;			/* futex calls' kernel paths */
	double spin;			/* PAUSE in spin loops */
	double zap;
	double passes;
	unsigned int nr_named;		/* the costliest named lines */
	struct mf_named_line {
		char name[48];
		double cycles, transfers;
	} named[MF_NAMED_MAX];
};

/* One configuration: what a perf-stat block and a JSON line describe. */
struct mf_config {
	const char *machine;		/* vCPU mode: the profile; NULL:
					 * real threads */
	bool real_code;			/* vCPU mode: charge no kernel entry
					 * (--compare-real, mf_vcpu.c) */
	double seconds_as;		/* print faults scaled to these
					 * seconds; 0: as counted */
	int backing;			/* enum mf_backing */
	int uffd_mode;			/* enum vs_uffd_mode (uffd only) */
	int strategy;			/* enum vs_fault_strategy; -1: native */
	const char *lock;		/* mmap_lock kind; NULL: native */
	const char *kernel;		/* --kernel (vmsim/kernel.h); NULL:
					 * the default */
	unsigned int threads;
	const char *workload;		/* a built-in of vmsim/workload.h */
	int mode;			/* enum vs_workload_mode */
	size_t bytes;			/* --size; 0: the workload's */
	int writer;			/* enum mf_writer */
	unsigned int writer_rate;	/* operations/s; 0: flat out */
	unsigned int duration_ms;
	unsigned int repeats;
	unsigned long seed;
};

/*
 * What one configuration measured.  Repeat k of every configuration runs
 * in round k (multi-fault.c), so repeat k of two results compare.
 * @repeats_done < @cfg.repeats when Ctrl-C ended it (a repeat cut short
 * counts, with its own duration).  Abort counters, writer operations and
 * lock statistics are summed over the repeats (0 for native).
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
	struct vs_lockstat lockstat[2];		/* mmap_lock, R and W */
	bool has_lockstat;			/* --lockstat was on */
	/* The vCPU mode's, of each repeat: line transfers, and those
	 * that perf counts as cache-misses (another socket, memory). */
	double transfers[MF_MAX_REPEAT];
	double cache_misses[MF_MAX_REPEAT];
	struct mf_cycles cyc;			/* summed over the repeats */
};

/* ---- mf_config.c -------------------------------------------------------- */

/* Names, for options, reports and JSON; NULL for a bad value. */
const char *mf_backing_name(int backing);
const char *mf_writer_name(int writer);

/* Whether @c runs on the host kernel, with no model. */
bool mf_is_native(const struct mf_config *c);

/*
 * mf_workload_config - @c as a run of vmsim/workload.h: its workload,
 * tasks, mode, backing, size, strategy and mmap_lock kind.
 */
void mf_workload_config(const struct mf_config *c,
			struct vs_workload_config *wc);

/* Whether @c runs the default workload (Kamezawa's) in threads mode:
 * then its command line and JSON say nothing of either. */
bool mf_default_workload(const struct mf_config *c);

/* @c's strategy for text: "native" has none of its own. */
const char *mf_strategy_label(const struct mf_config *c);

/* Whether @a and @b run the same lock kind (none, natively). */
bool mf_same_lock(const struct mf_config *a, const struct mf_config *b);
/* ... the same backing (the uffd mode only means something on uffd). */
bool mf_same_backing(const struct mf_config *a, const struct mf_config *b);
/* ... the same writer (the rate means nothing without one). */
bool mf_same_writer(const struct mf_config *a, const struct mf_config *b);

/* A name for text output, "?" for NULL: a bad value must not crash a
 * report. */
static inline const char *mf_or_q(const char *s)
{
	return s ? s : "?";
}

/* NaN and inf would make invalid JSON and garbage columns: they are 0. */
static inline double mf_or_zero(double v)
{
	return isfinite(v) ? v : 0;
}

/* ---- mf_stat.c ---------------------------------------------------------- */

/*
 * perf stat's columns: the value right-aligned in 18, six spaces, the
 * event name in MF_STAT_NAME_W, whether it is a mean or a sum in
 * MF_STAT_HOW_W, then the spread.
 */
#define MF_STAT_NAME_W 21
#define MF_STAT_HOW_W 12

/* mf_fmt_count - @v rounded, with thousands separators, as perf prints. */
const char *mf_fmt_count(char *buf, size_t size, double v);
/* The mean of @v[0..n) and (in *@sd) its sample standard deviation. */
double mf_mean_sd(const double *v, unsigned int n, double *sd);
/* perf stat's "( +- x% )": @sd's standard error relative to @mean, in
 * percent; 0 for fewer than 2 samples or a mean not above 0. */
double mf_rel_sd_mean(double sd, double mean, unsigned int n);
/* "mean of 3", "sum of 3": what a figure is, over the runs, in @buf. */
const char *mf_stat_how(char *buf, size_t size, enum bench_agg agg,
			unsigned int n);
/* One perf-stat line: "   1,234   name   mean of 3   ( +- 0.12% )",
 * the spread only when @spread and @n > 1. */
void mf_stat_line(FILE *out, double v, const char *name, double rel,
		  unsigned int n, bool spread);

/* ---- mf_result.c -------------------------------------------------------- */

/*
 * One repeat of one configuration, as a vCPU run in a child process
 * hands it back to its parent (mf_jobs.c): plain numbers, no pointer.
 * @err: 0, or the negative errno that ended the repeat.
 */
struct mf_sample {
	int err;
	int trace_err;				/* its part of --trace */
	uint64_t trace_recorded, trace_dropped;
	double faults, seconds, transfers, cache_misses;
	unsigned long writer_ops;
	struct vs_fault_stats st;		/* this repeat's counts */
	struct vs_lockstat lockstat[2];
	bool has_lockstat;
	struct mf_cycles cyc;
	int stopped_by;				/* the signal that stopped it */
};

/* @sum += what the model counted between @a and @b. */
void mf_stats_add(struct vs_fault_stats *sum, const struct vs_fault_stats *a,
		  const struct vs_fault_stats *b);

/* Fold one repeat's lock statistics into @sum: counts add, extremes stay. */
void mf_lockstat_add(struct vs_lockstat *sum, const struct vs_lockstat *x);

/*
 * mf_lockstat_collect - add the mmap_lock's statistics of the repeat
 * just run (R and W) to @sum.
 * Return: 0, or -ENOENT when lock statistics are off or there is none.
 */
int mf_lockstat_collect(struct vs_lockstat sum[2]);

/* @sum += @x, the named lines matched by name. */
void mf_cycles_add(struct mf_cycles *sum, const struct mf_cycles *x);

/*
 * mf_add_sample - make @s repeat @k of @r: its figures, its counts added
 * to the sums, the means brought up to date.
 * Return: 0, or -EINVAL when @k is not the next repeat or @s took no
 * time.
 */
int mf_add_sample(struct mf_result *r, unsigned int k,
		  const struct mf_sample *s);

/* mf_summarise - @r's means and spreads over its @repeats_done repeats. */
void mf_summarise(struct mf_result *r);

/* ---- mf_shard.c: --shard K/N, --merge (docs/sharding.md) -------------- */

/* Shard @k of @n, 1 <= k <= n; n == 0: not sharded. */
struct mf_shard {
	unsigned int k, n;
};

#define MF_SHARD_ARGS_MAX 256	/* the options a shard file holds */

/* What a shard file says: its shard, its jobs, the options it ran. */
struct mf_shard_file {
	struct mf_shard shard;
	unsigned int jobs;
	int nargs;
	char *args[MF_SHARD_ARGS_MAX];
};

/* Whether job @job belongs to shard @sh (NULL or n == 0: every job). */
bool mf_shard_has(const struct mf_shard *sh, unsigned int job);

/*
 * mf_shard_write - shard @sh's file on @out: the options @args[0..@nargs)
 * and the samples of its jobs among @s[0..@total) that ran to the end
 * (@ok[j]).
 * Return: 0, or -EIO when @out could not be written.
 */
int mf_shard_write(FILE *out, const struct mf_shard *sh, char **args,
		   int nargs, const struct mf_sample *s, const char *ok,
		   unsigned int total);

/*
 * mf_shard_read - the shard file @path into @f, its samples into a new
 * *@s[0..@f->jobs), each one present marked in the new *@have.
 * Return: 0, or a negative errno, said on stderr naming @path.
 */
int mf_shard_read(const char *path, struct mf_shard_file *f,
		  struct mf_sample **s, char **have);

/* Free what mf_shard_read() put in @f. */
void mf_shard_file_free(struct mf_shard_file *f);

/*
 * mf_shard_merge - the shard files @paths[0..@nr), each shard of one job
 * once and none missing, every job of each in: their options in @first,
 * every job's sample in a new *@all[0..@first->jobs), each marked in
 * the new *@ok.
 * Return: 0, or -EINVAL (said on stderr: the missing or duplicate shard,
 * the file of another job) or another negative errno.
 */
int mf_shard_merge(const char *const *paths, unsigned int nr,
		   struct mf_shard_file *first, struct mf_sample **all,
		   char **ok);

/* ---- mf_run.c ----------------------------------------------------------- */

/*
 * Called on the calling thread of mf_run() about every 100 ms: the
 * repeat under way (from 0), its seconds so far and pages touched.
 */
typedef void mf_tick_fn(const struct mf_config *cfg, unsigned int repeat,
			double elapsed_s, double touched);

/*
 * mf_run_repeat - run repeat @k of @r->cfg and add it to @r
 * @k:    the next repeat: @r->repeats_done
 * @stop: raised by the caller (Ctrl-C, from a signal handler) to end
 *        the run at the end of the current pass
 * @tick: the progress callback, or NULL
 *
 * Each repeat sets up its own mm (or uffd region, or mapping), so that
 * the caller can interleave the repeats of several configurations.  With
 * lock statistics on, they are reset before the repeat and the
 * mmap_lock's are added to @r->lockstat after it.  @r's means and
 * spreads are brought up to date (mf_summarise()).
 *
 * Return: 0; -EINVAL for a bad configuration or @k; a negative errno
 * (vs_strerror) when the backing cannot be set up, e.g. -EPERM for a
 * refused userfaultfd.
 */
int mf_run_repeat(struct mf_result *r, unsigned int k, vs_atomic32_t *stop,
		  mf_tick_fn *tick);

/* ---- mf_vcpu.c, mf_jobs.c: the vCPU mode -------------------------------- */

/*
 * mf_vcpu_repeat - run repeat @k of @cfg on a machine of @cfg->threads
 * vCPUs of profile @cfg->machine (one more for a writer when the
 * profile has it), its engine seeded with @cfg->seed + @k
 * @stop: the Ctrl-C flag: the run ends at the end of the pass
 * @out: receives the repeat's figures (zeroed first)
 *
 * Context: a process of its own for each call (mf_jobs_run()): the
 * figures depend on the heap's history, so every repeat starts from the
 * same one.
 * Return: 0, -EINVAL for a bad configuration, or the negative errno of
 * the profile, the machine or the model (also in @out->err).
 */
int mf_vcpu_repeat(const struct mf_config *cfg, unsigned int k,
		   vs_atomic32_t *stop, struct mf_sample *out);

/*
 * mf_jobs_run - the repeats of the configurations of @r[0..@n) that
 * shard @sh has (NULL: all), each in a child process forked from the
 * caller, at most @parallel at once: job j, repeat j / n of @r[j % n],
 * into @s[j] of @s[0..n * repeats), which the caller zeroed; @ok[j]
 * receives whether it ran to its end.
 * @done: called after each repeat that ended, or NULL
 *
 * Context: the main thread; SIGCHLD not ignored.
 * Return: 0, 1 when @stop ended it early, or the first negative errno
 * a repeat returned (its message was printed by the child).
 */
int mf_jobs_run(struct mf_result *r, int n, unsigned int parallel,
		const struct mf_shard *sh, vs_atomic32_t *stop,
		void (*done)(unsigned int finished, unsigned int total),
		struct mf_sample *s, char *ok);

/*
 * mf_jobs_add - every sample of @s[0..n * repeats) that ran to its end
 * (@ok[j]) added to @r[0..@n) in job order, round by round, as bench_rounds()
 * runs them, so the output does not depend on the order they ended in
 * nor on the host or shard that ran them.
 */
void mf_jobs_add(struct mf_result *r, int n, const struct mf_sample *s,
		 const char *ok);

/* ---- mf_report.c -------------------------------------------------------- */

/*
 * mf_print_stat - the perf-stat-like block of one configuration; each
 * figure says whether it is the mean of a run or the sum of all runs:
 *
 *   Performance counter stats for 'multi-fault ... --strategy spf' (3 runs):
 *
 *        1,234,567      page-faults          mean of 3   ( +-  1.25% )
 *          411,522      page-faults/s        mean of 3   ( +-  1.20% )
 *          205,761      page-faults/s/thread mean of 3
 *       spf aborts, sum of 3: seq_odd 12, ...   (nonzero ones)
 *
 *      3.000123456 seconds time elapsed      mean of 3   ( +-  0.01% )
 */
void mf_print_stat(FILE *out, const struct mf_result *r);

/*
 * mf_ratio - the ratio of @post's faults/s to @pre's, round by round
 * @out: its median, lowest and highest over the rounds both completed
 *       (bench_ratio_range())
 *
 * Return: the number of rounds compared; 0 (and nothing written) when
 * there is none.
 */
unsigned int mf_ratio(const struct mf_result *post,
		      const struct mf_result *pre, struct bench_range *out);

/*
 * mf_pre_of - the PRE of @r[i] in Zijlstra's 2014 PRE/POST table: the
 * result that differs from it only in running the locked strategy.
 * Return: its index, or -1 (none, or @r[i] is one).
 */
int mf_pre_of(const struct mf_result *r, int n, int i);

/*
 * mf_print_summary - the one table that ends a run of several
 * configurations, on standard output: a row per configuration with
 * page-faults and faults/s (means over the runs), and, after Zijlstra's
 * 2014 PRE/POST table, each strategy's faults/s over locked's (the PRE)
 * of the same threads and lock, computed within each round: the median
 * and the range over the rounds (bench_print_range()).
 */
void mf_print_summary(const struct mf_result *r, int n);

/*
 * mf_print_json - one JSON object on one line on standard output
 * (bench_report.h's writer): backing, uffd_mode (null
 * unless uffd), strategy, lock (null for native), threads, writer,
 * writer_rate, duration_s, repeats, faults, faults_stddev,
 * faults_per_s, faults_per_s_stddev, elapsed_s, writer_ops, aborts
 * ({spf reason: n, ..., vma_lock_abort, vma_lock_retry, vma_lock_miss}),
 * the success counters, "vs_pre" (the ratio to @pre as mf_ratio()
 * gives it: {median, min, max, rounds}, null without a PRE) and, with
 * --lockstat, "lockstat": {"mmap_lock": {"R": {...}, "W": {...}}}, the
 * fields of struct vs_lockstat summed over the repeats.
 */
void mf_print_json(const struct mf_result *r, const struct mf_result *pre);

/* ---- mf_plot.c ---------------------------------------------------------- */

/*
 * mf_plot_svg - faults/s against threads, one line per strategy (and
 * lock kind, backing, writer, when they vary), with labelled axes and a
 * legend, as a standalone SVG.  The x ticks are the thread counts that
 * ran; when each is twice the one before, the x axis is log2.
 * Return: 0, or -errno when @path cannot be written.
 */
int mf_plot_svg(const char *path, const struct mf_result *r, int n);

/* ---- mf_compare.c: the native tool's ways into the vCPU mode ----------- */

/* mf_exec_vcpu - become multi-fault-vcpu with @argv; exits on failure. */
void mf_exec_vcpu(char **argv);

/*
 * mf_compare_real - --compare-real: multi-fault-vcpu @argv --json
 * predicts @r[0..@n) on @machine, then @run_real runs them on real
 * threads, and a table shows both, with the error of each and of each
 * POST/PRE ratio.
 * Return: the exit status.
 */
int mf_compare_real(struct mf_result *r, int n, const char *machine,
		    char **argv, int (*run_real)(void));

/* ---- mf_vreport.c: what the vCPU mode prints besides ------------------- */

/*
 * mf_print_vcpu_counts - the perf-stat lines only a vCPU run has:
 * cache-misses (the model's line transfers from another socket or from
 * memory, what perf counts on Intel), all line transfers, each the mean
 * of the runs with its spread; with --seconds-as, scaled as page-faults.
 */
void mf_print_vcpu_counts(FILE *out, const struct mf_result *r);

/*
 * mf_print_breakdown - where the virtual cycles of a fault went: each
 * part of struct mf_cycles per fault and as a share of all, the
 * costliest named lines, and the zap's share of the elapsed time.
 */
void mf_print_breakdown(FILE *out, const struct mf_result *r);

/* mf_json_vcpu - the vCPU mode's fields of mf_print_json()'s line. */
void mf_json_vcpu(const struct mf_result *r);

/* ---- mf_trace.c --------------------------------------------------------- */

/*
 * Chrome Trace Event Format (JSON object with "traceEvents"), for
 * Perfetto UI and chrome://tracing: per thread, "X" complete events for
 * faults ("fault"), mmap_lock waits ("mmap_lock wait R|W") and holds
 * ("mmap_lock R|W"), properly nested; "M" thread_name metadata; "C"
 * counter events "faults/s" (and, in the vCPU mode, "line transfers/s");
 * "span" slices for every other holder of the mmap_lock (the zap, the
 * writer's operations, setup, teardown).  ts and dur in microseconds.
 * Bounded: one fault in @sample is recorded (with the lock events
 * inside it), and at most @max_events in all, after which recording
 * stops (said in the file's "otherData").
 * A fault whose lock wait or hold lasts @slow_ns or more is recorded
 * whatever @sample says, with "args":{"kept":"slow"}.  Every function
 * but open and close may be called from any thread, and does nothing
 * when no trace is open.
 */
int mf_trace_open(const char *path, unsigned int sample, uint64_t slow_ns,
		  size_t max_events);

/* The calling thread's name in the trace ("faulter 0", "writer"). */
void mf_trace_thread(const char *name);

/*
 * A fault of the calling thread begins, ends.  begin decides whether it
 * is sampled; the lock events between the two are held back, and end
 * records them with the fault if it is sampled or one of them lasted
 * @slow_ns or more.  Lock events outside any fault (the zap's, the
 * writer's) are always recorded.
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

/* CLOCK_MONOTONIC in ns: the clock of the real-thread mode's trace. */
uint64_t mf_now_ns(void);

/* Whether a trace is open (in a child of the vCPU mode: its part). */
bool mf_trace_on(void);

/*
 * The vCPU mode's trace (mf_jobs.c): each repeat's child records a part
 * of its own, in virtual time (vs_vcpu_now_ns(), from its machine's
 * creation), with a track per vCPU context keyed by vs_vcpu_self(), and
 * at most max_events / @parts events.  The parent adds the parts in job
 * order, each a process (@pid, from 1) named after its configuration
 * and repeat, and mf_trace_close() writes the end.
 *
 * part_open: the parent, before forking a job: an unlinked temporary
 * file for its part; part_begin, part_end: the child, around its repeat;
 * part_add: the parent, in @pid order once the child exited (@fd -1:
 * the name alone), closing @fd.  Each returns 0 (part_open a
 * descriptor) or a negative errno (-ENOENT when no trace is open).
 */
int mf_trace_part_open(void);
int mf_trace_part_begin(int fd, unsigned int pid, unsigned int parts);
int mf_trace_part_end(uint64_t *recorded, uint64_t *dropped);
int mf_trace_part_add(int fd, unsigned int pid, const char *name,
		      uint64_t recorded, uint64_t dropped);

#endif /* VS_TOOLS_MF_H */
