/*
 * json_memory.c - the memory analysis as JSON (the "memory"
 * object of `nbg inspect --json --memory`), and the per-operation sizes the
 * graph report's "operations" carry.  The per-layer and per-operation arrays
 * are streamed (json_stream.h).
 */
#include <stdlib.h>

#include "nbg/memory.h"
#include "report/report_internal.h"

static json_t *figure_json(const nbg_mem_rule *u, nbg_mem_value v)
{
	json_t *o = json_object();

	json_object_set_new(o, "vendor_bytes", json_integer((json_int_t)v.vendor));
	json_object_set_new(o, "exact_bytes", json_integer((json_int_t)v.exact));
	json_object_set_new(o, "from_file", json_boolean(v.from_file));
	json_object_set_new(o, "label", json_string(u->label));
	json_object_set_new(o, "depth", json_integer(u->depth));
	json_object_set_new(o, "vendor_line", u->vendor_line ? json_string(u->vendor_line)
							     : json_null());
	json_object_set_new(o, "rule", json_string(u->rule));
	json_object_set_new(o, "evidence", json_string(u->evidence));
	return o;
}

static void figures_json(json_t *root, const nbg_mem_report *r)
{
	json_t *f = json_object(), *k = json_array();

	json_object_set_new(root, "layout", json_string(nbg_mem_layout_of(r) == NBG_MEM_LAYOUT_LCD
							  ? "lcd" : "sections"));
	for (int i = 0; i < NBG_MEM__COUNT; i++) {
		const nbg_mem_rule *u = nbg_mem_rule_of((nbg_mem_figure)i);
		json_object_set_new(f, u->key, figure_json(u, nbg_mem_value_of(r, u->figure)));
	}
	json_object_set_new(root, "figures", f);
	json_object_set_new(root, "io_sizes_incomplete", json_boolean(nbg_mem_io_incomplete(r)));
	for (size_t i = 0; i < nbg_mem_constant_count(); i++) {
		const nbg_mem_constant *c = nbg_mem_constant_at(i);
		json_array_append_new(k, json_pack("{s:s,s:I,s:s,s:s}", "name", c->name, "value",
						   (json_int_t)c->value, "meaning", c->meaning,
						   "source", c->source));
	}
	json_object_set_new(root, "constants", k);
}

static const char *verdict_name(nbg_mem_share_verdict v)
{
	switch (v) {
	case NBG_MEM_SHARE_POOL_EMPTY:
		return "pool-empty";
	case NBG_MEM_SHARE_NOT_SUPPORTED:
		return "not-supported";
	case NBG_MEM_SHARE_CONFLICT:
		return "conflict";
	default:
		return "can-share";
	}
}

static json_t *buffer_json(const nbg_mem_share_buffer *x)
{
	json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:b,s:o}", "kind",
			      x->output ? "output" : "input", "index", (json_int_t)x->index,
			      "bytes", (json_int_t)x->bytes, "aligned_bytes",
			      (json_int_t)x->aligned_bytes, "conflicts", (json_int_t)x->conflicts,
			      "can_share", x->can_share, "allocation",
			      x->can_share ? json_integer((json_int_t)x->allocation) : json_null());

	if (o && !x->output) {
		json_object_set_new(o, "reads", json_integer((json_int_t)x->reads));
		json_object_set_new(o, "layers", x->reads
					? json_pack("[I,I]", (json_int_t)x->layer_low,
						    (json_int_t)x->layer_high)
					: json_null());
		json_object_set_new(o, "clear", json_boolean(x->clear));
	}
	return o;
}

static json_t *conflict_json(const nbg_mem_conflict *x)
{
	return json_pack("{s:s,s:b,s:I,s:I,s:I,s:I,s:I}", "kind", x->output ? "output" : "input",
			 "command", x->command, "index", (json_int_t)x->io_index,
			 "operation", (json_int_t)x->operation,
			 "layer_id", (json_int_t)x->layer_id, "io_patch", (json_int_t)x->io_patch,
			 "pool_patch", (json_int_t)x->pool_patch);
}

static void sharing_json(nbg_jw *w, const nbg_mem_report *r)
{
	const nbg_mem_sharing *s = nbg_mem_sharing_of(r);
	json_t *o = json_object();

	json_object_set_new(o, "pool_bytes", json_integer((json_int_t)s->pool_bytes));
	json_object_set_new(o, "verdict", json_string(verdict_name(s->verdict)));
	json_object_set_new(o, "inputs_clear", json_boolean(s->inputs_clear));
	json_object_set_new(o, "allocation", s->allocation
				? json_integer((json_int_t)s->allocation) : json_null());
	json_object_set_new(o, "rests_on",
			    json_pack("{s:I,s:I,s:I,s:I}", "operations",
				      (json_int_t)s->operations_checked, "input_patches",
				      (json_int_t)s->input_patches, "output_patches",
				      (json_int_t)s->output_patches, "pool_patches",
				      (json_int_t)s->pool_patches));
	json_object_set_new(o, "evidence", json_string(s->evidence));
	json_object_set_new(o, "conflicts_total", json_integer((json_int_t)s->conflicts_total));
	json_object_set_new(o, "input_other_conflicts",
			    json_integer((json_int_t)s->input_other_conflicts));
	json_object_set_new(o, "output_conflicts", json_integer((json_int_t)s->output_conflicts));
	nbg_jw_object(w, "sharing");
	nbg_jw_members(w, o);
	nbg_jw_array(w, "buffers");
	for (size_t i = 0; i < nbg_mem_share_buffer_count(r); i++)
		nbg_jw_put(w, NULL, buffer_json(nbg_mem_share_buffer_at(r, i)));
	nbg_jw_end(w);
	nbg_jw_array(w, "conflicts");
	for (size_t i = 0; i < nbg_mem_conflict_count(r); i++)
		nbg_jw_put(w, NULL, conflict_json(nbg_mem_conflict_at(r, i)));
	nbg_jw_end(w);
	nbg_jw_end(w);
}

