/* SPDX-License-Identifier: MIT */
/*
 * The fault stress suite: vs_stress_run() (vmsim/check/stress.h says
 * what it checks, test/check/ how) for every built-in mmap_lock kind and
 * fault strategy, one test case per kind looping over the strategies;
 * then the harness's own teeth: lock kinds and a strategy with planted
 * bugs that the watchdog, the downgrade probe and the fault-result
 * check must report, by name.
 *
 * A run at VS_TEST_SCALE=100 ends once it made RUN_FAULTS faults (5.25
 * million for the 15 runs) and the writer RUN_OPS operations, or after
 * RUN_MS; all three scale.  Each run prints one line: faults, how the
 * strategy resolved them, operations, forks, traps, checks, and the
 * accesses judged (quiet, data, racing).  Violations are described on
 * stderr as they are found; the failure message gives the first, with
 * the configuration and its seed.  VS_STRESS_SEED=n replaces the seeds
 * (0: each configuration's own), e.g.
 *
 *	VS_STRESS_SEED=0x2e2ac13e ./build/test/vmsim-test stress rwsem
 *
 * A seed replays the writer's program, not the interleaving: a failure
 * may need a few runs with its seed to show again.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/check/explore.h>
#include <vmsim/check/stress.h>
#include <vmsim/fault.h>
#include <vmsim/lock.h>
#include <vmsim/page.h>
#include <vmsim/slab.h>

#include "test.h"

Suite *stress_suite(void);

/*
 * Faults are cheap and many, operations slow and few: the operations
 * are what the faults race against.  A run must make RUN_MIN_FAULTS
 * faults at least, or it proved little.
 */
#define RUN_FAULTS 350000
#define RUN_OPS 4000
#define RUN_MS 5000
#define RUN_MIN_FAULTS 20000

/* VS_STRESS_SEED, or 0: each configuration's own seed. */
static uint64_t stress_seed(void)
{
	const char *env = getenv("VS_STRESS_SEED");

	return env && *env ? strtoull(env, NULL, 0) : 0;
}

static void stress_print(const char *kind, int strategy,
			 const struct vs_stress_report *rep)
{
	const struct vs_fault_stats *st = &rep->stats;
	unsigned long aborts = 0;
	int i;

	for (i = 0; i < VS_SPF_ABORT_NR; i++)
		aborts += st->spf_abort[i];
	printf("stress: %-7s %-6s %8lu faults (spf %lu ok %lu abort, "
	       "vma lock %lu ok %lu abort %lu retry %lu miss) "
	       "%lu ops %lu forks %lu downgrades %lu+%lu traps %lu checks, "
	       "%lu quiet %lu data %lu racing, %.2f s\n", kind,
	       vs_fault_strategy_name(strategy), rep->faults,
	       st->spf_success, aborts, st->vma_lock_success,
	       st->vma_lock_abort, st->vma_lock_retry, st->vma_lock_miss,
	       rep->ops, rep->forks, rep->downgrades, rep->traps,
	       rep->move_traps, rep->checks, rep->quiet, rep->data_checks,
	       rep->race_checks, (double)rep->elapsed_ns / 1e9);
	fflush(stdout);
}

static void stress_run(int kind, int strategy)
{
	struct vs_stress_config cfg = {
		.lock_kind = vs_lock_kind_name(kind),
		.strategy = strategy,
		.seed = stress_seed(),
		.faults = (unsigned long)vs_test_scale(RUN_FAULTS),
		.ops = (unsigned long)vs_test_scale(RUN_OPS),
		.max_ms = (unsigned int)vs_test_scale(RUN_MS),
		.log = stderr,
	};
	struct vs_stress_report rep;

	ck_assert_ptr_nonnull(cfg.lock_kind);
	if (vs_test_no_pervma(strategy == VS_FAULT_PERVMA))
		return;
	ck_assert_int_eq(vs_stress_run(&cfg, &rep), 0);
	stress_print(cfg.lock_kind, strategy, &rep);
	ck_assert_msg(rep.violations == 0, "stress %s/%s seed %#llx: %lu "
		      "violation(s), first: %s (rerun: VS_STRESS_SEED=%#llx "
		      "vmsim-test stress %s)", cfg.lock_kind,
		      vs_fault_strategy_name(strategy),
		      (unsigned long long)rep.seed, rep.violations, rep.first,
		      (unsigned long long)rep.seed, cfg.lock_kind);
	ck_assert_msg(rep.faults >=
		      (unsigned long)vs_test_scale(RUN_MIN_FAULTS),
		      "stress %s/%s: only %lu faults", cfg.lock_kind,
		      vs_fault_strategy_name(strategy), rep.faults);
}

