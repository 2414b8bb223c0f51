/*
 * ops/shprelu.c - the PReLU shader of int8 images (PReluLayer SH
 * operations, the mobilefacenet network of target 0xad), computed by
 * reference semantics from its uniforms and I/O, not from the shader's
 * code (nbg_cpu_step.reference).  doc/cpu-backend.md ("The PReLU shader")
 * gives each rule with its evidence.
 *
 * Its state buffer loads three eight-word image descriptors: the input at
 * 0x36000 (int8, format word 0x44405130), x values a row (a channel's
 * pixels), y rows (the channels), depth 1; the slopes at 0x36020 (fp16,
 * 0x44404071, one row of y halves, relocated into the LCDT); the output at
 * 0x36040 (int8, the input's shape).  Then two banks of lane words,
 * 0x36060-0x3609c and 0x360a0-0x360dc, in one of the two layouts ovxlib's
 * PReLU initializer builds for int8 in and out (doc/cpu-backend.md):
 *  - in_fl >= out_fl: 0x77777777, 0x44444444, the byte tables 0x33221100,
 *    0x77665544 (0xbbaa9988, 0xffeeddcc), zeros, and 0x4000 | s at 0x3607c
 *    and 0x360bc, s = in_fl - out_fl: a factor 2^-s;
 *  - in_fl < out_fl: 0x55555555, 0x44444444, the same byte tables, 0,
 *    0x01010101 twice and 0 at 0x3607c and 0x360bc, then the integer
 *    m = 2^(out_fl - in_fl) at 0x360e0 and the sixteen words of its
 *    uniMergeMultiplier_2x8 at 0x360f0-0x3612c: a factor m;
 *   out = saturate(round((v >= 0 ? v : v x alpha[y]) x m / 2^s)),
 * rounded half to even (one of m, 2^s is 1).  Anything else is refused.
 */
#include <stdio.h>

#include "common/half.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"
#include "cpu/quant.h"

#define PRELU_FMT_S8 0x44405130u
#define PRELU_FMT_F16 0x44404071u
#define PRELU_MAX_SHIFT 15u
/* in_fl < out_fl: ovxlib takes this layout while out_fl - in_fl < 16 */
#define PRELU_MAX_MUL_LOG2 15u

/* The lane words 0x36060-0x360dc of the in_fl >= out_fl layout but the
 * post-shifts (0x3607c, 0x360bc). */
