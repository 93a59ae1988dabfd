/* SPDX-License-Identifier: MIT */
/*
 * uffd-floor - what vmsim's userfaultfd backing (vmsim/uffd.h) costs
 * over the smallest correct userfaultfd handler, in the multi-fault loop.
 *
 * Both run the same loop on real memory, the library's
 * (vs_workload_run() of vmsim/workload.h): each faulting task stores one
 * byte to every page of its own 2 MiB slice (one userfault per page),
 * zaps the slice with MADV_DONTNEED, and goes round again until
 * --duration is over.  The floor resolves each fault with one
 * UFFDIO_COPY of a zero page and nothing else: from the faulting
 * thread's SIGBUS handler (sigbus mode) or from one handler thread that
 * poll()s and read()s the uffd (threads mode).  vmsim resolves it in
 * the model (vs_handle_mm_fault()) and installs what the model's PTE
 * says, with one handler thread in threads mode, and zaps through the
 * model (vs_madvise()), which mirrors the zap onto the real slice.
 *
 * Every row is measured once a round, --repeat rounds (floor, vmsim,
 * floor, vmsim, ... for each mode and thread count), each on a fresh
 * region, so that slow drift in the machine's load hits all alike; the
 * ratio vmsim / floor is taken within each round.  docs/man/uffd-floor.1 says what
 * each number means.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <linux/userfaultfd.h>
#include <uv.h>

#include <vmsim/vmsim.h>
#include "bench_kernel.h"
#include "bench_loop.h"

#define EVENT_BATCH 64		/* uffd_msg per read() of the handler */
#define MAX_ROWS (NR_IMPLS * VS_UFFD_NR_MODES * BENCH_MAX_COLS)
#define TARGET_RATIO 0.8	/* vmsim / floor faults/s, at least */

enum impl { I_FLOOR, I_VMSIM, NR_IMPLS };

static const char *const impl_name[NR_IMPLS] = { "floor", "vmsim" };

static struct {
	bool mode[VS_UFFD_NR_MODES];	/* never VS_UFFD_UV: no floor */
	int strategy;		/* vmsim's */
	const char *kernel;	/* --kernel; NULL: vmsim's default */
} opt = {
	.strategy = VS_FAULT_LOCKED,
};

/* The first 2 MiB boundary at or above @a: each slice gets a PTE page
 * (and in the model a PTL) of its own. */
static unsigned long slice_align(unsigned long a)
{
	return (a + BENCH_SLICE_BYTES - 1) & ~(BENCH_SLICE_BYTES - 1);
}

/* ---- the floor: the smallest correct handler ------------------------ */

/*
 * The floor's region; one at a time.  The main thread writes it before
 * any faulting or handler thread starts (pthread_create() orders that)
 * and clears it after they are joined; the SIGBUS handler reads it.
 */
static struct {
	int uffd;
	int stop_fd;		/* threads mode: an eventfd ends the handler */
	bool handler_running;
	pthread_t handler;
	char *map;		/* the mmap(), a slice larger than needed */
	size_t map_len;
	unsigned long start, end;	/* the registered range */
} fl = { .uffd = -1, .stop_fd = -1 };

static const char zero_page[VS_PAGE_SIZE]
	__attribute__((aligned(VS_PAGE_SIZE)));

/* A call of the handler failed that cannot fail in a sound run, and
 * without it a faulting thread would fault (or sleep) forever.  write(2)
 * is all a signal handler may print with. */
static _Noreturn void floor_die(const char *what)
{
	static const char pre[] = "uffd-floor: floor: ";
	static const char post[] = " failed\n";

	(void)!write(2, pre, sizeof(pre) - 1);
	(void)!write(2, what, strlen(what));
	(void)!write(2, post, sizeof(post) - 1);
	abort();
}

/*
 * floor_copy - install a zero page at @addr's page
 * @wake: a faulter sleeps on the page (threads mode): wake it
 *
 * EAGAIN (the mm changed under the copy) is retried.  EEXIST means the
 * page is there already (a repeated event); a faulter may still sleep
 * on it, so it is woken.  In sigbus mode nothing sleeps: DONTWAKE
 * spares the kernel's look at the wait queues.
 * Context: async-signal-safe.
 */
