/* SPDX-License-Identifier: MIT */
/*
 * Tests for vmsim/rcu.h: grace periods wait for pre-existing readers,
 * callbacks run after them, rcu_barrier waits for callbacks, and a
 * reader never sees an object that was freed under it.
 *
 * Each test runs in its own process (Check's fork mode) with the main
 * thread attached; vs_call_rcu() callbacks run on liburcu's call_rcu
 * thread.  Waits for other threads use vs_test_wait_eq(), whose futex
 * sleep also keeps a urcu-qsbr build from stalling grace periods.
 */
#include <check.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/atomic.h>
#include <vmsim/rcu.h>
#include <vmsim/thread.h>

#include "test.h"

#define READER_SLEEP_NS (50 * VS_TEST_NS_PER_MS)
#define NR_CALLBACKS 1000
#define NR_POISON_READERS 2

#define OBJ_LIVE UINT64_C(0x11fe11fe11fe11fe)
#define POISON_BYTE 0x6b
#define POISON64 UINT64_C(0x6b6b6b6b6b6b6b6b)

/*
 * Threads other than the test's own attach with this: Check's assertions
 * are meant for the main thread, and a failure here is impossible.
 */
static void attach(void)
{
	if (vs_thread_attach() != 0)
		abort();
}

/* ---- a reader that sleeps inside its critical section ---------------- */

struct slow_reader {
	vs_atomic32_t in;       /* inside rcu_read_lock */
	vs_atomic32_t done;     /* about to rcu_read_unlock */
	int64_t sleep_ns;
};

static void *slow_reader_fn(void *arg)
{
	struct slow_reader *r = arg;

	attach();
	vs_rcu_read_lock();
	vs_test_set(&r->in, 1);
	vs_test_sleep_ns(r->sleep_ns);
	vs_store_release(&r->done, 1);
	vs_rcu_read_unlock();
	vs_rcu_quiescent_state();
	return NULL;
}

static void slow_reader_start(struct slow_reader *r, pthread_t *tid)
{
	vs_atomic_init(&r->in, 0);
	vs_atomic_init(&r->done, 0);
	r->sleep_ns = READER_SLEEP_NS;
	vs_test_thread_create(tid, slow_reader_fn, r);
	ck_assert(vs_test_wait_eq(&r->in, 1, VS_TEST_WAIT_NS));
}

/* synchronize_rcu returns only after a reader that was inside its
 * critical section when it was called has left it. */
START_TEST(rcu_synchronize_waits_for_reader)
{
	struct slow_reader r;
	pthread_t tid;

	ck_assert_int_eq(vs_thread_attach(), 0);
	slow_reader_start(&r, &tid);
	vs_synchronize_rcu();
	ck_assert_uint_eq(vs_test_read32(&r.done), 1);
	vs_test_thread_join(tid);
}
END_TEST

static void *sync_unattached_fn(void *arg)
{
	(void)arg;
	vs_synchronize_rcu();
	return NULL;
}

/* With no reader, synchronize_rcu returns, also many times in a row and
 * from a thread that is not attached. */
START_TEST(rcu_synchronize_no_reader)
{
	pthread_t tid;
	int i;

	ck_assert_int_eq(vs_thread_attach(), 0);
	for (i = 0; i < 10; i++)
		vs_synchronize_rcu();
	vs_test_thread_create(&tid, sync_unattached_fn, NULL);
	vs_test_thread_join(tid);
}
END_TEST

/* Read-side sections nest; the outermost unlock ends the section.
 * (Under urcu-qsbr an online thread is always "inside".) */
START_TEST(rcu_read_lock_nests)
{
	ck_assert_int_eq(vs_thread_attach(), 0);
	if (VS_RCU_QSBR)
		return;
	ck_assert(!vs_rcu_read_ongoing());
	vs_rcu_read_lock();
	vs_rcu_read_lock();
	ck_assert(vs_rcu_read_ongoing());
	vs_rcu_read_unlock();
	ck_assert(vs_rcu_read_ongoing());
	vs_rcu_read_unlock();
	ck_assert(!vs_rcu_read_ongoing());
}
END_TEST

