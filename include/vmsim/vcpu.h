/* SPDX-License-Identifier: MIT */
/*
 * vmsim/vcpu.h - virtual CPUs: vmsim's own code on N simulated CPUs,
 * run one at a time by one host thread, in virtual time.
 *
 * A machine has N vCPUs, each a user-level context with its own stack
 * (mmap'd, with a guard page below it).  In the vCPU build of the
 * library (libvmsim-vcpu, compiled with VS_VCPU=1) every operation of
 * vmsim/atomic.h is an event: before it runs, the engine charges the
 * running vCPU what the access costs (vmsim/vcpu_cost.h, from the
 * machine's profile) and then runs whichever runnable vCPU is earliest
 * in virtual time, so that shared memory is touched in virtual-time
 * order.  The futex calls of vmsim/wait.h block and wake vCPUs in
 * virtual time; RCU has its own grace periods (sync/rcu.c); the thread
 * slot of a vCPU is its number.  Nothing depends on host timing or on
 * absolute addresses: the same configuration and seed give the same
 * events, bit for bit (vs_machine_hash()).
 *
 * Which vCPU runs at each event is the scheduler's choice
 * (struct vs_vcpu_sched_ops): by default vs_vcpu_sched_clock, the
 * earliest clock, ties broken by a PRNG seeded from the configuration;
 * the exploring schedulers decide at choice points instead.
 *
 * In the native build the engine still exists (tests of the engine
 * itself), but the seams do not call it.
 *
 * Locking: a machine belongs to the host thread that runs it; none of
 * these functions may be called from another host thread meanwhile.
 */
#ifndef VMSIM_VCPU_H
#define VMSIM_VCPU_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "vcpu_annotate.h"
#include "vcpu_profile.h"

struct vs_machine;
struct vs_machine_config;
struct vs_coherence;

/**
 * enum vs_vcpu_choice_kind - where a scheduler is asked
 * @VS_VCPU_CHOOSE_RUN: before an event of the running context: it goes
 *	on, or another context runs first (a preemption)
 * @VS_VCPU_CHOOSE_RUN_AFTER_STOP: the running context blocked, ended or
 *	used up its time slice, or the run starts: which context runs
 * @VS_VCPU_CHOOSE_READ: the relaxed memory model, at a load: which
 *	store it reads, counted back from the newest (the default, 0)
 * @VS_VCPU_CHOOSE_FLUSH: the TSO memory model, before an event while
 *	stores are buffered: 0 keeps them all (the default), i writes
 *	the oldest store of the i-th context, by id, with stores buffered
 *
 * A memory choice (READ, FLUSH) has @cand 0..nr-1, not contexts; it
 * comes after the RUN choice of the same event, with an anchor of its
 * own, and one other than the default counts as a preemption.
 */
enum vs_vcpu_choice_kind {
	VS_VCPU_CHOOSE_RUN,
	VS_VCPU_CHOOSE_RUN_AFTER_STOP,
	VS_VCPU_CHOOSE_READ,
	VS_VCPU_CHOOSE_FLUSH,
};

/** VS_VCPU_HOST - vs_vcpu_choice.ctx of the choice that starts a run */
#define VS_VCPU_HOST 0xffffu

/** VS_VCPU_OP_WORK - vs_vcpu_choice.op of a vs_vcpu_work() (plus the
 * enum vs_vcpu_work) */
#define VS_VCPU_OP_WORK 0x100u

/**
 * struct vs_vcpu_choice - a choice point: two or more contexts may run
 * @kind: where
 * @ctx: the anchor: the context whose event it comes before (RUN) or
 *	 that stopped (RUN_AFTER_STOP); VS_VCPU_HOST when the run starts
 * @at: how many times @ctx had reached the scheduler before, its own
 *	count: with @ctx it places the choice in the run whatever the other
 *	contexts did, so that a schedule is the list of its decisions
 *	that differ from the default (struct vs_vcpu_decision).  It is 32
 *	bits: past 2^32 visits of one context in one run, anchors repeat
 * @nr: the alternatives, at least 2
 * @cand: their context ids (work ids of vs_machine_spawn(), or the
 *	  engine's daemons).  @cand[0] is the default: the running context
 *	  (RUN) unless its event is a vs_cpu_relax(), else the lowest id;
 *	  then the runnable contexts by id.  A running context whose
 *	  event is a vs_cpu_relax() is not among them while another can
 *	  run.  A context asleep with a timeout is a candidate only when
 *	  no other is runnable and the running one has stopped or spins:
 *	  timeouts expire when waiting is all that is left, and a chosen
 *	  sleeper times out
 * @op: RUN: the pending event's enum vs_vcpu_op, or VS_VCPU_OP_WORK
 *	plus its enum vs_vcpu_work; RUN_AFTER_STOP: 0
 * @addr: RUN: what the event touches, or NULL
 * @index: the choice points before this one in the run
 */
