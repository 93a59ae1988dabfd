/* SPDX-License-Identifier: MIT */
/*
 * Differential test of vmsim/mm.h against the running kernel.
 *
 * A range of RANGE_PAGES pages is reserved in the test process and left
 * empty between two guard mappings.  A seeded random sequence of mmap,
 * munmap, mprotect, madvise and mremap calls, touches and forks is
 * applied to the real range (real system calls, loads and stores) and to
 * a vs_mm that covers the same addresses.  After each step:
 *
 *  - the results must be equal: an address or errno, and for a touch
 *    the pages it reached before a fault (SIGSEGV or SIGBUS; -EFAULT
 *    from vs_access());
 *  - the model's VMAs must equal the kernel's /proc/self/smaps entries
 *    inside the range: start, end, permissions, shared or private, and
 *    for shared mappings the file offset and which mappings share one
 *    object (one shmem inode in the kernel, one struct vs_file in the
 *    model);
 *  - the same pages must be resident: the present bit (63) of
 *    /proc/self/pagemap, which needs no privilege, against the model's
 *    present PTEs; and each VMA's "Rss:" and "Anonymous:" against the
 *    model's present pages of that VMA as 6.18's smaps_pte_entry()
 *    counts them: not the zero page (vm_normal_page() is NULL for it),
 *    shmem pages in Rss only.
 *
 * Touches.  read_pages(a, n) and write_pages(a, n) in a reproduction
 * load or store one byte at the start of each of n pages from a.  The
 * real one runs with SIGSEGV and SIGBUS caught (siglongjmp() out of the
 * handler), so that a fault on one side only is a difference and not a
 * crash; the model's is vs_access() page by page.  Nine in ten stay in
 * one VMA (which may forbid them), the rest go anywhere in the range.
 *
 * Fork.  fork() for real: the child reads its own smaps and pagemap,
 * sends them up a pipe, makes its store (when the step has one: the
 * write_pages() in the reproduction's comment), reports again and
 * _exit()s.  It runs system calls and the store only: no model code, no
 * liburcu, no allocation (it is the child of a threaded process).  The
 * model makes the same store in its vs_fork() child, which must agree
 * with the real one before and after it (6.18's vma_needs_copy(): PTEs
 * are copied only for VMAs with an anon_vma) and is then destroyed.
 *
 *	VS_DIFF_SEED=N    run seed N only (reproduce a failure)
 *	VS_DIFF_STEPS=N   steps per seed (default 2500, 625 under a
 *	                  sanitizer; times VS_TEST_SCALE)
 *
 * A failure shrinks the sequence (drops chunks of operations while a
 * replay from an empty range still fails), then prints the seed, the
 * operations as C calls relative to the range base, and both sides'
 * VMA lists (with Rss and Anonymous) and residency, page by page, at
 * the failing step (the children's, when the children differ).
 *
 * The range.  A region is mapped (PROT_NONE, MAP_NORESERVE) where the
 * kernel chooses, a gap of PAD_BYTES is kept free above the range, and
 * the range is punched out of it between two guards.  The kernel's
 * top-down allocator (vm_unmapped_area()) takes the highest gap that
 * fits, and the free pad lies above the range, so malloc, the liburcu
 * threads and the model itself never map into the range while the test
 * runs.  The guards are MAP_SHARED anonymous mappings: each is its own
 * shmem file, which is_mergeable_vma() never merges with a test mapping,
 * so every kernel VMA that touches the range lies inside it.  A kernel
 * VMA that crosses a range boundary is reported as a difference, not
 * clipped: clipping or coalescing would hide the very splits and merges
 * the test is for.
 *
 * What is excluded, and why (each but 9 is kernel state the model
 * lacks):
 *
 *  1. Addresses outside the range.  The model knows its range only; the
 *     kernel sees the whole process.  Every address and length stays in
 *     [base, base + RANGE) and never touches the guards.
 *  2. mmap without MAP_FIXED / MAP_FIXED_NOREPLACE when the hint range
 *     is not free: arch_get_unmapped_area_topdown() then searches the
 *     whole process.  A hinted mmap is generated only over a free range,
 *     where both take the hint.
 *  3. mremap(MREMAP_MAYMOVE) without MREMAP_FIXED that grows: when
 *     in-place growth fails, the kernel moves the mapping anywhere in
 *     the process (vrm_set_new_addr() -> get_unmapped_area()).  MAYMOVE
 *     alone is generated only with new_len <= old_len (never moves).
 *  4. Reclaim: the test assumes no page of the range is swapped out or
 *     reclaimed while it runs (the range is small); one taken by memory
 *     pressure would read as not resident.  Only touches and forks
 *     populate it: no MAP_POPULATE, no madvise that faults.
 *  5. Commit accounting (__vm_enough_memory, overcommit ENOMEM) and
 *     RLIMIT_AS / max_map_count: the sizes are small (RANGE_PAGES), far
 *     from any limit.
 *  6. Flags the model does not take: MREMAP_DONTUNMAP, MAP_POPULATE
 *     (it faults), MAP_GROWSDOWN, file mappings other than shmem, and
 *     madvise advice other than MADV_DONTNEED (an unknown advice value
 *     is generated, for EINVAL).
 *  7. Protection keys: on a CPU with PKU the kernel gives a PROT_EXEC-
 *     only mapping an execute-only pkey, so a load from it faults; the
 *     model has no pkeys.  A touch that meets such a VMA is a store.
 *  8. Huge pages: PR_SET_THP_DISABLE is set while the range exists, so
 *     that no fault maps a THP or an mTHP folio; the model has 4 KiB
 *     pages only.
 *  9. Fault-around, a gap of the model rather than state it lacks: a
 *     read fault in a shmem mapping maps the file's cached pages around
 *     the address too (do_fault_around(), fault_around_bytes, 64 KiB),
 *     and the model maps the faulting page only.  A touch that would
 *     load from a page of a shared mapping that is not resident is a
 *     store (a write fault maps one page on both sides); stores and
 *     private mappings have no fault-around.
 *
 * The kernel's version is state too: vm/ follows Linux 6.18, where
 * mremap() looks the VMA up before a shrink (check_prep_vma()), a pure
 * MREMAP_FIXED move may span several VMAs and gaps (remap_move(), 6.17)
 * and mprotect() drops VM_ACCOUNT of an unfaulted VMA (6.2).  Older
 * kernels differ on exactly those operations; this test is meant for a
 * kernel at least as new as the one vm/ follows, and a difference on an
 * older one should be read against that list first.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vmsim/error.h>
#include <vmsim/fault.h>
#include <vmsim/mm.h>
#include <vmsim/page.h>
#include <vmsim/pgtable.h>
#include <vmsim/thread.h>

#include "test.h"

#define PG 4096UL
#define RANGE_PAGES 512UL
#define RANGE (RANGE_PAGES * PG)
#define GUARD (16 * PG)
#define PAD_BYTES (1UL << 30)
#define MAX_OP_PAGES 64UL
#define MAX_TOUCH_PAGES 16UL

/*
 * Under a sanitizer each /proc read and each fork walks its shadow
 * mappings too, several times slower: a quarter of the steps there.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DIFF_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DIFF_SANITIZED 1
#endif
#endif

#define NR_SEEDS 20
#ifdef DIFF_SANITIZED
#define STEPS_PER_SEED 625
#else
#define STEPS_PER_SEED 2500
#endif
#define SHRINK_NS (10 * VS_TEST_NS_PER_SEC)
#define MAX_VMAS RANGE_PAGES
#define MAPS_BUF_SIZE (1 << 20)
#define PAGEMAP_BYTES (RANGE_PAGES * sizeof(uint64_t))
#define PM_PRESENT (UINT64_C(1) << 63)  /* pagemap: page present */

