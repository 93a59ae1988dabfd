/* SPDX-License-Identifier: MIT */
/*
 * tools/vcpu-calibrate/calib_probe.c - what one thread measures alone: a load
 * that hits L1, a load from memory, a store, a locked RMW, a store and a
 * fence, a system call, a page fault.  calib.h documents each function that is
 * not static here.
 *
 * The short operations run 8 to a loop iteration ("an op" of
 * calib_measure() is 8 of them) so that the loop's own instructions
 * hide under them; the loads are a pointer chase, each one's address
 * the one before's value, so that they cannot overlap.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* syscall */
#endif
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "calib.h"

#define UNROLL 8
#define FAULT_CHUNK 4096	/* pages mapped at once for the fault probe */

#define REP8(x) x x x x x x x x

/* Keeps results alive: the compiler may not drop what is stored here. */
static volatile uintptr_t sink;

/* A private line of its own for the stores and RMWs. */
static struct {
	_Alignas(128) _Atomic uint64_t word;
	char pad[120];
} line;

/* ---- loads ------------------------------------------------------------- */

/* @n * 8 steps of the chase from *@arg, which it advances. */
static uint64_t chase_batch(void *arg, uint64_t n)
{
	void **p = *(void ***)arg;
	uint64_t t0, t1, i;

	t0 = calib_ticks();
	for (i = 0; i < n; i++) {
		REP8(p = (void **)*p;)
	}
	t1 = calib_ticks();
	*(void ***)arg = p;
	return t1 - t0;
}

double calib_hit(int cpu)
{
	static struct {
		_Alignas(64) void *self;
	} hit;
	void **p = &hit.self;

	hit.self = &hit.self;
	return calib_measure_on(cpu, chase_batch, &p) / UNROLL;
}

/* xorshift64: the chase's order; any seed will do. */
static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* One cycle through every line of @buf, in a random order: line
 * order[k] holds the address of line order[k + 1]. */
static CALIB_NO_TSAN void **link_lines(char *buf, size_t bytes)
{
	size_t lines = bytes / CALIB_LINE, k, j;
	uint32_t *order = malloc(lines * sizeof(*order)), tmp;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	void **first;

	if (!order)
		calib_die("out of memory for %zu lines", lines);
	for (k = 0; k < lines; k++)
		order[k] = (uint32_t)k;
	for (k = lines - 1; k > 0; k--) {
		j = rng(&seed) % (k + 1);
		tmp = order[k];
		order[k] = order[j];
		order[j] = tmp;
	}
	for (k = 0; k < lines; k++)
		*(void **)(buf + (size_t)order[k] * CALIB_LINE) =
			buf + (size_t)order[(k + 1) % lines] * CALIB_LINE;
	first = (void **)(buf + (size_t)order[0] * CALIB_LINE);
	free(order);
	return first;
}

double calib_memory(int cpu, size_t bytes)
{
	char *buf = calib_map(bytes, true, false);
	void **p = link_lines(buf, bytes);
	double cycles = calib_measure_on(cpu, chase_batch, &p) / UNROLL;

	sink = (uintptr_t)p;
	munmap(buf, bytes);
	return cycles;
}

/* ---- stores, RMWs, fences ---------------------------------------------- */

static uint64_t store_batch(void *arg, uint64_t n)
{
	volatile uint64_t *w = (volatile uint64_t *)&line.word;
	uint64_t t0, t1, i;

	(void)arg;
	t0 = calib_ticks();
	for (i = 0; i < n; i++) {
		REP8(*w = i;)
	}
	t1 = calib_ticks();
	return t1 - t0;
}

static uint64_t rmw_batch(void *arg, uint64_t n)
{
	uint64_t t0, t1, i;

	(void)arg;
	t0 = calib_ticks();
	for (i = 0; i < n; i++) {
		REP8(atomic_fetch_add_explicit(&line.word, 1,
					       memory_order_relaxed);)
	}
	t1 = calib_ticks();
	return t1 - t0;
}

static inline void full_fence(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("mfence" ::: "memory");
#else
	atomic_thread_fence(memory_order_seq_cst);
#endif
}

