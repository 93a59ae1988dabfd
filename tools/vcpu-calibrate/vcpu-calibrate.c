/* SPDX-License-Identifier: MIT */
/*
 * vcpu-calibrate - measure this machine and write its profile for the
 * virtual CPUs' cost model, the `host` profile (docs/man/vcpu-calibrate.1).
 *
 *   vcpu-calibrate [--duration SECONDS] [--output FILE]
 *                  [--kernel-output FILE]
 *
 * The tick rate against CLOCK_MONOTONIC; the topology from sysfs; a line
 * passed between pairs of CPUs, by distance; a line that all threads
 * add to at once; a load that hits, a load from memory, an RMW, a fence;
 * clear_page bandwidth of a core and of a socket; a system call, a futex
 * wake-up, a context switch, a page fault and an inter-processor
 * interrupt; and the host kernel's own work on a fault and on
 * madvise(MADV_DONTNEED), which the profile gives in comments and
 * --kernel-output writes as a kernel profile (vmsim/kernel.h), checked
 * with vmsim's vs_kernel_parse() and vs_kernel_load() alike.  Each figure
 * is the median over batches of --duration in all,
 * in threads pinned with sched_setaffinity (calib_*.c).  Progress goes
 * to stderr, the profile ("key = value" lines, each after comments that
 * say how it was measured) to stdout or FILE.  No vmsim code in the
 * probes; the profile is checked with vmsim's own parser
 * (vmsim/vcpu_profile.h) before it is written, and one it refuses is a
 * bug of this tool: the parser's message, exit 1, nothing written.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* sched_setaffinity */
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_opts.h"
#include "bench_report.h"
#include "calib.h"
#include <vmsim/kernel.h>
#include <vmsim/vcpu_profile.h>

#ifndef BENCH_VERSION
#error "BENCH_VERSION: CMake passes the project's version"
#endif

#define MAX_PAIRS 32		/* pairs measured per distance, at most */
#define MIB (1024.0 * 1024.0)
#define LLC_GUESS (32ul << 20)	/* the LLC when sysfs does not say */
#define WALK_STEPS 7		/* walks of 1, 2, 4, ... 64 pages at once */
#define CLEAR_WINDOW (2ul << 20) /* the fault probe's window: 512 pages */

static const char *dist_key[CALIB_NR_DIST] = {
	"smt_sibling", "same_socket", "other_socket",
};

/* What the probes found, and what the comments say of how. */
struct result {
	double ghz, hit, memory, store, rmw, store_fence, syscall;
	double clear_core, clear_socket, clear_cached, fault_write, fault_read;
	double futex_wake, wake_latency, ctxsw, add, pause;
	int futex_samples, waker, sleeper, first, socket_cores;
	/* the chase over another CPU's lines: random, and up 1, 2, 4, ...
	 * pages at a time (calib_walk()); -1: no other CPU to write them */
	double walk_random, walk[WALK_STEPS];
	int walk_writer, streams, distance, walk_done;
	/* a line all threads add to: within the first CPU's socket (its
	 * allowed CPUs), and between it and another socket; 0: not
	 * measured.  How many threads each. */
	double handoff_socket, handoff_remote;
	int handoff_socket_threads, handoff_remote_cpu;
	/* an expedited membarrier's call on first, with ipi_cpu spinning;
	 * -1: not measured */
	double ipi_call;
	int ipi_cpu;
	size_t memory_bytes, clear_bytes, socket_clear_bytes, cached_bytes;
	/* the host kernel's work (calib_kernel()), and a clear over its
	 * window's 2 MiB, bytes per cycle */
	struct calib_kernel kern;
	double clear_window;
	/* per distance: the median, range, pairs measured and found */
	struct bench_range dist[CALIB_NR_DIST];
	int dist_done[CALIB_NR_DIST], dist_found[CALIB_NR_DIST];
};

static const char *output;	/* --output, or NULL: stdout */
static const char *kernel_output;	/* --kernel-output, or NULL: none */
static struct calib_topo topo;
static struct result res;

/* ---- the pairs --------------------------------------------------------- */

/* Every @stride-th allowed pair of distance @d, measured; or, with
 * @stride 0, only counted.  Return: the pairs of that distance. */
static int pairs_of(enum calib_dist d, int stride, double *v)
{
	int a, b, found = 0;
	double x;

	for (a = -1; (a = calib_first_allowed(&topo, a)) >= 0;) {
		for (b = a; (b = calib_first_allowed(&topo, b)) >= 0;) {
			if (calib_dist_of(&topo, a, b) != d)
				continue;
			if (stride && found % stride == 0) {
				x = calib_pingpong(a, b);
				calib_progress("%s cpu%d-cpu%d: %.1f cycles",
					       dist_key[d], a, b, x);
				v[res.dist_done[d]++] = x;
			}
			found++;
		}
	}
	return found;
}

static void measure_pairs(void)
{
	double v[MAX_PAIRS];
	int d, found, stride;

	for (d = 0; d < CALIB_NR_DIST; d++) {
		found = pairs_of(d, 0, NULL);
		res.dist_found[d] = found;
		if (!found)
			continue;
		stride = (found + MAX_PAIRS - 1) / MAX_PAIRS;
		pairs_of(d, stride, v);
		bench_range_of(v, (unsigned int)res.dist_done[d],
			       &res.dist[d]);
	}
}

/* ---- the other probes -------------------------------------------------- */

/* Memory the buffers may take: a quarter of what is free. */
static size_t free_bytes(void)
{
	long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || size <= 0)
		return 1ul << 30;
	return (size_t)pages * (size_t)size / 4;
}

/* @want, no more than @cap, in whole 2 MiB. */
static size_t buffer_size(size_t want, size_t cap)
{
	if (want > cap)
		want = cap;
	want &= ~((2ul << 20) - 1);
	return want < (2ul << 20) ? 2ul << 20 : want;
}

/* One allowed CPU per core of @cpu's socket; their number. */
static int socket_cores(int cpu, int *cpus)
{
	int c, i, nr = 0;
	bool seen;

	for (c = -1; (c = calib_first_allowed(&topo, c)) >= 0;) {
		if (topo.cpu[c].socket != topo.cpu[cpu].socket)
			continue;
		seen = false;
		for (i = 0; i < nr && !seen; i++)
			seen = topo.cpu[cpus[i]].core == topo.cpu[c].core;
		if (!seen)
			cpus[nr++] = c;
	}
	return nr;
}

