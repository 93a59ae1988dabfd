/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf_trace.c - multi-fault's --trace: a Chrome Trace Event
 * file, what goes in it; vmsim/trace.h writes it.
 *
 * Each thread appends fixed-size records to a buffer of its own, with no
 * lock and no shared write on the way (the buffer is found through a
 * thread-local pointer, registered in the trace's list once, under
 * trace_lock).  Records are appended when their slice ENDS, so a fault
 * comes after the lock slices inside it; mf_trace_close() sorts each
 * thread's records by (ts ascending, dur descending), which puts parents
 * before their children, and writes the file.
 *
 * What keeps the file loadable:
 *
 *  - "X" slices of one thread must nest, or Perfetto drops the ones that
 *    overlap.  A lock wait ends on the very nanosecond its hold begins,
 *    both lie inside the fault that took the lock, and the writer
 *    (vmsim/trace.h) prints ts and dur from integer nanoseconds, so no
 *    rounding can push a child past its parent.  Should two slices still
 *    overlap (a hold that outlives its fault), the later one is written
 *    as an async "b"/"e" pair, category "overlap", instead of an "X".
 *
 *  - The size is bounded twice: one fault in @sample is recorded, with
 *    the lock slices inside it, and at most @max_events records are kept
 *    in all.  Threads reserve that budget in batches, so the shared
 *    counter is written once per batch, not once per event; when it runs
 *    out, recording stops and "otherData" says how much was dropped.
 *
 *  - Sampling never hides a stall: every fault is timed, its lock
 *    slices are held back in a small per-thread array until it ends, and
 *    a fault with a wait or hold of @slow_ns or more is kept with them
 *    ("args":{"kept":"slow"}), sampled or not.  A sampled fault says
 *    "kept":"sample".  Lock slices outside any fault (the zap, the
 *    writer, setup and teardown) are always kept, inside the named span
 *    of the operation that took the lock.
 *
 * Lifetime: mf_trace_open() on one thread; then any thread may record;
 * mf_trace_close() once no thread records any more: the faulters and the
 * writer joined, the lock hooks removed (vs_lock_trace_set(NULL)).  A
 * thread that outlives a trace (the main thread) notices the next trace
 * by its generation number and starts afresh.  A thread that names
 * itself after one of the same name exited (the next repeat's "faulter
 * 0") takes over its buffer, so a name keeps one track, one tid.
 *
 *	field                   read               write
 *	trace_gen               any thread         open, close
 *	trace.budget            any thread         any thread (atomic)
 *	trace.bufs, trace.strs  trace_lock         trace_lock
 *	mf_tbuf name, detached  trace_lock         trace_lock
 *	mf_tbuf, the rest       its owner thread   its owner thread
 *	everything              close              close
 *
 * The vCPU mode (multi-fault-vcpu): each repeat runs in a child process
 * (mf_jobs.c), where every vCPU is a context on the one host thread.
 * There a trace is a part: mf_trace_part_begin() switches the child's
 * copy of the trace to virtual time (vs_vcpu_now_ns()) and to a buffer
 * per vCPU context (vs_vcpu_self()), not per host thread, with its
 * share of @max_events; mf_trace_part_end() writes its events to a
 * temporary file; the parent copies the parts into the one file in job
 * order (mf_trace_part_add()), each a process of its own, and close
 * writes the end.  Nothing of the host's clock or addresses is in a
 * part, so the file is the same from run to run.  The tracer's own
 * atomics are C11's, not vmsim/atomic.h's, which would be charged to the
 * vCPUs as the model's accesses are.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vmsim/trace.h>

#include "mf.h"

#define MF_NAME_MAX 64		/* a thread's name, with its NUL */
#define MF_HELD_MAX 4		/* locks one thread holds at once */
#define MF_CACHE 4		/* names a thread keeps at hand */
#define MF_BATCH_MAX 1024	/* budget a thread reserves at once */
#define MF_FIRST_CAP 256	/* records in a new buffer */
#define MF_DEFAULT_MAX_EVENTS 1000000	/* for 0: ~100 MB of JSON */
#define MF_PEND_MAX 16		/* lock slices held back in one fault */

/*
 * Waits shorter than this are not recorded: an uncontended acquisition
 * through the hooks takes well under a microsecond, and a slice that
 * short is invisible in the UI but costs a record and ~100 bytes.
 */
#define MF_WAIT_MIN_NS 1000

enum mf_kind { MF_FAULT, MF_WAIT, MF_HOLD, MF_SPAN, MF_COUNTER };

static const char *const kind_cat[] = {
	[MF_FAULT] = "fault",
	[MF_WAIT] = "lock",
	[MF_HOLD] = "lock",
	[MF_SPAN] = "span",
	[MF_COUNTER] = "counter",
};

/* One event: a slice [ts, ts + dur) or a counter sample at ts. */
struct mf_rec {
	uint64_t ts, dur;	/* ns: absolute until close, then relative */
	const char *name;	/* interned: lives until close */
	double value;		/* counters; faults: 1 kept as slow */
	int kind;		/* enum mf_kind */
};

/* A lock the thread is taking (!acquired) or holds. */
struct mf_held {
	struct vs_lock *lock;
	uint64_t t;		/* start_locking, then the acquisition */
	bool write, acquired;
	bool rec;		/* begun outside a fault, or in a sampled one */
};

/* The four slice names of one lock class. */
struct mf_class_names {
	const struct vs_lock_class *class;
	const char *name[4];	/* [hold?][write?]: wait R, wait W, R, W */
};

/* One thread's buffer and its tracing state. */
struct mf_tbuf {
	/* Under trace_lock. */
	struct mf_tbuf *next;
	char name[MF_NAME_MAX];
	bool named;
	bool detached;		/* the owner exited: adoptable by name */
	unsigned int tid;

	/* The owner's alone. */
	struct mf_rec *rec;
	size_t nr, cap;
	uint64_t allow;		/* records reserved from the budget */
	uint64_t dropped;
	bool exhausted;		/* the budget is spent: stop asking */

	unsigned int fault_depth;
	bool fault_rec;		/* the current fault is sampled */
	bool fault_slow;	/* ... or has a wait or hold >= slow_ns */
	uint64_t fault_t0;
	uint64_t faults;	/* faults begun: the sampling counter */
	struct mf_rec pend[MF_PEND_MAX];	/* its lock slices so far */
	unsigned int nr_pend, pend_lost;

	struct mf_held held[MF_HELD_MAX];
	int nr_held;

	struct mf_class_names cls[MF_CACHE];
	unsigned int cls_next;
	const char *names[MF_CACHE];	/* span and counter names */
	unsigned int names_next;
};

/* An interned string: one copy per distinct name, freed at close. */
struct mf_str {
	struct mf_str *next;
	char s[];
};

/*
 * The trace's generation while one is open, 0 otherwise: the one load the
 * hot path pays when tracing is off.  Release at open, paired with the
 * acquire in self(): a thread that sees the generation sees @trace set up.
 */
static vs_atomic32_t trace_gen;
static uint32_t last_gen;	/* open and close only */

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	struct vs_trace out;	/* the file (vmsim/trace.h) */
	unsigned int pid;	/* the events' process: 1, or the part's */
	uint64_t t_open;
	unsigned int sample;
	uint64_t slow_ns;
	uint64_t max_events;
	uint64_t batch;
	vs_atomic64_t budget;	/* records not yet reserved */
	pthread_key_t key;	/* its destructor detaches a buffer */
	struct mf_tbuf *bufs;	/* newest first */
	unsigned int nr_bufs;
	struct mf_str *strs;
	/* The vCPU mode.  In a child: @virt, its part's file, and the
	 * buffer of each vCPU context.  In the parent: the parts' sums. */
	bool virt, merged;
	int part_fd;
	struct mf_tbuf *ctx[VS_VCPU_MAX + 2];
	uint64_t part_dropped, part_recorded;
} trace;

