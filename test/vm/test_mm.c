/* SPDX-License-Identifier: MIT */
/*
 * Tests for vmsim/mm.h: the address-space operations with the kernel's
 * semantics.  Each operation's edge cases and error codes, splits and
 * merges (checked on the VMA list), the /proc/pid/maps dump, and the
 * accounting: RSS equals the present PTEs that map a page, and every
 * page is back in the pool after vs_mm_destroy().
 */
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/fail.h>
#include <vmsim/fault.h>
#include <vmsim/file.h>
#include <vmsim/mm.h>
#include <vmsim/pgtable.h>
#include <vmsim/rcu.h>
#include <vmsim/slab.h>
#include <vmsim/thread.h>

#include "test.h"
#include "vm/internal.h"

#define PG VS_PAGE_SIZE
#define POOL 512
#define RW (VS_PROT_READ | VS_PROT_WRITE)
#define ANON (VS_MAP_PRIVATE | VS_MAP_ANONYMOUS)
#define SHANON (VS_MAP_SHARED | VS_MAP_ANONYMOUS)
#define FIX (ANON | VS_MAP_FIXED)
#define A0 0x100000000UL /* a fixed spot well inside the default range */
#define VMFL_RW (VS_VM_READ | VS_VM_WRITE | VS_VM_MAYREAD | \
		 VS_VM_MAYWRITE | VS_VM_MAYEXEC)
/* A private writable mapping is charged (VM_ACCOUNT); a shared one not. */
#define VMFL_RW_PRIV (VMFL_RW | VS_VM_ACCOUNT)

struct range {
	unsigned long start, end, flags;
};


/* Free pages once the LRU batches have dropped their references. */
static size_t pool_free(struct vs_page_pool *pool)
{
	vs_lru_drain_all(pool);
	return vs_page_pool_free_pages(pool);
}
static struct vs_mm *mm_new(void)
{
	struct vs_mm_options o = { .pool_pages = POOL };
	struct vs_mm *mm = NULL;

	ck_assert_int_eq(vs_thread_attach(), 0);
	ck_assert_int_eq(vs_mm_create(&mm, &o), 0);
	return mm;
}

/*
 * Every page back in the pool once the mm is gone: vs_mm_destroy()
 * destroys the pool, which fails (-EBUSY) while a page is referenced.
 */
static void mm_done(struct vs_mm *mm)
{
	ck_assert_int_eq(vs_mm_destroy(mm), 0);
}

/* The flags of the VMA containing @addr, read under mmap_lock. */
static unsigned long vma_flags_at(struct vs_mm *mm, unsigned long addr)
{
	struct vs_vma *v;
	unsigned long f = 0;

	vs_mmap_read_lock(mm);
	v = vs_vma_lookup(mm, addr);
	if (v)
		f = v->vm_flags;
	vs_mmap_read_unlock(mm);
	ck_assert_ptr_nonnull(v);
	return f;
}

/* The file of the VMA containing @addr, read under mmap_lock; the VMA
 * keeps its reference while nothing unmaps it. */
static struct vs_file *vma_file_at(struct vs_mm *mm, unsigned long addr)
{
	struct vs_file *f = NULL;
	struct vs_vma *v;

	vs_mmap_read_lock(mm);
	v = vs_vma_lookup(mm, addr);
	if (v)
		f = v->vm_file;
	vs_mmap_read_unlock(mm);
	ck_assert_ptr_nonnull(v);
	return f;
}

/* The VMA list, under mmap_lock for read. */
static int vmas(struct vs_mm *mm, struct range *r, int max)
{
	struct vs_vma *v;
	int n = 0;

	vs_mmap_read_lock(mm);
	for (v = vs_find_vma(mm, 0); v; v = vs_find_vma(mm, v->vm_end)) {
		if (n < max) {
			r[n].start = v->vm_start;
			r[n].end = v->vm_end;
			r[n].flags = v->vm_flags;
		}
		n++;
	}
	vs_mmap_read_unlock(mm);
	return n;
}

static void expect(struct vs_mm *mm, int n, const unsigned long *se)
{
	struct range r[16];
	int i, got = vmas(mm, r, 16);

	ck_assert_int_eq(got, n);
	for (i = 0; i < n; i++) {
		ck_assert_msg(r[i].start == se[2 * i] && r[i].end ==
			      se[2 * i + 1], "vma %d: %lx-%lx, want %lx-%lx",
			      i, r[i].start, r[i].end, se[2 * i],
			      se[2 * i + 1]);
	}
}

struct count {
	struct vs_mm *mm;
	long pages, zero, writable;
};

static int count_pte(vs_atomic64_t *ptep, unsigned long addr, void *arg)
{
	struct count *c = arg;
	uint64_t v = vs_ptep_get(ptep);

	(void)addr;
	if (vs_pte_pfn(v) == 0)
		c->zero++;
	else
		c->pages++;
	if (vs_pte_write(v))
		c->writable++;
	return 0;
}

static struct count ptes(struct vs_mm *mm, unsigned long s, unsigned long e)
{
	struct count c = { mm, 0, 0, 0 };

	vs_mmap_read_lock(mm);
	ck_assert_int_eq(vs_pgtable_walk(&mm->pgtable, s, e, count_pte, &c),
			 0);
	vs_mmap_read_unlock(mm);
	return c;
}

/* RSS is the number of present PTEs that map a page (not the zero). */
static void check_rss(struct vs_mm *mm)
{
	struct count c = ptes(mm, mm->start, mm->end);
	long rss = vs_get_mm_counter(mm, VS_MM_ANONPAGES) + vs_get_mm_counter(mm, VS_MM_FILEPAGES) +
		   vs_get_mm_counter(mm, VS_MM_SHMEMPAGES);

	ck_assert_int_eq(rss, c.pages);
}

static unsigned long map_fixed(struct vs_mm *mm, unsigned long a, size_t len,
			       int prot, int flags)
{
	long r = vs_mmap(mm, a, len, prot, flags | VS_MAP_FIXED, NULL, 0);

	ck_assert_int_eq(r, (long)a);
	return a;
}

/* ---- create / destroy ---------------------------------------------------- */

START_TEST(mm_create_args)
{
	struct vs_mm_options o = { 0 };
	struct vs_mm *mm;
	const char *kind;
	int i;

	ck_assert_int_eq(vs_mm_create(NULL, NULL), -EINVAL);
	ck_assert_int_eq(vs_mm_destroy(NULL), -EINVAL);
	o.lock_kind = "nosuch";
	ck_assert_int_eq(vs_mm_create(&mm, &o), -EINVAL);
	o.lock_kind = NULL;
	o.start = 0x20000;
	o.end = 0x10000;
	ck_assert_int_eq(vs_mm_create(&mm, &o), -EINVAL);
	o.start = 0x10001;
	o.end = 0x20000;
	ck_assert_int_eq(vs_mm_create(&mm, &o), -EINVAL);
	o.start = 0x10000;
	o.end = VS_TASK_SIZE + PG;
	ck_assert_int_eq(vs_mm_create(&mm, &o), -EINVAL);
	o.start = 0;
	o.end = 0x10000 + 64 * PG; /* start defaults */
	ck_assert_int_eq(vs_mm_create(&mm, &o), 0);
	ck_assert_uint_eq(mm->start, 0x10000);
	ck_assert_uint_eq(mm->start_brk, 0x10000 + 16 * PG);
	ck_assert_int_eq(vs_mm_destroy(mm), 0);
	ck_assert_int_eq(vs_mm_create(&mm, NULL), 0);
	ck_assert_uint_eq(mm->start, 0x10000);
	ck_assert_uint_eq(mm->start_brk, 0x10000 + (16UL << 20));
	ck_assert_uint_eq(mm->end, 1UL << 47);
	ck_assert_uint_eq(mm->brk, mm->start_brk);
	ck_assert_int_eq(vs_mm_destroy(mm), 0);
	for (i = 0; (kind = vs_lock_kind_name(i)); i++) {
		struct vs_mm_options k = { .lock_kind = kind, .pool_pages = 16,
					   .ptl_per_mm = i & 1 };

		ck_assert_int_eq(vs_mm_create(&mm, &k), 0);
		ck_assert_int_eq(vs_mmap(mm, 0, 4 * PG, RW,
					 ANON | VS_MAP_POPULATE, NULL, 0),
				 (long)(mm->end - 4 * PG));
		vs_mmap_write_lock(mm);
		vs_mmap_write_unlock(mm);
		ck_assert_int_eq(vs_mm_destroy(mm), 0);
	}
}
END_TEST

/* mm_lock_seq: a counter advanced at write unlock (before 6.13), or a
 * seqcount, odd while the lock is write-held (6.13 on). */
START_TEST(mm_lock_seq)
{
	struct vs_mm *mm = mm_new();
	uint32_t seq = vs_read_once(&mm->mm_lock_seq);
	uint32_t odd = mm->mech.mm_lock_seqcount;
	struct vs_vma *v;

	map_fixed(mm, A0, PG, RW, ANON);
	ck_assert_uint_eq(vs_read_once(&mm->mm_lock_seq), seq + 1 + odd);
	seq = vs_read_once(&mm->mm_lock_seq);
	ck_assert_uint_eq(seq & odd, 0);
	vs_mmap_write_lock(mm);
	ck_assert_uint_eq(vs_read_once(&mm->mm_lock_seq), seq + odd);
	v = vs_vma_lookup(mm, A0);
	ck_assert_ptr_nonnull(v);
	ck_assert(!vs_vma_is_write_marked(v));
	vs_vma_start_write(v);
	ck_assert_uint_eq(vs_read_once(&v->vm_lock_seq), seq + odd);
	ck_assert(vs_vma_is_write_marked(v));
	/* The writer alone: no reader holds vm_refcnt. */
	ck_assert_uint_eq(vs_read_once(&v->vm_refcnt),
			  mm->mech.vma_lock == VS_VMA_LOCK_REFCNT);
	vs_mmap_write_downgrade(mm);
	ck_assert_uint_eq(vs_read_once(&mm->mm_lock_seq), seq + 1 + odd);
	ck_assert(!vs_vma_is_write_marked(v));
	vs_mmap_read_unlock(mm);
	ck_assert(vs_mmap_read_trylock(mm));
	ck_assert_ptr_eq(vs_find_vma(mm, 0), v);
	ck_assert_ptr_null(vs_vma_lookup(mm, A0 + PG));
	ck_assert_ptr_null(vs_find_vma(mm, A0 + PG));
	vs_mmap_read_unlock(mm);
	mm_done(mm);
}
END_TEST

