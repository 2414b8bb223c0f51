/*
 * json_network.c - the "network" key of the JSON document: the network view
 * (nbg/layers.h) with every layer's operator and its basis, its whole input
 * and output tensors with theirs (and the engine's view beside), the edges
 * with their bytes and basis, and the failing data-flow relations.
 * doc/commands.md ("The network view") describes each key.
 */
#include "common/json.h"
#include "nbg/layers.h"
#include "report/report_internal.h"

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *triple(const uint32_t d[3])
{
	return d[0] ? json_pack("[I,I,I]", (json_int_t)d[0], (json_int_t)d[1], (json_int_t)d[2])
		    : json_null();
}

static json_t *pair_or_null(const uint32_t d[2])
{
	return d[0] ? json_pack("[I,I]", (json_int_t)d[0], (json_int_t)d[1]) : json_null();
}

static json_t *tensor_json(const nbg_model *m, const nbg_net_tensor *t, int input)
{
	const nbg_io *io = t->record < 0 ? NULL
			 : input ? nbg_model_input_at(m, (size_t)t->record)
				 : nbg_model_output_at(m, (size_t)t->record);
	json_t *o = json_object();

	json_object_set_new(o, "shape", t->basis == NBG_NET_SHAPE_NONE ? json_null() : triple(t->dims));
	json_object_set_new(o, "basis", json_string(nbg_net_shape_basis_name(t->basis)));
	json_object_set_new(o, "engine_view", triple(t->view));
	json_object_set_new(o, "data_type", t->data_type == UINT32_MAX ? json_null()
					    : str_or_null(nbg_command_data_type_name(t->data_type)));
	json_object_set_new(o, "record", io ? json_integer(t->record) : json_null());
	/* the quantization a record states; other tensors' are not in the file's
	 * records (the commands' fields for them are in "commands") */
	json_t *rec = io ? nbg_json_io(io) : NULL;
	json_object_set(o, "quantization", rec ? json_object_get(rec, "quantization") : json_null());
	json_decref(rec);
	/* the zero point the commands give (their scale is in no command) */
	json_object_set_new(o, "zero_point", t->zero_point >= 0 ? json_integer(t->zero_point)
								: json_null());
	return o;
}

static json_t *layer_json(const nbg_model *m, const nbg_net_layer *l, size_t i)
{
	char text[128];
	json_t *o = json_object();

	json_object_set_new(o, "node", json_integer((json_int_t)i));
	json_object_set_new(o, "layer", l->layer == UINT32_MAX ? json_null() : json_integer(l->layer));
	json_object_set_new(o, "name", l->vendor_name ? nbg_json_text(l->vendor_name, 64) : json_null());
	json_object_set_new(o, "first_operation", json_integer((json_int_t)l->first_operation));
	json_object_set_new(o, "operator", json_string(l->op ? l->op : "?"));
	json_object_set_new(o, "operator_basis", json_string(nbg_net_op_basis_name(l->op_basis)));
	json_object_set_new(o, "description", json_string(nbg_net_operator_text(l, text, sizeof(text))));
	json_object_set_new(o, "activation", str_or_null(l->activation));
	json_object_set_new(o, "fused", str_or_null(l->fused));
	json_object_set_new(o, "kernel", pair_or_null(l->kernel));
	json_object_set_new(o, "pool", pair_or_null(l->pool));
	json_object_set_new(o, "stride", l->stride ? json_integer(l->stride) : json_null());
	json_object_set_new(o, "stride_inferred", json_boolean(l->stride_inferred));
	json_object_set_new(o, "decoded_operations", json_integer((json_int_t)l->nn_tp_ops));
	json_object_set_new(o, "other_operations", json_integer((json_int_t)l->other_ops));
	json_object_set_new(o, "other_type", str_or_null(l->other_type));
	json_object_set_new(o, "input", tensor_json(m, &l->in, 1));
	json_object_set_new(o, "output", tensor_json(m, &l->out, 0));
	return o;
}

static json_t *end_json(unsigned kind, size_t i)
{
	static const char *const keys[] = { "node", "input", "output" };
	return json_pack("{s:I}", keys[kind < 3 ? kind : 0], (json_int_t)i);
}

void nbg_network_json_write(nbg_jw *w, const nbg_model *m, const nbg_network *n)
{
	nbg_jw_object(w, "network");
	nbg_jw_array(w, "data_flow_warnings");
	for (size_t i = 0; i < nbg_network_warning_count(n); i++) {
		const nbg_net_warning *x = nbg_network_warning_at(n, i);
		nbg_jw_put(w, NULL, json_pack("{s:s,s:I,s:I}", "relation", x->relation, "failed",
					      (json_int_t)x->failed, "checked", (json_int_t)x->checked));
	}
	nbg_jw_end(w);
	nbg_jw_array(w, "layers");
	for (size_t i = 0; i < nbg_network_layer_count(n); i++)
		nbg_jw_put(w, NULL, layer_json(m, nbg_network_layer_at(n, i), i));
	nbg_jw_end(w);
	nbg_jw_array(w, "edges");
	for (size_t i = 0; i < nbg_network_edge_count(n); i++) {
		const nbg_net_edge *e = nbg_network_edge_at(n, i);
		json_t *j = json_pack("{s:o,s:o,s:I,s:s,s:b}", "from", end_json(e->from_kind, e->from), "to",
				      end_json(e->to_kind, e->to), "bytes", (json_int_t)e->bytes, "basis",
				      e->basis == NBG_NET_EDGE_PROVEN ? "proven" : "inferred", "backward",
				      e->backward);
		if (j && e->slice_of)
			json_object_set_new(j, "slice_of_channels", json_integer(e->slice_of));
		nbg_jw_put(w, NULL, j);
	}
	nbg_jw_end(w);
	nbg_jw_end(w);
}
