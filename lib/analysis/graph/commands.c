/*
 * commands.c - the NN and TP command descriptors of a parsed model: every
 * command of both sections decoded into the fields of commands_fields.c, and
 * one summary per NN / TP operation with the addresses its COMMAND patches
 * relocate.  The relations and the image chain are in commands_check.c.
 *
 * The command size comes from the file: the section's sd_entsize or the
 * NETWORK_INFO attribute bits in v2, the feature database in v1 (NN); v1
 * gives no TP command size, so the measured version rule is used
 * (doc/commands.md) and checked against the section size.  Commands are read
 * only inside their section: nothing here can read out of bounds.
 */
#include <stdio.h>
#include <stdlib.h>

#include "analysis/graph/commands_internal.h"
#include "analysis/graph/commands_check.h"
#include "analysis/graph/graph_struct.h"

/* ------------------------------------------------------------ small helpers */

/* The section of `type`; in v1 an empty entry means no such section. */
static const nbg_section *section(const nbg_model *m, uint32_t type)
{
	const nbg_section *s = nbg_model_section(m, type);
	if (s && m->family == 1 && s->size == 0)
		return NULL;
	return s;
}

/* ---------------------------------------------------------- command sizes */

/* Bytes the layout's named fields need (26 NN words, 31 TP words). */
static uint32_t layout_bytes(unsigned engine)
{
	size_t n;
	const nbg_cmd_field *t = nbg_command_fields(engine, &n);
	uint32_t words = 0;
	for (size_t i = 0; i < n; i++)
		if (t[i].word + 1u > words)
			words = t[i].word + 1u;
	return engine == NBG_CMD_NN && words < 26 ? 104 : words * 4;
}

static void v1_tp_size(const nbg_model *m, nbg_cmd_section *s)
{
	uint32_t rule = m->version >= 0x10014 ? 192 : 128, other = rule == 192 ? 128 : 192;

	s->command_size = rule;
	s->size_source = m->version >= 0x10014 ? "v1 version rule (0x10014 and newer: 192)"
					       : "v1 version rule (before 0x10014: 128)";
	if (s->size % rule && s->size % other == 0) {
		s->command_size = other;
		s->size_source = "v1 section size (the version rule's size does not divide it)";
	}
}

static void setup_section(nbg_commands *c, const nbg_model *m, unsigned engine)
{
	nbg_cmd_section *s = &c->sec[engine];
	const nbg_section *ps = section(m, engine == NBG_CMD_NN ? NBG_SEC_NN : NBG_SEC_TP);

	if (!ps)
		return;
	s->present = 1;
	s->offset = ps->offset;
	s->size = ps->size;
	if (m->family == 2 && ps->entry_size > 1) {
		s->command_size = ps->entry_size;
		s->size_source = "sd_entsize";
	} else if (m->family == 2) {
		s->command_size = engine == NBG_CMD_NN ? m->network_info.nn_command_bytes
						       : m->network_info.tp_command_bytes;
		s->size_source = "NETWORK_INFO attribute bits";
	} else if (engine == NBG_CMD_NN) {
		s->command_size = m->v1.nn_command_bytes;
		s->size_source = "v1 feature database";
	} else {
		v1_tp_size(m, s);
	}
	if (!s->command_size) {
		s->size_source = "unknown";
		if (s->size)
			nbg_command_finding(c, "command-size-unknown", ps->record_offset,
					"the %s command size is not given by the file: its "
					"commands are not decoded", nbg_command_engine_name(engine));
		return;
	}
	if (s->command_size % 4 || s->command_size < layout_bytes(engine) ||
	    s->command_size > NBG_CMD_MAX_BYTES) {
		nbg_command_finding(c, "command-size-unusable", ps->record_offset,
				"%s commands are %u bytes; the layout needs a multiple of 4 "
				"from %u to %u: not decoded", nbg_command_engine_name(engine),
				s->command_size, layout_bytes(engine), NBG_CMD_MAX_BYTES);
		return;
	}
	s->decoded = 1;
	s->count = (size_t)(s->size / s->command_size);
	s->trailing_bytes = s->size % s->command_size;
	if (s->trailing_bytes)
		nbg_command_finding(c, "command-section-size-not-multiple", ps->record_offset,
				"%s is %llu bytes, not a whole number of %u-byte commands: "
				"the last %llu bytes are not decoded",
				nbg_command_engine_name(engine), (unsigned long long)s->size,
				s->command_size, (unsigned long long)s->trailing_bytes);
}

