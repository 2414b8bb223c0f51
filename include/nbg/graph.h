/*
 * nbg_graph.h - what is inside a model: layers, operations, patches, the SH,
 * SW, hardware-init and PPU-parameter records, and the (offset, size) tables
 * of COEF_DATA, PPU_INSTR, LOADSTATE, ICD (and the v1 LCDT), with their
 * cross-references checked.
 *
 * Record layouts are VeriSilicon's public ones (VIPLite nbg_section_layer_t,
 * nbg_section_operation_t, nbg_section_patch_table_t, ...; the older
 * vx_binary_*_info_s of the OpenVX driver); doc/graph.md says which meanings
 * are public, which are measured on the corpus and which are inferred.
 *
 * Record sizes come from the file, never from a guess: sd_entsize in v2, the
 * version's stride (nbg_v1_info) in v1.  Fields beyond a record's size are
 * reported as absent (has_* = 0).  Records are read only inside their section;
 * a section whose size is not a whole number of records, a record size too
 * small to hold the public fields, and every broken cross-reference are
 * findings (nbg_graph_finding), never failures.
 *
 * Thread safety: nbg_graph_decode() only reads the model; a decoded graph is
 * immutable and may be read from several threads.
 *
 * Memory: the graph owns its arrays (free with nbg_graph_free()); it copies
 * every value it keeps, so it stays valid after nbg_model_free() and after
 * the file buffer is released.
 */
#ifndef NBG_GRAPH_H
#define NBG_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "nbg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Operation engine types (nbg_operation_type_e). */
enum nbg_graph_op_type {
	NBG_GRAPH_OP_NONE = 0,
	NBG_GRAPH_OP_SH = 1,     /* shader / PPU */
	NBG_GRAPH_OP_NN = 2,
	NBG_GRAPH_OP_TP = 3,
	NBG_GRAPH_OP_SW = 4,     /* CPU */
	NBG_GRAPH_OP_SC = 5,     /* scaler */
	NBG_GRAPH_OP_SP = 6,
	NBG_GRAPH_OP_NN_LUT = 7,
	NBG_GRAPH_OP_NT = 8,     /* NN transpose */
	NBG_GRAPH_OP_END = 0xFFFE,
	NBG_GRAPH_OP_INIT = 0xFFFF,
};

/* Patch source types (nbg_source_type_e / VX_BINARY_SOURCE_*). */
enum nbg_graph_source {
	NBG_GRAPH_SRC_COMMAND = 0,
	NBG_GRAPH_SRC_INPUT = 1,
	NBG_GRAPH_SRC_OUTPUT = 2,
	NBG_GRAPH_SRC_MEMORY_POOL = 3,
	NBG_GRAPH_SRC_AXI_SRAM = 4,
	NBG_GRAPH_SRC_MISC_DYNA_GENERIC = 5,
	NBG_GRAPH_SRC_MISC_DYNA_INPUT = 6,
	NBG_GRAPH_SRC_MISC_DYNA_OUTPUT = 7,
	NBG_GRAPH_SRC_VIP_SRAM = 8,
	NBG_GRAPH_SRC_KERNEL_BITSTREAM = 9,
	NBG_GRAPH_SRC_LAYER_DUMP_OUTPUT = 10,
	NBG_GRAPH_SRC_MULTIVIP_CHIPID = 100,
	NBG_GRAPH_SRC_MULTIVIP_SYNC_CMDS = 101,
};

/* Where one kind of record comes from. */
typedef struct nbg_graph_records {
	int present;            /* the section exists (v1: with a non-zero size) */
	uint32_t section_type;  /* v2 section type */
	uint64_t offset, size;  /* the section's payload */
	uint32_t record_size;   /* sd_entsize (v2) or the version's stride (v1) */
	int decoded;            /* 0: record_size too small for the public fields */
	size_t count;           /* whole records decoded */
	uint64_t trailing_bytes;/* size % record_size: bytes not decoded */
} nbg_graph_records;

