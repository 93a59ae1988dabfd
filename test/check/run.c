/* SPDX-License-Identifier: MIT */
/*
 * test/check/run.c - a stress run (vmsim/check/stress.h): the mm and the
 * arena, the threads (writer, prober, faulters) started and watched by
 * the caller, the exact checks once they stopped, the report; and the
 * repetition of a configuration with fresh seeds (@runs).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/rcu.h>
#include <vmsim/thread.h>

#include "internal.h"

/*
 * The seed of a kind and strategy when the configuration has none: for
 * a kind vs_lock_kind_name() lists, the one the stress suite always
 * used (its index * 8 + strategy + 1, times 2^64 / phi); for another,
 * a hash of its name in place of the index.
 */
static uint64_t default_seed(const char *kind, int strategy)
{
	uint64_t idx = UINT64_C(14695981039346656037), seed;
	const char *name, *c;
	int i;

	for (i = 0; (name = vs_lock_kind_name(i)); i++)
		if (strcmp(name, kind) == 0)
			break;
	if (name) {
		idx = (uint64_t)i;
	} else {
		for (c = kind; *c; c++)	/* FNV-1a */
			idx = (idx ^ (unsigned char)*c) *
			      UINT64_C(1099511628211);
	}
	seed = UINT64_C(0x9e3779b97f4a7c15) *
	       (idx * 8 + (uint64_t)strategy + 1);
	return seed ? seed : 1;
}


void vs__stress_free(struct stress *r)
{
	free(r->pcnt);
	free(r->ccnt);
	free(r);
}

/*
 * Allocate a run of @cfg with @seed (@cfg checked by the caller).
 * Return: 0, or -ENOMEM.
 */
int vs__stress_new(const struct vs_stress_config *cfg, const char *kind,
		   uint64_t seed, struct stress **rp)
{
	struct stress *r;
	int i;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->pcnt = calloc(POOL + 1, sizeof(*r->pcnt));
	r->ccnt = calloc(POOL + 1, sizeof(*r->ccnt));
	if (!r->pcnt || !r->ccnt) {
		vs__stress_free(r);
		return -ENOMEM;
	}
	r->kind = kind;
	r->strategy = cfg->strategy;
	r->seed = seed;
	r->rng = r->seed | 1;
	r->target = cfg->faults ? cfg->faults : VS_STRESS_FAULTS;
	r->target_ops = cfg->ops ? cfg->ops : VS_STRESS_OPS;
	r->run_ns = (int64_t)(cfg->max_ms ? cfg->max_ms :
			      VS_STRESS_MAX_MS) * NS_PER_MS;
	r->watchdog_ns = (int64_t)(cfg->watchdog_ms ? cfg->watchdog_ms :
				   VS_STRESS_WATCHDOG_MS) * NS_PER_MS;
	r->out = cfg->log;
	r->fail = cfg->fail;
	r->pool_pages = POOL;
	for (i = 0; i < LOGN; i++)
		vs_atomic_init(&r->log[i].idx, UINT64_MAX);
	vs__stress_watch_init(&r->writer_w, "writer");
	vs__stress_watch_init(&r->prober_w, "prober");
	*rp = r;
	return 0;
}

/*
 * The mm and the arena: private anonymous then shared anonymous pages.
 * Return: 0 (a wrong result is a violation); an error of
 * vs_mm_create(), vs_mm_set_fault_strategy() or vs_mmap().
 */
int vs__stress_setup(struct stress *r)
{
	struct vs_mm_options o = { .lock_kind = r->kind,
				   .pool_pages = r->pool_pages,
				   .start = MM_START, .end = MM_END,
				   .ptl_per_mm = (int)(r->seed & 1) };
	long a, want = (long)ARENA;
	int err, p;

	err = vs_mm_create(&r->mm, &o);
	if (err) {
		r->mm = NULL;
		return err;
	}
	err = vs_mm_set_fault_strategy(r->mm, r->strategy);
	if (err)
		return err;
	a = vs_mmap(r->mm, ARENA, NP / 2 * PG, RW, VS_MAP_PRIVATE |
		    VS_MAP_ANONYMOUS | VS_MAP_FIXED, NULL, 0);
	if (a == want) {
		want = (long)pg_addr(NP / 2);
		a = vs_mmap(r->mm, pg_addr(NP / 2), NP / 2 * PG, RW,
			    VS_MAP_SHARED | VS_MAP_ANONYMOUS | VS_MAP_FIXED,
			    NULL, 0);
	}
	if (a < 0)
		return (int)a;
	if (a != want)
		vs__stress_bug(r, "setup: mmap at %#lx returned %#lx", want, a);
	else if (vs__stress_read_state(r, r->mm, r->cur) == 0)
		for (p = 0; p < NP; p++)
			vs_atomic_init(&r->shadow[p], r->cur[p]);
	return 0;
}

