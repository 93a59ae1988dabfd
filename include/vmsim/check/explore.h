/* SPDX-License-Identifier: MIT */
/*
 * vmsim/check/explore.h - schedule exploration: a scenario's threads run
 * on virtual CPUs (vmsim/vcpu.h) under an adversarial scheduler, one
 * schedule after another, until one fails; that schedule is shrunk (its
 * decisions dropped, one or two at a time, and its preemptions moved
 * to where they are free, while it fails the same way; then to the
 * fewest preemptions that still fail when a bounded search finds them),
 * printed by name, and can be replayed exactly, under a debugger too.
 *
 * Test code, part of libvmsim-check (as vmsim/check/stress.h), included
 * as <vmsim/check/explore.h>.  It needs the vCPU build of the layers
 * (libvmsim-vcpu, VS_VCPU=1: every operation of vmsim/atomic.h is an
 * event the scheduler places); elsewhere vs_explore() returns
 * -EOPNOTSUPP.  A Check test:
 *
 *	static void thread(void *state, unsigned int i) { ... }
 *	static const struct vs_explore_scenario sc = {
 *		.name = "my_lock", .threads = 2, .setup = setup,
 *		.thread = thread, .check = check, .fini = fini,
 *	};
 *	struct vs_explore_report rep;
 *
 *	ck_assert_msg(vs_explore(&sc, NULL, &rep) == 0, "%s", rep.text);
 *
 * A schedule: setup() on vCPU 0; thread(state, i) for each i below
 * .threads on vCPU i + 1; when all have ended, check() on vCPU 0; then
 * fini() on the host thread.  Each schedule starts from a new machine
 * (vs_machine_reset()) and a new setup().  A schedule fails when:
 *
 *   - the scenario says so: VS_EXPLORE_ASSERT() or vs_machine_fail(),
 *     in a thread or in check() (not ck_assert(): Check would end the
 *     process from a vCPU's stack);
 *   - every thread with work is blocked (a deadlock, a lost unlock): the
 *     report names the word each waits on and the locks each holds;
 *   - it takes more than @max_events events (a livelock, a spin that
 *     never ends): "stuck";
 *   - it touches freed memory: an object of vm/'s caches freed, or
 *     memory the scenario gave to vs_vcpu_poison() (the machine has
 *     VS_MACHINE_CHECK_FREED): "use after free", naming it.
 *
 * vm/'s objects: each schedule starts with vm/'s object caches empty
 * (vs__kmem_caches_reset()), as in a new process, so that what an
 * allocation does does not depend on the schedules before.  For that,
 * what a schedule allocates must be freed by its end: in check() (on
 * the machine, where vs_rcu_barrier() runs the RCU callbacks still
 * queued: those left queued when check() returns are lost) or in
 * fini(); a schedule that passes with more objects out than before the
 * first fails vs_explore() with -EBUSY, saying so.  After a failed
 * schedule its objects are left where they are, never reused: no
 * object of vm/ made before vs_explore() may be freed after a failed
 * schedule (the process would abort, saying so).
 *
 * Everything the scenario shares must be touched through vmsim/atomic.h
 * (or locks, which are made of it): a plain access is no event, so no
 * schedule can come between it and the next.  The scenario must be
 * deterministic given the schedule: no host time, no addresses in
 * decisions, no state kept from one schedule to the next.
 *
 * The first schedule is the one without preemptions (each thread runs
 * until it blocks or ends, lowest vCPU first), on a scheduler of its
 * own: it also warms up whatever the code initialises once.
 *
 * Replaying.  The report ends in a line such as
 *
 *	VMSIM_REPLAY='lost_update:v1.BAEC.a1579950' CK_RUN_SUITE=explore
 *	CK_FORK=no ./build/test/vmsim-test-vcpu
 *
 * With VMSIM_REPLAY set to NAME:SCHEDULE, vs_explore() of the
 * scenario of that name runs that one schedule (vs_vcpu_sched_replay)
 * after the schedule without preemptions that every exploration starts
 * with, and nothing else, the same way every time: under gdb, a
 * breakpoint is hit in the same order on every run
 * (`break writer if vs_explore_schedule == 2` stops in the replayed
 * schedule only).  Scenarios of other names explore as usual.
 *
 * Tracing.  With VMSIM_TRACE set to a file, a failing schedule, once
 * reported, runs once more with every event kept (VS_MACHINE_TRACE),
 * and the file gets them as a Chrome Trace Event file for Perfetto
 * (vs_machine_trace_write()); the report's last line says where.
 *
 * Sharding (docs/sharding.md).  With VMSIM_SHARD=K/N, vs_explore()
 * runs only the schedules s with (s - 1) % N == K - 1, and 1 and 2, each
 * as the whole exploration would, and appends a line of JSON for it to
 * the file VMSIM_SHARD_OUT; with VMSIM_SHARD_MERGE=FILE,..., it
 * explores nothing and reports what the shards' lines say the whole
 * exploration finds: the lowest failing schedule, its shrunk schedule
 * replayed here.  A bad K/N, or shards missing, is -EINVAL, the report
 * saying which.
 *
 * Locking: the caller's host thread, not inside a machine; one
 * vs_explore() at a time in a process (the machine is the engine's
 * only one while it runs).
 */
