/* SPDX-License-Identifier: MIT */
/*
 * test/check/writer.c - the writer of the stress run: random mprotect,
 * MADV_DONTNEED, munmap, mmap, mremap, a downgraded write hold and fork
 * over the arena, each bracketed by the sequence count and published
 * in the operation log with the shadow it left; the traps that make
 * the hard races likely; the prober that answers a downgrade; the fork
 * child (internal.h).
 */
#include <errno.h>
#include <string.h>

#include <vmsim/file.h>
#include <vmsim/rcu.h>
#include <vmsim/thread.h>
#include <vmsim/wait.h>

#include "internal.h"

/* ---- the writer's view of the arena -------------------------------------- */

/*
 * Read the arena's state from the VMA list into @sh, and check that
 * nothing is mapped outside it.  Context: takes @mm's mmap_lock for
 * read.  Return: 0, or -1 after vs__stress_bug().
 */
int vs__stress_read_state(struct stress *r, struct vs_mm *mm, uint32_t *sh)
{
	unsigned long a, e, fl, pgoff, end = pg_addr(NP);
	struct vs_file *file;
	struct vs_vma *v;
	uint32_t st;
	int err = 0;

	memset(sh, 0, NP * sizeof(*sh));
	vs_mmap_read_lock(mm);
	for (v = vs_find_vma(mm, 0); v; v = vs_find_vma(mm, v->vm_end)) {
		if (v->vm_start < ARENA || v->vm_end > end) {
			vs__stress_bug(r, "a VMA %#lx-%#lx outside the arena "
			    "%#lx-%#lx",
			    (unsigned long)v->vm_start,
			    (unsigned long)v->vm_end, ARENA, end);
			err = -1;
			break;
		}
		fl = v->vm_flags;
		file = v->vm_file;
		pgoff = v->vm_pgoff;
		st = SH_MAPPED | (fl & VS_VM_READ ? SH_READ : 0) |
		     (fl & VS_VM_WRITE ? SH_WRITE : 0) |
		     (fl & VS_VM_SHARED ? SH_SHARED : 0);
		for (a = v->vm_start, e = v->vm_end; a < e; a += PG)
			sh[(a - ARENA) / PG] = st |
				(file && pgoff + (a - v->vm_start) / PG >=
				 file->nr_pages ? SH_EOF : 0);
	}
	vs_mmap_read_unlock(mm);
	return err;
}

/* Begin operation @o: the watchdog's view, then the count goes odd. */
static void op_begin(struct stress *r, const struct op *o)
{
	vs__stress_doing(&r->writer_w, o->type, o->s, o->n);
	r->op_inj0 = vs_fail_injected_here();
	/* Fully ordered: odd before any change (the seqcount writer's
	 * begin; pairs with the faulters' acquire and mb). */
	vs_fetch_add(&r->seq, 1);
}

/*
 * Did the operation that began last return @err for an injected
 * allocation failure: -ENOMEM with @r->fail set and a failure injected
 * into the writer's allocations since it began (its thread's or vCPU's:
 * vs_fail_injected_here())?  Counts it.
 * Context: the writer.
 */
static int injected_enomem(struct stress *r, long err)
{
	if (err != -ENOMEM || !r->fail ||
	    vs_fail_injected_here() == r->op_inj0)
		return 0;
	r->op_enomem++;
	return 1;
}

/*
 * May mprotect or madvise of [s, s + n) return @err?  -ENOMEM exactly
 * when a page of the range is unmapped, or for an injected failure;
 * else 0.  Context: the writer.
 */
static int hole_err_ok(struct stress *r, int err, int s, int n)
{
	int p, hole = 0;

	for (p = s; p < s + n; p++)
		hole |= !(r->cur[p] & SH_MAPPED);
	if (!err)
		return !hole;
	return err == -ENOMEM && (hole || injected_enomem(r, err));
}

/* The first page of @now that is not as @want says, or -1. */
static int ok_bad_page(const uint32_t *want, const uint32_t *now)
{
	int p;

	for (p = 0; want && p < NP; p++)
		if (want[p] != now[p])
			return p;
	return -1;
}

