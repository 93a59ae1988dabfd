/* SPDX-License-Identifier: MIT */
/*
 * test/check/explore.c - vs_explore(): a scenario, schedule after
 * schedule, on virtual CPUs; the first failing schedule shrunk, told by
 * name, and made replayable (vmsim/check/explore.h).
 *
 * Every schedule runs on a machine just reset with the engine's seed 0,
 * so that what differs from one to the next is only the scheduler's
 * choices: a schedule found by one scheduler is replayed by
 * vs_vcpu_sched_replay on a new machine, event for event.
 *
 * Shrinking is delta debugging over the schedule's decisions, then a
 * search.  First the decisions are removed one at a time, latest first,
 * each removal kept when a replay (VS_VCPU_REPLAY_LENIENT: a decision
 * whose anchor no longer comes is skipped) still fails the same way and
 * is smaller (fewer preemptions, or as many and fewer decisions); when
 * none can go, a pair of them (a preemption and the switch back that
 * undoes it); when no pair can, each preemption is moved up to
 * MOVE_AHEAD counts of its context later or MOVE_BACK earlier, where
 * its context may spin or stop and the switch is free; until nothing
 * helps or 1/5 of VS_EXPLORE_SHRINK_RUNS replays have run: the result
 * is 1-minimal, each decision needed.  Then, with two or more
 * preemptions left, a search of every schedule with fewer
 * (vs_vcpu_sched_dfs, bound by bound, within 1/5): the first found has
 * the fewest preemptions there are.  When that search runs out of
 * schedules before it is through (weak memory offers a choice at most
 * loads; a long run, a choice at most events), 2/5 more of the
 * exploring scheduler, seeded anew (PCT at its default depth, since
 * each change point may add a preemption), look for the failure with
 * fewer; what either search finds is dropped from again (1/5).  With
 * more than SHRINK_ENOUGH preemptions still kept, dropping goes on
 * (1/5) with one more move, a fold: two preemptions that run a slice of
 * one context inside another's run become one, the slice run where the
 * other next switches anyway (fold_slice()); with more still, restart()
 * finds the failure anew in the exploring scheduler's schedules (up to
 * RESTARTS times within VS_EXPLORE_SHRINK_RUNS) and drops decisions,
 * folds included, from each (as many replays again): the smallest found
 * is the result.  Folding only past SHRINK_ENOUGH leaves every failure
 * that shrinks to that without it as it was.  "The
 * same way": the same result; for a failed check the same message, its
 * numbers aside (the same check failing on another page or count); for
 * a deadlock, each context in the same state, on the same word, holding
 * the same locks; for a stuck run, both.
 *
 * Locking: the caller's host thread; the machine is run from here.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vmsim/check/explore.h>
#include <vmsim/error.h>
#include <vmsim/lockstat.h>
#include <vmsim/slab.h>

#include "test/hooks.h"
#include "shard.h"

unsigned long vs_explore_schedule;

/* The scenario's one schedule: what the root on vCPU 0 runs. */
struct xrun {
	const struct vs_explore_scenario *sc;
	struct vs_machine *m;
	void *state;
	int setup_err;
	long live;	/* objects out in vm/'s caches before the first */
	const char *trace;	/* a schedule to trace: the file */
	int trace_err;		/* vs_machine_trace_write()'s */
	struct vs__shard shard;	/* VMSIM_SHARD (test/check/shard.h) */
	struct vs__shard_key key;	/* set once the warm-up ran */
	int merged;		/* the report is the shards' */
	struct xthread {
		struct xrun *x;
		unsigned int i;
	} t[VS_EXPLORE_THREADS];
};

/* A schedule's outcome. */
struct xresult {
	int err;			/* what the run returned */
	uint64_t hash;
	struct vs_vcpu_decision *dec;	/* its decisions (malloc'd) */
	size_t nr;
	char report[8192];		/* the engine's report */
};

static void report_set(struct vs_explore_report *rep, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void report_set(struct vs_explore_report *rep, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep->text, sizeof(rep->text), fmt, ap);
	va_end(ap);
}