#ifndef VMSIM_CHECK_EXPLORE_H
#define VMSIM_CHECK_EXPLORE_H

#include <stdint.h>
#include <string.h>

/* Installed as vmsim/check/explore.h beside vmsim/sync. */
#include <vmsim/common.h>
#include <vmsim/vcpu.h>

#define VS_EXPLORE_THREADS 16		/* most threads a scenario runs */
#define VS_EXPLORE_NAME_MAX 64		/* longest scenario name */
#define VS_EXPLORE_SCHEDULES 1000	/* default of .max_schedules */
#define VS_EXPLORE_EVENTS 100000	/* default of .max_events */
#define VS_EXPLORE_SHRINK_RUNS 2500	/* most replays shrinking takes */

/**
 * struct vs_explore_scenario - what runs in each schedule
 * @name: 1 to VS_EXPLORE_NAME_MAX letters, digits, '_' and '-': names it
 *	  in VMSIM_REPLAY
 * @threads: how many threads, 1..VS_EXPLORE_THREADS
 * @setup: NULL, or on vCPU 0 before the threads: make *@state (it
 *	   finds @arg there); 0, or a negative errno that ends
 *	   vs_explore() with it
 * @thread: thread @i's work, on vCPU @i + 1
 * @check: NULL, or on vCPU 0 after every thread ended: the invariants
 *	   that hold at the end (VS_EXPLORE_ASSERT())
 * @fini: NULL, or on the host thread after each schedule, also one that
 *	  failed (not when setup() failed before it replaced *@state):
 *	  free @state.  After a failure the threads were abandoned
 *	  where they stood, with whatever locks they held: do not take
 *	  locks or assert.  A struct vs_lock must go through
 *	  vs_lock_destroy() before its memory is freed (the lock registry
 *	  points to it); when that says -EBUSY (still held), leave the
 *	  memory that holds it allocated
 * @arg: what setup() finds in *@state, and the threads, check() and
 *	 fini() get as @state when there is no setup()
 */
struct vs_explore_scenario {
	const char *name;
	unsigned int threads;
	int (*setup)(void **state);
	void (*thread)(void *state, unsigned int i);
	void (*check)(void *state);
	void (*fini)(void *state);
	void *arg;
};

/**
 * struct vs_explore_options - how to explore (NULL for all defaults)
 * @sched: the scheduler: NULL for vs_vcpu_sched_pct; vs_vcpu_sched_random,
 *	   vs_vcpu_sched_dfs, or a scheduler of your own
 * @sched_arg: its vs_machine_config.sched_arg (struct vs_vcpu_pct,
 *	       struct vs_vcpu_dfs), or NULL
 * @seed: the scheduler's seed
 * @max_schedules: 0 for VS_EXPLORE_SCHEDULES
 * @max_ms: 0, or stop after this many milliseconds of host time
 * @max_events: events a schedule may take before it fails as stuck; 0
 *		for VS_EXPLORE_EVENTS
 * @profile: NULL (each event costs 1 cycle), or the machine whose
 *	     virtual time the report quotes; it does not change who runs
 * @flags: 0, or VS_EXPLORE_NO_SHRINK, VS_EXPLORE_QUIET
 * @memory: the memory model (enum vs_vcpu_memory): 0, sequentially
 *	    consistent, or VS_VCPU_MEM_TSO, VS_VCPU_MEM_RELAXED; a replay
 *	    needs the same
 * @own_slots: the machine's vs_machine_config.own_slots, up to
 *	       threads + 1 (thread i runs as context i + 1 while none has
 *	       ended): 0, each thread owns its slot of the per-slot locks;
 *	       2, thread 0 owns one and the others share VS_SLOT_SHARED; a
 *	       replay needs the same
 */
struct vs_explore_options {
	const struct vs_vcpu_sched_ops *sched;
	const void *sched_arg;
	uint64_t seed;
	unsigned long max_schedules;
	unsigned int max_ms;
	uint64_t max_events;
	const struct vs_vcpu_profile *profile;
	unsigned int flags;
	unsigned int memory;
	unsigned int own_slots;
};

