/* SPDX-License-Identifier: MIT */
/*
 * The VM explored (vCPU build only): faults against the writer's
 * operations, interleaved by PCT instead of by the hardware.
 *
 *   - race/STRATEGY: a small scenario over one mm: two faulters write
 *     the pages of a four-page mapping while a writer mprotects half of
 *     it, unmaps a page and maps it again; at the end every present PTE
 *     lies in a VMA and is writable only in a VM_WRITE one, and the mm
 *     is destroyed with every page back (vs_mm_destroy() is 0).  A few
 *     thousand events a schedule.  At 6.18, but for the relaxed model
 *     and race-spf-6_4 and race-pervma-6_4, at 6.4;
 *   - reuse-mm-STRATEGY, reuse-range-STRATEGY (pervma, spf): 6.18's
 *     typesafe VMA freed and reused, by another mm or elsewhere in one
 *     mm, under a per-VMA or speculative fault's stale pointer; speculate: a lockless walk validated by
 *     mm_lock_seq, and speculate-relaxed: words written under the
 *     write lock, read so under the relaxed model; anon-pervma:
 *     vmf_anon_prepare() beside a merge;
 *   - stress-STRATEGY: vs_stress_run() in explore mode
 *     (vmsim/check/stress.h): the stress run's writer, prober and
 *     faulters with all their checks, short runs; stress-fail-STRATEGY
 *     the same with allocation failures injected;
 *   - dirty-STRATEGY: a read fault on an aged page (ACCESSED clear)
 *     beside a store by the simulated CPU, which sets ACCESSED and DIRTY
 *     with no lock: the PTE must end dirty, whatever runs between the
 *     fault's check under the PTL and its update;
 *   - unmap-STRATEGY: race's faulters while the writer unmaps two
 *     pages and maps nothing back: a fault that found a VMA before a
 *     (6.18: downgraded) munmap must not leave a PTE behind its zap;
 *   - whole-STRATEGY: the writer changes a whole VMA (mprotect with no
 *     split, mremap and munmap of all of it, a typesafe VMA reused
 *     elsewhere) and maps nothing back; the PTEs are checked after each
 *     operation.  move-STRATEGY: one faulter's stores beside the mremap
 *     of their whole VMA (at 6.18 a secondary MMU sleeps once the PTEs
 *     moved): the last that succeeded must have moved.  At 6.18, and
 *     spf and pervma at 6.4 too (-6_4);
 *   - reclaim-STRATEGY: faulters on a PMD-sized mapping while another
 *     thread MADV_DONTNEEDs all of it, which at 6.18 frees the emptied
 *     PTE page (PT_RECLAIM) under the read locks: RSS and the mm's
 *     teardown stay right, and no walker touches a freed table;
 *   - dontneed-pervma: MADV_DONTNEED of one page beside its munmap, with
 *     an mmu notifier that checks each CLEAR range still lies in a VMA
 *     (at 6.18 the zap holds that VMA's lock, not the mmap_lock);
 *   - cow-locked: a write fault on a read-only anonymous page that a
 *     pin holds: from 5.9 (mech.cow_refcount) it must be copied;
 *   - detach-pervma: reuse-mm-pervma's writer beside a faulter whose
 *     vma_start_read() yields after its early check and its reference
 *     (vs__vma_read_yields()): a reader that got in past the munmap's
 *     mark must be waited for before the VMA is freed and reused;
 *   - tree-publish: the VMA index alone, two readers looking up under
 *     RCU while its writer erases and inserts, every RCU free handed
 *     over at once: a replaced node is freed only after a grace period
 *     that waited for every reader that could reach it;
 *   - api: the determinism contract, and bad arguments.
 *
 * Each exploration is PCT at its default depth (whole at 5, move at
 * 6), 1,000 schedules, for seeds 1 to 3 (the writer seed and PCT's),
 * the schedules at VS_TEST_SCALE; each prints one line.  The planted
 * bugs of the fault path (sync/broken.def) each make a case fail: it is
 * their suite of record (teeth-NAME).  A failure says after how many
 * schedules each seed failed, and gives the first one's report with the
 * line that replays it.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/check/explore.h>
#include <vmsim/check/stress.h>
#include <vmsim/fail.h>
#include <vmsim/mm.h>
#include <vmsim/pgtable.h>
#include <vmsim/rcu.h>
#include <vmsim/slab.h>
#include <vmsim/vcpu.h>
#include <vmsim/vma_tree.h>

#include "explore_tally.h"
#include "hooks.h"
#include "test.h"
#include "vm/fail.h"	/* vs__fail_nofail(): white-box */

Suite *explore_vm_suite(void);

#define PAGES 4
#define START 0x40000000UL
#define AREA (START + 16 * VS_PAGE_SIZE)
#define LAST (AREA + (PAGES - 1) * VS_PAGE_SIZE)	/* race_setup writes it */
#define RW (VS_PROT_READ | VS_PROT_WRITE)

/* ---- race: a small scenario over one mm ---------------------------------- */

/* What a race case explores: a strategy at a kernel version. */
struct race_arg {
	int strategy;
	const char *kernel;	/* "6.18" but where a case says */
	int free_at_once;	/* vs_rcu_set_free_at_once() */
};

struct race {
	int strategy;
	struct vs_mm *mm;
	struct vs_mm *mm2;	/* reuse: the other mm, or NULL */
	int same_mm;		/* reuse: the VMA comes back in @mm */
	uint64_t written;	/* move: the last value stored, or 0 */
	int move_sleeps;	/* move: its notifier is registered */
	struct race *next;	/* on kept_races */
};

/* Failed schedules' scenarios: their threads were abandoned in them. */
static struct race *kept_races;

/* A scenario's mm: one PMD, at @kernel. */
static int race_mm(struct vs_mm **mmp, const char *kernel)
{
	struct vs_mm_options mo = { .lock_kind = "rwsem", .pool_pages = 64,
				    .start = START,
				    .end = START + VS_PMD_SIZE,
				    .kernel = kernel };

	return vs_mm_create(mmp, &mo);
}

static int race_setup(void **state)
{
	const struct race_arg *arg = *state;
	struct race *r = calloc(1, sizeof(*r));
	long a;
	int err;

	if (!r)
		return -ENOMEM;
	*state = r;
	r->strategy = arg->strategy;
	(void)vs_rcu_set_free_at_once(arg->free_at_once);
	err = race_mm(&r->mm, arg->kernel);
	if (err) {
		r->mm = NULL;
		return err;
	}
	err = vs_mm_set_fault_strategy(r->mm, r->strategy);
	a = err ? err : vs_mmap(r->mm, AREA, PAGES * VS_PAGE_SIZE, RW,
				VS_MAP_PRIVATE | VS_MAP_ANONYMOUS |
				VS_MAP_FIXED, NULL, 0);
	/* The last page written: the PTE table and the anon_vma are there,
	 * so that a speculative fault need not fall back for them. */
	if (a >= 0 && vs_handle_mm_fault(r->mm, LAST, VS_FAULT_FLAG_WRITE))
		a = -EIO;
	if (a < 0) {	/* nothing else touched it */
		(void)vs_mm_destroy(r->mm);
		r->mm = NULL;
	}
	return a < 0 ? (int)a : 0;
}

/* The pages each faulter faults, in order, a write then a read and so
 * on: both meet on each page, and often on page 2, which the writer
 * unmaps and maps again and again. */
static const int race_pages[2][8] = { { 2, 0, 2, 1, 2, 2, 0, 2 },
				      { 1, 2, 0, 2, 2, 1, 2, 2 } };

/* The faulters fault; the writer protects, unmaps and maps.  Results
 * are not judged here: a fault may rightly fail while its page is
 * unmapped or read-only. */
static void race_thread(void *state, unsigned int i)
{
	struct race *r = state;
	unsigned long p2 = AREA + 2 * VS_PAGE_SIZE;
	unsigned int k;

	if (i < 2) {
		for (k = 0; k < VS_ARRAY_SIZE(race_pages[i]); k++)
			(void)vs_handle_mm_fault(r->mm, AREA +
						 (unsigned long)race_pages[i][k] *
						 VS_PAGE_SIZE,
						 k & 1 ? 0 : VS_FAULT_FLAG_WRITE);
		return;
	}
	(void)vs_mprotect(r->mm, AREA, 2 * VS_PAGE_SIZE, VS_PROT_READ);
	for (k = 0; k < 3; k++) {
		(void)vs_munmap(r->mm, p2, VS_PAGE_SIZE);
		(void)vs_mmap(r->mm, p2, VS_PAGE_SIZE, RW, VS_MAP_PRIVATE |
			      VS_MAP_ANONYMOUS | VS_MAP_FIXED, NULL, 0);
	}
}