/* ---------------------------------------------------------------- commands */

static uint32_t field_value(const uint32_t *words, const nbg_cmd_field *f)
{
	uint32_t w = words[f->word];
	if (f->bit_count >= 32)
		return w;
	return (w >> f->bit_lo) & ((1u << f->bit_count) - 1u);
}

/* Bits of word w that no field of the table names. */
static uint32_t unnamed_mask(const nbg_cmd_field *t, size_t n, uint32_t w)
{
	uint32_t named = 0;
	for (size_t i = 0; i < n; i++)
		if (t[i].word == w)
			named |= t[i].bit_count >= 32 ? 0xFFFFFFFFu
						      : ((1u << t[i].bit_count) - 1u) << t[i].bit_lo;
	return ~named;
}

static nbg_code decode_commands(nbg_commands *c, const nbg_model *m, unsigned engine)
{
	const nbg_cmd_section *s = &c->sec[engine];
	size_t nf, n = s->count;
	const nbg_cmd_field *t = nbg_command_fields(engine, &nf);
	uint32_t wc = s->command_size / 4, masks[NBG_CMD_MAX_BYTES / 4];

	if (!s->decoded || n == 0)
		return NBG_OK;
	c->cmds[engine] = calloc(n, sizeof(nbg_cmd));
	c->words[engine] = calloc(n, (size_t)wc * sizeof(uint32_t));
	c->values[engine] = calloc(n, (nf ? nf : 1) * sizeof(uint32_t));
	if (!c->cmds[engine] || !c->words[engine] || !c->values[engine])
		return NBG_E_OUT_OF_MEMORY;
	for (uint32_t w = 0; w < wc; w++)
		masks[w] = unnamed_mask(t, nf, w);
	c->cmd_count[engine] = n;
	for (size_t i = 0; i < n; i++) {
		nbg_cmd *cmd = &c->cmds[engine][i];
		uint32_t *words = &c->words[engine][i * wc];
		uint32_t *values = &c->values[engine][i * nf];
		const uint8_t *p = m->data + s->offset + (uint64_t)i * s->command_size;

		cmd->engine = engine;
		cmd->index = (uint32_t)i;
		cmd->offset = s->offset + (uint64_t)i * s->command_size;
		cmd->word_count = wc;
		cmd->words = words;
		cmd->values = values;
		cmd->operation = -1;
		for (uint32_t w = 0; w < wc; w++) {
			words[w] = le32(p + 4u * w);
			if (words[w] & masks[w])
				cmd->unnamed_nonzero |= 1ull << w;
		}
		for (size_t f = 0; f < nf; f++)
			values[f] = field_value(words, &t[f]);
	}
	return NBG_OK;
}

/* ------------------------------------------------------------- operations */

/* NN, SP, NN_LUT and NT operations run NN commands (nbg_operation_is_nn_engine
 * in the public header; their patches land on the same words), TP ones TP
 * commands. */
static int engine_of(uint32_t type)
{
	switch (type) {
	case NBG_GRAPH_OP_NN:
	case NBG_GRAPH_OP_SP:
	case NBG_GRAPH_OP_NN_LUT:
	case NBG_GRAPH_OP_NT:
		return NBG_CMD_NN;
	case NBG_GRAPH_OP_TP:
		return NBG_CMD_TP;
	default:
		return -1;
	}
}

/* The COMMAND patch of OPERATIONS record `operation` that targets the word
 * of field fi (an enum nbg_nn_fid or nbg_tp_fid, as cmd's engine) of its
 * command. */
static void find_ref(const nbg_graph *g, size_t operation, const nbg_cmd *cmd, int fi, nbg_cmd_ref *r)
{
	const nbg_cmd_field *f = nbg_command_fields(cmd->engine, NULL) + fi;

	nbg_command_word_ref(g, operation, f->word, (uint64_t)cmd->values[fi] << f->shift, r);
}