static void floor_copy(unsigned long addr, bool wake)
{
	struct uffdio_copy c = {
		.dst = addr & ~(VS_PAGE_SIZE - 1),
		.src = (unsigned long)zero_page,
		.len = VS_PAGE_SIZE,
		.mode = wake ? 0 : UFFDIO_COPY_MODE_DONTWAKE,
	};
	struct uffdio_range r = { .start = c.dst, .len = VS_PAGE_SIZE };

	while (ioctl(fl.uffd, UFFDIO_COPY, &c)) {
		if (errno == EEXIST) {
			if (wake && ioctl(fl.uffd, UFFDIO_WAKE, &r))
				floor_die("UFFDIO_WAKE");
			return;
		}
		if (errno != EAGAIN)
			floor_die("UFFDIO_COPY");
		c.copy = 0;
	}
}

/*
 * sigbus mode: with UFFD_FEATURE_SIGBUS the kernel raises SIGBUS in the
 * faulting thread instead of queueing an event; installing the page and
 * returning retries the store.  A SIGBUS outside the floor's range (a
 * vs_uffd region passes on those it does not own) is a real one: the
 * default action, and the retried access kills the process.
 */
static void floor_sigbus(int sig, siginfo_t *si, void *uc)
{
	unsigned long a = (unsigned long)si->si_addr;
	int saved = errno;

	(void)uc;
	if (a >= fl.start && a < fl.end)
		floor_copy(a, false);
	else
		signal(sig, SIG_DFL);
	errno = saved;
}

/*
 * threads mode: the one handler thread.  It sleeps in poll() on the uffd
 * and the stop eventfd, reads up to EVENT_BATCH events and resolves each
 * page fault; the faulting thread sleeps in the kernel until
 * UFFDIO_COPY wakes it.  The uffd is O_NONBLOCK: a read() that finds
 * nothing says EAGAIN.
 */
static void *floor_handler(void *arg)
{
	struct uffd_msg msg[EVENT_BATCH];
	struct pollfd pfd[2] = {
		{ .fd = fl.uffd, .events = POLLIN },
		{ .fd = fl.stop_fd, .events = POLLIN },
	};
	ssize_t n, i;

	(void)arg;
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno != EINTR)
				floor_die("poll");
			continue;
		}
		if (pfd[1].revents)
			return NULL;
		n = read(fl.uffd, msg, sizeof(msg));
		if (n < 0 && errno != EAGAIN)
			floor_die("read");
		for (i = 0; i < n / (ssize_t)sizeof(msg[0]); i++)
			if (msg[i].event == UFFD_EVENT_PAGEFAULT)
				floor_copy(msg[i].arg.pagefault.address, true);
	}
}

static uint64_t floor_features(int mode)
{
	return mode == VS_UFFD_SIGBUS ? UFFD_FEATURE_SIGBUS : 0;
}

/*
 * floor_open - a userfaultfd with @features: userfaultfd(2) for user-mode
 * faults only (what an unprivileged process may get), else
 * /dev/userfaultfd.
 * Return: the fd; -EPERM or -ENOSYS, the errors of vs_uffd_probe().
 */
static int floor_open(uint64_t features)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	int flags = O_CLOEXEC | O_NONBLOCK;
	int fd, dev, err;

	fd = (int)syscall(SYS_userfaultfd, flags | UFFD_USER_MODE_ONLY);
	if (fd < 0) {
		err = errno;
		dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
		fd = dev < 0 ? -1 : ioctl(dev, USERFAULTFD_IOC_NEW, flags);
		if (dev >= 0)
			close(dev);
		if (fd < 0)
			return err == ENOSYS ? -ENOSYS : -EPERM;
	}
	if (ioctl(fd, UFFDIO_API, &api)) {
		close(fd);
		return -ENOSYS;	/* no such feature */
	}
	return fd;
}

/* Undo floor_setup(), however far it got. */
static void floor_teardown(void)
{
	uint64_t one = 1;

	if (fl.handler_running) {
		if (write(fl.stop_fd, &one, sizeof(one)) != sizeof(one))
			floor_die("eventfd write");
		pthread_join(fl.handler, NULL);
		fl.handler_running = false;
	}
	if (fl.stop_fd >= 0)
		close(fl.stop_fd);
	if (fl.uffd >= 0)
		close(fl.uffd);	/* unregisters the range */
	if (fl.map)
		munmap(fl.map, fl.map_len);
	fl.stop_fd = fl.uffd = -1;
	fl.map = NULL;
	fl.start = fl.end = 0;
}

