/*
 * cpu_model.c - small NBG v2 files for the CPU backend's per-operation
 * tests (cpu_model.h).
 *
 * Layout: the sections the bundled sample has (tests/sample_model.c), in
 * its order; one LAYER record per layer name, one OPERATIONS record per
 * operation (or `repeat` records in a row naming one command, state buffer
 * and patch range: what a hostile file may do) with its own state buffer
 * (a LOADSTATE_TABLE entry), NN and TP
 * commands of 192 bytes (sd_entsize), one SH record per SH operation naming
 * a PPU program that is not synthesized (zeros: nbgkit neither decodes nor
 * needs it), the patches in operation order.  Every address field holds 0
 * and its patch the address (v2: the stored value is added to the patch's
 * offset).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbg/commands.h"
#include "nbg/graph.h"

#include "coef_encode.h"
#include "cpu_model.h"
#include "fixture.h"

cm_op *cm_add_op(cm_model *m, uint32_t type, const char *layer)
{
	if (m->ops == CM_MAX_OPS)
		abort();
	if (!m->layers || strcmp(m->layer[m->layers - 1], layer)) {
		if (m->layers == CM_MAX_OPS)
			abort();
		m->layer[m->layers++] = layer;
	}
	cm_op *op = &m->op[m->ops++];
	memset(op, 0, sizeof(*op));
	op->type = type;
	op->layer = (uint32_t)m->layers - 1;
	return op;
}

void cm_patch_add(cm_op *op, uint32_t type, uint32_t dest, uint32_t source, int32_t index, uint32_t offset,
		  uint32_t transformed)
{
	if (op->patches == CM_MAX_PATCHES)
		abort();
	op->patch[op->patches++] = (cm_patch){ type, dest, source, index, offset, transformed };
}

static const nbg_cmd_field *field_of(const cm_op *op, const char *key)
{
	unsigned engine = op->type == NBG_GRAPH_OP_TP ? NBG_CMD_TP : NBG_CMD_NN;
	int i = nbg_command_field_index(engine, key);
	if (i < 0) {
		fprintf(stderr, "cpu_model: no command field %s\n", key);
		abort();
	}
	return nbg_command_fields(engine, NULL) + i;
}

void cm_field(cm_op *op, const char *key, uint32_t v)
{
	const nbg_cmd_field *f = field_of(op, key);
	if (f->bit_count < 32 && v >> f->bit_count) {
		fprintf(stderr, "cpu_model: %s = 0x%x does not fit its %u bits\n", key, v, f->bit_count);
		abort();
	}
	ce_put_bits(op->cmd, f->word, f->bit_lo, f->bit_count, v);
}

void cm_word(cm_op *op, unsigned word, uint32_t v)
{
	fx_put32(op->cmd + 4 * word, v);
}

void cm_field_address(cm_op *op, const char *key, uint32_t source, int32_t index, uint32_t offset)
{
	const nbg_cmd_field *f = field_of(op, key);
	cm_field(op, key, 0);
	cm_patch_add(op, 1, 4u * f->word, source, index, offset, f->shift != 0);
}

void cm_uniforms(cm_op *op, const uint32_t *v, size_t n)
{
	if (n + 2 > CM_MAX_STATE)
		abort();
	/* LOAD_STATE: opcode 1, count, register 0x36000 / 4; padded to an even count */
	op->state[0] = 0x08000000u | (uint32_t)n << 16 | (0x36000u >> 2);
	memcpy(op->state + 1, v, n * sizeof(*v));
	op->state_words = 1 + n;
	if (op->state_words % 2)
		op->state[op->state_words++] = 0;
}

void cm_uniform_address(cm_op *op, size_t i, uint32_t source, int32_t index, uint32_t offset)
{
	op->state[1 + i] = 0;
	cm_patch_add(op, 0, (uint32_t)(4 * (1 + i)), source, index, offset, 0);
}

int32_t cm_coef(cm_model *m, const uint8_t *data, size_t size)
{
	if (m->coefs == CM_MAX_COEF)
		abort();
	m->coef[m->coefs] = data;
	m->coef_size[m->coefs] = size;
	return (int32_t)m->coefs++;
}

static void put_words(uint8_t *p, const uint32_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fx_put32(p + 4 * i, w[i]);
}

static void *zalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (!p)
		abort();
	return p;
}

/* OPERATIONS records: one per operation, or its repeat count. */
static uint32_t records(const cm_model *m)
{
	uint32_t n = 0;
	for (size_t j = 0; j < m->ops; j++)
		n += m->op[j].repeat ? m->op[j].repeat : 1;
	return n;
}

