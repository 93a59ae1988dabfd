/* SPDX-License-Identifier: MIT */
/*
 * test/check/faulter.c - the faulter threads of the stress run: each
 * writes, reads, touches and faults its own slot of the arena's pages,
 * judges what it saw against the shadow (no operation overlapped) or,
 * once the operations it overlapped are in the log, against them
 * (internal.h).
 */
#include <errno.h>
#include <string.h>

#include <vmsim/rcu.h>
#include <vmsim/thread.h>
#include <vmsim/wait.h>

#include "internal.h"

/* ---- the faulters ------------------------------------------------------ */

/* Pick a page: the hot window mostly, a guard page now and then (-1). */
static int pick_page(struct faulter *f)
{
	int x = below(&f->rng, 100);

	if (x < 3)
		return -1;
	if (vs_read_once(&f->r->trap) == TRAP_HELD)	/* pile up */
		return (int)vs_read_once(&f->r->hot) + below(&f->rng, 2);
	if (x < 65)
		return (int)vs_read_once(&f->r->hot) + below(&f->rng, HOT);
	return below(&f->rng, NP);
}

static unsigned long slot_addr(struct faulter *f, int p)
{
	if (p < 0)
		return (below(&f->rng, 2) ? ARENA - PG : ARENA + NP * PG) +
		       512 + 64 * (unsigned long)f->id;
	return pg_addr(p) + 512 + 64 * (unsigned long)f->id;
}

/* What any read of our slot may hold: zeroes or one of our records. */
static void check_own(struct faulter *f, int p, const struct rec *v)
{
	if (rec_zero(v) || (v->tag == (REC_MAGIC | (uint32_t)f->id) &&
			    v->count && v->count <= f->count))
		return;
	vs__stress_bug(f->r, "faulter %d: page %d slot holds {%#x %u %" PRIu64
	    "}, not ours", f->id, p, v->tag, v->page, v->count);
}

/*
 * Wait for the writer's go (w_trap), until @end.  Spin, not sleep: the
 * release must follow "go" closely.  Explored, asleep and untimed: the
 * go follows HELD whatever else happens, and a spin timed in virtual
 * time would put a preemption at each of its steps that a shrunk
 * schedule must keep.  The acquire pairs with the writer's cmpxchg.
 */
static void wait_go(struct stress *r, int64_t end)
{
	uint32_t cur;

	if (r->explore) {
		while ((cur = vs_load_acquire(&r->trap)) == TRAP_HELD)
			(void)vs_futex_wait(&r->trap, cur, -1);
		return;
	}
	while (vs_load_acquire(&r->trap) != TRAP_GO && now_ns() < end)
		vs_cpu_relax();
}

/*
 * The trap (see w_trap): hold the arena's PTL, taken as the MMU walk
 * takes it (under RCU, no mmap_lock), until the writer says go, then a
 * few microseconds more.  Context: a faulter that won the request.
 */
static void hold_ptl(struct faulter *f)
{
	struct stress *r = f->r;
	int64_t end = now_ns() + TRAP_HOLD_MAX_NS;
	vs_spinlock_t *ptl;
	int locked;

	vs__stress_doing(&f->w, DO_HOLD_PTL, 0, NP);
	vs_rcu_read_lock();
	locked = vs_pte_offset_map_lock(&r->mm->pgtable, ARENA, &ptl) != NULL;
	vs__stress_set_word(&r->trap, TRAP_HELD);
	wait_go(r, end);
	vs__stress_spin_ns(r, vs_read_once(&r->trap_delay));
	if (locked)
		vs_pte_unmap_unlock(ptl);
	vs_rcu_read_unlock();
	vs__stress_set_word(&r->trap, TRAP_IDLE);
	f->holds++;
}

/* One access of a faulter, from its choice to its verdict. */
struct access {
	int p, act, write, exec, ok, ret;
	unsigned long addr;
	uint64_t s1, s2;	/* the sequence count before and after */
	uint32_t st;		/* the shadow of the page before */
	struct rec v;		/* written, or read */
};

/* Take the trap when the writer asks for it.  Return: 1 if taken. */
static int take_trap(struct faulter *f)
{
	uint32_t ask = TRAP_ASK;

	if (vs_read_once(&f->r->trap) != TRAP_ASK ||
	    !vs_cmpxchg(&f->r->trap, &ask, TRAP_TAKEN))
		return 0;
	hold_ptl(f);
	return 1;
}

/*
 * An operation waits for the mmap_lock (@s1 odd).  Race it for a
 * while, then let it in: a reader-preferring kind (pthread) would
 * starve it under constant faults.  Return: 1 after letting it in.
 */
static int let_writer_in(struct faulter *f, uint64_t s1)
{
	if (s1 != f->odd_seq) {
		f->odd_seq = s1;
		f->odd_since = now_ns();
	} else if (now_ns() - f->odd_since > STARVE_NS) {
		vs__stress_nap_us(f->r, STARVE_NAP_US);
		f->odd_since = now_ns();
		return 1;
	}
	return 0;
}