typedef struct nbg_graph_layer {
	uint64_t record_offset;
	char name[65];          /* NUL-terminated copy of the 64-byte field */
	int name_printable;     /* every byte before the first NUL is printable ASCII */
	uint32_t node_id;
	uint32_t operation_count;
	int has_uid;            /* 76-byte records */
	uint32_t uid;
	/* derived */
	uint32_t operation_records;  /* OPERATIONS records whose layer_id names this layer */
	uint32_t distinct_abs_ops;   /* distinct abs_op_id among them (records with abs_op_id) */
} nbg_graph_layer;

/* layer_id of INIT / END operations in the corpus (v1: 0xFFFF, v2: 0xFFFFFFFF). */
#define NBG_GRAPH_NO_LAYER16 0xFFFFu
#define NBG_GRAPH_NO_LAYER32 0xFFFFFFFFu

typedef struct nbg_graph_operation {
	uint64_t record_offset;
	uint32_t type;          /* enum nbg_graph_op_type, or any other value as stored */
	uint32_t index;         /* the public `index` field */
	uint32_t layer_id;
	uint32_t state_id;
	uint32_t patch_index, patch_count;
	int has_preempt;        /* records of 28 bytes or more */
	uint32_t preempt_word;  /* preempt:4 | abs_share_id:28, as stored */
	uint32_t preempt, abs_share_id;
	int has_abs_op_id;      /* records of 32 bytes or more */
	uint32_t abs_op_id;
} nbg_graph_operation;

typedef struct nbg_graph_patch {
	uint64_t record_offset;
	uint32_t type;          /* 0 state, 1 command, 2 kernel */
	uint32_t dest_offset;
	uint32_t source_type;   /* enum nbg_graph_source, or any other value */
	int32_t index;          /* -1: none */
	uint32_t src_offset;
	uint32_t transformed;
	int has_name;           /* records of 28 bytes or more */
	uint32_t name;
	int has_high;           /* 40-byte records */
	uint32_t dest_offset_h, src_offset_h, mask_h;
	/* derived: the first operation (record index) whose patch range holds
	 * this record, or -1; hw_init: a hardware-init operation's range holds it */
	int64_t operation;
	int hw_init;
	uint32_t references;    /* operation + hw-init ranges holding this record */
} nbg_graph_patch;

typedef struct nbg_graph_sh_operation {
	uint64_t record_offset;
	uint32_t instr_index;
	int has_ppu_param_index;/* 8-byte records */
	uint32_t ppu_param_index;
} nbg_graph_sh_operation;

typedef struct nbg_graph_sw_operation {
	uint64_t record_offset;
	uint32_t sw_operation_type;
	int has_name;           /* 68-byte records */
	char name[65];
} nbg_graph_sw_operation;

typedef struct nbg_graph_hw_init {
	uint64_t record_offset;
	uint32_t state_id, patch_index, patch_count;
} nbg_graph_hw_init;

typedef struct nbg_graph_ppu_param {
	uint64_t record_offset;
	uint32_t global_offset[3], global_scale[3], group_size[3], group_count[3]; /* x, y, z */
} nbg_graph_ppu_param;

/* One (offset, size) entry of a table, relative to its data section. */
typedef struct nbg_graph_table_entry {
	uint64_t record_offset;
	uint64_t offset, size;
	int in_bounds;          /* [offset, offset+size) lies inside the data section */
} nbg_graph_table_entry;

/* The tables nbgkit checks, in this order. */
enum nbg_graph_table_id {
	NBG_GRAPH_TABLE_COEF_DATA = 0, /* COEF_DATA_TABLE (23) -> COEF_DATA (24) */
	NBG_GRAPH_TABLE_PPU_INSTR = 1, /* PPU_INSTR_TABLE (25) -> PPU_INSTR (19) */
	NBG_GRAPH_TABLE_LOADSTATE = 2, /* LOADSTATE_TABLE (27) -> LOADSTATE (21) */
	NBG_GRAPH_TABLE_ICD = 3,       /* ICDT (14) -> ICD (15) */
	NBG_GRAPH_TABLE_LCD = 4,       /* v1 only: LCDT in the COEF_HEADER_TABLE slot (5)
					* -> LCD in the COEF_HEADER slot (6) */
	NBG_GRAPH_TABLE_COUNT = 5
};

