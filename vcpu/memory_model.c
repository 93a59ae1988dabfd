/* SPDX-License-Identifier: MIT */
/*
 * vcpu/memory_model.c - weak memory on vCPUs: what a load may return
 * besides the last store (vs_machine_config.memory).
 *
 * Memory always holds the newest value of every location, as the code
 * stored it.  A model changes only what one seam operation sees: before
 * the access it may put another value in the location, and after it
 * (vs__vcpu_done(), called by the seam macro) it puts the newest back.
 * The engine runs one vCPU at a time, so nobody else sees the swap.
 * Plain accesses are not modelled: they see the newest value.
 *
 * TSO (x86-TSO, Sewell et al. 2010): each context has a FIFO store
 * buffer.  A store goes into it, not to memory; a load reads the
 * newest buffered store to its location, else memory.  An RMW, a full
 * fence, a vs_cpu_relax(), blocking and leaving the vCPU drain the
 * buffer; so does a join or wake-up that the context's work orders
 * before another's (vs__mem_sync()).  Ending does not: its last stores
 * may still wait when another context loads.  Before every event, one
 * buffer may write its oldest entry to memory: a choice point of kind
 * VS_VCPU_CHOOSE_FLUSH, 0 for none, i for the i-th context, by id,
 * with stores buffered.
 *
 * Relaxed (the C11 model as loom and CDSChecker run it): every location
 * keeps its last VS__MEM_HISTORY stores, each with the storing context
 * and its clock entry (to know whether the store happens before a
 * load), the vector clock that an acquire of it takes (its release
 * clock), and when each context first read it.  A relaxed or acquire
 * load may return any kept store at or after the newest one that
 * happens before it, or that a read it knows of returned (coherence),
 * a choice point of kind VS_VCPU_CHOOSE_READ whose default is the
 * newest.  Each work of a run has a clock entry of its own.  An RMW reads the newest and continues its
 * release sequence.  Fences: vs_smp_wmb() is a release fence,
 * vs_smp_rmb() an acquire fence, vs_smp_mb() and the fully ordered
 * RMWs are both and also meet in one global clock, so that two of them
 * are ordered one way or the other (store buffering is forbidden across
 * them).  Spawning, futex wake-ups, joins and RCU's grace periods
 * order too (vs__mem_sync(), vs__vcpu_fence(), vs__vcpu_release(),
 * vs__vcpu_acquire()).
 *
 * Relaxed also checks publication: an object of vm/'s caches is
 * stamped at allocation with its allocator's clock, and a context that
 * touches it through a seam operation without that allocation
 * happening before fails the run: it found the pointer through a store
 * that was not a release, or a load that was not an acquire.
 *
 * Locking: the engine's, one host thread between events.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int vs__vcpu_post;

#define HISTORY VS__MEM_HISTORY
#define BUFFER 8		/* TSO: entries of a store buffer */
#define NONE 0xffffu		/* no context: stored before the run */

struct store {
	uint64_t val;
	uint32_t stamp;		/* its storer's clock entry */
	uint16_t ctx;		/* the storer's clock index, or NONE */
	struct vs__vclock sync;	/* what an acquire of it takes */
	struct vs__vclock read;	/* by clock index: the reader's clock
				 * entry when it first read it, 0 never */
};

/* The head of an entry of the two tables: an entry of an earlier run
 * (vs__mem.run) is free, so a run starts with both empty at no cost. */
struct head {
	uintptr_t key;
	uint64_t run;		/* 0: never used */
};

struct loc {
	struct head h;		/* key: its address */
	unsigned int size;
	unsigned int n;		/* stores kept, newest at s[n - 1] */
	struct store s[HISTORY];
};

struct stamp {
	struct head h;		/* key: its granule, address >> 3 */
	uint32_t stamp;
	uint16_t ctx;
};

struct buffered {
	uintptr_t addr;
	unsigned int size;
	uint64_t val;		/* the value it stored */
	uint64_t old;		/* the value the others see until it flushes */
};

