/* SPDX-License-Identifier: MIT */
/*
 * fault/access.c - the simulated CPU: vs_access, vs_read, vs_write.
 *
 * An access walks the page tables the way the MMU does, with no lock:
 * inside vs_rcu_read_lock(), which keeps unlinked tables readable (the
 * kernel's GUP-fast relies on the same deferred table free).  When the
 * PTE is missing, or its USER or WRITE bit forbids the access, it
 * raises vs_handle_mm_fault() and tries again, as the CPU re-executes
 * the faulting instruction.  vs_read and vs_write move the bytes of
 * each page under that page's PTL, so a copy never lands in a page
 * that a racing zap is freeing.
 */
#include <string.h>

#include "internal.h"

/* Does @pte let user code read (or @write) its page? */
static int pte_allows(uint64_t pte, int write)
{
	if (!vs_pte_present(pte) || !(pte & VS_PTE_USER))
		return 0;
	return !write || vs_pte_write(pte);
}

/*
 * Raise the fault an access to @addr needs.
 * Return: 0 (try the access again), -EFAULT or -ENOMEM.
 */
static int access_fault(struct vs_mm *mm, unsigned long addr, int write)
{
	unsigned int flags = VS_FAULT_FLAG_USER |
			     (write ? VS_FAULT_FLAG_WRITE : 0);
	int ret = vs_handle_mm_fault(mm, addr, flags);

	if (ret & (VS_VM_FAULT_SIGSEGV | VS_VM_FAULT_SIGBUS))
		return -EFAULT;
	if (ret & VS_VM_FAULT_OOM)
		return -ENOMEM;
	return 0;
}

/*
 * One try at one page without data: the MMU's walk, and the ACCESSED
 * (and DIRTY) update it makes on a hit.  Return: 1 on a hit.
 * Context: inside vs_rcu_read_lock().
 */
static int try_touch(struct vs_mm *mm, unsigned long addr, char *buf,
		     size_t n, int write)
{
	uint64_t want = VS_PTE_ACCESSED | (write ? VS_PTE_DIRTY : 0), pte;
	vs_atomic64_t *ptep;

	vs_rcu_lockdep_assert();
	ptep = vs_pte_offset(&mm->pgtable, addr);
	(void)buf;
	(void)n;
	if (!ptep)
		return 0;
	pte = vs_ptep_get_lockless(ptep);
	return pte_allows(pte, write) &&
	       ((pte & want) == want || vs_ptep_set_flags(ptep, pte, want));
}

/*
 * One try at one page with data: @n bytes at @addr (within one page)
 * to or from @buf, under the PTL.  Return: 1 on a hit.
 * Context: inside vs_rcu_read_lock().
 */
static int try_copy(struct vs_mm *mm, unsigned long addr, char *buf,
		    size_t n, int write)
{
	uint64_t want = VS_PTE_ACCESSED | (write ? VS_PTE_DIRTY : 0), pte;
	vs_atomic64_t *ptep;
	struct vs_page *page;
	vs_spinlock_t *ptl;
	char *data;
	int hit;

	vs_rcu_lockdep_assert();
	ptep = vs_pte_offset_map_lock(&mm->pgtable, addr, &ptl);
	if (!ptep)
		return 0;
	pte = vs_ptep_get(ptep);
	page = vs_pfn_to_page(mm->pool, vs_pte_pfn(pte));
	hit = page && pte_allows(pte, write);
	if (hit) {
		data = (char *)page->data + (addr & ~VS_PAGE_MASK);
		if (write)
			memcpy(data, buf, n);
		else
			memcpy(buf, data, n);
		(void)vs_ptep_set_flags(ptep, pte, want);
	}
	vs_pte_unmap_unlock(ptl);
	return hit;
}

/*
 * One page: try, fault, try again, as a CPU re-executes the faulting
 * instruction.  Context: no lock held.
 * Return: 0, -EFAULT or -ENOMEM.
 */
static int access_page(struct vs_mm *mm, unsigned long addr, char *buf,
		       size_t n, int write)
{
	int hit, err;

	vs_mm_assert_unlocked(mm);
	for (;;) {
		vs_rcu_read_lock();
		hit = buf ? try_copy(mm, addr, buf, n, write) :
			    try_touch(mm, addr, buf, n, write);
		vs_rcu_read_unlock();
		if (hit)
			return 0;
		err = access_fault(mm, addr, write);
		if (err)
			return err;
	}
}

/*
 * Visit each page of [addr, addr + len) in order.  @buf NULL: access
 * only.  Return: 0, or the first error (earlier pages were done).
 */
static int access_range(struct vs_mm *mm, unsigned long addr, char *buf,
			size_t len, int write)
{
	unsigned long end, next;
	size_t n;
	int err;

	if (!mm)
		return -EINVAL;
	if (!len)
		return 0;
	end = addr + len;
	if (end < addr)
		return -EINVAL;
	for (; addr < end; addr = next) {
		next = (addr & VS_PAGE_MASK) + VS_PAGE_SIZE;
		if (next > end || next == 0)
			next = end;
		n = next - addr;
		err = access_page(mm, addr, buf, n, write);
		if (err)
			return err;
		if (buf)
			buf += n;
	}
	return 0;
}

int vs_access(struct vs_mm *mm, unsigned long addr, size_t len, int write)
{
	return access_range(mm, addr, NULL, len, write != 0);
}

int vs_read(struct vs_mm *mm, unsigned long addr, void *buf, size_t len)
{
	if (!buf && len)
		return -EINVAL;
	return access_range(mm, addr, buf, len, 0);
}

int vs_write(struct vs_mm *mm, unsigned long addr, const void *buf,
	     size_t len)
{
	if (!buf && len)
		return -EINVAL;
	/* Only read through: copy_page_part() copies into the page. */
	return access_range(mm, addr, (char *)(uintptr_t)buf, len, 1);
}
