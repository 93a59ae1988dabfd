/* SPDX-License-Identifier: MIT */
/*
 * test/sync/test_vcpu_sched.c - the engine's schedulers (vmsim/vcpu.h,
 * vcpu/sched.c): a scheduler is asked exactly once per choice
 * point, with the alternatives the engine promises; the random
 * scheduler finds a lost update and its schedule replays event for
 * event; the clock scheduler is the default and a scheduler that does
 * not choose; PCT finds it at depth 2 and never at depth 1; DFS meets every
 * interleaving within its preemption bound, and none beyond; a
 * schedule that does not fit is refused; spin loops and timed sleeps end under every
 * scheduler.  Runs
 * in vmsim-test-vcpu only; each test makes its own machines.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/trace.h>
#include <vmsim/vcpu.h>
#include <vmsim/wait.h>

#include "test.h"

static struct vs_machine *mach(const struct vs_vcpu_sched_ops *sched,
			       const void *arg, uint64_t seed)
{
	struct vs_machine_config cfg = { .nr_vcpus = 3, .seed = seed,
					 .sched = sched, .sched_arg = arg };
	struct vs_machine *m;

	ck_assert_int_eq(vs_machine_create(&m, &cfg), 0);
	return m;
}

/* ---- the scenario: an increment that is not atomic ---------------------- */

#define INCS 3

static struct vs_machine *cur;
static vs_atomic_long_t counter;

static void incrementer(void *arg)
{
	long x;
	int i;

	(void)arg;
	for (i = 0; i < INCS; i++) {
		x = vs_read_once(&counter);
		vs_write_once(&counter, x + 1);	/* may lose the other's */
	}
}

/* Two threads on vCPUs 1 and 2, joined by vCPU 0. */
static void two_incrementers(void *arg)
{
	int a, b;

	(void)arg;
	a = vs_machine_spawn(cur, 1, incrementer, NULL);
	b = vs_machine_spawn(cur, 2, incrementer, NULL);
	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(b, 0);
	ck_assert_int_eq(vs_machine_join(cur, (unsigned int)a), 0);
	ck_assert_int_eq(vs_machine_join(cur, (unsigned int)b), 0);
}

/* One run of the scenario on @m: the final count. */
static long run_once(struct vs_machine *m, int want)
{
	cur = m;
	vs_atomic_init(&counter, 0);
	ck_assert_int_eq(vs_machine_run(m, two_incrementers, NULL), want);
	return vs_read_once(&counter);
}

/* ---- a scheduler that checks what it is asked --------------------------- */

struct probe {
	unsigned long calls, chosen, rmw_seen;
	uint64_t rng;
	uint64_t last_events;	/* the machine's events at the last RUN */
	unsigned int last_ctx;
};

static struct probe *probe_of;	/* the last machine's */

static int probe_init(void **state, const struct vs_machine_config *cfg)
{
	struct probe *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->rng = cfg->seed;
	*state = probe_of = p;
	return 0;
}

static unsigned int probe_choose(void *state, struct vs_machine *m,
				 const struct vs_vcpu_choice *c)
{
	struct probe *p = state;
	unsigned int i, j;

	/* Once per choice point: they are numbered without a gap. */
	ck_assert_uint_eq(c->index, p->calls);
	p->calls++;
	ck_assert_uint_ge(c->nr, 2);
	for (i = 0; i < c->nr; i++)
		for (j = i + 1; j < c->nr; j++)
			ck_assert_uint_ne(c->cand[i], c->cand[j]);
	if (c->kind == VS_VCPU_CHOOSE_RUN) {
		struct vs_machine_stats st;

		/* The running context is the default unless it spins. */
		ck_assert_uint_eq(c->cand[0] == c->ctx, c->op != VS_VCPU_RELAX);
		/* One choice point an event: never twice before one. */
		ck_assert_int_eq(vs_machine_stats(m, -1, &st), 0);
		ck_assert_msg(p->calls == 1 || c->ctx != p->last_ctx ||
			      st.events != p->last_events,
			      "two choice points before one event");
		p->last_ctx = c->ctx;
		p->last_events = st.events;
		if (c->op == VS_VCPU_RMW && c->addr != NULL)
			p->rmw_seen++;
	} else {
		ck_assert_uint_eq(c->op, 0);
	}
	/* Every third choice point another context runs. */
	if (p->calls % 3)
		return 0;
	p->chosen++;
	return 1 + (unsigned int)(p->rng++ % (c->nr - 1));
}

