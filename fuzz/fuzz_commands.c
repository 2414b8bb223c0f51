/*
 * fuzz_commands.c - libFuzzer harness: NN / TP command decoding
 * (nbg_commands_decode), its JSON, its text and its DOT document.  Whenever
 * the parse succeeds the commands must decode (findings, never a failure),
 * every command must lie inside its section, every operation must name an
 * existing command and OPERATIONS record, every edge must join existing
 * nodes, relation counts must be consistent, the JSON must read back with
 * one entry per operation and finding, and the text and DOT must be text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_common.h"
#include "nbg/commands.h"
#include "nbg/decoded.h"
#include "nbg/graph.h"
#include "nbg/report.h"
#include "nbg/layers.h"
#include "report/text_internal.h" /* nbg_text_commands_summary */

static void check_sections(const nbg_commands *c, size_t size)
{
	for (unsigned e = 0; e < NBG_CMD_ENGINE_COUNT; e++) {
		const nbg_cmd_section *s = nbg_commands_section(c, e);
		size_t n = nbg_commands_count(c, e);
		FZ_CHECK(s != NULL);
		if (!s->present || !s->decoded) {
			FZ_CHECK(n == 0);
			continue;
		}
		FZ_CHECK(s->offset <= size && s->size <= size - s->offset);
		FZ_CHECK(s->command_size >= 104 && s->command_size <= NBG_CMD_MAX_BYTES &&
			 s->command_size % 4 == 0);
		FZ_CHECK(n == s->size / s->command_size && s->trailing_bytes == s->size % s->command_size);
		for (size_t i = 0; i < n; i++) {
			const nbg_cmd *cmd = nbg_commands_at(c, e, i);
			FZ_CHECK(cmd && cmd->index == i && cmd->engine == e);
			FZ_CHECK(cmd->offset == s->offset + i * s->command_size);
			FZ_CHECK(cmd->word_count == s->command_size / 4);
		}
		FZ_CHECK(nbg_commands_at(c, e, n) == NULL);
	}
}

static void check_ops(const nbg_model *m, const nbg_graph *g, const nbg_commands *c)
{
	size_t n = nbg_commands_op_count(c);
	char d[160];

	for (size_t i = 0; i < n; i++) {
		const nbg_cmd_op *op = nbg_commands_op_at(c, i);
		FZ_CHECK(op->engine < NBG_CMD_ENGINE_COUNT);
		FZ_CHECK(op->command < nbg_commands_count(c, op->engine));
		FZ_CHECK(op->operation < nbg_graph_summary_of(g)->operation_count);
		FZ_CHECK(op->producer < (int64_t)op->operation);
		FZ_CHECK(nbg_commands_op_of(c, op->operation) == op);
		FZ_CHECK(op->unexplained_bytes <= op->read_bytes);
		FZ_CHECK(op->input_record < 0 || (size_t)op->input_record < nbg_model_input_count(m));
		FZ_CHECK(op->output_record < 0 || (size_t)op->output_record < nbg_model_output_count(m));
		FZ_CHECK(!op->in_ref.patched || op->in_ref.patch < nbg_graph_summary_of(g)->patch_count);
		nbg_command_describe(op, d, sizeof(d));
		FZ_CHECK(fz_terminated(d, sizeof(d)));
	}
	/* edges join operations (records) in execution order, input and output
	 * records; each carries bytes */
	size_t ops = nbg_graph_summary_of(g)->operation_count;
	for (size_t i = 0; i < nbg_commands_edge_count(c); i++) {
		const nbg_cmd_edge *e = nbg_commands_edge_at(c, i);
		FZ_CHECK(e->kind <= NBG_CMD_EDGE_OUTPUT && e->basis <= NBG_CMD_EDGE_REFERENCE);
		FZ_CHECK(e->bytes > 0);
		if (e->kind == NBG_CMD_EDGE_OP)
			FZ_CHECK(e->from < e->to && e->to < ops);
		else if (e->kind == NBG_CMD_EDGE_INPUT)
			FZ_CHECK(e->from < nbg_model_input_count(m) && e->to < ops);
		else
			FZ_CHECK(e->from < ops && e->to < nbg_model_output_count(m));
	}
	for (size_t i = 0; i < nbg_commands_other_count(c); i++) {
		const nbg_cmd_other *x = nbg_commands_other_at(c, i);
		FZ_CHECK(x->operation < ops && !nbg_commands_op_of(c, x->operation));
		FZ_CHECK(x->ref_count > 0 && x->ref_count <= NBG_CMD_MAX_REFS);
		FZ_CHECK(i == 0 || x->operation > nbg_commands_other_at(c, i - 1)->operation);
	}
	FZ_CHECK(nbg_commands_other_at(c, nbg_commands_other_count(c)) == NULL);
	for (size_t r = 0; r < nbg_commands_relation_count(c); r++) {
		const nbg_graph_relation *rel = nbg_commands_relation_at(c, r);
		FZ_CHECK(rel && rel->id && rel->held <= rel->checked);
	}
	FZ_CHECK(nbg_commands_finding_count(c) <= NBG_GRAPH_MAX_FINDINGS);
	for (size_t i = 0; i < nbg_commands_finding_count(c); i++) {
		const nbg_graph_finding *f = nbg_commands_finding_at(c, i);
		FZ_CHECK(fz_terminated(f->id, sizeof(f->id)) && fz_terminated(f->text, sizeof(f->text)));
	}
}

