/* SPDX-License-Identifier: MIT */
/*
 * test/sync/test_explore.c - schedule exploration (vmsim/check/explore.h):
 * small locking bugs, each in the shape a real one takes, are found,
 * reported by name, shrunk, and replayed exactly; their correct
 * versions pass the same exploration.
 *
 *   lost_update     an increment as a load and a store;
 *   static_update   the same on a static no one named (by its symbol);
 *   heap_update     the same on a heap object no one named (by its
 *                   offset in the heap);
 *   mm_ops          a fault beside mprotect and munmap, failed by its
 *                   check: the slices of its trace;
 *   stale_cache     a per-thread lookup cache that nothing invalidates;
 *   lost_unlock     a path that returns with the lock held: a deadlock,
 *                   reported with the lock, not a hang;
 *
 * (the writer that waits for the readers to drain and only then sets
 * its flag is docs/examples/explore.c), then, for each lock kind, its
 * exclusion, and RCU's grace period.
 *
 * Runs in vmsim-test-vcpu only (test/suites.def: vcpu_only).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vmsim/check/explore.h>
#include <vmsim/lock.h>
#include <vmsim/rcu.h>
#include <vmsim/rwsem.h>
#include <vmsim/seqcount.h>
#include <vmsim/slab.h>
#include <vmsim/spinlock.h>
#include <vmsim/vmsim.h>
#include <vmsim/wait.h>

#include "explore_tally.h"
#include "test.h"

/* Which version the scenarios run: the bug, or the fix. */
static int broken;

/* ---- lost_update --------------------------------------------------------- */

#define INCS 2

struct counter {
	vs_atomic_long_t n;
};

static int counter_setup(void **state)
{
	struct counter *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	vs_atomic_init(&c->n, 0);
	vs_vcpu_name(&c->n, sizeof(c->n), "counter");
	*state = c;
	return 0;
}

static void counter_thread(void *state, unsigned int i)
{
	struct counter *c = state;
	int k;

	(void)i;
	for (k = 0; k < INCS; k++) {
		if (broken)
			vs_write_once(&c->n, vs_read_once(&c->n) + 1);
		else
			(void)vs_fetch_add(&c->n, 1);
	}
}

static void counter_check(void *state)
{
	struct counter *c = state;

	VS_EXPLORE_ASSERT(vs_read_once(&c->n) == 2 * INCS);
}

static const struct vs_explore_scenario lost_update = {
	.name = "lost_update", .threads = 2, .setup = counter_setup,
	.thread = counter_thread, .check = counter_check, .fini = free,
};

/*
 * The same on a static no one named: the report names it by its symbol
 * (the executable's .symtab), not by an address that ASLR moves.
 */
static vs_atomic_long_t unnamed_counter;

static int static_setup(void **state)
{
	vs_atomic_init(&unnamed_counter, 0);
	*state = &unnamed_counter;
	return 0;
}

static void static_thread(void *state, unsigned int i)
{
	(void)state;
	(void)i;
	vs_write_once(&unnamed_counter, vs_read_once(&unnamed_counter) + 1);
}

static void static_check(void *state)
{
	(void)state;
	VS_EXPLORE_ASSERT(vs_read_once(&unnamed_counter) == 2);
}

static const struct vs_explore_scenario static_update = {
	.name = "static_update", .threads = 2, .setup = static_setup,
	.thread = static_thread, .check = static_check,
};

static int heap_setup(void **state)
{
	vs_atomic_long_t *c = calloc(1, sizeof(*c));

	*state = c;
	return c ? 0 : -ENOMEM;
}

static void heap_thread(void *state, unsigned int i)
{
	vs_atomic_long_t *c = state;

	(void)i;
	vs_write_once(c, vs_read_once(c) + 1);
}

static void heap_check(void *state)
{
	VS_EXPLORE_ASSERT(vs_read_once((vs_atomic_long_t *)state) == 2);
}

static const struct vs_explore_scenario heap_update = {
	.name = "heap_update", .threads = 2, .setup = heap_setup,
	.thread = heap_thread, .check = heap_check, .fini = free,
};

/*
 * mm_ops: one thread faults a page in while the other mprotects and
 * unmaps its neighbour; the check fails every schedule, so that the
 * failure's trace (VMSIM_TRACE) shows the model's slices.
 */
static int mm_ops_setup(void **state)
{
	struct vs_mm *mm;
	long a;
	int err = vs_mm_create(&mm, NULL);

	if (err)
		return err;
	a = vs_mmap(mm, 0, 2 * VS_PAGE_SIZE, VS_PROT_READ | VS_PROT_WRITE,
		    VS_MAP_PRIVATE | VS_MAP_ANONYMOUS, NULL, 0);
	if (a < 0) {
		vs_mm_destroy(mm);
		return (int)a;
	}
	*state = mm;
	return 0;
}

static void mm_ops_thread(void *state, unsigned int i)
{
	struct vs_mm *mm = state;
	struct vs_vma *vma;
	unsigned long a;

	vs_mmap_read_lock(mm);
	vma = vs_find_vma(mm, 0);
	a = vma ? vma->vm_start : 0;
	vs_mmap_read_unlock(mm);
	if (!i) {
		(void)vs_handle_mm_fault(mm, a, VS_FAULT_FLAG_USER |
					 VS_FAULT_FLAG_WRITE);
		return;
	}
	(void)vs_mprotect(mm, a + VS_PAGE_SIZE, VS_PAGE_SIZE, VS_PROT_READ);
	(void)vs_munmap(mm, a + VS_PAGE_SIZE, VS_PAGE_SIZE);
}

static void mm_ops_check(void *state)
{
	(void)state;
	VS_EXPLORE_ASSERT(!"the trace is wanted");
}

static void mm_ops_fini(void *state)
{
	vs_mm_destroy(state);
}

static const struct vs_explore_scenario mm_ops = {
	.name = "mm_ops", .threads = 2, .setup = mm_ops_setup,
	.thread = mm_ops_thread, .check = mm_ops_check, .fini = mm_ops_fini,
};

/* ---- stale_cache --------------------------------------------------------- */

/* A VMA as far as the lookup cares: unmapped is dead. */
struct area {
	vs_atomic32_t dead;
};

struct space {
	struct vs_lock lock;		/* mmap_lock */
	VS_ATOMIC(struct area *) tree;	/* the one VMA */
	vs_atomic32_t seq;		/* bumped when the tree changes */
	struct area a[2];
};

static int space_setup(void **state)
{
	struct space *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	err = vs_lock_init(&s->lock, "rwsem", "scenario mmap_lock");
	if (err) {
		free(s);
		return err;
	}
	vs_atomic_init(&s->tree, &s->a[0]);
	vs_vcpu_name(&s->tree, sizeof(s->tree), "tree root");
	vs_vcpu_name(&s->seq, sizeof(s->seq), "vmacache seqnum");
	vs_vcpu_name(s->a, sizeof(s->a), "a VMA");
	*state = s;
	return 0;
}

/* A lock still held (a failed schedule) cannot be destroyed: its memory
 * stays, reachable from the lock registry. */
static void space_fini(void *state)
{
	struct space *s = state;

	if (vs_lock_destroy(&s->lock) == 0)
		free(s);
}

/* The reader looks the VMA up twice under the read lock; the first
 * lookup fills its own cache, which only the fix checks against seq. */
static void space_reader(struct space *s)
{
	struct area *cache = NULL, *a;
	uint32_t cache_seq = 0;
	int k;

	for (k = 0; k < 2; k++) {
		vs_lock_read_lock(&s->lock);
		if (cache && (broken || cache_seq == vs_read_once(&s->seq))) {
			a = cache;
		} else {
			a = vs_read_once(&s->tree);
			cache = a;
			cache_seq = vs_read_once(&s->seq);
		}
		VS_EXPLORE_ASSERT(!vs_read_once(&a->dead));
		vs_lock_read_unlock(&s->lock);
	}
}

/* The writer replaces the VMA (an munmap and an mmap) under the write
 * lock. */
static void space_writer(struct space *s)
{
	struct area *old;

	vs_lock_write_lock(&s->lock);
	old = vs_read_once(&s->tree);
	vs_write_once(&s->tree, &s->a[1]);
	vs_write_once(&s->seq, vs_read_once(&s->seq) + 1);
	vs_write_once(&old->dead, 1);
	vs_lock_write_unlock(&s->lock);
}

