/* SPDX-License-Identifier: MIT */
/*
 * sync/vcpu_internal.h - the engine's state, shared by sync/vcpu.c (the
 * machine, the scheduler, blocking) and sync/rcu_vcpu.c (RCU on vCPUs).
 * Private to sync/.
 *
 * The engine's own state is touched by one host thread, between events,
 * with plain accesses: never through sync/atomic.h, whose operations
 * are events themselves in the vCPU build.
 */
#ifndef VS_SYNC_VCPU_INTERNAL_H
#define VS_SYNC_VCPU_INTERNAL_H

#include <stdint.h>

#include "atomic.h"
#include "vcpu.h"

/* Daemon vCPUs beyond the N of the configuration (RCU callbacks). */
#define VS__VCPU_DAEMONS 1

enum vs__vstate {
	VS__V_IDLE,	/* no work */
	VS__V_RUNNABLE,	/* in the heap, waiting to run */
	VS__V_RUNNING,	/* the one running now */
	VS__V_BLOCKED,	/* on a futex queue (in the heap too with a deadline) */
};

struct vs__vcpu {
	void *sp;			/* saved stack pointer */
	char *map;			/* the mmap of the stack and its guard */
	size_t map_len;
	char *stack_lo;			/* usable stack [stack_lo, +stack_len) */
	size_t stack_len;
	unsigned int id;
	int daemon;
	enum vs__vstate state;
	uint64_t clock;			/* virtual cycles */
	uint64_t tiebreak;		/* drawn when queued */
	int heap_idx;			/* -1: not in the heap */
	void (*fn)(void *);
	void *arg;
	uint32_t gen;			/* bumped when work ends (joins) */
	/* a futex sleep */
	const volatile void *wait_word;
	struct vs__vcpu *wait_next;
	uint64_t deadline;		/* UINT64_MAX: none */
	int wait_ret;
	struct vs_machine_stats st;
	void *asan_fake;		/* ASan's fake stack while away */
};

#define VS__FQ_BUCKETS 1024

struct vs_machine {
	struct vs_machine_config cfg;
	unsigned int nr;		/* vCPUs of the configuration */
	unsigned int nr_all;		/* with the daemons */
	struct vs__vcpu *v;
	struct vs__vcpu *cur;		/* running, NULL on the host */
	void *host_sp;			/* the host context of vs_machine_run() */
	void *host_asan_fake;
	const void *host_stack_lo;	/* for ASan */
	size_t host_stack_len;
	int running;			/* inside run or enter */
	int entered;			/* vs_machine_enter(): vCPU 0 is the host */
	int done;			/* every vCPU with work finished */
	int deadlocked;
	unsigned int nr_busy;		/* non-daemon vCPUs with work */
	uint32_t busy_word;		/* waited on by vs_machine_leave() */
	struct vs__vcpu **heap;
	unsigned int heap_n;
	uint64_t rng;
	uint64_t hash;
	double ghz;
	struct vs_vcpu_profile profile;	/* a copy; valid with @coh */
	struct vs_coherence *coh;	/* NULL: every access costs 1 */
	struct vs__vcpu *fq[VS__FQ_BUCKETS];	/* futex queues, FIFO */
	void *sched;			/* the scheduler's state */
	void *rcu;			/* sync/rcu_vcpu.c's state */
	void (*rcu_destroy)(struct vs_machine *m);
	char report[8192];
};

/* The machine and vCPU the host thread is running now. */
extern struct vs_machine *vs__vcpu_machine;
/* The running vCPU's number, -1 on the host (sync/common.h's TLS). */
extern int vs__vcpu_cur;

/* Spawn a daemon vCPU (not waited for, not a deadlock when blocked). */
int vs__machine_spawn_daemon(struct vs_machine *m, void (*fn)(void *),
			     void *arg);

/* Block the running vCPU on @word (no value check); wake with
 * vs__vcpu_futex_wake().  Return: 0, or -ETIMEDOUT. */
int vs__vcpu_block(const volatile void *word, int64_t timeout_ns);

#endif /* VS_SYNC_VCPU_INTERNAL_H */
