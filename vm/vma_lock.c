/* SPDX-License-Identifier: MIT */
/*
 * vm/vma_lock.c - the per-VMA lock, both sides: the writer's
 * vs_vma_start_write() and the attach and detach of a VMA, and the
 * reader's vs__lock_vma_under_rcu() (the pervma fault, 6.18's
 * MADV_DONTNEED).
 *
 * Two kinds, by mm->mech.vma_lock (docs/vm.md, "Kernel versions"):
 * 6.15's vm_refcnt (0 detached, 1 attached, one more a reader,
 * VS_VMA_LOCK_OFFSET more a writer, who waits on mm->vma_writer_wait),
 * and 6.4's rw_semaphore vm_lock.  3.18 has none: only the mark that
 * the speculative strategy reads.  A reader's pointer comes from an
 * RCU lookup and, at 6.18, may point to a VMA freed and reused since
 * (vm/vma.c): every check after the reference is against the mm the
 * reader is in.
 */
#include <stdint.h>

#include <vmsim/wait.h>

#include "../sync/internal.h"
#include "internal.h"

/* ---- the writer ---------------------------------------------------------- */

/*
 * vma_wait_readers - wait until @vma's vm_refcnt is @target: the readers
 * inside it left (6.15's __vma_enter_locked() wait)
 *
 * The caller added VS_VMA_LOCK_OFFSET, so no new reader gets in.  The
 * last reader out advances mm->vma_writer_wait and wakes it
 * (vma_refcount_put() below): the word is read before the
 * count, so a wake between the two makes the wait return at once.
 * Context: mmap_lock held for write.  Sleeps.
 */
static void vma_wait_readers(struct vs_vma *vma, uint32_t target)
{
	struct vs_mm *mm = vma->vm_mm;
	uint32_t w;

	vs_mmap_assert_write_locked(mm);
	for (;;) {
		/* Acquire, both: pair with the reader's fully ordered add
		 * to the word, made after its release decrement. */
		w = vs_load_acquire(&mm->vma_writer_wait);
		if (vs_load_acquire(&vma->vm_refcnt) == target)
			return;
		(void)vs_futex_wait(&mm->vma_writer_wait, w, -1);
	}
}

/*
 * vma_enter_locked - add the writer's offset to a nonzero vm_refcnt
 * (refcount_add_not_zero) and wait for the readers to drop to @target
 * Context: mmap_lock held for write.  May sleep.
 * Return: true if the offset was added (lockdep holds "vm_lock" for
 * write), false for a detached VMA (0: no reader can get in).
 */
static bool vma_enter_locked(struct vs_vma *vma, uint32_t target)
{
	uint32_t old = vs_read_once(&vma->vm_refcnt);

	do {
		if (old == 0)
			return false;
	} while (!vs_cmpxchg(&vma->vm_refcnt, &old, old + VS_VMA_LOCK_OFFSET));
	VS__LD(vs__lockdep_acquire(&vma->vm_lock.dep_map, &vma->vm_lock, 0,
				   VS__LD_SLEEP, VS__LD_IP));
	/* The planted bug: the writer does not wait for the readers. */
	if (!VS_BROKEN(vma_start_write_no_wait))
		vma_wait_readers(vma, target);
	return true;
}

/* Take the writer's offset back.  Context: after vma_enter_locked(). */
static void vma_exit_locked(struct vs_vma *vma)
{
	VS__LD(vs__lockdep_release(&vma->vm_lock.dep_map, &vma->vm_lock));
	/* Release: the mark stored before is seen by a reader whose
	 * acquire increment follows (vma_start_read_refcnt() below). */
	(void)vs_fetch_sub_release(&vma->vm_refcnt, VS_VMA_LOCK_OFFSET);
}

/**
 * vs_vma_start_write - mark @vma for the current mmap write section
 *
 * 6.15's vma_start_write() (VS_VMA_LOCK_REFCNT): the writer's offset in
 * vm_refcnt stops new readers while it waits for those inside, then
 * the mark is stored and the offset taken back; a reader that gets in
 * later sees the mark (its acquire increment reads the release
 * subtraction) and backs off.  6.4's (VS_VMA_LOCK_RWSEM): the store is
 * made holding vm_lock for write, which first waits out the readers;
 * a reader that read-locks vm_lock afterwards sees the new vm_lock_seq
 * (the rwsem's release/acquire).  3.18 (VS_VMA_LOCK_NONE) has no
 * per-VMA lock: only the mark, for the speculative strategy.  Either
 * way vm_lock_seq then equals mm_lock_seq (vs_vma_is_write_marked()).
 * Context: mmap_lock held for write.  May sleep.
 */