/* NETWORK_INFO, VIP_SRAM (and MEMORY_POOL), CHECKSUM and the I/O records. */
static void head_sections(fx_spec *s, const cm_model *m)
{
	uint8_t buf[CM_MAX_IO * 112];
	memset(buf, 0, 220);
	strcpy((char *)buf, "nbgkit_cpu_ops_test");
	/* inputs, outputs, layers, operations, OPERATIONS records + 3, cores,
	 * address bits, attribute (192-byte NN and TP commands) */
	const uint32_t info[8] = { (uint32_t)m->ins, (uint32_t)m->outs, (uint32_t)m->layers, records(m),
				   records(m) + 3, 1, 32, 0x0a };
	put_words(buf + 0x40, info, 8);
	fx_set(s, NBG_SEC_NETWORK_INFO, buf, 220, 0, 220);
	fx_put32(buf, m->vip_sram);
	fx_set(s, NBG_SEC_VIP_SRAM, buf, 4, 0, 4);
	if (m->pool) {
		fx_put32(buf, (uint32_t)m->pool);
		fx_put32(buf + 4, (uint32_t)(m->pool >> 32));
		fx_set(s, NBG_SEC_MEMORY_POOL, buf, 8, 0, 8);
	}
	/* one CHECKSUM record per section fx_build checksums: NN, TP, PPU_INSTR,
	 * LOADSTATE, COEF_DATA */
	size_t nn = 0, tp = 0;
	for (size_t j = 0; j < m->ops; j++) {
		tp += m->op[j].type == NBG_GRAPH_OP_TP;
		nn += m->op[j].type != NBG_GRAPH_OP_TP && m->op[j].type != NBG_GRAPH_OP_SH;
	}
	fx_set(s, NBG_SEC_CHECKSUM, NULL, 8 * (2 + (nn > 0) + (tp > 0) + (m->coefs > 0)), 0, 8);
	for (int dir = 0; dir < 2; dir++) {
		const cm_io *io = dir ? m->out : m->in;
		size_t n = dir ? m->outs : m->ins;
		for (size_t i = 0; i < n; i++) {
			char name[32];
			snprintf(name, sizeof(name), "%s%zu", dir ? "output_" : "input_", i);
			fx_io_record(buf + 112 * i, io[i].dim_count, io[i].dims, io[i].format, 0, 0, 0, name);
		}
		fx_set(s, dir ? NBG_SEC_OUTPUT : NBG_SEC_INPUT, buf, 112 * n, 0, 112);
	}
}

/* LAYER and OPERATIONS records, the commands, the SH records and patches. */
static void graph_sections(fx_spec *s, const cm_model *m)
{
	uint8_t *lay = zalloc(76 * m->layers), *ops = zalloc(32 * (size_t)records(m));
	uint8_t *pat = zalloc(28 * CM_MAX_PATCHES * m->ops);
	uint8_t *nn = zalloc(CM_CMD_BYTES * m->ops), *tp = zalloc(CM_CMD_BYTES * m->ops), *sh = zalloc(8 * m->ops);
	uint32_t n_nn = 0, n_tp = 0, n_sh = 0, n_pat = 0, n_rec = 0;
	for (size_t i = 0; i < m->layers; i++) {
		uint32_t count = 0;
		for (size_t j = 0; j < m->ops; j++)
			count += m->op[j].layer == i ? (m->op[j].repeat ? m->op[j].repeat : 1) : 0;
		snprintf((char *)lay + 76 * i, 64, "%s", m->layer[i]);
		const uint32_t w[3] = { (uint32_t)i, count, (uint32_t)i + 2 }; /* node, operations, uid */
		put_words(lay + 76 * i + 64, w, 3);
	}
	for (size_t j = 0; j < m->ops; j++) {
		const cm_op *op = &m->op[j];
		uint32_t index = op->type == NBG_GRAPH_OP_TP ? n_tp++ : op->type == NBG_GRAPH_OP_SH ? n_sh++ : n_nn++;
		if (op->type == NBG_GRAPH_OP_TP)
			memcpy(tp + CM_CMD_BYTES * index, op->cmd, CM_CMD_BYTES);
		else if (op->type != NBG_GRAPH_OP_SH)
			memcpy(nn + CM_CMD_BYTES * index, op->cmd, CM_CMD_BYTES);
		/* type, index, layer, state, first patch, patches, 0, absolute id */
		for (uint32_t r = 0; r < (op->repeat ? op->repeat : 1); r++, n_rec++) {
			const uint32_t w[8] = { op->type, index, op->layer, (uint32_t)j, n_pat, (uint32_t)op->patches,
						0, n_rec };
			put_words(ops + 32 * (size_t)n_rec, w, 8);
		}
		for (size_t k = 0; k < op->patches; k++, n_pat++) {
			const cm_patch *p = &op->patch[k];
			const uint32_t pw[7] = { p->type, p->dest, p->source, (uint32_t)p->index, p->offset,
						 p->transformed, 0 };
			put_words(pat + 28 * n_pat, pw, 7);
		}
	}
	fx_set(s, NBG_SEC_LAYER, lay, 76 * m->layers, 0, 76);
	fx_set(s, NBG_SEC_OPERATIONS, ops, 32 * (size_t)n_rec, 0, 32);
	if (n_nn)
		fx_set(s, NBG_SEC_NN, nn, CM_CMD_BYTES * n_nn, 0, CM_CMD_BYTES);
	if (n_tp)
		fx_set(s, NBG_SEC_TP, tp, CM_CMD_BYTES * n_tp, 0, CM_CMD_BYTES);
	if (n_sh)
		fx_set(s, NBG_SEC_SH, sh, 8 * n_sh, 0, 8); /* each: PPU program entry 0 */
	fx_set(s, NBG_SEC_PATCH, pat, 28 * n_pat, 0, 28);
	free(lay);
	free(ops);
	free(pat);
	free(nn);
	free(tp);
	free(sh);
}

