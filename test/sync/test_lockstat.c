/* SPDX-License-Identifier: MIT */
/*
 * Tests for vmsim/lockstat.h through vmsim/lock.h: exact counts for known
 * sequences on every lock kind, contention and wait times, bounces,
 * switching statistics off, trace hooks, the /proc/lock_stat printout,
 * and argument errors.
 *
 * Counting rules these tests rely on (vmsim/lockstat.h): an acquisition
 * is every successful lock or trylock; a failed trylock counts nothing;
 * an acquisition is contended when the lock could not be taken at once;
 * holdtime is sampled for every acquisition released while statistics
 * were on; a bounce is an acquisition by another thread slot than the
 * previous acquisition of the same lock (either side).  A downgrade ends
 * the write hold and starts an uncontended read acquisition.
 *
 * Statistics are process-wide: each test runs in its own process
 * (Check's fork mode) and resets them.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/atomic.h>
#include <vmsim/lock.h>
#include <vmsim/lockstat.h>
#include <vmsim/thread.h>
#include <vmsim/vcpu.h>

#include "hooks.h"
#include "sync/internal.h"
#include "test.h"

#define MS VS_TEST_NS_PER_MS

/* ---- a helper thread that holds a lock until told to let go ---------- */

struct holder {
	struct vs_lock *lock;
	bool write;
	int64_t hold_ns;          /* after "go": keep holding this long */
	vs_atomic32_t held;
	vs_atomic32_t go;
	pthread_t tid;
};

static void *holder_fn(void *arg)
{
	struct holder *h = arg;

	if (vs_thread_attach() != 0)
		abort();
	if (h->write)
		vs_lock_write_lock(h->lock);
	else
		vs_lock_read_lock(h->lock);
	vs_test_set(&h->held, 1);
	/* Bounded: the main thread always says go, or has failed. */
	vs_test_wait_eq(&h->go, 1, VS_TEST_WAIT_NS);
	if (h->hold_ns)
		vs_test_sleep_ns(h->hold_ns);
	if (h->write)
		vs_lock_write_unlock(h->lock);
	else
		vs_lock_read_unlock(h->lock);
	return NULL;
}

static void holder_start(struct holder *h, struct vs_lock *lock, bool write,
			 int64_t hold_ns)
{
	h->lock = lock;
	h->write = write;
	h->hold_ns = hold_ns;
	vs_atomic_init(&h->held, 0);
	vs_atomic_init(&h->go, 0);
	vs_test_thread_create(&h->tid, holder_fn, h);
	ck_assert(vs_test_wait_eq(&h->held, 1, VS_TEST_WAIT_NS));
}

static void holder_finish(struct holder *h)
{
	vs_test_set(&h->go, 1);
	vs_test_thread_join(h->tid);
}

/* ---- helpers ---------------------------------------------------------- */

static int nr_kinds(void)
{
	int n = 0;

	while (vs_lock_kind_name(n))
		n++;
	return n;
}

static const char *kind_name(int i)
{
	const char *kind = vs_lock_kind_name(i);

	ck_assert_ptr_nonnull(kind);
	return kind;
}

static struct vs_lock_class *lock_init_class(struct vs_lock *l,
					     const char *kind, char *name,
					     size_t size)
{
	struct vs_lock_class *class;

	snprintf(name, size, "test_class_%s", kind);
	ck_assert_int_eq(vs_lock_init(l, kind, name), 0);
	class = vs_lock_class_get(name);
	ck_assert_ptr_nonnull(class);
	ck_assert_ptr_eq(l->class, class);
	ck_assert_str_eq(class->name, name);
	return class;
}

static struct vs_lockstat read_side(const struct vs_lock_class *class,
				    enum vs_lock_side side)
{
	struct vs_lockstat st;

	ck_assert_int_eq(vs_lockstat_read(class, side, &st), 0);
	return st;
}

/* Consistency that holds for any statistics. */
static void check_sane(const struct vs_lockstat *st)
{
	ck_assert_uint_le(st->con_bounces, st->contentions);
	ck_assert_uint_le(st->contentions, st->acquisitions);
	ck_assert_uint_le(st->acq_bounces, st->acquisitions);
	ck_assert_uint_le(st->holdtime_nr, st->acquisitions);
	ck_assert_uint_le(st->waittime_min, st->waittime_max);
	ck_assert_uint_le(st->waittime_max, st->waittime_total);
	ck_assert_uint_le(st->holdtime_min, st->holdtime_max);
	ck_assert_uint_le(st->holdtime_max, st->holdtime_total);
	if (!st->contentions)
		ck_assert_uint_eq(st->waittime_total, 0);
	if (!st->holdtime_nr)
		ck_assert_uint_eq(st->holdtime_total, 0);
}

