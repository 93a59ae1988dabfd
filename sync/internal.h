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
 * Planted protocol bugs.  A build configured with -DVS_BROKEN=name (the
 * names below, with '-' for '_') compiles one of them in, and the test
 * suite must then fail: docs/testing.md lists what catches each.  In a
 * normal build every VS_BROKEN(x) is a constant 0.
 */
enum {
	VS__BROKEN_none,
	VS__BROKEN_rwsem_reader_barges,
	VS__BROKEN_rwsem_wake_one_reader,
	VS__BROKEN_percpu_no_rcu_sync,
	VS__BROKEN_prwlock_reader_ignores_flag,
	VS__BROKEN_brlock_writer_skips_shared_slot,
	VS__BROKEN_rcu_no_grace_period,
	VS__BROKEN_vma_no_write_mark,
	VS__BROKEN_vma_free_no_rcu,
	VS__BROKEN_spf_skip_seq_revalidate,
	VS__BROKEN_pervma_ignore_lock_seq,
	VS__BROKEN_fault_no_pte_same,
	VS__BROKEN_uffd_writeback_no_wp,
	VS__BROKEN_uffd_install_no_seq,
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
