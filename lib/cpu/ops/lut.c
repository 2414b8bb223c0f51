/*
 * ops/lut.c - TP lookup-table activations (alu_pwl_enable 1): the table at
 * alu_load_pwl_lut_address read into the value each of the 256 uint8 input
 * codes becomes, which the TP walk (ops/tp.c) writes in place of the copied
 * pixel.  doc/cpu-backend.md, "Lookup-table activations", names each rule's
 * evidence; the rules live here:
 *
 *   d = q - in_zp, an integer, as a half-precision float: its exponent and
 *   top mantissa bits select an entry (1,024 entries: 5 exponent bits and
 *   5 mantissa bits of |d| with alu_pwl_sign_support 0, the sign, 5 and 4
 *   with 1), the rest of its mantissa interpolates linearly towards the next
 *   entry; with sign support 0 the table holds f(|d|) and the sign of d is
 *   put back (an odd function); the value times (1 + post_multiplier / 2^15)
 *   x 2^-shift (shift: alu_output_postshift | _5_6 << 5, a signed 7-bit
 *   number), rounded half away from zero, plus out_zp, saturated to uint8.
 */
#include <math.h>
#include <stdio.h>

#include "analysis/graph/commands_lib.h"
#include "common/internal.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/tp.h"
#include "cpu/quant.h"

/* The two table layouts of the corpus, told apart by the entry's size:
 * 1,024 32-bit entries (a sign, 5 exponent and 15 mantissa bits, bias 15)
 * and 8 zero bytes; 1,024 IEEE half-precision entries and 4 zero bytes. */
#define LUT_ENTRIES 1024u
#define LUT_BYTES_32 (LUT_ENTRIES * 4u + 8u)
#define LUT_BYTES_16 (LUT_ENTRIES * 2u + 4u)

/* Fields a table activation is executed with, and their one value (C: every
 * LUT operation of the corpus); the ALU fields that must be 0 (the input
 * pre-shift, ReLU, ...) ops/tp.c checks as for every TP operation. */
static const cpu_tp_field lut_fixed[] = {
	{ NBG_TPF_ALU_LOAD_PWL_LUT, 1 },
	{ NBG_TPF_ALU_I2F_ENABLE, 1 },
	{ NBG_TPF_ALU_F2I_ENABLE, 1 },
};

/* The value of table entry e (its bits w) as a double; 0 when it is not a
 * finite number with the layouts' zero (exponent 0 holds only +-0: below
 * the smallest normal value every table of the corpus holds 0). */
static int lut_entry(uint32_t w, int wide, double *v)
{
	unsigned mbits = wide ? 15 : 10;
	uint32_t m = w & ((1u << mbits) - 1), e = (w >> mbits) & 31, sign = (w >> (mbits + 5)) & 1;
	if ((w >> (mbits + 6)) != 0 || e == 31 || (e == 0 && m != 0))
		return 0;
	double x = e == 0 ? 0.0 : ldexp(1.0 + ldexp((double)m, -(int)mbits), (int)e - 15);
	*v = sign ? -x : x;
	return 1;
}

/* The bytes of the table: the coefficient table entry the patch of
 * alu_load_pwl_lut_address names, from its offset to the entry's end;
 * NULL with the step refused when there is none. */
static const uint8_t *lut_bytes(const nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd *cmd, uint64_t *size)
{
	nbg_cmd_ref r;
	nbg_command_field_ref(p->g, cmd, s->operation, NBG_TPF_ALU_LOAD_PWL_LUT_ADDRESS, &r);
	int ti = NBG_GRAPH_TABLE_COEF_DATA;
	const nbg_graph_table *t = nbg_graph_table_at(p->g, (size_t)ti);
	if (!t || !t->present || !t->decoded) {
		ti = NBG_GRAPH_TABLE_LCD;
		t = nbg_graph_table_at(p->g, (size_t)ti);
	}
	const nbg_graph_table_entry *e = t && t->present && t->decoded && r.patched && r.index >= 0 &&
						 r.source_type == NBG_GRAPH_SRC_MISC_DYNA_GENERIC
						 ? nbg_graph_table_entry_at(p->g, (size_t)ti, (size_t)r.index) : NULL;
	if (!e || !e->in_bounds || !t->data_present || r.src_offset >= e->size ||
	    t->data_offset > p->m->file_size || e->offset > p->m->file_size - t->data_offset ||
	    e->size > p->m->file_size - t->data_offset - e->offset) {
		nbg_cpu_refuse(s, "tp-lut-table-missing", "its alu_load_pwl_lut_address is not relocated "
			       "into an in-bounds coefficient table entry (patched %d, entry %d, offset %u)",
			       r.patched, r.index, r.src_offset);
		return NULL;
	}
	*size = e->size - r.src_offset;
	return p->m->data + t->data_offset + e->offset + r.src_offset;
}