enum op_kind { OP_MMAP, OP_MUNMAP, OP_MPROTECT, OP_MADVISE, OP_MREMAP,
	       OP_TOUCH, OP_FORK, NR_OP_KINDS };
#define NR_CALL_KINDS (OP_MREMAP + 1)   /* the system calls */

/*
 * One operation.  @addr and @new_addr are offsets from the range base
 * (so that a sequence replays at any base); @prot is the advice for
 * madvise, and 1 for a store (0 a load) for a touch and for the
 * child's touch of a fork (@len 0: the child touches nothing).
 * @kret and @mret: the kernel's and the model's results, an address or
 * a negative errno; for a touch (and a fork's child touch) the pages
 * touched, or -(1 + pages touched) when the next one faulted.
 */
struct op {
	enum op_kind kind;
	unsigned long addr, len;
	unsigned long new_addr, new_len;
	int prot, flags;
	long kret, mret;
};

/*
 * One VMA as /proc/self/smaps shows it; @id names the mapped object;
 * @rss and @anon: its "Rss:" and "Anonymous:", in pages.
 */
struct vrec {
	unsigned long start, end, off;
	unsigned long rss, anon;
	uintptr_t id;
	char perm[5];
};

/*
 * The VMAs of the range and what is resident: @res[i] for page i, '.'
 * none; the kernel's '#' present (pagemap says no more without
 * privilege), the model's 'z' the zero page, 'a' an anonymous page,
 * 'f' a file (shmem) page.
 */
struct snap {
	size_t n;
	struct vrec v[MAX_VMAS];
	char res[RANGE_PAGES + 1];
};

struct diff {
	unsigned long resv, resv_len;   /* the whole reservation */
	int thp_disable;                /* PR_GET_THP_DISABLE before */
	unsigned long base;             /* the range */
	struct vs_mm *mm;
	struct op *ops, *tmp;           /* the sequence; shrink's scratch */
	uint64_t rng;
	struct snap kern, model;
	const char *side;               /* whose snapshots: parent, child */
	char why[512];
	unsigned long ok[NR_OP_KINDS], err[NR_OP_KINDS];
};

static char maps_buf[MAPS_BUF_SIZE];
static struct diff diff;

/* xorshift64*: deterministic, seedable. */
static uint64_t rnd(struct diff *d)
{
	d->rng ^= d->rng >> 12;
	d->rng ^= d->rng << 25;
	d->rng ^= d->rng >> 27;
	return d->rng * UINT64_C(2685821657736338717);
}

static unsigned long rnd_below(struct diff *d, unsigned long n)
{
	return n ? (unsigned long)(rnd(d) % n) : 0;
}

/* A percentage draw: true @pct times in 100. */
static int chance(struct diff *d, unsigned int pct)
{
	return rnd_below(d, 100) < pct;
}

/* ---- the range, in the kernel and in the model ------------------------ */

