/* SPDX-License-Identifier: MIT */
/*
 * vmsim/lockdep_annotate.h - what lock code tells lockdep
 * (vmsim/lockdep.h): the map a lock carries, its acquisitions and
 * releases, and the locking rules asserted where they apply.
 *
 * Compiled in with -DVS_LOCKDEP=ON (vmsim/config.h); compiled out,
 * every annotation below is empty and a lock costs what it cost before.
 * The locks' headers include this one; a user's own lock kind or fault
 * strategy uses it the same way.
 */
#ifndef VMSIM_LOCKDEP_ANNOTATE_H
#define VMSIM_LOCKDEP_ANNOTATE_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include <vmsim/config.h>

/** VS_SINGLE_DEPTH_NESTING - the subclass of the second lock of a class
 * held on purpose (the kernel's SINGLE_DEPTH_NESTING) */
#define VS_SINGLE_DEPTH_NESTING 1

/* Private, for assertions (defined only when lockdep is compiled in):
 * does this thread hold @inst (for writing, with @write)?  How deep in
 * RCU read-side sections is it? */
VS_EXTERN int vs__lockdep_held(const void *inst, int write);
VS_EXTERN int vs__lockdep_rcu_depth(void);

#if VS_LOCKDEP

/**
 * struct vs_lockdep_map - what a lock carries for lockdep
 * @class: its class number; 0: the lock takes no part
 * @assoc: seqcounts only: the lock that writers hold for writing
 * @sleeps: a vs_spinlock_t used as a mutex: its holder may sleep
 *	(vs_lockdep_set_sleeping())
 *
 * Present in each lock only when VS_LOCKDEP is on; zeroed, it is a lock
 * without a class.
 */
struct vs_lockdep_map {
	int class;
	const void *assoc;
	int sleeps;
};

#define VS__LD_READ 1	/* a shared acquisition */
#define VS__LD_TRY 2	/* a trylock that succeeded: no edge into it */
#define VS__LD_SLEEP 4	/* the lock may sleep: not inside RCU */
#define VS__LD_SEQ 8	/* a seqcount write section: never waits, so
			 * like a trylock, no edge into it */
#define VS__LD_ATOMIC 16 /* a spinlock: its holder must not sleep
			  * (vs__lockdep_might_sleep()), unless its map
			  * says @sleeps */

/* Private: the annotations' calls.  @inst is the lock's address, what
 * the held list and the assertions know it by; @ip where it was taken:
 * VS__LD_IP, the return address of the function that takes the lock
 * (in an inline lock call, of the function it is inlined in, so that
 * vs_mmap_read_lock()'s caller is named, not vs_mmap_read_lock()).
 * vs__lockdep_might_sleep(@what): @what may sleep, so it is reported
 * inside an RCU read-side section or under a spinlock (6.18's
 * might_sleep()); vs__lockdep_might_alloc(@what): a blocking page
 * allocation, reported under a spinlock (6.18's might_alloc()) but not
 * inside an RCU section, where the model's speculative fault
 * allocates. */
#define VS__LD_IP __builtin_return_address(0)
VS_EXTERN void vs__lockdep_set_class(struct vs_lockdep_map *map,
				     const char *name);
VS_EXTERN void vs__lockdep_acquire(const struct vs_lockdep_map *map,
				   const void *inst, int subclass, int flags,
				   const void *ip);
VS_EXTERN void vs__lockdep_release(const struct vs_lockdep_map *map,
				   const void *inst);
VS_EXTERN void vs__lockdep_downgrade(const struct vs_lockdep_map *map,
				     const void *inst);
VS_EXTERN void vs__lockdep_seq_begin(const struct vs_lockdep_map *map,
				     const void *inst);
VS_EXTERN void vs__lockdep_rcu(int delta);
VS_EXTERN void vs__lockdep_might_sleep(const char *what);
VS_EXTERN void vs__lockdep_might_alloc(const char *what);
VS_EXTERN void vs__lockdep_assert_failed(const char *what, const char *file,
					 int line, const char *func);

#define VS__LD_MAP struct vs_lockdep_map dep_map;
#define VS__LD(call) call
#define VS__LD_ASSERT(cond, what) \
	((cond) ? (void)0 : \
	 vs__lockdep_assert_failed((what), __FILE__, __LINE__, __func__))

#else /* !VS_LOCKDEP: nothing is evaluated, nothing is kept */

#define VS__LD_MAP
#define VS__LD(call) ((void)0)
#define VS__LD_ASSERT(cond, what) ((void)sizeof(!(cond)))

#endif /* VS_LOCKDEP */

/**
 * vs_lockdep_set_class - give @lock the lockdep class @name
 * @lock: a vs_spinlock_t, struct vs_rwsem or vs_seqcount_t, set up and
 *        not yet shared
 * @name: the class name (see vs_lockdep_class()); a bad one aborts
 *
 * Compiled out without lockdep.
 */
#define vs_lockdep_set_class(lock, name) \
	VS__LD(vs__lockdep_set_class(&(lock)->dep_map, (name)))

/**
 * vs_lockdep_set_sleeping - tell lockdep that @lock's holder may sleep
 * @lock: a vs_spinlock_t used as a mutex (a uffd region's inv_mutex)
 *
 * Lockdep takes a vs_spinlock_t for a spinlock in the kernel's sense,
 * whose holder must not sleep (vs__lockdep_might_sleep()), unless it is
 * told this.  Context: before @lock is shared.  Compiled out without
 * lockdep.
 */
#define vs_lockdep_set_sleeping(lock) VS__LD((lock)->dep_map.sleeps = 1)

/**
 * vs_lockdep_assert - report @what at this line unless @cond holds
 * @cond: the rule; evaluated only when lockdep is compiled in
 * @what: the rule, in words
 */
#define vs_lockdep_assert(cond, what) VS__LD_ASSERT(cond, what)

/**
 * vs_lockdep_assert_held - the caller holds the lock at @inst
 * @inst: the lock's address
 */
#define vs_lockdep_assert_held(inst) \
	vs_lockdep_assert(vs__lockdep_held((inst), 0), #inst " held")

/**
 * vs_lockdep_assert_held_write - the caller holds the lock at @inst for
 * writing (exclusively)
 * @inst: the lock's address
 */
#define vs_lockdep_assert_held_write(inst) \
	vs_lockdep_assert(vs__lockdep_held((inst), 1), \
			  #inst " held for writing")

/**
 * vs_lockdep_assert_not_held - the caller does not hold the lock at @inst
 * @inst: the lock's address
 */
#define vs_lockdep_assert_not_held(inst) \
	vs_lockdep_assert(!vs__lockdep_held((inst), 0), #inst " not held")

/**
 * vs_rcu_lockdep_assert - the caller is inside an RCU read-side section
 */
#define vs_rcu_lockdep_assert() \
	vs_lockdep_assert(vs__lockdep_rcu_depth() > 0, \
			  "inside an RCU read-side section")

#endif /* VMSIM_LOCKDEP_ANNOTATE_H */
