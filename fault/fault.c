/* SPDX-License-Identifier: MIT */
/*
 * fault/fault.c - the fault entry and its three strategies (see
 * vmsim/fault.h), after 6.18's arch/x86/mm/fault.c do_user_addr_fault()
 * and the speculative page fault series (Zijlstra 2010/2014, Dufour
 * 2016-2019; docs/strategies.md, "Lineage").  The per-VMA lock that
 * the pervma strategy takes is vm/vma_lock.c's.
 *
 * The building blocks of vmsim/memory.h that the built-in strategies
 * call on every fault are defined inline: the header's declaration
 * keeps them external for a strategy of one's own, and the strategies
 * here pay no call for them.
 */
#include <vmsim/fault.h>

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <vmsim/vcpu_annotate.h>
#include <vmsim/wait.h>

#include "internal.h"

#define FAULT_FLAGS (VS_FAULT_FLAG_WRITE | VS_FAULT_FLAG_USER | \
		     VS_FAULT_FLAG_INSTRUCTION | VS_FAULT_FLAG_NO_FALLBACK)

/* One slot's counters, a cache line apart from the next slot's. */
struct fault_slot {
	VS_CACHELINE_ALIGNED vs_atomic_long_t c[VS_NR_VM_EVENT_ITEMS];
};

static struct fault_slot fault_stats[VS_SLOT_ARRAY];

static const char *const abort_names[VS_SPF_ABORT_NR] = {
	"no_vma", "seq_odd", "vma_write", "seq_changed", "seq_ptl", "no_table",
	"pte_changed", "anon_vma", "nomem"
};

inline bool vs_access_error(unsigned int flags, unsigned long vm_flags)
{
	if (flags & VS_FAULT_FLAG_WRITE)
		return !(vm_flags & VS_VM_WRITE);
	if (flags & VS_FAULT_FLAG_INSTRUCTION)
		return !(vm_flags & VS_VM_EXEC);
	return !(vm_flags & (VS_VM_READ | VS_VM_WRITE | VS_VM_EXEC));
}

inline void vs_vmf_read_vma(struct vs_vm_fault *vmf, struct vs_vma *vma)
{
	vs_vmf_assert_vma_locked(vmf, vma);
	vmf->vma = vma;
	vmf->vm_start = vs_read_once(&vma->vm_start);
	vmf->vm_end = vs_read_once(&vma->vm_end);
	vmf->vm_flags = vs_read_once(&vma->vm_flags);
	vmf->vm_pgoff = vs_read_once(&vma->vm_pgoff);
	vmf->vm_file = vs_read_once(&vma->vm_file);
	/* Acquire: pairs with anon_vma_prepare's cmpxchg, so the anon_vma
	 * is initialised when seen. */
	vmf->anon_vma = vs_load_acquire(&vma->anon_vma);
}

int vs_vma_snapshot(struct vs_vm_fault *vmf, struct vs_vma *vma)
{
	vs_rcu_lockdep_assert();
	if (!vs_raw_seqcount_try_begin(&vma->vm_sequence, &vmf->sequence))
		return vs_spf_abort(vmf, VS_SPF_ABORT_SEQ_ODD);
	vs_vmf_read_vma(vmf, vma);
	/* Read inside the section: a detach is made between
	 * vm_write_begin and vm_write_end.  The planted bugs skip this
	 * check and the next. */
	if (vs_read_once(&vma->vm_detached) &&
	    !VS_BROKEN(spf_skip_detached_check))
		return vs_spf_abort(vmf, VS_SPF_ABORT_NO_VMA);
	/* A typesafe VMA (vm/vma.c) may have been freed and reused by
	 * another mm since the lookup: not ours, and its mm not to be
	 * touched.  The range is rechecked by the caller. */
	if (vs_read_once(&vma->vm_mm) != vmf->mm &&
	    !VS_BROKEN(spf_skip_mm_recheck))
		return vs_spf_abort(vmf, VS_SPF_ABORT_NO_VMA);
	/*
	 * A VMA the current mmap_lock writer marked may sit between two
	 * write sections of one operation (mremap moved its PTEs and has
	 * yet to unmap it): its fields are consistent but stale.  The mark
	 * is stored before the writer's vm_write_begin, so a fault that
	 * reads it unmarked here and then finds vm_sequence unchanged
	 * under the PTL ran wholly before the operation's first section.
	 */
	if (vs_vma_is_write_marked(vma))
		return vs_spf_abort(vmf, VS_SPF_ABORT_VMA_WRITE);
	/* The planted bug spf_seq_checked_once skips this check and the
	 * one under the PTL: vm_sequence is read once, at the begin. */
	if (!VS_BROKEN(spf_seq_checked_once) && vs_vma_has_changed(vmf))
		return vs_spf_abort(vmf, VS_SPF_ABORT_SEQ_CHANGED);
	return 0;
}

