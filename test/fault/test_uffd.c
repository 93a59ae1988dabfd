/* SPDX-License-Identifier: MIT */
/*
 * test/fault/test_uffd.c - tests for vmsim/uffd.h: real memory whose
 * page faults the model resolves.
 *
 * Two suites:
 *
 *   uffd_api  runs whether or not this machine grants userfaultfd: bad
 *             arguments, names, the advice strings, and what a seccomp
 *             filter that refuses userfaultfd(2) makes of the probe and
 *             of vs_uffd_create().  The filter is installed in a
 *             grandchild of its own (fork, filter, call, _exit): Check's
 *             forked test process would be left unable to open files
 *             (LeakSanitizer reads /proc/self/maps at exit), and with
 *             CK_FORK=no the filter would outlive the test.
 *   uffd      needs userfaultfd (uffd_unsupported() says why the runner
 *             skips it): real loads and stores in the region, checked
 *             against what the model does.  Each behavioural test runs
 *             in every delivery mode (sigbus; threads with one and two
 *             handler threads; uv) and every fault strategy (locked,
 *             spf, pervma): the loop index is mode_cases[i % 4] and
 *             strategy i / 4.
 *
 *             A few tests loop over the delivery modes only.
 *
 * Signals are caught with sigsetjmp()/siglongjmp() in small helpers
 * (try_load(), try_store()), the handler installed for the test only;
 * an access the model refuses with SIGBUS runs under a watchdog
 * (alarm(2)), so that one that never comes back fails in seconds.  What
 * must kill a process (no SIGBUS handler, an unattached thread in
 * sigbus mode) runs in a grandchild.  Nothing here passes region memory
 * to a system call: a kernel-mode access to a missing page is refused
 * (EFAULT) with a user-mode-only uffd, and always in sigbus mode
 * (vmsim/uffd.h, Context).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vmsim/error.h>
#include <vmsim/fail.h>
#include <vmsim/fault.h>
#include <vmsim/file.h>
#include <vmsim/mm.h>
#include <vmsim/thread.h>
#include <vmsim/uffd.h>

#include "test.h"

#define PG VS_PAGE_SIZE
#define RW (VS_PROT_READ | VS_PROT_WRITE)
#define ANON (VS_MAP_PRIVATE | VS_MAP_ANONYMOUS)

/* Each region: 4 MiB of real memory, a pool of 512 pages. */
#define REGION (4UL << 20)
#define POOL_PAGES 512

/* Per test case (Check multiplies it by CK_TIMEOUT_MULTIPLIER). */
#define UFFD_TIMEOUT 30

/* UFFD_FEATURE_POISON (Linux 6.6), absent from older headers. */
#define TEST_UFFD_FEATURE_POISON (1ULL << 14)

#ifndef BUS_MCEERR_AR
#define BUS_MCEERR_AR 4
#endif

static pid_t test_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The byte a test stores at offset @i of a pattern @seed. */
static char pat(size_t i, int seed)
{
	return (char)((i * 131 + (size_t)seed * 29 + 7) & 0xff);
}

/* ---- uffd_unsupported ---------------------------------------------------- */

const char *uffd_unsupported(void)
{
	if (VS_VCPU)
		return "real threads touch real memory, not run on virtual "
		       "CPUs";
	return uffd_refused();
}

const char *uffd_refused(void)
{
	static char why[512];
	int err = vs_uffd_probe(NULL);

	if (!err)
		return NULL;
	snprintf(why, sizeof(why), "userfaultfd unavailable: %s",
		 vs_strerror(err));
	return why;
}

/* ---- what a call leaves behind ------------------------------------------- */

/* Entries of a /proc directory, "." and ".." left out. */
static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	ck_assert_msg(d != NULL, "opendir %s: %s", path, strerror(errno));
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

struct footprint {
	int fds;
	int tasks;
	struct sigaction sigbus;
};

static void footprint_take(struct footprint *fp)
{
	fp->fds = count_dir("/proc/self/fd");
	fp->tasks = count_dir("/proc/self/task");
	ck_assert_int_eq(sigaction(SIGBUS, NULL, &fp->sigbus), 0);
}

/* Nothing opened, started or installed since @before. */
static void footprint_same(const struct footprint *before, const char *what)
{
	struct footprint now;

	footprint_take(&now);
	ck_assert_msg(now.fds == before->fds, "%s: %d fds, %d before", what,
		      now.fds, before->fds);
	ck_assert_msg(now.tasks == before->tasks, "%s: %d threads, %d before",
		      what, now.tasks, before->tasks);
	ck_assert_msg(now.sigbus.sa_handler == before->sigbus.sa_handler,
		      "%s: the SIGBUS handler changed", what);
}

/* vs_uffd_create() with @o refuses with -EINVAL and leaves nothing. */
static void create_einval(const struct vs_uffd_options *o, const char *what)
{
	struct vs_uffd *u = (struct vs_uffd *)&u; /* a value to keep */
	struct vs_uffd *keep = u;
	struct footprint fp;
	int err;

	footprint_take(&fp);
	err = vs_uffd_create(&u, o);
	ck_assert_msg(err == -EINVAL, "%s: vs_uffd_create() = %d (%s)", what,
		      err, vs_err_name(err));
	ck_assert_msg(u == keep, "%s: *up written on failure", what);
	footprint_same(&fp, what);
}

/* ---- uffd_api ------------------------------------------------------------ */

START_TEST(create_bad_args)
{
	struct vs_uffd_options o = { 0 };

	ck_assert_int_eq(vs_uffd_create(NULL, NULL), -EINVAL);
	ck_assert_int_eq(vs_uffd_create(NULL, &o), -EINVAL);

	o.size = PG + 1;
	create_einval(&o, "size not a page multiple");
	o.size = PG - 1;
	create_einval(&o, "size below a page");
	o.size = (size_t)0 - PG;
	create_einval(&o, "size beyond any address space");

	o = (struct vs_uffd_options){ .size = REGION };
	o.mode = -1;
	create_einval(&o, "mode -1");
	o.mode = VS_UFFD_NR_MODES;
	create_einval(&o, "mode VS_UFFD_NR_MODES");

	o = (struct vs_uffd_options){ .size = REGION };
	o.mode = VS_UFFD_THREADS;
	o.nr_threads = VS_UFFD_MAX_THREADS + 1;
	create_einval(&o, "65 handler threads");
	o.mode = VS_UFFD_SIGBUS;
	o.nr_threads = 1;
	create_einval(&o, "sigbus mode with a handler thread");
	o.mode = VS_UFFD_UV;
	create_einval(&o, "uv mode with a handler thread");

	o = (struct vs_uffd_options){ .size = REGION };
	o.strategy = 99;
	create_einval(&o, "strategy 99");
	o.strategy = -1;
	create_einval(&o, "strategy -1");

	o = (struct vs_uffd_options){ .size = REGION };
	o.mm.start = 0x10000;
	create_einval(&o, "mm.start set");
	o.mm.start = 0;
	o.mm.end = 1UL << 40;
	create_einval(&o, "mm.end set");
	o.mm.end = 0;
	o.mm.pool_pages = VS_PAGE_POOL_MAX_PAGES + 1;
	create_einval(&o, "mm.pool_pages too many");
	o.mm.pool_pages = 0;
	o.mm.lock_kind = "nope";
	create_einval(&o, "mm.lock_kind \"nope\"");
}
END_TEST

/* nr_threads 0 in threads mode means one handler thread; size 0: 64 MiB. */
START_TEST(create_defaults)
{
	struct vs_uffd_options o = { .mode = VS_UFFD_THREADS };
	struct vs_uffd *u = NULL;
	int err, probe = vs_uffd_probe(NULL);

	o.size = REGION;
	err = vs_uffd_create(&u, &o);
	if (probe) {
		ck_assert_int_eq(err, probe);
		ck_assert_ptr_null(u);
		return;
	}
	ck_assert_msg(err == 0, "threads mode, nr_threads 0: %d (%s)", err,
		      vs_err_name(err));
	ck_assert_ptr_nonnull(vs_uffd_mm(u));
	ck_assert_uint_eq(vs_uffd_size(u), REGION);
	ck_assert_int_eq(vs_uffd_destroy(u), 0);

	/* Size 0 is the default, 64 MiB ("zero means default"). */
	u = NULL;
	o = (struct vs_uffd_options){ .mode = VS_UFFD_THREADS };
	o.mm.pool_pages = 16;
	ck_assert_int_eq(vs_uffd_create(&u, &o), 0);
	ck_assert_uint_eq(vs_uffd_size(u), 64UL << 20);
	ck_assert_int_eq(vs_uffd_destroy(u), 0);
}
END_TEST

/*
 * Each allocation of vs_uffd_create() failing in turn (vmsim/fail.h: the
 * region, its mm and page pool, the VMA, ...): -ENOMEM, leaving no fd,
 * thread or handler, in each mode; then it is made.
 */
