/* SPDX-License-Identifier: MIT */
/*
 * vcpu/report.c - what a report of the engine says about each
 * context: its state, the word it sleeps on, the locks it holds, and its
 * last events, with the names the model gave its memory
 * (vs_vcpu_name()) instead of raw addresses.
 *
 * Names are kept per machine, whether or not it has a cost model, in
 * memory that malloc does not manage (vcpu/names.h): naming must
 * not move the work's objects.  The latest VS__VCPU_RANGES ranges are
 * kept; a later name of the same bytes wins, as memory is reused.
 *
 * Locking: the machine's host thread, between events.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/trace.h>

#include "internal.h"

/*
 * The names of static objects (sync/'s own: the lock registry, lock
 * statistics), the same for every machine, under a mutex: the host
 * threads that register them may race.  Engine state, so not through
 * vmsim/atomic.h, whose operations are events.
 */
#define STATIC_NAMES 32

static pthread_mutex_t static_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uintptr_t lo, hi;
	int quiet;
	const char *name;
} static_names[STATIC_NAMES];	/* under static_lock */
static unsigned int nr_static_names;	/* under static_lock */

void vs__vcpu_name_static(const void *addr, size_t len, const char *name,
			  int quiet)
{
	pthread_mutex_lock(&static_lock);
	if (nr_static_names < STATIC_NAMES) {	/* else: addresses */
		static_names[nr_static_names].lo = (uintptr_t)addr;
		static_names[nr_static_names].hi = (uintptr_t)addr + len;
		static_names[nr_static_names].quiet = quiet;
		static_names[nr_static_names].name = name;
		nr_static_names++;
	}
	pthread_mutex_unlock(&static_lock);
}

/*
 * The static object @a lies in: its name, with @quiet and @off set, or
 * NULL when it is none.  The names live as long as the process.
 */
static const char *static_of(uintptr_t a, int *quiet, unsigned long *off)
{
	const char *name = NULL;
	unsigned int i;

	pthread_mutex_lock(&static_lock);
	for (i = 0; i < nr_static_names && !name; i++) {
		if (a < static_names[i].lo || a >= static_names[i].hi)
			continue;
		name = static_names[i].name;
		*quiet = static_names[i].quiet;
		*off = (unsigned long)(a - static_names[i].lo);
	}
	pthread_mutex_unlock(&static_lock);
	return name;
}

/* @a as a static object's "name+offset"; 0 when it is none. */
static int static_name(uintptr_t a, char *buf, size_t len)
{
	unsigned long off;
	const char *name = static_of(a, &(int){ 0 }, &off);

	return name ? snprintf(buf, len, "%s+%lu", name, off) : 0;
}

void vs__vcpu_name_range(struct vs_machine *m, const void *addr, size_t len,
			 const char *name)
{
	struct vs__range *r;
	uint32_t id;

	if (!m->ranges) {
		m->ranges = vs__offheap_alloc(VS__VCPU_RANGES *
					      sizeof(*m->ranges));
		if (!m->ranges)
			return;		/* reports show addresses */
	}
	id = vs__names_intern(&m->names, name);
	if (!id)
		return;
	r = &m->ranges[m->nranges++ % VS__VCPU_RANGES];
	r->lo = (uintptr_t)addr;
	r->hi = (uintptr_t)addr + len;
	r->id = id;
}

void vs__vcpu_names_reset(struct vs_machine *m, int destroy)
{
	m->nranges = 0;
	vs__names_free(&m->names);
	if (destroy) {
		vs__offheap_free(m->ranges,
				 VS__VCPU_RANGES * sizeof(*m->ranges));
		m->ranges = NULL;
	}
}

/* @addr as the engine's own word: a vCPU's run queue, a join's,
 * vs_machine_leave()'s, or one on a context's stack (a lock's waiter).
 * 0 when it is none. */
