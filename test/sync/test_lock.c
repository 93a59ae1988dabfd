/* SPDX-License-Identifier: MIT */
/*
 * test/sync/test_lock.c - struct vs_lock (vmsim/lock.h), every kind.
 *
 * Each property is a Check loop test whose index is the kind number:
 * vs_lock_kind_name(_i) names the kind under test.
 *
 * Shared flags between threads go through vmsim/atomic.h.  The plain
 * fields of struct stress are touched only inside the lock under test:
 * protecting them is what the lock is for, and a ThreadSanitizer build
 * reports a race if it does not.
 *
 * Every wait is bounded: a broken lock fails a test, it never hangs it.
 * A helper thread that holds a lock lets it go after HOLD_BOUND_NS even
 * if the test thread has failed.  Assertions run on the test thread
 * only, after helpers are joined where possible.
 *
 * Threads sleep offline for RCU (vs_test_nap(), vs_test_wait_ge(), vs_test_thread_join()) so
 * that the suite also runs under urcu-qsbr, where an online thread that
 * sleeps would hold up the grace periods of the percpu kind's writers.
 *
 * VS_TEST_SCALE (test.h) scales the iteration counts of the stress tests.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vmsim/atomic.h>
#include <vmsim/lock.h>
#include <vmsim/rcu.h>
#include <vmsim/thread.h>
#include <vmsim/wait.h>

#include "test.h"

#define MS VS_TEST_NS_PER_MS
/* How long a thread may wait for what a correct lock grants promptly. */
#define BOUND_NS (2000 * MS)
/* How long a helper holds a lock at most, whatever the test thread does. */
#define HOLD_BOUND_NS VS_TEST_WAIT_NS
/* How long a join waits for a thread, seconds. */

/* The most threads a stress test starts. */
#define MAX_THREADS (VS_NR_SLOTS + 8)

/* ---- helpers ------------------------------------------------------- */

static const char *kind_name(int kind)
{
	const char *name = vs_lock_kind_name(kind);

	ck_assert_ptr_nonnull(name);
	return name;
}

/* Attach the test thread and set up @lock as a lock of kind @kind. */
static const char *lock_setup(struct vs_lock *lock, int kind)
{
	const char *name = kind_name(kind);

	ck_assert_int_eq(vs_thread_attach(), 0);
	ck_assert_int_eq(vs_lock_init(lock, name, NULL), 0);
	return name;
}

static void lock_teardown(struct vs_lock *lock, const char *name)
{
	int err = vs_lock_destroy(lock);

	ck_assert_msg(err == 0, "%s: destroy of a free lock returned %d",
		      name, err);
}

static void lock_side(struct vs_lock *lock, int write)
{
	if (write)
		vs_lock_write_lock(lock);
	else
		vs_lock_read_lock(lock);
}

static void unlock_side(struct vs_lock *lock, int write)
{
	if (write)
		vs_lock_write_unlock(lock);
	else
		vs_lock_read_unlock(lock);
}

/*
 * A holder: a thread that takes @lock in one mode, says so, and keeps it
 * until told to let go (or HOLD_BOUND_NS passes).  Per-slot kinds must
 * be unlocked by the thread that locked, hence a thread of its own.
 */
struct holder {
	struct vs_lock *lock;
	int write;
	vs_atomic32_t held;
	vs_atomic32_t release;
	pthread_t tid;
};

static void *holder_fn(void *arg)
{
	struct holder *h = arg;

	vs_thread_attach();
	lock_side(h->lock, h->write);
	vs_test_set(&h->held, 1);
	vs_test_wait_ge(&h->release, 1, HOLD_BOUND_NS);
	unlock_side(h->lock, h->write);
	return NULL;
}

/* Return: 1 once the holder holds @lock, 0 if it did not within bound. */
static int holder_start(struct holder *h, struct vs_lock *lock, int write)
{
	h->lock = lock;
	h->write = write;
	vs_atomic_init(&h->held, 0);
	vs_atomic_init(&h->release, 0);
	vs_test_thread_create(&h->tid, holder_fn, h);
	return vs_test_wait_ge(&h->held, 1, BOUND_NS);
}

static void holder_stop(struct holder *h)
{
	vs_test_set(&h->release, 1);
	vs_test_thread_join(h->tid);
}

/*
 * A one-shot trylocker: a thread that tries the lock once in each mode
 * (write first) and drops what it got.  Results: 1 taken, 0 refused.
 */
