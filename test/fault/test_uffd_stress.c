/* SPDX-License-Identifier: MIT */
/*
 * test/fault/test_uffd_stress.c - the idea of the kernel's uffd-stress
 * (tools/testing/selftests/mm/uffd-stress.c), against vmsim's uffd
 * backing: real threads take locks that live inside the faulting region
 * and increment per-page counters, while a bouncer keeps zapping the
 * region through the model (MADV_DONTNEED of a shared mapping: the
 * mirror writes the real pages back into the page cache, drops them,
 * and the next touch faults them in again through vs_handle_mm_fault).
 * No increment may be lost: at the end every page's counter equals the
 * increments the threads counted, read both through real loads and
 * through the model (vs_read).
 *
 * The locks are pthread spinlocks, not mutexes: a contended mutex calls
 * futex(2), and a futex on a page the bouncer just zapped is a kernel-
 * mode fault, which a UFFD_USER_MODE_ONLY uffd (and SIGBUS mode, always)
 * refuses with EFAULT; glibc aborts on that (vmsim/uffd.h, Context).
 *
 * One case per delivery mode x fault strategy.
 */
#include <pthread.h>
#include <sched.h>

#include <vmsim/vmsim.h>

#include "test.h"

#define PG VS_PAGE_SIZE
#define NR_PAGES 32
#define NR_WORKERS 2
#define MIN_BOUNCES 200	/* the workers go on until this many */

/* What each page of the region holds. */
struct slot {
	pthread_spinlock_t lock;
	unsigned long count;
};

struct ctx {
	struct vs_uffd *u;
	char *area;
	vs_atomic32_t done;		/* workers finished */
	vs_atomic32_t stop;		/* the bouncer stops */
	vs_atomic32_t bounces;
	int64_t deadline;		/* the workers stop, whatever */
	unsigned long tally[NR_WORKERS][NR_PAGES];
	int iters;
};

struct worker {
	struct ctx *c;
	int id;
};

static struct slot *slot_at(struct ctx *c, int page)
{
	return (struct slot *)(c->area + (size_t)page * PG);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct ctx *c = w->c;
	unsigned int seed = (unsigned int)w->id * 7919u + 1;
	struct slot *s;
	int i, p;

	ck_assert_int_eq(vs_thread_attach(), 0);
	for (i = 0; i < c->iters || (vs_read_once(&c->bounces) < MIN_BOUNCES &&
				     vs_test_now_ns() < c->deadline);
	     i++) {
		p = (int)(rand_r(&seed) % NR_PAGES);
		s = slot_at(c, p);
		/* A lost unlock would spin forever: bounded. */
		while (pthread_spin_trylock(&s->lock))
			ck_assert_msg(vs_test_now_ns() < c->deadline,
				      "page %d: its lock is never released", p);
		s->count++;
		pthread_spin_unlock(&s->lock);
		c->tally[w->id][p]++;
	}
	vs_fetch_add(&c->done, 1);
	return NULL;
}

/* Zap random runs of pages until the workers are done. */
static void *bouncer_main(void *arg)
{
	struct ctx *c = arg;
	struct vs_mm *mm = vs_uffd_mm(c->u);
	unsigned int seed = 12345;
	unsigned long first, n;

	ck_assert_int_eq(vs_thread_attach(), 0);
	while (!vs_load_acquire(&c->stop)) {
		first = rand_r(&seed) % NR_PAGES;
		n = 1 + rand_r(&seed) % (NR_PAGES - first);
		ck_assert_int_eq(vs_madvise(mm, (unsigned long)c->area +
							first * PG,
					    n * PG, VS_MADV_DONTNEED),
				 0);
		vs_write_once(&c->bounces, vs_read_once(&c->bounces) + 1);
		sched_yield();
	}
	return NULL;
}

