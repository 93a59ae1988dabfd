/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf_report.c - what multi-fault prints: the perf-stat block
 * of one configuration, the summary table after Zijlstra's 2014 PRE/POST table
 * ("[RFC][PATCH 0/6] Another go at speculative page faults", linux-kernel,
 * 2014-10-20), one JSON line, the SVG plot.
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
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "mf.h"

static const char *const backing_names[MF_NR_BACKINGS] = {
	"sim", "uffd", "native"
};
static const char *const writer_names[MF_NR_WRITERS] = {
	"none", "mmap", "mprotect", "fork"
};

const char *mf_backing_name(int backing)
{
	if (backing < 0 || backing >= MF_NR_BACKINGS)
		return NULL;
	return backing_names[backing];
}

const char *mf_writer_name(int writer)
{
	if (writer < 0 || writer >= MF_NR_WRITERS)
		return NULL;
	return writer_names[writer];
}

/* ---- helpers ------------------------------------------------------------ */

/* A name for text output: a bad value must not crash the report. */
static const char *or_q(const char *s)
{
	return s ? s : "?";
}

/* NaN and inf would make invalid JSON and garbage columns: they are 0. */
static double or_zero(double v)
{
	return isfinite(v) ? v : 0;
}

static bool is_native(const struct mf_config *c)
{
	return c->backing == MF_NATIVE;
}

/* Native has no strategy: it is the host kernel's. */
static const char *strategy_name(const struct mf_config *c)
{
	if (is_native(c))
		return "native";
	return or_q(vs_fault_strategy_name(c->strategy));
}