#define VS_EXPLORE_NO_SHRINK 0x1u	/* report the schedule as found */
#define VS_EXPLORE_QUIET 0x2u		/* do not print the report */

/**
 * struct vs_explore_report - what vs_explore() found
 * @result: 0 (no schedule failed), or how the reported one ended:
 *	    -ECANCELED (an assertion, vs_machine_fail(), stuck) or -EDEADLK
 * @schedules: schedules run, the failing one included (shrinking's
 *	       runs not counted; a replay is two: the one without
 *	       preemptions first)
 * @exhausted: the scheduler ran out of schedules (vs_vcpu_sched_dfs)
 * @found_preemptions: preemptions of the failing schedule as found
 *		       (struct vs_vcpu_decision.preempt)
 * @preemptions: of the reported one, after shrinking
 * @shrink_runs: runs shrinking took: the search for fewer preemptions
 *		 and the replays
 * @stale: a replay (VMSIM_REPLAY) did not run as recorded: the code
 *	   changed since, a fix perhaps
 * @seconds: host time
 * @replay: "VMSIM_REPLAY=NAME:SCHEDULE" of the reported schedule,
 *	    or "" (no failure, or a schedule too long for the field)
 * @text: the report, as printed: how it failed, each vCPU's state, the
 *	  locks it holds and its last events by name, and the line that
 *	  replays it; "" when nothing failed
 */
struct vs_explore_report {
	int result;
	unsigned long schedules;
	int exhausted;
	unsigned int found_preemptions;
	unsigned int preemptions;
	unsigned long shrink_runs;
	int stale;
	double seconds;
	char replay[2048];
	char text[16384];
};

/**
 * VS_EXPLORE_ASSERT - fail the schedule unless @cond holds; on a vCPU,
 * in a scenario's thread() or check()
 */
#define VS_EXPLORE_ASSERT(cond) \
	((cond) ? (void)0 : (void)vs_machine_fail("%s:%d: assertion '%s' " \
						  "failed", \
						  vs__explore_file(__FILE__), \
						  __LINE__, #cond))

/* Private: the file name of @path, for VS_EXPLORE_ASSERT(). */
static inline const char *vs__explore_file(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/**
 * vs_explore_schedule - the schedule running now: 1 for the first one
 * (without preemptions), 2 for the next (a replay's), and so on; 0
 * outside vs_explore() and while it shrinks.  For a debugger's
 * breakpoint conditions.
 */
VS_EXTERN extern unsigned long vs_explore_schedule;

struct vs_mmu_notifier;

/**
 * vs_explore_move_stall - a secondary MMU for an explored scenario's
 * mm: once an mremap moved the PTEs it mirrors (invalidate_range_end of
 * VS_MMU_NOTIFY_MOVE) it waits a microsecond, as one may while its own
 * CPUs leave the old mapping, so that the mover sleeps between the move
 * and the zap of the old range, where a fault that got the old VMA's
 * lock past its write mark runs on and installs behind the move.
 * Register it with vs_mmu_notifier_register() (vmsim/mm.h), in any
 * number of mms: it keeps no state.  The stress writer's move trap
 * (vs_stress_run()'s explore mode) registers it around its mremap.
 */
VS_EXTERN extern struct vs_mmu_notifier vs_explore_move_stall;

/**
 * vs_explore - run @sc under a scheduler until a schedule fails
 * @sc: the scenario
 * @opt: how, or NULL for the defaults
 * @rep: filled in; the report is also printed to stderr
 *
 * SIGINT or SIGTERM ends the search after the schedule that runs (a
 * handler calling vs_vcpu_stop() is installed for the search where the
 * signal's action is the default; a program's own handler calls
 * vs_vcpu_stop() itself): the report says how many schedules ran, and
 * vs_vcpu_stop_signal() which signal came; one still pending when a
 * search starts ends it after its first schedule (vs_vcpu_stop_clear()
 * forgets it).  A program that stops there exits 128 + the signal, as
 * a shell's job does.
 *
 * Context: a host thread, not inside a machine; tracks held locks
 * (vs_lockstat_track_held()) while it runs, to name the locks held.
 * Return: 0 when no schedule failed (within the bounds: that is not a
 * proof); the failing schedule's -ECANCELED or -EDEADLK; -EINTR when a
 * signal ended the search before any failed; -EINVAL for a
 * NULL or bad argument (the report's text names it); a setup()'s error;
 * -EBUSY for a schedule that kept objects of vm/'s caches (above);
 * -EOPNOTSUPP outside the vCPU build; -ENOMEM.
 */
VS_EXTERN int vs_explore(const struct vs_explore_scenario *sc,
			 const struct vs_explore_options *opt,
			 struct vs_explore_report *rep);

#endif /* VMSIM_CHECK_EXPLORE_H */
