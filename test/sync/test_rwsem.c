/* SPDX-License-Identifier: MIT */
/*
 * test/sync/test_rwsem.c - struct vs_rwsem (vmsim/rwsem.h) directly, for
 * the Linux semantics: trylocks that respect queued waiters, FIFO
 * queueing, readers woken as a batch, downgrade_write waking readers,
 * handoff so that neither side starves, and the optional writer spin.
 *
 * A thread "is queued" once the count word shows VS_RWSEM_FLAG_WAITERS
 * and it has had 50 ms to get there; no test depends on that guess for
 * its verdict, only for how sharp it is.
 *
 * Shared flags go through vmsim/atomic.h; plain data is touched only under
 * the rwsem.  Every wait is bounded: a broken rwsem fails a test, never
 * hangs it.  Threads sleep offline for RCU (vs_test_nap(), vs_test_wait_ge(),
 * vs_test_thread_join()), for urcu-qsbr builds.  VS_TEST_SCALE (test.h) scales
 * the stress iteration counts.
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
#include <vmsim/rcu.h>
#include <vmsim/rwsem.h>
#include <vmsim/thread.h>
#include <vmsim/wait.h>

#include "test.h"

#define MS VS_TEST_NS_PER_MS
/* How long a thread may wait for what a correct rwsem grants promptly
 * (250 handoff timeouts). */
#define BOUND_NS (1000 * MS)
/* How long a helper holds the rwsem at most, whatever the test thread does. */
#define HOLD_BOUND_NS VS_TEST_WAIT_NS
/* How long a join waits for a thread, seconds. */
/* Time given to threads to block and queue. */
#define QUEUE_US 50000

#define MAX_THREADS 16
/* Readers in the batch and downgrade tests. */
#define NR_BATCH 4

/* ---- helpers ------------------------------------------------------- */

static long count_of(struct vs_rwsem *sem)
{
	return vs_read_once(&sem->count);
}

static long readers_of(struct vs_rwsem *sem)
{
	return (count_of(sem) & VS_RWSEM_READER_MASK) >> VS_RWSEM_READER_SHIFT;
}

/* Wait until the count word shows queued waiters.  Return: 1 if so. */
static int wait_waiters(struct vs_rwsem *sem)
{
	int64_t end = vs_test_now_ns() + BOUND_NS;

	while (!(count_of(sem) & VS_RWSEM_FLAG_WAITERS)) {
		if (vs_test_now_ns() >= end)
			return 0;
		vs_test_nap(100);
	}
	return 1;
}

static void sem_setup(struct vs_rwsem *sem)
{
	ck_assert_int_eq(vs_thread_attach(), 0);
	ck_assert_int_eq(vs_rwsem_init(sem), 0);
}

static void sem_teardown(struct vs_rwsem *sem)
{
	ck_assert_msg(count_of(sem) == 0, "count 0x%lx left behind",
		      count_of(sem));
	ck_assert_int_eq(vs_rwsem_destroy(sem), 0);
}

/*
 * A blocking locker: a thread that says it started, takes the rwsem in
 * one mode, says it is in, and lets go when told (or after
 * HOLD_BOUND_NS).
 */
struct locker {
	struct vs_rwsem *sem;
	int write;
	vs_atomic32_t started;
	vs_atomic32_t in;
	vs_atomic32_t release;
	pthread_t tid;
};

static void *locker_fn(void *arg)
{
	struct locker *l = arg;

	vs_thread_attach();
	vs_test_set(&l->started, 1);
	if (l->write)
		vs_down_write(l->sem);
	else
		vs_down_read(l->sem);
	vs_test_set(&l->in, 1);
	vs_test_wait_ge(&l->release, 1, HOLD_BOUND_NS);
	if (l->write)
		vs_up_write(l->sem);
	else
		vs_up_read(l->sem);
	return NULL;
}

static void locker_start(struct locker *l, struct vs_rwsem *sem, int write)
{
	l->sem = sem;
	l->write = write;
	vs_atomic_init(&l->started, 0);
	vs_atomic_init(&l->in, 0);
	vs_atomic_init(&l->release, 0);
	vs_test_thread_create(&l->tid, locker_fn, l);
	vs_test_wait_ge(&l->started, 1, BOUND_NS);
}

static void locker_stop(struct locker *l)
{
	vs_test_set(&l->release, 1);
	vs_test_thread_join(l->tid);
}

