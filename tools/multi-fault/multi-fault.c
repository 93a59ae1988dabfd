/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/multi-fault.c - Kamezawa Hiroyuki's multi-fault-all.c
 * (linux-mm, 2010-01-06), the benchmark of Zijlstra's 2014 PRE/POST table, on
 * the model, on real memory through userfaultfd, and natively on the host
 * kernel.  See multi-fault(1).
 *
 * This file holds the options, the list of configurations, the rounds,
 * Ctrl-C and the progress line; mf_run.c runs one repeat of a
 * configuration and mf_report.c prints it (mf.h).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vmsim/vcpu_profile.h>

#include "bench_kernel.h"
#include "bench.h"
#include "mf.h"
#include <vmsim/vcpu.h>

#ifndef MF_VCPU
#define MF_VCPU 0	/* 1: multi-fault-vcpu, on libvmsim-vcpu */
#endif

#define EXIT_SETUP 1
#define EXIT_INTR BENCH_EXIT_INTR
#define MAX_RESULTS 512
#define MAX_SHARD_FILES 4096	/* --merge */
#define MAX_ARGS 1024		/* arguments, the program's name in */
#define MAX_ARGS_TEXT 65536	/* their bytes */
#define DEFAULT_SLOW_US 100	/* --trace-slow-us */
#define MAX_SLOW_US 10000000	/* --trace-slow-us: 10 s */

static struct {
	int backing, uffd_mode, writer;
	int strategy[VS_FAULT_NR_STRATEGIES], nr_strategies;
	const char *lock[BENCH_MAX_LOCKS];
	int nr_locks;
	unsigned int writer_rate, trace_sample;
	unsigned int trace_slow_us;
	unsigned long seed;
	bool lockstat;
	const char *trace, *plot;
	/* The vCPU mode: --vcpus, --machine, --seconds-as, --compare-real */
	bool vcpu_mode, compare;
	unsigned int vcpus;
	const char *machine;
	double seconds_as;
	/* --workload, --mode, --size */
	const char *workload;
	int mode;
	size_t bytes;
	const char *kernel;	/* --kernel; NULL: vmsim's default */
	struct mf_shard shard;	/* --shard, VMSIM_SHARD; n 0: all */
	bool merging;		/* --merge: the options are a shard's */
} opt = { .trace_sample = 100, .trace_slow_us = DEFAULT_SLOW_US,
	  .seed = 1 };

static struct mf_result results[MAX_RESULTS];
static int nr_results;
static vs_atomic32_t stop;
static int progress;		/* stderr is a terminal */

/* ---- options ------------------------------------------------------------- */

static const char about[] =
"Kamezawa's multi-fault-all.c, the benchmark of Zijlstra's 2014 PRE/POST\n"
"table: each thread writes every page of its 2 MiB slice of one mapping,\n"
"thread 0 zaps them all with MADV_DONTNEED, again, for the duration;\n"
"page faults counted per configuration.  Repeats run in rounds (every\n"
"configuration once, then again), and each ratio is taken within a\n"
"round.  An option that does not apply with the others is refused.\n";

