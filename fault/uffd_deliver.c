/* SPDX-License-Identifier: MIT */
/*
 * fault/uffd_deliver.c - how faults reach vs__uffd_resolve(): in the
 * faulting thread's SIGBUS handler, on handler threads, or on a libuv
 * loop (vmsim/uffd.h).
 */
#include <errno.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "uffd_internal.h"

/* ---- sigbus: the faulting thread resolves its own fault -------------- */

/*
 * Every region (VS_UFFD_MAX_REGIONS at most), for the SIGBUS handler
 * to find sigbus regions by address.  A slot is taken in taken[] under
 * regions_lock, then the region is published in regions[] by a release
 * store; the handler reads regions[] with acquire loads, lock-free, so
 * that a region it finds is seen whole (its fields, its mm, its
 * counters).  regions[] uses the seam's atomics (vmsim/atomic.h): on
 * vCPUs under relaxed memory the engine checks that pairing (a region
 * touched by a context that its allocation does not happen before is an
 * "unpublished object").  regions_lock is a host mutex, so no seam
 * event may happen under it: a context switched out holding it would
 * block a second context of the same host thread for ever.  The stores
 * to regions[] are made outside it, on a slot that taken[] keeps.
 */
static VS_ATOMIC(struct vs_uffd *) regions[VS_UFFD_MAX_REGIONS];
static struct vs_uffd *taken[VS_UFFD_MAX_REGIONS]; /* under regions_lock */
static pthread_mutex_t regions_lock = PTHREAD_MUTEX_INITIALIZER;
static int nr_sigbus;			/* under regions_lock */
static struct sigaction old_sigbus;	/* written under regions_lock
					 * before the handler is installed */

struct vs_uffd *vs__uffd_region_at(int slot)
{
	/* Acquire: pairs with region_add()'s release.  The planted bug
	 * loads the slot relaxed: the region may be touched before its
	 * allocation and setup are seen. */
	if (VS_BROKEN(uffd_region_relaxed_lookup))
		return vs_read_once(&regions[slot]);
	return vs_load_acquire(&regions[slot]);
}

/* The sigbus region holding @addr, or NULL.  Context: any, signals too. */
static struct vs_uffd *region_of(unsigned long addr)
{
	struct vs_uffd *u;
	int i;

	for (i = 0; i < VS_UFFD_MAX_REGIONS; i++) {
		u = vs__uffd_region_at(i);
		if (u && u->mode == VS_UFFD_SIGBUS &&
		    addr - (unsigned long)u->base < u->size)
			return u;
	}
	return NULL;
}

/* Not a fault of ours: the handler that was there before, or death. */
static void chain(int sig, siginfo_t *info, void *ctx)
{
	if (old_sigbus.sa_flags & SA_SIGINFO) {
		old_sigbus.sa_sigaction(sig, info, ctx);
	} else if (old_sigbus.sa_handler != SIG_DFL &&
		   old_sigbus.sa_handler != SIG_IGN) {
		old_sigbus.sa_handler(sig);
	} else {
		/* The default action: at once where SIGBUS is not blocked
		 * (SA_NODEFER), else once we return. */
		signal(SIGBUS, SIG_DFL);
		raise(SIGBUS);
	}
}

static void die_unattached(unsigned long addr)
{
	static const char msg[] = "vmsim: a thread touched a vs_uffd region "
				  "without vs_thread_attach(); aborting\n";

	(void)addr;
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	abort();
}

/*
 * Was it a write, and on a present page (a write-protect fault)?  The
 * x86 page-fault error code says (bit 1: write, bit 0: present); else a
 * present page means a write-protect fault, and a missing one is taken
 * as a read (a write then faults again, write-protected).
 */
static void fault_kind(struct vs_uffd *u, unsigned long addr, void *ctx,
		       int *write, int *wp)
{
#if defined(__x86_64__)
	long err = ((ucontext_t *)ctx)->uc_mcontext.gregs[REG_ERR];

	(void)u;
	(void)addr;
	*write = (err & 2) != 0;
	*wp = (err & 1) != 0;
#else
	uint64_t pm = 0;

	(void)ctx;
	(void)!pread(u->pagemap_fd, &pm, sizeof(pm),
		     (off_t)(addr / VS_PAGE_SIZE * sizeof(pm)));
	*wp = *write = (pm >> 63) & 1;
#endif
}

