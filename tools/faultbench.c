/* SPDX-License-Identifier: MIT */
/*
 * faultbench - the multi-fault loop (Kamezawa's multi-fault, as
 * will-it-scale's page_fault1 runs it) on the simulated backing, for
 * each fault strategy of fault/fault.h.
 *
 * A measurement maps T 2 MiB slices of anonymous private memory, one
 * per faulting thread: each its own VMA, 2 MiB apart (will-it-scale's
 * page_fault1 shape), or with --mapping shared one VMA holding them all
 * (Kamezawa's multi-fault shape), and starts the T threads (and with --writer
 * mmap one more thread that maps and unmaps a page far away, in a
 * loop) together.  Each faulting thread writes one byte per page of its
 * slice (vs_access(), one fault per page), zaps the slice with
 * MADV_DONTNEED, and goes round again until a libuv timer on the main
 * thread raises the stop flag.  Faults are what vs_fault_stats counts;
 * a row reports the median of --repeat measurements.
 * docs/man/faultbench.1 says what each number means.
 */

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "vmsim.h"
#include "bench.h"

#define SLICE_PAGES VS_PTRS_PER_TABLE	/* one PTE page: 2 MiB */
#define SLICE_BYTES (SLICE_PAGES * VS_PAGE_SIZE)
/*
 * The benchmark mapping starts on a PTE-page boundary, so each slice
 * has a PTE page, and a PTL, of its own; per-thread slices leave a
 * 2 MiB hole between them, so that they never merge.  The writer's page is 255 GiB
 * above it: another VMA, another PTE page, nothing to merge with.
 */
#define BENCH_BASE 0x40000000UL		/* 1 GiB */
#define WRITER_ADDR 0x4000000000UL	/* 256 GiB */
#define POOL_SLACK 1024			/* pages beyond the slices */
#define MIN_POOL_PAGES 4096
#define MAX_THREADS 64		/* faulting threads per measurement */
#define MAX_COLS 16		/* thread counts in --threads */
#define MAX_ROWS \
	(BENCH_MAX_LOCKS * MAX_COLS * NR_WRITERS * VS_FAULT_NR_STRATEGIES)
#define MAX_DURATION_MS 3600000u
#define QUICK_DURATION_MS 300u

enum writer { W_NONE, W_MMAP, NR_WRITERS };

static const char *const writer_name[NR_WRITERS] = { "none", "mmap" };

static struct {
	bool strategy[VS_FAULT_NR_STRATEGIES];
	const char *lock[BENCH_MAX_LOCKS];
	int nr_locks;
	unsigned int threads[MAX_COLS];
	int nr_cols;
	bool writer[NR_WRITERS];
	unsigned int duration_ms;
	unsigned int repeat;
	bool shared;		/* --mapping shared: one VMA for all slices */
	bool json;
} opt = {
	.duration_ms = 1000,
	.repeat = 3,
};

/* ---- the timed loops ------------------------------------------------ */

/* The start of slice @i. */
static unsigned long slice_base(unsigned int i)
{
	return BENCH_BASE + i * (opt.shared ? SLICE_BYTES : 2 * SLICE_BYTES);
}

struct worker {
	struct bench_worker b;	/* first */
	struct vs_mm *mm;
	unsigned long base;	/* the slice; unused by the writer */
	bool writer;
	/* results */
	uint64_t pages;		/* pages touched (faulting threads) */
	uint64_t ops;		/* mmap+munmap pairs (the writer) */
	uint64_t t0, t1;	/* uv_hrtime() around the loop */
};

/*
 * One round of the multi-fault loop: a write to every page of the slice
 * (each a fault: MADV_DONTNEED left no PTE), then the zap.  The zap is
 * part of the round's time; page_fault1 counts it the same way.
 * Return: 0 or a negative errno.
 */
static int fault_round(struct vs_mm *mm, unsigned long base)
{
	unsigned long a;
	int err;

	for (a = base; a < base + SLICE_BYTES; a += VS_PAGE_SIZE) {
		err = vs_access(mm, a, 1, 1);
		if (err)
			return err;
	}
	return vs_madvise(mm, base, SLICE_BYTES, VS_MADV_DONTNEED);
}

