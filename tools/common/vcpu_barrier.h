/* SPDX-License-Identifier: MIT */
/*
 * tools/common/vcpu_barrier.h - a futex barrier for work on vCPUs, as glibc's
 * pthread_barrier_wait() is one: the last to arrive bumps the
 * generation and wakes the others.  vcpubench and multi-fault's vCPU
 * mode pass their loops' barriers through it.
 */
#ifndef VS_TOOLS_VCPU_BARRIER_H
#define VS_TOOLS_VCPU_BARRIER_H

#include <stdint.h>

#include <vmsim/vmsim.h>

struct vcpu_barrier {
	vs_atomic32_t count, gen;
};

/* Wait until @parties callers arrived at @b.  Context: a vCPU. */
static inline void vcpu_barrier_wait(struct vcpu_barrier *b,
				     unsigned int parties)
{
	uint32_t gen = vs_load_acquire(&b->gen);

	if (vs_fetch_add(&b->count, 1) + 1 == parties) {
		vs_write_once(&b->count, 0);
		/* Release: pairs with the waiters' acquire loads of gen. */
		vs_store_release(&b->gen, gen + 1);
		vs_futex_wake(&b->gen, INT32_MAX);
		return;
	}
	while (vs_load_acquire(&b->gen) == gen)
		vs_futex_wait(&b->gen, gen, -1);
}

#endif /* VS_TOOLS_VCPU_BARRIER_H */