struct tryer {
	struct vs_lock *lock;
	int wrote;
	int read;
};

static void *tryer_fn(void *arg)
{
	struct tryer *t = arg;

	vs_thread_attach();
	t->wrote = vs_lock_write_trylock(t->lock);
	if (t->wrote)
		vs_lock_write_unlock(t->lock);
	t->read = vs_lock_read_trylock(t->lock);
	if (t->read)
		vs_lock_read_unlock(t->lock);
	return NULL;
}

/* Run a tryer to completion; pthread_join orders its results for us. */
static void try_from_other_thread(struct vs_lock *lock, struct tryer *t)
{
	pthread_t tid;

	t->lock = lock;
	t->wrote = t->read = -1;
	vs_test_thread_create(&tid, tryer_fn, t);
	vs_test_thread_join(tid);
}

/* ---- exclusion stress ------------------------------------------------ */

struct stress {
	struct vs_lock *lock;
	long iters;             /* per worker */
	uint32_t max_owned;     /* workers among threads owning a slot */
	vs_atomic32_t ready;    /* threads attached and waiting for go */
	vs_atomic32_t go;
	vs_atomic32_t owned;    /* owned-slot threads that chose a role */
	vs_atomic32_t workers;  /* threads that run the loop */
	vs_atomic32_t shared;   /* threads on VS_SLOT_SHARED */
	vs_atomic32_t settled;  /* threads idle or done with the loop */
	vs_atomic32_t done;     /* futex word: idle threads may exit */
	vs_atomic32_t errors;   /* broken invariants seen */
	/* protected by lock; invariant outside write sections: a == b ==
	 * counter */
	long counter;
	long a, b;
};

static void stress_loop(struct stress *s)
{
	long i, old, ra, rb;

	for (i = 0; i < s->iters; i++) {
		if (i % 4 == 0) {
			/* A non-atomic read-modify-write, in steps that a
			 * second writer or a reader would catch. */
			vs_lock_write_lock(s->lock);
			old = s->counter;
			if (s->a != old || s->b != old)
				vs_fetch_add(&s->errors, 1);
			s->a = old + 1;
			vs_test_relax(20);
			s->b = s->a;
			vs_barrier();
			s->counter = old + 1;
			vs_lock_write_unlock(s->lock);
		} else {
			vs_lock_read_lock(s->lock);
			ra = s->a;
			vs_test_relax(10);
			rb = s->b;
			if (ra != rb || s->counter != ra)
				vs_fetch_add(&s->errors, 1);
			vs_lock_read_unlock(s->lock);
		}
		vs_rcu_quiescent_state();
	}
}

static void *stress_fn(void *arg)
{
	struct stress *s = arg;
	int on_shared;

	vs_thread_attach();
	on_shared = vs__thread_slot() == VS_SLOT_SHARED;
	if (on_shared)
		vs_fetch_add(&s->shared, 1);
	vs_fetch_add(&s->ready, 1);
	vs_test_wait_ge(&s->go, 1, HOLD_BOUND_NS);

	/* Every thread now holds its slot.  Threads on the shared slot
	 * always work; of the others, max_owned do, and the rest only keep
	 * their slots taken until the workers are done. */
	if (!on_shared && vs_fetch_add(&s->owned, 1) >= s->max_owned) {
		vs_fetch_add(&s->settled, 1);
		while (!vs_load_acquire(&s->done))
			vs_futex_wait(&s->done, 0, (int64_t)HOLD_BOUND_NS);
		return NULL;
	}
	vs_fetch_add(&s->workers, 1);
	stress_loop(s);
	vs_fetch_add(&s->settled, 1);
	return NULL;
}

/*
 * Start @nthreads threads over a fresh lock of @kind, all attached at
 * once; the threads on the shared slot and @max_owned others run @iters
 * iterations each.  Return: how many threads ran on the shared slot.
 */
