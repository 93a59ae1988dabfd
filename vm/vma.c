/* SPDX-License-Identifier: MIT */
/*
 * vm/vma.c - VMA allocation, RCU freeing, split and merge.
 *
 * Every function here is called with the mm's mmap_lock held for write
 * and follows the rule of vmsim/mm.h: vs_vma_start_write(), then the fields
 * change inside vs_vm_write_begin()/vs_vm_write_end(), then one update
 * of the VMA index per VMA.  Between two updates a lockless reader may
 * miss a range (a split's upper half not yet inserted, a merge's upper
 * neighbour already erased); it then falls back to the mmap_lock, which
 * the writer holds, as it does for any miss.
 *
 * Two VMA caches, one per way of freeing, chosen by the mm's
 * mech.vma_typesafe: the simplest correct split, since the two differ
 * in everything a lockless reader relies on.  Before 6.15 a removed VMA
 * goes back to vma_cache after a grace period, zeroed at allocation and
 * poisoned while free (ASan names a reader that broke the RCU rule).
 * 6.15's vm_area_cachep is SLAB_TYPESAFE_BY_RCU: vma_typesafe_cache
 * takes a removed VMA back at once, and the next allocation, in any mm,
 * may hand it out while a lockless reader still holds its pointer.  So
 * the fields such a reader touches (vm_refcnt, vm_sequence,
 * vm_detached) are set once by vma_ctor() and carried across reuse: a
 * reader's increment of vm_refcnt on a free VMA finds 0, and
 * vm_sequence keeps counting, so a speculative snapshot taken across
 * the reuse fails its check.  vm_detached stays 1 from the removal
 * (set in a write section) to the next insert (cleared in one), so a
 * snapshot of a VMA being reinitialised is either refused or seen to
 * change.  An mm's VMAs all come from one cache: vm_mm says which.
 */
#include <string.h>

#include <vmsim/slab.h>
#include <vmsim/vcpu_annotate.h>

#include "../sync/internal.h"
#include "internal.h"

static struct vs_kmem_cache anon_vma_cache =
	VS_KMEM_CACHE_INIT("anon_vma", sizeof(struct vs_anon_vma),
			   _Alignof(struct vs_anon_vma));
static struct vs_kmem_cache vma_cache =
	VS_KMEM_CACHE_INIT("vm_area_struct", sizeof(struct vs_vma),
			   _Alignof(struct vs_vma));
static void vma_ctor(void *obj);
static struct vs_kmem_cache vma_typesafe_cache =
	VS_KMEM_CACHE_INIT_TYPESAFE("vm_area_struct typesafe",
				    sizeof(struct vs_vma),
				    _Alignof(struct vs_vma), vma_ctor);

/* ---- anon_vma ------------------------------------------------------------ */

struct vs_anon_vma *vs__anon_vma_alloc(void)
{
	struct vs_anon_vma *av = vs_kmem_cache_zalloc(&anon_vma_cache);

	if (av)
		vs_atomic_init(&av->refcount, 1);
	return av;
}

void vs__anon_vma_get(struct vs_anon_vma *av)
{
	vs_fetch_add_relaxed(&av->refcount, 1);
}

/*
 * vs__anon_vma_put - drop a reference; freed after a grace period, since
 * a lockless fault may still read vma->anon_vma of a VMA being freed.
 */
void vs__anon_vma_put(struct vs_anon_vma *av)
{
	if (av && vs_fetch_sub(&av->refcount, 1) == 1)
		vs_kmem_cache_free_rcu(&anon_vma_cache, av);
}

/*
 * Could @a and @b, right above it, share an anon_vma: adjacent, the same
 * file at contiguous offsets, flags equal but for the access bits
 * (anon_vma_compatible() of 6.18's mm/vma.c and of 3.18's mm/mmap.c)?
 * Context: mmap_lock held.
 */
