/* SPDX-License-Identifier: MIT */
/*
 * vcpu/sched.c - the schedulers that explore (struct
 * vs_vcpu_sched_ops): random, PCT, preemption-bounded depth-first
 * search, and the replay of a recorded schedule.
 *
 * A scheduler is asked only at choice points, where two or more
 * contexts may run; the engine records every answer that is not the
 * default (vs_machine_decisions()), anchored to the context whose
 * event or stop it was and to that context's own count.  That list is
 * the schedule: replaying it gives the same run, event for event.
 *
 * Locking: a scheduler's state belongs to its machine, touched only by
 * the machine's host thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * The PRNG state of run @run (from 1) of a scheduler seeded with @seed
 * and @salt: each run a stream of its own, so that run @run is the same
 * whether the runs before it ran or not (vs_machine_sched_seek()).
 */
static uint64_t run_stream(uint64_t seed, uint64_t salt, unsigned long run)
{
	uint64_t r = run;

	return vs__splitmix64(&r) ^ seed ^ salt;
}

/* ---- random ------------------------------------------------------------ */

struct rnd {
	uint64_t seed, rng;
	unsigned long runs;		/* runs ended */
};

static int random_init(void **state, const struct vs_machine_config *cfg)
{
	struct rnd *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->seed = cfg->seed;
	*state = r;
	return 0;
}

static unsigned int random_choose(void *state, struct vs_machine *m,
				  const struct vs_vcpu_choice *c)
{
	struct rnd *r = state;

	(void)m;
	if (c->index == 0)	/* not the engine's stream */
		r->rng = run_stream(r->seed, 0x5c4ed01e5eedull, r->runs + 1);
	/* Uniform in [0, nr): the high half scaled, no modulo bias worth
	 * the name for nr <= 257. */
	return (unsigned int)(((vs__splitmix64(&r->rng) >> 32) * c->nr) >>
			      32);
}

static int random_end(void *state, struct vs_machine *m)
{
	struct rnd *r = state;

	(void)m;
	r->runs++;
	return 0;
}

static int random_seek(void *state, unsigned long run)
{
	struct rnd *r = state;

	if (!run)
		return -EINVAL;
	r->runs = run - 1;
	return 0;
}

const struct vs_vcpu_sched_ops vs_vcpu_sched_random = {
	.name = "random",
	.init = random_init,
	.choose = random_choose,
	.end = random_end,
	.fini = free,
	.seek = random_seek,
};

/* ---- PCT ---------------------------------------------------------------- */

/*
 * Burckhardt, Kothari, Musuvathi and Nagarakatte, "A Randomized
 * Scheduler with Probabilistic Guarantees of Finding Bugs", ASPLOS 2010.
 * Each context gets a random priority when it first appears in a run;
 * the highest-priority alternative always runs; at d-1 steps drawn
 * uniformly from [1, k] the context about to run drops to priority i
 * (the i-th change point), below every initial one.  A step is a
 * choice point (steps with one alternative cannot matter), and k is
 * 3/2 of the steps of the machine's first run, which has no change
 * points: a later run may take more (a retry, a weak load's older
 * value), and a change point past a run's end changes nothing.
 * Every run draws from a stream of its own, of the seed and the run's
 * number: after the first, any run can be reached without those
 * between (pct_seek()), and a search split among processes.  A context that spins (a vs_cpu_relax() with
 * others able to run) drops below everyone, the latest spinner lowest,
 * or a high-priority spinner would wait forever for a low one.
 */
#define PCT_DEPTH_MAX 16

struct pct {
	uint64_t seed, rng;
	unsigned long runs;		/* runs ended */
	unsigned int depth;		/* d */
	unsigned long k;		/* 3/2 of the first run's steps */
	unsigned long change[PCT_DEPTH_MAX];	/* the d-1 change points */
	int64_t floor;			/* the last spinner's priority */
	uint32_t run;			/* this run's number, for seen[] */
	int64_t prio[VS__VCPU_CONTEXTS];
	uint32_t seen[VS__VCPU_CONTEXTS];	/* the run prio was drawn in */
};

