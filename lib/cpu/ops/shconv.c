/*
 * ops/shconv.c - the convolution of a ConvolutionLayer compiled as two SH
 * operations (the A733 fp16 files; the fp32 pair of the TIM-VX fp32 file):
 * an im2col shader that lays every output pixel's window out as one row of
 * a matrix, then a matrix-product shader that multiplies those rows by the
 * kernels and adds the bias.  Both computed by reference semantics from
 * their uniforms and I/O, not from the shaders' code
 * (nbg_cpu_step.reference); doc/cpu-backend.md ("The fp16 convolution
 * shaders", "The fp32 shaders") gives each rule below with its evidence.
 *
 * The uniforms (their layout in analysis/graph/uniforms_conv.c) are read
 * by nbg_sh_im2col and nbg_sh_product, the reading the network view shares;
 * anything else is refused with a shconv-* id.
 */
#include <stdio.h>
#include <string.h>

#include "common/half.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"

void nbg_cpu_f16_geometry(cpu_ref *r, const nbg_sh_conv *g)
{
	r->conv.w = g->w;
	r->conv.h = g->h;
	r->conv.c = g->c;
	r->conv.kx = g->kx;
	r->conv.ky = g->ky;
	r->conv.sx = g->sx;
	r->conv.sy = g->sy;
	r->conv.px = g->px;
	r->conv.py = g->py;
	r->conv.ow = g->ow;
	r->conv.esize = g->esize;
	r->elt.row[0] = g->in_row;
	r->elt.slice[0] = g->in_slice;
	r->elt.row[2] = g->out_row;
	r->elt.slice[2] = g->out_slice;
}

/* The im2col shader's uniforms into r; 0 with the step refused. */
static int shconv_im2col_uniforms(nbg_cpu_step *s, const cpu_uniforms *u, cpu_ref *r)
{
	const uint32_t *v = u->value;
	nbg_sh_conv g;
	enum nbg_sh_conv_status st = nbg_sh_im2col(u, &g);
	if (st == NBG_SHC_LAYOUT) {
		nbg_cpu_refuse(s, "shconv-uniforms-unknown", "a ConvolutionLayer SH operation (layer %s) "
			       "loading no uniform 0x36090, whose uniforms are not the fp16 im2col shader's "
			       "layout (0x36000..0x3605c and 0x36070..0x3608c loaded once, two fp16 images, "
			       "0x36070..0x3608c zero) nor the fp32 one's (0x36000..0x3606c loaded once, two "
			       "0x44405002 images, the rest zero): format words 0x%08x, 0x%08x, 0x%08x", s->layer,
			       v[3], v[11], v[19]);
		return 0;
	}
	if (st != NBG_SHC_OK && g.esize == 4) {
		nbg_cpu_refuse(s, "shconv-shape-unsupported", "an fp32 im2col shader (layer %s): input %ux%ux%u, "
			       "output %u values x %u x %u, uniforms 0x36020..0x3603c %u, %u, %u, %u, %u, %u, %u, %u, "
			       "0x36060..0x36068 %u, %u, %u: executed is 1, 1, 1, 1, 3, 3, 1, 1 (a 3x3 kernel, "
			       "stride 1, padding 1: what other values mean is not established), an output of the "
			       "input's size, c 3 x 3 values a row rounded up to 4, ow, oh, c", s->layer, g.w, g.h,
			       g.c, g.k, g.ow, g.oh, v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15], v[24],
			       v[25], v[26]);
		return 0;
	}
	if (st != NBG_SHC_OK) {
		nbg_cpu_refuse(s, "shconv-shape-unsupported", "an im2col shader (layer %s): input %ux%ux%u, "
			       "output %u values x %u rows, uniforms 0x36040..0x3605c %u, %u, %u, %u, %u, %u, %u, %u: "
			       "executed is kx x ky, ow, stride, stride, pad, pad, kx, ky with equal pairs (which "
			       "of a pair is x is not established), c kx ky values a row, ow x oh rows",
			       s->layer, g.w, g.h, g.c, g.k, g.p, v[16], v[17], v[18], v[19], v[20], v[21], v[22], v[23]);
		return 0;
	}
	nbg_cpu_f16_geometry(r, &g);
	r->conv.p = g.p;
	r->conv.k = g.k;
	return 1;
}

