/* SPDX-License-Identifier: MIT */
/* tools/common/bench_host.c - host page faults, switches and system calls. */
#include "bench_host.h"

#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench_report.h"

static const char *const tracepoints[2] = {
	"raw_syscalls/sys_enter",
	"syscalls/sys_enter_futex",
};

/* The id of tracepoint @name, or -1 when tracefs does not show it. */
static long tracepoint_id(const char *name)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events",
	};
	char path[128];
	long id = -1;
	size_t i;
	FILE *f;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]) && id < 0; i++) {
		snprintf(path, sizeof(path), "%s/%s/id", roots[i], name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%ld", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

/* A counter of tracepoint @name on the calling thread, or -1. */
static int tracepoint_open(const char *name)
{
	struct perf_event_attr attr;
	long id = tracepoint_id(name);

	if (id < 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = (unsigned long long)id;
	attr.disabled = 1;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

static void rusage_now(long *faults, long *ctxsw)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	*faults = ru.ru_minflt + ru.ru_majflt;
	*ctxsw = ru.ru_nvcsw + ru.ru_nivcsw;
}

void bench_host_begin(struct bench_host *h)
{
	int i;

	h->syscalls = h->futex = -1;
	for (i = 0; i < 2; i++) {
		h->fd[i] = tracepoint_open(tracepoints[i]);
		if (h->fd[i] >= 0)
			ioctl(h->fd[i], PERF_EVENT_IOC_ENABLE, 0);
	}
	/* Last, so that opening the counters is not counted. */
	rusage_now(&h->faults, &h->ctxsw);
}

void bench_host_end(struct bench_host *h)
{
	long faults, ctxsw, *out[2] = { &h->syscalls, &h->futex };
	unsigned long long v;
	int i;

	rusage_now(&faults, &ctxsw);
	h->faults = faults - h->faults;
	h->ctxsw = ctxsw - h->ctxsw;
	for (i = 0; i < 2; i++) {
		if (h->fd[i] < 0)
			continue;
		ioctl(h->fd[i], PERF_EVENT_IOC_DISABLE, 0);
		if (read(h->fd[i], &v, sizeof(v)) == (ssize_t)sizeof(v))
			*out[i] = (long)v;
		close(h->fd[i]);
		h->fd[i] = -1;
	}
}

void bench_host_add(struct bench_host *a, const struct bench_host *b)
{
	a->faults += b->faults;
	a->ctxsw += b->ctxsw;
	a->syscalls = a->syscalls < 0 || b->syscalls < 0 ? -1 :
		      a->syscalls + b->syscalls;
	a->futex = a->futex < 0 || b->futex < 0 ? -1 : a->futex + b->futex;
}

/* @n per 10,000 of @ops; NaN when @n is unknown. */
static double per_10k(long n, double ops)
{
	return n < 0 || ops <= 0 ? NAN : (double)n * 10000.0 / ops;
}

static int fmt(char *buf, size_t size, const char *name, long n, double ops)
{
	double v = per_10k(n, ops);

	if (isnan(v))
		return snprintf(buf, size, "%s n/a", name);
	return snprintf(buf, size, "%s %.2f", name, v);
}

void bench_host_line(char *buf, unsigned long size,
		     const struct bench_host *h, double ops, const char *what)
{
	size_t at = 0;

	at += (size_t)fmt(buf + at, size - at, "page-faults", h->faults, ops);
	at += (size_t)snprintf(buf + at, size - at, ", ");
	at += (size_t)fmt(buf + at, size - at, "context-switches", h->ctxsw,
			  ops);
	at += (size_t)snprintf(buf + at, size - at, ", ");
	at += (size_t)fmt(buf + at, size - at, "syscalls", h->syscalls, ops);
	at += (size_t)snprintf(buf + at, size - at, ", ");
	at += (size_t)fmt(buf + at, size - at, "futex", h->futex, ops);
	snprintf(buf + at, size - at, " per 10000 %s", what);
}

void bench_host_json(const struct bench_host *h, double ops)
{
	bench_json_num("host_faults_per_10k", per_10k(h->faults, ops), 3);
	bench_json_num("host_ctxsw_per_10k", per_10k(h->ctxsw, ops), 3);
	bench_json_num("host_syscalls_per_10k", per_10k(h->syscalls, ops), 3);
	bench_json_num("host_futex_per_10k", per_10k(h->futex, ops), 3);
}