void nbg_command_field_ref(const nbg_graph *g, const nbg_cmd *cmd, size_t operation, int fi,
			   nbg_cmd_ref *r)
{
	const nbg_graph_operation *o = nbg_graph_operation_at(g, operation);
	size_t nf = 0;

	nbg_command_fields(cmd->engine, &nf);
	memset(r, 0, sizeof(*r));
	r->source_type = UINT32_MAX;
	r->index = -1;
	if (o && fi >= 0 && (size_t)fi < nf)
		find_ref(g, operation, cmd, fi, r);
}

static uint64_t mul3(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	return a * b * c * d; /* factors below 2^13, 2^16, 2^20 and 3: no overflow */
}

static void summarize_nn(nbg_cmd_op *op, const nbg_cmd *cmd)
{
	uint32_t kz = nbg_cmd_nn(cmd, NBG_NNF_KERNEL_Z_SIZE) |
		      (nbg_cmd_nn(cmd, NBG_NNF_KERNEL_Z_SIZE2) << 14);
	uint32_t ky = nbg_cmd_nn(cmd, NBG_NNF_KERNEL_Y_SIZE);
	int dw = nbg_cmd_nn(cmd, NBG_NNF_DEPTHWISE) != 0;

	op->kernel[0] = nbg_cmd_nn(cmd, NBG_NNF_KERNEL_XY_SIZE);
	op->kernel[1] = ky ? ky : op->kernel[0];
	op->kernel[2] = kz;
	op->out_conv[0] = op->out[0] = nbg_cmd_nn(cmd, NBG_NNF_OUT_IMAGE_X_SIZE);
	op->out_conv[1] = op->out[1] = nbg_cmd_nn(cmd, NBG_NNF_OUT_IMAGE_Y_SIZE);
	op->out_conv[2] = op->out[2] = nbg_cmd_nn(cmd, NBG_NNF_OUT_IMAGE_Z_SIZE);
	op->out_subsample = 1; /* the data flow settles it (dataflow.c) */
	op->in[0] = nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_X_SIZE);
	op->in[1] = nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_Y_SIZE);
	op->in[2] = dw ? op->out[2] : kz ? kz : 1;
	op->kernel_type = nbg_cmd_nn(cmd, NBG_NNF_KERNEL_DATA_TYPE) |
			  (nbg_cmd_nn(cmd, NBG_NNF_KERNEL_DATA_TYPE_BIT_2) << 2);
	op->in_type = nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_DATA_TYPE) |
		      (nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_DATA_TYPE_BIT_2) << 2);
	op->out_type = nbg_cmd_nn(cmd, NBG_NNF_OUT_IMAGE_DATA_TYPE) |
		       (nbg_cmd_nn(cmd, NBG_NNF_OUT_IMAGE_DATA_TYPE_BIT_2) << 2);
	op->relu = nbg_cmd_nn(cmd, NBG_NNF_RELU) != 0;
	op->pooling = nbg_cmd_nn(cmd, NBG_NNF_POOLING);
	op->pooling_size = nbg_cmd_nn(cmd, NBG_NNF_POOLING_XY_SIZE) ? 3 : 2;
	op->kind = op->type == NBG_GRAPH_OP_SP ? "sp"
		 : op->type == NBG_GRAPH_OP_NN_LUT ? "lut"
		 : op->type == NBG_GRAPH_OP_NT ? "transpose"
		 : nbg_cmd_nn(cmd, NBG_NNF_LAYER_TYPE) ? "fully connected"
		 : dw ? "depthwise conv" : "conv";
	op->in_bytes = mul3(op->in[0], op->in[1], op->in[2], nbg_command_type_bytes(op->in_type));
	op->out_bytes = mul3(op->out[0], op->out[1], op->out[2], nbg_command_type_bytes(op->out_type));
}

