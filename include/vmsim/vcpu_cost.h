/* SPDX-License-Identifier: MIT */
/*
 * vmsim/vcpu_cost.h - the cache-coherence cost model of the virtual CPUs.
 *
 * A directory of 64-byte lines, MESI-like, over the CPUs of a machine
 * profile (vmsim/vcpu_profile.h).  Each line has an owner (one CPU holding
 * it exclusive or modified) or a set of sharers, and the virtual time at
 * which its current transfer completes.  vs_coherence_access() charges
 * one access at virtual time @now:
 *
 * - a CPU that holds the line (its owner, or a sharer for a load) pays
 *   the profile's hit, at once;
 * - otherwise the line moves: a load from the owner, else from the
 *   nearest sharer, else from memory; a store or a read-modify-write
 *   from the owner and the sharers, invalidating them all and paying the
 *   farthest one (from memory when no cache holds the line).  The cost is
 *   the profile's latency for that topology distance;
 * - a read-modify-write adds the profile's rmw, hit or not;
 * - a transfer starts at max(@now, the line's busy-until) and the line is
 *   busy until it ends, so that requests for a hot line queue behind
 *   each other: contention is not a formula, it comes out of the queue;
 *   a queued read-modify-write is handed the line at the profile's
 *   handoff interval (handoff_same_socket, handoff_other_socket) rather
 *   than its latency;
 * - a store that misses costs the CPU a hit (x86-64's store buffer) while
 *   its line moves, after waiting for its turn if others are queued for
 *   the line; a fence or read-modify-write first waits until the CPU's
 *   earlier stores have their lines;
 * - with the profile's prefetch_streams, a miss that continues a walk
 *   (misses on neighbouring lines of one 4 KiB page, in one direction)
 *   was requested by the hardware prefetcher at an earlier miss of the
 *   walk, up to prefetch_distance misses back (fewer at the start of a
 *   walk, as the prefetcher asks for two lines a miss until it is that
 *   far ahead): its transfer starts then, for ownership if that miss
 *   was for ownership.  A request made before the line last moved or
 *   was written does not count, and a later miss of the walk asks
 *   again.  A walk over other CPUs' lines pays the first two lines of
 *   each page in full, and then each line's transfer less the time
 *   since its request.
 *
 * A load that finds no copy anywhere makes its CPU the owner (the E state
 * of MESI), so a private line pays memory once and hits afterwards.
 *
 * Page clears and copies are charged by bandwidth, and each socket's
 * last-level cache (the profile's llc_kib) holds the lines of the page
 * frames its CPUs touched last, by clears, copies and
 * vs_coherence_touch_frame(): an LRU list of 4 KiB frames.  A line that
 * cache holds is cleared at the cached rate; the others go to memory and
 * count, with the transfers from another socket or memory, as perf's
 * cache-misses (struct vs_coherence_stats, @llc_misses).
 *
 * Everything is a function of the sequence of calls: lines are told
 * apart by address but nothing depends on the address's value (the hash
 * table's layout is invisible) beyond which lines share a 4 KiB page (the
 * prefetcher's streams stop at page boundaries, and ASLR keeps an
 * address's offset in its page), so the same calls give the same figures,
 * bit for bit, in any process.  The model allocates nothing from the
 * heap after vs_coherence_create(): a name or a new line never moves
 * what the code it measures allocates next (which objects share a line).
 * The model knows nothing of the engine that calls it; one machine's
 * directory is used by one thread at a time.
 */
#ifndef VMSIM_VCPU_COST_H
#define VMSIM_VCPU_COST_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "vcpu_profile.h"

#define VS_COHERENCE_LINE 64	/* bytes in a line of the directory */
#define VS_COHERENCE_ALL (~0u)	/* "every vCPU" for vs_coherence_stats() */

struct vs_coherence;

