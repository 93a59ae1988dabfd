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
 *   - what may sleep (vs_synchronize_rcu(), an mmu notifier call, a
 *     blocking vs_alloc_page()) under a spinlock (a vs_spinlock_t,
 *     unless vs_lockdep_set_sleeping() made it a mutex);
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
#ifndef VMSIM_LOCKDEP_H
#define VMSIM_LOCKDEP_H

#include "common.h"
#include "lockdep_annotate.h"

/** VS_LOCKDEP_CLASS_MAX - lock classes lockdep can tell apart */
#define VS_LOCKDEP_CLASS_MAX 64
/** VS_LOCKDEP_SUBCLASS_MAX - subclasses of one class (0 is the default) */
#define VS_LOCKDEP_SUBCLASS_MAX 4
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

#endif /* VMSIM_LOCKDEP_H */
