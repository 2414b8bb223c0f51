/*
 * ops/shmul.c - the TensorMul shader of an int8 image times a constant
 * int8 value (the mobilefacenet network of target 0xad: its input scaled
 * after the mean is subtracted), computed by reference semantics from its
 * uniforms and I/O, not from the shader's code (nbg_cpu_step.reference).
 * doc/cpu-backend.md ("The pre-processing shaders") gives each rule with
 * its evidence.
 *
 * Input 0 at 0x36000 (int8, 0x44404130), input 1 at 0x36020 (one int8
 * value c, 1x1, relocated into the LCDT), the output at 0x36040 (int8,
 * input 0's shape); 0x36060 0, then two banks of lane words
 * (0x36070-0x360ec: lane i of input 0 times lane i of input 1, the words
 * 0x3608c and 0x360cc 0x400 | s, s the post-shift):
 *   out = saturate(round(v x c / 2^s)), rounded half to even.
 * Anything else is refused.
 */
#include <stdio.h>

#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"
#include "cpu/quant.h"

#define MUL_FMT_S8 0x44404130u
#define MUL_MAX_SHIFT 15u

/* 0x36060-0x360ec but the post-shift words (0x3608c, 0x360cc). */
static const uint32_t mul_lanes[36] = {
	0,          0,          0,          0,
	0x11111111, 0,          0x03020100, 0x07060504, 0x11111111, 0x03020100, 0x07060504, 0x400,
	0,          0,          0,          0,          0,          0,          0,          0,
	0x11111111, 0,          0x0b0a0908, 0x0f0e0d0c, 0x11111111, 0x0b0a0908, 0x0f0e0d0c, 0x400,
	0,          0,          0,          0,          0,          0,          0,          0,
};

/* The uniforms 0x36060 (index 24), 0x36070-0x360ec (28-59) as pinned,
 * the shift in *shift; 0 with the step refused. */
static int mul_lanes_ok(nbg_cpu_step *s, const cpu_uniforms *u, uint32_t *shift)
{
	uint32_t w = u->value[35], want[36];
	*shift = w & 0x1f;
	if ((w & ~0x1fu) != 0x400 || *shift > MUL_MAX_SHIFT || u->value[51] != w) {
		nbg_cpu_refuse(s, "mul-uniforms-unknown", "a TensorMul shader (layer %s) whose post-shift words "
			       "0x3608c and 0x360cc are 0x%08x and 0x%08x: executed are two equal words 0x400 | s, "
			       "s at most %u", s->layer, w, u->value[51], MUL_MAX_SHIFT);
		return 0;
	}
	for (unsigned k = 0; k < 36; k++)
		want[k] = mul_lanes[k] | (k == 11 || k == 27 ? *shift : 0);
	return nbg_cpu_pinned(s, u, "TensorMul", 24, want, 1) && nbg_cpu_pinned(s, u, "TensorMul", 28, want + 4, 32);
}

static void shmul_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	static const unsigned used[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20, 21, 23 };
	cpu_ref *r = &op->u.ref;
	cpu_uniforms u;
	uint32_t shift;
	if (!nbg_cpu_load_uniforms(p, s, m->operation, "TensorMul shader", &u) ||
	    !nbg_cpu_loaded_once(s, &u, "TensorMul", used, sizeof(used) / sizeof(used[0])) ||
	    !mul_lanes_ok(s, &u, &shift))
		return;
	const uint32_t *v = u.value;
	uint32_t x = v[2] & 0xffff, y = v[2] >> 16, z = v[5];
	if (v[3] != MUL_FMT_S8 || v[11] != MUL_FMT_S8 || v[19] != MUL_FMT_S8 || v[7] || v[15] || v[23] || x == 0 ||
	    y == 0 || z == 0 || z > (1u << 20) || v[10] != (1u << 16 | 1u) || v[13] != 1 || v[18] != v[2] ||
	    v[21] != z) {
		nbg_cpu_refuse(s, "mul-shape-unsupported", "a TensorMul shader (layer %s) over 0x%08x x %u "
			       "(format 0x%08x) and 0x%08x x %u (0x%08x) into 0x%08x x %u (0x%08x): executed are "
			       "an int8 image (0x%08x) times one int8 value into an int8 image of its shape",
			       s->layer, v[2], v[5], v[3], v[10], v[13], v[11], v[18], v[21], v[19], MUL_FMT_S8);
		return;
	}
	const uint8_t *c = nbg_cpu_const_bytes(p, m->operation, &u, 8, 1);
	if (!c) {
		nbg_cpu_refuse(s, "mul-constant-missing", "a TensorMul shader (layer %s) whose input 1 "
			       "(uniform 0x36020) is not relocated into a constant table entry holding its value",
			       s->layer);
		return;
	}
	static const uint32_t esize[2] = { 1, 1 };
	if (!nbg_cpu_elt_io(p, s, m->operation, &u, 16, "TensorMul", r, esize, x, y, z, 1))
		return;
	r->cst.c = (int8_t)c[0];
	r->cst.shift = shift;
	snprintf(s->what, sizeof(s->what), "SH mul %ux%ux%u int8, x x %d / 2^%u", x, y, z % 10000000, r->cst.c,
		 shift);
	nbg_cpu_ref_executed(s, op, CPU_OP_SHMUL, CPU_REF_MULC);
}

static void mul_row(const cpu_ref *r, const uint8_t *in, uint8_t *out, uint32_t y)
{
	(void)y;
	double d = (double)r->cst.c / (double)(1u << r->cst.shift);
	for (uint32_t x = 0; x < r->elt.x; x++)
		out[x] = nbg_cpu_s8_even((int8_t)in[x] * d);
}

static int shmul_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SH && m->layer == CPU_LAYER_TENSOR_MUL;
}

static int shmul_run(const cpu_op *op, uint8_t *const *buf)
{
	nbg_cpu_elt_rows(&op->u.ref, buf, mul_row);
	return 0;
}

const cpu_op_def nbg_cpu_op_shmul = { "sh-mul", shmul_match, shmul_plan, shmul_run, nbg_cpu_elt_cost };