static bool same_str(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

/* The uffd mode only means something on the uffd backing. */
static bool same_backing(const struct mf_config *a, const struct mf_config *b)
{
	if (a->backing != b->backing)
		return false;
	return a->backing != MF_UFFD || a->uffd_mode == b->uffd_mode;
}

/* The rate means nothing without a writer. */
static bool same_writer(const struct mf_config *a, const struct mf_config *b)
{
	if (a->writer != b->writer)
		return false;
	return a->writer == MF_WRITER_NONE || a->writer_rate == b->writer_rate;
}

const char *mf_fmt_count(char *buf, size_t size, double v)
{
	/* clamped: llround() of what does not fit a long long is undefined */
	unsigned long long u =
		(unsigned long long)llround(fmin(fmax(or_zero(v), 0), 1e18));
	char digits[32];
	size_t i, len, o = 0;

	len = (size_t)snprintf(digits, sizeof(digits), "%llu", u);
	for (i = 0; i < len && o + 2 < size; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

/*
 * perf stat's "( +- x% )": the standard deviation of the mean relative
 * to the mean, in percent.  @sd is the sample standard deviation.
 */
double mf_rel_sd_mean(double sd, double mean, unsigned int n)
{
	if (n < 2 || !(mean > 0))
		return 0;
	return or_zero(sd / sqrt((double)n) / mean * 100);
}

/* The repeats whose times @r holds: a bad count must not read past them. */
static unsigned int nr_times(const struct mf_result *r)
{
	return r->repeats_done < MF_MAX_REPEAT ? r->repeats_done :
						 MF_MAX_REPEAT;
}

double mf_mean_sd(const double *v, unsigned int n, double *sd)
{
	double m = 0, q = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		m += v[i];
	m = n ? m / n : 0;
	for (i = 0; i < n; i++)
		q += (v[i] - m) * (v[i] - m);
	*sd = n > 1 ? sqrt(q / (n - 1)) : 0;
	return m;
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
static void print_cmdline(FILE *out, const struct mf_config *c,
			  bool strategy)
{
	if (c->machine) {
		fprintf(out, "multi-fault --vcpus %u --machine %s",
			c->threads, c->machine);
		if (strategy)
			fprintf(out, " --strategy %s", strategy_name(c));
		fprintf(out, " --lock %s --writer %s", or_q(c->lock),
			or_q(mf_writer_name(c->writer)));
		if (c->writer != MF_WRITER_NONE && c->writer_rate)
			fprintf(out, " --writer-rate %u", c->writer_rate);
		return;
	}
	fprintf(out, "multi-fault --backing %s",
		or_q(mf_backing_name(c->backing)));
	if (c->backing == MF_UFFD)
		fprintf(out, " --uffd-mode %s",
			or_q(vs_uffd_mode_name(c->uffd_mode)));
	if (!is_native(c) && strategy)
		fprintf(out, " --strategy %s", strategy_name(c));
	if (!is_native(c))
		fprintf(out, " --lock %s", or_q(c->lock));
	fprintf(out, " --threads %u --writer %s", c->threads,
		or_q(mf_writer_name(c->writer)));
	if (c->writer != MF_WRITER_NONE && c->writer_rate)
		fprintf(out, " --writer-rate %u", c->writer_rate);
}

/* ---- the perf-stat block ------------------------------------------------ */

/*
 * perf stat's columns: the value right-aligned in 18, six spaces, the
 * event name in STAT_NAME_W, whether it is a mean or a sum in
 * STAT_HOW_W, then the spread; STAT_SPREAD_COL is where "( +-" starts,
 * so that the time line can line its spread up with the rest.
 */
#define STAT_NAME_W 21
#define STAT_HOW_W 12
#define STAT_SPREAD_COL (18 + 6 + STAT_NAME_W + 1 + STAT_HOW_W)

/* "mean of 3", "sum of 3": what a figure is, over the runs. */
static const char *how(char *buf, size_t size, enum bench_agg agg,
		       unsigned int n)
{
	snprintf(buf, size, "%s of %u", bench_agg_name(agg), n);
	return buf;
}

void mf_stat_line(FILE *out, double v, const char *name, double rel,
		  unsigned int n, bool spread)
{
	char num[32], h[32];

	fprintf(out, "%18s      %-*s ", mf_fmt_count(num, sizeof(num), v),
		STAT_NAME_W, name);
	how(h, sizeof(h), BENCH_MEAN, n);
	if (n > 1 && spread)
		fprintf(out, "%-*s( +-%6.2f%% )\n", STAT_HOW_W, h, rel);
	else
		fprintf(out, "%s\n", h);
}

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
		       how(h, sizeof(h), BENCH_SUM, r->repeats_done));
	col = head;
	for (i = 0; i < VS_SPF_ABORT_NR; i++) {
		if (!st->spf_abort[i])
			continue;
		len = snprintf(item, sizeof(item), "%s %s",
			       or_q(vs_spf_abort_name(i)),
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
		how(h, sizeof(h), BENCH_SUM, r->repeats_done),
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
		or_q(mf_writer_name(r->cfg.writer)),
		how(h, sizeof(h), BENCH_SUM, r->repeats_done),
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
		how(h, sizeof(h), BENCH_SUM, r->repeats_done));
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
		      or_zero(r->elapsed_s),
		      r->cfg.machine ? "virtual time" : "time elapsed");
	/* len counts the leading newline, which takes no column */
	pad = 18 + 6 + STAT_NAME_W + 1 - (len - 1);
	fprintf(out, "%*s%s", pad > 1 ? pad : 1, "",
		how(h, sizeof(h), BENCH_MEAN, n));
	if (n > 1)
		fprintf(out, "%*s( +-%6.2f%% )",
			STAT_HOW_W - (int)strlen(h), "",
			mf_rel_sd_mean(seconds_sd(r), r->elapsed_s, n));
	fputs("\n\n", out);
}

void mf_print_stat(FILE *out, const struct mf_result *r)
{
	unsigned int n = r->repeats_done;
	double fps = or_zero(r->faults_per_s);

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
	if (!is_native(&r->cfg) && r->cfg.strategy == VS_FAULT_SPF)
		stat_spf_aborts(out, r);
	if (!is_native(&r->cfg) && r->cfg.strategy == VS_FAULT_PERVMA)
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
	return same_backing(a, b) && same_str(a->lock, b->lock) &&
	       a->threads == b->threads && same_writer(a, b);
}

static bool is_pre(const struct mf_config *c)
{
	return !is_native(c) && c->strategy == VS_FAULT_LOCKED;
}

int mf_pre_of(const struct mf_result *r, int n, int i)
{
	int j;

	if (is_native(&r[i].cfg) || is_pre(&r[i].cfg))
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
			or_q(mf_backing_name(c->backing)));
	if (c->backing == MF_UFFD)
		fprintf(out, " --uffd-mode %s",
			or_q(vs_uffd_mode_name(c->uffd_mode)));
	fprintf(out, " --writer %s", or_q(mf_writer_name(c->writer)));
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
	double fps = or_zero(x->faults_per_s);
	struct bench_range q;
	char t[16], f[32], s[32];
	unsigned int n;

	snprintf(t, sizeof(t), "%u", x->cfg.threads);
	if (!x->repeats_done) {
		fprintf(out, SUM_ROW "\n", t, x->cfg.lock ? x->cfg.lock : "-",
			strategy_name(&x->cfg), "<not counted>", "");
		return;
	}
	fprintf(out, SUM_ROW, t, x->cfg.lock ? x->cfg.lock : "-",
		strategy_name(&x->cfg),
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
		bench_json_uint(or_q(vs_spf_abort_name(i)), st->spf_abort[i]);
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
	bench_json_num("median", or_zero(q.med), 4);
	bench_json_num("min", or_zero(q.min), 4);
	bench_json_num("max", or_zero(q.max), 4);
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
	bench_json_num(key, or_zero(v), prec);
}

void mf_print_json(const struct mf_result *r, const struct mf_result *pre)
{
	static const struct vs_fault_stats zero;
	const struct mf_config *c = &r->cfg;
	bool native = is_native(c);

	bench_json_begin();
	bench_json_str("backing", mf_backing_name(c->backing));
	bench_json_str("uffd_mode", c->backing == MF_UFFD ?
				    vs_uffd_mode_name(c->uffd_mode) : NULL);
	bench_json_str("strategy", native ? NULL :
				   vs_fault_strategy_name(c->strategy));
	bench_json_str("lock", native ? NULL : c->lock);
	bench_json_uint("threads", c->threads);
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

/* ---- SVG ---------------------------------------------------------------- */

#define SVG_W_MIN 820
#define SVG_H_MIN 500
#define CHAR_W 7		/* about, for a 12 px sans-serif label */
#define PLOT_L 90		/* the plot area: left, top, width */
#define PLOT_T 70
#define PLOT_W 480
#define PLOT_B 70		/* room below for tick labels, x label */
#define LEGEND_X (PLOT_L + PLOT_W + 30)
#define LEGEND_DY 20
#define NR_COLOURS 10
#define NR_SHAPES 4
#define MF_PLOT_TICKS 64	/* distinct thread counts labelled */

/* Tableau 10: told apart by most readers, colour-blind ones included. */
static const char *const colours[NR_COLOURS] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};

/* Past ten series the colours repeat; shape and dash then tell apart. */
static const char *const dashes[NR_SHAPES] = {
	"none", "6,3", "2,3", "8,3,2,3"
};

struct plot {
	FILE *f;
	double xlo, xhi;	/* the x axis' ends, in xu() units */
	double ymax;		/* the y axis' end, at a tick */
	bool xlog;		/* log2 x axis: the counts double */
	unsigned int xtick[MF_PLOT_TICKS];	/* the counts that ran */
	int nr_xticks;
	int w, h;		/* the image's size: the legend may grow it */
	int base;		/* the first result plotted, or -1 */
	bool vary_lock, vary_backing, vary_writer;
};

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default: fputc(*s, f);
		}
	}
}

