/* SPDX-License-Identifier: MIT */
/*
 * vmsim/error.h - error codes.
 *
 * Every vmsim function that can fail returns 0 (or a non-negative value)
 * on success and a negative errno on failure.  VS_ERRNO_MAP lists the
 * codes vmsim returns, with the message vs_strerror() gives for each.
 */
#ifndef VMSIM_ERROR_H
#define VMSIM_ERROR_H

#include <errno.h>

#include "common.h"

/**
 * VS_ERRNO_MAP - the errno codes vmsim returns, as an X-macro
 * @XX: a macro of two arguments, called once per code as
 *      XX(ENAME, "message")
 */
#define VS_ERRNO_MAP(XX)                                                 \
	XX(EINVAL, "invalid argument")                                   \
	XX(ENOMEM, "out of memory")                                      \
	XX(EEXIST, "already exists")                                     \
	XX(ENOENT, "no such entry")                                      \
	XX(EFAULT, "bad address (the model raised SIGSEGV)")             \
	XX(EBUSY, "resource busy")                                       \
	XX(EAGAIN, "try again")                                          \
	XX(EINTR, "interrupted")                                         \
	XX(ETIMEDOUT, "timed out")                                       \
	XX(EPERM, "operation not permitted (userfaultfd: set "           \
		  "vm.unprivileged_userfaultfd=1, make /dev/userfaultfd " \
		  "readable, or run with CAP_SYS_PTRACE)")                \
	XX(ENOSYS, "system call missing from this kernel (userfaultfd "  \
		   "needs Linux >= 5.11 with write-protect support)")     \
	XX(EOVERFLOW, "value too large")                                 \
	XX(ERANGE, "result out of range")                                \
	XX(EDEADLK, "resource deadlock would occur")                     \
	XX(EOPNOTSUPP, "operation not supported (by this kernel version: " \
		       "vmsim/kernel.h)")                                 \
	XX(ECANCELED, "the run failed: a check, an assertion or a "      \
		      "deadlock on the virtual CPUs (the report says which)") \
	XX(EIO, "input/output error (a write to the output failed)")    \
	XX(EILSEQ, "malformed schedule (a replay line as vmsim "         \
		   "prints it is expected)")                             \
	XX(ESTALE, "the run does not repeat: the schedule no longer "    \
		   "matches it (the scenario or vmsim changed)")         \
	XX(E2BIG, "too long (a schedule, or a list of a profile)")       \
	XX(ENOSPC, "no room left (a fixed-size table is full)")          \
	XX(ESRCH, "no such process (the monitored one exited)")          \
	XX(EFBIG, "file too large")                                      \
	XX(EACCES, "permission denied (a protection the file's open "    \
		   "mode forbids)")                                      \
	XX(EBADF, "bad file (not open, or not for this use)")

/**
 * vs_strerror - describe an error code
 * @err: a negative errno as returned by vmsim (a positive one is accepted)
 *
 * Context: any.
 * Return: a static string; never NULL.
 */
VS_EXTERN const char *vs_strerror(int err);

/**
 * vs_err_name - the symbolic name of an error code ("EINVAL")
 * @err: a negative errno as returned by vmsim (a positive one is accepted)
 *
 * Context: any.
 * Return: a static string; "EUNKNOWN" for a code outside VS_ERRNO_MAP.
 */
VS_EXTERN const char *vs_err_name(int err);

#endif /* VMSIM_ERROR_H */