/* The product shader's uniforms, kernels and bias into r; 0 with the step
 * refused. */
static int shconv_gemm_uniforms(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const cpu_uniforms *u,
				cpu_ref *r)
{
	const uint32_t *v = u->value;
	nbg_sh_conv g;
	enum nbg_sh_conv_status st = nbg_sh_product(u, &g);
	if (st == NBG_SHC_LAYOUT) {
		nbg_cpu_refuse(s, "shconv-uniforms-unknown", "a ConvolutionLayer SH operation (layer %s) "
			       "loading uniform 0x36090, whose uniforms are not the fp16 matrix-product shader's "
			       "layout (0x36000..0x36068 and 0x36070..0x360d4 loaded once, fp16 rows, kernels "
			       "and output, a float32 bias, 0x36090..0x360d4 the corpus's constants) nor the "
			       "fp32 one's (0x36000..0x36064 and 0x36070..0x36098 loaded once, 0x32101034 "
			       "images, 0x36090..0x36098 1, -3, -3, the rest zero): format words 0x%08x, 0x%08x, "
			       "0x%08x, 0x%08x, uniforms 0x36090..0x36098 0x%x, 0x%x, 0x%x", s->layer, v[3], v[11],
			       v[19], v[31], v[36], v[37], v[38]);
		return 0;
	}
	if (st != NBG_SHC_OK && g.esize == 4) {
		nbg_cpu_refuse(s, "shconv-shape-unsupported", "an fp32 matrix-product shader (layer %s): rows "
			       "%u values wide x %u, kernels %u x %u, bias %u x %u (four values each), output %u "
			       "x %u, uniform 0x36060 %u: executed is k-wide rows and kernels, n / 4 rounded up, "
			       "p / 4 x n output, 0x36060 k", s->layer, g.k, g.p, (v[10] & 0xffff) * 4, v[10] >> 16,
			       v[18] & 0xffff, v[18] >> 16, v[30] & 0xffff, v[30] >> 16, v[24]);
		return 0;
	}
	if (st != NBG_SHC_OK) {
		nbg_cpu_refuse(s, "shconv-shape-unsupported", "a matrix-product shader (layer %s): rows %u "
			       "wide x %u, kernels %u x %u, bias %u x %u, output %u x %u, uniform 0x36064 %u: "
			       "executed is k-wide rows and kernels, n biases, p x n output, 0x36064 k rounded "
			       "up to 8", s->layer, g.k, g.p, v[10] & 0xffff, v[10] >> 16, v[18] & 0xffff,
			       v[18] >> 16, v[30] & 0xffff, v[30] >> 16, v[25]);
		return 0;
	}
	uint32_t k = g.k, n = g.n;
	uint64_t need = (uint64_t)(n - 1) * g.w_row + (uint64_t)g.esize * k;
	r->codes = nbg_cpu_table_bytes(p, operation, u->at[8], v[8], NBG_GRAPH_SRC_MISC_DYNA_GENERIC, need);
	r->conv.bias = nbg_cpu_table_bytes(p, operation, u->at[16], v[16], NBG_GRAPH_SRC_MISC_DYNA_GENERIC,
					   4ull * n);
	if (!r->codes || !r->conv.bias) {
		nbg_cpu_refuse(s, "shconv-kernels-not-located", "a matrix-product shader (layer %s) whose %s "
			       "address (uniform 0x%05x) is not relocated by a MISC_DYNA_GENERIC patch to a "
			       "COEF_DATA_TABLE entry holding its %llu bytes", s->layer,
			       r->codes ? "bias" : "kernel", r->codes ? 0x36040u : 0x36020u,
			       (unsigned long long)(r->codes ? 4ull * n : need));
		return 0;
	}
	r->conv.k = k;
	r->conv.p = g.p;
	r->conv.n = n;
	r->conv.esize = g.esize;
	r->w_row = g.w_row;
	r->elt.row[0] = g.in_row;
	r->elt.row[2] = g.out_row;
	return 1;
}

