/* SPDX-License-Identifier: MIT */
/*
 * vm/mremap.c - vs_mremap, after mm/mremap.c of Linux 6.18
 * (check_mremap_params, check_prep_vma, mremap_to, expand in place,
 * move_vma).
 *
 * Not modelled: MREMAP_DONTUNMAP (-EINVAL, like any unknown flag).
 * Modelled from 6.18: a move with MREMAP_FIXED and old_len == new_len
 * moves every VMA of the source range (remap_move), and an old_len of 0
 * duplicates a shared mapping (private ones: -EINVAL).
 */
#include <vmsim/vcpu_annotate.h>

#include "../sync/internal.h"
#include "internal.h"

/*
 * Is the PTE at @addr empty, or its table missing (no fault makes one
 * there: spf does not, a pervma fault cannot lock the marked VMA)?  Read
 * under its PTL: see move_ptes() below.  Context: mmap_lock held for
 * write.
 */
static bool src_pte_none(struct vs_mm *mm, unsigned long addr)
{
	vs_atomic64_t *ptep = vs_pte_offset(&mm->pgtable, addr);
	vs_spinlock_t *ptl;
	uint64_t v;

	vs_mmap_assert_write_locked(mm);
	if (!ptep)
		return true;
	/* The planted bug: read without the PTL, under a speculative
	 * installer's feet. */
	if (VS_BROKEN(move_ptes_skip_unlocked))
		return vs_pte_none(vs_ptep_get_lockless(ptep));
	ptep = vs_pte_offset_map_lock(&mm->pgtable, addr, &ptl);
	if (!ptep)
		return true;
	v = vs_ptep_get(ptep);
	vs_pte_unmap_unlock(ptl);
	return vs_pte_none(v);
}

/*
 * The planted bug move_ptes_two_ptls: the target PTE set under its PTL
 * taken inside the source's @src_ptl, as 6.18's move_ptes() holds both,
 * but without its nesting annotation (spin_lock_nested()) and its test
 * that the two are one lock: a per-mm PTL, or both PTEs in one PTE page,
 * deadlocks on itself.  Context: mmap_lock held for write; @src_ptl
 * held, dropped here.
 */
static void move_pte_under(struct vs_mm *mm, unsigned long new, uint64_t v,
			   vs_spinlock_t *src_ptl)
{
	vs_atomic64_t *dst;
	vs_spinlock_t *ptl;

	vs_assert_ptl_held(src_ptl);
	if (vs_pte_present(v)) {
		dst = vs_pte_offset_map_lock(&mm->pgtable, new, &ptl);
		vs_set_pte(dst, v);
		vs_pte_unmap_unlock(ptl);
	}
	vs_pte_unmap_unlock(src_ptl);
}

/*
 * Move the PTEs of [old, old + len) to [new, new + len), page by page
 * (move_ptes): the page, its reference, mapcount and RSS go with the
 * PTE.  Each PTL is taken alone, so a per-mm PTL is no self-deadlock.
 * A source PTE is judged only under its PTL, as 6.18's move_ptes()
 * reads it: a speculative fault that revalidated vm_sequence under that
 * PTL before the old VMA's write section may still install there, and
 * the PTL is what makes it finish first.
 * Context: mmap_lock held for write; both VMAs write-marked.
 * Return: the bytes moved: @len, or fewer when a table at the target
 * could not be allocated (the rest stays).
 */
static unsigned long move_ptes(struct vs_mm *mm, unsigned long old,
			       unsigned long new, unsigned long len)
{
	vs_atomic64_t *src, *dst;
	vs_spinlock_t *ptl;
	unsigned long i;
	uint64_t v;

	vs_mmap_assert_write_locked(mm);
	for (i = 0; i < len; i += VS_PAGE_SIZE) {
		if (src_pte_none(mm, old + i))
			continue;
		if (!vs_pte_alloc(&mm->pgtable, new + i))
			return i;
		src = vs_pte_offset_map_lock(&mm->pgtable, old + i, &ptl);
		if (!src)
			continue;
		v = vs_ptep_get_and_clear(src);
		if (VS_BROKEN(move_ptes_two_ptls)) {
			move_pte_under(mm, new + i, v, ptl);
			continue;
		}
		vs_pte_unmap_unlock(ptl);
		if (!vs_pte_present(v))
			continue;
		dst = vs_pte_offset_map_lock(&mm->pgtable, new + i, &ptl);
		/* The target VMA is new and in a write section: empty. */
		vs_set_pte(dst, v);
		vs_pte_unmap_unlock(ptl);
	}
	return len;
}

