/* SPDX-License-Identifier: MIT */
/*
 * vmsim/vcpu_annotate.h - what code that runs on virtual CPUs tells the
 * engine: the seam's events, work done outside the seams, the names of
 * objects, and memory freed.
 *
 * The model (sync/, vm/, fault/) and a test's own code include this
 * header, not vmsim/vcpu.h, the engine's API (machines, schedulers,
 * replay).  In the vCPU build (VS_VCPU=1, libvmsim-vcpu) every
 * operation of vmsim/atomic.h is first an event of the engine when the
 * caller runs on a vCPU: the engine charges its cost and may run an
 * earlier vCPU before the operation takes place; vmsim/wait.h's futex
 * calls block and wake vCPUs in virtual time.  In the native build the
 * seams call nothing here, and every function below does nothing on a
 * host thread.
 */
#ifndef VMSIM_VCPU_ANNOTATE_H
#define VMSIM_VCPU_ANNOTATE_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifndef VS_VCPU
#define VS_VCPU 0	/* 1 in the vCPU build (libvmsim-vcpu) */
#endif

#define VS_VCPU_MAX 256	/* most vCPUs (and pieces of work) a machine has */
/* Private: the context ids of a machine, VS_VCPU_MAX for work and the
 * engine's daemons' (vs_vcpu_self()); arrays indexed by them have this
 * many entries. */
#define VS__VCPU_DAEMONS 1
#define VS__VCPU_CONTEXTS (VS_VCPU_MAX + VS__VCPU_DAEMONS)

/**
 * enum vs_vcpu_op - what a seam operation does to memory
 * @VS_VCPU_LOAD: a load (vs_read_once, vs_load_acquire)
 * @VS_VCPU_STORE: a store (vs_write_once, vs_store_release)
 * @VS_VCPU_RMW: a read-modify-write, successful or not
 * @VS_VCPU_FENCE: a full fence (vs_smp_mb)
 * @VS_VCPU_RELAX: vs_cpu_relax() in a spin loop
 * @VS_VCPU_ORDER: a one-way fence (vs_smp_rmb, vs_smp_wmb): no
 *	instruction on x86-64, whose loads are not reordered with loads
 *	nor stores with stores, so the cost model charges it nothing
 */
enum vs_vcpu_op {
	VS_VCPU_LOAD,
	VS_VCPU_STORE,
	VS_VCPU_RMW,
	VS_VCPU_FENCE,
	VS_VCPU_RELAX,
	VS_VCPU_ORDER,
};

/* Private: the running context's id (vs_vcpu_self(), not its vCPU's
 * number), -1 on a host thread. */
extern int vs__vcpu_cur;
/* Private: the contexts below it own a slot of their own
 * (vs_machine_config.own_slots; VS_VCPU_MAX when every one does), for
 * vmsim/thread.h. */
extern int vs__vcpu_own_slots;

/*
 * VS__CODE(op, mo, size) - an event's code: its enum vs_vcpu_op, and for
 * the memory models (vcpu/memory_model.c) the C11 memory_order plus one
 * and the access's size in bytes; an event without them (a size of 0)
 * is charged but not modelled.
 */
#define VS__CODE(op, mo, size) \
	((unsigned int)(op) | ((unsigned int)(mo) + 1) << 4 | \
	 (unsigned int)(size) << 8)

/* Private: set by an event whose access a memory model must see done
 * (vcpu/memory_model.c); @stored says whether the access stored. */
extern int vs__vcpu_post;
void vs__vcpu_done(int stored);

/* Private: the hooks the seams call in the vCPU build (vmsim/atomic.h,
 * vmsim/wait.h); libvmsim-vcpu is static, so they need no export. */
void vs__vcpu_event(const volatile void *addr, unsigned int code);
int vs__vcpu_futex_wait(const volatile void *word, uint32_t val,
			int64_t timeout_ns);
int vs__vcpu_futex_wake(const volatile void *word, int nr);
void vs__vcpu_yield(void);

/**
 * vs_vcpu_self - the context the caller runs on
 *
 * A context is a piece of work (its id is what vs_machine_spawn()
 * returned; vs_machine_run()'s and vs_machine_enter()'s is 0) or the
 * engine's own daemon: not the vCPU's number, which vs_machine_stats()
 * and the cost model use.
 *
 * Context: any.
 * Return: the context's id, or -1 outside every machine (a host
 * thread).
 */
VS_EXTERN int vs_vcpu_self(void);

/**
 * vs_vcpu_now_ns - virtual nanoseconds of the calling vCPU
 *
 * Context: a vCPU.
 * Return: its clock converted with the profile's frequency.
 */
VS_EXTERN uint64_t vs_vcpu_now_ns(void);

/**
 * vs_vcpu_charge - charge the calling vCPU @cycles of work that does not
 * pass through the seams
 * @cycles: the cost
 *
 * Context: a vCPU; nothing happens on a host thread.
 */
VS_EXTERN void vs_vcpu_charge(uint64_t cycles);

