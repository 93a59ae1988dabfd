/* SPDX-License-Identifier: MIT */
/*
 * tools/vcpu-calibrate/calib_pair.c - what takes two threads or more: a line
 * passed between two CPUs, a futex wake-up, a context switch, and clear_page
 * bandwidth of one core and of a socket's cores together.  calib.h documents
 * each function that is not static here.
 *
 * Each shared word has a 128-byte line pair of its own (the adjacent-
 * line prefetcher fetches lines in pairs).  Waits spin where the two
 * threads have a CPU each, and yield or sleep where they share one.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* syscall, sched_yield */
#endif
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench_report.h"
#include "calib.h"

#define STOP UINT64_MAX		/* a word's value that ends a helper */
#define SETTLE_NS 20000		/* the sleeper's time to fall asleep */
#define MAX_SAMPLES 4096	/* futex wake-ups one figure is of */
#define MIN_SAMPLES 7
#define CLEAR_WINDOWS 7		/* clear_page windows, the median of */

static long futex(_Atomic uint32_t *w, int op, uint32_t val)
{
	return syscall(SYS_futex, (uint32_t *)w, op, val, NULL, NULL, 0);
}

/* ---- line ping-pong ---------------------------------------------------- */

static struct {
	_Alignas(128) _Atomic uint64_t v;
	char pad[120];
} ball;

/* The far end: writes v + 1 each time it sees an odd v. */
static void *echo_main(void *arg)
{
	uint64_t want = 1, v;

	(void)arg;
	for (;;) {
		while ((v = atomic_load_explicit(&ball.v,
						 memory_order_acquire)) != want)
			if (v == STOP)
				return NULL;
		atomic_store_explicit(&ball.v, want + 1, memory_order_release);
		want += 2;
	}
}

/* @n round trips: write the next odd value, wait for its echo. */
static uint64_t serve_batch(void *arg, uint64_t n)
{
	uint64_t *next = arg, v = *next, t0, t1, i;

	t0 = calib_ticks();
	for (i = 0; i < n; i++, v += 2) {
		atomic_store_explicit(&ball.v, v, memory_order_release);
		while (atomic_load_explicit(&ball.v, memory_order_acquire) !=
		       v + 1)
			;
	}
	t1 = calib_ticks();
	*next = v;
	return t1 - t0;
}

double calib_pingpong(int a, int b)
{
	uint64_t next = 1;
	pthread_t echo;
	double round;

	atomic_store(&ball.v, 0);
	calib_start_on_cpu(b, echo_main, NULL, &echo);
	round = calib_measure_on(a, serve_batch, &next);
	atomic_store(&ball.v, STOP);
	pthread_join(echo, NULL);
	return round / 4;	/* four transfers a round trip: calib.h */
}

/* ---- futex wake-up ----------------------------------------------------- */

static struct {
	_Alignas(128) _Atomic uint32_t word;	/* the futex */
	char pad[124];
} fw;

/* The handshake of one wake-up k: the waker raises go = k, the sleeper
 * answers armed = k and sleeps, then woke (its tick) and done = k. */
static struct {
	_Alignas(128) _Atomic uint64_t go, armed, done, woke;
} hs;

struct futex_run {
	int shared;		/* waker and sleeper on one CPU */
	int nr;
	double wake[MAX_SAMPLES], latency[MAX_SAMPLES];
};

/* Wait for @w to be @v (or STOP): spin, or yield the one CPU. */
static uint64_t wait_for(_Atomic uint64_t *w, uint64_t v, int shared)
{
	uint64_t x;

	while ((x = atomic_load(w)) != v && x != STOP) {
		if (shared)
			sched_yield();
		else
			calib_pause();
	}
	return x;
}

static void *sleeper_main(void *arg)
{
	struct futex_run *run = arg;
	uint64_t k;

	for (k = 1;; k++) {
		if (wait_for(&hs.go, k, run->shared) == STOP)
			return NULL;
		atomic_store(&hs.armed, k);
		while (atomic_load(&fw.word) == 0)
			futex(&fw.word, FUTEX_WAIT_PRIVATE, 0);
		atomic_store(&hs.woke, calib_ticks());
		atomic_store(&hs.done, k);
	}
}

