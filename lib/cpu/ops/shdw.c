/*
 * ops/shdw.c - the depthwise convolution shader of a DepthwiseConvLayer SH
 * operation, computed by reference semantics from its uniforms and I/O,
 * not from the shader's code (nbg_cpu_step.reference).  In the corpus it
 * is the image classification network's 7x7 global average pooling on
 * targets 0x99 and 0xa1, which 0xbe and 0xe8 compile as an NN depthwise
 * convolution; doc/cpu-backend.md ("The depthwise convolution shader")
 * gives each rule below with its evidence.
 *
 * Its state buffer loads (uniform 0x36000 + 4 i, read as the softmax's):
 *   0x36000..0x3601c  input image: address (patched), row stride, height << 16
 *                     | width, format word 0x444051f0, slice bytes, depth
 *                     (the channels), 0x10da10b0, 0
 *   0x36020..0x3603c  the kernels as an image, one row of kx x ky codes per
 *                     channel: address (a STATE patch of source
 *                     MISC_DYNA_INPUT naming an LCDT entry), row stride,
 *                     channels << 16 | kx x ky, format, slice, depth 1, ., 0
 *   0x36040..0x3605c  1, kx, ky, 2, 0, 0, 2, 2
 *   0x36060..0x3607c  output image likewise: 1 x 1, depth the channels
 *   0x36080           float32: the requantization scale
 *   0x36084..0x3608c  0, the channels, 1
 * out[c] = requant(sum over ky, kx of w[c][ky][kx] x in[c][ky][kx]) with
 * every zero point 0 (nbg_cpu_requant, the NN rule, rounded half away from
 * zero: no rounding field governs a shader; inferred).  Executed only where
 * the kernel covers the whole input (kx, ky = its width, height: one
 * output per channel) and every channel's codes are equal (the order of
 * a row's codes against the window is then immaterial: it is not
 * established); anything else is refused with a shdw-* id.
 */
#include <stdio.h>
#include <string.h>

#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"
#include "cpu/quant.h"

#define SHDW_FMT_UINT8 0x444051f0u
#define SHDW_WORDS 36 /* 0x36000..0x3608c: each read once */
#define SHDW_MAX_SIDE 0xffffu
#define SHDW_MAX_CHANNELS 0xffffu /* the kernel image's 16-bit height */

/* The words whose meaning is not established, with the value both corpus
 * operations hold: the three images' eighth words (a zero point would
 * fit there), 0x36040, 0x3604c..0x3605c (padding and stride would), 0x36084,
 * 0x3608c.  Another value is refused. */
static const struct {
	unsigned index;
	uint32_t value;
} shdw_pinned[] = { { 7, 0 }, { 15, 0 }, { 31, 0 }, { 16, 1 }, { 19, 2 }, { 20, 0 },
		    { 21, 0 }, { 22, 2 }, { 23, 2 }, { 33, 0 }, { 35, 1 } };

static int shdw_uniforms_known(nbg_cpu_step *s, const cpu_uniforms *u)
{
	if (u->value[3] != SHDW_FMT_UINT8 || u->value[11] != SHDW_FMT_UINT8 ||
	    u->value[27] != SHDW_FMT_UINT8) {
		nbg_cpu_refuse(s, "shdw-format-unsupported", "a depthwise convolution shader (layer %s) with "
			       "uniforms 0x3600c, 0x3602c, 0x3606c (the input, kernel and output format words) 0x%08x, "
			       "0x%08x, 0x%08x: "
			       "executed is 0x%08x (uint8) for all three", s->layer, u->value[3], u->value[11],
			       u->value[27], SHDW_FMT_UINT8);
		return 0;
	}
	for (unsigned j = 0; j < SHDW_WORDS; j++)
		if (u->loaded[j] != 1) {
			nbg_cpu_refuse(s, "shdw-uniforms-unknown", "a depthwise convolution shader (layer %s) "
				       "whose state buffer loads uniform 0x%05x %d times (once is the layout of "
				       "the corpus's two uint8 depthwise shaders)", s->layer, CPU_UNIFORM_BASE + 4 * j,
				       u->loaded[j]);
			return 0;
		}
	for (size_t k = 0; k < sizeof(shdw_pinned) / sizeof(shdw_pinned[0]); k++) {
		unsigned j = shdw_pinned[k].index;
		if (u->value[j] != shdw_pinned[k].value) {
			nbg_cpu_refuse(s, "shdw-uniforms-unknown", "a depthwise convolution shader (layer %s) "
				       "whose uniform 0x%05x is 0x%08x: its meaning is not established, and "
				       "executed is the value the corpus's two uint8 depthwise shaders hold, 0x%08x",
				       s->layer, CPU_UNIFORM_BASE + 4 * j, u->value[j], shdw_pinned[k].value);
			return 0;
		}
	}
	return 1;
}

