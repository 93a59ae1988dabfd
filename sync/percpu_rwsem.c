/* SPDX-License-Identifier: MIT */
/*
 * Per-slot reader counts with rcu_sync (Gautham Shenoy's 2006
 * lock_cpu_hotplug redesign, docs/references.md; kernel/rcu/sync.c and
 * kernel/locking/percpu-rwsem.c).  See percpu_rwsem.h for the protocol.
 */
#include <vmsim/percpu_rwsem.h>

#include <limits.h>
#include <stddef.h>

#include <vmsim/wait.h>

#include "internal.h"

/* ---- rcu_sync: is a writer around, as seen by RCU readers? ---------- */

void vs_rcu_sync_init(struct vs_rcu_sync *rss)
{
	vs_atomic_init(&rss->gp_state, VS_GP_IDLE);
	rss->gp_count = 0;
	vs_spin_lock_init(&rss->lock);
}

/* Caller holds rss->lock. */
static void set_state(struct vs_rcu_sync *rss, enum vs_rcu_sync_state s)
{
	/* Release: the writers' critical sections are visible to a reader
	 * that sees VS_GP_IDLE (pairs with vs_rcu_sync_is_idle()). */
	vs_store_release(&rss->gp_state, s);
}

static void rcu_sync_func(struct vs_rcu_head *head);

/* Caller holds rss->lock: a grace period from now, run rcu_sync_func. */
static void rcu_sync_call(struct vs_rcu_sync *rss)
{
	vs_call_rcu(&rss->cb_head, rcu_sync_func);
}

/*
 * rcu_sync_func - a grace period has passed since the last transition
 *
 * Runs from vs_call_rcu(), or directly by the first writer after its own
 * vs_synchronize_rcu().  Takes rss->lock.
 */
static void rcu_sync_func(struct vs_rcu_head *head)
{
	struct vs_rcu_sync *rss = (struct vs_rcu_sync *)
		((char *)head - offsetof(struct vs_rcu_sync, cb_head));

	vs_spin_lock(&rss->lock);
	if (rss->gp_count) {
		/* Writers are in: every reader now takes the slow path. */
		set_state(rss, VS_GP_PASSED);
		vs_futex_wake(&rss->gp_state, INT_MAX);
	} else if (vs_read_once(&rss->gp_state) == VS_GP_REPLAY) {
		/* A writer came and went meanwhile: one more grace period. */
		set_state(rss, VS_GP_EXIT);
		rcu_sync_call(rss);
	} else {
		/* A grace period after the last writer: fast path again. */
		set_state(rss, VS_GP_IDLE);
	}
	vs_spin_unlock(&rss->lock);
}

/**
 * vs_rcu_sync_enter - make readers take their slow path
 *
 * Waits for a grace period only when readers were on their fast path;
 * a writer that follows another within a grace period of its exit finds
 * the state still EXIT or REPLAY and goes straight through.
 *
 * Context: may sleep; not inside an RCU read-side section.
 */
void vs_rcu_sync_enter(struct vs_rcu_sync *rss)
{
	uint32_t state;

	vs_spin_lock(&rss->lock);
	state = vs_read_once(&rss->gp_state);
	if (state == VS_GP_IDLE)
		set_state(rss, VS_GP_ENTER);
	rss->gp_count++;
	vs_spin_unlock(&rss->lock);

	if (state == VS_GP_IDLE) {
		vs_synchronize_rcu();
		rcu_sync_func(&rss->cb_head);
		return;
	}
	while ((state = vs_load_acquire(&rss->gp_state)) < VS_GP_PASSED)
		vs_futex_wait(&rss->gp_state, state, -1);
}

/**
 * vs_rcu_sync_exit - the writer is done; readers go fast after a GP
 * Context: entered with vs_rcu_sync_enter().
 */