static int run_stress(int kind, int nthreads, int max_owned, long iters)
{
	pthread_t tid[MAX_THREADS];
	struct vs_lock lock;
	struct stress s;
	const char *name;
	long expect;
	uint32_t errors, ready, workers;
	int i, shared, settled;

	ck_assert_int_le(nthreads, MAX_THREADS);
	name = lock_setup(&lock, kind);
	memset(&s, 0, sizeof(s));
	s.lock = &lock;
	s.iters = iters;
	s.max_owned = (uint32_t)max_owned;
	vs_atomic_init(&s.ready, 0);
	vs_atomic_init(&s.go, 0);
	vs_atomic_init(&s.owned, 0);
	vs_atomic_init(&s.workers, 0);
	vs_atomic_init(&s.shared, 0);
	vs_atomic_init(&s.settled, 0);
	vs_atomic_init(&s.done, 0);
	vs_atomic_init(&s.errors, 0);

	for (i = 0; i < nthreads; i++)
		vs_test_thread_create(&tid[i], stress_fn, &s);
	vs_test_wait_ge(&s.ready, (uint32_t)nthreads, BOUND_NS);
	ready = vs_load_acquire(&s.ready);
	vs_test_set(&s.go, 1);
	settled = vs_test_wait_ge(&s.settled, (uint32_t)nthreads, HOLD_BOUND_NS);
	vs_test_set(&s.done, 1);
	vs_futex_wake(&s.done, INT32_MAX);
	for (i = 0; i < nthreads; i++)
		vs_test_thread_join(tid[i]);

	errors = vs_load_acquire(&s.errors);
	shared = (int)vs_load_acquire(&s.shared);
	workers = vs_load_acquire(&s.workers);
	expect = (long)workers * ((iters + 3) / 4);
	ck_assert_msg(ready == (uint32_t)nthreads,
		      "%s: only %u of %d threads started in time", name,
		      ready, nthreads);
	ck_assert_msg(settled, "%s: workers took too long", name);
	ck_assert_msg(errors == 0, "%s: %u broken invariants", name, errors);
	ck_assert_msg(s.counter == expect,
		      "%s: counter %ld, expected %ld (lost updates)", name,
		      s.counter, expect);
	ck_assert_msg(s.a == expect && s.b == expect,
		      "%s: a %ld b %ld, expected %ld", name, s.a, s.b, expect);
	lock_teardown(&lock, name);
	return shared;
}

/* Writers exclude readers and other writers: 4 threads mixing write
 * sections (a plain read-modify-write of a counter, and a == b) and read
 * sections (checking a == b); no update is lost. */
START_TEST(test_lock_exclusion)
{
	run_stress(_i, 4, 4, vs_test_scale(20000));
}
END_TEST

/* The same with more threads than cores (8 threads; on a 2-core machine
 * lock holders get preempted inside their sections). */
START_TEST(test_lock_exclusion_oversubscribed)
{
	run_stress(_i, 8, 8, vs_test_scale(5000));
}
END_TEST

/*
 * More threads than slots: VS_NR_SLOTS + 4 threads attached at once, so
 * that at least 5 (with the test thread) share VS_SLOT_SHARED, which the
 * per-slot kinds update with atomics (brlock: an rwsem for all of them).
 * The shared-slot threads and two slot owners work; the other owners
 * only keep their slots taken.  Exclusion still holds.
 */
START_TEST(test_lock_exclusion_shared_slot)
{
	int shared = run_stress(_i, VS_NR_SLOTS + 4, 2, vs_test_scale(10000));

	ck_assert_msg(shared >= 2, "%s: only %d threads on the shared slot",
		      kind_name(_i), shared);
}
END_TEST

/* ---- trylock --------------------------------------------------------- */

/*
 * Trylock semantics: both trylocks succeed on a free lock; read_trylock
 * succeeds while another thread holds read (no writer queued, so even
 * rwsem, which refuses while waiters queue, must grant it) and fails
 * while another holds write; write_trylock fails while another thread
 * holds either.  A failed trylock leaves nothing behind.
 */