static const struct vs_vcpu_sched_ops probe_ops = {
	.name = "probe",
	.init = probe_init,
	.choose = probe_choose,
	.fini = free,
};

static void fetch_adders(void *arg)
{
	int a, b, i;

	(void)arg;
	a = vs_machine_spawn(cur, 1, incrementer, NULL);
	b = vs_machine_spawn(cur, 2, incrementer, NULL);
	for (i = 0; i < 10; i++)
		vs_fetch_add(&counter, 1);
	ck_assert_int_eq(vs_machine_join(cur, (unsigned int)a), 0);
	ck_assert_int_eq(vs_machine_join(cur, (unsigned int)b), 0);
}

/* The scheduler is asked once per choice point, only where there is a
 * choice, sees each event's operation, and every answer other than the
 * default is in the recorded schedule; with a profile too, whose line
 * transfers make an event wait (and the engine's own order look twice). */
START_TEST(sched_once_per_choice)
{
	const struct vs_vcpu_decision *dec;
	struct vs_machine_config cfg = { .nr_vcpus = 3, .seed = 7,
					 .sched = &probe_ops };
	struct vs_vcpu_profile p;
	char err[128];
	size_t nr;
	int i;

	ck_assert_int_eq(vs_vcpu_profile_load(&p, "ivb-ep-2x10x2", err,
					      sizeof(err)), 0);
	for (i = 0; i < 2; i++) {
		cfg.profile = i ? &p : NULL;
		ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
		vs_atomic_init(&counter, 0);
		ck_assert_int_eq(vs_machine_run(cur, fetch_adders, NULL), 0);
		ck_assert_uint_gt(probe_of->calls, 10);
		ck_assert_uint_gt(probe_of->rmw_seen, 0);
		ck_assert_int_eq(vs_machine_decisions(cur, &dec, &nr), 0);
		ck_assert_uint_eq(nr, probe_of->chosen);
		ck_assert_int_eq(vs_machine_destroy(cur), 0);
	}
}
END_TEST

/* ---- random finds it, replay repeats it --------------------------------- */

/* The random scheduler loses an update within 100 schedules (one
 * machine a seed), and the replay of that schedule loses the same
 * ones, event for event (the same hash), every time. */
START_TEST(sched_random_finds_replay_repeats)
{
	const struct vs_vcpu_decision *dec;
	struct vs_vcpu_decision *copy;
	struct vs_vcpu_replay rp = { NULL, 0, 0 };
	struct vs_machine *m;
	uint64_t seed, hash = 0;
	long got = 2 * INCS;
	char text[256];
	uint32_t check;
	size_t nr = 0, i;
	int rep;

	for (seed = 1; seed <= 100 && got == 2 * INCS; seed++) {
		m = mach(&vs_vcpu_sched_random, NULL, seed);
		got = run_once(m, 0);
		if (got != 2 * INCS) {
			hash = vs_machine_hash(m);
			ck_assert_int_eq(vs_machine_decisions(m, &dec, &nr), 0);
			ck_assert_uint_gt(nr, 0);
			copy = malloc(nr * sizeof(*copy));
			ck_assert_ptr_nonnull(copy);
			for (i = 0; i < nr; i++)
				copy[i] = dec[i];
		}
		ck_assert_int_eq(vs_machine_destroy(m), 0);
	}
	ck_assert_msg(got < 2 * INCS, "100 random schedules lost no update");
	/* Through its text, as a failing test prints it. */
	ck_assert_int_eq(vs_vcpu_replay_encode(copy, nr, (uint32_t)hash, text,
					       sizeof(text)), 0);
	if (getenv("VS_TEST_VERBOSE"))
		fprintf(stderr, "lost update: count %ld, seed %llu, %zu "
			"decisions: %s\n", got, (unsigned long long)(seed - 1),
			nr, text);
	memset(copy, 0, nr * sizeof(*copy));
	ck_assert_int_eq(vs_vcpu_replay_decode(text, copy, nr, &rp.nr,
					       &check), 0);
	ck_assert_uint_eq(rp.nr, nr);
	ck_assert_uint_eq(check, (uint32_t)hash);
	rp.dec = copy;
	for (rep = 0; rep < 3; rep++) {
		m = mach(&vs_vcpu_sched_replay, &rp, seed - 1);
		ck_assert_int_eq(run_once(m, 0), got);
		ck_assert_uint_eq(vs_machine_hash(m), hash);
		ck_assert_int_eq(vs_machine_decisions(m, &dec, &nr), 0);
		ck_assert_uint_eq(nr, rp.nr);
		for (i = 0; i < nr; i++) {
			ck_assert_uint_eq(dec[i].ctx, copy[i].ctx);
			ck_assert_uint_eq(dec[i].at, copy[i].at);
			ck_assert_uint_eq(dec[i].run, copy[i].run);
			ck_assert_uint_eq(dec[i].kind, copy[i].kind);
		}
		ck_assert_int_eq(vs_machine_destroy(m), 0);
	}
	free(copy);
}
END_TEST

