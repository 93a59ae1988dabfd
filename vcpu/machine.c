/* SPDX-License-Identifier: MIT */
/*
 * vcpu/machine.c - a machine of vCPUs: made, run, entered, reset and
 * destroyed (what it tells of itself is vcpu/stats.c's).
 *
 * One host thread runs a machine (vs__vcpu_machine); its running
 * context is vs__vcpu_cur.  The engine's own state is touched by that
 * thread alone, between events, with plain accesses: never through
 * vmsim/atomic.h, whose operations are events themselves in the vCPU
 * build.
 */
#include <vmsim/vcpu.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

int vs__vcpu_own_slots = VS_VCPU_MAX;

#define FNV_BASIS 0xcbf29ce484222325ull	/* the event hash's start */

/*
 * The machine's own structures come from mmap, zeroed, not from the
 * heap: they may grow without moving what the work allocates, whose
 * lines' offsets in their 4 KiB pages the cost model sees
 * (vmsim/vcpu_cost.h).  Return: the memory, or NULL.
 */
static void *engine_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void engine_free(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

/* Make context @v idle: drop it wherever it stood (its stack is kept),
 * and what the clients keep of it (the locks it held), an earlier
 * machine's too. */
static void context_reset(struct vs__vcpu *v)
{
#ifdef VCPU_ASAN
	if (v->map)	/* frames it never returned from stay poisoned */
		__asan_unpoison_memory_region(v->stack_lo, v->stack_len);
#endif
	v->ready_next = NULL;
	v->state = VS__V_IDLE;
	v->clock = 0;
	v->tiebreak = 0;
	v->heap_idx = -1;
	v->fn = NULL;
	v->arg = NULL;
	v->gen = 0;
	v->nev = 0;
	v->wait_word = NULL;
	v->wait_next = NULL;
	v->deadline = UINT64_MAX;
	v->wait_ret = 0;
	v->asan_fake = NULL;
	vs__clients_context_end((int)v->id, 1);
}

/* Free @m and all it holds; @m may be half made (vs_machine_create()). */
static void machine_free(struct vs_machine *m)
{
	unsigned int i;

	for (i = 0; m->v && i < m->nr_all; i++)
		vs__context_free(&m->v[i]);
#if !defined(__x86_64__)
	free(m->host_sp);
#endif
	vs__clients_machine_end(m);
	if (m->sched && m->cfg.sched->fini)
		m->cfg.sched->fini(m->sched);
	if (m->coh)
		vs_coherence_destroy(m->coh);
	free(m->dec);
	free(m->trace);
	vs__vcpu_names_reset(m, 1);
	vs__vcpu_poison_reset(m, 1);
	vs__mem_destroy(m);
	engine_free(m->heap, m->nr_all * sizeof(*m->heap));
	engine_free(m->cpus, m->nr * sizeof(*m->cpus));
	engine_free(m->v, m->nr_all * sizeof(*m->v));
	engine_free(m, sizeof(*m));
}

int vs_machine_create(struct vs_machine **mp, const struct vs_machine_config *cfg)
{
	struct vs_machine *m;
	unsigned int i;
	int err = 0;

	if (!mp || !cfg || cfg->nr_vcpus < 1 || cfg->nr_vcpus > VS_VCPU_MAX)
		return -EINVAL;
	if (cfg->flags & ~(VS_MACHINE_NO_TRAPS | VS_MACHINE_CHECK_FREED |
			   VS_MACHINE_TRACE | VS_MACHINE_STOPPABLE))
		return -EINVAL;
	if (cfg->profile && cfg->nr_vcpus > cfg->profile->nr_cpus)
		return -EINVAL;
	if (cfg->own_slots > VS_VCPU_MAX)
		return -EINVAL;
	m = engine_alloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->cfg = *cfg;
	if (!m->cfg.sched)
		m->cfg.sched = &vs_vcpu_sched_clock;
	/* A scheduler that does not choose leaves it to the clocks. */
	m->policy = m->cfg.sched->choose ? &vs__choice_policy :
		    &vs__clock_policy;
	m->nr = cfg->nr_vcpus;
	m->nr_all = VS__VCPU_CONTEXTS;
	m->rng = cfg->seed;
	m->hash = FNV_BASIS;
	m->ghz = 1.0;
	m->v = engine_alloc(m->nr_all * sizeof(*m->v));
	m->cpus = engine_alloc(m->nr * sizeof(*m->cpus));
	m->heap = engine_alloc(m->nr_all * sizeof(*m->heap));
	if (!m->v || !m->cpus || !m->heap) {
		machine_free(m);
		return -ENOMEM;
	}
	for (i = 0; i < m->nr_all; i++) {
		m->v[i].id = i;
		m->v[i].daemon = i >= VS__VCPU_WORKS;
		context_reset(&m->v[i]);
	}
	if (!err && cfg->profile) {
		m->profile = *cfg->profile;
		m->cfg.profile = &m->profile;
		m->ghz = m->profile.ghz;
		err = vs_coherence_create(&m->coh, &m->profile, m->nr);
	}
	if (!err)
		err = vs__mem_create(m);
	if (!err && m->cfg.sched->init)
		err = m->cfg.sched->init(&m->sched, &m->cfg);
	if (err) {
		machine_free(m);
		return err;
	}
	*mp = m;
	return 0;
}

int vs_machine_destroy(struct vs_machine *m)
{
	if (!m)
		return -EINVAL;
	if (m->running)
		return -EBUSY;
	machine_free(m);
	return 0;
}

int vs_machine_sched_seek(struct vs_machine *m, unsigned long run)
{
	if (!m)
		return -EINVAL;
	if (m->running)
		return -EBUSY;
	if (!m->cfg.sched->seek)
		return -EOPNOTSUPP;
	return m->cfg.sched->seek(m->sched, run);
}

int vs_shard_parse(const char *s, unsigned int *k, unsigned int *n)
{
	unsigned long a, b;
	char *end;

	if (!s || !k || !n || *s < '0' || *s > '9')
		return -EINVAL;
	a = strtoul(s, &end, 10);
	if (*end != '/' || end[1] < '0' || end[1] > '9')
		return -EINVAL;
	b = strtoul(end + 1, &end, 10);
	if (*end || !b || b > VS_SHARD_MAX || !a || a > b)
		return -EINVAL;
	*k = (unsigned int)a;
	*n = (unsigned int)b;
	return 0;
}

int vs_machine_reset(struct vs_machine *m, uint64_t seed)
{
	struct vs_coherence *coh = NULL;
	unsigned int i;
	int err;

	if (!m)
		return -EINVAL;
	if (m->running || vs__vcpu_machine)
		return -EBUSY;
	if (m->coh) {		/* first what can fail */
		err = vs_coherence_create(&coh, &m->profile, m->nr);
		if (err)
			return err;
		vs_coherence_destroy(m->coh);
		m->coh = coh;
	}
	for (i = 0; i < m->nr_all; i++)
		context_reset(&m->v[i]);
	memset(m->cpus, 0, m->nr * sizeof(*m->cpus));
	memset(m->fq, 0, sizeof(m->fq));
	m->heap_n = 0;
	m->nr_busy = 0;
	m->busy_word = 0;
	m->cfg.seed = seed;
	m->rng = seed;
	m->hash = FNV_BASIS;
	m->done = 0;
	m->deadlocked = 0;
	m->failed = 0;
	m->stopped = 0;
	m->report[0] = 0;
	vs__vcpu_names_reset(m, 0);
	vs__vcpu_poison_reset(m, 0);
	vs__clients_machine_end(m);
	return 0;
}

/* The host thread's stack, for ASan's fiber switches. */
static void host_stack(struct vs_machine *m)
{
#ifdef VCPU_ASAN
	pthread_attr_t a;
	void *lo;
	size_t len;

	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		if (pthread_attr_getstack(&a, &lo, &len) == 0) {
			m->host_stack_lo = lo;
			m->host_stack_len = len;
		}
		pthread_attr_destroy(&a);
	}
#else
	(void)m;
#endif
}

