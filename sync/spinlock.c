/* SPDX-License-Identifier: MIT */
#include <vmsim/spinlock.h>

#include <limits.h>

#include <vmsim/wait.h>

#include "internal.h"

#define SPIN_TRIES 128

void vs__spin_lock_slow(vs_spinlock_t *lock)
{
	uint32_t old;
	int i;

	for (i = 0; i < SPIN_TRIES; i++) {
		old = vs_read_once(&lock->state);
		if (old == 0 && vs__spin_trylock(lock))
			return;
		vs_cpu_relax();
	}
	if (VS_BROKEN(spin_lock_sleeps_unmarked)) {
		while (!vs__spin_trylock(lock))
			vs_futex_wait(&lock->state, 1, -1);
		return;
	}
	/*
	 * Mark the lock contended before sleeping so that the holder's
	 * unlock wakes us; taking it with state 2 keeps the mark for any
	 * other sleeper.
	 */
	while (vs_xchg_acquire(&lock->state, 2) != 0)
		vs_futex_wait(&lock->state, 2, -1);
}

void vs__spin_unlock_wake(vs_spinlock_t *lock)
{
	vs_futex_wake(&lock->state, 1);
}