static void loop_fault(struct worker *w)
{
	uint64_t pages = 0;

	do {
		w->b.err = fault_round(w->mm, w->base);
		if (w->b.err)
			break;
		pages += SLICE_PAGES;
		bench_quiescent();
	} while (!vs_read_once(&bench_stop));
	w->pages = pages;
}

/* mmap+munmap of one anonymous page at WRITER_ADDR: the mmap_lock for
 * write twice, no VMA of the benchmark mapping touched. */
static void loop_writer(struct worker *w)
{
	uint64_t ops = 0;
	long a;

	do {
		a = vs_mmap(w->mm, WRITER_ADDR, VS_PAGE_SIZE,
			    VS_PROT_READ | VS_PROT_WRITE,
			    VS_MAP_PRIVATE | VS_MAP_ANONYMOUS | VS_MAP_FIXED,
			    NULL, 0);
		if (a < 0) {
			w->b.err = (int)a;
			break;
		}
		w->b.err = vs_munmap(w->mm, (unsigned long)a, VS_PAGE_SIZE);
		if (w->b.err)
			break;
		ops++;
		bench_quiescent();
	} while (!vs_read_once(&bench_stop));
	w->ops = ops;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->b.err = bench_wait_go();
	if (w->b.err)
		return NULL;
	w->t0 = uv_hrtime();
	if (w->writer)
		loop_writer(w);
	else
		loop_fault(w);
	w->t1 = uv_hrtime();
	return NULL;
}

/* ---- one measurement ------------------------------------------------- */

struct sample {
	double faults_per_s;	/* all faulting threads, over the wall time */
	double ns_per_fault;	/* summed thread time over faults */
	double fairness;	/* fewest pages of a thread over most */
	double writer_ops_per_s;
	uint64_t pages, writer_ops;
	struct vs_fault_stats st;	/* the measurement's delta */
};

static unsigned long spf_abort_total(const struct vs_fault_stats *st)
{
	unsigned long n = 0;
	int i;

	for (i = 0; i < VS_SPF_ABORT_NR; i++)
		n += st->spf_abort[i];
	return n;
}

/* @b - @a, counter by counter, into @d. */
static void stats_delta(const struct vs_fault_stats *a,
			const struct vs_fault_stats *b,
			struct vs_fault_stats *d)
{
	int i;

	d->faults = b->faults - a->faults;
	d->locked = b->locked - a->locked;
	d->spf_success = b->spf_success - a->spf_success;
	for (i = 0; i < VS_SPF_ABORT_NR; i++)
		d->spf_abort[i] = b->spf_abort[i] - a->spf_abort[i];
	d->vma_lock_success = b->vma_lock_success - a->vma_lock_success;
	d->vma_lock_abort = b->vma_lock_abort - a->vma_lock_abort;
	d->vma_lock_retry = b->vma_lock_retry - a->vma_lock_retry;
	d->vma_lock_miss = b->vma_lock_miss - a->vma_lock_miss;
	d->sigsegv = b->sigsegv - a->sigsegv;
	d->sigbus = b->sigbus - a->sigbus;
	d->oom = b->oom - a->oom;
}

/*
 * The faulting threads are w[0..@nr), the writer (if any) w[@nr].
 * faults/s is over the wall time from the first thread's start to the
 * last one's end; ns per fault is per thread: their summed loop times
 * over the faults, the zaps included.
 */
static void summarise(const struct worker *w, unsigned int nr,
		      bool writer, struct sample *s)
{
	uint64_t ns = 0, pages = 0, lo = UINT64_MAX, hi = 0;
	uint64_t start = UINT64_MAX, end = 0;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		ns += w[i].t1 - w[i].t0;
		pages += w[i].pages;
		lo = w[i].pages < lo ? w[i].pages : lo;
		hi = w[i].pages > hi ? w[i].pages : hi;
		start = w[i].t0 < start ? w[i].t0 : start;
		end = w[i].t1 > end ? w[i].t1 : end;
	}
	s->pages = pages;
	s->faults_per_s = (double)s->st.faults * 1e9 / (double)(end - start);
	s->ns_per_fault = s->st.faults ? (double)ns / (double)s->st.faults : 0;
	s->fairness = hi ? (double)lo / (double)hi : 0;
	s->writer_ops = writer ? w[nr].ops : 0;
	s->writer_ops_per_s = writer ? (double)w[nr].ops * 1e9 /
				       (double)(w[nr].t1 - w[nr].t0) : 0;
}