/* threads mode: the stop eventfd and the handler thread. */
static int floor_start_handler(void)
{
	int err;

	fl.stop_fd = eventfd(0, EFD_CLOEXEC);
	if (fl.stop_fd < 0)
		return -errno;
	err = pthread_create(&fl.handler, NULL, floor_handler, NULL);
	if (err)
		return -err;
	fl.handler_running = true;
	return 0;
}

/*
 * floor_setup - @nr slices of real memory from a 2 MiB boundary,
 * registered for missing faults with a uffd of @mode, and the handler
 * thread in threads mode.  MADV_NOHUGEPAGE: with THP "always" a fault
 * on an empty PMD would allocate and free a 2 MiB page before the
 * userfault is even raised.
 * Return: 0 and *@base, or a negative errno and the name of the step.
 */
static int floor_setup(int mode, unsigned int nr, unsigned long *base,
		       const char **what)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	int fd;

	*what = "mmap";
	fl.map_len = (nr + 1) * BENCH_SLICE_BYTES;
	fl.map = mmap(NULL, fl.map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (fl.map == MAP_FAILED) {
		fl.map = NULL;
		return -errno;
	}
	fl.start = slice_align((unsigned long)fl.map);
	fl.end = fl.start + nr * BENCH_SLICE_BYTES;
	madvise((void *)fl.start, fl.end - fl.start, MADV_NOHUGEPAGE);
	*what = "userfaultfd";
	fd = floor_open(floor_features(mode));
	if (fd < 0)
		return fd;
	fl.uffd = fd;
	*what = "UFFDIO_REGISTER";
	reg.range.start = fl.start;
	reg.range.len = fl.end - fl.start;
	if (ioctl(fl.uffd, UFFDIO_REGISTER, &reg))
		return -errno;
	*base = fl.start;
	*what = "handler thread";
	return mode == VS_UFFD_THREADS ? floor_start_handler() : 0;
}

/* The floor's SIGBUS handler, for the whole run: a vs_uffd region in
 * sigbus mode installs its own over it and restores it when destroyed. */
static int floor_sigaction(void)
{
	struct sigaction sa = {
		.sa_sigaction = floor_sigbus,
		.sa_flags = SA_SIGINFO,
	};

	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, NULL) ? -errno : 0;
}

/* ---- the workload: each task its own slice, no barrier -------------- */

/*
 * uffd-floor's loop, as a workload of vmsim/workload.h that
 * vs_workload_run() runs, the same for both implementations: faulting
 * task i stores one byte to every page of slice i (one userfault each:
 * the zap left no page) and zaps the slice itself, with no barrier and
 * no serial phase (faultbench's loop; not the built-in "multi-fault",
 * where task 0 zaps every slice between passes).  The zap is part of a
 * pass.  The floor runs on the host backing (a store and madvise(2) on
 * real memory: its own region, which its handler serves); vmsim on the
 * userfaultfd backing, whose region vs_workload_run() makes (one
 * handler thread in threads mode, as the floor) and whose zap goes
 * through the model (vs_madvise()), which mirrors it onto real memory.
 */

/* The measurement under way: the callbacks' (one at a time). */
static struct {
	enum impl impl;
	int mode;
	unsigned int nr;	/* faulting tasks, a slice each */
	unsigned long base;	/* slice i at base + i * BENCH_SLICE_BYTES */
} cur;

/* The slices, and one more to align them. */
static size_t uf_footprint(const struct vs_workload *w, size_t *pages)
{
	*pages = w->cfg.nr_tasks * BENCH_SLICE_PAGES;
	return (w->cfg.nr_tasks + 1) * BENCH_SLICE_BYTES;
}

/*
 * vmsim_map - one private anonymous VMA of @nr slices from a 2 MiB
 * boundary in the run's region: a slice more is mapped, and what lies
 * outside the slices unmapped again.
 * Return: 0 and *@base, or a negative errno.
 */
static int vmsim_map(struct vs_workload *w, unsigned int nr,
		     unsigned long *base)
{
	size_t len = nr * BENCH_SLICE_BYTES;
	long a = vs_workload_mmap(w, w->mm, len + BENCH_SLICE_BYTES, false);
	int err = 0;

	if (a < 0)
		return (int)a;
	*base = slice_align((unsigned long)a);
	if (*base > (unsigned long)a)
		err = vs_workload_munmap(w, w->mm, (unsigned long)a,
					 *base - (unsigned long)a);
	if (!err)
		err = vs_workload_munmap(w, w->mm, *base + len,
					 (unsigned long)a + BENCH_SLICE_BYTES -
					 *base);
	return err;
}

