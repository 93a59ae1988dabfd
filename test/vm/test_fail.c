/* SPDX-License-Identifier: MIT */
/*
 * test/vm/test_fail.c - allocation failures on demand (vmsim/fail.h): the
 * nth allocation, a seeded probability, the kinds and the cache filter,
 * the words of VMSIM_FAIL, and bad options refused.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vmsim/fail.h>
#include <vmsim/fault.h>
#include <vmsim/mm.h>
#include <vmsim/page.h>
#include <vmsim/pgtable.h>
#include <vmsim/rcu.h>
#include <vmsim/slab.h>
#include <vmsim/thread.h>

#include "test.h"

Suite *fail_suite(void);

#define PG VS_PAGE_SIZE

static struct vs_kmem_cache a_cache = VS_KMEM_CACHE_INIT("fail_a", 64, 8);
static struct vs_kmem_cache b_cache = VS_KMEM_CACHE_INIT("fail_b", 64, 8);

/* Which of @n allocations from @c failed, as a bit each (1: failed). */
static unsigned long pattern(struct vs_kmem_cache *c, int n)
{
	unsigned long bits = 0;
	void *o;
	int i;

	for (i = 0; i < n; i++) {
		o = vs_kmem_cache_alloc(c);
		if (o)
			vs_kmem_cache_free(c, o);
		else
			bits |= 1UL << i;
	}
	return bits;
}

/* nth: every nth from now, while times allows; the count says so. */
START_TEST(fail_nth)
{
	struct vs_fail_options o = { .kinds = VS_FAIL_SLAB, .nth = 3 };

	ck_assert_int_eq(vs_fail_set(&o), 0);
	ck_assert_uint_eq(pattern(&a_cache, 10), 0x124);	/* 3, 6, 9 */
	ck_assert_uint_eq(vs_fail_injected(), 3);
	o.times = 1;
	ck_assert_int_eq(vs_fail_set(&o), 0);
	ck_assert_uint_eq(pattern(&a_cache, 10), 0x4);
	ck_assert_uint_eq(vs_fail_injected(), 1);
	ck_assert_int_eq(vs_fail_set(NULL), 0);
	ck_assert_uint_eq(pattern(&a_cache, 10), 0);
	ck_assert_uint_eq(vs_fail_injected(), 0);
}
END_TEST

/* A probability: the same seed fails the same allocations, about as
 * often as asked; 1 fails every one. */
START_TEST(fail_probability)
{
	struct vs_fail_options o = { .kinds = VS_FAIL_SLAB,
				     .probability = 0.25, .seed = 7 };
	unsigned long first, again;
	int n;

	ck_assert_int_eq(vs_fail_set(&o), 0);
	first = pattern(&a_cache, 64);
	ck_assert_int_eq(vs_fail_set(&o), 0);
	again = pattern(&a_cache, 64);
	ck_assert_uint_eq(first, again);
	n = __builtin_popcountl(first);
	ck_assert_msg(n >= 6 && n <= 26, "%d of 64 failed at p 0.25", n);
	o.seed = 8;
	ck_assert_int_eq(vs_fail_set(&o), 0);
	ck_assert_uint_ne(pattern(&a_cache, 64), first);
	o.probability = 1;
	ck_assert_int_eq(vs_fail_set(&o), 0);
	ck_assert_uint_eq(pattern(&a_cache, 8), 0xff);
	ck_assert_int_eq(vs_fail_set(NULL), 0);
}
END_TEST

