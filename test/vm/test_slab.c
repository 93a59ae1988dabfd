/* SPDX-License-Identifier: MIT */
/*
 * test/vm/test_slab.c - the object caches (vmsim/slab.h) and the batched
 * RCU frees under them (vs_free_rcu()).
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/atomic.h>
#include <vmsim/rcu.h>
#include <vmsim/slab.h>
#include <vmsim/thread.h>

#include "test.h"

struct obj {
	uint64_t v[5];		/* 40 bytes: not a power of two */
};

static struct vs_kmem_cache obj_cache =
	VS_KMEM_CACHE_INIT("test_obj", sizeof(struct obj), 8);
static struct vs_kmem_cache big_cache =
	VS_KMEM_CACHE_INIT("test_big", 5000, 64);

static long active(struct vs_kmem_cache *c)
{
	struct vs_kmem_cache_stats st;

	vs_kmem_cache_stats(c, &st);
	return st.active;
}

/* Objects are distinct, aligned, zeroed by zalloc, and counted. */
START_TEST(slab_alloc_free)
{
	enum { N = 1000 };
	struct obj **o = calloc(N, sizeof(*o));
	struct vs_kmem_cache_stats st;
	int i, j;

	ck_assert_ptr_nonnull(o);
	for (i = 0; i < N; i++) {
		o[i] = vs_kmem_cache_zalloc(&obj_cache);
		ck_assert_ptr_nonnull(o[i]);
		ck_assert_uint_eq((uintptr_t)o[i] % 8, 0);
		for (j = 0; j < 5; j++)
			ck_assert_uint_eq(o[i]->v[j], 0);
		memset(o[i], 0xa5, sizeof(*o[i]));
	}
	ck_assert_int_eq(active(&obj_cache), N);
	/* No two overlap: sorted, each starts past the previous end. */
	for (i = 1; i < N; i++)
		for (j = 0; j < i; j++)
			ck_assert((char *)o[i] >= (char *)(o[j] + 1) ||
				  (char *)o[j] >= (char *)(o[i] + 1));
	for (i = 0; i < N; i++)
		vs_kmem_cache_free(&obj_cache, o[i]);
	vs_kmem_cache_free(&obj_cache, NULL);
	vs_kmem_cache_stats(&obj_cache, &st);
	ck_assert_int_eq(st.active, 0);
	ck_assert_int_ge(st.objects, N);
	ck_assert_str_eq(st.name, "test_obj");
	ck_assert_uint_eq(st.obj_size, 40);
	ck_assert_int_eq(vs_kmem_cache_destroy(&obj_cache), 0);
	free(o);
}
END_TEST

/* Steady state: the same objects come back, no chunk is added. */
START_TEST(slab_steady_state)
{
	struct vs_kmem_cache_stats a, b;
	void *o[3 * VS_KMEM_MAG];
	int i, round;

	for (round = 0; round < 100; round++) {
		for (i = 0; i < 3 * VS_KMEM_MAG; i++)
			o[i] = vs_kmem_cache_alloc(&obj_cache);
		for (i = 0; i < 3 * VS_KMEM_MAG; i++)
			vs_kmem_cache_free(&obj_cache, o[i]);
		if (round == 0)
			vs_kmem_cache_stats(&obj_cache, &a);
	}
	vs_kmem_cache_stats(&obj_cache, &b);
	ck_assert_int_eq(a.chunks, b.chunks);
	ck_assert_int_eq(a.objects, b.objects);
	ck_assert_int_eq(b.active, 0);
	ck_assert_int_eq(vs_kmem_cache_destroy(&obj_cache), 0);
}
END_TEST

