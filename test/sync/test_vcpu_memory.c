/* SPDX-License-Identifier: MIT */
/*
 * test/sync/test_vcpu_memory.c - the memory models (vcpu/memory_model.c,
 * vs_machine_config.memory), validated by litmus tests: each is run
 * under every schedule DFS finds within 4 preemptions, and the set of
 * outcomes must hold every outcome the model allows and none it
 * forbids.  Then: an object published without a release is reported;
 * a weak schedule replays from its text; bad settings are refused.
 * Runs in vmsim-test-vcpu only.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/atomic.h>
#include <vmsim/rcu.h>
#include <vmsim/vcpu.h>

#include "test.h"

static struct vs_machine *cur;
static vs_atomic32_t x, y;
static uint32_t r0, r1;		/* each thread's result */

/* ---- the litmus tests ---------------------------------------------------- */

struct litmus {
	const char *name;
	void (*t0)(void);
	void (*t1)(void);
};

/* SB: store buffering.  Both loads may miss the other's store when
 * stores wait in a buffer (TSO) or loads read older stores (relaxed). */
static void sb_0(void) { vs_write_once(&x, 1); r0 = vs_read_once(&y); }
static void sb_1(void) { vs_write_once(&y, 1); r1 = vs_read_once(&x); }
/* SB+mb: a full fence between store and load forbids it everywhere. */
static void sbmb_0(void)
{
	vs_write_once(&x, 1);
	vs_smp_mb();
	r0 = vs_read_once(&y);
}
static void sbmb_1(void)
{
	vs_write_once(&y, 1);
	vs_smp_mb();
	r1 = vs_read_once(&x);
}
/* SB with fully ordered RMWs as the stores (x86's locked instructions). */
static void sbx_0(void) { (void)vs_xchg(&x, 1); r0 = vs_read_once(&y); }
static void sbx_1(void) { (void)vs_xchg(&y, 1); r1 = vs_read_once(&x); }
/* MP: message passing: flag seen, data missed (r0 = 1, r1 = 0). */
static void mp_0(void) { vs_write_once(&x, 1); vs_write_once(&y, 1); }
static void mp_1(void) { r0 = vs_read_once(&y); r1 = vs_read_once(&x); }
/* MP+wmb+rmb: the seqcount's pairing forbids it. */
static void mpf_0(void)
{
	vs_write_once(&x, 1);
	vs_smp_wmb();
	vs_write_once(&y, 1);
}
static void mpf_1(void)
{
	r0 = vs_read_once(&y);
	vs_smp_rmb();
	r1 = vs_read_once(&x);
}
/* MP+wmb alone: the reader's loads may still be reordered. */
static void mpw_1(void) { r0 = vs_read_once(&y); r1 = vs_read_once(&x); }
/* MP+release+acquire: forbidden. */
static void mpra_0(void) { vs_write_once(&x, 1); vs_store_release(&y, 1); }
static void mpra_1(void) { r0 = vs_load_acquire(&y); r1 = vs_read_once(&x); }
/* CoRR: two loads of one location never go back in its order. */
static void corr_0(void) { vs_write_once(&x, 1); vs_write_once(&x, 2); }
static void corr_1(void) { r0 = vs_read_once(&x); r1 = vs_read_once(&x); }
/* Two relaxed increments: an RMW reads the newest, none is lost. */
static void inc_0(void) { (void)vs_fetch_add_relaxed(&x, 1); r0 = 0; }
static void inc_1(void) { (void)vs_fetch_add_relaxed(&x, 1); r1 = 0; }

static const struct litmus *test_now;

static void thread0(void *arg) { (void)arg; test_now->t0(); }
static void thread1(void *arg) { (void)arg; test_now->t1(); }

static void litmus_main(void *arg)
{
	int a, b;

	(void)arg;
	a = vs_machine_spawn(cur, 1, thread0, NULL);
	b = vs_machine_spawn(cur, 2, thread1, NULL);
	ck_assert_int_eq(vs_machine_join(cur, (unsigned int)a), 0);
	ck_assert_int_eq(vs_machine_join(cur, (unsigned int)b), 0);
	if (test_now->t0 == inc_0)	/* the count, as r0 */
		r0 = vs_read_once(&x);
}