typedef struct nbg_graph_table {
	const char *name;        /* "COEF_DATA_TABLE", ..., "LCDT" */
	const char *data_name;   /* "COEF_DATA", ..., "LCD" */
	uint32_t table_type, data_type; /* v2 section types */
	int present;             /* the table section exists (v1: non-zero size) */
	int data_present;
	uint64_t table_offset, table_size;
	uint64_t data_offset, data_size;
	uint32_t entry_size;     /* sd_entsize (v2); 8 in v1 (nbg_section_entry_t) */
	int decoded;             /* 0: entry size is not the 8-byte (offset, size) pair */
	uint64_t trailing_bytes; /* table_size % entry_size */
	size_t entry_count;
	nbg_graph_table_entry *entries;
	size_t out_of_bounds;    /* entries not inside the data section */
	size_t empty_entries;    /* size 0 */
	uint64_t covered_bytes;  /* data bytes inside at least one in-bounds entry */
	uint64_t uncovered_bytes;/* data bytes no entry covers */
	uint64_t uncovered_nonzero_bytes;
	uint32_t uncovered_ranges;
	uint64_t overlap_bytes;  /* bytes covered by more than one entry (counted once) */
} nbg_graph_table;

/* A checked relation: how often it was checked and how often it held.
 * Every relation that does not hold adds findings with the same id. */
typedef struct nbg_graph_relation {
	const char *id;          /* stable, kebab-case; the finding id when it fails */
	const char *text;        /* what is checked */
	const char *evidence;    /* seed evidence codes for the relation ("P+C", "I+C") */
	uint64_t checked, held;
} nbg_graph_relation;

/* A broken reference or a record that could not be read as the public
 * layout: reported, never a failure. */
typedef struct nbg_graph_finding {
	char id[40];             /* stable, kebab-case (doc/graph.md) */
	uint64_t offset;         /* file offset of the record involved */
	char text[200];
} nbg_graph_finding;

#define NBG_GRAPH_OP_BUCKETS 12 /* entries of nbg_graph_summary.ops_by_type */
#define NBG_GRAPH_MAX_FINDINGS 1000u /* more are counted in findings_dropped */
/* Room for relations: the library checks at compile time that its own count
 * fits (relation_count says how many are filled). */
#define NBG_GRAPH_RELATION_MAX 24

/* What a decoded graph holds, in numbers (nbg_graph_summary_of). */
typedef struct nbg_graph_summary {
	uint32_t family, version;

	nbg_graph_records layer_records, operation_records, patch_records, sh_records,
		sw_records, hw_init_records, ppu_param_records, layer_param_records;

	/* elements of the arrays the *_at accessors below read */
	size_t layer_count, operation_count, patch_count, sh_count, sw_count, hw_init_count,
		ppu_param_count;

	/* which table operations' state_id and SH instr_index name (-1: none) */
	int state_table, instr_table;

	/* operations per engine type: [0..8] public types, [9] END, [10] INIT,
	 * [11] any other value (nbg_graph_op_bucket_name names each) */
	size_t ops_by_type[NBG_GRAPH_OP_BUCKETS];
	uint64_t abs_op_ids;     /* distinct abs_op_id values (records with abs_op_id) */
	size_t patches_unreferenced, patches_shared;

	size_t relation_count;   /* relations filled (nbg_graph_relation_at) */
	size_t finding_count;    /* findings kept (nbg_graph_finding_at) */
	size_t findings_dropped; /* findings past NBG_GRAPH_MAX_FINDINGS, counted only */
} nbg_graph_summary;

/* A decoded graph: opaque, read through the nbg_graph_* accessors below. */
typedef struct nbg_graph nbg_graph;

/* The graph's parts in nbg_json_document_write's document (report.h; OR them). */
#define NBG_GRAPH_JSON_SUMMARY 0x01u    /* "graph": counts, record sizes, relations */
#define NBG_GRAPH_JSON_LAYERS 0x02u     /* "layers" */
#define NBG_GRAPH_JSON_OPERATIONS 0x04u /* "operations", "sh_operations",
					 * "sw_operations", "hw_init_operations",
					 * "ppu_params" */
