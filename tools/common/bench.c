/* SPDX-License-Identifier: MIT */
/*
 * tools/common/bench.c - what the benchmarks of tools/ share.  bench.h
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

bool bench_interrupted;		/* main thread only */

/* Raised by the main thread, read by the workers. */
static vs_atomic32_t bench_ready;	/* workers waiting for go */
static vs_atomic32_t bench_go;
vs_atomic32_t bench_stop;

static uv_loop_t *loop;
static uv_timer_t run_timer;
static uv_signal_t sigint_watcher;

void bench_json_lockstat(const struct vs_lock_class *class)
{
	static const char *const side[] = { "read", "write" };
	struct vs_lockstat st;
	int i;

	for (i = VS_LOCK_READ; i <= VS_LOCK_WRITE; i++) {
		if (vs_lockstat_read(class, (enum vs_lock_side)i, &st))
			continue;
		bench_json_begin();
		bench_json_str("lockstat", class->name);
		bench_json_str("side", side[i]);
		bench_json_uint("acquisitions", st.acquisitions);
		bench_json_uint("contentions", st.contentions);
		bench_json_uint("con_bounces", st.con_bounces);
		bench_json_uint("acq_bounces", st.acq_bounces);
		bench_json_uint("waittime_min_ns", st.waittime_min);
		bench_json_uint("waittime_max_ns", st.waittime_max);
		bench_json_uint("waittime_total_ns", st.waittime_total);
		bench_json_uint("holdtime_min_ns", st.holdtime_min);
		bench_json_uint("holdtime_max_ns", st.holdtime_max);
		bench_json_uint("holdtime_total_ns", st.holdtime_total);
		bench_json_uint("holdtime_nr", st.holdtime_nr);
		bench_json_end();
	}
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
