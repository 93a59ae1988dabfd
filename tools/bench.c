/* SPDX-License-Identifier: MIT */
/*
 * tools/bench.c - what the benchmarks of tools/ share.  bench.h
 * documents each function that is not static here.
 */

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "bench.h"

const char *bench_prog = "bench";
bool bench_interrupted;		/* main thread only */

/* Raised by the main thread, read by the workers. */
static vs_atomic32_t bench_ready;	/* workers waiting for go */
static vs_atomic32_t bench_go;
vs_atomic32_t bench_stop;

static uv_loop_t *loop;
static uv_timer_t run_timer;
static uv_signal_t sigint_watcher;

/* ---- options ---------------------------------------------------------- */

_Noreturn void bench_try_help(void)
{
	fprintf(stderr, "Try '%s --help'.\n", bench_prog);
	exit(BENCH_EXIT_USAGE);
}

_Noreturn void bench_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", bench_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n", stderr);
	bench_try_help();
}

int bench_parse_seconds(const char *s, unsigned int max_ms, unsigned int *ms)
{
	size_t digits = strspn(s, "0123456789"), frac = 0;
	double v;
	char *end;

	if (s[digits] == '.')
		frac = strspn(s + digits + 1, "0123456789");
	if (digits + frac == 0 ||
	    strlen(s) != digits + (s[digits] == '.') + frac)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end)
		return -EINVAL;
	v = v * 1000 + 0.5;	/* to the nearest ms */
	if (v < 1 || v >= max_ms + 1.0)
		return -EINVAL;
	*ms = (unsigned int)v;
	return 0;
}

