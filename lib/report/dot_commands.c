/*
 * dot_commands.c - nbg_commands_dot(): the recovered network as a Graphviz
 * DOT document.  One box per layer that has operations in the data flow
 * (its name and one line per run of operations that compute the same
 * thing; SH and SW ones "not decoded", dashed), one ellipse per input and
 * output record, and an edge wherever an operation of one box reads bytes
 * an operation of another wrote last (dataflow.c), labelled with how many.
 * Every text from the file is escaped.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbg/commands.h"
#include "nbg/decoded.h"
#include "nbg/layers.h"

#define MAX_LINES 8

enum { K_LAYER = 0, K_OP = 1, K_IN = 2, K_OUT = 3 };

static uint64_t key(unsigned kind, uint64_t v)
{
	return (uint64_t)kind << 60 | (v & ((1ull << 60) - 1));
}

/* The node of OPERATIONS record i: its layer's box, or its own. */
static uint64_t op_node(const nbg_graph *g, size_t i)
{
	const nbg_graph_operation *o = nbg_graph_operation_at(g, i);
	return o && o->layer_id < nbg_graph_summary_of(g)->layer_count ? key(K_LAYER, o->layer_id) : key(K_OP, i);
}

static void node_name(FILE *out, uint64_t k)
{
	static const char *const prefix[] = { "L", "op", "in", "out" };
	fprintf(out, "%s%" PRIu64, prefix[(k >> 60) & 3], (uint64_t)(k & ((1ull << 60) - 1)));
}

/* Text inside a DOT string: printable ASCII, quotes and backslashes escaped,
 * '&' as the entity &amp; (Graphviz decodes entities in labels: a name
 * holding "&#27;" would otherwise draw a raw ESC into the SVG), any other
 * byte as the four characters \xNN (the backslash doubled). */
static void put_dot(FILE *out, const char *s, size_t max)
{
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch == '&')
			fputs("&amp;", out);
		else if (ch >= 0x20 && ch < 0x7f)
			fputc(ch, out);
		else
			fprintf(out, "\\\\x%02x", ch);
	}
}

/* Is OPERATIONS record i drawn (a decoded NN / TP operation, or another
 * one that references memory)? */
static const nbg_cmd_other *other_of(const nbg_commands *c, size_t i)
{
	for (size_t x = 0; x < nbg_commands_other_count(c); x++)
		if (nbg_commands_other_at(c, x)->operation == i)
			return nbg_commands_other_at(c, x);
	return NULL;
}

/* The box of operations ix[0..n) (OPERATIONS record indices, one layer or
 * one lone operation): a line per run of decoded operations computing the
 * same thing, a line per run of operations that are not decoded. */
static void box(FILE *out, const nbg_graph *g, const nbg_commands *c, const nbg_network *net,
		const size_t *ix, size_t n)
{
	const nbg_net_layer *l = nbg_network_layer_at(net, nbg_network_layer_of(net, ix[0]));
	char opt[128], in[48], o[48];
	const nbg_graph_operation *o0 = nbg_graph_operation_at(g, ix[0]);
	size_t lines = 0, nn = 0, decoded = 0;
	char d[160], next[160];

	for (size_t i = 0; i < n; i++) {
		const nbg_cmd_op *op = nbg_commands_op_of(c, ix[i]);
		decoded += op != NULL;
		nn += op && op->engine == NBG_CMD_NN;
	}
	node_name(out, op_node(g, ix[0]));
	fprintf(out, " [label=\"");
	if (o0->layer_id < nbg_graph_summary_of(g)->layer_count) {
		fprintf(out, "layer %u ", o0->layer_id);
		put_dot(out, nbg_graph_layer_at(g, o0->layer_id)->name, 64);
	} else {
		fprintf(out, "operation %zu", ix[0]);
	}
	if (l) {
		fprintf(out, "\\n");
		put_dot(out, nbg_net_operator_text(l, opt, sizeof(opt)), sizeof(opt));
		fprintf(out, "%s: ", l->op_basis == NBG_NET_OP_VENDOR ? " (vendor name)" : "");
		put_dot(out, nbg_net_shape_text(&l->in, in, sizeof(in)), sizeof(in));
		fprintf(out, " -> ");
		put_dot(out, nbg_net_shape_text(&l->out, o, sizeof(o)), sizeof(o));
	}
	for (size_t i = 0; i < n; i++) {
		const nbg_cmd_op *op = nbg_commands_op_of(c, ix[i]);
		size_t run = 1;
		if (lines++ == MAX_LINES) {
			fprintf(out, "\\n...");
			break;
		}
		if (!op) {
			uint32_t t = nbg_graph_operation_at(g, ix[i])->type;
			while (i + run < n && !nbg_commands_op_of(c, ix[i + run]) &&
			       nbg_graph_operation_at(g, ix[i + run])->type == t)
				run++;
			fprintf(out, "\\n%s operation, not decoded",
				nbg_graph_op_type_name(t) ? nbg_graph_op_type_name(t) : "an");
		} else {
			nbg_command_describe(op, d, sizeof(d));
			while (i + run < n && nbg_commands_op_of(c, ix[i + run]) &&
			       nbg_commands_op_of(c, ix[i + run])->type == op->type &&
			       !strcmp(nbg_command_describe(nbg_commands_op_of(c, ix[i + run]),
							    next, sizeof(next)), d))
				run++;
			fprintf(out, "\\n%s %u: ", nbg_graph_op_type_name(op->type)
							   ? nbg_graph_op_type_name(op->type)
							   : nbg_command_engine_name(op->engine),
				op->command);
			put_dot(out, d, sizeof(d));
		}
		if (run > 1)
			fprintf(out, " (x%zu)", run);
		i += run - 1;
	}
	fprintf(out, "\", shape=box, style=\"rounded,filled%s\", fillcolor=\"%s\"];\n",
		decoded ? "" : ",dashed", !decoded ? "#e8e8e8" : nn ? "#dbe9f6" : "#fbe5c8");
}

