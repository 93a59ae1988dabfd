/* SPDX-License-Identifier: MIT */
/*
 * Tests for the kernel's page lifecycle in vm/: kernel profiles
 * (vmsim/kernel.h), the zones' buddy lists and the per-CPU lists with
 * each kernel's batch and high, the LRU and its per-CPU batches, vmstat
 * diffs, split RSS counting, the mmu_gather of a zap, and, on vCPUs, a
 * node per socket and the TLB flush's IPIs.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/fault.h>
#include <vmsim/kernel.h>
#include <vmsim/mm.h>
#include <vmsim/page.h>
#include <vmsim/thread.h>
#include <vmsim/vcpu.h>

#include "../hooks.h"
#include "test.h"

#define A0 0x100000000UL

static struct vs_mm *mm_new(const char *kernel, size_t pool_pages)
{
	struct vs_mm_options o = { .pool_pages = pool_pages,
				   .kernel = kernel };
	struct vs_mm *mm = NULL;

	ck_assert_int_eq(vs_mm_create(&mm, &o), 0);
	return mm;
}

static void mm_done(struct vs_mm *mm)
{
	ck_assert_int_eq(vs_mm_destroy(mm), 0);
}

/* Map @pages anonymous pages at A0 and write-fault each. */
static void fault_in(struct vs_mm *mm, unsigned long pages)
{
	unsigned long i;

	ck_assert_int_eq(vs_mmap(mm, A0, pages * VS_PAGE_SIZE,
				 VS_PROT_READ | VS_PROT_WRITE,
				 VS_MAP_PRIVATE | VS_MAP_ANONYMOUS |
				 VS_MAP_FIXED, NULL, 0), (long)A0);
	for (i = 0; i < pages; i++)
		ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + i * VS_PAGE_SIZE,
						    VS_FAULT_FLAG_WRITE), 0);
}

/* Parse the built-in profile @ver with @from replaced by @to. */
static int load_edited(const char *ver, const char *from, const char *to,
		       char *err, size_t errlen)
{
	char path[64], text[16384], *at;
	size_t n;
	FILE *f;
	int ret;
	struct vs_kernel k;

	snprintf(path, sizeof(path), "%s/linux-%s.kernel",
		 VS_TEST_PROFILE_DIR, ver);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	at = strstr(text, from);
	ck_assert_ptr_nonnull(at);
	ck_assert_uint_ge(strlen(from), strlen(to));
	memcpy(at, to, strlen(to));
	memset(at + strlen(to), ' ', strlen(from) - strlen(to));
	ret = vs_kernel_parse(&k, text, err, errlen);
	return ret;
}

/* The built-in profiles load with their kernels' sizes; NULL is the
 * default. */
START_TEST(kernel_builtin)
{
	struct vs_kernel k;
	char err[160];

	ck_assert_int_eq(vs_kernel_load(&k, "3.18", err, sizeof(err)), 0);
	ck_assert_str_eq(k.name, "3.18");
	ck_assert_uint_eq(k.pcp_batch, 31);
	ck_assert_uint_eq(k.pcp_high, 186);
	ck_assert_uint_eq(k.lru_batch, 14);
	ck_assert_int_eq(k.rss, VS_RSS_TASK_EVENTS);
	ck_assert_int_eq(k.memcg, VS_MEMCG_PAGE_CGROUP);
	ck_assert_uint_eq(k.gather_local + k.gather_batch, 518);
	ck_assert_int_eq(vs_kernel_load(&k, "6.18", err, sizeof(err)), 0);
	ck_assert_uint_eq(k.pcp_batch, 63);
	ck_assert_int_eq(k.rss, VS_RSS_PERCPU);
	ck_assert_int_eq(k.memcg, VS_MEMCG_DATA);
	ck_assert_uint_eq(k.dontneed_drains_lru, 0);
	ck_assert_int_eq(k.mech.vma_lock, VS_VMA_LOCK_REFCNT);
	ck_assert_uint_eq(k.mech.vma_typesafe, 1);
	ck_assert_uint_eq(k.mech.pt_reclaim, 1);
	ck_assert_int_eq(vs_kernel_load(&k, "6.4", err, sizeof(err)), 0);
	ck_assert_int_eq(k.mech.vma_lock, VS_VMA_LOCK_RWSEM);
	ck_assert_uint_eq(k.mech.munmap_downgrade, 1);
	ck_assert_uint_eq(k.mech.dontneed_vma_lock, 0);
	ck_assert_int_eq(vs_kernel_load(&k, "3.18", err, sizeof(err)), 0);
	ck_assert_int_eq(k.mech.vma_lock, VS_VMA_LOCK_NONE);
	ck_assert_uint_eq(k.mech.munmap_downgrade, 0);
	ck_assert_uint_eq(k.mech.cow_refcount, 0);
	unsetenv("VMSIM_KERNEL");
	ck_assert_int_eq(vs_kernel_load(&k, NULL, err, sizeof(err)), 0);
	ck_assert_str_eq(k.name, VS_KERNEL_DEFAULT);
	ck_assert_ptr_nonnull(strstr(vs_kernel_versions(), "3.18"));
}
END_TEST