/* Count how the fault ended.  Context: any. */
static int fault_done(int ret)
{
	if (ret & VS_VM_FAULT_SIGSEGV)
		vs_count_vm_event(VS_FAULT_SIGSEGV);
	if (ret & VS_VM_FAULT_SIGBUS)
		vs_count_vm_event(VS_FAULT_SIGBUS);
	if (ret & VS_VM_FAULT_OOM)
		vs_count_vm_event(VS_FAULT_OOM);
	return ret;
}

/* The classic path.  Context: no lock of @mm held. */
static int fault_locked(struct vs_vm_fault *f)
{
	struct vs_vma *vma;
	int ret;

	vs_mm_assert_unlocked(f->mm);
	vs_count_vm_event(VS_PGFAULT_LOCKED);
	f->flags &= ~(VS_FAULT_FLAG_SPECULATIVE | VS_FAULT_FLAG_VMA_LOCK);
	if (!vs_mmap_read_trylock(f->mm))
		vs_mmap_read_lock(f->mm);
	vma = vs_find_vma(f->mm, f->address);
	if (!vma || f->address < vs_read_once(&vma->vm_start)) {
		vs_mmap_read_unlock(f->mm);
		return VS_VM_FAULT_SIGSEGV;
	}
	vs_vmf_read_vma(f, vma);
	ret = vs_access_error(f->flags, f->vm_flags) ? VS_VM_FAULT_SIGSEGV :
		vs_handle_pte_fault(f);
	vs_mmap_read_unlock(f->mm);
	return ret;
}

/*
 * The speculative path: the VMA found under RCU, snapshotted between a
 * vm_sequence sample and its check, and revalidated under the PTL.
 * Return: as the fault, or VM_FAULT_RETRY with f->abort.
 * Context: inside vs_rcu_read_lock().
 */
static int spf_fault(struct vs_vm_fault *f)
{
	struct vs_vma *vma;
	int ret;

	vs_rcu_lockdep_assert();
	vma = vs_vma_lookup(f->mm, f->address);
	if (!vma)
		return vs_spf_abort(f, VS_SPF_ABORT_NO_VMA);
	ret = vs_vma_snapshot(f, vma);
	if (ret)
		return ret;
	/* A consistent snapshot of a live VMA of this mm: the VMA moved
	 * away from the address after the lookup (or was freed and reused
	 * elsewhere, vm/vma.c), or forbids the access.  The planted bug:
	 * the range is not rechecked. */
	if (!VS_BROKEN(spf_skip_range_recheck) &&
	    (f->address < f->vm_start || f->address >= f->vm_end))
		return vs_spf_abort(f, VS_SPF_ABORT_NO_VMA);
	if (vs_access_error(f->flags, f->vm_flags))
		return VS_VM_FAULT_SIGSEGV;
	return vs_handle_pte_fault(f);
}