/* Wake-up @k; false when the sleeper was not asleep yet. */
static bool wake_one(struct futex_run *run, uint64_t k)
{
	uint64_t settle = (uint64_t)(SETTLE_NS * calib_clock.ticks_per_ns);
	uint64_t t0, t1;
	long woken;

	atomic_store(&fw.word, 0);
	atomic_store(&hs.go, k);
	wait_for(&hs.armed, k, run->shared);
	t0 = calib_ticks();
	while (calib_ticks() - t0 < settle)
		if (run->shared)
			sched_yield();
	t0 = calib_ticks();
	atomic_store(&fw.word, 1);
	woken = futex(&fw.word, FUTEX_WAKE_PRIVATE, 1);
	t1 = calib_ticks();
	wait_for(&hs.done, k, run->shared);
	if (woken != 1 || run->nr == MAX_SAMPLES)
		return false;
	run->wake[run->nr] = (double)(t1 - t0);
	run->latency[run->nr] = (double)(atomic_load(&hs.woke) - t0);
	run->nr++;
	return true;
}

/* Wake-ups for --duration (at least MIN_SAMPLES, given up after ten
 * times that when the sleeper is never found asleep). */
static void *waker_main(void *arg)
{
	struct futex_run *run = arg;
	uint64_t start = calib_ticks(), k, limit;

	limit = 10 * calib_clock.duration_ticks;
	for (k = 1; run->nr < MAX_SAMPLES; k++) {
		wake_one(run, k);
		if (calib_ticks() - start >= calib_clock.duration_ticks &&
		    (run->nr >= MIN_SAMPLES ||
		     calib_ticks() - start >= limit))
			break;
	}
	atomic_store(&hs.go, STOP);
	return NULL;
}

void calib_futex(int waker, int sleeper, double *wake, double *latency,
		 int *samples)
{
	struct futex_run *run = calloc(1, sizeof(*run));
	pthread_t tid;

	if (!run)
		calib_die("out of memory");
	run->shared = waker == sleeper;
	atomic_store(&hs.go, 0);
	atomic_store(&hs.armed, 0);
	atomic_store(&hs.done, 0);
	calib_start_on_cpu(sleeper, sleeper_main, run, &tid);
	calib_on_cpu(waker, waker_main, run);
	pthread_join(tid, NULL);
	if (!run->nr)
		calib_die("futex: the sleeper was never found asleep");
	*samples = run->nr;
	*wake = bench_median(run->wake, (unsigned int)run->nr) *
		calib_clock.cycles_per_tick;
	*latency = bench_median(run->latency, (unsigned int)run->nr) *
		   calib_clock.cycles_per_tick;
	free(run);
}

/* ---- context switch ---------------------------------------------------- */

enum { TURN_A, TURN_B, TURN_STOP };

static struct {
	_Alignas(128) _Atomic uint32_t turn;
	char pad[124];
} tok;

/* Wait until the token is @want (or TURN_STOP), asleep. */
static uint32_t wait_turn(uint32_t want)
{
	uint32_t t;

	while ((t = atomic_load(&tok.turn)) != want && t != TURN_STOP)
		futex(&tok.turn, FUTEX_WAIT_PRIVATE, t);
	return t;
}

static void pass_turn(uint32_t to)
{
	atomic_store(&tok.turn, to);
	futex(&tok.turn, FUTEX_WAKE_PRIVATE, 1);
}

static void *turn_b_main(void *arg)
{
	(void)arg;
	while (wait_turn(TURN_B) != TURN_STOP)
		pass_turn(TURN_A);
	return NULL;
}

/* @n round trips of the token: two switches each. */
static uint64_t turn_batch(void *arg, uint64_t n)
{
	uint64_t t0, t1, i;

	(void)arg;
	t0 = calib_ticks();
	for (i = 0; i < n; i++) {
		pass_turn(TURN_B);
		wait_turn(TURN_A);
	}
	t1 = calib_ticks();
	return t1 - t0;
}