/**
 * enum vs_vcpu_work - work the model does outside the seams, charged
 * from the machine's profile
 * @VS_VCPU_CLEAR: clearing @bytes (a page): the core's bandwidth, the
 *                 socket's memory bandwidth shared with the other
 *                 vCPUs clearing at that moment
 * @VS_VCPU_COPY: copying @bytes
 * @VS_VCPU_FAULT: a page fault's entry and exit
 * @VS_VCPU_SYSCALL: a system call's entry and exit
 * @VS_VCPU_KERNEL: @bytes cycles of the kernel's instruction work
 *		    (vmsim/kernel.h's steps)
 * @VS_VCPU_IRQ: interrupt handlers run on this vCPU for others
 *		 (vs_vcpu_interrupt()), their entry and exit included;
 *		 charged by the engine, not through vs_vcpu_work()
 * @VS_VCPU_WORK_NR: the number of kinds
 */
enum vs_vcpu_work {
	VS_VCPU_CLEAR,
	VS_VCPU_COPY,
	VS_VCPU_FAULT,
	VS_VCPU_SYSCALL,
	VS_VCPU_KERNEL,
	VS_VCPU_IRQ,
	VS_VCPU_WORK_NR,
};

/**
 * vs_vcpu_work - charge the calling vCPU for @what
 * @what: the kind of work
 * @addr: the memory it clears, for VS_VCPU_CLEAR (NULL: unknown, taken
 *	as not cached; see vs_coherence_charge_clear()); else ignored
 * @bytes: its size, for VS_VCPU_CLEAR and VS_VCPU_COPY
 *
 * vm/ and fault/ call it through VS_VCPU_WORK(), which is nothing in
 * the native build.  A @what out of range, or VS_VCPU_IRQ, is ignored;
 * a machine made with VS_MACHINE_NO_TRAPS charges VS_VCPU_FAULT,
 * VS_VCPU_SYSCALL and VS_VCPU_KERNEL nothing (vmsim on host threads
 * takes no trap and does not run the kernel's instructions).
 * Context: any; nothing happens on a host thread or without a profile.
 */
VS_EXTERN void vs_vcpu_work(enum vs_vcpu_work what, const void *addr,
			   uint64_t bytes);

/*
 * VS_VCPU_WORK(what, addr, bytes) - vs_vcpu_work() on a vCPU of the vCPU
 * build, nothing at all natively.
 */
#if VS_VCPU
#define VS_VCPU_WORK(what, addr, bytes) /* vs_vcpu_work() on a vCPU */ \
	(vs__vcpu_cur >= 0 ? vs_vcpu_work((what), (addr), (bytes)) : (void)0)
#else
#define VS_VCPU_WORK(what, addr, bytes) ((void)0) /* nothing natively */
#endif

/**
 * vs_vcpu_cpu - the vCPU the calling context runs on
 *
 * Context: any.
 * Return: its number, 0 to the machine's vCPUs - 1; -1 on a host thread.
 */
VS_EXTERN int vs_vcpu_cpu(void);

/**
 * vs_vcpu_node - the NUMA node (socket) of the calling vCPU
 *
 * Context: any.
 * Return: its socket in the machine's profile; 0 on a vCPU of a machine
 * without one; -1 on a host thread.
 */
VS_EXTERN int vs_vcpu_node(void);

/**
 * vs_vcpu_nr_nodes - the NUMA nodes of the running machine
 *
 * Context: any.
 * Return: its profile's sockets; 1 without a profile or on a host
 * thread.
 */
VS_EXTERN unsigned int vs_vcpu_nr_nodes(void);

/**
 * vs_vcpu_nr_cpus - the CPUs the running machine stands for
 *
 * Context: any.
 * Return: its profile's CPUs (the kernel's online CPUs), else its
 * vCPUs; on a host thread the host's online CPUs.
 */
VS_EXTERN unsigned int vs_vcpu_nr_cpus(void);

/**
 * vs_vcpu_interrupt - interrupt vCPU @cpu to run a handler of @cycles
 * @cpu: the target, not the caller's own vCPU
 * @cycles: the handler's work
 *
 * The target pays the handler, and an exception's entry and exit
 * (fault_entry and fault_exit: the profile has no separate interrupt
 * cost), at its next event (VS_VCPU_IRQ): an interrupt takes its CPU
 * where it is.  A vCPU with nothing to run is idle and is not charged
 * (an idle CPU's time is nobody's).  The sender's own cost is the
 * caller's to charge (vs_vcpu_ipi_cycles()).
 * Context: a vCPU; nothing happens on a host thread.
 * Return: 1 when the target was busy and pays, 0 when it was idle or
 * the call did nothing, -EINVAL for a @cpu out of range or the caller's.
 */
VS_EXTERN int vs_vcpu_interrupt(int cpu, uint64_t cycles);

/**
 * vs_vcpu_ipi_cycles - what an IPI costs from its send to the handler
 * starting on the target (the profile's ipi)
 *
 * Context: any.
 * Return: the cycles; 0 on a host thread or without a profile.
 */