static void read_pair(struct vs_lock *l)
{
	vs_lock_read_lock(l);
	vs_lock_read_unlock(l);
}

static void write_pair(struct vs_lock *l)
{
	vs_lock_write_lock(l);
	vs_lock_write_unlock(l);
}

/*
 * The known sequence, on this thread unless said otherwise:
 *
 *	3 read lock/unlock pairs                R +3
 *	2 write lock/unlock pairs               W +2
 *	1 read trylock (succeeds) + unlock      R +1
 *	another thread holds read               R +1 (a bounce)
 *	1 write trylock (fails)                 nothing
 *	write lock (a bounce), downgrade,       W +1, R +1
 *	read unlock
 *
 * R: 6 acquisitions, 6 holdtimes, 1 bounce.
 * W: 3 acquisitions, 3 holdtimes, 1 bounce.  No contention.
 */
static void known_sequence(struct vs_lock *l)
{
	struct holder h;
	int i;

	for (i = 0; i < 3; i++)
		read_pair(l);
	for (i = 0; i < 2; i++)
		write_pair(l);
	ck_assert_int_eq(vs_lock_read_trylock(l), 1);
	vs_lock_read_unlock(l);

	holder_start(&h, l, false, 0);
	ck_assert_int_eq(vs_lock_write_trylock(l), 0);
	holder_finish(&h);

	vs_lock_write_lock(l);
	vs_lock_downgrade_write(l);
	vs_lock_read_unlock(l);
}

/* ---- tests ------------------------------------------------------------ */

/* Every lock kind: the known sequence gives exact acquisition, holdtime,
 * bounce and (zero) contention counts on each side. */
START_TEST(lockstat_counts)
{
	const char *kind = kind_name(_i);
	struct vs_lockstat r, w;
	struct vs_lock_class *class;
	struct vs_lock l;
	char name[VS_LOCK_CLASS_NAME_MAX + 1];

	ck_assert_int_eq(vs_thread_attach(), 0);
	class = lock_init_class(&l, kind, name, sizeof(name));
	vs_lockstat_enable(1);
	ck_assert_int_eq(vs_lockstat_enabled(), 1);
	/* So that this thread is the previous acquirer: no first-time
	 * bounce question below. */
	write_pair(&l);
	vs_lockstat_reset();
	r = read_side(class, VS_LOCK_READ);
	ck_assert_uint_eq(r.acquisitions, 0);

	known_sequence(&l);

	r = read_side(class, VS_LOCK_READ);
	w = read_side(class, VS_LOCK_WRITE);
	check_sane(&r);
	check_sane(&w);
	ck_assert_uint_eq(r.acquisitions, 6);
	ck_assert_uint_eq(r.holdtime_nr, 6);
	ck_assert_uint_eq(r.acq_bounces, 1);
	ck_assert_uint_eq(r.contentions, 0);
	ck_assert_uint_eq(r.con_bounces, 0);
	ck_assert_uint_eq(r.waittime_max, 0);
	ck_assert_uint_eq(w.acquisitions, 3);
	ck_assert_uint_eq(w.holdtime_nr, 3);
	ck_assert_uint_eq(w.acq_bounces, 1);
	ck_assert_uint_eq(w.contentions, 0);
	ck_assert_uint_eq(w.con_bounces, 0);
	ck_assert_uint_eq(w.waittime_max, 0);

	vs_lockstat_enable(0);
	ck_assert_int_eq(vs_lock_destroy(&l), 0);
}
END_TEST

/* With statistics off nothing is counted; switching them back on
 * counts again from where the numbers were. */
START_TEST(lockstat_disabled)
{
	const char *kind = kind_name(_i);
	struct vs_lockstat r0, w0, r, w;
	struct vs_lock_class *class;
	struct vs_lock l;
	char name[VS_LOCK_CLASS_NAME_MAX + 1];

	ck_assert_int_eq(vs_thread_attach(), 0);
	class = lock_init_class(&l, kind, name, sizeof(name));
	vs_lockstat_reset();
	vs_lockstat_enable(1);
	read_pair(&l);
	write_pair(&l);
	r0 = read_side(class, VS_LOCK_READ);
	w0 = read_side(class, VS_LOCK_WRITE);
	ck_assert_uint_eq(r0.acquisitions, 1);
	ck_assert_uint_eq(w0.acquisitions, 1);

	vs_lockstat_enable(0);
	ck_assert_int_eq(vs_lockstat_enabled(), 0);
	known_sequence(&l);
	r = read_side(class, VS_LOCK_READ);
	w = read_side(class, VS_LOCK_WRITE);
	ck_assert_mem_eq(&r, &r0, sizeof(r));
	ck_assert_mem_eq(&w, &w0, sizeof(w));

	vs_lockstat_enable(1);
	write_pair(&l);
	w = read_side(class, VS_LOCK_WRITE);
	ck_assert_uint_eq(w.acquisitions, 2);
	ck_assert_uint_eq(w.holdtime_nr, 2);
	vs_lockstat_enable(0);
	ck_assert_int_eq(vs_lock_destroy(&l), 0);
}
END_TEST