static void space_thread(void *state, unsigned int i)
{
	if (i == 0)
		space_reader(state);
	else
		space_writer(state);
}

static const struct vs_explore_scenario stale_cache = {
	.name = "stale_cache", .threads = 2, .setup = space_setup,
	.thread = space_thread, .fini = space_fini,
};

/* ---- lost_unlock --------------------------------------------------------- */

/* Thread 0 takes the lock twice; on its error path the broken version
 * returns without the unlock.  Thread 1 takes it once. */
static void unlock_thread(void *state, unsigned int i)
{
	struct space *s = state;
	int k;

	for (k = 0; k < (i == 0 ? 2 : 1); k++) {
		vs_lock_write_lock(&s->lock);
		vs_write_once(&s->seq, vs_read_once(&s->seq) + 1);
		if (i == 0 && k == 1 && broken)
			return;		/* the error path forgets the unlock */
		vs_lock_write_unlock(&s->lock);
	}
}

static const struct vs_explore_scenario lost_unlock = {
	.name = "lost_unlock", .threads = 2, .setup = space_setup,
	.thread = unlock_thread, .fini = space_fini,
};

/* ---- two deadlocks: shrinking keeps the one it found ---------------------- */

struct abba {
	struct vs_lock a, b;
};

static int abba_setup(void **state)
{
	struct abba *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	if (vs_lock_init(&s->a, "rwsem", "lock A") ||
	    vs_lock_init(&s->b, "rwsem", "lock B")) {
		(void)vs_lock_destroy(&s->a);
		free(s);
		return -EINVAL;
	}
	*state = s;
	return 0;
}

/* Locks a failed schedule left held stay, with their memory. */
static void abba_fini(void *state)
{
	struct abba *s = state;

	if (vs_lock_destroy(&s->a) == 0 && vs_lock_destroy(&s->b) == 0)
		free(s);
}

/* Thread 0 takes A then B; thread 1 takes B then A and returns still
 * holding B.  Without a preemption both finish.  With one, two
 * deadlocks: each waits on the other's lock, or thread 1 ran first
 * and thread 0 waits for ever on the B it kept. */
static void abba_thread(void *state, unsigned int i)
{
	struct abba *s = state;

	vs_lock_write_lock(i ? &s->b : &s->a);
	vs_lock_write_lock(i ? &s->a : &s->b);
	vs_lock_write_unlock(i ? &s->a : &s->b);
	if (!i)
		vs_lock_write_unlock(&s->a);
}

static const struct vs_explore_scenario abba = {
	.name = "abba", .threads = 2, .setup = abba_setup,
	.thread = abba_thread, .fini = abba_fini,
};

/* ---- two spins: shrinking keeps the one it found ------------------------- */

struct two_spins {
	vs_atomic32_t x, z;
};

static int two_spins_setup(void **state)
{
	struct two_spins *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	vs_vcpu_name(&s->x, sizeof(s->x), "x");
	vs_vcpu_name(&s->z, sizeof(s->z), "z");
	*state = s;
	return 0;
}

/* Each thread raises a word for a moment and spins for ever if it
 * catches the other's raised.  Without a preemption both finish.
 * Thread 1 spins after one (thread 0 stopped with z raised), thread 0
 * after two (it stopped before looking, then thread 1 with x raised). */
static void two_spins_thread(void *state, unsigned int i)
{
	struct two_spins *s = state;
	vs_atomic32_t *mine = i ? &s->x : &s->z, *theirs = i ? &s->z : &s->x;

	if (i == 0 && vs_read_once(theirs))
		for (;;)
			vs_cpu_relax();
	vs_write_once(mine, 1);
	vs_write_once(mine, 0);
	if (i == 1 && vs_read_once(theirs))
		for (;;)
			vs_cpu_relax();
}

static const struct vs_explore_scenario two_spins = {
	.name = "two_spins", .threads = 2, .setup = two_spins_setup,
	.thread = two_spins_thread, .fini = free,
};

/*
 * @sc under the random scheduler, seeds 1 to 20: each fails with @err,
 * and the failure found, with or without @mark in its report, is shrunk
 * to one that has @mark or not as well.  Return: the seeds that found
 * it with @mark.
 */
static int shrink_keeps(const struct vs_explore_scenario *sc, int err,
			const char *mark, uint64_t max_events)
{
	struct vs_explore_options o = { .sched = &vs_vcpu_sched_random,
					.max_events = max_events };
	static struct vs_explore_report rep;
	int seed, marked = 0, found;

	for (seed = 1; seed <= 20; seed++) {
		o.seed = (uint64_t)seed;
		o.flags = VS_EXPLORE_QUIET | VS_EXPLORE_NO_SHRINK;
		ck_assert_int_eq(vs_explore(sc, &o, &rep), err);
		found = strstr(rep.text, mark) != NULL;
		marked += found;
		o.flags = VS_EXPLORE_QUIET;
		ck_assert_int_eq(vs_explore(sc, &o, &rep), err);
		ck_assert_msg((strstr(rep.text, mark) != NULL) == found,
			      "%s, seed %d: found %s \"%s\", shrunk to %s:\n%s",
			      sc->name, seed, found ? "with" : "without", mark,
			      found ? "without" : "with", rep.text);
	}
	return marked;
}

/* Of the two deadlocks, the inverted order stays one, not the lost
 * unlock that needs no preemption; some seed finds the inversion
 * (thread 1, work 2, waits too, not ended). */
START_TEST(explore_shrink_keeps_deadlock)
{
	ck_assert_int_gt(shrink_keeps(&abba, -EDEADLK, "(work 2): blocked",
				      0), 0);
}
END_TEST

/* Of the two stuck runs, thread 0 spinning stays so, not thread 1,
 * which needs fewer preemptions; some seed finds thread 0 (work 1)
 * spinning. */
START_TEST(explore_shrink_keeps_stuck)
{
	ck_assert_int_gt(shrink_keeps(&two_spins, -ECANCELED,
				      "(work 1): running", 2000), 0);
}
END_TEST

/* ---- the lock kinds -------------------------------------------------------- */

/* The lock kind the scenarios below take (vs_lock_init()'s). */
static const char *kind;

struct excl {
	struct vs_lock lock;
	vs_atomic32_t r_in, w_in;	/* inside the critical section */
	vs_atomic32_t arrived;		/* readers that got in, ever */
	vs_atomic32_t trying;		/* readers about to ask */
	vs_atomic32_t w_waiting;	/* the writer asked and has not got in */
	vs_atomic32_t w_done;
	vs_atomic32_t handoff;		/* HANDOFF set as the first holder left */
	vs_atomic32_t next;		/* who took the lock after it: i + 1 */
	vs_atomic32_t leaving;		/* the first holder has left */
};

static int excl_setup(void **state)
{
	struct excl *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	err = vs_lock_init(&s->lock, kind, "scenario lock");
	if (err) {
		free(s);
		return err;
	}
	vs_vcpu_name(&s->r_in, sizeof(s->r_in), "readers inside");
	vs_vcpu_name(&s->w_in, sizeof(s->w_in), "writer inside");
	*state = s;
	return 0;
}

static void excl_fini(void *state)
{
	struct excl *s = state;

	if (vs_lock_destroy(&s->lock) == 0)
		free(s);
}

/* How long a holder stays inside, looking for the other side. */
#define EXCL_LOOKS 4

/*
 * Readers and a writer (thread 0), each inside once: never both.  A
 * holder stays inside a while, spinning: under PCT a spinner gives way,
 * so whoever got in wrongly runs and is seen, with one preemption
 * needed to let it in rather than two.
 */
static void excl_thread(void *state, unsigned int i)
{
	struct excl *s = state;
	int k;

	if (i == 0) {
		vs_lock_write_lock(&s->lock);
		vs_write_once(&s->w_in, 1);
		for (k = 0; k < EXCL_LOOKS; k++) {
			VS_EXPLORE_ASSERT(vs_read_once(&s->r_in) == 0);
			vs_cpu_relax();
		}
		vs_write_once(&s->w_in, 0);
		vs_lock_write_unlock(&s->lock);
	} else {
		vs_lock_read_lock(&s->lock);
		(void)vs_fetch_add(&s->r_in, 1);
		for (k = 0; k < EXCL_LOOKS; k++) {
			VS_EXPLORE_ASSERT(vs_read_once(&s->w_in) == 0);
			vs_cpu_relax();
		}
		(void)vs_fetch_sub(&s->r_in, 1);
		vs_lock_read_unlock(&s->lock);
	}
}

