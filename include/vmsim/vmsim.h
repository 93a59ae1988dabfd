/* SPDX-License-Identifier: MIT */
/*
 * vmsim.h - the public umbrella header.
 *
 * vmsim models the Linux VM fault path in user space.  Installed as
 * <vmsim/vmsim.h>, this header includes the API of the model, one
 * header per area, bottom up:
 *
 * - the locks the model stands on: vmsim/rwsem.h, vmsim/percpu_rwsem.h,
 *   vmsim/brlock.h, vmsim/prwlock.h, vmsim/spinlock.h, and vmsim/lock.h,
 *   which picks one at run time; vmsim/seqcount.h; RCU over liburcu
 *   (vmsim/rcu.h); thread slots (vmsim/thread.h); lock statistics
 *   (vmsim/lockstat.h); errors (vmsim/error.h); and the two seams for
 *   shared memory and blocking (vmsim/atomic.h, vmsim/wait.h);
 * - the address space (vmsim/mm.h: mm, VMAs, mmap and friends, fork),
 *   its VMA index (vmsim/vma_tree.h), page tables (vmsim/pgtable.h),
 *   pages (vmsim/page.h), object caches (vmsim/slab.h), in-memory files
 *   (vmsim/file.h) and fault injection (vmsim/fail.h);
 * - the page fault and its strategies (vmsim/fault.h, with the building
 *   blocks of a strategy in vmsim/memory.h), real memory whose faults
 *   the model resolves (vmsim/uffd.h), and fault workloads run on
 *   threads or vCPUs with a measured phase (vmsim/workload.h).
 *
 * Not included, each for the programs that need it: the virtual-CPU
 * engine (vmsim/vcpu.h: machines, schedulers, replay), its cost model
 * and machine profiles (vmsim/vcpu_cost.h, vmsim/vcpu_profile.h), its
 * trace writer (vmsim/trace.h), lockdep's own API (vmsim/lockdep.h),
 * and the test library's
 * <vmsim/check/stress.h> and <vmsim/check/explore.h> (libvmsim-check).
 * What code tells the engine and lockdep about itself
 * (vmsim/vcpu_annotate.h, vmsim/lockdep_annotate.h) comes in with the
 * headers above, which use it.
 *
 * Conventions.  A function that can fail returns a negative errno
 * (vmsim/error.h names them): its "Return" section says which, and its
 * "Context" section says what the caller must hold, or must not, and
 * whether it may sleep.  Names with a double underscore (vs__, VS__)
 * are private to the library and left out of this reference.  docs/ in
 * the source tree explains the design; docs/README.md is its index.
 */
#ifndef VMSIM_H
#define VMSIM_H

#include "atomic.h"
#include "brlock.h"
#include "error.h"
#include "fail.h"
#include "fault.h"
#include "file.h"
#include "lock.h"
#include "lockstat.h"
#include "memory.h"
#include "mm.h"
#include "page.h"
#include "percpu_rwsem.h"
#include "pgtable.h"
#include "prwlock.h"
#include "rcu.h"
#include "rwsem.h"
#include "seqcount.h"
#include "slab.h"
#include "spinlock.h"
#include "thread.h"
#include "uffd.h"
#include "vma_tree.h"
#include "wait.h"
#include "workload.h"

#endif /* VMSIM_H */
