/* SPDX-License-Identifier: MIT */
/*
 * vmsim/vcpu_profile.h - machine profiles: what the virtual CPUs cost.
 *
 * A profile describes one machine to the cost model (vmsim/vcpu_cost.h):
 * its topology, how Linux numbers its CPUs, what a cache line costs by
 * topology distance, and the explicit charges of work that does not pass
 * through vmsim/atomic.h (clearing a page, a fault's entry and exit, a
 * system call, a futex wake-up, a context switch).  Every cost is in CPU
 * cycles at the profile's clock; docs/cost-model.md ("Machine profiles") gives
 * each value of the shipped profiles with its source.
 *
 * The text format is one "key = value" per line; "#" starts a comment
 * that runs to the end of the line; blank lines are ignored.  Every key
 * is required once, except "numbering" (default socket-major),
 * "clear_cached_bytes_per_cycle" and "llc_kib" (default 0, no cache),
 * "prefetch_streams" (default 0, no prefetcher), "prefetch_distance"
 * (default 1), "handoff_same_socket" and "handoff_other_socket" (default:
 * the transfer's latency plus rmw) and "ipi" (default: other_socket plus
 * fault_entry):
 *
 *	name = ivb-ep-2x10x2
 *	ghz = 2.8
 *	sockets = 2
 *	cores_per_socket = 10
 *	threads_per_core = 2
 *	numbering = socket-major
 *	hit = 4
 *	...
 *
 * Profiles are self-contained: this file and vcpu/profile.c depend
 * on libc alone.
 */
#ifndef VMSIM_VCPU_PROFILE_H
#define VMSIM_VCPU_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "vcpu_annotate.h"	/* VS_VCPU_MAX: most CPUs a profile can have */

#define VS_PROFILE_NAME_MAX 63	/* longest profile name, in bytes */
#define VS_PREFETCH_STREAMS_MAX 32	/* most streams a prefetcher tracks */
#define VS_PREFETCH_DISTANCE_MAX 32	/* most lines it runs ahead */

/**
 * enum vs_cpu_numbering - how Linux numbers the CPUs of a machine
 * @VS_NUMBERING_SOCKET_MAJOR: the first hardware thread of every core
 *	first, socket by socket, then the second threads in the same
 *	order: CPU i is thread i / (sockets * cores), socket (i % (sockets
 *	* cores)) / cores, core i % cores ("socket-major"; the order of
 *	Intel's own server boards, and of Linux on a one-socket machine)
 * @VS_NUMBERING_INTERLEAVED: the first threads of every core first,
 *	alternating between sockets, then the second threads: CPU i is
 *	thread i / (sockets * cores), socket i % sockets, core (i % (sockets
 *	* cores)) / sockets ("interleaved"; the order of some other vendors'
 *	firmware)
 */
enum vs_cpu_numbering {
	VS_NUMBERING_SOCKET_MAJOR = 0,
	VS_NUMBERING_INTERLEAVED = 1,
};

/**
 * enum vs_cpu_distance - how far apart two CPUs are
 * @VS_DIST_SAME: the same CPU
 * @VS_DIST_SMT: two hardware threads of one core
 * @VS_DIST_SOCKET: two cores of one socket
 * @VS_DIST_REMOTE: two sockets
 */
enum vs_cpu_distance {
	VS_DIST_SAME = 0,
	VS_DIST_SMT = 1,
	VS_DIST_SOCKET = 2,
	VS_DIST_REMOTE = 3,
};