static int anon_vma_shareable(const struct vs_vma *a, const struct vs_vma *b)
{
	const unsigned long access = VS_VM_READ | VS_VM_WRITE | VS_VM_EXEC;

	return a->vm_end == b->vm_start && a->vm_file == b->vm_file &&
	       !((a->vm_flags ^ b->vm_flags) & ~access) &&
	       b->vm_pgoff == a->vm_pgoff +
				      ((b->vm_start - a->vm_start) >>
				       VS_PAGE_SHIFT);
}

/*
 * A neighbour's anon_vma that @vma may take instead of a new one, the
 * next VMA's first (find_mergeable_anon_vma()), so that the two can
 * still merge after an mprotect.  The kernel takes it only when the
 * neighbour's anon_vma_chain is singular; the model keeps no chain, so
 * in a forked child it takes one the kernel would not.
 * Context: mmap_lock held.
 * Return: the anon_vma with a reference for @vma, or NULL.
 */
static struct vs_anon_vma *anon_vma_reusable(struct vs_vma *vma)
{
	struct vs_vma *next = vs__vma_next(vma->vm_mm, vma);
	struct vs_vma *prev = vs__vma_prev(vma->vm_mm, vma);
	struct vs_anon_vma *av = NULL;

	/* Acquire: pairs with the cmpxchg of the neighbour's preparer. */
	if (next && anon_vma_shareable(vma, next))
		av = vs_load_acquire(&next->anon_vma);
	if (!av && prev && anon_vma_shareable(prev, vma))
		av = vs_load_acquire(&prev->anon_vma);
	/* The neighbour's own reference keeps @av alive: it cannot leave
	 * the tree while this mmap_lock is held.  The planted bug shares
	 * it without a reference of @vma's own: the neighbour's unmap then
	 * frees it under @vma. */
	if (av && !VS_BROKEN(anon_vma_reuse_no_ref))
		vs__anon_vma_get(av);
	return av;
}

/**
 * vs__anon_vma_prepare - give @vma an anon_vma if it has none: a
 * neighbour's where anon_vma_reusable() finds one, else a new one
 *
 * Context: mmap_lock held (either side): a fault under the VMA lock or
 * speculative returns VS_VM_FAULT_RETRY for it instead (fault/memory.c);
 * a racing preparer loses the cmpxchg and drops its copy (the kernel's
 * __anon_vma_prepare under page_table_lock).
 * Return: 0 or -ENOMEM.
 */
int vs__anon_vma_prepare(struct vs_vma *vma)
{
	struct vs_anon_vma *av, *old = NULL;
	int reused;

	vs_mmap_assert_locked(vma->vm_mm);
	/* Acquire: pairs with the cmpxchg below. */
	if (vs_load_acquire(&vma->anon_vma))
		return 0;
	av = anon_vma_reusable(vma);
	reused = av != NULL;
	if (!av)
		av = vs__anon_vma_alloc();
	if (!av)
		return -ENOMEM;
	/* The planted bug: a write section, as for the fields a speculative
	 * fault snapshots, under an mmap_lock held only for reading. */
	if (VS_BROKEN(anon_vma_seq_under_read_lock))
		vs_write_seqcount_begin(&vma->vm_sequence);
	/* Fully ordered: the initialised anon_vma before the pointer. */
	if (!vs_cmpxchg(&vma->anon_vma, &old, av)) {
		if (reused)
			vs__anon_vma_put(av);
		else
			vs_kmem_cache_free(&anon_vma_cache, av);
	}
	if (VS_BROKEN(anon_vma_seq_under_read_lock))
		vs_write_seqcount_end(&vma->vm_sequence);
	return 0;
}

/* ---- allocation ---------------------------------------------------------- */

/*
 * vma_ctor - a VMA as it is carved: zeroed, detached (vm_refcnt 0,
 * vm_detached 1), its locks initialised.  The constructor of
 * vma_typesafe_cache, run once per object; vma_cache's allocation runs
 * it on every VMA.  Context: the object is unreachable.
 */