void vs_vma_start_write(struct vs_vma *vma)
{
	struct vs_mm *mm = vma->vm_mm;
	uint32_t seq = vs_read_once(&mm->mm_lock_seq);
	bool locked;

	vs_mmap_assert_write_locked(mm);
	if (VS_BROKEN(vma_no_write_mark))
		return;
	if (vs_read_once(&vma->vm_lock_seq) == seq)
		return; /* already marked under this write lock */
	if (mm->mech.vma_lock == VS_VMA_LOCK_RWSEM) {
		vs_down_write(&vma->vm_lock);
		/* Release, and vm_lock's release at the unlock below: a
		 * reader in vma_start_read_rwsem() below that read-locks
		 * vm_lock after this (the trylock's acquire) sees the mark
		 * and backs off. */
		vs_store_release(&vma->vm_lock_seq, seq);
		vs_up_write(&vma->vm_lock);
		return;
	}
	locked = mm->mech.vma_lock == VS_VMA_LOCK_REFCNT &&
		 vma_enter_locked(vma, VS_VMA_LOCK_OFFSET + 1);
	/* Release: a lockless reader that sees the mark sees what this
	 * thread did before (the speculative strategy's snapshot). */
	vs_store_release(&vma->vm_lock_seq, seq);
	if (locked)
		vma_exit_locked(vma);
}

/**
 * vs__vma_mark_attached - @vma enters the index: vm_refcnt 0 to 1
 * (6.15's vma_mark_attached())
 *
 * Release: pairs with a reader's acquire increment, which then sees the
 * VMA's fields as initialised.  Nothing with another per-VMA lock.
 * Context: mmap_lock held for write; @vma detached, marked.
 */
void vs__vma_mark_attached(struct vs_vma *vma)
{
	vs_vma_assert_write_locked(vma);
	if (vma->vm_mm->mech.vma_lock == VS_VMA_LOCK_REFCNT)
		vs_store_release(&vma->vm_refcnt, 1);
}

/**
 * vs__vma_mark_detached - @vma left the index: drop the attach
 * reference (6.15's vma_mark_detached())
 *
 * A reader that got in after the mark (it backs off, seeing it) may
 * still hold a reference: wait for it, with the writer's offset, so
 * that the VMA is free of readers when this returns.
 * Context: mmap_lock held for write; @vma marked, out of the index.
 * May sleep.
 */
void vs__vma_mark_detached(struct vs_vma *vma)
{
	vs_vma_assert_write_locked(vma);
	if (vma->vm_mm->mech.vma_lock != VS_VMA_LOCK_REFCNT)
		return;
	/* Release: the writer's changes before any later owner's. */
	if (vs_fetch_sub_release(&vma->vm_refcnt, 1) == 1)
		return;
	/* The planted bug: the late reader's reference outlives the VMA,
	 * and its decrement lands on whatever the VMA becomes next. */
	if (VS_BROKEN(vma_detach_no_wait))
		return;
	if (vma_enter_locked(vma, VS_VMA_LOCK_OFFSET))
		vma_exit_locked(vma);
}

/* ---- the reader ---------------------------------------------------------- */

/*
 * vs__vma_read_yields(): a test mode, written only while no fault runs,
 * so a plain int: on a vCPU its reads are no events, and the schedules
 * without it stay as they were.
 */
static int read_yields;

/* A hook of the test library's explorations (test/hooks.h). */
int vs__vma_read_yields(int on)
{
	int old = read_yields;

	read_yields = on ? 1 : 0;
	return old;
}

/*
 * read_yield - in vs__vma_read_yields()'s mode, a preemption of the
 * reader where its state is in flux (6.18 with CONFIG_PREEMPT_RCU may
 * preempt it anywhere in its RCU section): a yield, where another vCPU
 * runs, for each of the few events PCT would otherwise need a change
 * point on.  Context: inside vs_rcu_read_lock().
 */
static void read_yield(void)
{
	if (read_yields)
		vs_yield();
}

/*
 * vma_marked_in - has @mm's current mmap_lock writer marked @vma?  As
 * 6.18's vma_start_read(), against the mm the fault is in, not
 * vma->vm_mm (a stale VMA's may be another mm's).  Acquire on
 * mm_lock_seq: pairs with the release that unmarks (vma_end_write_all(),
 * vm/mm.c), so a reader that sees the mark gone sees the changes.
 * Context: inside vs_rcu_read_lock().
 */
