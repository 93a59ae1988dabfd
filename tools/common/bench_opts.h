/* SPDX-License-Identifier: MIT */
/*
 * tools/common/bench_opts.h - the one option convention of the tools.
 *
 * Every option of every tool is a row of one table (bench_opts.c): its
 * long name, its letter and what its argument is.  A tool lists the rows
 * it takes, with its own help line for each, and gets the rest alike:
 *
 *   static const struct bench_opt opts[] = {
 *	{ BENCH_OPT_DURATION, "run time of one measurement (default 1)",
 *	  NULL },
 *	{ BENCH_OPT_JSON, "one JSON object per row", NULL },
 *	{ 0, NULL, NULL },
 *   };
 *   static const struct bench_tool tool = {
 *	.name = "faultbench", .about = about, .opts = opts,
 *	.set = set_option, .duration_ms = 1000, .quick_ms = 300,
 *	.repeat = 3,
 *   };
 *   bench_parse_options(&tool, argc, argv);
 *
 * The options every measuring tool has are parsed here, into bench_std
 * (--duration, --repeat, --threads, --json, --quick); the tool's @set
 * sees only its own.
 *
 * The rules, the same in every tool:
 * - an option means one thing and has one letter (or none) everywhere;
 * - --duration is in seconds, fractions allowed, everywhere;
 * - a long option is written in full: "--dur" is refused, not taken for
 *   --duration;
 * - an option the tool does not take, a bad value, an empty list item
 *   ("1,,2") or an option that does not apply with another
 *   (bench_refuse_with(), bench_refuse_without()) is refused with one
 *   line on stderr and exit status BENCH_EXIT_USAGE, never ignored;
 * - -h/--help prints the options and ends with where the man page is;
 *   -V/--version prints "<tool> (vmsim) <version>"; both exit 0.
 *
 * No vmsim code: multi-fault-ref, which must not link vmsim, uses it too.
 * Context: main thread, before the tool starts anything.
 */
#ifndef VS_TOOLS_BENCH_OPTS_H
#define VS_TOOLS_BENCH_OPTS_H

#include <stdbool.h>

#define BENCH_EXIT_USAGE 2	/* a bad option */
#define BENCH_MAX_THREADS 256	/* threads of one measurement, every tool */
#define BENCH_MAX_DURATION_MS 86400000u	/* --duration: a day */
#define BENCH_MAX_COLS 64	/* thread counts in a --threads list */
#define BENCH_MAX_REPEAT 1000	/* --repeat: rounds */

/*
 * The options of all the tools.  A letter is its short option; the
 * options from 256 on have none.  Their names, arguments and letters are
 * in bench_opts.c.
 */
