/* SPDX-License-Identifier: MIT */
/*
 * lockbench - ns per read and per write acquire+release pair of every
 * lock kind (sync/lock.h) and of a bare liburcu read-side section, at
 * 1..N threads.
 *
 * A measurement starts T attached threads together.  Each runs one pair
 * around an empty critical section in a loop, and reads the stop flag
 * every CHECK_EVERY pairs, until a libuv timer on the main thread raises
 * the flag.  Its ns per pair is the threads' summed run time over their
 * summed pairs; a row reports the median of --repeat measurements.
 * docs/man/lockbench.1 says what each number means.
 */

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "vmsim.h"
#include "bench.h"

#define CHECK_EVERY 256		/* pairs between two looks at the stop flag */
#define MAX_THREADS 1024	/* per measurement */
#define MAX_COLS 64		/* thread counts in --threads */
#define MAX_ROWS (BENCH_MAX_LOCKS * NR_OPS * 2)
#define MAX_DURATION_MS 3600000u
#define MAX_WORK 1000000u
#define MAX_MIX 1000000000u

enum op { OP_READ, OP_WRITE, OP_MIX, NR_OPS };

static const char *const op_name[NR_OPS] = { "read", "write", "mix" };

enum variant {
	V_HOOKED,	/* the vs_lock wrappers: hooks compiled in */
	V_NOHOOKS,	/* lock->kind called directly: the lock without them */
	V_URCU,		/* vs_rcu_read_lock/unlock, inline, no lock at all */
	V_URCU_CALL,	/* liburcu's read lock/unlock as library calls */
};

static struct {
	const char *lock[BENCH_MAX_LOCKS];
	int nr_locks;
	unsigned int threads[MAX_COLS];
	int nr_cols;
	bool op[NR_OPS];
	unsigned int duration_ms;
	unsigned int repeat;
	unsigned int work;	/* cpu_relax() spins inside each section */
	unsigned int mix;	/* read pairs per write pair */
	bool json, hooks, lockstat;
} opt = {
	.duration_ms = 200,
	.repeat = 5,
	.mix = 10000,
};

/* ---- the timed loops ------------------------------------------------ */

struct worker {
	struct bench_worker b;	/* first */
	struct vs_lock *lock;
	enum variant v;
	enum op op;
	/* results */
	uint64_t pairs;		/* read pairs for OP_MIX */
	uint64_t writes;	/* OP_MIX only */
	uint64_t write_ns;	/* OP_MIX: time inside the write pairs */
	uint64_t ns;
};

/* Written before the workers are created, read-only while they run. */
static unsigned int cs_work;
static unsigned int mix_every;

/* The critical section: nothing, or --work pause instructions. */
static inline void critical_section(unsigned int work)
{
	while (work--)
		vs_cpu_relax();
}

/*
 * BENCH_LOOP - run @pair until the stop flag is up, counting into @n.
 * A relaxed load of the flag every CHECK_EVERY pairs is the only other
 * work; a worker may overrun the flag by CHECK_EVERY - 1 pairs, which it
 * times and counts.
 */
#define BENCH_LOOP(n, pair)                                            \
	do {                                                           \
		int i_;                                                \
		do {                                                   \
			for (i_ = 0; i_ < CHECK_EVERY; i_++) {         \
				pair;                                  \
			}                                              \
			(n) += CHECK_EVERY;                            \
			bench_quiescent();                             \
		} while (!vs_read_once(&bench_stop));                  \
	} while (0)

/* One pair through the vs_lock wrappers; @side is read or write. */
#define PAIR_HOOKED(l, side, work)                                     \
	do {                                                           \
		vs_lock_##side##_lock(l);                              \
		critical_section(work);                                \
		vs_lock_##side##_unlock(l);                            \
	} while (0)

/* The same pair through the kind's own table, as the lock runs with
 * the hooks off; the hooked row above goes through lock->ops. */
#define PAIR_NOHOOKS(l, side, work)                                    \
	do {                                                           \
		(l)->kind->side##_lock(l);                             \
		critical_section(work);                                \
		(l)->kind->side##_unlock(l);                           \
	} while (0)