/*
 * After a moving mremap @o failed, may page @p be @now[p]?  The
 * destination and the source's cut tail may be unmapped (mremap_to()
 * unmaps them first); a page of the source may have moved (VMA by VMA)
 * to its place in the destination, unmapped at the source.
 */
static int move_failed_ok(const struct op *o, int p, const uint32_t *was,
			  const uint32_t *now)
{
	int m = o->n < o->nn ? o->n : o->nn, src = o->s + p - o->d;

	if (in(p, o->s, m))		/* moved, or as it was */
		return !(now[p] & SH_MAPPED) &&
		       now[o->d + p - o->s] == was[p];
	if (in(p, o->s, o->n))		/* the cut tail */
		return !(now[p] & SH_MAPPED);
	if (in(p, o->d, m))		/* unmapped first, or moved here */
		return !(now[p] & SH_MAPPED) ||
		       (now[p] == was[src] && !(now[src] & SH_MAPPED));
	return in(p, o->d, o->nn) && !(now[p] & SH_MAPPED);
}

/*
 * Operation @o failed: is the state @now what the kernel's would leave
 * (stress.h, Allocation failures)?  @was: before it; @want: had it
 * succeeded (mprotect).  Context: the writer.
 * Return: the first page that is not, or -1.
 */
static int failed_bad_page(const struct op *o, const uint32_t *was,
			   const uint32_t *want, const uint32_t *now)
{
	int p, k = o->s;

	if (o->type == OP_MPROTECT)	/* changed before k, not from k */
		while (k < o->s + o->n && now[k] == want[k])
			k++;
	for (p = 0; p < NP; p++) {
		if (now[p] == was[p] ||
		    (o->type == OP_MPROTECT && in(p, o->s, k - o->s)) ||
		    (o->type == OP_MREMAP && o->d != o->s &&
		     move_failed_ok(o, p, was, now)))
			continue;
		return p;
	}
	return -1;
}

/*
 * End operation @o: read the new state and compare it with @want, its
 * state had it succeeded (NULL: not checked), or, when @o failed, with
 * what a failure may leave; publish it and the log entry, make the
 * count even.
 */
static void op_end(struct stress *r, struct op *o, const uint32_t *want)
{
	uint32_t sh[NP];
	char b1[32], b2[32];
	int p;

	if (vs__stress_read_state(r, r->mm, sh) == 0) {
		p = o->ok ? ok_bad_page(want, sh) :
			    failed_bad_page(o, r->cur, want, sh);
		if (p >= 0)
			vs__stress_bug(r, "%s s %d n %d d %d nn %d %s: page "
			    "%d is %s, %s %s", vs__stress_doing_name(o->type),
			    o->s, o->n, o->d, o->nn,
			    o->ok ? "returned ok" : "failed", p,
			    vs__stress_st_str(sh[p], b1),
			    o->ok ? "expected" : "was",
			    vs__stress_st_str(o->ok ? want[p] : r->cur[p],
					      b2));
	}
	for (p = 0; p < NP; p++) {
		r->cur[p] = sh[p];
		vs_write_once(&r->shadow[p], sh[p]);
	}
	vs__stress_log_put(r, r->nops, o);
	r->nops++;
	r->ops[o->type]++;
	if (!o->ok)
		r->op_fail++;
	/* Fully ordered: the shadow and the log before the even count. */
	vs_fetch_add(&r->seq, 1);
}

static void pick_range(struct stress *r, int *s, int *n)
{
	int x = below(&r->rng, 100);

	*s = x < 70 ? (int)vs_read_once(&r->hot) + below(&r->rng, HOT) :
		      below(&r->rng, NP);
	*n = 1 + below(&r->rng, x % 5 ? 4 : 16);
	if (*s + *n > NP)
		*n = NP - *s;
}

