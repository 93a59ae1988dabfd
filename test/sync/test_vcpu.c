/* SPDX-License-Identifier: MIT */
/*
 * test/sync/test_vcpu.c - the virtual-CPU engine (vmsim/vcpu.h): its
 * arguments, spawn and join, virtual-time timeouts, RCU grace periods
 * across vCPUs, the cost model applied to events, and deadlock reports.
 * It needs the seams, so it runs in vmsim-test-vcpu only; each test
 * makes its own machines (no fixture).
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <vmsim/lock.h>
#include <vmsim/lockstat.h>
#include <vmsim/rcu.h>
#include <vmsim/thread.h>
#include <vmsim/uffd.h>
#include <vmsim/vcpu.h>
#include <vmsim/wait.h>

#include "test.h"

static struct vs_machine *mach(unsigned int n,
			       const struct vs_vcpu_profile *p)
{
	struct vs_machine_config cfg = { .profile = p, .nr_vcpus = n,
					 .seed = 1 };
	struct vs_machine *m;

	ck_assert_int_eq(vs_machine_create(&m, &cfg), 0);
	return m;
}

static void nothing(void *arg)
{
	(void)arg;
}

START_TEST(vcpu_args)
{
	struct vs_machine_config cfg = { .nr_vcpus = 0 };
	struct vs_vcpu_profile p;
	struct vs_machine *m;
	char err[128];

	ck_assert_int_eq(vs_machine_create(NULL, &cfg), -EINVAL);
	ck_assert_int_eq(vs_machine_create(&m, NULL), -EINVAL);
	ck_assert_int_eq(vs_machine_create(&m, &cfg), -EINVAL);
	cfg.nr_vcpus = VS_VCPU_MAX + 1;
	ck_assert_int_eq(vs_machine_create(&m, &cfg), -EINVAL);
	ck_assert_int_eq(vs_vcpu_profile_load(&p, "ivb-ep-2x10x2", err,
					      sizeof(err)), 0);
	cfg.profile = &p;
	cfg.nr_vcpus = p.nr_cpus + 1;	/* more vCPUs than the machine's */
	ck_assert_int_eq(vs_machine_create(&m, &cfg), -EINVAL);
	cfg.nr_vcpus = 2;
	cfg.own_slots = VS_NR_SLOTS + 1;	/* more than there are */
	ck_assert_int_eq(vs_machine_create(&m, &cfg), -EINVAL);
	ck_assert_int_eq(vs_machine_destroy(NULL), -EINVAL);
	m = mach(2, NULL);
	ck_assert_int_eq(vs_machine_run(m, NULL, NULL), -EINVAL);
	ck_assert_int_eq(vs_machine_run(NULL, nothing, NULL), -EINVAL);
	ck_assert_int_eq(vs_machine_spawn(m, 2, nothing, NULL), -EINVAL);
	ck_assert_int_eq(vs_machine_run(m, nothing, NULL), 0);
	ck_assert_int_eq(vs_vcpu_self(), -1);
	ck_assert_int_eq(vs_machine_destroy(m), 0);
}
END_TEST

/* What virtual CPUs cannot run is refused: a uffd region delivered by
 * handler threads or a loop (host threads), the pthread lock kind. */
START_TEST(vcpu_refused)
{
	struct vs_uffd_options o = { .mode = VS_UFFD_THREADS };
	struct vs_uffd *u = NULL;
	struct vs_lock l;

	ck_assert_int_eq(vs_uffd_create(&u, &o), -EOPNOTSUPP);
	o.mode = VS_UFFD_UV;
	ck_assert_int_eq(vs_uffd_create(&u, &o), -EOPNOTSUPP);
	ck_assert_ptr_null(u);
	ck_assert_int_eq(vs_lock_init(&l, "pthread", NULL), -EOPNOTSUPP);
}
END_TEST

/* ---- spawn and join --------------------------------------------------- */

static struct vs_machine *cur;
static vs_atomic_long_t sum;

static void adder(void *arg)
{
	int i;

	for (i = 0; i < 1000; i++)
		vs_fetch_add(&sum, (long)(uintptr_t)arg);
}

/* Seven pieces of work on 4 vCPUs (vCPU 0 runs the spawner too): they
 * take turns on their vCPUs and all finish. */
static void spawner(void *arg)
{
	int id[7];
	unsigned int i;

	(void)arg;
	for (i = 0; i < 7; i++) {
		id[i] = vs_machine_spawn(cur, 1 + i % 3, adder,
					 (void *)(uintptr_t)(i + 1));
		ck_assert_int_gt(id[i], 0);
	}
	ck_assert_int_eq(vs_machine_spawn(cur, 4, adder, NULL), -EINVAL);
	ck_assert_int_eq(vs_machine_join(cur, 0), -EINVAL);	/* itself */
	for (i = 0; i < 7; i++)
		ck_assert_int_eq(vs_machine_join(cur, (unsigned int)id[i]), 0);
	ck_assert_int_eq(vs_read_once(&sum), 28000);
	ck_assert_int_eq(vs_machine_pick_vcpu(cur), 1);
}

