/* SPDX-License-Identifier: MIT */
/*
 * test/check/shard.c - VMSIM_SHARD, VMSIM_SHARD_OUT and VMSIM_SHARD_MERGE
 * for vs_explore() (test/check/shard.h, docs/sharding.md).
 *
 * A shard's exploration is one line of JSON, appended to
 * VMSIM_SHARD_OUT when it ends:
 *
 *   {"vmsim_explore_shard":1,"shard":"2/4","scenario":"race-spf",
 *    "seed":1,"sched":"pct","max":1000,"opts":0,"warmup":123456789,"err":0,
 *    "result":0,
 *    "schedules":1000,"exhausted":0,"found_preemptions":0,
 *    "preemptions":0,"shrink_runs":0,"stale":0,"seconds":1.5,
 *    "replay":"","text":""}
 *
 * Every schedule is deterministic, so the unsharded exploration stops
 * at the lowest schedule that fails in any shard, and reports it as
 * that shard did: the merge takes that shard's line whole.
 *
 * Locking: none; the exploring host thread's own buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vmsim/trace.h>
#include <vmsim/vcpu.h>

#include "shard.h"

#define LINE_MAX_BYTES (256u << 10)	/* one line, its escapes in */

int vs__shard_env(struct vs__shard *sh, char *msg, size_t len)
{
	const char *e = getenv("VMSIM_SHARD");

	memset(sh, 0, sizeof(*sh));
	sh->merge = getenv("VMSIM_SHARD_MERGE");
	if (sh->merge && !*sh->merge)
		sh->merge = NULL;
	if (!e || !*e)
		return 0;
	if (vs_shard_parse(e, &sh->k, &sh->n)) {
		snprintf(msg, len, "VMSIM_SHARD: '%s' is not K/N with 1 <= K "
			 "<= N", e);
		return -EINVAL;
	}
	sh->out = getenv("VMSIM_SHARD_OUT");
	if (!sh->out || !*sh->out) {
		snprintf(msg, len, "VMSIM_SHARD=%s needs VMSIM_SHARD_OUT=FILE, "
			 "where the shard's JSON goes", e);
		return -EINVAL;
	}
	if (sh->merge) {
		snprintf(msg, len, "VMSIM_SHARD=%s does not go with "
			 "VMSIM_SHARD_MERGE: a merge explores nothing", e);
		return -EINVAL;
	}
	return 0;
}

unsigned long vs__shard_next(const struct vs__shard *sh, unsigned long s)
{
	unsigned long next = s + 1;

	if (!sh->n || next <= 2)
		return next;
	while ((next - 1) % sh->n != sh->k - 1)
		next++;
	return next;
}

/* ---- writing ------------------------------------------------------------- */

/* The shard line of one exploration into @f. */
static void shard_line(FILE *f, const struct vs__shard *sh,
		       const struct vs__shard_key *key, int ret,
		       const struct vs_explore_report *rep)
{
	fprintf(f, "{\"vmsim_explore_shard\":1,\"shard\":\"%u/%u\","
		"\"scenario\":", sh->k, sh->n);
	(void)vs_json_string(f, key->name);
	fprintf(f, ",\"seed\":%llu,\"sched\":", (unsigned long long)key->seed);
	(void)vs_json_string(f, key->sched);
	fprintf(f, ",\"max\":%lu,\"opts\":%llu,\"warmup\":%llu,\"err\":%d,"
		"\"result\":%d,\"schedules\":%lu,"
		"\"exhausted\":%d,\"found_preemptions\":%u,\"preemptions\":%u,"
		"\"shrink_runs\":%lu,\"stale\":%d,\"seconds\":%.6f,\"replay\":",
		key->max, (unsigned long long)key->opts,
		(unsigned long long)key->warmup, ret, rep->result,
		rep->schedules, rep->exhausted, rep->found_preemptions,
		rep->preemptions, rep->shrink_runs, rep->stale, rep->seconds);
	(void)vs_json_string(f, rep->replay);
	fputs(",\"text\":", f);
	(void)vs_json_string(f, rep->text);
	fputs("}\n", f);
}

