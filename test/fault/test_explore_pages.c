/* SPDX-License-Identifier: MIT */
/*
 * The page-level rules explored (vCPU build only): docs/locking.md's
 * PTE, page-reference and page-cache rules, each against the one
 * operation that may break it, interleaved by PCT.
 *
 *   - pin-cow: a thread pins an anonymous page mapped read-only (a
 *     reference taken under its PTL, as GUP does) and writes it while
 *     another thread writes it too: from 5.9 (mech.cow_refcount) the
 *     write must copy, so the pinned frame keeps what it held and the
 *     PTE maps another page; the pin's reference count stays one more
 *     than its mappings; the mm goes with every page back;
 *   - dirty-zap, dirty-mprotect, dirty-fork: a store by the simulated
 *     CPU (vs_access(), which sets DIRTY with no lock) to a clean
 *     writable page, beside a MADV_DONTNEED of a shared page, an
 *     mprotect to read-only, or a fork: a store that succeeded is
 *     never lost (the PTE, or the zapped shared page, ends dirty);
 *   - fork-cow: a fork beside writes to its private page: after the
 *     fork the parent's writes never reach the child;
 *   - file-fill: two faults on one page of a file mapped twice fill
 *     its page cache at once: both map the same page;
 *   - table-fill: two faults in a PMD without a PTE page populate it at
 *     once: one PTE page holds both PTEs, and RSS counts what it maps;
 *   - reclaim-walk (6.18): write faults in a PMD while MADV_DONTNEED of
 *     all of it frees its emptied PTE page (PT_RECLAIM) and waits for
 *     the free: no walker touches the freed page, RSS stays exact;
 *   - rmap: write faults beside a thread that, under the PTL, finds
 *     each present PTE's page mapped once and RSS equal to the present
 *     PTEs (faults count both under the PTL of the PTE they set).
 *
 * Each exploration is PCT at its default depth (reclaim-walk at 4),
 * 1,000 schedules, for seeds 1 to 3, at the kernel version of
 * $VMSIM_KERNEL (6.18 by default); each prints one line.  The planted bugs of these rules
 * (sync/broken.def) each make one case fail (teeth-NAME).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/check/explore.h>
#include <vmsim/fault.h>
#include <vmsim/file.h>
#include <vmsim/mm.h>
#include <vmsim/page.h>
#include <vmsim/pgtable.h>
#include <vmsim/rcu.h>
#include <vmsim/vcpu.h>

#include "explore_tally.h"
#include "test.h"

Suite *explore_pages_suite(void);

#define START 0x40000000UL
#define NPG 4				/* pages at AREA */
#define AREA (START + 16 * VS_PAGE_SIZE)
#define PAGE(k) (AREA + (unsigned long)(k) * VS_PAGE_SIZE)
#define AREA2 PAGE(2 * NPG)		/* file-fill's second mapping */
#define RW (VS_PROT_READ | VS_PROT_WRITE)
#define ANON (VS_MAP_ANONYMOUS | VS_MAP_FIXED)

/* What a case does beside the store: dirty-OP's operations. */
enum { OP_ZAP, OP_MPROTECT, OP_FORK };

struct pages {
	int op;
	struct vs_mm *mm;
	struct vs_mm *child;	/* a fork's, or NULL */
	struct vs_page *pin[NPG];	/* extra references, or NULL */
	char pinned;		/* pin-cow: the pinned frame's byte */
	int pinned_ro;		/* pin-cow: its PTE was read-only */
	int stored[NPG];	/* dirty: vs_access()'s results */
	struct pages *next;	/* on kept */
};

/* Failed schedules' scenarios: their threads were abandoned in them. */
static struct pages *kept;

/* A scenario: an mm over one PMD at $VMSIM_KERNEL's version, and NPG
 * pages at AREA, mapped with @flags and written (the PTE table and the
 * anon_vma are there). */
/*
 * pages_new - the scenario's state in *@state, its op the case's
 * argument (or 0), with an mm of @pmds PMDs from START at @kernel (NULL:
 * the default).  Return: 0, or a negative errno (then r->mm is NULL).
 */
static int pages_new(void **state, int pmds, const char *kernel)
{
	struct vs_mm_options mo = { .lock_kind = "rwsem", .pool_pages = 64,
				    .start = START,
				    .end = START + (unsigned long)pmds *
					   VS_PMD_SIZE,
				    .kernel = kernel };
	struct pages *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->op = *state ? *(const int *)*state : 0;
	*state = r;
	err = vs_mm_create(&r->mm, &mo);
	if (err)
		r->mm = NULL;
	return err;
}

