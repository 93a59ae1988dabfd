/* SPDX-License-Identifier: MIT */
/*
 * test/sync/test_lockdep.c - lockdep (vmsim/lockdep.h): each kind of
 * report made to happen once, on the first run, and nothing reported
 * for the legal patterns beside it.  Built without lockdep, the suite
 * checks that the annotations are gone.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <vmsim/lock.h>
#include <vmsim/lockdep.h>
#include <vmsim/page.h>
#include <vmsim/rcu.h>
#include <vmsim/rwsem.h>
#include <vmsim/seqcount.h>
#include <vmsim/spinlock.h>

#include "../test.h"

#if VS_LOCKDEP

static int nr_reports;
static char last[8192];

static void record(const char *report, void *arg)
{
	(void)arg;
	nr_reports++;
	snprintf(last, sizeof(last), "%s", report);
}

static void setup(void)
{
	nr_reports = 0;
	last[0] = 0;
	vs_lockdep_reset();
	vs_lockdep_set_report(record, NULL);
}

static void teardown(void)
{
	vs_lockdep_set_report(NULL, NULL);
}

#define assert_reported(n, needle)                                        \
	do {                                                              \
		ck_assert_msg(nr_reports == (n), "%d reports, want %d: %s", \
			      nr_reports, (n), last);                     \
		ck_assert_msg(strstr(last, (needle)) != NULL,             \
			      "no \"%s\" in: %s", (needle), last);        \
	} while (0)

static vs_spinlock_t *spin(vs_spinlock_t *l, const char *class)
{
	vs_spin_lock_init(l);
	vs_lockdep_set_class(l, class);
	return l;
}

/* A takes B, then B takes A: reported the first time, with both chains,
 * on one thread, though no deadlock could happen here. */
START_TEST(lockdep_abba)
{
	vs_spinlock_t a, b;

	spin(&a, "test_a");
	spin(&b, "test_b");
	vs_spin_lock(&a);
	vs_spin_lock(&b);
	vs_spin_unlock(&b);
	vs_spin_unlock(&a);
	ck_assert_int_eq(nr_reports, 0);

	vs_spin_lock(&b);
	vs_spin_lock(&a);
	assert_reported(1, "possible circular locking dependency");
	ck_assert_msg(strstr(last, "takes test_a") &&
		      strstr(last, "while it holds test_b") &&
		      strstr(last, "test_a -> test_b, first made by:"),
		      "report: %s", last);
	vs_spin_unlock(&a);
	vs_spin_unlock(&b);
	/* Said once: the same order again is not reported again. */
	vs_spin_lock(&b);
	vs_spin_lock(&a);
	vs_spin_unlock(&a);
	vs_spin_unlock(&b);
	ck_assert_int_eq(nr_reports, 1);
}
END_TEST

/* A -> B on one thread, B -> C on another, C -> A on a third: the cycle
 * is three edges long and made by three threads, one after another. */
static vs_spinlock_t la, lb, lc;

static void *take_pair(void *arg)
{
	vs_spinlock_t **p = arg;

	vs_spin_lock(p[0]);
	vs_spin_lock(p[1]);
	vs_spin_unlock(p[1]);
	vs_spin_unlock(p[0]);
	return NULL;
}

START_TEST(lockdep_cycle_across_threads)
{
	vs_spinlock_t *ab[2] = { &la, &lb }, *bc[2] = { &lb, &lc },
		      *ca[2] = { &lc, &la };
	vs_spinlock_t **pairs[3] = { ab, bc, ca };
	pthread_t tid;
	int i;

	spin(&la, "test_a");
	spin(&lb, "test_b");
	spin(&lc, "test_c");
	for (i = 0; i < 3; i++) {
		vs_test_thread_create(&tid, take_pair, pairs[i]);
		vs_test_thread_join(tid);
		ck_assert_int_eq(nr_reports, i == 2);
	}
	ck_assert_msg(strstr(last, "test_a -> test_b") &&
		      strstr(last, "test_b -> test_c"), "report: %s", last);
}
END_TEST

/* A trylock cannot wait: taking it in either order is no cycle. */
START_TEST(lockdep_trylock_no_edge)
{
	vs_spinlock_t a, b;

	spin(&a, "test_a");
	spin(&b, "test_b");
	vs_spin_lock(&a);
	vs_spin_lock(&b);
	vs_spin_unlock(&b);
	vs_spin_unlock(&a);
	vs_spin_lock(&b);
	ck_assert(vs_spin_trylock(&a));
	vs_lockdep_assert_held(&a);
	vs_spin_unlock(&a);
	vs_spin_unlock(&b);
	ck_assert_int_eq(nr_reports, 0);
}
END_TEST