static int name_ok(const char *s)
{
	if (!s || !*s || strlen(s) > VS_EXPLORE_NAME_MAX)
		return 0;
	for (; *s; s++)
		if (!(*s == '_' || *s == '-' || (*s >= '0' && *s <= '9') ||
		      (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
			return 0;
	return 1;
}

/* -EINVAL with the report naming the bad argument, or 0. */
static int check_args(const struct vs_explore_scenario *sc,
		      const struct vs_explore_options *opt,
		      struct vs_explore_report *rep)
{
	const char *bad = NULL;

	if (!sc)
		bad = "scenario: NULL";
	else if (!name_ok(sc->name))
		bad = "scenario name: want 1 to VS_EXPLORE_NAME_MAX letters, "
		      "digits, '_' or '-'";
	else if (sc->threads < 1 || sc->threads > VS_EXPLORE_THREADS)
		bad = "scenario threads: want 1..VS_EXPLORE_THREADS";
	else if (!sc->thread)
		bad = "scenario thread: NULL";
	else if (opt && (opt->flags & ~(VS_EXPLORE_NO_SHRINK |
					VS_EXPLORE_QUIET)))
		bad = "options flags: unknown bits";
	else if (opt && opt->sched && !opt->sched->choose)
		bad = "options sched: no choose()";
	else if (opt && opt->memory > VS_VCPU_MEM_RELAXED)
		bad = "options memory: want VS_VCPU_MEM_SC, _TSO or _RELAXED";
	else if (opt && opt->own_slots > sc->threads + 1)
		bad = "options own_slots: want 0..threads + 1";
	if (!bad)
		return 0;
	report_set(rep, "explore: bad argument: %s\n", bad);
	return -EINVAL;
}

#if VS_VCPU

static void thread_main(void *arg)
{
	struct xthread *t = arg;

	t->x->sc->thread(t->x->state, t->i);
}

/* vCPU 0: setup, the threads on vCPUs 1.., join, check. */
static void root(void *arg)
{
	struct xrun *x = arg;
	int id[VS_EXPLORE_THREADS];
	unsigned int i;

	x->setup_err = x->sc->setup ? x->sc->setup(&x->state) : 0;
	if (x->setup_err)
		return;
	for (i = 0; i < x->sc->threads; i++) {
		x->t[i].x = x;
		x->t[i].i = i;
		id[i] = vs_machine_spawn(x->m, i + 1, thread_main, &x->t[i]);
		if (id[i] < 0)
			(void)vs_machine_fail("spawning thread %u: %d", i, id[i]);
	}
	for (i = 0; i < x->sc->threads; i++)
		(void)vs_machine_join(x->m, (unsigned int)id[i]);
	if (x->sc->check)
		x->sc->check(x->state);
}

/*
 * After a schedule: vm/'s object caches back to empty, for the next
 * (vmsim/slab.h).  A schedule that passed but left objects out that were
 * not out before the first fails with -EBUSY: the next would not start
 * as this one did.
 */
static void reset_caches(struct xrun *x, struct vs_machine *m,
			 struct xresult *r)
{
	int abandoned = vs_machine_abandoned(m);
	long live = vs__kmem_caches_reset(abandoned);

	if (abandoned || r->err || live <= x->live)
		return;
	r->err = -EBUSY;
	snprintf(r->report, sizeof(r->report), "the schedule left %ld "
		 "objects of vm/'s caches allocated: free what a schedule "
		 "makes by the end of check() or fini() (vs_rcu_barrier() "
		 "in check() runs the RCU frees still queued)\n",
		 live - x->live);
}

/* One schedule of @x->sc on @m, reset first: its outcome in @r. */
static void schedule(struct xrun *x, struct vs_machine *m,
		     struct xresult *r)
{
	const struct vs_vcpu_decision *dec;
	int err;

	free(r->dec);
	r->dec = NULL;
	r->nr = 0;
	r->err = vs_machine_reset(m, 0);
	if (r->err)
		return;
	x->m = m;
	x->state = x->sc->arg;
	x->setup_err = 0;
	r->err = vs_machine_run(m, root, x);
	if (!r->err && x->setup_err)
		r->err = x->setup_err;
	if (x->trace)
		x->trace_err = vs_machine_trace_write(m, x->trace);
	r->hash = vs_machine_hash(m);
	snprintf(r->report, sizeof(r->report), "%s", vs_machine_report(m));
	err = vs_machine_decisions(m, &dec, &r->nr);
	if (!err && r->nr) {
		r->dec = malloc(r->nr * sizeof(*dec));
		if (r->dec)
			memcpy(r->dec, dec, r->nr * sizeof(*dec));
		else
			err = -ENOMEM;
	}
	if (err) {	/* a schedule that cannot be replayed: an error */
		r->nr = 0;
		r->err = err;
	}
	if (x->sc->fini && x->state &&
	    (!x->setup_err || x->state != x->sc->arg))
		x->sc->fini(x->state);
	x->state = NULL;
	reset_caches(x, m, r);
}

/* A machine for @x->sc: the scheduler @sched with @arg and @seed. */
static int machine(struct vs_machine **mp, const struct xrun *x,
		   const struct vs_explore_options *o,
		   const struct vs_vcpu_sched_ops *sched, const void *arg,
		   uint64_t seed)
{
	struct vs_machine_config cfg = {
		.profile = o->profile,
		.nr_vcpus = x->sc->threads + 1,
		.seed = seed,
		.sched = sched,
		.sched_arg = arg,
		.max_events = o->max_events ? o->max_events : VS_EXPLORE_EVENTS,
		.flags = VS_MACHINE_CHECK_FREED |
			 (x->trace ? VS_MACHINE_TRACE : 0),
		.memory = o->memory,
		.own_slots = o->own_slots,
	};

	return vs_machine_create(mp, &cfg);
}

/* Replay @nr decisions @dec (leniently) on a new machine. */
static void replay(struct xrun *x, const struct vs_explore_options *o,
		   const struct vs_vcpu_decision *dec, size_t nr,
		   struct xresult *r)
{
	struct vs_vcpu_replay rp = { dec, nr, VS_VCPU_REPLAY_LENIENT };
	struct vs_machine *m;

	r->err = machine(&m, x, o, &vs_vcpu_sched_replay, &rp, 0);
	if (r->err)
		return;
	schedule(x, m, r);
	(void)vs_machine_destroy(m);
}

static unsigned int preemptions(const struct vs_vcpu_decision *dec, size_t nr)
{
	unsigned int n = 0;
	size_t i;

	for (i = 0; i < nr; i++)
		n += dec[i].preempt;
	return n;
}

/* Is @c a letter, a digit or '_'? */
static int word_char(char c)
{
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

/* The end of the number at @s[*@i] when one starts there: a digit that
 * does not go on a word, and the letters and digits after it (0x5a,
 * 42); @s[*@i] otherwise. */
static int skip_number(const char *s, size_t n, size_t *i)
{
	if (!(s[*i] >= '0' && s[*i] <= '9') || (*i && word_char(s[*i - 1])))
		return 0;
	while (*i < n && word_char(s[*i]))
		(*i)++;
	return 1;
}

/* Do @a and @b say the same, their numbers aside?  A shorter schedule
 * often fails the same check on another page, address or count. */
static int same_words(const char *a, size_t la, const char *b, size_t lb)
{
	size_t i = 0, j = 0;
	int na, nb;

	while (i < la && j < lb) {
		na = skip_number(a, la, &i);
		nb = skip_number(b, lb, &j);
		if (na != nb)
			return 0;
		if (na)
			continue;
		if (a[i++] != b[j++])
			return 0;
	}
	return i == la && j == lb;
}

/* What a failure says, past the engine's "work N ... cycles: " prefix
 * (which names where and when, not what); of "stuck: ...", only what
 * comes before the ';' (after it, counts that vary). */
static const char *failure_what(const struct xresult *r, size_t *len)
{
	const char *s = strstr(r->report, "cycles: ");

	s = s ? s + strlen("cycles: ") : r->report;
	*len = strcspn(s, strncmp(s, "stuck:", 6) ? "\n" : ";\n");
	return s;
}

/* The report's next line from *@s that sums up a context ("  vCPU 1
 * (work 1): blocked on lock A+0; holds: lock B (write)"), its length
 * in @len; NULL when none is left. */
static const char *next_context(const char **s, size_t *len)
{
	const char *l = strstr(*s, "\n  vCPU ");

	if (!l)
		return NULL;
	l++;
	*len = strcspn(l, "\n");
	*s = l + *len;
	return l;
}

/* Do reports @a and @b leave each context the same: in the same state,
 * waiting on the same word, holding the same locks? */
static int same_contexts(const char *a, const char *b)
{
	const char *la, *lb;
	size_t na, nb;

	for (;;) {
		la = next_context(&a, &na);
		lb = next_context(&b, &nb);
		if (!la || !lb)
			return la == lb;
		if (na != nb || memcmp(la, lb, na))
			return 0;
	}
}

/*
 * @r fails as @f does: the same result; for a failed check the same
 * message, its numbers aside (an assertion that fails elsewhere is
 * another bug; the same check failing on another page is not); for a
 * deadlock, every context waiting on the same word and holding the same
 * locks (a lock never released is not a lock order inverted); for a
 * stuck run, both (the same work spinning, the others where they were).
 */
static int same_failure(const struct xresult *r, const struct xresult *f)
{
	const char *a, *b;
	size_t la, lb;

	if (r->err != f->err)
		return 0;
	if (r->err == -EDEADLK)
		return same_contexts(r->report, f->report);
	if (r->err != -ECANCELED)
		return 1;
	a = failure_what(r, &la);
	b = failure_what(f, &lb);
	if (!same_words(a, la, b, lb))
		return 0;
	return strncmp(a, "stuck:", 6) || same_contexts(r->report, f->report);
}

/* Is @r a smaller failure than @f: fewer preemptions, or as many and
 * fewer decisions? */
static int smaller(const struct xresult *r, const struct xresult *f)
{
	unsigned int pr = preemptions(r->dec, r->nr);
	unsigned int pf = preemptions(f->dec, f->nr);

	return pr < pf || (pr == pf && r->nr < f->nr);
}

/* Make @r, a replay, @f (with its own, exact list) when it fails as @f
 * did and is smaller.  Return: 1 when it did. */
static int keep(struct xresult *f, struct xresult *r)
{
	if (!same_failure(r, f) || !smaller(r, f))
		return 0;
	free(f->dec);
	*f = *r;
	r->dec = NULL;
	return 1;
}

/*
 * Replay @f without its decisions @i and @j (@j == @i: one) into @r,
 * leniently, and keep() it.  Return: 1 when kept.
 */
static int drop_try(struct xrun *x, const struct vs_explore_options *o,
		    struct xresult *f, struct xresult *r, size_t i, size_t j)
{
	struct vs_vcpu_decision *try = malloc(f->nr * sizeof(*try));
	size_t k, n = 0;

	if (!try)
		return 0;
	for (k = 0; k < f->nr; k++)
		if (k != i && k != j)
			try[n++] = f->dec[k];
	replay(x, o, try, n, r);
	free(try);
	return keep(f, r);
}

/* One pass over @f's pairs of decisions, latest first, until a pair
 * can go; *@runs counts the replays, up to @budget.  Return: 1 when
 * one went. */
static int drop_pair(struct xrun *x, const struct vs_explore_options *o,
		     struct xresult *f, struct xresult *r, unsigned long *runs,
		     unsigned long budget)
{
	size_t i, j;

	for (i = f->nr; i-- > 1;)
		for (j = i; j-- > 0;) {
			if (*runs >= budget)
				return 0;
			(*runs)++;
			if (drop_try(x, o, f, r, i, j))
				return 1;
		}
	return 0;
}

/*
 * Replay @f with its decision @i moved to count @at of its context, of
 * kind @kind, into @r (a lenient replay finds each decision by its
 * anchor, wherever it is in the list), and keep() it.  Return: 1 when
 * kept.
 */
static int move_try(struct xrun *x, const struct vs_explore_options *o,
		    struct xresult *f, struct xresult *r, size_t i,
		    uint32_t at, unsigned int kind)
{
	struct vs_vcpu_decision *try = malloc(f->nr * sizeof(*try));

	if (!try)
		return 0;
	memcpy(try, f->dec, f->nr * sizeof(*try));
	try[i].at = at;
	try[i].kind = (uint8_t)kind;
	replay(x, o, try, f->nr, r);
	free(try);
	return keep(f, r);
}

/* Moves a preemption may take: to where its context, a little later,
 * spins or stops, a switch that is none.  Counts forward, then back. */
#define MOVE_AHEAD 24
#define MOVE_BACK 8

/*
 * Move each preemption of @f in turn, a count of its context at a
 * time, to where taking it preempts nothing, until one move keeps the
 * failure; *@runs counts the replays, up to @budget.  Return: 1 when a
 * move was kept.
 */
static int move_preemption(struct xrun *x, const struct vs_explore_options *o,
			   struct xresult *f, struct xresult *r,
			   unsigned long *runs, unsigned long budget)
{
	uint32_t at;
	size_t i;
	int d, kind;

	for (i = f->nr; i-- > 0;) {
		if (!f->dec[i].preempt ||
		    f->dec[i].kind != VS_VCPU_CHOOSE_RUN)
			continue;
		for (d = 1; d <= MOVE_AHEAD + MOVE_BACK; d++)
			for (kind = VS_VCPU_CHOOSE_RUN;
			     kind <= VS_VCPU_CHOOSE_RUN_AFTER_STOP; kind++) {
				at = d <= MOVE_AHEAD ? f->dec[i].at + (uint32_t)d :
				     f->dec[i].at - (uint32_t)(d - MOVE_AHEAD);
				if (d > MOVE_AHEAD && at > f->dec[i].at)
					break;	/* before the context's start */
				if (*runs >= budget)
					return 0;
				(*runs)++;
				if (move_try(x, o, f, r, i, at, (unsigned)kind))
					return 1;
			}
	}
	return 0;
}

/* Is @d a preemption, on the run choice, to @run? */
static int preempts(const struct vs_vcpu_decision *d, unsigned int run)
{
	return d->preempt && d->kind == VS_VCPU_CHOOSE_RUN && d->run == run;
}

/*
 * Replay @f with the slice of its decisions @i and @j (context A
 * preempted at @i to B, which @j preempts back to A) run where A next
 * switches, at its decision @k, to C instead: @i gone, @j taken by B
 * to C, @k to B; one preemption fewer where A's switch at @k was free
 * (A blocked, ended or spun).  keep() it.  Return: 1 when kept.
 */
static int fold_try(struct xrun *x, const struct vs_explore_options *o,
		    struct xresult *f, struct xresult *r, size_t i, size_t j,
		    size_t k)
{
	struct vs_vcpu_decision *try = malloc(f->nr * sizeof(*try));
	size_t l, n = 0;

	if (!try)
		return 0;
	for (l = 0; l < f->nr; l++) {
		if (l == i)
			continue;
		try[n] = f->dec[l];
		if (l == j)
			try[n].run = f->dec[k].run;
		if (l == k)
			try[n].run = f->dec[j].ctx;
		n++;
	}
	replay(x, o, try, n, r);
	free(try);
	return keep(f, r);
}

/*
 * Two preemptions that only run a slice of context B inside A's run
 * (A to B, later B back to A) often serve to have B stopped where it
 * is when another context runs (a writer in its operation when the
 * faulters, not yet spawned, start); B's slice run where A next
 * switches anyway (its next decision, to C, often free: A blocked or
 * ended) stops B there with one preemption, B's to C.  Neither drop nor
 * move finds it: dropping either preemption runs B whole or not at
 * all.  Try that fold for each such pair, latest first, until one keeps
 * the failure; *@runs counts the replays, up to @budget.  Return: 1
 * when a fold was kept.
 */
static int fold_slice(struct xrun *x, const struct vs_explore_options *o,
		      struct xresult *f, struct xresult *r,
		      unsigned long *runs, unsigned long budget)
{
	size_t i, j, k;

	for (j = f->nr; j-- > 1;)
		for (i = j; i-- > 0;) {
			if (!preempts(&f->dec[i], f->dec[j].ctx) ||
			    !preempts(&f->dec[j], f->dec[i].ctx))
				continue;
			for (k = j + 1; k < f->nr &&
			     f->dec[k].ctx != f->dec[i].ctx; k++)
				;
			if (k == f->nr || f->dec[k].run == f->dec[j].ctx)
				continue;
			if (*runs >= budget)
				return 0;
			(*runs)++;
			if (fold_try(x, o, f, r, i, j, k))
				return 1;
		}
	return 0;
}

/*
 * Delta debugging over @f's decisions: drop one at a time, latest
 * first, while a replay still fails as @f did; when none can go, a pair
 * (a preemption and the one that undoes it often go together only),
 * then a preemption moved, then (@fold) a slice folded, then single
 * ones again; until none helps or @budget replays have run.  Dropping
 * a preemption lets the context it stopped run on.  @f becomes the
 * smallest found.  Return: the replays run.
 */
static unsigned long drop_decisions(struct xrun *x,
				    const struct vs_explore_options *o,
				    struct xresult *f, unsigned long budget,
				    int fold)
{
	struct xresult *r = calloc(1, sizeof(*r));
	unsigned long runs = 0;
	int changed = 1;
	size_t i;

	while (r && changed) {
		changed = 0;
		for (i = f->nr; i-- > 0 && runs < budget;) {
			runs++;
			if (!drop_try(x, o, f, r, i, i))
				continue;
			changed = 1;
			if (i > f->nr)
				i = f->nr;
		}
		if (!changed)
			changed = drop_pair(x, o, f, r, &runs, budget);
		if (!changed)
			changed = move_preemption(x, o, f, r, &runs, budget);
		if (!changed && fold)
			changed = fold_slice(x, o, f, r, &runs, budget);
	}
	if (r)
		free(r->dec);
	free(r);
	return runs;
}

/* Is @m's scheduler DFS, and has it run out of schedules? */
static int exhausted(struct vs_machine *m)
{
	struct vs_vcpu_dfs_stats st;

	return !vs_vcpu_dfs_stats(m, &st) && (st.exhausted || st.error);
}

/*
 * Look for @f's failure with fewer preemptions than it has among the
 * schedules of @sched (@arg, @seed) on a new machine, within @budget.
 * @f becomes the one with the fewest found.  DFS, bound by bound, stops
 * at the first: no schedule it has not run has fewer.  *@through (when
 * not NULL): the scheduler ran out of schedules, DFS having run all.
 * Return: the schedules run.
 */
static unsigned long search(struct xrun *x, const struct vs_explore_options *o,
			    struct xresult *f,
			    const struct vs_vcpu_sched_ops *sched,
			    const void *arg, uint64_t seed,
			    unsigned long budget, int *through)
{
	struct vs_machine *m;
	struct xresult *r;
	unsigned long runs = 0;

	r = calloc(1, sizeof(*r));
	if (!r || machine(&m, x, o, sched, arg, seed)) {
		free(r);
		return 0;
	}
	while (runs < budget && preemptions(f->dec, f->nr) > 1 &&
	       !exhausted(m)) {
		schedule(x, m, r);
		runs++;
		if (!same_failure(r, f) ||
		    preemptions(r->dec, r->nr) >= preemptions(f->dec, f->nr))
			continue;
		free(f->dec);
		*f = *r;
		r->dec = NULL;
		if (sched == &vs_vcpu_sched_dfs)
			break;
	}
	if (through)
		*through = exhausted(m);
	(void)vs_machine_destroy(m);
	free(r->dec);
	free(r);
	return runs;
}

/* The PCT options of a search for fewer preemptions: two change points
 * (the default depth), whatever depth found the failure, since each
 * change point may add a preemption. */
static const void *search_arg(const struct vs_explore_options *o,
			      struct vs_vcpu_pct *low)
{
	if (o->sched && o->sched != &vs_vcpu_sched_pct)
		return o->sched_arg;
	low->depth = VS_VCPU_PCT_DEPTH;
	return low;
}

/* Preemptions a shrunk failure may keep before shrinking starts again
 * from other schedules that fail the same way (restart()). */
#define SHRINK_ENOUGH 3
#define RESTARTS 4	/* failures found anew, each shrunk */

/*
 * Find @f's failure anew, RESTARTS times at most within @budget
 * schedules, among those of the exploring scheduler with the
 * exploration's options, seeded @seed; then drop decisions from each
 * (drop_decisions(), @budget replays in all, shared) while @f keeps
 * more than SHRINK_ENOUGH preemptions.  A schedule that drop_decisions()
 * left 1-minimal with many preemptions (every one needed in that run:
 * dropping any moves the others' anchors) is often one of several, and
 * another shrinks further.  @f becomes the smallest.
 * Return: the schedules and replays run.
 */
static unsigned long restart(struct xrun *x, const struct vs_explore_options *o,
			     struct xresult *f, uint64_t seed,
			     unsigned long budget)
{
	struct xresult *r = calloc(RESTARTS, sizeof(*r));
	unsigned long runs = 0;
	struct vs_machine *m;
	int n = 0, i;

	if (!r || machine(&m, x, o, o->sched ? o->sched : &vs_vcpu_sched_pct,
			  o->sched_arg, seed)) {
		free(r);
		return 0;
	}
	while (runs < budget && n < RESTARTS) {
		schedule(x, m, &r[n]);
		runs++;
		n += same_failure(&r[n], f);
	}
	(void)vs_machine_destroy(m);
	for (i = 0; i < n && preemptions(f->dec, f->nr) > SHRINK_ENOUGH; i++) {
		runs += drop_decisions(x, o, &r[i],
				       (2 * budget - runs) / (unsigned)(n - i),
				       1);
		if (smaller(&r[i], f)) {
			free(f->dec);
			*f = r[i];
			r[i].dec = NULL;
		}
	}
	for (i = 0; i <= n && i < RESTARTS; i++)
		free(r[i].dec);
	free(r);
	return runs;
}

/*
 * Shrink @f: its decisions dropped while it fails the same way (delta
 * debugging); then a search of every schedule with fewer preemptions
 * (DFS bound by bound); when it runs out first (weak memory offers a
 * choice at most loads, a long run a choice at most events), more
 * schedules of the exploring scheduler, seeded anew, for the same
 * failure with fewer; what either finds is dropped from again; with
 * more than SHRINK_ENOUGH preemptions left, dropped from with folds
 * too, then restart().
 * Return: the replays and schedules it took.
 */
static unsigned long shrink(struct xrun *x, const struct vs_explore_options *o,
			    struct xresult *f)
{
	unsigned long runs = drop_decisions(x, o, f, VS_EXPLORE_SHRINK_RUNS / 5,
					    0);
	unsigned int found = preemptions(f->dec, f->nr);
	struct vs_vcpu_dfs bound = { found - 1 < VS_VCPU_DFS_MAX ?
				     found - 1 : VS_VCPU_DFS_MAX };
	struct vs_vcpu_pct low;
	int through = 1;

	if (found > 1)
		runs += search(x, o, f, &vs_vcpu_sched_dfs, &bound, 0,
			       VS_EXPLORE_SHRINK_RUNS / 5, &through);
	/* Only a scheduler that draws schedules at random draws others. */
	if (!through && preemptions(f->dec, f->nr) == found &&
	    o->sched != &vs_vcpu_sched_dfs && o->sched != &vs_vcpu_sched_replay)
		runs += search(x, o, f, o->sched ? o->sched :
			       &vs_vcpu_sched_pct, search_arg(o, &low),
			       o->seed + 1, VS_EXPLORE_SHRINK_RUNS * 2 / 5,
			       NULL);
	if (preemptions(f->dec, f->nr) < found)
		runs += drop_decisions(x, o, f, VS_EXPLORE_SHRINK_RUNS / 5, 0);
	if (preemptions(f->dec, f->nr) > SHRINK_ENOUGH)
		runs += drop_decisions(x, o, f, VS_EXPLORE_SHRINK_RUNS / 5, 1);
	if (preemptions(f->dec, f->nr) > SHRINK_ENOUGH &&
	    o->sched != &vs_vcpu_sched_dfs && o->sched != &vs_vcpu_sched_replay)
		runs += restart(x, o, f, o->seed + 2, VS_EXPLORE_SHRINK_RUNS);
	return runs;
}

/* "VMSIM_REPLAY=name:word" of @f into rep->replay, or "" if too long. */
static void replay_line(const struct xrun *x, const struct xresult *f,
			struct vs_explore_report *rep)
{
	int n = snprintf(rep->replay, sizeof(rep->replay), "VMSIM_REPLAY=%s:",
			 x->sc->name);

	if (n < 0 || vs_vcpu_replay_encode(f->dec, f->nr, (uint32_t)f->hash,
					   rep->replay + n,
					   sizeof(rep->replay) - (size_t)n))
		rep->replay[0] = 0;
}

/* The whole command line that replays, for the report's last line. */
static void replay_command(const struct vs_explore_report *rep, char *buf,
			   size_t len)
{
	const char *suite = getenv("CK_RUN_SUITE");
	const char *tcase = getenv("CK_RUN_CASE");
	const char *eq = strchr(rep->replay, '=');

	snprintf(buf, len, "VMSIM_REPLAY='%s'%s%s%s%s CK_FORK=no %s", eq + 1,
		 suite ? " CK_RUN_SUITE=" : "", suite ? suite : "",
		 tcase ? " CK_RUN_CASE=" : "", tcase ? tcase : "",
		 program_invocation_name);
}

/* The report of failing schedule @f, found as schedule @nth. */
static void report_failure(const struct xrun *x, const char *how,
			   const struct xresult *f,
			   struct vs_explore_report *rep)
{
	char cmd[sizeof(rep->replay) + 512];
	size_t at;

	rep->result = f->err;
	rep->preemptions = preemptions(f->dec, f->nr);
	replay_line(x, f, rep);
	at = (size_t)snprintf(rep->text, sizeof(rep->text),
			      "explore: %s: %s\n%s", x->sc->name, how,
			      f->report);
	if (at >= sizeof(rep->text))
		return;
	if (rep->replay[0]) {
		replay_command(rep, cmd, sizeof(cmd));
		snprintf(rep->text + at, sizeof(rep->text) - at,
			 "replay: %s\n", cmd);
	} else {
		snprintf(rep->text + at, sizeof(rep->text) - at,
			 "replay: the schedule has %zu decisions, too many "
			 "to print\n", f->nr);
	}
}

/*
 * With VMSIM_TRACE=PATH, run the reported schedule @f once more with
 * every event kept, and write them to PATH for Perfetto; the report
 * says where, or why not.
 */
static void trace_failure(struct xrun *x, const struct vs_explore_options *o,
			  const struct xresult *f,
			  struct vs_explore_report *rep)
{
	const char *path = getenv("VMSIM_TRACE");
	size_t at = strlen(rep->text);
	struct xresult *r;

	if (!path || !*path)
		return;
	r = calloc(1, sizeof(*r));
	if (!r) {
		x->trace_err = -ENOMEM;
	} else {
		x->trace = path;
		x->trace_err = 0;
		replay(x, o, f->dec, f->nr, r);
		x->trace = NULL;
		/* A replay that did not fail as @f did traced another run. */
		if (!x->trace_err && !same_failure(r, f))
			x->trace_err = -ESTALE;
		free(r->dec);
		free(r);
	}
	if (x->trace_err == -ESTALE)
		snprintf(rep->text + at, sizeof(rep->text) - at,
			 "trace: %s: the traced replay did not fail as this "
			 "schedule did (the scenario does not repeat): it "
			 "traces another run\n", path);
	else if (x->trace_err)
		snprintf(rep->text + at, sizeof(rep->text) - at,
			 "trace: %s: %s\n", path, strerror(-x->trace_err));
	else
		snprintf(rep->text + at, sizeof(rep->text) - at,
			 "trace: %s (open it in ui.perfetto.dev)\n", path);
}

/* Host seconds since @t0. */
static double elapsed(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static unsigned long max_schedules(const struct vs_explore_options *o)
{
	return o->max_schedules ? o->max_schedules : VS_EXPLORE_SCHEDULES;
}

/* Bounded by @o: more schedules may run. */
static int more(const struct vs_explore_options *o,
		const struct vs_explore_report *rep, const struct timespec *t0)
{
	if (rep->schedules >= max_schedules(o))
		return 0;
	return !o->max_ms || elapsed(t0) * 1000 < o->max_ms;
}

/*
 * A SIGINT or SIGTERM (vs_vcpu_stop()) ended the search between two
 * schedules, none failed: say so, with how many ran.  Return: -EINTR,
 * or 0 when no signal came.
 */
static int interrupted(const struct xrun *x, struct vs_explore_report *rep)
{
	int sig = vs_vcpu_stop_signal();

	if (!sig)
		return 0;
	report_set(rep, "explore: %s: interrupted by %s after %lu schedules, "
		   "none failed\n", x->sc->name, sig == SIGTERM ? "SIGTERM" :
		   sig == SIGINT ? "SIGINT" : "a signal", rep->schedules);
	return -EINTR;
}

/*
 * Sharded (VMSIM_SHARD): @m on to the shard's next schedule, those
 * between skipped (test/check/shard.h).  Return: 0, 1 past the bound,
 * or vs_machine_sched_seek()'s error.  A scheduler that cannot seek
 * explores whole in every shard.
 */
static int shard_seek(const struct xrun *x, struct vs_machine *m,
		      const struct vs_explore_options *o,
		      const struct vs_vcpu_sched_ops *sched,
		      struct vs_explore_report *rep)
{
	unsigned long next = vs__shard_next(&x->shard, rep->schedules);

	if (next == rep->schedules + 1 || !sched->seek)
		return 0;
	rep->schedules = next - 1 < max_schedules(o) ? next - 1 :
			 max_schedules(o);
	if (next > max_schedules(o))
		return 1;
	return vs_machine_sched_seek(m, next - 1);	/* run 1: schedule 2 */
}

/* What else tells one exploration from another of the same scenario,
 * seed and bound, for the shards' lines: packed into one number. */
static uint64_t shard_opts(const struct vs_explore_options *o,
			   const struct vs_vcpu_sched_ops *sched)
{
	const struct vs_vcpu_pct *pct = sched == &vs_vcpu_sched_pct ?
					o->sched_arg : NULL;

	return (uint64_t)o->memory | (uint64_t)o->own_slots << 8 |
	       (uint64_t)(o->flags & 0xff) << 16 |
	       (uint64_t)(pct ? pct->depth : 0) << 24 |
	       (o->max_events & 0xffffffff) << 32;
}

/* Schedule 1 without preemptions (the warm-up), then the scheduler's,
 * until one fails or the bounds say stop.  @f: the last one's outcome.
 * With VMSIM_SHARD_MERGE, after the warm-up, the shards' report. */
static int explore_loop(struct xrun *x, const struct vs_explore_options *o,
			const struct timespec *t0, struct xresult *f,
			struct vs_explore_report *rep)
{
	const struct vs_vcpu_sched_ops *sched = o->sched ? o->sched :
						&vs_vcpu_sched_pct;
	struct vs_machine *m;
	int err, e;

	vs_explore_schedule = 1;
	replay(x, o, NULL, 0, f);
	rep->schedules = 1;
	x->key = (struct vs__shard_key){ x->sc->name, o->seed, sched->name,
					 max_schedules(o), shard_opts(o, sched),
					 f->hash };
	if (f->err)
		return f->err;
	if (x->shard.merge) {
		x->merged = 1;
		e = vs__shard_merge(&x->shard, &x->key, rep, &err);
		return e ? e : err;
	}
	err = machine(&m, x, o, sched, o->sched_arg, o->seed);
	if (err)
		return err;
	while (more(o, rep, t0) && !exhausted(m) && !vs_vcpu_stop_signal()) {
		err = shard_seek(x, m, o, sched, rep);
		if (err) {
			f->err = err < 0 ? err : 0;
			break;
		}
		vs_explore_schedule = rep->schedules + 1;
		schedule(x, m, f);
		rep->schedules++;
		if (f->err)
			break;
	}
	rep->exhausted = exhausted(m);
	(void)vs_machine_destroy(m);
	return f->err ? f->err : interrupted(x, rep);
}

/*
 * The schedule VMSIM_REPLAY gives for scenario @name, or NULL.  One
 * that names another scenario is said on stderr, so that a misspelt
 * name is not taken for a replay that passed.
 */
static const char *replay_request(const char *name)
{
	const char *e = getenv("VMSIM_REPLAY");
	size_t n = strlen(name);

	if (!e || !*e)
		return NULL;
	if (!strncmp(e, name, n) && e[n] == ':')
		return e + n + 1;
	fprintf(stderr, "explore: %s: VMSIM_REPLAY names %.*s, not this "
		"scenario: exploring it instead\n", name,
		(int)strcspn(e, ":"), e);
	return NULL;
}

/* Run the schedule @word, after the warm-up as exploring does. */
static int replay_env(struct xrun *x, const struct vs_explore_options *o,
		      const char *word, struct xresult *f,
		      struct vs_explore_report *rep)
{
	size_t max = strlen(word) + 1, nr;
	struct vs_vcpu_decision *dec = malloc(max * sizeof(*dec));
	uint32_t check;
	int err;

	if (!dec)
		return -ENOMEM;
	err = vs_vcpu_replay_decode(word, dec, max, &nr, &check);
	if (err) {
		report_set(rep, "explore: %s: VMSIM_REPLAY: not a schedule "
			   "(%s): %s\n", x->sc->name, vs_strerror(err), word);
		free(dec);
		return -EINVAL;
	}
	vs_explore_schedule = 1;
	replay(x, o, NULL, 0, f);
	rep->schedules = 1;
	if (!f->err) {
		vs_explore_schedule = 2;
		replay(x, o, dec, nr, f);
		rep->schedules = 2;
		rep->stale = (uint32_t)f->hash != check;
	}
	free(dec);
	return f->err;
}

/* How the failure came: the line after "explore: <name>: ". */
static void how(const struct xrun *x, const struct vs_explore_options *o,
		int replayed, const struct vs_explore_report *rep, char *buf,
		size_t len)
{
	if (replayed && rep->schedules == 1) {
		snprintf(buf, len, "the schedule without preemptions, run "
			 "before the one of VMSIM_REPLAY, fails");
		return;
	}
	if (replayed) {
		snprintf(buf, len, "the schedule of VMSIM_REPLAY (%u "
			 "preemptions) fails%s", rep->preemptions,
			 rep->stale ? "; it did not run as recorded: the "
			 "code changed since" : "");
		return;
	}
	snprintf(buf, len, "schedule %lu (%s, seed %llu) fails; %u "
		 "preemptions, shrunk to %u in %lu runs",
		 rep->schedules, rep->schedules == 1 ? "without preemptions" :
		 o->sched ? o->sched->name : vs_vcpu_sched_pct.name,
		 (unsigned long long)o->seed, rep->found_preemptions,
		 rep->preemptions, rep->shrink_runs);
	(void)x;
}

/*
 * A shard's exploration that returned @err: its line to VMSIM_SHARD_OUT.
 * Return: @err, or the write's error, said in the report.
 */
static int shard_out(const struct xrun *x, int err,
		     struct vs_explore_report *rep)
{
	size_t at = strlen(rep->text);
	int e;

	if (!x->shard.n || !x->key.name)
		return err;
	e = vs__shard_write(&x->shard, &x->key, err, rep);
	if (!e)
		return err;
	snprintf(rep->text + at, sizeof(rep->text) - at, "explore: %s: "
		 "VMSIM_SHARD_OUT: %s: %s\n", x->sc->name, x->shard.out,
		 strerror(-e));
	return err ? err : e;
}

/*
 * A merge (VMSIM_SHARD_MERGE) whose shards found failure @err: the
 * shrunk schedule of the shard's replay word run here, so that the
 * report is this process's own, as the unsharded run's would be (its
 * trace too).  Where it cannot be (no word, or it does not fail the
 * same way), the shard's report stands.
 */
static void merge_report(struct xrun *x, const struct vs_explore_options *o,
			 struct xresult *f, int err,
			 struct vs_explore_report *rep)
{
	const char *word = strchr(rep->replay, ':');
	struct vs_vcpu_decision *dec;
	char line[512];
	uint32_t check;
	size_t max, nr;

	if ((err != -ECANCELED && err != -EDEADLK) || !word)
		return;
	max = strlen(++word) + 1;
	dec = malloc(max * sizeof(*dec));
	if (!dec || vs_vcpu_replay_decode(word, dec, max, &nr, &check)) {
		free(dec);
		return;
	}
	replay(x, o, dec, nr, f);
	free(dec);
	if (f->err != err || (uint32_t)f->hash != check)
		return;
	how(x, o, 0, rep, line, sizeof(line));
	report_failure(x, line, f, rep);
	trace_failure(x, o, f, rep);
}

/* Explore or replay; the report of what was found. */
static int run(struct xrun *x, const struct vs_explore_options *o,
	       struct xresult *f, struct vs_explore_report *rep)
{
	const char *word = replay_request(x->sc->name);
	struct timespec t0;
	char line[512];
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	x->live = vs__kmem_caches_reset(0);	/* the first starts empty too */
	err = word ? replay_env(x, o, word, f, rep) :
		     explore_loop(x, o, &t0, f, rep);
	vs_explore_schedule = 0;
	if (x->merged) {
		merge_report(x, o, f, err, rep);
		return err;
	}
	if (err == -ECANCELED || err == -EDEADLK) {
		rep->found_preemptions = preemptions(f->dec, f->nr);
		if (!word && !(o->flags & VS_EXPLORE_NO_SHRINK))
			rep->shrink_runs = shrink(x, o, f);
		rep->preemptions = preemptions(f->dec, f->nr);
		how(x, o, word != NULL, rep, line, sizeof(line));
		report_failure(x, line, f, rep);
		trace_failure(x, o, f, rep);
	} else if (err && !rep->text[0]) {
		report_set(rep, "explore: %s: schedule %lu: %s%s\n%s",
			   x->sc->name, rep->schedules, vs_strerror(err),
			   err == -ESTALE ? " (the scenario does not repeat "
			   "itself from schedule to schedule, which the "
			   "search needs)" : "", f->report);
	} else if (!err && word && rep->stale) {
		report_set(rep, "explore: %s: the schedule of VMSIM_REPLAY "
			   "ran clean, and not as recorded: the code changed "
			   "since\n", x->sc->name);
	}
	rep->seconds = elapsed(&t0);
	return word ? err : shard_out(x, err, rep);
}

#endif /* VS_VCPU */

int vs_explore(const struct vs_explore_scenario *sc,
	       const struct vs_explore_options *opt,
	       struct vs_explore_report *rep)
{
	static const struct vs_explore_options defaults;
	int err;

	if (!rep)
		return -EINVAL;
	memset(rep, 0, sizeof(*rep));
	err = check_args(sc, opt, rep);
	if (err)
		return err;
#if VS_VCPU
	{
		struct xrun *x = calloc(1, sizeof(*x));
		struct xresult *f = calloc(1, sizeof(*f));
		char msg[256];
		int was;

		if (!x || !f) {
			free(x);
			free(f);
			return -ENOMEM;
		}
		x->sc = sc;
		err = vs__shard_env(&x->shard, msg, sizeof(msg));
		if (err)
			report_set(rep, "explore: %s: %s\n", sc->name, msg);
		was = vs_lockstat_track_held(1);
		/* SIGINT, SIGTERM: the search ends after the schedule. */
		(void)vs_vcpu_stop_on_signals(1);
		err = err ? err : run(x, opt ? opt : &defaults, f, rep);
		(void)vs_vcpu_stop_on_signals(0);
		vs_lockstat_track_held(was);
		free(f->dec);
		free(f);
		free(x);
	}
#else
	(void)opt;
	(void)defaults;
	report_set(rep, "explore: %s: needs the vCPU build of vmsim "
		   "(VS_VCPU=1, libvmsim-vcpu)\n", sc->name);
	err = -EOPNOTSUPP;
#endif
	if (rep->text[0] && !(opt && (opt->flags & VS_EXPLORE_QUIET)))
		fputs(rep->text, stderr);
	return err;
}
