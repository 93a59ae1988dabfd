/* SPDX-License-Identifier: MIT */
/*
 * lockbench - ns per read and per write acquire+release pair of every
 * lock kind (vmsim/lock.h) and of a bare liburcu read-side section, at
 * 1..N threads.
 *
 * A measurement starts T attached threads together.  Each runs one pair
 * around an empty critical section in a loop, and reads the stop flag
 * every CHECK_EVERY pairs, until a libuv timer on the main thread raises
 * the flag.  Its ns per pair is the threads' summed run time over their
 * summed pairs.  The cells are measured in --repeat rounds, each round
 * one measurement of every cell, and a cell reports the median and the
 * range over the rounds; a ratio is taken within each round.
 * docs/man/lockbench.1 says what each number means.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include <vmsim/vmsim.h>
#include "bench.h"

#define CHECK_EVERY 256		/* pairs between two looks at the stop flag */
#define MAX_ROWS (BENCH_MAX_LOCKS * NR_OPS * 2)
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
	bool op[NR_OPS];
	unsigned int work;	/* cpu_relax() spins inside each section */
	unsigned int mix;	/* read pairs per write pair */
	bool hooks, lockstat;
} opt = {
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
 * --duration.  Return: 0 with *@s filled in, or a negative errno.
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
	bench_run(bench_std.duration_ms);
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
	struct bench_range ns;	/* ns per pair over the rounds */
	struct bench_range wns;	/* OP_MIX: ns per write pair */
	struct bench_range hooks; /* V_HOOKED with --hooks: over nohooks */
	struct sample at_med;	/* the round that gave the median */
};

struct row {
	const char *lock;	/* a kind, or "urcu" */
	struct vs_lock *l;	/* its lock object; NULL for urcu */
	enum variant v;
	enum op op;
	struct cell cell[BENCH_MAX_COLS];
};

static struct row rows[MAX_ROWS];
static int nr_rows;
static struct vs_lock locks[BENCH_MAX_LOCKS];

/* An arm per cell: row i at column c is arm c * nr_rows + i, so that a
 * kind and its nohooks twin run back to back. */
static struct bench_grid grid;

#define NS_PER_PAIR offsetof(struct sample, ns_per_pair)
#define NS_PER_WRITE offsetof(struct sample, ns_per_write)

static unsigned int arm_of(const struct row *r, int c)
{
	return (unsigned int)(c * nr_rows + (r - rows));
}

static void add_row(const char *lock, struct vs_lock *l, enum variant v,
		    enum op op)
{
	struct row *r = &rows[nr_rows++];

	r->lock = lock;
	r->l = l;
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
	const char *name;
	int i, op;

	for (i = 0; i < opt.nr_locks; i++) {
		name = opt.lock[i];
		for (op = 0; op < NR_OPS; op++) {
			if (!opt.op[op])
				continue;
			if (is_urcu(name)) {
				if (op == OP_READ)
					add_row(name, NULL,
						urcu_variant(name), op);
				continue;
			}
			add_row(name, &locks[i], V_HOOKED, op);
			if (opt.hooks)
				add_row(name, &locks[i], V_NOHOOKS, op);
		}
	}
}

static const char *row_name(const struct row *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", r->lock,
		 r->v == V_NOHOOKS ? "/nohooks" : "");
	return buf;
}

/* The row of @lock, @v and @op, or NULL. */
static const struct row *find_row(const char *lock, enum variant v,
				  enum op op)
{
	int i;

	for (i = 0; i < nr_rows; i++)
		if (rows[i].v == v && rows[i].op == op &&
		    strcmp(rows[i].lock, lock) == 0)
			return &rows[i];
	return NULL;
}

/* The cells of row @r from the rounds done. */
static void row_set(struct row *r)
{
	const struct row *twin = find_row(r->lock, V_NOHOOKS, r->op);
	struct cell *k;
	int c;

	for (c = 0; c < bench_std.nr_threads; c++) {
		k = &r->cell[c];
		bench_grid_range(&grid, arm_of(r, c), NS_PER_PAIR, &k->ns);
		bench_grid_range(&grid, arm_of(r, c), NS_PER_WRITE, &k->wns);
		bench_grid_median(&grid, arm_of(r, c), NS_PER_PAIR,
				  &k->at_med);
		if (r->v == V_HOOKED && twin)
			bench_grid_ratio(&grid, arm_of(r, c), arm_of(twin, c),
					 NS_PER_PAIR, &k->hooks);
		k->done = true;
	}
}

/* ---- output ---------------------------------------------------------- */

/* What the hooks cost at column @c: false if not measured. */
static bool hooks_measured(const struct row *r, int c)
{
	return r->v == V_HOOKED && opt.hooks && r->cell[c].done;
}

