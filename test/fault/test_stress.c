/* SPDX-License-Identifier: MIT */
/*
 * The fault stress suite: vs_stress_run() (fault/stress.h says what it
 * checks, fault/stress.c how) for every built-in mmap_lock kind and
 * fault strategy, one test case per kind looping over the strategies.
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

#include "fault/fault.h"
#include "check/stress.h"
#include "sync/lock.h"
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
	       "%lu ops %lu forks %lu+%lu traps %lu checks, %lu "
	       "quiet %lu data %lu racing, %.2f s\n", kind,
	       vs_fault_strategy_name(strategy), rep->faults,
	       st->spf_success, aborts, st->vma_lock_success,
	       st->vma_lock_abort, st->vma_lock_retry, st->vma_lock_miss,
	       rep->ops, rep->forks, rep->traps, rep->move_traps,
	       rep->checks, rep->quiet, rep->data_checks, rep->race_checks,
	       (double)rep->elapsed_ns / 1e9);
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

/* Bad configurations are refused before anything runs. */
START_TEST(stress_einval)
{
	struct vs_stress_config cfg = { .strategy = VS_FAULT_LOCKED };
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
		tc = tcase_create(vs_lock_kind_name(k));
		tcase_set_timeout(tc, 120);
		tcase_add_loop_test(tc, tests[k], 0, VS_FAULT_NR_STRATEGIES);
		suite_add_tcase(s, tc);
	}
	tc = tcase_create("api");
	tcase_set_timeout(tc, VS_TEST_TIMEOUT);
	tcase_add_test(tc, stress_einval);
	tcase_add_test(tc, stress_seed_reported);
	suite_add_tcase(s, tc);
	return s;
}