/* A hash of the last run's schedule. */
static uint64_t schedule_hash(struct vs_machine *m)
{
	const struct vs_vcpu_decision *dec;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t nr, i;

	ck_assert_int_eq(vs_machine_decisions(m, &dec, &nr), 0);
	for (i = 0; i < nr; i++)
		h = (h ^ (dec[i].at | (uint64_t)dec[i].ctx << 32 |
			  (uint64_t)dec[i].run << 48)) * 0x100000001b3ull;
	return h;
}

/* Each run of a machine with the random scheduler draws another
 * schedule; an empty replay takes every default, the same each time. */
START_TEST(sched_runs_differ_defaults_repeat)
{
	struct vs_vcpu_replay none = { NULL, 0, 0 };
	const struct vs_vcpu_decision *dec;
	size_t nr;
	struct vs_machine *m = mach(&vs_vcpu_sched_random, NULL, 3);
	uint64_t h[5], h0 = 0;
	int distinct = 0, i, j;

	for (i = 0; i < 5; i++) {
		(void)run_once(m, 0);
		h[i] = schedule_hash(m);
		for (j = 0; j < i && h[j] != h[i]; j++)
			;
		distinct += j == i;
	}
	ck_assert_int_ge(distinct, 4);
	ck_assert_int_eq(vs_machine_destroy(m), 0);
	for (i = 0; i < 2; i++) {
		m = mach(&vs_vcpu_sched_replay, &none, 9 + (uint64_t)i);
		ck_assert_int_eq(run_once(m, 0), 2 * INCS);
		ck_assert_int_eq(vs_machine_decisions(m, &dec, &nr), 0);
		ck_assert_uint_eq(nr, 0);	/* every default */
		if (i == 0)
			h0 = vs_machine_hash(m);
		ck_assert_uint_eq(vs_machine_hash(m), h0);
		ck_assert_int_eq(vs_machine_destroy(m), 0);
	}
}
END_TEST

/* ---- the clock scheduler ------------------------------------------------- */

static int watch_inits, watch_ends, watch_finis;

static int watch_init(void **state, const struct vs_machine_config *cfg)
{
	(void)cfg;
	*state = &watch_inits;
	watch_inits++;
	return 0;
}

static int watch_end(void *state, struct vs_machine *m)
{
	(void)m;
	ck_assert_ptr_eq(state, &watch_inits);
	watch_ends++;
	return 0;
}

static void watch_fini(void *state)
{
	ck_assert_ptr_eq(state, &watch_inits);
	watch_finis++;
}

/* The default scheduler is vs_vcpu_sched_clock, an ordinary one, and a
 * scheduler without a choose function is a clock scheduler too: the
 * same seed gives the same run under each of the three, with no
 * decision recorded, and the third's other hooks are called. */
