/* SPDX-License-Identifier: MIT */
/*
 * fault/workload.c - the workload runner of vmsim/workload.h: the
 * barrier, the memory a workload touches on each backing, the address
 * spaces of the two modes, the tasks' loops on threads and on vCPUs,
 * and the measured phase.  The built-in workloads are in
 * fault/workload_builtin.c.
 *
 * What the runner itself counts (a task's pages, how many tasks still
 * run, the caller's stop flag) is the host's bookkeeping, not the
 * model's memory: it is read and written with C11 atomics directly,
 * past vmsim/atomic.h's seam, so that on vCPUs it is no event and costs
 * no virtual time.  The barrier and the flag that ends
 * the loop are the model's: every access to them is an event.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <vmsim/workload.h>
#include <vmsim/file.h>
#include <vmsim/rcu.h>
#include <vmsim/thread.h>
#include <vmsim/uffd.h>
#include <vmsim/vcpu.h>
#include <vmsim/wait.h>

#define POOL_SLACK 4096		/* pages beyond twice the footprint's */
#define UFFD_SLACK (16UL << 20)	/* address space beyond the footprint */
#define TICK_NS 100000000ULL
#define WAIT_NS 10000000L

/* ---- the barrier --------------------------------------------------------- */

int vs_workload_barrier_init(struct vs_workload_barrier *b,
			     unsigned int parties)
{
	if (!b || !parties)
		return -EINVAL;
	vs_atomic_init(&b->count, 0);
	vs_atomic_init(&b->gen, 0);
	b->parties = parties;
	return 0;
}

int vs_workload_barrier_wait(struct vs_workload_barrier *b)
{
	uint32_t gen;

	if (!b || !b->parties)
		return -EINVAL;
	gen = vs_load_acquire(&b->gen);
	if (vs_fetch_add(&b->count, 1) + 1 == b->parties) {
		vs_write_once(&b->count, 0);
		/* Release: pairs with the waiters' acquire loads of gen. */
		vs_store_release(&b->gen, gen + 1);
		vs_futex_wake(&b->gen, INT32_MAX);
		return 1;
	}
	while (vs_load_acquire(&b->gen) == gen)
		vs_futex_wait(&b->gen, gen, -1);
	return 0;
}

/* ---- the clock and the tool's hooks --------------------------------------- */

