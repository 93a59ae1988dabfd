/* SPDX-License-Identifier: MIT */
/*
 * tools/vcpubench/vcpubench.c - the speed of the virtual-CPU engine
 * (vmsim/vcpu.h), and a deterministic workload whose event hash the tests
 * compare.
 *
 *   events   every vCPU adds to a counter of its own and reads a shared
 *            one, --work times: host ns per event, events per second
 *   fault    Kamezawa's multi-fault, the library's workload
 *            (vmsim/workload.h): every vCPU writes each page of its own
 *            2 MiB slice of one mapping, then vCPU 0 zaps them all
 *            (MADV_DONTNEED), three barriers a pass, until --duration
 *            virtual seconds: host time per simulated fault and per
 *            virtual second
 *
 *   schedules  exploration: --vcpus contexts (3) each take a spinlock
 *            and increment a counter 16 times, one schedule after another
 *            under PCT with the machine reset between them (--work
 *            schedules, 20000), under the --memory model (sc): host
 *            schedules per second
 *
 * Each prints one line of host figures and one "virtual:" line that
 * depends only on the configuration and --seed (the event hash, the
 * virtual time, the counts): the determinism test runs it twice in two
 * processes and compares those lines.
 *
 * SIGINT or SIGTERM stops the benchmark running at its next safe point
 * (events: the engine's next event; fault: the end of the pass;
 * schedules: the end of the schedule), prints what it measured until
 * then, runs no other, and exits 128 + the signal.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <vmsim/vmsim.h>
#include <vmsim/spinlock.h>
#include <vmsim/vcpu.h>
#include <vmsim/vcpu_cost.h>
#include "bench_kernel.h"
#include "bench.h"

static struct {
	bool chosen[3];
	unsigned int vcpus;
	const char *machine;
	uint64_t seed;
	unsigned long work;
	const char *strategy;
	unsigned int memory;		/* enum vs_vcpu_memory */
	const char *kernel;		/* --kernel; NULL: the default */
} opt = { .seed = 1, .work = 100000, .strategy = "locked" };

static const char *const memory_names[] = { "sc", "tso", "relaxed" };

static struct vs_vcpu_profile profile;
static struct vs_machine *machine;

/* Raised by SIGINT or SIGTERM: read past the seam, as the workload
 * reads its stop flag (vmsim/workload.h). */
static vs_atomic32_t stop;

/* A handler never enters the engine: it only stores (vs_vcpu_stop()). */
static void on_stop_signal(int sig)
{
	stop = 1;
	vs_vcpu_stop(sig);
}

/* SIGINT and SIGTERM stop the run (SA_RESTART: no call sees EINTR). */
static void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
}

/* The name of the signal that stopped the run. */
static const char *stop_name(void)
{
	return vs_vcpu_stop_signal() == SIGTERM ? "SIGTERM" : "SIGINT";
}

/* ---- events ---------------------------------------------------------- */

static vs_atomic_long_t shared_word;
static struct {
	VS_CACHELINE_ALIGNED vs_atomic_long_t n;
} counters[VS_VCPU_MAX];

static void events_worker(void *arg)
{
	unsigned long i, me = (unsigned long)(uintptr_t)arg;

	for (i = 0; i < opt.work; i++) {
		vs_fetch_add_relaxed(&counters[me].n, 1);
		if ((i & 15) == 0)
			(void)vs_read_once(&shared_word);
	}
}

static void events_main(void *arg)
{
	unsigned int i;

	(void)arg;
	for (i = 1; i < opt.vcpus; i++)
		vs_machine_spawn(machine, i, events_worker, (void *)(uintptr_t)i);
	events_worker((void *)0);
}

/* ---- fault ------------------------------------------------------------ */

static struct vs_workload_result fault_res;

/* vCPU 0: Kamezawa's loop (vmsim/workload.h), one task per vCPU. */
static void fault_main(void *arg)
{
	struct vs_workload_config wc = {
		.ops = vs_workload_find("multi-fault"),
		.nr_tasks = opt.vcpus,
		.duration_ns = (uint64_t)bench_std.duration_ms * 1000000,
		.strategy = vs_fault_strategy_parse(opt.strategy),
		.mm.kernel = opt.kernel,
		.stop = &stop,
	};
	int err;

	(void)arg;
	if (wc.strategy < 0) {
		fprintf(stderr, "vcpubench: --strategy: no strategy '%s'\n",
			opt.strategy);
		exit(2);
	}
	err = vs_workload_run(&wc, &fault_res);
	if (err) {
		fprintf(stderr, "vcpubench: fault: %s\n", vs_strerror(err));
		exit(1);
	}
}