static const struct vs_explore_scenario exclusion = {
	.name = "exclusion", .threads = 3, .setup = excl_setup,
	.thread = excl_thread, .fini = excl_fini,
};

/*
 * A reader may not pass a writer that waits: thread 1 holds the lock
 * for reading until thread 2 has tried; the writer (thread 0) queues
 * meanwhile.  Thread 2, the new reader, may get in before the writer
 * only if the writer was not yet waiting when it asked.
 */
static void barge_thread(void *state, unsigned int i)
{
	struct excl *s = state;
	int waiting;

	if (i == 0) {
		vs_write_once(&s->w_waiting, 1);
		vs_lock_write_lock(&s->lock);
		vs_write_once(&s->w_waiting, 0);
		vs_write_once(&s->w_done, 1);
		vs_lock_write_unlock(&s->lock);
	} else if (i == 1) {
		vs_lock_read_lock(&s->lock);
		vs_write_once(&s->arrived, 1);
		while (!vs_read_once(&s->trying))
			vs_cpu_relax();
		vs_lock_read_unlock(&s->lock);
	} else {
		while (!vs_read_once(&s->arrived))
			vs_cpu_relax();
		/* Queued: the wait list holds it (the rwsem's WAITERS). */
		waiting = vs_read_once(&s->w_waiting) &&
			  (vs_read_once(&((struct vs_rwsem *)s->lock.impl)->count)
			   & VS_RWSEM_FLAG_WAITERS);
		vs_write_once(&s->trying, 1);
		vs_lock_read_lock(&s->lock);
		VS_EXPLORE_ASSERT(!waiting || vs_read_once(&s->w_done));
		vs_lock_read_unlock(&s->lock);
	}
}

/* One reader and the writer: the reader's unlock must wake a writer
 * that queued behind it, or the writer sleeps for ever (deadlock). */
static const struct vs_explore_scenario exclusion_pair = {
	.name = "exclusion_pair", .threads = 2, .setup = excl_setup,
	.thread = excl_thread, .fini = excl_fini,
};

static const struct vs_explore_scenario no_barging = {
	.name = "no_barging", .threads = 3, .setup = excl_setup,
	.thread = barge_thread, .fini = excl_fini,
};

/*
 * The readers queued behind a writer are woken together: each reader,
 * once in, waits inside until the other is in too.  Were one left
 * queued, the other would wait forever: stuck.
 */
static void batch_thread(void *state, unsigned int i)
{
	struct excl *s = state;

	if (i == 0) {
		vs_lock_write_lock(&s->lock);
		vs_write_once(&s->w_in, 1);
		while (vs_read_once(&s->trying) < 2)
			vs_cpu_relax();
		vs_write_once(&s->w_in, 0);
		vs_lock_write_unlock(&s->lock);
	} else {
		while (!vs_read_once(&s->w_in))
			vs_cpu_relax();
		(void)vs_fetch_add(&s->trying, 1);
		vs_lock_read_lock(&s->lock);
		(void)vs_fetch_add(&s->arrived, 1);
		while (vs_read_once(&s->arrived) < 2)
			vs_cpu_relax();
		vs_lock_read_unlock(&s->lock);
	}
}

static const struct vs_explore_scenario batch_wake = {
	.name = "batch_wake", .threads = 3, .setup = excl_setup,
	.thread = batch_thread, .fini = excl_fini,
};

/*
 * The rwsem's handoff, reached: its timeout is 0 (the test hook
 * vs_rwsem_set_handoff_timeout()), so a first waiter that finds the lock
 * held sets HANDOFF at once.  Thread 0 holds the lock for writing;
 * writer 1 queues behind it, first; writer 2 asks once thread 0 has
 * left, racing writer 1's wake-up.  Every writer is alone inside; if
 * thread 0 saw HANDOFF as it left, writer 1, whose handoff it was,
 * takes the lock next; everyone gets in (a lost wake-up would be a
 * deadlock).  The threads wait for each other asleep, not spinning:
 * under PCT a spinner drops below every other thread, and writer 2
 * would never run before writer 1.
 */
static int handoff_setup(void **state)
{
	struct excl *s;
	int err = excl_setup(state);

	if (err)
		return err;
	s = *state;
	vs_vcpu_name(&s->next, sizeof(s->next), "next holder");
	return vs_rwsem_set_handoff_timeout(s->lock.impl, 0);
}

/* Sleep until *@word is set.  Acquire pairs with the release in
 * handoff_signal(). */
static void handoff_wait(vs_atomic32_t *word)
{
	while (!vs_load_acquire(word))
		(void)vs_futex_wait(word, 0, -1);
}

static void handoff_signal(vs_atomic32_t *word)
{
	vs_store_release(word, 1);
	vs_futex_wake(word, INT32_MAX);
}

/* Inside the write lock: alone, a while. */
static void handoff_inside(struct excl *s)
{
	int k;

	VS_EXPLORE_ASSERT(vs_fetch_add(&s->w_in, 1) == 0);
	for (k = 0; k < EXCL_LOOKS; k++) {
		VS_EXPLORE_ASSERT(vs_read_once(&s->w_in) == 1);
		vs_cpu_relax();
	}
	(void)vs_fetch_sub(&s->w_in, 1);
}

static void handoff_thread(void *state, unsigned int i)
{
	struct excl *s = state;
	struct vs_rwsem *sem = s->lock.impl;
	long count;

	if (i == 0) {
		vs_lock_write_lock(&s->lock);
		handoff_signal(&s->arrived);
		handoff_inside(s);
		/* Only the first waiter sets it, and while we hold the lock
		 * nobody clears it.  Writer 1 queues (WAITERS) and, under a
		 * timeout of 0, asks for the handoff in one wait_lock
		 * section: read under wait_lock, both are set or neither. */
		vs_spin_lock(&sem->wait_lock);
		count = vs_read_once(&sem->count);
		vs_spin_unlock(&sem->wait_lock);
		VS_EXPLORE_ASSERT(!(count & VS_RWSEM_FLAG_WAITERS) ||
				  (count & VS_RWSEM_FLAG_HANDOFF));
		vs_write_once(&s->handoff,
			      (count & VS_RWSEM_FLAG_HANDOFF) != 0);
		vs_lock_write_unlock(&s->lock);
		handoff_signal(&s->leaving);
		return;
	}
	handoff_wait(i == 1 ? &s->arrived : &s->leaving);
	vs_lock_write_lock(&s->lock);
	if (!vs_read_once(&s->next))
		vs_write_once(&s->next, i + 1);
	handoff_inside(s);
	vs_lock_write_unlock(&s->lock);
}

/* Schedules whose thread 0 saw HANDOFF set: the handoff was reached. */
static unsigned long handoffs_seen;

static void handoff_check(void *state)
{
	struct excl *s = state;

	handoffs_seen += vs_read_once(&s->handoff);
	VS_EXPLORE_ASSERT(!vs_read_once(&s->handoff) ||
			  vs_read_once(&s->next) == 2);
}

static const struct vs_explore_scenario handoff = {
	.name = "handoff", .threads = 3, .setup = handoff_setup,
	.thread = handoff_thread, .check = handoff_check, .fini = excl_fini,
};

/* ---- RCU ------------------------------------------------------------------- */

struct rcu_box {
	VS_ATOMIC(struct area *) ptr;	/* RCU-protected */
	struct area a[2];
};

static int rcu_setup(void **state)
{
	struct rcu_box *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	vs_atomic_init(&b->ptr, &b->a[0]);
	vs_vcpu_name(&b->ptr, sizeof(b->ptr), "the RCU pointer");
	vs_vcpu_name(b->a, sizeof(b->a), "an object");
	*state = b;
	return 0;
}

/* A reader dereferences @ptr and uses the object a while, spinning:
 * under PCT a spinner gives way, so an updater runs meanwhile. */