/*
 * 6.13's mmap_lock_speculate_try_begin()/retry(): a lockless read of a
 * VMA field (vs_find_vma() inside RCU) that the mm_lock_seq validates.
 * A counter kernel never speculates.
 */
START_TEST(mmap_lock_speculate)
{
	struct vs_mm *mm = mm_new();
	bool seqcount = mm->mech.mm_lock_seqcount;
	unsigned long flags = 0;
	struct vs_vma *v;
	uint32_t seq;

	map_fixed(mm, A0, 2 * PG, RW, ANON);
	ck_assert(!vs_mmap_lock_speculate_try_begin(NULL, &seq));
	ck_assert(!vs_mmap_lock_speculate_try_begin(mm, NULL));
	ck_assert(vs_mmap_lock_speculate_retry(NULL, 0));
	ck_assert(vs_mmap_lock_speculate_try_begin(mm, &seq) == seqcount);
	if (!seqcount) {
		mm_done(mm);
		return;
	}
	vs_rcu_read_lock();
	v = vs_find_vma(mm, A0);
	if (v && vs_read_once(&v->vm_start) <= A0)
		flags = vs_read_once(&v->vm_flags);
	vs_rcu_read_unlock();
	ck_assert(!vs_mmap_lock_speculate_retry(mm, seq));
	ck_assert_uint_eq(flags & (VS_VM_READ | VS_VM_WRITE),
			  VS_VM_READ | VS_VM_WRITE);
	/* A writer since: the read is discarded. */
	ck_assert_int_eq(vs_mprotect(mm, A0, PG, VS_PROT_READ), 0);
	ck_assert(vs_mmap_lock_speculate_retry(mm, seq));
	/* Never while one holds the lock; again once it is gone. */
	vs_mmap_write_lock(mm);
	ck_assert(!vs_mmap_lock_speculate_try_begin(mm, &seq));
	vs_mmap_write_unlock(mm);
	ck_assert(vs_mmap_lock_speculate_try_begin(mm, &seq));
	ck_assert(!vs_mmap_lock_speculate_retry(mm, seq));
	/* A downgrade ends the write section. */
	vs_mmap_write_lock(mm);
	vs_mmap_write_downgrade(mm);
	ck_assert(vs_mmap_lock_speculate_try_begin(mm, &seq));
	vs_mmap_read_unlock(mm);
	ck_assert(!vs_mmap_lock_speculate_retry(mm, seq));
	mm_done(mm);
}
END_TEST

/*
 * vm_refcnt (6.15 on): 1 while the VMA is in the index, 0 once out.
 * With the typesafe cache (6.15 on) the removed VMA is reused at once
 * (the same thread's magazine), its vm_sequence still counting; before,
 * it waits for a grace period.
 */
START_TEST(vma_refcnt_and_reuse)
{
	struct vs_mm *mm = mm_new();
	int refcnt = mm->mech.vma_lock == VS_VMA_LOCK_REFCNT;
	struct vs_vma *v, *w;
	uint32_t seq;

	map_fixed(mm, A0, PG, RW, ANON);
	vs_mmap_read_lock(mm);
	v = vs_vma_lookup(mm, A0);
	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(vs_read_once(&v->vm_refcnt), refcnt);
	ck_assert_uint_eq(vs_read_once(&v->vm_detached), 0);
	vs_mmap_read_unlock(mm);
	seq = vs_read_once(&v->vm_sequence.sequence);
	ck_assert_int_eq(vs_munmap(mm, A0, PG), 0);
	map_fixed(mm, A0 + 4 * PG, PG, RW, ANON);
	vs_mmap_read_lock(mm);
	w = vs_vma_lookup(mm, A0 + 4 * PG);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(vs_read_once(&w->vm_refcnt), refcnt);
	if (mm->mech.vma_typesafe) {
		ck_assert_ptr_eq(w, v);
		/* The removal's section and the insert's: two more. */
		ck_assert_uint_eq(vs_read_once(&w->vm_sequence.sequence),
				  seq + 4);
	} else {
		ck_assert_ptr_ne(w, v);
	}
	vs_mmap_read_unlock(mm);
	mm_done(mm);
}
END_TEST

/* Did @mm's last write section mark @v?  Context: mmap_lock not
 * write-held. */
static int marked_last(struct vs_mm *mm, struct vs_vma *v)
{
	return vs_read_once(&v->vm_lock_seq) ==
	       vs_read_once(&mm->mm_lock_seq) - 1;
}

/*
 * dup_mmap() write-locks every VMA of the parent from 6.5 and 6.4.y on
 * (fork_lock_all), only those whose PTEs it copies before: the private
 * one, written (it has an anon_vma), but not a shared anonymous
 * mapping, which vma_needs_copy() leaves to faults.
 */
START_TEST(fork_locks_vmas)
{
	struct vs_mm *mm = mm_new(), *child;
	struct vs_vma *anon, *shared;

	map_fixed(mm, A0, PG, RW, ANON);
	ck_assert_int_eq(vs_mmap(mm, A0 + 4 * PG, PG, RW,
				  VS_MAP_SHARED | VS_MAP_ANONYMOUS |
				  VS_MAP_FIXED, NULL, 0), (long)(A0 + 4 * PG));
	ck_assert_int_eq(vs_write(mm, A0, "x", 1), 0);
	ck_assert_int_eq(vs_fork(mm, &child), 0);
	vs_mmap_read_lock(mm);
	anon = vs_vma_lookup(mm, A0);
	shared = vs_vma_lookup(mm, A0 + 4 * PG);
	ck_assert(marked_last(mm, anon));
	ck_assert(marked_last(mm, shared) == !!mm->mech.fork_lock_all);
	vs_mmap_read_unlock(mm);
	mm_done(child);
	mm_done(mm);
}
END_TEST

/* ---- mmap ---------------------------------------------------------------- */

START_TEST(mmap_errors)
{
	struct vs_mm *mm = mm_new();

	ck_assert_int_eq(vs_mmap(NULL, 0, PG, RW, ANON, NULL, 0), -EINVAL);
	ck_assert_int_eq(vs_mmap(mm, 0, 0, RW, ANON, NULL, 0), -EINVAL);
	ck_assert_int_eq(vs_mmap(mm, 0, (size_t)-1, RW, ANON, NULL, 0),
			 -ENOMEM);
	ck_assert_int_eq(vs_mmap(mm, 0, 1UL << 48, RW, ANON, NULL, 0),
			 -ENOMEM);
	ck_assert_int_eq(vs_mmap(mm, 0, PG, RW, VS_MAP_ANONYMOUS, NULL, 0),
			 -EINVAL);
	ck_assert_int_eq(vs_mmap(mm, 0, PG, RW, ANON | VS_MAP_SHARED, NULL,
				 0), -EINVAL);
	ck_assert_int_eq(vs_mmap(mm, A0 + 1, PG, RW, FIX, NULL, 0), -EINVAL);
	ck_assert_int_eq(vs_mmap(mm, 0, PG, RW, ANON, NULL, 1), -EINVAL);
	ck_assert_int_eq(vs_mmap(mm, 0, PG, RW, VS_MAP_PRIVATE, NULL, 0),
			 -EBADF);
	/* Fixed outside [start, end). */
	ck_assert_int_eq(vs_mmap(mm, 0, PG, RW, FIX, NULL, 0), -ENOMEM);
	ck_assert_int_eq(vs_mmap(mm, mm->end, PG, RW, FIX, NULL, 0),
			 -ENOMEM);
	ck_assert_int_eq(vs_mmap(mm, mm->end - PG, 2 * PG, RW, FIX, NULL, 0),
			 -ENOMEM);
	/* Out of range beats misaligned, as in __get_unmapped_area. */
	ck_assert_int_eq(vs_mmap(mm, mm->end + 1, PG, RW, FIX, NULL, 0),
			 -ENOMEM);
	ck_assert_int_eq(vs_mmap(mm, mm->end - PG, PG, RW, FIX, NULL, 0),
			 (long)(mm->end - PG));
	ck_assert_int_eq(vs_mmap(mm, mm->end - 2 * PG, 2 * PG, RW,
				 ANON | VS_MAP_FIXED_NOREPLACE, NULL, 0),
			 -EEXIST);
	ck_assert_int_eq(vs_mmap(mm, mm->end - 2 * PG, PG, RW,
				 ANON | VS_MAP_FIXED_NOREPLACE, NULL, 0),
			 (long)(mm->end - 2 * PG));
	ck_assert_int_eq(vs_mmap(mm, A0 + 1, PG, RW,
				 ANON | VS_MAP_FIXED_NOREPLACE, NULL, 0),
			 -EINVAL);
	mm_done(mm);
}
END_TEST

START_TEST(mmap_topdown_merge)
{
	struct vs_mm *mm = mm_new();
	unsigned long top = mm->end;
	struct range r[4];
	long a, b, c;

	a = vs_mmap(mm, 0, 3 * PG, RW, ANON, NULL, 0);
	ck_assert_int_eq(a, (long)(top - 3 * PG));
	b = vs_mmap(mm, 0, PG + 1, RW, ANON, NULL, 0); /* rounds to 2 pages */
	ck_assert_int_eq(b, a - 2 * (long)PG);
	ck_assert_int_eq(vmas(mm, r, 4), 1); /* merged */
	ck_assert_uint_eq(r[0].start, (unsigned long)b);
	ck_assert_uint_eq(r[0].end, top);
	ck_assert_uint_eq(r[0].flags, VMFL_RW_PRIV);
	/* A different protection does not merge. */
	c = vs_mmap(mm, 0, PG, VS_PROT_READ, ANON, NULL, 0);
	ck_assert_int_eq(c, b - (long)PG);
	ck_assert_int_eq(vmas(mm, r, 4), 2);
	/* Shared anonymous never merges, even with itself. */
	a = vs_mmap(mm, 0, PG, RW, SHANON, NULL, 0);
	b = vs_mmap(mm, 0, PG, RW, SHANON, NULL, 0);
	ck_assert_int_eq(b, a - (long)PG);
	ck_assert_int_eq(vmas(mm, r, 4), 4);
	ck_assert_uint_eq(r[0].flags, VMFL_RW | VS_VM_SHARED |
				      VS_VM_MAYSHARE);
	/* Filling a hole between two compatible VMAs merges all three. */
	map_fixed(mm, A0, PG, RW, ANON);
	map_fixed(mm, A0 + 2 * PG, PG, RW, ANON);
	map_fixed(mm, A0 + PG, PG, RW, ANON);
	expect(mm, 5, (unsigned long[]){ A0, A0 + 3 * PG, (unsigned long)b,
					 (unsigned long)b + PG,
					 (unsigned long)a, (unsigned long)a +
					 PG, (unsigned long)c,
					 (unsigned long)c + PG, (unsigned long)c
					 + PG, top });
	mm_done(mm);
}
END_TEST