/* The other CPU of a two-CPU probe (the futex's sleeper, the chase's
 * writer): another core of @waker's socket if there is one allowed, else
 * any other allowed CPU, else @waker. */
static int sleeper_for(int waker)
{
	int c, other = -1;

	for (c = -1; (c = calib_first_allowed(&topo, c)) >= 0;) {
		if (c == waker)
			continue;
		if (calib_dist_of(&topo, waker, c) == CALIB_SOCKET)
			return c;
		if (other < 0)
			other = c;
	}
	return other < 0 ? waker : other;
}

static void measure_cpu(void)
{
	size_t llc = topo.llc_bytes ? topo.llc_bytes : LLC_GUESS;
	int cpu = res.first;

	res.hit = calib_hit(cpu);
	calib_progress("hit: %.1f cycles", res.hit);
	/* After the hit probe: the core has left its idle clock. */
	res.add = calib_add(cpu);
	if (res.add > 0)
		calib_progress("a dependent add: %.2f cycles (the core at "
			       "%.2f GHz)", res.add, res.ghz / res.add);
	res.pause = calib_pause_cycles(cpu);
	res.store = calib_store(cpu);
	res.rmw = calib_rmw(cpu);
	calib_progress("rmw: %.1f, store: %.1f cycles", res.rmw, res.store);
	res.store_fence = calib_store_fence(cpu);
	calib_progress("store + fence: %.1f cycles", res.store_fence);
	res.memory_bytes = buffer_size(8 * llc < (256ul << 20) ? 256ul << 20
				       : 8 * llc, free_bytes());
	res.memory = calib_memory(cpu, res.memory_bytes);
	calib_progress("memory: %.1f cycles over %.0f MiB", res.memory,
		       res.memory_bytes / MIB);
}

static void measure_clear(void)
{
	size_t llc = topo.llc_bytes ? topo.llc_bytes : LLC_GUESS;
	int *cpus = calloc(CALIB_MAX_CPUS, sizeof(*cpus)), nr;

	if (!cpus)
		calib_die("out of memory");
	res.clear_bytes = buffer_size(4 * llc < (64ul << 20) ? 64ul << 20
				      : 4 * llc, free_bytes());
	res.clear_core = calib_clear(&res.first, 1, res.clear_bytes);
	calib_progress("clear_page, 1 core: %.2f bytes/cycle",
		       res.clear_core);
	res.cached_bytes = llc / 4;
	res.clear_cached = calib_clear(&res.first, 1, res.cached_bytes);
	calib_progress("clear_page, 1 core, cached: %.2f bytes/cycle",
		       res.clear_cached);
	nr = socket_cores(res.first, cpus);
	res.socket_cores = nr;
	res.socket_clear_bytes = buffer_size(4 * llc / (size_t)nr <
					     (8ul << 20) ? 8ul << 20
					     : 4 * llc / (size_t)nr,
					     free_bytes() / (size_t)nr);
	res.clear_socket = calib_clear(cpus, nr, res.socket_clear_bytes);
	calib_progress("clear_page, %d core(s) of socket %d: %.2f "
		       "bytes/cycle",
		       nr, topo.cpu[res.first].socket, res.clear_socket);
	free(cpus);
}

static void measure_kernel(void)
{
	int cpu = res.first;

	res.syscall = calib_syscall(cpu);
	calib_progress("syscall: %.0f cycles", res.syscall);
	res.fault_write = calib_fault(cpu, true);
	res.fault_read = calib_fault(cpu, false);
	calib_progress("fault: write %.0f, read (zero page) %.0f cycles",
		       res.fault_write, res.fault_read);
	res.waker = cpu;
	res.sleeper = sleeper_for(cpu);
	calib_futex(res.waker, res.sleeper, &res.futex_wake,
		    &res.wake_latency, &res.futex_samples);
	calib_progress("futex: wake %.0f, latency %.0f cycles (cpu%d wakes "
		       "cpu%d)", res.futex_wake, res.wake_latency, res.waker,
		       res.sleeper);
	res.ctxsw = calib_switch(cpu);
	calib_progress("context switch: %.0f cycles", res.ctxsw);
}

/*
 * How many walks the prefetcher follows at once: the most pages (1, 2,
 * 4, ... 64) walked at a time for which a chase over lines another core
 * wrote costs under half the random chase, and for every fewer too; the
 * key takes at most VS_PREFETCH_STREAMS_MAX of them.  How far ahead it
 * runs: once a walk is under way, a line's transfer is spread over the
 * lines in flight, the distance and itself, so the random cost over the
 * cost up one page, less one, is how many lines the streamer kept in
 * flight (1 to VS_PREFETCH_DISTANCE_MAX).
 */
static void measure_prefetch(void)
{
	double ahead;
	int k, pages;

	res.walk_writer = sleeper_for(res.first);
	if (res.walk_writer == res.first) {
		res.walk_writer = -1;
		return;
	}
	res.walk_random = calib_walk(res.first, res.walk_writer, 0);
	calib_progress("chase over cpu%d's lines, random: %.1f cycles a line",
		       res.walk_writer, res.walk_random);
	for (k = 0, pages = 1; k < WALK_STEPS; k++, pages *= 2) {
		res.walk[k] = calib_walk(res.first, res.walk_writer, pages);
		res.walk_done = k + 1;
		calib_progress("... up %d page(s) at a time: %.1f cycles a "
			       "line", pages, res.walk[k]);
		if (res.walk[k] >= res.walk_random / 2)
			break;
		if (pages <= VS_PREFETCH_STREAMS_MAX)
			res.streams = pages;
	}
	ahead = res.walk[0] > 0 ? res.walk_random / res.walk[0] - 1 :
		VS_PREFETCH_DISTANCE_MAX;
	if (!(ahead < VS_PREFETCH_DISTANCE_MAX))	/* NaN too */
		ahead = VS_PREFETCH_DISTANCE_MAX;
	res.distance = ahead < 1 ? 1 : (int)(ahead + 0.5);
}

/*
 * The interval at which a contended line is handed over: threads on
 * every allowed CPU of the first CPU's socket adding to one line; and a
 * thread there and one on the first allowed CPU of another socket.
 */
