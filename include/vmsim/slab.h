/* SPDX-License-Identifier: MIT */
/*
 * vmsim/slab.h - object caches, after the kernel's kmem_cache.
 *
 * A cache hands out objects of one size.  Each thread slot (the
 * stand-in for "this CPU", vmsim/thread.h) has a magazine of free objects
 * that it allocates from and frees into without touching anything
 * shared; a magazine that runs empty takes VS_KMEM_BATCH objects from
 * the cache's shared free list, one that runs full gives VS_KMEM_BATCH
 * back, and an empty shared list grows by one chunk from the host.
 * Memory is never given back to the host while the cache lives: after
 * warm-up, allocating and freeing make no system call and touch no new
 * page.
 *
 * vs_kmem_cache_free_rcu() frees an object after a grace period,
 * through vs_free_rcu()'s batches: one RCU callback per VS_RCU_BATCH
 * objects.  Until then a lockless reader may still read the object;
 * afterwards it is an ordinary free object and may be handed out again
 * at once.  A cache is therefore not SLAB_TYPESAFE_BY_RCU: a reader may
 * not assume that memory it found under RCU still holds an object of
 * the type, unless the cache is VS_KMEM_TYPESAFE_BY_RCU (below).
 *
 * A cache made with VS_KMEM_TYPESAFE_BY_RCU (SLAB_TYPESAFE_BY_RCU) is
 * for objects that lockless readers may still reach once freed: a free
 * goes back to the magazine at once and the object may be handed out
 * again at once, but its memory stays an object of the type while the
 * cache lives (chunks are only freed by vs_kmem_cache_destroy()), so a
 * reader that revalidates what it read (a reference taken only if
 * nonzero, an owner and a range rechecked) never reads foreign memory.
 * Such a cache has a constructor, run once on each object when its
 * chunk is carved: the fields readers touch are set there and never by
 * an allocation (no vs_kmem_cache_zalloc()), so that a reader's atomic
 * on a freed object races with nothing but atomics.
 *
 * Under AddressSanitizer a free object is poisoned, and a freed object
 * goes to the tail of the shared list, not to the magazine, so that it
 * is reused as late as possible (ASan's own quarantine, in spirit); so
 * too on a virtual machine that checks freed memory (vmsim/vcpu.h,
 * VS_MACHINE_CHECK_FREED).  Not the objects of a VS_KMEM_TYPESAFE_BY_RCU
 * cache: readers legitimately read them free, and they are reused at
 * once.
 *
 * Lock order: a magazine's lock, then the cache's lock.
 */
#ifndef VMSIM_SLAB_H
#define VMSIM_SLAB_H

#include <stddef.h>

#include "atomic.h"
#include "common.h"
#include "spinlock.h"
#include "thread.h"

/** VS_KMEM_BATCH - objects moved between a magazine and the shared list */
#define VS_KMEM_BATCH 16
/** VS_KMEM_MAG - objects a magazine holds */
#define VS_KMEM_MAG (2 * VS_KMEM_BATCH)

/* Private: one slot's magazine. */
struct vs__kmem_mag {
	VS_CACHELINE_ALIGNED vs__slot_lock_t lock;
	vs_atomic32_t nr;	/* written under @lock */
	void *obj[VS_KMEM_MAG];
};

/** VS_KMEM_TYPESAFE_BY_RCU - a flag of struct vs_kmem_cache: freed
 * objects may be reused at once but stay objects of the type
 * (SLAB_TYPESAFE_BY_RCU) */
#define VS_KMEM_TYPESAFE_BY_RCU 0x1u

/**
 * struct vs_kmem_cache - a cache of objects of one size
 * @name: for statistics
 * @size: bytes of an object, as asked for
 * @align: alignment of an object, a power of two
 * @flags: 0 or VS_KMEM_TYPESAFE_BY_RCU
 * @ctor: NULL, or run once on each object as its chunk is carved
 *        (required with VS_KMEM_TYPESAFE_BY_RCU)
 *
 * Define one with VS_KMEM_CACHE_INIT() or VS_KMEM_CACHE_INIT_TYPESAFE();
 * the other fields are private.
 * @lock protects the shared free list (@ring, @ring_cap, @ring_head,
 * @nr_free), @chunks, @chunk_cap and the counts.
 */
