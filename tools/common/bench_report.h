/* SPDX-License-Identifier: MIT */
/*
 * tools/common/bench_report.h - how the tools measure in rounds and say what
 * they measured: one figure format, one JSON writer.
 *
 * Rounds.  Measurements that are compared run interleaved, A B C, A B C,
 * ... (bench_rounds()), so that drift on a shared, noisy host hits every
 * arm alike.  A figure over the rounds is a struct bench_range: the
 * median and the lowest and highest round.  A ratio of two arms is taken
 * within each round and then summarised (bench_ratio_range()), never as
 * the ratio of two medians.
 *
 * Text.  Every figure a block prints says what it is: a median over
 * rounds, a mean or a sum over the threads of one run
 * (bench_figure_line()); a ratio prints as "0.91x (0.85..1.02)"
 * (bench_print_range()).
 *
 * JSON.  The one writer of the tools' JSON: one object per line, written
 * field by field, objects inside it as fields too:
 *
 *   bench_json_begin();
 *   bench_json_str("strategy", "spf");
 *   bench_json_range("faults_per_s", &r, 0);
 *   bench_json_object("aborts");
 *   bench_json_uint("seq_odd", 3);
 *   bench_json_object_end();
 *   bench_json_end();
 *
 * gives {"strategy":"spf","faults_per_s":1.0,...,"aborts":{"seq_odd":3}}
 * on standard output.  Keys and strings are escaped as JSON wants.
 *
 * No vmsim code (multi-fault-ref uses it).  Context: one thread at a
 * time; the JSON writer holds one object under way.
 */
#ifndef VS_TOOLS_BENCH_REPORT_H
#define VS_TOOLS_BENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "bench_opts.h"

/*
 * struct bench_range - a figure over rounds
 * @med:	the median (an even count: the mean of the middle two)
 * @min, @max:	the lowest and the highest round
 */
struct bench_range {
	double med, min, max;
};

/* How a printed figure was made from the runs or the threads. */
enum bench_agg {
	BENCH_MEDIAN,	/* median over rounds */
	BENCH_MEAN,	/* mean over threads or runs */
	BENCH_SUM,	/* sum over threads or runs */
};

/* ---- rounds ------------------------------------------------------------ */

/**
 * bench_rounds - measure @arms arms @rounds times, interleaved
 * @fn:		measures arm @arm in round @round; returns 0 to go on,
 *		a negative errno to fail, or 1 to stop (say, at SIGINT)
 *
 * Order: round 0 arm 0, 1, .., @arms - 1; round 1 arm 0, ...
 * Return: 0 after the last, or the first nonzero of @fn.
 */
int bench_rounds(unsigned int rounds, unsigned int arms,
		 int (*fn)(void *ctx, unsigned int arm, unsigned int round),
		 void *ctx);

/**
 * bench_median - the median of @v[0..@nr), which it sorts
 *
 * An even @nr gives the mean of the two middle values.
 */
double bench_median(double *v, unsigned int nr);

/**
 * bench_range_of - median and range of @v[0..@nr), which it sorts
 * @nr:		at least 1
 */
void bench_range_of(double *v, unsigned int nr, struct bench_range *out);

/**
 * bench_ratio_range - @num[r] / @den[r] for each round r < @nr, then
 * their median and range
 * @nr:		1..BENCH_MAX_REPEAT
 */
void bench_ratio_range(const double *num, const double *den,
		       unsigned int nr, struct bench_range *out);

/**
 * bench_sort_at - sort @nr measurements by one of their fields
 * @s:		an array of @nr structs of @size bytes
 * @offset:	of a double in each (offsetof()), the key, ascending
 *
 * Afterwards s[0], s[nr - 1] and s[(nr - 1) / 2] are the lowest, the
 * highest and the median measurement.
 */
void bench_sort_at(void *s, unsigned int nr, size_t size, size_t offset);

/*
 * struct bench_grid - the samples of @arms arms over @rounds rounds, for
 * bench_grid_run(); a sample is any struct of @size bytes whose figures
 * are doubles, named by their offsetof()
 * @done:	rounds in which every arm was measured (read-only): what
 *		the figures are taken over
 */
struct bench_grid {
	char *s;		/* private: arm-major */
	size_t size;
	unsigned int arms, rounds;
	unsigned int done;
};

/**
 * bench_grid_init - room for @arms x @rounds zeroed samples of @size
 *
 * Return: 0, or -ENOMEM (said on stderr).
 */
int bench_grid_init(struct bench_grid *g, unsigned int arms,
		    unsigned int rounds, size_t size);

/** bench_grid_free - free what bench_grid_init() took */
void bench_grid_free(struct bench_grid *g);

/** bench_grid_at - the sample of @arm in @round */
void *bench_grid_at(const struct bench_grid *g, unsigned int arm,
		    unsigned int round);