#define NBG_GRAPH_JSON_PATCHES 0x08u    /* "patches" */
#define NBG_GRAPH_JSON_TABLES 0x10u     /* "tables" (entries included) */
#define NBG_GRAPH_JSON_FINDINGS 0x20u   /* "graph_findings" */
#define NBG_GRAPH_JSON_ALL 0x3Fu

#ifdef __cplusplus
}
#endif
#endif

/* Static-linking-only: not part of the stable interface (doc/api.md). */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_GRAPH_H_STATIC_LINKING_ONLY)
#define NBG_GRAPH_H_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

/* Public name without prefix ("NN_LUT", "INIT"); NULL for values the public
 * enum does not define (the value is kept as a number). */
NBG_API const char *nbg_graph_op_type_name(uint32_t type);
/* Name of entry b of nbg_graph_summary.ops_by_type: the public type names for 0..8,
 * "END", "INIT", then "other"; NULL for b >= NBG_GRAPH_OP_BUCKETS. */
NBG_API const char *nbg_graph_op_bucket_name(size_t b);
/* "STATE", "COMMAND", "KERNEL"; NULL otherwise. */
NBG_API const char *nbg_graph_patch_type_name(uint32_t type);
/* "COMMAND", "INPUT", "OUTPUT", "MEMORY_POOL", "AXI_SRAM", "MISC_DYNA_GENERIC",
 * "MISC_DYNA_INPUT", "MISC_DYNA_OUTPUT", "VIP_SRAM", "KERNEL_BITSTREAM",
 * "LAYER_DUMP_OUTPUT", "MULTIVIP_CHIPID", "MULTIVIP_SYNC_CMDS"; NULL otherwise. */
NBG_API const char *nbg_graph_source_type_name(uint32_t source_type);

/*
 * Decodes the graph records of a parsed model (m->data, m->sections).
 * On success returns NBG_OK and stores a new graph in *out (free with
 * nbg_graph_free); findings never make it fail.  Fails, leaving *out NULL and
 * filling *err (may be NULL), only when a section of the model lies outside
 * m->data (NBG_E_SECTION_OUT_OF_BOUNDS; impossible for a model from
 * nbg_parse), memory runs out (NBG_E_OUT_OF_MEMORY, field "memory"), or m /
 * out is NULL (NBG_E_INVALID_ARGUMENT, field "model").
 */
NBG_API nbg_code nbg_graph_decode(const nbg_model *m, nbg_graph **out, nbg_error *err);

/* Frees a graph; NULL is allowed. */
NBG_API void nbg_graph_free(nbg_graph *g);

/* The graph's records, element i, or NULL past the end.  Callers reach the
 * arrays through these, never g->layers[i]: records may grow new members at
 * their end in a later version (doc/api.md). */
NBG_API const nbg_graph_layer *nbg_graph_layer_at(const nbg_graph *g, size_t i);
NBG_API const nbg_graph_operation *nbg_graph_operation_at(const nbg_graph *g, size_t i);
NBG_API const nbg_graph_patch *nbg_graph_patch_at(const nbg_graph *g, size_t i);
NBG_API const nbg_graph_sh_operation *nbg_graph_sh_operation_at(const nbg_graph *g, size_t i);
NBG_API const nbg_graph_sw_operation *nbg_graph_sw_operation_at(const nbg_graph *g, size_t i);
NBG_API const nbg_graph_hw_init *nbg_graph_hw_init_at(const nbg_graph *g, size_t i);
NBG_API const nbg_graph_ppu_param *nbg_graph_ppu_param_at(const nbg_graph *g, size_t i);
NBG_API const nbg_graph_finding *nbg_graph_finding_at(const nbg_graph *g, size_t i);
NBG_API const nbg_graph_relation *nbg_graph_relation_at(const nbg_graph *g, size_t i);
/* The counts and record geometry; NULL for a NULL graph. */
NBG_API const nbg_graph_summary *nbg_graph_summary_of(const nbg_graph *g);
/* Table t (enum nbg_graph_table_id), and entry i of it; NULL out of range. */
NBG_API const nbg_graph_table *nbg_graph_table_at(const nbg_graph *g, size_t t);
NBG_API const nbg_graph_table_entry *nbg_graph_table_entry_at(const nbg_graph *g, size_t t,
							      size_t i);

#ifdef __cplusplus
}
#endif
#endif