static void do_mprotect(struct stress *r, int s, int n, int prot)
{
	struct op o = { OP_MPROTECT, 0, s, n, s, n, 0 };
	uint32_t want[NP];
	int err, p;

	op_begin(r, &o);
	err = vs_mprotect(r->mm, pg_addr(s), (size_t)n * PG, prot);
	if (!hole_err_ok(r, err, s, n))
		vs__stress_bug(r, "mprotect(page %d, %d pages, %d) returned %d",
		    s, n, prot, err);
	o.ok = err == 0;
	for (p = 0; p < NP; p++)	/* as it succeeded */
		want[p] = !in(p, s, n) || !(r->cur[p] & SH_MAPPED) ? r->cur[p] :
			  (r->cur[p] & (SH_MAPPED | SH_SHARED | SH_EOF)) |
			  (prot & VS_PROT_READ ? SH_READ : 0) |
			  (prot & VS_PROT_WRITE ? SH_WRITE : 0);
	op_end(r, &o, want);
}

static void do_dontneed(struct stress *r, int s, int n)
{
	struct op o = { OP_DONTNEED, 0, s, n, s, n, 0 };
	int err, p;

	for (p = s; p < s + n; p++)
		if ((r->cur[p] & (SH_MAPPED | SH_SHARED)) == SH_MAPPED)
			o.mask |= UINT64_C(1) << p;
	op_begin(r, &o);
	err = vs_madvise(r->mm, pg_addr(s), (size_t)n * PG,
			 VS_MADV_DONTNEED);
	if (!hole_err_ok(r, err, s, n))
		vs__stress_bug(r, "madvise(page %d, %d pages) returned "
		    "%d", s, n,
		    err);
	o.ok = err == 0;
	op_end(r, &o, r->cur);	/* no mapping changes */
}

static void do_munmap(struct stress *r, int s, int n)
{
	struct op o = { OP_MUNMAP, 0, s, n, s, n, 0 };
	uint32_t want[NP];
	int err, p;

	op_begin(r, &o);
	err = vs_munmap(r->mm, pg_addr(s), (size_t)n * PG);
	if (err && !injected_enomem(r, err))
		vs__stress_bug(r, "munmap(page %d, %d pages) returned %d", s, n,
		    err);
	o.ok = err == 0;
	for (p = 0; p < NP; p++)
		want[p] = in(p, s, n) ? 0 : r->cur[p];
	op_end(r, &o, want);
}

static void w_mprotect(struct stress *r)
{
	static const int prots[] = { RW, RW, RW, VS_PROT_READ, VS_PROT_READ,
				     VS_PROT_READ, VS_PROT_NONE,
				     VS_PROT_NONE };
	int s, n;

	pick_range(r, &s, &n);
	do_mprotect(r, s, n, prots[below(&r->rng, 8)]);
}

static void w_dontneed(struct stress *r)
{
	int s, n;

	pick_range(r, &s, &n);
	do_dontneed(r, s, n);
}

static void w_munmap(struct stress *r)
{
	int s, n;

	pick_range(r, &s, &n);
	do_munmap(r, s, n);
}

/*
 * Has a faulter taken the trap the writer asked for (TRAP_ASK gone)?
 * Waits TRAP_ASK_NS for it to be held; in an explored run, spins
 * TRAP_ASK_STEPS times instead (each spin lets every other context run
 * until it stops), counted in steps, not in virtual time, which a
 * preemption dropped by shrinking would move.  The acquire pairs with
 * the faulter's cmpxchg (take_trap()).  Context: the writer.
 */
static int trap_taken(struct stress *r)
{
	int i;

	if (!r->explore)
		return vs__stress_wait_eq(&r->trap, TRAP_HELD, TRAP_ASK_NS);
	for (i = 0; i < TRAP_ASK_STEPS; i++) {
		if (vs_load_acquire(&r->trap) != TRAP_ASK)
			return 1;
		vs_cpu_relax();
	}
	return vs_load_acquire(&r->trap) != TRAP_ASK;
}

/*
 * w_trap - make likely the race that the speculative fault's
 * revalidation under the PTL, the VMA write mark and pte_same exist
 * for: a fault that made its last lockless check, then waits for the
 * PTL while the VMA changes and the change's PTE pass goes first.
 *
 * Zap the hot window, so that faults there install PTEs; have a
 * faulter hold the arena's PTL; nap, so that the other faulters' faults
 * pile up on it (sleeping, past their last check); then start a
 * restricting operation on the hot window and let the PTL go a few
 * microseconds later.  The operation (mmap_lock, VMA changes, no PTL
 * yet) reaches the PTL while still spinning, and a spinner beats the
 * sleepers to it: its PTE pass runs before the waiting faults install.
 * A correct fault then sees the change (vm_sequence, vm_lock_seq, the
 * PTE) or the change waited for it (the VMA write mark); a broken one
 * installs a PTE the checks find.
 */