START_TEST(vcpu_spawn_join)
{
	struct vs_machine_stats st;

	cur = mach(4, NULL);
	vs_atomic_init(&sum, 0);
	ck_assert_int_eq(vs_machine_run(cur, spawner, NULL), 0);
	ck_assert_int_eq(vs_machine_stats(cur, -1, &st), 0);
	ck_assert_uint_ge(st.events, 3000);
	ck_assert_uint_eq(st.rmws >= 3000, 1);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/* ---- slots -------------------------------------------------------------- */

static unsigned int slot_of[4];
static vs_atomic32_t noted;

/* Note the slot of the context it runs on; wait for the others, so that
 * none ends and has its context reused. */
static void note_slot(void *arg)
{
	(void)arg;
	slot_of[vs_vcpu_self()] = vs__thread_slot();
	(void)vs_fetch_add(&noted, 1);
	while (vs_read_once(&noted) < 3)
		vs_cpu_relax();
}

static void slot_noters(void *arg)
{
	int id[3], i;

	(void)arg;
	vs_atomic_init(&noted, 0);
	for (i = 0; i < 3; i++)
		id[i] = vs_machine_spawn(cur, (unsigned int)i + 1, note_slot,
					 NULL);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(vs_machine_join(cur, (unsigned int)id[i]), 0);
	slot_of[0] = vs__thread_slot();
}

/* Context i owns slot i, or with own_slots = 2 the contexts from 2 on
 * share VS_SLOT_SHARED; after the run every context owns its own again. */
START_TEST(vcpu_own_slots)
{
	struct vs_machine_config cfg = { .nr_vcpus = 4 };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		cfg.own_slots = 2 * i;
		ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
		ck_assert_int_eq(vs_machine_run(cur, slot_noters, NULL), 0);
		ck_assert_uint_eq(slot_of[0], 0);
		ck_assert_uint_eq(slot_of[1], 1);
		ck_assert_uint_eq(slot_of[2], i ? VS_SLOT_SHARED : 2u);
		ck_assert_uint_eq(slot_of[3], i ? VS_SLOT_SHARED : 3u);
		ck_assert_int_eq(vs_machine_destroy(cur), 0);
	}
	ck_assert_int_eq(vs__vcpu_own_slots, VS_NR_SLOTS);
}
END_TEST

/* ---- time --------------------------------------------------------------- */

static void sleeper(void *arg)
{
	vs_atomic32_t word = 0;
	uint64_t t0 = vs_vcpu_now_ns();

	(void)arg;
	ck_assert_int_eq(vs_futex_wait(&word, 0, 1000000), -ETIMEDOUT);
	ck_assert_uint_ge(vs_vcpu_now_ns() - t0, 1000000);
}

/* A timeout is virtual: it expires while the host hardly waits, and
 * another vCPU meanwhile runs. */
