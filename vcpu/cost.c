/* SPDX-License-Identifier: MIT */
/*
 * The cache-coherence cost model (vmsim/vcpu_cost.h): a directory of lines
 * in an open-addressing hash table, the MESI-like rules of an access, and
 * the bandwidth model of page clearing.  The table and the names live off
 * the heap (vcpu/names.h), so that neither a name nor a new line
 * moves what the simulated code allocates.
 */
#include <vmsim/vcpu_cost.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

#define WORDS (VS_VCPU_MAX / 64)	/* words of a sharer bitmap */
#define NAME_RANGE_MAX (64u << 20)	/* longest range vs_coherence_name() */
#define TABLE_MIN 1024			/* first size of the table, a power of 2 */
#define LINE_SHIFT 6
#define NO_OWNER (-1)
#define TOTALS_MIN 64			/* first room of the per-name totals */
#define BYTES_MAX (UINT64_MAX / 2000)	/* a clear's bytes are cut to this */
#define PAGE_LINES 64			/* lines of a 4 KiB page */

/*
 * One line.  @tag is the line number + 1 (0: a free slot).  Either
 * @owner >= 0 and @sharers is empty, or @owner is NO_OWNER and @sharers
 * holds every CPU with a copy (none: the line is in memory only).
 */
struct line {
	uint64_t tag;
	uint64_t busy_until;	/* the end of its last transfer */
	uint64_t written;	/* when a store or RMW last reached it */
	uint64_t excl_until;	/* ... of its last one for ownership */
	uint32_t busy_hold;	/* how long the receiver of the first keeps */
	uint32_t excl_hold;	/* it, and of the second */
	uint64_t sharers[WORDS];
	uint64_t transfers;
	uint64_t rmws;
	uint64_t wait_cycles;
	uint64_t first_touch;	/* 0: never accessed (only named) */
	uint32_t name;		/* the id of its name (vcpu_names.h); 0: none */
	uint32_t name_line;	/* its index among the lines of that range */
	int16_t owner;
	/* For the first line of a cleared range: the socket that cleared
	 * it last, + 1 (0: never cleared), and that socket's clear count
	 * at the time, in bytes. */
	int16_t clear_socket;
	uint64_t clear_stamp;
};

/*
 * One stream of the prefetcher: the 4 KiB page it is in (@tags holds
 * the page and when the stream was used last, its age: the least
 * recently used stream makes room for a new one), the last line missed
 * on, the direction of the walk (+1, -1; 0: none seen yet), and its run:
 * the misses in that direction since it was set, numbered from 0, with
 * the time of each and whether it was for ownership, the last
 * VS_PREFETCH_DISTANCE_MAX of them by number modulo that.
 */
struct stream_tag {
	uint64_t page;		/* page number + 1 (0: free) */
	uint64_t time;
};

struct stream {
	uint64_t line;
	uint32_t run;		/* the number of the last miss */
	int dir;
	uint64_t time[VS_PREFETCH_DISTANCE_MAX];
	uint8_t excl[VS_PREFETCH_DISTANCE_MAX];
};

/* Where a vCPU sits, precomputed for the access path. */
struct cpu_info {
	uint64_t socket_mask[WORDS];	/* vCPUs of its socket, itself too */
	uint64_t sibling_mask[WORDS];	/* the other threads of its core */
	unsigned int socket;
	unsigned int core_id;		/* socket * cores + core */
	uint64_t clear_start, clear_end;	/* its current clear ... */
	int clear_mem;				/* ... goes to memory */
	/* The line it received last (its tag), kept until @hold_until
	 * though the directory may have given it on: the next request's
	 * snoop has not reached it yet.  @hold_excl: owned, not shared. */
	uint64_t hold_tag, hold_until;
	int hold_excl;
	/* When its store buffer is empty: the end of its last store miss,
	 * and that line's name id, which a wait for it is charged to. */
	uint64_t sb_until;
	uint32_t sb_name;
	struct stream_tag tags[VS_PREFETCH_STREAMS_MAX];
	struct stream streams[VS_PREFETCH_STREAMS_MAX];
};

/* The totals of one name (index 0: the lines never named). */
struct name_total {
	uint64_t cycles;
	uint64_t wait_cycles;
	uint64_t transfers;
	uint64_t rmws;
	uint64_t accesses;
};