START_TEST(test_lock_trylock)
{
	struct vs_lock lock;
	struct holder h;
	const char *name = lock_setup(&lock, _i);
	int r_free, w_free, held_r, r_rd, w_rd, held_w, r_wr, w_wr;
	int w_after, r_after;

	r_free = vs_lock_read_trylock(&lock);
	if (r_free)
		vs_lock_read_unlock(&lock);
	w_free = vs_lock_write_trylock(&lock);
	if (w_free)
		vs_lock_write_unlock(&lock);

	held_r = holder_start(&h, &lock, 0);
	r_rd = vs_lock_read_trylock(&lock);
	if (r_rd)
		vs_lock_read_unlock(&lock);
	w_rd = vs_lock_write_trylock(&lock);
	if (w_rd)
		vs_lock_write_unlock(&lock);
	holder_stop(&h);

	held_w = holder_start(&h, &lock, 1);
	r_wr = vs_lock_read_trylock(&lock);
	if (r_wr)
		vs_lock_read_unlock(&lock);
	w_wr = vs_lock_write_trylock(&lock);
	if (w_wr)
		vs_lock_write_unlock(&lock);
	holder_stop(&h);

	/* Nothing left behind by the failed attempts. */
	w_after = vs_lock_write_trylock(&lock);
	if (w_after)
		vs_lock_write_unlock(&lock);
	r_after = vs_lock_read_trylock(&lock);
	if (r_after)
		vs_lock_read_unlock(&lock);

	ck_assert_msg(r_free == 1, "%s: read_trylock on a free lock", name);
	ck_assert_msg(w_free == 1, "%s: write_trylock on a free lock", name);
	ck_assert_msg(held_r, "%s: holder did not get read in time", name);
	ck_assert_msg(r_rd == 1, "%s: read_trylock refused beside a reader",
		      name);
	ck_assert_msg(w_rd == 0, "%s: write_trylock granted beside a reader",
		      name);
	ck_assert_msg(held_w, "%s: holder did not get write in time", name);
	ck_assert_msg(r_wr == 0, "%s: read_trylock granted beside a writer",
		      name);
	ck_assert_msg(w_wr == 0, "%s: write_trylock granted beside a writer",
		      name);
	ck_assert_msg(w_after == 1,
		      "%s: write_trylock refused after failed trylocks", name);
	ck_assert_msg(r_after == 1,
		      "%s: read_trylock refused after failed trylocks", name);
	lock_teardown(&lock, name);
}
END_TEST

/* ---- readers share --------------------------------------------------- */

struct share {
	struct vs_lock *lock;
	vs_atomic32_t a_in;    /* A holds read */
	vs_atomic32_t b_in;    /* B got read while A held it */
	vs_atomic32_t a_saw_b; /* A saw B inside before letting go */
};

static void *share_a(void *arg)
{
	struct share *s = arg;

	vs_thread_attach();
	vs_lock_read_lock(s->lock);
	vs_test_set(&s->a_in, 1);
	if (vs_test_wait_ge(&s->b_in, 1, BOUND_NS))
		vs_test_set(&s->a_saw_b, 1);
	vs_lock_read_unlock(s->lock);
	return NULL;
}

static void *share_b(void *arg)
{
	struct share *s = arg;

	vs_thread_attach();
	vs_test_wait_ge(&s->a_in, 1, HOLD_BOUND_NS);
	vs_lock_read_lock(s->lock);
	vs_test_set(&s->b_in, 1);
	vs_lock_read_unlock(s->lock);
	return NULL;
}

/* Two readers can be inside at once: A holds read and waits for B; B's
 * blocking read_lock must return while A is still inside. */
static void check_readers_share(int kind)
{
	struct vs_lock lock;
	struct share s;
	pthread_t a, b;
	const char *name = lock_setup(&lock, kind);

	s.lock = &lock;
	vs_atomic_init(&s.a_in, 0);
	vs_atomic_init(&s.b_in, 0);
	vs_atomic_init(&s.a_saw_b, 0);
	vs_test_thread_create(&a, share_a, &s);
	vs_test_thread_create(&b, share_b, &s);
	vs_test_thread_join(a);
	vs_test_thread_join(b);
	ck_assert_msg(vs_load_acquire(&s.a_saw_b),
		      "%s: second reader blocked behind the first", name);
	lock_teardown(&lock, name);
}

START_TEST(test_lock_readers_share)
{
	check_readers_share(_i);
}
END_TEST

struct park {
	vs_atomic32_t ready;
	vs_atomic32_t done;
};

/* Hold a slot until told to go. */
static void *park_fn(void *arg)
{
	struct park *p = arg;

	vs_thread_attach();
	vs_fetch_add(&p->ready, 1);
	vs_futex_wake(&p->ready, INT32_MAX);
	while (!vs_load_acquire(&p->done))
		vs_futex_wait(&p->done, 0, (int64_t)HOLD_BOUND_NS);
	return NULL;
}

/* The same with every owned slot taken, so that both readers share
 * VS_SLOT_SHARED: readers on the shared slot still read together. */