static void w_trap(struct stress *r)
{
	int hot = (int)vs_read_once(&r->hot), x = below(&r->rng, 4);
	uint32_t old = TRAP_ASK;
	unsigned int nap;

	do_dontneed(r, hot, HOT);
	vs__stress_doing(&r->writer_w, DO_TRAP, hot, HOT);
	vs_write_once(&r->trap_delay, (uint64_t)(500 + below(&r->rng, 6000)));
	/* Drawn whether used or not: the writer's next draws do not
	 * depend on whether a faulter came by (a seed replays better). */
	nap = 20 + (unsigned int)below(&r->rng, 60);
	vs__stress_set_word(&r->trap, TRAP_ASK);
	if (!trap_taken(r) && vs_cmpxchg(&r->trap, &old, TRAP_IDLE))
		return;		/* no faulter came by: no trap */
	if (vs__stress_wait(r, &r->trap, TRAP_HELD, TRAP_ASK_NS)) {
		vs__stress_nap_us(r, nap);
		/* The holder may have given up meanwhile (then IDLE). */
		old = TRAP_HELD;
		if (vs_cmpxchg(&r->trap, &old, TRAP_GO)) {
			vs_futex_wake(&r->trap, INT32_MAX);	/* wait_go() */
			r->traps++;
		}
	}
	if (x == 0)
		do_munmap(r, hot, HOT);
	else
		do_mprotect(r, hot, HOT, x == 1 ? VS_PROT_READ : VS_PROT_NONE);
	/* The holder is gone before anything else. */
	if (!vs__stress_wait(r, &r->trap, TRAP_IDLE, WAIT_NS))
		vs__stress_bug(r, "the PTL holder did not let go");
}

/*
 * do_mmap - map [s, s + n) anew: private or shared, @prot, populated or
 * not.  Return: 1 when it worked.
 */
static int do_mmap(struct stress *r, int s, int n, int prot, int shared,
		   int populate)
{
	struct op o = { OP_MMAP, 0, s, n, s, n, 0 };
	int p, flags = (shared ? VS_MAP_SHARED : VS_MAP_PRIVATE) |
		       VS_MAP_ANONYMOUS | VS_MAP_FIXED |
		       (populate ? VS_MAP_POPULATE : 0);
	uint32_t want[NP];
	long ret;

	op_begin(r, &o);
	ret = vs_mmap(r->mm, pg_addr(s), (size_t)n * PG, prot, flags, NULL,
		      0);
	if (ret != (long)pg_addr(s) && !injected_enomem(r, ret))
		vs__stress_bug(r, "mmap(page %d, %d pages, %d, %#x) returned "
		    "%ld",
		    s, n, prot, (unsigned int)flags, ret);
	o.ok = ret == (long)pg_addr(s);
	for (p = 0; p < NP; p++)
		want[p] = !in(p, s, n) ? r->cur[p] :
			  SH_MAPPED | SH_READ |
			  (prot & VS_PROT_WRITE ? SH_WRITE : 0) |
			  (shared ? SH_SHARED : 0);
	op_end(r, &o, want);
	return o.ok;
}

/*
 * do_mremap - vs_mremap of [s, s + n) to [d, d + nn) (d == s: in place),
 * any result accepted but a wrong address.
 */
static void do_mremap(struct stress *r, int s, int n, int nn, int d)
{
	struct op o = { OP_MREMAP, 0, s, n, d, nn, 0 };
	int flags = d != s ? VS_MREMAP_MAYMOVE | VS_MREMAP_FIXED : 0;
	long ret;

	op_begin(r, &o);
	ret = vs_mremap(r->mm, pg_addr(s), (size_t)n * PG, (size_t)nn * PG,
			flags, flags ? pg_addr(d) : 0);
	o.ok = ret >= 0;
	if (d != s)	/* counted; in place, it may be want of room */
		(void)injected_enomem(r, ret);
	if (o.ok && ret != (long)pg_addr(d))
		vs__stress_bug(r, "mremap(page %d, %d, %d, %#x, page %d) "
		    "returned %#lx", s, n, nn, (unsigned int)flags, d,
		    (unsigned long)ret);
	else if (!o.ok && ret != -EFAULT && ret != -ENOMEM &&
		 ret != -EINVAL)
		vs__stress_bug(r, "mremap(page %d, %d, %d, %#x, page %d) "
		    "returned %ld", s, n, nn, (unsigned int)flags, d,
		    ret);
	op_end(r, &o, NULL);
}

