/* SPDX-License-Identifier: MIT */
/*
 * sync/lockstat.h - lock statistics and trace hooks, after the kernel's
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
 * on.  A bounce is an acquisition by a different thread slot than the
 * previous acquisition of the same lock: the lock's cache line moved.
 */
#ifndef VS_SYNC_LOCKSTAT_H
#define VS_SYNC_LOCKSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "atomic.h"
#include "common.h"
#include "thread.h"

enum vs_lock_side { VS_LOCK_READ = 0, VS_LOCK_WRITE = 1 };

#define VS_LOCK_CLASS_NAME_MAX 40
#define VS_LOCK_CLASS_MAX 32

/* One class, one side, summed over threads. */
struct vs_lockstat {
	uint64_t con_bounces;
	uint64_t contentions;
	uint64_t waittime_min, waittime_max, waittime_total;
	uint64_t acq_bounces;
	uint64_t acquisitions;
	uint64_t holdtime_min, holdtime_max, holdtime_total;
	uint64_t holdtime_nr; /* holdtime samples */
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

struct vs_lock_class {
	char name[VS_LOCK_CLASS_NAME_MAX + 1];
	struct vs__lockstat_slot stat[2][VS_SLOT_ARRAY]; /* private */
};

struct vs_lock;

/**
 * struct vs_lock_trace - trace hooks, named after the mmap_lock
 * tracepoints.  Called on the locking thread; must not take @lock.
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
 * Return: the class (lives until exit), or NULL when @name is NULL,
 * empty, longer than VS_LOCK_CLASS_NAME_MAX, or the table is full.
 */
VS_EXTERN struct vs_lock_class *vs_lock_class_get(const char *name);

/* vs_lockstat_enable - switch statistics on (@on != 0) or off. */
VS_EXTERN void vs_lockstat_enable(int on);
VS_EXTERN int vs_lockstat_enabled(void);

/* vs_lockstat_reset - zero every class.  Context: no lock held. */
VS_EXTERN void vs_lockstat_reset(void);

/**
 * vs_lockstat_read - sum the statistics of @class, side @side
 * Return: 0, or -EINVAL for a NULL argument or a bad side.
 */
VS_EXTERN int vs_lockstat_read(const struct vs_lock_class *class,
			       enum vs_lock_side side,
			       struct vs_lockstat *out);

/**
 * vs_lockstat_print - write every class in /proc/lock_stat's layout
 * Return: 0, -EINVAL for a NULL stream, or -EIO on a write error.
 */
VS_EXTERN int vs_lockstat_print(FILE *out);

/**
 * vs_lock_trace_set - install trace hooks, or remove them with NULL
 *
 * The structure is copied.  Context: no thread is inside a hook.
 */
VS_EXTERN void vs_lock_trace_set(const struct vs_lock_trace *trace);

#endif /* VS_SYNC_LOCKSTAT_H */
