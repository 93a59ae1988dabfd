/* SPDX-License-Identifier: MIT */
#include <vmsim/wait.h>

#include <errno.h>
#include <sched.h>

#include <vmsim/vcpu_annotate.h>

#include "internal.h"

int vs_futex_wait(vs_atomic32_t *word, uint32_t val, int64_t timeout_ns)
{
	struct timespec ts, *tsp = NULL;
	int offline, ret;

	if (VS_VCPU && vs__vcpu_cur >= 0)
		return vs__vcpu_futex_wait(word, val, timeout_ns);
	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
		tsp = &ts;
	}
	offline = vs__rcu_sleep_begin();
	ret = (int)vs__sys_futex(word, FUTEX_WAIT_PRIVATE, val, tsp);
	if (offline)
		vs__rcu_sleep_end();
	if (ret == 0)
		return 0;
	/* -EAGAIN, -ETIMEDOUT, -EINTR; -EFAULT or -EINVAL for a bad @word
	 * or timeout. */
	return -errno;
}

int vs_futex_wake(vs_atomic32_t *word, int nr)
{
	long ret;

	if (nr <= 0)
		return -EINVAL;
	if (VS_VCPU && vs__vcpu_cur >= 0)
		return vs__vcpu_futex_wake(word, nr);
	ret = vs__sys_futex(word, FUTEX_WAKE_PRIVATE, (uint32_t)nr, NULL);
	if (ret < 0)
		return errno == EFAULT ? 0 : -errno;
	return (int)ret;
}

void vs_yield(void)
{
	if (VS_VCPU && vs__vcpu_cur >= 0)
		vs__vcpu_yield();
	else
		(void)sched_yield();
}