START_TEST(mmap_hint_and_fixed)
{
	struct vs_mm *mm = mm_new();

	/* A free hint is used, rounded up to a page. */
	ck_assert_int_eq(vs_mmap(mm, A0 + 5, PG, RW, ANON, NULL, 0),
			 (long)(A0 + PG));
	/* An occupied one is not: top-down instead. */
	ck_assert_int_eq(vs_mmap(mm, A0 + PG, PG, RW, ANON, NULL, 0),
			 (long)(mm->end - PG));
	/* A hint below the range moves up to its floor. */
	ck_assert_int_eq(vs_mmap(mm, PG, PG, VS_PROT_READ, ANON, NULL, 0),
			 (long)mm->start);
	ck_assert_int_eq(vs_mmap(mm, PG, PG, VS_PROT_READ, ANON, NULL, 0),
			 (long)(mm->end - 2 * PG));
	/* MAP_FIXED replaces the middle of a mapping, splitting it. */
	map_fixed(mm, A0 + 8 * PG, 8 * PG, RW, ANON);
	map_fixed(mm, A0 + 10 * PG, 2 * PG, VS_PROT_READ, ANON);
	ck_assert_int_eq(vs_munmap(mm, mm->start, PG), 0);
	expect(mm, 6, (unsigned long[]){ A0 + PG, A0 + 2 * PG, A0 + 8 * PG,
					 A0 + 10 * PG, A0 + 10 * PG,
					 A0 + 12 * PG, A0 + 12 * PG,
					 A0 + 16 * PG, mm->end - 2 * PG,
					 mm->end - PG, mm->end - PG, mm->end });
	/* ... and MAP_FIXED over it all with the old prot merges back. */
	map_fixed(mm, A0 + 8 * PG, 8 * PG, RW, ANON);
	ck_assert_int_eq(vmas(mm, NULL, 0), 4);
	mm_done(mm);
}
END_TEST

START_TEST(mmap_topdown_gaps)
{
	struct vs_mm_options o = { .pool_pages = 16, .start = 0x10000,
				   .end = 0x10000 + 16 * PG };
	struct vs_mm *mm;

	ck_assert_int_eq(vs_mm_create(&mm, &o), 0);
	map_fixed(mm, 0x10000 + 12 * PG, 2 * PG, RW, ANON);
	map_fixed(mm, 0x10000 + 4 * PG, 2 * PG, VS_PROT_READ, ANON);
	/* The highest gap that fits: 2 pages fit at the top. */
	ck_assert_int_eq(vs_mmap(mm, 0, 2 * PG, VS_PROT_EXEC, ANON, NULL, 0),
			 0x10000 + 14 * PG);
	/* 4 pages: at the top of the gap between the two. */
	ck_assert_int_eq(vs_mmap(mm, 0, 4 * PG, VS_PROT_EXEC, ANON, NULL, 0),
			 0x10000 + 8 * PG);
	/* 3 pages: only below. */
	ck_assert_int_eq(vs_mmap(mm, 0, 3 * PG, VS_PROT_NONE, ANON, NULL,
				 0), 0x10000 + PG);
	ck_assert_int_eq(vs_mmap(mm, 0, 3 * PG, RW, ANON, NULL, 0), -ENOMEM);
	ck_assert_int_eq(vs_mmap(mm, 0, 17 * PG, RW, ANON, NULL, 0),
			 -ENOMEM);
	ck_assert_int_eq(vs_mmap(mm, 0, 2 * PG, RW, ANON, NULL, 0),
			 0x10000 + 6 * PG);
	ck_assert_int_eq(vs_mmap(mm, 0, PG, RW, ANON, NULL, 0), 0x10000);
	ck_assert_int_eq(vs_mmap(mm, 0, PG, RW, ANON, NULL, 0), -ENOMEM);
	ck_assert_int_eq(vs_mm_destroy(mm), 0);
}
END_TEST

START_TEST(mmap_populate_accounting)
{
	struct vs_mm *mm = mm_new();
	struct vs_page_pool *pool = mm->pool;
	size_t free0 = pool_free(pool);
	struct count c;

	map_fixed(mm, A0, 8 * PG, RW, ANON | VS_MAP_POPULATE);
	c = ptes(mm, A0, A0 + 8 * PG);
	ck_assert_int_eq(c.pages, 8);
	ck_assert_int_eq(c.writable, 8);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_ANONPAGES), 8);
	/* Private read-only: the zero page, no RSS. */
	map_fixed(mm, A0 + 16 * PG, 4 * PG, VS_PROT_READ,
		  ANON | VS_MAP_POPULATE);
	c = ptes(mm, A0 + 16 * PG, A0 + 20 * PG);
	ck_assert_int_eq(c.zero, 4);
	ck_assert_int_eq(c.writable, 0);
	/* Shared anonymous: shmem pages, writable. */
	map_fixed(mm, A0 + 32 * PG, 4 * PG, RW, SHANON | VS_MAP_POPULATE);
	c = ptes(mm, A0 + 32 * PG, A0 + 36 * PG);
	ck_assert_int_eq(c.pages, 4);
	ck_assert_int_eq(c.writable, 4);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_SHMEMPAGES), 4);
	/* PROT_NONE is not populated. */
	map_fixed(mm, A0 + 40 * PG, 4 * PG, VS_PROT_NONE,
		  ANON | VS_MAP_POPULATE);
	ck_assert_int_eq(ptes(mm, A0 + 40 * PG, A0 + 44 * PG).pages, 0);
	check_rss(mm);
	ck_assert_uint_eq(pool_free(pool), free0 - 12);
	/* Unmapping a part frees its pages (the shmem ones at RCU time). */
	ck_assert_int_eq(vs_munmap(mm, A0 + 2 * PG, 2 * PG), 0);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_ANONPAGES), 6);
	check_rss(mm);
	ck_assert_int_eq(vs_munmap(mm, A0 + 32 * PG, 4 * PG), 0);
	vs_rcu_barrier();
	ck_assert_uint_eq(pool_free(pool), free0 - 6);
	check_rss(mm);
	mm_done(mm);
}
END_TEST

/* Pages come back to a pool the test owns: map a file from it. */
START_TEST(mm_destroy_returns_pages)
{
	struct vs_mm *mm = mm_new();
	struct vs_page_pool *pool = mm->pool;
	size_t free0 = pool_free(pool);

	map_fixed(mm, A0, 64 * PG, RW, ANON | VS_MAP_POPULATE);
	map_fixed(mm, A0 + 128 * PG, 64 * PG, RW, SHANON | VS_MAP_POPULATE);
	ck_assert_uint_eq(pool_free(pool), free0 - 128);
	vs_mmap_write_lock(mm);
	vs_mmap_write_unlock(mm);
	check_rss(mm);
	/* vs_mm_destroy() checks the pool itself: -EBUSY on a leak. */
	ck_assert_int_eq(vs_munmap(mm, A0, 256 * PG), 0);
	vs_rcu_barrier();
	ck_assert_uint_eq(pool_free(pool), free0);
	ck_assert_uint_eq(vs_pgtable_pages(&mm->pgtable), 1);
	mm_done(mm);
}
END_TEST

/* A file still open holds pages of the pool: -EBUSY, then fine. */
START_TEST(mm_destroy_busy)
{
	struct vs_mm *mm = mm_new();
	struct vs_file *f;

	ck_assert_int_eq(vs_file_create(&f, mm->pool, 2 * PG, O_RDWR), 0);
	ck_assert_int_eq(vs_mmap(mm, A0, 2 * PG, RW, VS_MAP_SHARED |
				 VS_MAP_FIXED | VS_MAP_POPULATE, f, 0),
			 (long)A0);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_FILEPAGES), 2);
	ck_assert_int_eq(vs_mm_destroy(mm), -EBUSY);
	ck_assert_int_eq(vmas(mm, NULL, 0), 0);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_FILEPAGES), 0);
	ck_assert_int_eq(vs_file_destroy(f), 0);
	ck_assert_int_eq(vs_file_destroy(NULL), -EINVAL);
	ck_assert_int_eq(vs_mm_destroy(mm), 0);
}
END_TEST

/* ---- munmap -------------------------------------------------------------- */

START_TEST(munmap_cases)
{
	struct vs_mm *mm = mm_new();

	ck_assert_int_eq(vs_munmap(mm, A0 + 1, PG), -EINVAL);
	ck_assert_int_eq(vs_munmap(mm, A0, 0), -EINVAL);
	ck_assert_int_eq(vs_munmap(mm, A0, (size_t)-PG), -EINVAL);
	ck_assert_int_eq(vs_munmap(mm, mm->end + PG, PG), -EINVAL);
	ck_assert_int_eq(vs_munmap(NULL, A0, PG), -EINVAL);
	ck_assert_int_eq(vs_munmap(mm, A0, PG), 0); /* a hole */
	map_fixed(mm, A0, 10 * PG, RW, ANON | VS_MAP_POPULATE);
	/* The middle: one VMA becomes two. */
	ck_assert_int_eq(vs_munmap(mm, A0 + 3 * PG, 2 * PG - 7), 0);
	expect(mm, 2, (unsigned long[]){ A0, A0 + 3 * PG, A0 + 5 * PG,
					 A0 + 10 * PG });
	ck_assert_int_eq(ptes(mm, A0, A0 + 10 * PG).pages, 8);
	/* Across a hole: both ends trimmed. */
	ck_assert_int_eq(vs_munmap(mm, A0 + 2 * PG, 4 * PG), 0);
	expect(mm, 2, (unsigned long[]){ A0, A0 + 2 * PG, A0 + 6 * PG,
					 A0 + 10 * PG });
	check_rss(mm);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_ANONPAGES), 6);
	/* Everything. */
	ck_assert_int_eq(vs_munmap(mm, mm->start, mm->end - mm->start), 0);
	ck_assert_int_eq(vmas(mm, NULL, 0), 0);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_ANONPAGES), 0);
	vs_rcu_barrier(); /* table pages are freed after a grace period */
	ck_assert_uint_eq(vs_pgtable_pages(&mm->pgtable), 1);
	mm_done(mm);
}
END_TEST

/* ---- mprotect ------------------------------------------------------------ */

