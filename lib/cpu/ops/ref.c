/*
 * ops/ref.c - SH (shader) and SW (software) operations: their code is not
 * decoded, so none is executed from it.  One kind is identified by its
 * layer and the I/O its state buffer loads, and runs a reference
 * implementation labelled as such (nbg_cpu_step.reference): the softmax of
 * a Softmax2Layer.  doc/cpu-backend.md ("SH and SW operations") gives each rule
 * below with its evidence.
 *
 * A Softmax2Layer's state buffer (the LOAD_STATE stream its state_id
 * names) loads the shader's uniforms at 0x36000 on:
 *   0x36000..0x3600c  input image: address (patched), row stride in bytes,
 *                     height << 16 | width, format word 0x444041f0 (uint8)
 *   0x36010, 0x36014  input slice bytes, depth
 *   0x36020..0x3602c  output image likewise, format word 0x44404071 (fp16)
 *   0x36030, 0x36034  output slice bytes, depth
 *   0x36040           width (int)
 *   0x36044           width rounded down to a multiple of 4 (int)
 *   0x36048           float32: the input scale times log2(e)
 * That is the row softmax.  The pair softmax (two classes per anchor or
 * per image: the gender and face detection files) loads instead
 *   0x36040           float32: the input scale times log2(e)
 *   0x36044           float32 1.0
 *   0x36048           0
 * and selects the even and the odd values of each 8 (0x36058, 0x3605c:
 * halfwords 0, 2, 4, 6; 0x36098, 0x3609c: 1, 3, 5, 7) where the row softmax
 * reads them in order; it normalises each pair of adjacent values.
 * The softmax needs no zero point: exp((x - max) * scale) cancels it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/half.h"
#include "cpu/cpu_internal.h"

/* Uniform words the softmax reads (0x36000 + 4 * i; loaded more than once:
 * refused). */
#define REF_SOFTMAX_UNIFORMS 19
#define REF_FMT_POOL_UINT8 0x444051c0u
#define REF_FMT_UINT8 0x444041f0u
#define REF_FMT_FP16 0x44404071u
/* Widths above this are refused (work-limit); the corpus's: 7 and 10. */
#define REF_MAX_WIDTH (1u << 20)

static void refuse_layer(nbg_cpu_step *s)
{
	if (s->type == NBG_GRAPH_OP_SW)
		nbg_cpu_refuse(s, "software-not-executed", "an SW (software) operation of layer %s: the "
			       "vendor runtime's CPU code for it is not known and no reference "
			       "implementation is established for that layer", s->layer);
	else
		nbg_cpu_refuse(s, "shader-not-executed", "an SH (shader) operation of layer %s: its code is "
			       "not decoded and no reference implementation is established for that layer",
			       s->layer);
}

/* The softmax's form from its uniforms (the header above): the values per
 * softmax (0: the whole row; 2: each pair) and the word holding the scale
 * times log2(e) (its index in u); -1 when neither layout fits. */
static int softmax_form(const cpu_uniforms *u, uint32_t w, size_t *scale_at)
{
	if (u->value[16] == w && u->value[17] == (w & ~3u)) {
		*scale_at = 18;
		return 0;
	}
	static const size_t sel[] = { 22, 23, 38, 39 };
	static const uint32_t pairs[] = { 0x20000u, 0x60004u, 0x30001u, 0x70005u };
	for (size_t k = 0; k < 4; k++)
		if (u->loaded[sel[k]] != 1 || u->value[sel[k]] != pairs[k])
			return -1;
	if (u->value[17] != 0x3f800000u || u->value[18] != 0 || w % 2)
		return -1;
	*scale_at = 16;
	return 2;
}