static void map_guard(unsigned long addr)
{
	void *p = mmap((void *)addr, GUARD, PROT_NONE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	ck_assert_msg(p == (void *)addr, "guard: %s", strerror(errno));
}

/*
 * Lay out [resv, resv + resv_len) as guard | range | guard | pad, with
 * the range and the pad left free (see the top of the file).
 */
static void range_reserve(struct diff *d)
{
	void *p;

	/* exclusion 8: no huge pages, of any size */
	d->thp_disable = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
	ck_assert_int_ge(d->thp_disable, 0);
	ck_assert_int_eq(prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0), 0);
	d->resv_len = GUARD + RANGE + GUARD + PAD_BYTES;
	p = mmap(NULL, d->resv_len, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ck_assert_msg(p != MAP_FAILED, "reserve: %s", strerror(errno));
	d->resv = (unsigned long)p;
	d->base = d->resv + GUARD;
	map_guard(d->resv);
	map_guard(d->base + RANGE);
	ck_assert_int_eq(munmap((void *)d->base, RANGE), 0);
	ck_assert_int_eq(munmap((void *)(d->base + RANGE + GUARD),
				PAD_BYTES), 0);
}

static void model_create(struct diff *d)
{
	struct vs_mm_options opt = {
		.start = d->base,
		.end = d->base + RANGE,
	};
	int err = vs_mm_create(&d->mm, &opt);

	ck_assert_msg(err == 0, "vs_mm_create: %s", vs_strerror(err));
}

static void model_destroy(struct diff *d)
{
	int err = vs_mm_destroy(d->mm);

	ck_assert_msg(err == 0, "vs_mm_destroy: %s", vs_strerror(err));
	d->mm = NULL;
}

/* Empty the range on both sides: a fresh start for a replay. */
static void range_reset(struct diff *d)
{
	ck_assert_int_eq(munmap((void *)d->base, RANGE), 0);
	model_destroy(d);
	model_create(d);
}

static void range_release(struct diff *d)
{
	model_destroy(d);
	ck_assert_int_eq(munmap((void *)d->resv, GUARD + RANGE + GUARD), 0);
	/* off again if it was (6.18's variant "except advised" becomes
	 * the full one; the test suites never set it) */
	ck_assert_int_eq(prctl(PR_SET_THP_DISABLE, d->thp_disable != 0, 0,
			       0, 0), 0);
}

/* ---- snapshots --------------------------------------------------------- */

/* Checks that run every step test and ck_abort_msg() rather than
 * ck_assert: check's assertions each write to its message pipe. */

/*
 * Read all of @path into @buf (NUL-terminated) with read(2): no stdio,
 * no allocation that could land in the range while it is compared, and
 * nothing a forked child of this threaded process may not call.
 * Return: the length, or -1 (errno set; -1 with errno ENOSPC when @buf
 * is too small).
 */
static ssize_t read_proc(const char *path, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (n < size - 1) {
		r = read(fd, buf + n, size - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (r < 0 || n >= size - 1) {
		if (r >= 0)
			errno = ENOSPC;
		return -1;
	}
	buf[n] = '\0';
	return (ssize_t)n;
}

/*
 * The range's pagemap entries (one u64 a page) into @buf: the present
 * bit, 63, is there without privilege (the PFN is not).
 * Return: 0, or -1 with errno set.
 */
static int read_pagemap(unsigned long base, uint64_t *buf)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = pread(fd, buf, PAGEMAP_BYTES, (off_t)(base / PG * 8));
	close(fd);
	if (r != (ssize_t)PAGEMAP_BYTES) {
		if (r >= 0)
			errno = EIO;
		return -1;
	}
	return 0;
}

/*
 * Parse one maps line: "start-end perm offset major:minor inode path".
 * Return: the start of the next line.
 */
static char *parse_line(char *p, struct vrec *v)
{
	char *nl;

	memset(v, 0, sizeof(*v));
	v->start = strtoul(p, &p, 16);
	v->end = strtoul(p + 1, &p, 16);
	memcpy(v->perm, p + 1, 4);
	v->perm[4] = '\0';
	v->off = strtoul(p + 6, &p, 16);
	p = strchr(p + 1, ' ');                 /* skip major:minor */
	v->id = p ? (uintptr_t)strtoul(p + 1, &p, 10) : 0;
	nl = p ? strchr(p, '\n') : NULL;
	return nl ? nl + 1 : NULL;
}

/*
 * An smaps field line of @v (NULL: of a VMA outside the range): "Rss:"
 * and "Anonymous:" are kept.  Return: the start of the next line.
 */
static char *parse_field(char *p, struct vrec *v)
{
	char *nl = strchr(p, '\n');

	if (v && strncmp(p, "Rss:", 4) == 0)
		v->rss = strtoul(p + 4, NULL, 10) * 1024 / PG;
	else if (v && strncmp(p, "Anonymous:", 10) == 0)
		v->anon = strtoul(p + 10, NULL, 10) * 1024 / PG;
	return nl ? nl + 1 : NULL;
}

/*
 * The kernel's VMAs that intersect the range, from the smaps text @text
 * (a VMA's line starts with a lower-case hex digit, its fields with a
 * capital), and its residency from the pagemap entries @pm.  Private
 * anonymous mappings show offset 0 and no inode; shared ones their
 * shmem inode.
 * Return: 0, or -1 with d->why set when a VMA crosses a range boundary.
 */
static int snap_parse(struct diff *d, struct snap *s, char *text,
		      const uint64_t *pm)
{
	unsigned long lo = d->base, hi = d->base + RANGE, i;
	struct vrec v, *in = NULL;
	char *p = text;

	s->n = 0;
	while (p && *p) {
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) {
			p = parse_field(p, in);
			continue;
		}
		p = parse_line(p, &v);
		in = NULL;
		if (v.end <= lo || v.start >= hi)
			continue;
		if (v.start < lo || v.end > hi) {
			snprintf(d->why, sizeof(d->why),
				 "kernel VMA %lx-%lx crosses the range "
				 "%lx-%lx", v.start, v.end, lo, hi);
			return -1;
		}
		if (v.perm[3] != 's')
			v.id = 0;
		if (s->n >= MAX_VMAS)
			ck_abort_msg("more than %lu VMAs", MAX_VMAS);
		s->v[s->n] = v;
		in = &s->v[s->n++];
	}
	for (i = 0; i < RANGE_PAGES; i++)
		s->res[i] = pm[i] & PM_PRESENT ? '#' : '.';
	s->res[RANGE_PAGES] = '\0';
	return 0;
}

static uint64_t pagemap_buf[RANGE_PAGES];

/* The kernel's side of this process.  Return: as snap_parse(). */
static int snap_kernel(struct diff *d, struct snap *s)
{
	if (read_proc("/proc/self/smaps", maps_buf, sizeof(maps_buf)) < 0)
		ck_abort_msg("/proc/self/smaps: %s", strerror(errno));
	if (read_pagemap(d->base, pagemap_buf) != 0)
		ck_abort_msg("/proc/self/pagemap: %s", strerror(errno));
	return snap_parse(d, s, maps_buf, pagemap_buf);
}

struct res_walk {
	const struct vs_mm *mm;
	struct snap *s;
};

/* vs_pgtable_walk()'s visit: one present PTE.  Context: its PTL held. */
static int res_pte(vs_atomic64_t *pte, unsigned long addr, void *arg)
{
	struct res_walk *w = arg;
	struct vs_page *page;

	page = vs_pfn_to_page(w->mm->pool, vs_pte_pfn(vs_ptep_get(pte)));
	if (!page)
		ck_abort_msg("PTE of %#lx: no page", addr);
	w->s->res[(addr - w->mm->start) / PG] =
		vs_page_test_flags(page, VS_PG_ZERO) ? 'z' :
		vs_page_test_flags(page, VS_PG_ANON) ? 'a' : 'f';
	return 0;
}

/*
 * The model's residency, and each VMA's "Rss:" and "Anonymous:" as
 * 6.18's smaps_pte_entry() counts them: every present page but the
 * zero page (vm_normal_page() is NULL for it), the anonymous ones
 * apart.  Context: mmap_lock held.
 */
static void snap_model_res(struct vs_mm *mm, struct snap *s)
{
	struct res_walk w = { mm, s };
	unsigned long i;
	size_t k;
	char c;

	memset(s->res, '.', RANGE_PAGES);
	s->res[RANGE_PAGES] = '\0';
	if (vs_pgtable_walk(&mm->pgtable, mm->start, mm->end, res_pte, &w))
		ck_abort_msg("vs_pgtable_walk failed");
	for (k = 0; k < s->n; k++) {
		for (i = (s->v[k].start - mm->start) / PG;
		     i < (s->v[k].end - mm->start) / PG; i++) {
			c = s->res[i];
			s->v[k].rss += c == 'a' || c == 'f';
			s->v[k].anon += c == 'a';
		}
	}
}

/* The model's VMAs and residency.  Context: takes mmap_lock for read. */
static void snap_model(struct vs_mm *mm, struct snap *s)
{
	struct vs_vma *vma;
	struct vrec *v;

	s->n = 0;
	vs_mmap_read_lock(mm);
	for (vma = vs_find_vma(mm, 0); vma;
	     vma = vs_find_vma(mm, vma->vm_end)) {
		if (s->n >= MAX_VMAS)
			ck_abort_msg("more than %lu VMAs", MAX_VMAS);
		v = &s->v[s->n++];
		memset(v, 0, sizeof(*v));
		v->start = vma->vm_start;
		v->end = vma->vm_end;
		v->perm[0] = vma->vm_flags & VS_VM_READ ? 'r' : '-';
		v->perm[1] = vma->vm_flags & VS_VM_WRITE ? 'w' : '-';
		v->perm[2] = vma->vm_flags & VS_VM_EXEC ? 'x' : '-';
		v->perm[3] = vma->vm_flags & VS_VM_MAYSHARE ? 's' : 'p';
		v->perm[4] = '\0';
		v->off = vma->vm_file ? vma->vm_pgoff * PG : 0;
		v->id = v->perm[3] == 's' ? (uintptr_t)vma->vm_file : 0;
	}
	snap_model_res(mm, s);
	vs_mmap_read_unlock(mm);
}

static int vrec_eq(const struct vrec *a, const struct vrec *b)
{
	return a->start == b->start && a->end == b->end &&
	       strcmp(a->perm, b->perm) == 0 && a->off == b->off;
}

static void fmt_vrec(const struct diff *d, const struct vrec *v, char *buf,
		     size_t size)
{
	snprintf(buf, size, "base+%#lx-base+%#lx %s %#lx", v->start - d->base,
		 v->end - d->base, v->perm, v->off);
}

/*
 * Two shared VMAs map one object in the kernel exactly when they map one
 * in the model.  The lists are already equal entry by entry.
 */
static int ids_match(struct diff *d)
{
	const struct snap *k = &d->kern, *m = &d->model;
	size_t i, j;

	for (i = 0; i < k->n; i++) {
		for (j = i + 1; j < k->n; j++) {
			if (!k->v[i].id || !k->v[j].id)
				continue;
			if ((k->v[i].id == k->v[j].id) ==
			    (m->v[i].id == m->v[j].id))
				continue;
			snprintf(d->why, sizeof(d->why),
				 "shared VMAs %zu and %zu: kernel %s one "
				 "object, model %s", i, j,
				 k->v[i].id == k->v[j].id ? "maps" :
				 "does not map",
				 m->v[i].id == m->v[j].id ? "does" :
				 "does not");
			return 0;
		}
	}
	return 1;
}

/* The first page resident on one side only, or -1. */
static long res_differs(const struct snap *k, const struct snap *m)
{
	unsigned long i;

	for (i = 0; i < RANGE_PAGES; i++)
		if ((k->res[i] != '.') != (m->res[i] != '.'))
			return (long)i;
	return -1;
}

/*
 * The same pages are resident, and every VMA has the same "Rss:" and
 * "Anonymous:".  The lists are already equal entry by entry.
 * Return: 1 when they are, else 0 with d->why set.
 */
static int res_match(struct diff *d)
{
	const struct snap *k = &d->kern, *m = &d->model;
	long pg = res_differs(k, m);
	size_t i;

	if (pg >= 0) {
		snprintf(d->why, sizeof(d->why), "%s: page base+%#lx is "
			 "resident in the %s only", d->side,
			 (unsigned long)pg * PG,
			 k->res[pg] != '.' ? "kernel" : "model");
		return 0;
	}
	for (i = 0; i < k->n; i++) {
		if (k->v[i].rss == m->v[i].rss && k->v[i].anon == m->v[i].anon)
			continue;
		snprintf(d->why, sizeof(d->why), "%s: VMA %zu (base+%#lx): "
			 "Rss %lu, Anonymous %lu pages in the kernel, %lu, "
			 "%lu in the model", d->side, i,
			 k->v[i].start - d->base, k->v[i].rss, k->v[i].anon,
			 m->v[i].rss, m->v[i].anon);
		return 0;
	}
	return 1;
}

/* Return: 1 when the snapshots are equal, else 0 with d->why set. */
static int snaps_match(struct diff *d)
{
	const struct snap *k = &d->kern, *m = &d->model;
	char kb[96], mb[96];
	size_t i;

	for (i = 0; i < k->n || i < m->n; i++) {
		if (i < k->n && i < m->n && vrec_eq(&k->v[i], &m->v[i]))
			continue;
		if (i < k->n)
			fmt_vrec(d, &k->v[i], kb, sizeof(kb));
		else
			snprintf(kb, sizeof(kb), "(none)");
		if (i < m->n)
			fmt_vrec(d, &m->v[i], mb, sizeof(mb));
		else
			snprintf(mb, sizeof(mb), "(none)");
		snprintf(d->why, sizeof(d->why),
			 "%s: VMA %zu differs: kernel %s, model %s", d->side,
			 i, kb, mb);
		return 0;
	}
	return ids_match(d) && res_match(d);
}

/* ---- operations -------------------------------------------------------- */

/* The real system call.  Return: its result, or -errno. */
static long real_call(const struct diff *d, const struct op *op)
{
	void *a = (void *)(d->base + op->addr);
	long r;

	errno = 0;
	switch (op->kind) {
	case OP_MMAP:
		r = (long)mmap(a, op->len, op->prot, op->flags, -1, 0);
		break;
	case OP_MUNMAP:
		r = munmap(a, op->len);
		break;
	case OP_MPROTECT:
		r = mprotect(a, op->len, op->prot);
		break;
	case OP_MADVISE:
		r = madvise(a, op->len, op->prot);
		break;
	default:
		/* The raw call: glibc passes new_address only with FIXED. */
		r = syscall(SYS_mremap, a, op->len, op->new_len, op->flags,
			    d->base + op->new_addr);
		break;
	}
	return r == -1 ? -errno : r;
}

static sigjmp_buf touch_env;

/* SIGSEGV or SIGBUS during a touch: back into real_touch(). */
static void touch_fault(int sig)
{
	(void)sig;
	siglongjmp(touch_env, 1);
}

/*
 * Load (@write 0) or store (1) one byte at the start of each of @n pages
 * from @addr, for real, with SIGSEGV and SIGBUS caught.  Nothing but the
 * accesses and sigaction(): a forked child calls it too.
 * Return: @n, or -(1 + i) when page i faulted.
 */
static long real_touch(unsigned long addr, unsigned long n, int write)
{
	struct sigaction sa, old_segv, old_bus;
	volatile unsigned long i = 0;
	volatile char *p;
	long r;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = touch_fault;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	if (sigsetjmp(touch_env, 1) == 0) {
		for (; i < n; i++) {
			p = (volatile char *)(addr + i * PG);
			if (write)
				*p = 1;
			else
				(void)*p;
		}
		r = (long)n;
	} else {
		r = -(long)(1 + i);
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return r;
}

/*
 * The same touch in @mm: vs_access() page by page, as a CPU runs into
 * the fault.  Context: as vs_access(): no lock of @mm held.
 * Return: as real_touch().
 */
static long model_touch(struct vs_mm *mm, unsigned long addr,
			unsigned long n, int write)
{
	unsigned long i;
	int err;

	for (i = 0; i < n; i++) {
		err = vs_access(mm, addr + i * PG, 1, write);
		if (err == -EFAULT)
			return -(long)(1 + i);
		if (err)
			ck_abort_msg("vs_access: %s", vs_strerror(err));
	}
	return (long)n;
}

static long real_op(const struct diff *d, const struct op *op)
{
	if (op->kind == OP_TOUCH)
		return real_touch(d->base + op->addr, op->len / PG, op->prot);
	return real_call(d, op);
}

static long model_op(const struct diff *d, const struct op *op)
{
	unsigned long a = d->base + op->addr;

	switch (op->kind) {
	case OP_MMAP:
		return vs_mmap(d->mm, a, op->len, op->prot, op->flags, NULL,
			       0);
	case OP_MUNMAP:
		return vs_munmap(d->mm, a, op->len);
	case OP_MPROTECT:
		return vs_mprotect(d->mm, a, op->len, op->prot);
	case OP_MADVISE:
		return vs_madvise(d->mm, a, op->len, op->prot);
	case OP_TOUCH:
		return model_touch(d->mm, a, op->len / PG, op->prot);
	default:
		return vs_mremap(d->mm, a, op->len, op->new_len, op->flags,
				 d->base + op->new_addr);
	}
}

/* ---- fork -------------------------------------------------------------- */

/* What a child sends: two reports and its touch's result between. */
static char child_buf[2 * (MAPS_BUF_SIZE + PAGEMAP_BYTES) + 64];

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t r;

	while (len) {
		r = write(fd, p, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* In the child: its smaps, length first, and its pagemap, down @fd. */
static void child_report(int fd, unsigned long base)
{
	ssize_t n = read_proc("/proc/self/smaps", maps_buf, sizeof(maps_buf));

	if (n < 0 || read_pagemap(base, pagemap_buf) != 0)
		_exit(2);
	if (write_all(fd, &n, sizeof(n)) ||
	    write_all(fd, maps_buf, (size_t)n) ||
	    write_all(fd, pagemap_buf, PAGEMAP_BYTES))
		_exit(3);
}

/*
 * The real fork: the child reports, touches as @op says, reports again
 * and exits; it runs no model code and no liburcu, only system calls
 * and the touch.  Its reports land in child_buf.
 */
static void real_fork(struct diff *d, const struct op *op)
{
	size_t n = 0;
	ssize_t r;
	int fds[2], status;
	long t;
	pid_t pid;

	ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		child_report(fds[1], d->base);
		if (op->len) {
			t = real_touch(d->base + op->addr, op->len / PG,
				       op->prot);
			if (write_all(fds[1], &t, sizeof(t)))
				_exit(3);
			child_report(fds[1], d->base);
		}
		_exit(0);
	}
	close(fds[1]);
	while (n < sizeof(child_buf)) {
		r = read(fds[0], child_buf + n, sizeof(child_buf) - n);
		if (r < 0 && errno == EINTR)
			continue;
		ck_assert_msg(r >= 0, "read from the child: %s",
			      strerror(errno));
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "fork child: status %#x", status);
}

/*
 * One report of the child, at *@p in child_buf, into d->kern.
 * Return: as snap_parse(); *@p moves past the report.
 */
static int child_snap(struct diff *d, const char **p)
{
	ssize_t n;

	memcpy(&n, *p, sizeof(n));
	ck_assert(n >= 0 && (size_t)n < sizeof(maps_buf));
	memcpy(maps_buf, *p + sizeof(n), (size_t)n);
	maps_buf[n] = '\0';
	memcpy(pagemap_buf, *p + sizeof(n) + n, PAGEMAP_BYTES);
	*p += sizeof(n) + (size_t)n + PAGEMAP_BYTES;
	return snap_parse(d, &d->kern, maps_buf, pagemap_buf);
}

/*
 * fork() for real and vs_fork() in the model; the children must agree
 * (6.18's vma_needs_copy(): PTEs are copied only for VMAs with an
 * anon_vma), before and after the child's touch.  @op->kret and
 * @op->mret: the two touches' results (0 with none).
 * Context: no lock of d->mm held (vs_fork() takes it).
 * Return: 1 when the children agree, else 0 with d->why set and the
 * children's snapshots in d->kern and d->model.
 */
static int fork_step(struct diff *d, struct op *op)
{
	const char *p = child_buf;
	struct vs_mm *child;
	int err, ok;

	real_fork(d, op);
	err = vs_fork(d->mm, &child);
	ck_assert_msg(err == 0, "vs_fork: %s", vs_strerror(err));
	op->kret = op->mret = 0;
	d->side = "fork child";
	ok = child_snap(d, &p) == 0;
	snap_model(child, &d->model);
	ok = ok && snaps_match(d);
	if (ok && op->len) {
		memcpy(&op->kret, p, sizeof(op->kret));
		p += sizeof(op->kret);
		op->mret = model_touch(child, d->base + op->addr,
				       op->len / PG, op->prot);
		ok = child_snap(d, &p) == 0;
		snap_model(child, &d->model);
		ok = ok && snaps_match(d);
	}
	err = vs_mm_destroy(child);
	ck_assert_msg(err == 0, "vs_mm_destroy: %s", vs_strerror(err));
	if (ok)
		d->side = "parent";
	return ok;
}

/* @r, a result of @op, as a reproduction prints it. */
static void fmt_ret(const struct diff *d, const struct op *op, long r,
		    char *buf, size_t size)
{
	unsigned long u = (unsigned long)r;

	if (op->kind == OP_FORK && !op->len)
		snprintf(buf, size, "0");
	else if (op->kind == OP_TOUCH || op->kind == OP_FORK)
		snprintf(buf, size, r < 0 ? "fault after %ld pages" :
			 "%ld pages", r < 0 ? -r - 1 : r);
	else if (r < 0 && r > -4096)
		snprintf(buf, size, "-%s", vs_err_name((int)r));
	else if (u >= d->base && u <= d->base + RANGE)
		snprintf(buf, size, "base+%#lx", u - d->base);
	else
		snprintf(buf, size, "%#lx", u);
}

/*
 * Apply @op to both sides and compare the results, the VMA lists and
 * what is resident (a fork also compares the children).
 * Return: 1 when they match, else 0 with d->why set.
 */
static int step(struct diff *d, struct op *op)
{
	char kb[64], mb[64];
	int ok;

	d->side = "parent";
	if (op->kind == OP_FORK) {
		if (!fork_step(d, op))
			return 0;
	} else {
		op->kret = real_op(d, op);
		op->mret = model_op(d, op);
	}
	if (op->kret < 0)
		d->err[op->kind]++;
	else
		d->ok[op->kind]++;
	if (snap_kernel(d, &d->kern) != 0)
		return 0;
	snap_model(d->mm, &d->model);
	ok = snaps_match(d);
	if (op->kret != op->mret) {
		fmt_ret(d, op, op->kret, kb, sizeof(kb));
		fmt_ret(d, op, op->mret, mb, sizeof(mb));
		snprintf(d->why, sizeof(d->why),
			 "results differ: kernel %s, model %s", kb, mb);
		return 0;
	}
	return ok;
}

/* ---- the random sequence ---------------------------------------------- */

/* Mostly the protections that merge often, now and then any. */
static int rnd_prot(struct diff *d)
{
	unsigned long r = rnd_below(d, 20);

	if (r < 8)
		return PROT_READ | PROT_WRITE;
	if (r < 13)
		return PROT_READ;
	if (r < 16)
		return PROT_NONE;
	return (int)rnd_below(d, 8);
}

static void clamp_len(unsigned long off, unsigned long *len)
{
	if (*len > RANGE - off)
		*len = RANGE - off;
}

/*
 * Misalign @off by 1..PG-1 bytes, keeping [off, off + len) inside the
 * range (exclusion 1: past the range end the model, like the kernel at
 * TASK_SIZE, says ENOMEM before it looks at the alignment).
 */
static unsigned long misalign(struct diff *d, unsigned long off,
			      unsigned long len)
{
	off += 1 + rnd_below(d, PG - 1);
	if (off + len > RANGE)
		off -= PG;
	return off;
}

/*
 * A page-aligned span inside the range, 1..MAX_OP_PAGES pages.  Often it
 * starts or ends at a VMA boundary of the current state, where the
 * splits and merges happen.
 */
static void rnd_span(struct diff *d, unsigned long *off, unsigned long *len)
{
	const struct snap *s = &d->kern;
	const struct vrec *v;

	*off = rnd_below(d, RANGE_PAGES) * PG;
	*len = (1 + rnd_below(d, MAX_OP_PAGES)) * PG;
	if (s->n && chance(d, 40)) {
		v = &s->v[rnd_below(d, s->n)];
		if (chance(d, 50))
			*off = (chance(d, 50) ? v->start : v->end) - d->base;
		if (chance(d, 50) && v->end - d->base > *off)
			*len = v->end - d->base - *off;
	}
	if (*off >= RANGE)
		*off = RANGE - PG;
	clamp_len(*off, len);
}

/* No VMA of the current state intersects [off, off + len). */
static int span_free(const struct diff *d, unsigned long off,
		     unsigned long len)
{
	unsigned long lo = d->base + off, hi = lo + len;
	size_t i;

	for (i = 0; i < d->kern.n; i++)
		if (d->kern.v[i].start < hi && d->kern.v[i].end > lo)
			return 0;
	return 1;
}

static void gen_mmap(struct diff *d, struct op *op)
{
	unsigned long r = rnd_below(d, 10);

	op->kind = OP_MMAP;
	rnd_span(d, &op->addr, &op->len);
	op->prot = rnd_prot(d);
	op->flags = (chance(d, 20) ? MAP_SHARED : MAP_PRIVATE) |
		    MAP_ANONYMOUS;
	if (r < 7)
		op->flags |= MAP_FIXED;
	else if (r < 9)
		op->flags |= MAP_FIXED_NOREPLACE;
	else if (!span_free(d, op->addr, op->len))
		op->flags |= MAP_FIXED;         /* exclusion 2 */
}

static void gen_span_op(struct diff *d, struct op *op, enum op_kind kind)
{
	op->kind = kind;
	rnd_span(d, &op->addr, &op->len);
	if (kind == OP_MPROTECT)
		op->prot = rnd_prot(d);
	else if (kind == OP_MADVISE)
		op->prot = MADV_DONTNEED;
}

/* Where a move lands: anywhere, or next to a VMA, where it may merge. */
static unsigned long rnd_target(struct diff *d, unsigned long len)
{
	const struct snap *s = &d->kern;
	const struct vrec *v;
	unsigned long off = rnd_below(d, RANGE_PAGES - len / PG + 1) * PG;

	if (s->n && chance(d, 40)) {
		v = &s->v[rnd_below(d, s->n)];
		if (chance(d, 50))
			off = v->end - d->base;
		else if (v->start - d->base >= len)
			off = v->start - d->base - len;
	}
	if (off > RANGE - len)
		off = RANGE - len;
	return off;
}

/* mremap(MAYMOVE | FIXED): same size, smaller, larger, or duplicate. */
static void gen_move(struct diff *d, struct op *op)
{
	unsigned long r = rnd_below(d, 3);

	op->flags = MREMAP_MAYMOVE | MREMAP_FIXED;
	if (chance(d, 5))
		op->len = 0;    /* duplicate: shared mappings only */
	if (r == 0)
		op->new_len = op->len;
	else if (r == 1)
		op->new_len = (1 + rnd_below(d, op->len / PG)) * PG;
	else
		op->new_len = op->len + (1 + rnd_below(d, 16)) * PG;
	if (!op->new_len)
		op->new_len = (1 + rnd_below(d, 16)) * PG;
	op->new_addr = rnd_target(d, op->new_len);
}

/* The old range: mostly part of one VMA, sometimes past its end. */
static void gen_old_range(struct diff *d, struct op *op)
{
	const struct snap *s = &d->kern;
	const struct vrec *v;
	unsigned long first, pages, skip;

	if (!s->n || chance(d, 15)) {
		rnd_span(d, &op->addr, &op->len);
		return;
	}
	v = &s->v[rnd_below(d, s->n)];
	first = (v->start - d->base) / PG;
	pages = (v->end - v->start) / PG;
	skip = chance(d, 50) ? 0 : rnd_below(d, pages);
	op->addr = (first + skip) * PG;
	pages -= skip;
	op->len = (chance(d, 60) ? pages : 1 + rnd_below(d, pages)) * PG;
	if (chance(d, 15))
		op->len += (1 + rnd_below(d, 16)) * PG;
	clamp_len(op->addr, &op->len);
}

static void gen_mremap(struct diff *d, struct op *op)
{
	unsigned long r = rnd_below(d, 10);

	op->kind = OP_MREMAP;
	op->flags = 0;
	op->new_addr = 0;
	gen_old_range(d, op);
	if (r < 3) {
		/* shrink or same size: in place, also with MAYMOVE
		 * (exclusion 3) */
		op->new_len = (1 + rnd_below(d, op->len / PG)) * PG;
		if (chance(d, 50))
			op->flags = MREMAP_MAYMOVE;
	} else if (r < 5) {
		/* grow in place or fail with ENOMEM */
		op->new_len = op->len + (1 + rnd_below(d, 16)) * PG;
		clamp_len(op->addr, &op->new_len);
	} else {
		gen_move(d, op);
	}
}

/* mremap with bad arguments: flags, lengths, alignment. */
static void gen_bad_mremap(struct diff *d, struct op *op)
{
	gen_mremap(d, op);
	switch (rnd_below(d, 5)) {
	case 0:
		op->flags |= 0x10;                      /* unknown flag */
		break;
	case 1:
		op->new_len = 0;
		break;
	case 2:
		op->flags = MREMAP_FIXED;               /* no MAYMOVE */
		break;
	case 3:
		op->flags = MREMAP_MAYMOVE | MREMAP_FIXED;
		op->new_addr = misalign(d, op->new_addr, op->new_len);
		break;
	default:
		op->addr = misalign(d, op->addr, op->len);
		break;
	}
}

/*
 * Arguments the kernel refuses (or, for some, quietly accepts: unknown
 * mmap prot bits, PROT_SEM, zero lengths for mprotect and madvise,
 * lengths that are not page multiples).
 */
static void gen_invalid(struct diff *d, struct op *op)
{
	enum op_kind kind = (enum op_kind)rnd_below(d, NR_CALL_KINDS);
	unsigned long r = rnd_below(d, 8);

	if (kind == OP_MREMAP) {
		gen_bad_mremap(d, op);
		return;
	}
	gen_span_op(d, op, kind);
	if (kind == OP_MMAP) {
		op->prot = rnd_prot(d);
		op->flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;
	}
	if (r == 0) {
		op->len = 0;
	} else if (r == 1) {
		op->addr = misalign(d, op->addr, op->len);
	} else if (r == 2) {
		op->len -= 1 + rnd_below(d, PG - 1);
	} else if (kind == OP_MMAP) {
		if (r == 3)
			op->flags &= ~MAP_PRIVATE;      /* no type */
		else if (r == 4)
			op->flags |= MAP_SHARED;        /* SHARED_VALIDATE */
		else
			op->prot |= 0x10 << (r - 5);    /* ignored */
	} else if (kind == OP_MPROTECT) {
		op->prot |= r == 3 ? PROT_GROWSDOWN | PROT_GROWSUP :
			    r == 4 ? PROT_GROWSDOWN :
			    r == 5 ? 0x8 /* PROT_SEM */ : 0x10 << (r - 6);
	} else if (kind == OP_MADVISE) {
		op->prot = r < 6 ? 0x7fff : MADV_DONTNEED;
	} else {
		op->len = 0;
	}
}

/*
 * May a load from [off, off + len) not be made?  When it meets a
 * PROT_EXEC-only VMA (exclusion 7), or a page of a shared mapping that
 * is not resident (exclusion 9: the fault would map pages around it).
 */
static int load_excluded(const struct diff *d, unsigned long off,
			 unsigned long len)
{
	unsigned long lo = d->base + off, hi = lo + len, a;
	const struct vrec *v;
	size_t i;

	for (i = 0; i < d->kern.n; i++) {
		v = &d->kern.v[i];
		if (v->end <= lo || v->start >= hi)
			continue;
		if (strncmp(v->perm, "--x", 3) == 0)
			return 1;
		if (v->perm[3] != 's')
			continue;
		for (a = lo > v->start ? lo : v->start;
		     a < hi && a < v->end; a += PG)
			if (d->kern.res[(a - d->base) / PG] == '.')
				return 1;
	}
	return 0;
}

/*
 * A touch of 1..MAX_TOUCH_PAGES pages, mostly short: nine in ten inside
 * one VMA (which may not allow it), else anywhere in the range.
 */
static void gen_touch(struct diff *d, struct op *op)
{
	const struct snap *s = &d->kern;
	const struct vrec *v;
	unsigned long pages;

	op->kind = OP_TOUCH;
	op->prot = chance(d, 50);
	pages = 1 + rnd_below(d, chance(d, 70) ? 4 : MAX_TOUCH_PAGES);
	if (s->n && chance(d, 90)) {
		v = &s->v[rnd_below(d, s->n)];
		op->addr = v->start - d->base +
			   rnd_below(d, (v->end - v->start) / PG) * PG;
		op->len = pages * PG;
		if (op->addr + op->len > v->end - d->base)
			op->len = v->end - d->base - op->addr;
	} else {
		op->addr = rnd_below(d, RANGE_PAGES) * PG;
		op->len = pages * PG;
		clamp_len(op->addr, &op->len);
	}
	if (load_excluded(d, op->addr, op->len))
		op->prot = 1;
}

/* A fork; in three of five the child then stores, as a touch would. */
static void gen_fork(struct diff *d, struct op *op)
{
	if (chance(d, 60)) {
		gen_touch(d, op);
		op->prot = 1;
	}
	op->kind = OP_FORK;
}

static void gen_op(struct diff *d, struct op *op)
{
	unsigned long r = rnd_below(d, 100);

	memset(op, 0, sizeof(*op));
	if (r < 22)
		gen_mmap(d, op);
	else if (r < 33)
		gen_span_op(d, op, OP_MUNMAP);
	else if (r < 47)
		gen_span_op(d, op, OP_MPROTECT);
	else if (r < 54)
		gen_span_op(d, op, OP_MADVISE);
	else if (r < 74)
		gen_mremap(d, op);
	else if (r < 79)
		gen_invalid(d, op);
	else if (r < 99)
		gen_touch(d, op);
	else
		gen_fork(d, op);
}

/* ---- reproductions ----------------------------------------------------- */

struct bitname {
	int bit;
	const char *name;
};

static const struct bitname prot_names[] = {
	{ PROT_READ, "PROT_READ" },
	{ PROT_WRITE, "PROT_WRITE" },
	{ PROT_EXEC, "PROT_EXEC" },
	{ PROT_GROWSDOWN, "PROT_GROWSDOWN" },
	{ PROT_GROWSUP, "PROT_GROWSUP" },
};

static const struct bitname map_names[] = {
	{ MAP_SHARED, "MAP_SHARED" },
	{ MAP_PRIVATE, "MAP_PRIVATE" },
	{ MAP_ANONYMOUS, "MAP_ANONYMOUS" },
	{ MAP_FIXED, "MAP_FIXED" },
	{ MAP_FIXED_NOREPLACE, "MAP_FIXED_NOREPLACE" },
};

static const struct bitname mremap_names[] = {
	{ MREMAP_MAYMOVE, "MREMAP_MAYMOVE" },
	{ MREMAP_FIXED, "MREMAP_FIXED" },
};

/* @val as NAME|NAME|0x..; @zero when it is 0. */
static void fmt_bits(char *buf, size_t size, int val,
		     const struct bitname *t, size_t n, const char *zero)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < n && len < size; i++) {
		if (!(val & t[i].bit))
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					len ? "|" : "", t[i].name);
		val &= ~t[i].bit;
	}
	if (len >= size)
		return;
	if (!len && !val)
		snprintf(buf, size, "%s", zero);
	else if (val)
		snprintf(buf + len, size - len, "%s%#x", len ? "|" : "", val);
}

