/* SPDX-License-Identifier: MIT */
/*
 * fault/stress.h - the fault stress run: faulting threads against a
 * thread that keeps changing the same pages, with invariant checks.
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
 * hot window; the calling thread is the writer: random mprotect (RW,
 * READ, NONE), MADV_DONTNEED, munmap, mmap(MAP_FIXED), mremap (shrink,
 * grow, move) and fork over the same pages, plus two traps that make
 * the hard races likely (a faulter holds the page-table lock while the
 * others' faults pile up on it and an operation starts; a window being
 * read is moved away).
 *
 * What is checked (each failure is one violation):
 *
 *   - accesses agree with the VMAs: an access that no operation
 *     overlapped succeeds exactly when the mapping allows it (no access
 *     at an unmapped address or a guard page, no write to a read-only
 *     mapping, nothing in PROT_NONE, SIGBUS past the end of a shmem
 *     file) and vs_handle_mm_fault() returns exactly the VM_FAULT_* it
 *     should;
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
 *   - at the end, once quiet: refcounts equal mapcounts (plus the
 *     page-cache reference), every record reads back, every page is
 *     back in the pool after munmap and a grace period, and
 *     vs_mm_destroy() succeeds;
 *   - no thread is stuck: a faulter that does not finish within 20 s of
 *     being told to stop is a violation (a lock that lost a wakeup).
 *     A writer stuck in a broken lock cannot be told apart from a slow
 *     one: then vs_stress_run() does not return, so run it under a
 *     timeout (a Check test case has one).
 *
 * A use after free (a VMA or page freed before its grace period) is
 * not seen by vs_stress_run() itself; an AddressSanitizer build reports
 * it (freed VMAs and pages are poisoned).
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
 * @max_ms).
 */
#ifndef VS_FAULT_STRESS_H
#define VS_FAULT_STRESS_H

#include <stdint.h>
#include <stdio.h>

#include "../sync/common.h"
#include "fault.h"

/* Defaults of struct vs_stress_config's bounds (for 0). */
#define VS_STRESS_FAULTS 350000	/* default of vs_stress_config.faults */
#define VS_STRESS_OPS 4000	/* default of vs_stress_config.ops */
#define VS_STRESS_MAX_MS 5000	/* default of vs_stress_config.max_ms */

/**
 * struct vs_stress_config - what vs_stress_run() runs; zero is default
 * @lock_kind: the mmap_lock kind: any name vs_lock_init() accepts,
 *             built in or registered with vs_lock_kind_register();
 *             NULL means "rwsem"
 * @strategy: a value of enum vs_fault_strategy, or one returned by
 *            vs_fault_strategy_register()
 * @seed: the seed (see Seeds in stress.h); 0 derives one from
 *        @lock_kind and @strategy, the same for every run of that pair
 * @faults: the run ends once it made this many faults (counted by
 *          vs_fault_stats_get(), process-wide: other threads' faults
 *          count too) ...
 * @ops: ... and the writer this many operations, or ...
 * @max_ms: ... after this many milliseconds, whichever comes first;
 *          0 for each: VS_STRESS_FAULTS, VS_STRESS_OPS, VS_STRESS_MAX_MS
 * @log: where each violation is described, one line each, as it is
 *       found; NULL: nowhere (the report keeps the first)
 */
struct vs_stress_config {
	const char *lock_kind;
	int strategy;
	uint64_t seed;
	unsigned long faults;
	unsigned long ops;
	unsigned int max_ms;
	FILE *log;
};

/**
 * struct vs_stress_report - what a run did and found
 * @seed: the seed the run used (what to pass as @seed to rerun it)
 * @faults: faults made during the run (process-wide, as @faults above)
 * @ops: writer operations
 * @forks: vs_fork() calls
 * @traps: page-table lock traps sprung
 * @move_traps: windows moved away under the faulters
 * @checks: PTE, RSS and mapcount checks of the whole mm
 * @quiet: accesses judged against the VMAs (no operation overlapped)
 * @data_checks: reads compared with the record expected
 * @race_checks: reads that overlapped one operation, judged
 * @elapsed_ns: how long the threads ran
 * @stats: the change of vs_fault_stats_get() over the run
 * @violations: invariant violations found; the run stops at the first,
 *              so this counts those found before every thread stopped
 * @first: the first violation, "" if none
 */
struct vs_stress_report {
	uint64_t seed;
	unsigned long faults;
	unsigned long ops;
	unsigned long forks;
	unsigned long traps;
	unsigned long move_traps;
	unsigned long checks;
	unsigned long quiet;
	unsigned long data_checks;
	unsigned long race_checks;
	int64_t elapsed_ns;
	struct vs_fault_stats stats;
	unsigned long violations;
	char first[256];
};

/**
 * vs_stress_run - run the fault stress test on a lock kind and strategy
 * @cfg: what to run
 * @rep: receives the report, also when the run found violations
 *
 * Makes its own mm, starts two faulter threads and joins them; the
 * calling thread is the writer.  Several runs may go on at once in one
 * process (each has its own mm; their fault counts mix).  Under
 * VS_RCU=qsbr the calling thread passes quiescent states.
 *
 * Context: any thread not inside vs_rcu_read_lock() and holding no
 * vmsim lock; it is attached (vs_thread_attach()) if it was not.
 * Return: 0 when the run completed: @rep->violations says whether it
 * passed; -EINVAL for a NULL @cfg or @rep, a lock kind that
 * vs_lock_kind_ops() does not know, a strategy that
 * vs_fault_strategy_name() does not know, or one that vs_mm_create()
 * or vs_mm_set_fault_strategy() refuses; -ENOMEM; -EAGAIN (or another
 * pthread_create() error) when a thread could not be created.  On an
 * error @rep is zeroed but for @seed (0 when @cfg was refused).  When a
 * faulter is stuck (a violation), the run's memory and mm are left to
 * it rather than freed under it; after any other violation the mm is
 * destroyed without the final checks, and left behind if that fails.
 */
VS_EXTERN int vs_stress_run(const struct vs_stress_config *cfg,
			    struct vs_stress_report *rep);

#endif /* VS_FAULT_STRESS_H */