/**
 * bench_grid_run - measure every arm in rounds, interleaved
 * @fn:		fills @sample (zeroed) of @arm; returns as bench_rounds()'s
 *
 * Return: as bench_rounds(); @g->done counts the whole rounds.
 */
int bench_grid_run(struct bench_grid *g,
		   int (*fn)(void *ctx, unsigned int arm, void *sample),
		   void *ctx);

/**
 * bench_grid_measure - bench_grid_init() for @arms arms over --repeat
 * rounds (bench_std.repeat), then bench_grid_run()
 *
 * Return: as bench_grid_run(), or -ENOMEM (said).
 */
int bench_grid_measure(struct bench_grid *g, unsigned int arms,
		       size_t size,
		       int (*fn)(void *ctx, unsigned int arm, void *sample),
		       void *ctx);

/**
 * bench_grid_range - median and range over the rounds done of the
 * double at @offset of @arm's samples
 *
 * Context: @g->done >= 1.
 */
void bench_grid_range(const struct bench_grid *g, unsigned int arm,
		      size_t offset, struct bench_range *out);

/**
 * bench_grid_ratio - @a over @b of the double at @offset, taken in each
 * round done, then their median and range
 *
 * Context: @g->done >= 1.
 */
void bench_grid_ratio(const struct bench_grid *g, unsigned int a,
		      unsigned int b, size_t offset, struct bench_range *out);

/**
 * bench_grid_median_at - the sample of @arm whose double at @offset is
 * the median one over the rounds done (the lower middle for an even
 * count): its counters go with the median figure
 *
 * Return: the sample in @g, valid until bench_grid_free().
 * Context: @g->done >= 1.
 */
const void *bench_grid_median_at(const struct bench_grid *g,
				 unsigned int arm, size_t offset);

/**
 * bench_grid_median - copy bench_grid_median_at()'s sample into @out
 *
 * Context: @g->done >= 1.
 */
void bench_grid_median(const struct bench_grid *g, unsigned int arm,
		       size_t offset, void *out);

/* ---- text -------------------------------------------------------------- */

/**
 * bench_agg_name - "median", "mean" or "sum"
 */
const char *bench_agg_name(enum bench_agg agg);

/**
 * bench_figure_line - one labelled figure of a block:
 * "  <label> (<agg> of <over>): <value> <unit>"
 * @over:	what it is taken over: "5 rounds", "4 threads"
 * @decimals:	of @v
 */
void bench_figure_line(const char *label, enum bench_agg agg,
		       const char *over, double v, int decimals,
		       const char *unit);

/**
 * bench_print_range - "<med><unit> (<min>..<max>)" in @width columns or
 * more, two decimals: "0.91x (0.85..1.02)" for a ratio (@unit "x")
 */
void bench_print_range(const struct bench_range *r, int width,
		       const char *unit);

/**
 * bench_print_rounds_note - the header line of a rounds table:
 * "# <what>: median (min..max) over N rounds of M s each, the arms
 * interleaved in every round"
 */
void bench_print_rounds_note(const char *what, unsigned int rounds,
			     unsigned int duration_ms);

/* ---- JSON: one object per line ----------------------------------------- */

#define BENCH_JSON_DEPTH 8	/* objects inside the line's object */
#define BENCH_JSON_G (-1)	/* bench_json_num(): printf's %g */

/** bench_json_begin - start the line's object ("{") */
void bench_json_begin(void);

/** bench_json_str - "key":"val", escaped; "key":null for a NULL @val */
void bench_json_str(const char *key, const char *val);

/** bench_json_null - "key":null */
void bench_json_null(const char *key);

/** bench_json_uint - "key":v */
void bench_json_uint(const char *key, unsigned long long v);

/** bench_json_int - "key":v, signed */
void bench_json_int(const char *key, long long v);

/**
 * bench_json_num - "key":v with @decimals decimals, or with BENCH_JSON_G
 * as %g writes it (6 significant digits, no trailing zeros); null for a
 * NaN or an infinity, which JSON has not
 */
void bench_json_num(const char *key, double v, int decimals);

/** bench_json_bool - "key":true or false */
void bench_json_bool(const char *key, bool v);

/**
 * bench_json_range - "key":med,"key_min":min,"key_max":max
 */
void bench_json_range(const char *key, const struct bench_range *r,
		      int decimals);

/**
 * bench_json_object - "key":{ - start an object inside the one under
 * way; its fields follow, then bench_json_object_end()
 *
 * More than BENCH_JSON_DEPTH deep is a bug of the tool: it aborts.
 */
void bench_json_object(const char *key);

/**
 * bench_json_object_end - end the object bench_json_object() started
 * ("}")
 *
 * With none under way it is a bug of the tool: it aborts.
 */
void bench_json_object_end(void);

/**
 * bench_json_end - end the line's object ("}" and a newline) and flush
 *
 * With an object of bench_json_object() still under way it is a bug of
 * the tool: it aborts.
 */
void bench_json_end(void);

#endif /* VS_TOOLS_BENCH_REPORT_H */