/*
 * The outcomes of @t under @model, every schedule within 4 preemptions:
 * bit r0 * 3 + r1 for each (r0, r1) seen, values 0..2.
 */
static unsigned int outcomes(const struct litmus *t, unsigned int model)
{
	struct vs_vcpu_dfs arg = { .max_preemptions = 4 };
	struct vs_vcpu_dfs_stats st = { 0 };
	struct vs_machine_config cfg = {
		.nr_vcpus = 3, .sched = &vs_vcpu_sched_dfs, .sched_arg = &arg,
		.memory = model,
	};
	unsigned int seen = 0;

	test_now = t;
	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	while (vs_test_dfs_more(cur, &st, 20000)) {
		vs_atomic_init(&x, 0);
		vs_atomic_init(&y, 0);
		r0 = r1 = 0;
		ck_assert_int_eq(vs_machine_run(cur, litmus_main, NULL), 0);
		ck_assert_uint_le(r0, 2);
		ck_assert_uint_le(r1, 2);
		seen |= 1u << (r0 * 3 + r1);
	}
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
	return seen;
}

#define O(a, b) (1u << ((a) * 3 + (b)))

static const struct litmus sb = { "SB", sb_0, sb_1 };
static const struct litmus sbmb = { "SB+mb", sbmb_0, sbmb_1 };
static const struct litmus sbx = { "SB+xchg", sbx_0, sbx_1 };
static const struct litmus mp = { "MP", mp_0, mp_1 };
static const struct litmus mpf = { "MP+wmb+rmb", mpf_0, mpf_1 };
static const struct litmus mpw = { "MP+wmb", mpf_0, mpw_1 };
static const struct litmus mpra = { "MP+rel+acq", mpra_0, mpra_1 };
static const struct litmus corr = { "CoRR", corr_0, corr_1 };
static const struct litmus inc = { "2 increments", inc_0, inc_1 };

/* Each row: the test, and per model the outcomes that must be seen and
 * those that must not. */
static const struct {
	const struct litmus *t;
	unsigned int must[3], never[3];	/* SC, TSO, relaxed */
} table[] = {
	{ &sb, { O(0, 1) | O(1, 0) | O(1, 1), O(0, 0), O(0, 0) },
	       { O(0, 0), 0, 0 } },
	{ &sbmb, { O(1, 1), O(1, 1), O(1, 1) }, { O(0, 0), O(0, 0), O(0, 0) } },
	{ &sbx, { O(1, 1), O(1, 1), O(1, 1) }, { O(0, 0), O(0, 0), O(0, 0) } },
	{ &mp, { O(0, 0) | O(1, 1) | O(0, 1), O(0, 1), O(1, 0) },
	       { O(1, 0), O(1, 0), 0 } },
	{ &mpf, { O(1, 1), O(1, 1), O(1, 1) }, { O(1, 0), O(1, 0), O(1, 0) } },
	{ &mpw, { O(1, 1), O(1, 1), O(1, 0) }, { O(1, 0), O(1, 0), 0 } },
	{ &mpra, { O(1, 1), O(1, 1), O(1, 1) }, { O(1, 0), O(1, 0), O(1, 0) } },
	{ &corr, { O(0, 2) | O(2, 2) | O(1, 2), O(0, 2), O(0, 1) | O(1, 2) },
		 { O(2, 1) | O(2, 0) | O(1, 0), O(2, 1) | O(2, 0) | O(1, 0),
		   O(2, 1) | O(2, 0) | O(1, 0) } },
	{ &inc, { O(2, 0), O(2, 0), O(2, 0) },
		{ O(1, 0) | O(0, 0), O(1, 0) | O(0, 0), O(1, 0) | O(0, 0) } },
};

