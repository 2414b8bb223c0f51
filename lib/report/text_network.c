/*
 * text_network.c - the Network table of the default report: one line per
 * layer of the network view (nbg/layers.h) in the order it first runs, with
 * its operator, the whole tensors it reads and writes and its operations;
 * a banner first where the data-flow checks fail, and what the edges rest
 * on after it.  The engine's own view of each operation stays in `nbg
 * inspect --commands`.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "nbg/decoded.h"
#include "nbg/layers.h"
#include "nbg/report.h"
#include "report/text_internal.h"

/* The banner: each failing data-flow relation with its counts. */
static void banner(FILE *out, const nbg_network *n)
{
	if (!nbg_network_warning_count(n))
		return;
	fprintf(out, "  !! data flow unreliable:");
	for (size_t i = 0; i < nbg_network_warning_count(n); i++) {
		const nbg_net_warning *w = nbg_network_warning_at(n, i);
		fprintf(out, "%s %s fails %" PRIu64 " of %" PRIu64, i ? "," : "", w->relation,
			w->failed, w->checked);
	}
	fprintf(out, ": edges and propagated shapes may be wrong there\n");
}

static void layer_line(FILE *out, const nbg_net_layer *l)
{
	char op[96], in[48], o[48], shape[100], ops[64];

	if (l->layer != UINT32_MAX) {
		char *name = nbg_text_escape(l->vendor_name, 32);
		fprintf(out, "  [%4u] %-32.32s", l->layer, name ? name : "");
		free(name);
	} else {
		fprintf(out, "  [   -] %-32s", "(op with no layer)");
	}
	snprintf(shape, sizeof(shape), "%s -> %s", nbg_net_shape_text(&l->in, in, sizeof(in)),
		 nbg_net_shape_text(&l->out, o, sizeof(o)));
	if (l->other_ops)
		snprintf(ops, sizeof(ops), "%zu+%zu %s", l->nn_tp_ops, l->other_ops,
			 l->other_type ? l->other_type : "?");
	else
		snprintf(ops, sizeof(ops), "%zu", l->nn_tp_ops);
	fprintf(out, " %-30s%s %-30s %s\n", nbg_net_operator_text(l, op, sizeof(op)),
		l->op_basis == NBG_NET_OP_VENDOR ? "*" : l->op_basis == NBG_NET_OP_NONE ? "?" : " ",
		shape, ops);
}

/* The edges' bases, counted. */
static void edge_totals(FILE *out, const nbg_network *n)
{
	size_t proven = 0, inferred = 0, backward = 0;
	for (size_t i = 0; i < nbg_network_edge_count(n); i++) {
		const nbg_net_edge *e = nbg_network_edge_at(n, i);
		if (e->backward)
			backward++;
		else if (e->basis == NBG_NET_EDGE_PROVEN)
			proven++;
		else
			inferred++;
	}
	fprintf(out, "  %-26s %zu proven by the commands' footprints, %zu inferred (an end not "
		"decoded, or an operand), %zu backward (tile interleaving, not the network's)\n",
		"Edges:", proven, inferred, backward);
}

void nbg_text_network_decoded(FILE *out, nbg_decoded *d)
{
	const nbg_network *n = NULL;
	nbg_error err;

	fprintf(out, "\nNetwork (layers in the order they first run; whole tensors x y z):\n");
	if (nbg_decoded_network(d, &n, &err) != NBG_OK) {
		fprintf(out, "  (not decoded: %s)\n", err.message);
		return;
	}
	if (!nbg_network_layer_count(n)) {
		fprintf(out, "  no operation with a decodable command or a memory reference\n");
		return;
	}
	banner(out, n);
	fprintf(out, "  [Layer] %-31s %-31s %-30s %s\n", "Name", "Operator", "In -> out", "Ops");
	for (size_t i = 0; i < nbg_network_layer_count(n); i++)
		layer_line(out, nbg_network_layer_at(n, i));
	fprintf(out, "  (operator from the NN / TP commands or decoded shader uniforms; * from the vendor's "
		"layer name, its program not decoded; ? neither. Shapes: the tensor's, from an I/O record, "
		"the commands' rows or a tensor of the same pixels; \"engine view\": only how the NPU "
		"addresses it, flattened or tiled; Ops: the layer's OPERATIONS records, each tile one, "
		"with a decoded command + others)\n");
	edge_totals(out, n);
}

static void end_text(FILE *out, const nbg_network *n, unsigned kind, size_t i)
{
	const nbg_net_layer *l = kind == NBG_NET_LAYER ? nbg_network_layer_at(n, i) : NULL;
	if (kind == NBG_NET_INPUT)
		fprintf(out, "input %zu", i);
	else if (kind == NBG_NET_OUTPUT)
		fprintf(out, "output %zu", i);
	else if (l && l->layer != UINT32_MAX)
		fprintf(out, "layer %u", l->layer);
	else
		fprintf(out, "op %zu", l ? l->first_operation : i);
}

void nbg_text_network_edges(FILE *out, nbg_decoded *d)
{
	const nbg_network *n = NULL;

	if (!out || nbg_decoded_network(d, &n, NULL) != NBG_OK)
		return;
	fprintf(out, "\nNetwork edges (%zu; bytes that flow, the last writer of each byte read):\n",
		nbg_network_edge_count(n));
	for (size_t i = 0; i < nbg_network_edge_count(n); i++) {
		const nbg_net_edge *e = nbg_network_edge_at(n, i);
		fprintf(out, "  ");
		end_text(out, n, e->from_kind, e->from);
		fprintf(out, " -> ");
		end_text(out, n, e->to_kind, e->to);
		fprintf(out, "  %" PRIu64 " bytes, %s%s", e->bytes,
			e->basis == NBG_NET_EDGE_PROVEN ? "proven" : "inferred",
			e->backward ? ", backward (tile interleaving; not drawn)" : "");
		if (e->slice_of)
			fprintf(out, ", a slice of the producer's %" PRIu32 " channels", e->slice_of);
		fputc('\n', out);
	}
}

void nbg_text_network(FILE *out, nbg_decoded *d)
{
	if (!out)
		return;
	nbg_text_network_decoded(out, d);
	nbg_text_network_edges(out, d);
}