static void plan_softmax(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation)
{
	cpu_ref *r = &op->ref;
	cpu_uniforms u;
	if (!nbg_cpu_load_uniforms(p, s, operation, "softmax", &u))
		return;
	for (size_t j = 0; j < REF_SOFTMAX_UNIFORMS; j++)
		if (u.loaded[j] > 1 || (!u.loaded[j] && j != 7 && j != 15 && j != 6 && j != 14)) {
			nbg_cpu_refuse(s, "softmax-uniforms-unknown", "a softmax (layer %s) whose state buffer "
				       "loads uniform 0x%05zx %d times (once is the layout of every softmax "
				       "in the corpus)", s->layer, CPU_UNIFORM_BASE + 4 * j, u.loaded[j]);
			return;
		}
	uint32_t w = u.value[2] & 0xffff, h = u.value[2] >> 16;
	if (u.value[3] != REF_FMT_UINT8 || u.value[11] != REF_FMT_FP16) {
		nbg_cpu_refuse(s, "softmax-format-unsupported", "a softmax (layer %s) with image format words "
			       "0x%08x (input) and 0x%08x (output): executed is 0x%08x (uint8) to 0x%08x "
			       "(fp16)", s->layer, u.value[3], u.value[11], REF_FMT_UINT8, REF_FMT_FP16);
		return;
	}
	size_t at = 0;
	int group = softmax_form(&u, w, &at);
	if (h != 1 || u.value[5] != 1 || u.value[10] != u.value[2] || u.value[13] != 1 || w == 0 ||
	    group < 0 || u.value[1] < w || u.value[9] < 2ull * w) {
		nbg_cpu_refuse(s, "softmax-shape-unsupported", "a softmax (layer %s) over %ux%u depth %u to "
			       "0x%08x depth %u, uniforms 0x36040-8 0x%x 0x%x 0x%x: executed is one row of "
			       "width w, with w, w & ~3, the scale (row) or the scale, 1.0, 0 and an even/odd "
			       "selection (pair)", s->layer, w, h, u.value[5], u.value[10], u.value[13],
			       u.value[16], u.value[17], u.value[18]);
		return;
	}
	if (w > REF_MAX_WIDTH) {
		nbg_cpu_refuse(s, "work-limit", "a softmax (layer %s) over %u values, above the limit of %u",
			       s->layer, w, REF_MAX_WIDTH);
		return;
	}
	float scale = nbg_cpu_f32_of(u.value[at]);
	if (!isfinite(scale) || !(scale > 0)) {
		nbg_cpu_refuse(s, "softmax-scale-invalid", "a softmax (layer %s) whose scale uniform 0x%05zx "
			       "is 0x%08x, not a finite positive float32", s->layer, CPU_UNIFORM_BASE + 4 * at,
			       u.value[at]);
		return;
	}
	nbg_cmd_ref in, out;
	long ri, ro;
	if (!nbg_cpu_locate_io(p, s, operation, &u, 8, "softmax", &in, &out, &ri, &ro))
		return;
	if (out.source_type == NBG_GRAPH_SRC_OUTPUT) {
		const nbg_io *io = nbg_model_output_at(p->m, (size_t)out.index);
		const char *fn = io ? nbg_data_format_name(io->data_format) : NULL;
		if (!fn || strcmp(fn, "FP16")) {
			nbg_cpu_refuse(s, "softmax-format-unsupported", "a softmax (layer %s) writing output %d "
				       "whose record's format is %s, not the FP16 its image format word says",
				       s->layer, out.index, fn ? fn : "unknown");
			return;
		}
	}
	uint64_t last;
	if (!nbg_cpu_image_fits(p, (size_t)ri, in.offset, w, 1, 1, u.value[1], u.value[4], &last) ||
	    !nbg_cpu_image_fits(p, (size_t)ro, out.offset, 2ull * w, 1, 1, u.value[9], u.value[12], &last)) {
		nbg_cpu_refuse(s, "address-outside-memory", "a softmax (layer %s) whose input (%u bytes at "
			       "%s+0x%llx) or output (%u bytes at %s+0x%llx) does not lie inside its memory",
			       s->layer, w, nbg_graph_source_type_name(in.source_type),
			       (unsigned long long)in.offset, 2 * w,
			       nbg_graph_source_type_name(out.source_type), (unsigned long long)out.offset);
		return;
	}
	r->width = w;
	r->group = (uint32_t)group;
	r->scale_log2e = scale;
	r->in_region = (size_t)ri;
	r->out_region = (size_t)ro;
	r->in_base = in.offset;
	r->out_base = out.offset;
	if (group)
		snprintf(s->what, sizeof(s->what), "SH softmax over %u pairs uint8 -> fp16, scale*log2(e) "
			 "%.9g", w / 2, (double)scale);
	else
		snprintf(s->what, sizeof(s->what), "SH softmax %u uint8 -> fp16, scale*log2(e) %.9g", w,
			 (double)scale);
	nbg_cpu_ref_executed(s, op, CPU_REF_SOFTMAX);
}

