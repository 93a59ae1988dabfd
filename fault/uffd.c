/* SPDX-License-Identifier: MIT */
/*
 * fault/uffd.c - a userfaultfd region: open and probe, create and
 * destroy, and the resolution of one fault (vmsim/uffd.h).
 */
#include <vmsim/uffd.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vmsim/fail.h>
#include <vmsim/vcpu_annotate.h>
#include <vmsim/wait.h>

#include "uffd_internal.h"

/* Newer than Debian 12's headers (Linux 6.1); the ABI is fixed. */
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif
#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON (1 << 14)
struct uffdio_poison {
	struct uffdio_range range;
	__u64 mode;
	__s64 updated;
};
#define _UFFDIO_POISON (0x08)
#define UFFDIO_POISON _IOWR(UFFDIO, _UFFDIO_POISON, struct uffdio_poison)
#endif

#define PAGE VS_PAGE_SIZE

/* Features every mode needs, and the ones a mode adds. */
#define NEED_FEATURES UFFD_FEATURE_PAGEFAULT_FLAG_WP
#define WANT_FEATURES (UFFD_FEATURE_THREAD_ID | UFFD_FEATURE_POISON)

/* ---- open and probe --------------------------------------------------- */

/*
 * A new userfaultfd: the syscall in user mode (no privilege needed for
 * faults from user space), else /dev/userfaultfd.
 * Return: the fd, or -EPERM / -ENOSYS.
 */
static int uffd_open(void)
{
	int fd = (int)syscall(SYS_userfaultfd,
			      O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	int dev, err;

	if (fd >= 0)
		return fd;
	/* ENOSYS: no userfaultfd; EINVAL: no user mode (before 5.11). */
	err = errno == ENOSYS || errno == EINVAL ? -ENOSYS : -EPERM;
	dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return errno == EACCES || errno == EPERM ? -EPERM : err;
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
	close(dev);
	return fd >= 0 ? fd : err;
}

/* UFFDIO_API on @fd asking for @features; what it grants in *@granted. */
static int uffd_api(int fd, uint64_t features, uint64_t *granted)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };

	if (ioctl(fd, UFFDIO_API, &api))
		return errno == EPERM ? -EPERM : -ENOSYS;
	*granted = api.features;
	return 0;
}

int vs_uffd_probe(uint64_t *features)
{
	uint64_t f;
	int fd, err;

	fd = uffd_open();
	if (fd < 0)
		return fd;
	/* Features 0: the answer lists everything the kernel offers. */
	err = uffd_api(fd, 0, &f);
	close(fd);
	if (err)
		return err;
	if (features)
		*features = f;
	return (f & NEED_FEATURES) == NEED_FEATURES ? 0 : -ENOSYS;
}

/*
 * The region's own uffd, probed in two steps: what the kernel offers on
 * a throwaway fd, then exactly what this mode needs on the real one
 * (UFFDIO_API may be called once per fd).
 */
static int uffd_setup(struct vs_uffd *u)
{
	uint64_t offer, want;
	int err = vs_uffd_probe(&offer);

	if (err)
		return err;
	want = NEED_FEATURES | (offer & WANT_FEATURES);
	if (u->mode == VS_UFFD_SIGBUS) {
		if (!(offer & UFFD_FEATURE_SIGBUS))
			return -ENOSYS;
		want |= UFFD_FEATURE_SIGBUS;
	}
	u->uffd = uffd_open();
	if (u->uffd < 0)
		return u->uffd;
	err = uffd_api(u->uffd, want, &u->features);
	if (err)
		return err;
	return 0;
}

/* ---- create and destroy ---------------------------------------------- */

static int check_options(const struct vs_uffd_options *o)
{
	if (!o->size || (o->size & (PAGE - 1)) || o->size > (1UL << 40))
		return -EINVAL;
	if (o->mode < 0 || o->mode >= VS_UFFD_NR_MODES)
		return -EINVAL;
	if (o->mode == VS_UFFD_THREADS ?
		    o->nr_threads < 1 || o->nr_threads > VS_UFFD_MAX_THREADS :
		    o->nr_threads != 0)
		return -EINVAL;
	if (!vs_fault_strategy_name(o->strategy))
		return -EINVAL;
	/* The mm's own checks, before anything is opened. */
	if (o->mm.start || o->mm.end ||
	    (o->mm.lock_kind && !vs_lock_kind_ops(o->mm.lock_kind)) ||
	    o->mm.pool_pages > VS_PAGE_POOL_MAX_PAGES)
		return -EINVAL;
	return 0;
}

