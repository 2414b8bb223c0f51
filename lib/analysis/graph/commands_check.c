/*
 * commands_check.c - relations between the decoded NN / TP commands and the
 * rest of the file (PATCH records, coefficient tables, I/O records), and
 * the checks of the data flow dataflow.c recovers.
 *
 * Every relation counts how often it was checked and held; each time one
 * does not hold a finding with its id is added.  None is a failure: the
 * layout is an open driver's, and doc/commands.md reports how far it holds.
 */
#include <stdio.h>
#include <stdlib.h>

#include "analysis/graph/commands_check.h"
#include "analysis/graph/graph_internal.h"
#include "common/grow.h"

static const struct {
	const char *id, *text, *evidence;
} rel_defs[NBG_CMDR__COUNT] = {
	[NBG_CMDR_PATCH_FIELD] = { "command-patch-not-address-field",
				   "every COMMAND patch of an NN/TP operation lands on an "
				   "address field of the layout, transformed exactly where the "
				   "field holds address >> 6", "O+P" },
	[NBG_CMDR_KERNEL_ADDRESS] = { "kernel-address-differs",
				      "NN kernel_address << 6 == src_offset of the patch "
				      "relocating it", "O+P" },
	[NBG_CMDR_KERNEL_ENTRY] = { "kernel-entry-missing",
				    "the NN kernel patch names a coefficient table entry "
				    "(COEF_DATA_TABLE; v1: LCDT) that holds its src_offset",
				    "O+I" },
	[NBG_CMDR_FIRST_INPUT] = { "first-nn-input-differs",
				   "the first NN-type operation reads input 0's W x H x C (x, y, "
				   "kernel z; record order C,W,H or W,H,C)", "O" },
	[NBG_CMDR_INPUT_DIMS] = { "nn-input-dims-differ",
				  "an NN-type operation whose input is patched from INPUT k "
				  "reads record k's W x H x C", "O+P" },
	[NBG_CMDR_INPUT_TYPE] = { "input-data-type-differs",
				  "an operation other than NT reading INPUT k: input data-type "
				  "code == record k's format (uint8 0, fp16 1, int8 2, int16 4, "
				  "bf16 7)",
				  "O+P" },
	[NBG_CMDR_OUTPUT_DIMS] = { "nn-output-dims-differ",
				   "an NN-type operation whose output is patched to OUTPUT k "
				   "writes record k's W x H x C", "O+P" },
	[NBG_CMDR_OUTPUT_TYPE] = { "output-data-type-differs",
				   "an operation other than NT writing OUTPUT k: output "
				   "data-type code == record k's format", "O+P" },
	[NBG_CMDR_PRODUCER] = { "image-producer-missing",
				"every byte an NN/TP operation reads (not from an INPUT record) "
				"was written by an earlier operation", "O+C" },
	[NBG_CMDR_CHAIN_TYPE] = { "chain-data-type-differs",
				  "an edge between NN/TP operations: the producer's output data "
				  "type == the consumer's input data type (neither an NT "
				  "operation)", "O+C" },
	[NBG_CMDR_CHAIN_SHAPE] = { "chain-shape-differs",
				   "an NN-type output read from its start by an NN-type "
				   "operation: written x*y*z == read x*y*z", "O+C" },
	[NBG_CMDR_DEAD_END] = { "output-never-read",
				"every operation's written bytes are read by a later operation "
				"or belong to an OUTPUT record", "O+C" },
};

void nbg_command_relations_init(nbg_commands *c)
{
	for (int r = 0; r < NBG_CMDR__COUNT; r++) {
		c->relations[r].id = rel_defs[r].id;
		c->relations[r].text = rel_defs[r].text;
		c->relations[r].evidence = rel_defs[r].evidence;
	}
}

int nbg_command_oom(const nbg_commands *c)
{
	return c->oom;
}

void nbg_command_finding(nbg_commands *c, const char *id, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (!nbg_findings_vadd(&c->findings, &c->finding_count, &c->finding_cap,
			       &c->findings_dropped, id, offset, fmt, ap))
		c->oom = 1;
	va_end(ap);
}

static bool check(nbg_commands *c, enum nbg_cmd_rel r, bool ok)
{
	c->relations[r].checked++;
	c->relations[r].held += ok;
	return ok;
}

