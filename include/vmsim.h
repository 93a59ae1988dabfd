/* SPDX-License-Identifier: MIT */
/*
 * vmsim.h - the public umbrella header.
 *
 * vmsim models the Linux VM fault path in user space.  Installed as
 * <vmsim/vmsim.h>, this header includes every public one.  Layers,
 * bottom up:
 *
 * - sync/: the locks the model stands on (sync/rwsem.h,
 *   sync/percpu_rwsem.h, sync/brlock.h, sync/prwlock.h, sync/spinlock.h,
 *   and sync/lock.h, which picks one at run time), sync/seqcount.h,
 *   RCU over liburcu (sync/rcu.h), thread slots (sync/thread.h), lock
 *   statistics (sync/lockstat.h), and the two seams for shared memory
 *   and blocking (sync/atomic.h, sync/wait.h);
 * - vm/: the address space (vm/mm.h: mm, VMAs, mmap and friends, fork),
 *   its VMA index (vm/vma_tree.h), page tables (vm/pgtable.h), pages
 *   (vm/page.h) and in-memory files (vm/file.h);
 * - fault/: the page fault and its strategies (fault/fault.h) and real
 *   memory whose faults the model resolves (fault/uffd.h).
 *
 * The stress run that checks a lock kind or strategy is test code, in
 * a library of its own (libvmsim-check) with a header of its own,
 * <vmsim/check/stress.h>, which this one does not include.
 *
 * Conventions.  A function that can fail returns a negative errno
 * (sync/error.h names them): its "Return" section says which, and its
 * "Context" section says what the caller must hold, or must not, and
 * whether it may sleep.  Names with a double underscore (vs__, VS__) are private to the
 * library and left out of this reference.  docs/ in the source tree
 * explains the design: docs/architecture.md, docs/locks.md, docs/vm.md,
 * docs/fault.md, docs/uffd.md, docs/testing.md.
 */
#ifndef VMSIM_H
#define VMSIM_H

#include "fault/fault.h"
#include "fault/memory.h"
#include "fault/uffd.h"
#include "sync/atomic.h"
#include "sync/brlock.h"
#include "sync/error.h"
#include "sync/lock.h"
#include "sync/lockdep.h"
#include "sync/lockstat.h"
#include "sync/percpu_rwsem.h"
#include "sync/prwlock.h"
#include "sync/rcu.h"
#include "sync/rwsem.h"
#include "sync/seqcount.h"
#include "sync/spinlock.h"
#include "sync/thread.h"
#include "sync/vcpu.h"
#include "sync/vcpu_cost.h"
#include "sync/vcpu_profile.h"
#include "sync/wait.h"
#include "vm/fail.h"
#include "vm/file.h"
#include "vm/mm.h"
#include "vm/page.h"
#include "vm/pgtable.h"
#include "vm/slab.h"
#include "vm/vma_tree.h"

#endif /* VMSIM_H */
