/* SPDX-License-Identifier: MIT */
/*
 * multi-fault-ref - Kamezawa Hiroyuki's multi-fault loop (lkml, 6 Jan
 * 2010), as plain C with no vmsim code: the yardstick that keeps
 * `multi-fault --backing native` honest.
 *
 *   multi-fault-ref [-t THREADS] [-d SECONDS] [--json]
 *
 * THREADS (default: the online CPUs) threads, thread i pinned to CPU
 * i % ncpu, each own the i-th 8 MiB slot of one private anonymous
 * mapping.  A pass: barrier; each writes one byte to every page of its
 * slot's first 2 MiB; barrier; thread 0 alone zaps every slot's 2 MiB
 * with MADV_DONTNEED and reads the stop flag; barrier; all leave, or go
 * round again.  Main raises the flag after SECONDS (default 60).
 * docs/man/multi-fault-ref.1 says what it prints.
 *
 * Page faults are the process's minor faults over the run (getrusage),
 * what perf stat's page-faults counts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* sched_setaffinity, CPU_SET */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_opts.h"
#include "bench_report.h"

#define MMAP_LENGTH (8UL << 20)
#define FAULT_LENGTH (2UL << 20)
#define PAGE_SIZE 4096UL
#define MAX_THREADS BENCH_MAX_THREADS

static char *mmap_area;
static unsigned int nr_threads;
static long ncpu;
static pthread_barrier_t barrier;
static atomic_int stop;		/* raised by main after SECONDS */
static atomic_int leave;	/* thread 0's verdict for the pass */

static void *worker(void *arg)
{
	unsigned int i, id = (unsigned int)(uintptr_t)arg;
	char *c, *start = mmap_area + id * MMAP_LENGTH;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(id % (unsigned long)ncpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
	for (;;) {
		pthread_barrier_wait(&barrier);
		for (c = start; c < start + FAULT_LENGTH; c += PAGE_SIZE)
			*(volatile char *)c = 0;
		pthread_barrier_wait(&barrier);
		if (id == 0) {
			for (i = 0; i < nr_threads; i++)
				madvise(mmap_area + i * MMAP_LENGTH,
					FAULT_LENGTH, MADV_DONTNEED);
			atomic_store(&leave, atomic_load(&stop));
		}
		pthread_barrier_wait(&barrier);
		if (atomic_load(&leave))
			return NULL;
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* The run's faults over @elapsed seconds, as text or JSON. */
static void report(double seconds, long faults, double elapsed)
{
	if (!bench_std.json) {
		printf("multi-fault-ref: %u threads, %g s: %ld page-faults "
		       "(sum over the threads), %.0f page-faults/s\n",
		       nr_threads, seconds, faults, (double)faults / elapsed);
		return;
	}
	bench_json_begin();
	bench_json_str("impl", "ref");
	bench_json_uint("threads", nr_threads);
	bench_json_num("duration_s", seconds, BENCH_JSON_G);
	bench_json_int("faults", faults);
	bench_json_num("faults_per_s", (double)faults / elapsed, 1);
	bench_json_end();
}

static const char about[] =
"Kamezawa Hiroyuki's multi-fault loop as plain C, no vmsim code: each\n"
"thread writes one byte to every page of its own 2 MiB, thread 0 zaps\n"
"them all with MADV_DONTNEED, round and round.  Prints the process's\n"
"minor faults over the run (the sum over its threads) and their rate.\n";

static const struct bench_opt opts[] = {
	{ BENCH_OPT_THREADS, "faulting threads, 1..256 (default: the\n"
			     "online CPUs, at most 256)", "N" },
	{ BENCH_OPT_DURATION, NULL, NULL },
	{ BENCH_OPT_JSON, "one JSON object instead of the text line",
	  NULL },
	{ 0, NULL, NULL },
};

static const struct bench_tool tool = {
	.name = "multi-fault-ref", .about = about, .opts = opts,
	.duration_ms = 60000,
};

int main(int argc, char *argv[])
{
	static pthread_t tid[MAX_THREADS];
	double seconds, t0, t1;
	struct timespec ts;
	unsigned int i;
	int err;
	long f0, faults;

	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	bench_parse_options(&tool, argc, argv);
	if (bench_std.nr_threads > 1)
		bench_usage_error("--threads: one count, not a list");
	if (bench_std.nr_threads)
		nr_threads = bench_std.threads[0];
	else
		nr_threads = ncpu > MAX_THREADS ? MAX_THREADS
						: (unsigned int)ncpu;

	mmap_area = mmap(NULL, MMAP_LENGTH * nr_threads,
			 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	if (mmap_area == MAP_FAILED) {
		perror("multi-fault-ref: mmap");
		return 1;
	}
	pthread_barrier_init(&barrier, NULL, nr_threads);
	f0 = minflt();
	t0 = now_s();
	for (i = 0; i < nr_threads; i++) {
		err = pthread_create(&tid[i], NULL, worker,
				     (void *)(uintptr_t)i);
		if (err) {
			fprintf(stderr, "multi-fault-ref: pthread_create: %s\n",
				strerror(err));
			return 1;
		}
	}
	seconds = bench_std.duration_ms / 1000.0;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	atomic_store(&stop, 1);
	for (i = 0; i < nr_threads; i++)
		pthread_join(tid[i], NULL);
	t1 = now_s();
	faults = minflt() - f0;

	report(seconds, faults, t1 - t0);
	return 0;
}
