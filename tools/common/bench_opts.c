/* SPDX-License-Identifier: MIT */
/*
 * tools/common/bench_opts.c - the one option convention of the tools.
 * bench_opts.h documents each function that is not static here.
 */

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opts.h"

#ifndef BENCH_VERSION
#error "BENCH_VERSION: CMake passes the project's version"
#endif

/* One row per option of any tool: what a name and a letter mean. */
struct bench_row {
	int key;
	const char *name;	/* long name, without "--" */
	const char *arg;	/* its argument in --help; NULL: a flag */
};

static const struct bench_row table[] = {
	{ BENCH_OPT_DURATION, "duration", "SECONDS" },
	{ BENCH_OPT_THREADS, "threads", "LIST" },
	{ BENCH_OPT_REPEAT, "repeat", "N" },
	{ BENCH_OPT_JSON, "json", NULL },
	{ BENCH_OPT_QUICK, "quick", NULL },
	{ BENCH_OPT_STRATEGY, "strategy", "LIST" },
	{ BENCH_OPT_LOCK, "lock", "LIST" },
	{ BENCH_OPT_LOCKSTAT, "lockstat", NULL },
	{ BENCH_OPT_WRITER, "writer", "LIST" },
	{ BENCH_OPT_MAPPING, "mapping", "KIND" },
	{ BENCH_OPT_UFFD_MODE, "uffd-mode", "LIST" },
	{ BENCH_OPT_OP, "op", "LIST" },
	{ BENCH_OPT_HOOKS, "hooks", NULL },
	{ BENCH_OPT_BENCH, "bench", "LIST" },
	{ BENCH_OPT_TRACE, "trace", "FILE" },
	{ BENCH_OPT_HELP, "help", NULL },
	{ BENCH_OPT_VERSION, "version", NULL },
	{ BENCH_OPT_MIX, "mix", "N" },
	{ BENCH_OPT_WORK, "work", "N" },
	{ BENCH_OPT_SEED, "seed", "N" },
	{ BENCH_OPT_BACKING, "backing", "KIND" },
	{ BENCH_OPT_WRITER_RATE, "writer-rate", "N" },
	{ BENCH_OPT_TRACE_SAMPLE, "trace-sample", "N" },
	{ BENCH_OPT_TRACE_SLOW_US, "trace-slow-us", "N" },
	{ BENCH_OPT_SWEEP, "sweep", "LIST" },
	{ BENCH_OPT_PLOT, "plot", "FILE" },
	{ BENCH_OPT_OUTPUT, "output", "FILE" },
	{ BENCH_OPT_VCPUS, "vcpus", "N" },
	{ BENCH_OPT_MACHINE, "machine", "PROFILE" },
	{ BENCH_OPT_SECONDS_AS, "seconds-as", "SECONDS" },
	{ BENCH_OPT_COMPARE_REAL, "compare-real", NULL },
	{ BENCH_OPT_MEMORY, "memory", "MODEL" },
	{ BENCH_OPT_WORKLOAD, "workload", "NAME" },
	{ BENCH_OPT_MODE, "mode", "MODE" },
	{ BENCH_OPT_SIZE, "size", "KIB" },
	{ BENCH_OPT_KERNEL, "kernel", "VERSION" },
	{ BENCH_OPT_KERNEL_OUTPUT, "kernel-output", "FILE" },
	{ BENCH_OPT_SHARD, "shard", "K/N" },
	{ BENCH_OPT_MERGE, "merge", "LIST" },
};

#define NR_ROWS (sizeof(table) / sizeof(table[0]))
#define MAX_OPTS 32		/* options of one tool, --help and --version in */

const char *bench_prog = "bench";
struct bench_std bench_std;

static bool given[BENCH_OPT_END];
static int current;		/* the option being parsed, for errors */

static const struct bench_row *row_of(int key)
{
	size_t i;

	for (i = 0; i < NR_ROWS; i++)
		if (table[i].key == key)
			return &table[i];
	return NULL;
}

const char *bench_opt_name(int key)
{
	static char buf[2][32];
	static int n;
	const struct bench_row *r = row_of(key);

	if (!r)
		return "?";
	/* Two at a time, for the messages that name a pair. */
	n ^= 1;
	snprintf(buf[n], sizeof(buf[n]), "--%s", r->name);
	return buf[n];
}

/* ---- errors ------------------------------------------------------------ */

_Noreturn void bench_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", bench_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (try --help)\n", stderr);
	exit(BENCH_EXIT_USAGE);
}

bool bench_given(int key)
{
	return key > 0 && key < BENCH_OPT_END && given[key];
}

