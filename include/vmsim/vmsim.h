/* SPDX-License-Identifier: MIT */
/*
 * vmsim.h - the public umbrella header.
 *
 * vmsim models the Linux VM fault path in user space.  Installed as
 * <vmsim/vmsim.h>, this header includes every public one.  Layers,
 * bottom up:
 *
 * - sync/: the locks the model stands on (vmsim/rwsem.h,
 *   vmsim/percpu_rwsem.h, vmsim/brlock.h, vmsim/prwlock.h, vmsim/spinlock.h,
 *   and vmsim/lock.h, which picks one at run time), vmsim/seqcount.h,
 *   RCU over liburcu (vmsim/rcu.h), thread slots (vmsim/thread.h), lock
 *   statistics (vmsim/lockstat.h), and the two seams for shared memory
 *   and blocking (vmsim/atomic.h, vmsim/wait.h);
 * - vm/: the address space (vmsim/mm.h: mm, VMAs, mmap and friends, fork),
 *   its VMA index (vmsim/vma_tree.h), page tables (vmsim/pgtable.h), pages
 *   (vmsim/page.h) and in-memory files (vmsim/file.h);
 * - fault/: the page fault and its strategies (vmsim/fault.h) and real
 *   memory whose faults the model resolves (vmsim/uffd.h).
 *
 * The stress run that checks a lock kind or strategy is test code, in
 * a library of its own (libvmsim-check) with a header of its own,
 * <vmsim/check/stress.h>, which this one does not include.
 *
 * Conventions.  A function that can fail returns a negative errno
 * (vmsim/error.h names them): its "Return" section says which, and its
 * "Context" section says what the caller must hold, or must not, and
 * whether it may sleep.  Names with a double underscore (vs__, VS__) are private to the
 * library and left out of this reference.  docs/ in the source tree
 * explains the design: docs/architecture.md, docs/locks.md, docs/vm.md,
 * docs/fault.md, docs/uffd.md, docs/testing.md.
 */
#ifndef VMSIM_H
#define VMSIM_H

#include "fault.h"
#include "memory.h"
#include "uffd.h"
#include "atomic.h"
#include "brlock.h"
#include "error.h"
#include "lock.h"
#include "lockdep.h"
#include "lockstat.h"
#include "percpu_rwsem.h"
#include "prwlock.h"
#include "rcu.h"
#include "rwsem.h"
#include "seqcount.h"
#include "spinlock.h"
#include "thread.h"
#include "vcpu.h"
#include "vcpu_cost.h"
#include "vcpu_profile.h"
#include "wait.h"
#include "fail.h"
#include "file.h"
#include "mm.h"
#include "page.h"
#include "pgtable.h"
#include "slab.h"
#include "vma_tree.h"

#endif /* VMSIM_H */