static const struct bench_opt opts[] = {
	{ BENCH_OPT_WORKLOAD, "multi-fault (Kamezawa's, the default), pft,\n"
			      "page_fault1 or page_fault2\n"
			      "(docs/workloads.md)", NULL },
	{ BENCH_OPT_MODE, "threads (one mm, the default) or processes\n"
			  "(an mm each, sharing the page pool); sim only",
	  NULL },
	{ BENCH_OPT_SIZE, "KiB each thread faults per pass (default the\n"
			  "workload's: 2048, or 131072 for page_fault1/2)",
	  NULL },
	{ BENCH_OPT_BACKING, "sim (the model), uffd (real memory through\n"
			     "userfaultfd), native (the host kernel, no\n"
			     "model) (default sim)", NULL },
	{ BENCH_OPT_UFFD_MODE, "sigbus, threads or uv; uffd only\n"
			       "(default sigbus)", "MODE" },
	{ BENCH_OPT_STRATEGY, "locked,spf,pervma or all; not native\n"
			      "(default all)", NULL },
	{ BENCH_OPT_LOCK, "mmap_lock kinds: rwsem,pthread,percpu,brlock,\n"
			  "prwlock or all; not native (default rwsem)",
	  NULL },
	{ BENCH_OPT_THREADS, "faulting threads, e.g. 2, 1,2,4 or 1-4, each\n"
			     "1..256 (default: the online CPUs)", NULL },
	{ BENCH_OPT_SWEEP, "thread counts to run, e.g. 1,2,4: --threads\n"
			   "with counts only, the name --plot's examples use",
	  NULL },
	{ BENCH_OPT_KERNEL, BENCH_KERNEL_HELP, NULL },
	{ BENCH_OPT_DURATION, NULL, NULL },
	{ BENCH_OPT_REPEAT, "rounds, 1..1000: a block's figure is the mean\n"
			    "over them, a POST/PRE ratio the median\n"
			    "(default 1; 3 with --quick)", NULL },
	{ BENCH_OPT_QUICK, "--duration 3 and --repeat 3, each unless given",
	  NULL },
	{ BENCH_OPT_WRITER, "none, mmap, mprotect or fork: a thread that\n"
			    "changes the address space meanwhile\n"
			    "(default none)", "KIND" },
	{ BENCH_OPT_WRITER_RATE, "writer operations per second, 0 flat out\n"
				 "(default 0); needs a --writer", NULL },
	{ BENCH_OPT_SEED, "seeds the mmap writer's placement (default 1);\n"
			  "needs --writer mmap", NULL },
	{ BENCH_OPT_JSON, "one JSON object per configuration (with\n"
			  "--lockstat, the lock statistics inside it)", NULL },
	{ BENCH_OPT_LOCKSTAT, "the mmap_lock statistics of each\n"
			      "configuration; not native", NULL },
	{ BENCH_OPT_TRACE, "a Chrome/Perfetto trace of the runs (with\n"
			   "--vcpus: in virtual time, a track per vCPU);\n"
			   "not native", NULL },
	{ BENCH_OPT_TRACE_SAMPLE, "with --trace, record one fault in N\n"
				  "(default 100); not uffd", NULL },
	{ BENCH_OPT_TRACE_SLOW_US, "with --trace, also every fault with an\n"
				   "mmap_lock wait or hold of N microseconds\n"
				   "or more (default 100); not uffd", NULL },
	{ BENCH_OPT_PLOT, "faults/s against threads, as SVG; needs two\n"
			  "thread counts or more", "FILE.svg" },
	{ BENCH_OPT_VCPUS, "run on N virtual CPUs of --machine, in virtual\n"
			   "time (--sweep for several counts); sim only", NULL },
	{ BENCH_OPT_MACHINE, "the vCPUs' machine profile by name or path\n"
			     "(default ivb-ep-2x10x2, host with\n"
			     "--compare-real); --duration is then virtual\n"
			     "seconds (default 1, 3 with --quick)", NULL },
	{ BENCH_OPT_SECONDS_AS, "print page-faults scaled to this many\n"
				"seconds, e.g. 60 as Zijlstra's table", NULL },
	{ BENCH_OPT_COMPARE_REAL, "run real threads and the vCPUs of\n"
				  "--machine (host) alike, side by side", NULL },
	{ BENCH_OPT_SHARD, "with --vcpus, run repeat j of all only where\n"
			   "j % N is K-1 and print them as JSON for\n"
			   "--merge (also VMSIM_SHARD=K/N)", NULL },
	{ BENCH_OPT_MERGE, "FILE,...: the shards' JSON put together:\n"
			   "what the run unsharded prints; first and\n"
			   "alone", "FILES" },
	{ 0, NULL, NULL },
};

/* The built-in strategies: an out-of-tree one has no place here. */
static const char *strategy_of(int i)
{
	return i < VS_FAULT_NR_STRATEGIES ? vs_fault_strategy_name(i) : NULL;
}

/* Strategy @s, once, in the order given. */
static void add_strategy(int s)
{
	int k;

	for (k = 0; k < opt.nr_strategies; k++)
		if (opt.strategy[k] == s)
			return;
	opt.strategy[opt.nr_strategies++] = s;
}

