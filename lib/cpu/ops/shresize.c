/*
 * ops/shresize.c - the resize_bilinear_I16toI16_UP shader computed by
 * reference semantics from its uniforms and I/O, not from the shader's
 * code (nbg_cpu_step.reference): the 2x bilinear upsampling of int16
 * dynamic fixed point images in the A733 full-range face detector (TFLite
 * RESIZE_BILINEAR, half_pixel_centers true, align_corners false),
 * doc/cpu-backend.md "int16 data".
 *
 * Its state buffer loads two images of eight words (as the padding
 * shader's, ops/shpad.c): the input at 0x36000 and the output at 0x36020,
 * each address (patched), row stride, height << 16 | width, format word,
 * slice bytes, depth, 0x10d810b0, 0.  The output is twice as wide and high
 * with the input's depth and format.  Uniforms read (each loaded once, the
 * values of every such shader of the corpus, else shresize-uniforms-unknown):
 *   0x36044 1, 0x36048 float32 0.5 (input over output size), 0x3604c the
 *   depth, 0x36054..0x3605c 1, 2, 3, 0x36060 and 0x36064 float32 0.5,
 *   0x36068 float32 1.0 (read as the output's scale: the fraction length
 *   kept).
 * Output (ox, oy) of channel z samples the input at (ox + 0.5) / 2 - 0.5,
 * (oy + 0.5) / 2 - 0.5: per axis the two neighbours, clamped to the image,
 * with weights 1/4 and 3/4; the sum (in 1/16) rounded half away from zero.
 */
#include <string.h>

#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"

#define SHRS_IN 0       /* uniform index of the input image */
#define SHRS_OUT 8      /* of the output image */
#define SHRS_FMT_I16 0x444050f1u /* the int16 images' word of these shaders */
#define SHRS_HALF 0x3f000000u    /* float32 0.5 */
#define SHRS_ONE 0x3f800000u     /* float32 1.0 */

/* The corpus's uniforms 0x36044..0x36068 (index 17..26; 19 the depth,
 * 20 any value: 0 in every such shader, not read). */
static int shrs_uniforms(const cpu_uniforms *u, uint32_t depth)
{
	static const struct { unsigned i; uint32_t v; } want[] = {
		{ 17, 1 }, { 18, SHRS_HALF }, { 21, 1 }, { 22, 2 }, { 23, 3 },
		{ 24, SHRS_HALF }, { 25, SHRS_HALF }, { 26, SHRS_ONE },
	};
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
		if (u->loaded[want[k].i] != 1 || u->value[want[k].i] != want[k].v)
			return 0;
	return u->loaded[19] == 1 && u->value[19] == depth;
}

static void shrs_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	cpu_uniforms u;
	nbg_sh_image in, out;
	cpu_ref *r = &op->u.ref;
	memset(r, 0, sizeof(*r));
	if (!nbg_cpu_load_uniforms(p, s, m->operation, "resize_bilinear_I16toI16_UP", &u))
		return;
	int ok = nbg_sh_image_at(&u, SHRS_IN, &in) && nbg_sh_image_at(&u, SHRS_OUT, &out) &&
		 u.value[SHRS_IN + 3] == SHRS_FMT_I16 && u.value[SHRS_OUT + 3] == SHRS_FMT_I16 &&
		 in.element == 2 && out.element == 2 && in.depth == out.depth && in.depth &&
		 out.width == 2 * in.width && out.height == 2 * in.height && shrs_uniforms(&u, in.depth);
	if (!ok) {
		nbg_cpu_refuse(s, "shresize-uniforms-unknown", "a resize_bilinear_I16toI16_UP shader whose images "
			       "(uniforms 0x36000, 0x36020: %ux%ux%u, %ux%ux%u, formats 0x%08x, 0x%08x) are not int16 "
			       "with the output twice as wide and high, or whose uniforms 0x36044-0x36068 are not the "
			       "corpus's (scale 0.5, output scale 1.0): executed is the 2x upsampling with half-pixel "
			       "centres", in.width, in.height, in.depth, out.width, out.height, out.depth,
			       u.value[SHRS_IN + 3], u.value[SHRS_OUT + 3]);
		return;
	}
	uint64_t last[3] = { 0, 0, 0 };
	if (!nbg_cpu_sh_image(p, s, m->operation, &u, SHRS_IN, r, 0, &in, &last[0]) ||
	    !nbg_cpu_sh_image(p, s, m->operation, &u, SHRS_OUT, r, 2, &out, &last[2]))
		return;
	if (r->elt.region[0] == r->elt.region[2] && last[0] >= r->elt.base[2] && last[2] >= r->elt.base[0]) {
		nbg_cpu_refuse(s, "shresize-uniforms-unknown", "a resize_bilinear_I16toI16_UP shader whose output "
			       "overlaps its input: executed is an output apart from its input");
		return;
	}
	r->elt.x = in.width;
	r->elt.y = in.height;
	r->elt.z = in.depth;
	nbg_cpu_ref_executed(s, op, CPU_OP_SHRESIZE, CPU_REF_RESIZE);
}

