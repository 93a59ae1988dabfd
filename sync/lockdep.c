/* SPDX-License-Identifier: MIT */
/*
 * sync/lockdep.c - see lockdep.h.
 *
 * The graph's nodes are (class, subclass) pairs; adj[a] has bit b when
 * a lock of node b was taken, waiting, while one of node a was held.
 * Each edge keeps the chain that first made it: the held list then,
 * and the lock taken.  A new edge a->b closes a cycle when b already
 * reaches a; a breadth-first search from b, under graph_lock, says so
 * and gives the path for the report.
 */
#include <vmsim/lockdep.h>

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../vcpu/client.h"
#include "internal.h"

#if VS_LOCKDEP

#define NODES (VS_LOCKDEP_CLASS_MAX * VS_LOCKDEP_SUBCLASS_MAX)
#define WORDS (NODES / 64)
#define NAME_LEN 40
#define EDGE_MAX 4096
#define CHAIN_MAX 8	/* the links of an edge's chain kept for reports */

struct hlock {
	const void *inst;
	const void *ip;
	int node;
	int flags;
};

struct edge {
	int nr;			/* links in chain */
	struct hlock chain[CHAIN_MAX]; /* .inst unused */
};

/* graph_lock: names (write), nr_classes (write), adj (write), edges. */
static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;
static char names[VS_LOCKDEP_CLASS_MAX][NAME_LEN + 1];
static int nr_classes;
static uint64_t adj[NODES][WORDS]; /* read with __atomic, lock-free */
static uint16_t edge_of[NODES][NODES]; /* edges[] index + 1 */
static uint64_t reported[NODES][WORDS]; /* a->b closed a cycle, said so */
static struct edge edges[EDGE_MAX];
static int nr_edges;

static void (*report_fn)(const char *report, void *arg);
static void *report_arg;

/* The locks this thread (context) holds, oldest first. */
static VS__PER_CONTEXT(struct hlock, held_)[VS_LOCKDEP_DEPTH];
static VS__PER_CONTEXT(int, depth_);
static VS__PER_CONTEXT(int, rcu_);
static VS__PER_CONTEXT(int, lost_);	/* held past VS_LOCKDEP_DEPTH */
#define held VS__THIS(held_)
#define depth VS__THIS(depth_)
#define rcu VS__THIS(rcu_)
#define lost VS__THIS(lost_)

/* --- reports ------------------------------------------------------------ */

struct text {
	char buf[8192];
	size_t len;
};

static void put(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len >= sizeof(t->buf) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, sizeof(t->buf) - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t)n;
	if (t->len > sizeof(t->buf) - 1)
		t->len = sizeof(t->buf) - 1;
}

static void put_node(struct text *t, int node)
{
	int class = node / VS_LOCKDEP_SUBCLASS_MAX;
	int sub = node % VS_LOCKDEP_SUBCLASS_MAX;

	put(t, "%s", names[class]);
	if (sub)
		put(t, "/%d", sub);
}

/* "sym+0xoff" when a symbol of the dynamic table spans @ip, else the
 * object and the offset in it, for addr2line -e OBJECT OFFSET. */
static void put_ip(struct text *t, const void *ip)
{
	const ElfW(Sym) *sym = NULL;
	const char *p = ip;
	Dl_info di;

	if (!ip || !dladdr1(ip, &di, (void **)&sym, RTLD_DL_SYMENT)) {
		put(t, "%p", ip);
		return;
	}
	if (di.dli_sname && sym &&
	    p - (const char *)di.dli_saddr < (long)sym->st_size)
		put(t, "%s+%#lx", di.dli_sname,
		    (unsigned long)(p - (const char *)di.dli_saddr));
	else
		put(t, "%s+%#lx", di.dli_fname,
		    (unsigned long)(p - (const char *)di.dli_fbase));
}

static void put_held(struct text *t, const struct hlock *h)
{
	put(t, "    ");
	put_node(t, h->node);
	put(t, " (%s) at ", h->flags & VS__LD_SEQ ? "write section" :
	    h->flags & VS__LD_TRY ? (h->flags & VS__LD_READ ?
				     "read, trylock" : "write, trylock") :
	    h->flags & VS__LD_READ ? "read" : "write");
	put_ip(t, h->ip);
	put(t, "\n");
}

