/* SPDX-License-Identifier: MIT */
/*
 * Lock statistics and trace hooks: the hooked ops table that every
 * struct vs_lock goes through while either is on (vmsim/lock.h).
 */
#include <vmsim/lockstat.h>

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <vmsim/lock.h>
#include <vmsim/rcu.h>
#include <vmsim/spinlock.h>
#include <vmsim/vcpu.h>

#include "../vcpu/client.h"
#include "internal.h"

#define HOLD_DEPTH 16

static vs_atomic32_t stat_on;
/* Bumped when statistics are switched on: a hold recorded before that
 * (and released while they were off) must not be timed. */
static vs_atomic32_t stat_gen;
static struct vs_lock_trace trace;
static vs_atomic32_t trace_on;
static vs_atomic32_t held_on;	/* vs_lockstat_track_held() */

static vs_spinlock_t class_lock = VS_SPINLOCK_INIT;
static struct vs_lock_class classes[VS_LOCK_CLASS_MAX];
static vs_atomic32_t nr_classes;

/* Locks this thread holds with statistics on: when it took each. */
struct held_lock {
	struct vs_lock *lock;
	enum vs_lock_side side;
	uint32_t gen;
	uint64_t since;
};
static VS__PER_CONTEXT(struct held_lock, held_)[HOLD_DEPTH];
static VS__PER_CONTEXT(int, nr_held_);
#define held VS__THIS(held_)
#define nr_held VS__THIS(nr_held_)

static const struct vs_lock_ops hooked_ops;

static void hooks_update(void)
{
	vs__lock_set_hooks(&hooked_ops, vs_read_once(&stat_on) |
			   vs_read_once(&trace_on) | vs_read_once(&held_on));
}

/* In the vCPU build, reports name what statistics touch. */
static void name_statics(void)
{
	vs__vcpu_name_static(&stat_on, sizeof(stat_on), "lockstat: on", 1);
	vs__vcpu_name_static(&stat_gen, sizeof(stat_gen), "lockstat: gen", 1);
	vs__vcpu_name_static(&trace_on, sizeof(trace_on), "lockstat: trace", 1);
	vs__vcpu_name_static(&held_on, sizeof(held_on), "lockstat: held", 1);
	vs__vcpu_name_static(&class_lock, sizeof(class_lock),
			     "lockstat: class_lock", 1);
	vs__vcpu_name_static(classes, sizeof(classes),
			     "lockstat: the classes' counters", 1);
	vs__vcpu_name_static(&nr_classes, sizeof(nr_classes),
			     "lockstat: nr_classes", 1);
}

void vs_lockstat_enable(int on)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (VS_VCPU)
		(void)pthread_once(&once, name_statics);
	if (on && !vs_read_once(&stat_on))
		vs_fetch_add(&stat_gen, 1);
	vs_write_once(&stat_on, on ? 1 : 0);
	hooks_update();
}

int vs_lockstat_track_held(int on)
{
	int was = (int)vs_read_once(&held_on);

	if (on && !was)		/* holds recorded before are stale */
		vs_fetch_add(&stat_gen, 1);
	vs_write_once(&held_on, on ? 1 : 0);
	hooks_update();
	return was;
}

int vs_lockstat_tracking_held(void)
{
	return vs_read_once(&stat_on) | vs_read_once(&held_on);
}

int vs_lockstat_enabled(void)
{
	return vs_read_once(&stat_on);
}

void vs_lock_trace_set(const struct vs_lock_trace *t)
{
	vs_write_once(&trace_on, 0);
	hooks_update();
	if (t) {
		trace = *t;
		vs_write_once(&trace_on, 1);
		hooks_update();
	}
}

static void slot_reset(struct vs__lockstat_slot *s)
{
	vs_write_once(&s->con_bounces, 0);
	vs_write_once(&s->contentions, 0);
	vs_write_once(&s->waittime_min, UINT64_MAX);
	vs_write_once(&s->waittime_max, 0);
	vs_write_once(&s->waittime_total, 0);
	vs_write_once(&s->acq_bounces, 0);
	vs_write_once(&s->acquisitions, 0);
	vs_write_once(&s->holdtime_min, UINT64_MAX);
	vs_write_once(&s->holdtime_max, 0);
	vs_write_once(&s->holdtime_total, 0);
	vs_write_once(&s->holdtime_nr, 0);
}