static void strategy_item(const char *item)
{
	int i = bench_arg_name(item, strategy_of, "a strategy", true), s;

	for (s = 0; s < VS_FAULT_NR_STRATEGIES; s++)
		if (i < 0 || i == s)
			add_strategy(s);
}

/* A kind of vmsim/lock.h, in its order for "all". */
static void lock_item(const char *item)
{
	bench_arg_names(item, vs_lock_kind_name, "a lock kind", opt.lock,
			&opt.nr_locks, BENCH_MAX_LOCKS);
}

/* An item of --sweep: a count, named --sweep in its errors. */
static void sweep_item(const char *item)
{
	bench_add_threads(bench_arg_uint(item, 1, MF_MAX_THREADS));
}

static const char *workload_of(int i)
{
	const struct vs_workload_ops *w = vs_workload_builtin(i);

	return w ? w->name : NULL;
}

static const char *mode_of(int i)
{
	return vs_workload_mode_name(i);
}

static void set_option(int key, char *arg)
{
	switch (key) {
	case BENCH_OPT_WORKLOAD:
		opt.workload = workload_of(bench_arg_name(arg, workload_of,
							  "a workload", false));
		break;
	case BENCH_OPT_MODE:
		opt.mode = bench_arg_name(arg, mode_of, "a mode", false);
		break;
	case BENCH_OPT_SIZE:
		opt.bytes = (size_t)bench_arg_uint(arg, 4, 4194304) << 10;
		if (opt.bytes % VS_PAGE_SIZE)
			bench_usage_error("--size: %s KiB is not a whole number "
					  "of 4 KiB pages", arg);
		break;
	case BENCH_OPT_BACKING:
		opt.backing = bench_arg_name(arg, mf_backing_name, "a backing",
					     false);
		break;
	case BENCH_OPT_UFFD_MODE:
		opt.uffd_mode = bench_arg_name(arg, vs_uffd_mode_name,
					       "a uffd mode", false);
		break;
	case BENCH_OPT_STRATEGY:
		opt.nr_strategies = 0;
		bench_arg_list(arg, strategy_item);
		break;
	case BENCH_OPT_LOCK:
		opt.nr_locks = 0;
		bench_arg_list(arg, lock_item);
		break;
	case BENCH_OPT_SWEEP:
		bench_arg_list(arg, sweep_item);
		break;
	case BENCH_OPT_WRITER:
		opt.writer = bench_arg_name(arg, mf_writer_name, "a writer",
					    false);
		break;
	case BENCH_OPT_WRITER_RATE:
		opt.writer_rate = bench_arg_uint(arg, 0, 10000000);
		break;
	case BENCH_OPT_SEED:
		opt.seed = bench_arg_uint(arg, 0, 4294967295UL);
		break;
	case BENCH_OPT_LOCKSTAT:
		opt.lockstat = true;
		break;
	case BENCH_OPT_TRACE:
		opt.trace = arg;
		break;
	case BENCH_OPT_TRACE_SAMPLE:
		opt.trace_sample = bench_arg_uint(arg, 1, 1000000);
		break;
	case BENCH_OPT_TRACE_SLOW_US:
		opt.trace_slow_us = bench_arg_uint(arg, 0, MAX_SLOW_US);
		break;
	case BENCH_OPT_PLOT:
		opt.plot = arg;
		break;
	case BENCH_OPT_VCPUS:
		opt.vcpus = bench_arg_uint(arg, 1, MF_MAX_THREADS);
		break;
	case BENCH_OPT_MACHINE:
		opt.machine = arg;
		break;
	case BENCH_OPT_KERNEL:
		opt.kernel = bench_arg_kernel(arg);
		break;
	case BENCH_OPT_SECONDS_AS:
		opt.seconds_as = bench_arg_seconds(arg) / 1000.0;
		break;
	case BENCH_OPT_COMPARE_REAL:
		opt.compare = true;
		break;
	case BENCH_OPT_SHARD:
		if (vs_shard_parse(arg, &opt.shard.k, &opt.shard.n))
			bench_usage_error("--shard: '%s' is not K/N with 1 <= "
					  "K <= N", arg);
		break;
	case BENCH_OPT_MERGE:
		bench_usage_error("--merge comes first and alone: the options "
				  "are those the shards ran");
	}
}