static bool same_series(const struct mf_config *a, const struct mf_config *b)
{
	if (!same_backing(a, b) || !same_writer(a, b) ||
	    !same_str(a->lock, b->lock))
		return false;
	return is_native(a) || a->strategy == b->strategy;
}

/* A configuration that Ctrl-C stopped before it measured has no point. */
static bool plotted(const struct mf_result *x)
{
	return x->repeats_done > 0;
}

/* Whether @i is the first plotted member of its series. */
static bool series_first(const struct mf_result *r, int i)
{
	int j;

	if (!plotted(&r[i]))
		return false;
	for (j = 0; j < i; j++)
		if (plotted(&r[j]) && same_series(&r[j].cfg, &r[i].cfg))
			return false;
	return true;
}

/* 1, 2 or 5 times a power of ten, giving about @nr ticks over @range. */
static double nice_step(double range, int nr)
{
	double raw = range / nr, mag = pow(10, floor(log10(raw)));
	double norm = raw / mag;

	if (norm <= 1)
		return mag;
	if (norm <= 2)
		return 2 * mag;
	if (norm <= 5)
		return 5 * mag;
	return 10 * mag;
}

/* A thread count in the x axis' units: itself, or its log2. */
static double xu(const struct plot *p, double x)
{
	return p->xlog ? log2(x) : x;
}