static int engine_name(const struct vs_machine *m, uintptr_t a, char *buf,
		       size_t len)
{
	const struct vs__vcpu *v;
	unsigned int i;

	if (a == (uintptr_t)&m->busy_word)
		return snprintf(buf, len, "vs_machine_leave()'s count");
	for (i = 0; i < m->nr; i++)	/* vs_machine_spawn() queues here */
		if (a == (uintptr_t)&m->cpus[i])
			return snprintf(buf, len, "vCPU %u's run queue", i);
	for (i = 0; i < m->nr_all; i++) {
		v = &m->v[i];
		if (a == (uintptr_t)&v->gen)
			return snprintf(buf, len, "work %u's end (a join)", i);
		if (v->map && a >= (uintptr_t)v->stack_lo &&
		    a < (uintptr_t)v->stack_lo + v->stack_len)
			return snprintf(buf, len, "work %u's stack", i);
	}
	return 0;
}

/* @a as "name+offset" of the latest range named that covers it; 0
 * when none does.  Context: the machine's host thread. */
static int range_name(const struct vs_machine *m, uintptr_t a, char *buf,
		      size_t len)
{
	unsigned long n = m->nranges, i;
	const struct vs__range *r;

	for (i = 0; i < n && i < VS__VCPU_RANGES; i++) {
		r = &m->ranges[(n - 1 - i) % VS__VCPU_RANGES];
		if (a >= r->lo && a < r->hi)
			return snprintf(buf, len, "%s+%lu",
					vs__names_str(&m->names, r->id),
					(unsigned long)(a - r->lo));
	}
	return 0;
}

/*
 * @addr as "name+offset": the engine's own word, a registered static, a
 * client's object, the latest name that covers it, or a symbol of the
 * executable or a library (a static no one registered), or its place in
 * the memory map (the heap's offset, for an object no one named); as a
 * bare address only when no mapping holds it.
 */
static size_t name_of(const struct vs_machine *m, const volatile void *addr,
		      char *buf, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	int w;

	w = engine_name(m, a, buf, len);
	if (w <= 0)
		w = static_name(a, buf, len);
	if (w <= 0)
		w = vs__clients_describe_addr(a, buf, len);
	if (w <= 0)
		w = range_name(m, a, buf, len);
	if (w <= 0 && addr)
		w = vs__symbol_name(a, buf, len);
	if (w <= 0 && addr)
		w = vs__mapping_name(a, buf, len);
	if (w <= 0)
		w = addr ? snprintf(buf, len, "%p", (void *)a) :
			   snprintf(buf, len, "-");
	return w < 0 ? 0 : (size_t)w;
}

static const char *state_name(enum vs__vstate s)
{
	static const char *const n[] = { "idle", "waiting for its vCPU",
					 "runnable", "running", "blocked" };

	return n[s];
}

static const char *op_name(unsigned int op)
{
	static const char *const n[] = {
		[VS_VCPU_LOAD] = "load", [VS_VCPU_STORE] = "store",
		[VS_VCPU_RMW] = "rmw", [VS_VCPU_FENCE] = "fence",
		[VS_VCPU_RELAX] = "relax", [VS_VCPU_ORDER] = "order",
	};

	return op < sizeof(n) / sizeof(n[0]) && n[op] ? n[op] : "?";
}