double calib_switch(int cpu)
{
	pthread_t b;
	double round;

	atomic_store(&tok.turn, TURN_A);
	calib_start_on_cpu(cpu, turn_b_main, NULL, &b);
	round = calib_measure_on(cpu, turn_batch, NULL);
	pass_turn(TURN_STOP);
	pthread_join(b, NULL);
	return round / 2;
}

/* ---- clear_page bandwidth ---------------------------------------------- */

static _Atomic int clear_stop;

struct clearer {
	char *buf;		/* mapped by the thread, on its CPU's node */
	size_t bytes;
	pthread_barrier_t *start;
	uint64_t done, ticks;	/* bytes cleared, in ticks */
};

static void *clearer_main(void *arg)
{
	struct clearer *c = arg;
	size_t off = 0;
	uint64_t t0;

	if (!c->buf)
		c->buf = calib_map(c->bytes, true, true);
	pthread_barrier_wait(c->start);
	c->done = 0;
	t0 = calib_ticks();
	while (!atomic_load_explicit(&clear_stop, memory_order_relaxed)) {
		memset(c->buf + off, 0, CALIB_PAGE);
		off = off + CALIB_PAGE < c->bytes ? off + CALIB_PAGE : 0;
		c->done += CALIB_PAGE;
	}
	c->ticks = calib_ticks() - t0;
	return NULL;
}

/* One window: all clear pages from the barrier until main says stop;
 * the sum of their bytes per tick. */
static double clear_window(struct clearer *c, const int *cpus, int nr,
			   pthread_t *tid, double ns)
{
	struct timespec ts = { (time_t)(ns / 1e9), (long)((long long)ns %
							    1000000000) };
	pthread_barrier_t start;
	double sum = 0;
	int i;

	pthread_barrier_init(&start, NULL, (unsigned int)nr + 1);
	atomic_store(&clear_stop, 0);
	for (i = 0; i < nr; i++) {
		c[i].start = &start;
		calib_start_on_cpu(cpus[i], clearer_main, &c[i], &tid[i]);
	}
	pthread_barrier_wait(&start);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	atomic_store(&clear_stop, 1);
	for (i = 0; i < nr; i++) {
		pthread_join(tid[i], NULL);
		sum += (double)c[i].done / (double)c[i].ticks;
	}
	pthread_barrier_destroy(&start);
	return sum;
}

double calib_clear(const int *cpus, int nr, size_t bytes)
{
	struct clearer *c = calloc((size_t)nr, sizeof(*c));
	pthread_t *tid = calloc((size_t)nr, sizeof(*tid));
	double rate[CLEAR_WINDOWS], ns;
	int i;

	if (!c || !tid)
		calib_die("out of memory");
	for (i = 0; i < nr; i++)
		c[i].bytes = bytes;
	ns = calib_clock.duration_ticks / calib_clock.ticks_per_ns /
	     CLEAR_WINDOWS;
	if (ns < 1e6)
		ns = 1e6;
	for (i = 0; i < CLEAR_WINDOWS; i++)
		rate[i] = clear_window(c, cpus, nr, tid, ns);
	for (i = 0; i < nr; i++)
		munmap(c[i].buf, bytes);
	free(c);
	free(tid);
	return bench_median(rate, CLEAR_WINDOWS) /
	       calib_clock.cycles_per_tick;
}

/* ---- the prefetcher ---------------------------------------------------- */

#define WALK_PAGES 64		/* pages a walk covers: 256 KiB */
#define WALK_LINES (WALK_PAGES * (CALIB_PAGE / CALIB_LINE))

/*
 * A chase over lines another CPU wrote: @next[i] is the line read after
 * line i, stored in line i itself by the writer before each pass.
 * @go and @done: the pass the writer is asked for, and the last it did.
 */
static struct walk {
	uint64_t *buf;
	uint32_t next[WALK_LINES];
	uint32_t first;
	_Alignas(128) _Atomic uint64_t go;
	_Alignas(128) _Atomic uint64_t done;
} walk;

