/* SPDX-License-Identifier: MIT */
/*
 * sync/prwlock.h - passive reader-writer lock (Liu et al., "Scalable
 * Read-mostly Synchronization Using Passive Reader-Writer Locks", seed
 * 000), with membarrier(2) where the paper sends IPIs.
 *
 * Reader: mark its slot active, a light barrier, check the writer flag.
 * No read-modify-write and no shared line written.  On unlock it reports
 * the lock version it has seen.
 * Writer: set the flag, bump the version, a heavy barrier (membarrier:
 * every running reader now either is visibly active or will see the
 * flag), then wait until every slot has reported the new version or is
 * inactive.  Without membarrier readers use a full barrier instead
 * (see vs_smp_mb_light()).
 *
 * A stream of readers cannot starve a writer; writers can starve
 * readers.  Readers must unlock on the thread that locked.
 */
#ifndef VS_SYNC_PRWLOCK_H
#define VS_SYNC_PRWLOCK_H

#include "atomic.h"
#include "common.h"
#include "spinlock.h"
#include "thread.h"

struct vs__prw_slot {
	VS_CACHELINE_ALIGNED vs_atomic_long_t active; /* read sections */
	vs_atomic64_t seen;   /* last version this slot reported */
};

struct vs_prwlock {
	vs_spinlock_t writer;                     /* one writer at a time */
	VS_CACHELINE_ALIGNED vs_atomic32_t wflag; /* futex word */
	vs_atomic64_t version;
	vs_atomic32_t writer_wake;                /* futex word */
	struct vs__prw_slot slot[VS_SLOT_ARRAY];
};

VS_EXTERN int vs_prwlock_init(struct vs_prwlock *rw);
VS_EXTERN int vs_prwlock_destroy(struct vs_prwlock *rw);
VS_EXTERN void vs_prw_read_lock(struct vs_prwlock *rw);
VS_EXTERN int vs_prw_read_trylock(struct vs_prwlock *rw);
VS_EXTERN void vs_prw_read_unlock(struct vs_prwlock *rw);
VS_EXTERN void vs_prw_write_lock(struct vs_prwlock *rw);
VS_EXTERN int vs_prw_write_trylock(struct vs_prwlock *rw);
VS_EXTERN void vs_prw_write_unlock(struct vs_prwlock *rw);
VS_EXTERN void vs_prw_downgrade_write(struct vs_prwlock *rw);

#endif /* VS_SYNC_PRWLOCK_H */