START_TEST(test_lock_readers_share_shared_slot)
{
	pthread_t tid[VS_NR_SLOTS];
	struct park p;
	int i;

	vs_atomic_init(&p.ready, 0);
	vs_atomic_init(&p.done, 0);
	for (i = 0; i < VS_NR_SLOTS; i++)
		vs_test_thread_create(&tid[i], park_fn, &p);
	ck_assert(vs_test_wait_ge(&p.ready, VS_NR_SLOTS, BOUND_NS));
	check_readers_share(_i);
	vs_test_set(&p.done, 1);
	for (i = 0; i < VS_NR_SLOTS; i++)
		vs_test_thread_join(tid[i]);
}
END_TEST

/* ---- a writer among streaming readers -------------------------------- */

#define STREAM_READERS 3

struct stream {
	struct vs_lock *lock;
	vs_atomic32_t stop;
	vs_atomic32_t sections; /* read sections completed */
	vs_atomic32_t inside;   /* readers inside now */
	vs_atomic32_t writer_in;
	vs_atomic32_t errors;   /* writer found a reader inside */
	int64_t wait_ns;        /* writer's wait; read after join */
};

static void *stream_reader(void *arg)
{
	struct stream *s = arg;

	vs_thread_attach();
	while (!vs_read_once(&s->stop)) {
		vs_lock_read_lock(s->lock);
		vs_fetch_add(&s->inside, 1);
		vs_test_spin_ns(1000);
		vs_fetch_sub(&s->inside, 1);
		vs_lock_read_unlock(s->lock);
		vs_fetch_add(&s->sections, 1);
		vs_rcu_quiescent_state();
	}
	return NULL;
}

static void *stream_writer(void *arg)
{
	struct stream *s = arg;
	int64_t t0;

	vs_thread_attach();
	/* Come in only once the readers are streaming. */
	vs_test_wait_ge(&s->sections, 1000, BOUND_NS);
	t0 = vs_test_now_ns();
	vs_lock_write_lock(s->lock);
	s->wait_ns = vs_test_now_ns() - t0;
	if (vs_read_once(&s->inside))
		vs_fetch_add(&s->errors, 1);
	vs_test_set(&s->writer_in, 1);
	vs_test_spin_ns(10000);
	if (vs_read_once(&s->inside))
		vs_fetch_add(&s->errors, 1);
	vs_lock_write_unlock(s->lock);
	return NULL;
}

/*
 * A waiting writer gets the lock while readers keep arriving: three
 * readers take and drop read in overlapping 1 us sections, so that some
 * reader nearly always holds it; a writer's write_lock must return within
 * BOUND_NS.  The kind "pthread" is glibc's pthread_rwlock_t with default
 * attributes, PTHREAD_RWLOCK_PREFER_READER_NP: readers are admitted while
 * a writer waits and may starve it, as documented.  For it the test only
 * reports whether the writer got in.
 */
START_TEST(test_lock_writer_not_starved)
{
	pthread_t r[STREAM_READERS], w;
	struct vs_lock lock;
	struct stream s;
	const char *name = lock_setup(&lock, _i);
	int got, i, may_starve = strcmp(name, "pthread") == 0;
	uint32_t errors;

	memset(&s, 0, sizeof(s));
	s.lock = &lock;
	vs_atomic_init(&s.stop, 0);
	vs_atomic_init(&s.sections, 0);
	vs_atomic_init(&s.inside, 0);
	vs_atomic_init(&s.writer_in, 0);
	vs_atomic_init(&s.errors, 0);
	for (i = 0; i < STREAM_READERS; i++)
		vs_test_thread_create(&r[i], stream_reader, &s);
	vs_test_thread_create(&w, stream_writer, &s);
	/* The writer waits up to BOUND_NS for the stream, then up to
	 * BOUND_NS for the lock. */
	got = vs_test_wait_ge(&s.writer_in, 1, 2 * BOUND_NS);
	vs_write_once(&s.stop, 1);
	for (i = 0; i < STREAM_READERS; i++)
		vs_test_thread_join(r[i]);
	vs_test_thread_join(w);

	errors = vs_load_acquire(&s.errors);
	ck_assert_msg(errors == 0, "%s: writer shared the lock with a reader",
		      name);
	if (may_starve) {
		printf("lock/writer_not_starved: %s: writer %s (%.1f ms)\n",
		       name, got ? "got in" : "starved by readers",
		       got ? (double)s.wait_ns / 1e6 : 0.0);
	} else {
		ck_assert_msg(got, "%s: writer starved by streaming readers",
			      name);
	}
	lock_teardown(&lock, name);
}
END_TEST

