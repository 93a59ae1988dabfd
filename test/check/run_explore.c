/* SPDX-License-Identifier: MIT */
/*
 * test/check/run_explore.c - vs_stress_run()'s explore mode
 * (vmsim/check/stress.h): one run, the writer program of one seed, as a
 * vs_explore() scenario, so that the scheduler, not the hardware,
 * decides how the writer's operations and the faults interleave.
 *
 * A schedule: setup() on vCPU 0 makes the mm and the arena as a real
 * run does; the writer, the prober and the faulters are the scenario's
 * threads; check() on vCPU 0 makes the exact checks of a quiet mm and
 * destroys it, as a real run's end does.  No watchdog runs: the engine
 * reports a deadlock, and a thread stuck past the bound of events.  A
 * violation fails the schedule where it is found (vs__stress_violation()
 * calls vs_machine_fail()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Pages of an explored run's pool: its few operations need few. */
#define EXPLORE_POOL 256

/* Runs of failed schedules: their threads were abandoned, using them. */
static struct kept_run {
	struct kept_run *next;
	struct stress *r;
} *kept;

/* What every schedule of one exploration shares. */
struct xstress {
	const struct vs_stress_config *cfg;
	const char *kind;
	uint64_t seed;
	struct vs_stress_report *rep;
	struct stress *r;	/* this schedule's run */
};

static int x_setup(void **state)
{
	struct xstress *x = *state;
	struct stress *r;
	int err, i;

	err = vs__stress_new(x->cfg, x->kind, x->seed, &r);
	if (err)
		return err;
	r->explore = 1;
	r->pool_pages = EXPLORE_POOL;
	r->target = x->cfg->faults ? x->cfg->faults : VS_STRESS_EXPLORE_FAULTS;
	r->target_ops = x->cfg->ops ? x->cfg->ops : VS_STRESS_EXPLORE_OPS;
	r->run_ns = INT64_MAX / 4;	/* the bounds above end it */
	err = vs__stress_setup(r);
	if (err) {	/* fini() does not run: nothing else touched it */
		if (r->mm)
			(void)vs_mm_destroy(r->mm);
		vs__stress_free(r);
		return err;
	}
	x->r = r;
	for (i = 0; i < NF; i++)
		vs__stress_faulter_init(r, i);
	r->writer_started = r->prober_started = 1;
	r->nthreads = NF;
	vs_fault_stats_get(&r->st0);
	r->t0 = now_ns();
	r->deadline = r->t0 + r->run_ns;
	/* Last: the same allocations fail in every replay of a schedule. */
	vs__stress_fail_on(r);
	return 0;
}

/* Thread 0: the writer; 1: the prober; 2..: the faulters. */
static void x_thread(void *state, unsigned int i)
{
	struct stress *r = ((struct xstress *)state)->r;

	if (i == 0)
		(void)vs__stress_writer_main(r);
	else if (i == 1)
		(void)vs__stress_prober_main(r);
	else
		(void)vs__stress_faulter_main(&r->f[i - 2]);
}

static void x_check(void *state)
{
	struct stress *r = ((struct xstress *)state)->r;

	r->t1 = now_ns();
	vs_fault_stats_get(&r->st1);
	vs__stress_fail_off(r);
	vs__stress_finish(r);	/* destroys the mm: its RCU frees run */
}

/* On the host: count an explored schedule (not shrinking's replays);
 * free the run, or keep it if its threads were abandoned in it. */
static void x_fini(void *state)
{
	struct xstress *x = state;
	struct stress *r = x->r;
	struct kept_run *k;

	x->r = NULL;
	if (!r)
		return;
	if (!r->t1) {	/* it failed before check() */
		r->t1 = r->t0;
		vs_fault_stats_get(&r->st1);
		vs__stress_fail_off(r);
	}
	if (vs_explore_schedule)
		vs__stress_add_report(r, x->rep);
	if (!r->mm && !r->child) {
		vs__stress_free(r);
		return;
	}
	k = malloc(sizeof(*k));
	if (k) {	/* else lost to LeakSanitizer, and still unused */
		*k = (struct kept_run){ kept, r };
		kept = k;
	}
}