static void fmt_op(const struct op *op, char *buf, size_t size)
{
	char a[128], b[128];

	switch (op->kind) {
	case OP_MMAP:
		fmt_bits(a, sizeof(a), op->prot, prot_names,
			 VS_ARRAY_SIZE(prot_names), "PROT_NONE");
		fmt_bits(b, sizeof(b), op->flags, map_names,
			 VS_ARRAY_SIZE(map_names), "0");
		snprintf(buf, size, "mmap(base+%#lx, %#lx, %s, %s, -1, 0)",
			 op->addr, op->len, a, b);
		break;
	case OP_MUNMAP:
		snprintf(buf, size, "munmap(base+%#lx, %#lx)", op->addr,
			 op->len);
		break;
	case OP_MPROTECT:
		fmt_bits(a, sizeof(a), op->prot, prot_names,
			 VS_ARRAY_SIZE(prot_names), "PROT_NONE");
		snprintf(buf, size, "mprotect(base+%#lx, %#lx, %s)",
			 op->addr, op->len, a);
		break;
	case OP_MADVISE:
		if (op->prot == MADV_DONTNEED)
			snprintf(a, sizeof(a), "MADV_DONTNEED");
		else
			snprintf(a, sizeof(a), "%#x", op->prot);
		snprintf(buf, size, "madvise(base+%#lx, %#lx, %s)", op->addr,
			 op->len, a);
		break;
	case OP_TOUCH:
		snprintf(buf, size, "%s_pages(base+%#lx, %lu)",
			 op->prot ? "write" : "read", op->addr, op->len / PG);
		break;
	case OP_FORK:
		if (op->len)
			snprintf(buf, size, "fork() /* child: write_pages("
				 "base+%#lx, %lu) */", op->addr,
				 op->len / PG);
		else
			snprintf(buf, size, "fork()");
		break;
	default:
		fmt_bits(a, sizeof(a), op->flags, mremap_names,
			 VS_ARRAY_SIZE(mremap_names), "0");
		snprintf(buf, size,
			 "mremap(base+%#lx, %#lx, %#lx, %s, base+%#lx)",
			 op->addr, op->len, op->new_len, a, op->new_addr);
		break;
	}
}

