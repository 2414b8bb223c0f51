/*
 * report_internal.h - what the JSON report writers share (v2 in json.c, v1
 * in json_v1.c, common parts in json_common.c).  Private to libnbg.
 */
#ifndef NBG_REPORT_INTERNAL_H
#define NBG_REPORT_INTERNAL_H

#include <jansson.h>

#include "common/internal.h"
#include "common/json.h"
#include "nbg/graph.h"

/* Emits fields first..last (inclusive) of the field map read at `base`
 * (+shift bytes for fields after a variable-width part) under their keys. */
NBG_INTERNAL void nbg_json_emit_fields(json_t *obj, const uint8_t *base, enum nbg_fid first,
				       enum nbg_fid last, uint32_t shift_after,
				       enum nbg_fid shift_from);
NBG_INTERNAL json_t *nbg_json_io(const nbg_io *io);
NBG_INTERNAL json_t *nbg_json_section(const nbg_model *m, const nbg_section *s);
/* Adds a "sizes" object (command, instruction and coefficient bytes) to each
 * element of the graph report's "operations" array (json_memory.c). */
NBG_INTERNAL void nbg_json_memory_operation_sizes(json_t *ops, const nbg_model *m,
						  const nbg_graph *g);
/* Adds the v1 part of the report (json_v1.c). */
NBG_INTERNAL void nbg_json_v1(json_t *root, const nbg_model *m);

#endif
