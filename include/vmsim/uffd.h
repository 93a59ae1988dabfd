/* SPDX-License-Identifier: MIT */
/*
 * vmsim/uffd.h - real memory whose page faults the model resolves.
 *
 * vs_uffd_create() reserves a range of real memory, makes a vs_mm whose
 * address space is exactly that range (a model address is the real
 * address), and registers the range with a userfaultfd (MISSING and WP
 * modes).  Loads and stores by any thread then fault into the model:
 *
 *   1. the kernel reports a missing page (or a write to a page installed
 *      write-protected) to the delivery mode;
 *   2. vs_handle_mm_fault() resolves it with the mm's strategy;
 *   3. the model's PTE says what to install: UFFDIO_COPY of the page the
 *      model holds (zeros, anonymous data, page-cache data), write-
 *      protected (UFFDIO_COPY_MODE_WP) unless the model's PTE is
 *      writable, or, for a write fault on a present page, UFFDIO_
 *      WRITEPROTECT to lift the protection.
 *
 * The real range is a secondary MMU of the model, kept coherent the way
 * KVM keeps its page tables coherent with mmu notifiers (vmsim/mm.h,
 * struct vs_mmu_notifier): before the model zaps, moves or (at fork)
 * write-protects PTEs, the real pages are zapped (MADV_DONTNEED) or
 * write-protected; a protection change (mmap, mprotect, munmap) reaches
 * the real range right after the model's; and what real stores put
 * there is first copied back into
 * the model's pages where they outlive the zap (shared file pages, a
 * mremap move, a fork).  A fault that raced such an invalidation is
 * resolved again (an invalidation sequence, checked under a lock taken
 * around each install).  The real protection of every page follows the
 * model's VMAs (PROT_NONE where the model has no VMA), so a model
 * SIGSEGV reaches the faulting thread as a real SIGSEGV with si_addr
 * set (si_code SEGV_ACCERR, also for a hole).  A model SIGBUS (a file
 * page beyond EOF) or OOM is a real SIGBUS at that address: in sigbus
 * mode the handler passes the very signal on (below); in the other
 * modes a poison entry (UFFDIO_POISON, Linux 6.6) raises it, until the
 * page is zapped (si_code BUS_MCEERR_AR where the kernel has
 * CONFIG_MEMORY_FAILURE, else BUS_ADRERR).
 *
 * Delivery modes:
 *
 *   sigbus   UFFD_FEATURE_SIGBUS: the faulting thread's SIGBUS handler
 *            resolves its own fault.  The handler calls no malloc and no
 *            stdio; the model's locks it takes cannot be held by the
 *            thread it interrupted, because vmsim never touches a
 *            missing page of the range (see Context below).  Every
 *            thread that touches the range calls vs_thread_attach()
 *            first; one that did not is reported on stderr (write(2))
 *            and aborted, since registering with RCU is not async-
 *            signal-safe.  SIGBUS signals that are not a fault of a
 *            vs_uffd range, and those the model refuses, go to the
 *            handler that was installed when the first sigbus region
 *            was created (SIG_DFL: the process dies of SIGBUS); the
 *            last sigbus region's destroy puts it back.
 *   threads  @nr_threads handler threads block in poll(2) on the uffd
 *            and read up to 64 events at a time; the faulting thread
 *            sleeps in the kernel until its page is installed and woken.
 *            UFFD_FEATURE_THREAD_ID names the faulting thread.
 *   uv       a libuv loop on its own thread polls the uffd (uv_poll) and
 *            resolves events on the loop thread.
 *
 * Context (all modes): a thread must not touch the range while it holds
 * a lock of the mm (vs_mmap_read_lock() ...) or is inside
 * vs_rcu_read_lock(): the fault needs them, as copy_to_user() under
 * mmap_lock deadlocks in the kernel.  The kernel's own accesses to a
 * page of the range that is not present (futex(2) on a lock word there,
 * read(2) into it) fail with EFAULT: a UFFD_USER_MODE_ONLY uffd handles
 * user-mode faults only, and sigbus mode never waits.  vs_fork() of the
 * mm is supported: the child is a model-only mm (no real memory) that
 * sees what the parent's real stores wrote before the fork.  Real
 * stores reach the model's pages only when the mirror writes them back
 * (docs/uffd.md): vs_read() of a page still mapped in real memory may
 * see older data.
 *
 * When userfaultfd cannot be had, vs_uffd_create() returns -EPERM
 * (vm.unprivileged_userfaultfd=0 without CAP_SYS_PTRACE, /dev/userfaultfd
 * not readable, a seccomp filter) or -ENOSYS (no userfaultfd, or a
 * feature this needs is missing); vs_strerror() of either says what to
 * do.
 */