/* A snapshot: its VMAs with Rss and Anonymous, then page by page. */
static void print_snap(const struct diff *d, const char *who,
		       const struct snap *s)
{
	char buf[96];
	size_t i;

	fprintf(stderr, "%s's %s VMAs in the range (%zu):\n", d->side, who,
		s->n);
	for (i = 0; i < s->n; i++) {
		fmt_vrec(d, &s->v[i], buf, sizeof(buf));
		fprintf(stderr, "  %s  rss %lu anon %lu", buf, s->v[i].rss,
			s->v[i].anon);
		if (s->v[i].id)
			fprintf(stderr, "  object %#" PRIxPTR, s->v[i].id);
		fprintf(stderr, "\n");
	}
	fprintf(stderr, "%s's %s residency, 64 pages a line:\n", d->side,
		who);
	for (i = 0; i < RANGE_PAGES; i += 64)
		fprintf(stderr, "  base+0x%05zx %.64s\n", i * PG, s->res + i);
}

/* The last @n operations (the shrunk sequence) and both VMA lists. */
static void print_ops(const struct diff *d, const struct op *ops, size_t n)
{
	char buf[384], kb[64], mb[64];
	size_t i = n > 60 ? n - 60 : 0;

	if (i)
		fprintf(stderr, "  ... (%zu operations left out)\n", i);
	for (; i < n; i++) {
		fmt_op(&ops[i], buf, sizeof(buf));
		fmt_ret(d, &ops[i], ops[i].kret, kb, sizeof(kb));
		fmt_ret(d, &ops[i], ops[i].mret, mb, sizeof(mb));
		if (ops[i].kret == ops[i].mret)
			fprintf(stderr, "  %s = %s;\n", buf, kb);
		else
			fprintf(stderr, "  %s = %s; /* model: %s */\n", buf,
				kb, mb);
	}
	fprintf(stderr, "then: %s\n", d->why);
	print_snap(d, "kernel", &d->kern);
	print_snap(d, "model", &d->model);
}

