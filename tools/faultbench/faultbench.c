/* SPDX-License-Identifier: MIT */
/*
 * faultbench - the multi-fault loop (Kamezawa's multi-fault, as
 * will-it-scale's page_fault1 runs it) on the simulated backing, for
 * each fault strategy of vmsim/fault.h.
 *
 * A measurement maps T 2 MiB slices of anonymous private memory, one
 * per faulting thread: each its own VMA, 2 MiB apart (will-it-scale's
 * page_fault1 shape), or with --mapping shared one VMA holding them all
 * (Kamezawa's multi-fault shape), and runs the loop of vmsim/workload.h
 * (vs_workload_run()) on T tasks (and with --writer mmap one more, which
 * maps and unmaps a page far away, in a loop), started together.  Each
 * faulting task writes one byte per page of its slice (one fault per
 * page), zaps the slice with MADV_DONTNEED, and goes round again until
 * --duration is over; no barrier, each on its own.  Faults are what
 * vs_fault_stats counts.
 * Every row is measured once a round, --repeat rounds, so that drift
 * hits every row alike; a row reports the median over the rounds and a
 * target the median of its per-round ratios.
 * docs/man/faultbench.1 says what each number means.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <uv.h>

#include <vmsim/vmsim.h>
#include "bench_kernel.h"
#include "bench_host.h"
#include "bench_loop.h"

/*
 * The benchmark mapping starts on a PTE-page boundary, so each slice
 * has a PTE page, and a PTL, of its own; per-thread slices leave a
 * 2 MiB hole between them, so that they never merge.  The writer's page is 255 GiB
 * above it: another VMA, another PTE page, nothing to merge with.
 */
#define BENCH_BASE 0x40000000UL		/* 1 GiB */
#define WRITER_ADDR 0x4000000000UL	/* 256 GiB */
#define MAX_ROWS \
	(BENCH_MAX_LOCKS * BENCH_MAX_COLS * NR_WRITERS * VS_FAULT_NR_STRATEGIES)

enum writer { W_NONE, W_MMAP, NR_WRITERS };

static const char *const writer_name[NR_WRITERS] = { "none", "mmap" };

static struct {
	bool strategy[VS_FAULT_NR_STRATEGIES];
	const char *lock[BENCH_MAX_LOCKS];
	int nr_locks;
	bool writer[NR_WRITERS];
	bool shared;		/* --mapping shared: one VMA for all slices */
	const char *kernel;	/* --kernel; NULL: vmsim's default */
} opt;

/* ---- the workload: each task its own slice, no barrier --------------- */

/*
 * faultbench's loop, as a workload of vmsim/workload.h that
 * vs_workload_run() runs: faulting task i writes one byte to every page
 * of slice i (one fault each: MADV_DONTNEED left no PTE) and zaps the
 * slice itself, with no barrier and no serial phase, until --duration
 * is over.  That is page_fault1's shape, not Kamezawa's: the built-in
 * "multi-fault" has task 0 zap every slice between passes, all tasks
 * waiting at a barrier, which would put the zaps outside the faulting
 * tasks' time.  Here the zap is part of a pass; page_fault1 counts its
 * munmap the same way.  With --writer mmap, task T (after the T
 * faulting tasks) maps and unmaps a page far away, a pair a pass.
 */

/* The start of slice @i. */
static unsigned long slice_base(unsigned int i)
{
	return BENCH_BASE + i * (opt.shared ? BENCH_SLICE_BYTES :
					       2 * BENCH_SLICE_BYTES);
}

/*
 * struct task - a task's record (its priv, bench_loop_measure())
 * @l:		first: its clock, pages and passes
 * @writer:	the writer, not a faulting task
 * @host:	the host's work in the steady state, on its thread
 * @host_ops:	faults or pairs that @host covers
 */
struct task {
	struct bench_loop_task l;
	bool writer;
	struct bench_host host;
	uint64_t host_ops;
	bool host_on;
};