/**
 * enum vs_access - what an access does to its line
 * @VS_ACCESS_LOAD: a load
 * @VS_ACCESS_STORE: a store
 * @VS_ACCESS_RMW: a locked read-modify-write (exchange, compare-and-swap,
 *	fetch-and-op)
 * @VS_ACCESS_FENCE: a full memory barrier; touches no line (the address
 *	is ignored and may be NULL)
 */
enum vs_access {
	VS_ACCESS_LOAD = 0,
	VS_ACCESS_STORE = 1,
	VS_ACCESS_RMW = 2,
	VS_ACCESS_FENCE = 3,
};

/**
 * enum vs_xfer_source - where a transferred line came from
 * @VS_XFER_SMT: the other hardware thread of the same core
 * @VS_XFER_SOCKET: another core of the same socket
 * @VS_XFER_REMOTE: another socket
 * @VS_XFER_MEMORY: memory (no cache held the line)
 * @VS_XFER_NR: the number of sources
 */
enum vs_xfer_source {
	VS_XFER_SMT = 0,
	VS_XFER_SOCKET = 1,
	VS_XFER_REMOTE = 2,
	VS_XFER_MEMORY = 3,
	VS_XFER_NR = 4,
};

/**
 * struct vs_coherence_stats - what the model charged one vCPU, or all
 * @cycles: every cycle returned by vs_coherence_access() and the charge
 *	functions, waits included
 * @wait_cycles: the part of @cycles spent queued behind another transfer
 *	of the same line
 * @accesses: vs_coherence_access() calls, fences included
 * @hits: accesses to a line the vCPU held
 * @transfers: accesses that moved a line (the sum of @by_source)
 * @by_source: @transfers by where the line came from (enum
 *	vs_xfer_source)
 * @prefetched: of @transfers, those the prefetcher asked for ahead of
 *	the access (the profile's prefetch_streams)
 * @invalidations: copies invalidated by this vCPU's stores and RMWs,
 *	and by its loads that the prefetcher took for ownership
 * @rmws: read-modify-writes
 * @fences: fences
 * @drain_cycles: the part of @cycles that fences and RMWs waited for
 *	the vCPU's earlier store misses (its store buffer) to complete
 * @clears: page clears and copies charged
 * @cached_clears: of @clears, those whose every line was in the
 *	last-level cache of the vCPU's socket
 * @clear_bytes: bytes cleared (a copy counts its bytes twice)
 * @clear_cycles: cycles charged for them
 * @llc_misses: what perf's generic cache-misses event counts on Intel
 *	(LONGEST_LAT_CACHE.MISS, demand requests that miss the L3): the
 *	transfers from another socket or from memory that the prefetcher
 *	did not ask for, and each 64-byte line of a clear, a copy (source
 *	and destination) or vs_coherence_touch_frame() that the L3 of the
 *	vCPU's socket did not hold (docs/cost-model.md says what of it is
 *	an estimate)
 */
struct vs_coherence_stats {
	uint64_t cycles;
	uint64_t wait_cycles;
	uint64_t accesses;
	uint64_t hits;
	uint64_t transfers;
	uint64_t by_source[VS_XFER_NR];
	uint64_t prefetched;
	uint64_t invalidations;
	uint64_t rmws;
	uint64_t fences;
	uint64_t drain_cycles;
	uint64_t clears;
	uint64_t cached_clears;
	uint64_t clear_bytes;
	uint64_t clear_cycles;
	uint64_t llc_misses;
};

/**
 * struct vs_coherence_hot - one of the most contended lines
 * @name: the name given to a range holding the line by
 *	vs_coherence_name(), or NULL; valid until the directory is
 *	destroyed
 * @offset: the line's offset in bytes from the line holding the start of
 *	that range, a multiple of 64 whatever the range's alignment (0 when
 *	unnamed)
 * @transfers: times the line moved to a vCPU
 * @rmws: read-modify-writes on it
 * @wait_cycles: cycles vCPUs spent queued behind its transfers
 * @first_touch: the order of its first access: 1 for the first line ever
 *	accessed, 2 for the next new one, ...
 * @addr: the line's address; for debugging only, it differs between runs
 */
