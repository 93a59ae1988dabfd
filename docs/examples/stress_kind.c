/* SPDX-License-Identifier: MIT */
/*
 * docs/examples/stress_kind.c - run the stress suite against locking
 * the user supplies: a fault strategy of one's own, and a lock kind
 * with a planted bug, which vs_stress_run() must catch.
 *
 * Exit status 0 when the sound strategy passes and the broken lock kind
 * is caught (so CTest can run it), 1 otherwise.
 *
 * vs_stress_run() is test code, in libvmsim-check beside libvmsim:
 *
 *	cc stress_kind.c $(pkg-config --cflags --libs vmsim-check) \
 *		-o stress_kind
 *
 * or, with CMake, target_link_libraries(... vmsim::vmsim_check).
 */
#include <stdio.h>

#include <vmsim/check/stress.h>
#include <vmsim/vmsim.h>

/* A strategy of our own: count the faults, resolve them as locked. */
static vs_atomic_long_t counted;

static int counting_fault(struct vs_mm *mm, unsigned long addr,
			  unsigned int flags)
{
	vs_fetch_add(&counted, 1);
	return vs_fault_strategy_ops(VS_FAULT_LOCKED)->fault(mm, addr, flags);
}

static const struct vs_fault_strategy_ops counting = {
	.name = "counting",
	.fault = counting_fault,
};

/*
 * The planted bug: an rwsem whose writers take the read side, so an
 * munmap or mprotect runs beside the faults it should exclude.
 */
static struct vs_lock_ops leaky;

static void leaky_downgrade(struct vs_lock *lock)
{
	(void)lock;	/* already a reader */
}

static int run(const char *kind, int strategy, struct vs_stress_report *rep)
{
	struct vs_stress_config cfg = {
		.lock_kind = kind,
		.strategy = strategy,
		.faults = 200000,
		.ops = 2000,
		.max_ms = 3000,
	};
	int err = vs_stress_run(&cfg, rep);

	if (err) {
		fprintf(stderr, "vs_stress_run: %s\n", vs_strerror(err));
		return err;
	}
	printf("%s/%s: %lu faults, %lu operations, %lu violations%s%s "
	       "(seed %#llx)\n", kind, vs_fault_strategy_name(strategy),
	       rep->faults, rep->ops, rep->violations,
	       rep->violations ? ": " : "", rep->first,
	       (unsigned long long)rep->seed);
	return 0;
}

int main(void)
{
	struct vs_stress_report good, bad;
	int s = vs_fault_strategy_register(&counting);

	leaky = *vs_lock_kind_ops("rwsem");
	leaky.name = "leaky-rwsem";
	leaky.write_lock = leaky.read_lock;
	leaky.write_trylock = leaky.read_trylock;
	leaky.write_unlock = leaky.read_unlock;
	leaky.downgrade_write = leaky_downgrade;
	if (s < 0 || vs_lock_kind_register(&leaky) < 0) {
		fprintf(stderr, "registration failed\n");
		return 1;
	}
	if (run("rwsem", s, &good) || run("leaky-rwsem", VS_FAULT_LOCKED, &bad))
		return 1;
	printf("the counting strategy resolved %ld faults\n",
	       (long)vs_read_once(&counted));
	return good.violations == 0 && bad.violations > 0 ? 0 : 1;
}