static int fault_spf(struct vs_vm_fault *f)
{
	int ret;

	f->flags |= VS_FAULT_FLAG_SPECULATIVE;
	vs_rcu_read_lock();
	ret = spf_fault(f);
	/* The planted bug: the fallback to the mmap_lock, which sleeps,
	 * runs before the RCU read-side section ends. */
	if (VS_BROKEN(spf_fallback_in_rcu) && (ret & VS_VM_FAULT_RETRY) &&
	    !(f->flags & VS_FAULT_FLAG_NO_FALLBACK)) {
		vs_count_vm_event(VS_SPF_ABORT_EVENT + f->abort);
		ret = fault_locked(f);
		vs_rcu_read_unlock();
		return ret;
	}
	vs_rcu_read_unlock();
	if (!(ret & VS_VM_FAULT_RETRY)) {
		vs_count_vm_event(VS_SPF_SUCCESS);
		return ret;
	}
	vs_count_vm_event(VS_SPF_ABORT_EVENT + f->abort);
	if (f->flags & VS_FAULT_FLAG_NO_FALLBACK)
		return VS_VM_FAULT_RETRY;
	return fault_locked(f);
}

static int fault_pervma(struct vs_vm_fault *f)
{
	unsigned long misses = 0;
	struct vs_vma *vma = vs__lock_vma_under_rcu(f->mm, f->address,
						    &misses);
	int ret;

	while (misses--)
		vs_count_vm_event(VS_VMA_LOCK_MISS);
	if (!vma) {
		vs_count_vm_event(VS_VMA_LOCK_ABORT);
		goto fallback;
	}
	vs_vma_assert_locked(vma);
	f->flags |= VS_FAULT_FLAG_VMA_LOCK;
	vs_vmf_read_vma(f, vma);
	ret = vs_access_error(f->flags, f->vm_flags) ? VS_VM_FAULT_SIGSEGV :
		vs_handle_pte_fault(f);
	/* The planted bug: a retry hands over to the mmap_lock before it
	 * lets go of the VMA, which deadlocks with a writer waiting in
	 * vs_vma_start_write() under the mmap_lock. */
	if (VS_BROKEN(pervma_retry_keeps_vma_lock) &&
	    (ret & VS_VM_FAULT_RETRY)) {
		vs_mmap_read_lock(f->mm);
		vs__vma_end_read(vma);
		vs_mmap_read_unlock(f->mm);
	} else {
		vs__vma_end_read(vma);
	}
	if (!(ret & VS_VM_FAULT_RETRY)) {
		vs_count_vm_event(VS_VMA_LOCK_SUCCESS);
		return ret;
	}
	vs_count_vm_event(VS_VMA_LOCK_RETRY);
fallback:
	if (f->flags & VS_FAULT_FLAG_NO_FALLBACK)
		return VS_VM_FAULT_RETRY;
	return fault_locked(f);
}

/* ---- the strategies, one ops table each ---------------------------------- */

/* A built-in strategy's fault at @addr: the descriptor, then @fn. */
static int builtin_fault(struct vs_mm *mm, unsigned long addr,
			 unsigned int flags, int (*fn)(struct vs_vm_fault *))
{
	struct vs_vm_fault f = {
		.mm = mm,
		.address = addr & VS_PAGE_MASK,
		.flags = flags,
	};

	return fn(&f);
}

static int locked_entry(struct vs_mm *mm, unsigned long addr,
			unsigned int flags)
{
	return builtin_fault(mm, addr, flags, fault_locked);
}

static int spf_entry(struct vs_mm *mm, unsigned long addr, unsigned int flags)
{
	return builtin_fault(mm, addr, flags, fault_spf);
}

static int pervma_entry(struct vs_mm *mm, unsigned long addr,
			unsigned int flags)
{
	return builtin_fault(mm, addr, flags, fault_pervma);
}

static const struct vs_fault_strategy_ops builtin[VS_FAULT_NR_STRATEGIES] = {
	{ "locked", locked_entry },
	{ "spf", spf_entry },
	{ "pervma", pervma_entry },
};

