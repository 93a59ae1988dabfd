/* SPDX-License-Identifier: MIT */
/*
 * vcpu/work.c - work on vCPUs: spawned on a context of its own, bound
 * to a vCPU, run until its function returns, joined.
 *
 * Locking: the machine's host thread or its running context, between
 * events.
 */
#include <errno.h>

#include "internal.h"

/* @v's work returned: the context is idle again, its joiners wake, and
 * the next context runs; never returns. */
static _Noreturn void vcpu_finish(struct vs_machine *m, struct vs__vcpu *v)
{
	v->state = VS__V_IDLE;
	v->fn = NULL;
	vs__cpu_release(m, v);
	m->cpus[v->cpu].works--;
	if (!v->daemon)
		m->nr_busy--;
	v->gen++;
	(void)vs__wake(m, &v->gen, INT32_MAX, v->clock);
	if (!v->daemon && m->nr_busy <= 1)
		(void)vs__wake(m, &m->busy_word, INT32_MAX, v->clock);
	vs__hash_event(m, v->id, 0x300, v->clock);
	if (m->cfg.flags & VS_MACHINE_TRACE)
		vs__vcpu_trace(m, v, NULL, VS__TRACE_END, 0, 0);
	vs__run_next(m, v, 1);
	vs__vcpu_die("vcpu: a finished vCPU was resumed", EINVAL);
}

/* A context's first frame: run its work, then finish. */
static void vcpu_main(void *arg)
{
	struct vs__vcpu *v = arg;
	struct vs_machine *m = vs__vcpu_machine;

#ifdef VCPU_ASAN
	__sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
	v->fn(v->arg);
	vs__clients_context_end((int)v->id, 0);
	vcpu_finish(m, v);
}

int vs__start_work(struct vs_machine *m, struct vs__vcpu *v, unsigned int cpu,
		   void (*fn)(void *), void *arg, uint64_t clock)
{
	int err;

	if (v->state != VS__V_IDLE)
		return -EBUSY;
	err = vs__context_make(v, m->cfg.stack_size, vcpu_main, v);
	if (err)
		return err;
	vs__mem_start(m, v);
	v->fn = fn;
	v->arg = arg;
	v->cpu = cpu;
	m->cpus[cpu].works++;
	if (!v->daemon)
		m->nr_busy++;
	/* Its time counts from here: no jump to account. */
	v->clock = v->clock > clock ? v->clock : clock;
	vs__make_runnable(m, v, v->clock, 0);
	return 0;
}

/* A context with no work, or NULL. */
static struct vs__vcpu *free_context(struct vs_machine *m)
{
	unsigned int i;

	for (i = 0; i < VS__VCPU_WORKS; i++)
		if (m->v[i].state == VS__V_IDLE)
			return &m->v[i];
	return NULL;
}

int vs_machine_spawn(struct vs_machine *m, unsigned int cpu,
		     void (*fn)(void *), void *arg)
{
	struct vs__vcpu *v;
	int err;

	if (!m || !fn || cpu >= m->nr)
		return -EINVAL;
	if (m->cur)
		vs__vcpu_event(&m->cpus[cpu], VS_VCPU_RMW);
	v = free_context(m);
	if (!v || !vs__mem_may_spawn(m, v))
		return -EAGAIN;
	err = vs__start_work(m, v, cpu, fn, arg, m->cur ? m->cur->clock : 0);
	if (err)
		return err;
	vs__mem_sync(m, m->cur, v);	/* the spawner's past is its */
	return (int)v->id;
}

int vs__vcpu_spawn_daemon(void (*fn)(void *), void *arg)
{
	struct vs_machine *m = vs__vcpu_machine;
	unsigned int i;

	if (!m || !m->cur)
		return -EBUSY;
	for (i = VS__VCPU_WORKS; i < m->nr_all; i++) {
		if (m->v[i].state != VS__V_IDLE)
			continue;
		if (vs__start_work(m, &m->v[i], 0, fn, arg, m->cur->clock))
			return -EBUSY;
		vs__mem_sync(m, m->cur, &m->v[i]);
		return (int)i;
	}
	return -EBUSY;
}

int vs_machine_join(struct vs_machine *m, unsigned int work)
{
	struct vs__vcpu *t;

	if (!m || work >= VS__VCPU_WORKS || !m->cur || m->cur->id == work)
		return -EINVAL;
	t = &m->v[work];
	for (;;) {
		vs__vcpu_event(&t->gen, VS_VCPU_LOAD);
		/* No event between the check and the sleep: no lost wake. */
		if (t->state == VS__V_IDLE) {
			vs__mem_sync(m, t, m->cur);	/* its work, done */
			return 0;
		}
		(void)vs__vcpu_block(&t->gen, -1);
	}
}

int vs_machine_pick_vcpu(struct vs_machine *m)
{
	unsigned int i, best = 0;

	if (!m)
		return -EINVAL;
	for (i = 1; i < m->nr; i++)
		if (m->cpus[i].works < m->cpus[best].works)
			best = i;
	return (int)best;
}
