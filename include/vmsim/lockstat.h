/* SPDX-License-Identifier: MIT */
/*
 * vmsim/lockstat.h - lock statistics and trace hooks, after the kernel's
 * CONFIG_LOCK_STAT (Documentation/locking/lockstat.rst) and the
 * mmap_lock tracepoints (start_locking, acquire_returned, released).
 *
 * Statistics are kept per lock class (a name such as "mmap_lock" shared
 * by every lock of that role) and per side, R and W.  They and the trace
 * hooks are switched on at run time; while both are off, locks call their
 * kind directly and pay nothing for them (see struct vs_lock).
 *
 * Times are nanoseconds here and microseconds in vs_lockstat_print(), as
 * in /proc/lock_stat.  Waittime is measured for contended acquisitions
 * only (an acquisition is contended when the lock could not be taken at
 * once); holdtime for every acquisition released while statistics were
 * on, from the return of the lock call to the return of the unlock (or
 * of the downgrade, which ends a write hold and starts a read hold).  A bounce is an acquisition by a different thread slot than the
 * previous acquisition of the same lock: the lock's cache line moved.
 */
#ifndef VMSIM_LOCKSTAT_H
#define VMSIM_LOCKSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "atomic.h"
#include "common.h"
#include "thread.h"

/**
 * enum vs_lock_side - which side of a lock a statistic is about
 * @VS_LOCK_READ: shared acquisitions (the R lines)
 * @VS_LOCK_WRITE: exclusive acquisitions (the W lines)
 */
enum vs_lock_side { VS_LOCK_READ = 0, VS_LOCK_WRITE = 1 };

#define VS_LOCK_CLASS_NAME_MAX 40	/* longest class name, in bytes */
#define VS_LOCK_CLASS_MAX 32	/* classes that can exist */

/**
 * struct vs_lockstat - the statistics of one class and side, summed over
 * threads (a line of /proc/lock_stat)
 * @con_bounces: contended acquisitions that were also bounces
 * @contentions: acquisitions that could not take the lock at once
 * @waittime_min: shortest wait of a contended acquisition, ns (0: none)
 * @waittime_max: longest wait, ns
 * @waittime_total: all waits, ns
 * @acq_bounces: acquisitions by another thread slot than the previous
 *               acquisition of the same lock
 * @acquisitions: acquisitions, contended or not
 * @holdtime_min: shortest hold, ns (0: none)
 * @holdtime_max: longest hold, ns
 * @holdtime_total: all holds, ns
 * @holdtime_nr: holds measured (acquired and released while statistics
 *               were on)
 */
struct vs_lockstat {
	uint64_t con_bounces;
	uint64_t contentions;
	uint64_t waittime_min, waittime_max, waittime_total;
	uint64_t acq_bounces;
	uint64_t acquisitions;
	uint64_t holdtime_min, holdtime_max, holdtime_total;
	uint64_t holdtime_nr;
};

struct vs__lockstat_slot {
	VS_CACHELINE_ALIGNED vs_atomic64_t con_bounces;
	vs_atomic64_t contentions;
	vs_atomic64_t waittime_min, waittime_max, waittime_total;
	vs_atomic64_t acq_bounces;
	vs_atomic64_t acquisitions;
	vs_atomic64_t holdtime_min, holdtime_max, holdtime_total;
	vs_atomic64_t holdtime_nr;
};

/**
 * struct vs_lock_class - a lock class: the locks of one role
 * @name: the class name (read-only)
 * @stat: per side and thread slot counters; read them with
 *        vs_lockstat_read()
 *
 * Made by vs_lock_class_get(); lives until the process exits.
 */
struct vs_lock_class {
	char name[VS_LOCK_CLASS_NAME_MAX + 1];
	struct vs__lockstat_slot stat[2][VS_SLOT_ARRAY]; /* private */
};

struct vs_lock;

