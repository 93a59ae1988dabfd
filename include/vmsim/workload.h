/* SPDX-License-Identifier: MIT */
/*
 * vmsim/workload.h - fault workloads: a setup, a pass that every task
 * runs over and over, a serial phase between passes, barriers, and a
 * measured phase, run on real threads or on virtual CPUs, on the
 * model's memory, on userfaultfd memory or on the host's.
 *
 * A workload is a struct vs_workload_ops.  vs_workload_run() creates
 * the address space (one mm shared by every task, or one per task forked
 * from a parent so that they share only its page pool: will-it-scale's
 * "processes"), calls @setup once, starts the tasks, and measures:
 *
 *   every task:  barrier        (only with @serial)
 *                @pass
 *                barrier        (only with @serial)
 *   task 0:      @serial        decides whether the tasks leave
 *   every task:  barrier, leave or go round  (only with @serial)
 *
 * Without @serial the tasks never wait for one another: each goes
 * round until the measured phase is over.  A pass touches memory
 * through vs_workload_touch(), and maps, unmaps and zaps it through
 * vs_workload_mmap(), vs_workload_munmap() and vs_workload_zap(), which
 * act on the model, the userfaultfd region or the host as the run's
 * backing says: one workload runs on every backing.
 *
 * The built-in workloads (vs_workload_find()): "multi-fault"
 * (Kamezawa's), "pft" (Lameter's page fault test), "page_fault1" and
 * "page_fault2" (will-it-scale's).  docs/workloads.md describes each
 * and shows a workload written out of tree.
 *
 * On virtual CPUs (vmsim/vcpu.h; libvmsim-vcpu) vs_workload_run() runs
 * on vCPU 0 of a running machine and spawns task i on vCPU i (modulo
 * the machine's vCPUs); time is virtual time.
 */
#ifndef VMSIM_WORKLOAD_H
#define VMSIM_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "common.h"
#include "fault.h"
#include "mm.h"

/**
 * struct vs_workload_barrier - a futex barrier for tasks on real threads
 * or on vCPUs (the last to arrive bumps the generation and wakes the
 * others, as glibc's pthread_barrier_wait() does)
 * @count: arrivals of this generation (private)
 * @gen: the generation (private)
 * @parties: how many wait at it (read-only)
 */
struct vs_workload_barrier {
	vs_atomic32_t count, gen;
	unsigned int parties;
};

/**
 * vs_workload_barrier_init - a barrier for @parties callers
 * @b: the barrier
 * @parties: 1 or more
 *
 * Context: before any caller waits at @b.
 * Return: 0, or -EINVAL for a NULL @b or no @parties.
 */
VS_EXTERN int vs_workload_barrier_init(struct vs_workload_barrier *b,
				       unsigned int parties);

/**
 * vs_workload_barrier_wait - wait until @b->parties callers arrived
 * @b: the barrier
 *
 * What each caller did before it arrived happens before what every
 * caller does after it leaves (the last arrival's release store of the
 * generation, the others' acquire loads of it).
 * Context: a thread or a vCPU that may sleep.
 * Return: 1 for the last to arrive, 0 for the others, -EINVAL for a NULL
 * or uninitialised @b.
 */
VS_EXTERN int vs_workload_barrier_wait(struct vs_workload_barrier *b);

/**
 * enum vs_workload_mode - what the tasks share
 * @VS_WORKLOAD_THREADS: one mm (threads of one process)
 * @VS_WORKLOAD_PROCESSES: an mm each, forked from one parent: no
 *                         mmap_lock, VMA or page table shared, only the
 *                         page pool (the page allocator)
 */
enum vs_workload_mode {
	VS_WORKLOAD_THREADS,
	VS_WORKLOAD_PROCESSES,
	VS_WORKLOAD_NR_MODES
};

/**
 * enum vs_workload_backing - what a touch is
 * @VS_WORKLOAD_MODEL: a simulated write, vs_access(), on the model
 * @VS_WORKLOAD_UFFD: a real store to userfaultfd memory whose faults
 *                    the model resolves (vmsim/uffd.h); threads only
 * @VS_WORKLOAD_HOST: a real store to the host's own memory, no model;
 *                    real threads only, threads mode only
 */
