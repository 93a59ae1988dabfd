/* SPDX-License-Identifier: MIT */
/*
 * vcpu/internal.h - the engine's state and what its files share.
 * Private to vcpu/: the layer above sees vcpu/client.h, the users
 * vmsim/vcpu.h and vmsim/vcpu_annotate.h.
 *
 * The engine's own state is touched by one host thread, between events,
 * with plain accesses: never through vmsim/atomic.h, whose operations
 * are events themselves in the vCPU build.  The engine includes nothing
 * of vmsim but its own headers.
 */
#ifndef VS_VCPU_INTERNAL_H
#define VS_VCPU_INTERNAL_H

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

#include <vmsim/vcpu.h>
#include <vmsim/vcpu_cost.h>

#include "client.h"
#include "names.h"

#if defined(__SANITIZE_ADDRESS__)
#define VCPU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VCPU_ASAN 1
#endif
#endif
#ifdef VCPU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

/*
 * Contexts: a piece of work (spawned, or the entered host thread) runs
 * on a context of its own, bound to one vCPU; a vCPU runs one of its
 * contexts at a time.  Ids 0..VS__VCPU_WORKS-1 are for work, the last
 * VS__VCPU_DAEMONS (vcpu/client.h) for the engine's clients' daemons
 * (RCU callbacks, on vCPU 0).
 */
#define VS__VCPU_WORKS VS_VCPU_MAX
/* A context that others wait for on its vCPU runs at most this long
 * (virtual cycles) before it gives way: the scheduler's time slice. */
#define VS__VCPU_SLICE 1000000

/* The events each context keeps for reports, its last ones, and how
 * many of them a report shows (bookkeeping left out). */
#define VS__VCPU_LOG 32
#define VS__VCPU_SHOWN 8
/* The named ranges a machine keeps for reports: its latest ones. */
#define VS__VCPU_RANGES 4096

/* One seam event, as a report tells it. */
struct vs__logged {
	uint64_t seq;			/* its place among the run's events */
	const volatile void *addr;
	unsigned int op;		/* enum vs_vcpu_op */
	unsigned int back;		/* a load: how old what it read was,
					 * 0 the newest (vs__mem_event()) */
};

/* One event of a traced run (VS_MACHINE_TRACE). */
struct vs__traced {
	uint64_t seq;			/* its place among the run's events */
	uint64_t clock;			/* virtual time at its end */
	uint64_t cost;			/* its cycles */
	const volatile void *addr;
	uint16_t ctx, cpu;
	uint8_t op;			/* enum vs_vcpu_op, or VS__TRACE_* */
	uint8_t back;			/* as struct vs__logged's */
	uint32_t name, cat;		/* a span's, in the machine's names */
};
#define VS__TRACE_SLEEP 0x10		/* blocked on @addr */
#define VS__TRACE_END 0x11		/* its work ended */
#define VS__TRACE_SPAN 0x12		/* a span begins; @addr its key */
#define VS__TRACE_SPAN_END 0x13		/* the span of key @addr ends */

/* A range named with vs_vcpu_name(): [lo, hi) is name @id. */
struct vs__range {
	uintptr_t lo, hi;
	uint32_t id;
};

enum vs__vstate {
	VS__V_IDLE,	/* no work */
	VS__V_READY,	/* runnable, waiting for its vCPU (not in the heap) */
	VS__V_RUNNABLE,	/* its vCPU's, in the heap, waiting to run */
	VS__V_RUNNING,	/* the one running now */
	VS__V_BLOCKED,	/* on a futex queue (in the heap too with a deadline) */
};

struct vs__poison;
struct vs__mem;

/* The memory models' vector clocks: an entry per work context below
 * VS__MEM_CLOCKS - 1, the last for the daemon (vcpu/memory_model.c). */
#define VS__MEM_CLOCKS 16
/* Stores a location keeps, for the relaxed model's loads to choose. */
#define VS__MEM_HISTORY VS_VCPU_MEM_HISTORY

struct vs__vclock {
	uint32_t c[VS__MEM_CLOCKS];
};