/*
 * mm_setup - an mm for one measurement: mmap_lock of kind @lock, fault
 * strategy @strategy, @nr slices mapped at BENCH_BASE.  One warm-up
 * round over the whole mapping allocates its PTE pages and its
 * anon_vma, so that the timed rounds see the steady state.
 * Return: 0 and *@mmp, or a negative errno (reported).
 */
static int mm_setup(const char *lock, int strategy, unsigned int nr,
		    struct vs_mm **mmp)
{
	struct vs_mm_options o = {
		.lock_kind = lock,
		.pool_pages = (size_t)nr * SLICE_PAGES + POOL_SLACK,
	};
	const char *what = "vs_mm_create";
	struct vs_mm *mm;
	unsigned int i;
	long ret;
	int err;

	if (o.pool_pages < MIN_POOL_PAGES)
		o.pool_pages = MIN_POOL_PAGES;
	err = vs_mm_create(&mm, &o);
	if (err)
		goto fail;
	what = "vs_mm_set_fault_strategy";
	err = vs_mm_set_fault_strategy(mm, strategy);
	if (err)
		goto destroy;
	what = "vs_mmap";
	for (i = 0; i < (opt.shared ? 1 : nr) && !err; i++) {
		ret = vs_mmap(mm, slice_base(i), (opt.shared ? nr : 1) *
			      SLICE_BYTES, VS_PROT_READ | VS_PROT_WRITE,
			      VS_MAP_PRIVATE | VS_MAP_ANONYMOUS | VS_MAP_FIXED,
			      NULL, 0);
		err = ret < 0 ? (int)ret : 0;
	}
	if (err)
		goto destroy;
	what = "warm-up round";
	for (i = 0; i < nr && !err; i++)
		err = fault_round(mm, slice_base(i));
	if (err)
		goto destroy;
	*mmp = mm;
	return 0;
destroy:
	vs_mm_destroy(mm);
fail:
	fprintf(stderr, "faultbench: %s %s: %s: %s\n", lock,
		vs_fault_strategy_name(strategy), what, vs_strerror(err));
	return err;
}

/*
 * measure - run @nr faulting threads (and the @writer) on a fresh mm of
 * @lock and @strategy for --duration.
 * Return: 0 with *@s filled in, or a negative errno.
 */
static int measure(const char *lock, int strategy, unsigned int nr,
		   enum writer writer, struct sample *s)
{
	unsigned int i, nthr = nr + (writer == W_MMAP);
	struct vs_fault_stats before, after;
	struct worker *w;
	struct vs_mm *mm;
	int err, e;

	err = mm_setup(lock, strategy, nr, &mm);
	if (err)
		return err;
	w = calloc(nthr, sizeof(*w));
	if (!w) {
		err = -ENOMEM;
		goto out_mm;
	}
	for (i = 0; i < nthr; i++) {
		w[i].mm = mm;
		w[i].base = slice_base(i);
		w[i].writer = i == nr;
	}
	err = bench_start(w, sizeof(*w), nthr, worker_main);
	if (err)
		goto out;
	vs_fault_stats_get(&before);
	/* Under qsbr the main thread (attached by mm_setup) would hold up
	 * the writer's grace periods while it sleeps in bench_run(). */
	vs_rcu_thread_offline();
	bench_run(opt.duration_ms);
	err = bench_join(w, sizeof(*w), nthr);
	vs_rcu_thread_online();
	vs_fault_stats_get(&after);
	stats_delta(&before, &after, &s->st);
	if (!err)
		summarise(w, nr, writer == W_MMAP, s);
out:
	free(w);
out_mm:
	e = vs_mm_destroy(mm);
	if (!err)
		err = e;
	return err;
}

/* ---- rows: one per lock, threads, writer and strategy ---------------- */

struct row {
	const char *lock;
	unsigned int threads;
	enum writer writer;
	int strategy;
	bool done;
	double faults_per_s, ns_per_fault;	/* medians over the repeats */
	double min, max;			/* faults/s over the repeats */
	struct sample at_med;	/* the repeat with the median faults/s */
};

static struct row rows[MAX_ROWS];
static int nr_rows;

/* Rows in run order: per lock, thread count and writer, the strategies
 * side by side (run_group() measures them round robin). */