static double px(const struct plot *p, double x)
{
	return PLOT_L + (xu(p, x) - p->xlo) / (p->xhi - p->xlo) * PLOT_W;
}

static double py(const struct plot *p, double y)
{
	return PLOT_T + (1 - y / p->ymax) * (p->h - PLOT_T - PLOT_B);
}

/* Tick labels: 1.5M rather than 1500000, which would not fit. */
static void fmt_si(char *buf, size_t size, double v)
{
	if (v >= 1e9)
		snprintf(buf, size, "%.4gG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, size, "%.4gM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, size, "%.4gk", v / 1e3);
	else
		snprintf(buf, size, "%.4g", v);
}

/* "sim", "uffd:sigbus", "native": the backing with its mode. */
static const char *backing_label(const struct mf_config *c)
{
	static const char *const uffd[VS_UFFD_NR_MODES] = {
		[VS_UFFD_SIGBUS] = "uffd:sigbus",
		[VS_UFFD_THREADS] = "uffd:threads",
		[VS_UFFD_UV] = "uffd:uv",
	};

	if (c->backing != MF_UFFD)
		return or_q(mf_backing_name(c->backing));
	if (c->uffd_mode < 0 || c->uffd_mode >= VS_UFFD_NR_MODES)
		return "uffd:?";
	return uffd[c->uffd_mode];
}

/* The label of @c's series: the strategy, then what varies between them. */
static void series_label(const struct plot *p, const struct mf_config *c,
			 char *buf, size_t size)
{
	size_t o;

	o = (size_t)snprintf(buf, size, "%s", strategy_name(c));
	if (p->vary_lock && c->lock && o < size)
		o += (size_t)snprintf(buf + o, size - o, " %s", c->lock);
	if (p->vary_backing && !is_native(c) && o < size)
		o += (size_t)snprintf(buf + o, size - o, " %s",
				      backing_label(c));
	if (p->vary_writer && o < size)
		o += (size_t)snprintf(buf + o, size - o, " writer=%s",
				      or_q(mf_writer_name(c->writer)));
	if (p->vary_writer && c->writer != MF_WRITER_NONE && c->writer_rate &&
	    o < size)
		snprintf(buf + o, size - o, "@%u/s", c->writer_rate);
}