/* The shape: the kernel covers the whole input, one output per channel. */
static int shdw_shape(nbg_cpu_step *s, const cpu_uniforms *u, cpu_ref *r)
{
	const uint32_t *v = u->value;
	uint32_t w = v[2] & 0xffff, h = v[2] >> 16, c = v[5], kx = v[17], ky = v[18];
	if (w == 0 || h == 0 || c == 0 || c > SHDW_MAX_CHANNELS || kx != w || ky != h ||
	    v[10] != (c << 16 | (kx * ky)) || v[13] != 1 || v[26] != (1u << 16 | 1) || v[29] != c ||
	    v[34] != c || v[1] < w || v[9] < kx * ky || kx * ky > SHDW_MAX_SIDE) {
		nbg_cpu_refuse(s, "shdw-shape-unsupported", "a depthwise convolution shader (layer %s): "
			       "input 0x%08x (h << 16 | w) x %u, row %u; kernel %ux%u, its image 0x%08x x %u, "
			       "row %u; output 0x%08x x %u; channels %u: executed is a kernel of the input's "
			       "w x h (w x h <= %u) into 1x1 per channel", s->layer, v[2], c, v[1], kx, ky,
			       v[10], v[13], v[9], v[26], v[29], v[34], SHDW_MAX_SIDE);
		return 0;
	}
	if ((uint64_t)c * kx * ky > NBG_CPU_MAX_MACS) {
		nbg_cpu_refuse(s, "work-limit", "a depthwise convolution shader (layer %s) of %llu "
			       "multiply-accumulates, above the limit of %llu", s->layer,
			       (unsigned long long)c * kx * ky, (unsigned long long)NBG_CPU_MAX_MACS);
		return 0;
	}
	uint32_t f = v[32], e = f >> 23 & 0xff;
	if (f >> 31 || e == 0 || e == 0xff) {
		nbg_cpu_refuse(s, "shdw-scale-invalid", "a depthwise convolution shader (layer %s) whose "
			       "scale uniform 0x36080 is 0x%08x, not a positive normal float32", s->layer, f);
		return 0;
	}
	r->rows = c;
	r->kx = kx;
	r->ky = ky;
	r->in_stride = v[1];
	r->in_slice = v[4];
	r->w_row = v[9];
	r->out_slice = v[28];
	r->mantissa = f & 0x7fffff;
	r->exponent = e;
	return 1;
}

/* The kernels: the LCDT entry the STATE patch of the kernel address
 * (uniform 0x36020, source MISC_DYNA_INPUT) names, every channel's codes
 * equal. */
static int shdw_kernels(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const cpu_uniforms *u,
			cpu_ref *r)
{
	uint64_t need = (uint64_t)(r->rows - 1) * r->w_row + (uint64_t)r->kx * r->ky;
	r->codes = nbg_cpu_table_bytes(p, operation, u->at[8], u->value[8], NBG_GRAPH_SRC_MISC_DYNA_INPUT, need);
	if (!r->codes) {
		nbg_cpu_refuse(s, "shdw-kernels-not-located", "a depthwise convolution shader (layer %s) "
			       "whose kernel address (uniform 0x36020) is not relocated by a MISC_DYNA_INPUT "
			       "patch to an LCDT entry holding its %llu bytes (%u rows of %u codes, row %llu)",
			       s->layer, (unsigned long long)need, r->rows, r->kx * r->ky,
			       (unsigned long long)r->w_row);
		return 0;
	}
	/* rows may share one kernel row (w_row 0): the codes read are the
	 * plan's to count, not the entry's size */
	if (!nbg_cpu_plan_spend(p, s, (uint64_t)r->rows * r->kx * r->ky, "comparing its kernel codes"))
		return 0;
	for (uint32_t c = 0; c < r->rows; c++) {
		const uint8_t *row = r->codes + (uint64_t)c * r->w_row;
		for (uint32_t i = 1; i < r->kx * r->ky; i++)
			if (row[i] != row[0]) {
				nbg_cpu_refuse(s, "shdw-kernel-order-unknown", "a depthwise convolution shader "
					       "(layer %s) whose channel %u holds unequal codes (%u at 0, %u at %u): "
					       "the order of a row's codes against the window is not established "
					       "(in the corpus every channel's codes are equal)", s->layer, c,
					       row[0], row[i], i);
				return 0;
			}
	}
	return 1;
}

/* The input zero point is in no uniform: executed where the NN operation
 * that last writes the input image (same memory and address) has
 * out_zero_point 0, as the output's (the uniforms' zeros) is. */
