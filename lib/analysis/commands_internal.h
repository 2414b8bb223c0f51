/*
 * commands_internal.h - the layout of a decoded command set (nbg_commands),
 * shared by the decoder (commands.c) and its JSON, text and DOT writers.
 * Private to libnbg.
 */
#ifndef NBG_COMMANDS_INTERNAL_H
#define NBG_COMMANDS_INTERNAL_H

#include "analysis/commands_fields.h"
#include "common/internal.h"
#include "nbg/commands.h"

/* Field ids: index of each field in nbg_command_fields(NBG_CMD_NN) and
 * nbg_command_fields(NBG_CMD_TP), from the lists of commands_fields.h. */
#define NBG_CMD_NN_ID(id, ...) NBG_NNF_##id,
#define NBG_CMD_TP_ID(id, ...) NBG_TPF_##id,
enum nbg_nn_fid { NBG_NN_FIELDS(NBG_CMD_NN_ID) NBG_NNF__COUNT };
enum nbg_tp_fid { NBG_TP_FIELDS(NBG_CMD_TP_ID) NBG_TPF__COUNT };
#undef NBG_CMD_NN_ID
#undef NBG_CMD_TP_ID

/* Relations, in report order. */
enum nbg_cmd_rel {
	NBG_CMDR_PATCH_FIELD, NBG_CMDR_KERNEL_ADDRESS, NBG_CMDR_KERNEL_ENTRY,
	NBG_CMDR_FIRST_INPUT, NBG_CMDR_INPUT_DIMS, NBG_CMDR_INPUT_TYPE, NBG_CMDR_OUTPUT_DIMS,
	NBG_CMDR_OUTPUT_TYPE, NBG_CMDR_PRODUCER, NBG_CMDR_CHAIN_TYPE, NBG_CMDR_CHAIN_SHAPE,
	NBG_CMDR_DEAD_END,
	NBG_CMDR__COUNT
};

struct nbg_commands {
	uint32_t family, version;
	nbg_cmd_section sec[NBG_CMD_ENGINE_COUNT];
	size_t cmd_count[NBG_CMD_ENGINE_COUNT];
	nbg_cmd *cmds[NBG_CMD_ENGINE_COUNT];
	uint32_t *words[NBG_CMD_ENGINE_COUNT];  /* cmd_count * word_count */
	uint32_t *values[NBG_CMD_ENGINE_COUNT]; /* cmd_count * field count */
	size_t op_count;
	nbg_cmd_op *ops;
	size_t edge_count, edge_cap;
	nbg_cmd_edge *edges;
	int64_t *op_of;          /* per OPERATIONS record: index into ops, or -1 */
	size_t op_of_count;
	size_t other_count, other_cap;
	nbg_cmd_other *others;
	/* every operation that writes memory other than an output record: the
	 * span it writes and how many of those bytes later operations read */
	struct nbg_cmd_writer {
		size_t operation;
		uint64_t bytes, consumed;
	} *writers;
	size_t writer_count, writer_cap;
	int dataflow_stopped;    /* the data flow's work limit was reached */
	uint64_t *written;       /* per OPERATIONS record: bytes it writes */
	nbg_graph_relation relations[NBG_CMDR__COUNT];
	size_t finding_count, finding_cap, findings_dropped;
	nbg_graph_finding *findings;
	int oom;
};

/* The six output loops of a TP command: counts and increments, loop 0 first. */
NBG_INTERNAL extern const enum nbg_tp_fid nbg_tp_loop_counts[6], nbg_tp_loop_incs[6];
/* The hardware data-type code of an I/O record's buffer format; -1: none. */
NBG_INTERNAL int nbg_command_format_code(uint32_t data_format);
/* The offset a patch of src_offset gives a field holding `value`
 * (doc/commands.md: 0x10003 files subtract, every other version adds). */
NBG_INTERNAL uint64_t nbg_command_patched_offset(uint32_t version, uint32_t src_offset,
						 uint64_t value);
/* Where field fi (an enum nbg_nn_fid or nbg_tp_fid, as cmd's engine) of
 * cmd points: the COMMAND patch of OPERATIONS record `operation` that
 * targets its word (r->patched 0 when none does). */
NBG_INTERNAL void nbg_command_field_ref(const nbg_graph *g, const nbg_cmd *cmd, size_t operation,
					int fi, nbg_cmd_ref *r);
/* Bytes per element of a hardware data-type code (unknown codes: 1). */
NBG_INTERNAL unsigned nbg_command_type_bytes(uint32_t code);
/* The value of NN field f of an NN command, of TP field f of a TP command;
 * 0 for a command of the other engine.  Fields are named by id (a typo does
 * not compile), never by key. */
static inline uint32_t nbg_cmd_nn(const nbg_cmd *cmd, enum nbg_nn_fid f)
{
	return cmd->engine == NBG_CMD_NN ? cmd->values[f] : 0;
}
static inline uint32_t nbg_cmd_tp(const nbg_cmd *cmd, enum nbg_tp_fid f)
{
	return cmd->engine == NBG_CMD_TP ? cmd->values[f] : 0;
}

#endif