struct vs_kmem_cache {
	const char *name;
	size_t size;
	size_t align;
	unsigned int flags;
	void (*ctor)(void *obj);
	VS_CACHELINE_ALIGNED vs_spinlock_t lock; /* private */
	void **ring;			/* private: free objects */
	size_t ring_cap;		/* private */
	size_t ring_head;		/* private */
	vs_atomic_long_t nr_free;	/* private: in the ring */
	vs_atomic_long_t nr_objects;	/* private: carved */
	vs_atomic_long_t nr_chunks;	/* private */
	void **chunks;			/* private */
	size_t chunk_cap;		/* private */
	struct vs_kmem_cache *next;	/* private: the list of caches */
	int listed;			/* private */
	struct vs__kmem_mag mag[VS_SLOT_ARRAY];	/* private: per slot */
};

/**
 * VS_KMEM_CACHE_INIT - the initializer of a cache
 * @n: its name, a string literal
 * @sz: the object size in bytes
 * @al: the object alignment, a power of two (raised to a pointer's)
 */
#define VS_KMEM_CACHE_INIT(n, sz, al) \
	{ .name = (n), .size = (sz), .align = (al) }

/**
 * VS_KMEM_CACHE_INIT_TYPESAFE - the initializer of a
 * VS_KMEM_TYPESAFE_BY_RCU cache
 * @n: its name, a string literal
 * @sz: the object size in bytes
 * @al: the object alignment, a power of two (raised to a pointer's)
 * @c: the constructor, void (*)(void *)
 */
#define VS_KMEM_CACHE_INIT_TYPESAFE(n, sz, al, c) \
	{ .name = (n), .size = (sz), .align = (al), \
	  .flags = VS_KMEM_TYPESAFE_BY_RCU, .ctor = (c) }

/**
 * vs_kmem_cache_alloc - an object, not initialised
 * @c: the cache
 *
 * Context: any thread (it may be attached to take a slot).
 * Return: the object, or NULL when the host is out of memory.
 */
VS_EXTERN void *vs_kmem_cache_alloc(struct vs_kmem_cache *c);

/**
 * vs_kmem_cache_zalloc - an object, zeroed
 * @c: the cache, one without a constructor
 *
 * Context: as vs_kmem_cache_alloc().
 * Return: the object, or NULL when the host is out of memory, or when
 * @c has a constructor (whose fields a zeroing would wipe).
 */
VS_EXTERN void *vs_kmem_cache_zalloc(struct vs_kmem_cache *c);

/**
 * vs_kmem_cache_free - give @obj back to @c now
 * @c: the cache it came from
 * @obj: the object; NULL is ignored
 *
 * Context: any thread; no reader may still reach @obj, but for a
 * lockless reader that revalidates in a VS_KMEM_TYPESAFE_BY_RCU cache.
 */
VS_EXTERN void vs_kmem_cache_free(struct vs_kmem_cache *c, void *obj);

/**
 * vs_kmem_cache_free_rcu - give @obj back to @c after a grace period
 * @c: the cache it came from
 * @obj: the object, unreachable for new readers
 *
 * Batched (vs_free_rcu()); vs_rcu_barrier() waits for it.
 * Context: as vs_free_rcu().
 */
VS_EXTERN void vs_kmem_cache_free_rcu(struct vs_kmem_cache *c, void *obj);

/**
 * struct vs_kmem_cache_stats - a cache's counters
 * @name: the cache's name
 * @obj_size: bytes one object takes in a chunk
 * @objects: objects carved from the host's memory so far
 * @active: objects handed out and not yet back (in use, or waiting for
 *          a grace period)
 * @chunks: chunks taken from the host
 * @bytes: heap bytes of those chunks
 */
struct vs_kmem_cache_stats {
	const char *name;
	size_t obj_size;
	long objects;
	long active;
	long chunks;
	size_t bytes;
};

/**
 * vs_kmem_cache_stats - read @c's counters
 * @c: the cache
 * @st: filled in; a snapshot while other threads allocate
 *
 * Context: any.
 */
VS_EXTERN void vs_kmem_cache_stats(struct vs_kmem_cache *c,
				   struct vs_kmem_cache_stats *st);

/**
 * vs_kmem_cache_next - walk the caches that have allocated anything
 * @c: NULL for the first, else the previous one
 *
 * Context: any.
 * Return: the next cache, or NULL after the last.
 */
VS_EXTERN struct vs_kmem_cache *vs_kmem_cache_next(struct vs_kmem_cache *c);

/**
 * vs_kmem_cache_destroy - give @c's memory back to the host
 * @c: the cache; afterwards it may be used again (it starts empty), or
 *     its memory freed (it is off the list of vs_kmem_cache_next())
 *
 * Flushes RCU-deferred frees first (vs_rcu_barrier()).
 * Context: no other thread uses @c; not inside a read-side section.
 * Return: 0, or -EBUSY (and nothing freed) while objects are still out.
 */
VS_EXTERN int vs_kmem_cache_destroy(struct vs_kmem_cache *c);

#endif /* VMSIM_SLAB_H */
