/* SPDX-License-Identifier: MIT */
/*
 * fault/workload_builtin.c - the built-in workloads of vmsim/workload.h,
 * each written against that header alone, as a workload out of tree is
 * (docs/workloads.md describes them and cites their sources):
 *
 *   multi-fault  Kamezawa's: task i writes the first @bytes of the i-th
 *                slot (4 x @bytes) of one mapping; task 0 zaps them all
 *   pft          Lameter's: task i writes the i-th chunk of one mapping;
 *                task 0 unmaps it and maps it again
 *   page_fault1  will-it-scale's: each task maps @bytes of anonymous
 *                memory, writes every page, unmaps it
 *   page_fault2  the same on a private mapping of one shared file
 */
#include <errno.h>
#include <string.h>

#include <vmsim/workload.h>

#define MB (1UL << 20)

/* ---- multi-fault ----------------------------------------------------------- */

#define MF_SLOT_SLICES 4	/* MMAP_LENGTH / FAULT_LENGTH: 8 MiB / 2 MiB */

static unsigned long mf_slot(const struct vs_workload *w, unsigned int i)
{
	return (unsigned long)w->priv + i * MF_SLOT_SLICES * w->cfg.bytes;
}

static size_t mf_footprint(const struct vs_workload *w, size_t *pages)
{
	*pages = w->cfg.nr_tasks * w->cfg.bytes / VS_PAGE_SIZE;
	return w->cfg.nr_tasks * MF_SLOT_SLICES * w->cfg.bytes;
}

static int mf_setup(struct vs_workload *w)
{
	long a = vs_workload_mmap(w, w->mm, mf_footprint(w, &(size_t){ 0 }),
				  false);

	w->priv = (void *)a;
	return a < 0 ? (int)a : 0;
}

/* The model's mapping goes with the mm; the host's would stay. */
static void mf_teardown(struct vs_workload *w)
{
	if (w->priv)
		(void)vs_workload_munmap(w, w->mm, (unsigned long)w->priv,
					 mf_footprint(w, &(size_t){ 0 }));
}

static int mf_pass(struct vs_workload_task *t)
{
	return vs_workload_touch_range(t, mf_slot(t->w, t->id),
				       t->w->cfg.bytes);
}

/* Task 0 zaps every task's slice, in its own mm. */
static int mf_serial(struct vs_workload *w)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i < w->cfg.nr_tasks && !err; i++)
		err = vs_workload_zap(w, w->task[i].mm, mf_slot(w, i),
				      w->cfg.bytes);
	return err;
}

static const struct vs_workload_ops multi_fault = {
	.name = "multi-fault",
	.about = "Kamezawa: write the slice of your slot; task 0 zaps all "
		 "(MADV_DONTNEED)",
	.bytes = 2 * MB,
	.serial_name = "MADV_DONTNEED zap",
	.footprint = mf_footprint,
	.setup = mf_setup,
	.pass = mf_pass,
	.serial = mf_serial,
	.teardown = mf_teardown,
};

/* ---- pft ------------------------------------------------------------------- */

/* Each task's priv: the start of the mapping in its mm. */
static size_t pft_len(const struct vs_workload *w)
{
	return w->cfg.nr_tasks * w->cfg.bytes;
}

static int pft_map(struct vs_workload *w, struct vs_mm *mm,
		   unsigned long *addr)
{
	long a = vs_workload_mmap(w, mm, pft_len(w), false);

	*addr = a < 0 ? 0 : (unsigned long)a;
	return a < 0 ? (int)a : 0;
}

static int pft_setup(struct vs_workload *w)
{
	unsigned long a;
	unsigned int i;
	int err = pft_map(w, w->mm, &a);

	for (i = 0; i < w->cfg.nr_tasks; i++)
		w->task[i].priv = (void *)a;
	return err;
}

static int pft_pass(struct vs_workload_task *t)
{
	return vs_workload_touch_range(t, (unsigned long)t->priv +
				       t->id * t->w->cfg.bytes,
				       t->w->cfg.bytes);
}