uint64_t vs_workload_now_ns(void)
{
	struct timespec ts;

	if (VS_VCPU && vs_vcpu_machine())
		return vs_vcpu_now_ns();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static const struct vs_workload_hooks no_hooks;

static const struct vs_workload_hooks *hooks(const struct vs_workload *w)
{
	return w->cfg.hooks ? w->cfg.hooks : &no_hooks;
}

/* Run @fn(@w) as the phase @name: timed, shown to the span hook. */
static int phase(struct vs_workload *w, const char *name,
		 int (*fn)(struct vs_workload *w))
{
	uint64_t t0 = vs_workload_now_ns();
	int err = fn(w);

	if (hooks(w)->span)
		hooks(w)->span(w, name, t0, vs_workload_now_ns());
	return err;
}

/* ---- memory on each backing ---------------------------------------------- */

static bool on_host(const struct vs_workload *w)
{
	return w->cfg.backing == VS_WORKLOAD_HOST;
}

/*
 * @t->pages += 1: bookkeeping that only @t writes, so a relaxed load and
 * store, no locked instruction on the fault path (and no event).
 */
static void count_page(struct vs_workload_task *t)
{
	atomic_store_explicit(&t->pages, atomic_load_explicit(
			      &t->pages, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

int vs_workload_touch(struct vs_workload_task *t, unsigned long addr)
{
	const struct vs_workload_hooks *h;
	int err = 0;

	if (!t || !t->w)
		return -EINVAL;
	h = hooks(t->w);
	if (h->touch_begin)
		h->touch_begin(t);
	if (t->w->cfg.backing == VS_WORKLOAD_MODEL)
		err = vs_access(t->mm, addr, 1, 1);
	else
		*(volatile char *)addr = 0;
	if (h->touch_end)
		h->touch_end(t);
	count_page(t);
	return err;
}

int vs_workload_touch_range(struct vs_workload_task *t, unsigned long addr,
			    size_t len)
{
	unsigned long a;
	int err = 0;

	if (!t)
		return -EINVAL;
	for (a = addr; a < addr + len && !err; a += VS_PAGE_SIZE)
		err = vs_workload_touch(t, a);
	return err;
}

long vs_workload_mmap(struct vs_workload *w, struct vs_mm *mm, size_t len,
		      bool file)
{
	void *p;

	if (!w || (file && !w->file && w->fd < 0))
		return -EINVAL;
	if (!on_host(w))
		return vs_mmap(mm, 0, len, VS_PROT_READ | VS_PROT_WRITE,
			       VS_MAP_PRIVATE |
			       (file ? 0 : VS_MAP_ANONYMOUS),
			       file ? w->file : NULL, 0);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | (file ? 0 : MAP_ANONYMOUS), file ? w->fd : -1,
		 0);
	return p == MAP_FAILED ? -errno : (long)p;
}

int vs_workload_munmap(struct vs_workload *w, struct vs_mm *mm,
		       unsigned long addr, size_t len)
{
	if (!w)
		return -EINVAL;
	if (!on_host(w))
		return vs_munmap(mm, addr, len);
	return munmap((void *)addr, len) ? -errno : 0;
}

int vs_workload_zap(struct vs_workload *w, struct vs_mm *mm,
		    unsigned long addr, size_t len)
{
	if (!w)
		return -EINVAL;
	if (!on_host(w))
		return vs_madvise(mm, addr, len, VS_MADV_DONTNEED);
	return madvise((void *)addr, len, MADV_DONTNEED) ? -errno : 0;
}

int vs_workload_file_create(struct vs_workload *w, size_t size)
{
	if (!w)
		return -EINVAL;
	if (w->file || w->fd >= 0)
		return -EEXIST;
	if (!on_host(w))
		return vs_file_create(&w->file, w->mm->pool, size, O_RDWR);
	w->fd = memfd_create("vmsim-workload", MFD_CLOEXEC);
	if (w->fd < 0)
		return -errno;
	return ftruncate(w->fd, (off_t)size) ? -errno : 0;
}

/* ---- the address spaces --------------------------------------------------- */

static size_t footprint(const struct vs_workload *w, size_t *pages)
{
	size_t bytes;

	if (w->cfg.ops->footprint)
		return w->cfg.ops->footprint(w, pages);
	bytes = w->cfg.bytes * w->cfg.nr_tasks;
	*pages = bytes / VS_PAGE_SIZE;
	return bytes;
}

/* The run's mm (threads') or the parent's (processes'). */
static int mm_create(struct vs_workload *w)
{
	struct vs_mm_options mo = w->cfg.mm;
	struct vs_uffd_options uo = { 0 };
	size_t pages, bytes = footprint(w, &pages);
	int err;

	if (!mo.pool_pages)
		mo.pool_pages = pages * 2 + POOL_SLACK;
	if (on_host(w))
		return 0;
	if (w->cfg.backing == VS_WORKLOAD_MODEL) {
		err = vs_mm_create(&w->mm, &mo);
		return err ? err : vs_mm_set_fault_strategy(w->mm,
							     w->cfg.strategy);
	}
	uo.size = (bytes + UFFD_SLACK + VS_PAGE_SIZE - 1) & ~(VS_PAGE_SIZE - 1);
	uo.mode = w->cfg.uffd_mode;
	uo.nr_threads = uo.mode == VS_UFFD_THREADS ? 1 : 0;
	uo.strategy = w->cfg.strategy;
	uo.mm = mo;
	err = vs_uffd_create(&w->uffd, &uo);
	w->mm = err ? NULL : vs_uffd_mm(w->uffd);
	return err;
}

/* Each task's mm: the run's, or one forked from it per process. */
static int task_mms(struct vs_workload *w)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i < w->cfg.nr_tasks && !err; i++) {
		if (w->cfg.mode == VS_WORKLOAD_THREADS) {
			w->task[i].mm = w->mm;
			continue;
		}
		err = vs_fork(w->mm, &w->task[i].mm);
		if (!err)
			err = vs_mm_set_fault_strategy(w->task[i].mm,
						       w->cfg.strategy);
	}
	return err;
}

static int setup(struct vs_workload *w)
{
	int err = mm_create(w);

	if (!err && w->cfg.ops->setup)
		err = w->cfg.ops->setup(w);
	return err ? err : task_mms(w);
}

static int teardown(struct vs_workload *w)
{
	unsigned int i;
	int err = 0, e;

	if (w->cfg.ops->teardown)
		w->cfg.ops->teardown(w);
	for (i = 0; w->cfg.mode == VS_WORKLOAD_PROCESSES &&
		    i < w->cfg.nr_tasks; i++)
		if (w->task[i].mm && (e = vs_mm_destroy(w->task[i].mm)))
			err = err ? err : e;
	if (w->file)
		(void)vs_file_destroy(w->file);
	if (w->fd >= 0)
		close(w->fd);
	if (w->uffd)
		e = vs_uffd_destroy(w->uffd);
	else
		e = w->mm ? vs_mm_destroy(w->mm) : 0;
	return err ? err : e;
}

/* ---- the measured phase ---------------------------------------------------- */

static uint64_t host_minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)ru.ru_minflt;
}