/*
 * Every present PTE of @mm's first @pages pages at AREA in a VMA,
 * writable only with VM_WRITE, user-accessible only where the VMA
 * allows some access (not PROT_NONE), and an anonymous page's anon_vma
 * its VMA's.  This holds whenever the mmap_lock is free for reading,
 * faults in flight or not: a fault installs under the PTL only what its
 * VMA allowed then, and a writer that changes the VMA first waits for
 * (or invalidates) the faults that read it.
 * Context: no lock of @mm held.
 */
static void ptes_check(struct vs_mm *mm, int pages)
{
	struct vs_anon_vma *av;
	struct vs_vma *vma;
	struct vs_page *page;
	vs_atomic64_t *e;
	unsigned long addr, fl;
	uint64_t pte;
	int k;

	vs_mmap_read_lock(mm);
	for (k = 0; k < pages; k++) {
		addr = AREA + (unsigned long)k * VS_PAGE_SIZE;
		e = vs_pte_offset(&mm->pgtable, addr);
		pte = e ? (uint64_t)vs_read_once(e) : 0;
		if (!vs_pte_present(pte))
			continue;
		vma = vs_find_vma(mm, addr);
		VS_EXPLORE_ASSERT(vma && vs_read_once(&vma->vm_start) <= addr);
		fl = vs_read_once(&vma->vm_flags);
		VS_EXPLORE_ASSERT(!vs_pte_write(pte) || (fl & VS_VM_WRITE));
		VS_EXPLORE_ASSERT(!(pte & VS_PTE_USER) ||
				  (fl & (VS_VM_READ | VS_VM_WRITE |
					 VS_VM_EXEC)));
		page = vs_pfn_to_page(mm->pool, vs_pte_pfn(pte));
		av = vs_read_once(&vma->anon_vma);
		VS_EXPLORE_ASSERT(!page ||
				  !vs_page_test_flags(page, VS_PG_ANON) ||
				  page->mapping == av);
	}
	vs_mmap_read_unlock(mm);
}

/* ptes_check(), then the mm goes, every page back.  Context: @mm's
 * threads are done. */
static void mm_check(struct vs_mm *mm, int pages)
{
	ptes_check(mm, pages);
	VS_EXPLORE_ASSERT(vs_mm_destroy(mm) == 0);
}

static void race_check(void *state)
{
	struct race *r = state;

	mm_check(r->mm, PAGES);
	r->mm = NULL;
}

/* A failed schedule's mms are left: its threads were abandoned in them.
 * Context: the host thread (kept_races is its alone). */
static void race_fini(void *state)
{
	struct race *r = state;

	(void)vs_rcu_set_free_at_once(0);
	if (!r->mm && !r->mm2) {
		free(r);
		return;
	}
	r->next = kept_races;
	kept_races = r;
}

/* The memory models explored, by name: "" for sequential consistency. */
static const char *const models[] = { "", "-tso", "-relaxed" };

/*
 * _i: the strategy, plus VS_FAULT_NR_STRATEGIES times the model; at
 * 6.18 (vm_refcnt, the typesafe VMA cache), or, _i past the models,
 * pervma and spf at 6.4 (the rwsem per-VMA lock, VMAs freed after a
 * grace period), so that both kinds of per-VMA lock stay explored.
 * The relaxed model runs at 6.4 too: its check of unpublished objects
 * (a seam access to an allocation that does not happen before it)
 * needs VMAs that no reader may meet before their publication, and
 * 6.18's typesafe ones are met so by design, which would hide a
 * publication bug (vma-tree-relaxed-root).
 */
START_TEST(explore_race)
{
	static struct race_arg arg;
	static char name[32];
	static struct vs_explore_scenario race = {
		.name = name, .threads = 3, .setup = race_setup,
		.thread = race_thread, .check = race_check,
		.fini = race_fini, .arg = &arg,
	};
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };
	int older = _i >= 3 * VS_FAULT_NR_STRATEGIES;

	arg.strategy = _i % VS_FAULT_NR_STRATEGIES;
	arg.kernel = older || _i >= 2 * VS_FAULT_NR_STRATEGIES ? "6.4"
							       : "6.18";
	/* 6.4 frees VMAs and index nodes through RCU: each free handed
	 * over at once, so that a free queued before its object left the
	 * index meets a grace period begun inside the write section. */
	arg.free_at_once = older;
	if (older) {
		snprintf(name, sizeof(name), "race-%s-6_4",
			 vs_fault_strategy_name(arg.strategy));
		vs_tally_explore(&race, &o);
		return;
	}
	o.memory = (unsigned int)(_i / VS_FAULT_NR_STRATEGIES);
	/* Under a weak model, 300 schedules a seed and no shrinking (its
	 * many memory choices make it slow and seldom shorter): the
	 * planted bugs of the fault path fail these cases too. */
	if (o.memory) {
		o.max_schedules = 300;
		o.flags |= VS_EXPLORE_NO_SHRINK;
	}
	/* Its own name: a replay line names the strategy too. */
	snprintf(name, sizeof(name), "race-%s%s",
		 vs_fault_strategy_name(arg.strategy), models[o.memory]);
	vs_tally_explore(&race, &o);
}
END_TEST

/* ---- unmap: faults beside a munmap that maps nothing back ------------- */

/* The writer unmaps pages 2 and 1 and maps nothing back: a PTE left
 * there (a fault that installed behind the unmap's zap) is outside
 * every VMA, which race_check() finds. */
static void unmap_thread(void *state, unsigned int i)
{
	struct race *r = state;

	if (i < 2) {
		race_thread(state, i);
		return;
	}
	(void)vs_munmap(r->mm, AREA + 2 * VS_PAGE_SIZE, VS_PAGE_SIZE);
	(void)vs_munmap(r->mm, AREA + VS_PAGE_SIZE, VS_PAGE_SIZE);
}

/*
 * Explore @sc, a scenario over struct race, for @strategy at 6.18,
 * named "@prefix-STRATEGY" (its replay line names it so).
 */
static void explore_strategy(struct vs_explore_scenario *sc,
			     const char *prefix, int strategy)
{
	static struct race_arg arg = { .kernel = "6.18" };
	static char name[40];
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };

	arg.strategy = strategy;
	snprintf(name, sizeof(name), "%s-%s", prefix,
		 vs_fault_strategy_name(strategy));
	sc->name = name;
	sc->arg = &arg;
	vs_tally_explore(sc, &o);
}

/* _i: the strategy. */
START_TEST(explore_unmap)
{
	static struct vs_explore_scenario unmap = {
		.threads = 3, .setup = race_setup, .thread = unmap_thread,
		.check = race_check, .fini = race_fini,
	};

	explore_strategy(&unmap, "unmap", _i);
}
END_TEST

/* ---- whole: the writer changes whole VMAs, and maps nothing back ------- */

#define PS VS_PAGE_SIZE
#define WHOLE_PAGES 8	/* what whole_check() checks: B's old and new places */

/* race_setup's, pages 1 and 3 read-only: page 2 is a VMA of its own, B,
 * that merges with neither neighbour whatever the writer makes it. */
static int whole_setup(void **state)
{
	struct race *r;
	int err = race_setup(state);

	if (err)
		return err;
	r = *state;
	err = vs_mprotect(r->mm, AREA + PS, PS, VS_PROT_READ);
	return err ? err : vs_mprotect(r->mm, LAST, PS, VS_PROT_READ);
}

/* Each faulter's pages, as race_pages: B's (2) and where B goes (6). */
static const int whole_pages[2][8] = { { 2, 0, 2, 6, 2, 6, 0, 2 },
				       { 6, 2, 1, 2, 6, 2, 2, 6 } };

/*
 * The writer changes B whole, as no split ever does: mprotect to
 * PROT_NONE (no split: the VMA itself is marked and changed), mremap to
 * page 6 (the move of a whole VMA: B detached whole; a PTE installed
 * behind the mprotect moves with the others, to be seen there), back
 * to read-write, mremap back to page 2, munmap there, and a new mapping
 * at page 5, which at 6.18 reuses the VMA just freed (typesafe,
 * vm/vma.c).  Pages 2 and 6 end unmapped: a PTE a stale fault installs
 * there lies outside every VMA.  The PTEs are checked after each
 * operation, before the next can hide a stale one (PROT_NONE made
 * read-write again, a page moved over or unmapped).  A speculative
 * fault that keeps its snapshot across the PROT_NONE mprotect meets
 * four orderings: its flags read before the change, its install after
 * the mprotect's PTE pass and before the mremap's section, and the
 * check after its install; PCT at depth 5 (four change points) finds
 * it within the budget, where at 3 one seed of three passed its 1,000.
 */
