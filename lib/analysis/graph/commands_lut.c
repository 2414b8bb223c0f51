/*
 * commands_lut.c - the table of a TP lookup-table activation (alu_pwl_enable
 * 1) and of an NN_LUT operation (the same entries, indexed otherwise), as
 * the weights decoder reads them (lib/coef/weights.c), the CPU backend
 * executes them (lib/cpu/ops/lut.c) and the network view names their
 * function (lib/analysis/network/network_lut.c): where they lie, their
 * layouts, an entry's value and input.  doc/cpu-backend.md, "Lookup-table
 * activations", and doc/weights.md, "Lookup tables of the NN engine", give
 * the evidence of each rule.
 */
#include <math.h>

#include "analysis/graph/commands_lib.h"
#include "common/internal.h"

const uint8_t *nbg_command_lut_table(const nbg_model *m, const nbg_graph *g, const nbg_cmd *cmd,
				     size_t operation, nbg_cmd_ref *r, uint64_t *size)
{
	nbg_command_field_ref(g, cmd, operation, NBG_TPF_ALU_LOAD_PWL_LUT_ADDRESS, r);
	return nbg_command_coef_bytes(m, g, r, size);
}

int nbg_command_coef_table(const nbg_graph *g)
{
	static const int order[2] = { NBG_GRAPH_TABLE_COEF_DATA, NBG_GRAPH_TABLE_LCD };

	for (int i = 0; i < 2; i++) {
		const nbg_graph_table *t = nbg_graph_table_at(g, (size_t)order[i]);
		if (t && t->present && t->decoded)
			return order[i];
	}
	return -1;
}

nbg_coef_ref nbg_command_coef_locate(const nbg_model *m, const nbg_graph *g, const nbg_cmd_ref *r,
				     uint64_t *offset, uint64_t *size)
{
	if (!r->patched)
		return NBG_COEF_REF_UNPATCHED;
	if (r->source_type != NBG_GRAPH_SRC_MISC_DYNA_GENERIC)
		return NBG_COEF_REF_NOT_TABLE;
	int ti = nbg_command_coef_table(g);
	const nbg_graph_table *t = ti >= 0 ? nbg_graph_table_at(g, (size_t)ti) : NULL;
	const nbg_graph_table_entry *e =
		t && r->index >= 0 ? nbg_graph_table_entry_at(g, (size_t)ti, (size_t)r->index) : NULL;
	/* where in the entry the bytes start: the patch's source offset, or
	 * before 0x10009 the stored address less the patch's base
	 * (nbg_command_patched_offset, doc/weights.md) */
	uint64_t at = m->version < 0x10009u ? r->offset : r->src_offset;
	if (!e || !e->in_bounds || !t->data_present || at >= e->size ||
	    !range_ok(t->data_offset, e->offset, m->file_size) ||
	    !range_ok(t->data_offset + e->offset, e->size, m->file_size))
		return NBG_COEF_REF_NO_ENTRY;
	*offset = t->data_offset + e->offset + at;
	*size = e->size - at;
	return NBG_COEF_REF_OK;
}

const uint8_t *nbg_command_coef_bytes(const nbg_model *m, const nbg_graph *g, const nbg_cmd_ref *r,
				      uint64_t *size)
{
	uint64_t off;
	return nbg_command_coef_locate(m, g, r, &off, size) == NBG_COEF_REF_OK ? m->data + off : NULL;
}

int nbg_command_lut_layout(const uint8_t *tab, uint64_t size, int *wide, uint64_t *bad_byte)
{
	if (size != NBG_LUT_BYTES_32 && size != NBG_LUT_BYTES_32_PADDED && size != NBG_LUT_BYTES_16)
		return 0;
	*wide = size != NBG_LUT_BYTES_16;
	for (uint64_t b = *wide ? 4 * NBG_LUT_ENTRIES : 2 * NBG_LUT_ENTRIES; b < size; b++)
		if (tab[b]) {
			*bad_byte = b;
			return -1;
		}
	return 1;
}

uint32_t nbg_command_lut_word(const uint8_t *tab, int wide, uint32_t i)
{
	return wide ? le32(tab + 4 * i) : (uint32_t)tab[2 * i] | (uint32_t)tab[2 * i + 1] << 8;
}

int nbg_command_lut_entry(uint32_t w, int wide, double *v)
{
	unsigned mbits = wide ? 15 : 10;
	uint32_t mant = w & ((1u << mbits) - 1), e = (w >> mbits) & 31, sign = (w >> (mbits + 5)) & 1;
	if ((w >> (mbits + 6)) != 0 || e == 31 || (e == 0 && mant != 0))
		return 0;
	double x = e == 0 ? 0.0 : ldexp(1.0 + ldexp((double)mant, -(int)mbits), (int)e - 15);
	*v = sign ? -x : x;
	return 1;
}

int nbg_command_nnlut_mode(uint32_t tail0)
{
	return !(tail0 & NBG_NNLUT_SIGN) ? 0 : (tail0 & NBG_NNLUT_FULL) ? 1 : 2;
}

uint16_t nbg_command_nnlut_input(uint32_t i, int mode)
{
	uint16_t sign = i & 512u ? 0x8000u : 0u;
	if (mode == 1)
		return (uint16_t)((((i & 511u) << 6) ^ 0x4000u) | sign);
	if (mode == 2)
		return (uint16_t)((((((i & 511u) << 5) + 0x2000u) & 0x3fffu) + 0x2000u) | sign);
	return (uint16_t)(((i << 5) & 0xffffu) ^ 0x4000u);
}
