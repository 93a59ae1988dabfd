/* SPDX-License-Identifier: MIT */
/*
 * sync/vcpu.h - virtual CPUs: vmsim's own code on N simulated CPUs,
 * run one at a time by one host thread, in virtual time.
 *
 * A machine has N vCPUs, each a user-level context with its own stack
 * (mmap'd, with a guard page below it).  In the vCPU build of the
 * library (libvmsim-vcpu, compiled with VS_VCPU=1) every operation of
 * sync/atomic.h is an event: before it runs, the engine charges the
 * running vCPU what the access costs (sync/vcpu_cost.h, from the
 * machine's profile) and then runs whichever runnable vCPU is earliest
 * in virtual time, so that shared memory is touched in virtual-time
 * order.  The futex calls of sync/wait.h block and wake vCPUs in
 * virtual time; RCU has its own grace periods (sync/rcu.c); the thread
 * slot of a vCPU is its number.  Nothing depends on host timing or on
 * absolute addresses: the same configuration and seed give the same
 * events, bit for bit (vs_machine_hash()).
 *
 * Which vCPU runs at each event is the scheduler's choice
 * (struct vs_vcpu_sched_ops): by default the earliest clock, ties
 * broken by a PRNG seeded from the configuration.
 *
 * In the native build the engine still exists (tests of the engine
 * itself), but the seams do not call it.
 *
 * Locking: a machine belongs to the host thread that runs it; none of
 * these functions may be called from another host thread meanwhile.
 */
#ifndef VS_SYNC_VCPU_H
#define VS_SYNC_VCPU_H

#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "common.h"
#include "vcpu_profile.h"

struct vs_machine;
struct vs_coherence;

/**
 * struct vs_vcpu_sched_ops - who runs next
 * @name: for messages
 * @init: make the scheduler's state for a machine of @nr vCPUs
 *        seeded by @seed; 0 or a negative errno
 * @pick: at an event of the running vCPU @cur (or -1 when it just
 *        blocked or finished), return the runnable vCPU to run next;
 *        vs_machine_runnable() and vs_machine_clock() tell it what
 *        may run and when
 * @fini: free the state
 *
 * A NULL ops pointer means the engine's own: the earliest clock, ties
 * broken by the seeded PRNG.
 */
struct vs_vcpu_sched_ops {
	const char *name;
	int (*init)(void **state, unsigned int nr, uint64_t seed);
	int (*pick)(void *state, struct vs_machine *m, int cur);
	void (*fini)(void *state);
};

/**
 * struct vs_machine_config - vs_machine_create() settings
 * @profile: the machine's costs (copied); NULL: every access costs 1
 *           cycle at 1 GHz, with no coherence model
 * @nr_vcpus: 1..VS_VCPU_MAX, and at most the profile's CPUs (vCPU i is
 *            CPU i of the profile, as Linux numbers it)
 * @seed: the PRNG seed (tie-breaks, the scheduler's choices)
 * @stack_size: bytes per vCPU stack, 0 for 256 KiB
 * @sched: the scheduler, NULL for the earliest clock
 * @flags: 0, or VS_MACHINE_NO_TRAPS
 */
struct vs_machine_config {
	const struct vs_vcpu_profile *profile;
	unsigned int nr_vcpus;
	uint64_t seed;
	size_t stack_size;
	const struct vs_vcpu_sched_ops *sched;
	unsigned int flags;
};

/**
 * VS_MACHINE_NO_TRAPS - vs_machine_config.flags: the simulated faults
 * and VM calls take no trap or system call (charge VS_VCPU_FAULT and
 * VS_VCPU_SYSCALL nothing), as when vmsim runs as a library on real
 * threads; futex calls still pay theirs.
 */
#define VS_MACHINE_NO_TRAPS 0x1u

/**
 * vs_machine_create - a machine of idle vCPUs
 * @mp: receives the machine
 * @cfg: its settings
 *
 * Context: a host thread, not inside a machine.
 * Return: 0; -EINVAL for a NULL argument or a vCPU count out of range;
 * -ENOMEM.
 */
VS_EXTERN int vs_machine_create(struct vs_machine **mp,
				const struct vs_machine_config *cfg);

/**
 * vs_machine_destroy - free @m
 * @m: the machine, not running
 *
 * Context: the host thread that created it, outside vs_machine_run().
 * Return: 0, -EINVAL for NULL, -EBUSY while it runs.
 */