/**
 * struct vs_vcpu_profile - one machine, as the cost model sees it
 * @name: the profile's name (key "name")
 * @ghz: the clock that converts cycles to time, GHz (key "ghz")
 * @sockets: sockets (key "sockets")
 * @cores_per_socket: cores in each socket (key "cores_per_socket")
 * @threads_per_core: hardware threads in each core (key
 *	"threads_per_core")
 * @nr_cpus: sockets * cores_per_socket * threads_per_core, at most
 *	VS_VCPU_MAX (computed)
 * @numbering: how Linux numbers the CPUs (key "numbering":
 *	"socket-major" or "interleaved")
 * @hit: an access to a line this CPU holds (key "hit")
 * @smt_sibling: a line moving from the other hardware thread of the core
 *	(key "smt_sibling")
 * @same_socket: a line moving from another core of the socket (key
 *	"same_socket")
 * @other_socket: a line moving from another socket (key "other_socket")
 * @memory: a line no cache holds, from memory (key "memory")
 * @rmw: what a locked read-modify-write adds to the access (key "rmw")
 * @fence: a full memory barrier (key "fence")
 * @pause: one vs_cpu_relax(), the PAUSE instruction (key "pause")
 * @clear_core_mbpc: bytes one core clears per cycle, in thousandths
 *	(key "clear_core_bytes_per_cycle", a decimal number)
 * @clear_socket_mbpc: bytes a socket's memory takes per cycle while its
 *	cores clear pages, in thousandths, shared by the cores clearing at
 *	the moment (key "clear_socket_bytes_per_cycle", a decimal number)
 * @clear_cached_mbpc: bytes one core clears per cycle when the page is
 *	still in its socket's last-level cache, in thousandths (optional key
 *	"clear_cached_bytes_per_cycle"; 0: every clear goes to memory)
 * @llc_kib: the last-level cache of a socket, in KiB (optional key
 *	"llc_kib"; 0: every clear goes to memory)
 * @prefetch_streams: how many 4 KiB pages a core's hardware prefetcher
 *	follows a walk in at once, at most VS_PREFETCH_STREAMS_MAX (optional
 *	key "prefetch_streams"; 0: no prefetcher)
 * @prefetch_distance: how many lines ahead of a walk that prefetcher
 *	runs, 1 to VS_PREFETCH_DISTANCE_MAX (optional key
 *	"prefetch_distance"; default 1; unused without streams)
 * @fault_entry: a page fault exception, up to the fault handler (key
 *	"fault_entry")
 * @fault_exit: the return from a page fault to the faulting instruction
 *	(key "fault_exit")
 * @syscall: a system call's entry and exit (key "syscall")
 * @futex_wake: the waker's cost of a futex wake-up that wakes a sleeper
 *	(key "futex_wake")
 * @wake_latency: from a futex wake-up to the woken thread running again
 *	(key "wake_latency")
 * @context_switch: switching a CPU from one thread to another (key
 *	"context_switch")
 * @handoff_same_socket: the interval at which a line that cores of one
 *	socket queue for is handed from one to the next, each doing a
 *	locked read-modify-write: from one's RMW done to the next's (key
 *	"handoff_same_socket", optional; default same_socket + rmw, a queue
 *	that does not pipeline)
 * @handoff_other_socket: the same between sockets (key
 *	"handoff_other_socket", optional; default other_socket + rmw)
 * @ipi: from one CPU sending an inter-processor interrupt to the
 *	handler starting on the target CPU (key "ipi", optional; default
 *	other_socket + fault_entry: a message between sockets and an
 *	interrupt's entry).  The cost model charges nothing for it; code
 *	that models an IPI (a TLB shootdown) charges it: the sender about
 *	twice @ipi for the round trip, plus the sending
 *
 * Every cost is in cycles of a clock of @ghz GHz.
 */
struct vs_vcpu_profile {
	char name[VS_PROFILE_NAME_MAX + 1];
	double ghz;
	unsigned int sockets;
	unsigned int cores_per_socket;
	unsigned int threads_per_core;
	unsigned int nr_cpus;
	enum vs_cpu_numbering numbering;
	uint32_t hit;
	uint32_t smt_sibling;
	uint32_t same_socket;
	uint32_t other_socket;
	uint32_t memory;
	uint32_t rmw;
	uint32_t fence;
	uint32_t pause;
	uint32_t clear_core_mbpc;
	uint32_t clear_socket_mbpc;
	uint32_t clear_cached_mbpc;
	uint32_t llc_kib;
	uint32_t prefetch_streams;
	uint32_t prefetch_distance;
	uint32_t fault_entry;
	uint32_t fault_exit;
	uint32_t syscall;
	uint32_t futex_wake;
	uint32_t wake_latency;
	uint32_t context_switch;
	uint32_t handoff_same_socket;
	uint32_t handoff_other_socket;
	uint32_t ipi;
};