/* A setup's end: on @a < 0 the mm goes, nothing else touched it.
 * Return: @a as a setup returns it. */
static int pages_made(struct pages *r, long a)
{
	if (a < 0) {
		(void)vs_mm_destroy(r->mm);
		r->mm = NULL;
	}
	return a < 0 ? (int)a : 0;
}

static int pages_setup(void **state, int flags)
{
	struct pages *r;
	long a = pages_new(state, 1, NULL);
	int k;

	if (a)
		return (int)a;
	r = *state;
	a = vs_mmap(r->mm, AREA, NPG * VS_PAGE_SIZE, RW, flags, NULL, 0);
	for (k = 0; k < NPG && a >= 0; k++)
		a = vs_write(r->mm, PAGE(k), "X", 1);
	return pages_made(r, a);
}

/*
 * Take a reference on the page mapped at @addr, as GUP does: under the
 * PTL of its PTE (docs/locking.md, struct vs_page).  With @clean, the
 * PTE is made clean and the page too, as writeback would.  Return the
 * page, or NULL when nothing is mapped; *@ptev: the PTE it found.
 * Context: no lock held.
 */
static struct vs_page *pin_page(struct vs_mm *mm, unsigned long addr,
			        int clean, uint64_t *ptev)
{
	struct vs_page *page = NULL;
	vs_atomic64_t *ptep;
	vs_spinlock_t *ptl;
	uint64_t pte = 0;

	vs_mmap_read_lock(mm);
	ptep = vs_pte_offset_map_lock(&mm->pgtable, addr, &ptl);
	if (ptep) {
		pte = vs_ptep_get(ptep);
		page = vs_pte_present(pte) ?
		       vs_pfn_to_page(mm->pool, vs_pte_pfn(pte)) : NULL;
		if (page)
			vs_get_page(page);
		if (page && clean) {
			vs_set_pte(ptep, vs_pte_mkclean(pte));
			vs_page_clear_flags(page, VS_PG_DIRTY);
		}
		vs_pte_unmap_unlock(ptl);
	}
	vs_mmap_read_unlock(mm);
	*ptev = pte;
	return page;
}

/* The PTE at @addr (lockless: every thread has ended, or a snapshot). */
static uint64_t pte_at(struct vs_mm *mm, unsigned long addr)
{
	vs_atomic64_t *ptep = vs_pte_offset(&mm->pgtable, addr);

	return ptep ? (uint64_t)vs_read_once(ptep) : 0;
}

/* The end of every case: the pins dropped, the fork child and the mm
 * destroyed, every page back. */
static void pages_teardown(struct pages *r)
{
	int k;

	for (k = 0; k < NPG; k++)
		if (r->pin[k])
			vs_put_page(r->mm->pool, r->pin[k]);
	memset(r->pin, 0, sizeof(r->pin));
	if (r->child)
		VS_EXPLORE_ASSERT(vs_mm_destroy(r->child) == 0);
	r->child = NULL;
	VS_EXPLORE_ASSERT(vs_mm_destroy(r->mm) == 0);
	r->mm = NULL;
}

/* A failed schedule's mms are kept: its threads were abandoned in them.
 * Context: the host thread (kept is its alone). */
static void pages_fini(void *state)
{
	struct pages *r = state;

	if (!r->mm && !r->child) {
		free(r);
		return;
	}
	r->next = kept;
	kept = r;
}

/* Explore @sc: seeds 1 to 3, PCT's defaults. */
static void explore_pages(const struct vs_explore_scenario *sc)
{
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET };

	vs_tally_explore(sc, &o);
}

/* ---- pin-cow: a write to a pinned read-only anonymous page ------------- */

/* pages_setup's private page, made read-only again (mprotect read, then
 * read-write: the PTE stays read-only, so the next write is a COW
 * fault). */
static int pin_setup(void **state)
{
	struct pages *r;
	int err = pages_setup(state, VS_MAP_PRIVATE | ANON);

	if (err)
		return err;
	r = *state;
	err = vs_mprotect(r->mm, AREA, NPG * VS_PAGE_SIZE, VS_PROT_READ);
	return err ? err : vs_mprotect(r->mm, AREA, NPG * VS_PAGE_SIZE, RW);
}