static void on_sigbus(int sig, siginfo_t *info, void *ctx)
{
	unsigned long addr = (unsigned long)info->si_addr;
	int saved = errno, write, wp;
	struct vs_uffd *u;

	u = info->si_code == BUS_ADRERR ? region_of(addr) : NULL;
	if (!u) {
		chain(sig, info, ctx);
	} else {
		/* On vCPUs every context is attached (vmsim/thread.h). */
		if (!VS_VCPU && vs__tls_slot < 0)
			die_unattached(addr);
		fault_kind(u, addr, ctx, &write, &wp);
		/* A model SIGSEGV: the retried access meets the real
		 * protection, which the mirror set before the writer let
		 * this fault in.  A model SIGBUS is this very signal. */
		if (vs__uffd_resolve(u, addr, write, wp,
				     (pid_t)syscall(SYS_gettid)) ==
		    VS_VM_FAULT_SIGBUS)
			chain(sig, info, ctx);
	}
	errno = saved;
}

/* The first sigbus region installs the handler.  Under regions_lock. */
static int sigbus_get(void)
{
	struct sigaction sa;

	if (nr_sigbus++)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	/* On vCPUs a handler may give its vCPU to another context, whose
	 * store then faults in turn, with the first handler not returned:
	 * SIGBUS must stay unblocked (a blocked one kills the process). */
	if (VS_VCPU)
		sa.sa_flags |= SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (!sigaction(SIGBUS, &sa, &old_sigbus))
		return 0;
	nr_sigbus--;
	return -errno;
}

/*
 * Enter @u in the table (and install the handler for a sigbus one).
 * Context: regions_lock not held.
 */
static int region_add(struct vs_uffd *u)
{
	int i, err = -EBUSY;

	pthread_mutex_lock(&regions_lock);
	for (i = 0; i < VS_UFFD_MAX_REGIONS; i++) {
		if (taken[i])
			continue;
		err = u->mode == VS_UFFD_SIGBUS ? sigbus_get() : 0;
		if (!err)
			taken[i] = u;
		break;
	}
	pthread_mutex_unlock(&regions_lock);
	if (err)
		return err;
	/* Release: the region whole before its slot, for the handler's
	 * acquire (vs__uffd_region_at()). */
	vs_store_release(&regions[i], u);
	return 0;
}

/*
 * Take @u out of the table; the last sigbus region puts the previous
 * handler back.  Its slot is emptied before it is given back, so that
 * the next region's release is the slot's newest store.
 * Context: regions_lock not held; no handler runs on @u any more.
 */
static void region_del(struct vs_uffd *u)
{
	int i;

	pthread_mutex_lock(&regions_lock);
	for (i = 0; i < VS_UFFD_MAX_REGIONS && taken[i] != u; i++)
		;
	pthread_mutex_unlock(&regions_lock);
	if (i == VS_UFFD_MAX_REGIONS)
		return;
	/* Relaxed: an empty slot publishes nothing. */
	vs_write_once(&regions[i], NULL);
	pthread_mutex_lock(&regions_lock);
	taken[i] = NULL;
	if (u->mode == VS_UFFD_SIGBUS && !--nr_sigbus)
		(void)sigaction(SIGBUS, &old_sigbus, NULL);
	pthread_mutex_unlock(&regions_lock);
}

/* ---- events read from the uffd (threads and uv) ---------------------- */

/*
 * Read up to VS__UFFD_MSGS events and resolve them.
 * Return: 0 (none left now, or some handled), or -ESRCH.
 */
static int handle_events(struct vs_uffd *u)
{
	struct uffd_msg msg[VS__UFFD_MSGS];
	ssize_t n = read(u->uffd, msg, sizeof(msg));
	unsigned long addr;
	int i, err = 0;

	for (i = 0; i < n / (ssize_t)sizeof(msg[0]) && err != -ESRCH; i++) {
		if (msg[i].event != UFFD_EVENT_PAGEFAULT)
			continue;
		addr = (unsigned long)msg[i].arg.pagefault.address;
		err = vs__uffd_resolve(
			u, addr,
			!!(msg[i].arg.pagefault.flags &
			   UFFD_PAGEFAULT_FLAG_WRITE),
			!!(msg[i].arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP),
			(pid_t)msg[i].arg.pagefault.feat.ptid);
		/* The retried access of a SIGSEGV meets the real
		 * protection (as in on_sigbus()). */
		if (err == VS_VM_FAULT_SIGSEGV)
			vs__uffd_wake(u, addr);
		else if (err == VS_VM_FAULT_SIGBUS)
			vs__uffd_poison(u, addr);
	}
	return err == -ESRCH ? err : 0;
}