void bench_refuse_with(int a, int b, const char *why)
{
	if (bench_given(a) && bench_given(b))
		bench_usage_error("%s does not apply with %s%s%s",
				  bench_opt_name(a), bench_opt_name(b),
				  why ? ": " : "", why ? why : "");
}

void bench_refuse_without(int a, int b)
{
	if (bench_given(a) && !bench_given(b))
		bench_usage_error("%s needs %s", bench_opt_name(a),
				  bench_opt_name(b));
}

/* ---- --help and --version -------------------------------------------- */

/* "  -d, --duration SECONDS" or "      --mix N": the left column;
 * @arg, if any, names the argument in place of the table's. */
static void print_left(const struct bench_row *r, const char *arg)
{
	char left[64];

	if (!arg)
		arg = r->arg;
	snprintf(left, sizeof(left), "  %c%c%c --%s%s%s",
		 r->key < 256 ? '-' : ' ', r->key < 256 ? r->key : ' ',
		 r->key < 256 ? ',' : ' ', r->name, arg ? " " : "",
		 arg ? arg : "");
	printf("%-26s", left);
	if (strlen(left) >= 26)
		printf("\n%26s", "");
}

/* @help, its lines after the first indented under it. */
static void print_help_text(const char *help)
{
	for (; *help; help++) {
		putchar(*help);
		if (*help == '\n')
			printf("%26s", "");
	}
	putchar('\n');
}

/* The help of --duration and --repeat, which mean one thing in every
 * tool, where the tool gives none: the same words, its default. */
static const char *std_help(const struct bench_tool *tool, int key,
			    char *buf, size_t len)
{
	if (key == BENCH_OPT_DURATION)
		snprintf(buf, len, "run time of one measurement, e.g. 1 or "
			 "0.3\n(default %g)", tool->duration_ms / 1000.0);
	else if (key == BENCH_OPT_REPEAT)
		snprintf(buf, len, "rounds; a figure is the median over them\n"
			 "(default %u)", tool->repeat);
	else
		snprintf(buf, len, "?");
	return buf;
}

static _Noreturn void print_usage(const struct bench_tool *tool)
{
	const struct bench_opt *o;
	char buf[128];

	printf("usage: %s [options]\n\n%s\n", tool->name, tool->about);
	for (o = tool->opts; o->key; o++) {
		print_left(row_of(o->key), o->arg);
		print_help_text(o->help ? o->help
				: std_help(tool, o->key, buf, sizeof(buf)));
	}
	print_left(row_of(BENCH_OPT_HELP), NULL);
	print_help_text("this text");
	print_left(row_of(BENCH_OPT_VERSION), NULL);
	print_help_text("the version of vmsim it belongs to");
	printf("\nSee man -l docs/man/%s.1 (in the source tree)\nor man %s "
	       "(once installed).\n", tool->name, tool->name);
	exit(0);
}

/* ---- arguments --------------------------------------------------------- */

int bench_parse_uint(const char *s, unsigned long min, unsigned long max,
		     unsigned int *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

int bench_parse_seconds(const char *s, unsigned int max_ms, unsigned int *ms)
{
	size_t digits = strspn(s, "0123456789"), frac = 0;
	double v;
	char *end;

	if (s[digits] == '.')
		frac = strspn(s + digits + 1, "0123456789");
	if (digits + frac == 0 ||
	    strlen(s) != digits + (s[digits] == '.') + frac)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end)
		return -EINVAL;
	v = v * 1000 + 0.5;	/* to the nearest ms */
	if (v < 1 || v >= max_ms + 1.0)
		return -EINVAL;
	*ms = (unsigned int)v;
	return 0;
}

unsigned int bench_arg_uint(const char *arg, unsigned long min,
			    unsigned long max)
{
	unsigned int v;

	if (bench_parse_uint(arg, min, max, &v))
		bench_usage_error("%s: '%s' is not a whole number from %lu "
				  "to %lu", bench_opt_name(current), arg, min,
				  max);
	return v;
}

unsigned int bench_arg_seconds(const char *arg)
{
	unsigned int ms;

	if (bench_parse_seconds(arg, BENCH_MAX_DURATION_MS, &ms))
		bench_usage_error("%s: '%s' is not a time in seconds from "
				  "0.001 to %u", bench_opt_name(current), arg,
				  BENCH_MAX_DURATION_MS / 1000);
	return ms;
}

void bench_arg_list(char *list, void (*fn)(const char *item))
{
	char *item, *next;

	for (item = list; item; item = next) {
		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		if (!*item)
			bench_usage_error("%s: an empty item in the list",
					  bench_opt_name(current));
		fn(item);
	}
}