/* ---- init, destroy, trylock ------------------------------------------ */

/* vs_rwsem_init(NULL) is -EINVAL (so are destroy and the handoff
 * hook); vs_rwsem_destroy is -EBUSY while the
 * rwsem is held for write or read, 0 once free. */
START_TEST(test_rwsem_init_destroy)
{
	struct vs_rwsem sem;

	ck_assert_int_eq(vs_rwsem_init(NULL), -EINVAL);
	ck_assert_int_eq(vs_rwsem_destroy(NULL), -EINVAL);
	ck_assert_int_eq(vs_rwsem_set_handoff_timeout(NULL, 0), -EINVAL);
	sem_setup(&sem);
	ck_assert(!vs_rwsem_is_locked(&sem));
	ck_assert_int_eq(vs_rwsem_destroy(&sem), 0);

	ck_assert_int_eq(vs_rwsem_init(&sem), 0);
	vs_down_write(&sem);
	ck_assert(vs_rwsem_is_write_locked(&sem));
	ck_assert_int_eq(vs_rwsem_destroy(&sem), -EBUSY);
	vs_up_write(&sem);
	vs_down_read(&sem);
	ck_assert(vs_rwsem_is_locked(&sem));
	ck_assert(!vs_rwsem_is_write_locked(&sem));
	ck_assert_int_eq(vs_rwsem_destroy(&sem), -EBUSY);
	vs_up_read(&sem);
	sem_teardown(&sem);
}
END_TEST

/* Trylocks on an uncontended rwsem: read trylocks stack, write_trylock
 * fails while readers hold it, and both fail while a writer holds it. */
START_TEST(test_rwsem_trylock)
{
	struct vs_rwsem sem;

	sem_setup(&sem);
	ck_assert_int_eq(vs_down_read_trylock(&sem), 1);
	ck_assert_int_eq(vs_down_read_trylock(&sem), 1);
	ck_assert_int_eq(readers_of(&sem), 2);
	ck_assert_int_eq(vs_down_write_trylock(&sem), 0);
	vs_up_read(&sem);
	ck_assert_int_eq(vs_down_write_trylock(&sem), 0);
	vs_up_read(&sem);

	ck_assert_int_eq(vs_down_write_trylock(&sem), 1);
	ck_assert_int_eq(vs_down_read_trylock(&sem), 0);
	ck_assert_int_eq(vs_down_write_trylock(&sem), 0);
	ck_assert(vs_rwsem_is_write_locked(&sem));
	vs_up_write(&sem);
	sem_teardown(&sem);
}
END_TEST

/*
 * down_read_trylock fails while a writer waits: we hold read, a writer
 * blocks in down_write and sets WAITERS; a new reader's trylock must
 * refuse (it would starve the writer), and so must down_write_trylock.
 * When we let go, the writer gets the lock.
 */
START_TEST(test_rwsem_trylock_waiters)
{
	struct vs_rwsem sem;
	struct locker w;
	int queued, r_try, w_try, early, got;

	sem_setup(&sem);
	vs_down_read(&sem);
	locker_start(&w, &sem, 1);
	queued = wait_waiters(&sem);
	vs_test_nap(QUEUE_US);
	r_try = vs_down_read_trylock(&sem);
	if (r_try)
		vs_up_read(&sem);
	w_try = vs_down_write_trylock(&sem);
	if (w_try)
		vs_up_write(&sem);
	early = vs_read_once(&w.in);
	vs_up_read(&sem);
	got = vs_test_wait_ge(&w.in, 1, BOUND_NS);
	locker_stop(&w);

	ck_assert_msg(queued, "writer never set WAITERS");
	ck_assert_msg(!early, "writer got in beside a reader");
	ck_assert_msg(r_try == 0, "down_read_trylock passed a queued writer");
	ck_assert_msg(w_try == 0, "down_write_trylock beside a reader");
	ck_assert_msg(got, "queued writer not woken by up_read");
	sem_teardown(&sem);
}
END_TEST

/*
 * Readers queue behind a queued writer (FIFO): while we hold read and a
 * writer waits, a new down_read blocks instead of joining us; after our
 * up_read the writer goes first, and the reader after it.
 */