/* The kinds, and the cache filter (a prefix of the name). */
START_TEST(fail_kinds_and_cache)
{
	struct vs_fail_options o = { .kinds = VS_FAIL_PAGE, .nth = 1 };
	struct vs_page_pool *pool;
	struct vs_page *p;

	ck_assert_int_eq(vs_page_pool_create(&pool, 8), 0);
	ck_assert_int_eq(vs_fail_set(&o), 0);
	ck_assert_uint_eq(pattern(&a_cache, 4), 0);	/* not a page */
	ck_assert_ptr_null(vs_alloc_page(pool));
	o.kinds = VS_FAIL_SLAB;
	o.cache = "fail_b";
	ck_assert_int_eq(vs_fail_set(&o), 0);
	p = vs_alloc_page(pool);
	ck_assert_ptr_nonnull(p);
	vs_put_page(pool, p);
	ck_assert_uint_eq(pattern(&a_cache, 4), 0);
	ck_assert_uint_eq(pattern(&b_cache, 4), 0xf);
	o.cache = "fail_";
	ck_assert_int_eq(vs_fail_set(&o), 0);
	ck_assert_uint_eq(pattern(&a_cache, 2), 0x3);
	ck_assert_int_eq(vs_fail_set(NULL), 0);
	ck_assert_int_eq(vs_page_pool_destroy(pool), 0);
}
END_TEST

/* An allocation the kernel makes with __GFP_NOFAIL is never failed:
 * munmap's erase from the index, with every object allocation failing,
 * ends (vm/vma.c retries it). */
START_TEST(fail_nofail)
{
	struct vs_fail_options o = { .kinds = VS_FAIL_SLAB, .probability = 1 };
	struct vs_mm_options mo = { .pool_pages = 16 };
	struct vs_mm *mm = NULL;
	unsigned long a = 0x100000000UL;
	int k;

	ck_assert_int_eq(vs_thread_attach(), 0);
	ck_assert_int_eq(vs_mm_create(&mm, &mo), 0);
	/* Three VMAs (every other page), so that the erase copies a node. */
	for (k = 0; k < 3; k++)
		ck_assert_int_eq(vs_mmap(mm, a + 2 * (unsigned long)k * PG, PG,
					 VS_PROT_READ, VS_MAP_PRIVATE |
					 VS_MAP_ANONYMOUS | VS_MAP_FIXED, NULL,
					 0), (long)(a + 2 * (unsigned long)k *
						    PG));
	ck_assert_int_eq(vs_fail_set(&o), 0);
	ck_assert_int_eq(vs_munmap(mm, a + 2 * PG, PG), 0);
	ck_assert_int_eq(vs_fail_set(NULL), 0);
	ck_assert_int_eq(vs_mm_destroy(mm), 0);
}
END_TEST

/* The words of VMSIM_FAIL; bad ones and bad options refused. */
START_TEST(fail_parse_and_refuse)
{
	struct vs_fail_options o;
	char s[128];

	snprintf(s, sizeof(s), "slab,page,nth=5,seed=3,times=2,cache=pgt");
	ck_assert_int_eq(vs_fail_parse(s, &o), 0);
	ck_assert_uint_eq(o.kinds, VS_FAIL_SLAB | VS_FAIL_PAGE);
	ck_assert_uint_eq(o.nth, 5);
	ck_assert_uint_eq(o.seed, 3);
	ck_assert_uint_eq(o.times, 2);
	ck_assert_str_eq(o.cache, "pgt");
	snprintf(s, sizeof(s), "page,p=0.5");
	ck_assert_int_eq(vs_fail_parse(s, &o), 0);
	ck_assert(o.probability == 0.5);
	snprintf(s, sizeof(s), "slab,nth=-1");
	ck_assert_int_eq(vs_fail_parse(s, &o), -EINVAL);
	snprintf(s, sizeof(s), "slab,nth=3x");
	ck_assert_int_eq(vs_fail_parse(s, &o), -EINVAL);
	snprintf(s, sizeof(s), "slub");
	ck_assert_int_eq(vs_fail_parse(s, &o), -EINVAL);
	ck_assert_int_eq(vs_fail_parse(NULL, &o), -EINVAL);

	snprintf(s, sizeof(s), "nth=3");		/* no kind */
	ck_assert_int_eq(vs_fail_parse(s, &o), -EINVAL);
	snprintf(s, sizeof(s), "slab,,nth=3");
	ck_assert_int_eq(vs_fail_parse(s, &o), -EINVAL);
	snprintf(s, sizeof(s), "slab,nth= 1");
	ck_assert_int_eq(vs_fail_parse(s, &o), -EINVAL);
	snprintf(s, sizeof(s), "slab,nth=+1");
	ck_assert_int_eq(vs_fail_parse(s, &o), -EINVAL);
	snprintf(s, sizeof(s), "slab,nth=010");		/* decimal */
	ck_assert_int_eq(vs_fail_parse(s, &o), 0);
	ck_assert_uint_eq(o.nth, 10);

	/* Injection on (every allocation), then bad options: refused,
	 * and it stays on with its count. */
	memset(&o, 0, sizeof(o));
	o.kinds = VS_FAIL_SLAB;
	o.nth = 1;
	ck_assert_int_eq(vs_fail_set(&o), 0);
	ck_assert_uint_eq(pattern(&a_cache, 2), 0x3);
	o.kinds = 4;
	ck_assert_int_eq(vs_fail_set(&o), -EINVAL);
	o.kinds = VS_FAIL_SLAB;
	o.nth = 0;			/* neither nth nor a probability */
	ck_assert_int_eq(vs_fail_set(&o), -EINVAL);
	o.nth = 1;
	o.probability = 0.5;		/* both */
	ck_assert_int_eq(vs_fail_set(&o), -EINVAL);
	o.nth = 0;
	o.probability = 1.5;
	ck_assert_int_eq(vs_fail_set(&o), -EINVAL);
	o.probability = 0.5;
	o.cache = "a name of more than thirty-one bytes";
	ck_assert_int_eq(vs_fail_set(&o), -EINVAL);
	o.kinds = VS_FAIL_PAGE;
	o.cache = "fail_a";			/* a cache, but no slab */
	ck_assert_int_eq(vs_fail_set(&o), -EINVAL);
	ck_assert_uint_eq(vs_fail_injected(), 2);
	ck_assert_uint_eq(pattern(&a_cache, 2), 0x3);
	ck_assert_uint_eq(vs_fail_injected(), 4);
	ck_assert_int_eq(vs_fail_set(NULL), 0);
	ck_assert_uint_eq(pattern(&a_cache, 8), 0);
}
END_TEST

