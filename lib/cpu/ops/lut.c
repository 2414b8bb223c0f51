/*
 * ops/lut.c - TP lookup-table activations (alu_pwl_enable 1): the table at
 * alu_load_pwl_lut_address read into the value each of the 256 uint8 input
 * codes becomes, which the TP walk (ops/tp.c) writes in place of the copied
 * pixel.  doc/cpu-backend.md, "Lookup-table activations", names each rule's
 * evidence; the rules live here:
 *
 *   d = q - in_zp, an integer, times 2^-alu_input_preshift (int8 data
 *   only; inferred), as a half-precision float: its exponent and
 *   top mantissa bits select an entry (1,024 entries: 5 exponent bits and
 *   5 mantissa bits of |d| with alu_pwl_sign_support 0, the sign, 5 and 4
 *   with 1), the rest of its mantissa interpolates linearly towards the next
 *   entry; with sign support 0 the table holds f(|d|) and the sign of d is
 *   put back (an odd function); the value times (1 + post_multiplier / 2^15)
 *   x 2^-shift (shift: alu_output_postshift | _5_6 << 5, a signed 7-bit
 *   number), rounded per flat_rounding_mode (0 half away from zero, 1
 *   half to even, quant.h), plus out_zp, saturated to uint8;
 *   on int8 data (zero points 0) q is the byte read as two's complement and
 *   the result saturates to -128..127 (inferred: doc/cpu-backend.md).
 *   Into fp16 (the face-age network's local deltas) the value itself, its
 *   scale fields and out_zp 0, is written as the nearest IEEE half, ties
 *   to even (the rounding inferred), alu_f2i_enable 0 or 1 alike.
 *   A table that ends in the target-0xe8 words (lut_tail_swapped) holds
 *   entry i at position i ^ 512.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/graph/commands_lib.h"
#include "common/half.h"
#include "common/internal.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/tp.h"
#include "cpu/quant.h"

/* Fields a table activation is executed with, and their one value (C: every
 * LUT operation of the corpus); the ALU fields that must be 0 (the input
 * pre-shift, ReLU, ...) ops/tp.c checks as for every TP operation. */
static const cpu_tp_field lut_fixed[] = {
	{ NBG_TPF_ALU_LOAD_PWL_LUT, 1 },
	{ NBG_TPF_ALU_I2F_ENABLE, 1 },
	{ NBG_TPF_ALU_F2I_ENABLE, 1 },
};

/* A table into fp16: the value is written as it is, with no scale (every
 * such operation of the corpus: the 15 of the face-age files); out_zp 0
 * and the rounding modes ops/tp.c checks for every operation into fp16,
 * and alu_f2i_enable is read as nothing (0 in the 0x7d and 0x10003 files,
 * 1 in the 0xe8 file's; doc/cpu-backend.md, "Lookup tables into fp16"). */
static const cpu_tp_field lut_f16_fixed[] = {
	{ NBG_TPF_ALU_LOAD_PWL_LUT, 1 },
	{ NBG_TPF_ALU_I2F_ENABLE, 1 },
	{ NBG_TPF_ALU_OUTPUT_POST_MULTIPLIER, 0 },
	{ NBG_TPF_ALU_OUTPUT_POSTSHIFT, 0 },
	{ NBG_TPF_ALU_OUTPUT_POSTSHIFT_5_6, 0 },
};

/* The target-0xe8 tables' end (1000e_e8_face_age_e8.nb): 32-bit entries
 * stored with the index's bit 9 inverted, then the words 0x05000000,
 * 0x003f8000 where the other targets' tables end in zero bytes. */
static const uint8_t lut_tail_swapped[8] = { 0, 0, 0, 0x05, 0, 0x80, 0x3f, 0 };
#define LUT_SWAP_BIT 512u

/* The bytes of the table (nbg_command_lut_table); NULL with the step
 * refused when there is none. */
static const uint8_t *lut_bytes(const nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd *cmd, uint64_t *size)
{
	nbg_cmd_ref r;
	const uint8_t *tab = nbg_command_lut_table(p->m, p->g, cmd, s->operation, &r, size);
	if (!tab)
		nbg_cpu_refuse(s, "tp-lut-table-missing", "its alu_load_pwl_lut_address is not relocated "
			       "into an in-bounds coefficient table entry (patched %d, entry %d, offset %u)",
			       r.patched, r.index, r.src_offset);
	return tab;
}

/* The table's value at input d x 2^-pre (pre: alu_input_preshift, 0..14):
 * entry and interpolation (the header). */