START_TEST(test_rwsem_fifo)
{
	struct vs_rwsem sem;
	struct locker w, r;
	int queued, r_early, w_got, r_during, r_got;

	sem_setup(&sem);
	vs_down_read(&sem);
	locker_start(&w, &sem, 1);
	queued = wait_waiters(&sem);
	vs_test_nap(QUEUE_US);
	locker_start(&r, &sem, 0);
	vs_test_nap(QUEUE_US);
	r_early = vs_read_once(&r.in);
	vs_up_read(&sem);
	w_got = vs_test_wait_ge(&w.in, 1, BOUND_NS);
	vs_test_nap(QUEUE_US);
	r_during = vs_read_once(&r.in);
	locker_stop(&w);
	r_got = vs_test_wait_ge(&r.in, 1, BOUND_NS);
	locker_stop(&r);

	ck_assert_msg(queued, "writer never set WAITERS");
	ck_assert_msg(!r_early, "reader overtook a queued writer");
	ck_assert_msg(w_got, "queued writer not woken by up_read");
	ck_assert_msg(!r_during, "reader got in beside the writer");
	ck_assert_msg(r_got, "queued reader not woken by up_write");
	sem_teardown(&sem);
}
END_TEST

/* ---- batches and downgrade ------------------------------------------- */

struct batch {
	struct vs_rwsem *sem;
	vs_atomic32_t started;
	vs_atomic32_t inside;  /* readers that got in; never decremented */
	vs_atomic32_t all_in;  /* readers that saw all NR_BATCH inside */
	vs_atomic32_t release; /* readers may let go */
};

static void *batch_reader(void *arg)
{
	struct batch *b = arg;

	vs_thread_attach();
	vs_fetch_add(&b->started, 1);
	vs_down_read(b->sem);
	vs_fetch_add(&b->inside, 1);
	/* Stay inside until every reader is: they hold it together. */
	if (vs_test_wait_ge(&b->inside, NR_BATCH, BOUND_NS))
		vs_fetch_add(&b->all_in, 1);
	vs_test_wait_ge(&b->release, 1, HOLD_BOUND_NS);
	vs_up_read(b->sem);
	return NULL;
}

static void batch_init(struct batch *b, struct vs_rwsem *sem)
{
	memset(b, 0, sizeof(*b));
	b->sem = sem;
	vs_atomic_init(&b->started, 0);
	vs_atomic_init(&b->inside, 0);
	vs_atomic_init(&b->all_in, 0);
	vs_atomic_init(&b->release, 0);
}

/*
 * Readers are woken as a batch: a writer holds the rwsem, NR_BATCH
 * readers queue in vs_down_read, the writer's up_write grants all of
 * them at once; each stays inside until all are (were they woken one by
 * one, the first would wait in vain and the rest would stay queued).
 */
START_TEST(test_rwsem_reader_batch)
{
	pthread_t tid[NR_BATCH];
	struct vs_rwsem sem;
	struct batch b;
	int i, queued, early, all;

	sem_setup(&sem);
	batch_init(&b, &sem);
	vs_test_set(&b.release, 1);
	vs_down_write(&sem);
	for (i = 0; i < NR_BATCH; i++)
		vs_test_thread_create(&tid[i], batch_reader, &b);
	vs_test_wait_ge(&b.started, NR_BATCH, BOUND_NS);
	queued = wait_waiters(&sem);
	vs_test_nap(QUEUE_US);
	early = (int)vs_read_once(&b.inside);
	vs_up_write(&sem);
	for (i = 0; i < NR_BATCH; i++)
		vs_test_thread_join(tid[i]);
	all = (int)vs_load_acquire(&b.all_in);

	ck_assert_msg(queued, "readers never set WAITERS");
	ck_assert_msg(early == 0, "%d readers got in beside the writer",
		      early);
	ck_assert_msg(all == NR_BATCH,
		      "only %d of %d readers were inside together", all,
		      NR_BATCH);
	sem_teardown(&sem);
}
END_TEST

/*
 * downgrade_write wakes queued readers: a writer holds, NR_BATCH readers
 * queue, vs_downgrade_write turns the write lock into a read lock and
 * grants the readers while the downgrader still holds read: the count
 * shows NR_BATCH + 1 readers.
 */