static void whole_thread(void *state, unsigned int i)
{
	struct race *r = state;
	unsigned long b = AREA + 2 * PS, b6 = AREA + 6 * PS;
	unsigned int k;

	if (i < 2) {
		for (k = 0; k < VS_ARRAY_SIZE(whole_pages[i]); k++)
			(void)vs_handle_mm_fault(r->mm, AREA + PS *
						 (unsigned long)whole_pages[i][k],
						 k & 1 ? 0 : VS_FAULT_FLAG_WRITE);
		return;
	}
	(void)vs_mprotect(r->mm, b, PS, VS_PROT_NONE);
	ptes_check(r->mm, WHOLE_PAGES);
	(void)vs_mremap(r->mm, b, PS, PS, VS_MREMAP_MAYMOVE | VS_MREMAP_FIXED,
			b6);
	ptes_check(r->mm, WHOLE_PAGES);
	(void)vs_mprotect(r->mm, b6, PS, RW);
	ptes_check(r->mm, WHOLE_PAGES);
	(void)vs_mremap(r->mm, b6, PS, PS, VS_MREMAP_MAYMOVE | VS_MREMAP_FIXED,
			b);
	ptes_check(r->mm, WHOLE_PAGES);
	(void)vs_munmap(r->mm, b, PS);
	ptes_check(r->mm, WHOLE_PAGES);
	(void)vs_mmap(r->mm, AREA + 5 * PS, PS, RW, VS_MAP_PRIVATE |
		      VS_MAP_ANONYMOUS | VS_MAP_FIXED, NULL, 0);
}

static void whole_check(void *state)
{
	struct race *r = state;

	mm_check(r->mm, WHOLE_PAGES);
	r->mm = NULL;
}

/*
 * move: one faulter stores 1, 2 and 3 to B (vs_write(): faulting as
 * needed, the store made under the PTL); the writer moves B whole to
 * page 6, and maps nothing back at page 2.  The unmap of a move zaps B
 * before it leaves the index, and waits for B's readers only after
 * (6.18's vma_mark_detached()): a fault that got B's lock past the
 * mark, or locked B once detached (6.4), installs behind the zap, at
 * page 2; one that installs between the move of the PTEs and the zap
 * (the old VMA not marked) takes a store the move left behind.  Either
 * way the last store that succeeded is not at page 6 (move_check()).
 * A fault that slips in past the mark meets three orderings (its early
 * check before the mark, its reference after, its install after the
 * move of the PTEs), and the second and third need the writer stopped
 * between the mark and the zap: at 6.18 a secondary MMU sleeps there
 * (move_wait()), so one preemption of the fault, between its check
 * and its reference, is enough.  Without it the failures needed three,
 * and one seed of three passed its 1,000 schedules at PCT depth 6:
 * a first run that ran the faulter first gave PCT a range of steps
 * too short to reach the writer's window.  One faulter, PCT at depth
 * 6 (6.4's bugs, see move_setup()).
 */
static void move_thread(void *state, unsigned int i)
{
	struct race *r = state;
	unsigned long b = AREA + 2 * PS;
	uint64_t v;

	for (v = 1; i == 0 && v <= 3; v++)
		if (vs_write(r->mm, b, &v, sizeof(v)) == 0)
			r->written = v;
	if (i == 0)
		return;
	(void)vs_mremap(r->mm, b, PS, PS, VS_MREMAP_MAYMOVE | VS_MREMAP_FIXED,
			AREA + 6 * PS);
	ptes_check(r->mm, WHOLE_PAGES);
}

/* whole_setup's, and with 6.18's vm_refcnt per-VMA lock a secondary
 * MMU that waits once the PTEs moved (vs_explore_move_stall): move's
 * writer sleeps between the move of B's PTEs and their zap, and a
 * fault that got B's lock past the mark runs on.
 * 6.4's bugs here need a fault that locks B once it is detached, after
 * the zap: there a sleep after the move lets the fault find B marked
 * and fall back first (move-pervma-6_4 and move-spf-6_4 then passed
 * their 1,000 schedules with pervma-skip-detached-check and
 * spf-skip-detached-check). */
static int move_setup(void **state)
{
	struct race *r;
	int err = whole_setup(state);

	if (err)
		return err;
	r = *state;
	if (r->mm->mech.vma_lock != VS_VMA_LOCK_REFCNT)
		return 0;
	err = vs_mmu_notifier_register(r->mm, &vs_explore_move_stall);
	r->move_sleeps = !err;
	return err;
}

/* The last store that succeeded is at page 6, where B went (0: none
 * did, and page 6 reads as zeros); then whole_check()'s. */
static void move_check(void *state)
{
	struct race *r = state;
	uint64_t v = ~(uint64_t)0;

	if (r->move_sleeps)
		VS_EXPLORE_ASSERT(!vs_mmu_notifier_unregister(r->mm,
						&vs_explore_move_stall));
	VS_EXPLORE_ASSERT(vs_read(r->mm, AREA + 6 * PS, &v, sizeof(v)) == 0 &&
			  v == r->written);
	whole_check(state);
}

/* _i: the strategy at 6.18; past VS_FAULT_NR_STRATEGIES, spf and pervma
 * at 6.4 (the rwsem per-VMA lock, VMAs freed after a grace period);
 * past twice that, the same for move.  PCT at depth 5 for whole, 6 for
 * move (see whole_thread() and move_thread()). */
START_TEST(explore_whole)
{
	static struct race_arg arg;
	static char name[40];
	static struct vs_explore_scenario whole = {
		.name = name, .fini = race_fini,
		.arg = &arg,
	};
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };
	int move = _i >= 2 * VS_FAULT_NR_STRATEGIES;
	int older = _i % (2 * VS_FAULT_NR_STRATEGIES) >= VS_FAULT_NR_STRATEGIES;

	static const struct vs_vcpu_pct deeper = { 6 }, whole_depth = { 5 };

	whole.setup = move ? move_setup : whole_setup;
	whole.thread = move ? move_thread : whole_thread;
	whole.check = move ? move_check : whole_check;
	whole.threads = move ? 2 : 3;
	o.sched_arg = move ? &deeper : &whole_depth;
	arg.strategy = _i % VS_FAULT_NR_STRATEGIES;
	arg.kernel = older ? "6.4" : "6.18";
	snprintf(name, sizeof(name), "%s-%s%s", move ? "move" : "whole",
		 vs_fault_strategy_name(arg.strategy), older ? "-6_4" : "");
	vs_tally_explore(&whole, &o);
}
END_TEST

/* ---- reclaim: faults beside MADV_DONTNEED of a whole PTE page ---------- */

#define PMD_PAGES (VS_PMD_SIZE / VS_PAGE_SIZE)

/* One VMA over a whole PMD, its first page written (its PTE page and
 * anon_vma are there). */
static int reclaim_setup(void **state)
{
	const struct race_arg *arg = *state;
	struct vs_mm_options mo = { .lock_kind = "rwsem", .pool_pages = 64,
				    .start = START,
				    .end = START + 2 * VS_PMD_SIZE,
				    .kernel = arg->kernel };
	struct race *r = calloc(1, sizeof(*r));
	long a;
	int err;

	if (!r)
		return -ENOMEM;
	*state = r;
	r->strategy = arg->strategy;
	err = vs_mm_create(&r->mm, &mo);
	if (err) {
		r->mm = NULL;
		return err;
	}
	err = vs_mm_set_fault_strategy(r->mm, r->strategy);
	a = err ? err : vs_mmap(r->mm, START, VS_PMD_SIZE, RW,
				VS_MAP_PRIVATE | VS_MAP_ANONYMOUS |
				VS_MAP_FIXED, NULL, 0);
	if (a >= 0 && vs_handle_mm_fault(r->mm, START, VS_FAULT_FLAG_WRITE))
		a = -EIO;
	if (a < 0) {
		(void)vs_mm_destroy(r->mm);
		r->mm = NULL;
	}
	return a < 0 ? (int)a : 0;
}

/* Two faulters write and read pages 0 to 2 of the PMD; the third thread
 * zaps the whole PMD three times (at 6.18 each may free its table). */
static void reclaim_thread(void *state, unsigned int i)
{
	struct race *r = state;
	unsigned int k;

	if (i < 2) {
		for (k = 0; k < VS_ARRAY_SIZE(race_pages[i]); k++)
			(void)vs_handle_mm_fault(r->mm, START + VS_PAGE_SIZE *
						 (unsigned long)race_pages[i][k],
						 k & 1 ? 0 : VS_FAULT_FLAG_WRITE);
		return;
	}
	for (k = 0; k < 3; k++)
		VS_EXPLORE_ASSERT(vs_madvise(r->mm, START, VS_PMD_SIZE,
					     VS_MADV_DONTNEED) == 0);
}