/*
 * Allocation failures (stress.h): on while the threads run, off before
 * the checks of a quiet mm; left on after a stall, whose threads left
 * blocked may still allocate.  Context: no thread of the run allocates.
 */
void vs__stress_fail_on(struct stress *r)
{
	if (r->fail)
		(void)vs_fail_set(r->fail); /* vs_stress_run checked it */
}

void vs__stress_fail_off(struct stress *r)
{
	if (!r->fail)
		return;
	r->injected = vs_fail_injected();
	if (!r->stuck)
		(void)vs_fail_set(NULL);
}

/* Make faulter @i of @r ready to run. */
void vs__stress_faulter_init(struct stress *r, int i)
{
	static const char *const names[NF] = { "faulter 0", "faulter 1" };
	struct faulter *f = &r->f[i];

	f->r = r;
	f->id = i;
	f->rng = (r->seed ^ (UINT64_C(0x632be59bd9b4e019) *
			     (uint64_t)(i + 1))) | 1;
	vs__stress_watch_init(&f->w, names[i]);
	vs__stress_set_zero(f, 0, NP);
}

/* Start the faulters.  Return: 0, or -errno of starting a thread. */
static int start_faulters(struct stress *r)
{
	struct faulter *f;
	int i, err;

	for (i = 0; i < NF; i++) {
		f = &r->f[i];
		vs__stress_faulter_init(r, i);
		err = vs__stress_thread_start(&f->tid,
					      vs__stress_faulter_main, f);
		if (err)
			return err;
		r->nthreads++;
	}
	return 0;
}

/*
 * One round of the writer: an operation, the checks, now and then a
 * fork; every 16 rounds, whether the run is done.  Return: 1 when done.
 */
static int writer_step(struct stress *r, unsigned long it)
{
	struct vs_fault_stats st;

	if (r->explore) {	/* the faulters count their own accesses */
		if (r->nops >= r->target_ops)
			return 1;
	} else if (!(it & 15)) {
		vs_fault_stats_get(&st);
		if ((st.faults - r->st0.faults >= r->target &&
		     r->nops >= r->target_ops) || now_ns() > r->deadline)
			return 1;
	}
	if (!(it & 63))
		vs_write_once(&r->hot, (uint32_t)below(&r->rng, NP - HOT + 1));
	vs__stress_writer_op(r);
	vs__stress_w_child(r, below(&r->rng, 1000) < 3);
	vs__stress_check_mm(r, 0);
	vs_rcu_quiescent_state(); /* urcu-qsbr */
	return 0;
}

/*
 * The writer thread: rounds until the targets, the deadline or a bug,
 * then it tells the others to stop.
 */
void *vs__stress_writer_main(void *arg)
{
	struct stress *r = arg;
	unsigned long it;

	vs_thread_attach();
	vs__stress_watch_attach(&r->writer_w);
	for (it = 0; !vs__stress_failed(r); it++) {
		vs_write_once(&r->writer_w.progress, it);
		if (writer_step(r, it))
			break;
	}
	vs__stress_doing(&r->writer_w, DO_NOTHING, 0, 0);
	vs__stress_set_word(&r->stop, 1);
	if (r->explore)	/* the prober waits for it untimed */
		vs__stress_set_word(&r->probe, PROBE_QUIT);
	vs__stress_watch_done(&r->writer_w);
	return NULL;
}

/* Start the threads.  Return: 0, or -errno of starting a thread. */
static int start_threads(struct stress *r)
{
	int err;

	err = vs__stress_thread_start(&r->writer_tid,
				      vs__stress_writer_main, r);
	if (err)
		return err;
	r->writer_started = 1;
	err = vs__stress_thread_start(&r->prober_tid, vs__stress_prober_main,
				      r);
	if (err)
		return err;
	r->prober_started = 1;
	return start_faulters(r);
}

/* Join @tid if its thread returned, else leave it; 1 when left. */
static int join_or_leave(pthread_t tid, struct watch *w)
{
	if (!vs_load_acquire(&w->done)) {
		if (!VS_VCPU)	/* a stuck vCPU is the engine's to report */
			pthread_detach(tid);
		return 1;
	}
	vs__stress_thread_join(tid);
	return 0;
}