static void setup_area(struct ctx *c, int mode, int strategy)
{
	struct vs_uffd_options o = { 0 };
	long addr;
	int p;

	o.size = 4UL << 20;
	o.mode = mode;
	o.nr_threads = mode == VS_UFFD_THREADS ? 2 : 0;
	o.strategy = strategy;
	ck_assert_int_eq(vs_uffd_create(&c->u, &o), 0);
	addr = vs_mmap(vs_uffd_mm(c->u), 0, NR_PAGES * PG,
		       VS_PROT_READ | VS_PROT_WRITE,
		       VS_MAP_SHARED | VS_MAP_ANONYMOUS, NULL, 0);
	ck_assert_int_gt(addr, 0);
	c->area = (char *)addr;
	for (p = 0; p < NR_PAGES; p++)
		ck_assert_int_eq(pthread_spin_init(&slot_at(c, p)->lock,
						   PTHREAD_PROCESS_SHARED),
				 0);
}

/* Every page's counter, by real loads and through the model. */
static void check_counts(struct ctx *c)
{
	struct vs_mm *mm = vs_uffd_mm(c->u);
	unsigned long want, model;
	int p, w;

	for (p = 0; p < NR_PAGES; p++) {
		for (want = 0, w = 0; w < NR_WORKERS; w++)
			want += c->tally[w][p];
		ck_assert_msg(slot_at(c, p)->count == want,
			      "page %d: count %lu, increments %lu", p,
			      slot_at(c, p)->count, want);
	}
	/* A last zap writes the real pages back into the page cache. */
	ck_assert_int_eq(vs_madvise(mm, (unsigned long)c->area, NR_PAGES * PG,
				    VS_MADV_DONTNEED),
			 0);
	for (p = 0; p < NR_PAGES; p++) {
		ck_assert_int_eq(vs_read(mm, (unsigned long)slot_at(c, p) +
						     offsetof(struct slot, count),
					 &model, sizeof(model)),
				 0);
		ck_assert_uint_eq(model, slot_at(c, p)->count);
	}
}

static void run_stress(int mode, int strategy)
{
	static struct ctx c;
	struct worker w[NR_WORKERS];
	pthread_t tid[NR_WORKERS], bouncer;
	struct vs_uffd_stats st;
	int i;

	memset(&c, 0, sizeof(c));
	c.iters = vs_test_scale(100000);
	c.deadline = vs_test_now_ns() + VS_TEST_WAIT_NS;
	ck_assert_int_eq(vs_thread_attach(), 0);
	setup_area(&c, mode, strategy);
	ck_assert_int_eq(pthread_create(&bouncer, NULL, bouncer_main, &c), 0);
	for (i = 0; i < NR_WORKERS; i++) {
		w[i].c = &c;
		w[i].id = i;
		ck_assert_int_eq(pthread_create(&tid[i], NULL, worker_main,
						&w[i]),
				 0);
	}
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(tid[i], NULL);
	vs_store_release(&c.stop, 1);
	pthread_join(bouncer, NULL);
	check_counts(&c);
	ck_assert_int_eq(vs_uffd_stats_get(c.u, &st), 0);
	ck_assert_msg(c.bounces >= MIN_BOUNCES && st.writebacks > 0 &&
			      st.faults > 0,
		      "too few bounces (%u), write-backs (%lu) or faults (%lu)",
		      vs_read_once(&c.bounces), st.writebacks, st.faults);
	ck_assert_int_eq(vs_uffd_destroy(c.u), 0);
}

START_TEST(uffd_stress_sigbus)
{
	run_stress(VS_UFFD_SIGBUS, _i);
}
END_TEST

START_TEST(uffd_stress_threads)
{
	run_stress(VS_UFFD_THREADS, _i);
}
END_TEST

START_TEST(uffd_stress_uv)
{
	run_stress(VS_UFFD_UV, _i);
}
END_TEST

Suite *uffd_stress_suite(void)
{
	Suite *s = suite_create("uffd_stress");

	/* A tcase per delivery mode (CK_RUN_CASE=sigbus runs one). */
	vs_test_add_loop(vs_test_tcase(s, "sigbus"), VS_FAULT_NR_STRATEGIES,
			 uffd_stress_sigbus);
	vs_test_add_loop(vs_test_tcase(s, "threads"), VS_FAULT_NR_STRATEGIES,
			 uffd_stress_threads);
	vs_test_add_loop(vs_test_tcase(s, "uv"), VS_FAULT_NR_STRATEGIES,
			 uffd_stress_uv);
	return s;
}