START_TEST(create_enomem)
{
	struct vs_fail_options fo = { .kinds = VS_FAIL_SLAB | VS_FAIL_PAGE,
				      .times = 1 };
	struct vs_uffd_options o = { .size = REGION, .mm.pool_pages = 16 };
	int probe = vs_uffd_probe(NULL), err;
	struct footprint fp;
	struct vs_uffd *u;
	char what[64];

	if (probe)
		return;		/* create_defaults checks the refusal */
	for (o.mode = 0; o.mode < VS_UFFD_NR_MODES; o.mode++) {
		if (VS_VCPU && o.mode != VS_UFFD_SIGBUS)
			continue;	/* refused on vCPUs */
		for (fo.nth = 1;; fo.nth++) {
			snprintf(what, sizeof(what), "%s mode, allocation %lu",
				 vs_uffd_mode_name(o.mode), fo.nth);
			footprint_take(&fp);
			ck_assert_int_eq(vs_fail_set(&fo), 0);
			u = (struct vs_uffd *)&u;	/* a value to keep */
			err = vs_uffd_create(&u, &o);
			if (!vs_fail_injected())
				break;
			ck_assert_int_eq(vs_fail_set(NULL), 0);
			if (!err) {	/* a failure it got past */
				ck_assert_int_eq(vs_uffd_destroy(u), 0);
				continue;
			}
			ck_assert_msg(err == -ENOMEM, "%s: %d (%s)", what, err,
				      vs_err_name(err));
			ck_assert_msg(u == (struct vs_uffd *)&u, "%s: *up "
				      "written on failure", what);
			footprint_same(&fp, what);
		}
		ck_assert_int_eq(vs_fail_set(NULL), 0);
		ck_assert_msg(err == 0 && fo.nth > 1, "%s mode: %d after %lu "
			      "allocations", vs_uffd_mode_name(o.mode), err,
			      fo.nth - 1);
		ck_assert_int_eq(vs_uffd_destroy(u), 0);
		printf("uffd create, %s mode: %lu allocations failed in "
		       "turn\n", vs_uffd_mode_name(o.mode), fo.nth - 1);
	}
}
END_TEST

START_TEST(null_handles)
{
	struct vs_uffd_thread_stat ts[2];
	struct vs_uffd_stats st;

	ck_assert_int_eq(vs_uffd_destroy(NULL), -EINVAL);
	ck_assert_int_eq(vs_uffd_stats_get(NULL, &st), -EINVAL);
	ck_assert_int_eq(vs_uffd_stats_get(NULL, NULL), -EINVAL);
	ck_assert_int_eq(vs_uffd_thread_stats(NULL, ts, 2), -EINVAL);
	ck_assert_int_eq(vs_uffd_thread_stats(NULL, NULL, 0), -EINVAL);
	ck_assert_ptr_null(vs_uffd_mm(NULL));
	ck_assert_ptr_null(vs_uffd_base(NULL));
	ck_assert_uint_eq(vs_uffd_size(NULL), 0);
}
END_TEST

START_TEST(mode_names)
{
	const char *name;
	int m;

	for (m = 0; m < VS_UFFD_NR_MODES; m++) {
		name = vs_uffd_mode_name(m);
		ck_assert_ptr_nonnull(name);
		ck_assert_int_eq(vs_uffd_mode_parse(name), m);
	}
	ck_assert_str_eq(vs_uffd_mode_name(VS_UFFD_SIGBUS), "sigbus");
	ck_assert_str_eq(vs_uffd_mode_name(VS_UFFD_THREADS), "threads");
	ck_assert_str_eq(vs_uffd_mode_name(VS_UFFD_UV), "uv");
	ck_assert_ptr_null(vs_uffd_mode_name(-1));
	ck_assert_ptr_null(vs_uffd_mode_name(VS_UFFD_NR_MODES));
	ck_assert_int_eq(vs_uffd_mode_parse(NULL), -EINVAL);
	ck_assert_int_eq(vs_uffd_mode_parse(""), -EINVAL);
	ck_assert_int_eq(vs_uffd_mode_parse("SIGBUS"), -EINVAL);
	ck_assert_int_eq(vs_uffd_mode_parse("sigbus "), -EINVAL);
	ck_assert_int_eq(vs_uffd_mode_parse("thread"), -EINVAL);
}
END_TEST

/* vs_strerror() says what to do when userfaultfd is refused. */
START_TEST(advice)
{
	const char *a = vs_strerror(-EPERM);

	ck_assert_ptr_nonnull(strstr(a, "vm.unprivileged_userfaultfd=1"));
	ck_assert_ptr_nonnull(strstr(a, "/dev/userfaultfd"));
	ck_assert_ptr_nonnull(strstr(a, "CAP_SYS_PTRACE"));
	ck_assert_ptr_nonnull(strstr(vs_strerror(-ENOSYS), "userfaultfd"));
	ck_assert_ptr_nonnull(strstr(vs_strerror(-ENOSYS), "5.11"));
}
END_TEST

/* The skip message is the probe's verdict, with its advice. */
START_TEST(unsupported_message)
{
	const char *why = uffd_unsupported();
	int err = vs_uffd_probe(NULL);

	if (!err) {
		ck_assert_ptr_null(why);
		return;
	}
	ck_assert_ptr_nonnull(why);
	ck_assert_ptr_nonnull(strstr(why, "userfaultfd unavailable: "));
	ck_assert_ptr_nonnull(strstr(why, vs_strerror(err)));
}
END_TEST

/* ---- seccomp refusals ---------------------------------------------------- */

#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define TEST_AUDIT_ARCH AUDIT_ARCH_RISCV64
#endif

#define RET_ERRNO(e) \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define RET_ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
/* if (nr == @nr) return -@e; */
#define REFUSE(nr, e) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), RET_ERRNO(e)

#ifdef TEST_AUDIT_ARCH
/*
 * Make userfaultfd(2) fail with @uffd_errno and every open of a file
 * with @open_errno (there is no filtering by path), the rest allowed.
 * Return: 0, or -errno.
 */
static int refuse_uffd(int uffd_errno, int open_errno)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
		RET_ALLOW,
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		REFUSE(__NR_userfaultfd, uffd_errno),
		REFUSE(__NR_openat, open_errno),
#ifdef __NR_open
		REFUSE(__NR_open, open_errno),
#endif
#ifdef __NR_openat2
		REFUSE(__NR_openat2, open_errno),
#endif
		RET_ALLOW,
	};
	struct sock_fprog prog = {
		.len = (unsigned short)VS_ARRAY_SIZE(f),
		.filter = f,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		return -errno;
	return 0;
}
#endif

/* What the API said under the filter (the grandchild's report). */
struct refusal {
	int filter;		/* refuse_uffd() */
	int uffd_errno;		/* the filter works: userfaultfd(2) */
	int probe;
	int create_sigbus;	/* default options */
	int create_threads;
	int create_bad_mm;	/* lock kind "nope" */
	int unsupported_ok;	/* uffd_unsupported() names the error */
};

static void refused_calls(struct refusal *r, int uffd_errno, int open_errno)
{
	struct vs_uffd_options o = { .size = REGION };
	struct vs_uffd *u = NULL;
	const char *why;

#ifdef TEST_AUDIT_ARCH
	r->filter = refuse_uffd(uffd_errno, open_errno);
#else
	(void)uffd_errno;
	(void)open_errno;
	r->filter = -ENOSYS;
#endif
	if (r->filter)
		return;
	r->uffd_errno = syscall(SYS_userfaultfd, O_CLOEXEC) < 0 ? errno : 0;
	r->probe = vs_uffd_probe(NULL);
	r->create_sigbus = vs_uffd_create(&u, NULL);
	if (!r->create_sigbus)
		(void)vs_uffd_destroy(u);
	o.mode = VS_UFFD_THREADS;
	o.nr_threads = 2;
	r->create_threads = vs_uffd_create(&u, &o);
	if (!r->create_threads)
		(void)vs_uffd_destroy(u);
	o.mm.lock_kind = "nope";
	r->create_bad_mm = vs_uffd_create(&u, &o);
	if (!r->create_bad_mm)
		(void)vs_uffd_destroy(u);
	why = uffd_unsupported();
	r->unsupported_ok = why && r->probe &&
			    strstr(why, vs_strerror(r->probe));
}

/*
 * Run refused_calls() in a grandchild under the filter; it reports
 * through a pipe and leaves with _exit(), so that no exit handler (nor
 * Check, nor a sanitizer) runs under the filter.
 */
