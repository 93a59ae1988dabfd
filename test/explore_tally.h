/* SPDX-License-Identifier: MIT */
/*
 * test/explore_tally.h - explorations of seeds 1 to VS_TALLY_SEEDS that
 * must all pass, told together: which failed, after how many schedules
 * and how long, with the first one's report (test/sync/test_explore.c,
 * test/fault/test_explore_vm.c).
 */
#ifndef VS_TEST_EXPLORE_TALLY_H
#define VS_TEST_EXPLORE_TALLY_H

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <vmsim/check/explore.h>

#include "test.h"

#define VS_TALLY_SEEDS 3

/* The schedules an exploration of a test takes: @n (0: the default,
 * VS_EXPLORE_SCHEDULES) at VS_TEST_SCALE, so that the sanitizer builds,
 * at 50, explore half as many.  A planted bug's test (the teeth) runs at
 * the default scale. */
static inline unsigned int vs_tally_schedules(unsigned int n)
{
	return (unsigned int)vs_test_scale((int)(n ? n : VS_EXPLORE_SCHEDULES));
}

struct vs_tally {
	int failed;
	unsigned long after[VS_TALLY_SEEDS];
	double secs[VS_TALLY_SEEDS];
	struct vs_explore_report first;
};

/* Seed @seed failed after @schedules; @xr is its exploration's report. */
static inline void vs_tally_add(struct vs_tally *t, int seed,
				unsigned long schedules,
				const struct vs_explore_report *xr)
{
	if (!t->failed++)
		t->first = *xr;
	t->after[seed - 1] = schedules;
	t->secs[seed - 1] = xr->seconds;
}

/* Fail the test, naming @what, unless no seed failed. */
static inline void vs_tally_assert(const struct vs_tally *t, const char *what)
{
	ck_assert_msg(!t->failed, "%s: %d of %d seeds failed, after %lu, %lu, "
		      "%lu schedules (%.3f, %.3f, %.3f s); the first:\n%s",
		      what, t->failed, VS_TALLY_SEEDS, t->after[0],
		      t->after[1], t->after[2], t->secs[0], t->secs[1],
		      t->secs[2], t->first.text);
}

/*
 * Explore @sc with @o, its seed set to each of 1 to VS_TALLY_SEEDS and
 * its schedules scaled (vs_tally_schedules()), a line printed a seed,
 * and fail the test, naming @sc, unless every seed passed.  An
 * exploration that could not run (setup's error, a bad option) fails the
 * test at once: it found nothing.
 * Context: a Check test on the host thread.
 */
static inline void vs_tally_explore(const struct vs_explore_scenario *sc,
				    struct vs_explore_options *o)
{
	static struct vs_explore_report xr;
	static struct vs_tally t;
	int seed, err;

	memset(&t, 0, sizeof(t));
	o->max_schedules = vs_tally_schedules(o->max_schedules);
	for (seed = 1; seed <= VS_TALLY_SEEDS; seed++) {
		o->seed = (uint64_t)seed;
		err = vs_explore(sc, o, &xr);
		ck_assert_msg(!err || err == -ECANCELED || err == -EDEADLK,
			      "%s seed %d: vs_explore: %d, after %lu "
			      "schedules: %s", sc->name, seed, err,
			      xr.schedules, xr.text);
		if (!err) {
			printf("%s seed %d: %lu schedules, %.2f s\n", sc->name,
			       seed, xr.schedules, xr.seconds);
			continue;
		}
		printf("%s seed %d: failed after %lu schedules\n", sc->name,
		       seed, xr.schedules);
		vs_tally_add(&t, seed, xr.schedules, &xr);
	}
	vs_tally_assert(&t, sc->name);
}

#endif /* VS_TEST_EXPLORE_TALLY_H */
