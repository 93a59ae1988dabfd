/* SPDX-License-Identifier: MIT */
/*
 * test/check/internal.h - what the files of the stress run
 * (vmsim/check/stress.h) share: faulting threads against a thread that
 * keeps changing the same few pages.
 *
 * The files, one idea each: model.c (the page model, the operation log
 * and the faulters' model of their data), faulter.c (the faulters),
 * writer.c (the writer's operations and the fork child), checker.c
 * (the invariant checker), watchdog.c (what each thread is doing, and
 * the watchdog that reports a run that stopped moving) and run.c (a
 * run: set up, start the threads, watch them, finish, report).
 *
 * The arena is NP pages in one PTE page (one PTL), the first half
 * mapped private anonymous, the second shared anonymous, between two
 * guard pages that are never mapped.  NF faulter threads loop over it:
 * vs_write of a 16-byte record into the slot of the page that thread
 * owns, vs_read of it back, vs_access, and raw vs_handle_mm_fault(),
 * mostly on a small hot window that the writer also aims at.  The
 * writer thread runs random vs_mprotect (RW, READ, NONE),
 * vs_madvise(MADV_DONTNEED), vs_munmap, vs_mmap(MAP_FIXED), vs_mremap
 * (shrink, grow, move), vs_fork and a downgraded write hold of the
 * mmap_lock over the same ranges; the prober thread answers the
 * downgrade (a reader must get in beside it, a writer must not).
 *
 * What must hold, checked while it runs and again at the end:
 *
 *   - accesses agree with the VMAs.  The writer brackets each operation
 *     with a sequence count (odd inside) and publishes a per-page
 *     shadow (mapped, prot, shared, past EOF) derived from the VMA list
 *     after it.  An access whose window saw no operation (the count
 *     even and unchanged) must succeed exactly when the shadow allows
 *     it: no access succeeds at an unmapped address, no write in a
 *     read-only mapping, nothing in PROT_NONE;
 *   - data written reads back.  Each faulter keeps, per page, the
 *     record it expects in its slot, and replays the writer's
 *     operations on it from an operation log: MADV_DONTNEED of private
 *     memory and a new mapping read zero, munmap forgets, mremap moves
 *     the records.  A quiet read must return the expected record; a
 *     read that overlapped exactly one operation must return what that
 *     operation allows (a successful read of a page being unmapped or
 *     moved away returns the old data, never a fresh zero page); a
 *     write that overlapped one mremap must show up at the destination;
 *   - PTEs agree with the VMAs.  After every operation the writer, under
 *     the mmap_lock for write and the arena's PTL, checks every present
 *     PTE: inside a VMA, WRITE only with VM_WRITE, USER only with an
 *     access bit, the zero page never writable nor shared, a private
 *     writable page mapped once, page types matching the mapping,
 *     mapcounts equal to the PTEs (the fork child's included) and RSS
 *     equal to the PTEs mapping a page.  Faults change PTEs and RSS
 *     only under this PTL, so these are exact even with speculative
 *     faults in flight;
 *   - at teardown, once quiet: refcounts equal mapcounts (plus the
 *     page-cache reference), every page is back in the pool after
 *     munmap and a grace period, and vs_mm_destroy() returns 0.  The
 *     ASan build adds: nothing freed through call_rcu is touched after
 *     its grace period (freed VMAs and pages are poisoned).
 *
 * Races that need a fault to wait at the right moment are made likely
 * on purpose.  The PTL trap (w_trap) has a faulter hold the arena's PTL
 * while the others' faults pile up on it past their last lockless
 * check, then starts a restricting operation and lets the PTL go just
 * after, so that the operation's PTE pass runs before the waiting
 * faults install (vm_sequence under the PTL, the VMA write mark,
 * pte_same).  The move trap (w_move_trap) moves a window the faulters
 * are reading: the old VMA must admit no fault while its PTEs move.
 *
 * A run ends once it made its fault target and the writer its
 * operations, or at its time bound, or when the watchdog finds a
 * thread that stopped moving.  Every failure goes through
 * vs__stress_bug(), which counts it, keeps the first message for the
 * report, describes it on the configured log and stops every thread;
 * the checks that need a quiet, sane mm (the exact ones at the end,
 * teardown) are then skipped.
 */
