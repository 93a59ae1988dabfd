/* SPDX-License-Identifier: MIT */
/*
 * vmsim.h - the public umbrella header.
 *
 * vmsim models the Linux VM fault path in user space.  Layers, bottom
 * up: sync/ (locks, seqcounts, RCU, lock statistics), vm/ (the address
 * space: mm, VMAs, page tables, pages, mmap and friends), then fault/.  Installed as <vmsim/vmsim.h>.
 */
#ifndef VMSIM_H
#define VMSIM_H

#include "fault/fault.h"
#include "fault/stress.h"
#include "fault/uffd.h"
#include "sync/atomic.h"
#include "sync/brlock.h"
#include "sync/error.h"
#include "sync/lock.h"
#include "sync/lockstat.h"
#include "sync/percpu_rwsem.h"
#include "sync/prwlock.h"
#include "sync/rcu.h"
#include "sync/rwsem.h"
#include "sync/seqcount.h"
#include "sync/spinlock.h"
#include "sync/thread.h"
#include "sync/wait.h"
#include "vm/file.h"
#include "vm/mm.h"
#include "vm/page.h"
#include "vm/pgtable.h"
#include "vm/vma_tree.h"

#endif /* VMSIM_H */