/* The subtitle: what every series shares. */
static void svg_subtitle(const struct plot *p, const struct mf_config *c)
{
	FILE *f = p->f;

	fprintf(f, "<text x=\"%d\" y=\"50\" text-anchor=\"middle\" "
		   "font-size=\"13\" fill=\"#555\">", p->w / 2);
	if (!p->vary_backing)
		fprintf(f, "backing %s, ", backing_label(c));
	if (!p->vary_lock && c->lock) {
		fputs("lock ", f);
		xml_text(f, c->lock);
		fputs(", ", f);
	}
	if (!p->vary_writer) {
		fprintf(f, "writer %s", or_q(mf_writer_name(c->writer)));
		if (c->writer != MF_WRITER_NONE && c->writer_rate)
			fprintf(f, " at %u/s", c->writer_rate);
		fputs(", ", f);
	}
	fprintf(f, "%.3g s a run, %u run%s</text>\n", c->duration_ms / 1000.0,
		c->repeats, c->repeats == 1 ? "" : "s");
}

static void svg_axes(const struct plot *p, double ystep)
{
	FILE *f = p->f;
	int bottom = p->h - PLOT_B, i;
	double v;
	char buf[32];

	fprintf(f, "<g stroke=\"#ccc\" stroke-width=\"1\">\n");
	for (v = 0; v <= p->ymax * (1 + 1e-9); v += ystep)
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
			   "y2=\"%.1f\"/>\n",
			PLOT_L, py(p, v), PLOT_L + PLOT_W, py(p, v));
	fputs("</g>\n<g stroke=\"#000\" stroke-width=\"1\">\n", f);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
		PLOT_L, bottom, PLOT_L + PLOT_W, bottom);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
		PLOT_L, PLOT_T, PLOT_L, bottom);
	for (i = 0; i < p->nr_xticks; i++)
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
			   "y2=\"%d\"/>\n",
			px(p, p->xtick[i]), bottom, px(p, p->xtick[i]),
			bottom + 5);
	/* the x ticks are the thread counts that ran, and only those */
	fputs("</g>\n<g id=\"xticks\" font-size=\"12\" "
	      "text-anchor=\"middle\">\n", f);
	for (i = 0; i < p->nr_xticks; i++)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\">%u</text>\n",
			px(p, p->xtick[i]), bottom + 20, p->xtick[i]);
	fputs("</g>\n<g font-size=\"12\" text-anchor=\"end\">\n", f);
	for (v = 0; v <= p->ymax * (1 + 1e-9); v += ystep) {
		fmt_si(buf, sizeof(buf), v);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\">%s</text>\n",
			PLOT_L - 8, py(p, v) + 4, buf);
	}
	fputs("</g>\n", f);
	fprintf(f, "<text id=\"xlabel\" x=\"%d\" y=\"%d\" font-size=\"14\" "
		   "text-anchor=\"middle\">threads%s</text>\n",
		PLOT_L + PLOT_W / 2, bottom + 45,
		p->xlog ? " (log2 scale)" : "");
	fprintf(f, "<text x=\"25\" y=\"%d\" font-size=\"14\" "
		   "text-anchor=\"middle\" transform=\"rotate(-90 25 %d)\">"
		   "page faults/s</text>\n",
		PLOT_T + (bottom - PLOT_T) / 2, PLOT_T + (bottom - PLOT_T) / 2);
}

/*
 * Opens the marker element of series @s at (@x, @y) and returns its
 * name; the caller closes it, with or without a <title> inside.
 */
static const char *svg_marker(FILE *f, int s, double x, double y)
{
	const char *c = colours[s % NR_COLOURS];

	switch (s / NR_COLOURS % NR_SHAPES) {
	case 0:
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
			   "fill=\"%s\"", x, y, c);
		return "circle";
	case 1:
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" "
			   "height=\"8\" fill=\"%s\"", x - 4, y - 4, c);
		return "rect";
	case 2:
		fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" "
			   "fill=\"%s\"", x, y - 5, x + 5, y + 4, x - 5, y + 4,
			c);
		return "polygon";
	default:
		fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f "
			   "%.1f,%.1f\" fill=\"%s\"", x, y - 5, x + 5, y,
			x, y + 5, x - 5, y, c);
		return "polygon";
	}
}