static void class_reset(struct vs_lock_class *c)
{
	int side, i;

	for (side = 0; side < 2; side++)
		for (i = 0; i < VS_SLOT_ARRAY; i++)
			slot_reset(&c->stat[side][i]);
}

struct vs_lock_class *vs_lock_class_get(const char *name)
{
	struct vs_lock_class *c = NULL;
	uint32_t i, n;

	if (!name || !name[0] || strlen(name) > VS_LOCK_CLASS_NAME_MAX)
		return NULL;
	vs_spin_lock(&class_lock);
	n = vs_read_once(&nr_classes);
	for (i = 0; i < n; i++)
		if (strcmp(classes[i].name, name) == 0)
			c = &classes[i];
	if (!c && n < VS_LOCK_CLASS_MAX) {
		c = &classes[n];
		strcpy(c->name, name);
		class_reset(c);
		/* Release: the printer sees the class initialized. */
		vs_store_release(&nr_classes, n + 1);
	}
	vs_spin_unlock(&class_lock);
	return c;
}

void vs_lockstat_reset(void)
{
	uint32_t i, n = vs_load_acquire(&nr_classes);

	for (i = 0; i < n; i++)
		class_reset(&classes[i]);
}

static void stat_min(vs_atomic64_t *p, uint64_t v)
{
	uint64_t old = vs_read_once(p);

	while (v < old && !vs_cmpxchg_relaxed(p, &old, v))
		;
}

static void stat_max(vs_atomic64_t *p, uint64_t v)
{
	uint64_t old = vs_read_once(p);

	while (v > old && !vs_cmpxchg_relaxed(p, &old, v))
		;
}

/* Forget holds from before statistics were last switched on. */
static void held_purge(uint32_t gen)
{
	int i;

	for (i = nr_held - 1; i >= 0; i--)
		if (held[i].gen != gen)
			held[i] = held[--nr_held];
}

static void held_push(struct vs_lock *lock, enum vs_lock_side side)
{
	uint32_t gen = vs_read_once(&stat_gen);

	held_purge(gen);
	if (nr_held == HOLD_DEPTH)
		return;
	held[nr_held].lock = lock;
	held[nr_held].side = side;
	held[nr_held].gen = gen;
	held[nr_held].since = vs__now_ns();
	nr_held++;
}

/* Record an acquisition of @lock (contended if @wait_ns >= 0). */
static void stat_acquired(struct vs_lock *lock, enum vs_lock_side side,
			  int64_t wait_ns)
{
	unsigned int slot = vs__thread_slot();
	struct vs__lockstat_slot *s = &lock->class->stat[side][slot];
	uint32_t last = vs_xchg(&lock->last_slot, slot);
	int bounce = last != UINT32_MAX && last != slot;

	vs_fetch_add_relaxed(&s->acquisitions, 1);
	if (bounce)
		vs_fetch_add_relaxed(&s->acq_bounces, 1);
	if (wait_ns >= 0) {
		vs_fetch_add_relaxed(&s->contentions, 1);
		if (bounce)
			vs_fetch_add_relaxed(&s->con_bounces, 1);
		stat_min(&s->waittime_min, (uint64_t)wait_ns);
		stat_max(&s->waittime_max, (uint64_t)wait_ns);
		vs_fetch_add_relaxed(&s->waittime_total, (uint64_t)wait_ns);
	}
	held_push(lock, side);
}

/*
 * Record the release of @lock, if its acquisition was recorded under the
 * current generation and statistics are still on.
 */