/*
 * Actions: 0-29 write the record, 30-59 read it, 60-74 touch, 75-99
 * raise a fault.  Beside an operation, mostly read (a read after a
 * pending write is not judged); in a trap, fault (a copy would wait for
 * the PTL outside any fault).
 */
static int pick_act(struct faulter *f, uint64_t s1)
{
	int act = below(&f->rng, 100);

	if ((s1 & 1) && act < 60 && below(&f->rng, 16))
		act = 30 + below(&f->rng, 30);
	if (vs_read_once(&f->r->trap) == TRAP_HELD)
		act = 60 + below(&f->rng, 40);
	return act;
}

/*
 * Raise the fault directly.  Return: 0; 1 out of memory (@r->fail set:
 * faulter_step() judges it); -1 after vs__stress_bug().
 */
static int raise_fault(struct faulter *f, struct access *a)
{
	char b[80];

	a->exec = below(&f->rng, 50) == 0;	/* a fetch, not a store */
	a->write = !a->exec && below(&f->rng, 2);
	a->ret = vs_handle_mm_fault(f->r->mm, a->addr, VS_FAULT_FLAG_USER |
				    (a->write ? VS_FAULT_FLAG_WRITE : 0) |
				    (a->exec ? VS_FAULT_FLAG_INSTRUCTION :
				     0));
	if (a->ret == VS_VM_FAULT_OOM && f->r->fail)
		return 1;
	if (a->ret != 0 && a->ret != VS_VM_FAULT_SIGSEGV &&
	    a->ret != VS_VM_FAULT_SIGBUS) {
		vs__stress_bug(f->r, "faulter %d: vs_handle_mm_fault(page "
			       "%d, %s) returned %s", f->id, a->p,
			       a->write ? "write" : "read",
			       vs__stress_fault_str(a->ret, b, sizeof(b)));
		return -1;
	}
	a->ok = a->ret == 0;
	return 0;
}

/* Make the access @a->act says.  Return: as raise_fault(). */
static int do_access(struct faulter *f, struct access *a)
{
	static const int what[] = { DO_WRITE, DO_READ, DO_TOUCH, DO_FAULT };
	struct vs_mm *mm = f->r->mm;

	vs__stress_doing(&f->w, what[(a->act >= 30) + (a->act >= 60) +
				   (a->act >= 75)], a->p, a->p >= 0);

	if (a->act < 30) {		/* store a new record */
		a->write = 1;
		a->v.tag = REC_MAGIC | (uint32_t)f->id;
		a->v.page = (uint32_t)a->p;
		a->v.count = ++f->count;
		a->ret = vs_write(mm, a->addr, &a->v, sizeof(a->v));
	} else if (a->act < 60) {	/* read it back */
		memset(&a->v, 0, sizeof(a->v));
		a->ret = vs_read(mm, a->addr, &a->v, sizeof(a->v));
	} else if (a->act < 75) {	/* touch */
		a->write = below(&f->rng, 2);
		a->ret = vs_access(mm, a->addr, 1, a->write);
	} else {			/* raise the fault directly */
		return raise_fault(f, a);
	}
	if (a->ret == -ENOMEM && f->r->fail)
		return 1;
	if (a->ret != 0 && a->ret != -EFAULT) {
		vs__stress_bug(f->r, "faulter %d: access at page %d returned "
		    "%d",
		    f->id, a->p, a->ret);
		return -1;
	}
	a->ok = a->ret == 0;
	return 0;
}

/* No operation ran beside the access: it must agree with the shadow. */
static void judge_quiet(struct faulter *f, const struct access *a)
{
	struct stress *r = f->r;
	char b[32], got[80], exp[80];
	int p = a->p, want;

	f->quiet++;
	if (a->act >= 75) {
		want = vs__stress_fault_result(a->st, a->write, a->exec);
		if (a->ret != want)
			vs__stress_bug(r, "faulter %d: fault (%s%s) at page "
				       "%d (%s) returned %s, expected %s",
				       f->id, a->exec ? "exec " : "",
				       a->write ? "write" : "read", p,
				       vs__stress_st_str(a->st, b),
				       vs__stress_fault_str(a->ret, got,
							    sizeof(got)),
				       vs__stress_fault_str(want, exp,
							    sizeof(exp)));
		return;
	}
	if (a->ok != allowed(a->st, a->write)) {
		vs__stress_bug(r, "faulter %d: %s at page %d (%s) %s", f->id,
		    a->write ? "write" : "read", p, vs__stress_st_str(a->st, b),
		    a->ok ? "succeeded" : "failed");
		return;
	}
	if (!a->ok || a->act >= 60)
		return;
	if (a->write) {
		f->valid[p] = 1;
		f->exp[p] = a->v;
	} else if (f->valid[p]) {
		f->data_checks++;
		if (!rec_eq(&a->v, &f->exp[p]))
			vs__stress_bug(r, "faulter %d: page %d (%s) read {%#x "
			    "%u %"
			    PRIu64 "}, wrote {%#x %u %" PRIu64 "}", f->id,
			    p, vs__stress_st_str(a->st, b), a->v.tag, a->v.page,
			    a->v.count, f->exp[p].tag, f->exp[p].page,
			    f->exp[p].count);
	}
}