/**
 * struct vs_cpu_place - where a CPU sits in its machine
 * @socket: its socket, 0 to sockets - 1
 * @core: its core within the socket, 0 to cores_per_socket - 1
 * @thread: its hardware thread within the core, 0 to threads_per_core - 1
 */
struct vs_cpu_place {
	unsigned int socket;
	unsigned int core;
	unsigned int thread;
};

/**
 * vs_vcpu_profile_parse - read a profile from its text
 * @p: receives the profile (unchanged on error)
 * @text: the profile's text, NUL-terminated
 * @err: receives a one-line message on error (may be NULL)
 * @errlen: the size of @err
 *
 * The message names the line and the key: "line 7: unknown key 'hti'",
 * "line 9: hit: 'x12' is not a whole number", "missing key 'memory'".
 *
 * Context: any.
 * Return: 0, or -EINVAL for a NULL argument or a bad profile.
 */
VS_EXTERN int vs_vcpu_profile_parse(struct vs_vcpu_profile *p,
				    const char *text, char *err,
				    size_t errlen);

/**
 * vs_vcpu_profile_load - read a profile by name or from a file
 * @p: receives the profile (unchanged on error)
 * @name_or_path: a path when it contains a '/' or ends in ".profile",
 *	read as is; otherwise a
 *	profile name, NAME.profile looked up in order in each directory of
 *	$VMSIM_PROFILE_PATH (colon-separated), in share/vmsim/profiles
 *	beside the installed library or tool (found from where it is
 *	loaded, so a prefix may be moved), in the source tree's profiles/
 *	(so that binaries in a build directory find them) and in the
 *	DATADIR/vmsim/profiles of the configured prefix
 * @err: receives a one-line message on error (may be NULL)
 * @errlen: the size of @err
 *
 * Context: any; reads files.
 * Return: 0; -EINVAL for a NULL argument, a bad name or a bad profile;
 * -ENOENT when no directory has the profile; -EFBIG for a file over
 * 64 KiB; another negative errno when the file cannot be read.
 */
VS_EXTERN int vs_vcpu_profile_load(struct vs_vcpu_profile *p,
				   const char *name_or_path, char *err,
				   size_t errlen);

/**
 * vs_vcpu_cpu_place - where CPU @cpu sits, in Linux's numbering
 * @p: the profile
 * @cpu: the CPU, 0 to nr_cpus - 1
 * @out: receives its socket, core and thread
 *
 * Context: any.
 * Return: 0, or -EINVAL for a NULL argument or a CPU out of range.
 */
VS_EXTERN int vs_vcpu_cpu_place(const struct vs_vcpu_profile *p,
				unsigned int cpu, struct vs_cpu_place *out);

/**
 * vs_vcpu_cpu_distance - how far apart CPUs @a and @b are
 * @p: the profile
 * @a: a CPU, 0 to nr_cpus - 1
 * @b: a CPU, 0 to nr_cpus - 1
 *
 * Context: any.
 * Return: VS_DIST_SAME (0), VS_DIST_SMT (1), VS_DIST_SOCKET (2) or
 * VS_DIST_REMOTE (3); -EINVAL for a NULL profile or a CPU out of range.
 */
VS_EXTERN int vs_vcpu_cpu_distance(const struct vs_vcpu_profile *p,
				   unsigned int a, unsigned int b);

/**
 * vs_vcpu_profile_latency - the cost of a line transfer over @dist
 * @p: the profile
 * @dist: a distance (VS_DIST_SAME gives the hit cost)
 *
 * Context: any.
 * Return: the cycles; 0 for a NULL profile or a bad distance.
 */
VS_EXTERN uint32_t vs_vcpu_profile_latency(const struct vs_vcpu_profile *p,
					   enum vs_cpu_distance dist);

#endif /* VMSIM_VCPU_PROFILE_H */
