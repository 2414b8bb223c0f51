/*
 * ops/shdw16.c - the fp16 depthwise convolution shader of a
 * DepthwiseConvLayer SH operation (the A733 fp16 files), computed by
 * reference semantics from its uniforms and I/O, not from the shader's code
 * (nbg_cpu_step.reference); planned through the DepthwiseConvLayer entry
 * (ops/shdw.c) when uniform 0x36000's format word is fp16.
 * doc/cpu-backend.md ("The fp16 depthwise convolution shader") gives each
 * rule below with its evidence.
 *
 * Uniforms (0x36000 + 4 i; image descriptors as in ops/shconv.c):
 *   0..7    input: w x h, depth c fp16 planes
 *   8..15   kernels: kx ky fp16 values wide, c rows (a COEF_DATA_TABLE entry)
 *   16..23  bias: c float32 values (a COEF_DATA_TABLE entry)
 *   24..31  1, kx, ky, stride, pad, pad, stride, 0
 *   32..39  output: ow x oh, depth c fp16 planes
 *   40..79  constants, pinned: one set for stride 1; for stride 2 word 40
 *           the output width, 41..43 0 where loaded (the corpus loads none),
 *           the others another set
 * out[ci][y][x] = fp16(sum over j, i of k[ci][j kx + i] x
 * in[ci][y s - pad + j][x s - pad + i] + bias[ci]), 0 outside the plane
 * (after it too: TFLite's SAME padding puts the odd pixel there).
 */
#include <stdio.h>
#include <string.h>

#include "common/half.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"

#define SHDW16_ANY (-1)   /* not loaded, or 0 */
#define SHDW16_OW (-2)    /* the output width */

/* Words 40..79 as the corpus's stride-1 and stride-2 shaders hold them. */
static const int64_t shdw16_pinned[2][40] = {
	{ 0x15151515, 0, 0x3210210, 0x5430432, 0x15151515, 0x2100210, 0x2100210, 0x400, 0, 0, 0, 0, 0, 0, 0, 0,
	  0x15151515, 0, 0x3210210, 0x5430432, 0x15151515, 0x5430543, 0x5430543, 0x400, 0, 0, 0, 0, 0, 0, 0, 0,
	  0x11111111, 0x11110000, 0x6040200, 0x6040200, 0x22222222, 0, 0, 0x400 },
	{ SHDW16_OW, SHDW16_ANY, SHDW16_ANY, SHDW16_ANY, 0x151515, 0, 0x4320210, 0x654, 0x151515, 0x2100210, 0x210,
	  0x400, 0, 0, 0, 0, 0, 0, 0, 0, 0x151515, 0, 0x4320210, 0x654, 0x151515, 0x5430543, 0x543, 0x400, 0, 0,
	  0, 0, 0, 0, 0, 0, 0x111111, 0x111000, 0x40200, 0x402 },
};

int nbg_cpu_shdw16_is(const cpu_uniforms *u)
{
	return u->loaded[3] == 1 && (u->value[3] & 0xfff00003u) == 0x44400001u;
}

