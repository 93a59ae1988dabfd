/* SPDX-License-Identifier: MIT */
/*
 * tools/vcpu-calibrate/calib_kernel.c - the host kernel's own work on the
 * anonymous fault and MADV_DONTNEED paths, for a kernel profile
 * (vmsim/kernel.h): a write fault timed alone, and madvise(MADV_DONTNEED)
 * of 512, 34 and 1 pages.  calib.h documents each function that is not
 * static here.
 *
 * One thread, pinned, runs rounds over a window of 512 pages in the middle
 * of 1024 that are 2 MiB aligned; a round is every measurement once, and
 * the figures are medians over batches of rounds.  The pages around the
 * window stay faulted, so that no zap empties a page table: Linux 6.18
 * frees a PTE table that MADV_DONTNEED empties (CONFIG_PT_RECLAIM), and
 * the next fault would allocate one again, work that is neither a fault's
 * nor a zap's own.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* madvise */
#endif
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "bench_report.h"
#include "calib.h"

#define PMD_PAGES 512		/* pages a PTE table maps: 2 MiB */
#define REGION_PAGES (2 * PMD_PAGES)
#define WINDOW_OFF (PMD_PAGES / 2)	/* the window straddles the two */
#define ONE_CALLS 8		/* 1-page calls timed together */
#define ROUNDS_PER_BATCH 4
#define WARM_ROUNDS 2
#define MIN_BATCHES 7
#define MAX_BATCHES 255

/*
 * struct region - the mappings of the probe
 * @base:	the whole mapping: 2 MiB aligned inside it, the region of
 *		REGION_PAGES pages, then the spill pages
 * @region:	REGION_PAGES pages, 2 MiB aligned; the window is the
 *		middle CALIB_ZAP_PAGES of them
 * @spill:	CALIB_ZAP_SPILL_PAGES pages after the region, in a page
 *		table of their own
 * @untouched:	a page of a mapping of its own, never touched: no page
 *		table under it
 */
struct region {
	char *base, *region, *window, *spill, *untouched;
	size_t bytes;
};

/* One write to each of @pages pages from @p (the first touch faults). */
static void touch(char *p, unsigned int pages)
{
	volatile char *v = p;
	unsigned int i;

	for (i = 0; i < pages; i++)
		v[(size_t)i * CALIB_PAGE] = 1;
}

/* The sum of the ticks of a write to each of @pages pages from @p, each
 * timed alone: a fault where the page is fresh, the timing where not. */
static uint64_t timed_stores(char *p, unsigned int pages)
{
	volatile char *v = p;
	uint64_t t0, sum = 0;
	unsigned int i;

	for (i = 0; i < pages; i++) {
		t0 = calib_ticks();
		v[(size_t)i * CALIB_PAGE] = 1;
		sum += calib_ticks() - t0;
	}
	return sum;
}

static void dontneed(char *p, unsigned int pages)
{
	if (madvise(p, (size_t)pages * CALIB_PAGE, MADV_DONTNEED))
		calib_die("madvise(MADV_DONTNEED) of %u pages: %s", pages,
			  strerror(errno));
}

/* Ticks of one madvise(MADV_DONTNEED) of @pages pages from @p. */
static uint64_t timed_dontneed(char *p, unsigned int pages)
{
	uint64_t t0 = calib_ticks();

	dontneed(p, pages);
	return calib_ticks() - t0;
}

static void region_map(struct region *r)
{
	uintptr_t a;

	/* Room for the region at a 2 MiB boundary and the spill after. */
	r->bytes = (size_t)(REGION_PAGES + 2 * PMD_PAGES) * CALIB_PAGE;
	r->base = calib_map(r->bytes, false, false);
	a = ((uintptr_t)r->base + PMD_PAGES * CALIB_PAGE - 1) &
	    ~((uintptr_t)PMD_PAGES * CALIB_PAGE - 1);
	r->region = (char *)a;
	r->window = r->region + (size_t)WINDOW_OFF * CALIB_PAGE;
	r->spill = r->region + (size_t)REGION_PAGES * CALIB_PAGE;
	r->untouched = calib_map(CALIB_PAGE, false, false);
	/* The pages around the window, faulted for good. */
	touch(r->region, WINDOW_OFF);
	touch(r->window + (size_t)CALIB_ZAP_PAGES * CALIB_PAGE,
	      REGION_PAGES - WINDOW_OFF - CALIB_ZAP_PAGES);
}