static _Thread_local struct {
	struct mf_tbuf *buf;	/* NULL with a current @gen: no memory */
	uint32_t gen;
} me;

uint64_t mf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The clock of the hooks' records: a part's is the vCPU's. */
static uint64_t tnow(void)
{
	return trace.virt ? vs_vcpu_now_ns() : mf_now_ns();
}

bool mf_trace_on(void)
{
	return atomic_load_explicit(&trace_gen, memory_order_relaxed) != 0;
}

/* ---- the list, the names ------------------------------------------------ */

static void tlock(void)
{
	int err = pthread_mutex_lock(&trace_lock);

	if (err) {
		fprintf(stderr, "mf_trace: pthread_mutex_lock: %s\n",
			strerror(err));
		abort();
	}
}

static void tunlock(void)
{
	pthread_mutex_unlock(&trace_lock);
}

/* The one copy of @s.  Context: trace_lock held.  NULL: no memory. */
static const char *intern_locked(const char *s)
{
	size_t len = strlen(s);
	struct mf_str *p;

	for (p = trace.strs; p; p = p->next)
		if (!strcmp(p->s, s))
			return p->s;
	p = malloc(sizeof(*p) + len + 1);
	if (!p)
		return NULL;
	memcpy(p->s, s, len + 1);
	p->next = trace.strs;
	trace.strs = p;
	return p->s;
}

static const char *intern(const char *s)
{
	const char *r;

	tlock();
	r = intern_locked(s);
	tunlock();
	return r;
}