static void measure_handoff(void)
{
	int cpus[CALIB_MAX_CPUS], c, nr = 0;

	res.handoff_remote_cpu = -1;
	for (c = -1; (c = calib_first_allowed(&topo, c)) >= 0;) {
		if (topo.cpu[c].socket == topo.cpu[res.first].socket)
			cpus[nr++] = c;
		else if (res.handoff_remote_cpu < 0)
			res.handoff_remote_cpu = c;
	}
	res.handoff_socket_threads = nr;
	if (nr >= 2) {
		res.handoff_socket = calib_handoff(cpus, nr);
		calib_progress("a line %d threads add to: %.1f cycles a "
			       "handoff", nr, res.handoff_socket);
	}
	if (res.handoff_remote_cpu >= 0) {
		cpus[1] = res.handoff_remote_cpu;
		res.handoff_remote = calib_handoff(cpus, 2);
		calib_progress("... cpu%d and cpu%d, two sockets: %.1f cycles "
			       "a handoff", cpus[0], cpus[1],
			       res.handoff_remote);
	}
}

/*
 * An IPI: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) on the first CPU,
 * which interrupts the other CPU of a futex probe, running a thread of
 * this process, and waits for its handler.
 */
static void measure_ipi(void)
{
	res.ipi_cpu = sleeper_for(res.first);
	res.ipi_call = calib_ipi(res.first, res.ipi_cpu);
	if (res.ipi_call > 0)
		calib_progress("membarrier, expedited, to cpu%d: %.0f cycles",
			       res.ipi_cpu, res.ipi_call);
}

/*
 * The host kernel's own work, for a kernel profile: a write fault timed
 * alone and MADV_DONTNEED of 512, 34 and 1 pages on the first CPU
 * (calib_kernel()); and the clear inside such a fault: memset() of 4 KiB
 * pages over the fault probe's 2 MiB, the cache that fault's clear finds
 * (clear_cached cycles over a quarter of the LLC, which a virtual
 * machine's sysfs may make hundreds of MiB).
 */
static void measure_host_kernel(void)
{
	struct calib_kernel *k = &res.kern;

	res.clear_window = calib_clear(&res.first, 1, CLEAR_WINDOW);
	calib_progress("clear_page, 1 core, over 2 MiB: %.2f bytes/cycle",
		       res.clear_window);
	calib_kernel(res.first, k);
	calib_progress("the kernel: a fault alone %.0f cycles (%.0f less a "
		       "present page's %.0f); MADV_DONTNEED of %d pages %.0f, "
		       "of %d %.0f, of 1 untouched %.0f cycles a call",
		       k->fig[CALIB_K_FAULT] - k->fig[CALIB_K_STORE],
		       k->fig[CALIB_K_FAULT], k->fig[CALIB_K_STORE],
		       CALIB_ZAP_PAGES, k->fig[CALIB_K_ZAP_512],
		       CALIB_ZAP_FLUSH_PAGES, k->fig[CALIB_K_ZAP_34],
		       k->fig[CALIB_K_ZAP_1]);
}

/* ---- the profile ------------------------------------------------------- */

/* A comment: "# " lines of at most 76 columns, broken at spaces. */
static void comment(FILE *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void comment(FILE *f, const char *fmt, ...)
{
	char buf[1024], *s = buf, *cut;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	while (strlen(s) > 74) {
		for (cut = s + 74; cut > s && *cut != ' '; cut--)
			;
		if (cut == s)
			cut = strchr(s + 74, ' ');
		if (!cut)
			break;
		fprintf(f, "# %.*s\n", (int)(cut - s), s);
		s = cut + 1;
	}
	fprintf(f, "# %s\n", s);
}

/* A count of cycles: whole, never below 0. */
static double cycles(double v)
{
	return v < 0 ? 0 : v;
}

/* An interval of cycles: whole, at least 1 (the parser's least). */
static double interval(double v)
{
	return v < 1 ? 1 : v;
}

/* Where each allowed CPU sits, as many to a comment line as fit. */
static void print_numbering(FILE *f)
{
	char line[80] = "", item[40];
	int c;

	comment(f, "Linux numbering of the allowed CPUs, cpu: socket/core/"
		"thread (sysfs ids):");
	for (c = -1; (c = calib_first_allowed(&topo, c)) >= 0;) {
		snprintf(item, sizeof(item), "%d: %d/%d/%d", c,
			 topo.cpu[c].socket, topo.cpu[c].core,
			 topo.cpu[c].thread);
		if (*line && strlen(line) + strlen(item) + 2 > 74) {
			fprintf(f, "#   %s,\n", line);
			*line = '\0';
		}
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 "%s%s", *line ? ", " : "", item);
	}
	fprintf(f, "#   %s\n", line);
}

static void print_header(FILE *f)
{
	char cpu[128] = "unknown", line[256], date[32];
	struct utsname u;
	time_t now = time(NULL);
	FILE *info = fopen("/proc/cpuinfo", "r");

	while (info && fgets(line, sizeof(line), info))
		if (sscanf(line, "model name : %127[^\n]", cpu) == 1)
			break;
	if (info)
		fclose(info);
	if (uname(&u))
		strcpy(u.release, "?");
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	comment(f, "vmsim machine profile \"host\", measured by "
		"vcpu-calibrate %s on %s.", BENCH_VERSION, date);
	comment(f, "CPU: %s; Linux %s %s; --duration %.3g s per "
		"measurement.", cpu, u.release, u.machine,
		bench_std.duration_ms / 1000.0);
	comment(f, "Values are CPU cycles (see ghz) unless the key says "
		"otherwise; each is the median over timed batches, in "
		"threads pinned with sched_setaffinity(2).");
	print_numbering(f);
	fputs("name = host\n", f);
}

/* The key "numbering" where the online CPUs follow one of the parser's
 * two orders; else a comment (and the parser's default, socket-major). */
static void print_numbering_key(FILE *f)
{
	const char *numbering = calib_numbering(&topo);

	if (numbering) {
		comment(f, "numbering: where sysfs puts each online CPU is "
			"Linux's %s order (docs/cost-model.md).", numbering);
		fprintf(f, "numbering = %s\n", numbering);
	} else {
		comment(f, "numbering: left out, so the parser takes "
			"socket-major: the online CPUs follow neither "
			"socket-major nor interleaved order, or are not "
			"sockets x cores_per_socket x threads_per_core CPUs "
			"(some offline, or sockets of unequal size).");
	}
}

