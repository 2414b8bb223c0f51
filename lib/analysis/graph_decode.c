/*
 * graph.c - the graph records of a parsed model: LAYER, OPERATIONS, PATCH,
 * SH, SW, HWINITOPERATIONS, PPU_PARAM and the (offset, size) tables, decoded
 * through the field map and cross-checked.
 *
 * The core parser has already proved every section lies inside the file, so
 * nothing here can fail on file contents: a record size the public layouts do
 * not fit, a section that is not a whole number of records and every broken
 * reference become findings.  Each relation is registered up front (stable
 * order in the reports) and counts how often it was checked and held.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/grow.h"
#include "common/internal.h"
#include "nbg/graph.h"

/* ------------------------------------------------------------------ names */

const char *nbg_graph_op_type_name(uint32_t type)
{
	static const char *const names[] = { "NONE", "SH", "NN", "TP", "SW",
					     "SC", "SP", "NN_LUT", "NT" };
	if (type < sizeof(names) / sizeof(names[0]))
		return names[type];
	if (type == NBG_GRAPH_OP_END)
		return "END";
	if (type == NBG_GRAPH_OP_INIT)
		return "INIT";
	return NULL;
}

const char *nbg_graph_op_bucket_name(size_t b)
{
	if (b < 9)
		return nbg_graph_op_type_name((uint32_t)b);
	return b == 9 ? "END" : b == 10 ? "INIT" : b == 11 ? "other" : NULL;
}

const char *nbg_graph_patch_type_name(uint32_t type)
{
	static const char *const names[] = { "STATE", "COMMAND", "KERNEL" };
	return type < 3 ? names[type] : NULL;
}

const char *nbg_graph_source_type_name(uint32_t st)
{
	static const char *const names[] = {
		"COMMAND", "INPUT", "OUTPUT", "MEMORY_POOL", "AXI_SRAM", "MISC_DYNA_GENERIC",
		"MISC_DYNA_INPUT", "MISC_DYNA_OUTPUT", "VIP_SRAM", "KERNEL_BITSTREAM",
		"LAYER_DUMP_OUTPUT",
	};
	if (st < sizeof(names) / sizeof(names[0]))
		return names[st];
	if (st == NBG_GRAPH_SRC_MULTIVIP_CHIPID)
		return "MULTIVIP_CHIPID";
	if (st == NBG_GRAPH_SRC_MULTIVIP_SYNC_CMDS)
		return "MULTIVIP_SYNC_CMDS";
	return NULL;
}

/* -------------------------------------------------------------- relations */

/* Indices into nbg_graph.relations; the order is the report order. */
enum rel {
	R_LAYER_COUNT, R_OPERATION_COUNT, R_LAYER_NAME, R_OP_TYPE, R_OP_LAYER, R_LAYER_OPS,
	R_LAYER_RECS,
	R_OP_PATCH, R_OP_STATE, R_OP_INDEX, R_ABS_OP_ID, R_ABS_OP_COUNT, R_PATCH_TYPE,
	R_PATCH_SOURCE, R_PATCH_IO_INDEX, R_PATCH_DYNA_INDEX, R_PATCH_DEST, R_SH_INSTR,
	R_SH_PPU_PARAM, R_HWI_PATCH, R_HWI_STATE, R_TABLE_ENTRY, R__COUNT
};