#ifndef VS_CHECK_INTERNAL_H
#define VS_CHECK_INTERNAL_H

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <vmsim/atomic.h>
#include <vmsim/check/stress.h>
#include <vmsim/fault.h>
#include <vmsim/lock.h>
#include <vmsim/mm.h>
#include <vmsim/page.h>
#include <vmsim/pgtable.h>
#include <vmsim/vcpu.h>

#define NS_PER_MS INT64_C(1000000)
#define NS_PER_SEC INT64_C(1000000000)

/* Longest wait for another thread before the run reports it (10 s). */
#define WAIT_NS (10 * NS_PER_SEC)

/* Longest wait for the prober's read hold beside a downgraded one. */
#define PROBE_NS NS_PER_SEC

#define PG VS_PAGE_SIZE
#define NP 64		/* arena pages; a page mask fits a uint64_t */
#define NF 2		/* faulter threads */
#define HOT 8		/* pages in the hot window */
#define POOL 2048	/* page pool of a run */
#define LOGN 1024	/* operations the log keeps */
#define MAXPEND 64	/* a faulter's unresolved accesses */
#define CHILD_SLOT 2048 /* the writer's slot, in the fork child */

/* The trap (w_trap): states of struct stress.trap, and its times. */
enum { TRAP_IDLE, TRAP_ASK, TRAP_TAKEN, TRAP_HELD, TRAP_GO };
#define TRAP_HOLD_MAX_NS (20 * NS_PER_MS)
#define TRAP_ASK_NS (5 * NS_PER_MS)
#define TRAP_ASK_STEPS 5	/* explored: spins, each letting all run */

/* A faulter lets an operation that waits this long in for a while. */
#define STARVE_NS (50 * 1000)
#define STARVE_NAP_US 100

/* The mm: one PMD, so the arena and its guards share one PTE page. */
#define MM_START 0x40000000UL
#define MM_END (MM_START + VS_PMD_SIZE)
#define ARENA (MM_START + 64 * PG)

/*
 * A run ends, by default, once it made VS_STRESS_FAULTS faults and the
 * writer VS_STRESS_OPS operations, or after VS_STRESS_MAX_MS.  Faults
 * are cheap and many, operations slow and few: the operations are what
 * the faults race against.  Faulters give up this long after the
 * writer's deadline at the most.
 */
#define FAULTER_GRACE_NS (2 * NS_PER_SEC)

#define RW (VS_PROT_READ | VS_PROT_WRITE)

/* The shadow of a page (struct stress.shadow), bits. */
#define SH_MAPPED 1u
#define SH_READ 2u
#define SH_WRITE 4u
#define SH_SHARED 8u
#define SH_EOF 16u	/* a shared page past the end of its shmem file */

/* Operations, as the log records them. */
enum { OP_MPROTECT = 1, OP_DONTNEED, OP_MUNMAP, OP_MMAP, OP_MREMAP };

/*
 * What a thread of the run is doing (struct watch.doing): the logged
 * operations above, then the writer's other work, the faulters'
 * accesses and the prober's steps.  vs__stress_doing_name() names them.
 */
enum {
	DO_NOTHING = 0,
	DO_DOWNGRADE = OP_MREMAP + 1, DO_TRAP, DO_FORK, DO_CHILD, DO_CHECK,
	DO_WRITE, DO_READ, DO_TOUCH, DO_FAULT, DO_HOLD_PTL,
	DO_PROBE_WAIT, DO_PROBE_READ, DO_PROBE_WRITE, DO_NR
};

/* The prober's request word (struct stress.probe). */
enum { PROBE_IDLE, PROBE_ASK, PROBE_DONE, PROBE_QUIT };

/* Locks a thread holds at once, as the watchdog tracks them. */
#define HELD_MAX 4

/*
 * One record in a page: what a faulter writes into its slot.  All zero
 * is what a new page holds.
 */
struct rec {
	uint32_t tag;		/* REC_MAGIC | faulter id */
	uint32_t page;		/* arena page it was written at */
	uint64_t count;		/* the faulter's write counter */
};

#define REC_MAGIC 0x5a5a0000u

/*
 * A log entry: operation j, published before the sequence count goes
 * to 2j + 2.  A seqlock of its own (idx) tells a faulter that lags by
 * more than LOGN operations that the entry was reused.
 */
struct oplog {
	vs_atomic64_t idx;
	vs_atomic64_t w0;	/* type, ok, s, n, d, nn: a byte each */
	vs_atomic64_t w1;	/* DONTNEED: the private mapped pages */
};

struct op {
	int type, ok, s, n, d, nn;
	uint64_t mask;
};

