/* SPDX-License-Identifier: MIT */
/*
 * tools/multi-fault/mf_shard.c - --shard K/N and --merge: the vCPU
 * mode's repeats shared among N runs, on one host or many, and put back
 * together (docs/sharding.md).
 *
 * Job j (repeat j / n of configuration j % n, mf_jobs.c's order) belongs
 * to shard K of N when j % N == K - 1.  A vCPU repeat is deterministic
 * and runs in a child forked for it alone, so a shard's samples are the
 * unsharded run's, bit for bit: the shard writes each as the bytes of
 * its struct mf_sample, in hex, inside one JSON object on standard
 * output, with the options it ran (--shard left out):
 *
 *   {"multi_fault_shard":1,"shard":"2/4","jobs":12,"sample_bytes":1184,
 *    "args":["--vcpus","2","--repeat","3"],
 *    "samples":[{"job":1,"hex":"..."},{"job":5,"hex":"..."}]}
 *
 * The bytes are this build's: every host of a job runs the same build,
 * and "sample_bytes" refuses a file of another layout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mf.h"
#include <vmsim/trace.h>
#include <vmsim/vcpu.h>

#define SHARD_FILE_MAX (64u << 20)	/* bytes of one shard file */

bool mf_shard_has(const struct mf_shard *sh, unsigned int job)
{
	return !sh || !sh->n || job % sh->n == sh->k - 1;
}

int mf_shard_write(FILE *out, const struct mf_shard *sh, char **args,
		   int nargs, const struct mf_sample *s, const char *ok,
		   unsigned int total)
{
	const unsigned char *b;
	unsigned int j, first = 1;
	size_t i;
	int a;

	fprintf(out, "{\"multi_fault_shard\":1,\"shard\":\"%u/%u\","
		"\"jobs\":%u,\"sample_bytes\":%zu,\"args\":[", sh->k, sh->n,
		total, sizeof(*s));
	for (a = 0; a < nargs; a++) {
		if (a)
			fputc(',', out);
		(void)vs_json_string(out, args[a]);
	}
	fputs("],\"samples\":[", out);
	for (j = 0; j < total; j++) {
		if (!mf_shard_has(sh, j) || !ok[j])
			continue;
		fprintf(out, "%s{\"job\":%u,\"hex\":\"", first ? "" : ",", j);
		b = (const unsigned char *)&s[j];
		for (i = 0; i < sizeof(*s); i++)
			fprintf(out, "%02x", b[i]);
		fputs("\"}", out);
		first = 0;
	}
	fputs("]}\n", out);
	return fflush(out) || ferror(out) ? -EIO : 0;
}

/* ---- reading a shard file ------------------------------------------------ */

/* A parse of one file: where it stands, and its name for messages. */
struct rd {
	const char *p;
	const char *path;
};

static int bad(const struct rd *r, const char *what)
{
	fprintf(stderr, "multi-fault: --merge: %s: not a shard file of this "
		"build: %s\n", r->path, what);
	return -EINVAL;
}

/* Skip "@lit" (after blanks); 0 or -EINVAL. */
static int expect(struct rd *r, const char *lit)
{
	size_t n = strlen(lit);

	r->p += strspn(r->p, " \t\r\n");
	if (strncmp(r->p, lit, n))
		return -EINVAL;
	r->p += n;
	return 0;
}

static int read_uint(struct rd *r, unsigned long *v)
{
	char *end;

	r->p += strspn(r->p, " \t\r\n");
	if (*r->p < '0' || *r->p > '9')
		return -EINVAL;
	*v = strtoul(r->p, &end, 10);
	r->p = end;
	return 0;
}

/* A string vs_json_string() wrote (after blanks), into a new buffer in
 * *@out: never longer than the text that holds it. */