/* ---- downgrade_write ------------------------------------------------- */

struct downgrade {
	struct vs_lock *lock;
	vs_atomic32_t started;
	vs_atomic32_t in;
	vs_atomic32_t out; /* reader may let go */
};

static void *downgrade_reader(void *arg)
{
	struct downgrade *d = arg;

	vs_thread_attach();
	vs_test_set(&d->started, 1);
	vs_lock_read_lock(d->lock);
	vs_test_set(&d->in, 1);
	vs_test_wait_ge(&d->out, 1, HOLD_BOUND_NS);
	vs_lock_read_unlock(d->lock);
	return NULL;
}

/*
 * downgrade_write turns our write lock into a read lock: a reader that
 * was waiting behind our write lock gets in while we still hold read;
 * meanwhile write_trylock from another thread fails and read_trylock
 * succeeds; after our read_unlock write_trylock succeeds.
 */
START_TEST(test_lock_downgrade)
{
	struct vs_lock lock;
	struct downgrade d;
	struct tryer held, freed;
	pthread_t tid;
	const char *name = lock_setup(&lock, _i);
	int early, got;

	d.lock = &lock;
	vs_atomic_init(&d.started, 0);
	vs_atomic_init(&d.in, 0);
	vs_atomic_init(&d.out, 0);

	vs_lock_write_lock(&lock);
	vs_test_thread_create(&tid, downgrade_reader, &d);
	vs_test_wait_ge(&d.started, 1, BOUND_NS);
	vs_test_nap(20000); /* let it block in read_lock */
	early = vs_read_once(&d.in);
	vs_lock_downgrade_write(&lock);
	got = vs_test_wait_ge(&d.in, 1, BOUND_NS);
	if (!got) {
		/* Let the reader in (or not) before joining it. */
		vs_lock_read_unlock(&lock);
		vs_test_set(&d.out, 1);
		vs_test_thread_join(tid);
		ck_abort_msg("%s: reader not admitted after downgrade", name);
	}
	vs_test_set(&d.out, 1);
	vs_test_thread_join(tid);

	try_from_other_thread(&lock, &held);
	vs_lock_read_unlock(&lock);
	try_from_other_thread(&lock, &freed);

	ck_assert_msg(!early, "%s: reader got in beside the writer", name);
	ck_assert_msg(held.wrote == 0,
		      "%s: write_trylock granted beside a downgraded reader",
		      name);
	ck_assert_msg(held.read == 1,
		      "%s: read_trylock refused beside a downgraded reader",
		      name);
	ck_assert_msg(freed.wrote == 1,
		      "%s: write_trylock refused after read_unlock", name);
	lock_teardown(&lock, name);
}
END_TEST

/* ---- writers in sequence -------------------------------------------- */

/*
 * Writers in quick succession, then again after the lock has gone idle:
 * every kind keeps working, and read_trylock succeeds in between.  For
 * percpu this walks rcu_sync through IDLE, ENTER, PASSED, EXIT, REPLAY
 * and back, whose callbacks run on liburcu's call_rcu thread (and there
 * call vs_call_rcu() again, from REPLAY).
 */
START_TEST(test_lock_writer_sequence)
{
	struct vs_lock lock;
	const char *name = lock_setup(&lock, _i);
	int round, j, r_try[3];

	for (round = 0; round < 3; round++) {
		for (j = 0; j < 3; j++) {
			vs_lock_write_lock(&lock);
			vs_lock_write_unlock(&lock);
		}
		r_try[round] = vs_lock_read_trylock(&lock);
		if (r_try[round])
			vs_lock_read_unlock(&lock);
		vs_lock_read_lock(&lock);
		vs_lock_read_unlock(&lock);
		/* Let grace periods pass and queued callbacks run. */
		vs_rcu_barrier();
		vs_test_nap(20000);
		vs_rcu_barrier();
	}
	for (round = 0; round < 3; round++)
		ck_assert_msg(r_try[round] == 1,
			      "%s: read_trylock refused after writers (%d)",
			      name, round);
	lock_teardown(&lock, name);
}
END_TEST

/* ---- init and destroy ------------------------------------------------ */

/* vs_lock_init rejects a NULL lock, an unknown kind and a bad class, and
 * a NULL kind means rwsem; the kind table names the five kinds of
 * docs/lock-kinds.md, each with a complete ops table. */