/* A PoolingLayer2 shader's uniforms (0x88, 0x99, 0xa1 emotion files):
 *   0x36000..0x36014  input image: address (patched), row stride, height << 16
 *                     | width, format word 0x444051c0, slice bytes, depth 1;
 *                     one row per channel of the 4x4 window (width 16)
 *   0x36020           4: the window's side (its square is the width)
 *   0x36024           float32 a: the input scale
 *   0x36028           float32 b: width x input zero point x a
 *   0x3602c           float32 c: 1 / (width x output scale)
 *   0x36030..0x36044  output image likewise: one value per row, width 1
 *   0x360f0           float32 d: the output zero point
 * Each row averages to (sum * a - b) * c + d, rounded to nearest. */
static void plan_pool(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation)
{
	cpu_ref *r = &op->ref;
	cpu_uniforms u;
	if (!nbg_cpu_load_uniforms(p, s, operation, "pooling shader", &u))
		return;
	if (nbg_cpu_shmax_is(&u)) {
		nbg_cpu_plan_shmax(p, s, op, operation, &u);
		return;
	}
	static const unsigned used[] = { 0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 60 };
	for (size_t k = 0; k < sizeof(used) / sizeof(used[0]); k++)
		if (u.loaded[used[k]] != 1) {
			nbg_cpu_refuse(s, "pool-uniforms-unknown", "a pooling shader (layer %s) whose state buffer "
				       "loads uniform 0x%05x %d times (once is the layout of every such shader "
				       "in the corpus)", s->layer, CPU_UNIFORM_BASE + 4 * used[k], u.loaded[used[k]]);
			return;
		}
	uint32_t w = u.value[2] & 0xffff, h = u.value[2] >> 16, side = u.value[8];
	if (u.value[3] != REF_FMT_POOL_UINT8 || u.value[15] != REF_FMT_POOL_UINT8) {
		nbg_cpu_refuse(s, "pool-format-unsupported", "a pooling shader (layer %s) with image format words "
			       "0x%08x (input) and 0x%08x (output): executed is 0x%08x (uint8) to itself",
			       s->layer, u.value[3], u.value[15], REF_FMT_POOL_UINT8);
		return;
	}
	if (w == 0 || h == 0 || side == 0 || side > 0xffff || side * side != w || u.value[5] != 1 ||
	    u.value[17] != 1 || u.value[14] != (h << 16 | 1) || u.value[1] < w || u.value[13] < 1 ||
	    h > REF_MAX_WIDTH || w > REF_MAX_WIDTH) {
		nbg_cpu_refuse(s, "pool-shape-unsupported", "a pooling shader (layer %s) over input 0x%08x "
			       "(height << 16 | width) depth %u, row %u bytes, window side %u, to output 0x%08x "
			       "depth %u, row %u bytes: executed is one row per channel of width side x side "
			       "averaged to one value per row, depth 1", s->layer, u.value[2], u.value[5],
			       u.value[1], side, u.value[14], u.value[17], u.value[13]);
		return;
	}
	float a = nbg_cpu_f32_of(u.value[9]), b = nbg_cpu_f32_of(u.value[10]), c = nbg_cpu_f32_of(u.value[11]),
	      d = nbg_cpu_f32_of(u.value[60]);
	if (!isfinite(a) || !isfinite(b) || !isfinite(c) || !isfinite(d) || !(a > 0) || !(c > 0) ||
	    fabsf(b) > 1e9f || fabsf(a) > 1e9f || fabsf(c) > 1e9f || fabsf(d) > 1e9f) {
		nbg_cpu_refuse(s, "pool-scale-invalid", "a pooling shader (layer %s) whose uniforms 0x36024, "
			       "0x36028, 0x3602c, 0x360f0 are %g, %g, %g, %g: executed are finite values, "
			       "0x36024 and 0x3602c positive", s->layer, (double)a, (double)b, (double)c, (double)d);
		return;
	}
	nbg_cmd_ref in, out;
	long ri, ro;
	if (!nbg_cpu_locate_io(p, s, operation, &u, 12, "pooling shader", &in, &out, &ri, &ro))
		return;
	uint64_t last;
	if (!nbg_cpu_image_fits(p, (size_t)ri, in.offset, w, h, 1, u.value[1], u.value[4], &last) ||
	    !nbg_cpu_image_fits(p, (size_t)ro, out.offset, 1, h, 1, u.value[13], u.value[16], &last)) {
		nbg_cpu_refuse(s, "address-outside-memory", "a pooling shader (layer %s) whose input (%u rows "
			       "of %u bytes at %s+0x%llx) or output (%u bytes at %s+0x%llx) does not lie "
			       "inside its memory", s->layer, h, w, nbg_graph_source_type_name(in.source_type),
			       (unsigned long long)in.offset, h, nbg_graph_source_type_name(out.source_type),
			       (unsigned long long)out.offset);
		return;
	}
	r->width = w;
	r->rows = h;
	r->in_stride = u.value[1];
	r->out_stride = u.value[13];
	r->pool_a = a;
	r->pool_b = b;
	r->pool_c = c;
	r->pool_d = d;
	r->in_region = (size_t)ri;
	r->out_region = (size_t)ro;
	r->in_base = in.offset;
	r->out_base = out.offset;
	snprintf(s->what, sizeof(s->what), "SH average pool %ux%ux%u -> 1x1x%u uint8, zp %.4g -> %.4g",
		 side % 100000, side % 100000, h % 10000000, h % 10000000, (double)(b / (a * (float)w)),
		 (double)d);
	nbg_cpu_ref_executed(s, op, CPU_REF_POOL);
}

