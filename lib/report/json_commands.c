/*
 * json_commands.c - the decoded NN and TP commands, the
 * per-operation summaries, the chained images and the relations as JSON.
 * Field keys are the open driver's field names (commands_fields.c); every
 * command also keeps its raw words, so nothing unknown is lost.  The
 * command and operation arrays are streamed (json_stream.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "nbg/commands.h"
#include "report/report_internal.h"

static json_t *name_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *u3(const uint32_t v[3])
{
	return json_pack("[I,I,I]", (json_int_t)v[0], (json_int_t)v[1], (json_int_t)v[2]);
}

static json_t *ref_json(const nbg_cmd_ref *r)
{
	if (!r->patched)
		return json_pack("{s:b,s:I}", "patched", 0, "stored_offset", (json_int_t)r->offset);
	return json_pack("{s:b,s:I,s:I,s:o,s:I,s:I,s:I}", "patched", 1, "patch",
			 (json_int_t)r->patch, "source_type", (json_int_t)r->source_type,
			 "source_type_name", name_or_null(nbg_graph_source_type_name(r->source_type)),
			 "index", (json_int_t)r->index, "src_offset", (json_int_t)r->src_offset,
			 "offset", (json_int_t)r->offset);
}

/* Field values by key; address fields a patch relocates carry the patch too. */
static json_t *command_json(const nbg_commands *c, const nbg_graph *g, const nbg_cmd *cmd)
{
	size_t nf;
	const nbg_cmd_field *t = nbg_command_fields(cmd->engine, &nf);
	json_t *o = json_object(), *fields = json_object(), *patched = json_object(),
	       *words = json_array(), *unnamed = json_object();

	json_object_set_new(o, "index", json_integer(cmd->index));
	json_object_set_new(o, "offset", json_integer((json_int_t)cmd->offset));
	json_object_set_new(o, "operation", cmd->operation >= 0
				? json_integer((json_int_t)cmd->operation) : json_null());
	for (size_t f = 0; f < nf; f++) {
		json_object_set_new(fields, t[f].key, json_integer(cmd->values[f]));
		if (t[f].role == NBG_CMDF_ADDRESS && t[f].word < 64 &&
		    (cmd->patched_words >> t[f].word & 1) && cmd->operation >= 0) {
			const nbg_graph_operation *op = nbg_graph_operation_at(g, (size_t)cmd->operation);
			for (uint64_t i = op->patch_index;
			     i < (uint64_t)op->patch_index + op->patch_count && i < nbg_graph_summary_of(g)->patch_count; i++) {
				const nbg_graph_patch *p = nbg_graph_patch_at(g, (size_t)i);
				if (p->type == 1 && p->dest_offset == 4u * t[f].word)
					json_object_set_new(patched, t[f].key,
							    json_pack("{s:I,s:s?,s:I,s:I}", "patch",
								      (json_int_t)i, "source_type_name",
								      nbg_graph_source_type_name(p->source_type),
								      "index", (json_int_t)p->index,
								      "src_offset", (json_int_t)p->src_offset));
			}
		}
	}
	for (uint32_t w = 0; w < cmd->word_count; w++) {
		json_array_append_new(words, json_integer(cmd->words[w]));
		if (w < 64 && (cmd->unnamed_nonzero >> w & 1)) {
			char k[12];
			snprintf(k, sizeof(k), "%u", w);
			json_object_set_new(unnamed, k, json_integer(cmd->words[w]));
		}
	}
	json_object_set_new(o, "fields", fields);
	json_object_set_new(o, "patched_fields", patched);
	json_object_set_new(o, "unnamed_nonzero_words", unnamed);
	json_object_set_new(o, "words", words);
	(void)c;
	return o;
}

static void section_json(nbg_jw *w, const char *key, const nbg_commands *c, const nbg_graph *g,
			 unsigned e)
{
	const nbg_cmd_section *s = nbg_commands_section(c, e);
	json_t *o, *ev;
	size_t nf;
	const nbg_cmd_field *t = nbg_command_fields(e, &nf);

	if (!s->present) {
		nbg_jw_put(w, key, json_null());
		return;
	}
	o = json_pack("{s:I,s:I,s:I,s:s,s:b,s:I,s:I}", "offset", (json_int_t)s->offset, "size",
		      (json_int_t)s->size, "command_size", (json_int_t)s->command_size,
		      "command_size_source", s->size_source ? s->size_source : "unknown",
		      "decoded", s->decoded, "count", (json_int_t)s->count, "trailing_bytes",
		      (json_int_t)s->trailing_bytes);
	ev = json_object();
	for (size_t f = 0; f < nf; f++)
		json_object_set_new(ev, t[f].key, json_string(t[f].evidence));
	json_object_set_new(o, "field_evidence", ev);
	nbg_jw_object(w, key);
	nbg_jw_members(w, o);
	nbg_jw_array(w, "commands");
	for (size_t i = 0; i < nbg_commands_count(c, e); i++)
		nbg_jw_put(w, NULL, command_json(c, g, nbg_commands_at(c, e, i)));
	nbg_jw_end(w);
	nbg_jw_end(w);
}