/*
 * After a stall: give the threads that still move the watchdog's bound
 * to see the stop, join them, leave the others (blocked in a lock they
 * will never get; r->stuck counts them).
 */
static void reap(struct stress *r)
{
	int64_t end = now_ns() + r->watchdog_ns;
	int i, live;

	do {
		live = r->writer_started &&
		       !vs_load_acquire(&r->writer_w.done);
		live |= r->prober_started &&
			!vs_load_acquire(&r->prober_w.done);
		for (i = 0; i < r->nthreads; i++)
			live |= !vs_load_acquire(&r->f[i].w.done);
		if (live)
			vs__stress_nap_us(r, 1000);
	} while (live && now_ns() < end);
	if (r->writer_started)
		r->stuck += join_or_leave(r->writer_tid, &r->writer_w);
	if (r->prober_started)
		r->stuck += join_or_leave(r->prober_tid, &r->prober_w);
	for (i = 0; i < r->nthreads; i++)
		r->stuck += join_or_leave(r->f[i].tid, &r->f[i].w);
}

/*
 * The threads, watched until they return or stall.  Return: 0;
 * -ETIMEDOUT after a stall; -errno when a thread could not be started
 * (those that were are stopped).
 */
static int run_threads(struct stress *r)
{
	int err, stall;

	vs_fault_stats_get(&r->st0);
	r->t0 = now_ns();
	r->deadline = r->t0 + r->run_ns;
	vs__stress_hooks_get();
	vs__stress_fail_on(r);
	err = start_threads(r);
	if (err)
		vs__stress_set_word(&r->stop, 1);
	stall = vs__stress_watchdog(r);
	reap(r);
	vs__stress_fail_off(r);
	vs__stress_hooks_put();
	r->t1 = now_ns();
	vs_fault_stats_get(&r->st1);
	return err ? err : stall;
}

/*
 * After the threads: the exact checks while the mm is quiet and sane
 * (none after a bug: a broken mm may not be), then the mms go.  A
 * failed vs_mm_destroy() leaves its mm behind, a violation only when
 * nothing was wrong before.
 */
void vs__stress_finish(struct stress *r)
{
	int err;

	if (r->child && !vs__stress_failed(r))
		vs__stress_child_destroy(r);
	if (!vs__stress_failed(r))
		vs__stress_check_mm(r, 1);
	if (!vs__stress_failed(r))
		vs__stress_final_data(r);
	if (!vs__stress_failed(r))
		vs__stress_check_teardown(r);
	if (r->child)
		(void)vs_mm_destroy(r->child);
	r->child = NULL;
	if (!r->mm)
		return;
	err = vs_mm_destroy(r->mm);
	if (err && !vs__stress_failed(r))
		vs__stress_bug(r, "vs_mm_destroy returned %d", err);
	r->mm = NULL;
}

static void stats_add(struct vs_fault_stats *sum,
		      const struct vs_fault_stats *d)
{
	int i;

	sum->faults += d->faults;
	sum->locked += d->locked;
	sum->spf_success += d->spf_success;
	for (i = 0; i < VS_SPF_ABORT_NR; i++)
		sum->spf_abort[i] += d->spf_abort[i];
	sum->vma_lock_success += d->vma_lock_success;
	sum->vma_lock_abort += d->vma_lock_abort;
	sum->vma_lock_retry += d->vma_lock_retry;
	sum->vma_lock_miss += d->vma_lock_miss;
	sum->sigsegv += d->sigsegv;
	sum->sigbus += d->sigbus;
	sum->oom += d->oom;
}

/*
 * Add the results of one run to @rep.  The counts of a thread left
 * blocked (a stall) are left out: it never said it was done, so nothing
 * orders its last writes before these reads.
 */
