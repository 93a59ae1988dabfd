/* SPDX-License-Identifier: MIT */
/*
 * test/check/model.c - what the stress run knows without looking at
 * the mm: the model of a page (which access and fault a state allows),
 * the operation log the writer publishes, and each faulter's model of
 * the records in its slots, replayed from the log (internal.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/rcu.h>
#include <vmsim/wait.h>

#include "internal.h"

/* ---- helpers ------------------------------------------------------------ */

/*
 * vs__stress_bug - report a violation: count it, keep the first message
 * for the report, describe it on the log, and stop everyone.  The
 * message names the writer's operation in flight, or says there is
 * none (the writer may not have begun its first); it stays in r->msg
 * for the report, which reads it once the threads stopped.
 * Context: any thread of the run.
 */
void vs__stress_bug(struct stress *r, const char *fmt, ...)
{
	uint64_t doing = (uint64_t)vs_read_once(&r->writer_w.doing);
	char msg[sizeof(r->msg)], what[64];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (len >= 0 && (size_t)len < sizeof(msg) && doing == DO_NOTHING)
		snprintf(msg + len, sizeof(msg) - (size_t)len,
			 " [writer between operations]");
	else if (len >= 0 && (size_t)len < sizeof(msg))
		snprintf(msg + len, sizeof(msg) - (size_t)len,
			 " [writer in %s]", vs__stress_doing_str(doing, what,
							   sizeof(what)));
	vs__stress_violation(r, msg);
}

/*
 * vs__stress_violation - report violation @msg as it is: count it, keep
 * the first for the report, describe it on the log, stop everyone.
 * Context: any thread of the run, or its watchdog.
 */
void vs__stress_violation(struct stress *r, const char *msg)
{
	uint32_t zero = 0;

	if (vs_cmpxchg(&r->failed, &zero, 1))
		snprintf(r->msg, sizeof(r->msg), "%s", msg);
	vs_fetch_add(&r->violations, 1);
	if (r->out)
		fprintf(r->out, "vs_stress %s/%s seed %#" PRIx64 ": %s\n",
			r->kind, vs_fault_strategy_name(r->strategy),
			r->seed, msg);
	vs_write_once(&r->stop, 1);
	if (r->explore)	/* the schedule fails here, with this report */
		(void)vs_machine_fail("%s", msg);
}

int vs__stress_failed(struct stress *r)
{
	return vs_read_once(&r->failed) != 0;
}

/* ---- time and waiting ---------------------------------------------------- */

/*
 * Sleep @us microseconds, offline for RCU: under urcu-qsbr a sleeping
 * attached thread would otherwise hold up every grace period.  In an
 * explored run (@r->explore) the scheduler decides who runs, not time:
 * a nap or a spin lets the others run first, no more.
 */
void vs__stress_nap_us(struct stress *r, unsigned int us)
{
	struct timespec ts = { .tv_sec = us / 1000000,
			       .tv_nsec = (long)(us % 1000000) * 1000 };

	if (r->explore) {
		vs_cpu_relax();
		return;
	}
	if (VS_VCPU && vs_vcpu_self() >= 0) {	/* a virtual nap */
		vs_atomic32_t word = 0;

		(void)vs_futex_wait(&word, 0, (int64_t)us * 1000);
		return;
	}
	vs_rcu_thread_offline();
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	vs_rcu_thread_online();
}

#if VS_VCPU
struct vcpu_thread {
	void *(*fn)(void *);
	void *arg;
};

static void vcpu_thread_main(void *p)
{
	struct vcpu_thread t = *(struct vcpu_thread *)p;

	free(p);
	(void)t.fn(t.arg);
}

int vs__stress_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	struct vs_machine *m = vs_vcpu_machine();
	struct vcpu_thread *t;
	int cpu, err;

	if (!m)
		return -EOPNOTSUPP;	/* the vCPU build runs on vCPUs */
	cpu = vs_machine_pick_vcpu(m);
	t = malloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = (struct vcpu_thread){ fn, arg };
	err = vs_machine_spawn(m, (unsigned int)cpu, vcpu_thread_main, t);
	if (err < 0) {
		free(t);
		return err;
	}
	*tid = (pthread_t)err;	/* the work's id */
	return 0;
}

void vs__stress_thread_join(pthread_t tid)
{
	(void)vs_machine_join(vs_vcpu_machine(), (unsigned int)tid);
}
#else
int vs__stress_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	return -pthread_create(tid, NULL, fn, arg);
}

void vs__stress_thread_join(pthread_t tid)
{
	pthread_join(tid, NULL);
}
#endif

/* Busy-wait @ns nanoseconds: a short critical section (as a nap when
 * explored). */
