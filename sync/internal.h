/* SPDX-License-Identifier: MIT */
/*
 * sync/internal.h - shared inside the library only (sync/, and the
 * planted-bug switch and vs__die for vm/ and fault/).
 */
#ifndef VS_SYNC_INTERNAL_H
#define VS_SYNC_INTERNAL_H

#include <stdint.h>
#include <time.h>

/*
 * Planted protocol bugs, listed in broken.def.  A build configured with
 * -DVS_BROKEN=name (with '-' for '_') compiles one of them in, and its
 * suite must then fail (the teeth-NAME tests).  In a normal build every
 * VS_BROKEN(x) is a constant 0.
 */
enum {
	VS__BROKEN_none,
#define VS_BUG(name, suite, sanitize, what) VS__BROKEN_##name,
#include "broken.def"
#undef VS_BUG
};
#ifndef VS_BROKEN_ID
#define VS_BROKEN_ID VS__BROKEN_none
#endif
#define VS_BROKEN(name) (VS_BROKEN_ID == VS__BROKEN_##name)

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
