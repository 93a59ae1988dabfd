/* SPDX-License-Identifier: MIT */
/*
 * tools/common/bench_kernel.h - --kernel VERSION, the one option that
 * says which kernel the model follows (vmsim/kernel.h), read alike by
 * every tool that makes an address space.  Header-only: the tools on
 * the native library and those on the vCPU library both include it.
 */
#ifndef VS_TOOLS_BENCH_KERNEL_H
#define VS_TOOLS_BENCH_KERNEL_H

#include <vmsim/kernel.h>

#include "bench_opts.h"

/* The help text of --kernel, the same in every tool. */
#define BENCH_KERNEL_HELP "the kernel the model follows: 6.18 (default),\n" \
	"6.4, 3.18, or a kernel profile's path"

/*
 * bench_arg_kernel - @arg, once it names a kernel profile that loads;
 * else a usage error that says why ("--kernel: no kernel '2.6' ...").
 */
static inline const char *bench_arg_kernel(const char *arg)
{
	struct vs_kernel k;
	char err[200];

	if (vs_kernel_load(&k, arg, err, sizeof(err)))
		bench_usage_error("--kernel: %s", err);
	return arg;
}

#endif /* VS_TOOLS_BENCH_KERNEL_H */