struct vs_vcpu_choice {
	enum vs_vcpu_choice_kind kind;
	unsigned int ctx;
	uint32_t at;
	unsigned int nr;
	const unsigned int *cand;
	unsigned int op;
	const volatile void *addr;
	unsigned long index;
};

/**
 * struct vs_vcpu_decision - a choice that was not the default
 * @at: the anchor's count (vs_vcpu_choice.at)
 * @ctx: the anchor (vs_vcpu_choice.ctx)
 * @run: the context chosen
 * @kind: the enum vs_vcpu_choice_kind
 * @preempt: 1 when it was a preemption: @ctx could have gone on (as
 *	     vs_vcpu_sched_dfs counts them; a switch away from a context
 *	     that spins is none).  Recorded by the engine; not part of a
 *	     schedule's text form, nor read by a replay
 */
struct vs_vcpu_decision {
	uint32_t at;
	uint16_t ctx;
	uint16_t run;
	uint8_t kind;
	uint8_t preempt;
};

/**
 * struct vs_vcpu_sched_ops - who runs next
 * @name: for messages
 * @init: NULL, or make the scheduler's state for the machine @cfg
 *        describes (its seed, its vs_machine_config.sched_arg); 0 or a
 *        negative errno, which vs_machine_create() returns
 * @choose: at choice point @c, the index in @c->cand of the context to
 *          run, below @c->nr.  Called once per choice point, only where
 *          there are two or more alternatives.  NULL: the scheduler
 *          does not choose, and virtual time decides, as with
 *          vs_vcpu_sched_clock
 * @end: NULL, or called when a run ends (vs_machine_run() returns or
 *       vs_machine_leave()): 0, or a negative errno that the run
 *       returns instead of its own (a replay that did not fit)
 * @fini: NULL, or free the state
 * @seek: NULL, or make the next run the @run-th (from 1) of the
 *        machine's sequence, as if the runs between had run: a
 *        scheduler whose every run draws from a stream of its own can,
 *        and then a search can be split among processes
 *        (vs_machine_sched_seek()); 0 or a negative errno
 *
 * With a scheduler that chooses, virtual time is still charged but
 * does not decide who runs.
 */
struct vs_vcpu_sched_ops {
	const char *name;
	int (*init)(void **state, const struct vs_machine_config *cfg);
	unsigned int (*choose)(void *state, struct vs_machine *m,
			       const struct vs_vcpu_choice *c);
	int (*end)(void *state, struct vs_machine *m);
	void (*fini)(void *state);
	int (*seek)(void *state, unsigned long run);
};

/**
 * vs_vcpu_sched_clock - the default (a NULL vs_machine_config.sched):
 * virtual time decides.  Before every event the context with the
 * earliest clock runs, ties broken by the machine's PRNG (seeded with
 * vs_machine_config.seed), and a sleeper whose deadline is earliest
 * times out; a memory model's choices are drawn from the same PRNG.
 * There are no choice points and no decisions to record.
 */
VS_EXTERN extern const struct vs_vcpu_sched_ops vs_vcpu_sched_clock;

/**
 * vs_vcpu_sched_random - at every choice point, any alternative,
 * uniformly, from a PRNG seeded with vs_machine_config.seed and the
 * run's number: each run of the machine draws another schedule, which
 * vs_machine_sched_seek() reaches without the runs before
 */
VS_EXTERN extern const struct vs_vcpu_sched_ops vs_vcpu_sched_random;

/** VS_VCPU_PCT_DEPTH - the bug depth PCT aims at by default */
#define VS_VCPU_PCT_DEPTH 3