/*
 * liburcu's exported functions, not its inline read side: the baseline
 * for the lock kinds, which are reached through calls too (the ops
 * table), so both sides of a target are built the same way.
 */
#if VS_RCU_QSBR
#define urcu_lib_read_lock urcu_qsbr_read_lock
#define urcu_lib_read_unlock urcu_qsbr_read_unlock
#else
#define urcu_lib_read_lock urcu_memb_read_lock
#define urcu_lib_read_unlock urcu_memb_read_unlock
#endif

#define PAIR_URCU_CALL(work)                                           \
	do {                                                           \
		urcu_lib_read_lock();                                  \
		critical_section(work);                                \
		urcu_lib_read_unlock();                                \
	} while (0)

#define PAIR_URCU(work)                                                \
	do {                                                           \
		vs_rcu_read_lock();                                    \
		critical_section(work);                                \
		vs_rcu_read_unlock();                                  \
	} while (0)

/* A read pair, and a timed write pair after every @every of them. */
#define PAIR_MIX(pair, l, work, k, every, writes, wns)                 \
	do {                                                           \
		pair(l, read, work);                                   \
		if (vs_unlikely(++(k) == (every))) {                   \
			uint64_t t_ = uv_hrtime();                     \
								       \
			(k) = 0;                                       \
			pair(l, write, work);                          \
			(wns) += uv_hrtime() - t_;                     \
			(writes)++;                                    \
		}                                                      \
	} while (0)

static void loop_read(struct worker *w)
{
	struct vs_lock *l = w->lock;
	unsigned int work = cs_work;
	uint64_t n = 0;

	switch (w->v) {
	case V_HOOKED:
		BENCH_LOOP(n, PAIR_HOOKED(l, read, work));
		break;
	case V_NOHOOKS:
		BENCH_LOOP(n, PAIR_NOHOOKS(l, read, work));
		break;
	case V_URCU:
		BENCH_LOOP(n, PAIR_URCU(work));
		break;
	case V_URCU_CALL:
		BENCH_LOOP(n, PAIR_URCU_CALL(work));
		break;
	}
	w->pairs = n;
}

static void loop_write(struct worker *w)
{
	struct vs_lock *l = w->lock;
	unsigned int work = cs_work;
	uint64_t n = 0;

	if (w->v == V_NOHOOKS)
		BENCH_LOOP(n, PAIR_NOHOOKS(l, write, work));
	else
		BENCH_LOOP(n, PAIR_HOOKED(l, write, work));
	w->pairs = n;
}

static void loop_mix(struct worker *w)
{
	struct vs_lock *l = w->lock;
	unsigned int work = cs_work, every = mix_every, k = 0;
	uint64_t n = 0, writes = 0, wns = 0;

	if (w->v == V_NOHOOKS)
		BENCH_LOOP(n, PAIR_MIX(PAIR_NOHOOKS, l, work, k, every,
				       writes, wns));
	else
		BENCH_LOOP(n, PAIR_MIX(PAIR_HOOKED, l, work, k, every,
				       writes, wns));
	w->pairs = n;
	w->writes = writes;
	w->write_ns = wns;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t t0;

	w->b.err = bench_wait_go();
	if (w->b.err)
		return NULL;
	t0 = uv_hrtime();
	switch (w->op) {
	case OP_READ:
		loop_read(w);
		break;
	case OP_WRITE:
		loop_write(w);
		break;
	default:
		loop_mix(w);
		break;
	}
	w->ns = uv_hrtime() - t0;
	return NULL;
}

/* ---- one measurement ------------------------------------------------- */

struct sample {
	double ns_per_pair;
	double fairness;	/* fewest pairs of a thread over most */
	double ns_per_write;	/* OP_MIX: a write pair amid the reads */
	uint64_t pairs, writes;
};

static void summarise(const struct worker *w, unsigned int nr,
		      struct sample *s)
{
	uint64_t ns = 0, pairs = 0, writes = 0, wns = 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		ns += w[i].ns;
		pairs += w[i].pairs;
		writes += w[i].writes;
		wns += w[i].write_ns;
		lo = w[i].pairs < lo ? w[i].pairs : lo;
		hi = w[i].pairs > hi ? w[i].pairs : hi;
	}
	s->ns_per_pair = (double)ns / (double)pairs;
	s->fairness = (double)lo / (double)hi;
	s->pairs = pairs;
	s->writes = writes;
	s->ns_per_write = writes ? (double)wns / (double)writes : 0;
}