static void print_topology(FILE *f)
{
	comment(f, "ghz: %s.", calib_clock.how);
	fprintf(f, "ghz = %.3f\n", res.ghz);
	if (res.add > 0)
		comment(f, "The cores ran at about %.2f GHz during the probes: "
			"a chain of dependent adds took %.3f cycles an add.",
			res.ghz / res.add, res.add);
	if (topo.from_sysfs)
		comment(f, "sockets, cores_per_socket, threads_per_core: "
			"/sys/devices/system/cpu/cpu*/topology "
			"(physical_package_id, core_id, thread_siblings_list) "
			"of the %d online CPUs, %d of them allowed to this "
			"process.", topo.nr_online, topo.nr_allowed);
	else
		comment(f, "sockets, cores_per_socket, threads_per_core: no "
			"topology in sysfs: %d online CPUs taken for one "
			"socket of single-thread cores (an assumption).",
			topo.nr_online);
	fprintf(f, "sockets = %d\ncores_per_socket = %d\n"
		"threads_per_core = %d\n", topo.sockets, topo.cores_per_socket,
		topo.threads_per_core);
	print_numbering_key(f);
	comment(f, "hit: a load that hits L1: a chase of a pointer to "
		"itself, 8 loads a loop iteration.");
	fprintf(f, "hit = %.0f\n", cycles(res.hit));
}

/* The measured distance nearest @d: one step away, ties to the farther
 * (the dearer); -1 when no pair was measured. */
static int stand_in(int d)
{
	static const int order[CALIB_NR_DIST][CALIB_NR_DIST - 1] = {
		{ CALIB_SOCKET, CALIB_REMOTE },
		{ CALIB_REMOTE, CALIB_SMT },
		{ CALIB_SOCKET, CALIB_SMT },
	};
	int i;

	for (i = 0; i < CALIB_NR_DIST - 1; i++)
		if (res.dist_done[order[d][i]])
			return order[d][i];
	return -1;
}

static void print_distance(FILE *f, int d)
{
	static const char *what[CALIB_NR_DIST] = {
		"two threads of one core", "two cores of one socket",
		"two sockets",
	};
	int s = stand_in(d);

	if (res.dist_done[d]) {
		comment(f, "%s: one line transfer between %s: a quarter of "
			"the round trip of a line written in turn by a thread "
			"on each (each half is a store's invalidation and the "
			"other's load miss, two transfers to the model); "
			"median of %d pair%s (of %d), range %.1f to %.1f.",
			dist_key[d], what[d], res.dist_done[d],
			res.dist_done[d] > 1 ? "s" : "", res.dist_found[d],
			res.dist[d].min, res.dist[d].max);
		fprintf(f, "%s = %.0f\n", dist_key[d],
			cycles(res.dist[d].med));
	} else if (s >= 0) {
		comment(f, "%s: no pair of %s here: the nearest measured "
			"class, %s, stands in.", dist_key[d], what[d],
			dist_key[s]);
		fprintf(f, "%s = %.0f\n", dist_key[d],
			cycles(res.dist[s].med));
	} else {
		comment(f, "%s: no pair of allowed CPUs here, nothing to "
			"ping-pong between: the memory load stands in (an "
			"estimate).", dist_key[d]);
		fprintf(f, "%s = %.0f\n", dist_key[d], cycles(res.memory));
	}
}

/* memory, rmw, fence and pause, each with how it was measured. */
static void print_memory(FILE *f)
{
	char llc[64] = "LLC size unknown to sysfs, 32 MiB assumed";

	if (topo.llc_bytes)
		snprintf(llc, sizeof(llc), "LLC %.0f MiB",
			 topo.llc_bytes / MIB);
	comment(f, "memory: a load from memory: a pointer chase in random "
		"order over %.0f MiB (%s), transparent huge pages advised.",
		res.memory_bytes / MIB, llc);
	fprintf(f, "memory = %.0f\n", cycles(res.memory));
	comment(f, "rmw: an uncontended locked fetch-add on a private line "
		"(%.1f) minus a plain store to it (%.1f).", res.rmw,
		res.store);
	fprintf(f, "rmw = %.0f\n", cycles(res.rmw - res.store));
	comment(f, "fence: a store and a full fence (mfence on x86-64) "
		"(%.1f) minus the store alone.", res.store_fence);
	fprintf(f, "fence = %.0f\n", cycles(res.store_fence - res.store));
	if (res.pause > 0) {
		comment(f, "pause: one PAUSE instruction (vs_cpu_relax() on "
			"x86-64), 8 a loop iteration.");
		fprintf(f, "pause = %.0f\n", cycles(res.pause));
	} else {
		comment(f, "pause: not measured, no PAUSE instruction here "
			"(vs_cpu_relax() is a yield hint on arm64, a compiler "
			"barrier elsewhere): 1 cycle, an estimate.");
		fputs("pause = 1\n", f);
	}
}

/* Three decimals: the parser keeps thousandths of a byte per cycle. */
static void print_clear(FILE *f)
{
	comment(f, "clear_core_bytes_per_cycle: memset() of 4 KiB pages in "
		"a loop by one thread on cpu%d, cycling over %.0f MiB.",
		res.first, res.clear_bytes / MIB);
	fprintf(f, "clear_core_bytes_per_cycle = %.3f\n", res.clear_core);
	comment(f, "clear_socket_bytes_per_cycle: the same by %d thread%s at "
		"once, one per core of socket %d, each over %.0f MiB, summed.",
		res.socket_cores, res.socket_cores > 1 ? "s" : "",
		topo.cpu[res.first].socket, res.socket_clear_bytes / MIB);
	fprintf(f, "clear_socket_bytes_per_cycle = %.3f\n", res.clear_socket);
	comment(f, "clear_cached_bytes_per_cycle: the same as the core's, "
		"cycling over %.0f MiB, a quarter of the LLC: the pages stay "
		"in the cache.", res.cached_bytes / MIB);
	fprintf(f, "clear_cached_bytes_per_cycle = %.3f\n", res.clear_cached);
	comment(f, "llc_kib: %s.", topo.llc_bytes ?
		"the largest cache of the CPU's in sysfs" :
		"unknown to sysfs, 32 MiB assumed");
	fprintf(f, "llc_kib = %zu\n", (topo.llc_bytes ? topo.llc_bytes :
					LLC_GUESS) / 1024);
}

/*
 * prefetch_streams, with each chase's cost, and prefetch_distance where
 * there are streams; both left out on one CPU.
 */