enum bench_key {
	BENCH_OPT_DURATION = 'd',	/* --duration SECONDS */
	BENCH_OPT_THREADS = 't',	/* --threads LIST */
	BENCH_OPT_REPEAT = 'r',		/* --repeat N */
	BENCH_OPT_JSON = 'j',		/* --json */
	BENCH_OPT_QUICK = 'q',		/* --quick */
	BENCH_OPT_STRATEGY = 's',	/* --strategy LIST */
	BENCH_OPT_LOCK = 'l',		/* --lock LIST */
	BENCH_OPT_LOCKSTAT = 'L',	/* --lockstat */
	BENCH_OPT_WRITER = 'w',		/* --writer LIST */
	BENCH_OPT_MAPPING = 'm',	/* --mapping KIND */
	BENCH_OPT_UFFD_MODE = 'u',	/* --uffd-mode LIST */
	BENCH_OPT_OP = 'o',		/* --op LIST */
	BENCH_OPT_HOOKS = 'H',		/* --hooks */
	BENCH_OPT_BENCH = 'b',		/* --bench LIST */
	BENCH_OPT_TRACE = 'T',		/* --trace FILE */
	BENCH_OPT_HELP = 'h',		/* --help: bench_parse_options() */
	BENCH_OPT_VERSION = 'V',	/* --version: bench_parse_options() */
	BENCH_OPT_MIX = 256,		/* --mix N */
	BENCH_OPT_WORK,			/* --work N */
	BENCH_OPT_SEED,			/* --seed N */
	BENCH_OPT_BACKING,		/* --backing KIND */
	BENCH_OPT_WRITER_RATE,		/* --writer-rate N */
	BENCH_OPT_TRACE_SAMPLE,		/* --trace-sample N */
	BENCH_OPT_TRACE_SLOW_US,	/* --trace-slow-us N */
	BENCH_OPT_SWEEP,		/* --sweep LIST */
	BENCH_OPT_PLOT,			/* --plot FILE */
	BENCH_OPT_OUTPUT,		/* --output FILE */
	BENCH_OPT_VCPUS,		/* --vcpus N */
	BENCH_OPT_MACHINE,		/* --machine PROFILE */
	BENCH_OPT_SECONDS_AS,		/* --seconds-as SECONDS */
	BENCH_OPT_COMPARE_REAL,		/* --compare-real */
	BENCH_OPT_MEMORY,		/* --memory MODEL */
	BENCH_OPT_WORKLOAD,		/* --workload NAME */
	BENCH_OPT_MODE,			/* --mode MODE */
	BENCH_OPT_SIZE,			/* --size KIB */
	BENCH_OPT_KERNEL,		/* --kernel VERSION */
	BENCH_OPT_KERNEL_OUTPUT,	/* --kernel-output FILE */
	BENCH_OPT_SHARD,		/* --shard K/N */
	BENCH_OPT_MERGE,		/* --merge LIST */
	BENCH_OPT_END			/* past the last */
};

/*
 * struct bench_opt - an option a tool takes
 * @key:	its row of the table; 0 ends a tool's list
 * @help:	what it does in this tool and its default, for --help;
 *		lines after a "\n" are indented under the first; NULL for
 *		--duration and --repeat gives the words every tool uses
 * @arg:	what --help calls its argument here ("N" where the table
 *		says "LIST"), or NULL for the table's word
 */
struct bench_opt {
	int key;
	const char *help;
	const char *arg;
};

/*
 * struct bench_tool - what bench_parse_options() needs of a tool
 * @name:	the tool's name: messages, --version and the man page
 * @about:	what it does, for --help; ends with a newline
 * @opts:	the options it takes (not --help, --version: every tool has
 *		them), in --help's order
 * @set:	called for each option given that bench_std does not hold
 *		(NULL if the tool takes none such),
 *		in the order given, with its argument (NULL for a flag); it
 *		may call the bench_arg_*() helpers and bench_usage_error()
 * @duration_ms, @repeat: bench_std's defaults
 * @quick_ms, @quick_repeat: what --quick sets where --duration or
 *		--repeat is not given; 0: leave it
 */
struct bench_tool {
	const char *name;
	const char *about;
	const struct bench_opt *opts;
	void (*set)(int key, char *arg);
	unsigned int duration_ms, repeat;
	unsigned int quick_ms, quick_repeat;
};

/*
 * struct bench_std - the options every measuring tool reads alike,
 * written by bench_parse_options() (read-only after it)
 * @duration_ms: --duration: run time of one measurement
 * @repeat:	--repeat: rounds
 * @threads:	--threads: the counts, each once, in the order given; the
 *		tool fills in its default when @nr_threads is 0
 * @nr_threads:	how many
 * @json:	--json
 */
struct bench_std {
	unsigned int duration_ms;
	unsigned int repeat;
	unsigned int threads[BENCH_MAX_COLS];
	int nr_threads;
	bool json;
};

extern struct bench_std bench_std;

/* The tool's name, for messages; bench_parse_options() sets it. */
extern const char *bench_prog;

/**
 * bench_parse_options - parse @argv as the rules above say
 * @tool:	the tool; it must outlive the call
 *
 * Exits BENCH_EXIT_USAGE on an unknown, abbreviated or malformed option
 * or an argument that is not an option; exits 0 after --help or
 * --version.  Context: once, first thing in main().
 */
void bench_parse_options(const struct bench_tool *tool, int argc,
			 char **argv);

/**
 * bench_given - whether option @key was on the command line
 *
 * Context: after (or during) bench_parse_options().
 */
bool bench_given(int key);