/*
 * w_move_trap - move a window the faulters are reading.  While an
 * mremap moves PTEs one by one, the old VMA must admit no fault: a
 * page already moved would fault in fresh at the old place, so a read
 * there returns zero and a write is lost when the old range goes.  The
 * VMA write mark keeps per-VMA faults out, vm_sequence speculative
 * ones.  Map a fresh private window, let the faulters fill it (they
 * aim at the hot window), then move it away under them; in an explored
 * run with the stall above, so that a fault that slipped past the mark
 * needs no preemption of the writer to install behind the move.
 */
static void w_move_trap(struct stress *r)
{
	int s = below(&r->rng, NP - HOT + 1), d, tries, stall;

	for (tries = 0; tries < 16; tries++) {
		d = below(&r->rng, NP - HOT + 1);
		if (d + HOT <= s || d >= s + HOT)
			break;
	}
	if (tries == 16)
		return;
	vs_write_once(&r->hot, (uint32_t)s);
	if (!do_mmap(r, s, HOT, RW, 0, below(&r->rng, 2)))
		return;
	vs__stress_nap_us(r, 50 + (unsigned int)below(&r->rng, 150));
	stall = r->explore &&
		!vs_mmu_notifier_register(r->mm, &vs_explore_move_stall);
	do_mremap(r, s, HOT, HOT, d);
	if (stall)
		(void)vs_mmu_notifier_unregister(r->mm,
						 &vs_explore_move_stall);
	r->move_traps++;
}

static void w_mmap(struct stress *r)
{
	int holes[NP], nh = 0, p, s, n;

	pick_range(r, &s, &n);
	for (p = 0; p < NP; p++)
		if (!(r->cur[p] & SH_MAPPED))
			holes[nh++] = p;
	if (nh && below(&r->rng, 10) < 8) {	/* mostly fill a hole */
		s = holes[below(&r->rng, nh)];
		n = 1 + below(&r->rng, 4);
		if (s + n > NP)
			n = NP - s;
	}
	/* The type of the half it starts in. */
	(void)do_mmap(r, s, n, below(&r->rng, 8) ? RW : VS_PROT_READ,
		      s >= NP / 2, !below(&r->rng, 4));
}

/* Shrink or grow in place, or move elsewhere in the arena. */
static void w_mremap(struct stress *r)
{
	int x = below(&r->rng, 100), tries, shared, s, n, nn, d;

	for (tries = 0; tries < 8; tries++) {
		pick_range(r, &s, &n);
		if (r->cur[s] & SH_MAPPED)
			break;
	}
	if (!(r->cur[s] & SH_MAPPED))
		return;
	shared = (r->cur[s] & SH_SHARED) != 0;
	d = s;
	if (x < 35) {			/* shrink */
		if (n < 2)
			return;
		nn = 1 + below(&r->rng, n - 1);
	} else if (x < 60) {		/* grow (shmem would pass EOF) */
		if (shared)
			return;
		nn = n + 1 + below(&r->rng, 3);
		if (s + nn > NP)
			return;
	} else {			/* move */
		nn = shared ? 1 + below(&r->rng, n) :
			      1 + below(&r->rng, n + 2);
		for (tries = 0; tries < 8; tries++) {
			d = below(&r->rng, NP - nn + 1);
			if (d + nn <= s || d >= s + n)
				break;
		}
		if (tries == 8)
			return;
	}
	do_mremap(r, s, n, nn, d);
}