static void summarize_tp(nbg_cmd_op *op, const nbg_cmd *cmd)
{
	uint64_t extent = 1;

	op->in[0] = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_X_SIZE);
	op->in[1] = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_Y_SIZE);
	op->in[2] = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_Z_SIZE);
	op->in_type = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_DATA_TYPE);
	op->out_type = nbg_cmd_tp(cmd, NBG_TPF_OUT_IMAGE_DATA_TYPE);
	op->relu = nbg_cmd_tp(cmd, NBG_TPF_ALU_RELU_ENABLE) != 0;
	op->kind = nbg_cmd_tp(cmd, NBG_TPF_ALU_PWL_ENABLE) ? "lut"
		 : (nbg_cmd_tp(cmd, NBG_TPF_ALU_HORZ_PROCESSING) ||
		    nbg_cmd_tp(cmd, NBG_TPF_ALU_VERT_PROCESSING)) ? "pool" : "layout";
	/* The output extent the loops address: 1 + sum (count - 1) * increment. */
	for (int i = 0; i < 6; i++) {
		uint32_t n = nbg_cmd_tp(cmd, nbg_tp_loop_counts[i]);
		if (n > 1)
			extent += (uint64_t)(n - 1) * nbg_cmd_tp(cmd, nbg_tp_loop_incs[i]);
	}
	op->in_bytes = mul3(op->in[0], op->in[1], op->in[2], nbg_command_type_bytes(op->in_type));
	op->out_bytes = extent * nbg_command_type_bytes(op->out_type);
}

static nbg_code build_ops(nbg_commands *c, const nbg_model *m, const nbg_graph *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->sum.operation_count; i++) {
		const nbg_graph_operation *o = nbg_graph_operation_at(g, i);
		int e = engine_of(o->type);
		if (e >= 0 && o->index < c->cmd_count[e])
			n++;
	}
	if (!n)
		return NBG_OK;
	c->ops = calloc(n, sizeof(*c->ops));
	if (!c->ops)
		return NBG_E_OUT_OF_MEMORY;
	for (size_t i = 0; i < g->sum.operation_count; i++) {
		const nbg_graph_operation *o = nbg_graph_operation_at(g, i);
		int e = engine_of(o->type);
		nbg_cmd_op *op;
		nbg_cmd *cmd;

		if (e < 0 || o->index >= c->cmd_count[e])
			continue;
		cmd = &c->cmds[e][o->index];
		if (cmd->operation < 0)
			cmd->operation = (int64_t)i;
		op = &c->ops[c->op_count++];
		op->operation = i;
		op->type = o->type;
		op->layer_id = o->layer_id;
		op->engine = (unsigned)e;
		op->command = o->index;
		op->input_record = op->output_record = -1;
		op->producer = -1;
		if (e == NBG_CMD_NN) {
			summarize_nn(op, cmd);
			find_ref(g, i, cmd, NBG_NNF_IN_IMAGE_ADDRESS, &op->in_ref);
			find_ref(g, i, cmd, NBG_NNF_OUT_IMAGE_ADDRESS, &op->out_ref);
			find_ref(g, i, cmd, NBG_NNF_KERNEL_ADDRESS, &op->kernel_ref);
		} else {
			summarize_tp(op, cmd);
			find_ref(g, i, cmd, NBG_TPF_IN_IMAGE_BASE_ADDRESS, &op->in_ref);
			find_ref(g, i, cmd, NBG_TPF_OUT_IMAGE_BASE_ADDRESS, &op->out_ref);
			op->kernel_ref.source_type = UINT32_MAX;
			op->kernel_ref.index = -1;
		}
		if (op->in_ref.patched && op->in_ref.source_type == NBG_GRAPH_SRC_INPUT &&
		    op->in_ref.index >= 0 && (size_t)op->in_ref.index < m->input_count)
			op->input_record = op->in_ref.index;
		if (op->out_ref.patched && op->out_ref.source_type == NBG_GRAPH_SRC_OUTPUT &&
		    op->out_ref.index >= 0 && (size_t)op->out_ref.index < m->output_count)
			op->output_record = op->out_ref.index;
	}
	return NBG_OK;
}

/* ------------------------------------------------------------------ public */

