/* SPDX-License-Identifier: MIT */
/*
 * vmsim/lockdep.h - lock dependency validation, after the kernel's lockdep
 * (kernel/locking/lockdep.c, Documentation/locking/lockdep-design.rst).
 *
 * Compiled in with -DVS_LOCKDEP=ON (the debug preset); compiled out, every
 * annotation below is empty and a lock costs what it cost before.
 *
 * A lock takes part once it has a class (vs_lockdep_set_class(), or the
 * class name given to vs_lock_init()): all the locks of one role share a
 * class, as every mm's mmap_lock is "mmap_lock".  Each thread (each vCPU
 * context in the vCPU build) keeps the list of the locks it holds.  Every
 * acquisition that waits adds an edge to a graph of classes, from each
 * class held to the one taken; the first edge that closes a cycle is
 * reported with the chain of acquisitions that made each edge, although
 * no deadlock happened.  Also reported:
 *
 *   - a lock taken while another lock of its class and subclass is held
 *     (two of a class held on purpose are told apart by a subclass:
 *     vs_spin_lock_nested(), as the kernel's SINGLE_DEPTH_NESTING);
 *   - the release of a lock not held;
 *   - a thread or vCPU context that ends holding locks, or inside an RCU
 *     read-side section;
 *   - a lock that sleeps (rwsem, mmap_lock), or vs_synchronize_rcu(),
 *     inside an RCU read-side section: only spinlocks and trylocks may
 *     be taken there;
 *   - a seqcount write section entered without the lock that serializes
 *     its writers held for writing (vs_seqcount_set_lock());
 *   - a failed assertion: vs_lockdep_assert_held() and the vm/ ones
 *     built on it (vs_mmap_assert_locked() in vmsim/mm.h).
 *
 * A report is printed on stderr with the locks the thread holds, and the
 * process aborts, unless a report function was set
 * (vs_lockdep_set_report()).  Trylocks add no edge into the lock they
 * take (they cannot wait), as in the kernel; an RCU read-side section is
 * a depth, not an entry of the graph.
 *
 * Locking: the graph has one host mutex, taken only to add an edge; the
 * held lists are per thread (per context), touched by their owner only.
 * Nothing here is async-signal-safe: the one signal handler that takes
 * locks, the userfaultfd backing's SIGBUS handler (vmsim/uffd.h), runs
 * on a real access, never inside lockdep.  Natively, a thread's end is
 * seen only for a thread attached to vmsim (vs_thread_attach()); in the
 * vCPU build, host threads other than the machine's share one list.
 */
#ifndef VS_SYNC_LOCKDEP_H
#define VS_SYNC_LOCKDEP_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include <vmsim/config.h>

/** VS_LOCKDEP_CLASS_MAX - lock classes lockdep can tell apart */
#define VS_LOCKDEP_CLASS_MAX 64
/** VS_LOCKDEP_SUBCLASS_MAX - subclasses of one class (0 is the default) */
#define VS_LOCKDEP_SUBCLASS_MAX 4
/** VS_SINGLE_DEPTH_NESTING - the subclass of the second lock of a class
 * held on purpose (the kernel's SINGLE_DEPTH_NESTING) */
#define VS_SINGLE_DEPTH_NESTING 1
/** VS_LOCKDEP_DEPTH - locks one thread can hold at once */
#define VS_LOCKDEP_DEPTH 48

/**
 * vs_lockdep_set_report - where reports go
 * @fn: called with the report's text (lines, no trailing newline) and
 *      @arg; NULL: print on stderr and abort (the default)
 * @arg: passed to @fn
 *
 * With @fn set, lockdep goes on after a report: the edge that would close
 * a cycle is not added, the release of a lock not held is ignored.  For
 * tests of lockdep itself.  Compiled out, nothing is ever reported.
 *
 * Context: any thread, while no other thread locks.
 */
VS_EXTERN void vs_lockdep_set_report(void (*fn)(const char *report,
						void *arg), void *arg);

/**
 * vs_lockdep_reset - forget every edge of the graph (classes stay)
 *
 * Context: no thread holds a lock with a class.
 */
VS_EXTERN void vs_lockdep_reset(void);

/**
 * vs_lockdep_class - the class called @name, made on first use
 * @name: the class name, 1 to 40 bytes
 *
 * Context: any thread; takes the graph's mutex.
 * Return: the class number, 1 and up; -EINVAL for a NULL, empty or too
 * long @name; -ENOSPC when VS_LOCKDEP_CLASS_MAX classes exist; -ENOSYS
 * when lockdep is compiled out.
 */
VS_EXTERN int vs_lockdep_class(const char *name);

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
 *
 * Present in each lock only when VS_LOCKDEP is on; zeroed, it is a lock
 * without a class.
 */
struct vs_lockdep_map {
	int class;
	const void *assoc;
};

#define VS__LD_READ 1	/* a shared acquisition */
#define VS__LD_TRY 2	/* a trylock that succeeded: no edge into it */
#define VS__LD_SLEEP 4	/* the lock may sleep: not inside RCU */
#define VS__LD_SEQ 8	/* a seqcount write section: never waits, so
			 * like a trylock, no edge into it */

/* Private: the annotations' calls.  @inst is the lock's address, what
 * the held list and the assertions know it by; @ip where it was taken:
 * VS__LD_IP, the return address of the function that takes the lock
 * (in an inline lock call, of the function it is inlined in, so that
 * vs_mmap_read_lock()'s caller is named, not vs_mmap_read_lock()). */
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
VS_EXTERN void vs__lockdep_assert_failed(const char *what, const char *file,
					 int line, const char *func);
VS_EXTERN void vs__lockdep_context_end(int ctx, int abandoned);

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

#endif /* VS_SYNC_LOCKDEP_H */
