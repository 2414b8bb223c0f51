/*
 * cpu_model.h - synthesizes small NBG v2 files of a few operations for the
 * CPU backend's per-operation tests (tests/test_cpu_ops.c): the records of
 * inputs, outputs, layers, operations and patches, NN and TP commands
 * written field by field by their names in the open layout
 * (nbg_command_field_index, doc/commands.md), SH state buffers that load
 * shader uniforms, and coefficient-table entries (kernel streams from
 * tests/coef_encode.c, lookup tables).  Built with tests/fixture.c, so the
 * sections' checksums hold.
 */
#ifndef NBG_TEST_CPU_MODEL_H
#define NBG_TEST_CPU_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define CM_MAX_OPS 8
#define CM_MAX_PATCHES 8
#define CM_MAX_STATE 96     /* words of one state buffer: 80 uniforms and their LOAD_STATE */
#define CM_CMD_BYTES 192    /* NN and TP commands (the NN fused addition reads words 23-34) */
#define CM_MAX_IO 72         /* more than the CPU backend's 64 buffers of each direction */
#define CM_MAX_COEF 4

/* A PATCH record: type 0 (STATE: dest is a byte of the state buffer) or 1
 * (COMMAND: a byte of the command); the address is source (enum
 * nbg_graph_source) record `index` at `offset` plus the stored value. */
typedef struct cm_patch {
	uint32_t type, dest, source;
	int32_t index;
	uint32_t offset, transformed;
} cm_patch;

typedef struct cm_op {
	uint32_t type;                  /* enum nbg_graph_op_type: NN, TP, SH, SP */
	uint32_t layer;                 /* index into cm_model.layer */
	uint8_t cmd[CM_CMD_BYTES];      /* NN / SP: an NN command; TP: a TP command */
	uint32_t state[CM_MAX_STATE];   /* its state buffer (LOAD_STATE words) */
	size_t state_words;
	cm_patch patch[CM_MAX_PATCHES];
	size_t patches;
	uint32_t repeat;                /* 0 or 1: one OPERATIONS record; n: n records in a row, all
					 * naming this one command, state buffer and patches */
} cm_op;

/* An input or output record: dims innermost first, format 2 UINT8 or 1 FP16. */
typedef struct cm_io {
	uint32_t dims[4], dim_count, format;
} cm_io;

typedef struct cm_model {
	uint32_t target;
	cm_io in[CM_MAX_IO], out[CM_MAX_IO];
	size_t ins, outs;
	uint32_t vip_sram;              /* bytes */
	uint64_t pool;                  /* bytes of the memory pool (0: no MEMORY_POOL section) */
	const char *layer[CM_MAX_OPS];  /* layer names */
	size_t layers;
	cm_op op[CM_MAX_OPS];
	size_t ops;
	const uint8_t *coef[CM_MAX_COEF]; /* COEF_DATA_TABLE entries, each 64-byte aligned */
	size_t coef_size[CM_MAX_COEF];
	size_t coefs;
} cm_model;

/* A new operation of type `type` in a new or existing layer named `layer`
 * (the layer of the previous operation when the names are equal). */
cm_op *cm_add_op(cm_model *m, uint32_t type, const char *layer);
void cm_patch_add(cm_op *op, uint32_t type, uint32_t dest, uint32_t source, int32_t index, uint32_t offset,
		  uint32_t transformed);
/* Sets command field `key` (an NN field for NN and SP operations, a TP
 * field for TP) to v; aborts when the layout has no such field or v does
 * not fit it.  cm_word sets a whole command word. */
void cm_field(cm_op *op, const char *key, uint32_t v);
void cm_word(cm_op *op, unsigned word, uint32_t v);
/* A COMMAND patch relocating the address field `key` of the command into
 * source/index at `offset` (the field itself holds 0). */
void cm_field_address(cm_op *op, const char *key, uint32_t source, int32_t index, uint32_t offset);
/* The state buffer: one LOAD_STATE of the n uniforms v from 0x36000 on;
 * cm_uniform_address relocates uniform i (its stored value 0) by a STATE
 * patch into source/index at offset. */
void cm_uniforms(cm_op *op, const uint32_t *v, size_t n);
void cm_uniform_address(cm_op *op, size_t i, uint32_t source, int32_t index, uint32_t offset);
/* A coefficient-table entry (copied when built); its index. */
int32_t cm_coef(cm_model *m, const uint8_t *data, size_t size);

/* The file (malloc'd), its header's target word set to m->target. */
uint8_t *cm_build(const cm_model *m, size_t *size);

#endif