/* The anonymous RSS is the present PTEs mapping a page (not the zero
 * page); then the mm goes, every page and table back. */
static void reclaim_check(void *state)
{
	struct race *r = state;
	struct vs_page *page;
	vs_atomic64_t *e;
	long anon = 0;
	uint64_t pte;
	int k;

	vs_mmap_read_lock(r->mm);
	for (k = 0; k < 4; k++) {
		e = vs_pte_offset(&r->mm->pgtable,
				  START + (unsigned long)k * VS_PAGE_SIZE);
		pte = e ? (uint64_t)vs_read_once(e) : 0;
		page = vs_pte_present(pte) ?
			vs_pfn_to_page(r->mm->pool, vs_pte_pfn(pte)) : NULL;
		anon += page && !vs_page_test_flags(page, VS_PG_ZERO);
	}
	vs_mmap_read_unlock(r->mm);
	VS_EXPLORE_ASSERT(vs_get_mm_counter(r->mm, VS_MM_ANONPAGES) == anon);
	VS_EXPLORE_ASSERT(vs_mm_destroy(r->mm) == 0);
	r->mm = NULL;
}

/* _i: the strategy. */
START_TEST(explore_reclaim)
{
	static struct vs_explore_scenario reclaim = {
		.threads = 3, .setup = reclaim_setup, .thread = reclaim_thread,
		.check = reclaim_check, .fini = race_fini,
	};

	explore_strategy(&reclaim, "reclaim", _i);
}
END_TEST

/* ---- dontneed: MADV_DONTNEED beside the munmap of its VMA -------------- */

/*
 * Each CLEAR range must lie in one VMA while it is zapped: the zapper
 * holds the mmap_lock or (6.18) that VMA's lock, and the munmap of it
 * waits for either.  Context: a notifier callback (vmsim/mm.h).
 */
static void clear_in_vma(struct vs_mmu_notifier *mn,
			 const struct vs_mmu_notifier_range *rg)
{
	struct vs_vma *vma;

	(void)mn;
	if (rg->event != VS_MMU_NOTIFY_CLEAR)
		return;
	vs_rcu_read_lock();
	vma = vs_vma_lookup(rg->mm, rg->start);
	VS_EXPLORE_ASSERT(vma && !vs_read_once(&vma->vm_detached) &&
			  vs_read_once(&vma->vm_end) >= rg->end);
	vs_rcu_read_unlock();
}

static const struct vs_mmu_notifier_ops clear_ops = {
	.invalidate_range_start = clear_in_vma,
	.invalidate_range_end = clear_in_vma,
};
static struct vs_mmu_notifier clear_notifier = { &clear_ops };

/* race_setup's, pages 1 and 2 their own VMAs, and the notifier. */
static int dontneed_setup(void **state)
{
	struct race *r;
	int err = race_setup(state);

	if (err)
		return err;
	r = *state;
	err = vs_mprotect(r->mm, AREA + VS_PAGE_SIZE, VS_PAGE_SIZE,
			  VS_PROT_READ);
	if (!err)
		err = vs_mmu_notifier_register(r->mm, &clear_notifier);
	return err;
}

/* A faulter; a thread that MADV_DONTNEEDs page 2 three times; the
 * writer unmaps pages 2 and 1. */
static void dontneed_thread(void *state, unsigned int i)
{
	struct race *r = state;
	unsigned int k;

	if (i == 0) {
		race_thread(state, 0);
	} else if (i == 1) {
		for (k = 0; k < 3; k++)
			(void)vs_madvise(r->mm, AREA + 2 * VS_PAGE_SIZE,
					 VS_PAGE_SIZE, VS_MADV_DONTNEED);
	} else {
		unmap_thread(state, 2);
	}
}

static void dontneed_check(void *state)
{
	struct race *r = state;

	VS_EXPLORE_ASSERT(vs_mmu_notifier_unregister(r->mm,
						     &clear_notifier) == 0);
	race_check(state);
}

START_TEST(explore_dontneed)
{
	static struct race_arg arg = { VS_FAULT_PERVMA, "6.18", 0 };
	static struct vs_explore_scenario dontneed = {
		.name = "dontneed-pervma", .threads = 3,
		.setup = dontneed_setup, .thread = dontneed_thread,
		.check = dontneed_check, .fini = race_fini, .arg = &arg,
	};
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };

	vs_tally_explore(&dontneed, &o);
}
END_TEST

/* ---- cow: a write fault on a pinned read-only page ---------------------- */

/* race_setup's, the written last page made read-only again (mprotect
 * read, then read-write: the PTE stays read-only). */
static int cow_setup(void **state)
{
	struct race *r;
	int err = race_setup(state);

	if (err)
		return err;
	r = *state;
	err = vs_mprotect(r->mm, AREA, PAGES * VS_PAGE_SIZE, VS_PROT_READ);
	return err ? err : vs_mprotect(r->mm, AREA, PAGES * VS_PAGE_SIZE, RW);
}

/* The page a read-only PTE at LAST maps, with a reference, or NULL. */
static struct vs_page *cow_pin(struct vs_mm *mm)
{
	struct vs_page *page = NULL;
	vs_atomic64_t *ptep;
	vs_spinlock_t *ptl;
	uint64_t pte;

	vs_mmap_read_lock(mm);
	ptep = vs_pte_offset_map_lock(&mm->pgtable, LAST, &ptl);
	if (ptep) {
		pte = vs_ptep_get(ptep);
		if (vs_pte_present(pte) && !vs_pte_write(pte)) {
			page = vs_pfn_to_page(mm->pool, vs_pte_pfn(pte));
			vs_get_page(page);
		}
		vs_pte_unmap_unlock(ptl);
	}
	vs_mmap_read_unlock(mm);
	return page;
}

/* Thread 0 pins the read-only page and writes it: with a refcount COW
 * the write must get a copy, so the PTE no longer maps the pinned page.
 * Thread 1 writes the page too. */
static void cow_thread(void *state, unsigned int i)
{
	struct race *r = state;
	struct vs_page *pin;
	vs_atomic64_t *ptep;
	uint64_t pte;

	if (i == 1) {
		(void)vs_handle_mm_fault(r->mm, LAST, VS_FAULT_FLAG_WRITE);
		return;
	}
	pin = cow_pin(r->mm);
	(void)vs_handle_mm_fault(r->mm, LAST, VS_FAULT_FLAG_WRITE);
	if (!pin)
		return;
	vs_mmap_read_lock(r->mm);
	ptep = vs_pte_offset(&r->mm->pgtable, LAST);
	pte = ptep ? (uint64_t)vs_read_once(ptep) : 0;
	VS_EXPLORE_ASSERT(!r->mm->mech.cow_refcount || !vs_pte_present(pte) ||
			  vs_pte_pfn(pte) != vs_page_to_pfn(r->mm->pool, pin));
	vs_mmap_read_unlock(r->mm);
	vs_put_page(r->mm->pool, pin);
}

START_TEST(explore_cow)
{
	static struct race_arg arg = { VS_FAULT_LOCKED, "6.18", 0 };
	static struct vs_explore_scenario cow = {
		.name = "cow-locked", .threads = 2, .setup = cow_setup,
		.thread = cow_thread, .check = race_check, .fini = race_fini,
		.arg = &arg,
	};
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };

	vs_tally_explore(&cow, &o);
}
END_TEST

/* ---- reuse: a typesafe VMA freed and reused while a reader holds it ------ */

#define X AREA			/* the page reused */
#define Y (AREA + 8 * VS_PAGE_SIZE)	/* where it comes back in mm */

/* Two mms at 6.18, pervma or (bit 1 of *@state) spf; mm maps X,
 * written (its table there), and a page of its own past it, which
 * keeps that table when X goes (free_pgtables() frees none under a
 * VMA), so that a stale fault at X finds one. */