/* Large aligned objects (page tables are 4160 bytes at 64). */
START_TEST(slab_big_aligned)
{
	void *o[40];
	int i;

	for (i = 0; i < 40; i++) {
		o[i] = vs_kmem_cache_alloc(&big_cache);
		ck_assert_ptr_nonnull(o[i]);
		ck_assert_uint_eq((uintptr_t)o[i] % 64, 0);
		memset(o[i], i, 5000);
	}
	for (i = 0; i < 40; i++)
		vs_kmem_cache_free(&big_cache, o[i]);
	ck_assert_int_eq(vs_kmem_cache_destroy(&big_cache), 0);
}
END_TEST

/* Destroy refuses while an object is out, and loses nothing. */
START_TEST(slab_destroy_busy)
{
	struct obj *o = vs_kmem_cache_alloc(&obj_cache);

	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(vs_kmem_cache_destroy(&obj_cache), -EBUSY);
	o->v[0] = 1; /* still valid memory */
	vs_kmem_cache_free(&obj_cache, o);
	ck_assert_int_eq(vs_kmem_cache_destroy(&obj_cache), 0);
	/* Usable again after destroy. */
	o = vs_kmem_cache_alloc(&obj_cache);
	ck_assert_ptr_nonnull(o);
	vs_kmem_cache_free(&obj_cache, o);
	ck_assert_int_eq(vs_kmem_cache_destroy(&obj_cache), 0);
}
END_TEST

static int times_listed(const struct vs_kmem_cache *want)
{
	struct vs_kmem_cache *c;
	int seen = 0;

	for (c = vs_kmem_cache_next(NULL); c; c = vs_kmem_cache_next(c))
		seen += c == want;
	return seen;
}

/* A cache that allocated is listed, once; destroyed, it is not, so its
 * memory may go (a cache of a test's own, freed after). */
START_TEST(slab_listed)
{
	struct vs_kmem_cache *own = aligned_alloc(_Alignof(struct vs_kmem_cache),
						  sizeof(*own));
	const struct vs_kmem_cache init =
		VS_KMEM_CACHE_INIT("own", sizeof(struct obj), 8);

	vs_kmem_cache_free(&obj_cache, vs_kmem_cache_alloc(&obj_cache));
	ck_assert_int_eq(times_listed(&obj_cache), 1);
	ck_assert_ptr_nonnull(own);
	*own = init;
	vs_kmem_cache_free(own, vs_kmem_cache_alloc(own));
	ck_assert_int_eq(times_listed(own), 1);
	ck_assert_int_eq(vs_kmem_cache_destroy(own), 0);
	ck_assert_int_eq(times_listed(own), 0);
	ck_assert_int_eq(times_listed(&obj_cache), 1);
	free(own);
}
END_TEST

/* ---- vs_free_rcu ------------------------------------------------------ */

static vs_atomic_long_t freed;

static void count_free(void *arg, void *obj)
{
	ck_assert_ptr_eq(arg, &freed);
	ck_assert_ptr_nonnull(obj);
	vs_fetch_add(&freed, 1);
}

/*
 * Full batches wait in the slot until vs_rcu_free_handover() (which
 * vs_mmap_write_unlock() calls), one callback each, or go at once when
 * four wait; a partial batch waits for vs_rcu_barrier(), which waits
 * for every entry.
 */
START_TEST(free_rcu_batches)
{
	struct vs_rcu_stats a, b;
	long i, n = 3 * VS_RCU_BATCH + 5;

	vs_rcu_barrier();
	vs_atomic_init(&freed, 0);
	vs_rcu_stats(&a);
	for (i = 0; i < n; i++)
		vs_free_rcu(count_free, &freed, (void *)(uintptr_t)(i + 1));
	vs_rcu_stats(&b);
	ck_assert_int_eq(b.deferred - a.deferred, n);
	ck_assert_int_eq(b.callbacks - a.callbacks, 0);	/* all held */
	vs_rcu_free_handover();
	vs_rcu_stats(&b);
	ck_assert_int_eq(b.callbacks - a.callbacks, 3);	/* 5 still wait */
	vs_rcu_free_handover();
	vs_rcu_stats(&b);
	ck_assert_int_eq(b.callbacks - a.callbacks, 3);
	/* Four full batches more: handed over when the fourth fills. */
	for (i = 0; i < 4 * VS_RCU_BATCH; i++)
		vs_free_rcu(count_free, &freed, (void *)(uintptr_t)(i + 1));
	vs_rcu_stats(&b);
	ck_assert_int_eq(b.callbacks - a.callbacks, 7);
	vs_rcu_barrier();
	ck_assert_int_eq(vs_read_once(&freed), n + 4 * VS_RCU_BATCH);
}
END_TEST