/* ---- schedules --------------------------------------------------------- */

#define SCHED_INCS 16
#define SCHED_DEFAULT 20000

static vs_spinlock_t sched_lock;
static vs_atomic_long_t sched_count;

static void sched_worker(void *arg)
{
	long x;
	int i;

	(void)arg;
	for (i = 0; i < SCHED_INCS; i++) {
		vs_spin_lock(&sched_lock);
		x = vs_read_once(&sched_count);
		vs_write_once(&sched_count, x + 1);
		vs_spin_unlock(&sched_lock);
	}
}

static void sched_main(void *arg)
{
	int id[VS_VCPU_MAX];
	unsigned int i;

	(void)arg;
	for (i = 1; i < opt.vcpus; i++)
		id[i] = vs_machine_spawn(machine, i, sched_worker, NULL);
	sched_worker(NULL);
	for (i = 1; i < opt.vcpus; i++)
		(void)vs_machine_join(machine, (unsigned int)id[i]);
}

/* One schedule on the reset machine; its events, 0 when it failed. */
static uint64_t one_schedule(unsigned long s)
{
	struct vs_machine_stats st;
	int err;

	vs_machine_reset(machine, opt.seed + s);
	vs_spin_lock_init(&sched_lock);
	vs_atomic_init(&sched_count, 0);
	err = vs_machine_run(machine, sched_main, NULL);
	if (err || vs_read_once(&sched_count) != (long)opt.vcpus * SCHED_INCS) {
		fprintf(stderr, "vcpubench: schedules: schedule %lu: %s, "
			"count %ld\n%s", s, vs_strerror(err),
			vs_read_once(&sched_count), vs_machine_report(machine));
		return 0;
	}
	vs_machine_stats(machine, -1, &st);
	return st.events;
}

/* The figures of @n schedules of @events events in all. */
static void print_schedules(unsigned long n, uint64_t events, double host_s,
			    uint64_t hash)
{
	printf("schedules on %u vCPUs (pct, %s): %lu schedules of %.0f "
	       "events, %.2f s of host time, %.0f schedules/s, %.1f ns per "
	       "event\n", opt.vcpus, memory_names[opt.memory], n,
	       (double)events / (double)n, host_s, (double)n / host_s,
	       host_s * 1e9 / (double)events);
	printf("virtual: schedules seed %llu: %lu schedules, %llu events, "
	       "hash %016llx\n", (unsigned long long)opt.seed, n,
	       (unsigned long long)events, (unsigned long long)hash);
}

static int run_schedules(void)
{
	struct vs_machine_config cfg = {
		.nr_vcpus = opt.vcpus, .seed = opt.seed,
		.sched = &vs_vcpu_sched_pct, .max_events = 1000000,
		.memory = opt.memory,
	};
	unsigned long s, n = bench_given(BENCH_OPT_WORK) ? opt.work :
			     SCHED_DEFAULT;
	uint64_t t0, events = 0, ev, hash = 0;
	double host_s;
	int err = vs_machine_create(&machine, &cfg);

	if (err) {
		fprintf(stderr, "vcpubench: schedules: %s\n", vs_strerror(err));
		return err;
	}
	t0 = uv_hrtime();
	for (s = 0; s < n && !vs_vcpu_stop_signal(); s++) {
		ev = one_schedule(s);
		if (!ev) {
			vs_machine_destroy(machine);
			return -ECANCELED;
		}
		events += ev;
		hash = (hash ^ vs_machine_hash(machine)) * 0x100000001b3ull;
	}
	host_s = (double)(uv_hrtime() - t0) / 1e9;
	if (s < n)
		printf("schedules: stopped by %s after %lu of %lu schedules\n",
		       stop_name(), s, n);
	if (s)
		print_schedules(s, events, host_s, hash);
	vs_machine_destroy(machine);
	return 0;
}

/* ---- running --------------------------------------------------------- */

