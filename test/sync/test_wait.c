/* SPDX-License-Identifier: MIT */
/*
 * Tests for vmsim/wait.h: vs_futex_wait() and vs_futex_wake().
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include <vmsim/atomic.h>
#include <vmsim/wait.h>

#include "test.h"

#define NR_WAITERS 3

struct waiter {
	vs_atomic32_t *word;
	vs_atomic32_t *ready;
	int ret;
};

/* A wait on a word that no longer holds the value returns -EAGAIN. */
START_TEST(wait_value_changed)
{
	vs_atomic32_t word;
	int64_t t0;

	vs_atomic_init(&word, 1);
	t0 = vs_test_now_ns();
	ck_assert_int_eq(vs_futex_wait(&word, 0, VS_TEST_WAIT_NS), -EAGAIN);
	ck_assert_int_eq(vs_futex_wait(&word, 2, -1), -EAGAIN);
	/* At once, not after the timeout. */
	ck_assert_int_lt(vs_test_now_ns() - t0, VS_TEST_WAIT_NS / 2);
}
END_TEST

/* Nobody wakes the waiter: -ETIMEDOUT, after the timeout and not early. */
START_TEST(wait_timeout)
{
	const int64_t timeout = 20 * VS_TEST_NS_PER_MS;
	vs_atomic32_t word;
	int64_t t0, dt;
	int ret;

	vs_atomic_init(&word, 0);
	t0 = vs_test_now_ns();
	/* A spurious wakeup is allowed: wait again for what is left. */
	do {
		dt = vs_test_now_ns() - t0;
		ret = vs_futex_wait(&word, 0, dt < timeout ? timeout - dt : 0);
	} while (ret == 0 && vs_test_now_ns() - t0 < timeout);
	dt = vs_test_now_ns() - t0;
	ck_assert_int_eq(ret, -ETIMEDOUT);
	ck_assert_int_ge(dt, timeout - VS_TEST_NS_PER_MS);
	ck_assert_int_lt(dt, VS_TEST_WAIT_NS);

	/* A zero timeout does not sleep. */
	ck_assert_int_eq(vs_futex_wait(&word, 0, 0), -ETIMEDOUT);
}
END_TEST

/* Waking a word nobody sleeps on wakes nobody. */
START_TEST(wait_wake_nobody)
{
	vs_atomic32_t word;

	vs_atomic_init(&word, 0);
	ck_assert_int_eq(vs_futex_wake(&word, 1), 0);
	ck_assert_int_eq(vs_futex_wake(&word, INT32_MAX), 0);
}
END_TEST

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	vs_fetch_add(w->ready, 1);
	/* Without a wake this times out after VS_TEST_WAIT_NS. */
	w->ret = vs_futex_wait(w->word, 0, VS_TEST_WAIT_NS);
	return NULL;
}

/*
 * wake_until - call vs_futex_wake(@word, @nr) until it has woken @want
 * threads in all, or the wait bound passes.  The word never changes, so
 * a waiter that is not asleep yet goes to sleep and is woken by a later
 * call.  Return: the number woken.
 */
static int wake_until(vs_atomic32_t *word, int nr, int want)
{
	int64_t deadline = vs_test_now_ns() + VS_TEST_WAIT_NS / 2;
	int woken = 0;

	while (woken < want && vs_test_now_ns() < deadline) {
		woken += vs_futex_wake(word, nr);
		if (woken < want)
			vs_test_sleep_ns(VS_TEST_NS_PER_MS);
	}
	return woken;
}

/* A sleeper is woken by vs_futex_wake() from another thread, which
 * counts it; the sleeper's wait returns 0. */
START_TEST(wait_wake_one)
{
	vs_atomic32_t word, ready;
	struct waiter w = { &word, &ready, 1 };
	pthread_t tid;

	vs_atomic_init(&word, 0);
	vs_atomic_init(&ready, 0);
	vs_test_thread_create(&tid, waiter_fn, &w);
	ck_assert(vs_test_wait_eq(&ready, 1, VS_TEST_WAIT_NS));
	ck_assert_int_eq(wake_until(&word, 1, 1), 1);
	vs_test_thread_join(tid);
	ck_assert_int_eq(w.ret, 0);
}
END_TEST

/* vs_futex_wake(word, 1) wakes one sleeper at a time; INT32_MAX wakes
 * every one; nobody is woken twice. */
START_TEST(wait_wake_all)
{
	vs_atomic32_t word, ready;
	struct waiter w[NR_WAITERS];
	pthread_t tid[NR_WAITERS];
	int i, woken;

	vs_atomic_init(&word, 0);
	vs_atomic_init(&ready, 0);
	for (i = 0; i < NR_WAITERS; i++) {
		w[i] = (struct waiter){ &word, &ready, 1 };
		vs_test_thread_create(&tid[i], waiter_fn, &w[i]);
	}
	ck_assert(vs_test_wait_eq(&ready, NR_WAITERS, VS_TEST_WAIT_NS));

	woken = wake_until(&word, 1, 1);
	ck_assert_int_eq(woken, 1);
	woken += wake_until(&word, INT32_MAX, NR_WAITERS - 1);
	ck_assert_int_eq(woken, NR_WAITERS);
	for (i = 0; i < NR_WAITERS; i++) {
		vs_test_thread_join(tid[i]);
		ck_assert_int_eq(w[i].ret, 0);
	}
	ck_assert_int_eq(vs_futex_wake(&word, INT32_MAX), 0);
}
END_TEST

/* A bad word is an error, not a crash: unmapped and misaligned. */
START_TEST(wait_bad_word)
{
	static vs_atomic64_t aligned;
	vs_atomic32_t *odd = (vs_atomic32_t *)((char *)&aligned + 1);

	ck_assert_int_eq(vs_futex_wait(NULL, 0, 1000), -EFAULT);
	ck_assert_int_eq(vs_futex_wait(odd, 0, 1000), -EINVAL);
	ck_assert_int_eq(vs_futex_wake(NULL, 1), 0);
	ck_assert_int_eq(vs_futex_wake(odd, 1), -EINVAL);
	ck_assert_int_eq(vs_futex_wake((vs_atomic32_t *)&aligned, 0), -EINVAL);
}
END_TEST

Suite *wait_suite(void)
{
	Suite *s = suite_create("wait");

	vs_test_add(vs_test_tcase(s, "futex"), wait_value_changed,
		    wait_timeout, wait_wake_nobody, wait_wake_one,
		    wait_wake_all, wait_bad_word);
	return s;
}