/* Append to m->report at @at; return the new end (at most its size - 1). */
static size_t put(struct vs_machine *m, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static size_t put(struct vs_machine *m, size_t at, const char *fmt, ...)
{
	size_t len = sizeof(m->report);
	va_list ap;
	int w;

	if (at >= len - 1)
		return len - 1;
	va_start(ap, fmt);
	w = vsnprintf(m->report + at, len - at, fmt, ap);
	va_end(ap);
	if (w < 0)
		return at;
	return at + (size_t)w < len - 1 ? at + (size_t)w : len - 1;
}

/* An event a report leaves out: bookkeeping (lock statistics). */
static int quiet(const struct vs__logged *l)
{
	unsigned long off;
	int q = 0;

	return static_of((uintptr_t)l->addr, &q, &off) && q;
}

/* Context @v's last events but the quiet ones, oldest first, one a
 * line, at most VS__VCPU_SHOWN. */
static size_t put_log(struct vs_machine *m, size_t at,
		      const struct vs__vcpu *v)
{
	uint32_t n = v->nlog < VS__VCPU_LOG ? v->nlog : VS__VCPU_LOG, i;
	const struct vs__logged *l, *shown[VS__VCPU_SHOWN];
	unsigned int k = 0;
	char name[160];

	for (i = 0; i < n && k < VS__VCPU_SHOWN; i++) {	/* newest first */
		l = &v->log[(v->nlog - 1 - i) % VS__VCPU_LOG];
		if (!quiet(l))
			shown[k++] = l;
	}
	while (k--) {
		l = shown[k];
		(void)name_of(m, l->addr, name, sizeof(name));
		at = put(m, at, "    #%llu %s %s",
			 (unsigned long long)l->seq, op_name(l->op), name);
		if (l->back == VS__MEM_HIDDEN)
			at = put(m, at, " (an old value: the newest waits "
				 "in another's store buffer)");
		else if (l->back)
			at = put(m, at, " (an old value: %u store%s before "
				 "the newest)", l->back, l->back > 1 ? "s" : "");
		at = put(m, at, "\n");
	}
	return at;
}

/* The running context's event @op on @addr fails the run: log it, for
 * the report, and name @addr into @name. */
static void name_failed(struct vs_machine *m, const volatile void *addr,
			unsigned int op, char *name, size_t len)
{
	int self = vs__vcpu_cur;

	vs__vcpu_log(m, m->cur, addr, op, 0);
	vs__vcpu_cur = -1;			/* names, not events */
	(void)name_of(m, addr, name, len);
	vs__vcpu_cur = self;
}

void vs__vcpu_fail_freed(struct vs_machine *m, const volatile void *addr,
			 unsigned int op, uint64_t seq, unsigned int by)
{
	char name[160];

	name_failed(m, addr, op, name, sizeof(name));
	(void)vs_machine_fail("use after free: a %s of %s, freed by work %u "
			      "after event #%llu", op_name(op), name, by,
			      (unsigned long long)(seq ? seq - 1 : 0));
}

void vs__vcpu_fail_unpublished(struct vs_machine *m,
				const volatile void *addr, unsigned int op,
				const char *by)
{
	char name[160];

	name_failed(m, addr, op, name, sizeof(name));
	(void)vs_machine_fail("unpublished object: a %s of %s, allocated by "
			      "%s, whose allocation does not happen before "
			      "it (a pointer stored without a release, or "
			      "loaded without an acquire)", op_name(op), name,
			      by);
}

size_t vs__vcpu_report_contexts(struct vs_machine *m, size_t at)
{
	size_t len = sizeof(m->report);
	int self = vs__vcpu_cur;
	const struct vs__vcpu *v;
	char name[160];
	unsigned int i;

	/* As the host: the clients' reads are no events of the run. */
	vs__vcpu_cur = -1;
	for (i = 0; i < VS__VCPU_WORKS && at < len - 1; i++) {
		v = &m->v[i];
		if (v->state == VS__V_IDLE && !v->nlog)
			continue;	/* no work this run */
		at = put(m, at, "  vCPU %u (work %u): %s", v->cpu, i,
			 v->state == VS__V_IDLE ? "ended" :
			 state_name(v->state));
		if (v->state == VS__V_BLOCKED) {
			(void)name_of(m, v->wait_word, name, sizeof(name));
			at = put(m, at, " on %s", name);
		}
		at = put(m, at, "; holds: ");
		if (at < len - 1)
			at += vs__clients_describe_context((int)i,
							   m->report + at,
							   len - at);
		at = put(m, at, "\n");
		if (v->nlog)
			at = put(m, at, "   its last events (#: order in "
				 "the run):\n");
		at = put_log(m, at, v);
	}
	vs__vcpu_cur = self;
	return at;
}

/* ---- traces (VS_MACHINE_TRACE) ------------------------------------------ */

/* A new record at the end of @m's trace, or NULL (the trace is lost).
 * Context: the machine's host thread, between events. */
static struct vs__traced *trace_add(struct vs_machine *m)
{
	struct vs__traced *t;

	if (m->ntrace == m->trace_cap) {
		t = vs__grow(m->trace, &m->trace_cap, sizeof(*t), 4096);
		if (!t) {
			m->trace_lost = 1;
			return NULL;
		}
		m->trace = t;
	}
	t = &m->trace[m->ntrace++];
	memset(t, 0, sizeof(*t));
	return t;
}

void vs__vcpu_trace(struct vs_machine *m, const struct vs__vcpu *v,
		    const volatile void *addr, unsigned int op,
		    unsigned int back, uint64_t cost)
{
	struct vs__traced *t = trace_add(m);

	if (!t)
		return;
	t->seq = m->seq ? m->seq - 1 : 0;	/* a seam event's, logged */
	t->clock = v->clock;
	t->cost = cost;
	t->addr = addr;
	t->ctx = (uint16_t)v->id;
	t->cpu = (uint16_t)v->cpu;
	t->op = (uint8_t)op;
	t->back = (uint8_t)back;
}

/* A span's begin (@op VS__TRACE_SPAN) or end on the running context:
 * it lies between events, at the next one's place in the order.
 * Context: a vCPU of the machine, between events. */
static struct vs__traced *trace_span(unsigned int op, const void *key)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__traced *t;

	if (!m || !m->cur || !key || !(m->cfg.flags & VS_MACHINE_TRACE))
		return NULL;
	t = trace_add(m);
	if (!t)
		return NULL;
	t->seq = m->seq;
	t->clock = m->cur->clock;
	t->addr = key;
	t->ctx = (uint16_t)m->cur->id;
	t->cpu = (uint16_t)m->cur->cpu;
	t->op = (uint8_t)op;
	return t;
}