START_TEST(test_rwsem_downgrade)
{
	pthread_t tid[NR_BATCH];
	struct vs_rwsem sem;
	struct batch b;
	int i, queued, early, got, w_try;
	uint32_t in;
	long nr;

	sem_setup(&sem);
	batch_init(&b, &sem);
	vs_down_write(&sem);
	for (i = 0; i < NR_BATCH; i++)
		vs_test_thread_create(&tid[i], batch_reader, &b);
	vs_test_wait_ge(&b.started, NR_BATCH, BOUND_NS);
	queued = wait_waiters(&sem);
	vs_test_nap(QUEUE_US);
	early = (int)vs_read_once(&b.inside);
	vs_downgrade_write(&sem);
	got = vs_test_wait_ge(&b.inside, NR_BATCH, BOUND_NS);
	in = vs_read_once(&b.inside);
	nr = readers_of(&sem);
	w_try = vs_down_write_trylock(&sem);
	if (w_try)
		vs_up_write(&sem);
	vs_test_set(&b.release, 1);
	vs_up_read(&sem);
	for (i = 0; i < NR_BATCH; i++)
		vs_test_thread_join(tid[i]);

	ck_assert_msg(queued, "readers never set WAITERS");
	ck_assert_msg(early == 0, "%d readers got in beside the writer",
		      early);
	ck_assert_msg(got, "downgrade_write left readers queued (%u in)",
		      in);
	ck_assert_msg(nr == NR_BATCH + 1, "%ld readers, expected %d", nr,
		      NR_BATCH + 1);
	ck_assert_msg(w_try == 0, "down_write_trylock beside readers");
	sem_teardown(&sem);
}
END_TEST

/* downgrade_write with nobody queued: the holder is a reader now; other
 * readers join by trylock, writers are refused until it lets go. */
START_TEST(test_rwsem_downgrade_uncontended)
{
	struct vs_rwsem sem;

	sem_setup(&sem);
	vs_down_write(&sem);
	vs_downgrade_write(&sem);
	ck_assert(!vs_rwsem_is_write_locked(&sem));
	ck_assert_int_eq(readers_of(&sem), 1);
	ck_assert_int_eq(vs_down_write_trylock(&sem), 0);
	ck_assert_int_eq(vs_down_read_trylock(&sem), 1);
	vs_up_read(&sem);
	vs_up_read(&sem);
	ck_assert_int_eq(vs_down_write_trylock(&sem), 1);
	vs_up_write(&sem);
	sem_teardown(&sem);
}
END_TEST

/* ---- starvation ------------------------------------------------------ */

/* Writer spin bounds the starvation tests run with (loop index). */
static const uint32_t spins[] = { 0, 1000, 100000 };

struct stream {
	struct vs_rwsem *sem;
	vs_atomic32_t stop;
	vs_atomic32_t sections; /* sections completed by the stream */
	vs_atomic32_t readers;  /* readers inside now */
	vs_atomic32_t writers;  /* writers inside now */
	vs_atomic32_t in;       /* the lone thread got in */
	vs_atomic32_t errors;   /* readers and writers inside together */
	long plain;             /* written by writers, under the rwsem */
	int64_t wait_ns;        /* the lone thread's wait; read after join */
};

static void stream_init(struct stream *s, struct vs_rwsem *sem)
{
	memset(s, 0, sizeof(*s));
	s->sem = sem;
	vs_atomic_init(&s->stop, 0);
	vs_atomic_init(&s->sections, 0);
	vs_atomic_init(&s->readers, 0);
	vs_atomic_init(&s->writers, 0);
	vs_atomic_init(&s->in, 0);
	vs_atomic_init(&s->errors, 0);
}

static void stream_write_section(struct stream *s, int64_t hold_ns)
{
	vs_down_write(s->sem);
	if (vs_fetch_add(&s->writers, 1) != 0 || vs_read_once(&s->readers))
		vs_fetch_add(&s->errors, 1);
	s->plain++;
	vs_test_spin_ns(hold_ns);
	vs_fetch_sub(&s->writers, 1);
	vs_up_write(s->sem);
}

static void stream_read_section(struct stream *s, int64_t hold_ns)
{
	vs_down_read(s->sem);
	vs_fetch_add(&s->readers, 1);
	if (vs_read_once(&s->writers))
		vs_fetch_add(&s->errors, 1);
	vs_test_spin_ns(hold_ns);
	vs_fetch_sub(&s->readers, 1);
	vs_up_read(s->sem);
}