/* Every lock kind: a writer blocked ~50 ms behind another thread's write
 * lock counts one contention (a bounce) with its wait time, and so does
 * a reader blocked behind a writer. */
START_TEST(lockstat_contended)
{
	const int64_t hold = 50 * MS;
	const char *kind = kind_name(_i);
	struct vs_lock_class *class;
	struct vs_lockstat r, w;
	struct vs_lock l;
	struct holder h;
	char name[VS_LOCK_CLASS_NAME_MAX + 1];
	int64_t t0, waited;

	ck_assert_int_eq(vs_thread_attach(), 0);
	class = lock_init_class(&l, kind, name, sizeof(name));
	vs_lockstat_enable(1);
	vs_lockstat_reset();

	/* Writer behind writer. */
	holder_start(&h, &l, true, hold);
	vs_test_set(&h.go, 1);
	t0 = vs_test_now_ns();
	vs_lock_write_lock(&l);
	waited = vs_test_now_ns() - t0;
	vs_lock_write_unlock(&l);
	holder_finish(&h);

	w = read_side(class, VS_LOCK_WRITE);
	check_sane(&w);
	ck_assert_uint_eq(w.acquisitions, 2);
	ck_assert_uint_eq(w.holdtime_nr, 2);
	ck_assert_uint_eq(w.contentions, 1);
	ck_assert_uint_eq(w.con_bounces, 1);
	ck_assert_uint_eq(w.waittime_min, w.waittime_max);
	ck_assert_uint_eq(w.waittime_total, w.waittime_max);
	/* Generous: this thread may be preempted on a loaded machine. */
	ck_assert_uint_ge(w.waittime_min, 10 * MS);
	ck_assert_uint_le(w.waittime_max, (uint64_t)waited);
	/* The holder held for at least its sleep. */
	ck_assert_uint_ge(w.holdtime_max, (uint64_t)hold);
	r = read_side(class, VS_LOCK_READ);
	ck_assert_uint_eq(r.acquisitions, 0);
	ck_assert_uint_eq(r.contentions, 0);

	/* Reader behind writer. */
	vs_lockstat_reset();
	holder_start(&h, &l, true, hold);
	vs_test_set(&h.go, 1);
	t0 = vs_test_now_ns();
	vs_lock_read_lock(&l);
	waited = vs_test_now_ns() - t0;
	vs_lock_read_unlock(&l);
	holder_finish(&h);

	r = read_side(class, VS_LOCK_READ);
	w = read_side(class, VS_LOCK_WRITE);
	check_sane(&r);
	ck_assert_uint_eq(r.acquisitions, 1);
	ck_assert_uint_eq(r.contentions, 1);
	ck_assert_uint_eq(r.con_bounces, 1);
	ck_assert_uint_ge(r.waittime_min, 10 * MS);
	ck_assert_uint_le(r.waittime_max, (uint64_t)waited);
	ck_assert_uint_eq(w.acquisitions, 1);
	ck_assert_uint_eq(w.contentions, 0);

	vs_lockstat_enable(0);
	ck_assert_int_eq(vs_lock_destroy(&l), 0);
}
END_TEST

/* Bounces: A A B A on one lock (either side) is two bounces, B's and
 * A's second; contention does not matter. */
START_TEST(lockstat_bounces)
{
	struct vs_lockstat r, w;
	struct vs_lock_class *class;
	struct vs_lock l;
	struct holder h;
	char name[VS_LOCK_CLASS_NAME_MAX + 1];

	ck_assert_int_eq(vs_thread_attach(), 0);
	class = lock_init_class(&l, "rwsem", name, sizeof(name));
	vs_lockstat_enable(1);
	write_pair(&l);
	vs_lockstat_reset();

	write_pair(&l);                       /* A: no bounce */
	read_pair(&l);                        /* A: no bounce */
	holder_start(&h, &l, true, 0);        /* B: bounce (W) */
	holder_finish(&h);
	read_pair(&l);                        /* A: bounce (R) */
	read_pair(&l);                        /* A: no bounce */

	r = read_side(class, VS_LOCK_READ);
	w = read_side(class, VS_LOCK_WRITE);
	ck_assert_uint_eq(w.acquisitions, 2);
	ck_assert_uint_eq(w.acq_bounces, 1);
	ck_assert_uint_eq(r.acquisitions, 3);
	ck_assert_uint_eq(r.acq_bounces, 1);
	ck_assert_uint_eq(r.con_bounces + w.con_bounces, 0);
	vs_lockstat_enable(0);
	ck_assert_int_eq(vs_lock_destroy(&l), 0);
}
END_TEST