START_TEST(mprotect_split_merge)
{
	struct vs_mm *mm = mm_new();
	struct range r[4];
	struct count c;

	ck_assert_int_eq(vs_mprotect(mm, A0 + 1, PG, RW), -EINVAL);
	ck_assert_int_eq(vs_mprotect(mm, A0, 0, RW), 0);
	ck_assert_int_eq(vs_mprotect(mm, A0, PG, 0x10), -EINVAL);
	ck_assert_int_eq(vs_mprotect(mm, A0, (size_t)-PG, RW), -ENOMEM);
	ck_assert_int_eq(vs_mprotect(mm, A0, PG, RW), -ENOMEM); /* unmapped */
	ck_assert_int_eq(vs_mprotect(mm, A0, PG, RW | 0x03000000), -EINVAL);
	ck_assert_int_eq(vs_mprotect(mm, A0, PG, RW | 0x01000000), -ENOMEM);
	map_fixed(mm, A0, 8 * PG, RW, ANON | VS_MAP_POPULATE);
	ck_assert_int_eq(vs_mprotect(mm, A0, PG, RW | 0x01000000), -EINVAL);
	ck_assert_int_eq(vs_mprotect(mm, A0, PG, RW | 0x02000000), -EINVAL);
	ck_assert_int_eq(vs_mprotect(mm, A0 + 2 * PG, 2 * PG, VS_PROT_READ),
			 0);
	ck_assert_int_eq(vmas(mm, r, 4), 3);
	ck_assert_uint_eq(r[1].start, A0 + 2 * PG);
	ck_assert_uint_eq(r[1].end, A0 + 4 * PG);
	/* populated, so it keeps VM_ACCOUNT (6.18's mprotect_fixup()) */
	ck_assert_uint_eq(r[1].flags, VMFL_RW_PRIV & ~VS_VM_WRITE);
	c = ptes(mm, A0, A0 + 8 * PG);
	ck_assert_int_eq(c.pages, 8);
	ck_assert_int_eq(c.writable, 6);
	/* Back to RW: merges into one again; PTEs stay read-only. */
	ck_assert_int_eq(vs_mprotect(mm, A0 + 2 * PG, 2 * PG, RW), 0);
	expect(mm, 1, (unsigned long[]){ A0, A0 + 8 * PG });
	ck_assert_int_eq(ptes(mm, A0, A0 + 8 * PG).writable, 6);
	/* The tail: two VMAs, then the head merges with nothing. */
	ck_assert_int_eq(vs_mprotect(mm, A0 + 6 * PG, 2 * PG, VS_PROT_NONE),
			 0);
	ck_assert_int_eq(vs_mprotect(mm, A0, 8 * PG, VS_PROT_READ), 0);
	expect(mm, 1, (unsigned long[]){ A0, A0 + 8 * PG });
	ck_assert_int_eq(ptes(mm, A0, A0 + 8 * PG).writable, 0);
	check_rss(mm);
	mm_done(mm);
}
END_TEST

START_TEST(mprotect_hole)
{
	struct vs_mm *mm = mm_new();
	struct range r[4];

	map_fixed(mm, A0, 2 * PG, RW, ANON);
	map_fixed(mm, A0 + 3 * PG, 2 * PG, RW, ANON);
	/* Changed up to the hole, then -ENOMEM. */
	ck_assert_int_eq(vs_mprotect(mm, A0 + PG, 3 * PG, VS_PROT_READ),
			 -ENOMEM);
	ck_assert_int_eq(vmas(mm, r, 4), 3);
	ck_assert_uint_eq(r[1].start, A0 + PG);
	ck_assert_uint_eq(r[1].flags & VS_VM_WRITE, 0);
	ck_assert_uint_eq(r[2].flags & VS_VM_WRITE, VS_VM_WRITE);
	/* The range starts in a hole: nothing changes. */
	ck_assert_int_eq(vs_mprotect(mm, A0 + 2 * PG, 3 * PG, VS_PROT_READ),
			 -ENOMEM);
	ck_assert_int_eq(vmas(mm, r, 4), 3);
	ck_assert_uint_eq(r[2].flags & VS_VM_WRITE, VS_VM_WRITE);
	/* A tail beyond the last VMA: changed, then -ENOMEM. */
	ck_assert_int_eq(vs_mprotect(mm, A0 + 3 * PG, 4 * PG, VS_PROT_READ),
			 -ENOMEM);
	ck_assert_int_eq(vmas(mm, r, 4), 3);
	ck_assert_uint_eq(r[2].start, A0 + 3 * PG);
	ck_assert_uint_eq(r[2].flags & VS_VM_WRITE, 0);
	/* Closing the hole with the same flags merges all three. */
	map_fixed(mm, A0 + 2 * PG, PG, VS_PROT_READ, ANON);
	expect(mm, 2, (unsigned long[]){ A0, A0 + PG, A0 + PG, A0 + 5 * PG });
	mm_done(mm);
}
END_TEST

/* ---- madvise ------------------------------------------------------------- */

START_TEST(madvise_dontneed)
{
	struct vs_mm *mm = mm_new();

	ck_assert_int_eq(vs_madvise(mm, A0, PG, 99), -EINVAL);
	ck_assert_int_eq(vs_madvise(mm, A0 + 1, PG, VS_MADV_DONTNEED),
			 -EINVAL);
	ck_assert_int_eq(vs_madvise(mm, A0, 0, VS_MADV_DONTNEED), 0);
	ck_assert_int_eq(vs_madvise(mm, A0, (size_t)-1, VS_MADV_DONTNEED),
			 -EINVAL);
	ck_assert_int_eq(vs_madvise(mm, A0, PG, VS_MADV_DONTNEED), -ENOMEM);
	map_fixed(mm, A0, 4 * PG, RW, ANON | VS_MAP_POPULATE);
	map_fixed(mm, A0 + 5 * PG, 4 * PG, RW, ANON | VS_MAP_POPULATE);
	ck_assert_int_eq(vs_madvise(mm, A0 + PG, PG, VS_MADV_DONTNEED), 0);
	ck_assert_int_eq(ptes(mm, A0, A0 + 9 * PG).pages, 7);
	/* Over the hole: both sides zapped, VMAs kept, -ENOMEM. */
	ck_assert_int_eq(vs_madvise(mm, A0 + 3 * PG, 3 * PG,
				    VS_MADV_DONTNEED), -ENOMEM);
	ck_assert_int_eq(ptes(mm, A0, A0 + 9 * PG).pages, 5);
	ck_assert_int_eq(vmas(mm, NULL, 0), 2);
	check_rss(mm);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_ANONPAGES), 5);
	mm_done(mm);
}
END_TEST

/* ---- brk ----------------------------------------------------------------- */

START_TEST(brk_grow_shrink)
{
	struct vs_mm *mm = mm_new();
	unsigned long b0 = mm->start_brk;
	struct range r[2];

	ck_assert_uint_eq(b0 & ~VS_PAGE_MASK, 0);
	ck_assert_uint_eq(vs_brk(mm, 0), b0);
	ck_assert_uint_eq(vs_brk(mm, b0 - PG), b0); /* below: refused */
	ck_assert_uint_eq(vs_brk(mm, b0 + 100), b0 + 100);
	ck_assert_uint_eq(vs_brk(mm, b0 + 3 * PG), b0 + 3 * PG);
	ck_assert_int_eq(vmas(mm, r, 2), 1);
	ck_assert_uint_eq(r[0].start, b0);
	ck_assert_uint_eq(r[0].end, b0 + 3 * PG);
	ck_assert_uint_eq(r[0].flags, VMFL_RW_PRIV);
	ck_assert_uint_eq(vs_brk(mm, b0 + PG + 1), b0 + PG + 1);
	expect(mm, 1, (unsigned long[]){ b0, b0 + 2 * PG });
	/* A mapping in the way (with its guard page) refuses growth. */
	map_fixed(mm, b0 + 4 * PG, PG, RW, ANON);
	ck_assert_uint_eq(vs_brk(mm, b0 + 4 * PG), b0 + PG + 1);
	ck_assert_uint_eq(vs_brk(mm, b0 + 3 * PG), b0 + 3 * PG);
	/* The heap unmapped behind brk's back: shrinking is refused. */
	ck_assert_int_eq(vs_munmap(mm, b0, 3 * PG), 0);
	ck_assert_uint_eq(vs_brk(mm, b0), b0 + 3 * PG);
	ck_assert_uint_eq(vs_brk(mm, b0 + 2 * PG + 5), b0 + 2 * PG + 5);
	ck_assert_int_eq(vmas(mm, NULL, 0), 1);
	mm_done(mm);
}
END_TEST

/* ---- dump ---------------------------------------------------------------- */

START_TEST(mm_dump_format)
{
	struct vs_mm *mm = mm_new();
	struct vs_file *f;
	char buf[512];
	FILE *out;

	ck_assert_int_eq(vs_file_create(&f, mm->pool, 8 * PG, O_RDWR), 0);
	map_fixed(mm, A0, 2 * PG, RW, ANON);
	map_fixed(mm, A0 + 4 * PG, PG, VS_PROT_READ | VS_PROT_EXEC, SHANON);
	ck_assert_int_eq(vs_mmap(mm, A0 + 8 * PG, PG, VS_PROT_READ,
				 VS_MAP_PRIVATE | VS_MAP_FIXED, f, 2 * PG),
			 (long)(A0 + 8 * PG));
	vs_file_destroy(f);
	memset(buf, 0, sizeof(buf));
	out = fmemopen(buf, sizeof(buf) - 1, "w");
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(vs_mm_dump(mm, out), 0);
	fclose(out);
	ck_assert_str_eq(buf,
			 "100000000-100002000 rw-p 00000000 00:00 0\n"
			 "100004000-100005000 r-xs 00000000 00:00 0\n"
			 "100008000-100009000 r--p 00002000 00:00 0\n");
	ck_assert_int_eq(vs_mm_dump(NULL, stdout), -EINVAL);
	mm_done(mm);
}
END_TEST

/* ---- files --------------------------------------------------------------- */

