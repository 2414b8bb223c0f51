/*
 * commands_check.h - the relations that check decoded NN / TP commands
 * against the rest of the file, and the image chain (commands_check.c).
 * Private to libnbg.
 */
#ifndef NBG_COMMANDS_CHECK_H
#define NBG_COMMANDS_CHECK_H

#include <stdbool.h>

#include "analysis/graph/commands_internal.h"

/* Registers every relation (ids, texts, bases) with zero counts. */
NBG_INTERNAL void nbg_command_relations_init(nbg_commands *c);
/* Adds a finding (dropped past NBG_GRAPH_MAX_FINDINGS; memory failures are
 * remembered for nbg_command_oom). */
NBG_INTERNAL void nbg_command_finding(nbg_commands *c, const char *id, uint64_t offset,
				  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Every relation, then the producers and edges of every operation. */
NBG_INTERNAL nbg_code nbg_command_check(nbg_commands *c, const nbg_model *m, const nbg_graph *g);
/* The data flow of every operation (dataflow.c): the edges, each NN / TP
 * operation's written shape and read bytes, the other operations'
 * references; fails only when memory runs out. */
NBG_INTERNAL nbg_code nbg_command_dataflow(nbg_commands *c, const nbg_model *m,
					   const nbg_graph *g);
/* 1 when a finding could not be stored for lack of memory. */
NBG_INTERNAL int nbg_command_oom(const nbg_commands *c);

#endif
