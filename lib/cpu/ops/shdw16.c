/*
 * ops/shdw16.c - the fp16 depthwise convolution shader of a
 * DepthwiseConvLayer SH operation (the A733 fp16 files), computed by
 * reference semantics from its uniforms and I/O, not from the shader's code
 * (nbg_cpu_step.reference); planned through the DepthwiseConvLayer entry
 * (ops/shdw.c) when uniform 0x36000's format word is fp16.
 * doc/cpu-backend.md ("The fp16 depthwise convolution shader") gives each
 * rule below with its evidence.
 *
 * The uniforms (their layout in analysis/graph/uniforms_conv.c) are read
 * by nbg_sh_dwconv16, the reading the network view shares.
 *
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

/* The uniforms into r; 0 with the step refused. */
static int shdw16_uniforms(nbg_cpu_step *s, const cpu_uniforms *u, cpu_ref *r)
{
	const uint32_t *v = u->value;
	nbg_sh_conv g;
	enum nbg_sh_conv_status st = nbg_sh_dwconv16(u, &g);
	if (st == NBG_SHC_LAYOUT) {
		nbg_cpu_refuse(s, "shdw16-uniforms-unknown", "an fp16 depthwise convolution shader (layer %s) "
			       "whose uniforms are not the corpus's layout (0x36000..0x3613c loaded once, fp16 "
			       "input, kernels and output, a float32 bias, 0x36060 1, 0x3607c 0, 0x360a0..0x3613c "
			       "the constants of the corpus's stride-%u shaders): format words 0x%08x, 0x%08x, "
			       "0x%08x, 0x%08x", s->layer, (v[27] == 2) + 1, v[3], v[11], v[19], v[35]);
		return 0;
	}
	if (st != NBG_SHC_OK) {
		nbg_cpu_refuse(s, "shdw16-shape-unsupported", "an fp16 depthwise convolution shader (layer %s): "
			       "input %ux%ux%u, kernels %u x %u, bias %u, output %ux%ux%u, uniforms 0x36064.. %u, %u, "
			       "%u, %u, %u, %u: executed is kx, ky, stride, pad, pad, stride with equal pairs "
			       "(which of a pair is x is not established), stride 1 or 2, every window starting "
			       "inside the input padded before", s->layer, g.w, g.h, v[5], v[10] & 0xffff, g.c,
			       v[18] & 0xffff, g.ow, g.oh, v[37], v[25], v[26], v[27], v[28], v[29], v[30]);
		return 0;
	}
	nbg_cpu_f16_geometry(r, &g);
	r->conv.p = g.oh;
	r->w_row = g.w_row;
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
