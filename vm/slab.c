/* SPDX-License-Identifier: MIT */
/*
 * vm/slab.c - object caches: per-slot magazines over a shared free list.
 *
 * A free object holds nothing: the magazines and the shared ring keep
 * the pointers, so under ASan a free object is poisoned whole.  Chunks are aligned
 * heap blocks (malloc memory, so that LeakSanitizer scans the pointers
 * that live objects hold) recorded in @chunks for vs_kmem_cache_destroy().
 */
#include <vmsim/slab.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/rcu.h>
#include <vmsim/vcpu_annotate.h>

#include "../sync/internal.h"
#include "asan.h"
#include "fail.h"

#ifdef VS__ASAN
#define KMEM_QUARANTINE 1
#else
#define KMEM_QUARANTINE 0
#endif

/* Is @c's memory readable free (VS_KMEM_TYPESAFE_BY_RCU)?  Context: any. */
static int typesafe(const struct vs_kmem_cache *c)
{
	return (c->flags & VS_KMEM_TYPESAFE_BY_RCU) != 0;
}

/*
 * Frees go to the shared list and are reused oldest first, so that a
 * freed object stays poisoned for long and a late touch is named:
 * under ASan, and on a virtual machine that checks freed memory.  Not
 * in a typesafe cache, whose objects are never poisoned.
 */
static int quarantine(const struct vs_kmem_cache *c)
{
	return !typesafe(c) &&
	       (KMEM_QUARANTINE || (VS_VCPU && vs_vcpu_checks_freed()));
}

/* A chunk is at least this big, and holds at least CHUNK_MIN objects. */
#define CHUNK_BYTES (64 * 1024)
#define CHUNK_MIN 8

static vs_spinlock_t caches_lock = VS_SPINLOCK_INIT;
static struct vs_kmem_cache *caches;

static size_t obj_align(const struct vs_kmem_cache *c)
{
	return c->align > sizeof(void *) ? c->align : sizeof(void *);
}

/* Bytes of one object in a chunk: the size rounded up to the alignment. */
static size_t obj_size(const struct vs_kmem_cache *c)
{
	size_t a = obj_align(c);

	return (c->size + a - 1) & ~(a - 1);
}

/*
 * The shared list is a ring of pointers, @ring_cap (a power of two) at
 * least the number of objects, so it never overflows and a batch moves
 * pointers without touching the objects' memory.  Objects are taken
 * from the tail (the last freed, still in this CPU's cache) or, in
 * quarantine(), from the head (the longest free).  Caller holds c->lock.
 */
static void ring_put(struct vs_kmem_cache *c, void *obj)
{
	long nr = vs_read_once(&c->nr_free);

	if (vs_unlikely((size_t)nr >= c->ring_cap))	/* not one of ours */
		vs__die("kmem cache: a free of an object made before the "
			"cache was emptied (vs__kmem_caches_reset)", EINVAL);
	c->ring[(c->ring_head + (size_t)nr) & (c->ring_cap - 1)] = obj;
	vs_write_once(&c->nr_free, nr + 1);
}

static void *ring_take(struct vs_kmem_cache *c)
{
	long nr = vs_read_once(&c->nr_free);
	void *obj;

	if (nr == 0)
		return NULL;
	if (quarantine(c)) {
		obj = c->ring[c->ring_head];
		c->ring_head = (c->ring_head + 1) & (c->ring_cap - 1);
	} else {
		obj = c->ring[(c->ring_head + (size_t)nr - 1) &
			      (c->ring_cap - 1)];
	}
	vs_write_once(&c->nr_free, nr - 1);
	return obj;
}

/* Make room in the ring for @more objects.  Caller holds c->lock. */
static int ring_reserve(struct vs_kmem_cache *c, size_t more)
{
	size_t need = (size_t)vs_read_once(&c->nr_objects) + more;
	size_t cap = c->ring_cap ? c->ring_cap : 64, nr, i;
	void **ring;

	if (need <= c->ring_cap)
		return 0;
	while (cap < need)
		cap *= 2;
	ring = malloc(cap * sizeof(*ring));
	if (!ring)
		return -ENOMEM;
	nr = (size_t)vs_read_once(&c->nr_free);
	for (i = 0; i < nr; i++)
		ring[i] = c->ring[(c->ring_head + i) & (c->ring_cap - 1)];
	free(c->ring);
	c->ring = ring;
	c->ring_cap = cap;
	c->ring_head = 0;
	return 0;
}

/* Objects in one chunk. */
static size_t chunk_objs(const struct vs_kmem_cache *c)
{
	size_t n = CHUNK_BYTES / obj_size(c);

	return n < CHUNK_MIN ? CHUNK_MIN : n;
}

