/* SPDX-License-Identifier: MIT */
/*
 * sync/broken.h - the planted protocol bugs of broken.def, as C sees
 * them.  Private to the library and its tests.
 *
 * A build configured with -DVS_BROKEN=name (with '-' for '_') compiles
 * one of them in, and its suite must then fail (the teeth-NAME tests).
 * With -DVS_BROKEN=env every one is compiled in, off unless the
 * environment variable VS_BROKEN names it (vs__broken_env()): the teeth
 * tests share that one build.  CMake passes VS_BROKEN_ID on the command
 * line of such a build only; in a normal build every VS_BROKEN(x) is a
 * constant 0.
 */
#ifndef VS_SYNC_BROKEN_H
#define VS_SYNC_BROKEN_H

enum {
	VS__BROKEN_none,
#define VS_BUG(name, suite, build, vcpu, what) VS__BROKEN_##name,
#include "broken.def"
#undef VS_BUG
};
#ifdef VS_BROKEN_ID
#define VS_BROKEN(name) (VS_BROKEN_ID == VS__BROKEN_##name)
#else
#define VS_BROKEN(name) 0
#endif

/* The bug the environment variable VS_BROKEN names, read once at load
 * (VS__BROKEN_none when unset); a name that is no bug aborts, saying
 * so.  Context: any. */
int vs__broken_env(void);

#endif /* VS_SYNC_BROKEN_H */