/* The most contended lines, with the names vm/ gave them. */
static void print_hot(void)
{
	struct vs_coherence_hot hot[5];
	int i, n = vs_coherence_top(vs_machine_coherence(machine), hot, 5);

	for (i = 0; i < n; i++)
		printf("virtual: hot line %d: %s (+%llu): %llu transfers, "
		       "%llu RMWs, %llu cycles waiting\n", i + 1,
		       hot[i].name ? hot[i].name : "(unnamed)",
		       (unsigned long long)hot[i].offset,
		       (unsigned long long)hot[i].transfers,
		       (unsigned long long)hot[i].rmws,
		       (unsigned long long)hot[i].wait_cycles);
}

static int run(const char *bench, void (*fn)(void *))
{
	/* events stops at the engine's next event; fault at the end of
	 * its pass (its stop flag), with figures. */
	struct vs_machine_config cfg = {
		.profile = &profile, .nr_vcpus = opt.vcpus, .seed = opt.seed,
		.flags = fn == events_main ? VS_MACHINE_STOPPABLE : 0,
	};
	struct vs_machine_stats st;
	uint64_t t0;
	double host_s, vsec;
	int err;

	err = vs_machine_create(&machine, &cfg);
	if (err) {
		fprintf(stderr, "vcpubench: %u vCPUs of %s: %s\n", opt.vcpus,
			profile.name, vs_strerror(err));
		return err;
	}
	t0 = uv_hrtime();
	err = vs_machine_run(machine, fn, NULL);
	host_s = (double)(uv_hrtime() - t0) / 1e9;
	if (err && err != -EINTR) {
		fprintf(stderr, "vcpubench: %s: %s\n%s", bench,
			vs_strerror(err), vs_machine_report(machine));
		vs_machine_destroy(machine);
		return err;
	}
	if (vs_vcpu_stop_signal())	/* what ran until then */
		printf("%s: stopped by %s: %s", bench, stop_name(),
		       err ? vs_machine_report(machine) :
		       "at the end of a pass\n");
	vs_machine_stats(machine, -1, &st);
	vsec = (double)vs_machine_clock(machine, -1) / (profile.ghz * 1e9);
	printf("%s on %u vCPUs of %s: %.2f s of host time, %.1f ns per "
	       "event, %.2f M events/s", bench, opt.vcpus, profile.name,
	       host_s, host_s * 1e9 / (double)st.events,
	       (double)st.events / host_s / 1e6);
	if (fn == fault_main)
		printf(", %.1f us per fault, %.1f s per virtual second",
		       host_s * 1e6 / (double)fault_res.faults,
		       host_s / vsec);
	printf("\nvirtual: %s seed %llu: %.6f s, %llu events, %llu line "
	       "transfers, %llu switches, %llu sleeps, %llu faults, hash "
	       "%016llx\n", bench, (unsigned long long)opt.seed, vsec,
	       (unsigned long long)st.events,
	       (unsigned long long)st.transfers,
	       (unsigned long long)st.switches,
	       (unsigned long long)st.sleeps,
	       (unsigned long long)fault_res.faults,
	       (unsigned long long)vs_machine_hash(machine));
	print_hot();
	vs_machine_destroy(machine);
	return 0;
}

/* ---- options ---------------------------------------------------------- */

static const char *const bench_names[] = { "events", "fault", "schedules" };

static const char *bench_name(int i)
{
	return i < 3 ? bench_names[i] : NULL;
}

static void bench_item(const char *item)
{
	int i = bench_arg_name(item, bench_name, "a benchmark", true), k;

	for (k = 0; k < 3; k++)
		opt.chosen[k] |= i < 0 || i == k;
}

static void set_option(int key, char *arg)
{
	switch (key) {
	case BENCH_OPT_BENCH:
		bench_arg_list(arg, bench_item);
		break;
	case BENCH_OPT_VCPUS:
		opt.vcpus = bench_arg_uint(arg, 1, VS_VCPU_MAX);
		break;
	case BENCH_OPT_KERNEL:
		opt.kernel = bench_arg_kernel(arg);
		break;
	case BENCH_OPT_MACHINE:
		opt.machine = arg;
		break;
	case BENCH_OPT_SEED:
		opt.seed = bench_arg_uint(arg, 0, UINT32_MAX);
		break;
	case BENCH_OPT_WORK:
		opt.work = bench_arg_uint(arg, 1, UINT32_MAX);
		break;
	case BENCH_OPT_STRATEGY:
		opt.strategy = arg;
		break;
	case BENCH_OPT_MEMORY:
		for (opt.memory = 0; opt.memory < 3; opt.memory++)
			if (!strcmp(arg, memory_names[opt.memory]))
				return;
		bench_usage_error("--memory: no model '%s' (sc, tso or "
				  "relaxed)", arg);
	}
}

