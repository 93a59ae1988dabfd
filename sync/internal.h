/* SPDX-License-Identifier: MIT */
/*
 * sync/internal.h - shared inside the library only (sync/, and the
 * planted-bug switch and vs__die for vm/ and fault/).
 */
#ifndef VS_SYNC_INTERNAL_H
#define VS_SYNC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <vmsim/atomic.h>
#include <vmsim/vcpu.h>

#include "broken.h"

/* Print "vmsim: @what: strerror(@err)" and abort: an impossible failure. */
_Noreturn void vs__die(const char *what, int err);

/*
 * State that is per thread natively and per vCPU in the vCPU build,
 * where every vCPU runs on the one host thread:
 *
 *	static VS__PER_CONTEXT(int, depth_);	a definition
 *	VS__THIS(depth_)++;			the caller's instance
 *	VS__OF(depth_, cpu)			vCPU @cpu's (-1: the host's)
 *
 * (VS__OF() is only meaningful in the vCPU build; natively it is the
 * caller's own.)
 */
#if VS_VCPU
#define VS__PER_CONTEXT(type, name) type name[VS_VCPU_MAX + 2]
#define VS__THIS(name) (name[vs__vcpu_cur + 1])
#define VS__OF(name, cpu) (name[(cpu) + 1])
#else
#define VS__PER_CONTEXT(type, name) __thread type name
#define VS__THIS(name) (name)
#define VS__OF(name, cpu) ((void)(cpu), name)
#endif

/* The lock whose implementation or struct vs_lock holds @a, as
 * "class+offset" in @buf; 0 when none (or the registry is busy).
 * Context: the host, or a report with the machine's events off. */
int vs__lock_name_of(uintptr_t a, char *buf, size_t len);
/* Name the static object [@addr, +@len) @name, a string that lives as
 * long as the process, in the reports of every machine (vmsim/vcpu.h);
 * with @quiet, its events are bookkeeping that reports leave out. */
void vs__vcpu_name_static(const void *addr, size_t len, const char *name,
			  int quiet);
/* The held locks of vCPU @cpu (natively: of the caller), as text. */
size_t vs__lockstat_held_of(int cpu, char *buf, size_t len);
/* Forget the locks vCPU @cpu holds: its context was dropped. */
void vs__lockstat_forget(int cpu);

/* Monotonic clock in nanoseconds: virtual time on a vCPU. */
static inline uint64_t vs__now_ns(void)
{
	struct timespec ts;

	if (VS_VCPU && vs__vcpu_cur >= 0)
		return vs_vcpu_now_ns();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Around a futex sleep under urcu-qsbr: put an online, registered thread
 * offline (returns 1) and back online afterwards.  No-ops under memb.
 */
int vs__rcu_sleep_begin(void);
void vs__rcu_sleep_end(void);

/* RCU's flavour (sync/rcu.c or sync/rcu_vcpu.c) to sync/rcu_free.c:
 * wait for the callbacks queued so far; count one queued. */
void vs__rcu_barrier_callbacks(void);
void vs__rcu_count_callback(void);

/*
 * After a machine's run failed or deadlocked (its contexts are abandoned
 * where they stood and never run again): free the locks of sync/'s
 * statics they may have held, the lock registry's, lockstat's class
 * table's and the vCPUs' vs_free_rcu() batch slots', whose batches go
 * back to the spare list unrun (their objects are the dead run's: lost).
 * Context: the host thread, no machine running, no other thread in
 * sync/.  vs_machine_run() calls the three.
 */
void vs__rcu_free_abandon(void);
void vs__lock_registry_abandon(void);
void vs__lockstat_abandon(void);

#endif /* VS_SYNC_INTERNAL_H */