/**
 * struct vs_vcpu_pct - vs_machine_config.sched_arg of vs_vcpu_sched_pct
 * (optional: NULL for the defaults)
 * @depth: d, the bug depth aimed at, 1..16: d-1 priority change points
 *	   a run
 */
struct vs_vcpu_pct {
	unsigned int depth;
};

/**
 * vs_vcpu_sched_pct - probabilistic concurrency testing (Burckhardt,
 * Kothari, Musuvathi and Nagarakatte, ASPLOS 2010): random priorities,
 * the highest runs, d-1 random change points a run.  A bug that needs
 * d ordering constraints is found by one run with probability at least
 * 1/(n k^(d-1)), n contexts and k choice points.  Each run of the
 * machine is another draw, from vs_machine_config.seed and the run's
 * number; the first has no change points and measures k (3/2 of its
 * steps: a later run may take more), and after it
 * vs_machine_sched_seek() reaches any run without the runs between.
 */
VS_EXTERN extern const struct vs_vcpu_sched_ops vs_vcpu_sched_pct;

/** VS_VCPU_DFS_MAX - the largest preemption bound of vs_vcpu_sched_dfs */
#define VS_VCPU_DFS_MAX 64

/**
 * struct vs_vcpu_dfs - vs_machine_config.sched_arg of vs_vcpu_sched_dfs
 * (optional: NULL for a bound of 2)
 * @max_preemptions: explore every schedule with at most this many
 *		     preemptions, 0..VS_VCPU_DFS_MAX
 */
struct vs_vcpu_dfs {
	unsigned int max_preemptions;
};

/**
 * vs_vcpu_sched_dfs - every schedule with at most a bound of
 * preemptions, one a run, depth first (stateless model checking with
 * iterative context bounding).  A preemption is running another
 * context where the running one could go on; switching where it
 * blocked, ended or spins is free.  Bounds 0, 1, ... run in turn, so a
 * failure is first found with the fewest preemptions.  The work must
 * repeat exactly from run to run: a run that does not follow the path
 * returns -ESTALE and ends the search.  vs_vcpu_dfs_stats() says when
 * the space is exhausted or the search ended; further runs then take
 * the defaults and are not counted.
 */
VS_EXTERN extern const struct vs_vcpu_sched_ops vs_vcpu_sched_dfs;

/**
 * struct vs_vcpu_dfs_stats - where a vs_vcpu_sched_dfs search stands
 * @schedules: runs so far
 * @bound: the preemption bound being explored
 * @exhausted: every schedule within the maximum bound has run
 * @error: 0, or what ended the search before that: -ESTALE (a run left
 *	   the recorded path: the work does not repeat), -ENOMEM
 */
struct vs_vcpu_dfs_stats {
	unsigned long schedules;
	unsigned int bound;
	int exhausted;
	int error;
};

/**
 * vs_vcpu_dfs_stats - where the search of @m's vs_vcpu_sched_dfs stands
 * @m: a machine created with vs_vcpu_sched_dfs
 * @st: filled in
 *
 * Context: the machine's host thread, outside a run.
 * Return: 0, or -EINVAL for NULL or a machine with another scheduler.
 */
VS_EXTERN int vs_vcpu_dfs_stats(struct vs_machine *m,
				struct vs_vcpu_dfs_stats *st);

/**
 * struct vs_vcpu_replay - vs_machine_config.sched_arg of
 * vs_vcpu_sched_replay: a schedule
 * @dec: its decisions in the order they were taken (vs_machine_decisions())
 * @nr: how many
 * @flags: 0, or VS_VCPU_REPLAY_LENIENT
 */
struct vs_vcpu_replay {
	const struct vs_vcpu_decision *dec;
	size_t nr;
	unsigned int flags;
};

/**
 * VS_VCPU_REPLAY_LENIENT - vs_vcpu_replay.flags: take each decision
 * where its anchor comes, in whatever order, and skip one that does not
 * fit or is never reached, without an error: a schedule with decisions
 * removed, as shrinking tries, still runs
 */
#define VS_VCPU_REPLAY_LENIENT 0x1u

/**
 * vs_vcpu_sched_replay - take the decisions of a struct vs_vcpu_replay
 * (copied at vs_machine_create()) where their anchors come, the default
 * everywhere else: the same work gives the same run, event for event.
 * A decision whose context is not among the alternatives, or one never
 * reached, makes the run return -ESTALE: the schedule does not fit
 * (unless VS_VCPU_REPLAY_LENIENT).
 */