/* Bad names and bad profiles are refused, saying where. */
START_TEST(kernel_bad)
{
	struct vs_kernel k;
	char err[160], *text;
	const char *good;
	struct vs_mm_options o = { .kernel = "2.6" };
	struct vs_mm *mm;

	ck_assert_int_eq(vs_kernel_load(NULL, "6.18", err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(vs_kernel_load(&k, "2.6", err, sizeof(err)),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "'2.6'"));
	ck_assert_int_eq(vs_kernel_load(&k, "/nonexistent/x.kernel", err,
					sizeof(err)), -ENOENT);
	ck_assert_int_eq(vs_mm_create(&mm, &o), -EINVAL);
	ck_assert_int_eq(vs_kernel_parse(&k, "version = 1\nhit = 3\n", err,
					 sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "line 2: unknown key 'hit'"));
	ck_assert_int_eq(vs_kernel_parse(&k, "version = 1\n", err,
					 sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "missing key"));
	ck_assert_int_eq(vs_kernel_parse(&k, "pcp_batch = x1\n", err,
					 sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "line 1: pcp_batch"));
	ck_assert_int_eq(vs_kernel_parse(&k, "rss = sometimes\n", err,
					 sizeof(err)), -EINVAL);
	ck_assert_int_eq(vs_kernel_parse(&k, "vma_lock = mutex\n", err,
					 sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "vma_lock: bad value 'mutex'"));
	/* 3.18's profile asking for MADV_DONTNEED under a VMA lock it
	 * does not have. */
	ck_assert_int_eq(vs_kernel_load(&k, "3.18", err, sizeof(err)), 0);
	ck_assert_int_eq(load_edited("3.18", "dontneed_lock = mmap",
				     "dontneed_lock = vma", err,
				     sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "need a vma_lock"));
	/* A good profile with one size out of range. */
	ck_assert_int_eq(vs_kernel_load(&k, "3.18", err, sizeof(err)), 0);
	good = "version = t\npcp_batch = 31\npcp_high = 30\n";
	text = malloc(strlen(good) + 1);
	strcpy(text, good);
	ck_assert_int_eq(vs_kernel_parse(&k, text, err, sizeof(err)),
			 -EINVAL);
	free(text);
}
END_TEST

/* calculate_normal_threshold(), worked by hand. */
START_TEST(kernel_vmstat_threshold)
{
	struct vs_kernel k;

	ck_assert_int_eq(vs_kernel_load(&k, "6.18", NULL, 0), 0);
	/* 2 CPUs, 6 GiB: 2 x fls(2) x (1 + fls(48)) = 2 x 2 x 7 */
	ck_assert_uint_eq(vs_kernel_vmstat_threshold(&k, 2, 1572864), 28);
	/* 64 CPUs, 8 GiB: 2 x fls(64) x (1 + fls(64)) = 2 x 7 x 8 */
	ck_assert_uint_eq(vs_kernel_vmstat_threshold(&k, 64, 2097152), 112);
	ck_assert_uint_eq(vs_kernel_vmstat_threshold(&k, 256, 1UL << 30),
			  125);
	ck_assert_uint_eq(vs_kernel_vmstat_threshold(&k, 1, 1), 2);
}
END_TEST

/* An empty per-CPU list takes pcp_batch pages from the buddy lists; one
 * over pcp_high gives pcp_batch back; freeing everything merges the
 * buddies again. */
START_TEST(lifecycle_pcp_batches)
{
	struct vs_page_pool *pool;
	struct vs_page *p[200];
	struct vs_kernel k;
	int i;

	ck_assert_int_eq(vs_thread_attach(), 0);
	ck_assert_int_eq(vs_kernel_load(&k, "3.18", NULL, 0), 0);
	ck_assert_int_eq(vs_page_pool_create_kernel(&pool, 1024, &k), 0);
	ck_assert_int_eq(vs_page_pool_stat(pool, VS_NR_FREE_PAGES, 1), 1024);
	p[0] = vs_alloc_page(pool);
	ck_assert_ptr_nonnull(p[0]);
	ck_assert_int_eq(vs_page_pool_stat(pool, VS_NR_FREE_PAGES, 1),
			 1024 - 31);
	ck_assert_uint_eq(vs_page_pool_free_pages(pool), 1023);
	ck_assert_int_eq(vs__page_pool_check(pool), 0);
	for (i = 1; i < 200; i++)
		ck_assert_ptr_nonnull(p[i] = vs_alloc_page(pool));
	/* 200 taken in batches of 31: 7 refills, 17 left on the list. */
	ck_assert_int_eq(vs_page_pool_stat(pool, VS_NR_FREE_PAGES, 1),
			 1024 - 7 * 31);
	for (i = 0; i < 200; i++)
		vs_put_page(pool, p[i]);
	/* 217 on the list: over 186 once at 187, and once more at 187 */
	ck_assert_int_eq(vs_page_pool_stat(pool, VS_NR_FREE_PAGES, 1),
			 1024 - 7 * 31 + 31);
	ck_assert_uint_eq(vs_page_pool_free_pages(pool), 1024);
	ck_assert_int_eq(vs__page_pool_check(pool), 0);
	/* The global counter alone is off by at most the diffs. */
	ck_assert_int_le(vs_page_pool_stat(pool, VS_NR_FREE_PAGES, 0), 1024);
	ck_assert_int_eq(vs_page_pool_stat(pool, VS_NR_VMSTAT, 0), -EINVAL);
	ck_assert_int_eq(vs_page_pool_stat(NULL, VS_NR_LRU, 0), -EINVAL);
	/* NULL does nothing, and says so where a result is returned. */
	vs_lru_add(NULL, p[0]);
	vs_lru_add(pool, NULL);
	vs_lru_drain(NULL);
	vs_lru_drain_all(NULL);
	vs_memcg_charge(NULL, NULL);
	vs_page_add_rmap(NULL, NULL);
	vs_page_remove_rmap(pool, NULL);
	vs_release_pages(NULL, NULL, 3);
	ck_assert_ptr_null(vs_page_pool_kernel(NULL));
	ck_assert_uint_eq(vs_kernel_vmstat_threshold(NULL, 2, 1), 1);
	ck_assert_int_eq(vs_page_pool_destroy(pool), 0);
}
END_TEST

/* New anonymous pages reach the LRU through the CPU's batch, whose
 * reference holds them until it drains; a zap takes them off. */
START_TEST(lifecycle_lru)
{
	struct vs_mm *mm = mm_new("6.18", 1024);
	struct vs_page_pool *pool = mm->pool;

	fault_in(mm, 40);	/* one batch of 31 added, 9 waiting */
	ck_assert_int_eq(vs_page_pool_stat(pool, VS_NR_LRU, 1), 31);
	ck_assert_int_eq(vs_page_pool_stat(pool, VS_NR_ANON_MAPPED, 1), 40);
	vs_lru_drain_all(pool);
	ck_assert_int_eq(vs_page_pool_stat(pool, VS_NR_LRU, 1), 40);
	ck_assert_int_eq(vs__page_pool_check(pool), 0);
	ck_assert_int_eq(vs_madvise(mm, A0, 40 * VS_PAGE_SIZE,
				    VS_MADV_DONTNEED), 0);
	ck_assert_int_eq(vs_page_pool_stat(pool, VS_NR_LRU, 1), 0);
	ck_assert_int_eq(vs_page_pool_stat(pool, VS_NR_ANON_MAPPED, 1), 0);
	ck_assert_uint_eq(vs_page_pool_free_pages(pool), 1024);
	ck_assert_int_eq(vs__page_pool_check(pool), 0);
	mm_done(mm);
}
END_TEST

/* 3.18's MADV_DONTNEED drains the CPU's batch first, so every page is
 * free after it; 6.18's does not, and the batch's pages wait for it. */
START_TEST(lifecycle_dontneed_drain)
{
	struct vs_mm *old = mm_new("3.18", 1024), *now = mm_new("6.18", 1024);

	fault_in(old, 20);
	ck_assert_int_eq(vs_madvise(old, A0, 20 * VS_PAGE_SIZE,
				    VS_MADV_DONTNEED), 0);
	ck_assert_uint_eq(vs_page_pool_free_pages(old->pool), 1024);
	fault_in(now, 20);
	ck_assert_int_eq(vs_madvise(now, A0, 20 * VS_PAGE_SIZE,
				    VS_MADV_DONTNEED), 0);
	ck_assert_uint_eq(vs_page_pool_free_pages(now->pool), 1024 - 20);
	vs_lru_drain(now->pool);
	ck_assert_uint_eq(vs_page_pool_free_pages(now->pool), 1024);
	mm_done(old);
	mm_done(now);
}
END_TEST

/* A zap of more pages than the gather holds in itself takes batch
 * pages from the pool, and frees every page; with the pool dry it
 * flushes as it goes. */
START_TEST(lifecycle_gather)
{
	struct vs_mm *mm = mm_new("3.18", 2048);
	struct vs_page_pool *pool = mm->pool;

	fault_in(mm, 1500);	/* 8 + 510 + 510 + 472 */
	ck_assert_int_eq(vs_munmap(mm, A0, 1500 * VS_PAGE_SIZE), 0);
	vs_lru_drain_all(pool);
	ck_assert_uint_eq(vs_page_pool_free_pages(pool), 2048);
	ck_assert_int_eq(vs__page_pool_check(pool), 0);
	/* Every page in use: no batch page to be had. */
	fault_in(mm, 2048);
	ck_assert_uint_eq(vs_page_pool_free_pages(pool), 0);
	ck_assert_int_eq(vs_munmap(mm, A0, 2048 * VS_PAGE_SIZE), 0);
	vs_lru_drain_all(pool);
	ck_assert_uint_eq(vs_page_pool_free_pages(pool), 2048);
	ck_assert_int_eq(vs__page_pool_check(pool), 0);
	mm_done(mm);
}
END_TEST

/* Both ways of counting RSS are exact through their folds. */
START_TEST(lifecycle_rss)
{
	const char *kernels[] = { "3.18", "6.18" };
	struct vs_mm *mm;
	int i;

	for (i = 0; i < 2; i++) {
		mm = mm_new(kernels[i], 1024);
		fault_in(mm, 300);	/* several folds either way */
		ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_ANONPAGES), 300);
		ck_assert_int_eq(vs_madvise(mm, A0, 100 * VS_PAGE_SIZE,
					    VS_MADV_DONTNEED), 0);
		ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_ANONPAGES), 200);
		ck_assert_int_eq(vs_munmap(mm, A0, 300 * VS_PAGE_SIZE), 0);
		ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_ANONPAGES), 0);
		mm_done(mm);
	}
}
END_TEST

