/* SPDX-License-Identifier: MIT */
/*
 * vcpu/trace.c - the one writer of Chrome Trace Event files
 * (vmsim/trace.h documents each function that is not static here): the
 * engine's traces (vs_machine_trace_write()) and the tools' (multi-fault
 * --trace) go through it.
 *
 * A trace is a stdio stream and whether an event was written yet, in the
 * caller's memory: the events are separated by ",\n", and the first one
 * of a file follows its head with "\n" alone.  A part is written as if
 * it followed an event, each of its events after ",\n";
 * vs_trace_add_part() drops the first ',' when the part is what comes
 * first.
 */
#include <vmsim/trace.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PART_HEAD ",\n{"	/* how a part that holds events begins */

/* ---- values ------------------------------------------------------------- */

int vs_json_string(FILE *f, const char *s)
{
	if (!f || !s)
		return -EINVAL;
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
	return ferror(f) ? -EIO : 0;
}

int vs_json_string_read(const char **p, char *out, size_t len)
{
	const char *s = p ? *p : NULL;
	unsigned int u;
	size_t n = 0;

	if (!s || !out || !len || *s++ != '"')
		return -EINVAL;
	for (; *s && *s != '"'; n++) {
		if (n + 1 >= len)
			return -ENOSPC;
		if (*s != '\\') {
			out[n] = *s++;
		} else if (s[1] == '"' || s[1] == '\\') {
			out[n] = s[1];
			s += 2;
		} else if (s[1] == 'u' && sscanf(s + 2, "%4x", &u) == 1 &&
			   u > 0 && u < 0x20) {
			out[n] = (char)u;
			s += 6;
		} else {
			return -EINVAL;
		}
	}
	if (*s != '"')
		return -EINVAL;
	out[n] = '\0';
	*p = s + 1;
	return 0;
}

/* @ns nanoseconds as microseconds, exactly: "1234.567". */
static void put_ns(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned int)(ns % 1000));
}

/* Whether @nr arguments at @a can be written. */
static bool args_ok(const struct vs_trace_arg *a, unsigned int nr)
{
	unsigned int i;

	if (nr && !a)
		return false;
	for (i = 0; i < nr; i++) {
		if (!a[i].key)
			return false;
		switch (a[i].type) {
		case VS_TRACE_T_UINT:
		case VS_TRACE_T_BOOL:
		case VS_TRACE_T_NS:
			break;
		case VS_TRACE_T_NUM:
			if (!isfinite(a[i].num))
				return false;	/* JSON has no NaN */
			break;
		case VS_TRACE_T_STR:
			if (!a[i].str)
				return false;
			break;
		default:
			return false;
		}
	}
	return true;
}

/* {"key":value,...}: @nr arguments, args_ok(). */
static void put_object(FILE *f, const struct vs_trace_arg *a, unsigned int nr)
{
	unsigned int i;

	fputc('{', f);
	for (i = 0; i < nr; i++) {
		if (i)
			fputc(',', f);
		(void)vs_json_string(f, a[i].key);
		fputc(':', f);
		switch (a[i].type) {
		case VS_TRACE_T_UINT:
			fprintf(f, "%" PRIu64, a[i].u);
			break;
		case VS_TRACE_T_NUM:
			fprintf(f, "%.15g", a[i].num);
			break;
		case VS_TRACE_T_STR:
			(void)vs_json_string(f, a[i].str);
			break;
		case VS_TRACE_T_BOOL:
			fputs(a[i].b ? "true" : "false", f);
			break;
		case VS_TRACE_T_NS:
			put_ns(f, a[i].u);
			break;
		}
	}
	fputc('}', f);
}

/* ---- events ------------------------------------------------------------- */

/*
 * One event of phase @ph: the keys in the order vmsim/trace.h gives,
 * "id" when @id, "dur" when @dur.
 * Return: 0, -EINVAL, or -EIO when the stream has failed.
 */
static int put_event(struct vs_trace *t, const struct vs_trace_event *e,
		     char ph, const uint64_t *id, const uint64_t *dur)
{
	FILE *f;

	if (!t || !t->f || !e || !e->name || !args_ok(e->args, e->nr_args))
		return -EINVAL;
	f = t->f;
	fputs(t->first && !t->part ? "\n{\"name\":" : ",\n{\"name\":", f);
	t->first = false;
	(void)vs_json_string(f, e->name);
	if (e->cat) {
		fputs(",\"cat\":", f);
		(void)vs_json_string(f, e->cat);
	}
	fprintf(f, ",\"ph\":\"%c\"", ph);
	if (ph == 'i')
		fputs(",\"s\":\"t\"", f);	/* on its thread's track */
	if (id)
		fprintf(f, ",\"id\":%" PRIu64, *id);
	fputs(",\"ts\":", f);
	if (ph == 'M')
		fputc('0', f);		/* metadata: no time */
	else
		put_ns(f, e->ts);
	if (dur) {
		fputs(",\"dur\":", f);
		put_ns(f, *dur);
	}
	fprintf(f, ",\"pid\":%u,\"tid\":%u", e->pid, e->tid);
	if (e->nr_args) {
		fputs(",\"args\":", f);
		put_object(f, e->args, e->nr_args);
	}
	fputc('}', f);
	return ferror(f) ? -EIO : 0;
}