static void *stream_writer(void *arg)
{
	struct stream *s = arg;

	vs_thread_attach();
	while (!vs_read_once(&s->stop)) {
		stream_write_section(s, 10000);
		vs_fetch_add(&s->sections, 1);
		vs_rcu_quiescent_state();
	}
	return NULL;
}

static void *stream_reader(void *arg)
{
	struct stream *s = arg;

	vs_thread_attach();
	while (!vs_read_once(&s->stop)) {
		stream_read_section(s, 1000);
		vs_fetch_add(&s->sections, 1);
		vs_rcu_quiescent_state();
	}
	return NULL;
}

/* The lone reader (writer): waits for the stream, then one section. */
static void lone(struct stream *s, int write)
{
	int64_t t0;

	vs_thread_attach();
	vs_test_wait_ge(&s->sections, 200, BOUND_NS);
	t0 = vs_test_now_ns();
	if (write)
		vs_down_write(s->sem);
	else
		vs_down_read(s->sem);
	s->wait_ns = vs_test_now_ns() - t0;
	vs_test_set(&s->in, 1);
	if (write)
		vs_up_write(s->sem);
	else
		vs_up_read(s->sem);
}

static void *lone_reader(void *arg)
{
	lone(arg, 0);
	return NULL;
}

static void *lone_writer(void *arg)
{
	lone(arg, 1);
	return NULL;
}

/*
 * Run a stream of @nstream threads of one side and a lone thread of the
 * other; return whether the lone one got in within BOUND_NS (after the
 * stream is flowing).
 */
static int run_stream(struct stream *s, int nstream, void *(*stream_fn)(void *),
		      void *(*lone_fn)(void *))
{
	pthread_t tid[MAX_THREADS], l;
	int i, got;

	for (i = 0; i < nstream; i++)
		vs_test_thread_create(&tid[i], stream_fn, s);
	vs_test_thread_create(&l, lone_fn, s);
	got = vs_test_wait_ge(&s->in, 1, 2 * BOUND_NS);
	vs_write_once(&s->stop, 1);
	for (i = 0; i < nstream; i++)
		vs_test_thread_join(tid[i]);
	vs_test_thread_join(l);
	return got;
}

/*
 * check_not_starved - @lone must get in within BOUND_NS while @nstream
 * @stream threads keep the rwsem busy, at writer spin spins[@i].
 */
static void check_not_starved(int i, int nstream, void *(*stream)(void *),
			      void *(*lone)(void *), const char *who)
{
	struct vs_rwsem sem;
	struct stream s;
	int got;

	sem_setup(&sem);
	vs_rwsem_set_spin(&sem, spins[i]);
	stream_init(&s, &sem);
	got = run_stream(&s, nstream, stream, lone);
	ck_assert_msg(vs_load_acquire(&s.errors) == 0,
		      "spin %u: readers and writers inside together",
		      spins[i]);
	ck_assert_msg(got, "spin %u: %s starved", spins[i], who);
	ck_assert_msg(s.wait_ns < BOUND_NS, "spin %u: %s waited %.1f ms",
		      spins[i], who, (double)s.wait_ns / 1e6);
	sem_teardown(&sem);
}

/*
 * Readers are not starved by a stream of writers: two writers loop on
 * down_write / 10 us / up_write; a reader's vs_down_read must return
 * within BOUND_NS.  With spinning writers (loop index > 0) a writer may
 * steal the lock from the queue, and only the handoff (after
 * VS_RWSEM_WAIT_TIMEOUT_NS) brings the reader in.
 */
START_TEST(test_rwsem_reader_not_starved)
{
	check_not_starved(_i, 2, stream_writer, lone_reader,
			  "reader (behind writers)");
}
END_TEST

/*
 * Writers are not starved by a stream of readers: three readers take
 * read in overlapping 1 us sections, so that the rwsem is nearly always
 * read-held; a writer's vs_down_write must return within BOUND_NS (new
 * readers see WAITERS and queue behind it).
 */
START_TEST(test_rwsem_writer_not_starved)
{
	check_not_starved(_i, 3, stream_reader, lone_writer,
			  "writer (behind readers)");
}
END_TEST

/* ---- exclusion stress ------------------------------------------------ */

struct stress_config {
	uint32_t spin;
	int nthreads;
	long iters; /* per thread, before VS_TEST_SCALE */
};

/* Oversubscribed spinning writers burn their spin bound whenever the
 * holder is preempted: fewer iterations keep that case short. */