static void rcu_reader(VS_ATOMIC(struct area *) *ptr)
{
	struct area *a;
	int k;

	vs_rcu_read_lock();
	a = vs_load_acquire(ptr);
	for (k = 0; k < EXCL_LOOKS; k++) {
		(void)vs_read_once(&a->dead);	/* freed: use after free */
		vs_cpu_relax();
	}
	vs_rcu_read_unlock();
}

/* A reader dereferences the pointer and uses the object; the updater
 * replaces it and, after a grace period, frees it: poisons it, which a
 * later access finds (VS_MACHINE_CHECK_FREED). */
static void rcu_thread(void *state, unsigned int i)
{
	struct rcu_box *b = state;
	struct area *old;

	if (i == 0) {
		old = vs_read_once(&b->ptr);
		vs_store_release(&b->ptr, &b->a[1]);
		vs_synchronize_rcu();
		vs_vcpu_poison(old, sizeof(*old));
	} else {
		rcu_reader(&b->ptr);
	}
}

static const struct vs_explore_scenario rcu_grace = {
	.name = "rcu_grace", .threads = 2, .setup = rcu_setup,
	.thread = rcu_thread, .fini = free,
};

/* The same through vm/'s object cache: vs_kmem_cache_free_rcu(). */
struct cached {
	struct vs_kmem_cache cache;
	VS_ATOMIC(struct area *) ptr;	/* RCU-protected */
	struct area *obj[2];
};

static int cached_setup(void **state)
{
	struct cached *c = calloc(1, sizeof(*c));
	const struct vs_kmem_cache init =
		VS_KMEM_CACHE_INIT("scenario objects", sizeof(struct area),
				   8);

	if (!c)
		return -ENOMEM;
	c->cache = init;
	c->obj[0] = vs_kmem_cache_zalloc(&c->cache);
	c->obj[1] = vs_kmem_cache_zalloc(&c->cache);
	*state = c;	/* cached_fini() frees what there is */
	if (!c->obj[0] || !c->obj[1])
		return -ENOMEM;
	vs_atomic_init(&c->ptr, c->obj[0]);
	vs_vcpu_name(c->obj[0], sizeof(struct area), "the first object");
	*state = c;
	return 0;
}

/* The updater frees the old object after readers, through a batch
 * handed over at once; the reader uses what it dereferenced. */
static void cached_thread(void *state, unsigned int i)
{
	struct cached *c = state;
	struct area *a;

	if (i == 0) {
		a = c->obj[0];
		c->obj[0] = NULL;	/* the free below owns it now */
		vs_store_release(&c->ptr, c->obj[1]);
		vs_kmem_cache_free_rcu(&c->cache, a);
		vs_rcu_free_handover();
		vs_rcu_barrier();
	} else {
		rcu_reader(&c->ptr);
	}
}

/* On the host: what is still allocated back, then the cache. */
static void cached_fini(void *state)
{
	struct cached *c = state;
	int k;

	vs_rcu_free_handover();
	vs_rcu_barrier();
	for (k = 0; k < 2; k++)
		vs_kmem_cache_free(&c->cache, c->obj[k]);
	if (vs_kmem_cache_destroy(&c->cache) == 0)
		free(c);
}

static const struct vs_explore_scenario free_rcu = {
	.name = "free_rcu", .threads = 2, .setup = cached_setup,
	.thread = cached_thread, .fini = cached_fini,
};

/*
 * Frees handed to RCU at once (vs_rcu_set_free_at_once()), so that a
 * grace period may start inside the updater's sequence: the updater
 * replaces the published object twice, freeing each old one; in the
 * broken version it queues each free before it unpublishes the object.
 * Two readers use what they find, twice each.  Batched (@at_once_mode
 * 0), the frees wait for vs_rcu_barrier(), after the last unpublish,
 * and the broken order goes unseen.
 */
#define AT_ONCE_OBJS 3

static int at_once_mode = 1;

struct at_once {
	struct vs_kmem_cache cache;
	VS_ATOMIC(struct area *) ptr;	/* RCU-protected */
	struct area *obj[AT_ONCE_OBJS];	/* not yet handed to a free */
};

static int at_once_setup(void **state)
{
	struct at_once *c = calloc(1, sizeof(*c));
	const struct vs_kmem_cache init =
		VS_KMEM_CACHE_INIT("scenario objects", sizeof(struct area),
				   8);
	int k;

	if (!c)
		return -ENOMEM;
	c->cache = init;
	*state = c;	/* at_once_fini() frees what there is */
	for (k = 0; k < AT_ONCE_OBJS; k++) {
		c->obj[k] = vs_kmem_cache_zalloc(&c->cache);
		if (!c->obj[k])
			return -ENOMEM;
		vs_vcpu_name(c->obj[k], sizeof(struct area), "an object");
	}
	vs_atomic_init(&c->ptr, c->obj[0]);
	vs_vcpu_name(&c->ptr, sizeof(c->ptr), "the RCU pointer");
	(void)vs_rcu_set_free_at_once(at_once_mode);
	return 0;
}

/* Unpublish object @k (publish @k + 1), then free it; the broken
 * version frees first. */
static void at_once_replace(struct at_once *c, int k)
{
	struct area *a = c->obj[k];

	c->obj[k] = NULL;	/* the free below owns it now */
	if (broken)
		vs_kmem_cache_free_rcu(&c->cache, a);
	/* Release: pairs with the acquire in rcu_reader(). */
	vs_store_release(&c->ptr, c->obj[k + 1]);
	if (!broken)
		vs_kmem_cache_free_rcu(&c->cache, a);
}

static void at_once_thread(void *state, unsigned int i)
{
	struct at_once *c = state;
	int k;

	if (i == 0) {
		for (k = 0; k + 1 < AT_ONCE_OBJS; k++)
			at_once_replace(c, k);
		vs_rcu_barrier();
		return;
	}
	for (k = 0; k < 2; k++)
		rcu_reader(&c->ptr);
}

/* On the host: the mode back to batching, what is still allocated back,
 * then the cache. */
static void at_once_fini(void *state)
{
	struct at_once *c = state;
	int k;

	(void)vs_rcu_set_free_at_once(0);
	vs_rcu_barrier();
	for (k = 0; k < AT_ONCE_OBJS; k++)
		vs_kmem_cache_free(&c->cache, c->obj[k]);
	if (vs_kmem_cache_destroy(&c->cache) == 0)
		free(c);
}

static const struct vs_explore_scenario free_at_once = {
	.name = "free_at_once", .threads = 3, .setup = at_once_setup,
	.thread = at_once_thread, .fini = at_once_fini,
};

/* ---- the tests ------------------------------------------------------------ */

/* ---- a seqcount: the reader's copy is never torn ------------------------- */

#define SEQ_ROUNDS 2

/* The writer's section lacks its write barrier, as the planted bug
 * seqcount-begin-no-wmb's: a torn copy under relaxed memory. */
static int seq_no_wmb;

struct seq_box {
	vs_seqcount_t seq;
	vs_atomic32_t a, b;	/* written together: a == b, always */
};

static int seq_setup(void **state)
{
	struct seq_box *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	vs_seqcount_init(&b->seq);
	vs_vcpu_name(&b->seq, sizeof(b->seq), "the seqcount");
	vs_vcpu_name(&b->a, sizeof(b->a), "data a");
	vs_vcpu_name(&b->b, sizeof(b->b), "data b");
	*state = b;
	return 0;
}

/* Thread 0 writes a and b together in a write section (it alone
 * writes: the lock a seqcount needs); thread 1 reads them in a read
 * section, retried until the count says the copy is whole. */
static void seq_thread(void *state, unsigned int i)
{
	struct seq_box *b = state;
	uint32_t k, x, y, s;

	for (k = 1; k <= SEQ_ROUNDS; k++) {
		if (i == 0) {
			if (seq_no_wmb)	/* the begin, without its barrier */
				vs_write_once(&b->seq.sequence,
					      vs_read_once(&b->seq.sequence) + 1);
			else
				vs_write_seqcount_begin(&b->seq);
			vs_write_once(&b->a, k);
			vs_write_once(&b->b, k);
			vs_write_seqcount_end(&b->seq);
			continue;
		}
		do {
			s = vs_read_seqcount_begin(&b->seq);
			x = vs_read_once(&b->a);
			y = vs_read_once(&b->b);
		} while (vs_read_seqcount_retry(&b->seq, s));
		VS_EXPLORE_ASSERT(x == y);
	}
}