static const struct bench_tool tool = {
	.name = "multi-fault", .about = about, .opts = opts,
	.set = set_option, .duration_ms = 60000, .repeat = 1,
	.quick_ms = 3000, .quick_repeat = 3,
};

/* @key, given, does not apply with --backing @backing. */
static void refuse_on(int key, int backing, const char *why)
{
	if (bench_given(key) && opt.backing == backing)
		bench_usage_error("%s does not apply with --backing %s: %s",
				  bench_opt_name(key), mf_backing_name(backing),
				  why);
}

/*
 * --plot's file must be writable before anything runs: an existing one
 * writable, a new one in a writable folder.  Else a usage error.
 */
static void check_plot_path(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (!access(path, F_OK)) {
		if (access(path, W_OK))
			bench_usage_error("--plot: cannot write '%s': %s", path,
					  strerror(errno));
		return;
	}
	if (n >= sizeof(dir))
		bench_usage_error("--plot: path too long: '%.60s...'", path);
	if (!slash)
		strcpy(dir, ".");
	else if (!n)
		strcpy(dir, "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)n, path);
	if (access(dir, W_OK))
		bench_usage_error("--plot: cannot write '%s': %s: %s", path,
				  dir, strerror(errno));
}

/*
 * --shard, or VMSIM_SHARD where --shard is not given: only the vCPU
 * mode, deterministic, makes the shards' union the unsharded run.
 */
static void check_shard(void)
{
	const char *env = getenv("VMSIM_SHARD");

	if (!bench_given(BENCH_OPT_SHARD) && env && *env && !opt.merging &&
	    vs_shard_parse(env, &opt.shard.k, &opt.shard.n))
		bench_usage_error("VMSIM_SHARD: '%s' is not K/N with 1 <= K "
				  "<= N", env);
	if (!opt.shard.n)
		return;
	if (!opt.vcpu_mode || opt.compare)
		bench_usage_error("--shard (or VMSIM_SHARD) needs --vcpus "
				  "without --compare-real: only a vCPU run "
				  "is the same on every host");
	if (opt.trace)
		bench_usage_error("--trace does not apply with --shard: "
				  "trace the unsharded run");
}

/* Every pair of options that cannot mean anything together. */
static void check_pairs(void)
{
	static const int model_only[] = { BENCH_OPT_STRATEGY, BENCH_OPT_LOCK,
					  BENCH_OPT_LOCKSTAT, BENCH_OPT_TRACE };
	unsigned int i;

	for (i = 0; i < VS_ARRAY_SIZE(model_only); i++)
		refuse_on(model_only[i], MF_NATIVE,
			  "the host kernel runs no model");
	if (bench_given(BENCH_OPT_UFFD_MODE) && opt.backing != MF_UFFD)
		bench_usage_error("--uffd-mode needs --backing uffd");
	refuse_on(BENCH_OPT_TRACE_SAMPLE, MF_UFFD,
		  "its faults are resolved on other threads, all traced");
	refuse_on(BENCH_OPT_TRACE_SLOW_US, MF_UFFD,
		  "its faults are resolved on other threads, all traced");
	bench_refuse_without(BENCH_OPT_TRACE_SAMPLE, BENCH_OPT_TRACE);
	bench_refuse_without(BENCH_OPT_TRACE_SLOW_US, BENCH_OPT_TRACE);
	bench_refuse_with(BENCH_OPT_THREADS, BENCH_OPT_SWEEP,
			  "give the thread counts once");
	if (opt.plot && bench_std.nr_threads < 2)
		bench_usage_error("--plot needs two thread counts or more "
				  "(--sweep 1,2,4)");
	if (opt.plot)
		check_plot_path(opt.plot);
	if (bench_given(BENCH_OPT_WRITER_RATE) &&
	    opt.writer == MF_WRITER_NONE)
		bench_usage_error("--writer-rate needs --writer mmap, "
				  "mprotect or fork");
	if (opt.mode == VS_WORKLOAD_PROCESSES && opt.backing != MF_SIM)
		bench_usage_error("--mode processes does not apply with "
				  "--backing %s: each process needs an mm of "
				  "its own, and %s has one", mf_backing_name(
				  opt.backing), opt.backing == MF_UFFD ?
				  "a userfaultfd region" : "this process");
	if (opt.writer != MF_WRITER_NONE && opt.workload &&
	    strcmp(opt.workload, "multi-fault"))
		bench_usage_error("--writer %s does not apply with --workload "
				  "%s: the writer places its VMAs below "
				  "multi-fault's mapping",
				  mf_writer_name(opt.writer), opt.workload);
	if (bench_given(BENCH_OPT_SEED) && opt.writer != MF_WRITER_MMAP &&
	    !opt.vcpu_mode)
		bench_usage_error("--seed needs --writer mmap or --vcpus: it "
				  "places the mmap writer's VMAs and seeds "
				  "the vCPUs");
}

/*
 * The vCPU mode's options: counts from --vcpus or --sweep, the model
 * only, the profile loaded here so that a bad one is refused before
 * anything runs.
 */
static void check_vcpu_mode(void)
{
	struct vs_vcpu_profile p;
	char msg[256];
	int i;

	bench_refuse_with(BENCH_OPT_SWEEP, BENCH_OPT_VCPUS,
			  "give the vCPU counts once");
	if (bench_given(BENCH_OPT_THREADS))
		bench_usage_error("--threads does not apply with --machine: "
				  "give --vcpus N or --sweep LIST");
	if (opt.backing != MF_SIM)
		bench_usage_error("--backing %s does not apply with --vcpus: "
				  "the vCPUs run the model (sim)",
				  mf_backing_name(opt.backing));
	if (opt.trace && opt.compare)
		bench_usage_error("--trace does not apply with --compare-real: "
				  "trace the real threads and the vCPUs in two "
				  "runs");
	if (opt.vcpus)
		bench_add_threads(opt.vcpus);
	/* Not the host's CPU count: the output is the same everywhere. */
	if (!bench_std.nr_threads)
		bench_usage_error("the vCPU mode needs --vcpus N or --sweep "
				  "LIST");
	if (!opt.machine)
		opt.machine = opt.compare ? "host" : "ivb-ep-2x10x2";
	if (vs_vcpu_profile_load(&p, opt.machine, msg, sizeof(msg)))
		bench_usage_error("--machine: %s", msg);
	for (i = 0; i < bench_std.nr_threads; i++)
		if (bench_std.threads[i] > p.nr_cpus)
			bench_usage_error("--vcpus: %u is more than the %u CPUs "
					  "of %s", bench_std.threads[i],
					  p.nr_cpus, p.name);
	if (!bench_given(BENCH_OPT_DURATION) && !bench_given(BENCH_OPT_QUICK))
		bench_std.duration_ms = 1000;
}

static void parse_options(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	bench_parse_options(&tool, argc, argv);
	opt.vcpu_mode = bench_given(BENCH_OPT_VCPUS) ||
			bench_given(BENCH_OPT_MACHINE) || opt.compare;
	if (opt.vcpu_mode)
		check_vcpu_mode();
	if (!opt.nr_strategies)
		strategy_item("all");
	if (!opt.nr_locks)
		opt.lock[opt.nr_locks++] = "rwsem";
	if (!bench_std.nr_threads)
		bench_add_threads(ncpu > 0 && ncpu <= MF_MAX_THREADS ?
					  (unsigned int)ncpu : 1);
	check_pairs();
	check_shard();
	if (opt.backing == MF_NATIVE) {
		/* No model: one configuration per thread count. */
		opt.nr_strategies = 1;
		opt.nr_locks = 1;
	}
}

/* ---- running ------------------------------------------------------------- */

/*
 * The arguments as given, for multi-fault-vcpu (parsing the lists
 * writes into their text), and those a shard's file holds (@shard_argv,
 * @shard_argc: all but --shard): kept for the process's life.
 */
static char **given_argv, **shard_argv;
static int shard_argc;

/*
 * A copy of @argv in static memory, not the heap: a vCPU repeat's
 * figures depend on the heap's history (mf_jobs.c), and a shard's
 * parent, given --shard, must fork its children from the heap the
 * unsharded run's has.
 */
static char **argv_copy(int argc, char **argv)
{
	static char *ptrs[2][MAX_ARGS + 1];
	static char text[2][MAX_ARGS_TEXT];
	static unsigned int copies;
	size_t at = 0, len;
	char **copy;
	int i;

	if (copies == 2 || argc > MAX_ARGS)
		bench_usage_error("too many arguments (at most %d)", MAX_ARGS);
	copy = ptrs[copies];
	for (i = 0; i < argc; i++) {
		len = strlen(argv[i]) + 1;
		if (len > MAX_ARGS_TEXT - at)
			bench_usage_error("arguments too long (at most %d "
					  "bytes)", MAX_ARGS_TEXT);
		copy[i] = memcpy(text[copies] + at, argv[i], len);
		at += len;
	}
	copy[argc] = NULL;
	copies++;
	return copy;
}

/* The arguments less "--shard K/N" (or "--shard=K/N"), for a shard's
 * file: the shards of one job differ in nothing else. */
static int args_unsharded(int argc, char **argv)
{
	int i, n = 0;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "--shard=", 8))
			continue;
		if (!strcmp(argv[i], "--shard") && i + 1 < argc) {
			i++;
			continue;
		}
		argv[n++] = argv[i];
	}
	argv[n] = NULL;
	return n;
}

