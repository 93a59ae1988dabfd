/* SPDX-License-Identifier: MIT */
/*
 * vmsim/trace.h - a Chrome Trace Event file, written event by event.
 *
 * The Trace Event Format, in its JSON object form, which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open: one event a line, its
 * keys always in the order name, cat, ph, s, id, ts, dur, pid, tid,
 * args (those the event has), and the file's own data at the end:
 *
 *	{"displayTimeUnit":"ns","traceEvents":[
 *	{"name":"thread_name","ph":"M","ts":0,"pid":1,"tid":1,"args":{"name":"faulter 0"}},
 *	{"name":"fault","cat":"fault","ph":"X","ts":8.000,"dur":20.000,"pid":1,"tid":1},
 *	{"name":"faults/s","ph":"C","ts":50.000,"pid":1,"tid":0,"args":{"faults/s":1}}
 *	],
 *	"otherData":{"truncated":false}}
 *
 *   struct vs_trace t;
 *   struct vs_trace_arg arg = VS_TRACE_STR("name", "faulter 0");
 *   struct vs_trace_event e = { .name = "thread_name", .pid = 1,
 *			          .tid = 1, .args = &arg, .nr_args = 1 };
 *
 *   err = vs_trace_open(&t, "/tmp/trace.json");
 *   err = vs_trace_meta(&t, &e);
 *   ...
 *   err = vs_trace_close(&t, NULL, 0);
 *
 * Times are nanoseconds, written as the format's microseconds to the
 * nanosecond, from the integer ("1234.567"): no rounding can move the
 * end of a slice past the end of the slice around it.  Strings are
 * escaped as JSON wants ('"', '\\' and control characters).  A trace
 * may be written in parts by several processes: each writes its events
 * into a part (vs_trace_open_part()), and one adds the parts to the file
 * in the order it chooses (vs_trace_add_part()).
 *
 * Every function refuses a bad argument with -EINVAL and writes nothing
 * then; none keeps a pointer it was given past the call.  A trace is the
 * caller's memory and allocates none but its stdio stream's, so that
 * tracing a program moves nothing else on its heap (the vCPU engine's
 * figures depend on where the work's objects lie).  The writer depends
 * on libc alone (it is the engine's, vcpu/trace.c).
 *
 * Locking: a trace belongs to one thread at a time; the caller
 * serialises.
 */
#ifndef VMSIM_TRACE_H
#define VMSIM_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"

/**
 * struct vs_trace - a trace, or a part of one, being written
 * @f: the stream, a FILE; NULL when the trace is not open
 * @part: events only (vs_trace_open_part())
 * @first: no event written yet
 *
 * Set up with vs_trace_open() or vs_trace_open_part(); every member is
 * private to vcpu/trace.c.  A zeroed one is closed: every function but
 * the two opens refuses it.
 */
struct vs_trace {
	void *f;
	bool part;
	bool first;
};

/**
 * enum vs_trace_type - what an argument's value is, and how it is written
 * @VS_TRACE_T_UINT: @u, in decimal
 * @VS_TRACE_T_NUM: @num, finite, with up to 15 significant digits
 * @VS_TRACE_T_STR: @str, a JSON string, escaped
 * @VS_TRACE_T_BOOL: @b, true or false
 * @VS_TRACE_T_NS: @u nanoseconds, in microseconds to the nanosecond, as
 *	ts and dur are
 */
enum vs_trace_type {
	VS_TRACE_T_UINT,
	VS_TRACE_T_NUM,
	VS_TRACE_T_STR,
	VS_TRACE_T_BOOL,
	VS_TRACE_T_NS,
};

/**
 * struct vs_trace_arg - one key and value of an event's args, or of the
 * file's otherData
 * @key: the key, escaped when written
 * @type: which member holds the value (the others are not read)
 * @u: the value of VS_TRACE_T_UINT and VS_TRACE_T_NS
 * @num: the value of VS_TRACE_T_NUM
 * @str: the value of VS_TRACE_T_STR, not NULL
 * @b: the value of VS_TRACE_T_BOOL
 */
struct vs_trace_arg {
	const char *key;
	enum vs_trace_type type;
	uint64_t u;
	double num;
	const char *str;
	bool b;
};

/** VS_TRACE_UINT - an argument @k of unsigned value @v */
#define VS_TRACE_UINT(k, v) \
	((struct vs_trace_arg){ .key = (k), .type = VS_TRACE_T_UINT, .u = (v) })
/** VS_TRACE_NUM - an argument @k of finite value @v */
#define VS_TRACE_NUM(k, v) \
	((struct vs_trace_arg){ .key = (k), .type = VS_TRACE_T_NUM, .num = (v) })
/** VS_TRACE_STR - an argument @k of string value @v */
#define VS_TRACE_STR(k, v) \
	((struct vs_trace_arg){ .key = (k), .type = VS_TRACE_T_STR, .str = (v) })
/** VS_TRACE_BOOL - an argument @k of value @v, true or false */
#define VS_TRACE_BOOL(k, v) \
	((struct vs_trace_arg){ .key = (k), .type = VS_TRACE_T_BOOL, .b = (v) })
/** VS_TRACE_NS - an argument @k of @v nanoseconds */
#define VS_TRACE_NS(k, v) \
	((struct vs_trace_arg){ .key = (k), .type = VS_TRACE_T_NS, .u = (v) })

/**
 * struct vs_trace_event - what every event has
 * @name: its name, not NULL
 * @cat: its category, or NULL for none
 * @ts: when it starts, in nanoseconds
 * @pid: its process, a group of tracks
 * @tid: its thread: the track it is drawn on
 * @args: its arguments, @nr_args of them (NULL when none)
 * @nr_args: how many
 */