static void build_rows(void)
{
	int l, c, wr, s;
	struct row *r;

	for (l = 0; l < opt.nr_locks; l++)
		for (c = 0; c < opt.nr_cols; c++)
			for (wr = 0; wr < NR_WRITERS; wr++)
				for (s = 0; s < VS_FAULT_NR_STRATEGIES; s++) {
					if (!opt.writer[wr] || !opt.strategy[s])
						continue;
					r = &rows[nr_rows++];
					r->lock = opt.lock[l];
					r->threads = opt.threads[c];
					r->writer = (enum writer)wr;
					r->strategy = s;
				}
}

static const struct row *find_row(const char *lock, int strategy,
				  unsigned int threads, enum writer writer)
{
	int i;

	for (i = 0; i < nr_rows; i++)
		if (rows[i].strategy == strategy &&
		    rows[i].threads == threads && rows[i].writer == writer &&
		    strcmp(rows[i].lock, lock) == 0)
			return rows[i].done ? &rows[i] : NULL;
	return NULL;
}

static void row_set(struct row *r, struct sample *s, unsigned int nr)
{
	bench_sort_at(s, nr, sizeof(*s), offsetof(struct sample, faults_per_s));
	r->min = s[0].faults_per_s;
	r->max = s[nr - 1].faults_per_s;
	r->at_med = s[(nr - 1) / 2];
	r->faults_per_s = bench_median_at(
		s, nr, sizeof(*s), offsetof(struct sample, faults_per_s));
	r->ns_per_fault = bench_median_at(
		s, nr, sizeof(*s), offsetof(struct sample, ns_per_fault));
	r->done = true;
}

/* ---- output ---------------------------------------------------------- */

static void print_json(const struct row *r)
{
	const struct sample *m = &r->at_med;
	const struct vs_fault_stats *st = &m->st;
	const char *sep = "";
	int i;

	printf("{\"strategy\":\"%s\",\"lock\":\"%s\",\"threads\":%u,"
	       "\"writer\":\"%s\",\"mapping\":\"%s\",\"faults_per_s\":%.0f,"
	       "\"ns_per_fault\":%.2f,\"min_faults_per_s\":%.0f,"
	       "\"max_faults_per_s\":%.0f,\"repeat\":%u,\"duration_ms\":%u,"
	       "\"faults\":%lu,\"pages\":%llu,\"fairness\":%.3f,"
	       "\"locked\":%lu,\"spf_success\":%lu,\"spf_abort\":%lu,"
	       "\"spf_abort_reasons\":{",
	       vs_fault_strategy_name(r->strategy), r->lock, r->threads,
	       writer_name[r->writer], opt.shared ? "shared" : "per-thread",
	       r->faults_per_s, r->ns_per_fault,
	       r->min, r->max, opt.repeat, opt.duration_ms, st->faults,
	       (unsigned long long)m->pages, m->fairness, st->locked,
	       st->spf_success, spf_abort_total(st));
	for (i = 0; i < VS_SPF_ABORT_NR; i++) {
		if (!st->spf_abort[i])
			continue;
		printf("%s\"%s\":%lu", sep, vs_spf_abort_name(i),
		       st->spf_abort[i]);
		sep = ",";
	}
	printf("},\"vma_lock_success\":%lu,\"vma_lock_abort\":%lu,"
	       "\"vma_lock_retry\":%lu,\"vma_lock_miss\":%lu",
	       st->vma_lock_success, st->vma_lock_abort, st->vma_lock_retry,
	       st->vma_lock_miss);
	if (r->writer == W_MMAP)
		printf(",\"writer_ops\":%llu,\"writer_ops_per_s\":%.0f",
		       (unsigned long long)m->writer_ops, m->writer_ops_per_s);
	printf("}\n");
	fflush(stdout);
}

static void print_header(void)
{
	printf("# median of %u x %u ms; one %lu KiB slice per faulting "
	       "thread (%s): a write per page, then MADV_DONTNEED\n",
	       opt.repeat, opt.duration_ms, SLICE_BYTES >> 10,
	       opt.shared ? "all in one VMA" : "a VMA each");
	printf("# faults/s: all threads over the wall time; ns/fault: per "
	       "thread, the zap included; %u CPUs\n",
	       uv_available_parallelism());
	printf("# counters (faults, locked, spf ok/abort, vma_lock "
	       "ok/abort/retry/miss) from the median repeat;\n#   "
	       "writer/s: mmap+munmap pairs per second\n");
}