/*
 * Run vmsim-test again as "vmsim-test @arg1 @arg2" (@arg2 may be NULL)
 * with VMSIM_FAIL=@env and no CK_ selection of ours, its file
 * descriptor @fd (1 or 2) read into @out (@len bytes, NUL-terminated).
 * Return: its exit status; it must exit.
 */
static int run_self(const char *env, int fd, const char *arg1,
		    const char *arg2, char *out, size_t len)
{
	int p[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(p[1], fd);
		setenv("VMSIM_FAIL", env, 1);
		unsetenv("CK_RUN_SUITE");
		unsetenv("CK_RUN_CASE");
		unsetenv("CK_INCLUDE_TAGS");
		unsetenv("CK_EXCLUDE_TAGS");
		execl("/proc/self/exe", "vmsim-test", arg1, arg2,
		      (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	(void)vs_test_read_all(p[0], out, len);
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "vmsim-test %s with VMSIM_FAIL='%s': "
		      "status %#x: %s", arg1, env, status, out);
	return WEXITSTATUS(status);
}

/* A bad VMSIM_FAIL ends the program before main(), exit 2, saying so. */
START_TEST(fail_env_refused)
{
	char out[512];

	ck_assert_int_eq(run_self("slab,nth=x", 2, "-l", NULL, out,
				  sizeof(out)), 2);
	ck_assert_msg(strstr(out, "VMSIM_FAIL='slab,nth=x': bad word 'nth=x'"),
		      "%s", out);
}
END_TEST

/*
 * A good VMSIM_FAIL is applied before main(): run as vmsim-test with it
 * set, this test sees the second and fourth object of its cache fail;
 * run without it, it runs itself so.
 */
#define ENV_FAIL "slab,cache=fail_a,nth=2,times=2"
START_TEST(fail_env_applied)
{
	const char *e = getenv("VMSIM_FAIL");
	char out[4096];
	int status;

	if (e && !strcmp(e, ENV_FAIL)) {	/* the run below */
		ck_assert_uint_eq(pattern(&b_cache, 4), 0);
		ck_assert_uint_eq(pattern(&a_cache, 6), 0xa);
		ck_assert_uint_eq(vs_fail_injected(), 2);
		return;
	}
	status = run_self(ENV_FAIL, 1, "fail", "env", out, sizeof(out));
	/* Both tests of the case ran, this one with VMSIM_FAIL. */
	ck_assert_msg(status == 0 &&
		      strstr(out, "Checks: 2, Failures: 0, Errors: 0"),
		      "vmsim-test fail env with VMSIM_FAIL='%s' exited %d: %s",
		      ENV_FAIL, status, out);
}
END_TEST

/* ---- every writer operation against every allocation it makes ------- */

#define A0 0x100000000UL
#define SPAN (64 * PG)		/* the pages compared, from A0 */
#define NR_VMAS 16
#define RW (VS_PROT_READ | VS_PROT_WRITE)
#define ANON (VS_MAP_PRIVATE | VS_MAP_ANONYMOUS | VS_MAP_FIXED)

/* What an operation that fails must leave as it found it. */
struct snap {
	int nr;			/* VMAs, adjacent equal ones as one */
	struct {
		unsigned long start, end, flags, pgoff;
		void *file, *anon_vma;
	} vma[NR_VMAS];
	uint64_t pte[SPAN / PG];	/* present PTEs, write bit aside */
	int writable[SPAN / PG];
	long rss[3];
	size_t free_pages;
};

static void snap_take(struct vs_mm *mm, struct snap *s)
{
	struct vs_vma *v;
	vs_atomic64_t *e;
	unsigned long a;
	int n = 0, k;

	memset(s, 0, sizeof(*s));
	vs_mmap_read_lock(mm);
	for (v = vs_find_vma(mm, 0); v; v = vs_find_vma(mm, v->vm_end)) {
		/* A split the kernel leaves after a failure is no change:
		 * the same mapping in two VMAs. */
		if (n && s->vma[n - 1].end == v->vm_start &&
		    s->vma[n - 1].flags == v->vm_flags &&
		    s->vma[n - 1].file == (void *)v->vm_file &&
		    s->vma[n - 1].anon_vma == (void *)v->anon_vma &&
		    s->vma[n - 1].pgoff +
		    (v->vm_start - s->vma[n - 1].start) / PG == v->vm_pgoff) {
			s->vma[n - 1].end = v->vm_end;
			continue;
		}
		ck_assert_int_lt(n, NR_VMAS);
		s->vma[n].start = v->vm_start;
		s->vma[n].end = v->vm_end;
		s->vma[n].flags = v->vm_flags;
		s->vma[n].pgoff = v->vm_pgoff;
		s->vma[n].file = v->vm_file;
		s->vma[n].anon_vma = v->anon_vma;
		n++;
	}
	s->nr = n;
	for (k = 0; k < (int)(SPAN / PG); k++) {
		a = A0 + (unsigned long)k * PG;
		e = vs_pte_offset(&mm->pgtable, a);
		s->pte[k] = e ? vs_ptep_get(e) : 0;
		if (!vs_pte_present(s->pte[k]))
			s->pte[k] = 0;
		s->writable[k] = vs_pte_write(s->pte[k]);
		s->pte[k] = s->pte[k] ? vs_pte_pfn(s->pte[k]) + 1 : 0;
	}
	vs_mmap_read_unlock(mm);
	s->rss[0] = vs_get_mm_counter(mm, VS_MM_ANONPAGES);
	s->rss[1] = vs_get_mm_counter(mm, VS_MM_FILEPAGES);
	s->rss[2] = vs_get_mm_counter(mm, VS_MM_SHMEMPAGES);
	vs_lru_drain_all(mm->pool);	/* the batches' references */
	s->free_pages = vs_page_pool_free_pages(mm->pool);
}

/* @a and @b the same; the write bits too unless !@wbits. */
static void snap_same(const struct snap *a, const struct snap *b, int wbits,
		      const char *what)
{
	int k;

	ck_assert_msg(a->nr == b->nr, "%s: %d VMAs, were %d", what, b->nr,
		      a->nr);
	for (k = 0; k < a->nr; k++)
		ck_assert_msg(!memcmp(&a->vma[k], &b->vma[k],
				      sizeof(a->vma[k])),
			      "%s: VMA %d is %lx-%lx flags %lx, was %lx-%lx "
			      "flags %lx", what, k, b->vma[k].start,
			      b->vma[k].end, b->vma[k].flags,
			      a->vma[k].start, a->vma[k].end,
			      a->vma[k].flags);
	for (k = 0; k < (int)(SPAN / PG); k++) {
		ck_assert_msg(a->pte[k] == b->pte[k], "%s: page %d's PTE "
			      "changed", what, k);
		ck_assert_msg(!wbits || a->writable[k] == b->writable[k],
			      "%s: page %d's write bit changed", what, k);
	}
	ck_assert_msg(!memcmp(a->rss, b->rss, sizeof(a->rss)),
		      "%s: RSS changed", what);
	ck_assert_msg(a->free_pages == b->free_pages, "%s: %zu free pages, "
		      "were %zu", what, b->free_pages, a->free_pages);
}

/* The mm each run starts from: a written private mapping, a read-only
 * one, a written shared one. */
static struct vs_mm *ops_mm(void)
{
	struct vs_mm_options o = { .pool_pages = 256 };
	struct vs_mm *mm = NULL;
	char buf[PG];
	int k;

	ck_assert_int_eq(vs_mm_create(&mm, &o), 0);
	ck_assert_int_eq(vs_mmap(mm, A0, 8 * PG, RW, ANON, NULL, 0),
			 (long)A0);
	for (k = 0; k < 8; k++) {
		memset(buf, 'a' + k, PG);
		ck_assert_int_eq(vs_write(mm, A0 + (unsigned long)k * PG, buf,
					  PG), 0);
	}
	ck_assert_int_eq(vs_mmap(mm, A0 + 16 * PG, 4 * PG, VS_PROT_READ,
				 ANON | VS_MAP_POPULATE, NULL, 0),
			 (long)(A0 + 16 * PG));
	ck_assert_int_eq(vs_mmap(mm, A0 + 32 * PG, 4 * PG, RW,
				 (ANON & ~VS_MAP_PRIVATE) | VS_MAP_SHARED |
				 VS_MAP_POPULATE, NULL, 0),
			 (long)(A0 + 32 * PG));
	return mm;
}

static struct vs_mm *forked;
static long slab_out;	/* vs_test_slab_out() before the sweep */

/*
 * The operations, then the faults that allocate (from FAULTS on), each
 * on the mm of ops_mm(), in the order of op_names[].  A fault writes a
 * byte at the address its preparation returned.
 */
static const char *const op_names[] = {
	"munmap", "mprotect", "mmap", "mmap over", "madvise", "mremap move",
	"mremap grow", "mremap part", "fork",
	"fault, anonymous page", "fault, zero page copied",
	"fault, copy-on-write after fork", "fault, shmem page",
	"fault, new page table",
};
#define FAULTS 9

/* Make ready, before injection, what fault @op needs: its address. */
static unsigned long ops_prep(struct vs_mm *mm, int op)
{
	unsigned long a = A0 + 40 * PG;

	forked = NULL;
	switch (op) {
	case FAULTS:		/* a private mapping never touched */
		ck_assert_int_eq(vs_mmap(mm, a, 4 * PG, RW, ANON, NULL, 0),
				 (long)a);
		return a;
	case FAULTS + 1:	/* the read-only one (zero pages), writable */
		ck_assert_int_eq(vs_mprotect(mm, A0 + 16 * PG, 4 * PG, RW), 0);
		return A0 + 16 * PG;
	case FAULTS + 2:
		ck_assert_int_eq(vs_fork(mm, &forked), 0);
		return A0;
	case FAULTS + 3:
		ck_assert_int_eq(vs_mmap(mm, a, 4 * PG, RW,
					 (ANON & ~VS_MAP_PRIVATE) |
					 VS_MAP_SHARED, NULL, 0), (long)a);
		return a;
	case FAULTS + 4:	/* the next PMD: no PTE page yet */
		a = A0 + VS_PMD_SIZE;
		ck_assert_int_eq(vs_mmap(mm, a, PG, RW, ANON, NULL, 0),
				 (long)a);
		return a;
	default:
		return 0;
	}
}

/* Run @op (at @a, a fault): the result, 0 or more for success. */
static long ops_run(struct vs_mm *mm, int op, unsigned long a)
{
	char byte = 'x';

	switch (op) {
	case 0:
		return vs_munmap(mm, A0 + 2 * PG, 2 * PG);
	case 1:
		return vs_mprotect(mm, A0 + 2 * PG, 2 * PG, VS_PROT_READ);
	case 2:
		return vs_mmap(mm, A0 + 48 * PG, 2 * PG, RW,
			       ANON | VS_MAP_POPULATE, NULL, 0);
	case 3:
		return vs_mmap(mm, A0 + 3 * PG, 2 * PG, RW,
			       (ANON & ~VS_MAP_PRIVATE) | VS_MAP_SHARED, NULL,
			       0);
	case 4:
		return vs_madvise(mm, A0 + 2 * PG, 2 * PG, VS_MADV_DONTNEED);
	case 5:
		return vs_mremap(mm, A0, 8 * PG, 8 * PG, VS_MREMAP_MAYMOVE |
				 VS_MREMAP_FIXED, A0 + VS_PMD_SIZE);
	case 6:
		return vs_mremap(mm, A0 + 16 * PG, 4 * PG, 6 * PG, 0, 0);
	case 7:
		return vs_mremap(mm, A0 + 2 * PG, 2 * PG, 4 * PG,
				 VS_MREMAP_MAYMOVE, 0);
	case 8:
		return vs_fork(mm, &forked);
	default:
		return vs_write(mm, a, &byte, 1);
	}
}

/*
 * Of two mms, @a and @b map the same: their VMAs alike (a file or not
 * in each; an anon_vma comes with a page, which MAP_POPULATE may miss),
 * and with @pages the same pages present, writable and counted in RSS
 * (not the same frames, nor as many free: the pool's per-slot lists and
 * RCU frees keep their own time).
 */
static void snap_alike(const struct snap *a, const struct snap *b,
		       int pages, const char *what)
{
	struct snap x = *a, y = *b;
	int k;

	for (k = 0; k < NR_VMAS; k++) {
		x.vma[k].file = (void *)(uintptr_t)!!x.vma[k].file;
		x.vma[k].anon_vma = NULL;
		y.vma[k].file = (void *)(uintptr_t)!!y.vma[k].file;
		y.vma[k].anon_vma = NULL;
	}
	for (k = 0; k < (int)(SPAN / PG); k++) {
		x.pte[k] = !!x.pte[k];
		y.pte[k] = !!y.pte[k];
	}
	if (!pages) {
		memcpy(y.pte, x.pte, sizeof(y.pte));
		memcpy(y.writable, x.writable, sizeof(y.writable));
		memcpy(y.rss, x.rss, sizeof(y.rss));
	}
	y.free_pages = x.free_pages;
	snap_same(&x, &y, 1, what);
}

/* The fork child, if there is one, goes; every page must come back. */
static void forked_destroy(const char *what)
{
	if (forked)
		ck_assert_msg(vs_mm_destroy(forked) == 0, "%s: the child's "
			      "vs_mm_destroy()", what);
	forked = NULL;
}

/* What an operation leaves: the mm, and the child of fork (op 8). */
struct done {
	struct snap mm, child;
};

/*
 * Operation @op on a fresh mm with failures as @fo says: it succeeds,
 * leaving what @done says (the operation without failures; but for
 * the pages MAP_POPULATE may miss), or fails with ENOMEM (only when a
 * failure was injected) leaving the mm as it was (fork: the kernel
 * write-protects the parent as it copies and leaves that; a fault: an
 * anon_vma it made stays, as the kernel's anon_vma_prepare()'s); every
 * page and every object comes back when the mms go.
 * Return: failures injected; *@failed_it: it returned ENOMEM.
 */
static unsigned long op_once(int op, const struct vs_fail_options *fo,
			     const struct done *done, const char *what,
			     int *failed_it)
{
	struct snap before, after;
	unsigned long injected, a;
	struct vs_mm *mm = ops_mm();
	long r, out;
	int k;

	a = ops_prep(mm, op);
	snap_take(mm, &before);
	ck_assert_int_eq(vs_fail_set(fo), 0);
	r = ops_run(mm, op, a);
	injected = vs_fail_injected();
	ck_assert_int_eq(vs_fail_set(NULL), 0);
	*failed_it = r == -ENOMEM;
	snap_take(mm, &after);
	if (r == -ENOMEM) {
		ck_assert_msg(injected, "%s: ENOMEM with nothing injected",
			      what);
		for (k = 0; op >= FAULTS && k < after.nr; k++)
			if (!before.vma[k].anon_vma)
				after.vma[k].anon_vma = NULL;
		snap_same(&before, &after, op != 8, what);
	} else {
		ck_assert_msg(r >= 0, "%s: %ld", what, r);
		snap_alike(&done->mm, &after, op != 2, what);
		if (op == 8) {
			snap_take(forked, &after);
			snap_alike(&done->child, &after, 1, what);
		}
	}
	forked_destroy(what);
	ck_assert_msg(vs_mm_destroy(mm) == 0, "%s: vs_mm_destroy()", what);
	out = vs_test_slab_out();
	ck_assert_msg(out == slab_out, "%s: %ld objects out of the caches, "
		      "%ld before", what, out, slab_out);
	return injected;
}

/* What operation @op leaves when nothing fails. */
static void op_done(int op, struct done *done)
{
	struct vs_mm *mm = ops_mm();

	ck_assert_int_ge(ops_run(mm, op, ops_prep(mm, op)), 0);
	if (op == 8)
		snap_take(forked, &done->child);
	forked_destroy(op_names[op]);
	snap_take(mm, &done->mm);
	ck_assert_int_eq(vs_mm_destroy(mm), 0);
}

/*
 * Each operation and fault with its nth allocation failing, for every n
 * until it runs without one; then with each allocation failing at
 * random (a probability of 0.3, seeds 1 to 20), so that a failure can
 * meet the way back from another.
 */
START_TEST(fail_ops_sweep)
{
	struct vs_fail_options fo = { .kinds = VS_FAIL_SLAB | VS_FAIL_PAGE };
	unsigned long nth, failed, all = 0;
	struct done done;
	char what[64];
	int op, seed, it;

	ck_assert_int_eq(vs_thread_attach(), 0);
	slab_out = vs_test_slab_out();
	for (op = 0; op < (int)VS_ARRAY_SIZE(op_names); op++) {
		op_done(op, &done);
		failed = 0;
		fo.times = 1;
		fo.probability = 0;
		for (nth = 1; nth < 1000; nth++) {
			fo.nth = nth;
			snprintf(what, sizeof(what), "%s, allocation %lu",
				 op_names[op], nth);
			if (!op_once(op, &fo, &done, what, &it))
				break;
			failed += (unsigned long)it;
		}
		ck_assert_uint_lt(nth, 1000);
		ck_assert_msg(op < FAULTS || nth > 1, "%s allocates nothing",
			      op_names[op]);
		fo.times = 0;
		fo.nth = 0;
		fo.probability = 0.3;
		for (seed = 1; seed <= 20; seed++) {
			fo.seed = (uint64_t)seed;
			snprintf(what, sizeof(what), "%s, p 0.3, seed %d",
				 op_names[op], seed);
			(void)op_once(op, &fo, &done, what, &it);
			failed += (unsigned long)it;
		}
		printf("%s: %lu allocations failed in turn; %lu of the %lu "
		       "runs failed it\n", op_names[op], nth - 1, failed,
		       nth + 19);
		all += failed;
	}
	ck_assert_uint_gt(all, 0);
}
END_TEST

Suite *fail_suite(void)
{
	Suite *s = suite_create("fail");

	vs_test_add(vs_test_tcase(s, "fail"), fail_nth, fail_probability,
		    fail_kinds_and_cache, fail_parse_and_refuse, fail_nofail,
		    fail_ops_sweep);
	/* Its own case: fail_env_applied runs it again with VMSIM_FAIL. */
	vs_test_add(vs_test_tcase(s, "env"), fail_env_refused,
		    fail_env_applied);
	return s;
}