START_TEST(litmus)
{
	static const char *const model[] = { "SC", "TSO", "relaxed" };
	unsigned int i = (unsigned int)_i / 3, mo = (unsigned int)_i % 3;
	unsigned int seen = outcomes(table[i].t, mo), k;

	printf("%-12s %-8s", table[i].t->name, model[mo]);
	for (k = 0; k < 9; k++)
		if (seen & 1u << k)
			printf(" %u%u", k / 3, k % 3);
	printf("\n");
	if ((seen & table[i].must[mo]) != table[i].must[mo] ||
	    (seen & table[i].never[mo]))
		ck_abort_msg("%s under %s: outcomes 0x%x, must 0x%x, never "
			     "0x%x", table[i].t->name, model[mo], seen,
			     table[i].must[mo], table[i].never[mo]);
}
END_TEST

/* ---- publication --------------------------------------------------------- */

struct obj {
	vs_atomic32_t a;
};

static VS_ATOMIC(struct obj *) ptr;
static int release_it;

static void publisher(void *arg)
{
	struct obj *o = arg;

	vs_vcpu_unpoison(o, sizeof(*o));	/* allocated, as a cache's */
	vs_write_once(&o->a, 1);
	if (release_it)
		vs_store_release(&ptr, o);
	else
		vs_write_once(&ptr, o);
}

static void subscriber(void *arg)
{
	struct obj *o;

	(void)arg;
	o = vs_load_acquire(&ptr);
	if (o)
		r0 = vs_read_once(&o->a);
}

static void publish_main(void *arg)
{
	int a, b;

	a = vs_machine_spawn(cur, 1, publisher, arg);
	b = vs_machine_spawn(cur, 2, subscriber, NULL);
	(void)vs_machine_join(cur, (unsigned int)a);
	(void)vs_machine_join(cur, (unsigned int)b);
}

/* A relaxed publish of a fresh object: the first schedule where the
 * subscriber sees the pointer fails, naming it; a release never does. */
START_TEST(publication)
{
	struct vs_vcpu_dfs arg = { .max_preemptions = 2 };
	struct vs_vcpu_dfs_stats st = { 0 };
	struct vs_machine_config cfg = {
		.nr_vcpus = 3, .sched = &vs_vcpu_sched_dfs, .sched_arg = &arg,
		.memory = VS_VCPU_MEM_RELAXED,
	};
	struct obj *o = malloc(sizeof(*o));
	int failed = 0, err;

	ck_assert_ptr_nonnull(o);
	release_it = _i;
	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	while (!failed && vs_test_dfs_more(cur, &st, 20000)) {
		vs_atomic_init(&ptr, NULL);
		vs_atomic_init(&o->a, 0);
		err = vs_machine_run(cur, publish_main, o);
		if (err) {
			ck_assert_int_eq(err, -ECANCELED);
			ck_assert_ptr_nonnull(strstr(vs_machine_report(cur),
						     "unpublished object"));
			failed = 1;
		}
	}
	ck_assert_int_eq(failed, !release_it);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
	free(o);
}
END_TEST

/* ---- a join after its context was taken again ------------------------ */

static void store_x(void *arg)
{
	(void)arg;
	vs_write_once(&x, 1);
}

static void nothing(void *arg)
{
	(void)arg;
}

/* a ends before b is spawned, and b takes its context: a join of that
 * id still sees a's store. */
static void rejoin_main(void *arg)
{
	int a, b;

	(void)arg;
	a = vs_machine_spawn(cur, 1, store_x, NULL);
	while (vs_machine_pick_vcpu(cur) != 1)	/* a has ended */
		vs_cpu_relax();
	b = vs_machine_spawn(cur, 2, nothing, NULL);
	if (a != b)
		(void)vs_machine_fail("b has a context of its own: %d, %d",
				      a, b);
	(void)vs_machine_join(cur, (unsigned int)a);
	if (vs_read_once(&x) != 1)
		(void)vs_machine_fail("the join missed the store of the work "
				      "that ended on its context");
}