static void check_outputs(const nbg_model *m, const nbg_graph *g, const nbg_commands *c)
{
	char *s;
	json_error_t jerr;
	json_t *doc, *o;
	fz_text t;
	FILE *out = fz_text_open(&t);

	nbg_text_commands(out, m, g, c);
	nbg_text_commands_summary(out, m);
	fz_text_check(&t);

	nbg_decoded *d = NULL;
	FZ_CHECK(nbg_decoded_new(m, &d, NULL) == NBG_OK);
	FZ_CHECK(nbg_commands_dot(fz_text_open(&t), d, "fuzz \"title\" \\ \x01") == 0);
	nbg_decoded_free(d);
	const char *buf = fz_text_close(&t);
	FZ_CHECK(!strncmp(buf, "digraph nbg {\n", 14) && t.len >= 2 && !strcmp(buf + t.len - 2, "}\n"));
	fz_text_free(&t);

	s = fz_document(m, "fuzz.nb", NBG_JSON_DOC_NO_CORE | NBG_JSON_DOC_COMMANDS);
	FZ_CHECK(s != NULL);
	doc = json_loads(s, 0, &jerr);
	FZ_CHECK(doc != NULL);
	o = json_object_get(doc, "commands");
	FZ_CHECK(json_array_size(json_object_get(o, "operations")) == nbg_commands_op_count(c));
	FZ_CHECK(json_array_size(json_object_get(o, "findings")) == nbg_commands_finding_count(c));
	json_decref(doc);
	free(s);
}

/* The network view: every node's operations are its own, in first-run
 * order; every edge's ends exist, the drawn ones run forward (no cycle);
 * every shape with a basis has its dimensions; the JSON carries them. */
static void check_network(const nbg_model *m, const nbg_graph *g, const nbg_commands *c)
{
	nbg_network *n = NULL;
	size_t ops = nbg_graph_summary_of(g)->operation_count, nodes;

	FZ_CHECK(nbg_network_build(m, g, c, &n, NULL) == NBG_OK && n);
	nodes = nbg_network_layer_count(n);
	FZ_CHECK(nodes <= ops);
	for (size_t k = 0; k < nodes; k++) {
		const nbg_net_layer *l = nbg_network_layer_at(n, k);
		FZ_CHECK(l->op && nbg_network_layer_of(n, l->first_operation) == k);
		FZ_CHECK(k == 0 || nbg_network_layer_at(n, k - 1)->first_operation < l->first_operation);
		for (int s = 0; s < 2; s++) {
			const nbg_net_tensor *t = s ? &l->out : &l->in;
			FZ_CHECK(t->basis <= NBG_NET_SHAPE_ENGINE);
			FZ_CHECK(t->basis == NBG_NET_SHAPE_NONE || t->dims[0]);
		}
	}
	for (size_t i = 0; i < nbg_network_edge_count(n); i++) {
		const nbg_net_edge *e = nbg_network_edge_at(n, i);
		FZ_CHECK(e->from_kind == NBG_NET_INPUT ? e->from < nbg_model_input_count(m) : e->from < nodes);
		FZ_CHECK(e->to_kind == NBG_NET_OUTPUT ? e->to < nbg_model_output_count(m) : e->to < nodes);
		FZ_CHECK(e->backward || e->from_kind || e->to_kind || e->from < e->to);
	}
	nbg_network_free(n);
	char *s = fz_document(m, "fuzz.nb", NBG_JSON_DOC_NO_CORE | NBG_JSON_DOC_NETWORK);
	json_error_t jerr;
	json_t *doc = s ? json_loads(s, 0, &jerr) : NULL;
	FZ_CHECK(doc && json_array_size(json_object_get(json_object_get(doc, "network"), "layers")) ==
				nodes);
	json_decref(doc);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nbg_model *m = NULL;
	nbg_graph *g = NULL;
	nbg_commands *c = NULL;
	nbg_error err;
	nbg_code rc;

	if (fz_parse(data, size, &m, &err) != NBG_OK)
		return 0;
	FZ_CHECK(nbg_graph_decode(m, &g, &err) == NBG_OK);
	rc = nbg_commands_decode(m, g, &c, &err);
	if (rc != NBG_OK)
		fprintf(stderr, "commands: %s: %s\n", nbg_code_name(rc), err.message);
	FZ_CHECK(rc == NBG_OK && c != NULL);
	check_sections(c, size);
	check_ops(m, g, c);
	check_outputs(m, g, c);
	check_network(m, g, c);
	nbg_commands_free(c);
	nbg_graph_free(g);
	nbg_model_free(m);
	return 0;
}