#if VS_VCPU
static struct vs_machine *v_m;
static struct vs_mm *v_mm;
static unsigned int v_nodes;
static int v_node_of_10;

/* On vCPU 10 of the EP (socket 1): a page of node 1. */
static void on_ten(void *arg)
{
	struct vs_page *page = vs_alloc_page(v_mm->pool);

	(void)arg;
	v_node_of_10 = page ? page->node : -1;
	if (page)
		vs_put_page(v_mm->pool, page);
}

/* Fault a page on vCPU 1, so that it joins the mm's cpumask. */
static void fault_one(void *arg)
{
	(void)arg;
	(void)vs_handle_mm_fault(v_mm, A0 + VS_PAGE_SIZE,
				 VS_FAULT_FLAG_WRITE);
	vs_vcpu_charge(1000000);	/* busy while vCPU 0 zaps */
	(void)vs_handle_mm_fault(v_mm, A0 + 2 * VS_PAGE_SIZE,
				 VS_FAULT_FLAG_WRITE);
}

static void lifecycle_main(void *arg)
{
	struct vs_mm_options o = { .pool_pages = 1024, .kernel = "3.18" };
	int w;

	(void)arg;
	ck_assert_int_eq(vs_mm_create(&v_mm, &o), 0);
	v_nodes = vs_vcpu_nr_nodes();
	ck_assert_int_gt(w = vs_machine_spawn(v_m, 10,
					      on_ten, NULL), 0);
	ck_assert_int_eq(vs_machine_join(v_m, (unsigned)w),
			 0);
	fault_in(v_mm, 4);
	ck_assert_int_gt(w = vs_machine_spawn(v_m, 1,
					      fault_one, NULL), 0);
	vs_vcpu_charge(200000);		/* vCPU 1 has faulted */
	ck_assert_int_eq(vs_madvise(v_mm, A0, 4 * VS_PAGE_SIZE,
				    VS_MADV_DONTNEED), 0);
	ck_assert_int_eq(vs_machine_join(v_m, (unsigned)w),
			 0);
	ck_assert_int_eq(vs_munmap(v_mm, A0, 4 * VS_PAGE_SIZE), 0);
	ck_assert_int_eq(vs_mm_destroy(v_mm), 0);
}