static int begin(struct vs_machine *m)
{
	unsigned int i;

	if (!m)
		return -EINVAL;
	if (m->running || vs__vcpu_machine || m->deadlocked || m->failed)
		return -EBUSY;
	for (i = 0; i < m->nr_all; i++) {
		m->v[i].nev = 0;
		m->v[i].nlog = 0;
	}
	m->seq = 0;
	m->nevents = 0;
	m->streak = 0;
	m->nchoices = 0;
	m->host_nev = 0;
	m->dec_n = 0;
	m->dec_lost = 0;
	m->ntrace = 0;
	m->trace_lost = 0;
	m->running = 1;
	m->done = 0;
	m->report[0] = 0;
	vs__vcpu_stop_arm();
	vs__mem_reset(m);	/* each run starts from memory as it is */
	vs__vcpu_machine = m;
	vs__vcpu_own_slots = m->cfg.own_slots ? (int)m->cfg.own_slots :
			     VS_VCPU_MAX;
	host_stack(m);
	return 0;
}

/* The run is over: what it returns, @err unless the scheduler says
 * otherwise. */
static int sched_end(struct vs_machine *m, int err)
{
	int e = 0;

	if (m->cfg.sched->end)
		e = m->cfg.sched->end(m->sched, m);
	return e ? e : err;
}

