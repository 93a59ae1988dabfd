/* SPDX-License-Identifier: MIT */
/* sync/internal.h - shared inside sync/ only. */
#ifndef VS_SYNC_INTERNAL_H
#define VS_SYNC_INTERNAL_H

#include <stdint.h>
#include <time.h>

/* Print "vmsim: @what: strerror(@err)" and abort: an impossible failure. */
_Noreturn void vs__die(const char *what, int err);

/* Monotonic clock in nanoseconds. */
static inline uint64_t vs__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Around a futex sleep under urcu-qsbr: put an online, registered thread
 * offline (returns 1) and back online afterwards.  No-ops under memb.
 */
int vs__rcu_sleep_begin(void);
void vs__rcu_sleep_end(void);

#endif /* VS_SYNC_INTERNAL_H */
