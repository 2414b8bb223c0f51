/*
 * fieldmap.h - identifiers of the field map's entries, so decoders read each
 * field through its descriptor (offset, width, kind) instead of repeating
 * offsets in code.  The order here is the order of the table in fieldmap.c.
 */
#ifndef NBG_FIELDMAP_H
#define NBG_FIELDMAP_H

#include <stdint.h>

#include "nbg/nbg.h"

enum nbg_fid {
	/* v2 nbg_format_header_t */
	F_HDR_MAGIC, F_HDR_VERSION, F_HDR_TARGET, F_HDR_CRC_SUM, F_HDR_SIZE_LOW, F_HDR_SIZE_HIGH,
	F_HDR_SUB_OFFSET, F_HDR_SUB_SIZE, F_HDR_SUB_COUNT, F_HDR_CLASS, F_HDR_CLASS_RESERVED,
	F_HDR_RESERVED2, F_HDR_RESERVED3,
	/* v2 nbg_sub_header_t */
	F_SUB_SH_OFFSET, F_SUB_SH_SIZE, F_SUB_SH_COUNT,
	/* v2 nbg_section_header_t */
	F_SEC_TYPE, F_SEC_OFFSET_LOW, F_SEC_OFFSET_HIGH, F_SEC_SIZE_LOW, F_SEC_SIZE_HIGH,
	F_SEC_ADDR_LOW, F_SEC_ADDR_HIGH, F_SEC_ALIGN, F_SEC_ENTSIZE, F_SEC_RESERVED1,
	F_SEC_RESERVED2,
	/* v2 nbg_section_input_output_t */
	F_IO_DIM_COUNT, F_IO_DIMS, F_IO_FORMAT, F_IO_TYPE, F_IO_QUANT_FORMAT, F_IO_QUANT_DATA,
	F_IO_NAME,
	/* v2 nbg_section_network_info_t */
	F_NI_NAME, F_NI_INPUT_COUNT, F_NI_OUTPUT_COUNT, F_NI_LAYER_COUNT, F_NI_ABS_OP_COUNT,
	F_NI_OP_COUNT, F_NI_CORE_COUNT, F_NI_ADDRESS_WIDTH, F_NI_ATTRIBUTE, F_NI_ATTR_PPU,
	F_NI_ATTR_NN_CMD, F_NI_ATTR_TP_CMD, F_NI_ATTR_DMA, F_NI_ATTR_RESERVED, F_NI_VSI_RESERVED,
	/* memory sections */
	F_MEM_POOL_LOW, F_MEM_POOL_HIGH, F_VIP_SRAM_SIZE, F_AXI_SRAM_SIZE,
	/* CHECKSUM record */
	F_CKS_TYPE, F_CKS_VALUE,
	/* DYNAIO_TABLE record */
	F_DYN_OFFSET, F_DYN_SIZE,
	/* v1 prefix */
	F_V1_MAGIC, F_V1_VERSION, F_V1_TARGET, F_V1_NAME, F_V1_LAYER_COUNT, F_V1_OP_COUNT,
	F_V1_INPUT_COUNT, F_V1_OUTPUT_COUNT,
	F_V1_FDB_WORD0, F_V1_FDB_NN_CMD, F_V1_FDB_PPU, F_V1_FDB_TP_CMD, F_V1_FDB_CORE_COUNT, F_V1_FDB_AXI_WIDTH,
	F_V1_FDB_NN_CORES, F_V1_FDB_TP_CORES, F_V1_FDB_CRC_SUM,
	F_V1_POOL_SIZE, F_V1_POOL_ALIGN, F_V1_POOL_BASE, F_V1_AXI_BASE, F_V1_AXI_SIZE,
	F_V1_VIP_BASE, F_V1_VIP_SIZE, F_V1_ENTRY_OFFSET, F_V1_ENTRY_SIZE,
	/* v1 I/O record */
	F_V1IO_DIM_COUNT, F_V1IO_DIMS, F_V1IO_FORMAT, F_V1IO_TYPE, F_V1IO_QUANT_FORMAT,
	F_V1IO_FIXED_POINT, F_V1IO_SCALE, F_V1IO_ZERO_POINT, F_V1IO_NAME,
	/* v1 patch record (only the words the stride rule of 0x10010-0x10013 reads) */
	F_V1PATCH_TYPE, F_V1PATCH_SOURCE_TYPE, F_V1PATCH_HIGH_WORDS,
	/* graph records (lib/analysis/graph/graph_decode.c): LAYER, OPERATIONS, PATCH, SH, SW,
	 * HWINITOPERATIONS, PPU_PARAM, and the (offset, size) table entry */
	F_LAYER_NAME, F_LAYER_NODE_ID, F_LAYER_OP_COUNT, F_LAYER_UID,
	F_OP_TYPE, F_OP_INDEX, F_OP_LAYER_ID, F_OP_STATE_ID, F_OP_PATCH_INDEX, F_OP_PATCH_COUNT,
	F_OP_PREEMPT_WORD, F_OP_PREEMPT, F_OP_ABS_SHARE_ID, F_OP_ABS_OP_ID,
	F_PATCH_TYPE, F_PATCH_DEST_OFFSET, F_PATCH_SOURCE_TYPE, F_PATCH_INDEX, F_PATCH_SRC_OFFSET,
	F_PATCH_TRANSFORMED, F_PATCH_NAME, F_PATCH_DEST_OFFSET_H, F_PATCH_SRC_OFFSET_H,
	F_PATCH_MASK_H,
	F_SH_INSTR_INDEX, F_SH_PPU_PARAM_INDEX,
	F_SW_TYPE, F_SW_NAME,
	F_HWI_STATE_ID, F_HWI_PATCH_INDEX, F_HWI_PATCH_COUNT,
	F_PPU_GLOBAL_OFFSET_X, F_PPU_GLOBAL_OFFSET_Y, F_PPU_GLOBAL_OFFSET_Z,
	F_PPU_GLOBAL_SCALE_X, F_PPU_GLOBAL_SCALE_Y, F_PPU_GLOBAL_SCALE_Z,
	F_PPU_GROUP_SIZE_X, F_PPU_GROUP_SIZE_Y, F_PPU_GROUP_SIZE_Z,
	F_PPU_GROUP_COUNT_X, F_PPU_GROUP_COUNT_Y, F_PPU_GROUP_COUNT_Z,
	F_TAB_OFFSET, F_TAB_SIZE,
	F__COUNT
};

/* The descriptor of one field. */
const nbg_field *nbg_fid_desc(enum nbg_fid id) __attribute__((visibility("hidden")));
/* Reads a scalar field (U32, I32 as bits, BITS, LO, HI, U8) at `base` + its offset. */
uint32_t nbg_fid_u32(const uint8_t *base, enum nbg_fid id) __attribute__((visibility("hidden")));
/* Same, with a byte offset added to the descriptor's (for v1 records whose
 * position of later fields depends on the dimension count). */
uint32_t nbg_fid_u32_at(const uint8_t *base, enum nbg_fid id, uint32_t shift)
	__attribute__((visibility("hidden")));

#endif