/*
 * The host's work is counted from the second pass of a faulting task on
 * (its first takes page frames of the pool that the host has not yet
 * given the process) and from the writer's 1000th pair on (its object
 * caches grow at first): the steady state.
 */
#define HOST_WARM_FAULTS BENCH_SLICE_PAGES
#define HOST_WARM_PAIRS 1000

static void host_begin(struct task *k, uint64_t ops)
{
	bench_host_begin(&k->host);
	k->host_ops = ops;
	k->host_on = true;
}

/* On the task after its last pass (bench_loop_measure()'s task_end). */
static void host_end(struct vs_workload_task *t)
{
	struct task *k = t->priv;

	if (!k->host_on)
		return;
	bench_host_end(&k->host);
	k->host_ops = (k->writer ? k->l.passes : k->l.pages) - k->host_ops;
	k->host_on = false;
}

/* One mmap+munmap of one anonymous page at WRITER_ADDR: the mmap_lock
 * for write twice, no VMA of the benchmark mapping touched. */
static int writer_pair(struct vs_mm *mm)
{
	long a = vs_mmap(mm, WRITER_ADDR, VS_PAGE_SIZE,
			 VS_PROT_READ | VS_PROT_WRITE,
			 VS_MAP_PRIVATE | VS_MAP_ANONYMOUS | VS_MAP_FIXED,
			 NULL, 0);

	if (a < 0)
		return (int)a;
	return vs_munmap(mm, (unsigned long)a, VS_PAGE_SIZE);
}

static int fb_pass(struct vs_workload_task *t)
{
	struct task *k = t->priv;
	unsigned long base = slice_base(t->id);
	int err;

	if (k->writer) {
		err = writer_pair(t->mm);
		if (!err && t->passes + 1 == HOST_WARM_PAIRS)
			host_begin(k, HOST_WARM_PAIRS);
		return err;
	}
	err = vs_workload_touch_range(t, base, BENCH_SLICE_BYTES);
	if (!err)
		err = vs_workload_zap(t->w, t->mm, base, BENCH_SLICE_BYTES);
	if (!err && !t->passes)
		host_begin(k, HOST_WARM_FAULTS);
	return err;
}

/*
 * map_slices - @nr slices at BENCH_BASE in @mm, then one warm-up round
 * over them (a write to every page, the zap), which allocates the PTE
 * pages and the anon_vma, so that the timed passes see the steady
 * state.
 * Return: 0, or a negative errno and in *@what the step that failed.
 */
static int map_slices(struct vs_mm *mm, unsigned int nr, const char **what)
{
	unsigned long a, base;
	unsigned int i;
	long ret;
	int err = 0;

	*what = "vs_mmap";
	for (i = 0; i < (opt.shared ? 1 : nr) && !err; i++) {
		ret = vs_mmap(mm, slice_base(i), (opt.shared ? nr : 1) *
			      BENCH_SLICE_BYTES, VS_PROT_READ | VS_PROT_WRITE,
			      VS_MAP_PRIVATE | VS_MAP_ANONYMOUS | VS_MAP_FIXED,
			      NULL, 0);
		err = ret < 0 ? (int)ret : 0;
	}
	*what = "warm-up round";
	for (i = 0; i < nr && !err; i++) {
		base = slice_base(i);
		for (a = base; a < base + BENCH_SLICE_BYTES && !err;
		     a += VS_PAGE_SIZE)
			err = vs_access(mm, a, 1, 1);
		if (!err)
			err = vs_madvise(mm, base, BENCH_SLICE_BYTES,
					 VS_MADV_DONTNEED);
	}
	return err;
}

/* The measurement under way: what fb_setup() maps. */
static struct {
	unsigned int nr;	/* faulting tasks */
} cur;