int vs__shard_write(const struct vs__shard *sh, const struct vs__shard_key *key,
		    int ret, const struct vs_explore_report *rep)
{
	char *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	ssize_t w;
	int fd, err = 0;

	if (!f)
		return -ENOMEM;
	shard_line(f, sh, key, ret, rep);
	if (ferror(f) | fclose(f))
		err = -ENOMEM;
	else if (len >= LINE_MAX_BYTES)
		err = -ENOSPC;	/* longer than the merge reads a line */
	fd = err ? -1 : open(sh->out, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (!err && fd < 0)
		err = -errno;
	else if (!err && (w = write(fd, line, len)) < 0)
		err = -errno;
	else if (!err && (size_t)w != len)
		err = -EIO;
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	free(line);
	return err;
}

/* ---- reading ------------------------------------------------------------- */

/* One line of a shard file, as read. */
struct line {
	unsigned int k, n;
	char scenario[VS_EXPLORE_NAME_MAX + 1];
	char sched[64];
	unsigned long long seed, opts, warmup;
	unsigned long max;
	int err;			/* what vs_explore() returned */
	struct vs_explore_report rep;
};

/* Skip the literal @lit at *@p; 0 or -EINVAL. */
static int lit(const char **p, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*p, lit, n))
		return -EINVAL;
	*p += n;
	return 0;
}

/* ,"@key":<number> into *@v (signed when @v is read as such). */
static int num(const char **p, const char *key, long long *v)
{
	char want[64], *end;

	snprintf(want, sizeof(want), ",\"%s\":", key);
	if (lit(p, want))
		return -EINVAL;
	/* A hash takes all 64 bits: unsigned unless it has a sign. */
	*v = **p == '-' ? strtoll(*p, &end, 10) :
			  (long long)strtoull(*p, &end, 10);
	if (end == *p)
		return -EINVAL;
	*p = end;
	return 0;
}

/* The numbers of a line, from "seed" to "stale". */
static int numbers(const char **p, struct line *l)
{
	static const char *const keys[] = { "max", "opts", "warmup", "err",
		"result", "schedules", "exhausted", "found_preemptions",
		"preemptions", "shrink_runs", "stale" };
	long long v[11];
	unsigned int i;

	for (i = 0; i < 11; i++)
		if (num(p, keys[i], &v[i]))
			return -EINVAL;
	l->max = (unsigned long)v[0];
	l->opts = (unsigned long long)v[1];
	l->warmup = (unsigned long long)v[2];
	l->err = (int)v[3];
	l->rep.result = (int)v[4];
	l->rep.schedules = (unsigned long)v[5];
	l->rep.exhausted = (int)v[6];
	l->rep.found_preemptions = (unsigned int)v[7];
	l->rep.preemptions = (unsigned int)v[8];
	l->rep.shrink_runs = (unsigned long)v[9];
	l->rep.stale = (int)v[10];
	return 0;
}

/* One line as vs__shard_write() writes it into @l. */
static int parse_line(const char *p, struct line *l)
{
	char kn[32], *end;
	long long seed;

	memset(l, 0, sizeof(*l));
	if (lit(&p, "{\"vmsim_explore_shard\":1,\"shard\":") ||
	    vs_json_string_read(&p, kn, sizeof(kn)) ||
	    vs_shard_parse(kn, &l->k, &l->n) || lit(&p, ",\"scenario\":") ||
	    vs_json_string_read(&p, l->scenario, sizeof(l->scenario)) ||
	    num(&p, "seed", &seed) || lit(&p, ",\"sched\":") ||
	    vs_json_string_read(&p, l->sched, sizeof(l->sched)) ||
	    numbers(&p, l) || lit(&p, ",\"seconds\":"))
		return -EINVAL;
	l->seed = (unsigned long long)seed;
	l->rep.seconds = strtod(p, &end);
	p = end;
	if (lit(&p, ",\"replay\":") ||
	    vs_json_string_read(&p, l->rep.replay, sizeof(l->rep.replay)) ||
	    lit(&p, ",\"text\":") ||
	    vs_json_string_read(&p, l->rep.text, sizeof(l->rep.text)) ||
	    lit(&p, "}"))
		return -EINVAL;
	return 0;
}

static int same_key(const struct line *l, const struct vs__shard_key *key)
{
	return !strcmp(l->scenario, key->name) && l->seed == key->seed &&
	       !strcmp(l->sched, key->sched) && l->max == key->max &&
	       l->opts == key->opts && l->warmup == key->warmup;
}

