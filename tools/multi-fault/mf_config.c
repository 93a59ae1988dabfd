/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf_config.c - a configuration's names, and what two
 * configurations have in common: what the reports and the plot tell
 * configurations apart by.
 */
#include <stdbool.h>
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

bool mf_is_native(const struct mf_config *c)
{
	return c->backing == MF_NATIVE;
}

const char *mf_strategy_label(const struct mf_config *c)
{
	if (mf_is_native(c))
		return "native";
	return mf_or_q(vs_fault_strategy_name(c->strategy));
}

bool mf_same_lock(const struct mf_config *a, const struct mf_config *b)
{
	if (!a->lock || !b->lock)
		return a->lock == b->lock;
	return strcmp(a->lock, b->lock) == 0;
}

bool mf_same_backing(const struct mf_config *a, const struct mf_config *b)
{
	if (a->backing != b->backing)
		return false;
	return a->backing != MF_UFFD || a->uffd_mode == b->uffd_mode;
}

bool mf_same_writer(const struct mf_config *a, const struct mf_config *b)
{
	if (a->writer != b->writer)
		return false;
	return a->writer == MF_WRITER_NONE || a->writer_rate == b->writer_rate;
}

void mf_workload_config(const struct mf_config *c,
			struct vs_workload_config *wc)
{
	static const int backing[MF_NR_BACKINGS] = {
		[MF_SIM] = VS_WORKLOAD_MODEL,
		[MF_UFFD] = VS_WORKLOAD_UFFD,
		[MF_NATIVE] = VS_WORKLOAD_HOST,
	};

	memset(wc, 0, sizeof(*wc));
	wc->ops = vs_workload_find(c->workload ? c->workload : "multi-fault");
	wc->nr_tasks = c->threads;
	wc->mode = c->mode;
	wc->backing = backing[c->backing];
	wc->bytes = c->bytes;
	wc->duration_ns = (uint64_t)c->duration_ms * 1000000ULL;
	wc->strategy = c->strategy;
	wc->uffd_mode = c->uffd_mode;
	wc->mm.lock_kind = c->lock;
	wc->mm.kernel = c->kernel;
}

bool mf_default_workload(const struct mf_config *c)
{
	return (!c->workload || !strcmp(c->workload, "multi-fault")) &&
	       c->mode == VS_WORKLOAD_THREADS && !c->bytes;
}
