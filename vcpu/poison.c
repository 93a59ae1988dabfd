/* SPDX-License-Identifier: MIT */
/*
 * vcpu/poison.c - memory the model has freed (vs_vcpu_poison()),
 * checked at every event of a machine made with VS_MACHINE_CHECK_FREED:
 * a load, store or read-modify-write of a poisoned byte fails the run
 * as a use after free, with the event in the report.
 *
 * A mask of poisoned bytes per 64-byte line, in a hash of lines whose
 * nodes come from memory malloc does not manage (vcpu/names.h), so
 * that poisoning moves none of the work's objects.  The first byte of
 * an access is what is checked.
 *
 * Locking: the machine's host thread, between events.
 */
#include <string.h>

#include "internal.h"

#define LINE_SHIFT 6
#define BUCKETS 4096			/* a power of two */
#define CHUNK_NODES 4096		/* nodes per allocation */

struct pline {
	uintptr_t line;			/* address >> LINE_SHIFT */
	uint64_t mask;			/* its poisoned bytes */
	uint64_t seq;			/* the run's events when poisoned */
	unsigned int by;		/* the context that poisoned it */
	struct pline *next;
};

struct chunk {
	struct chunk *next;
	struct pline node[CHUNK_NODES];
};

struct vs__poison {
	struct pline *bucket[BUCKETS];
	struct pline *free;
	struct chunk *chunks;
};

static struct pline **bucket_of(struct vs__poison *p, uintptr_t line)
{
	return &p->bucket[(line * 0x9e3779b97f4a7c15ull) >> 52 &
			  (BUCKETS - 1)];
}

/* A node for @line, or NULL when out of memory. */
static struct pline *node_get(struct vs__poison *p)
{
	struct chunk *c;
	struct pline *n;
	unsigned int i;

	if (!p->free) {
		c = vs__offheap_alloc(sizeof(*c));
		if (!c)
			return NULL;
		c->next = p->chunks;
		p->chunks = c;
		for (i = 0; i < CHUNK_NODES; i++) {
			c->node[i].next = p->free;
			p->free = &c->node[i];
		}
	}
	n = p->free;
	p->free = n->next;
	return n;
}

/* The bytes of line @line inside [lo, hi). */
static uint64_t line_mask(uintptr_t line, uintptr_t lo, uintptr_t hi)
{
	uintptr_t start = line << LINE_SHIFT, end = start + 64;
	unsigned int from = lo > start ? (unsigned int)(lo - start) : 0;
	unsigned int to = hi < end ? (unsigned int)(hi - start) : 64;

	if (to - from == 64)
		return ~0ull;
	return ((1ull << (to - from)) - 1) << from;
}

/* Set (@on) or clear the bits of [addr, addr + len). */
static void mark(struct vs_machine *m, uintptr_t lo, size_t len, int on)
{
	uintptr_t hi = lo + len, line;
	struct pline **pp, *n;
	uint64_t bits;

	if (!m->poison) {
		if (!on)
			return;
		m->poison = vs__offheap_alloc(sizeof(*m->poison));
		if (!m->poison)
			return;		/* unchecked, as without the flag */
	}
	for (line = lo >> LINE_SHIFT; line << LINE_SHIFT < hi; line++) {
		bits = line_mask(line, lo, hi);
		pp = bucket_of(m->poison, line);
		while (*pp && (*pp)->line != line)
			pp = &(*pp)->next;
		n = *pp;
		if (!n && on) {
			n = node_get(m->poison);
			if (!n)
				return;
			n->line = line;
			n->mask = 0;
			n->next = NULL;
			*pp = n;
		}
		if (!n)
			continue;
		n->mask = on ? n->mask | bits : n->mask & ~bits;
		if (on) {
			n->seq = m->seq;
			n->by = m->cur->id;
		} else if (!n->mask) {
			*pp = n->next;
			n->next = m->poison->free;
			m->poison->free = n;
		}
	}
}

int vs_vcpu_checks_freed(void)
{
	struct vs_machine *m = vs__vcpu_machine;

	return m && m->cur && (m->cfg.flags & VS_MACHINE_CHECK_FREED);
}

void vs_vcpu_poison(const void *addr, size_t len)
{
	if (addr && len && vs_vcpu_checks_freed())
		mark(vs__vcpu_machine, (uintptr_t)addr, len, 1);
}

void vs_vcpu_unpoison(const void *addr, size_t len)
{
	struct vs_machine *m = vs__vcpu_machine;

	if (m && m->cur && addr && len) {
		mark(m, (uintptr_t)addr, len, 0);
		vs__mem_alloc(m, addr, len);	/* in use: allocated */
	}
}

void vs_vcpu_forget(const void *addr, size_t len)
{
	struct vs_machine *m = vs__vcpu_machine;

	if (m && m->cur && addr && len) {
		mark(m, (uintptr_t)addr, len, 0);
		vs__mem_forget(m, addr, len);
	}
}

int vs__vcpu_poisoned(struct vs_machine *m, const volatile void *addr,
		      uint64_t *seq, unsigned int *by)
{
	uintptr_t a = (uintptr_t)addr, line = a >> LINE_SHIFT;
	const struct pline *n;

	for (n = *bucket_of(m->poison, line); n; n = n->next) {
		if (n->line != line)
			continue;
		if (!(n->mask >> (a & 63) & 1))
			return 0;
		*seq = n->seq;
		*by = n->by;
		return 1;
	}
	return 0;
}

void vs__vcpu_poison_reset(struct vs_machine *m, int destroy)
{
	struct chunk *c, *next;

	if (!m->poison)
		return;
	if (!destroy) {		/* every node back on the free list */
		m->poison->free = NULL;
		for (c = m->poison->chunks; c; c = c->next) {
			unsigned int i;

			for (i = 0; i < CHUNK_NODES; i++) {
				c->node[i].next = m->poison->free;
				m->poison->free = &c->node[i];
			}
		}
		memset(m->poison->bucket, 0, sizeof(m->poison->bucket));
		return;
	}
	for (c = m->poison->chunks; c; c = next) {
		next = c->next;
		vs__offheap_free(c, sizeof(*c));
	}
	vs__offheap_free(m->poison, sizeof(*m->poison));
	m->poison = NULL;
}
