/* SPDX-License-Identifier: MIT */
/*
 * The userfaultfd backing explored (vCPU build, where userfaultfd can
 * be used): its two protocols with real memory, interleaved by PCT
 * instead of by the hardware.
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
 *   - install-spf-relaxed: the same for spf under the relaxed memory
 *     model, 300 schedules a seed, unshrunk: the sequence is read with
 *     acquire loads and under the mmu_lock;
 *
 *   - fork/STRATEGY: two threads store 1, 2, 3 into two words of a
 *     page by real stores while the writer forks twice; the first
 *     child's copy of the words must be the same before and after the
 *     second fork, and both words must end holding 3.  A fork's invalidation copies what
 *     real stores wrote back into the model's page and write-protects
 *     the real page, so that a later store faults (SIGBUS, resolved by
 *     the handler on the storing vCPU: a copy-on-write in the model)
 *     instead of landing in a page the model now shares with the
 *     child;
 *
 *   - publish-relaxed: thread 0 creates a region while thread 1, as the
 *     SIGBUS handler does, searches the table of regions (acquire loads
 *     of its slots) and resolves a fault in the first new region it
 *     meets: no VMA is there, SIGSEGV, but the counters are touched.
 *     Under the relaxed memory model, unshrunk: the slot must be read
 *     with an acquire (pairing with the release that published it), or
 *     thread 1 touches a region whose allocation does not happen before
 *     it (the engine's "unpublished object").
 *
 * PCT at its default depth, 1,000 schedules (at VS_TEST_SCALE), seeds 1
 * to 3, each prints one line; the planted bugs uffd-install-no-seq,
 * uffd-writeback-no-wp and uffd-region-relaxed-lookup each make a case
 * fail: this is their suite of
 * record (teeth-NAME), where real threads meet their windows only by
 * luck.  A real load or
 * store is no event: each store here follows an event of its own (a
 * count), which is where the scheduler places it.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <vmsim/check/explore.h>
#include <vmsim/mm.h>
#include <vmsim/pgtable.h>

#include "explore_tally.h"
#include "fault/uffd_internal.h"
#include "test.h"

Suite *explore_uffd_suite(void);

#define PAGES 4
#define RW (VS_PROT_READ | VS_PROT_WRITE)

struct ux {
	int strategy;
	struct vs_uffd *u;
	struct vs_mm *child[2];		/* fork: the writer's two forks */
	long copy[2][2];		/* fork: the first child's words,
					 * before and after the second */
	vs_atomic_long_t stores;	/* fork: the faulter's, so far */
	struct ux *next;		/* on kept */
};

/* Failed schedules' regions: their threads were abandoned in them. */
static struct ux *kept;

static unsigned long page_addr(struct ux *x, int k)
{
	return (unsigned long)vs_uffd_base(x->u) +
	       (unsigned long)k * VS_PAGE_SIZE;
}

/*
 * A region of PAGES pages, all mapped in the model, the last resolved
 * (its anon_vma then exists: a speculative fault need not fall back).
 * A pool of one slot batch (64 pages): a refill takes it whole, and a
 * store that faults while another context is preempted inside its
 * refill needs alloc_slow() (vm/page.c) to find those pages; before it
 * did, the fork cases died of a spurious OOM.
 */
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
	vs_vcpu_name(&x->stores, sizeof(x->stores), "the faulter's stores");
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

/* Destroy the region, every page back.  Before a check reports: a
 * region left behind keeps one of the VS_UFFD_MAX_REGIONS places, and
 * shrinking replays many failing schedules. */
static void ux_destroy(struct ux *x)
{
	VS_EXPLORE_ASSERT(vs_uffd_destroy(x->u) == 0);
	x->u = NULL;
}

