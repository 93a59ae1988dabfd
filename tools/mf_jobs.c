/* SPDX-License-Identifier: MIT */
/*
 * tools/mf_jobs.c - the vCPU mode's repeats as jobs in child processes.
 *
 * A vCPU run is deterministic, but its figures depend on the heap's
 * history (docs/vcpu.md, "Determinism"): so every repeat runs in a child
 * forked from the same parent, whatever ran before it, and two host
 * cores run two repeats at once without changing a figure.  A child
 * hands its struct mf_sample back through a pipe and exits; the parent
 * adds the samples in job order once all are in.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mf.h"

#define MAX_PARALLEL 64

struct job_slot {
	pid_t pid;			/* 0: free */
	int fd;				/* the read end of its pipe */
	unsigned int job;
};

/* In the child: run job @job, write its sample to @fd, exit. */
static void child(struct mf_result *r, int n, unsigned int job, int fd,
		  vs_atomic32_t *stop)
{
	struct mf_sample s;
	const char *p = (const char *)&s;
	size_t off = 0;
	ssize_t w;

	(void)mf_vcpu_repeat(&r[job % (unsigned int)n].cfg,
			     job / (unsigned int)n, stop, &s);
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

static int start(struct mf_result *r, int n, struct job_slot *sl,
		 unsigned int job, vs_atomic32_t *stop)
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
		child(r, n, job, fds[1], stop);
	}
	close(fds[1]);
	sl->pid = pid;
	sl->fd = fds[0];
	sl->job = job;
	return 0;
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
	    !WEXITSTATUS(status))
		return out->err;
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

/* Wait for one child of @sl.  Return: its error, or 0. */
static int reap(struct job_slot *sl, unsigned int nsl, struct mf_sample *s,
		unsigned int *finished)
{
	unsigned int i;
	int status;
	pid_t pid;

	for (;;) {
		pid = waitpid(-1, &status, 0);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			return -errno;
		for (i = 0; i < nsl; i++)
			if (sl[i].pid == pid)
				break;
		if (i < nsl)	/* else not one of ours: wait again */
			break;
	}
	(*finished)++;
	return collect(&sl[i], status, &s[sl[i].job]);
}

/* Every sample in job order: round by round, as bench_rounds() does. */
static void add_all(struct mf_result *r, int n, const struct mf_sample *s,
		    const char *ok, unsigned int total)
{
	unsigned int j;

	for (j = 0; j < total; j++) {
		struct mf_result *x = &r[j % (unsigned int)n];

		/* A later repeat after a missing one cannot be repeat k. */
		if (ok[j] && x->repeats_done == j / (unsigned int)n)
			(void)mf_add_sample(x, j / (unsigned int)n, &s[j]);
	}
}

int mf_jobs_run(struct mf_result *r, int n, unsigned int parallel,
		vs_atomic32_t *stop, void (*done)(unsigned int finished,
						  unsigned int total))
{
	struct job_slot sl[MAX_PARALLEL] = { { 0 } };
	unsigned int total, next = 0, running = 0, finished = 0, i;
	struct mf_sample *s;
	char *ok;
	int err = 0, e;

	if (n < 1 || !parallel)
		return -EINVAL;
	parallel = parallel > MAX_PARALLEL ? MAX_PARALLEL : parallel;
	total = (unsigned int)n * r[0].cfg.repeats;
	s = calloc(total, sizeof(*s));
	ok = calloc(total, 1);
	if (!s || !ok) {
		free(s);
		free(ok);
		return -ENOMEM;
	}
	while (next < total || running) {
		while (next < total && running < parallel && !err &&
		       !atomic_load_explicit(stop, memory_order_relaxed)) {
			for (i = 0; sl[i].pid; i++)
				;
			err = start(r, n, &sl[i], next++, stop);
			running += !err;
		}
		if (!running)
			break;
		e = reap(sl, parallel, s, &finished);
		running--;
		err = err ? err : e;
		if (done)
			done(finished, total);
	}
	for (i = 0; i < total; i++)
		ok[i] = s[i].seconds > 0 && !s[i].err;
	add_all(r, n, s, ok, total);
	free(s);
	free(ok);
	if (err)
		return err;
	return atomic_load_explicit(stop, memory_order_relaxed) ? 1 : 0;
}