/* Does the COW rule hold for @r's pin: pinned read-only, it must have
 * been copied, never reused (5.9 on, mech.cow_refcount)? */
static int pin_must_copy(const struct pages *r)
{
	return r->pinned_ro && r->mm->mech.cow_refcount;
}

/*
 * Thread 0 pins the page, then writes "A" through the mapping: where it
 * pinned a read-only PTE the write must copy, so the pinned frame still
 * holds what it held when pinned.  Thread 1 writes "B", racing thread
 * 0's COW fault with its own (or making the PTE writable first: its
 * page had no pin then).
 */
static void pin_thread(void *state, unsigned int i)
{
	struct pages *r = state;
	struct vs_page *pin;
	uint64_t pte;

	if (i == 1) {
		VS_EXPLORE_ASSERT(vs_write(r->mm, AREA, "B", 1) == 0);
		return;
	}
	pin = pin_page(r->mm, AREA, 0, &pte);
	VS_EXPLORE_ASSERT(pin);
	r->pinned = ((const char *)pin->data)[0];
	r->pinned_ro = !vs_pte_write(pte);
	r->pin[0] = pin;
	VS_EXPLORE_ASSERT(vs_write(r->mm, AREA, "A", 1) == 0);
	VS_EXPLORE_ASSERT(!pin_must_copy(r) ||
			  ((const char *)pin->data)[0] == r->pinned);
}

/*
 * The pin was never reused (5.9 on): the PTE maps another page, and the
 * pinned one is mapped nowhere; its count is the pin's one reference
 * and one per mapping, once the LRU batches hold none.  Then the mm
 * goes, every page back.
 */
static void pin_check(void *state)
{
	struct pages *r = state;
	struct vs_page *pin = r->pin[0];
	uint64_t pte = pte_at(r->mm, AREA);

	VS_EXPLORE_ASSERT(vs_pte_present(pte) && pin);
	if (pin_must_copy(r)) {
		VS_EXPLORE_ASSERT(vs_pte_pfn(pte) !=
				  vs_page_to_pfn(r->mm->pool, pin));
		VS_EXPLORE_ASSERT(vs_page_mapcount(pin) == 0);
		VS_EXPLORE_ASSERT(((const char *)pin->data)[0] == r->pinned);
	}
	vs_lru_drain_all(r->mm->pool);
	VS_EXPLORE_ASSERT(vs_page_count(pin) ==
			  1 + (uint32_t)vs_page_mapcount(pin));
	pages_teardown(r);
}

START_TEST(explore_pin_cow)
{
	static const struct vs_explore_scenario pin = {
		.name = "pin-cow", .threads = 2, .setup = pin_setup,
		.thread = pin_thread, .check = pin_check, .fini = pages_fini,
	};

	explore_pages(&pin);
}
END_TEST

/* ---- dirty-OP: a lockless DIRTY update beside a PTE's change ----------- */

/* The pages, shared for a zap (whose DIRTY goes to the page) and
 * private otherwise (fork copies only private PTEs), pinned, their PTEs
 * and the pages made clean. */
static int dirty_setup(void **state)
{
	const int *op = *state;
	struct pages *r;
	uint64_t pte;
	int k, err = pages_setup(state, (*op == OP_ZAP ? VS_MAP_SHARED :
					 VS_MAP_PRIVATE) | ANON);

	if (err)
		return err;
	r = *state;
	for (k = 0; k < NPG; k++) {
		r->pin[k] = pin_page(r->mm, PAGE(k), 1, &pte);
		if (!r->pin[k])
			return -EIO;
	}
	return 0;
}

/* Thread 0 stores to each page with no lock (vs_access sets DIRTY by
 * cmpxchg); thread 1 zaps, write-protects or forks them all. */
static void dirty_thread(void *state, unsigned int i)
{
	struct pages *r = state;
	int k;

	if (i == 0) {
		for (k = NPG - 1; k >= 0; k--)
			r->stored[k] = vs_access(r->mm, PAGE(k), 1, 1);
		return;
	}
	if (r->op == OP_ZAP)
		VS_EXPLORE_ASSERT(vs_madvise(r->mm, AREA, NPG * VS_PAGE_SIZE,
					     VS_MADV_DONTNEED) == 0);
	else if (r->op == OP_MPROTECT)
		VS_EXPLORE_ASSERT(vs_mprotect(r->mm, AREA, NPG * VS_PAGE_SIZE,
					      VS_PROT_READ) == 0);
	else
		VS_EXPLORE_ASSERT(vs_fork(r->mm, &r->child) == 0);
}

