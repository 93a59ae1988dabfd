/* SPDX-License-Identifier: MIT */
/*
 * vmsim/kernel.h - which Linux kernel the model follows: its batch sizes
 * and the cycles of its instruction work, step by step.
 *
 * A kernel profile is a text file, profiles/linux-VERSION.kernel, in the
 * format of the machine profiles (vmsim/vcpu_profile.h): one
 * "key = value" a line, '#' comments.  The shipped ones (6.18, the
 * default, 6.4 and 3.18) are built into the library, so a name needs no
 * file at run time; an argument with a '/' is read as a path.
 * vs_mm_options.kernel picks one for an mm and its page pool; so do the
 * tools' --kernel and, in tests, $VMSIM_KERNEL.  docs/vcpu.md ("The
 * kernel's work") gives every key and its source.
 *
 * A profile also names the mechanisms the model follows (struct
 * vs_kernel_mech): the per-VMA lock, how munmap and MADV_DONTNEED lock,
 * and the rest of docs/vm.md's table of kernel versions.
 *
 * The batch sizes shape vm/'s data structures in every build; the
 * cycles are charged on vCPUs only (VS_VCPU_KERNEL), as the kernel's own
 * instructions, which vmsim's code does not execute.
 */
#ifndef VMSIM_KERNEL_H
#define VMSIM_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"

#define VS_KERNEL_NAME_MAX 31	/* the longest version name */
#define VS_KERNEL_DEFAULT "6.18" /* the version when nothing says */

/**
 * enum vs_kernel_step - the kernel's instruction work, one key each
 * @VS_KSTEP_FAULT: a page fault's handler, entry to the PTE's handler
 *	(do_page_fault ... handle_pte_fault), locks and trap excluded
 * @VS_KSTEP_ANON: do_anonymous_page's own work: charge, rmap, LRU add
 *	call, set_pte; allocation, clear and locks excluded
 * @VS_KSTEP_ALLOC: an order-0 allocation from the per-CPU list
 * @VS_KSTEP_FREE: an order-0 free to the per-CPU list
 * @VS_KSTEP_REFILL: one page moved from the buddy lists to a per-CPU
 *	list, under zone->lock (rmqueue_bulk)
 * @VS_KSTEP_DRAIN: one page moved from a per-CPU list back to the buddy
 *	lists, under zone->lock (free_pcppages_bulk, __free_one_page)
 * @VS_KSTEP_LRU_ADD: one page added to an LRU list from a per-CPU batch
 * @VS_KSTEP_ZAP_PTE: one present PTE zapped (zap_pte_range's loop body)
 * @VS_KSTEP_RELEASE: one page in release_pages (LRU removal, uncharge)
 * @VS_KSTEP_TLB_LOCAL: the flush of this CPU's whole TLB at a flush point
 * @VS_KSTEP_TLB_PAGE: the flush of one page's entry (invlpg), for a
 *	range of at most tlb_single_page_ceiling pages
 * @VS_KSTEP_TLB_IPI: the flush handler on a CPU the flush interrupts
 * @VS_KSTEP_IPI_SEND: the sender's work for each CPU it interrupts
 * @VS_KSTEP_SYSCALL_MM: a VM system call's fixed work (madvise, mmap,
 *	munmap, mprotect, mremap): finding the VMAs, the gather's setup
 * @VS_KSTEP_NR: the number of steps
 */
enum vs_kernel_step {
	VS_KSTEP_FAULT,
	VS_KSTEP_ANON,
	VS_KSTEP_ALLOC,
	VS_KSTEP_FREE,
	VS_KSTEP_REFILL,
	VS_KSTEP_DRAIN,
	VS_KSTEP_LRU_ADD,
	VS_KSTEP_ZAP_PTE,
	VS_KSTEP_RELEASE,
	VS_KSTEP_TLB_LOCAL,
	VS_KSTEP_TLB_PAGE,
	VS_KSTEP_TLB_IPI,
	VS_KSTEP_IPI_SEND,
	VS_KSTEP_SYSCALL_MM,
	VS_KSTEP_NR,
};

/**
 * enum vs_kernel_rss - how an mm counts its resident pages
 * @VS_RSS_TASK_EVENTS: per task, folded into the mm's shared counters
 *	every rss_threshold events, and a zap adds to them directly (3.18's
 *	SPLIT_RSS_COUNTING, TASK_RSS_EVENTS_THRESH)
 * @VS_RSS_PERCPU: a percpu_counter each, folded into the mm's count when
 *	a CPU's share reaches rss_threshold (6.2 on)
 */
enum vs_kernel_rss {
	VS_RSS_TASK_EVENTS,
	VS_RSS_PERCPU,
};

/**
 * enum vs_kernel_memcg - where the memory cgroup keeps a page's owner
 * @VS_MEMCG_PAGE_CGROUP: a 16-byte struct page_cgroup per page in an
 *	array of its own, four a cache line (3.18)
 * @VS_MEMCG_DATA: page->memcg_data, in the page's own line (5.x on)
 */