struct vs_coherence {
	struct vs_vcpu_profile p;
	unsigned int nr;
	unsigned int words;		/* words of the sharer bitmaps in use */
	uint32_t lat[VS_XFER_NR];	/* transfer cost by source */
	struct line *table;
	size_t cap;			/* slots, a power of 2 */
	size_t count;			/* slots in use */
	unsigned int shift;		/* 64 - log2(cap) */
	uint64_t touches;		/* lines accessed so far */
	struct vs__names names;
	struct name_total *totals;	/* by name id, off the heap */
	uint32_t totals_cap;		/* entries of @totals */
	struct cpu_info *cpus;
	struct vs_coherence_stats *stats;
	uint64_t socket_cleared[VS_VCPU_MAX];	/* bytes, by socket */
};

static inline int popcount64(uint64_t x)
{
#if defined(__GNUC__)
	return __builtin_popcountll(x);
#else
	int n = 0;

	for (; x; x &= x - 1)
		n++;
	return n;
#endif
}

static inline size_t slot_of(const struct vs_coherence *c, uint64_t tag)
{
	/* Fibonacci hashing: the slot depends on the address, nothing else
	 * does (lookups find the same line wherever it sits). */
	return (size_t)((tag * UINT64_C(0x9E3779B97F4A7C15)) >> c->shift);
}

static int table_alloc(struct vs_coherence *c, size_t cap)
{
	unsigned int bits = 0;

	c->table = vs__offheap_alloc(cap * sizeof(*c->table));
	if (!c->table)
		return -ENOMEM;
	while (((size_t)1 << bits) < cap)
		bits++;
	c->cap = cap;
	c->shift = 64 - bits;
	return 0;
}

/* Double the table, keeping every line. */
static int table_grow(struct vs_coherence *c)
{
	struct line *old = c->table;
	size_t i, old_cap = c->cap;

	if (table_alloc(c, old_cap * 2)) {
		c->table = old;
		c->cap = old_cap;
		return -ENOMEM;
	}
	for (i = 0; i < old_cap; i++) {
		size_t j, mask = c->cap - 1;

		if (!old[i].tag)
			continue;
		for (j = slot_of(c, old[i].tag); c->table[j].tag;
		     j = (j + 1) & mask)
			;
		c->table[j] = old[i];
	}
	vs__offheap_free(old, old_cap * sizeof(*old));
	return 0;
}

/* The line of number @lineno, created empty when new; NULL: no memory. */
static struct line *table_get(struct vs_coherence *c, uint64_t lineno)
{
	uint64_t tag = lineno + 1;
	size_t mask = c->cap - 1, i = slot_of(c, tag);
	struct line *l;

	for (;; i = (i + 1) & mask) {
		l = &c->table[i];
		if (l->tag == tag)
			return l;
		if (!l->tag)
			break;
	}
	if ((c->count + 1) * 2 > c->cap) {	/* at most half full */
		if (table_grow(c))
			return NULL;
		mask = c->cap - 1;
		for (i = slot_of(c, tag); c->table[i].tag; i = (i + 1) & mask)
			;
		l = &c->table[i];
	}
	l->tag = tag;
	l->owner = NO_OWNER;
	c->count++;
	return l;
}

/* Room in the per-name totals for name id @id; 0 or -ENOMEM.  Off the
 * heap, as the names: naming stays neutral. */