/*
 * @s interned, through the thread's small cache: a span or counter name
 * costs a few strcmp()s, and trace_lock only the first time.  Copying it
 * lets callers pass a name built in a stack buffer.
 */
static const char *cached_name(struct mf_tbuf *b, const char *s)
{
	const char *r;
	unsigned int i;

	for (i = 0; i < MF_CACHE; i++)
		if (b->names[i] && !strcmp(b->names[i], s))
			return b->names[i];
	r = intern(s);
	if (r)
		b->names[b->names_next++ % MF_CACHE] = r;
	return r;
}

/* The class's slice names, "mmap_lock wait R" ... "mmap_lock W". */
static const struct mf_class_names *class_names(struct mf_tbuf *b,
						const struct vs_lock *lock)
{
	static const char *const fmt[4] = {
		"%s wait R", "%s wait W", "%s R", "%s W"
	};
	const char *cname = lock->class ? lock->class->name : "lock";
	struct mf_class_names *c;
	char buf[VS_LOCK_CLASS_NAME_MAX + 16];
	unsigned int i;

	for (i = 0; i < MF_CACHE; i++)
		if (b->cls[i].name[0] && b->cls[i].class == lock->class)
			return &b->cls[i];
	c = &b->cls[b->cls_next++ % MF_CACHE];
	c->class = lock->class;
	tlock();
	for (i = 0; i < 4; i++) {
		snprintf(buf, sizeof(buf), fmt[i], cname);
		c->name[i] = intern_locked(buf);
		if (!c->name[i])
			break;
	}
	tunlock();
	if (i < 4)
		c->name[0] = NULL;	/* no memory: an empty entry */
	return i < 4 ? NULL : c;
}

/* ---- the thread's buffer ------------------------------------------------ */

/* Context: trace_lock held. */
static struct mf_tbuf *tbuf_new_locked(const char *name)
{
	struct mf_tbuf *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->tid = ++trace.nr_bufs;
	if (name) {
		snprintf(b->name, sizeof(b->name), "%s", name);
		b->named = true;
	}
	b->next = trace.bufs;
	trace.bufs = b;
	return b;
}

/*
 * A buffer whose thread exited and whose name is @name: the next
 * repeat's "faulter 0" continues the last one's track.  Its records stay;
 * the per-thread state starts afresh.  Context: trace_lock held.
 */
static struct mf_tbuf *tbuf_adopt_locked(const char *name)
{
	struct mf_tbuf *b;

	for (b = trace.bufs; b; b = b->next)
		if (b->detached && b->named && !strcmp(b->name, name))
			break;
	if (!b)
		return NULL;
	b->detached = false;
	b->fault_depth = 0;
	b->fault_rec = false;
	b->nr_pend = 0;
	b->nr_held = 0;
	return b;
}

/* Make @b the calling thread's buffer of generation @gen. */
static void tbuf_attach(struct mf_tbuf *b, uint32_t gen)
{
	me.buf = b;
	me.gen = gen;
	if (b)
		(void)pthread_setspecific(trace.key, b);
}

/* The key's destructor, run as a thread that recorded exits. */
static void tbuf_detach(void *arg)
{
	struct mf_tbuf *b = arg;

	tlock();
	b->detached = true;
	tunlock();
}

/*
 * A part's buffer of vCPU context @ctx, created on first use (all the
 * contexts run on one host thread); its tid @ctx + 1 after the pid's
 * thousand, unique in the file, as Perfetto wants.  NULL: none, or a
 * host-side caller (-1).
 */
static struct mf_tbuf *ctx_buf(int ctx)
{
	struct mf_tbuf *b;

	if (ctx < 0 || ctx >= (int)VS_ARRAY_SIZE(trace.ctx))
		return NULL;
	if (!trace.ctx[ctx]) {
		tlock();
		b = tbuf_new_locked(NULL);
		tunlock();
		if (b)
			b->tid = trace.pid * 1000 + (unsigned int)ctx + 1;
		trace.ctx[ctx] = b;
	}
	return trace.ctx[ctx];
}

/* The calling thread's buffer, created on first use; NULL when off. */
static struct mf_tbuf *self(void)
{
	uint32_t gen = atomic_load_explicit(&trace_gen,
					    memory_order_acquire);
	struct mf_tbuf *b;

	if (gen && trace.virt)
		return ctx_buf(vs_vcpu_self());
	if (vs_likely(!gen || me.gen == gen))
		return gen ? me.buf : NULL;
	tlock();
	b = tbuf_new_locked(NULL);
	tunlock();
	tbuf_attach(b, gen);
	return b;
}

/*
 * Reserve a batch of the budget.  A compare-and-exchange rather than a
 * fetch_sub, so that the budget never goes below zero and the total
 * recorded never exceeds max_events.
 */