void vs_vcpu_span_begin(const char *cat, const char *name, const char *what,
			const void *key)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__traced *t;
	char full[96];

	if (!cat || !*cat || !name || !*name)
		return;
	t = trace_span(VS__TRACE_SPAN, key);
	if (!t)
		return;
	snprintf(full, sizeof(full), "%s%s%s", name, what ? " " : "",
		 what ? what : "");
	t->name = vs__names_intern(&m->names, full);
	t->cat = vs__names_intern(&m->names, cat);
	if (!t->name || !t->cat)
		m->trace_lost = 1;
}

void vs_vcpu_span_end(const void *key)
{
	(void)trace_span(VS__TRACE_SPAN_END, key);
}

/*
 * Where @t starts and how long it lasts, in trace nanoseconds: with a
 * scheduler that chooses, whose runs clocks do not order, an event a
 * microsecond in the order they ran (a sleep or an end half way after
 * the event before it); with the clock scheduler, the virtual time, to
 * the nearest nanosecond.
 */
static void trace_time(const struct vs_machine *m, const struct vs__traced *t,
		       uint64_t *ts, uint64_t *dur)
{
	if (t->op >= VS__TRACE_SPAN) {	/* between events: no length */
		*ts = m->policy->by_clock ?
		      (uint64_t)((double)t->clock / m->ghz + 0.5) :
		      t->seq * 1000;
		*dur = 0;
	} else if (!m->policy->by_clock) {
		*ts = t->seq * 1000 + (t->op >= VS__TRACE_SLEEP ? 500 : 0);
		*dur = 1000;
	} else {
		*ts = (uint64_t)((double)(t->clock - t->cost) / m->ghz + 0.5);
		*dur = (uint64_t)((double)t->cost / m->ghz + 0.5);
	}
}

