/*
 * shader.h - SH, SW and SP operations the CPU backend computes by
 * reference semantics (doc/cpu-backend.md, "SH and SW operations"), as the
 * plan holds them: one struct for every such kind (ops/softmax.c,
 * ops/shpool.c, ops/shdw.c, ops/shelt.c, ops/shmax.c, ops/spmax.c,
 * ops/shconv.c, ops/shf32.c), and
 * the shader uniforms they are read from.  Never installed.
 */
#ifndef NBG_CPU_OPS_SHADER_H
#define NBG_CPU_OPS_SHADER_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/graph/uniforms.h"
#include "cpu/hidden.h"

/* What a cpu_ref computes. */
enum cpu_ref_kind { CPU_REF_NONE = 0, CPU_REF_SOFTMAX, CPU_REF_POOL, CPU_REF_DWCONV, CPU_REF_ADD,
		    CPU_REF_UPSAMPLE, CPU_REF_MAXPOOL, CPU_REF_PAD, CPU_REF_IM2COL,
		    CPU_REF_GEMM, CPU_REF_DWCONV16, CPU_REF_MEAN, CPU_REF_SUB,
		    CPU_REF_RELU, CPU_REF_RESIZE, CPU_REF_GRAY,
		    CPU_REF_SUBC, CPU_REF_MULC, CPU_REF_PRELU,
		    CPU_REF_F16MUL, CPU_REF_F16DIV, CPU_REF_SPMUL, CPU_REF_MULU8, CPU_REF_TANH };

/* CPU_REF_SOFTMAX (ops/softmax.c, ops/spmax.c): a softmax over width uint8
 * values (row 0 of the input image) into width fp16 values,
 * exp2((x - max) * scale_log2e) normalised, over the whole row or over each
 * run of group values (group > 0: the pair softmax). */
typedef struct cpu_ref {
	int kind;                       /* enum cpu_ref_kind */
	uint32_t width;
	uint32_t group;                 /* CPU_REF_SOFTMAX: values per softmax; 0: the whole width */
	double scale_log2e;             /* the input scale times log2(e): the SH softmax's float32
					 * uniform, the SP softmax's scale times log2(e) in double */
	uint8_t in_flip;                /* CPU_REF_SOFTMAX, CPU_REF_MAXPOOL: 0x80 for int8 input, whose
					 * bytes ^ 0x80 are the values plus 128 (a shift the softmax
					 * cancels, an order the maximum keeps); else 0 */
	/* CPU_REF_POOL (ops/shpool.c): rows rows of width uint8 each averaged
	 * into one uint8, ((sum * pool_a - pool_b) * pool_c + pool_d) rounded.
	 * CPU_REF_MEAN (ops/spmax.c): a width x rows x kx image of fp16 (rows
	 * in_stride, slices in_slice apart) summed over x, y or z (group 0, 1,
	 * 2) and divided by ky (the count: a mean; 1: a sum) into fp16 (rows
	 * out_stride, slices out_slice apart); in_flip 1: the input holds int16
	 * codes of fraction length exponent. */
	uint32_t rows, in_stride, out_stride;
	float pool_a, pool_b, pool_c, pool_d;
	/* CPU_REF_DWCONV (ops/shdw.c): per channel c < rows, the kx x ky input
	 * window at in_base + c x in_slice (rows in_stride apart) times the row
	 * of codes at codes + c x w_row, requantized with the float32 fields
	 * mantissa and exponent, written at out_base + c x out_slice. */
	uint32_t kx, ky, mantissa, exponent;
	uint64_t in_slice, w_row, out_slice;
	/* CPU_REF_MAXPOOL (ops/shmax.c): kx channels of rows x width pixels
	 * (in_stride, in_slice apart) into mp.out_h x mp.out_w pixels written
	 * at out_stride, out_slice, each the max of the mp.side x mp.side window
	 * at (x mp.stride - mp.pad, y mp.stride - mp.pad), clipped to the image. */
	struct {
		uint32_t side, stride, pad, out_w, out_h;
		float mean_scale;       /* > 0: the window's sum times it, rounded (ops/shmax.c,
					 * nbg_cpu_plan_shavg), not the max */
	} mp;
	/* CPU_REF_PAD (ops/shpad.c): rows rows of width bytes at elt's image 2,
	 * the first elt.y copied from image 0, the others 0; kx the element
	 * size and group the NBG data format of the images (for a dump). */
	const uint8_t *codes;           /* into the model's bytes (an LCDT entry) */
	size_t in_region, out_region;   /* into the plan's regions */
	uint64_t in_base, out_base;
	/* CPU_REF_RELU, CPU_REF_MAXPOOL of ops/shf32.c: float32 images 0 (input)
	 * and 2 (output) of elt, the output elt.x values x elt.y rows; RELU: out
	 * = in > 0 ? in : +0, one shape; MAXPOOL: out[y][x] = the largest of
	 * in[2y + j][2x + i], i, j < 2.
	 * CPU_REF_ADD, CPU_REF_UPSAMPLE (ops/shelt.c): images x x y x z of
	 * uint8, image i at region[i] + base[i] with its row and slice strides
	 * (0, 1: the inputs; 2: the output).  ADD: out = round((in0 - zp0) x a
	 * + (in1 - zp1) x b + zpo); UPSAMPLE: out[z][2y + j][2x + i] =
	 * in0[z][y][x], x, y, z the input's.  in1_f16: input 1 holds IEEE half
	 * values (2 bytes each, zp1 0), read as float32.  CPU_REF_SUB
	 * (ops/spmax.c): out = in0 x a - in1[x] x b, in0 x x y x z fp16 (zp0
	 * 0) or int16 codes (zp0 1), in1 x fp16 values, out fp16 (zpo 0) or
	 * int16 (zpo 1); rows and slices 2 bytes an element.  CPU_REF_SPMUL: the
	 * same with out = in0 x a x in1[x or y (group 1)] x b.  CPU_REF_F16MUL,
	 * CPU_REF_F16DIV (ops/shelt.c): out = in0 x in1 or in0 / in1 in fp16
	 * over x x y x z, an input's row or slice stride 0 along an axis it
	 * broadcasts, its x step in bytes zp0 (in0), zp1 (in1): 2, or 0; group
	 * 1 + k: input k is a constant of the model at codes (no region). */
	struct {
		uint32_t x, y, z;
		uint64_t row[3], slice[3], base[3];
		size_t region[3];
		float a, b;
		uint32_t zp0, zp1, zpo;
		int in1_f16;
		int s8;                 /* int8 images (ADD: zero points 0, a and b powers of two; UPSAMPLE) */
	} elt;
	/* CPU_REF_GRAY, CPU_REF_SUBC, CPU_REF_MULC, CPU_REF_PRELU (ops/shgray.c,
	 * ops/shsub.c, ops/shmul.c, ops/shprelu.c): elt's image 0 into image 2,
	 * x values a row.  GRAY: uint8 into fp16, v itself.  SUBC: fp16 into
	 * int8, v x elt.a + cst.k x elt.b (cst.k the constant half).  MULC:
	 * int8 into int8, v x cst.c / 2^cst.shift.  PRELU: int8 into int8,
	 * (v >= 0 ? v : v x alpha[y]) x cst.c / 2^cst.shift, alpha the y
	 * halves at codes.  Each rounded half to even and saturated (int8).  MULU8
	 * (ops/shmul.c): uint8 images 0 and 1 into image 2, in0 x in1 x elt.a,
	 * rounded half to even, saturated to 255.  TANH (ops/shtanh.c): uint8
	 * into fp16, tanh(v x elt.a + elt.b) rounded once to a half. */
	struct {
		float k;
		int32_t c;
		uint32_t shift;
	} cst;
	/* CPU_REF_IM2COL, CPU_REF_GEMM (ops/shconv.c): an fp16 convolution as two
	 * shaders, images 0 (input) and 2 (output) of elt.  IM2COL: the c planes
	 * of w x h at image 0 into image 2's p = ow x oh rows of k = c x kx x ky
	 * values, row oy x ow + ox holding in[ci][oy sy - py + j][ox sx - px + i]
	 * at (ci ky + j) kx + i, 0 outside the planes (and past c kx ky, in
	 * the fp32 rows of k values).  GEMM: row o < n of image 2 (p values) =
	 * fp16(bias[o] + sum over k of codes[o][k] x in[row][k]) (fp32: the
	 * float32 sum), rows of k at image 0, codes' rows w_row bytes apart,
	 * bias n float32. */
	struct {
		uint32_t w, h, c, kx, ky, sx, sy, px, py, ow, p, k, n;
		uint32_t esize;         /* bytes a value: 2 (fp16), 4 (float32: the fp32 pair,
					 * whose product stores float32 sums unrounded) */
		/* CPU_REF_DWCONV16 (ops/shdw16.c): channel ci's ow x p output plane
		 * at image 2 = fp16(sum over j, i of codes[ci][j kx + i] x
		 * in[ci][y sy - py + j][x sx - px + i] + bias[ci]), 0 outside */
		const uint8_t *bias;    /* into the model's bytes (a COEF_DATA_TABLE entry) */
	} conv;
} cpu_ref;