/* A store that succeeded left DIRTY somewhere: in the PTE (the same
 * page, or a COW copy after the fork), or, zapped, in the page. */
static void dirty_check(void *state)
{
	struct pages *r = state;
	int k;

	for (k = 0; k < NPG; k++) {
		VS_EXPLORE_ASSERT(r->stored[k] == 0 ||
				  r->stored[k] == -EFAULT);
		VS_EXPLORE_ASSERT(r->stored[k] ||
				  vs_pte_dirty(pte_at(r->mm, PAGE(k))) ||
				  vs_page_test_flags(r->pin[k], VS_PG_DIRTY));
	}
	pages_teardown(r);
}

/* _i: the operation. */
START_TEST(explore_dirty)
{
	static const char *const names[] = { "dirty-zap", "dirty-mprotect",
					     "dirty-fork" };
	static int op;
	static struct vs_explore_scenario dirty = {
		.threads = 2, .setup = dirty_setup, .thread = dirty_thread,
		.check = dirty_check, .fini = pages_fini, .arg = &op,
	};

	op = _i;
	dirty.name = names[_i];
	explore_pages(&dirty);
}
END_TEST

/* ---- fork-cow: the parent's writes after a fork ------------------------ */

/* Thread 0 forks, then writes "A" in the parent: the child must not
 * see it (it sees "X", or thread 1's "B" if that came before the fork).
 * Thread 1 writes "B" in the parent. */
static void fork_thread(void *state, unsigned int i)
{
	struct pages *r = state;
	char c = 0;

	if (i == 1) {
		VS_EXPLORE_ASSERT(vs_write(r->mm, AREA, "B", 1) == 0);
		return;
	}
	VS_EXPLORE_ASSERT(vs_fork(r->mm, &r->child) == 0);
	VS_EXPLORE_ASSERT(vs_write(r->mm, AREA, "A", 1) == 0);
	VS_EXPLORE_ASSERT(vs_read(r->child, AREA, &c, 1) == 0);
	VS_EXPLORE_ASSERT(c == 'X' || c == 'B');
}

static int fork_setup(void **state)
{
	return pages_setup(state, VS_MAP_PRIVATE | ANON);
}

static void fork_check(void *state)
{
	pages_teardown(state);
}

START_TEST(explore_fork_cow)
{
	static const struct vs_explore_scenario fork_cow = {
		.name = "fork-cow", .threads = 2, .setup = fork_setup,
		.thread = fork_thread, .check = fork_check,
		.fini = pages_fini,
	};

	explore_pages(&fork_cow);
}
END_TEST

/* ---- file-fill: two faults fill one page-cache slot -------------------- */

/* A one-page file mapped shared at AREA and at AREA2, nothing faulted
 * yet; the mappings hold the file. */
static int file_setup(void **state)
{
	struct pages *r;
	struct vs_file *f;
	long a = pages_new(state, 1, NULL);

	if (a)
		return (int)a;
	r = *state;
	a = vs_file_create(&f, r->mm->pool, VS_PAGE_SIZE, O_RDWR);
	if (!a) {
		a = vs_mmap(r->mm, AREA, VS_PAGE_SIZE, RW,
			    VS_MAP_SHARED | VS_MAP_FIXED, f, 0);
		if (a >= 0)
			a = vs_mmap(r->mm, AREA2, VS_PAGE_SIZE, RW,
				    VS_MAP_SHARED | VS_MAP_FIXED, f, 0);
		(void)vs_file_destroy(f);
	}
	return pages_made(r, a);
}

/* Each thread reads the file's page through its own mapping. */
static void file_thread(void *state, unsigned int i)
{
	struct pages *r = state;

	VS_EXPLORE_ASSERT(vs_access(r->mm, i ? AREA2 : AREA, 1, 0) == 0);
}

/* One page cache page: both PTEs map it. */
static void file_check(void *state)
{
	struct pages *r = state;
	uint64_t a = pte_at(r->mm, AREA), b = pte_at(r->mm, AREA2);

	VS_EXPLORE_ASSERT(vs_pte_present(a) && vs_pte_present(b));
	VS_EXPLORE_ASSERT(vs_pte_pfn(a) == vs_pte_pfn(b));
	pages_teardown(r);
}