static json_t *layer_json(const nbg_graph *g, const nbg_mem_layer *l)
{
	json_t *o = json_object();

	if (l->layer == (size_t)-1) {
		json_object_set_new(o, "layer", json_null());
		json_object_set_new(o, "name", json_null());
	} else {
		json_object_set_new(o, "layer", json_integer((json_int_t)l->layer));
		json_object_set_new(o, "name", l->layer < nbg_graph_summary_of(g)->layer_count
					       ? nbg_json_text(nbg_graph_layer_at(g, l->layer)->name, 64)
					       : json_null());
	}
	json_object_set_new(o, "operations", json_integer((json_int_t)l->operations));
	json_object_set_new(o, "coefficient_bytes", json_integer((json_int_t)l->coefficient_bytes));
	json_object_set_new(o, "command_bytes", json_integer((json_int_t)l->command_bytes));
	json_object_set_new(o, "instruction_bytes", json_integer((json_int_t)l->instruction_bytes));
	json_object_set_new(o, "total_bytes", json_integer((json_int_t)l->total_bytes));
	return o;
}

static void layers_json(nbg_jw *w, const nbg_graph *g, const nbg_mem_report *r)
{
	json_t *top = json_array();
	size_t n = nbg_mem_layer_count(r);

	nbg_jw_array(w, "layers");
	for (size_t i = 0; i < n; i++)
		nbg_jw_put(w, NULL, layer_json(g, nbg_mem_layer_at(r, i)));
	nbg_jw_end(w);
	for (size_t k = 0; k < n && k < 10; k++)
		json_array_append_new(top, json_integer((json_int_t)nbg_mem_layer_ranked(r, k)->layer));
	nbg_jw_put(w, "largest_layers", top);
	nbg_jw_put(w, "outside_layers", layer_json(g, nbg_mem_layer_outside(r)));
}

static json_t *operation_json(const nbg_mem_operation *x)
{
	json_t *o = json_object();

	json_object_set_new(o, "command_bytes", json_integer((json_int_t)x->command_bytes));
	json_object_set_new(o, "command_known", json_boolean(x->command_known));
	json_object_set_new(o, "instruction_bytes", json_integer((json_int_t)x->instruction_bytes));
	json_object_set_new(o, "instruction_bytes_vendor",
			    json_integer((json_int_t)x->instruction_bytes_vendor));
	json_object_set_new(o, "coefficient_patches", json_integer(x->coefficient_patches));
	json_object_set_new(o, "coefficient_bytes", json_integer((json_int_t)x->coefficient_bytes));
	json_object_set_new(o, "coefficient_bytes_vendor", x->coefficient_patches
				? json_integer((json_int_t)x->coefficient_bytes_vendor)
				: json_null());
	json_object_set_new(o, "coefficient_bytes_owned",
			    json_integer((json_int_t)x->coefficient_bytes_owned));
	return o;
}

static void operations_json(nbg_jw *w, const nbg_mem_report *r)
{
	nbg_jw_array(w, "operations");
	for (size_t i = 0; i < nbg_mem_operation_count(r); i++) {
		const nbg_mem_operation *x = nbg_mem_operation_at(r, i);
		json_t *o = json_object();
		const char *name = nbg_graph_op_type_name(x->type);
		json_object_set_new(o, "record_index", json_integer((json_int_t)i));
		json_object_set_new(o, "type_name", name ? json_string(name) : json_null());
		json_t *sizes = operation_json(x);
		json_object_update(o, sizes);
		json_decref(sizes);
		nbg_jw_put(w, NULL, o);
	}
	nbg_jw_end(w);
}

void nbg_mem_json_write(nbg_jw *w, const nbg_model *m, const nbg_graph *g,
			const nbg_mem_report *r)
{
	json_t *o;

	nbg_jw_object(w, "memory");
	if ((o = json_object()) != NULL)
		figures_json(o, r);
	nbg_jw_members(w, o);
	sharing_json(w, r);
	layers_json(w, g, r);
	operations_json(w, r);
	nbg_jw_end(w);
	(void)m;
}

json_t *nbg_json_memory_operation_sizes(const nbg_mem_report *r, size_t i)
{
	return i < nbg_mem_operation_count(r) ? operation_json(nbg_mem_operation_at(r, i)) : NULL;
}