/* The uniforms into r; 0 with the step refused. */
static int shdw16_uniforms(nbg_cpu_step *s, const cpu_uniforms *u, cpu_ref *r)
{
	const uint32_t *v = u->value;
	uint32_t w, h, kk, c, bn, bh, ow, oh;
	uint64_t row, krow, brow, orow;
	unsigned set = v[27] == 2;
	int other = 0;
	for (unsigned j = 0; j < 40; j++)
		other |= u->loaded[j] != 1;
	for (unsigned j = 40; j < 80; j++) {
		int64_t want = shdw16_pinned[set][j - 40];
		other |= want == SHDW16_ANY ? u->loaded[j] > 1 || (u->loaded[j] && v[j])
					     : u->loaded[j] != 1 || v[j] != (want == SHDW16_OW ? v[34] & 0xffff
											: (uint32_t)want);
	}
	if (other || v[24] != 1 || v[31] != 0 || !nbg_cpu_f16_image(u, 0, 0, 1, &w, &h, &row) ||
	    !nbg_cpu_f16_image(u, 8, 0, 0, &kk, &c, &krow) || !nbg_cpu_f16_image(u, 16, 1, 0, &bn, &bh, &brow) ||
	    !nbg_cpu_f16_image(u, 32, 0, 1, &ow, &oh, &orow)) {
		nbg_cpu_refuse(s, "shdw16-uniforms-unknown", "an fp16 depthwise convolution shader (layer %s) "
			       "whose uniforms are not the corpus's layout (0x36000..0x3613c loaded once, fp16 "
			       "input, kernels and output, a float32 bias, 0x36060 1, 0x3607c 0, 0x360a0..0x3613c "
			       "the constants of the corpus's stride-%u shaders): format words 0x%08x, 0x%08x, "
			       "0x%08x, 0x%08x", s->layer, set + 1, v[3], v[11], v[19], v[35]);
		return 0;
	}
	uint32_t kx = v[25], ky = v[26], st = v[27], pad = v[28];
	if (!kx || !ky || kk != kx * ky || v[5] != c || v[37] != c || bn != c || bh != 1 || v[30] != st ||
	    v[29] != pad || (st != 1 && st != 2) || pad >= kx || pad >= ky ||
	    (uint64_t)(ow - 1) * st >= (uint64_t)w + pad || (uint64_t)(oh - 1) * st >= (uint64_t)h + pad ||
	    v[4] < (uint64_t)(h - 1) * row + 2ull * w || v[36] < (uint64_t)(oh - 1) * orow + 2ull * ow) {
		nbg_cpu_refuse(s, "shdw16-shape-unsupported", "an fp16 depthwise convolution shader (layer %s): "
			       "input %ux%ux%u, kernels %u x %u, bias %u, output %ux%ux%u, uniforms 0x36064.. %u, %u, "
			       "%u, %u, %u, %u: executed is kx, ky, stride, pad, pad, stride with equal pairs "
			       "(which of a pair is x is not established), stride 1 or 2, every window starting "
			       "inside the input padded before", s->layer, w, h, v[5], kk, c, bn, ow, oh, v[37], kx, ky, v[27], v[28],
			       v[29], v[30]);
		return 0;
	}
	r->conv.w = w;
	r->conv.h = h;
	r->conv.c = c;
	r->conv.kx = kx;
	r->conv.ky = ky;
	r->conv.sx = r->conv.sy = st;
	r->conv.px = r->conv.py = pad;
	r->conv.ow = ow;
	r->conv.p = oh;
	r->w_row = krow;
	r->elt.row[0] = row;
	r->elt.slice[0] = v[4];
	r->elt.row[2] = orow;
	r->elt.slice[2] = v[36];
	return 1;
}

