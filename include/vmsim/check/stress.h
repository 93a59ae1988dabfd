/* SPDX-License-Identifier: MIT */
/*
 * vmsim/check/stress.h - the fault stress run: faulting threads against
 * a thread that keeps changing the same pages, with invariant checks.
 *
 * Test code, kept out of libvmsim: it is libvmsim-check (CMake:
 * vmsim::vmsim_check or vmsim::vmsim_check_static; pkg-config:
 * vmsim-check), and this header is included on its own, not through
 * <vmsim/vmsim.h>.
 *
 * vs_stress_run() is what the stress suite of vmsim-test runs for each
 * built-in lock kind and fault strategy.  It takes the kind and the
 * strategy by name and by value, so it runs just as well against a
 * lock kind added with vs_lock_kind_register() or a strategy added with
 * vs_fault_strategy_register(): a Check test for a new one is
 *
 *	struct vs_stress_config cfg = { .lock_kind = "mykind",
 *					.strategy = VS_FAULT_SPF };
 *	struct vs_stress_report rep;
 *
 *	ck_assert_int_eq(vs_stress_run(&cfg, &rep), 0);
 *	ck_assert_msg(rep.violations == 0, "%s (seed %#llx)", rep.first,
 *		      (unsigned long long)rep.seed);
 *
 * A run makes a fresh mm of that kind and strategy: 64 pages (the
 * first half private anonymous, the second shared anonymous) between
 * two guard pages, all in one PTE page.  Two faulter threads write,
 * read, touch and fault their own slot of each page, mostly in a small
 * hot window; a writer thread runs random mprotect (RW, READ, NONE),
 * MADV_DONTNEED, munmap, mmap(MAP_FIXED), mremap (shrink, grow, move),
 * fork and downgrade_write (vs_mmap_write_downgrade()) over the same
 * pages, plus two traps that make the hard races likely (a faulter
 * holds the page-table lock while the others' faults pile up on it and
 * an operation starts; a window being read is moved away).  A prober
 * thread answers each downgrade.  The calling thread watches them all
 * (the watchdog below).
 *
 * What is checked (each failure is one violation):
 *
 *   - accesses agree with the VMAs: an access that no operation
 *     overlapped succeeds exactly when the mapping allows it (no access
 *     at an unmapped address or a guard page, no write to a read-only
 *     mapping, nothing in PROT_NONE, SIGBUS past the end of a shmem
 *     file) and vs_handle_mm_fault() returns exactly the VM_FAULT_* it
 *     should (a wrong one is named: "returned VS_VM_FAULT_SIGBUS,
 *     expected VS_VM_FAULT_SIGSEGV");
 *   - data written reads back, also across the operations: zero after
 *     MADV_DONTNEED of private memory and in a new mapping, the moved
 *     data after mremap, the old data (never a fresh zero page) for a
 *     read that raced the page being unmapped or moved away;
 *   - every operation's result: the VMAs after it are what it asked for;
 *   - PTEs agree with the VMAs, after every operation, under the
 *     mmap_lock and the page-table lock: a present PTE lies inside a
 *     VMA, is writable only with VM_WRITE and user-accessible only with
 *     an access bit, maps a live page of the mapping's type, never the
 *     zero page writable or shared; a private writable page is mapped
 *     once; each page's mapcount equals the PTEs mapping it (the fork
 *     child's included); RSS equals the PTEs mapping a page;
 *   - the fork child looks like the parent did at fork, and its memory
 *     works;
 *   - downgrade_write turns the write hold into a read hold: beside it
 *     another thread gets a read hold within a second, and no write
 *     hold;
 *   - at the end, once quiet: refcounts equal mapcounts (plus the
 *     page-cache reference), every record reads back, every page is
 *     back in the pool after munmap and a grace period, and
 *     vs_mm_destroy() succeeds;
 *   - every thread moves (the watchdog): a thread whose progress count
 *     has not moved for @watchdog_ms stops the run, and the violation
 *     names, per thread, what it was doing (the writer's operation, a
 *     faulter's access), the lock and side it waits for and for how
 *     long, the locks it holds, and the seed; vs_stress_run() then
 *     returns -ETIMEDOUT.  What each thread waits for or holds comes
 *     from the lock trace hooks (vs_lock_trace_set()), which a run
 *     installs for its duration: hooks of the caller's are replaced.
 *     A thread blocked in a lock it will never get cannot be killed:
 *     it is left blocked (the report counts it in @stuck), with the
 *     run's mm and memory, which are never freed; the process must
 *     exit to be rid of it (a Check test in its forked child does).
 *
 * Allocation failures (@fail set).  While the threads run, the
 * allocations @fail chooses fail (vmsim/fail.h), and the checks above
 * allow for it:
 *
 *   - an operation may fail with -ENOMEM only when a failure was
 *     injected into the writer's allocations while it ran
 *     (vs_fail_injected_here()), or as the kernel's would without one
 *     (mprotect, madvise or mremap at a hole, mremap with no room);
 *     mprotect or madvise succeeding over a hole is a violation;
 *   - what a failed operation leaves is what the kernel's leaves: the
 *     VMAs exactly as before for mmap, munmap, madvise, an mremap in
 *     place and fork (no child); mprotect changed up to some page of
 *     its range and not from there on (do_mprotect_pkey() stops at the
 *     VMA that failed); a moving mremap with its destination and its
 *     cut tail unmapped (mremap_to() unmaps them first) and, moving
 *     VMA by VMA, some VMAs moved, every other page as before;
 *   - an access or fault that fails for want of memory (-ENOMEM,
 *     VM_FAULT_OOM) is counted, and a violation where it must fail
 *     first (a guard page; where the shadow forbids it, no operation
 *     beside it); without @fail it is always a violation, as before;
 *   - the PTE, RSS and mapcount checks after every operation hold as
 *     always, and at the end, with injection off again, so do the
 *     refcounts, every page back in the pool, vs_mm_destroy(), and, in
 *     a build with LeakSanitizer, no leak at exit.
 *
 * Injection is process-wide: other threads' allocations, another
 * run's included, meet it too.  In explore mode each schedule starts
 * injecting anew, so that its replay fails the same allocations: every
 * schedule fails the same numbers (with a probability, the same draws
 * of @fail's seed), and the schedule decides which allocations those
 * are.  Vary @fail's seed to vary the numbers.
 *
 * Every violation also names the writer's operation in flight when it
 * was found ("[writer in mremap of pages 4-7]"), or says that there was
 * none ("[writer between operations]").
 *
 * A use after free (a VMA or page freed before its grace period) is
 * not seen by vs_stress_run() itself.  Freed VMAs are filled with 0x6b;
 * freed page frames are poisoned for AddressSanitizer only when libvmsim
 * itself was built with it (-DVS_SANITIZE=address,undefined):
 * docs/testing-a-locking-change.md says how.
 *
 * Explore mode (@explore set; the vCPU build).  Each run is one
 * vs_explore() of a scenario named "stress-KIND-STRATEGY-SEED": the
 * run with that seed's writer program, its writer, prober and two
 * faulters each on a vCPU of its own, under the scheduler of @explore,
 * schedule after schedule, every one from a new mm.  Without @runs,
 * VS_STRESS_EXPLORE_RUNS runs (writer programs) share @explore's
 * schedules (max_schedules, or VS_EXPLORE_SCHEDULES): one program of a
 * few operations often holds none of the operations a race needs, so
 * four programs of 250 schedules find more than one of 1,000.  Under
 * PCT without a sched_arg, the depth is 2 @ops + 4 (at most
 * VS_STRESS_EXPLORE_DEPTH_MAX): change points for each operation's
 * start and end to come inside a fault's window, where PCT's default
 * depth of 3 gives a schedule of tens of thousands of events two.  The run is short:
 * the writer makes @ops operations and the faulters @faults accesses
 * between them, by default VS_STRESS_EXPLORE_OPS and
 * VS_STRESS_EXPLORE_FAULTS (@max_ms and @watchdog_ms mean nothing here:
 * the engine reports a deadlock, or a thread stuck past @explore's
 * max_events, which 0 makes VS_STRESS_EXPLORE_EVENTS here: a schedule
 * takes tens of thousands of events).  Naps and timed spins become a
 * vs_cpu_relax(): the scheduler, not time, decides who runs.
 * The checks are the same; a violation fails the schedule where it is
 * found, and vs_explore() shrinks it and prints the report with the
 * line that replays it (VMSIM_REPLAY).  vs_stress_run() returns 0 with
 * @rep->violations 1 and @rep->first the failure's line when a schedule
 * failed, or 0 and no violation when none did within @explore's bounds;
 * -EOPNOTSUPP outside the vCPU build; an error of vs_explore() (the
 * report's text, in @explore_report, says which).
 *
 * Seeds.  @seed decides the writer's choices (operation, range,
 * protection, when to fork, trap timings), the faulters' choices, and
 * the mm's page-table lock layout (bit 0: one lock per mm).  The same
 * seed replays the same writer program for as long as the operations
 * return what they returned before; the thread interleavings differ
 * from run to run, and so do the outcomes that depend on them: whether
 * a faulter answered a trap in time (a trap nobody answered skips its
 * operation), an operation that found the page pool empty, when the
 * run reaches its fault target.  Past the first such difference the
 * writer's program differs too.  A violation found with a seed is
 * therefore made likely, not certain, by running that seed again: it
 * may take a few runs, or a longer one (larger @faults, @ops and
 * @max_ms).  @runs repeats a configuration with fresh seeds; one clean
 * run is not evidence that a kind or strategy is correct.
 */
