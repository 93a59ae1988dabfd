/* SPDX-License-Identifier: MIT */
/*
 * tools/vcpu-calibrate/calib_contend.c - what several CPUs do to each
 * other at once: the rate at which a line that all of them RMW is handed
 * from one to the next, and an inter-processor interrupt's delivery.
 * calib.h documents each function that is not static here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* syscall */
#endif
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "calib.h"

/* ---- a contended line -------------------------------------------------- */

/* The line every thread adds to, the word that stops the helpers, and
 * each helper's count of the times the line came to it, on line pairs of
 * their own (the adjacent-line prefetcher). */
static struct {
	_Alignas(128) _Atomic uint64_t count;
	char pad[120];
} hot;

/*
 * @stop and @running order nothing but themselves: a helper's last
 * writes are ordered by pthread_join(), and the seq_cst stores and
 * loads of the main thread are only a start and a stop signal, so the
 * helpers read @stop relaxed.
 */
static struct {
	_Alignas(128) _Atomic int stop;
	_Atomic int running;
	char pad[120];
} ctl;

static struct {
	_Alignas(128) _Atomic uint64_t moves;
	char pad[120];
} helper[CALIB_MAX_CPUS];

/*
 * One add; whether the line came from another thread for it: the add
 * before it (its old value less one) was not this thread's last add.
 * Relaxed: only the add's atomicity matters, and a locked add is a full
 * barrier on x86-64 whatever the order asked.
 */
static int add_moved(uint64_t *last)
{
	uint64_t old = atomic_fetch_add_explicit(&hot.count, 1,
						 memory_order_relaxed);
	int moved = old != *last + 1;

	*last = old;
	return moved;
}

/* A helper: adds to the hot line until told to stop, counting the times
 * the line came to it (a store to its own line: no other writer; relaxed,
 * the measured thread's sum of them needs no order with the adds). */
static void *adder_main(void *arg)
{
	_Atomic uint64_t *moves = arg;
	uint64_t last = UINT64_MAX - 1, n = 0;

	atomic_fetch_add(&ctl.running, 1);
	while (!atomic_load_explicit(&ctl.stop, memory_order_relaxed))
		if (add_moved(&last))
			atomic_store_explicit(moves, ++n,
					      memory_order_relaxed);
	return NULL;
}

/* The line's moves so far, to the helpers. */
static uint64_t helper_moves(int nr)
{
	uint64_t sum = 0;
	int i;

	for (i = 1; i < nr; i++)
		sum += atomic_load_explicit(&helper[i].moves,
					    memory_order_relaxed);
	return sum;
}

/*
 * @n adds by the measured thread while the helpers add too.  Return the
 * ticks scaled so that ticks / @n is the ticks a handoff: elapsed * @n /
 * (the times the line moved to any thread meanwhile).
 */
static uint64_t handoff_batch(void *arg, uint64_t n)
{
	int nr = *(int *)arg;
	uint64_t t0, t1, h0, h1, i, moved = 0, last = UINT64_MAX - 1;

	h0 = helper_moves(nr);
	t0 = calib_ticks();
	for (i = 0; i < n; i++)
		moved += (uint64_t)add_moved(&last);
	t1 = calib_ticks();
	h1 = helper_moves(nr);
	moved += h1 - h0;
	if (!moved)
		return t1 - t0;
	return (uint64_t)((double)(t1 - t0) * (double)n / (double)moved);
}

double calib_handoff(const int *cpus, int nr)
{
	pthread_t tid[CALIB_MAX_CPUS];
	double per;
	int i;

	atomic_store(&ctl.stop, 0);
	atomic_store(&ctl.running, 0);
	for (i = 1; i < nr; i++) {
		atomic_store(&helper[i].moves, 0);
		calib_start_on_cpu(cpus[i], adder_main, &helper[i].moves,
				   &tid[i]);
	}
	while (atomic_load(&ctl.running) < nr - 1)
		calib_pause();
	per = calib_measure_on(cpus[0], handoff_batch, &nr);
	atomic_store(&ctl.stop, 1);
	for (i = 1; i < nr; i++)
		pthread_join(tid[i], NULL);
	return per;
}

/* ---- an inter-processor interrupt ------------------------------------- */

static long membarrier(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0, 0);
}

/* The thread the IPIs go to: spins in user space, so that its CPU runs
 * this process's memory map, until told to stop. */
static void *target_main(void *arg)
{
	(void)arg;
	atomic_store(&ctl.running, 1);
	while (!atomic_load_explicit(&ctl.stop, memory_order_relaxed))
		calib_pause();
	return NULL;
}

/* @n expedited membarriers: each sends an IPI to the target's CPU and
 * waits for its handler to run. */
static uint64_t ipi_batch(void *arg, uint64_t n)
{
	uint64_t t0, t1, i;

	(void)arg;
	t0 = calib_ticks();
	for (i = 0; i < n; i++)
		(void)membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
	t1 = calib_ticks();
	return t1 - t0;
}

double calib_ipi(int a, int b)
{
	pthread_t tid;
	double call;

	if (a == b || membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED))
		return -1;
	atomic_store(&ctl.stop, 0);
	atomic_store(&ctl.running, 0);
	calib_start_on_cpu(b, target_main, NULL, &tid);
	while (!atomic_load(&ctl.running))
		calib_pause();
	call = calib_measure_on(a, ipi_batch, NULL);
	atomic_store(&ctl.stop, 1);
	pthread_join(tid, NULL);
	return call;
}
