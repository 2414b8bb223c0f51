/*
 * json_weights.c - per NN-engine operation what its
 * kernel stream decoded to (format, shape, zero point, status and reason,
 * the codes' range, the SHA-256 of every array), and the totals.  The
 * arrays themselves are not in the document: `nbg weights --out` writes
 * them as .npy files.
 */
#include <stdio.h>
#include <stdlib.h>

#include "coef/coefficients.h"
#include "common/half.h"
#include "common/hash.h"
#include "common/json.h"
#include "report/report_internal.h"

/* SHA-256 of n 32-bit values (64-bit: w 8) as little-endian bytes (the .npy
 * files' data). */
static json_t *sha_le(const void *v, size_t n, unsigned w)
{
	uint8_t *b = malloc(n * w + 1), d[32];
	json_t *j;

	if (!b)
		return json_null();
	for (size_t i = 0; i < n; i++) {
		uint64_t x;
		if (w == 8) {
			memcpy(&x, (const uint8_t *)v + 8 * i, 8);
		} else {
			uint32_t y;
			memcpy(&y, (const uint8_t *)v + 4 * i, 4);
			x = y;
		}
		for (unsigned k = 0; k < w; k++)
			b[w * i + k] = (uint8_t)(x >> (8 * k));
	}
	nbg_sha256(b, n * w, d);
	j = nbg_json_sha(d);
	free(b);
	return j;
}

static json_t *arrays_sha(const nbg_weights_op *o)
{
	size_t n;
	const uint8_t *codes = nbg_weights_op_codes(o, &n);
	uint32_t out = nbg_weights_op_shape(o)[0];
	const float *scale = nbg_weights_op_scale(o);
	uint8_t d[32];
	json_t *j = json_object();

	const int64_t *b64 = nbg_weights_op_bias_stored64(o);

	nbg_sha256(codes, n * nbg_weights_op_code_bytes(o), d);
	json_object_set_new(j, "weights", nbg_json_sha(d));
	const int32_t *bias = nbg_weights_op_bias(o), *stored = nbg_weights_op_bias_stored(o);
	const float *slope = nbg_weights_op_prelu_slope(o);

	/* int16 kernels: the stored 48-bit biases, as int64, no corrected ones;
	 * fp16 PReLU streams: no bias, a slope per channel */
	json_object_set_new(j, "bias", bias ? sha_le(bias, out, 4) : json_null());
	json_object_set_new(j, "bias_stored", b64	 ? sha_le(b64, out, 8)
					      : stored ? sha_le(stored, out, 4)
						       : json_null());
	json_object_set_new(j, "scale", scale ? sha_le(scale, out, 4) : json_null());
	if (slope)
		json_object_set_new(j, "prelu_slope", sha_le(slope, out, 4));
	return j;
}

/* The SHA-256 object of o's arrays: computed once per decoded stream, the
 * operations sharing a decode sharing the object (sha[position of the
 * first], NULL sha: computed each time). */
static json_t *shared_sha(const nbg_weights *w, const nbg_weights_op *o, json_t **sha)
{
	size_t first = nbg_weights_op_first(o);
	const nbg_weights_op *f = nbg_weights_at(w, first);

	if (!sha)
		return arrays_sha(f);
	if (!sha[first])
		sha[first] = arrays_sha(f);
	return json_incref(sha[first]);
}

/* Where the operation's stream is and what became of it: the members every
 * operation has. */
static void op_stream_json(json_t *j, const nbg_weights_op *o)
{
	nbg_weights_status st = nbg_weights_op_status(o);
	uint64_t bit = nbg_weights_op_bit_offset(o), size = nbg_weights_op_stream_size(o);

	json_object_set_new(j, "zero_point", json_integer(nbg_weights_op_zero_point(o)));
	json_object_set_new(j, "input_zero_point", json_integer(nbg_weights_op_input_zero_point(o)));
	json_object_set_new(j, "status", json_string(nbg_weights_status_name(st)));
	json_object_set_new(j, "reason_id", st == NBG_WEIGHTS_DECODED
				? json_null() : json_string(nbg_weights_op_reason_id(o)));
	json_object_set_new(j, "reason", st == NBG_WEIGHTS_DECODED
				? json_null() : json_string(nbg_weights_op_reason(o)));
	json_object_set_new(j, "bit_offset", bit == UINT64_MAX
				? json_null() : json_integer((json_int_t)bit));
	json_object_set_new(j, "stream", size
				? json_pack("{s:I,s:I}", "offset",
					    (json_int_t)nbg_weights_op_stream_offset(o), "size",
					    (json_int_t)size)
				: json_null());
}

