/* SPDX-License-Identifier: MIT */
/*
 * multi-fault-ref - Kamezawa Hiroyuki's multi-fault loop (lkml, 6 Jan
 * 2010), as plain C with no vmsim code: the yardstick that keeps
 * `multi-fault --backing native` honest.
 *
 *   multi-fault-ref [--json] [THREADS [SECONDS]]
 *
 * THREADS (default: the online CPUs) threads, thread i pinned to CPU
 * i % ncpu, each own the i-th 8 MiB slot of one private anonymous
 * mapping.  A pass: barrier; each writes one byte to every page of its
 * slot's first 2 MiB; barrier; thread 0 alone zaps every slot's 2 MiB
 * with MADV_DONTNEED and reads the stop flag; barrier; all leave, or go
 * round again.  Main raises the flag after SECONDS (default 60).
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MMAP_LENGTH (8UL << 20)
#define FAULT_LENGTH (2UL << 20)
#define PAGE_SIZE 4096UL
#define MAX_THREADS 256

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

static void bad(const char *what, const char *arg)
{
	fprintf(stderr, "multi-fault-ref: bad %s '%s' (usage: "
		"multi-fault-ref [--json] [THREADS [SECONDS]])\n", what, arg);
	exit(2);
}

int main(int argc, char *argv[])
{
	static pthread_t tid[MAX_THREADS];
	double seconds = 60, t0, t1;
	struct timespec ts;
	unsigned long n;
	unsigned int i;
	int json = 0, err;
	long f0, faults;
	char *end;

	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	nr_threads = ncpu > MAX_THREADS ? MAX_THREADS : (unsigned int)ncpu;
	if (argc > 1 && !strcmp(argv[1], "--json")) {
		json = 1;
		argv++;
		argc--;
	}
	if (argc > 3)
		bad("argument", argv[3]);
	if (argc > 1) {
		errno = 0;
		n = strtoul(argv[1], &end, 10);
		if (errno || end == argv[1] || *end || argv[1][0] == '-' ||
		    n < 1 || n > MAX_THREADS)
			bad("THREADS", argv[1]);
		nr_threads = (unsigned int)n;
	}
	if (argc > 2) {
		errno = 0;
		seconds = strtod(argv[2], &end);
		if (errno || end == argv[2] || *end || !(seconds > 0) ||
		    seconds > 1e6)
			bad("SECONDS", argv[2]);
	}

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
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	atomic_store(&stop, 1);
	for (i = 0; i < nr_threads; i++)
		pthread_join(tid[i], NULL);
	t1 = now_s();
	faults = minflt() - f0;

	if (json)
		printf("{\"impl\":\"ref\",\"threads\":%u,\"duration_s\":%g,"
		       "\"faults\":%ld,\"faults_per_s\":%.1f}\n",
		       nr_threads, seconds, faults, (double)faults / (t1 - t0));
	else
		printf("multi-fault-ref: %u threads, %g s: %ld page-faults, "
		       "%.0f page-faults/s\n",
		       nr_threads, seconds, faults, (double)faults / (t1 - t0));
	return 0;
}