VS_EXTERN extern const struct vs_vcpu_sched_ops vs_vcpu_sched_replay;

/**
 * struct vs_machine_config - vs_machine_create() settings
 * @profile: the machine's costs (copied); NULL: every access costs 1
 *           cycle at 1 GHz, with no coherence model
 * @nr_vcpus: 1..VS_VCPU_MAX, and at most the profile's CPUs (vCPU i is
 *            CPU i of the profile, as Linux numbers it)
 * @seed: the PRNG seed (tie-breaks, the scheduler's choices)
 * @stack_size: bytes per vCPU stack, 0 for 256 KiB
 * @sched: the scheduler, NULL for vs_vcpu_sched_clock
 * @sched_arg: the scheduler's parameter (struct vs_vcpu_replay for
 *	       vs_vcpu_sched_replay), or NULL
 * @max_events: 0, or the most seam events a run may take: past it the
 *		run fails as stuck (a livelock, a spin that never ends),
 *		as vs_machine_fail() does, instead of running forever
 * @flags: 0, or VS_MACHINE_NO_TRAPS, VS_MACHINE_CHECK_FREED,
 *	   VS_MACHINE_TRACE and VS_MACHINE_STOPPABLE
 * @memory: what the seam's loads may return, enum vs_vcpu_memory: 0
 *	    (VS_VCPU_MEM_SC) for the newest store
 * @own_slots: 0, every work's context (vs_vcpu_self()) owns its slot
 *	       of the per-slot locks and caches (vmsim/thread.h: percpu,
 *	       brlock, prwlock, the page pool); or 1..VS_NR_SLOTS, the
 *	       contexts below it own theirs and the others share
 *	       VS_SLOT_SHARED, as host threads beyond VS_NR_SLOTS and the
 *	       RCU daemon do: to explore that path
 */
struct vs_machine_config {
	const struct vs_vcpu_profile *profile;
	unsigned int nr_vcpus;
	uint64_t seed;
	size_t stack_size;
	const struct vs_vcpu_sched_ops *sched;
	const void *sched_arg;
	uint64_t max_events;
	unsigned int flags;
	unsigned int memory;
	unsigned int own_slots;
};

/**
 * enum vs_vcpu_memory - vs_machine_config.memory, the memory model
 * @VS_VCPU_MEM_SC: sequential consistency: every load returns the
 *	newest store
 * @VS_VCPU_MEM_TSO: x86-TSO: a FIFO store buffer per context, drained
 *	by read-modify-writes, full fences, vs_cpu_relax(), blocking,
 *	ending, and at scheduler-chosen events (VS_VCPU_CHOOSE_FLUSH); a
 *	load sees its own buffered stores
 * @VS_VCPU_MEM_RELAXED: C11 / LKMM as the seam's operations state
 *	their order: a load may return an older store of the location's
 *	last VS_VCPU_MEM_HISTORY that coherence and happens-before allow
 *	(VS_VCPU_CHOOSE_READ); and a seam access to an object of vm/'s
 *	caches whose allocation does not happen before it fails the run
 *	("unpublished object").  At most 15 works a run (the 16th spawn
 *	returns -EAGAIN)
 *
 * Only the seam's operations (vmsim/atomic.h) are modelled, on naturally
 * aligned objects of 1, 2, 4 or 8 bytes; plain accesses always see
 * memory as it is.  Without a scheduler, memory choices are drawn from
 * the machine's PRNG.  docs/vcpu.md, "Memory models", says what each
 * leaves out.
 */
enum vs_vcpu_memory {
	VS_VCPU_MEM_SC,
	VS_VCPU_MEM_TSO,
	VS_VCPU_MEM_RELAXED,
};

/** VS_VCPU_MEM_HISTORY - the stores a location keeps under
 * VS_VCPU_MEM_RELAXED */
#define VS_VCPU_MEM_HISTORY 6

/**
 * VS_MACHINE_NO_TRAPS - vs_machine_config.flags: the simulated faults
 * and VM calls take no trap or system call (charge VS_VCPU_FAULT and
 * VS_VCPU_SYSCALL nothing), as when vmsim runs as a library on real
 * threads; futex calls still pay theirs.
 */