struct vs_coherence_hot {
	const char *name;
	uint64_t offset;
	uint64_t transfers;
	uint64_t rmws;
	uint64_t wait_cycles;
	uint64_t first_touch;
	const void *addr;
};

/**
 * struct vs_coherence_named - what the accesses to the lines of one name
 *	cost, over every vCPU
 * @name: a name given by vs_coherence_name(), or NULL for the lines never
 *	named; valid until the directory is destroyed
 * @cycles: the sum of what vs_coherence_access() returned for accesses to
 *	those lines, queue waits included
 * @wait_cycles: the part of @cycles spent queued behind another transfer
 *	of the same line
 * @transfers: accesses that moved one of those lines to a vCPU
 * @rmws: read-modify-writes on them
 * @accesses: loads, stores and read-modify-writes of them (fences touch
 *	no line and count under no name)
 *
 * A line counts under the name it had at the access: renaming a line
 * moves its later accesses, not its past ones.
 */
struct vs_coherence_named {
	const char *name;
	uint64_t cycles;
	uint64_t wait_cycles;
	uint64_t transfers;
	uint64_t rmws;
	uint64_t accesses;
};

/**
 * vs_coherence_create - a directory for @nr_vcpus vCPUs of profile @p
 * @c: receives the directory
 * @p: the machine profile (copied); vCPU i is CPU i of the profile
 * @nr_vcpus: 1 to @p->nr_cpus
 *
 * Context: any; allocates.
 * Return: 0; -EINVAL for a NULL argument, no vCPU, more vCPUs than the
 * profile has CPUs, or a prefetcher out of range (more streams than
 * VS_PREFETCH_STREAMS_MAX; with streams, a distance of 0 or more than
 * VS_PREFETCH_DISTANCE_MAX); -ENOMEM.
 */
VS_EXTERN int vs_coherence_create(struct vs_coherence **c,
				  const struct vs_vcpu_profile *p,
				  unsigned int nr_vcpus);

/**
 * vs_coherence_destroy - free @c and its names
 * @c: the directory, or NULL
 *
 * Context: no other call on @c is running or follows.
 */
VS_EXTERN void vs_coherence_destroy(struct vs_coherence *c);

/**
 * vs_coherence_profile - the profile @c charges by
 * @c: the directory
 *
 * Context: any.
 * Return: @c's copy of the profile.
 */
VS_EXTERN const struct vs_vcpu_profile *
vs_coherence_profile(const struct vs_coherence *c);

/**
 * vs_coherence_access - charge vCPU @cpu's access to the line of @addr
 * @c: the directory
 * @cpu: the vCPU, 0 to nr_vcpus - 1
 * @addr: any byte of the line (ignored for VS_ACCESS_FENCE)
 * @kind: the access
 * @now: @cpu's virtual time, in cycles
 *
 * Updates the line's owner, sharers and busy-until as described above,
 * and the counters.  The only allocation is the directory's growth.
 * A bad @cpu or @kind is a caller's bug: it is charged nothing (0).
 *
 * Context: one call on @c at a time.
 * Return: the cycles the access takes from @now, a wait in the line's
 * queue (or for the store buffer) included.
 */
VS_EXTERN uint64_t vs_coherence_access(struct vs_coherence *c,
				       unsigned int cpu, const void *addr,
				       enum vs_access kind, uint64_t now);

/**
 * vs_coherence_access_lead - vs_coherence_access(), and when the access
 * takes effect
 * @c: the directory
 * @cpu: the vCPU, 0 to nr_vcpus - 1
 * @addr: the address
 * @kind: load, store, read-modify-write or fence
 * @now: the vCPU's clock
 * @lead: receives the cycles from @now to the moment the line is the
 *	caller's to read or change (0 for a hit or a store; for a miss
 *	queued behind another transfer, the end of that one plus the time
 *	its receiver keeps the line; for a fence or an RMW, the wait for
 *	the vCPU's earlier stores comes first); may be NULL
 *
 * The engine runs every vCPU whose clock is earlier than @now + @lead
 * before the access itself, so that it sees what they did.
 * Context: as vs_coherence_access().
 * Return: the cost, as vs_coherence_access(); @lead is at most it.
 */