START_TEST(file_mappings)
{
	struct vs_mm *mm = mm_new();
	struct vs_file *ro, *rw;
	struct count c;

	ck_assert_int_eq(vs_file_create(NULL, mm->pool, PG, O_RDWR), -EINVAL);
	ck_assert_int_eq(vs_file_create(&ro, mm->pool, PG, O_WRONLY),
			 -EINVAL);
	ck_assert_int_eq(vs_file_create(&ro, mm->pool, 4 * PG, O_RDONLY), 0);
	ck_assert_int_eq(vs_file_create(&rw, mm->pool, 4 * PG, O_RDWR), 0);
	/* A shared writable mapping of a read-only file. */
	ck_assert_int_eq(vs_mmap(mm, A0, PG, RW, VS_MAP_SHARED | VS_MAP_FIXED,
				 ro, 0), -EACCES);
	/* Shared read-only of it: no VM_SHARED, no VM_MAYWRITE ... */
	ck_assert_int_eq(vs_mmap(mm, A0, PG, VS_PROT_READ,
				 VS_MAP_SHARED | VS_MAP_FIXED, ro, 0),
			 (long)A0);
	ck_assert_uint_eq(vma_flags_at(mm, A0),
			  VS_VM_READ | VS_VM_MAYREAD | VS_VM_MAYEXEC |
				  VS_VM_MAYSHARE);
	/* ... so mprotect cannot add write. */
	ck_assert_int_eq(vs_mprotect(mm, A0, PG, RW), -EACCES);
	/* Private writable of a read-only file is fine. */
	ck_assert_int_eq(vs_mmap(mm, A0 + PG, PG, RW,
				 VS_MAP_PRIVATE | VS_MAP_FIXED, ro, PG),
			 (long)(A0 + PG));
	/* Contiguous offsets of one file merge; others do not. */
	ck_assert_int_eq(vs_mmap(mm, A0 + 8 * PG, 2 * PG, RW,
				 VS_MAP_SHARED | VS_MAP_FIXED |
					 VS_MAP_POPULATE, rw, 0),
			 (long)(A0 + 8 * PG));
	ck_assert_int_eq(vs_mmap(mm, A0 + 10 * PG, 2 * PG, RW,
				 VS_MAP_SHARED | VS_MAP_FIXED |
					 VS_MAP_POPULATE, rw, 2 * PG),
			 (long)(A0 + 10 * PG));
	ck_assert_int_eq(vs_mmap(mm, A0 + 12 * PG, PG, RW,
				 VS_MAP_SHARED | VS_MAP_FIXED, rw, 0),
			 (long)(A0 + 12 * PG));
	expect(mm, 4, (unsigned long[]){ A0, A0 + PG, A0 + PG, A0 + 2 * PG,
					 A0 + 8 * PG, A0 + 12 * PG,
					 A0 + 12 * PG, A0 + 13 * PG });
	c = ptes(mm, A0 + 8 * PG, A0 + 12 * PG);
	ck_assert_int_eq(c.pages, 4);
	ck_assert_int_eq(c.writable, 4);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_FILEPAGES), 4);
	/* Past the end of the file: populate stops, mmap succeeds. */
	ck_assert_int_eq(vs_mmap(mm, A0 + 16 * PG, 4 * PG, VS_PROT_READ,
				 VS_MAP_PRIVATE | VS_MAP_FIXED |
					 VS_MAP_POPULATE, rw, 2 * PG),
			 (long)(A0 + 16 * PG));
	c = ptes(mm, A0 + 16 * PG, A0 + 20 * PG);
	ck_assert_int_eq(c.pages, 2);
	ck_assert_int_eq(c.writable, 0);
	check_rss(mm);
	vs_file_destroy(ro);
	vs_file_destroy(rw);
	mm_done(mm);
}
END_TEST

/* ---- mremap -------------------------------------------------------------- */

START_TEST(mremap_cases)
{
	struct vs_mm *mm = mm_new();
	struct count c;
	long r;

	ck_assert_int_eq(vs_mremap(mm, A0 + 1, PG, PG, 0, 0), -EINVAL);
	ck_assert_int_eq(vs_mremap(mm, A0, PG, 0, 0, 0), -EINVAL);
	ck_assert_int_eq(vs_mremap(mm, A0, PG, PG, 8, 0), -EINVAL);
	ck_assert_int_eq(vs_mremap(mm, A0, PG, PG, VS_MREMAP_FIXED, A0 +
				   PG), -EINVAL); /* FIXED needs MAYMOVE */
	ck_assert_int_eq(vs_mremap(mm, A0, PG, PG, VS_MREMAP_FIXED |
				   VS_MREMAP_MAYMOVE, A0 + 1), -EINVAL);
	ck_assert_int_eq(vs_mremap(mm, A0, 2 * PG, PG, VS_MREMAP_FIXED |
				   VS_MREMAP_MAYMOVE, A0 + PG), -EINVAL);
	ck_assert_int_eq(vs_mremap(mm, A0, PG, PG, 0, 0), -EFAULT);
	map_fixed(mm, A0, 4 * PG, RW, ANON | VS_MAP_POPULATE);
	/* A shrink may reach past the VMA (6.18: only growths and moves
	 * must stay inside). */
	ck_assert_int_eq(vs_mremap(mm, A0, 5 * PG, 4 * PG, 0, 0), (long)A0);
	ck_assert_int_eq(vs_mremap(mm, A0, 5 * PG, 6 * PG, 0, 0), -EFAULT);
	ck_assert_int_eq(vs_mremap(mm, A0, 0, PG, VS_MREMAP_MAYMOVE, 0),
			 -EINVAL); /* duplicating a private mapping */
	ck_assert_int_eq(vs_mremap(mm, A0, 4 * PG, 4 * PG, 0, 0), (long)A0);
	/* Shrink. */
	ck_assert_int_eq(vs_mremap(mm, A0, 4 * PG, 3 * PG, 0, 0), (long)A0);
	expect(mm, 1, (unsigned long[]){ A0, A0 + 3 * PG });
	/* Grow in place. */
	ck_assert_int_eq(vs_mremap(mm, A0, 3 * PG, 6 * PG, 0, 0), (long)A0);
	expect(mm, 1, (unsigned long[]){ A0, A0 + 6 * PG });
	/* Blocked: -ENOMEM without MAYMOVE, a move with it. */
	map_fixed(mm, A0 + 6 * PG, PG, VS_PROT_READ, ANON);
	ck_assert_int_eq(vs_mremap(mm, A0, 6 * PG, 8 * PG, 0, 0), -ENOMEM);
	/* Growing only part of a VMA cannot be done in place either. */
	ck_assert_int_eq(vs_mremap(mm, A0, 2 * PG, 3 * PG, 0, 0), -ENOMEM);
	r = vs_mremap(mm, A0, 6 * PG, 8 * PG, VS_MREMAP_MAYMOVE, 0);
	ck_assert_int_eq(r, (long)(mm->end - 8 * PG));
	c = ptes(mm, (unsigned long)r, (unsigned long)r + 8 * PG);
	ck_assert_int_eq(c.pages, 3);
	ck_assert_int_eq(c.writable, 3);
	ck_assert_int_eq(ptes(mm, A0, A0 + 8 * PG).pages, 0);
	expect(mm, 2, (unsigned long[]){ A0 + 6 * PG, A0 + 7 * PG,
					 (unsigned long)r, mm->end });
	/* Fixed move over a mapping, shrinking on the way. */
	map_fixed(mm, A0, 2 * PG, VS_PROT_READ, ANON);
	ck_assert_int_eq(vs_mremap(mm, (unsigned long)r, 8 * PG, 2 * PG,
				   VS_MREMAP_MAYMOVE | VS_MREMAP_FIXED, A0),
			 (long)A0);
	c = ptes(mm, A0, A0 + 2 * PG);
	ck_assert_int_eq(c.pages, 2);
	ck_assert_int_eq(vmas(mm, NULL, 0), 2);
	check_rss(mm);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_ANONPAGES), 2);
	mm_done(mm);
}
END_TEST

/*
 * A move that fails part-way, its second page table at the target not
 * allocated (vmsim/fail.h): -ENOMEM, and as the kernel's move_vma() leaves
 * it, the pages that moved are back, the old mapping is as it was, the
 * new range is unmapped.  Then the same move succeeds.
 */
START_TEST(mremap_move_enomem)
{
	struct vs_fail_options fo = { .kinds = VS_FAIL_SLAB,
				      .cache = "pgtable", .nth = 1,
				      .times = 1 };
	struct vs_mm *mm = mm_new();
	/* Pages 0 and 1 in a table that exists, 2 and 3 in one that not. */
	unsigned long b = A0 + 2 * VS_PMD_SIZE - 2 * PG, k;
	char buf[PG], want[PG];

	map_fixed(mm, A0, 4 * PG, RW, ANON);
	for (k = 0; k < 4; k++) {
		memset(want, (int)('a' + k), PG);
		ck_assert_int_eq(vs_write(mm, A0 + k * PG, want, PG), 0);
	}
	map_fixed(mm, A0 + VS_PMD_SIZE, PG, RW, ANON | VS_MAP_POPULATE);
	ck_assert_int_eq(vs_fail_set(&fo), 0);
	ck_assert_int_eq(vs_mremap(mm, A0, 4 * PG, 4 * PG, VS_MREMAP_MAYMOVE |
				   VS_MREMAP_FIXED, b), -ENOMEM);
	ck_assert_int_eq(vs_fail_injected(), 1);
	ck_assert_int_eq(vs_fail_set(NULL), 0);
	expect(mm, 2, (unsigned long[]){ A0, A0 + 4 * PG, A0 + VS_PMD_SIZE,
					 A0 + VS_PMD_SIZE + PG });
	ck_assert_int_eq(ptes(mm, A0, A0 + 4 * PG).pages, 4);
	ck_assert_int_eq(ptes(mm, b, b + 4 * PG).pages, 0);
	check_rss(mm);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_ANONPAGES), 5);
	for (k = 0; k < 4; k++) {
		memset(want, (int)('a' + k), PG);
		ck_assert_int_eq(vs_read(mm, A0 + k * PG, buf, PG), 0);
		ck_assert(memcmp(buf, want, PG) == 0);
	}
	ck_assert_int_eq(vs_mremap(mm, A0, 4 * PG, 4 * PG, VS_MREMAP_MAYMOVE |
				   VS_MREMAP_FIXED, b), (long)b);
	ck_assert_int_eq(ptes(mm, b, b + 4 * PG).pages, 4);
	ck_assert_int_eq(vs_read(mm, b + 3 * PG, buf, PG), 0);
	ck_assert_int_eq(buf[0], 'd');
	mm_done(mm);
}
END_TEST

