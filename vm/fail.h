/* SPDX-License-Identifier: MIT */
/*
 * vm/fail.h - what vm/'s allocators ask of fault injection
 * (vmsim/fail.h): whether this allocation fails, and the sections where
 * none may.  Private to the library (fault/ allocates too).
 */
#ifndef VS_VM_FAIL_PRIV_H
#define VS_VM_FAIL_PRIV_H

#include <vmsim/atomic.h>
#include <vmsim/fail.h>

/* Private: should this allocation of @kind (from cache @name) fail? */
int vs__fail_alloc_slow(unsigned int kind, const char *name);
extern unsigned int vs__fail_kinds;

/*
 * Private: vs__fail_nofail(1) raises, vs__fail_nofail(-1) lowers (0 is
 * neither); while raised, the calling thread's (on vCPUs: vCPU's)
 * allocations are never made to fail: those the kernel makes with
 * __GFP_NOFAIL or has preallocated, which vm/ retries until they
 * succeed (failslab skips __GFP_NOFAIL the same way).  Sections nest.
 * Context: any; each raise lowered by the same thread or vCPU.
 */
void vs__fail_nofail(int n);

/**
 * vs__fail_alloc - should this allocation fail?
 * @kind: VS_FAIL_SLAB or VS_FAIL_PAGE
 * @name: the cache's name, or NULL for a page
 *
 * Context: any allocator of vm/.
 * Return: 1 to fail it.
 */
static inline int vs__fail_alloc(unsigned int kind, const char *name)
{
	/* Acquire: pairs with vs_fail_set()'s release of the kinds. */
	if (vs_likely(!(__atomic_load_n(&vs__fail_kinds, __ATOMIC_ACQUIRE) &
			kind)))
		return 0;
	return vs__fail_alloc_slow(kind, name);
}

#endif /* VS_VM_FAIL_PRIV_H */