void vs_rcu_sync_exit(struct vs_rcu_sync *rss)
{
	vs_spin_lock(&rss->lock);
	if (--rss->gp_count == 0) {
		uint32_t state = vs_read_once(&rss->gp_state);

		if (state == VS_GP_PASSED) {
			set_state(rss, VS_GP_EXIT);
			rcu_sync_call(rss);
		} else if (state == VS_GP_EXIT) {
			set_state(rss, VS_GP_REPLAY);
		}
	}
	vs_spin_unlock(&rss->lock);
}

/**
 * vs_rcu_sync_dtor - wait for a pending callback before freeing @rss
 * Context: may sleep; no writer inside.
 */
void vs_rcu_sync_dtor(struct vs_rcu_sync *rss)
{
	uint32_t state;

	/* Under the lock: a callback that made the state idle is done with
	 * @rss once we get the lock. */
	vs_spin_lock(&rss->lock);
	state = vs_read_once(&rss->gp_state);
	if (state == VS_GP_REPLAY)
		set_state(rss, VS_GP_EXIT);
	vs_spin_unlock(&rss->lock);
	if (state != VS_GP_IDLE)
		vs_rcu_barrier();
}

/* ---- the semaphore --------------------------------------------------- */

int vs_percpu_init_rwsem(struct vs_percpu_rwsem *sem)
{
	int i;

	if (!sem)
		return -EINVAL;
	vs_membarrier_init();
	vs_rcu_sync_init(&sem->rss);
	vs_spin_lock_init(&sem->writer);
	vs_atomic_init(&sem->block, 0);
	vs_atomic_init(&sem->writer_wake, 0);
	for (i = 0; i < VS_SLOT_ARRAY; i++)
		vs_atomic_init(&sem->read_count[i].n, 0);
	return 0;
}

static long readers(struct vs_percpu_rwsem *sem)
{
	long sum = 0;
	int i;

	/* Acquire pairs with the release in vs__slot_add(): the readers'
	 * sections happen before the writer's. */
	for (i = 0; i < VS_SLOT_ARRAY; i++)
		sum += vs_load_acquire(&sem->read_count[i].n);
	return sum;
}

int vs_percpu_free_rwsem(struct vs_percpu_rwsem *sem)
{
	int writers;

	if (!sem)
		return -EINVAL;
	vs_spin_lock(&sem->rss.lock);
	writers = sem->rss.gp_count;
	vs_spin_unlock(&sem->rss.lock);
	if (writers || vs_spin_is_locked(&sem->writer) ||
	    vs_read_once(&sem->block) || readers(sem))
		return -EBUSY;
	vs_rcu_sync_dtor(&sem->rss);
	return 0;
}

static void wake_writer(struct vs_percpu_rwsem *sem)
{
	vs_fetch_add(&sem->writer_wake, 1);
	vs_futex_wake(&sem->writer_wake, 1);
}

/*
 * read_trylock_slow - count in unless a writer holds block
 *
 * The slow path of readers while rcu_sync is not idle.  Return: 1 in,
 * 0 after backing out.
 */
static int read_trylock_slow(struct vs_percpu_rwsem *sem, unsigned int slot)
{
	vs__slot_add(&sem->read_count[slot].n, slot, 1);
	/* A: our count before the block load; pairs with B.  The planted
	 * bug drops it: the writer may sum the counts without ours while
	 * we still read block clear. */
	if (!VS_BROKEN(percpu_slow_reader_no_mb))
		vs_smp_mb();
	/* Acquire pairs with the release in vs_percpu_up_write(). */
	if (vs_likely(!vs_load_acquire(&sem->block)))
		return 1;
	vs__slot_add(&sem->read_count[slot].n, slot, -1);
	wake_writer(sem);
	return 0;
}

