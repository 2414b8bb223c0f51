/*
 * json_graph.c - the decoded graph as JSON.  Record
 * fields are emitted from the file bytes through the field map, so their keys
 * are the field map's parser keys; derived values (names of enum values,
 * owners, coverage) are added next to them.  The record arrays are streamed
 * (json_stream.h): one record's value exists at a time.
 */
#include <stdio.h>
#include <stdlib.h>

#include "nbg/graph.h"
#include "nbg/memory.h"
#include "report/report_internal.h"

static json_t *name_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *records_json(const nbg_graph_records *r)
{
	if (!r->present)
		return json_null();
	return json_pack("{s:I,s:s?,s:I,s:I,s:I,s:b,s:I,s:I}", "section_type",
			 (json_int_t)r->section_type, "section_name",
			 nbg_section_type_name(r->section_type), "offset", (json_int_t)r->offset,
			 "size", (json_int_t)r->size, "record_size", (json_int_t)r->record_size,
			 "decoded", r->decoded, "count", (json_int_t)r->count, "trailing_bytes",
			 (json_int_t)r->trailing_bytes);
}

/* A record object: its position, its file offset, then its fields. */
static json_t *record_object(size_t i, uint64_t offset)
{
	json_t *o = json_object();
	json_object_set_new(o, "record_index", json_integer((json_int_t)i));
	json_object_set_new(o, "record_offset", json_integer((json_int_t)offset));
	return o;
}

static json_t *summary_json(const nbg_graph *g)
{
	json_t *o = json_object(), *recs = json_object(), *bytype = json_object(),
	       *rels = json_array();

	json_object_set_new(recs, "layer", records_json(&nbg_graph_summary_of(g)->layer_records));
	json_object_set_new(recs, "operation", records_json(&nbg_graph_summary_of(g)->operation_records));
	json_object_set_new(recs, "patch", records_json(&nbg_graph_summary_of(g)->patch_records));
	json_object_set_new(recs, "sh_operation", records_json(&nbg_graph_summary_of(g)->sh_records));
	json_object_set_new(recs, "sw_operation", records_json(&nbg_graph_summary_of(g)->sw_records));
	json_object_set_new(recs, "hw_init_operation", records_json(&nbg_graph_summary_of(g)->hw_init_records));
	json_object_set_new(recs, "ppu_param", records_json(&nbg_graph_summary_of(g)->ppu_param_records));
	json_object_set_new(recs, "layer_param", records_json(&nbg_graph_summary_of(g)->layer_param_records));

	json_object_set_new(o, "layer_count", json_integer((json_int_t)nbg_graph_summary_of(g)->layer_count));
	json_object_set_new(o, "operation_count", json_integer((json_int_t)nbg_graph_summary_of(g)->operation_count));
	json_object_set_new(o, "patch_count", json_integer((json_int_t)nbg_graph_summary_of(g)->patch_count));
	json_object_set_new(o, "sh_operation_count", json_integer((json_int_t)nbg_graph_summary_of(g)->sh_count));
	json_object_set_new(o, "sw_operation_count", json_integer((json_int_t)nbg_graph_summary_of(g)->sw_count));
	json_object_set_new(o, "hw_init_operation_count",
			    json_integer((json_int_t)nbg_graph_summary_of(g)->hw_init_count));
	json_object_set_new(o, "ppu_param_count", json_integer((json_int_t)nbg_graph_summary_of(g)->ppu_param_count));
	json_object_set_new(o, "records", recs);
	for (size_t t = 0; t < NBG_GRAPH_OP_BUCKETS; t++)
		if (nbg_graph_summary_of(g)->ops_by_type[t])
			json_object_set_new(bytype, nbg_graph_op_bucket_name(t),
					    json_integer((json_int_t)nbg_graph_summary_of(g)->ops_by_type[t]));
	json_object_set_new(o, "operations_by_type", bytype);
	json_object_set_new(o, "distinct_abs_op_ids", json_integer((json_int_t)nbg_graph_summary_of(g)->abs_op_ids));
	json_object_set_new(o, "patches_unreferenced",
			    json_integer((json_int_t)nbg_graph_summary_of(g)->patches_unreferenced));
	json_object_set_new(o, "patches_shared", json_integer((json_int_t)nbg_graph_summary_of(g)->patches_shared));
	json_object_set_new(o, "state_table",
			    nbg_graph_summary_of(g)->state_table >= 0 ? json_string(nbg_graph_table_at(g, nbg_graph_summary_of(g)->state_table)->name)
						: json_null());
	json_object_set_new(o, "instr_table",
			    nbg_graph_summary_of(g)->instr_table >= 0 ? json_string(nbg_graph_table_at(g, nbg_graph_summary_of(g)->instr_table)->name)
						: json_null());
	for (size_t r = 0; r < nbg_graph_summary_of(g)->relation_count; r++) {
		const nbg_graph_relation *x = nbg_graph_relation_at(g, r);
		json_array_append_new(rels, json_pack("{s:s,s:s,s:s,s:I,s:I,s:b}", "id", x->id,
						      "text", x->text, "evidence", x->evidence,
						      "checked", (json_int_t)x->checked, "held",
						      (json_int_t)x->held, "holds",
						      x->checked == x->held));
	}
	json_object_set_new(o, "relations", rels);
	json_object_set_new(o, "finding_count", json_integer((json_int_t)nbg_graph_summary_of(g)->finding_count));
	json_object_set_new(o, "findings_dropped", json_integer((json_int_t)nbg_graph_summary_of(g)->findings_dropped));
	return o;
}