static int pct_init(void **state, const struct vs_machine_config *cfg)
{
	const struct vs_vcpu_pct *arg = cfg->sched_arg;
	struct pct *p;

	if (arg && (arg->depth < 1 || arg->depth > PCT_DEPTH_MAX))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->seed = cfg->seed;
	p->depth = arg ? arg->depth : VS_VCPU_PCT_DEPTH;
	*state = p;
	return 0;
}

/* A new run: change points for it, and every context new again. */
static void pct_begin(struct pct *p)
{
	unsigned int i;

	p->run++;
	p->floor = 0;
	p->rng = run_stream(p->seed, 0x9c7d5eedull, p->runs + 1);
	for (i = 0; i + 1 < p->depth; i++)
		p->change[i] = p->k ? 1 + vs__splitmix64(&p->rng) % p->k : 0;
}

/* Context @id's priority, drawn when it first appears in the run:
 * initial priorities are above 2^62, in random order. */
static int64_t pct_prio(struct pct *p, unsigned int id)
{
	if (p->seen[id] != p->run) {
		p->seen[id] = p->run;
		p->prio[id] = (int64_t)(vs__splitmix64(&p->rng) >> 2 |
					1ull << 62);
	}
	return p->prio[id];
}

static unsigned int pct_top(struct pct *p, const struct vs_vcpu_choice *c)
{
	unsigned int i, best = 0;

	for (i = 1; i < c->nr; i++)
		if (pct_prio(p, c->cand[i]) > pct_prio(p, c->cand[best]))
			best = i;
	return best;
}

static unsigned int pct_choose(void *state, struct vs_machine *m,
			       const struct vs_vcpu_choice *c)
{
	struct pct *p = state;
	unsigned long step = c->index + 1;
	unsigned int i, top;

	(void)m;
	if (c->index == 0)
		pct_begin(p);
	if (c->kind >= VS_VCPU_CHOOSE_READ)	/* memory: at random */
		return (unsigned int)(((vs__splitmix64(&p->rng) >> 32) *
				       c->nr) >> 32);
	if (c->kind == VS_VCPU_CHOOSE_RUN && c->cand[0] != c->ctx) {
		(void)pct_prio(p, c->ctx);	/* it spins: lowest */
		p->prio[c->ctx] = --p->floor - PCT_DEPTH_MAX;
	}
	top = pct_top(p, c);
	for (i = 0; i + 1 < p->depth; i++) {
		if (p->change[i] != step)
			continue;
		if (p->prio[c->cand[top]] > (int64_t)i + 1)	/* only down */
			p->prio[c->cand[top]] = (int64_t)i + 1;
		top = pct_top(p, c);
	}
	return top;
}

/* 3/2 of the first run's steps: the range of every later run's change
 * points. */
static int pct_end(void *state, struct vs_machine *m)
{
	struct pct *p = state;

	if (!p->runs++)
		p->k = m->nchoices + m->nchoices / 2;
	return 0;
}

/* Run @run next; k must be known: the first run ran. */
static int pct_seek(void *state, unsigned long run)
{
	struct pct *p = state;

	if (run < 2 || !p->runs)
		return -EINVAL;
	p->runs = run - 1;
	return 0;
}

const struct vs_vcpu_sched_ops vs_vcpu_sched_pct = {
	.name = "pct",
	.init = pct_init,
	.choose = pct_choose,
	.end = pct_end,
	.fini = free,
	.seek = pct_seek,
};

/* ---- preemption-bounded depth-first search ------------------------------- */

/*
 * Stateless model checking (Godefroid, "Model Checking for Programming
 * Languages using VeriSoft", POPL 1997) with iterative context bounding
 * (Musuvathi and Qadeer, PLDI 2007): each run follows the path of
 * choices on the stack, then takes the defaults; at its end the
 * deepest choice with an untried alternative within the bound moves to
 * that alternative.  Only a preemption counts against the bound: a
 * choice other than the running context where it could go on.
 * Switches where a context stopped or spins are free.  Bounds 0, 1, ...
 * max run in turn, so schedules of fewer preemptions come first (and
 * are run again under each larger bound).
 */