struct vs_trace_event {
	const char *name;
	const char *cat;
	uint64_t ts;
	unsigned int pid, tid;
	const struct vs_trace_arg *args;
	unsigned int nr_args;
};

/**
 * vs_trace_open - create or truncate @path and start a trace in it
 * @t: the trace, not open
 * @path: the file
 *
 * The file's head is written at once.
 * Context: any; opens a file.
 * Return: 0; -EINVAL for NULL; or the negative errno of a file that
 * cannot be created.
 */
VS_EXTERN int vs_trace_open(struct vs_trace *t, const char *path);

/**
 * vs_trace_open_part - start a part of a trace in @fd: events only, for
 * vs_trace_add_part() to add to the trace
 * @t: the part, not open
 * @fd: an open, writable file, empty; vs_trace_close() closes it (after
 *	an error here it is still the caller's)
 *
 * Context: any.
 * Return: 0; -EINVAL for NULL or a negative @fd; or the negative errno
 * of fdopen().
 */
VS_EXTERN int vs_trace_open_part(struct vs_trace *t, int fd);

/**
 * vs_trace_slice - a complete event, "X": a slice [ts, ts + @dur) on
 * its track
 * @t: the trace
 * @e: the event
 * @dur: how long it lasts, in nanoseconds
 *
 * Slices of one track must nest, or the viewer drops those that
 * overlap; an overlapping one may go as an async pair instead.
 * Context: the trace's thread.
 * Return: 0; -EINVAL for a bad argument; -EIO after a failed write.
 */
VS_EXTERN int vs_trace_slice(struct vs_trace *t,
			     const struct vs_trace_event *e, uint64_t dur);

/**
 * vs_trace_instant - an instant event, "i", on its thread's track
 * @t: the trace
 * @e: the event
 *
 * Context: the trace's thread.
 * Return: 0; -EINVAL for a bad argument; -EIO after a failed write.
 */
VS_EXTERN int vs_trace_instant(struct vs_trace *t,
			       const struct vs_trace_event *e);

/**
 * vs_trace_async - one end of an async slice, "b" or "e"
 * @t: the trace
 * @e: the event; the two ends have the same name, category and @id
 * @begin: true for the beginning, false for the end
 * @id: the slice's id, unique in the file
 *
 * Context: the trace's thread.
 * Return: 0; -EINVAL for a bad argument; -EIO after a failed write.
 */
VS_EXTERN int vs_trace_async(struct vs_trace *t,
			     const struct vs_trace_event *e, bool begin,
			     uint64_t id);

/**
 * vs_trace_counter - a counter event, "C": the value of each series at
 * ts
 * @t: the trace
 * @e: the event: its args are the series, one or more, each a number
 *
 * Context: the trace's thread.
 * Return: 0; -EINVAL for a bad argument or no series; -EIO after a
 * failed write.
 */
VS_EXTERN int vs_trace_counter(struct vs_trace *t,
			       const struct vs_trace_event *e);

/**
 * vs_trace_meta - a metadata event, "M": @e->name is "process_name",
 * "thread_name", "process_sort_index" or "thread_sort_index", and its
 * one argument the name or the index
 * @t: the trace
 * @e: the event
 *
 * Context: the trace's thread.
 * Return: 0; -EINVAL for a bad argument or another number of arguments
 * than one; -EIO after a failed write.
 */
VS_EXTERN int vs_trace_meta(struct vs_trace *t,
			    const struct vs_trace_event *e);

/**
 * vs_trace_add_part - copy the part in @fd into @t, after its events so
 * far
 * @t: the trace
 * @fd: a part, written and closed by vs_trace_close() (another
 *	descriptor of the same file: the part's own is closed); read from
 *	its start, whatever its offset, and left open
 *
 * Context: the trace's thread.
 * Return: 0; -EINVAL for a bad argument or a file that is no part; -EIO
 * after a failed write; or the negative errno of a read.
 */
VS_EXTERN int vs_trace_add_part(struct vs_trace *t, int fd);

/**
 * vs_trace_close - end the trace and close its file
 * @t: the trace, or part; NULL or one not open does nothing
 * @other: the file's otherData, @nr of them (NULL when none); a part has
 *	none
 * @nr: how many
 *
 * A trace ends with "otherData" (when @nr is above 0) and the end of the
 * JSON object; a part ends with its last event.  @t is closed whatever
 * the return.
 * Context: the trace's thread.
 * Return: 0; -EINVAL for a bad @other (@t is still closed, unfinished);
 * or the negative errno of a write, -EIO when stdio does not say which.
 */
VS_EXTERN int vs_trace_close(struct vs_trace *t,
			     const struct vs_trace_arg *other,
			     unsigned int nr);

/**
 * vs_json_string - write @s to @f as a JSON string: quoted, with '"',
 * '\\' and the control bytes escaped (\\u00XX), as the trace writes every
 * string (the other JSON files of vmsim and its tools write theirs so)
 * @f: the stream
 * @s: the string
 *
 * Context: any.
 * Return: 0; -EINVAL for NULL; -EIO when @f reports an error.
 */
VS_EXTERN int vs_json_string(FILE *f, const char *s);

/**
 * vs_json_string_read - read back a string vs_json_string() wrote
 * @p: where it begins, at its '"'; on success, moved past its last '"'
 * @out: where the string goes, NUL-terminated
 * @len: the room of @out
 *
 * Context: any.
 * Return: 0; -EINVAL for NULL, @len 0, or text that is not such a
 * string; -ENOSPC when it does not fit in @len bytes.  *@p moves only
 * on success.
 */
VS_EXTERN int vs_json_string_read(const char **p, char *out, size_t len);

#endif /* VMSIM_TRACE_H */
