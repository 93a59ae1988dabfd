/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault.c - Kamezawa Hiroyuki's multi-fault-all.c (linux-mm,
 * 2010-01-06), the benchmark of Zijlstra's 2014 PRE/POST table, on the
 * model, on real memory through userfaultfd, and natively on the host
 * kernel.  See multi-fault(1).
 *
 * This file holds the options, the list of configurations, the rounds,
 * Ctrl-C and the progress line; mf_run.c runs one repeat of a
 * configuration and mf_report.c prints it (tools/mf.h).
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
#define DEFAULT_SLOW_US 100	/* --trace-slow-us */

/* The options, by the letter getopt_long() gives each. */
enum mf_opt {
	OPT_BACKING = 'b', OPT_UFFD_MODE = 'u', OPT_STRATEGY = 's',
	OPT_LOCK = 'l', OPT_THREADS = 't', OPT_DURATION = 'd',
	OPT_QUICK = 'q', OPT_REPEAT = 'r', OPT_WRITER = 'w',
	OPT_WRITER_RATE = 'W', OPT_SEED = 'S', OPT_JSON = 'j',
	OPT_LOCKSTAT = 'L', OPT_TRACE = 'T', OPT_TRACE_SAMPLE = 'P',
	OPT_TRACE_SLOW = 'O', OPT_SWEEP = 'X', OPT_PLOT = 'p',
	OPT_HELP = 'h',
};

static struct {
	int backing, uffd_mode, writer;
	int strategy[VS_FAULT_NR_STRATEGIES], nr_strategies;
	const char *lock[MAX_LOCKS];
	int nr_locks;
	unsigned int threads[MAX_SWEEP], nr_threads;
	unsigned int duration_ms, repeats, writer_rate, trace_sample;
	unsigned int trace_slow_us;
	unsigned long seed;
	int quick, json, lockstat;
	const char *trace, *plot;
	bool given[128];	/* by enum mf_opt */
} opt = { .duration_ms = 60000, .repeats = 0, .trace_sample = 100,
	  .trace_slow_us = DEFAULT_SLOW_US, .seed = 1 };

static struct mf_result results[MAX_RESULTS];
static int nr_results;
static vs_atomic32_t stop;
static int progress;		/* stderr is a terminal */

static const char usage_text[] =
"usage: multi-fault [options]\n"
"\n"
"Kamezawa's multi-fault-all.c, the benchmark of Zijlstra's 2014 PRE/POST\n"
"table: each thread writes every page of its 2 MiB slice of one mapping,\n"
"thread 0 zaps them all with MADV_DONTNEED, again, for the duration;\n"
"page faults counted per configuration.  Repeats run in rounds (every\n"
"configuration once, then again), and a ratio is taken within a round.\n"
"\n"
"  --backing B        sim (the model), uffd (real memory, userfaultfd),\n"
"                     native (the host kernel, no model)    (default sim)\n"
"  --uffd-mode M      sigbus, threads or uv (uffd backing) (default sigbus)\n"
"  --strategy S       locked, spf, pervma or all (not native) (default all)\n"
"  --lock L           rwsem, pthread, percpu, brlock, prwlock or all\n"
"                     (not native)                         (default rwsem)\n"
"  --threads N        faulting threads, 1 to 256            (default nproc)\n"
"  --duration SEC     seconds per run, e.g. 60 or 0.5          (default 60)\n"
"  --quick            3-second runs, 3 repeats unless --repeat is given\n"
"  --repeat N         rounds: runs per configuration, 1 to 100 (default 1)\n"
"  --writer W         none, mmap, mprotect or fork: a thread that changes\n"
"                     the address space meanwhile            (default none)\n"
"  --writer-rate N    writer operations per second, 0 flat out  (default 0)\n"
"  --seed N           seeds the mmap writer's placement          (default 1)\n"
"  --json             one JSON object per configuration (with --lockstat,\n"
"                     the lock statistics inside it)\n"
"  --lockstat         the mmap_lock statistics of each configuration\n"
"  --trace FILE       a Chrome/Perfetto trace of the runs (sim, uffd)\n"
"  --trace-sample N   record one fault in N (sim)             (default 100)\n"
"  --trace-slow-us N  record every fault with an mmap_lock wait or hold of\n"
"                     N microseconds or more, sampled or not  (default 100)\n"
"  --sweep LIST       thread counts to run, e.g. 1,2,4\n"
"  --plot FILE.svg    faults/s against threads (with --sweep)\n"
"  --help             this text\n"
"\n"
"A flag that does not apply to the others given is refused (exit 2).\n"
"The manual: man multi-fault (docs/man/multi-fault.1 in the source).\n";

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