static void print_table(void)
{
	const struct row *r;
	const struct vs_fault_stats *st;
	int i;

	print_header();
	printf("%-6s %-8s %3s %-6s %10s %8s %9s %9s %9s %9s %9s %8s %8s "
	       "%7s %9s\n", "strat", "lock", "thr", "writer", "faults/s",
	       "ns/fault", "faults", "locked", "spf_ok", "spf_abort",
	       "vl_ok", "vl_abort", "vl_retry", "vl_miss", "writer/s");
	for (i = 0, r = rows; i < nr_rows; i++, r++) {
		printf("%-6s %-8s %3u %-6s ", vs_fault_strategy_name(r->strategy),
		       r->lock, r->threads, writer_name[r->writer]);
		if (!r->done) {
			printf("%10s\n", "-");
			continue;
		}
		st = &r->at_med.st;
		printf("%10.0f %8.1f %9lu %9lu %9lu %9lu %9lu %8lu %8lu "
		       "%7lu ", r->faults_per_s, r->ns_per_fault, st->faults,
		       st->locked, st->spf_success, spf_abort_total(st),
		       st->vma_lock_success,
		       st->vma_lock_abort, st->vma_lock_retry,
		       st->vma_lock_miss);
		if (r->writer == W_MMAP)
			printf("%9.0f\n", r->at_med.writer_ops_per_s);
		else
			printf("%9s\n", "-");
	}
}

/* ---- targets (docs/man/faultbench.1, TARGETS) ------------------------- */

struct operand {
	int strategy;
	unsigned int threads;
	enum writer writer;
};

static const char *operand_name(struct operand a, char *buf, size_t len)
{
	snprintf(buf, len, "%s @%u %s", vs_fault_strategy_name(a.strategy),
		 a.threads, writer_name[a.writer]);
	return buf;
}

/*
 * One target: @a alone (absolute, ns per fault) or @a over @b.  @nsf
 * compares ns per fault, else faults/s; @at_least: the value must be
 * >= @limit, else <= @limit.  Prints "a / b ns/fault = x (<= limit)
 * PASS".  Return: 1, or 0 when an input was not measured.
 */
static int target(const char *lock, struct operand a,
		  const struct operand *b, bool nsf, double limit,
		  bool at_least)
{
	const struct row *x = find_row(lock, a.strategy, a.threads, a.writer);
	const struct row *y = b ? find_row(lock, b->strategy, b->threads,
					   b->writer) : NULL;
	char an[48], bn[48], lhs[112];
	double v;
	bool pass;

	if (!x || (b && !y))
		return 0;
	if (b)
		v = nsf ? x->ns_per_fault / y->ns_per_fault
			: x->faults_per_s / y->faults_per_s;
	else
		v = nsf ? x->ns_per_fault : x->faults_per_s;
	pass = at_least ? v >= limit : v <= limit;
	snprintf(lhs, sizeof(lhs), "%s%s%s %s",
		 operand_name(a, an, sizeof(an)), b ? " / " : "",
		 b ? operand_name(*b, bn, sizeof(bn)) : "",
		 nsf ? "ns/fault" : "faults/s");
	printf("  %-44s = %7.3f (%s %6.2f) %s\n", lhs, v,
	       at_least ? ">=" : "<=", limit, pass ? "PASS" : "MISS");
	return 1;
}

#define OPND(s, t, w) ((struct operand){ VS_FAULT_##s, t, w })

static int lock_targets(const char *lock)
{
	static const int fast[] = { VS_FAULT_SPF, VS_FAULT_PERVMA };
	const struct operand l1 = OPND(LOCKED, 1, W_NONE);
	const struct operand l1w = OPND(LOCKED, 1, W_MMAP);
	const struct operand l2 = OPND(LOCKED, 2, W_NONE);
	int i, nr = 0;

	nr += target(lock, l1, NULL, true, 200, false);
	for (i = 0; i < 2; i++)
		nr += target(lock, (struct operand){ fast[i], 1, W_NONE },
			     &l1, true, 1.10, false);
	for (i = 0; i < 2; i++)
		nr += target(lock, (struct operand){ fast[i], 1, W_MMAP },
			     &l1w, false, 1.8, true);
	for (i = 0; i < 2; i++)
		nr += target(lock, (struct operand){ fast[i], 2, W_NONE },
			     &l2, false, 1.2, true);
	return nr;
}

