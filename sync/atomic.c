/* SPDX-License-Identifier: MIT */
/*
 * sync/atomic.c - what vmsim/atomic.h does out of line: the heavy side
 * of the asymmetric barrier (see vs_smp_mb_light()), membarrier(2),
 * registered once per process.
 */
#include <vmsim/atomic.h>

#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

int vs__have_membarrier;

static pthread_once_t membarrier_once = PTHREAD_ONCE_INIT;

static int sys_membarrier(int cmd)
{
	return (int)syscall(__NR_membarrier, cmd, 0, 0);
}

static void membarrier_probe(void)
{
	const char *off = getenv("VS_NO_MEMBARRIER");
	int mask;

	/* VS_NO_MEMBARRIER=1 tests the fallback on a kernel that has it. */
	if (off && off[0] == '1')
		return;
	mask = sys_membarrier(MEMBARRIER_CMD_QUERY);

	if (mask < 0 || !(mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		return;
	if (sys_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0)
		return;
	vs__have_membarrier = 1;
}

int vs_membarrier_init(void)
{
	pthread_once(&membarrier_once, membarrier_probe);
	return vs__have_membarrier;
}

void vs_smp_mb_heavy(void)
{
	if (VS_VCPU || !vs__have_membarrier) {
		vs_smp_mb();	/* vCPUs share one host thread */
		return;
	}
	/*
	 * Orders this thread's accesses against every light barrier of every
	 * other running thread; a thread that is not running is switched in
	 * and out through the scheduler, which is a full barrier.
	 */
	if (sys_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0)
		vs__die("membarrier", errno);
}
