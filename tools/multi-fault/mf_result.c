/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf_result.c - a configuration's result, repeat by repeat:
 * the sums of the counters and the means and spreads over the repeats.  Both
 * modes use it: real threads (mf_run.c) and virtual CPUs (mf_vcpu.c,
 * mf_jobs.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mf.h"

void mf_stats_add(struct vs_fault_stats *sum, const struct vs_fault_stats *a,
		  const struct vs_fault_stats *b)
{
	const unsigned long *x = (const unsigned long *)a;
	const unsigned long *y = (const unsigned long *)b;
	unsigned long *s = (unsigned long *)sum;
	size_t i;

	/* struct vs_fault_stats is a list of unsigned long counters. */
	for (i = 0; i < sizeof(*sum) / sizeof(*s); i++)
		s[i] += y[i] - x[i];
}

void mf_lockstat_add(struct vs_lockstat *sum, const struct vs_lockstat *x)
{
	if (x->waittime_min && (!sum->waittime_min ||
				x->waittime_min < sum->waittime_min))
		sum->waittime_min = x->waittime_min;
	if (x->holdtime_min && (!sum->holdtime_min ||
				x->holdtime_min < sum->holdtime_min))
		sum->holdtime_min = x->holdtime_min;
	if (x->waittime_max > sum->waittime_max)
		sum->waittime_max = x->waittime_max;
	if (x->holdtime_max > sum->holdtime_max)
		sum->holdtime_max = x->holdtime_max;
	sum->con_bounces += x->con_bounces;
	sum->contentions += x->contentions;
	sum->waittime_total += x->waittime_total;
	sum->acq_bounces += x->acq_bounces;
	sum->acquisitions += x->acquisitions;
	sum->holdtime_total += x->holdtime_total;
	sum->holdtime_nr += x->holdtime_nr;
}

int mf_lockstat_collect(struct vs_lockstat sum[2])
{
	const struct vs_lock_class *class = vs_lock_class_get("mmap_lock");
	struct vs_lockstat x;
	int side;

	if (!vs_lockstat_enabled() || !class)
		return -ENOENT;
	for (side = VS_LOCK_READ; side <= VS_LOCK_WRITE; side++)
		if (!vs_lockstat_read(class, side, &x))
			mf_lockstat_add(&sum[side], &x);
	return 0;
}

void mf_summarise(struct mf_result *r)
{
	unsigned int i, n = r->repeats_done;
	double f = 0, fs = 0, t = 0, vf = 0, vfs = 0;

	for (i = 0; i < n; i++) {
		f += r->faults[i];
		fs += r->faults[i] / r->seconds[i];
		t += r->seconds[i];
	}
	r->faults_mean = n ? f / n : 0;
	r->faults_per_s = n ? fs / n : 0;
	r->elapsed_s = n ? t / n : 0;
	for (i = 0; i < n; i++) {
		vf += (r->faults[i] - r->faults_mean) *
		      (r->faults[i] - r->faults_mean);
		vfs += (r->faults[i] / r->seconds[i] - r->faults_per_s) *
		       (r->faults[i] / r->seconds[i] - r->faults_per_s);
	}
	/* The sample standard deviation over the repeats. */
	r->faults_stddev = n > 1 ? sqrt(vf / (n - 1)) : 0;
	r->faults_per_s_stddev = n > 1 ? sqrt(vfs / (n - 1)) : 0;
}

/* @x's named lines into @sum's: by name, while there is room. */
static void named_add(struct mf_cycles *sum, const struct mf_cycles *x)
{
	unsigned int i, j;

	for (i = 0; i < x->nr_named; i++) {
		for (j = 0; j < sum->nr_named; j++)
			if (!strcmp(sum->named[j].name, x->named[i].name))
				break;
		if (j == sum->nr_named) {
			if (j == MF_NAMED_MAX)
				continue;
			sum->named[j] = x->named[i];
			sum->nr_named++;
			continue;
		}
		sum->named[j].cycles += x->named[i].cycles;
		sum->named[j].transfers += x->named[i].transfers;
	}
}

/* Most cycles first, then by name: the order of every repeat alike. */
static int named_cmp(const void *a, const void *b)
{
	const struct mf_named_line *x = a, *y = b;

	if (x->cycles != y->cycles)
		return x->cycles < y->cycles ? 1 : -1;
	return strcmp(x->name, y->name);
}

void mf_cycles_add(struct mf_cycles *sum, const struct mf_cycles *x)
{
	sum->all += x->all;
	sum->lines += x->lines;
	sum->clear += x->clear;
	sum->fault += x->fault;
	sum->syscall += x->syscall;
	sum->kernel += x->kernel;
	sum->irq += x->irq;
	sum->futex += x->futex;
	sum->spin += x->spin;
	sum->zap += x->zap;
	sum->passes += x->passes;
	named_add(sum, x);
	qsort(sum->named, sum->nr_named, sizeof(sum->named[0]), named_cmp);
}

int mf_add_sample(struct mf_result *r, unsigned int k,
		  const struct mf_sample *s)
{
	int side;

	if (k != r->repeats_done || k >= r->cfg.repeats ||
	    k >= MF_MAX_REPEAT || !(s->seconds > 0))
		return -EINVAL;
	r->faults[k] = s->faults;
	r->seconds[k] = s->seconds;
	r->transfers[k] = s->transfers;
	r->cache_misses[k] = s->cache_misses;
	r->writer_ops += s->writer_ops;
	mf_stats_add(&r->st, &(struct vs_fault_stats){ 0 }, &s->st);
	for (side = VS_LOCK_READ; side <= VS_LOCK_WRITE; side++)
		mf_lockstat_add(&r->lockstat[side], &s->lockstat[side]);
	r->has_lockstat |= s->has_lockstat;
	mf_cycles_add(&r->cyc, &s->cyc);
	r->repeats_done = k + 1;
	mf_summarise(r);
	return 0;
}
