/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault.c - the benchmark of seed 004 (Kamezawa Hiroyuki's
 * multi-fault, January 2010), on the model, on real memory through
 * userfaultfd, and natively on the host kernel.  See multi-fault(1).
 *
 * This file holds the options, the list of configurations, Ctrl-C and
 * the progress line; mf_run.c runs one configuration and mf_report.c
 * prints it (tools/mf.h).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "mf.h"

#define EXIT_SETUP 1
#define EXIT_USAGE 2
#define EXIT_INTR 130
#define MAX_DURATION_MS 86400000u	/* a day */
#define MAX_LOCKS 8
#define MAX_SWEEP 32
#define MAX_RESULTS 512

static struct {
	int backing, uffd_mode, writer;
	int strategy[VS_FAULT_NR_STRATEGIES], nr_strategies;
	const char *lock[MAX_LOCKS];
	int nr_locks;
	unsigned int threads[MAX_SWEEP], nr_threads;
	unsigned int duration_ms, repeats, writer_rate, trace_sample;
	unsigned long seed;
	int quick, json, lockstat, sweep, duration_set;
	const char *trace, *plot;
} opt = { .duration_ms = 60000, .repeats = 0, .trace_sample = 100,
	  .seed = 1 };

static struct mf_result results[MAX_RESULTS];
static int nr_results;
static vs_atomic32_t stop;
static int progress;		/* stderr is a terminal */

static const char usage_text[] =
"usage: multi-fault [options]\n"
"\n"
"Kamezawa's multi-fault (seed 004): each thread writes every page of its\n"
"2 MiB slice of one mapping, thread 0 zaps them all with MADV_DONTNEED,\n"
"again, for the duration; page faults counted per configuration.\n"
"\n"
"  --backing B        sim (the model), uffd (real memory, userfaultfd),\n"
"                     native (the host kernel, no model)    (default sim)\n"
"  --uffd-mode M      sigbus, threads or uv (uffd backing) (default sigbus)\n"
"  --strategy S       locked, spf, pervma or all              (default all)\n"
"  --lock L           rwsem, pthread, percpu, brlock, prwlock or all\n"
"                                                          (default rwsem)\n"
"  --threads N        faulting threads                      (default nproc)\n"
"  --duration SEC     seconds per run, e.g. 60 or 0.5          (default 60)\n"
"  --quick            3-second runs, 3 repeats unless --repeat is given\n"
"  --repeat N         runs per configuration, for the +-       (default 1)\n"
"  --writer W         none, mmap, mprotect or fork: a thread that changes\n"
"                     the address space meanwhile            (default none)\n"
"  --writer-rate N    writer operations per second, 0 flat out  (default 0)\n"
"  --seed N           seeds the writer's placement               (default 1)\n"
"  --json             one JSON object per configuration\n"
"  --lockstat         the lock statistics of each configuration\n"
"  --trace FILE       a Chrome/Perfetto trace of the runs\n"
"  --trace-sample N   record one fault in N                   (default 100)\n"
"  --sweep LIST       thread counts to run, e.g. 1,2,4\n"
"  --plot FILE.svg    faults/s against threads (with --sweep)\n"
"  --help             this text\n"
"\n"
"See multi-fault(1).\n";

/* A bad option: one line that names it, exit 2. */
static _Noreturn __attribute__((format(printf, 1, 2))) void
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("multi-fault: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see --help)\n", stderr);
	exit(EXIT_USAGE);
}

static unsigned int parse_count(const char *flag, const char *s,
				unsigned long max)
{
	unsigned int v;

	if (bench_parse_uint(s, 1, max, &v))
		usage_error("%s: '%s' is not a number from 1 to %lu", flag, s,
			    max);
	return v;
}

static int parse_name(const char *flag, const char *s,
		      const char *(*name)(int), int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (name(i) && !strcmp(s, name(i)))
			return i;
	usage_error("%s: unknown value '%s'", flag, s);
}

static void parse_strategy(const char *s)
{
	int i;

	if (!strcmp(s, "all")) {
		for (i = 0; i < VS_FAULT_NR_STRATEGIES; i++)
			opt.strategy[i] = i;
		opt.nr_strategies = VS_FAULT_NR_STRATEGIES;
		return;
	}
	opt.strategy[0] = parse_name("--strategy", s, vs_fault_strategy_name,
				     VS_FAULT_NR_STRATEGIES);
	opt.nr_strategies = 1;
}