static void vma_ctor(void *obj)
{
	struct vs_vma *vma = obj;

	memset(vma, 0, sizeof(*vma));
	vs_atomic_init(&vma->vm_mm, NULL);
	vs_atomic_init(&vma->anon_vma, NULL);
	vs_seqcount_init(&vma->vm_sequence);
	vs_atomic_init(&vma->vm_lock_seq, 0);
	vs_atomic_init(&vma->vm_refcnt, 0);
	vs_atomic_init(&vma->vm_detached, 1);
	(void)vs_rwsem_init(&vma->vm_lock);	/* 0 for a non-NULL lock */
	/* lockdep (vmsim/lockdep.h): one class for every VMA's lock, of
	 * either kind (a vm_refcnt reader is annotated on vm_lock's map),
	 * one for every vm_sequence, whose writers hold the mmap_lock. */
	vs_lockdep_set_class(&vma->vm_lock, "vm_lock");
	vs_lockdep_set_class(&vma->vm_sequence, "vm_sequence");
}

/**
 * vs__vma_alloc - a cleared, detached VMA of @mm, marked write-locked
 *
 * Its vm_lock_seq is the current mm_lock_seq, so it is already marked
 * by the write lock its creator holds (the kernel write-locks a new VMA
 * before it enters the tree).  A typesafe VMA's fields are stored
 * whole (vs_write_once()): a stale lockless reader may be reading them;
 * vm_refcnt, vm_sequence and vm_detached are left as the last owner
 * left them (0, even, 1).
 * Context: mmap_lock held for write.
 */
struct vs_vma *vs__vma_alloc(struct vs_mm *mm)
{
	struct vs_vma *vma;

	vs_mmap_assert_write_locked(mm);
	if (mm->mech.vma_typesafe) {
		vma = vs_kmem_cache_alloc(&vma_typesafe_cache);
	} else {
		vma = vs_kmem_cache_alloc(&vma_cache);
		if (vma)
			vma_ctor(vma);
	}
	if (!vma)
		return NULL;
	vs_write_once(&vma->vm_start, 0);
	vs_write_once(&vma->vm_end, 0);
	vs_write_once(&vma->vm_flags, 0);
	vs_write_once(&vma->vm_pgoff, 0);
	vs_write_once(&vma->vm_file, NULL);
	vs_write_once(&vma->anon_vma, NULL);
	vs_write_once(&vma->vm_mm, mm);
	vs_write_once(&vma->vm_lock_seq, vs_read_once(&mm->mm_lock_seq));
	vs_seqcount_set_lock(&vma->vm_sequence, &mm->mmap_lock);
	vs_vcpu_name(vma, sizeof(*vma), "a VMA");
	vs_vcpu_name(&vma->vm_lock, sizeof(vma->vm_lock), "a VMA's vm_lock");
	return vma;
}

/**
 * vs__vma_dup - a copy of @vma for @mm (same range, flags, backing),
 * holding its own references on the file and the anon_vma
 * Context: mmap_lock of @mm held for write.
 */
struct vs_vma *vs__vma_dup(struct vs_mm *mm, const struct vs_vma *vma)
{
	struct vs_vma *new;
	struct vs_anon_vma *av;

	vs_mmap_assert_write_locked(mm);
	new = vs__vma_alloc(mm);
	if (!new)
		return NULL;
	new->vm_start = vma->vm_start;
	new->vm_end = vma->vm_end;
	new->vm_flags = vma->vm_flags;
	new->vm_pgoff = vma->vm_pgoff;
	new->vm_file = vma->vm_file;
	/* The planted bug: the copy (a split's, fork's, mremap's) maps the
	 * file without a reference, so the file goes while it is mapped. */
	if (new->vm_file && !VS_BROKEN(vma_dup_no_file_ref))
		vs_file_get(new->vm_file);
	av = vs_read_once((VS_ATOMIC(struct vs_anon_vma *) *)&vma->anon_vma);
	if (av)
		vs__anon_vma_get(av);
	vs_atomic_init(&new->anon_vma, av);
	return new;
}

/* The file reference of a typesafe VMA.  Context: an RCU callback. */
static void file_put_rcu(void *arg, void *obj)
{
	(void)arg;
	vs_file_put(obj);
}