struct vs__vcpu {
	void *sp;			/* saved stack pointer */
	char *map;			/* the mmap of the stack and its guard */
	size_t map_len;
	char *stack_lo;			/* usable stack [stack_lo, +stack_len) */
	size_t stack_len;
	unsigned int id;
	unsigned int cpu;		/* the vCPU it is bound to */
	struct vs__vcpu *ready_next;	/* on its vCPU's ready queue */
	int daemon;
	enum vs__vstate state;
	uint64_t clock;			/* virtual cycles */
	uint64_t tiebreak;		/* drawn when queued */
	int heap_idx;			/* -1: not in the heap */
	void (*fn)(void *);
	void *arg;
	uint32_t gen;			/* bumped when work ends (joins) */
	uint32_t nev;			/* times it reached the scheduler:
					 * vs_vcpu_choice.at */
	/* a futex sleep */
	const volatile void *wait_word;
	struct vs__vcpu *wait_next;
	uint64_t deadline;		/* UINT64_MAX: none */
	int wait_ret;
	void *asan_fake;		/* ASan's fake stack while away */
	struct vs__logged log[VS__VCPU_LOG];	/* a ring, by @nlog */
	uint32_t nlog;			/* events logged this run */
};

/* One vCPU: the context it runs, the ones waiting for it (FIFO). */
struct vs__cpu {
	struct vs__vcpu *occupant;
	struct vs__vcpu *ready_head, *ready_tail;
	uint64_t slice_start;		/* when the occupant got it */
	uint64_t clock;			/* the latest time it ran at */
	uint64_t irq_pending;		/* handlers its next event pays */
	unsigned int works;		/* contexts bound to it, unfinished */
	struct vs_machine_stats st;
};

#define VS__FQ_BUCKETS 1024

struct vs_machine {
	struct vs_machine_config cfg;
	unsigned int nr;		/* vCPUs of the configuration */
	unsigned int nr_all;		/* contexts: VS__VCPU_CONTEXTS */
	struct vs__vcpu *v;		/* the contexts */
	struct vs__cpu *cpus;		/* the vCPUs */
	struct vs__vcpu *cur;		/* running, NULL on the host */
	void *host_sp;			/* the host context of vs_machine_run() */
	void *host_asan_fake;
	const void *host_stack_lo;	/* for ASan */
	size_t host_stack_len;
	int running;			/* inside run or enter */
	int entered;			/* vs_machine_enter(): vCPU 0 is the host */
	int done;			/* every vCPU with work finished */
	int deadlocked;
	int failed;			/* vs_machine_fail(), or stuck */
	int stopped;			/* a stop request ended it (-EINTR) */
	uint64_t nevents;		/* seam events of this run */
	unsigned int streak_id;		/* the context of the last events */
	uint64_t streak;		/* how many in a row */
	unsigned int nr_busy;		/* non-daemon vCPUs with work */
	uint32_t busy_word;		/* waited on by vs_machine_leave() */
	struct vs__vcpu **heap;
	unsigned int heap_n;
	uint64_t rng;
	uint64_t hash;
	double ghz;
	struct vs_vcpu_profile profile;	/* a copy; valid with @coh */
	struct vs_coherence *coh;	/* NULL: every access costs 1 */
	struct vs__vcpu *fq[VS__FQ_BUCKETS];	/* futex queues, FIFO */
	void *sched;			/* the scheduler's state */
	/* The run's schedule (vs_machine_decisions()), with a scheduler
	 * that chooses */
	unsigned long nchoices;		/* choice points so far */
	uint32_t host_nev;		/* the host's vs_vcpu_choice.at */
	struct vs_vcpu_decision *dec;	/* not the default, in order */
	size_t dec_n, dec_cap;
	int dec_lost;			/* one could not be recorded */
	uint64_t seq;			/* events of this run, for the log */
	struct vs__range *ranges;	/* named ranges, a ring by @nranges */
	unsigned long nranges;		/* ranges named since the reset */
	struct vs__names names;		/* their names, each once */
	struct vs__poison *poison;	/* freed memory (vcpu/poison.c) */
	struct vs__mem *mem;		/* NULL: sequentially consistent */
	struct vs__traced *trace;	/* VS_MACHINE_TRACE: this run's */
	size_t ntrace, trace_cap;
	int trace_lost;			/* one could not be kept */
	const struct vs__policy *policy;	/* from cfg.sched */
	void *client[VS__VCPU_CLIENTS];	/* vs__vcpu_state() */
	char report[8192];
};

/*
 * How a machine decides who runs, from its scheduler: by the clocks
 * (vcpu/runq.c, a scheduler without a choose function, the default) or
 * at choice points (vcpu/choice.c).
 */