static void print_prefetch(FILE *f)
{
	char steps[256] = "";
	size_t n = 0;
	int k;

	if (res.walk_writer < 0) {
		comment(f, "prefetch_streams: not measured, no second CPU to "
			"write the lines a chase reads: absent, no "
			"prefetcher.");
		return;
	}
	for (k = 0; k < res.walk_done && n < sizeof(steps); k++)
		n += (size_t)snprintf(steps + n, sizeof(steps) - n,
				      "%s%d: %.0f", k ? ", " : "", 1 << k,
				      res.walk[k]);
	comment(f, "prefetch_streams: a dependent chase on cpu%d over 256 "
		"KiB of lines cpu%d has just written costs %.0f cycles a line "
		"in random order; up N pages of 4 KiB at a time, a line of "
		"each in turn, N: cycles a line: %s.  The most N under half "
		"the random cost, for every smaller N too, at most %d.",
		res.first, res.walk_writer, res.walk_random, steps,
		VS_PREFETCH_STREAMS_MAX);
	fprintf(f, "prefetch_streams = %d\n", res.streams);
	if (!res.streams)
		return;
	comment(f, "prefetch_distance: the random cost over the cost up 1 "
		"page (%.0f / %.1f), less 1, at least 1, at most %d: once a "
		"walk is under way, a line's transfer is spread over the lines "
		"in flight, this many and itself (a lower bound where the "
		"chase waits on the cache rather than on the prefetcher; the "
		"model's own walks also pay each page's first lines in full).",
		res.walk_random, res.walk[0], VS_PREFETCH_DISTANCE_MAX);
	fprintf(f, "prefetch_distance = %d\n", res.distance);
}

/* handoff_same_socket and handoff_other_socket; one that was not
 * measured takes the other's value, and both are left out (the
 * parser's default) when neither was. */
static void print_handoff(FILE *f)
{
	double same = res.handoff_socket, other = res.handoff_remote;

	if (same <= 0 && other <= 0) {
		comment(f, "handoff_same_socket, handoff_other_socket: not "
			"measured, no two allowed CPUs to contend for a line: "
			"absent, so the parser takes each transfer's latency "
			"plus rmw.");
		return;
	}
	if (same > 0)
		comment(f, "handoff_same_socket: threads on the %d allowed "
			"CPUs of socket %d do atomic adds (lock xadd on x86-64) "
			"on one line at once: the time over the adds of all "
			"of them, the interval at which the line goes from "
			"one to the next when requests queue (a lower bound: "
			"an add that finds the line still there counts too).",
			res.handoff_socket_threads, topo.cpu[res.first].socket);
	else
		comment(f, "handoff_same_socket: no two allowed CPUs in one "
			"socket: the measured class, handoff_other_socket, "
			"stands in.");
	fprintf(f, "handoff_same_socket = %.0f\n",
		interval(same > 0 ? same : other));
	if (other > 0)
		comment(f, "handoff_other_socket: the same by two threads, on "
			"cpu%d and cpu%d of another socket.", res.first,
			res.handoff_remote_cpu);
	else
		comment(f, "handoff_other_socket: no allowed CPU on another "
			"socket: the measured class, handoff_same_socket, "
			"stands in.");
	fprintf(f, "handoff_other_socket = %.0f\n",
		interval(other > 0 ? other : same));
}

/* Each of fault_entry and fault_exit: half of a write fault less its
 * clear at the per-core rate, whole cycles. */
static double fault_half(void)
{
	double fault = cycles(res.fault_write - CALIB_PAGE / res.clear_core);

	return (double)(uint64_t)(fault / 2 + 0.5);
}

static void print_kernel(FILE *f)
{
	double clear = CALIB_PAGE / res.clear_core;

	comment(f, "fault_entry, fault_exit: a write fault on a fresh "
		"anonymous 4 KiB page (%.0f) minus clearing the page at the "
		"per-core rate (%.0f), split half and half: the measure "
		"cannot tell entry from exit, and it holds the kernel's page "
		"allocation and PTE update too.  A read fault that maps the "
		"zero page (no allocation, no clearing) costs %.0f.",
		res.fault_write, clear, res.fault_read);
	fprintf(f, "fault_entry = %.0f\nfault_exit = %.0f\n", fault_half(),
		fault_half());
	comment(f, "syscall: syscall(SYS_getppid), call to return.");
	fprintf(f, "syscall = %.0f\n", cycles(res.syscall));
	comment(f, "futex_wake: a FUTEX_WAKE on cpu%d that wakes one thread "
		"asleep in FUTEX_WAIT on cpu%d, call to return; median of %d "
		"wake-ups.", res.waker, res.sleeper, res.futex_samples);
	fprintf(f, "futex_wake = %.0f\n", cycles(res.futex_wake));
	if (res.waker != res.sleeper)
		comment(f, "wake_latency: from the start of that FUTEX_WAKE to "
			"the sleeper running again, its CPU idle for the 20 us "
			"before.");
	else
		comment(f, "wake_latency: from the start of that FUTEX_WAKE to "
			"the sleeper running again; one CPU: the two share it, "
			"so this holds a context switch.");
	fprintf(f, "wake_latency = %.0f\n", cycles(res.wake_latency));
	comment(f, "context_switch: two threads on cpu%d hand a token back "
		"and forth through a futex word; the round trip / 2, which "
		"holds one FUTEX_WAKE and one FUTEX_WAIT call.", res.first);
	fprintf(f, "context_switch = %.0f\n", cycles(res.ctxsw));
}

static void print_ipi(FILE *f)
{
	if (res.ipi_call <= 0) {
		comment(f, "ipi: not measured (%s): absent, so the parser "
			"takes other_socket + fault_entry.",
			res.ipi_cpu == res.first ? "one CPU, nothing to "
			"interrupt" : "the kernel refused membarrier's "
			"private expedited command");
		return;
	}
	comment(f, "ipi: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) on "
		"cpu%d while a thread of the process spins on cpu%d (%.0f): "
		"the call sends cpu%d an inter-processor interrupt and waits "
		"for its handler; less a system call (%.0f), halved: an "
		"estimate of one way, which counts the handler's short work "
		"and its answer as the way back.  In a virtual machine the "
		"IPI may exit to the hypervisor, and the figure is its as much "
		"as the hardware's.", res.first, res.ipi_cpu, res.ipi_call,
		res.ipi_cpu, res.syscall);
	fprintf(f, "ipi = %.0f\n", interval((res.ipi_call - res.syscall) / 2));
}

/*
 * struct host_kernel - what calib_kernel()'s figures come to, cycles
 * @fault:	a write fault on a fresh page alone, its timing less
 * @clear:	a 4 KiB clear over the fault probe's 2 MiB
 * @fault_less_clear: @fault - @clear: the kernel's fault, trap in
 * @entry_exit:	the profile's fault_entry + fault_exit
 * @fault_steps: @fault_less_clear - @entry_exit, at least 0: what a
 *		kernel profile's fault-path keys are left to hold
 * @zap_page:	a 512-page MADV_DONTNEED call / 512
 * @slope:	a page more zapped, from 34 to 512 pages
 * @flush:	a flushing call's fixed cost beyond a call that zaps
 *		nothing: the 34-page call, less 34 pages at @slope, less
 *		@call
 * @call:	MADV_DONTNEED of a page never touched, the call's fixed cost
 * @syscall_mm:	@call less the system call, at least 0
 * @release:	uname -r
 */
