/*
 * graph_internal.h - what the graph decoder (graph_decode.c) and the
 * cross-reference checks (graph_check.c) share: the decoding context, the
 * relations and the helpers that read records and report findings
 * (graph_context.c).  Private to libnbg.
 */
#ifndef NBG_ANALYSIS_GRAPH_INTERNAL_H
#define NBG_ANALYSIS_GRAPH_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>

#include "common/internal.h"
#include "analysis/graph/graph_struct.h"

/* Indices into nbg_graph.relations; the order is the report order. */
enum rel {
	R_LAYER_COUNT, R_OPERATION_COUNT, R_LAYER_NAME, R_OP_TYPE, R_OP_LAYER, R_LAYER_OPS,
	R_LAYER_RECS,
	R_OP_PATCH, R_OP_STATE, R_OP_INDEX, R_ABS_OP_ID, R_ABS_OP_COUNT, R_PATCH_TYPE,
	R_PATCH_SOURCE, R_PATCH_IO_INDEX, R_PATCH_DYNA_INDEX, R_PATCH_DEST, R_SH_INSTR,
	R_SH_PPU_PARAM, R_HWI_PATCH, R_HWI_STATE, R_TABLE_ENTRY, R__COUNT
};

typedef struct nbg_graph_rel_def {
	const char *id, *text, *evidence;
} nbg_graph_rel_def;
NBG_INTERNAL extern const nbg_graph_rel_def nbg_graph_rel_defs[R__COUNT];

typedef struct gctx {
	const nbg_model *m;
	nbg_graph *g;
	size_t finding_cap;
	int oom;
} gctx;

/* Offset of a field inside its record, for findings. */
#define FOFF(id) ((uint64_t)nbg_fid_desc(id)->offset)

/* Appends a finding to a list of *count (capacity *cap), or counts it in
 * *dropped past NBG_GRAPH_MAX_FINDINGS; false when memory runs out.  The
 * graph's and the command decoder's findings both go through it. */
NBG_INTERNAL bool nbg_findings_vadd(nbg_graph_finding **list, size_t *count, size_t *cap,
				    size_t *dropped, const char *id, uint64_t offset,
				    const char *fmt, va_list ap) __attribute__((format(printf, 7, 0)));
/* Adds a finding (capped at NBG_GRAPH_MAX_FINDINGS, then counted). */
NBG_INTERNAL void nbg_graph_finding_add(gctx *c, const char *id, uint64_t offset,
					const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Counts one check of relation r; false (and the caller reports) when it fails. */
NBG_INTERNAL bool nbg_graph_check(gctx *c, enum rel r, bool ok);
/* The section of `type`; v1 files list every entry, an empty one is absent. */
NBG_INTERNAL const nbg_section *nbg_graph_section(const gctx *c, uint32_t type);
/* The section type's name, "?" when it has none. */
NBG_INTERNAL const char *nbg_graph_tname(uint32_t type);
/* Record i of a record table. */
NBG_INTERNAL const uint8_t *nbg_graph_rec(const gctx *c, const nbg_graph_records *r, size_t i);
/* The record holds the field `id` (its offset + width fit in record_size). */
NBG_INTERNAL bool nbg_graph_fits(const nbg_graph_records *r, enum nbg_fid id);
/* calloc of n elements (at least one); sets c->oom on failure. */
NBG_INTERNAL void *nbg_graph_alloc(gctx *c, size_t n, size_t size);

/* The cross-reference checks, in report order (graph_check.c). */
NBG_INTERNAL void nbg_graph_check_counts(gctx *c);
NBG_INTERNAL void nbg_graph_check_operations(gctx *c);
NBG_INTERNAL void nbg_graph_check_layer_operations(gctx *c);
NBG_INTERNAL void nbg_graph_check_patches(gctx *c);
NBG_INTERNAL void nbg_graph_check_sh(gctx *c);

#endif