static void io_node(FILE *out, unsigned kind, size_t i, const nbg_io *io)
{
	node_name(out, key(kind, i));
	fprintf(out, " [label=\"%s %zu\\n", kind == K_IN ? "input" : "output", i);
	for (uint32_t d = 0; d < io->dim_count && d < 6; d++)
		fprintf(out, "%s%u", d ? "x" : "", nbg_io_dim_outer(io, d));
	fprintf(out, " %s", nbg_data_format_name(io->data_format) ? nbg_data_format_name(io->data_format)
								    : "?");
	if (io->has_name) {
		fprintf(out, "\\n");
		put_dot(out, io->name, 64);
	}
	fprintf(out, "\", shape=ellipse, style=filled, fillcolor=\"%s\"];\n",
		kind == K_IN ? "#d5f0d5" : "#f3d6d6");
}

/* A (node, operation) pair, sorted by node then operation. */
typedef struct node_edge {
	uint64_t a, b;
} node_edge;

static int cmp_edge(const void *x, const void *y)
{
	const node_edge *p = x, *q = y;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return (p->b > q->b) - (p->b < q->b);
}

static void put_bytes(FILE *out, uint64_t b)
{
	if (b >= 10u << 20)
		fprintf(out, "%" PRIu64 " MiB", b >> 20);
	else if (b >= 10u << 10)
		fprintf(out, "%" PRIu64 " KiB", b >> 10);
	else
		fprintf(out, "%" PRIu64 " B", b);
}

/* The DOT node of an end of a network edge. */
static uint64_t end_node(const nbg_network *net, unsigned kind, size_t i)
{
	const nbg_net_layer *l = nbg_network_layer_at(net, i);
	if (kind == NBG_NET_INPUT)
		return key(K_IN, i);
	if (kind == NBG_NET_OUTPUT)
		return key(K_OUT, i);
	return l->layer != UINT32_MAX ? key(K_LAYER, l->layer) : key(K_OP, l->first_operation);
}

/* The network view's edges, labelled with the bytes that flow: proven ones
 * solid, inferred ones dashed and marked; backward ones (tile interleaving)
 * not drawn, counted in the title. */
static void edges(FILE *out, const nbg_network *net)
{
	for (size_t i = 0; i < nbg_network_edge_count(net); i++) {
		const nbg_net_edge *e = nbg_network_edge_at(net, i);
		if (e->backward)
			continue;
		fprintf(out, "  ");
		node_name(out, end_node(net, e->from_kind, e->from));
		fprintf(out, " -> ");
		node_name(out, end_node(net, e->to_kind, e->to));
		fprintf(out, " [label=\"%s", e->basis == NBG_NET_EDGE_INFERRED ? "inferred " : "");
		put_bytes(out, e->bytes);
		if (e->slice_of)
			fprintf(out, "\\nchannels of %" PRIu32, e->slice_of);
		fprintf(out, "\"%s];\n", e->basis == NBG_NET_EDGE_INFERRED ? ", style=dashed" : "");
	}
}