void nbg_cpu_plan_ref(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation)
{
	if (s->type == NBG_GRAPH_OP_SH && !strcmp(s->layer, "Softmax2Layer"))
		plan_softmax(p, s, op, operation);
	else if (s->type == NBG_GRAPH_OP_SH && !strcmp(s->layer, "PoolingLayer2"))
		plan_pool(p, s, op, operation);
	else if (s->type == NBG_GRAPH_OP_SH && !strcmp(s->layer, "DepthwiseConvLayer"))
		nbg_cpu_plan_shdw(p, s, op, operation);
	else if (s->type == NBG_GRAPH_OP_SH && !strcmp(s->layer, "TensorAdd"))
		nbg_cpu_plan_shadd(p, s, op, operation);
	else if (s->type == NBG_GRAPH_OP_SH && !strcmp(s->layer, "TensorScale"))
		nbg_cpu_plan_shscale(p, s, op, operation);
	else
		refuse_layer(s);
}

static void run_pool(const cpu_ref *r, uint8_t *const *buf)
{
	const uint8_t *in = buf[r->in_region] + r->in_base;
	uint8_t *out = buf[r->out_region] + r->out_base;
	for (uint32_t y = 0; y < r->rows; y++) {
		uint64_t sum = 0;
		for (uint32_t x = 0; x < r->width; x++)
			sum += in[(uint64_t)y * r->in_stride + x];
		double v = nearbyint(((double)sum * r->pool_a - r->pool_b) * r->pool_c + r->pool_d);
		out[(uint64_t)y * r->out_stride] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
	}
}

/* One softmax over n uint8 values into n fp16 values. */
static void softmax_run(const uint8_t *in, uint8_t *out, uint32_t n, double scale_log2e)
{
	uint8_t mx = 0;
	for (uint32_t x = 0; x < n; x++)
		mx = in[x] > mx ? in[x] : mx;
	double sum = 0;
	for (uint32_t x = 0; x < n; x++)
		sum += exp2(((double)in[x] - mx) * scale_log2e);
	for (uint32_t x = 0; x < n; x++) {
		double v = exp2(((double)in[x] - mx) * scale_log2e) / sum; /* in [0, 1] */
		uint16_t hv = v > 0 ? nbg_fp16_from_double(v) : 0;
		out[2 * x] = (uint8_t)hv;
		out[2 * x + 1] = (uint8_t)(hv >> 8);
	}
}

int nbg_cpu_ref_run(const cpu_ref *r, uint8_t *const *buf)
{
	if (r->kind == CPU_REF_POOL)
		run_pool(r, buf);
	if (r->kind == CPU_REF_DWCONV)
		nbg_cpu_shdw_run(r, buf);
	if (r->kind == CPU_REF_ADD || r->kind == CPU_REF_UPSAMPLE)
		nbg_cpu_shelt_run(r, buf);
	if (r->kind == CPU_REF_MAXPOOL)
		return nbg_cpu_shmax_run(r, buf);
	if (r->kind != CPU_REF_SOFTMAX)
		return 0;
	const uint8_t *in = buf[r->in_region] + r->in_base;
	uint8_t *out = buf[r->out_region] + r->out_base;
	uint32_t g = r->group ? r->group : r->width;
	for (uint32_t x = 0; x + g <= r->width; x += g)
		softmax_run(in + x, out + 2ull * x, g, r->scale_log2e);
	return 0;
}