static void under_filter(struct refusal *r, int uffd_errno, int open_errno)
{
	int p[2], status;
	ssize_t n;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct refusal mine = { 0 };

		close(p[0]);
		refused_calls(&mine, uffd_errno, open_errno);
		_exit(write(p[1], &mine, sizeof(mine)) == sizeof(mine) ? 0 : 1);
	}
	close(p[1]);
	n = read(p[0], r, sizeof(*r));
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "grandchild under the filter: status %#x", status);
	ck_assert_int_eq(n, (ssize_t)sizeof(*r));
}

/* The filter a container runtime may install: userfaultfd is EPERM. */
START_TEST(refuse_eperm)
{
	struct refusal r;

	under_filter(&r, EPERM, EACCES);
	if (r.filter)
		return;	/* no seccomp filter here (arch, or refused) */
	ck_assert_int_eq(r.uffd_errno, EPERM);
	ck_assert_int_eq(r.probe, -EPERM);
	ck_assert_msg(r.create_sigbus == -EPERM,
		      "vs_uffd_create() under a seccomp refusal: %d (%s), "
		      "want -EPERM as vs_uffd_probe() says", r.create_sigbus,
		      vs_err_name(r.create_sigbus));
	ck_assert_int_eq(r.create_threads, -EPERM);
	ck_assert(r.unsupported_ok);
}
END_TEST

/* No userfaultfd at all, and no /dev/userfaultfd: -ENOSYS. */
START_TEST(refuse_enosys)
{
	struct refusal r;

	under_filter(&r, ENOSYS, ENOENT);
	if (r.filter)
		return;
	ck_assert_int_eq(r.uffd_errno, ENOSYS);
	ck_assert_int_eq(r.probe, -ENOSYS);
	ck_assert_int_eq(r.create_sigbus, -ENOSYS);
	ck_assert_int_eq(r.create_threads, -ENOSYS);
	ck_assert(r.unsupported_ok);
}
END_TEST

/*
 * A bad mm setting is -EINVAL whether or not userfaultfd can be had,
 * like every other bad argument (which vs_uffd_create() checks before
 * it opens anything).
 */
START_TEST(refuse_bad_mm_option)
{
	struct refusal r;

	under_filter(&r, EPERM, EACCES);
	if (r.filter)
		return;
	ck_assert_msg(r.create_bad_mm == -EINVAL,
		      "lock kind \"nope\" without userfaultfd: %d (%s), "
		      "want -EINVAL", r.create_bad_mm,
		      vs_err_name(r.create_bad_mm));
}
END_TEST

/* A test case of a uffd suite: UFFD_TIMEOUT bounds it. */
static TCase *uffd_tcase(Suite *s, const char *name)
{
	TCase *tc = vs_test_tcase(s, name);

	tcase_set_timeout(tc, UFFD_TIMEOUT);
	return tc;
}

Suite *uffd_api_suite(void)
{
	Suite *s = suite_create("uffd_api");

	vs_test_add(uffd_tcase(s, "args"), create_bad_args, create_defaults,
		    create_enomem, null_handles, mode_names, advice,
		    unsupported_message);
	vs_test_add(uffd_tcase(s, "seccomp"), refuse_eperm, refuse_enosys,
		    refuse_bad_mm_option);
	return s;
}

/* ---- uffd: regions ------------------------------------------------------- */

static const struct mode_case {
	int mode;
	unsigned int nr_threads;
} mode_cases[] = {
	{ VS_UFFD_SIGBUS, 0 },
	{ VS_UFFD_THREADS, 1 },
	{ VS_UFFD_THREADS, 2 },
	{ VS_UFFD_UV, 0 },
};

#define NR_MODE_CASES ((int)VS_ARRAY_SIZE(mode_cases))
#define NR_CASES (NR_MODE_CASES * VS_FAULT_NR_STRATEGIES)

/* Loop index @i as words, for messages. */
static const char *case_name(int i)
{
	static char buf[64];
	const struct mode_case *c = &mode_cases[i % NR_MODE_CASES];

	snprintf(buf, sizeof(buf), "%s/%u/%s", vs_uffd_mode_name(c->mode),
		 c->nr_threads,
		 vs_fault_strategy_name(i / NR_MODE_CASES));
	return buf;
}

static int region_try(struct vs_uffd **up, int i, size_t size, size_t pool)
{
	const struct mode_case *c = &mode_cases[i % NR_MODE_CASES];
	struct vs_uffd_options o = { 0 };

	o.size = size;
	o.mode = c->mode;
	o.nr_threads = c->nr_threads;
	o.strategy = i / NR_MODE_CASES;
	o.mm.pool_pages = pool;
	return vs_uffd_create(up, &o);
}

/* A region for loop index @i; the calling thread attached first. */
static struct vs_uffd *region_new(int i)
{
	struct vs_uffd *u = NULL;
	struct vs_mm *mm;
	int err;

	ck_assert_int_eq(vs_thread_attach(), 0);
	err = region_try(&u, i, REGION, POOL_PAGES);
	ck_assert_msg(err == 0, "vs_uffd_create(%s): %d (%s)", case_name(i),
		      err, vs_err_name(err));
	mm = vs_uffd_mm(u);
	ck_assert_ptr_nonnull(mm);
	ck_assert_ptr_nonnull(vs_uffd_base(u));
	/* On a PMD boundary: its PTE tables lie the same way every run. */
	ck_assert_uint_eq((unsigned long)vs_uffd_base(u) % VS_PMD_SIZE, 0);
	ck_assert_uint_eq(vs_uffd_size(u), REGION);
	/* A model address is the real address. */
	ck_assert_uint_eq(mm->start, (unsigned long)vs_uffd_base(u));
	ck_assert_uint_eq(mm->end, (unsigned long)vs_uffd_base(u) + REGION);
	ck_assert_int_eq(vs_mm_fault_strategy(mm), i / NR_MODE_CASES);
	return u;
}

static void region_done(struct vs_uffd *u)
{
	ck_assert_int_eq(vs_uffd_destroy(u), 0);
}

static struct vs_uffd_stats stats_of(struct vs_uffd *u)
{
	struct vs_uffd_stats st;

	ck_assert_int_eq(vs_uffd_stats_get(u, &st), 0);
	return st;
}

/*
 * Wait until the counter at @off of the stats reaches @min.  A handler
 * counts a copy or an unprotect after the ioctl, which has already woken
 * the faulting thread: in threads and uv modes the count may lag the
 * access that caused it.  Faults, write-protect faults, SIGBUS and the
 * mirror's counters are counted before the access completes.
 */
static void stat_wait_off(struct vs_uffd *u, size_t off, const char *name,
			  unsigned long min)
{
	int64_t end = vs_test_now_ns() + VS_TEST_WAIT_NS;
	struct vs_uffd_stats st;
	unsigned long v;

	for (;;) {
		st = stats_of(u);
		memcpy(&v, (char *)&st + off, sizeof(v));
		if (v >= min)
			return;
		if (vs_test_now_ns() > end)
			ck_abort_msg("stats.%s is %lu, want at least %lu "
				     "(faults %lu)", name, v, min, st.faults);
		vs_test_nap(1000);
	}
}

#define stat_wait(u, field, min) \
	stat_wait_off((u), offsetof(struct vs_uffd_stats, field), #field, (min))

/* @addr lies inside the region, with @len bytes after it. */
static char *in_region(struct vs_uffd *u, long addr, size_t len)
{
	unsigned long base = (unsigned long)vs_uffd_base(u);

	ck_assert_msg(addr > 0, "vs_mmap: %ld (%s)", addr,
		      vs_err_name((int)addr));
	ck_assert_uint_ge((unsigned long)addr, base);
	ck_assert_uint_le((unsigned long)addr + len, base + vs_uffd_size(u));
	return (char *)addr;
}

static char *map_anon(struct vs_uffd *u, size_t pages)
{
	return in_region(u, vs_mmap(vs_uffd_mm(u), 0, pages * PG, RW, ANON,
				    NULL, 0),
			 pages * PG);
}

static char *map_file(struct vs_uffd *u, size_t pages, int flags,
		      struct vs_file *f)
{
	return in_region(u, vs_mmap(vs_uffd_mm(u), 0, pages * PG, RW, flags,
				    f, 0),
			 pages * PG);
}

static struct vs_file *file_new(struct vs_uffd *u, size_t size)
{
	struct vs_file *f = NULL;

	ck_assert_int_eq(vs_file_create(&f, vs_uffd_mm(u)->pool, size,
					O_RDWR),
			 0);
	return f;
}

/* Real stores of pattern @seed over [p, p + len). */
static void fill(char *p, size_t len, int seed)
{
	volatile char *v = p;
	size_t i;

	for (i = 0; i < len; i++)
		v[i] = pat(i, seed);
}

/* Real loads of [p + from, p + to) match pattern @seed as fill() wrote
 * it from @p. */
static void check_fill(const char *p, size_t from, size_t to, int seed,
		       const char *what)
{
	const volatile char *v = p;
	size_t i;

	for (i = from; i < to; i++)
		if (v[i] != pat(i, seed))
			ck_abort_msg("%s: byte %zu is %#x, want %#x", what, i,
				     (unsigned char)v[i],
				     (unsigned char)pat(i, seed));
}

/* Real loads of [p, p + len) are all zero. */
static void check_zero(const char *p, size_t len, const char *what)
{
	const volatile char *v = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (v[i])
			ck_abort_msg("%s: byte %zu is %#x, want 0", what, i,
				     (unsigned char)v[i]);
}

/* The model's bytes (vs_read) of [p, p + len) match pattern @seed. */
static void check_model(struct vs_mm *mm, const char *p, size_t len,
			int seed, const char *what)
{
	char *buf = malloc(len);
	size_t i;

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(vs_read(mm, (unsigned long)p, buf, len), 0);
	for (i = 0; i < len && buf[i] == pat(i, seed); i++)
		;
	if (i < len)
		ck_abort_msg("%s: model byte %zu is %#x, want %#x", what, i,
			     (unsigned char)buf[i],
			     (unsigned char)pat(i, seed));
	free(buf);
}

/* ---- catching SIGSEGV and SIGBUS ----------------------------------------- */

static sigjmp_buf catch_env;
static volatile sig_atomic_t caught_sig;
static volatile sig_atomic_t caught_code;
static void *volatile caught_addr;

static void on_caught(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	caught_sig = sig;
	caught_code = si->si_code;
	caught_addr = si->si_addr;
	siglongjmp(catch_env, 1);
}

/* Send @sig to on_caught() until catch_end(); the old action in @old. */
static void catch_begin(int sig, struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_caught;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(sig, &sa, old), 0);
}