#ifndef VMSIM_UFFD_H
#define VMSIM_UFFD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common.h"
#include "mm.h"

/**
 * enum vs_uffd_mode - how faults are delivered (see the modes above)
 * @VS_UFFD_SIGBUS: the faulting thread's SIGBUS handler resolves them
 * @VS_UFFD_THREADS: handler threads poll the uffd
 * @VS_UFFD_UV: a libuv loop thread polls the uffd
 * @VS_UFFD_NR_MODES: the number of modes
 */
enum vs_uffd_mode {
	VS_UFFD_SIGBUS,
	VS_UFFD_THREADS,
	VS_UFFD_UV,
	VS_UFFD_NR_MODES
};

/** VS_UFFD_MAX_THREADS - handler threads in threads mode: at most this many */
#define VS_UFFD_MAX_THREADS 64

/**
 * struct vs_uffd_options - vs_uffd_create() settings; zero means default
 * @size: bytes of real memory to reserve, a multiple of the page size;
 *        default 64 MiB
 * @mode: enum vs_uffd_mode (default sigbus)
 * @nr_threads: handler threads in threads mode, 1..VS_UFFD_MAX_THREADS;
 *              default 1; must be 0 in the other modes
 * @strategy: the mm's fault strategy (vmsim/fault.h), default locked
 * @mm: the mm's settings; @mm.start and @mm.end must be 0, since the
 *      reservation decides them
 */
struct vs_uffd_options {
	size_t size;
	int mode;
	unsigned int nr_threads;
	int strategy;
	struct vs_mm_options mm;
};

/**
 * struct vs_uffd_stats - what the handlers did
 * @faults: fault events handled (missing and write-protect)
 * @wp_faults: of which write-protect faults
 * @copies: pages installed with UFFDIO_COPY
 * @wp_copies: of which installed write-protected
 * @unprotects: UFFDIO_WRITEPROTECT calls that lifted a protection
 * @eexist: UFFDIO_COPY found the page present (then UFFDIO_WAKE)
 * @eagain: UFFDIO_COPY or WRITEPROTECT said EAGAIN (retried)
 * @raced: faults resolved again because an invalidation ran meanwhile
 * @sigsegv: faults the model refused with SIGSEGV
 * @sigbus: faults the model refused with SIGBUS or OOM (poisoned)
 * @invalidations: model invalidations mirrored onto the real range
 * @writebacks: pages copied back from real memory into the model
 */
struct vs_uffd_stats {
	unsigned long faults;
	unsigned long wp_faults;
	unsigned long copies;
	unsigned long wp_copies;
	unsigned long unprotects;
	unsigned long eexist;
	unsigned long eagain;
	unsigned long raced;
	unsigned long sigsegv;
	unsigned long sigbus;
	unsigned long invalidations;
	unsigned long writebacks;
};

/**
 * struct vs_uffd_thread_stat - faults of one faulting thread
 * @tid: its thread ID; 0 for the threads beyond the 64 told apart
 * @faults: fault events it caused
 */
struct vs_uffd_thread_stat {
	pid_t tid;
	unsigned long faults;
};

struct vs_uffd;

/**
 * vs_uffd_probe - can this process use userfaultfd, with what it needs?
 * @features: if not NULL, receives the kernel's UFFD_FEATURE_* bits
 *
 * Opens a throwaway userfaultfd (userfaultfd(2) with UFFD_USER_MODE_ONLY,
 * else /dev/userfaultfd) and asks UFFDIO_API what it offers.
 *
 * Context: any thread; not a signal handler.
 * Return: 0; -EPERM or -ENOSYS as above.
 */
VS_EXTERN int vs_uffd_probe(uint64_t *features);