/*
 * Switching statistics off while a lock is held, and back on while it is
 * held again, must not produce a holdtime sample spanning the gap:
 * only an acquisition recorded while statistics were on can be timed.
 */
START_TEST(lockstat_toggle_while_held)
{
	const int64_t gap = 30 * MS;
	struct vs_lock_class *class;
	struct vs_lockstat w;
	struct vs_lock l;
	char name[VS_LOCK_CLASS_NAME_MAX + 1];

	ck_assert_int_eq(vs_thread_attach(), 0);
	class = lock_init_class(&l, "rwsem", name, sizeof(name));
	vs_lockstat_reset();

	vs_lockstat_enable(1);
	vs_lock_write_lock(&l);         /* recorded */
	vs_lockstat_enable(0);
	vs_lock_write_unlock(&l);       /* statistics off: not timed */

	vs_test_sleep_ns(gap);

	vs_lock_write_lock(&l);         /* statistics off: not recorded */
	vs_lockstat_enable(1);
	vs_lock_write_unlock(&l);       /* nothing to time */

	write_pair(&l);                 /* recorded and timed */
	vs_lockstat_enable(0);

	w = read_side(class, VS_LOCK_WRITE);
	ck_assert_uint_eq(w.acquisitions, 2);
	ck_assert_uint_le(w.holdtime_nr, w.acquisitions);
	ck_assert_msg(w.holdtime_max < (uint64_t)gap,
		      "holdtime_max %llu ns spans the %lld ns gap with "
		      "statistics off (holdtime_nr %llu)",
		      (unsigned long long)w.holdtime_max, (long long)gap,
		      (unsigned long long)w.holdtime_nr);
	ck_assert_int_eq(vs_lock_destroy(&l), 0);
}
END_TEST

static void tr_nop(struct vs_lock *lock, bool write, void *arg)
{
	(void)lock;
	(void)write;
	(void)arg;
}

/*
 * A release while statistics are off is not timed, also when trace
 * hooks keep the hooked slow path in use.
 */
START_TEST(lockstat_release_while_off_traced)
{
	const struct vs_lock_trace tr = { .released = tr_nop };
	struct vs_lock_class *class;
	struct vs_lockstat w;
	struct vs_lock l;
	char name[VS_LOCK_CLASS_NAME_MAX + 1];

	ck_assert_int_eq(vs_thread_attach(), 0);
	class = lock_init_class(&l, "rwsem", name, sizeof(name));
	vs_lockstat_reset();
	vs_lock_trace_set(&tr);

	vs_lockstat_enable(1);
	vs_lock_write_lock(&l);         /* recorded */
	vs_lockstat_enable(0);
	vs_lock_write_unlock(&l);       /* statistics off: not timed */

	vs_lock_trace_set(NULL);
	w = read_side(class, VS_LOCK_WRITE);
	ck_assert_uint_eq(w.acquisitions, 1);
	ck_assert_msg(w.holdtime_nr == 0, "a release with statistics off "
		      "was timed (holdtime_nr %llu)",
		      (unsigned long long)w.holdtime_nr);
	ck_assert_int_eq(vs_lock_destroy(&l), 0);
}
END_TEST

/* ---- trace hooks ------------------------------------------------------ */

struct trace_count {
	vs_atomic32_t start[2];
	vs_atomic32_t acq_ok[2];
	vs_atomic32_t acq_fail[2];
	vs_atomic32_t released[2];
	vs_atomic32_t wrong_lock;
	struct vs_lock *lock;
};

static void tr_start(struct vs_lock *lock, bool write, void *arg)
{
	struct trace_count *t = arg;

	vs_fetch_add(&t->start[write], 1);
	if (lock != t->lock)
		vs_fetch_add(&t->wrong_lock, 1);
}