static uint64_t store_fence_batch(void *arg, uint64_t n)
{
	volatile uint64_t *w = (volatile uint64_t *)&line.word;
	uint64_t t0, t1, i;

	(void)arg;
	t0 = calib_ticks();
	for (i = 0; i < n; i++) {
		REP8(*w = i; full_fence();)
	}
	t1 = calib_ticks();
	return t1 - t0;
}

double calib_store(int cpu)
{
	return calib_measure_on(cpu, store_batch, NULL) / UNROLL;
}

double calib_rmw(int cpu)
{
	return calib_measure_on(cpu, rmw_batch, NULL) / UNROLL;
}

double calib_store_fence(int cpu)
{
	return calib_measure_on(cpu, store_fence_batch, NULL) / UNROLL;
}

/* ---- the core's clock, a pause ----------------------------------------- */

#if defined(__x86_64__) || defined(__aarch64__)
/* @n * 8 dependent adds: one core cycle each, on every core there is. */
static uint64_t add_batch(void *arg, uint64_t n)
{
	uint64_t t0, t1, i, x = 0;

	(void)arg;
	t0 = calib_ticks();
	for (i = 0; i < n; i++) {
#if defined(__x86_64__)
		__asm__ __volatile__(REP8("add $1, %0\n\t") : "+r"(x));
#elif defined(__aarch64__)
		__asm__ __volatile__(REP8("add %0, %0, #1\n\t") : "+r"(x));
#endif
	}
	t1 = calib_ticks();
	sink += (uintptr_t)x;
	return t1 - t0;
}
#endif

double calib_add(int cpu)
{
#if defined(__x86_64__) || defined(__aarch64__)
	return calib_measure_on(cpu, add_batch, NULL) / UNROLL;
#else
	(void)cpu;
	return 0;
#endif
}

#if defined(__x86_64__)
static uint64_t pause_batch(void *arg, uint64_t n)
{
	uint64_t t0, t1, i;

	(void)arg;
	t0 = calib_ticks();
	for (i = 0; i < n; i++) {
		REP8(calib_pause();)
	}
	t1 = calib_ticks();
	return t1 - t0;
}
#endif

double calib_pause_cycles(int cpu)
{
#if defined(__x86_64__)
	return calib_measure_on(cpu, pause_batch, NULL) / UNROLL;
#else
	(void)cpu;
	return 0;
#endif
}

/* ---- the kernel -------------------------------------------------------- */

static uint64_t syscall_batch(void *arg, uint64_t n)
{
	uint64_t t0, t1, i;

	(void)arg;
	t0 = calib_ticks();
	for (i = 0; i < n; i++)
		sink += (uintptr_t)syscall(SYS_getppid);
	t1 = calib_ticks();
	return t1 - t0;
}

double calib_syscall(int cpu)
{
	return calib_measure_on(cpu, syscall_batch, NULL);
}

/* Ticks of the first touch of @pages fresh pages of @buf. */
static uint64_t touch(char *buf, uint64_t pages, bool write)
{
	volatile char *p = buf;
	uint64_t t0, t1, i;
	uintptr_t s = 0;

	t0 = calib_ticks();
	if (write)
		for (i = 0; i < pages; i++)
			p[i * CALIB_PAGE] = 1;
	else
		for (i = 0; i < pages; i++)
			s += (uintptr_t)p[i * CALIB_PAGE];
	t1 = calib_ticks();
	sink += s;
	return t1 - t0;
}

/* @n faults on fresh small pages, FAULT_CHUNK pages mapped at a time;
 * the mmap and munmap are not timed. */
static uint64_t fault_batch(void *arg, uint64_t n)
{
	bool write = *(bool *)arg;
	uint64_t done = 0, ticks = 0, pages;
	char *buf;

	while (done < n) {
		pages = n - done < FAULT_CHUNK ? n - done : FAULT_CHUNK;
		buf = calib_map(pages * CALIB_PAGE, false, false);
		ticks += touch(buf, pages, write);
		munmap(buf, pages * CALIB_PAGE);
		done += pages;
	}
	return ticks;
}

double calib_fault(int cpu, bool write)
{
	return calib_measure_on(cpu, fault_batch, &write);
}