#ifndef VMSIM_CHECK_STRESS_H
#define VMSIM_CHECK_STRESS_H

#include <stdint.h>
#include <stdio.h>

/* Installed as vmsim/check/stress.h beside vmsim/fault and vmsim/sync. */
#include <vmsim/fault.h>
#include <vmsim/common.h>
#include <vmsim/fail.h>
#include "explore.h"

/* In explore mode (see Explore mode above), the defaults for 0: */
#define VS_STRESS_EXPLORE_FAULTS 48	/* .faults: accesses a schedule */
#define VS_STRESS_EXPLORE_OPS 6		/* .ops: operations a schedule */
#define VS_STRESS_EXPLORE_EVENTS 2000000 /* vs_explore_options.max_events */
#define VS_STRESS_EXPLORE_RUNS 4		/* .runs: writer programs */
#define VS_STRESS_EXPLORE_DEPTH_MAX 16 /* PCT depth if none: 2 ops + 4, at most */

/* Defaults of struct vs_stress_config's bounds (for 0). */
#define VS_STRESS_FAULTS 350000	/* default of vs_stress_config.faults */
#define VS_STRESS_OPS 4000	/* default of vs_stress_config.ops */
#define VS_STRESS_MAX_MS 5000	/* default of vs_stress_config.max_ms */
#define VS_STRESS_WATCHDOG_MS 5000 /* default of .watchdog_ms */
/** VS_STRESS_MSG_MAX - size of vs_stress_report.first */
#define VS_STRESS_MSG_MAX 1024