/*
 * The region of cur.impl, warmed up: one round over every slice, by the
 * calling thread, so that the timed passes find the model's page
 * tables and anon_vma in place.  A failure is reported.
 */
static int uf_setup(struct vs_workload *w)
{
	const char *what = "vs_mmap";
	unsigned long a, s;
	unsigned int i;
	int err;

	if (cur.impl == I_FLOOR)
		err = floor_setup(cur.mode, cur.nr, &cur.base, &what);
	else
		err = vmsim_map(w, cur.nr, &cur.base);
	what = err ? what : "warm-up round";
	for (i = 0; i < cur.nr && !err; i++) {
		s = cur.base + i * BENCH_SLICE_BYTES;
		for (a = s; a < s + BENCH_SLICE_BYTES; a += VS_PAGE_SIZE)
			*(volatile char *)a = 1;
		err = vs_workload_zap(w, w->mm, s, BENCH_SLICE_BYTES);
	}
	if (err)
		fprintf(stderr, "uffd-floor: %s %s: %s: %s\n",
			impl_name[cur.impl], vs_uffd_mode_name(cur.mode), what,
			vs_strerror(err));
	return err;
}

static int uf_pass(struct vs_workload_task *t)
{
	unsigned long s = cur.base + t->id * BENCH_SLICE_BYTES;
	int err = vs_workload_touch_range(t, s, BENCH_SLICE_BYTES);

	return err ? err : vs_workload_zap(t->w, t->mm, s, BENCH_SLICE_BYTES);
}

/* The floor's region is the tool's; vmsim's goes with the run. */
static void uf_teardown(struct vs_workload *w)
{
	(void)w;
	if (cur.impl == I_FLOOR)
		floor_teardown();
}

static const struct vs_workload_ops uffd_floor_ops = {
	.name = "uffd-floor",
	.about = "store to every page of your own slice, zap it; no barrier",
	.bytes = BENCH_SLICE_BYTES,
	.footprint = uf_footprint,
	.setup = uf_setup,
	.pass = uf_pass,
	.teardown = uf_teardown,
};

/* ---- one measurement ------------------------------------------------- */

/*
 * measure - @nr faulting tasks on a fresh region of @impl and @mode for
 * --duration.
 * Return: 0 with *@s filled in, or a negative errno.
 */
static int measure(enum impl impl, int mode, unsigned int nr,
		   struct bench_loop_sample *s)
{
	struct vs_workload_config c = {
		.ops = &uffd_floor_ops,
		.nr_tasks = nr,
		.mode = VS_WORKLOAD_THREADS,
		.backing = impl == I_FLOOR ? VS_WORKLOAD_HOST :
					     VS_WORKLOAD_UFFD,
		.strategy = opt.strategy,
		.uffd_mode = mode,
		.mm = {
			.pool_pages = bench_pool_pages(nr),
			.kernel = opt.kernel,
		},
	};
	struct vs_workload_result res;
	struct bench_loop_task *k;
	int err;

	k = calloc(nr, sizeof(*k));
	if (!k)
		return -ENOMEM;
	cur.impl = impl;
	cur.mode = mode;
	cur.nr = nr;
	err = bench_loop_measure(&c, k, sizeof(*k), NULL, &res);
	if (!err)
		bench_loop_summarise(k, sizeof(*k), nr, NULL, s);
	free(k);
	return err;
}

/* ---- rows: per mode and thread count, the floor then vmsim ---------- */

struct row {
	struct bench_loop_row loop;	/* first */
	enum impl impl;
	int mode;
	unsigned int threads;
};

static struct row rows[MAX_ROWS];
static int nr_rows;
static struct bench_loop_rows table = { .row = rows,
					.size = sizeof(rows[0]) };

/* Rows in run order; rows[i] (floor) and rows[i + 1] (vmsim) for even i
 * are a pair. */
static void build_rows(void)
{
	int m, c, i;
	struct row *r;

	for (m = 0; m < VS_UFFD_NR_MODES; m++)
		for (c = 0; opt.mode[m] && c < bench_std.nr_threads; c++)
			for (i = 0; i < NR_IMPLS; i++) {
				r = &rows[nr_rows++];
				r->impl = (enum impl)i;
				r->mode = m;
				r->threads = bench_std.threads[c];
			}
	table.nr = (unsigned int)nr_rows;
}

/* vmsim over the floor, faults/s, taken in each round, of the pair at
 * @p.  Return: false if unmeasured. */
