/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf_jobs.c - the vCPU mode's repeats as jobs in child
 * processes.
 *
 * A vCPU run is deterministic, but its figures depend on the heap's
 * history (docs/vcpu.md, "Determinism"): so every repeat runs in a child
 * forked from the same parent, whatever ran before it, and two host
 * cores run two repeats at once without changing a figure.  A child
 * hands its struct mf_sample back through a pipe and exits; the parent
 * adds the samples in job order once all are in.
 *
 * With --trace, each child records its part of the trace into a
 * temporary file the parent made for it (mf_trace_part_open()), and the
 * parent adds the parts to the trace in job order as they come in, each
 * job a process named after it ("spf rwsem 4 vCPUs, repeat 1").  The
 * parent allocates nothing meanwhile: whatever finished first, every
 * child is forked from the same heap.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mf.h"
#include <vmsim/vcpu.h>

#define MAX_PARALLEL 64

struct job_slot {
	pid_t pid;			/* 0: free */
	int fd;				/* the read end of its pipe */
	unsigned int job;
};

/* The jobs' parts of the trace; NULL arrays without --trace. */
struct job_parts {
	int *fd;			/* each job's part file, or -1 */
	char *done;			/* its child was reaped */
	unsigned int next;		/* the next job to add */
};

/* In the child: run job @job, write its sample to @fd, exit. */
static void child(struct mf_result *r, int n, unsigned int job, int fd,
		  int tfd, vs_atomic32_t *stop)
{
	unsigned int total = (unsigned int)n * r[0].cfg.repeats;
	int terr = tfd < 0 ? 0 : mf_trace_part_begin(tfd, job + 1, total);
	struct mf_sample s;
	const char *p = (const char *)&s;
	size_t off = 0;
	ssize_t w;

	(void)mf_vcpu_repeat(&r[job % (unsigned int)n].cfg,
			     job / (unsigned int)n, stop, &s);
	if (tfd >= 0 && !terr)
		terr = mf_trace_part_end(&s.trace_recorded, &s.trace_dropped);
	if (terr)
		fprintf(stderr, "multi-fault: --trace: %s\n", strerror(-terr));
	s.trace_err = terr;
	/* A signal to this child alone stops the parent too (collect()). */
	s.stopped_by = vs_vcpu_stop_signal();
	while (off < sizeof(s)) {
		w = write(fd, p + off, sizeof(s) - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(1);
		off += (size_t)w;
	}
	_exit(0);
}

/* Fork job @job's child into @sl; its part of the trace into @tfd. */
static int start(struct mf_result *r, int n, struct job_slot *sl,
		 unsigned int job, int tfd, vs_atomic32_t *stop)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -errno;
	fflush(NULL);		/* nothing buffered is written twice */
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (pid == 0) {
		close(fds[0]);
		child(r, n, job, fds[1], tfd, stop);
	}
	close(fds[1]);
	sl->pid = pid;
	sl->fd = fds[0];
	sl->job = job;
	return 0;
}

/* Start job @job, with a part file when tracing. */
static int start_job(struct mf_result *r, int n, struct job_slot *sl,
		     unsigned int job, struct job_parts *tp,
		     vs_atomic32_t *stop)
{
	int err;

	if (tp->fd) {
		tp->fd[job] = mf_trace_part_open();
		if (tp->fd[job] < 0) {
			err = tp->fd[job];
			tp->fd[job] = -1;
			fprintf(stderr, "multi-fault: --trace: a temporary "
				"file: %s\n", strerror(-err));
			return err;
		}
	}
	return start(r, n, sl, job, tp->fd ? tp->fd[job] : -1, stop);
}