/* The runner made the mm (lock kind, strategy, pool); map the slices. */
static int fb_setup(struct vs_workload *w)
{
	const char *what;
	int err = map_slices(w->mm, cur.nr, &what);

	if (err)
		fprintf(stderr, "faultbench: %s %s: %s: %s\n",
			w->cfg.mm.lock_kind,
			vs_fault_strategy_name(w->cfg.strategy), what,
			vs_strerror(err));
	return err;
}

static const struct vs_workload_ops faultbench_ops = {
	.name = "faultbench",
	.about = "write every page of your own slice, zap it; no barrier",
	.bytes = BENCH_SLICE_BYTES,
	.setup = fb_setup,
	.pass = fb_pass,
};

/* ---- one measurement ------------------------------------------------- */

struct sample {
	struct bench_loop_sample loop;	/* first; faults: the model's */
	double fairness;	/* fewest pages of a thread over most */
	double writer_ops_per_s;
	uint64_t writer_ops;
	struct vs_fault_stats st;	/* the measurement's delta */
	struct bench_host host;		/* summed over the threads */
	uint64_t host_ops;		/* what @host covers */
};

static unsigned long spf_abort_total(const struct vs_fault_stats *st)
{
	unsigned long n = 0;
	int i;

	for (i = 0; i < VS_SPF_ABORT_NR; i++)
		n += st->spf_abort[i];
	return n;
}

/*
 * The faulting tasks are k[0..@nr), the writer (if any) k[@nr]; the
 * faults are the model's count (bench_loop_summarise()).
 */
static void summarise(const struct task *k, unsigned int nr,
		      bool writer, struct sample *s)
{
	uint64_t faults = s->st.faults, lo = UINT64_MAX, hi = 0;
	unsigned int i;

	bench_loop_summarise(k, sizeof(*k), nr, &faults, &s->loop);
	for (i = 0; i < nr; i++) {
		lo = k[i].l.pages < lo ? k[i].l.pages : lo;
		hi = k[i].l.pages > hi ? k[i].l.pages : hi;
	}
	s->fairness = hi ? (double)lo / (double)hi : 0;
	s->host = (struct bench_host){ 0 };
	s->host_ops = 0;
	for (i = 0; i < nr + writer; i++) {
		bench_host_add(&s->host, &k[i].host);
		s->host_ops += k[i].host_ops;
	}
	s->writer_ops = writer ? k[nr].l.passes : 0;
	s->writer_ops_per_s = writer ? (double)k[nr].l.passes * 1e9 /
				       (double)(k[nr].l.t1 - k[nr].l.t0) : 0;
}

/*
 * measure - run @nr faulting tasks (and the @writer) on a fresh mm of
 * @lock and @strategy for --duration: vs_workload_run() of
 * faultbench_ops.  No fault of the setup is counted, none after the
 * tasks left.
 * Return: 0 with *@s filled in, or a negative errno.
 */
static int measure(const char *lock, int strategy, unsigned int nr,
		   enum writer writer, struct sample *s)
{
	unsigned int i, ntask = nr + (writer == W_MMAP);
	struct vs_workload_config c = {
		.ops = &faultbench_ops,
		.nr_tasks = ntask,
		.mode = VS_WORKLOAD_THREADS,
		.backing = VS_WORKLOAD_MODEL,
		.strategy = strategy,
		.mm = {
			.lock_kind = lock,
			.pool_pages = bench_pool_pages(nr),
			.kernel = opt.kernel,
		},
	};
	struct vs_workload_result res;
	struct task *k;
	int err;