static const struct vs_explore_scenario seq_copy = {
	.name = "seqcount", .threads = 2, .setup = seq_setup,
	.thread = seq_thread, .fini = free,
};

/* ---- a spinlock: its critical sections are ordered ----------------------- */

#define SPIN_INCS 2

struct spin_box {
	vs_spinlock_t lock;
	vs_atomic32_t n;	/* under lock: a plain load and store */
};

static int spin_setup(void **state)
{
	struct spin_box *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	vs_spin_lock_init(&b->lock);
	vs_vcpu_name(&b->lock, sizeof(b->lock), "the spinlock");
	vs_vcpu_name(&b->n, sizeof(b->n), "counter");
	*state = b;
	return 0;
}

/* Each thread increments the counter under the lock, as a load and a
 * store: the lock's release and acquire order one section's store
 * before the next section's load, also under relaxed memory. */
static void spin_thread(void *state, unsigned int i)
{
	struct spin_box *b = state;
	int k;

	(void)i;
	for (k = 0; k < SPIN_INCS; k++) {
		vs_spin_lock(&b->lock);
		vs_write_once(&b->n, vs_read_once(&b->n) + 1);
		vs_spin_unlock(&b->lock);
	}
}

/* vCPU 0 checks after every thread ended: the machine orders that. */
static void spin_check(void *state)
{
	struct spin_box *b = state;

	VS_EXPLORE_ASSERT(vs_read_once(&b->n) == 2 * SPIN_INCS);
}

static const struct vs_explore_scenario spin_count = {
	.name = "spin_count", .threads = 2, .setup = spin_setup,
	.thread = spin_thread, .check = spin_check, .fini = free,
};

/*
 * A waiter that sleeps is woken: thread 0 holds the lock for longer
 * than a waiter spins (sync/spinlock.c's 128 tries), so thread 1 sleeps
 * on the lock word, marked contended, and thread 0's unlock wakes it.
 * A waiter asleep unmarked would sleep for ever: a deadlock.
 */
#define SPIN_HOLD 300

static void spin_sleep_thread(void *state, unsigned int i)
{
	struct spin_box *b = state;
	int k;

	if (i == 0) {
		vs_spin_lock(&b->lock);
		vs_write_once(&b->n, 1);
		for (k = 0; k < SPIN_HOLD; k++)
			vs_cpu_relax();
		vs_spin_unlock(&b->lock);
		return;
	}
	while (!vs_read_once(&b->n))
		vs_cpu_relax();
	vs_spin_lock(&b->lock);
	vs_write_once(&b->n, 2);
	vs_spin_unlock(&b->lock);
}

static const struct vs_explore_scenario spin_sleep = {
	.name = "spin_sleep", .threads = 2, .setup = spin_setup,
	.thread = spin_sleep_thread, .fini = free,
};

/* The check-then-act writer is docs/examples/explore.c (CTest:
 * example-explore, example-explore-broken). */
static const struct vs_explore_scenario *const scenarios[] = {
	&lost_update, &stale_cache, &lost_unlock,
};

/* Quiet, seeded, PCT at its default depth. */
static struct vs_explore_options quiet(uint64_t seed)
{
	struct vs_explore_options o = { .seed = seed,
					.flags = VS_EXPLORE_QUIET };

	return o;
}

/* A weak failure, found with many choices of older values, shrinks to
 * the three the torn copy needs (the reader's old count, old second
 * word, old count again), though the search of every schedule with
 * fewer preemptions runs out first: more schedules find it. */
START_TEST(explore_shrinks_weak)
{
	static struct vs_explore_report rep;
	struct vs_explore_options o;
	unsigned int most = 0;
	int seed;

	seq_no_wmb = 1;
	for (seed = 1; seed <= 3; seed++) {
		o = quiet((uint64_t)seed);
		o.memory = VS_VCPU_MEM_RELAXED;
		ck_assert_int_eq(vs_explore(&seq_copy, &o, &rep), -ECANCELED);
		ck_assert_msg(rep.preemptions <= 3, "seed %d: found with %u "
			      "preemptions, shrunk to %u:\n%s", seed,
			      rep.found_preemptions, rep.preemptions,
			      rep.text);
		if (rep.found_preemptions > most)
			most = rep.found_preemptions;
	}
	seq_no_wmb = 0;
	ck_assert_uint_gt(most, 3);
}
END_TEST

/* Each bug is found within the default 1,000 schedules, for 5 seeds,
 * as the failure it is; each fix passes 1,000 schedules. */
START_TEST(explore_finds_each_bug)
{
	const struct vs_explore_scenario *sc = scenarios[_i];
	int want = sc == &lost_unlock ? -EDEADLK : -ECANCELED;
	struct vs_explore_report rep;
	struct vs_explore_options o;
	uint64_t seed;

	for (seed = 1; seed <= 5; seed++) {
		o = quiet(seed);
		broken = 1;
		ck_assert_msg(vs_explore(sc, &o, &rep) == want, "%s: %s",
			      sc->name, rep.text);
		ck_assert_int_eq(rep.result, want);
		ck_assert_msg(rep.preemptions <= rep.found_preemptions,
			      "%s", rep.text);
		ck_assert_msg(strncmp(rep.replay, "VMSIM_REPLAY=", 13) == 0,
			      "%s", rep.text);
		fprintf(stderr, "explore: %s (pct, seed %llu): found in %lu "
			"schedules, %.3f s; %u preemptions, shrunk to %u "
			"in %lu runs\n", sc->name, (unsigned long long)seed,
			rep.schedules, rep.seconds, rep.found_preemptions,
			rep.preemptions, rep.shrink_runs);
		broken = 0;
		o = quiet(seed);
		ck_assert_msg(vs_explore(sc, &o, &rep) == 0, "%s: %s",
			      sc->name, rep.text);
		ck_assert_int_eq(rep.schedules, VS_EXPLORE_SCHEDULES);
	}
}
END_TEST

/* The reports name what went wrong: the assertion, the locks held (the
 * lost unlock: by a thread that has ended), the named words. */
START_TEST(explore_report_names)
{
	struct vs_explore_options o = quiet(1);
	struct vs_explore_report rep;

	broken = 1;
	ck_assert_int_eq(vs_explore(&lost_unlock, &o, &rep), -EDEADLK);
	ck_assert_msg(strstr(rep.text, "deadlock") &&
		      strstr(rep.text, "(work 1): ended; holds: scenario "
				       "mmap_lock (write)") &&
		      strstr(rep.text, "rmw scenario mmap_lock+0"),
		      "%s", rep.text);
	ck_assert_int_eq(vs_explore(&stale_cache, &o, &rep), -ECANCELED);
	ck_assert_msg(strstr(rep.text, "assertion '!vs_read_once(&a->dead)'") &&
		      strstr(rep.text, "store a VMA+0") &&
		      strstr(rep.text, "load vmacache seqnum+0") &&
		      strstr(rep.text, "replay: VMSIM_REPLAY='stale_cache:v1."),
		      "%s", rep.text);
	ck_assert_msg(!strstr(rep.text, "0x"), "%s", rep.text);
}
END_TEST

/* A static no one named is named by its symbol: no address in the
 * report, which ASLR would change from run to run. */
START_TEST(explore_report_names_statics)
{
	struct vs_explore_options o = quiet(1);
	struct vs_explore_report rep;

	ck_assert_int_eq(vs_explore(&static_update, &o, &rep), -ECANCELED);
	ck_assert_msg(strstr(rep.text, "load unnamed_counter+0") &&
		      strstr(rep.text, "store unnamed_counter+0"),
		      "%s", rep.text);
	ck_assert_msg(!strstr(rep.text, "0x"), "%s", rep.text);
}
END_TEST

/* A heap object no one named is named by its offset in the heap (in
 * its block, under ASan), which ASLR does not change, where its address
 * would change from run to run: the load and the store of the lost
 * update name the same word. */
