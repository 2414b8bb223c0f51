/*
 * json_weights.c - nbg_weights_json(): per NN-engine operation what its
 * kernel stream decoded to (format, shape, zero point, status and reason,
 * the codes' range, the SHA-256 of every array), and the totals.  The
 * arrays themselves are not in the document: `nbg weights --out` writes
 * them as .npy files.
 */
#include <stdio.h>
#include <stdlib.h>

#include "coef/weights_internal.h"
#include "common/hash.h"
#include "common/json.h"
#include "report/report_internal.h"

/* SHA-256 of n 32-bit values as little-endian bytes (the .npy files' data). */
static json_t *sha_le32(const void *v, size_t n)
{
	uint8_t *b = malloc(n * 4 + 1), d[32];
	json_t *j;

	if (!b)
		return json_null();
	for (size_t i = 0; i < n; i++) {
		uint32_t x;
		memcpy(&x, (const uint8_t *)v + 4 * i, 4);
		put_le32(b + 4 * i, x);
	}
	nbg_sha256(b, n * 4, d);
	j = nbg_json_sha(d);
	free(b);
	return j;
}

static json_t *arrays_sha(const nbg_weights_op *o)
{
	size_t n;
	const uint8_t *codes = nbg_weights_op_codes(o, &n);
	uint8_t d[32];
	json_t *j = json_object();

	nbg_sha256(codes, n, d);
	json_object_set_new(j, "weights", nbg_json_sha(d));
	json_object_set_new(j, "bias", sha_le32(o->bias, o->shape[0]));
	json_object_set_new(j, "bias_stored", sha_le32(o->bias_stored, o->shape[0]));
	json_object_set_new(j, "scale", o->scale ? sha_le32(o->scale, o->shape[0]) : json_null());
	return j;
}

/* The SHA-256 object of o's arrays: computed once per decoded stream, the
 * operations sharing a decode sharing the object (sha[position of the
 * first], NULL sha: computed each time). */
static json_t *shared_sha(const nbg_weights_op *o, json_t **sha)
{
	const nbg_weights_op *f = o->first ? o->first : o;

	if (!sha)
		return arrays_sha(f);
	if (!sha[f->at])
		sha[f->at] = arrays_sha(f);
	return json_incref(sha[f->at]);
}

static json_t *op_json(const nbg_graph *g, const nbg_commands *c, const nbg_weights_op *o,
		       json_t **sha)
{
	const nbg_cmd_op *op = nbg_commands_op_at(c, o->index);
	const char *dt = nbg_command_data_type_name(o->data_type);
	json_t *j = json_object();

	json_object_set_new(j, "operation", json_integer((json_int_t)o->operation));
	json_object_set_new(j, "type_name", json_string(nbg_graph_op_type_name(o->type)));
	json_object_set_new(j, "command", json_integer(o->command));
	json_object_set_new(j, "layer_id", json_integer(o->layer_id));
	json_object_set_new(j, "layer_name", o->layer_id < nbg_graph_summary_of(g)->layer_count
				? nbg_json_text(nbg_graph_layer_at(g, o->layer_id)->name, 64)
				: json_null());
	json_object_set_new(j, "kind", json_string(op->kind));
	json_object_set_new(j, "data_type", dt ? json_string(dt) : json_null());
	json_object_set_new(j, "shape", json_pack("[I,I,I,I]", (json_int_t)o->shape[0],
						  (json_int_t)o->shape[1], (json_int_t)o->shape[2],
						  (json_int_t)o->shape[3]));
	json_object_set_new(j, "zero_point", json_integer(o->zero_point));
	json_object_set_new(j, "input_zero_point", json_integer(o->in_zero_point));
	json_object_set_new(j, "status", json_string(nbg_weights_status_name(o->status)));
	json_object_set_new(j, "reason_id", o->status == NBG_WEIGHTS_DECODED
				? json_null() : json_string(o->reason_id));
	json_object_set_new(j, "reason", o->status == NBG_WEIGHTS_DECODED
				? json_null() : json_string(o->reason));
	json_object_set_new(j, "bit_offset", o->bit == UINT64_MAX
				? json_null() : json_integer((json_int_t)o->bit));
	json_object_set_new(j, "stream", o->stream_size
				? json_pack("{s:I,s:I}", "offset", (json_int_t)o->stream_offset,
					    "size", (json_int_t)o->stream_size)
				: json_null());
	if (o->status != NBG_WEIGHTS_DECODED)
		return j;
	json_object_set_new(j, "format", json_string(nbg_weights_format_name(o->format)));
	json_object_set_new(j, "order", json_string(nbg_weights_op_order(o)));
	json_object_set_new(j, "cores", json_integer(o->cores));
	uint32_t st_min, st_max;
	uint64_t st_zero;
	nbg_weights_op_stats(o, &st_min, &st_max, &st_zero);
	json_object_set_new(j, "codes",
			    json_pack("{s:I,s:I,s:I,s:f}", "min", (json_int_t)st_min, "max",
				      (json_int_t)st_max, "zero_points", (json_int_t)st_zero,
				      "zero_point_fraction",
				      (double)st_zero /
					      ((double)o->shape[0] * o->shape[1] * o->shape[2] *
					       o->shape[3])));
	json_object_set_new(j, "per_channel_scale", json_boolean(o->scale != NULL));
	json_object_set_new(j, "sha256", shared_sha(o, sha));
	return j;
}

void nbg_weights_json_write(nbg_jw *jw, const nbg_model *m, const nbg_graph *g,
			    const nbg_commands *c, const nbg_weights *w)
{
	nbg_weights_format f = nbg_weights_target_format(m->target);
	json_t *counts = json_object(), **sha = calloc(w->count ? w->count : 1, sizeof(*sha));

	nbg_jw_object(jw, "weights");
	nbg_jw_put(jw, "target", json_integer(m->target));
	nbg_jw_put(jw, "target_format", f ? json_string(nbg_weights_format_name(f)) : json_null());
	nbg_jw_array(jw, "operations");
	for (size_t i = 0; i < w->count; i++)
		nbg_jw_put(jw, NULL, op_json(g, c, &w->ops[i], sha));
	nbg_jw_end(jw);
	for (size_t i = 0; sha && i < w->count; i++)
		json_decref(sha[i]);
	free(sha);
	for (int st = 0; st < NBG_WEIGHTS_STATUS_COUNT; st++)
		json_object_set_new(counts, nbg_weights_status_name((nbg_weights_status)st),
				    json_integer((json_int_t)w->status_counts[st]));
	nbg_jw_put(jw, "counts", counts);
	nbg_jw_put(jw, "explained_bytes", json_integer((json_int_t)w->explained));
	nbg_jw_put(jw, "coefficient_bytes", json_integer((json_int_t)nbg_weights_coefficient_bytes(g)));
	nbg_jw_end(jw);
}

typedef struct weights_doc {
	const nbg_model *m;
	const nbg_graph *g;
	const nbg_commands *c;
	const nbg_weights *w;
} weights_doc;

static void write_doc(nbg_jw *jw, const void *arg)
{
	const weights_doc *d = arg;
	nbg_weights_json_write(jw, d->m, d->g, d->c, d->w);
}

char *nbg_weights_json(const nbg_model *m, const nbg_graph *g, const nbg_commands *c,
		       const nbg_weights *w)
{
	weights_doc d = { m, g, c, w };

	if (!m || !g || !c || !w)
		return NULL;
	return nbg_jw_string(write_doc, &d);
}