void vs__stress_add_report(struct stress *r, struct vs_stress_report *rep)
{
	struct vs_fault_stats d;
	int i;

	vs_fault_stats_sub(&r->st1, &r->st0, &d);
	stats_add(&rep->stats, &d);
	rep->seed = r->seed;
	rep->runs++;
	rep->faults += d.faults;
	/* Acquire: pairs with vs__stress_watch_done()'s release. */
	if (!r->writer_started || vs_load_acquire(&r->writer_w.done)) {
		rep->ops += r->nops;
		rep->forks += r->forks;
		rep->traps += r->traps;
		rep->move_traps += r->move_traps;
		rep->downgrades += r->downgrades;
		rep->checks += r->checks;
		rep->op_enomem += r->op_enomem;
		rep->oom += r->oom;
	}
	for (i = 0; i < r->nthreads && i < NF; i++) {
		if (!vs_load_acquire(&r->f[i].w.done))
			continue;
		rep->quiet += r->f[i].quiet;
		rep->data_checks += r->f[i].data_checks;
		rep->race_checks += r->f[i].race_checks;
		rep->oom += r->f[i].oom;
	}
	rep->injected += r->injected;
	rep->elapsed_ns += r->t1 - r->t0;
	rep->violations += (unsigned long)vs_read_once(&r->violations);
	rep->stuck += (unsigned long)r->stuck;
	if (vs__stress_failed(r))
		memcpy(rep->first, r->msg, sizeof(rep->first) - 1);
	rep->first[sizeof(rep->first) - 1] = '\0';
}

/*
 * One run of @cfg with @seed, added to @rep.  Return: as vs_stress_run()
 * (-ETIMEDOUT: a stall).
 */
static int run_once(const struct vs_stress_config *cfg, const char *kind,
		    uint64_t seed, struct vs_stress_report *rep)
{
	struct stress *r;
	int err;

	err = vs__stress_new(cfg, kind, seed, &r);
	if (err)
		return err;
	err = vs__stress_setup(r);
	if (!err && !vs__stress_failed(r))
		err = run_threads(r);
	if (r->stuck) {
		/* Blocked threads still use the run: leave it to them. */
		vs__stress_add_report(r, rep);
		return err;
	}
	if (err && err != -ETIMEDOUT) {
		if (r->mm)
			(void)vs_mm_destroy(r->mm);
		vs__stress_free(r);
		return err;
	}
	vs__stress_doing(&r->writer_w, DO_NOTHING, 0, 0);
	vs__stress_finish(r);
	vs__stress_add_report(r, rep);
	if (r->out)
		fprintf(r->out, "vs_stress %s/%s seed %#" PRIx64 ": run %lu: "
			"%lu faults, %lu operations, %lu violations\n",
			r->kind, vs_fault_strategy_name(r->strategy), r->seed,
			rep->runs, (unsigned long)(r->st1.faults -
						   r->st0.faults),
			r->nops, (unsigned long)vs_read_once(&r->violations));
	vs__stress_free(r);
	return err;
}

/* The seed of run @i (0, 1, ...) after @seed: splitmix64's output. */
static uint64_t next_seed(uint64_t seed, unsigned int i)
{
	uint64_t z = seed + (uint64_t)i * UINT64_C(0x9e3779b97f4a7c15);

	if (!i)
		return seed;
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	return z ? z : 1;
}

/* vs_stress_run - see vmsim/check/stress.h. */
int vs_stress_run(const struct vs_stress_config *cfg,
		  struct vs_stress_report *rep)
{
	const char *kind, *bad;
	unsigned int i, runs;
	uint64_t seed;
	int err = 0;

	if (!cfg || !rep)
		return -EINVAL;
	memset(rep, 0, sizeof(*rep));
	kind = cfg->lock_kind ? cfg->lock_kind : "rwsem";
	bad = !vs_lock_kind_ops(kind) ? "unknown lock kind" :
	      !vs_fault_strategy_name(cfg->strategy) ? "unknown strategy" :
	      vs_fail_check(cfg->fail) ? "fail" : NULL;
	if (bad) {
		if (cfg->explore_report)	/* say which, as vs_explore() */
			snprintf(cfg->explore_report->text,
				 sizeof(cfg->explore_report->text),
				 "stress: bad argument: %s\n", bad);
		return -EINVAL;
	}
	seed = cfg->seed ? cfg->seed : default_seed(kind, cfg->strategy);
	runs = cfg->runs ? cfg->runs : cfg->explore ? VS_STRESS_EXPLORE_RUNS : 1;
	(void)vs_thread_attach();
	for (i = 0; i < runs && !err && !rep->violations; i++) {
		rep->seed = next_seed(seed, i);
		err = cfg->explore ? vs__stress_explore(cfg, kind, rep->seed,
							rep)
				   : run_once(cfg, kind, rep->seed, rep);
	}
	if (err && err != -ETIMEDOUT) {
		seed = rep->seed;
		memset(rep, 0, sizeof(*rep));
		rep->seed = seed;
	}
	return err;
}