struct vs__policy {
	/* Before @v's event @op on @addr, with others in the heap: @v to
	 * go on, NULL to give way to whichever comes first, or the
	 * context chosen to run first. */
	struct vs__vcpu *(*before_event)(struct vs_machine *m,
					 struct vs__vcpu *v, unsigned int op,
					 const volatile void *addr);
	/* After @stopped stopped (NULL: the run starts), the heap not
	 * empty: the context to run. */
	struct vs__vcpu *(*after_stop)(struct vs_machine *m,
				       struct vs__vcpu *stopped);
	/* A memory model's choice point of @kind at @v's event, with @nr
	 * (2 or more) alternatives 0..@nr-1, 0 the default: the one taken. */
	unsigned int (*memory)(struct vs_machine *m, struct vs__vcpu *v,
			       enum vs_vcpu_choice_kind kind, unsigned int nr);
	/* The clocks order events: an access that waited for its line
	 * gives way again, and a trace's time is virtual time. */
	int by_clock;
};
extern const struct vs__policy vs__clock_policy, vs__choice_policy;

/* A memory model's choice point of @kind at @v's event, with @nr
 * alternatives 0..@nr-1, 0 the default, as the machine's scheduler
 * decides.  Return: the one taken. */
static inline unsigned int vs__vcpu_choose_mem(struct vs_machine *m,
					       struct vs__vcpu *v,
					       enum vs_vcpu_choice_kind kind,
					       unsigned int nr)
{
	return nr < 2 ? 0 : m->policy->memory(m, v, kind, nr);
}

/* Does taking another alternative than the default at @c count as a
 * preemption (struct vs_vcpu_decision.preempt)?  At a RUN choice where
 * the running context could go on, and at every memory choice. */
static inline int vs__choice_preempts(const struct vs_vcpu_choice *c)
{
	return c->kind >= VS_VCPU_CHOOSE_READ ||
	       (c->kind == VS_VCPU_CHOOSE_RUN && c->cand[0] == c->ctx);
}

/* The next number of the splitmix64 sequence of *@state. */
static inline uint64_t vs__splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The machine's next pseudo-random number (tie-breaks, the clock
 * scheduler's memory choices). */
static inline uint64_t vs__rng_next(struct vs_machine *m)
{
	return vs__splitmix64(&m->rng);
}

/* Fold context @id's event @op at virtual time @clock into the event
 * hash (vs_machine_hash()). */
static inline void vs__hash_event(struct vs_machine *m, unsigned int id,
				  unsigned int op, uint64_t clock)
{
	uint64_t h = m->hash;

	h = (h ^ (id | (uint64_t)op << 16)) * 0x100000001b3ull;
	h = (h ^ clock) * 0x100000001b3ull;
	m->hash = h;
}

/* Print "vmsim: @what: strerror(@err)" and abort: an impossible failure
 * of the engine. */
_Noreturn void vs__vcpu_die(const char *what, int err);

/* @arr, full with *@cap entries of @size bytes, grown to twice as many
 * (@first when it has none).  Return: the array, *@cap updated; NULL
 * when memory ran out (@arr and *@cap as they were). */
static inline void *vs__grow(void *arr, size_t *cap, size_t size,
			     size_t first)
{
	size_t n = *cap ? 2 * *cap : first;
	void *p = n <= SIZE_MAX / 2 / size ? realloc(arr, n * size) : NULL;

	if (p)
		*cap = n;
	return p;
}

/* The machine the host thread is running now (its context:
 * vs__vcpu_cur, vmsim/atomic.h). */
extern struct vs_machine *vs__vcpu_machine;

/* vcpu/stop.c: stop requests (vs_vcpu_stop()) and the test hook
 * VMSIM_TEST_SIGNAL_AT. */

/* Nonzero: each event calls vs__vcpu_watch_event() (a stop is pending,
 * or the hook is armed); a signal handler may set it. */
extern volatile sig_atomic_t vs__vcpu_watch;
/* Arm the hook from the environment, once a process (a run begins). */
void vs__vcpu_stop_arm(void);
/* The running context @v's event, with vs__vcpu_watch set: the hook's
 * signal when its moment comes; a run of a VS_MACHINE_STOPPABLE machine
 * ends when a stop is pending. */