static bool vma_marked_in(struct vs_mm *mm, struct vs_vma *vma)
{
	return vs_read_once(&vma->vm_lock_seq) ==
	       vs_load_acquire(&mm->mm_lock_seq);
}

/*
 * vma_start_read_rwsem - 6.4's vma_start_read(): read-trylock vm_lock
 * unless an mmap_lock writer marked @vma
 *
 * The first check is a cheap early exit; the one after the trylock is
 * the real one: vs_vma_start_write() stores vm_lock_seq holding
 * vm_lock for write, so a reader that got the read lock after that
 * sees the mark, and mm_lock_seq tells whether the mark is current
 * (vs_vma_is_write_marked()).  Then 6.4's lock_vma_under_rcu() check of
 * vm_detached.
 * Context: inside vs_rcu_read_lock() (@vma may be detached, not freed).
 * Return: 0 locked, -EAGAIN detached, -EBUSY.
 */
static int vma_start_read_rwsem(struct vs_vma *vma)
{
	int ignore = VS_BROKEN(pervma_ignore_lock_seq);

	vs_rcu_lockdep_assert();
	if (!ignore && vs_vma_is_write_marked(vma))
		return -EBUSY;
	if (!vs_down_read_trylock(&vma->vm_lock))
		return -EBUSY;
	if (!ignore && vs_vma_is_write_marked(vma)) {
		vs_up_read(&vma->vm_lock);
		return -EBUSY;
	}
	/* The planted bug: a VMA detached and erased, its write lock
	 * (and mark) gone with the mmap_lock, is taken as live. */
	if (!VS_BROKEN(pervma_skip_detached_check) &&
	    vs_read_once(&vma->vm_detached)) {
		vs_up_read(&vma->vm_lock);
		return -EAGAIN;
	}
	return 0;
}

/*
 * vma_refcount_inc - 6.15's __refcount_inc_not_zero_limited_acquire():
 * add a reader unless @vma is detached (0) or a writer's offset is in
 * it (VS_VMA_REF_LIMIT).  Acquire: pairs with the release of
 * vs__vma_mark_attached() and of the writer's subtraction
 * (vma_exit_locked() above), so the fields and the mark are seen.
 * Context: inside vs_rcu_read_lock() (@vma may be free: an atomic on it
 * is allowed, vm/vma.c).
 * Return: true when added; *@oldp the count found.
 */
static bool vma_refcount_inc(struct vs_vma *vma, uint32_t *oldp)
{
	uint32_t old = vs_read_once(&vma->vm_refcnt);

	do {
		*oldp = old;
		if (old == 0 || old >= VS_VMA_REF_LIMIT)
			return false;
	} while (!vs_cmpxchg_acquire(&vma->vm_refcnt, &old, old + 1));
	return true;
}

/*
 * vma_refcount_put - 6.15's vma_refcount_put(): drop a reader; the one
 * that leaves a waiting writer alone wakes it (vma_wait_readers()
 * above).  vm_mm is read while the reference still pins @vma to it.
 * Context: holds a reference on @vma.
 */
static void vma_refcount_put(struct vs_vma *vma)
{
	struct vs_mm *mm = vs_read_once(&vma->vm_mm);
	uint32_t left;

	VS__LD(vs__lockdep_release(&vma->vm_lock.dep_map, &vma->vm_lock));
	/* Release: this reader's accesses to @vma before the writer's
	 * changes (its acquire load of the count). */
	left = vs_fetch_sub_release(&vma->vm_refcnt, 1) - 1;
	/* The planted bug: the last reader leaves the writer asleep. */
	if ((left & VS_VMA_LOCK_OFFSET) && left <= VS_VMA_LOCK_OFFSET + 1 &&
	    !VS_BROKEN(vma_put_no_wake)) {
		/* Fully ordered, after the decrement: a writer that reads
		 * the new word reads the new count. */
		(void)vs_fetch_add(&mm->vma_writer_wait, 1);
		(void)vs_futex_wake(&mm->vma_writer_wait, INT32_MAX);
	}
}

/*
 * vma_start_read_refcnt - 6.18's vma_start_read(): the early lockless
 * check of the mark, a reader's reference unless detached or
 * write-locked, then the checks that need it: the VMA may have been
 * freed and reused by another mm (typesafe, vm/vma.c), and the mark.
 * Lockdep sees a read trylock of "vm_lock".
 * Context: inside vs_rcu_read_lock() (@vma may be free, and reused).
 * Return: 0 locked, -EAGAIN detached (0 found), -EBUSY.
 */