static json_t *op_json(const nbg_graph *g, const nbg_cmd_op *op)
{
	char desc[160];
	json_t *o = json_object();

	json_object_set_new(o, "operation", json_integer((json_int_t)op->operation));
	json_object_set_new(o, "engine", json_string(nbg_command_engine_name(op->engine)));
	json_object_set_new(o, "type", json_integer(op->type));
	json_object_set_new(o, "type_name", name_or_null(nbg_graph_op_type_name(op->type)));
	json_object_set_new(o, "command", json_integer(op->command));
	json_object_set_new(o, "layer_id", json_integer(op->layer_id));
	json_object_set_new(o, "layer_name", op->layer_id < nbg_graph_summary_of(g)->layer_count
				? nbg_json_text(nbg_graph_layer_at(g, op->layer_id)->name, 64) : json_null());
	json_object_set_new(o, "kind", json_string(op->kind));
	json_object_set_new(o, "description",
			    json_string(nbg_command_describe(op, desc, sizeof(desc))));
	if (op->engine == NBG_CMD_NN) {
		json_object_set_new(o, "kernel", u3(op->kernel));
		json_object_set_new(o, "output", u3(op->out));
		json_object_set_new(o, "output_before_pooling", u3(op->out_conv));
		json_object_set_new(o, "output_subsample", json_integer(op->out_subsample));
		json_object_set_new(o, "output_subsample_inferred",
				    json_boolean(op->out_subsample_inferred));
		json_object_set_new(o, "kernel_data_type", name_or_null(nbg_command_data_type_name(op->kernel_type)));
		json_object_set_new(o, "pooling", name_or_null(nbg_command_pooling_name(op->pooling)));
		json_object_set_new(o, "pooling_size", json_integer(op->pooling_size));
		json_object_set_new(o, "kernel_bytes", json_integer((json_int_t)op->kernel_bytes));
		json_object_set_new(o, "kernel_ref", ref_json(&op->kernel_ref));
	}
	json_object_set_new(o, "input", u3(op->in));
	json_object_set_new(o, "input_data_type_code", json_integer(op->in_type));
	json_object_set_new(o, "input_data_type", name_or_null(nbg_command_data_type_name(op->in_type)));
	json_object_set_new(o, "output_data_type_code", json_integer(op->out_type));
	json_object_set_new(o, "output_data_type", name_or_null(nbg_command_data_type_name(op->out_type)));
	json_object_set_new(o, "relu", json_boolean(op->relu));
	json_object_set_new(o, "input_ref", ref_json(&op->in_ref));
	json_object_set_new(o, "output_ref", ref_json(&op->out_ref));
	json_object_set_new(o, "input_bytes", json_integer((json_int_t)op->in_bytes));
	json_object_set_new(o, "output_bytes", json_integer((json_int_t)op->out_bytes));
	json_object_set_new(o, "input_record", op->input_record >= 0
				? json_integer(op->input_record) : json_null());
	json_object_set_new(o, "output_record", op->output_record >= 0
				? json_integer(op->output_record) : json_null());
	json_object_set_new(o, "producer", op->producer >= 0
				? json_integer((json_int_t)op->producer) : json_null());
	json_object_set_new(o, "dataflow",
			    json_pack("{s:I,s:I,s:I,s:b,s:I,s:I,s:I,s:I,s:i,s:i}", "read_bytes",
				      (json_int_t)op->read_bytes, "unexplained_read_bytes",
				      (json_int_t)op->unexplained_bytes, "write_bytes",
				      (json_int_t)op->write_bytes, "approximate",
				      op->footprint_approximate, "input_row_stride",
				      (json_int_t)op->in_row_stride, "input_slice_stride",
				      (json_int_t)op->in_slice_stride, "output_row_stride",
				      (json_int_t)op->out_row_stride, "output_slice_stride",
				      (json_int_t)op->out_slice_stride, "input_element_bytes",
				      (int)op->in_element_bytes, "output_element_bytes",
				      (int)op->out_element_bytes));
	json_object_set_new(json_object_get(o, "dataflow"), "tile_placed",
			    op->tile_placed ? json_pack("{s:s,s:I,s:i}", "image",
							op->tile_placed == 1 ? "input" : "output", "offset",
							(json_int_t)op->tile_offset, "step_scale",
							(int)op->tile_scale)
					    : json_null());
	return o;
}