struct ctx {
	uint64_t run;			/* the run it last started in */
	unsigned int ix;		/* relaxed: its clock index */
	struct vs__vclock vc;		/* what happens before it */
	struct vs__vclock ended;	/* relaxed: the context's earlier
					 * works of this run, at their end */
	struct vs__vclock rel;		/* at its last release fence */
	struct vs__vclock acq;		/* relaxed loads' release clocks */
	struct buffered buf[BUFFER];	/* TSO */
	unsigned int nbuf;
};

/* What the seam operation under way needs done after its access. */
enum post {
	POST_NONE,
	POST_RESTORE,		/* put @saved back */
	POST_TSO_STORE,		/* buffer the store; @saved was there */
	POST_STORE,		/* relaxed: keep the value stored */
	POST_RMW,		/* relaxed: keep it when it changed */
};

struct vs__mem {
	enum vs_vcpu_memory model;
	struct ctx *ctx;		/* by context id */
	unsigned int *full;		/* TSO: the ids with stores buffered */
	unsigned int nfull;
	uint64_t run;			/* runs so far, this one included */
	unsigned int next_ix;		/* relaxed: the next work's index */
	struct vs__vclock cells[VS__VCPU_CELLS];	/* vs__vcpu_release() */
	struct vs__vclock sc;		/* the fully ordered operations' */
	struct loc *loc;		/* open addressing, by address */
	size_t nloc, cap;
	struct stamp *st;		/* allocation stamps, by granule */
	size_t nst, st_cap;
	/* the operation under way */
	unsigned int back;		/* vs__mem_event()'s answer */
	enum post post;
	struct vs__vcpu *v;
	uintptr_t addr;
	unsigned int size, mo;
	uint64_t saved;
	struct vs__vclock rmw_sync;
};

/* ---- values, clocks ---------------------------------------------------- */

static uint64_t mem_get(uintptr_t addr, unsigned int size)
{
	uint64_t v = 0;

	memcpy(&v, (const void *)addr, size);
	return v;
}

static void mem_put(uintptr_t addr, unsigned int size, uint64_t v)
{
	memcpy((void *)addr, &v, size);
}

static void vc_join(struct vs__vclock *a, const struct vs__vclock *b)
{
	unsigned int i;

	for (i = 0; i < VS__MEM_CLOCKS; i++)
		if (b->c[i] > a->c[i])
			a->c[i] = b->c[i];
}

/* Context @v's clock index: its work's, the daemon's last. */
static unsigned int cix(const struct vs__mem *w, const struct vs__vcpu *v)
{
	return v->daemon ? VS__MEM_CLOCKS - 1 : w->ctx[v->id].ix;
}

static int acquires(unsigned int mo)
{
	return mo == 1 || mo == 2 || mo >= 4;	/* consume, acquire, ... */
}

static int releases(unsigned int mo)
{
	return mo >= 3;
}

/* A tick of @v's own entry: what it does next is after what it did. */
static uint32_t tick(struct vs__mem *w, struct vs__vcpu *v)
{
	return ++w->ctx[v->id].vc.c[cix(w, v)];
}

/* A full fence of @v: acquire, meet the global clock, release. */
static void fence_full(struct vs__mem *w, struct vs__vcpu *v)
{
	struct ctx *c = &w->ctx[v->id];

	vc_join(&c->vc, &c->acq);
	vc_join(&c->vc, &w->sc);
	(void)tick(w, v);
	w->sc = c->vc;
	c->rel = c->vc;
}

/* ---- the tables --------------------------------------------------------- */

static size_t hash_ptr(uintptr_t a, size_t cap)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

/* The index in @tab, of @cap entries of @esz bytes that each start
 * with a struct head, of @key's entry in run @run, or of the free entry
 * where it would go.  The table is at most half full. */
static size_t tab_find(const void *tab, size_t cap, size_t esz,
		       uintptr_t key, uint64_t run)
{
	struct head h;
	size_t i;

	for (i = hash_ptr(key, cap);; i = (i + 1) & (cap - 1)) {
		memcpy(&h, (const char *)tab + i * esz, sizeof(h));
		if (h.run != run || h.key == key)
			return i;
	}
}

