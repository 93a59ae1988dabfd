/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf_compare.c - the native multi-fault's two ways into the
 * vCPU mode, which runs in the vCPU build of the tool (multi-fault-vcpu,
 * linked with libvmsim-vcpu, installed beside it):
 *
 *   --vcpus, --machine  multi-fault becomes multi-fault-vcpu (execv)
 *   --compare-real      multi-fault-vcpu predicts every configuration
 *                       (its JSON lines read back here), then this
 *                       process runs the same on real threads, and the
 *                       two are printed side by side
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mf.h"

#define OUT_MAX (1 << 20)	/* the JSON lines of the prediction */

/* multi-fault-vcpu beside this program, in @buf. */
static const char *vcpu_path(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0)
		return "multi-fault-vcpu";	/* then $PATH's */
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	snprintf(slash + 1, len - (size_t)(slash + 1 - buf),
		 "multi-fault-vcpu");
	return buf;
}

/* Become multi-fault-vcpu; Return: only on failure, the errno. */
static int exec_vcpu(char **argv, const char **path)
{
	static char buf[PATH_MAX];

	*path = vcpu_path(buf, sizeof(buf));
	fflush(NULL);
	execvp(*path, argv);
	return errno;
}

static void exec_failed(const char *path, int err)
{
	fprintf(stderr, "multi-fault: --vcpus: cannot run %s: %s (the vCPU "
		"build of multi-fault; a TSan build has none)\n", path,
		strerror(err));
}

void mf_exec_vcpu(char **argv)
{
	const char *path;
	int err = exec_vcpu(argv, &path);

	exec_failed(path, err);
	exit(1);
}

/* Run multi-fault-vcpu @argv --json; its standard output into @out. */
static int predict(char **argv, char *out, size_t len)
{
	char **args;
	size_t got = 0;
	int fds[2], argc, status;
	ssize_t n;
	pid_t pid;

	for (argc = 0; argv[argc]; argc++)
		;
	args = calloc((size_t)argc + 2, sizeof(*args));
	if (!args)
		return -ENOMEM;
	if (pipe(fds)) {
		free(args);
		return -errno;
	}
	memcpy(args, argv, (size_t)argc * sizeof(*args));
	args[argc] = "--json";
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		free(args);
		return err;
	}
	if (pid == 0) {
		const char *path;
		int err;

		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		err = exec_vcpu(args, &path);
		exec_failed(path, err);
		_exit(127);	/* not exit(): the parent's atexit is its own */
	}
	close(fds[1]);
	free(args);
	while (got + 1 < len &&
	       (n = read(fds[0], out + got, len - 1 - got)) != 0) {
		if (n > 0)
			got += (size_t)n;
		else if (errno != EINTR)
			break;
	}
	out[got] = '\0';
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)	/* Ctrl-C: wait still */
		if (errno != EINTR)
			return -ECHILD;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

/*
 * The "faults_per_s" of each JSON line of @json into @fps[0..n): line i
 * must be @r[i]'s configuration (its strategy, lock and threads), and
 * there must be @n of them.
 */
static int parse(const char *json, const struct mf_result *r, double *fps,
		 int n)
{
	const char *line = json, *end, *p;
	char want[160];
	int i;

	for (i = 0; i < n; i++, line = end + 1) {
		end = strchr(line, '\n');
		p = strstr(line, "\"faults_per_s\":");
		if (!end || !p || p > end)
			return -EINVAL;
		snprintf(want, sizeof(want), "\"strategy\":\"%s\","
			 "\"lock\":\"%s\",\"threads\":%u,",
			 vs_fault_strategy_name(r[i].cfg.strategy),
			 r[i].cfg.lock, r[i].cfg.threads);
		if (!strstr(line, want) || strstr(line, want) > end)
			return -EINVAL;
		fps[i] = strtod(p + strlen("\"faults_per_s\":"), NULL);
	}
	return *line ? -EINVAL : 0;
}

static void print_table(const struct mf_result *r, int n, const double *pred,
			const char *machine)
{
	const struct mf_config *c = &r[0].cfg;
	char a[32], b[32];
	int i, p;

	printf("\n multi-fault --compare-real --machine %s --duration %g: "
	       "faults/s on real\n threads (vmsim's model on this host) and "
	       "on vCPUs of the profile, means of %u runs\n\n", machine,
	       c->duration_ms / 1000.0, c->repeats);
	printf("   %7s  %-8s  %-8s  %12s  %12s  %7s\n", "threads", "lock",
	       "strategy", "real", "predicted", "error");
	for (i = 0; i < n; i++)
		printf("   %7u  %-8s  %-8s  %12s  %12s  %+6.1f%%\n",
		       r[i].cfg.threads, r[i].cfg.lock,
		       vs_fault_strategy_name(r[i].cfg.strategy),
		       mf_fmt_count(a, sizeof(a), r[i].faults_per_s),
		       mf_fmt_count(b, sizeof(b), pred[i]),
		       r[i].faults_per_s > 0 ?
		       (pred[i] / r[i].faults_per_s - 1) * 100 : 0);
	printf("\n POST/PRE: faults/s over locked's at the same threads and "
	       "lock\n\n   %7s  %-8s  %-8s  %12s  %12s  %7s\n", "threads",
	       "lock", "strategy", "real", "predicted", "diff");
	for (i = 0; i < n; i++) {
		p = mf_pre_of(r, n, i);
		if (p < 0 || !(r[p].faults_per_s > 0) || !(pred[p] > 0))
			continue;
		printf("   %7u  %-8s  %-8s  %12.2f  %12.2f  %+7.2f\n",
		       r[i].cfg.threads, r[i].cfg.lock,
		       vs_fault_strategy_name(r[i].cfg.strategy),
		       r[i].faults_per_s / r[p].faults_per_s,
		       pred[i] / pred[p], pred[i] / pred[p] -
		       r[i].faults_per_s / r[p].faults_per_s);
	}
	putchar('\n');
}

int mf_compare_real(struct mf_result *r, int n, const char *machine,
		    char **argv, int (*run_real)(void))
{
	double *pred = calloc((size_t)n, sizeof(*pred));
	char *json = malloc(OUT_MAX);
	int err = pred && json ? 0 : -ENOMEM, ret = 1;

	if (!err)
		err = predict(argv, json, OUT_MAX);
	if (!err)
		err = parse(json, r, pred, n);
	if (err) {
		fprintf(stderr, "multi-fault: --compare-real: the prediction "
			"failed: %s\n", strerror(-err));
	} else {
		ret = run_real();
		if (!ret)
			print_table(r, n, pred, machine);
	}
	free(pred);
	free(json);
	return ret;
}