struct host_kernel {
	double fault, clear, fault_less_clear, entry_exit, fault_steps;
	double zap_page, slope, flush, call, syscall_mm;
	char release[sizeof(((struct utsname *)0)->release)];
};

static void host_kernel_of(struct host_kernel *h)
{
	const double *fig = res.kern.fig;
	struct utsname u;

	h->fault = cycles(fig[CALIB_K_FAULT] - fig[CALIB_K_STORE]);
	h->clear = CALIB_PAGE / res.clear_window;
	h->fault_less_clear = cycles(h->fault - h->clear);
	h->entry_exit = 2 * fault_half();
	h->fault_steps = cycles(h->fault_less_clear - h->entry_exit);
	h->zap_page = fig[CALIB_K_ZAP_512] / CALIB_ZAP_PAGES;
	h->slope = cycles((fig[CALIB_K_ZAP_512] - fig[CALIB_K_ZAP_34]) /
			  (CALIB_ZAP_PAGES - CALIB_ZAP_FLUSH_PAGES));
	h->call = fig[CALIB_K_ZAP_1];
	h->flush = cycles(fig[CALIB_K_ZAP_34] -
			  CALIB_ZAP_FLUSH_PAGES * h->slope - h->call);
	h->syscall_mm = cycles(h->call - res.syscall);
	if (uname(&u))
		strcpy(u.release, "?");
	strcpy(h->release, u.release);
}

/*
 * The host kernel's work, as comments: the profile has no keys for it;
 * a kernel profile (vmsim/kernel.h, --kernel-output) has.
 */
static void print_host_kernel(FILE *f)
{
	const struct calib_kernel *k = &res.kern;
	struct host_kernel h;

	host_kernel_of(&h);
	fputs("# The host kernel's work (for a kernel profile, "
	      "vmsim/kernel.h):\n", f);
	comment(f, "Linux %s.  One thread on cpu%d, over private anonymous "
		"4 KiB pages (huge pages advised against): a window of %d "
		"pages across two 2 MiB page tables whose other pages stay "
		"faulted, so that no zap empties a table (PT reclaim); the "
		"median over %d batches of %d rounds, each every measure once.",
		h.release, res.first, CALIB_ZAP_PAGES, k->batches,
		k->rounds / (k->batches ? k->batches : 1));
	comment(f, "A fault, %.0f: a store to a fresh page of the window, "
		"timed alone between two rdtsc (%.0f), less the same timed "
		"store to the page once present (%.0f); the mean of a batch's "
		"faults, which holds the pages a fault now and then moves from "
		"the buddy lists and to the LRU.", h.fault,
		k->fig[CALIB_K_FAULT], k->fig[CALIB_K_STORE]);
	comment(f, "A clear, %.0f: memset() of a 4 KiB page, cycling over 2 "
		"MiB as the window's faults do (%.3f bytes a cycle): the cache "
		"the fault's own clear finds.", h.clear, res.clear_window);
	comment(f, "The fault less the clear, %.0f: the kernel's fault, its "
		"trap and return in; the fault_entry + fault_exit above, %.0f, "
		"are the same work measured another way (a loop of faults, the "
		"clear at the per-core rate).", h.fault_less_clear,
		h.entry_exit);
	comment(f, "madvise(MADV_DONTNEED) of %d faulted pages: %.0f a page "
		"(%.0f a call, whole-TLB flush); of %d: %.0f a call (just "
		"over the %d-page ceiling of single-page flushes: a whole-TLB "
		"flush); of 1 page never touched: %.0f a call, no page table "
		"under it, nothing to zap or flush: the call's fixed cost (%.0f "
		"beyond syscall).  Every zap follows %d fresh faults elsewhere, "
		"so that the CPU's LRU batch holds none of its pages and it "
		"frees all of them.", CALIB_ZAP_PAGES, h.zap_page,
		k->fig[CALIB_K_ZAP_512], CALIB_ZAP_FLUSH_PAGES,
		k->fig[CALIB_K_ZAP_34], CALIB_ZAP_FLUSH_PAGES - 1, h.call,
		h.syscall_mm, CALIB_ZAP_SPILL_PAGES);
	comment(f, "A page zapped, released and freed: %.0f, the slope from "
		"%d to %d pages, (%.0f - %.0f) / %d.", h.slope,
		CALIB_ZAP_FLUSH_PAGES, CALIB_ZAP_PAGES, k->fig[CALIB_K_ZAP_512],
		k->fig[CALIB_K_ZAP_34], CALIB_ZAP_PAGES - CALIB_ZAP_FLUSH_PAGES);
	comment(f, "A flush's fixed cost: %.0f, the %d-page call less %d "
		"pages at the slope less the 1-page call: the whole-TLB flush "
		"and what a call that frees pages does once (the gather's "
		"batch page beyond its first few pages, the memcg uncharge, "
		"the per-CPU list's lock).", h.flush, CALIB_ZAP_FLUSH_PAGES,
		CALIB_ZAP_FLUSH_PAGES);
}

static void print_profile(FILE *f)
{
	int d;

	print_header(f);
	print_topology(f);
	for (d = 0; d < CALIB_NR_DIST; d++)
		print_distance(f, d);
	print_memory(f);
	print_handoff(f);
	print_clear(f);
	print_prefetch(f);
	print_kernel(f);
	print_ipi(f);
	print_host_kernel(f);
}

/* ---- the kernel profile (--kernel-output) ------------------------------ */

/* The cycles keys of a kernel profile, by enum vs_kernel_step. */
static const char *const step_key[VS_KSTEP_NR] = {
	[VS_KSTEP_FAULT] = "cycles_fault",
	[VS_KSTEP_ANON] = "cycles_anon",
	[VS_KSTEP_ALLOC] = "cycles_alloc",
	[VS_KSTEP_FREE] = "cycles_free",
	[VS_KSTEP_REFILL] = "cycles_pcp_refill",
	[VS_KSTEP_DRAIN] = "cycles_pcp_drain",
	[VS_KSTEP_LRU_ADD] = "cycles_lru_add",
	[VS_KSTEP_ZAP_PTE] = "cycles_zap_pte",
	[VS_KSTEP_RELEASE] = "cycles_release",
	[VS_KSTEP_TLB_LOCAL] = "cycles_tlb_local",
	[VS_KSTEP_TLB_PAGE] = "cycles_tlb_page",
	[VS_KSTEP_TLB_IPI] = "cycles_tlb_ipi",
	[VS_KSTEP_IPI_SEND] = "cycles_ipi_send",
	[VS_KSTEP_SYSCALL_MM] = "cycles_syscall_mm",
};