int bench_parse_uint(const char *s, unsigned long min, unsigned long max,
		     unsigned int *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

void bench_for_each_item(char *list, void (*fn)(const char *item))
{
	char *item, *next;

	for (item = list; item; item = next) {
		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		fn(item);
	}
}

int bench_col_of(const unsigned int *threads, int nr, unsigned int t)
{
	int c;

	for (c = 0; c < nr; c++)
		if (threads[c] == t)
			return c;
	return -1;
}

void bench_add_threads(unsigned int *threads, int *nr, int max_cols,
		       unsigned int t)
{
	if (bench_col_of(threads, *nr, t) >= 0)
		return;
	if (*nr == max_cols)
		bench_usage_error("--threads: more than %d thread counts",
				  max_cols);
	threads[(*nr)++] = t;
}

void bench_threads_item(const char *item, unsigned int *threads, int *nr,
			int max_cols, unsigned int max_threads)
{
	char lo[32], *dash;
	unsigned int a, b;

	snprintf(lo, sizeof(lo), "%s", item);
	dash = strchr(lo, '-');
	if (dash)
		*dash = '\0';
	if (strlen(item) >= sizeof(lo) ||
	    bench_parse_uint(lo, 1, max_threads, &a) ||
	    (dash && bench_parse_uint(dash + 1, a, max_threads, &b)))
		bench_usage_error("--threads: '%s' is not a thread count or "
				  "range (1..%u)", item, max_threads);
	if (!dash)
		b = a;
	for (; a <= b; a++)
		bench_add_threads(threads, nr, max_cols, a);
}

/* Add @name to @lock[0..*@nr) unless it is there or @lock is full. */
static void add_lock(const char **lock, int *nr, const char *name)
{
	int i;

	for (i = 0; i < *nr; i++)
		if (strcmp(lock[i], name) == 0)
			return;
	if (*nr < BENCH_MAX_LOCKS)
		lock[(*nr)++] = name;
}

void bench_lock_item(const char *item, const char *(*name)(int),
		     const char *what, const char **lock, int *nr)
{
	char valid[128] = "";
	const char *n;
	int i, found = 0;

	for (i = 0; (n = name(i)); i++) {
		if (strcmp(item, "all") == 0 || strcmp(item, n) == 0) {
			add_lock(lock, nr, n);
			found = 1;
		}
		strcat(strcat(valid, n), ", ");
	}
	if (!found)
		bench_usage_error("--lock: '%s' is not %s (valid: %sall)", item,
				  what, valid);
}

/* ---- results ---------------------------------------------------------- */

/* qsort() order of doubles, ascending. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, unsigned int nr)
{
	qsort(v, nr, sizeof(*v), cmp_double);
	return nr % 2 ? v[nr / 2] : (v[nr / 2 - 1] + v[nr / 2]) / 2;
}

/* The field bench_sort_at() compares (qsort takes no argument). */
static size_t sort_offset;

static double field(const void *s, size_t offset)
{
	double v;

	memcpy(&v, (const char *)s + offset, sizeof(v));
	return v;
}

static int cmp_at(const void *a, const void *b)
{
	return cmp_double(&(double){ field(a, sort_offset) },
			  &(double){ field(b, sort_offset) });
}

void bench_sort_at(void *s, unsigned int nr, size_t size, size_t offset)
{
	sort_offset = offset;
	qsort(s, nr, size, cmp_at);
}

double bench_median_at(const void *s, unsigned int nr, size_t size,
		       size_t offset)
{
	static double v[BENCH_MAX_REPEAT];
	unsigned int i;

	for (i = 0; i < nr && i < BENCH_MAX_REPEAT; i++)
		v[i] = field((const char *)s + i * size, offset);
	return bench_median(v, i);
}

/* ---- one measurement: libuv times it and catches SIGINT -------------- */

/* The run timer of bench_run() fired: stop the workers, leave uv_run. */
static void on_run_timer(uv_timer_t *timer)
{
	vs_write_once(&bench_stop, 1);
	uv_stop(timer->loop);
}

/* SIGINT: as the timer, and say so (bench_control_close()). */
static void on_sigint(uv_signal_t *sig, int signum)
{
	(void)signum;
	bench_interrupted = true;
	vs_write_once(&bench_stop, 1);
	uv_stop(sig->loop);
}

int bench_control_init(void)
{
	int err;

	loop = uv_default_loop();
	err = uv_timer_init(loop, &run_timer);
	if (!err)
		err = uv_signal_init(loop, &sigint_watcher);
	if (!err)
		err = uv_signal_start(&sigint_watcher, on_sigint, SIGINT);
	if (err)
		fprintf(stderr, "%s: libuv: %s\n", bench_prog, uv_strerror(err));
	return err;
}

int bench_control_close(int ret)
{
	uv_close((uv_handle_t *)&run_timer, NULL);
	uv_close((uv_handle_t *)&sigint_watcher, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
	uv_loop_close(loop);
	if (!bench_interrupted)
		return ret;
	fprintf(stderr, "%s: interrupted\n", bench_prog);
	return BENCH_EXIT_INTR;
}

/* Worker @i of the array @w of @size-byte workers. */
static struct bench_worker *worker_at(void *w, size_t size, unsigned int i)
{
	return (struct bench_worker *)((char *)w + i * size);
}

int bench_start(void *w, size_t size, unsigned int nr, void *(*fn)(void *))
{
	struct bench_worker *b;
	unsigned int i;
	int err;

	vs_write_once(&bench_ready, 0);
	vs_write_once(&bench_stop, 0);
	vs_write_once(&bench_go, 0);
	for (i = 0; i < nr; i++) {
		b = worker_at(w, size, i);
		err = pthread_create(&b->tid, NULL, fn, b);
		if (err) {
			/* Let the ones we have run one chunk and leave. */
			vs_write_once(&bench_stop, 1);
			vs_store_release(&bench_go, 1);
			while (i--)
				pthread_join(worker_at(w, size, i)->tid, NULL);
			return -err;
		}
	}
	while (vs_load_acquire(&bench_ready) < nr)
		sched_yield();
	return 0;
}

void bench_run(unsigned int ms)
{
	uv_update_time(loop);
	uv_timer_start(&run_timer, on_run_timer, ms, 0);
	/* Release pairs with the acquire in bench_wait_go(): the workers
	 * see all the main thread wrote before it. */
	vs_store_release(&bench_go, 1);
	uv_run(loop, UV_RUN_DEFAULT);
	uv_timer_stop(&run_timer);
	vs_write_once(&bench_stop, 1);
}

int bench_join(void *w, size_t size, unsigned int nr)
{
	struct bench_worker *b;
	unsigned int i;
	int err = 0;

	for (i = 0; i < nr; i++) {
		b = worker_at(w, size, i);
		pthread_join(b->tid, NULL);
		if (b->err)
			err = b->err;
	}
	return err;
}

int bench_wait_go(void)
{
	int err = vs_thread_attach();

	vs_fetch_add(&bench_ready, 1);
	/* Acquire pairs with the release in bench_run() that starts us. */
	while (!vs_load_acquire(&bench_go))
		sched_yield();
	return err;
}