enum vs_workload_backing {
	VS_WORKLOAD_MODEL,
	VS_WORKLOAD_UFFD,
	VS_WORKLOAD_HOST,
	VS_WORKLOAD_NR_BACKINGS
};

struct vs_workload;

/**
 * struct vs_workload_task - one task (a thread or a process) of a run
 * @w: the run (read-only)
 * @id: 0..nr_tasks-1 (read-only)
 * @mm: its address space; NULL on the host (read-only)
 * @priv: the workload's, per task
 * @pages: pages it touched so far (read-only; any thread may read it)
 * @passes: passes it finished (read-only)
 * @err: the error that ended its loop (private)
 * @end_ns: when it left its loop (private)
 */
struct vs_workload_task {
	struct vs_workload *w;
	unsigned int id;
	struct vs_mm *mm;
	void *priv;
	VS_CACHELINE_ALIGNED vs_atomic_long_t pages;
	unsigned long passes;
	int err;
	uint64_t end_ns;
};

/**
 * struct vs_workload_ops - a workload
 * @name: what it is called (vs_workload_find())
 * @about: one line that says what a pass does
 * @bytes: what one task faults per pass unless the run says
 * @serial_name: the serial phase's name in a trace ("MADV_DONTNEED
 *               zap"); NULL: "serial"
 * @footprint: the most it has mapped at once, over all tasks: bytes of
 *             address space, and (in *@pages) pages touched; NULL:
 *             @bytes of each task, both
 * @setup: once, before any task starts: map what the tasks share (in
 *         processes mode the tasks' mms are forked after it, so they
 *         inherit its mappings), set up @priv; NULL: nothing
 * @pass: one pass of task @t; returns 0 or a negative errno (which ends
 *        the run).  On vCPUs a pass must take virtual time (touch
 *        memory, map it): the measured phase ends by the vCPUs' clocks
 * @serial: task 0 alone, between two passes of every task, all others
 *          waiting at the barrier; NULL: no barrier, no serial phase
 * @teardown: once, after every task ended, before the mms go; NULL:
 *            nothing
 *
 * Context: every callback runs with no lock of the model held and may
 * sleep.
 */
struct vs_workload_ops {
	const char *name;
	const char *about;
	size_t bytes;
	const char *serial_name;
	size_t (*footprint)(const struct vs_workload *w, size_t *pages);
	int (*setup)(struct vs_workload *w);
	int (*pass)(struct vs_workload_task *t);
	int (*serial)(struct vs_workload *w);
	void (*teardown)(struct vs_workload *w);
};

/**
 * struct vs_workload_hooks - what a tool sees of a run, each optional
 * @task_start: on the task, before its first pass (name it, pin it,
 *              start its clock)
 * @task_end: on the task, after its last pass, its @pages and @passes
 *            final (stop its clock, read its counters); the time it
 *            takes is not in the measured phase
 * @touch_begin, @touch_end: around each vs_workload_touch()
 * @span: a phase that took [@t0_ns, @t1_ns): "setup", "serial",
 *        "teardown"
 * @measure: at the measured phase's start (@end false, on the calling
 *           thread of vs_workload_run()), and at its end: with @serial
 *           on task 0 as it decides to leave, without on the calling
 *           thread once every task left
 * @started: the tasks are under way (start a thread of your own)
 * @stopped: every task left its loop (stop and join yours)
 * @tick: real threads only: on the calling thread of vs_workload_run()
 *        about every 100 ms, with the pages touched so far
 * @arg: the tool's
 */
struct vs_workload_hooks {
	void (*task_start)(struct vs_workload_task *t);
	void (*task_end)(struct vs_workload_task *t);
	void (*touch_begin)(struct vs_workload_task *t);
	void (*touch_end)(struct vs_workload_task *t);
	void (*span)(struct vs_workload *w, const char *name, uint64_t t0_ns,
		     uint64_t t1_ns);
	void (*measure)(struct vs_workload *w, bool end);
	void (*started)(struct vs_workload *w);
	void (*stopped)(struct vs_workload *w);
	void (*tick)(struct vs_workload *w, uint64_t elapsed_ns,
		     unsigned long pages);
	void *arg;
};