/*
 * Ctrl-C (SIGINT) or SIGTERM ends the current pass, then everything,
 * and what was measured is printed; the exit status is 128 + the
 * signal.  A second one changes nothing (timeout(1) sends one to the
 * process and one to its group); SIGQUIT still kills.
 */
static void on_stop_signal(int sig)
{
	/* Past the seam, as the workload reads it (vmsim/workload.h): on
	 * vCPUs vs_write_once() is an event of the engine, which the
	 * handler would enter in the middle of one of its own.
	 * vs_vcpu_stop() only stores the signal. */
	stop = 1;
	vs_vcpu_stop(sig);
}

/* The exit status of a run that a signal stopped: 130, 143. */
static int exit_intr(void)
{
	int sig = vs_vcpu_stop_signal();

	return sig ? 128 + sig : EXIT_INTR;
}

/* Did a signal stop the runs (this process's, or a vCPU run's)? */
static bool stopped(void)
{
	return vs_read_once(&stop) || vs_vcpu_stop_signal();
}

static void config_of(struct mf_config *c, int s, int l, int t)
{
	memset(c, 0, sizeof(*c));
	c->backing = opt.backing;
	c->uffd_mode = opt.uffd_mode;
	c->strategy = opt.backing == MF_NATIVE ? -1 : opt.strategy[s];
	c->lock = opt.backing == MF_NATIVE ? NULL : opt.lock[l];
	c->kernel = opt.kernel;
	c->threads = bench_std.threads[t];
	c->workload = opt.workload;
	c->mode = opt.mode;
	c->bytes = opt.bytes;
	c->writer = opt.writer;
	c->writer_rate = opt.writer_rate;
	c->duration_ms = bench_std.duration_ms;
	c->repeats = bench_std.repeat;
	c->seed = opt.seed;
	c->seconds_as = opt.seconds_as;
	c->machine = MF_VCPU && opt.vcpu_mode ? opt.machine : NULL;
	c->real_code = MF_VCPU && opt.compare;
}