/* An SH operation's shader uniforms (analysis/graph/uniforms.h): the words its
 * state buffer (the LOAD_STATE stream its state_id names) loads at 0x36000 +
 * 4 i, i < CPU_UNIFORMS, with where each value lies in the buffer and how
 * often it is loaded (nbg_cpu_load_uniforms, cpu_internal.h). */
#define CPU_UNIFORMS NBG_SH_UNIFORMS
#define CPU_UNIFORM_BASE NBG_SH_UNIFORM_BASE
#define CPU_MAX_STATE_BYTES NBG_SH_MAX_STATE_BYTES
typedef nbg_sh_uniforms cpu_uniforms; /* analysis/graph/uniforms.h */

/* The fp16 shaders' helpers (ops/shconv.c; their uniforms are read by
 * analysis/graph/uniforms.h): nbg_cpu_f16_store writes v rounded to fp16,
 * below the normal range +0; nbg_cpu_f16_ld reads a little-endian half. */
CPU_HIDDEN void nbg_cpu_f16_store(uint8_t *d, float v);
/* The geometry both fp16 convolution planners keep (ops/shconv.c): g's
 * sizes, kernel, stride and padding into r->conv, its strides into images
 * 0 and 2 of r->elt. */
CPU_HIDDEN void nbg_cpu_f16_geometry(cpu_ref *r, const nbg_sh_conv *g);
CPU_HIDDEN uint16_t nbg_cpu_f16_ld(const uint8_t *b);

/* Image k (0 input, 2 output) of an int16 image shader at uniform j into
 * r->elt (ops/shpad.c; also ops/shresize.c); *last its last byte. */
struct nbg_cpu_plan;
struct nbg_cpu_step;
CPU_HIDDEN int nbg_cpu_sh_image(struct nbg_cpu_plan *p, struct nbg_cpu_step *s, size_t operation,
				const cpu_uniforms *u, unsigned j, cpu_ref *r, int k, const nbg_sh_image *im,
				uint64_t *last);

/* The softmax's run (ops/softmax.c), shared by the SP softmax. */
CPU_HIDDEN void nbg_cpu_softmax_run(const cpu_ref *r, uint8_t *const *buf, int flush);

#endif