/* The NN / TP operation of OPERATIONS record i, or NULL. */
static const nbg_cmd_op *decoded(const nbg_commands *c, size_t i)
{
	return i < c->op_of_count && c->op_of[i] >= 0 ? &c->ops[c->op_of[i]] : NULL;
}

static const nbg_cmd *op_cmd(const nbg_commands *c, const nbg_cmd_op *op)
{
	return &c->cmds[op->engine][op->command];
}

static const char *ename(const nbg_cmd_op *op)
{
	const char *n = nbg_graph_op_type_name(op->type);
	return n ? n : nbg_command_engine_name(op->engine);
}

/* ------------------------------------------------------------ patch words */

static void check_patches(nbg_commands *c, const nbg_graph *g)
{
	for (size_t k = 0; k < c->op_count; k++) {
		const nbg_cmd_op *op = &c->ops[k];
		const nbg_graph_operation *o = nbg_graph_operation_at(g, op->operation);
		nbg_cmd *cmd = &c->cmds[op->engine][op->command];
		size_t nf;
		const nbg_cmd_field *t = nbg_command_fields(op->engine, &nf);
		uint64_t end = (uint64_t)o->patch_index + o->patch_count;

		if (end > g->sum.patch_count)
			end = g->sum.patch_count;
		for (uint64_t i = o->patch_index; i < end; i++) {
			const nbg_graph_patch *p = nbg_graph_patch_at(g, (size_t)i);
			uint32_t w = p->dest_offset / 4;
			const nbg_cmd_field *f = NULL;

			if (p->type != 1)
				continue;
			if (p->dest_offset % 4 == 0 && w < cmd->word_count) {
				cmd->patched_words |= 1ull << w;
				for (size_t j = 0; j < nf && !f; j++)
					if (t[j].word == w && t[j].role == NBG_CMDF_ADDRESS)
						f = &t[j];
			}
			if (!check(c, NBG_CMDR_PATCH_FIELD,
				   f && (p->transformed != 0) == (f->shift == 6)))
				nbg_command_finding(c, rel_defs[NBG_CMDR_PATCH_FIELD].id,
						p->record_offset,
						"operation %zu (%s %u): COMMAND patch %llu writes "
						"byte %u (word %u, transformed %u)%s%s",
						op->operation, ename(op), op->command,
						(unsigned long long)i, p->dest_offset, w,
						p->transformed, f ? ", the layout's " : ", which the "
						"layout names no address field", f ? f->key : "");
		}
	}
}

/* ---------------------------------------------------------------- kernels */

/* The coefficient table kernels are patched from: COEF_DATA_TABLE, else
 * (v1) the LCDT; -1 when the file has neither. */
static int coef_table(const nbg_graph *g)
{
	const nbg_graph_table *t = nbg_graph_table_at(g, NBG_GRAPH_TABLE_COEF_DATA);
	if (t && t->present && t->decoded)
		return NBG_GRAPH_TABLE_COEF_DATA;
	t = nbg_graph_table_at(g, NBG_GRAPH_TABLE_LCD);
	return t && t->present && t->decoded ? NBG_GRAPH_TABLE_LCD : -1;
}

static void check_kernels(nbg_commands *c, const nbg_graph *g)
{
	int ti = coef_table(g);
	const nbg_graph_table *t = ti >= 0 ? nbg_graph_table_at(g, (size_t)ti) : NULL;

	for (size_t k = 0; k < c->op_count; k++) {
		nbg_cmd_op *op = &c->ops[k];
		const nbg_cmd_ref *r = &op->kernel_ref;
		uint32_t ka = nbg_cmd_nn(op_cmd(c, op), NBG_NNF_KERNEL_ADDRESS);
		uint64_t at = op_cmd(c, op)->offset + 20;
		const nbg_graph_table_entry *e;
		bool ok;

		if (op->engine != NBG_CMD_NN || !r->patched)
			continue;
		if (!check(c, NBG_CMDR_KERNEL_ADDRESS, ((uint64_t)ka << 6) == r->src_offset))
			nbg_command_finding(c, rel_defs[NBG_CMDR_KERNEL_ADDRESS].id, at,
					"NN %u: kernel_address 0x%x << 6 is 0x%llx; its patch's "
					"src_offset is 0x%x", op->command, ka,
					(unsigned long long)ka << 6, r->src_offset);
		if (r->source_type != NBG_GRAPH_SRC_MISC_DYNA_GENERIC)
			continue;
		e = t && r->index >= 0 ? nbg_graph_table_entry_at(g, (size_t)ti, (size_t)r->index)
				       : NULL;
		ok = e && r->src_offset < e->size;
		if (ok)
			op->kernel_bytes = e->size - r->src_offset;
		if (!check(c, NBG_CMDR_KERNEL_ENTRY, ok))
			nbg_command_finding(c, rel_defs[NBG_CMDR_KERNEL_ENTRY].id, at,
					"NN %u: the kernel patch names entry %d at offset %u; %s "
					"holds %zu entries%s", op->command, r->index, r->src_offset,
					t ? t->name : "no coefficient table",
					t ? t->entry_count : 0,
					t && r->index >= 0 && (size_t)r->index < t->entry_count
						? " and that entry is smaller" : "");
	}
}

