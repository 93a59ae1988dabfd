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
#define FRAME_SHIFT 12			/* a page frame: 4 KiB */
#define FRAMES_MIN 1024			/* first slots of the frame table */
#define NO_FRAME UINT32_MAX		/* the end of an LRU list */
#define TOUCH_MAX (1ull << 30)		/* the most bytes of one touch */

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
};

/*
 * One page frame of 4 KiB in the last-level cache of one socket, in a
 * table of its own (off the heap, as the directory).  @tag is (the
 * frame number << 8 | the socket) + 1 (0: a free slot); @lines has a bit
 * for each of the frame's 64 lines that the socket's L3 holds (0: none,
 * the slot kept for the next touch); @prev and @next are the slots of
 * its neighbours in the socket's LRU list, toward the most and the
 * least recently used (NO_FRAME at the ends).
 */
struct frame {
	uint64_t tag;
	uint64_t lines;
	uint32_t prev, next;
};

/* A socket's L3: its LRU list of frames, and the bytes of their lines. */
struct llc {
	uint32_t mru, lru;
	uint64_t bytes;
};

/* What one clear, copy or touch found in its socket's L3. */
struct span {
	uint64_t bytes;		/* bytes it covers */
	uint64_t cached;	/* of them, in lines the L3 held */
	uint64_t misses;	/* its lines that the L3 did not hold */
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
	uint32_t queued[VS_XFER_NR];	/* ... when queued behind another */
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
	/* The last-level caches: NULL without llc_kib (no cache). */
	struct llc *llc;		/* by socket */
	uint64_t llc_bytes;		/* the capacity of each */
	struct frame *frames;		/* the frame table, off the heap */
	size_t fcap;			/* its slots, a power of 2 */
	size_t fused;			/* slots with a tag */
	unsigned int fshift;		/* 64 - log2(fcap) */
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

static int frames_alloc(struct vs_coherence *c, size_t cap);

/* The sockets' L3s, empty, when the profile has one (llc_kib and its
 * clearing rate): 0 or -ENOMEM. */
static int llc_create(struct vs_coherence *c)
{
	unsigned int s;

	if (!c->p.llc_kib || !c->p.clear_cached_mbpc)
		return 0;
	c->llc = calloc(c->p.sockets, sizeof(*c->llc));
	if (!c->llc)
		return -ENOMEM;
	for (s = 0; s < c->p.sockets; s++)
		c->llc[s].mru = c->llc[s].lru = NO_FRAME;
	c->llc_bytes = (uint64_t)c->p.llc_kib * 1024;
	return frames_alloc(c, FRAMES_MIN);
}

/*
 * What an RMW's transfer queued behind another costs: the profile's handoff
 * interval (one requester's RMW done to the next one's) less the RMW,
 * never more than the transfer's latency.  A profile made without the
 * parser may leave the handoffs 0: the latency, as without the keys.
 */
static void fill_queued(struct vs_coherence *c)
{
	uint32_t h[VS_XFER_NR] = {
		[VS_XFER_SOCKET] = c->p.handoff_same_socket,
		[VS_XFER_REMOTE] = c->p.handoff_other_socket,
	};
	unsigned int i;

	for (i = 0; i < VS_XFER_NR; i++) {
		uint32_t move = h[i] > c->p.rmw ? h[i] - c->p.rmw : 0;

		c->queued[i] = h[i] && move < c->lat[i] ? move : c->lat[i];
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
	fill_queued(c);
	c->cpus = calloc(nr_vcpus, sizeof(*c->cpus));
	c->stats = calloc(nr_vcpus, sizeof(*c->stats));
	if (!c->cpus || !c->stats || table_alloc(c, TABLE_MIN) ||
	    totals_grow(c, 0) || llc_create(c)) {
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
	vs__offheap_free(c->frames, c->fcap * sizeof(*c->frames));
	free(c->llc);
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
		st->llc_misses++;
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
	/* A queued RMW: its request waits at the holder, and the line
	 * follows the last transfer at the rate a line that cores RMW is
	 * handed over (loads and stores keep the latency: vcpu-calibrate's
	 * ping-pong reads a transfer as a quarter of its round trip). */
	end = start + (wait && kind == VS_ACCESS_RMW ? c->queued[src] :
		       c->lat[src]);
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
	/* perf's cache-misses: a demand request that the L3 of the socket
	 * does not serve; the L2 streamer's requests are not demand. */
	st->llc_misses += !pf && (src == VS_XFER_REMOTE ||
				  src == VS_XFER_MEMORY);
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

/* ---- the last-level caches: an LRU list of frames per socket ---------- */

static inline size_t frame_hash(const struct vs_coherence *c, uint64_t tag)
{
	/* As slot_of(): the slot depends on the address, nothing else
	 * does (the LRU lists give every order). */
	return (size_t)((tag * UINT64_C(0x9E3779B97F4A7C15)) >> c->fshift);
}

/* The slot of @tag in @c's frame table, or the free slot it would take. */
static size_t frame_slot(const struct vs_coherence *c, uint64_t tag)
{
	size_t mask = c->fcap - 1, i = frame_hash(c, tag);

	while (c->frames[i].tag && c->frames[i].tag != tag)
		i = (i + 1) & mask;
	return i;
}

static void lru_unlink(struct vs_coherence *c, unsigned int s, uint32_t i)
{
	struct frame *f = &c->frames[i];
	struct llc *l = &c->llc[s];

	if (f->prev != NO_FRAME)
		c->frames[f->prev].next = f->next;
	else
		l->mru = f->next;
	if (f->next != NO_FRAME)
		c->frames[f->next].prev = f->prev;
	else
		l->lru = f->prev;
	f->prev = f->next = NO_FRAME;
}

/* Make slot @i the most recently used frame of socket @s. */
static void lru_push(struct vs_coherence *c, unsigned int s, uint32_t i)
{
	struct frame *f = &c->frames[i];
	struct llc *l = &c->llc[s];

	f->prev = NO_FRAME;
	f->next = l->mru;
	if (l->mru != NO_FRAME)
		c->frames[l->mru].prev = i;
	else
		l->lru = i;
	l->mru = i;
}

static int frames_alloc(struct vs_coherence *c, size_t cap)
{
	unsigned int bits = 0;

	c->frames = vs__offheap_alloc(cap * sizeof(*c->frames));
	if (!c->frames)
		return -ENOMEM;
	while (((size_t)1 << bits) < cap)
		bits++;
	c->fcap = cap;
	c->fshift = 64 - bits;
	c->fused = 0;
	return 0;
}

/*
 * A new frame table of room for 4 times the frames the caches hold,
 * with only those (the slots of evicted frames go), each LRU list in
 * its order: a list is walked from its least recently used end and each
 * frame pushed in front.  0 or -ENOMEM (the old table kept).
 */
static int frames_rebuild(struct vs_coherence *c)
{
	struct frame *old = c->frames;
	size_t i, live = 0, old_cap = c->fcap, old_used = c->fused, cap;
	unsigned int s, old_shift = c->fshift;
	uint32_t k;

	for (i = 0; i < old_cap; i++)
		live += old[i].lines != 0;
	for (cap = FRAMES_MIN; cap < live * 4; cap *= 2)
		;
	if (frames_alloc(c, cap)) {
		c->frames = old;
		c->fcap = old_cap;
		c->fused = old_used;
		c->fshift = old_shift;
		return -ENOMEM;
	}
	for (s = 0; s < c->p.sockets; s++) {
		k = c->llc[s].lru;
		c->llc[s].mru = c->llc[s].lru = NO_FRAME;
		for (; k != NO_FRAME; k = old[k].prev) {
			i = frame_slot(c, old[k].tag);
			c->frames[i].tag = old[k].tag;
			c->frames[i].lines = old[k].lines;
			c->fused++;
			lru_push(c, s, (uint32_t)i);
		}
	}
	vs__offheap_free(old, old_cap * sizeof(*old));
	return 0;
}

/* The slot of @tag, made when new (after a rebuild at half full); -1:
 * no memory. */
static long frame_get(struct vs_coherence *c, uint64_t tag)
{
	size_t i = frame_slot(c, tag);

	if (c->frames[i].tag)
		return (long)i;
	if ((c->fused + 1) * 2 > c->fcap) {
		if (frames_rebuild(c))
			return -1;
		i = frame_slot(c, tag);
	}
	c->frames[i] = (struct frame){ tag, 0, NO_FRAME, NO_FRAME };
	c->fused++;
	return (long)i;
}

/* Drop the lines @mask of slot @i from socket @s's L3. */
static void llc_drop(struct vs_coherence *c, unsigned int s, uint32_t i,
		     uint64_t mask)
{
	struct frame *f = &c->frames[i];
	uint64_t gone = f->lines & mask;

	if (!gone)
		return;
	c->llc[s].bytes -= (uint64_t)popcount64(gone) * VS_COHERENCE_LINE;
	f->lines &= ~mask;
	if (!f->lines)
		lru_unlink(c, s, i);
}

/* A write by socket @s: the other sockets' copies of lines @mask of
 * @frame are invalidated. */
static void llc_invalidate(struct vs_coherence *c, unsigned int s,
			   uint64_t frame, uint64_t mask)
{
	unsigned int o;
	size_t i;

	for (o = 0; o < c->p.sockets; o++) {
		if (o == s)
			continue;
		i = frame_slot(c, (frame << 8 | o) + 1);
		if (c->frames[i].tag)
			llc_drop(c, o, (uint32_t)i, mask);
	}
}

/*
 * Socket @s touches lines @mask of @frame (writes them with @write):
 * they become its most recently used, and the least recently used
 * frames leave until its L3 holds at most llc_kib.  Return: how many of
 * @mask it held before, or -1 when the table has no room (nothing
 * recorded: the lines miss).
 */
static int llc_fill(struct vs_coherence *c, unsigned int s, uint64_t frame,
		    uint64_t mask, int write)
{
	struct llc *l = &c->llc[s];
	long i = frame_get(c, (frame << 8 | s) + 1);
	struct frame *f;
	int held;

	if (i < 0)
		return -1;
	f = &c->frames[i];
	held = popcount64(f->lines & mask);
	if (f->lines)
		lru_unlink(c, s, (uint32_t)i);
	l->bytes += (uint64_t)popcount64(mask & ~f->lines) *
		    VS_COHERENCE_LINE;
	f->lines |= mask;
	lru_push(c, s, (uint32_t)i);
	while (l->bytes > c->llc_bytes && l->lru != (uint32_t)i)
		llc_drop(c, s, l->lru, ~UINT64_C(0));
	if (write)
		llc_invalidate(c, s, frame, mask);
	return held;
}

/*
 * What [@addr, @addr + @bytes) finds in the L3 of @cpu's socket, added
 * to @sp; its frames become that socket's most recently used.  A range
 * with no address, over the cache's size, wrapping around, or on a
 * machine without llc_kib is not cached: all its lines miss.
 */
static void llc_span(struct vs_coherence *c, unsigned int cpu,
		     const void *addr, uint64_t bytes, int write,
		     struct span *sp)
{
	uintptr_t a = (uintptr_t)addr;
	uint64_t first = a >> LINE_SHIFT, last, line, held = 0, lines;
	uint64_t n = (bytes + VS_COHERENCE_LINE - 1) / VS_COHERENCE_LINE;
	int h;

	sp->bytes += bytes;
	if (!c->llc || !addr || bytes > c->llc_bytes || a + bytes - 1 < a) {
		sp->misses += n;
		return;
	}
	last = (a + bytes - 1) >> LINE_SHIFT;
	for (line = first; line <= last; line = (line | 63) + 1) {
		uint64_t end = (line | 63) < last ? (line | 63) : last;
		uint64_t mask = (end - line == 63 ? ~UINT64_C(0) :
				 ((UINT64_C(1) << (end - line + 1)) - 1))
				<< (line & 63);

		h = llc_fill(c, c->cpus[cpu].socket, line >> 6, mask, write);
		held += h > 0 ? (uint64_t)h : 0;
	}
	lines = last - first + 1;
	sp->misses += lines - held;
	held *= VS_COHERENCE_LINE;
	sp->cached += held < bytes ? held : bytes;
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

/* @bytes * 1000 / @rate (thousandths of a byte a cycle), rounded up,
 * without overflow (@bytes is at most BYTES_MAX). */
static uint64_t bytes_cycles(uint64_t bytes, uint64_t rate)
{
	if (!rate)
		rate = 1;
	return bytes / rate * 1000 + ((bytes % rate) * 1000 + rate - 1) / rate;
}

/* Charge @cpu the clear or copy @sp: its cached bytes at the cached
 * rate, the others at the memory rate of the moment. */
static uint64_t charge_span(struct vs_coherence *c, unsigned int cpu,
			    const struct span *sp, uint64_t now)
{
	struct vs_coherence_stats *st = &c->stats[cpu];
	uint64_t rate, cycles, mem = sp->bytes - sp->cached;

	rate = c->p.clear_socket_mbpc / clearing_now(c, cpu, now);
	if (rate > c->p.clear_core_mbpc)
		rate = c->p.clear_core_mbpc;
	cycles = bytes_cycles(sp->cached, c->p.clear_cached_mbpc) +
		 (mem ? bytes_cycles(mem, rate) : 0);
	c->cpus[cpu].clear_start = now;
	c->cpus[cpu].clear_end = now + cycles;
	c->cpus[cpu].clear_mem = mem != 0;
	st->clears++;
	st->cached_clears += (uint64_t)(mem == 0);
	st->clear_bytes += sp->bytes;
	st->clear_cycles += cycles;
	st->cycles += cycles;
	st->llc_misses += sp->misses;
	return cycles;
}

uint64_t vs_coherence_charge_clear(struct vs_coherence *c, unsigned int cpu,
				   const void *addr, uint64_t bytes,
				   uint64_t now)
{
	struct span sp = { 0, 0, 0 };

	if (!c || cpu >= c->nr || !bytes)
		return 0;
	if (bytes > BYTES_MAX)
		bytes = BYTES_MAX;
	llc_span(c, cpu, addr, bytes, 1, &sp);
	return charge_span(c, cpu, &sp, now);
}

uint64_t vs_coherence_charge_copy(struct vs_coherence *c, unsigned int cpu,
				  const void *dst, const void *src,
				  uint64_t bytes, uint64_t now)
{
	struct span sp = { 0, 0, 0 };

	if (!c || cpu >= c->nr || !bytes)
		return 0;
	if (bytes > BYTES_MAX / 2)
		bytes = BYTES_MAX / 2;
	llc_span(c, cpu, src, bytes, 0, &sp);	/* the read stream */
	llc_span(c, cpu, dst, bytes, 1, &sp);	/* the write stream */
	return charge_span(c, cpu, &sp, now);
}

int64_t vs_coherence_touch_frame(struct vs_coherence *c, unsigned int cpu,
				 const void *addr, uint64_t bytes, int write)
{
	struct span sp = { 0, 0, 0 };

	if (!c || cpu >= c->nr || !addr || !bytes)
		return -EINVAL;
	if (bytes > TOUCH_MAX)
		return -E2BIG;
	llc_span(c, cpu, addr, bytes, write, &sp);
	c->stats[cpu].llc_misses += sp.misses;
	return (int64_t)sp.misses;
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
		out->llc_misses += s->llc_misses;
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