static int lut_at(const uint8_t *tab, int wide, unsigned swap, int sign_support, int d, int pre, double *out)
{
	uint32_t a = (uint32_t)(d < 0 ? -d : d); /* at most 383: exact in half precision */
	int ex = 0;
	while ((a >> ex) > 1)
		ex++;
	/* the half-precision bits of a x 2^-pre, without its sign: 5 exponent
	 * (at least 1: a normal half), 10 mantissa */
	uint32_t h = a ? (uint32_t)(ex + 15 - pre) << 10 | (((a << 10) >> ex) & 0x3ff) : 0;
	unsigned low = sign_support ? 6 : 5;
	uint32_t i = h >> low, frac = h & ((1u << low) - 1);
	if (sign_support && d < 0)
		i |= 512;
	double v0, v1 = 0;
	int ok = nbg_command_lut_entry(nbg_command_lut_word(tab, wide, i ^ swap), wide, &v0);
	if (ok && frac)
		ok = nbg_command_lut_entry(nbg_command_lut_word(tab, wide, (i + 1) ^ swap), wide, &v1);
	if (!ok)
		return -(int)i - 1;
	double v = frac ? v0 + (v1 - v0) * ldexp((double)frac, -(int)low) : v0;
	*out = !sign_support && d < 0 ? -v : v;
	return 0;
}

int nbg_cpu_plan_lut(const nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd *cmd, uint8_t map[256],
		     uint16_t *half)
{
	const cpu_tp_field *fixed = half ? lut_f16_fixed : lut_fixed;
	size_t nfixed = half ? sizeof(lut_f16_fixed) / sizeof(lut_f16_fixed[0]) : sizeof(lut_fixed) / sizeof(lut_fixed[0]);
	if (!nbg_cpu_tp_fields_ok(s, cmd, fixed, nfixed, "tp-lut-unsupported",
				  half ? "a TP lookup table into fp16" : "a TP lookup-table activation",
				  "the value of every such operation of the corpus"))
		return 0;
	/* the output scaling's rounding (into fp16: ops/tp.c checks the mode) */
	int even = 0;
	if (!half && !nbg_cpu_rounding(s, "tp-lut-unsupported", "a TP lookup-table activation", "flat_rounding_mode",
				       nbg_cmd_tp(cmd, NBG_TPF_FLAT_ROUNDING_MODE), &even))
		return 0;
	uint64_t size = 0;
	const uint8_t *tab = lut_bytes(p, s, cmd, &size);
	if (!tab)
		return 0;
	int wide = 0;
	uint64_t nonzero = 0;
	int layout = nbg_command_lut_layout(tab, size, &wide, &nonzero);
	if (layout == 0) {
		nbg_cpu_refuse(s, "tp-lut-unsupported", "its table entry holds %llu bytes: executed are "
			       "%u (1,024 32-bit entries) and %u (1,024 half-precision entries)",
			       (unsigned long long)size, NBG_LUT_BYTES_32, NBG_LUT_BYTES_16);
		return 0;
	}
	int sign = nbg_cmd_tp(cmd, NBG_TPF_ALU_PWL_SIGN_SUPPORT) != 0;
	unsigned swap = 0;
	if (layout < 0 && size == NBG_LUT_BYTES_32 && !sign &&
	    memcmp(tab + 4 * NBG_LUT_ENTRIES, lut_tail_swapped, sizeof(lut_tail_swapped)) == 0) {
		swap = LUT_SWAP_BIT;
		layout = 1;
	}
	if (layout < 0) {
		nbg_cpu_refuse(s, "tp-lut-unsupported", "its table's byte %llu after the 1,024 entries "
			       "is 0x%02x: executed are zero bytes there, and the target-0xe8 tables' end "
			       "(the words 0x05000000, 0x003f8000 after 32-bit entries, sign support 0)",
			       (unsigned long long)nonzero, tab[nonzero]);
		return 0;
	}
	double mult = nbg_cpu_tp_multiplier(cmd);
	int in_zp = (int)nbg_cmd_tp(cmd, NBG_TPF_IN_ZP), out_zp = (int)nbg_cmd_tp(cmd, NBG_TPF_OUT_ZP);
	/* int8 data (ops/tp.c takes int8 only in and out): the byte b is the
	 * code (int8_t)b, the result saturates to -128..127 */
	int s8 = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_DATA_TYPE) == 2;
	/* the input shifted right by alu_input_preshift before the table (int8
	 * only: ops/tp.c refuses it on uint8, where no corpus command sets it) */
	int pre = (int)nbg_cmd_tp(cmd, NBG_TPF_ALU_INPUT_PRESHIFT);
	if (pre > 14) {
		nbg_cpu_refuse(s, "tp-lut-unsupported", "alu_input_preshift is %d: executed are 0 to 14, where "
			       "every int8 code stays a normal half", pre);
		return 0;
	}
	int lo = s8 ? -128 : 0, hi = s8 ? 127 : 255;
	for (int b = 0; b < 256; b++) {
		int q = s8 ? (int)(int8_t)(uint8_t)b : b;
		double v = 0;
		int bad = lut_at(tab, wide, swap, sign, q - in_zp, pre, &v);
		if (bad) {
			nbg_cpu_refuse(s, "tp-lut-unsupported", "input code %d selects table entry %d, which "
				       "is not a finite value of the table layout", q, -bad - 1);
			return 0;
		}
		double y = v * mult;
		if (half) {
			half[b] = nbg_fp16_from_double(y); /* mult 1: the value, rounded once (I) */
			continue;
		}
		double r = nbg_cpu_round_mode(y, even); /* per flat_rounding_mode */
		r += out_zp;
		r = r < lo ? lo : r > hi ? hi : r;
		map[b] = (uint8_t)((int)r & 0xff);
	}
	return 1;
}
