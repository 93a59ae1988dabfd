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
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "mf.h"
#include "vcpu_barrier.h"
#include <vmsim/vcpu.h>
#include <vmsim/vcpu_cost.h>

#define PAGE 4096UL
#define WRITER_BYTES (64UL << 10)
#define TICK_NS 100000ULL	/* the trace's counters: every 100 us */

static struct {
	const struct mf_config *cfg;
	struct vs_vcpu_profile prof;
	struct vs_machine *m;
	struct vs_mm *mm;
	unsigned long area, wvma;
	struct vcpu_barrier bar;
	uint64_t t0_ns, deadline_ns, end_ns, zap_ns, passes;
	vs_atomic32_t leave, writer_stop;
	vs_atomic32_t *stop;
	unsigned long writer_ops;
	unsigned int seed;		/* the mmap writer's placement */
	struct vs_fault_stats st0;
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

	vs_fault_stats_get(&v.st0);
	for (i = 0; i < v.cfg->threads; i++)
		vs_machine_stats(v.m, (int)i, &v.ms0[i]);
	vs_coherence_reset_stats(vs_machine_coherence(v.m));
	v.t0_ns = vs_vcpu_now_ns();
	v.tick_ns = v.t0_ns;
	v.tick_faults = v.faults;
}

/* On vCPU 0 as it leaves: everything since measure_begin(). */
static void measure_end(void)
{
	struct vs_coherence *coh = vs_machine_coherence(v.m);
	struct mf_sample *s = v.out;
	struct vs_coherence_stats cs;
	struct vs_fault_stats st1;
	double secs = (double)(v.end_ns - v.t0_ns) / 1e9;

	vs_fault_stats_get(&st1);
	mf_stats_add(&s->st, &v.st0, &st1);
	s->faults = (double)(st1.faults - v.st0.faults);
	s->seconds = secs;
	s->writer_ops = v.writer_ops;	/* those done in the measured time */
	vs_coherence_stats(coh, VS_COHERENCE_ALL, &cs);
	s->transfers = (double)cs.transfers;
	s->cache_misses = (double)(cs.by_source[VS_XFER_REMOTE] +
				   cs.by_source[VS_XFER_MEMORY]);
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

/* A write to @p: a fault, in the trace with its lock events. */
static int touch(unsigned long p)
{
	int err;

	mf_trace_fault_begin();
	err = vs_access(v.mm, p, 1, 1);
	mf_trace_fault_end();
	v.faults++;
	return err;
}

/* ---- the faulters and the writer ------------------------------------------ */

/* vCPU 0's part of a pass: zap every slot, decide whether to leave. */
static int zap_all(void)
{
	uint64_t t0 = vs_vcpu_now_ns();
	unsigned int i;
	int err = 0;

	for (i = 0; i < v.cfg->threads && !err; i++)
		err = vs_madvise(v.mm, v.area + i * MF_SLOT_BYTES,
				 MF_FAULT_BYTES, VS_MADV_DONTNEED);
	v.end_ns = vs_vcpu_now_ns();
	v.zap_ns += v.end_ns - t0;
	mf_trace_span("MADV_DONTNEED zap", t0, v.end_ns);
	v.passes++;
	/* The host's Ctrl-C flag: read past the seam, uncharged. */
	if (err || v.end_ns >= v.deadline_ns ||
	    atomic_load_explicit(v.stop, memory_order_relaxed)) {
		vs_write_once(&v.leave, 1);
		measure_end();
	}
	return err;
}

static void faulter(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	unsigned long p, start = v.area + id * MF_SLOT_BYTES;
	bool tick = v.tracing && id == 0;
	char name[32];
	int err = 0;

	snprintf(name, sizeof(name), "vCPU %u", id);
	mf_trace_thread(name);
	for (;;) {
		vcpu_barrier_wait(&v.bar, v.cfg->threads);
		for (p = start; p < start + MF_FAULT_BYTES && !err; p += PAGE) {
			err = touch(p);
			if (tick)
				trace_tick();
		}
		vcpu_barrier_wait(&v.bar, v.cfg->threads);
		if (id == 0 && !err)
			err = zap_all();
		if (err) {
			v.err = err;
			vs_write_once(&v.leave, 1);
		}
		vcpu_barrier_wait(&v.bar, v.cfg->threads);
		if (vs_read_once(&v.leave))
			break;
	}
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
		a = vs_mmap(v.mm, v.area - 2 * WRITER_BYTES * (slot + 1),
			    WRITER_BYTES, VS_PROT_READ | VS_PROT_WRITE,
			    VS_MAP_PRIVATE | VS_MAP_ANONYMOUS, NULL, 0);
		return a < 0 ? (int)a : vs_munmap(v.mm, (unsigned long)a,
						   WRITER_BYTES);
	case MF_WRITER_MPROTECT:
		return vs_mprotect(v.mm, v.wvma, WRITER_BYTES, i & 1 ?
				   VS_PROT_READ : VS_PROT_READ | VS_PROT_WRITE);
	default:
		err = vs_fork(v.mm, &child);
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

/* ---- the run --------------------------------------------------------------- */

static int setup(void)
{
	const struct mf_config *cfg = v.cfg;
	struct vs_mm_options mo = { .lock_kind = cfg->lock };
	long a;
	int err;

	mo.pool_pages = cfg->threads * (MF_FAULT_BYTES / PAGE) * 2 + 4096;
	err = vs_mm_create(&v.mm, &mo);
	if (!err)
		err = vs_mm_set_fault_strategy(v.mm, cfg->strategy);
	if (err)
		return err;
	a = vs_mmap(v.mm, 0, MF_SLOT_BYTES * cfg->threads,
		    VS_PROT_READ | VS_PROT_WRITE,
		    VS_MAP_PRIVATE | VS_MAP_ANONYMOUS, NULL, 0);
	if (a < 0)
		return (int)a;
	v.area = (unsigned long)a;
	if (cfg->writer != MF_WRITER_MPROTECT)
		return 0;
	a = vs_mmap(v.mm, v.area - 2 * WRITER_BYTES, WRITER_BYTES,
		    VS_PROT_READ | VS_PROT_WRITE,
		    VS_MAP_PRIVATE | VS_MAP_ANONYMOUS, NULL, 0);
	v.wvma = a < 0 ? 0 : (unsigned long)a;
	return a < 0 ? (int)a : 0;
}

/* vCPU 0: set up, start everyone, fault, wait for all, tear down. */
static void main_fn(void *arg)
{
	int work[MF_MAX_THREADS + 1], nw = 0, i, cpu;
	unsigned int n = v.cfg->threads;
	uint64_t t0 = vs_vcpu_now_ns();

	(void)arg;
	mf_trace_thread("vCPU 0");
	vs_vcpu_name(&v.bar, sizeof(v.bar), "multi-fault's barrier");
	v.err = setup();
	mf_trace_span("setup: mmap", t0, vs_vcpu_now_ns());
	if (v.err)
		goto out;
	measure_begin();
	v.deadline_ns = v.t0_ns + (uint64_t)v.cfg->duration_ms * 1000000ULL;
	for (i = 1; i < (int)n; i++)
		work[nw++] = vs_machine_spawn(v.m, (unsigned int)i, faulter,
					      (void *)(uintptr_t)i);
	if (v.cfg->writer != MF_WRITER_NONE) {
		cpu = vs_machine_nr_vcpus(v.m) > n ? (int)n :
						      vs_machine_pick_vcpu(v.m);
		work[nw++] = vs_machine_spawn(v.m, (unsigned int)cpu, writer,
					      (void *)(intptr_t)cpu);
	}
	faulter((void *)0);
	vs_store_release(&v.writer_stop, 1);
	for (i = 0; i < nw; i++)
		if (work[i] >= 0)
			vs_machine_join(v.m, (unsigned int)work[i]);
out:
	t0 = vs_vcpu_now_ns();
	if (v.mm)
		vs_mm_destroy(v.mm);
	mf_trace_span("teardown: munmap", t0, vs_vcpu_now_ns());
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
