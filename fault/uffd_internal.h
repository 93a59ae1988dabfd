/* SPDX-License-Identifier: MIT */
/*
 * fault/uffd_internal.h - what the three files of the uffd backing
 * share: the region, its invalidation protocol and its counters.
 *
 *   uffd.c          open and probe, create and destroy, resolve one fault
 *   uffd_mirror.c   the mmu notifier: the model's changes onto real memory
 *   uffd_deliver.c  the SIGBUS handler, handler threads, the libuv loop
 *
 * The invalidation protocol (KVM's mmu_invalidate_seq): the mirror's
 * invalidate_range_start raises @inv_in_progress under @mmu_lock before
 * it zaps real pages; its invalidate_range_end bumps @inv_seq and drops
 * @inv_in_progress, also under @mmu_lock.  A fault samples @inv_seq
 * (waiting out any invalidation in progress), resolves in the model,
 * then installs under @mmu_lock only if no invalidation started since:
 * so a real page is never installed from a model state that a zap had
 * already left behind.
 *
 * Locking: docs/locking.md, "struct vs_uffd".
 */
#ifndef VS_FAULT_UFFD_INTERNAL_H
#define VS_FAULT_UFFD_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include <vmsim/spinlock.h>
#include <vmsim/uffd.h>

#include "internal.h"

enum {
	VS__US_FAULTS,
	VS__US_WP_FAULTS,
	VS__US_COPIES,
	VS__US_WP_COPIES,
	VS__US_UNPROTECTS,
	VS__US_EEXIST,
	VS__US_EAGAIN,
	VS__US_RACED,
	VS__US_SIGSEGV,
	VS__US_SIGBUS,
	VS__US_INVALIDATIONS,
	VS__US_WRITEBACKS,
	VS__US_NR
};

struct vs__uffd_slot {
	VS_CACHELINE_ALIGNED vs_atomic_long_t c[VS__US_NR];
};

/* Faults of one faulting thread; a cache line each. */
struct vs__uffd_tstat {
	VS_CACHELINE_ALIGNED vs_atomic32_t tid;	/* 0: free */
	vs_atomic_long_t faults;
};

#define VS__UFFD_NR_TSTAT 64
#define VS__UFFD_MSGS 64	/* events per read(2) */

struct vs_uffd {
	struct vs_mmu_notifier mn;	/* registered on @mm */
	struct vs_mm *mm;
	char *base;
	size_t size;
	int uffd;
	int mode;
	uint64_t features;		/* what UFFDIO_API granted */
	int pagemap_fd;			/* /proc/self/pagemap */
	int mem_fd;			/* /proc/self/mem */

	vs_spinlock_t mmu_lock;
	vs_atomic_long_t inv_seq;
	vs_atomic32_t inv_in_progress;
	vs_spinlock_t inv_mutex;	/* vmsim's mutex (it sleeps when
					 * contended), held from
					 * mirror_start to mirror_end:
					 * across the model's change */

	/* delivery: threads and uv modes */
	int stop_fd;			/* eventfd: the handler threads leave */
	unsigned int nr_threads;
	pthread_t threads[VS_UFFD_MAX_THREADS];
	uv_loop_t loop;
	uv_poll_t poll;
	uv_async_t stop_async;

	struct vs__uffd_slot stat[VS_SLOT_ARRAY];
	struct vs__uffd_tstat tstat[VS__UFFD_NR_TSTAT + 1]; /* last: the rest */
};

/* Count one event of the calling thread.  Context: any, signals too. */
static inline void vs__uffd_count(struct vs_uffd *u, int what)
{
	unsigned int slot = vs__thread_slot();

	vs__slot_add(&u->stat[slot].c[what], slot, 1);
}

/*
 * uffd.c: resolve the fault of thread @tid at @addr (a write fault if
 * @write, on a present write-protected page if @wp), install the page
 * and wake the thread.  Context: an attached thread holding no lock of
 * the mm; async-signal-safe.
 * Return: 0; VS_VM_FAULT_SIGSEGV or VS_VM_FAULT_SIGBUS when the model
 * refused the access (nothing installed, nobody woken: the delivery
 * mode says how the thread learns it); -ESRCH when the process that
 * owns the uffd is gone.
 */
int vs__uffd_resolve(struct vs_uffd *u, unsigned long addr, int write,
		     int wp, pid_t tid);

/* uffd.c: UFFDIO_WAKE one page.  Context: any, signals too. */
void vs__uffd_wake(struct vs_uffd *u, unsigned long addr);

/*
 * uffd.c: poison the page of @addr (UFFDIO_POISON), so the woken thread
 * gets a real SIGBUS there; without UFFD_FEATURE_POISON only wake it
 * (it faults again).  Context: any.
 */
void vs__uffd_poison(struct vs_uffd *u, unsigned long addr);

/* uffd_mirror.c: the notifier's ops. */
extern const struct vs_mmu_notifier_ops vs__uffd_mirror_ops;

/*
 * uffd_deliver.c: the region in slot @slot (0 to VS_UFFD_MAX_REGIONS -
 * 1) of the table the SIGBUS handler searches, or NULL; an acquire
 * load, pairing with the release that published the region.
 * Context: any, signals too.
 */
struct vs_uffd *vs__uffd_region_at(int slot);

/* uffd_deliver.c: start and stop the region's delivery mode. */
int vs__uffd_deliver_start(struct vs_uffd *u);
void vs__uffd_deliver_stop(struct vs_uffd *u);

#endif /* VS_FAULT_UFFD_INTERNAL_H */