/*
 * Is a write still pending?  A read after it is not judged: the write
 * may have landed at its page or, moved by mremap, at the page read.
 */
static int pending_write(struct faulter *f)
{
	int i;

	for (i = 0; i < f->npend; i++)
		if (f->pend[i].write)
			return 1;
	return 0;
}

/* Operations j_first..j_last ran beside the access: judge it later. */
static void add_pending(struct faulter *f, const struct access *a)
{
	unsigned long j_first, j_last;

	if (!a->ok || a->act >= 60)
		return;
	j_first = a->s1 / 2;
	j_last = (a->s2 - 1) / 2;
	if (!a->write && (j_first != j_last || f->lost || pending_write(f)))
		return;		/* nothing simple to say */
	if (f->npend == MAXPEND) {
		if (a->write && (!f->lost || f->lost_after < j_last)) {
			f->lost = 1;
			f->lost_after = j_last;
		}
		return;
	}
	f->pend[f->npend++] = (struct pending){ a->p, a->write, j_first,
						j_last, a->v };
}

/*
 * The access ran out of memory (allocation failures injected): it may
 * only where it may succeed, as far as the faulter can tell (no
 * operation beside it).  Counted, not judged further.
 */
static void judge_oom(struct faulter *f, const struct access *a)
{
	int quiet = a->s1 == a->s2 && !(a->s1 & 1);
	char b[32];

	f->oom++;
	if (a->p >= 0 && (!quiet ||
			  (a->act >= 75 ? !vs__stress_fault_result(
					    a->st, a->write, a->exec) :
			   allowed(a->st, a->write))))
		return;
	vs__stress_bug(f->r, "faulter %d: %s at %s %d (%s) ran out of memory, "
		       "where it must fail first", f->id,
		       a->write ? "write" : "read",
		       a->p < 0 ? "guard page" : "page", a->p,
		       vs__stress_st_str(a->st, b));
}

static void faulter_step(struct faulter *f)
{
	struct stress *r = f->r;
	struct access a = { .p = pick_page(f) };
	int err;

	a.addr = slot_addr(f, a.p);
	if (take_trap(f))
		return;
	a.s1 = vs_load_acquire(&r->seq);
	vs__stress_catch_up(f, a.s1 / 2);
	if ((a.s1 & 1) && let_writer_in(f, a.s1))
		return;
	a.act = pick_act(f, a.s1);
	/* Acquire: the shadow of the operations the count shows done. */
	a.st = a.p < 0 ? 0 : vs_load_acquire(&r->shadow[a.p]);
	err = do_access(f, &a);
	if (err < 0)
		return;
	/* Full barrier: the access before the second look at the count
	 * (the seqcount reader's rmb; the access also wrote). */
	vs_smp_mb();
	a.s2 = vs_read_once(&r->seq);
	if (err) {
		judge_oom(f, &a);
		return;
	}
	if (a.p < 0) {
		if (a.ok)
			vs__stress_bug(r, "faulter %d: access to a guard page "
			    "at %#lx "
			    "succeeded", f->id, a.addr);
		return;
	}
	if (a.ok && a.act < 60 && !a.write)
		check_own(f, a.p, &a.v);
	if (a.s1 == a.s2 && !(a.s1 & 1))	/* no operation in between */
		judge_quiet(f, &a);
	else
		add_pending(f, &a);
}

/*
 * A faulter thread: steps until the writer says stop, or at the latest
 * FAULTER_GRACE_NS after the deadline (a writer stuck in a lock); in an
 * explored run, after its share of the fault target, in accesses.
 */
void *vs__stress_faulter_main(void *arg)
{
	struct faulter *f = arg;
	struct stress *r = f->r;
	int64_t end = r->deadline + FAULTER_GRACE_NS;

	vs_thread_attach();
	vs__stress_watch_attach(&f->w);
	while (!vs_load_acquire(&r->stop) &&
	       (!r->explore || f->iters < r->target / NF)) {
		faulter_step(f);
		f->iters++;
		vs_write_once(&f->w.progress, f->iters);
		vs_rcu_quiescent_state(); /* urcu-qsbr */
		if (!(f->iters & 1023) && now_ns() > end)
			break;
	}
	vs__stress_watch_done(&f->w);
	return NULL;
}