static void catch_end(int sig, const struct sigaction *old)
{
	ck_assert_int_eq(sigaction(sig, old, NULL), 0);
}

/* One real store of @v at @p.  Return: the signal it raised, or 0. */
static int try_store(volatile char *p, char v)
{
	caught_sig = 0;
	caught_addr = NULL;
	if (sigsetjmp(catch_env, 1) == 0)
		*p = v;
	return caught_sig;
}

/* One real load at @p into *@v.  Return: the signal it raised, or 0. */
static int try_load(const volatile char *p, char *v)
{
	caught_sig = 0;
	caught_addr = NULL;
	if (sigsetjmp(catch_env, 1) == 0)
		*v = *p;
	return caught_sig;
}

/* The access at @p raised SIGSEGV, reported at @p, SEGV_ACCERR. */
static void want_segv(int sig, const volatile char *p, const char *what)
{
	ck_assert_msg(sig == SIGSEGV, "%s: signal %d, want SIGSEGV", what,
		      sig);
	ck_assert_msg(caught_addr == (void *)p, "%s: si_addr %p, want %p",
		      what, caught_addr, (void *)p);
	ck_assert_msg(caught_code == SEGV_ACCERR, "%s: si_code %d", what,
		      (int)caught_code);
}

/* ---- uffd: the cases ----------------------------------------------------- */

/* 1. Real stores and loads of an anonymous private mapping. */
START_TEST(anon_rw)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_uffd_thread_stat ts[4];
	struct vs_uffd_stats st;
	char *p = map_anon(u, 4);
	size_t pg;
	int n;

	for (pg = 0; pg < 4; pg++) {
		p[pg * PG] = pat(pg, 1);
		p[pg * PG + 1] = pat(pg, 2);
		p[pg * PG + PG - 1] = pat(pg, 3);
	}
	for (pg = 0; pg < 4; pg++) {
		ck_assert_int_eq(((volatile char *)p)[pg * PG], pat(pg, 1));
		ck_assert_int_eq(((volatile char *)p)[pg * PG + 1],
				 pat(pg, 2));
		ck_assert_int_eq(((volatile char *)p)[pg * PG + PG - 1],
				 pat(pg, 3));
		ck_assert_int_eq(((volatile char *)p)[pg * PG + 2], 0);
	}
	stat_wait(u, copies, 4);
	st = stats_of(u);
	ck_assert_uint_ge(st.faults, 4);
	ck_assert_uint_eq(st.sigsegv, 0);
	ck_assert_uint_eq(st.sigbus, 0);

	/* Only this thread faulted: one entry, its TID, every fault. */
	n = vs_uffd_thread_stats(u, ts, (int)VS_ARRAY_SIZE(ts));
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(ts[0].tid, test_gettid());
	ck_assert_uint_eq(ts[0].faults, st.faults);
	ck_assert_int_eq(vs_uffd_thread_stats(u, ts, 0), 0);
	ck_assert_int_eq(vs_uffd_thread_stats(u, ts, -1), -EINVAL);
	ck_assert_int_eq(vs_uffd_thread_stats(u, NULL, 1), -EINVAL);
	ck_assert_int_eq(vs_uffd_stats_get(u, NULL), -EINVAL);
	region_done(u);
}
END_TEST

/* 2. A read maps the zero page write-protected; a write then unprotects. */
START_TEST(zero_page_then_write)
{
	struct vs_uffd *u = region_new(_i);
	volatile char *p = map_anon(u, 1);
	struct vs_uffd_stats st;

	ck_assert_int_eq(p[100], 0);
	check_zero((const char *)p, PG, "fresh page");
	stat_wait(u, wp_copies, 1);
	st = stats_of(u);
	ck_assert_uint_ge(st.faults, 1);
	ck_assert_uint_eq(st.wp_faults, 0);

	p[100] = 42;
	st = stats_of(u);
	ck_assert_uint_ge(st.wp_faults, 1);
	stat_wait(u, unprotects, 1);
	ck_assert_int_eq(p[100], 42);
	ck_assert_int_eq(p[99], 0);
	ck_assert_int_eq(p[101], 0);
	region_done(u);
}
END_TEST

/* 3. MADV_DONTNEED through the model zaps real anonymous memory. */
START_TEST(anon_dontneed_zaps)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_mm *mm = vs_uffd_mm(u);
	struct vs_uffd_stats st;
	char *p = map_anon(u, 3);

	fill(p, 3 * PG, 1);
	check_fill(p, 0, 3 * PG, 1, "before DONTNEED");
	ck_assert_int_eq(vs_madvise(mm, (unsigned long)p + PG, PG,
				    VS_MADV_DONTNEED),
			 0);
	check_fill(p, 0, PG, 1, "page before the zapped one");
	check_zero(p + PG, PG, "zapped page");
	check_fill(p, 2 * PG, 3 * PG, 1, "page after the zapped one");
	st = stats_of(u);
	ck_assert_uint_ge(st.invalidations, 1);
	/* And it is ordinary memory again. */
	fill(p + PG, PG, 5);
	check_fill(p + PG, 0, PG, 5, "zapped page, written again");
	region_done(u);
}
END_TEST

/*
 * 4. The model's SIGSEGV is a real SIGSEGV at the address: a page
 * unmapped through the model, a store to a page the model made
 * read-only, a never-mapped address of the region.  mprotect keeps the
 * data.
 */
START_TEST(sigsegv_delivery)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_mm *mm = vs_uffd_mm(u);
	char *base = vs_uffd_base(u);
	char *p = map_anon(u, 3);
	struct sigaction old;
	char v = 0;

	/* Allocation is top-down: the bottom of the region stays free. */
	ck_assert_msg(p >= base + 16 * PG, "mapped at %p, base %p", (void *)p,
		      (void *)base);
	fill(p, 3 * PG, 1);
	catch_begin(SIGSEGV, &old);

	/* The middle page unmapped: its neighbours stay. */
	ck_assert_int_eq(vs_munmap(mm, (unsigned long)p + PG, PG), 0);
	want_segv(try_store(p + PG + 5, 9), p + PG + 5, "store, unmapped");
	want_segv(try_load(p + PG, &v), p + PG, "load, unmapped");
	check_fill(p, 0, PG, 1, "page before the unmapped one");
	check_fill(p, 2 * PG, 3 * PG, 1, "page after the unmapped one");

	/* Read-only: loads work, a store faults. */
	ck_assert_int_eq(vs_mprotect(mm, (unsigned long)p, PG,
				     VS_PROT_READ),
			 0);
	ck_assert_int_eq(try_load(p + 3, &v), 0);
	ck_assert_int_eq(v, pat(3, 1));
	want_segv(try_store(p + 3, 7), p + 3, "store, read-only");
	ck_assert_int_eq(((volatile char *)p)[3], pat(3, 1));

	/* Writable again: the store works, the old data is there. */
	ck_assert_int_eq(vs_mprotect(mm, (unsigned long)p, PG, RW), 0);
	ck_assert_int_eq(try_store(p + 3, 7), 0);
	ck_assert_int_eq(((volatile char *)p)[3], 7);
	check_fill(p, 0, 3, 1, "read-only and back, before the store");
	check_fill(p, 4, PG, 1, "read-only and back, after the store");

	/* PROT_NONE and back. */
	ck_assert_int_eq(vs_mprotect(mm, (unsigned long)p + 2 * PG, PG,
				     VS_PROT_NONE),
			 0);
	want_segv(try_load(p + 2 * PG + 1, &v), p + 2 * PG + 1,
		  "load, PROT_NONE");
	ck_assert_int_eq(vs_mprotect(mm, (unsigned long)p + 2 * PG, PG, RW),
			 0);
	check_fill(p, 2 * PG, 3 * PG, 1, "PROT_NONE and back");

	/* Never mapped. */
	want_segv(try_store(base + 3 * PG + 17, 1), base + 3 * PG + 17,
		  "store, never mapped");
	want_segv(try_load(base, &v), base, "load, never mapped");

	catch_end(SIGSEGV, &old);
	region_done(u);
}
END_TEST