struct dfs_node {
	uint32_t at;		/* the anchor, to check that runs repeat */
	uint16_t ctx;
	uint16_t nr;		/* alternatives */
	uint16_t chosen;	/* the one this path takes */
	uint16_t before;	/* preemptions on the path above it */
	uint8_t preempt;	/* an alternative other than 0 preempts */
};

struct dfs {
	struct dfs_node *stack;
	size_t depth, cap, pos;
	unsigned int bound, max_bound;
	unsigned long runs;
	int exhausted;		/* every path within max_bound ran */
	int error;		/* what ended the search early, or 0 */
	int err;		/* this run's */
};

static int dfs_init(void **state, const struct vs_machine_config *cfg)
{
	const struct vs_vcpu_dfs *arg = cfg->sched_arg;
	struct dfs *d;

	if (arg && arg->max_preemptions > VS_VCPU_DFS_MAX)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->max_bound = arg ? arg->max_preemptions : 2;
	*state = d;
	return 0;
}

static unsigned int dfs_choose(void *state, struct vs_machine *m,
			       const struct vs_vcpu_choice *c)
{
	struct dfs *d = state;
	struct dfs_node *n, *grown;

	(void)m;
	if (d->err || d->exhausted || d->error)
		return 0;	/* over: the defaults, nothing recorded */
	if (d->pos < d->depth) {	/* on the path: take its choice */
		n = &d->stack[d->pos++];
		if (n->ctx == c->ctx && n->at == c->at && n->nr == c->nr)
			return n->chosen;
		d->err = -ESTALE;	/* the run did not repeat */
		return 0;
	}
	if (d->depth == d->cap) {
		grown = vs__grow(d->stack, &d->cap, sizeof(*grown), 256);
		if (!grown) {
			d->err = -ENOMEM;
			return 0;
		}
		d->stack = grown;
	}
	n = &d->stack[d->depth++];
	d->pos++;
	n->at = c->at;
	n->ctx = (uint16_t)c->ctx;
	n->nr = (uint16_t)c->nr;
	n->chosen = 0;
	n->preempt = vs__choice_preempts(c);
	n->before = d->depth == 1 ? 0 : (uint16_t)(n[-1].before +
			(n[-1].preempt && n[-1].chosen));
	return 0;
}

/* The next path: the deepest choice with an untried alternative within
 * the bound takes it; none left, the next bound starts over. */
static void dfs_next(struct dfs *d)
{
	struct dfs_node *n;

	while (d->depth) {
		n = &d->stack[d->depth - 1];
		if (n->chosen + 1 < n->nr && n->before + n->preempt <= d->bound) {
			n->chosen++;
			return;
		}
		d->depth--;
	}
	if (d->bound < d->max_bound)
		d->bound++;
	else
		d->exhausted = 1;
}

static int dfs_end(void *state, struct vs_machine *m)
{
	struct dfs *d = state;
	int err = d->err;

	(void)m;
	if (d->exhausted || d->error)
		return 0;
	d->runs++;
	if (!err && d->pos != d->depth)
		err = -ESTALE;		/* a shorter run than the path */
	d->pos = 0;
	d->err = 0;
	if (err) {
		d->depth = 0;
		d->error = err;
		return err;
	}
	dfs_next(d);
	return 0;
}

static void dfs_fini(void *state)
{
	struct dfs *d = state;

	free(d->stack);
	free(d);
}

const struct vs_vcpu_sched_ops vs_vcpu_sched_dfs = {
	.name = "dfs",
	.init = dfs_init,
	.choose = dfs_choose,
	.end = dfs_end,
	.fini = dfs_fini,
};

int vs_vcpu_dfs_stats(struct vs_machine *m, struct vs_vcpu_dfs_stats *st)
{
	const struct dfs *d;

	if (!m || !st || m->cfg.sched != &vs_vcpu_sched_dfs)
		return -EINVAL;
	d = m->sched;
	st->schedules = d->runs;
	st->bound = d->bound;
	st->exhausted = d->exhausted;
	st->error = d->error;
	return 0;
}