static void free_nested(void *arg, void *obj)
{
	(void)obj;
	/* A callback that frees again (a VMA dropping its anon_vma). */
	vs_free_rcu(count_free, arg, arg);
	vs_fetch_add(&freed, 1);
}

START_TEST(free_rcu_barrier_nested)
{
	vs_rcu_barrier();
	vs_atomic_init(&freed, 0);
	vs_free_rcu(free_nested, &freed, &freed);
	vs_rcu_barrier();
	ck_assert_int_eq(vs_read_once(&freed), 2);
}
END_TEST

/*
 * The grace period: objects freed with vs_kmem_cache_free_rcu() while a
 * reader is inside a read-side section are not handed out again until
 * it leaves, however many batches go by meanwhile.
 */
struct gp_reader {
	vs_atomic32_t inside, leave;
};

static void *gp_reader_fn(void *arg)
{
	struct gp_reader *r = arg;

	vs_thread_attach();
	vs_rcu_read_lock();
	vs_store_release(&r->inside, 1);
	while (!vs_load_acquire(&r->leave))
		vs_cpu_relax();
	vs_rcu_read_unlock();
	vs_thread_detach();
	return NULL;
}

START_TEST(free_rcu_waits_for_reader)
{
	enum { N = 4 * VS_RCU_BATCH };
	struct gp_reader r;
	struct obj *old[N], *o;
	pthread_t tid;
	int i, j;

	vs_thread_attach();
	vs_atomic_init(&r.inside, 0);
	vs_atomic_init(&r.leave, 0);
	for (i = 0; i < N; i++)
		old[i] = vs_kmem_cache_alloc(&obj_cache);
	vs_test_thread_create(&tid, gp_reader_fn, &r);
	while (!vs_load_acquire(&r.inside))
		vs_cpu_relax();
	for (i = 0; i < N; i++)
		vs_kmem_cache_free_rcu(&obj_cache, old[i]);
	/* The reader is still inside: none of old[] may come back. */
	for (i = 0; i < 4 * N; i++) {
		o = vs_kmem_cache_alloc(&obj_cache);
		for (j = 0; j < N; j++)
			ck_assert_ptr_ne(o, old[j]);
		vs_kmem_cache_free(&obj_cache, o);
	}
	ck_assert_int_ge(active(&obj_cache), N);
	vs_store_release(&r.leave, 1);
	vs_test_thread_join(tid);
	vs_rcu_barrier();
	ck_assert_int_eq(active(&obj_cache), 0);
	ck_assert_int_eq(vs_kmem_cache_destroy(&obj_cache), 0);
}
END_TEST

/* ---- threads ----------------------------------------------------------- */

#define MT_THREADS 4
#define MT_HOLD 64

static vs_atomic32_t mt_owner_fail;

/* Each object carries its owner's id while held: a double hand-out, or
 * a write into a free object, shows as a wrong stamp. */
static void *mt_fn(void *arg)
{
	uint64_t id = (uint64_t)(uintptr_t)arg;
	struct obj *held[MT_HOLD];
	int i, k, it, iters = vs_test_scale(2000);

	vs_thread_attach();
	for (it = 0; it < iters; it++) {
		for (i = 0; i < MT_HOLD; i++) {
			held[i] = vs_kmem_cache_alloc(&obj_cache);
			for (k = 0; k < 5; k++)
				held[i]->v[k] = id;
		}
		for (i = 0; i < MT_HOLD; i++) {
			for (k = 0; k < 5; k++)
				if (held[i]->v[k] != id)
					vs_fetch_add(&mt_owner_fail, 1);
			if (i & 1)
				vs_kmem_cache_free(&obj_cache, held[i]);
			else
				vs_kmem_cache_free_rcu(&obj_cache, held[i]);
		}
	}
	vs_thread_detach();
	return NULL;
}