/*
 * 5. A shared file mapping keeps what real stores wrote across
 * MADV_DONTNEED and munmap: the mirror copies it into the page cache.
 */
START_TEST(shared_file_keeps_data)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_mm *mm = vs_uffd_mm(u);
	struct vs_file *f = file_new(u, 4 * PG);
	char *p = map_file(u, 4, VS_MAP_SHARED, f);
	struct vs_uffd_stats st;

	fill(p, 4 * PG, 1);
	ck_assert_int_eq(vs_madvise(mm, (unsigned long)p, 4 * PG,
				    VS_MADV_DONTNEED),
			 0);
	st = stats_of(u);
	ck_assert_uint_ge(st.writebacks, 4);
	check_model(mm, p, 4 * PG, 1, "page cache after DONTNEED");
	check_fill(p, 0, 4 * PG, 1, "real loads after DONTNEED");

	/* munmap writes back too: a new mapping reads it. */
	fill(p, 4 * PG, 2);
	ck_assert_int_eq(vs_munmap(mm, (unsigned long)p, 4 * PG), 0);
	p = map_file(u, 4, VS_MAP_SHARED, f);
	check_fill(p, 0, 4 * PG, 2, "a new mapping after munmap");
	check_model(mm, p, 4 * PG, 2, "page cache after munmap");

	ck_assert_int_eq(vs_file_destroy(f), 0);
	region_done(u);
}
END_TEST

/* 5b. So does a shared anonymous mapping (its file is shmem). */
START_TEST(shared_anon_keeps_data)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_mm *mm = vs_uffd_mm(u);
	char *p;

	p = in_region(u, vs_mmap(mm, 0, 2 * PG, RW,
				 VS_MAP_SHARED | VS_MAP_ANONYMOUS, NULL, 0),
		      2 * PG);
	fill(p, 2 * PG, 3);
	ck_assert_int_eq(vs_madvise(mm, (unsigned long)p, 2 * PG,
				    VS_MADV_DONTNEED),
			 0);
	check_model(mm, p, 2 * PG, 3, "shmem after DONTNEED");
	check_fill(p, 0, 2 * PG, 3, "real loads after DONTNEED");
	region_done(u);
}
END_TEST

/*
 * 6. A private file mapping reads the page cache; a store copies the
 * page (COW) and the file keeps its data; DONTNEED drops the copy.
 */
START_TEST(private_file_cow)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_mm *mm = vs_uffd_mm(u);
	struct vs_file *f = file_new(u, 2 * PG);
	char *s = map_file(u, 2, VS_MAP_SHARED, f);
	struct vs_uffd_stats st0, st;
	char *p;

	/* The file's contents, through the shared mapping. */
	fill(s, 2 * PG, 1);
	ck_assert_int_eq(vs_madvise(mm, (unsigned long)s, 2 * PG,
				    VS_MADV_DONTNEED),
			 0);

	p = map_file(u, 2, VS_MAP_PRIVATE, f);
	st0 = stats_of(u);
	check_fill(p, 0, 2 * PG, 1, "private mapping reads the file");
	/* Read faults map the page-cache page read-only. */
	stat_wait(u, wp_copies, st0.wp_copies + 2);

	/* The store copies page 0; page 1 still reads the file. */
	fill(p, PG, 2);
	check_fill(p, 0, PG, 2, "private page 0 after the store");
	check_fill(p, PG, 2 * PG, 1, "private page 1");
	st = stats_of(u);
	ck_assert_uint_ge(st.wp_faults - st0.wp_faults, 1);

	/* The file did not change: by the model and by real loads. */
	check_model(mm, s, 2 * PG, 1, "page cache after the private store");
	ck_assert_int_eq(vs_madvise(mm, (unsigned long)s, 2 * PG,
				    VS_MADV_DONTNEED),
			 0);
	check_model(mm, s, 2 * PG, 1, "page cache after DONTNEED of it");
	check_fill(s, 0, 2 * PG, 1, "shared mapping after DONTNEED");

	/* DONTNEED of the private mapping drops the copy, and writes
	 * nothing of it back into the file. */
	ck_assert_int_eq(vs_madvise(mm, (unsigned long)p, 2 * PG,
				    VS_MADV_DONTNEED),
			 0);
	check_fill(p, 0, 2 * PG, 1, "private mapping after DONTNEED");
	check_model(mm, s, 2 * PG, 1, "page cache after DONTNEED of the "
		    "private mapping");

	ck_assert_int_eq(vs_file_destroy(f), 0);
	region_done(u);
}
END_TEST

/*
 * The si_code of a refused access: a poison entry is BUS_MCEERR_AR where
 * the kernel has CONFIG_MEMORY_FAILURE, else BUS_ADRERR (Linux 6.18 on
 * the test machine); sigbus mode passes the uffd's own SIGBUS on
 * (BUS_ADRERR).
 */
static int poison_code(int code)
{
	return code == BUS_MCEERR_AR || code == BUS_ADRERR;
}

/*
 * A refused access that never comes back (a SIGBUS handler that keeps
 * resolving the same fault) would hang the test until Check's timeout;
 * the watchdog ends it sooner, and says why.
 */
#define WATCHDOG_S 5

static void on_watchdog(int sig)
{
	static const char msg[] =
		"test_uffd: an access the model refuses with SIGBUS never "
		"came back (no signal reached the test's handler)\n";

	(void)sig;
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(124);
}

static void watchdog_begin(struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_watchdog;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGALRM, &sa, old), 0);
	alarm(WATCHDOG_S);
}

static void watchdog_end(const struct sigaction *old)
{
	alarm(0);
	ck_assert_int_eq(sigaction(SIGALRM, old, NULL), 0);
}

/* The access at @p raised the SIGBUS of an access the model refused. */
static void want_bus(int sig, const volatile char *p, const char *what)
{
	ck_assert_msg(sig == SIGBUS, "%s: signal %d, want SIGBUS", what, sig);
	ck_assert_msg(caught_addr == (void *)p, "%s: si_addr %p, want %p",
		      what, caught_addr, (void *)p);
	ck_assert_msg(poison_code(caught_code), "%s: si_code %d", what,
		      (int)caught_code);
}

/*
 * Can a model SIGBUS reach the thread in mode case @i?  Sigbus mode
 * passes the signal on; the others need UFFD_FEATURE_POISON (Linux
 * 6.6), without which the thread faults forever.
 */
static int can_refuse(int i)
{
	uint64_t features = 0;

	if (mode_cases[i % NR_MODE_CASES].mode == VS_UFFD_SIGBUS)
		return 1;
	ck_assert_int_eq(vs_uffd_probe(&features), 0);
	return (features & TEST_UFFD_FEATURE_POISON) != 0;
}

/*
 * 7. A load past the end of a file is a real SIGBUS at that address.
 * The test's handler goes in before the region: in sigbus mode vmsim's
 * handler keeps it as the previous one and passes it what the model
 * refuses; destroy puts it back.  In the other modes a poison entry
 * raises it, until the page is zapped.
 */
START_TEST(sigbus_past_eof)
{
	struct sigaction old, now, alrm;
	struct vs_uffd_stats st;
	struct vs_file *f;
	struct vs_uffd *u;
	char *p, v = 1;

	if (!can_refuse(_i))
		return;
	catch_begin(SIGBUS, &old);
	u = region_new(_i);
	f = file_new(u, PG);
	p = map_file(u, 2, VS_MAP_SHARED, f);

	watchdog_begin(&alrm);
	ck_assert_int_eq(try_load(p + 5, &v), 0);
	ck_assert_int_eq(v, 0);
	want_bus(try_load(p + PG, &v), p + PG, "load past EOF");
	st = stats_of(u);
	ck_assert_uint_ge(st.sigbus, 1);

	/* Again (the poison stays), and after a zap (the model refuses
	 * it again). */
	want_bus(try_store(p + PG + 8, 1), p + PG + 8, "store past EOF");
	ck_assert_int_eq(vs_madvise(vs_uffd_mm(u), (unsigned long)p + PG, PG,
				    VS_MADV_DONTNEED),
			 0);
	want_bus(try_load(p + PG + 1, &v), p + PG + 1,
		 "load past EOF after DONTNEED");
	watchdog_end(&alrm);
	/* The page before EOF still works. */
	ck_assert_int_eq(try_store(p + 5, 3), 0);
	ck_assert_int_eq(((volatile char *)p)[5], 3);

	ck_assert_int_eq(vs_file_destroy(f), 0);
	region_done(u);
	ck_assert_int_eq(sigaction(SIGBUS, NULL, &now), 0);
	ck_assert_msg(now.sa_sigaction == on_caught,
		      "destroy did not give SIGBUS back to the handler "
		      "installed before the region");
	catch_end(SIGBUS, &old);
}
END_TEST