/* ---- running a seed ---------------------------------------------------- */

/* A hinted mmap over a range that is not free (exclusion 2)? */
static int hint_taken(const struct diff *d, const struct op *op)
{
	return op->kind == OP_MMAP &&
	       !(op->flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) &&
	       !span_free(d, op->addr, op->len);
}

/*
 * Replay @n operations from an empty range.  A sequence that shrinking
 * left with a hinted mmap over mapped pages (exclusion 2) is no
 * reproduction.
 * Return: the index of the first that fails, or -1.
 */
static long replay(struct diff *d, struct op *ops, size_t n)
{
	size_t i;

	range_reset(d);
	ck_assert_msg(snap_kernel(d, &d->kern) == 0, "%s", d->why);
	for (i = 0; i < n; i++) {
		if (hint_taken(d, &ops[i]))
			return -1;
		if (!step(d, &ops[i]))
			return (long)i;
	}
	return -1;
}

/*
 * Shrink the failing sequence d->ops[0, n): drop chunks of n/2, n/4, ...
 * 1 operations while a replay still fails somewhere, and cut the
 * sequence after the failing one.  Bounded by SHRINK_NS.
 * Return: the new length.
 */
static size_t shrink(struct diff *d, size_t n)
{
	int64_t end = vs_test_now_ns() + SHRINK_NS;
	size_t chunk, i, sz = sizeof(*d->ops);
	long f;

	for (chunk = n / 2; chunk > 0; chunk /= 2) {
		for (i = 0; i + chunk <= n && n > 1;) {
			if (vs_test_now_ns() > end)
				return n;
			memcpy(d->tmp, d->ops, i * sz);
			memcpy(d->tmp + i, d->ops + i + chunk,
			       (n - i - chunk) * sz);
			f = replay(d, d->tmp, n - chunk);
			if (f < 0) {
				i += chunk;
				continue;
			}
			n = (size_t)f + 1;
			memcpy(d->ops, d->tmp, n * sz);
		}
	}
	return n;
}