VS_EXTERN uint64_t vs_coherence_access_lead(struct vs_coherence *c,
					    unsigned int cpu, const void *addr,
					    enum vs_access kind, uint64_t now,
					    uint64_t *lead);

/**
 * vs_coherence_charge_clear - charge vCPU @cpu's clearing of @bytes at @addr
 * @c: the directory
 * @cpu: the vCPU
 * @addr: the first byte (a page); NULL: unknown, the bytes go to memory
 * @bytes: how many bytes it clears (a page: 4096)
 * @now: @cpu's virtual time, in cycles
 *
 * Each socket's last-level cache (the profile's llc_kib, with
 * clear_cached_bytes_per_cycle) holds the 64-byte lines of the page
 * frames its vCPUs touched last: clears, both sides of copies and
 * vs_coherence_touch_frame(), an LRU list of 4 KiB frames by the bytes
 * of their lines.  The lines of the range that the cache of @cpu's
 * socket holds go at the profile's cached rate; the others go to
 * memory: at the profile's per-core rate, or at the socket's memory rate
 * divided by the number of vCPUs of that socket clearing to memory at
 * @now (this one included), whichever is slower.  The clear occupies its
 * share until it ends; clears already under way keep the rate they
 * started with.  Afterwards the range's frames are the socket's most
 * recently used, and the other sockets' copies of its lines are gone (a
 * write).  Calls are expected in nondecreasing @now per socket, as an
 * engine that runs the earliest vCPU first makes them.
 *
 * Context: one call on @c at a time; may grow the frame table, off the
 * heap.
 * Return: the cycles the clear takes from @now; 0 for a bad @cpu or no
 * bytes.
 */
VS_EXTERN uint64_t vs_coherence_charge_clear(struct vs_coherence *c,
					     unsigned int cpu, const void *addr,
					     uint64_t bytes, uint64_t now);

/**
 * vs_coherence_charge_copy - charge vCPU @cpu's copy of @bytes from @src
 * to @dst
 * @c: the directory
 * @cpu: the vCPU
 * @dst: the first byte written (a page); NULL: unknown, not cached
 * @src: the first byte read; NULL: unknown, not cached
 * @bytes: how many bytes it copies (a page: 4096)
 * @now: @cpu's virtual time, in cycles
 *
 * A copy reads and writes: it is charged as clearing 2 * @bytes, a read
 * stream of @src and a write stream of @dst, each line at the cached
 * rate when the last-level cache of @cpu's socket holds it and at the
 * memory rate otherwise (vs_coherence_charge_clear()).  Both ranges
 * become the socket's most recently used; the other sockets' copies of
 * @dst's lines are gone.
 *
 * Context: one call on @c at a time; may grow the frame table, off the
 * heap.
 * Return: the cycles the copy takes from @now; 0 for a bad @cpu or no
 * bytes.
 */
VS_EXTERN uint64_t vs_coherence_charge_copy(struct vs_coherence *c,
					    unsigned int cpu, const void *dst,
					    const void *src, uint64_t bytes,
					    uint64_t now);

/**
 * vs_coherence_touch_frame - vCPU @cpu reads or writes @bytes of a page
 * frame's data at @addr, other than by a clear or a copy
 * @c: the directory
 * @cpu: the vCPU
 * @addr: the first byte
 * @bytes: how many bytes, at most 1 GiB
 * @write: nonzero for a write (the other sockets' copies of those lines
 *	are gone)
 *
 * Records the touch in the last-level cache of @cpu's socket, as a clear
 * does, and counts the lines it did not hold in @cpu's llc_misses.  It
 * charges no cycles: the caller charges what it stands for.
 *
 * Context: one call on @c at a time; may grow the frame table, off the
 * heap.
 * Return: how many 64-byte lines of the range the cache did not hold
 * (all of them without llc_kib in the profile); -EINVAL for a NULL @c or
 * @addr, a bad @cpu or no bytes; -E2BIG for more than 1 GiB.
 */