void vs__vcpu_watch_event(struct vs_machine *m, struct vs__vcpu *v);
/* A switch half made, with vs__vcpu_watch set: the hook's signal when
 * its moment comes. */
void vs__vcpu_hook_moment(void);

/* vcpu/report.c: the events and names that reports tell. */

/* Log the running context's event @op on @addr, about to take effect,
 * reading a value @back stores old (vs__mem_event()). */
static inline void vs__vcpu_log(struct vs_machine *m, struct vs__vcpu *v,
				const volatile void *addr, unsigned int op,
				unsigned int back)
{
	struct vs__logged *l = &v->log[v->nlog++ % VS__VCPU_LOG];

	l->seq = m->seq++;
	l->addr = addr;
	l->op = op;
	l->back = back;
}

/* Keep context @v's event @op on @addr of @cost cycles, ending at its
 * clock (VS_MACHINE_TRACE); vcpu/report.c writes them out. */
void vs__vcpu_trace(struct vs_machine *m, const struct vs__vcpu *v,
		    const volatile void *addr, unsigned int op,
		    unsigned int back, uint64_t cost);

/* Remember that [@addr, +@len) is @name, for reports. */
void vs__vcpu_name_range(struct vs_machine *m, const void *addr, size_t len,
			 const char *name);

/* Forget every name (a reset), and with @destroy free their memory. */
void vs__vcpu_names_reset(struct vs_machine *m, int destroy);

/* Write at @at of m->report, for each context with work: its state,
 * what it waits on, the locks it holds, its last events by name. */
size_t vs__vcpu_report_contexts(struct vs_machine *m, size_t at);

/* vcpu/poison.c: memory freed, with VS_MACHINE_CHECK_FREED. */

/* Is the byte at @addr poisoned?  Then @seq and @by say when and by
 * whom.  Call only with m->poison set. */
int vs__vcpu_poisoned(struct vs_machine *m, const volatile void *addr,
		      uint64_t *seq, unsigned int *by);
/* Forget all poison (a reset), and with @destroy free its memory. */
void vs__vcpu_poison_reset(struct vs_machine *m, int destroy);
/* Fail the run: the running context's event @op touched @addr, freed
 * by context @by after the run's event @seq (vcpu/report.c). */
void vs__vcpu_fail_freed(struct vs_machine *m, const volatile void *addr,
			 unsigned int op, uint64_t seq, unsigned int by);

/* vcpu/memory_model.c: the weak memory models, with m->mem set. */

/* Make, free, empty (before a run) the model of @m's configuration. */
int vs__mem_create(struct vs_machine *m);
void vs__mem_destroy(struct vs_machine *m);
void vs__mem_reset(struct vs_machine *m);
/* The run ends: what an abandoned access swapped in goes back, and
 * every store buffer drains. */
void vs__mem_end(struct vs_machine *m);
/* May @v start work?  The relaxed model has clocks for so many. */
int vs__mem_may_spawn(const struct vs_machine *m, const struct vs__vcpu *v);
/* @v starts a work: nothing of the context's last one (its buffer
 * drained, its clocks new). */
void vs__mem_start(struct vs_machine *m, struct vs__vcpu *v);
/* @v's seam event @code on @addr, its choice point passed: what the
 * access will see.  Only with m->mem.  Return: 0, or for a load of
 * another value than the newest, how many stores back it is (relaxed),
 * VS__MEM_HIDDEN (TSO: the newest is in another's store buffer). */
unsigned int vs__mem_event(struct vs_machine *m, struct vs__vcpu *v,
			   const volatile void *addr, unsigned int code);
#define VS__MEM_HIDDEN 255u
/* @v stops running on its vCPU: its store buffer drains. */
void vs__mem_stop(struct vs_machine *m, struct vs__vcpu *v);
/* What happened in @from happens before what @to does next. */
void vs__mem_sync(struct vs_machine *m, const struct vs__vcpu *from,
		  const struct vs__vcpu *to);
/* The running context allocated [@addr, +@len) (relaxed: publication);
 * the range is nobody's again (back to the heap). */
void vs__mem_alloc(struct vs_machine *m, const void *addr, size_t len);
void vs__mem_forget(struct vs_machine *m, const void *addr, size_t len);
/* Fail the run: @addr was touched by event @op before the allocation
 * by @by happened before it (vcpu/report.c). */
void vs__vcpu_fail_unpublished(struct vs_machine *m,
				const volatile void *addr, unsigned int op,
				const char *by);