/*
 * Every strategy by value: the built-in ones, then those registered.
 * A slot is written once, under register_lock, with a release store
 * that pairs with the acquire load in vs_fault_strategy_ops(): whoever
 * finds the table finds it initialised.
 */
static VS_ATOMIC(const struct vs_fault_strategy_ops *)
	strategies[VS_FAULT_MAX_STRATEGIES] = {
		&builtin[0], &builtin[1], &builtin[2]
	};
static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER;

const struct vs_fault_strategy_ops *vs_fault_strategy_ops(int strategy)
{
	if (strategy < 0 || strategy >= VS_FAULT_MAX_STRATEGIES)
		return NULL;
	return vs_load_acquire(&strategies[strategy]);
}

int vs_fault_strategy_register(const struct vs_fault_strategy_ops *ops)
{
	int i, ret = -EBUSY;

	if (!ops || !ops->name || !*ops->name || !ops->fault)
		return -EINVAL;
	pthread_mutex_lock(&register_lock);
	if (vs_fault_strategy_parse(ops->name) >= 0)
		ret = -EEXIST;
	for (i = VS_FAULT_NR_STRATEGIES;
	     ret == -EBUSY && i < VS_FAULT_MAX_STRATEGIES; i++) {
		if (vs_read_once(&strategies[i]))
			continue;
		vs_store_release(&strategies[i], ops);
		ret = i;
	}
	pthread_mutex_unlock(&register_lock);
	return ret;
}

/* Before 6.4 (VS_VMA_LOCK_NONE) there is no per-VMA lock to fault
 * under.  Context: any. */
static bool strategy_supported(struct vs_mm *mm, int strategy)
{
	return strategy != VS_FAULT_PERVMA ||
	       mm->mech.vma_lock != VS_VMA_LOCK_NONE;
}

int vs_handle_mm_fault_as(struct vs_mm *mm, unsigned long addr,
			  unsigned int flags, int strategy)
{
	const struct vs_fault_strategy_ops *ops =
		vs_fault_strategy_ops(strategy);
	int ret;

	if (!mm || (flags & ~FAULT_FLAGS) || !ops)
		return -EINVAL;
	if (!strategy_supported(mm, strategy))
		return -EOPNOTSUPP;
	vs_mm_assert_unlocked(mm);
	/* The exception's entry and exit on a virtual CPU (vmsim/vcpu_annotate.h). */
	VS_VCPU_WORK(VS_VCPU_FAULT, NULL, 0);
	vs__mm_fault_enter(mm);
	vs_count_vm_event(VS_PGFAULT);
	if (addr < mm->start || addr >= mm->end)
		return fault_done(VS_VM_FAULT_SIGSEGV);
	/* A "fault" slice in a vCPU machine's trace, as in multi-fault's. */
	VS_VCPU_SPAN_BEGIN("fault", "fault", NULL, mm);
	ret = fault_done(ops->fault(mm, addr, flags));
	VS_VCPU_SPAN_END(mm);
	return ret;
}

int vs_handle_mm_fault(struct vs_mm *mm, unsigned long addr,
		       unsigned int flags)
{
	/* A NULL @mm reads as locked, and _as() refuses it. */
	return vs_handle_mm_fault_as(mm, addr, flags,
				     vs_mm_fault_strategy(mm));
}

int vs_mm_set_fault_strategy(struct vs_mm *mm, int strategy)
{
	if (!mm || !vs_fault_strategy_ops(strategy))
		return -EINVAL;
	if (!strategy_supported(mm, strategy))
		return -EOPNOTSUPP;
	vs_write_once(&mm->fault_strategy, (uint32_t)strategy);
	return 0;
}

int vs_mm_fault_strategy(struct vs_mm *mm)
{
	return mm ? (int)vs_read_once(&mm->fault_strategy) : VS_FAULT_LOCKED;
}