static int reuse_setup(void **state)
{
	struct race *r = calloc(1, sizeof(*r));
	int how = (int)(uintptr_t)*state;
	long a;

	if (!r)
		return -ENOMEM;
	r->same_mm = how & 1;
	r->strategy = how & 2 ? VS_FAULT_SPF : VS_FAULT_PERVMA;
	*state = r;
	/* On an error race_fini() keeps what was made. */
	if (race_mm(&r->mm, "6.18") || race_mm(&r->mm2, "6.18"))
		return -ENOMEM;
	a = vs_mm_set_fault_strategy(r->mm, r->strategy);
	if (!a)
		a = vs_mmap(r->mm, X + 4 * VS_PAGE_SIZE, VS_PAGE_SIZE, RW,
			    VS_MAP_PRIVATE | VS_MAP_ANONYMOUS | VS_MAP_FIXED,
			    NULL, 0);
	if (a >= 0)
		a = vs_mmap(r->mm, X, VS_PAGE_SIZE, RW, VS_MAP_PRIVATE |
			    VS_MAP_ANONYMOUS | VS_MAP_FIXED, NULL, 0);
	if (a >= 0 && vs_handle_mm_fault(r->mm, X, VS_FAULT_FLAG_WRITE))
		a = -EIO;
	return a < 0 ? (int)a : 0;
}

static long map_one(struct vs_mm *mm, unsigned long addr)
{
	return vs_mmap(mm, addr, VS_PAGE_SIZE, RW, VS_MAP_PRIVATE |
		       VS_MAP_ANONYMOUS | VS_MAP_FIXED, NULL, 0);
}

/*
 * The faulter writes and reads X of mm (a read needs no anon_vma, which
 * the reused VMA lacks, so spf does not fall back for it); the writer
 * unmaps X, and its VMA, freed at once into the writer's magazine, is
 * the next one it allocates: mm2 maps X (the same range in another
 * mm), or mm maps Y (another range of the same mm), where it stays.  A
 * faulter that found the VMA at X before must see, once it holds
 * vm_refcnt or has its snapshot, that it is not the VMA it looked up.
 */
static void reuse_thread(void *state, unsigned int i)
{
	struct race *r = state;
	int k;

	for (k = 0; i == 0 && k < 4; k++)
		(void)vs_handle_mm_fault(r->mm, X, k & 1 ? 0 :
					 VS_FAULT_FLAG_WRITE);
	if (i == 0)
		return;
	(void)vs_munmap(r->mm, X, VS_PAGE_SIZE);
	if (r->same_mm)
		(void)map_one(r->mm, Y);
	else
		(void)map_one(r->mm2, X);
}

/* Nothing mapped in either mm but by its own VMAs. */
static void reuse_check(void *state)
{
	struct race *r = state;

	mm_check(r->mm2, 16);
	r->mm2 = NULL;
	mm_check(r->mm, 16);
	r->mm = NULL;
}

/* _i: bit 0 reused elsewhere in the same mm (reuse-range-*), else by
 * another mm (reuse-mm-*); bit 1 the spf strategy, whose snapshot must
 * see the same (vm_mm inside its sample, the range after), else pervma. */
START_TEST(explore_reuse)
{
	static char name[32];
	static struct vs_explore_scenario reuse = {
		.name = name, .threads = 2, .setup = reuse_setup,
		.thread = reuse_thread, .check = reuse_check,
		.fini = race_fini,
	};
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };

	snprintf(name, sizeof(name), "reuse-%s-%s", _i & 1 ? "range" : "mm",
		 _i & 2 ? "spf" : "pervma");
	reuse.arg = (void *)(uintptr_t)_i;
	vs_tally_explore(&reuse, &o);
}
END_TEST

/* ---- tree-publish: the VMA index read under RCU while it changes ------- */

#define TREE_N 20	/* entries: two levels, so a walk loads a child */
#define TREE_KEEP 16	/* entries 0 to 15 stay; the writer moves the rest */
#define TREE_LOOKUPS 4	/* each reader's */

struct tree {
	struct vs_vma_tree t;
	char entry[TREE_N];	/* what the entries point to: never read */
};

static unsigned long tree_addr(int k)
{
	return START + (unsigned long)k * VS_PAGE_SIZE;
}

static struct vs_vma *tree_vma(struct tree *tr, int k)
{
	return (struct vs_vma *)(void *)&tr->entry[k];
}

/* A tree of TREE_N one-page entries, every RCU free handed over at
 * once (vs_rcu_set_free_at_once()): each free starts a grace period
 * of its own, inside the update that queued it. */
static int tree_setup(void **state)
{
	struct tree *tr = calloc(1, sizeof(*tr));
	int k, err;

	if (!tr)
		return -ENOMEM;
	*state = tr;
	err = vs_vma_tree_init(&tr->t);
	for (k = 0; !err && k < TREE_N; k++)
		err = vs_vma_tree_insert(&tr->t, tree_addr(k),
					 tree_addr(k) + VS_PAGE_SIZE,
					 tree_vma(tr, k));
	(void)vs_rcu_set_free_at_once(1);
	return err;
}

/*
 * Thread 0 erases and inserts again entries 16 to 19 (the tree's own
 * writer: nothing else updates it, so no lock); each update replaces
 * the root.  Threads 1 and 2 look up entries that stay, each in an RCU
 * section of its own.  A reader that loads the root while an update
 * is between the queueing of the old nodes' frees and the publish of
 * its new root (vma-tree-free-before-publish) is not waited for by a
 * grace period begun there: once that ends and the daemon frees the
 * old root, its load of a child is the engine's use after free.
 */
static void tree_thread(void *state, unsigned int i)
{
	struct tree *tr = state;
	int k;

	for (k = TREE_KEEP; i == 0 && k < TREE_N; k++) {
		VS_EXPLORE_ASSERT(vs_vma_tree_erase(&tr->t, tree_addr(k)) == 0);
		VS_EXPLORE_ASSERT(vs_vma_tree_insert(&tr->t, tree_addr(k),
						     tree_addr(k) +
						     VS_PAGE_SIZE,
						     tree_vma(tr, k)) == 0);
	}
	for (k = 0; i > 0 && k < TREE_LOOKUPS; k++) {
		int e = (int)(i * 5 + (unsigned int)k * 3) % TREE_KEEP;

		vs_rcu_read_lock();
		VS_EXPLORE_ASSERT(vs_vma_tree_lookup(&tr->t, tree_addr(e)) ==
				  tree_vma(tr, e));
		vs_rcu_read_unlock();
	}
}

/* The tree whole, then its nodes freed: the current ones at once, the
 * replaced ones by their RCU callbacks.  Context: vCPU 0, the threads
 * done. */
static void tree_check(void *state)
{
	struct tree *tr = state;

	VS_EXPLORE_ASSERT(vs__vma_tree_check(&tr->t) == 0);
	vs_vma_tree_destroy(&tr->t);
	vs_rcu_barrier();
}

/* A failed schedule's nodes may be queued still: its RCU state went
 * with the machine (their batches are dropped), so @state may go. */
static void tree_fini(void *state)
{
	(void)vs_rcu_set_free_at_once(0);
	free(state);
}

START_TEST(explore_tree_publish)
{
	static const struct vs_explore_scenario tree = {
		.name = "tree-publish", .threads = 3, .setup = tree_setup,
		.thread = tree_thread, .check = tree_check,
		.fini = tree_fini,
	};
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };

	vs_tally_explore(&tree, &o);
}
END_TEST


/* ---- detach: a typesafe VMA reused while a late reader holds it --------- */

/*
 * Every VMA of @mm attached with no reader left: vm_refcnt 1, what
 * vs__vma_mark_attached() stored (6.18's per-VMA lock).
 * Context: @mm's threads are done.
 */
static void refcnt_check(struct vs_mm *mm)
{
	struct vs_vma *vma;
	unsigned long addr = 0;

	vs_mmap_read_lock(mm);
	while ((vma = vs_find_vma(mm, addr))) {
		VS_EXPLORE_ASSERT(vs_read_once(&vma->vm_refcnt) == 1);
		addr = vma->vm_end;
	}
	vs_mmap_read_unlock(mm);
}

/* reuse_setup()'s two mms, pervma, with 6.18's vma_start_read()
 * yielding after its early check and after its reference. */
static int detach_setup(void **state)
{
	(void)vs__vma_read_yields(1);
	return reuse_setup(state);
}

/*
 * The faulter reads X of mm four times under its VMA's lock; the writer
 * unmaps X, whose typesafe VMA is freed at once, and maps X in mm2,
 * which reuses it.  A fault that passed its early check of the mark
 * before the munmap marked the VMA takes its reference after (the
 * yield lets the writer in between): it backs off, and the detach must
 * wait for its decrement, or that lands on the VMA mm2 attached, whose
 * vm_refcnt then reads 0 (vs_vma_start_write() would take it for
 * detached and wait for nobody).
 */
static void detach_thread(void *state, unsigned int i)
{
	struct race *r = state;
	int k;

	for (k = 0; i == 0 && k < 4; k++)
		(void)vs_handle_mm_fault(r->mm, X, 0);
	if (i == 0)
		return;
	(void)vs_munmap(r->mm, X, VS_PAGE_SIZE);
	(void)map_one(r->mm2, X);
}