static void end(struct vs_machine *m)
{
	vs__mem_end(m);
	m->running = 0;
	m->cur = NULL;
	vs__vcpu_machine = NULL;
	vs__vcpu_cur = -1;
	vs__vcpu_own_slots = VS_VCPU_MAX;
}

int vs_machine_run(struct vs_machine *m, void (*fn)(void *), void *arg)
{
	struct vs__vcpu *first;
	int err;

	if (!fn)
		return -EINVAL;
	err = begin(m);
	if (err)
		return err;
	err = vs__start_work(m, &m->v[0], 0, fn, arg, m->cpus[0].clock);
	if (err) {
		end(m);
		return err;
	}
	first = vs__take_next(m, NULL);
	vs__switch_to(m, NULL, first, 0);
	/* Back on the host: every vCPU is idle, or a deadlock. */
	err = sched_end(m, m->stopped ? -EINTR : m->failed ? -ECANCELED :
			m->deadlocked ? -EDEADLK : 0);
	end(m);
	/* A failed run's contexts never run again (begin() refuses until
	 * vs_machine_reset()): what they held of the clients' statics is
	 * free. */
	if (vs_machine_abandoned(m))
		vs__clients_abandon();
	return err;
}

int vs_machine_enter(struct vs_machine *m)
{
	struct vs__vcpu *v;
	int err = begin(m);

	if (err)
		return err;
	v = &m->v[0];
	if (v->state != VS__V_IDLE) {
		end(m);
		return -EBUSY;
	}
	m->entered = 1;
	vs__mem_start(m, v);
	v->cpu = 0;
	v->clock = m->cpus[0].clock;
	m->cpus[0].occupant = v;
	m->cpus[0].slice_start = v->clock;
	m->cpus[0].works++;
	v->state = VS__V_RUNNING;
	m->nr_busy++;
	m->cur = v;
	vs__vcpu_cur = 0;
	return 0;
}

int vs_machine_leave(struct vs_machine *m)
{
	int err;

	if (!m || !m->entered || m->cur != &m->v[0])
		return -EINVAL;
	while (m->nr_busy > 1)
		(void)vs__vcpu_block(&m->busy_word, -1);
	vs__cpu_release(m, &m->v[0]);
	m->cpus[0].works--;
	m->v[0].state = VS__V_IDLE;
	m->nr_busy--;
	m->entered = 0;
	err = sched_end(m, 0);
	end(m);
	return err;
}