static void print_targets(void)
{
	int i;

	for (i = 0; i < opt.nr_locks; i++) {
		printf("\ntargets (mmap_lock %s):\n", opt.lock[i]);
		if (!lock_targets(opt.lock[i]))
			printf("  none: their inputs were not measured\n");
	}
}

/* ---- the run ---------------------------------------------------------- */

/*
 * run_group - the rows of one lock, thread count and writer: one per
 * strategy, measured round robin within each repeat, so that load from
 * neighbours that changes slowly hits every strategy alike.
 * Return: 0 (also when interrupted), or a negative errno.
 */
static int run_group(struct row **g, int nr)
{
	static struct sample s[VS_FAULT_NR_STRATEGIES][BENCH_MAX_REPEAT];
	unsigned int r;
	int i, err;

	for (r = 0; r < opt.repeat; r++) {
		for (i = 0; i < nr; i++) {
			memset(&s[i][r], 0, sizeof(s[i][r]));
			err = measure(g[i]->lock, g[i]->strategy,
				      g[i]->threads, g[i]->writer, &s[i][r]);
			if (err)
				return err;
			if (bench_interrupted)
				return 0;
		}
	}
	for (i = 0; i < nr; i++)
		row_set(g[i], s[i], opt.repeat);
	for (i = 0; opt.json && i < nr; i++)
		print_json(g[i]);
	return 0;
}

/* Every group, in row order.  Return: 0, or 1 after a failure. */
static int run_all(void)
{
	struct row *g[VS_FAULT_NR_STRATEGIES];
	int i = 0, nr, err = 0;

	while (i < nr_rows && !err && !bench_interrupted) {
		nr = 0;
		do {
			g[nr++] = &rows[i++];
		} while (i < nr_rows && rows[i].threads == g[0]->threads &&
			 rows[i].writer == g[0]->writer &&
			 rows[i].lock == g[0]->lock);
		err = run_group(g, nr);
		if (err)
			fprintf(stderr, "faultbench: %s, %u threads, writer "
				"%s: %s\n", g[0]->lock, g[0]->threads,
				writer_name[g[0]->writer], vs_strerror(err));
	}
	return err ? 1 : 0;
}

/* ---- options ---------------------------------------------------------- */

static const char usage_text[] =
"usage: faultbench [options]\n"
"\n"
"The multi-fault loop: each thread writes every page of its own 2 MiB\n"
"slice, then MADV_DONTNEED, repeated; faults/s and ns per fault for\n"
"each fault strategy, with and without a thread doing mmap+munmap of\n"
"an unrelated VMA.\n"
"\n"
"  -s, --strategy LIST    locked,spf,pervma or all (default all)\n"
"  -l, --lock LIST        mmap_lock kinds: rwsem,pthread,percpu,brlock,\n"
"                         prwlock or all (default rwsem)\n"
"  -t, --threads LIST     faulting threads, e.g. 1,2 or 1-4 (default 1,2)\n"
"  -w, --writer LIST      none, mmap or all (default all)\n"
"  -d, --duration SEC     run time of one measurement, e.g. 1 or 0.3\n"
"                         (default 1)\n"
"  -r, --repeat N         measurements per row; the median is shown\n"
"                         (default 3)\n"
"  -m, --mapping KIND     per-thread: a VMA per slice (default);\n"
"                         shared: one VMA holding every slice\n"
"  -q, --quick            --duration 0.3 unless --duration is given\n"
"  -j, --json             one JSON object per row\n"
"  -h, --help             this text\n"
"\n"
"See faultbench(1) for the output and the targets it checks.\n";

static void threads_item(const char *item)
{
	bench_threads_item(item, opt.threads, &opt.nr_cols, MAX_COLS,
			   MAX_THREADS);
}

/* A kind of sync/lock.h, in its order for "all". */
static void lock_item(const char *item)
{
	bench_lock_item(item, vs_lock_kind_name, "a lock kind", opt.lock,
			&opt.nr_locks);
}