static json_t *other_json(const nbg_graph *g, const nbg_cmd_other *x)
{
	json_t *o = json_object(), *refs = json_array();

	json_object_set_new(o, "operation", json_integer((json_int_t)x->operation));
	json_object_set_new(o, "type", json_integer(x->type));
	json_object_set_new(o, "type_name", name_or_null(nbg_graph_op_type_name(x->type)));
	json_object_set_new(o, "layer_id", json_integer(x->layer_id));
	json_object_set_new(o, "layer_name", x->layer_id < nbg_graph_summary_of(g)->layer_count
				? nbg_json_text(nbg_graph_layer_at(g, x->layer_id)->name, 64) : json_null());
	for (size_t i = 0; i < x->ref_count; i++) {
		const nbg_cmd_mem_ref *r = &x->refs[i];
		json_array_append_new(refs, json_pack("{s:I,s:s?,s:I,s:I,s:I,s:s,s:o}", "patch",
						      (json_int_t)r->patch, "source_type_name",
						      nbg_graph_source_type_name(r->source_type),
						      "source_type", (json_int_t)r->source_type,
						      "index", (json_int_t)r->index, "offset",
						      (json_int_t)r->offset, "role",
						      x->writes && i == x->written ? "writes" : "reads",
						      "image_bytes", x->image_bytes[i]
									     ? json_integer((json_int_t)x->image_bytes[i])
									     : json_null()));
	}
	json_object_set_new(o, "references", refs);
	json_object_set_new(o, "write_bytes", json_integer((json_int_t)x->write_bytes));
	return o;
}

static void edges_json(nbg_jw *w, const nbg_commands *c)
{
	static const char *const kinds[] = { "operation", "input", "output" };
	static const char *const bases[] = { "footprint", "operand", "reference" };

	nbg_jw_array(w, "edges");
	for (size_t i = 0; i < nbg_commands_edge_count(c); i++) {
		const nbg_cmd_edge *e = nbg_commands_edge_at(c, i);
		nbg_jw_put(w, NULL, json_pack("{s:s,s:I,s:I,s:I,s:s}", "kind", kinds[e->kind % 3],
					      "from", (json_int_t)e->from, "to", (json_int_t)e->to,
					      "bytes", (json_int_t)e->bytes, "basis",
					      bases[e->basis % 3]));
	}
	nbg_jw_end(w);
}

static void relations_findings(nbg_jw *w, const nbg_commands *c)
{
	nbg_jw_array(w, "relations");
	for (size_t r = 0; r < nbg_commands_relation_count(c); r++) {
		const nbg_graph_relation *rel = nbg_commands_relation_at(c, r);
		nbg_jw_put(w, NULL, json_pack("{s:s,s:s,s:s,s:I,s:I}", "id", rel->id, "text",
					      rel->text, "basis", rel->evidence, "checked",
					      (json_int_t)rel->checked, "held", (json_int_t)rel->held));
	}
	nbg_jw_end(w);
	nbg_jw_array(w, "findings");
	for (size_t i = 0; i < nbg_commands_finding_count(c); i++)
		nbg_jw_put(w, NULL, json_pack("{s:s,s:I,s:s}", "id", nbg_commands_finding_at(c, i)->id, "offset",
					      (json_int_t)nbg_commands_finding_at(c, i)->offset, "text",
					      nbg_commands_finding_at(c, i)->text));
	nbg_jw_end(w);
	nbg_jw_put(w, "findings_dropped", json_integer((json_int_t)nbg_commands_findings_dropped(c)));
}

void nbg_commands_json_write(nbg_jw *w, const nbg_model *m, const nbg_graph *g,
			     const nbg_commands *c)
{
	nbg_jw_object(w, "commands");
	nbg_jw_put(w, "layout_source",
		   json_pack("{s:s,s:s,s:s,s:s,s:s}", "repository", "bminor/mesa-mesa", "nn_path",
			     "src/gallium/drivers/etnaviv/etnaviv_ml_nn.c", "nn_commit",
			     "0ef5aa5fb6e32626f03053d0e5f7a2fb7fc08412", "tp_path",
			     "src/gallium/drivers/etnaviv/etnaviv_ml_tp.c", "tp_commit",
			     "104309ede383b8ca328b7405d28e707998fa6dae"));
	section_json(w, "nn", c, g, NBG_CMD_NN);
	section_json(w, "tp", c, g, NBG_CMD_TP);
	nbg_jw_array(w, "operations");
	for (size_t i = 0; i < nbg_commands_op_count(c); i++)
		nbg_jw_put(w, NULL, op_json(g, nbg_commands_op_at(c, i)));
	nbg_jw_end(w);
	nbg_jw_array(w, "other_operations");
	for (size_t i = 0; i < nbg_commands_other_count(c); i++)
		nbg_jw_put(w, NULL, other_json(g, nbg_commands_other_at(c, i)));
	nbg_jw_end(w);
	edges_json(w, c);
	relations_findings(w, c);
	nbg_jw_end(w);
	(void)m;
}

