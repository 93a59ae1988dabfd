/* SPDX-License-Identifier: MIT */
/*
 * sync/error.c - what an error is called (vmsim/error.h), and the end
 * of the library on an impossible one (vs__die()).
 */
#include <vmsim/error.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* |err| without overflow: INT_MIN is no errno and maps to "unknown". */
static unsigned int code(int err)
{
	return err < 0 ? 0u - (unsigned int)err : (unsigned int)err;
}

const char *vs_strerror(int err)
{
	switch (code(err)) {
	case 0:
		return "success";
#define VS__STRERROR(name, msg) \
	case name:              \
		return msg;
		VS_ERRNO_MAP(VS__STRERROR)
#undef VS__STRERROR
	default:
		return "unknown error";
	}
}

const char *vs_err_name(int err)
{
	switch (code(err)) {
	case 0:
		return "OK";
#define VS__ERR_NAME(name, msg) \
	case name:              \
		return #name;
		VS_ERRNO_MAP(VS__ERR_NAME)
#undef VS__ERR_NAME
	default:
		return "EUNKNOWN";
	}
}

_Noreturn void vs__die(const char *what, int err)
{
	fprintf(stderr, "vmsim: %s: %s\n", what, strerror(err));
	abort();
}
