/*
 * text_commands.c - `nbg inspect --commands` (one line per NN / TP
 * operation, the relations, the findings) and the default report's
 * per-layer summary of what the network computes.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbg/commands.h"
#include "report/text_internal.h"

/* "NN", "TP", "SP", "NN_LUT", "NT": the operation's type. */
static const char *op_label(const nbg_cmd_op *op)
{
	const char *n = nbg_graph_op_type_name(op->type);
	return n ? n : nbg_command_engine_name(op->engine);
}

static void type_name(uint32_t code, char *buf, size_t size)
{
	const char *n = nbg_command_data_type_name(code);
	if (n)
		snprintf(buf, size, "%s", n);
	else
		snprintf(buf, size, "type %u", code);
}

char *nbg_command_describe(const nbg_cmd_op *op, char *buf, size_t size)
{
	char in[16], out[16];
	size_t n;

	if (!buf || !size)
		return buf;
	if (!op) {
		buf[0] = '\0';
		return buf;
	}
	if (op->engine == NBG_CMD_NN && op->type != NBG_GRAPH_OP_NN)
		n = (size_t)snprintf(buf, size, "%s %ux%ux%u -> %ux%ux%u", op->kind, op->in[0],
				     op->in[1], op->in[2], op->out[0], op->out[1], op->out[2]);
	else if (op->engine == NBG_CMD_NN)
		n = (size_t)snprintf(buf, size, "%s %ux%ux%u -> %u, %ux%u -> %ux%u", op->kind,
				     op->kernel[0], op->kernel[1], op->kernel[2], op->out[2],
				     op->in[0], op->in[1], op->out[0], op->out[1]);
	else if (op->out[0])
		n = (size_t)snprintf(buf, size, "%s %ux%ux%u -> %ux%ux%u", op->kind, op->in[0],
				     op->in[1], op->in[2], op->out[0], op->out[1], op->out[2]);
	else
		n = (size_t)snprintf(buf, size, "%s %ux%ux%u", op->kind, op->in[0], op->in[1],
				     op->in[2]);
	if (n < size && op->engine == NBG_CMD_NN && op->pooling)
		n += (size_t)snprintf(buf + n, size - n, ", %s pool %ux%u",
				      nbg_command_pooling_name(op->pooling), op->pooling_size,
				      op->pooling_size);
	if (n < size && op->relu)
		n += (size_t)snprintf(buf + n, size - n, ", relu");
	type_name(op->in_type, in, sizeof(in));
	type_name(op->out_type, out, sizeof(out));
	if (n < size && op->type != NBG_GRAPH_OP_NT) { /* NT: data-type bits unused */
		if (op->in_type == op->out_type)
			snprintf(buf + n, size - n, ", %s", in);
		else
			snprintf(buf + n, size - n, ", %s -> %s", in, out);
	}
	return buf;
}

/* "NN 3", "TP 0", "SH op 13": how a line names operation `i`. */
static void op_name(const nbg_commands *c, const nbg_graph *g, size_t i, char *buf, size_t size)
{
	const nbg_cmd_op *op = nbg_commands_op_of(c, i);
	const nbg_graph_operation *o = nbg_graph_operation_at(g, i);
	const char *t = o ? nbg_graph_op_type_name(o->type) : NULL;

	if (op)
		snprintf(buf, size, "%s %u", op_label(op), op->command);
	else
		snprintf(buf, size, "%s op %zu", t ? t : "?", i);
}

/* The edges each operation's line names, found once for the whole table:
 * operation i's are at[start[i] .. start[i + 1]), in edge order, the edges
 * into it (not to an output record) and those from it to an output record.
 * Without it (memory ran out) every line scans every edge. */
typedef struct edge_index {
	size_t ops;
	size_t *start, *at;
} edge_index;

/* The operation whose line names edge e. */
static size_t edge_owner(const nbg_cmd_edge *e)
{
	return e->kind == NBG_CMD_EDGE_OUTPUT ? e->from : e->to;
}

/* A stable counting sort of n items by key(i) < keys into start / at;
 * false when memory runs out. */
static bool group_sort(size_t n, size_t keys, size_t (*key)(const void *, size_t),
		       const void *ctx, size_t **start, size_t **at)
{
	size_t *s = calloc(keys + 2, sizeof(*s)), *a = malloc((n ? n : 1) * sizeof(*a));

	*start = s;
	*at = a;
	if (!s || !a)
		return false;
	for (size_t i = 0; i < n; i++)
		if (key(ctx, i) < keys)
			s[key(ctx, i) + 2]++;
	for (size_t k = 2; k < keys + 2; k++)
		s[k] += s[k - 1];
	for (size_t i = 0; i < n; i++)
		if (key(ctx, i) < keys)
			a[s[key(ctx, i) + 1]++] = i;
	return true;
}