static void stat_released(struct vs_lock *lock, enum vs_lock_side side)
{
	struct vs__lockstat_slot *s;
	uint64_t hold;
	int i;

	held_purge(vs_read_once(&stat_gen));
	for (i = nr_held - 1; i >= 0; i--)
		if (held[i].lock == lock && held[i].side == side)
			break;
	if (i < 0)
		return;
	hold = vs__now_ns() - held[i].since;
	held[i] = held[--nr_held];
	if (!vs_read_once(&stat_on))
		return;
	s = &lock->class->stat[side][vs__thread_slot()];
	stat_min(&s->holdtime_min, hold);
	stat_max(&s->holdtime_max, hold);
	vs_fetch_add_relaxed(&s->holdtime_total, hold);
	vs_fetch_add_relaxed(&s->holdtime_nr, 1);
}

static int stats_wanted(struct vs_lock *lock)
{
	return lock->class && vs_read_once(&stat_on);
}

/* Holds recorded without statistics (vs_lockstat_track_held()). */
static int held_only(struct vs_lock *lock)
{
	return lock->class && vs_read_once(&held_on) && !stats_wanted(lock);
}

static int tracing(void)
{
	return vs_read_once(&trace_on);
}

static int raw_trylock(struct vs_lock *lock, enum vs_lock_side side)
{
	return side == VS_LOCK_WRITE ? lock->kind->write_trylock(lock)
				     : lock->kind->read_trylock(lock);
}

/*
 * On a vCPU, a lock call (one that may sleep: every kind of vs_lock)
 * inside an RCU read-side section fails the run, as lockdep reports it
 * (VS__LD_SLEEP), and 6.18's might_sleep() would: vs_explore() tracks
 * held locks, so every lock call comes here, and exploration sees it
 * without a lockdep build.  A trylock never sleeps and is not checked.
 * Context: the locking thread.
 */
static void sleep_in_rcu_check(const struct vs_lock *lock)
{
#if VS_VCPU
	if (vs_vcpu_self() >= 0 && vs_rcu_read_ongoing())
		(void)vs_machine_fail("%s, a lock that sleeps, taken inside "
				      "an RCU read-side section",
				      lock->class ? lock->class->name :
				      "a lock");
#else
	(void)lock;	/* natively, lockdep's (VS_LOCKDEP) */
#endif
}

static void lock_hooked(struct vs_lock *lock, enum vs_lock_side side)
{
	bool write = side == VS_LOCK_WRITE;
	int64_t wait_ns = -1;
	uint64_t t0;

	sleep_in_rcu_check(lock);
	if (tracing() && trace.start_locking)
		trace.start_locking(lock, write, trace.arg);
	if (!stats_wanted(lock)) {
		if (write)
			lock->kind->write_lock(lock);
		else
			lock->kind->read_lock(lock);
		if (held_only(lock))
			held_push(lock, side);
	} else if (!raw_trylock(lock, side)) {
		/* Contended: the kernel's lock_contended() .. lock_acquired(). */
		t0 = vs__now_ns();
		if (write)
			lock->kind->write_lock(lock);
		else
			lock->kind->read_lock(lock);
		wait_ns = (int64_t)(vs__now_ns() - t0);
	}
	if (stats_wanted(lock))
		stat_acquired(lock, side, wait_ns);
	if (tracing() && trace.acquire_returned)
		trace.acquire_returned(lock, write, true, trace.arg);
}

static int trylock_hooked(struct vs_lock *lock, enum vs_lock_side side)
{
	bool write = side == VS_LOCK_WRITE;
	int ok;

	if (tracing() && trace.start_locking)
		trace.start_locking(lock, write, trace.arg);
	ok = raw_trylock(lock, side);
	if (ok && stats_wanted(lock))
		stat_acquired(lock, side, -1);
	else if (ok && held_only(lock))
		held_push(lock, side);
	if (tracing() && trace.acquire_returned)
		trace.acquire_returned(lock, write, ok, trace.arg);
	return ok;
}

/*
 * The hold ends when the kind's unlock returns, as it begins when its
 * lock returns: the hold time and the released hook both come after the
 * real unlock, so a holder preempted before it still holds the lock in
 * the statistics and in a trace.  @lock itself stays valid until this
 * returns (vs_lock_destroy()'s rule), though another thread may hold it.
 */
