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
static void box(FILE *out, const nbg_graph *g, const nbg_commands *c, const size_t *ix, size_t n)
{
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

/* An edge between two nodes: the bytes of all the operation edges it
 * stands for, and the weakest basis among them. */
typedef struct node_edge {
	uint64_t a, b, bytes;
	unsigned basis;
	uint64_t from;           /* the producing operation (input record), for sums */
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

/* The bytes that flow between two nodes, from the operation edges v[0..n)
 * between them: per producing operation what the consumers read of it,
 * never more than it wrote (two consumers reading the same bytes count
 * them once). */
static uint64_t flow_bytes(const nbg_commands *c, node_edge *v, size_t n)
{
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t read = 0, w = v[i].from;
		if (w == UINT64_MAX - 1) /* done */
			continue;
		for (size_t j = i; j < n; j++)
			if (v[j].from == w) {
				read += v[j].bytes;
				if (j > i)
					v[j].from = UINT64_MAX - 1;
			}
		uint64_t written = w < UINT64_MAX - 1 ? nbg_commands_bytes_written(c, (size_t)w) : 0;
		if (written && read > written)
			read = written;
		total += read;
	}
	return total;
}

/* Edges between distinct nodes, each once, in a stable order, labelled with
 * the bytes that flow; dashed where an end is not decoded. */
static int edges(FILE *out, const nbg_model *m, const nbg_graph *g, const nbg_commands *c)
{
	node_edge *v = nbg_commands_edge_count(c) ? calloc(nbg_commands_edge_count(c), sizeof(*v)) : NULL;
	size_t n = 0;

	if (nbg_commands_edge_count(c) && !v)
		return -1;
	for (size_t i = 0; i < nbg_commands_edge_count(c); i++) {
		const nbg_cmd_edge *e = nbg_commands_edge_at(c, i);
		uint64_t a, b;
		if (e->kind == NBG_CMD_EDGE_INPUT && e->from < nbg_model_input_count(m)) {
			a = key(K_IN, e->from);
			b = op_node(g, e->to);
		} else if (e->kind == NBG_CMD_EDGE_OUTPUT && e->to < nbg_model_output_count(m)) {
			a = op_node(g, e->from);
			b = key(K_OUT, e->to);
		} else if (e->kind == NBG_CMD_EDGE_OP) {
			a = op_node(g, e->from);
			b = op_node(g, e->to);
		} else {
			continue;
		}
		if (a != b) {
			v[n].a = a;
			v[n].b = b;
			v[n].bytes = e->bytes;
			v[n].basis = e->basis;
			v[n].from = e->kind == NBG_CMD_EDGE_INPUT ? UINT64_MAX - e->from : e->from;
			n++;
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_edge);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		uint64_t bytes = 0;
		unsigned basis = 0;
		for (; j < n && v[j].a == v[i].a && v[j].b == v[i].b; j++)
			if (v[j].basis > basis)
				basis = v[j].basis;
		bytes = flow_bytes(c, v + i, j - i);
		fprintf(out, "  ");
		node_name(out, v[i].a);
		fprintf(out, " -> ");
		node_name(out, v[i].b);
		fprintf(out, " [label=\"%s", basis == NBG_CMD_EDGE_OPERAND ? "operand " : "");
		put_bytes(out, bytes);
		fprintf(out, "\"%s];\n", basis == NBG_CMD_EDGE_REFERENCE ? ", style=dashed" : "");
		i = j;
	}
	free(v);
	return 0;
}

/* Operations drawn, grouped by node (layer), each group in execution order. */
static int boxes(FILE *out, const nbg_graph *g, const nbg_commands *c)
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
			box(out, g, c, ix + first, i + 1 - first);
			first = i + 1;
		}
	free(v);
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
	fprintf(out, " (NN / TP operations from their commands; SH and SW operations, not "
		     "decoded, from the memory their patches reference: dashed; edges: the bytes "
		     "that flow)\";\n  labelloc=t;\n  node [fontname=\"monospace\", fontsize=10];\n"
		     "  edge [fontname=\"monospace\", fontsize=9];\n");
	for (size_t i = 0; i < nbg_model_input_count(m); i++) {
		fprintf(out, "  ");
		io_node(out, K_IN, i, nbg_model_input_at(m, i));
	}
	if (boxes(out, g, c) != 0)
		return -1;
	for (size_t i = 0; i < nbg_model_output_count(m); i++) {
		fprintf(out, "  ");
		io_node(out, K_OUT, i, nbg_model_output_at(m, i));
	}
	if (edges(out, m, g, c) != 0)
		return -1;
	fprintf(out, "}\n");
	return ferror(out) ? -1 : 0;
}
