/* SPDX-License-Identifier: MIT */
/*
 * test/fault/test_workload.c - tests for vmsim/workload.h: the barrier,
 * a workload written here, the measured phase, every built-in workload
 * in both modes at a small size, and bad arguments.
 *
 * In vmsim-test-vcpu (the suite on 4 and 16 vCPUs) the same tests run
 * the tasks on vCPUs: vs_workload_run() spawns them on the test's
 * machine, and the userfaultfd and host backings are refused.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>

#include <vmsim/error.h>
#include <vmsim/fault.h>
#include <vmsim/thread.h>
#include <vmsim/workload.h>

#include "test.h"

#define NR_TASKS 4
#define SMALL (64UL << 10)	/* bytes a task faults per pass */
#define SHORT_NS (2 * 1000000ULL)

/* ---- the barrier --------------------------------------------------------- */

#define BAR_THREADS 3
#define BAR_ROUNDS 50

static struct vs_workload_barrier bar;
static vs_atomic32_t arrived[BAR_THREADS], lasts;
static vs_atomic32_t bad;

/* Each round: count yourself in, wait, check everyone is in this round. */
static void *bar_thread(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg, r, i;

	for (r = 1; r <= BAR_ROUNDS; r++) {
		vs_write_once(&arrived[me], r);
		if (vs_workload_barrier_wait(&bar) == 1)
			vs_fetch_add(&lasts, 1);
		for (i = 0; i < BAR_THREADS; i++)
			if (vs_read_once(&arrived[i]) < r)
				vs_write_once(&bad, 1);
		vs_workload_barrier_wait(&bar);
	}
	return NULL;
}

START_TEST(test_barrier_orders)
{
	pthread_t tid[BAR_THREADS];
	unsigned int i;

	ck_assert_int_eq(vs_workload_barrier_init(&bar, BAR_THREADS), 0);
	vs_atomic_init(&lasts, 0);
	vs_atomic_init(&bad, 0);
	for (i = 0; i < BAR_THREADS; i++) {
		vs_atomic_init(&arrived[i], 0);
		vs_test_thread_create(&tid[i], bar_thread, (void *)(uintptr_t)i);
	}
	for (i = 0; i < BAR_THREADS; i++)
		vs_test_thread_join_ret(tid[i]);
	ck_assert_uint_eq(vs_read_once(&bad), 0);
	/* One last arrival per generation, two generations per round. */
	ck_assert_uint_eq(vs_read_once(&lasts), BAR_ROUNDS);
}
END_TEST

START_TEST(test_barrier_bad)
{
	struct vs_workload_barrier b = { 0 };

	ck_assert_int_eq(vs_workload_barrier_init(NULL, 1), -EINVAL);
	ck_assert_int_eq(vs_workload_barrier_init(&b, 0), -EINVAL);
	ck_assert_int_eq(vs_workload_barrier_wait(NULL), -EINVAL);
	ck_assert_int_eq(vs_workload_barrier_wait(&b), -EINVAL);
	ck_assert_int_eq(vs_workload_barrier_init(&b, 1), 0);
	ck_assert_int_eq(vs_workload_barrier_wait(&b), 1);
}
END_TEST

/* ---- a workload written here ---------------------------------------------- */

/*
 * "stripes": each task writes its own page of every stripe of one
 * mapping (task i: page i of each NR_TASKS-page stripe); task 0 zaps
 * the mapping in the serial phase.  The counts below are exact.
 */
#define STRIPES 8

struct stripes {
	unsigned long base;
	unsigned int serials;
	bool serial_saw_all;	/* every task's pages were in at serial */
};

static struct stripes st;

static int stripes_setup(struct vs_workload *w)
{
	long a = vs_workload_mmap(w, w->mm, STRIPES * NR_TASKS * VS_PAGE_SIZE,
				  false);

	st.base = a < 0 ? 0 : (unsigned long)a;
	w->priv = &st;
	return a < 0 ? (int)a : 0;
}

static int stripes_pass(struct vs_workload_task *t)
{
	struct stripes *s = t->w->priv;
	unsigned int i;
	int err = 0;

	for (i = 0; i < STRIPES && !err; i++)
		err = vs_workload_touch(t, s->base + (i * NR_TASKS + t->id) *
					VS_PAGE_SIZE);
	return err;
}

static int stripes_serial(struct vs_workload *w)
{
	struct stripes *s = w->priv;
	unsigned long pages = 0;
	unsigned int i;

	for (i = 0; i < w->cfg.nr_tasks; i++)
		pages += (unsigned long)w->task[i].pages;
	/* The barrier before it: every task's pass is done. */
	if (pages != (s->serials + 1) * (unsigned long)STRIPES * NR_TASKS)
		s->serial_saw_all = false;
	s->serials++;
	return vs_workload_zap(w, w->mm, s->base,
			       STRIPES * NR_TASKS * VS_PAGE_SIZE);
}

