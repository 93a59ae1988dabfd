/* SPDX-License-Identifier: MIT */
/*
 * tools/vcpu-calibrate/calib.h - what the parts of vcpu-calibrate share
 * (docs/man/vcpu-calibrate.1).
 *
 *   calib_core.c	the clock (ticks, cycles), one measurement as the
 *			median over timed batches, threads pinned to a CPU
 *   calib_topo.c	sockets, cores and threads from sysfs
 *   calib_probe.c	what one thread measures alone: a hit, memory, an
 *			RMW, a fence, a system call, a page fault
 *   calib_pair.c	what takes two threads or more: line ping-pong,
 *			futex wake-up, context switch, clear_page bandwidth
 *   calib_contend.c	CPUs acting on each other at once: a line all of
 *			them RMW, an inter-processor interrupt
 *   calib_kernel.c	the host kernel's work, for a kernel profile: a
 *			write fault timed alone, MADV_DONTNEED of 512, 34
 *			and 1 pages
 *   vcpu-calibrate.c	the options, the order of the probes, the profile
 *
 * Times are read in ticks (rdtsc on x86-64, nanoseconds elsewhere) and
 * reported in cycles: ticks * calib_clock.cycles_per_tick.  No vmsim
 * code: the tool measures the host alone.
 * Context: one process; a probe's threads are its own.
 */
#ifndef VS_TOOLS_CALIB_H
#define VS_TOOLS_CALIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define CALIB_MAX_CPUS 1024	/* CPU_SETSIZE: the CPUs it can name */
#define CALIB_PAGE 4096UL	/* the page a fault or a clear works on */
#define CALIB_LINE 64		/* a cache line */

/*
 * struct calib_clock - the clock every figure is read with
 * @ghz:	cycles per nanosecond: the TSC rate on x86-64 (measured),
 *		the nominal rate elsewhere (cpufreq's cpuinfo_max_freq, or
 *		1 when unknown)
 * @cycles_per_tick: 1 on x86-64 (a tick is a TSC cycle), @ghz elsewhere
 *		(a tick is a nanosecond)
 * @ticks_per_ns: 1 / (ns per tick): @ghz on x86-64, 1 elsewhere
 * @duration_ticks: --duration, the run time of one measurement
 * @tsc:	whether ticks are TSC cycles
 * @how:	how @ghz was found, for the profile's comment
 */
struct calib_clock {
	double ghz;
	double cycles_per_tick;
	double ticks_per_ns;
	uint64_t duration_ticks;
	bool tsc;
	char how[160];
};

extern struct calib_clock calib_clock;