/* @t on its vCPU's track: a slice, or an instant for a sleep or an end. */
static int trace_event(struct vs_trace *f, struct vs_machine *m,
		       const struct vs__traced *t)
{
	struct vs_trace_arg args[3] = {
		VS_TRACE_UINT("event", t->seq), VS_TRACE_UINT("work", t->ctx),
		VS_TRACE_STR("read", "an old value: the newest waits in "
			     "another's store buffer"),
	};
	char what[160], name[176], read[64];
	struct vs_trace_event e = { .name = name, .pid = 1, .tid = t->cpu,
				    .args = args, .nr_args = 2 };
	uint64_t dur;

	(void)name_of(m, t->addr, what, sizeof(what));
	trace_time(m, t, &e.ts, &dur);
	if (t->op >= VS__TRACE_SLEEP) {
		if (t->op == VS__TRACE_SLEEP)
			snprintf(name, sizeof(name), "sleep on %s", what);
		else
			snprintf(name, sizeof(name), "end");
		e.args = &args[1];
		e.nr_args = 1;
		return vs_trace_instant(f, &e);
	}
	snprintf(name, sizeof(name), "%s %s", op_name(t->op), what);
	if (t->back && t->back != VS__MEM_HIDDEN) {
		snprintf(read, sizeof(read), "an old value: %u stores before "
			 "the newest", t->back);
		args[2].str = read;
	}
	e.nr_args = t->back ? 3 : 2;
	return vs_trace_slice(f, &e, dur);
}

/*
 * The spans' nesting on each vCPU's track, as vs_machine_trace_write()
 * writes them: the ends of the slices still open, innermost last.
 */
#define SPAN_DEPTH 16

struct span_tracks {
	uint64_t end[VS_VCPU_MAX][SPAN_DEPTH];
	unsigned int depth[VS_VCPU_MAX];
	uint64_t last;		/* where the trace ends: an unended span's end */
};

/* Where the span begun at @m->trace[@k] ends: its end record's time, or
 * the trace's end when the run stopped inside it.  Context: the
 * machine's host thread, the machine stopped. */
static uint64_t span_end(const struct vs_machine *m, size_t k,
			 const struct span_tracks *sp)
{
	const struct vs__traced *b = &m->trace[k], *t;
	uint64_t ts, dur;

	for (t = b + 1; t < m->trace + m->ntrace; t++)
		if (t->op == VS__TRACE_SPAN_END && t->ctx == b->ctx &&
		    t->addr == b->addr) {
			trace_time(m, t, &ts, &dur);
			return ts;
		}
	return sp->last;
}

/* The span begun at @m->trace[@k]: a slice on its vCPU's track, as
 * multi-fault --trace writes its faults, system calls and lock waits
 * and holds; an async pair (category "overlap") when it does not nest
 * in the slice open around it (a lock held past the fault that took
 * it), which a viewer would drop.  Context: as span_end(). */
static int trace_span_write(struct vs_trace *f, struct vs_machine *m,
			    size_t k, struct span_tracks *sp)
{
	const struct vs__traced *t = &m->trace[k];
	struct vs_trace_arg arg = VS_TRACE_UINT("work", t->ctx);
	struct vs_trace_event e = {
		.name = vs__names_str(&m->names, t->name),
		.cat = vs__names_str(&m->names, t->cat), .pid = 1,
		.tid = t->cpu, .args = &arg, .nr_args = 1 };
	unsigned int *d = &sp->depth[t->cpu];
	uint64_t end, dur;
	int err;

	trace_time(m, t, &e.ts, &dur);
	end = span_end(m, k, sp);
	while (*d && sp->end[t->cpu][*d - 1] <= e.ts)
		(*d)--;
	if (*d < SPAN_DEPTH && (!*d || sp->end[t->cpu][*d - 1] >= end)) {
		sp->end[t->cpu][(*d)++] = end;
		return vs_trace_slice(f, &e, end - e.ts);
	}
	e.cat = "overlap";
	err = vs_trace_async(f, &e, true, k);
	e.ts = end;
	return err ? err : vs_trace_async(f, &e, false, k);
}