/* Each VMA's vm_refcnt 1, then reuse_check()'s. */
static void detach_check(void *state)
{
	struct race *r = state;

	refcnt_check(r->mm);
	refcnt_check(r->mm2);
	reuse_check(state);
}

static void detach_fini(void *state)
{
	(void)vs__vma_read_yields(0);
	race_fini(state);
}

START_TEST(explore_detach)
{
	static const struct vs_explore_scenario detach = {
		.name = "detach-pervma", .threads = 2, .setup = detach_setup,
		.thread = detach_thread, .check = detach_check,
		.fini = detach_fini, .arg = (void *)(uintptr_t)0,
	};
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };

	vs_tally_explore(&detach, &o);
}
END_TEST

/* ---- speculate: a lockless VMA walk validated by mm_lock_seq ------------- */

/*
 * The reader walks the first three pages' VMAs under RCU between
 * vs_mmap_lock_speculate_try_begin() and _retry(): a walk that is not
 * retried must have found every page mapped, as it is whenever the
 * mmap_lock is not held for write; the writer splits and merges, which
 * leaves a page's range briefly in no VMA while it holds the lock, and
 * unmaps and maps the last page, whose munmap downgrades the lock.
 */
static void speculate_thread(void *state, unsigned int i)
{
	struct race *r = state;
	unsigned long addr;
	struct vs_vma *vma;
	int k, p, covered;
	uint32_t seq;

	for (k = 0; i == 0 && k < 8; k++) {
		if (!vs_mmap_lock_speculate_try_begin(r->mm, &seq))
			continue;
		covered = 1;
		vs_rcu_read_lock();
		for (p = 0; p < PAGES - 1; p++) {
			addr = AREA + (unsigned long)p * VS_PAGE_SIZE;
			vma = vs_find_vma(r->mm, addr);
			covered &= vma && vs_read_once(&vma->vm_start) <= addr;
		}
		vs_rcu_read_unlock();
		VS_EXPLORE_ASSERT(vs_mmap_lock_speculate_retry(r->mm, seq) ||
				  covered);
	}
	for (k = 0; i == 1 && k < 3; k++) {
		(void)vs_mprotect(r->mm, AREA + VS_PAGE_SIZE, VS_PAGE_SIZE,
				  VS_PROT_READ);
		(void)vs_mprotect(r->mm, AREA + VS_PAGE_SIZE, VS_PAGE_SIZE, RW);
		(void)vs_munmap(r->mm, LAST, VS_PAGE_SIZE);
		(void)vs_mmap(r->mm, LAST, VS_PAGE_SIZE, RW, VS_MAP_PRIVATE |
			      VS_MAP_ANONYMOUS | VS_MAP_FIXED, NULL, 0);
	}
}

START_TEST(explore_speculate)
{
	static struct race_arg arg = { VS_FAULT_LOCKED, "6.18", 0 };
	static const struct vs_explore_scenario speculate = {
		.name = "speculate", .threads = 2, .setup = race_setup,
		.thread = speculate_thread, .check = race_check,
		.fini = race_fini, .arg = &arg,
	};
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };

	vs_tally_explore(&speculate, &o);
}
END_TEST

/*
 * speculate-relaxed: the words below stand for what a writer stores
 * under the mmap_lock without marking a VMA (6.18's uprobes speculate
 * on vm_file and vm_pgoff so).  The writer (thread 1) stores word 0,
 * then word 1, under the write lock; the reader reads them the other
 * way round between vs_mmap_lock_speculate_try_begin() and _retry():
 * a read that is not retried saw one write section or none, so the
 * words agree.  Under the relaxed model only mm_lock_seqcount_begin()'s
 * smp_wmb orders the odd count before the words (pairing with the
 * smp_rmb of vs_mmap_lock_speculate_retry()).  At 6.18, which alone
 * has the seqcount.
 */
static vs_atomic_long_t spec_words[2];

static int speculate_words_setup(void **state)
{
	vs_atomic_init(&spec_words[0], 0);
	vs_atomic_init(&spec_words[1], 0);
	return race_setup(state);
}

static void speculate_words_thread(void *state, unsigned int i)
{
	struct race *r = state;
	long a, b;
	uint32_t seq;
	int k;

	for (k = 0; i == 0 && k < 8; k++) {
		if (!vs_mmap_lock_speculate_try_begin(r->mm, &seq))
			continue;
		a = vs_read_once(&spec_words[1]);
		b = vs_read_once(&spec_words[0]);
		VS_EXPLORE_ASSERT(vs_mmap_lock_speculate_retry(r->mm, seq) ||
				  a == b);
	}
	for (k = 1; i == 1 && k <= 3; k++) {
		vs_mmap_write_lock(r->mm);
		vs_write_once(&spec_words[0], k);
		vs_write_once(&spec_words[1], k);
		vs_mmap_write_unlock(r->mm);
	}
}

START_TEST(explore_speculate_relaxed)
{
	static struct race_arg arg = { VS_FAULT_LOCKED, "6.18", 0 };
	static const struct vs_explore_scenario speculate = {
		.name = "speculate-relaxed", .threads = 2,
		.setup = speculate_words_setup,
		.thread = speculate_words_thread, .check = race_check,
		.fini = race_fini, .arg = &arg,
	};
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };

	o.memory = VS_VCPU_MEM_RELAXED;
	vs_tally_explore(&speculate, &o);
}
END_TEST

/* ---- anon: vmf_anon_prepare under the VMA lock --------------------------- */

#define B (AREA + 2 * VS_PAGE_SIZE)	/* the VMA faulted, no anon_vma */

/* 6.18, pervma: b = [B, B + 2 pages) mapped, never written; the table
 * there made by a write two pages above it, in a VMA of its own. */
static int anon_setup(void **state)
{
	static const struct race_arg arg = { VS_FAULT_PERVMA, "6.18", 0 };
	struct race *r;
	long a;
	int err;

	*state = (void *)&arg;
	err = race_setup(state);
	if (err)
		return err;
	r = *state;
	a = vs_munmap(r->mm, AREA, PAGES * VS_PAGE_SIZE);
	if (!a)
		a = vs_mmap(r->mm, B, 2 * VS_PAGE_SIZE, RW, VS_MAP_PRIVATE |
			    VS_MAP_ANONYMOUS | VS_MAP_FIXED, NULL, 0);
	return a < 0 ? (int)a : 0;
}

/*
 * The faulter writes b's pages under b's VMA lock, preparing its
 * anon_vma; the writer maps the two pages below b, a new VMA that
 * merges with b: it reads b's anon_vma before it write-locks b to
 * remove it, so a fault that prepares b's anon_vma meanwhile without
 * the mmap_lock leaves a page whose anon_vma the merged VMA lacks.
 * One preemption finds it: the faulter's, between its VMA lock and the
 * prepare, with the writer's merge next.  The writer merges once: PCT
 * draws its change points among all the steps of a run, and a second
 * round (b unmapped, mapped fresh and merged again) added steps where
 * none could help, since the faulter is done with b's first fault by
 * then (one seed of three passed its 1,000 schedules so).
 */
static void anon_thread(void *state, unsigned int i)
{
	struct race *r = state;
	int k;

	for (k = 0; i == 0 && k < 4; k++)
		(void)vs_handle_mm_fault(r->mm, B + (unsigned long)(k & 1) *
					 VS_PAGE_SIZE, VS_FAULT_FLAG_WRITE);
	if (i == 1)
		(void)vs_mmap(r->mm, AREA, 2 * VS_PAGE_SIZE, RW,
			      VS_MAP_PRIVATE | VS_MAP_ANONYMOUS | VS_MAP_FIXED,
			      NULL, 0);
}

START_TEST(explore_anon)
{
	static const struct vs_explore_scenario anon = {
		.name = "anon-pervma", .threads = 2, .setup = anon_setup,
		.thread = anon_thread, .check = race_check,
		.fini = race_fini,
	};
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };

	vs_tally_explore(&anon, &o);
}
END_TEST

/* ---- dirty: a lockless DIRTY update beside a fault's fixup --------------- */

/* race_setup's, with the written last page aged and cleaned, as
 * reclaim would: a read fault on it must set ACCESSED under the PTL. */
static int dirty_setup(void **state)
{
	struct race *r;
	vs_atomic64_t *ptep;
	vs_spinlock_t *ptl;
	int err = race_setup(state);

	if (err)
		return err;
	r = *state;
	vs_mmap_read_lock(r->mm);
	ptep = vs_pte_offset_map_lock(&r->mm->pgtable, LAST, &ptl);
	if (ptep) {
		vs_set_pte(ptep, vs_pte_mkold(vs_pte_mkclean(
					 vs_ptep_get(ptep))));
		vs_pte_unmap_unlock(ptl);
	}
	vs_mmap_read_unlock(r->mm);
	return ptep ? 0 : -EIO;
}