static bool refill(struct mf_tbuf *b)
{
	uint64_t left = atomic_load_explicit(&trace.budget,
					     memory_order_relaxed), n;

	do {
		if (!left) {
			b->exhausted = true;
			return false;
		}
		n = left < trace.batch ? left : trace.batch;
	} while (!atomic_compare_exchange_weak_explicit(
			 &trace.budget, &left, left - n, memory_order_relaxed,
			 memory_order_relaxed));
	b->allow = n;
	return true;
}

static bool grow(struct mf_tbuf *b)
{
	size_t cap = b->cap ? b->cap * 2 : MF_FIRST_CAP;
	struct mf_rec *r = realloc(b->rec, cap * sizeof(*r));

	if (!r)
		return false;
	b->rec = r;
	b->cap = cap;
	return true;
}

static void emit(struct mf_tbuf *b, int kind, const char *name,
		 uint64_t t0, uint64_t t1, double value)
{
	struct mf_rec *r;

	if (!name || (!b->allow && (b->exhausted || !refill(b))) ||
	    (b->nr == b->cap && !grow(b))) {
		b->dropped++;
		return;
	}
	b->allow--;
	r = &b->rec[b->nr++];
	r->ts = t0;
	r->dur = t1 > t0 ? t1 - t0 : 0;
	r->name = name;
	r->value = value;
	r->kind = kind;
}

/* ---- recording ---------------------------------------------------------- */

void mf_trace_thread(const char *name)
{
	uint32_t gen = atomic_load_explicit(&trace_gen,
					    memory_order_acquire);
	struct mf_tbuf *b;

	if (!gen || !name)
		return;
	if (trace.virt || me.gen == gen) {
		/* Recorded before it was named, or renamed: keep the tid. */
		b = self();
		if (b) {
			tlock();
			snprintf(b->name, sizeof(b->name), "%s", name);
			b->named = true;
			tunlock();
		}
		return;
	}
	tlock();
	b = tbuf_adopt_locked(name);
	if (!b)
		b = tbuf_new_locked(name);
	tunlock();
	tbuf_attach(b, gen);
}

void mf_trace_fault_begin(void)
{
	struct mf_tbuf *b = self();

	if (!b || b->fault_depth++)
		return;
	b->fault_rec = b->faults++ % trace.sample == 0;
	b->fault_slow = false;
	b->nr_pend = 0;
	b->pend_lost = 0;
	b->fault_t0 = tnow();
}

/* The fault ends: keep it and its lock slices if sampled or slow. */
void mf_trace_fault_end(void)
{
	struct mf_tbuf *b = self();
	const struct mf_rec *r;
	unsigned int i;

	if (!b || !b->fault_depth || --b->fault_depth)
		return;
	if (b->fault_rec || b->fault_slow) {
		emit(b, MF_FAULT, "fault", b->fault_t0, tnow(),
		     !b->fault_rec);
		for (i = 0; i < b->nr_pend; i++) {
			r = &b->pend[i];
			emit(b, r->kind, r->name, r->ts, r->ts + r->dur, 0);
		}
		b->dropped += b->pend_lost;
	}
	b->fault_rec = false;
	b->nr_pend = 0;
}

void mf_trace_span(const char *name, uint64_t t0_ns, uint64_t t1_ns)
{
	struct mf_tbuf *b = self();

	if (b && name)
		emit(b, MF_SPAN, cached_name(b, name), t0_ns, t1_ns, 0);
}

void mf_trace_counter(const char *name, uint64_t t_ns, double value)
{
	struct mf_tbuf *b = self();

	if (b && name)
		emit(b, MF_COUNTER, cached_name(b, name), t_ns, t_ns, value);
}

/* ---- the lock hooks ----------------------------------------------------- */

/* The innermost entry for @lock in state @acquired, or -1. */
static int held_find(const struct mf_tbuf *b, const struct vs_lock *lock,
		     bool acquired)
{
	int i;

	for (i = b->nr_held - 1; i >= 0; i--)
		if (b->held[i].lock == lock && b->held[i].acquired == acquired)
			return i;
	return -1;
}

static void held_drop(struct mf_tbuf *b, int i)
{
	memmove(&b->held[i], &b->held[i + 1],
		(size_t)(b->nr_held - i - 1) * sizeof(b->held[0]));
	b->nr_held--;
}

/*
 * A lock slice [t0, t1) ends.  Inside a fault it is held back until the
 * fault ends (mf_trace_fault_end() keeps or drops them together), and
 * one of @slow_ns or more makes the fault kept.  Outside, it is kept if
 * it began outside a fault or in a sampled one (@h->rec).
 */
