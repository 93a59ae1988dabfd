/* SPDX-License-Identifier: MIT */
/*
 * fault/stress.c - the fault stress run (fault/stress.h): faulting
 * threads against a thread that keeps changing the same few pages.
 *
 * The arena is NP pages in one PTE page (one PTL), the first half
 * mapped private anonymous, the second shared anonymous, between two
 * guard pages that are never mapped.  NF faulter threads loop over it:
 * vs_write of a 16-byte record into the slot of the page that thread
 * owns, vs_read of it back, vs_access, and raw vs_handle_mm_fault(),
 * mostly on a small hot window that the writer also aims at.  The
 * writer (the caller's thread) runs random vs_mprotect (RW, READ,
 * NONE), vs_madvise(MADV_DONTNEED), vs_munmap, vs_mmap(MAP_FIXED),
 * vs_mremap (shrink, grow, move) and vs_fork over the same ranges.
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
 * operations, or at its time bound.  Every failure goes through bug(),
 * which counts it, keeps the first message for the report, describes
 * it on the configured log and stops every thread; the checks that
 * need a quiet, sane mm (the exact ones at the end, teardown) are then
 * skipped.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../sync/atomic.h"
#include "../sync/lock.h"
#include "../sync/rcu.h"
#include "../sync/thread.h"
#include "../sync/wait.h"
#include "../vm/file.h"
#include "../vm/mm.h"
#include "../vm/page.h"
#include "../vm/pgtable.h"
#include "fault.h"
#include "stress.h"

#define NS_PER_MS INT64_C(1000000)
#define NS_PER_SEC INT64_C(1000000000)

/* Longest wait for another thread before the run reports it (10 s). */
#define WAIT_NS (10 * NS_PER_SEC)

/* A faulter not joined this long after the stop is stuck. */
#define JOIN_BOUND_S 20

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

static const char *const op_names[] = {
	"?", "mprotect", "dontneed", "munmap", "mmap", "mremap"
};

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

struct faulter {
	struct stress *r;
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
	unsigned long iters, quiet, data_checks, race_checks, holds;
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
	FILE *out;		/* the configuration's log, or NULL */
	/* shared with the faulters (atomics) */
	vs_atomic64_t seq;	/* 2j + 1 while operation j runs */
	vs_atomic32_t shadow[NP];
	vs_atomic32_t hot;	/* first page of the hot window */
	vs_atomic32_t stop;
	vs_atomic32_t failed;
	vs_atomic64_t violations;
	vs_atomic32_t trap;	/* TRAP_* */
	vs_atomic64_t trap_delay; /* ns the PTL stays held after go */
	struct oplog log[LOGN];
	char msg[640];		/* the first failure; read after joins */
	/* the writer's own */
	uint64_t rng;
	unsigned long nops;	/* operations logged */
	uint32_t cur[NP];	/* the shadow */
	struct vs_mm *child;
	int child_life;
	uint32_t child_sh[NP];
	unsigned short *pcnt, *ccnt; /* PTEs per pfn: parent, child */
	unsigned long ops[OP_MREMAP + 1], op_fail, forks, checks, traps;
	unsigned long move_traps;
	int nthreads;		/* faulters started */
	int stuck;		/* a faulter was not joined: leak the run */
	struct vs_fault_stats st0, st1;
	int64_t t0, t1;
	struct faulter f[NF];
};

/* ---- helpers ------------------------------------------------------------ */

/* xorshift64*: a fast generator per thread. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}

static int below(uint64_t *s, int n)
{
	return (int)((rnd(s) >> 33) % (uint64_t)n);
}

static unsigned long pg_addr(int p)
{
	return ARENA + (unsigned long)p * PG;
}

/*
 * bug - report a violation: count it, keep the first message for the
 * report, describe it on the log, and stop everyone.  The message
 * stays in r->msg for the report, which reads it after the joins.
 * Context: any thread of the run.
 */