static size_t edge_key(const void *ctx, size_t k)
{
	return edge_owner(nbg_commands_edge_at(ctx, k));
}

/* Sorted once by the operation that names them (stably: each operation's
 * edges keep their order). */
static void edge_index_build(edge_index *x, const nbg_commands *c, size_t ops)
{
	x->ops = ops;
	if (!group_sort(nbg_commands_edge_count(c), ops, edge_key, c, &x->start, &x->at)) {
		free(x->start);
		free(x->at);
		x->start = x->at = NULL;
	}
}

static void edge_index_free(edge_index *x)
{
	free(x->start);
	free(x->at);
}

/* Operation i's next edge after *k (*k SIZE_MAX to begin); NULL at the end. */
static const nbg_cmd_edge *edge_next(const edge_index *x, const nbg_commands *c, size_t i,
				     size_t *k)
{
	size_t n = nbg_commands_edge_count(c);

	if (x && x->start) {
		size_t j = *k == SIZE_MAX ? (i < x->ops ? x->start[i] : 0) : *k + 1;
		*k = j;
		return i < x->ops && j < x->start[i + 1] ? nbg_commands_edge_at(c, x->at[j]) : NULL;
	}
	for (size_t j = *k == SIZE_MAX ? 0 : *k + 1; j < n; j++)
		if (edge_owner(nbg_commands_edge_at(c, j)) == i) {
			*k = j;
			return nbg_commands_edge_at(c, j);
		}
	*k = n;
	return NULL;
}

/* Where operation i's bytes come from: the input records and operations
 * that wrote them last, the first three named. */
static void source_text(const nbg_commands *c, const nbg_graph *g, const edge_index *x,
			size_t i, char *buf, size_t size)
{
	size_t n = 0, shown = 0, len = 0, k = SIZE_MAX;
	const nbg_cmd_edge *e;

	buf[0] = '\0';
	while ((e = edge_next(x, c, i, &k)) != NULL) {
		char one[40];
		if (e->kind == NBG_CMD_EDGE_OUTPUT)
			continue;
		if (n++ >= 3)
			continue;
		if (e->kind == NBG_CMD_EDGE_INPUT)
			snprintf(one, sizeof(one), "input %zu", e->from);
		else
			op_name(c, g, e->from, one, sizeof(one));
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s",
					shown++ ? ", " : "", one);
	}
	if (n > 3 && len < size)
		snprintf(buf + len, size - len, " +%zu more", n - 3);
	if (!n)
		snprintf(buf, size, "?");
}

/* " -> output k" for every output record operation i writes. */
static void output_text(FILE *out, const nbg_commands *c, const edge_index *x, size_t i)
{
	size_t k = SIZE_MAX;
	const nbg_cmd_edge *e;

	while ((e = edge_next(x, c, i, &k)) != NULL)
		if (e->kind == NBG_CMD_EDGE_OUTPUT)
			fprintf(out, " -> output %zu", e->to);
}

static void ref_text(FILE *out, const nbg_cmd_mem_ref *r)
{
	const char *n = nbg_graph_source_type_name(r->source_type);
	if (r->source_type == NBG_GRAPH_SRC_INPUT || r->source_type == NBG_GRAPH_SRC_OUTPUT)
		fprintf(out, "%s %d", r->source_type == NBG_GRAPH_SRC_INPUT ? "input" : "output",
			r->index);
	else
		fprintf(out, "%s+0x%" PRIx64, n ? n : "?", r->offset);
}

/* An operation that is not decoded: what its patches reference. */
static void other_line(FILE *out, const nbg_commands *c, const nbg_graph *g,
		       const edge_index *ix, const nbg_cmd_other *x)
{
	char src[128];
	const char *t = nbg_graph_op_type_name(x->type);

	fprintf(out, "  %s op %zu: not decoded;", t ? t : "?", x->operation);
	for (size_t r = 0; r < x->ref_count; r++) {
		fprintf(out, "%s ", r ? "," : "");
		fprintf(out, "%s ", x->writes && r == x->written ? "writes" : "reads");
		ref_text(out, &x->refs[r]);
	}
	fprintf(out, "  [op %zu, layer %u", x->operation, x->layer_id);
	if (x->layer_id < nbg_graph_summary_of(g)->layer_count) {
		fputc(' ', out);
		nbg_text_put(out, nbg_graph_layer_at(g, x->layer_id)->name);
	}
	source_text(c, g, ix, x->operation, src, sizeof(src));
	fprintf(out, "] <- %s", src);
	output_text(out, c, ix, x->operation);
	fputc('\n', out);
}