/*
 * measure - time @nr threads running pairs of @op on @lock for
 * --duration-ms.  Return: 0 with *@s filled in, or a negative errno.
 */
static int measure(struct vs_lock *lock, enum variant v, enum op op,
		   unsigned int nr, struct sample *s)
{
	struct worker *w = calloc(nr, sizeof(*w));
	unsigned int i;
	int err;

	if (!w)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		w[i].lock = lock;
		w[i].v = v;
		w[i].op = op;
	}
	err = bench_start(w, sizeof(*w), nr, worker_main);
	if (err)
		goto out;
	bench_run(opt.duration_ms);
	err = bench_join(w, sizeof(*w), nr);
	if (!err)
		summarise(w, nr, s);
out:
	free(w);
	return err;
}

/* ---- rows: one per lock, variant and op; a cell per thread count ---- */

struct cell {
	bool done;
	double med, min, max;	/* ns per pair over the repeats */
	double wmed;		/* OP_MIX: median ns per write pair */
	double hooks_ratio;	/* V_HOOKED with --hooks: see run_group() */
	struct sample at_med;	/* the repeat that gave the median */
};

struct row {
	const char *lock;	/* a kind, or "urcu" */
	enum variant v;
	enum op op;
	struct cell cell[MAX_COLS];
};

static struct row rows[MAX_ROWS];
static int nr_rows;

static void add_row(const char *lock, enum variant v, enum op op)
{
	struct row *r = &rows[nr_rows++];

	r->lock = lock;
	r->v = v;
	r->op = op;
}

/* "urcu" (inline read side) and "urcu-call" (library calls). */
static bool is_urcu(const char *lock)
{
	return strncmp(lock, "urcu", 4) == 0;
}

static enum variant urcu_variant(const char *lock)
{
	return strcmp(lock, "urcu") == 0 ? V_URCU : V_URCU_CALL;
}

/* Per lock and op: the hooked row, then its nohooks twin. */
static void build_rows(void)
{
	int i, op;

	for (i = 0; i < opt.nr_locks; i++) {
		for (op = 0; op < NR_OPS; op++) {
			if (!opt.op[op])
				continue;
			if (is_urcu(opt.lock[i])) {
				if (op == OP_READ)
					add_row(opt.lock[i], urcu_variant(opt.lock[i]), op);
				continue;
			}
			add_row(opt.lock[i], V_HOOKED, op);
			if (opt.hooks)
				add_row(opt.lock[i], V_NOHOOKS, op);
		}
	}
}

static const char *row_name(const struct row *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", r->lock,
		 r->v == V_NOHOOKS ? "/nohooks" : "");
	return buf;
}

static const struct cell *find_cell(const char *lock, enum variant v,
				    enum op op, unsigned int threads)
{
	int c = bench_col_of(opt.threads, opt.nr_cols, threads), i;

	if (c < 0)
		return NULL;
	for (i = 0; i < nr_rows; i++)
		if (rows[i].v == v && rows[i].op == op &&
		    strcmp(rows[i].lock, lock) == 0)
			return rows[i].cell[c].done ? &rows[i].cell[c] : NULL;
	return NULL;
}

static void cell_set(struct cell *c, struct sample *s, unsigned int nr)
{
	bench_sort_at(s, nr, sizeof(*s), offsetof(struct sample, ns_per_pair));
	c->min = s[0].ns_per_pair;
	c->max = s[nr - 1].ns_per_pair;
	c->at_med = s[(nr - 1) / 2];
	c->med = bench_median_at(s, nr, sizeof(*s),
				 offsetof(struct sample, ns_per_pair));
	c->wmed = bench_median_at(s, nr, sizeof(*s),
				  offsetof(struct sample, ns_per_write));
	c->done = true;
}

/* ---- output ---------------------------------------------------------- */

