/* SPDX-License-Identifier: MIT */
/*
 * test/check/watchdog.c - what each thread of a stress run is doing,
 * and the watchdog that stops a run whose threads stopped moving.
 *
 * Each thread of a run (writer, prober, faulters) keeps a struct watch:
 * a progress count it advances every step, what it is doing (the
 * writer's operation, a faulter's access), and, through the lock trace
 * hooks of vmsim/lockstat.h (start_locking, acquire_returned, released),
 * the lock it waits for and those it holds, each with its side.  The
 * hooks find the thread's watch through a thread-local pointer, so a
 * thread that is not part of a run pays one test; they are installed
 * while at least one run goes on (vs__stress_hooks_get()).
 *
 * The watchdog runs on the caller of vs_stress_run(): every tenth of
 * its bound (at most 100 ms) it reads each live thread's progress; one
 * that has not moved for the bound stalls the run, and the report
 * names, per thread, what it was doing, the lock and side it waits for
 * (and for how long) and the locks it holds.
 */
#include <errno.h>
#include <string.h>

#include <vmsim/lockstat.h>

#include "internal.h"
#include "sync/internal.h"

/* The watch of the calling thread (vCPU), while it is one of a run's. */
static VS__PER_CONTEXT(struct watch *, me_);
#define me VS__THIS(me_)

static pthread_mutex_t hooks_mutex = PTHREAD_MUTEX_INITIALIZER;
static int hooks_users;

static const char *const doing_names[DO_NR] = {
	[DO_NOTHING] = "nothing",
	[OP_MPROTECT] = "mprotect",
	[OP_DONTNEED] = "MADV_DONTNEED",
	[OP_MUNMAP] = "munmap",
	[OP_MMAP] = "mmap",
	[OP_MREMAP] = "mremap",
	[DO_DOWNGRADE] = "downgrade_write",
	[DO_TRAP] = "the PTL trap",
	[DO_FORK] = "fork",
	[DO_CHILD] = "the fork child's access",
	[DO_CHECK] = "the PTE and mapcount check",
	[DO_WRITE] = "vs_write",
	[DO_READ] = "vs_read",
	[DO_TOUCH] = "vs_access",
	[DO_FAULT] = "vs_handle_mm_fault",
	[DO_HOLD_PTL] = "holding the arena's PTL (trap)",
	[DO_PROBE_WAIT] = "the wait for a downgrade to probe",
	[DO_PROBE_READ] = "a read hold beside the downgraded one",
	[DO_PROBE_WRITE] = "a write trylock beside the downgraded one",
};

const char *vs__stress_doing_name(int what)
{
	return what >= 0 && what < DO_NR && doing_names[what] ?
	       doing_names[what] : "?";
}

/* "mprotect of pages 3-5", "vs_read of page 7", "fork". */
const char *vs__stress_doing_str(uint64_t doing, char *buf, size_t len)
{
	int what = (int)(doing & 0xff), page = (int)((doing >> 8) & 0xff);
	int pages = (int)((doing >> 16) & 0xff);

	if (pages == 1)
		snprintf(buf, len, "%s of page %d",
			 vs__stress_doing_name(what), page);
	else if (pages > 1 && pages < NP)
		snprintf(buf, len, "%s of pages %d-%d",
			 vs__stress_doing_name(what), page, page + pages - 1);
	else
		snprintf(buf, len, "%s", vs__stress_doing_name(what));
	return buf;
}

void vs__stress_watch_init(struct watch *w, const char *name)
{
	int i;

	w->name = name;
	vs_atomic_init(&w->progress, 0);
	vs_atomic_init(&w->done, 0);
	vs_atomic_init(&w->doing, DO_NOTHING);
	vs_atomic_init(&w->waits, 0);
	vs_atomic_init(&w->wait_since, 0);
	for (i = 0; i < HELD_MAX; i++)
		vs_atomic_init(&w->held[i], 0);
}