static json_t *layer_json(const nbg_model *m, const nbg_graph *g, size_t i, bool abs)
{
	const nbg_graph_layer *l = nbg_graph_layer_at(g, i);
	json_t *o = record_object(i, l->record_offset);

	nbg_json_emit_fields(o, m->data + l->record_offset, F_LAYER_NAME,
			     l->has_uid ? F_LAYER_UID : F_LAYER_OP_COUNT, 0, F_LAYER_NAME);
	json_object_set_new(o, "name_printable", json_boolean(l->name_printable));
	json_object_set_new(o, "operation_records", json_integer(l->operation_records));
	json_object_set_new(o, "distinct_abs_op_ids",
			    abs ? json_integer(l->distinct_abs_ops) : json_null());
	return o;
}

static void layers_json(nbg_jw *w, const nbg_model *m, const nbg_graph *g)
{
	bool abs = nbg_graph_summary_of(g)->operation_count && nbg_graph_operation_at(g, 0)->has_abs_op_id;

	nbg_jw_array(w, "layers");
	for (size_t i = 0; i < nbg_graph_summary_of(g)->layer_count; i++)
		nbg_jw_put(w, NULL, layer_json(m, g, i, abs));
	nbg_jw_end(w);
}

/* One operation record; `r` (may be NULL) adds its "sizes". */
static json_t *operation_json(const nbg_model *m, const nbg_graph *g, size_t i,
			      const nbg_mem_report *r)
{
	const nbg_graph_operation *op = nbg_graph_operation_at(g, i);
	const uint8_t *p = m->data + op->record_offset;
	json_t *o = record_object(i, op->record_offset);

	nbg_json_emit_fields(o, p, F_OP_TYPE, F_OP_PATCH_COUNT, 0, F_OP_TYPE);
	json_object_set_new(o, "type_name", name_or_null(nbg_graph_op_type_name(op->type)));
	if (op->has_preempt)
		nbg_json_emit_fields(o, p, F_OP_PREEMPT_WORD, F_OP_ABS_SHARE_ID, 0,
				     F_OP_PREEMPT_WORD);
	if (op->has_abs_op_id)
		nbg_json_emit_fields(o, p, F_OP_ABS_OP_ID, F_OP_ABS_OP_ID, 0, F_OP_ABS_OP_ID);
	json_object_set_new(o, "layer_name",
			    op->layer_id < nbg_graph_summary_of(g)->layer_count
				    ? nbg_json_text(nbg_graph_layer_at(g, op->layer_id)->name, 64)
				    : json_null());
	if (r && i < nbg_mem_operation_count(r))
		json_object_set_new(o, "sizes", nbg_json_memory_operation_sizes(r, i));
	return o;
}