/* "1,2,4": each item a count, none empty, none twice. */
static void parse_sweep(const char *s)
{
	const char *p = s, *end;
	char item[16];
	unsigned int t, i;
	size_t len;

	opt.nr_threads = 0;
	for (;;) {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		if (!len || len >= sizeof(item))
			usage_error("--sweep: '%s' is not a list of thread "
				    "counts such as 1,2,4", s);
		memcpy(item, p, len);
		item[len] = '\0';
		t = parse_count("--sweep", item, MF_MAX_THREADS);
		for (i = 0; i < opt.nr_threads; i++)
			if (opt.threads[i] == t)
				usage_error("--sweep: %u is given twice", t);
		if (opt.nr_threads == MAX_SWEEP)
			usage_error("--sweep: more than %d thread counts",
				    MAX_SWEEP);
		opt.threads[opt.nr_threads++] = t;
		if (!end)
			break;
		p = end + 1;
	}
}

static const struct option long_opts[] = {
	{ "backing", required_argument, NULL, OPT_BACKING },
	{ "uffd-mode", required_argument, NULL, OPT_UFFD_MODE },
	{ "strategy", required_argument, NULL, OPT_STRATEGY },
	{ "lock", required_argument, NULL, OPT_LOCK },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "writer", required_argument, NULL, OPT_WRITER },
	{ "writer-rate", required_argument, NULL, OPT_WRITER_RATE },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "lockstat", no_argument, NULL, OPT_LOCKSTAT },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "trace-sample", required_argument, NULL, OPT_TRACE_SAMPLE },
	{ "trace-slow-us", required_argument, NULL, OPT_TRACE_SLOW },
	{ "sweep", required_argument, NULL, OPT_SWEEP },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 }
};

static void parse_one(int c, char *arg)
{
	unsigned int v;

	switch (c) {
	case OPT_BACKING: opt.backing = parse_name("--backing", arg,
						   mf_backing_name,
						   MF_NR_BACKINGS); break;
	case OPT_UFFD_MODE: opt.uffd_mode = parse_name("--uffd-mode", arg,
						       vs_uffd_mode_name,
						       VS_UFFD_NR_MODES); break;
	case OPT_STRATEGY: parse_strategy(arg); break;
	case OPT_LOCK: parse_lock(arg); break;
	case OPT_THREADS: opt.threads[0] = parse_count("--threads", arg,
						       MF_MAX_THREADS);
		opt.nr_threads = 1; break;
	case OPT_DURATION: if (bench_parse_seconds(arg, MAX_DURATION_MS,
						   &opt.duration_ms))
			usage_error("--duration: '%s' is not a duration in "
				    "seconds (0.001..86400)", arg);
		break;
	case OPT_QUICK: opt.quick = 1; break;
	case OPT_REPEAT: opt.repeats = parse_count("--repeat", arg,
						   MF_MAX_REPEAT); break;
	case OPT_WRITER: opt.writer = parse_name("--writer", arg,
						 mf_writer_name,
						 MF_NR_WRITERS); break;
	case OPT_WRITER_RATE: if (bench_parse_uint(arg, 0, 10000000, &v))
			usage_error("--writer-rate: '%s' is not a rate "
				    "(0..10000000 per second)", arg);
		opt.writer_rate = v; break;
	case OPT_SEED: if (bench_parse_uint(arg, 0, 4294967295UL, &v))
			usage_error("--seed: '%s' is not a number", arg);
		opt.seed = v; break;
	case OPT_JSON: opt.json = 1; break;
	case OPT_LOCKSTAT: opt.lockstat = 1; break;
	case OPT_TRACE: opt.trace = arg; break;
	case OPT_TRACE_SAMPLE: opt.trace_sample =
			parse_count("--trace-sample", arg, 1000000); break;
	case OPT_TRACE_SLOW: if (bench_parse_uint(arg, 0, 10000000, &v))
			usage_error("--trace-slow-us: '%s' is not a number of "
				    "microseconds (0..10000000)", arg);
		opt.trace_slow_us = v; break;
	case OPT_SWEEP: parse_sweep(arg); break;
	case OPT_PLOT: opt.plot = arg; break;
	}
}