/* What the hooks cost at column @c, in percent; false if not measured. */
static bool hooks_overhead(const struct row *r, int c, double *pct)
{
	if (r->v != V_HOOKED || !opt.hooks || !r->cell[c].done)
		return false;
	*pct = (r->cell[c].hooks_ratio - 1) * 100;
	return true;
}

static void print_json(const struct row *r, int c)
{
	const struct cell *k = &r->cell[c];
	char name[64];
	double pct;

	printf("{\"lock\":\"%s\",\"threads\":%u,\"op\":\"%s\","
	       "\"ns_per_pair\":%.3f,\"min\":%.3f,\"max\":%.3f,"
	       "\"repeat\":%u,\"duration_ms\":%u,\"work\":%u,"
	       "\"pairs\":%llu,\"fairness\":%.3f,\"lockstat\":%s",
	       row_name(r, name, sizeof(name)), opt.threads[c],
	       op_name[r->op], k->med, k->min, k->max, opt.repeat,
	       opt.duration_ms, opt.work,
	       (unsigned long long)k->at_med.pairs, k->at_med.fairness,
	       opt.lockstat ? "true" : "false");
	if (r->op == OP_MIX)
		printf(",\"mix\":%u,\"writes\":%llu,\"ns_per_write\":%.1f",
		       opt.mix, (unsigned long long)k->at_med.writes, k->wmed);
	if (hooks_overhead(r, c, &pct))
		printf(",\"hooks_overhead_pct\":%.2f", pct);
	printf("}\n");
	fflush(stdout);
}

static void print_header(void)
{
	printf("# median ns per acquire+release pair over %u x %u ms, "
	       "%s critical section\n", opt.repeat, opt.duration_ms,
	       opt.work ? "a --work" : "an empty");
	printf("# rcu: urcu-%s; membarrier(2): %s; lockstat: %s\n",
	       VS_RCU_QSBR ? "qsbr" : "memb",
	       vs_membarrier_init() ? "yes" : "no (readers pay smp_mb)",
	       opt.lockstat ? "on" : "compiled in, off");
	if (opt.op[OP_MIX])
		printf("# mix: a write pair after every %u read pairs; ns "
		       "per read pair, the writes included;\n#   mix:w: ns "
		       "per write pair amid those reads\n", opt.mix);
	if (opt.hooks)
		printf("# hooks@T: a kind through the vs_lock wrappers over "
		       "the same kind's ops called directly\n");
}

/* One table line: @r's medians, or (@wcost) its mix rows' write pairs. */
static void print_line(const struct row *r, bool wcost)
{
	char name[64];
	double pct;
	int c;

	printf("%-16s %-5s", row_name(r, name, sizeof(name)),
	       wcost ? "mix:w" : op_name[r->op]);
	for (c = 0; c < opt.nr_cols; c++) {
		if (!r->cell[c].done)
			printf(" %9s", "-");
		else
			printf(" %9.1f", wcost ? r->cell[c].wmed
					       : r->cell[c].med);
	}
	for (c = 0; opt.hooks && !wcost && c < opt.nr_cols; c++) {
		if (hooks_overhead(r, c, &pct))
			printf(" %+8.1f%%", pct);
	}
	printf("\n");
}

static void print_table(void)
{
	char buf[32];
	int i, c;

	print_header();
	printf("%-16s %-5s", "lock", "op");
	for (c = 0; c < opt.nr_cols; c++)
		printf(" %5u thr", opt.threads[c]);
	for (c = 0; opt.hooks && c < opt.nr_cols; c++) {
		snprintf(buf, sizeof(buf), "hooks@%u", opt.threads[c]);
		printf(" %9s", buf);
	}
	printf("\n");
	for (i = 0; i < nr_rows; i++) {
		print_line(&rows[i], false);
		if (rows[i].op == OP_MIX)
			print_line(&rows[i], true);
	}
}

/* ---- targets (docs/man/lockbench.1, TARGETS) ------------------------- */

struct operand {
	const char *lock;
	enum variant v;
	enum op op;
	unsigned int threads;
};

static const char *operand_name(struct operand a, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s %s @%u", a.lock,
		 a.v == V_NOHOOKS ? "/nohooks" : "", op_name[a.op], a.threads);
	return buf;
}