static int read_str(struct rd *r, char **out)
{
	size_t len;
	char *s;

	r->p += strspn(r->p, " \t\r\n");
	len = strlen(r->p) + 1;
	s = malloc(len);
	if (!s)
		return -ENOMEM;
	if (vs_json_string_read(&r->p, s, len)) {
		free(s);
		return -EINVAL;
	}
	*out = s;
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "hex":"..." of one sample into @s. */
static int read_hex(struct rd *r, struct mf_sample *s)
{
	unsigned char *b = (unsigned char *)s;
	size_t i;
	int hi, lo;

	if (expect(r, "\"hex\":\""))
		return -EINVAL;
	for (i = 0; i < sizeof(*s); i++) {
		hi = hex_digit(r->p[0]);
		lo = hi < 0 ? -1 : hex_digit(r->p[1]);
		if (lo < 0)
			return -EINVAL;
		b[i] = (unsigned char)(hi << 4 | lo);
		r->p += 2;
	}
	return expect(r, "\"}");
}

/* The file's head: its shard, its job count, its sample layout. */
static int read_head(struct rd *r, struct mf_shard_file *f)
{
	unsigned long jobs, bytes;
	char *sh;
	int err;

	if (expect(r, "{\"multi_fault_shard\":1,\"shard\":"))
		return bad(r, "no \"multi_fault_shard\" head");
	err = read_str(r, &sh);
	if (err)
		return err == -ENOMEM ? err : bad(r, "\"shard\"");
	err = vs_shard_parse(sh, &f->shard.k, &f->shard.n);
	free(sh);
	if (err)
		return bad(r, "\"shard\" is not K/N");
	if (expect(r, ",\"jobs\":") || read_uint(r, &jobs) || !jobs ||
	    jobs > (unsigned long)MF_MAX_REPEAT * 512)
		return bad(r, "\"jobs\"");
	f->jobs = (unsigned int)jobs;
	if (expect(r, ",\"sample_bytes\":") || read_uint(r, &bytes))
		return bad(r, "\"sample_bytes\"");
	if (bytes != sizeof(struct mf_sample))
		return bad(r, "its samples are of another layout (another "
			   "build of multi-fault wrote it)");
	return 0;
}

/* "args":[...] into @f->args. */
static int read_args(struct rd *r, struct mf_shard_file *f)
{
	int err;

	if (expect(r, ",\"args\":["))
		return bad(r, "\"args\"");
	while (expect(r, "]")) {
		if (f->nargs && expect(r, ","))
			return bad(r, "\"args\"");
		if (f->nargs == MF_SHARD_ARGS_MAX)
			return bad(r, "too many \"args\"");
		err = read_str(r, &f->args[f->nargs]);
		if (err)
			return err == -ENOMEM ? err : bad(r, "\"args\"");
		f->nargs++;
	}
	return 0;
}

/* "samples":[...] into @s[0..@f->jobs), each marked in @have. */
static int read_samples(struct rd *r, const struct mf_shard_file *f,
			struct mf_sample *s, char *have)
{
	unsigned long j;
	int first = 1;

	if (expect(r, ",\"samples\":["))
		return bad(r, "\"samples\"");
	while (expect(r, "]")) {
		if ((!first && expect(r, ",")) || expect(r, "{\"job\":") ||
		    read_uint(r, &j) || j >= f->jobs || expect(r, ","))
			return bad(r, "a sample's \"job\"");
		if (!mf_shard_has(&f->shard, (unsigned int)j))
			return bad(r, "a job of another shard");
		if (have[j])
			return bad(r, "a job twice");
		if (read_hex(r, &s[j]))
			return bad(r, "a sample's \"hex\"");
		have[j] = 1;
		first = 0;
	}
	return expect(r, "}") ? bad(r, "no end") : 0;
}

/* The whole of @path, NUL-terminated, in a new buffer. */
static char *slurp(const char *path)
{
	FILE *in = fopen(path, "r");
	char *buf;
	size_t n;

	if (!in) {
		fprintf(stderr, "multi-fault: --merge: %s: %s\n", path,
			strerror(errno));
		return NULL;
	}
	buf = malloc(SHARD_FILE_MAX + 1);
	n = buf ? fread(buf, 1, SHARD_FILE_MAX + 1, in) : 0;
	fclose(in);
	if (!buf || n > SHARD_FILE_MAX) {
		fprintf(stderr, "multi-fault: --merge: %s: %s\n", path,
			buf ? "too large" : strerror(ENOMEM));
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

int mf_shard_read(const char *path, struct mf_shard_file *f,
		  struct mf_sample **s, char **have)
{
	struct rd r = { NULL, path };
	char *buf = slurp(path);
	int err;

	memset(f, 0, sizeof(*f));
	*s = NULL;
	*have = NULL;
	if (!buf)
		return -EIO;
	r.p = buf;
	err = read_head(&r, f);
	if (!err)
		err = read_args(&r, f);
	if (!err) {
		*s = calloc(f->jobs, sizeof(**s));
		*have = calloc(f->jobs, 1);
		err = *s && *have ? read_samples(&r, f, *s, *have) : -ENOMEM;
	}
	free(buf);
	if (err == -ENOMEM)
		fprintf(stderr, "multi-fault: --merge: %s: %s\n", path,
			strerror(ENOMEM));
	return err;
}

void mf_shard_file_free(struct mf_shard_file *f)
{
	while (f->nargs)
		free(f->args[--f->nargs]);
}

/* Whether @a and @b ran the same options. */
static bool same_args(const struct mf_shard_file *a,
		      const struct mf_shard_file *b)
{
	int i;

	if (a->nargs != b->nargs)
		return false;
	for (i = 0; i < a->nargs; i++)
		if (strcmp(a->args[i], b->args[i]))
			return false;
	return true;
}

/*
 * Whether @f, read from @path, is a shard of the job of @first (read
 * from @first_path) not seen before: @by[k - 1] names shard k's file.
 */
static int one_of(const struct mf_shard_file *first, const char *first_path,
		  const struct mf_shard_file *f, const char *path,
		  const char **by)
{
	if (f->shard.n != first->shard.n || f->jobs != first->jobs ||
	    !same_args(f, first)) {
		fprintf(stderr, "multi-fault: --merge: %s (shard %u/%u) is "
			"of another job than %s (shard %u/%u): other %s\n",
			path, f->shard.k, f->shard.n, first_path,
			first->shard.k, first->shard.n,
			f->shard.n != first->shard.n ? "number of shards" :
			"options");
		return -EINVAL;
	}
	if (by[f->shard.k - 1]) {
		fprintf(stderr, "multi-fault: --merge: shard %u/%u is given "
			"twice: %s and %s\n", f->shard.k, f->shard.n,
			by[f->shard.k - 1], path);
		return -EINVAL;
	}
	by[f->shard.k - 1] = path;
	return 0;
}

/* Every shard given, every job of each in: or name the first missing. */
static int complete(const struct mf_shard_file *first, const char **by,
		    const char *have)
{
	unsigned int k, j;

	for (k = 0; k < first->shard.n; k++) {
		if (by[k])
			continue;
		fprintf(stderr, "multi-fault: --merge: shard %u/%u is "
			"missing\n", k + 1, first->shard.n);
		return -EINVAL;
	}
	for (j = 0; j < first->jobs; j++) {
		if (have[j])
			continue;
		fprintf(stderr, "multi-fault: --merge: %s (shard %u/%u) lacks "
			"job %u: that run was interrupted or failed\n",
			by[j % first->shard.n], j % first->shard.n + 1,
			first->shard.n, j);
		return -EINVAL;
	}
	return 0;
}

/* Shard file @path's samples into @all[], marked in @have_all. */
static int merge_one(const char *path, struct mf_shard_file *first,
		     const char *first_path, const char **by,
		     struct mf_sample *all, char *have_all)
{
	struct mf_shard_file f;
	struct mf_sample *s;
	char *have;
	unsigned int j;
	int err = mf_shard_read(path, &f, &s, &have);

	if (!err)
		err = one_of(first, first_path, &f, path, by);
	for (j = 0; !err && j < f.jobs; j++) {
		if (!have[j])
			continue;
		all[j] = s[j];
		have_all[j] = 1;
	}
	mf_shard_file_free(&f);
	free(s);
	free(have);
	return err;
}

int mf_shard_merge(const char *const *paths, unsigned int nr,
		   struct mf_shard_file *first, struct mf_sample **all,
		   char **ok)
{
	struct mf_sample *s0;
	const char **by = NULL;
	char *have = NULL, *have0;
	unsigned int i, j;
	int err;

	*all = NULL;
	*ok = NULL;
	err = mf_shard_read(paths[0], first, &s0, &have0);
	if (!err) {
		by = calloc(first->shard.n, sizeof(*by));
		have = calloc(first->jobs, 1);
		err = by && have ? 0 : -ENOMEM;
	}
	if (!err) {
		by[first->shard.k - 1] = paths[0];
		for (j = 0; j < first->jobs; j++)
			have[j] = have0[j];
		for (i = 1; !err && i < nr; i++)
			err = merge_one(paths[i], first, paths[0], by, s0,
					have);
	}
	if (!err)
		err = complete(first, by, have);
	free(by);
	free(have0);
	if (err) {
		mf_shard_file_free(first);
		free(s0);
		free(have);
		return err;
	}
	*all = s0;
	*ok = have;
	return 0;
}