START_TEST(sched_clock_is_the_default)
{
	static const struct vs_vcpu_sched_ops watch = {
		.name = "watch", .init = watch_init, .end = watch_end,
		.fini = watch_fini,
	};
	const struct vs_vcpu_sched_ops *ops[] = {
		NULL, &vs_vcpu_sched_clock, &watch,
	};
	const struct vs_vcpu_decision *dec;
	uint64_t seed, h = 0;
	struct vs_machine *m;
	long count = 0, got;
	unsigned int i;
	size_t nr;

	for (seed = 1; seed <= 5; seed++) {
		for (i = 0; i < VS_ARRAY_SIZE(ops); i++) {
			m = mach(ops[i], NULL, seed);
			got = run_once(m, 0);
			ck_assert_int_eq(vs_machine_decisions(m, &dec, &nr),
					 0);
			ck_assert_uint_eq(nr, 0);
			if (i == 0) {
				h = vs_machine_hash(m);
				count = got;
			}
			ck_assert_uint_eq(vs_machine_hash(m), h);
			ck_assert_int_eq(got, count);
			ck_assert_int_eq(vs_machine_destroy(m), 0);
		}
	}
	ck_assert_int_eq(watch_inits, 5);
	ck_assert_int_eq(watch_ends, 5);
	ck_assert_int_eq(watch_finis, 5);
}
END_TEST

/* ---- PCT ------------------------------------------------------------------ */

/* Runs of the scenario on one PCT machine of depth @d until an update
 * is lost: how many, or 0 when none of @runs lost one. */
static int pct_runs_to_lose(unsigned int d, int runs, uint64_t seed)
{
	struct vs_vcpu_pct arg = { .depth = d };
	struct vs_machine *m = mach(&vs_vcpu_sched_pct, &arg, seed);
	int i, found = 0;

	for (i = 1; i <= runs && !found; i++)
		if (run_once(m, 0) != 2 * INCS)
			found = i;
	ck_assert_int_eq(vs_machine_destroy(m), 0);
	return found;
}

/* The lost update needs one ordering constraint beyond the threads'
 * own order (the other thread runs between a read and its write): PCT
 * at depth 1 has no change point and never loses an update, at depth 2
 * it does within 200 runs, for each of five seeds. */
START_TEST(sched_pct_depth)
{
	struct vs_vcpu_pct bad = { .depth = 0 };
	struct vs_machine *m;
	uint64_t seed;
	int n;

	for (seed = 1; seed <= 5; seed++) {
		ck_assert_int_eq(pct_runs_to_lose(1, 100, seed), 0);
		n = pct_runs_to_lose(2, 200, seed);
		if (getenv("VS_TEST_VERBOSE"))
			fprintf(stderr, "pct depth 2, seed %llu: lost an "
				"update in run %d\n",
				(unsigned long long)seed, n);
		ck_assert_int_gt(n, 0);
	}
	ck_assert_int_eq(vs_machine_create(&m, &(struct vs_machine_config){
		.nr_vcpus = 3, .sched = &vs_vcpu_sched_pct,
		.sched_arg = &bad }), -EINVAL);
	bad.depth = 17;
	ck_assert_int_eq(vs_machine_create(&m, &(struct vs_machine_config){
		.nr_vcpus = 3, .sched = &vs_vcpu_sched_pct,
		.sched_arg = &bad }), -EINVAL);
}
END_TEST

/* ---- preemption-bounded DFS --------------------------------------------- */

static vs_atomic32_t seq;
static char order[5];		/* which thread took each step: "ABAB" */

static void two_steps(void *arg)
{
	char who = (char)(uintptr_t)arg;
	int i;

	for (i = 0; i < 2; i++)
		order[vs_fetch_add(&seq, 1)] = who;
}

static void two_stepping_threads(void *arg)
{
	int a, b;

	(void)arg;
	a = vs_machine_spawn(cur, 1, two_steps, (void *)(uintptr_t)'A');
	b = vs_machine_spawn(cur, 2, two_steps, (void *)(uintptr_t)'B');
	ck_assert_int_eq(vs_machine_join(cur, (unsigned int)a), 0);
	ck_assert_int_eq(vs_machine_join(cur, (unsigned int)b), 0);
}

/* Explore the two-step threads with DFS up to @bound preemptions:
 * the number of distinct orders of their four steps. */