/* Print "a / b = ratio (<= limit) PASS". */
static void target_line(struct operand a, struct operand b, double ratio,
			double limit, bool strict)
{
	char an[64], bn[64];
	bool pass = strict ? ratio < limit : ratio <= limit;

	printf("  %-22s / %-24s = %5.3f (%s %.2f) %s\n",
	       operand_name(a, an, sizeof(an)), operand_name(b, bn, sizeof(bn)),
	       ratio, strict ? "< " : "<=", limit, pass ? "PASS" : "MISS");
}

/* The ratio of the medians of @a and @b, if both were measured. */
static int target(struct operand a, struct operand b, double limit,
		  bool strict)
{
	const struct cell *x = find_cell(a.lock, a.v, a.op, a.threads);
	const struct cell *y = find_cell(b.lock, b.v, b.op, b.threads);

	if (!x || !y)
		return 0;
	target_line(a, b, x->med / y->med, limit, strict);
	return 1;
}

#define RD(lock, t) ((struct operand){ lock, V_HOOKED, OP_READ, t })
#define WR(lock, t) ((struct operand){ lock, V_HOOKED, OP_WRITE, t })
#define URCU_CALL(t) ((struct operand){ "urcu-call", V_URCU_CALL, OP_READ, t })

/*
 * Hooks compiled in but off cost at most 5% over the bare ops: reads at
 * every thread count, uncontended writes (contended ones are noise).
 * The ratio is the paired one of run_group().
 */
static int hook_targets(void)
{
	const struct row *r;
	struct operand h, n;
	int i, c, nr = 0;

	for (i = 0, r = rows; opt.hooks && i < nr_rows; i++, r++) {
		if (r->v != V_HOOKED || r->op == OP_MIX)
			continue;
		for (c = 0; c < opt.nr_cols; c++) {
			if (!r->cell[c].done ||
			    (r->op == OP_WRITE && opt.threads[c] != 1))
				continue;
			h = (struct operand){ r->lock, V_HOOKED, r->op,
					      opt.threads[c] };
			n = h;
			n.v = V_NOHOOKS;
			target_line(h, n, r->cell[c].hooks_ratio, 1.05, false);
			nr++;
		}
	}
	return nr;
}

static void print_targets(void)
{
	static const char *const passive[] = { "percpu", "prwlock" };
	int i, nr = 0;

	if (opt.work) {
		printf("\ntargets: not checked (they assume an empty section; "
		       "--work %u)\n", opt.work);
		return;
	}
	printf("\ntargets:\n");
	for (i = 0; i < 2; i++) {
		nr += target(RD(passive[i], 2), URCU_CALL(2), 1.5, false);
		nr += target(RD(passive[i], 2), RD(passive[i], 1), 1.2, false);
	}
	nr += target(RD("brlock", 2), RD("brlock", 1), 1.2, false);
	nr += target(RD("brlock", 2), RD("pthread", 2), 1.0, true);
	nr += target(RD("rwsem", 1), RD("pthread", 1), 1.25, false);
	nr += target(RD("rwsem", 2), RD("pthread", 2), 1.25, false);
	nr += target(WR("rwsem", 1), WR("pthread", 1), 1.25, false);
	if (!opt.lockstat)
		nr += hook_targets();
	if (!nr)
		printf("  none: their inputs were not measured\n");
}

/* ---- the run ---------------------------------------------------------- */

/*
 * run_group - the rows of one lock and op at thread count column @c.
 *
 * With --hooks the group is a kind and its nohooks twin, measured back
 * to back in each repeat.  What the hooks cost is the median over the
 * repeats of hooked / nohooks within a repeat: load from neighbours on
 * a shared machine changes slowly and cancels out of each pair.
 * Return: 0 (also when interrupted), or a negative errno.
 */