/* ---- call_rcu --------------------------------------------------------- */

struct cb_probe {
	struct vs_rcu_head head;
	struct slow_reader *reader;
	vs_atomic32_t saw_done; /* reader's "done" when the callback ran */
	vs_atomic32_t ran;
};

static void probe_cb(struct vs_rcu_head *head)
{
	struct cb_probe *p = (struct cb_probe *)head;

	vs_write_once(&p->saw_done, vs_load_acquire(&p->reader->done));
	vs_test_set(&p->ran, 1);
}

static void call_rcu_after_reader(int from_reader_section)
{
	struct cb_probe p;
	struct slow_reader r;
	pthread_t tid;

	ck_assert_int_eq(vs_thread_attach(), 0);
	memset(&p, 0, sizeof(p));
	p.reader = &r;
	vs_atomic_init(&p.saw_done, 0);
	vs_atomic_init(&p.ran, 0);
	slow_reader_start(&r, &tid);
	if (from_reader_section)
		vs_rcu_read_lock();
	vs_call_rcu(&p.head, probe_cb);
	if (from_reader_section)
		vs_rcu_read_unlock();
	ck_assert(vs_test_wait_eq(&p.ran, 1, VS_TEST_WAIT_NS));
	ck_assert_uint_eq(vs_test_read32(&p.saw_done), 1);
	vs_test_thread_join(tid);
	vs_rcu_barrier();
}

/* A callback queued while a reader is inside runs only after the reader
 * has left its section. */
START_TEST(rcu_call_rcu_after_reader)
{
	call_rcu_after_reader(0);
}
END_TEST

/* The same, with call_rcu issued from inside a read-side section. */
START_TEST(rcu_call_rcu_inside_reader)
{
	call_rcu_after_reader(1);
}
END_TEST

/* ---- rcu_barrier ------------------------------------------------------ */

struct counted {
	struct vs_rcu_head head;
	vs_atomic32_t *count;
};

static void count_cb(struct vs_rcu_head *head)
{
	struct counted *c = (struct counted *)head;

	vs_fetch_add(c->count, 1);
}

static void queue_counted(struct counted *c, int n, vs_atomic32_t *count)
{
	int i;

	for (i = 0; i < n; i++) {
		c[i].count = count;
		vs_call_rcu(&c[i].head, count_cb);
	}
}

struct queuer {
	struct counted *c;
	vs_atomic32_t *count;
};

static void *queuer_fn(void *arg)
{
	struct queuer *q = arg;

	attach();
	queue_counted(q->c, NR_CALLBACKS, q->count);
	return NULL;
}

/* rcu_barrier returns after every callback queued before it has run,
 * including callbacks queued by a thread that has since exited. */
START_TEST(rcu_barrier_waits_for_callbacks)
{
	struct counted *c = calloc(2 * NR_CALLBACKS, sizeof(*c));
	vs_atomic32_t count;
	struct queuer q;
	pthread_t tid;

	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(vs_thread_attach(), 0);
	vs_atomic_init(&count, 0);
	queue_counted(c, NR_CALLBACKS, &count);
	vs_rcu_barrier();
	ck_assert_uint_eq(vs_test_read32(&count), NR_CALLBACKS);

	q = (struct queuer){ c + NR_CALLBACKS, &count };
	vs_test_thread_create(&tid, queuer_fn, &q);
	vs_test_thread_join(tid);
	vs_rcu_barrier();
	ck_assert_uint_eq(vs_test_read32(&count), 2 * NR_CALLBACKS);

	/* Nothing queued: returns at once. */
	vs_rcu_barrier();
	free(c);
}
END_TEST

/* A vs_free_rcu() callback: count @obj's free in @arg. */
static void count_free(void *arg, void *obj)
{
	(void)obj;
	(void)vs_fetch_add((vs_atomic32_t *)arg, 1);
}

/* vs_rcu_set_free_at_once(): each vs_free_rcu() is a callback of its
 * own, handed over in the call; back to batching, a few frees wait in
 * their slot for vs_rcu_barrier(). */