void vs__stress_spin_ns(struct stress *r, int64_t ns)
{
	int64_t end;

	if (r->explore) {
		vs_cpu_relax();
		return;
	}
	end = now_ns() + ns;
	while (now_ns() < end)
		vs_cpu_relax();
}

/*
 * wait_eq - wait until *@word == @want (acquire), for @timeout_ns, in
 * 1 ms futex sleeps (which put a qsbr thread offline).  Context: not
 * inside an RCU read-side critical section.  Return: true when seen.
 */
bool vs__stress_wait_eq(vs_atomic32_t *word, uint32_t want, int64_t timeout_ns)
{
	int64_t deadline = now_ns() + timeout_ns;
	uint32_t cur;

	while ((cur = vs_load_acquire(word)) != want) {
		if (now_ns() > deadline)
			return false;
		vs_futex_wait(word, cur, NS_PER_MS);
	}
	return true;
}

/*
 * wait - vs__stress_wait_eq() in run @r; in an explored run untimed: a
 * wait timed in virtual time ends where a preemption dropped or moved
 * puts the clocks, so a shrunk schedule would have to keep preemptions
 * that only serve the timing.  A wait that never ends there is the
 * engine's deadlock report.  The acquire pairs with the release of
 * vs__stress_set_word() (or the writer's cmpxchg).
 * Context: not inside an RCU read-side critical section.
 * Return: true when seen.
 */
bool vs__stress_wait(struct stress *r, vs_atomic32_t *word, uint32_t want,
		     int64_t timeout_ns)
{
	uint32_t cur;

	if (!r->explore)
		return vs__stress_wait_eq(word, want, timeout_ns);
	while ((cur = vs_load_acquire(word)) != want)
		(void)vs_futex_wait(word, cur, -1);
	return true;
}

/* Store @val (release) and wake every waiter on @word. */
void vs__stress_set_word(vs_atomic32_t *word, uint32_t val)
{
	vs_store_release(word, val);
	vs_futex_wake(word, INT32_MAX);
}

/* ---- the model of a page ------------------------------------------------- */

/* What vs_handle_mm_fault() returns for a page in state @st. */
int vs__stress_fault_result(uint32_t st, int write, int exec)
{
	if (!(st & SH_MAPPED) || exec)
		return VS_VM_FAULT_SIGSEGV;	/* no VMA has VM_EXEC */
	if (!(st & (write ? SH_WRITE : SH_READ)))
		return VS_VM_FAULT_SIGSEGV;
	return st & SH_EOF ? VS_VM_FAULT_SIGBUS : 0;
}

/*
 * vs__stress_fault_str - @ret of vs_handle_mm_fault() by name, e.g.
 * "VS_VM_FAULT_SIGSEGV|VS_VM_FAULT_RETRY"; "0"; unknown bits in hex.
 * Return: @buf.
 */
const char *vs__stress_fault_str(int ret, char *buf, size_t len)
{
	static const struct { int bit; const char *name; } bits[] = {
		{ VS_VM_FAULT_OOM, "VS_VM_FAULT_OOM" },
		{ VS_VM_FAULT_SIGBUS, "VS_VM_FAULT_SIGBUS" },
		{ VS_VM_FAULT_MAJOR, "VS_VM_FAULT_MAJOR" },
		{ VS_VM_FAULT_SIGSEGV, "VS_VM_FAULT_SIGSEGV" },
		{ VS_VM_FAULT_NOPAGE, "VS_VM_FAULT_NOPAGE" },
		{ VS_VM_FAULT_RETRY, "VS_VM_FAULT_RETRY" },
	};
	size_t i, at = 0;
	int rest = ret;

	buf[0] = '\0';
	for (i = 0; i < VS_ARRAY_SIZE(bits) && at < len; i++) {
		if (!(ret & bits[i].bit))
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       at ? "|" : "", bits[i].name);
		rest &= ~bits[i].bit;
	}
	if (at < len && (rest || !ret))
		snprintf(buf + at, len - at, at ? "|%#x" : "%#x",
			 (unsigned int)rest);
	return buf;
}

const char *vs__stress_st_str(uint32_t st, char *buf)
{
	snprintf(buf, 32, "%s%c%c%s%s", st & SH_MAPPED ? "" : "unmapped ",
		 st & SH_READ ? 'r' : '-', st & SH_WRITE ? 'w' : '-',
		 st & SH_SHARED ? " shared" : "", st & SH_EOF ? " eof" : "");
	return buf;
}

/* ---- the operation log --------------------------------------------------- */

static uint64_t op_pack(const struct op *o)
{
	return (uint64_t)o->type | (uint64_t)(o->ok & 0xff) << 8 |
	       (uint64_t)o->s << 16 | (uint64_t)o->n << 24 |
	       (uint64_t)o->d << 32 | (uint64_t)o->nn << 40;
}