static json_t *op_json(const nbg_graph *g, const nbg_commands *c, const nbg_weights *w,
		       const nbg_weights_op *o, json_t **sha)
{
	const nbg_cmd_op *op = nbg_commands_op_at(c, nbg_weights_op_index(o));
	const char *dt = nbg_command_data_type_name(nbg_weights_op_data_type(o));
	const uint32_t *shape = nbg_weights_op_shape(o);
	json_t *j = json_object();

	json_object_set_new(j, "operation", json_integer((json_int_t)nbg_weights_op_operation(o)));
	json_object_set_new(j, "type_name", json_string(nbg_graph_op_type_name(op->type)));
	json_object_set_new(j, "command", json_integer(nbg_weights_op_command(o)));
	json_object_set_new(j, "layer_id", json_integer(op->layer_id));
	json_object_set_new(j, "layer_name", op->layer_id < nbg_graph_summary_of(g)->layer_count
				? nbg_json_text(nbg_graph_layer_at(g, op->layer_id)->name, 64)
				: json_null());
	json_object_set_new(j, "kind", json_string(op->kind));
	json_object_set_new(j, "data_type", dt ? json_string(dt) : json_null());
	json_object_set_new(j, "shape", json_pack("[I,I,I,I]", (json_int_t)shape[0],
						  (json_int_t)shape[1], (json_int_t)shape[2],
						  (json_int_t)shape[3]));
	op_stream_json(j, o);
	if (nbg_weights_op_status(o) != NBG_WEIGHTS_DECODED)
		return j;
	json_object_set_new(j, "format",
			    json_string(nbg_weights_format_name(nbg_weights_op_format(o))));
	json_object_set_new(j, "order", json_string(nbg_weights_op_order(o)));
	json_object_set_new(j, "cores", json_integer(nbg_weights_op_cores(o)));
	uint32_t st_min, st_max;
	uint64_t st_zero;
	nbg_weights_op_stats(o, &st_min, &st_max, &st_zero);
	/* fp16 codes and tables: min and max as float values */
	double vmin, vmax;
	int real = nbg_weights_stat_value(o, st_min, &vmin);
	nbg_weights_stat_value(o, st_max, &vmax);
	json_object_set_new(j, "codes",
			    json_pack("{s:o,s:o,s:I,s:f}", "min",
				      real ? json_real(vmin) : json_integer((json_int_t)vmin),
				      "max",
				      real ? json_real(vmax) : json_integer((json_int_t)vmax),
				      "zero_points", (json_int_t)st_zero,
				      "zero_point_fraction",
				      (double)st_zero /
					      ((double)shape[0] * shape[1] * shape[2] * shape[3])));
	json_object_set_new(j, "per_channel_scale", json_boolean(nbg_weights_op_scale(o) != NULL));
	const uint32_t *tail = nbg_weights_op_lut_tail(o);
	uint64_t at;
	int after = nbg_weights_op_lut_table(o, &at) != NULL;
	if (tail)
		json_object_set_new(j, "lut", json_pack("{s:[I,I,I],s:b,s:s?,s:o}", "tail",
							 (json_int_t)tail[0], (json_int_t)tail[1],
							 (json_int_t)tail[2], "sign_support",
							 (tail[0] >> 28 & 1) != 0, "inputs",
							 nbg_weights_op_lut_inputs(o) ? "float16" : NULL,
							 "after_kernels_at",
							 after ? json_integer((json_int_t)at) : json_null()));
	json_object_set_new(j, "sha256", shared_sha(w, o, sha));
	return j;
}

void nbg_weights_json_write(nbg_jw *jw, const nbg_model *m, const nbg_graph *g,
			    const nbg_commands *c, const nbg_weights *w)
{
	nbg_weights_format f = nbg_weights_target_format(m->target);
	size_t n = nbg_weights_count(w);
	json_t *counts = json_object(), **sha = calloc(n ? n : 1, sizeof(*sha));

	nbg_jw_object(jw, "weights");
	nbg_jw_put(jw, "target", json_integer(m->target));
	nbg_jw_put(jw, "target_format", f ? json_string(nbg_weights_format_name(f)) : json_null());
	nbg_jw_array(jw, "operations");
	for (size_t i = 0; i < n; i++)
		nbg_jw_put(jw, NULL, op_json(g, c, w, nbg_weights_at(w, i), sha));
	nbg_jw_end(jw);
	for (size_t i = 0; sha && i < n; i++)
		json_decref(sha[i]);
	free(sha);
	for (int st = 0; st < NBG_WEIGHTS_STATUS_COUNT; st++)
		json_object_set_new(counts, nbg_weights_status_name((nbg_weights_status)st),
				    json_integer((json_int_t)nbg_weights_status_count(w, (nbg_weights_status)st)));
	nbg_jw_put(jw, "counts", counts);
	nbg_jw_put(jw, "explained_bytes", json_integer((json_int_t)nbg_weights_explained_bytes(w)));
	nbg_jw_put(jw, "coefficient_bytes", json_integer((json_int_t)nbg_weights_coefficient_bytes(g)));
	nbg_jw_end(jw);
}