	k = calloc(ntask, sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (i = 0; i < ntask; i++)
		k[i].writer = i == nr;
	cur.nr = nr;
	err = bench_loop_measure(&c, k, sizeof(*k), host_end, &res);
	if (!err) {
		s->st = res.st;
		summarise(k, nr, writer == W_MMAP, s);
	}
	free(k);
	return err;
}

/* ---- rows: one per lock, threads, writer and strategy ---------------- */

struct row {
	struct bench_loop_row loop;	/* first */
	const char *lock;
	unsigned int threads;
	enum writer writer;
	int strategy;
};

static struct row rows[MAX_ROWS];
static int nr_rows;
static struct bench_loop_rows table = { .row = rows,
					.size = sizeof(rows[0]) };

/* The sample of @r's median round. */
static const struct sample *med(const struct row *r)
{
	return r->loop.at_med;
}

/* Rows in run order: per lock, thread count and writer, the strategies
 * side by side. */
static void build_rows(void)
{
	int l, c, wr, s;
	struct row *r;

	for (l = 0; l < opt.nr_locks; l++)
		for (c = 0; c < bench_std.nr_threads; c++)
			for (wr = 0; wr < NR_WRITERS; wr++)
				for (s = 0; s < VS_FAULT_NR_STRATEGIES; s++) {
					if (!opt.writer[wr] || !opt.strategy[s])
						continue;
					r = &rows[nr_rows++];
					r->lock = opt.lock[l];
					r->threads = bench_std.threads[c];
					r->writer = (enum writer)wr;
					r->strategy = s;
				}
	table.nr = (unsigned int)nr_rows;
}

static const struct row *find_row(const char *lock, int strategy,
				  unsigned int threads, enum writer writer)
{
	int i;

	for (i = 0; i < nr_rows; i++)
		if (rows[i].strategy == strategy &&
		    rows[i].threads == threads && rows[i].writer == writer &&
		    strcmp(rows[i].lock, lock) == 0)
			return rows[i].loop.done ? &rows[i] : NULL;
	return NULL;
}

/* ---- output ---------------------------------------------------------- */

/* "spf_abort_reasons":{"reason":n,...}: the nonzero ones. */
static void print_json_aborts(const struct vs_fault_stats *st)
{
	int i;

	bench_json_object("spf_abort_reasons");
	for (i = 0; i < VS_SPF_ABORT_NR; i++)
		if (st->spf_abort[i])
			bench_json_uint(vs_spf_abort_name(i), st->spf_abort[i]);
	bench_json_object_end();
}

static void print_json(const struct row *r)
{
	const struct sample *m = med(r);
	const struct vs_fault_stats *st = &m->st;

	bench_json_begin();
	bench_json_str("strategy", vs_fault_strategy_name(r->strategy));
	bench_json_str("lock", r->lock);
	bench_json_uint("threads", r->threads);
	bench_json_str("writer", writer_name[r->writer]);
	bench_json_str("mapping", opt.shared ? "shared" : "per-thread");
	bench_json_range("faults_per_s", &r->loop.faults_per_s, 0);
	bench_json_range("ns_per_fault", &r->loop.ns_per_fault, 2);
	bench_json_uint("rounds", table.grid.done);
	bench_json_num("duration_s", bench_std.duration_ms / 1000.0, 3);
	/* The sums over the threads of the median round. */
	bench_json_uint("faults", st->faults);
	bench_json_uint("pages", m->loop.pages);
	bench_json_num("fairness", m->fairness, 3);
	bench_json_uint("locked", st->locked);
	bench_json_uint("spf_success", st->spf_success);
	bench_json_uint("spf_abort", spf_abort_total(st));
	print_json_aborts(st);
	bench_json_uint("vma_lock_success", st->vma_lock_success);
	bench_json_uint("vma_lock_abort", st->vma_lock_abort);
	bench_json_uint("vma_lock_retry", st->vma_lock_retry);
	bench_json_uint("vma_lock_miss", st->vma_lock_miss);
	if (r->writer == W_MMAP) {
		bench_json_uint("writer_ops", m->writer_ops);
		bench_json_num("writer_ops_per_s", m->writer_ops_per_s, 0);
	}
	bench_host_json(&m->host, (double)m->host_ops);
	bench_json_end();
}

static void print_all_json(void)
{
	int i;

	for (i = 0; i < nr_rows; i++)
		if (rows[i].loop.done)
			print_json(&rows[i]);
}

static void print_header(void)
{
	bench_print_rounds_note("faults/s and ns/fault", table.grid.done,
				bench_std.duration_ms);
	printf("# one %lu KiB slice per faulting thread (%s): a write per "
	       "page, then MADV_DONTNEED; %u CPUs\n", BENCH_SLICE_BYTES >> 10,
	       opt.shared ? "all in one VMA" : "a VMA each",
	       uv_available_parallelism());
	printf("# faults/s: all threads over the wall time; ns/fault: per "
	       "thread, the zap included\n");
	printf("# counters (faults, locked, spf ok/abort, vma_lock "
	       "ok/abort/retry/miss): sums over the threads\n#   of the "
	       "median round; writer/s: mmap+munmap pairs per second\n");
}

/* What the host kernel did for the rows: sums over the threads of the
 * median round, per 10,000 model operations. */
static void print_host(void)
{
	const struct row *r;
	char line[256];
	int i;

	printf("\nhost work for the model in the steady state (sums over the "
	       "threads of the median\n  round, from each thread's second "
	       "round or 1000th pair on; operations:\n  faults + writer "
	       "pairs):\n");
	for (i = 0, r = rows; i < nr_rows; i++, r++) {
		if (!r->loop.done)
			continue;
		bench_host_line(line, sizeof(line), &med(r)->host,
				(double)med(r)->host_ops, "operations");
		printf("  %-6s %-8s %3u %-6s %s\n",
		       vs_fault_strategy_name(r->strategy), r->lock,
		       r->threads, writer_name[r->writer], line);
	}
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
		if (!r->loop.done) {
			printf("%10s\n", "-");
			continue;
		}
		st = &med(r)->st;
		printf("%10.0f %8.1f %9lu %9lu %9lu %9lu %9lu %8lu %8lu "
		       "%7lu ", r->loop.faults_per_s.med,
		       r->loop.ns_per_fault.med,
		       st->faults, st->locked, st->spf_success,
		       spf_abort_total(st), st->vma_lock_success,
		       st->vma_lock_abort, st->vma_lock_retry,
		       st->vma_lock_miss);
		if (r->writer == W_MMAP)
			printf("%9.0f\n", med(r)->writer_ops_per_s);
		else
			printf("%9s\n", "-");
	}
	print_host();
}