static void strategy_item(const char *item)
{
	int s;

	if (strcmp(item, "all") == 0) {
		for (s = 0; s < VS_FAULT_NR_STRATEGIES; s++)
			opt.strategy[s] = true;
		return;
	}
	s = vs_fault_strategy_parse(item);
	if (s < 0)
		bench_usage_error("--strategy: '%s' is not a strategy "
				  "(valid: locked, spf, pervma, all)", item);
	opt.strategy[s] = true;
}

static void writer_item(const char *item)
{
	int w;

	for (w = 0; w < NR_WRITERS; w++) {
		if (strcmp(item, "all") == 0 ||
		    strcmp(item, writer_name[w]) == 0)
			opt.writer[w] = true;
	}
	if (strcmp(item, "all") && strcmp(item, "none") &&
	    strcmp(item, "mmap"))
		bench_usage_error("--writer: '%s' is not a writer (valid: "
				  "none, mmap, all)", item);
}

static const struct option long_opts[] = {
	{ "strategy", required_argument, NULL, 's' },
	{ "lock", required_argument, NULL, 'l' },
	{ "threads", required_argument, NULL, 't' },
	{ "writer", required_argument, NULL, 'w' },
	{ "duration", required_argument, NULL, 'd' },
	{ "repeat", required_argument, NULL, 'r' },
	{ "mapping", required_argument, NULL, 'm' },
	{ "quick", no_argument, NULL, 'q' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static bool any(const bool *v, int n)
{
	while (n--)
		if (v[n])
			return true;
	return false;
}

static void parse_options(int argc, char **argv)
{
	bool duration = false, quick = false;
	int ch;

	while ((ch = getopt_long(argc, argv, "s:l:t:w:d:r:m:qjh", long_opts,
				 NULL)) != -1) {
		switch (ch) {
		case 's':
			bench_for_each_item(optarg, strategy_item);
			break;
		case 'l':
			bench_for_each_item(optarg, lock_item);
			break;
		case 't':
			bench_for_each_item(optarg, threads_item);
			break;
		case 'w':
			bench_for_each_item(optarg, writer_item);
			break;
		case 'd':
			if (bench_parse_seconds(optarg, MAX_DURATION_MS,
						&opt.duration_ms))
				bench_usage_error("--duration: '%s' is not a "
						  "duration in seconds "
						  "(0.001..%u)", optarg,
						  MAX_DURATION_MS / 1000);
			duration = true;
			break;
		case 'r':
			if (bench_parse_uint(optarg, 1, BENCH_MAX_REPEAT,
					     &opt.repeat))
				bench_usage_error("--repeat: '%s' is not a "
						  "repeat count (1..%d)",
						  optarg, BENCH_MAX_REPEAT);
			break;
		case 'm':
			if (strcmp(optarg, "shared") &&
			    strcmp(optarg, "per-thread"))
				bench_usage_error("--mapping: '%s' is not "
						  "per-thread or shared",
						  optarg);
			opt.shared = !strcmp(optarg, "shared");
			break;
		case 'q':
			quick = true;
			break;
		case 'j':
			opt.json = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		default:
			/* getopt_long() said what was wrong. */
			bench_try_help();
		}
	}
	if (optind < argc)
		bench_usage_error("unexpected argument '%s'", argv[optind]);
	if (quick && !duration)
		opt.duration_ms = QUICK_DURATION_MS;
	if (!any(opt.strategy, VS_FAULT_NR_STRATEGIES))
		strategy_item("all");
	if (!opt.nr_locks)
		lock_item("rwsem");
	if (!opt.nr_cols) {
		bench_add_threads(opt.threads, &opt.nr_cols, MAX_COLS, 1);
		bench_add_threads(opt.threads, &opt.nr_cols, MAX_COLS, 2);
	}
	if (!any(opt.writer, NR_WRITERS))
		writer_item("all");
}

/* ---- main ------------------------------------------------------------- */

int main(int argc, char **argv)
{
	int ret;

	bench_prog = "faultbench";
	parse_options(argc, argv);
	build_rows();
	/* The main thread sets each mm up and goes offline while it waits
	 * (measure()); attach it once, before any of that. */
	vs_thread_attach();
	if (bench_control_init())
		return 1;
	ret = run_all();
	if (!opt.json) {
		print_table();
		print_targets();
	}
	return bench_control_close(ret);
}