/* Context: the thread @w describes, at its start. */
void vs__stress_watch_attach(struct watch *w)
{
	me = w;
}

/* Context: the thread @w describes, as it returns. */
void vs__stress_watch_done(struct watch *w)
{
	me = NULL;
	/* Release: the thread's last writes before done (pairs with the
	 * acquire of done in vs__stress_watchdog() and reap()). */
	vs_store_release(&w->done, 1);
}

void vs__stress_doing(struct watch *w, int what, int page, int pages)
{
	vs_write_once(&w->doing, (uint64_t)what |
		      (uint64_t)(page & 0xff) << 8 |
		      (uint64_t)(pages & 0xff) << 16);
}

/* A lock and a side in one word: struct vs_lock is 8-byte aligned. */
static uint64_t lock_word(struct vs_lock *lock, bool write)
{
	return (uint64_t)(uintptr_t)lock | (write ? 1u : 0u);
}

static void hook_start(struct vs_lock *lock, bool write, void *arg)
{
	(void)arg;
	if (!me)
		return;
	vs_write_once(&me->wait_since, now_ns());
	vs_write_once(&me->waits, lock_word(lock, write));
}

/*
 * An acquisition returned.  A downgrade reports a read acquisition of
 * a lock held for writing: the write entry becomes a read one.
 */
static void hook_acquired(struct vs_lock *lock, bool write, bool success,
			  void *arg)
{
	uint64_t want = lock_word(lock, write), held;
	int i, free_i = -1;

	(void)arg;
	if (!me)
		return;
	vs_write_once(&me->waits, 0);
	if (!success)
		return;
	for (i = 0; i < HELD_MAX; i++) {
		held = vs_read_once(&me->held[i]);
		if (!write && held == lock_word(lock, true)) {
			vs_write_once(&me->held[i], want);
			return;
		}
		if (!held && free_i < 0)
			free_i = i;
	}
	if (free_i >= 0)
		vs_write_once(&me->held[free_i], want);
}

static void hook_released(struct vs_lock *lock, bool write, void *arg)
{
	int i;

	(void)arg;
	if (!me)
		return;
	for (i = 0; i < HELD_MAX; i++)
		if (vs_read_once(&me->held[i]) == lock_word(lock, write)) {
			vs_write_once(&me->held[i], 0);
			return;
		}
}

static const struct vs_lock_trace hooks = {
	.start_locking = hook_start,
	.acquire_returned = hook_acquired,
	.released = hook_released,
};

/* Install the trace hooks for one more run.  Context: before its
 * threads start; takes hooks_mutex and the lock registry's spinlock. */
void vs__stress_hooks_get(void)
{
	pthread_mutex_lock(&hooks_mutex);
	if (hooks_users++ == 0)
		vs_lock_trace_set(&hooks);
	pthread_mutex_unlock(&hooks_mutex);
}

/* Remove them once the last run is over.  Context: its threads
 * stopped or are blocked in a lock (not in a hook); takes hooks_mutex
 * and the lock registry's spinlock. */
void vs__stress_hooks_put(void)
{
	pthread_mutex_lock(&hooks_mutex);
	if (--hooks_users == 0)
		vs_lock_trace_set(NULL);
	pthread_mutex_unlock(&hooks_mutex);
}

static const char *lock_name(struct stress *r, uint64_t word, char *buf,
			     size_t len)
{
	uintptr_t lock = (uintptr_t)(word & ~UINT64_C(1));
	const char *side = word & 1 ? "write" : "read";

	if (lock == (uintptr_t)&r->mm->mmap_lock)
		snprintf(buf, len, "mmap_lock (%s)", side);
	else if (lock == (uintptr_t)vs_read_once(&r->child_lock))
		snprintf(buf, len, "the fork child's mmap_lock (%s)", side);
	else
		snprintf(buf, len, "the lock at %#lx (%s)",
			 (unsigned long)lock, side);
	return buf;
}

