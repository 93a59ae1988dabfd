/* SPDX-License-Identifier: MIT */
/*
 * tools/common/bench_report.c - rounds, figures and the JSON writer of the
 * tools.  bench_report.h documents each function that is not static.
 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_report.h"

/* ---- rounds ------------------------------------------------------------ */

int bench_rounds(unsigned int rounds, unsigned int arms,
		 int (*fn)(void *ctx, unsigned int arm, unsigned int round),
		 void *ctx)
{
	unsigned int r, a;
	int ret;

	for (r = 0; r < rounds; r++) {
		for (a = 0; a < arms; a++) {
			ret = fn(ctx, a, r);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* qsort() order of doubles, ascending. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, unsigned int nr)
{
	qsort(v, nr, sizeof(*v), cmp_double);
	return nr % 2 ? v[nr / 2] : (v[nr / 2 - 1] + v[nr / 2]) / 2;
}

void bench_range_of(double *v, unsigned int nr, struct bench_range *out)
{
	out->med = bench_median(v, nr);
	out->min = v[0];
	out->max = v[nr - 1];
}

void bench_ratio_range(const double *num, const double *den,
		       unsigned int nr, struct bench_range *out)
{
	double v[BENCH_MAX_REPEAT];
	unsigned int r;

	for (r = 0; r < nr && r < BENCH_MAX_REPEAT; r++)
		v[r] = num[r] / den[r];
	bench_range_of(v, r, out);
}

/* The double at @offset of @s. */
static double field(const void *s, size_t offset)
{
	double v;

	memcpy(&v, (const char *)s + offset, sizeof(v));
	return v;
}

/* The field bench_sort_at() compares (qsort takes no argument). */
static size_t sort_offset;

static int cmp_at(const void *a, const void *b)
{
	return cmp_double(&(double){ field(a, sort_offset) },
			  &(double){ field(b, sort_offset) });
}

void bench_sort_at(void *s, unsigned int nr, size_t size, size_t offset)
{
	sort_offset = offset;
	qsort(s, nr, size, cmp_at);
}

/* ---- the grid -------------------------------------------------------- */

int bench_grid_init(struct bench_grid *g, unsigned int arms,
		    unsigned int rounds, size_t size)
{
	g->s = calloc((size_t)arms * rounds, size);
	g->size = size;
	g->arms = arms;
	g->rounds = rounds;
	g->done = 0;
	if (g->s)
		return 0;
	fprintf(stderr, "%s: out of memory for %u x %u samples\n",
		bench_prog, arms, rounds);
	return -ENOMEM;
}

void bench_grid_free(struct bench_grid *g)
{
	free(g->s);
	g->s = NULL;
}

void *bench_grid_at(const struct bench_grid *g, unsigned int arm,
		    unsigned int round)
{
	return g->s + ((size_t)arm * g->rounds + round) * g->size;
}

/* What bench_grid_run() hands bench_rounds(). */
struct grid_call {
	struct bench_grid *g;
	int (*fn)(void *ctx, unsigned int arm, void *sample);
	void *ctx;
};

static int grid_arm(void *ctx, unsigned int arm, unsigned int round)
{
	struct grid_call *c = ctx;
	void *sample = bench_grid_at(c->g, arm, round);
	int ret;

	memset(sample, 0, c->g->size);
	ret = c->fn(c->ctx, arm, sample);
	if (!ret && arm == c->g->arms - 1)
		c->g->done = round + 1;
	return ret;
}

int bench_grid_run(struct bench_grid *g,
		   int (*fn)(void *ctx, unsigned int arm, void *sample),
		   void *ctx)
{
	struct grid_call c = { g, fn, ctx };

	g->done = 0;
	return bench_rounds(g->rounds, g->arms, grid_arm, &c);
}

int bench_grid_measure(struct bench_grid *g, unsigned int arms,
		       size_t size,
		       int (*fn)(void *ctx, unsigned int arm, void *sample),
		       void *ctx)
{
	int err = bench_grid_init(g, arms, bench_std.repeat, size);

	return err ? err : bench_grid_run(g, fn, ctx);
}

/* The double at @offset of @arm's samples, over the rounds done. */
static void grid_values(const struct bench_grid *g, unsigned int arm,
			size_t offset, double *v)
{
	unsigned int r;

	for (r = 0; r < g->done; r++)
		v[r] = field(bench_grid_at(g, arm, r), offset);
}

void bench_grid_range(const struct bench_grid *g, unsigned int arm,
		      size_t offset, struct bench_range *out)
{
	double v[BENCH_MAX_REPEAT];

	grid_values(g, arm, offset, v);
	bench_range_of(v, g->done, out);
}

void bench_grid_ratio(const struct bench_grid *g, unsigned int a,
		      unsigned int b, size_t offset, struct bench_range *out)
{
	double x[BENCH_MAX_REPEAT], y[BENCH_MAX_REPEAT];

	grid_values(g, a, offset, x);
	grid_values(g, b, offset, y);
	bench_ratio_range(x, y, g->done, out);
}

const void *bench_grid_median_at(const struct bench_grid *g,
				 unsigned int arm, size_t offset)
{
	struct { double v; unsigned int round; } at[BENCH_MAX_REPEAT];
	unsigned int r;

	for (r = 0; r < g->done; r++) {
		at[r].v = field(bench_grid_at(g, arm, r), offset);
		at[r].round = r;
	}
	bench_sort_at(at, g->done, sizeof(at[0]), 0);
	return bench_grid_at(g, arm, at[(g->done - 1) / 2].round);
}

void bench_grid_median(const struct bench_grid *g, unsigned int arm,
		       size_t offset, void *out)
{
	memcpy(out, bench_grid_median_at(g, arm, offset), g->size);
}

/* ---- text -------------------------------------------------------------- */

const char *bench_agg_name(enum bench_agg agg)
{
	static const char *const name[] = { "median", "mean", "sum" };

	return name[agg];
}

void bench_figure_line(const char *label, enum bench_agg agg,
		       const char *over, double v, int decimals,
		       const char *unit)
{
	char left[96];

	snprintf(left, sizeof(left), "%s (%s of %s):", label,
		 bench_agg_name(agg), over);
	printf("  %-44s %.*f%s%s\n", left, decimals, v, *unit ? " " : "",
	       unit);
}

void bench_print_range(const struct bench_range *r, int width,
		       const char *unit)
{
	char buf[96];

	snprintf(buf, sizeof(buf), "%.2f%s (%.2f..%.2f)", r->med, unit,
		 r->min, r->max);
	printf("%*s", width, buf);
}

void bench_print_rounds_note(const char *what, unsigned int rounds,
			     unsigned int duration_ms)
{
	printf("# %s: median (min..max) over %u round%s of %g s each, the "
	       "arms interleaved in every round\n", what, rounds,
	       rounds == 1 ? "" : "s", duration_ms / 1000.0);
}

/* ---- JSON -------------------------------------------------------------- */

/* The objects under way: [0] is the line's; whether each has no field
 * yet. */
static bool first[BENCH_JSON_DEPTH + 1];
static int depth;

/* A bug of the tool's: the writer was called out of order. */
static _Noreturn void json_bug(const char *what)
{
	fprintf(stderr, "%s: JSON writer: %s\n", bench_prog, what);
	abort();
}

/* @s as a JSON string, quoted and escaped. */
static void put_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

/* The separator and "key": of a field of the object under way. */
static void key(const char *k)
{
	if (!first[depth])
		putchar(',');
	first[depth] = false;
	put_str(k);
	putchar(':');
}

void bench_json_begin(void)
{
	putchar('{');
	depth = 0;
	first[0] = true;
}

void bench_json_str(const char *k, const char *val)
{
	key(k);
	if (val)
		put_str(val);
	else
		fputs("null", stdout);
}

void bench_json_null(const char *k)
{
	key(k);
	fputs("null", stdout);
}

void bench_json_uint(const char *k, unsigned long long v)
{
	key(k);
	printf("%llu", v);
}

void bench_json_int(const char *k, long long v)
{
	key(k);
	printf("%lld", v);
}

void bench_json_num(const char *k, double v, int decimals)
{
	key(k);
	if (!isfinite(v))
		fputs("null", stdout);
	else if (decimals == BENCH_JSON_G)
		printf("%g", v);
	else
		printf("%.*f", decimals, v);
}

void bench_json_bool(const char *k, bool v)
{
	key(k);
	fputs(v ? "true" : "false", stdout);
}

void bench_json_range(const char *k, const struct bench_range *r,
		      int decimals)
{
	char name[64];

	bench_json_num(k, r->med, decimals);
	snprintf(name, sizeof(name), "%s_min", k);
	bench_json_num(name, r->min, decimals);
	snprintf(name, sizeof(name), "%s_max", k);
	bench_json_num(name, r->max, decimals);
}

void bench_json_object(const char *k)
{
	if (depth == BENCH_JSON_DEPTH)
		json_bug("objects nested too deep");
	key(k);
	putchar('{');
	first[++depth] = true;
}

void bench_json_object_end(void)
{
	if (!depth)
		json_bug("an object ended that was not begun");
	putchar('}');
	depth--;
}

void bench_json_end(void)
{
	if (depth)
		json_bug("the line ended inside an object");
	puts("}");
	fflush(stdout);
}