/* Operations drawn, grouped by node (layer), each group in execution order. */
static int boxes(FILE *out, const nbg_graph *g, const nbg_commands *c, const nbg_network *net)
{
	size_t n = 0, total = nbg_commands_op_count(c) + nbg_commands_other_count(c);
	node_edge *v = total ? calloc(total, sizeof(*v)) : NULL; /* (node, operation) */
	size_t *ix = total ? calloc(total, sizeof(size_t)) : NULL;

	if (total && (!v || !ix)) {
		free(v);
		free(ix);
		return -1;
	}
	for (size_t i = 0; i < nbg_graph_summary_of(g)->operation_count && n < total; i++)
		if (nbg_commands_op_of(c, i) || other_of(c, i)) {
			v[n].a = op_node(g, i);
			v[n].b = i;
			n++;
		}
	if (n)
		qsort(v, n, sizeof(*v), cmp_edge);
	for (size_t i = 0; i < n; i++)
		ix[i] = (size_t)v[i].b;
	for (size_t i = 0, first = 0; i < n; i++)
		if (i + 1 == n || v[i + 1].a != v[i].a) {
			fprintf(out, "  ");
			box(out, g, c, net, ix + first, i + 1 - first);
			first = i + 1;
		}
	free(v);
	free(ix);
	return 0;
}

/* The title: the file's title, the legend, and the banner where the
 * data-flow checks fail. */
static void title_text(FILE *out, const char *title, const nbg_network *net)
{
	size_t backward = 0;
	for (size_t i = 0; i < nbg_network_edge_count(net); i++)
		backward += nbg_network_edge_at(net, i)->backward != 0;
	fprintf(out, "digraph nbg {\n  label=\"");
	put_dot(out, title ? title : "network", 256);
	for (size_t i = 0; i < nbg_network_warning_count(net); i++) {
		const nbg_net_warning *w = nbg_network_warning_at(net, i);
		fprintf(out, "%sDATA FLOW UNRELIABLE: %s fails %" PRIu64 " of %" PRIu64,
			i ? "; " : "\\n", w->relation, w->failed, w->checked);
	}
	if (nbg_network_warning_count(net))
		fprintf(out, " (edges and propagated shapes may be wrong there)");
	fprintf(out, "\\nlayers: operator (from the NN / TP commands, or the vendor name where marked) "
		     "and whole tensors x y z (\\\"engine view\\\": how the NPU addresses it); SH and SW "
		     "operations, not decoded: dashed boxes\\nedges: the bytes that flow; solid: proven "
		     "by the commands' footprints; dashed \\\"inferred\\\": an end not decoded or an "
		     "operand; %zu backward edges (tile interleaving) not drawn\";\n", backward);
}

int nbg_commands_dot(FILE *out, nbg_decoded *d, const char *title)
{
	const nbg_model *m = d ? nbg_decoded_model(d) : NULL;
	const nbg_graph *g = NULL;
	const nbg_commands *c = NULL;
	const nbg_network *net = NULL;

	if (!out || !m || nbg_decoded_graph(d, &g, NULL) != NBG_OK ||
	    nbg_decoded_commands(d, &c, NULL) != NBG_OK || nbg_decoded_network(d, &net, NULL) != NBG_OK)
		return -1;
	title_text(out, title, net);
	fprintf(out, "  labelloc=t;\n  node [fontname=\"monospace\", fontsize=10];\n"
		     "  edge [fontname=\"monospace\", fontsize=9];\n");
	for (size_t i = 0; i < nbg_model_input_count(m); i++) {
		fprintf(out, "  ");
		io_node(out, K_IN, i, nbg_model_input_at(m, i));
	}
	int rc = boxes(out, g, c, net);
	for (size_t i = 0; rc == 0 && i < nbg_model_output_count(m); i++) {
		fprintf(out, "  ");
		io_node(out, K_OUT, i, nbg_model_output_at(m, i));
	}
	if (rc == 0)
		edges(out, net);
	if (rc != 0)
		return -1;
	fprintf(out, "}\n");
	return ferror(out) ? -1 : 0;
}
