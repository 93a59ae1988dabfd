/* SPDX-License-Identifier: MIT */
/*
 * vm/fail.c - allocation failures on demand (vmsim/fail.h).
 *
 * The state is written by vs_fail_set() while nothing allocates, and
 * read by allocators on any thread.  Its counters are host atomics, not
 * the seam's (vmsim/atomic.h): asking is no event of the vCPU engine, so
 * that a run with injection off schedules exactly as one without it.
 */
#include <vmsim/fail.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sync/internal.h"
#include "fail.h"

#define CACHE_MAX 32

unsigned int vs__fail_kinds;
/* Each context's: a vCPU's nofail section lets the others' fail. */
static VS__PER_CONTEXT(int, nofail_);
static VS__PER_CONTEXT(unsigned long, injected_here_);

static struct {
	char cache[CACHE_MAX];
	unsigned long nth;
	uint64_t threshold;	/* a draw below it fails */
	uint64_t seed;
	unsigned long times;
	unsigned long seen;	/* allocations asked about: atomic */
	unsigned long injected;	/* atomic */
} fail;

/* splitmix64: the draw of allocation @i, the same for a seed. */
static uint64_t draw(uint64_t seed, uint64_t i)
{
	uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* One more failure, unless @times are spent. */
static int take_one(void)
{
	unsigned long n = __atomic_load_n(&fail.injected, __ATOMIC_RELAXED);

	do {
		if (fail.times && n >= fail.times)
			return 0;
	} while (!__atomic_compare_exchange_n(&fail.injected, &n, n + 1, 0,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	VS__THIS(injected_here_)++;
	return 1;
}

int vs__fail_alloc_slow(unsigned int kind, const char *name)
{
	unsigned long i;

	if (VS__THIS(nofail_) > 0)
		return 0;
	if (kind == VS_FAIL_SLAB && fail.cache[0] &&
	    (!name || strncmp(name, fail.cache, strlen(fail.cache))))
		return 0;
	i = __atomic_add_fetch(&fail.seen, 1, __ATOMIC_RELAXED);
	if (fail.nth ? i % fail.nth : draw(fail.seed, i) >= fail.threshold)
		return 0;
	return take_one();
}

int vs_fail_check(const struct vs_fail_options *o)
{
	double p = o ? o->probability : 0;

	if (!o || !o->kinds)
		return 0;
	if (o->kinds & ~(unsigned int)(VS_FAIL_SLAB | VS_FAIL_PAGE) ||
	    !(p >= 0 && p <= 1) || !o->nth == !(p > 0) ||
	    (o->cache && (strlen(o->cache) >= CACHE_MAX ||
			  !(o->kinds & VS_FAIL_SLAB))))
		return -EINVAL;
	return 0;
}

int vs_fail_set(const struct vs_fail_options *o)
{
	double p = o ? o->probability : 0;

	if (vs_fail_check(o))
		return -EINVAL;
	__atomic_store_n(&vs__fail_kinds, 0, __ATOMIC_RELAXED);
	memset(&fail, 0, sizeof(fail));
#if VS_VCPU
	/* A vCPU dropped inside a nofail section (an explored schedule
	 * abandoned there) must not keep it raised for the next run. */
	memset(nofail_, 0, sizeof(nofail_));
#endif
	if (!o || !o->kinds)
		return 0;
	if (o->cache)
		strcpy(fail.cache, o->cache);
	fail.nth = o->nth;
	/* p of 2^64 draws; 1 is every one (the nearest double below 2^64). */
	fail.threshold = p >= 1 ? UINT64_MAX : (uint64_t)(p * 18446744073709551616.0);
	fail.seed = o->seed;
	fail.times = o->times;
	/* Release: an allocator that sees the kinds sees the rest. */
	__atomic_store_n(&vs__fail_kinds, o->kinds, __ATOMIC_RELEASE);
	return 0;
}

unsigned long vs_fail_injected(void)
{
	return __atomic_load_n(&fail.injected, __ATOMIC_RELAXED);
}

unsigned long vs_fail_injected_here(void)
{
	return VS__THIS(injected_here_);
}

void vs__fail_nofail(int n)
{
	VS__THIS(nofail_) += n;
}

/*
 * *@v = the decimal number after "@key=", which @w must start with.
 * Return: 1 read; 0 not this key; -1 not a number (a sign, a space,
 * trailing bytes, out of range).
 */
static int word_num(const char *w, const char *key, int real, void *v)
{
	size_t n = strlen(key);
	const char *s = w + n + 1;
	char *end;

	if (strncmp(w, key, n) || w[n] != '=')
		return 0;
	if (!isdigit((unsigned char)*s) && !(real && *s == '.'))
		return -1;
	errno = 0;
	if (real)
		*(double *)v = strtod(s, &end);
	else
		*(uint64_t *)v = strtoull(s, &end, 10);
	if (errno || *end || (!real && *(uint64_t *)v > ULONG_MAX))
		return -1;
	return 1;
}

/*
 * vs_fail_parse(), and *@bad the word it refused: NULL for no kind or
 * options vs_fail_check() refuses, "" for an empty word.
 */
static int fail_parse(char *s, struct vs_fail_options *o, const char **bad)
{
	uint64_t nth = 0, seed = 0, times = 0;
	char *w, *save = NULL;
	int r = 0;

	*bad = "";
	memset(o, 0, sizeof(*o));
	if (!*s || *s == ',' || strstr(s, ",,") || s[strlen(s) - 1] == ',')
		return -EINVAL;	/* an empty word */
	for (w = strtok_r(s, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		*bad = w;
		if (!strcmp(w, "slab"))
			o->kinds |= VS_FAIL_SLAB;
		else if (!strcmp(w, "page"))
			o->kinds |= VS_FAIL_PAGE;
		else if (!strncmp(w, "cache=", 6) && w[6])
			o->cache = w + 6;
		else if (!(r = word_num(w, "nth", 0, &nth)) &&
			 !(r = word_num(w, "p", 1, &o->probability)) &&
			 !(r = word_num(w, "seed", 0, &seed)) &&
			 !(r = word_num(w, "times", 0, &times)))
			return -EINVAL;
		if (r < 0)
			return -EINVAL;
	}
	*bad = NULL;
	o->nth = (unsigned long)nth;
	o->seed = seed;
	o->times = (unsigned long)times;
	return o->kinds ? 0 : -EINVAL;
}

int vs_fail_parse(char *s, struct vs_fail_options *o)
{
	const char *bad;

	if (!s || !o)
		return -EINVAL;
	return fail_parse(s, o, &bad);
}

/* VMSIM_FAIL, read once before main(); a bad one ends the process,
 * naming the word it could not take. */
__attribute__((constructor)) static void fail_init(void)
{
	const char *e = getenv("VMSIM_FAIL"), *bad = NULL;
	struct vs_fail_options o;
	char buf[256], why[300];

	if (!e || !*e)
		return;
	snprintf(buf, sizeof(buf), "%s", e);
	if (strlen(e) >= sizeof(buf))
		snprintf(why, sizeof(why), "longer than %zu bytes",
			 sizeof(buf) - 1);
	else if (fail_parse(buf, &o, &bad) && !bad)
		snprintf(why, sizeof(why), "no kind (slab or page)");
	else if (bad && !*bad)
		snprintf(why, sizeof(why), "an empty word");
	else if (bad)
		snprintf(why, sizeof(why), "bad word '%s'", bad);
	else if (vs_fail_check(&o))
		snprintf(why, sizeof(why), "it needs one of nth=N and p=P "
			 "(p within 0 and 1), and cache= only with slab");
	else if (!vs_fail_set(&o))
		return;
	else
		snprintf(why, sizeof(why), "refused by vs_fail_set()");
	fprintf(stderr, "vmsim: VMSIM_FAIL='%s': %s; the words are "
		"KIND[,KIND][,nth=N | ,p=P][,seed=S][,times=T][,cache=NAME] "
		"with KIND slab or page (vmsim/fail.h)\n", e, why);
	exit(2);
}
