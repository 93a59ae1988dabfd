/* SPDX-License-Identifier: MIT */
/*
 * Tests for vmsim/spinlock.h: mutual exclusion, trylock, and the futex
 * sleep of waiters (state 2, "locked with possible sleepers").
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>

#include <vmsim/atomic.h>
#include <vmsim/spinlock.h>

#include "test.h"

#define NR_THREADS 4
#define NR_SLEEPERS 8 /* more threads than the two cores of CI */

struct excl {
	vs_spinlock_t lock;
	vs_atomic32_t owners;    /* threads inside the critical section */
	vs_atomic32_t violations;
	vs_atomic32_t contended; /* a holder saw state 2 */
	unsigned long counter;   /* plain: protected by lock only */
	int iterations;
	int64_t hold_ns;         /* > 0: sleep this long while holding */
	int64_t deadline;
};

static void *excl_fn(void *arg)
{
	struct excl *x = arg;
	int i;

	for (i = 0; i < x->iterations; i++) {
		vs_spin_lock(&x->lock);
		if (vs_fetch_add(&x->owners, 1) != 0)
			vs_fetch_add(&x->violations, 1);
		x->counter++;
		if (x->hold_ns > 0) {
			vs_test_sleep_ns(x->hold_ns);
			if (vs_read_once(&x->lock.state) == 2)
				vs_write_once(&x->contended, 1);
		}
		vs_fetch_sub(&x->owners, 1);
		vs_spin_unlock(&x->lock);
		/* Time bound: stop early on a slow (sanitized) machine. */
		if ((i & 63) == 0 && vs_test_now_ns() > x->deadline)
			break;
	}
	/* Report how many rounds this thread did through the counter. */
	return (void *)(intptr_t)(i == x->iterations ? i : i + 1);
}

static unsigned long run_excl(struct excl *x, int nr_threads)
{
	pthread_t tid[NR_SLEEPERS];
	unsigned long rounds = 0;
	void *ret;
	int i;

	ck_assert_int_le(nr_threads, NR_SLEEPERS);
	for (i = 0; i < nr_threads; i++)
		vs_test_thread_create(&tid[i], excl_fn, x);
	for (i = 0; i < nr_threads; i++) {
		ret = vs_test_thread_join_ret(tid[i]);
		rounds += (unsigned long)(intptr_t)ret;
	}
	return rounds;
}

/* Four threads increment a plain counter under the lock: no update is
 * lost and never are two threads inside at once. */
START_TEST(spinlock_mutual_exclusion)
{
	struct excl x = {
		.lock = VS_SPINLOCK_INIT,
		.iterations = vs_test_scale(100000),
		.deadline = vs_test_now_ns() + vs_test_run_ns(10000),
	};
	unsigned long rounds;

	rounds = run_excl(&x, NR_THREADS);
	ck_assert_uint_eq(vs_test_read32(&x.violations), 0);
	ck_assert_uint_eq(x.counter, rounds);
	ck_assert_uint_gt(rounds, 0);
	ck_assert(!vs_spin_is_locked(&x.lock));
	ck_assert_uint_eq(vs_test_read32(&x.lock.state), 0);
}
END_TEST

static void *trylock_other_fn(void *arg)
{
	return (void *)(intptr_t)vs_spin_trylock(arg);
}

static int trylock_from_other_thread(vs_spinlock_t *lock)
{
	pthread_t tid;

	vs_test_thread_create(&tid, trylock_other_fn, lock);
	return (int)(intptr_t)vs_test_thread_join_ret(tid);
}

/* Trylock fails while the lock is held (by this or another thread) and
 * succeeds when it is free. */