START_TEST(test_lock_init_errors)
{
	static const char *const want[] = {
#if VS_VCPU
		"rwsem", "percpu", "brlock", "prwlock",	/* no pthread */
#else
		"rwsem", "pthread", "percpu", "brlock", "prwlock",
#endif
	};
	char long_class[VS_LOCK_CLASS_NAME_MAX + 2];
	const struct vs_lock_ops *ops;
	struct vs_lock lock;
	size_t i;
	int n;

	ck_assert_int_eq(vs_thread_attach(), 0);
	ck_assert_int_eq(vs_lock_init(NULL, "rwsem", NULL), -EINVAL);
	if (VS_VCPU)
		ck_assert_int_eq(vs_lock_init(&lock, "pthread", NULL),
				 -EOPNOTSUPP);
	ck_assert_int_eq(vs_lock_init(NULL, NULL, NULL), -EINVAL);
	ck_assert_int_eq(vs_lock_init(&lock, "nope", NULL), -EINVAL);
	ck_assert_int_eq(vs_lock_init(&lock, "", NULL), -EINVAL);
	ck_assert_int_eq(vs_lock_init(&lock, "rwsem", ""), -EINVAL);
	memset(long_class, 'x', sizeof(long_class) - 1);
	long_class[sizeof(long_class) - 1] = '\0';
	ck_assert_int_eq(vs_lock_init(&lock, "rwsem", long_class), -EINVAL);
	ck_assert_int_eq(vs_lock_destroy(NULL), -EINVAL);

	ck_assert_int_eq(vs_lock_init(&lock, NULL, NULL), 0);
	ck_assert_ptr_eq(lock.kind, vs_lock_kind_ops("rwsem"));
	ck_assert_str_eq(lock.kind->name, "rwsem");
	ck_assert_ptr_null(lock.class);
	vs_lock_write_lock(&lock);
	vs_lock_write_unlock(&lock);
	ck_assert_int_eq(vs_lock_destroy(&lock), 0);

	ck_assert_int_eq(vs_lock_init(&lock, "rwsem", "test_lock"), 0);
	ck_assert_ptr_nonnull(lock.class);
	ck_assert_int_eq(vs_lock_destroy(&lock), 0);

	ck_assert_ptr_null(vs_lock_kind_name(-1));
	ck_assert_ptr_null(vs_lock_kind_ops(NULL));
	ck_assert_ptr_null(vs_lock_kind_ops("nope"));
	for (n = 0; vs_lock_kind_name(n); n++) {
		ops = vs_lock_kind_ops(vs_lock_kind_name(n));
		ck_assert_ptr_nonnull(ops);
		ck_assert_str_eq(ops->name, vs_lock_kind_name(n));
		ck_assert_msg(ops->size && ops->init && ops->destroy &&
			      ops->read_lock && ops->read_trylock &&
			      ops->read_unlock && ops->write_lock &&
			      ops->write_trylock && ops->write_unlock &&
			      ops->downgrade_write,
			      "%s: incomplete ops table", ops->name);
	}
	ck_assert_int_eq(n, (int)VS_ARRAY_SIZE(want));
	for (i = 0; i < VS_ARRAY_SIZE(want); i++)
		ck_assert_msg(vs_lock_kind_ops(want[i]) != NULL,
			      "kind %s missing", want[i]);
}
END_TEST

/* vs_lock_destroy refuses a held lock with -EBUSY and frees nothing:
 * held for write by us, for read by us, for read by another thread; once
 * released, destroy returns 0 and a second destroy -EINVAL. */
START_TEST(test_lock_destroy_busy)
{
	struct vs_lock lock;
	struct holder h;
	const char *name = lock_setup(&lock, _i);
	int err_w, err_r, err_other, held;

	vs_lock_write_lock(&lock);
	err_w = vs_lock_destroy(&lock);
	vs_lock_write_unlock(&lock);

	vs_lock_read_lock(&lock);
	err_r = vs_lock_destroy(&lock);
	vs_lock_read_unlock(&lock);

	held = holder_start(&h, &lock, 0);
	err_other = vs_lock_destroy(&lock);
	holder_stop(&h);

	ck_assert_msg(err_w == -EBUSY, "%s: destroy while write-held: %d",
		      name, err_w);
	ck_assert_msg(err_r == -EBUSY, "%s: destroy while read-held: %d",
		      name, err_r);
	ck_assert_msg(held, "%s: holder did not get read in time", name);
	ck_assert_msg(err_other == -EBUSY,
		      "%s: destroy while read-held elsewhere: %d", name,
		      err_other);
	/* The refused destroys left a working lock. */
	ck_assert_int_eq(vs_lock_write_trylock(&lock), 1);
	vs_lock_write_unlock(&lock);
	ck_assert_int_eq(vs_lock_destroy(&lock), 0);
	ck_assert_int_eq(vs_lock_destroy(&lock), -EINVAL);
}
END_TEST