static void emit_lock(struct mf_tbuf *b, const struct mf_held *h, int kind,
		      const char *name, uint64_t t0, uint64_t t1)
{
	struct mf_rec *r;

	if (!b->fault_depth) {
		if (h->rec)
			emit(b, kind, name, t0, t1, 0);
		return;
	}
	if (t1 - t0 >= trace.slow_ns)
		b->fault_slow = true;
	if (!name || b->nr_pend == MF_PEND_MAX) {
		b->pend_lost++;
		return;
	}
	r = &b->pend[b->nr_pend++];
	r->ts = t0;
	r->dur = t1 - t0;
	r->name = name;
	r->kind = kind;
}

/* The hold of @h ends at @now. */
static void emit_hold(struct mf_tbuf *b, const struct mf_held *h,
		      uint64_t now)
{
	const struct mf_class_names *c = class_names(b, h->lock);

	emit_lock(b, h, MF_HOLD, c ? c->name[2 + h->write] : NULL, h->t, now);
}

/* The wait of @h ends at @now: only a long one is worth a record. */
static void emit_wait(struct mf_tbuf *b, const struct mf_held *h,
		      bool write, uint64_t now)
{
	const struct mf_class_names *c;

	if (now - h->t < MF_WAIT_MIN_NS)
		return;
	c = class_names(b, h->lock);
	emit_lock(b, h, MF_WAIT, c ? c->name[write] : NULL, h->t, now);
}

/*
 * Every lock is timed, in a fault too: whether the fault is kept is
 * known only when it ends (emit_lock()).
 */
static void hook_start(struct vs_lock *lock, bool write, void *arg)
{
	struct mf_tbuf *b = self();
	struct mf_held *h;

	(void)arg;
	/* Deeper nesting than MF_HELD_MAX goes untraced, not misnamed. */
	if (!b || b->nr_held == MF_HELD_MAX)
		return;
	h = &b->held[b->nr_held++];
	h->lock = lock;
	h->write = write;
	h->acquired = false;
	h->rec = !b->fault_depth || b->fault_rec;
	h->t = tnow();
}

/*
 * The acquisition: the wait ends and the hold begins on the same
 * nanosecond, so that the two slices are adjacent and never overlap.
 * With no pending entry it is vs_lock_downgrade_write(), which the
 * kernel traces as acquire_returned(read) alone: the write hold ends
 * and a read hold begins, again on the same nanosecond.
 */
static void hook_acquired(struct vs_lock *lock, bool write, bool success,
			  void *arg)
{
	struct mf_tbuf *b = self();
	struct mf_held *h;
	uint64_t now;
	int i;

	(void)arg;
	if (!b)
		return;
	i = held_find(b, lock, false);
	if (i >= 0 && !success) {
		held_drop(b, i);	/* a failed trylock holds nothing */
		return;
	}
	if (i < 0) {
		i = held_find(b, lock, true);
		if (i < 0 || write || !success || !b->held[i].write)
			return;
	}
	h = &b->held[i];
	now = tnow();
	if (h->acquired)
		emit_hold(b, h, now);
	else
		emit_wait(b, h, write, now);
	h->write = write;
	h->acquired = true;
	h->t = now;
}

static void hook_released(struct vs_lock *lock, bool write, void *arg)
{
	struct mf_tbuf *b = self();
	struct mf_held *h;
	int i;

	(void)write;
	(void)arg;
	if (!b)
		return;
	/* Not found: taken before the hooks were on, or too deep. */
	i = held_find(b, lock, true);
	if (i < 0)
		return;
	h = &b->held[i];
	emit_hold(b, h, tnow());
	held_drop(b, i);
}

static const struct vs_lock_trace lock_hooks = {
	.start_locking = hook_start,
	.acquire_returned = hook_acquired,
	.released = hook_released,
};

const struct vs_lock_trace *mf_trace_lock_hooks(void)
{
	return &lock_hooks;
}

/* ---- open --------------------------------------------------------------- */

/* Recording starts: @budget records at most, times from @t_open on. */
static void start(uint64_t budget, uint64_t t_open)
{
	/* Small budgets are shared in small batches, or one thread
	 * would reserve them all. */
	trace.batch = budget / MF_MAX_THREADS + 1;
	if (trace.batch > MF_BATCH_MAX)
		trace.batch = MF_BATCH_MAX;
	atomic_init(&trace.budget, budget);
	trace.t_open = t_open;
	if (!++last_gen)
		last_gen = 1;	/* 0 means off */
	atomic_store_explicit(&trace_gen, last_gen, memory_order_release);
}