/*
 * move_vma: map [new_addr, new_addr + new_len) like the old range, move
 * the pages, unmap the old range.  When the pages cannot all move (a
 * page table at the target cannot be allocated), do as 6.18's move_vma()
 * does: move those that did back, which cannot fail (their tables at
 * the source are still there), and unmap the new range instead of the
 * old, so that the call fails leaving the old mapping as it was.
 *
 * The unmap after the move, of the old range or of the new one, is
 * never failed (vs__fail_nofail): it may split a VMA.  The kernel's can
 * fail there, and then it leaves that VMA mapped, its pages moved away
 * (a shared one still maps the file beside the new place), and reports
 * success ("OOM: unable to split vma, just get accounts right").  The
 * model's move either happens or not.
 * Context: mmap_lock held for write.
 * Return: new_addr or a negative errno.
 */
static long move_vma(struct vs_mm *mm, struct vs_vma *vma,
		     unsigned long addr, unsigned long old_len,
		     unsigned long new_len, unsigned long new_addr)
{
	struct vs_vma *new = vs__vma_dup(mm, vma);
	unsigned long len, moved;
	int err;

	vs_mmap_assert_write_locked(mm);
	if (!new)
		return -ENOMEM;
	new->vm_start = new_addr;
	new->vm_end = new_addr + new_len;
	new->vm_pgoff += (addr - vma->vm_start) >> VS_PAGE_SHIFT;
	/* copy_vma: anonymous memory never faulted takes the offset of its
	 * new place, so it can merge there. */
	if (!vma->vm_file && !vs_read_once(&vma->anon_vma))
		new->vm_pgoff = new_addr >> VS_PAGE_SHIFT;
	/*
	 * The new VMA enters the index inside a write section, which ends
	 * once the PTEs are in place: a speculative fault finds vm_sequence
	 * odd and falls back instead of filling a PTE that move_ptes()
	 * would overwrite.
	 */
	vs_vm_write_begin(new);
	err = vs__vma_insert(mm, new);
	if (err) {
		vs_vm_write_end(new);
		vs__vma_free(new);
		return err;
	}
	/* Stop speculative faults on the old range before its PTEs move:
	 * they revalidate vm_sequence under the PTL.  The planted bug: the
	 * old VMA is left unmarked, so that per-VMA and speculative faults
	 * fill its range behind move_ptes() until the unmap marks it. */
	if (!VS_BROKEN(mremap_move_no_mark)) {
		vs_vma_start_write(vma);
		vs_vm_write_begin(vma);
		vs_vm_write_end(vma);
	}
	len = old_len < new_len ? old_len : new_len;
	/* move_ptes() gets neither VMA: its rule is stated here. */
	if (!VS_BROKEN(mremap_move_no_mark))
		vs_vma_assert_write_locked(vma);
	vs_vma_assert_write_locked(new);
	vs__mmu_notify_start(mm, addr, addr + len, VS_MMU_NOTIFY_MOVE, 0);
	moved = move_ptes(mm, addr, new_addr, len);
	if (moved < len)
		(void)move_ptes(mm, new_addr, addr, moved);
	vs__mmu_notify_end(mm, addr, addr + len, VS_MMU_NOTIFY_MOVE, 0);
	vs__mmu_notify_start(mm, new_addr, new_addr + new_len,
			     VS_MMU_NOTIFY_MAP, new->vm_flags);
	vs__mmu_notify_end(mm, new_addr, new_addr + new_len,
			   VS_MMU_NOTIFY_MAP, new->vm_flags);
	vs_vm_write_end(new);
	/* 6.18's copy_vma() merges the new VMA while the old range is
	 * still mapped: with the source itself when that is adjacent and
	 * never faulted, so that every piece of it left after the unmap
	 * shares the anon_vma a neighbour brought to the merge. */
	if (moved == len)
		(void)vs__vma_merge_neighbours(mm, new);
	vs__fail_nofail(!VS_BROKEN(mremap_unmap_may_fail));
	if (moved < len)
		(void)vs__do_munmap(mm, new_addr, new_addr + new_len);
	else if (old_len) /* 0: a duplicate of a shared mapping */
		(void)vs__do_munmap(mm, addr, addr + old_len);
	vs__fail_nofail(-!VS_BROKEN(mremap_unmap_may_fail));
	return moved < len ? -ENOMEM : (long)new_addr;
}