#define VS_MACHINE_NO_TRAPS 0x1u

/**
 * VS_MACHINE_CHECK_FREED - vs_machine_config.flags: memory poisoned with
 * vs_vcpu_poison() (the model's freed objects) is checked at every
 * event: a load, store or read-modify-write of it fails the run as a
 * use after free (-ECANCELED), naming the object and who freed it
 */
#define VS_MACHINE_CHECK_FREED 0x2u

/**
 * VS_MACHINE_TRACE - vs_machine_config.flags: keep every event of each
 * run (its time, cost, vCPU, work and what it touched), for
 * vs_machine_trace_write()
 */
#define VS_MACHINE_TRACE 0x4u

/**
 * VS_MACHINE_STOPPABLE - vs_machine_config.flags: a stop request
 * (vs_vcpu_stop()) ends a run at its next event: vs_machine_run()
 * returns -EINTR, the report says where, and every vCPU is left where
 * it stands, as after vs_machine_fail().  Without it a run goes on,
 * for its owner to stop at a point of its own.  Ignored under
 * vs_machine_enter().
 */
#define VS_MACHINE_STOPPABLE 0x8u

/**
 * vs_machine_trace_write - write the last run's events to @path as a
 * Chrome Trace Event file (JSON), which Perfetto (ui.perfetto.dev) and
 * chrome://tracing open: a track per vCPU, a slice per event over its
 * virtual time, named as reports name memory (by the names as the run
 * left them), sleeps and ends as instants, and the run's report
 * @m: a machine made with VS_MACHINE_TRACE
 * @path: the file, created or truncated
 *
 * Context: the machine's host thread, outside a run.
 * Return: 0; -EINVAL for NULL or a machine without the flag; -EBUSY
 * while it runs; -ENOMEM when events could not all be kept; the
 * errno of a file that cannot be written.
 */
VS_EXTERN int vs_machine_trace_write(struct vs_machine *m, const char *path);

/**
 * vs_machine_create - a machine of idle vCPUs
 * @mp: receives the machine
 * @cfg: its settings
 *
 * Context: a host thread, not inside a machine.
 * Return: 0; -EINVAL for a NULL argument, a vCPU count out of range, an
 * unknown flag or memory model; -ENOMEM.
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
 * returns -EDEADLK.  It never hangs on a deadlock.  A run that fails
 * (vs_machine_fail(), or more events than max_events) returns
 * -ECANCELED, with the report saying why.  After either, the vCPUs are
 * left where they stood, and @m runs again only after
 * vs_machine_reset().
 *
 * A run of a VS_MACHINE_STOPPABLE machine that a stop request ended
 * returns -EINTR, left as a failed one is.
 *
 * Context: the host thread that created @m, not inside a machine.
 * Return: 0, -EDEADLK, -ECANCELED, -EINTR, -EINVAL for a NULL
 * argument, -EBUSY when @m already runs or must be reset first, or the
 * scheduler's error (struct vs_vcpu_sched_ops.end).
 */
VS_EXTERN int vs_machine_run(struct vs_machine *m, void (*fn)(void *),
			     void *arg);

/**
 * vs_machine_reset - make @m as vs_machine_create() left it, with a new
 * seed, keeping its memory
 * @m: the machine, not running
 * @seed: the engine's new seed (tie-breaks)
 *
 * Every context goes back to idle, whatever it was doing: one left
 * blocked by a deadlock or abandoned by a failure is dropped, its stack
 * kept for reuse.  Clocks, statistics, the event hash, the futex
 * queues, RCU's state, the cost model's lines and the held locks that
 * lock statistics track start again from zero; a run after the reset
 * is the run of a new machine, event for event (with a profile, as
 * long as the work's objects sit at the same offsets in their pages:
 * the cost model sees those).  The scheduler keeps its state (a search
 * goes on from schedule to schedule); the work's own objects are the
 * work's.
 *
 * Context: the host thread that created @m, outside vs_machine_run()
 * and not on a vCPU of any machine.
 * Return: 0, -EINVAL for NULL, -EBUSY while it or another machine
 * runs, -ENOMEM (then @m is unchanged).
 */
VS_EXTERN int vs_machine_reset(struct vs_machine *m, uint64_t seed);