/* The steps a measured sum is spread over, in their ratios; -1 ends. */
static const int zap_steps[] = {
	VS_KSTEP_ZAP_PTE, VS_KSTEP_RELEASE, VS_KSTEP_FREE, VS_KSTEP_DRAIN, -1,
};
static const int fault_steps[] = {
	VS_KSTEP_FAULT, VS_KSTEP_ANON, VS_KSTEP_ALLOC, VS_KSTEP_LRU_ADD,
	VS_KSTEP_REFILL, -1,
};

/*
 * The built-in kernel profile to start from: the running kernel's
 * major.minor where one is built in, else VS_KERNEL_DEFAULT.  Return:
 * whether it is the running kernel's.
 */
static bool base_kernel(struct vs_kernel *k, const char *release)
{
	char version[VS_KERNEL_NAME_MAX + 1], err[256];
	unsigned int major, minor;

	if (sscanf(release, "%u.%u", &major, &minor) == 2) {
		snprintf(version, sizeof(version), "%u.%u", major, minor);
		if (!vs_kernel_load(k, version, NULL, 0))
			return true;
	}
	if (vs_kernel_load(k, VS_KERNEL_DEFAULT, err, sizeof(err)))
		calib_die("bug: the built-in kernel %s does not load: %s",
			  VS_KERNEL_DEFAULT, err);
	return false;
}

/* @k's cycles of @steps scaled to sum to @target, their ratios kept,
 * each to the whole cycle.  Return: the factor. */
static double scale_steps(struct vs_kernel *k, const int *steps,
			  double target)
{
	double sum = 0, factor;
	int i;

	for (i = 0; steps[i] >= 0; i++)
		sum += k->cycles[steps[i]];
	factor = sum > 0 ? target / sum : 0;
	for (i = 0; steps[i] >= 0; i++)
		k->cycles[steps[i]] = (uint32_t)(k->cycles[steps[i]] * factor +
						 0.5);
	return factor;
}

/* "key = value" of each cycles key of @steps, after a comment saying
 * what it was in @base and by what it was scaled. */
static void print_scaled(FILE *f, const struct vs_kernel *k,
			 const struct vs_kernel *base, const int *steps,
			 double factor)
{
	int i, s;

	for (i = 0; steps[i] >= 0; i++) {
		s = steps[i];
		comment(f, "%s: %s's %u x %.3f.", step_key[s], base->name,
			base->cycles[s], factor);
		fprintf(f, "%s = %u\n", step_key[s], k->cycles[s]);
	}
}

static void print_kernel_profile(FILE *f)
{
	struct vs_kernel base, k;
	struct host_kernel h;
	double zap_factor, fault_factor;
	bool own;
	int s;

	host_kernel_of(&h);
	own = base_kernel(&base, h.release);
	k = base;
	zap_factor = scale_steps(&k, zap_steps, h.slope);
	fault_factor = scale_steps(&k, fault_steps, h.fault_steps);
	k.cycles[VS_KSTEP_SYSCALL_MM] = (uint32_t)(h.syscall_mm + 0.5);
	comment(f, "vmsim kernel profile \"host\": Linux %s as vcpu-calibrate "
		"%s measured it on cpu%d (docs/man/vcpu-calibrate.1), in the "
		"cycles of its machine profile (ghz = %.3f).  Batch sizes and "
		"the cycles not measured are those of the built-in kernel %s, "
		"%s.", h.release, BENCH_VERSION, res.first, res.ghz, base.name,
		own ? "the running kernel's version" : "the default: no built-in "
		"profile has the running kernel's version");
	fputs("version = host\n", f);
	comment(f, "Batch sizes: %s's.", base.name);
	fprintf(f, "pcp_batch = %u\npcp_high = %u\npcp_high_fraction = %u\n"
		"lru_batch = %u\nlru_lock_batch = %u\n"
		"vmstat_threshold_max = %u\n"
		"rss = %s\nrss_threshold = %u\nmemcg = %s\n"
		"gather_local = %u\ngather_batch = %u\ngather_batches = %u\n"
		"tlb_single_page_ceiling = %u\ndontneed_drains_lru = %u\n",
		k.pcp_batch, k.pcp_high, k.pcp_high_fraction, k.lru_batch,
		k.lru_lock_batch,
		k.vmstat_threshold_max,
		k.rss == VS_RSS_PERCPU ? "percpu" : "task-events",
		k.rss_threshold,
		k.memcg == VS_MEMCG_DATA ? "memcg_data" : "page_cgroup",
		k.gather_local, k.gather_batch, k.gather_batches,
		k.tlb_single_page_ceiling, k.dontneed_drains_lru);
	comment(f, "Mechanisms: %s's.", base.name);
	(void)vs_kernel_mech_write(f, &k.mech);
	comment(f, "The zap path, scaled together to sum to a page zapped, "
		"released and freed: %.0f, the slope of madvise(MADV_DONTNEED) "
		"from %d to %d faulted pages (%.0f and %.0f a call), each page "
		"freed by the zap (none in the CPU's LRU batch).  "
		"cycles_pcp_drain is charged only for the pages that go back to "
		"the buddy lists, so the model's zap of a page costs less than "
		"the slope while the per-CPU list keeps them.", h.slope,
		CALIB_ZAP_FLUSH_PAGES, CALIB_ZAP_PAGES,
		res.kern.fig[CALIB_K_ZAP_34], res.kern.fig[CALIB_K_ZAP_512]);
	print_scaled(f, &k, &base, zap_steps, zap_factor);
	comment(f, "The fault path, scaled together to sum to %.0f: a write "
		"fault on a fresh page timed alone, less its clear over 2 MiB "
		"(%.0f - %.0f = %.0f), less the machine profile's fault_entry + "
		"fault_exit (%.0f), at least 0.  Counted twice otherwise: "
		"vcpu-calibrate's fault_entry and fault_exit are a write fault "
		"less its clear too, so they already hold every one of these "
		"steps, and the model charges a fault fault_entry + fault_exit "
		"+ these steps + the clear.  So these keys hold only what the "
		"two measures of the same work differ by, not the steps' own "
		"cost; with the host machine profile the charges add up to "
		"this fault.  With a machine profile whose fault_entry and "
		"fault_exit are the trap alone, these keys should sum to %.0f "
		"less those two.", h.fault_steps, h.fault, h.clear,
		h.fault_less_clear, h.entry_exit, h.fault_less_clear);
	print_scaled(f, &k, &base, fault_steps, fault_factor);
	comment(f, "cycles_syscall_mm: madvise(MADV_DONTNEED) of 1 page never "
		"touched, no page table under it (%.0f a call), less syscall "
		"(getppid, %.0f).", h.call, res.syscall);
	fprintf(f, "cycles_syscall_mm = %u\n", k.cycles[VS_KSTEP_SYSCALL_MM]);
	comment(f, "Not measured, %s's: the TLB flush and the IPI.  For "
		"comparison, a flushing MADV_DONTNEED's fixed cost here is %.0f "
		"(the %d-page call less %d pages at the slope less the 1-page "
		"call): cycles_tlb_local and the gather's batch page.",
		base.name, h.flush, CALIB_ZAP_FLUSH_PAGES,
		CALIB_ZAP_FLUSH_PAGES);
	for (s = VS_KSTEP_TLB_LOCAL; s <= VS_KSTEP_IPI_SEND; s++)
		fprintf(f, "%s = %u\n", step_key[s], k.cycles[s]);
}