static int dfs_orders(unsigned int bound, unsigned long *schedules)
{
	struct vs_vcpu_dfs arg = { .max_preemptions = bound };
	struct vs_vcpu_dfs_stats st = { 0 };
	char seen[6][5];
	int n = 0, i;

	cur = mach(&vs_vcpu_sched_dfs, &arg, 1);
	while (vs_test_dfs_more(cur, &st, 10000)) {
		vs_atomic_init(&seq, 0);
		memset(order, 0, sizeof(order));
		ck_assert_int_eq(vs_machine_run(cur, two_stepping_threads,
						NULL), 0);
		for (i = 0; i < n && strcmp(seen[i], order); i++)
			;
		if (i == n) {
			ck_assert_int_lt(n, 6);
			strcpy(seen[n++], order);
		}
		ck_assert_uint_le(st.bound, bound);
	}
	*schedules = st.schedules;
	/* Further runs take the defaults and are not counted. */
	vs_atomic_init(&seq, 0);
	ck_assert_int_eq(vs_machine_run(cur, two_stepping_threads, NULL), 0);
	ck_assert_int_eq(vs_vcpu_dfs_stats(cur, &st), 0);
	ck_assert_uint_eq(st.schedules, *schedules);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
	return n;
}

/* Of the six orders of two threads' two steps, no preemption gives
 * AABB and BBAA (switches only where a thread ends), one adds ABBA and
 * BAAB, and two give all six: DFS meets each and stops, exhausted. */
START_TEST(sched_dfs_bounds)
{
	static const int want[] = { 2, 4, 6, 6 };
	struct vs_vcpu_dfs bad = { .max_preemptions = VS_VCPU_DFS_MAX + 1 };
	struct vs_vcpu_dfs_stats st;
	unsigned long runs, last = 0;
	struct vs_machine *m;
	unsigned int b;

	for (b = 0; b < 4; b++) {
		ck_assert_int_eq(dfs_orders(b, &runs), want[b]);
		ck_assert_uint_gt(runs, last);	/* a larger space */
		last = runs;
		if (getenv("VS_TEST_VERBOSE"))
			fprintf(stderr, "dfs bound %u: %lu schedules\n", b,
				runs);
	}
	ck_assert_int_eq(vs_machine_create(&m, &(struct vs_machine_config){
		.nr_vcpus = 3, .sched = &vs_vcpu_sched_dfs,
		.sched_arg = &bad }), -EINVAL);
	m = mach(&vs_vcpu_sched_random, NULL, 1);
	ck_assert_int_eq(vs_vcpu_dfs_stats(m, &st), -EINVAL);
	ck_assert_int_eq(vs_vcpu_dfs_stats(NULL, &st), -EINVAL);
	ck_assert_int_eq(vs_machine_destroy(m), 0);
}
END_TEST

/* DFS finds the lost update with one preemption, never with none. */
START_TEST(sched_dfs_lost_update)
{
	struct vs_vcpu_dfs_stats st;
	struct vs_vcpu_dfs arg;
	unsigned int b;
	int lost;

	for (b = 0; b < 2; b++) {
		arg.max_preemptions = b;
		cur = mach(&vs_vcpu_sched_dfs, &arg, 1);
		lost = 0;
		while (!lost && vs_test_dfs_more(cur, &st, 10000))
			lost = run_once(cur, 0) != 2 * INCS;
		ck_assert_int_eq(lost, b == 1);
		ck_assert_int_eq(vs_machine_destroy(cur), 0);
	}
}
END_TEST

/* ---- a schedule as text ----------------------------------------------- */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;		/* xorshift64 */
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Random decision lists, as runs record them, survive the text form,
 * which uses only shell-safe characters. */
