/*
 * text_weights.c - `nbg weights` and `nbg inspect --weights`: one line per
 * NN-engine operation and TP fully connected layer (its kernel shape, what became of its stream, the
 * zero point, the codes' range and how many equal the zero point), then the
 * totals and how much of the coefficient data the decoded streams explain.
 */
#include <inttypes.h>
#include <stdio.h>

#include "coef/weights_internal.h"
#include "report/text_internal.h"

void nbg_text_weights_op(FILE *out, const nbg_graph *g, const nbg_weights_op *o)
{
	if (!out || !g || !o)
		return;
	const char *dt = nbg_command_data_type_name(o->data_type);

	fprintf(out, "  op %zu (%s %u, layer %u", o->operation, nbg_graph_op_type_name(o->type),
		o->command, o->layer_id);
	if (o->layer_id < nbg_graph_summary_of(g)->layer_count) {
		fputc(' ', out);
		nbg_text_put(out, nbg_graph_layer_at(g, o->layer_id)->name);
	}
	fprintf(out, "): %ux%ux%ux%u %s, ", o->shape[0], o->shape[1], o->shape[2], o->shape[3],
		dt ? dt : "unknown type");
	if (o->status != NBG_WEIGHTS_DECODED) {
		fprintf(out, "%s: %s", o->status == NBG_WEIGHTS_UNSUPPORTED ? "not-decoded"
				     : nbg_weights_status_name(o->status), o->reason);
		if (o->bit != UINT64_MAX)
			fprintf(out, " (%s at bit %" PRIu64 " of the stream at offset %" PRIu64 ")",
				o->reason_id, o->bit, o->stream_offset);
		else
			fprintf(out, " (%s)", o->reason_id);
		fputc('\n', out);
		return;
	}
	uint64_t n = (uint64_t)o->shape[0] * o->shape[1] * o->shape[2] * o->shape[3], st_zero;
	uint32_t st_min, st_max;
	nbg_weights_op_stats(o, &st_min, &st_max, &st_zero);
	fprintf(out, "decoded %s (%s, %u core%s), zero point %d, codes %u..%u, %.1f%% zero "
		"weights%s\n", nbg_weights_format_name(o->format), nbg_weights_op_order(o), o->cores,
		o->cores == 1 ? "" : "s", o->zero_point, st_min, st_max,
		n ? 100.0 * (double)st_zero / (double)n : 0.0,
		o->scale ? ", per-channel floats" : "");
}

void nbg_text_weights(FILE *out, const nbg_model *m, const nbg_graph *g, const nbg_commands *c,
		      const nbg_weights *w)
{
	nbg_weights_format f;
	uint64_t coef;

	if (!out || !m || !g || !c || !w)
		return;
	f = nbg_weights_target_format(m->target);
	fprintf(out, "\nWeights (kernel streams decoded with the formats of Mesa's etnaviv encoders; "
		     "doc/weights.md):\n");
	if (f)
		KV(out, "Stream format", "%s (target 0x%08x)", nbg_weights_format_name(f), m->target);
	else
		KV(out, "Stream format", "not known for target 0x%08x: every format tried", m->target);
	for (size_t i = 0; i < w->count; i++)
		nbg_text_weights_op(out, g, &w->ops[i]);
	KV(out, "Operations", "%zu NN-engine and TP fully connected: %zu decoded, %zu not decoded, %zu unsupported, %zu "
	   "without a kernel stream", w->count, w->status_counts[NBG_WEIGHTS_DECODED],
	   w->status_counts[NBG_WEIGHTS_NOT_DECODED], w->status_counts[NBG_WEIGHTS_UNSUPPORTED],
	   w->status_counts[NBG_WEIGHTS_NO_STREAM]);
	coef = nbg_weights_coefficient_bytes(g);
	KV(out, "Explained", "%" PRIu64 " of %" PRIu64 " coefficient bytes (%.1f%%) by the "
	   "decoded streams", w->explained, coef, coef ? 100.0 * (double)w->explained / (double)coef
						     : 0.0);
}
