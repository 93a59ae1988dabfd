/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf_plot.c - --plot: faults/s against threads, as a
 * standalone SVG, a line per series of configurations that differ only
 * in their thread count.  It only reads the results.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mf.h"

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
	if (!mf_same_backing(a, b) || !mf_same_writer(a, b) ||
	    !mf_same_lock(a, b))
		return false;
	return mf_is_native(a) || a->strategy == b->strategy;
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
		return mf_or_q(mf_backing_name(c->backing));
	if (c->uffd_mode < 0 || c->uffd_mode >= VS_UFFD_NR_MODES)
		return "uffd:?";
	return uffd[c->uffd_mode];
}

/* The label of @c's series: the strategy, then what varies between them. */
static void series_label(const struct plot *p, const struct mf_config *c,
			 char *buf, size_t size)
{
	size_t o;

	o = (size_t)snprintf(buf, size, "%s", mf_strategy_label(c));
	if (p->vary_lock && c->lock && o < size)
		o += (size_t)snprintf(buf + o, size - o, " %s", c->lock);
	if (p->vary_backing && !mf_is_native(c) && o < size)
		o += (size_t)snprintf(buf + o, size - o, " %s",
				      backing_label(c));
	if (p->vary_writer && o < size)
		o += (size_t)snprintf(buf + o, size - o, " writer=%s",
				      mf_or_q(mf_writer_name(c->writer)));
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
		fprintf(f, "writer %s", mf_or_q(mf_writer_name(c->writer)));
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
			py(p, mf_or_zero(r[idx[i]].faults_per_s)));
	fputs("\"/>\n", f);
	for (i = 0; i < k; i++) {
		const struct mf_result *x = &r[idx[i]];

		tag = svg_marker(f, s, px(p, x->cfg.threads),
				 py(p, mf_or_zero(x->faults_per_s)));
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
		p->ymax = fmax(p->ymax, mf_or_zero(r[i].faults_per_s));
		p->vary_lock |= !mf_same_lock(&r[i].cfg, b);
		p->vary_backing |= !mf_same_backing(&r[i].cfg, b);
		p->vary_writer |= !mf_same_writer(&r[i].cfg, b);
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