/* Every configuration, by threads, then lock, then strategy. */
static void configure(void)
{
	int s, l, t;

	for (t = 0; t < bench_std.nr_threads; t++)
		for (l = 0; l < opt.nr_locks; l++)
			for (s = 0; s < opt.nr_strategies; s++)
				config_of(&results[nr_results++].cfg, s, l, t);
}

#if MF_VCPU
static void jobs_done(unsigned int finished, unsigned int total)
{
	if (progress)
		fprintf(stderr, "\r\033[Kvirtual CPUs: %u of %u runs done",
			finished, total);
}

/*
 * Every repeat of every configuration in a child process of its own,
 * as many at once as there are host CPUs (mf_jobs.c): the figures are
 * the same however many run together.
 */
static int run_all(void)
{
	unsigned int total = (unsigned int)nr_results * bench_std.repeat;
	struct mf_sample *s = calloc(total, sizeof(*s));
	char *ok = calloc(total, 1);
	cpu_set_t set;
	int ncpu = sched_getaffinity(0, sizeof(set), &set) ? 1 :
		   CPU_COUNT(&set), err;

	if (!s || !ok) {
		fprintf(stderr, "multi-fault: %s\n", strerror(ENOMEM));
		free(s);
		free(ok);
		return EXIT_SETUP;
	}
	/* The CPUs this process may use: taskset -c 0 runs one at a time. */
	err = mf_jobs_run(results, nr_results, ncpu > 0 ? (unsigned int)ncpu :
			  1, opt.shard.n ? &opt.shard : NULL, &stop,
			  jobs_done, s, ok);
	if (progress)
		fputs("\r\033[K", stderr);
	if (opt.shard.n && mf_shard_write(stdout, &opt.shard, shard_argv + 1,
					  shard_argc - 1, s, ok, total) && !err)
		err = -EIO;
	else if (!opt.shard.n)
		mf_jobs_add(results, nr_results, s, ok);
	free(s);
	free(ok);
	if (err < 0)
		return EXIT_SETUP;
	return stopped() ? exit_intr() : 0;
}
#else
static void tick(const struct mf_config *cfg, unsigned int repeat,
		 double elapsed_s, double touched)
{
	fprintf(stderr, "\r\033[K%s %s %s %u thr, round %u/%u: %5.1f s, "
		"%.0f faults",
		mf_backing_name(cfg->backing),
		cfg->strategy >= 0 ? vs_fault_strategy_name(cfg->strategy) :
				     "",
		cfg->lock ? cfg->lock : "", cfg->threads, repeat + 1,
		cfg->repeats, elapsed_s, touched);
}