/* Double such a table (from 1024 entries), keeping run @run's. */
static int grow(void **tab, size_t *cap, size_t esz, uint64_t run)
{
	size_t ncap = *cap ? 2 * *cap : 1024, i;
	char *old = *tab, *nt = calloc(ncap, esz);
	struct head h;

	if (!nt)
		return -ENOMEM;
	for (i = 0; i < *cap; i++) {
		memcpy(&h, old + i * esz, sizeof(h));
		if (h.run == run)
			memcpy(nt + tab_find(nt, ncap, esz, h.key, run) * esz,
			       old + i * esz, esz);
	}
	free(old);
	*tab = nt;
	*cap = ncap;
	return 0;
}

/* @key's entry of this run in the table *@tab (*@cap entries of @esz
 * bytes, *@n of them this run's), or NULL; with @make a new one, zeroed
 * but for its head, if need be. */
static void *tab_get(struct vs__mem *w, void **tab, size_t *cap, size_t *n,
		     size_t esz, uintptr_t key, int make)
{
	struct head h;
	char *e;

	if (make && 2 * (*n + 1) > *cap && grow(tab, cap, esz, w->run))
		vs__vcpu_die("vcpu memory model", ENOMEM);
	if (!*cap)
		return NULL;
	e = (char *)*tab + tab_find(*tab, *cap, esz, key, w->run) * esz;
	memcpy(&h, e, sizeof(h));
	if (h.run == w->run)
		return e;
	if (!make)
		return NULL;
	(*n)++;
	memset(e, 0, esz);
	h.key = key;
	h.run = w->run;
	memcpy(e, &h, sizeof(h));
	return e;
}

/* The location at @addr, or NULL; with @make a new one if need be. */
static struct loc *loc_find(struct vs__mem *w, uintptr_t addr, int make)
{
	return tab_get(w, (void **)&w->loc, &w->cap, &w->nloc,
		       sizeof(*w->loc), addr, make);
}

/* Start @l's history again from what memory holds: a store before the
 * run, or a plain store the model did not see. */
static void loc_restart(struct loc *l, unsigned int size)
{
	struct store *s = &l->s[0];

	l->size = size;
	l->n = 1;
	memset(s, 0, sizeof(*s));
	s->val = mem_get(l->h.key, size);
	s->ctx = NONE;
}

/* @l, checked against memory: its history, if still what memory says. */
static struct loc *loc_valid(struct loc *l, unsigned int size)
{
	if (l && (l->size != size ||
		  l->s[l->n - 1].val != mem_get(l->h.key, size)))
		loc_restart(l, size);
	return l;
}

/* The allocation stamp of @granule, or NULL; with @make a new one
 * (the caller stamps it) if need be. */
static struct stamp *stamp_find(struct vs__mem *w, uintptr_t granule,
				int make)
{
	return tab_get(w, (void **)&w->st, &w->st_cap, &w->nst,
		       sizeof(*w->st), granule, make);
}

/* ---- TSO ----------------------------------------------------------------- */

/*
 * Memory holds each location's newest store, as its storer sees it
 * (plain loads of its own stores are right).  A buffered store
 * remembers the value it hid, @old: until it is flushed, another
 * context's seam load of the location reads the @old of its oldest
 * buffered store.  One context at a time has stores to a location
 * buffered: a store or RMW of another first flushes them (a flush may
 * come at any time).
 */

/* Context @id's buffer became empty (@on 0) or not: keep @w->full in
 * order of id. */
static void tso_mark(struct vs__mem *w, unsigned int id, int on)
{
	unsigned int i = 0;

	while (i < w->nfull && w->full[i] < id)
		i++;
	if (on) {
		memmove(w->full + i + 1, w->full + i,
			(w->nfull++ - i) * sizeof(*w->full));
		w->full[i] = id;
	} else {
		memmove(w->full + i, w->full + i + 1,
			(--w->nfull - i) * sizeof(*w->full));
	}
}

/* Context @id's oldest buffered store becomes visible to all. */
static void tso_flush_one(struct vs__mem *w, unsigned int id)
{
	struct ctx *c = &w->ctx[id];

	memmove(c->buf, c->buf + 1, --c->nbuf * sizeof(c->buf[0]));
	if (!c->nbuf)
		tso_mark(w, id, 0);
}

static void tso_drain(struct vs__mem *w, unsigned int id)
{
	while (w->ctx[id].nbuf)
		tso_flush_one(w, id);
}

