/*
 * commands_internal.h - the layout of a decoded command set (nbg_commands),
 * shared by the decoder (commands.c) and its JSON, text and DOT writers.
 * Private to lib/analysis; other folders use commands_lib.h.
 */
#ifndef NBG_COMMANDS_INTERNAL_H
#define NBG_COMMANDS_INTERNAL_H

#include "analysis/graph/commands_lib.h"
#include "common/internal.h"
#include "nbg/commands.h"

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

/* The hardware data-type code of an I/O record's buffer format; -1: none. */
NBG_INTERNAL int nbg_command_format_code(uint32_t data_format);

#endif