/*
 * mf_trace_open - start a trace to be written to @path
 * @sample: one fault in @sample is recorded; 0 means 1, every fault
 * @slow_ns: a fault with a lock wait or hold this long is recorded too
 * @max_events: records kept at most; 0 means MF_DEFAULT_MAX_EVENTS
 *
 * @path is created now, so that an unwritable one fails before the run.
 * Return: 0; -EINVAL for a NULL @path, -EBUSY when a trace is open, or
 * fopen()'s -errno.
 */
int mf_trace_open(const char *path, unsigned int sample, uint64_t slow_ns,
		  size_t max_events)
{
	int err;

	if (!path)
		return -EINVAL;
	if (mf_trace_on())
		return -EBUSY;
	memset(&trace, 0, sizeof(trace));
	/* Its head is written now: the parent of the vCPU mode's children
	 * allocates the stream's buffer before the first of them is
	 * forked. */
	err = vs_trace_open(&trace.out, path);
	if (err)
		return err;
	err = pthread_key_create(&trace.key, tbuf_detach);
	if (err) {
		(void)vs_trace_close(&trace.out, NULL, 0);
		return -err;
	}
	trace.sample = sample ? sample : 1;
	trace.slow_ns = slow_ns;
	trace.max_events = max_events ? max_events : MF_DEFAULT_MAX_EVENTS;
	trace.pid = 1;
	start(trace.max_events, mf_now_ns());
	return 0;
}

/* ---- close: the file ---------------------------------------------------- */

/* Metadata event @name of process @pid's track @tid: its one argument
 * @arg. */
static int put_meta(struct vs_trace *out, const char *name, unsigned int pid,
		    unsigned int tid, struct vs_trace_arg arg)
{
	struct vs_trace_event e = { .name = name, .pid = pid, .tid = tid,
				    .args = &arg, .nr_args = 1 };

	return vs_trace_meta(out, &e);
}

/* @b's track: its name and its place. */
static int put_track(struct vs_trace *out, const struct mf_tbuf *b)
{
	char name[MF_NAME_MAX + 16];
	int err;

	if (b->named)
		snprintf(name, sizeof(name), "%s", b->name);
	else
		snprintf(name, sizeof(name), "thread %u", b->tid);
	err = put_meta(out, "thread_name", trace.pid, b->tid,
		       VS_TRACE_STR("name", name));
	return err ? err : put_meta(out, "thread_sort_index", trace.pid,
				    b->tid,
				    VS_TRACE_UINT("sort_index", b->tid));
}

static int put_slice(struct vs_trace *out, const struct mf_rec *r,
		     unsigned int tid)
{
	struct vs_trace_arg kept = VS_TRACE_STR("kept", r->value ? "slow"
							     : "sample");
	struct vs_trace_event e = {
		.name = r->name, .cat = kind_cat[r->kind], .ts = r->ts,
		.pid = trace.pid, .tid = tid, .args = &kept,
		.nr_args = r->kind == MF_FAULT,
	};

	return vs_trace_slice(out, &e, r->dur);
}

/* An overlapping slice, as an async pair that Perfetto keeps. */
static int put_async(struct vs_trace *out, const struct mf_rec *r,
		     unsigned int tid, uint64_t id)
{
	struct vs_trace_event e = { .name = r->name, .cat = "overlap",
				    .ts = r->ts, .pid = trace.pid,
				    .tid = tid };
	int err = vs_trace_async(out, &e, true, id);

	e.ts = r->ts + r->dur;
	return err ? err : vs_trace_async(out, &e, false, id);
}

static int put_counter(struct vs_trace *out, const struct mf_rec *r)
{
	/* JSON has no NaN or infinity. */
	struct vs_trace_arg v = VS_TRACE_NUM(r->name, isfinite(r->value) ?
							r->value : 0);
	struct vs_trace_event e = { .name = r->name, .ts = r->ts,
				    .pid = trace.pid, .args = &v,
				    .nr_args = 1 };

	return vs_trace_counter(out, &e);
}

/* Which kind encloses which, for slices of one interval. */
static const int kind_rank[] = {
	[MF_SPAN] = 0, [MF_FAULT] = 1, [MF_HOLD] = 2, [MF_WAIT] = 3,
	[MF_COUNTER] = 4,
};

/* Parents first: by start, then the longer (enclosing) slice first. */
static int rec_cmp(const void *pa, const void *pb)
{
	const struct mf_rec *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->dur != b->dur)
		return a->dur > b->dur ? -1 : 1;
	/* The same interval (virtual time often stands still between two
	 * hooks): the enclosing kind first, then by name, so that the
	 * order never depends on qsort's. */
	if (kind_rank[a->kind] != kind_rank[b->kind])
		return kind_rank[a->kind] - kind_rank[b->kind];
	return strcmp(a->name, b->name);
}