VS_EXTERN uint64_t vs_vcpu_ipi_cycles(void);

/**
 * vs_vcpu_name - name [@addr, @addr + @len) in the running machine's
 * reports (the events of a deadlock or a failure) and, with a profile,
 * the cache lines in its cost model, for its most-contended list
 * @addr: the object
 * @len: its size
 * @name: a name without an address in it (runs must compare equal)
 *
 * vm/ names what it knows: mmap_lock, each VMA's lock, page-table
 * locks, the page pool's locks.
 * Context: any; nothing happens on a host thread.  The names of a
 * machine are forgotten when it is reset (its objects were the work's).
 */
VS_EXTERN void vs_vcpu_name(const void *addr, size_t len, const char *name);

/**
 * vs_vcpu_span_begin - a span of the running work begins: in the trace
 * of a machine made with VS_MACHINE_TRACE, a slice "@name @what" (or
 * "@name") of category @cat on its vCPU's track, around its events
 * until vs_vcpu_span_end(@key)
 * @cat: "fault", "span" (a system call) or "lock", as multi-fault
 *	--trace names them (docs/trace-blame.py reads both traces)
 * @name: what it is: "fault", "munmap", a lock's class
 * @what: for a lock, "wait R", "wait W", "R" or "W"; or NULL
 * @key: what ends it: an address the work passes to vs_vcpu_span_end()
 *
 * The engine's bookkeeping, not an event: the schedule, the figures and
 * the run's hash are the same with and without the trace.  fault/'s
 * vs_handle_mm_fault_as(), vm/'s vs_munmap() and vs_mprotect(), and
 * vmsim/lock.h's lock calls mark their spans through VS_VCPU_SPAN_*().
 * Context: any; nothing happens on a host thread, or on a machine that
 * does not trace.
 */
VS_EXTERN void vs_vcpu_span_begin(const char *cat, const char *name,
				  const char *what, const void *key);

/**
 * vs_vcpu_span_end - the running work's latest span begun with @key ends
 * @key: as given to vs_vcpu_span_begin()
 *
 * Context: as vs_vcpu_span_begin().
 */
VS_EXTERN void vs_vcpu_span_end(const void *key);

/* VS_VCPU_SPAN_BEGIN(), VS_VCPU_SPAN_END(): the two above on a vCPU of
 * the vCPU build, nothing at all natively. */
#if VS_VCPU
#define VS_VCPU_SPAN_BEGIN(cat, name, what, key) /* on a vCPU */ \
	(vs__vcpu_cur >= 0 ? vs_vcpu_span_begin((cat), (name), (what), \
						(key)) : (void)0)
#define VS_VCPU_SPAN_END(key) /* vs_vcpu_span_end() on a vCPU */ \
	(vs__vcpu_cur >= 0 ? vs_vcpu_span_end(key) : (void)0)
#else
#define VS_VCPU_SPAN_BEGIN(cat, name, what, key) ((void)0) /* nothing */
#define VS_VCPU_SPAN_END(key) ((void)0) /* nothing natively */
#endif

/**
 * vs_vcpu_poison - mark [@addr, @addr + @len) freed: on a machine made
 * with VS_MACHINE_CHECK_FREED, an event on its bytes fails the run as a
 * use after free, until vs_vcpu_unpoison()
 * @addr: the memory
 * @len: its size
 *
 * vm/'s object caches poison what they free (vm/asan.h); a test may
 * poison its own objects.  Reset forgets all poison.
 * Context: any; nothing happens on a host thread, or on a machine
 * without the flag.
 */
VS_EXTERN void vs_vcpu_poison(const void *addr, size_t len);

/**
 * vs_vcpu_checks_freed - whether poison is checked here: on a vCPU of a
 * machine made with VS_MACHINE_CHECK_FREED
 *
 * vm/'s object caches then reuse a freed object last, as under ASan, so
 * that it stays poisoned for long.
 * Context: any.
 * Return: 1 or 0.
 */
VS_EXTERN int vs_vcpu_checks_freed(void);

/**
 * vs_vcpu_unpoison - [@addr, @addr + @len) is allocated (in use again)
 * @addr: the memory
 * @len: its size
 *
 * Under VS_VCPU_MEM_RELAXED the running context is its allocator: a
 * seam access to it by a context that this does not happen before
 * fails the run as an "unpublished object".
 * Context: any; nothing happens on a host thread.
 */
VS_EXTERN void vs_vcpu_unpoison(const void *addr, size_t len);

/**
 * vs_vcpu_forget - [@addr, @addr + @len) goes back to the heap: neither
 * freed (poisoned) nor anyone's allocation
 * @addr: the memory
 * @len: its size
 *
 * vm/'s object caches forget their chunks when they free them.
 * Context: any; nothing happens on a host thread.
 */
VS_EXTERN void vs_vcpu_forget(const void *addr, size_t len);

#endif /* VMSIM_VCPU_ANNOTATE_H */
