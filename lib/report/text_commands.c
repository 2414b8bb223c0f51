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

#include "analysis/commands_internal.h"
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

/* Where an operation's input comes from: input record, producer, or "?". */
static void source_text(const nbg_commands *c, const nbg_cmd_op *op, char *buf, size_t size)
{
	size_t producers = 0;

	if (op->input_record >= 0) {
		snprintf(buf, size, "input %d", op->input_record);
		return;
	}
	for (size_t i = 0; i < c->edge_count; i++)
		producers += c->edges[i].kind == NBG_CMD_EDGE_OP &&
			     c->edges[i].to == (size_t)(op - c->ops);
	if (op->producer < 0) {
		snprintf(buf, size, "%s", producers ? "part of earlier outputs" : "?");
		return;
	}
	snprintf(buf, size, "%s %u%s", op_label(&c->ops[op->producer]),
		 c->ops[op->producer].command, producers > 1 ? " +more" : "");
}

static void section_line(FILE *out, const nbg_commands *c, unsigned e)
{
	const nbg_cmd_section *s = &c->sec[e];
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
	for (int r = 0; r < NBG_CMDR__COUNT; r++) {
		const nbg_graph_relation *rel = &c->relations[r];
		char hc[32];
		snprintf(hc, sizeof(hc), "%" PRIu64 "/%" PRIu64, rel->held, rel->checked);
		fprintf(out, "  %-34s %13s  %-6s %s\n", rel->id, hc, rel->evidence, rel->text);
	}
	if (c->finding_count) {
		fprintf(out, "\nCommand findings (%zu%s):\n", c->finding_count,
			c->findings_dropped ? ", more dropped" : "");
		for (size_t i = 0; i < c->finding_count; i++)
			fprintf(out, "  %-34s @%-8" PRIu64 " %s\n", c->findings[i].id,
				c->findings[i].offset, c->findings[i].text);
	}
}

void nbg_text_commands(FILE *out, const nbg_model *m, const nbg_graph *g, const nbg_commands *c)
{
	char desc[160], src[48];

	if (!out || !m || !g || !c)
		return;
	fprintf(out, "\nCommands (layout of the open etnaviv driver; evidence in doc/commands.md):\n");
	section_line(out, c, NBG_CMD_NN);
	section_line(out, c, NBG_CMD_TP);
	fprintf(out, "\nOperations (%zu NN-engine and TP operations, execution order):\n", c->op_count);
	for (size_t i = 0; i < c->op_count; i++) {
		const nbg_cmd_op *op = &c->ops[i];
		source_text(c, op, src, sizeof(src));
		fprintf(out, "  %s %u: %s  [op %zu, layer %u", op_label(op),
			op->command, nbg_command_describe(op, desc, sizeof(desc)), op->operation,
			op->layer_id);
		if (op->layer_id < g->layer_count) {
			fputc(' ', out);
			nbg_text_put(out, nbg_graph_layer_at(g, op->layer_id)->name);
		}
		fprintf(out, "] <- %s", src);
		if (op->output_record >= 0)
			fprintf(out, " -> output %d", op->output_record);
		fputc('\n', out);
	}
	relations(out, c);
}

/* ---------------------------------------------------------------- summary */

static void dims(char *buf, size_t size, const uint32_t v[3])
{
	snprintf(buf, size, "%ux%ux%u", v[0], v[1], v[2]);
}

/* One line for the operations [first, last] of one layer. */
static void layer_line(FILE *out, const nbg_graph *g, const nbg_cmd_op *ops, size_t first,
		       size_t last)
{
	const nbg_cmd_op *nn = NULL, *lastout = NULL, *other = NULL;
	size_t others = 0;
	char what[96] = "", in[40], outd[40] = "?", shape[96];
	uint32_t id = ops[first].layer_id;

	for (size_t i = first; i <= last; i++) {
		if (ops[i].engine == NBG_CMD_NN)
			lastout = &ops[i];
		if (ops[i].type == NBG_GRAPH_OP_NN) {
			nn = nn ? nn : &ops[i];
		} else {
			others++;
			other = other ? other : &ops[i];
		}
	}
	if (nn)
		snprintf(what, sizeof(what), "NN %s %ux%ux%u -> %u%s%s%s", nn->kind, nn->kernel[0],
			 nn->kernel[1], nn->kernel[2], nn->out[2], nn->relu ? ", relu" : "",
			 nn->pooling ? ", pool " : "",
			 nn->pooling ? nbg_command_pooling_name(nn->pooling) : "");
	if (other)
		snprintf(what + strlen(what), sizeof(what) - strlen(what), "%s%s %s x%zu",
			 nn ? "; " : "", op_label(other), other->kind, others);
	dims(in, sizeof(in), ops[first].in);
	if (lastout)
		dims(outd, sizeof(outd), lastout->out);
	fprintf(out, "  [%4u] ", id);
	if (id < g->layer_count) {
		char *name = nbg_text_escape(nbg_graph_layer_at(g, id)->name, 32);
		fprintf(out, "%-32.32s", name ? name : "");
		free(name);
	} else {
		fprintf(out, "%-32s", "(no layer)");
	}
	snprintf(shape, sizeof(shape), "%s -> %s", in, outd);
	fprintf(out, " %3zu  %-28s %s\n", last - first + 1, shape, what);
}

void nbg_text_commands_summary(FILE *out, const nbg_model *m)
{
	nbg_graph *g = NULL;
	nbg_commands *c = NULL;
	nbg_error err;
	uint64_t checks = 0, held = 0;

	if (!out || !m)
		return;
	fprintf(out, "\nNetwork (NN / TP operations by layer, read from their commands):\n");
	if (nbg_graph_decode(m, &g, &err) != NBG_OK || nbg_commands_decode(m, g, &c, &err) != NBG_OK) {
		fprintf(out, "  (not decoded: %s)\n", err.message);
		nbg_graph_free(g);
		return;
	}
	if (!c->op_count) {
		fprintf(out, "  no NN or TP operation with a decodable command\n");
	} else {
		fprintf(out, "  [Layer] %-31s %3s  %-28s %s\n", "Name", "Ops", "In -> out (x y z)",
			"What");
		for (size_t i = 0, first = 0; i < c->op_count; i++)
			if (i + 1 == c->op_count || c->ops[i + 1].layer_id != c->ops[i].layer_id) {
				layer_line(out, g, c->ops, first, i);
				first = i + 1;
			}
	}
	for (int r = 0; r < NBG_CMDR__COUNT; r++) {
		checks += c->relations[r].checked;
		held += c->relations[r].held;
	}
	fprintf(out, "  %-26s %d relations, %" PRIu64 " checks, %" PRIu64 " hold\n",
		"Command relations:", NBG_CMDR__COUNT, checks, held);
	fprintf(out, "  (each operation and relation: nbg inspect --commands FILE; a picture: "
		"nbg graph FILE --svg OUT.svg)\n");
	nbg_commands_free(c);
	nbg_graph_free(g);
}