/*
 * Repeat @round of configuration @arm.  Return: 0, 1 to stop (Ctrl-C),
 * or a negative errno, reported here.
 */
static int run_arm(void *ctx, unsigned int arm, unsigned int round)
{
	struct mf_result *r = &results[arm];
	int err;

	(void)ctx;
	if (vs_read_once(&stop))
		return 1;
	err = mf_run_repeat(r, round, &stop, progress ? tick : NULL);
	if (progress)
		fputs("\r\033[K", stderr);
	if (err)
		fprintf(stderr, "multi-fault: %s backing: %s\n",
			mf_backing_name(opt.backing), vs_strerror(err));
	return err;
}

/*
 * The repeats run in rounds: round k runs repeat k of every
 * configuration, so that drift on a shared host hits each alike and a
 * ratio taken within a round (mf_ratio()) cancels it.
 */
static int run_all(void)
{
	int err = bench_rounds(bench_std.repeat, (unsigned int)nr_results,
			       run_arm, NULL);

	if (err < 0)
		return EXIT_SETUP;
	return stopped() ? exit_intr() : 0;
}

#endif

static void trace_begin(void)
{
	int err = mf_trace_open(opt.trace, opt.trace_sample,
				(uint64_t)opt.trace_slow_us * 1000, 1000000);

	if (err) {
		fprintf(stderr, "multi-fault: --trace: %s: %s\n", opt.trace,
			strerror(-err));
		exit(EXIT_SETUP);
	}
	/* The vCPU mode's children record, each its own part. */
	if (!MF_VCPU)
		mf_trace_thread("main");
	vs_lock_trace_set(mf_trace_lock_hooks());
}

static void trace_end(void)
{
	int err;

	vs_lock_trace_set(NULL);
	err = mf_trace_close();
	if (err)
		fprintf(stderr, "multi-fault: --trace: %s: %s\n", opt.trace,
			strerror(-err));
}

/* The blocks (or JSON lines), the summary, the plot.  Return: 0, or
 * -errno when the plot could not be written. */
