/*
 * dot_commands.c - nbg_commands_dot(): the recovered network as a Graphviz
 * DOT document.  One box per layer that has NN / TP operations (its name and
 * one line per run of operations that compute the same thing), one ellipse
 * per input and output record, and an edge wherever an operation of one box
 * reads an image an operation of another wrote (the chained images of
 * commands_check.c).  Every text from the file is escaped.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/commands_internal.h"

#define MAX_LINES 8

enum { K_LAYER = 0, K_OP = 1, K_IN = 2, K_OUT = 3 };

static uint64_t key(unsigned kind, uint64_t v)
{
	return (uint64_t)kind << 60 | (v & ((1ull << 60) - 1));
}

static uint64_t op_node(const nbg_graph *g, const nbg_commands *c, size_t k)
{
	const nbg_cmd_op *op = &c->ops[k];
	return op->layer_id < g->layer_count ? key(K_LAYER, op->layer_id) : key(K_OP, k);
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

/* The box of the operations ix[0..n), all of one layer (or one lone op). */
static void box(FILE *out, const nbg_graph *g, const nbg_commands *c, const size_t *ix, size_t n)
{
	const nbg_cmd_op *op0 = &c->ops[ix[0]];
	size_t lines = 0, nn = 0;
	char d[160], next[160];

	for (size_t i = 0; i < n; i++)
		nn += c->ops[ix[i]].engine == NBG_CMD_NN;
	node_name(out, op_node(g, c, ix[0]));
	fprintf(out, " [label=\"");
	if (op0->layer_id < g->layer_count) {
		fprintf(out, "layer %u ", op0->layer_id);
		put_dot(out, nbg_graph_layer_at(g, op0->layer_id)->name, 64);
	} else {
		fprintf(out, "operation %zu", op0->operation);
	}
	for (size_t i = 0; i < n; i++) {
		const nbg_cmd_op *op = &c->ops[ix[i]];
		size_t run = 1;
		nbg_command_describe(op, d, sizeof(d));
		while (i + run < n && c->ops[ix[i + run]].type == op->type &&
		       !strcmp(nbg_command_describe(&c->ops[ix[i + run]], next, sizeof(next)), d))
			run++;
		if (lines++ == MAX_LINES) {
			fprintf(out, "\\n...");
			break;
		}
		fprintf(out, "\\n%s %u: ", nbg_graph_op_type_name(op->type) ? nbg_graph_op_type_name(op->type)
						: nbg_command_engine_name(op->engine), op->command);
		put_dot(out, d, sizeof(d));
		if (run > 1)
			fprintf(out, " (x%zu)", run);
		i += run - 1;
	}
	fprintf(out, "\", shape=box, style=\"rounded,filled\", fillcolor=\"%s\"];\n",
		nn ? "#dbe9f6" : "#fbe5c8");
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

static int cmp_pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Edges between distinct nodes, each once, in a stable order. */
static int edges(FILE *out, const nbg_model *m, const nbg_graph *g, const nbg_commands *c)
{
	uint64_t *pairs = c->edge_count ? calloc(c->edge_count, 2 * sizeof(uint64_t)) : NULL;
	size_t n = 0;

	if (c->edge_count && !pairs)
		return -1;
	for (size_t i = 0; i < c->edge_count; i++) {
		const nbg_cmd_edge *e = &c->edges[i];
		uint64_t a, b;
		if (e->kind == NBG_CMD_EDGE_INPUT && e->from < m->input_count) {
			a = key(K_IN, e->from);
			b = op_node(g, c, e->to);
		} else if (e->kind == NBG_CMD_EDGE_OUTPUT && e->to < m->output_count) {
			a = op_node(g, c, e->from);
			b = key(K_OUT, e->to);
		} else if (e->kind == NBG_CMD_EDGE_OP) {
			a = op_node(g, c, e->from);
			b = op_node(g, c, e->to);
		} else {
			continue;
		}
		if (a != b) {
			pairs[2 * n] = a;
			pairs[2 * n + 1] = b;
			n++;
		}
	}
	if (n)
		qsort(pairs, n, 2 * sizeof(uint64_t), cmp_pair);
	for (size_t i = 0; i < n; i++) {
		if (i && pairs[2 * i] == pairs[2 * i - 2] && pairs[2 * i + 1] == pairs[2 * i - 1])
			continue;
		fprintf(out, "  ");
		node_name(out, pairs[2 * i]);
		fprintf(out, " -> ");
		node_name(out, pairs[2 * i + 1]);
		fprintf(out, ";\n");
	}
	free(pairs);
	return 0;
}

static int cmp_pair(const void *a, const void *b);

/* Operations grouped by node (layer), each group in execution order. */
static int boxes(FILE *out, const nbg_graph *g, const nbg_commands *c)
{
	uint64_t *pairs = c->op_count ? calloc(c->op_count, 2 * sizeof(uint64_t)) : NULL;
	size_t *ix = c->op_count ? calloc(c->op_count, sizeof(size_t)) : NULL;

	if (c->op_count && (!pairs || !ix)) {
		free(pairs);
		free(ix);
		return -1;
	}
	for (size_t i = 0; i < c->op_count; i++) {
		pairs[2 * i] = op_node(g, c, i);
		pairs[2 * i + 1] = i;
	}
	if (c->op_count)
		qsort(pairs, c->op_count, 2 * sizeof(uint64_t), cmp_pair);
	for (size_t i = 0; i < c->op_count; i++)
		ix[i] = (size_t)pairs[2 * i + 1];
	for (size_t i = 0, first = 0; i < c->op_count; i++)
		if (i + 1 == c->op_count || pairs[2 * i + 2] != pairs[2 * i]) {
			fprintf(out, "  ");
			box(out, g, c, ix + first, i + 1 - first);
			first = i + 1;
		}
	free(pairs);
	free(ix);
	return 0;
}

int nbg_commands_dot(FILE *out, const nbg_model *m, const nbg_graph *g, const nbg_commands *c,
		     const char *title)
{
	if (!out || !m || !g || !c)
		return -1;
	fprintf(out, "digraph nbg {\n  label=\"");
	put_dot(out, title ? title : "network", 256);
	fprintf(out, " (NN / TP operations from their commands");
	if (g->ops_by_type[NBG_GRAPH_OP_SH] || g->ops_by_type[NBG_GRAPH_OP_SW])
		fprintf(out, "; %zu SH and %zu SW operations are not decoded, not drawn",
			g->ops_by_type[NBG_GRAPH_OP_SH], g->ops_by_type[NBG_GRAPH_OP_SW]);
	fprintf(out, ")\";\n  labelloc=t;\n  node [fontname=\"monospace\", fontsize=10];\n");
	for (size_t i = 0; i < m->input_count; i++) {
		fprintf(out, "  ");
		io_node(out, K_IN, i, nbg_model_input_at(m, i));
	}
	if (boxes(out, g, c) != 0)
		return -1;
	for (size_t i = 0; i < m->output_count; i++) {
		fprintf(out, "  ");
		io_node(out, K_OUT, i, nbg_model_output_at(m, i));
	}
	if (edges(out, m, g, c) != 0)
		return -1;
	fprintf(out, "}\n");
	return ferror(out) ? -1 : 0;
}