static const struct vs_workload_ops stripes_ops = {
	.name = "stripes",
	.about = "a page of each stripe, task 0 zaps",
	.bytes = STRIPES * VS_PAGE_SIZE,
	.setup = stripes_setup,
	.pass = stripes_pass,
	.serial = stripes_serial,
};

/* What the hooks saw. */
static vs_atomic32_t starts, ends, end_passes, end_pages, measures_begun,
		     measures_ended, spans;

static void h_task_start(struct vs_workload_task *t)
{
	(void)t;
	starts++;			/* a real atomic: no event */
}

/* A task's counters are final at its end: their sums are the result's. */
static void h_task_end(struct vs_workload_task *t)
{
	ends++;
	end_passes += (uint32_t)t->passes;
	end_pages += (uint32_t)t->pages;
}

static void h_measure(struct vs_workload *w, bool end)
{
	(void)w;
	if (end)
		measures_ended++;
	else
		measures_begun++;
}

static void h_span(struct vs_workload *w, const char *name, uint64_t t0,
		   uint64_t t1)
{
	(void)w;
	(void)name;
	ck_assert_uint_le(t0, t1);
	spans++;
}

static const struct vs_workload_hooks test_hooks = {
	.task_start = h_task_start,
	.task_end = h_task_end,
	.measure = h_measure,
	.span = h_span,
};

static void hooks_reset(void)
{
	starts = ends = end_passes = end_pages = 0;
	measures_begun = measures_ended = spans = 0;
}

START_TEST(test_own_workload)
{
	struct vs_workload_config c = {
		.ops = &stripes_ops, .nr_tasks = NR_TASKS,
		.duration_ns = SHORT_NS, .strategy = VS_FAULT_SPF,
		.hooks = &test_hooks,
	};
	struct vs_workload_result r;

	vs_thread_attach();
	memset(&st, 0, sizeof(st));
	st.serial_saw_all = true;
	hooks_reset();
	ck_assert_int_eq(vs_workload_run(&c, &r), 0);
	ck_assert(st.serial_saw_all);
	ck_assert_uint_ge(st.serials, 1);
	/* Every pass is followed by a serial phase; each wrote its pages
	 * into zapped memory: a fault each. */
	ck_assert_uint_eq(r.passes, (uint64_t)st.serials * NR_TASKS);
	ck_assert_uint_eq(r.pages, (uint64_t)st.serials * STRIPES * NR_TASKS);
	ck_assert_uint_eq(r.faults, r.pages);
	ck_assert_uint_eq(r.st.faults, r.faults);
	ck_assert_uint_gt(r.ns, 0);
	ck_assert_uint_eq(starts, NR_TASKS);
	ck_assert_uint_eq(ends, NR_TASKS);
	ck_assert_uint_eq(end_passes, r.passes);
	ck_assert_uint_eq(end_pages, r.pages);
	ck_assert_uint_eq(measures_begun, 1);
	ck_assert_uint_eq(measures_ended, 1);
	/* setup, teardown and each serial phase */
	ck_assert_uint_eq(spans, st.serials + 2);
}
END_TEST

/* Duration 0: one pass of each task, then one serial phase. */
START_TEST(test_one_pass)
{
	struct vs_workload_config c = {
		.ops = &stripes_ops, .nr_tasks = NR_TASKS,
		.strategy = VS_FAULT_LOCKED,
	};
	struct vs_workload_result r;

	vs_thread_attach();
	memset(&st, 0, sizeof(st));
	st.serial_saw_all = true;
	ck_assert_int_eq(vs_workload_run(&c, &r), 0);
	ck_assert_uint_eq(st.serials, 1);
	ck_assert_uint_eq(r.passes, NR_TASKS);
	ck_assert_uint_eq(r.faults, STRIPES * NR_TASKS);
}
END_TEST

/* Without a serial phase each task leaves on its own: the hooks see
 * every task start and end, and the ends' counters add up. */