static int run_group(struct row **g, int nr, struct vs_lock *lock, int c)
{
	static struct sample s[2][BENCH_MAX_REPEAT];
	static double ratio[BENCH_MAX_REPEAT];
	unsigned int r;
	int i, err;

	for (r = 0; r < opt.repeat; r++) {
		for (i = 0; i < nr; i++) {
			err = measure(lock, g[i]->v, g[i]->op,
				      opt.threads[c], &s[i][r]);
			if (err)
				return err;
			if (bench_interrupted)
				return 0;
		}
	}
	for (r = 0; nr == 2 && r < opt.repeat; r++)
		ratio[r] = s[0][r].ns_per_pair / s[1][r].ns_per_pair;
	for (i = 0; i < nr; i++)
		cell_set(&g[i]->cell[c], s[i], opt.repeat);
	if (nr == 2)
		g[0]->cell[c].hooks_ratio = bench_median(ratio, opt.repeat);
	for (i = 0; opt.json && i < nr; i++)
		print_json(g[i], c);
	return 0;
}

/* All rows of lock @name (one lock object serves them).  Return: 0/1. */
static int run_lock(const char *name)
{
	bool urcu = is_urcu(name);
	struct vs_lock lock, *l = NULL;
	struct row *g[2];
	int op, i, c, nr, err = 0;

	if (!urcu)
		l = &lock;
	if (l && (err = vs_lock_init(l, name, name))) {
		fprintf(stderr, "lockbench: %s: vs_lock_init: %s\n", name,
			vs_strerror(err));
		return 1;
	}
	for (op = 0; op < NR_OPS && !err && !bench_interrupted; op++) {
		for (nr = 0, i = 0; i < nr_rows; i++)
			if (rows[i].op == (enum op)op &&
			    strcmp(rows[i].lock, name) == 0)
				g[nr++] = &rows[i];
		for (c = 0; nr && c < opt.nr_cols && !err &&
			    !bench_interrupted; c++)
			err = run_group(g, nr, l, c);
	}
	if (err)
		fprintf(stderr, "lockbench: %s: %s\n", name, vs_strerror(err));
	if (l && (i = vs_lock_destroy(l))) {
		fprintf(stderr, "lockbench: %s: vs_lock_destroy: %s\n", name,
			vs_strerror(i));
		err = i;
	}
	return err ? 1 : 0;
}

/* ---- options ---------------------------------------------------------- */

static const char usage_text[] =
"usage: lockbench [options]\n"
"\n"
"ns per acquire+release pair of each lock kind, pthread_rwlock (the\n"
"pthread kind) and a bare liburcu read section, at 1..N threads.\n"
"\n"
"  -l, --lock LIST        rwsem,pthread,percpu,brlock,prwlock,urcu,\n"
"                         urcu-call or all\n"
"                         (default all)\n"
"  -t, --threads LIST     thread counts, e.g. 1,2,4 or 1-4 (default 1..nproc)\n"
"  -o, --op LIST          read, write, mix or all = read,write (default all)\n"
"  -d, --duration-ms N    run time of one measurement (default 200)\n"
"  -r, --repeat N         measurements per cell; the median is shown\n"
"                         (default 5)\n"
"  -m, --mix N            add mix rows: one write pair per N read pairs\n"
"                         (default N 10000 with --op mix)\n"
"  -w, --work N           N pause instructions inside each section\n"
"                         (default 0: an empty section)\n"
"  -H, --hooks            add <kind>/nohooks rows (ops called directly)\n"
"                         and the hooks overhead\n"
"  -s, --lockstat         switch lock statistics on; print them after\n"
"  -j, --json             one JSON object per measured cell\n"
"  -h, --help             this text\n"
"\n"
"See lockbench(1) for the output and the targets it checks.\n";

static void opt_uint(const char *name, const char *arg, const char *what,
		     unsigned long min, unsigned long max, unsigned int *out)
{
	if (bench_parse_uint(arg, min, max, out))
		bench_usage_error("%s: '%s' is not %s (%lu..%lu)", name, arg,
				  what, min, max);
}

static void threads_item(const char *item)
{
	bench_threads_item(item, opt.threads, &opt.nr_cols, MAX_COLS,
			   MAX_THREADS);
}

/* Lock @i of "all": the kinds in sync/lock.c's order, then the two
 * urcu baselines. */
static const char *lock_name(int i)
{
	const char *kind = vs_lock_kind_name(i);

	if (kind)
		return kind;
	if (vs_lock_kind_name(i - 1))
		return "urcu";
	if (vs_lock_kind_name(i - 2))
		return "urcu-call";
	return NULL;
}