/* One test per lock kind, looping over the strategies (_i). */
#define STRESS_KIND(k)				\
	START_TEST(stress_kind##k)		\
	{					\
		stress_run(k, _i);		\
	}					\
	END_TEST

STRESS_KIND(0)
STRESS_KIND(1)
STRESS_KIND(2)
STRESS_KIND(3)
STRESS_KIND(4)

static int native_calls;

static void native_thread(void *state, unsigned int i)
{
	(void)state;
	(void)i;
	native_calls++;
}

/* Bad configurations are refused before anything runs. */
START_TEST(stress_einval)
{
	struct vs_stress_config cfg = { .strategy = VS_FAULT_LOCKED };
	struct vs_fail_options fo = { .kinds = VS_FAIL_PAGE,
				      .probability = 2 };
	struct vs_stress_report rep;

	ck_assert_int_eq(vs_stress_run(NULL, &rep), -EINVAL);
	ck_assert_int_eq(vs_stress_run(&cfg, NULL), -EINVAL);
	cfg.lock_kind = "no-such-kind";
	ck_assert_int_eq(vs_stress_run(&cfg, &rep), -EINVAL);
	cfg.lock_kind = NULL;
	cfg.strategy = -1;
	ck_assert_int_eq(vs_stress_run(&cfg, &rep), -EINVAL);
	cfg.strategy = 1000;
	ck_assert_int_eq(vs_stress_run(&cfg, &rep), -EINVAL);
	cfg.strategy = VS_FAULT_LOCKED;
	cfg.fail = &fo;		/* a probability past 1 */
	ck_assert_int_eq(vs_stress_run(&cfg, &rep), -EINVAL);
	ck_assert_uint_eq(rep.faults, 0);
}
END_TEST

/* Natively, exploration is refused, saying what it needs: only the
 * vCPU build's seams let a scheduler place every shared access. */
START_TEST(explore_needs_vcpus)
{
	static const struct vs_explore_scenario sc = {
		.name = "native", .threads = 1, .thread = native_thread,
	};
	struct vs_explore_report rep;

	ck_assert_int_eq(vs_explore(&sc, NULL, &rep), -EOPNOTSUPP);
	ck_assert_msg(strstr(rep.text, "needs the vCPU build"), "%s",
		      rep.text);
	ck_assert_int_eq(native_calls, 0);
}
END_TEST

/* So is vs_stress_run()'s explore mode, and it runs nothing. */
START_TEST(stress_explore_needs_vcpus)
{
	struct vs_explore_options o = { .seed = 1 };
	struct vs_explore_report xr;
	struct vs_stress_config cfg = { .explore = &o, .explore_report = &xr };
	struct vs_stress_report rep;

	ck_assert_int_eq(vs_stress_run(&cfg, &rep), -EOPNOTSUPP);
	ck_assert_uint_eq(rep.faults, 0);
	ck_assert_uint_eq(rep.violations, 0);
	ck_assert_msg(strstr(xr.text, "needs the vCPU build"), "%s", xr.text);
}
END_TEST

/*
 * A short run: the seed given is the seed reported; none (0) is the
 * configuration's own, the same each time; NULL means "rwsem".
 */
START_TEST(stress_seed_reported)
{
	struct vs_stress_config cfg = { .strategy = VS_FAULT_SPF,
					.seed = 0x2e2ac13e, .faults = 1000,
					.ops = 20, .max_ms = 200,
					.log = stderr };
	struct vs_stress_report rep, rep2;

	ck_assert_int_eq(vs_stress_run(&cfg, &rep), 0);
	ck_assert_msg(rep.violations == 0, "%s", rep.first);
	ck_assert_uint_eq(rep.seed, 0x2e2ac13e);
	ck_assert_uint_ge(rep.ops, 1);
	cfg.seed = 0;
	ck_assert_int_eq(vs_stress_run(&cfg, &rep), 0);
	ck_assert_msg(rep.violations == 0, "%s", rep.first);
	cfg.lock_kind = "rwsem";
	ck_assert_int_eq(vs_stress_run(&cfg, &rep2), 0);
	ck_assert_msg(rep2.violations == 0, "%s", rep2.first);
	ck_assert_uint_ne(rep.seed, 0);
	ck_assert_uint_eq(rep.seed, rep2.seed);
}
END_TEST

/*
 * cfg.runs: that many runs, each with its own seed, the first the one
 * given; the report sums them and gives the last seed.
 */
START_TEST(stress_runs)
{
	struct vs_stress_config cfg = { .strategy = VS_FAULT_PERVMA,
					.seed = 0x2e2ac13e, .faults = 1000,
					.ops = 20, .max_ms = 200, .runs = 3,
					.log = stderr };
	struct vs_stress_report rep, one;

	if (vs_test_no_pervma(cfg.strategy == VS_FAULT_PERVMA))
		return;
	ck_assert_int_eq(vs_stress_run(&cfg, &rep), 0);
	ck_assert_msg(rep.violations == 0, "%s", rep.first);
	ck_assert_uint_eq(rep.runs, 3);
	ck_assert_uint_ge(rep.ops, 3 * 20);
	ck_assert_uint_ne(rep.seed, 0x2e2ac13e);
	cfg.runs = 1;
	cfg.seed = rep.seed;	/* the third run alone */
	ck_assert_int_eq(vs_stress_run(&cfg, &one), 0);
	ck_assert_uint_eq(one.runs, 1);
	ck_assert_uint_eq(one.seed, rep.seed);
}
END_TEST

/* Do 256 objects and 256 pages meet a failure (a run left it on)? */
static int injection_on(void)
{
	static struct vs_kmem_cache cache = VS_KMEM_CACHE_INIT("stress_on",
								64, 8);
	struct vs_page_pool *pool;
	struct vs_page *pg;
	int i, on = 0;
	void *o;

	ck_assert_int_eq(vs_page_pool_create(&pool, 256), 0);
	for (i = 0; i < 256; i++) {
		o = vs_kmem_cache_alloc(&cache);
		pg = vs_alloc_page(pool);
		on |= !o || !pg;
		vs_kmem_cache_free(&cache, o);
		if (pg)
			vs_put_page(pool, pg);
	}
	ck_assert_int_eq(vs_page_pool_destroy(pool), 0);
	return on;
}

/*
 * Allocation failures injected while the threads run (stress.h), two
 * ways per strategy (_i / 2): every kind of object and page failing
 * with probability 0.02, so that operations fail and succeed; and pages
 * only, failing with probability 0.3, so that faults meet failures
 * where few allocate (copy-on-write after a fork).  The draws are
 * seeded per test.  Every failed operation must leave what the
 * kernel's would, an access run out of memory only where it may
 * succeed, the end's checks hold, every object be back in its cache
 * and injection be off; failures must have been met.
 */
START_TEST(stress_fail)
{
	int strategy = _i / 2, pages = _i % 2;
	struct vs_fail_options fo = {
		.kinds = pages ? VS_FAIL_PAGE : VS_FAIL_SLAB | VS_FAIL_PAGE,
		.probability = pages ? 0.3 : 0.02, .seed = (uint64_t)_i + 1,
	};
	struct vs_stress_config cfg = {
		.strategy = strategy, .seed = stress_seed(),
		.faults = (unsigned long)vs_test_scale(RUN_FAULTS / 4),
		.ops = (unsigned long)vs_test_scale(RUN_OPS / 2),
		.max_ms = (unsigned int)vs_test_scale(RUN_MS / 2),
		.log = stderr, .fail = &fo,
	};
	const char *strat = vs_fault_strategy_name(strategy);
	long out = vs_test_slab_out(), after;
	struct vs_stress_report rep;

	if (vs_test_no_pervma(strategy == VS_FAULT_PERVMA))
		return;
	ck_assert_int_eq(vs_stress_run(&cfg, &rep), 0);
	printf("stress fail: %-6s %-10s p %.2f: %8lu faults %lu ops %lu forks, "
	       "%lu failures injected: %lu ops failed with ENOMEM, %lu "
	       "accesses out of memory; %lu violations\n", strat,
	       pages ? "page" : "slab,page", fo.probability, rep.faults,
	       rep.ops, rep.forks, rep.injected, rep.op_enomem, rep.oom,
	       rep.violations);
	fflush(stdout);
	ck_assert_msg(rep.violations == 0, "stress fail %s %s seed %#llx: %s "
		      "(rerun: VS_STRESS_SEED=%#llx vmsim-test stress fail)",
		      strat, pages ? "page" : "slab,page",
		      (unsigned long long)rep.seed, rep.first,
		      (unsigned long long)rep.seed);
	/*
	 * Each way must meet its failures: the objects' in operations, the
	 * pages' in accesses.  Not accesses at p 0.02: spf retries an
	 * out-of-pages fault locked (fault/memory.c), so an access fails
	 * only where two draws do, and a run may see none.
	 */
	ck_assert_msg(pages ? rep.oom > 0 : rep.op_enomem > 0,
		      "stress fail %s: %lu injected, %lu ops and %lu accesses "
		      "failed", strat, rep.injected, rep.op_enomem, rep.oom);
	ck_assert_msg(!injection_on(), "stress fail %s: injection left on",
		      strat);
	after = vs_test_slab_out();
	ck_assert_msg(after == out, "stress fail %s: %ld objects out of the "
		      "caches after the run, %ld before", strat, after, out);
}
END_TEST

/* Register @ops once per process (a test may run in the parent). */
static void kind_register(const struct vs_lock_ops *ops)
{
	int idx = vs_lock_kind_register(ops);

	ck_assert_msg(idx >= 0 || idx == -EEXIST, "register %s: %d",
		      ops->name, idx);
}

/* An rwsem that loses one unlock in 500: the lock stays held. */
static struct vs_lock_ops lossy;
static vs_atomic_long_t unlocks;

static int lost(void)
{
	return vs_fetch_add(&unlocks, 1) % 500 == 499;
}

static void lossy_read_unlock(struct vs_lock *lock)
{
	if (!lost())
		vs_lock_kind_ops("rwsem")->read_unlock(lock);
}

static void lossy_write_unlock(struct vs_lock *lock)
{
	if (!lost())
		vs_lock_kind_ops("rwsem")->write_unlock(lock);
}

/*
 * The lost unlock leaves threads blocked for good: the watchdog stops
 * the run within its bound and names the lock and side they wait for,
 * and the seed.  The blocked threads stay behind in this test's
 * process, which exits.
 */
START_TEST(stress_watchdog_lost_unlock)
{
	struct vs_stress_config cfg = { .lock_kind = "lossy-rwsem",
					.strategy = VS_FAULT_LOCKED,
					.max_ms = 3000, .watchdog_ms = 1000,
					.log = stderr };
	struct vs_stress_report rep;
	char seed[32];
	int64_t t0, ms;

	lossy = *vs_lock_kind_ops("rwsem");
	lossy.name = "lossy-rwsem";
	lossy.read_unlock = lossy_read_unlock;
	lossy.write_unlock = lossy_write_unlock;
	kind_register(&lossy);
	t0 = vs_test_now_ns();
	ck_assert_int_eq(vs_stress_run(&cfg, &rep), -ETIMEDOUT);
	ms = (vs_test_now_ns() - t0) / 1000000;
	/* At the latest: the run's end, the bound, a poll, the reaping. */
	ck_assert_msg(ms <= 3000 + 2 * 1000 + 1000, "reported after %lld ms",
		      (long long)ms);
	snprintf(seed, sizeof(seed), "seed %#llx",
		 (unsigned long long)rep.seed);
	ck_assert_msg(strstr(rep.first, "watchdog: no progress for 1000 ms") &&
		      strstr(rep.first, seed) &&
		      strstr(rep.first, "(stuck): in ") &&
		      strstr(rep.first, "waits for ") &&
		      /* the lost unlock may be a fork child's lock's: "waits
		       * for the fork child's mmap_lock (read)" */
		      (strstr(rep.first, "mmap_lock (write)") ||
		       strstr(rep.first, "mmap_lock (read)")),
		      "report: %s", rep.first);
	ck_assert_uint_ge(rep.violations, 1);
	ck_assert_uint_ge(rep.stuck, 1);
}
END_TEST

/*
 * An rwsem whose downgrade keeps the write hold (the holder's read
 * unlock then drops it): readers stay shut out beside the downgraded
 * holder, and the prober says so.
 */
static struct vs_lock_ops sticky;
static __thread struct vs_lock *kept;

static void sticky_downgrade(struct vs_lock *lock)
{
	kept = lock;
}

static void sticky_read_unlock(struct vs_lock *lock)
{
	if (kept == lock) {
		kept = NULL;
		vs_lock_kind_ops("rwsem")->write_unlock(lock);
	} else {
		vs_lock_kind_ops("rwsem")->read_unlock(lock);
	}
}

START_TEST(stress_downgrade_keeps_writer)
{
	struct vs_stress_config cfg = { .lock_kind = "sticky-rwsem",
					.strategy = VS_FAULT_PERVMA,
					.log = stderr };
	struct vs_stress_report rep;

	if (vs_test_no_pervma(cfg.strategy == VS_FAULT_PERVMA))
		return;
	sticky = *vs_lock_kind_ops("rwsem");
	sticky.name = "sticky-rwsem";
	sticky.downgrade_write = sticky_downgrade;
	sticky.read_unlock = sticky_read_unlock;
	kind_register(&sticky);
	ck_assert_int_eq(vs_stress_run(&cfg, &rep), 0);
	ck_assert_uint_ge(rep.violations, 1);
	ck_assert_msg(strstr(rep.first, "downgrade_write: a reader waited"),
		      "first: %s", rep.first);
}
END_TEST

/* A strategy that answers an instruction fetch with SIGBUS, not SEGV. */
static int exec_sigbus_fault(struct vs_mm *mm, unsigned long addr,
			     unsigned int flags)
{
	if (flags & VS_FAULT_FLAG_INSTRUCTION)
		return VS_VM_FAULT_SIGBUS;
	return vs_fault_strategy_ops(VS_FAULT_LOCKED)->fault(mm, addr, flags);
}

static const struct vs_fault_strategy_ops exec_sigbus = {
	.name = "exec-sigbus",
	.fault = exec_sigbus_fault,
};

/* The wrong result is reported by VM_FAULT name, both ways. */
START_TEST(stress_fault_bits_named)
{
	struct vs_stress_config cfg = { .log = stderr };
	struct vs_stress_report rep;

	cfg.strategy = vs_fault_strategy_register(&exec_sigbus);
	if (cfg.strategy == -EEXIST)
		cfg.strategy = vs_fault_strategy_parse("exec-sigbus");
	ck_assert_int_ge(cfg.strategy, VS_FAULT_NR_STRATEGIES);
	ck_assert_int_eq(vs_stress_run(&cfg, &rep), 0);
	ck_assert_uint_ge(rep.violations, 1);
	ck_assert_msg(strstr(rep.first, "returned VS_VM_FAULT_SIGBUS, "
			     "expected VS_VM_FAULT_SIGSEGV") &&
		      strstr(rep.first, " [writer "),
		      "first: %s", rep.first);
}
END_TEST

Suite *stress_suite(void)
{
	const TTest *tests[] = {
		stress_kind0, stress_kind1, stress_kind2, stress_kind3,
		stress_kind4,
	};
	Suite *s = suite_create("stress");
	TCase *tc;
	int k;

	for (k = 0; k < (int)VS_ARRAY_SIZE(tests) && vs_lock_kind_name(k);
	     k++) {
		tc = vs_test_tcase(s, vs_lock_kind_name(k));
		tcase_set_timeout(tc, 120);
		tcase_add_loop_test(tc, tests[k], 0, VS_FAULT_NR_STRATEGIES);
	}
	vs_test_add(vs_test_tcase(s, "api"), stress_einval,
		    stress_seed_reported, stress_runs);
	tc = vs_test_tcase(s, "fail");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, stress_fail, 0, 2 * VS_FAULT_NR_STRATEGIES);
	/*
	 * Natively only: on vCPUs a stuck lock is the engine's deadlock
	 * report (vmsim/vcpu.h), not the harness's watchdog, and a lost
	 * unlock aborts the run with it.
	 */
	if (!VS_VCPU)
		vs_test_add(vs_test_tcase(s, "teeth"),
			    stress_watchdog_lost_unlock,
			    stress_downgrade_keeps_writer,
			    stress_fault_bits_named);
	if (!VS_VCPU)	/* on vCPUs, the explore suite runs it */
		vs_test_add(vs_test_tcase(s, "explore"), explore_needs_vcpus,
			    stress_explore_needs_vcpus);
	return s;
}