/*
 * An access whose window overlapped operations j_first..j_last: judged
 * once they are in the log.
 */
struct pending {
	int page, write;
	unsigned long j_first, j_last;
	struct rec val;		/* written, or read */
};

struct stress;

/*
 * struct watch - what one thread of a run is doing, for the watchdog.
 * Written by that thread only (the trace hooks of watchdog.c run on
 * it), read by the watchdog without a lock: each word is atomic, the
 * whole a snapshot.
 * @name: "writer", "faulter 0", ...
 * @progress: steps made; the watchdog looks for it to move
 * @done: the thread returned
 * @doing: DO_* | page << 8 | pages << 16 (vs__stress_doing())
 * @waits: the lock it waits for, bit 0 set for the write side; 0: none
 * @wait_since: since when (now_ns())
 * @held: the locks it holds, the same encoding; 0: a free entry
 */
struct watch {
	const char *name;
	vs_atomic64_t progress;
	vs_atomic32_t done;
	vs_atomic64_t doing;
	vs_atomic64_t waits;
	vs_atomic64_t wait_since;
	vs_atomic64_t held[HELD_MAX];
};

struct faulter {
	struct stress *r;
	struct watch w;
	pthread_t tid;
	int id;
	uint64_t rng;
	uint64_t count;		/* records written */
	unsigned long applied;	/* operations replayed on exp[] */
	unsigned char valid[NP];
	struct rec exp[NP];	/* what the slot holds, if valid */
	struct pending pend[MAXPEND];
	int npend;
	int lost;		/* a pending write did not fit: forget all */
	unsigned long lost_after;	/* ... once this operation is done */
	uint64_t odd_seq;	/* an operation seen in flight ... */
	int64_t odd_since;	/* ... since then */
	/* statistics */
	unsigned long iters, quiet, data_checks, race_checks, holds, oom;
};

struct stress {
	/* configuration */
	const char *kind;
	int strategy;
	uint64_t seed;
	struct vs_mm *mm;
	int64_t run_ns;		/* the time bound ... */
	int64_t deadline;	/* ... from the start */
	unsigned long target;	/* faults */
	unsigned long target_ops;
	int64_t watchdog_ns;	/* no progress this long: report */
	FILE *out;		/* the configuration's log, or NULL */
	int explore;		/* a schedule of vs_explore() (run_explore.c) */
	const struct vs_fail_options *fail; /* injected while threads run */
	size_t pool_pages;
	/* shared with the faulters (atomics) */
	vs_atomic64_t seq;	/* 2j + 1 while operation j runs */
	vs_atomic32_t shadow[NP];
	vs_atomic32_t hot;	/* first page of the hot window */
	vs_atomic32_t stop;
	vs_atomic32_t failed;
	vs_atomic64_t violations;
	vs_atomic32_t trap;	/* TRAP_* */
	vs_atomic64_t trap_delay; /* ns the PTL stays held after go */
	vs_atomic32_t probe;	/* PROBE_* */
	vs_atomic32_t probe_wrote; /* the prober got a write hold */
	vs_atomic64_t child_lock; /* the fork child's mmap_lock, or 0 */
	struct oplog log[LOGN];
	char msg[VS_STRESS_MSG_MAX];	/* the first failure */
	/* the writer's own */
	uint64_t rng;
	unsigned long nops;	/* operations logged */
	uint32_t cur[NP];	/* the shadow */
	struct vs_mm *child;
	int child_life;
	uint32_t child_sh[NP];
	unsigned short *pcnt, *ccnt; /* PTEs per pfn: parent, child */
	unsigned long ops[OP_MREMAP + 1], op_fail, forks, checks, traps;
	unsigned long move_traps, downgrades;
	unsigned long op_inj0;	/* vs_fail_injected_here() as it began */
	unsigned long op_enomem, oom, injected;
	/* the threads: writer, prober, faulters */
	pthread_t writer_tid, prober_tid;
	struct watch writer_w, prober_w;
	int writer_started, prober_started;
	int nthreads;		/* faulters started */
	int stuck;		/* threads left blocked: leak the run */
	struct vs_fault_stats st0, st1;
	int64_t t0, t1;
	struct faulter f[NF];
};


/* ---- small helpers ---------------------------------------------------- */

/* xorshift64*: a fast generator per thread. */
static inline uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}

static inline int below(uint64_t *s, int n)
{
	return (int)((rnd(s) >> 33) % (uint64_t)n);
}