/**
 * struct vs_stress_config - what vs_stress_run() runs; zero is default
 * @lock_kind: the mmap_lock kind: any name vs_lock_init() accepts,
 *             built in or registered with vs_lock_kind_register();
 *             NULL means "rwsem"
 * @strategy: a value of enum vs_fault_strategy, or one returned by
 *            vs_fault_strategy_register()
 * @seed: the seed of the first run (see Seeds in stress.h); 0 derives
 *        one from @lock_kind and @strategy, the same for every call
 *        with that pair
 * @faults: a run ends once it made this many faults (counted by
 *          vs_fault_stats_get(), process-wide: other threads' faults
 *          count too) and ...
 * @ops: ... the writer this many operations (both), or ...
 * @max_ms: ... after this many milliseconds, whichever of the two
 *          comes first; 0 for each: VS_STRESS_FAULTS, VS_STRESS_OPS,
 *          VS_STRESS_MAX_MS
 * @runs: runs to make, each with a fresh seed (the second and later
 *        derived from @seed, so the series repeats); they stop at the
 *        first that finds a violation; 0 means 1 (in explore mode,
 *        VS_STRESS_EXPLORE_RUNS sharing the schedules)
 * @watchdog_ms: a thread that makes no progress this long stops the
 *               run (see the watchdog above); 0: VS_STRESS_WATCHDOG_MS.
 *               Raise it where threads may be descheduled for seconds
 *               (valgrind, an overloaded machine)
 * @log: where each violation is described, one line each, as it is
 *       found, and one line per run with its seed; NULL: nowhere (the
 *       report keeps the first violation).  In explore mode, the
 *       violation of each failing schedule, those shrinking runs too
 * @explore: NULL, or explore mode (see Explore mode above): each run is
 *	     a vs_explore() with these options; the vCPU build only
 * @explore_report: NULL, or in explore mode receives the exploration's
 *		    report of the last run (what vs_explore() prints)
 * @fail: NULL, or the allocations to fail while the threads run (see
 *	  Allocation failures above): set with vs_fail_set() once the
 *	  run's mm is made (in explore mode, each schedule's), and off
 *	  again before the checks at the end; a run leaves it off, but
 *	  for a stall (-ETIMEDOUT): its threads left blocked may still
 *	  allocate
 */