static const struct {
	const char *id, *text, *evidence;
} rel_defs[R__COUNT] = {
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

/* ---------------------------------------------------------------- context */

typedef struct gctx {
	const nbg_model *m;
	nbg_graph *g;
	size_t finding_cap;
	int oom;
} gctx;

/* Offset of a field inside its record, for findings. */
#define FOFF(id) ((uint64_t)nbg_fid_desc(id)->offset)

static void finding(gctx *c, const char *id, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void finding(gctx *c, const char *id, uint64_t offset, const char *fmt, ...)
{
	nbg_graph *g = c->g;
	nbg_graph_finding *f;
	va_list ap;

	if (g->finding_count >= NBG_GRAPH_MAX_FINDINGS) {
		g->findings_dropped++;
		return;
	}
	nbg_graph_finding *grown = nbg_grow(g->findings, &c->finding_cap, g->finding_count + 1,
					    sizeof(*grown), 16);
	if (!grown) {
		c->oom = 1;
		return;
	}
	g->findings = grown;
	f = &g->findings[g->finding_count++];
	memset(f, 0, sizeof(*f));
	snprintf(f->id, sizeof(f->id), "%s", id);
	f->offset = offset;
	va_start(ap, fmt);
	vsnprintf(f->text, sizeof(f->text), fmt, ap);
	va_end(ap);
}

/* Counts one check of relation r; false (and the caller reports) when it fails. */
_Static_assert(R__COUNT <= NBG_GRAPH_RELATION_MAX, "nbg_graph.relations has no room");

static bool check(gctx *c, enum rel r, bool ok)
{
	c->g->relations[r].checked++;
	if (ok)
		c->g->relations[r].held++;
	return ok;
}

/* The section of `type`; v1 files list every entry, an empty one is absent. */
static const nbg_section *section(const gctx *c, uint32_t type)
{
	const nbg_section *s = nbg_model_section(c->m, type);
	if (s && c->m->family == 1 && s->size == 0)
		return NULL;
	return s;
}

static const char *tname(uint32_t type)
{
	const char *n = nbg_section_type_name(type);
	return n ? n : "?";
}

/* ---------------------------------------------------------------- records */

/* Finds the section of `type` and its record size: sd_entsize in v2, the
 * version's stride (v1_size) in v1.  Records are decoded when the size holds
 * the `min` bytes of the oldest public layout; a size none of the public
 * layouts has (`known`, 0-terminated) is reported but decoded as far as the
 * fields fit. */
static void setup_records(gctx *c, nbg_graph_records *r, uint32_t type, uint32_t v1_size,
			  uint32_t min, const uint32_t *known)
{
	const nbg_section *s = section(c, type);

	r->section_type = type;
	if (!s)
		return;
	r->present = 1;
	r->offset = s->offset;
	r->size = s->size;
	r->record_size = c->m->family == 2 ? s->entry_size : v1_size;
	if (r->record_size < min) {
		if (s->size)
			finding(c, "record-size-unusable", s->record_offset,
				"%s records are %u bytes; the public layout needs at least %u: "
				"the section is not decoded", tname(type), r->record_size, min);
		return;
	}
	r->decoded = 1;
	r->count = (size_t)(s->size / r->record_size);
	r->trailing_bytes = s->size % r->record_size;
	if (r->trailing_bytes)
		finding(c, "section-size-not-multiple", s->record_offset,
			"%s is %llu bytes, not a whole number of %u-byte records: the last "
			"%llu bytes are not decoded", tname(type), (unsigned long long)s->size,
			r->record_size, (unsigned long long)r->trailing_bytes);
	for (const uint32_t *k = known; *k; k++)
		if (*k == r->record_size)
			return;
	finding(c, "record-size-unexpected", s->record_offset,
		"%s records are %u bytes, a size no public layout has: fields that fit are "
		"decoded, the rest of each record is not", tname(type), r->record_size);
}

static const uint8_t *rec(const gctx *c, const nbg_graph_records *r, size_t i)
{
	return c->m->data + r->offset + (uint64_t)i * r->record_size;
}

/* Record holds the field `id` (its offset + width fit in record_size). */
static bool fits(const nbg_graph_records *r, enum nbg_fid id)
{
	const nbg_field *f = nbg_fid_desc(id);
	return r->record_size >= f->offset + f->width;
}

static void copy_name(char out[65], const uint8_t *p)
{
	memcpy(out, p, 64);
	out[64] = '\0';
}

static int printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

static void *alloc_array(gctx *c, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		c->oom = 1;
	return p;
}

static void decode_layers(gctx *c)
{
	static const uint32_t known[] = { 72, 76, 0 };
	nbg_graph *g = c->g;
	nbg_graph_records *r = &g->layer_records;
	const uint32_t v1 = c->m->v1.layer_stride;

	setup_records(c, r, NBG_SEC_LAYER, v1, 72, known);
	if (!r->decoded || !(g->layers = alloc_array(c, r->count, sizeof(*g->layers))))
		return;
	g->layer_count = r->count;
	for (size_t i = 0; i < r->count; i++) {
		const uint8_t *p = rec(c, r, i);
		nbg_graph_layer *l = &g->layers[i];
		l->record_offset = (uint64_t)(p - c->m->data);
		copy_name(l->name, p + nbg_fid_desc(F_LAYER_NAME)->offset);
		l->name_printable = printable(l->name);
		l->node_id = nbg_fid_u32(p, F_LAYER_NODE_ID);
		l->operation_count = nbg_fid_u32(p, F_LAYER_OP_COUNT);
		if ((l->has_uid = fits(r, F_LAYER_UID)))
			l->uid = nbg_fid_u32(p, F_LAYER_UID);
	}
}

static void decode_operations(gctx *c)
{
	static const uint32_t known[] = { 24, 28, 32, 0 };
	nbg_graph *g = c->g;
	nbg_graph_records *r = &g->operation_records;

	setup_records(c, r, NBG_SEC_OPERATIONS, c->m->v1.operation_stride, 24, known);
	if (!r->decoded ||
	    !(g->operations = alloc_array(c, r->count, sizeof(*g->operations))))
		return;
	g->operation_count = r->count;
	for (size_t i = 0; i < r->count; i++) {
		const uint8_t *p = rec(c, r, i);
		nbg_graph_operation *o = &g->operations[i];
		o->record_offset = (uint64_t)(p - c->m->data);
		o->type = nbg_fid_u32(p, F_OP_TYPE);
		o->index = nbg_fid_u32(p, F_OP_INDEX);
		o->layer_id = nbg_fid_u32(p, F_OP_LAYER_ID);
		o->state_id = nbg_fid_u32(p, F_OP_STATE_ID);
		o->patch_index = nbg_fid_u32(p, F_OP_PATCH_INDEX);
		o->patch_count = nbg_fid_u32(p, F_OP_PATCH_COUNT);
		if ((o->has_preempt = fits(r, F_OP_PREEMPT_WORD))) {
			o->preempt_word = nbg_fid_u32(p, F_OP_PREEMPT_WORD);
			o->preempt = nbg_fid_u32(p, F_OP_PREEMPT);
			o->abs_share_id = nbg_fid_u32(p, F_OP_ABS_SHARE_ID);
		}
		if ((o->has_abs_op_id = fits(r, F_OP_ABS_OP_ID)))
			o->abs_op_id = nbg_fid_u32(p, F_OP_ABS_OP_ID);
		if (o->type <= NBG_GRAPH_OP_NT)
			g->ops_by_type[o->type]++;
		else if (o->type == NBG_GRAPH_OP_END)
			g->ops_by_type[9]++;
		else if (o->type == NBG_GRAPH_OP_INIT)
			g->ops_by_type[10]++;
		else
			g->ops_by_type[11]++;
	}
}

static void decode_patches(gctx *c)
{
	static const uint32_t known[] = { 24, 28, 40, 0 };
	nbg_graph *g = c->g;
	nbg_graph_records *r = &g->patch_records;

	setup_records(c, r, NBG_SEC_PATCH, c->m->v1.patch_stride, 24, known);
	if (!r->decoded || !(g->patches = alloc_array(c, r->count, sizeof(*g->patches))))
		return;
	g->patch_count = r->count;
	for (size_t i = 0; i < r->count; i++) {
		const uint8_t *p = rec(c, r, i);
		nbg_graph_patch *x = &g->patches[i];
		x->record_offset = (uint64_t)(p - c->m->data);
		x->type = nbg_fid_u32(p, F_PATCH_TYPE);
		x->dest_offset = nbg_fid_u32(p, F_PATCH_DEST_OFFSET);
		x->source_type = nbg_fid_u32(p, F_PATCH_SOURCE_TYPE);
		x->index = (int32_t)nbg_fid_u32(p, F_PATCH_INDEX);
		x->src_offset = nbg_fid_u32(p, F_PATCH_SRC_OFFSET);
		x->transformed = nbg_fid_u32(p, F_PATCH_TRANSFORMED);
		if ((x->has_name = fits(r, F_PATCH_NAME)))
			x->name = nbg_fid_u32(p, F_PATCH_NAME);
		if ((x->has_high = fits(r, F_PATCH_MASK_H))) {
			x->dest_offset_h = nbg_fid_u32(p, F_PATCH_DEST_OFFSET_H);
			x->src_offset_h = nbg_fid_u32(p, F_PATCH_SRC_OFFSET_H);
			x->mask_h = nbg_fid_u32(p, F_PATCH_MASK_H);
		}
		x->operation = -1;
	}
}

static void decode_small_records(gctx *c)
{
	static const uint32_t sh_known[] = { 4, 8, 0 }, sw_known[] = { 4, 68, 0 },
			      hwi_known[] = { 12, 0 }, ppu_known[] = { 48, 0 };
	nbg_graph *g = c->g;
	nbg_graph_records *r;

	r = &g->sh_records;
	setup_records(c, r, NBG_SEC_SH, c->m->v1.sh_stride, 4, sh_known);
	if (r->decoded && (g->sh_operations = alloc_array(c, r->count, sizeof(*g->sh_operations)))) {
		g->sh_count = r->count;
		for (size_t i = 0; i < r->count; i++) {
			const uint8_t *p = rec(c, r, i);
			nbg_graph_sh_operation *s = &g->sh_operations[i];
			s->record_offset = (uint64_t)(p - c->m->data);
			s->instr_index = nbg_fid_u32(p, F_SH_INSTR_INDEX);
			if ((s->has_ppu_param_index = fits(r, F_SH_PPU_PARAM_INDEX)))
				s->ppu_param_index = nbg_fid_u32(p, F_SH_PPU_PARAM_INDEX);
		}
	}

	r = &g->sw_records;
	setup_records(c, r, NBG_SEC_SW, c->m->v1.sw_stride, 4, sw_known);
	if (r->decoded && (g->sw_operations = alloc_array(c, r->count, sizeof(*g->sw_operations)))) {
		g->sw_count = r->count;
		for (size_t i = 0; i < r->count; i++) {
			const uint8_t *p = rec(c, r, i);
			nbg_graph_sw_operation *s = &g->sw_operations[i];
			s->record_offset = (uint64_t)(p - c->m->data);
			s->sw_operation_type = nbg_fid_u32(p, F_SW_TYPE);
			if ((s->has_name = fits(r, F_SW_NAME)))
				copy_name(s->name, p + nbg_fid_desc(F_SW_NAME)->offset);
		}
	}

	/* v1 has no per-version stride for these: the public structures' sizes. */
	r = &g->hw_init_records;
	setup_records(c, r, NBG_SEC_HWINITOPERATIONS, 12, 12, hwi_known);
	if (r->decoded && (g->hw_inits = alloc_array(c, r->count, sizeof(*g->hw_inits)))) {
		g->hw_init_count = r->count;
		for (size_t i = 0; i < r->count; i++) {
			const uint8_t *p = rec(c, r, i);
			nbg_graph_hw_init *h = &g->hw_inits[i];
			h->record_offset = (uint64_t)(p - c->m->data);
			h->state_id = nbg_fid_u32(p, F_HWI_STATE_ID);
			h->patch_index = nbg_fid_u32(p, F_HWI_PATCH_INDEX);
			h->patch_count = nbg_fid_u32(p, F_HWI_PATCH_COUNT);
		}
	}

	r = &g->ppu_param_records;
	setup_records(c, r, NBG_SEC_PPU_PARAM, 48, 48, ppu_known);
	if (r->decoded && (g->ppu_params = alloc_array(c, r->count, sizeof(*g->ppu_params)))) {
		g->ppu_param_count = r->count;
		for (size_t i = 0; i < r->count; i++) {
			const uint8_t *p = rec(c, r, i);
			nbg_graph_ppu_param *q = &g->ppu_params[i];
			q->record_offset = (uint64_t)(p - c->m->data);
			for (int k = 0; k < 3; k++) {
				q->global_offset[k] = nbg_fid_u32(p, (enum nbg_fid)(F_PPU_GLOBAL_OFFSET_X + k));
				q->global_scale[k] = nbg_fid_u32(p, (enum nbg_fid)(F_PPU_GLOBAL_SCALE_X + k));
				q->group_size[k] = nbg_fid_u32(p, (enum nbg_fid)(F_PPU_GROUP_SIZE_X + k));
				q->group_count[k] = nbg_fid_u32(p, (enum nbg_fid)(F_PPU_GROUP_COUNT_X + k));
			}
		}
	}

	/* LAYER_PARAM is only counted (SW operations' patch ranges name it); v1
	 * gives no stride for it, so there it stays uncounted. */
	r = &g->layer_param_records;
	{
		const nbg_section *s = section(c, NBG_SEC_LAYER_PARAM);
		r->section_type = NBG_SEC_LAYER_PARAM;
		if (s) {
			r->present = 1;
			r->offset = s->offset;
			r->size = s->size;
			r->record_size = c->m->family == 2 ? s->entry_size : 0;
			if (r->record_size) {
				r->decoded = 1;
				r->count = (size_t)(s->size / r->record_size);
				r->trailing_bytes = s->size % r->record_size;
			}
		}
	}
}

/* ----------------------------------------------------------------- tables */

static const struct {
	const char *name, *data_name;
	uint32_t table, data;
	int v1_only;
} table_defs[NBG_GRAPH_TABLE_COUNT] = {
	[NBG_GRAPH_TABLE_COEF_DATA] = { "COEF_DATA_TABLE", "COEF_DATA", NBG_SEC_COEF_DATA_TABLE,
					NBG_SEC_COEF_DATA, 0 },
	[NBG_GRAPH_TABLE_PPU_INSTR] = { "PPU_INSTR_TABLE", "PPU_INSTR", NBG_SEC_PPU_INSTR_TABLE,
					NBG_SEC_PPU_INSTR, 0 },
	[NBG_GRAPH_TABLE_LOADSTATE] = { "LOADSTATE_TABLE", "LOADSTATE", NBG_SEC_LOADSTATE_TABLE,
					NBG_SEC_LOADSTATE, 0 },
	[NBG_GRAPH_TABLE_ICD] = { "ICDT", "ICD", NBG_SEC_ICDT, NBG_SEC_ICD, 0 },
	[NBG_GRAPH_TABLE_LCD] = { "LCDT", "LCD", NBG_SEC_COEF_HEADER_TABLE, NBG_SEC_COEF_HEADER,
				  1 },
};

typedef struct span {
	uint64_t a, b;
} span;

static int cmp_span(const void *x, const void *y)
{
	const span *p = x, *q = y;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return (p->b > q->b) - (p->b < q->b);
}

/* Covered / uncovered bytes of the data section from the in-bounds entries. */
static void table_coverage(gctx *c, nbg_graph_table *t)
{
	const uint8_t *d = c->m->data + t->data_offset;
	span *v = alloc_array(c, t->entry_count, sizeof(span));
	size_t n = 0;
	uint64_t pos = 0, total = 0;

	if (!v)
		return;
	for (size_t i = 0; i < t->entry_count; i++)
		if (t->entries[i].in_bounds && t->entries[i].size) {
			v[n].a = t->entries[i].offset;
			v[n].b = t->entries[i].offset + t->entries[i].size;
			total += t->entries[i].size;
			n++;
		}
	qsort(v, n, sizeof(span), cmp_span);
	for (size_t i = 0; i <= n; i++) {
		uint64_t a = i < n ? v[i].a : t->data_size;
		if (a > pos) {
			t->uncovered_ranges++;
			t->uncovered_bytes += a - pos;
			for (uint64_t k = pos; k < a; k++)
				t->uncovered_nonzero_bytes += d[k] != 0;
			pos = a;
		}
		if (i < n && v[i].b > pos) {
			t->covered_bytes += v[i].b - pos;
			pos = v[i].b;
		}
	}
	t->overlap_bytes = total - t->covered_bytes;
	free(v);
}

static void decode_tables(gctx *c)
{
	nbg_graph *g = c->g;

	for (int i = 0; i < NBG_GRAPH_TABLE_COUNT; i++) {
		nbg_graph_table *t = &g->tables[i];
		const nbg_section *ts, *ds;

		t->name = table_defs[i].name;
		t->data_name = table_defs[i].data_name;
		t->table_type = table_defs[i].table;
		t->data_type = table_defs[i].data;
		if (table_defs[i].v1_only && c->m->family != 1)
			continue;
		ts = section(c, t->table_type);
		ds = section(c, t->data_type);
		if (ds) {
			t->data_present = 1;
			t->data_offset = ds->offset;
			t->data_size = ds->size;
		}
		if (!ts)
			continue;
		t->present = 1;
		t->table_offset = ts->offset;
		t->table_size = ts->size;
		t->entry_size = c->m->family == 2 ? ts->entry_size : 8;
		if (t->entry_size != 8) {
			if (ts->size)
				finding(c, "record-size-unusable", ts->record_offset,
					"%s entries are %u bytes; the (offset, size) pair is 8: the "
					"table is not decoded", t->name, t->entry_size);
			continue;
		}
		t->decoded = 1;
		t->entry_count = (size_t)(ts->size / 8);
		t->trailing_bytes = ts->size % 8;
		if (t->trailing_bytes)
			finding(c, "section-size-not-multiple", ts->record_offset,
				"%s is %llu bytes, not a whole number of 8-byte entries: the last "
				"%llu bytes are not decoded", t->name,
				(unsigned long long)ts->size, (unsigned long long)t->trailing_bytes);
		if (!(t->entries = alloc_array(c, t->entry_count, sizeof(*t->entries))))
			return;
		if (t->entry_count && !ds)
			finding(c, rel_defs[R_TABLE_ENTRY].id, ts->record_offset,
				"%s has %zu entries but the file has no %s section", t->name,
				t->entry_count, t->data_name);
		for (size_t k = 0; k < t->entry_count; k++) {
			const uint8_t *p = c->m->data + ts->offset + 8 * (uint64_t)k;
			nbg_graph_table_entry *e = &t->entries[k];
			e->record_offset = ts->offset + 8 * (uint64_t)k;
			e->offset = nbg_fid_u32(p, F_TAB_OFFSET);
			e->size = nbg_fid_u32(p, F_TAB_SIZE);
			e->in_bounds = ds && range_ok(e->offset, e->size, ds->size);
			t->empty_entries += e->size == 0;
			if (!check(c, R_TABLE_ENTRY, e->in_bounds)) {
				t->out_of_bounds++;
				if (ds)
					finding(c, rel_defs[R_TABLE_ENTRY].id, e->record_offset,
						"%s entry %zu [%llu, +%llu) reaches past the "
						"%llu-byte %s", t->name, k,
						(unsigned long long)e->offset,
						(unsigned long long)e->size,
						(unsigned long long)ds->size, t->data_name);
			}
		}
		if (ds)
			table_coverage(c, t);
	}
	/* Load states and SH instructions: the v2-era tables; v1 files before
	 * them keep both in the LCDT. */
	g->state_table = g->tables[NBG_GRAPH_TABLE_LOADSTATE].decoded ? NBG_GRAPH_TABLE_LOADSTATE
		       : g->tables[NBG_GRAPH_TABLE_LCD].decoded	    ? NBG_GRAPH_TABLE_LCD
								    : -1;
	g->instr_table = g->tables[NBG_GRAPH_TABLE_PPU_INSTR].decoded ? NBG_GRAPH_TABLE_PPU_INSTR
		       : g->tables[NBG_GRAPH_TABLE_LCD].decoded	    ? NBG_GRAPH_TABLE_LCD
								    : -1;
}

/* ------------------------------------------------------- cross-references */

static bool is_marker_op(uint32_t type)
{
	return type == NBG_GRAPH_OP_INIT || type == NBG_GRAPH_OP_END;
}

static bool layer_ok(const nbg_graph *g, uint32_t id)
{
	return id < g->layer_count;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

static void check_counts(gctx *c)
{
	const nbg_model *m = c->m;
	nbg_graph *g = c->g;

	if (g->layer_records.decoded) {
		if (m->family == 2 && m->network_info.present) {
			if (!check(c, R_LAYER_COUNT, m->network_info.layer_count == g->layer_count))
				finding(c, rel_defs[R_LAYER_COUNT].id,
					m->network_info.offset +
						nbg_fid_desc(F_NI_LAYER_COUNT)->offset,
					"NETWORK_INFO declares %u layers but LAYER holds %zu "
					"records", m->network_info.layer_count, g->layer_count);
		} else if (m->family == 1) {
			if (!check(c, R_LAYER_COUNT, m->v1.layer_count == g->layer_count))
				finding(c, rel_defs[R_LAYER_COUNT].id,
					nbg_fid_desc(F_V1_LAYER_COUNT)->offset,
					"the header declares %u layers but LAYER holds %zu "
					"records", m->v1.layer_count, g->layer_count);
		}
	}
	if (g->operation_records.decoded && m->family == 1 &&
	    !check(c, R_OPERATION_COUNT, m->v1.operation_count == g->operation_count))
		finding(c, rel_defs[R_OPERATION_COUNT].id, nbg_fid_desc(F_V1_OP_COUNT)->offset,
			"the header declares %u operations but OPERATIONS holds %zu records",
			m->v1.operation_count, g->operation_count);
	for (size_t i = 0; i < g->layer_count; i++)
		if (!check(c, R_LAYER_NAME, g->layers[i].name_printable))
			finding(c, rel_defs[R_LAYER_NAME].id, g->layers[i].record_offset,
				"layer %zu name holds bytes outside printable ASCII", i);
}

/* Records of the section an operation's `index` names, or -1 when unknown. */
static int64_t engine_records(const gctx *c, uint32_t type)
{
	const nbg_model *m = c->m;
	const nbg_graph *g = c->g;
	const nbg_section *s;
	uint32_t unit = 0;

	switch (type) {
	case NBG_GRAPH_OP_SH:
		return !g->sh_records.present ? 0 : g->sh_records.decoded
			? (int64_t)g->sh_records.count : -1;
	case NBG_GRAPH_OP_SW:
		return !g->sw_records.present ? 0 : g->sw_records.decoded
			? (int64_t)g->sw_records.count : -1;
	case NBG_GRAPH_OP_NN:
	case NBG_GRAPH_OP_SP:
	case NBG_GRAPH_OP_NN_LUT:
	case NBG_GRAPH_OP_NT:
		s = section(c, NBG_SEC_NN);
		if (m->family == 2)
			unit = s && s->entry_size > 1 ? s->entry_size : m->network_info.nn_command_bytes;
		else
			unit = m->v1.nn_command_bytes;
		break;
	case NBG_GRAPH_OP_TP:
		if (m->family != 2)
			return -1; /* v1 gives no TP command size */
		s = section(c, NBG_SEC_TP);
		unit = s && s->entry_size > 1 ? s->entry_size : m->network_info.tp_command_bytes;
		break;
	default:
		return -1;
	}
	if (!s)
		return 0;
	return unit ? (int64_t)(s->size / unit) : -1;
}

static const nbg_graph_table *state_table(const nbg_graph *g)
{
	return g->state_table >= 0 ? &g->tables[g->state_table] : NULL;
}

static void check_operations(gctx *c)
{
	const nbg_model *m = c->m;
	nbg_graph *g = c->g;
	const nbg_graph_table *st = state_table(g);
	int no_state_reported = 0;

	for (size_t i = 0; i < g->operation_count; i++) {
		const nbg_graph_operation *o = &g->operations[i];
		const char *tn = nbg_graph_op_type_name(o->type);
		bool marker = is_marker_op(o->type);

		if (!check(c, R_OP_TYPE, tn != NULL))
			finding(c, rel_defs[R_OP_TYPE].id, o->record_offset,
				"operation %zu type %u (0x%x) is not in the public enum; kept as "
				"a number", i, o->type, o->type);

		if (!(marker && (o->layer_id == NBG_GRAPH_NO_LAYER16 ||
				 o->layer_id == NBG_GRAPH_NO_LAYER32)) &&
		    !check(c, R_OP_LAYER, layer_ok(g, o->layer_id)))
			finding(c, rel_defs[R_OP_LAYER].id, o->record_offset + FOFF(F_OP_LAYER_ID),
				"operation %zu (%s) names layer %u; LAYER holds %zu records", i,
				tn ? tn : "?", o->layer_id, g->layer_count);

		if (o->patch_count) {
			bool sw = o->type == NBG_GRAPH_OP_SW;
			const nbg_graph_records *pr = sw ? &g->layer_param_records
							 : &g->patch_records;
			if (!sw || pr->decoded || !pr->present) {
				uint64_t end = (uint64_t)o->patch_index + o->patch_count;
				if (!check(c, R_OP_PATCH, pr->decoded && end <= pr->count))
					finding(c, rel_defs[R_OP_PATCH].id, o->record_offset + FOFF(F_OP_PATCH_INDEX),
						"operation %zu patches [%u, +%u) reach past the %zu "
						"records of %s", i, o->patch_index, o->patch_count,
						pr->decoded ? pr->count : 0,
						sw ? "LAYER_PARAM" : "PATCH");
			}
		}

		if (st) {
			if (!check(c, R_OP_STATE, o->state_id < st->entry_count))
				finding(c, rel_defs[R_OP_STATE].id, o->record_offset + FOFF(F_OP_STATE_ID),
					"operation %zu state_id %u; %s holds %zu entries", i,
					o->state_id, st->name, st->entry_count);
		} else if (!marker) {
			check(c, R_OP_STATE, false);
			if (!no_state_reported++)
				finding(c, rel_defs[R_OP_STATE].id, o->record_offset + FOFF(F_OP_STATE_ID),
					"operations carry state_id but the file has no load-state "
					"table (LOADSTATE_TABLE%s)", m->family == 1 ? " or LCDT" : "");
		}

		if (!marker) {
			int64_t n = engine_records(c, o->type);
			if (n >= 0 && !check(c, R_OP_INDEX, o->index < (uint64_t)n))
				finding(c, rel_defs[R_OP_INDEX].id, o->record_offset + FOFF(F_OP_INDEX),
					"operation %zu (%s) index %u; its engine's section holds "
					"%lld records", i, tn ? tn : "?", o->index, (long long)n);
		}

		if (o->has_abs_op_id && !marker && m->family == 2 && m->network_info.present &&
		    !check(c, R_ABS_OP_ID, o->abs_op_id < m->network_info.absolute_operation_count))
			finding(c, rel_defs[R_ABS_OP_ID].id, o->record_offset + FOFF(F_OP_ABS_OP_ID),
				"operation %zu abs_op_id %u; NETWORK_INFO abs_op_count is %u", i,
				o->abs_op_id, m->network_info.absolute_operation_count);
	}
}

/* Per layer: operation records and distinct abs_op_id; the abs_op_id total. */
static void check_layer_operations(gctx *c)
{
	const nbg_model *m = c->m;
	nbg_graph *g = c->g;
	size_t n = 0, nall = 0;
	uint64_t *pairs, *all;
	bool have_abs = g->operation_records.decoded && g->operation_count &&
			g->operations[0].has_abs_op_id;

	if (!g->layer_records.decoded || !g->operation_records.decoded)
		return;
	pairs = alloc_array(c, g->operation_count, sizeof(uint64_t));
	all = alloc_array(c, g->operation_count, sizeof(uint64_t));
	if (!pairs || !all) {
		free(pairs);
		free(all);
		return;
	}
	for (size_t i = 0; i < g->operation_count; i++) {
		const nbg_graph_operation *o = &g->operations[i];
		if (is_marker_op(o->type))
			continue;
		if (have_abs)
			all[nall++] = o->abs_op_id;
		if (!layer_ok(g, o->layer_id))
			continue;
		g->layers[o->layer_id].operation_records++;
		pairs[n++] = (uint64_t)o->layer_id << 32 | (have_abs ? o->abs_op_id : 0);
	}
	if (have_abs) {
		qsort(pairs, n, sizeof(uint64_t), cmp_u64);
		for (size_t i = 0; i < n; i++)
			if (i == 0 || pairs[i] != pairs[i - 1])
				g->layers[pairs[i] >> 32].distinct_abs_ops++;
		qsort(all, nall, sizeof(uint64_t), cmp_u64);
		for (size_t i = 0; i < nall; i++)
			if (i == 0 || all[i] != all[i - 1])
				g->abs_op_ids++;
		if (m->family == 2 && m->network_info.present &&
		    !check(c, R_ABS_OP_COUNT, g->abs_op_ids == m->network_info.absolute_operation_count))
			finding(c, rel_defs[R_ABS_OP_COUNT].id,
				m->network_info.offset + nbg_fid_desc(F_NI_ABS_OP_COUNT)->offset,
				"operations carry %llu distinct abs_op_id values; NETWORK_INFO "
				"abs_op_count is %u", (unsigned long long)g->abs_op_ids,
				m->network_info.absolute_operation_count);
	}
	free(pairs);
	free(all);

	for (size_t i = 0; i < g->layer_count; i++) {
		const nbg_graph_layer *l = &g->layers[i];
		uint32_t have = have_abs ? l->distinct_abs_ops : l->operation_records;
		enum rel r = have_abs ? R_LAYER_OPS : R_LAYER_RECS;
		if (!check(c, r, have == l->operation_count))
			finding(c, rel_defs[r].id, l->record_offset + FOFF(F_LAYER_OP_COUNT),
				"layer %zu declares %u operations; %u %s name it", i,
				l->operation_count, have,
				have_abs ? "distinct abs_op_id values of operations"
					 : "operation records");
	}
}

/* Path-compressed "next patch without an owner" for linear owner assignment. */
static size_t next_free(size_t *next, size_t k)
{
	size_t r = k;
	while (next[r] != r)
		r = next[r];
	while (next[k] != r) {
		size_t t = next[k];
		next[k] = r;
		k = t;
	}
	return r;
}

static void assign_range(nbg_graph *g, size_t *next, int64_t *diff, uint64_t start,
			 uint64_t count, int64_t owner, int hw)
{
	uint64_t end = start + count;
	diff[start]++;
	diff[end]--;
	for (size_t k = next_free(next, (size_t)start); k < end; k = next_free(next, k)) {
		g->patches[k].operation = owner;
		g->patches[k].hw_init = hw;
		next[k] = k + 1;
	}
}

static void check_patches(gctx *c)
{
	const nbg_model *m = c->m;
	nbg_graph *g = c->g;
	const nbg_graph_table *st = state_table(g);
	const nbg_graph_table *coef = &g->tables[NBG_GRAPH_TABLE_COEF_DATA];
	const nbg_section *dyn = section(c, NBG_SEC_DYNAIO_TABLE);
	size_t np = g->patch_count;
	size_t *next;
	int64_t *diff;

	/* Hardware-init operations first: their ranges are checked like operations'. */
	for (size_t i = 0; i < g->hw_init_count; i++) {
		const nbg_graph_hw_init *h = &g->hw_inits[i];
		if (h->patch_count &&
		    !check(c, R_HWI_PATCH, g->patch_records.decoded &&
						   (uint64_t)h->patch_index + h->patch_count <= np))
			finding(c, rel_defs[R_HWI_PATCH].id, h->record_offset + FOFF(F_HWI_PATCH_INDEX),
				"hardware-init operation %zu patches [%u, +%u) reach past the %zu "
				"PATCH records", i, h->patch_index, h->patch_count, np);
		if (!check(c, R_HWI_STATE, st && h->state_id < st->entry_count))
			finding(c, rel_defs[R_HWI_STATE].id, h->record_offset,
				"hardware-init operation %zu state_id %u; the load-state table "
				"holds %zu entries", i, h->state_id, st ? st->entry_count : 0);
	}
	if (!g->patch_records.decoded)
		return;

	next = alloc_array(c, np + 1, sizeof(size_t));
	diff = alloc_array(c, np + 1, sizeof(int64_t));
	if (!next || !diff) {
		free(next);
		free(diff);
		return;
	}
	for (size_t k = 0; k <= np; k++)
		next[k] = k;
	for (size_t i = 0; i < g->operation_count; i++) {
		const nbg_graph_operation *o = &g->operations[i];
		if (o->type != NBG_GRAPH_OP_SW && o->patch_count &&
		    (uint64_t)o->patch_index + o->patch_count <= np)
			assign_range(g, next, diff, o->patch_index, o->patch_count, (int64_t)i, 0);
	}
	for (size_t i = 0; i < g->hw_init_count; i++) {
		const nbg_graph_hw_init *h = &g->hw_inits[i];
		if (h->patch_count && (uint64_t)h->patch_index + h->patch_count <= np)
			assign_range(g, next, diff, h->patch_index, h->patch_count, -1, 1);
	}
	int64_t refs = 0;
	for (size_t k = 0; k < np; k++) {
		nbg_graph_patch *x = &g->patches[k];
		refs += diff[k];
		x->references = (uint32_t)refs;
		g->patches_unreferenced += refs == 0;
		g->patches_shared += refs > 1;

		if (!check(c, R_PATCH_TYPE, nbg_graph_patch_type_name(x->type) != NULL))
			finding(c, rel_defs[R_PATCH_TYPE].id, x->record_offset,
				"patch %zu type %u is not in the public enum; kept as a number", k,
				x->type);
		if (!check(c, R_PATCH_SOURCE, nbg_graph_source_type_name(x->source_type) != NULL))
			finding(c, rel_defs[R_PATCH_SOURCE].id, x->record_offset + FOFF(F_PATCH_SOURCE_TYPE),
				"patch %zu source_type %u is not in the public enum; kept as a "
				"number", k, x->source_type);
		if (x->source_type == NBG_GRAPH_SRC_INPUT || x->source_type == NBG_GRAPH_SRC_OUTPUT) {
			bool in = x->source_type == NBG_GRAPH_SRC_INPUT;
			size_t n = in ? m->input_count : m->output_count;
			if (!check(c, R_PATCH_IO_INDEX, x->index >= 0 && (size_t)x->index < n))
				finding(c, rel_defs[R_PATCH_IO_INDEX].id, x->record_offset + FOFF(F_PATCH_INDEX),
					"patch %zu names %s %d; the file has %zu", k,
					in ? "input" : "output", x->index, n);
		} else if (x->source_type == NBG_GRAPH_SRC_MISC_DYNA_GENERIC && coef->decoded) {
			if (!check(c, R_PATCH_DYNA_INDEX,
				   x->index >= 0 && (size_t)x->index < coef->entry_count))
				finding(c, rel_defs[R_PATCH_DYNA_INDEX].id, x->record_offset + FOFF(F_PATCH_INDEX),
					"patch %zu (MISC_DYNA_GENERIC) index %d; COEF_DATA_TABLE "
					"holds %zu entries", k, x->index, coef->entry_count);
		} else if ((x->source_type == NBG_GRAPH_SRC_MISC_DYNA_INPUT ||
			    x->source_type == NBG_GRAPH_SRC_MISC_DYNA_OUTPUT) && dyn) {
			uint64_t n = dyn->size / 8;
			if (!check(c, R_PATCH_DYNA_INDEX, x->index >= 0 && (uint64_t)x->index < n))
				finding(c, rel_defs[R_PATCH_DYNA_INDEX].id, x->record_offset + FOFF(F_PATCH_INDEX),
					"patch %zu (%s) index %d; DYNAIO_TABLE holds %llu entries",
					k, nbg_graph_source_type_name(x->source_type), x->index,
					(unsigned long long)n);
		}
		/* A state patch writes a 32-bit address into its operation's states. */
		if (x->type == 0 && x->operation >= 0 && st) {
			const nbg_graph_operation *o = &g->operations[x->operation];
			if (o->state_id < st->entry_count &&
			    !check(c, R_PATCH_DEST,
				   (uint64_t)x->dest_offset + 4 <= st->entries[o->state_id].size))
				finding(c, rel_defs[R_PATCH_DEST].id, x->record_offset + FOFF(F_PATCH_DEST_OFFSET),
					"patch %zu dest_offset %u lies outside the %llu-byte "
					"load-state entry %u of operation %lld", k, x->dest_offset,
					(unsigned long long)st->entries[o->state_id].size,
					o->state_id, (long long)x->operation);
		}
	}
	free(next);
	free(diff);
}

static void check_sh(gctx *c)
{
	nbg_graph *g = c->g;
	const nbg_graph_table *it = g->instr_table >= 0 ? &g->tables[g->instr_table] : NULL;
	const nbg_graph_records *pp = &g->ppu_param_records;
	int no_table_reported = 0;

	for (size_t i = 0; i < g->sh_count; i++) {
		const nbg_graph_sh_operation *s = &g->sh_operations[i];
		if (!check(c, R_SH_INSTR, it && s->instr_index < it->entry_count)) {
			if (it)
				finding(c, rel_defs[R_SH_INSTR].id, s->record_offset,
					"SH record %zu instr_index %u; %s holds %zu entries", i,
					s->instr_index, it->name, it->entry_count);
			else if (!no_table_reported++)
				finding(c, rel_defs[R_SH_INSTR].id, s->record_offset,
					"SH records carry instr_index but the file has no "
					"PPU_INSTR_TABLE%s", c->m->family == 1 ? " or LCDT" : "");
		}
		if (s->has_ppu_param_index && pp->present && pp->decoded &&
		    !check(c, R_SH_PPU_PARAM, s->ppu_param_index < pp->count))
			finding(c, rel_defs[R_SH_PPU_PARAM].id, s->record_offset + FOFF(F_SH_PPU_PARAM_INDEX),
				"SH record %zu ppu_param_index %u; PPU_PARAM holds %zu records", i,
				s->ppu_param_index, pp->count);
	}
}

/* ------------------------------------------------------------------- API */

void nbg_graph_free(nbg_graph *g)
{
	if (!g)
		return;
	free(g->layers);
	free(g->operations);
	free(g->patches);
	free(g->sh_operations);
	free(g->sw_operations);
	free(g->hw_inits);
	free(g->ppu_params);
	for (int i = 0; i < NBG_GRAPH_TABLE_COUNT; i++)
		free(g->tables[i].entries);
	free(g->findings);
	free(g);
}


nbg_code nbg_graph_decode(const nbg_model *m, nbg_graph **out, nbg_error *err)
{
	gctx c;
	nbg_graph *g;

	if (out)
		*out = NULL;
	if (!m || !out || (!m->data && m->file_size))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model", "no parsed model to decode");
	/* A model from nbg_parse() always passes; a hand-made one may not. */
	for (size_t i = 0; i < m->section_count; i++) {
		const nbg_section *s = &m->sections[i];
		if (!range_ok(s->offset, s->size, m->file_size))
			return nbg_error_set(err, NBG_E_SECTION_OUT_OF_BOUNDS, s->record_offset, "offset",
				    "section %s [offset %llu, size %llu] lies outside the "
				    "%llu-byte file", tname(s->type),
				    (unsigned long long)s->offset, (unsigned long long)s->size,
				    (unsigned long long)m->file_size);
	}
	if (!(g = calloc(1, sizeof(*g))))
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	memset(&c, 0, sizeof(c));
	c.m = m;
	c.g = g;
	g->family = m->family;
	g->version = m->version;
	g->state_table = g->instr_table = -1;
	g->relation_count = R__COUNT;
	for (int r = 0; r < R__COUNT; r++) {
		g->relations[r].id = rel_defs[r].id;
		g->relations[r].text = rel_defs[r].text;
		g->relations[r].evidence = rel_defs[r].evidence;
	}

	decode_layers(&c);
	decode_operations(&c);
	decode_patches(&c);
	decode_small_records(&c);
	decode_tables(&c);
	if (!c.oom) {
		check_counts(&c);
		check_operations(&c);
		check_layer_operations(&c);
		check_patches(&c);
		check_sh(&c);
	}
	if (c.oom) {
		nbg_graph_free(g);
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	}
	*out = g;
	return NBG_OK;
}

#define AT(fn, type, count, arr)                                       \
	const type *fn(const nbg_graph *g, size_t i)                    \
	{                                                               \
		return g && i < g->count ? &g->arr[i] : NULL;           \
	}
AT(nbg_graph_layer_at, nbg_graph_layer, layer_count, layers)
AT(nbg_graph_operation_at, nbg_graph_operation, operation_count, operations)
AT(nbg_graph_patch_at, nbg_graph_patch, patch_count, patches)
AT(nbg_graph_sh_operation_at, nbg_graph_sh_operation, sh_count, sh_operations)
AT(nbg_graph_sw_operation_at, nbg_graph_sw_operation, sw_count, sw_operations)
AT(nbg_graph_hw_init_at, nbg_graph_hw_init, hw_init_count, hw_inits)
AT(nbg_graph_ppu_param_at, nbg_graph_ppu_param, ppu_param_count, ppu_params)
AT(nbg_graph_finding_at, nbg_graph_finding, finding_count, findings)
AT(nbg_graph_relation_at, nbg_graph_relation, relation_count, relations)
#undef AT

const nbg_graph_table *nbg_graph_table_at(const nbg_graph *g, size_t t)
{
	return g && t < NBG_GRAPH_TABLE_COUNT ? &g->tables[t] : NULL;
}

const nbg_graph_table_entry *nbg_graph_table_entry_at(const nbg_graph *g, size_t t, size_t i)
{
	const nbg_graph_table *tb = nbg_graph_table_at(g, t);
	return tb && i < tb->entry_count ? &tb->entries[i] : NULL;
}