/* Real residency is the model's present PTEs, page by page. */
static void ux_check(void *state)
{
	struct ux *x = state;
	struct vs_mm *mm = vs_uffd_mm(x->u);
	unsigned char real[PAGES];
	int k, model[PAGES], err = 0;
	vs_atomic64_t *e;

	if (mincore(vs_uffd_base(x->u), PAGES * VS_PAGE_SIZE, real))
		err = errno;
	vs_mmap_read_lock(mm);
	for (k = 0; k < PAGES; k++) {
		e = vs_pte_offset(&mm->pgtable, page_addr(x, k));
		model[k] = e && vs_pte_present((uint64_t)vs_read_once(e));
	}
	vs_mmap_read_unlock(mm);
	ux_destroy(x);
	if (err) {
		vs_machine_fail("mincore: errno %d", err);
		return;
	}
	for (k = 0; k < PAGES; k++)
		if (model[k] != (real[k] & 1)) {
			vs_machine_fail("page %d: real memory %s, the model "
					"%s", k, real[k] & 1 ? "resident" :
					"not resident", model[k] ?
					"maps it" : "does not map it");
			return;
		}
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

/* ---- fork: real stores against the mirror's write-back ------------------ */

#define STORES 3
#define FORK_PAGE (PAGES - 1)	/* the page setup() resolved, writable */

/*
 * Threads 0 and 2 store 1, 2, 3 into words 0 and 1 of the last page, by
 * real stores: each counted first, an event, so that the scheduler
 * places it (two storers, so that one's store can fault while the
 * other's handler has given its vCPU away).  Thread 1 forks twice and
 * reads the first child's copy of the two words before and after the
 * second fork.
 */
static void fork_thread(void *state, unsigned int i)
{
	struct ux *x = state;
	struct vs_mm *mm = vs_uffd_mm(x->u);
	unsigned long addr = page_addr(x, FORK_PAGE);
	long k;

	if (i != 1) {
		for (k = 1; k <= STORES; k++) {
			vs_fetch_add_relaxed(&x->stores, 1);
			((volatile long *)addr)[i / 2] = k;
		}
		return;
	}
	VS_EXPLORE_ASSERT(vs_fork(mm, &x->child[0]) == 0);
	VS_EXPLORE_ASSERT(vs_read(x->child[0], addr, x->copy[0],
				  sizeof(x->copy[0])) == 0);
	VS_EXPLORE_ASSERT(vs_fork(mm, &x->child[1]) == 0);
	VS_EXPLORE_ASSERT(vs_read(x->child[0], addr, x->copy[1],
				  sizeof(x->copy[1])) == 0);
}

/*
 * Nobody writes to the first child, so its copy did not change at the
 * second fork; every store landed (read back by loads: the page is
 * present).  Judged once the children and the region are gone, so that
 * a failing schedule leaves nothing behind.
 */
static void fork_check(void *state)
{
	struct ux *x = state;
	volatile long *real = (volatile long *)page_addr(x, FORK_PAGE);
	long v[2] = { real[0], real[1] };
	int k;

	for (k = 0; k < 2; k++) {
		VS_EXPLORE_ASSERT(vs_mm_destroy(x->child[k]) == 0);
		x->child[k] = NULL;
	}
	ux_destroy(x);
	for (k = 0; k < 2; k++) {
		if (x->copy[0][k] != x->copy[1][k]) {
			vs_machine_fail("the first child's word %d changed "
					"from %ld to %ld at the second fork: "
					"a store after the first reached it",
					k, x->copy[0][k], x->copy[1][k]);
			return;
		}
		if (v[k] != STORES) {
			vs_machine_fail("word %d holds %ld after %d stores",
					k, v[k], STORES);
			return;
		}
	}
}

/* ---- publish: a region entered while a handler searches the table ------ */

struct pub {
	struct vs_uffd *old[VS_UFFD_MAX_REGIONS]; /* the table at setup */
	struct vs_uffd *u;		/* thread 0's region */
	int err;			/* thread 0's vs_uffd_create() */
	int met, ret;			/* thread 1: a new region met, and
					 * what resolving there returned */
	vs_atomic32_t done;		/* thread 0 returned: thread 1 reads
					 * it relaxed, check() acquires */
	struct pub *next;		/* on pub_kept */
};

/* Failed schedules' regions: their threads were abandoned in them. */
static struct pub *pub_kept;

/* The table as it is: the regions that earlier failed schedules left
 * in it are not new. */
static int pub_setup(void **state)
{
	struct pub *p = calloc(1, sizeof(*p));
	int k;

	if (!p)
		return -ENOMEM;
	for (k = 0; k < VS_UFFD_MAX_REGIONS; k++)
		p->old[k] = vs__uffd_region_at(k);
	vs_vcpu_name(&p->done, sizeof(p->done), "thread 0 done");
	*state = p;
	return 0;
}

/* Thread 1: the first new region in the table, or NULL. */
static struct vs_uffd *pub_new(struct pub *p)
{
	struct vs_uffd *u;
	int k;

	for (k = 0; k < VS_UFFD_MAX_REGIONS; k++) {
		u = vs__uffd_region_at(k);
		if (u && u != p->old[k])
			return u;
	}
	return NULL;
}

/* Thread 0 creates a region; thread 1 searches the table until it
 * meets it (or thread 0 is done) and resolves a fault at its base. */
static void pub_thread(void *state, unsigned int i)
{
	struct vs_uffd_options o = {
		.size = PAGES * VS_PAGE_SIZE, .mode = VS_UFFD_SIGBUS,
		.mm = { .lock_kind = "rwsem", .pool_pages = 64 },
	};
	struct pub *p = state;
	struct vs_uffd *u;

	if (i == 0) {
		p->err = vs_uffd_create(&p->u, &o);
		/* Release: pairs with pub_check()'s acquire. */
		vs_store_release(&p->done, 1);
		return;
	}
	/* Relaxed: thread 1 learns of the region only through its slot. */
	while (!(u = pub_new(p))) {
		if (vs_read_once(&p->done))
			return;
		vs_cpu_relax();
	}
	p->met = 1;
	p->ret = vs__uffd_resolve(u, (unsigned long)u->base, 0, 0, 1);
}

/*
 * The region made and destroyed; a fault where no VMA is: SIGSEGV.
 * Thread 0's work is ordered before the destroy by the acquire of done,
 * not by the join: a work that ended before thread 1 was spawned gave
 * its context to thread 1, and joining that context joins thread 1 only.
 */
static void pub_check(void *state)
{
	struct pub *p = state;

	while (!vs_load_acquire(&p->done))
		vs_cpu_relax();
	if (p->err) {
		vs_machine_fail("vs_uffd_create: %d", p->err);
		return;
	}
	VS_EXPLORE_ASSERT(vs_uffd_destroy(p->u) == 0);
	p->u = NULL;
	VS_EXPLORE_ASSERT(!p->met || p->ret == VS_VM_FAULT_SIGSEGV);
}

/* Context: the host thread (pub_kept is its alone). */
static void pub_fini(void *state)
{
	struct pub *p = state;

	if (!p->u) {
		free(p);
		return;
	}
	p->next = pub_kept;
	pub_kept = p;
}

/* Under relaxed memory, unshrunk: shrinking replays failing schedules,
 * each leaving its region in one of the table's slots. */
START_TEST(explore_publish)
{
	static struct vs_explore_scenario sc = {
		.name = "publish-relaxed", .threads = 2, .setup = pub_setup,
		.thread = pub_thread, .check = pub_check, .fini = pub_fini,
	};
	struct vs_explore_options o = {
		.flags = VS_EXPLORE_QUIET | VS_EXPLORE_NO_SHRINK,
		.memory = VS_VCPU_MEM_RELAXED,
	};

	vs_tally_explore(&sc, &o);
}
END_TEST

/* _i: the strategy; VS_FAULT_NR_STRATEGIES: spf under relaxed memory. */
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
	int relaxed = _i == VS_FAULT_NR_STRATEGIES;

	strategy = relaxed ? VS_FAULT_SPF : _i;
	/* Under relaxed memory, as explore_vm's weak cases: 300 schedules
	 * a seed, unshrunk, and only spf, whose lookup takes no lock
	 * (CI runs this suite under ASan too). */
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

/* _i: the strategy. */
START_TEST(explore_fork)
{
	static int strategy;
	static char name[32];
	static struct vs_explore_scenario sc = {
		.name = name, .threads = 3, .setup = ux_setup,
		.thread = fork_thread, .check = fork_check, .fini = ux_fini,
		.arg = &strategy,
	};
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };

	strategy = _i;
	snprintf(name, sizeof(name), "fork-%s", vs_fault_strategy_name(_i));
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
	enum { NR = VS_FAULT_NR_STRATEGIES };
	static char names[2 * NR + 1][32];
	Suite *s = suite_create("explore_uffd");
	char *n;
	int i;

	for (i = 0; i <= NR; i++) {
		snprintf(names[i], sizeof(names[i]), "install-%s",
			 i < NR ? vs_fault_strategy_name(i) : "spf-relaxed");
		tcase_add_loop_test(vs_test_plain_tcase(s, names[i]),
				    explore_install, i, i + 1);
	}
	for (i = 0; i < NR; i++) {
		n = names[NR + 1 + i];
		snprintf(n, sizeof(names[0]), "fork-%s",
			 vs_fault_strategy_name(i));
		tcase_add_loop_test(vs_test_plain_tcase(s, n), explore_fork,
				    i, i + 1);
	}
	tcase_add_test(vs_test_plain_tcase(s, "publish-relaxed"),
		       explore_publish);
	return s;
}
