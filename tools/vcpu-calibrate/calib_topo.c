/* SPDX-License-Identifier: MIT */
/*
 * tools/vcpu-calibrate/calib_topo.c - the machine's sockets, cores and
 * threads, as /sys/devices/system/cpu/cpuN/topology gives them (Linux's own
 * numbering), and the CPUs this process may run on.  calib.h documents each
 * function that is not static here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* sched_getaffinity, CPU_ISSET */
#endif
#include <ctype.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib.h"

#ifndef SYS_CPU
#define SYS_CPU "/sys/devices/system/cpu"	/* -D: a fake tree to try */
#endif

/* The first line of @path into @buf; false when it cannot be read. */
static bool read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	return ok;
}

/* The number in topology/@file of @cpu; false if there is none. */
static bool read_cpu_int(int cpu, const char *file, int *out)
{
	char path[128], buf[64], *end;
	long v;

	snprintf(path, sizeof(path), SYS_CPU "/cpu%d/topology/%s", cpu, file);
	if (!read_line(path, buf, sizeof(buf)))
		return false;
	v = strtol(buf, &end, 10);
	if (end == buf)
		return false;
	*out = (int)v;
	return true;
}

/* A CPU list, "0-3,8,10-11", into @in[]; false if malformed. */
static bool parse_list(const char *s, bool *in)
{
	long a, b;
	char *end;

	while (*s && !isspace((unsigned char)*s)) {
		a = strtol(s, &end, 10);
		if (end == s || a < 0 || a >= CALIB_MAX_CPUS)
			return false;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a || b >= CALIB_MAX_CPUS)
				return false;
		}
		for (; a <= b; a++)
			in[a] = true;
		s = *end == ',' ? end + 1 : end;
	}
	return true;
}

/* The online CPUs; without sysfs, the first _SC_NPROCESSORS_ONLN. */
static void read_online(bool *online)
{
	char buf[4096];
	long n, i;

	if (read_line(SYS_CPU "/online", buf, sizeof(buf)) &&
	    parse_list(buf, online))
		return;
	memset(online, 0, CALIB_MAX_CPUS * sizeof(*online));
	n = sysconf(_SC_NPROCESSORS_ONLN);
	for (i = 0; i < n && i < CALIB_MAX_CPUS; i++)
		online[i] = true;
}

/* @c's socket, core, siblings and place among them; false if sysfs has
 * no topology for @cpu. */
static bool read_cpu(int cpu, struct calib_cpu *c)
{
	bool sib[CALIB_MAX_CPUS] = { false };
	char path[128], buf[4096];
	int i;

	snprintf(path, sizeof(path), SYS_CPU "/cpu%d/topology/"
		 "thread_siblings_list", cpu);
	if (!read_cpu_int(cpu, "physical_package_id", &c->socket) ||
	    !read_cpu_int(cpu, "core_id", &c->core) ||
	    !read_line(path, buf, sizeof(buf)) || !parse_list(buf, sib) ||
	    !sib[cpu])
		return false;
	c->siblings = 0;
	c->thread = 0;
	for (i = 0; i < CALIB_MAX_CPUS; i++) {
		c->siblings += sib[i];
		c->thread += sib[i] && i < cpu;
	}
	return true;
}

/* The largest cache of @cpu in bytes ("32768K" in cache/index*), 0 if
 * sysfs does not say. */
static size_t read_llc(int cpu)
{
	char path[128], buf[64], *end;
	size_t best = 0, v;
	int i;

	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path),
			 SYS_CPU "/cpu%d/cache/index%d/size", cpu, i);
		if (!read_line(path, buf, sizeof(buf)))
			continue;
		v = strtoul(buf, &end, 10);
		if (*end == 'K')
			v <<= 10;
		else if (*end == 'M')
			v <<= 20;
		if (v > best)
			best = v;
	}
	return best;
}

/* The counts of the profile: sockets, most cores of one, most threads
 * of one core. */