/* Can @vma grow by @delta in place (vma_expandable)? */
static int vma_expandable(struct vs_mm *mm, struct vs_vma *vma,
			  unsigned long delta)
{
	unsigned long end = vma->vm_end + delta;

	return end > vma->vm_end && end <= mm->end &&
	       !vs__range_has_vma(mm, vma->vm_end, end);
}

static int check_params(struct vs_mm *mm, unsigned long addr,
			unsigned long old_len, unsigned long new_len,
			int flags, unsigned long new_addr)
{
	if (!mm || (flags & ~(VS_MREMAP_FIXED | VS_MREMAP_MAYMOVE)) ||
	    (addr & ~VS_PAGE_MASK) || !new_len)
		return -EINVAL;
	if (new_len > mm->end)
		return -EINVAL;
	if (!(flags & VS_MREMAP_FIXED))
		return 0;
	if (new_addr > mm->end - new_len || (new_addr & ~VS_PAGE_MASK) ||
	    !(flags & VS_MREMAP_MAYMOVE))
		return -EINVAL;
	/* The target must not overlap the source. */
	if (new_addr < addr + old_len && addr < new_addr + new_len)
		return -EINVAL;
	return 0;
}

/*
 * check_prep_vma: the VMA must hold @addr; an operation that maps new
 * space (a growth, a move) must stay inside it (the part that moves),
 * must not duplicate a private mapping, and must not overflow the file
 * offset.
 */
static int check_vma(struct vs_vma *vma, unsigned long addr,
		     unsigned long old_len, unsigned long new_len, int fixed)
{
	unsigned long pgoff;

	if (!vma)
		return -EFAULT;
	if (new_len <= old_len && !fixed)
		return 0;
	if (!old_len && !(vma->vm_flags & (VS_VM_SHARED | VS_VM_MAYSHARE)))
		return -EINVAL;
	/* A fixed move that shrinks unmaps the tail first: only what is
	 * left must lie inside the VMA. */
	if ((new_len < old_len ? new_len : old_len) > vma->vm_end - addr)
		return -EFAULT;
	if (new_len <= old_len)
		return 0;
	pgoff = vma->vm_pgoff + ((addr - vma->vm_start) >> VS_PAGE_SHIFT);
	if (pgoff + (new_len >> VS_PAGE_SHIFT) < pgoff)
		return -EINVAL;
	return 0;
}

/* mremap_to: MREMAP_FIXED.  Context: mmap_lock held for write. */
static long mremap_to(struct vs_mm *mm, unsigned long addr,
		      unsigned long old_len, unsigned long new_len,
		      unsigned long new_addr)
{
	struct vs_vma *vma;
	int err;

	vs_mmap_assert_write_locked(mm);
	if (new_addr < mm->start)
		return -ENOMEM;
	err = vs__do_munmap(mm, new_addr, new_addr + new_len);
	if (err)
		return err;
	if (old_len > new_len) {
		err = vs__do_munmap(mm, addr + new_len, addr + old_len);
		if (err)
			return err;
		old_len = new_len;
	}
	vma = vs_vma_lookup(mm, addr);
	if (!vma)
		return -EFAULT;
	return move_vma(mm, vma, addr, old_len, new_len, new_addr);
}