START_TEST(explore_report_names_heap)
{
	struct vs_explore_options o = quiet(1);
	struct vs_explore_report rep;
	char name[128], load[160];
	const char *at;

	ck_assert_int_eq(vs_explore(&heap_update, &o, &rep), -ECANCELED);
	at = strstr(rep.text, "store ");
	ck_assert_msg(at, "%s", rep.text);
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(at + 6, "\n"),
		 at + 6);
	ck_assert_msg(strstr(name, "heap") && strstr(name, " (unnamed)"),
		      "%s", rep.text);
	snprintf(load, sizeof(load), "load %s", name);
	ck_assert_msg(strstr(rep.text, load), "%s", rep.text);
	ck_assert_msg(!strstr(rep.text, "0x"), "%s", rep.text);
}
END_TEST

/* The replay line of a report runs that schedule alone, the same way
 * every time; a word whose check does not match says it is stale. */
START_TEST(explore_replay_repeats)
{
	struct vs_explore_options o = quiet(3);
	struct vs_explore_report rep, again;
	char word[sizeof(rep.replay)], *engine;
	int k;

	broken = 1;
	ck_assert_int_eq(vs_explore(&stale_cache, &o, &rep), -ECANCELED);
	memcpy(word, rep.replay, sizeof(word));
	engine = strstr(rep.text, "vcpu: failed");
	ck_assert_ptr_nonnull(engine);
	ck_assert_int_eq(setenv("VMSIM_REPLAY", strchr(word, '=') + 1, 1), 0);
	for (k = 0; k < 3; k++) {
		ck_assert_int_eq(vs_explore(&stale_cache, &o, &again),
				 -ECANCELED);
		ck_assert_int_eq(again.schedules, 2);	/* the warm-up too */
		ck_assert_int_eq(again.stale, 0);
		ck_assert_int_eq(again.preemptions, rep.preemptions);
		ck_assert_str_eq(again.replay, rep.replay);
		/* Event for event: the same report, the logs included. */
		ck_assert_str_eq(strstr(again.text, "vcpu: failed"), engine);
	}
	/* Another scenario's name: explored as usual. */
	ck_assert_int_eq(vs_explore(&lost_update, &o, &again), -ECANCELED);
	ck_assert_int_gt(again.schedules, 1);
	/* The fixed code: the schedule no longer fits, and it runs clean. */
	broken = 0;
	ck_assert_int_eq(vs_explore(&stale_cache, &o, &again), 0);
	ck_assert_int_eq(again.stale, 1);
	ck_assert_msg(strstr(again.text, "code changed"), "%s", again.text);
}
END_TEST

/* The shrunk schedule is 1-minimal: without any one of its decisions
 * the replay passes, or fails another way.  (The random scheduler's
 * finds have many decisions; unshrunk, most could go.) */
START_TEST(explore_shrunk_is_minimal)
{
	struct vs_explore_options o = quiet(_i + 1);
	struct vs_vcpu_decision dec[64], less[64];
	struct vs_explore_report rep, r;
	char env[sizeof(rep.replay)], *first;
	size_t nr, i, n;
	uint32_t check;

	broken = 1;
	o.sched = &vs_vcpu_sched_random;
	ck_assert_int_eq(vs_explore(&lost_update, &o, &rep), -ECANCELED);
	ck_assert_int_eq(vs_vcpu_replay_decode(strchr(rep.replay, ':') + 1,
					       dec, 64, &nr, &check), 0);
	ck_assert_uint_gt(nr, 0);
	first = strstr(rep.text, "cycles: ");
	ck_assert_ptr_nonnull(first);
	for (i = 0; i < nr; i++) {
		memcpy(less, dec, i * sizeof(*dec));
		memcpy(less + i, dec + i + 1, (nr - i - 1) * sizeof(*dec));
		n = (size_t)snprintf(env, sizeof(env), "%s:",
				     lost_update.name);
		ck_assert_int_eq(vs_vcpu_replay_encode(less, nr - 1, 0,
						       env + n,
						       sizeof(env) - n), 0);
		ck_assert_int_eq(setenv("VMSIM_REPLAY", env, 1), 0);
		if (vs_explore(&lost_update, &o, &r) == -ECANCELED)
			ck_assert_msg(strncmp(strstr(r.text, "cycles: "),
					      first, strcspn(first, "\n")),
				      "decision %zu of %zu is not needed:\n%s",
				      i, nr, rep.text);
	}
}
END_TEST

/* DFS finds the lost update with one preemption, the fewest, and
 * exhausts the space of the fix within two. */
START_TEST(explore_dfs)
{
	struct vs_vcpu_dfs bound = { .max_preemptions = 2 };
	struct vs_explore_options o = quiet(1);
	struct vs_explore_report rep;

	o.sched = &vs_vcpu_sched_dfs;
	o.sched_arg = &bound;
	o.max_schedules = 100000;
	broken = 1;
	ck_assert_int_eq(vs_explore(&lost_update, &o, &rep), -ECANCELED);
	ck_assert_int_eq(rep.found_preemptions, 1);
	ck_assert_int_eq(rep.preemptions, 1);
	broken = 0;
	ck_assert_int_eq(vs_explore(&lost_update, &o, &rep), 0);
	ck_assert_int_eq(rep.exhausted, 1);
	ck_assert_uint_lt(rep.schedules, 100000);
}
END_TEST

static void spin_forever(void *state, unsigned int i)
{
	vs_atomic32_t *flag = state;

	(void)i;
	while (!vs_read_once(flag))
		vs_cpu_relax();
}

static int flag_setup(void **state)
{
	*state = calloc(1, sizeof(vs_atomic32_t));
	return *state ? 0 : -ENOMEM;
}

/* A spin that never ends fails as stuck, on the first schedule. */
/* The text of file @path, malloc'd (the test's to free). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 24);
	size_t n;

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(buf);
	n = fread(buf, 1, (1 << 24) - 1, f);
	ck_assert_uint_lt(n, (1 << 24) - 1);
	fclose(f);
	return buf;
}

/* How many times @needle is in @hay. */
static unsigned int count(const char *hay, const char *needle)
{
	unsigned int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay++;
	}
	return n;
}

/* VMSIM_TRACE=PATH: the lost update's reported schedule, every event of
 * it, goes to PATH as a Chrome trace a track per vCPU, the counter by
 * name, the run's report along; the report says where.  The engine's
 * writer refuses a machine without VS_MACHINE_TRACE and NULL, and says
 * why a file cannot be written. */
START_TEST(explore_trace)
{
	char path[] = "/tmp/vmsim-trace-XXXXXX", line[64];
	struct vs_explore_options o = quiet(1);
	struct vs_machine_config cfg = { .nr_vcpus = 1 };
	static struct vs_explore_report rep;
	struct vs_machine *m;
	char *text;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	broken = 1;
	ck_assert_int_eq(setenv("VMSIM_TRACE", path, 1), 0);
	ck_assert_int_eq(vs_explore(&lost_update, &o, &rep), -ECANCELED);
	ck_assert_int_eq(unsetenv("VMSIM_TRACE"), 0);
	snprintf(line, sizeof(line), "trace: %s (open it", path);
	ck_assert_ptr_nonnull(strstr(rep.text, line));
	text = slurp(path);
	ck_assert_int_eq(strncmp(text, "{\"displayTimeUnit\":\"ns\","
				 "\"traceEvents\":[", 35), 0);
	ck_assert_uint_eq(count(text, "\"name\":\"thread_name\""), 3);
	/* Each thread's two increments, a load and a store each, and the
	 * check's load. */
	ck_assert_uint_eq(count(text, "\"name\":\"load counter+0\""), 5);
	ck_assert_uint_ge(count(text, "\"name\":\"store counter+0\""), 4);
	/* The two threads end; the root fails its check. */
	ck_assert_uint_eq(count(text, "\"name\":\"end\""), 2);
	ck_assert_ptr_nonnull(strstr(text, "\"report\":\"vcpu: failed: "));
	free(text);
	ck_assert_int_eq(unlink(path), 0);

	ck_assert_int_eq(vs_machine_trace_write(NULL, path), -EINVAL);
	ck_assert_int_eq(vs_machine_create(&m, &cfg), 0);
	ck_assert_int_eq(vs_machine_trace_write(m, path), -EINVAL);
	ck_assert_int_eq(vs_machine_destroy(m), 0);
	cfg.flags = VS_MACHINE_TRACE;
	ck_assert_int_eq(vs_machine_create(&m, &cfg), 0);
	ck_assert_int_eq(vs_machine_trace_write(m, NULL), -EINVAL);
	ck_assert_int_eq(vs_machine_trace_write(m, "/nonexistent/dir/t"),
			 -ENOENT);
	ck_assert_int_eq(vs_machine_destroy(m), 0);
}
END_TEST

