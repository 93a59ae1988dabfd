/* SPDX-License-Identifier: MIT */
#include <vmsim/error.h>


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