/* The indices of @first's series, sorted by threads (insertion sort). */
static int series_members(const struct mf_result *r, int n, int first,
			  int *idx)
{
	int i, j, k = 0;

	for (i = first; i < n; i++) {
		if (!plotted(&r[i]) || !same_series(&r[i].cfg, &r[first].cfg))
			continue;
		for (j = k++; j > 0 && r[idx[j - 1]].cfg.threads >
					 r[i].cfg.threads; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
	}
	return k;
}

static void svg_series(const struct plot *p, const struct mf_result *r,
		       const int *idx, int k, int s, const char *label)
{
	FILE *f = p->f;
	const char *tag;
	char num[32];
	int i;

	fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
		   "stroke-dasharray=\"%s\" points=\"",
		colours[s % NR_COLOURS], dashes[s / NR_COLOURS % NR_SHAPES]);
	for (i = 0; i < k; i++)
		fprintf(f, "%s%.1f,%.1f", i ? " " : "",
			px(p, r[idx[i]].cfg.threads),
			py(p, or_zero(r[idx[i]].faults_per_s)));
	fputs("\"/>\n", f);
	for (i = 0; i < k; i++) {
		const struct mf_result *x = &r[idx[i]];

		tag = svg_marker(f, s, px(p, x->cfg.threads),
				 py(p, or_zero(x->faults_per_s)));
		/* a tooltip, in viewers that show one */
		fputs("><title>", f);
		xml_text(f, label);
		fprintf(f, ", %u threads: %s faults/s</title></%s>\n",
			x->cfg.threads,
			mf_fmt_count(num, sizeof(num), x->faults_per_s), tag);
	}
}

static void svg_legend_entry(const struct plot *p, int s, const char *label)
{
	FILE *f = p->f;
	int y = PLOT_T + 10 + s * LEGEND_DY;

	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
		   "stroke=\"%s\" stroke-width=\"2\" "
		   "stroke-dasharray=\"%s\"/>\n",
		LEGEND_X, y, LEGEND_X + 30, y, colours[s % NR_COLOURS],
		dashes[s / NR_COLOURS % NR_SHAPES]);
	(void)svg_marker(f, s, LEGEND_X + 15, y);
	fputs("/>\n", f);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">",
		LEGEND_X + 38, y + 4);
	xml_text(f, label);
	fputs("</text>\n", f);
}

/* Every series: its line and markers. */
static int svg_all_series(const struct plot *p, const struct mf_result *r,
			  int n)
{
	int *idx = malloc(sizeof(*idx) * (size_t)(n ? n : 1));
	int i, k, s = 0;
	char label[160];

	if (!idx)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!series_first(r, i))
			continue;	/* drawn with its first member */
		k = series_members(r, n, i, idx);
		series_label(p, &r[i].cfg, label, sizeof(label));
		svg_series(p, r, idx, k, s++, label);
	}
	free(idx);
	return 0;
}

/* One group, so that a reader (or a test) finds the legend by its id. */
static void svg_legend(const struct plot *p, const struct mf_result *r,
		       int n)
{
	char label[160];
	int i, s = 0;

	fputs("<g id=\"legend\">\n", p->f);
	for (i = 0; i < n; i++) {
		if (!series_first(r, i))
			continue;
		series_label(p, &r[i].cfg, label, sizeof(label));
		svg_legend_entry(p, s++, label);
	}
	fputs("</g>\n", p->f);
}

/* The image grows to hold the legend: its rows, its longest label. */
static void plot_size(struct plot *p, const struct mf_result *r, int n)
{
	int i, rows = 0, w;
	char label[160];

	p->w = SVG_W_MIN;
	p->h = SVG_H_MIN;
	for (i = 0; i < n; i++) {
		if (!series_first(r, i))
			continue;
		rows++;
		series_label(p, &r[i].cfg, label, sizeof(label));
		w = LEGEND_X + 38 + CHAR_W * (int)strlen(label) + 10;
		if (w > p->w)
			p->w = w;
	}
	if (PLOT_T + 10 + rows * LEGEND_DY + 20 > p->h)
		p->h = PLOT_T + 10 + rows * LEGEND_DY + 20;
}