static void tr_acquired(struct vs_lock *lock, bool write, bool success,
			void *arg)
{
	struct trace_count *t = arg;

	vs_fetch_add(success ? &t->acq_ok[write] : &t->acq_fail[write], 1);
	if (lock != t->lock)
		vs_fetch_add(&t->wrong_lock, 1);
}

static void tr_released(struct vs_lock *lock, bool write, void *arg)
{
	struct trace_count *t = arg;

	vs_fetch_add(&t->released[write], 1);
	if (lock != t->lock)
		vs_fetch_add(&t->wrong_lock, 1);
}

#define CK_TRACE(t, f, rd, wr)                                  \
	do {                                                    \
		ck_assert_uint_eq(vs_test_read32(&(t)->f[0]), rd); \
		ck_assert_uint_eq(vs_test_read32(&(t)->f[1]), wr); \
	} while (0)

/*
 * Every lock kind, statistics off and no class: the hooks see the known
 * sequence (the helper thread's read lock included) as
 *
 *	start_locking      R 5  W 4
 *	acquire_returned   R 6  W 3 succeeded, W 1 failed (the trylock)
 *	released           R 6  W 2
 *
 * where the downgrade reports acquire_returned(R) only, as the kernel's
 * mmap_write_downgrade() does; every other successful acquisition is
 * released.  vs_lock_trace_set(NULL) stops
 * the calls.
 */
START_TEST(lockstat_trace_hooks)
{
	const char *kind = kind_name(_i);
	struct trace_count t;
	struct vs_lock_trace tr = {
		.start_locking = tr_start,
		.acquire_returned = tr_acquired,
		.released = tr_released,
		.arg = &t,
	};
	struct vs_lock l;

	ck_assert_int_eq(vs_thread_attach(), 0);
	memset(&t, 0, sizeof(t));
	t.lock = &l;
	ck_assert_int_eq(vs_lock_init(&l, kind, NULL), 0);
	ck_assert_ptr_null(l.class);
	vs_lockstat_enable(0);
	vs_lock_trace_set(&tr);
	/* The structure is copied. */
	memset(&tr, 0, sizeof(tr));

	known_sequence(&l);

	CK_TRACE(&t, start, 5, 4);
	CK_TRACE(&t, acq_ok, 6, 3);
	CK_TRACE(&t, acq_fail, 0, 1);
	CK_TRACE(&t, released, 6, 2);
	ck_assert_uint_eq(vs_test_read32(&t.wrong_lock), 0);

	vs_lock_trace_set(NULL);
	known_sequence(&l);
	CK_TRACE(&t, start, 5, 4);
	CK_TRACE(&t, acq_ok, 6, 3);
	CK_TRACE(&t, acq_fail, 0, 1);
	CK_TRACE(&t, released, 6, 2);
	ck_assert_int_eq(vs_lock_destroy(&l), 0);
}
END_TEST

/* Hooks left NULL in the structure are skipped. */
START_TEST(lockstat_trace_partial)
{
	struct trace_count t;
	struct vs_lock_trace tr = { .released = tr_released, .arg = &t };
	struct vs_lock l;

	ck_assert_int_eq(vs_thread_attach(), 0);
	memset(&t, 0, sizeof(t));
	t.lock = &l;
	ck_assert_int_eq(vs_lock_init(&l, "rwsem", "test_class_partial"), 0);
	vs_lock_trace_set(&tr);
	read_pair(&l);
	write_pair(&l);
	ck_assert_int_eq(vs_lock_read_trylock(&l), 1);
	vs_lock_read_unlock(&l);
	vs_lock_trace_set(NULL);
	CK_TRACE(&t, released, 2, 1);
	CK_TRACE(&t, start, 0, 0);
	ck_assert_int_eq(vs_lock_destroy(&l), 0);
}
END_TEST

/* ---- the hooks come after the real unlock ----------------------------- */

struct probe {
	vs_atomic32_t free[2];	/* released found the lock free, R W */
	vs_atomic32_t busy[2];	/* released found it still held */
};

/*
 * A released hook that asks the lock's kind, not the hooked table, for a
 * write lock: after the real unlock, with no other thread about, it gets
 * it at once.
 */
static void probe_released(struct vs_lock *lock, bool write, void *arg)
{
	struct probe *p = arg;

	if (lock->kind->write_trylock(lock)) {
		lock->kind->write_unlock(lock);
		vs_fetch_add(&p->free[write], 1);
	} else {
		vs_fetch_add(&p->busy[write], 1);
	}
}

/*
 * Every lock kind, both sides, downgrade too, statistics on: the
 * released hook runs after the unlock, so a holder preempted before the
 * unlock still shows as holding.  The order before this test found the
 * lock held every time.
 */
