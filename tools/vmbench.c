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
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "vmsim.h"
#include "vm/mm.h"
#include "bench.h"

#define BATCHES 201	/* odd: the median is the middle batch */
#define PAGE VS_PAGE_SIZE

static int json;

static void report(const char *bench, unsigned long n, const char *unit,
		   double v)
{
	if (json)
		printf("{\"bench\": \"%s\", \"n\": %lu, \"%s\": %.2f}\n",
		       bench, n, unit, v);
	else
		printf("%-12s %8lu %10.2f %s\n", bench, n, v,
		       strcmp(unit, "ns") == 0 ? "ns" : "bytes");
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
	report("mmap_munmap", 1, "ns", bench_median(ns, BATCHES));
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
	report("lookup", n, "ns", bench_median(ns, BATCHES));
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
	report("pte_walk", 512, "ns", bench_median(ns, BATCHES));
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
	report("vma_bytes", n, "bytes", (double)(after - before) / n);
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
	report("page_bytes", n, "bytes",
	       (double)(after - before) / n + sizeof(struct vs_page));
	vs_mm_destroy(mm);
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: vmbench [--json] [--bench NAME]\n"
		"NAME: mmap_munmap, lookup, pte_walk, bytes, all (default)\n");
	exit(status);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "bench", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *which = "all";
	int c;

	while ((c = getopt_long(argc, argv, "jb:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'b':
			which = optarg;
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(2);
		}
	}
	if (optind < argc)
		usage(2);
	if (strcmp(which, "all") && strcmp(which, "mmap_munmap") &&
	    strcmp(which, "lookup") && strcmp(which, "pte_walk") &&
	    strcmp(which, "bytes")) {
		fprintf(stderr, "vmbench: --bench: '%s' is not a benchmark\n",
			which);
		usage(2);
	}
	if (!json)
		printf("%-12s %8s %10s\n", "bench", "n", "value");
	if (!strcmp(which, "all") || !strcmp(which, "mmap_munmap"))
		bench_mmap_munmap();
	if (!strcmp(which, "all") || !strcmp(which, "lookup")) {
		bench_lookup(10);
		bench_lookup(1000);
		bench_lookup(100000);
	}
	if (!strcmp(which, "all") || !strcmp(which, "pte_walk"))
		bench_pte_walk();
	if (!strcmp(which, "all") || !strcmp(which, "bytes"))
		bench_bytes(10000);
	return 0;
}
