/* SPDX-License-Identifier: MIT */
/*
 * vm/asan.h - poison memory the model owns but nobody may touch (free
 * page frames, free cached objects), so that AddressSanitizer names an
 * access to it.  No-ops in a build without ASan.  Private to vm/.
 *
 * vs__poison_obj() and vs__unpoison_obj() do the same for an object
 * cache's objects and, in the vCPU build, tell the engine too
 * (vs_vcpu_poison(): a machine made with VS_MACHINE_CHECK_FREED fails
 * at an event on a freed object; vs_vcpu_unpoison(): allocated, for
 * the relaxed memory model); vs__forget_obj() gives a chunk back to
 * the heap (vs_vcpu_forget()).  Page frames are not: their bytes are
 * copied, never touched through the seams.
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

#if VS_VCPU
#include <vmsim/vcpu_annotate.h>
#define vs__poison_obj(p, n) (vs__poison((p), (n)), vs_vcpu_poison((p), (n)))
#define vs__unpoison_obj(p, n) \
	(vs__unpoison((p), (n)), vs_vcpu_unpoison((p), (n)))
#define vs__forget_obj(p, n) \
	(vs__unpoison((p), (n)), vs_vcpu_forget((p), (n)))
#else
#define vs__poison_obj(p, n) vs__poison((p), (n))
#define vs__unpoison_obj(p, n) vs__unpoison((p), (n))
#define vs__forget_obj(p, n) vs__unpoison((p), (n))
#endif

#endif /* VS_VM_ASAN_H */
