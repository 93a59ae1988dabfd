/* SPDX-License-Identifier: MIT */
/*
 * sync/internal.h - shared inside the library only (sync/, and the
 * planted-bug switch and vs__die for vm/ and fault/), with what sync/
 * uses of the engine beneath it (vcpu/client.h).
 */
#ifndef VS_SYNC_INTERNAL_H
#define VS_SYNC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <vmsim/atomic.h>
#include <vmsim/vcpu_annotate.h>

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
#define VS__PER_CONTEXT(type, name) type name[VS__VCPU_CONTEXTS + 1]
#define VS__THIS(name) (name[vs__vcpu_cur + 1])
#define VS__OF(name, cpu) (name[(cpu) + 1])
#else
#define VS__PER_CONTEXT(type, name) __thread type name
#define VS__THIS(name) (name)
#define VS__OF(name, cpu) ((void)(cpu), name)
#endif

/* The lock registry (sync/lock.c), for lock statistics: point every
 * struct vs_lock at the hooked table (@on) or at its kind's. */
struct vs_lock_ops;
void vs__lock_set_hooks(const struct vs_lock_ops *hooked, int on);

/* lockdep (sync/lockdep.c): context @ctx (-1: the calling thread) ends,
 * or is dropped where it stood (@abandoned): it must hold no lock unless
 * abandoned; it holds none after. */
void vs__lockdep_context_end(int ctx, int abandoned);

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

#endif /* VS_SYNC_INTERNAL_H */
