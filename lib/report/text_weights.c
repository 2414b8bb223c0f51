/*
 * text_weights.c - `nbg weights` and `nbg inspect --weights`: one line per
 * NN-engine operation and TP fully connected layer (its kernel shape, what became of its stream, the
 * zero point, the codes' range and how many equal the zero point), then the
 * totals and how much of the coefficient data the decoded streams explain.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "coef/coefficients.h"
#include "common/half.h"
#include "common/internal.h"
#include "nbg/weights.h"
#include "report/text_internal.h"

/* Why the operation's stream was not decoded, and where. */
static void op_refusal(FILE *out, const nbg_weights_op *o)
{
	nbg_weights_status st = nbg_weights_op_status(o);
	uint64_t bit = nbg_weights_op_bit_offset(o);

	fprintf(out, "%s: %s", st == NBG_WEIGHTS_UNSUPPORTED ? "not-decoded"
		     : nbg_weights_status_name(st), nbg_weights_op_reason(o));
	if (bit != UINT64_MAX)
		fprintf(out, " (%s at bit %" PRIu64 " of the stream at offset %" PRIu64 ")",
			nbg_weights_op_reason_id(o), bit, nbg_weights_op_stream_offset(o));
	else
		fprintf(out, " (%s)", nbg_weights_op_reason_id(o));
	fputc('\n', out);
}

void nbg_text_weights_op(FILE *out, const nbg_graph *g, const nbg_weights_op *o)
{
	const nbg_graph_operation *go =
		g && o ? nbg_graph_operation_at(g, nbg_weights_op_operation(o)) : NULL;

	if (!out || !go)
		return;
	const char *dt = nbg_command_data_type_name(nbg_weights_op_data_type(o));
	const uint32_t *shape = nbg_weights_op_shape(o);
	uint32_t cores = nbg_weights_op_cores(o);

	fprintf(out, "  op %zu (%s %u, layer %u", nbg_weights_op_operation(o),
		nbg_graph_op_type_name(go->type), nbg_weights_op_command(o), go->layer_id);
	if (go->layer_id < nbg_graph_summary_of(g)->layer_count) {
		fputc(' ', out);
		nbg_text_put(out, nbg_graph_layer_at(g, go->layer_id)->name);
	}
	fprintf(out, "): %ux%ux%ux%u %s, ", shape[0], shape[1], shape[2], shape[3],
		dt ? dt : "unknown type");
	if (nbg_weights_op_status(o) != NBG_WEIGHTS_DECODED) {
		op_refusal(out, o);
		return;
	}
	uint64_t n = (uint64_t)shape[0] * shape[1] * shape[2] * shape[3], st_zero;
	uint32_t st_min, st_max;
	nbg_weights_op_stats(o, &st_min, &st_max, &st_zero);
	double vmin, vmax;
	int real = nbg_weights_stat_value(o, st_min, &vmin);
	nbg_weights_stat_value(o, st_max, &vmax);
	if (nbg_weights_op_format(o) == NBG_WEIGHTS_FORMAT_LUT) {
		fprintf(out, "decoded lut (1,024 entries, inputs %s), values %g..%g, %.1f%% zero\n",
			!nbg_weights_op_lut_inputs(o)		? "not established"
			: nbg_weights_op_lut_tail(o)[0] >> 28 & 1 ? "of both signs"
								   : "non-negative",
			vmin, vmax, n ? 100.0 * (double)st_zero / (double)n : 0.0);
		return;
	}
	fprintf(out, "decoded %s (%s, %u core%s), zero point %d, %s %g..%g",
		nbg_weights_format_name(nbg_weights_op_format(o)), nbg_weights_op_order(o), cores,
		cores == 1 ? "" : "s", nbg_weights_op_zero_point(o), real ? "values" : "codes",
		vmin, vmax);
	fprintf(out, ", %.1f%% zero weights%s%s", n ? 100.0 * (double)st_zero / (double)n : 0.0,
		nbg_weights_op_scale(o) ? ", per-channel floats" : "",
		nbg_weights_op_prelu_slope(o) ? ", PReLU slopes" : "");
	uint64_t at;
	const uint8_t *t = nbg_weights_op_lut_table(o, &at);
	if (t) {
		float lo = 0, hi = 0, f;
		for (uint32_t i = 0; i < 1024; i++) {
			uint32_t b = le32(t + 4 * i);
			memcpy(&f, &b, sizeof(f));
			lo = i && lo < f ? lo : f;
			hi = i && hi > f ? hi : f;
		}
		fprintf(out, "; then a lookup table at byte %" PRIu64 " of the stream (1,024 entries, "
			"values %g..%g)", at, (double)lo, (double)hi);
	}
	fputc('\n', out);
}

void nbg_text_weights(FILE *out, const nbg_model *m, const nbg_graph *g, const nbg_commands *c,
		      const nbg_weights *w)
{
	nbg_weights_format f;
	uint64_t coef, explained = nbg_weights_explained_bytes(w);

	if (!out || !m || !g || !c || !w)
		return;
	f = nbg_weights_target_format(m->target);
	fprintf(out, "\nWeights (kernel streams decoded with the formats of Mesa's etnaviv encoders; "
		     "doc/weights.md):\n");
	if (f)
		KV(out, "Stream format", "%s (target 0x%08x)", nbg_weights_format_name(f), m->target);
	else
		KV(out, "Stream format", "not known for target 0x%08x: every format tried", m->target);
	for (size_t i = 0; i < nbg_weights_count(w); i++)
		nbg_text_weights_op(out, g, nbg_weights_at(w, i));
	KV(out, "Operations", "%zu NN-engine and TP fully connected: %zu decoded, %zu not decoded, %zu unsupported, %zu "
	   "without a kernel stream", nbg_weights_count(w),
	   nbg_weights_status_count(w, NBG_WEIGHTS_DECODED),
	   nbg_weights_status_count(w, NBG_WEIGHTS_NOT_DECODED),
	   nbg_weights_status_count(w, NBG_WEIGHTS_UNSUPPORTED),
	   nbg_weights_status_count(w, NBG_WEIGHTS_NO_STREAM));
	coef = nbg_weights_coefficient_bytes(g);
	KV(out, "Explained", "%" PRIu64 " of %" PRIu64 " coefficient bytes (%.1f%%) by the "
	   "decoded streams", explained, coef,
	   coef ? 100.0 * (double)explained / (double)coef : 0.0);
}