/* Relative to the open, clamped at it: a span may start before. */
static void rebase(struct mf_rec *r, uint64_t t_open)
{
	uint64_t t0 = r->ts > t_open ? r->ts - t_open : 0;
	uint64_t t1 = r->ts + r->dur > t_open ? r->ts + r->dur - t_open : 0;

	r->ts = t0;
	r->dur = t1 - t0;
}

/*
 * Move @b's counter records to @out, rebase and sort the rest.  Return:
 * the slices left in @b.
 */
static size_t split(struct mf_tbuf *b, struct mf_rec *out, size_t *nr_out)
{
	size_t i, n = 0;

	for (i = 0; i < b->nr; i++) {
		rebase(&b->rec[i], trace.t_open);
		if (b->rec[i].kind == MF_COUNTER)
			out[(*nr_out)++] = b->rec[i];
		else
			b->rec[n++] = b->rec[i];
	}
	b->nr = n;
	if (n)
		qsort(b->rec, n, sizeof(*b->rec), rec_cmp);
	return n;
}

/*
 * One thread's sorted slices.  @open holds the ends of the enclosing
 * slices written so far; a slice that starts inside the innermost but
 * ends after it would overlap, so it goes out as an async pair.  Depth
 * is at most 1 (fault) + 2 * MF_HELD_MAX + 1 (a span around it all),
 * and anything deeper only loses the check, not the event.
 */
static int put_thread(struct vs_trace *out, const struct mf_tbuf *b,
		      uint64_t *next_id)
{
	uint64_t open[2 * MF_HELD_MAX + 4], end;
	const struct mf_rec *r;
	int depth = 0, err = 0;
	size_t i;

	for (i = 0; i < b->nr && !err; i++) {
		r = &b->rec[i];
		end = r->ts + r->dur;
		while (depth && open[depth - 1] <= r->ts)
			depth--;
		if (depth && end > open[depth - 1]) {
			err = put_async(out, r, b->tid, (*next_id)++);
			continue;
		}
		err = put_slice(out, r, b->tid);
		if (depth < (int)(sizeof(open) / sizeof(open[0])))
			open[depth++] = end;
	}
	return err;
}

/* The end of the file: otherData, and close it.  Return: 0 or -errno. */
static int put_other(uint64_t dropped, uint64_t recorded)
{
	const struct vs_trace_arg other[] = {
		VS_TRACE_BOOL("truncated", dropped != 0),
		VS_TRACE_UINT("dropped_events", dropped),
		VS_TRACE_UINT("recorded_events", recorded),
		VS_TRACE_UINT("max_events", trace.max_events),
		VS_TRACE_UINT("sample", trace.sample),
		VS_TRACE_NS("slow_us", trace.slow_ns),
		VS_TRACE_STR("clock", trace.merged ? "virtual" : "host"),
	};

	return vs_trace_close(&trace.out, other, VS_ARRAY_SIZE(other));
}

/*
 * Every event this process recorded: the threads' names, their slices,
 * the counters; their counts added to @dropped and @recorded.
 * Return: 0, -ENOMEM, or the error of the write.
 */
static int put_events(struct vs_trace *out, uint64_t *dropped,
		      uint64_t *recorded)
{
	/* Async ids are unique in the file: a part's pid in the top half. */
	uint64_t next_id = ((uint64_t)(trace.pid - 1) << 32) + 1;
	size_t nr_ctr = 0, total = 0, i;
	struct mf_rec *ctr = NULL;
	struct mf_tbuf *b;
	int err = 0;

	for (b = trace.bufs; b; b = b->next)
		total += b->nr;
	if (total && !(ctr = malloc(total * sizeof(*ctr))))
		return -ENOMEM;
	for (b = trace.bufs; b; b = b->next)
		split(b, ctr, &nr_ctr);
	if (nr_ctr)
		qsort(ctr, nr_ctr, sizeof(*ctr), rec_cmp);
	/* Metadata first; a thread that only sampled counters has none. */
	for (b = trace.bufs; b && !err; b = b->next)
		if (b->named || b->nr)
			err = put_track(out, b);
	for (b = trace.bufs; b && !err; b = b->next) {
		err = put_thread(out, b, &next_id);
		*dropped += b->dropped;
		*recorded += b->nr;
	}
	for (i = 0; i < nr_ctr && !err; i++)
		err = put_counter(out, &ctr[i]);
	*recorded += nr_ctr;
	free(ctr);
	return err;
}

static void free_all(void)
{
	struct mf_tbuf *b;
	struct mf_str *s;

	while ((b = trace.bufs)) {
		trace.bufs = b->next;
		free(b->rec);
		free(b);
	}
	while ((s = trace.strs)) {
		trace.strs = s->next;
		free(s);
	}
}

