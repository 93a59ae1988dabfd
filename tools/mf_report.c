/* SPDX-License-Identifier: MIT */
/*
 * tools/mf_report.c - what multi-fault prints: the perf-stat block of one
 * configuration, seed 004's PRE/POST table, one JSON line, the SVG plot.
 *
 * Two spreads appear, and they answer different questions:
 *
 *   ( +- x% )  in the stat block and the table is perf stat's: the
 *              standard deviation of the mean (the sample standard
 *              deviation over the repeats divided by sqrt(repeats)),
 *              relative to the mean.  It says how well the mean is
 *              known, so that numbers compare with seed 004's.
 *   *_stddev   in JSON is the plain sample standard deviation over the
 *              repeats (mf_result's fields): how much one run varies.
 *
 * Counts are means over the repeats, as perf stat --repeat prints them.
 * Everything here only reads the results; nothing is kept between calls.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

/* @v rounded to an integer with thousands separators, as perf prints. */
static const char *fmt_count(char *buf, size_t size, double v)
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
static double rel_sd_mean(double sd, double mean, unsigned int n)
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

/* The sample standard deviation of the repeats' elapsed times. */
static double seconds_sd(const struct mf_result *r)
{
	unsigned int i, n = nr_times(r);
	double m = 0, v = 0;

	if (n < 2)
		return 0;
	for (i = 0; i < n; i++)
		m += r->seconds[i];
	m /= n;
	for (i = 0; i < n; i++)
		v += (r->seconds[i] - m) * (r->seconds[i] - m);
	return sqrt(v / (n - 1));
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
 * event name in 31, then the spread; STAT_SPREAD_COL is where "( +-"
 * starts, so that the time line can line its spread up with the rest.
 */
#define STAT_NAME_W 31
#define STAT_SPREAD_COL (18 + 6 + STAT_NAME_W + 2)

static void stat_line(FILE *out, double v, const char *name, double rel,
		      unsigned int n)
{
	char num[32];

	fprintf(out, "%18s      ", fmt_count(num, sizeof(num), v));
	if (n > 1)
		fprintf(out, "%-*s  ( +-%6.2f%% )\n", STAT_NAME_W, name, rel);
	else
		fprintf(out, "%s\n", name);
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

#define ABORTS_HEAD "      spf aborts: "
#define STAT_COLS 80

/*
 * The reasons that occurred, by name; "none" says spf never gave up.
 * Nine reasons do not fit one line: it wraps under the first reason.
 */
static void stat_spf_aborts(FILE *out, const struct vs_fault_stats *st)
{
	int i, col = (int)strlen(ABORTS_HEAD), len, nr = 0;
	char num[32], item[64];

	fputs(ABORTS_HEAD, out);
	for (i = 0; i < VS_SPF_ABORT_NR; i++) {
		if (!st->spf_abort[i])
			continue;
		len = snprintf(item, sizeof(item), "%s %s",
			       or_q(vs_spf_abort_name(i)),
			       fmt_count(num, sizeof(num),
					 (double)st->spf_abort[i]));
		if (nr && col + 2 + len >= STAT_COLS) {
			fprintf(out, ",\n%*s", (int)strlen(ABORTS_HEAD), "");
			col = (int)strlen(ABORTS_HEAD);
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

static void stat_pervma(FILE *out, const struct vs_fault_stats *st)
{
	char a[32], b[32], c[32], d[32];

	fprintf(out,
		"      per-VMA lock: success %s, abort %s, retry %s, miss %s\n",
		fmt_count(a, sizeof(a), (double)st->vma_lock_success),
		fmt_count(b, sizeof(b), (double)st->vma_lock_abort),
		fmt_count(c, sizeof(c), (double)st->vma_lock_retry),
		fmt_count(d, sizeof(d), (double)st->vma_lock_miss));
}

/* The writer's operations, all repeats together, and their rate. */
static void stat_writer(FILE *out, const struct mf_result *r)
{
	double t = seconds_sum(r);
	char ops[32], rate[32], want[32];

	fprintf(out, "      writer %s: %s ops, %s/s",
		or_q(mf_writer_name(r->cfg.writer)),
		fmt_count(ops, sizeof(ops), (double)r->writer_ops),
		fmt_count(rate, sizeof(rate),
			  t > 0 ? (double)r->writer_ops / t : 0));
	if (r->cfg.writer_rate)
		fprintf(out, " (asked %s/s)",
			fmt_count(want, sizeof(want), r->cfg.writer_rate));
	fputc('\n', out);
}

static void stat_elapsed(FILE *out, const struct mf_result *r)
{
	unsigned int n = r->repeats_done;
	int len, pad;

	len = fprintf(out, "\n %17.9f seconds time elapsed",
		      or_zero(r->elapsed_s));
	/* len counts the leading newline, which takes no column */
	pad = STAT_SPREAD_COL - (len - 1);
	if (n > 1)
		fprintf(out, "%*s( +-%6.2f%% )", pad > 1 ? pad : 1, "",
			rel_sd_mean(seconds_sd(r), r->elapsed_s, n));
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
	stat_line(out, r->faults_mean, "page-faults",
		  rel_sd_mean(r->faults_stddev, r->faults_mean, n), n);
	stat_line(out, fps, "page-faults/s",
		  rel_sd_mean(r->faults_per_s_stddev, fps, n), n);
	stat_line(out, r->cfg.threads ? fps / r->cfg.threads : 0,
		  "page-faults/s/thread", 0, 1);
	/* only the strategy that can abort: "none" elsewhere would mislead */
	if (!is_native(&r->cfg) && r->cfg.strategy == VS_FAULT_SPF)
		stat_spf_aborts(out, &r->st);
	if (!is_native(&r->cfg) && r->cfg.strategy == VS_FAULT_PERVMA)
		stat_pervma(out, &r->st);
	if (r->cfg.writer != MF_WRITER_NONE)
		stat_writer(out, r);
	stat_elapsed(out, r);
}

/* ---- PRE/POST ----------------------------------------------------------- */

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

/* The group's PRE: its first locked result, or -1. */
static int group_pre(const struct mf_result *r, int n, int first)
{
	int i;

	for (i = first; i < n; i++)
		if (same_group(&r[i].cfg, &r[first].cfg) && is_pre(&r[i].cfg))
			return i;
	return -1;
}

/* "   ROLE  strategy  page-faults  faults/s  ( +- x% )  vs PRE" */
#define PP_ROW "   %-4s  %-8s  %13s  %13s"
#define PP_SPREAD_GAP "             "	/* as wide as "( +-  1.25% )" */

static void prepost_row(FILE *out, const struct mf_result *x,
			const struct mf_result *pre)
{
	const char *role = "";
	double fps = or_zero(x->faults_per_s), ratio;
	char f[32], s[32];

	if (pre)
		role = is_pre(&x->cfg) ? "PRE" : "POST";
	if (!x->repeats_done) {
		fprintf(out, "   %-4s  %-8s  %13s\n", role,
			strategy_name(&x->cfg), "<not counted>");
		return;
	}
	fprintf(out, PP_ROW, role, strategy_name(&x->cfg),
		fmt_count(f, sizeof(f), x->faults_mean),
		fmt_count(s, sizeof(s), fps));
	if (x->repeats_done > 1)
		fprintf(out, "  ( +-%6.2f%% )",
			rel_sd_mean(x->faults_per_s_stddev, fps,
				    x->repeats_done));
	else if (pre && !is_pre(&x->cfg))
		fputs("  " PP_SPREAD_GAP, out);
	/* faults/s, not page-faults: an interrupted repeat is shorter */
	if (pre && !is_pre(&x->cfg) && pre->repeats_done &&
	    pre->faults_per_s > 0) {
		ratio = fps / pre->faults_per_s;
		fprintf(out, "  %5.2fx (%+.0f%%)", ratio, (ratio - 1) * 100);
	}
	fputc('\n', out);
}

static void prepost_group(FILE *out, const struct mf_result *r, int n,
			  int first)
{
	int p = group_pre(r, n, first), i;
	const struct mf_result *pre = p >= 0 ? &r[p] : NULL;

	fputc(' ', out);
	if (is_native(&r[first].cfg))
		fputs("native (host kernel): ", out);
	print_cmdline(out, &r[first].cfg, false);
	fputs("\n", out);
	fprintf(out, PP_ROW, "", "strategy", "page-faults", "faults/s");
	fputs(pre ? "  " PP_SPREAD_GAP "   vs PRE\n" : "\n", out);
	/* PRE first, then the rest in the order they ran */
	if (pre)
		prepost_row(out, pre, pre);
	for (i = first; i < n; i++)
		if (i != p && same_group(&r[i].cfg, &r[first].cfg))
			prepost_row(out, &r[i], pre);
	fputc('\n', out);
}

void mf_print_prepost(FILE *out, const struct mf_result *r, int n)
{
	int i, j;

	fputc('\n', out);
	for (i = 0; i < n; i++) {
		/* a group is printed where its first member is */
		for (j = 0; j < i; j++)
			if (same_group(&r[j].cfg, &r[i].cfg))
				break;
		if (j == i)
			prepost_group(out, r, n, i);
	}
}

/* ---- JSON --------------------------------------------------------------- */

void mf_json_str(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

static void json_key_str(FILE *out, const char *key, const char *s)
{
	fprintf(out, ",\"%s\":", key);
	mf_json_str(out, s);
}

/* @prec digits after the point: 1 for counts and rates, 9 for seconds. */
static void json_key_num(FILE *out, const char *key, int prec, double v)
{
	fprintf(out, ",\"%s\":%.*f", key, prec, or_zero(v));
}

/* Every reason by name, so that a consumer needs no schema per run. */
static void json_aborts(FILE *out, const struct vs_fault_stats *st)
{
	int i;

	fputs(",\"aborts\":{", out);
	for (i = 0; i < VS_SPF_ABORT_NR; i++) {
		mf_json_str(out, or_q(vs_spf_abort_name(i)));
		fprintf(out, ":%lu,", st->spf_abort[i]);
	}
	fprintf(out, "\"vma_lock_abort\":%lu,\"vma_lock_retry\":%lu,"
		     "\"vma_lock_miss\":%lu}",
		st->vma_lock_abort, st->vma_lock_retry, st->vma_lock_miss);
	fprintf(out, ",\"success\":{\"locked\":%lu,\"spf\":%lu,"
		     "\"vma_lock\":%lu}",
		st->locked, st->spf_success, st->vma_lock_success);
}

void mf_print_json(FILE *out, const struct mf_result *r)
{
	static const struct vs_fault_stats zero;
	const struct mf_config *c = &r->cfg;
	bool native = is_native(c);

	fputs("{\"backing\":", out);
	mf_json_str(out, mf_backing_name(c->backing));
	json_key_str(out, "uffd_mode", c->backing == MF_UFFD ?
			  vs_uffd_mode_name(c->uffd_mode) : NULL);
	json_key_str(out, "strategy", native ? NULL :
			  vs_fault_strategy_name(c->strategy));
	json_key_str(out, "lock", native ? NULL : c->lock);
	fprintf(out, ",\"threads\":%u", c->threads);
	json_key_str(out, "writer", mf_writer_name(c->writer));
	fprintf(out, ",\"writer_rate\":%u,\"seed\":%lu", c->writer_rate,
		c->seed);
	json_key_num(out, "duration_s", 3, c->duration_ms / 1000.0);
	fprintf(out, ",\"repeats\":%u,\"repeats_requested\":%u",
		r->repeats_done, c->repeats);
	fprintf(out, ",\"interrupted\":%s",
		r->repeats_done < c->repeats ? "true" : "false");
	json_key_num(out, "faults", 1, r->faults_mean);
	json_key_num(out, "faults_stddev", 1, r->faults_stddev);
	json_key_num(out, "faults_per_s", 1, r->faults_per_s);
	json_key_num(out, "faults_per_s_stddev", 1,
		     r->faults_per_s_stddev);
	json_key_num(out, "elapsed_s", 9, r->elapsed_s);
	fprintf(out, ",\"writer_ops\":%lu", r->writer_ops);
	/* native has no model, hence no counters, whatever @st holds */
	json_aborts(out, native ? &zero : &r->st);
	fputs("}\n", out);
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
	double xmax, ymax;	/* the axes' ends, at a tick */
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

static double px(const struct plot *p, double x)
{
	return PLOT_L + x / p->xmax * PLOT_W;
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

static void svg_axes(const struct plot *p, double xstep, double ystep)
{
	FILE *f = p->f;
	int bottom = p->h - PLOT_B;
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
	for (v = 0; v <= p->xmax * (1 + 1e-9); v += xstep)
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
			   "y2=\"%d\"/>\n",
			px(p, v), bottom, px(p, v), bottom + 5);
	fputs("</g>\n<g font-size=\"12\" text-anchor=\"middle\">\n", f);
	for (v = 0; v <= p->xmax * (1 + 1e-9); v += xstep)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\">%g</text>\n",
			px(p, v), bottom + 20, v);
	fputs("</g>\n<g font-size=\"12\" text-anchor=\"end\">\n", f);
	for (v = 0; v <= p->ymax * (1 + 1e-9); v += ystep) {
		fmt_si(buf, sizeof(buf), v);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\">%s</text>\n",
			PLOT_L - 8, py(p, v) + 4, buf);
	}
	fputs("</g>\n", f);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"14\" "
		   "text-anchor=\"middle\">threads</text>\n",
		PLOT_L + PLOT_W / 2, bottom + 45);
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
			fmt_count(num, sizeof(num), x->faults_per_s), tag);
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

/* The axes' ends, and what varies across the series (for the labels). */
static void plot_setup(struct plot *p, const struct mf_result *r, int n,
		       double *xstep, double *ystep)
{
	const struct mf_config *b;
	int i;

	p->xmax = 1;
	p->ymax = 0;
	p->base = -1;
	for (i = 0; i < n; i++) {
		if (!plotted(&r[i]))
			continue;
		if (p->base < 0)
			p->base = i;
		b = &r[p->base].cfg;
		p->xmax = fmax(p->xmax, r[i].cfg.threads);
		p->ymax = fmax(p->ymax, or_zero(r[i].faults_per_s));
		p->vary_lock |= !same_str(r[i].cfg.lock, b->lock);
		p->vary_backing |= !same_backing(&r[i].cfg, b);
		p->vary_writer |= !same_writer(&r[i].cfg, b);
	}
	if (!(p->ymax > 0))
		p->ymax = 1;
	*xstep = fmax(1, nice_step(p->xmax, 8));
	*ystep = nice_step(p->ymax, 6);
	/* both axes end at a tick, at or past the largest value */
	p->xmax = ceil(p->xmax / *xstep - 1e-9) * *xstep;
	p->ymax = ceil(p->ymax / *ystep - 1e-9) * *ystep;
	plot_size(p, r, n);
}

static int svg_write(FILE *f, const struct mf_result *r, int n)
{
	struct plot p = { .f = f };
	double xstep, ystep;
	int err;

	plot_setup(&p, r, n, &xstep, &ystep);
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
	svg_axes(&p, xstep, ystep);
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