START_TEST(test_free_hooks)
{
	struct vs_workload_ops ops = stripes_ops;
	struct vs_workload_config c = {
		.ops = &ops, .nr_tasks = NR_TASKS,
		.strategy = VS_FAULT_PERVMA, .hooks = &test_hooks,
	};
	struct vs_workload_result r;

	if (vs_test_no_pervma(c.strategy == VS_FAULT_PERVMA))
		return;
	ops.serial = NULL;
	vs_thread_attach();
	hooks_reset();
	ck_assert_int_eq(vs_workload_run(&c, &r), 0);
	ck_assert_uint_eq(r.passes, NR_TASKS);
	ck_assert_uint_eq(r.pages, STRIPES * NR_TASKS);
	ck_assert_uint_eq(starts, NR_TASKS);
	ck_assert_uint_eq(ends, NR_TASKS);
	ck_assert_uint_eq(end_passes, r.passes);
	ck_assert_uint_eq(end_pages, r.pages);
	ck_assert_uint_eq(measures_ended, 1);
}
END_TEST

/* A pass that fails ends the run with its error.  One pass of each
 * (duration 0): the others' passes do nothing, which on vCPUs takes no
 * virtual time, so a deadline would never come. */
static int failing_pass(struct vs_workload_task *t)
{
	return t->id == 1 ? -ENOSPC : 0;
}

START_TEST(test_pass_error)
{
	struct vs_workload_ops ops = { .name = "fails", .bytes = VS_PAGE_SIZE,
				       .pass = failing_pass };
	struct vs_workload_config c = { .ops = &ops, .nr_tasks = 2 };
	struct vs_workload_result r;

	vs_thread_attach();
	ck_assert_int_eq(vs_workload_run(&c, &r), -ENOSPC);
	ops.serial = stripes_serial;
	ops.setup = stripes_setup;
	ck_assert_int_eq(vs_workload_run(&c, &r), -ENOSPC);
}
END_TEST

/* ---- the built-in workloads ------------------------------------------------- */

/* Each built-in, in each mode, at SMALL bytes: _i is workload i / 2,
 * mode i % 2. */
START_TEST(test_builtin)
{
	const struct vs_workload_ops *ops = vs_workload_builtin(_i / 2);
	struct vs_workload_config c = {
		.ops = ops, .nr_tasks = 3, .mode = _i % 2, .bytes = SMALL,
		.duration_ns = SHORT_NS, .strategy = _i % 3,
	};
	struct vs_workload_result r;

	vs_thread_attach();
	ck_assert_ptr_nonnull(ops);
	ck_assert_ptr_eq(vs_workload_find(ops->name), ops);
	if (vs_test_no_pervma(c.strategy == VS_FAULT_PERVMA)) {
		ck_assert_int_eq(vs_workload_run(&c, &r), -EOPNOTSUPP);
		return;
	}
	ck_assert_int_eq(vs_workload_run(&c, &r), 0);
	ck_assert_uint_ge(r.passes, 3);
	/* Every page written is a fault: nothing was mapped before. */
	ck_assert_uint_eq(r.pages, r.passes * (SMALL / VS_PAGE_SIZE));
	ck_assert_uint_eq(r.faults, r.pages);
	ck_assert_uint_eq(r.st.sigsegv + r.st.sigbus + r.st.oom, 0);
}
END_TEST

/* The same on userfaultfd memory: real stores, or refused on vCPUs. */
START_TEST(test_builtin_uffd)
{
	struct vs_workload_config c = {
		.ops = vs_workload_builtin(_i), .nr_tasks = 2,
		.backing = VS_WORKLOAD_UFFD, .bytes = SMALL,
		.duration_ns = SHORT_NS, .strategy = VS_FAULT_SPF,
	};
	struct vs_workload_result r;
	int err;

	vs_thread_attach();
	err = vs_workload_run(&c, &r);
	if (VS_VCPU) {
		ck_assert_int_eq(err, -EOPNOTSUPP);
		return;
	}
	if (err == -EPERM || err == -ENOSYS || err == -EOPNOTSUPP)
		return;		/* no userfaultfd here: uffd says why */
	ck_assert_int_eq(err, 0);
	ck_assert_uint_ge(r.passes, 2);
	ck_assert_uint_eq(r.pages, r.passes * (SMALL / VS_PAGE_SIZE));
	ck_assert_uint_ge(r.faults, r.pages);
}
END_TEST

START_TEST(test_builtin_host)
{
	struct vs_workload_config c = {
		.ops = vs_workload_builtin(_i), .nr_tasks = 2,
		.backing = VS_WORKLOAD_HOST, .bytes = SMALL,
		.duration_ns = SHORT_NS,
	};
	struct vs_workload_result r;
	int err;

	vs_thread_attach();
	err = vs_workload_run(&c, &r);
	if (VS_VCPU) {
		ck_assert_int_eq(err, -EOPNOTSUPP);
		return;
	}
	ck_assert_int_eq(err, 0);
	ck_assert_uint_eq(r.pages, r.passes * (SMALL / VS_PAGE_SIZE));
	ck_assert_uint_gt(r.faults, 0);
}
END_TEST

