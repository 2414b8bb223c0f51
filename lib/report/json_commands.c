/*
 * json_commands.c - nbg_commands_json(): the decoded NN and TP commands, the
 * per-operation summaries, the chained images and the relations as JSON.
 * Field keys are the open driver's field names (commands_fields.c); every
 * command also keeps its raw words, so nothing unknown is lost.
 */
#include <stdio.h>
#include <stdlib.h>

#include "analysis/commands_internal.h"
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
			     i < (uint64_t)op->patch_index + op->patch_count && i < g->patch_count; i++) {
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

static json_t *section_json(const nbg_commands *c, const nbg_graph *g, unsigned e)
{
	const nbg_cmd_section *s = &c->sec[e];
	json_t *o, *cmds = json_array(), *ev = json_object();
	size_t nf;
	const nbg_cmd_field *t = nbg_command_fields(e, &nf);

	if (!s->present) {
		json_decref(cmds);
		json_decref(ev);
		return json_null();
	}
	o = json_pack("{s:I,s:I,s:I,s:s,s:b,s:I,s:I}", "offset", (json_int_t)s->offset, "size",
		      (json_int_t)s->size, "command_size", (json_int_t)s->command_size,
		      "command_size_source", s->size_source ? s->size_source : "unknown",
		      "decoded", s->decoded, "count", (json_int_t)s->count, "trailing_bytes",
		      (json_int_t)s->trailing_bytes);
	for (size_t f = 0; f < nf; f++)
		json_object_set_new(ev, t[f].key, json_string(t[f].evidence));
	json_object_set_new(o, "field_evidence", ev);
	for (size_t i = 0; i < c->cmd_count[e]; i++)
		json_array_append_new(cmds, command_json(c, g, &c->cmds[e][i]));
	json_object_set_new(o, "commands", cmds);
	return o;
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
	json_object_set_new(o, "layer_name", op->layer_id < g->layer_count
				? nbg_json_text(nbg_graph_layer_at(g, op->layer_id)->name, 64) : json_null());
	json_object_set_new(o, "kind", json_string(op->kind));
	json_object_set_new(o, "description",
			    json_string(nbg_command_describe(op, desc, sizeof(desc))));
	if (op->engine == NBG_CMD_NN) {
		json_object_set_new(o, "kernel", u3(op->kernel));
		json_object_set_new(o, "output", u3(op->out));
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
	return o;
}

static json_t *edges_json(const nbg_commands *c)
{
	static const char *const kinds[] = { "operation", "input", "output" };
	json_t *a = json_array();
	for (size_t i = 0; i < c->edge_count; i++) {
		const nbg_cmd_edge *e = &c->edges[i];
		json_array_append_new(a, json_pack("{s:s,s:I,s:I}", "kind", kinds[e->kind % 3],
						   "from", (json_int_t)e->from, "to",
						   (json_int_t)e->to));
	}
	return a;
}

static json_t *relations_findings(const nbg_commands *c, json_t *o)
{
	json_t *rels = json_array(), *f = json_array();
	for (int r = 0; r < NBG_CMDR__COUNT; r++) {
		const nbg_graph_relation *rel = &c->relations[r];
		json_array_append_new(rels, json_pack("{s:s,s:s,s:s,s:I,s:I}", "id", rel->id,
						      "text", rel->text, "basis", rel->evidence,
						      "checked", (json_int_t)rel->checked, "held",
						      (json_int_t)rel->held));
	}
	for (size_t i = 0; i < c->finding_count; i++)
		json_array_append_new(f, json_pack("{s:s,s:I,s:s}", "id", c->findings[i].id,
						   "offset", (json_int_t)c->findings[i].offset,
						   "text", c->findings[i].text));
	json_object_set_new(o, "relations", rels);
	json_object_set_new(o, "findings", f);
	json_object_set_new(o, "findings_dropped", json_integer((json_int_t)c->findings_dropped));
	return o;
}

char *nbg_commands_json(const nbg_model *m, const nbg_graph *g, const nbg_commands *c)
{
	json_t *root, *o, *ops;
	char *s;

	if (!m || !g || !c)
		return NULL;
	root = json_object();
	o = json_object();
	ops = json_array();
	if (!root || !o || !ops) {
		json_decref(root);
		json_decref(o);
		json_decref(ops);
		return NULL;
	}
	json_object_set_new(o, "layout_source",
			    json_pack("{s:s,s:s,s:s,s:s,s:s}", "repository", "bminor/mesa-mesa",
				      "nn_path", "src/gallium/drivers/etnaviv/etnaviv_ml_nn.c",
				      "nn_commit", "0ef5aa5fb6e32626f03053d0e5f7a2fb7fc08412",
				      "tp_path", "src/gallium/drivers/etnaviv/etnaviv_ml_tp.c",
				      "tp_commit", "104309ede383b8ca328b7405d28e707998fa6dae"));
	json_object_set_new(o, "nn", section_json(c, g, NBG_CMD_NN));
	json_object_set_new(o, "tp", section_json(c, g, NBG_CMD_TP));
	for (size_t i = 0; i < c->op_count; i++)
		json_array_append_new(ops, op_json(g, &c->ops[i]));
	json_object_set_new(o, "operations", ops);
	json_object_set_new(o, "edges", edges_json(c));
	relations_findings(c, o);
	json_object_set_new(root, "commands", o);
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}