int bench_arg_name(const char *item, const char *(*name)(int),
		   const char *what, bool all)
{
	char valid[256] = "";
	const char *n;
	int i;

	if (all && strcmp(item, "all") == 0)
		return -1;
	for (i = 0; (n = name(i)); i++) {
		if (strcmp(item, n) == 0)
			return i;
		if (strlen(valid) + strlen(n) + 8 < sizeof(valid))
			strcat(strcat(valid, i ? ", " : ""), n);
	}
	bench_usage_error("%s: '%s' is not %s (valid: %s%s)",
			  bench_opt_name(current), item, what, valid,
			  all ? ", all" : "");
}

void bench_arg_names(const char *item, const char *(*name)(int),
		     const char *what, const char **names, int *nr, int max)
{
	int i = bench_arg_name(item, name, what, true), k, n;

	for (k = i < 0 ? 0 : i; name(k) && (i < 0 || k == i); k++) {
		for (n = 0; n < *nr && strcmp(names[n], name(k)); n++)
			;
		if (n < *nr)
			continue;
		if (*nr == max)
			bench_usage_error("%s: more than %d names",
					  bench_opt_name(current), max);
		names[(*nr)++] = name(k);
	}
}

void bench_arg_flags(const char *item, const char *(*name)(int),
		     const char *what, bool *on, int nr)
{
	int i = bench_arg_name(item, name, what, true), k;

	for (k = 0; k < nr; k++)
		if (i < 0 || i == k)
			on[k] = true;
}

int bench_col_of(unsigned int t)
{
	int c;

	for (c = 0; c < bench_std.nr_threads; c++)
		if (bench_std.threads[c] == t)
			return c;
	return -1;
}

void bench_add_threads(unsigned int t)
{
	if (bench_col_of(t) >= 0)
		return;
	if (bench_std.nr_threads == BENCH_MAX_COLS)
		bench_usage_error("%s: more than %d thread counts",
				  bench_opt_name(BENCH_OPT_THREADS),
				  BENCH_MAX_COLS);
	bench_std.threads[bench_std.nr_threads++] = t;
}

/* An item of --threads: "N" or "N-M", each count 1..BENCH_MAX_THREADS. */
static void threads_item(const char *item)
{
	char lo[32], *dash;
	unsigned int a, b;

	snprintf(lo, sizeof(lo), "%s", item);
	dash = strchr(lo, '-');
	if (dash)
		*dash = '\0';
	if (strlen(item) >= sizeof(lo) ||
	    bench_parse_uint(lo, 1, BENCH_MAX_THREADS, &a) ||
	    (dash && bench_parse_uint(dash + 1, a, BENCH_MAX_THREADS, &b)))
		bench_usage_error("%s: '%s' is not a thread count or range "
				  "(1..%u)", bench_opt_name(BENCH_OPT_THREADS),
				  item, BENCH_MAX_THREADS);
	if (!dash)
		b = a;
	for (; a <= b; a++)
		bench_add_threads(a);
}

/* The options bench_std holds.  Return: false for the tool's own. */
static bool set_std(int key, char *arg)
{
	switch (key) {
	case BENCH_OPT_DURATION:
		bench_std.duration_ms = bench_arg_seconds(arg);
		return true;
	case BENCH_OPT_REPEAT:
		bench_std.repeat = bench_arg_uint(arg, 1, BENCH_MAX_REPEAT);
		return true;
	case BENCH_OPT_THREADS:
		bench_arg_list(arg, threads_item);
		return true;
	case BENCH_OPT_JSON:
		bench_std.json = true;
		return true;
	case BENCH_OPT_QUICK:
		return true;
	}
	return false;
}

/* --quick: the tool's quick values where none was given; with all of
 * them given it would do nothing, and is refused. */
static void apply_quick(const struct bench_tool *tool)
{
	bool ms = tool->quick_ms && !bench_given(BENCH_OPT_DURATION);
	bool rep = tool->quick_repeat && !bench_given(BENCH_OPT_REPEAT);

	if (!bench_given(BENCH_OPT_QUICK))
		return;
	if (!ms && !rep)
		bench_usage_error("--quick does not apply with %s%s",
				  tool->quick_repeat ? "--duration and " : "",
				  tool->quick_repeat ? "--repeat" : "--duration");
	if (ms)
		bench_std.duration_ms = tool->quick_ms;
	if (rep)
		bench_std.repeat = tool->quick_repeat;
}

/* ---- the parse --------------------------------------------------------- */