static void count(struct calib_topo *t)
{
	int i, j, cores;
	bool first;

	t->sockets = t->cores_per_socket = t->threads_per_core = 0;
	for (i = 0; i < CALIB_MAX_CPUS; i++) {
		if (!t->cpu[i].online)
			continue;
		if (t->cpu[i].siblings > t->threads_per_core)
			t->threads_per_core = t->cpu[i].siblings;
		/* Count a socket at its first CPU, with its cores. */
		first = true;
		for (j = 0; j < i && first; j++)
			first = !t->cpu[j].online ||
				t->cpu[j].socket != t->cpu[i].socket;
		if (!first)
			continue;
		t->sockets++;
		cores = 0;
		for (j = i; j < CALIB_MAX_CPUS; j++)
			cores += t->cpu[j].online &&
				 t->cpu[j].socket == t->cpu[i].socket &&
				 t->cpu[j].thread == 0;
		if (cores > t->cores_per_socket)
			t->cores_per_socket = cores;
	}
}

void calib_topo_read(struct calib_topo *t)
{
	bool online[CALIB_MAX_CPUS] = { false };
	cpu_set_t allowed;
	int i, first = -1;

	memset(t, 0, sizeof(*t));
	read_online(online);
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		calib_die("sched_getaffinity failed");
	t->from_sysfs = true;
	for (i = 0; i < CALIB_MAX_CPUS; i++) {
		if (!online[i])
			continue;
		if (first < 0)
			first = i;
		t->cpu[i].online = true;
		t->cpu[i].allowed = CPU_ISSET(i, &allowed);
		t->nr_online++;
		t->nr_allowed += t->cpu[i].allowed;
		if (t->from_sysfs && !read_cpu(i, &t->cpu[i]))
			t->from_sysfs = false;
	}
	if (!t->from_sysfs)
		for (i = 0; i < CALIB_MAX_CPUS; i++)
			t->cpu[i] = (struct calib_cpu){ 0, i, 0, 1,
				t->cpu[i].online, t->cpu[i].allowed };
	count(t);
	t->llc_bytes = first < 0 ? 0 : read_llc(first);
	if (t->nr_allowed == 0)
		calib_die("no online CPU in this process's affinity mask");
}

enum calib_dist calib_dist_of(const struct calib_topo *t, int a, int b)
{
	const struct calib_cpu *x = &t->cpu[a], *y = &t->cpu[b];

	if (x->socket != y->socket)
		return CALIB_REMOTE;
	return x->core == y->core ? CALIB_SMT : CALIB_SOCKET;
}

int calib_first_allowed(const struct calib_topo *t, int after)
{
	int i;

	for (i = after + 1; i < CALIB_MAX_CPUS; i++)
		if (t->cpu[i].online && t->cpu[i].allowed)
			return i;
	return -1;
}

/* The id that ranks CPU @i: its socket's, or with @cores its core's
 * (then only CPUs of socket @socket count); false if @i does not count. */
static bool id_of(const struct calib_topo *t, int i, bool cores, int socket,
		  int *id)
{
	const struct calib_cpu *c = &t->cpu[i];

	if (!c->online || (cores && c->socket != socket))
		return false;
	*id = cores ? c->core : c->socket;
	return true;
}

/* How many distinct sockets (or, with @cores, cores of @socket) of the
 * online CPUs have an id below @id. */
static int rank(const struct calib_topo *t, bool cores, int socket, int id)
{
	int i, j, v, w, n = 0;
	bool dup;

	for (i = 0; i < CALIB_MAX_CPUS; i++) {
		if (!id_of(t, i, cores, socket, &v) || v >= id)
			continue;
		dup = false;
		for (j = 0; j < i && !dup; j++)
			dup = id_of(t, j, cores, socket, &w) && w == v;
		n += !dup;
	}
	return n;
}

/* Whether every online CPU sits where @interleaved's scheme says. */
static bool follows(const struct calib_topo *t, bool interleaved)
{
	int s = t->sockets, c = t->cores_per_socket, i, rs, rc, ws, wc;
	const struct calib_cpu *p;

	for (i = 0; i < t->nr_online; i++) {
		p = &t->cpu[i];
		if (!p->online)
			return false;
		rs = rank(t, false, 0, p->socket);
		rc = rank(t, true, p->socket, p->core);
		ws = interleaved ? i % s : (i % (s * c)) / c;
		wc = interleaved ? (i % (s * c)) / s : i % c;
		if (rs != ws || rc != wc || p->thread != i / (s * c))
			return false;
	}
	return true;
}

const char *calib_numbering(const struct calib_topo *t)
{
	if (t->nr_online != t->sockets * t->cores_per_socket *
			    t->threads_per_core)
		return NULL;
	if (follows(t, false))
		return "socket-major";
	return follows(t, true) ? "interleaved" : NULL;
}
