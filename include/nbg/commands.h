/*
 * commands.h - what the compiled model computes: the NN and TP command
 * descriptors of a model decoded into named fields, one summary per NN / TP
 * operation (kernel, input and output shapes, activation, data types), the
 * images chained from one operation to the next through the PATCH records,
 * and the relations that check the decoding against the rest of the file.
 *
 * The bit layout is the one Mesa's open etnaviv driver publishes for the same
 * VeriSilicon NPU cores (struct etna_nn_params, struct etna_tp_params); it is
 * not a VeriSilicon source, so every field carries the evidence code "O"
 * (layout published by an open driver for the same hardware), upgraded with
 * "C" only where a relation checked on the corpus holds on every file, and
 * with "P" where a public VeriSilicon source names the values (the hardware
 * data-type codes).  doc/commands.md gives the tables, their sources and
 * commits, and what stays unknown.
 *
 * Nothing here fails on file contents: an unknown command size, a command
 * the layout cannot hold, a patch on a word the layout does not name and
 * every relation that does not hold are findings (nbg_graph_finding), never
 * failures.
 *
 * Memory: the result owns copies of everything it keeps (words, values,
 * names); it stays valid after nbg_model_free() and nbg_graph_free().  It is
 * reached through functions so it can grow; it is immutable and may be read
 * from several threads.
 */
#ifndef NBG_COMMANDS_H
#define NBG_COMMANDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nbg.h"
#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The two command engines. */
enum nbg_cmd_engine { NBG_CMD_NN = 0, NBG_CMD_TP = 1, NBG_CMD_ENGINE_COUNT = 2 };

/* What a field holds. */
enum nbg_cmd_field_role {
	NBG_CMDF_VALUE = 0,      /* a count, size, flag or code */
	NBG_CMDF_ADDRESS = 1,    /* an address the runtime relocates (PATCH target) */
	NBG_CMDF_DATA_TYPE = 2,  /* low bits of a hardware data-type code */
	NBG_CMDF_DATA_TYPE_HI = 3,/* bit 2 of an NN data-type code */
};

/* One field of a command descriptor: bits bit_lo..bit_lo+bit_count-1 of the
 * little-endian 32-bit word `word`. */
typedef struct nbg_cmd_field {
	const char *key;         /* the open driver's field name, the JSON key */
	uint8_t word, bit_lo, bit_count;
	uint8_t shift;           /* 6: the field holds a byte address >> 6 */
	uint8_t role;            /* enum nbg_cmd_field_role */
	const char *evidence;    /* "O", "O+C", "O+P", "O+P+C" (doc/commands.md) */
	const char *meaning;
} nbg_cmd_field;

/* One engine's section. */
typedef struct nbg_cmd_section {
	int present;             /* the file has the section (v1: non-zero size) */
	uint64_t offset, size;
	uint32_t command_size;   /* bytes; 0: unknown (commands not decoded) */
	const char *size_source; /* where command_size comes from (text) */
	int decoded;             /* command_size known and large enough for the layout */
	size_t count;            /* whole commands */
	uint64_t trailing_bytes; /* size % command_size */
} nbg_cmd_section;

/* Maximum command size decoded (the patched-word mask is 64 bits). */
#define NBG_CMD_MAX_BYTES 256u

/* One command of a section. */
typedef struct nbg_cmd {
	unsigned engine;
	uint32_t index;          /* position in its section */
	uint64_t offset;         /* file offset */
	uint32_t word_count;     /* command_size / 4 */
	const uint32_t *words;   /* the words as stored */
	const uint32_t *values;  /* one per entry of nbg_command_fields(engine) */
	int64_t operation;       /* first OPERATIONS record naming it; -1: none */
	uint64_t patched_words;  /* bit w: a COMMAND patch of that operation targets word w */
	uint64_t unnamed_nonzero;/* bit w: word w has non-zero bits no field names */
} nbg_cmd;

/* Where an address field points. */
typedef struct nbg_cmd_ref {
	int patched;             /* a COMMAND patch targets the field's word */
	size_t patch;            /* that PATCH record */
	uint32_t source_type;    /* the patch's source (enum nbg_graph_source) */
	int32_t index;           /* the patch's index */
	uint32_t src_offset;
	uint64_t offset;         /* src_offset + (stored field value << shift) */
} nbg_cmd_ref;

/* One operation (OPERATIONS order) of type NN, SP, NN_LUT or NT (NN
 * commands) or TP (TP commands), read from its command. */