static int totals_grow(struct vs_coherence *c, uint32_t id)
{
	uint32_t cap = c->totals_cap ? c->totals_cap : TOTALS_MIN;
	struct name_total *t;

	while (cap <= id)
		cap *= 2;
	if (cap == c->totals_cap)
		return 0;
	t = vs__offheap_alloc(cap * sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (c->totals)
		memcpy(t, c->totals, c->totals_cap * sizeof(*t));
	vs__offheap_free(c->totals, c->totals_cap * sizeof(*c->totals));
	c->totals = t;
	c->totals_cap = cap;
	return 0;
}

static void fill_cpus(struct vs_coherence *c)
{
	unsigned int i, j;

	for (i = 0; i < c->nr; i++) {
		struct vs_cpu_place pl;

		vs_vcpu_cpu_place(&c->p, i, &pl);
		c->cpus[i].socket = pl.socket;
		c->cpus[i].core_id = pl.socket * c->p.cores_per_socket +
				     pl.core;
	}
	for (i = 0; i < c->nr; i++) {
		struct cpu_info *ci = &c->cpus[i];

		for (j = 0; j < c->nr; j++) {
			uint64_t bit = UINT64_C(1) << (j % 64);

			if (c->cpus[j].socket != ci->socket)
				continue;
			ci->socket_mask[j / 64] |= bit;
			if (j != i && c->cpus[j].core_id == ci->core_id)
				ci->sibling_mask[j / 64] |= bit;
		}
	}
}

int vs_coherence_create(struct vs_coherence **cp,
			const struct vs_vcpu_profile *p, unsigned int nr_vcpus)
{
	struct vs_coherence *c;

	if (!cp || !p || !nr_vcpus || nr_vcpus > p->nr_cpus ||
	    p->nr_cpus > VS_VCPU_MAX ||
	    p->prefetch_streams > VS_PREFETCH_STREAMS_MAX ||
	    (p->prefetch_streams && (!p->prefetch_distance ||
	     p->prefetch_distance > VS_PREFETCH_DISTANCE_MAX)))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->p = *p;
	c->nr = nr_vcpus;
	c->words = (nr_vcpus + 63) / 64;
	c->lat[VS_XFER_SMT] = p->smt_sibling;
	c->lat[VS_XFER_SOCKET] = p->same_socket;
	c->lat[VS_XFER_REMOTE] = p->other_socket;
	c->lat[VS_XFER_MEMORY] = p->memory;
	c->cpus = calloc(nr_vcpus, sizeof(*c->cpus));
	c->stats = calloc(nr_vcpus, sizeof(*c->stats));
	if (!c->cpus || !c->stats || table_alloc(c, TABLE_MIN) ||
	    totals_grow(c, 0)) {
		vs_coherence_destroy(c);
		return -ENOMEM;
	}
	fill_cpus(c);
	*cp = c;
	return 0;
}

void vs_coherence_destroy(struct vs_coherence *c)
{
	if (!c)
		return;
	vs__names_free(&c->names);
	vs__offheap_free(c->table, c->cap * sizeof(*c->table));
	vs__offheap_free(c->totals, c->totals_cap * sizeof(*c->totals));
	free(c->cpus);
	free(c->stats);
	free(c);
}

const struct vs_vcpu_profile *vs_coherence_profile(const struct vs_coherence *c)
{
	return c ? &c->p : NULL;
}

static inline int has_cpu(const uint64_t *set, unsigned int cpu)
{
	return (set[cpu / 64] >> (cpu % 64)) & 1;
}

static inline enum vs_xfer_source owner_source(const struct vs_coherence *c,
					       unsigned int cpu,
					       unsigned int owner)
{
	const struct cpu_info *a = &c->cpus[cpu], *b = &c->cpus[owner];

	if (a->core_id == b->core_id)
		return VS_XFER_SMT;
	return a->socket == b->socket ? VS_XFER_SOCKET : VS_XFER_REMOTE;
}

/* The nearest copy among @set (which does not hold @cpu), or the
 * farthest with @farthest. */
static enum vs_xfer_source set_source(const struct vs_coherence *c,
				      unsigned int cpu, const uint64_t *set,
				      int farthest)
{
	const struct cpu_info *ci = &c->cpus[cpu];
	uint64_t sib = 0, sock = 0, far = 0;
	unsigned int w;

	for (w = 0; w < c->words; w++) {
		sib |= set[w] & ci->sibling_mask[w];
		sock |= set[w] & ci->socket_mask[w] & ~ci->sibling_mask[w];
		far |= set[w] & ~ci->socket_mask[w];
	}
	if (farthest)
		return far ? VS_XFER_REMOTE :
		       sock ? VS_XFER_SOCKET : VS_XFER_SMT;
	return sib ? VS_XFER_SMT : sock ? VS_XFER_SOCKET : VS_XFER_REMOTE;
}

/* A load miss: the line's state afterwards, and where it came from. */
static enum vs_xfer_source load_miss(const struct vs_coherence *c,
				     struct line *l, unsigned int cpu)
{
	enum vs_xfer_source src;
	unsigned int w;

	if (l->owner != NO_OWNER) {
		unsigned int o = (unsigned int)l->owner;

		src = owner_source(c, cpu, o);
		l->sharers[o / 64] |= UINT64_C(1) << (o % 64);
		l->owner = NO_OWNER;
	} else {
		int any = 0;

		for (w = 0; w < c->words; w++)
			any |= l->sharers[w] != 0;
		if (!any) {	/* nobody has it: exclusive, from memory */
			l->owner = (int16_t)cpu;
			return VS_XFER_MEMORY;
		}
		src = set_source(c, cpu, l->sharers, 0);
	}
	l->sharers[cpu / 64] |= UINT64_C(1) << (cpu % 64);
	return src;
}

/*
 * A store or RMW miss: invalidate every other copy (*@inval of them) and
 * take the line.  Returns VS_XFER_NR when @cpu was its only holder (an
 * upgrade with nobody to invalidate: no transfer).
 */
static enum vs_xfer_source write_miss(const struct vs_coherence *c,
				      struct line *l, unsigned int cpu,
				      int *inval)
{
	enum vs_xfer_source src = VS_XFER_NR;
	uint64_t others[WORDS];
	unsigned int w;
	int n = 0, mine = has_cpu(l->sharers, cpu);

	if (l->owner != NO_OWNER) {
		src = owner_source(c, cpu, (unsigned int)l->owner);
		n = 1;
	} else {
		for (w = 0; w < c->words; w++) {
			others[w] = l->sharers[w];
			if (w == cpu / 64)
				others[w] &= ~(UINT64_C(1) << (cpu % 64));
			n += popcount64(others[w]);
		}
		if (n)
			src = set_source(c, cpu, others, 1);
		else if (!mine)
			src = VS_XFER_MEMORY;
	}
	memset(l->sharers, 0, sizeof(l->sharers));
	l->owner = (int16_t)cpu;
	*inval = n;
	return src;
}

/* Add an access of @cost cycles to the totals of name @id; returns @cost. */
static uint64_t tally(struct vs_coherence *c, uint32_t id, uint64_t cost,
		      uint64_t wait, int transfer, enum vs_access kind)
{
	struct name_total *t = &c->totals[id];

	t->accesses++;
	t->cycles += cost;
	t->wait_cycles += wait;
	t->transfers += (uint64_t)transfer;
	t->rmws += kind == VS_ACCESS_RMW;
	return cost;
}

static uint64_t charge_hit(struct vs_coherence *c, unsigned int cpu,
			   uint64_t extra)
{
	struct vs_coherence_stats *st = &c->stats[cpu];
	uint64_t cost = c->p.hit + extra;

	st->hits++;
	st->cycles += cost;
	return cost;
}

/*
 * Does @cpu still have @l from a transfer that the directory already gave
 * on (it keeps it until the next request's snoop reaches it), in a state
 * that serves @kind?
 */
static int held(const struct vs_coherence *c, const struct line *l,
		unsigned int cpu, enum vs_access kind, uint64_t now)
{
	const struct cpu_info *ci = &c->cpus[cpu];

	return ci->hold_tag == l->tag && now < ci->hold_until &&
	       (ci->hold_excl || kind == VS_ACCESS_LOAD);
}

/*
 * The hardware prefetcher (Intel's L2 streamer, and its like): each of
 * the prefetch_streams pages of 4 KiB that a core missed in most recently
 * is a stream, and two misses on neighbouring lines give it a direction.
 * From then on each miss in that direction (miss m of the run, the
 * first two being 0 and 1) asks for the lines ahead of it, two more a
 * miss until it runs prefetch_distance lines ahead: for m >= 2, miss m's
 * line was first asked for by miss max(m - distance, m / 2).  A request
 * made before the line last moved or was written (@changed) fetched a
 * copy that is gone; the model takes it that each later miss asks for
 * its window again and fetches what is missing (an estimate: Intel
 * does not say).  So a miss of @cpu on line @lineno that continues a
 * stream was prefetched if one of the misses from that first requester
 * on came at or after @changed: the earliest such one asked for it
 * (*@issued), for ownership if that miss was (*@own; a line taken for
 * ownership by a prefetch, or upgraded by a later miss, counts as a miss
 * for ownership).  Returns whether it was; trains the stream either way.
 */
static int stream_miss(struct vs_coherence *c, unsigned int cpu,
		       uint64_t lineno, int excl, uint64_t now,
		       uint64_t changed, uint64_t *issued, int *own)
{
	struct cpu_info *ci = &c->cpus[cpu];
	uint64_t page = lineno / PAGE_LINES + 1;
	unsigned int i, n = c->p.prefetch_streams, d = c->p.prefetch_distance;
	unsigned int old = 0, j, m, slot;
	struct stream *s;
	int64_t step;
	int hit = 0;

	if (!n)
		return 0;
	for (i = 0; i < n && ci->tags[i].page != page; i++)
		if (ci->tags[i].time < ci->tags[old].time)
			old = i;
	if (i == n) {	/* a new stream replaces the least recently used */
		ci->tags[old] = (struct stream_tag){ page, now };
		s = &ci->streams[old];
		s->line = lineno;
		s->dir = 0;
		s->run = 0;
		s->time[0] = now;
		s->excl[0] = (uint8_t)excl;
		return 0;
	}
	ci->tags[i].time = now;
	s = &ci->streams[i];
	step = (int64_t)(lineno - s->line);
	slot = s->run % VS_PREFETCH_DISTANCE_MAX;
	if (step == 0) {	/* the same line again (an upgrade): asked now */
		s->time[slot] = now;
		s->excl[slot] |= (uint8_t)excl;
		return 0;
	}
	if (step != 1 && step != -1) {	/* not a walk: start again */
		m = 0;
	} else if (step != s->dir) {	/* a new run's second miss */
		m = 1;
	} else {
		m = s->run + 1;
		j = m > 2 * d ? m - d : m / 2;
		for (; j < m && !hit; j++) {
			slot = j % VS_PREFETCH_DISTANCE_MAX;
			hit = s->time[slot] >= changed;
		}
		*issued = s->time[slot];
		*own = s->excl[slot];
		excl |= hit && *own;	/* it gets the line for ownership */
	}
	s->dir = m ? (int)step : 0;
	s->run = m;
	s->line = lineno;
	s->time[m % VS_PREFETCH_DISTANCE_MAX] = now;
	s->excl[m % VS_PREFETCH_DISTANCE_MAX] = (uint8_t)excl;
	return hit;
}

uint64_t vs_coherence_access(struct vs_coherence *c, unsigned int cpu,
			     const void *addr, enum vs_access kind,
			     uint64_t now)
{
	return vs_coherence_access_lead(c, cpu, addr, kind, now, NULL);
}

static uint64_t access_at(struct vs_coherence *c, unsigned int cpu,
			  const void *addr, enum vs_access kind, uint64_t now,
			  uint64_t *lead);

/*
 * x86-64's store buffer: a store that misses retires at once, its line
 * arriving in the background (access_at()); a fence or a locked
 * read-modify-write waits until every store before it has its line.
 */
uint64_t vs_coherence_access_lead(struct vs_coherence *c, unsigned int cpu,
				  const void *addr, enum vs_access kind,
				  uint64_t now, uint64_t *lead)
{
	uint64_t drain = 0, cost;

	if (c && cpu < c->nr &&
	    (kind == VS_ACCESS_RMW || kind == VS_ACCESS_FENCE) &&
	    c->cpus[cpu].sb_until > now) {
		drain = c->cpus[cpu].sb_until - now;
		c->stats[cpu].cycles += drain;
		c->stats[cpu].drain_cycles += drain;
		c->totals[c->cpus[cpu].sb_name].cycles += drain;
	}
	cost = access_at(c, cpu, addr, kind, now + drain, lead);
	if (lead)	/* it takes effect after the wait, at the earliest */
		*lead += drain;
	return cost + drain;
}

static uint64_t access_at(struct vs_coherence *c, unsigned int cpu,
			  const void *addr, enum vs_access kind, uint64_t now,
			  uint64_t *lead)
{
	struct vs_coherence_stats *st;
	enum vs_xfer_source src;
	uint64_t extra = 0, start, end, ready, effect, wait, issued = 0;
	uint64_t written;
	uint32_t hold;
	struct line *l;
	int inval = 0, pf, own = 0, write = kind != VS_ACCESS_LOAD;

	if (lead)
		*lead = 0;
	if (!c || cpu >= c->nr || (unsigned int)kind > VS_ACCESS_FENCE)
		return 0;
	st = &c->stats[cpu];
	st->accesses++;
	if (kind == VS_ACCESS_FENCE) {
		st->fences++;
		st->cycles += c->p.fence;
		return c->p.fence;
	}
	if (kind == VS_ACCESS_RMW) {
		extra = c->p.rmw;
		st->rmws++;
	}
	l = table_get(c, (uintptr_t)addr >> LINE_SHIFT);
	if (!l) {	/* no memory for the directory: an uncached access */
		st->transfers++;
		st->by_source[VS_XFER_MEMORY]++;
		st->cycles += c->p.memory + extra;
		return tally(c, 0, c->p.memory + extra, 0, 1, kind);
	}
	if (!l->first_touch)
		l->first_touch = ++c->touches;
	if (kind == VS_ACCESS_RMW)
		l->rmws++;
	written = l->written;
	if (write)
		l->written = now;
	if (l->owner == (int)cpu || (!write && has_cpu(l->sharers, cpu)) ||
	    held(c, l, cpu, kind, now))
		return tally(c, l->name, charge_hit(c, cpu, extra), 0, 0,
			     kind);
	pf = stream_miss(c, cpu, l->tag - 1, write, now,
			 written > l->busy_until ? written : l->busy_until,
			 &issued, &own);
	own = write || (pf && own);
	if (!own)
		src = load_miss(c, l, cpu);
	else
		src = write_miss(c, l, cpu, &inval);
	if (src == VS_XFER_NR)	/* an upgrade with no other copy */
		return tally(c, l->name, charge_hit(c, cpu, extra), 0, 0,
			     kind);
	/*
	 * Reads of a line share it: they wait only for a transfer of
	 * ownership, and one for ownership waits for every transfer.  One
	 * starts when the last ends, as a queue; it takes effect (@lead
	 * from @now) only once the vCPU that received the last has had
	 * it for its hold, the time the request's snoop takes to reach it
	 * behind the data (half a transfer, an estimate: docs/cost-model.md).
	 */
	if (!own) {
		start = l->excl_until;
		ready = start + l->excl_hold;
	} else {	/* after every transfer, and every receiver's hold */
		start = l->busy_until;
		ready = start + l->busy_hold;
		if (l->excl_until + l->excl_hold > ready)
			ready = l->excl_until + l->excl_hold;
	}
	if (pf)		/* requested at @issued, after the line's last */
		start = issued > start ? issued : start;
	else
		start = now > start ? now : start;
	wait = start > now ? start - now : 0;
	end = start + c->lat[src];
	if (end < now + c->p.hit)	/* prefetched and there: a hit */
		end = now + c->p.hit;
	end += extra;
	hold = c->lat[src] / 2;
	effect = ready > now ? (ready < end ? ready : end) - now : 0;
	if (lead)
		*lead = effect;
	if (end >= l->busy_until) {
		l->busy_until = end;
		l->busy_hold = hold;
	}
	if (own) {
		l->excl_until = end;
		l->excl_hold = hold;
	}
	c->cpus[cpu].hold_tag = l->tag;
	c->cpus[cpu].hold_until = end + hold;
	c->cpus[cpu].hold_excl = own;
	l->transfers++;
	st->transfers++;
	st->prefetched += (uint64_t)pf;
	st->by_source[src]++;
	st->invalidations += (uint64_t)inval;
	if (kind == VS_ACCESS_STORE) {
		/* Into the store buffer once the line is its turn (the
		 * lead: before that the engine must not let it land). */
		if (wait > effect)
			wait = effect;
		if (end > c->cpus[cpu].sb_until) {
			c->cpus[cpu].sb_until = end;
			c->cpus[cpu].sb_name = l->name;
		}
		l->wait_cycles += wait;
		st->wait_cycles += wait;
		st->cycles += effect + c->p.hit;
		return tally(c, l->name, effect + c->p.hit, wait, 1, kind);
	}
	l->wait_cycles += wait;
	st->wait_cycles += wait;
	st->cycles += end - now;
	return tally(c, l->name, end - now, wait, 1, kind);
}

/* How many vCPUs of @cpu's socket, itself included, clear to memory at
 * @now. */
static unsigned int clearing_now(const struct vs_coherence *c,
				 unsigned int cpu, uint64_t now)
{
	unsigned int j, k = 1;

	for (j = 0; j < c->nr; j++) {
		const struct cpu_info *o = &c->cpus[j];

		if (j != cpu && o->socket == c->cpus[cpu].socket &&
		    o->clear_mem && o->clear_start <= now && now < o->clear_end)
			k++;
	}
	return k;
}

/*
 * Is [@addr, @addr + @bytes) still in the last-level cache of @cpu's
 * socket?  Yes if that socket cleared it last and has cleared at most
 * llc_kib since, this range included (its reuse distance in clears;
 * other traffic is left out).  Records this clear either way.
 */
static int clear_cached(struct vs_coherence *c, unsigned int cpu,
			const void *addr, uint64_t bytes)
{
	unsigned int s = c->cpus[cpu].socket;
	uint64_t *cleared = &c->socket_cleared[s], since;
	uint64_t llc = (uint64_t)c->p.llc_kib * 1024;
	struct line *l;
	int hit;

	if (!addr || !c->p.llc_kib || !c->p.clear_cached_mbpc)
		return 0;
	l = table_get(c, (uintptr_t)addr >> LINE_SHIFT);
	if (!l)
		return 0;
	since = *cleared - l->clear_stamp;
	hit = l->clear_socket == (int)s + 1 && since <= llc &&
	      bytes <= llc - since;
	*cleared += bytes;
	l->clear_socket = (int16_t)(s + 1);
	l->clear_stamp = *cleared;
	return hit;
}

static uint64_t charge_bytes(struct vs_coherence *c, unsigned int cpu,
			     uint64_t bytes, int cached, uint64_t now)
{
	struct vs_coherence_stats *st;
	uint64_t rate, cycles;

	if (cached) {
		rate = c->p.clear_cached_mbpc;
	} else {
		rate = c->p.clear_socket_mbpc / clearing_now(c, cpu, now);
		if (rate > c->p.clear_core_mbpc)
			rate = c->p.clear_core_mbpc;
	}
	if (!rate)
		rate = 1;
	/* bytes * 1000 / rate, rounded up, without overflow (bytes is at
	 * most BYTES_MAX) */
	cycles = bytes / rate * 1000 + ((bytes % rate) * 1000 + rate - 1) / rate;
	c->cpus[cpu].clear_start = now;
	c->cpus[cpu].clear_end = now + cycles;
	c->cpus[cpu].clear_mem = !cached;
	st = &c->stats[cpu];
	st->clears++;
	st->cached_clears += (uint64_t)cached;
	st->clear_bytes += bytes;
	st->clear_cycles += cycles;
	st->cycles += cycles;
	return cycles;
}

uint64_t vs_coherence_charge_clear(struct vs_coherence *c, unsigned int cpu,
				   const void *addr, uint64_t bytes,
				   uint64_t now)
{
	if (!c || cpu >= c->nr || !bytes)
		return 0;
	if (bytes > BYTES_MAX)
		bytes = BYTES_MAX;
	return charge_bytes(c, cpu, bytes, clear_cached(c, cpu, addr, bytes),
			    now);
}

uint64_t vs_coherence_charge_copy(struct vs_coherence *c, unsigned int cpu,
				  uint64_t bytes, uint64_t now)
{
	if (!c || cpu >= c->nr || !bytes)
		return 0;
	if (bytes > BYTES_MAX / 2)
		bytes = BYTES_MAX / 2;
	return charge_bytes(c, cpu, bytes * 2, 0, now);
}

int vs_coherence_name(struct vs_coherence *c, const void *addr, size_t len,
		      const char *name)
{
	uintptr_t start = (uintptr_t)addr;
	uint64_t first, last, i;
	uint32_t id;

	if (!c || !addr || !name || !*name || !len)
		return -EINVAL;
	if (len > NAME_RANGE_MAX || start + len - 1 < start)
		return -E2BIG;
	id = vs__names_intern(&c->names, name);
	if (!id || totals_grow(c, id))
		return -ENOMEM;
	first = start >> LINE_SHIFT;
	last = (start + len - 1) >> LINE_SHIFT;
	for (i = first; i <= last; i++) {
		struct line *l = table_get(c, i);

		if (!l)
			return -ENOMEM;
		l->name = id;
		l->name_line = (uint32_t)(i - first);
	}
	return 0;
}

static void hot_of(const struct vs_coherence *c, const struct line *l,
		   struct vs_coherence_hot *h)
{
	uintptr_t base = (uintptr_t)(l->tag - 1) << LINE_SHIFT;

	memset(h, 0, sizeof(*h));
	if (l->name) {
		h->name = vs__names_str(&c->names, l->name);
		h->offset = (uint64_t)l->name_line << LINE_SHIFT;
	}
	h->transfers = l->transfers;
	h->rmws = l->rmws;
	h->wait_cycles = l->wait_cycles;
	h->first_touch = l->first_touch;
	h->addr = (const void *)base;
}

/* < 0 when @a ranks before @b: a total order, first touches differ. */
static int hot_cmp(const struct vs_coherence_hot *a,
		   const struct vs_coherence_hot *b)
{
	int r;

	if (a->transfers != b->transfers)
		return a->transfers > b->transfers ? -1 : 1;
	if (!a->name != !b->name)
		return a->name ? -1 : 1;
	if (a->name && (r = strcmp(a->name, b->name)) != 0)
		return r;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return a->first_touch < b->first_touch ? -1 : 1;
}

int vs_coherence_top(const struct vs_coherence *c,
		     struct vs_coherence_hot *out, unsigned int n)
{
	unsigned int have = 0, k;
	size_t i;

	if (!c || (!out && n))
		return -EINVAL;
	for (i = 0; i < c->cap && n; i++) {
		const struct line *l = &c->table[i];
		struct vs_coherence_hot h;

		if (!l->tag || !l->first_touch)
			continue;
		hot_of(c, l, &h);
		if (have == n && hot_cmp(&h, &out[n - 1]) > 0)
			continue;
		k = have < n ? have++ : n - 1;
		for (; k > 0 && hot_cmp(&h, &out[k - 1]) < 0; k--)
			out[k] = out[k - 1];
		out[k] = h;
	}
	return (int)have;
}

/* < 0 when @a ranks before @b: most cycles first, then by name, the
 * unnamed lines last (names are distinct: a total order). */
static int named_cmp(const struct vs_coherence_named *a,
		     const struct vs_coherence_named *b)
{
	if (a->cycles != b->cycles)
		return a->cycles > b->cycles ? -1 : 1;
	if (!a->name || !b->name)
		return a->name ? -1 : 1;
	return strcmp(a->name, b->name);
}

int vs_coherence_by_name(const struct vs_coherence *c,
			 struct vs_coherence_named *out, unsigned int n)
{
	unsigned int have = 0, k;
	uint32_t id;

	if (!c || (!out && n))
		return -EINVAL;
	for (id = 0; id <= c->names.nr && id < c->totals_cap && n; id++) {
		const struct name_total *t = &c->totals[id];
		struct vs_coherence_named e = {
			.name = id ? vs__names_str(&c->names, id) : NULL,
			.cycles = t->cycles, .wait_cycles = t->wait_cycles,
			.transfers = t->transfers, .rmws = t->rmws,
			.accesses = t->accesses,
		};

		if (!t->accesses ||
		    (have == n && named_cmp(&e, &out[n - 1]) > 0))
			continue;
		k = have < n ? have++ : n - 1;
		for (; k > 0 && named_cmp(&e, &out[k - 1]) < 0; k--)
			out[k] = out[k - 1];
		out[k] = e;
	}
	return (int)have;
}

int vs_coherence_stats(const struct vs_coherence *c, unsigned int cpu,
		       struct vs_coherence_stats *out)
{
	unsigned int i, j;

	if (!c || !out || (cpu != VS_COHERENCE_ALL && cpu >= c->nr))
		return -EINVAL;
	if (cpu != VS_COHERENCE_ALL) {
		*out = c->stats[cpu];
		return 0;
	}
	memset(out, 0, sizeof(*out));
	for (i = 0; i < c->nr; i++) {
		const struct vs_coherence_stats *s = &c->stats[i];

		out->cycles += s->cycles;
		out->wait_cycles += s->wait_cycles;
		out->accesses += s->accesses;
		out->hits += s->hits;
		out->transfers += s->transfers;
		for (j = 0; j < VS_XFER_NR; j++)
			out->by_source[j] += s->by_source[j];
		out->prefetched += s->prefetched;
		out->invalidations += s->invalidations;
		out->rmws += s->rmws;
		out->fences += s->fences;
		out->drain_cycles += s->drain_cycles;
		out->clears += s->clears;
		out->cached_clears += s->cached_clears;
		out->clear_bytes += s->clear_bytes;
		out->clear_cycles += s->clear_cycles;
	}
	return 0;
}

void vs_coherence_reset_stats(struct vs_coherence *c)
{
	size_t i;

	if (!c)
		return;
	memset(c->stats, 0, c->nr * sizeof(*c->stats));
	memset(c->totals, 0, c->totals_cap * sizeof(*c->totals));
	for (i = 0; i < c->cap; i++) {
		c->table[i].transfers = 0;
		c->table[i].rmws = 0;
		c->table[i].wait_cycles = 0;
	}
}