static void op_unpack(uint64_t w0, uint64_t w1, struct op *o)
{
	o->type = (int)(w0 & 0xff);
	o->ok = (int)((w0 >> 8) & 0xff);
	o->s = (int)((w0 >> 16) & 0xff);
	o->n = (int)((w0 >> 24) & 0xff);
	o->d = (int)((w0 >> 32) & 0xff);
	o->nn = (int)((w0 >> 40) & 0xff);
	o->mask = w1;
}

/*
 * Publish operation @j.  Context: the writer, before the sequence count
 * goes even (whose fully ordered add also orders the entry before it).
 */
void vs__stress_log_put(struct stress *r, unsigned long j, const struct op *o)
{
	struct oplog *e = &r->log[j % LOGN];

	vs_write_once(&e->idx, UINT64_MAX);
	/* The invalid index before the new words (pairs with the rmb in
	 * log_get: a reader that saw a new word sees the index change). */
	vs_smp_wmb();
	vs_write_once(&e->w0, op_pack(o));
	vs_write_once(&e->w1, o->mask);
	vs_store_release(&e->idx, j);
}

/* Read operation @j; 0 when its entry was already reused. */
static int log_get(struct stress *r, unsigned long j, struct op *o)
{
	struct oplog *e = &r->log[j % LOGN];
	uint64_t w0, w1;

	if (vs_load_acquire(&e->idx) != j)
		return 0;
	w0 = vs_read_once(&e->w0);
	w1 = vs_read_once(&e->w1);
	vs_smp_rmb();
	if (vs_read_once(&e->idx) != j)
		return 0;
	op_unpack(w0, w1, o);
	return 1;
}

/* ---- the faulters' model of their data ----------------------------------- */

void vs__stress_set_zero(struct faulter *f, int s, int n)
{
	int p;

	for (p = s; p < s + n && p < NP; p++) {
		f->valid[p] = 1;
		memset(&f->exp[p], 0, sizeof(f->exp[p]));
	}
}

static void forget(struct faulter *f, int s, int n)
{
	int p;

	for (p = s; p < s + n && p < NP; p++)
		f->valid[p] = 0;
}

/* Replay operation @o on what the faulter expects in its slots. */
static void replay(struct faulter *f, const struct op *o)
{
	int p, m = o->n < o->nn ? o->n : o->nn;
	unsigned char v[NP];
	struct rec e[NP];

	switch (o->type) {
	case OP_DONTNEED:	/* private memory reads zero again */
		for (p = 0; p < NP; p++)
			if (o->mask & (UINT64_C(1) << p))
				vs__stress_set_zero(f, p, 1);
		break;
	case OP_MUNMAP:
		forget(f, o->s, o->n);
		break;
	case OP_MMAP:
		if (o->ok)
			vs__stress_set_zero(f, o->s, o->n);
		else
			forget(f, o->s, o->n);
		break;
	case OP_MREMAP:
		if (!o->ok) {
			/* Failed: the target and the cut tail may be gone. */
			if (o->nn < o->n)
				forget(f, o->s + o->nn, o->n - o->nn);
			if (o->d != o->s)
				forget(f, o->d, o->nn);
		} else if (o->d == o->s) {
			if (o->nn < o->n)
				forget(f, o->s + o->nn, o->n - o->nn);
			else
				vs__stress_set_zero(f, o->s + o->n,
				    o->nn - o->n);
		} else {
			memcpy(v, f->valid, sizeof(v));
			memcpy(e, f->exp, sizeof(e));
			forget(f, o->s, o->n);
			forget(f, o->d, o->nn);
			for (p = 0; p < m; p++) {
				f->valid[o->d + p] = v[o->s + p];
				f->exp[o->d + p] = e[o->s + p];
			}
			vs__stress_set_zero(f, o->d + m, o->nn - m);
		}
		break;
	default:	/* mprotect keeps the data */
		break;
	}
}

/*
 * A read of page @q->page that overlapped operation @o only, judged
 * against the records before @o: it saw the page before the operation
 * or after it, so its value is one of the two.
 */