/**
 * struct vs_workload_config - a run
 * @ops: the workload
 * @nr_tasks: 1..VS_WORKLOAD_MAX_TASKS
 * @mode: enum vs_workload_mode
 * @backing: enum vs_workload_backing
 * @bytes: what one task faults per pass (the workload's unit), a
 *         multiple of the page size; 0: @ops->bytes
 * @duration_ns: the measured phase; 0: one pass of each task
 * @strategy: the fault strategy (vmsim/fault.h); ignored on the host
 * @uffd_mode: enum vs_uffd_mode on the uffd backing
 * @mm: the mm's options; @mm.pool_pages 0: twice the footprint's pages
 *      and 4096 more
 * @stop: raised by the caller (a signal handler) to end the run at the
 *        end of a pass; NULL: none.  Read past the seams on vCPUs.
 * @hooks: NULL, or what the caller wants to see
 */
struct vs_workload_config {
	const struct vs_workload_ops *ops;
	unsigned int nr_tasks;
	int mode;
	int backing;
	size_t bytes;
	uint64_t duration_ns;
	int strategy;
	int uffd_mode;
	struct vs_mm_options mm;
	vs_atomic32_t *stop;
	const struct vs_workload_hooks *hooks;
};

/** VS_WORKLOAD_MAX_TASKS - the most tasks a run has */
#define VS_WORKLOAD_MAX_TASKS 256

/**
 * struct vs_workload_result - what the measured phase counted
 * @ns: its length, from the first pass's start to the end of the last
 *      pass (virtual ns on vCPUs)
 * @faults: page faults: the model's count, or on the host the process's
 *          minor faults (what perf's page-faults counts)
 * @pages: pages touched, over the tasks
 * @passes: passes finished, over the tasks
 * @st: the model's counters over the phase (zero on the host)
 */
struct vs_workload_result {
	uint64_t ns;
	uint64_t faults;
	uint64_t pages;
	uint64_t passes;
	struct vs_fault_stats st;
};

/**
 * struct vs_workload - a run under way (what the callbacks see)
 * @cfg: its configuration, @bytes filled in (read-only)
 * @mm: the threads' mm, or the processes' parent; NULL on the host
 *      (read-only)
 * @task: the tasks, @cfg.nr_tasks of them (read-only)
 * @priv: the workload's
 * @file: the file of vs_workload_file_create(), or NULL (read-only)
 * @fd: the host's file (a memfd) on the host backing, or -1 (read-only)
 * @uffd: private: the uffd region on the uffd backing
 * @start: private: the barrier the tasks start at
 * @bar: private: the passes' barrier, on a cache line of its own
 * @leave: private: set when the tasks leave, on a line of its own
 * @t0_ns: private: the measured phase's start
 * @deadline_ns: private: its deadline
 * @end_ns: private: its end, task 0's to write
 * @running: private: tasks not yet ended (vCPUs)
 * @st0: private: the fault counters at the start
 * @minflt0: private: the host's minor faults at the start
 * @res: private: where the result goes
 */
struct vs_workload {
	struct vs_workload_config cfg;
	struct vs_mm *mm;
	struct vs_workload_task *task;
	void *priv;
	struct vs_file *file;
	int fd;
	/* private; the barrier and the flag on a line each */
	struct vs_uffd *uffd;
	struct vs_workload_barrier start;
	VS_CACHELINE_ALIGNED struct vs_workload_barrier bar;
	VS_CACHELINE_ALIGNED vs_atomic32_t leave;
	uint64_t t0_ns, deadline_ns, end_ns;
	vs_atomic32_t running;
	struct vs_fault_stats st0;
	uint64_t minflt0;
	struct vs_workload_result *res;
};

/**
 * vs_workload_run - run @cfg: set up, run the tasks through the measured
 * phase, tear down
 * @cfg: the run
 * @res: receives what the measured phase counted
 *
 * Context: a thread attached to vmsim (vs_thread_attach()) with no lock
 * of the model held; in libvmsim-vcpu, vCPU 0 of a running machine.
 * Return: 0; -EINVAL for a bad @cfg or NULL @res; -EOPNOTSUPP for a
 * combination that cannot be (processes on userfaultfd memory or on
 * the host, the host or userfaultfd on vCPUs); the first negative errno
 * of the mm, the region, a callback or a thread.
 */
VS_EXTERN int vs_workload_run(const struct vs_workload_config *cfg,
			      struct vs_workload_result *res);

