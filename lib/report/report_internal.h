/*
 * report_internal.h - what the JSON report writers share (v2 in json.c, v1
 * in json_v1.c, common parts in json_common.c).  Private to libnbg.
 */
#ifndef NBG_REPORT_INTERNAL_H
#define NBG_REPORT_INTERNAL_H

#include <jansson.h>

#include "common/internal.h"
#include "common/json.h"
#include "nbg/commands.h"
#include "nbg/graph.h"
#include "nbg/memory.h"
#include "nbg/layers.h"
#include "nbg/weights.h"
#include "report/json_stream.h"

/* Emits fields first..last (inclusive) of the field map read at `base`
 * (+shift bytes for fields after a variable-width part) under their keys. */
NBG_INTERNAL void nbg_json_emit_fields(json_t *obj, const uint8_t *base, enum nbg_fid first,
				       enum nbg_fid last, uint32_t shift_after,
				       enum nbg_fid shift_from);
NBG_INTERNAL json_t *nbg_json_io(const nbg_io *io);
NBG_INTERNAL json_t *nbg_json_section(const nbg_model *m, const nbg_section *s);
/* The "sizes" object (command, instruction and coefficient bytes) of
 * operation i, which the graph report's "operations" carry (json_memory.c). */
NBG_INTERNAL json_t *nbg_json_memory_operation_sizes(const nbg_mem_report *r, size_t i);

/* The members of each part of the JSON document (nbg_json_document_write),
 * written into the object open in w (json_stream.h).
 *   core report (json.c)       the members of the report of one file
 *   graph (json_graph.c)       the NBG_GRAPH_JSON_* members `what` selects;
 *                              `sizes` (may be NULL) adds each operation's
 *                              "sizes"
 *   commands (json_commands.c) the member "commands"
 *   weights (json_weights.c)   the member "weights"
 *   memory (json_memory.c)     the member "memory"
 *   network (json_network.c)   the member "network" */
NBG_INTERNAL void nbg_report_json_write(nbg_jw *w, const nbg_model *m, const char *path);
NBG_INTERNAL void nbg_graph_json_write(nbg_jw *w, const nbg_model *m, const nbg_graph *g,
				       unsigned what, const nbg_mem_report *sizes);
NBG_INTERNAL void nbg_commands_json_write(nbg_jw *w, const nbg_model *m, const nbg_graph *g,
					  const nbg_commands *c);
NBG_INTERNAL void nbg_weights_json_write(nbg_jw *jw, const nbg_model *m, const nbg_graph *g,
					 const nbg_commands *c, const nbg_weights *w);
NBG_INTERNAL void nbg_mem_json_write(nbg_jw *w, const nbg_model *m, const nbg_graph *g,
				     const nbg_mem_report *r);
NBG_INTERNAL void nbg_network_json_write(nbg_jw *w, const nbg_model *m, const nbg_network *n);
/* Adds the v1 part of the report (json_v1.c). */
NBG_INTERNAL void nbg_json_v1(json_t *root, const nbg_model *m);

#endif