START_TEST(lockstat_released_after_unlock)
{
	const char *kind = kind_name(_i);
	struct probe p;
	const struct vs_lock_trace tr = { .released = probe_released,
					  .arg = &p };
	struct vs_lock_class *class;
	struct vs_lockstat r, w;
	struct vs_lock l;
	char name[VS_LOCK_CLASS_NAME_MAX + 1];

	ck_assert_int_eq(vs_thread_attach(), 0);
	memset(&p, 0, sizeof(p));
	class = lock_init_class(&l, kind, name, sizeof(name));
	vs_lockstat_reset();
	vs_lockstat_enable(1);
	vs_lock_trace_set(&tr);

	read_pair(&l);
	write_pair(&l);
	ck_assert_int_eq(vs_lock_read_trylock(&l), 1);
	vs_lock_read_unlock(&l);
	ck_assert_int_eq(vs_lock_write_trylock(&l), 1);
	vs_lock_write_unlock(&l);
	vs_lock_write_lock(&l);
	vs_lock_downgrade_write(&l);
	vs_lock_read_unlock(&l);

	vs_lock_trace_set(NULL);
	vs_lockstat_enable(0);
	ck_assert_msg(vs_test_read32(&p.busy[0]) == 0 &&
		      vs_test_read32(&p.busy[1]) == 0,
		      "%s: released found the lock still held %u (R) and "
		      "%u (W) times", kind, vs_test_read32(&p.busy[0]),
		      vs_test_read32(&p.busy[1]));
	CK_TRACE(&p, free, 3, 2);
	/* The probe's own acquisitions bypass the hooks: not counted. */
	r = read_side(class, VS_LOCK_READ);
	w = read_side(class, VS_LOCK_WRITE);
	ck_assert_uint_eq(r.acquisitions, 3);
	ck_assert_uint_eq(r.holdtime_nr, 3);
	ck_assert_uint_eq(w.acquisitions, 3);
	ck_assert_uint_eq(w.holdtime_nr, 3);
	ck_assert_int_eq(vs_lock_destroy(&l), 0);
}
END_TEST

/* rwsem with an unlock and a downgrade that take SLOW_NS each. */
#define SLOW_NS (20 * MS)
static const struct vs_lock_ops *slow_base;

static void slow_read_unlock(struct vs_lock *l)
{
	vs_test_sleep_ns(SLOW_NS);
	slow_base->read_unlock(l);
}

static void slow_write_unlock(struct vs_lock *l)
{
	vs_test_sleep_ns(SLOW_NS);
	slow_base->write_unlock(l);
}

static void slow_downgrade(struct vs_lock *l)
{
	vs_test_sleep_ns(SLOW_NS);
	slow_base->downgrade_write(l);
}

/*
 * A hold ends when the unlock (or the downgrade) returns: with a kind
 * whose unlock and downgrade take 20 ms, every hold lasts at least that.
 * Timed before the unlock, as it was, each one lasted about nothing.
 */
START_TEST(lockstat_hold_ends_at_unlock)
{
	static struct vs_lock_ops slow;
	struct vs_lock_class *class;
	struct vs_lockstat r, w;
	struct vs_lock l;
	char name[VS_LOCK_CLASS_NAME_MAX + 1];

	ck_assert_int_eq(vs_thread_attach(), 0);
	slow_base = vs_lock_kind_ops("rwsem");
	ck_assert_ptr_nonnull(slow_base);
	slow = *slow_base;
	slow.name = "test_slow_unlock";
	slow.read_unlock = slow_read_unlock;
	slow.write_unlock = slow_write_unlock;
	slow.downgrade_write = slow_downgrade;
	ck_assert_int_ge(vs_lock_kind_register(&slow), 0);
	class = lock_init_class(&l, slow.name, name, sizeof(name));
	vs_lockstat_reset();
	vs_lockstat_enable(1);

	read_pair(&l);
	write_pair(&l);
	vs_lock_write_lock(&l);
	vs_lock_downgrade_write(&l);    /* W ends after 20 ms, R starts */
	vs_lock_read_unlock(&l);        /* R ends after 20 ms */
	vs_lockstat_enable(0);

	r = read_side(class, VS_LOCK_READ);
	w = read_side(class, VS_LOCK_WRITE);
	check_sane(&r);
	check_sane(&w);
	ck_assert_uint_eq(r.holdtime_nr, 2);
	ck_assert_uint_eq(w.holdtime_nr, 2);
	ck_assert_msg(r.holdtime_min >= SLOW_NS && w.holdtime_min >= SLOW_NS,
		      "a hold ended before its %lld ns unlock: shortest R %llu "
		      "ns, W %llu ns", (long long)SLOW_NS,
		      (unsigned long long)r.holdtime_min,
		      (unsigned long long)w.holdtime_min);
	ck_assert_int_eq(vs_lock_destroy(&l), 0);
}
END_TEST