/* @len bytes of @text to @path (stdout where NULL), or exit 1. */
static void write_text(const char *path, const char *text, size_t len)
{
	FILE *f = path ? fopen(path, "w") : stdout;

	if (!f)
		calib_die("%s: %s", path, strerror(errno));
	if (fwrite(text, 1, len, f) != len || fflush(f) || ferror(f) ||
	    (path && fclose(f)))
		calib_die("writing %s: %s", path ? path : "stdout",
			  strerror(errno));
}

/*
 * The kernel profile, built in memory, checked with vs_kernel_parse(),
 * written, then loaded from the file with vs_kernel_load() as every vmsim
 * program would (a path: "./" before a name without a '/').  A profile
 * either refuses is a bug here.
 */
static void write_kernel_profile(void)
{
	char *text = NULL, err[256], path[4096];
	struct vs_kernel k;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		calib_die("open_memstream: %s", strerror(errno));
	print_kernel_profile(f);
	if (fclose(f))
		calib_die("the kernel profile in memory: %s", strerror(errno));
	if (vs_kernel_parse(&k, text, err, sizeof(err)))
		calib_die("bug: vs_kernel_parse() refuses the kernel profile, "
			  "so it is not written: %s", err);
	write_text(kernel_output, text, len);
	free(text);
	snprintf(path, sizeof(path), "%s%s",
		 strchr(kernel_output, '/') ? "" : "./", kernel_output);
	if (vs_kernel_load(&k, path, err, sizeof(err)))
		calib_die("bug: vs_kernel_load() refuses %s: %s", path, err);
}

/* ---- options and main -------------------------------------------------- */

static void set_option(int key, char *arg)
{
	FILE *f;

	if (key != BENCH_OPT_OUTPUT && key != BENCH_OPT_KERNEL_OUTPUT)
		return;
	/* Opened to append, so that a bad path is said now and an old
	 * profile stays until the new one is written. */
	f = fopen(arg, "a");
	if (!f)
		bench_usage_error("%s: cannot write '%s': %s",
				  bench_opt_name(key), arg, strerror(errno));
	fclose(f);
	if (key == BENCH_OPT_OUTPUT)
		output = arg;
	else
		kernel_output = arg;
}

static const char about[] =
"Measure this machine and write the `host` profile of the virtual\n"
"CPUs' cost model: the cycle rate, the topology, a line passed between\n"
"each pair of CPUs, a line all CPUs add to at once, a cache hit,\n"
"memory, an RMW, a fence, a PAUSE, an IPI,\n"
"clear_page bandwidth, the prefetcher, a system call, a page fault,\n"
"a futex wake-up and a context switch; and the host kernel's own work\n"
"on a fault and on MADV_DONTNEED, in comments and, with\n"
"--kernel-output, as a kernel profile.  Progress goes to stderr, the\n"
"profile, once vmsim's parser has read it back, to stdout or FILE.\n";

static const struct bench_opt opts[] = {
	{ BENCH_OPT_DURATION, NULL, NULL },
	{ BENCH_OPT_OUTPUT, "write the profile to FILE (default stdout)",
	  NULL },
	{ BENCH_OPT_KERNEL_OUTPUT, "also write a kernel profile of the host "
	  "kernel to FILE\n(vmsim/kernel.h)", NULL },
	{ 0, NULL, NULL },
};

static const struct bench_tool tool = {
	.name = "vcpu-calibrate", .about = about, .opts = opts,
	.set = set_option, .duration_ms = 200,
};

/* A profile that vmsim's own parser refuses is a bug here: say the
 * parser's message and exit 1. */
static void check_profile(const char *text)
{
	struct vs_vcpu_profile p;
	char err[256];

	if (vs_vcpu_profile_parse(&p, text, err, sizeof(err)))
		calib_die("bug: vs_vcpu_profile_parse() refuses the profile, "
			  "so it is not written: %s", err);
}

/* The profile, built in memory and checked, then written whole. */
static void write_profile(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		calib_die("open_memstream: %s", strerror(errno));
	print_profile(f);
	if (fclose(f))
		calib_die("the profile in memory: %s", strerror(errno));
	check_profile(text);
	write_text(output, text, len);
	free(text);
}

int main(int argc, char **argv)
{
	bench_parse_options(&tool, argc, argv);
	calib_topo_read(&topo);
	res.first = calib_first_allowed(&topo, -1);
	calib_progress("%d CPUs online, %d allowed: %d socket(s) x %d "
		       "core(s) x %d thread(s)", topo.nr_online,
		       topo.nr_allowed, topo.sockets, topo.cores_per_socket,
		       topo.threads_per_core);
	calib_clock_init(bench_std.duration_ms);
	res.ghz = calib_clock.ghz;
	calib_progress("ghz: %.3f", res.ghz);
	measure_cpu();
	measure_clear();
	measure_kernel();
	measure_pairs();
	measure_handoff();
	measure_ipi();
	measure_prefetch();
	measure_host_kernel();
	write_profile();
	if (kernel_output)
		write_kernel_profile();
	return 0;
}