static void report(struct diff *d, uint64_t seed, size_t at)
{
	char why[sizeof(d->why)];
	size_t n;
	long f;

	memcpy(why, d->why, sizeof(why));
	fprintf(stderr, "\ndiff: seed %" PRIu64 ", step %zu: %s\n"
		"rerun: VS_DIFF_SEED=%" PRIu64 " VS_DIFF_STEPS=%zu "
		"CK_RUN_SUITE=diff vmsim-test\n", seed, at, why, seed, at + 1);
	n = shrink(d, at + 1);
	f = replay(d, d->ops, n);
	if (f < 0) {
		fprintf(stderr, "(a replay from an empty range does not fail: "
			"the difference depends on more than the sequence)\n");
		return;
	}
	fprintf(stderr, "reproduction, from an empty range at base "
		"(%ld operations):\n", f + 1);
	print_ops(d, d->ops, (size_t)f + 1);
}

static size_t nr_steps(void)
{
	const char *env = getenv("VS_DIFF_STEPS");

	if (env && *env)
		return (size_t)strtoul(env, NULL, 0);
	return (size_t)vs_test_scale(STEPS_PER_SEED);
}

/* Every kind of operation both succeeded and failed at least once (a
 * fork cannot fail). */
static void check_coverage(const struct diff *d)
{
	static const char *const names[NR_OP_KINDS] = {
		"mmap", "munmap", "mprotect", "madvise", "mremap", "touch",
		"fork",
	};
	int k;

	for (k = 0; k < NR_OP_KINDS; k++)
		ck_assert_msg(d->ok[k] && (d->err[k] || k == OP_FORK),
			      "%s: %lu succeeded, %lu failed", names[k],
			      d->ok[k], d->err[k]);
}