/* On a two-socket machine the pool has a node per socket, a vCPU
 * allocates from its own, and a zap interrupts the other vCPU running
 * the mm with the flush's handler. */
START_TEST(lifecycle_nodes_ipis)
{
	struct vs_vcpu_profile ep;
	struct vs_machine_config cfg = { .profile = &ep, .nr_vcpus = 20,
					 .seed = 1 };
	struct vs_machine_stats st;
	struct vs_machine *m;
	char err[128];

	ck_assert_int_eq(vs_vcpu_profile_load(&ep, "ivb-ep-2x10x2", err,
					      sizeof(err)), 0);
	ck_assert_int_eq(vs_machine_create(&m, &cfg), 0);
	v_m = m;
	ck_assert_int_eq(vs_machine_run(m, lifecycle_main, NULL), 0);
	ck_assert_uint_eq(v_nodes, 2);
	ck_assert_int_eq(v_node_of_10, 1);
	ck_assert_int_eq(vs_machine_stats(m, 1, &st), 0);
	ck_assert_uint_gt(st.work_cycles[VS_VCPU_IRQ], 0);
	ck_assert_int_eq(vs_machine_stats(m, 0, &st), 0);
	ck_assert_uint_gt(st.work_cycles[VS_VCPU_KERNEL], 0);
	ck_assert_uint_eq(st.work_cycles[VS_VCPU_IRQ], 0);
	vs_machine_destroy(m);
}
END_TEST
#endif

Suite *lifecycle_suite(void)
{
	Suite *s = suite_create("lifecycle");
	TCase *tc = tcase_create("kernel");

	tcase_add_test(tc, kernel_builtin);
	tcase_add_test(tc, kernel_bad);
	tcase_add_test(tc, kernel_vmstat_threshold);
	suite_add_tcase(s, tc);
	tc = tcase_create("pages");
	tcase_add_test(tc, lifecycle_pcp_batches);
	tcase_add_test(tc, lifecycle_lru);
	tcase_add_test(tc, lifecycle_dontneed_drain);
	tcase_add_test(tc, lifecycle_gather);
	tcase_add_test(tc, lifecycle_rss);
	suite_add_tcase(s, tc);
	return s;
}

/* The engine's part: machines of their own, so the vCPU build only. */
Suite *lifecycle_vcpu_suite(void)
{
	Suite *s = suite_create("lifecycle_vcpu");
	TCase *tc = tcase_create("machine");

#if VS_VCPU
	tcase_add_test(tc, lifecycle_nodes_ipis);
#endif
	suite_add_tcase(s, tc);
	return s;
}
