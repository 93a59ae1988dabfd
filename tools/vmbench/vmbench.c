/* SPDX-License-Identifier: MIT */
/*
 * vmbench - what the VM model itself costs (docs/man/vmbench.1).
 *
 *   mmap_munmap   ns per vs_mmap + vs_munmap of one anonymous page,
 *                 the host kernel's mmap + munmap beside it, their
 *                 ratio, and the host's page faults, switches and
 *                 system calls per 10,000 model pairs
 *   lookup        ns per lockless vs_find_vma at N VMAs (random hits,
 *                 each inside its own RCU read section)
 *   pte_walk      ns per vs_pte_offset on a populated PTE page
 *   vma_bytes     model bytes per VMA (struct vs_vma + index nodes)
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
#include <sys/mman.h>
#include <uv.h>

#include <vmsim/vmsim.h>
#include <vmsim/mm.h>
#include "bench_kernel.h"
#include "bench.h"
#include "bench_host.h"

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

static const char *kernel;	/* --kernel; NULL: vmsim's default */

static struct vs_mm *mm_new(size_t pool_pages)
{
	struct vs_mm_options opt = { .pool_pages = pool_pages,
				     .kernel = kernel };
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

/* One model pair; exits on failure. */
static void model_pair(struct vs_mm *mm)
{
	long a = vs_mmap(mm, 0, PAGE, VS_PROT_READ | VS_PROT_WRITE,
			 VS_MAP_PRIVATE | VS_MAP_ANONYMOUS, NULL, 0);

	if (a < 0 || vs_munmap(mm, (unsigned long)a, PAGE)) {
		fprintf(stderr, "vmbench: mmap_munmap failed\n");
		exit(1);
	}
}

/* One pair of the host kernel's own; exits on failure. */
static void host_pair(void)
{
	void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || munmap(p, PAGE)) {
		perror("vmbench: host mmap_munmap");
		exit(1);
	}
}

/*
 * The model's pair and the host kernel's, in the same run.  The model's
 * first runs for WARMUP_NS untimed: its caches grow until the objects
 * that wait for a grace period come back as fast as new ones are taken
 * (liburcu's worker takes a batch every 10 ms or so).  The host's work
 * for the model is counted over the timed batches only.
 */
#define PAIRS_PER_BATCH 1000
#define WARMUP_NS (300 * 1000 * 1000ull)

static void bench_mmap_munmap(void)
{
	struct vs_mm *mm = mm_new(0);
	double ns[BATCHES], model, host;
	struct bench_host h;
	uint64_t t0 = uv_hrtime();
	char line[256];
	int b, i;

	while (uv_hrtime() - t0 < WARMUP_NS)
		for (i = 0; i < PAIRS_PER_BATCH; i++)
			model_pair(mm);
	bench_host_begin(&h);
	for (b = 0; b < BATCHES; b++) {
		uint64_t t = uv_hrtime();

		for (i = 0; i < PAIRS_PER_BATCH; i++)
			model_pair(mm);
		ns[b] = (double)(uv_hrtime() - t) / PAIRS_PER_BATCH;
	}
	bench_host_end(&h);
	model = bench_median(ns, BATCHES);
	vs_mm_destroy(mm);
	for (b = 0; b < BATCHES; b++) {
		uint64_t t = uv_hrtime();

		for (i = 0; i < PAIRS_PER_BATCH / 10; i++)
			host_pair();
		ns[b] = (double)(uv_hrtime() - t) / (PAIRS_PER_BATCH / 10);
	}
	host = bench_median(ns, BATCHES);
	report("mmap_munmap", 1, true, model);
	report("host_mmap_munmap", 1, true, host);
	if (bench_std.json) {
		bench_json_begin();
		bench_json_str("bench", "mmap_munmap_vs_host");
		bench_json_num("ratio", model / host, 3);
		bench_host_json(&h, (double)BATCHES * PAIRS_PER_BATCH);
		bench_json_end();
		return;
	}
	printf("  mmap_munmap / host_mmap_munmap:  %.3f\n", model / host);
	bench_host_line(line, sizeof(line), &h,
			(double)BATCHES * PAIRS_PER_BATCH, "pairs");
	printf("  mmap_munmap host work: %s\n", line);
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

/*
 * The model's bytes: the heap, less the chunks of the object caches,
 * plus the objects in use in them (a free cached object is not the
 * model's, and a chunk grown inside the window would count whole).
 */
static size_t model_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();
	size_t bytes = mi.uordblks + mi.hblkhd;
	struct vs_kmem_cache_stats st;
	struct vs_kmem_cache *c = NULL;

	while ((c = vs_kmem_cache_next(c))) {
		vs_kmem_cache_stats(c, &st);
		bytes += (size_t)st.active * st.obj_size - st.bytes;
	}
	return bytes;
}

static void bench_bytes(unsigned long n)
{
	struct vs_mm *mm = mm_new(n + 64);
	size_t before, after;

	/* n one-page VMAs, unmerged: heap per VMA. */
	vs_rcu_barrier();
	before = model_bytes();
	map_vmas(mm, n);
	/* Index nodes replaced by path copying wait for a grace period. */
	vs_rcu_barrier();
	after = model_bytes();
	report("vma_bytes", n, false, (double)(after - before) / n);
	vs_mm_destroy(mm);

	/* n resident pages in one mapping: struct vs_page + tables. */
	mm = mm_new(n + 64);
	before = model_bytes();
	if (vs_mmap(mm, mm->start, n * PAGE, VS_PROT_READ | VS_PROT_WRITE,
		    VS_MAP_PRIVATE | VS_MAP_ANONYMOUS | VS_MAP_FIXED |
		    VS_MAP_POPULATE, NULL, 0) < 0) {
		fprintf(stderr, "vmbench: populate failed\n");
		exit(1);
	}
	after = model_bytes();
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
	case BENCH_OPT_KERNEL:
		kernel = bench_arg_kernel(arg);
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
	{ BENCH_OPT_KERNEL, BENCH_KERNEL_HELP, NULL },
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
