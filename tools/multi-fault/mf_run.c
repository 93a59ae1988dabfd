/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf_run.c - one multi-fault configuration on one backing.
 *
 * The loop is Kamezawa's (tools/multi-fault/mf.h): N pinned threads, three
 * barriers per pass, thread 0 zapping every slice.  What a "write" and a "zap"
 * are depends on the backing:
 *
 *   sim     vs_access(mm, addr, 1, write) and vs_madvise() on a vs_mm
 *   uffd    a real store and vs_madvise() on a vs_uffd region
 *   native  a real store and madvise(2) on real memory, no model
 *
 * Page faults are counted the way each backing can: the model's fault
 * counter (vs_fault_stats) for sim and uffd, the process's minor faults
 * (getrusage, what perf's page-faults counts) for native.
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
#define TICK_NS 100000000ULL

/* Pages a thread touched, a cache line each. */
struct mf_count {
	VS_CACHELINE_ALIGNED vs_atomic_long_t pages;
};

struct mf_ctx {
	const struct mf_config *cfg;
	vs_atomic32_t *stop;
	struct vs_mm *mm;		/* sim, uffd */
	struct vs_uffd *u;		/* uffd */
	char *area;			/* N slots of MF_SLOT_BYTES */
	char *wvma;			/* the writer's mprotect target */
	pthread_barrier_t pass, start;
	uint64_t deadline_ns;
	uint64_t end_ns;		/* when thread 0 set @leave */
	vs_atomic32_t leave;		/* set by thread 0 for the pass */
	vs_atomic32_t writer_stop;
	unsigned long writer_ops;
	unsigned int seed;		/* the writer's rand_r() state */
	int err;			/* first error of a worker */
	struct mf_count count[MF_MAX_THREADS];
};

struct mf_worker {
	struct mf_ctx *c;
	unsigned int id;
	pthread_t tid;
};

/* ---- the backings ------------------------------------------------------ */

static int touch(struct mf_ctx *c, char *p)
{
	int err = 0;

	if (c->cfg->backing != MF_SIM) {
		*(volatile char *)p = 0;
		return 0;
	}
	mf_trace_fault_begin();
	err = vs_access(c->mm, (unsigned long)p, 1, 1);
	mf_trace_fault_end();
	return err;
}

static int zap(struct mf_ctx *c, char *p, size_t len)
{
	if (c->cfg->backing == MF_NATIVE)
		return madvise(p, len, MADV_DONTNEED) ? -errno : 0;
	return vs_madvise(c->mm, (unsigned long)p, len, VS_MADV_DONTNEED);
}

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
	a = vs_mmap(c->mm, (unsigned long)hint, len,
		    VS_PROT_READ | VS_PROT_WRITE,
		    VS_MAP_PRIVATE | VS_MAP_ANONYMOUS, NULL, 0);
	*err = a < 0 ? (int)a : 0;
	return a < 0 ? NULL : (char *)a;
}

static int unmap(struct mf_ctx *c, char *p, size_t len)
{
	if (c->cfg->backing == MF_NATIVE)
		return munmap(p, len) ? -errno : 0;
	return vs_munmap(c->mm, (unsigned long)p, len);
}

/*
 * Where the writer asks for its VMA: below the faulting area, never next
 * to it or to another one (a gap of one WRITER_BYTES each way), so that
 * it is a VMA of its own and not a neighbour that merges with the
 * faulting one.  @slot 0..63 spreads the mmap writer's VMAs over 8 MiB
 * (--seed chooses); below the area there is room: the model maps top
 * down, and the uffd region has 16 MiB more than the area.
 */
static char *writer_hint(struct mf_ctx *c, unsigned long slot)
{
	return c->area - 2 * WRITER_BYTES * (slot + 1);
}

static int setup(struct mf_ctx *c)
{
	const struct mf_config *cfg = c->cfg;
	size_t len = MF_SLOT_BYTES * cfg->threads;
	struct vs_mm_options mo = { .lock_kind = cfg->lock };
	struct vs_uffd_options uo = { 0 };
	int err = 0;

	/* Every slice's pages twice over (a fork writer's child holds the
	 * old ones), and room for the writer. */
	mo.pool_pages = cfg->threads * (MF_FAULT_BYTES / PAGE) * 2 + 4096;
	if (cfg->backing == MF_SIM) {
		err = vs_mm_create(&c->mm, &mo);
		if (!err)
			err = vs_mm_set_fault_strategy(c->mm, cfg->strategy);
	} else if (cfg->backing == MF_UFFD) {
		uo.size = len + (16UL << 20);
		uo.mode = cfg->uffd_mode;
		uo.nr_threads = cfg->uffd_mode == VS_UFFD_THREADS ? 1 : 0;
		uo.strategy = cfg->strategy;
		uo.mm = mo;
		err = vs_uffd_create(&c->u, &uo);
		c->mm = err ? NULL : vs_uffd_mm(c->u);
	}
	if (!err)
		c->area = map_anon(c, NULL, len, &err);
	if (!err && cfg->writer == MF_WRITER_MPROTECT)
		c->wvma = map_anon(c, writer_hint(c, 0), WRITER_BYTES, &err);
	return err;
}