/*
 * 7b. A SIGBUS that is no fault of a region reaches the handler that
 * was there before (sigbus mode chains it; the others never see it): a
 * real file mapping past its end, and a SIGBUS sent to the thread.
 */
static int try_raise(int sig)
{
	caught_sig = 0;
	caught_addr = NULL;
	if (sigsetjmp(catch_env, 1) == 0)
		raise(sig);
	return caught_sig;
}

START_TEST(sigbus_foreign_chains)
{
	struct sigaction old;
	struct vs_uffd *u;
	char *m, v;
	int fd;

	catch_begin(SIGBUS, &old);
	u = region_new(_i);
	fd = memfd_create("test_uffd", MFD_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	m = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(try_load(m + 9, &v), SIGBUS);
	ck_assert_ptr_eq(caught_addr, m + 9);
	ck_assert_int_eq(caught_code, BUS_ADRERR);
	ck_assert_int_eq(try_raise(SIGBUS), SIGBUS);
	ck_assert_int_eq(caught_code, SI_TKILL);
	ck_assert_int_eq(munmap(m, PG), 0);
	close(fd);
	ck_assert_uint_eq(stats_of(u).faults, 0);
	region_done(u);
	catch_end(SIGBUS, &old);
}
END_TEST

/* 7c. So is a fault the model refuses with OOM: the pool runs dry. */
START_TEST(sigbus_oom)
{
	struct sigaction old, alrm;
	struct vs_uffd *u = NULL;
	int sig = 0, err;
	size_t i;
	char *p;

	if (!can_refuse(_i))
		return;
	catch_begin(SIGBUS, &old);
	ck_assert_int_eq(vs_thread_attach(), 0);
	err = region_try(&u, _i, REGION, 8);
	ck_assert_msg(err == 0, "%s: %d", case_name(_i), err);
	p = map_anon(u, 64);

	watchdog_begin(&alrm);
	for (i = 0; i < 64 && !sig; i++)
		sig = try_store(p + i * PG, 1);
	watchdog_end(&alrm);
	ck_assert_msg(sig == SIGBUS, "64 pages from a pool of 8: signal %d",
		      sig);
	want_bus(sig, p + (i - 1) * PG, "store with the pool empty");
	ck_assert_uint_ge(stats_of(u).sigbus, 1);
	/* The pages that were had keep their data. */
	ck_assert_int_eq(((volatile char *)p)[0], 1);
	region_done(u);
	catch_end(SIGBUS, &old);
}
END_TEST

/*
 * 8. vs_fork: the model-only child sees what real stores wrote before
 * the fork; the parent's later stores copy (COW) and the child keeps
 * the old bytes.
 */
START_TEST(fork_sees_real_stores)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_mm *mm = vs_uffd_mm(u), *child = NULL;
	char *p = map_anon(u, 2);
	struct vs_uffd_stats st0, st;

	fill(p, 2 * PG, 1);
	ck_assert_int_eq(vs_fork(mm, &child), 0);
	check_model(child, p, 2 * PG, 1, "child after the fork");

	st0 = stats_of(u);
	fill(p, PG, 2);
	st = stats_of(u);
	ck_assert_uint_ge(st.wp_faults - st0.wp_faults, 1);
	check_fill(p, 0, PG, 2, "parent after its store");
	check_fill(p, PG, 2 * PG, 1, "parent's untouched page");
	check_model(child, p, 2 * PG, 1, "child after the parent's store");

	ck_assert_int_eq(vs_mm_destroy(child), 0);
	check_fill(p, 0, PG, 2, "parent after the child went");
	region_done(u);
}
END_TEST

/*
 * 8b. The child sees the shared file pages the parent wrote, and it
 * outlives the region (the pool is shared; the last mm frees it).
 */
START_TEST(fork_child_outlives_region)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_mm *mm = vs_uffd_mm(u), *child = NULL;
	struct vs_file *f = file_new(u, PG);
	char *s = map_file(u, 1, VS_MAP_SHARED, f);
	char *p = map_anon(u, 1);

	fill(s, PG, 1);
	fill(p, PG, 2);
	ck_assert_int_eq(vs_fork(mm, &child), 0);
	ck_assert_int_eq(vs_file_destroy(f), 0);
	check_model(child, s, PG, 1, "child's shared file page");
	region_done(u);
	check_model(child, s, PG, 1, "child's shared page, region gone");
	check_model(child, p, PG, 2, "child's private page, region gone");
	ck_assert_int_eq(vs_mm_destroy(child), 0);
}
END_TEST

/*
 * 9. vs_mremap moves the data: real loads at the new place see it, the
 * old place is a hole (SIGSEGV).
 */
START_TEST(mremap_moves_data)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_mm *mm = vs_uffd_mm(u);
	char *base = vs_uffd_base(u);
	char *p = map_anon(u, 2), *q = base + 16 * PG;
	struct sigaction old;
	char v;

	ck_assert_msg(p >= q + 2 * PG, "mapped at %p, base %p", (void *)p,
		      (void *)base);
	fill(p, 2 * PG, 1);
	ck_assert_int_eq(vs_mremap(mm, (unsigned long)p, 2 * PG, 2 * PG,
				   VS_MREMAP_MAYMOVE | VS_MREMAP_FIXED,
				   (unsigned long)q),
			 (long)q);
	check_fill(q, 0, 2 * PG, 1, "real loads at the new place");
	check_model(mm, q, 2 * PG, 1, "model at the new place");
	fill(q, PG, 2);
	check_fill(q, 0, PG, 2, "stores at the new place");

	catch_begin(SIGSEGV, &old);
	want_segv(try_load(p, &v), p, "load at the old place");
	want_segv(try_store(p + PG + 3, 1), p + PG + 3,
		  "store at the old place");
	catch_end(SIGSEGV, &old);
	region_done(u);
}
END_TEST

/* 9b. MAP_FIXED over a mapping: the new one starts from zero. */
START_TEST(map_fixed_replaces)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_mm *mm = vs_uffd_mm(u);
	char *p = map_anon(u, 2);

	fill(p, 2 * PG, 1);
	ck_assert_int_eq(vs_mmap(mm, (unsigned long)p, 2 * PG, RW,
				 ANON | VS_MAP_FIXED, NULL, 0),
			 (long)p);
	check_zero(p, 2 * PG, "the mapping put over it");
	fill(p, PG, 2);
	check_fill(p, 0, PG, 2, "stores to the new mapping");
	region_done(u);
}
END_TEST

/* 9c. The heap (vs_brk) is real memory too; shrinking it is munmap. */
START_TEST(brk_grows_and_shrinks)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_mm *mm = vs_uffd_mm(u);
	unsigned long b = mm->brk;
	struct sigaction old;
	char *p = (char *)b, v;

	in_region(u, (long)b, 2 * PG);
	ck_assert_uint_eq(vs_brk(mm, b + 2 * PG), b + 2 * PG);
	fill(p, 2 * PG, 1);
	check_fill(p, 0, 2 * PG, 1, "the heap");
	ck_assert_uint_eq(vs_brk(mm, b + PG), b + PG);
	check_fill(p, 0, PG, 1, "the heap, shrunk");
	catch_begin(SIGSEGV, &old);
	want_segv(try_load(p + PG, &v), p + PG, "load past the break");
	catch_end(SIGSEGV, &old);
	/* Grown again: the page comes back empty. */
	ck_assert_uint_eq(vs_brk(mm, b + 2 * PG), b + 2 * PG);
	check_zero(p + PG, PG, "the heap, grown again");
	region_done(u);
}
END_TEST