/* The tick counter: a TSC read that later loads cannot pass, or ns. */
static inline uint64_t calib_ticks(void)
{
#if defined(__x86_64__)
	uint64_t t;

	_mm_lfence();
	t = __rdtsc();
	_mm_lfence();
	return t;
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* A spin-wait hint: pause on x86-64. */
static inline void calib_pause(void)
{
#if defined(__x86_64__)
	_mm_pause();
#endif
}

/*
 * Not instrumented by ThreadSanitizer: the setup of a buffer that one
 * thread fills before the threads that read it are created (the reads
 * are instrumented), where TSan's bookkeeping of each store would take
 * seconds.
 */
#define CALIB_NO_TSAN __attribute__((no_sanitize("thread")))

/* Keep the compiler from moving memory accesses across this point. */
#define calib_barrier() __asm__ __volatile__("" ::: "memory")

/* ---- calib_core.c ------------------------------------------------------ */

/**
 * calib_clock_init - measure the tick rate against CLOCK_MONOTONIC and
 * set calib_clock
 * @duration_ms: --duration: how long the measurement runs
 *
 * Context: main thread, before any probe.
 */
void calib_clock_init(unsigned int duration_ms);

/*
 * A batch of a measurement: do @n operations, return the ticks they
 * took (what is not the operations, such as setting up, left out).
 */
typedef uint64_t (*calib_batch_fn)(void *arg, uint64_t n);

/**
 * calib_measure - cycles of one operation of @fn: the batch size is
 * doubled until a batch takes 1/32 of --duration (the warm-up), then
 * batches run for --duration (at least 7); the median over them
 * @arg:	passed to @fn
 *
 * Context: the thread that is measured, pinned.
 * Return: the median cycles per operation.
 */
double calib_measure(calib_batch_fn fn, void *arg);

/**
 * calib_measure_on - calib_measure(@fn, @arg) in a thread pinned to @cpu
 *
 * Context: any thread of the tool.
 * Return: the median cycles per operation.
 */
double calib_measure_on(int cpu, calib_batch_fn fn, void *arg);

/**
 * calib_on_cpu - run @fn(@arg) in a new thread pinned to @cpu, and join
 * it
 *
 * Exits 1 with a message when the thread cannot be made or pinned.
 * Context: any thread of the tool.
 */
void calib_on_cpu(int cpu, void *(*fn)(void *), void *arg);

/**
 * calib_start_on_cpu - start @fn(@arg) in a new thread pinned to @cpu
 * @tid:	the thread, for pthread_join()
 *
 * Exits 1 with a message when the thread cannot be made; the thread
 * exits the process with one if it cannot be pinned.
 * Context: any thread of the tool.
 */
void calib_start_on_cpu(int cpu, void *(*fn)(void *), void *arg,
			pthread_t *tid);

/**
 * calib_die - "vcpu-calibrate: <message>" on stderr and exit 1
 * @fmt:	printf format of the message, no newline
 */
_Noreturn void calib_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/**
 * calib_progress - "vcpu-calibrate: <message>" on stderr
 * @fmt:	printf format of the message, no newline
 */
void calib_progress(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/**
 * calib_map - @bytes of private anonymous memory, or exit 1
 * @huge:	advise transparent huge pages (else advise against them)
 * @populate:	fault every page in now (MADV_POPULATE_WRITE, or a
 *		memset() where the kernel lacks it), in the calling thread
 */
void *calib_map(size_t bytes, bool huge, bool populate);

/* ---- calib_topo.c ------------------------------------------------------ */

/*
 * struct calib_cpu - where Linux puts one online CPU
 * @socket:	physical_package_id
 * @core:	core_id (unique within its socket only)
 * @thread:	its place in thread_siblings_list (0: the first)
 * @siblings:	the CPUs of its core, itself in
 * @allowed:	in this process's affinity mask: probes may run on it
 */
struct calib_cpu {
	int socket, core, thread, siblings;
	bool online, allowed;
};

/*
 * struct calib_topo - the machine as /sys/devices/system/cpu says
 * @cpu:	by CPU number; @cpu[i].online for those that are
 * @nr_online, @nr_allowed: the CPUs online, and those of them allowed
 * @sockets, @cores_per_socket, @threads_per_core: the profile's keys
 *		(the most cores of any socket, the most threads of any
 *		core)
 * @from_sysfs:	false when sysfs had no topology: one socket of
 *		single-thread cores assumed
 * @llc_bytes:	the largest cache of cpu0's (sysfs cache/index*), 0 when
 *		unknown
 */
struct calib_topo {
	struct calib_cpu cpu[CALIB_MAX_CPUS];
	int nr_online, nr_allowed;
	int sockets, cores_per_socket, threads_per_core;
	bool from_sysfs;
	size_t llc_bytes;
};

/*
 * enum calib_dist - how far apart two CPUs are: the profile's classes
 * of line transfer
 */
enum calib_dist {
	CALIB_SMT,		/* two threads of one core */
	CALIB_SOCKET,		/* two cores of one socket */
	CALIB_REMOTE,		/* two sockets */
	CALIB_NR_DIST
};

/**
 * calib_topo_read - fill @t from sysfs and this process's affinity
 *
 * Context: main thread.
 */
void calib_topo_read(struct calib_topo *t);

/**
 * calib_numbering - which of the cost model's two CPU numberings the
 * online CPUs of @t follow
 *
 * Socket-major: CPU i is thread i / (S * C), socket (i % (S * C)) / C,
 * core i % C; interleaved: thread i / (S * C), socket i % S, core
 * (i % (S * C)) / S; sockets and cores counted in the order of their
 * sysfs ids.
 * Return: "socket-major" (also when both fit), "interleaved", or NULL
 * when neither does (or some CPUs are offline).
 */
const char *calib_numbering(const struct calib_topo *t);

/**
 * calib_dist_of - the class of the pair @a, @b (online CPUs of @t)
 *
 * Return: CALIB_SMT, CALIB_SOCKET or CALIB_REMOTE.
 */
enum calib_dist calib_dist_of(const struct calib_topo *t, int a, int b);

/**
 * calib_first_allowed - the lowest allowed CPU above @after
 * @after:	-1 for the first
 *
 * Return: the CPU, or -1 when there is none.
 */
int calib_first_allowed(const struct calib_topo *t, int after);

/* ---- calib_probe.c: one thread alone ----------------------------------- */

/* Each runs on @cpu and returns cycles (per operation). */
double calib_hit(int cpu);
double calib_memory(int cpu, size_t bytes);
double calib_store(int cpu);
double calib_rmw(int cpu);
double calib_store_fence(int cpu);
double calib_syscall(int cpu);
double calib_fault(int cpu, bool write);

/* Cycles of one of a chain of dependent adds (a core cycle: the core's
 * clock is ghz / this), 0 where it has no probe (not x86-64, arm64). */
double calib_add(int cpu);

/* Cycles of one PAUSE (vs_cpu_relax()); 0 where it is not x86-64. */
double calib_pause_cycles(int cpu);

/* ---- calib_pair.c: two threads or more --------------------------------- */

/**
 * calib_pingpong - cycles of one transfer of a line between @a and @b:
 * a quarter of the round trip of a value written in turn by a thread on
 * each.  Each half of the trip is two transfers as the cost model counts
 * them (vcpu/cost.c): the writer's store invalidates the copy the
 * other thread spins on, and that thread's next load misses.
 */
double calib_pingpong(int a, int b);

/**
 * calib_futex - a FUTEX_WAKE by a thread on @waker of one asleep in
 * FUTEX_WAIT on @sleeper (which may be @waker)
 * @wake:	the median cycles of the waker's FUTEX_WAKE call
 * @latency:	the median cycles from the start of that call to the
 *		sleeper running again
 * @samples:	how many wake-ups the medians are of
 */
void calib_futex(int waker, int sleeper, double *wake, double *latency,
		 int *samples);

/**
 * calib_switch - cycles of one context switch: two threads on @cpu hand
 * a token back and forth through a futex word
 */
double calib_switch(int cpu);

/**
 * calib_clear - bytes per cycle of memset() over 4 KiB pages, by
 * threads on @cpus[0..@nr) at once (their sum)
 * @bytes:	each thread's buffer, larger than its share of the caches
 */
double calib_clear(const int *cpus, int nr, size_t bytes);

/**
 * calib_walk - cycles a line of a dependent chase by a thread on @a over
 * 256 KiB of lines that a thread on @b has just written
 * @pages:	the chase goes up @pages pages of 4 KiB at a time, a line
 *		of each in turn (1, 2, 4, ... 64); 0: every line in random
 *		order
 *
 * A hardware prefetcher that follows @pages walks at once makes the
 * ordered chase much cheaper than the random one.
 */
double calib_walk(int a, int b, int pages);

/* ---- calib_contend.c: CPUs acting on each other at once ----------------- */

/**
 * calib_handoff - cycles a handoff of a line that threads on
 * @cpus[0..@nr) (@nr >= 2) do atomic adds on at once: the time over the
 * number of times the line went from one thread to another (an add whose
 * old value shows that another thread added since this one's last)
 */
double calib_handoff(const int *cpus, int nr);

/**
 * calib_ipi - cycles of one membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
 * call on @a while a thread of the process spins on @b: the call sends
 * @b an inter-processor interrupt and waits for its handler
 *
 * Return: the median cycles of a call; -1 when @a is @b or the kernel
 * refuses the command (no membarrier, or not registered).
 */
double calib_ipi(int a, int b);

/* ---- calib_kernel.c: the host kernel's work --------------------------- */

#define CALIB_ZAP_PAGES 512	/* the window faulted and zapped: 2 MiB */
/* Pages of the zap just over x86's single-page flush ceiling (33,
 * tlb_single_page_flush_ceiling): it flushes the whole TLB. */
#define CALIB_ZAP_FLUSH_PAGES 34
/*
 * Fresh pages faulted after the zap's pages and before the zap: the CPU's
 * LRU batch (31 pages in 6.18, 14 in 3.18) then holds none of them.  A
 * page the batch still holds has a reference the zap does not drop, so
 * 6.18's MADV_DONTNEED, which no longer drains the batch, would leave it
 * to a later fault to free, and a zap of 34 pages would free anywhere from
 * 4 to 34 of them.
 */
#define CALIB_ZAP_SPILL_PAGES 64

/* The figures of calib_kernel(), by index of calib_kernel.fig. */
enum calib_kernel_fig {
	CALIB_K_FAULT,		/* a timed store that faults a fresh page */
	CALIB_K_STORE,		/* the same timed store to a present page */
	CALIB_K_ZAP_512,	/* MADV_DONTNEED of 512 faulted pages, a call */
	CALIB_K_ZAP_34,		/* ... of CALIB_ZAP_FLUSH_PAGES pages, a call */
	CALIB_K_ZAP_1,		/* ... of 1 page never touched, a call */
	CALIB_K_NR
};

/*
 * struct calib_kernel - what calib_kernel() found
 * @fig:	cycles of each of enum calib_kernel_fig, the median over
 *		@batches batches of rounds
 * @rounds:	rounds in all, each every figure once (512 faults a round)
 */
struct calib_kernel {
	double fig[CALIB_K_NR];
	int batches, rounds;
};

/**
 * calib_kernel - the host kernel's fault and MADV_DONTNEED work, by one
 * thread on @cpu over private anonymous 4 KiB pages (huge pages advised
 * against), for about twice --duration
 * @k:		filled
 *
 * Each store is timed alone between two calib_ticks(); the fault alone is
 * @k->fig[CALIB_K_FAULT] less @k->fig[CALIB_K_STORE].  Every zap is of
 * pages that the CPU's LRU batch no longer holds, so it frees each one;
 * none empties a page table.
 * Context: any thread of the tool.
 */
void calib_kernel(int cpu, struct calib_kernel *k);

#endif /* VS_TOOLS_CALIB_H */