/* "stress-KIND-STRATEGY-SEED", with what a scenario name may not hold
 * made '_', cut to fit. */
static void scenario_name(char *buf, size_t len, const char *kind,
			  int strategy, uint64_t seed)
{
	char *c;

	snprintf(buf, len, "stress-%.24s-%.12s-%llx", kind,
		 vs_fault_strategy_name(strategy), (unsigned long long)seed);
	for (c = buf; *c; c++)
		if (!(*c == '-' || *c == '_' || (*c >= '0' && *c <= '9') ||
		      (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
			*c = '_';
}

/* The failure's own words in report @text: after "cycles: " on the
 * engine's line, or its first line. */
static void first_line(char *buf, size_t len, const char *text)
{
	const char *s = strstr(text, "cycles: ");

	s = s ? s + strlen("cycles: ") : text;
	snprintf(buf, len, "%.*s", (int)strcspn(s, "\n"), s);
}

/*
 * The options of @cfg for one run, into @o (stress.h, Explore mode):
 * VS_STRESS_EXPLORE_EVENTS for 0 events; without @cfg->runs, the
 * schedules shared by the VS_STRESS_EXPLORE_RUNS runs; PCT without a
 * depth of the caller's aims at 2 @ops + 4: a schedule has a window
 * where a fault may be stopped at each operation's start and end, and
 * PCT's default of two change points a schedule rarely lands one in a
 * window where an operation comes.
 */
static void explore_options(const struct vs_stress_config *cfg,
			    struct vs_explore_options *o,
			    struct vs_vcpu_pct *pct)
{
	unsigned long ops = cfg->ops ? cfg->ops : VS_STRESS_EXPLORE_OPS;

	*o = *cfg->explore;
	if (!o->max_events)
		o->max_events = VS_STRESS_EXPLORE_EVENTS;
	if (!cfg->runs) {
		o->max_schedules = (o->max_schedules ? o->max_schedules :
				    VS_EXPLORE_SCHEDULES) /
				   VS_STRESS_EXPLORE_RUNS;
		if (!o->max_schedules)
			o->max_schedules = 1;
	}
	if ((o->sched && o->sched != &vs_vcpu_sched_pct) || o->sched_arg)
		return;
	pct->depth = ops < (VS_STRESS_EXPLORE_DEPTH_MAX - 4) / 2 ?
		     2 * (unsigned int)ops + 4 : VS_STRESS_EXPLORE_DEPTH_MAX;
	o->sched_arg = pct;
}

int vs__stress_explore(const struct vs_stress_config *cfg, const char *kind,
		       uint64_t seed, struct vs_stress_report *rep)
{
	struct xstress x = { cfg, kind, seed, rep, NULL };
	struct vs_explore_scenario sc = {
		.threads = 2 + NF, .setup = x_setup, .thread = x_thread,
		.check = x_check, .fini = x_fini, .arg = &x,
	};
	struct vs_explore_report *xr = cfg->explore_report;
	struct vs_explore_options o;
	struct vs_vcpu_pct pct;
	char name[VS_EXPLORE_NAME_MAX + 1];
	unsigned long runs = rep->runs;
	int err;

	explore_options(cfg, &o, &pct);
	if (!xr) {
		xr = malloc(sizeof(*xr));
		if (!xr)
			return -ENOMEM;
	}
	scenario_name(name, sizeof(name), kind, cfg->strategy, seed);
	sc.name = name;
	err = vs_explore(&sc, &o, xr);
	rep->runs = runs + 1;
	rep->seed = seed;
	rep->schedules += xr->schedules;
	if (err == -ECANCELED || err == -EDEADLK) {
		rep->violations = 1;
		first_line(rep->first, sizeof(rep->first), xr->text);
		err = 0;
	}
	if (xr != cfg->explore_report)
		free(xr);
	return err;
}