START_TEST(explore_file_fill)
{
	static const struct vs_explore_scenario fill = {
		.name = "file-fill", .threads = 2, .setup = file_setup,
		.thread = file_thread, .check = file_check,
		.fini = pages_fini,
	};

	explore_pages(&fill);
}
END_TEST

/* ---- table-fill: two faults populate one PTE page ----------------------- */

#define TBL (START + VS_PMD_SIZE)	/* a PMD without a PTE page yet */

/* An mm over two PMDs, one private mapping from AREA to two pages into
 * the second PMD, AREA written (the anon_vma and the first PMD's PTE
 * page are there, the second's not). */
static int table_setup(void **state)
{
	struct pages *r;
	long a = pages_new(state, 2, NULL);

	if (a)
		return (int)a;
	r = *state;
	a = vs_mmap(r->mm, AREA, TBL + 2 * VS_PAGE_SIZE - AREA, RW,
		    VS_MAP_PRIVATE | ANON, NULL, 0);
	if (a >= 0)
		a = vs_access(r->mm, AREA, 1, 1);
	return pages_made(r, a);
}

/* Each thread stores to its own page of the second PMD: both faults
 * find no PTE page and populate one. */
static void table_thread(void *state, unsigned int i)
{
	struct pages *r = state;

	VS_EXPLORE_ASSERT(vs_access(r->mm, TBL + i * VS_PAGE_SIZE, 1, 1) ==
			  0);
}

/* One PTE page holds both: both present, RSS the three pages mapped. */
static void table_check(void *state)
{
	struct pages *r = state;

	VS_EXPLORE_ASSERT(vs_pte_present(pte_at(r->mm, TBL)) &&
			  vs_pte_present(pte_at(r->mm, TBL + VS_PAGE_SIZE)));
	VS_EXPLORE_ASSERT(vs_get_mm_counter(r->mm, VS_MM_ANONPAGES) == 3);
	pages_teardown(r);
}

START_TEST(explore_table_fill)
{
	static const struct vs_explore_scenario fill = {
		.name = "table-fill", .threads = 2, .setup = table_setup,
		.thread = table_thread, .check = table_check,
		.fini = pages_fini,
	};

	explore_pages(&fill);
}
END_TEST

/* ---- reclaim-walk: a PTE page freed under a walker (6.18) --------------- */

/* An mm at 6.18 (PT_RECLAIM), locked faults, one private mapping over
 * the PMD at START, its first page written (its PTE page is there). */
static int walk_setup(void **state)
{
	struct pages *r;
	long a = pages_new(state, 1, "6.18");

	if (a)
		return (int)a;
	r = *state;
	a = vs_mm_set_fault_strategy(r->mm, VS_FAULT_LOCKED);
	if (!a)
		a = vs_mmap(r->mm, START, VS_PMD_SIZE, RW,
			    VS_MAP_PRIVATE | ANON, NULL, 0);
	if (a >= 0)
		a = vs_access(r->mm, START, 1, 1);
	return pages_made(r, a);
}

/* Thread 0 write-faults four pages of the PMD, each fault walking to
 * the PTE page and locking it; thread 1 zaps the whole PMD, which frees
 * the emptied PTE page after a grace period, and waits for that free
 * (vs_rcu_barrier()): only the walk's RCU section keeps the page. */
static void walk_thread(void *state, unsigned int i)
{
	struct pages *r = state;
	unsigned long k;

	if (i == 0) {
		for (k = 0; k < NPG; k++)
			(void)vs_handle_mm_fault(r->mm, START + k * VS_PAGE_SIZE,
						 VS_FAULT_FLAG_WRITE);
		return;
	}
	VS_EXPLORE_ASSERT(vs_madvise(r->mm, START, VS_PMD_SIZE,
				     VS_MADV_DONTNEED) == 0);
	vs_rcu_barrier();
}

/* RSS is the present PTEs: none went into a freed table. */
static void walk_check(void *state)
{
	struct pages *r = state;
	long present = 0;
	unsigned long k;

	for (k = 0; k < NPG; k++)
		present += vs_pte_present(pte_at(r->mm,
						 START + k * VS_PAGE_SIZE));
	VS_EXPLORE_ASSERT(vs_get_mm_counter(r->mm, VS_MM_ANONPAGES) ==
			  present);
	pages_teardown(r);
}

