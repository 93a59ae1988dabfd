/* SPDX-License-Identifier: MIT */
/*
 * vmbench - what the VM model itself costs (docs/man/vmbench.1).
 *
 *   mmap_munmap   ns per vs_mmap + vs_munmap of one anonymous page
 *   lookup        ns per lockless vs_find_vma at N VMAs (random hits,
 *                 each inside its own RCU read section)
 *   pte_walk      ns per vs_pte_offset on a populated PTE page
 *   vma_bytes     heap bytes per VMA (struct vs_vma + index nodes)
 *   page_bytes    model bytes per resident page (struct vs_page + PTE
 *                 and page-table pages), the frame not counted
 *
 * Each time is the median over batches, read with uv_hrtime().
 */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "vmsim.h"
#include "vm/mm.h"
#include "bench.h"

#define BATCHES 201	/* odd: the median is the middle batch */
#define PAGE VS_PAGE_SIZE

/*
 * report - one figure: @v of @bench at size @n, which is the median over
 * BATCHES of the ns of one operation (@ns), or the mean bytes per VMA or
 * page over @n of them.
 */
static void report(const char *bench, unsigned long n, bool ns, double v)
{
	char label[64], over[32];

	if (bench_std.json) {
		bench_json_begin();
		bench_json_str("bench", bench);
		bench_json_uint("n", n);
		bench_json_num(ns ? "ns" : "bytes", v, 2);
		bench_json_str("of", bench_agg_name(ns ? BENCH_MEDIAN
						       : BENCH_MEAN));
		bench_json_end();
		return;
	}
	snprintf(label, sizeof(label), "%s, n %lu", bench, n);
	snprintf(over, sizeof(over), "%d batches", BATCHES);
	bench_figure_line(label, ns ? BENCH_MEDIAN : BENCH_MEAN,
			  ns ? over : "n", v, 2, ns ? "ns" : "bytes");
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static struct vs_mm *mm_new(size_t pool_pages)
{
	struct vs_mm_options opt = { .pool_pages = pool_pages };
	struct vs_mm *mm;
	int err = vs_mm_create(&mm, &opt);

	if (err) {
		fprintf(stderr, "vmbench: vs_mm_create: %s\n", vs_strerror(err));
		exit(1);
	}
	return mm;
}

static long map_fixed(struct vs_mm *mm, unsigned long addr, int flags)
{
	long ret = vs_mmap(mm, addr, PAGE, VS_PROT_READ | VS_PROT_WRITE,
			   VS_MAP_PRIVATE | VS_MAP_ANONYMOUS | VS_MAP_FIXED |
			   flags, NULL, 0);

	if (ret < 0) {
		fprintf(stderr, "vmbench: vs_mmap: %s\n",
			vs_strerror((int)ret));
		exit(1);
	}
	return ret;
}

static void bench_mmap_munmap(void)
{
	struct vs_mm *mm = mm_new(0);
	double ns[BATCHES];
	int b, i, per = 1000;

	for (b = 0; b < BATCHES; b++) {
		uint64_t t = uv_hrtime();

		for (i = 0; i < per; i++) {
			long a = vs_mmap(mm, 0, PAGE, VS_PROT_READ |
					 VS_PROT_WRITE, VS_MAP_PRIVATE |
					 VS_MAP_ANONYMOUS, NULL, 0);

			if (a < 0 || vs_munmap(mm, (unsigned long)a, PAGE)) {
				fprintf(stderr, "vmbench: mmap_munmap failed\n");
				exit(1);
			}
		}
		ns[b] = (double)(uv_hrtime() - t) / per;
	}
	report("mmap_munmap", 1, true, bench_median(ns, BATCHES));
	vs_mm_destroy(mm);
}

/* Map @n one-page VMAs two pages apart (gaps keep them from merging). */
static void map_vmas(struct vs_mm *mm, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		map_fixed(mm, mm->start + 2 * i * PAGE, 0);
}

static void bench_lookup(unsigned long n)
{
	struct vs_mm *mm = mm_new(0);
	unsigned long base = mm->start, addr[1024];
	double ns[BATCHES];
	unsigned long sink = 0;
	int b, i;

	map_vmas(mm, n);
	vs_thread_attach();
	for (b = 0; b < BATCHES; b++) {
		uint64_t t;

		for (i = 0; i < 1024; i++)
			addr[i] = base + 2 * (rng() % n) * PAGE;
		t = uv_hrtime();
		for (i = 0; i < 1024; i++) {
			vs_rcu_read_lock();
			sink += (unsigned long)vs_find_vma(mm, addr[i]);
			vs_rcu_read_unlock();
		}
		ns[b] = (double)(uv_hrtime() - t) / 1024;
	}
	if (sink == 1)
		puts("");
	report("lookup", n, true, bench_median(ns, BATCHES));
	vs_mm_destroy(mm);
}

static void bench_pte_walk(void)
{
	struct vs_mm *mm = mm_new(1024);
	unsigned long base = mm->start, sink = 0;
	double ns[BATCHES];
	int b, i;

	/* One 512-page populated mapping: one full PTE page. */
	if (vs_mmap(mm, base, 512 * PAGE, VS_PROT_READ | VS_PROT_WRITE,
		    VS_MAP_PRIVATE | VS_MAP_ANONYMOUS | VS_MAP_FIXED |
		    VS_MAP_POPULATE, NULL, 0) < 0) {
		fprintf(stderr, "vmbench: populate failed\n");
		exit(1);
	}
	for (b = 0; b < BATCHES; b++) {
		uint64_t t = uv_hrtime();

		vs_rcu_read_lock();
		for (i = 0; i < 512; i++)
			sink += vs_ptep_get_lockless(vs_pte_offset(
				&mm->pgtable, base + (unsigned long)i * PAGE));
		vs_rcu_read_unlock();
		ns[b] = (double)(uv_hrtime() - t) / 512;
	}
	if (sink == 1)
		puts("");
	report("pte_walk", 512, true, bench_median(ns, BATCHES));
	vs_mm_destroy(mm);
}

static size_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static void bench_bytes(unsigned long n)
{
	struct vs_mm *mm = mm_new(n + 64);
	size_t before, after;

	/* n one-page VMAs, unmerged: heap per VMA. */
	vs_rcu_barrier();
	before = heap_bytes();
	map_vmas(mm, n);
	/* Index nodes replaced by path copying wait for a grace period. */
	vs_rcu_barrier();
	after = heap_bytes();
	report("vma_bytes", n, false, (double)(after - before) / n);
	vs_mm_destroy(mm);

	/* n resident pages in one mapping: struct vs_page + tables. */
	mm = mm_new(n + 64);
	before = heap_bytes();
	if (vs_mmap(mm, mm->start, n * PAGE, VS_PROT_READ | VS_PROT_WRITE,
		    VS_MAP_PRIVATE | VS_MAP_ANONYMOUS | VS_MAP_FIXED |
		    VS_MAP_POPULATE, NULL, 0) < 0) {
		fprintf(stderr, "vmbench: populate failed\n");
		exit(1);
	}
	after = heap_bytes();
	report("page_bytes", n, false,
	       (double)(after - before) / n + sizeof(struct vs_page));
	vs_mm_destroy(mm);
}

static void bench_lookups(void)
{
	bench_lookup(10);
	bench_lookup(1000);
	bench_lookup(100000);
}

static void bench_sizes(void)
{
	bench_bytes(10000);
}

/* The benchmarks, in the order they run: libuv's benchmark-list.h. */
static const struct {
	const char *name;
	void (*run)(void);
} benches[] = {
	{ "mmap_munmap", bench_mmap_munmap },
	{ "lookup", bench_lookups },
	{ "pte_walk", bench_pte_walk },
	{ "bytes", bench_sizes },
};

#define NR_BENCHES (sizeof(benches) / sizeof(benches[0]))

static bool chosen[NR_BENCHES];

static const char *bench_name(int i)
{
	return i < (int)NR_BENCHES ? benches[i].name : NULL;
}

static void bench_item(const char *item)
{
	int i = bench_arg_name(item, bench_name, "a benchmark", true);
	size_t b;

	for (b = 0; b < NR_BENCHES; b++)
		if (i < 0 || (size_t)i == b)
			chosen[b] = true;
}

static void set_option(int key, char *arg)
{
	switch (key) {
	case BENCH_OPT_BENCH:
		bench_arg_list(arg, bench_item);
		break;
	}
}

static const char about[] =
"What the VM model itself costs, on one thread: ns per mmap+munmap,\n"
"per lockless VMA lookup and per PTE walk (each the median over\n"
"201 batches), and bytes per VMA and per resident page.\n";

static const struct bench_opt opts[] = {
	{ BENCH_OPT_BENCH, "mmap_munmap, lookup, pte_walk, bytes or all\n"
			   "(default all)", NULL },
	{ BENCH_OPT_JSON, "one JSON object per line", NULL },
	{ 0, NULL, NULL },
};

static const struct bench_tool tool = {
	.name = "vmbench", .about = about, .opts = opts, .set = set_option,
};

int main(int argc, char **argv)
{
	size_t b;

	bench_parse_options(&tool, argc, argv);
	if (!bench_given(BENCH_OPT_BENCH))
		bench_item("all");
	for (b = 0; b < NR_BENCHES; b++)
		if (chosen[b])
			benches[b].run();
	return 0;
}