/*
 * remap_move: MREMAP_FIXED with equal lengths moves each VMA of
 * [addr, addr + len) to the same offset from @new_addr; holes stay
 * holes.  Context: mmap_lock held for write.
 */
static long remap_move(struct vs_mm *mm, unsigned long start,
		       unsigned long len, unsigned long new_addr)
{
	unsigned long end = start + len, a = start, l;
	struct vs_vma *vma;
	long ret;

	vs_mmap_assert_write_locked(mm);
	vma = vs_vma_lookup(mm, start);
	/* The first VMA must hold @start (check_prep_vma). */
	if (!vma)
		return -EFAULT;
	while ((vma = vs_find_vma(mm, a)) && vma->vm_start < end) {
		a = vma->vm_start > a ? vma->vm_start : a;
		l = (vma->vm_end < end ? vma->vm_end : end) - a;
		ret = check_vma(vma, a, l, l, 1);
		if (!ret)
			ret = mremap_to(mm, a, l, l, new_addr + (a - start));
		if (ret < 0)
			return ret;
		a += l;
	}
	return (long)new_addr;
}

/*
 * Context: mmap_lock held for write; a shrink in place that succeeds
 * lets go of it (6.18's mremap_shrink(), vs__do_munmap_unlock()) and
 * clears *@locked.
 */
static long do_mremap(struct vs_mm *mm, unsigned long addr,
		      unsigned long old_len, unsigned long new_len, int flags,
		      unsigned long new_addr, int *locked)
{
	int fixed = (flags & VS_MREMAP_FIXED) != 0;
	struct vs_vma *vma;
	unsigned long na;
	long ret;

	vs_mmap_assert_write_locked(mm);
	if (fixed && old_len == new_len)
		return remap_move(mm, addr, old_len, new_addr);
	vma = vs_vma_lookup(mm, addr);
	ret = check_vma(vma, addr, old_len, new_len, fixed);
	if (ret)
		return ret;
	if (fixed)
		return mremap_to(mm, addr, old_len, new_len, new_addr);
	if (old_len >= new_len) {
		if (old_len > new_len) {
			ret = vs__do_munmap_unlock(mm, addr + new_len,
						   addr + old_len);
			*locked = ret != 0;
		}
		return ret ? ret : (long)addr;
	}
	if (old_len == vma->vm_end - addr &&
	    vma_expandable(mm, vma, new_len - old_len)) {
		ret = vs__vma_set_range(mm, vma, vma->vm_start,
					vma->vm_end + new_len - old_len,
					vma->vm_pgoff);
		if (ret)
			return ret;
		vs__mmu_notify_start(mm, addr + old_len, addr + new_len,
				     VS_MMU_NOTIFY_MAP, vma->vm_flags);
		vs__mmu_notify_end(mm, addr + old_len, addr + new_len,
				   VS_MMU_NOTIFY_MAP, vma->vm_flags);
		(void)vs__vma_merge_neighbours(mm, vma);
		return (long)addr;
	}
	if (!(flags & VS_MREMAP_MAYMOVE))
		return -ENOMEM;
	na = vs__get_unmapped_area(mm, 0, new_len);
	if ((long)na < 0)
		return (long)na;
	return move_vma(mm, vma, addr, old_len, new_len, na);
}

long vs_mremap(struct vs_mm *mm, unsigned long old_addr, size_t old_len,
	       size_t new_len, int flags, unsigned long new_addr)
{
	int locked = 1;
	long ret;
	/* A system call (on a vCPU: its charges and the mm's cpumask). */
	vs__mm_syscall(mm);

	old_len = VS__PAGE_ALIGN(old_len);
	new_len = VS__PAGE_ALIGN(new_len);
	ret = check_params(mm, old_addr, old_len, new_len, flags, new_addr);
	if (ret)
		return ret;
	vs_mmap_write_lock(mm);
	ret = do_mremap(mm, old_addr, old_len, new_len, flags, new_addr,
			&locked);
	if (locked)
		vs_mmap_write_unlock(mm);
	return ret;
}
