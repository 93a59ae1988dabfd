/* SPDX-License-Identifier: MIT */
/*
 * vmsim/fail.h - allocation failures on demand, after the kernel's
 * failslab and fail_page_alloc (Documentation/fault-injection/
 * fault-injection.rst).
 *
 * Every object of vm/'s caches (VMAs, anon_vmas, VMA-tree nodes, page
 * tables: vmsim/slab.h), every page of a pool (vmsim/page.h), each mm, file
 * and userfaultfd region (objects the kernel takes from slab caches of
 * their own: mm_struct, filp, userfaultfd_ctx_cache) and each page pool
 * (the model's memory, "slab" too) comes from an allocator that first
 * asks whether to fail.  It says yes as vs_fail_set()
 * chose: the nth allocation of the chosen kinds from then on, or each
 * with a seeded probability, up to a number of times.  A failed
 * allocation is what the host running out of memory would give: NULL,
 * and the caller's own -ENOMEM path.
 *
 * Tests set it with vs_fail_set(), or with the environment variable
 * VMSIM_FAIL, read when the library is loaded, in the same words:
 *
 *	VMSIM_FAIL='slab,nth=3'             the third object allocation
 *	                                    (vs_mm_create()'s count too)
 *	VMSIM_FAIL='page,p=0.01,seed=7,times=20'
 *	VMSIM_FAIL='slab,cache=pgtable,nth=1'
 *
 * Off (the default) it costs one load per allocation.  It is
 * process-wide, and not an event of the vCPU engine: on vCPUs the nth
 * allocation is the nth the schedule makes.
 */
#ifndef VMSIM_FAIL_H
#define VMSIM_FAIL_H

#include <stdint.h>

#include "common.h"

/** enum vs_fail_kind - which allocations may be made to fail */
enum vs_fail_kind {
	VS_FAIL_SLAB = 1,	/* objects: vm/'s caches, mm, file, ... */
	VS_FAIL_PAGE = 2,	/* pages of a pool (vmsim/page.h) */
};

/**
 * struct vs_fail_options - which allocations fail
 * @kinds: VS_FAIL_SLAB | VS_FAIL_PAGE; 0 turns injection off
 * @cache: NULL, or only objects of the caches whose name starts with
 *	   it (with VS_FAIL_SLAB: "pgtable", "vma_tree", "vm_area_struct",
 *	   "anon_vma", "mm_struct", "file", "vs_page_pool",
 *	   "userfaultfd_ctx")
 * @nth: fail the @nth allocation of those from now on (1: the next),
 *	 then every @nth after it while @times allows; 0: by
 *	 @probability instead
 * @probability: with @nth 0, the chance each one fails, 0 to 1
 * @seed: the probability's generator's seed (0 is a seed too)
 * @times: most failures injected; 0 for no limit
 */
struct vs_fail_options {
	unsigned int kinds;
	const char *cache;
	unsigned long nth;
	double probability;
	uint64_t seed;
	unsigned long times;
};

/**
 * vs_fail_set - choose the allocations that fail from now on
 * @o: the choice, or NULL (or @o->kinds 0) for none
 *
 * Resets the count of allocations seen and of failures injected, and
 * in the vCPU build every vCPU's nofail section (where vm/ never fails
 * an allocation, as the kernel's __GFP_NOFAIL):
 * an explored schedule abandoned inside one leaves none raised for the
 * next run, as long as each run sets its choice anew.
 *
 * Context: while no other thread allocates from vm/ (between runs).
 * Return: 0; -EINVAL, changing nothing, for kinds other than those
 * above, a probability outside 0 to 1, both @nth and @probability or
 * neither with kinds set, or a @cache longer than 31 bytes or without
 * VS_FAIL_SLAB.
 */
VS_EXTERN int vs_fail_set(const struct vs_fail_options *o);

/**
 * vs_fail_check - would vs_fail_set() take @o?
 * @o: the choice, or NULL
 *
 * Context: any.
 * Return: 0, or -EINVAL as vs_fail_set() says; changes nothing.
 */
VS_EXTERN int vs_fail_check(const struct vs_fail_options *o);

/**
 * vs_fail_parse - the words of VMSIM_FAIL into options
 * @s: "KIND[,KIND][,nth=N][,p=P][,seed=S][,times=T][,cache=NAME]",
 *     KIND slab or page
 * @o: receives them; @o->cache points into @s
 *
 * Context: any.
 * Return: 0; -EINVAL for no kind, an empty word, a word it does not
 * know, or a number that is not decimal digits (a probability: digits
 * and a point) in range (the options are then partly set).
 */
VS_EXTERN int vs_fail_parse(char *s, struct vs_fail_options *o);

/**
 * vs_fail_injected - failures injected since the last vs_fail_set()
 *
 * Context: any.
 * Return: the count.
 */
VS_EXTERN unsigned long vs_fail_injected(void);

/**
 * vs_fail_injected_here - failures injected into the calling thread's
 * allocations (on vCPUs: the calling vCPU's), ever: the difference of
 * two reads counts those between them, as vs_fail_injected() counts
 * every thread's
 *
 * Context: any.
 * Return: the count.
 */
VS_EXTERN unsigned long vs_fail_injected_here(void);

#endif /* VMSIM_FAIL_H */
