/*
 * ops/shgray.c - the gray pre-processing copy shader from uint8 into fp16
 * (layer com.vivantecorp.extension.evis.pre_process_gray_copy_U8toF16,
 * the mobilefacenet network of target 0xad: one per plane of its input),
 * computed by reference semantics from its uniforms and I/O, not from the
 * shader's code (nbg_cpu_step.reference).  doc/cpu-backend.md ("The
 * pre-processing shaders") gives each rule with its evidence.
 *
 * The kernel's parameters in order: the input image at 0x36000 (uint8,
 * format word 0x444051f0), the output at 0x36020 (fp16, 0x44405071, the
 * input's width, height and depth), four relocated int32 (x ratio, y
 * ratio, x offset, y offset: 0x8000, 0x8000, 0, 0, a copy at the origin),
 * the float32 mean (0x36050) and scale (0x36054), then the two lane-word
 * banks 0x36060-0x360dc of the dot product (pinned).  With the mean 0 and
 * the scale 1, the only ones executed, out = v (an fp16 holds 0..255
 * exactly).  Anything else is refused.
 */
#include <stdio.h>
#include <string.h>

#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"
#include "cpu/quant.h"

#define GRAY_FMT_U8 0x444051f0u
#define GRAY_FMT_F16 0x44405071u

/* 0x36060-0x360dc: the two banks of the mean / scale dot product. */
static const uint32_t gray_lanes[32] = {
	0x99999999, 0x44444444, 0x03020100, 0x07060504, 0x99999999, 0x06060606, 0x06060606, 0x100,
	0x3c000000, 0x3c000000, 0x3c000000, 0x3c000000, 0x3c000000, 0x3c000000, 0x3c000000, 0x3c000000,
	0x99999999, 0x44444444, 0x0b0a0908, 0x0f0e0d0c, 0x99999999, 0x06060606, 0x06060606, 0x100,
	0x3c000000, 0x3c000000, 0x3c000000, 0x3c000000, 0x3c000000, 0x3c000000, 0x3c000000, 0x3c000000,
};

/* The four int32 parameters 0x36040-0x3604c: x, y ratio 1 in 1.15 fixed
 * point, offsets 0.  0 with the step refused. */
static int gray_params_ok(const nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const cpu_uniforms *u)
{
	static const uint32_t want[4] = { 0x8000, 0x8000, 0, 0 };
	static const char *const name[4] = { "x ratio", "y ratio", "x offset", "y offset" };
	for (unsigned k = 0; k < 4; k++) {
		const uint8_t *b = nbg_cpu_const_bytes(p, operation, u, 16 + k, 4);
		uint32_t w = b ? (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24 : 0;
		if (!b || w != want[k]) {
			nbg_cpu_refuse(s, "gray-parameters-unsupported", "a gray pre-processing copy (layer %s) "
				       "whose %s (the int32 uniform 0x%05x points at) is %s0x%x: executed is 0x%x "
				       "(a copy at the origin, scale 1)", s->layer, name[k],
				       (unsigned)(CPU_UNIFORM_BASE + 4 * (16 + k)), b ? "" : "not relocated to a "
				       "constant table entry, ", w, want[k]);
			return 0;
		}
	}
	return 1;
}

static void shgray_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	static const unsigned used[] = { 0,  1,  2,  3,  4,  5,  7,  8,  9,  10, 11, 12,
					 13, 15, 16, 17, 18, 19, 20, 21 };
	cpu_ref *r = &op->u.ref;
	cpu_uniforms u;
	if (!nbg_cpu_load_uniforms(p, s, m->operation, "gray pre-processing shader", &u) ||
	    !nbg_cpu_loaded_once(s, &u, "gray pre-processing", used, sizeof(used) / sizeof(used[0])) ||
	    !nbg_cpu_pinned(s, &u, "gray pre-processing", 24, gray_lanes, 32) ||
	    !gray_params_ok(p, s, m->operation, &u))
		return;
	const uint32_t *v = u.value;
	float mean = nbg_cpu_f32_of(v[20]), scale = nbg_cpu_f32_of(v[21]);
	if (mean != 0.0f || scale != 1.0f) {
		nbg_cpu_refuse(s, "gray-parameters-unsupported", "a gray pre-processing copy (layer %s) whose "
			       "mean (0x36050) is %g and scale (0x36054) %g: executed are 0 and 1 (the corpus's; "
			       "where the shader rounds (v - mean) x scale is not established)", s->layer,
			       (double)mean, (double)scale);
		return;
	}
	uint32_t x = v[2] & 0xffff, y = v[2] >> 16, z = v[5];
	if (v[3] != GRAY_FMT_U8 || v[11] != GRAY_FMT_F16 || v[7] || v[15] || x == 0 || y == 0 || z == 0 ||
	    z > (1u << 20) || v[10] != v[2] || v[13] != z) {
		nbg_cpu_refuse(s, "gray-shape-unsupported", "a gray pre-processing copy (layer %s) from 0x%08x "
			       "x %u (format 0x%08x) into 0x%08x x %u (format 0x%08x): executed is a uint8 image "
			       "(0x%08x) into an fp16 image (0x%08x) of its shape", s->layer, v[2], v[5], v[3],
			       v[10], v[13], v[11], GRAY_FMT_U8, GRAY_FMT_F16);
		return;
	}
	static const uint32_t esize[2] = { 1, 2 };
	if (!nbg_cpu_elt_io(p, s, m->operation, &u, 8, "gray pre-processing", r, esize, x, y, z, 0))
		return;
	snprintf(s->what, sizeof(s->what), "SH copy %ux%ux%u uint8 -> fp16", x, y, z % 10000000);
	nbg_cpu_ref_executed(s, op, CPU_OP_SHGRAY, CPU_REF_GRAY);
}

/* v as a half: 0..255 are exact (the exponent 15 + e, the 10-bit
 * mantissa v's bits after its leading one), written low byte first. */
static void gray_row(const cpu_ref *r, const uint8_t *in, uint8_t *out, uint32_t y)
{
	(void)y;
	for (uint32_t x = 0; x < r->elt.x; x++)
		nbg_cpu_f16_store(out + 2 * x, (float)in[x]);
}

static int shgray_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SH && m->layer == CPU_LAYER_GRAY_COPY_U8_F16;
}

static int shgray_run(const cpu_op *op, uint8_t *const *buf)
{
	nbg_cpu_elt_rows(&op->u.ref, buf, gray_row);
	return 0;
}

const cpu_op_def nbg_cpu_op_shgray = { "sh-gray-copy", shgray_match, shgray_plan, shgray_run, nbg_cpu_elt_cost };