/* ---- replay ------------------------------------------------------------ */

struct replay {
	size_t nr, pos;		/* decisions, the next one to take */
	int stale;		/* one did not fit */
	int lenient;		/* VS_VCPU_REPLAY_LENIENT */
	unsigned char *used;	/* lenient: taken this run, by index */
	struct vs_vcpu_decision dec[];
};

static int replay_init(void **state, const struct vs_machine_config *cfg)
{
	const struct vs_vcpu_replay *arg = cfg->sched_arg;
	struct replay *r;
	size_t i;

	if (!arg || (arg->nr && !arg->dec) ||
	    (arg->flags & ~VS_VCPU_REPLAY_LENIENT) ||
	    arg->nr > (SIZE_MAX - sizeof(*r)) / (sizeof(r->dec[0]) + 1))
		return -EINVAL;
	for (i = 0; i < arg->nr; i++)
		if (arg->dec[i].kind > VS_VCPU_CHOOSE_FLUSH ||
		    arg->dec[i].run >= VS__VCPU_CONTEXTS)
			return -EINVAL;
	/* The decisions, then a byte each for the lenient mode. */
	r = malloc(sizeof(*r) + arg->nr * (sizeof(r->dec[0]) + 1));
	if (!r)
		return -ENOMEM;
	r->nr = arg->nr;
	r->pos = 0;
	r->stale = 0;
	r->lenient = !!(arg->flags & VS_VCPU_REPLAY_LENIENT);
	r->used = (unsigned char *)&r->dec[arg->nr];
	memset(r->used, 0, arg->nr);
	if (arg->nr)
		memcpy(r->dec, arg->dec, arg->nr * sizeof(r->dec[0]));
	*state = r;
	return 0;
}

/* The index in @c->cand of what @d runs, 0 when it does not fit. */
static unsigned int replay_fit(const struct vs_vcpu_decision *d,
			       const struct vs_vcpu_choice *c)
{
	unsigned int i;

	if (d->kind == c->kind)
		for (i = 1; i < c->nr; i++)
			if (c->cand[i] == d->run)
				return i;
	return 0;
}

/* Lenient: the decision anchored here, if any is left, where it fits. */
static unsigned int replay_lenient(struct replay *r,
				   const struct vs_vcpu_choice *c)
{
	size_t i;

	for (i = 0; i < r->nr; i++) {
		if (r->used[i] || r->dec[i].ctx != c->ctx ||
		    r->dec[i].at != c->at)
			continue;
		r->used[i] = 1;
		return replay_fit(&r->dec[i], c);
	}
	return 0;
}

static unsigned int replay_choose(void *state, struct vs_machine *m,
				  const struct vs_vcpu_choice *c)
{
	struct replay *r = state;
	const struct vs_vcpu_decision *d;
	unsigned int i;

	(void)m;
	if (r->lenient)
		return replay_lenient(r, c);
	if (r->pos == r->nr)
		return 0;
	d = &r->dec[r->pos];
	if (d->ctx != c->ctx || d->at != c->at)
		return 0;	/* not this one's: the default */
	r->pos++;
	i = replay_fit(d, c);
	if (!i)
		r->stale = 1;
	return i;
}

/* Every decision taken, each where it fitted; the next run replays
 * the schedule again. */
static int replay_end(void *state, struct vs_machine *m)
{
	struct replay *r = state;
	int err = r->stale || r->pos != r->nr ? -ESTALE : 0;

	(void)m;
	if (r->lenient) {
		memset(r->used, 0, r->nr);
		err = 0;
	}
	r->pos = 0;
	r->stale = 0;
	return err;
}

const struct vs_vcpu_sched_ops vs_vcpu_sched_replay = {
	.name = "replay",
	.init = replay_init,
	.choose = replay_choose,
	.end = replay_end,
	.fini = free,
};