static const char about[] =
"The speed of the virtual-CPU engine: host ns per event, per\n"
"simulated fault and per explored schedule, and a deterministic\n"
"workload (the \"virtual:\" line is the same for the same options in\n"
"any process).\n";

static const struct bench_opt opts[] = {
	{ BENCH_OPT_BENCH, "events, fault, schedules or all (default all)",
	  NULL },
	{ BENCH_OPT_VCPUS, "virtual CPUs (default 4 for events, 60 for\n"
			   "fault, 3 for schedules)", NULL },
	{ BENCH_OPT_MACHINE, "machine profile by name or path (default flat\n"
			     "for events, ivb-ex-4x15x2 for fault)", NULL },
	{ BENCH_OPT_DURATION, "virtual seconds of fault (default 1)", NULL },
	{ BENCH_OPT_WORK, "operations per vCPU in events (default 100000);\n"
			  "schedules in schedules (default 20000)", NULL },
	{ BENCH_OPT_STRATEGY, "fault strategy of fault (default locked)",
	  NULL },
	{ BENCH_OPT_MEMORY, "memory model of schedules: sc, tso or relaxed\n"
			    "(default sc)", NULL },
	{ BENCH_OPT_SEED, "the engine's seed (default 1)", NULL },
	{ BENCH_OPT_KERNEL, BENCH_KERNEL_HELP, NULL },
	{ 0, NULL, NULL },
};

static const struct bench_tool tool = {
	.name = "vcpubench", .about = about, .opts = opts, .set = set_option,
	.duration_ms = 1000,
};

static int load(const char *dflt)
{
	char err[256];
	int ret = vs_vcpu_profile_load(&profile, opt.machine ? opt.machine :
				       dflt, err, sizeof(err));

	if (ret)
		fprintf(stderr, "vcpubench: --machine: %s\n", err);
	return ret;
}

/*
 * --vcpus within each profile a chosen benchmark runs on, checked
 * before any runs: a usage error (exit 2) that names both.
 */
static void check_vcpus(unsigned int vcpus)
{
	static const char *const dflt[2] = { "flat", "ivb-ex-4x15x2" };
	int i;

	for (i = 0; vcpus && i < 2; i++) {
		if (!opt.chosen[i])
			continue;
		if (load(dflt[i]))
			exit(2);
		if (vcpus > profile.nr_cpus)
			bench_usage_error("--vcpus %u: %s has %u CPUs", vcpus,
					  profile.name, profile.nr_cpus);
	}
}

int main(int argc, char **argv)
{
	unsigned int vcpus;
	int err = 0;

	bench_parse_options(&tool, argc, argv);
	if (!bench_given(BENCH_OPT_BENCH))
		bench_item("all");
	vcpus = opt.vcpus;
	check_vcpus(vcpus);
	catch_stop_signals();
	if (opt.chosen[0] && !err) {
		opt.vcpus = vcpus ? vcpus : 4;
		err = load("flat") ? 2 : run("events", events_main) ? 1 : 0;
	}
	if (opt.chosen[1] && !err && !vs_vcpu_stop_signal()) {
		opt.vcpus = vcpus ? vcpus : 60;
		err = load("ivb-ex-4x15x2") ? 2 :
		      run("fault", fault_main) ? 1 : 0;
	}
	if (opt.chosen[2] && !err && !vs_vcpu_stop_signal()) {
		opt.vcpus = vcpus ? vcpus : 3;
		err = run_schedules() ? 1 : 0;
	}
	if (!err && vs_vcpu_stop_signal()) {
		fprintf(stderr, "vcpubench: interrupted\n");
		return 128 + vs_vcpu_stop_signal();
	}
	return err;
}