static void teardown(struct mf_ctx *c)
{
	if (c->area)
		(void)unmap(c, c->area, MF_SLOT_BYTES * c->cfg->threads);
	if (c->wvma)
		(void)unmap(c, c->wvma, WRITER_BYTES);
	if (c->u)
		(void)vs_uffd_destroy(c->u);
	else if (c->mm)
		(void)vs_mm_destroy(c->mm);
}

/*
 * Setup and teardown map and unmap under the mmap_lock's write side:
 * in a trace they are named slices, as every other holder is.  The
 * setup's name says which configuration it starts ("setup: mmap, spf
 * rwsem 2 threads"), so that the trace shows the rounds' order.
 */
static int traced_setup(struct mf_ctx *c)
{
	const struct mf_config *cfg = c->cfg;
	uint64_t t0 = mf_now_ns();
	int err = setup(c);
	char name[96];

	snprintf(name, sizeof(name), "setup: mmap, %s %s %u threads",
		 cfg->backing == MF_NATIVE ? "native" :
					     vs_fault_strategy_name(cfg->strategy),
		 cfg->lock ? cfg->lock : "-", cfg->threads);
	mf_trace_span(name, t0, mf_now_ns());
	return err;
}

static void traced_teardown(struct mf_ctx *c)
{
	uint64_t t0 = mf_now_ns();

	teardown(c);
	mf_trace_span("teardown: munmap", t0, mf_now_ns());
}

/* ---- the faulting threads ----------------------------------------------- */

static void pin(unsigned int id)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(id % (unsigned int)(ncpu > 0 ? ncpu : 1), &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/*
 * Thread 0's part of a pass: zap every slice, decide whether to leave.
 * The zap holds the mmap_lock's read side once per slice; in a trace it
 * is one slice, "MADV_DONTNEED zap", around those holds.
 */
static int zap_all(struct mf_ctx *c)
{
	uint64_t t0 = mf_now_ns();
	unsigned int i;
	int err = 0;

	for (i = 0; i < c->cfg->threads && !err; i++)
		err = zap(c, c->area + i * MF_SLOT_BYTES, MF_FAULT_BYTES);
	c->end_ns = mf_now_ns();
	mf_trace_span("MADV_DONTNEED zap", t0, c->end_ns);
	/* Release: the watcher that sees @leave also sees end_ns. */
	if (err || c->end_ns >= c->deadline_ns || vs_read_once(c->stop))
		vs_store_release(&c->leave, 1);
	return err;
}

static void *faulter_main(void *arg)
{
	struct mf_worker *w = arg;
	struct mf_ctx *c = w->c;
	char *p, *start = c->area + w->id * MF_SLOT_BYTES;
	char name[32];
	int err = vs_thread_attach();

	pin(w->id);
	snprintf(name, sizeof(name), "faulter %u", w->id);
	mf_trace_thread(name);
	pthread_barrier_wait(&c->start);
	while (!err) {
		pthread_barrier_wait(&c->pass);
		for (p = start; p < start + MF_FAULT_BYTES && !err; p += PAGE)
			err = touch(c, p);
		vs_fetch_add_relaxed(&c->count[w->id].pages,
				     (long)(MF_FAULT_BYTES / PAGE));
		pthread_barrier_wait(&c->pass);
		if (w->id == 0 && !err)
			err = zap_all(c);
		if (err) {
			c->end_ns = mf_now_ns();
			vs_store_release(&c->leave, 1);
		}
		pthread_barrier_wait(&c->pass);
		if (vs_read_once(&c->leave))
			break;
	}
	if (err)
		c->err = err;
	return NULL;
}

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
		return vs_mprotect(c->mm, (unsigned long)c->wvma,
				   WRITER_BYTES, prot);
	default:
		if (c->cfg->backing != MF_NATIVE) {
			err = vs_fork(c->mm, &child);
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
	pthread_barrier_wait(&c->start);
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

/* ---- one repeat ---------------------------------------------------------- */

static double faults_now(const struct mf_ctx *c, struct vs_fault_stats *st)
{
	struct rusage ru;

	if (c->cfg->backing != MF_NATIVE) {
		(void)vs_fault_stats_get(st);
		return (double)st->faults;
	}
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_minflt;
}

static double touched(const struct mf_ctx *c)
{
	unsigned int i;
	long n = 0;

	for (i = 0; i < c->cfg->threads; i++)
		n += vs_read_once(&c->count[i].pages);
	return (double)n;
}

/* Wait for the workers, ticking; their loop ends by the deadline. */
static void watch(struct mf_ctx *c, unsigned int repeat, uint64_t t0,
		  mf_tick_fn *tick)
{
	struct timespec ts = { 0, 10000000 };	/* 10 ms */
	double last = 0, now_pages;
	uint64_t now, prev = t0;

	while (!vs_load_acquire(&c->leave)) {
		nanosleep(&ts, NULL);
		if (mf_now_ns() - prev < TICK_NS)
			continue;
		now = mf_now_ns();
		now_pages = touched(c);
		mf_trace_counter("faults/s", now,
				 (now_pages - last) * 1e9 / (double)(now - prev));
		last = now_pages;
		prev = now;
		if (tick)
			tick(c->cfg, repeat, (double)(now - t0) / 1e9,
			     now_pages);
	}
}

static int start_threads(struct mf_ctx *c, struct mf_worker *w,
			 pthread_t *writer)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i < c->cfg->threads && !err; i++) {
		w[i].c = c;
		w[i].id = i;
		err = -pthread_create(&w[i].tid, NULL, faulter_main, &w[i]);
	}
	if (!err && c->cfg->writer != MF_WRITER_NONE)
		err = -pthread_create(writer, NULL, writer_main, c);
	/* Threads already started cannot be called back: a failure here
	 * (EAGAIN for threads) is fatal, as the original's is. */
	if (err) {
		fprintf(stderr, "multi-fault: pthread_create: %s\n",
			vs_strerror(err));
		exit(1);
	}
	return 0;
}

