/* SPDX-License-Identifier: MIT */
#include <vmsim/brlock.h>

#include <limits.h>

#include <vmsim/wait.h>

#include "internal.h"

int vs_brlock_init(struct vs_brlock *br)
{
	int i;

	if (!br)
		return -EINVAL;
	vs_spin_lock_init(&br->writer);
	vs_atomic_init(&br->wpending, 0);
	for (i = 0; i < VS_NR_SLOTS; i++)
		vs_spin_lock_init(&br->slot[i].lock);
	return vs_rwsem_init(&br->shared);
}

int vs_brlock_destroy(struct vs_brlock *br)
{
	int i;

	if (!br)
		return -EINVAL;
	if (vs_spin_is_locked(&br->writer) || vs_rwsem_is_locked(&br->shared))
		return -EBUSY;
	for (i = 0; i < VS_NR_SLOTS; i++)
		if (vs_spin_is_locked(&br->slot[i].lock))
			return -EBUSY;
	return vs_rwsem_destroy(&br->shared);
}

/* Sleep while a writer is pending.  Acquire pairs with the release in
 * writer_done(). */
static void wait_writer(struct vs_brlock *br)
{
	while (vs_load_acquire(&br->wpending))
		vs_futex_wait(&br->wpending, 1, -1);
}

void vs_br_read_lock(struct vs_brlock *br)
{
	unsigned int slot = vs__thread_slot();

	/* Checking wpending first keeps a stream of readers from starving a
	 * writer that already holds some slots.  A reader that passes the
	 * check just before the writer raises it is fine: the slot lock
	 * orders the two. */
	if (vs_unlikely(vs_read_once(&br->wpending)))
		wait_writer(br);
	if (vs_unlikely(slot == VS_SLOT_SHARED))
		vs_down_read(&br->shared);
	else
		vs_spin_lock(&br->slot[slot].lock);
}

int vs_br_read_trylock(struct vs_brlock *br)
{
	unsigned int slot = vs__thread_slot();

	if (vs_read_once(&br->wpending))
		return 0;
	if (slot == VS_SLOT_SHARED)
		return vs_down_read_trylock(&br->shared);
	return vs_spin_trylock(&br->slot[slot].lock);
}

void vs_br_read_unlock(struct vs_brlock *br)
{
	unsigned int slot = vs__thread_slot();

	if (vs_unlikely(slot == VS_SLOT_SHARED))
		vs_up_read(&br->shared);
	else
		vs_spin_unlock(&br->slot[slot].lock);
}

/* Caller holds br->writer and slots [0, n); keeps slot @keep. */
static void release_slots(struct vs_brlock *br, int n, int keep)
{
	int i;

	for (i = 0; i < n && i < VS_NR_SLOTS; i++)
		if (i != keep)
			vs_spin_unlock(&br->slot[i].lock);
	if (n == VS_SLOT_ARRAY && keep != VS_SLOT_SHARED)
		vs_up_write(&br->shared);
}

/* Caller holds br->writer; lets readers in again. */
static void writer_done(struct vs_brlock *br)
{
	/* The wake after the store: a reader that sleeps between the two
	 * saw wpending set and is woken.  The release pairs with the
	 * acquire in wait_writer(). */
	if (VS_BROKEN(brlock_wake_before_clear))
		vs_futex_wake(&br->wpending, INT_MAX);
	vs_store_release(&br->wpending, 0);
	if (!VS_BROKEN(brlock_wake_before_clear))
		vs_futex_wake(&br->wpending, INT_MAX);
	vs_spin_unlock(&br->writer);
}

/* Take slot @i for writing; trylock when @try.  Return: 1 taken. */
static int slot_write_lock(struct vs_brlock *br, int i, int try)
{
	if (i == VS_SLOT_SHARED) {
		if (try)
			return vs_down_write_trylock(&br->shared);
		vs_down_write(&br->shared);
		return 1;
	}
	if (try)
		return vs_spin_trylock(&br->slot[i].lock);
	vs_spin_lock(&br->slot[i].lock);
	return 1;
}

void vs_br_write_lock(struct vs_brlock *br)
{
	int i;

	vs_spin_lock(&br->writer);
	vs_write_once(&br->wpending, 1);
	/* Slot order: two writers never hold slots crosswise (and writers
	 * are serialized anyway). */
	for (i = 0; i < VS_SLOT_ARRAY; i++)
		if (!(VS_BROKEN(brlock_writer_skips_shared_slot) &&
		      i == VS_SLOT_SHARED))
			slot_write_lock(br, i, 0);
}

int vs_br_write_trylock(struct vs_brlock *br)
{
	int i;

	if (!vs_spin_trylock(&br->writer))
		return 0;
	vs_write_once(&br->wpending, 1);
	for (i = 0; i < VS_SLOT_ARRAY; i++) {
		if (!slot_write_lock(br, i, 1)) {
			release_slots(br, i, -1);
			writer_done(br);
			return 0;
		}
	}
	return 1;
}

void vs_br_write_unlock(struct vs_brlock *br)
{
	release_slots(br, VS_SLOT_ARRAY,
		      VS_BROKEN(brlock_writer_skips_shared_slot) ?
		      VS_SLOT_SHARED : -1);
	writer_done(br);
}

void vs_br_downgrade_write(struct vs_brlock *br)
{
	unsigned int slot = vs__thread_slot();

	/* Keep our own slot: that is a read lock. */
	release_slots(br, VS_SLOT_ARRAY, (int)slot);
	if (slot == VS_SLOT_SHARED)
		vs_downgrade_write(&br->shared);
	writer_done(br);
}