/* Add thread count @t to the sorted, distinct x ticks. */
static void add_xtick(struct plot *p, unsigned int t)
{
	int i, j;

	for (i = 0; i < p->nr_xticks && p->xtick[i] < t; i++)
		;
	if ((i < p->nr_xticks && p->xtick[i] == t) ||
	    p->nr_xticks == MF_PLOT_TICKS)
		return;
	for (j = p->nr_xticks++; j > i; j--)
		p->xtick[j] = p->xtick[j - 1];
	p->xtick[i] = t;
}

/*
 * The x axis: a tick at each count that ran; log2 when each count is
 * twice the one before (1,2,4,8 spaced evenly, as they were chosen),
 * with half a doubling of room at each end; else linear from 0.
 */
static void plot_xaxis(struct plot *p)
{
	int i, n = p->nr_xticks;

	p->xlog = n >= 2;
	for (i = 1; i < n; i++)
		p->xlog &= p->xtick[i] == 2 * p->xtick[i - 1];
	if (p->xlog) {
		p->xlo = log2(p->xtick[0]) - 0.5;
		p->xhi = log2(p->xtick[n - 1]) + 0.5;
	} else {
		p->xlo = 0;
		p->xhi = n ? p->xtick[n - 1] : 1;
	}
}

/* The axes' ends, and what varies across the series (for the labels). */
static void plot_setup(struct plot *p, const struct mf_result *r, int n,
		       double *ystep)
{
	const struct mf_config *b;
	int i;

	p->ymax = 0;
	p->base = -1;
	for (i = 0; i < n; i++) {
		if (!plotted(&r[i]))
			continue;
		if (p->base < 0)
			p->base = i;
		b = &r[p->base].cfg;
		add_xtick(p, r[i].cfg.threads);
		p->ymax = fmax(p->ymax, or_zero(r[i].faults_per_s));
		p->vary_lock |= !same_str(r[i].cfg.lock, b->lock);
		p->vary_backing |= !same_backing(&r[i].cfg, b);
		p->vary_writer |= !same_writer(&r[i].cfg, b);
	}
	plot_xaxis(p);
	if (!(p->ymax > 0))
		p->ymax = 1;
	*ystep = nice_step(p->ymax, 6);
	/* the y axis ends at a tick, at or past the largest value */
	p->ymax = ceil(p->ymax / *ystep - 1e-9) * *ystep;
	plot_size(p, r, n);
}

static int svg_write(FILE *f, const struct mf_result *r, int n)
{
	struct plot p = { .f = f };
	double ystep;
	int err;

	plot_setup(&p, r, n, &ystep);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		   "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		   "font-family=\"sans-serif\">\n",
		p.w, p.h, p.w, p.h);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
		   "fill=\"#fff\"/>\n", p.w, p.h);
	fprintf(f, "<text x=\"%d\" y=\"28\" text-anchor=\"middle\" "
		   "font-size=\"18\">multi-fault: page faults/s against "
		   "threads</text>\n", p.w / 2);
	if (p.base >= 0)
		svg_subtitle(&p, &r[p.base].cfg);
	svg_axes(&p, ystep);
	err = svg_all_series(&p, r, n);
	svg_legend(&p, r, n);
	fputs("</svg>\n", f);
	return err;
}

int mf_plot_svg(const char *path, const struct mf_result *r, int n)
{
	FILE *f;
	int err;

	if (!path || n < 0 || (n && !r))
		return -EINVAL;
	f = fopen(path, "w");
	if (!f)
		return -errno;
	err = svg_write(f, r, n);
	if (!err && ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}
