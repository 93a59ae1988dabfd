/* SPDX-License-Identifier: MIT */
/*
 * vmsim-test - every Check suite of vmsim in one binary.
 *
 *	vmsim-test                 run every suite
 *	vmsim-test SUITE [TCASE]   run one suite (or one of its cases)
 *	vmsim-test -l              list the suites
 *
 * With no argument, Check itself honours CK_RUN_SUITE and CK_RUN_CASE;
 * CTest registers one test per suite that way (test/CMakeLists.txt).
 * Check forks a child per test (CK_FORK=no runs them in process, for a
 * debugger); the sanitizers work in the forked children.
 *
 * Exit status: 0 when no test failed, 1 otherwise.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/*
 * The suites of suites.def.  @unsupported, when set, says why a suite
 * cannot run on this machine (NULL: it can).  Such a suite is left out
 * with a note; asked for by name it exits 77, which CTest reports as
 * skipped (SKIP_RETURN_CODE).
 */
static const struct {
	const char *name;
	Suite *(*suite)(void);
	const char *(*unsupported)(void);
} suites[] = {
#define VS_SUITE(name, unsupported, timeout, labels)                        \
	{ #name, name##_suite, unsupported },
#include "suites.def"
#undef VS_SUITE
};

#if VS_VCPU
/* ---- vmsim-test-vcpu: every test on a machine of its own ------------ */

static struct vs_machine *test_machine;
static void *thread_ret[VS_VCPU_MAX];

struct vcpu_thread {
	void *(*fn)(void *);
	void *arg;
	unsigned int cpu;	/* its work id: where its return value goes */
};

static unsigned long env_ulong(const char *name, unsigned long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : dflt;
}

void vs__test_vcpu_setup(void)
{
	struct vs_machine_config cfg = {
		.nr_vcpus = (unsigned int)env_ulong("VS_TEST_VCPUS", 4),
		.seed = env_ulong("VS_TEST_SEED", 1),
	};

	ck_assert_int_eq(vs_machine_create(&test_machine, &cfg), 0);
	ck_assert_int_eq(vs_machine_enter(test_machine), 0);
}

void vs__test_vcpu_teardown(void)
{
	ck_assert_int_eq(vs_machine_leave(test_machine), 0);
	ck_assert_int_eq(vs_machine_destroy(test_machine), 0);
	test_machine = NULL;
}

static void vcpu_thread_main(void *p)
{
	struct vcpu_thread t = *(struct vcpu_thread *)p;

	free(p);
	thread_ret[t.cpu] = t.fn(t.arg);
}

int vs__test_vcpu_create(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	struct vcpu_thread *t = malloc(sizeof(*t));
	int cpu = vs_machine_pick_vcpu(test_machine), id;

	if (!t)
		return -ENOMEM;
	*t = (struct vcpu_thread){ fn, arg, 0 };
	/* The thread takes the vCPU with the least work, as a scheduler
	 * spreads threads; more threads than vCPUs take turns. */
	id = vs_machine_spawn(test_machine, (unsigned int)cpu,
			      vcpu_thread_main, t);
	if (id < 0) {
		free(t);
		return id;
	}
	t->cpu = (unsigned int)id;
	*tid = (pthread_t)id;
	return 0;
}

int vs__test_vcpu_join(pthread_t tid, void **ret)
{
	int err = vs_machine_join(test_machine, (unsigned int)tid);

	if (!err && ret)
		*ret = thread_ret[tid];
	return err;
}
#endif

static int known_suite(const char *name)
{
	size_t i;

	for (i = 0; i < VS_ARRAY_SIZE(suites); i++)
		if (strcmp(suites[i].name, name) == 0)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *sname = NULL, *tcname = NULL;
	SRunner *sr;
	size_t i;
	int failed;

	if (argc > 1 && strcmp(argv[1], "-l") == 0) {
		for (i = 0; i < VS_ARRAY_SIZE(suites); i++)
			printf("%s\n", suites[i].name);
		return 0;
	}
	if (argc > 1 && (argv[1][0] == '-' || argc > 3)) {
		fprintf(stderr, "usage: %s [-l | SUITE [TCASE]]\n", argv[0]);
		return 2;
	}
	if (argc > 1)
		sname = argv[1];
	if (argc > 2)
		tcname = argv[2];

	/*
	 * A misspelt suite name would make Check run nothing and report
	 * success: refuse it.
	 */
	if (!sname)
		sname = getenv("CK_RUN_SUITE");
	if (sname && *sname && !known_suite(sname)) {
		fprintf(stderr, "%s: no suite named '%s' (try -l)\n", argv[0],
			sname);
		return 1;
	}

	sr = srunner_create(NULL);
	for (i = 0; i < VS_ARRAY_SIZE(suites); i++) {
		const char *why = suites[i].unsupported ?
				  suites[i].unsupported() : NULL;

		if (!why) {
			srunner_add_suite(sr, suites[i].suite());
			continue;
		}
		printf("%s: skipped: %s\n", suites[i].name, why);
		if (sname && strcmp(sname, suites[i].name) == 0) {
			srunner_free(sr);
			return 77;
		}
	}
	/* NULL names: Check reads CK_RUN_SUITE and CK_RUN_CASE itself. */
	srunner_run(sr, argc > 1 ? sname : NULL, tcname, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	/* vs_explore() stopped by SIGINT or SIGTERM (CK_FORK=no): 130, 143 */
	if (vs_vcpu_stop_signal())
		return 128 + vs_vcpu_stop_signal();
	return failed == 0 ? 0 : 1;
}