/* ---- held locks alone --------------------------------------------------- */

static const struct vs_lock_ops *count_base;
static int tries;

static int count_write_trylock(struct vs_lock *l)
{
	tries++;
	return count_base->write_trylock(l);
}

/* vs_lockstat_track_held() records the holds but leaves the kind's own
 * lock path: no trylock first, as statistics do, and no statistics. */
START_TEST(lockstat_track_held)
{
	static struct vs_lock_ops counting;
	struct vs_lock_class *class;
	struct vs_lock l;
	char name[VS_LOCK_CLASS_NAME_MAX + 1], held[128];

	ck_assert_int_eq(vs_thread_attach(), 0);
	count_base = vs_lock_kind_ops("rwsem");
	counting = *count_base;
	counting.name = "test_count_trylock";
	counting.write_trylock = count_write_trylock;
	ck_assert_int_ge(vs_lock_kind_register(&counting), 0);
	class = lock_init_class(&l, counting.name, name, sizeof(name));
	vs_lockstat_reset();

	ck_assert_int_eq(vs_lockstat_track_held(1), 0);
	vs_lock_write_lock(&l);
	(void)vs__lockstat_held_of(vs_vcpu_self(), held, sizeof(held));
	ck_assert_msg(strstr(held, "(write)"), "holds: %s", held);
	vs_lock_write_unlock(&l);
	(void)vs__lockstat_held_of(vs_vcpu_self(), held, sizeof(held));
	ck_assert_str_eq(held, "nothing");
	ck_assert_int_eq(tries, 0);
	ck_assert_uint_eq(read_side(class, VS_LOCK_WRITE).acquisitions, 0);
	ck_assert_int_eq(vs_lockstat_track_held(0), 1);

	vs_lockstat_enable(1);	/* statistics try first */
	write_pair(&l);
	vs_lockstat_enable(0);
	ck_assert_int_eq(tries, 1);
	ck_assert_int_eq(vs_lock_destroy(&l), 0);
}
END_TEST

/* ---- printout --------------------------------------------------------- */

/* Parse the numbers of one "class-S:" line of the printout. */
static int print_counts(const char *line, unsigned long long *con,
			unsigned long long *acq)
{
	unsigned long long con_bounces, acq_bounces;
	double wmin, wmax, wtotal, wavg;

	line = strchr(line, ':');
	if (!line)
		return -1;
	if (sscanf(line + 1, "%llu %llu %lf %lf %lf %lf %llu %llu",
		   &con_bounces, con, &wmin, &wmax, &wtotal, &wavg,
		   &acq_bounces, acq) != 8)
		return -1;
	return 0;
}

/* vs_lockstat_print writes /proc/lock_stat's layout: version line,
 * column header, and a -W and a -R line per class. */
