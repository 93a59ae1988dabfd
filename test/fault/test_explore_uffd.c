/* SPDX-License-Identifier: MIT */
/*
 * The userfaultfd backing explored (vCPU build, where userfaultfd can
 * be used): a fault resolved as the delivery resolves it, racing the
 * writer's munmap, interleaved by PCT instead of by the hardware.
 *
 *   - install/STRATEGY: one faulter resolves a write fault on page 2
 *     and then on page 1 (vs__uffd_resolve(), what the SIGBUS handler
 *     and the handler threads call), while the writer unmaps page 1,
 *     maps it again, then the same for page 2.  Each unmap is an
 *     invalidation of the mirror (fault/uffd_mirror.c), and a fault
 *     that sampled the invalidation sequence before it must resolve
 *     again.  At the end each page of the real range is resident
 *     (mincore(2), which touches nothing) exactly where the model
 *     has a present PTE; a real page the model no longer maps is what
 *     the invalidation protocol exists to prevent;
 *   - the same under the relaxed memory model, 300 schedules a seed,
 *     unshrunk: the sequence is read with acquire loads and under the
 *     mmu_lock.
 *
 * PCT at its default depth, 1,000 schedules, seeds 1 to 3, each prints
 * one line; the planted bug uffd-install-no-seq must make the suite
 * fail (teeth-vcpu-uffd-install-no-seq).  The real range is PROT_NONE
 * or not yet filled wherever nothing resolved it, and no thread of the
 * scenario touches it: real loads and stores are no events, and a
 * fault taken on a vCPU would resolve on that vCPU inside a signal
 * handler.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "check/explore.h"
#include "explore_tally.h"
#include "fault/uffd_internal.h"
#include "test.h"
#include "vm/mm.h"
#include "vm/pgtable.h"

Suite *explore_uffd_suite(void);

#define PAGES 4
#define RW (VS_PROT_READ | VS_PROT_WRITE)

struct ux {
	int strategy;
	struct vs_uffd *u;
	struct ux *next;	/* on kept */
};

/* Failed schedules' regions: their threads were abandoned in them. */
static struct ux *kept;

static unsigned long page_addr(struct ux *x, int k)
{
	return (unsigned long)vs_uffd_base(x->u) +
	       (unsigned long)k * VS_PAGE_SIZE;
}

/* A region of PAGES pages, all mapped in the model, the last resolved
 * (its anon_vma then exists: a speculative fault need not fall back). */
static int ux_setup(void **state)
{
	const int *strategy = *state;
	struct vs_uffd_options o = {
		.size = PAGES * VS_PAGE_SIZE, .mode = VS_UFFD_SIGBUS,
		.strategy = *strategy,
		.mm = { .lock_kind = "rwsem", .pool_pages = 64 },
	};
	struct ux *x = calloc(1, sizeof(*x));
	long a;
	int err;

	if (!x)
		return -ENOMEM;
	*state = x;
	x->strategy = *strategy;
	err = vs_uffd_create(&x->u, &o);
	if (err) {
		x->u = NULL;
		return err;
	}
	a = vs_mmap(vs_uffd_mm(x->u), page_addr(x, 0), PAGES * VS_PAGE_SIZE,
		    RW, VS_MAP_PRIVATE | VS_MAP_ANONYMOUS | VS_MAP_FIXED,
		    NULL, 0);
	if (a >= 0 && vs__uffd_resolve(x->u, page_addr(x, PAGES - 1), 1, 0,
				       1))
		a = -EIO;
	if (a < 0) {	/* nothing else touched it */
		(void)vs_uffd_destroy(x->u);
		x->u = NULL;
	}
	return a < 0 ? (int)a : 0;
}

/* Thread 0 faults pages 2 and 1; thread 1 unmaps and maps 1, then 2.
 * A fault may rightly end in SIGSEGV while its page is unmapped. */