/* 6.18's batched move: every VMA of the range, holes kept. */
START_TEST(mremap_multi_vma)
{
	struct vs_mm *mm = mm_new();

	map_fixed(mm, A0, 4 * PG, VS_PROT_READ, ANON);
	map_fixed(mm, A0 + 4 * PG, 2 * PG, RW, ANON | VS_MAP_POPULATE);
	map_fixed(mm, A0 + 8 * PG, 2 * PG, RW, ANON);
	/* The source must start in a VMA. */
	ck_assert_int_eq(vs_mremap(mm, A0 + 6 * PG, 4 * PG, 4 * PG,
				   VS_MREMAP_MAYMOVE | VS_MREMAP_FIXED,
				   A0 + 32 * PG), -EFAULT);
	ck_assert_int_eq(vs_mremap(mm, A0 + 2 * PG, 8 * PG, 8 * PG,
				   VS_MREMAP_MAYMOVE | VS_MREMAP_FIXED,
				   A0 + 32 * PG), (long)(A0 + 32 * PG));
	expect(mm, 4, (unsigned long[]){ A0, A0 + 2 * PG, A0 + 32 * PG,
					 A0 + 34 * PG, A0 + 34 * PG,
					 A0 + 36 * PG, A0 + 38 * PG,
					 A0 + 40 * PG });
	ck_assert_int_eq(ptes(mm, A0 + 34 * PG, A0 + 36 * PG).pages, 2);
	/* Never faulted: the moved VMA takes its new offset and merges
	 * (copy_vma); the faulted one keeps its own and does not. */
	map_fixed(mm, A0 + 36 * PG, 2 * PG, RW, ANON);
	expect(mm, 4, (unsigned long[]){ A0, A0 + 2 * PG, A0 + 32 * PG,
					 A0 + 34 * PG, A0 + 34 * PG,
					 A0 + 36 * PG, A0 + 36 * PG,
					 A0 + 40 * PG });
	check_rss(mm);
	mm_done(mm);
}
END_TEST

/* A shared anonymous mapping keeps its pages across fork and mremap. */
START_TEST(shared_anon_pages)
{
	struct vs_mm *mm = mm_new(), *child;
	struct vs_page *p1, *p2;
	vs_atomic64_t *ptep;

	map_fixed(mm, A0, 2 * PG, RW, SHANON | VS_MAP_POPULATE);
	ptep = vs_pte_offset(&mm->pgtable, A0);
	p1 = vs_pfn_to_page(mm->pool, vs_pte_pfn(vs_ptep_get_lockless(ptep)));
	ck_assert_int_eq(vs_mremap(mm, A0, 2 * PG, 4 * PG, VS_MREMAP_MAYMOVE |
				   VS_MREMAP_FIXED, A0 + 16 * PG),
			 (long)(A0 + 16 * PG));
	ptep = vs_pte_offset(&mm->pgtable, A0 + 16 * PG);
	p2 = vs_pfn_to_page(mm->pool, vs_pte_pfn(vs_ptep_get_lockless(ptep)));
	ck_assert_ptr_eq(p1, p2);
	vs_lru_drain_all(mm->pool);	/* the LRU batch's reference */
	ck_assert_uint_eq(vs_page_count(p1), 2); /* cache + PTE */
	ck_assert_int_eq(vs_fork(mm, &child), 0);
	ck_assert_int_eq(vs_mmap(child, A0, PG, RW, VS_MAP_SHARED |
				 VS_MAP_FIXED | VS_MAP_POPULATE,
				 vma_file_at(child, A0 + 16 * PG), 0),
			 (long)A0);
	ptep = vs_pte_offset(&child->pgtable, A0);
	ck_assert_ptr_eq(vs_pfn_to_page(mm->pool, vs_pte_pfn(
				 vs_ptep_get_lockless(ptep))), p1);
	ck_assert_uint_eq(vs_page_mapcount(p1), 2);
	check_rss(child);
	ck_assert_int_eq(vs_get_mm_counter(child, VS_MM_SHMEMPAGES), 1);
	mm_done(mm);
	mm_done(child);
}
END_TEST

/* ---- fork ---------------------------------------------------------------- */

START_TEST(fork_cow)
{
	struct vs_mm *mm = mm_new(), *child;
	struct vs_page_pool *pool = mm->pool;
	size_t free0 = pool_free(pool);
	struct vs_page *page;
	vs_atomic64_t *ptep;
	struct count c;

	ck_assert_int_eq(vs_fork(NULL, &child), -EINVAL);
	map_fixed(mm, A0, 4 * PG, RW, ANON | VS_MAP_POPULATE);
	map_fixed(mm, A0 + 8 * PG, 2 * PG, RW, SHANON | VS_MAP_POPULATE);
	ck_assert_uint_eq(vs_brk(mm, mm->start_brk + PG), mm->start_brk + PG);
	ck_assert_int_eq(vs_fork(mm, &child), 0);
	ck_assert_ptr_eq(child->pool, pool);
	ck_assert_uint_eq(child->brk, mm->brk);
	ck_assert_int_eq(vmas(child, NULL, 0), 3);
	/* Private: copied and write-protected in both. */
	c = ptes(mm, A0, A0 + 4 * PG);
	ck_assert_int_eq(c.pages, 4);
	ck_assert_int_eq(c.writable, 0);
	c = ptes(child, A0, A0 + 4 * PG);
	ck_assert_int_eq(c.pages, 4);
	ck_assert_int_eq(c.writable, 0);
	ptep = vs_pte_offset(&child->pgtable, A0);
	page = vs_pfn_to_page(pool, vs_pte_pfn(vs_ptep_get_lockless(ptep)));
	vs_lru_drain_all(mm->pool);	/* the LRU batch's reference */
	ck_assert_uint_eq(vs_page_count(page), 2);
	ck_assert_uint_eq(vs_page_mapcount(page), 2);
	/* Shared: the child faults the shared pages in later. */
	ck_assert_int_eq(ptes(child, A0 + 8 * PG, A0 + 10 * PG).pages, 0);
	ck_assert_int_eq(ptes(mm, A0 + 8 * PG, A0 + 10 * PG).writable, 2);
	check_rss(mm);
	check_rss(child);
	ck_assert_uint_eq(pool_free(pool), free0 - 6);
	/* Unmapping in the parent leaves the child's pages. */
	ck_assert_int_eq(vs_munmap(mm, A0, 4 * PG), 0);
	vs_lru_drain_all(mm->pool);	/* the LRU batch's reference */
	ck_assert_uint_eq(vs_page_count(page), 1);
	ck_assert_uint_eq(vs_page_mapcount(page), 1);
	ck_assert_uint_eq(pool_free(pool), free0 - 6);
	ck_assert_int_eq(vs_mm_destroy(mm), 0);
	/* The child's 4 pages, and the shmem file its VMA holds. */
	ck_assert_uint_eq(pool_free(pool), free0 - 6);
	ck_assert_int_eq(vs_mm_destroy(child), 0); /* frees the pool */
}
END_TEST

/* ---- per-VMA readers against a writer ------------------------------------ */

struct pervma_ctx {
	struct vs_mm *mm;
	vs_atomic32_t stop;
	vs_atomic32_t bad;
	vs_atomic_long_t hits;
};

/*
 * A per-VMA reader (lock_vma_under_rcu): inside RCU, find the VMA,
 * read-trylock it, back off if it is write-marked or detached.  Once
 * in, its fields must not change until vma_end_read: every writer marks
 * the VMA first (vs_vma_start_write), which waits for such readers.
 */
static void *pervma_reader(void *arg)
{
	struct pervma_ctx *c = arg;
	unsigned long addr = A0 + 5 * PG, s, e, f;
	struct vs_vma *vma;

	vs_thread_attach();
	while (!vs_load_acquire(&c->stop)) {
		vs_rcu_read_lock();
		vma = vs_vma_lookup(c->mm, addr);
		if (vma && vs_down_read_trylock(&vma->vm_lock)) {
			if (vs_load_acquire(&vma->vm_lock_seq) !=
				    vs_load_acquire(&c->mm->mm_lock_seq) &&
			    !vs_read_once(&vma->vm_detached)) {
				s = vma->vm_start;
				e = vma->vm_end;
				f = vma->vm_flags;
				vs_test_relax(50);
				if (s != vma->vm_start || e != vma->vm_end ||
				    f != vma->vm_flags)
					vs_write_once(&c->bad, 1);
				vs_fetch_add_relaxed(&c->hits, 1);
			}
			vs_up_read(&vma->vm_lock);
		}
		vs_rcu_read_unlock();
		vs_rcu_quiescent_state(); /* urcu-qsbr */
	}
	return NULL;
}

/* Once per lock kind (_i). */
START_TEST(pervma_readers_vs_writer)
{
	/* The reader takes 6.4's vm_lock itself. */
	struct vs_mm_options o = { .lock_kind = vs_lock_kind_name(_i),
				   .pool_pages = POOL, .ptl_per_mm = _i & 1,
				   .kernel = "6.4" };
	struct pervma_ctx c = { 0 };
	int64_t end = vs_test_now_ns() + vs_test_run_ns(150);
	pthread_t tid[2];
	unsigned long i;

	ck_assert_ptr_nonnull(o.lock_kind);
	ck_assert_int_eq(vs_thread_attach(), 0);
	ck_assert_int_eq(vs_mm_create(&c.mm, &o), 0);
	vs_atomic_init(&c.stop, 0);
	vs_atomic_init(&c.bad, 0);
	vs_atomic_init(&c.hits, 0);
	map_fixed(c.mm, A0, 16 * PG, RW, ANON | VS_MAP_POPULATE);
	vs_test_thread_create(&tid[0], pervma_reader, &c);
	vs_test_thread_create(&tid[1], pervma_reader, &c);
	for (i = 0; vs_test_now_ns() < end; i++) {
		ck_assert_int_eq(vs_mprotect(c.mm, A0 + (i % 8) * PG, 2 * PG,
					     i & 1 ? VS_PROT_READ : RW), 0);
		ck_assert_int_eq(vs_munmap(c.mm, A0 + (i % 4) * PG, PG), 0);
		map_fixed(c.mm, A0 + (i % 4) * PG, PG, RW, ANON);
		/* One VMA again: every piece shares one anon_vma or none. */
		ck_assert_int_eq(vs_mprotect(c.mm, A0, 16 * PG, RW), 0);
		ck_assert_int_eq(vmas(c.mm, NULL, 0), 1);
		ck_assert_int_eq(vs_mremap(c.mm, A0 + 4 * PG, 8 * PG, 8 * PG,
					   VS_MREMAP_MAYMOVE |
					   VS_MREMAP_FIXED, A0 + 32 * PG),
				 (long)(A0 + 32 * PG));
		ck_assert_int_eq(vs_mremap(c.mm, A0 + 32 * PG, 8 * PG, 8 * PG,
					   VS_MREMAP_MAYMOVE |
					   VS_MREMAP_FIXED, A0 + 4 * PG),
				 (long)(A0 + 4 * PG));
		ck_assert_int_eq(vmas(c.mm, NULL, 0), 1);
	}
	/* Quiet now: the readers must get in at least once. */
	end = vs_test_now_ns() + VS_TEST_WAIT_NS;
	while (!vs_read_once(&c.hits) && vs_test_now_ns() < end)
		vs_test_nap(1000);
	ck_assert_int_gt(vs_read_once(&c.hits), 0);
	vs_test_set(&c.stop, 1);
	vs_test_thread_join(tid[0]);
	vs_test_thread_join(tid[1]);
	ck_assert_int_eq(vs_read_once(&c.bad), 0);
	check_rss(c.mm);
	mm_done(c.mm);
}
END_TEST