/*
 * The ticks of one round, added to @sum[CALIB_K_*]: the window's 512
 * faults, each timed alone; the same stores again, now to present pages;
 * the window's zap; 34 of its pages faulted again (not timed) and zapped;
 * ONE_CALLS zaps of the untouched page.  Every zap of faulted pages
 * after CALIB_ZAP_SPILL_PAGES fresh faults elsewhere, whose own zap is
 * not timed.
 */
static void round_once(struct region *r, uint64_t *sum)
{
	int i;

	sum[CALIB_K_FAULT] += timed_stores(r->window, CALIB_ZAP_PAGES);
	sum[CALIB_K_STORE] += timed_stores(r->window, CALIB_ZAP_PAGES);
	touch(r->spill, CALIB_ZAP_SPILL_PAGES);
	sum[CALIB_K_ZAP_512] += timed_dontneed(r->window,
					       CALIB_ZAP_PAGES);
	dontneed(r->spill, CALIB_ZAP_SPILL_PAGES);
	touch(r->window, CALIB_ZAP_FLUSH_PAGES);
	touch(r->spill, CALIB_ZAP_SPILL_PAGES);
	sum[CALIB_K_ZAP_34] += timed_dontneed(r->window,
					      CALIB_ZAP_FLUSH_PAGES);
	dontneed(r->spill, CALIB_ZAP_SPILL_PAGES);
	for (i = 0; i < ONE_CALLS; i++)
		sum[CALIB_K_ZAP_1] += timed_dontneed(r->untouched, 1);
}

/* What one batch's rounds come to, per operation, in cycles. */
static void batch_figures(const uint64_t *sum, double *out)
{
	static const double per[CALIB_K_NR] = {
		[CALIB_K_FAULT] = CALIB_ZAP_PAGES,
		[CALIB_K_STORE] = CALIB_ZAP_PAGES,
		[CALIB_K_ZAP_512] = 1,
		[CALIB_K_ZAP_34] = 1,
		[CALIB_K_ZAP_1] = ONE_CALLS,
	};
	int f;

	for (f = 0; f < CALIB_K_NR; f++)
		out[f] = (double)sum[f] / (per[f] * ROUNDS_PER_BATCH) *
			 calib_clock.cycles_per_tick;
}

struct kernel_job {
	struct calib_kernel *k;
	double fig[CALIB_K_NR][MAX_BATCHES];
};

/*
 * Warm-up rounds, then batches of ROUNDS_PER_BATCH rounds until twice
 * --duration has passed (at least MIN_BATCHES); the median of each
 * figure over the batches.  A batch's fault figure is the mean of its
 * 2048 faults: the pages a fault moves from the buddy lists or to the LRU
 * every few dozen faults are the fault path's too.
 */
static void *kernel_main(void *arg)
{
	struct kernel_job *job = arg;
	struct calib_kernel *k = job->k;
	uint64_t sum[CALIB_K_NR], start;
	double out[CALIB_K_NR];
	struct region r;
	int f, i, nr = 0;

	region_map(&r);
	for (i = 0; i < WARM_ROUNDS; i++) {
		for (f = 0; f < CALIB_K_NR; f++)
			sum[f] = 0;
		round_once(&r, sum);
	}
	start = calib_ticks();
	while (nr < MAX_BATCHES &&
	       (nr < MIN_BATCHES ||
		calib_ticks() - start < 2 * calib_clock.duration_ticks)) {
		for (f = 0; f < CALIB_K_NR; f++)
			sum[f] = 0;
		for (i = 0; i < ROUNDS_PER_BATCH; i++)
			round_once(&r, sum);
		batch_figures(sum, out);
		for (f = 0; f < CALIB_K_NR; f++)
			job->fig[f][nr] = out[f];
		nr++;
	}
	for (f = 0; f < CALIB_K_NR; f++)
		k->fig[f] = bench_median(job->fig[f], (unsigned int)nr);
	k->batches = nr;
	k->rounds = nr * ROUNDS_PER_BATCH;
	munmap(r.base, r.bytes);
	munmap(r.untouched, CALIB_PAGE);
	return NULL;
}

void calib_kernel(int cpu, struct calib_kernel *k)
{
	static struct kernel_job job;

	job.k = k;
	calib_on_cpu(cpu, kernel_main, &job);
}