static void measure_begin(struct vs_workload *w)
{
	if (on_host(w))
		w->minflt0 = host_minflt();
	else
		vs_fault_stats_get(&w->st0);
	if (hooks(w)->measure)
		hooks(w)->measure(w, false);
	w->t0_ns = vs_workload_now_ns();
	w->deadline_ns = w->t0_ns + w->cfg.duration_ns;
}

static void measure_end(struct vs_workload *w)
{
	struct vs_workload_result *r = w->res;
	struct vs_fault_stats st1;

	if (on_host(w)) {
		r->faults = host_minflt() - w->minflt0;
	} else {
		vs_fault_stats_get(&st1);
		vs_fault_stats_sub(&st1, &w->st0, &r->st);
		r->faults = r->st.faults;
	}
	r->ns = w->end_ns - w->t0_ns;
	if (hooks(w)->measure)
		hooks(w)->measure(w, true);
}

/* Whether the caller raised its stop flag: read past the seam. */
static bool stop_raised(const struct vs_workload *w)
{
	return w->cfg.stop && *w->cfg.stop;
}

/* ---- the tasks' loops ----------------------------------------------------- */

static int pass(struct vs_workload_task *t)
{
	int err = t->w->cfg.ops->pass(t);

	t->passes++;
	if (!(VS_VCPU && vs_vcpu_machine()))
		vs_rcu_quiescent_state();
	return err;
}

/* Task 0 between passes: the serial phase; then whether all leave. */
static int serial_step(struct vs_workload *w)
{
	uint64_t t0 = vs_workload_now_ns();
	const char *name = w->cfg.ops->serial_name;
	int err = w->cfg.ops->serial(w);

	w->end_ns = vs_workload_now_ns();
	if (hooks(w)->span)
		hooks(w)->span(w, name ? name : "serial", t0, w->end_ns);
	if (err || w->end_ns >= w->deadline_ns || stop_raised(w)) {
		vs_write_once(&w->leave, 1);
		if (!err)
			measure_end(w);
	}
	return err;
}

/* With a serial phase: the tasks go round together, three barriers a
 * pass; task 0 decides, and all leave after the third. */
static int serial_loop(struct vs_workload_task *t)
{
	struct vs_workload *w = t->w;
	int err = 0;

	for (;;) {
		vs_workload_barrier_wait(&w->bar);
		err = pass(t);
		vs_workload_barrier_wait(&w->bar);
		if (t->id == 0 && !err)
			err = serial_step(w);
		if (err) {
			/* The end is task 0's to write: another task's
			 * error only makes every task leave. */
			if (t->id == 0)
				w->end_ns = vs_workload_now_ns();
			vs_write_once(&w->leave, 1);
		}
		vs_workload_barrier_wait(&w->bar);
		if (vs_read_once(&w->leave))
			return err;
	}
}