static bool pair_ratio(const struct row *p, struct bench_range *out)
{
	unsigned int arm = (unsigned int)(p - rows);

	if (!p[I_FLOOR].loop.done || !p[I_VMSIM].loop.done)
		return false;
	bench_grid_ratio(&table.grid, arm + I_VMSIM, arm + I_FLOOR,
			 BENCH_LOOP_FAULTS_PER_S, out);
	return true;
}

/* ---- output ---------------------------------------------------------- */

static void print_json_row(const struct row *r)
{
	const struct bench_loop_sample *m = r->loop.at_med;

	bench_json_begin();
	bench_json_str("impl", impl_name[r->impl]);
	bench_json_str("uffd_mode", vs_uffd_mode_name(r->mode));
	bench_json_uint("threads", r->threads);
	bench_json_range("faults_per_s", &r->loop.faults_per_s, 0);
	bench_json_range("ns_per_fault", &r->loop.ns_per_fault, 2);
	bench_json_uint("pages", m->pages);
	bench_json_uint("rounds", table.grid.done);
	bench_json_num("duration_s", bench_std.duration_ms / 1000.0, 3);
	if (r->impl == I_VMSIM)
		bench_json_str("strategy",
			       vs_fault_strategy_name(opt.strategy));
	bench_json_end();
}

static void print_table(void)
{
	const struct row *r;
	int i;

	bench_print_rounds_note("faults/s and ns/fault", table.grid.done,
				bench_std.duration_ms);
	printf("# one %lu KiB slice per faulting thread: a store per page, "
	       "then MADV_DONTNEED; %u CPUs\n", BENCH_SLICE_BYTES >> 10,
	       uv_available_parallelism());
	printf("# faults/s: all threads over the wall time; ns/fault: per "
	       "thread, the zap included\n");
	printf("# floor: UFFDIO_COPY of a zero page, nothing else; vmsim: "
	       "vmsim/uffd.h, strategy %s;\n#   threads mode: one handler "
	       "thread each\n", vs_fault_strategy_name(opt.strategy));
	printf("%-5s %-7s %3s %10s %8s\n", "impl", "mode", "thr", "faults/s",
	       "ns/fault");
	for (i = 0, r = rows; i < nr_rows; i++, r++) {
		printf("%-5s %-7s %3u ", impl_name[r->impl],
		       vs_uffd_mode_name(r->mode), r->threads);
		if (r->loop.done)
			printf("%10.0f %8.1f\n", r->loop.faults_per_s.med,
			       r->loop.ns_per_fault.med);
		else
			printf("%10s\n", "-");
	}
}

/* docs/man/uffd-floor.1, TARGETS: vmsim at least TARGET_RATIO of the
 * floor in each mode, at each thread count measured; the verdict is on
 * the median of the per-round ratios. */
static void print_targets(void)
{
	struct bench_range v;
	const char *m;
	bool pass;
	int i, nr = 0;

	if (!bench_std.json)
		printf("\ntargets (vmsim / floor faults/s, taken in each "
		       "round: median (min..max)):\n");
	for (i = 0; i < nr_rows; i += NR_IMPLS) {
		if (!pair_ratio(&rows[i], &v))
			continue;
		m = vs_uffd_mode_name(rows[i].mode);
		pass = v.med >= TARGET_RATIO;
		nr++;
		if (bench_std.json) {
			bench_json_begin();
			bench_json_str("target", "vmsim / floor faults/s");
			bench_json_str("uffd_mode", m);
			bench_json_uint("threads", rows[i].threads);
			bench_json_range("ratio", &v, 4);
			bench_json_str("limit", ">=");
			bench_json_num("bound", TARGET_RATIO, 2);
			bench_json_bool("pass", pass);
			bench_json_end();
			continue;
		}
		printf("  vmsim / floor %-7s @%-3u = ", m, rows[i].threads);
		bench_print_range(&v, 20, "x");
		printf(" (>= %4.2f) %s\n", TARGET_RATIO,
		       pass ? "PASS" : "MISS");
	}
	if (!nr && !bench_std.json)
		printf("  none: their inputs were not measured\n");
}

/* ---- the run: every row once a round, rounds --repeat times ---------- */

/* Row @row into @sample.  Return: 0, or a negative errno (reported). */
static int measure_row(void *row, void *sample)
{
	const struct row *r = row;
	int err;

	err = measure(r->impl, r->mode, r->threads, sample);
	if (err)
		fprintf(stderr, "uffd-floor: %s %s, %u threads: %s\n",
			impl_name[r->impl], vs_uffd_mode_name(r->mode),
			r->threads, vs_strerror(err));
	return err;
}