static void plan_shconv(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation)
{
	cpu_ref *r = &op->u.ref;
	cpu_uniforms u;
	if (!nbg_cpu_load_uniforms(p, s, operation, "convolution shader", &u))
		return;
	int gemm = nbg_sh_conv_is_product(&u);
	if (gemm ? !shconv_gemm_uniforms(p, s, operation, &u, r) : !shconv_im2col_uniforms(s, &u, r))
		return;
	nbg_cmd_ref in, out;
	long ri, ro;
	uint64_t last;
	const char *what = gemm ? "matrix-product shader" : "im2col shader";
	if (!nbg_cpu_locate_io(p, s, operation, &u, gemm ? 28 : r->conv.esize == 4 ? 16 : 8, what, &in, &out, &ri, &ro))
		return;
	uint64_t macs = (uint64_t)r->conv.p * r->conv.k * (gemm ? r->conv.n : 1), e = r->conv.esize;
	int fits = gemm ? nbg_cpu_image_fits(p, (size_t)ri, in.offset, e * r->conv.k, r->conv.p, 1,
					     r->elt.row[0], 0, &last) &&
			  nbg_cpu_image_fits(p, (size_t)ro, out.offset, e * r->conv.p, r->conv.n, 1,
					     r->elt.row[2], 0, &last)
			: nbg_cpu_image_fits(p, (size_t)ri, in.offset, e * r->conv.w, r->conv.h, r->conv.c,
					     r->elt.row[0], r->elt.slice[0], &last) &&
			  nbg_cpu_image_fits(p, (size_t)ro, out.offset, e * r->conv.k, r->conv.p, 1,
					     r->elt.row[2], 0, &last);
	if (!fits) {
		nbg_cpu_refuse(s, "address-outside-memory", "an %s (layer %s) whose input at %s+0x%llx or "
			       "output at %s+0x%llx does not lie inside its memory", what, s->layer,
			       nbg_graph_source_type_name(in.source_type), (unsigned long long)in.offset,
			       nbg_graph_source_type_name(out.source_type), (unsigned long long)out.offset);
		return;
	}
	if (macs > NBG_CPU_MAX_MACS) {
		nbg_cpu_refuse(s, "work-limit", "an %s (layer %s) of %llu steps, above the limit of %llu", what,
			       s->layer, (unsigned long long)macs, (unsigned long long)NBG_CPU_MAX_MACS);
		return;
	}
	r->elt.region[0] = (size_t)ri;
	r->elt.region[2] = (size_t)ro;
	r->elt.base[0] = in.offset;
	r->elt.base[2] = out.offset;
	const char *type = e == 4 ? "fp32" : "fp16";
	if (gemm)
		snprintf(s->what, sizeof(s->what), "SH matrix product %u x %u by %u x %u + bias, %s", r->conv.p,
			 r->conv.k, r->conv.n, r->conv.k, type);
	else
		snprintf(s->what, sizeof(s->what), "SH im2col %ux%ux%u, kernel %ux%u, stride %u, pad %u -> "
			 "%u x %u, %s", r->conv.w, r->conv.h, r->conv.c, r->conv.kx, r->conv.ky, r->conv.sx,
			 r->conv.px, r->conv.p, r->conv.k, type);
	s->macs = gemm ? macs : 0;
	nbg_cpu_ref_executed(s, op, CPU_OP_SHCONV, gemm ? CPU_REF_GEMM : CPU_REF_IM2COL);
}

uint16_t nbg_cpu_f16_ld(const uint8_t *b)
{
	return (uint16_t)(b[0] | b[1] << 8);
}

/* Values of esize bytes copied; a row's values past the windows' (the
 * fp32 rows rounded up to 4) written as 0. */