static void bug(struct stress *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void bug(struct stress *r, const char *fmt, ...)
{
	uint32_t zero = 0;
	char msg[sizeof(r->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (vs_cmpxchg(&r->failed, &zero, 1))
		memcpy(r->msg, msg, sizeof(msg));
	vs_fetch_add(&r->violations, 1);
	if (r->out)
		fprintf(r->out, "vs_stress %s/%s seed %#" PRIx64 ": %s\n",
			r->kind, vs_fault_strategy_name(r->strategy),
			r->seed, msg);
	vs_write_once(&r->stop, 1);
}

static int found_bug(struct stress *r)
{
	return vs_read_once(&r->failed) != 0;
}

/* ---- time and waiting ---------------------------------------------------- */

/* CLOCK_MONOTONIC in nanoseconds. */
static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

/*
 * Sleep @us microseconds, offline for RCU: under urcu-qsbr a sleeping
 * attached thread would otherwise hold up every grace period.
 */
static void nap_us(unsigned int us)
{
	struct timespec ts = { .tv_sec = us / 1000000,
			       .tv_nsec = (long)(us % 1000000) * 1000 };

	vs_rcu_thread_offline();
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	vs_rcu_thread_online();
}

/* Busy-wait @ns nanoseconds: a short critical section. */
static void spin_ns(int64_t ns)
{
	int64_t end = now_ns() + ns;

	while (now_ns() < end)
		vs_cpu_relax();
}

/*
 * wait_eq - wait until *@word == @want (acquire), for @timeout_ns, in
 * 1 ms futex sleeps (which put a qsbr thread offline).  Context: not
 * inside an RCU read-side critical section.  Return: true when seen.
 */
static bool wait_eq(vs_atomic32_t *word, uint32_t want, int64_t timeout_ns)
{
	int64_t deadline = now_ns() + timeout_ns;
	uint32_t cur;

	while ((cur = vs_load_acquire(word)) != want) {
		if (now_ns() > deadline)
			return false;
		vs_futex_wait(word, cur, NS_PER_MS);
	}
	return true;
}

/* Store @val (release) and wake every waiter on @word. */
static void set_word(vs_atomic32_t *word, uint32_t val)
{
	vs_store_release(word, val);
	vs_futex_wake(word, INT32_MAX);
}

/* ---- the model of a page ------------------------------------------------- */

/* May an access of a page in state @st succeed? */
static int allowed(uint32_t st, int write)
{
	if (!(st & SH_MAPPED) || (st & SH_EOF))
		return 0;
	return (st & (write ? SH_WRITE : SH_READ)) != 0;
}

/* What vs_handle_mm_fault() returns for a page in state @st. */
static int fault_result(uint32_t st, int write, int exec)
{
	if (!(st & SH_MAPPED) || exec)
		return VS_VM_FAULT_SIGSEGV;	/* no VMA has VM_EXEC */
	if (!(st & (write ? SH_WRITE : SH_READ)))
		return VS_VM_FAULT_SIGSEGV;
	return st & SH_EOF ? VS_VM_FAULT_SIGBUS : 0;
}

static const char *st_str(uint32_t st, char *buf)
{
	snprintf(buf, 32, "%s%c%c%s%s", st & SH_MAPPED ? "" : "unmapped ",
		 st & SH_READ ? 'r' : '-', st & SH_WRITE ? 'w' : '-',
		 st & SH_SHARED ? " shared" : "", st & SH_EOF ? " eof" : "");
	return buf;
}

static int rec_zero(const struct rec *v)
{
	return !v->tag && !v->page && !v->count;
}

static int rec_eq(const struct rec *a, const struct rec *b)
{
	return a->tag == b->tag && a->page == b->page && a->count == b->count;
}

/* ---- the operation log --------------------------------------------------- */

static uint64_t op_pack(const struct op *o)
{
	return (uint64_t)o->type | (uint64_t)(o->ok & 0xff) << 8 |
	       (uint64_t)o->s << 16 | (uint64_t)o->n << 24 |
	       (uint64_t)o->d << 32 | (uint64_t)o->nn << 40;
}

static void op_unpack(uint64_t w0, uint64_t w1, struct op *o)
{
	o->type = (int)(w0 & 0xff);
	o->ok = (int)((w0 >> 8) & 0xff);
	o->s = (int)((w0 >> 16) & 0xff);
	o->n = (int)((w0 >> 24) & 0xff);
	o->d = (int)((w0 >> 32) & 0xff);
	o->nn = (int)((w0 >> 40) & 0xff);
	o->mask = w1;
}

/*
 * Publish operation @j.  Context: the writer, before the sequence count
 * goes even (whose fully ordered add also orders the entry before it).
 */
static void log_put(struct stress *r, unsigned long j, const struct op *o)
{
	struct oplog *e = &r->log[j % LOGN];

	vs_write_once(&e->idx, UINT64_MAX);
	/* The invalid index before the new words (pairs with the rmb in
	 * log_get: a reader that saw a new word sees the index change). */
	vs_smp_wmb();
	vs_write_once(&e->w0, op_pack(o));
	vs_write_once(&e->w1, o->mask);
	vs_store_release(&e->idx, j);
}

/* Read operation @j; 0 when its entry was already reused. */
static int log_get(struct stress *r, unsigned long j, struct op *o)
{
	struct oplog *e = &r->log[j % LOGN];
	uint64_t w0, w1;

	if (vs_load_acquire(&e->idx) != j)
		return 0;
	w0 = vs_read_once(&e->w0);
	w1 = vs_read_once(&e->w1);
	vs_smp_rmb();
	if (vs_read_once(&e->idx) != j)
		return 0;
	op_unpack(w0, w1, o);
	return 1;
}

static int in(int p, int s, int n)
{
	return p >= s && p < s + n;
}

/* ---- the faulters' model of their data ----------------------------------- */

static void set_zero(struct faulter *f, int s, int n)
{
	int p;

	for (p = s; p < s + n && p < NP; p++) {
		f->valid[p] = 1;
		memset(&f->exp[p], 0, sizeof(f->exp[p]));
	}
}

static void forget(struct faulter *f, int s, int n)
{
	int p;

	for (p = s; p < s + n && p < NP; p++)
		f->valid[p] = 0;
}

/* Replay operation @o on what the faulter expects in its slots. */
static void replay(struct faulter *f, const struct op *o)
{
	int p, m = o->n < o->nn ? o->n : o->nn;
	unsigned char v[NP];
	struct rec e[NP];

	switch (o->type) {
	case OP_DONTNEED:	/* private memory reads zero again */
		for (p = 0; p < NP; p++)
			if (o->mask & (UINT64_C(1) << p))
				set_zero(f, p, 1);
		break;
	case OP_MUNMAP:
		forget(f, o->s, o->n);
		break;
	case OP_MMAP:
		if (o->ok)
			set_zero(f, o->s, o->n);
		else
			forget(f, o->s, o->n);
		break;
	case OP_MREMAP:
		if (!o->ok) {
			/* Failed: the target and the cut tail may be gone. */
			if (o->nn < o->n)
				forget(f, o->s + o->nn, o->n - o->nn);
			if (o->d != o->s)
				forget(f, o->d, o->nn);
		} else if (o->d == o->s) {
			if (o->nn < o->n)
				forget(f, o->s + o->nn, o->n - o->nn);
			else
				set_zero(f, o->s + o->n, o->nn - o->n);
		} else {
			memcpy(v, f->valid, sizeof(v));
			memcpy(e, f->exp, sizeof(e));
			forget(f, o->s, o->n);
			forget(f, o->d, o->nn);
			for (p = 0; p < m; p++) {
				f->valid[o->d + p] = v[o->s + p];
				f->exp[o->d + p] = e[o->s + p];
			}
			set_zero(f, o->d + m, o->nn - m);
		}
		break;
	default:	/* mprotect keeps the data */
		break;
	}
}

/*
 * A read of page @q->page that overlapped operation @o only, judged
 * against the records before @o: it saw the page before the operation
 * or after it, so its value is one of the two.
 */
static void judge_read(struct faulter *f, const struct pending *q,
		       const struct op *o, unsigned long j)
{
	struct stress *r = f->r;
	int p = q->page, m = o->n < o->nn ? o->n : o->nn, zero_ok = 0;
	const struct rec *alt = NULL;

	if (!f->valid[p])
		return;
	switch (o->type) {
	case OP_DONTNEED:
		zero_ok = (o->mask >> p) & 1;
		break;
	case OP_MMAP:
		zero_ok = in(p, o->s, o->n);
		break;
	case OP_MREMAP:
		if (!o->ok) {
			/* What a failure leaves is not modelled. */
			if (in(p, o->s, o->n > o->nn ? o->n : o->nn) ||
			    in(p, o->d, o->nn))
				return;
		} else if (o->d == o->s) {
			/* grown in place: the page was a hole before */
			if (in(p, o->s + o->n, o->nn - o->n))
				return;
		} else if (in(p, o->d, m)) {
			if (!f->valid[o->s + p - o->d])
				return;
			alt = &f->exp[o->s + p - o->d];
		} else if (in(p, o->d, o->nn)) {
			zero_ok = 1;
		}
		/* A page moved or cut away: only its old contents. */
		break;
	default:	/* mprotect, munmap: the old contents */
		break;
	}
	f->race_checks++;
	if (rec_eq(&q->val, &f->exp[p]) || (zero_ok && rec_zero(&q->val)) ||
	    (alt && rec_eq(&q->val, alt)))
		return;
	bug(r, "faulter %d: page %d read {%#x %u %" PRIu64 "} during %s "
	    "(op %lu: s %d n %d d %d nn %d ok %d), expected {%#x %u %"
	    PRIu64 "}%s", f->id, p, q->val.tag, q->val.page, q->val.count,
	    op_names[o->type], j, o->s, o->n, o->d, o->nn, o->ok,
	    f->exp[p].tag, f->exp[p].page, f->exp[p].count,
	    zero_ok ? " or zero" : alt ? " or the moved page" : "");
}

/*
 * A successful write that overlapped operation @o only, after @o was
 * replayed.  It happened before the operation or after it.
 */
static void judge_write(struct faulter *f, const struct pending *q,
			const struct op *o)
{
	int p = q->page, m = o->n < o->nn ? o->n : o->nn;

	switch (o->type) {
	case OP_DONTNEED:
		if ((o->mask >> p) & 1) {
			forget(f, p, 1);	/* zapped before or not */
			return;
		}
		break;
	case OP_MMAP:
	case OP_MUNMAP:
		if (in(p, o->s, o->n)) {
			forget(f, p, 1);
			return;
		}
		break;
	case OP_MREMAP:
		if (o->nn < o->n && in(p, o->s + o->nn, o->n - o->nn)) {
			forget(f, p, 1);	/* cut off, before or not */
			return;
		}
		if (o->d == o->s)	/* in place: the rest stays */
			break;
		if (in(p, o->d, o->nn)) {
			forget(f, p, 1);	/* the old or the new page */
			return;
		}
		if (o->ok && in(p, o->s, m)) {
			/* It succeeded at the old place, so before the
			 * move: the page carried it along. */
			f->valid[o->d + p - o->s] = 1;
			f->exp[o->d + p - o->s] = q->val;
			return;
		}
		break;
	default:
		break;
	}
	f->valid[p] = 1;
	f->exp[p] = q->val;
}

/*
 * Replay the operations before @upto (those the sequence count shows
 * complete), judging the pending accesses each one ends.
 */
static void catch_up(struct faulter *f, unsigned long upto)
{
	struct stress *r = f->r;
	struct pending *q;
	unsigned long j;
	struct op o;
	int i, k;

	for (j = f->applied; j < upto; j++) {
		if (!log_get(r, j, &o)) {
			/* Lagged past the log: start from nothing known. */
			memset(f->valid, 0, sizeof(f->valid));
			for (i = k = 0; i < f->npend; i++)
				if (f->pend[i].j_last >= upto)
					f->pend[k++] = f->pend[i];
			f->npend = k;
			f->lost = 0;
			f->applied = upto;
			return;
		}
		for (i = 0; i < f->npend; i++) {
			q = &f->pend[i];
			if (!q->write && q->j_first == j && q->j_last == j)
				judge_read(f, q, &o, j);
		}
		replay(f, &o);
		for (i = 0; i < f->npend; i++) {
			q = &f->pend[i];
			if (!q->write || j < q->j_first || j > q->j_last)
				continue;
			if (q->j_first == q->j_last) {
				judge_write(f, q, &o);
				continue;
			}
			/* Several operations: the data may be at the page
			 * or wherever one of them moved it. */
			forget(f, q->page, 1);
			if (o.type == OP_MREMAP && o.ok)
				forget(f, o.d, o.nn);
		}
		for (i = k = 0; i < f->npend; i++)
			if (f->pend[i].j_last > j)
				f->pend[k++] = f->pend[i];
		f->npend = k;
		if (f->lost && j >= f->lost_after) {
			memset(f->valid, 0, sizeof(f->valid));
			f->lost = 0;
		}
	}
	f->applied = upto;
}

/*
 * Is a write still pending?  A read after it is not judged: the write
 * may have landed at its page or, moved by mremap, at the page read.
 */
static int pending_write(struct faulter *f)
{
	int i;

	for (i = 0; i < f->npend; i++)
		if (f->pend[i].write)
			return 1;
	return 0;
}

/* ---- the faulters ------------------------------------------------------ */

/* Pick a page: the hot window mostly, a guard page now and then (-1). */
static int pick_page(struct faulter *f)
{
	int x = below(&f->rng, 100);

	if (x < 3)
		return -1;
	if (vs_read_once(&f->r->trap) == TRAP_HELD)	/* pile up */
		return (int)vs_read_once(&f->r->hot) + below(&f->rng, 2);
	if (x < 65)
		return (int)vs_read_once(&f->r->hot) + below(&f->rng, HOT);
	return below(&f->rng, NP);
}

static unsigned long slot_addr(struct faulter *f, int p)
{
	if (p < 0)
		return (below(&f->rng, 2) ? ARENA - PG : ARENA + NP * PG) +
		       512 + 64 * (unsigned long)f->id;
	return pg_addr(p) + 512 + 64 * (unsigned long)f->id;
}

/* What any read of our slot may hold: zeroes or one of our records. */
static void check_own(struct faulter *f, int p, const struct rec *v)
{
	if (rec_zero(v) || (v->tag == (REC_MAGIC | (uint32_t)f->id) &&
			    v->count && v->count <= f->count))
		return;
	bug(f->r, "faulter %d: page %d slot holds {%#x %u %" PRIu64
	    "}, not ours", f->id, p, v->tag, v->page, v->count);
}

/*
 * The trap (see w_trap): hold the arena's PTL, taken as the MMU walk
 * takes it (under RCU, no mmap_lock), until the writer says go, then a
 * few microseconds more.  Context: a faulter that won the request.
 */
static void hold_ptl(struct faulter *f)
{
	struct stress *r = f->r;
	int64_t end = now_ns() + TRAP_HOLD_MAX_NS;
	vs_spinlock_t *ptl;
	int locked;

	vs_rcu_read_lock();
	locked = vs_pte_offset_map_lock(&r->mm->pgtable, ARENA, &ptl) != NULL;
	set_word(&r->trap, TRAP_HELD);
	/* Spin, not sleep: the release must follow "go" closely. */
	while (vs_load_acquire(&r->trap) != TRAP_GO &&
	       now_ns() < end)
		vs_cpu_relax();
	spin_ns(vs_read_once(&r->trap_delay));
	if (locked)
		vs_pte_unmap_unlock(ptl);
	vs_rcu_read_unlock();
	set_word(&r->trap, TRAP_IDLE);
	f->holds++;
}

/* One access of a faulter, from its choice to its verdict. */
struct access {
	int p, act, write, exec, ok, ret;
	unsigned long addr;
	uint64_t s1, s2;	/* the sequence count before and after */
	uint32_t st;		/* the shadow of the page before */
	struct rec v;		/* written, or read */
};

/* Take the trap when the writer asks for it.  Return: 1 if taken. */
static int take_trap(struct faulter *f)
{
	uint32_t ask = TRAP_ASK;

	if (vs_read_once(&f->r->trap) != TRAP_ASK ||
	    !vs_cmpxchg(&f->r->trap, &ask, TRAP_TAKEN))
		return 0;
	hold_ptl(f);
	return 1;
}

/*
 * An operation waits for the mmap_lock (@s1 odd).  Race it for a
 * while, then let it in: a reader-preferring kind (pthread) would
 * starve it under constant faults.  Return: 1 after letting it in.
 */
static int let_writer_in(struct faulter *f, uint64_t s1)
{
	if (s1 != f->odd_seq) {
		f->odd_seq = s1;
		f->odd_since = now_ns();
	} else if (now_ns() - f->odd_since > STARVE_NS) {
		nap_us(STARVE_NAP_US);
		f->odd_since = now_ns();
		return 1;
	}
	return 0;
}

/*
 * Actions: 0-29 write the record, 30-59 read it, 60-74 touch, 75-99
 * raise a fault.  Beside an operation, mostly read (a read after a
 * pending write is not judged); in a trap, fault (a copy would wait for
 * the PTL outside any fault).
 */
static int pick_act(struct faulter *f, uint64_t s1)
{
	int act = below(&f->rng, 100);

	if ((s1 & 1) && act < 60 && below(&f->rng, 16))
		act = 30 + below(&f->rng, 30);
	if (vs_read_once(&f->r->trap) == TRAP_HELD)
		act = 60 + below(&f->rng, 40);
	return act;
}

/* Raise the fault directly.  Return: 0, or -1 after bug(). */
static int raise_fault(struct faulter *f, struct access *a)
{
	a->exec = below(&f->rng, 50) == 0;	/* a fetch, not a store */
	a->write = !a->exec && below(&f->rng, 2);
	a->ret = vs_handle_mm_fault(f->r->mm, a->addr, VS_FAULT_FLAG_USER |
				    (a->write ? VS_FAULT_FLAG_WRITE : 0) |
				    (a->exec ? VS_FAULT_FLAG_INSTRUCTION :
				     0));
	if (a->ret != 0 && a->ret != VS_VM_FAULT_SIGSEGV &&
	    a->ret != VS_VM_FAULT_SIGBUS) {
		bug(f->r, "faulter %d: vs_handle_mm_fault(page %d, %s)"
		    " returned %#x", f->id, a->p, a->write ? "write" :
		    "read", (unsigned int)a->ret);
		return -1;
	}
	a->ok = a->ret == 0;
	return 0;
}

/* Make the access @a->act says.  Return: 0, or -1 after bug(). */
static int do_access(struct faulter *f, struct access *a)
{
	struct vs_mm *mm = f->r->mm;

	if (a->act < 30) {		/* store a new record */
		a->write = 1;
		a->v.tag = REC_MAGIC | (uint32_t)f->id;
		a->v.page = (uint32_t)a->p;
		a->v.count = ++f->count;
		a->ret = vs_write(mm, a->addr, &a->v, sizeof(a->v));
	} else if (a->act < 60) {	/* read it back */
		memset(&a->v, 0, sizeof(a->v));
		a->ret = vs_read(mm, a->addr, &a->v, sizeof(a->v));
	} else if (a->act < 75) {	/* touch */
		a->write = below(&f->rng, 2);
		a->ret = vs_access(mm, a->addr, 1, a->write);
	} else {			/* raise the fault directly */
		return raise_fault(f, a);
	}
	if (a->ret != 0 && a->ret != -EFAULT) {
		bug(f->r, "faulter %d: access at page %d returned %d",
		    f->id, a->p, a->ret);
		return -1;
	}
	a->ok = a->ret == 0;
	return 0;
}

/* No operation ran beside the access: it must agree with the shadow. */
static void judge_quiet(struct faulter *f, const struct access *a)
{
	struct stress *r = f->r;
	int p = a->p, want;
	char b[32];

	f->quiet++;
	if (a->act >= 75) {
		want = fault_result(a->st, a->write, a->exec);
		if (a->ret != want)
			bug(r, "faulter %d: fault (%s%s) at page %d (%s) "
			    "returned %#x, expected %#x", f->id,
			    a->exec ? "exec " : "", a->write ? "write" :
			    "read", p, st_str(a->st, b),
			    (unsigned int)a->ret, (unsigned int)want);
		return;
	}
	if (a->ok != allowed(a->st, a->write)) {
		bug(r, "faulter %d: %s at page %d (%s) %s", f->id,
		    a->write ? "write" : "read", p, st_str(a->st, b),
		    a->ok ? "succeeded" : "failed");
		return;
	}
	if (!a->ok || a->act >= 60)
		return;
	if (a->write) {
		f->valid[p] = 1;
		f->exp[p] = a->v;
	} else if (f->valid[p]) {
		f->data_checks++;
		if (!rec_eq(&a->v, &f->exp[p]))
			bug(r, "faulter %d: page %d (%s) read {%#x %u %"
			    PRIu64 "}, wrote {%#x %u %" PRIu64 "}", f->id,
			    p, st_str(a->st, b), a->v.tag, a->v.page,
			    a->v.count, f->exp[p].tag, f->exp[p].page,
			    f->exp[p].count);
	}
}

/* Operations j_first..j_last ran beside the access: judge it later. */
static void add_pending(struct faulter *f, const struct access *a)
{
	unsigned long j_first, j_last;

	if (!a->ok || a->act >= 60)
		return;
	j_first = a->s1 / 2;
	j_last = (a->s2 - 1) / 2;
	if (!a->write && (j_first != j_last || f->lost || pending_write(f)))
		return;		/* nothing simple to say */
	if (f->npend == MAXPEND) {
		if (a->write && (!f->lost || f->lost_after < j_last)) {
			f->lost = 1;
			f->lost_after = j_last;
		}
		return;
	}
	f->pend[f->npend++] = (struct pending){ a->p, a->write, j_first,
						j_last, a->v };
}

static void faulter_step(struct faulter *f)
{
	struct stress *r = f->r;
	struct access a = { .p = pick_page(f) };

	a.addr = slot_addr(f, a.p);
	if (take_trap(f))
		return;
	a.s1 = vs_load_acquire(&r->seq);
	catch_up(f, a.s1 / 2);
	if ((a.s1 & 1) && let_writer_in(f, a.s1))
		return;
	a.act = pick_act(f, a.s1);
	/* Acquire: the shadow of the operations the count shows done. */
	a.st = a.p < 0 ? 0 : vs_load_acquire(&r->shadow[a.p]);
	if (do_access(f, &a))
		return;
	/* Full barrier: the access before the second look at the count
	 * (the seqcount reader's rmb; the access also wrote). */
	vs_smp_mb();
	a.s2 = vs_read_once(&r->seq);
	if (a.p < 0) {
		if (a.ok)
			bug(r, "faulter %d: access to a guard page at %#lx "
			    "succeeded", f->id, a.addr);
		return;
	}
	if (a.ok && a.act < 60 && !a.write)
		check_own(f, a.p, &a.v);
	if (a.s1 == a.s2 && !(a.s1 & 1))	/* no operation in between */
		judge_quiet(f, &a);
	else
		add_pending(f, &a);
}

/*
 * A faulter thread: steps until the writer says stop, or at the latest
 * FAULTER_GRACE_NS after the deadline (a writer stuck in a lock).
 */
static void *faulter_main(void *arg)
{
	struct faulter *f = arg;
	struct stress *r = f->r;
	int64_t end = r->deadline + FAULTER_GRACE_NS;

	vs_thread_attach();
	while (!vs_load_acquire(&r->stop)) {
		faulter_step(f);
		f->iters++;
		vs_rcu_quiescent_state(); /* urcu-qsbr */
		if (!(f->iters & 1023) && now_ns() > end)
			break;
	}
	return NULL;
}

/* ---- the writer's view of the arena -------------------------------------- */

/*
 * Read the arena's state from the VMA list into @sh, and check that
 * nothing is mapped outside it.  Context: takes @mm's mmap_lock for
 * read.  Return: 0, or -1 after bug().
 */
static int read_state(struct stress *r, struct vs_mm *mm, uint32_t *sh)
{
	unsigned long a, e, fl, pgoff, end = pg_addr(NP);
	struct vs_file *file;
	struct vs_vma *v;
	uint32_t st;
	int err = 0;

	memset(sh, 0, NP * sizeof(*sh));
	vs_mmap_read_lock(mm);
	for (v = vs_find_vma(mm, 0); v; v = vs_find_vma(mm, v->vm_end)) {
		if (v->vm_start < ARENA || v->vm_end > end) {
			bug(r, "a VMA %#lx-%#lx outside the arena %#lx-%#lx",
			    (unsigned long)v->vm_start,
			    (unsigned long)v->vm_end, ARENA, end);
			err = -1;
			break;
		}
		fl = v->vm_flags;
		file = v->vm_file;
		pgoff = v->vm_pgoff;
		st = SH_MAPPED | (fl & VS_VM_READ ? SH_READ : 0) |
		     (fl & VS_VM_WRITE ? SH_WRITE : 0) |
		     (fl & VS_VM_SHARED ? SH_SHARED : 0);
		for (a = v->vm_start, e = v->vm_end; a < e; a += PG)
			sh[(a - ARENA) / PG] = st |
				(file && pgoff + (a - v->vm_start) / PG >=
				 file->nr_pages ? SH_EOF : 0);
	}
	vs_mmap_read_unlock(mm);
	return err;
}

static void op_begin(struct stress *r)
{
	/* Fully ordered: odd before any change (the seqcount writer's
	 * begin; pairs with the faulters' acquire and mb). */
	vs_fetch_add(&r->seq, 1);
}

/*
 * End operation @o: read the new state, compare it with @want where
 * the operation's result is certain (want[p] != ~0), publish it and
 * the log entry, make the count even.
 */
static void op_end(struct stress *r, struct op *o, const uint32_t *want)
{
	uint32_t sh[NP];
	char b1[32], b2[32];
	int p;

	if (read_state(r, r->mm, sh) == 0)
		for (p = 0; want && p < NP; p++)
			if (want[p] != ~0u && want[p] != sh[p]) {
				bug(r, "%s s %d n %d d %d nn %d returned ok:"
				    " page %d is %s, expected %s",
				    op_names[o->type], o->s, o->n, o->d,
				    o->nn, p, st_str(sh[p], b1),
				    st_str(want[p], b2));
				break;
			}
	for (p = 0; p < NP; p++) {
		r->cur[p] = sh[p];
		vs_write_once(&r->shadow[p], sh[p]);
	}
	log_put(r, r->nops, o);
	r->nops++;
	r->ops[o->type]++;
	if (!o->ok)
		r->op_fail++;
	/* Fully ordered: the shadow and the log before the even count. */
	vs_fetch_add(&r->seq, 1);
}

static void pick_range(struct stress *r, int *s, int *n)
{
	int x = below(&r->rng, 100);

	*s = x < 70 ? (int)vs_read_once(&r->hot) + below(&r->rng, HOT) :
		      below(&r->rng, NP);
	*n = 1 + below(&r->rng, x % 5 ? 4 : 16);
	if (*s + *n > NP)
		*n = NP - *s;
}

static void do_mprotect(struct stress *r, int s, int n, int prot)
{
	struct op o = { OP_MPROTECT, 0, s, n, s, n, 0 };
	uint32_t want[NP];
	int err, p;

	op_begin(r);
	err = vs_mprotect(r->mm, pg_addr(s), (size_t)n * PG, prot);
	if (err && err != -ENOMEM)
		bug(r, "mprotect(page %d, %d pages, %d) returned %d",
		    s, n, prot, err);
	o.ok = err == 0;
	for (p = 0; p < NP; p++) {
		want[p] = ~0u;
		if (o.ok && in(p, s, n))
			want[p] = (r->cur[p] & (SH_MAPPED | SH_SHARED |
						SH_EOF)) |
				  (prot & VS_PROT_READ ? SH_READ : 0) |
				  (prot & VS_PROT_WRITE ? SH_WRITE : 0);
		else if (o.ok)
			want[p] = r->cur[p];
	}
	op_end(r, &o, want);
}

static void do_dontneed(struct stress *r, int s, int n)
{
	struct op o = { OP_DONTNEED, 0, s, n, s, n, 0 };
	int err, p;

	for (p = s; p < s + n; p++)
		if ((r->cur[p] & (SH_MAPPED | SH_SHARED)) == SH_MAPPED)
			o.mask |= UINT64_C(1) << p;
	op_begin(r);
	err = vs_madvise(r->mm, pg_addr(s), (size_t)n * PG,
			 VS_MADV_DONTNEED);
	if (err && err != -ENOMEM)
		bug(r, "madvise(page %d, %d pages) returned %d", s, n,
		    err);
	o.ok = err == 0;
	op_end(r, &o, r->cur);	/* no mapping changes */
}

static void do_munmap(struct stress *r, int s, int n)
{
	struct op o = { OP_MUNMAP, 0, s, n, s, n, 0 };
	uint32_t want[NP];
	int err, p;

	op_begin(r);
	err = vs_munmap(r->mm, pg_addr(s), (size_t)n * PG);
	if (err)
		bug(r, "munmap(page %d, %d pages) returned %d", s, n,
		    err);
	o.ok = err == 0;
	for (p = 0; p < NP; p++)
		want[p] = in(p, s, n) ? 0 : r->cur[p];
	op_end(r, &o, want);
}

static void w_mprotect(struct stress *r)
{
	static const int prots[] = { RW, RW, RW, VS_PROT_READ, VS_PROT_READ,
				     VS_PROT_READ, VS_PROT_NONE,
				     VS_PROT_NONE };
	int s, n;

	pick_range(r, &s, &n);
	do_mprotect(r, s, n, prots[below(&r->rng, 8)]);
}

static void w_dontneed(struct stress *r)
{
	int s, n;

	pick_range(r, &s, &n);
	do_dontneed(r, s, n);
}

static void w_munmap(struct stress *r)
{
	int s, n;

	pick_range(r, &s, &n);
	do_munmap(r, s, n);
}

/*
 * w_trap - make likely the race that the speculative fault's
 * revalidation under the PTL, the VMA write mark and pte_same exist
 * for: a fault that made its last lockless check, then waits for the
 * PTL while the VMA changes and the change's PTE pass goes first.
 *
 * Zap the hot window, so that faults there install PTEs; have a
 * faulter hold the arena's PTL; nap, so that the other faulters' faults
 * pile up on it (sleeping, past their last check); then start a
 * restricting operation on the hot window and let the PTL go a few
 * microseconds later.  The operation (mmap_lock, VMA changes, no PTL
 * yet) reaches the PTL while still spinning, and a spinner beats the
 * sleepers to it: its PTE pass runs before the waiting faults install.
 * A correct fault then sees the change (vm_sequence, vm_lock_seq, the
 * PTE) or the change waited for it (the VMA write mark); a broken one
 * installs a PTE the checks find.
 */
static void w_trap(struct stress *r)
{
	int hot = (int)vs_read_once(&r->hot), x = below(&r->rng, 4);
	uint32_t old = TRAP_ASK;
	unsigned int nap;

	do_dontneed(r, hot, HOT);
	vs_write_once(&r->trap_delay, (uint64_t)(500 + below(&r->rng, 6000)));
	/* Drawn whether used or not: the writer's next draws do not
	 * depend on whether a faulter came by (a seed replays better). */
	nap = 20 + (unsigned int)below(&r->rng, 60);
	set_word(&r->trap, TRAP_ASK);
	if (!wait_eq(&r->trap, TRAP_HELD, TRAP_ASK_NS) &&
	    vs_cmpxchg(&r->trap, &old, TRAP_IDLE))
		return;		/* no faulter came by: no trap */
	if (wait_eq(&r->trap, TRAP_HELD, TRAP_ASK_NS)) {
		nap_us(nap);
		/* The holder may have given up meanwhile (then IDLE). */
		old = TRAP_HELD;
		if (vs_cmpxchg(&r->trap, &old, TRAP_GO))
			r->traps++;
	}
	if (x == 0)
		do_munmap(r, hot, HOT);
	else
		do_mprotect(r, hot, HOT, x == 1 ? VS_PROT_READ : VS_PROT_NONE);
	/* The holder is gone before anything else. */
	if (!wait_eq(&r->trap, TRAP_IDLE, WAIT_NS))
		bug(r, "the PTL holder did not let go");
}

/*
 * do_mmap - map [s, s + n) anew: private or shared, @prot, populated or
 * not.  Return: 1 when it worked.
 */
static int do_mmap(struct stress *r, int s, int n, int prot, int shared,
		   int populate)
{
	struct op o = { OP_MMAP, 0, s, n, s, n, 0 };
	int p, flags = (shared ? VS_MAP_SHARED : VS_MAP_PRIVATE) |
		       VS_MAP_ANONYMOUS | VS_MAP_FIXED |
		       (populate ? VS_MAP_POPULATE : 0);
	uint32_t want[NP];
	long ret;

	op_begin(r);
	ret = vs_mmap(r->mm, pg_addr(s), (size_t)n * PG, prot, flags, NULL,
		      0);
	if (ret != (long)pg_addr(s))
		bug(r, "mmap(page %d, %d pages, %d, %#x) returned %ld",
		    s, n, prot, (unsigned int)flags, ret);
	o.ok = ret == (long)pg_addr(s);
	for (p = 0; p < NP; p++)
		want[p] = !in(p, s, n) ? r->cur[p] :
			  SH_MAPPED | SH_READ |
			  (prot & VS_PROT_WRITE ? SH_WRITE : 0) |
			  (shared ? SH_SHARED : 0);
	op_end(r, &o, want);
	return o.ok;
}

/*
 * do_mremap - vs_mremap of [s, s + n) to [d, d + nn) (d == s: in place),
 * any result accepted but a wrong address.
 */
static void do_mremap(struct stress *r, int s, int n, int nn, int d)
{
	struct op o = { OP_MREMAP, 0, s, n, d, nn, 0 };
	int flags = d != s ? VS_MREMAP_MAYMOVE | VS_MREMAP_FIXED : 0;
	long ret;

	op_begin(r);
	ret = vs_mremap(r->mm, pg_addr(s), (size_t)n * PG, (size_t)nn * PG,
			flags, flags ? pg_addr(d) : 0);
	o.ok = ret >= 0;
	if (o.ok && ret != (long)pg_addr(d))
		bug(r, "mremap(page %d, %d, %d, %#x, page %d) "
		    "returned %#lx", s, n, nn, (unsigned int)flags, d,
		    (unsigned long)ret);
	else if (!o.ok && ret != -EFAULT && ret != -ENOMEM &&
		 ret != -EINVAL)
		bug(r, "mremap(page %d, %d, %d, %#x, page %d) "
		    "returned %ld", s, n, nn, (unsigned int)flags, d,
		    ret);
	op_end(r, &o, NULL);
}

/*
 * w_move_trap - move a window the faulters are reading.  While an
 * mremap moves PTEs one by one, the old VMA must admit no fault: a
 * page already moved would fault in fresh at the old place, so a read
 * there returns zero and a write is lost when the old range goes.  The
 * VMA write mark keeps per-VMA faults out, vm_sequence speculative
 * ones.  Map a fresh private window, let the faulters fill it (they
 * aim at the hot window), then move it away under them.
 */
static void w_move_trap(struct stress *r)
{
	int s = below(&r->rng, NP - HOT + 1), d, tries;

	for (tries = 0; tries < 16; tries++) {
		d = below(&r->rng, NP - HOT + 1);
		if (d + HOT <= s || d >= s + HOT)
			break;
	}
	if (tries == 16)
		return;
	vs_write_once(&r->hot, (uint32_t)s);
	if (!do_mmap(r, s, HOT, RW, 0, below(&r->rng, 2)))
		return;
	nap_us(50 + (unsigned int)below(&r->rng, 150));
	do_mremap(r, s, HOT, HOT, d);
	r->move_traps++;
}

static void w_mmap(struct stress *r)
{
	int holes[NP], nh = 0, p, s, n;

	pick_range(r, &s, &n);
	for (p = 0; p < NP; p++)
		if (!(r->cur[p] & SH_MAPPED))
			holes[nh++] = p;
	if (nh && below(&r->rng, 10) < 8) {	/* mostly fill a hole */
		s = holes[below(&r->rng, nh)];
		n = 1 + below(&r->rng, 4);
		if (s + n > NP)
			n = NP - s;
	}
	/* The type of the half it starts in. */
	(void)do_mmap(r, s, n, below(&r->rng, 8) ? RW : VS_PROT_READ,
		      s >= NP / 2, !below(&r->rng, 4));
}

/* Shrink or grow in place, or move elsewhere in the arena. */
static void w_mremap(struct stress *r)
{
	int x = below(&r->rng, 100), tries, shared, s, n, nn, d;

	for (tries = 0; tries < 8; tries++) {
		pick_range(r, &s, &n);
		if (r->cur[s] & SH_MAPPED)
			break;
	}
	if (!(r->cur[s] & SH_MAPPED))
		return;
	shared = (r->cur[s] & SH_SHARED) != 0;
	d = s;
	if (x < 35) {			/* shrink */
		if (n < 2)
			return;
		nn = 1 + below(&r->rng, n - 1);
	} else if (x < 60) {		/* grow (shmem would pass EOF) */
		if (shared)
			return;
		nn = n + 1 + below(&r->rng, 3);
		if (s + nn > NP)
			return;
	} else {			/* move */
		nn = shared ? 1 + below(&r->rng, n) :
			      1 + below(&r->rng, n + 2);
		for (tries = 0; tries < 8; tries++) {
			d = below(&r->rng, NP - nn + 1);
			if (d + nn <= s || d >= s + n)
				break;
		}
		if (tries == 8)
			return;
	}
	do_mremap(r, s, n, nn, d);
}

/* ---- the fork child ------------------------------------------------------ */

static void child_destroy(struct stress *r)
{
	int err = vs_mm_destroy(r->child);

	if (err)
		bug(r, "vs_mm_destroy(child) returned %d", err);
	r->child = NULL;
}

/*
 * Fork: the child must look like the parent did at fork time.
 * Context: the writer; nobody else uses the child.
 */
static void child_fork(struct stress *r)
{
	uint32_t sh[NP];
	char b1[32], b2[32];
	int err, p;

	err = vs_fork(r->mm, &r->child);
	if (err) {
		bug(r, "vs_fork returned %d", err);
		r->child = NULL;
		return;
	}
	r->forks++;
	memcpy(r->child_sh, r->cur, sizeof(sh));
	r->child_life = 100 + below(&r->rng, 400);
	if (read_state(r, r->child, sh))
		return;
	for (p = 0; p < NP; p++)
		if (sh[p] != r->child_sh[p]) {
			bug(r, "fork: child page %d is %s, parent's was %s",
			    p, st_str(sh[p], b1), st_str(r->child_sh[p], b2));
			return;
		}
}

/*
 * Age the child: its memory (the writer's slot) must read back what
 * the writer stores there, where its mappings at fork allow it.
 * Context: the writer.
 */
static void child_age(struct stress *r)
{
	struct rec v, got;
	int p, werr, rerr;
	char b1[32];

	if (--r->child_life <= 0) {
		child_destroy(r);
		return;
	}
	p = below(&r->rng, NP);
	v = (struct rec){ REC_MAGIC | 0xff, (uint32_t)p, r->nops + 1 };
	werr = vs_write(r->child, pg_addr(p) + CHILD_SLOT, &v, sizeof(v));
	memset(&got, 0, sizeof(got));
	rerr = vs_read(r->child, pg_addr(p) + CHILD_SLOT, &got, sizeof(got));
	if ((werr == 0) != allowed(r->child_sh[p], 1) ||
	    (rerr == 0) != allowed(r->child_sh[p], 0) ||
	    (werr && werr != -EFAULT) || (rerr && rerr != -EFAULT))
		bug(r, "child page %d (%s): write %d, read %d", p,
		    st_str(r->child_sh[p], b1), werr, rerr);
	else if (!werr && !rec_eq(&got, &v))
		bug(r, "child page %d: read {%#x %u %" PRIu64 "} after "
		    "writing {%#x %u %" PRIu64 "}", p, got.tag, got.page,
		    got.count, v.tag, v.page, v.count);
}

/* Fork (@fork_now, when there is no child), or age the child. */
static void w_child(struct stress *r, int fork_now)
{
	if (!r->child && fork_now)
		child_fork(r);
	else if (r->child)
		child_age(r);
}

/* ---- the invariant checker ----------------------------------------------- */

struct walk_ctx {
	struct stress *r;
	struct vs_mm *mm;
	long pages;
};

/*
 * A present PTE must lie in a VMA that allows what it allows, and map a
 * live page of the right kind.  Context: @mm's mmap_lock held, and the
 * PTL of @pte.  Return: 0, or 1 after bug().
 */
static int check_pte(struct stress *r, struct vs_mm *mm, uint64_t pte,
		     unsigned long addr, const char *who)
{
	struct vs_vma *vma = vs_vma_lookup(mm, addr);
	unsigned long fl, pfn = vs_pte_pfn(pte);
	struct vs_page *page = vs_pfn_to_page(mm->pool, pfn);
	const char *bad = NULL;

	if (!vma)
		bad = "outside every VMA";
	else if ((fl = vma->vm_flags, (pte & VS_PTE_WRITE) &&
		  !(fl & VS_VM_WRITE)))
		bad = "writable in a VMA without VM_WRITE";
	else if ((pte & VS_PTE_USER) &&
		 !(fl & (VS_VM_READ | VS_VM_WRITE | VS_VM_EXEC)))
		bad = "user-accessible in a PROT_NONE VMA";
	else if (!page)
		bad = "mapping a pfn outside the pool";
	else if (pfn == 0 && (pte & VS_PTE_WRITE))
		bad = "mapping the zero page writable";
	else if (pfn == 0 && (fl & VS_VM_SHARED))
		bad = "mapping the zero page in a shared VMA";
	else if (pfn && !vs_page_count(page))
		bad = "mapping a free page";
	else if (pfn && (fl & VS_VM_SHARED) &&
		 !vs_page_test_flags(page, VS_PG_FILE))
		bad = "mapping a non-shmem page in a shared VMA";
	else if (pfn && !(fl & VS_VM_SHARED) &&
		 !vs_page_test_flags(page, VS_PG_ANON))
		bad = "mapping a non-anonymous page in a private VMA";
	if (!bad)
		return 0;
	bug(r, "%s PTE %#" PRIx64 " at %#lx (page %ld) %s", who, pte, addr,
	    ((long)addr - (long)ARENA) / (long)PG, bad);
	return 1;
}

/* Context: vs_pgtable_walk() on the child, under its PTL. */
static int child_pte(vs_atomic64_t *ptep, unsigned long addr, void *arg)
{
	struct walk_ctx *c = arg;
	uint64_t pte = vs_ptep_get(ptep);

	if (check_pte(c->r, c->mm, pte, addr, "child"))
		return 1;
	if (vs_pte_pfn(pte)) {
		c->r->ccnt[vs_pte_pfn(pte)]++;
		c->pages++;
	}
	return 0;
}

static long rss(struct vs_mm *mm)
{
	return vs_get_mm_counter(mm, VS_MM_ANONPAGES) +
	       vs_get_mm_counter(mm, VS_MM_FILEPAGES) +
	       vs_get_mm_counter(mm, VS_MM_SHMEMPAGES);
}

/* The child's PTEs into ccnt[].  Context: the writer (the child is its). */
static void count_child(struct stress *r)
{
	struct walk_ctx c = { r, r->child, 0 };

	memset(r->ccnt, 0, (POOL + 1) * sizeof(*r->ccnt));
	if (!r->child)
		return;
	vs_mmap_write_lock(r->child);
	if (vs_pgtable_walk(&r->child->pgtable, r->child->start,
			    r->child->end, child_pte, &c) == 0 &&
	    c.pages != rss(r->child))
		bug(r, "child: %ld PTEs map pages, RSS %ld", c.pages,
		    rss(r->child));
	vs_mmap_write_unlock(r->child);
}

/*
 * Count the parent's PTEs into pcnt[], each checked against its VMA,
 * and compare RSS with them.  Context: @mm's mmap_lock for write and
 * the arena's PTL.  Return: 0, or 1 after bug().
 */
static int count_parent(struct stress *r, vs_atomic64_t *pte0)
{
	struct vs_mm *mm = r->mm;
	long pages = 0, anon = 0, shmem = 0;
	unsigned long pfn, i;
	uint64_t pte;

	for (i = 0; i < VS_PTRS_PER_TABLE; i++) {
		pte = vs_ptep_get(&pte0[i]);
		if (vs_pte_none(pte))
			continue;
		if (!vs_pte_present(pte) ||
		    check_pte(r, mm, pte, mm->start + i * PG, "parent"))
			return 1;
		pfn = vs_pte_pfn(pte);
		if (!pfn)
			continue;
		r->pcnt[pfn]++;
		pages++;
		if (vs_page_test_flags(vs_pfn_to_page(mm->pool, pfn),
				       VS_PG_ANON))
			anon++;
		else
			shmem++;
	}
	if (pages == rss(mm) &&
	    anon == vs_get_mm_counter(mm, VS_MM_ANONPAGES) &&
	    shmem == vs_get_mm_counter(mm, VS_MM_SHMEMPAGES))
		return 0;
	bug(r, "%ld PTEs map pages (%ld anon, %ld shmem), RSS %ld "
	    "(anon %ld, shmem %ld, file %ld)", pages, anon, shmem,
	    rss(mm), (long)vs_get_mm_counter(mm, VS_MM_ANONPAGES),
	    (long)vs_get_mm_counter(mm, VS_MM_SHMEMPAGES),
	    (long)vs_get_mm_counter(mm, VS_MM_FILEPAGES));
	return 1;
}

/*
 * Each mapped page's mapcount against the PTEs mapping it (pcnt[] and
 * ccnt[]), a private writable page mapped once, the refcount at least
 * the mapcount (plus the page-cache reference), exactly so if @quiet.
 * Context: as count_parent().
 */
static void check_mapcounts(struct stress *r, vs_atomic64_t *pte0,
			    int quiet)
{
	struct vs_page *page;
	unsigned long pfn, i;
	uint32_t mc, rc;
	uint64_t pte;
	long want;

	for (i = 0; i < VS_PTRS_PER_TABLE; i++) {
		pte = vs_ptep_get(&pte0[i]);
		pfn = vs_pte_pfn(pte);
		if (!vs_pte_present(pte) || !pfn)
			continue;
		page = vs_pfn_to_page(r->mm->pool, pfn);
		mc = vs_page_mapcount(page);
		rc = vs_page_count(page);
		want = vs_page_test_flags(page, VS_PG_FILE) ? mc + 1 : mc;
		if (mc != (uint32_t)r->pcnt[pfn] + r->ccnt[pfn] ||
		    (vs_pte_write(pte) && !vs_page_test_flags(page,
							     VS_PG_FILE) &&
		     mc != 1) ||
		    rc < want || (quiet && rc != want)) {
			bug(r, "page %ld (pfn %lu, PTE %#" PRIx64 "): "
			    "mapcount %u, refcount %u; %u PTEs map it "
			    "here, %u in the child", (long)i - 64, pfn, pte,
			    mc, rc, r->pcnt[pfn], r->ccnt[pfn]);
			return;
		}
	}
}

/*
 * check_mm - every present PTE of the mm against its VMA, RSS against
 * the PTEs, each page's mapcount against the PTEs mapping it (the
 * child's too); @quiet (no fault in flight): refcounts exactly.
 *
 * The mm spans one PTE page, so its PTL, with the mmap_lock for write,
 * freezes every PTE and RSS counter: faults of every strategy change
 * them only under it.  Context: the writer.
 */
static void check_mm(struct stress *r, int quiet)
{
	struct vs_mm *mm = r->mm;
	vs_atomic64_t *pte0;
	vs_spinlock_t *ptl;

	r->checks++;
	count_child(r);
	memset(r->pcnt, 0, (POOL + 1) * sizeof(*r->pcnt));
	vs_mmap_write_lock(mm);
	pte0 = vs_pte_offset_map_lock(&mm->pgtable, mm->start, &ptl);
	if (!pte0) {
		if (rss(mm))
			bug(r, "no page table, RSS %ld", rss(mm));
		vs_mmap_write_unlock(mm);
		return;
	}
	if (!count_parent(r, pte0))
		check_mapcounts(r, pte0, quiet);
	vs_pte_unmap_unlock(ptl);
	vs_mmap_write_unlock(mm);
}

/* ---- a run ------------------------------------------------------------- */

/*
 * The seed of a kind and strategy when the configuration has none: for
 * a kind vs_lock_kind_name() lists, the one the stress suite always
 * used (its index * 8 + strategy + 1, times 2^64 / phi); for another,
 * a hash of its name in place of the index.
 */
static uint64_t default_seed(const char *kind, int strategy)
{
	uint64_t idx = UINT64_C(14695981039346656037), seed;
	const char *name, *c;
	int i;

	for (i = 0; (name = vs_lock_kind_name(i)); i++)
		if (strcmp(name, kind) == 0)
			break;
	if (name) {
		idx = (uint64_t)i;
	} else {
		for (c = kind; *c; c++)	/* FNV-1a */
			idx = (idx ^ (unsigned char)*c) *
			      UINT64_C(1099511628211);
	}
	seed = UINT64_C(0x9e3779b97f4a7c15) *
	       (idx * 8 + (uint64_t)strategy + 1);
	return seed ? seed : 1;
}

static void stress_free(struct stress *r)
{
	free(r->pcnt);
	free(r->ccnt);
	free(r);
}

/*
 * Check @cfg and allocate a run for it.
 * Return: 0; -EINVAL for an unknown kind or strategy; -ENOMEM.
 */
static int stress_new(const struct vs_stress_config *cfg,
		      struct stress **rp)
{
	const char *kind = cfg->lock_kind ? cfg->lock_kind : "rwsem";
	struct stress *r;
	int i;

	if (!vs_lock_kind_ops(kind) || !vs_fault_strategy_name(cfg->strategy))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->pcnt = calloc(POOL + 1, sizeof(*r->pcnt));
	r->ccnt = calloc(POOL + 1, sizeof(*r->ccnt));
	if (!r->pcnt || !r->ccnt) {
		stress_free(r);
		return -ENOMEM;
	}
	r->kind = kind;
	r->strategy = cfg->strategy;
	r->seed = cfg->seed ? cfg->seed : default_seed(kind, cfg->strategy);
	r->rng = r->seed | 1;
	r->target = cfg->faults ? cfg->faults : VS_STRESS_FAULTS;
	r->target_ops = cfg->ops ? cfg->ops : VS_STRESS_OPS;
	r->run_ns = (int64_t)(cfg->max_ms ? cfg->max_ms :
			      VS_STRESS_MAX_MS) * NS_PER_MS;
	r->out = cfg->log;
	for (i = 0; i < LOGN; i++)
		vs_atomic_init(&r->log[i].idx, UINT64_MAX);
	*rp = r;
	return 0;
}

/*
 * The mm and the arena: private anonymous then shared anonymous pages.
 * Return: 0 (a wrong result is a bug()); an error of vs_mm_create(),
 * vs_mm_set_fault_strategy() or vs_mmap().
 */
static int setup(struct stress *r)
{
	struct vs_mm_options o = { .lock_kind = r->kind, .pool_pages = POOL,
				   .start = MM_START, .end = MM_END,
				   .ptl_per_mm = (int)(r->seed & 1) };
	long a, want = (long)ARENA;
	int err, p;

	err = vs_mm_create(&r->mm, &o);
	if (err) {
		r->mm = NULL;
		return err;
	}
	err = vs_mm_set_fault_strategy(r->mm, r->strategy);
	if (err)
		return err;
	a = vs_mmap(r->mm, ARENA, NP / 2 * PG, RW, VS_MAP_PRIVATE |
		    VS_MAP_ANONYMOUS | VS_MAP_FIXED, NULL, 0);
	if (a == want) {
		want = (long)pg_addr(NP / 2);
		a = vs_mmap(r->mm, pg_addr(NP / 2), NP / 2 * PG, RW,
			    VS_MAP_SHARED | VS_MAP_ANONYMOUS | VS_MAP_FIXED,
			    NULL, 0);
	}
	if (a < 0)
		return (int)a;
	if (a != want)
		bug(r, "setup: mmap at %#lx returned %#lx", want, a);
	else if (read_state(r, r->mm, r->cur) == 0)
		for (p = 0; p < NP; p++)
			vs_atomic_init(&r->shadow[p], r->cur[p]);
	return 0;
}

/* Start the faulters.  Return: 0, or -errno of pthread_create(). */
static int start_faulters(struct stress *r)
{
	struct faulter *f;
	int i, err;

	for (i = 0; i < NF; i++) {
		f = &r->f[i];
		f->r = r;
		f->id = i;
		f->rng = (r->seed ^ (UINT64_C(0x632be59bd9b4e019) *
				     (uint64_t)(i + 1))) | 1;
		set_zero(f, 0, NP);
		err = pthread_create(&f->tid, NULL, faulter_main, f);
		if (err)
			return -err;
		r->nthreads++;
	}
	return 0;
}

/*
 * Stop the faulters and join them, each within JOIN_BOUND_S: one that
 * does not finish is stuck in a broken lock, a bug(), and the run must
 * then not be freed under it.  Under urcu-qsbr the writer goes offline
 * for the join: the joined thread may be waiting for a grace period.
 */
static void stop_faulters(struct stress *r)
{
	struct timespec ts;
	int i, err;

	set_word(&r->stop, 1);
	for (i = 0; i < r->nthreads; i++) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += JOIN_BOUND_S;
		vs_rcu_thread_offline();
		err = pthread_timedjoin_np(r->f[i].tid, NULL, &ts);
		vs_rcu_thread_online();
		if (err) {
			r->stuck = 1;
			bug(r, "faulter %d stuck for %d s after the stop "
			    "(join: %s)", i, JOIN_BOUND_S, strerror(err));
		}
	}
}

/* One writer operation, chosen at random. */
static void writer_op(struct stress *r)
{
	int x = below(&r->rng, 100);

	if (x < 26)
		w_mprotect(r);
	else if (x < 46)
		w_dontneed(r);
	else if (x < 56)
		w_munmap(r);
	else if (x < 74)
		w_mmap(r);
	else if (x < 84)
		w_mremap(r);
	else if (x < 93)
		w_trap(r);
	else if (x < 98)
		w_move_trap(r);
	else
		spin_ns(2000);	/* a quiet spell */
}

/*
 * One round of the writer: an operation, the checks, now and then a
 * fork; every 16 rounds, whether the run is done.  Return: 1 when done.
 */
static int writer_step(struct stress *r, unsigned long it)
{
	struct vs_fault_stats st;

	if (!(it & 15)) {
		vs_fault_stats_get(&st);
		if ((st.faults - r->st0.faults >= r->target &&
		     r->nops >= r->target_ops) || now_ns() > r->deadline)
			return 1;
		if (!(it & 63))
			vs_write_once(&r->hot, (uint32_t)below(&r->rng,
							       NP - HOT + 1));
	}
	writer_op(r);
	w_child(r, below(&r->rng, 1000) < 3);
	check_mm(r, 0);
	vs_rcu_quiescent_state(); /* urcu-qsbr */
	return 0;
}

/*
 * The faulters against the writer, until the targets, the deadline or
 * a bug.  Return: 0, or -errno when a faulter could not be started
 * (those that were are stopped).
 */
static int run_threads(struct stress *r)
{
	unsigned long it;
	int err;

	vs_fault_stats_get(&r->st0);
	r->t0 = now_ns();
	r->deadline = r->t0 + r->run_ns;
	err = start_faulters(r);
	for (it = 0; !err && !found_bug(r); it++)
		if (writer_step(r, it))
			break;
	stop_faulters(r);
	r->t1 = now_ns();
	vs_fault_stats_get(&r->st1);
	return err;
}

/* The records each faulter expects, against the memory, once quiet. */
static void final_data(struct stress *r)
{
	struct faulter *f;
	struct rec v;
	int i, p, err;

	for (p = 0; p < NP; p++) {
		if ((r->cur[p] & (SH_MAPPED | SH_READ)) != SH_MAPPED)
			continue;
		err = vs_mprotect(r->mm, pg_addr(p), PG, VS_PROT_READ);
		if (err) {
			bug(r, "at the end: mprotect(page %d, READ) returned "
			    "%d", p, err);
			return;
		}
	}
	for (i = 0; i < NF; i++) {
		f = &r->f[i];
		catch_up(f, r->nops);
		for (p = 0; p < NP; p++) {
			if (!f->valid[p] || !(r->cur[p] & SH_MAPPED) ||
			    (r->cur[p] & SH_EOF))
				continue;
			err = vs_read(r->mm, pg_addr(p) + 512 + 64 * i, &v,
				      sizeof(v));
			if (err || !rec_eq(&v, &f->exp[p])) {
				bug(r, "at the end: faulter %d page %d read "
				    "%d {%#x %u %" PRIu64 "}, expected {%#x "
				    "%u %" PRIu64 "}", i, p, err, v.tag,
				    v.page, v.count, f->exp[p].tag,
				    f->exp[p].page, f->exp[p].count);
				return;
			}
			f->data_checks++;
		}
	}
}

static int pt_count(vs_atomic64_t *ptep, unsigned long addr, void *arg)
{
	(void)ptep;
	(void)addr;
	++*(long *)arg;
	return 0;
}

/* Teardown: everything back in the pool while the mm exists. */
static void check_teardown(struct stress *r)
{
	struct vs_mm *mm = r->mm;
	long ptes = 0;
	int err;

	err = vs_munmap(mm, ARENA - PG, (NP + 2) * PG);
	if (err) {
		bug(r, "at teardown: munmap returned %d", err);
		return;
	}
	vs_rcu_barrier();
	vs_mmap_read_lock(mm);
	err = vs_pgtable_walk(&mm->pgtable, mm->start, mm->end, pt_count,
			      &ptes);
	vs_mmap_read_unlock(mm);
	if (err || ptes || rss(mm))
		bug(r, "at teardown: %ld PTEs, RSS %ld after munmap (walk "
		    "%d)", ptes, rss(mm), err);
	else if (vs_page_pool_free_pages(mm->pool) !=
		 vs_page_pool_size(mm->pool))
		bug(r, "at teardown: %zu of %zu pages free after munmap",
		    vs_page_pool_free_pages(mm->pool),
		    vs_page_pool_size(mm->pool));
}

/*
 * After the threads: the exact checks while the mm is quiet and sane
 * (none after a bug: a broken mm may not be), then the mms go.  A
 * failed vs_mm_destroy() leaves its mm behind, a bug() only when
 * nothing was wrong before.
 */
static void finish(struct stress *r)
{
	int err;

	if (r->child && !found_bug(r))
		child_destroy(r);
	if (!found_bug(r))
		check_mm(r, 1);
	if (!found_bug(r))
		final_data(r);
	if (!found_bug(r))
		check_teardown(r);
	if (r->child)
		(void)vs_mm_destroy(r->child);
	r->child = NULL;
	if (!r->mm)
		return;
	err = vs_mm_destroy(r->mm);
	if (err && !found_bug(r))
		bug(r, "vs_mm_destroy returned %d", err);
	r->mm = NULL;
}

static void stats_delta(struct vs_fault_stats *d,
			const struct vs_fault_stats *a,
			const struct vs_fault_stats *b)
{
	int i;

	d->faults = a->faults - b->faults;
	d->locked = a->locked - b->locked;
	d->spf_success = a->spf_success - b->spf_success;
	for (i = 0; i < VS_SPF_ABORT_NR; i++)
		d->spf_abort[i] = a->spf_abort[i] - b->spf_abort[i];
	d->vma_lock_success = a->vma_lock_success - b->vma_lock_success;
	d->vma_lock_abort = a->vma_lock_abort - b->vma_lock_abort;
	d->vma_lock_retry = a->vma_lock_retry - b->vma_lock_retry;
	d->vma_lock_miss = a->vma_lock_miss - b->vma_lock_miss;
	d->sigsegv = a->sigsegv - b->sigsegv;
	d->sigbus = a->sigbus - b->sigbus;
	d->oom = a->oom - b->oom;
}

static void fill_report(struct stress *r, struct vs_stress_report *rep)
{
	int i;

	stats_delta(&rep->stats, &r->st1, &r->st0);
	rep->faults = rep->stats.faults;
	rep->ops = r->nops;
	rep->forks = r->forks;
	rep->traps = r->traps;
	rep->move_traps = r->move_traps;
	rep->checks = r->checks;
	for (i = 0; i < NF; i++) {
		rep->quiet += r->f[i].quiet;
		rep->data_checks += r->f[i].data_checks;
		rep->race_checks += r->f[i].race_checks;
	}
	rep->elapsed_ns = r->t1 - r->t0;
	rep->violations = (unsigned long)vs_read_once(&r->violations);
	if (found_bug(r))
		memcpy(rep->first, r->msg, sizeof(rep->first) - 1);
	rep->first[sizeof(rep->first) - 1] = '\0';
}

/* vs_stress_run - see fault/stress.h. */
int vs_stress_run(const struct vs_stress_config *cfg,
		  struct vs_stress_report *rep)
{
	struct stress *r;
	int err;

	if (!cfg || !rep)
		return -EINVAL;
	memset(rep, 0, sizeof(*rep));
	err = stress_new(cfg, &r);
	if (err)
		return err;
	rep->seed = r->seed;
	(void)vs_thread_attach();
	err = setup(r);
	if (!err && !found_bug(r))
		err = run_threads(r);
	if (r->stuck) {
		/* A faulter still uses the run: leave it to it. */
		fill_report(r, rep);
		return err;
	}
	if (err) {
		if (r->mm)
			(void)vs_mm_destroy(r->mm);
		stress_free(r);
		return err;
	}
	finish(r);
	fill_report(r, rep);
	stress_free(r);
	return 0;
}
