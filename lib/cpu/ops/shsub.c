/*
 * ops/shsub.c - the TensorSub shader of an fp16 image minus a constant
 * half into int8 (the mobilefacenet network of target 0xad: its input's
 * mean subtracted), computed by reference semantics from its uniforms and
 * I/O, not from the shader's code (nbg_cpu_step.reference).
 * doc/cpu-backend.md ("The pre-processing shaders") gives each rule with
 * its evidence.
 *
 * The TensorAdd layout (ops/shelt.c) with other images: input 0 at
 * 0x36000 (fp16, 0x44404071), input 1 at 0x36020 (one fp16 value, 1x1,
 * relocated into the LCDT), the output at 0x36040 (int8, 0x44404130, input
 * 0's shape); 0x36060 the output zero point zpo, 0x36064 and 0x36068 the
 * float32 factors a and b, 0x36070 and 0x36100 the inputs' zero points
 * (all three 0 executed), then the lane words of the conversions
 * (0x36080-0x360fc, 0x36110-0x3613c, pinned):
 *   out = saturate(round(v x a + k x b)), k input 1's half,
 * rounded half to even.  Anything else is refused.
 */
#include <math.h>
#include <stdio.h>

#include "common/half.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"
#include "cpu/quant.h"

#define SUB_FMT_F16 0x44404071u
#define SUB_FMT_S8 0x44404130u
#define SUB_MAX_FACTOR 65536.0f

/* 0x36080-0x360fc: the two banks converting fp16 to float32 (1.0 halves). */
static const uint32_t sub_lanes[32] = {
	0x09090909, 0x04040404, 0x00010000, 0x00030002, 0x0a0a0a0a, 0, 0, 0x100,
	0x3c003c00, 0,          0x3c003c00, 0,          0x3c003c00, 0, 0x3c003c00, 0,
	0x09090909, 0x04040404, 0x00050004, 0x00070006, 0x0a0a0a0a, 0, 0, 0x100,
	0x3c003c00, 0,          0x3c003c00, 0,          0x3c003c00, 0, 0x3c003c00, 0,
};
/* 0x36110-0x3613c: the integer extraction (its last four words,
 * 0x36140-0x3614c, zero in the corpus, lie past the CPU_UNIFORMS words the
 * reader keeps). */
static const uint32_t sub_extract[CPU_UNIFORMS - 68] = { 0x33333333, 0x11110000, 0x03020100, 0x03020100,
							 0, 0, 0, 0x2400 };

static void shsub_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	static const unsigned used[] = { 0,  1,  2,  3,  4,  5,  7,  8,  9,  10, 11, 12, 13,
					 15, 16, 17, 18, 19, 20, 21, 23, 24, 25, 26, 28, 64 };
	cpu_ref *r = &op->u.ref;
	cpu_uniforms u;
	if (!nbg_cpu_load_uniforms(p, s, m->operation, "TensorSub shader", &u) ||
	    !nbg_cpu_loaded_once(s, &u, "TensorSub", used, sizeof(used) / sizeof(used[0])) ||
	    !nbg_cpu_pinned(s, &u, "TensorSub", 32, sub_lanes, 32) ||
	    !nbg_cpu_pinned(s, &u, "TensorSub", 68, sub_extract, CPU_UNIFORMS - 68))
		return;
	const uint32_t *v = u.value;
	uint32_t x = v[2] & 0xffff, y = v[2] >> 16, z = v[5];
	if (v[3] != SUB_FMT_F16 || v[11] != SUB_FMT_F16 || v[19] != SUB_FMT_S8 || v[7] || v[15] || v[23] ||
	    x == 0 || y == 0 || z == 0 || z > (1u << 20) || v[10] != (1u << 16 | 1u) || v[13] != 1 ||
	    v[18] != v[2] || v[21] != z) {
		nbg_cpu_refuse(s, "sub-shape-unsupported", "a TensorSub shader (layer %s) over 0x%08x x %u "
			       "(format 0x%08x) and 0x%08x x %u (0x%08x) into 0x%08x x %u (0x%08x): executed are "
			       "an fp16 image (0x%08x) minus one fp16 value into an int8 image (0x%08x) of its "
			       "shape", s->layer, v[2], v[5], v[3], v[10], v[13], v[11], v[18], v[21], v[19],
			       SUB_FMT_F16, SUB_FMT_S8);
		return;
	}
	float zpo = nbg_cpu_f32_of(v[24]), a = nbg_cpu_f32_of(v[25]), b = nbg_cpu_f32_of(v[26]);
	if (zpo != 0.0f || v[28] || v[64] || !(fabsf(a) < SUB_MAX_FACTOR) || !(fabsf(b) < SUB_MAX_FACTOR)) {
		nbg_cpu_refuse(s, "sub-quantization-unsupported", "a TensorSub shader (layer %s) whose output "
			       "zero point (0x36060) is %g, input zero points (0x36070, 0x36100) %u and %u, "
			       "factors (0x36064, 0x36068) %g and %g: executed are zero points 0 (fp16 inputs, "
			       "an int8 output of fraction length only) and factors below 65536 in magnitude",
			       s->layer, (double)zpo, v[28], v[64], (double)a, (double)b);
		return;
	}
	const uint8_t *k = nbg_cpu_const_bytes(p, m->operation, &u, 8, 2);
	if (!k) {
		nbg_cpu_refuse(s, "sub-constant-missing", "a TensorSub shader (layer %s) whose input 1 "
			       "(uniform 0x36020) is not relocated into a constant table entry holding its half",
			       s->layer);
		return;
	}
	static const uint32_t esize[2] = { 2, 1 };
	if (!nbg_cpu_elt_io(p, s, m->operation, &u, 16, "TensorSub", r, esize, x, y, z, 0))
		return;
	r->elt.a = a;
	r->elt.b = b;
	r->cst.k = nbg_fp16_to_float((uint16_t)(k[0] | k[1] << 8));
	snprintf(s->what, sizeof(s->what), "SH sub %ux%ux%u fp16 -> int8, x x %g + %g x %g", x % 100000, y % 100000,
		 z % 10000000, (double)a, (double)r->cst.k, (double)b);
	nbg_cpu_ref_executed(s, op, CPU_OP_SHSUB, CPU_REF_SUBC);
}

static void sub_row(const cpu_ref *r, const uint8_t *in, uint8_t *out, uint32_t y)
{
	(void)y;
	double kb = (double)r->cst.k * r->elt.b, a = r->elt.a;
	for (uint32_t x = 0; x < r->elt.x; x++)
		out[x] = nbg_cpu_s8_even(nbg_fp16_to_float((uint16_t)(in[2 * x] | in[2 * x + 1] << 8)) * a + kb);
}

static int shsub_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SH && m->layer == CPU_LAYER_TENSOR_SUB;
}

static int shsub_run(const cpu_op *op, uint8_t *const *buf)
{
	nbg_cpu_elt_rows(&op->u.ref, buf, sub_row);
	return 0;
}

const cpu_op_def nbg_cpu_op_shsub = { "sh-sub", shsub_match, shsub_plan, shsub_run, nbg_cpu_elt_cost };