START_TEST(explore_reclaim_walk)
{
	static const struct vs_explore_scenario walk = {
		.name = "reclaim-walk", .threads = 2, .setup = walk_setup,
		.thread = walk_thread, .check = walk_check,
		.fini = pages_fini,
	};
	/* Three change points: the failures of PCT's default depth (two)
	 * shrink to three preemptions, and at that depth one seed of
	 * three passed its 1,000 schedules. */
	static const struct vs_vcpu_pct deeper = { 4 };
	struct vs_explore_options o = { .flags = VS_EXPLORE_QUIET,
					.sched_arg = &deeper };

	vs_tally_explore(&walk, &o);
}
END_TEST

/* ---- rmap: mapcount and RSS exact under the PTL ------------------------- */

/* An mm with NPG pages mapped at AREA (pages_setup's), then zapped:
 * nothing is mapped, the PTE page and anon_vma stay. */
static int rmap_setup(void **state)
{
	struct pages *r;
	int err = pages_setup(state, VS_MAP_PRIVATE | ANON);

	if (err)
		return err;
	r = *state;
	return vs_madvise(r->mm, AREA, NPG * VS_PAGE_SIZE, VS_MADV_DONTNEED);
}

/*
 * Under the PTL of AREA's PTE page: each present PTE's page is mapped
 * once, and RSS counts the present PTEs (faults add both under the PTL
 * of the PTE they set).  Context: no lock held.
 */
static void rmap_audit(struct vs_mm *mm)
{
	struct vs_page *page;
	vs_atomic64_t *ptep;
	vs_spinlock_t *ptl;
	long present = 0;
	uint64_t pte;
	int k;

	vs_mmap_read_lock(mm);
	ptep = vs_pte_offset_map_lock(&mm->pgtable, AREA, &ptl);
	for (k = 0; ptep && k < NPG; k++) {
		pte = vs_ptep_get(ptep + k);
		if (!vs_pte_present(pte))
			continue;
		present++;
		page = vs_pfn_to_page(mm->pool, vs_pte_pfn(pte));
		VS_EXPLORE_ASSERT(page && vs_page_mapcount(page) == 1);
	}
	VS_EXPLORE_ASSERT(!ptep ||
			  vs_get_mm_counter(mm, VS_MM_ANONPAGES) == present);
	if (ptep)
		vs_pte_unmap_unlock(ptl);
	vs_mmap_read_unlock(mm);
}

/* Thread 0 write-faults the pages; thread 1 audits them meanwhile. */
static void rmap_thread(void *state, unsigned int i)
{
	struct pages *r = state;
	int k;

	for (k = 0; k < NPG; k++) {
		if (i == 0)
			VS_EXPLORE_ASSERT(vs_access(r->mm, PAGE(k), 1, 1) ==
					  0);
		else
			rmap_audit(r->mm);
	}
}

static void rmap_check(void *state)
{
	struct pages *r = state;

	rmap_audit(r->mm);
	pages_teardown(r);
}

START_TEST(explore_rmap)
{
	static const struct vs_explore_scenario rmap = {
		.name = "rmap", .threads = 2, .setup = rmap_setup,
		.thread = rmap_thread, .check = rmap_check,
		.fini = pages_fini,
	};

	explore_pages(&rmap);
}
END_TEST

Suite *explore_pages_suite(void)
{
	Suite *s = suite_create("explore_pages");

	tcase_add_test(vs_test_plain_tcase(s, "pin-cow"), explore_pin_cow);
	tcase_add_loop_test(vs_test_plain_tcase(s, "dirty-zap"),
			    explore_dirty, OP_ZAP, OP_ZAP + 1);
	tcase_add_loop_test(vs_test_plain_tcase(s, "dirty-mprotect"),
			    explore_dirty, OP_MPROTECT, OP_MPROTECT + 1);
	tcase_add_loop_test(vs_test_plain_tcase(s, "dirty-fork"),
			    explore_dirty, OP_FORK, OP_FORK + 1);
	tcase_add_test(vs_test_plain_tcase(s, "fork-cow"), explore_fork_cow);
	tcase_add_test(vs_test_plain_tcase(s, "file-fill"), explore_file_fill);
	tcase_add_test(vs_test_plain_tcase(s, "table-fill"),
		       explore_table_fill);
	tcase_add_test(vs_test_plain_tcase(s, "reclaim-walk"),
		       explore_reclaim_walk);
	tcase_add_test(vs_test_plain_tcase(s, "rmap"), explore_rmap);
	return s;
}