static void ux_thread(void *state, unsigned int i)
{
	static const int faults[] = { 2, 1 }, unmaps[] = { 1, 2 };
	struct ux *x = state;
	struct vs_mm *mm = vs_uffd_mm(x->u);
	unsigned int k;

	for (k = 0; k < VS_ARRAY_SIZE(faults); k++) {
		if (i == 0) {
			(void)vs__uffd_resolve(x->u, page_addr(x, faults[k]),
					       1, 0, 1);
			continue;
		}
		(void)vs_munmap(mm, page_addr(x, unmaps[k]), VS_PAGE_SIZE);
		(void)vs_mmap(mm, page_addr(x, unmaps[k]), VS_PAGE_SIZE, RW,
			      VS_MAP_PRIVATE | VS_MAP_ANONYMOUS |
			      VS_MAP_FIXED, NULL, 0);
	}
}

/* Real residency is the model's present PTEs, page by page; then the
 * region goes, every page back. */
static void ux_check(void *state)
{
	struct ux *x = state;
	struct vs_mm *mm = vs_uffd_mm(x->u);
	unsigned char real[PAGES];
	vs_atomic64_t *e;
	int k, model;

	if (mincore(vs_uffd_base(x->u), PAGES * VS_PAGE_SIZE, real)) {
		vs_machine_fail("mincore: errno %d", errno);
		return;
	}
	vs_mmap_read_lock(mm);
	for (k = 0; k < PAGES; k++) {
		e = vs_pte_offset(&mm->pgtable, page_addr(x, k));
		model = e && vs_pte_present((uint64_t)vs_read_once(e));
		if (model != (real[k] & 1)) {
			vs_mmap_read_unlock(mm);
			vs_machine_fail("page %d: real memory %s, the model "
					"%s", k, real[k] & 1 ? "resident" :
					"not resident", model ?
					"maps it" : "does not map it");
			return;
		}
	}
	vs_mmap_read_unlock(mm);
	VS_EXPLORE_ASSERT(vs_uffd_destroy(x->u) == 0);
	x->u = NULL;
}

/* A failed schedule's region is left: its threads were abandoned in it.
 * Context: the host thread (kept is its alone). */
static void ux_fini(void *state)
{
	struct ux *x = state;

	if (!x->u) {
		free(x);
		return;
	}
	x->next = kept;
	kept = x;
}

/* _i: the strategy, plus VS_FAULT_NR_STRATEGIES for relaxed memory. */
START_TEST(explore_install)
{
	static int strategy;
	static char name[32];
	static struct vs_explore_scenario sc = {
		.name = name, .threads = 2, .setup = ux_setup,
		.thread = ux_thread, .check = ux_check, .fini = ux_fini,
		.arg = &strategy,
	};
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };
	int relaxed = _i >= VS_FAULT_NR_STRATEGIES;

	strategy = _i % VS_FAULT_NR_STRATEGIES;
	/* Under relaxed memory, as explore_vm's weak cases: 300 schedules
	 * a seed, unshrunk (CI runs this suite under ASan too). */
	if (relaxed) {
		o.memory = VS_VCPU_MEM_RELAXED;
		o.max_schedules = 300;
		o.flags |= VS_EXPLORE_NO_SHRINK;
	}
	/* Its own name: a replay line names the strategy too. */
	snprintf(name, sizeof(name), "install-%s%s",
		 vs_fault_strategy_name(strategy), relaxed ? "-relaxed" : "");
	vs_tally_explore(&sc, &o);
}
END_TEST

const char *vcpu_uffd_only(void)
{
	const char *why = vcpu_only();

	return why ? why : uffd_refused();
}

Suite *explore_uffd_suite(void)
{
	static char names[2 * VS_FAULT_NR_STRATEGIES][32];
	Suite *s = suite_create("explore_uffd");
	int i;

	for (i = 0; i < 2 * VS_FAULT_NR_STRATEGIES; i++) {
		snprintf(names[i], sizeof(names[i]), "install-%s%s",
			 vs_fault_strategy_name(i % VS_FAULT_NR_STRATEGIES),
			 i >= VS_FAULT_NR_STRATEGIES ? "-relaxed" : "");
		tcase_add_loop_test(vs_test_plain_tcase(s, names[i]),
				    explore_install, i, i + 1);
	}
	return s;
}
