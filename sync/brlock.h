/* SPDX-License-Identifier: MIT */
/*
 * sync/brlock.h - big-reader lock (seed 000): one mutex per slot.
 *
 * A reader takes only its own slot's mutex: an atomic on its own cache
 * line, never a miss while no writer comes.  Threads beyond VS_NR_SLOTS
 * share one slot, which is an rwsem so that they still read together.
 * A writer takes every slot's lock, in slot order.  A writer first raises wpending, which holds new
 * readers back, so a stream of readers cannot starve it; writers can
 * starve readers.  Readers must unlock on the thread that locked.
 */
#ifndef VS_SYNC_BRLOCK_H
#define VS_SYNC_BRLOCK_H

#include "atomic.h"
#include "common.h"
#include "rwsem.h"
#include "spinlock.h"
#include "thread.h"

struct vs__brlock_slot {
	VS_CACHELINE_ALIGNED vs_spinlock_t lock;
};

struct vs_brlock {
	vs_spinlock_t writer;                        /* one writer at a time */
	VS_CACHELINE_ALIGNED vs_atomic32_t wpending; /* futex word */
	struct vs__brlock_slot slot[VS_NR_SLOTS];
	struct vs_rwsem shared;                      /* VS_SLOT_SHARED */
};

VS_EXTERN int vs_brlock_init(struct vs_brlock *br);
VS_EXTERN int vs_brlock_destroy(struct vs_brlock *br);
VS_EXTERN void vs_br_read_lock(struct vs_brlock *br);
VS_EXTERN int vs_br_read_trylock(struct vs_brlock *br);
VS_EXTERN void vs_br_read_unlock(struct vs_brlock *br);
VS_EXTERN void vs_br_write_lock(struct vs_brlock *br);
VS_EXTERN int vs_br_write_trylock(struct vs_brlock *br);
VS_EXTERN void vs_br_write_unlock(struct vs_brlock *br);
VS_EXTERN void vs_br_downgrade_write(struct vs_brlock *br);

#endif /* VS_SYNC_BRLOCK_H */