static void section_line(FILE *out, const nbg_commands *c, unsigned e)
{
	const nbg_cmd_section *s = nbg_commands_section(c, e);
	const char *n = nbg_command_engine_name(e);

	if (!s->present)
		fprintf(out, "  %-26s none\n", e == NBG_CMD_NN ? "NN commands:" : "TP commands:");
	else if (!s->decoded)
		fprintf(out, "  %s commands:               %" PRIu64 " bytes, not decoded (command "
			"size %s)\n", n, s->size, s->size_source ? s->size_source : "unknown");
	else
		fprintf(out, "  %s commands:               %zu of %u bytes at offset %" PRIu64
			" (size from %s)\n", n, s->count, s->command_size, s->offset,
			s->size_source);
}

static void relations(FILE *out, const nbg_commands *c)
{
	fprintf(out, "\nCommand relations (findings, never failures):\n");
	fprintf(out, "  %-34s %13s  %-6s %s\n", "relation (finding id)", "held/checked", "basis",
		"what is checked");
	for (size_t r = 0; r < nbg_commands_relation_count(c); r++) {
		const nbg_graph_relation *rel = nbg_commands_relation_at(c, r);
		char hc[32];
		snprintf(hc, sizeof(hc), "%" PRIu64 "/%" PRIu64, rel->held, rel->checked);
		fprintf(out, "  %-34s %13s  %-6s %s\n", rel->id, hc, rel->evidence, rel->text);
	}
	if (nbg_commands_finding_count(c)) {
		fprintf(out, "\nCommand findings (%zu%s):\n", nbg_commands_finding_count(c),
			nbg_commands_findings_dropped(c) ? ", more dropped" : "");
		for (size_t i = 0; i < nbg_commands_finding_count(c); i++)
			fprintf(out, "  %-34s @%-8" PRIu64 " %s\n", nbg_commands_finding_at(c, i)->id,
				nbg_commands_finding_at(c, i)->offset, nbg_commands_finding_at(c, i)->text);
	}
}

void nbg_text_commands(FILE *out, const nbg_model *m, const nbg_graph *g, const nbg_commands *c)
{
	char desc[160], src[128];
	edge_index ix;

	if (!out || !m || !g || !c)
		return;
	edge_index_build(&ix, c, nbg_graph_summary_of(g)->operation_count);
	fprintf(out, "\nCommands (layout of the open etnaviv driver; evidence in doc/commands.md):\n");
	section_line(out, c, NBG_CMD_NN);
	section_line(out, c, NBG_CMD_TP);
	fprintf(out, "\nOperations (%zu NN-engine and TP operations, %zu others referencing memory; "
		"execution order):\n", nbg_commands_op_count(c), nbg_commands_other_count(c));
	for (size_t i = 0, x = 0; i < nbg_graph_summary_of(g)->operation_count; i++) {
		const nbg_cmd_op *op = nbg_commands_op_of(c, i);
		if (!op) {
			if (x < nbg_commands_other_count(c) && nbg_commands_other_at(c, x)->operation == i)
				other_line(out, c, g, &ix, nbg_commands_other_at(c, x++));
			continue;
		}
		source_text(c, g, &ix, i, src, sizeof(src));
		fprintf(out, "  %s %u: %s  [op %zu, layer %u", op_label(op),
			op->command, nbg_command_describe(op, desc, sizeof(desc)), op->operation,
			op->layer_id);
		if (op->layer_id < nbg_graph_summary_of(g)->layer_count) {
			fputc(' ', out);
			nbg_text_put(out, nbg_graph_layer_at(g, op->layer_id)->name);
		}
		fprintf(out, "] <- %s", src);
		output_text(out, c, &ix, i);
		fputc('\n', out);
	}
	edge_index_free(&ix);
	relations(out, c);
}

/* ---------------------------------------------------------------- summary */

void nbg_text_commands_summary_decoded(FILE *out, nbg_decoded *d)
{
	const nbg_commands *c = NULL;
	nbg_error err;
	uint64_t checks = 0, held = 0;

	nbg_text_network_decoded(out, d);
	if (nbg_decoded_commands(d, &c, &err) != NBG_OK)
		return;
	for (size_t r = 0; r < nbg_commands_relation_count(c); r++) {
		checks += nbg_commands_relation_at(c, r)->checked;
		held += nbg_commands_relation_at(c, r)->held;
	}
	fprintf(out, "  %-26s %zu relations, %" PRIu64 " checks, %" PRIu64 " hold\n",
		"Command relations:", nbg_commands_relation_count(c), checks, held);
	fprintf(out, "  (each operation, as the engine addresses it, and each relation: nbg inspect "
		"--commands FILE; a picture: nbg graph FILE --svg OUT.svg)\n");
}

void nbg_text_commands_summary(FILE *out, const nbg_model *m)
{
	if (out && m)
		nbg_text_decoded_part(out, m, nbg_text_commands_summary_decoded);
}