/*
 * Every object the model took from its caches is back once every mm is
 * destroyed and the grace periods are over: VMAs, index nodes, table
 * pages, anon_vmas, after splits, merges, a move, a fork and COW.
 */
START_TEST(mm_caches_balance)
{
	struct vs_kmem_cache_stats st;
	struct vs_kmem_cache *c = NULL;
	struct vs_mm *mm = mm_new(), *child;
	struct vs_file *f;
	unsigned long a;
	int i;

	for (i = 0; i < 32; i++)
		map_fixed(mm, A0 + 2 * (unsigned long)i * PG, PG, RW,
			  ANON | VS_MAP_POPULATE);
	map_fixed(mm, A0 + 64 * PG, 64 * PG, RW, ANON | VS_MAP_POPULATE);
	ck_assert_int_eq(vs_mprotect(mm, A0 + 80 * PG, 16 * PG,
				     VS_PROT_READ), 0);
	a = (unsigned long)vs_mremap(mm, A0 + 20 * PG, PG, 8 * PG,
				     VS_MREMAP_MAYMOVE, 0);
	ck_assert(a < (unsigned long)-4096L);
	ck_assert_int_eq(vs_file_create(&f, mm->pool, 4 * PG, O_RDWR), 0);
	ck_assert_int_gt(vs_mmap(mm, 0, 4 * PG, RW, VS_MAP_SHARED, f, 0), 0);
	vs_file_put(f);
	ck_assert_int_eq(vs_fork(mm, &child), 0);
	ck_assert_int_eq(vs_write(child, A0 + 70 * PG, "x", 1), 0);
	ck_assert_int_eq(vs_munmap(mm, A0, 128 * PG), 0);
	mm_done(child);
	mm_done(mm);
	vs_rcu_barrier();
	while ((c = vs_kmem_cache_next(c))) {
		vs_kmem_cache_stats(c, &st);
		ck_assert_msg(st.active == 0, "cache %s: %ld objects still out",
			      st.name, st.active);
	}
}
END_TEST

/* ---- each kernel version's unmap, zap and COW (mm->mech) --------------- */

static const char *const kernels[] = { "6.18", "6.4", "3.18" };

static struct vs_mm *mm_kernel(const char *kernel)
{
	struct vs_mm_options o = { .pool_pages = POOL, .kernel = kernel };
	struct vs_mm *mm = NULL;

	ck_assert_int_eq(vs_thread_attach(), 0);
	ck_assert_int_eq(vs_mm_create(&mm, &o), 0);
	return mm;
}

struct trylock_arg {
	struct vs_mm *mm;
	int write, got;
};

static void *trylock_main(void *arg)
{
	struct trylock_arg *t = arg;

	if (t->write) {
		t->got = vs_lock_write_trylock(&t->mm->mmap_lock);
		if (t->got)
			vs_mmap_write_unlock(t->mm);
	} else {
		t->got = vs_mmap_read_trylock(t->mm);
		if (t->got)
			vs_mmap_read_unlock(t->mm);
	}
	return NULL;
}

/* Could another thread take @mm's mmap_lock (@write: for writing) now? */
static int other_trylock(struct vs_mm *mm, int write)
{
	struct trylock_arg t = { mm, write, 0 };
	pthread_t tid;

	ck_assert_int_eq(pthread_create(&tid, NULL, trylock_main, &t), 0);
	ck_assert_int_eq(pthread_join(tid, NULL), 0);
	return t.got;
}

/* An mmu notifier that records, at the start of each @event, what
 * another thread could take and whether the range's VMA is indexed. */
struct lock_probe {
	struct vs_mmu_notifier mn;
	int event, seen, read_ok, write_ok, vma_gone;
};

static void probe_start(struct vs_mmu_notifier *mn,
			const struct vs_mmu_notifier_range *r)
{
	struct lock_probe *p = (struct lock_probe *)mn;

	if (r->event != p->event)
		return;
	p->seen++;
	p->read_ok = other_trylock(r->mm, 0);
	p->write_ok = other_trylock(r->mm, 1);
	vs_rcu_read_lock();
	p->vma_gone = !vs_vma_lookup(r->mm, r->start);
	vs_rcu_read_unlock();
}

static void probe_end(struct vs_mmu_notifier *mn,
		      const struct vs_mmu_notifier_range *r)
{
	(void)mn;
	(void)r;
}

static const struct vs_mmu_notifier_ops probe_ops = { probe_start,
						      probe_end };

/* munmap, brk's shrink and mremap's shrink zap under the downgraded
 * lock from 4.20 (6.4, 6.18), the VMAs already out of the index; 3.18,
 * and MAP_FIXED over a mapping at every version, under the write lock. */
START_TEST(munmap_downgrade)
{
	struct vs_mm *mm = mm_kernel(kernels[_i]);
	struct lock_probe p = { { &probe_ops }, VS_MMU_NOTIFY_UNMAP, 0, 0, 0,
				0 };
	int down = (int)mm->mech.munmap_downgrade;
	unsigned long b0 = mm->start_brk;

	ck_assert_int_eq(down, _i < 2);
	ck_assert_int_eq(vs_mmu_notifier_register(mm, &p.mn), 0);
	map_fixed(mm, A0, 4 * PG, RW, ANON | VS_MAP_POPULATE);
	ck_assert_int_eq(vs_munmap(mm, A0 + PG, PG), 0);
	ck_assert_int_eq(p.seen, 1);
	ck_assert_int_eq(p.read_ok, down);
	ck_assert_int_eq(p.write_ok, 0);
	ck_assert_int_eq(p.vma_gone, down);
	ck_assert_uint_eq(vs_brk(mm, b0 + 3 * PG), b0 + 3 * PG);
	ck_assert_uint_eq(vs_brk(mm, b0 + PG), b0 + PG);
	ck_assert_int_eq(p.seen, 2);
	ck_assert_int_eq(p.read_ok, down);
	ck_assert_uint_eq(mm->brk, b0 + PG);
	ck_assert_int_eq(vs_mremap(mm, A0 + 2 * PG, 2 * PG, PG, 0, 0),
			 (long)(A0 + 2 * PG));
	ck_assert_int_eq(p.seen, 3);
	ck_assert_int_eq(p.read_ok, down);
	map_fixed(mm, A0, PG, RW, ANON);	/* over a mapping: keeps W */
	ck_assert_int_eq(p.seen, 4);
	ck_assert_int_eq(p.read_ok, 0);
	expect(mm, 3, (unsigned long[]){ b0, b0 + PG, A0, A0 + PG,
					 A0 + 2 * PG, A0 + 3 * PG });
	check_rss(mm);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_ANONPAGES), 1);
	ck_assert_int_eq(vs_mmu_notifier_unregister(mm, &p.mn), 0);
	mm_done(mm);
}
END_TEST

/* MADV_DONTNEED inside one VMA holds only that VMA's lock from 6.17
 * (6.18): a writer could take the mmap_lock meanwhile; one across two
 * VMAs, and every one up to 6.16, holds the mmap_lock for read. */
START_TEST(dontneed_vma_lock)
{
	struct vs_mm *mm = mm_kernel(kernels[_i]);
	struct lock_probe p = { { &probe_ops }, VS_MMU_NOTIFY_CLEAR, 0, 0, 0,
				0 };
	int vl = (int)mm->mech.dontneed_vma_lock;

	ck_assert_int_eq(vl, _i == 0);
	ck_assert_int_eq(vs_mmu_notifier_register(mm, &p.mn), 0);
	map_fixed(mm, A0, 4 * PG, RW, ANON | VS_MAP_POPULATE);
	map_fixed(mm, A0 + 4 * PG, 4 * PG, VS_PROT_READ,
		  VS_MAP_SHARED | VS_MAP_ANONYMOUS | VS_MAP_POPULATE);
	ck_assert_int_eq(vs_madvise(mm, A0 + PG, 2 * PG, VS_MADV_DONTNEED),
			 0);
	ck_assert_int_eq(p.seen, 1);
	ck_assert_int_eq(p.read_ok, 1);
	ck_assert_int_eq(p.write_ok, vl);
	ck_assert_int_eq(p.vma_gone, 0);
	ck_assert_int_eq(vs_madvise(mm, A0 + 3 * PG, 2 * PG,
				    VS_MADV_DONTNEED), 0);
	ck_assert_int_eq(p.seen, 3);
	ck_assert_int_eq(p.write_ok, 0);
	ck_assert_int_eq(ptes(mm, A0, A0 + 8 * PG).pages, 4);
	check_rss(mm);
	ck_assert_int_eq(vs_mmu_notifier_unregister(mm, &p.mn), 0);
	mm_done(mm);
}
END_TEST

/* PT_RECLAIM (6.18): a MADV_DONTNEED that empties a whole PTE page
 * frees it; a fault there makes a new one.  A partial zap, and every
 * zap before 6.14, keeps the tables. */
START_TEST(dontneed_pt_reclaim)
{
	struct vs_mm *mm = mm_kernel(kernels[_i]);
	long r = (long)mm->mech.pt_reclaim;
	unsigned long a1 = A0 + VS_PMD_SIZE;
	size_t n0;

	ck_assert_int_eq(r, _i == 0);
	map_fixed(mm, A0, 2 * VS_PMD_SIZE, RW, ANON);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, VS_FAULT_FLAG_WRITE), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0 + PG, 0), 0);
	ck_assert_int_eq(vs_handle_mm_fault(mm, a1, VS_FAULT_FLAG_WRITE), 0);
	vs_rcu_barrier();
	n0 = vs_pgtable_pages(&mm->pgtable);
	ck_assert_int_eq(vs_madvise(mm, A0, VS_PMD_SIZE, VS_MADV_DONTNEED),
			 0);
	vs_rcu_barrier();
	ck_assert_uint_eq(vs_pgtable_pages(&mm->pgtable), n0 - (size_t)r);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_ANONPAGES), 1);
	check_rss(mm);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, VS_FAULT_FLAG_WRITE), 0);
	ck_assert_uint_eq(vs_pgtable_pages(&mm->pgtable), n0);
	ck_assert_int_eq(vs_madvise(mm, A0 + PG, VS_PMD_SIZE - PG,
				    VS_MADV_DONTNEED), 0);
	ck_assert_int_eq(vs_madvise(mm, a1 + PG, VS_PMD_SIZE - PG,
				    VS_MADV_DONTNEED), 0);
	vs_rcu_barrier();
	ck_assert_uint_eq(vs_pgtable_pages(&mm->pgtable), n0);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_ANONPAGES), 2);
	ck_assert_int_eq(vs_madvise(mm, A0, 2 * VS_PMD_SIZE,
				    VS_MADV_DONTNEED), 0);
	vs_rcu_barrier();
	ck_assert_uint_eq(vs_pgtable_pages(&mm->pgtable), n0 - 2 * (size_t)r);
	check_rss(mm);
	mm_done(mm);
}
END_TEST

