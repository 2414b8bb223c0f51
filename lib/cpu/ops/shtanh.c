/*
 * ops/shtanh.c - the tanh of an ActivationLayer SH operation from uint8
 * into fp16 (the face-age network's three single-value deltas: its 0x7d,
 * 0xe8 and 0x10003 files), computed by reference semantics from its
 * uniforms and I/O, not from the shader's code (nbg_cpu_step.reference).
 * doc/cpu-backend.md ("The tanh shader") gives each rule with its
 * evidence.
 *
 * The input image at 0x36000 (uint8, 0x444041f0), the output at 0x36020
 * (fp16, 0x44404071, the input's shape), 0x36040 the float32 2 log2(e)
 * (tanh written through exp2), 0x36044 1.0, 0x36048 the input scale S,
 * 0x3604c the float32 B = -zero point x S, then lane words and fp16 1.0s
 * up to 0x3611c (pinned: tanh_lanes).  out = fp16(tanh(q x S + B)), the
 * argument a float32, the tanh in double rounded once to the nearest half
 * (ties to even).  Anything else stays the generic shader refusal
 * (ops/shader.c) or is refused with a tanh-* id.
 */
#include <math.h>
#include <stdio.h>

#include "common/half.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"
#include "cpu/quant.h"

#define TANH_FMT_U8 0x444041f0u
#define TANH_FMT_F16 0x44404071u
#define TANH_TWO_LOG2E 0x4038aa3bu /* float32 2 log2(e) = 2.8853900 */
#define TANH_ONE 0x3f800000u

/* 0x36050-0x360d4 and 0x360e0-0x3611c (index 20-53, 56-71; 0x360d8 and
 * 0x360dc are not loaded): the 12 such shaders' words. */
static const uint32_t tanh_lanes[52] = {
	0x01010101, 0,          0x00010000, 0x00030002, 0x02020202, 0,          0,          0x00000100,
	0x00003c00, 0,          0x00003c00, 0,          0x00003c00, 0,          0x00003c00, 0,
	0x01010101, 0,          0x00050004, 0x00070006, 0x02020202, 0,          0,          0x00000100,
	0x00003c00, 0,          0x00003c00, 0,          0x00003c00, 0,          0x00003c00, 0,
	TANH_ONE,   0,          0 /* not loaded */, 0 /* not loaded */, 0x11111111, 0x11110000, 0x06040200, 0x06040200,
	0x22222222, 0,          0,          0x00000100, 0x00003c00, 0x00003c00, 0x00003c00, 0x00003c00,
	0x00003c00, 0x00003c00, 0x00003c00, 0x00003c00,
};

/* An ActivationLayer SH operation whose uniforms hold the tanh's constant
 * and formats: the others stay ops/shader.c's (or ops/shf32.c's). */
static int shtanh_is(const cpu_uniforms *u)
{
	return u->loaded[16] == 1 && u->value[16] == TANH_TWO_LOG2E && u->loaded[3] == 1 &&
	       u->value[3] == TANH_FMT_U8 && u->loaded[11] == 1 && u->value[11] == TANH_FMT_F16;
}

static int shtanh_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	cpu_uniforms u;
	nbg_sh_uniforms_cut cut;
	return m->type == NBG_GRAPH_OP_SH && m->layer == CPU_LAYER_ACTIVATION &&
	       nbg_sh_uniforms_load(p->m, p->g, m->operation, &u, &cut) == NBG_SHU_OK && shtanh_is(&u);
}

static void shtanh_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	static const unsigned used[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19 };
	cpu_ref *r = &op->u.ref;
	cpu_uniforms u;
	if (!nbg_cpu_load_uniforms(p, s, m->operation, "tanh shader", &u) ||
	    !nbg_cpu_loaded_once(s, &u, "ActivationLayer", used, sizeof(used) / sizeof(used[0])) ||
	    !nbg_cpu_pinned(s, &u, "ActivationLayer", 20, tanh_lanes, 34) ||
	    !nbg_cpu_pinned(s, &u, "ActivationLayer", 56, tanh_lanes + 36, 16))
		return;
	const uint32_t *v = u.value;
	uint32_t x = v[2] & 0xffff, y = v[2] >> 16, z = v[5];
	float sc = nbg_cpu_f32_of(v[18]), b = nbg_cpu_f32_of(v[19]);
	if (v[17] != TANH_ONE || v[7] || v[15] || x == 0 || y == 0 || z == 0 || z > (1u << 20) || v[10] != v[2] ||
	    v[13] != z) {
		nbg_cpu_refuse(s, "tanh-shape-unsupported", "a tanh shader (layer %s) from 0x%08x x %u into "
			       "0x%08x x %u (height << 16 | width, depth), 0x36044 0x%08x: executed is one shape "
			       "and 0x36044 1.0", s->layer, v[2], v[5], v[10], v[13], v[17]);
		return;
	}
	/* B = -zp x S, zp an integer 0..255 */
	float zp = sc > 0 ? -b / sc : -1;
	if (!(sc > 0 && isfinite(sc)) || !(zp > -0.5f && zp < 255.5f) || fabsf(zp - rintf(zp)) > 1e-3f) {
		nbg_cpu_refuse(s, "tanh-scale-invalid", "a tanh shader (layer %s) whose scale 0x36048 is %g and "
			       "offset 0x3604c %g: executed are a positive scale and an offset of minus an "
			       "integer zero point 0 to 255 times it", s->layer, (double)sc, (double)b);
		return;
	}
	static const uint32_t esize[2] = { 1, 2 };
	if (!nbg_cpu_elt_io(p, s, m->operation, &u, 8, "tanh", r, esize, x, y, z, 0))
		return;
	r->elt.a = sc;
	r->elt.b = b;
	snprintf(s->what, sizeof(s->what), "SH tanh %ux%ux%u uint8 -> fp16, tanh(q x %.9g + %.9g)", x, y,
		 z % 10000000, (double)sc, (double)b);
	nbg_cpu_ref_executed(s, op, CPU_OP_SHTANH, CPU_REF_TANH);
}

static void tanh_row(const cpu_ref *r, const uint8_t *in, uint8_t *out, uint32_t y)
{
	(void)y;
	for (uint32_t x = 0; x < r->elt.x; x++) {
		float arg = (float)in[x] * r->elt.a + r->elt.b;
		uint16_t h = nbg_fp16_from_double(tanh((double)arg));
		out[2 * x] = (uint8_t)h;
		out[2 * x + 1] = (uint8_t)(h >> 8);
	}
}

static int shtanh_run(const cpu_op *op, uint8_t *const *buf)
{
	nbg_cpu_elt_rows(&op->u.ref, buf, tanh_row);
	return 0;
}

const cpu_op_def nbg_cpu_op_shtanh = { "sh-tanh", shtanh_match, shtanh_plan, shtanh_run, nbg_cpu_elt_cost };