/**
 * vs_workload_touch - write one byte at @addr, as task @t
 * @t: the task
 * @addr: an address of @t's mm (a real address on uffd and host)
 *
 * Counts a page in @t->pages.
 * Context: task @t, in @pass or @serial.
 * Return: 0; -EINVAL for NULL; what vs_access() returns on the model.
 */
VS_EXTERN int vs_workload_touch(struct vs_workload_task *t,
				unsigned long addr);

/**
 * vs_workload_touch_range - vs_workload_touch() each page of
 * [@addr, @addr + @len), in order
 * @t: the task
 * @addr: the first byte
 * @len: bytes
 *
 * Context: as vs_workload_touch().
 * Return: as vs_workload_touch(), stopping at the first error.
 */
VS_EXTERN int vs_workload_touch_range(struct vs_workload_task *t,
				      unsigned long addr, size_t len);

/**
 * vs_workload_mmap - map @len bytes, read and write, private, into @mm
 * @w: the run
 * @mm: a task's or the run's mm (ignored on the host)
 * @len: bytes, page aligned
 * @file: false: anonymous; true: the run's file
 *        (vs_workload_file_create()) from offset 0
 *
 * Context: @setup, @pass or @serial; takes the mmap_lock for write.
 * Return: the address, or a negative errno: -EINVAL for a NULL @w or no
 * file, what vs_mmap() or mmap(2) returns.
 */
VS_EXTERN long vs_workload_mmap(struct vs_workload *w, struct vs_mm *mm,
				size_t len, bool file);

/**
 * vs_workload_munmap - unmap [@addr, @addr + @len) of @mm
 * Context: as vs_workload_mmap().
 * Return: 0, or what vs_munmap() or munmap(2) returns; -EINVAL for NULL.
 */
VS_EXTERN int vs_workload_munmap(struct vs_workload *w, struct vs_mm *mm,
				 unsigned long addr, size_t len);

/**
 * vs_workload_zap - MADV_DONTNEED [@addr, @addr + @len) of @mm
 * Context: @pass or @serial; takes the mmap_lock for read.
 * Return: 0, or what vs_madvise() or madvise(2) returns; -EINVAL for
 * NULL.
 */
VS_EXTERN int vs_workload_zap(struct vs_workload *w, struct vs_mm *mm,
			      unsigned long addr, size_t len);

/**
 * vs_workload_file_create - the run's file: @size bytes, read-write,
 * zero (a vs_file of the run's page pool; a memfd on the host)
 * @w: the run
 * @size: bytes
 *
 * Mapped with vs_workload_mmap(..., true); freed after @teardown.
 * Context: @setup.
 * Return: 0; -EINVAL for NULL; -EEXIST for a second file; -ENOMEM or
 * what memfd_create(2) or ftruncate(2) returns.
 */
VS_EXTERN int vs_workload_file_create(struct vs_workload *w, size_t size);

/**
 * vs_workload_now_ns - the run's clock: CLOCK_MONOTONIC, or the calling
 * vCPU's virtual time in libvmsim-vcpu
 * Context: any.
 * Return: the time, in nanoseconds.
 */
VS_EXTERN uint64_t vs_workload_now_ns(void);

/**
 * vs_workload_find - a built-in workload by name
 * @name: "multi-fault", "pft", "page_fault1" or "page_fault2"
 * Context: any.
 * Return: its ops, or NULL for NULL or an unknown name.
 */
VS_EXTERN const struct vs_workload_ops *vs_workload_find(const char *name);

/**
 * vs_workload_builtin - the built-in workload @i, in the order above
 * Context: any.
 * Return: its ops, or NULL past the last.
 */
VS_EXTERN const struct vs_workload_ops *vs_workload_builtin(int i);

/**
 * vs_workload_mode_name - "threads" or "processes"
 * @mode: an enum vs_workload_mode
 *
 * Context: any.
 * Return: the name, or NULL for a mode out of range.
 */
VS_EXTERN const char *vs_workload_mode_name(int mode);

/**
 * vs_workload_mode_parse - the mode named @name
 * @name: "threads" or "processes"
 *
 * Context: any.
 * Return: the enum vs_workload_mode, or -EINVAL for NULL or another
 * name.
 */
VS_EXTERN int vs_workload_mode_parse(const char *name);

#endif /* VMSIM_WORKLOAD_H */