/* Without: each task goes round alone until the phase is over. */
static int free_loop(struct vs_workload_task *t)
{
	int err;

	do {
		err = pass(t);
	} while (!err && vs_workload_now_ns() < t->w->deadline_ns &&
		 !stop_raised(t->w));
	return err;
}

static void task_body(struct vs_workload_task *t)
{
	struct vs_workload *w = t->w;

	if (hooks(w)->task_start)
		hooks(w)->task_start(t);
	t->err = w->cfg.ops->serial ? serial_loop(t) : free_loop(t);
	t->end_ns = vs_workload_now_ns();
	if (hooks(w)->task_end)
		hooks(w)->task_end(t);
	w->running--;				/* bookkeeping */
}

/* The end of a phase without a serial part: the last task's. */
static void free_end(struct vs_workload *w)
{
	unsigned int i;

	w->end_ns = 0;
	for (i = 0; i < w->cfg.nr_tasks; i++)
		if (w->task[i].end_ns > w->end_ns)
			w->end_ns = w->task[i].end_ns;
	if (!w->task[0].err)
		measure_end(w);
}

/* ---- on threads ------------------------------------------------------------ */

static void *thread_main(void *arg)
{
	struct vs_workload_task *t = arg;

	if (vs_thread_attach())
		abort();	/* more threads than slots: cfg was checked */
	vs_workload_barrier_wait(&t->w->start);
	task_body(t);
	return NULL;
}

/* The calling thread while the tasks run: the tool's ticks. */
static void watch(struct vs_workload *w)
{
	struct timespec ts = { 0, WAIT_NS };
	uint64_t last = w->t0_ns, now;
	unsigned long pages;
	unsigned int i;

	while (w->running) {
		nanosleep(&ts, NULL);
		now = vs_workload_now_ns();
		if (!hooks(w)->tick || now - last < TICK_NS)
			continue;
		for (i = 0, pages = 0; i < w->cfg.nr_tasks; i++)
			pages += (unsigned long)w->task[i].pages;
		hooks(w)->tick(w, now - w->t0_ns, pages);
		last = now;
	}
}

static int run_threads(struct vs_workload *w)
{
	unsigned int i, nr = w->cfg.nr_tasks;
	pthread_t *tid = calloc(nr, sizeof(*tid));
	int err = 0;

	if (!tid)
		return -ENOMEM;
	vs_workload_barrier_init(&w->start, nr + 1);
	for (i = 0; i < nr && !err; i++)
		err = -pthread_create(&tid[i], NULL, thread_main, &w->task[i]);
	/* Threads already waiting cannot be called back. */
	if (err)
		abort();
	measure_begin(w);
	if (hooks(w)->started)
		hooks(w)->started(w);
	vs_rcu_thread_offline();
	vs_workload_barrier_wait(&w->start);
	watch(w);
	for (i = 0; i < nr; i++)
		pthread_join(tid[i], NULL);
	if (hooks(w)->stopped)
		hooks(w)->stopped(w);
	vs_rcu_thread_online();
	free(tid);
	return 0;
}

/* ---- on vCPUs ---------------------------------------------------------------- */

static void vcpu_main(void *arg)
{
	task_body(arg);
}

static int run_vcpus(struct vs_workload *w, struct vs_machine *m)
{
	unsigned int i, n = vs_machine_nr_vcpus(m), nr = w->cfg.nr_tasks;
	int work[VS_WORKLOAD_MAX_TASKS];

	measure_begin(w);
	for (i = 1; i < nr; i++)
		work[i] = vs_machine_spawn(m, i % n, vcpu_main, &w->task[i]);
	if (hooks(w)->started)
		hooks(w)->started(w);
	task_body(&w->task[0]);
	if (hooks(w)->stopped)
		hooks(w)->stopped(w);
	for (i = 1; i < nr; i++)
		if (work[i] >= 0)
			vs_machine_join(m, (unsigned int)work[i]);
	return 0;
}