START_TEST(replay_text_round_trip)
{
	struct vs_vcpu_decision in[64], out[64];
	uint32_t at[VS_VCPU_MAX + 2], check;
	char text[1024];
	uint64_t rng = 1;
	unsigned int list, i, a;
	size_t nr, n;

	for (list = 0; list < 500; list++) {
		memset(at, 0, sizeof(at));
		nr = rnd(&rng) % 65;
		for (i = 0; i < nr; i++) {
			a = (unsigned int)(rnd(&rng) % (VS_VCPU_MAX + 2));
			at[a] += (uint32_t)(rnd(&rng) % 3 ?
					    rnd(&rng) % 5 :
					    rnd(&rng) % 100000);
			in[i].ctx = a == VS_VCPU_MAX + 1 ? VS_VCPU_HOST :
				    (uint16_t)a;
			in[i].at = at[a];
			in[i].run = (uint16_t)(rnd(&rng) %
					       (VS_VCPU_MAX + 1));
			in[i].kind = (uint8_t)(rnd(&rng) & 1);
		}
		ck_assert_int_eq(vs_vcpu_replay_encode(in, nr, list * 77u,
						       text, sizeof(text)), 0);
		ck_assert_uint_eq(strspn(text, "abcdefghijklmnopqrstuvwxyz"
				  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"),
				  strlen(text));
		memset(out, 0xa5, sizeof(out));
		ck_assert_int_eq(vs_vcpu_replay_decode(text, out, 64, &n,
						       &check), 0);
		ck_assert_uint_eq(n, nr);
		ck_assert_uint_eq(check, list * 77u);
		for (i = 0; i < nr; i++) {
			ck_assert_uint_eq(out[i].ctx, in[i].ctx);
			ck_assert_uint_eq(out[i].at, in[i].at);
			ck_assert_uint_eq(out[i].run, in[i].run);
			ck_assert_uint_eq(out[i].kind, in[i].kind);
		}
		if (nr > 1)	/* one decision too many for @max */
			ck_assert_int_eq(vs_vcpu_replay_decode(text, out,
					 nr - 1, &n, &check), -E2BIG);
	}
}
END_TEST


/* K/N of a shard: decimal, 1 <= K <= N <= VS_SHARD_MAX, nothing else;
 * a refused text leaves K and N as they were. */
START_TEST(shard_parse)
{
	static const char *const bad[] = {
		"", "1", "0/4", "5/4", "1/0", "-1/4", "+1/4", "1/+4", " 1/4",
		"1/4 ", "1/4/2", "a/4", "1/a", "1//4", "1/100001",
		"99999999999999999999/4",
	};
	unsigned int k = 7, n = 9, i;

	ck_assert_int_eq(vs_shard_parse("3/4", &k, &n), 0);
	ck_assert_uint_eq(k, 3);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(vs_shard_parse("100000/100000", &k, &n), 0);
	ck_assert_uint_eq(k, VS_SHARD_MAX);
	for (i = 0; i < VS_ARRAY_SIZE(bad); i++) {
		k = 7;
		n = 9;
		ck_assert_msg(vs_shard_parse(bad[i], &k, &n) == -EINVAL,
			      "'%s' taken", bad[i]);
		ck_assert_uint_eq(k, 7);
		ck_assert_uint_eq(n, 9);
	}
	ck_assert_int_eq(vs_shard_parse(NULL, &k, &n), -EINVAL);
	ck_assert_int_eq(vs_shard_parse("1/2", NULL, &n), -EINVAL);
	ck_assert_int_eq(vs_shard_parse("1/2", &k, NULL), -EINVAL);
}
END_TEST

/* What vs_json_string() writes, vs_json_string_read() reads back, byte
 * for byte: quotes, backslashes and every control byte; a string that
 * does not fit, or text that is not such a string, is refused. */
START_TEST(json_string_round_trip)
{
	char in[64], text[512], out[64];
	const char *p;
	size_t len = 0;
	FILE *f;
	int c;

	for (c = 1; c < 0x20; c++)
		in[c - 1] = (char)c;
	strcpy(in + 0x1f, "\"\\ end");
	f = fmemopen(text, sizeof(text), "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(vs_json_string(f, in), 0);
	ck_assert_int_eq(fputs(",", f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
	p = text;
	ck_assert_int_eq(vs_json_string_read(&p, out, sizeof(out)), 0);
	ck_assert_str_eq(out, in);
	ck_assert_str_eq(p, ",");
	p = text;
	len = strlen(in);
	ck_assert_int_eq(vs_json_string_read(&p, out, len), -ENOSPC);
	ck_assert_ptr_eq(p, text);
	p = "\"a\\q\"";
	ck_assert_int_eq(vs_json_string_read(&p, out, sizeof(out)), -EINVAL);
	p = "\"open";
	ck_assert_int_eq(vs_json_string_read(&p, out, sizeof(out)), -EINVAL);
	p = "bare";
	ck_assert_int_eq(vs_json_string_read(&p, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(vs_json_string(NULL, "x"), -EINVAL);
	ck_assert_int_eq(vs_json_string(stdout, NULL), -EINVAL);
	ck_assert_int_eq(vs_json_string_read(NULL, out, 1), -EINVAL);
}
END_TEST
/* Whatever is not such a word is refused by name of the error. */
START_TEST(replay_text_refused)
{
	static const char *const bad[] = {
		"", "v1", "v3.AAAA.00000000", "v1.AAAA", "v1.AA$A.00000000",
		"v1.AAAA.0000000", "v1.AAAA.000000000", "v1.AAAA.0000000G",
		"v1.AAAA.0000000A",	/* hex is lowercase */
		"v1.gA.00000000",	/* a varint that never ends */
		"v1.AB.00000000",	/* padding bits set */
		"v1.AAAAA.00000000",	/* one character too many */
		"v1.AAA.00000000",	/* a decision cut short */
		"v1._wQAAA.00000000",	/* an anchor past the contexts */
		"v1.gAAAAA.00000000",	/* a varint longer than it need be */
	};
	struct vs_vcpu_decision d[4] = { { .at = 5, .ctx = 1, .run = 2 },
					 { .at = 4, .ctx = 1, .run = 2 } };
	uint32_t check;
	char text[64];
	size_t i, n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(vs_vcpu_replay_decode(bad[i], d + 2, 2, &n,
						    &check) == -EILSEQ,
			      "accepted '%s'", bad[i]);
	ck_assert_int_eq(vs_vcpu_replay_decode("v1..00000000", NULL, 0, &n,
					       &check), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(vs_vcpu_replay_decode(NULL, d, 2, &n, &check),
			 -EINVAL);
	/* A context's counts go down: no run records that. */
	ck_assert_int_eq(vs_vcpu_replay_encode(d, 2, 0, text, sizeof(text)),
			 -EINVAL);
	d[1].at = 6;
	d[1].kind = VS_VCPU_CHOOSE_FLUSH + 1;	/* no such kind */
	ck_assert_int_eq(vs_vcpu_replay_encode(d, 2, 0, text, sizeof(text)),
			 -EINVAL);
	d[1].kind = 1;
	d[1].run = VS_VCPU_MAX + 1;	/* the contexts are 0..VS_VCPU_MAX */
	ck_assert_int_eq(vs_vcpu_replay_encode(d, 2, 0, text, sizeof(text)),
			 -EINVAL);
	d[1].run = 2;
	ck_assert_int_eq(vs_vcpu_replay_encode(d, 2, 0, text, 12), -ENOSPC);
	ck_assert_int_eq(vs_vcpu_replay_encode(d, 2, 0, NULL, 64), -EINVAL);
	ck_assert_int_eq(vs_vcpu_replay_encode(d, 2, 0, text, sizeof(text)),
			 0);
}
END_TEST

/* ---- schedules that do not fit, bad arguments ---------------------------- */

START_TEST(sched_replay_refused)
{
	struct vs_vcpu_decision d = { .at = 100000, .ctx = 1, .run = 2,
				      .kind = VS_VCPU_CHOOSE_RUN };
	struct vs_vcpu_replay rp = { &d, 1, 0 };
	struct vs_machine_config cfg = { .nr_vcpus = 3,
					 .sched = &vs_vcpu_sched_replay };
	const struct vs_vcpu_decision *dec;
	struct vs_machine *m;
	size_t nr;

	/* A decision never reached: refused, but run leniently (the
	 * defaults, as shrinking needs when it drops decisions). */
	m = mach(&vs_vcpu_sched_replay, &rp, 1);
	(void)run_once(m, -ESTALE);
	ck_assert_int_eq(vs_machine_destroy(m), 0);
	rp.flags = VS_VCPU_REPLAY_LENIENT;
	m = mach(&vs_vcpu_sched_replay, &rp, 1);
	ck_assert_int_eq(run_once(m, 0), 2 * INCS);
	ck_assert_int_eq(vs_machine_destroy(m), 0);
	rp.flags = 0;
	/* One reached where the context it names cannot run. */
	m = mach(&vs_vcpu_sched_random, NULL, 1);
	(void)run_once(m, 0);
	ck_assert_int_eq(vs_machine_decisions(m, &dec, &nr), 0);
	ck_assert_uint_gt(nr, 0);
	d = dec[0];
	d.run = 200;
	ck_assert_int_eq(vs_machine_destroy(m), 0);
	m = mach(&vs_vcpu_sched_replay, &rp, 1);
	(void)run_once(m, -ESTALE);
	ck_assert_int_eq(vs_machine_destroy(m), 0);
	rp.flags = VS_VCPU_REPLAY_LENIENT;	/* skipped */
	m = mach(&vs_vcpu_sched_replay, &rp, 1);
	(void)run_once(m, 0);
	ck_assert_int_eq(vs_machine_destroy(m), 0);
	rp.flags = 0;
	/* Bad arguments. */
	ck_assert_int_eq(vs_machine_create(&m, &cfg), -EINVAL);	/* no arg */
	cfg.sched_arg = &rp;
	rp.flags = 0x2;			/* unknown */
	ck_assert_int_eq(vs_machine_create(&m, &cfg), -EINVAL);
	rp.flags = 0;
	d.run = 999;
	ck_assert_int_eq(vs_machine_create(&m, &cfg), -EINVAL);
	d.run = 1;
	d.kind = 7;
	ck_assert_int_eq(vs_machine_create(&m, &cfg), -EINVAL);
	rp.dec = NULL;
	ck_assert_int_eq(vs_machine_create(&m, &cfg), -EINVAL);
	ck_assert_int_eq(vs_machine_decisions(NULL, &dec, &nr), -EINVAL);
}
END_TEST

/* ---- spinning and sleeping end ------------------------------------------- */

static vs_atomic32_t flag, word;

static void spin_on_flag(void *arg)
{
	(void)arg;
	while (!vs_read_once(&flag))
		vs_cpu_relax();
}

static void sleep_then_set(void *arg)
{
	(void)arg;
	ck_assert_int_eq(vs_futex_wait(&word, 0, 1000000), -ETIMEDOUT);
	vs_write_once(&flag, 1);
}

static void spinner_and_sleeper(void *arg)
{
	int a, b;

	(void)arg;
	a = vs_machine_spawn(cur, 1, spin_on_flag, NULL);
	b = vs_machine_spawn(cur, 2, sleep_then_set, NULL);
	ck_assert_int_eq(vs_machine_join(cur, (unsigned int)a), 0);
	ck_assert_int_eq(vs_machine_join(cur, (unsigned int)b), 0);
}

/* A spinner waiting for a sleeper's timeout: a spinning context is
 * never the default while another can run, and the timeout fires when
 * spinning is all that is left, so every schedule ends: the
 * all-defaults one (an empty replay), 20 random ones, and 20 PCT ones
 * (there a spinner drops below everyone). */
START_TEST(sched_spin_waits_for_timeout)
{
	static const struct vs_vcpu_replay none = { NULL, 0, 0 };
	uint64_t seed;

	for (seed = 0; seed <= 40; seed++) {
		cur = !seed ? mach(&vs_vcpu_sched_replay, &none, seed) :
		      seed <= 20 ? mach(&vs_vcpu_sched_random, NULL, seed) :
		      mach(&vs_vcpu_sched_pct, NULL, seed);
		vs_atomic_init(&flag, 0);
		vs_atomic_init(&word, 0);
		ck_assert_int_eq(vs_machine_run(cur, spinner_and_sleeper,
						NULL), 0);
		ck_assert_int_eq(vs_machine_destroy(cur), 0);
	}
}
END_TEST

Suite *vcpu_sched_suite(void)
{
	Suite *s = suite_create("vcpu_sched");
	TCase *tc = tcase_create("sched");

	/* No vs_test_tcase(): these tests make machines of their own. */
	tcase_set_timeout(tc, VS_TEST_TIMEOUT);
	suite_add_tcase(s, tc);

	tcase_add_test(tc, sched_once_per_choice);
	tcase_add_test(tc, sched_random_finds_replay_repeats);
	tcase_add_test(tc, sched_runs_differ_defaults_repeat);
	tcase_add_test(tc, sched_clock_is_the_default);
	tcase_add_test(tc, sched_pct_depth);
	tcase_add_test(tc, sched_dfs_bounds);
	tcase_add_test(tc, sched_dfs_lost_update);
	tcase_add_test(tc, replay_text_round_trip);
	tcase_add_test(tc, replay_text_refused);
	tcase_add_test(tc, shard_parse);
	tcase_add_test(tc, json_string_round_trip);
	tcase_add_test(tc, sched_replay_refused);
	tcase_add_test(tc, sched_spin_waits_for_timeout);
	return s;
}