static void unlock_hooked(struct vs_lock *lock, enum vs_lock_side side)
{
	bool write = side == VS_LOCK_WRITE;

	if (write)
		lock->kind->write_unlock(lock);
	else
		lock->kind->read_unlock(lock);
	if (lock->class)
		stat_released(lock, side);
	if (tracing() && trace.released)
		trace.released(lock, write, trace.arg);
}

static void downgrade_hooked(struct vs_lock *lock)
{
	int i, had = 0;

	lock->kind->downgrade_write(lock);
	/* The write hold ends when the downgrade returns; a read hold,
	 * not contended, starts there. */
	if (lock->class) {
		for (i = 0; i < nr_held; i++)
			had |= held[i].lock == lock;
		stat_released(lock, VS_LOCK_WRITE);
		if (had && stats_wanted(lock))
			stat_acquired(lock, VS_LOCK_READ, -1);
		else if (had && held_only(lock))
			held_push(lock, VS_LOCK_READ);
	}
	/* Like mmap_write_downgrade(): only acquire_returned(read). */
	if (tracing() && trace.acquire_returned)
		trace.acquire_returned(lock, false, true, trace.arg);
}

static void hooked_read_lock(struct vs_lock *l)
{
	lock_hooked(l, VS_LOCK_READ);
}

static int hooked_read_trylock(struct vs_lock *l)
{
	return trylock_hooked(l, VS_LOCK_READ);
}

static void hooked_read_unlock(struct vs_lock *l)
{
	unlock_hooked(l, VS_LOCK_READ);
}

static void hooked_write_lock(struct vs_lock *l)
{
	lock_hooked(l, VS_LOCK_WRITE);
}

static int hooked_write_trylock(struct vs_lock *l)
{
	return trylock_hooked(l, VS_LOCK_WRITE);
}

static void hooked_write_unlock(struct vs_lock *l)
{
	unlock_hooked(l, VS_LOCK_WRITE);
}

static const struct vs_lock_ops hooked_ops = {
	.name = "hooked",
	.read_lock = hooked_read_lock,
	.read_trylock = hooked_read_trylock,
	.read_unlock = hooked_read_unlock,
	.write_lock = hooked_write_lock,
	.write_trylock = hooked_write_trylock,
	.write_unlock = hooked_write_unlock,
	.downgrade_write = downgrade_hooked,
};

int vs_lockstat_read(const struct vs_lock_class *class,
		     enum vs_lock_side side, struct vs_lockstat *out)
{
	const struct vs__lockstat_slot *s;
	uint64_t v;
	int i;

	if (!class || !out || (side != VS_LOCK_READ && side != VS_LOCK_WRITE))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->waittime_min = out->holdtime_min = UINT64_MAX;
	for (i = 0; i < VS_SLOT_ARRAY; i++) {
		s = &class->stat[side][i];
#define SUM(f) out->f += vs_read_once((vs_atomic64_t *)&s->f)
		SUM(con_bounces);
		SUM(contentions);
		SUM(waittime_total);
		SUM(acq_bounces);
		SUM(acquisitions);
		SUM(holdtime_total);
		SUM(holdtime_nr);
#undef SUM
#define MIN(f) if ((v = vs_read_once((vs_atomic64_t *)&s->f)) < out->f) out->f = v
#define MAX(f) if ((v = vs_read_once((vs_atomic64_t *)&s->f)) > out->f) out->f = v
		MIN(waittime_min);
		MAX(waittime_max);
		MIN(holdtime_min);
		MAX(holdtime_max);
#undef MIN
#undef MAX
	}
	if (out->waittime_min == UINT64_MAX)
		out->waittime_min = 0;
	if (out->holdtime_min == UINT64_MAX)
		out->holdtime_min = 0;
	return 0;
}

/* Nanoseconds printed as microseconds with two decimals. */
static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

