/* SPDX-License-Identifier: MIT */
/*
 * vmsim/wait.h - the one seam for blocking.
 *
 * Every sleep in vmsim is a wait on a 32-bit word: the sleeper states the
 * value it saw, and sleeps only while the word still holds it (futex(2)
 * semantics, process-private).  No other file calls futex directly.
 */
#ifndef VMSIM_WAIT_H
#define VMSIM_WAIT_H

#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "common.h"

/* Private: the futex(2) system call on a process-private word. */
static inline long vs__sys_futex(vs_atomic32_t *word, int op, uint32_t val,
				 const struct timespec *timeout)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, timeout,
		       NULL, 0);
}

/**
 * vs_futex_wait - sleep while *@word == @val
 * @word: the word to wait on
 * @val: the value the caller saw; the call returns at once if it changed
 * @timeout_ns: relative timeout in nanoseconds, or -1 to wait forever
 *
 * Wakeups may be spurious: callers re-check their condition in a loop.
 * Under urcu-qsbr a registered thread between read-side sections is put
 * offline for the sleep; inside a section it sleeps online (the grace
 * period waits for it, as it must).
 *
 * Context: may sleep; inside an RCU read-side section only for short
 * waits (a contended page-table lock), since it delays grace periods.
 * Return: 0 when woken (or spuriously), -EAGAIN when *@word != @val,
 * -ETIMEDOUT, -EINTR; -EFAULT for an unmapped @word, -EINVAL for a
 * misaligned one.
 */
VS_EXTERN int vs_futex_wait(vs_atomic32_t *word, uint32_t val,
			    int64_t timeout_ns);

/**
 * vs_futex_wake - wake up to @nr threads sleeping on @word
 * @word: the word
 * @nr: how many to wake; INT32_MAX wakes all
 *
 * Context: any.  @word may already be freed memory of an exited sleeper:
 * the kernel only hashes the address, so a stale wake is harmless (an
 * unmapped one wakes nobody).
 * Return: the number of threads woken; -EINVAL for @nr <= 0 or a
 * misaligned @word.
 */
VS_EXTERN int vs_futex_wake(vs_atomic32_t *word, int nr);

/**
 * vs_yield - give the CPU to another runnable thread (sched_yield(2))
 *
 * For a spinner whose lock holder may have been preempted (user space
 * cannot disable preemption).
 *
 * Context: any; outside RCU read-side sections preferably.
 */
VS_EXTERN void vs_yield(void);

#endif /* VMSIM_WAIT_H */