/* Return: the failing step, or -1. */
static long run_steps(struct diff *d, size_t steps)
{
	size_t i;

	ck_assert_msg(snap_kernel(d, &d->kern) == 0, "%s", d->why);
	snap_model(d->mm, &d->model);
	ck_assert_msg(snaps_match(d), "empty range: %s", d->why);
	for (i = 0; i < steps; i++) {
		gen_op(d, &d->ops[i]);
		if (!step(d, &d->ops[i]))
			return (long)i;
	}
	return -1;
}

static void run_seed(uint64_t seed)
{
	struct diff *d = &diff;
	size_t steps = nr_steps();
	char why[sizeof(d->why)];
	long at;

	memset(d, 0, sizeof(*d));
	d->rng = seed * UINT64_C(0x9e3779b97f4a7c15) + 1;
	/* allocated before the range exists, never while it is in use */
	d->ops = calloc(steps + 1, sizeof(*d->ops));
	d->tmp = calloc(steps + 1, sizeof(*d->tmp));
	ck_assert(d->ops && d->tmp);
	range_reserve(d);
	model_create(d);
	at = run_steps(d, steps);
	memcpy(why, d->why, sizeof(why));
	if (at >= 0)
		report(d, seed, (size_t)at);
	range_release(d);
	free(d->ops);
	free(d->tmp);
	ck_assert_msg(at < 0, "seed %" PRIu64 ", step %ld: %s", seed, at,
		      why);
	if (steps >= 1000)
		check_coverage(d);
}

/*
 * The comparison has teeth: a change made to the kernel's side only is
 * seen, in what is resident, in the VMA list and in a result.
 */
START_TEST(diff_detects_divergence)
{
	struct diff *d = &diff;
	struct op op = {
		.kind = OP_MMAP,
		.len = 4 * PG,
		.prot = PROT_READ | PROT_WRITE,
		.flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
	};

	ck_assert_int_eq(vs_thread_attach(), 0);
	memset(d, 0, sizeof(*d));
	range_reserve(d);
	model_create(d);
	ck_assert_msg(step(d, &op), "%s", d->why);
	/* a store in the kernel only: resident there, and in its Rss */
	*(volatile char *)(d->base + 3 * PG) = 1;
	ck_assert_int_eq(snap_kernel(d, &d->kern), 0);
	snap_model(d->mm, &d->model);
	ck_assert(!snaps_match(d));
	ck_assert_ptr_nonnull(strstr(d->why, "resident in the kernel only"));
	ck_assert_int_eq(madvise((void *)(d->base + 3 * PG), PG,
				 MADV_DONTNEED), 0);
	ck_assert_int_eq(mprotect((void *)(d->base + PG), PG, PROT_READ), 0);
	ck_assert_int_eq(snap_kernel(d, &d->kern), 0);
	snap_model(d->mm, &d->model);
	ck_assert(!snaps_match(d));
	ck_assert_ptr_nonnull(strstr(d->why, "VMA 0 differs"));

	/* page 0 gone from the kernel only: madvise fails there alone */
	ck_assert_int_eq(munmap((void *)d->base, PG), 0);
	op.kind = OP_MADVISE;
	op.len = PG;
	op.prot = MADV_DONTNEED;
	ck_assert(!step(d, &op));
	ck_assert_ptr_nonnull(strstr(d->why, "results differ"));
	range_release(d);
}
END_TEST

/* One seed per iteration; VS_DIFF_SEED=N runs seed N alone. */
START_TEST(diff_random)
{
	const char *env = getenv("VS_DIFF_SEED");
	uint64_t seed = (uint64_t)_i + 1;

	ck_assert_int_eq(vs_thread_attach(), 0);
	if (env && *env) {
		if (_i != 0)
			return;
		seed = strtoull(env, NULL, 0);
	}
	run_seed(seed);
}
END_TEST

/*
 * The kernel semantics vm/ follows are Linux 6.18's (see the list above);
 * an older kernel differs on exactly those operations, so the suite does
 * not run there.  Return: NULL when the running kernel is new enough,
 * else why not.
 */
const char *diff_unsupported(void)
{
	static char why[160];
	struct utsname u;
	int major = 0, minor = 0;

	if (VS_VCPU)
		return "the host kernel is not on virtual CPUs";
	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return "cannot read the kernel version (uname)";
	if (major > 6 || (major == 6 && minor >= 18))
		return NULL;
	snprintf(why, sizeof(why), "kernel %d.%d is older than 6.18, whose "
		 "mremap/mprotect semantics vm/ follows (docs/vm.md)",
		 major, minor);
	return why;
}

Suite *diff_suite(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = vs_test_tcase(s, "kernel");

	vs_test_add(tc, diff_detects_divergence);
	vs_test_add_loop(tc, NR_SEEDS, diff_random);
	return s;
}