/*
 * w_downgrade - a write hold of the mmap_lock turned into a read hold
 * (vs_mmap_write_downgrade()), as munmap does in the kernel.  Beside it
 * the prober must get a read hold within PROBE_NS (a downgrade that
 * kept the write side shuts readers out) and must not get a write hold
 * (a downgrade that dropped the lock lets a writer in beside the
 * downgraded reader).  Context: the writer; takes @r->mm's mmap_lock
 * for writing, downgrades it and returns with it released.
 */
static void w_downgrade(struct stress *r)
{
	int64_t t0;

	vs__stress_doing(&r->writer_w, DO_DOWNGRADE, 0, NP);
	vs_mmap_write_lock(r->mm);
	vs_mmap_write_downgrade(r->mm);
	r->downgrades++;
	t0 = now_ns();
	vs__stress_set_word(&r->probe, PROBE_ASK);
	if (!vs__stress_wait_eq(&r->probe, PROBE_DONE, PROBE_NS))
		vs__stress_bug(r, "downgrade_write: a reader waited %" PRId64
			       " ms for the mmap_lock beside the downgraded "
			       "holder (the downgrade kept the write side)",
			       (now_ns() - t0) / NS_PER_MS);
	else if (vs_read_once(&r->probe_wrote))
		vs__stress_bug(r, "downgrade_write: a writer took the "
			       "mmap_lock while the downgraded holder still "
			       "held it for reading");
	vs_mmap_read_unlock(r->mm);
	/* The prober is out of the lock before the next operation. */
	if (vs__stress_wait_eq(&r->probe, PROBE_DONE, WAIT_NS))
		vs__stress_set_word(&r->probe, PROBE_IDLE);
	else
		vs__stress_bug(r, "the prober did not answer");
}

/*
 * Wait for the writer's request: in 1 ms naps, to see the stop; in an
 * explored run untimed (a timed wait there would end only when nobody
 * else can run, and keep a deadlock from being seen), until the request
 * or PROBE_QUIT.  Return: 1 when asked.
 */
static int probe_asked(struct stress *r)
{
	uint32_t cur;

	if (!r->explore)
		return vs__stress_wait_eq(&r->probe, PROBE_ASK, NS_PER_MS);
	while ((cur = vs_load_acquire(&r->probe)) != PROBE_ASK &&
	       cur != PROBE_QUIT)
		(void)vs_futex_wait(&r->probe, cur, -1);
	return cur == PROBE_ASK;
}

/*
 * The prober thread: when the writer asks (w_downgrade), take the
 * mmap_lock for reading and let it go, then try it for writing (and
 * let that go too).  It holds no lock between requests.
 */
void *vs__stress_prober_main(void *arg)
{
	struct stress *r = arg;
	struct watch *w = &r->prober_w;
	uint64_t steps = 0;
	int wrote;

	vs_thread_attach();
	vs__stress_watch_attach(w);
	while (!vs_load_acquire(&r->stop)) {
		vs_write_once(&w->progress, ++steps);
		vs__stress_doing(w, DO_PROBE_WAIT, 0, 0);
		vs_rcu_quiescent_state(); /* urcu-qsbr */
		if (!probe_asked(r))
			continue;
		vs__stress_doing(w, DO_PROBE_READ, 0, 0);
		vs_mmap_read_lock(r->mm);
		vs_mmap_read_unlock(r->mm);
		vs__stress_doing(w, DO_PROBE_WRITE, 0, 0);
		wrote = vs_lock_write_trylock(&r->mm->mmap_lock);
		if (wrote)	/* no VMA marked: the lock alone */
			vs_lock_write_unlock(&r->mm->mmap_lock);
		vs_write_once(&r->probe_wrote, (uint32_t)wrote);
		vs__stress_set_word(&r->probe, PROBE_DONE);
	}
	vs__stress_watch_done(w);
	return NULL;
}

/* ---- the fork child ------------------------------------------------------ */

void vs__stress_child_destroy(struct stress *r)
{
	int err = vs_mm_destroy(r->child);

	if (err)
		vs__stress_bug(r, "vs_mm_destroy(child) returned %d", err);
	vs_write_once(&r->child_lock, 0);
	r->child = NULL;
}

/*
 * Fork: the child must look like the parent did at fork time.
 * Context: the writer; nobody else uses the child.
 */
