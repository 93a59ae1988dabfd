/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf_stat.c - perf stat's figures: a count with
 * thousands separators, the mean and spread of the repeats, and one line
 * of the perf-stat block (mf_report.c prints the block, mf_vreport.c the
 * vCPU mode's lines of it).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "mf.h"

const char *mf_fmt_count(char *buf, size_t size, double v)
{
	/* clamped: llround() of what does not fit a long long is undefined */
	unsigned long long u =
		(unsigned long long)llround(fmin(fmax(mf_or_zero(v), 0), 1e18));
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
	return mf_or_zero(sd / sqrt((double)n) / mean * 100);
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

const char *mf_stat_how(char *buf, size_t size, enum bench_agg agg,
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
		MF_STAT_NAME_W, name);
	mf_stat_how(h, sizeof(h), BENCH_MEAN, n);
	if (n > 1 && spread)
		fprintf(out, "%-*s( +-%6.2f%% )\n", MF_STAT_HOW_W, h, rel);
	else
		fprintf(out, "%s\n", h);
}
