/* SPDX-License-Identifier: MIT */
/*
 * vm/asan.h - poison memory the model owns but nobody may touch (free
 * page frames, free cached objects), so that AddressSanitizer names an
 * access to it.  No-ops in a build without ASan.  Private to vm/.
 */
#ifndef VS_VM_ASAN_H
#define VS_VM_ASAN_H

#if defined(__SANITIZE_ADDRESS__)
#define VS__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VS__ASAN 1
#endif
#endif

#ifdef VS__ASAN
#include <sanitizer/asan_interface.h>
#define vs__poison(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define vs__unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define vs__poison(p, n) ((void)(p), (void)(n))
#define vs__unpoison(p, n) ((void)(p), (void)(n))
#endif

#endif /* VS_VM_ASAN_H */