/**
 * bench_refuse_with - refuse @a given together with @b
 * @why:	why they do not go together, or NULL
 *
 * "<prog>: --a does not apply with --b[: why]" and exit
 * BENCH_EXIT_USAGE if both were given.
 */
void bench_refuse_with(int a, int b, const char *why);

/**
 * bench_refuse_without - refuse @a given without @b
 *
 * "<prog>: --a needs --b" and exit BENCH_EXIT_USAGE.
 */
void bench_refuse_without(int a, int b);

/**
 * bench_opt_name - "--duration" for BENCH_OPT_DURATION
 *
 * Return: the long name with its dashes, or "?" for no option.
 */
const char *bench_opt_name(int key);

/**
 * bench_usage_error - "<prog>: <message> (try --help)" on one line, exit
 * BENCH_EXIT_USAGE
 * @fmt:	printf format of the message, no newline
 */
_Noreturn void bench_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* ---- arguments: each names the option being parsed in its error ------ */

/**
 * bench_arg_uint - the argument of the current option as a decimal in
 * [@min, @max], digits only; otherwise a usage error naming the option
 */
unsigned int bench_arg_uint(const char *arg, unsigned long min,
			    unsigned long max);

/**
 * bench_arg_seconds - the argument of the current option as seconds
 * ("1", "0.3"; at least 1 ms, at most BENCH_MAX_DURATION_MS); otherwise
 * a usage error naming the option
 *
 * Return: the time in milliseconds, to the nearest.
 */
unsigned int bench_arg_seconds(const char *arg);

/**
 * bench_arg_list - call @fn on each comma-separated item of @list
 * @list:	a writable copy (optarg): the commas become NULs
 *
 * An empty list or item ("", "1,,2", "1,") is a usage error naming the
 * current option.
 */
void bench_arg_list(char *list, void (*fn)(const char *item));

/**
 * bench_arg_name - the index of @item among @name(0), @name(1), ...
 * @name:	the valid names by index; NULL past the last
 * @what:	the noun of the usage error: "'x' is not @what (valid: ...)"
 * @all:	whether "all" is valid: then it gives -1
 *
 * Return: the index, or -1 for "all"; anything else is a usage error
 * naming the current option and listing the valid names.
 */
int bench_arg_name(const char *item, const char *(*name)(int),
		   const char *what, bool all);

/**
 * bench_arg_names - add the name @item, or every name for "all", to
 * @names[0..*@nr), each once, in @name's order for "all"
 * @name, @what: as bench_arg_name()
 * @max:	the length of @names; more are a usage error
 */
void bench_arg_names(const char *item, const char *(*name)(int),
		     const char *what, const char **names, int *nr, int max);

/**
 * bench_arg_flags - set @on[i] for the name @item = @name(i), or every
 * @on[0..@nr) for "all"
 * @name, @what: as bench_arg_name(); @name(i) for i < @nr
 */
void bench_arg_flags(const char *item, const char *(*name)(int),
		     const char *what, bool *on, int nr);

/**
 * bench_add_threads - add thread count @t to bench_std.threads, once
 *
 * More than BENCH_MAX_COLS counts is a usage error.
 */
void bench_add_threads(unsigned int t);

/**
 * bench_col_of - the column of thread count @t in bench_std.threads
 *
 * Return: the index, or -1.
 */
int bench_col_of(unsigned int t);

/* ---- what multi-fault used before the table; kept for it ------------- */

/**
 * bench_parse_uint - parse a decimal in [@min, @max]: digits only
 * @out:	the value, written only on success
 *
 * Return: 0 or -EINVAL.
 */
int bench_parse_uint(const char *s, unsigned long min, unsigned long max,
		     unsigned int *out);

/**
 * bench_parse_seconds - parse seconds, "1", "0.3", "2.50": digits with at
 * most one point, no sign, no exponent, at least 1 ms and at most @max_ms
 * @ms:		the value in milliseconds (nearest), written only on success
 *
 * Return: 0 or -EINVAL.
 */
int bench_parse_seconds(const char *s, unsigned int max_ms, unsigned int *ms);

#endif /* VS_TOOLS_BENCH_OPTS_H */