/* ---- the suite ------------------------------------------------------- */

static void add_kind_test(Suite *s, const char *tc_name, const TTest *test,
			  int nkinds)
{
	tcase_add_loop_test(vs_test_tcase(s, tc_name), test, 0, nkinds);
}

/* A kind made from rwsem's table, registered: usable by name. */
START_TEST(test_lock_kind_register)
{
	static struct vs_lock_ops mine, bad;
	struct vs_lock lock;
	int i, idx;

	mine = *vs_lock_kind_ops("rwsem");
	mine.name = "my-rwsem";
	ck_assert_int_eq(vs_lock_kind_register(NULL), -EINVAL);
	bad = mine;
	bad.write_unlock = NULL;
	ck_assert_int_eq(vs_lock_kind_register(&bad), -EINVAL);
	bad = mine;
	bad.name = "";
	ck_assert_int_eq(vs_lock_kind_register(&bad), -EINVAL);
	bad = mine;
	bad.name = "pthread";
	ck_assert_int_eq(vs_lock_kind_register(&bad), -EEXIST);
	idx = vs_lock_kind_register(&mine);
	ck_assert_int_ge(idx, VS_VCPU ? 4 : 5);	/* after the built-in kinds */
	ck_assert_str_eq(vs_lock_kind_name(idx), "my-rwsem");
	ck_assert_ptr_eq(vs_lock_kind_ops("my-rwsem"), &mine);
	ck_assert_int_eq(vs_lock_kind_register(&mine), -EEXIST);
	ck_assert_int_eq(vs_lock_init(&lock, "my-rwsem", NULL), 0);
	vs_lock_write_lock(&lock);
	ck_assert_int_eq(vs_lock_read_trylock(&lock), 0);
	vs_lock_write_unlock(&lock);
	ck_assert_int_eq(vs_lock_destroy(&lock), 0);
	/* The table fills up, and says so. */
	for (i = idx + 1; i < VS_LOCK_MAX_KINDS; i++) {
		static struct vs_lock_ops more[VS_LOCK_MAX_KINDS];
		static char names[VS_LOCK_MAX_KINDS][16];

		more[i] = mine;
		snprintf(names[i], sizeof(names[i]), "k%d", i);
		more[i].name = names[i];
		ck_assert_int_eq(vs_lock_kind_register(&more[i]), i);
	}
	bad = mine;
	bad.name = "one-too-many";
	ck_assert_int_eq(vs_lock_kind_register(&bad), -EBUSY);
}
END_TEST

Suite *lock_suite(void)
{
	Suite *s = suite_create("lock");
	int nkinds = 0;

	while (vs_lock_kind_name(nkinds))
		nkinds++;

	vs_test_add(vs_test_tcase(s, "init"), test_lock_init_errors,
		    test_lock_kind_register);

	add_kind_test(s, "destroy", test_lock_destroy_busy, nkinds);
	add_kind_test(s, "trylock", test_lock_trylock, nkinds);
	add_kind_test(s, "readers_share", test_lock_readers_share, nkinds);
	/* Natively only: on vCPUs every vCPU owns its slot. */
	if (!VS_VCPU)
		add_kind_test(s, "readers_share_shared_slot",
			      test_lock_readers_share_shared_slot, nkinds);
	add_kind_test(s, "downgrade", test_lock_downgrade, nkinds);
	add_kind_test(s, "writer_sequence", test_lock_writer_sequence, nkinds);
	add_kind_test(s, "exclusion", test_lock_exclusion, nkinds);
	add_kind_test(s, "oversubscribed", test_lock_exclusion_oversubscribed,
		      nkinds);
	if (!VS_VCPU)
		add_kind_test(s, "shared_slot",
			      test_lock_exclusion_shared_slot, nkinds);
	add_kind_test(s, "writer_not_starved", test_lock_writer_not_starved,
		      nkinds);
	return s;
}