/* Does [@addr, +@size) overlap @b? */
static int tso_overlaps(const struct buffered *b, uintptr_t addr,
			unsigned int size)
{
	return b->addr < addr + size && addr < b->addr + b->size;
}

/* Context @id's oldest buffered store to a location overlapping
 * [@addr, +@size), or NULL. */
static struct buffered *tso_oldest(struct vs__mem *w, unsigned int id,
				   uintptr_t addr, unsigned int size)
{
	struct ctx *c = &w->ctx[id];
	unsigned int i;

	for (i = 0; i < c->nbuf; i++)
		if (tso_overlaps(&c->buf[i], addr, size))
			return &c->buf[i];
	return NULL;
}

/* The context other than @me with stores to [@addr, +@size) buffered,
 * or -1. */
static int tso_owner(struct vs__mem *w, unsigned int me, uintptr_t addr,
		     unsigned int size)
{
	unsigned int i;

	for (i = 0; i < w->nfull; i++)
		if (w->full[i] != me && tso_oldest(w, w->full[i], addr, size))
			return (int)w->full[i];
	return -1;
}

/* Flush context @id's buffer up to its last store overlapping
 * [@addr, +@size). */
static void tso_flush_to(struct vs__mem *w, unsigned int id, uintptr_t addr,
			 unsigned int size)
{
	while (tso_oldest(w, id, addr, size))
		tso_flush_one(w, id);
}

static void tso_event(struct vs_machine *m, struct vs__mem *w,
		      struct vs__vcpu *v, uintptr_t addr, unsigned int op,
		      unsigned int size)
{
	struct buffered *b;
	unsigned int i;
	int owner;

	if (w->nfull) {
		i = vs__vcpu_choose_mem(m, v, VS_VCPU_CHOOSE_FLUSH,
					w->nfull + 1);
		if (i)
			tso_flush_one(w, w->full[i - 1]);
	}
	if (op == VS_VCPU_RMW || op == VS_VCPU_FENCE || op == VS_VCPU_RELAX)
		tso_drain(w, v->id);
	if (!size || op > VS_VCPU_RMW)
		return;
	owner = tso_owner(w, v->id, addr, size);
	if (owner >= 0 && op != VS_VCPU_LOAD) {
		tso_flush_to(w, (unsigned int)owner, addr, size);
		owner = -1;
	}
	if (op == VS_VCPU_STORE) {
		w->post = POST_TSO_STORE;
		w->saved = mem_get(addr, size);
		b = tso_oldest(w, v->id, addr, size);
		if (b && (b->addr != addr || b->size != size))
			tso_drain(w, v->id);	/* sizes mixed: keep it simple */
		return;
	}
	if (owner >= 0) {	/* a load of what another buffered */
		b = tso_oldest(w, (unsigned int)owner, addr, size);
		if (b->addr != addr || b->size != size) {
			tso_drain(w, (unsigned int)owner);
			return;
		}
		w->post = POST_RESTORE;
		w->saved = mem_get(addr, size);
		mem_put(addr, size, b->old);
		w->back = VS__MEM_HIDDEN;
	}
}

/* The store under way is done: memory has it; buffer it, with the
 * value it hid from the others. */
static void tso_store_done(struct vs__mem *w, uint64_t hidden)
{
	struct ctx *c = &w->ctx[w->v->id];
	struct buffered *b;
	unsigned int i;

	if (c->nbuf == BUFFER)
		tso_flush_one(w, w->v->id);
	if (!c->nbuf)
		tso_mark(w, w->v->id, 1);
	b = &c->buf[c->nbuf++];
	b->addr = w->addr;
	b->size = w->size;
	/* Hidden from the others: what the store before it, if buffered,
	 * stored; else what memory held. */
	b->old = hidden;
	for (i = c->nbuf - 1; i-- > 0;)
		if (c->buf[i].addr == w->addr) {
			b->old = c->buf[i].val;
			break;
		}
	b->val = mem_get(w->addr, w->size);
}

/* ---- relaxed ------------------------------------------------------------- */

/* Does context @c know of store @s: did it happen before @c's present,
 * or did a read of it? */
