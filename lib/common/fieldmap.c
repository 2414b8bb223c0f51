/*
 * fieldmap.c - the NBG field map as data.  One descriptor per field drives
 * the decoders (through nbg_fid_u32), the JSON report and `nbg fields`.
 * Offsets are relative to the structure named in the first column; evidence
 * codes are those of the field map's confidence ledger (doc/field-map.md).
 */
#include <stddef.h>

#include "common/internal.h"

#define W(st, off, width, pub, key, ev, what) \
	{ st, off, width, 0, 0, NBG_FIELD_U32, pub, key, NULL, ev, what }
#define K(st, off, width, kind, pub, key, ev, what) \
	{ st, off, width, 0, 0, kind, pub, key, NULL, ev, what }
#define B(st, off, lo, n, pub, key, ev, what) \
	{ st, off, 4, lo, n, NBG_FIELD_BITS, pub, key, NULL, ev, what }

static const nbg_field fields[F__COUNT] = {
	/* v2 nbg_format_header_t, 48 bytes at file offset 0 */
	[F_HDR_MAGIC] = K("header", 0x00, 4, NBG_FIELD_ASCII, "magic[4]", "magic", "W+P+C",
			  "ASCII VPMN"),
	[F_HDR_VERSION] = W("header", 0x04, 4, "version", "version", "W+P+C",
			    "little-endian NBG version; 0x00020000 for v2"),
	[F_HDR_TARGET] = { "header", 0x08, 4, 0, 0, NBG_FIELD_U32, "target", "target", "product",
			   "W+P+C+L", "hardware target / CID; selects the runtime product" },
	[F_HDR_CRC_SUM] = W("header", 0x0c, 4, "crc_sum", "crc32", "P+S+C+D",
			    "CRC-32 of section payloads in directory order"),
	[F_HDR_SIZE_LOW] = K("header", 0x10, 4, NBG_FIELD_LO, "total_size_low",
			     "declared_file_size", "P+C", "low half of the declared file size"),
	[F_HDR_SIZE_HIGH] = K("header", 0x14, 4, NBG_FIELD_HI, "total_size_high",
			      "declared_file_size", "P+C", "high half of the declared file size"),
	[F_HDR_SUB_OFFSET] = W("header", 0x18, 4, "sub_header_offset", "sub_header_offset",
			       "W+P+C", "file offset of the sub-header"),
	[F_HDR_SUB_SIZE] = W("header", 0x1c, 4, "sub_header_size", "sub_header_size", "P+C",
			     "size of one sub-header (12)"),
	[F_HDR_SUB_COUNT] = W("header", 0x20, 4, "sub_header_count", "sub_header_count", "P+C",
			      "number of sub-headers (graphs); exactly 1"),
	[F_HDR_CLASS] = B("header", 0x24, 0, 1, "class", "class", "W+P+C", "class bit"),
	[F_HDR_CLASS_RESERVED] = B("header", 0x24, 1, 31, "reserved1",
				   "reserved.class_word_reserved_bits", "P+C",
				   "bits 1-31 of the class word"),
	[F_HDR_RESERVED2] = W("header", 0x28, 4, "reserved2", "reserved.reserved2", "P+C",
			      "reserved word"),
	[F_HDR_RESERVED3] = W("header", 0x2c, 4, "reserved3", "reserved.reserved3", "P+C",
			      "reserved word"),

	/* v2 nbg_sub_header_t, 12 bytes */
	[F_SUB_SH_OFFSET] = W("sub_header", 0x00, 4, "sh_offset", "section_headers_offset",
			      "W+P+C", "file offset of the section directory"),
	[F_SUB_SH_SIZE] = W("sub_header", 0x04, 4, "sh_size", "section_header_size", "W+P+C",
			    "size of one directory record (44)"),
	[F_SUB_SH_COUNT] = W("sub_header", 0x08, 4, "sh_count", "section_header_count", "W+P+C",
			     "number of directory records"),

	/* v2 nbg_section_header_t, 44 bytes */
	[F_SEC_TYPE] = W("section_header", 0x00, 4, "sd_type", "type", "W+P+C",
			 "section type (public enum 0-40)"),
	[F_SEC_OFFSET_LOW] = K("section_header", 0x04, 4, NBG_FIELD_LO, "sd_offset_low", "offset",
			       "W+P+C", "low half of the payload offset"),
	[F_SEC_OFFSET_HIGH] = K("section_header", 0x08, 4, NBG_FIELD_HI, "sd_offset_high",
				"offset", "P+C", "high half of the payload offset"),
	[F_SEC_SIZE_LOW] = K("section_header", 0x0c, 4, NBG_FIELD_LO, "sd_size_low", "size",
			     "W+P+C", "low half of the payload size"),
	[F_SEC_SIZE_HIGH] = K("section_header", 0x10, 4, NBG_FIELD_HI, "sd_size_high", "size",
			      "P+C", "high half of the payload size"),
	[F_SEC_ADDR_LOW] = K("section_header", 0x14, 4, NBG_FIELD_LO, "sd_addr_low",
			     "load_address", "P+C", "low half of the load address"),
	[F_SEC_ADDR_HIGH] = K("section_header", 0x18, 4, NBG_FIELD_HI, "sd_addr_high",
			      "load_address", "P+C", "high half of the load address"),
	[F_SEC_ALIGN] = W("section_header", 0x1c, 4, "sd_alignsize", "alignment", "P+C",
			  "payload alignment (0 = none)"),
	[F_SEC_ENTSIZE] = { "section_header", 0x20, 4, 0, 0, NBG_FIELD_U32, "sd_entsize",
			    "entry_size", "stride", "W+P+C", "size of one record in the payload" },
	[F_SEC_RESERVED1] = W("section_header", 0x24, 4, "reserved1", "reserved_words[0]", "P+C",
			      "reserved word"),
	[F_SEC_RESERVED2] = W("section_header", 0x28, 4, "reserved2", "reserved_words[1]", "P+C",
			      "reserved word"),

	/* v2 nbg_section_input_output_t, 112 bytes */
	[F_IO_DIM_COUNT] = W("io", 0x00, 4, "dim_count", "dimension_count", "W+P+C+L",
			     "number of dimensions, 1-6"),
	[F_IO_DIMS] = K("io", 0x04, 24, NBG_FIELD_U32_ARRAY, "dim_size[6]", "dimensions",
			"W+P+C+L", "dimensions, innermost first"),
	[F_IO_FORMAT] = W("io", 0x1c, 4, "data_format", "data_format", "W+P+C+L",
			  "buffer format (nbg_buffer_format_e)"),
	[F_IO_TYPE] = W("io", 0x20, 4, "data_type", "data_type", "W+P+C", "buffer type"),
	[F_IO_QUANT_FORMAT] = W("io", 0x24, 4, "quant_format", "quantization.format", "W+P+C",
				"0 none, 1 dynamic fixed point, 2 affine asymmetric"),
	[F_IO_QUANT_DATA] = K("io", 0x28, 8, NBG_FIELD_U32_ARRAY, "quant_data",
			      "quantization.raw_words", "W+P+C",
			      "union: dfp position, or affine scale (f32) + zero point"),
	[F_IO_NAME] = K("io", 0x30, 64, NBG_FIELD_ASCII, "name", "name", "W+P+C+L",
			"tensor name, NUL padded"),

	/* v2 nbg_section_network_info_t, 220 bytes */
	[F_NI_NAME] = K("network_info", 0x00, 64, NBG_FIELD_ASCII, "name", "network_info.name",
			"P+C", "network name"),
	[F_NI_INPUT_COUNT] = W("network_info", 0x40, 4, "input_count", "input_count", "P+C",
			       "number of inputs; checked against INPUT records"),
	[F_NI_OUTPUT_COUNT] = W("network_info", 0x44, 4, "output_count", "output_count", "P+C",
				"number of outputs; checked against OUTPUT records"),
	[F_NI_LAYER_COUNT] = W("network_info", 0x48, 4, "layer_count", "layer_count", "P+C",
			       "number of layers"),
	[F_NI_ABS_OP_COUNT] = W("network_info", 0x4c, 4, "abs_op_count",
				"absolute_operation_count", "P+C", "absolute operation count"),
	[F_NI_OP_COUNT] = W("network_info", 0x50, 4, "operation_count", "operation_count", "P+C",
			    "run operation count (OPERATIONS entries + 3 in every file seen)"),
	[F_NI_CORE_COUNT] = W("network_info", 0x54, 4, "core_count", "core_count", "P+C",
			      "NPU core count"),
	[F_NI_ADDRESS_WIDTH] = W("network_info", 0x58, 4, "address_width", "address_width", "P+C",
				 "address width in bits"),
	[F_NI_ATTRIBUTE] = W("network_info", 0x5c, 4, "attribute", "attribute", "P+C",
			     "attribute bitfield, raw"),
	[F_NI_ATTR_PPU] = B("network_info", 0x5c, 0, 1, "attribute.change_ppu_param",
			    "attribute_bits.change_ppu_param", "P+C", "change PPU parameter"),
	[F_NI_ATTR_NN_CMD] = B("network_info", 0x5c, 1, 2, "attribute.nn_cmd_size",
			       "attribute_bits.nn_command_size_code", "P+C",
			       "NN command size code (0: 128 B, 1: 192 B)"),
	[F_NI_ATTR_TP_CMD] = B("network_info", 0x5c, 3, 2, "attribute.tp_cmd_size",
			       "attribute_bits.tp_command_size_code", "P+C",
			       "TP command size code (0: 128 B, 1: 192 B)"),
	[F_NI_ATTR_DMA] = B("network_info", 0x5c, 5, 2, "attribute.support_dma",
			    "attribute_bits.dma_support_code", "P+C", "DMA support code"),
	[F_NI_ATTR_RESERVED] = B("network_info", 0x5c, 7, 25, "attribute.reserved",
				 "attribute_bits.reserved", "P+C", "reserved bits"),
	[F_NI_VSI_RESERVED] = K("network_info", 0x60, 124, NBG_FIELD_OPAQUE, "vsi_reserved[31]",
				"vsi_reserved", "P+C",
				"vendor-reserved: non-zero word count and SHA-256 only"),

	/* memory sections */
	[F_MEM_POOL_LOW] = K("memory_pool", 0x00, 4, NBG_FIELD_LO, "size_low", "memory_pool_bytes",
			     "P+C", "memory pool bytes, low half"),
	[F_MEM_POOL_HIGH] = K("memory_pool", 0x04, 4, NBG_FIELD_HI, "size_high",
			      "memory_pool_bytes", "P+C", "memory pool bytes, high half"),
	[F_VIP_SRAM_SIZE] = W("vip_sram", 0x00, 4, "size", "vip_sram_bytes", "P+C",
			      "VIP SRAM bytes required"),
	[F_AXI_SRAM_SIZE] = W("axi_sram", 0x00, 4, "size", "axi_sram_bytes", "P",
			      "AXI SRAM bytes required (absent in every corpus)"),

	/* CHECKSUM record, 8 bytes */
	[F_CKS_TYPE] = W("checksum_record", 0x00, 4, "sd_type", "section_type", "P+S+C",
			 "section type the checksum covers"),
	[F_CKS_VALUE] = W("checksum_record", 0x04, 4, "checksum_value", "stored", "P+S+C",
			  "CRC-32 of that section's exact bytes"),

	/* DYNAIO_TABLE record, 8 bytes */
	[F_DYN_OFFSET] = W("dynaio_entry", 0x00, 4, "offset", "offset", "P+S+C+D",
			   "region-relative offset, 64-aligned"),
	[F_DYN_SIZE] = W("dynaio_entry", 0x04, 4, "size", "size", "P+S+C+D", "payload size"),

	/* v1 prefix (file offsets) */
	[F_V1_MAGIC] = K("v1_header", 0x00, 4, NBG_FIELD_ASCII, "magic", "magic", "P+C",
			 "ASCII VPMN"),
	[F_V1_VERSION] = W("v1_header", 0x04, 4, "version", "version", "P+C", "0x0001xxxx"),
	[F_V1_TARGET] = { "v1_header", 0x08, 4, 0, 0, NBG_FIELD_U32, "target", "target", "product",
			  "P+C", "hardware target / CID" },
	[F_V1_NAME] = K("v1_header", 0x0c, 64, NBG_FIELD_ASCII, "network_name", "network_name",
			"P+C", "network name, NUL padded"),
	[F_V1_LAYER_COUNT] = W("v1_header", 0x4c, 4, "layer_count", "layer_count", "P+C",
			       "number of layer records"),
	[F_V1_OP_COUNT] = W("v1_header", 0x50, 4, "operation_count", "operation_count", "P+C",
			    "number of operation records"),
	[F_V1_INPUT_COUNT] = W("v1_header", 0x54, 4, "input_count", "input_count", "P+C",
			       "number of input records"),
	[F_V1_OUTPUT_COUNT] = W("v1_header", 0x58, 4, "output_count", "output_count", "P+C",
				"number of output records"),
	[F_V1_FDB_WORD0] = W("v1_feature_db", 0x00, 4, "feature word 0", "feature_db.word0", "P+C",
			     "feature bitfield"),
	[F_V1_FDB_NN_CMD] = B("v1_feature_db", 0x00, 2, 2, "nn_cmd_size",
			      "feature_db.nn_command_size_code", "P+C",
			      "NN command size code (0: 128 B, 1: 192 B)"),
	[F_V1_FDB_PPU] = B("v1_feature_db", 0x00, 4, 1, "change_ppu_param",
			   "feature_db.change_ppu_param", "P+C",
			   "the file supports changing PPU parameters"),
	[F_V1_FDB_TP_CMD] = B("v1_feature_db", 0x00, 5, 2, "tp_command_size",
			      "feature_db.tp_command_size_code", "C+I",
			      "TP command size code (0: 128 B, 1: 192 B)"),
	[F_V1_FDB_CORE_COUNT] = K("v1_feature_db", 0x08, 1, NBG_FIELD_U8, "core_count",
				  "feature_db.core_count", "P+C", "NPU core count"),
	[F_V1_FDB_AXI_WIDTH] = K("v1_feature_db", 0x0a, 1, NBG_FIELD_U8, "axi_bus_width",
				 "feature_db.axi_bus_width_index", "P+C", "AXI bus width index"),
	[F_V1_FDB_NN_CORES] = K("v1_feature_db", 0x0c, 1, NBG_FIELD_U8, "nn_core_count",
				"feature_db.nn_core_count", "P+C", "NN core count"),
	[F_V1_FDB_TP_CORES] = K("v1_feature_db", 0x0d, 1, NBG_FIELD_U8, "tp_core_count",
				"feature_db.tp_core_count", "P+C", "TP core count"),
	[F_V1_FDB_CRC_SUM] = W("v1_feature_db", 0x10, 4, "nbg_crc_sum", "nbg_crc_sum", "C",
			       "from 0x10016: zlib CRC-32, 0x1001e of the whole file with this "
			       "word zeroed, 0x10020 from the first section on; enforced for "
			       "those two (every file seen matches), else not checked"),
	[F_V1_POOL_SIZE] = W("v1_memory", 0x00, 4, "pool_size", "memory_pool.size", "P+C",
			     "memory pool bytes"),
	[F_V1_POOL_ALIGN] = W("v1_memory", 0x04, 4, "pool_alignment", "memory_pool.alignment",
			      "P+C", "memory pool alignment"),
	[F_V1_POOL_BASE] = W("v1_memory", 0x08, 4, "pool_base", "memory_pool.base", "P+C",
			     "memory pool base"),
	[F_V1_AXI_BASE] = W("v1_memory", 0x0c, 4, "axi_sram_base", "axi_sram.base", "P+C",
			    "AXI-SRAM base"),
	[F_V1_AXI_SIZE] = W("v1_memory", 0x10, 4, "axi_sram_size", "axi_sram.size", "P+C",
			    "AXI-SRAM bytes"),
	[F_V1_VIP_BASE] = W("v1_memory", 0x14, 4, "vip_sram_base", "vip_sram.base", "P+C",
			    "VIP-SRAM base (from 0x10008)"),
	[F_V1_VIP_SIZE] = W("v1_memory", 0x18, 4, "vip_sram_size", "vip_sram.size", "P+C",
			    "VIP-SRAM bytes (from 0x10008)"),
	[F_V1_ENTRY_OFFSET] = W("v1_entry", 0x00, 4, "offset", "offset", "P+C",
				"file offset of the table"),
	[F_V1_ENTRY_SIZE] = W("v1_entry", 0x04, 4, "size", "size", "P+C", "table size in bytes"),

	/* v1 I/O record, offsets for the 4-dimension layout; +8 after dims with 6 */
	[F_V1IO_DIM_COUNT] = W("v1_io", 0x00, 4, "dim_count", "dimension_count", "P+C",
			       "number of dimensions"),
	[F_V1IO_DIMS] = K("v1_io", 0x04, 16, NBG_FIELD_U32_ARRAY, "dims", "dimensions", "P+C",
			  "dimensions, innermost first (4, or 6 from 0x1000B)"),
	[F_V1IO_FORMAT] = W("v1_io", 0x14, 4, "data_format", "data_format", "P+C", "buffer format"),
	[F_V1IO_TYPE] = W("v1_io", 0x18, 4, "data_type", "data_type", "P+C", "buffer type"),
	[F_V1IO_QUANT_FORMAT] = W("v1_io", 0x1c, 4, "quant_format", "quantization.format", "P+C",
				  "quantization format"),
	[F_V1IO_FIXED_POINT] = K("v1_io", 0x20, 4, NBG_FIELD_I32, "fixed_point_pos",
				 "quantization.fixed_point_position", "P+C",
				 "dynamic fixed point position"),
	[F_V1IO_SCALE] = W("v1_io", 0x24, 4, "scale", "quantization.scale", "P+C",
			   "affine scale (f32)"),
	[F_V1IO_ZERO_POINT] = K("v1_io", 0x28, 4, NBG_FIELD_I32, "zero_point",
				"quantization.zero_point", "P+C", "affine zero point"),
	[F_V1IO_NAME] = K("v1_io", 0x2c, 64, NBG_FIELD_ASCII, "name", "name", "P+C",
			  "tensor name (from 0x10004)"),

	/* v1 patch record, 24 / 28 / 40 bytes; payload otherwise opaque */
	[F_V1PATCH_TYPE] = W("v1_patch", 0x00, 4, "type", "type", "P+C",
			     "patch type; 0 or 1 in every corpus record"),
	[F_V1PATCH_SOURCE_TYPE] = W("v1_patch", 0x08, 4, "source_type", "source_type", "P+C",
				    "patch source type; below 16 in every corpus record"),
	[F_V1PATCH_HIGH_WORDS] = K("v1_patch", 0x1c, 12, NBG_FIELD_U32_ARRAY,
				   "dest_offset_h, src_offset_h, mask_h", "high_words", "C",
				   "40-byte records only: zero in every corpus record"),

	/* LAYER record (nbg_section_layer_t; vx_binary_layers_info_s before uid):
	 * 72 bytes, 76 with uid (v1 from 0x10008, every v2 file) */
	[F_LAYER_NAME] = K("layer", 0x00, 64, NBG_FIELD_ASCII, "name", "name", "P+C",
			   "layer name, NUL padded (printable in every corpus file)"),
	[F_LAYER_NODE_ID] = W("layer", 0x40, 4, "node_id", "node_id", "P+C",
			      "graph node id (v1: equals the record index in every file)"),
	[F_LAYER_OP_COUNT] = W("layer", 0x44, 4, "operation_count", "operation_count", "P+C",
			       "layer operations; v2: distinct abs_op_id of its records"),
	[F_LAYER_UID] = W("layer", 0x48, 4, "uid", "uid", "P+C",
			  "layer uid (76-byte records only)"),

	/* OPERATIONS record (nbg_section_operation_t; vx_binary_operation_info_s):
	 * 24 bytes, 28 with the preempt word, 32 with abs_op_id */
	[F_OP_TYPE] = W("operation", 0x00, 4, "type", "type", "P+C",
			"engine: 1 SH, 2 NN, 3 TP, 4 SW, 5 SC, 6 SP, 7 NN_LUT, 8 NT, 0xFFFE END, "
			"0xFFFF INIT"),
	[F_OP_INDEX] = W("operation", 0x04, 4, "index", "index", "P+C+I",
			 "record index in its engine's section (SH, NN, TP, SW): inferred"),
	[F_OP_LAYER_ID] = W("operation", 0x08, 4, "layer_id", "layer_id", "P+C",
			    "index of the owning LAYER record (INIT/END: 0xFFFF or 0xFFFFFFFF)"),
	[F_OP_STATE_ID] = W("operation", 0x0c, 4, "state_id", "state_id", "P+C",
			    "entry in the load-state table (v1 before LOADSTATE_TABLE: LCDT)"),
	[F_OP_PATCH_INDEX] = W("operation", 0x10, 4, "patch_index", "patch_index", "P+C",
			       "first PATCH record (SW operations: LAYER_PARAM record)"),
	[F_OP_PATCH_COUNT] = W("operation", 0x14, 4, "patch_count", "patch_count", "P+C",
			       "number of PATCH records from patch_index"),
	[F_OP_PREEMPT_WORD] = W("operation", 0x18, 4, "preempt:4 | abs_share_id:28",
				"preempt_word", "P+C", "28/32-byte records; zero in every corpus file"),
	[F_OP_PREEMPT] = B("operation", 0x18, 0, 4, "preempt", "preempt", "P+C",
			   "preemption bits"),
	[F_OP_ABS_SHARE_ID] = B("operation", 0x18, 4, 28, "abs_share_id", "abs_share_id", "P",
				"coefficient sharing id between networks (from 0x0001001f)"),
	[F_OP_ABS_OP_ID] = W("operation", 0x1c, 4, "abs_op_id", "abs_op_id", "P+C",
			     "absolute operation index (32-byte records); < abs_op_count"),

	/* PATCH record (nbg_section_patch_table_t; vx_binary_patch_info_s):
	 * 24 bytes, 28 with name, 40 with the 40-bit high words */
	[F_PATCH_TYPE] = W("patch", 0x00, 4, "type", "type", "P+C",
			   "0 state stream, 1 command, 2 kernel"),
	[F_PATCH_DEST_OFFSET] = W("patch", 0x04, 4, "dest_offset", "dest_offset", "P+C",
				  "byte offset inside the operation's state or command"),
	[F_PATCH_SOURCE_TYPE] = W("patch", 0x08, 4, "source_type", "source_type", "P+C",
				  "0 command, 1 input, 2 output, 3 memory pool, 4 AXI-SRAM, 5-7 "
				  "misc dynamic, 8 VIP-SRAM, 9 kernel, 10 layer dump"),
	[F_PATCH_INDEX] = K("patch", 0x0c, 4, NBG_FIELD_I32, "index", "index", "P+C+I",
			    "source entry (input/output number; -1 none); others inferred"),
	[F_PATCH_SRC_OFFSET] = W("patch", 0x10, 4, "src_offset", "src_offset", "P+C",
				 "offset added to the source address (originalBaseAddress in 24-B)"),
	[F_PATCH_TRANSFORMED] = W("patch", 0x14, 4, "transformed", "transformed", "P+C",
				  "0 original, 1 right shift by 6"),
	[F_PATCH_NAME] = W("patch", 0x18, 4, "name", "name", "P+C",
			   "28/40-byte records; zero in every corpus record"),
	[F_PATCH_DEST_OFFSET_H] = W("patch", 0x1c, 4, "dest_offset_h", "dest_offset_h", "P+C",
				    "40-byte records: high bits of dest_offset"),
	[F_PATCH_SRC_OFFSET_H] = W("patch", 0x20, 4, "src_offset_h", "src_offset_h", "P+C",
				   "40-byte records: high bits of src_offset"),
	[F_PATCH_MASK_H] = W("patch", 0x24, 4, "mask_h", "mask_h", "P+C",
			     "40-byte records: high address mask"),

	/* SH record (nbg_section_sh_operation_t; vx_binary_sh_operation_info_s): 4 or 8 bytes */
	[F_SH_INSTR_INDEX] = W("sh_operation", 0x00, 4, "instr_index", "instr_index", "P+C",
			       "PPU_INSTR_TABLE entry (v1 without it: LCDT entry)"),
	[F_SH_PPU_PARAM_INDEX] = W("sh_operation", 0x04, 4, "ppu_param_index", "ppu_param_index",
				   "P+C", "8-byte records: PPU_PARAM record for changed parameters"),

	/* SW record (nbg_section_sw_operation_t): 4 bytes, 68 with name */
	[F_SW_TYPE] = W("sw_operation", 0x00, 4, "sw_peration_type", "sw_operation_type", "P",
			"CPU operation type (0 none, 1 RPN); absent in every corpus file"),
	[F_SW_NAME] = K("sw_operation", 0x04, 64, NBG_FIELD_ASCII, "name", "name", "P",
			"68-byte records: operation name"),

	/* HWINITOPERATIONS record (nbg_section_hw_init_operation_t), 12 bytes */
	[F_HWI_STATE_ID] = W("hw_init_operation", 0x00, 4, "state_id", "state_id", "P+C",
			     "entry in the load-state table"),
	[F_HWI_PATCH_INDEX] = W("hw_init_operation", 0x04, 4, "patch_index", "patch_index", "P+C",
				"first PATCH record"),
	[F_HWI_PATCH_COUNT] = W("hw_init_operation", 0x08, 4, "patch_count", "patch_count", "P+C",
				"number of PATCH records"),

	/* PPU_PARAM record (nbg_section_ppu_param_t), 48 bytes; absent in every corpus file */
	[F_PPU_GLOBAL_OFFSET_X] = W("ppu_param", 0x00, 4, "global_offset_x", "global_offset_x", "P",
				    "PPU global offset"),
	[F_PPU_GLOBAL_OFFSET_Y] = W("ppu_param", 0x04, 4, "global_offset_y", "global_offset_y", "P",
				    "PPU global offset"),
	[F_PPU_GLOBAL_OFFSET_Z] = W("ppu_param", 0x08, 4, "global_offset_z", "global_offset_z", "P",
				    "PPU global offset"),
	[F_PPU_GLOBAL_SCALE_X] = W("ppu_param", 0x0c, 4, "global_scale_x", "global_scale_x", "P",
				   "PPU global scale"),
	[F_PPU_GLOBAL_SCALE_Y] = W("ppu_param", 0x10, 4, "global_scale_y", "global_scale_y", "P",
				   "PPU global scale"),
	[F_PPU_GLOBAL_SCALE_Z] = W("ppu_param", 0x14, 4, "global_scale_z", "global_scale_z", "P",
				   "PPU global scale"),
	[F_PPU_GROUP_SIZE_X] = W("ppu_param", 0x18, 4, "group_size_x", "group_size_x", "P",
				 "PPU work-group size"),
	[F_PPU_GROUP_SIZE_Y] = W("ppu_param", 0x1c, 4, "group_size_y", "group_size_y", "P",
				 "PPU work-group size"),
	[F_PPU_GROUP_SIZE_Z] = W("ppu_param", 0x20, 4, "group_size_z", "group_size_z", "P",
				 "PPU work-group size"),
	[F_PPU_GROUP_COUNT_X] = W("ppu_param", 0x24, 4, "group_count_x", "group_count_x", "P",
				  "PPU work-group count"),
	[F_PPU_GROUP_COUNT_Y] = W("ppu_param", 0x28, 4, "group_count_y", "group_count_y", "P",
				  "PPU work-group count"),
	[F_PPU_GROUP_COUNT_Z] = W("ppu_param", 0x2c, 4, "group_count_z", "group_count_z", "P",
				  "PPU work-group count"),

	/* (offset, size) entry of COEF_DATA_TABLE, PPU_INSTR_TABLE, LOADSTATE_TABLE,
	 * ICDT and the v1 LCDT (nbg_section_entry_32bit_t) */
	[F_TAB_OFFSET] = W("table_entry", 0x00, 4, "offset", "offset", "P+C",
			   "offset inside the table's data section"),
	[F_TAB_SIZE] = W("table_entry", 0x04, 4, "size", "size", "P+C", "bytes"),
};

const nbg_field *nbg_field_map(size_t *count)
{
	if (count)
		*count = F__COUNT;
	return fields;
}

const nbg_field *nbg_fid_desc(enum nbg_fid id)
{
	return &fields[id];
}

uint32_t nbg_fid_u32_at(const uint8_t *base, enum nbg_fid id, uint32_t shift)
{
	const nbg_field *f = &fields[id];
	const uint8_t *p = base + f->offset + shift;

	switch (f->kind) {
	case NBG_FIELD_U8:
		return p[0];
	case NBG_FIELD_BITS: {
		uint32_t w = le32(p) >> f->bit_lo;
		return f->bit_count >= 32 ? w : (w & ((1u << f->bit_count) - 1u));
	}
	default:
		return le32(p);
	}
}

uint32_t nbg_fid_u32(const uint8_t *base, enum nbg_fid id)
{
	return nbg_fid_u32_at(base, id, 0);
}