/**
 * vs_machine_sched_seek - make @m's next run the @run-th (from 1) of
 * its scheduler's sequence, as if the runs between had run
 * (struct vs_vcpu_sched_ops.seek): shard K of N of a search runs the
 * runs whose number modulo N is K-1, each as the whole search would
 * (vmsim/check/explore.h, VMSIM_SHARD)
 *
 * Context: the host thread that created @m, not inside a machine.
 * Return: 0; -EINVAL for NULL or a run the scheduler cannot reach
 * (PCT's first run measures its choice points: run it first); -EBUSY
 * while @m runs; -EOPNOTSUPP for a scheduler whose runs follow from
 * the ones before (vs_vcpu_sched_dfs, vs_vcpu_sched_clock).
 */
VS_EXTERN int vs_machine_sched_seek(struct vs_machine *m, unsigned long run);

/** VS_SHARD_MAX - the most shards a job is split into (N of K/N) */
#define VS_SHARD_MAX 100000

/**
 * vs_shard_parse - read "K/N": shard K of N of a deterministic job (the
 * runs of a search, VMSIM_SHARD; the points of a sweep, multi-fault's
 * --shard), decimal, 1 <= K <= N <= VS_SHARD_MAX, nothing else
 * @s: the text
 * @k: where K goes
 * @n: where N goes
 *
 * Context: any.
 * Return: 0; -EINVAL for NULL or any other text (*@k and *@n unchanged).
 */
VS_EXTERN int vs_shard_parse(const char *s, unsigned int *k, unsigned int *n);

/**
 * vs_machine_fail - stop the run: a check failed
 * @fmt: printf format of one line saying what, then its arguments
 *
 * The report (vs_machine_report()) gets the line, the failing work and
 * vCPU and the virtual time, and vs_machine_run() returns -ECANCELED.
 * Every vCPU is left where it stands until vs_machine_reset()
 * (vs_machine_abandoned()); the locks of sync/'s own statics they held
 * are freed when vs_machine_run() returns.  Under
 * vs_machine_enter() there is no host context to return to: the report
 * is printed and the process aborts, as for a deadlock.
 *
 * Context: a vCPU of a running machine.
 * Return: only when called elsewhere: -EINVAL.
 */
VS_EXTERN int vs_machine_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/**
 * vs_vcpu_stop - ask this process's runs to stop: what a SIGINT or
 * SIGTERM handler calls
 * @sig: the signal that asks (its number; 0 or less: SIGINT)
 *
 * Only stores @sig: the engine reads it at the start of each event, on
 * the host thread.  A run of a VS_MACHINE_STOPPABLE machine ends there
 * (-EINTR); others go on, their owners reading vs_vcpu_stop_signal()
 * at points of their own.  A handler must never call anything else of
 * vmsim: on a vCPU, every operation of vmsim/atomic.h is an event of
 * the engine, which the handler may have interrupted in the middle of
 * one of its own (docs/vcpu.md, "Signals").
 *
 * Context: any, a signal handler included (async-signal-safe).
 */
VS_EXTERN void vs_vcpu_stop(int sig);

/**
 * vs_vcpu_stop_signal - the signal of the pending stop request
 *
 * Context: any.
 * Return: the signal vs_vcpu_stop() was given, or 0 for none.
 */
VS_EXTERN int vs_vcpu_stop_signal(void);

/**
 * vs_vcpu_stop_clear - forget the pending stop request
 *
 * Context: a host thread, outside a run.
 */
VS_EXTERN void vs_vcpu_stop_clear(void);

/**
 * vs_vcpu_stop_on_signals - SIGINT and SIGTERM call vs_vcpu_stop(), or
 * no longer do
 * @on: 1 to install the handler (SA_RESTART) for each of the two whose
 *	action is the default, 0 to put back what it replaced
 *
 * A program with a handler of its own keeps it (and calls
 * vs_vcpu_stop() from it).  Calls nest: the handlers go when as many
 * calls with 0 as with 1 were made.
 *
 * Context: a host thread; not thread-safe against other sigaction()
 * calls.
 * Return: 0, or the negative errno of sigaction().
 */
