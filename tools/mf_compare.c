/* SPDX-License-Identifier: MIT */
/*
 * tools/mf_compare.c - the native multi-fault's two ways into the vCPU
 * mode, which runs in the vCPU build of the tool (multi-fault-vcpu,
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

void mf_exec_vcpu(char **argv)
{
	char path[PATH_MAX];
	const char *p = vcpu_path(path, sizeof(path));

	fflush(NULL);
	execvp(p, argv);
	fprintf(stderr, "multi-fault: --vcpus: cannot run %s: %s (the vCPU "
		"build of multi-fault; a TSan build has none)\n", p,
		strerror(errno));
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
	if (!args || pipe(fds)) {
		free(args);
		return -ENOMEM;
	}
	memcpy(args, argv, (size_t)argc * sizeof(*args));
	args[argc] = "--json";
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		mf_exec_vcpu(args);
	}
	close(fds[1]);
	free(args);
	while (pid > 0 && got + 1 < len &&
	       (n = read(fds[0], out + got, len - 1 - got)) != 0) {
		if (n > 0)
			got += (size_t)n;
		else if (errno != EINTR)
			break;
	}
	out[got] = '\0';
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -ECHILD;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

/* The "faults_per_s" of each JSON line of @json into @fps[0..n). */
static int parse(const char *json, double *fps, int n)
{
	const char *key = "\"faults_per_s\":", *p = json;
	int i;

	for (i = 0; i < n; i++) {
		p = strstr(p, key);
		if (!p)
			return -EINVAL;
		p += strlen(key);
		fps[i] = strtod(p, NULL);
	}
	return 0;
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
		err = parse(json, pred, n);
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
