/*
 * memory_internal.h - the constants of the memory analysis (their meaning and
 * source: memory_rules.c, doc/memory.md).  Private to libnbg.
 */
#ifndef NBG_MEMORY_INTERNAL_H
#define NBG_MEMORY_INTERNAL_H

#include <stdint.h>

#include "common/internal.h"
#include "nbg/memory.h"

#define NBG_MEM_BUFFER_ALIGN 64u
#define NBG_MEM_PPU_ALIGN 256u
#define NBG_MEM_TOTAL_ALIGN 256u
#define NBG_MEM_HEAP_RESERVE_BYTES 20480u
#define NBG_MEM_LAYER_RECORD 76u
#define NBG_MEM_OPERATION_RECORD 36u
#define NBG_MEM_PATCH_RECORD 48u
#define NBG_MEM_IO_RECORD 112u
#define NBG_MEM_SH_RECORD 8u
#define NBG_MEM_HW_INIT_RECORD 12u
#define NBG_MEM_ALLOC_BASE 93800u
#define NBG_MEM_ALLOC_PER_IO 176u
#define NBG_MEM_ALLOC_PER_IO_PATCH 16u

/* Patch record types (nbg_graph_patch.type). */
#define NBG_MEM_PATCH_STATE 0u
#define NBG_MEM_PATCH_COMMAND 1u

/* Whether a MISC_DYNA_INPUT or MISC_DYNA_OUTPUT patch inside an operation's
 * range makes the entry it names a dynamic input or output (by its source),
 * given the layout and the patch type: the table in memory_rules.c. */
NBG_INTERNAL int nbg_mem_dynamic_patch_counted(nbg_mem_layout layout, uint32_t patch_type);

/* Conflicts listed one by one; more are counted, not listed. */
#define NBG_MEM_MAX_CONFLICTS 1000u

#endif