static void judge_read(struct faulter *f, const struct pending *q,
		       const struct op *o, unsigned long j)
{
	struct stress *r = f->r;
	int p = q->page, m = o->n < o->nn ? o->n : o->nn, zero_ok = 0;
	const struct rec *alt = NULL;

	if (!f->valid[p])
		return;
	switch (o->type) {
	case OP_DONTNEED:
		zero_ok = (o->mask >> p) & 1;
		break;
	case OP_MMAP:
		zero_ok = in(p, o->s, o->n);
		break;
	case OP_MREMAP:
		if (!o->ok) {
			/* What a failure leaves is not modelled. */
			if (in(p, o->s, o->n > o->nn ? o->n : o->nn) ||
			    in(p, o->d, o->nn))
				return;
		} else if (o->d == o->s) {
			/* grown in place: the page was a hole before */
			if (in(p, o->s + o->n, o->nn - o->n))
				return;
		} else if (in(p, o->d, m)) {
			if (!f->valid[o->s + p - o->d])
				return;
			alt = &f->exp[o->s + p - o->d];
		} else if (in(p, o->d, o->nn)) {
			zero_ok = 1;
		}
		/* A page moved or cut away: only its old contents. */
		break;
	default:	/* mprotect, munmap: the old contents */
		break;
	}
	f->race_checks++;
	if (rec_eq(&q->val, &f->exp[p]) || (zero_ok && rec_zero(&q->val)) ||
	    (alt && rec_eq(&q->val, alt)))
		return;
	vs__stress_bug(r, "faulter %d: page %d read {%#x %u "
	    "%" PRIu64 "} during %s "
	    "(op %lu: s %d n %d d %d nn %d ok %d), expected {%#x %u %"
	    PRIu64 "}%s", f->id, p, q->val.tag, q->val.page, q->val.count,
	    vs__stress_doing_name(o->type), j, o->s, o->n, o->d, o->nn, o->ok,
	    f->exp[p].tag, f->exp[p].page, f->exp[p].count,
	    zero_ok ? " or zero" : alt ? " or the moved page" : "");
}

/*
 * A successful write that overlapped operation @o only, after @o was
 * replayed.  It happened before the operation or after it.
 */
static void judge_write(struct faulter *f, const struct pending *q,
			const struct op *o)
{
	int p = q->page, m = o->n < o->nn ? o->n : o->nn;

	switch (o->type) {
	case OP_DONTNEED:
		if ((o->mask >> p) & 1) {
			forget(f, p, 1);	/* zapped before or not */
			return;
		}
		break;
	case OP_MMAP:
	case OP_MUNMAP:
		if (in(p, o->s, o->n)) {
			forget(f, p, 1);
			return;
		}
		break;
	case OP_MREMAP:
		if (o->nn < o->n && in(p, o->s + o->nn, o->n - o->nn)) {
			forget(f, p, 1);	/* cut off, before or not */
			return;
		}
		if (o->d == o->s)	/* in place: the rest stays */
			break;
		if (in(p, o->d, o->nn)) {
			forget(f, p, 1);	/* the old or the new page */
			return;
		}
		if (o->ok && in(p, o->s, m)) {
			/* It succeeded at the old place, so before the
			 * move: the page carried it along. */
			f->valid[o->d + p - o->s] = 1;
			f->exp[o->d + p - o->s] = q->val;
			return;
		}
		break;
	default:
		break;
	}
	f->valid[p] = 1;
	f->exp[p] = q->val;
}

/*
 * Replay the operations before @upto (those the sequence count shows
 * complete), judging the pending accesses each one ends.
 */
void vs__stress_catch_up(struct faulter *f, unsigned long upto)
{
	struct stress *r = f->r;
	struct pending *q;
	unsigned long j;
	struct op o;
	int i, k;

	for (j = f->applied; j < upto; j++) {
		if (!log_get(r, j, &o)) {
			/* Lagged past the log: start from nothing known. */
			memset(f->valid, 0, sizeof(f->valid));
			for (i = k = 0; i < f->npend; i++)
				if (f->pend[i].j_last >= upto)
					f->pend[k++] = f->pend[i];
			f->npend = k;
			f->lost = 0;
			f->applied = upto;
			return;
		}
		for (i = 0; i < f->npend; i++) {
			q = &f->pend[i];
			if (!q->write && q->j_first == j && q->j_last == j)
				judge_read(f, q, &o, j);
		}
		replay(f, &o);
		for (i = 0; i < f->npend; i++) {
			q = &f->pend[i];
			if (!q->write || j < q->j_first || j > q->j_last)
				continue;
			if (q->j_first == q->j_last) {
				judge_write(f, q, &o);
				continue;
			}
			/* Several operations: the data may be at the page
			 * or wherever one of them moved it. */
			forget(f, q->page, 1);
			if (o.type == OP_MREMAP && o.ok)
				forget(f, o.d, o.nn);
		}
		for (i = k = 0; i < f->npend; i++)
			if (f->pend[i].j_last > j)
				f->pend[k++] = f->pend[i];
		f->npend = k;
		if (f->lost && j >= f->lost_after) {
			memset(f->valid, 0, sizeof(f->valid));
			f->lost = 0;
		}
	}
	f->applied = upto;
}