/* COEF_DATA_TABLE, PPU_INSTR_TABLE, LOADSTATE_TABLE and their data. */
static void table_sections(fx_spec *s, const cm_model *m)
{
	uint32_t *t = zalloc(8 * (m->coefs + m->ops + 1)), at = 0;
	for (size_t i = 0; i < m->coefs; i++) {
		t[2 * i] = at;
		t[2 * i + 1] = (uint32_t)m->coef_size[i];
		at += ((uint32_t)m->coef_size[i] + 63) / 64 * 64;
	}
	uint8_t *coef = zalloc(at), *tab = zalloc(8 * (m->coefs + m->ops + 1));
	for (size_t i = 0; i < m->coefs; i++)
		memcpy(coef + t[2 * i], m->coef[i], m->coef_size[i]);
	if (m->coefs) {
		put_words(tab, t, 2 * m->coefs);
		fx_set(s, NBG_SEC_COEF_DATA_TABLE, tab, 8 * m->coefs, 0, 8);
	}
	const uint32_t ppu[2] = { 0, 320 };
	put_words(tab, ppu, 2);
	fx_set(s, NBG_SEC_PPU_INSTR_TABLE, tab, 8, 0, 8);
	uint32_t words = 0;
	for (size_t j = 0; j < m->ops; j++) {
		t[2 * j] = 4 * words;
		t[2 * j + 1] = 4 * (uint32_t)(m->op[j].state_words ? m->op[j].state_words : 2);
		words += t[2 * j + 1] / 4;
	}
	put_words(tab, t, 2 * m->ops);
	fx_set(s, NBG_SEC_LOADSTATE_TABLE, tab, 8 * m->ops, 0, 8);
	if (m->coefs)
		fx_set(s, NBG_SEC_COEF_DATA, coef, at, 64, 1);
	fx_set(s, NBG_SEC_PPU_INSTR, NULL, 512, 256, 1);
	uint8_t *ls = zalloc(4 * words);
	for (size_t j = 0, w = 0; j < m->ops; j++) {
		/* an operation without uniforms: one LOAD_STATE of one value */
		static const uint32_t idle[2] = { 0x08010e4cu, 0 };
		size_t n = m->op[j].state_words;
		put_words(ls + 4 * w, n ? m->op[j].state : idle, n ? n : 2);
		w += n ? n : 2;
	}
	fx_set(s, NBG_SEC_LOADSTATE, ls, 4 * words, 0, 1);
	free(t);
	free(coef);
	free(tab);
	free(ls);
}

uint8_t *cm_build(const cm_model *m, size_t *size)
{
	fx_spec *s = zalloc(sizeof(*s));
	head_sections(s, m);
	graph_sections(s, m);
	table_sections(s, m);
	uint8_t *b = fx_build(s, size);
	fx_free(s);
	fx_put32(b + 8, m->target); /* outside the file checksum */
	return b;
}