/* 9d. A moved shared file mapping takes its page cache along. */
START_TEST(mremap_shared_file)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_mm *mm = vs_uffd_mm(u);
	struct vs_file *f = file_new(u, 2 * PG);
	char *p = map_file(u, 2, VS_MAP_SHARED, f);
	char *q = (char *)vs_uffd_base(u) + 32 * PG;

	fill(p, 2 * PG, 1);
	ck_assert_int_eq(vs_mremap(mm, (unsigned long)p, 2 * PG, 2 * PG,
				   VS_MREMAP_MAYMOVE | VS_MREMAP_FIXED,
				   (unsigned long)q),
			 (long)q);
	check_fill(q, 0, 2 * PG, 1, "real loads at the new place");
	fill(q, PG, 2);
	ck_assert_int_eq(vs_madvise(mm, (unsigned long)q, 2 * PG,
				    VS_MADV_DONTNEED),
			 0);
	check_model(mm, q, PG, 2, "page cache, page 0");
	check_fill(q, PG, 2 * PG, 1, "page 1 after DONTNEED");
	ck_assert_int_eq(vs_file_destroy(f), 0);
	region_done(u);
}
END_TEST

/* 9e. MAP_POPULATE fills the model; real accesses then install it. */
START_TEST(populate_then_touch)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_mm *mm = vs_uffd_mm(u);
	struct vs_file *f = file_new(u, 2 * PG);
	char *s = map_file(u, 2, VS_MAP_SHARED, f), *p;

	fill(s, 2 * PG, 1);
	ck_assert_int_eq(vs_munmap(mm, (unsigned long)s, 2 * PG), 0);
	p = in_region(u, vs_mmap(mm, 0, 2 * PG, RW,
				 VS_MAP_SHARED | VS_MAP_POPULATE, f, 0),
		      2 * PG);
	check_fill(p, 0, 2 * PG, 1, "populated shared file mapping");
	p = in_region(u, vs_mmap(mm, 0, 2 * PG, RW, ANON | VS_MAP_POPULATE,
				 NULL, 0),
		      2 * PG);
	check_zero(p, 2 * PG, "populated anonymous mapping");
	fill(p, 2 * PG, 2);
	check_fill(p, 0, 2 * PG, 2, "populated anonymous mapping, written");
	ck_assert_int_eq(vs_file_destroy(f), 0);
	region_done(u);
}
END_TEST

/* Another attached thread's faults, counted under its own TID. */
struct toucher {
	char *p;
	size_t pages;
	pid_t tid;
};

static void *toucher_main(void *arg)
{
	struct toucher *t = arg;
	size_t i;

	(void)vs_thread_attach();
	t->tid = test_gettid();
	for (i = 0; i < t->pages; i++)
		((volatile char *)t->p)[i * PG] = 1;
	vs_thread_detach();
	return NULL;
}

START_TEST(thread_stats_two_threads)
{
	struct vs_uffd *u = region_new(_i);
	struct toucher t = { map_anon(u, 4), 4, 0 };
	struct vs_uffd_thread_stat ts[4];
	struct vs_uffd_stats st;
	char *p = map_anon(u, 1);
	pthread_t th;
	int n;

	p[0] = 1;
	vs_test_thread_create(&th, toucher_main, &t);
	vs_test_thread_join(th);
	st = stats_of(u);
	n = vs_uffd_thread_stats(u, ts, (int)VS_ARRAY_SIZE(ts));
	ck_assert_int_eq(n, 2);
	/* Most faults first. */
	ck_assert_int_eq(ts[0].tid, t.tid);
	ck_assert_uint_ge(ts[0].faults, 4);
	ck_assert_int_eq(ts[1].tid, test_gettid());
	ck_assert_uint_ge(ts[1].faults, 1);
	ck_assert_uint_ge(ts[0].faults, ts[1].faults);
	ck_assert_uint_eq(ts[0].faults + ts[1].faults, st.faults);
	ck_assert_int_eq(vs_uffd_thread_stats(u, ts, 1), 1);
	ck_assert_int_eq(ts[0].tid, t.tid);
	region_done(u);
}
END_TEST

/*
 * Several threads fault the same fresh pages at once, each storing its
 * own bytes: one install wins per page (the others find it present),
 * and no store is lost.
 */
#define NR_TOUCHERS 4
#define SHARED_PAGES 16

struct racer {
	char *p;
	int id;
	vs_atomic32_t *go;
	int late;	/* the start signal never came */
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	volatile char *v = r->p;
	int k, pg;

	(void)vs_thread_attach();
	if (!vs_test_wait_eq(r->go, 1, VS_TEST_WAIT_NS)) {
		r->late = 1;
		return NULL;
	}
	for (k = 0; k < SHARED_PAGES; k++) {
		/* Each in its own order; the odd ones read first. */
		pg = (k + r->id * 5) % SHARED_PAGES;
		if (r->id & 1)
			(void)v[(size_t)pg * PG + 2048];
		v[(size_t)pg * PG + (size_t)r->id * 64] = (char)(r->id + 1);
	}
	vs_thread_detach();
	return NULL;
}

START_TEST(concurrent_touch)
{
	struct vs_uffd *u = region_new(_i);
	char *p = map_anon(u, SHARED_PAGES);
	struct racer r[NR_TOUCHERS];
	pthread_t th[NR_TOUCHERS];
	vs_atomic32_t go = 0;
	int t, pg;

	for (t = 0; t < NR_TOUCHERS; t++) {
		r[t] = (struct racer){ p, t, &go, 0 };
		vs_test_thread_create(&th[t], racer_main, &r[t]);
	}
	vs_test_set(&go, 1);
	for (t = 0; t < NR_TOUCHERS; t++) {
		vs_test_thread_join(th[t]);
		ck_assert_int_eq(r[t].late, 0);
	}
	for (pg = 0; pg < SHARED_PAGES; pg++)
		for (t = 0; t < NR_TOUCHERS; t++)
			ck_assert_msg(((volatile char *)p)[(size_t)pg * PG +
							   (size_t)t * 64] ==
					      (char)(t + 1),
				      "page %d: thread %d's store lost", pg, t);
	ck_assert_uint_ge(stats_of(u).faults, SHARED_PAGES);
	region_done(u);
}
END_TEST

/* 10. Teardown never hangs: nothing mapped, and after faults. */
START_TEST(teardown)
{
	struct vs_uffd *u = region_new(_i);
	char *p;

	region_done(u);

	u = region_new(_i);
	p = map_anon(u, 8);
	fill(p, 8 * PG, 1);
	check_fill(p, 0, 8 * PG, 1, "before destroy");
	region_done(u);

	/* The same place can be had again. */
	u = region_new(_i);
	p = map_anon(u, 1);
	check_zero(p, PG, "a new region");
	region_done(u);
}
END_TEST

/*
 * Two regions at once, each resolving its own faults; destroying the
 * first leaves the second working (in sigbus mode the handler stays
 * while a region is left).
 */
START_TEST(two_regions)
{
	struct vs_uffd *a = region_new(_i), *b = region_new(_i);
	char *pa = map_anon(a, 2), *pb = map_anon(b, 2);

	ck_assert_ptr_ne(vs_uffd_base(a), vs_uffd_base(b));
	fill(pa, 2 * PG, 1);
	fill(pb, 2 * PG, 2);
	check_fill(pa, 0, 2 * PG, 1, "first region");
	check_fill(pb, 0, 2 * PG, 2, "second region");
	region_done(a);
	check_fill(pb, 0, 2 * PG, 2, "second region, first gone");
	ck_assert_int_eq(vs_madvise(vs_uffd_mm(b), (unsigned long)pb, PG,
				    VS_MADV_DONTNEED),
			 0);
	check_zero(pb, PG, "second region, zapped, first gone");
	fill(pb, PG, 3);
	check_fill(pb, 0, PG, 3, "second region, written again");
	region_done(b);
}
END_TEST

/*
 * VS_UFFD_MAX_REGIONS regions may exist at once; the next is -EBUSY
 * until one goes.  That refusal comes after the uffd, the reservation,
 * the /proc fds and the mm were made: all of them go again.
 */
START_TEST(region_limit)
{
	struct vs_uffd *u[VS_UFFD_MAX_REGIONS + 1] = { NULL };
	struct footprint fp;
	int k, err;

	ck_assert_int_eq(vs_thread_attach(), 0);
	for (k = 0; k < VS_UFFD_MAX_REGIONS; k++)
		ck_assert_int_eq(region_try(&u[k], _i, 16 * PG, 16), 0);
	footprint_take(&fp);
	err = region_try(&u[k], _i, 16 * PG, 16);
	if (!err)
		(void)vs_uffd_destroy(u[k]);
	ck_assert_msg(err == -EBUSY, "%s: region %d: %d (%s), want -EBUSY",
		      case_name(_i), VS_UFFD_MAX_REGIONS + 1, err,
		      vs_err_name(err));
	footprint_same(&fp, "the region too many");
	ck_assert_int_eq(vs_uffd_destroy(u[0]), 0);
	ck_assert_int_eq(region_try(&u[0], _i, 16 * PG, 16), 0);
	for (k = 0; k < VS_UFFD_MAX_REGIONS; k++)
		ck_assert_int_eq(vs_uffd_destroy(u[k]), 0);
}
END_TEST