/* ---- a run --------------------------------------------------------------------- */

static int check(const struct vs_workload_config *cfg, bool vcpu)
{
	if (!cfg->ops || !cfg->ops->pass || !cfg->nr_tasks ||
	    cfg->nr_tasks > VS_WORKLOAD_MAX_TASKS ||
	    (unsigned int)cfg->mode >= VS_WORKLOAD_NR_MODES ||
	    (unsigned int)cfg->backing >= VS_WORKLOAD_NR_BACKINGS ||
	    (cfg->bytes ? cfg->bytes : cfg->ops->bytes) % VS_PAGE_SIZE ||
	    !(cfg->bytes ? cfg->bytes : cfg->ops->bytes))
		return -EINVAL;
	if (cfg->backing != VS_WORKLOAD_MODEL &&
	    (vcpu || cfg->mode == VS_WORKLOAD_PROCESSES))
		return -EOPNOTSUPP;
	return 0;
}

/*
 * The run and its tasks, zeroed, off the heap: the model's own objects
 * then lie where they would without the runner (on vCPUs, which lines
 * they share is part of the cost model's answer).
 */
static size_t run_size(unsigned int nr)
{
	size_t head = (sizeof(struct vs_workload) + VS_CACHELINE - 1) &
		      ~(size_t)(VS_CACHELINE - 1);

	return head + nr * sizeof(struct vs_workload_task);
}

static struct vs_workload *run_alloc(unsigned int nr)
{
	struct vs_workload *w = mmap(NULL, run_size(nr),
				     PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (w == MAP_FAILED)
		return NULL;
	w->task = (void *)((char *)w + run_size(0));
	return w;
}

static int run(struct vs_workload *w, struct vs_machine *m)
{
	unsigned int i;
	int err;

	w->running = (uint32_t)w->cfg.nr_tasks;	/* bookkeeping */
	vs_workload_barrier_init(&w->bar, w->cfg.nr_tasks);
	vs_vcpu_name(&w->bar, sizeof(w->bar), "the workload's barrier");
	err = m ? run_vcpus(w, m) : run_threads(w);
	if (err)
		return err;
	if (!w->cfg.ops->serial)
		free_end(w);
	for (i = 0; i < w->cfg.nr_tasks; i++) {
		w->res->pages += (uint64_t)w->task[i].pages;
		w->res->passes += w->task[i].passes;
		err = err ? err : w->task[i].err;
	}
	return err;
}

int vs_workload_run(const struct vs_workload_config *cfg,
		    struct vs_workload_result *res)
{
	struct vs_machine *m = VS_VCPU ? vs_vcpu_machine() : NULL;
	struct vs_workload *w;
	unsigned int i;
	int err, e;

	if (!cfg || !res)
		return -EINVAL;
	err = check(cfg, m != NULL);
	if (err)
		return err;
	w = run_alloc(cfg->nr_tasks);
	if (!w)
		return -ENOMEM;
	memset(res, 0, sizeof(*res));
	w->cfg = *cfg;
	w->cfg.bytes = cfg->bytes ? cfg->bytes : cfg->ops->bytes;
	w->fd = -1;
	w->res = res;
	for (i = 0; i < cfg->nr_tasks; i++) {
		w->task[i].w = w;
		w->task[i].id = i;
	}
	err = phase(w, "setup", setup);
	if (!err)
		err = run(w, m);
	e = phase(w, "teardown", teardown);
	munmap(w, run_size(cfg->nr_tasks));
	return err ? err : e;
}

/* ---- names -------------------------------------------------------------------- */

static const char *const mode_names[VS_WORKLOAD_NR_MODES] = {
	"threads", "processes",
};

const char *vs_workload_mode_name(int mode)
{
	if (mode < 0 || mode >= VS_WORKLOAD_NR_MODES)
		return NULL;
	return mode_names[mode];
}

int vs_workload_mode_parse(const char *name)
{
	int i;

	for (i = 0; name && i < VS_WORKLOAD_NR_MODES; i++)
		if (!strcmp(name, mode_names[i]))
			return i;
	return -EINVAL;
}