static void parse_lock(const char *s)
{
	static const char *const kinds[] = { "rwsem", "pthread", "percpu",
					     "brlock", "prwlock" };
	unsigned int i;

	opt.nr_locks = 0;
	for (i = 0; i < VS_ARRAY_SIZE(kinds); i++)
		if (!strcmp(s, "all") || !strcmp(s, kinds[i]))
			opt.lock[opt.nr_locks++] = kinds[i];
	if (!opt.nr_locks)
		usage_error("--lock: unknown value '%s'", s);
}

static void parse_sweep(char *s)
{
	char *item, *save = NULL;

	opt.nr_threads = 0;
	for (item = strtok_r(s, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		if (opt.nr_threads == MAX_SWEEP)
			usage_error("--sweep: more than %d thread counts",
				    MAX_SWEEP);
		opt.threads[opt.nr_threads++] =
			parse_count("--sweep", item, MF_MAX_THREADS);
	}
	if (!opt.nr_threads)
		usage_error("--sweep: empty list");
	opt.sweep = 1;
}

static const struct option long_opts[] = {
	{ "backing", required_argument, NULL, 'b' },
	{ "uffd-mode", required_argument, NULL, 'u' },
	{ "strategy", required_argument, NULL, 's' },
	{ "lock", required_argument, NULL, 'l' },
	{ "threads", required_argument, NULL, 't' },
	{ "duration", required_argument, NULL, 'd' },
	{ "quick", no_argument, NULL, 'q' },
	{ "repeat", required_argument, NULL, 'r' },
	{ "writer", required_argument, NULL, 'w' },
	{ "writer-rate", required_argument, NULL, 'W' },
	{ "seed", required_argument, NULL, 'S' },
	{ "json", no_argument, NULL, 'j' },
	{ "lockstat", no_argument, NULL, 'L' },
	{ "trace", required_argument, NULL, 'T' },
	{ "trace-sample", required_argument, NULL, 'P' },
	{ "sweep", required_argument, NULL, 'X' },
	{ "plot", required_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static void parse_one(int c, char *arg)
{
	unsigned int v;

	switch (c) {
	case 'b': opt.backing = parse_name("--backing", arg, mf_backing_name,
					   MF_NR_BACKINGS); break;
	case 'u': opt.uffd_mode = parse_name("--uffd-mode", arg,
					     vs_uffd_mode_name,
					     VS_UFFD_NR_MODES); break;
	case 's': parse_strategy(arg); break;
	case 'l': parse_lock(arg); break;
	case 't': opt.threads[0] = parse_count("--threads", arg,
					       MF_MAX_THREADS);
		  opt.nr_threads = 1; break;
	case 'd': if (bench_parse_seconds(arg, MAX_DURATION_MS,
					  &opt.duration_ms))
			  usage_error("--duration: '%s' is not a duration in "
				      "seconds (0.001..86400)", arg);
		  opt.duration_set = 1; break;
	case 'q': opt.quick = 1; break;
	case 'r': opt.repeats = parse_count("--repeat", arg, MF_MAX_REPEAT);
		  break;
	case 'w': opt.writer = parse_name("--writer", arg, mf_writer_name,
					  MF_NR_WRITERS); break;
	case 'W': if (bench_parse_uint(arg, 0, 10000000, &v))
			  usage_error("--writer-rate: '%s' is not a rate "
				      "(0..10000000 per second)", arg);
		  opt.writer_rate = v; break;
	case 'S': if (bench_parse_uint(arg, 0, 4294967295UL, &v))
			  usage_error("--seed: '%s' is not a number", arg);
		  opt.seed = v; break;
	case 'j': opt.json = 1; break;
	case 'L': opt.lockstat = 1; break;
	case 'T': opt.trace = arg; break;
	case 'P': opt.trace_sample = parse_count("--trace-sample", arg,
						 1000000); break;
	case 'X': parse_sweep(arg); break;
	case 'p': opt.plot = arg; break;
	}
}

static void parse_options(int argc, char **argv)
{
	int c;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	opterr = 0;	/* our own one-line messages */
	parse_strategy("all");
	parse_lock("rwsem");
	opt.threads[0] = ncpu > 0 && ncpu <= MF_MAX_THREADS ?
				 (unsigned int)ncpu : 1;
	opt.nr_threads = 1;
	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			exit(0);
		}
		if (c == '?')
			usage_error("unknown option or missing value: '%s'",
				    argv[optind - 1]);
		parse_one(c, optarg);
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (opt.plot && !opt.sweep)
		usage_error("--plot: needs --sweep");
	if (opt.quick && !opt.duration_set)
		opt.duration_ms = 3000;
	if (!opt.repeats)
		opt.repeats = opt.quick ? 3 : 1;
	if (opt.backing == MF_NATIVE) {
		/* No model: one configuration per thread count. */
		opt.nr_strategies = 1;
		opt.nr_locks = 1;
	}
}

/* ---- running ------------------------------------------------------------- */

/*
 * Ctrl-C ends the current pass, then everything, and what was measured
 * is printed.  A second SIGINT changes nothing (timeout(1) sends one to
 * the process and one to its group); SIGQUIT still kills.
 */
static void on_sigint(int sig)
{
	(void)sig;
	vs_write_once(&stop, 1);
}

static void tick(const struct mf_config *cfg, unsigned int repeat,
		 double elapsed_s, double touched)
{
	fprintf(stderr, "\r\033[K%s %s %s %u thr, run %u/%u: %5.1f s, "
		"%.0f faults",
		mf_backing_name(cfg->backing),
		cfg->strategy >= 0 ? vs_fault_strategy_name(cfg->strategy) :
				     "",
		cfg->lock ? cfg->lock : "", cfg->threads, repeat + 1,
		cfg->repeats, elapsed_s, touched);
}

static void config_of(struct mf_config *c, int s, int l, unsigned int t)
{
	memset(c, 0, sizeof(*c));
	c->backing = opt.backing;
	c->uffd_mode = opt.uffd_mode;
	c->strategy = opt.backing == MF_NATIVE ? -1 : opt.strategy[s];
	c->lock = opt.backing == MF_NATIVE ? NULL : opt.lock[l];
	c->threads = opt.threads[t];
	c->writer = opt.writer;
	c->writer_rate = opt.writer_rate;
	c->duration_ms = opt.duration_ms;
	c->repeats = opt.repeats;
	c->seed = opt.seed;
}

static void report(const struct mf_result *r)
{
	if (opt.json)
		mf_print_json(stdout, r);
	else
		mf_print_stat(stdout, r);
	if (opt.lockstat && !opt.json)
		(void)vs_lockstat_print(stdout);
	fflush(stdout);
}

/* Run one configuration.  Return: 0, or the exit status to leave with. */
static int run_one(int s, int l, unsigned int t)
{
	struct mf_result *r = &results[nr_results];
	int err;

	config_of(&r->cfg, s, l, t);
	vs_lockstat_reset();
	err = mf_run(r, &stop, progress ? tick : NULL);
	if (progress)
		fputs("\r\033[K", stderr);
	if (err) {
		fprintf(stderr, "multi-fault: %s backing: %s\n",
			mf_backing_name(opt.backing), vs_strerror(err));
		return EXIT_SETUP;
	}
	if (r->repeats_done) {
		nr_results++;
		report(r);
	}
	return 0;
}

static int run_all(void)
{
	unsigned int t;
	int s, l, ret = 0;

	for (t = 0; t < opt.nr_threads && !ret; t++)
		for (l = 0; l < opt.nr_locks && !ret; l++)
			for (s = 0; s < opt.nr_strategies && !ret; s++) {
				if (vs_read_once(&stop))
					return EXIT_INTR;
				ret = run_one(s, l, t);
			}
	return ret;
}

static void trace_begin(void)
{
	int err = mf_trace_open(opt.trace, opt.trace_sample, 1000000);

	if (err) {
		fprintf(stderr, "multi-fault: --trace: %s: %s\n", opt.trace,
			strerror(-err));
		exit(EXIT_SETUP);
	}
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

static void finish(void)
{
	int err;

	if (!opt.json && opt.nr_strategies > 1 && nr_results > 1)
		mf_print_prepost(stdout, results, nr_results);
	if (opt.plot && nr_results) {
		err = mf_plot_svg(opt.plot, results, nr_results);
		if (err)
			fprintf(stderr, "multi-fault: --plot: %s: %s\n",
				opt.plot, strerror(-err));
		else if (!opt.json)
			printf("plot: %s\n", opt.plot);
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	int ret;

	parse_options(argc, argv);
	if ((size_t)opt.nr_threads * opt.nr_locks * opt.nr_strategies >
	    MAX_RESULTS)
		usage_error("too many configurations (at most %d)",
			    MAX_RESULTS);
	progress = isatty(STDERR_FILENO);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	(void)vs_thread_attach();
	if (opt.lockstat)
		vs_lockstat_enable(1);
	if (opt.trace)
		trace_begin();
	ret = run_all();
	if (opt.trace)
		trace_end();
	finish();
	if (!ret && vs_read_once(&stop))
		ret = EXIT_INTR;
	if (ret == EXIT_INTR)
		fprintf(stderr, "multi-fault: interrupted\n");
	return ret;
}