int vs_fault_strategy_parse(const char *name)
{
	const struct vs_fault_strategy_ops *ops;
	int i;

	for (i = 0; name && i < VS_FAULT_MAX_STRATEGIES; i++) {
		ops = vs_fault_strategy_ops(i);
		if (ops && strcmp(name, ops->name) == 0)
			return i;
	}
	return -EINVAL;
}

const char *vs_fault_strategy_name(int strategy)
{
	const struct vs_fault_strategy_ops *ops =
		vs_fault_strategy_ops(strategy);

	return ops ? ops->name : NULL;
}

const char *vs_spf_abort_name(int reason)
{
	if (reason < 0 || reason >= VS_SPF_ABORT_NR)
		return NULL;
	return abort_names[reason];
}

/* ---- counters ------------------------------------------------------------ */

/*
 * Exported, and inline here: the built-in strategies count on their
 * fast path, where the check of a constant @item folds away.
 */
inline int vs_count_vm_event(int item)
{
	unsigned int slot;

	if (item < 0 || item >= VS_NR_VM_EVENT_ITEMS)
		return -EINVAL;
	slot = vs__thread_slot();
	vs__slot_add(&fault_stats[slot].c[item], slot, 1);
	return 0;
}

static unsigned long stat_sum(int item)
{
	return (unsigned long)vs__slot_sum(&fault_stats[0].c[item],
					   sizeof(fault_stats[0]));
}

int vs_fault_stats_get(struct vs_fault_stats *st)
{
	int i;

	if (!st)
		return -EINVAL;
	st->faults = stat_sum(VS_PGFAULT);
	st->locked = stat_sum(VS_PGFAULT_LOCKED);
	st->spf_success = stat_sum(VS_SPF_SUCCESS);
	for (i = 0; i < VS_SPF_ABORT_NR; i++)
		st->spf_abort[i] = stat_sum(VS_SPF_ABORT_EVENT + i);
	st->vma_lock_success = stat_sum(VS_VMA_LOCK_SUCCESS);
	st->vma_lock_abort = stat_sum(VS_VMA_LOCK_ABORT);
	st->vma_lock_retry = stat_sum(VS_VMA_LOCK_RETRY);
	st->vma_lock_miss = stat_sum(VS_VMA_LOCK_MISS);
	st->sigsegv = stat_sum(VS_FAULT_SIGSEGV);
	st->sigbus = stat_sum(VS_FAULT_SIGBUS);
	st->oom = stat_sum(VS_FAULT_OOM);
	return 0;
}

int vs_fault_stats_sub(const struct vs_fault_stats *a,
		       const struct vs_fault_stats *b,
		       struct vs_fault_stats *res)
{
	int i;

	if (!a || !b || !res)
		return -EINVAL;
	res->faults = a->faults - b->faults;
	res->locked = a->locked - b->locked;
	res->spf_success = a->spf_success - b->spf_success;
	for (i = 0; i < VS_SPF_ABORT_NR; i++)
		res->spf_abort[i] = a->spf_abort[i] - b->spf_abort[i];
	res->vma_lock_success = a->vma_lock_success - b->vma_lock_success;
	res->vma_lock_abort = a->vma_lock_abort - b->vma_lock_abort;
	res->vma_lock_retry = a->vma_lock_retry - b->vma_lock_retry;
	res->vma_lock_miss = a->vma_lock_miss - b->vma_lock_miss;
	res->sigsegv = a->sigsegv - b->sigsegv;
	res->sigbus = a->sigbus - b->sigbus;
	res->oom = a->oom - b->oom;
	return 0;
}

void vs_fault_stats_reset(void)
{
	int s, i;

	for (s = 0; s < VS_SLOT_ARRAY; s++)
		for (i = 0; i < VS_NR_VM_EVENT_ITEMS; i++)
			vs_write_once(&fault_stats[s].c[i], 0);
}