static int16_t shrs_at(const uint8_t *b, uint64_t a)
{
	return (int16_t)(uint16_t)(b[a] | (uint16_t)b[a + 1] << 8);
}

/* Output index o of an axis of n input pixels: the two neighbours and the
 * weight of the first, in quarters (the other's is 4 minus it). */
static void shrs_axis(uint32_t o, uint32_t n, uint32_t *lo, uint32_t *hi, int64_t *w)
{
	uint32_t k = o / 2;
	if (o % 2) { /* k + 1/4 */
		*lo = k;
		*hi = k + 1 < n ? k + 1 : n - 1;
		*w = 3;
	} else { /* k - 1/4, the first pixel itself at the top */
		*lo = k ? k - 1 : 0;
		*hi = k;
		*w = 1;
	}
}

static int shrs_run(const cpu_op *op, uint8_t *const *buf)
{
	const cpu_ref *r = &op->u.ref;
	const uint8_t *in = buf[r->elt.region[0]];
	uint8_t *out = buf[r->elt.region[2]];
	for (uint32_t z = 0; z < r->elt.z; z++)
		for (uint32_t oy = 0; oy < 2 * r->elt.y; oy++) {
			uint32_t y0, y1, x0, x1;
			int64_t wy, wx;
			shrs_axis(oy, r->elt.y, &y0, &y1, &wy);
			uint64_t a0 = r->elt.base[0] + z * r->elt.slice[0] + y0 * r->elt.row[0];
			uint64_t a1 = r->elt.base[0] + z * r->elt.slice[0] + y1 * r->elt.row[0];
			uint8_t *d = out + r->elt.base[2] + z * r->elt.slice[2] + oy * r->elt.row[2];
			for (uint32_t ox = 0; ox < 2 * r->elt.x; ox++) {
				shrs_axis(ox, r->elt.x, &x0, &x1, &wx);
				int64_t top = wx * shrs_at(in, a0 + 2ull * x0) + (4 - wx) * shrs_at(in, a0 + 2ull * x1);
				int64_t bot = wx * shrs_at(in, a1 + 2ull * x0) + (4 - wx) * shrs_at(in, a1 + 2ull * x1);
				int64_t sum = wy * top + (4 - wy) * bot; /* in 1/16 */
				int64_t q = (sum + (sum < 0 ? -8 : 8)) / 16;
				uint16_t v = (uint16_t)(int16_t)q;
				d[2 * ox] = (uint8_t)(v & 0xffu);
				d[2 * ox + 1] = (uint8_t)(v >> 8);
			}
		}
	return 0;
}

static void shrs_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	const cpu_ref *r = &op->u.ref;
	/* four input pixels read for each of the 4 x y outputs a channel */
	*work = nbg_cpu_mul_sat(nbg_cpu_mul_sat(16ull * r->elt.x, r->elt.y), r->elt.z);
	*scratch = 0;
}

static int shrs_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SH && m->layer == CPU_LAYER_RESIZE_BILINEAR_I16_UP;
}

const cpu_op_def nbg_cpu_op_shresize = { "sh-resize", shrs_match, shrs_plan, shrs_run, shrs_cost };