/*
 * Name the shared part of @c (its lock and the list behind it, one line)
 * for the hot lines of the virtual CPUs (vmsim/vcpu_annotate.h).  At every grow,
 * not once: a static cache outlives the machine that first grew it.
 */
static void name_shared(struct vs_kmem_cache *c)
{
	char s[96];

	snprintf(s, sizeof(s), "kmem cache %s: lock and shared list",
		 c->name ? c->name : "(unnamed)");
	vs_vcpu_name(&c->lock, (size_t)((char *)c->mag - (char *)&c->lock),
		     s);
}

/* Carve one more chunk onto the shared list.  Caller holds c->lock. */
static int grow(struct vs_kmem_cache *c)
{
	size_t osz = obj_size(c), n = chunk_objs(c), i;
	char *chunk;

	if ((size_t)vs_read_once(&c->nr_chunks) == c->chunk_cap) {
		size_t cap = c->chunk_cap ? 2 * c->chunk_cap : 16;
		void **p = realloc(c->chunks, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		c->chunks = p;
		c->chunk_cap = cap;
	}
	if (ring_reserve(c, n))
		return -ENOMEM;
	chunk = aligned_alloc(obj_align(c), n * osz);
	if (!chunk)
		return -ENOMEM;
	c->chunks[vs_read_once(&c->nr_chunks)] = chunk;
	vs_write_once(&c->nr_chunks, vs_read_once(&c->nr_chunks) + 1);
	for (i = 0; c->ctor && i < n; i++)
		c->ctor(chunk + i * osz);
	if (!typesafe(c))
		vs__poison_obj(chunk, n * osz);
	for (i = 0; i < n; i++)
		ring_put(c, chunk + i * osz);
	vs_write_once(&c->nr_objects, vs_read_once(&c->nr_objects) + (long)n);
	name_shared(c);
	if (!c->listed) {
		vs_spin_lock(&caches_lock);
		c->next = caches;
		caches = c;
		c->listed = 1;
		vs_spin_unlock(&caches_lock);
	}
	return 0;
}

/* Move up to VS_KMEM_BATCH objects from the shared list to @m. */
static void mag_refill(struct vs_kmem_cache *c, struct vs__kmem_mag *m)
{
	uint32_t nr = vs_read_once(&m->nr), want = nr + VS_KMEM_BATCH;

	vs_spin_lock(&c->lock);
	if (vs_read_once(&c->nr_free) == 0)
		(void)grow(c);
	while (nr < want && vs_read_once(&c->nr_free) > 0)
		m->obj[nr++] = ring_take(c);
	vs_spin_unlock(&c->lock);
	vs_write_once(&m->nr, nr);
}

/* Move the VS_KMEM_BATCH oldest objects of full @m to the shared list. */
static void mag_drain(struct vs_kmem_cache *c, struct vs__kmem_mag *m)
{
	uint32_t i;

	vs_spin_lock(&c->lock);
	for (i = 0; i < VS_KMEM_BATCH; i++)
		ring_put(c, m->obj[i]);
	vs_spin_unlock(&c->lock);
	memmove(m->obj, m->obj + VS_KMEM_BATCH,
		(VS_KMEM_MAG - VS_KMEM_BATCH) * sizeof(m->obj[0]));
	vs_write_once(&m->nr, VS_KMEM_MAG - VS_KMEM_BATCH);
}

void *vs_kmem_cache_alloc(struct vs_kmem_cache *c)
{
	struct vs__kmem_mag *m = &c->mag[vs__thread_slot()];
	void *obj = NULL;
	uint32_t nr;

	if (vs__fail_alloc(VS_FAIL_SLAB, c->name))
		return NULL;
	vs__slot_lock(&m->lock);
	if (vs_read_once(&m->nr) == 0)
		mag_refill(c, m);
	nr = vs_read_once(&m->nr);
	if (vs_likely(nr > 0)) {
		obj = m->obj[nr - 1];
		vs_write_once(&m->nr, nr - 1);
	}
	vs__slot_unlock(&m->lock);
	if (obj && !typesafe(c))
		vs__unpoison_obj(obj, c->size);
	return obj;
}

void *vs_kmem_cache_zalloc(struct vs_kmem_cache *c)
{
	void *obj = c->ctor ? NULL : vs_kmem_cache_alloc(c);

	if (obj)
		memset(obj, 0, c->size);
	return obj;
}

void vs_kmem_cache_free(struct vs_kmem_cache *c, void *obj)
{
	struct vs__kmem_mag *m;
	uint32_t nr;

	if (!obj)
		return;
	if (!typesafe(c))
		vs__poison_obj(obj, obj_size(c));
	if (quarantine(c)) {
		vs_spin_lock(&c->lock);
		ring_put(c, obj);
		vs_spin_unlock(&c->lock);
		return;
	}
	m = &c->mag[vs__thread_slot()];
	vs__slot_lock(&m->lock);
	if (vs_read_once(&m->nr) == VS_KMEM_MAG)
		mag_drain(c, m);
	nr = vs_read_once(&m->nr);
	m->obj[nr] = obj;
	vs_write_once(&m->nr, nr + 1);
	vs__slot_unlock(&m->lock);
}

static void free_rcu_cb(void *arg, void *obj)
{
	vs_kmem_cache_free(arg, obj);
}

void vs_kmem_cache_free_rcu(struct vs_kmem_cache *c, void *obj)
{
	vs_free_rcu(free_rcu_cb, c, obj);
}

void vs_kmem_cache_stats(struct vs_kmem_cache *c,
			 struct vs_kmem_cache_stats *st)
{
	long free = vs_read_once(&c->nr_free);
	size_t i;

	for (i = 0; i < VS_ARRAY_SIZE(c->mag); i++)
		free += vs_read_once(&c->mag[i].nr);
	st->name = c->name;
	st->obj_size = obj_size(c);
	st->objects = vs_read_once(&c->nr_objects);
	st->chunks = vs_read_once(&c->nr_chunks);
	st->active = st->objects - free;
	st->bytes = (size_t)st->chunks * chunk_objs(c) * st->obj_size;
}

struct vs_kmem_cache *vs_kmem_cache_next(struct vs_kmem_cache *c)
{
	struct vs_kmem_cache *n;

	vs_spin_lock(&caches_lock);
	n = c ? c->next : caches;
	vs_spin_unlock(&caches_lock);
	return n;
}

/* Free @c's chunks and start it empty; its locks unlocked. */
static void empty(struct vs_kmem_cache *c, long chunks)
{
	long i;

	for (i = 0; i < chunks; i++) {
		/* Unpoisoned: the heap may hand the block out again. */
		vs__forget_obj(c->chunks[i], chunk_objs(c) * obj_size(c));
		free(c->chunks[i]);
	}
	free(c->chunks);
	free(c->ring);
	c->chunks = NULL;
	c->chunk_cap = 0;
	c->ring = NULL;
	c->ring_cap = 0;
	c->ring_head = 0;
	vs_atomic_init(&c->nr_free, 0);
	vs_atomic_init(&c->nr_objects, 0);
	vs_atomic_init(&c->nr_chunks, 0);
	memset(&c->lock, 0, sizeof(c->lock));
	memset(c->mag, 0, sizeof(c->mag));
}

/* Take @c off the list of caches: its memory may go once destroyed. */
static void unlist(struct vs_kmem_cache *c)
{
	struct vs_kmem_cache **pp;

	vs_spin_lock(&caches_lock);
	for (pp = &caches; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	c->next = NULL;
	c->listed = 0;
	vs_spin_unlock(&caches_lock);
}

int vs_kmem_cache_destroy(struct vs_kmem_cache *c)
{
	struct vs_kmem_cache_stats st;

	vs_rcu_barrier();	/* lockdep: not inside a read section */
	vs_kmem_cache_stats(c, &st);
	if (st.active != 0)
		return -EBUSY;
	empty(c, st.chunks);
	if (c->listed)
		unlist(c);
	return 0;
}

/*
 * Chunks of abandoned runs' objects (vs__kmem_caches_reset()): kept
 * where LeakSanitizer and whatever points into them can find them.
 * The host thread's alone, as that function.
 */
static struct kept {
	struct kept *next;
	void **chunks;
	long nr;
} *kept;

/* A hook of the test library's explorations (test/hooks.h). */
long vs__kmem_caches_reset(int abandoned)
{
	struct vs_kmem_cache_stats st;
	struct vs_kmem_cache *c;
	struct kept *k;
	long live = 0;

	if (!abandoned)
		vs_rcu_barrier();
	else
		memset(&caches_lock, 0, sizeof(caches_lock));
	for (c = caches; c; c = c->next) {
		vs_kmem_cache_stats(c, &st);
		if (st.active == 0) {
			empty(c, st.chunks);
			continue;
		}
		if (!abandoned) {	/* live objects: leave it be */
			live += st.active;
			continue;
		}
		k = malloc(sizeof(*k));
		if (k) {	/* else lost to LeakSanitizer, still unused */
			*k = (struct kept){ kept, c->chunks, st.chunks };
			kept = k;
		}
		c->chunks = NULL;
		empty(c, 0);
	}
	return live;
}