static int store_known(const struct store *s, const struct ctx *c)
{
	unsigned int k;

	if (s->ctx == NONE || c->vc.c[s->ctx] >= s->stamp)
		return 1;
	for (k = 0; k < VS__MEM_CLOCKS; k++)
		if (s->read.c[k] && c->vc.c[k] >= s->read.c[k])
			return 1;
	return 0;
}

/* Context @v reads store @s: the first time, note when. */
static void store_read(struct vs__mem *w, struct vs__vcpu *v,
		       struct store *s)
{
	unsigned int k = cix(w, v);

	if (!s->read.c[k])
		s->read.c[k] = tick(w, v);
}

static void publication_check(struct vs_machine *m, struct vs__mem *w,
			      struct vs__vcpu *v, uintptr_t addr,
			      unsigned int op)
{
	const struct stamp *s = stamp_find(w, addr >> 3, 0);
	char by[32];

	if (!s || s->ctx == NONE || s->ctx == cix(w, v) ||
	    w->ctx[v->id].vc.c[s->ctx] >= s->stamp)
		return;
	if (s->ctx == VS__MEM_CLOCKS - 1)
		snprintf(by, sizeof(by), "the RCU callbacks' daemon");
	else
		snprintf(by, sizeof(by), "work %u", s->ctx);
	vs__vcpu_fail_unpublished(m, (const volatile void *)addr, op, by);
}

/* A load of @l by @v, order @mo: which store it reads. */
static void relaxed_load(struct vs_machine *m, struct vs__mem *w,
			 struct vs__vcpu *v, struct loc *l, unsigned int mo)
{
	struct ctx *c = &w->ctx[v->id];
	unsigned int lo = l->n - 1, back;
	struct store *s;

	while (lo > 0 && !store_known(&l->s[lo], c))
		lo--;
	back = l->n - 1 - lo ?
	       vs__vcpu_choose_mem(m, v, VS_VCPU_CHOOSE_READ, l->n - lo) : 0;
	s = &l->s[l->n - 1 - back];
	store_read(w, v, s);
	vc_join(acquires(mo) ? &c->vc : &c->acq, &s->sync);
	if (back) {
		w->post = POST_RESTORE;
		w->saved = l->s[l->n - 1].val;
		mem_put(l->h.key, l->size, s->val);
		w->back = back;
	}
}

static void relaxed_event(struct vs_machine *m, struct vs__mem *w,
			  struct vs__vcpu *v, uintptr_t addr, unsigned int op,
			  unsigned int mo, unsigned int size)
{
	struct ctx *c = &w->ctx[v->id];
	struct loc *l;

	if (op == VS_VCPU_FENCE) {
		fence_full(w, v);
		return;
	}
	if (op == VS_VCPU_ORDER) {
		if (acquires(mo))
			vc_join(&c->vc, &c->acq);
		if (releases(mo)) {
			(void)tick(w, v);
			c->rel = c->vc;
		}
		return;
	}
	if (!size || op > VS_VCPU_RMW)
		return;
	publication_check(m, w, v, addr, op);
	l = loc_valid(loc_find(w, addr, op != VS_VCPU_LOAD), size);
	if (op == VS_VCPU_LOAD) {
		if (l)
			relaxed_load(m, w, v, l, mo);
		return;
	}
	w->post = op == VS_VCPU_STORE ? POST_STORE : POST_RMW;
	if (op == VS_VCPU_RMW) {
		struct store *s = &l->s[l->n - 1];

		if (mo == 5)	/* fully ordered: a full fence before */
			fence_full(w, v);
		vc_join(acquires(mo) ? &c->vc : &c->acq, &s->sync);
		store_read(w, v, s);
		w->rmw_sync = s->sync;	/* its release sequence goes on */
	}
}

/* Keep the store just made to @l by the operation under way. */
static void relaxed_store_done(struct vs__mem *w, struct loc *l)
{
	struct vs__vcpu *v = w->v;
	struct ctx *c = &w->ctx[v->id];
	struct store *s;

	if (l->n == HISTORY)
		memmove(l->s, l->s + 1, --l->n * sizeof(l->s[0]));
	s = &l->s[l->n++];
	memset(s, 0, sizeof(*s));
	s->val = mem_get(l->h.key, l->size);
	s->ctx = (uint16_t)cix(w, v);
	s->stamp = tick(w, v);
	s->sync = releases(w->mo) ? c->vc : c->rel;
	if (w->post == POST_RMW)
		vc_join(&s->sync, &w->rmw_sync);
}

