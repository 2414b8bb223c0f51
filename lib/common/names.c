/*
 * names.c - public enum names: section types, buffer formats, data types,
 * quantization formats, section classes, graph operation, patch and source
 * types.
 */
#include "common/internal.h"
#include "nbg/graph.h"

static const char *const section_names[NBG_SECTION_TYPE_COUNT] = {
	"NONE", "INPUT", "OUTPUT", "LAYER", "OPERATIONS", "COEF_HEADER_TABLE", "COEF_HEADER",
	"NN", "TP", "SH", "PATCH", "LAYER_PARAM", "SW", "HWINITOPERATIONS", "ICDT", "ICD",
	"PPU_PARAM", "OPSYNC", "DMA_SBI_INFO", "PPU_INSTR", "DYNAIO", "LOADSTATE",
	"DMA_SBI_ADDITION", "COEF_DATA_TABLE", "COEF_DATA", "PPU_INSTR_TABLE", "DYNAIO_TABLE",
	"LOADSTATE_TABLE", "LAYER_DUMP_OPERATION", "LAYER_DUMP_OUTPUTS",
	"LAYER_DUMP_PATCH_DATA", "LAYER_DUMP_INSTR_TABLE", "LAYER_DUMP_INSTR",
	"LAYER_DUMP_LOADSTATE_TABLE", "LAYER_DUMP_LOADSTATE", "NETWORK_INFO", "CUSTOMER_DATA",
	"MEMORY_POOL", "VIP_SRAM", "AXI_SRAM", "CHECKSUM",
};

const char *nbg_section_type_name(uint32_t type)
{
	return type < NBG_SECTION_TYPE_COUNT ? section_names[type] : NULL;
}

const char *nbg_section_name(uint32_t family, uint32_t type)
{
	if (family == 1 && type == NBG_SEC_COEF_HEADER_TABLE)
		return "LCDT";
	if (family == 1 && type == NBG_SEC_COEF_HEADER)
		return "LCD";
	return nbg_section_type_name(type);
}

static const struct {
	const char *name;
	unsigned bits;
} formats[] = {
	{ "FP32", 32 }, { "FP16", 16 }, { "UINT8", 8 }, { "INT8", 8 }, { "UINT16", 16 },
	{ "INT16", 16 }, { "CHAR", 8 }, { "BFP16", 16 }, { "INT32", 32 }, { "UINT32", 32 },
	{ "INT64", 64 }, { "UINT64", 64 }, { "FP64", 64 }, { "INT4", 4 }, { "UINT4", 4 },
	{ NULL, 0 }, /* 15: unassigned in the pinned public header */
	{ "BOOL8", 8 },
};

const char *nbg_data_format_name(uint32_t fmt)
{
	return fmt < sizeof(formats) / sizeof(formats[0]) ? formats[fmt].name : NULL;
}

unsigned nbg_data_format_bits(uint32_t fmt)
{
	return fmt < sizeof(formats) / sizeof(formats[0]) ? formats[fmt].bits : 0;
}

const char *nbg_data_type_name(uint32_t t)
{
	static const char *const names[] = { "TENSOR", "IMAGE", "ARRAY", "SCALAR" };
	return t < 4 ? names[t] : NULL;
}

const char *nbg_quant_format_name(uint32_t q)
{
	static const char *const names[] = { "NONE", "DYNAMIC_FIXED_POINT",
					     "AFFINE_ASYMMETRIC" };
	return q < 3 ? names[q] : NULL;
}

const char *nbg_section_class_name(nbg_section_class c)
{
	switch (c) {
	case NBG_CLASS_DECODED: return "decoded";
	case NBG_CLASS_CRC_VERIFIED: return "crc-verified";
	case NBG_CLASS_TABLE_BOUNDED: return "table-bounded";
	case NBG_CLASS_OPAQUE: return "opaque";
	}
	return "unknown";
}

const char *nbg_version_string(void)
{
	return NBG_VERSION_STRING;
}

unsigned nbg_version_number(void)
{
	return NBG_VERSION_NUMBER;
}

/* ------------------------------------------------------------ graph names */

const char *nbg_graph_op_type_name(uint32_t type)
{
	static const char *const names[] = { "NONE", "SH", "NN", "TP", "SW",
					     "SC", "SP", "NN_LUT", "NT" };
	if (type < sizeof(names) / sizeof(names[0]))
		return names[type];
	if (type == NBG_GRAPH_OP_END)
		return "END";
	if (type == NBG_GRAPH_OP_INIT)
		return "INIT";
	return NULL;
}

const char *nbg_graph_op_bucket_name(size_t b)
{
	if (b < 9)
		return nbg_graph_op_type_name((uint32_t)b);
	return b == 9 ? "END" : b == 10 ? "INIT" : b == 11 ? "other" : NULL;
}

const char *nbg_graph_patch_type_name(uint32_t type)
{
	static const char *const names[] = { "STATE", "COMMAND", "KERNEL" };
	return type < 3 ? names[type] : NULL;
}

const char *nbg_graph_source_type_name(uint32_t st)
{
	static const char *const names[] = {
		"COMMAND", "INPUT", "OUTPUT", "MEMORY_POOL", "AXI_SRAM", "MISC_DYNA_GENERIC",
		"MISC_DYNA_INPUT", "MISC_DYNA_OUTPUT", "VIP_SRAM", "KERNEL_BITSTREAM",
		"LAYER_DUMP_OUTPUT",
	};
	if (st < sizeof(names) / sizeof(names[0]))
		return names[st];
	if (st == NBG_GRAPH_SRC_MULTIVIP_CHIPID)
		return "MULTIVIP_CHIPID";
	if (st == NBG_GRAPH_SRC_MULTIVIP_SYNC_CMDS)
		return "MULTIVIP_SYNC_CMDS";
	return NULL;
}