/**
 * vs_uffd_create - reserve real memory, make its mm, start delivery
 * @up: receives the region
 * @opt: settings, or NULL for the defaults
 *
 * In sigbus mode the first region installs the process's SIGBUS handler
 * (and the last one's destroy restores the previous one).  The range
 * starts on a 2 MiB boundary.
 *
 * In the vCPU build (vmsim/vcpu.h) the model's side runs on the vCPUs:
 * the mirror's invalidations, and a fault's resolution in the SIGBUS
 * handler of the vCPU whose real access faulted (the handler may give
 * that vCPU to another context before it returns; SIGBUS is not blocked
 * meanwhile).  A real load or store is no event of the machine: the
 * scheduler places it where the event before it is.  The explore_uffd
 * suite explores both protocols so.  The handler threads and the loop
 * of the other modes would run outside the machine: only sigbus mode
 * is accepted there.
 *
 * Context: any thread; not a signal handler.
 * Return: 0; -EINVAL for a NULL @up, a bad size, mode, thread count,
 * strategy or mm setting; -EPERM, -ENOSYS as above; -ENOMEM; -EBUSY when
 * VS_UFFD_MAX_REGIONS regions exist; -EOPNOTSUPP for the threads or uv
 * mode in the vCPU build.
 */
VS_EXTERN int vs_uffd_create(struct vs_uffd **up,
			     const struct vs_uffd_options *opt);

/** VS_UFFD_MAX_REGIONS - regions that may exist at once */
#define VS_UFFD_MAX_REGIONS 16

/**
 * vs_uffd_destroy - stop delivery, free the mm and the real memory
 * @u: the region
 *
 * Wakes any thread still blocked on the uffd; its access then completes
 * on the kernel's own zero page and must not matter any more.
 *
 * Context: no thread touches the range any more.
 * Return: 0; -EINVAL for NULL; -EBUSY if the mm's pages are still held
 * elsewhere (a vs_file of its pool, as vs_mm_destroy() says): every
 * mapping is gone, but the region stays and works; call again once
 * they are released.
 */
VS_EXTERN int vs_uffd_destroy(struct vs_uffd *u);

/**
 * vs_uffd_mm - the region's mm
 * @u: the region
 *
 * Its address range is the real range: a model address is the real
 * address.  It lives until vs_uffd_destroy() succeeds.
 *
 * Context: any.
 * Return: the mm, or NULL for a NULL @u.
 */
VS_EXTERN struct vs_mm *vs_uffd_mm(struct vs_uffd *u);

/**
 * vs_uffd_base - where the real range starts
 * @u: the region
 *
 * Context: any.
 * Return: the first address of the range, or NULL for a NULL @u.
 */
VS_EXTERN void *vs_uffd_base(struct vs_uffd *u);

/**
 * vs_uffd_size - how long the real range is
 * @u: the region
 *
 * Context: any.
 * Return: its size in bytes, or 0 for a NULL @u.
 */
VS_EXTERN size_t vs_uffd_size(struct vs_uffd *u);

/**
 * vs_uffd_stats_get - the region's counters
 * @u: the region
 * @st: receives the counters
 *
 * Context: any thread; a snapshot while faults are handled.
 * Return: 0, -EINVAL for NULL.
 */
VS_EXTERN int vs_uffd_stats_get(struct vs_uffd *u, struct vs_uffd_stats *st);

/**
 * vs_uffd_thread_stats - faults per faulting thread, most first
 * @u: the region
 * @out: receives up to @max entries
 * @max: the room in @out
 *
 * The TIDs come from UFFD_FEATURE_THREAD_ID (threads and uv modes) or
 * gettid() in the faulting thread (sigbus mode; on vCPUs every context
 * runs on the one host thread, so all its faults count under one TID).
 * Up to 64 threads are
 * told apart; the rest count under TID 0.
 *
 * Context: any thread; a snapshot while faults are handled.
 * Return: the number of entries written; -EINVAL for NULL or a negative
 * @max.
 */
VS_EXTERN int vs_uffd_thread_stats(struct vs_uffd *u,
				   struct vs_uffd_thread_stat *out, int max);

/**
 * vs_uffd_mode_parse - "sigbus", "threads" or "uv" to its value
 * @name: the mode's name
 *
 * Context: any.
 * Return: the mode, or -EINVAL for NULL or an unknown name.
 */
VS_EXTERN int vs_uffd_mode_parse(const char *name);

/**
 * vs_uffd_mode_name - the name of a delivery mode
 * @mode: enum vs_uffd_mode
 *
 * Context: any.
 * Return: a static string, or NULL for an unknown value.
 */
VS_EXTERN const char *vs_uffd_mode_name(int mode);

#endif /* VMSIM_UFFD_H */