typedef struct nbg_cmd_op {
	size_t operation;        /* OPERATIONS record index */
	uint32_t type;           /* its OPERATIONS type: NN, TP, or the NN-engine types
				  * SP, NN_LUT, NT (enum nbg_graph_op_type) */
	uint32_t layer_id;
	unsigned engine;
	uint32_t command;        /* index of its command in the engine's section */
	const char *kind;        /* NN: "conv", "depthwise conv", "fully connected";
				  * SP "sp", NN_LUT "lut", NT "transpose"; TP "pool",
				  * "lut", "layout" (doc/commands.md) */
	uint32_t kernel[3];      /* NN: x, y, z; TP: 0 */
	uint32_t in[3];          /* x, y, z (NN z: kernel z, or output z when depthwise) */
	uint32_t out[3];         /* the tensor the operation writes, x, y, z: NN after its
				  * pooling or stride (out_conv / out_subsample); TP from its
				  * output loops (0 where they do not say) */
	uint32_t in_type, out_type, kernel_type; /* hardware data-type codes */
	int relu;
	uint32_t pooling, pooling_size; /* NN pooling code and 2 / 3 */
	nbg_cmd_ref in_ref, out_ref, kernel_ref;
	uint64_t in_bytes, out_bytes; /* image extents used to chain images */
	uint64_t kernel_bytes;   /* NN: coefficient entry bytes from the kernel's offset; 0 unknown */
	int32_t input_record;    /* INPUT record its input is patched from, or -1 */
	int32_t output_record;   /* OUTPUT record its output is patched to, or -1 */
	int64_t producer;        /* the operation (OPERATIONS record index, any type) that
				  * last wrote this op's first input byte; -1: none, or an
				  * input record */
	/* NN: the output size the command states (out_image_x/y/z_size), before
	 * the pooling or stride that makes `out`; TP: 0 */
	uint32_t out_conv[3];
	uint32_t out_subsample;  /* out_conv / out in x and y: 1, or 2 for a 2x2 / 3x3 pooling
				  * or a stride */
	int out_subsample_inferred; /* 1: no pooling field says it; the output row pitch
				  * cannot hold a wider row (doc/commands.md) */
	/* The data flow (doc/commands.md, "Data flow"): bytes this op reads, of
	 * them the ones no earlier operation and no input record wrote, and the
	 * bytes it writes. */
	uint64_t read_bytes, unexplained_bytes, write_bytes;
	int footprint_approximate; /* 1: a footprint was cut to its bounding range */
	/* Where its images lie: row and slice strides in bytes and bytes per
	 * element of what it reads and writes (0: the command does not say;
	 * TP output loops that are not an image). */
	uint64_t in_row_stride, in_slice_stride, out_row_stride, out_slice_stride;
	uint32_t in_element_bytes, out_element_bytes;
	/* A row tile the data flow places by its other image (doc/commands.md,
	 * "Data flow"): 1 its input, 2 its output, placed at tile_offset in
	 * that image's memory, whose address, against the previous tile of its
	 * layer, steps tile_scale times what the other image's step implies;
	 * 0: every image at its address. */
	uint32_t tile_placed, tile_scale;
	uint64_t tile_offset;
} nbg_cmd_op;

/* An edge of the recovered network: bytes that one operation (any type:
 * NN, TP, SH, SW, ...) reads and another wrote last, before it.  Operations
 * are named by their OPERATIONS record index. */
enum nbg_cmd_edge_kind {
	NBG_CMD_EDGE_OP = 0,     /* operation `from` -> operation `to` */
	NBG_CMD_EDGE_INPUT = 1,  /* INPUT record `from` -> operation `to` */
	NBG_CMD_EDGE_OUTPUT = 2, /* operation `from` -> OUTPUT record `to` */
};
/* What an edge rests on. */
enum nbg_cmd_edge_basis {
	NBG_CMD_EDGE_FOOTPRINT = 0, /* both ends decoded: the bytes read and written,
				     * from the commands' addresses, sizes and strides */
	NBG_CMD_EDGE_OPERAND = 1,   /* the reader's second operand (an address at a
				     * command word the layout does not name, read in
				     * the shape of its output) */
	NBG_CMD_EDGE_REFERENCE = 2, /* an end is an SH or SW operation, not decoded: only
				     * the addresses its patches reference are known */
};
typedef struct nbg_cmd_edge {
	unsigned kind;
	size_t from, to;
	uint64_t bytes;          /* bytes that flow along it */
	unsigned basis;          /* enum nbg_cmd_edge_basis */
} nbg_cmd_edge;
/* An operation that is not an NN or TP one with a decodable command (SH,
 * SW, ...), with the memory its patches reference: the last reference that
 * is not constant data (MISC_DYNA_INPUT) is what it writes, the others what
 * it reads (doc/commands.md). */
#define NBG_CMD_MAX_REFS 8u
typedef struct nbg_cmd_mem_ref {
	uint32_t source_type;    /* enum nbg_graph_source */
	int32_t index;           /* the patch's index (INPUT/OUTPUT record, ...) */
	uint64_t offset;         /* address within that memory */
	size_t patch;            /* the PATCH record */
} nbg_cmd_mem_ref;
typedef struct nbg_cmd_other {
	size_t operation;        /* OPERATIONS record index */
	uint32_t type;           /* its type (enum nbg_graph_op_type) */
	uint32_t layer_id;
	size_t ref_count;        /* references to memory, in patch order (at most
				  * NBG_CMD_MAX_REFS kept) */
	nbg_cmd_mem_ref refs[NBG_CMD_MAX_REFS];
	int writes;              /* 1: refs[written] is written */
	uint64_t write_bytes;    /* the extent given to that write: the image an SH
				  * operation's uniforms describe there, else the
				  * output record's size, else what the next reader of
				  * that address reads (0: none known) */
	size_t written;          /* the written reference (when writes) */
	/* per reference: the bytes of the image an SH operation's uniforms
	 * describe there (doc/commands.md, "Data flow"); 0: none */
	uint64_t image_bytes[NBG_CMD_MAX_REFS];
} nbg_cmd_other;