int vs_trace_slice(struct vs_trace *t, const struct vs_trace_event *e,
		   uint64_t dur)
{
	return put_event(t, e, 'X', NULL, &dur);
}

int vs_trace_instant(struct vs_trace *t, const struct vs_trace_event *e)
{
	return put_event(t, e, 'i', NULL, NULL);
}

int vs_trace_async(struct vs_trace *t, const struct vs_trace_event *e,
		   bool begin, uint64_t id)
{
	return put_event(t, e, begin ? 'b' : 'e', &id, NULL);
}

int vs_trace_counter(struct vs_trace *t, const struct vs_trace_event *e)
{
	unsigned int i;

	if (!e || !e->nr_args || !args_ok(e->args, e->nr_args))
		return -EINVAL;
	for (i = 0; i < e->nr_args; i++)
		if (e->args[i].type != VS_TRACE_T_NUM &&
		    e->args[i].type != VS_TRACE_T_UINT)
			return -EINVAL;	/* a series is a number */
	return put_event(t, e, 'C', NULL, NULL);
}

int vs_trace_meta(struct vs_trace *t, const struct vs_trace_event *e)
{
	if (!e || e->nr_args != 1)
		return -EINVAL;
	return put_event(t, e, 'M', NULL, NULL);
}

/* ---- the file ----------------------------------------------------------- */

/* Make @t a trace (or part) written to @f. */
static void trace_init(struct vs_trace *t, FILE *f, bool part)
{
	t->f = f;
	t->part = part;
	t->first = true;
}

int vs_trace_open(struct vs_trace *t, const char *path)
{
	FILE *f;

	if (!t || !path)
		return -EINVAL;
	f = fopen(path, "we");
	if (!f)
		return -errno;
	trace_init(t, f, false);
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
	return 0;
}

int vs_trace_open_part(struct vs_trace *t, int fd)
{
	FILE *f;

	if (!t || fd < 0)
		return -EINVAL;
	f = fdopen(fd, "w");
	if (!f)
		return -errno;
	trace_init(t, f, true);
	return 0;
}

/* The bytes of @fd from offset @at on, into @f.  Return: 0 or -errno. */
static int copy_from(FILE *f, int fd, off_t at)
{
	char buf[16384];
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), at)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		fwrite(buf, 1, (size_t)n, f);
		at += n;
	}
	return ferror(f) ? -EIO : 0;
}

int vs_trace_add_part(struct vs_trace *t, int fd)
{
	char head[sizeof(PART_HEAD) - 1];
	off_t skip;
	ssize_t n;

	if (!t || !t->f || fd < 0)
		return -EINVAL;
	do
		n = pread(fd, head, sizeof(head), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;	/* a part with no event */
	if ((size_t)n < sizeof(head) || memcmp(head, PART_HEAD, sizeof(head)))
		return -EINVAL;
	/* The first event of the file: no ',' before it, unless a part. */
	skip = t->first && !t->part;
	t->first = false;
	return copy_from(t->f, fd, skip);
}

/* Flush and close @f.  Return: 0, or the first error. */
static int finish(FILE *f)
{
	int err = 0;

	if (fflush(f) == EOF)
		err = -errno;
	else if (ferror(f))
		err = -EIO;
	if (fclose(f) == EOF && !err)
		err = -errno;
	return err;
}

int vs_trace_close(struct vs_trace *t, const struct vs_trace_arg *other,
		   unsigned int nr)
{
	FILE *f;
	int err = 0, e;

	if (!t || !t->f)
		return 0;
	f = t->f;
	if ((t->part && nr) || !args_ok(other, nr))
		err = -EINVAL;
	else if (!t->part && nr) {
		fputs("\n],\n\"otherData\":", f);
		put_object(f, other, nr);
		fputs("}\n", f);
	} else if (!t->part) {
		fputs("\n]}\n", f);
	}
	e = finish(f);
	t->f = NULL;
	return err ? err : e;
}