/* One read fault on the old page, one store to it by the simulated
 * CPU, which sets DIRTY with no lock (vs_ptep_set_flags). */
static void dirty_thread(void *state, unsigned int i)
{
	struct race *r = state;

	if (i == 0)
		(void)vs_handle_mm_fault(r->mm, LAST, 0);
	else
		VS_EXPLORE_ASSERT(vs_access(r->mm, LAST, 1, 1) == 0);
}

/* The store happened, so the PTE must say so: a fixup that wrote back
 * the value it read would have lost DIRTY.  Then race_check's. */
static void dirty_check(void *state)
{
	struct race *r = state;
	vs_atomic64_t *ptep = vs_pte_offset(&r->mm->pgtable, LAST);
	uint64_t pte = ptep ? (uint64_t)vs_read_once(ptep) : 0;

	VS_EXPLORE_ASSERT(vs_pte_present(pte) && vs_pte_young(pte) &&
			  vs_pte_dirty(pte));
	race_check(state);
}

/* _i: the strategy. */
START_TEST(explore_dirty)
{
	static struct vs_explore_scenario dirty = {
		.threads = 2, .setup = dirty_setup, .thread = dirty_thread,
		.check = dirty_check, .fini = race_fini,
	};

	explore_strategy(&dirty, "dirty", _i);
}
END_TEST

/* ---- stress: vs_stress_run() explored ------------------------------------ */

/*
 * _i: the strategy, plus VS_FAULT_NR_STRATEGIES for allocation failures
 * injected (stress.h; objects and pages failing with probability 0.05,
 * the draws seeded with the seed).
 */
START_TEST(explore_stress)
{
	static struct vs_explore_report xr;
	static struct vs_tally t;
	int strategy = _i % VS_FAULT_NR_STRATEGIES;
	int fail = _i >= VS_FAULT_NR_STRATEGIES;
	struct vs_fail_options fo = { .kinds = VS_FAIL_SLAB | VS_FAIL_PAGE,
				      .probability = 0.05 };
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };
	struct vs_stress_config cfg = { .strategy = strategy, .explore = &o,
					.explore_report = &xr,
					.fail = fail ? &fo : NULL };
	unsigned long injected = 0, op_enomem = 0;
	struct vs_stress_report rep;
	char what[32];
	int seed;

	if (vs_test_no_pervma(strategy == VS_FAULT_PERVMA))
		return;
	memset(&t, 0, sizeof(t));
	o.max_schedules = vs_tally_schedules(0);
	for (seed = 1; seed <= VS_TALLY_SEEDS; seed++) {
		cfg.seed = (uint64_t)seed;
		o.seed = (uint64_t)seed;
		fo.seed = (uint64_t)seed;
		ck_assert_int_eq(vs_stress_run(&cfg, &rep), 0);
		printf("stress %s%s seed %d: %lu schedules, %lu faults, %lu "
		       "operations, %lu failures injected (%lu operations and "
		       "%lu accesses failed), %.2f s%s%s\n",
		       fail ? "fail " : "",
		       vs_fault_strategy_name(strategy), seed, rep.schedules,
		       rep.faults, rep.ops, rep.injected, rep.op_enomem,
		       rep.oom, xr.seconds, rep.violations ? ": " : "",
		       rep.first);
		if (rep.violations) {
			printf("stress %s%s seed %d: %u preemptions, shrunk "
			       "to %u\n", fail ? "fail " : "",
			       vs_fault_strategy_name(strategy), seed,
			       xr.found_preemptions, xr.preemptions);
			vs_tally_add(&t, seed, rep.schedules, &xr);
		}
		injected += rep.injected;
		op_enomem += rep.op_enomem;
	}
	snprintf(what, sizeof(what), "%s%s", fail ? "fail " : "",
		 vs_fault_strategy_name(strategy));
	vs_tally_assert(&t, what);
	ck_assert_msg(!fail || (injected && op_enomem), "%s: %lu injected, "
		      "%lu operations failed", what, injected, op_enomem);
}
END_TEST

/* ---- api ------------------------------------------------------------------ */

/*
 * The determinism contract (vmsim/check/explore.h): every schedule
 * starts from empty object caches, so exploring the same run twice in
 * one process, the second time with the caches the first left, takes
 * the same schedules: the same faults and checks, summed over them.
 */
START_TEST(explore_stress_repeats)
{
	struct vs_explore_options o = { .seed = 7, .max_schedules = 100,
					.flags = VS_EXPLORE_QUIET };
	struct vs_stress_config cfg = { .strategy = VS_FAULT_SPF, .seed = 5,
					.explore = &o };
	struct vs_fail_options fo = { .kinds = VS_FAIL_SLAB | VS_FAIL_PAGE,
				      .probability = 0.05, .seed = 1 };
	struct vs_stress_report a, b;

	ck_assert_int_eq(vs_stress_run(&cfg, &a), 0);
	ck_assert_int_eq(vs_stress_run(&cfg, &b), 0);
	ck_assert_uint_eq(a.violations, 0);
	ck_assert_uint_eq(a.schedules, 100);
	ck_assert_uint_eq(b.schedules, 100);
	ck_assert_uint_eq(a.faults, b.faults);
	ck_assert_uint_eq(a.quiet, b.quiet);
	ck_assert_uint_eq(a.data_checks, b.data_checks);
	ck_assert_uint_eq(a.race_checks, b.race_checks);
	ck_assert_uint_eq(a.stats.spf_success, b.stats.spf_success);
	/* With allocation failures: each schedule draws anew. */
	cfg.fail = &fo;
	ck_assert_int_eq(vs_stress_run(&cfg, &a), 0);
	ck_assert_int_eq(vs_stress_run(&cfg, &b), 0);
	ck_assert_msg(a.violations == 0, "%s", a.first);
	ck_assert_uint_gt(a.injected, 0);
	ck_assert_uint_eq(a.injected, b.injected);
	ck_assert_uint_eq(a.op_enomem, b.op_enomem);
	ck_assert_uint_eq(a.oom, b.oom);
	ck_assert_uint_eq(a.faults, b.faults);
}
END_TEST

/* Explore mode's bad arguments: vs_explore()'s, by name, nothing run. */
START_TEST(explore_stress_bad_options)
{
	struct vs_explore_options o = { .flags = 0x80 };
	struct vs_explore_report xr;
	struct vs_stress_config cfg = { .explore = &o, .explore_report = &xr };
	struct vs_fail_options fo = { .kinds = VS_FAIL_SLAB, .nth = 1,
				      .probability = 0.5 };
	struct vs_stress_report rep;

	ck_assert_int_eq(vs_stress_run(&cfg, &rep), -EINVAL);
	ck_assert_uint_eq(rep.faults, 0);
	ck_assert_msg(strstr(xr.text, "flags"), "%s", xr.text);
	cfg.lock_kind = "no-such-kind";
	ck_assert_int_eq(vs_stress_run(&cfg, &rep), -EINVAL);
	ck_assert_msg(strstr(xr.text, "unknown lock kind"), "%s", xr.text);
	cfg.lock_kind = NULL;
	cfg.strategy = 1000;
	ck_assert_int_eq(vs_stress_run(&cfg, &rep), -EINVAL);
	ck_assert_msg(strstr(xr.text, "unknown strategy"), "%s", xr.text);
	cfg.strategy = VS_FAULT_LOCKED;
	cfg.fail = &fo;		/* both nth and a probability */
	ck_assert_int_eq(vs_stress_run(&cfg, &rep), -EINVAL);
	ck_assert_msg(strstr(xr.text, "bad argument: fail"), "%s", xr.text);
}
END_TEST

static struct vs_kmem_cache kept_cache =
	VS_KMEM_CACHE_INIT("explore_vm kept", 64, 8);
static void *kept_obj;

static void keep_thread(void *state, unsigned int i)
{
	(void)state;
	(void)i;
	if (!kept_obj)
		kept_obj = vs_kmem_cache_alloc(&kept_cache);
}

/* A schedule that keeps an object of vm/'s caches breaks the contract
 * (the next would not start as it did): -EBUSY, saying what to do. */