static void lock_item(const char *item)
{
	bench_lock_item(item, lock_name, "a lock", opt.lock, &opt.nr_locks);
}

static void op_item(const char *item)
{
	if (strcmp(item, "all") == 0) {
		opt.op[OP_READ] = opt.op[OP_WRITE] = true;
	} else if (strcmp(item, "read") == 0) {
		opt.op[OP_READ] = true;
	} else if (strcmp(item, "write") == 0) {
		opt.op[OP_WRITE] = true;
	} else if (strcmp(item, "mix") == 0) {
		opt.op[OP_MIX] = true;
	} else {
		bench_usage_error("--op: '%s' is not an op (valid: read, "
				  "write, mix, all)", item);
	}
}

static const struct option long_opts[] = {
	{ "lock", required_argument, NULL, 'l' },
	{ "threads", required_argument, NULL, 't' },
	{ "op", required_argument, NULL, 'o' },
	{ "duration-ms", required_argument, NULL, 'd' },
	{ "repeat", required_argument, NULL, 'r' },
	{ "mix", required_argument, NULL, 'm' },
	{ "work", required_argument, NULL, 'w' },
	{ "hooks", no_argument, NULL, 'H' },
	{ "lockstat", no_argument, NULL, 's' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void parse_options(int argc, char **argv)
{
	bool ops = false, mix = false;
	unsigned int t;
	int ch;

	while ((ch = getopt_long(argc, argv, "l:t:o:d:r:m:w:Hsjh", long_opts,
				 NULL)) != -1) {
		switch (ch) {
		case 'l':
			bench_for_each_item(optarg, lock_item);
			break;
		case 't':
			bench_for_each_item(optarg, threads_item);
			break;
		case 'o':
			bench_for_each_item(optarg, op_item);
			ops = true;
			break;
		case 'd':
			opt_uint("--duration-ms", optarg, "a duration in ms",
				 1, MAX_DURATION_MS, &opt.duration_ms);
			break;
		case 'r':
			opt_uint("--repeat", optarg, "a repeat count", 1,
				 BENCH_MAX_REPEAT, &opt.repeat);
			break;
		case 'm':
			opt_uint("--mix", optarg, "a count of read pairs per "
				 "write pair", 1, MAX_MIX, &opt.mix);
			mix = true;
			break;
		case 'w':
			opt_uint("--work", optarg, "a pause count", 0,
				 MAX_WORK, &opt.work);
			break;
		case 'H':
			opt.hooks = true;
			break;
		case 's':
			opt.lockstat = true;
			break;
		case 'j':
			opt.json = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		default:
			/* getopt_long() said what was wrong. */
			bench_try_help();
		}
	}
	if (optind < argc)
		bench_usage_error("unexpected argument '%s'", argv[optind]);
	if (!opt.nr_locks)
		lock_item("all");
	if (!opt.nr_cols)
		for (t = 1; t <= uv_available_parallelism() && t <= MAX_COLS; t++)
			bench_add_threads(opt.threads, &opt.nr_cols, MAX_COLS,
					  t);
	if (!ops)
		op_item("all");
	if (mix)
		opt.op[OP_MIX] = true;
}

/* ---- main ------------------------------------------------------------- */

int main(int argc, char **argv)
{
	int i, ret = 0;

	bench_prog = "lockbench";
	parse_options(argc, argv);
	cs_work = opt.work;
	mix_every = opt.mix;
	build_rows();
	if (bench_control_init())
		return 1;
	if (opt.lockstat) {
		vs_lockstat_reset();
		vs_lockstat_enable(1);
	}
	for (i = 0; i < opt.nr_locks && !ret && !bench_interrupted; i++)
		ret = run_lock(opt.lock[i]);
	if (opt.lockstat)
		vs_lockstat_enable(0);
	if (!opt.json) {
		print_table();
		print_targets();
	}
	if (opt.lockstat) {
		/* stdout stays pure JSON with --json. */
		if (!opt.json)
			printf("\n");
		vs_lockstat_print(opt.json ? stderr : stdout);
	}
	return bench_control_close(ret);
}
