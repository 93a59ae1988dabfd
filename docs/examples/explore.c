/* SPDX-License-Identifier: MIT */
/*
 * docs/examples/explore.c - a locking protocol explored schedule by
 * schedule on virtual CPUs (<vmsim/check/explore.h>): readers announce
 * themselves and then look for the writer's flag; the writer sets its
 * flag and then waits for the readers to drain.  Built with -DBROKEN,
 * the writer waits first and sets its flag after (check, then act): a
 * reader comes in between, and exploration finds the schedule.
 *
 * Exit status 0 when the sound protocol passes 1,000 schedules or the
 * broken one is caught (so CTest can run both), 128 + the signal when
 * SIGINT or SIGTERM stopped it, else 1.  The report goes to stderr.
 *
 * It needs the vCPU build of vmsim (libvmsim-vcpu, VS_VCPU=1), whose
 * atomics are the scheduler's choice points, and libvmsim-check-vcpu:
 * vmsim::vmsim_check_vcpu in CMake, or pkg-config vmsim-vcpu, as
 * test/CMakeLists.txt and test/install/ build it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <vmsim/check/explore.h>
#include <vmsim/vmsim.h>

struct rw {
	vs_atomic32_t readers;		/* readers inside or entering */
	vs_atomic32_t writer;		/* the writer's flag */
	vs_atomic32_t r_in, w_in;	/* who is in the critical section */
};

static int setup(void **state)
{
	struct rw *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	/* Names for the report's events, instead of addresses. */
	vs_vcpu_name(&s->readers, sizeof(s->readers), "readers");
	vs_vcpu_name(&s->writer, sizeof(s->writer), "writer flag");
	vs_vcpu_name(&s->r_in, sizeof(s->r_in), "readers inside");
	vs_vcpu_name(&s->w_in, sizeof(s->w_in), "writer inside");
	*state = s;
	return 0;
}

static void reader(struct rw *s)
{
	for (;;) {
		vs_fetch_add(&s->readers, 1);
		if (!vs_read_once(&s->writer))
			break;
		vs_fetch_sub(&s->readers, 1);
		while (vs_read_once(&s->writer))
			vs_cpu_relax();
	}
	vs_fetch_add(&s->r_in, 1);
	VS_EXPLORE_ASSERT(vs_read_once(&s->w_in) == 0);
	vs_fetch_sub(&s->r_in, 1);
	vs_fetch_sub(&s->readers, 1);
}

static void writer(struct rw *s)
{
#ifdef BROKEN
	while (vs_read_once(&s->readers))	/* wait for the readers... */
		vs_cpu_relax();
	vs_write_once(&s->writer, 1);		/* ...then keep them out */
#else
	vs_write_once(&s->writer, 1);		/* keep new readers out... */
	vs_smp_mb();		/* pairs with the readers' fetch_add */
	while (vs_read_once(&s->readers))	/* ...then wait for the rest */
		vs_cpu_relax();
#endif
	vs_write_once(&s->w_in, 1);
	VS_EXPLORE_ASSERT(vs_read_once(&s->r_in) == 0);
	vs_write_once(&s->w_in, 0);
	vs_write_once(&s->writer, 0);
}

/* Thread 0 writes, thread 1 reads. */
static void thread(void *state, unsigned int i)
{
	if (i == 0)
		writer(state);
	else
		reader(state);
}

int main(void)
{
	static const struct vs_explore_scenario sc = {
		.name = "check_then_act", .threads = 2, .setup = setup,
		.thread = thread, .fini = free,
	};
	struct vs_explore_report rep;
	int err = vs_explore(&sc, NULL, &rep);

	if (err == -EINTR)	/* SIGINT, SIGTERM: 130, 143 */
		return 128 + vs_vcpu_stop_signal();
#ifdef BROKEN
	return err == -ECANCELED ? 0 : 1;
#else
	if (!err)
		printf("check_then_act: %lu schedules, none failed\n",
		       rep.schedules);
	return err ? 1 : 0;
#endif
}