static void child_fork(struct stress *r)
{
	uint32_t sh[NP];
	char b1[32], b2[32];
	int err, p;

	vs__stress_doing(&r->writer_w, DO_FORK, 0, NP);
	r->op_inj0 = vs_fail_injected_here();
	err = vs_fork(r->mm, &r->child);
	if (err) {
		r->child = NULL;
		if (!injected_enomem(r, err))
			vs__stress_bug(r, "vs_fork returned %d", err);
		else if (!vs__stress_read_state(r, r->mm, sh) &&
			 memcmp(sh, r->cur, sizeof(sh)))
			vs__stress_bug(r, "fork failed and changed the "
				       "parent's VMAs");
		return;
	}
	r->forks++;
	vs_write_once(&r->child_lock,
	    (uint64_t)(uintptr_t)&r->child->mmap_lock);
	memcpy(r->child_sh, r->cur, sizeof(sh));
	r->child_life = 100 + below(&r->rng, 400);
	if (vs__stress_read_state(r, r->child, sh))
		return;
	for (p = 0; p < NP; p++)
		if (sh[p] != r->child_sh[p]) {
			vs__stress_bug(r, "fork: child page %d is %s, parent's "
			    "was %s",
			    p, vs__stress_st_str(sh[p], b1),
			    vs__stress_st_str(r->child_sh[p], b2));
			return;
		}
}

/*
 * Age the child: its memory (the writer's slot) must read back what
 * the writer stores there, where its mappings at fork allow it.
 * Context: the writer.
 */
static void child_age(struct stress *r)
{
	struct rec v, got;
	int p, werr, rerr;
	char b1[32];

	if (--r->child_life <= 0) {
		vs__stress_child_destroy(r);
		return;
	}
	p = below(&r->rng, NP);
	vs__stress_doing(&r->writer_w, DO_CHILD, p, 1);
	v = (struct rec){ REC_MAGIC | 0xff, (uint32_t)p, r->nops + 1 };
	werr = vs_write(r->child, pg_addr(p) + CHILD_SLOT, &v, sizeof(v));
	memset(&got, 0, sizeof(got));
	rerr = vs_read(r->child, pg_addr(p) + CHILD_SLOT, &got, sizeof(got));
	/* Out of memory where the access may succeed: counted. */
	if (r->fail && (werr == -ENOMEM || rerr == -ENOMEM) &&
	    (werr != -ENOMEM || allowed(r->child_sh[p], 1)) &&
	    (rerr != -ENOMEM || allowed(r->child_sh[p], 0))) {
		r->oom++;
		return;
	}
	if ((werr == 0) != allowed(r->child_sh[p], 1) ||
	    (rerr == 0) != allowed(r->child_sh[p], 0) ||
	    (werr && werr != -EFAULT) || (rerr && rerr != -EFAULT))
		vs__stress_bug(r, "child page %d (%s): write %d, read %d", p,
		    vs__stress_st_str(r->child_sh[p], b1), werr, rerr);
	else if (!werr && !rec_eq(&got, &v))
		vs__stress_bug(r, "child page %d: read {%#x %u "
		    "%" PRIu64 "} after "
		    "writing {%#x %u %" PRIu64 "}", p, got.tag, got.page,
		    got.count, v.tag, v.page, v.count);
}

/* Fork (@fork_now, when there is no child), or age the child. */
void vs__stress_w_child(struct stress *r, int fork_now)
{
	if (!r->child && fork_now)
		child_fork(r);
	else if (r->child)
		child_age(r);
}
/* One writer operation, chosen at random. */
void vs__stress_writer_op(struct stress *r)
{
	int x = below(&r->rng, 100);

	if (x < 24)
		w_mprotect(r);
	else if (x < 26)
		w_downgrade(r);
	else if (x < 46)
		w_dontneed(r);
	else if (x < 56)
		w_munmap(r);
	else if (x < 74)
		w_mmap(r);
	else if (x < 84)
		w_mremap(r);
	else if (x < 93)
		w_trap(r);
	else if (x < 98)
		w_move_trap(r);
	else
		vs__stress_spin_ns(r, 2000);	/* a quiet spell */
}
