/* SPDX-License-Identifier: MIT */
/*
 * tools/common/bench_host.h - what the host kernel did for the calling thread
 * over a window: page faults and context switches (getrusage with
 * RUSAGE_THREAD), and system calls and futex calls (perf tracepoints
 * raw_syscalls:sys_enter and syscalls:sys_enter_futex, where tracefs
 * and perf_event_paranoid allow; otherwise those two are unknown).
 *
 *   struct bench_host h;
 *
 *   bench_host_begin(&h);
 *   ... the steady-state window ...
 *   bench_host_end(&h);    (h.faults, h.ctxsw, h.syscalls, h.futex)
 *   bench_host_end(&h) also closes what begin opened.
 *
 * The tools print them per 10,000 model operations: the model's hot
 * loops should cost the host nothing once warm.
 */
#ifndef VS_TOOLS_BENCH_HOST_H
#define VS_TOOLS_BENCH_HOST_H

/*
 * struct bench_host - counts over one window of one thread
 * @faults: page faults, minor and major
 * @ctxsw: context switches, voluntary and involuntary
 * @syscalls, @futex: system calls, and futex(2) calls among them; -1
 *                    when the tracepoints cannot be read here
 */
struct bench_host {
	long faults;
	long ctxsw;
	long syscalls;
	long futex;
	int fd[2];	/* private */
};

/* Start counting on the calling thread. */
void bench_host_begin(struct bench_host *h);

/* Stop: the fields hold the counts since bench_host_begin(). */
void bench_host_end(struct bench_host *h);

/* Add @b's counts to @a (-1 stays -1). */
void bench_host_add(struct bench_host *a, const struct bench_host *b);

/*
 * bench_host_line - "page-faults 0.00, context-switches 0.00,
 * syscalls 0.00, futex 0.00 per 10000 <what>" for @ops operations,
 * into @buf; "n/a" for a count that is unknown.
 */
void bench_host_line(char *buf, unsigned long size,
		     const struct bench_host *h, double ops,
		     const char *what);

/* One JSON object's fields: "host_faults_per_10k" ... (null if unknown). */
void bench_host_json(const struct bench_host *h, double ops);

#endif /* VS_TOOLS_BENCH_HOST_H */
