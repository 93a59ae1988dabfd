/* SPDX-License-Identifier: MIT */
/*
 * vcpu/futex.c - futex queues in virtual time: the vCPU build's
 * vmsim/wait.h.  A sleeper blocks on a word until a wake or its
 * deadline; a wake makes it runnable after the profile's wake latency.
 *
 * Locking: the machine's host thread, between events.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

int vs__vcpu_block(const volatile void *word, int64_t timeout_ns)
{
	struct vs_machine *m = vs__vcpu_machine;
	struct vs__vcpu *v = m->cur;

	if (m->coh) {		/* the sleeper's system call */
		v->clock += m->profile.syscall;
		m->cpus[v->cpu].st.cycles += m->profile.syscall;
		m->cpus[v->cpu].st.futex_cycles += m->profile.syscall;
	}
	v->wait_word = word;
	v->wait_ret = 0;
	v->deadline = UINT64_MAX;
	v->state = VS__V_BLOCKED;
	m->cpus[v->cpu].st.sleeps++;
	vs__mem_stop(m, v);	/* the system call drains its stores */
	vs__cpu_release(m, v);
	vs__fq_add(m, v);
	if (timeout_ns >= 0) {
		v->deadline = v->clock + (uint64_t)((double)timeout_ns *
						    m->ghz);
		vs__heap_push(m, v);
	}
	vs__hash_event(m, v->id, 0x100, v->clock);
	if (m->cfg.flags & VS_MACHINE_TRACE)
		vs__vcpu_trace(m, v, word, VS__TRACE_SLEEP, 0, 0);
	vs__run_next(m, v, 0);
	return v->wait_ret;
}

/* What the kernel says of a futex word: -EINVAL misaligned, -EFAULT
 * unmapped, 0 fine. */
static int word_check(const volatile void *word)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char vec;

	if ((uintptr_t)word & 3)
		return -EINVAL;
	if (mincore((void *)((uintptr_t)word & ~((uintptr_t)page - 1)),
		    (size_t)page, &vec) != 0)
		return -EFAULT;
	return 0;
}

int vs__vcpu_futex_wait(const volatile void *word, uint32_t val,
			int64_t timeout_ns)
{
	int err = word_check(word);

	if (err)
		return err;
	vs__vcpu_event(word, VS_VCPU_LOAD);
	if (*(const volatile uint32_t *)word != val)
		return -EAGAIN;
	return vs__vcpu_block(word, timeout_ns);
}

/* Wake up to @nr sleepers on @word, FIFO, at the waker's time at the
 * earliest.  No event: the caller accounts for it. */
int vs__wake(struct vs_machine *m, const volatile void *word, int nr,
		uint64_t now)
{
	struct vs__vcpu **p = vs__fq_head(m, word), *w;
	int woken = 0;

	while (*p && woken < nr) {
		w = *p;
		if (w->wait_word != word) {
			p = &w->wait_next;
			continue;
		}
		*p = w->wait_next;
		w->wait_next = NULL;
		vs__mem_sync(m, m->cur, w);	/* the wake orders */
		if (w->heap_idx >= 0)
			vs__heap_remove(m, w);
		/* The sleeper is scheduled again after the wake latency. */
		vs__make_runnable(m, w, now + (m->coh ?
					   m->profile.wake_latency : 0), 0);
		woken++;
	}
	return woken;
}

int vs__vcpu_futex_wake(const volatile void *word, int nr)
{
	struct vs_machine *m = vs__vcpu_machine;
	uint64_t cost;
	int woken;

	if (nr <= 0 || ((uintptr_t)word & 3))
		return -EINVAL;
	vs__vcpu_event(word, VS_VCPU_RMW);
	cost = m->coh ? m->profile.futex_wake : 0;
	woken = vs__wake(m, word, nr, m->cur->clock + cost);
	if (!woken && m->coh)	/* nobody asleep: a system call, no more */
		cost = m->profile.syscall;
	m->cur->clock += cost;
	m->cpus[m->cur->cpu].st.cycles += cost;
	m->cpus[m->cur->cpu].st.futex_cycles += cost;
	vs__hash_event(m, m->cur->id, 0x200 | (unsigned int)woken, m->cur->clock);
	return woken;
}

void vs__vcpu_yield(void)
{
	vs__vcpu_event(NULL, VS_VCPU_RELAX);
}
