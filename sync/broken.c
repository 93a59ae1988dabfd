/* SPDX-License-Identifier: MIT */
/*
 * sync/broken.c - the planted bug a -DVS_BROKEN=env build runs with:
 * the one the environment variable VS_BROKEN names (sync/internal.h).
 * Compiled into that build only.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

static const char *const names[] = {
	"none",
#define VS_BUG(name, suite, build, vcpu, what) #name,
#include "broken.def"
#undef VS_BUG
};

static int broken = VS__BROKEN_none;

/* @a equals @b, reading '-' in @a as '_'. */
static int same(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (*a != *b && !(*a == '-' && *b == '_'))
			return 0;
	return *a == *b;
}

/* Read once, before main(): no thread reads it while it is written. */
__attribute__((constructor)) static void broken_init(void)
{
	const char *e = getenv("VS_BROKEN");
	size_t i;

	if (!e || !*e)
		return;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (same(e, names[i])) {
			broken = (int)i;
			return;
		}
	fprintf(stderr, "vmsim: VS_BROKEN: '%s' is no planted bug of "
		"sync/broken.def\n", e);
	abort();
}

int vs__broken_env(void)
{
	return broken;
}