/*
 * vma_free - give @vma back to its cache, and its references.  Not
 * poisoned here: its cache hands it out again at once, so a reader that
 * broke the RCU rule would as likely meet a new VMA as a poisoned one;
 * under ASan vma_cache poisons it and reuses it last, and the access is
 * named.  (Writing it here, on the call_rcu thread, would also cost its
 * next user on another CPU a cache miss.)  A typesafe VMA is freed at
 * once, while a speculative fault may still hold its snapshot of
 * vm_file: the file reference goes after a grace period, as the
 * anon_vma's does (vs__anon_vma_put()).
 * Context: mmap_lock held for write, or an RCU callback (vma_cache's).
 */
static void vma_free(struct vs_vma *vma, int typesafe)
{
	struct vs_file *file = vs_read_once(&vma->vm_file);

	if (file && typesafe)
		vs_free_rcu(file_put_rcu, NULL, file);
	else if (file)
		vs_file_put(file);
	vs__anon_vma_put(vs_read_once(&vma->anon_vma));
	if (typesafe) {
		vs_kmem_cache_free(&vma_typesafe_cache, vma);
		return;
	}
	(void)vs_rwsem_destroy(&vma->vm_lock);
	vs_kmem_cache_free(&vma_cache, vma);
}

/*
 * vs__vma_free - free a VMA no reader can reach any more (or, typesafe,
 * none but one that revalidates).
 * Context: mmap_lock of its mm held for write.
 */
void vs__vma_free(struct vs_vma *vma)
{
	vma_free(vma, (int)vma->vm_mm->mech.vma_typesafe);
}

static void vma_free_rcu(void *arg, void *obj)
{
	(void)arg;
	vma_free(obj, 0);
}

/* ---- the index ----------------------------------------------------------- */

/*
 * vma_clear_detached - the VMA is in the index: lockless readers may use
 * it.  A typesafe VMA may be under a stale speculative reader's
 * snapshot: the change is made in a write section (the caller's, if it
 * opened one), so that the reader sees vm_sequence move.
 * Context: mmap_lock held for write; @vma marked.
 */
static void vma_clear_detached(struct vs_vma *vma)
{
	if (!vma->vm_mm->mech.vma_typesafe ||
	    vs_seqcount_is_write_locked(&vma->vm_sequence)) {
		vs_write_once(&vma->vm_detached, 0);
		return;
	}
	vs_vm_write_begin(vma);
	vs_write_once(&vma->vm_detached, 0);
	vs_vm_write_end(vma);
}

/**
 * vs__vma_insert - publish a new VMA in the index
 *
 * Attached first (vm_refcnt 1), as 6.15's vma_iter_store_new() does, so
 * that a per-VMA reader never finds it detached in the index.
 * Context: mmap_lock held for write; no VMA overlaps @vma; @vma marked.
 * Return: 0, -ENOMEM (then @vma is not published).
 */
int vs__vma_insert(struct vs_mm *mm, struct vs_vma *vma)
{
	int err;

	vs_mmap_assert_write_locked(mm);
	vs__vma_mark_attached(vma);
	err = vs_vma_tree_insert(&mm->mm_mt, vma->vm_start, vma->vm_end,
				 vma);
	if (err) {
		/* A stale reader of a reused VMA may hold a reference. */
		vs__vma_mark_detached(vma);
		return err == -EEXIST ? -ENOMEM : err;
	}
	vma_clear_detached(vma);
	mm->map_count++;
	return 0;
}

/**
 * vs__vma_remove - take @vma out of the index and free it after a grace
 * period (at once with mech.vma_typesafe: 6.15's vm_area_free())
 * @zap: also clear its PTEs (munmap); 0 for a merge, whose pages stay
 *
 * vm_detached is set inside the write section and before the zap: a
 * speculative fault that sampled vm_sequence before sees it move when
 * it revalidates under the PTL, one that samples it after sees
 * vm_detached, so none can install a PTE behind the zap.  The page
 * tables left empty are the caller's (vs__unmap_region()).  The VMA
 * keeps its file, which RSS accounting reads, until the grace period.
 * Context: mmap_lock held for write.
 */