/*
 * With more than one lock kind the targets come in a block per kind;
 * one table at the end puts the kinds side by side: faults/s per
 * strategy, a line per lock kind, thread count and writer.
 */
static void print_summary(void)
{
	const struct row *r;
	int i, s;

	if (opt.nr_locks < 2 || bench_std.json)
		return;
	printf("\nsummary (faults/s, median over the rounds):\n%-8s %3s "
	       "%-6s", "lock", "thr", "writer");
	for (s = 0; s < VS_FAULT_NR_STRATEGIES; s++)
		if (opt.strategy[s])
			printf(" %10s", vs_fault_strategy_name(s));
	for (i = 0, r = rows; i < nr_rows; i++, r++) {
		/* A group's rows are adjacent, one per strategy. */
		if (i == 0 || r->lock != r[-1].lock ||
		    r->threads != r[-1].threads || r->writer != r[-1].writer)
			printf("\n%-8s %3u %-6s", r->lock, r->threads,
			       writer_name[r->writer]);
		if (r->loop.done)
			printf(" %10.0f", r->loop.faults_per_s.med);
		else
			printf(" %10s", "-");
	}
	printf("\n");
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

/* "lhs = 0.91x (0.85..1.02) (<= 1.10) PASS" or its JSON object; the
 * verdict is on the median. */
static void target_line(const char *lock, const char *lhs,
			const struct bench_range *v, bool ratio, double limit,
			bool at_least)
{
	bool pass = at_least ? v->med >= limit : v->med <= limit;

	if (bench_std.json) {
		bench_json_begin();
		bench_json_str("target", lhs);
		bench_json_str("lock", lock);
		bench_json_range("value", v, 4);
		bench_json_str("limit", at_least ? ">=" : "<=");
		bench_json_num("bound", limit, 2);
		bench_json_bool("pass", pass);
		bench_json_end();
		return;
	}
	printf("  %-44s = ", lhs);
	bench_print_range(v, 24, ratio ? "x" : "");
	printf(" (%s %6.2f) %s\n", at_least ? ">=" : "<=", limit,
	       pass ? "PASS" : "MISS");
}

/*
 * One target: @a alone (absolute, ns per fault) or @a over @b, taken in
 * each round.  @nsf compares ns per fault, else faults/s; @at_least: the
 * median must be >= @limit, else <= @limit.
 * Return: 1, or 0 when an input was not measured.
 */
static int target(const char *lock, struct operand a,
		  const struct operand *b, bool nsf, double limit,
		  bool at_least)
{
	const struct row *x = find_row(lock, a.strategy, a.threads, a.writer);
	const struct row *y = b ? find_row(lock, b->strategy, b->threads,
					   b->writer) : NULL;
	size_t offset = nsf ? BENCH_LOOP_NS_PER_FAULT : BENCH_LOOP_FAULTS_PER_S;
	char an[48], bn[48], lhs[112];
	struct bench_range v;

	if (!x || (b && !y))
		return 0;
	if (b)
		bench_grid_ratio(&table.grid, (unsigned int)(x - rows),
				 (unsigned int)(y - rows), offset, &v);
	else
		bench_grid_range(&table.grid, (unsigned int)(x - rows), offset,
				 &v);
	snprintf(lhs, sizeof(lhs), "%s%s%s %s",
		 operand_name(a, an, sizeof(an)), b ? " / " : "",
		 b ? operand_name(*b, bn, sizeof(bn)) : "",
		 nsf ? "ns/fault" : "faults/s");
	target_line(lock, lhs, &v, b != NULL, limit, at_least);
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
	int i, nr;

	for (i = 0; i < opt.nr_locks; i++) {
		if (!bench_std.json)
			printf("\ntargets (mmap_lock %s; a ratio is taken in "
			       "each round: median (min..max)):\n",
			       opt.lock[i]);
		nr = lock_targets(opt.lock[i]);
		if (!nr && !bench_std.json)
			printf("  none: their inputs were not measured\n");
	}
}

/* ---- the run: every row once a round, rounds --repeat times ---------- */

/* Row @row into @sample.  Return: 0, or a negative errno (reported). */
static int measure_row(void *row, void *sample)
{
	const struct row *r = row;
	int err;

	err = measure(r->lock, r->strategy, r->threads, r->writer, sample);
	if (err)
		fprintf(stderr, "faultbench: %s, %u threads, writer %s: %s\n",
			r->lock, r->threads, writer_name[r->writer],
			vs_strerror(err));
	return err;
}

/* ---- options ---------------------------------------------------------- */

static const char about[] =
"The multi-fault loop: each thread writes every page of its own 2 MiB\n"
"slice, then MADV_DONTNEED, repeated; faults/s and ns per fault for\n"
"each fault strategy, with and without a thread doing mmap+munmap of\n"
"an unrelated VMA.  Every row is measured once a round, --repeat\n"
"rounds; a target's ratio is taken within each round.\n";

static const struct bench_opt opts[] = {
	{ BENCH_OPT_STRATEGY, "locked,spf,pervma or all (default all)", NULL },
	{ BENCH_OPT_LOCK, "mmap_lock kinds: rwsem,pthread,percpu,brlock,\n"
			  "prwlock or all (default rwsem)", NULL },
	{ BENCH_OPT_THREADS, "faulting threads, e.g. 1,2 or 1-4, each\n"
			     "1..256 (default 1,2)", NULL },
	{ BENCH_OPT_WRITER, "none, mmap or all (default all)", NULL },
	{ BENCH_OPT_KERNEL, BENCH_KERNEL_HELP, NULL },
	{ BENCH_OPT_DURATION, NULL, NULL },
	{ BENCH_OPT_REPEAT, NULL, NULL },
	{ BENCH_OPT_MAPPING, "per-thread: a VMA per slice (default);\n"
			     "shared: one VMA holding every slice", NULL },
	{ BENCH_OPT_QUICK, "--duration 0.3", NULL },
	{ BENCH_OPT_JSON, "one JSON object per row and per target", NULL },
	{ 0, NULL, NULL },
};

/* A kind of vmsim/lock.h, in its order for "all". */
static void lock_item(const char *item)
{
	bench_arg_names(item, vs_lock_kind_name, "a lock kind", opt.lock,
			&opt.nr_locks, BENCH_MAX_LOCKS);
}

static void strategy_item(const char *item)
{
	bench_arg_flags(item, vs_fault_strategy_name, "a strategy",
			opt.strategy, VS_FAULT_NR_STRATEGIES);
}

static const char *writer_of(int i)
{
	return i < NR_WRITERS ? writer_name[i] : NULL;
}

static void writer_item(const char *item)
{
	bench_arg_flags(item, writer_of, "a writer", opt.writer, NR_WRITERS);
}

static const char *mapping_of(int i)
{
	static const char *const name[] = { "per-thread", "shared" };

	return i < 2 ? name[i] : NULL;
}

static void set_option(int key, char *arg)
{
	switch (key) {
	case BENCH_OPT_STRATEGY:
		bench_arg_list(arg, strategy_item);
		break;
	case BENCH_OPT_LOCK:
		bench_arg_list(arg, lock_item);
		break;
	case BENCH_OPT_KERNEL:
		opt.kernel = bench_arg_kernel(arg);
		break;
	case BENCH_OPT_WRITER:
		bench_arg_list(arg, writer_item);
		break;
	case BENCH_OPT_MAPPING:
		opt.shared = bench_arg_name(arg, mapping_of, "a mapping",
					    false) == 1;
		break;
	}
}

static const struct bench_tool tool = {
	.name = "faultbench", .about = about, .opts = opts, .set = set_option,
	.duration_ms = 1000, .repeat = 3, .quick_ms = 300,
};

static bool any(const bool *v, int nr)
{
	int n;

	for (n = 0; n < nr; n++)
		if (v[n])
			return true;
	return false;
}

/* The defaults of what was not given. */
static void set_defaults(void)
{
	if (!any(opt.strategy, VS_FAULT_NR_STRATEGIES))
		strategy_item("all");
	if (!opt.nr_locks)
		lock_item("rwsem");
	if (!bench_std.nr_threads) {
		bench_add_threads(1);
		bench_add_threads(2);
	}
	if (!any(opt.writer, NR_WRITERS))
		writer_item("all");
}

/* ---- main ------------------------------------------------------------- */

/* ---- the writer's hold beside the host's own pair --------------------- */

#define HOLD_PAIRS 20000
#define HOST_PAIRS 2000

/* ns per mmap+munmap pair of the host kernel, over HOST_PAIRS pairs. */
static double host_pair_ns(void)
{
	uint64_t t = uv_hrtime();
	void *p;
	int i;

	for (i = 0; i < HOST_PAIRS; i++) {
		p = mmap(NULL, VS_PAGE_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || munmap(p, VS_PAGE_SIZE))
			return -1;
	}
	return (double)(uv_hrtime() - t) / HOST_PAIRS;
}

/*
 * hold_mm - the writer's mm for print_writer_hold(): mmap_lock of the
 * first --lock kind, the locked strategy, one slice mapped and warm, as
 * a measurement's (no loop runs on it: the writer alone, on this
 * thread).
 * Return: 0 and *@mmp, or a negative errno (reported).
 */
static int hold_mm(struct vs_mm **mmp)
{
	struct vs_mm_options o = {
		.lock_kind = opt.lock[0],
		.pool_pages = bench_pool_pages(1),
		.kernel = opt.kernel,
	};
	const char *what = "vs_mm_create";
	int err = vs_mm_create(mmp, &o);

	if (err)
		goto fail;
	what = "vs_mm_set_fault_strategy";
	err = vs_mm_set_fault_strategy(*mmp, VS_FAULT_LOCKED);
	if (!err)
		err = map_slices(*mmp, 1, &what);
	if (!err)
		return 0;
	vs_mm_destroy(*mmp);
fail:
	fprintf(stderr, "faultbench: %s locked: %s: %s\n", opt.lock[0], what,
		vs_strerror(err));
	return err;
}

/* @n writer pairs on @mm.  Return: 0 or a negative errno. */
static int writer_pairs(struct vs_mm *mm, unsigned int n)
{
	int err = 0;

	while (n-- && !err) {
		err = writer_pair(mm);
		bench_quiescent();
	}
	return err;
}

/*
 * print_writer_hold - how long the writer holds mmap_lock for write per
 * model mmap or munmap (lockstat, the writer alone on a warm mm of the
 * first --lock kind), beside the host kernel's whole mmap+munmap pair,
 * both measured now.  The hold is what the faulting threads wait for.
 * Return: 0 or a negative errno (reported).
 */
static int print_writer_hold(void)
{
	const struct vs_lock_class *class = vs_lock_class_get("mmap_lock");
	struct vs_mm *mm = NULL;
	struct vs_lockstat ls;
	double hold, host;
	int err;

	err = hold_mm(&mm);
	if (err)
		return err;
	err = writer_pairs(mm, HOLD_PAIRS);	/* warm the caches */
	vs_lockstat_reset();
	vs_lockstat_enable(1);
	if (!err)
		err = writer_pairs(mm, HOLD_PAIRS);
	vs_lockstat_enable(0);
	if (!err)
		err = vs_lockstat_read(class, VS_LOCK_WRITE, &ls);
	(void)vs_mm_destroy(mm);
	if (err || !ls.holdtime_nr) {
		fprintf(stderr, "faultbench: writer hold: %s\n",
			vs_strerror(err ? err : -ENODATA));
		return err ? err : -ENODATA;
	}
	hold = (double)ls.holdtime_total / (double)ls.holdtime_nr;
	host = host_pair_ns();
	if (bench_std.json) {
		bench_json_begin();
		bench_json_str("writer_hold", opt.lock[0]);
		bench_json_uint("holds", ls.holdtime_nr);
		bench_json_num("hold_ns_mean", hold, 1);
		bench_json_num("host_pair_ns", host, 1);
		bench_json_end();
		return 0;
	}
	printf("\nwriter, alone (%s, %llu write holds of mmap_lock by "
	       "mmap and munmap):\n", opt.lock[0],
	       (unsigned long long)ls.holdtime_nr);
	bench_figure_line("mmap_lock write hold", BENCH_MEAN, "the holds",
			  hold, 1, "ns");
	bench_figure_line("host kernel mmap+munmap pair", BENCH_MEAN,
			  "2000 pairs", host, 1, "ns");
	return 0;
}

int main(int argc, char **argv)
{
	int ret;

	bench_parse_options(&tool, argc, argv);
	set_defaults();
	build_rows();
	/* The main thread sets each mm up and goes offline while it waits
	 * (measure()); attach it once, before any of that. */
	vs_thread_attach();
	if (bench_control_init())
		return 1;
	ret = bench_loop_run(&table, sizeof(struct sample), measure_row);
	if (bench_std.json)
		print_all_json();
	else
		print_table();
	print_targets();
	print_summary();
	if (!ret && opt.writer[W_MMAP])
		ret = print_writer_hold() ? 1 : 0;
	bench_loop_free(&table);
	return bench_control_close(ret);
}
