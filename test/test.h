/* SPDX-License-Identifier: MIT */
/*
 * test/test.h - helpers shared by the Check suites of vmsim-test.
 *
 * Every test is bounded in time: loops stop at a deadline as well as at
 * an iteration count, and every wait for another thread gives up after
 * VS_TEST_WAIT_NS and fails the test instead of hanging.  Bounds are
 * generous: the suites also run under ASan, UBSan and TSan on a loaded
 * two-core machine.
 *
 * VS_TEST_SCALE (percent, default 100) scales iteration counts, e.g.
 * VS_TEST_SCALE=1000 for a long stress run, VS_TEST_SCALE=10 for a smoke
 * run.  CK_RUN_SUITE and CK_RUN_CASE select what runs, as in Check.
 */
#ifndef VS_TEST_H
#define VS_TEST_H

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vmsim/atomic.h>
#include <vmsim/kernel.h>
#include <vmsim/lockdep.h>
#include <vmsim/rcu.h>
#include <vmsim/slab.h>
#include <vmsim/vcpu.h>
#include <vmsim/wait.h>

/* Per test case; Check multiplies it by CK_TIMEOUT_MULTIPLIER. */
#define VS_TEST_TIMEOUT 60

/* Longest wait for another thread before a test fails (10 s). */
#define VS_TEST_WAIT_NS (10 * VS_TEST_NS_PER_SEC)

#define VS_TEST_NS_PER_MS INT64_C(1000000)
#define VS_TEST_NS_PER_SEC INT64_C(1000000000)

/* The suites, listed in suites.def: Suite *NAME_suite(void) for each. */
#define VS_SUITE(name, unsupported, timeout, labels) Suite *name##_suite(void);
#include "suites.def"
#undef VS_SUITE

/* test/vm/test_diff.c: why the kernel cannot be compared here, or NULL. */
const char *diff_unsupported(void);
/* test/fault/test_uffd.c: why userfaultfd cannot be used here, or NULL. */
const char *uffd_unsupported(void);
/* test/fault/test_uffd.c: why userfaultfd is refused to this process
 * (vs_uffd_probe()), or NULL. */
const char *uffd_refused(void);
/* test/sync/test_vcpu.c: NULL in the vCPU build, why not otherwise.
 * test/CMakeLists.txt runs such a suite (vcpu_*) with vmsim-test-vcpu. */
const char *vcpu_only(void);
/* test/fault/test_explore_uffd.c: as vcpu_only(), then uffd_refused(). */
const char *vcpu_uffd_only(void);

#if VS_VCPU
/* vmsim-test-vcpu: each test runs as vCPU 0 of a machine of its own
 * (test_main.c; VS_TEST_VCPUS vCPUs, default 4, seed VS_TEST_SEED). */
void vs__test_vcpu_setup(void);
void vs__test_vcpu_teardown(void);
#endif

/**
 * vs_test_dfs_more - is there another schedule for DFS to run on @m?
 * @st: the scheduler's figures, filled in (zero before the first run)
 * @max: a bound on the schedules; the test fails when it is reached
 *
 * For a loop that runs @m's scenario once per schedule until DFS
 * (vs_vcpu_sched_dfs) has explored them all; the test fails on a DFS
 * error.
 */
static inline bool vs_test_dfs_more(struct vs_machine *m,
				    struct vs_vcpu_dfs_stats *st,
				    unsigned long max)
{
	ck_assert_int_eq(vs_vcpu_dfs_stats(m, st), 0);
	ck_assert_int_eq(st->error, 0);
	ck_assert_uint_lt(st->schedules, max);
	return !st->exhausted;
}

/**
 * vs_test_plain_tcase - as vs_test_tcase(), but its tests run on the
 * host thread in the vCPU build too: for tests that make machines of
 * their own (vs_explore())
 */
static inline TCase *vs_test_plain_tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, VS_TEST_TIMEOUT);
	suite_add_tcase(s, tc);
	return tc;
}

/**
 * vs_test_tcase - a new test case of @s, bounded by VS_TEST_TIMEOUT
 * @s: the suite it is added to
 * @name: its name (CK_RUN_CASE and `vmsim-test SUITE TCASE` select it)
 *
 * Return: the test case, already added to @s.
 */
static inline TCase *vs_test_tcase(Suite *s, const char *name)
{
	TCase *tc = vs_test_plain_tcase(s, name);

#if VS_VCPU
	tcase_add_checked_fixture(tc, vs__test_vcpu_setup,
				  vs__test_vcpu_teardown);
#endif
	return tc;
}

/*
 * vs_test_add(tc, test, ...): tcase_add_test(tc, test) for each test, in
 * order.  vs_test_add_loop(tc, n, test, ...): tcase_add_loop_test(tc,
 * test, 0, n) for each.  The tests are names given to START_TEST.
 */