START_TEST(rcu_free_at_once)
{
	struct vs_rcu_stats a, b;
	vs_atomic32_t freed;
	int k;

	ck_assert_int_eq(vs_thread_attach(), 0);
	vs_atomic_init(&freed, 0);
	vs_rcu_barrier();
	ck_assert_int_eq(vs_rcu_set_free_at_once(1), 0);
	vs_rcu_stats(&a);
	for (k = 0; k < 4; k++)
		vs_free_rcu(count_free, &freed, NULL);
	vs_rcu_stats(&b);
	ck_assert_int_eq(b.callbacks - a.callbacks, 4);
	ck_assert_int_eq(vs_rcu_set_free_at_once(0), 1);
	for (k = 0; k < 4; k++)
		vs_free_rcu(count_free, &freed, NULL);
	vs_rcu_stats(&a);
	ck_assert_int_eq(a.callbacks - b.callbacks, 0);
	vs_rcu_barrier();
	ck_assert_uint_eq(vs_test_read32(&freed), 8);
}
END_TEST

/* ---- poison ----------------------------------------------------------- */

/*
 * Objects published through one global pointer and retired with
 * vs_call_rcu().  The callback poisons the object; in the graveyard
 * variant the poisoned objects are kept (so a late reader would see the
 * poison) and freed at the end; in the free variant the callback also
 * frees the object (ASan then catches a late reader as use-after-free).
 */
struct obj {
	vs_atomic64_t magic;            /* OBJ_LIVE while published */
	vs_atomic64_t a, b;             /* b == a + 1 */
	struct vs_rcu_head rcu;
	struct obj *grave_next;         /* set after poisoning */
};

struct poison_test {
	VS_ATOMIC(struct obj *) gp;
	VS_ATOMIC(struct obj *) graveyard;
	vs_atomic32_t stop;
	vs_atomic32_t readers_in;
	vs_atomic64_t retired;
	vs_atomic64_t poisoned;
	int free_in_callback;
	int64_t deadline;
	int max_replacements;
};

static struct poison_test pt;

struct poison_reader {
	uint64_t reads;
	uint64_t bad;
	uint64_t first_bad_magic;
};

static struct obj *obj_new(uint64_t a)
{
	struct obj *o = malloc(sizeof(*o));

	ck_assert_ptr_nonnull(o);
	vs_atomic_init(&o->magic, OBJ_LIVE);
	vs_atomic_init(&o->a, a);
	vs_atomic_init(&o->b, a + 1);
	o->grave_next = NULL;
	return o;
}

static void poison_cb(struct vs_rcu_head *head)
{
	struct obj *o = (struct obj *)((char *)head
				       - offsetof(struct obj, rcu));
	struct obj *old;

	/* Every byte, the rcu head included: liburcu is done with it. */
	memset(o, POISON_BYTE, sizeof(*o));
	vs_fetch_add(&pt.poisoned, 1);
	if (pt.free_in_callback) {
		free(o);
		return;
	}
	old = vs_read_once(&pt.graveyard);
	do
		o->grave_next = old;
	while (!vs_cmpxchg(&pt.graveyard, &old, o));
}

static void *poison_reader_fn(void *arg)
{
	struct poison_reader *r = arg;
	uint64_t magic, a, b;
	struct obj *o;
	int k, d;

	attach();
	vs_fetch_add(&pt.readers_in, 1);
	while (!vs_read_once(&pt.stop)) {
		vs_rcu_read_lock();
		o = vs_load_acquire(&pt.gp);
		/* Hold the object a while, re-reading it: a grace period
		 * that ended early would poison it under us. */
		for (k = 0; k < 4; k++) {
			magic = vs_read_once(&o->magic);
			a = vs_read_once(&o->a);
			b = vs_read_once(&o->b);
			if (magic != OBJ_LIVE || a == POISON64 || b != a + 1) {
				if (!r->bad++)
					r->first_bad_magic = magic;
			}
			for (d = 0; d < 64; d++)
				vs_cpu_relax();
		}
		vs_rcu_read_unlock();
		vs_rcu_quiescent_state();
		r->reads++;
	}
	return NULL;
}

