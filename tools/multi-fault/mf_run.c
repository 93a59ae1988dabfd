/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf_run.c - one multi-fault configuration on one backing.
 *
 * The loop is the library's (vmsim/workload.h: Kamezawa's by default,
 * --workload another), on N threads, task i pinned to CPU i.  What a
 * "write" and a "zap" are depends on the backing:
 *
 *   sim     vs_access(mm, addr, 1, write) and vs_madvise() on a vs_mm
 *   uffd    a real store and vs_madvise() on a vs_uffd region
 *   native  a real store and madvise(2) on real memory, no model
 *
 * Page faults are counted the way each backing can: the model's fault
 * counter (vs_fault_stats) for sim and uffd, the process's minor faults
 * (getrusage, what perf's page-faults counts) for native.  This file
 * adds what the tool shows of a run (the trace, the progress line) and
 * the writer, which runs beside the tasks.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mf.h"

#define PAGE 4096UL
#define WRITER_BYTES (64UL << 10)	/* the writer's unrelated VMA */

/* One repeat: the tool's part of a run of vmsim/workload.h. */
struct mf_ctx {
	const struct mf_config *cfg;
	struct vs_workload *w;		/* the run, from its first hook */
	unsigned int repeat;
	mf_tick_fn *tick;
	const struct vs_workload_ops *ops;	/* the built-in one */
	char *area;			/* multi-fault's mapping */
	char *wvma;			/* the writer's mprotect target */
	pthread_t writer;
	vs_atomic32_t writer_stop;
	unsigned long writer_ops;
	unsigned int seed;		/* the writer's rand_r() state */
	int err;			/* the writer's error */
};

static struct mf_ctx ctx;	/* the hooks' */

/* ---- the writer's memory ------------------------------------------------- */

/*
 * Map @len bytes of private anonymous memory, the model's or the host's,
 * near @hint (0: anywhere).
 */
static char *map_anon(struct mf_ctx *c, char *hint, size_t len, int *err)
{
	long a;
	void *p;

	if (c->cfg->backing == MF_NATIVE) {
		p = mmap(hint, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		*err = p == MAP_FAILED ? -errno : 0;
		return p == MAP_FAILED ? NULL : p;
	}
	a = vs_mmap(c->w->mm, (unsigned long)hint, len,
		    VS_PROT_READ | VS_PROT_WRITE,
		    VS_MAP_PRIVATE | VS_MAP_ANONYMOUS, NULL, 0);
	*err = a < 0 ? (int)a : 0;
	return a < 0 ? NULL : (char *)a;
}

static int unmap(struct mf_ctx *c, char *p, size_t len)
{
	if (c->cfg->backing == MF_NATIVE)
		return munmap(p, len) ? -errno : 0;
	return vs_munmap(c->w->mm, (unsigned long)p, len);
}

/*
 * Where the writer asks for its VMA: below multi-fault's mapping, never
 * next to it or to another one (a gap of one WRITER_BYTES each way), so
 * that it is a VMA of its own and not a neighbour that merges with the
 * faulting one.  @slot 0..63 spreads the mmap writer's VMAs over 8 MiB
 * (--seed chooses); below the area there is room: the model maps top
 * down, and the uffd region has 16 MiB more than the area.
 */
static char *writer_hint(struct mf_ctx *c, unsigned long slot)
{
	return c->area - 2 * WRITER_BYTES * (slot + 1);
}

/* multi-fault's setup, then the mprotect writer's VMA below it. */
static int setup_with_writer(struct vs_workload *w)
{
	int err;

	ctx.w = w;
	err = ctx.ops->setup(w);
	ctx.area = w->priv;
	if (!err && ctx.cfg->writer == MF_WRITER_MPROTECT)
		ctx.wvma = map_anon(&ctx, writer_hint(&ctx, 0), WRITER_BYTES,
				    &err);
	return err;
}

/* ---- the hooks ------------------------------------------------------------ */

static void pin(unsigned int id)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(id % (unsigned int)(ncpu > 0 ? ncpu : 1), &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void task_start(struct vs_workload_task *t)
{
	char name[32];

	pin(t->id);
	snprintf(name, sizeof(name), "faulter %u", t->id);
	mf_trace_thread(name);
}

/* The model's faults are traced; a store to real memory is not one. */
static void touch_begin(struct vs_workload_task *t)
{
	if (t->w->cfg.backing == VS_WORKLOAD_MODEL)
		mf_trace_fault_begin();
}

static void touch_end(struct vs_workload_task *t)
{
	if (t->w->cfg.backing == VS_WORKLOAD_MODEL)
		mf_trace_fault_end();
}

/*
 * The phases hold the mmap_lock: in a trace they are named slices, as
 * every other holder is.  The setup's name says which configuration it
 * starts ("setup: mmap, spf rwsem 2 threads"), so that the trace shows
 * the rounds' order.
 */
static void span(struct vs_workload *w, const char *name, uint64_t t0,
		 uint64_t t1)
{
	const struct mf_config *cfg = ctx.cfg;
	char buf[96];

	/* Written once, at the setup span, before the writer thread starts
	 * and reads it; after that only read. */
	if (ctx.w != w)
		ctx.w = w;
	if (!strcmp(name, "setup")) {
		snprintf(buf, sizeof(buf), "setup: mmap, %s %s %u threads",
			 cfg->backing == MF_NATIVE ? "native" :
			 vs_fault_strategy_name(cfg->strategy),
			 cfg->lock ? cfg->lock : "-", cfg->threads);
		name = buf;
	} else if (!strcmp(name, "teardown")) {
		name = "teardown: munmap";
	}
	mf_trace_span(name, t0, t1);
}

static void *writer_main(void *arg);

static void started(struct vs_workload *w)
{
	int err;

	ctx.w = w;
	if (ctx.cfg->writer == MF_WRITER_NONE)
		return;
	err = -pthread_create(&ctx.writer, NULL, writer_main, &ctx);
	/* The tasks are under way and cannot be called back: a failure
	 * here (EAGAIN for threads) is fatal, as the original's is. */
	if (err) {
		fprintf(stderr, "multi-fault: pthread_create: %s\n",
			vs_strerror(err));
		exit(1);
	}
}

static void stopped(struct vs_workload *w)
{
	(void)w;
	vs_store_release(&ctx.writer_stop, 1);
	if (ctx.cfg->writer != MF_WRITER_NONE)
		pthread_join(ctx.writer, NULL);
	if (ctx.wvma)
		(void)unmap(&ctx, ctx.wvma, WRITER_BYTES);
}

/* About every 100 ms: the trace's counter and the progress line. */
static void tick(struct vs_workload *w, uint64_t elapsed_ns,
		 unsigned long pages)
{
	static uint64_t last_ns;
	static unsigned long last_pages;
	uint64_t now = mf_now_ns();

	(void)w;
	if (elapsed_ns < last_ns)
		last_ns = last_pages = 0;
	mf_trace_counter("faults/s", now, (double)(pages - last_pages) *
			 1e9 / (double)(elapsed_ns - last_ns));
	last_ns = elapsed_ns;
	last_pages = pages;
	if (ctx.tick)
		ctx.tick(ctx.cfg, ctx.repeat, (double)elapsed_ns / 1e9,
			 (double)pages);
}

static const struct vs_workload_hooks hooks = {
	.task_start = task_start,
	.touch_begin = touch_begin,
	.touch_end = touch_end,
	.span = span,
	.started = started,
	.stopped = stopped,
	.tick = tick,
};

/* ---- the writer --------------------------------------------------------- */

static int writer_op(struct mf_ctx *c, unsigned long i)
{
	struct vs_mm *child;
	int err = 0, prot;
	char *p;
	pid_t pid;

	switch (c->cfg->writer) {
	case MF_WRITER_MMAP:
		p = map_anon(c, writer_hint(c, (unsigned long)rand_r(&c->seed) %
						      64),
			     WRITER_BYTES, &err);
		return err ? err : unmap(c, p, WRITER_BYTES);
	case MF_WRITER_MPROTECT:
		prot = i & 1 ? PROT_READ : PROT_READ | PROT_WRITE;
		if (c->cfg->backing == MF_NATIVE)
			return mprotect(c->wvma, WRITER_BYTES, prot) ? -errno :
									0;
		return vs_mprotect(c->w->mm, (unsigned long)c->wvma,
				   WRITER_BYTES, prot);
	default:
		if (c->cfg->backing != MF_NATIVE) {
			err = vs_fork(c->w->mm, &child);
			return err ? err : vs_mm_destroy(child);
		}
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid < 0)
			return -errno;
		return waitpid(pid, NULL, 0) < 0 ? -errno : 0;
	}
}

/* Sleep until operation @i is due, at writer_rate per second. */
static void pace(struct mf_ctx *c, uint64_t t0, unsigned long i)
{
	uint64_t due = t0 + i * 1000000000ULL / c->cfg->writer_rate;
	struct timespec ts = { (time_t)(due / 1000000000ULL),
			       (long)(due % 1000000000ULL) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static void *writer_main(void *arg)
{
	struct mf_ctx *c = arg;
	uint64_t t0, t1;
	unsigned long i;
	const char *span = mf_writer_name(c->cfg->writer);
	int err = vs_thread_attach();

	mf_trace_thread("writer");
	t0 = mf_now_ns();
	for (i = 0; !err && !vs_load_acquire(&c->writer_stop); i++) {
		if (c->cfg->writer_rate)
			pace(c, t0, i);
		t1 = mf_now_ns();
		err = writer_op(c, i);
		mf_trace_span(span, t1, mf_now_ns());
	}
	c->writer_ops = i;
	if (err)
		c->err = err;
	return NULL;
}

/* ---- one repeat of a configuration --------------------------------------- */

int mf_run_repeat(struct mf_result *r, unsigned int k, vs_atomic32_t *stop,
		  mf_tick_fn *tick)
{
	struct vs_workload_config wc;
	struct vs_workload_ops ops;
	struct vs_workload_result res;
	int err;

	if (r->cfg.threads < 1 || r->cfg.threads > MF_MAX_THREADS ||
	    k >= r->cfg.repeats || r->cfg.repeats > MF_MAX_REPEAT ||
	    k != r->repeats_done)
		return -EINVAL;
	memset(&ctx, 0, sizeof(ctx));
	ctx.cfg = &r->cfg;
	ctx.repeat = k;
	ctx.tick = tick;
	ctx.seed = (unsigned int)(r->cfg.seed + k);
	mf_workload_config(&r->cfg, &wc);
	if (!wc.ops)
		return -EINVAL;
	/* A writer places its VMAs below multi-fault's mapping. */
	ctx.ops = wc.ops;
	ops = *wc.ops;
	if (r->cfg.writer != MF_WRITER_NONE)
		ops.setup = setup_with_writer;
	wc.ops = &ops;
	wc.stop = stop;
	wc.hooks = &hooks;
	vs_lockstat_reset();
	err = vs_workload_run(&wc, &res);
	err = err ? err : ctx.err;
	if (!err) {
		r->seconds[k] = (double)res.ns / 1e9;
		r->faults[k] = (double)res.faults;
		r->writer_ops += ctx.writer_ops;
		mf_stats_add(&r->st, &(struct vs_fault_stats){ 0 }, &res.st);
		r->repeats_done = k + 1;
		r->has_lockstat |= !mf_lockstat_collect(r->lockstat);
	}
	mf_summarise(r);
	return err;
}