/* The PTE at @addr, read under its PTL. */
static uint64_t pte_at(struct vs_mm *mm, unsigned long addr)
{
	vs_atomic64_t *ptep;
	vs_spinlock_t *ptl;
	uint64_t v = 0;

	vs_mmap_read_lock(mm);
	ptep = vs_pte_offset_map_lock(&mm->pgtable, addr, &ptl);
	if (ptep) {
		v = vs_ptep_get(ptep);
		vs_pte_unmap_unlock(ptl);
	}
	vs_mmap_read_unlock(mm);
	return v;
}

/* Make A0's PTE read-only, then write it: the pfn the PTE then maps. */
static unsigned long rewrite(struct vs_mm *mm)
{
	ck_assert_int_eq(vs_mprotect(mm, A0, PG, VS_PROT_READ), 0);
	ck_assert_int_eq(vs_mprotect(mm, A0, PG, RW), 0);
	ck_assert(!vs_pte_write(pte_at(mm, A0)));
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, VS_FAULT_FLAG_WRITE), 0);
	ck_assert(vs_pte_write(pte_at(mm, A0)));
	return vs_pte_pfn(pte_at(mm, A0));
}

/* COW of a page only this PTE maps: reused at every version (from 5.9
 * once this CPU's LRU batch let go of it); with a pin's reference
 * copied from 5.9 (refcount), reused by 3.18 (mapcount). */
START_TEST(cow_reuse)
{
	struct vs_mm *mm = mm_kernel(kernels[_i]);
	int rc = (int)mm->mech.cow_refcount;
	struct vs_page *pin;
	unsigned long pfn;

	ck_assert_int_eq(rc, _i < 2);
	map_fixed(mm, A0, 2 * PG, RW, ANON);
	ck_assert_int_eq(vs_handle_mm_fault(mm, A0, VS_FAULT_FLAG_WRITE), 0);
	pfn = vs_pte_pfn(pte_at(mm, A0));
	ck_assert_uint_eq(rewrite(mm), pfn);
	pin = vs_pfn_to_page(mm->pool, pfn);
	vs_get_page(pin);
	ck_assert_int_eq(rewrite(mm) != pfn, rc);
	vs_put_page(mm->pool, pin);
	check_rss(mm);
	ck_assert_int_eq(vs_get_mm_counter(mm, VS_MM_ANONPAGES), 1);
	mm_done(mm);
}
END_TEST

/* ---- references: a file's and an anon_vma's, one per VMA ---------------- */

/*
 * The VMAs of @mm that hold a reference on @obj: map it (vm_file) or
 * point at it (anon_vma).  Context: takes mmap_lock for read.
 */
static long refs_held(struct vs_mm *mm, const void *obj)
{
	struct vs_vma *v;
	long n = 0;

	vs_mmap_read_lock(mm);
	for (v = vs_find_vma(mm, 0); v; v = vs_find_vma(mm, v->vm_end))
		n += (const void *)v->vm_file == obj ||
		     (const void *)vs_read_once(&v->anon_vma) == obj;
	vs_mmap_read_unlock(mm);
	return n;
}

/*
 * docs/locking.md §2: @count (a file's or an anon_vma's refcount) is
 * @own plus one per VMA of @a and @b (NULL: none) that holds @obj.  One
 * too few, and the last unmap of another VMA frees @obj while this one
 * still uses it.  After a barrier: a VMA drops its references in its
 * RCU callback, a typesafe one (6.18) its file's after a grace period.
 */
static void refs_check(vs_atomic_long_t *count, const void *obj, long own,
		       struct vs_mm *a, struct vs_mm *b, const char *after)
{
	long vmas, refs;

	vs_rcu_barrier();
	vmas = refs_held(a, obj) + (b ? refs_held(b, obj) : 0);
	refs = vs_read_once(count);
	ck_assert_msg(refs == own + vmas, "after %s: %ld references, "
		      "where %ld VMAs and %ld other holders are: too few, and "
		      "the last unmap frees it while a VMA still uses it",
		      after, refs, vmas, own);
}

/*
 * A file mapped, split by mprotect, forked, moved by mremap in the
 * child, unmapped piece by piece after its creator's put: one reference
 * per VMA throughout (each copy takes its own, vs__vma_dup()), and the
 * last VMA still reads the file's page.
 */
START_TEST(file_refs)
{
	struct vs_mm *mm = mm_kernel(kernels[_i]), *child;
	struct vs_file *f;
	char c = 0;

	ck_assert_int_eq(vs_file_create(&f, mm->pool, 4 * PG, O_RDWR), 0);
	ck_assert_int_eq(vs_mmap(mm, A0, 4 * PG, RW, VS_MAP_SHARED |
				 VS_MAP_FIXED | VS_MAP_POPULATE, f, 0),
			 (long)A0);
	ck_assert_int_eq(vs_write(mm, A0 + 3 * PG, "f", 1), 0);
	refs_check(&f->refcount, f, 1, mm, NULL, "mmap");
	ck_assert_int_eq(vs_mprotect(mm, A0 + PG, PG, VS_PROT_READ), 0);
	refs_check(&f->refcount, f, 1, mm, NULL, "a split in three");
	ck_assert_int_eq(vs_fork(mm, &child), 0);
	refs_check(&f->refcount, f, 1, mm, child, "fork");
	ck_assert_int_eq(vs_mremap(child, A0 + 2 * PG, 2 * PG, 2 * PG,
				   VS_MREMAP_MAYMOVE | VS_MREMAP_FIXED,
				   A0 + 16 * PG), (long)(A0 + 16 * PG));
	refs_check(&f->refcount, f, 1, mm, child, "mremap's move");
	ck_assert_int_eq(vs_file_destroy(f), 0);
	refs_check(&f->refcount, f, 0, mm, child, "the creator's put");
	mm_done(child);
	refs_check(&f->refcount, f, 0, mm, NULL, "the child's exit");
	ck_assert_int_eq(vs_munmap(mm, A0, 2 * PG), 0);
	refs_check(&f->refcount, f, 0, mm, NULL, "munmap");
	ck_assert_int_eq(vs_read(mm, A0 + 3 * PG, &c, 1), 0);
	ck_assert_int_eq(c, 'f');
	mm_done(mm);
}
END_TEST

/*
 * Two neighbours that differ only in their access bits: the second's
 * first write reuses the first's anon_vma (vs__anon_vma_prepare()); then
 * a split, a fork, unmaps.  One reference per VMA that points at it, and
 * the last one still writes and reads.
 */
START_TEST(anon_vma_refs)
{
	struct vs_mm *mm = mm_kernel(kernels[_i]), *child;
	struct vs_anon_vma *av;
	struct vs_vma *v;
	char c = 0;

	map_fixed(mm, A0, 2 * PG, RW, ANON);
	map_fixed(mm, A0 + 2 * PG, PG, RW | VS_PROT_EXEC, ANON);
	ck_assert_int_eq(vs_write(mm, A0, "a", 1), 0);
	vs_mmap_read_lock(mm);
	av = vs_read_once(&vs_vma_lookup(mm, A0)->anon_vma);
	vs_mmap_read_unlock(mm);
	ck_assert_ptr_nonnull(av);
	refs_check(&av->refcount, av, 0, mm, NULL, "the first write");
	ck_assert_int_eq(vs_write(mm, A0 + 2 * PG, "b", 1), 0);
	vs_mmap_read_lock(mm);
	v = vs_vma_lookup(mm, A0 + 2 * PG);
	ck_assert_ptr_eq(vs_read_once(&v->anon_vma), av);
	vs_mmap_read_unlock(mm);
	refs_check(&av->refcount, av, 0, mm, NULL, "the neighbour's reuse");
	ck_assert_int_eq(vs_mprotect(mm, A0 + PG, PG, VS_PROT_READ), 0);
	refs_check(&av->refcount, av, 0, mm, NULL, "a split");
	ck_assert_int_eq(vs_fork(mm, &child), 0);
	refs_check(&av->refcount, av, 0, mm, child, "fork");
	ck_assert_int_eq(vs_munmap(mm, A0, 2 * PG), 0);
	refs_check(&av->refcount, av, 0, mm, child, "munmap");
	mm_done(child);
	refs_check(&av->refcount, av, 0, mm, NULL, "the child's exit");
	ck_assert_int_eq(vs_write(mm, A0 + 2 * PG + 1, "c", 1), 0);
	ck_assert_int_eq(vs_read(mm, A0 + 2 * PG, &c, 1), 0);
	ck_assert_int_eq(c, 'b');
	mm_done(mm);
}
END_TEST

Suite *mm_suite(void)
{
	Suite *s = suite_create("mm");
	int n;

	vs_test_add(vs_test_tcase(s, "ops"), mm_create_args, mm_lock_seq,
		    mmap_lock_speculate, vma_refcnt_and_reuse, fork_locks_vmas,
		    mmap_errors, mmap_topdown_merge, mmap_hint_and_fixed,
		    mmap_topdown_gaps, mmap_populate_accounting,
		    mm_destroy_returns_pages, mm_destroy_busy, munmap_cases,
		    mprotect_split_merge, mprotect_hole, madvise_dontneed,
		    brk_grow_shrink, mm_dump_format, file_mappings,
		    mremap_cases, mremap_multi_vma, mremap_move_enomem,
		    shared_anon_pages,
		    fork_cow, mm_caches_balance);
	for (n = 0; vs_lock_kind_name(n); n++)
		;
	vs_test_add_loop(vs_test_tcase(s, "concurrent"), n,
			 pervma_readers_vs_writer);
	vs_test_add_loop(vs_test_tcase(s, "versions"), 3, munmap_downgrade,
			 dontneed_vma_lock, dontneed_pt_reclaim, cow_reuse);
	vs_test_add_loop(vs_test_tcase(s, "refs"), 3, file_refs,
			 anon_vma_refs);
	return s;
}