void vs__vma_remove(struct vs_mm *mm, struct vs_vma *vma, int zap)
{
	vs_mmap_assert_write_locked(mm);
	vs_vma_start_write(vma);
	vs_vm_write_begin(vma);
	vs_write_once(&vma->vm_detached, 1);
	vs_vm_write_end(vma);
	if (zap)
		vs__zap(mm, vma->vm_start, vma->vm_end, VS_MMU_NOTIFY_UNMAP);
	if (VS_BROKEN(vma_free_before_erase) && !mm->mech.vma_typesafe)
		vs_free_rcu(vma_free_rcu, NULL, vma);
	/* An erase needs a path copy; on -ENOMEM keep trying: the range
	 * must not stay mapped (no failure is injected here). */
	vs__fail_nofail(1);
	while (vs_vma_tree_erase(&mm->mm_mt, vma->vm_start) == -ENOMEM)
		;
	vs__fail_nofail(-1);
	mm->map_count--;
	/* Out of the index: the readers that found it before back off at
	 * the mark; wait for those that hold vm_refcnt. */
	vs__vma_mark_detached(vma);
	/* Queued only now that no reader can find it: a grace period
	 * that began sooner need not wait for one that finds it after. */
	if (mm->mech.vma_typesafe || VS_BROKEN(vma_free_no_rcu))
		vs__vma_free(vma);
	else if (!VS_BROKEN(vma_free_before_erase))
		vs_free_rcu(vma_free_rcu, NULL, vma);
}

/**
 * vs__vma_set_range - move @vma to [@start, @end) at file page @pgoff
 *
 * The new range may overlap only @vma's old one.
 * Context: mmap_lock held for write.
 * Return: 0, -ENOMEM (nothing changed).
 */
int vs__vma_set_range(struct vs_mm *mm, struct vs_vma *vma,
		      unsigned long start, unsigned long end,
		      unsigned long pgoff)
{
	unsigned long os = vma->vm_start, oe = vma->vm_end;
	unsigned long op = vma->vm_pgoff;
	int err;

	vs_mmap_assert_write_locked(mm);
	vs_vma_start_write(vma);
	vs_vm_write_begin(vma);
	vma->vm_start = start;
	vma->vm_end = end;
	vma->vm_pgoff = pgoff;
	vs_vm_write_end(vma);
	err = vs_vma_tree_replace(&mm->mm_mt, os, start, end, vma);
	if (err) {
		vs_vm_write_begin(vma);
		vma->vm_start = os;
		vma->vm_end = oe;
		vma->vm_pgoff = op;
		vs_vm_write_end(vma);
	}
	return err == -EEXIST ? -ENOMEM : err;
}

/**
 * vs__vma_split - split @vma at @addr (__split_vma)
 * @newp: receives the upper part, [@addr, old end); @vma keeps the lower
 *
 * Context: mmap_lock held for write; vm_start < @addr < vm_end, aligned.
 * Return: 0, -ENOMEM (nothing changed).
 */
int vs__vma_split(struct vs_mm *mm, struct vs_vma *vma, unsigned long addr,
		  struct vs_vma **newp)
{
	unsigned long end = vma->vm_end;
	struct vs_vma *new;
	int err;

	vs_mmap_assert_write_locked(mm);
	new = vs__vma_dup(mm, vma);
	if (!new)
		return -ENOMEM;
	new->vm_start = addr;
	new->vm_pgoff += (addr - vma->vm_start) >> VS_PAGE_SHIFT;
	err = vs__vma_set_range(mm, vma, vma->vm_start, addr, vma->vm_pgoff);
	if (!err) {
		err = vs__vma_insert(mm, new);
		/* The way back must not fail: no failure is injected in
		 * it, and it is retried. */
		vs__fail_nofail(err != 0);
		while (err && vs__vma_set_range(mm, vma, vma->vm_start, end,
						vma->vm_pgoff))
			;
		vs__fail_nofail(-(err != 0));
	}
	if (err) {
		vs__vma_free(new);
		return err;
	}
	*newp = new;
	return 0;
}

/* ---- neighbours and merging ---------------------------------------------- */

