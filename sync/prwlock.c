/* SPDX-License-Identifier: MIT */
#include <vmsim/prwlock.h>

#include <limits.h>

#include <vmsim/wait.h>

#include "internal.h"

int vs_prwlock_init(struct vs_prwlock *rw)
{
	int i;

	if (!rw)
		return -EINVAL;
	vs_membarrier_init();
	vs_spin_lock_init(&rw->writer);
	vs_atomic_init(&rw->wflag, 0);
	vs_atomic_init(&rw->version, 0);
	vs_atomic_init(&rw->writer_wake, 0);
	for (i = 0; i < VS_SLOT_ARRAY; i++) {
		vs_atomic_init(&rw->slot[i].active, 0);
		vs_atomic_init(&rw->slot[i].seen, 0);
	}
	return 0;
}

int vs_prwlock_destroy(struct vs_prwlock *rw)
{
	int i;

	if (!rw)
		return -EINVAL;
	if (vs_read_once(&rw->wflag) || vs_spin_is_locked(&rw->writer))
		return -EBUSY;
	for (i = 0; i < VS_SLOT_ARRAY; i++)
		if (vs_read_once(&rw->slot[i].active))
			return -EBUSY;
	return 0;
}

static void wake_writer(struct vs_prwlock *rw)
{
	vs_fetch_add(&rw->writer_wake, 1);
	vs_futex_wake(&rw->writer_wake, 1);
}

/*
 * read_enter - one attempt at the reader fast path
 * Return: 1 inside; 0 after backing out because a writer is in.
 */
static int read_enter(struct vs_prwlock *rw, unsigned int slot)
{
	vs__slot_add(&rw->slot[slot].active, slot, 1);
	/* A: our active count is visible to a writer that passed its heavy
	 * barrier (B), or we see its flag.  Pairs with B. */
	vs_smp_mb_light();
	/* Acquire pairs with the release in vs_prw_write_unlock(). */
	if (vs_likely(!vs_load_acquire(&rw->wflag)) ||
	    VS_BROKEN(prwlock_reader_ignores_flag))
		return 1;
	vs__slot_add(&rw->slot[slot].active, slot, -1);
	wake_writer(rw);
	return 0;
}

void vs_prw_read_lock(struct vs_prwlock *rw)
{
	unsigned int slot = vs__thread_slot();

	while (vs_unlikely(!read_enter(rw, slot))) {
		while (vs_load_acquire(&rw->wflag))
			vs_futex_wait(&rw->wflag, 1, -1);
	}
}

int vs_prw_read_trylock(struct vs_prwlock *rw)
{
	return read_enter(rw, vs__thread_slot());
}

void vs_prw_read_unlock(struct vs_prwlock *rw)
{
	unsigned int slot = vs__thread_slot();
	struct vs__prw_slot *s = &rw->slot[slot];

	vs__slot_add(&s->active, slot, -1);
	/* C: either a writer past B sees our count drop, or we see its flag
	 * and wake it.  Pairs with B. */
	vs_smp_mb_light();
	/*
	 * Passive report, from an owned slot that has left its last
	 * section: the version we read tells a writer that bumped it that
	 * our next attempt will see the flag (the acquire orders that
	 * attempt's flag load after the writer's flag store).  Release
	 * pairs with the acquire in reported().
	 */
	if (VS_BROKEN(prwlock_shared_slot_reports) ?
	    slot == VS_SLOT_SHARED || vs_read_once(&s->active) == 0 :
	    slot != VS_SLOT_SHARED && vs_read_once(&s->active) == 0)
		vs_store_release(&s->seen, vs_load_acquire(&rw->version));
	if (vs_unlikely(vs_read_once(&rw->wflag)))
		wake_writer(rw);
}

/*
 * Has slot @i left its read sections, or reported version @ver?  The
 * shared slot's report proves nothing about its other threads.
 */
static int reported(struct vs_prwlock *rw, int i, uint64_t ver)
{
	return ((i != VS_SLOT_SHARED ||
		 VS_BROKEN(prwlock_shared_slot_reports)) &&
		vs_load_acquire(&rw->slot[i].seen) == ver) ||
	       vs_load_acquire(&rw->slot[i].active) == 0;
}

/* Caller holds rw->writer with wflag set: wait out the readers. */
static void wait_readers(struct vs_prwlock *rw)
{
	uint64_t ver = vs_read_once(&rw->version) + 1;
	uint32_t seq;
	int i;

	/* Release: a reader that reads @ver also sees wflag. */
	vs_store_release(&rw->version, ver);
	/* B: every running reader executes a barrier: its active count is
	 * visible now, or its next flag load sees the flag.  Pairs with A
	 * and C. */
	vs_smp_mb_heavy();
	for (i = 0; i < VS_SLOT_ARRAY; i++) {
		for (;;) {
			seq = vs_load_acquire(&rw->writer_wake);
			if (reported(rw, i, ver))
				break;
			vs_futex_wait(&rw->writer_wake, seq, -1);
		}
	}
}

void vs_prw_write_lock(struct vs_prwlock *rw)
{
	vs_spin_lock(&rw->writer);
	vs_write_once(&rw->wflag, 1);
	wait_readers(rw);
}

int vs_prw_write_trylock(struct vs_prwlock *rw)
{
	int i;

	if (!vs_spin_trylock(&rw->writer))
		return 0;
	vs_write_once(&rw->wflag, 1);
	vs_store_release(&rw->version, vs_read_once(&rw->version) + 1);
	vs_smp_mb_heavy(); /* B, as in wait_readers() */
	for (i = 0; i < VS_SLOT_ARRAY; i++) {
		if (vs_load_acquire(&rw->slot[i].active)) {
			vs_prw_write_unlock(rw);
			return 0;
		}
	}
	return 1;
}

void vs_prw_write_unlock(struct vs_prwlock *rw)
{
	/* Pairs with the readers' acquire loads of wflag. */
	vs_store_release(&rw->wflag, 0);
	vs_futex_wake(&rw->wflag, INT_MAX);
	vs_spin_unlock(&rw->writer);
}

void vs_prw_downgrade_write(struct vs_prwlock *rw)
{
	unsigned int slot = vs__thread_slot();

	/* Count ourselves in before letting writers and readers go. */
	vs__slot_add(&rw->slot[slot].active, slot, 1);
	vs_prw_write_unlock(rw);
}