static int shdw_producer_zero(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, long ri, uint64_t base)
{
	if (!nbg_cpu_plan_spend(p, s, operation, "looking back for its input's writer"))
		return 0;
	for (size_t j = operation; j-- > 0;) {
		const cpu_conv *cv = &p->ops[j].u.conv;
		if (p->steps[j].verdict != NBG_CPU_EXECUTE || p->ops[j].kind != CPU_OP_CONV ||
		    cv->out_region != (size_t)ri || cv->out_base != base)
			continue;
		if (cv->out_zp == 0)
			return 1;
		nbg_cpu_refuse(s, "shdw-zero-point-unknown", "a depthwise convolution shader (layer %s) "
			       "whose input, written by op %zu, has zero point %u: no uniform is known to "
			       "carry it, executed is 0", s->layer, j, cv->out_zp);
		return 0;
	}
	nbg_cpu_refuse(s, "shdw-zero-point-unknown", "a depthwise convolution shader (layer %s) whose "
		       "input is written by no executed NN operation before it, so its zero point (in no "
		       "uniform) is not known", s->layer);
	return 0;
}

static void plan_shdw(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation)
{
	cpu_ref *r = &op->u.ref;
	cpu_uniforms u;
	if (!nbg_cpu_load_uniforms(p, s, operation, "depthwise convolution shader", &u))
		return;
	if (nbg_sh_dwconv16_is(&u)) {
		nbg_cpu_shdw16_plan(p, s, op, operation, &u);
		return;
	}
	if (!shdw_uniforms_known(s, &u) || !shdw_shape(s, &u, r) || !shdw_kernels(p, s, operation, &u, r))
		return;
	nbg_cmd_ref in, out;
	long ri, ro;
	uint64_t last;
	if (!nbg_cpu_locate_io(p, s, operation, &u, 24, "depthwise convolution shader", &in, &out, &ri, &ro))
		return;
	if (!nbg_cpu_image_fits(p, (size_t)ri, in.offset, r->kx, r->ky, r->rows, r->in_stride, r->in_slice,
				&last) ||
	    !nbg_cpu_image_fits(p, (size_t)ro, out.offset, 1, 1, r->rows, 1, r->out_slice, &last)) {
		nbg_cpu_refuse(s, "address-outside-memory", "a depthwise convolution shader (layer %s) whose "
			       "input (%ux%ux%u at %s+0x%llx) or output (1x1x%u at %s+0x%llx) does not lie "
			       "inside its memory", s->layer, r->kx, r->ky, r->rows,
			       nbg_graph_source_type_name(in.source_type), (unsigned long long)in.offset,
			       r->rows, nbg_graph_source_type_name(out.source_type),
			       (unsigned long long)out.offset);
		return;
	}
	if (!shdw_producer_zero(p, s, operation, ri, in.offset))
		return;
	r->in_region = (size_t)ri;
	r->out_region = (size_t)ro;
	r->in_base = in.offset;
	r->out_base = out.offset;
	float scale;
	memcpy(&scale, &u.value[32], sizeof(scale));
	snprintf(s->what, sizeof(s->what), "SH depthwise conv %ux%u x %u -> 1x1, uint8, scale %.9g",
		 r->kx % 100000, r->ky % 100000, r->rows % 10000000, (double)scale);
	s->macs = (uint64_t)r->rows * r->kx * r->ky;
	nbg_cpu_ref_executed(s, op, CPU_OP_SHDW, CPU_REF_DWCONV);
}

static void shdw_run_ref(const cpu_ref *r, uint8_t *const *buf)
{
	const uint8_t *in = buf[r->in_region] + r->in_base;
	uint8_t *out = buf[r->out_region] + r->out_base;
	for (uint32_t c = 0; c < r->rows; c++) {
		const uint8_t *w = r->codes + (uint64_t)c * r->w_row;
		const uint8_t *x = in + (uint64_t)c * r->in_slice;
		int64_t acc = 0;
		for (uint32_t y = 0; y < r->ky; y++)
			for (uint32_t i = 0; i < r->kx; i++)
				acc += (int64_t)w[y * r->kx + i] * x[(uint64_t)y * r->in_stride + i];
		out[(uint64_t)c * r->out_slice] = nbg_cpu_requant(acc, r->mantissa, r->exponent, 0, 0, NBG_CPU_ROUND_AWAY);
	}
}

static int shdw_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SH && m->layer == CPU_LAYER_DEPTHWISE_CONV;
}

static void shdw_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	plan_shdw(p, s, op, m->operation);
}

static int shdw_run(const cpu_op *op, uint8_t *const *buf)
{
	shdw_run_ref(&op->u.ref, buf);
	return 0;
}

/* One step per multiply-accumulate. */
static void shdw_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	const cpu_ref *r = &op->u.ref;
	*work = nbg_cpu_mul_sat(nbg_cpu_mul_sat(r->rows, r->kx), r->ky);
	*scratch = 0;
}

const cpu_op_def nbg_cpu_op_shdw = { "sh-dwconv", shdw_match, shdw_plan, shdw_run, shdw_cost };
