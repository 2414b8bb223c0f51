/*
 * ops/shpool.c - the pooling shader of a PoolingLayer2, an SH operation
 * run by reference semantics (doc/cpu-backend.md, "SH and SW operations"):
 * the average pool whose uniforms are below, or the 5x5 max pool whose
 * image format the uniforms show (ops/shmax.c, planned from here).
 */
#include <math.h>
#include <stdio.h>

#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"
#include "cpu/quant.h"

#define REF_FMT_POOL_UINT8 0x444051c0u
/* Sizes above this are refused. */
#define REF_MAX_WIDTH (1u << 20)

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
	cpu_ref *r = &op->u.ref;
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
	if (u.value[5] > 1 && u.value[17] == u.value[5]) {
		/* the face-age network's average poolings by windows: one image
		 * of several channels, the window words after the output image */
		nbg_cpu_plan_shavg(p, s, op, operation, &u);
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
	nbg_cpu_ref_executed(s, op, CPU_OP_SHPOOL, CPU_REF_POOL);
}


static void run_pool(const cpu_ref *r, uint8_t *const *buf)
{
	const uint8_t *in = buf[r->in_region] + r->in_base;
	uint8_t *out = buf[r->out_region] + r->out_base;
	for (uint32_t y = 0; y < r->rows; y++) {
		uint64_t sum = 0;
		for (uint32_t x = 0; x < r->width; x++)
			sum += in[(uint64_t)y * r->in_stride + x];
		double v = nbg_cpu_round_half_even(((double)sum * r->pool_a - r->pool_b) * r->pool_c + r->pool_d);
		out[(uint64_t)y * r->out_stride] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
	}
}


static int shpool_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SH && m->layer == CPU_LAYER_POOLING2;
}

static void shpool_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	plan_pool(p, s, op, m->operation);
}

static int shpool_run(const cpu_op *op, uint8_t *const *buf)
{
	run_pool(&op->u.ref, buf);
	return 0;
}

/* One step per value read. */
static void shpool_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	*work = nbg_cpu_mul_sat(op->u.ref.rows, op->u.ref.width);
	*scratch = 0;
}

const cpu_op_def nbg_cpu_op_shpool = { "sh-pool", shpool_match, shpool_plan, shpool_run, shpool_cost };