static void print_json(const struct row *r, int c)
{
	const struct cell *k = &r->cell[c];
	char name[64];

	bench_json_begin();
	bench_json_str("lock", row_name(r, name, sizeof(name)));
	bench_json_uint("threads", bench_std.threads[c]);
	bench_json_str("op", op_name[r->op]);
	bench_json_range("ns_per_pair", &k->ns, 3);
	bench_json_uint("rounds", grid.done);
	bench_json_num("duration_s", bench_std.duration_ms / 1000.0, 3);
	bench_json_uint("work", opt.work);
	bench_json_uint("pairs", k->at_med.pairs);
	bench_json_num("fairness", k->at_med.fairness, 3);
	bench_json_bool("lockstat", opt.lockstat);
	if (r->op == OP_MIX) {
		bench_json_uint("mix", opt.mix);
		bench_json_uint("writes", k->at_med.writes);
		bench_json_range("ns_per_write", &k->wns, 1);
	}
	if (hooks_measured(r, c))
		bench_json_range("hooks_ratio", &k->hooks, 4);
	bench_json_end();
}

static void print_all_json(void)
{
	int i, c;

	for (i = 0; i < nr_rows; i++)
		for (c = 0; c < bench_std.nr_threads; c++)
			if (rows[i].cell[c].done)
				print_json(&rows[i], c);
}

static void print_header(void)
{
	bench_print_rounds_note("ns per acquire+release pair", grid.done,
				bench_std.duration_ms);
	printf("# %s critical section; rcu: urcu-%s; membarrier(2): %s; "
	       "lockstat: %s\n", opt.work ? "a --work" : "an empty",
	       VS_RCU_QSBR ? "qsbr" : "memb",
	       vs_membarrier_init() ? "yes" : "no (readers pay smp_mb)",
	       opt.lockstat ? "on" : "compiled in, off");
	if (opt.op[OP_MIX])
		printf("# mix: a write pair after every %u read pairs; ns "
		       "per read pair, the writes included;\n#   mix:w: ns "
		       "per write pair amid those reads\n", opt.mix);
	if (opt.hooks)
		printf("# hooks@T: a kind through the vs_lock wrappers over "
		       "the same kind's ops called directly, per round\n");
}

/* One table line: @r's medians, or (@wcost) its mix rows' write pairs. */
static void print_line(const struct row *r, bool wcost)
{
	char name[64];
	int c;

	printf("%-16s %-5s", row_name(r, name, sizeof(name)),
	       wcost ? "mix:w" : op_name[r->op]);
	for (c = 0; c < bench_std.nr_threads; c++) {
		if (!r->cell[c].done)
			printf(" %9s", "-");
		else
			printf(" %9.1f", wcost ? r->cell[c].wns.med
					       : r->cell[c].ns.med);
	}
	for (c = 0; opt.hooks && !wcost && c < bench_std.nr_threads; c++) {
		if (hooks_measured(r, c))
			bench_print_range(&r->cell[c].hooks, 22, "x");
	}
	printf("\n");
}