static int repeat_once(struct mf_result *r, struct mf_ctx *c,
		       unsigned int k, mf_tick_fn *tick)
{
	struct mf_worker w[MF_MAX_THREADS];
	struct vs_fault_stats st0, st1;
	unsigned int i, parties = c->cfg->threads + 1;
	pthread_t writer;
	double f0;
	uint64_t t0;

	parties += c->cfg->writer != MF_WRITER_NONE;
	pthread_barrier_init(&c->pass, NULL, c->cfg->threads);
	pthread_barrier_init(&c->start, NULL, parties);
	(void)start_threads(c, w, &writer);
	f0 = faults_now(c, &st0);
	t0 = mf_now_ns();
	c->deadline_ns = t0 + (uint64_t)c->cfg->duration_ms * 1000000ULL;
	pthread_barrier_wait(&c->start);
	watch(c, k, t0, tick);
	for (i = 0; i < c->cfg->threads; i++)
		pthread_join(w[i].tid, NULL);
	r->seconds[k] = (double)(c->end_ns - t0) / 1e9;
	r->faults[k] = faults_now(c, &st1) - f0;
	vs_store_release(&c->writer_stop, 1);
	if (c->cfg->writer != MF_WRITER_NONE)
		pthread_join(writer, NULL);
	r->writer_ops += c->writer_ops;
	if (c->cfg->backing != MF_NATIVE)
		mf_stats_add(&r->st, &st0, &st1);
	pthread_barrier_destroy(&c->pass);
	pthread_barrier_destroy(&c->start);
	return c->err;
}

/* ---- one repeat of a configuration --------------------------------------- */

int mf_run_repeat(struct mf_result *r, unsigned int k, vs_atomic32_t *stop,
		  mf_tick_fn *tick)
{
	static struct mf_ctx c;	/* large: the per-thread counters */
	int err;

	if (r->cfg.threads < 1 || r->cfg.threads > MF_MAX_THREADS ||
	    k >= r->cfg.repeats || r->cfg.repeats > MF_MAX_REPEAT ||
	    k != r->repeats_done)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.cfg = &r->cfg;
	c.stop = stop;
	c.seed = (unsigned int)(r->cfg.seed + k);
	vs_lockstat_reset();
	err = traced_setup(&c);
	if (!err) {
		err = repeat_once(r, &c, k, tick);
		if (!err) {
			r->repeats_done = k + 1;
			r->has_lockstat |= !mf_lockstat_collect(r->lockstat);
		}
	}
	traced_teardown(&c);
	mf_summarise(r);
	return err;
}