static double avg_us(uint64_t total, uint64_t nr)
{
	return nr ? us(total) / (double)nr : 0.0;
}

static void print_side(FILE *out, const struct vs_lock_class *c,
		       enum vs_lock_side side)
{
	struct vs_lockstat st;
	char name[VS_LOCK_CLASS_NAME_MAX + 4];

	vs_lockstat_read(c, side, &st);
	snprintf(name, sizeof(name), "%s-%c", c->name,
		 side == VS_LOCK_WRITE ? 'W' : 'R');
	fprintf(out, "%40s: %14llu %14llu %14.2f %14.2f %14.2f %14.2f "
		"%14llu %14llu %14.2f %14.2f %14.2f %14.2f\n", name,
		(unsigned long long)st.con_bounces,
		(unsigned long long)st.contentions, us(st.waittime_min),
		us(st.waittime_max), us(st.waittime_total),
		avg_us(st.waittime_total, st.contentions),
		(unsigned long long)st.acq_bounces,
		(unsigned long long)st.acquisitions, us(st.holdtime_min),
		us(st.holdtime_max), us(st.holdtime_total),
		avg_us(st.holdtime_total, st.holdtime_nr));
}

int vs_lockstat_print(FILE *out)
{
	static const char dashes[] =
		"-------------------------------------------------------------"
		"-------------------------------------------------------------"
		"-------------------------------------------------------------"
		"---------------------------------------------";
	uint32_t i, n = vs_load_acquire(&nr_classes);

	if (!out)
		return -EINVAL;
	fprintf(out, "lock_stat version 0.4\n%s\n", dashes);
	fprintf(out, "%40s  %14s %14s %14s %14s %14s %14s %14s %14s %14s "
		"%14s %14s %14s\n%s\n", "class name", "con-bounces",
		"contentions", "waittime-min", "waittime-max",
		"waittime-total", "waittime-avg", "acq-bounces",
		"acquisitions", "holdtime-min", "holdtime-max",
		"holdtime-total", "holdtime-avg", dashes);
	for (i = 0; i < n; i++) {
		fputc('\n', out);
		print_side(out, &classes[i], VS_LOCK_WRITE);
		print_side(out, &classes[i], VS_LOCK_READ);
		fprintf(out, "%.*s\n", 40, dashes);
	}
	fflush(out);
	return ferror(out) ? -EIO : 0;
}

/*
 * The engine's hooks (vcpu/client.h): a failed run's contexts never run
 * again, so the class table's lock is free; a dropped context holds
 * nothing; a report says what a context holds.
 */
static void abandon(void)
{
	memset(&class_lock, 0, sizeof(class_lock));
}

static void context_end(int cpu, int dropped)
{
#if VS_VCPU
	if (dropped)
		VS__OF(nr_held_, cpu) = 0;
#else
	(void)cpu;	/* natively per thread: no context to drop */
	(void)dropped;
#endif
}

/* The engine's report hook, and a test hook (test/hooks.h). */
size_t vs__lockstat_held_of(int cpu, char *buf, size_t len)
{
	struct held_lock *h = VS__OF(held_, cpu);
	int i, n = VS__OF(nr_held_, cpu);
	size_t at = 0;

	if (len == 0)
		return 0;
	buf[0] = 0;
	if (n == 0) {
		at = (size_t)snprintf(buf, len, "%s",
				      vs_lockstat_tracking_held() ? "nothing" :
				      "unknown (held locks not tracked)");
		return at < len ? at : len - 1;
	}
	for (i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s (%s)",
				       i ? ", " : "",
				       h[i].lock->class ?
				       h[i].lock->class->name : "a lock",
				       h[i].side == VS_LOCK_WRITE ? "write" :
				       "read");
	return at < len ? at : len - 1;
}

static struct vs__vcpu_client lockstat_client = {
	.context_end = context_end,
	.describe_context = vs__lockstat_held_of,
	.abandon = abandon,
};

__attribute__((constructor)) static void lockstat_client_register(void)
{
	vs__vcpu_client_register(&lockstat_client);
}