static const uint32_t prelu_lanes[32] = {
	0x77777777, 0x44444444, 0x33221100, 0x77665544, 0, 0, 0, 0x4000, 0, 0, 0, 0, 0, 0, 0, 0,
	0x77777777, 0x44444444, 0xbbaa9988, 0xffeeddcc, 0, 0, 0, 0x4000, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* The in_fl < out_fl layout: the lane words 0x36060-0x360dc, and from
 * 0x360f0 on the sixteen words of uniMergeMultiplier_2x8 (the multiplier
 * at 0x360e0 is checked apart). */
static const uint32_t prelu_lanes_mul[32] = {
	0x55555555, 0x44444444, 0x33221100, 0x77665544, 0, 0x01010101, 0x01010101, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x55555555, 0x44444444, 0xbbaa9988, 0xffeeddcc, 0, 0x01010101, 0x01010101, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};
static const uint32_t prelu_merge_mul[16] = { 0x11, 0x10, 0, 0, 0x21, 0, 0, 0x400, 0, 1, 0, 0, 0, 0, 0, 0 };

/* The in_fl < out_fl layout: the words pinned, the multiplier at 0x360e0 a
 * power of two 2^k, 1 <= k <= PRELU_MAX_MUL_LOG2. */
static int prelu_mul_ok(nbg_cpu_step *s, const cpu_uniforms *u, int32_t *mul)
{
	static const unsigned m_idx[] = { 56 };
	uint32_t m = u->value[56];
	if (!nbg_cpu_loaded_once(s, u, "PReLU", m_idx, 1))
		return 0;
	if (m < 2 || (m & (m - 1)) || m > 1u << PRELU_MAX_MUL_LOG2) {
		nbg_cpu_refuse(s, "prelu-uniforms-unknown", "a PReLU shader (layer %s) in the lane layout "
			       "0x55555555 (in_fl < out_fl) whose multiplier 0x360e0 is %u: executed is "
			       "2^(out_fl - in_fl), 2 to 2^%u", s->layer, m, PRELU_MAX_MUL_LOG2);
		return 0;
	}
	*mul = (int32_t)m;
	return nbg_cpu_pinned(s, u, "PReLU", 24, prelu_lanes_mul, 32) &&
	       nbg_cpu_pinned(s, u, "PReLU", 60, prelu_merge_mul, 16);
}

static int prelu_lanes_ok(nbg_cpu_step *s, const cpu_uniforms *u, uint32_t *shift, int32_t *mul)
{
	uint32_t w = u->value[31];
	*shift = w & 0x1f;
	*mul = 1;
	if (u->value[24] == 0x55555555u) {
		*shift = 0;
		return prelu_mul_ok(s, u, mul);
	}
	if ((w & ~0x1fu) != 0x4000 || *shift > PRELU_MAX_SHIFT || u->value[47] != w) {
		nbg_cpu_refuse(s, "prelu-uniforms-unknown", "a PReLU shader (layer %s) whose post-shift words "
			       "0x3607c and 0x360bc are 0x%08x and 0x%08x: executed are two equal words 0x4000 | s, "
			       "s at most %u, or the lane layout 0x55555555 with a multiplier", s->layer, w,
			       u->value[47], PRELU_MAX_SHIFT);
		return 0;
	}
	uint32_t want[32];
	for (unsigned k = 0; k < 32; k++)
		want[k] = prelu_lanes[k] | (k == 7 || k == 23 ? *shift : 0);
	return nbg_cpu_pinned(s, u, "PReLU", 24, want, 32);
}

static void shprelu_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	static const unsigned used[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20, 21, 23 };
	cpu_ref *r = &op->u.ref;
	cpu_uniforms u;
	uint32_t shift;
	int32_t mul;
	if (!nbg_cpu_load_uniforms(p, s, m->operation, "PReLU shader", &u) ||
	    !nbg_cpu_loaded_once(s, &u, "PReLU", used, sizeof(used) / sizeof(used[0])) ||
	    !prelu_lanes_ok(s, &u, &shift, &mul))
		return;
	const uint32_t *v = u.value;
	uint32_t x = v[2] & 0xffff, y = v[2] >> 16;
	if (v[3] != PRELU_FMT_S8 || v[19] != PRELU_FMT_S8 || v[11] != PRELU_FMT_F16 || v[7] || v[15] || v[23]) {
		nbg_cpu_refuse(s, "prelu-format-unsupported", "a PReLU shader (layer %s) with image format "
			       "words 0x%08x, 0x%08x, 0x%08x (uniforms 0x3600c, 0x3602c, 0x3604c) or a non-zero "
			       "last descriptor word: executed are int8 images 0x%08x and fp16 slopes 0x%08x",
			       s->layer, v[3], v[11], v[19], PRELU_FMT_S8, PRELU_FMT_F16);
		return;
	}
	if (x == 0 || y == 0 || v[5] != 1 || v[18] != v[2] || v[21] != 1 || v[10] != (1u << 16 | y) ||
	    v[13] != 1 || v[9] < 2ull * y) {
		nbg_cpu_refuse(s, "prelu-shape-unsupported", "a PReLU shader (layer %s) over 0x%08x x %u into "
			       "0x%08x x %u with slopes 0x%08x x %u (height << 16 | width, depth): executed are "
			       "an input and an output of one shape of depth 1 and one slope a row, in one row",
			       s->layer, v[2], v[5], v[18], v[21], v[10], v[13]);
		return;
	}
	r->codes = nbg_cpu_const_bytes(p, m->operation, &u, 8, 2ull * y);
	if (!r->codes) {
		nbg_cpu_refuse(s, "prelu-slopes-missing", "a PReLU shader (layer %s) whose slope address "
			       "(uniform 0x36020) is not relocated into a constant table entry holding its %u "
			       "halves", s->layer, y);
		return;
	}
	static const uint32_t esize[2] = { 1, 1 };
	if (!nbg_cpu_elt_io(p, s, m->operation, &u, 16, "PReLU", r, esize, x, y, 1, 1))
		return;
	r->cst.shift = shift;
	r->cst.c = mul;
	if (mul > 1)
		snprintf(s->what, sizeof(s->what), "SH PReLU %ux%u int8, %u slopes, x %d", x, y, y, (int)mul);
	else
		snprintf(s->what, sizeof(s->what), "SH PReLU %ux%u int8, %u slopes, / 2^%u", x, y, y, shift);
	nbg_cpu_ref_executed(s, op, CPU_OP_SHPRELU, CPU_REF_PRELU);
}

static void prelu_row(const cpu_ref *r, const uint8_t *in, uint8_t *out, uint32_t y)
{
	double a = nbg_fp16_to_float((uint16_t)(r->codes[2 * y] | r->codes[2 * y + 1] << 8));
	double d = (double)r->cst.c / (double)(1u << r->cst.shift);
	for (uint32_t x = 0; x < r->elt.x; x++) {
		int v = (int8_t)in[x];
		out[x] = nbg_cpu_s8_even((v >= 0 ? v : v * a) * d);
	}
}

static int shprelu_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SH && m->layer == CPU_LAYER_PRELU;
}

static int shprelu_run(const cpu_op *op, uint8_t *const *buf)
{
	nbg_cpu_elt_rows(&op->u.ref, buf, prelu_row);
	return 0;
}

const cpu_op_def nbg_cpu_op_shprelu = { "sh-prelu", shprelu_match, shprelu_plan, shprelu_run, nbg_cpu_elt_cost };
