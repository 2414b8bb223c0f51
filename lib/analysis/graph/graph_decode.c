/*
 * graph_decode.c - the graph records of a parsed model: LAYER, OPERATIONS, PATCH,
 * SH, SW, HWINITOPERATIONS, PPU_PARAM and the (offset, size) tables, decoded
 * through the field map; graph_check.c cross-checks them.
 *
 * The core parser has already proved every section lies inside the file, so
 * nothing here can fail on file contents: a record size the public layouts do
 * not fit, a section that is not a whole number of records and every broken
 * reference become findings.  Each relation is registered up front (stable
 * order in the reports) and counts how often it was checked and held.
 */
#include <stdio.h>
#include <stdlib.h>

#include "analysis/graph/graph_internal.h"
#include "format/records.h"

/* ---------------------------------------------------------------- records */

/* Finds the section of `type` and its record size: sd_entsize in v2, the
 * version's stride (v1_size) in v1.  Records are decoded when the size holds
 * the `min` bytes of the oldest public layout; a size none of the public
 * layouts has (`known`, 0-terminated) is reported but decoded as far as the
 * fields fit. */
static void setup_records(gctx *c, nbg_graph_records *r, uint32_t type, uint32_t v1_size,
			  uint32_t min)
{
	const uint32_t *known = nbg_record_layouts(type);
	const nbg_section *s = nbg_graph_section(c, type);

	r->section_type = type;
	if (!s)
		return;
	r->present = 1;
	r->offset = s->offset;
	r->size = s->size;
	r->record_size = c->m->family == 2 ? s->entry_size : v1_size;
	if (r->record_size < min) {
		if (s->size)
			nbg_graph_finding_add(c, "record-size-unusable", s->record_offset,
				"%s records are %u bytes; the public layout needs at least %u: "
				"the section is not decoded", nbg_graph_tname(type), r->record_size, min);
		return;
	}
	r->decoded = 1;
	r->count = (size_t)(s->size / r->record_size);
	r->trailing_bytes = s->size % r->record_size;
	if (r->trailing_bytes)
		nbg_graph_finding_add(c, "section-size-not-multiple", s->record_offset,
			"%s is %llu bytes, not a whole number of %u-byte records: the last "
			"%llu bytes are not decoded", nbg_graph_tname(type), (unsigned long long)s->size,
			r->record_size, (unsigned long long)r->trailing_bytes);
	for (const uint32_t *k = known; *k; k++)
		if (*k == r->record_size)
			return;
	nbg_graph_finding_add(c, "record-size-unexpected", s->record_offset,
		"%s records are %u bytes, a size no public layout has: fields that fit are "
		"decoded, the rest of each record is not", nbg_graph_tname(type), r->record_size);
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

static void decode_layers(gctx *c)
{
	nbg_graph *g = c->g;
	nbg_graph_records *r = &g->sum.layer_records;
	const uint32_t v1 = c->m->v1.layer_stride;

	setup_records(c, r, NBG_SEC_LAYER, v1, 72);
	if (!r->decoded || !(g->layers = nbg_graph_alloc(c, r->count, sizeof(*g->layers))))
		return;
	g->sum.layer_count = r->count;
	for (size_t i = 0; i < r->count; i++) {
		const uint8_t *p = nbg_graph_rec(c, r, i);
		nbg_graph_layer *l = &g->layers[i];
		l->record_offset = (uint64_t)(p - c->m->data);
		copy_name(l->name, p + nbg_fid_desc(F_LAYER_NAME)->offset);
		l->name_printable = printable(l->name);
		l->node_id = nbg_fid_u32(p, F_LAYER_NODE_ID);
		l->operation_count = nbg_fid_u32(p, F_LAYER_OP_COUNT);
		if ((l->has_uid = nbg_graph_fits(r, F_LAYER_UID)))
			l->uid = nbg_fid_u32(p, F_LAYER_UID);
	}
}

static void decode_operations(gctx *c)
{
	nbg_graph *g = c->g;
	nbg_graph_records *r = &g->sum.operation_records;

	setup_records(c, r, NBG_SEC_OPERATIONS, c->m->v1.operation_stride, 24);
	if (!r->decoded ||
	    !(g->operations = nbg_graph_alloc(c, r->count, sizeof(*g->operations))))
		return;
	g->sum.operation_count = r->count;
	for (size_t i = 0; i < r->count; i++) {
		const uint8_t *p = nbg_graph_rec(c, r, i);
		nbg_graph_operation *o = &g->operations[i];
		o->record_offset = (uint64_t)(p - c->m->data);
		o->type = nbg_fid_u32(p, F_OP_TYPE);
		o->index = nbg_fid_u32(p, F_OP_INDEX);
		o->layer_id = nbg_fid_u32(p, F_OP_LAYER_ID);
		o->state_id = nbg_fid_u32(p, F_OP_STATE_ID);
		o->patch_index = nbg_fid_u32(p, F_OP_PATCH_INDEX);
		o->patch_count = nbg_fid_u32(p, F_OP_PATCH_COUNT);
		if ((o->has_preempt = nbg_graph_fits(r, F_OP_PREEMPT_WORD))) {
			o->preempt_word = nbg_fid_u32(p, F_OP_PREEMPT_WORD);
			o->preempt = nbg_fid_u32(p, F_OP_PREEMPT);
			o->abs_share_id = nbg_fid_u32(p, F_OP_ABS_SHARE_ID);
		}
		if ((o->has_abs_op_id = nbg_graph_fits(r, F_OP_ABS_OP_ID)))
			o->abs_op_id = nbg_fid_u32(p, F_OP_ABS_OP_ID);
		if (o->type <= NBG_GRAPH_OP_NT)
			g->sum.ops_by_type[o->type]++;
		else if (o->type == NBG_GRAPH_OP_END)
			g->sum.ops_by_type[9]++;
		else if (o->type == NBG_GRAPH_OP_INIT)
			g->sum.ops_by_type[10]++;
		else
			g->sum.ops_by_type[11]++;
	}
}

static void decode_patches(gctx *c)
{
	nbg_graph *g = c->g;
	nbg_graph_records *r = &g->sum.patch_records;

	setup_records(c, r, NBG_SEC_PATCH, c->m->v1.patch_stride, 24);
	if (!r->decoded || !(g->patches = nbg_graph_alloc(c, r->count, sizeof(*g->patches))))
		return;
	g->sum.patch_count = r->count;
	for (size_t i = 0; i < r->count; i++) {
		const uint8_t *p = nbg_graph_rec(c, r, i);
		nbg_graph_patch *x = &g->patches[i];
		x->record_offset = (uint64_t)(p - c->m->data);
		x->type = nbg_fid_u32(p, F_PATCH_TYPE);
		x->dest_offset = nbg_fid_u32(p, F_PATCH_DEST_OFFSET);
		x->source_type = nbg_fid_u32(p, F_PATCH_SOURCE_TYPE);
		x->index = (int32_t)nbg_fid_u32(p, F_PATCH_INDEX);
		x->src_offset = nbg_fid_u32(p, F_PATCH_SRC_OFFSET);
		x->transformed = nbg_fid_u32(p, F_PATCH_TRANSFORMED);
		if ((x->has_name = nbg_graph_fits(r, F_PATCH_NAME)))
			x->name = nbg_fid_u32(p, F_PATCH_NAME);
		if ((x->has_high = nbg_graph_fits(r, F_PATCH_MASK_H))) {
			x->dest_offset_h = nbg_fid_u32(p, F_PATCH_DEST_OFFSET_H);
			x->src_offset_h = nbg_fid_u32(p, F_PATCH_SRC_OFFSET_H);
			x->mask_h = nbg_fid_u32(p, F_PATCH_MASK_H);
		}
		x->operation = -1;
	}
}

static void decode_small_records(gctx *c)
{
	nbg_graph *g = c->g;
	nbg_graph_records *r;

	r = &g->sum.sh_records;
	setup_records(c, r, NBG_SEC_SH, c->m->v1.sh_stride, 4);
	if (r->decoded && (g->sh_operations = nbg_graph_alloc(c, r->count, sizeof(*g->sh_operations)))) {
		g->sum.sh_count = r->count;
		for (size_t i = 0; i < r->count; i++) {
			const uint8_t *p = nbg_graph_rec(c, r, i);
			nbg_graph_sh_operation *s = &g->sh_operations[i];
			s->record_offset = (uint64_t)(p - c->m->data);
			s->instr_index = nbg_fid_u32(p, F_SH_INSTR_INDEX);
			if ((s->has_ppu_param_index = nbg_graph_fits(r, F_SH_PPU_PARAM_INDEX)))
				s->ppu_param_index = nbg_fid_u32(p, F_SH_PPU_PARAM_INDEX);
		}
	}

	r = &g->sum.sw_records;
	setup_records(c, r, NBG_SEC_SW, c->m->v1.sw_stride, 4);
	if (r->decoded && (g->sw_operations = nbg_graph_alloc(c, r->count, sizeof(*g->sw_operations)))) {
		g->sum.sw_count = r->count;
		for (size_t i = 0; i < r->count; i++) {
			const uint8_t *p = nbg_graph_rec(c, r, i);
			nbg_graph_sw_operation *s = &g->sw_operations[i];
			s->record_offset = (uint64_t)(p - c->m->data);
			s->sw_operation_type = nbg_fid_u32(p, F_SW_TYPE);
			if ((s->has_name = nbg_graph_fits(r, F_SW_NAME)))
				copy_name(s->name, p + nbg_fid_desc(F_SW_NAME)->offset);
		}
	}

	/* v1 has no per-version stride for these: the public structures' sizes. */
	r = &g->sum.hw_init_records;
	setup_records(c, r, NBG_SEC_HWINITOPERATIONS, 12, 12);
	if (r->decoded && (g->hw_inits = nbg_graph_alloc(c, r->count, sizeof(*g->hw_inits)))) {
		g->sum.hw_init_count = r->count;
		for (size_t i = 0; i < r->count; i++) {
			const uint8_t *p = nbg_graph_rec(c, r, i);
			nbg_graph_hw_init *h = &g->hw_inits[i];
			h->record_offset = (uint64_t)(p - c->m->data);
			h->state_id = nbg_fid_u32(p, F_HWI_STATE_ID);
			h->patch_index = nbg_fid_u32(p, F_HWI_PATCH_INDEX);
			h->patch_count = nbg_fid_u32(p, F_HWI_PATCH_COUNT);
		}
	}

	r = &g->sum.ppu_param_records;
	setup_records(c, r, NBG_SEC_PPU_PARAM, 48, 48);
	if (r->decoded && (g->ppu_params = nbg_graph_alloc(c, r->count, sizeof(*g->ppu_params)))) {
		g->sum.ppu_param_count = r->count;
		for (size_t i = 0; i < r->count; i++) {
			const uint8_t *p = nbg_graph_rec(c, r, i);
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
	r = &g->sum.layer_param_records;
	{
		const nbg_section *s = nbg_graph_section(c, NBG_SEC_LAYER_PARAM);
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
	span *v = nbg_graph_alloc(c, t->entry_count, sizeof(span));
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
		ts = nbg_graph_section(c, t->table_type);
		ds = nbg_graph_section(c, t->data_type);
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
				nbg_graph_finding_add(c, "record-size-unusable", ts->record_offset,
					"%s entries are %u bytes; the (offset, size) pair is 8: the "
					"table is not decoded", t->name, t->entry_size);
			continue;
		}
		t->decoded = 1;
		t->entry_count = (size_t)(ts->size / 8);
		t->trailing_bytes = ts->size % 8;
		if (t->trailing_bytes)
			nbg_graph_finding_add(c, "section-size-not-multiple", ts->record_offset,
				"%s is %llu bytes, not a whole number of 8-byte entries: the last "
				"%llu bytes are not decoded", t->name,
				(unsigned long long)ts->size, (unsigned long long)t->trailing_bytes);
		if (!(t->entries = nbg_graph_alloc(c, t->entry_count, sizeof(*t->entries))))
			return;
		if (t->entry_count && !ds)
			nbg_graph_finding_add(c, nbg_graph_rel_defs[R_TABLE_ENTRY].id, ts->record_offset,
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
			if (!nbg_graph_check(c, R_TABLE_ENTRY, e->in_bounds)) {
				t->out_of_bounds++;
				if (ds)
					nbg_graph_finding_add(c, nbg_graph_rel_defs[R_TABLE_ENTRY].id, e->record_offset,
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
	g->sum.state_table = g->tables[NBG_GRAPH_TABLE_LOADSTATE].decoded ? NBG_GRAPH_TABLE_LOADSTATE
		       : g->tables[NBG_GRAPH_TABLE_LCD].decoded	    ? NBG_GRAPH_TABLE_LCD
								    : -1;
	g->sum.instr_table = g->tables[NBG_GRAPH_TABLE_PPU_INSTR].decoded ? NBG_GRAPH_TABLE_PPU_INSTR
		       : g->tables[NBG_GRAPH_TABLE_LCD].decoded	    ? NBG_GRAPH_TABLE_LCD
								    : -1;
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
				    "%llu-byte file", nbg_graph_tname(s->type),
				    (unsigned long long)s->offset, (unsigned long long)s->size,
				    (unsigned long long)m->file_size);
	}
	if (!(g = calloc(1, sizeof(*g))))
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	memset(&c, 0, sizeof(c));
	c.m = m;
	c.g = g;
	g->sum.family = m->family;
	g->sum.version = m->version;
	g->sum.state_table = g->sum.instr_table = -1;
	g->sum.relation_count = R__COUNT;
	for (int r = 0; r < R__COUNT; r++) {
		g->relations[r].id = nbg_graph_rel_defs[r].id;
		g->relations[r].text = nbg_graph_rel_defs[r].text;
		g->relations[r].evidence = nbg_graph_rel_defs[r].evidence;
	}

	decode_layers(&c);
	decode_operations(&c);
	decode_patches(&c);
	decode_small_records(&c);
	decode_tables(&c);
	if (!c.oom) {
		nbg_graph_check_counts(&c);
		nbg_graph_check_operations(&c);
		nbg_graph_check_layer_operations(&c);
		nbg_graph_check_patches(&c);
		nbg_graph_check_sh(&c);
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
		return g && i < g->sum.count ? &g->arr[i] : NULL;       \
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

const nbg_graph_summary *nbg_graph_summary_of(const nbg_graph *g)
{
	return g ? &g->sum : NULL;
}

const nbg_graph_table *nbg_graph_table_at(const nbg_graph *g, size_t t)
{
	return g && t < NBG_GRAPH_TABLE_COUNT ? &g->tables[t] : NULL;
}

const nbg_graph_table_entry *nbg_graph_table_entry_at(const nbg_graph *g, size_t t, size_t i)
{
	const nbg_graph_table *tb = nbg_graph_table_at(g, t);
	return tb && i < tb->entry_count ? &tb->entries[i] : NULL;
}