/*
 * vs_uffd_destroy() while a file made on the region's pool still holds
 * page-cache pages: -EBUSY with nothing freed, so it can be called again
 * once the file is gone.
 */
START_TEST(destroy_busy_keeps_region)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_file *f = file_new(u, PG);
	char *p = map_file(u, 1, VS_MAP_SHARED, f);
	char *base = vs_uffd_base(u);
	struct vs_uffd_stats st;
	struct vs_vma *vma;
	int err;

	p[0] = 1;	/* the page cache now holds a page of the pool */
	err = vs_uffd_destroy(u);
	ck_assert_msg(err == -EBUSY, "destroy with a live file: %d (%s)", err,
		      vs_err_name(err));
	/* Nothing freed: the real range is still mapped (msync() says
	 * ENOMEM where nothing is), and the region can be destroyed
	 * again. */
	ck_assert_msg(msync(base, PG, MS_ASYNC) == 0,
		      "vs_uffd_destroy() returned -EBUSY but unmapped the "
		      "real range: the region was freed (%s)",
		      strerror(errno));
	ck_assert_ptr_eq(vs_uffd_base(u), base);
	ck_assert_ptr_nonnull(vs_uffd_mm(u));
	/* Every mapping is gone, but the region works. */
	ck_assert_int_eq(vs_uffd_stats_get(u, &st), 0);
	vs_mmap_read_lock(vs_uffd_mm(u));
	vma = vs_find_vma(vs_uffd_mm(u), 0);
	vs_mmap_read_unlock(vs_uffd_mm(u));
	ck_assert_ptr_null(vma);
	p = map_anon(u, 2);
	fill(p, 2 * PG, 4);
	check_fill(p, 0, 2 * PG, 4, "a mapping after the -EBUSY");
	ck_assert_uint_gt(stats_of(u).faults, st.faults);
	ck_assert_int_eq(vs_file_destroy(f), 0);
	ck_assert_int_eq(vs_uffd_destroy(u), 0);
}
END_TEST

/*
 * With no SIGBUS handler at all, a model SIGBUS kills the process with
 * SIGBUS, as the kernel would (in a grandchild, without a core dump).
 */
static void sigbus_default_child(int i)
{
	struct rlimit no_core = { 0, 0 };
	struct vs_uffd *u = NULL;
	struct vs_file *f = NULL;
	long addr;

	(void)setrlimit(RLIMIT_CORE, &no_core);
	(void)signal(SIGBUS, SIG_DFL);
	(void)vs_thread_attach();
	if (region_try(&u, i, REGION, 16))
		_exit(10);
	if (vs_file_create(&f, vs_uffd_mm(u)->pool, PG, O_RDWR))
		_exit(11);
	addr = vs_mmap(vs_uffd_mm(u), 0, 2 * PG, RW, VS_MAP_SHARED, f, 0);
	if (addr < 0)
		_exit(12);
	(void)((volatile char *)addr)[PG];	/* past EOF */
	_exit(0);	/* still alive */
}

START_TEST(sigbus_default_kills)
{
	int status;
	pid_t pid;

	if (!can_refuse(_i))
		return;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		sigbus_default_child(_i);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS,
		      "%s: load past EOF, no handler: status %#x, want death "
		      "by SIGBUS", case_name(_i), status);
}
END_TEST

/*
 * Up to 64 faulting threads are told apart; the rest count under TID 0.
 * The threads all live until every one has faulted, so no TID is reused.
 */
#define MANY_THREADS 70

struct crowd {
	char *p;
	vs_atomic32_t done;	/* threads that have faulted */
	pid_t tid[MANY_THREADS];
	int late;
};

struct crowd_member {
	struct crowd *c;
	int id;
};

static void *crowd_main(void *arg)
{
	struct crowd_member *m = arg;
	struct crowd *c = m->c;

	(void)vs_thread_attach();
	c->tid[m->id] = test_gettid();
	((volatile char *)c->p)[(size_t)m->id * PG] = 1;
	vs_fetch_add(&c->done, 1);
	vs_futex_wake(&c->done, INT32_MAX);
	if (!vs_test_wait_eq(&c->done, MANY_THREADS, VS_TEST_WAIT_NS))
		c->late = 1;
	vs_thread_detach();
	return NULL;
}

START_TEST(thread_stats_overflow)
{
	struct vs_uffd *u = region_new(_i);
	struct vs_uffd_thread_stat ts[MANY_THREADS + 1];
	struct crowd_member m[MANY_THREADS];
	pthread_t th[MANY_THREADS];
	struct crowd *c = calloc(1, sizeof(*c));
	unsigned long sum = 0, rest = 0;
	int k, n, j, named = 0;

	ck_assert_ptr_nonnull(c);
	c->p = map_anon(u, MANY_THREADS);
	for (k = 0; k < MANY_THREADS; k++) {
		m[k] = (struct crowd_member){ c, k };
		vs_test_thread_create(&th[k], crowd_main, &m[k]);
	}
	for (k = 0; k < MANY_THREADS; k++)
		vs_test_thread_join(th[k]);
	ck_assert_int_eq(c->late, 0);
	n = vs_uffd_thread_stats(u, ts, MANY_THREADS + 1);
	ck_assert_int_le(n, 65);
	for (j = 0; j < n; j++) {
		sum += ts[j].faults;
		if (!ts[j].tid) {
			rest += ts[j].faults;
			continue;
		}
		for (k = 0; k < MANY_THREADS && c->tid[k] != ts[j].tid; k++)
			;
		ck_assert_msg(k < MANY_THREADS, "TID %d faulted nowhere",
			      (int)ts[j].tid);
		named++;
	}
	ck_assert_int_eq(named, 64);
	ck_assert_uint_ge(rest, MANY_THREADS - 64);
	ck_assert_uint_eq(sum, stats_of(u).faults);
	free(c);
	region_done(u);
}
END_TEST

/*
 * sigbus mode: a thread that touches the region without
 * vs_thread_attach() is told so on stderr and aborted.  In a
 * grandchild, whose stderr is a pipe.
 */
static void *unattached_main(void *arg)
{
	((volatile char *)arg)[0] = 1;
	return NULL;
}

static void unattached_child(int errfd)
{
	struct vs_uffd_options o = { .size = REGION, .mode = VS_UFFD_SIGBUS };
	struct vs_uffd *u = NULL;
	pthread_t th;
	long addr;

	if (dup2(errfd, STDERR_FILENO) < 0)
		_exit(10);
	(void)vs_thread_attach();
	o.mm.pool_pages = 16;
	if (vs_uffd_create(&u, &o))
		_exit(11);
	addr = vs_mmap(vs_uffd_mm(u), 0, PG, RW, ANON, NULL, 0);
	if (addr < 0)
		_exit(12);
	if (pthread_create(&th, NULL, unattached_main, (void *)addr))
		_exit(13);
	(void)pthread_join(th, NULL);
	_exit(0);	/* not aborted */
}

START_TEST(sigbus_unattached_aborts)
{
	char msg[512];
	int p[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[0]);
		unattached_child(p[1]);
	}
	close(p[1]);
	(void)vs_test_read_all(p[0], msg, sizeof(msg));
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		      "unattached toucher: status %#x, want SIGABRT (%s)",
		      status, msg);
	ck_assert_ptr_nonnull(strstr(msg, "vs_thread_attach()"));
}
END_TEST

Suite *uffd_suite(void)
{
	Suite *s = suite_create("uffd");
	TCase *tc = uffd_tcase(s, "access");

	vs_test_add_loop(tc, NR_CASES, anon_rw, zero_page_then_write,
			 anon_dontneed_zaps, thread_stats_two_threads,
			 concurrent_touch);
	vs_test_add_loop(tc, NR_MODE_CASES, thread_stats_overflow);

	tc = uffd_tcase(s, "signals");
	vs_test_add_loop(tc, NR_CASES, sigsegv_delivery, sigbus_past_eof,
			 sigbus_oom);
	vs_test_add_loop(tc, NR_MODE_CASES, sigbus_foreign_chains,
			 sigbus_default_kills);
	vs_test_add(tc, sigbus_unattached_aborts);

	tc = uffd_tcase(s, "mirror");
	vs_test_add_loop(tc, NR_CASES, shared_file_keeps_data,
			 shared_anon_keeps_data, private_file_cow,
			 fork_sees_real_stores, fork_child_outlives_region,
			 mremap_moves_data, map_fixed_replaces,
			 brk_grows_and_shrinks, mremap_shared_file,
			 populate_then_touch);

	/* Mode only: the strategy does not matter here. */
	tc = uffd_tcase(s, "lifetime");
	vs_test_add_loop(tc, NR_CASES, teardown, two_regions);
	vs_test_add_loop(tc, NR_MODE_CASES, region_limit,
			 destroy_busy_keeps_region);
	return s;
}