/* The writer: on each request, every line gets its successor. */
static void *walk_writer_main(void *arg)
{
	uint64_t k, want = 1;
	uint32_t i;

	(void)arg;
	for (;; want++) {
		while ((k = atomic_load_explicit(&walk.go,
						 memory_order_acquire)) < want)
			calib_pause();
		if (k == STOP)
			return NULL;
		for (i = 0; i < WALK_LINES; i++)
			walk.buf[i * (CALIB_LINE / 8)] = walk.next[i];
		atomic_store_explicit(&walk.done, want, memory_order_release);
	}
}

/* @n lines chased, in passes of at most WALK_LINES, each after the
 * writer has written every line anew; only the chase is timed. */
static uint64_t walk_batch(void *arg, uint64_t n)
{
	volatile uint64_t *buf = walk.buf;
	uint64_t total = 0, t0, k, m, i;
	uint32_t at;

	(void)arg;
	for (; n; n -= m) {
		m = n < WALK_LINES ? n : WALK_LINES;
		k = atomic_load(&walk.done) + 1;
		atomic_store_explicit(&walk.go, k, memory_order_release);
		while (atomic_load_explicit(&walk.done,
					    memory_order_acquire) < k)
			calib_pause();
		at = walk.first;
		t0 = calib_ticks();
		for (i = 0; i < m; i++)
			at = (uint32_t)buf[(uint64_t)at * (CALIB_LINE / 8)];
		total += calib_ticks() - t0;
		calib_barrier();
		if (at >= WALK_LINES)
			calib_die("walk: line %u out of range", at);
	}
	return total;
}

/* @v[0..@n) in a random order (xorshift from *@r). */
static void shuffle(uint32_t *v, uint32_t n, uint64_t *r)
{
	uint32_t i, j, x;

	for (i = n; i-- > 1;) {
		*r ^= *r << 13, *r ^= *r >> 7, *r ^= *r << 17;
		j = (uint32_t)(*r % (i + 1));
		x = v[i], v[i] = v[j], v[j] = x;
	}
}

/* The order of the chase: @pages pages at a time (a divisor of
 * WALK_PAGES), each walked up a line per turn, the pages of a turn in a
 * random order (with two or more, no constant stride for a stride
 * prefetcher to follow; one is a plain sequential sweep); 0: every line
 * in random order. */
static void walk_order(int pages)
{
	static uint32_t seq[WALK_LINES];
	uint32_t i, j, p, n = 0, lines = CALIB_PAGE / CALIB_LINE;
	uint64_t r = 88172645463325252ull;

	if (pages < 0 || (pages && WALK_PAGES % pages))
		calib_die("walk: %d pages at a time do not divide %d", pages,
			  WALK_PAGES);
	if (pages) {
		for (i = 0; i < WALK_PAGES; i += (uint32_t)pages)
			for (j = 0; j < lines; j++, n += (uint32_t)pages) {
				for (p = 0; p < (uint32_t)pages; p++)
					seq[n + p] = (i + p) * lines + j;
				shuffle(seq + n, (uint32_t)pages, &r);
			}
	} else {
		for (i = 0; i < WALK_LINES; i++)
			seq[i] = i;
		shuffle(seq, WALK_LINES, &r);
	}
	for (i = 0; i < WALK_LINES; i++)
		walk.next[seq[i]] = seq[(i + 1) % WALK_LINES];
	walk.first = seq[0];
}

double calib_walk(int a, int b, int pages)
{
	pthread_t writer;
	double x;

	if (!walk.buf)
		walk.buf = calib_map(WALK_LINES * CALIB_LINE, false, true);
	walk_order(pages);
	atomic_store(&walk.go, 0);
	atomic_store(&walk.done, 0);
	calib_start_on_cpu(b, walk_writer_main, NULL, &writer);
	x = calib_measure_on(a, walk_batch, NULL);
	atomic_store(&walk.go, STOP);
	pthread_join(writer, NULL);
	return x;
}