static void operations_json(nbg_jw *w, const nbg_model *m, const nbg_graph *g,
			    const nbg_mem_report *r)
{
	nbg_jw_array(w, "operations");
	for (size_t i = 0; i < nbg_graph_summary_of(g)->operation_count; i++)
		nbg_jw_put(w, NULL, operation_json(m, g, i, r));
	nbg_jw_end(w);
}

static json_t *patch_json(const nbg_model *m, const nbg_graph *g, size_t i)
{
	const nbg_graph_patch *x = nbg_graph_patch_at(g, i);
	const uint8_t *p = m->data + x->record_offset;
	json_t *o = record_object(i, x->record_offset);
	enum nbg_fid last = x->has_high ? F_PATCH_MASK_H
			  : x->has_name ? F_PATCH_NAME : F_PATCH_TRANSFORMED;

	nbg_json_emit_fields(o, p, F_PATCH_TYPE, last, 0, F_PATCH_TYPE);
	json_object_set_new(o, "type_name", name_or_null(nbg_graph_patch_type_name(x->type)));
	json_object_set_new(o, "source_type_name",
			    name_or_null(nbg_graph_source_type_name(x->source_type)));
	json_object_set_new(o, "operation", x->operation >= 0
						    ? json_integer((json_int_t)x->operation)
						    : json_null());
	json_object_set_new(o, "hw_init", json_boolean(x->hw_init));
	json_object_set_new(o, "references", json_integer(x->references));
	return o;
}

static void patches_json(nbg_jw *w, const nbg_model *m, const nbg_graph *g)
{
	nbg_jw_array(w, "patches");
	for (size_t i = 0; i < nbg_graph_summary_of(g)->patch_count; i++)
		nbg_jw_put(w, NULL, patch_json(m, g, i));
	nbg_jw_end(w);
}

/* Records of a small kind: record_index, record_offset, then the fields
 * first..last read at the record. */
static json_t *small_record(const nbg_model *m, size_t i, uint64_t offset, enum nbg_fid first,
			    enum nbg_fid last)
{
	json_t *o = record_object(i, offset);
	nbg_json_emit_fields(o, m->data + offset, first, last, 0, first);
	return o;
}

static void small_records_json(nbg_jw *w, const nbg_model *m, const nbg_graph *g)
{
	nbg_jw_array(w, "sh_operations");
	for (size_t i = 0; i < nbg_graph_summary_of(g)->sh_count; i++) {
		const nbg_graph_sh_operation *s = nbg_graph_sh_operation_at(g, i);
		nbg_jw_put(w, NULL, small_record(m, i, s->record_offset, F_SH_INSTR_INDEX,
						 s->has_ppu_param_index ? F_SH_PPU_PARAM_INDEX
									: F_SH_INSTR_INDEX));
	}
	nbg_jw_end(w);

	nbg_jw_array(w, "sw_operations");
	for (size_t i = 0; i < nbg_graph_summary_of(g)->sw_count; i++) {
		const nbg_graph_sw_operation *s = nbg_graph_sw_operation_at(g, i);
		nbg_jw_put(w, NULL, small_record(m, i, s->record_offset, F_SW_TYPE,
						 s->has_name ? F_SW_NAME : F_SW_TYPE));
	}
	nbg_jw_end(w);

	nbg_jw_array(w, "hw_init_operations");
	for (size_t i = 0; i < nbg_graph_summary_of(g)->hw_init_count; i++)
		nbg_jw_put(w, NULL, small_record(m, i, nbg_graph_hw_init_at(g, i)->record_offset,
						 F_HWI_STATE_ID, F_HWI_PATCH_COUNT));
	nbg_jw_end(w);

	nbg_jw_array(w, "ppu_params");
	for (size_t i = 0; i < nbg_graph_summary_of(g)->ppu_param_count; i++)
		nbg_jw_put(w, NULL, small_record(m, i, nbg_graph_ppu_param_at(g, i)->record_offset,
						 F_PPU_GLOBAL_OFFSET_X, F_PPU_GROUP_COUNT_Z));
	nbg_jw_end(w);
}