/*
 * mf_trace_close - write the file, free everything
 *
 * With parts (the vCPU mode), the parts are the events: only the end is
 * written.
 * Context: no thread records any more (joined, or idle with the lock
 * hooks removed).  Nothing open: nothing to do, 0.
 * Return: 0, -ENOMEM, or the -errno of the write.
 */
int mf_trace_close(void)
{
	uint64_t dropped = trace.part_dropped, recorded = trace.part_recorded;
	int err = 0, e;

	if (!mf_trace_on())
		return 0;
	atomic_store_explicit(&trace_gen, 0, memory_order_relaxed);
	/* No destructor may run on a buffer freed below. */
	pthread_key_delete(trace.key);
	if (!trace.merged) {
		err = put_meta(&trace.out, "process_name", 1, 0,
			       VS_TRACE_STR("name", "multi-fault"));
		if (!err)
			err = put_events(&trace.out, &dropped, &recorded);
	}
	/* Closed in any case; otherData only after every event. */
	e = err ? vs_trace_close(&trace.out, NULL, 0) :
		  put_other(dropped, recorded);
	free_all();
	memset(&trace, 0, sizeof(trace));
	return err ? err : e;
}

/* ---- parts: the vCPU mode's children ------------------------------------ */

/*
 * mf_trace_part_open - a temporary file for one part, unlinked already
 *
 * No malloc: the parent's heap must be the same whenever it forks.
 * Context: the parent, before the fork.
 * Return: its descriptor, -ENOENT when no trace is open, or -errno.
 */
int mf_trace_part_open(void)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	if (!mf_trace_on())
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/multi-fault-trace.XXXXXX",
		 dir && dir[0] ? dir : "/tmp");
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	(void)unlink(path);
	trace.merged = true;
	return fd;
}

/*
 * mf_trace_part_begin - record this process's events as part @pid of
 * @parts, into @fd, in virtual time, a buffer per vCPU context
 *
 * The budget is @max_events / @parts, so that the file stays bounded
 * however the parts fill up.
 * Context: the child, before its machine is created.
 * Return: 0, -EINVAL for a bad @fd or @pid, -ENOENT when no trace is
 * open.
 */
int mf_trace_part_begin(int fd, unsigned int pid, unsigned int parts)
{
	if (!mf_trace_on())
		return -ENOENT;
	if (fd < 0 || !pid || pid >= UINT_MAX / 1000 || !parts)
		return -EINVAL;
	/* The parent's buffers and file are the parent's. */
	trace.out = (struct vs_trace){ 0 };
	trace.bufs = NULL;
	trace.strs = NULL;
	trace.nr_bufs = 0;
	memset(trace.ctx, 0, sizeof(trace.ctx));
	trace.virt = true;
	trace.part_fd = fd;
	trace.pid = pid;
	start(trace.max_events / parts, 0);
	return 0;
}

/*
 * mf_trace_part_end - write the part's events to its file and close it
 * @recorded, @dropped: receive the part's counts, for otherData
 *
 * Context: the child, its machine run.
 * Return: 0, -ENOENT without a part, -ENOMEM, or the -errno of the
 * write.
 */
int mf_trace_part_end(uint64_t *recorded, uint64_t *dropped)
{
	struct vs_trace part;
	int err, e;

	*recorded = 0;
	*dropped = 0;
	if (!mf_trace_on() || !trace.virt)
		return -ENOENT;
	atomic_store_explicit(&trace_gen, 0, memory_order_relaxed);
	err = vs_trace_open_part(&part, trace.part_fd);
	if (err) {
		close(trace.part_fd);
		return err;
	}
	err = put_events(&part, dropped, recorded);
	e = vs_trace_close(&part, NULL, 0);
	return err ? err : e;
}

/*
 * mf_trace_part_add - add the part in @fd, process @pid, to the file,
 * named @name, and close @fd
 * @fd: the part, or -1 for a process with no events (its child failed)
 *
 * Context: the parent, in pid order, after the part's child exited.
 * Return: 0, -ENOENT when no trace is open, or the -errno of a read.
 */
int mf_trace_part_add(int fd, unsigned int pid, const char *name,
		      uint64_t recorded, uint64_t dropped)
{
	int err = mf_trace_on() ? 0 : -ENOENT;

	if (!err)
		err = put_meta(&trace.out, "process_name", pid, 0,
			       VS_TRACE_STR("name", name));
	if (!err)
		err = put_meta(&trace.out, "process_sort_index", pid, 0,
			       VS_TRACE_UINT("sort_index", pid));
	if (!err && fd >= 0)
		err = vs_trace_add_part(&trace.out, fd);
	if (!err && fd >= 0) {
		trace.part_recorded += recorded;
		trace.part_dropped += dropped;
	}
	if (fd >= 0)
		close(fd);
	return err;
}
