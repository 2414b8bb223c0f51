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
 * The face-age network's uint8 product (the 0x7d and 0xe8 files: two
 * uint8 images of one shape, 0x444041f0, into a third), in another lane
 * layout (0x36060-0x3612c, pinned: mul_u8_lanes): out = saturate(round(a x b
 * x S)), S the float32 0x360e0, zero points 0 (in no uniform), rounded
 * half to even.
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

#define MUL_FMT_U8 0x444041f0u
/* The uint8 product's words 0x36060-0x360e4 (index 24-57; 0x360e0, the
 * scale, not pinned: 0) and 0x360f0-0x3612c (60-75): those of the 12 such
 * shaders of the 0x7d and 0xe8 face-age files. */
static const uint32_t mul_u8_lanes[34] = {
	0x29292929, 0x10101010, 0x01110000, 0x03330222, 0x29292929, 0x00010000, 0x00030002, 0x00000300,
	0,          0,          0,          0,          0,          0,          0,          0,
	0x29292929, 0x10101010, 0x05550444, 0x07770666, 0x29292929, 0x00050004, 0x00070006, 0x00000300,
	0,          0,          0,          0,          0,          0,          0,          0,
	0,          0,
};
static const uint32_t mul_u8_tail[16] = {
	0x33333333, 0x11110000, 0x03020100, 0x03020100, 0, 0, 0, 0x00002400, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* Two uint8 images times each other into a third of their shape, scaled
 * by the float32 0x360e0 (doc/cpu-backend.md, "The uint8 product"). */
static void plan_mul_u8(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_uniforms *u)
{
	static const unsigned used[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20, 21, 23, 56 };
	cpu_ref *r = &op->u.ref;
	const uint32_t *v = u->value;
	uint32_t want[34];
	for (unsigned k = 0; k < 34; k++)
		want[k] = k == 32 ? v[56] : mul_u8_lanes[k];
	if (!nbg_cpu_loaded_once(s, u, "TensorMul", used, sizeof(used) / sizeof(used[0])) ||
	    !nbg_cpu_pinned(s, u, "TensorMul", 24, want, 34) || !nbg_cpu_pinned(s, u, "TensorMul", 60, mul_u8_tail, 16))
		return;
	uint32_t x = v[2] & 0xffff, y = v[2] >> 16, z = v[5];
	if (v[11] != MUL_FMT_U8 || v[19] != MUL_FMT_U8 || v[7] || v[15] || v[23] || x == 0 || y == 0 || z == 0 ||
	    z > (1u << 20) || v[10] != v[2] || v[18] != v[2] || v[13] != z || v[21] != z) {
		nbg_cpu_refuse(s, "mul-shape-unsupported", "a TensorMul shader (layer %s) over 0x%08x x %u "
			       "(format 0x%08x) and 0x%08x x %u (0x%08x) into 0x%08x x %u (0x%08x): executed are "
			       "three uint8 images (0x%08x) of one shape", s->layer, v[2], v[5], v[3], v[10], v[13],
			       v[11], v[18], v[21], v[19], MUL_FMT_U8);
		return;
	}
	float scale = nbg_cpu_f32_of(v[56]);
	if (!(scale > 0 && scale <= 1)) {
		nbg_cpu_refuse(s, "mul-uniforms-unknown", "a TensorMul shader (layer %s) whose scale 0x360e0 is "
			       "0x%08x (%g): executed is a float32 in (0, 1]", s->layer, v[56], (double)scale);
		return;
	}
	uint64_t last[3];
	for (int k = 0; k < 3; k++)
		if (!nbg_cpu_elt_image(p, s, s->operation, u, 8u * (unsigned)k, "TensorMul", r, k, 1, x, y, z,
				       &last[k]))
			return;
	if (!nbg_cpu_elt_apart(s, r, "TensorMul", 0, last, 1) || !nbg_cpu_elt_apart(s, r, "TensorMul", 1, last, 1))
		return;
	r->elt.x = x;
	r->elt.y = y;
	r->elt.z = z;
	r->elt.a = scale;
	snprintf(s->what, sizeof(s->what), "SH mul %ux%ux%u uint8, x0 x x1 x %.9g", x, y, z % 10000000,
		 (double)scale);
	nbg_cpu_ref_executed(s, op, CPU_OP_SHMUL, CPU_REF_MULU8);
}

static void shmul_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	static const unsigned used[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20, 21, 23 };
	cpu_ref *r = &op->u.ref;
	cpu_uniforms u;
	uint32_t shift;
	if (!nbg_cpu_load_uniforms(p, s, m->operation, "TensorMul shader", &u))
		return;
	if (u.value[3] == MUL_FMT_U8) {
		plan_mul_u8(p, s, op, &u);
		return;
	}
	if (!nbg_cpu_loaded_once(s, &u, "TensorMul", used, sizeof(used) / sizeof(used[0])) ||
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

/* The uint8 product: images 0 and 1 of elt into image 2. */
static void mul_u8_run(const cpu_ref *r, uint8_t *const *buf)
{
	double scale = r->elt.a;
	for (uint32_t z = 0; z < r->elt.z; z++)
		for (uint32_t y = 0; y < r->elt.y; y++) {
			const uint8_t *p0 = buf[r->elt.region[0]] + r->elt.base[0] + z * r->elt.slice[0] + y * r->elt.row[0];
			const uint8_t *p1 = buf[r->elt.region[1]] + r->elt.base[1] + z * r->elt.slice[1] + y * r->elt.row[1];
			uint8_t *d = buf[r->elt.region[2]] + r->elt.base[2] + z * r->elt.slice[2] + y * r->elt.row[2];
			for (uint32_t x = 0; x < r->elt.x; x++) {
				double q = nbg_cpu_round_half_even((double)p0[x] * (double)p1[x] * scale);
				d[x] = (uint8_t)(q > 255 ? 255 : q);
			}
		}
}

static int shmul_run(const cpu_op *op, uint8_t *const *buf)
{
	if (op->u.ref.kind == CPU_REF_MULU8)
		mul_u8_run(&op->u.ref, buf);
	else
		nbg_cpu_elt_rows(&op->u.ref, buf, mul_row);
	return 0;
}

const cpu_op_def nbg_cpu_op_shmul = { "sh-mul", shmul_match, shmul_plan, shmul_run, nbg_cpu_elt_cost };
