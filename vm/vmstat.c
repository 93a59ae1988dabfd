/* SPDX-License-Identifier: MIT */
/*
 * vm/vmstat.c - the zones' counters, kept as the kernel keeps them: each
 * CPU (slot) adds to a small diff of its own, and folds it into the
 * zone's and the global counters once it passes the zone's threshold
 * (mm/vmstat.c: __mod_zone_page_state, calculate_normal_threshold).
 * So most updates touch only the slot's own line.
 */
#include <vmsim/page.h>

#include "page_internal.h"

/* Fold @d, taken from a slot's diff, into the zone's and the global
 * counters. */
static void fold(struct vs_page_pool *pool, struct zone *z,
		 enum vs_vmstat_item item, int32_t d)
{
	vs_fetch_add_relaxed(&z->vm_stat[item], d);
	vs_fetch_add_relaxed(&pool->vm_stat[item], d);
}

/*
 * vs__vmstat_mod - add @delta to @item of @node's zone
 *
 * An owned slot's diff has one writer, its owner, as a CPU's has (the
 * kernel's __mod_zone_page_state runs with interrupts off): a load and
 * a store.  The shared slot has several: an atomic add, and whoever
 * takes it past the threshold folds what it took (the kernel's
 * this_cpu_cmpxchg loop in mod_zone_state).
 * Context: any.
 */
void vs__vmstat_mod(struct vs_page_pool *pool, unsigned int node,
		    enum vs_vmstat_item item, int delta)
{
	unsigned int slot = vs__thread_slot();
	vs_atomic32_t *diff = &pool->pcp[slot][node].diff[item];
	struct zone *z = &pool->zone[node];
	int32_t d, t = (int32_t)z->threshold;

	if (vs_likely(slot != VS_SLOT_SHARED)) {
		d = (int32_t)vs_read_once(diff) + delta;
		if (d > t || d < -t) {
			fold(pool, z, item, d);
			d = 0;
		}
		vs_write_once(diff, (uint32_t)d);
		return;
	}
	d = (int32_t)vs_fetch_add_relaxed(diff, (uint32_t)delta) + delta;
	if (d > t || d < -t)
		fold(pool, z, item, (int32_t)vs_xchg(diff, 0));
}

long vs_page_pool_stat(struct vs_page_pool *pool, int item, int exact)
{
	long v;
	size_t s, i;

	if (!pool || item < 0 || item >= VS_NR_VMSTAT)
		return -EINVAL;
	v = vs_read_once(&pool->vm_stat[item]);
	if (!exact)
		return v < 0 ? 0 : v;
	for (s = 0; s < VS_SLOT_ARRAY; s++)
		for (i = 0; i < pool->nr_nodes; i++)
			v += (int32_t)vs_read_once(&pool->pcp[s][i].diff[item]);
	return v;
}

void vs_page_add_rmap(struct vs_page_pool *pool, struct vs_page *page)
{
	if (!pool || !page)
		return;
	if (vs_fetch_add(&page->mapcount, 1) == 0 &&
	    vs_page_test_flags(page, VS_PG_ANON))
		vs__vmstat_mod(pool, page->node, VS_NR_ANON_MAPPED, 1);
}

void vs_page_remove_rmap(struct vs_page_pool *pool, struct vs_page *page)
{
	if (!pool || !page)
		return;
	if (vs_fetch_sub(&page->mapcount, 1) == 1 &&
	    vs_page_test_flags(page, VS_PG_ANON))
		vs__vmstat_mod(pool, page->node, VS_NR_ANON_MAPPED, -1);
}