VS_EXTERN int vs_machine_destroy(struct vs_machine *m);

/**
 * vs_machine_run - run @fn(@arg) on vCPU 0 of @m until every vCPU is
 * idle again
 * @m: the machine
 * @fn: the work; it may spawn work on other vCPUs
 * @arg: its argument
 *
 * When every vCPU that has work is blocked with no timeout pending,
 * the run stops: the report (vs_machine_report()) says, for each vCPU,
 * the word it sleeps on and the locks it holds, and the function
 * returns -EDEADLK.  It never hangs on a deadlock.
 *
 * Context: the host thread that created @m, not inside a machine.
 * Return: 0, -EDEADLK, -EINVAL for a NULL argument, -EBUSY when @m
 * already runs.
 */
VS_EXTERN int vs_machine_run(struct vs_machine *m, void (*fn)(void *),
			     void *arg);

/**
 * vs_machine_enter - make the calling host thread vCPU 0 of @m
 * @m: the machine, idle
 *
 * For code that cannot be moved onto a vCPU stack (a Check test body):
 * from here on the caller is scheduled like any vCPU, until
 * vs_machine_leave().  A deadlock inside prints the report and aborts
 * the process: there is no host context to return to.
 *
 * Context: the host thread that created @m, not inside a machine.
 * Return: 0, -EINVAL, -EBUSY.
 */
VS_EXTERN int vs_machine_enter(struct vs_machine *m);

/**
 * vs_machine_leave - wait until every other vCPU is idle, then stop
 * being vCPU 0
 * @m: the machine entered with vs_machine_enter()
 *
 * Context: vCPU 0 of @m, entered.
 * Return: 0, -EINVAL when the caller is not vCPU 0 of an entered @m.
 */
VS_EXTERN int vs_machine_leave(struct vs_machine *m);

/**
 * vs_machine_spawn - start @fn(@arg) on vCPU @cpu
 * @m: the machine
 * @cpu: the vCPU, 0..nr_vcpus-1
 * @fn: the work; returning ends it
 * @arg: its argument
 *
 * The work runs on a context of its own, bound to @cpu, from the
 * spawner's virtual time on.  A vCPU runs one context at a time: the
 * others bound to it wait (FIFO) until it blocks, ends, or has run a
 * time slice while they waited, and each handover costs the profile's
 * context switch.  So there may be more pieces of work than vCPUs, as
 * threads than CPUs.
 * Context: a vCPU of @m.
 * Return: the work's id (for vs_machine_join()); -EINVAL for a bad
 * @cpu or NULL @fn; -EAGAIN when VS_VCPU_MAX pieces of work are under
 * way; -ENOMEM.
 */
VS_EXTERN int vs_machine_spawn(struct vs_machine *m, unsigned int cpu,
			       void (*fn)(void *), void *arg);

/**
 * vs_machine_join - wait until work @work has ended
 * @m: the machine
 * @work: what vs_machine_spawn() returned
 *
 * Context: a vCPU of @m, other work than @work.
 * Return: 0, or -EINVAL for a bad @work.
 */
VS_EXTERN int vs_machine_join(struct vs_machine *m, unsigned int work);

/**
 * vs_machine_pick_vcpu - the vCPU with the least unfinished work
 * (the lowest-numbered among equals): where a new thread would go
 * @m: the machine
 *
 * Context: a vCPU of @m.
 * Return: its number, or -EINVAL for NULL.
 */
VS_EXTERN int vs_machine_pick_vcpu(struct vs_machine *m);

/**
 * enum vs_vcpu_work - work the model does outside the seams, charged
 * from the machine's profile
 * @VS_VCPU_CLEAR: clearing @bytes (a page): the core's bandwidth, the
 *                 socket's memory bandwidth shared with the other
 *                 vCPUs clearing at that moment
 * @VS_VCPU_COPY: copying @bytes
 * @VS_VCPU_FAULT: a page fault's entry and exit
 * @VS_VCPU_SYSCALL: a system call's entry and exit
 * @VS_VCPU_WORK_NR: the number of kinds
 */
enum vs_vcpu_work {
	VS_VCPU_CLEAR,
	VS_VCPU_COPY,
	VS_VCPU_FAULT,
	VS_VCPU_SYSCALL,
	VS_VCPU_WORK_NR,
};