static void put_held_list(struct text *t)
{
	int i;

	if (rcu)
		put(t, "    an RCU read-side section (depth %d)\n", rcu);
	for (i = 0; i < depth; i++)
		put_held(t, &held[i]);
	if (!depth && !rcu)
		put(t, "    nothing\n");
}

static void report(struct text *t)
{
	if (t->len && t->buf[t->len - 1] == '\n')
		t->buf[--t->len] = 0;
	if (report_fn) {
		report_fn(t->buf, report_arg);
		return;
	}
	fprintf(stderr, "vmsim lockdep: %s\n", t->buf);
	fflush(stderr);
	abort();
}

/* A report about this thread: @what, then what it holds. */
static void report_here(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void report_here(const char *fmt, ...)
{
	static __thread struct text t;	/* 8 KiB: not on a vCPU's stack */
	va_list ap;
	int n;

	t.len = 0;
	va_start(ap, fmt);
	n = vsnprintf(t.buf, sizeof(t.buf), fmt, ap);
	va_end(ap);
	t.len = n < 0 ? 0 : (size_t)n < sizeof(t.buf) ? (size_t)n :
		sizeof(t.buf) - 1;
	put(&t, "\n  held by this thread:\n");
	put_held_list(&t);
	report(&t);
}

/* --- classes and the graph ---------------------------------------------- */

int vs_lockdep_class(const char *name)
{
	int i, ret;

	if (!name || !*name || strlen(name) > NAME_LEN)
		return -EINVAL;
	pthread_mutex_lock(&graph_lock);
	for (i = 0; i < nr_classes; i++)
		if (!strcmp(names[i], name))
			break;
	if (i == nr_classes && i < VS_LOCKDEP_CLASS_MAX) {
		strcpy(names[i], name);
		nr_classes = i + 1;
	}
	ret = i < VS_LOCKDEP_CLASS_MAX ? i + 1 : -ENOSPC;
	pthread_mutex_unlock(&graph_lock);
	return ret;
}

void vs__lockdep_set_class(struct vs_lockdep_map *map, const char *name)
{
	int class = vs_lockdep_class(name);

	if (class < 0)
		vs__die(name ? name : "lockdep: a NULL class name", -class);
	map->class = class;
}

static int edge_test(int a, int b)
{
	return (__atomic_load_n(&adj[a][b / 64], __ATOMIC_RELAXED) >>
		(b % 64)) & 1;
}

/* A path from @from to @to: its nodes in @path, @to last; its length,
 * or 0 when there is none.  Context: graph_lock held. */
static int find_path(int from, int to, int *path)
{
	static int prev[NODES], queue[NODES];
	int head = 0, tail = 0, n, a, b;

	for (a = 0; a < NODES; a++)
		prev[a] = -1;
	prev[from] = from;
	queue[tail++] = from;
	while (head < tail) {
		a = queue[head++];
		for (b = 0; b < NODES; b++) {
			if (prev[b] >= 0 || !edge_test(a, b))
				continue;
			prev[b] = a;
			if (b == to)
				goto found;
			queue[tail++] = b;
		}
	}
	return 0;
found:
	for (n = 0, b = to; b != from; b = prev[b])
		n++;
	for (a = n, b = to; a >= 0; b = prev[b])
		path[a--] = b;
	return n + 1;
}

static void put_edge(struct text *t, int a, int b)
{
	int i, at = edge_of[a][b];

	put(t, "  ");
	put_node(t, a);
	put(t, " -> ");
	put_node(t, b);
	if (!at) {	/* made after edges[] filled up */
		put(t, " (its chain was not kept)\n");
		return;
	}
	put(t, ", first made by:\n");
	for (i = 0; i < edges[at - 1].nr; i++)
		put_held(t, &edges[at - 1].chain[i]);
}

static void report_cycle(const struct hlock *h, const struct hlock *new,
			 const int *path, int n)
{
	static __thread struct text t;
	int i;

	t.len = 0;
	put(&t, "possible circular locking dependency: this thread takes ");
	put_node(&t, new->node);
	put(&t, " at ");
	put_ip(&t, new->ip);
	put(&t, " while it holds ");
	put_node(&t, h->node);
	put(&t, ",\n  and ");
	put_node(&t, new->node);
	put(&t, " was held before when ");
	put_node(&t, h->node);
	put(&t, " was taken:\n  this chain:\n");
	put_held_list(&t);
	put_held(&t, new);
	put(&t, "  the other chain, edge by edge:\n");
	for (i = 0; i + 1 < n; i++)
		put_edge(&t, path[i], path[i + 1]);
	report(&t);
}

/* Add the edge @h -> @new unless it closes a cycle (reported). */
static void add_edge(const struct hlock *h, const struct hlock *new)
{
	int path[NODES];
	struct edge *e;
	int n, i, first;

	pthread_mutex_lock(&graph_lock);
	if (edge_test(h->node, new->node)) {
		pthread_mutex_unlock(&graph_lock);
		return;
	}
	n = find_path(new->node, h->node, path);
	if (n) {
		/* Once per pair: the edge stays out, and a report function
		 * that lets the run go on would hear of it at every take. */
		i = (reported[h->node][new->node / 64] >> (new->node % 64)) & 1;
		reported[h->node][new->node / 64] |=
			UINT64_C(1) << (new->node % 64);
		pthread_mutex_unlock(&graph_lock);
		if (!i)
			report_cycle(h, new, path, n);
		return;
	}
	if (nr_edges < EDGE_MAX) {
		e = &edges[nr_edges++];
		first = depth > CHAIN_MAX - 1 ? depth - (CHAIN_MAX - 1) : 0;
		e->nr = 0;
		for (i = first; i < depth; i++)
			e->chain[e->nr++] = held[i];
		e->chain[e->nr++] = *new;
		edge_of[h->node][new->node] = (uint16_t)nr_edges;
	}
	/* Relaxed: a reader that misses the bit takes graph_lock. */
	__atomic_fetch_or(&adj[h->node][new->node / 64],
			  UINT64_C(1) << (new->node % 64), __ATOMIC_RELAXED);
	pthread_mutex_unlock(&graph_lock);
}

void vs_lockdep_reset(void)
{
	pthread_mutex_lock(&graph_lock);
	memset(adj, 0, sizeof(adj));
	memset(edge_of, 0, sizeof(edge_of));
	memset(reported, 0, sizeof(reported));
	nr_edges = 0;
	pthread_mutex_unlock(&graph_lock);
}

void vs_lockdep_set_report(void (*fn)(const char *report, void *arg),
			   void *arg)
{
	report_fn = fn;
	report_arg = arg;
}

/* --- the annotations ----------------------------------------------------- */

static int held_find(const void *inst)
{
	int i;

	for (i = depth - 1; i >= 0; i--)
		if (held[i].inst == inst)
			return i;
	return -1;
}

static const char *class_name(const struct vs_lockdep_map *map)
{
	return names[map->class - 1];
}

void vs__lockdep_acquire(const struct vs_lockdep_map *map, const void *inst,
			 int subclass, int flags, const void *ip)
{
	struct hlock new = { inst, ip ? ip : __builtin_return_address(0), 0,
			    flags };
	int i;

	if (!map->class)
		return;
	if (subclass < 0 || subclass >= VS_LOCKDEP_SUBCLASS_MAX) {
		report_here("%s taken with subclass %d, not 0 to %d",
			    class_name(map), subclass,
			    VS_LOCKDEP_SUBCLASS_MAX - 1);
		subclass = 0;
	}
	new.node = (map->class - 1) * VS_LOCKDEP_SUBCLASS_MAX + subclass;
	if (map->sleeps)
		new.flags &= ~VS__LD_ATOMIC;
	if ((flags & VS__LD_SLEEP) && rcu)
		report_here("%s, a lock that sleeps, taken inside an RCU "
			    "read-side section", class_name(map));
	for (i = 0; i < depth && !(flags & (VS__LD_TRY | VS__LD_SEQ)); i++) {
		if (held[i].node == new.node)
			report_here("%s taken while one of its class and "
				    "subclass is held (a lock held twice, or "
				    "two without a nesting annotation)",
				    class_name(map));
		else if (!edge_test(held[i].node, new.node))
			add_edge(&held[i], &new);
	}
	if (depth == VS_LOCKDEP_DEPTH) {
		report_here("more than %d locks held", VS_LOCKDEP_DEPTH);
		lost++;	/* its release is not a second report */
		return;
	}
	held[depth++] = new;
}

void vs__lockdep_release(const struct vs_lockdep_map *map, const void *inst)
{
	int i;

	if (!map->class)
		return;
	i = held_find(inst);
	if (i < 0 && lost) {
		lost--;
		return;
	}
	if (i < 0) {
		report_here("%s released, but this thread does not hold it",
			    class_name(map));
		return;
	}
	memmove(&held[i], &held[i + 1], (size_t)(depth - i - 1) *
		sizeof(held[0]));
	depth--;
}

void vs__lockdep_downgrade(const struct vs_lockdep_map *map, const void *inst)
{
	int i;

	if (!map->class)
		return;
	i = held_find(inst);
	if (i < 0 || (held[i].flags & VS__LD_READ))
		report_here("%s downgraded, but this thread does not hold it "
			    "for writing", class_name(map));
	else
		held[i].flags |= VS__LD_READ;
}

void vs__lockdep_seq_begin(const struct vs_lockdep_map *map, const void *inst)
{
	if (!map->class)
		return;
	if (held_find(inst) >= 0)
		report_here("a write section of %s entered inside itself",
			    class_name(map));
	if (map->assoc && !vs__lockdep_held(map->assoc, 1))
		report_here("a write section of %s entered without the lock "
			    "that serializes its writers held for writing",
			    class_name(map));
	vs__lockdep_acquire(map, inst, 0, VS__LD_SEQ,
			    __builtin_return_address(0));
}

void vs__lockdep_rcu(int delta)
{
	if (rcu + delta < 0) {
		report_here("vs_rcu_read_unlock() outside an RCU read-side "
			    "section");
		return;
	}
	rcu += delta;
}

/* The innermost spinlock this thread holds, or NULL. */
static const struct hlock *atomic_held(void)
{
	int i;

	for (i = depth - 1; i >= 0; i--)
		if (held[i].flags & VS__LD_ATOMIC)
			return &held[i];
	return NULL;
}

static void report_atomic(const char *what, const struct hlock *h)
{
	report_here("%s, which may sleep, called while %s, a spinlock, is "
		    "held", what, names[h->node / VS_LOCKDEP_SUBCLASS_MAX]);
}

void vs__lockdep_might_sleep(const char *what)
{
	const struct hlock *h = atomic_held();

	if (rcu)
		report_here("%s, which sleeps, called inside an RCU read-side "
			    "section", what);
	else if (h)
		report_atomic(what, h);
}

void vs__lockdep_might_alloc(const char *what)
{
	const struct hlock *h = atomic_held();

	if (h)
		report_atomic(what, h);
}

int vs__lockdep_held(const void *inst, int write)
{
	int i = held_find(inst);

	return i >= 0 && (!write || !(held[i].flags & VS__LD_READ));
}

int vs__lockdep_rcu_depth(void)
{
	return rcu;
}

void vs__lockdep_assert_failed(const char *what, const char *file, int line,
			       const char *func)
{
	report_here("assertion failed at %s:%d in %s(): %s", file, line, func,
		    what);
}

void vs__lockdep_context_end(int ctx, int abandoned)
{
#if VS_VCPU
	int *d = &VS__OF(depth_, ctx), *r = &VS__OF(rcu_, ctx);
	int *l = &VS__OF(lost_, ctx);
#else
	int *d = &depth, *r = &rcu, *l = &lost;

	(void)ctx;
#endif
	if (!abandoned && (*d || *r || *l))
		report_here("a thread ends holding locks");
	*d = 0;
	*r = 0;
	*l = 0;
}

/* A vCPU context's end is the engine's to see (vcpu/client.h). */
static struct vs__vcpu_client lockdep_client = {
	.context_end = vs__lockdep_context_end,
};

__attribute__((constructor)) static void lockdep_client_register(void)
{
	vs__vcpu_client_register(&lockdep_client);
}

#else /* !VS_LOCKDEP */

int vs_lockdep_class(const char *name)
{
	(void)name;
	return -ENOSYS;
}

void vs_lockdep_set_report(void (*fn)(const char *report, void *arg),
			   void *arg)
{
	(void)fn;
	(void)arg;
}

void vs_lockdep_reset(void)
{
}

#endif /* VS_LOCKDEP */