enum vs_kernel_memcg {
	VS_MEMCG_PAGE_CGROUP,
	VS_MEMCG_DATA,
};

/**
 * enum vs_kernel_vma_lock - the per-VMA lock a fault may take instead of
 * the mmap_lock
 * @VS_VMA_LOCK_NONE: none: every fault takes the mmap_lock (before 6.4;
 *	vmsim keeps vm_lock_seq's mark for the speculative strategy)
 * @VS_VMA_LOCK_RWSEM: an rw_semaphore per VMA, vm_lock_seq checked under
 *	it (6.4 to 6.14: vma_start_read() with down_read_trylock)
 * @VS_VMA_LOCK_REFCNT: vm_refcnt: 0 detached, 1 attached, one more a
 *	reader, VMA_LOCK_OFFSET more a writer, who waits on
 *	mm->vma_writer_wait (6.15 on)
 */
enum vs_kernel_vma_lock {
	VS_VMA_LOCK_NONE,
	VS_VMA_LOCK_RWSEM,
	VS_VMA_LOCK_REFCNT,
};

/**
 * struct vs_kernel_mech - the mechanisms a kernel version has, one key
 * each; docs/vm.md ("Kernel versions") gives each version's
 * @vma_lock: enum vs_kernel_vma_lock (key "vma_lock": "none", "rwsem",
 *	"refcnt")
 * @vma_typesafe: 1: a freed VMA goes back to its cache at once and may
 *	be reused while a lockless reader holds its pointer, which
 *	rechecks vm_mm and the range (SLAB_TYPESAFE_BY_RCU, 6.15 on); 0:
 *	freed after a grace period (key "vma_cache": "rcu", "typesafe")
 * @mm_lock_seqcount: 1: mm_lock_seq is a seqcount, odd while the
 *	mmap_lock is write-held, with mmap_lock_speculate_try_begin()
 *	(6.13 on); 0: a counter advanced at write unlock (key
 *	"mm_lock_seq": "counter", "seqcount")
 * @dontneed_vma_lock: 1: MADV_DONTNEED of a range inside one VMA runs
 *	under that VMA's lock (6.17 on); 0: under mmap_lock read (key
 *	"dontneed_lock": "mmap", "vma")
 * @munmap_downgrade: 1: munmap, brk and mremap's shrink downgrade the
 *	mmap_lock to read before the zap and free_pgtables() (4.20 on)
 *	(key "munmap_downgrade")
 * @pt_reclaim: 1: a MADV_DONTNEED zap that empties a PTE page frees it
 *	(CONFIG_PT_RECLAIM, 6.14 on) (key "pt_reclaim")
 * @anon_prepare_trylock: 1: a fault under the VMA lock that needs an
 *	anon_vma tries the mmap_lock for read and retries only if that
 *	fails (vmf_anon_prepare(), 6.8 on); 0: it always retries (key
 *	"anon_prepare": "retry", "trylock")
 * @fork_lock_all: 1: dup_mmap() write-locks every VMA of the parent
 *	(6.5, and 6.4.y from its stable fix); 0: only those whose PTEs it
 *	copies, which vmsim's spf needs (key "fork_lock_all")
 * @cow_refcount: 1: do_wp_page() decides reuse by the page's reference
 *	count, under the PTL (5.9 on); 0: by its mapcount (key
 *	"cow_reuse": "mapcount", "refcount")
 */
struct vs_kernel_mech {
	enum vs_kernel_vma_lock vma_lock;
	uint32_t vma_typesafe;
	uint32_t mm_lock_seqcount;
	uint32_t dontneed_vma_lock;
	uint32_t munmap_downgrade;
	uint32_t pt_reclaim;
	uint32_t anon_prepare_trylock;
	uint32_t fork_lock_all;
	uint32_t cow_refcount;
};