#define vs_test_add(tc, ...) vs_test_add_loop(tc, 1, __VA_ARGS__)
#define vs_test_add_loop(tc, n, ...)                                      \
	vs__test_add_loop((tc), (n), (const TTest *const[]){ __VA_ARGS__, NULL })

static inline void vs__test_add_loop(TCase *tc, int n,
				     const TTest *const *tests)
{
	for (; *tests; tests++)
		tcase_add_loop_test(tc, *tests, 0, n);
}

/**
 * vs_test_scale - scale an iteration count by VS_TEST_SCALE
 * @n: the count at scale 100
 *
 * Return: @n * VS_TEST_SCALE / 100, at least 1.
 */
static inline int vs_test_scale(int n)
{
	const char *env = getenv("VS_TEST_SCALE");
	long pct = 100;
	long long v;

	if (env && *env) {
		pct = strtol(env, NULL, 10);
		if (pct < 1)
			pct = 1;
	}
	v = (long long)n * pct / 100;
	if (v < 1)
		v = 1;
	if (v > INT32_MAX)
		v = INT32_MAX;
	return (int)v;
}

/*
 * vs_test_no_pervma - is @pervma (a case runs the pervma strategy) at a
 * kernel, $VMSIM_KERNEL's, that refuses it for want of a per-VMA lock
 * (3.18: -EOPNOTSUPP)?  The case then says it is skipped and passes.
 * Return: true when @pervma and that kernel has none.
 */
static inline bool vs_test_no_pervma(bool pervma)
{
	struct vs_kernel k;

	if (!pervma || vs_kernel_load(&k, NULL, NULL, 0) ||
	    k.mech.vma_lock != VS_VMA_LOCK_NONE)
		return false;
	printf("pervma: skipped at kernel %s, which has no per-VMA lock\n",
	       k.name);
	return true;
}

/*
 * vs_test_lockdep_count - the report function of a test that breaks a
 * locking rule on purpose, to see something else catch it (the vCPU
 * engine's deadlock report, exploration): lockdep (vmsim/lockdep.h), when
 * compiled in, counts its reports in *(int *)@arg instead of aborting.
 * Set it with vs_lockdep_set_report(vs_test_lockdep_count, &counter).
 */
static inline void vs_test_lockdep_count(const char *report, void *arg)
{
	(void)report;
	__atomic_fetch_add((int *)arg, 1, __ATOMIC_RELAXED);
}

/*
 * vs_test_slab_out - objects out of every cache of vmsim/slab.h once the
 * deferred frees ran (vs_rcu_barrier()): equal before and after work
 * that frees all it made, else something leaked.  LeakSanitizer cannot
 * tell: a cache's chunks hold every object, lost or not.  Context: no
 * other thread allocates; not inside a read-side section.
 */
static inline long vs_test_slab_out(void)
{
	struct vs_kmem_cache_stats st;
	struct vs_kmem_cache *c;
	long out = 0;

	vs_rcu_barrier();
	for (c = vs_kmem_cache_next(NULL); c; c = vs_kmem_cache_next(c)) {
		vs_kmem_cache_stats(c, &st);
		out += st.active;
	}
	return out;
}

/*
 * vs_test_read_all - read @fd until end of file or @len - 1 bytes into
 * @buf, NUL-terminated (a child's output through a pipe).
 * Return: the bytes read.
 */
static inline size_t vs_test_read_all(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len - 1 && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	return got;
}

/* vs_test_now_ns - CLOCK_MONOTONIC in nanoseconds; on a vCPU, its
 * virtual time. */
static inline int64_t vs_test_now_ns(void)
{
	struct timespec ts;

	if (VS_VCPU && vs_vcpu_self() >= 0)
		return (int64_t)vs_vcpu_now_ns();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * VS_TEST_NS_PER_SEC + ts.tv_nsec;
}

/* vs_test_sleep_ns - sleep at least @ns, resuming after signals; on a
 * vCPU, @ns of virtual time while the others run. */
static inline void vs_test_sleep_ns(int64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / VS_TEST_NS_PER_SEC,
		.tv_nsec = ns % VS_TEST_NS_PER_SEC,
	};

	if (VS_VCPU && vs_vcpu_self() >= 0) {
		vs_atomic32_t word = 0;

		(void)vs_futex_wait(&word, 0, ns);
		return;
	}
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * vs_test_run_ns - how long a time-bounded stress loop runs: @ms
 * milliseconds scaled by VS_TEST_SCALE.
 */
static inline int64_t vs_test_run_ns(int ms)
{
	return (int64_t)vs_test_scale(ms) * VS_TEST_NS_PER_MS;
}