void nbg_cpu_shdw16_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation, const cpu_uniforms *u)
{
	cpu_ref *r = &op->u.ref;
	if (!shdw16_uniforms(s, u, r))
		return;
	uint64_t need = (uint64_t)(r->conv.c - 1) * r->w_row + 2ull * r->conv.kx * r->conv.ky;
	r->codes = nbg_cpu_table_bytes(p, operation, u->at[8], u->value[8], NBG_GRAPH_SRC_MISC_DYNA_GENERIC, need);
	r->conv.bias = nbg_cpu_table_bytes(p, operation, u->at[16], u->value[16], NBG_GRAPH_SRC_MISC_DYNA_GENERIC,
					   4ull * r->conv.c);
	if (!r->codes || !r->conv.bias) {
		nbg_cpu_refuse(s, "shdw16-kernels-not-located", "an fp16 depthwise convolution shader (layer %s) "
			       "whose %s address (uniform 0x%05x) is not relocated by a MISC_DYNA_GENERIC patch to "
			       "a COEF_DATA_TABLE entry holding its %llu bytes", s->layer,
			       r->codes ? "bias" : "kernel", r->codes ? 0x36040u : 0x36020u,
			       (unsigned long long)(r->codes ? 4ull * r->conv.c : need));
		return;
	}
	nbg_cmd_ref in, out;
	long ri, ro;
	uint64_t last;
	if (!nbg_cpu_locate_io(p, s, operation, u, 32, "fp16 depthwise convolution shader", &in, &out, &ri, &ro))
		return;
	if (!nbg_cpu_image_fits(p, (size_t)ri, in.offset, 2ull * r->conv.w, r->conv.h, r->conv.c, r->elt.row[0],
				r->elt.slice[0], &last) ||
	    !nbg_cpu_image_fits(p, (size_t)ro, out.offset, 2ull * r->conv.ow, r->conv.p, r->conv.c, r->elt.row[2],
				r->elt.slice[2], &last)) {
		nbg_cpu_refuse(s, "address-outside-memory", "an fp16 depthwise convolution shader (layer %s) whose "
			       "input at %s+0x%llx or output at %s+0x%llx does not lie inside its memory", s->layer,
			       nbg_graph_source_type_name(in.source_type), (unsigned long long)in.offset,
			       nbg_graph_source_type_name(out.source_type), (unsigned long long)out.offset);
		return;
	}
	uint64_t macs = (uint64_t)r->conv.c * r->conv.ow * r->conv.p * r->conv.kx * r->conv.ky;
	if (macs > NBG_CPU_MAX_MACS) {
		nbg_cpu_refuse(s, "work-limit", "an fp16 depthwise convolution shader (layer %s) of %llu "
			       "multiply-accumulates, above the limit of %llu", s->layer, (unsigned long long)macs,
			       (unsigned long long)NBG_CPU_MAX_MACS);
		return;
	}
	r->elt.region[0] = (size_t)ri;
	r->elt.region[2] = (size_t)ro;
	r->elt.base[0] = in.offset;
	r->elt.base[2] = out.offset;
	snprintf(s->what, sizeof(s->what), "SH depthwise conv %ux%u, stride %u, pad %u, %ux%ux%u -> %ux%u, fp16",
		 r->conv.kx, r->conv.ky, r->conv.sx, r->conv.px, r->conv.w, r->conv.h, r->conv.c, r->conv.ow,
		 r->conv.p);
	s->macs = macs;
	nbg_cpu_ref_executed(s, op, CPU_OP_SHDW16, CPU_REF_DWCONV16);
}

/* float32 products summed in (ky, kx) order, then the bias, rounded once
 * to fp16 (nbg_cpu_f16_store). */
static int shdw16_run(const cpu_op *op, uint8_t *const *buf)
{
	const cpu_ref *r = &op->u.ref;
	const uint8_t *in = buf[r->elt.region[0]] + r->elt.base[0];
	uint8_t *out = buf[r->elt.region[2]] + r->elt.base[2];
	for (uint32_t ci = 0; ci < r->conv.c; ci++) {
		const uint8_t *w = r->codes + ci * r->w_row, *x = in + ci * r->elt.slice[0];
		float bias;
		memcpy(&bias, r->conv.bias + 4ull * ci, sizeof(bias));
		for (uint32_t oy = 0; oy < r->conv.p; oy++)
			for (uint32_t ox = 0; ox < r->conv.ow; ox++) {
				float acc = 0;
				for (uint32_t j = 0; j < r->conv.ky; j++)
					for (uint32_t i = 0; i < r->conv.kx; i++) {
						int64_t y = (int64_t)oy * r->conv.sy - r->conv.py + j;
						int64_t xx = (int64_t)ox * r->conv.sx - r->conv.px + i;
						if (y < 0 || xx < 0 || y >= r->conv.h || xx >= r->conv.w)
							continue;
						acc += nbg_fp16_to_float(nbg_cpu_f16_ld(w + 2ull * (j * r->conv.kx + i))) *
						       nbg_fp16_to_float(nbg_cpu_f16_ld(x + (uint64_t)y * r->elt.row[0] +
											 2ull * (uint64_t)xx));
					}
				nbg_cpu_f16_store(out + ci * r->elt.slice[2] + oy * r->elt.row[2] + 2ull * ox, acc + bias);
			}
	}
	return 0;
}

/* One step per multiply-accumulate. */
static void shdw16_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	const cpu_ref *r = &op->u.ref;
	*work = nbg_cpu_mul_sat(nbg_cpu_mul_sat(nbg_cpu_mul_sat(r->conv.c, r->conv.ow), r->conv.p),
				nbg_cpu_mul_sat(r->conv.kx, r->conv.ky));
	*scratch = 0;
}

const cpu_op_def nbg_cpu_op_shdw16 = { "sh-dwconv-fp16", NULL, NULL, shdw16_run, shdw16_cost };