START_TEST(vcpu_timeout)
{
	cur = mach(2, NULL);
	vs_atomic_init(&sum, 0);
	ck_assert_int_eq(vs_machine_run(cur, sleeper, NULL), 0);
	ck_assert_uint_ge(vs_machine_clock(cur, 0), 1000000);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/* The profile's costs: a line nobody holds comes from memory (a store
 * pays for it at the next fence), then the vCPU holds it and pays hits,
 * exactly. */
static struct vs_vcpu_profile ep;

static void private_stores(void *arg)
{
	VS_CACHELINE_ALIGNED vs_atomic64_t line;
	uint64_t c0, c1;
	int i;

	(void)arg;
	c0 = vs_machine_clock(cur, 0);
	/* The first store retires into the store buffer; the fence waits
	 * for its line. */
	vs_write_once(&line, 0);
	vs_smp_mb();
	for (i = 1; i < 100; i++)
		vs_write_once(&line, (uint64_t)i);
	c1 = vs_machine_clock(cur, 0);
	ck_assert_uint_eq(c1 - c0, ep.memory + ep.fence +
			  99 * (uint64_t)ep.hit);
}

START_TEST(vcpu_costs)
{
	char err[128];

	ck_assert_int_eq(vs_vcpu_profile_load(&ep, "ivb-ep-2x10x2", err,
					      sizeof(err)), 0);
	cur = mach(2, &ep);
	ck_assert_ptr_nonnull(vs_machine_coherence(cur));
	ck_assert_int_eq(vs_machine_run(cur, private_stores, NULL), 0);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/*
 * A compare-and-swap loop on one line, as down_read_trylock() is: a
 * load, then cmpxchg until it succeeds.  The vCPU whose cmpxchg failed
 * received the line with it and retries before the next request's
 * snoop reaches it, so the retry succeeds: on 8 vCPUs of the EP, 654
 * failures for 1600 successes.  Were each retry queued behind the
 * others' requests (a strict FIFO), there would be 11132.
 */
#define CAS_ROUNDS 200
static vs_atomic_long_t cas_word;
static vs_atomic_long_t cas_fails;

static void cas_worker(void *arg)
{
	long v, fails = 0;
	int i;

	(void)arg;
	for (i = 0; i < CAS_ROUNDS; i++) {
		v = vs_read_once(&cas_word);
		while (!vs_cmpxchg(&cas_word, &v, v + 1))
			fails++;
	}
	vs_fetch_add(&cas_fails, fails);
}

static void cas_main(void *arg)
{
	int id[7], i;

	(void)arg;
	for (i = 0; i < 7; i++)
		id[i] = vs_machine_spawn(cur, (unsigned int)i + 1, cas_worker,
					 NULL);
	cas_worker(NULL);
	for (i = 0; i < 7; i++)
		ck_assert_int_eq(vs_machine_join(cur, (unsigned int)id[i]), 0);
}

START_TEST(vcpu_cas_retry_holds_the_line)
{
	char err[128];

	ck_assert_int_eq(vs_vcpu_profile_load(&ep, "ivb-ep-2x10x2", err,
					      sizeof(err)), 0);
	cur = mach(8, &ep);
	vs_write_once(&cas_word, 0);
	vs_write_once(&cas_fails, 0);
	ck_assert_int_eq(vs_machine_run(cur, cas_main, NULL), 0);
	ck_assert_int_eq(vs_read_once(&cas_word), 8 * CAS_ROUNDS);
	ck_assert_int_gt(vs_read_once(&cas_fails), 0);	/* it contended */
	ck_assert_int_le(vs_read_once(&cas_fails), 8 * CAS_ROUNDS);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/*
 * VS_MACHINE_NO_TRAPS: a fault's entry and exit and a VM call's system
 * call cost nothing (vmsim on real threads), a clear and a futex
 * sleep's system call still do.
 */
static void no_traps_fn(void *arg)
{
	static vs_atomic32_t never;
	struct vs_machine_stats st;
	uint64_t c0 = vs_machine_clock(cur, 0);

	(void)arg;
	vs_vcpu_work(VS_VCPU_FAULT, NULL, 0);
	vs_vcpu_work(VS_VCPU_SYSCALL, NULL, 0);
	ck_assert_uint_eq(vs_machine_clock(cur, 0), c0);
	vs_vcpu_work(VS_VCPU_CLEAR, NULL, 4096);
	ck_assert_uint_gt(vs_machine_clock(cur, 0), c0);
	ck_assert_int_eq(vs_futex_wait(&never, 0, 1000), -ETIMEDOUT);
	ck_assert_int_eq(vs_machine_stats(cur, 0, &st), 0);
	ck_assert_uint_eq(st.futex_cycles, ep.syscall);
	ck_assert_uint_eq(st.work_cycles[VS_VCPU_FAULT], 0);
	ck_assert_uint_eq(st.work_cycles[VS_VCPU_SYSCALL], 0);
}

START_TEST(vcpu_no_traps)
{
	struct vs_machine_config cfg = { .profile = &ep, .nr_vcpus = 1,
					 .seed = 1,
					 .flags = VS_MACHINE_NO_TRAPS };
	char err[128];

	ck_assert_int_eq(vs_vcpu_profile_load(&ep, "ivb-ep-2x10x2", err,
					      sizeof(err)), 0);
	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	ck_assert_int_eq(vs_machine_run(cur, no_traps_fn, NULL), 0);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/* ---- vcpu-calibrate's probe, on the model ---------------------------- */

#define PP_ROUNDS 200
static vs_atomic64_t ball;

/* tools/calib_pair.c's echo: write v + 1 on each odd v seen. */
static void pp_echo(void *arg)
{
	uint64_t want;

	(void)arg;
	for (want = 1; want < 2 * PP_ROUNDS; want += 2) {
		while (vs_load_acquire(&ball) != want)
			;
		vs_store_release(&ball, want + 1);
	}
}

static void pp_main(void *arg)
{
	uint64_t v, t0, t1;
	int id;

	(void)arg;
	id = vs_machine_spawn(cur, 1, pp_echo, NULL);
	ck_assert_int_gt(id, 0);
	/* A first round trip brings the line and the echo in. */
	vs_store_release(&ball, 1);
	while (vs_load_acquire(&ball) != 2)
		;
	t0 = vs_machine_clock(cur, 0);
	for (v = 3; v < 2 * PP_ROUNDS; v += 2) {
		vs_store_release(&ball, v);
		while (vs_load_acquire(&ball) != v + 1)
			;
	}
	t1 = vs_machine_clock(cur, 0);
	ck_assert_int_eq(vs_machine_join(cur, (unsigned int)id), 0);
	*(uint64_t *)arg = (t1 - t0) / (PP_ROUNDS - 1);
}

/*
 * vcpu-calibrate reports a quarter of this round trip as a transfer
 * (tools/calib.h): run on the model, the probe must give back the
 * profile's transfer, within 10 %, or calibrated profiles would be off
 * by the ratio.  (It gives 302 cycles for 4 x 79: a receiver that still
 * holds the line lets the next request start half a transfer early.)
 */
START_TEST(vcpu_calibrate_probe_round_trip)
{
	uint64_t round = 0;
	char err[128];

	ck_assert_int_eq(vs_vcpu_profile_load(&ep, "ivb-ep-2x10x2", err,
					      sizeof(err)), 0);
	cur = mach(2, &ep);
	vs_atomic_init(&ball, 0);
	ck_assert_int_eq(vs_machine_run(cur, pp_main, &round), 0);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
	ck_assert_msg(round * 10 >= 36 * (uint64_t)ep.same_socket &&
		      round * 10 <= 44 * (uint64_t)ep.same_socket,
		      "round trip %llu cycles, transfer %u",
		      (unsigned long long)round, ep.same_socket);
}
END_TEST

/* ---- where the cycles went ------------------------------------------- */

static vs_atomic32_t go;
static vs_atomic_long_t acct_sum;

/* Sleep until main says go, then work of every kind. */
static vs_atomic32_t acct_irqs;	/* interrupts delivered to a busy vCPU */

static void acct_worker(void *arg)
{
	int i;

	(void)arg;
	while (vs_read_once(&go) == 0)
		(void)vs_futex_wait(&go, 0, -1);
	vs_vcpu_work(VS_VCPU_CLEAR, NULL, 4096);
	vs_vcpu_work(VS_VCPU_COPY, NULL, 4096);
	vs_vcpu_work(VS_VCPU_FAULT, NULL, 0);
	vs_vcpu_work(VS_VCPU_SYSCALL, NULL, 0);
	vs_vcpu_work(VS_VCPU_KERNEL, NULL, 77);
	vs_vcpu_work(VS_VCPU_IRQ, NULL, 1000);	/* not the caller's: ignored */
	vs_vcpu_charge(123);
	ck_assert_int_eq(vs_vcpu_interrupt(vs_vcpu_cpu(), 1), -EINVAL);
	ck_assert_int_eq(vs_vcpu_interrupt(2, 1), -EINVAL);
	/* Nobody sleeps on acct_sum: a system call, not a wake-up. */
	ck_assert_int_eq(vs_futex_wake((vs_atomic32_t *)&acct_sum, 1), 0);
	for (i = 0; i < 100; i++) {
		vs_fetch_add(&acct_sum, 1L);
		/* The other vCPU, busy in this loop too, takes a handler. */
		if (i == 10 && vs_vcpu_interrupt(1 - vs_vcpu_cpu(), 500) == 1)
			vs_fetch_add(&acct_irqs, 1);
		vs_cpu_relax();
	}
}

/* Five contexts on two vCPUs: switches, futex sleeps and wakes. */
static void acct_main(void *arg)
{
	int id[4], i;

	(void)arg;
	for (i = 0; i < 4; i++) {
		id[i] = vs_machine_spawn(cur, (unsigned int)i % 2, acct_worker,
					 NULL);
		ck_assert_int_gt(id[i], 0);
	}
	vs_vcpu_charge(50000);	/* the workers go to sleep meanwhile */
	vs_write_once(&go, 1);
	ck_assert_int_ge(vs_futex_wake(&go, INT32_MAX), 1);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(vs_machine_join(cur, (unsigned int)id[i]), 0);
}

/* The sum of the parts of @st's cycles. */
static uint64_t parts(const struct vs_machine_stats *st)
{
	uint64_t sum = st->access_cycles + st->pause_cycles +
		       st->futex_cycles + st->switch_cycles +
		       st->charge_cycles + st->sleep_cycles;
	int w;

	for (w = 0; w < VS_VCPU_WORK_NR; w++)
		sum += st->work_cycles[w];
	return sum;
}

static void fences_fn(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 10; i++) {
		vs_smp_rmb();
		vs_smp_wmb();
	}
	for (i = 0; i < 3; i++)
		vs_smp_mb();
}

/* x86-64 emits no instruction for smp_rmb() and smp_wmb(): they are
 * events (a scheduler may switch there) that cost nothing; smp_mb()
 * costs the profile's fence. */
START_TEST(vcpu_fence_costs)
{
	struct vs_machine_stats st;
	char err[128];

	ck_assert_int_eq(vs_vcpu_profile_load(&ep, "ivb-ep-2x10x2", err,
					      sizeof(err)), 0);
	cur = mach(1, &ep);
	ck_assert_int_eq(vs_machine_run(cur, fences_fn, NULL), 0);
	ck_assert_int_eq(vs_machine_stats(cur, 0, &st), 0);
	ck_assert_uint_eq(st.events, 23);
	ck_assert_uint_eq(st.access_cycles, 3 * (uint64_t)ep.fence);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/* Every cycle a clock advances lands in exactly one part of cycles, and
 * every part is exercised: leaving one out of the sum would fail. */
START_TEST(vcpu_cycle_partition)
{
	struct vs_machine_stats st, one;
	char err[128];
	uint64_t sum = 0;
	int i, w;

	ck_assert_int_eq(vs_vcpu_profile_load(&ep, "ivb-ep-2x10x2", err,
					      sizeof(err)), 0);
	cur = mach(2, &ep);
	vs_atomic_init(&acct_sum, 0);
	vs_atomic_init(&acct_irqs, 0);
	vs_atomic_init(&go, 0);
	ck_assert_int_eq(vs_machine_run(cur, acct_main, NULL), 0);
	ck_assert_int_eq(vs_read_once(&acct_sum), 400);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(vs_machine_stats(cur, i, &one), 0);
		ck_assert_uint_eq(parts(&one), one.cycles);
		sum += one.cycles;
	}
	ck_assert_int_eq(vs_machine_stats(cur, -1, &st), 0);
	ck_assert_uint_eq(parts(&st), st.cycles);
	ck_assert_uint_eq(sum, st.cycles);
	ck_assert_uint_gt(st.access_cycles, 0);
	ck_assert_uint_eq(st.pause_cycles, 400 * (uint64_t)ep.pause);
	for (w = 0; w < VS_VCPU_WORK_NR; w++)
		ck_assert_uint_gt(st.work_cycles[w], 0);
	ck_assert_uint_eq(st.work_cycles[VS_VCPU_FAULT],
			  4 * ((uint64_t)ep.fault_entry + ep.fault_exit));
	ck_assert_uint_eq(st.work_cycles[VS_VCPU_SYSCALL],
			  4 * (uint64_t)ep.syscall);
	ck_assert_uint_eq(st.work_cycles[VS_VCPU_KERNEL], 4 * 77);
	/* Each handler delivered is paid with an exception's entry and
	 * exit, at the target's next event. */
	ck_assert_uint_eq(st.work_cycles[VS_VCPU_IRQ] %
			  (500 + (uint64_t)ep.fault_entry + ep.fault_exit), 0);
	ck_assert_uint_le(st.work_cycles[VS_VCPU_IRQ],
			  vs_read_once(&acct_irqs) *
			  (500 + (uint64_t)ep.fault_entry + ep.fault_exit));
	ck_assert_uint_eq(st.futex_cycles, (st.sleeps + 4) * ep.syscall +
			  ep.futex_wake);
	ck_assert_uint_gt(st.switch_cycles, 0);
	ck_assert_uint_eq(st.switch_cycles % ep.context_switch, 0);
	ck_assert_uint_eq(st.charge_cycles, 50000 + 4 * 123);
	ck_assert_uint_gt(st.sleep_cycles, 0);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/* One context alone on its vCPU: its cycles are the vCPU's clock, the
 * timed-out sleep included. */
START_TEST(vcpu_cycles_are_the_clock)
{
	struct vs_machine_stats st;
	char err[128];

	ck_assert_int_eq(vs_vcpu_profile_load(&ep, "ivb-ep-2x10x2", err,
					      sizeof(err)), 0);
	cur = mach(1, &ep);
	ck_assert_int_eq(vs_machine_run(cur, sleeper, NULL), 0);
	ck_assert_int_eq(vs_machine_stats(cur, 0, &st), 0);
	ck_assert_uint_eq(st.cycles, vs_machine_clock(cur, 0));
	ck_assert_uint_eq(st.cycles, vs_machine_clock(cur, -1));
	ck_assert_uint_eq(parts(&st), st.cycles);
	ck_assert_uint_ge(st.sleep_cycles, 1000000 * ep.ghz - ep.syscall);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/* ---- RCU ---------------------------------------------------------------- */

static vs_atomic32_t in_section, reader_done, gp_done;

static void rcu_reader(void *arg)
{
	int i;

	(void)arg;
	vs_rcu_read_lock();
	vs_write_once(&in_section, 1);
	for (i = 0; i < 2000; i++)	/* long enough for the writer */
		vs_cpu_relax();
	ck_assert_int_eq(vs_read_once(&gp_done), 0);
	vs_write_once(&reader_done, 1);
	vs_rcu_read_unlock();
}

static void rcu_writer(void *arg)
{
	(void)arg;
	ck_assert_int_eq(vs_machine_spawn(cur, 1, rcu_reader, NULL), 1);
	while (!vs_read_once(&in_section))
		vs_cpu_relax();
	vs_synchronize_rcu();
	ck_assert_int_eq(vs_read_once(&reader_done), 1);
	vs_write_once(&gp_done, 1);
}

/* synchronize_rcu() on one vCPU waits for a reader on another. */
START_TEST(vcpu_rcu_grace_period)
{
	vs_atomic_init(&in_section, 0);
	vs_atomic_init(&reader_done, 0);
	vs_atomic_init(&gp_done, 0);
	cur = mach(2, NULL);
	ck_assert_int_eq(vs_machine_run(cur, rcu_writer, NULL), 0);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/* ---- deadlock ----------------------------------------------------------- */

static struct vs_lock lock_a, lock_b;
static vs_atomic32_t has_a, has_b;

static void take_b_then_a(void *arg)
{
	(void)arg;
	vs_lock_write_lock(&lock_b);
	vs_write_once(&has_b, 1);
	while (!vs_read_once(&has_a))
		vs_cpu_relax();
	vs_lock_write_lock(&lock_a);	/* never */
}

static void take_a_then_b(void *arg)
{
	(void)arg;
	ck_assert_int_eq(vs_machine_spawn(cur, 1, take_b_then_a, NULL), 1);
	vs_lock_write_lock(&lock_a);
	vs_write_once(&has_a, 1);
	while (!vs_read_once(&has_b))
		vs_cpu_relax();
	vs_lock_write_lock(&lock_b);	/* never */
}

/* Two vCPUs take two locks in opposite order: the run stops with a
 * report of both, with the locks each holds, instead of hanging.
 * Lockdep, when compiled in, reports the inversion before that. */
START_TEST(vcpu_deadlock_reported)
{
	const char *r;
	int lockdep_reports = 0;

	vs_lockdep_set_report(vs_test_lockdep_count, &lockdep_reports);
	ck_assert_int_eq(vs_lock_init(&lock_a, "rwsem", "dl_lock_a"), 0);
	ck_assert_int_eq(vs_lock_init(&lock_b, "rwsem", "dl_lock_b"), 0);
	vs_lockstat_enable(1);	/* it tracks the held locks */
	vs_atomic_init(&has_a, 0);
	vs_atomic_init(&has_b, 0);
	cur = mach(2, NULL);
	ck_assert_int_eq(vs_machine_run(cur, take_a_then_b, NULL), -EDEADLK);
	r = vs_machine_report(cur);
	if (getenv("VS_TEST_VERBOSE"))
		fputs(r, stderr);
	ck_assert_msg(strstr(r, "deadlock") != NULL, "report: %s", r);
	ck_assert_msg(strstr(r, "vCPU 0 (work 0): blocked") &&
		      strstr(r, "vCPU 1 (work 1): blocked"), "report: %s", r);
	ck_assert_msg(strstr(r, "holds: dl_lock_a (write)") &&
		      strstr(r, "holds: dl_lock_b (write)"), "report: %s", r);
	/* Each vCPU's last events, the other's lock by its class (made on
	 * the host, found in the lock registry). */
	ck_assert_msg(strstr(r, "rmw dl_lock_b+0\n") &&
		      strstr(r, "rmw dl_lock_a+0\n"), "report: %s", r);
	ck_assert_int_eq(lockdep_reports, VS_LOCKDEP ? 1 : 0);
	vs_lockdep_set_report(NULL, NULL);
	/* Its vCPUs stay blocked until a reset, which drops them and the
	 * locks they held. */
	ck_assert_int_eq(vs_machine_run(cur, nothing, NULL), -EBUSY);
	ck_assert_int_eq(vs_machine_reset(cur, 1), 0);
	ck_assert_int_eq(vs_machine_run(cur, nothing, NULL), 0);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/* ---- failures, the stuck bound and reset ------------------------------- */

static vs_atomic32_t step;

static void fail_at_third(void *arg)
{
	(void)arg;
	while (vs_fetch_add(&step, 1) < 2)
		;
	(void)vs_machine_fail("step %d went wrong", 3);
	ck_abort_msg("vs_machine_fail returned on a vCPU");
}

static void spawn_failer(void *arg)
{
	int id = vs_machine_spawn(cur, 1, fail_at_third, NULL);

	(void)arg;
	ck_assert_int_eq(id, 1);
	(void)vs_machine_join(cur, (unsigned int)id);
	ck_abort_msg("joined a work that failed");
}

/* The same work on a new machine and on @m after a reset: the same
 * events, bit for bit. */
static void same_as_new(struct vs_machine *m,
			const struct vs_vcpu_profile *p, uint64_t seed)
{
	struct vs_machine_config cfg = { .profile = p, .nr_vcpus = 4,
					 .seed = seed };
	struct vs_machine *fresh;
	uint64_t h;

	ck_assert_int_eq(vs_machine_create(&fresh, &cfg), 0);
	cur = fresh;
	vs_atomic_init(&sum, 0);
	ck_assert_int_eq(vs_machine_run(fresh, spawner, NULL), 0);
	h = vs_machine_hash(fresh);
	ck_assert_int_eq(vs_machine_destroy(fresh), 0);
	ck_assert_int_eq(vs_machine_reset(m, seed), 0);
	cur = m;
	vs_atomic_init(&sum, 0);
	ck_assert_int_eq(vs_machine_run(m, spawner, NULL), 0);
	ck_assert_uint_eq(vs_machine_hash(m), h);
}

/* A check that fails on a vCPU stops the run with its message, the
 * failing work and the time; the machine then runs only after a reset,
 * and a reset machine runs as a new one. */
START_TEST(vcpu_fail_then_reset)
{
	struct vs_vcpu_profile p;
	char first[512], err[128];
	const char *r;
	int i;

	ck_assert_int_eq(vs_machine_fail("not on a vCPU"), -EINVAL);
	cur = mach(4, NULL);
	for (i = 0; i < 3; i++) {
		vs_atomic_init(&step, 0);
		ck_assert_int_eq(vs_machine_run(cur, spawn_failer, NULL),
				 -ECANCELED);
		r = vs_machine_report(cur);
		ck_assert_msg(strstr(r, "failed: work 1 on vCPU 1") &&
			      strstr(r, "step 3 went wrong"), "report: %s", r);
		if (i == 0)
			snprintf(first, sizeof(first), "%s", r);
		ck_assert_str_eq(r, first);	/* every time the same */
		ck_assert_int_eq(vs_machine_run(cur, nothing, NULL), -EBUSY);
		ck_assert_int_eq(vs_machine_reset(cur, 1), 0);
	}
	ck_assert_int_eq(vs_machine_reset(NULL, 1), -EINVAL);
	same_as_new(cur, NULL, 42);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
	/* With a profile too: the cost model's lines start again. */
	ck_assert_int_eq(vs_vcpu_profile_load(&p, "ivb-ep-2x10x2", err,
					      sizeof(err)), 0);
	cur = mach(4, &p);
	vs_atomic_init(&sum, 0);
	ck_assert_int_eq(vs_machine_run(cur, spawner, NULL), 0);
	same_as_new(cur, &p, 7);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

static vs_atomic32_t ping, pong;

static void spin_until_set(void *flag)
{
	while (!vs_read_once((vs_atomic32_t *)flag))
		vs_cpu_relax();
}

/* vCPU 1 waits for ping, vCPU 0 for pong: neither is ever set. */
static void livelock(void *arg)
{
	(void)arg;
	(void)vs_machine_spawn(cur, 1, spin_until_set, &ping);
	spin_until_set(&pong);
}

/* ---- freed memory ------------------------------------------------------ */

static vs_atomic64_t *freed;	/* 4 words: [1] and [2] are poisoned */

static void free_then_touch(void *arg)
{
	long at = (long)arg;

	vs_vcpu_name(freed, 4 * sizeof(*freed), "the test's object");
	vs_vcpu_poison(&freed[1], 2 * sizeof(*freed));
	(void)vs_read_once(&freed[0]);		/* not freed */
	(void)vs_read_once(&freed[3]);
	if (at < 0)
		vs_vcpu_unpoison(&freed[1], 2 * sizeof(*freed));
	(void)vs_read_once(&freed[at < 0 ? 1 : at]);
}

/* With VS_MACHINE_CHECK_FREED an event on poisoned bytes fails the run,
 * naming the object, the access and who freed it; the bytes around do
 * not, unpoisoned ones do not, and without the flag nothing is checked. */
START_TEST(vcpu_use_after_free)
{
	struct vs_machine_config cfg = { .nr_vcpus = 1,
					 .flags = VS_MACHINE_CHECK_FREED };
	const char *r;

	freed = calloc(4, sizeof(*freed));
	ck_assert_ptr_nonnull(freed);
	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	ck_assert_int_eq(vs_machine_run(cur, free_then_touch, (void *)2L),
			 -ECANCELED);
	r = vs_machine_report(cur);
	ck_assert_msg(strstr(r, "use after free: a load of the test's "
			     "object+16, freed by work 0"), "report: %s", r);
	ck_assert_int_eq(vs_machine_reset(cur, 1), 0);	/* forgets it */
	ck_assert_int_eq(vs_machine_run(cur, free_then_touch, (void *)-1L),
			 0);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
	cfg.flags = 0;
	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	ck_assert_int_eq(vs_machine_run(cur, free_then_touch, (void *)2L), 0);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
	cfg.flags = 0x80;
	ck_assert_int_eq(vs_machine_create(&cur, &cfg), -EINVAL);
	free(freed);
}
END_TEST

/* Two vCPUs that spin on each other forever: with max_events the run
 * fails as stuck, naming the bound, instead of running forever. */
START_TEST(vcpu_stuck)
{
	struct vs_machine_config cfg = { .nr_vcpus = 2, .seed = 1,
					 .max_events = 100000 };
	const char *r;

	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	vs_atomic_init(&ping, 0);
	vs_atomic_init(&pong, 0);
	ck_assert_int_eq(vs_machine_run(cur, livelock, NULL), -ECANCELED);
	r = vs_machine_report(cur);
	ck_assert_msg(strstr(r, "stuck: more than 100000 events"),
		      "report: %s", r);
	ck_assert_int_eq(vs_machine_reset(cur, 2), 0);
	ck_assert_int_eq(vs_machine_run(cur, nothing, NULL), 0);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

/* A stop request (what a SIGTERM handler makes) from work that then
 * spins: a stoppable machine's run ends at the next event with -EINTR,
 * naming the signal, and runs again after a reset; another machine's
 * run goes on to its end. */
static void stop_then_spin(void *arg)
{
	vs_vcpu_stop(SIGTERM);
	if (arg)
		livelock(NULL);
	else
		(void)vs_read_once(&ping);
}

START_TEST(vcpu_stopped)
{
	struct vs_machine_config cfg = { .nr_vcpus = 2, .seed = 1,
					 .max_events = 100000,
					 .flags = VS_MACHINE_STOPPABLE };
	const char *r;

	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	vs_atomic_init(&ping, 0);
	vs_atomic_init(&pong, 0);
	ck_assert_int_eq(vs_machine_run(cur, stop_then_spin, &ping), -EINTR);
	ck_assert_int_eq(vs_vcpu_stop_signal(), SIGTERM);
	r = vs_machine_report(cur);
	ck_assert_msg(strstr(r, "stopped by SIGTERM (15)"), "report: %s", r);
	ck_assert_int_eq(vs_machine_run(cur, nothing, NULL), -EBUSY);
	vs_vcpu_stop_clear();
	ck_assert_int_eq(vs_vcpu_stop_signal(), 0);
	ck_assert_int_eq(vs_machine_reset(cur, 2), 0);
	ck_assert_int_eq(vs_machine_run(cur, nothing, NULL), 0);
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
	cfg.flags = 0;
	ck_assert_int_eq(vs_machine_create(&cur, &cfg), 0);
	ck_assert_int_eq(vs_machine_run(cur, stop_then_spin, NULL), 0);
	ck_assert_int_eq(vs_vcpu_stop_signal(), SIGTERM);
	vs_vcpu_stop_clear();
	ck_assert_int_eq(vs_machine_destroy(cur), 0);
}
END_TEST

const char *vcpu_only(void)
{
	return VS_VCPU ? NULL : "the vCPU build only (vmsim-test-vcpu)";
}

Suite *vcpu_suite(void)
{
	Suite *s = suite_create("vcpu");
	TCase *tc = tcase_create("engine");

	/* No vs_test_tcase(): these tests make machines of their own. */
	tcase_set_timeout(tc, VS_TEST_TIMEOUT);
	tcase_add_test(tc, vcpu_args);
	tcase_add_test(tc, vcpu_refused);
	tcase_add_test(tc, vcpu_spawn_join);
	tcase_add_test(tc, vcpu_own_slots);
	tcase_add_test(tc, vcpu_timeout);
	tcase_add_test(tc, vcpu_costs);
	tcase_add_test(tc, vcpu_cas_retry_holds_the_line);
	tcase_add_test(tc, vcpu_no_traps);
	tcase_add_test(tc, vcpu_cycle_partition);
	tcase_add_test(tc, vcpu_fence_costs);
	tcase_add_test(tc, vcpu_calibrate_probe_round_trip);
	tcase_add_test(tc, vcpu_cycles_are_the_clock);
	tcase_add_test(tc, vcpu_rcu_grace_period);
	tcase_add_test(tc, vcpu_deadlock_reported);
	tcase_add_test(tc, vcpu_fail_then_reset);
	tcase_add_test(tc, vcpu_stuck);
	tcase_add_test(tc, vcpu_stopped);
	tcase_add_test(tc, vcpu_use_after_free);
	suite_add_tcase(s, tc);
	return s;
}