static void run_poison(int free_in_callback)
{
	struct poison_reader r[NR_POISON_READERS];
	pthread_t tid[NR_POISON_READERS];
	struct obj *o, *old, *next;
	uint64_t i, nr = 0;
	int k;

	memset(&pt, 0, sizeof(pt));
	pt.free_in_callback = free_in_callback;
	pt.max_replacements = vs_test_scale(50000);
	pt.deadline = vs_test_now_ns() + vs_test_run_ns(1000);
	vs_store_release(&pt.gp, obj_new(0));

	ck_assert_int_eq(vs_thread_attach(), 0);
	for (k = 0; k < NR_POISON_READERS; k++) {
		r[k] = (struct poison_reader){ 0 };
		vs_test_thread_create(&tid[k], poison_reader_fn, &r[k]);
	}
	ck_assert(vs_test_wait_eq(&pt.readers_in, NR_POISON_READERS,
				  VS_TEST_WAIT_NS));

	/* The publisher: this thread, the only updater. */
	for (i = 1; i <= (uint64_t)pt.max_replacements; i++) {
		o = obj_new(i);
		old = vs_read_once(&pt.gp);
		/* Pairs with the readers' acquire: they see o initialized. */
		vs_store_release(&pt.gp, o);
		vs_call_rcu(&old->rcu, poison_cb);
		nr++;
		/* Let callbacks and readers keep up now and then. */
		if ((i & 255) == 0) {
			vs_rcu_quiescent_state();
			if (vs_test_now_ns() > pt.deadline)
				break;
			if ((i & 4095) == 0)
				vs_synchronize_rcu();
		}
	}
	vs_store_release(&pt.stop, 1);
	for (k = 0; k < NR_POISON_READERS; k++)
		vs_test_thread_join(tid[k]);
	vs_rcu_barrier();

	for (k = 0; k < NR_POISON_READERS; k++) {
		ck_assert_msg(r[k].bad == 0, "reader %d saw %llu poisoned "
			      "objects in %llu reads (magic %#llx)", k,
			      (unsigned long long)r[k].bad,
			      (unsigned long long)r[k].reads,
			      (unsigned long long)r[k].first_bad_magic);
		ck_assert_uint_gt(r[k].reads, 0);
	}
	ck_assert_uint_eq(vs_test_read64(&pt.poisoned), nr);

	/* The graveyard and the last live object. */
	for (o = vs_load_acquire(&pt.graveyard); o; o = next) {
		next = o->grave_next;
		free(o);
	}
	free(vs_load_acquire(&pt.gp));
	if (getenv("VS_TEST_VERBOSE"))
		fprintf(stderr, "rcu poison (%s): %llu replacements, "
			"%llu + %llu reads\n",
			free_in_callback ? "free" : "graveyard",
			(unsigned long long)nr,
			(unsigned long long)r[0].reads,
			(unsigned long long)r[1].reads);
}

/* A reader inside rcu_read_lock never sees an object that an updater
 * replaced and retired with call_rcu in poisoned state (objects kept in
 * a graveyard, so a premature poison is visible). */
START_TEST(rcu_poison_graveyard)
{
	run_poison(0);
}
END_TEST

/* The same with the callback freeing the object (under ASan a premature
 * free is a use-after-free report). */
START_TEST(rcu_poison_free)
{
	run_poison(1);
}
END_TEST

Suite *rcu_suite(void)
{
	Suite *s = suite_create("rcu");

	vs_test_add(vs_test_tcase(s, "grace_period"), rcu_read_lock_nests,
		    rcu_synchronize_no_reader, rcu_synchronize_waits_for_reader,
		    rcu_call_rcu_after_reader, rcu_call_rcu_inside_reader,
		    rcu_barrier_waits_for_callbacks, rcu_free_at_once);
	vs_test_add(vs_test_tcase(s, "poison"), rcu_poison_graveyard,
		    rcu_poison_free);
	return s;
}