/**
 * struct vs_lock_trace - trace hooks, named after the mmap_lock
 * tracepoints
 * @start_locking: before a lock or trylock call (@write: the write side)
 * @acquire_returned: after it, with @success (always true for a lock
 *                    call); a downgrade reports a read acquisition,
 *                    after the downgrade
 * @released: after the unlock has returned: the lock is no longer held
 *            by this thread, and another thread may hold it already
 * @arg: passed to every hook
 *
 * Every hook is optional (NULL) and is called on the locking thread of
 * every lock that has a class or not; it must not lock or unlock @lock
 * through the vs_lock_*() calls, which would call the hooks again.
 */
struct vs_lock_trace {
	void (*start_locking)(struct vs_lock *lock, bool write, void *arg);
	void (*acquire_returned)(struct vs_lock *lock, bool write,
				 bool success, void *arg);
	void (*released)(struct vs_lock *lock, bool write, void *arg);
	void *arg;
};

/**
 * vs_lock_class_get - find or create the class called @name
 * @name: the class name
 *
 * Context: any thread; takes the class table's spinlock.
 * Return: the class (lives until exit), or NULL when @name is NULL,
 * empty, longer than VS_LOCK_CLASS_NAME_MAX, or the table is full.
 */
VS_EXTERN struct vs_lock_class *vs_lock_class_get(const char *name);

/**
 * vs_lockstat_enable - switch statistics on or off
 * @on: nonzero for on
 *
 * Points every lock at the hooked operations (or, with statistics and
 * trace hooks both off, back at its kind's).  A hold that began before
 * statistics were switched on is not measured.
 *
 * Context: any thread; takes the lock registry's spinlock.  Other
 * threads may be locking meanwhile.
 */
VS_EXTERN void vs_lockstat_enable(int on);

/**
 * vs_lockstat_track_held - record which locks each thread holds, and
 * nothing else, or stop
 * @on: nonzero for on
 *
 * What deadlock and failure reports list as "holds" (vmsim/vcpu.h),
 * without statistics: with statistics on, a lock is first tried, as the
 * kernel's lock_stat does (LOCK_CONTENDED), which would change the path
 * a lock under test takes; tracking alone keeps the kind's own path, as
 * lockdep's held-lock list does.  Statistics, when on, track holds too.
 *
 * Context: as vs_lockstat_enable().
 * Return: the setting before (0 or 1), to put back.
 */
VS_EXTERN int vs_lockstat_track_held(int on);

/**
 * vs_lockstat_tracking_held - are held locks recorded (by
 * vs_lockstat_track_held() or statistics)?
 *
 * Context: any.
 * Return: 1 when they are, 0 when not.
 */
VS_EXTERN int vs_lockstat_tracking_held(void);

/**
 * vs_lockstat_enabled - are statistics on?
 *
 * Context: any.
 * Return: 1 when on, 0 when off.
 */
VS_EXTERN int vs_lockstat_enabled(void);

/**
 * vs_lockstat_reset - zero the statistics of every class
 *
 * Context: the calling thread holds no lock with a class.
 */
VS_EXTERN void vs_lockstat_reset(void);

/**
 * vs_lockstat_read - sum the statistics of @class, side @side
 * @class: the class
 * @side: VS_LOCK_READ or VS_LOCK_WRITE
 * @out: receives the sums
 *
 * Context: any; a snapshot while locks of @class are in use.
 * Return: 0, or -EINVAL for a NULL argument or a bad side.
 */
VS_EXTERN int vs_lockstat_read(const struct vs_lock_class *class,
			       enum vs_lock_side side,
			       struct vs_lockstat *out);

/**
 * vs_lockstat_print - write every class in /proc/lock_stat's layout
 * @out: the stream
 *
 * Context: any thread; a snapshot while locks are in use.
 * Return: 0, -EINVAL for a NULL stream, or -EIO on a write error.
 */
VS_EXTERN int vs_lockstat_print(FILE *out);

/**
 * vs_lock_trace_set - install trace hooks, or remove them with NULL
 * @trace: the hooks (copied), or NULL
 *
 * Context: any thread; takes the lock registry's spinlock.  No thread is
 * inside a hook.
 */
VS_EXTERN void vs_lock_trace_set(const struct vs_lock_trace *trace);

#endif /* VMSIM_LOCKSTAT_H */