struct vs_stress_config {
	const char *lock_kind;
	int strategy;
	uint64_t seed;
	unsigned long faults;
	unsigned long ops;
	unsigned int max_ms;
	unsigned int runs;
	unsigned int watchdog_ms;
	FILE *log;
	const struct vs_explore_options *explore;
	struct vs_explore_report *explore_report;
	const struct vs_fail_options *fail;
};

/**
 * struct vs_stress_report - what the runs did and found, summed over
 * the runs
 * @seed: the seed of the last run made, the one that failed if one did
 *        (what to pass as @seed to rerun it)
 * @runs: runs made
 * @faults: faults made during the runs (process-wide, as @faults above)
 * @ops: writer operations
 * @forks: vs_fork() calls
 * @downgrades: write holds downgraded
 * @traps: page-table lock traps sprung
 * @move_traps: windows moved away under the faulters
 * @checks: PTE, RSS and mapcount checks of the whole mm
 * @quiet: accesses judged against the VMAs (no operation overlapped)
 * @data_checks: reads compared with the record expected
 * @race_checks: reads that overlapped one operation, judged
 * @injected: allocation failures injected (with @fail)
 * @op_enomem: operations (fork included) that failed with -ENOMEM
 *	       while a failure was injected, where no hole or want of room
 *	       explains it (each checked as above)
 * @oom: accesses and faults that failed for want of memory
 * @elapsed_ns: how long the threads ran
 * @stats: the change of vs_fault_stats_get() over the run
 * @violations: invariant violations found; a run stops at the first,
 *              so this counts those found before every thread stopped
 * @stuck: threads left blocked after the watchdog stopped a run (their
 *	counts are left out of the fields above)
 * @schedules: in explore mode, the schedules explored (the counts above
 *	       are summed over them; shrinking's replays are left out)
 * @first: the first violation of the failed run, "" if none
 */
struct vs_stress_report {
	uint64_t seed;
	unsigned long runs;
	unsigned long faults;
	unsigned long ops;
	unsigned long forks;
	unsigned long downgrades;
	unsigned long traps;
	unsigned long move_traps;
	unsigned long checks;
	unsigned long quiet;
	unsigned long data_checks;
	unsigned long race_checks;
	unsigned long injected;
	unsigned long op_enomem;
	unsigned long oom;
	int64_t elapsed_ns;
	struct vs_fault_stats stats;
	unsigned long violations;
	unsigned long stuck;
	unsigned long schedules;
	char first[VS_STRESS_MSG_MAX];
};

/**
 * vs_stress_run - run the fault stress test on a lock kind and strategy
 * @cfg: what to run
 * @rep: receives the report, also when a run found violations
 *
 * Each run makes its own mm and starts its writer, prober and two
 * faulter threads; the calling thread watches them (the watchdog) and
 * makes the final checks.  Several calls may go on at once in one
 * process (each run has its own mm; their fault counts mix).  Under
 * VS_RCU=qsbr the calling thread is offline while it watches.
 *
 * Context: any thread not inside vs_rcu_read_lock() and holding no
 * vmsim lock; it is attached (vs_thread_attach()) if it was not.
 * Installs lock trace hooks while a run goes on (vs_lock_trace_set()).
 * Return: 0 when the runs completed: @rep->violations says whether
 * they passed; -ETIMEDOUT when the watchdog stopped a run (@rep is
 * filled: @rep->first says who waited for what, @rep->stuck counts the
 * threads left blocked, whose run is never freed); -EINVAL for a NULL
 * @cfg or @rep, a lock kind that vs_lock_kind_ops() does not know, a
 * strategy that vs_fault_strategy_name() does not know (in explore
 * mode the text of @cfg->explore_report says which), a @fail that
 * vs_fail_check() refuses, or one that
 * vs_mm_create() or vs_mm_set_fault_strategy() refuses; -ENOMEM;
 * -EAGAIN (or another pthread_create() error) when a thread could not
 * be created.  On those errors @rep is zeroed but for @seed (0 when
 * @cfg was refused).  After a violation the mm is destroyed without
 * the final checks, and left behind if that fails.
 */
VS_EXTERN int vs_stress_run(const struct vs_stress_config *cfg,
			    struct vs_stress_report *rep);

#endif /* VMSIM_CHECK_STRESS_H */
