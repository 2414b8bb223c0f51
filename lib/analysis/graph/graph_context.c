/*
 * graph_context.c - the decoding context of the graph: relations, findings
 * and reading records through the field map.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/graph/graph_internal.h"
#include "common/grow.h"

const nbg_graph_rel_def nbg_graph_rel_defs[R__COUNT] = {
	[R_LAYER_COUNT] = { "layer-count-mismatch",
			    "LAYER records == layer_count of NETWORK_INFO (v2) or the v1 header",
			    "P+C" },
	[R_OPERATION_COUNT] = { "operation-count-mismatch",
				"OPERATIONS records == the v1 header's operation_count", "P+C" },
	[R_LAYER_NAME] = { "layer-name-unprintable", "layer names are printable ASCII", "C" },
	[R_OP_TYPE] = { "operation-type-unknown", "operation type is in the public enum",
			"P+C" },
	[R_OP_LAYER] = { "operation-layer-missing",
			 "operation layer_id names a LAYER record (INIT/END: 0xFFFF or "
			 "0xFFFFFFFF allowed)", "P+C" },
	[R_LAYER_OPS] = { "layer-operation-count-mismatch",
			  "layer operation_count == distinct abs_op_id of the operations naming "
			  "it (32-byte operation records)", "P+C" },
	[R_LAYER_RECS] = { "layer-operation-records-differ",
			   "layer operation_count == operation records naming it (records "
			   "without abs_op_id; one operation may span several records)", "P" },
	[R_OP_PATCH] = { "operation-patch-range",
			 "patch_index + patch_count within PATCH (SW operations: LAYER_PARAM)",
			 "P+C" },
	[R_OP_STATE] = { "operation-state-missing",
			 "state_id names an entry of the load-state table", "P+C" },
	[R_OP_INDEX] = { "operation-index-out-of-range",
			 "index names a record of the engine's section (SH, NN, TP, SW)",
			 "I+C" },
	[R_ABS_OP_ID] = { "abs-op-id-out-of-range",
			  "abs_op_id < NETWORK_INFO abs_op_count", "P+C" },
	[R_ABS_OP_COUNT] = { "abs-op-count-mismatch",
			     "distinct abs_op_id == NETWORK_INFO abs_op_count", "P+C" },
	[R_PATCH_TYPE] = { "patch-type-unknown", "patch type is in the public enum", "P+C" },
	[R_PATCH_SOURCE] = { "patch-source-type-unknown",
			     "patch source_type is in the public enum", "P+C" },
	[R_PATCH_IO_INDEX] = { "patch-io-index-out-of-range",
			       "INPUT/OUTPUT patches name an existing input/output", "P+C" },
	[R_PATCH_DYNA_INDEX] = { "patch-dyna-index-out-of-range",
				 "MISC_DYNA_GENERIC patches name a COEF_DATA_TABLE entry, "
				 "MISC_DYNA_INPUT/OUTPUT a DYNAIO_TABLE entry", "I+C" },
	[R_PATCH_DEST] = { "patch-dest-outside-state",
			   "STATE patch dest_offset + 4 <= its operation's load-state entry "
			   "size", "I+C" },
	[R_SH_INSTR] = { "sh-instr-missing",
			 "SH instr_index names an entry of PPU_INSTR_TABLE (v1 without it: "
			 "LCDT)", "P+C" },
	[R_SH_PPU_PARAM] = { "sh-ppu-param-missing",
			     "SH ppu_param_index names a PPU_PARAM record (when the file has "
			     "PPU_PARAM)", "P" },
	[R_HWI_PATCH] = { "hw-init-patch-range",
			  "hardware-init patch_index + patch_count within PATCH", "P+C" },
	[R_HWI_STATE] = { "hw-init-state-missing",
			  "hardware-init state_id names an entry of the load-state table",
			  "P+C" },
	[R_TABLE_ENTRY] = { "table-entry-out-of-bounds",
			    "every (offset, size) table entry lies inside its data section",
			    "P+C" },
};

bool nbg_findings_vadd(nbg_graph_finding **list, size_t *count, size_t *cap, size_t *dropped,
		       const char *id, uint64_t offset, const char *fmt, va_list ap)
{
	nbg_graph_finding *grown, *f;

	if (*count >= NBG_GRAPH_MAX_FINDINGS) {
		(*dropped)++;
		return true;
	}
	grown = nbg_grow(*list, cap, *count + 1, sizeof(*grown), 16);
	if (!grown)
		return false;
	*list = grown;
	f = &grown[(*count)++];
	memset(f, 0, sizeof(*f));
	snprintf(f->id, sizeof(f->id), "%s", id);
	f->offset = offset;
	vsnprintf(f->text, sizeof(f->text), fmt, ap);
	return true;
}

void nbg_graph_finding_add(gctx *c, const char *id, uint64_t offset, const char *fmt, ...)
{
	nbg_graph *g = c->g;
	va_list ap;

	va_start(ap, fmt);
	if (!nbg_findings_vadd(&g->findings, &g->sum.finding_count, &c->finding_cap,
			       &g->sum.findings_dropped, id, offset, fmt, ap))
		c->oom = 1;
	va_end(ap);
}

/* Counts one check of relation r; false (and the caller reports) when it fails. */
_Static_assert(R__COUNT <= NBG_GRAPH_RELATION_MAX, "nbg_graph.relations has no room");

bool nbg_graph_check(gctx *c, enum rel r, bool ok)
{
	c->g->relations[r].checked++;
	if (ok)
		c->g->relations[r].held++;
	return ok;
}

/* The section of `type`; v1 files list every entry, an empty one is absent. */
const nbg_section *nbg_graph_section(const gctx *c, uint32_t type)
{
	const nbg_section *s = nbg_model_section(c->m, type);
	if (s && c->m->family == 1 && s->size == 0)
		return NULL;
	return s;
}

const char *nbg_graph_tname(uint32_t type)
{
	const char *n = nbg_section_type_name(type);
	return n ? n : "?";
}

const uint8_t *nbg_graph_rec(const gctx *c, const nbg_graph_records *r, size_t i)
{
	return c->m->data + r->offset + (uint64_t)i * r->record_size;
}

/* Record holds the field `id` (its offset + width fit in record_size). */
bool nbg_graph_fits(const nbg_graph_records *r, enum nbg_fid id)
{
	const nbg_field *f = nbg_fid_desc(id);
	return r->record_size >= f->offset + f->width;
}

void *nbg_graph_alloc(gctx *c, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		c->oom = 1;
	return p;
}