/* ---- the engine's calls --------------------------------------------------- */

int vs__mem_create(struct vs_machine *m)
{
	struct vs__mem *w;

	if (m->cfg.memory == VS_VCPU_MEM_SC)
		return 0;
	if (m->cfg.memory > VS_VCPU_MEM_RELAXED)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->ctx = calloc(m->nr_all, sizeof(*w->ctx));
	w->full = calloc(m->nr_all, sizeof(*w->full));
	if (!w->ctx || !w->full) {
		free(w->ctx);
		free(w->full);
		free(w);
		return -ENOMEM;
	}
	w->model = m->cfg.memory;
	m->mem = w;
	return 0;
}

void vs__mem_destroy(struct vs_machine *m)
{
	struct vs__mem *w = m->mem;

	if (!w)
		return;
	free(w->loc);
	free(w->st);
	free(w->ctx);
	free(w->full);
	free(w);
	m->mem = NULL;
}

void vs__mem_reset(struct vs_machine *m)
{
	struct vs__mem *w = m->mem;

	if (!w)
		return;
	while (w->nfull)
		tso_drain(w, w->full[0]);
	/* The tables' entries and the contexts of earlier runs are free
	 * or unknown from now on: no need to clear them. */
	w->run++;
	memset(&w->sc, 0, sizeof(w->sc));
	memset(w->cells, 0, sizeof(w->cells));
	w->next_ix = 0;
	w->nloc = 0;
	w->nst = 0;
	w->post = POST_NONE;
	vs__vcpu_post = 0;
}

void vs__mem_end(struct vs_machine *m)
{
	struct vs__mem *w = m->mem;

	if (!w)
		return;
	if (w->post == POST_RESTORE)
		mem_put(w->addr, w->size, w->saved);
	w->post = POST_NONE;
	vs__vcpu_post = 0;
	while (w->nfull)
		tso_drain(w, w->full[0]);
}

int vs__mem_may_spawn(const struct vs_machine *m, const struct vs__vcpu *v)
{
	return !m->mem || m->mem->model != VS_VCPU_MEM_RELAXED ||
	       v->daemon || m->mem->next_ix < VS__MEM_CLOCKS - 1;
}

void vs__mem_start(struct vs_machine *m, struct vs__vcpu *v)
{
	struct vs__mem *w = m->mem;
	struct ctx *c;

	if (!w)
		return;
	tso_drain(w, v->id);	/* what its last work left buffered */
	c = &w->ctx[v->id];
	if (w->model == VS_VCPU_MEM_RELAXED && c->run == w->run)
		vc_join(&c->ended, &c->vc);	/* for its joiner */
	else
		memset(&c->ended, 0, sizeof(c->ended));
	c->run = w->run;
	if (w->model != VS_VCPU_MEM_RELAXED)
		return;
	/* A work of its own: nothing of the context's last one. */
	memset(&c->vc, 0, sizeof(c->vc));
	memset(&c->rel, 0, sizeof(c->rel));
	memset(&c->acq, 0, sizeof(c->acq));
	if (!v->daemon) {
		if (w->next_ix >= VS__MEM_CLOCKS - 1)
			vs__vcpu_die("vcpu memory model: a work without a clock",
				EINVAL);
		c->ix = w->next_ix++;
	}
}

unsigned int vs__mem_event(struct vs_machine *m, struct vs__vcpu *v,
			   const volatile void *addr, unsigned int code)
{
	struct vs__mem *w = m->mem;
	unsigned int op = code & 0xf, mo = ((code >> 4) & 0xf) - 1;
	unsigned int size = code >> 8;
	uintptr_t a = (uintptr_t)addr;

	if (size != 1 && size != 2 && size != 4 && size != 8)
		size = 0;		/* not modelled */
	if (size && (a & (size - 1)))
		size = 0;
	w->post = POST_NONE;
	w->back = 0;
	w->v = v;
	w->addr = a;
	w->size = size;
	w->mo = mo;
	if (w->model == VS_VCPU_MEM_TSO)
		tso_event(m, w, v, a, op, size);
	else
		relaxed_event(m, w, v, a, op, mo, size);
	vs__vcpu_post = w->post != POST_NONE;
	return w->back;
}