/* The VMA after @vma, or NULL.  Context: mmap_lock held. */
struct vs_vma *vs__vma_next(struct vs_mm *mm, struct vs_vma *vma)
{
	vs_mmap_assert_locked(mm);
	return vs_vma_tree_find(&mm->mm_mt, vma->vm_end, NULL, NULL);
}

/* The VMA before @vma, or NULL.  Context: mmap_lock held. */
struct vs_vma *vs__vma_prev(struct vs_mm *mm, struct vs_vma *vma)
{
	vs_mmap_assert_locked(mm);
	return vs_vma_tree_prev(&mm->mm_mt, vma->vm_start, NULL, NULL);
}

/*
 * Anonymous memory is compatible when one side has none yet or both
 * share one anon_vma (is_mergeable_anon_vma; the model does not track
 * anon_vma chains, so a forked VMA is treated like any other).
 */
static int anon_vma_compatible(const struct vs_vma *a, const struct vs_vma *b)
{
	struct vs_anon_vma *x, *y;

	x = vs_read_once((VS_ATOMIC(struct vs_anon_vma *) *)&a->anon_vma);
	y = vs_read_once((VS_ATOMIC(struct vs_anon_vma *) *)&b->anon_vma);
	return !x || !y || x == y;
}

/**
 * vs__vma_mergeable - can @a and the VMA @b right above it become one?
 *
 * Adjacent, same flags, same file at contiguous offsets (anonymous
 * private VMAs carry vm_pgoff = address >> PAGE_SHIFT, so one moved by
 * mremap no longer merges, as in the kernel), compatible anon_vma.
 * Anonymous shared mappings each have a shmem file of their own and so
 * never merge.  Context: mmap_lock held.
 */
int vs__vma_mergeable(const struct vs_vma *a, const struct vs_vma *b)
{
	vs_mmap_assert_locked(a->vm_mm);
	return a->vm_end == b->vm_start && a->vm_flags == b->vm_flags &&
	       a->vm_file == b->vm_file &&
	       a->vm_pgoff + ((a->vm_end - a->vm_start) >> VS_PAGE_SHIFT) ==
		       b->vm_pgoff &&
	       anon_vma_compatible(a, b);
}

/*
 * Merge @b into @a, its lower neighbour: @b leaves the index, then @a
 * grows over its range.  @a inherits @b's anon_vma if it had none.
 * Context: mmap_lock held for write; vs__vma_mergeable(a, b).
 */
static int vma_merge_pair(struct vs_mm *mm, struct vs_vma *a,
			  struct vs_vma *b)
{
	struct vs_anon_vma *av = vs_read_once(&b->anon_vma);
	unsigned long end = b->vm_end;

	vs_mmap_assert_write_locked(mm);
	vs_vma_start_write(a);
	if (av && !vs_read_once(&a->anon_vma)) {
		vs__anon_vma_get(av);
		vs_vm_write_begin(a);
		vs_write_once(&a->anon_vma, av);
		vs_vm_write_end(a);
	}
	vs__vma_remove(mm, b, 0);
	/* The range is now free above @a: the replace cannot collide, and
	 * a failure would leave a hole where pages are mapped; retry. */
	while (vs__vma_set_range(mm, a, a->vm_start, end, a->vm_pgoff))
		;
	return 0;
}

/**
 * vs__vma_merge_neighbours - merge @vma with its neighbours where the
 * kernel's vma_merge() would: the previous one first, then the next.
 * Context: mmap_lock held for write.
 * Return: the VMA that now covers @vma's range.
 */
struct vs_vma *vs__vma_merge_neighbours(struct vs_mm *mm, struct vs_vma *vma)
{
	struct vs_vma *prev, *next;

	vs_mmap_assert_write_locked(mm);
	prev = vs__vma_prev(mm, vma);
	next = vs__vma_next(mm, vma);
	if (prev && vs__vma_mergeable(prev, vma)) {
		vma_merge_pair(mm, prev, vma);
		vma = prev;
	}
	if (next && vs__vma_mergeable(vma, next))
		vma_merge_pair(mm, vma, next);
	return vma;
}