/* Fast path inside an RCU section.  Return: 1 in, 0 go slow. */
static int read_trylock_fast(struct vs_percpu_rwsem *sem, unsigned int slot)
{
	int in = 0;

	vs_rcu_read_lock();
	/* A writer's vs_rcu_sync_enter() waits for this section: if we see
	 * idle here, it will see our count. */
	if (vs_likely(vs_rcu_sync_is_idle(&sem->rss))) {
		vs__slot_add(&sem->read_count[slot].n, slot, 1);
		in = 1;
	}
	vs_rcu_read_unlock();
	return in;
}

void vs_percpu_down_read(struct vs_percpu_rwsem *sem)
{
	unsigned int slot = vs__thread_slot();

	if (vs_likely(read_trylock_fast(sem, slot)))
		return;
	while (!read_trylock_slow(sem, slot)) {
		while (vs_load_acquire(&sem->block))
			vs_futex_wait(&sem->block, 1, -1);
	}
}

int vs_percpu_down_read_trylock(struct vs_percpu_rwsem *sem)
{
	unsigned int slot = vs__thread_slot();

	return read_trylock_fast(sem, slot) || read_trylock_slow(sem, slot);
}

void vs_percpu_up_read(struct vs_percpu_rwsem *sem)
{
	unsigned int slot = vs__thread_slot();

	vs__slot_add(&sem->read_count[slot].n, slot, -1);
	/* C: a writer past B sees our count drop, or we see its block and
	 * wake it.  Pairs with B. */
	vs_smp_mb_light();
	if (vs_unlikely(vs_read_once(&sem->block)))
		wake_writer(sem);
}

/* Caller holds sem->writer, block is set: wait for the counts to drain. */
static void wait_readers(struct vs_percpu_rwsem *sem)
{
	uint32_t seq;

	/* B: pairs with A (slow readers) and C (unlocking readers). */
	vs_smp_mb_heavy();
	for (;;) {
		seq = vs_load_acquire(&sem->writer_wake);
		if (readers(sem) == 0)
			return;
		vs_futex_wait(&sem->writer_wake, seq, -1);
	}
}

void vs_percpu_down_write(struct vs_percpu_rwsem *sem)
{
	if (!VS_BROKEN(percpu_no_rcu_sync))
		vs_rcu_sync_enter(&sem->rss);
	vs_spin_lock(&sem->writer);
	vs_write_once(&sem->block, 1);
	if (!VS_BROKEN(percpu_writer_no_wait))
		wait_readers(sem);
}

int vs_percpu_down_write_trylock(struct vs_percpu_rwsem *sem)
{
	/* Never waits for a holder, but vs_rcu_sync_enter() may wait for
	 * a grace period: only try when nobody seems to hold the lock. */
	if (readers(sem) || vs_read_once(&sem->block))
		return 0;
	vs_rcu_sync_enter(&sem->rss);
	if (!vs_spin_trylock(&sem->writer)) {
		vs_rcu_sync_exit(&sem->rss);
		return 0;
	}
	vs_write_once(&sem->block, 1);
	vs_smp_mb_heavy(); /* B */
	if (readers(sem)) {
		vs_percpu_up_write(sem);
		return 0;
	}
	return 1;
}

void vs_percpu_up_write(struct vs_percpu_rwsem *sem)
{
	/* Pairs with the acquire in read_trylock_slow(). */
	vs_store_release(&sem->block, 0);
	vs_futex_wake(&sem->block, INT_MAX);
	/* Before the writer lock goes: once it is free, the next holder may
	 * free the semaphore (vs_percpu_free_rwsem() checks both). */
	if (!VS_BROKEN(percpu_no_rcu_sync))
		vs_rcu_sync_exit(&sem->rss);
	vs_spin_unlock(&sem->writer);
}

void vs_percpu_downgrade_write(struct vs_percpu_rwsem *sem)
{
	unsigned int slot = vs__thread_slot();

	/* Count ourselves in before letting anyone else go. */
	vs__slot_add(&sem->read_count[slot].n, slot, 1);
	vs_percpu_up_write(sem);
}
