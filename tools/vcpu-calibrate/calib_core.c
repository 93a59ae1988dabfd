/* SPDX-License-Identifier: MIT */
/*
 * tools/vcpu-calibrate/calib_core.c - vcpu-calibrate's clock, its one way of
 * taking a measurement, and its pinned threads.  calib.h documents each
 * function that is not static here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* sched_setaffinity, CPU_SET */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench_report.h"
#include "calib.h"

#define CLOCK_ROUNDS 9		/* intervals the tick rate is the median of */
#define PAIR_TRIES 7		/* reads of a (ns, tick) pair, the tightest */
#define BATCH_SHARE 32		/* a batch is 1/32 of --duration */
#define MIN_BATCHES 7
#define MAX_BATCHES 255
#define MAX_BATCH_OPS (1ull << 34)

struct calib_clock calib_clock;

/* "vcpu-calibrate: " and the message, a line on stderr. */
static void say(const char *fmt, va_list ap)
{
	fputs("vcpu-calibrate: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

_Noreturn void calib_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	exit(1);
}

void calib_progress(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

#if defined(__x86_64__)
static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A tick and the CLOCK_MONOTONIC time at it: the tightest of a few
 * reads of ns, tick, ns, with the middle of the two ns. */
static void read_pair(double *ns, uint64_t *tick)
{
	double a, b, best = 1e30;
	uint64_t t;
	int i;

	for (i = 0; i < PAIR_TRIES; i++) {
		a = now_ns();
		t = calib_ticks();
		b = now_ns();
		if (b - a < best) {
			best = b - a;
			*ns = (a + b) / 2;
			*tick = t;
		}
	}
}

/* TSC ticks per ns over CLOCK_ROUNDS intervals of @duration_ms in all. */
static double tsc_ghz(unsigned int duration_ms)
{
	double rate[CLOCK_ROUNDS], ns0, ns1, round_ns;
	uint64_t t0, t1;
	int r;

	round_ns = duration_ms * 1e6 / CLOCK_ROUNDS;
	for (r = 0; r < CLOCK_ROUNDS; r++) {
		read_pair(&ns0, &t0);
		while (now_ns() - ns0 < round_ns)
			calib_pause();
		read_pair(&ns1, &t1);
		rate[r] = (double)(t1 - t0) / (ns1 - ns0);
	}
	return bench_median(rate, CLOCK_ROUNDS);
}

void calib_clock_init(unsigned int duration_ms)
{
	struct calib_clock *c = &calib_clock;

	c->tsc = true;
	c->ghz = tsc_ghz(duration_ms);
	c->cycles_per_tick = 1;
	c->ticks_per_ns = c->ghz;
	c->duration_ticks = (uint64_t)(duration_ms * 1e6 * c->ticks_per_ns);
	snprintf(c->how, sizeof(c->how), "rdtsc ticks per ns of "
		 "CLOCK_MONOTONIC, median of %d intervals; a cycle is a TSC "
		 "tick (the nominal rate: the cores may run faster or "
		 "slower)", CLOCK_ROUNDS);
}
#else
/* cpufreq's highest rate of cpu0 in GHz, or 0. */
static double nominal_ghz(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/"
			"cpuinfo_max_freq", "r");
	unsigned long khz = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%lu", &khz) != 1)
		khz = 0;
	fclose(f);
	return khz / 1e6;
}

void calib_clock_init(unsigned int duration_ms)
{
	struct calib_clock *c = &calib_clock;
	double ghz = nominal_ghz();

	c->tsc = false;
	c->ghz = ghz > 0 ? ghz : 1;
	c->cycles_per_tick = c->ghz;
	c->ticks_per_ns = 1;
	c->duration_ticks = (uint64_t)duration_ms * 1000000u;
	snprintf(c->how, sizeof(c->how), "no cycle counter read here: times "
		 "are CLOCK_MONOTONIC ns, cycles = ns * %s", ghz > 0
		 ? "cpufreq's cpuinfo_max_freq of cpu0"
		 : "1 (no cpufreq: the rate is unknown)");
}
#endif

double calib_measure(calib_batch_fn fn, void *arg)
{
	uint64_t target = calib_clock.duration_ticks / BATCH_SHARE;
	uint64_t n = 1, start;
	double per[MAX_BATCHES];
	unsigned int nr = 0;

	/* The warm-up: the batch size that takes 1/32 of the run. */
	while (fn(arg, n) < target && n < MAX_BATCH_OPS)
		n *= 2;
	start = calib_ticks();
	while (nr < MAX_BATCHES &&
	       (nr < MIN_BATCHES ||
		calib_ticks() - start < calib_clock.duration_ticks))
		per[nr++] = (double)fn(arg, n) / (double)n;
	return bench_median(per, nr) * calib_clock.cycles_per_tick;
}

/* ---- pinned threads ---------------------------------------------------- */

struct pinned {
	int cpu;
	void *(*fn)(void *);
	void *arg;
};

static void *pinned_main(void *p)
{
	struct pinned job = *(struct pinned *)p;
	cpu_set_t set;

	free(p);
	CPU_ZERO(&set);
	CPU_SET(job.cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		calib_die("sched_setaffinity(cpu %d): %s", job.cpu,
			  strerror(errno));
	return job.fn(job.arg);
}

void calib_start_on_cpu(int cpu, void *(*fn)(void *), void *arg,
			pthread_t *tid)
{
	struct pinned *job = malloc(sizeof(*job));
	int err;

	if (!job)
		calib_die("out of memory");
	*job = (struct pinned){ cpu, fn, arg };
	err = pthread_create(tid, NULL, pinned_main, job);
	if (err)
		calib_die("pthread_create: %s", strerror(err));
}

void calib_on_cpu(int cpu, void *(*fn)(void *), void *arg)
{
	pthread_t tid;

	calib_start_on_cpu(cpu, fn, arg, &tid);
	pthread_join(tid, NULL);
}

struct measure_job {
	calib_batch_fn fn;
	void *arg;
	double cycles;
};

static void *measure_main(void *p)
{
	struct measure_job *job = p;

	job->cycles = calib_measure(job->fn, job->arg);
	return NULL;
}

double calib_measure_on(int cpu, calib_batch_fn fn, void *arg)
{
	struct measure_job job = { fn, arg, 0 };

	calib_on_cpu(cpu, measure_main, &job);
	return job.cycles;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

void *calib_map(size_t bytes, bool huge, bool populate)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		calib_die("mmap of %zu bytes: %s", bytes, strerror(errno));
	/* Advice only: a kernel without THP maps small pages either way. */
	(void)madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	if (populate && madvise(p, bytes, MADV_POPULATE_WRITE))
		memset(p, 1, bytes);
	return p;
}