/* "--name" of option @c, for the messages. */
static const char *opt_name(int c)
{
	const struct option *o;

	for (o = long_opts; o->name; o++)
		if (o->val == c) {
			static char buf[32];

			snprintf(buf, sizeof(buf), "--%s", o->name);
			return buf;
		}
	return "?";
}

/* @a given without @what (@ok false) is refused. */
static void need(int a, bool ok, const char *what)
{
	if (opt.given[a] && !ok)
		usage_error("%s needs %s", opt_name(a), what);
}

/* @a does not apply with @why. */
static void refuse(int a, bool with, const char *why)
{
	if (opt.given[a] && with)
		usage_error("%s does not apply %s", opt_name(a), why);
}

/* Every pair of options that cannot mean anything together. */
static void check_pairs(void)
{
	static const int model_only[] = { OPT_STRATEGY, OPT_LOCK,
					  OPT_LOCKSTAT, OPT_TRACE };
	bool native = opt.backing == MF_NATIVE;
	unsigned int i;

	for (i = 0; i < VS_ARRAY_SIZE(model_only); i++)
		refuse(model_only[i], native,
		       "with --backing native: the host kernel has no model");
	refuse(OPT_UFFD_MODE, opt.backing != MF_UFFD,
	       "without --backing uffd");
	refuse(OPT_TRACE_SAMPLE, opt.backing == MF_UFFD,
	       "with --backing uffd: its faults are handled on threads of "
	       "its own, every one traced");
	refuse(OPT_TRACE_SLOW, opt.backing == MF_UFFD,
	       "with --backing uffd: its faults are handled on threads of "
	       "its own, every one traced");
	need(OPT_TRACE_SAMPLE, opt.trace, "--trace");
	need(OPT_TRACE_SLOW, opt.trace, "--trace");
	need(OPT_PLOT, opt.given[OPT_SWEEP], "--sweep");
	refuse(OPT_THREADS, opt.given[OPT_SWEEP],
	       "with --sweep: give the thread counts once");
	need(OPT_WRITER_RATE, opt.writer != MF_WRITER_NONE,
	     "--writer mmap, mprotect or fork");
	need(OPT_SEED, opt.writer == MF_WRITER_MMAP,
	     "--writer mmap (it places the mmap writer's VMAs)");
	refuse(OPT_QUICK, opt.given[OPT_DURATION] && opt.given[OPT_REPEAT],
	       "with both --duration and --repeat: it sets only those");
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
		if (c == '?')
			usage_error("unknown option or missing value: '%s'",
				    argv[optind - 1]);
		if (c == OPT_HELP) {
			fputs(usage_text, stdout);
			exit(0);
		}
		opt.given[c] = true;
		parse_one(c, optarg);
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	check_pairs();
	if (opt.quick && !opt.given[OPT_DURATION])
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

/* Every configuration, by threads, then lock, then strategy. */
static void configure(void)
{
	unsigned int t;
	int s, l;

	for (t = 0; t < opt.nr_threads; t++)
		for (l = 0; l < opt.nr_locks; l++)
			for (s = 0; s < opt.nr_strategies; s++)
				config_of(&results[nr_results++].cfg, s, l, t);
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
	unsigned int k;
	int a, err = 0;

	for (k = 0; k < opt.repeats && !err; k++)
		for (a = 0; a < nr_results && !err; a++)
			err = run_arm(NULL, (unsigned int)a, k);
	if (err < 0)
		return EXIT_SETUP;
	return vs_read_once(&stop) ? EXIT_INTR : 0;
}

static void trace_begin(void)
{
	int err = mf_trace_open(opt.trace, opt.trace_sample,
				(uint64_t)opt.trace_slow_us * 1000, 1000000);

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

/* The blocks (or JSON lines), the summary, the plot. */
static void report(void)
{
	int i, p, err;

	for (i = 0; i < nr_results; i++) {
		if (!opt.json) {
			mf_print_stat(stdout, &results[i]);
			continue;
		}
		if (!results[i].repeats_done)
			continue;
		p = mf_pre_of(results, nr_results, i);
		mf_print_json(stdout, &results[i], p >= 0 ? &results[p] : NULL);
	}
	if (!opt.json && nr_results > 1)
		mf_print_summary(stdout, results, nr_results);
	fflush(stdout);
	if (opt.plot) {
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
	configure();
	ret = run_all();
	if (opt.trace)
		trace_end();
	report();
	if (ret == EXIT_INTR)
		fprintf(stderr, "multi-fault: interrupted\n");
	return ret;
}