/* A failure's trace carries the model's slices as multi-fault --trace
 * does: the fault, mprotect and munmap, and mmap_lock's waits and holds
 * (vs_vcpu_span_begin()), around the loads and stores. */
START_TEST(explore_trace_slices)
{
	char path[] = "/tmp/vmsim-trace-XXXXXX";
	struct vs_explore_options o = quiet(1);
	static struct vs_explore_report rep;
	char *text;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(setenv("VMSIM_TRACE", path, 1), 0);
	ck_assert_int_eq(vs_explore(&mm_ops, &o, &rep), -ECANCELED);
	ck_assert_int_eq(unsetenv("VMSIM_TRACE"), 0);
	text = slurp(path);
	ck_assert_uint_eq(count(text, "{\"name\":\"fault\",\"cat\":\"fault\","
				"\"ph\":\"X\""), 1);
	ck_assert_uint_eq(count(text, "{\"name\":\"mprotect\",\"cat\":"
				"\"span\",\"ph\":\"X\""), 1);
	ck_assert_uint_eq(count(text, "{\"name\":\"munmap\",\"cat\":"
				"\"span\",\"ph\":\"X\""), 1);
	/* The setup's mmap, mprotect and munmap write-lock, each after a
	 * wait; the lookups and the fault read-lock (munmap after its
	 * downgrade too). */
	ck_assert_uint_eq(count(text, "{\"name\":\"mmap_lock W\",\"cat\":"
				"\"lock\""), 3);
	ck_assert_uint_eq(count(text, "{\"name\":\"mmap_lock wait W\","), 3);
	ck_assert_uint_ge(count(text, "{\"name\":\"mmap_lock R\",\"cat\":"
				"\"lock\""), 2);
	free(text);
	ck_assert_int_eq(unlink(path), 0);
}
END_TEST

START_TEST(explore_stuck)
{
	static const struct vs_explore_scenario spin = {
		.name = "spin", .threads = 1, .setup = flag_setup,
		.thread = spin_forever, .fini = free,
	};
	struct vs_explore_options o = quiet(1);
	struct vs_explore_report rep;

	o.max_events = 5000;
	ck_assert_int_eq(vs_explore(&spin, &o, &rep), -ECANCELED);
	ck_assert_int_eq(rep.schedules, 1);
	ck_assert_msg(strstr(rep.text, "stuck: more than 5000 events"),
		      "%s", rep.text);
}
END_TEST

/* Bad arguments: -EINVAL, naming the argument, and nothing runs. */
START_TEST(explore_bad_arguments)
{
	struct vs_explore_scenario sc = lost_update;
	struct vs_explore_options o = quiet(1);
	struct vs_explore_report rep;

	ck_assert_int_eq(vs_explore(&sc, &o, NULL), -EINVAL);
	ck_assert_int_eq(vs_explore(NULL, &o, &rep), -EINVAL);
	ck_assert_msg(strstr(rep.text, "scenario: NULL"), "%s", rep.text);
	sc.name = "has space";
	ck_assert_int_eq(vs_explore(&sc, &o, &rep), -EINVAL);
	ck_assert_msg(strstr(rep.text, "scenario name"), "%s", rep.text);
	sc = lost_update;
	sc.threads = VS_EXPLORE_THREADS + 1;
	ck_assert_int_eq(vs_explore(&sc, &o, &rep), -EINVAL);
	ck_assert_msg(strstr(rep.text, "threads"), "%s", rep.text);
	sc = lost_update;
	sc.thread = NULL;
	ck_assert_int_eq(vs_explore(&sc, &o, &rep), -EINVAL);
	o.flags = 0x80;
	ck_assert_int_eq(vs_explore(&lost_update, &o, &rep), -EINVAL);
	ck_assert_msg(strstr(rep.text, "flags"), "%s", rep.text);
	o = quiet(1);
	o.memory = VS_VCPU_MEM_RELAXED + 1;
	ck_assert_int_eq(vs_explore(&lost_update, &o, &rep), -EINVAL);
	ck_assert_msg(strstr(rep.text, "options memory"), "%s", rep.text);
	o = quiet(1);
	o.own_slots = lost_update.threads + 2;
	ck_assert_int_eq(vs_explore(&lost_update, &o, &rep), -EINVAL);
	ck_assert_msg(strstr(rep.text, "options own_slots"), "%s", rep.text);
	o = quiet(1);
	ck_assert_int_eq(setenv("VMSIM_REPLAY", "lost_update:v1.!!.00000000",
				1), 0);
	ck_assert_int_eq(vs_explore(&lost_update, &o, &rep), -EINVAL);
	ck_assert_msg(strstr(rep.text, "VMSIM_REPLAY: not a schedule"),
		      "%s", rep.text);
}
END_TEST

/*
 * Explore @sc on lock kind @k with seeds 1, 2 and 3: no schedule may
 * fail.  A planted bug of the kind (sync/broken.def) must make at least
 * one fail (teeth-vcpu-*); the message says after how many schedules
 * each seed failed.
 */
static void explore_kind(const struct vs_explore_scenario *sc, const char *k,
			 unsigned int memory, unsigned int own_slots)
{
	static struct vs_explore_report rep;
	static struct vs_tally t;
	struct vs_explore_options o;
	char what[128];
	int seed;

	kind = k;
	broken = 0;
	seq_no_wmb = 0;		/* in case explore_shrinks_weak failed */
	memset(&t, 0, sizeof(t));
	for (seed = 1; seed <= VS_TALLY_SEEDS; seed++) {
		o = quiet((uint64_t)seed);
		o.memory = memory;
		o.own_slots = own_slots;
		if (vs_explore(sc, &o, &rep))
			vs_tally_add(&t, seed, rep.schedules, &rep);
	}
	snprintf(what, sizeof(what), "%s on %s, memory model %u, own slots %u",
		 sc->name, k ? k : "-", memory, own_slots);
	vs_tally_assert(&t, what);
}

/*
 * A percpu rwsem reader on its slow path against the writer
 * (lock-kinds.md percpu, invariant 2).  The writer (thread 0) takes
 * the lock once, which leaves rcu_sync busy until a grace period has
 * passed, sets w_done and waits for the reader to try; the reader,
 * which took the lock once before (so that its slot's count has an
 * older store for the writer to read: a value from before the run is
 * none), then takes its slow path (count in, barrier A, load block)
 * while the writer takes the lock again (block, barrier B, sum the
 * counts).  Each marks itself inside with a plain store, no fence that
 * would order the count for barrier A: under the relaxed model only
 * the pair A/B keeps both from getting in.
 */
static void excl_slow_thread(void *state, unsigned int i)
{
	struct excl *s = state;
	vs_atomic32_t *mine = i ? &s->r_in : &s->w_in;
	vs_atomic32_t *other = i ? &s->w_in : &s->r_in;
	int k;

	if (i == 0) {
		vs_lock_write_lock(&s->lock);
		vs_lock_write_unlock(&s->lock);
		/* Release, and acquire below: pairs with the reader's. */
		vs_store_release(&s->w_done, 1);
		while (!vs_load_acquire(&s->trying))
			vs_cpu_relax();
		vs_lock_write_lock(&s->lock);
	} else {
		vs_lock_read_lock(&s->lock);
		vs_lock_read_unlock(&s->lock);
		while (!vs_load_acquire(&s->w_done))
			vs_cpu_relax();
		vs_store_release(&s->trying, 1);
		vs_lock_read_lock(&s->lock);
	}
	vs_write_once(mine, 1);
	for (k = 0; k < EXCL_LOOKS; k++) {
		VS_EXPLORE_ASSERT(vs_read_once(other) == 0);
		vs_cpu_relax();
	}
	vs_write_once(mine, 0);
	if (i == 0)
		vs_lock_write_unlock(&s->lock);
	else
		vs_lock_read_unlock(&s->lock);
}