/* Entry i's bits (i < 1,024). */
static uint32_t lut_word(const uint8_t *tab, int wide, uint32_t i)
{
	return wide ? le32(tab + 4 * i) : (uint32_t)tab[2 * i] | (uint32_t)tab[2 * i + 1] << 8;
}

/* The table's value at input d: entry and interpolation (the header). */
static int lut_at(const uint8_t *tab, int wide, int sign_support, int d, double *out)
{
	uint32_t a = (uint32_t)(d < 0 ? -d : d); /* at most 255: exact in half precision */
	int ex = 0;
	while ((a >> ex) > 1)
		ex++;
	/* the half-precision bits of a, without its sign: 5 exponent, 10 mantissa */
	uint32_t h = a ? (uint32_t)(ex + 15) << 10 | (((a << 10) >> ex) & 0x3ff) : 0;
	unsigned low = sign_support ? 6 : 5;
	uint32_t i = h >> low, frac = h & ((1u << low) - 1);
	if (sign_support && d < 0)
		i |= 512;
	double v0, v1 = 0;
	int ok = lut_entry(lut_word(tab, wide, i), wide, &v0);
	if (ok && frac)
		ok = lut_entry(lut_word(tab, wide, i + 1), wide, &v1);
	if (!ok)
		return -(int)i - 1;
	double v = frac ? v0 + (v1 - v0) * ldexp((double)frac, -(int)low) : v0;
	*out = !sign_support && d < 0 ? -v : v;
	return 0;
}

int nbg_cpu_plan_lut(const nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd *cmd, uint8_t map[256])
{
	if (!nbg_cpu_tp_fields_ok(s, cmd, lut_fixed, sizeof(lut_fixed) / sizeof(lut_fixed[0]),
				  "tp-lut-unsupported", "a TP lookup-table activation",
				  "the value of every such operation of the corpus"))
		return 0;
	uint64_t size = 0;
	const uint8_t *tab = lut_bytes(p, s, cmd, &size);
	if (!tab)
		return 0;
	if (size != LUT_BYTES_32 && size != LUT_BYTES_16) {
		nbg_cpu_refuse(s, "tp-lut-unsupported", "its table entry holds %llu bytes: executed are "
			       "%u (1,024 32-bit entries) and %u (1,024 half-precision entries)",
			       (unsigned long long)size, LUT_BYTES_32, LUT_BYTES_16);
		return 0;
	}
	int wide = size == LUT_BYTES_32;
	for (uint64_t b = wide ? 4 * LUT_ENTRIES : 2 * LUT_ENTRIES; b < size; b++)
		if (tab[b]) {
			nbg_cpu_refuse(s, "tp-lut-unsupported", "its table's byte %llu after the 1,024 entries "
				       "is 0x%02x: every table of the corpus ends in zero bytes",
				       (unsigned long long)b, tab[b]);
			return 0;
		}
	int sign = nbg_cmd_tp(cmd, NBG_TPF_ALU_PWL_SIGN_SUPPORT) != 0;
	double mult = nbg_cpu_tp_multiplier(cmd);
	int in_zp = (int)nbg_cmd_tp(cmd, NBG_TPF_IN_ZP), out_zp = (int)nbg_cmd_tp(cmd, NBG_TPF_OUT_ZP);
	for (int q = 0; q < 256; q++) {
		double v = 0;
		int bad = lut_at(tab, wide, sign, q - in_zp, &v);
		if (bad) {
			nbg_cpu_refuse(s, "tp-lut-unsupported", "input code %d selects table entry %d, which "
				       "is not a finite value of the table layout", q, -bad - 1);
			return 0;
		}
		double y = v * mult;
		double r = nbg_cpu_round_half_away(y); /* (I) */
		r += out_zp;
		map[q] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
	}
	return 1;
}