/* ------------------------------------------------------------ I/O records */

static bool dims_match(const nbg_io *io, const uint32_t v[3])
{
	uint32_t d[3];
	for (unsigned i = 0; i < 3; i++)
		d[i] = i < io->dim_count && i < 6 ? io->dims[i] : 1;
	return (v[0] == d[1] && v[1] == d[2] && v[2] == d[0]) ||
	       (v[0] == d[0] && v[1] == d[1] && v[2] == d[2]);
}

static void check_record(nbg_commands *c, const nbg_cmd_op *op, const nbg_io *io, int out)
{
	enum nbg_cmd_rel rd = out ? NBG_CMDR_OUTPUT_DIMS : NBG_CMDR_INPUT_DIMS;
	enum nbg_cmd_rel rt = out ? NBG_CMDR_OUTPUT_TYPE : NBG_CMDR_INPUT_TYPE;
	const uint32_t *v = out ? op->out : op->in;
	uint32_t code = out ? op->out_type : op->in_type;
	int want = nbg_command_format_code(io->data_format);

	if (op->type == NBG_GRAPH_OP_NN && !check(c, rd, dims_match(io, v)))
		nbg_command_finding(c, rel_defs[rd].id, io->offset,
				"NN %u %s %ux%ux%u; %s %u holds dims %u,%u,%u", op->command,
				out ? "writes" : "reads", v[0], v[1], v[2],
				out ? "output" : "input", io->index, io->dims[0],
				io->dim_count > 1 ? io->dims[1] : 1,
				io->dim_count > 2 ? io->dims[2] : 1);
	/* NT commands leave the data-type bits 0 whatever the data: not checked */
	if (want >= 0 && op->type != NBG_GRAPH_OP_NT && !check(c, rt, code == (uint32_t)want))
		nbg_command_finding(c, rel_defs[rt].id, io->offset,
				"%s %u data-type code %u; %s %u is %s (code %d)", ename(op),
				op->command, code, out ? "output" : "input", io->index,
				nbg_data_format_name(io->data_format), want);
}

static void check_records(nbg_commands *c, const nbg_model *m)
{
	bool first = true;

	for (size_t k = 0; k < c->op_count; k++) {
		const nbg_cmd_op *op = &c->ops[k];
		if (op->type == NBG_GRAPH_OP_NN && first && m->input_count) {
			first = false;
			const nbg_io *in0 = nbg_model_input_at(m, 0);
			if (!check(c, NBG_CMDR_FIRST_INPUT, dims_match(in0, op->in)))
				nbg_command_finding(c, rel_defs[NBG_CMDR_FIRST_INPUT].id,
						op_cmd(c, op)->offset,
						"the first NN operation (NN %u) reads %ux%ux%u; "
						"input 0 holds dims %u,%u,%u", op->command, op->in[0],
						op->in[1], op->in[2], in0->dims[0],
						in0->dim_count > 1 ? in0->dims[1] : 1,
						in0->dim_count > 2 ? in0->dims[2] : 1);
		}
		if (op->input_record >= 0 && (size_t)op->input_record < m->input_count)
			check_record(c, op, nbg_model_input_at(m, (size_t)op->input_record), 0);
		if (op->output_record >= 0 && (size_t)op->output_record < m->output_count)
			check_record(c, op, nbg_model_output_at(m, (size_t)op->output_record), 1);
	}
}

/* ------------------------------------------------------------ image chain */