/* vcpu/runq.c: the run queue. */

/* The futex queue of @word's bucket (a list by wait_next, FIFO); put
 * @v, about to block on its wait_word, at its tail; take @v, blocked,
 * off it. */
struct vs__vcpu **vs__fq_head(struct vs_machine *m,
			      const volatile void *word);
void vs__fq_add(struct vs_machine *m, struct vs__vcpu *v);
void vs__fq_del(struct vs_machine *m, struct vs__vcpu *v);

/* Put @v into the heap (runnable, or asleep with a deadline), drawing
 * its tie-break; take it out again. */
void vs__heap_push(struct vs_machine *m, struct vs__vcpu *v);
void vs__heap_remove(struct vs_machine *m, struct vs__vcpu *v);
/* Give @v's vCPU to @v, or queue @v for it; @v is runnable at @now, of
 * which the last @switch_cost cycles are a context switch. */
void vs__make_runnable(struct vs_machine *m, struct vs__vcpu *v,
		       uint64_t now, uint64_t switch_cost);
/* @v leaves its vCPU (it blocked, finished or was preempted) at its
 * clock: the next context waiting for the vCPU gets it. */
void vs__cpu_release(struct vs_machine *m, struct vs__vcpu *v);
/* The next context to run after @stopped stopped (NULL: the run
 * starts), taken out of the heap, or NULL when none can run. */
struct vs__vcpu *vs__take_next(struct vs_machine *m,
			       struct vs__vcpu *stopped);
/* The running context @v stops running (it blocked, its work ended
 * (@dying) or its slice is over): run the next, or end the run.
 * Context: @v, between events; returns when @v runs again, other
 * contexts having run meanwhile (never when @dying). */
void vs__run_next(struct vs_machine *m, struct vs__vcpu *v, int dying);
/* Before @v's event @op on @addr: give way as the scheduler says.
 * Context: @v, between events; returns when @v runs again. */
void vs__yield(struct vs_machine *m, struct vs__vcpu *v, unsigned int op,
	       const volatile void *addr);

/* vcpu/context.c: contexts and switching between them. */

/* Switch from @from (NULL: the host) to @to (NULL: the host); @from's
 * work ended when @dying.  Context: @from, running; returns when @from
 * is switched to again. */
void vs__switch_to(struct vs_machine *m, struct vs__vcpu *from,
		   struct vs__vcpu *to, int dying);
/* Make idle context @v ready to run @fn(@arg) from the start, on a
 * stack of @stack_size bytes (0: the default), made on first use.
 * Return: 0, -ENOMEM. */
int vs__context_make(struct vs__vcpu *v, size_t stack_size,
		     void (*fn)(void *), void *arg);
/* Free context @v's stack. */
void vs__context_free(struct vs__vcpu *v);

/* vcpu/futex.c: sleeping and waking. */

/* Wake up to @nr sleepers on @word, FIFO, at @now at the earliest.  No
 * event: the caller accounts for it.  Return: how many woke. */
int vs__wake(struct vs_machine *m, const volatile void *word, int nr,
	     uint64_t now);
/* Block the running vCPU on @word (no value check); wake with
 * vs__wake().  Return: 0, or -ETIMEDOUT. */
int vs__vcpu_block(const volatile void *word, int64_t timeout_ns);

/* vcpu/work.c: work on a vCPU. */

/* Start @fn(@arg) on idle context @v, bound to vCPU @cpu, at virtual
 * time @clock.  Return: 0, -EBUSY, -ENOMEM. */
int vs__start_work(struct vs_machine *m, struct vs__vcpu *v, unsigned int cpu,
		   void (*fn)(void *), void *arg, uint64_t clock);

/* vcpu/report.c: the machine's report. */

/* Write the deadlock report: every context with work, what it waits
 * on. */
void vs__vcpu_report_deadlock(struct vs_machine *m);

/* vcpu/client.c: the clients' hooks (vcpu/client.h), each client's in
 * turn. */
void vs__clients_context_end(int ctx, int dropped);
size_t vs__clients_describe_context(int ctx, char *buf, size_t len);
int vs__clients_describe_addr(uintptr_t addr, char *buf, size_t len);
void vs__clients_abandon(void);
void vs__clients_machine_end(struct vs_machine *m);

#endif /* VS_VCPU_INTERNAL_H */