/* Unmap and map again: once in threads mode, in every mm in processes. */
static int pft_serial(struct vs_workload *w)
{
	struct vs_workload_task *t;
	unsigned long a = 0;
	unsigned int i;
	int err = 0;

	for (i = 0; i < w->cfg.nr_tasks && !err; i++) {
		t = &w->task[i];
		if (i && t->mm == w->task[0].mm) {
			t->priv = (void *)a;
			continue;
		}
		err = vs_workload_munmap(w, t->mm, (unsigned long)t->priv,
					 pft_len(w));
		if (!err)
			err = pft_map(w, t->mm, &a);
		t->priv = (void *)a;
	}
	return err;
}

/* Task 0's mapping: in threads mode every task's. */
static void pft_teardown(struct vs_workload *w)
{
	if (w->task[0].priv)
		(void)vs_workload_munmap(w, w->task[0].mm,
					 (unsigned long)w->task[0].priv,
					 pft_len(w));
}

static const struct vs_workload_ops pft = {
	.name = "pft",
	.about = "Lameter: write your chunk of one mapping; task 0 unmaps "
		 "it and maps it again",
	.bytes = 2 * MB,
	.serial_name = "munmap, mmap",
	.setup = pft_setup,
	.pass = pft_pass,
	.serial = pft_serial,
	.teardown = pft_teardown,
};

/* ---- page_fault1, page_fault2 -------------------------------------------------- */

/* Map @bytes (of the file with @file), write every page, unmap. */
static int map_write_unmap(struct vs_workload_task *t, bool file)
{
	size_t len = t->w->cfg.bytes;
	long a = vs_workload_mmap(t->w, t->mm, len, file);
	int err, e;

	if (a < 0)
		return (int)a;
	err = vs_workload_touch_range(t, (unsigned long)a, len);
	e = vs_workload_munmap(t->w, t->mm, (unsigned long)a, len);
	return err ? err : e;
}

static int pf1_pass(struct vs_workload_task *t)
{
	return map_write_unmap(t, false);
}

static const struct vs_workload_ops page_fault1 = {
	.name = "page_fault1",
	.about = "will-it-scale: mmap anonymous memory, write every page, "
		 "munmap",
	.bytes = 128 * MB,
	.pass = pf1_pass,
};

/* The file's page cache, and each task's private copies. */
static size_t pf2_footprint(const struct vs_workload *w, size_t *pages)
{
	*pages = (w->cfg.nr_tasks + 1) * w->cfg.bytes / VS_PAGE_SIZE;
	return w->cfg.nr_tasks * w->cfg.bytes;
}

static int pf2_setup(struct vs_workload *w)
{
	return vs_workload_file_create(w, w->cfg.bytes);
}

static int pf2_pass(struct vs_workload_task *t)
{
	return map_write_unmap(t, true);
}

static const struct vs_workload_ops page_fault2 = {
	.name = "page_fault2",
	.about = "will-it-scale: mmap a file private, write every page "
		 "(copy on write), munmap",
	.bytes = 128 * MB,
	.footprint = pf2_footprint,
	.setup = pf2_setup,
	.pass = pf2_pass,
};

/* ---- the list ------------------------------------------------------------------ */

static const struct vs_workload_ops *const builtin[] = {
	&multi_fault, &pft, &page_fault1, &page_fault2,
};

#define NR_BUILTIN (int)(sizeof(builtin) / sizeof(builtin[0]))

const struct vs_workload_ops *vs_workload_builtin(int i)
{
	return i >= 0 && i < NR_BUILTIN ? builtin[i] : NULL;
}

const struct vs_workload_ops *vs_workload_find(const char *name)
{
	int i;

	for (i = 0; name && i < NR_BUILTIN; i++)
		if (!strcmp(name, builtin[i]->name))
			return builtin[i];
	return NULL;
}