static void shconv_run_im2col(const cpu_ref *r, uint8_t *const *buf)
{
	const uint8_t *in = buf[r->elt.region[0]] + r->elt.base[0];
	uint8_t *out = buf[r->elt.region[2]] + r->elt.base[2];
	uint32_t es = r->conv.esize;
	for (uint32_t q = 0; q < r->conv.p; q++) {
		uint8_t *o = out + q * r->elt.row[2], *end = o + (uint64_t)es * r->conv.k;
		int64_t y0 = (int64_t)(q / r->conv.ow) * r->conv.sy - r->conv.py;
		int64_t x0 = (int64_t)(q % r->conv.ow) * r->conv.sx - r->conv.px;
		for (uint32_t ci = 0; ci < r->conv.c; ci++)
			for (uint32_t j = 0; j < r->conv.ky; j++)
				for (uint32_t i = 0; i < r->conv.kx; i++, o += es) {
					int64_t y = y0 + j, x = x0 + i;
					if (y < 0 || x < 0 || y >= r->conv.h || x >= r->conv.w) {
						memset(o, 0, es);
						continue;
					}
					memcpy(o, in + ci * r->elt.slice[0] + (uint64_t)y * r->elt.row[0] + es * (uint64_t)x,
					       es);
				}
		memset(o, 0, (size_t)(end - o));
	}
}

void nbg_cpu_f16_store(uint8_t *d, float v)
{
	uint16_t h = nbg_fp16_from_float(v);
	if (!(h & 0x7c00))
		h = 0;
	d[0] = (uint8_t)h;
	d[1] = (uint8_t)(h >> 8);
}

/* A value of es bytes (fp16 or float32) as float32. */
static float shconv_value(const uint8_t *b, uint32_t es)
{
	float v;
	if (es == 2)
		return nbg_fp16_to_float(nbg_cpu_f16_ld(b));
	memcpy(&v, b, sizeof(v));
	return v;
}

/* float32 products summed in k order, then the bias; fp16: rounded once to
 * fp16, results below fp16's normal range written as +0, as the softmax's
 * are; fp32: stored as float32. */
static void shconv_run_gemm(const cpu_ref *r, uint8_t *const *buf)
{
	const uint8_t *in = buf[r->elt.region[0]] + r->elt.base[0];
	uint8_t *out = buf[r->elt.region[2]] + r->elt.base[2];
	uint32_t es = r->conv.esize;
	for (uint32_t o = 0; o < r->conv.n; o++) {
		const uint8_t *w = r->codes + o * r->w_row;
		float bias;
		memcpy(&bias, r->conv.bias + 4ull * o, sizeof(bias));
		for (uint32_t q = 0; q < r->conv.p; q++) {
			const uint8_t *x = in + q * r->elt.row[0];
			uint8_t *d = out + o * r->elt.row[2] + (uint64_t)es * q;
			float acc = 0;
			for (uint32_t k = 0; k < r->conv.k; k++)
				acc += shconv_value(w + es * k, es) * shconv_value(x + es * k, es);
			acc += bias;
			if (es == 2)
				nbg_cpu_f16_store(d, acc);
			else
				memcpy(d, &acc, sizeof(acc));
		}
	}
}

static int shconv_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SH && m->layer == CPU_LAYER_CONVOLUTION;
}

static void shconv_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	plan_shconv(p, s, op, m->operation);
}

static int shconv_run(const cpu_op *op, uint8_t *const *buf)
{
	if (op->u.ref.kind == CPU_REF_GEMM)
		shconv_run_gemm(&op->u.ref, buf);
	else
		shconv_run_im2col(&op->u.ref, buf);
	return 0;
}

/* One step per value written (im2col) or per multiply-accumulate. */
static void shconv_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	const cpu_ref *r = &op->u.ref;
	*work = nbg_cpu_mul_sat(nbg_cpu_mul_sat(r->conv.p, r->conv.k), r->kind == CPU_REF_GEMM ? r->conv.n : 1);
	*scratch = 0;
}

const cpu_op_def nbg_cpu_op_shconv = { "sh-conv", shconv_match, shconv_plan, shconv_run, shconv_cost };