/* The sample of the child of @sl, which exited with @status. */
static int collect(struct job_slot *sl, int status, struct mf_sample *out)
{
	size_t off = 0;
	ssize_t got;
	int err = 0;

	while (off < sizeof(*out)) {
		got = read(sl->fd, (char *)out + off, sizeof(*out) - off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		off += (size_t)got;
	}
	close(sl->fd);
	sl->pid = 0;
	if (off == sizeof(*out) && WIFEXITED(status) &&
	    !WEXITSTATUS(status)) {
		if (out->stopped_by && !vs_vcpu_stop_signal())
			vs_vcpu_stop(out->stopped_by);
		return out->err;
	}
	memset(out, 0, sizeof(*out));
	out->trace_err = -EIO;		/* its part too, if any */
	if (WIFSIGNALED(status))
		fprintf(stderr, "multi-fault: a vCPU run died of signal %d\n",
			WTERMSIG(status));
	else
		fprintf(stderr, "multi-fault: a vCPU run exited with %d\n",
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	err = -EIO;
	out->err = err;
	return err;
}

/*
 * Ctrl-C reaches the children through the terminal; a SIGINT or SIGTERM
 * sent to this process alone must too, and one that stopped a child
 * reaches the others.  Return: 1.
 */
static int interrupt(struct job_slot *sl, unsigned int nsl)
{
	int sig = vs_vcpu_stop_signal();
	unsigned int i;

	for (i = 0; i < nsl; i++)
		if (sl[i].pid)
			(void)kill(sl[i].pid, sig ? sig : SIGINT);
	return 1;
}

/*
 * Wait for one child of @sl; @job receives its job.  Return: its error,
 * or 0.
 */
static int reap(struct job_slot *sl, unsigned int nsl, struct mf_sample *s,
		unsigned int *finished, unsigned int *job)
{
	unsigned int i;
	int status;
	pid_t pid;

	for (;;) {
		pid = waitpid(-1, &status, 0);
		if (pid < 0 && errno == EINTR) {
			/* A signal to this process alone: on to them now. */
			if (vs_vcpu_stop_signal())
				(void)interrupt(sl, nsl);
			continue;
		}
		if (pid < 0)
			return -errno;
		for (i = 0; i < nsl; i++)
			if (sl[i].pid == pid)
				break;
		if (i < nsl)	/* else not one of ours: wait again */
			break;
	}
	(*finished)++;
	*job = sl[i].job;
	return collect(&sl[i], status, &s[sl[i].job]);
}

/* Has a signal (to this process, or to a child) asked to stop? */
static int stopping(vs_atomic32_t *stop)
{
	return atomic_load_explicit(stop, memory_order_relaxed) ||
	       vs_vcpu_stop_signal();
}

/* waitpid() failed for good: close what is left. */
static void forget(struct job_slot *sl, unsigned int nsl)
{
	unsigned int i;

	for (i = 0; i < nsl; i++) {
		if (!sl[i].pid)
			continue;
		close(sl[i].fd);
		sl[i].pid = 0;
	}
}

void mf_jobs_add(struct mf_result *r, int n, const struct mf_sample *s,
		 const char *ok)
{
	unsigned int j, total = (unsigned int)n * r[0].cfg.repeats;

	for (j = 0; j < total; j++) {
		struct mf_result *x = &r[j % (unsigned int)n];

		/* A later repeat after a missing one cannot be repeat k. */
		if (ok[j] && x->repeats_done == j / (unsigned int)n)
			(void)mf_add_sample(x, j / (unsigned int)n, &s[j]);
	}
}

/* Job @job's process in the trace: "spf rwsem 4 vCPUs, repeat 1". */
static void job_name(char *buf, size_t len, const struct mf_config *c,
		     unsigned int repeat)
{
	char w[48] = "";

	if (c->writer != MF_WRITER_NONE)
		snprintf(w, sizeof(w), ", writer %s",
			 mf_writer_name(c->writer));
	snprintf(buf, len, "%s %s %u vCPUs%s, repeat %u",
		 vs_fault_strategy_name(c->strategy), c->lock ? c->lock : "-",
		 c->threads, w, repeat + 1);
}

/* The parts of the reaped jobs, in job order, up to one not reaped. */
static void add_parts(const struct mf_result *r, int n,
		      const struct mf_sample *s, struct job_parts *tp,
		      unsigned int total)
{
	unsigned int j, k = (unsigned int)n;
	char name[160];
	int fd, err;

	while (tp->fd && tp->next < total && tp->done[tp->next]) {
		j = tp->next++;
		fd = tp->fd[j];
		tp->fd[j] = -1;
		if (s[j].trace_err && fd >= 0) {
			close(fd);	/* no whole part: the name alone */
			fd = -1;
		}
		job_name(name, sizeof(name), &r[j % k].cfg, j / k);
		err = mf_trace_part_add(fd, j + 1, name, s[j].trace_recorded,
					s[j].trace_dropped);
		if (err)
			fprintf(stderr, "multi-fault: --trace: %s\n",
				strerror(-err));
	}
}

/* Without --trace, nothing.  Return: 0 or -ENOMEM. */
static int parts_init(struct job_parts *tp, unsigned int total)
{
	unsigned int j;

	memset(tp, 0, sizeof(*tp));
	if (!mf_trace_on())
		return 0;
	tp->fd = malloc(total * sizeof(*tp->fd));
	tp->done = calloc(total, 1);
	if (!tp->fd || !tp->done) {
		free(tp->fd);
		free(tp->done);
		return -ENOMEM;
	}
	for (j = 0; j < total; j++)
		tp->fd[j] = -1;
	return 0;
}

/* The parts Ctrl-C left behind a job that never ran are not added. */
static void parts_fini(struct job_parts *tp, unsigned int total)
{
	unsigned int j;

	for (j = tp->next; tp->fd && j < total; j++)
		if (tp->fd[j] >= 0)
			close(tp->fd[j]);
	free(tp->fd);
	free(tp->done);
}

/* The jobs of shard @sh among @total. */
static unsigned int shard_jobs(const struct mf_shard *sh, unsigned int total)
{
	unsigned int j, nr = 0;

	for (j = 0; j < total; j++)
		nr += mf_shard_has(sh, j);
	return nr;
}

int mf_jobs_run(struct mf_result *r, int n, unsigned int parallel,
		const struct mf_shard *sh, vs_atomic32_t *stop,
		void (*done)(unsigned int finished, unsigned int total),
		struct mf_sample *s, char *ok)
{
	struct job_slot sl[MAX_PARALLEL] = { { 0 } };
	unsigned int total, mine, next = 0, running = 0, finished = 0, i, job;
	struct job_parts tp;
	int err = 0, e, signalled = 0;

	if (n < 1 || !parallel)
		return -EINVAL;
	parallel = parallel > MAX_PARALLEL ? MAX_PARALLEL : parallel;
	total = (unsigned int)n * r[0].cfg.repeats;
	mine = shard_jobs(sh, total);
	if (parts_init(&tp, total))
		return -ENOMEM;
	while (next < total || running) {
		while (next < total && !mf_shard_has(sh, next))
			next++;
		while (next < total && running < parallel && !err &&
		       !stopping(stop)) {
			for (i = 0; sl[i].pid; i++)
				;
			err = start_job(r, n, &sl[i], next++, &tp, stop);
			running += !err;
			while (next < total && !mf_shard_has(sh, next))
				next++;
		}
		if (!running)
			break;
		if (stopping(stop) && !signalled)
			signalled = interrupt(sl, parallel);
		job = total;
		e = reap(sl, parallel, s, &finished, &job);
		err = err ? err : e;
		if (job == total) {	/* no child to wait for: give up */
			forget(sl, parallel);
			break;
		}
		running--;
		if (tp.done && job < total)
			tp.done[job] = 1;
		add_parts(r, n, s, &tp, total);
		if (done)
			done(finished, mine);
	}
	parts_fini(&tp, total);
	for (i = 0; i < total; i++)
		ok[i] = s[i].seconds > 0 && !s[i].err;
	if (err)
		return err;
	return stopping(stop) ? 1 : 0;
}