/* ---- threads: blocking handler threads ------------------------------- */

static void *handler_main(void *arg)
{
	struct vs_uffd *u = arg;
	struct pollfd p[2] = { { u->uffd, POLLIN, 0 },
			       { u->stop_fd, POLLIN, 0 } };

	(void)vs_thread_attach();
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents || (p[0].revents & (POLLERR | POLLHUP)))
			break;
		if ((p[0].revents & POLLIN) && handle_events(u) == -ESRCH)
			break;
	}
	vs_thread_detach();
	return NULL;
}

static int threads_start(struct vs_uffd *u)
{
	unsigned int i;
	int err;

	u->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (u->stop_fd < 0)
		return -ENOMEM;
	for (i = 0; i < u->nr_threads; i++) {
		err = pthread_create(&u->threads[i], NULL, handler_main, u);
		if (err) {
			u->nr_threads = i;
			return -err;
		}
	}
	return 0;
}

static void threads_stop(struct vs_uffd *u)
{
	uint64_t one = 1;
	unsigned int i;

	if (u->stop_fd < 0)
		return;
	(void)!write(u->stop_fd, &one, sizeof(one));
	for (i = 0; i < u->nr_threads; i++)
		pthread_join(u->threads[i], NULL);
	close(u->stop_fd);
	u->stop_fd = -1;
}

/* ---- uv: a libuv loop on its own thread ------------------------------ */

static void on_readable(uv_poll_t *h, int status, int events)
{
	struct vs_uffd *u = h->data;

	(void)events;
	if (status < 0 || handle_events(u) == -ESRCH)
		uv_poll_stop(h);
}

static void on_stop(uv_async_t *h)
{
	struct vs_uffd *u = h->data;

	uv_close((uv_handle_t *)&u->poll, NULL);
	uv_close((uv_handle_t *)&u->stop_async, NULL);
}

static void *loop_main(void *arg)
{
	struct vs_uffd *u = arg;

	(void)vs_thread_attach();
	(void)uv_run(&u->loop, UV_RUN_DEFAULT);
	vs_thread_detach();
	return NULL;
}

static int uv_start(struct vs_uffd *u)
{
	int err = uv_loop_init(&u->loop);

	if (err)
		return -ENOMEM;
	u->poll.data = u;
	u->stop_async.data = u;
	if (uv_poll_init(&u->loop, &u->poll, u->uffd) ||
	    uv_async_init(&u->loop, &u->stop_async, on_stop) ||
	    uv_poll_start(&u->poll, UV_READABLE, on_readable)) {
		uv_loop_close(&u->loop);
		return -ENOMEM;
	}
	err = pthread_create(&u->threads[0], NULL, loop_main, u);
	if (err) {
		on_stop(&u->stop_async);
		(void)uv_run(&u->loop, UV_RUN_DEFAULT);
		uv_loop_close(&u->loop);
		return -err;
	}
	u->nr_threads = 1;
	return 0;
}

static void uv_stop_loop(struct vs_uffd *u)
{
	if (!u->nr_threads)
		return;
	uv_async_send(&u->stop_async);
	pthread_join(u->threads[0], NULL);
	uv_loop_close(&u->loop);
	u->nr_threads = 0;
}

/* ---- start and stop --------------------------------------------------- */

int vs__uffd_deliver_start(struct vs_uffd *u)
{
	int err = region_add(u);

	if (err)
		return err;
	if (u->mode == VS_UFFD_THREADS)
		err = threads_start(u);
	else if (u->mode == VS_UFFD_UV)
		err = uv_start(u);
	return err;
}

void vs__uffd_deliver_stop(struct vs_uffd *u)
{
	if (u->mode == VS_UFFD_THREADS)
		threads_stop(u);
	else if (u->mode == VS_UFFD_UV)
		uv_stop_loop(u);
	region_del(u);
}
