/* SPDX-License-Identifier: MIT */
/*
 * test/vm/test_fail.c - allocation failures on demand (vm/fail.h): the
 * nth allocation, a seeded probability, the kinds and the cache filter,
 * the words of VMSIM_FAIL, and bad options refused.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "vm/fail.h"
#include "vm/page.h"
#include "vm/slab.h"

Suite *fail_suite(void);

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

	memset(&o, 0, sizeof(o));
	o.kinds = 4;
	o.nth = 1;
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
	/* Refused: nothing changed, injection still off. */
	ck_assert_uint_eq(pattern(&a_cache, 8), 0);
}
END_TEST

/* A bad VMSIM_FAIL ends the program before main(), exit 2, saying so. */
START_TEST(fail_env_refused)
{
	int fd[2], status;
	char out[512] = "";
	pid_t pid;

	ck_assert_int_eq(pipe(fd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fd[1], 2);
		setenv("VMSIM_FAIL", "slab,nth=x", 1);
		execl("/proc/self/exe", "vmsim-test", "-l", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	ck_assert_int_ge(read(fd[0], out, sizeof(out) - 1), 0);
	close(fd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 2);
	ck_assert_msg(strstr(out, "VMSIM_FAIL: 'slab,nth=x'"), "%s", out);
}
END_TEST

Suite *fail_suite(void)
{
	Suite *s = suite_create("fail");

	vs_test_add(vs_test_tcase(s, "fail"), fail_nth, fail_probability,
		    fail_kinds_and_cache, fail_parse_and_refuse,
		    fail_env_refused);
	return s;
}