static inline unsigned long pg_addr(int p)
{
	return ARENA + (unsigned long)p * PG;
}

static inline int in(int p, int s, int n)
{
	return p >= s && p < s + n;
}

/* CLOCK_MONOTONIC in nanoseconds. */
static inline int64_t now_ns(void)
{
	struct timespec ts;

	if (VS_VCPU && vs_vcpu_self() >= 0)	/* virtual time on a vCPU */
		return (int64_t)vs_vcpu_now_ns();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

/*
 * The run's threads: pthreads natively, work on idle vCPUs of the
 * caller's machine in the vCPU build (vmsim/vcpu.h).  Return: 0 or a
 * negative errno.
 */
int vs__stress_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg);
void vs__stress_thread_join(pthread_t tid);

/* May an access of a page in state @st succeed? */
static inline int allowed(uint32_t st, int write)
{
	if (!(st & SH_MAPPED) || (st & SH_EOF))
		return 0;
	return (st & (write ? SH_WRITE : SH_READ)) != 0;
}

static inline int rec_zero(const struct rec *v)
{
	return !v->tag && !v->page && !v->count;
}

static inline int rec_eq(const struct rec *a, const struct rec *b)
{
	return a->tag == b->tag && a->page == b->page && a->count == b->count;
}

/* ---- model.c ------------------------------------------------------------ */

void vs__stress_bug(struct stress *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void vs__stress_violation(struct stress *r, const char *msg);
int vs__stress_failed(struct stress *r);
void vs__stress_nap_us(struct stress *r, unsigned int us);
void vs__stress_spin_ns(struct stress *r, int64_t ns);
bool vs__stress_wait_eq(vs_atomic32_t *word, uint32_t want,
			int64_t timeout_ns);
bool vs__stress_wait(struct stress *r, vs_atomic32_t *word, uint32_t want,
		     int64_t timeout_ns);
void vs__stress_set_word(vs_atomic32_t *word, uint32_t val);
int vs__stress_fault_result(uint32_t st, int write, int exec);
const char *vs__stress_fault_str(int ret, char *buf, size_t len);
const char *vs__stress_st_str(uint32_t st, char *buf);
void vs__stress_log_put(struct stress *r, unsigned long j,
			const struct op *o);
void vs__stress_set_zero(struct faulter *f, int s, int n);
void vs__stress_catch_up(struct faulter *f, unsigned long upto);

/* ---- run.c ---------------------------------------------------------------- */

int vs__stress_new(const struct vs_stress_config *cfg, const char *kind,
		   uint64_t seed, struct stress **rp);
void vs__stress_free(struct stress *r);
int vs__stress_setup(struct stress *r);
void vs__stress_fail_on(struct stress *r);
void vs__stress_fail_off(struct stress *r);
void vs__stress_faulter_init(struct stress *r, int i);
void *vs__stress_writer_main(void *arg);
void vs__stress_finish(struct stress *r);
void vs__stress_add_report(struct stress *r, struct vs_stress_report *rep);

/* ---- run_explore.c (the explore mode, vmsim/check/stress.h) ---------------- */

int vs__stress_explore(const struct vs_stress_config *cfg, const char *kind,
		       uint64_t seed, struct vs_stress_report *rep);

/* ---- faulter.c, writer.c, checker.c ---------------------------------- */

void *vs__stress_faulter_main(void *arg);
void *vs__stress_prober_main(void *arg);
int vs__stress_read_state(struct stress *r, struct vs_mm *mm, uint32_t *sh);
void vs__stress_writer_op(struct stress *r);
void vs__stress_w_child(struct stress *r, int fork_now);
void vs__stress_child_destroy(struct stress *r);
void vs__stress_check_mm(struct stress *r, int quiet);
void vs__stress_final_data(struct stress *r);
void vs__stress_check_teardown(struct stress *r);

/* ---- watchdog.c --------------------------------------------------------- */

void vs__stress_watch_init(struct watch *w, const char *name);
void vs__stress_watch_attach(struct watch *w);
void vs__stress_watch_done(struct watch *w);
void vs__stress_doing(struct watch *w, int what, int page, int pages);
const char *vs__stress_doing_name(int what);
const char *vs__stress_doing_str(uint64_t doing, char *buf, size_t len);
void vs__stress_hooks_get(void);
void vs__stress_hooks_put(void);
int vs__stress_watchdog(struct stress *r);

#endif /* VS_CHECK_INTERNAL_H */