/* Two locks of one class: reported unless the second is annotated. */
START_TEST(lockdep_same_class)
{
	vs_spinlock_t a, b;

	spin(&a, "test_ptl");
	spin(&b, "test_ptl");
	vs_spin_lock(&a);
	vs_spin_lock_nested(&b, VS_SINGLE_DEPTH_NESTING);
	vs_spin_unlock(&b);
	vs_spin_unlock(&a);
	ck_assert_int_eq(nr_reports, 0);
	vs_spin_lock(&a);
	vs_spin_lock(&b);
	assert_reported(1, "test_ptl taken while one of its class");
	vs_spin_unlock(&b);
	vs_spin_unlock(&a);
	vs_spin_lock_nested(&b, VS_LOCKDEP_SUBCLASS_MAX);
	assert_reported(2, "test_ptl taken with subclass 4, not 0 to 3");
	vs_spin_unlock(&b);
}
END_TEST

START_TEST(lockdep_release_not_held)
{
	vs_spinlock_t a;

	spin(&a, "test_a");
	vs_spin_lock(&a);
	vs_spin_unlock(&a);
	ck_assert_int_eq(nr_reports, 0);
	vs_spin_unlock(&a);	/* harmless on a free spinlock */
	assert_reported(1, "test_a released, but this thread does not hold");
}
END_TEST

/* Held for reading or writing, downgraded: what the assertions see. */
START_TEST(lockdep_assert_held)
{
	struct vs_lock l;

	ck_assert_int_eq(vs_lock_init(&l, NULL, "test_mmap_lock"), 0);
	vs_lockdep_assert_not_held(&l);
	vs_lockdep_assert_held(&l);
	assert_reported(1, "assertion failed at");
	ck_assert_msg(strstr(last, "test_lockdep.c:") &&
		      strstr(last, "(): &l held\n"),
		      "report: %s", last);
	vs_lock_write_lock(&l);
	vs_lockdep_assert_held(&l);
	vs_lockdep_assert_held_write(&l);
	ck_assert_int_eq(nr_reports, 1);
	vs_lock_downgrade_write(&l);
	vs_lockdep_assert_held(&l);
	vs_lockdep_assert_held_write(&l);
	assert_reported(2, "&l held for writing");
	ck_assert_msg(strstr(last, "test_mmap_lock (read)"), "%s", last);
	vs_lock_read_unlock(&l);
	ck_assert_int_eq(vs_lock_destroy(&l), 0);
	vs_rcu_lockdep_assert();
	assert_reported(3, "inside an RCU read-side section");
	vs_rcu_read_lock();
	vs_rcu_lockdep_assert();
	vs_rcu_read_unlock();
	ck_assert_int_eq(nr_reports, 3);
}
END_TEST

/* Inside RCU: a spinlock or a trylock may be taken, a sleeping lock
 * not; an unbalanced unlock is reported. */
START_TEST(lockdep_rcu_sleep)
{
	vs_spinlock_t a;
	struct vs_rwsem sem;

	spin(&a, "test_ptl");
	ck_assert_int_eq(vs_rwsem_init(&sem), 0);
	vs_lockdep_set_class(&sem, "test_vm_lock");
	vs_rcu_read_lock();
	vs_spin_lock(&a);
	vs_spin_unlock(&a);
	ck_assert(vs_down_read_trylock(&sem));
	vs_up_read(&sem);
	ck_assert_int_eq(nr_reports, 0);
	vs_down_read(&sem);
	assert_reported(1, "test_vm_lock, a lock that sleeps, taken inside");
	ck_assert_msg(strstr(last, "an RCU read-side section (depth 1)"),
		      "%s", last);
	vs_up_read(&sem);
	vs_rcu_read_unlock();
	ck_assert_int_eq(vs_rwsem_destroy(&sem), 0);
	/* What vs_rcu_read_unlock() tells lockdep first, without the
	 * unlock itself, which would unbalance liburcu's count. */
	vs__lockdep_rcu(-1);
	assert_reported(2, "vs_rcu_read_unlock() outside");
}
END_TEST

/* vs_synchronize_rcu() inside a read-side section would wait for itself:
 * the default report aborts before it does (in a forked test only: not
 * registered with CK_FORK=no, where it would end the run). */
START_TEST(lockdep_synchronize_in_rcu)
{
	vs_lockdep_set_report(NULL, NULL);
	vs_rcu_read_lock();
	vs_synchronize_rcu();	/* aborts: SIGABRT is the pass */
}
END_TEST

/* A blocking page allocation (6.18's might_alloc()) or what may sleep
 * (might_sleep(): an mmu notifier) under a spinlock is reported; inside
 * an RCU section the allocation is not (the model's speculative fault
 * allocates there), nor under a sleeping lock or a spinlock made a
 * mutex to lockdep. */