/* Every schedule DFS reaches, every value a relaxed load may read. */
START_TEST(join_reused_context)
{
	struct vs_vcpu_dfs arg = { .max_preemptions = 2 };
	struct vs_vcpu_dfs_stats st = { 0 };
	struct vs_machine_config cfg = {
		.nr_vcpus = 3, .sched = &vs_vcpu_sched_dfs, .sched_arg = &arg,
		.memory = VS_VCPU_MEM_RELAXED,
	};
	int runs = 0;

	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	while (vs_test_dfs_more(cur, &st, 20000)) {
		vs_atomic_init(&x, 0);
		ck_assert_msg(vs_machine_run(cur, rejoin_main, NULL) == 0,
			      "%s", vs_machine_report(cur));
		runs++;
	}
	ck_assert_int_gt(runs, 1);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/* ---- replay -------------------------------------------------------------- */

static void mp_checked(void *arg)
{
	(void)arg;
	test_now = &mp;
	litmus_main(NULL);
	if (r0 == 1 && r1 == 0)
		(void)vs_machine_fail("MP: flag without data");
}

/* DFS finds MP's weak outcome under relaxed; its schedule, as text
 * ("v2."), replays it in a new machine with the same event hash. */
START_TEST(replay_weak)
{
	struct vs_vcpu_dfs arg = { .max_preemptions = 4 };
	struct vs_vcpu_decision dec[64];
	struct vs_vcpu_replay rp = { 0 };
	struct vs_machine_config cfg = {
		.nr_vcpus = 3, .sched = &vs_vcpu_sched_dfs, .sched_arg = &arg,
		.memory = VS_VCPU_MEM_RELAXED,
	};
	const struct vs_vcpu_decision *d;
	uint64_t hash;
	uint32_t check;
	char text[256];
	size_t n, nr;
	int err = 0, i;

	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	for (i = 0; i < 1000 && !err; i++) {
		vs_atomic_init(&x, 0);
		vs_atomic_init(&y, 0);
		ck_assert_int_eq(vs_machine_reset(cur, 0), 0);	/* the hash */
		err = vs_machine_run(cur, mp_checked, NULL);
	}
	ck_assert_int_eq(err, -ECANCELED);
	ck_assert_int_eq(vs_machine_decisions(cur, &d, &n), 0);
	hash = vs_machine_hash(cur);
	ck_assert_int_eq(vs_vcpu_replay_encode(d, n, (uint32_t)hash, text,
					       sizeof(text)), 0);
	ck_assert_int_eq(strncmp(text, "v2.", 3), 0);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);

	ck_assert_int_eq(vs_vcpu_replay_decode(text, dec, 64, &nr, &check), 0);
	ck_assert_uint_eq(nr, n);
	rp.dec = dec;
	rp.nr = nr;
	cfg.sched = &vs_vcpu_sched_replay;
	cfg.sched_arg = &rp;
	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	vs_atomic_init(&x, 0);
	vs_atomic_init(&y, 0);
	ck_assert_int_eq(vs_machine_run(cur, mp_checked, NULL), -ECANCELED);
	ck_assert_uint_eq((uint32_t)vs_machine_hash(cur), check);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/* ---- three threads: release sequences, coherence through others ---------- */

static vs_atomic32_t z;
static uint32_t r2;

/* A release RMW that leaves the value as it was still heads a release
 * sequence: thread 2, acquiring y after thread 1's increment, sees x. */
static void rs_0(void *a)
{
	(void)a;
	vs_write_once(&x, 1);
	(void)vs_fetch_add_release(&y, 0);
	vs_store_release(&z, 1);
}
static void rs_1(void *a)
{
	(void)a;
	if (vs_load_acquire(&z)) {
		r2 = 1;
		(void)vs_fetch_add_relaxed(&y, 1);
	}
}
static void rs_2(void *a)
{
	(void)a;
	r0 = vs_load_acquire(&y);
	r1 = vs_read_once(&x);
}
/* Read-read coherence through another: thread 1 read x = 1 and then
 * released; thread 2, acquiring that, cannot read x = 0. */
static void co_0(void *a) { (void)a; vs_write_once(&x, 1); }
static void co_1(void *a)
{
	(void)a;
	if (vs_read_once(&x) == 1) {
		r2 = 1;
		vs_store_release(&z, 1);
	}
}
static void co_2(void *a)
{
	(void)a;
	r0 = vs_load_acquire(&z);
	r1 = vs_read_once(&x);
}

static void (*three[3])(void *);

static void three_main(void *arg)
{
	int id[3], i;

	(void)arg;
	for (i = 0; i < 3; i++)
		id[i] = vs_machine_spawn(cur, (unsigned int)i + 1, three[i],
					 NULL);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(vs_machine_join(cur, (unsigned int)id[i]), 0);
}

/* Every schedule within 3 preemptions under relaxed: the forbidden
 * outcome (thread 1 took its branch, thread 2 saw its release and then
 * x = 0) never, and thread 1's branch does. */
START_TEST(three_threads)
{
	struct vs_vcpu_dfs arg = { .max_preemptions = 3 };
	struct vs_vcpu_dfs_stats st = { 0 };
	struct vs_machine_config cfg = {
		.nr_vcpus = 4, .sched = &vs_vcpu_sched_dfs, .sched_arg = &arg,
		.memory = VS_VCPU_MEM_RELAXED,
	};
	unsigned long branch = 0;

	three[0] = _i ? co_0 : rs_0;
	three[1] = _i ? co_1 : rs_1;
	three[2] = _i ? co_2 : rs_2;
	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	while (vs_test_dfs_more(cur, &st, 20000)) {
		vs_atomic_init(&x, 0);
		vs_atomic_init(&y, 0);
		vs_atomic_init(&z, 0);
		r0 = r1 = r2 = 0;
		ck_assert_int_eq(vs_machine_run(cur, three_main, NULL), 0);
		ck_assert_msg(!(r2 && r0 == 1 && r1 == 0),
			      "%s: the forbidden outcome at schedule %lu",
			      _i ? "coherence" : "release sequence",
			      st.schedules);
		branch += r2;
	}
	ck_assert_uint_gt(branch, 0);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/* ---- without a scheduler, with a profile ---------------------------------- */

static vs_atomic32_t w[3];

/* Each stores and loads words both touch; the first also reads back
 * its own store, which it must see. */
static void costly(void *arg)
{
	uint32_t i = (uint32_t)(uintptr_t)arg, k;

	for (k = 1; k <= 200; k++) {
		vs_write_once(&w[i], k);
		if (vs_read_once(&w[i]) != k)
			(void)vs_machine_fail("read back %u, stored %u",
					      vs_read_once(&w[i]), k);
		(void)vs_read_once(&w[1 - i]);
		(void)vs_read_once(&w[2]);
		vs_write_once(&w[2], k);
	}
}

static void costly_main(void *arg)
{
	int a, b;

	(void)arg;
	a = vs_machine_spawn(cur, 1, costly, (void *)0);
	b = vs_machine_spawn(cur, 2, costly, (void *)1);
	ck_assert_int_eq(vs_machine_join(cur, (unsigned int)a), 0);
	ck_assert_int_eq(vs_machine_join(cur, (unsigned int)b), 0);
}

/* With a profile and no scheduler an event may yield twice (its line's
 * lead): each store still lands, each load of one's own store sees it,
 * and memory ends with the last stores, under TSO and relaxed. */
START_TEST(profile_without_scheduler)
{
	struct vs_vcpu_profile p;
	char err[256];
	struct vs_machine_config cfg = { .nr_vcpus = 4, .profile = &p,
					 .memory = (unsigned int)_i + 1 };
	int r;

	ck_assert_int_eq(vs_vcpu_profile_load(&p, "ivb-ep-2x10x2", err,
					      sizeof(err)), 0);
	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	for (r = 0; r < 10; r++) {
		memset(w, 0, sizeof(w));
		ck_assert_int_eq(vs_machine_reset(cur, (uint64_t)r + 1), 0);
		ck_assert_int_eq(vs_machine_run(cur, costly_main, NULL), 0);
		ck_assert_uint_eq(atomic_load(&w[0]), 200);
		ck_assert_uint_eq(atomic_load(&w[1]), 200);
		ck_assert_uint_eq(atomic_load(&w[2]), 200);
	}
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/* ---- many works ------------------------------------------------------------ */

static vs_atomic32_t many[12];

/* Stores that wait in a buffer, then an RCU section, then a wait. */
static void buffered(void *arg)
{
	unsigned int i = (unsigned int)(uintptr_t)arg;

	vs_write_once(&many[i], 1);
	(void)vs_read_once(&many[(i + 1) % 12]);
	vs_rcu_read_lock();
	vs_rcu_read_unlock();
}

static void many_main(void *arg)
{
	int id[12], i;

	(void)arg;
	for (i = 0; i < 12; i++)
		id[i] = vs_machine_spawn(cur, (unsigned int)i + 1, buffered,
					 (void *)(uintptr_t)i);
	for (i = 11; i >= 0; i--)
		ck_assert_int_eq(vs_machine_join(cur, (unsigned int)id[i]), 0);
}

/* Twelve works' buffers at once under TSO (flush choices of up to 13
 * alternatives) and under relaxed, the first 300 schedules DFS takes
 * within one preemption: the stores are all in memory at the end. */
START_TEST(many_buffers)
{
	struct vs_vcpu_dfs arg = { .max_preemptions = 1 };
	struct vs_vcpu_dfs_stats st = { 0 };
	struct vs_machine_config cfg = {
		.nr_vcpus = 13, .sched = &vs_vcpu_sched_dfs, .sched_arg = &arg,
		.memory = (unsigned int)_i + 1,
	};
	int i;

	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	while (vs_test_dfs_more(cur, &st, ULONG_MAX) && st.schedules < 300) {
		memset(many, 0, sizeof(many));
		ck_assert_int_eq(vs_machine_run(cur, many_main, NULL), 0);
		for (i = 0; i < 12; i++)
			ck_assert_uint_eq(atomic_load(&many[i]), 1);
	}
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/* ---- settings ------------------------------------------------------------- */

static vs_atomic32_t go;

static void waiter(void *arg)
{
	(void)arg;
	vs_rcu_read_lock();	/* the engine's clocks, for every work */
	vs_rcu_read_unlock();
	while (!vs_read_once(&go))
		vs_cpu_relax();
}

/* Spawn 20 works that stay until all are spawned: *@arg is 0, or the
 * error of the spawn that failed. */
static void many_works(void *arg)
{
	int i, id, *last = arg;

	*last = 0;
	vs_write_once(&go, 0);
	for (i = 0; i < 20 && !*last; i++) {
		id = vs_machine_spawn(cur, 1, waiter, NULL);
		if (id < 0)
			*last = id;
	}
	vs_write_once(&go, 1);
}

START_TEST(settings)
{
	struct vs_machine_config cfg = { .nr_vcpus = 2, .memory = 3 };
	int last = 1;

	ck_assert_int_eq(vs_machine_create(&cur, &cfg), -EINVAL);
	/* Relaxed has clocks for works 0..14: the 16th is refused. */
	cfg.memory = VS_VCPU_MEM_RELAXED;
	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	ck_assert_int_eq(vs_machine_run(cur, many_works, &last), 0);
	ck_assert_int_eq(last, -EAGAIN);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
	cfg.memory = VS_VCPU_MEM_TSO;
	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	ck_assert_int_eq(vs_machine_run(cur, many_works, &last), 0);
	ck_assert_int_eq(last, 0);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

Suite *vcpu_memory_suite(void)
{
	Suite *s = suite_create("vcpu_memory");
	TCase *tc = tcase_create("litmus");

	tcase_add_loop_test(tc, litmus, 0,
			    (int)(3 * sizeof(table) / sizeof(table[0])));
	tcase_add_loop_test(tc, publication, 0, 2);
	tcase_add_test(tc, join_reused_context);
	tcase_add_test(tc, replay_weak);
	tcase_add_loop_test(tc, three_threads, 0, 2);
	tcase_add_loop_test(tc, profile_without_scheduler, 0, 2);
	tcase_add_loop_test(tc, many_buffers, 0, 2);
	tcase_add_test(tc, settings);
	suite_add_tcase(s, tc);
	return s;
}
