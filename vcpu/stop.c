/* SPDX-License-Identifier: MIT */
/*
 * vcpu/stop.c - stopping runs from a signal handler (vs_vcpu_stop()), and
 * the test hook that raises a real signal at a chosen event.
 *
 * A signal handler must never enter the engine: an operation of
 * vmsim/atomic.h in a handler is an event, and an event inside one of the
 * engine's own (a yield half done, the run queue's heap half sifted)
 * loses contexts or corrupts the heap: a crash, or a "deadlock" with a
 * runnable context that is in no queue.  A stop request only stores into
 * sig_atomic_t objects; the engine reads them at the start of each event,
 * on the host thread, where its state is whole.  A run of a
 * VS_MACHINE_STOPPABLE machine then ends there, its contexts abandoned
 * where they stand as after vs_machine_fail(); other machines' runs go
 * on, for their owners to stop at a point of their own (a workload's
 * pass, an exploration's schedule).
 *
 * VMSIM_TEST_SIGNAL_AT=N[:SIG] (SIG: INT, TERM or a number; INT when
 * left out) makes the engine raise() SIG at the process's N-th moment,
 * counted over every run of every machine: a moment is an event's start
 * (before it takes effect) or a switch between contexts half made (the
 * running context changed, the stacks not yet).  A test puts the real
 * signal, and its real handler, at a moment of its choosing.
 *
 * Locking: stop_sig and vs__vcpu_watch are written by signal handlers
 * (volatile sig_atomic_t, as C11 7.14.1.1 allows them) and read by the
 * machine's host thread at each event; the hook's counters are that
 * thread's.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

volatile sig_atomic_t vs__vcpu_watch;
static volatile sig_atomic_t stop_sig;

/* VMSIM_TEST_SIGNAL_AT: read once; the event it names, the signal. */
static int hook_read;
static uint64_t hook_at, hook_events;
static int hook_sig;

/* vs_vcpu_stop_on_signals(): the actions it replaced, which it made,
 * and how many callers asked (the last off puts them back). */
static const int stop_signals[2] = { SIGINT, SIGTERM };
static struct sigaction saved[2];
static int installed[2];
static int stop_users;

void vs_vcpu_stop(int sig)
{
	stop_sig = sig > 0 ? sig : SIGINT;
	vs__vcpu_watch = 1;
}

int vs_vcpu_stop_signal(void)
{
	return stop_sig;
}

void vs_vcpu_stop_clear(void)
{
	stop_sig = 0;
	vs__vcpu_watch = hook_at != 0 && hook_events < hook_at;
}

static void on_stop_signal(int sig)
{
	vs_vcpu_stop(sig);
}

int vs_vcpu_stop_on_signals(int on)
{
	struct sigaction sa, old;
	int i;

	if (on ? stop_users++ > 0 : stop_users < 1 || --stop_users > 0)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sa.sa_flags = SA_RESTART;	/* no host call sees EINTR for it */
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 2; i++) {
		if (!on) {
			if (installed[i])
				(void)sigaction(stop_signals[i], &saved[i],
						NULL);
			installed[i] = 0;
			continue;
		}
		if (installed[i] || sigaction(stop_signals[i], NULL, &old))
			continue;
		if (old.sa_handler != SIG_DFL)	/* the program's own */
			continue;
		if (sigaction(stop_signals[i], &sa, &saved[i]))
			return -errno;
		installed[i] = 1;
	}
	return 0;
}

/* "INT", "TERM", "SIGINT", "SIGTERM" or a number: the signal, or 0. */
static int signal_of(const char *s)
{
	char *end;
	long n;

	if (!strncmp(s, "SIG", 3))
		s += 3;
	if (!strcmp(s, "INT"))
		return SIGINT;
	if (!strcmp(s, "TERM"))
		return SIGTERM;
	n = strtol(s, &end, 10);
	return *s && !*end && n > 0 && n < 65 ? (int)n : 0;
}

void vs__vcpu_stop_arm(void)
{
	const char *e = getenv("VMSIM_TEST_SIGNAL_AT");
	unsigned long long n;
	char *end;
	int sig;

	if (hook_read)
		return;
	hook_read = 1;
	if (!e || !*e)
		return;
	errno = 0;
	n = strtoull(e, &end, 10);
	sig = *end == ':' ? signal_of(end + 1) : *end ? 0 : SIGINT;
	if (errno || !n || end == e || !sig) {
		fprintf(stderr, "vmsim: VMSIM_TEST_SIGNAL_AT: '%s' is not "
			"N[:INT|TERM|number] with N > 0: no signal raised\n",
			e);
		return;
	}
	hook_at = n;
	hook_sig = sig;
	vs__vcpu_watch = 1;
}

static const char *signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" :
	       "a signal";
}

/* End the run at @v's event: -EINTR, every context where it stands. */
static _Noreturn void stop_run(struct vs_machine *m, struct vs__vcpu *v)
{
	int sig = stop_sig;

	snprintf(m->report, sizeof(m->report), "vcpu: stopped by %s (%d) "
		 "at work %u's event on vCPU %u, virtual time %llu cycles, "
		 "after %llu events\n", signal_name(sig), sig, v->id, v->cpu,
		 (unsigned long long)v->clock,
		 (unsigned long long)m->seq);
	m->stopped = 1;
	m->failed = 1;		/* its contexts are abandoned */
	vs__switch_to(m, v, NULL, 0);
	vs__vcpu_die("vcpu: a stopped vCPU was resumed", EINVAL);
}

void vs__vcpu_hook_moment(void)
{
	if (hook_at && ++hook_events == hook_at)
		(void)raise(hook_sig);	/* its handler runs here */
}

void vs__vcpu_watch_event(struct vs_machine *m, struct vs__vcpu *v)
{
	vs__vcpu_hook_moment();
	if (stop_sig && (m->cfg.flags & VS_MACHINE_STOPPABLE) &&
	    !m->entered)
		stop_run(m, v);
}
