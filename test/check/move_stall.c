/* SPDX-License-Identifier: MIT */
/*
 * test/check/move_stall.c - vs_explore_move_stall, the secondary MMU
 * that waits once an mremap moved the PTEs it mirrors
 * (vmsim/check/explore.h).
 *
 * Locking: its callbacks run as every mmu notifier's, under the
 * mmap_lock held for write (vmsim/mm.h); it keeps no state.
 */
#include <vmsim/check/explore.h>
#include <vmsim/mm.h>
#include <vmsim/wait.h>

#define STALL_NS 1000			/* its wait: 1 us */

static vs_atomic32_t stall_word;	/* never changes: a timed nap */

static void stall_moved(struct vs_mmu_notifier *mn,
			const struct vs_mmu_notifier_range *rg)
{
	(void)mn;
	if (rg->event == VS_MMU_NOTIFY_MOVE)
		(void)vs_futex_wait(&stall_word, 0, STALL_NS);
}

static void stall_nothing(struct vs_mmu_notifier *mn,
			  const struct vs_mmu_notifier_range *rg)
{
	(void)mn;
	(void)rg;
}

static const struct vs_mmu_notifier_ops stall_ops = {
	.invalidate_range_start = stall_nothing,
	.invalidate_range_end = stall_moved,
};

struct vs_mmu_notifier vs_explore_move_stall = { &stall_ops };