START_TEST(lockstat_print)
{
	static const char *const columns[] = {
		"class name", "con-bounces", "contentions", "waittime-min",
		"waittime-max", "waittime-total", "waittime-avg",
		"acq-bounces", "acquisitions", "holdtime-min",
		"holdtime-max", "holdtime-total", "holdtime-avg",
	};
	struct vs_lock l;
	char *buf = NULL;
	const char *wline, *rline;
	unsigned long long con, acq;
	size_t len = 0, i;
	FILE *f;

	ck_assert_int_eq(vs_thread_attach(), 0);
	ck_assert_int_eq(vs_lock_init(&l, "rwsem", "test_class_print"), 0);
	vs_lockstat_reset();
	vs_lockstat_enable(1);
	read_pair(&l);
	write_pair(&l);
	write_pair(&l);
	vs_lockstat_enable(0);

	f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(vs_lockstat_print(f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_ptr_nonnull(buf);

	ck_assert_msg(strncmp(buf, "lock_stat version 0.4\n", 22) == 0,
		      "bad first line in:\n%s", buf);
	for (i = 0; i < VS_ARRAY_SIZE(columns); i++)
		ck_assert_msg(strstr(buf, columns[i]), "no column '%s' in:\n%s",
			      columns[i], buf);
	wline = strstr(buf, "test_class_print-W:");
	rline = strstr(buf, "test_class_print-R:");
	ck_assert_msg(wline && rline, "no class lines in:\n%s", buf);
	ck_assert(wline < rline);
	/* Columns 2 and 8: contentions and acquisitions. */
	ck_assert_int_eq(print_counts(wline, &con, &acq), 0);
	ck_assert_uint_eq(con, 0);
	ck_assert_uint_eq(acq, 2);
	ck_assert_int_eq(print_counts(rline, &con, &acq), 0);
	ck_assert_uint_eq(con, 0);
	ck_assert_uint_eq(acq, 1);
	free(buf);
	ck_assert_int_eq(vs_lock_destroy(&l), 0);
}
END_TEST

/* ---- errors ----------------------------------------------------------- */

/* NULL and out-of-range arguments are refused with -EINVAL or NULL. */
START_TEST(lockstat_errors)
{
	char name[VS_LOCK_CLASS_NAME_MAX + 2];
	struct vs_lock_class *c;
	struct vs_lockstat st;
	struct vs_lock l;

	ck_assert_int_eq(vs_lockstat_read(NULL, VS_LOCK_READ, &st), -EINVAL);
	ck_assert_int_eq(vs_lockstat_print(NULL), -EINVAL);
	ck_assert_ptr_null(vs_lock_class_get(NULL));
	ck_assert_ptr_null(vs_lock_class_get(""));

	/* The longest name fits; one more character does not. */
	memset(name, 'x', VS_LOCK_CLASS_NAME_MAX);
	name[VS_LOCK_CLASS_NAME_MAX] = '\0';
	c = vs_lock_class_get(name);
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->name, name);
	ck_assert_ptr_eq(vs_lock_class_get(name), c);
	name[VS_LOCK_CLASS_NAME_MAX] = 'x';
	name[VS_LOCK_CLASS_NAME_MAX + 1] = '\0';
	ck_assert_ptr_null(vs_lock_class_get(name));
	ck_assert_int_eq(vs_lock_init(&l, "rwsem", name), -EINVAL);

	ck_assert_int_eq(vs_lockstat_read(c, VS_LOCK_READ, NULL), -EINVAL);
	ck_assert_int_eq(vs_lockstat_read(c, (enum vs_lock_side)2, &st),
			 -EINVAL);
	ck_assert_int_eq(vs_lockstat_read(c, (enum vs_lock_side)-1, &st),
			 -EINVAL);
	ck_assert_int_eq(vs_lockstat_read(c, VS_LOCK_WRITE, &st), 0);
	ck_assert_uint_eq(st.acquisitions, 0);
}
END_TEST

/* The class table holds VS_LOCK_CLASS_MAX classes; then lookups of
 * existing names still work and new names get NULL. */
START_TEST(lockstat_class_table_full)
{
	struct vs_lock_class *first = NULL, *c;
	char name[32];
	int i;

	for (i = 0; ; i++) {
		snprintf(name, sizeof(name), "test_full_%d", i);
		c = vs_lock_class_get(name);
		if (!c)
			break;
		if (!first)
			first = c;
		ck_assert_int_lt(i, VS_LOCK_CLASS_MAX);
	}
	/* A fresh process: this test made every class. */
	ck_assert_int_eq(i, VS_LOCK_CLASS_MAX);
	ck_assert_ptr_nonnull(first);
	ck_assert_ptr_eq(vs_lock_class_get("test_full_0"), first);
}
END_TEST

Suite *lockstat_suite(void)
{
	Suite *s = suite_create("lockstat");
	TCase *kinds = vs_test_tcase(s, "kinds");
	TCase *misc = vs_test_tcase(s, "misc");
	int n = nr_kinds();

	tcase_add_loop_test(kinds, lockstat_counts, 0, n);
	tcase_add_loop_test(kinds, lockstat_disabled, 0, n);
	tcase_add_loop_test(kinds, lockstat_contended, 0, n);
	tcase_add_loop_test(kinds, lockstat_trace_hooks, 0, n);
	tcase_add_loop_test(kinds, lockstat_released_after_unlock, 0, n);

	tcase_add_test(misc, lockstat_bounces);
	tcase_add_test(misc, lockstat_toggle_while_held);
	tcase_add_test(misc, lockstat_release_while_off_traced);
	tcase_add_test(misc, lockstat_trace_partial);
	tcase_add_test(misc, lockstat_print);
	tcase_add_test(misc, lockstat_errors);
	/* Fill the process-wide class table and add a lock kind: only in
	 * a process of their own. */
	if (!getenv("CK_FORK") || strcmp(getenv("CK_FORK"), "no") != 0) {
		tcase_add_test(misc, lockstat_class_table_full);
		tcase_add_test(misc, lockstat_hold_ends_at_unlock);
		tcase_add_test(misc, lockstat_track_held);
	}

	return s;
}