VS_EXTERN int64_t vs_coherence_touch_frame(struct vs_coherence *c,
					   unsigned int cpu, const void *addr,
					   uint64_t bytes, int write);

/**
 * vs_coherence_name - name the lines of [@addr, @addr + @len)
 * @c: the directory
 * @addr: the start of the range
 * @len: its length in bytes, at most 64 MiB
 * @name: the name, copied ("mmap_lock", "PTL of the PMD table at ...");
 *	it should not contain an address if output is to be compared
 *	between runs
 *
 * Each line of the range gets a directory entry (touched or not, which
 * changes no figure) carrying the name; naming a line again renames it.
 * A name is copied once however many ranges carry it, and the copy and
 * the entries are allocated off the heap (mmap), so that naming changes
 * nothing the code being measured allocates: naming is neutral.
 *
 * Context: one call on @c at a time; allocates, off the heap.
 * Return: 0; -EINVAL for a NULL argument, an empty name or no bytes;
 * -E2BIG for a range over 64 MiB; -ENOMEM.
 */
VS_EXTERN int vs_coherence_name(struct vs_coherence *c, const void *addr,
				size_t len, const char *name);

/**
 * vs_coherence_top - the @n most contended lines
 * @c: the directory
 * @out: receives up to @n lines, most transfers first; ties go to the
 *	named line, then by name and offset, then by first touch
 * @n: the size of @out
 *
 * Context: one call on @c at a time.
 * Return: the number of lines written (at most @n, at most the lines
 * ever accessed); -EINVAL for a NULL argument.
 */
VS_EXTERN int vs_coherence_top(const struct vs_coherence *c,
			       struct vs_coherence_hot *out, unsigned int n);

/**
 * vs_coherence_by_name - the cost of the accesses, name by name
 * @c: the directory
 * @out: receives up to @n names, most cycles first; ties by name, the
 *	unnamed lines (NULL) last - never by address, so that the order is
 *	the same in every run
 * @n: the size of @out
 *
 * Lists only the names with at least one access since the directory was
 * created or its counters reset.
 *
 * Context: one call on @c at a time.
 * Return: the number of names written (at most @n); -EINVAL for a NULL
 * @c, or a NULL @out with @n > 0.
 */
VS_EXTERN int vs_coherence_by_name(const struct vs_coherence *c,
				   struct vs_coherence_named *out,
				   unsigned int n);

/**
 * vs_coherence_stats - read the counters of vCPU @cpu, or of all
 * @c: the directory
 * @cpu: the vCPU, or VS_COHERENCE_ALL for the sums over every vCPU
 * @out: receives the counters
 *
 * Context: one call on @c at a time.
 * Return: 0, or -EINVAL for a NULL argument or a bad @cpu.
 */
VS_EXTERN int vs_coherence_stats(const struct vs_coherence *c,
				 unsigned int cpu,
				 struct vs_coherence_stats *out);

/**
 * vs_coherence_reset_stats - zero every counter, keeping the lines' state
 * @c: the directory
 *
 * Zeroes the per-vCPU counters, the per-line transfer, RMW and wait
 * counts and the per-name totals (after a warm-up, say); owners,
 * sharers, busy-until, names, first-touch order, the store buffers, the
 * clears' rates and the last-level caches' contents stay.
 *
 * Context: one call on @c at a time.
 */
VS_EXTERN void vs_coherence_reset_stats(struct vs_coherence *c);

#endif /* VMSIM_VCPU_COST_H */