void vs__vcpu_done(int stored)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__mem *w = m->mem;
	struct loc *l;

	vs__vcpu_post = 0;
	switch (w->post) {
	case POST_RESTORE:
		mem_put(w->addr, w->size, w->saved);
		break;
	case POST_TSO_STORE:
		tso_store_done(w, w->saved);
		break;
	case POST_STORE:
	case POST_RMW:
		l = loc_find(w, w->addr, 0);
		if (stored)	/* a failed cmpxchg stores nothing */
			relaxed_store_done(w, l);
		if (w->post == POST_RMW && w->mo == 5)
			fence_full(w, w->v);	/* and one after */
		break;
	case POST_NONE:
		break;
	}
	w->post = POST_NONE;
}

void vs__mem_stop(struct vs_machine *m, struct vs__vcpu *v)
{
	if (m->mem)
		tso_drain(m->mem, v->id);
}

void vs__mem_sync(struct vs_machine *m, const struct vs__vcpu *from,
		  const struct vs__vcpu *to)
{
	struct vs__mem *w = m->mem;

	if (!w || !from || from == to)
		return;
	tso_drain(w, from->id);		/* a system call: serializing */
	/* A context that did not start this run (a join of a work that
	 * never ran) has nothing to give. */
	if (w->model != VS_VCPU_MEM_RELAXED || w->ctx[from->id].run != w->run)
		return;
	vc_join(&w->ctx[to->id].vc, &w->ctx[from->id].vc);
	/* A join (@from has ended): a work that ended before a later spawn
	 * took its context is joined by the same id, and must be seen too
	 * (vs_machine_join()). */
	if (from->state == VS__V_IDLE)
		vc_join(&w->ctx[to->id].vc, &w->ctx[from->id].ended);
}

void vs__vcpu_fence(void)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__mem *w = m ? m->mem : NULL;

	if (!w || !m->cur)
		return;
	if (w->model == VS_VCPU_MEM_TSO)
		tso_drain(w, m->cur->id);
	else
		fence_full(w, m->cur);
}

void vs__vcpu_release(unsigned int cell)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__mem *w = m ? m->mem : NULL;

	if (!w || w->model != VS_VCPU_MEM_RELAXED || !m->cur ||
	    cell >= VS__VCPU_CELLS)
		return;
	(void)tick(w, m->cur);
	vc_join(&w->cells[cell], &w->ctx[m->cur->id].vc);
}

void vs__vcpu_acquire(unsigned int cell)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__mem *w = m ? m->mem : NULL;

	if (w && w->model == VS_VCPU_MEM_RELAXED && m->cur &&
	    cell < VS__VCPU_CELLS)
		vc_join(&w->ctx[m->cur->id].vc, &w->cells[cell]);
}

void vs__mem_alloc(struct vs_machine *m, const void *addr, size_t len)
{
	struct vs__mem *w = m->mem;
	uintptr_t g, end = ((uintptr_t)addr + len + 7) >> 3;
	struct stamp *st;
	uint32_t stamp;

	if (!w || w->model != VS_VCPU_MEM_RELAXED || !m->cur)
		return;
	stamp = tick(w, m->cur);
	for (g = (uintptr_t)addr >> 3; g < end; g++) {
		st = stamp_find(w, g, 1);
		st->ctx = (uint16_t)cix(w, m->cur);
		st->stamp = stamp;
	}
}

void vs__mem_forget(struct vs_machine *m, const void *addr, size_t len)
{
	struct vs__mem *w = m->mem;
	uintptr_t g, end = ((uintptr_t)addr + len + 7) >> 3;
	struct stamp *st;

	if (!w || !w->nst)
		return;
	for (g = (uintptr_t)addr >> 3; g < end; g++)
		if ((st = stamp_find(w, g, 0)))
			st->ctx = NONE;		/* nobody's */
}