/* A table without its entries. */
static json_t *table_json(const nbg_graph_table *t)
{
	json_t *o = json_pack("{s:s,s:s,s:I,s:I,s:b,s:b}", "name", t->name, "data_name",
			      t->data_name, "table_type", (json_int_t)t->table_type, "data_type",
			      (json_int_t)t->data_type, "present", t->present, "data_present",
			      t->data_present);

	json_object_set_new(o, "table_offset", json_integer((json_int_t)t->table_offset));
	json_object_set_new(o, "table_size", json_integer((json_int_t)t->table_size));
	json_object_set_new(o, "data_offset", json_integer((json_int_t)t->data_offset));
	json_object_set_new(o, "data_size", json_integer((json_int_t)t->data_size));
	json_object_set_new(o, "entry_size", json_integer(t->entry_size));
	json_object_set_new(o, "decoded", json_boolean(t->decoded));
	json_object_set_new(o, "trailing_bytes", json_integer((json_int_t)t->trailing_bytes));
	json_object_set_new(o, "entry_count", json_integer((json_int_t)t->entry_count));
	json_object_set_new(o, "out_of_bounds", json_integer((json_int_t)t->out_of_bounds));
	json_object_set_new(o, "empty_entries", json_integer((json_int_t)t->empty_entries));
	json_object_set_new(o, "covered_bytes", json_integer((json_int_t)t->covered_bytes));
	json_object_set_new(o, "uncovered_bytes", json_integer((json_int_t)t->uncovered_bytes));
	json_object_set_new(o, "uncovered_ranges", json_integer(t->uncovered_ranges));
	json_object_set_new(o, "uncovered_nonzero_bytes",
			    json_integer((json_int_t)t->uncovered_nonzero_bytes));
	json_object_set_new(o, "overlap_bytes", json_integer((json_int_t)t->overlap_bytes));
	return o;
}

static void tables_json(nbg_jw *w, const nbg_model *m, const nbg_graph *g)
{
	nbg_jw_array(w, "tables");
	for (int i = 0; i < NBG_GRAPH_TABLE_COUNT; i++) {
		const nbg_graph_table *t = nbg_graph_table_at(g, i);

		if (!t->present && !t->data_present)
			continue;
		nbg_jw_object(w, NULL);
		nbg_jw_members(w, table_json(t));
		nbg_jw_array(w, "entries");
		for (size_t k = 0; k < t->entry_count; k++) {
			const nbg_graph_table_entry *e = &t->entries[k];
			json_t *eo = record_object(k, e->record_offset);
			nbg_json_emit_fields(eo, m->data + e->record_offset, F_TAB_OFFSET,
					     F_TAB_SIZE, 0, F_TAB_OFFSET);
			json_object_set_new(eo, "in_bounds", json_boolean(e->in_bounds));
			nbg_jw_put(w, NULL, eo);
		}
		nbg_jw_end(w);
		nbg_jw_end(w);
	}
	nbg_jw_end(w);
}

static void findings_json(nbg_jw *w, const nbg_graph *g)
{
	nbg_jw_array(w, "graph_findings");
	for (size_t i = 0; i < nbg_graph_summary_of(g)->finding_count; i++)
		nbg_jw_put(w, NULL, json_pack("{s:s,s:I,s:s}", "id", nbg_graph_finding_at(g, i)->id, "offset",
					      (json_int_t)nbg_graph_finding_at(g, i)->offset, "text",
					      nbg_graph_finding_at(g, i)->text));
	nbg_jw_end(w);
}

void nbg_graph_json_write(nbg_jw *w, const nbg_model *m, const nbg_graph *g, unsigned what,
			  const nbg_mem_report *sizes)
{
	if (what == 0)
		what = NBG_GRAPH_JSON_ALL;
	if (what & NBG_GRAPH_JSON_SUMMARY)
		nbg_jw_put(w, "graph", summary_json(g));
	if (what & NBG_GRAPH_JSON_LAYERS)
		layers_json(w, m, g);
	if (what & NBG_GRAPH_JSON_OPERATIONS) {
		operations_json(w, m, g, sizes);
		small_records_json(w, m, g);
	}
	if (what & NBG_GRAPH_JSON_PATCHES)
		patches_json(w, m, g);
	if (what & NBG_GRAPH_JSON_TABLES)
		tables_json(w, m, g);
	if (what & NBG_GRAPH_JSON_FINDINGS)
		findings_json(w, g);
}