static const struct stress_config stress_configs[] = {
	{ 0, 4, 20000 }, { 1000, 4, 20000 }, { 1000, 8, 2500 },
};

struct stress {
	struct vs_rwsem *sem;
	long iters;
	vs_atomic32_t go;
	vs_atomic32_t errors;
	/* under sem; invariant outside write sections: a == b == counter */
	long counter;
	long a, b;
};

static void *stress_fn(void *arg)
{
	struct stress *s = arg;
	long i, old, ra, rb;

	vs_thread_attach();
	vs_test_wait_ge(&s->go, 1, HOLD_BOUND_NS);
	for (i = 0; i < s->iters; i++) {
		if (i % 4 == 0) {
			if (i % 8 == 0 || !vs_down_write_trylock(s->sem))
				vs_down_write(s->sem);
			old = s->counter;
			if (s->a != old || s->b != old)
				vs_fetch_add(&s->errors, 1);
			s->a = old + 1;
			vs_test_relax(10);
			s->b = s->a;
			vs_barrier();
			s->counter = old + 1;
			if (i % 16 == 0) {
				/* Downgrade, and check as a reader. */
				vs_downgrade_write(s->sem);
				if (s->a != s->b || s->counter != old + 1)
					vs_fetch_add(&s->errors, 1);
				vs_up_read(s->sem);
			} else {
				vs_up_write(s->sem);
			}
		} else {
			if (i % 2 == 0 || !vs_down_read_trylock(s->sem))
				vs_down_read(s->sem);
			ra = s->a;
			vs_test_relax(10);
			rb = s->b;
			if (ra != rb || s->counter != ra)
				vs_fetch_add(&s->errors, 1);
			vs_up_read(s->sem);
		}
		vs_rcu_quiescent_state();
	}
	return NULL;
}

/*
 * Writers exclude readers and each other, with and without the writer
 * spin (vs_rwsem_set_spin(sem, 1000)): threads mix down_write, trylocks,
 * downgrade_write and down_read around a plain counter and a == b; no
 * update is lost and no invariant breaks.
 */
START_TEST(test_rwsem_exclusion)
{
	const struct stress_config *c = &stress_configs[_i];
	pthread_t tid[MAX_THREADS];
	struct vs_rwsem sem;
	struct stress s;
	long expect;
	uint32_t errors;
	int i;

	sem_setup(&sem);
	vs_rwsem_set_spin(&sem, c->spin);
	memset(&s, 0, sizeof(s));
	s.sem = &sem;
	s.iters = vs_test_scale(c->iters);
	vs_atomic_init(&s.go, 0);
	vs_atomic_init(&s.errors, 0);
	for (i = 0; i < c->nthreads; i++)
		vs_test_thread_create(&tid[i], stress_fn, &s);
	vs_test_set(&s.go, 1);
	for (i = 0; i < c->nthreads; i++)
		vs_test_thread_join(tid[i]);

	errors = vs_load_acquire(&s.errors);
	expect = (long)c->nthreads * ((s.iters + 3) / 4);
	ck_assert_msg(errors == 0, "spin %u, %d threads: %u broken invariants",
		      c->spin, c->nthreads, errors);
	ck_assert_msg(s.counter == expect,
		      "spin %u, %d threads: counter %ld, expected %ld",
		      c->spin, c->nthreads, s.counter, expect);
	sem_teardown(&sem);
}
END_TEST

/* ---- the suite ------------------------------------------------------- */

Suite *rwsem_suite(void)
{
	Suite *s = suite_create("rwsem");

	vs_test_add(vs_test_tcase(s, "basic"), test_rwsem_init_destroy,
		    test_rwsem_trylock, test_rwsem_downgrade_uncontended);
	vs_test_add(vs_test_tcase(s, "queue"), test_rwsem_trylock_waiters,
		    test_rwsem_fifo, test_rwsem_reader_batch,
		    test_rwsem_downgrade);
	vs_test_add_loop(vs_test_tcase(s, "fairness"),
			 (int)VS_ARRAY_SIZE(spins),
			 test_rwsem_reader_not_starved,
			 test_rwsem_writer_not_starved);
	vs_test_add_loop(vs_test_tcase(s, "exclusion"),
			 (int)VS_ARRAY_SIZE(stress_configs),
			 test_rwsem_exclusion);
	return s;
}