START_TEST(lockdep_might_sleep_atomic)
{
	struct vs_page_pool *pool;
	vs_spinlock_t a, m;
	struct vs_rwsem sem;

	ck_assert_int_eq(vs_page_pool_create(&pool, 4), 0);
	spin(&a, "test_ptl");
	spin(&m, "test_inv_mutex");
	vs_lockdep_set_sleeping(&m);
	ck_assert_int_eq(vs_rwsem_init(&sem), 0);
	vs_lockdep_set_class(&sem, "test_mmap_lock");
	vs_down_read(&sem);
	vs_spin_lock(&m);
	vs_put_page(pool, vs_alloc_page(pool));
	vs__lockdep_might_sleep("test_notifier");
	vs_rcu_read_lock();
	vs_put_page(pool, vs_alloc_page(pool));
	vs_rcu_read_unlock();
	ck_assert_int_eq(nr_reports, 0);
	vs_spin_lock(&a);
	vs_put_page(pool, vs_alloc_page(pool));
	assert_reported(1, "vs_alloc_page(), which may sleep, called while "
			   "test_ptl, a spinlock, is held");
	vs__lockdep_might_sleep("test_notifier");
	assert_reported(2, "test_notifier, which may sleep, called while "
			   "test_ptl, a spinlock");
	vs_spin_unlock(&a);
	vs_spin_unlock(&m);
	vs_up_read(&sem);
	ck_assert_int_eq(vs_rwsem_destroy(&sem), 0);
	ck_assert_int_eq(vs_page_pool_destroy(pool), 0);
}
END_TEST

/* A seqcount whose writers hold a lock: a write section without it, or
 * with it held only for reading, is reported. */
START_TEST(lockdep_seqcount_lock)
{
	struct vs_lock l;
	vs_seqcount_t s;

	ck_assert_int_eq(vs_lock_init(&l, NULL, "test_mmap_lock"), 0);
	vs_seqcount_init(&s);
	vs_lockdep_set_class(&s, "test_seq");
	vs_seqcount_set_lock(&s, &l);
	vs_lock_write_lock(&l);
	vs_write_seqcount_begin(&s);
	vs_write_seqcount_end(&s);
	vs_lock_write_unlock(&l);
	ck_assert_int_eq(nr_reports, 0);
	vs_write_seqcount_begin(&s);
	assert_reported(1, "a write section of test_seq entered without");
	vs_write_seqcount_end(&s);
	vs_lock_read_lock(&l);
	vs_write_seqcount_begin(&s);
	assert_reported(2, "a write section of test_seq entered without");
	vs_write_seqcount_end(&s);
	vs_lock_read_unlock(&l);
	ck_assert_int_eq(vs_lock_destroy(&l), 0);
}
END_TEST

/* A thread (a vCPU's work) that ends holding a lock. */
static void *leave_locked(void *arg)
{
	vs_spin_lock(arg);
	(void)vs_thread_attach();	/* natively, its exit is seen */
	return NULL;
}

START_TEST(lockdep_exit_holding)
{
	vs_spinlock_t a;
	pthread_t tid;

	spin(&a, "test_a");
	vs_test_thread_create(&tid, leave_locked, &a);
	vs_test_thread_join(tid);
	assert_reported(1, "a thread ends holding locks");
	ck_assert_msg(strstr(last, "test_a (write)"), "report: %s", last);
}
END_TEST

START_TEST(lockdep_bad_class)
{
	char big[64];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	ck_assert_int_eq(vs_lockdep_class(NULL), -EINVAL);
	ck_assert_int_eq(vs_lockdep_class(""), -EINVAL);
	ck_assert_int_eq(vs_lockdep_class(big), -EINVAL);
	ck_assert_int_gt(vs_lockdep_class("test_a"), 0);
	ck_assert_int_eq(vs_lockdep_class("test_a"),
			 vs_lockdep_class("test_a"));
	ck_assert_int_ne(vs_lockdep_class("test_a"),
			 vs_lockdep_class("test_b"));
}
END_TEST

Suite *lockdep_suite(void)
{
	Suite *s = suite_create("lockdep");
	TCase *tc = vs_test_tcase(s, "lockdep");

	tcase_add_checked_fixture(tc, setup, teardown);
	vs_test_add(tc, lockdep_abba, lockdep_cycle_across_threads,
		    lockdep_trylock_no_edge, lockdep_same_class,
		    lockdep_release_not_held, lockdep_assert_held,
		    lockdep_rcu_sleep, lockdep_might_sleep_atomic,
		    lockdep_seqcount_lock,
		    lockdep_exit_holding, lockdep_bad_class);
	if (!getenv("CK_FORK") || strcmp(getenv("CK_FORK"), "no"))
		tcase_add_test_raise_signal(tc, lockdep_synchronize_in_rcu,
					    SIGABRT);
	return s;
}

#else /* !VS_LOCKDEP */

/* Compiled out: no field in a lock, no class, no report. */
START_TEST(lockdep_compiled_out)
{
	vs_spinlock_t a = VS_SPINLOCK_INIT;

	ck_assert_uint_eq(sizeof(vs_spinlock_t), sizeof(vs_atomic32_t));
	ck_assert_uint_eq(sizeof(vs_seqcount_t), sizeof(vs_atomic32_t));
	ck_assert_int_eq(vs_lockdep_class("test_a"), -ENOSYS);
	vs_spin_unlock(&a);	/* not held: nothing checks */
	vs_lockdep_assert_held(&a);
}
END_TEST

Suite *lockdep_suite(void)
{
	Suite *s = suite_create("lockdep");
	TCase *tc = vs_test_tcase(s, "lockdep");

	vs_test_add(tc, lockdep_compiled_out);
	return s;
}

#endif /* VS_LOCKDEP */