/* Every record of @m's trace, in the order they were kept.  Context: as
 * span_end(). */
static int trace_records(struct vs_trace *f, struct vs_machine *m)
{
	struct span_tracks *sp = calloc(1, sizeof(*sp));
	uint64_t dur;
	size_t k;
	int err = 0;

	if (!sp)
		return -ENOMEM;
	if (m->ntrace) {
		trace_time(m, &m->trace[m->ntrace - 1], &sp->last, &dur);
		sp->last += dur;
	}
	for (k = 0; k < m->ntrace && !err; k++) {
		if (m->trace[k].op == VS__TRACE_SPAN)
			err = trace_span_write(f, m, k, sp);
		else if (m->trace[k].op != VS__TRACE_SPAN_END)
			err = trace_event(f, m, &m->trace[k]);
	}
	free(sp);
	return err;
}

int vs_machine_trace_write(struct vs_machine *m, const char *path)
{
	struct vs_trace_arg other[2] = {
		VS_TRACE_STR("time", "virtual time"),
		VS_TRACE_STR("report", m ? m->report : ""),
	};
	struct vs_trace_arg arg = VS_TRACE_STR("name", "vmsim machine");
	struct vs_trace_event e = { .name = "process_name", .pid = 1,
				    .args = &arg, .nr_args = 1 };
	int self = vs__vcpu_cur, err, end;
	struct vs_trace f;
	char name[32];
	unsigned int i;

	if (!m || !path || !(m->cfg.flags & VS_MACHINE_TRACE))
		return -EINVAL;
	if (m->running)
		return -EBUSY;
	if (m->trace_lost)
		return -ENOMEM;
	err = vs_trace_open(&f, path);
	if (err)
		return err;
	vs__vcpu_cur = -1;	/* names, not events */
	err = vs_trace_meta(&f, &e);
	e.name = "thread_name";
	arg.str = name;
	for (i = 0; i < m->nr && !err; i++) {
		snprintf(name, sizeof(name), "vCPU %u", i);
		e.tid = i;
		err = vs_trace_meta(&f, &e);
	}
	if (!err)
		err = trace_records(&f, m);
	if (!m->policy->by_clock)
		other[0].str = "an event a microsecond, in the order they ran";
	vs__vcpu_cur = self;
	end = vs_trace_close(&f, other, 2);
	return err ? err : end;
}

/* ---- a failed run ------------------------------------------------------- */

int vs_machine_fail(const char *fmt, ...)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__vcpu *v = m ? m->cur : NULL;
	size_t len = sizeof(m->report), at;
	va_list ap;

	if (!v || !fmt)
		return -EINVAL;
	at = (size_t)snprintf(m->report, len, "vcpu: failed: work %u on vCPU "
			      "%u at virtual time %llu cycles: ", v->id,
			      v->cpu, (unsigned long long)v->clock);
	if (at < len) {
		va_start(ap, fmt);
		at += (size_t)vsnprintf(m->report + at, len - at, fmt, ap);
		va_end(ap);
	}
	if (at < len - 1)
		strcat(m->report, "\n");
	(void)vs__vcpu_report_contexts(m, strlen(m->report));
	m->failed = 1;
	if (m->entered) {
		fputs(m->report, stderr);
		abort();
	}
	vs__switch_to(m, v, NULL, 0);
	vs__vcpu_die("vcpu: a failed vCPU was resumed", EINVAL);
}

/* Write the deadlock report: every vCPU with work, what it waits on. */
void vs__vcpu_report_deadlock(struct vs_machine *m)
{
	int at = snprintf(m->report, sizeof(m->report),
			  "vcpu: deadlock: every vCPU with work is blocked "
			  "(virtual time %llu cycles)\n",
			  (unsigned long long)vs_machine_clock(m, -1));

	(void)vs__vcpu_report_contexts(m, at < 0 ? 0 : (size_t)at);
}