nbg_code nbg_commands_decode(const nbg_model *m, const nbg_graph *g, nbg_commands **out,
			     nbg_error *err)
{
	nbg_commands *c;
	nbg_code rc = NBG_OK;

	if (out)
		*out = NULL;
	if (!m || !g || !out)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model",
				     "no model, graph or result pointer was given");
	c = calloc(1, sizeof(*c));
	if (!c)
		goto oom;
	c->family = m->family;
	c->version = m->version;
	nbg_command_relations_init(c);
	for (unsigned e = 0; e < NBG_CMD_ENGINE_COUNT && rc == NBG_OK; e++) {
		setup_section(c, m, e);
		rc = decode_commands(c, m, e);
	}
	if (rc == NBG_OK)
		rc = build_ops(c, m, g);
	if (rc == NBG_OK)
		rc = nbg_command_check(c, m, g);
	if (rc != NBG_OK || nbg_command_oom(c))
		goto oom;
	*out = c;
	return NBG_OK;
oom:
	nbg_commands_free(c);
	return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory",
			     "out of memory while decoding the NN and TP commands");
}

void nbg_commands_free(nbg_commands *c)
{
	if (!c)
		return;
	for (unsigned e = 0; e < NBG_CMD_ENGINE_COUNT; e++) {
		free(c->cmds[e]);
		free(c->words[e]);
		free(c->values[e]);
	}
	free(c->ops);
	free(c->edges);
	free(c->op_of);
	free(c->others);
	free(c->writers);
	free(c->written);
	free(c->findings);
	free(c);
}

const nbg_cmd_section *nbg_commands_section(const nbg_commands *c, unsigned engine)
{
	return c && engine < NBG_CMD_ENGINE_COUNT ? &c->sec[engine] : NULL;
}

size_t nbg_commands_count(const nbg_commands *c, unsigned engine)
{
	return c && engine < NBG_CMD_ENGINE_COUNT ? c->cmd_count[engine] : 0;
}

const nbg_cmd *nbg_commands_at(const nbg_commands *c, unsigned engine, size_t i)
{
	return i < nbg_commands_count(c, engine) ? &c->cmds[engine][i] : NULL;
}

size_t nbg_commands_op_count(const nbg_commands *c)
{
	return c ? c->op_count : 0;
}

const nbg_cmd_op *nbg_commands_op_at(const nbg_commands *c, size_t i)
{
	return c && i < c->op_count ? &c->ops[i] : NULL;
}

size_t nbg_commands_edge_count(const nbg_commands *c)
{
	return c ? c->edge_count : 0;
}

const nbg_cmd_edge *nbg_commands_edge_at(const nbg_commands *c, size_t i)
{
	return c && i < c->edge_count ? &c->edges[i] : NULL;
}

const nbg_cmd_op *nbg_commands_op_of(const nbg_commands *c, size_t operation)
{
	if (!c || operation >= c->op_of_count || c->op_of[operation] < 0)
		return NULL;
	return &c->ops[c->op_of[operation]];
}

size_t nbg_commands_other_count(const nbg_commands *c)
{
	return c ? c->other_count : 0;
}

const nbg_cmd_other *nbg_commands_other_at(const nbg_commands *c, size_t i)
{
	return c && i < c->other_count ? &c->others[i] : NULL;
}

uint64_t nbg_commands_bytes_written(const nbg_commands *c, size_t operation)
{
	return c && c->written && operation < c->op_of_count ? c->written[operation] : 0;
}

size_t nbg_commands_relation_count(const nbg_commands *c)
{
	return c ? NBG_CMDR__COUNT : 0;
}

const nbg_graph_relation *nbg_commands_relation_at(const nbg_commands *c, size_t i)
{
	return c && i < NBG_CMDR__COUNT ? &c->relations[i] : NULL;
}

size_t nbg_commands_finding_count(const nbg_commands *c)
{
	return c ? c->finding_count : 0;
}

const nbg_graph_finding *nbg_commands_finding_at(const nbg_commands *c, size_t i)
{
	return c && i < c->finding_count ? &c->findings[i] : NULL;
}

size_t nbg_commands_findings_dropped(const nbg_commands *c)
{
	return c ? c->findings_dropped : 0;
}