static int report(void)
{
	int i, p, err;

	for (i = 0; i < nr_results; i++) {
		if (!bench_std.json) {
			mf_print_stat(stdout, &results[i]);
			continue;
		}
		if (!results[i].repeats_done)
			continue;
		p = mf_pre_of(results, nr_results, i);
		mf_print_json(&results[i], p >= 0 ? &results[p] : NULL);
	}
	if (!bench_std.json && nr_results > 1)
		mf_print_summary(results, nr_results);
	fflush(stdout);
	if (opt.plot) {
		err = mf_plot_svg(opt.plot, results, nr_results);
		if (err)
			fprintf(stderr, "multi-fault: --plot: %s: %s\n",
				opt.plot, strerror(-err));
		else if (!bench_std.json)
			printf("plot: %s\n", opt.plot);
		return err;
	}
	return 0;
}


#if MF_VCPU
/* "--merge LIST" or "--merge=LIST": the list, or a usage error. */
static char *merge_list(int argc, char **argv)
{
	if (argc == 2 && !strncmp(argv[1], "--merge=", 8))
		return argv[1] + 8;
	if (argc == 3 && !strcmp(argv[1], "--merge"))
		return argv[2];
	bench_prog = "multi-fault";
	bench_usage_error("--merge takes the shards' files alone: "
			  "--merge a.json,b.json,...");
}

/*
 * --merge: the shards' options parsed as the unsharded run's, their
 * samples added as it adds its own.  Return: 0, or exits 2 when the
 * files are not every shard of one job.
 */
static int merge(int argc, char **argv)
{
	static const char *paths[MAX_SHARD_FILES];
	static char *args[MF_SHARD_ARGS_MAX + 2];
	struct mf_shard_file f;
	struct mf_sample *s;
	char *list = merge_list(argc, argv), *p, *ok;
	unsigned int nr = 0;

	for (p = strtok(list, ","); p && nr < VS_ARRAY_SIZE(paths);
	     p = strtok(NULL, ","))
		paths[nr++] = p;
	if (!nr || p || mf_shard_merge(paths, nr, &f, &s, &ok))
		exit(BENCH_EXIT_USAGE);
	args[0] = argv[0];
	memcpy(args + 1, f.args, (size_t)f.nargs * sizeof(*args));
	opt.merging = true;
	parse_options(f.nargs + 1, args);
	configure();
	if ((unsigned int)nr_results * bench_std.repeat != f.jobs) {
		fprintf(stderr, "multi-fault: --merge: the shards ran %u "
			"repeats, their options make %u\n", f.jobs,
			(unsigned int)nr_results * bench_std.repeat);
		exit(BENCH_EXIT_USAGE);
	}
	mf_jobs_add(results, nr_results, s, ok);
	free(s);
	free(ok);
	return report() ? EXIT_SETUP : 0;
}
#endif

int main(int argc, char **argv)
{
	struct sigaction sa;
	int ret;

	if (argc > 1 && !strncmp(argv[1], "--merge", 7))
#if MF_VCPU
		return merge(argc, argv);
#else
		mf_exec_vcpu(argv);	/* does not return */
#endif
	given_argv = argv_copy(argc, argv);
	shard_argv = argv_copy(argc, argv);
	shard_argc = args_unsharded(argc, shard_argv);
	parse_options(argc, argv);
#if !MF_VCPU
	if (opt.vcpu_mode && !opt.compare)
		mf_exec_vcpu(given_argv);	/* does not return */
#endif
	if ((size_t)bench_std.nr_threads * opt.nr_locks * opt.nr_strategies >
	    MAX_RESULTS)
		bench_usage_error("too many configurations (at most %d)",
				  MAX_RESULTS);
	progress = isatty(STDERR_FILENO);
	memset(&sa, 0, sizeof(sa));
	/* No SA_RESTART: the vCPU mode's waitpid() returns, to pass the
	 * signal on to the runs (mf_jobs.c). */
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	(void)vs_thread_attach();
	if (opt.lockstat)
		vs_lockstat_enable(1);
	if (opt.trace)
		trace_begin();
	configure();
#if !MF_VCPU
	if (opt.compare)
		return mf_compare_real(results, nr_results, opt.machine,
				       given_argv, run_all);
#endif
	ret = run_all();
	if (opt.trace)
		trace_end();
	if (opt.shard.n)
		return ret;
	if (report() && !ret)
		ret = EXIT_SETUP;
	if (stopped() && ret == exit_intr())
		fprintf(stderr, "multi-fault: interrupted\n");
	return ret;
}