static const struct vs_explore_scenario exclusion_slow = {
	.name = "exclusion_slow", .threads = 2, .setup = excl_setup,
	.thread = excl_slow_thread, .fini = excl_fini,
};

/* Each scenario on its lock kind, memory model and owned slots (0:
 * all; 2: the writer, thread 0, owns one and the readers share
 * VS_SLOT_SHARED), in the case of the explore suite that its planted
 * bugs' teeth run. */
static const struct {
	const char *tcase;
	const struct vs_explore_scenario *sc;
	const char *kind;
	unsigned int memory;
	unsigned int own_slots;
} kind_cases[] = {
	{ "rwsem", &exclusion, "rwsem", VS_VCPU_MEM_SC, 0 },
	{ "rwsem", &exclusion_pair, "rwsem", VS_VCPU_MEM_SC, 0 },
	{ "rwsem", &no_barging, "rwsem", VS_VCPU_MEM_SC, 0 },
	{ "rwsem", &batch_wake, "rwsem", VS_VCPU_MEM_SC, 0 },
	{ "percpu", &exclusion, "percpu", VS_VCPU_MEM_SC, 0 },
	{ "percpu", &exclusion, "percpu", VS_VCPU_MEM_SC, 2 },
	{ "prwlock", &exclusion, "prwlock", VS_VCPU_MEM_SC, 0 },
	{ "prwlock", &exclusion, "prwlock", VS_VCPU_MEM_SC, 2 },
	{ "brlock", &exclusion, "brlock", VS_VCPU_MEM_SC, 0 },
	{ "brlock", &exclusion, "brlock", VS_VCPU_MEM_SC, 2 },
	{ "rcu", &rcu_grace, NULL, VS_VCPU_MEM_SC, 0 },
	{ "free", &free_rcu, NULL, VS_VCPU_MEM_SC, 0 },
	{ "weak", &exclusion, "rwsem", VS_VCPU_MEM_TSO, 0 },
	{ "weak", &exclusion, "rwsem", VS_VCPU_MEM_RELAXED, 0 },
	{ "weak", &exclusion, "percpu", VS_VCPU_MEM_RELAXED, 0 },
	{ "weak", &exclusion, "prwlock", VS_VCPU_MEM_RELAXED, 0 },
	{ "weak", &exclusion, "brlock", VS_VCPU_MEM_RELAXED, 0 },
	{ "weak", &exclusion, "brlock", VS_VCPU_MEM_RELAXED, 2 },
	{ "weak", &rcu_grace, NULL, VS_VCPU_MEM_RELAXED, 0 },
	{ "weak", &seq_copy, NULL, VS_VCPU_MEM_TSO, 0 },
	{ "seqcount", &seq_copy, NULL, VS_VCPU_MEM_RELAXED, 0 },
	{ "spinlock", &spin_count, NULL, VS_VCPU_MEM_SC, 0 },
	{ "spinlock", &spin_count, NULL, VS_VCPU_MEM_RELAXED, 0 },
	{ "spinlock", &spin_sleep, NULL, VS_VCPU_MEM_SC, 0 },
	{ "percpu-slow", &exclusion_slow, "percpu", VS_VCPU_MEM_RELAXED, 0 },
};

/* The handoff scenario passes on seeds 1 to 3 (a planted bug of the
 * handoff fails it), and its schedules do reach the handoff. */
START_TEST(explore_handoff)
{
	handoffs_seen = 0;
	explore_kind(&handoff, "rwsem", VS_VCPU_MEM_SC, 0);
	fprintf(stderr, "explore: handoff: %lu schedules saw HANDOFF set\n",
		handoffs_seen);
	ck_assert_uint_gt(handoffs_seen, 0);
}
END_TEST

/* Frees handed over at once, in the right order: no seed fails. */
START_TEST(explore_free_at_once)
{
	at_once_mode = 1;
	explore_kind(&free_at_once, NULL, VS_VCPU_MEM_SC, 0);
}
END_TEST

/* A free queued before the object is unpublished: handed over at once,
 * every seed finds the use after free; batched, none does (why the mode
 * exists). */
START_TEST(explore_free_order)
{
	static struct vs_explore_report rep;
	struct vs_explore_options o;
	int seed;

	for (seed = 1; seed <= VS_TALLY_SEEDS; seed++) {
		broken = 1;
		at_once_mode = 1;
		o = quiet((uint64_t)seed);
		ck_assert_msg(vs_explore(&free_at_once, &o, &rep) ==
			      -ECANCELED, "seed %d: %s", seed, rep.text);
		fprintf(stderr, "explore: free before unpublish, at once "
			"(seed %d): found in %lu schedules\n", seed,
			rep.schedules);
		at_once_mode = 0;
		o = quiet((uint64_t)seed);
		ck_assert_msg(vs_explore(&free_at_once, &o, &rep) == 0,
			      "seed %d, batched: %s", seed, rep.text);
	}
	broken = 0;
	at_once_mode = 1;
}
END_TEST

START_TEST(explore_lock_kind)
{
	explore_kind(kind_cases[_i].sc, kind_cases[_i].kind,
		     kind_cases[_i].memory, kind_cases[_i].own_slots);
}
END_TEST

/* The scenarios break locking rules on purpose (abba, a forgotten
 * unlock) for exploration to find: lockdep, when compiled in, counts
 * what it sees instead of stopping the run first. */
static int lockdep_reports;

static void lockdep_quiet(void)
{
	vs_lockdep_set_report(vs_test_lockdep_count, &lockdep_reports);
}

/* The test case @name of @s, made on first use (vs_explore() makes its
 * own machines: vs_test_plain_tcase()). */
static TCase *explore_tcase(Suite *s, const char *name)
{
	static TCase *made[16];
	static const char *names[16];
	unsigned int i;

	for (i = 0; i < 16 && names[i]; i++)
		if (!strcmp(names[i], name))
			return made[i];
	if (i == 16)
		abort();	/* more cases than made[] holds */
	made[i] = vs_test_plain_tcase(s, name);
	tcase_add_checked_fixture(made[i], lockdep_quiet, NULL);
	names[i] = name;
	return made[i];
}

/* A test that set VMSIM_REPLAY and failed must not leave it to the
 * next (CK_FORK=no runs them in one process). */
static void replay_unset(void)
{
	(void)unsetenv("VMSIM_REPLAY");
}

Suite *explore_suite(void)
{
	Suite *s = suite_create("explore");
	TCase *tc = explore_tcase(s, "explore");
	int i;

	tcase_add_checked_fixture(tc, NULL, replay_unset);
	tcase_add_loop_test(tc, explore_finds_each_bug, 0,
			    (int)VS_ARRAY_SIZE(scenarios));
	tcase_add_test(tc, explore_report_names);
	tcase_add_test(tc, explore_report_names_statics);
	tcase_add_test(tc, explore_report_names_heap);
	tcase_add_test(tc, explore_replay_repeats);
	tcase_add_loop_test(tc, explore_shrunk_is_minimal, 0, 3);
	tcase_add_test(tc, explore_dfs);
	tcase_add_test(tc, explore_stuck);
	tcase_add_test(tc, explore_trace);
	tcase_add_test(tc, explore_trace_slices);
	tcase_add_test(tc, explore_shrink_keeps_deadlock);
	tcase_add_test(tc, explore_shrink_keeps_stuck);
	tcase_add_test(tc, explore_shrinks_weak);
	tcase_add_test(tc, explore_bad_arguments);

	/* One case per lock kind: each planted bug of sync/broken.def that
	 * exploration catches has its own (CK_RUN_CASE, teeth-vcpu-*). */
	for (i = 0; i < (int)VS_ARRAY_SIZE(kind_cases); i++)
		tcase_add_loop_test(explore_tcase(s, kind_cases[i].tcase),
				    explore_lock_kind, i, i + 1);
	tcase_add_test(explore_tcase(s, "handoff"), explore_handoff);
	tc = explore_tcase(s, "free-at-once");
	tcase_add_test(tc, explore_free_at_once);
	tcase_add_test(tc, explore_free_order);
	return s;
}