/* getopt_long()'s tables for @tool: @longs ends with a zero row. */
static void build_tables(const struct bench_tool *tool,
			 struct option *longs, char *shorts)
{
	static const struct bench_opt always[] = {
		{ BENCH_OPT_HELP, NULL, NULL },
		{ BENCH_OPT_VERSION, NULL, NULL },
		{ 0, NULL, NULL },
	};
	const struct bench_opt *list[] = { tool->opts, always };
	const struct bench_opt *o;
	const struct bench_row *r;
	int n = 0, i;

	/* '+': stop at the first non-option; ':': a missing argument
	 * returns ':' so that we say it in our words. */
	strcpy(shorts, "+:");
	for (i = 0; i < 2; i++) {
		for (o = list[i]; o->key; o++) {
			r = row_of(o->key);
			if (!r || n == MAX_OPTS) {
				fprintf(stderr, "%s: option table: key %d\n",
					tool->name, o->key);
				abort();
			}
			longs[n++] = (struct option){
				r->name, r->arg ? required_argument
						: no_argument, NULL, r->key };
			if (r->key < 256) {
				shorts += strlen(shorts);
				*shorts++ = (char)r->key;
				strcpy(shorts, r->arg ? ":" : "");
			}
		}
	}
	longs[n] = (struct option){ NULL, 0, NULL, 0 };
}

/* A long option from @word ("--dur=1") must be @name to the letter. */
static void check_full_name(const char *word, const char *name)
{
	size_t len = strcspn(word + 2, "=");

	if (strncmp(word, "--", 2) || len != strlen(name) ||
	    strncmp(word + 2, name, len))
		bench_usage_error("'%.*s' is not an option; write it in full: "
				  "--%s", (int)(len + 2), word, name);
}

/* Whether @len bytes of @name are the long name of a row. */
static bool is_long_name(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NR_ROWS; i++)
		if (strlen(table[i].name) == len &&
		    strncmp(table[i].name, name, len) == 0)
			return true;
	return false;
}

/* "-json" would be read as -j -s on ...: refuse a long name with one
 * dash before getopt_long() takes it apart. */
static void check_one_dash(const char *word)
{
	size_t len = strcspn(word, "=");

	if (word[0] == '-' && word[1] != '-' && len > 2 &&
	    is_long_name(word + 1, len - 1))
		bench_usage_error("'%.*s' is not an option; write --%.*s",
				  (int)len, word, (int)len - 1, word + 1);
}

/* getopt_long() returned '?' or ':' for @word (the element it was at). */
static _Noreturn void bad_option(int ch, const char *word)
{
	int len = (int)strcspn(word, "=");

	if (strncmp(word, "--", 2)) {
		if (ch == ':')
			bench_usage_error("-%c needs a value", optopt);
		bench_usage_error("unknown option '-%c'", optopt);
	}
	if (ch == ':')
		bench_usage_error("%.*s needs a value", len, word);
	if (word[len] == '=' && is_long_name(word + 2, (size_t)len - 2))
		bench_usage_error("%.*s takes no value", len, word);
	bench_usage_error("unknown option '%.*s'", len, word);
}

void bench_parse_options(const struct bench_tool *tool, int argc,
			 char **argv)
{
	struct option longs[MAX_OPTS + 1];
	char shorts[3 * MAX_OPTS + 3];
	const char *word;
	int ch, idx;

	bench_prog = tool->name;
	bench_std.duration_ms = tool->duration_ms;
	bench_std.repeat = tool->repeat;
	build_tables(tool, longs, shorts);
	opterr = 0;
	for (;;) {
		/* With '+' the element being read is argv[optind] unless a
		 * cluster of letters is under way, which is no long one. */
		word = optind < argc ? argv[optind] : "";
		check_one_dash(word);
		idx = -1;
		ch = getopt_long(argc, argv, shorts, longs, &idx);
		if (ch == -1)
			break;
		if (ch == '?' || ch == ':')
			bad_option(ch, word);
		if (idx >= 0)
			check_full_name(word, longs[idx].name);
		if (ch == BENCH_OPT_HELP)
			print_usage(tool);
		if (ch == BENCH_OPT_VERSION) {
			printf("%s (vmsim) %s\n", tool->name, BENCH_VERSION);
			exit(0);
		}
		current = ch;
		given[ch] = true;
		if (!set_std(ch, optarg))
			tool->set(ch, optarg);
	}
	current = 0;
	if (optind < argc)
		bench_usage_error("unexpected argument '%s'", argv[optind]);
	apply_quick(tool);
}