/**
 * struct vs_machine_stats - counters of one vCPU, or of the machine
 * @cycles: how far the clocks of the contexts bound to the vCPU advanced
 *	from the virtual time their work started: every cycle charged, and
 *	the time they spent blocked or waiting for the vCPU.  Exactly
 *	@access_cycles + @pause_cycles + the @work_cycles + @futex_cycles +
 *	@switch_cycles + @charge_cycles + @sleep_cycles.  When one context
 *	alone ran on the vCPU from the machine's start, it is the vCPU's
 *	clock (vs_machine_clock()) whenever that context is not running;
 *	contexts sharing a vCPU overlap in virtual time, and their times
 *	add up
 * @events: seam operations
 * @switches: times another vCPU was run instead
 * @transfers: cache-line transfers (perf's cache-misses)
 * @rmws: read-modify-writes
 * @sleeps: futex sleeps
 * @access_cycles: the seams' loads, stores, read-modify-writes and
 *	fences, as the cost model charged them (sync/vcpu_cost.h), line
 *	queue waits included; 1 per event without a profile
 * @pause_cycles: spin-loop pauses (VS_VCPU_RELAX)
 * @work_cycles: vs_vcpu_work() charges, by enum vs_vcpu_work: page
 *	clears, copies, fault entries and exits, system calls
 * @futex_cycles: the system call of a futex sleep, and the futex wake
 *	charged to the waker
 * @switch_cycles: context switches: a context that waited for its vCPU
 *	pays the profile's context switch when it gets the vCPU
 * @charge_cycles: vs_vcpu_charge()
 * @sleep_cycles: virtual time a context spent blocked (a futex sleep to
 *	its wake, the wake latency included, or to its timeout) or waiting
 *	for its vCPU behind another context: the jump of its clock when it
 *	is made runnable later than where it stopped
 */
struct vs_machine_stats {
	uint64_t cycles;
	uint64_t events;
	uint64_t switches;
	uint64_t transfers;
	uint64_t rmws;
	uint64_t sleeps;
	uint64_t access_cycles;
	uint64_t pause_cycles;
	uint64_t work_cycles[VS_VCPU_WORK_NR];
	uint64_t futex_cycles;
	uint64_t switch_cycles;
	uint64_t charge_cycles;
	uint64_t sleep_cycles;
};

/**
 * vs_machine_stats - read the counters of vCPU @cpu (of all the work
 * it ran), or the totals
 * @m: the machine
 * @cpu: a vCPU, or -1 for the sum over all
 * @st: filled in
 *
 * Context: the machine's host thread or one of its vCPUs.
 * Return: 0, -EINVAL.
 */
VS_EXTERN int vs_machine_stats(struct vs_machine *m, int cpu,
			       struct vs_machine_stats *st);

/**
 * vs_machine_hash - a hash of every event so far: which vCPU, what
 * kind of operation, at which virtual time, in order (no address)
 * @m: the machine
 *
 * Two runs with the same configuration, seed and work have the same
 * hash, in any process.
 * Context: as vs_machine_stats().
 * Return: the hash.
 */
VS_EXTERN uint64_t vs_machine_hash(struct vs_machine *m);

/**
 * vs_machine_report - the deadlock report of the last run, or ""
 * @m: the machine
 *
 * Context: as vs_machine_stats().
 * Return: a string owned by @m.
 */
VS_EXTERN const char *vs_machine_report(struct vs_machine *m);

/**
 * vs_machine_runnable - may the context @cpu run now?
 * @m: the machine
 * @cpu: a context: a work id of vs_machine_spawn(), or the engine's
 *
 * For schedulers.
 * Context: inside vs_vcpu_sched_ops.pick.
 * Return: nonzero when @cpu is runnable (the running one included).
 */
VS_EXTERN int vs_machine_runnable(struct vs_machine *m, unsigned int cpu);

/**
 * vs_machine_clock - the virtual time of vCPU @cpu, in cycles
 * @m: the machine
 * @cpu: the vCPU, or -1 for the latest clock of any vCPU
 *
 * Context: as vs_machine_stats().
 * Return: cycles since the machine was created.
 */
VS_EXTERN uint64_t vs_machine_clock(struct vs_machine *m, int cpu);