/*
 * check_uffd - can both halves have userfaultfd, with the features of
 * each mode asked for?  A machine without it gets one line, not a
 * failed measurement.
 * Return: 0, or -EPERM / -ENOSYS (reported).
 */
static int check_uffd(void)
{
	int m, fd, err = vs_uffd_probe(NULL);

	for (m = 0; m < VS_UFFD_NR_MODES && !err; m++) {
		if (!opt.mode[m])
			continue;
		fd = floor_open(floor_features(m));
		if (fd < 0)
			err = fd;
		else
			close(fd);
	}
	if (err)
		fprintf(stderr, "uffd-floor: userfaultfd unavailable: %s\n",
			vs_strerror(err));
	return err;
}

/* ---- options ---------------------------------------------------------- */

static const char about[] =
"The multi-fault loop on real memory whose missing pages a userfaultfd\n"
"handler installs: each thread stores to every page of its own 2 MiB\n"
"slice, then MADV_DONTNEED, repeated.  Run with the smallest correct\n"
"handler (the floor) and with vmsim's (vmsim/uffd.h), interleaved in\n"
"--repeat rounds; faults/s of each and vmsim's over the floor's, the\n"
"ratio taken within each round.\n";

static const struct bench_opt opts[] = {
	{ BENCH_OPT_UFFD_MODE, "sigbus,threads or all (default all)", NULL },
	{ BENCH_OPT_THREADS, "faulting threads, e.g. 1,2 or 1-4, each\n"
			     "1..256 (default 1,2)", NULL },
	{ BENCH_OPT_DURATION, NULL, NULL },
	{ BENCH_OPT_REPEAT, NULL, NULL },
	{ BENCH_OPT_STRATEGY, "vmsim's fault strategy: locked, spf or\n"
			      "pervma (default locked)", "NAME" },
	{ BENCH_OPT_QUICK, "--duration 0.3", NULL },
	{ BENCH_OPT_JSON, "one JSON object per row and per target", NULL },
	{ BENCH_OPT_KERNEL, BENCH_KERNEL_HELP, NULL },
	{ 0, NULL, NULL },
};

/* A delivery mode with a floor: those before uv, which has none. */
static const char *floor_mode_name(int i)
{
	return i < VS_UFFD_UV ? vs_uffd_mode_name(i) : NULL;
}

static void mode_item(const char *item)
{
	bench_arg_flags(item, floor_mode_name, "a mode with a floor",
			opt.mode, VS_UFFD_UV);
}

static void set_option(int key, char *arg)
{
	switch (key) {
	case BENCH_OPT_UFFD_MODE:
		bench_arg_list(arg, mode_item);
		break;
	case BENCH_OPT_STRATEGY:
		opt.strategy = bench_arg_name(arg, vs_fault_strategy_name,
					      "a strategy", false);
		break;
	case BENCH_OPT_KERNEL:
		opt.kernel = bench_arg_kernel(arg);
		break;
	}
}

static const struct bench_tool tool = {
	.name = "uffd-floor", .about = about, .opts = opts, .set = set_option,
	.duration_ms = 1000, .repeat = 3, .quick_ms = 300,
};

/* The defaults of what was not given. */
static void set_defaults(void)
{
	if (!opt.mode[VS_UFFD_SIGBUS] && !opt.mode[VS_UFFD_THREADS])
		mode_item("all");
	if (!bench_std.nr_threads) {
		bench_add_threads(1);
		bench_add_threads(2);
	}
}

/* ---- main ------------------------------------------------------------- */

int main(int argc, char **argv)
{
	int i, ret;

	bench_parse_options(&tool, argc, argv);
	set_defaults();
	build_rows();
	if (check_uffd())
		return 1;
	if (floor_sigaction()) {
		perror("uffd-floor: sigaction");
		return 1;
	}
	/* The main thread warms each region up (vmsim's sigbus mode wants
	 * it attached) and goes offline while it waits (measure()). */
	vs_thread_attach();
	if (bench_control_init())
		return 1;
	ret = bench_loop_run(&table, sizeof(struct bench_loop_sample),
			     measure_row);
	for (i = 0; bench_std.json && i < nr_rows; i++)
		if (rows[i].loop.done)
			print_json_row(&rows[i]);
	if (!bench_std.json)
		print_table();
	print_targets();
	bench_loop_free(&table);
	return bench_control_close(ret);
}
