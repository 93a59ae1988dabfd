/* SPDX-License-Identifier: MIT */
/*
 * vcpu/context.c - contexts: stacks of their own (mmap'd, with a guard
 * page below), made ready to run a function from the start, and the
 * switch between them and the host; which context runs now.
 *
 * Locking: the machine's host thread (or the running context), between
 * events.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#define DEFAULT_STACK (256 * 1024)

/* The machine the host thread runs now, and its running context. */
struct vs_machine *vs__vcpu_machine;
int vs__vcpu_cur = -1;

_Noreturn void vs__vcpu_die(const char *what, int err)
{
	fprintf(stderr, "vmsim: %s: %s\n", what, strerror(err));
	abort();
}

#if defined(__x86_64__)
void vs__ctx_switch(void **save_sp, void *load_sp);
void vs__ctx_start(void);

/* Lay out a fresh stack that vs__ctx_switch() "returns" into
 * vs__ctx_start with r12 = @fn and r13 = @arg (vcpu/switch.S). */
static void ctx_make(struct vs__vcpu *v, void (*fn)(void *), void *arg)
{
	uint64_t *top = (uint64_t *)(((uintptr_t)(v->stack_lo + v->stack_len))
				     & ~(uintptr_t)15);
	uint32_t *ctl;

	*--top = (uint64_t)(uintptr_t)vs__ctx_start;	/* ret */
	*--top = 0;					/* rbp */
	*--top = 0;					/* rbx */
	*--top = (uint64_t)(uintptr_t)fn;		/* r12 */
	*--top = (uint64_t)(uintptr_t)arg;		/* r13 */
	*--top = 0;					/* r14 */
	*--top = 0;					/* r15 */
	*--top = 0;
	ctl = (uint32_t *)top;
	ctl[0] = 0x1f80;	/* MXCSR: all exceptions masked */
	ctl[1] = 0x037f;	/* x87 control word at reset */
	v->sp = top;
}

static void ctx_switch(void **save, void *load)
{
	vs__ctx_switch(save, load);
}
#else
/* Portable: ucontext.  @sp points at the vCPU's ucontext_t. */
struct uctx {
	ucontext_t uc;
};

static void ctx_entry(unsigned int hi, unsigned int lo, unsigned int ahi,
		      unsigned int alo)
{
	void (*fn)(void *) = (void (*)(void *))(((uintptr_t)hi << 32) | lo);
	void *arg = (void *)(((uintptr_t)ahi << 32) | alo);

	fn(arg);
	abort();
}

static void ctx_make(struct vs__vcpu *v, void (*fn)(void *), void *arg)
{
	struct uctx *u = v->sp ? v->sp : malloc(sizeof(*u));
	uintptr_t f = (uintptr_t)fn, a = (uintptr_t)arg;

	if (!u)
		vs__vcpu_die("vcpu context", ENOMEM);
	getcontext(&u->uc);
	u->uc.uc_stack.ss_sp = v->stack_lo;
	u->uc.uc_stack.ss_size = v->stack_len;
	u->uc.uc_link = NULL;
	makecontext(&u->uc, (void (*)(void))ctx_entry, 4,
		    (unsigned int)(f >> 32), (unsigned int)f,
		    (unsigned int)(a >> 32), (unsigned int)a);
	v->sp = u;
}

static void ctx_switch(void **save, void *load)
{
	struct uctx *from = *save, *to = load;

	if (!from) {
		from = malloc(sizeof(*from));
		if (!from)
			vs__vcpu_die("vcpu context", ENOMEM);
		*save = from;
	}
	swapcontext(&from->uc, &to->uc);
}
#endif

/*
 * Switch from @from (NULL: the host) to @to (NULL: the host).  @from's
 * context is dead when @dying (its work ended), so ASan may drop its
 * fake stack.
 */
void vs__switch_to(struct vs_machine *m, struct vs__vcpu *from,
		   struct vs__vcpu *to, int dying)
{
	void **save = from ? &from->sp : &m->host_sp;
	void *load = to ? to->sp : m->host_sp;

	m->cur = to;
	vs__vcpu_cur = to ? (int)to->id : -1;
	if (to)
		to->state = VS__V_RUNNING;
	if (vs__vcpu_watch)	/* VMSIM_TEST_SIGNAL_AT: a moment */
		vs__vcpu_hook_moment();
#ifdef VCPU_ASAN
	{
		void **fake = dying ? NULL :
			      from ? &from->asan_fake : &m->host_asan_fake;
		const void *lo = to && !(m->entered && to->id == 0) ?
				 to->stack_lo : m->host_stack_lo;
		size_t len = to && !(m->entered && to->id == 0) ?
			     to->stack_len : m->host_stack_len;

		__sanitizer_start_switch_fiber(fake, lo, len);
		ctx_switch(save, load);
		__sanitizer_finish_switch_fiber(from ? from->asan_fake :
						m->host_asan_fake, NULL, NULL);
	}
#else
	(void)dying;
	ctx_switch(save, load);
#endif
}

static int stack_map(struct vs__vcpu *v, size_t size)
{
	long page = sysconf(_SC_PAGESIZE);

	size = (size + (size_t)page - 1) & ~((size_t)page - 1);
	v->map_len = size + (size_t)page;
	v->map = mmap(NULL, v->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (v->map == MAP_FAILED) {
		v->map = NULL;
		return -ENOMEM;
	}
	/* The guard page: a stack overflow faults instead of corrupting. */
	if (mprotect(v->map, (size_t)page, PROT_NONE)) {
		munmap(v->map, v->map_len);
		v->map = NULL;
		return -ENOMEM;
	}
	v->stack_lo = v->map + page;
	v->stack_len = size;
	return 0;
}

void vs__context_free(struct vs__vcpu *v)
{
	if (!v->map)
		return;
#ifdef VCPU_ASAN
	/* Frames of a context that never returned (a daemon, one a
	 * deadlock left) stay poisoned, and the shadow outlives the
	 * munmap: a later mapping there would inherit it. */
	__asan_unpoison_memory_region(v->stack_lo, v->stack_len);
#endif
	munmap(v->map, v->map_len);
	v->map = NULL;
#if !defined(__x86_64__)
	free(v->sp);
	v->sp = NULL;
#endif
}

int vs__context_make(struct vs__vcpu *v, size_t stack_size,
		     void (*fn)(void *), void *arg)
{
	int err;

	if (!v->map) {		/* a context's stack is made on first use */
		err = stack_map(v, stack_size ? stack_size : DEFAULT_STACK);
		if (err)
			return err;
	}
	ctx_make(v, fn, arg);
	return 0;
}