/**
 * vs_test_wait_eq - wait until *@word == @want (acquire), for @timeout_ns
 *
 * Sleeps on the word with vs_futex_wait() in 1 ms steps, so a setter may
 * but need not call vs_futex_wake().  Under urcu-qsbr the futex sleep
 * puts an attached thread offline, so a waiting thread never holds up a
 * grace period.
 *
 * Context: not inside an RCU read-side critical section.
 * Return: true when the value was seen, false on timeout.
 */
static inline bool vs_test_wait_eq(vs_atomic32_t *word, uint32_t want,
				   int64_t timeout_ns)
{
	int64_t deadline = vs_test_now_ns() + timeout_ns;
	uint32_t cur;

	while ((cur = vs_load_acquire(word)) != want) {
		if (vs_test_now_ns() > deadline)
			return false;
		vs_futex_wait(word, cur, VS_TEST_NS_PER_MS);
	}
	return true;
}

/*
 * Acquire loads as functions, so that a failed ck_assert() prints
 * "vs_test_read32(&x) == 0" rather than the expanded atomic builtin.
 */
static inline uint32_t vs_test_read32(vs_atomic32_t *p)
{
	return vs_load_acquire(p);
}

static inline uint64_t vs_test_read64(vs_atomic64_t *p)
{
	return vs_load_acquire(p);
}

/* vs_test_set - store @val (release) and wake every waiter on @word. */
static inline void vs_test_set(vs_atomic32_t *word, uint32_t val)
{
	vs_store_release(word, val);
	vs_futex_wake(word, INT32_MAX);
}

#if VS_VCPU
/* vCPU build: a "thread" is work on an idle vCPU of the test's machine;
 * its pthread_t is the vCPU's number (test_main.c). */
int vs__test_vcpu_create(pthread_t *tid, void *(*fn)(void *), void *arg);
int vs__test_vcpu_join(pthread_t tid, void **ret);
#define vs_test_thread_create(tid, fn, arg)                               \
	ck_assert_int_eq(vs__test_vcpu_create((tid), (fn), (arg)), 0)
#else
/* Create a joinable thread or fail the test. */
#define vs_test_thread_create(tid, fn, arg)                               \
	ck_assert_int_eq(pthread_create((tid), NULL, (fn), (arg)), 0)
#endif

/* Join @tid and take its return value, or fail the test. */
static inline void *vs_test_thread_join_ret(pthread_t tid)
{
	void *ret = NULL;

#if VS_VCPU
	ck_assert_int_eq(vs__test_vcpu_join(tid, &ret), 0);
#else
	ck_assert_int_eq(pthread_join(tid, &ret), 0);
#endif
	return ret;
}

/* Join bound: a thread stuck in a broken lock fails the test. */
#define VS_TEST_JOIN_BOUND_S 20

/*
 * Join @tid, failing the test instead of hanging when it is stuck.
 * Under urcu-qsbr an attached thread goes offline for the join: the
 * joined thread may be waiting for a grace period.
 */
static inline void vs_test_thread_join(pthread_t tid)
{
	struct timespec ts;
	int err;

	if (VS_VCPU) {
		(void)vs_test_thread_join_ret(tid);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += VS_TEST_JOIN_BOUND_S;
	vs_rcu_thread_offline();
	err = pthread_timedjoin_np(tid, NULL, &ts);
	vs_rcu_thread_online();
	ck_assert_msg(err == 0, "thread stuck for %d s (join: %s)",
		      VS_TEST_JOIN_BOUND_S, strerror(err));
}

/* Sleep @us microseconds, offline for RCU (see vs_test_thread_join()). */
static inline void vs_test_nap(unsigned int us)
{
	vs_rcu_thread_offline();
	vs_test_sleep_ns((int64_t)us * 1000);
	vs_rcu_thread_online();
}

/* Busy-wait @ns nanoseconds: a short critical section. */
static inline void vs_test_spin_ns(int64_t ns)
{
	int64_t end = vs_test_now_ns() + ns;

	while (vs_test_now_ns() < end)
		vs_cpu_relax();
}

/* Widen a race window inside a critical section by a few pauses. */
static inline void vs_test_relax(int n)
{
	while (n-- > 0)
		vs_cpu_relax();
}

/*
 * vs_test_wait_ge - wait until *@word >= @val (acquire), at most
 * @timeout_ns.  For counters that may pass @val; vs_test_wait_eq() for
 * flags.  Return: 1 when reached, 0 on timeout.
 */
static inline int vs_test_wait_ge(vs_atomic32_t *word, uint32_t val,
				  int64_t timeout_ns)
{
	int64_t end = vs_test_now_ns() + timeout_ns;
	uint32_t cur;

	while ((cur = vs_load_acquire(word)) < val) {
		if (vs_test_now_ns() > end)
			return 0;
		vs_futex_wait(word, cur, VS_TEST_NS_PER_MS);
	}
	return 1;
}

#endif /* VS_TEST_H */