START_TEST(slab_threads)
{
	pthread_t tid[MT_THREADS];
	uintptr_t i;

	vs_atomic_init(&mt_owner_fail, 0);
	for (i = 0; i < MT_THREADS; i++)
		vs_test_thread_create(&tid[i], mt_fn, (void *)(i + 1));
	for (i = 0; i < MT_THREADS; i++)
		vs_test_thread_join(tid[i]);
	ck_assert_int_eq(vs_read_once(&mt_owner_fail), 0);
	vs_rcu_barrier();
	ck_assert_int_eq(active(&obj_cache), 0);
	ck_assert_int_eq(vs_kmem_cache_destroy(&obj_cache), 0);
}
END_TEST

/* An object of the typesafe cache: a count its constructor sets. */
struct ts_obj {
	vs_atomic32_t ref;
	uint32_t carved;
	char pad[48];
};

static vs_atomic32_t ts_ctor_calls;

static void ts_ctor(void *p)
{
	struct ts_obj *o = p;

	vs_atomic_init(&o->ref, 0);
	o->carved = 0xc0ffee;
	vs_fetch_add_relaxed(&ts_ctor_calls, 1);
}

static struct vs_kmem_cache ts_cache =
	VS_KMEM_CACHE_INIT_TYPESAFE("test typesafe", sizeof(struct ts_obj),
				    _Alignof(struct ts_obj), ts_ctor);

/*
 * VS_KMEM_TYPESAFE_BY_RCU: the constructor runs once per object, when
 * its chunk is carved; a free goes back at once and the next allocation
 * on this slot hands the same object out, as the last user left it
 * (readable while free, even under ASan); no zeroing allocation.
 */
START_TEST(slab_typesafe)
{
	struct ts_obj *a, *b;
	uint32_t carved;

	ck_assert_int_eq(vs_thread_attach(), 0);
	vs_atomic_init(&ts_ctor_calls, 0);
	a = vs_kmem_cache_alloc(&ts_cache);
	ck_assert_ptr_nonnull(a);
	carved = vs_read_once(&ts_ctor_calls);
	ck_assert_uint_ge(carved, 8);
	ck_assert_uint_eq(a->carved, 0xc0ffee);
	ck_assert_uint_eq(vs_read_once(&a->ref), 0);
	vs_write_once(&a->ref, 7);
	vs_kmem_cache_free(&ts_cache, a);
	/* A reader's look at the free object: still an object. */
	ck_assert_uint_eq(vs_read_once(&a->ref), 7);
	b = vs_kmem_cache_alloc(&ts_cache);
	ck_assert_ptr_eq(b, a);
	ck_assert_uint_eq(vs_read_once(&b->ref), 7);
	ck_assert_uint_eq(vs_read_once(&ts_ctor_calls), carved);
	ck_assert_ptr_null(vs_kmem_cache_zalloc(&ts_cache));
	vs_kmem_cache_free(&ts_cache, b);
	ck_assert_int_eq(vs_kmem_cache_destroy(&ts_cache), 0);
}
END_TEST

Suite *slab_suite(void)
{
	Suite *s = suite_create("slab");

	vs_test_add(vs_test_tcase(s, "cache"), slab_typesafe, slab_alloc_free,
		    slab_steady_state, slab_big_aligned, slab_destroy_busy,
		    slab_listed);
	vs_test_add(vs_test_tcase(s, "free_rcu"), free_rcu_batches,
		    free_rcu_barrier_nested, free_rcu_waits_for_reader);
	vs_test_add(vs_test_tcase(s, "threads"), slab_threads);
	return s;
}
