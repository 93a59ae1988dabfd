/* SPDX-License-Identifier: MIT */
/*
 * fault/internal.h - what the files of fault/ share: the layers below,
 * with their private parts (vm/internal.h's accounting rule, the
 * planted bugs of sync/internal.h), and the fault's building blocks
 * (vmsim/memory.h).
 */
#ifndef VS_FAULT_INTERNAL_H
#define VS_FAULT_INTERNAL_H

#include <stdint.h>

#include <vmsim/fault.h>
#include <vmsim/memory.h>
#include <vmsim/thread.h>

#include "../sync/internal.h"
#include "../vm/internal.h"

#endif /* VS_FAULT_INTERNAL_H */