/* Append to @buf what the thread of @w is doing, its locks included. */
static void describe(struct stress *r, struct watch *w, int stalled,
		     int64_t now, char *buf, size_t len)
{
	uint64_t waits = vs_read_once(&w->waits), held;
	size_t at = strlen(buf);
	char what[64], name[64];
	int i;

	if (at >= len)
		return;
	at += (size_t)snprintf(buf + at, len - at, "; %s%s: in %s", w->name,
			       stalled ? " (stuck)" : "",
			       vs__stress_doing_str(vs_read_once(&w->doing),
						    what, sizeof(what)));
	if (waits && at < len)
		at += (size_t)snprintf(buf + at, len - at,
				       ", waits for %s for %" PRId64 " ms",
				       lock_name(r, waits, name, sizeof(name)),
				       (now - (int64_t)vs_read_once(
					       &w->wait_since)) / NS_PER_MS);
	for (i = 0; i < HELD_MAX && at < len; i++) {
		held = vs_read_once(&w->held[i]);
		if (held)
			at += (size_t)snprintf(buf + at, len - at,
					       ", holds %s",
					       lock_name(r, held, name,
							 sizeof(name)));
	}
}

/* The threads started, in report order. */
static int watches(struct stress *r, struct watch **ws)
{
	int i, n = 0;

	if (r->writer_started)
		ws[n++] = &r->writer_w;
	if (r->prober_started)
		ws[n++] = &r->prober_w;
	for (i = 0; i < r->nthreads; i++)
		ws[n++] = &r->f[i].w;
	return n;
}

/* A stall: one violation naming every thread's state and the seed. */
static void report(struct stress *r, struct watch **ws, int n,
		   const int *stalled, int64_t now)
{
	char buf[VS_STRESS_MSG_MAX - 64];
	int i;

	snprintf(buf, sizeof(buf), "watchdog: no progress for %" PRId64
		 " ms (seed %#" PRIx64 ")", r->watchdog_ns / NS_PER_MS,
		 r->seed);
	for (i = 0; i < n; i++)
		if (!vs_load_acquire(&ws[i]->done))
			describe(r, ws[i], stalled[i], now, buf, sizeof(buf));
	vs__stress_violation(r, buf);
}

/*
 * vs__stress_watchdog - watch the run's threads until every one
 * returned, or one has not moved for r->watchdog_ns
 * Context: the caller of vs_stress_run(), once the threads started.
 * Return: 0 when every thread returned; -ETIMEDOUT after a stall (then
 * reported with vs__stress_bug(), which tells every thread to stop).
 */
int vs__stress_watchdog(struct stress *r)
{
	struct watch *ws[NF + 2];
	int stalled[NF + 2] = { 0 }, n = watches(r, ws), i, live, stall;
	int64_t moved[NF + 2], now = now_ns();
	int64_t poll = r->watchdog_ns / 10;
	uint64_t last[NF + 2], p;

	if (poll > 100 * NS_PER_MS)
		poll = 100 * NS_PER_MS;
	for (i = 0; i < n; i++) {
		last[i] = vs_read_once(&ws[i]->progress);
		moved[i] = now;
	}
	for (;;) {
		vs__stress_nap_us(r, (unsigned int)(poll / 1000) + 1);
		now = now_ns();
		live = stall = 0;
		for (i = 0; i < n; i++) {
			if (vs_load_acquire(&ws[i]->done))
				continue;
			live++;
			p = vs_read_once(&ws[i]->progress);
			if (p != last[i]) {
				last[i] = p;
				moved[i] = now;
			} else if (now - moved[i] > r->watchdog_ns) {
				stalled[i] = stall = 1;
			}
		}
		if (!live)
			return 0;
		if (stall) {
			report(r, ws, n, stalled, now);
			return -ETIMEDOUT;
		}
	}
}
