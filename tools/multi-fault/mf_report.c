/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf_report.c - what multi-fault prints: the perf-stat
 * block of one configuration, the summary table after Zijlstra's 2014
 * PRE/POST table ("[RFC][PATCH 0/6] Another go at speculative page
 * faults", linux-kernel, 2014-10-20), one JSON line (mf_plot.c draws the
 * plot).
 *
 * Two spreads appear, and they answer different questions:
 *
 *   ( +- x% )  in the stat block and the table is perf stat's: the
 *              standard deviation of the mean (the sample standard
 *              deviation over the repeats divided by sqrt(repeats)),
 *              relative to the mean.  It says how well the mean is
 *              known, so that numbers compare with Zijlstra's table.
 *   *_stddev   in JSON is the plain sample standard deviation over the
 *              repeats (mf_result's fields): how much one run varies.
 *
 * Counts are means over the repeats, as perf stat --repeat prints them,
 * except the counters that say "sum of N" (aborts, writer operations,
 * lock statistics).  A ratio is taken within each round (repeat k of
 * the one over repeat k of the other) and given as the median and the
 * range over the rounds: drift between rounds then cancels.
 * Everything here only reads the results; nothing is kept between calls.
 */
#include <stdbool.h>
#include <string.h>

#include "mf.h"

/* The repeats whose times @r holds: a bad count must not read past them. */
static unsigned int nr_times(const struct mf_result *r)
{
	return r->repeats_done < MF_MAX_REPEAT ? r->repeats_done :
						 MF_MAX_REPEAT;
}

/* The sample standard deviation of the repeats' elapsed times. */
static double seconds_sd(const struct mf_result *r)
{
	double sd;

	(void)mf_mean_sd(r->seconds, nr_times(r), &sd);
	return sd;
}

static double seconds_sum(const struct mf_result *r)
{
	unsigned int i;
	double t = 0;

	for (i = 0; i < nr_times(r); i++)
		t += r->seconds[i];
	return t;
}

/*
 * The command line that runs @c alone, less --duration and --repeat,
 * which the block shows itself; @strategy: include --strategy and
 * --lock (the PRE/POST header leaves the strategy out).
 */
/* " --workload pft --mode processes --size 64": what is not the default. */
static void print_workload(FILE *out, const struct mf_config *c)
{
	if (mf_default_workload(c))
		return;
	fprintf(out, " --workload %s", c->workload ? c->workload :
							 "multi-fault");
	if (c->mode != VS_WORKLOAD_THREADS)
		fprintf(out, " --mode %s",
			mf_or_q(vs_workload_mode_name(c->mode)));
	if (c->bytes)
		fprintf(out, " --size %zu", c->bytes >> 10);
}

static void print_cmdline(FILE *out, const struct mf_config *c,
			  bool strategy)
{
	if (c->machine) {
		fprintf(out, "multi-fault --vcpus %u --machine %s",
			c->threads, c->machine);
		if (strategy)
			fprintf(out, " --strategy %s", mf_strategy_label(c));
		fprintf(out, " --lock %s --writer %s", mf_or_q(c->lock),
			mf_or_q(mf_writer_name(c->writer)));
		if (c->writer != MF_WRITER_NONE && c->writer_rate)
			fprintf(out, " --writer-rate %u", c->writer_rate);
		print_workload(out, c);
		return;
	}
	fprintf(out, "multi-fault --backing %s",
		mf_or_q(mf_backing_name(c->backing)));
	if (c->backing == MF_UFFD)
		fprintf(out, " --uffd-mode %s",
			mf_or_q(vs_uffd_mode_name(c->uffd_mode)));
	if (!mf_is_native(c) && strategy)
		fprintf(out, " --strategy %s", mf_strategy_label(c));
	if (!mf_is_native(c))
		fprintf(out, " --lock %s", mf_or_q(c->lock));
	fprintf(out, " --threads %u --writer %s", c->threads,
		mf_or_q(mf_writer_name(c->writer)));
	if (c->writer != MF_WRITER_NONE && c->writer_rate)
		fprintf(out, " --writer-rate %u", c->writer_rate);
	print_workload(out, c);
}

/* ---- the perf-stat block ------------------------------------------------ */

static void stat_header(FILE *out, const struct mf_result *r)
{
	unsigned int n = r->repeats_done;

	fputs("\n Performance counter stats for '", out);
	print_cmdline(out, &r->cfg, true);
	fputc('\'', out);
	if (n < r->cfg.repeats)
		fprintf(out, " (interrupted: %u of %u runs)", n,
			r->cfg.repeats);
	else if (n > 1)
		fprintf(out, " (%u runs)", n);
	fputs(":\n\n", out);
}

#define STAT_INDENT "      "
#define STAT_COLS 80

/*
 * The reasons that occurred, by name; "none" says spf never gave up.
 * Nine reasons do not fit one line: it wraps under the first reason.
 */
static void stat_spf_aborts(FILE *out, const struct mf_result *r)
{
	const struct vs_fault_stats *st = &r->st;
	int i, head, col, len, nr = 0;
	char num[32], item[64], h[32];

	head = fprintf(out, STAT_INDENT "spf aborts, %s: ",
		       mf_stat_how(h, sizeof(h), BENCH_SUM, r->repeats_done));
	col = head;
	for (i = 0; i < VS_SPF_ABORT_NR; i++) {
		if (!st->spf_abort[i])
			continue;
		len = snprintf(item, sizeof(item), "%s %s",
			       mf_or_q(vs_spf_abort_name(i)),
			       mf_fmt_count(num, sizeof(num),
					 (double)st->spf_abort[i]));
		if (nr && col + 2 + len >= STAT_COLS) {
			fprintf(out, ",\n%*s", head, "");
			col = head;
		} else if (nr) {
			fputs(", ", out);
			col += 2;
		}
		fputs(item, out);
		col += len;
		nr++;
	}
	fputs(nr ? "\n" : "none\n", out);
}

static void stat_pervma(FILE *out, const struct mf_result *r)
{
	const struct vs_fault_stats *st = &r->st;
	char a[32], b[32], c[32], d[32], h[32];

	fprintf(out, STAT_INDENT "per-VMA lock, %s: success %s, abort %s, "
		     "retry %s, miss %s\n",
		mf_stat_how(h, sizeof(h), BENCH_SUM, r->repeats_done),
		mf_fmt_count(a, sizeof(a), (double)st->vma_lock_success),
		mf_fmt_count(b, sizeof(b), (double)st->vma_lock_abort),
		mf_fmt_count(c, sizeof(c), (double)st->vma_lock_retry),
		mf_fmt_count(d, sizeof(d), (double)st->vma_lock_miss));
}

/* The writer's operations, all repeats together, and their rate. */
static void stat_writer(FILE *out, const struct mf_result *r)
{
	double t = seconds_sum(r);
	char ops[32], rate[32], want[32], h[32];

	fprintf(out, STAT_INDENT "writer %s, %s: %s ops, %s/s",
		mf_or_q(mf_writer_name(r->cfg.writer)),
		mf_stat_how(h, sizeof(h), BENCH_SUM, r->repeats_done),
		mf_fmt_count(ops, sizeof(ops), (double)r->writer_ops),
		mf_fmt_count(rate, sizeof(rate),
			  t > 0 ? (double)r->writer_ops / t : 0));
	if (r->cfg.writer_rate)
		fprintf(out, " (asked %s/s)",
			mf_fmt_count(want, sizeof(want), r->cfg.writer_rate));
	fputc('\n', out);
}

/* ns as /proc/lock_stat's microseconds */
static double us(uint64_t ns)
{
	return (double)ns / 1000;
}

static void lockstat_side(FILE *out, const struct vs_lockstat *x,
			  const char *side)
{
	fprintf(out, "%*s: %14llu %14llu %14.2f %14.2f %14.2f %14.2f "
		     "%14llu %14llu %14.2f %14.2f %14.2f %14.2f\n",
		24, side, (unsigned long long)x->con_bounces,
		(unsigned long long)x->contentions, us(x->waittime_min),
		us(x->waittime_max), us(x->waittime_total),
		x->contentions ? us(x->waittime_total) /
					 (double)x->contentions : 0,
		(unsigned long long)x->acq_bounces,
		(unsigned long long)x->acquisitions, us(x->holdtime_min),
		us(x->holdtime_max), us(x->holdtime_total),
		x->holdtime_nr ? us(x->holdtime_total) /
					 (double)x->holdtime_nr : 0);
}

/*
 * --lockstat: the mmap_lock's lines of /proc/lock_stat, summed over the
 * runs (the extremes over all of them), times in microseconds.
 */
static void stat_lockstat(FILE *out, const struct mf_result *r)
{
	static const char *const col[] = {
		"con-bounces", "contentions", "waittime-min", "waittime-max",
		"waittime-total", "waittime-avg", "acq-bounces",
		"acquisitions", "holdtime-min", "holdtime-max",
		"holdtime-total", "holdtime-avg",
	};
	char h[32];
	size_t i;

	fprintf(out, STAT_INDENT "lock_stat, %s (times in us):\n",
		mf_stat_how(h, sizeof(h), BENCH_SUM, r->repeats_done));
	fprintf(out, "%24s  ", "class name");
	for (i = 0; i < VS_ARRAY_SIZE(col); i++)
		fprintf(out, " %14s", col[i]);
	fputc('\n', out);
	lockstat_side(out, &r->lockstat[VS_LOCK_WRITE], "mmap_lock-W");
	lockstat_side(out, &r->lockstat[VS_LOCK_READ], "mmap_lock-R");
}

static void stat_elapsed(FILE *out, const struct mf_result *r)
{
	unsigned int n = r->repeats_done;
	char h[32];
	int len, pad;

	len = fprintf(out, "\n %17.9f seconds %s",
		      mf_or_zero(r->elapsed_s),
		      r->cfg.machine ? "virtual time" : "time elapsed");
	/* len counts the leading newline, which takes no column */
	pad = 18 + 6 + MF_STAT_NAME_W + 1 - (len - 1);
	fprintf(out, "%*s%s", pad > 1 ? pad : 1, "",
		mf_stat_how(h, sizeof(h), BENCH_MEAN, n));
	if (n > 1)
		fprintf(out, "%*s( +-%6.2f%% )",
			MF_STAT_HOW_W - (int)strlen(h), "",
			mf_rel_sd_mean(seconds_sd(r), r->elapsed_s, n));
	fputs("\n\n", out);
}

void mf_print_stat(FILE *out, const struct mf_result *r)
{
	unsigned int n = r->repeats_done;
	double fps = mf_or_zero(r->faults_per_s);

	stat_header(out, r);
	if (!n) {
		/* Ctrl-C before the first repeat began: perf's wording */
		fprintf(out, "%18s      page-faults\n\n", "<not counted>");
		return;
	}
	if (r->cfg.seconds_as > 0)	/* --seconds-as: the rate's spread */
		mf_stat_line(out, fps * r->cfg.seconds_as, "page-faults",
			  mf_rel_sd_mean(r->faults_per_s_stddev, fps, n), n, true);
	else
		mf_stat_line(out, r->faults_mean, "page-faults",
			  mf_rel_sd_mean(r->faults_stddev, r->faults_mean, n), n,
			  true);
	mf_stat_line(out, fps, "page-faults/s",
		  mf_rel_sd_mean(r->faults_per_s_stddev, fps, n), n, true);
	mf_stat_line(out, r->cfg.threads ? fps / r->cfg.threads : 0,
		  "page-faults/s/thread", 0, n, false);
	if (r->cfg.machine)
		mf_print_vcpu_counts(out, r);
	/* only the strategy that can abort: "none" elsewhere would mislead */
	if (!mf_is_native(&r->cfg) && r->cfg.strategy == VS_FAULT_SPF)
		stat_spf_aborts(out, r);
	if (!mf_is_native(&r->cfg) && r->cfg.strategy == VS_FAULT_PERVMA)
		stat_pervma(out, r);
	if (r->cfg.writer != MF_WRITER_NONE)
		stat_writer(out, r);
	if (r->has_lockstat)
		stat_lockstat(out, r);
	if (r->cfg.machine)
		mf_print_breakdown(out, r);
	stat_elapsed(out, r);
}

/* ---- ratios and the summary --------------------------------------------- */

/* Results that differ only in strategy compare with each other. */
static bool same_group(const struct mf_config *a, const struct mf_config *b)
{
	return mf_same_backing(a, b) && mf_same_lock(a, b) &&
	       a->threads == b->threads && mf_same_writer(a, b);
}

static bool is_pre(const struct mf_config *c)
{
	return !mf_is_native(c) && c->strategy == VS_FAULT_LOCKED;
}

int mf_pre_of(const struct mf_result *r, int n, int i)
{
	int j;

	if (mf_is_native(&r[i].cfg) || is_pre(&r[i].cfg))
		return -1;
	for (j = 0; j < n; j++)
		if (is_pre(&r[j].cfg) && same_group(&r[j].cfg, &r[i].cfg))
			return j;
	return -1;
}

/* faults/s of repeat @k */
static double rate_of(const struct mf_result *x, unsigned int k)
{
	return x->seconds[k] > 0 ? x->faults[k] / x->seconds[k] : 0;
}

unsigned int mf_ratio(const struct mf_result *post,
		      const struct mf_result *pre, struct bench_range *out)
{
	double num[MF_MAX_REPEAT], den[MF_MAX_REPEAT];
	unsigned int k, n = 0;

	for (k = 0; k < nr_times(post) && k < nr_times(pre); k++) {
		if (!(rate_of(pre, k) > 0))
			continue;
		num[n] = rate_of(post, k);
		den[n++] = rate_of(pre, k);
	}
	if (n)
		bench_ratio_range(num, den, n, out);
	return n;
}

/* What every configuration of the run shares, as options. */
static void print_common(FILE *out, const struct mf_config *c)
{
	if (c->machine)
		fprintf(out, "multi-fault --machine %s", c->machine);
	else
		fprintf(out, "multi-fault --backing %s",
			mf_or_q(mf_backing_name(c->backing)));
	if (c->backing == MF_UFFD)
		fprintf(out, " --uffd-mode %s",
			mf_or_q(vs_uffd_mode_name(c->uffd_mode)));
	fprintf(out, " --writer %s", mf_or_q(mf_writer_name(c->writer)));
	if (c->writer != MF_WRITER_NONE && c->writer_rate)
		fprintf(out, " --writer-rate %u", c->writer_rate);
	fprintf(out, " --duration %g", c->duration_ms / 1000.0);
	if (c->seconds_as > 0)
		fprintf(out, " --seconds-as %g", c->seconds_as);
}

/* "   threads  lock      strategy  page-faults  page-faults/s ..." */
#define SUM_ROW "   %7s  %-8s  %-8s  %13s  %13s"
#define SUM_SPREAD_GAP "             "	/* as wide as "( +-  1.25% )" */

static void summary_row(const struct mf_result *x,
			const struct mf_result *pre)
{
	FILE *out = stdout;
	double fps = mf_or_zero(x->faults_per_s);
	struct bench_range q;
	char t[16], f[32], s[32];
	unsigned int n;

	snprintf(t, sizeof(t), "%u", x->cfg.threads);
	if (!x->repeats_done) {
		fprintf(out, SUM_ROW "\n", t, x->cfg.lock ? x->cfg.lock : "-",
			mf_strategy_label(&x->cfg), "<not counted>", "");
		return;
	}
	fprintf(out, SUM_ROW, t, x->cfg.lock ? x->cfg.lock : "-",
		mf_strategy_label(&x->cfg),
		mf_fmt_count(f, sizeof(f), x->cfg.seconds_as > 0 ?
				       fps * x->cfg.seconds_as :
				       x->faults_mean),
		mf_fmt_count(s, sizeof(s), fps));
	if (x->repeats_done > 1)
		fprintf(out, "  ( +-%6.2f%% )",
			mf_rel_sd_mean(x->faults_per_s_stddev, fps,
				    x->repeats_done));
	else
		fputs("  " SUM_SPREAD_GAP, out);
	if (is_pre(&x->cfg)) {
		fputs("  PRE", out);
	} else if (pre && (n = mf_ratio(x, pre, &q))) {
		/* one round has no range to show */
		if (n > 1) {
			fputs("  ", out);
			bench_print_range(&q, 0, "x");
		} else {
			fprintf(out, "  %.2fx", q.med);
		}
	}
	fputc('\n', out);
}

void mf_print_summary(const struct mf_result *r, int n)
{
	FILE *out = stdout;
	unsigned int rounds = 0;
	bool any_pre = false;
	int i, p;

	for (i = 0; i < n; i++) {
		if (r[i].repeats_done > rounds)
			rounds = r[i].repeats_done;
		any_pre |= mf_pre_of(r, n, i) >= 0;
	}
	fprintf(out, "\n Summary of %d configurations, %u round%s: ", n,
		rounds, rounds == 1 ? "" : "s");
	if (n)
		print_common(out, &r[0].cfg);
	fputs("\n page-faults, page-faults/s: mean over the runs.", out);
	if (any_pre)
		fputs("  POST/PRE: faults/s over\n locked's (PRE) at the same "
		      "threads and lock, as in Zijlstra's 2014 PRE/POST\n "
		      "table; taken within each round", out);
	if (any_pre && rounds > 1)
		fputs(", then the median (lowest..highest)", out);
	if (any_pre)
		fputc('.', out);
	fputs("\n\n", out);
	fprintf(out, SUM_ROW, "threads", "lock", "strategy", "page-faults",
		"page-faults/s");
	fputs(any_pre ? "  " SUM_SPREAD_GAP "  POST/PRE\n" : "\n", out);
	for (i = 0; i < n; i++) {
		p = mf_pre_of(r, n, i);
		summary_row(&r[i], p >= 0 ? &r[p] : NULL);
	}
	fputc('\n', out);
}

/* ---- JSON --------------------------------------------------------------- */

/* Every reason by name, so that a consumer needs no schema per run. */
static void json_aborts(const struct vs_fault_stats *st)
{
	int i;

	bench_json_object("aborts");
	for (i = 0; i < VS_SPF_ABORT_NR; i++)
		bench_json_uint(mf_or_q(vs_spf_abort_name(i)),
				st->spf_abort[i]);
	bench_json_uint("vma_lock_abort", st->vma_lock_abort);
	bench_json_uint("vma_lock_retry", st->vma_lock_retry);
	bench_json_uint("vma_lock_miss", st->vma_lock_miss);
	bench_json_object_end();
	bench_json_object("success");
	bench_json_uint("locked", st->locked);
	bench_json_uint("spf", st->spf_success);
	bench_json_uint("vma_lock", st->vma_lock_success);
	bench_json_object_end();
}

/* The ratio to the PRE, as the summary table gives it. */
static void json_vs_pre(const struct mf_result *r, const struct mf_result *pre)
{
	struct bench_range q;
	unsigned int n = pre ? mf_ratio(r, pre, &q) : 0;

	if (!n) {
		bench_json_null("vs_pre");
		return;
	}
	bench_json_object("vs_pre");
	bench_json_num("median", mf_or_zero(q.med), 4);
	bench_json_num("min", mf_or_zero(q.min), 4);
	bench_json_num("max", mf_or_zero(q.max), 4);
	bench_json_uint("rounds", n);
	bench_json_object_end();
}

static void json_lockstat_side(const char *side, const struct vs_lockstat *x)
{
	bench_json_object(side);
	bench_json_uint("con_bounces", x->con_bounces);
	bench_json_uint("contentions", x->contentions);
	bench_json_uint("waittime_min_ns", x->waittime_min);
	bench_json_uint("waittime_max_ns", x->waittime_max);
	bench_json_uint("waittime_total_ns", x->waittime_total);
	bench_json_uint("acq_bounces", x->acq_bounces);
	bench_json_uint("acquisitions", x->acquisitions);
	bench_json_uint("holdtime_min_ns", x->holdtime_min);
	bench_json_uint("holdtime_max_ns", x->holdtime_max);
	bench_json_uint("holdtime_total_ns", x->holdtime_total);
	bench_json_uint("holdtime_nr", x->holdtime_nr);
	bench_json_object_end();
}

/* --lockstat --json: the mmap_lock's statistics, summed over the runs. */
static void json_lockstat(const struct mf_result *r)
{
	if (!r->has_lockstat)
		return;
	bench_json_object("lockstat");
	bench_json_object("mmap_lock");
	json_lockstat_side("R", &r->lockstat[VS_LOCK_READ]);
	json_lockstat_side("W", &r->lockstat[VS_LOCK_WRITE]);
	bench_json_object_end();
	bench_json_object_end();
}

/* @prec digits after the point: 1 for counts and rates, 9 for seconds;
 * NaN and inf are 0, as in the text. */
static void json_num(const char *key, int prec, double v)
{
	bench_json_num(key, mf_or_zero(v), prec);
}

void mf_print_json(const struct mf_result *r, const struct mf_result *pre)
{
	static const struct vs_fault_stats zero;
	const struct mf_config *c = &r->cfg;
	bool native = mf_is_native(c);

	bench_json_begin();
	bench_json_str("backing", mf_backing_name(c->backing));
	bench_json_str("uffd_mode", c->backing == MF_UFFD ?
				    vs_uffd_mode_name(c->uffd_mode) : NULL);
	bench_json_str("strategy", native ? NULL :
				   vs_fault_strategy_name(c->strategy));
	bench_json_str("lock", native ? NULL : c->lock);
	bench_json_uint("threads", c->threads);
	bench_json_str("workload", c->workload ? c->workload : "multi-fault");
	bench_json_str("mode", vs_workload_mode_name(c->mode));
	bench_json_uint("size_kib", c->bytes ? c->bytes >> 10 :
			vs_workload_find(c->workload ? c->workload :
					 "multi-fault")->bytes >> 10);
	bench_json_str("writer", mf_writer_name(c->writer));
	bench_json_uint("writer_rate", c->writer_rate);
	bench_json_uint("seed", c->seed);
	json_num("duration_s", 3, c->duration_ms / 1000.0);
	bench_json_uint("repeats", r->repeats_done);
	bench_json_uint("repeats_requested", c->repeats);
	bench_json_bool("interrupted", r->repeats_done < c->repeats);
	json_num("faults", 1, r->faults_mean);
	json_num("faults_stddev", 1, r->faults_stddev);
	json_num("faults_per_s", 1, r->faults_per_s);
	json_num("faults_per_s_stddev", 1, r->faults_per_s_stddev);
	json_num("elapsed_s", 9, r->elapsed_s);
	bench_json_uint("writer_ops", r->writer_ops);
	/* native has no model, hence no counters, whatever @st holds */
	json_aborts(native ? &zero : &r->st);
	json_vs_pre(r, pre);
	json_lockstat(r);
	if (c->machine)
		mf_json_vcpu(r);
	bench_json_end();
}