/**
 * struct vs_kernel - a kernel profile
 * @name: its version (key "version")
 * @pcp_batch: pages a per-CPU list takes from or gives back to the buddy
 *	lists at once (key "pcp_batch")
 * @pcp_high: the most pages a per-CPU list keeps (key "pcp_high")
 * @pcp_high_fraction: 0, or the share of a zone that its CPUs' lists
 *	may hold together: a list keeps at most zone / fraction / CPUs of
 *	the node, and at least 4 x pcp_batch (6.18's zone_highsize() with
 *	MIN_PERCPU_PAGELIST_HIGH_FRACTION; key "pcp_high_fraction")
 * @lru_batch: pages a CPU gathers before adding them to the LRU (key
 *	"lru_batch": a pagevec or folio_batch)
 * @lru_lock_batch: pages release_pages() frees under one hold of the LRU
 *	lock (key "lru_lock_batch": SWAP_CLUSTER_MAX)
 * @vmstat_threshold_max: the most a per-CPU vmstat diff holds before it
 *	is folded (key "vmstat_threshold_max"; the threshold itself comes
 *	from the CPUs and the zone's size, see vs_kernel_vmstat_threshold())
 * @rss: how RSS is counted (key "rss": "task-events" or "percpu")
 * @rss_threshold: events (task-events) or pages (percpu; 0: the kernel's
 *	max(32, 2 x CPUs)) before a fold (key "rss_threshold")
 * @memcg: where the memcg owner of a page is (key "memcg":
 *	"page_cgroup" or "memcg_data")
 * @gather_local: pages the mmu_gather holds in itself (key
 *	"gather_local")
 * @gather_batch: pages a batch page of the gather holds (key
 *	"gather_batch")
 * @gather_batches: the most batch pages before a forced flush (key
 *	"gather_batches")
 * @tlb_single_page_ceiling: the most pages flushed one by one; more
 *	flush the whole TLB (key "tlb_single_page_ceiling")
 * @dontneed_drains_lru: 1 when MADV_DONTNEED first adds this CPU's LRU
 *	batch to the LRU, as 3.18's zap_page_range() does (key
 *	"dontneed_drains_lru"; munmap always does)
 * @mech: the mechanisms the model follows (struct vs_kernel_mech)
 * @cycles: each step's cycles (keys "cycles_fault", "cycles_anon", ...)
 */
struct vs_kernel {
	char name[VS_KERNEL_NAME_MAX + 1];
	uint32_t pcp_batch;
	uint32_t pcp_high;
	uint32_t pcp_high_fraction;
	uint32_t lru_batch;
	uint32_t lru_lock_batch;
	uint32_t vmstat_threshold_max;
	enum vs_kernel_rss rss;
	uint32_t rss_threshold;
	enum vs_kernel_memcg memcg;
	uint32_t gather_local;
	uint32_t gather_batch;
	uint32_t gather_batches;
	uint32_t tlb_single_page_ceiling;
	uint32_t dontneed_drains_lru;
	struct vs_kernel_mech mech;
	uint32_t cycles[VS_KSTEP_NR];
};

/** VS_KERNEL_LRU_BATCH_MAX - the largest lru_batch a profile may set */
#define VS_KERNEL_LRU_BATCH_MAX 64
/** VS_KERNEL_GATHER_LOCAL_MAX - the largest gather_local */
#define VS_KERNEL_GATHER_LOCAL_MAX 64
/** VS_KERNEL_GATHER_BATCHES_MAX - the largest gather_batches */
#define VS_KERNEL_GATHER_BATCHES_MAX 32

/**
 * vs_kernel_load - read the kernel profile @name_or_path into @k
 * @k: filled on success
 * @name_or_path: a version built in ("6.18", "6.4", "3.18") or a path (with a
 *	'/'); NULL: $VMSIM_KERNEL, else VS_KERNEL_DEFAULT
 * @err: a message on failure, naming the bad line and key (may be NULL)
 * @errlen: its size
 *
 * Context: any.
 * Return: 0; -EINVAL for NULL @k or a malformed profile; -ENOENT for an
 * unknown version or a path that cannot be read.
 */
VS_EXTERN int vs_kernel_load(struct vs_kernel *k, const char *name_or_path,
			     char *err, size_t errlen);

/**
 * vs_kernel_parse - parse a kernel profile's text
 * @k: filled on success
 * @text: the profile, NUL-terminated
 * @err, @errlen: as vs_kernel_load()
 *
 * Context: any.
 * Return: 0, or -EINVAL with @err saying which line and key.
 */
VS_EXTERN int vs_kernel_parse(struct vs_kernel *k, const char *text,
			      char *err, size_t errlen);

/**
 * vs_kernel_mech_write - write @m as a kernel profile's mechanism lines
 * @f: the stream
 * @m: the mechanisms, valid (as vs_kernel_parse() leaves them)
 *
 * One "key = value" line a key of struct vs_kernel_mech, in the words
 * vs_kernel_parse() reads back.
 *
 * Context: any.
 * Return: 0; -EINVAL for a NULL argument; -EIO if @f reports an error.
 */
VS_EXTERN int vs_kernel_mech_write(FILE *f, const struct vs_kernel_mech *m);

/**
 * vs_kernel_versions - the built-in versions, space-separated
 *
 * Context: any.
 * Return: a static string, e.g. "6.18 6.4 3.18".
 */
VS_EXTERN const char *vs_kernel_versions(void);

/**
 * vs_kernel_vmstat_threshold - the per-CPU vmstat threshold of a zone
 * @k: the kernel
 * @cpus: online CPUs
 * @zone_pages: pages the zone manages
 *
 * calculate_normal_threshold() of mm/vmstat.c: 2 x fls(cpus) x
 * (1 + fls(the zone's size in 128 MiB units)), at most
 * @k->vmstat_threshold_max.
 * Context: any.
 * Return: the threshold, at least 1.
 */
VS_EXTERN uint32_t vs_kernel_vmstat_threshold(const struct vs_kernel *k,
					      unsigned int cpus,
					      size_t zone_pages);

#endif /* VMSIM_KERNEL_H */