static void print_table(void)
{
	char buf[32];
	int i, c;

	print_header();
	printf("%-16s %-5s", "lock", "op");
	for (c = 0; c < bench_std.nr_threads; c++)
		printf(" %5u thr", bench_std.threads[c]);
	for (c = 0; opt.hooks && c < bench_std.nr_threads; c++) {
		snprintf(buf, sizeof(buf), "hooks@%u", bench_std.threads[c]);
		printf(" %21s", buf);
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

/* "a / b = 0.91x (0.85..1.02) (<= 1.25) PASS", or its JSON object;
 * the verdict is on the median. */
static void target_line(struct operand a, struct operand b,
			const struct bench_range *ratio, double limit,
			bool strict)
{
	bool pass = strict ? ratio->med < limit : ratio->med <= limit;
	char an[64], bn[64], both[140];

	operand_name(a, an, sizeof(an));
	operand_name(b, bn, sizeof(bn));
	if (bench_std.json) {
		snprintf(both, sizeof(both), "%s / %s", an, bn);
		bench_json_begin();
		bench_json_str("target", both);
		bench_json_range("ratio", ratio, 4);
		bench_json_str("limit", strict ? "<" : "<=");
		bench_json_num("bound", limit, 2);
		bench_json_bool("pass", pass);
		bench_json_end();
		return;
	}
	printf("  %-22s / %-24s = ", an, bn);
	bench_print_range(ratio, 21, "x");
	printf(" (%s %.2f) %s\n", strict ? "< " : "<=", limit,
	       pass ? "PASS" : "MISS");
}

/* @a over @b per round, if both were measured.  Return: 0 or 1. */
static int target(struct operand a, struct operand b, double limit,
		  bool strict)
{
	const struct row *x = find_row(a.lock, a.v, a.op);
	const struct row *y = find_row(b.lock, b.v, b.op);
	int cx = bench_col_of(a.threads);
	int cy = bench_col_of(b.threads);
	struct bench_range ratio;

	if (!x || !y || cx < 0 || cy < 0 || !x->cell[cx].done ||
	    !y->cell[cy].done)
		return 0;
	bench_grid_ratio(&grid, arm_of(x, cx), arm_of(y, cy), NS_PER_PAIR,
			 &ratio);
	target_line(a, b, &ratio, limit, strict);
	return 1;
}

#define RD(lock, t) ((struct operand){ lock, V_HOOKED, OP_READ, t })
#define WR(lock, t) ((struct operand){ lock, V_HOOKED, OP_WRITE, t })
#define URCU_CALL(t) ((struct operand){ "urcu-call", V_URCU_CALL, OP_READ, t })

/*
 * Hooks compiled in but off cost at most 5% over the bare ops: reads at
 * every thread count, uncontended writes (contended ones are noise).
 */
static int hook_targets(void)
{
	const struct row *r;
	struct operand h, n;
	int i, c, nr = 0;

	for (i = 0, r = rows; opt.hooks && i < nr_rows; i++, r++) {
		if (r->v != V_HOOKED || r->op == OP_MIX)
			continue;
		for (c = 0; c < bench_std.nr_threads; c++) {
			if (!r->cell[c].done ||
			    (r->op == OP_WRITE && bench_std.threads[c] != 1))
				continue;
			h = (struct operand){ r->lock, V_HOOKED, r->op,
					      bench_std.threads[c] };
			n = h;
			n.v = V_NOHOOKS;
			target_line(h, n, &r->cell[c].hooks, 1.05, false);
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
		if (!bench_std.json)
			printf("\ntargets: not checked (they assume an empty "
			       "section; --work %u)\n", opt.work);
		return;
	}
	if (!bench_std.json)
		printf("\ntargets (a / b per round, median (min..max)):\n");
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
	if (!nr && !bench_std.json)
		printf("  none: their inputs were not measured\n");
}

/* The statistics of each lock: after the table, or JSON objects. */
static void print_lockstat(void)
{
	int i;

	if (!bench_std.json) {
		printf("\n");
		vs_lockstat_print(stdout);
		return;
	}
	for (i = 0; i < opt.nr_locks; i++)
		if (!is_urcu(opt.lock[i]))
			bench_json_lockstat(locks[i].class);
}

/* ---- the run: every cell once a round, rounds --repeat times --------- */

/* Cell @arm (arm_of()) into @sample.  Return: 0, 1 at SIGINT, or a
 * negative errno. */
static int measure_arm(void *ctx, unsigned int arm, void *sample)
{
	struct row *r = &rows[arm % (unsigned int)nr_rows];
	int c = (int)(arm / (unsigned int)nr_rows);
	int err;

	(void)ctx;
	err = measure(r->l, r->v, r->op, bench_std.threads[c], sample);
	return err ? err : bench_interrupted;
}

/* Set up the lock of each kind in --lock.  Return: 0 or 1 (said). */
static int locks_init(void)
{
	int i, err;

	for (i = 0; i < opt.nr_locks; i++) {
		if (is_urcu(opt.lock[i]))
			continue;
		err = vs_lock_init(&locks[i], opt.lock[i], opt.lock[i]);
		if (err) {
			fprintf(stderr, "lockbench: %s: vs_lock_init: %s\n",
				opt.lock[i], vs_strerror(err));
			while (i--)
				if (!is_urcu(opt.lock[i]))
					vs_lock_destroy(&locks[i]);
			return 1;
		}
	}
	return 0;
}

/* Every cell, in rounds.  Return: 0 or 1 (said). */
static int run_all(void)
{
	int i, err;

	if (locks_init())
		return 1;
	err = bench_grid_measure(&grid, (unsigned int)(nr_rows *
						     bench_std.nr_threads),
				 sizeof(struct sample), measure_arm, NULL);
	if (err < 0 && err != -ENOMEM)
		fprintf(stderr, "lockbench: %s\n", vs_strerror(err));
	for (i = 0; grid.done && i < nr_rows; i++)
		row_set(&rows[i]);
	for (i = 0; i < opt.nr_locks; i++)
		if (!is_urcu(opt.lock[i]))
			vs_lock_destroy(&locks[i]);
	return err < 0;
}

/* ---- options ---------------------------------------------------------- */

static const char about[] =
"ns per acquire+release pair of each lock kind, pthread_rwlock (the\n"
"pthread kind) and a bare liburcu read section, at 1..N threads.  Every\n"
"cell is measured once a round, --repeat rounds; a figure is the median\n"
"over the rounds, a ratio the median of the per-round ratios.\n";

static const struct bench_opt opts[] = {
	{ BENCH_OPT_LOCK, "rwsem,pthread,percpu,brlock,prwlock,urcu,\n"
			  "urcu-call or all (default all)", NULL },
	{ BENCH_OPT_THREADS, "thread counts, e.g. 1,2,4 or 1-4, each\n"
			     "1..256 (default 1..nproc)", NULL },
	{ BENCH_OPT_OP, "read, write, mix or all = read,write\n"
			"(default all)", NULL },
	{ BENCH_OPT_DURATION, NULL, NULL },
	{ BENCH_OPT_REPEAT, NULL, NULL },
	{ BENCH_OPT_QUICK, "--duration 0.05 --repeat 3 unless given", NULL },
	{ BENCH_OPT_MIX, "add mix rows: one write pair per N read pairs\n"
			 "(default N 10000 with --op mix)", NULL },
	{ BENCH_OPT_WORK, "N pause instructions inside each section\n"
			  "(default 0: an empty section)", NULL },
	{ BENCH_OPT_HOOKS, "add <kind>/nohooks rows (ops called directly)\n"
			   "and the hooks overhead", NULL },
	{ BENCH_OPT_LOCKSTAT, "switch lock statistics on; print them after\n"
			      "(with --json: one object per lock and side)",
	  NULL },
	{ BENCH_OPT_JSON, "one JSON object per cell and per target", NULL },
	{ 0, NULL, NULL },
};

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

/* Add lock @name once; "all" adds each. */
static void lock_item(const char *item)
{
	bench_arg_names(item, lock_name, "a lock", opt.lock, &opt.nr_locks,
			BENCH_MAX_LOCKS);
}

static const char *op_of(int i)
{
	return i < NR_OPS ? op_name[i] : NULL;
}

static void op_item(const char *item)
{
	int i = bench_arg_name(item, op_of, "an op", true);

	if (i < 0)
		opt.op[OP_READ] = opt.op[OP_WRITE] = true;
	else
		opt.op[i] = true;
}

static void set_option(int key, char *arg)
{
	switch (key) {
	case BENCH_OPT_LOCK:
		bench_arg_list(arg, lock_item);
		break;
	case BENCH_OPT_OP:
		bench_arg_list(arg, op_item);
		break;
	case BENCH_OPT_MIX:
		opt.mix = bench_arg_uint(arg, 1, MAX_MIX);
		opt.op[OP_MIX] = true;
		break;
	case BENCH_OPT_WORK:
		opt.work = bench_arg_uint(arg, 0, MAX_WORK);
		break;
	case BENCH_OPT_HOOKS:
		opt.hooks = true;
		break;
	case BENCH_OPT_LOCKSTAT:
		opt.lockstat = true;
		break;
	}
}

static const struct bench_tool tool = {
	.name = "lockbench", .about = about, .opts = opts, .set = set_option,
	.duration_ms = 200, .repeat = 5, .quick_ms = 50, .quick_repeat = 3,
};

/* The defaults of what was not given; refuse what does not apply. */
static void check_options(void)
{
	unsigned int t;
	int i;

	if (!opt.nr_locks)
		lock_item("all");
	for (i = 0; i < opt.nr_locks && is_urcu(opt.lock[i]); i++)
		;
	if (i == opt.nr_locks && (opt.hooks || opt.lockstat))
		bench_usage_error("%s does not apply to urcu, which is no "
				  "lock kind", opt.hooks ? "--hooks"
							 : "--lockstat");
	if (!bench_std.nr_threads)
		for (t = 1; t <= uv_available_parallelism() &&
			    t <= BENCH_MAX_COLS; t++)
			bench_add_threads(t);
	if (!bench_given(BENCH_OPT_OP))
		op_item("all");
}

/* ---- main ------------------------------------------------------------- */

int main(int argc, char **argv)
{
	int ret;

	bench_parse_options(&tool, argc, argv);
	check_options();
	cs_work = opt.work;
	mix_every = opt.mix;
	build_rows();
	if (bench_control_init())
		return 1;
	if (opt.lockstat) {
		vs_lockstat_reset();
		vs_lockstat_enable(1);
	}
	ret = run_all();
	if (opt.lockstat)
		vs_lockstat_enable(0);
	if (bench_std.json)
		print_all_json();
	else
		print_table();
	print_targets();
	if (opt.lockstat)
		print_lockstat();
	bench_grid_free(&grid);
	return bench_control_close(ret);
}
