/* SPDX-License-Identifier: MIT */
/* vmsim/common.h - export marker shared by every public header. */
#ifndef VMSIM_COMMON_H
#define VMSIM_COMMON_H

#include <errno.h>

#if defined(__GNUC__)
/** VS_EXTERN - marks a declaration as part of libvmsim's ABI */
#define VS_EXTERN __attribute__((visibility("default")))
/** VS_TLS_IE - the initial-exec TLS model, for libvmsim's own TLS */
#define VS_TLS_IE __attribute__((tls_model("initial-exec")))
#else
#define VS_EXTERN
#define VS_TLS_IE
#endif

/**
 * VS_ARRAY_SIZE - the number of elements of array @a
 * @a: an array (not a pointer)
 */
#define VS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif /* VMSIM_COMMON_H */
