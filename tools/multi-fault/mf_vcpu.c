/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf_vcpu.c - one repeat of a multi-fault configuration on
 * virtual CPUs (vmsim/vcpu.h): Kamezawa's loop as mf_run.c runs it on threads,
 * with vCPU i in place of thread i on CPU i, in virtual time.
 *
 * Faulter i writes one byte to each page of the first 2 MiB of the i-th
 * 8 MiB slot of one private anonymous mapping of the model; a barrier;
 * vCPU 0 zaps every slot with vs_madvise(MADV_DONTNEED); a barrier; a
 * third, after which all leave together once vCPU 0's clock passed the
 * duration.  The barrier is a futex barrier, as glibc's
 * pthread_barrier_wait() is.  The writer, if any, runs on the vCPU
 * after the faulters' when the profile has one, beside a faulter
 * otherwise.
 *
 * With --trace (mf_trace.c, in this process's part): a track per vCPU
 * and one for the writer, in virtual time; faults with the lock waits
 * and holds inside them, the zap and the writer's operations as
 * slices, and vCPU 0 samples the counters "faults/s" and "line
 * transfers/s" every TICK_NS of its virtual time.  What the trace reads
 * is read past the seams (plain memory, the cost model's counters), so
 * it charges nothing; the lock hooks' own checks are charged, as a
 * kernel's enabled tracepoints cost.
 *
 * Compiled into the vCPU build of the tool only (multi-fault-vcpu).
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "mf.h"
#include <vmsim/vcpu.h>
#include <vmsim/vcpu_cost.h>

#define PAGE 4096UL
#define WRITER_BYTES (64UL << 10)
#define TICK_NS 100000ULL	/* the trace's counters: every 100 us */

static struct {
	const struct mf_config *cfg;
	struct vs_vcpu_profile prof;
	struct vs_machine *m;
	struct vs_workload *w;		/* the run, from its first hook */
	const struct vs_workload_ops *ops;	/* the built-in one */
	unsigned long area, wvma;
	uint64_t zap_ns, passes;
	vs_atomic32_t writer_stop;
	vs_atomic32_t *stop;
	unsigned long writer_ops;
	unsigned int seed;		/* the mmap writer's placement */
	int writer_work;		/* vs_machine_spawn()'s, or -1 */
	struct vs_machine_stats ms0[MF_MAX_THREADS];
	struct mf_sample *out;
	int err;
	/* --trace: faults begun (a plain count: one host thread), and
	 * the counters' last sample. */
	bool tracing;
	unsigned long faults;
	uint64_t tick_ns, tick_xfers;
	unsigned long tick_faults;
} v;

/* ---- what the run measured ----------------------------------------------- */

/* Each faulting vCPU's counters now, or less @base. */
static void machine_cycles(struct mf_cycles *c)
{
	struct vs_machine_stats s;
	unsigned int i;

	for (i = 0; i < v.cfg->threads; i++) {
		vs_machine_stats(v.m, (int)i, &s);
		c->lines += (double)(s.access_cycles - v.ms0[i].access_cycles);
		c->clear += (double)(s.work_cycles[VS_VCPU_CLEAR] -
				     v.ms0[i].work_cycles[VS_VCPU_CLEAR] +
				     s.work_cycles[VS_VCPU_COPY] -
				     v.ms0[i].work_cycles[VS_VCPU_COPY]);
		c->spin += (double)(s.pause_cycles - v.ms0[i].pause_cycles);
		c->fault += (double)(s.work_cycles[VS_VCPU_FAULT] -
				     v.ms0[i].work_cycles[VS_VCPU_FAULT]);
		c->syscall += (double)(s.work_cycles[VS_VCPU_SYSCALL] -
				       v.ms0[i].work_cycles[VS_VCPU_SYSCALL]);
		c->kernel += (double)(s.work_cycles[VS_VCPU_KERNEL] -
				      v.ms0[i].work_cycles[VS_VCPU_KERNEL]);
		c->irq += (double)(s.work_cycles[VS_VCPU_IRQ] -
				   v.ms0[i].work_cycles[VS_VCPU_IRQ]);
		c->futex += (double)(s.futex_cycles - v.ms0[i].futex_cycles);
	}
}

/* The lines that cost most, by the names vm/ gave them. */
static void named_lines(struct mf_cycles *c, struct vs_coherence *coh)
{
	struct vs_coherence_named n[MF_NAMED_MAX];
	int i, nr = vs_coherence_by_name(coh, n, MF_NAMED_MAX);

	for (i = 0; i < nr; i++) {
		snprintf(c->named[i].name, sizeof(c->named[i].name), "%s",
			 n[i].name ? n[i].name : "(unnamed)");
		c->named[i].cycles = (double)n[i].cycles;
		c->named[i].transfers = (double)n[i].transfers;
	}
	c->nr_named = nr > 0 ? (unsigned int)nr : 0;
}

/* At the start of the first pass: the counters the sample is taken from. */
static void measure_begin(void)
{
	unsigned int i;

	for (i = 0; i < v.cfg->threads; i++)
		vs_machine_stats(v.m, (int)i, &v.ms0[i]);
	vs_coherence_reset_stats(vs_machine_coherence(v.m));
	v.tick_ns = vs_vcpu_now_ns();
	v.tick_faults = v.faults;
}

/* As the phase ends: everything since measure_begin(). */
static void measure_end(const struct vs_workload_result *res)
{
	struct vs_coherence *coh = vs_machine_coherence(v.m);
	struct mf_sample *s = v.out;
	struct vs_coherence_stats cs;
	double secs = (double)res->ns / 1e9;

	mf_stats_add(&s->st, &(struct vs_fault_stats){ 0 }, &res->st);
	s->faults = (double)res->faults;
	s->seconds = secs;
	s->writer_ops = v.writer_ops;	/* those done in the measured time */
	vs_coherence_stats(coh, VS_COHERENCE_ALL, &cs);
	s->transfers = (double)cs.transfers;
	s->cache_misses = (double)cs.llc_misses;
	s->cyc.all = secs * 1e9 * v.prof.ghz * v.cfg->threads;
	s->cyc.zap = (double)v.zap_ns * v.prof.ghz;
	s->cyc.passes = (double)v.passes;
	machine_cycles(&s->cyc);
	named_lines(&s->cyc, coh);
}

/* ---- the trace ----------------------------------------------------------- */

/* vCPU 0: the counters of the trace, once TICK_NS of its time passed. */
static void trace_tick(void)
{
	struct vs_coherence *coh = vs_machine_coherence(v.m);
	uint64_t now = vs_vcpu_now_ns(), xfers = v.tick_xfers;
	struct vs_coherence_stats cs;
	double dt;

	if (now < v.tick_ns + TICK_NS)
		return;
	dt = (double)(now - v.tick_ns) / 1e9;
	if (coh && !vs_coherence_stats(coh, VS_COHERENCE_ALL, &cs))
		xfers = cs.transfers;
	mf_trace_counter("faults/s", now,
			 (double)(v.faults - v.tick_faults) / dt);
	mf_trace_counter("line transfers/s", now,
			 (double)(xfers - v.tick_xfers) / dt);
	v.tick_ns = now;
	v.tick_faults = v.faults;
	v.tick_xfers = xfers;
}

/* ---- the hooks ------------------------------------------------------------ */

static void task_start(struct vs_workload_task *t)
{
	char name[32];

	snprintf(name, sizeof(name), "vCPU %u", t->id);
	mf_trace_thread(name);
}

/* A write: a fault, in the trace with its lock events. */
static void touch_begin(struct vs_workload_task *t)
{
	(void)t;
	mf_trace_fault_begin();
}

static void touch_end(struct vs_workload_task *t)
{
	mf_trace_fault_end();
	v.faults++;
	if (v.tracing && t->id == 0)
		trace_tick();
}

/* The phases, in virtual time; the serial one is a pass's end. */
static void span(struct vs_workload *w, const char *name, uint64_t t0,
		 uint64_t t1)
{
	v.w = w;
	if (!strcmp(name, "setup")) {
		name = "setup: mmap";
	} else if (!strcmp(name, "teardown")) {
		name = "teardown: munmap";
	} else {
		v.zap_ns += t1 - t0;
		v.passes++;
	}
	mf_trace_span(name, t0, t1);
}

static void measure(struct vs_workload *w, bool end)
{
	v.w = w;
	if (end)
		measure_end(w->res);
	else
		measure_begin();
}

static int writer_op(unsigned long i)
{
	struct vs_mm *child;
	unsigned long slot;
	long a;
	int err;

	switch (v.cfg->writer) {
	case MF_WRITER_MMAP:
		slot = (unsigned long)rand_r(&v.seed) % 64;
		a = vs_mmap(v.w->mm, v.area - 2 * WRITER_BYTES * (slot + 1),
			    WRITER_BYTES, VS_PROT_READ | VS_PROT_WRITE,
			    VS_MAP_PRIVATE | VS_MAP_ANONYMOUS, NULL, 0);
		return a < 0 ? (int)a : vs_munmap(v.w->mm, (unsigned long)a,
						   WRITER_BYTES);
	case MF_WRITER_MPROTECT:
		return vs_mprotect(v.w->mm, v.wvma, WRITER_BYTES, i & 1 ?
				   VS_PROT_READ : VS_PROT_READ | VS_PROT_WRITE);
	default:
		err = vs_fork(v.w->mm, &child);
		return err ? err : vs_mm_destroy(child);
	}
}

/* Sleep in virtual time until operation @i is due at the writer's rate. */
static void pace(uint64_t t0, unsigned long i)
{
	static vs_atomic32_t never;	/* nobody wakes it: a timed sleep */
	uint64_t due = t0 + i * 1000000000ULL / v.cfg->writer_rate;
	uint64_t now = vs_vcpu_now_ns();

	if (due > now)
		(void)vs_futex_wait(&never, 0, (int64_t)(due - now));
}

static void writer(void *arg)
{
	uint64_t t0 = vs_vcpu_now_ns(), t1;
	const char *span = mf_writer_name(v.cfg->writer);
	char name[32];
	unsigned long i;
	int err = 0;

	snprintf(name, sizeof(name), "writer, vCPU %d", (int)(intptr_t)arg);
	mf_trace_thread(name);
	for (i = 0; !err && !vs_load_acquire(&v.writer_stop); i++) {
		if (v.cfg->writer_rate)
			pace(t0, i);
		t1 = vs_vcpu_now_ns();
		err = writer_op(i);
		mf_trace_span(span, t1, vs_vcpu_now_ns());
		v.writer_ops += !err;	/* the host's count: no event */
	}
	if (err)
		v.err = err;
}

/* multi-fault's setup, then the mprotect writer's VMA below it. */
static int setup_with_writer(struct vs_workload *w)
{
	long a;
	int err;

	v.w = w;
	err = v.ops->setup(w);
	v.area = (unsigned long)w->priv;
	if (err || v.cfg->writer != MF_WRITER_MPROTECT)
		return err;
	a = vs_mmap(w->mm, v.area - 2 * WRITER_BYTES, WRITER_BYTES,
		    VS_PROT_READ | VS_PROT_WRITE,
		    VS_MAP_PRIVATE | VS_MAP_ANONYMOUS, NULL, 0);
	v.wvma = a < 0 ? 0 : (unsigned long)a;
	return a < 0 ? (int)a : 0;
}

/* The writer, on the vCPU after the faulters' when there is one. */
static void started(struct vs_workload *w)
{
	unsigned int n = v.cfg->threads;
	int cpu;

	v.w = w;
	if (v.cfg->writer == MF_WRITER_NONE)
		return;
	cpu = vs_machine_nr_vcpus(v.m) > n ? (int)n : vs_machine_pick_vcpu(v.m);
	v.writer_work = vs_machine_spawn(v.m, (unsigned int)cpu, writer,
					 (void *)(intptr_t)cpu);
}

static void stopped(struct vs_workload *w)
{
	(void)w;
	vs_store_release(&v.writer_stop, 1);
	if (v.writer_work >= 0)
		vs_machine_join(v.m, (unsigned int)v.writer_work);
}

static const struct vs_workload_hooks hooks = {
	.task_start = task_start,
	.touch_begin = touch_begin,
	.touch_end = touch_end,
	.span = span,
	.measure = measure,
	.started = started,
	.stopped = stopped,
};

/* vCPU 0: the run. */
static void main_fn(void *arg)
{
	struct vs_workload_config wc;
	struct vs_workload_ops ops;
	struct vs_workload_result res;
	int err;

	(void)arg;
	mf_trace_thread("vCPU 0");
	mf_workload_config(v.cfg, &wc);
	v.ops = wc.ops;
	if (!wc.ops) {
		v.err = -EINVAL;
		return;
	}
	ops = *wc.ops;
	if (v.cfg->writer != MF_WRITER_NONE)
		ops.setup = setup_with_writer;
	wc.ops = &ops;
	wc.stop = v.stop;
	wc.hooks = &hooks;
	err = vs_workload_run(&wc, &res);
	v.err = v.err ? v.err : err;
}

/*
 * The profile.  With --compare-real the machine takes no trap
 * (VS_MACHINE_NO_TRAPS): vmsim's fault on real threads is a call, and
 * its VM calls are calls, not system calls; its futex calls are real.
 */
static int load_profile(const struct mf_config *cfg)
{
	char msg[256];
	int err = vs_vcpu_profile_load(&v.prof, cfg->machine, msg,
				       sizeof(msg));

	if (err)
		fprintf(stderr, "multi-fault: --machine: %s\n", msg);
	return err;
}

int mf_vcpu_repeat(const struct mf_config *cfg, unsigned int k,
		   vs_atomic32_t *stop, struct mf_sample *out)
{
	struct vs_machine_config mc = { .profile = &v.prof };
	int err;

	memset(&v, 0, sizeof(v));
	memset(out, 0, sizeof(*out));
	v.cfg = cfg;
	v.stop = stop;
	v.out = out;
	v.seed = (unsigned int)(cfg->seed + k);
	v.writer_work = -1;
	v.tracing = mf_trace_on();
	err = -EINVAL;
	if (!cfg->machine || cfg->threads < 1 ||
	    cfg->threads > MF_MAX_THREADS)
		goto out;
	err = load_profile(cfg);
	if (err)
		goto out;
	mc.flags = cfg->real_code ? VS_MACHINE_NO_TRAPS : 0;
	mc.nr_vcpus = cfg->threads + (cfg->writer != MF_WRITER_NONE &&
				      cfg->threads < v.prof.nr_cpus);
	/* Repeats differ in the engine's seed only. */
	mc.seed = cfg->seed + k;
	err = vs_machine_create(&v.m, &mc);
	if (err) {
		fprintf(stderr, "multi-fault: %u vCPUs of %s: %s\n",
			mc.nr_vcpus, v.prof.name, vs_strerror(err));
		goto out;
	}
	if (vs_lockstat_enabled())
		vs_lockstat_reset();
	err = vs_machine_run(v.m, main_fn, NULL);
	if (err)
		fprintf(stderr, "multi-fault: %s\n", vs_machine_report(v.m));
	else
		err = v.err;
	if (!err && vs_lockstat_enabled())
		out->has_lockstat = !mf_lockstat_collect(out->lockstat);
	vs_machine_destroy(v.m);
out:
	out->err = err;
	return err;
}