START_TEST(explore_kept_object_refused)
{
	static const struct vs_explore_scenario keep = {
		.name = "keep", .threads = 1, .thread = keep_thread,
	};
	struct vs_explore_options o = { .seed = 1, .flags = VS_EXPLORE_QUIET };
	struct vs_explore_report xr;

	ck_assert_int_eq(vs_explore(&keep, &o, &xr), -EBUSY);
	ck_assert_uint_eq(xr.schedules, 1);
	ck_assert_msg(strstr(xr.text, "left 1 objects of vm/'s caches"),
		      "%s", xr.text);
	ck_assert_ptr_nonnull(kept_obj);
	vs_kmem_cache_free(&kept_cache, kept_obj);
	ck_assert_int_eq(vs_kmem_cache_destroy(&kept_cache), 0);
}
END_TEST

static struct vs_kmem_cache here_cache =
	VS_KMEM_CACHE_INIT("fail_here", 64, 8);
static vs_atomic_long_t here_turns;

/* Every object of here_cache fails, where allowed. */
static int here_setup(void **state)
{
	struct vs_fail_options fo = { .kinds = VS_FAIL_SLAB,
				      .cache = "fail_here", .probability = 1 };

	(void)state;
	return vs_fail_set(&fo);
}

/* Each vCPU allocates four times, every other time in a nofail section,
 * with a place to switch (an atomic add) before each: only its own
 * section may spare it, and it counts only its own failures. */
static void here_thread(void *state, unsigned int i)
{
	unsigned long before = vs_fail_injected_here(), failed = 0;
	int k, nofail;
	void *o;

	(void)state;
	(void)i;
	for (k = 0; k < 4; k++) {
		nofail = k & 1;
		vs__fail_nofail(nofail);
		(void)vs_fetch_add(&here_turns, 1);
		o = vs_kmem_cache_alloc(&here_cache);
		vs__fail_nofail(-nofail);
		VS_EXPLORE_ASSERT(!o == !nofail);
		failed += !o;
		vs_kmem_cache_free(&here_cache, o);
		VS_EXPLORE_ASSERT(vs_fail_injected_here() - before == failed);
	}
}

static void here_fini(void *state)
{
	(void)state;
	(void)vs_fail_set(NULL);
}

/* A schedule that fails inside a nofail section: its vCPU is abandoned
 * there, the section never lowered. */
static void abandon_thread(void *state, unsigned int i)
{
	(void)state;
	(void)i;
	vs__fail_nofail(1);
	VS_EXPLORE_ASSERT(!"abandoned inside a nofail section");
}

/*
 * A nofail section and vs_fail_injected_here() are each vCPU's own, as
 * natively each thread's: another vCPU's section spares nothing of
 * this one's, and its failures are not counted here.  A section a
 * failed schedule abandoned is gone once vs_fail_set() chooses anew.
 */
START_TEST(explore_fail_per_vcpu)
{
	static const struct vs_explore_scenario abandon = {
		.name = "fail-abandon", .threads = 2, .setup = here_setup,
		.thread = abandon_thread, .fini = here_fini,
	};
	static const struct vs_explore_scenario here = {
		.name = "fail-here", .threads = 2, .setup = here_setup,
		.thread = here_thread, .fini = here_fini,
	};
	struct vs_explore_options o = { .seed = 1, .max_schedules = 1,
					.flags = VS_EXPLORE_QUIET |
						 VS_EXPLORE_NO_SHRINK };
	struct vs_explore_report xr;

	ck_assert_int_eq(vs_explore(&abandon, &o, &xr), -ECANCELED);
	o.max_schedules = 200;
	ck_assert_msg(vs_explore(&here, &o, &xr) == 0, "%s", xr.text);
	ck_assert_uint_eq(xr.schedules, 200);
	ck_assert_int_eq(vs_kmem_cache_destroy(&here_cache), 0);
}
END_TEST

Suite *explore_vm_suite(void)
{
	static char names[5][4 * VS_FAULT_NR_STRATEGIES][40];
	Suite *s = suite_create("explore_vm");
	TCase *tc = vs_test_plain_tcase(s, "api");
	int k, m;

	tcase_add_test(tc, explore_stress_repeats);
	tcase_add_test(tc, explore_stress_bad_options);
	tcase_add_test(tc, explore_kept_object_refused);
	tcase_add_test(tc, explore_fail_per_vcpu);
	for (k = 0; k < 2 * VS_FAULT_NR_STRATEGIES; k++) {
		snprintf(names[1][k], sizeof(names[1][k]), "stress-%s%s",
			 k < VS_FAULT_NR_STRATEGIES ? "" : "fail-",
			 vs_fault_strategy_name(k % VS_FAULT_NR_STRATEGIES));
		tcase_add_loop_test(vs_test_plain_tcase(s, names[1][k]),
				    explore_stress, k, k + 1);
	}
	for (k = 0; k < VS_FAULT_NR_STRATEGIES; k++) {
		snprintf(names[2][k], sizeof(names[2][k]), "dirty-%s",
			 vs_fault_strategy_name(k));
		tcase_add_loop_test(vs_test_plain_tcase(s, names[2][k]),
				    explore_dirty, k, k + 1);
	}
	for (k = 0; k < VS_FAULT_NR_STRATEGIES; k++) {
		snprintf(names[2][k + VS_FAULT_NR_STRATEGIES],
			 sizeof(names[2][0]), "unmap-%s",
			 vs_fault_strategy_name(k));
		tcase_add_loop_test(vs_test_plain_tcase(s,
				names[2][k + VS_FAULT_NR_STRATEGIES]),
				    explore_unmap, k, k + 1);
		snprintf(names[2][k + 2 * VS_FAULT_NR_STRATEGIES],
			 sizeof(names[2][0]), "reclaim-%s",
			 vs_fault_strategy_name(k));
		tcase_add_loop_test(vs_test_plain_tcase(s,
				names[2][k + 2 * VS_FAULT_NR_STRATEGIES]),
				    explore_reclaim, k, k + 1);
	}
	for (k = 0; k < 4 * VS_FAULT_NR_STRATEGIES; k++) {
		m = k % (2 * VS_FAULT_NR_STRATEGIES);
		if (m == VS_FAULT_NR_STRATEGIES + VS_FAULT_LOCKED)
			continue;	/* 6.4's locked path is 6.18's */
		snprintf(names[4][k], sizeof(names[4][k]), "%s-%s%s",
			 k < 2 * VS_FAULT_NR_STRATEGIES ? "whole" : "move",
			 vs_fault_strategy_name(k % VS_FAULT_NR_STRATEGIES),
			 m < VS_FAULT_NR_STRATEGIES ? "" : "-6_4");
		tcase_add_loop_test(vs_test_plain_tcase(s, names[4][k]),
				    explore_whole, k, k + 1);
	}
	tcase_add_test(vs_test_plain_tcase(s, "dontneed-pervma"),
		       explore_dontneed);
	tcase_add_test(vs_test_plain_tcase(s, "cow-locked"), explore_cow);
	for (m = 0; m < 3; m++) {
		for (k = 0; k < VS_FAULT_NR_STRATEGIES; k++) {
			int i = k + m * VS_FAULT_NR_STRATEGIES;

			snprintf(names[0][i], sizeof(names[0][i]), "race-%s%s",
				 vs_fault_strategy_name(k), models[m]);
			tcase_add_loop_test(vs_test_plain_tcase(s,
								names[0][i]),
					    explore_race, i, i + 1);
		}
	}
	for (k = VS_FAULT_SPF; k <= VS_FAULT_PERVMA; k++) {
		int i = k + 3 * VS_FAULT_NR_STRATEGIES;

		snprintf(names[3][k], sizeof(names[3][k]), "race-%s-6_4",
			 vs_fault_strategy_name(k));
		tcase_add_loop_test(vs_test_plain_tcase(s, names[3][k]),
				    explore_race, i, i + 1);
	}
	tcase_add_loop_test(vs_test_plain_tcase(s, "reuse-mm-pervma"),
			    explore_reuse, 0, 1);
	tcase_add_loop_test(vs_test_plain_tcase(s, "reuse-range-pervma"),
			    explore_reuse, 1, 2);
	tcase_add_loop_test(vs_test_plain_tcase(s, "reuse-mm-spf"),
			    explore_reuse, 2, 3);
	tcase_add_loop_test(vs_test_plain_tcase(s, "reuse-range-spf"),
			    explore_reuse, 3, 4);
	tcase_add_test(vs_test_plain_tcase(s, "speculate"), explore_speculate);
	tcase_add_test(vs_test_plain_tcase(s, "speculate-relaxed"),
		       explore_speculate_relaxed);
	tcase_add_test(vs_test_plain_tcase(s, "anon-pervma"), explore_anon);
	tcase_add_test(vs_test_plain_tcase(s, "detach-pervma"),
		       explore_detach);
	tcase_add_test(vs_test_plain_tcase(s, "tree-publish"),
		       explore_tree_publish);
	return s;
}