VS_EXTERN int vs_vcpu_stop_on_signals(int on);

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
 * Return: 0, -EINVAL when the caller is not vCPU 0 of an entered @m,
 * or the scheduler's error (struct vs_vcpu_sched_ops.end).
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
 * A work's id is its context's: once it has ended, a later spawn may
 * take the same context and id.  A join of that id then waits for the
 * later work too, and sees what every work that ended on it this run
 * did (under relaxed memory, each one's stores before its end).
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
 *	fences, as the cost model charged them (vmsim/vcpu_cost.h), line
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
 * vs_machine_report - why the last run stopped early (a deadlock, a
 * failure), or ""
 * @m: the machine
 *
 * Context: as vs_machine_stats().
 * Return: a string owned by @m.
 */
VS_EXTERN const char *vs_machine_report(struct vs_machine *m);

/**
 * vs_machine_abandoned - whether the last run failed or deadlocked: its
 * contexts stand where they stopped, never to run again (a reset drops
 * them), and what they held of sync/'s statics was freed when the run
 * returned
 * @m: the machine
 *
 * Context: as vs_machine_stats().
 * Return: 1 or 0; 0 for NULL.
 */
VS_EXTERN int vs_machine_abandoned(struct vs_machine *m);

/** VS_VCPU_REPLAY_MAX - the most bytes a schedule's decisions take
 * encoded (about 3 a decision) */
#define VS_VCPU_REPLAY_MAX 65536

/**
 * vs_vcpu_replay_encode - a schedule as one shell-safe word
 * @dec: the decisions (vs_machine_decisions())
 * @nr: how many
 * @check: 32 bits the text carries along: the low half of the run's
 *	   vs_machine_hash(), so that a replay can tell another run
 * @buf: receives "v1.PAYLOAD.CHECK" ("v2." when a memory model's
 *	 choices are among them): base64url and 8 hex digits
 * @len: its size; about 4 characters a decision, plus 13
 *
 * Context: any.
 * Return: 0; -EINVAL for NULL arguments or decisions no run records (an
 * anchor or a context chosen out of range, a kind past FLUSH,
 * a context's counts going down); -ENOSPC when @buf, or
 * VS_VCPU_REPLAY_MAX, is too small; -ENOMEM.
 */
VS_EXTERN int vs_vcpu_replay_encode(const struct vs_vcpu_decision *dec,
				    size_t nr, uint32_t check, char *buf,
				    size_t len);

/**
 * vs_vcpu_replay_decode - the decisions of a vs_vcpu_replay_encode() word
 * @s: the text
 * @dec: receives the decisions
 * @max: room in @dec
 * @nr: receives how many
 * @check: receives the 32 bits carried along
 *
 * Context: any.
 * Return: 0; -EINVAL for NULL arguments; -EILSEQ when @s is not such a
 * word (another version, a character outside base64url, a truncated
 * decision, a context out of range, not 8 lowercase hex digits at the
 * end); -E2BIG when it holds more than @max decisions, or more than
 * VS_VCPU_REPLAY_MAX bytes of them; -ENOMEM.
 */
VS_EXTERN int vs_vcpu_replay_decode(const char *s,
				    struct vs_vcpu_decision *dec, size_t max,
				    size_t *nr, uint32_t *check);

/**
 * vs_machine_decisions - the schedule of the last run: its scheduler's
 * decisions that were not the default, in order
 * @m: the machine
 * @dec: receives the list, owned by @m until its next run
 * @nr: receives its length (0 under a scheduler that does not choose)
 *
 * Replayed by vs_vcpu_sched_replay.
 * Context: the machine's host thread, outside a run.
 * Return: 0; -EINVAL for a NULL argument; -ENOMEM when a decision
 * could not be recorded (the list is then incomplete).
 */
VS_EXTERN int vs_machine_decisions(struct vs_machine *m,
				   const struct vs_vcpu_decision **dec,
				   size_t *nr);

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

/**
 * vs_vcpu_machine - the machine the caller runs on
 *
 * Context: any.
 * Return: the machine, or NULL on a host thread.
 */
VS_EXTERN struct vs_machine *vs_vcpu_machine(void);

/**
 * vs_machine_coherence - the machine's cost model, to name lines
 * (vs_coherence_name()) or read the most contended ones
 * @m: the machine
 *
 * Context: as vs_machine_stats().
 * Return: the model, or NULL for a machine without a profile.
 */
VS_EXTERN struct vs_coherence *vs_machine_coherence(struct vs_machine *m);

#endif /* VMSIM_VCPU_H */