static int vma_start_read_refcnt(struct vs_mm *mm, struct vs_vma *vma)
{
	int ignore = VS_BROKEN(pervma_ignore_lock_seq);
	uint32_t old;

	vs_rcu_lockdep_assert();
	if (!ignore && vma_marked_in(mm, vma))
		return -EBUSY;
	read_yield();	/* a writer may mark it now */
	if (!vma_refcount_inc(vma, &old))
		return old == 0 ? -EAGAIN : -EBUSY;
	read_yield();	/* and detach and free it, waiting for us */
	VS__LD(vs__lockdep_acquire(&vma->vm_lock.dep_map, &vma->vm_lock, 0,
				   VS__LD_READ | VS__LD_TRY, VS__LD_IP));
	/* Another mm's: its writer may wait for this reference, and the
	 * put wakes it.  6.18 pins that mm (mmgrab) for the put; here it
	 * is made inside the RCU read section: vs_mm_destroy() frees an
	 * mm only after vs_rcu_barrier(), whose callbacks (the index
	 * nodes its unmapping freed) wait for this section to end. */
	if (!VS_BROKEN(vma_refcnt_no_mm_recheck) &&
	    vs_read_once(&vma->vm_mm) != mm) {
		vma_refcount_put(vma);
		return -EBUSY;
	}
	/* The planted bug: only the early check, made before the
	 * reference; a writer that marked the VMA and left it since (its
	 * offset gone, so the increment got in) is not seen. */
	if (!ignore && !VS_BROKEN(vma_start_read_no_recheck) &&
	    vma_marked_in(mm, vma)) {
		vma_refcount_put(vma);
		return -EBUSY;
	}
	return 0;
}

/* vma_start_read by the mm's per-VMA lock.  Context: as those above. */
static int vma_start_read(struct vs_mm *mm, struct vs_vma *vma)
{
	if (mm->mech.vma_lock == VS_VMA_LOCK_REFCNT)
		return vma_start_read_refcnt(mm, vma);
	return vma_start_read_rwsem(vma);
}

/**
 * vs__vma_end_read - drop what vs__lock_vma_under_rcu() took (6.18's
 * vma_end_read())
 * @vma: the VMA
 * Context: @vma read-locked by the caller.
 */
void vs__vma_end_read(struct vs_vma *vma)
{
	vs_vma_assert_locked(vma);
	if (vma->vm_mm->mech.vma_lock == VS_VMA_LOCK_REFCNT)
		vma_refcount_put(vma);
	else
		vs_up_read(&vma->vm_lock);
}

/**
 * vs__lock_vma_under_rcu - the VMA containing @addr, read-locked, or
 * NULL (6.4's and 6.18's lock_vma_under_rcu())
 * @mm: the mm
 * @addr: the address
 * @misses: incremented for each VMA found detached, after which the
 *	lookup is made again (the kernel's vma_lock_miss; a NULL return is
 *	its vma_lock_abort, which the caller counts)
 *
 * The range is rechecked once locked: it may have changed before, and
 * a typesafe VMA may have been reused elsewhere in this mm.
 * Context: no lock of @mm held; takes and leaves an RCU read section.
 * @mm has a per-VMA lock (mech.vma_lock).
 * Return: the VMA, to release with vs__vma_end_read(); NULL when none
 * holds @addr, a writer marked it, or its range moved.
 */
struct vs_vma *vs__lock_vma_under_rcu(struct vs_mm *mm, unsigned long addr,
				      unsigned long *misses)
{
	struct vs_vma *vma;
	int err;

	vs_rcu_read_lock();
retry:
	vma = vs_vma_lookup(mm, addr);
	if (!vma)
		goto inval;
	err = vma_start_read(mm, vma);
	if (err == -EAGAIN) {
		(*misses)++;
		goto retry;
	}
	if (err)
		goto inval;
	if (!VS_BROKEN(vma_refcnt_no_range_recheck) &&
	    (addr < vs_read_once(&vma->vm_start) ||
	     addr >= vs_read_once(&vma->vm_end))) {
		vs__vma_end_read(vma);
		goto inval;
	}
	vs_rcu_read_unlock();
	return vma;
inval:
	vs_rcu_read_unlock();
	return NULL;
}