START_TEST(spinlock_trylock)
{
	vs_spinlock_t lock;

	vs_spin_lock_init(&lock);
	ck_assert(!vs_spin_is_locked(&lock));
	ck_assert_int_eq(vs_spin_trylock(&lock), 1);
	ck_assert(vs_spin_is_locked(&lock));
	ck_assert_int_eq(vs_spin_trylock(&lock), 0);
	ck_assert_int_eq(trylock_from_other_thread(&lock), 0);
	vs_spin_unlock(&lock);
	ck_assert(!vs_spin_is_locked(&lock));

	/* Taken by another thread: fails here too. */
	ck_assert_int_eq(trylock_from_other_thread(&lock), 1);
	ck_assert_int_eq(vs_spin_trylock(&lock), 0);
	vs_spin_unlock(&lock);

	vs_spin_lock(&lock);
	ck_assert_int_eq(vs_spin_trylock(&lock), 0);
	vs_spin_unlock(&lock);
	ck_assert_int_eq(vs_spin_trylock(&lock), 1);
	vs_spin_unlock(&lock);
	ck_assert_uint_eq(vs_test_read32(&lock.state), 0);
}
END_TEST

struct sleeper {
	vs_spinlock_t *lock;
	vs_atomic32_t started;
	vs_atomic32_t got;
	int seen; /* plain: written by the holder before its unlock */
	int value;
};

static void *sleeper_fn(void *arg)
{
	struct sleeper *s = arg;

	vs_test_set(&s->started, 1);
	vs_spin_lock(s->lock);
	s->seen = s->value;
	vs_test_set(&s->got, 1);
	vs_spin_unlock(s->lock);
	return NULL;
}

/* A waiter on a long-held lock stops spinning and marks the lock
 * contended (state 2) before it sleeps; the unlock wakes it and it then
 * sees everything the holder wrote. */
START_TEST(spinlock_waiter_sleeps)
{
	vs_spinlock_t lock = VS_SPINLOCK_INIT;
	struct sleeper s = { .lock = &lock };
	pthread_t tid;

	vs_atomic_init(&s.started, 0);
	vs_atomic_init(&s.got, 0);
	vs_spin_lock(&lock);
	vs_test_thread_create(&tid, sleeper_fn, &s);
	ck_assert(vs_test_wait_eq(&s.started, 1, VS_TEST_WAIT_NS));
	/* The waiter's spin is bounded: it must reach state 2. */
	ck_assert(vs_test_wait_eq(&lock.state, 2, VS_TEST_WAIT_NS));
	/* Still asleep, not holding the lock. */
	vs_test_sleep_ns(5 * VS_TEST_NS_PER_MS);
	ck_assert_uint_eq(vs_test_read32(&s.got), 0);
	s.value = 42;
	vs_spin_unlock(&lock);
	ck_assert(vs_test_wait_eq(&s.got, 1, VS_TEST_WAIT_NS));
	vs_test_thread_join(tid);
	ck_assert_int_eq(s.seen, 42);
	ck_assert_uint_eq(vs_test_read32(&lock.state), 0);
}
END_TEST

/* More threads than cores, each holding the lock ~200 us (a sleep):
 * waiters overrun their spin and sleep, and exclusion still holds. */
START_TEST(spinlock_sleeping_stress)
{
	struct excl x = {
		.lock = VS_SPINLOCK_INIT,
		.iterations = vs_test_scale(100),
		.hold_ns = 200000,
		.deadline = vs_test_now_ns() + vs_test_run_ns(10000),
	};
	unsigned long rounds;

	rounds = run_excl(&x, NR_SLEEPERS);
	ck_assert_uint_eq(vs_test_read32(&x.violations), 0);
	ck_assert_uint_eq(x.counter, rounds);
	/* Eight threads queue on one lock held for 200 us at a time. */
	ck_assert_uint_eq(vs_test_read32(&x.contended), 1);
	ck_assert_uint_eq(vs_test_read32(&x.lock.state), 0);
}
END_TEST

Suite *spinlock_suite(void)
{
	Suite *s = suite_create("spinlock");

	vs_test_add(vs_test_tcase(s, "spinlock"), spinlock_trylock,
		    spinlock_mutual_exclusion, spinlock_waiter_sleeps,
		    spinlock_sleeping_stress);
	return s;
}