typedef struct nbg_commands nbg_commands;

#ifdef __cplusplus
}
#endif
#endif

/* Static-linking-only: not part of the stable interface (doc/api.md). */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_COMMANDS_H_STATIC_LINKING_ONLY)
#define NBG_COMMANDS_H_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

/* "NN", "TP"; NULL otherwise. */
NBG_API const char *nbg_command_engine_name(unsigned engine);

/* The field table of an engine (NULL and *count 0 for another value). */
NBG_API const nbg_cmd_field *nbg_command_fields(unsigned engine, size_t *count);
/* Index of `key` in nbg_command_fields(engine), or -1. */
NBG_API int nbg_command_field_index(unsigned engine, const char *key);

/* Hardware data-type codes (3 bits; NN: low 2 bits + *_data_type_bit_2):
 * "uint8" 0, "fp16" 1, "int8" 2, "int16" 4, "bf16" 7; NULL otherwise. */
NBG_API const char *nbg_command_data_type_name(uint32_t code);
/* NN pooling codes: "none" 0, "max" 1, "avg" 2, "first-pixel" 3. */
NBG_API const char *nbg_command_pooling_name(uint32_t code);

/*
 * Decodes the NN and TP commands of a parsed model with its decoded graph
 * (g from nbg_graph_decode on the same model).  Returns NBG_OK and a new
 * result in *out (free with nbg_commands_free); fails, leaving *out NULL and
 * filling *err (may be NULL), only when memory runs out (NBG_E_OUT_OF_MEMORY)
 * or an argument is NULL (NBG_E_TRUNCATED, field "model").
 */
NBG_API nbg_code nbg_commands_decode(const nbg_model *m, const nbg_graph *g,
				     nbg_commands **out, nbg_error *err);
NBG_API void nbg_commands_free(nbg_commands *c);

NBG_API const nbg_cmd_section *nbg_commands_section(const nbg_commands *c, unsigned engine);
NBG_API size_t nbg_commands_count(const nbg_commands *c, unsigned engine);
NBG_API const nbg_cmd *nbg_commands_at(const nbg_commands *c, unsigned engine, size_t i);
NBG_API size_t nbg_commands_op_count(const nbg_commands *c);
NBG_API const nbg_cmd_op *nbg_commands_op_at(const nbg_commands *c, size_t i);
NBG_API size_t nbg_commands_edge_count(const nbg_commands *c);
NBG_API const nbg_cmd_edge *nbg_commands_edge_at(const nbg_commands *c, size_t i);
/* The NN / TP operation of OPERATIONS record `operation`, or NULL. */
NBG_API const nbg_cmd_op *nbg_commands_op_of(const nbg_commands *c, size_t operation);
/* Bytes OPERATIONS record `operation` writes to memory other than an output
 * record, as the data flow measured them; 0 when none or unknown. */
NBG_API uint64_t nbg_commands_bytes_written(const nbg_commands *c, size_t operation);
/* The other operations that reference memory (SH, SW, ...), in order. */
NBG_API size_t nbg_commands_other_count(const nbg_commands *c);
NBG_API const nbg_cmd_other *nbg_commands_other_at(const nbg_commands *c, size_t i);
/* Relations in report order; each that does not hold adds findings with its id. */
NBG_API size_t nbg_commands_relation_count(const nbg_commands *c);
NBG_API const nbg_graph_relation *nbg_commands_relation_at(const nbg_commands *c, size_t i);
NBG_API size_t nbg_commands_finding_count(const nbg_commands *c);
NBG_API const nbg_graph_finding *nbg_commands_finding_at(const nbg_commands *c, size_t i);
/* Findings beyond NBG_GRAPH_MAX_FINDINGS, counted only. */
NBG_API size_t nbg_commands_findings_dropped(const nbg_commands *c);

/* A one-line description of an operation ("conv 3x3x8 -> 8, 62x62 -> 60x60,
 * relu, uint8") into buf; returns buf. */
NBG_API char *nbg_command_describe(const nbg_cmd_op *op, char *buf, size_t size);

/* `nbg inspect --commands`: one line per operation, then the relations and
 * the findings. */
NBG_API void nbg_text_commands(FILE *out, const nbg_model *m, const nbg_graph *g,
			       const nbg_commands *c);
/* The decoded model's network (nbg_decoded_network) as a Graphviz DOT
 * document: layers as boxes with their operations and shapes, input and
 * output records as ellipses, edges from the chained images.  Text from
 * the file is escaped.  Returns 0, or -1 when the model's graph, commands
 * or network could not be decoded (out of memory) or writing failed
 * (ferror(out)). */
typedef struct nbg_decoded nbg_decoded; /* nbg/decoded.h */
NBG_API int nbg_commands_dot(FILE *out, nbg_decoded *d, const char *title);

#ifdef __cplusplus
}
#endif
#endif