/**
 * vs_machine_nr_vcpus - the number of vCPUs of @m
 * @m: the machine
 *
 * Context: any.
 * Return: the count.
 */
VS_EXTERN unsigned int vs_machine_nr_vcpus(struct vs_machine *m);

/* ---- for the seams and the code that runs on vCPUs ---------------------- */

/**
 * vs_vcpu_self - the context the caller runs on
 *
 * A context is a piece of work (its id is what vs_machine_spawn()
 * returned; vs_machine_run()'s and vs_machine_enter()'s is 0) or the
 * engine's own daemon: not the vCPU's number, which vs_machine_stats()
 * and the cost model use.
 *
 * Context: any.
 * Return: the context's id, or -1 outside every machine (a host
 * thread).
 */
VS_EXTERN int vs_vcpu_self(void);

/**
 * vs_vcpu_machine - the machine the caller runs on
 *
 * Context: any.
 * Return: the machine, or NULL on a host thread.
 */
VS_EXTERN struct vs_machine *vs_vcpu_machine(void);

/**
 * vs_vcpu_now_ns - virtual nanoseconds of the calling vCPU
 *
 * Context: a vCPU.
 * Return: its clock converted with the profile's frequency.
 */
VS_EXTERN uint64_t vs_vcpu_now_ns(void);

/**
 * vs_vcpu_charge - charge the calling vCPU @cycles of work that does not
 * pass through the seams
 * @cycles: the cost
 *
 * Context: a vCPU; nothing happens on a host thread.
 */
VS_EXTERN void vs_vcpu_charge(uint64_t cycles);

/**
 * vs_vcpu_work - charge the calling vCPU for @what
 * @what: the kind of work
 * @addr: the memory it clears, for VS_VCPU_CLEAR (NULL: unknown, taken
 *	as not cached; see vs_coherence_charge_clear()); else ignored
 * @bytes: its size, for VS_VCPU_CLEAR and VS_VCPU_COPY
 *
 * vm/ and fault/ call it through VS_VCPU_WORK(), which is nothing in
 * the native build.  A @what out of range is ignored; a machine made
 * with VS_MACHINE_NO_TRAPS charges VS_VCPU_FAULT and VS_VCPU_SYSCALL
 * nothing.
 * Context: any; nothing happens on a host thread or without a profile.
 */
VS_EXTERN void vs_vcpu_work(enum vs_vcpu_work what, const void *addr,
			   uint64_t bytes);

/*
 * VS_VCPU_WORK(what, addr, bytes) - vs_vcpu_work() on a vCPU of the vCPU
 * build, nothing at all natively.
 */
#if VS_VCPU
#define VS_VCPU_WORK(what, addr, bytes) /* vs_vcpu_work() on a vCPU */ \
	(vs__vcpu_cur >= 0 ? vs_vcpu_work((what), (addr), (bytes)) : (void)0)
#else
#define VS_VCPU_WORK(what, addr, bytes) ((void)0) /* nothing natively */
#endif

/**
 * vs_vcpu_name - name the cache lines of [@addr, @addr + @len) in the
 * running machine's cost model, for its most-contended list
 * @addr: the object
 * @len: its size
 * @name: a name without an address in it (runs must compare equal)
 *
 * vm/ names what it knows: mmap_lock, each VMA's lock, page-table
 * locks, the page pool's locks.
 * Context: any; nothing happens on a host thread or without a profile.
 */
VS_EXTERN void vs_vcpu_name(const void *addr, size_t len, const char *name);

/**
 * vs_machine_coherence - the machine's cost model, to name lines
 * (vs_coherence_name()) or read the most contended ones
 * @m: the machine
 *
 * Context: as vs_machine_stats().
 * Return: the model, or NULL for a machine without a profile.
 */
VS_EXTERN struct vs_coherence *vs_machine_coherence(struct vs_machine *m);

/* Private: the hooks the seams call in the vCPU build. */
VS_EXTERN void vs__vcpu_event(const volatile void *addr, enum vs_vcpu_op op);
VS_EXTERN int vs__vcpu_futex_wait(const volatile void *word, uint32_t val,
				  int64_t timeout_ns);
VS_EXTERN int vs__vcpu_futex_wake(const volatile void *word, int nr);
VS_EXTERN void vs__vcpu_yield(void);

#endif /* VS_SYNC_VCPU_H */