/* What the merge keeps: each shard's line for the key. */
struct merge {
	const struct vs__shard_key *key;
	unsigned int n;			/* 0 until the first line */
	struct line *by;		/* [n]: shard k's at k - 1 */
	char *have;
	struct line l;			/* the line being read */
	char *text;			/* the line read */
};

static int fail(struct vs_explore_report *rep, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct vs_explore_report *rep, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep->text, sizeof(rep->text), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Line @l of @path: kept when it is of the key and a shard not seen. */
static int keep(struct merge *m, const char *path,
		struct vs_explore_report *rep)
{
	struct line *l = &m->l;

	if (!same_key(l, m->key))
		return 0;
	if (!m->n) {
		m->n = l->n;
		m->by = calloc(l->n, sizeof(*m->by));
		m->have = calloc(l->n, 1);
		if (!m->by || !m->have)
			return -ENOMEM;
	}
	if (l->n != m->n)
		return fail(rep, "explore: %s: VMSIM_SHARD_MERGE: %s has shard "
			    "%u/%u of it, another has %u shards\n",
			    m->key->name, path, l->k, l->n, m->n);
	if (!m->have[l->k - 1]) {	/* a later one: the same run again */
		m->by[l->k - 1] = *l;
		m->have[l->k - 1] = 1;
	}
	return 0;
}

/* Every line of @path through keep(). */
static int read_file(struct merge *m, const char *path,
		     struct vs_explore_report *rep)
{
	FILE *in = fopen(path, "r");
	unsigned long nr = 0;
	int err = 0;

	if (!in)
		return fail(rep, "explore: %s: VMSIM_SHARD_MERGE: %s: %s\n",
			    m->key->name, path, strerror(errno));
	while (!err && fgets(m->text, LINE_MAX_BYTES, in)) {
		nr++;
		if (parse_line(m->text, &m->l))
			err = fail(rep, "explore: %s: VMSIM_SHARD_MERGE: %s:%lu:"
				   " not a line of VMSIM_SHARD_OUT\n",
				   m->key->name, path, nr);
		else
			err = keep(m, path, rep);
	}
	fclose(in);
	return err;
}

/* The shards' lines put together: the lowest failure, or the most
 * schedules. */
static int pick(const struct merge *m, struct vs_explore_report *rep,
		int *ret)
{
	const struct line *best = NULL, *l;
	double seconds = 0;
	unsigned int k;

	if (!m->n)
		return fail(rep, "explore: %s: VMSIM_SHARD_MERGE: no shard's "
			    "file has this exploration (seed %llu, %lu "
			    "schedules)\n", m->key->name,
			    (unsigned long long)m->key->seed, m->key->max);
	for (k = 0; k < m->n; k++) {
		if (!m->have[k])
			return fail(rep, "explore: %s: VMSIM_SHARD_MERGE: "
				    "shard %u/%u of it is missing\n",
				    m->key->name, k + 1, m->n);
		l = &m->by[k];
		if (l->rep.seconds > seconds)
			seconds = l->rep.seconds;
		if (!best || (l->err && (!best->err ||
		    l->rep.schedules < best->rep.schedules)) ||
		    (!l->err && !best->err &&
		     l->rep.schedules > best->rep.schedules))
			best = l;
	}
	*rep = best->rep;
	*ret = best->err;
	rep->seconds = seconds;	/* the longest shard's host time */
	return 0;
}

int vs__shard_merge(const struct vs__shard *sh, const struct vs__shard_key *key,
		    struct vs_explore_report *rep, int *ret)
{
	struct merge m = { .key = key };
	char *paths = strdup(sh->merge), *path, *save = NULL;
	int err = 0;

	m.text = malloc(LINE_MAX_BYTES);
	if (!paths || !m.text)
		err = -ENOMEM;
	for (path = paths ? strtok_r(paths, ",", &save) : NULL;
	     !err && path; path = strtok_r(NULL, ",", &save))
		err = read_file(&m, path, rep);
	if (!err)
		err = pick(&m, rep, ret);
	free(m.by);
	free(m.have);
	free(m.text);
	free(paths);
	return err;
}
