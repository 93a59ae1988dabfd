/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf_vreport.c - what multi-fault prints of a run on virtual
 * CPUs besides what every run prints (mf_report.c): the cache-miss and line
 * transfer counts, and where the virtual cycles of a fault went.
 */
#include <stdio.h>
#include <string.h>

#include "mf.h"

/* @v[k] per second of repeat k, times @secs: a count scaled to @secs. */
static void scaled(const struct mf_result *r, const double *v, double *out)
{
	unsigned int k;

	for (k = 0; k < r->repeats_done; k++)
		out[k] = r->cfg.seconds_as > 0 && r->seconds[k] > 0 ?
			 v[k] / r->seconds[k] * r->cfg.seconds_as : v[k];
}

/* One perf-stat line of the scaled counts @v, as mf_print_stat()'s. */
static void count_line(FILE *out, const struct mf_result *r, const double *v,
		       const char *name)
{
	double x[MF_MAX_REPEAT] = { 0 }, m, sd;
	unsigned int n = r->repeats_done;

	scaled(r, v, x);
	m = mf_mean_sd(x, n, &sd);
	mf_stat_line(out, m, name, mf_rel_sd_mean(sd, m, n), n, m > 0);
}

void mf_print_vcpu_counts(FILE *out, const struct mf_result *r)
{
	count_line(out, r, r->cache_misses, "cache-misses");
	count_line(out, r, r->transfers, "line-transfers");
}

/* "      1,234 cycles  12.3 %  what" */
static void part(FILE *out, double cycles, double faults, double all,
		 const char *what)
{
	fprintf(out, "      %10.0f %6.1f %%  %s\n", cycles / faults,
		all > 0 ? cycles / all * 100 : 0, what);
}

void mf_print_breakdown(FILE *out, const struct mf_result *r)
{
	const struct mf_cycles *c = &r->cyc;
	double faults = 0, rest, elapsed = 0, hz;
	unsigned int k, i;

	for (k = 0; k < r->repeats_done; k++) {
		faults += r->faults[k];
		elapsed += r->seconds[k];
	}
	if (!(faults > 0) || !(c->all > 0) || !(elapsed > 0))
		return;
	fprintf(out, "\n      where a fault's virtual cycles went, sum of %u "
		"(cycles of the %u vCPUs per fault, share):\n",
		r->repeats_done, r->cfg.threads);
	part(out, c->all, faults, c->all, "all: vCPUs x elapsed");
	part(out, c->lines, faults, c->all,
	     "shared memory: line transfers, queueing, hits");
	for (i = 0; i < c->nr_named; i++) {
		char what[80];

		snprintf(what, sizeof(what), "  of which %s (%.2f transfers "
			 "a fault)", c->named[i].name,
			 c->named[i].transfers / faults);
		part(out, c->named[i].cycles, faults, c->all, what);
	}
	part(out, c->clear, faults, c->all, "clearing and copying pages");
	part(out, c->fault, faults, c->all, "fault entry and exit");
	part(out, c->kernel, faults, c->all,
	     "kernel instructions (the kernel profile)");
	part(out, c->irq, faults, c->all, "TLB flush interrupts taken");
	part(out, c->syscall, faults, c->all, "system calls (the zap)");
	part(out, c->futex, faults, c->all, "futex calls (the barriers)");
	part(out, c->spin, faults, c->all, "spinning (PAUSE in spin loops)");
	rest = c->all - c->lines - c->clear - c->fault - c->kernel - c->irq -
	       c->syscall - c->futex - c->spin;
	/* A charge that the end of the run cut is counted whole: a few
	 * cycles below zero are that; more would be a bug, and show. */
	if (rest < 0 && rest > -1e-4 * c->all)
		rest = 0;
	part(out, rest, faults, c->all,
	     "idle: asleep at a barrier, waking, switching");
	/* vCPU 0's cycles in MADV_DONTNEED, of one vCPU's elapsed */
	hz = c->all / elapsed / r->cfg.threads;
	fprintf(out, "      the zap: %.1f %% of the elapsed time, %.0f passes "
		"of %.0f us each\n", c->zap / (c->all / r->cfg.threads) * 100,
		c->passes, c->passes > 0 ? c->zap / c->passes / hz * 1e6 : 0);
}

void mf_json_vcpu(const struct mf_result *r)
{
	const struct mf_cycles *c = &r->cyc;
	double cm, tr, sd;
	unsigned int i;

	cm = mf_mean_sd(r->cache_misses, r->repeats_done, &sd);
	tr = mf_mean_sd(r->transfers, r->repeats_done, &sd);
	bench_json_str("machine", r->cfg.machine);
	bench_json_uint("vcpus", r->cfg.threads);
	bench_json_num("seconds_as", r->cfg.seconds_as, BENCH_JSON_G);
	bench_json_num("cache_misses", cm, 0);
	bench_json_num("line_transfers", tr, 0);
	bench_json_object("cycles");
	bench_json_num("all", c->all, 0);
	bench_json_num("lines", c->lines, 0);
	bench_json_num("clear", c->clear, 0);
	bench_json_num("fault", c->fault, 0);
	bench_json_num("syscall", c->syscall, 0);
	bench_json_num("kernel", c->kernel, 0);
	bench_json_num("irq", c->irq, 0);
	bench_json_num("futex", c->futex, 0);
	bench_json_num("spin", c->spin, 0);
	bench_json_num("zap", c->zap, 0);
	bench_json_object("named");
	for (i = 0; i < c->nr_named; i++)
		bench_json_num(c->named[i].name, c->named[i].cycles, 0);
	bench_json_object_end();
	bench_json_object_end();
}