/* ---- bad arguments ------------------------------------------------------------ */

START_TEST(test_bad_config)
{
	struct vs_workload_config c = {
		.ops = vs_workload_find("multi-fault"), .nr_tasks = 1,
	};
	struct vs_workload_ops no_pass = { .name = "x", .bytes = 4096 };
	struct vs_workload_result r;

	vs_thread_attach();
	ck_assert_int_eq(vs_workload_run(NULL, &r), -EINVAL);
	ck_assert_int_eq(vs_workload_run(&c, NULL), -EINVAL);
	c.nr_tasks = 0;
	ck_assert_int_eq(vs_workload_run(&c, &r), -EINVAL);
	c.nr_tasks = VS_WORKLOAD_MAX_TASKS + 1;
	ck_assert_int_eq(vs_workload_run(&c, &r), -EINVAL);
	c.nr_tasks = 1;
	c.mode = VS_WORKLOAD_NR_MODES;
	ck_assert_int_eq(vs_workload_run(&c, &r), -EINVAL);
	c.mode = -1;
	ck_assert_int_eq(vs_workload_run(&c, &r), -EINVAL);
	c.mode = 0;
	c.backing = VS_WORKLOAD_NR_BACKINGS;
	ck_assert_int_eq(vs_workload_run(&c, &r), -EINVAL);
	c.backing = VS_WORKLOAD_MODEL;
	c.bytes = 100;
	ck_assert_int_eq(vs_workload_run(&c, &r), -EINVAL);
	c.bytes = 0;
	c.strategy = 99;
	ck_assert_int_eq(vs_workload_run(&c, &r), -EINVAL);
	c.strategy = 0;
	c.ops = &no_pass;
	ck_assert_int_eq(vs_workload_run(&c, &r), -EINVAL);
	c.ops = NULL;
	ck_assert_int_eq(vs_workload_run(&c, &r), -EINVAL);
	c.ops = vs_workload_find("multi-fault");
	c.mode = VS_WORKLOAD_PROCESSES;
	c.backing = VS_WORKLOAD_UFFD;
	ck_assert_int_eq(vs_workload_run(&c, &r), -EOPNOTSUPP);
	c.backing = VS_WORKLOAD_HOST;
	ck_assert_int_eq(vs_workload_run(&c, &r), -EOPNOTSUPP);
}
END_TEST

START_TEST(test_bad_calls)
{
	ck_assert_int_eq(vs_workload_touch(NULL, 0), -EINVAL);
	ck_assert_int_eq(vs_workload_touch_range(NULL, 0, 4096), -EINVAL);
	ck_assert_int_eq(vs_workload_mmap(NULL, NULL, 4096, false), -EINVAL);
	ck_assert_int_eq(vs_workload_munmap(NULL, NULL, 0, 4096), -EINVAL);
	ck_assert_int_eq(vs_workload_zap(NULL, NULL, 0, 4096), -EINVAL);
	ck_assert_int_eq(vs_workload_file_create(NULL, 4096), -EINVAL);
	ck_assert_ptr_null(vs_workload_find(NULL));
	ck_assert_ptr_null(vs_workload_find("page_fault3"));
	ck_assert_ptr_null(vs_workload_builtin(-1));
	ck_assert_ptr_null(vs_workload_builtin(4));
	ck_assert_str_eq(vs_workload_mode_name(VS_WORKLOAD_PROCESSES),
			 "processes");
	ck_assert_ptr_null(vs_workload_mode_name(2));
	ck_assert_int_eq(vs_workload_mode_parse("threads"), 0);
	ck_assert_int_eq(vs_workload_mode_parse(NULL), -EINVAL);
	ck_assert_int_eq(vs_workload_mode_parse("fibers"), -EINVAL);
}
END_TEST

Suite *workload_suite(void)
{
	Suite *s = suite_create("workload");
	TCase *tc;

	tc = vs_test_tcase(s, "barrier");
	vs_test_add(tc, test_barrier_orders, test_barrier_bad);
	tc = vs_test_tcase(s, "own");
	vs_test_add(tc, test_own_workload, test_one_pass, test_free_hooks,
		    test_pass_error);
	tc = vs_test_tcase(s, "builtin");
	vs_test_add_loop(tc, 8, test_builtin);
	vs_test_add_loop(tc, 4, test_builtin_uffd, test_builtin_host);
	tc = vs_test_tcase(s, "bad");
	vs_test_add(tc, test_bad_config, test_bad_calls);
	return s;
}