/* The relations of the data flow (dataflow.c) on NN / TP operations: every
 * byte read explained, and each edge between two of them consistent. */
static void check_chain(nbg_commands *c)
{
	for (size_t k = 0; k < c->op_count; k++) {
		const nbg_cmd_op *op = &c->ops[k];
		if (op->input_record >= 0 || !op->in_ref.patched)
			continue;
		if (!check(c, NBG_CMDR_PRODUCER, op->unexplained_bytes == 0))
			nbg_command_finding(c, rel_defs[NBG_CMDR_PRODUCER].id, op_cmd(c, op)->offset,
					"operation %zu (%s %u) reads %llu of its %llu bytes at "
					"%s+0x%llx that no earlier operation is known to write",
					op->operation, ename(op), op->command,
					(unsigned long long)op->unexplained_bytes,
					(unsigned long long)op->read_bytes,
					nbg_graph_source_type_name(op->in_ref.source_type)
						? nbg_graph_source_type_name(op->in_ref.source_type) : "?",
					(unsigned long long)op->in_ref.offset);
	}
	for (size_t i = 0; i < c->edge_count; i++) {
		const nbg_cmd_edge *e = &c->edges[i];
		const nbg_cmd_op *q, *op;
		if (e->kind != NBG_CMD_EDGE_OP || e->basis != NBG_CMD_EDGE_FOOTPRINT)
			continue;
		q = decoded(c, e->from);
		op = decoded(c, e->to);
		if (!q || !op)
			continue;
		uint64_t at = op_cmd(c, op)->offset;
		if (q->type != NBG_GRAPH_OP_NT && op->type != NBG_GRAPH_OP_NT &&
		    !check(c, NBG_CMDR_CHAIN_TYPE, q->out_type == op->in_type))
			nbg_command_finding(c, rel_defs[NBG_CMDR_CHAIN_TYPE].id, at,
					"%s %u writes data-type code %u; %s %u reads it as %u",
					ename(q), q->command, q->out_type, ename(op), op->command,
					op->in_type);
		if (q->type == NBG_GRAPH_OP_NN && op->type == NBG_GRAPH_OP_NN &&
		    q->out_ref.source_type == op->in_ref.source_type &&
		    q->out_ref.offset == op->in_ref.offset) {
			uint64_t a = (uint64_t)q->out[0] * q->out[1] * q->out[2];
			uint64_t b = (uint64_t)op->in[0] * op->in[1] * op->in[2];
			if (!check(c, NBG_CMDR_CHAIN_SHAPE, a == b))
				nbg_command_finding(c, rel_defs[NBG_CMDR_CHAIN_SHAPE].id, at,
						"NN %u writes %ux%ux%u; NN %u reads %ux%ux%u from "
						"the same address", q->command, q->out[0], q->out[1],
						q->out[2], op->command, op->in[0], op->in[1],
						op->in[2]);
		}
	}
}

/* Every operation's written bytes reach a later operation or an output. */
static void check_dead_ends(nbg_commands *c, const nbg_graph *g)
{
	for (size_t i = 0; i < c->writer_count; i++) {
		const struct nbg_cmd_writer *w = &c->writers[i];
		const nbg_graph_operation *o = nbg_graph_operation_at(g, w->operation);
		if (!check(c, NBG_CMDR_DEAD_END, w->consumed > 0))
			nbg_command_finding(c, rel_defs[NBG_CMDR_DEAD_END].id, o->record_offset,
					"operation %zu (%s, layer %u) writes %llu bytes no later "
					"operation reads and no output record holds", w->operation,
					nbg_graph_op_type_name(o->type)
						? nbg_graph_op_type_name(o->type) : "?",
					o->layer_id, (unsigned long long)w->bytes);
	}
	if (c->dataflow_stopped)
		nbg_command_finding(c, "dataflow-work-limit", 0,
				"the data flow was followed until its work limit; the edges of "
				"later operations are missing");
}

nbg_code nbg_command_check(nbg_commands *c, const nbg_model *m, const nbg_graph *g)
{
	check_patches(c, g);
	check_kernels(c, g);
	nbg_code rc = nbg_command_dataflow(c, m, g);
	if (rc == NBG_OK) {
		check_chain(c);
		check_dead_ends(c, g);
	}
	check_records(c, m);
	return rc;
}