/*
 * Where a region goes on vCPUs while that place is free: the model's
 * page-table walks (the upper-level scans of vm/pgtable.c) then take the
 * same steps in every process, and a replayed schedule is the same run.
 */
#define VCPU_HINT ((void *)0x500000000000UL)

/*
 * Reserve the real range (PROT_NONE until the model maps something
 * there) and register it for missing and write-protect faults.  It
 * starts on a PMD boundary, so that the model's page tables lie the
 * same way over it wherever mmap put it.
 */
static int reserve(struct vs_uffd *u)
{
	struct uffdio_register reg = { 0 };
	size_t slack = VS_PMD_SIZE;
	char *p = mmap(VS_VCPU ? VCPU_HINT : NULL, u->size + slack,
		       PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	size_t head;

	if (p == MAP_FAILED)
		return -ENOMEM;
	head = (size_t)(-(uintptr_t)p & (slack - 1));
	if (head)
		(void)munmap(p, head);
	(void)munmap(p + head + u->size, slack - head);
	p += head;
	u->base = p;
	/* Base pages only: the model maps 4 KiB pages. */
	(void)madvise(p, u->size, MADV_NOHUGEPAGE);
	reg.range.start = (unsigned long)p;
	reg.range.len = u->size;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP;
	if (ioctl(u->uffd, UFFDIO_REGISTER, &reg))
		return errno == EPERM ? -EPERM : -ENOSYS;
	if (mprotect(p, u->size, PROT_NONE))
		return -ENOMEM;
	return 0;
}

/*
 * The mm over the reservation, with every page table in place and
 * fault_noalloc set: a fault in a signal handler allocates nothing but
 * pages (vmsim/uffd.h).
 */
static int make_mm(struct vs_uffd *u, const struct vs_uffd_options *o)
{
	struct vs_mm_options mo = o->mm;
	unsigned long a, start = (unsigned long)u->base;
	int err;

	mo.start = start;
	mo.end = start + u->size;
	err = vs_mm_create(&u->mm, &mo);
	if (err)
		return err;
	vs_mmap_write_lock(u->mm);
	u->mm->fault_noalloc = 1;
	for (a = start & ~(VS_PMD_SIZE - 1); a < mo.end && !err;
	     a += VS_PMD_SIZE)
		if (!vs_pte_alloc(&u->mm->pgtable, a))
			err = -ENOMEM;
	vs_mmap_write_unlock(u->mm);
	if (!err)
		err = vs_mm_set_fault_strategy(u->mm, o->strategy);
	if (!err)
		err = vs_mmu_notifier_register(u->mm, &u->mn);
	return err;
}

static void region_free(struct vs_uffd *u)
{
	if (u->mm) {
		(void)vs_mmu_notifier_unregister(u->mm, &u->mn);
		(void)vs_mm_destroy(u->mm);
	}
	if (u->uffd >= 0)
		close(u->uffd);	/* wakes every thread blocked on it */
	if (u->pagemap_fd >= 0)
		close(u->pagemap_fd);
	if (u->mem_fd >= 0)
		close(u->mem_fd);
	if (u->base)
		munmap(u->base, u->size);
	vs_vcpu_forget(u, sizeof(*u));	/* no longer anyone's allocation */
	free(u);
}

static struct vs_uffd *region_alloc(const struct vs_uffd_options *o)
{
	struct vs_uffd *u;

	/* The kernel's userfaultfd_ctx comes from a slab cache. */
	if (vs__fail_alloc(VS_FAIL_SLAB, "userfaultfd_ctx"))
		return NULL;
	u = aligned_alloc(VS_CACHELINE, sizeof(*u));
	if (!u)
		return NULL;
	memset(u, 0, sizeof(*u));
	/* Allocated here: on vCPUs under relaxed memory, a context that
	 * this does not happen before may not touch it (its slot's
	 * release publishes it, fault/uffd_deliver.c). */
	vs_vcpu_unpoison(u, sizeof(*u));
	u->mn.ops = &vs__uffd_mirror_ops;
	u->size = o->size;
	u->mode = o->mode;
	u->nr_threads = o->nr_threads;
	u->uffd = -1;
	u->stop_fd = -1;
	u->pagemap_fd = -1;
	u->mem_fd = -1;
	vs_spin_lock_init(&u->mmu_lock);
	vs_spin_lock_init(&u->inv_mutex);
	vs_lockdep_set_class(&u->mmu_lock, "uffd_mmu_lock");
	vs_lockdep_set_class(&u->inv_mutex, "uffd_inv_mutex");
	/* A mutex (6.18's mmu notifiers may sleep under it), not a
	 * spinlock: the notifier's end is called with it held. */
	vs_lockdep_set_sleeping(&u->inv_mutex);
	/* What a report of a run on vCPUs calls them. */
	vs_vcpu_name(u, sizeof(*u), "a uffd region");
	vs_vcpu_name(&u->mmu_lock, sizeof(u->mmu_lock), "a uffd mmu_lock");
	vs_vcpu_name(&u->inv_seq, sizeof(u->inv_seq), "a uffd inv_seq");
	vs_vcpu_name(&u->inv_in_progress, sizeof(u->inv_in_progress),
		     "a uffd inv_in_progress");
	vs_vcpu_name(&u->inv_mutex, sizeof(u->inv_mutex), "a uffd inv_mutex");
	vs_vcpu_name(u->stat, sizeof(u->stat), "uffd counters");
	vs_vcpu_name(u->tstat, sizeof(u->tstat), "uffd per-thread faults");
	return u;
}

int vs_uffd_create(struct vs_uffd **up, const struct vs_uffd_options *opt)
{
	struct vs_uffd_options o = { 0 };
	struct vs_uffd *u;
	int err;

	if (!up)
		return -EINVAL;
	if (opt)
		o = *opt;
	/* Handler threads and a loop would run outside the machine. */
	if (VS_VCPU && o.mode != VS_UFFD_SIGBUS)
		return -EOPNOTSUPP;
	o.size = o.size ? o.size : 64UL << 20;
	if (o.mode == VS_UFFD_THREADS && !o.nr_threads)
		o.nr_threads = 1;
	err = check_options(&o);
	if (err)
		return err;
	u = region_alloc(&o);
	if (!u)
		return -ENOMEM;
	err = uffd_setup(u);
	if (!err) {
		/* The mirror reads what real stores wrote through these. */
		u->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
		u->mem_fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
		if (u->pagemap_fd < 0 || u->mem_fd < 0)
			err = -ENOSYS;
	}
	if (!err)
		err = reserve(u);
	if (!err)
		err = make_mm(u, &o);
	if (!err && (err = vs__uffd_deliver_start(u)))
		vs__uffd_deliver_stop(u);	/* what did start */
	if (err) {
		region_free(u);
		return err;
	}
	*up = u;
	return 0;
}

int vs_uffd_destroy(struct vs_uffd *u)
{
	int err;

	if (!u)
		return -EINVAL;
	/*
	 * No handler may run on an mm being freed: stop delivery first.
	 * The mirror stays registered, so the unmapping empties the real
	 * range too.
	 */
	vs__uffd_deliver_stop(u);
	err = vs_mm_destroy(u->mm);
	if (err) {
		/* The mm stays, empty: so does the region, as it was. */
		(void)vs__uffd_deliver_start(u);
		return err;
	}
	u->mm = NULL;
	region_free(u);
	return 0;
}

struct vs_mm *vs_uffd_mm(struct vs_uffd *u)
{
	return u ? u->mm : NULL;
}

void *vs_uffd_base(struct vs_uffd *u)
{
	return u ? u->base : NULL;
}

size_t vs_uffd_size(struct vs_uffd *u)
{
	return u ? u->size : 0;
}

/* ---- names and counters ---------------------------------------------- */

static const char *const mode_names[VS_UFFD_NR_MODES] = {
	"sigbus", "threads", "uv"
};

int vs_uffd_mode_parse(const char *name)
{
	int i;

	for (i = 0; name && i < VS_UFFD_NR_MODES; i++)
		if (!strcmp(name, mode_names[i]))
			return i;
	return -EINVAL;
}

const char *vs_uffd_mode_name(int mode)
{
	return mode >= 0 && mode < VS_UFFD_NR_MODES ? mode_names[mode] : NULL;
}

static unsigned long stat_sum(struct vs_uffd *u, int what)
{
	return (unsigned long)vs__slot_sum(&u->stat[0].c[what],
					   sizeof(u->stat[0]));
}

int vs_uffd_stats_get(struct vs_uffd *u, struct vs_uffd_stats *st)
{
	unsigned long *out = (unsigned long *)st;
	int i;

	if (!u || !st)
		return -EINVAL;
	/* struct vs_uffd_stats lists the counters in enum order. */
	for (i = 0; i < VS__US_NR; i++)
		out[i] = stat_sum(u, i);
	return 0;
}

static int cmp_tstat(const void *a, const void *b)
{
	const struct vs_uffd_thread_stat *x = a, *y = b;

	return x->faults < y->faults ? 1 : x->faults > y->faults ? -1 : 0;
}

int vs_uffd_thread_stats(struct vs_uffd *u, struct vs_uffd_thread_stat *out,
			 int max)
{
	struct vs_uffd_thread_stat all[VS__UFFD_NR_TSTAT + 1];
	int i, n = 0;

	if (!u || !out || max < 0)
		return -EINVAL;
	for (i = 0; i <= VS__UFFD_NR_TSTAT; i++) {
		all[n].tid = (pid_t)vs_read_once(&u->tstat[i].tid);
		all[n].faults = (unsigned long)vs_read_once(
			&u->tstat[i].faults);
		if (all[n].faults)
			n++;
	}
	qsort(all, (size_t)n, sizeof(all[0]), cmp_tstat);
	n = n < max ? n : max;
	memcpy(out, all, (size_t)n * sizeof(all[0]));
	return n;
}

/* One fault of thread @tid: find or claim its entry (lock-free). */
static void count_thread(struct vs_uffd *u, pid_t tid)
{
	uint32_t id = (uint32_t)tid, h = id * 2654435761u, seen;
	struct vs__uffd_tstat *t;
	unsigned int i;

	for (i = 0; tid > 0 && i < VS__UFFD_NR_TSTAT; i++) {
		t = &u->tstat[(h + i) % VS__UFFD_NR_TSTAT];
		seen = 0;
		if (vs_read_once(&t->tid) == id ||
		    vs_cmpxchg(&t->tid, &seen, id) || seen == id) {
			vs_fetch_add_relaxed(&t->faults, 1);
			return;
		}
	}
	vs_fetch_add_relaxed(&u->tstat[VS__UFFD_NR_TSTAT].faults, 1);
}

/* ---- resolving one fault --------------------------------------------- */

void vs__uffd_wake(struct vs_uffd *u, unsigned long addr)
{
	struct uffdio_range r = { .start = addr, .len = PAGE };

	(void)ioctl(u->uffd, UFFDIO_WAKE, &r);
}

/*
 * The invalidation sequence to validate an install against, once no
 * invalidation is in progress.  Acquire: pairs with the release of the
 * mmu_lock in the mirror's invalidate_range_end, so the model changes
 * of that invalidation are seen by the fault that follows.
 */
static long inv_begin(struct vs_uffd *u)
{
	long seq;

	for (;;) {
		seq = vs_load_acquire(&u->inv_seq);
		if (!vs_load_acquire(&u->inv_in_progress))
			return seq;
		vs_yield();
	}
}

/*
 * The model's PTE at @addr: a reference on its page and whether it is
 * writable.  Return: 0, or -EAGAIN (no PTE: zapped since the fault).
 */
static int model_page(struct vs_uffd *u, unsigned long addr,
		      struct vs_page **pagep, int *writable)
{
	struct vs_mm *mm = u->mm;
	vs_spinlock_t *ptl;
	vs_atomic64_t *ptep;
	uint64_t v;
	int err = -EAGAIN;

	/* The walk may meet a table being freed: RCU keeps it. */
	vs_rcu_read_lock();
	ptep = vs_pte_offset_map_lock(&mm->pgtable, addr, &ptl);
	if (ptep) {
		v = vs_ptep_get(ptep);
		if (vs_pte_present(v)) {
			*pagep = vs_pfn_to_page(mm->pool, vs_pte_pfn(v));
			vs_get_page(*pagep);
			*writable = vs_pte_write(v);
			err = 0;
		}
		vs_pte_unmap_unlock(ptl);
	}
	vs_rcu_read_unlock();
	return err;
}

/*
 * install_syscall - the entry of an installing ioctl, on a vCPU: an
 * event where the scheduler may run another vCPU first, as other CPUs
 * run while a real one enters the kernel (the real ioctl is no event:
 * without this one nothing could run between the mmu_lock check and
 * the install), and, with a profile, its "syscall" cycles (a system
 * call's entry and exit, vmsim/vcpu_profile.h), which a munmap pays
 * too (vs__mm_syscall()).  Nothing natively.
 * Context: mmu_lock held.
 */
static void install_syscall(struct vs_uffd *u)
{
	vs_lockdep_assert_held(&u->mmu_lock);
	if (VS_VCPU && vs_vcpu_self() >= 0)
		vs_yield();
	VS_VCPU_WORK(VS_VCPU_SYSCALL, NULL, 0);
}

/*
 * UFFDIO_COPY of @page's contents; EEXIST wakes, EAGAIN retries.
 * Context: mmu_lock held.
 */
static int install_copy(struct vs_uffd *u, unsigned long addr,
			struct vs_page *page, int writable)
{
	struct uffdio_copy c;

	for (;;) {
		install_syscall(u);
		c.dst = addr;
		c.src = (unsigned long)page->data;
		c.len = PAGE;
		c.mode = writable ? 0 : UFFDIO_COPY_MODE_WP;
		c.copy = 0;
		if (!ioctl(u->uffd, UFFDIO_COPY, &c)) {
			vs__uffd_count(u, VS__US_COPIES);
			if (!writable)
				vs__uffd_count(u, VS__US_WP_COPIES);
			return 0;
		}
		if (errno == EEXIST) {
			/* The kernel does not wake after a failed copy. */
			vs__uffd_count(u, VS__US_EEXIST);
			vs__uffd_wake(u, addr);
			return 0;
		}
		if (errno != EAGAIN)
			return -errno;
		vs__uffd_count(u, VS__US_EAGAIN);
	}
}

/*
 * Lift the write protection of a present page (and wake).
 * Context: mmu_lock held.
 */
static int install_unprotect(struct vs_uffd *u, unsigned long addr)
{
	struct uffdio_writeprotect wp = { { addr, PAGE }, 0 };

	for (;;) {
		install_syscall(u);
		if (!ioctl(u->uffd, UFFDIO_WRITEPROTECT, &wp))
			break;
		if (errno != EAGAIN)
			return -errno;
		vs__uffd_count(u, VS__US_EAGAIN);
	}
	vs__uffd_count(u, VS__US_UNPROTECTS);
	return 0;
}

/*
 * Map the model's page at @addr into real memory, unless an
 * invalidation began after @seq was sampled.
 * Return: 0; -EAGAIN to resolve again; -ESRCH; another ioctl error.
 */
static int install(struct vs_uffd *u, unsigned long addr, int write, int wp,
		   long seq)
{
	struct vs_page *page = NULL;	/* GCC 12 cannot tell it is set */
	int outside = VS_BROKEN(uffd_install_outside_mmu_lock);
	int writable, err;

	err = model_page(u, addr, &page, &writable);
	if (err)
		return err;
	if (write && !writable) {
		vs_put_page(u->mm->pool, page);
		return -EAGAIN;	/* write-protected again since */
	}
	vs_spin_lock(&u->mmu_lock);
	err = !VS_BROKEN(uffd_install_no_seq) &&
	      (vs_read_once(&u->inv_in_progress) ||
	       vs_read_once(&u->inv_seq) != seq) ? -EAGAIN : 0;
	/* The planted bug: the check under mmu_lock, the install after
	 * it, where a whole invalidation (its zap of the real page) may
	 * run between the two. */
	if (outside)
		vs_spin_unlock(&u->mmu_lock);
	if (!err)
		err = wp ? install_unprotect(u, addr) :
			   install_copy(u, addr, page, writable);
	if (!outside)
		vs_spin_unlock(&u->mmu_lock);
	vs_put_page(u->mm->pool, page);
	return err;
}

void vs__uffd_poison(struct vs_uffd *u, unsigned long addr)
{
	struct uffdio_poison p = { { addr & VS_PAGE_MASK, PAGE }, 0, 0 };

	if (!(u->features & UFFD_FEATURE_POISON) ||
	    ioctl(u->uffd, UFFDIO_POISON, &p))
		vs__uffd_wake(u, addr);
}

int vs__uffd_resolve(struct vs_uffd *u, unsigned long addr, int write,
		     int wp, pid_t tid)
{
	unsigned int flags = VS_FAULT_FLAG_USER |
			     (write || wp ? VS_FAULT_FLAG_WRITE : 0);
	long seq;
	int r, err;

	vs_mm_assert_unlocked(u->mm);
	addr &= VS_PAGE_MASK;
	vs__uffd_count(u, VS__US_FAULTS);
	if (wp)
		vs__uffd_count(u, VS__US_WP_FAULTS);
	count_thread(u, tid);
	for (;;) {
		seq = inv_begin(u);
		r = vs_handle_mm_fault(u->mm, addr, flags);
		if (r & VS_VM_FAULT_SIGSEGV) {
			vs__uffd_count(u, VS__US_SIGSEGV);
			return VS_VM_FAULT_SIGSEGV;
		}
		if (r < 0 || (r & (VS_VM_FAULT_SIGBUS | VS_VM_FAULT_OOM))) {
			vs__uffd_count(u, VS__US_SIGBUS);
			return VS_VM_FAULT_SIGBUS;
		}
		err = install(u, addr, write || wp, wp, seq);
		if (err != -EAGAIN)
			return err == -ESRCH ? err : 0;
		vs__uffd_count(u, VS__US_RACED);
	}
}
