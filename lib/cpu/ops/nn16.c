/*
 * ops/nn16.c - NN-engine operations on int16 data (dynamic fixed point:
 * value = code x 2^-fl, no zero point), the A733 files of target
 * 0x1000003b: convolutions and depthwise convolutions (with ReLU, 2x2 max
 * pooling, a stride, or a fused addition), the max pooling the compiler
 * writes as a 1x1 depthwise command with no kernel stream, and the NT
 * transposes (of any element size) those files end with.  Its plan reads
 * every field and checks every address range before any run; its run
 * computes in 64-bit sums.  doc/cpu-backend.md ("int16 data") gives each
 * rule with its evidence.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/graph/commands_lib.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/nn16.h"
#include "cpu/quant.h"
#include "cpu/ops/conv.h"
#include "cpu/ring.h"

#define NN16_TYPE 4u                 /* the int16 data-type code */
#define NN16_TARGET 0x1000003bu      /* the one target whose int16 commands are established */
#define NN16_MAX_TAPS (1u << 24)     /* taps per sum: |sum| < 2^47 + 2^46 + 2^24 x 2^30 < 2^55 */
#define NN16_MAX_ELEMENT 65536u      /* an NT transpose's element: at most a row of 32,768 halves */

/* The words of a 192-byte NN command of target 0x1000003b that carry a
 * fused addition (doc/cpu-backend.md, "int16 data"). */
enum {
	ADD16_W_SCALE = 23,     /* bits 2-31: bits 0-29 of the second image's scale, float32 */
	ADD16_W_SCALE_HI = 27,  /* bit 31: its bit 30 */
	ADD16_W_MAX = 29,       /* float32: the upper bound of the convolution's term */
	ADD16_W_MIN = 30,       /* float32: the lower bound */
	ADD16_W_STRIDES = 32,   /* bits 0-15: its row stride; 16-31: its slice stride (bytes) */
	ADD16_W_BYTES = 33,     /* the second image's bytes / 32 */
	ADD16_W_ADDRESS = 34,   /* the second image's address, relocated (not transformed) */
	ADD16_W_END = 35,       /* bits 0-25: the second image's end, relocated */
	ADD16_W_FLAGS = 31,     /* bit 16: ReLU after the addition */
	ADD16_WORDS = 36
};
#define ADD16_RELU_BIT 16
#define ADD16_NO_BUFFER 0x3ffffffu   /* word 35 bits 0-25: no buffer (the circular buffers' "none") */

static int16_t rd16(const uint8_t *buf, uint64_t a, uint64_t lo, uint64_t size)
{
	return (int16_t)(uint16_t)(buf[nbg_cpu_ring_at(a, lo, size)] |
				   (uint16_t)buf[nbg_cpu_ring_at(a + 1, lo, size)] << 8);
}

static void wr16(uint8_t *buf, uint64_t a, uint64_t lo, uint64_t size, int16_t v)
{
	buf[nbg_cpu_ring_at(a, lo, size)] = (uint8_t)((uint16_t)v & 0xffu);
	buf[nbg_cpu_ring_at(a + 1, lo, size)] = (uint8_t)((uint16_t)v >> 8);
}

/* ------------------------------------------------------------------- run */

int16_t nbg_cpu_nn16_add(const cpu_add *a, int64_t acc, int16_t b, int relu, int even)
{
	if ((relu & NBG_CPU_NN16_RELU_TERM) && acc < 0)
		acc = 0;
	int64_t q = nbg_cpu_add_sum(acc, a, b, 1u << 16, even);
	if ((relu & NBG_CPU_NN16_RELU_SUM) && q < 0)
		q = 0;
	return (int16_t)(q < -32768 ? -32768 : q > 32767 ? 32767 : q);
}

static int16_t requant16(const cpu_nn16 *n, int64_t acc)
{
	int64_t q = nbg_cpu_requant_q(acc, n->mantissa, n->exponent, n->even);
	if (n->relu && q < 0)
		q = 0;
	return (int16_t)(q < -32768 ? -32768 : q > 32767 ? 32767 : q);
}

/* Entry i of a convolution's table (float32 little-endian). */
static double nn16_entry(const cpu_nn16 *n, uint32_t i)
{
	const uint8_t *b = n->lut + 4u * i;
	return (double)nbg_cpu_f32_of((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
}

/* A convolution's table read at its scaled sum v = acc x 2^(exponent -
 * 127) (doc/cpu-backend.md, "int16 data"): 8 entries a binade, entry
 * 8 (floor(log2 |v|) - 1) + the 3 bits after the leading one (v = 2^k:
 * entry 8 (k - 1)), plus 512 for a negative v; then linearly towards the
 * next entry by the bits below them.  |v| below 2 reads entry 0 (512),
 * the largest binade's last entry every larger |v|.  The value rounded
 * half away from zero (not by rounding_mode, which governs the
 * requantization a table replaces here: inferred) and saturated to
 * int16.  v is exact in a double: the scale a power of two, the sum
 * below 2^53. */
static int16_t nn16_table(const cpu_nn16 *n, int64_t acc)
{
	double v = ldexp((double)acc, (int)n->exponent - 127), m = fabs(v), rest = 0;
	uint32_t base = v < 0 ? 512u : 0u, i = 0;
	if (m >= 2.0) {
		int e = 0;
		double f = frexp(m, &e) * 16.0 - 8.0; /* m = (8 + f) / 8 x 2^(e - 1), f in [0, 8) */
		uint32_t top = (uint32_t)f;
		i = 8u * (uint32_t)(e - 2) + top;
		rest = f - top;
		if (i > 255u)
			i = 255u, rest = 0;
	}
	double t = nn16_entry(n, base + i);
	if (rest > 0 && i < 255u)
		t += (nn16_entry(n, base + i + 1) - t) * rest;
	t = nbg_cpu_round_half_away(t);
	return (int16_t)(t < -32768.0 ? -32768.0 : t > 32767.0 ? 32767.0 : t);
}

/* The input image as values [z][y][x], read at the strides, pixel step
 * and circular buffer the plan set; NULL when out of memory. */
static int32_t *nn16_gather(const cpu_nn16 *n, const uint8_t *in)
{
	int32_t *g = malloc((size_t)n->in_x * n->in_y * n->in_z * sizeof(*g));
	int32_t *d = g;
	for (uint32_t z = 0; g && z < n->in_z; z++)
		for (uint32_t y = 0; y < n->in_y; y++) {
			uint64_t a = n->in_base + nbg_cpu_nn16_chan(n->in_slice, n->in_grouped, z) + y * n->in_row;
			for (uint32_t x = 0; x < n->in_x; x++)
				*d++ = rd16(in, a + x * n->in_xstep, n->in_ring_lo, n->in_ring_size);
		}
	return g;
}

static int16_t nn16_code(const cpu_nn16 *n, size_t t)
{
	return (int16_t)(uint16_t)(n->codes[2 * t] | n->codes[2 * t + 1] << 8);
}

/* One output channel's sums at every position of the convolution's output
 * (a border pixel is 0: the zero point of dynamic fixed point). */
static void nn16_sums(const cpu_nn16 *n, const int32_t *g, uint32_t o, int64_t *acc)
{
	uint32_t kz = n->depthwise ? 1 : n->in_z;
	size_t plane = (size_t)n->out_x * n->out_y, taps = (size_t)kz * n->k * n->k;
	/* the stored bias holds 128 x the sum of the channel's codes more
	 * (doc/cpu-backend.md, "int16 data") */
	int64_t bias = n->bias ? n->bias[o] : 0;
	for (size_t t = 0; n->codes && t < taps; t++)
		bias -= 128 * (int64_t)nn16_code(n, o * taps + t);
	for (size_t i = 0; i < plane; i++)
		acc[i] = bias;
	for (uint32_t z = 0; z < kz; z++) {
		const int32_t *src = g + (size_t)(n->depthwise ? o : z) * n->in_x * n->in_y;
		for (uint32_t ky = 0; ky < n->k; ky++)
			for (uint32_t kx = 0; kx < n->k; kx++) {
				size_t t = (((size_t)o * kz + z) * n->k + ky) * n->k + kx;
				int64_t w = n->codes ? nn16_code(n, t) : 1;
				if (!w)
					continue;
				for (uint32_t oy = 0; oy < n->out_y; oy++) {
					int64_t iy = (int64_t)oy + ky + n->y_off;
					if (iy < 0 || iy >= (int64_t)n->in_y)
						continue;
					const int32_t *row = src + (size_t)iy * n->in_x;
					int64_t *a = acc + (size_t)oy * n->out_x;
					for (uint32_t ox = 0; ox < n->out_x; ox++) {
						int64_t ix = (int64_t)ox + kx + n->x_off;
						if (ix >= 0 && ix < (int64_t)n->in_x)
							a[ox] += w * row[ix];
					}
				}
			}
	}
}

/* The written pixel (px, py) of one channel from its sums: requantized
 * (with the fused addition's second image), then pooled. */
static int16_t nn16_pixel(const cpu_nn16 *n, const int64_t *acc, const uint8_t *addbuf, uint32_t o, uint32_t px,
			  uint32_t py)
{
	if (n->add.on) {
		uint32_t sub = n->pooling == 3 ? 2 : 1;
		const cpu_add *a = &n->add;
		int16_t b = rd16(addbuf, a->base + nbg_cpu_nn16_chan(a->slice, n->add_grouped, o) + py * a->row +
					 px * n->add_xstep, 0, 0);
		return nbg_cpu_nn16_add(a, acc[(size_t)py * sub * n->out_x + px * sub], b, n->relu, n->even);
	}
	if (n->lut)
		return nn16_table(n, acc[(size_t)py * n->out_x + px]);
	if (n->pooling == 0)
		return requant16(n, acc[(size_t)py * n->out_x + px]);
	if (n->pooling == 3)
		return requant16(n, acc[(size_t)(2 * py) * n->out_x + 2 * px]);
	int16_t v = INT16_MIN;
	for (uint32_t dy = 0; dy < 2; dy++)
		for (uint32_t dx = 0; dx < 2; dx++) {
			uint32_t y = 2 * py + dy, x = 2 * px + dx;
			if (y < n->out_y && x < n->out_x) {
				int16_t q = requant16(n, acc[(size_t)y * n->out_x + x]);
				v = q > v ? q : v;
			}
		}
	return v;
}

static int nn16_conv_run(const cpu_nn16 *n, uint8_t *const *buf)
{
	size_t plane = (size_t)n->out_x * n->out_y, pooled = (size_t)n->pool_x * n->pool_y;
	int32_t *g = nn16_gather(n, buf[n->in_region]);
	int64_t *acc = malloc(plane * sizeof(*acc));
	int16_t *stage = malloc(pooled * n->out_z * sizeof(*stage));
	if (!g || !acc || !stage) {
		free(g);
		free(acc);
		free(stage);
		return -1;
	}
	/* every channel before any write: the operation may write over what it reads */
	for (uint32_t o = 0; o < n->out_z; o++) {
		nn16_sums(n, g, o, acc);
		for (uint32_t py = 0; py < n->pool_y; py++)
			for (uint32_t px = 0; px < n->pool_x; px++)
				stage[o * pooled + (size_t)py * n->pool_x + px] =
					nn16_pixel(n, acc, n->add.on ? buf[n->add.region] : NULL, o, px, py);
	}
	uint8_t *out = buf[n->out_region];
	for (uint32_t o = 0; o < n->out_z; o++)
		for (uint32_t py = 0; py < n->pool_y; py++)
			for (uint32_t px = 0; px < n->pool_x; px++)
				wr16(out, n->out_base + nbg_cpu_nn16_chan(n->out_slice, n->out_grouped, o) +
					     py * n->out_row + px * n->out_xstep, n->out_ring_lo,
				     n->out_ring_size, stage[o * pooled + (size_t)py * n->pool_x + px]);
	free(g);
	free(acc);
	free(stage);
	return 0;
}

/* out(x, y, z) = in(y, x, z): x*y elements of esize bytes in each of the
 * out_z slices (1 but for the 3-D transposes), the slices at the command's
 * slice strides.  The whole input is gathered first (the output may
 * overlap it). */
static int nn16_transpose_run(const cpu_nn16 *n, uint8_t *const *buf)
{
	size_t plane = (size_t)n->in_x * n->in_y * n->esize;
	uint8_t *t = malloc(plane * n->out_z);
	if (!t)
		return -1;
	const uint8_t *in = buf[n->in_region];
	for (uint32_t z = 0; z < n->out_z; z++)
		for (uint32_t y = 0; y < n->in_y; y++)
			for (uint32_t x = 0; x < n->in_x; x++)
				for (uint32_t b = 0; b < n->esize; b++)
					t[z * plane + ((size_t)y * n->in_x + x) * n->esize + b] =
						in[nbg_cpu_ring_at(n->in_base + z * n->in_slice + y * n->in_row +
								   (uint64_t)x * n->esize + b,
								   n->in_ring_lo, n->in_ring_size)];
	uint8_t *out = buf[n->out_region];
	for (uint32_t z = 0; z < n->out_z; z++)
		for (uint32_t y = 0; y < n->in_y; y++)
			for (uint32_t x = 0; x < n->in_x; x++)
				for (uint32_t b = 0; b < n->esize; b++)
					out[nbg_cpu_ring_at(n->out_base + z * n->out_slice + (uint64_t)x * n->out_row +
							    (uint64_t)y * n->esize + b,
							    n->out_ring_lo, n->out_ring_size)] =
						t[z * plane + ((size_t)y * n->in_x + x) * n->esize + b];
	free(t);
	return 0;
}

int nbg_cpu_nn16_run(const cpu_nn16 *n, uint8_t *const *buf)
{
	if (n->kind >= CPU_NN16_F16_MAXPOOL) {
		nbg_cpu_nnf16_run(n, buf);
		return 0;
	}
	return n->kind == CPU_NN16_TRANSPOSE ? nn16_transpose_run(n, buf) : nn16_conv_run(n, buf);
}

/* ------------------------------------------------------------------ plan */

/* An NT transpose's long side: its length n (in_image_y_size, equal to
 * out_image_x_size) and the output's row stride, bits 13 and up of n in
 * kernel_z_size, bits 16 and up of the stride in out_image_tile_x_size
 * (fields a transpose has no other use for; doc/cpu-backend.md "int16
 * data", NT transpose), its input's depth then 1.  Both extensions 0:
 * the fields as decoded.  Returns the extension of n. */
static uint32_t transpose_long_side(const nbg_cmd_op *op, const nbg_cmd *cmd, uint32_t *in_y, uint32_t *out_x,
				uint64_t *out_row)
{
	uint32_t hi = nbg_cmd_nn(cmd, NBG_NNF_KERNEL_Z_SIZE), row_hi = nbg_cmd_nn(cmd, NBG_NNF_OUT_IMAGE_TILE_X_SIZE);
	*in_y = op->in[1] + (hi << 13);
	*out_x = op->out[0] + (hi << 13);
	*out_row = op->out_row_stride + ((uint64_t)row_hi << 16);
	return hi;
}

/* An NT transpose: in x*y (z 1) elements, out y*x, of the element size the
 * strides give (in_element_bytes, equal both sides); in each of the
 * output's out_image_z_size slices (the 3-D transpose, doc/cpu-backend.md
 * "int16 data", NT transpose in slices), the input's slices at its slice
 * stride, the output's at its own; a long side makes it one slice. */
static void plan_transpose(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd_op *op,
			   const nbg_cmd *cmd)
{
	uint32_t e = op->in_element_bytes, in_y, out_x;
	uint64_t out_row;
	uint32_t hi = transpose_long_side(op, cmd, &in_y, &out_x, &out_row);
	uint32_t z = hi ? 1 : op->in[2], slices = op->out[2];
	if (!e || e > NN16_MAX_ELEMENT || op->out_element_bytes != e || z > 1 || !slices || (hi && slices != 1) ||
	    out_x != in_y || op->out[1] != op->in[0] || !op->in[0] || !in_y ||
	    op->in_row_stride < (uint64_t)op->in[0] * e || out_row < (uint64_t)out_x * e ||
	    (slices > 1 && (op->in_slice_stride < (in_y - 1) * op->in_row_stride + (uint64_t)op->in[0] * e ||
			    op->out_slice_stride < (op->in[0] - 1) * out_row + (uint64_t)out_x * e))) {
		nbg_cpu_refuse(s, "transpose-unsupported", "an NT operation %ux%ux%u -> %ux%ux%u of %u-byte "
			       "elements (row strides %llu, %llu; slice strides %llu, %llu): executed is the transpose "
			       "x*y -> y*x of elements of 1 to 65536 bytes in each of the output's slices (1 with a long "
			       "side), rows at least as long as they hold, slices at least as long as their rows",
			       op->in[0], in_y, z, out_x, op->out[1], slices, e,
			       (unsigned long long)op->in_row_stride, (unsigned long long)out_row,
			       (unsigned long long)op->in_slice_stride, (unsigned long long)op->out_slice_stride);
		return;
	}
	n->kind = CPU_NN16_TRANSPOSE;
	n->esize = e;
	n->in_x = op->in[0];
	n->in_y = in_y;
	n->out_z = slices;
	n->in_base = op->in_ref.offset;
	n->in_row = op->in_row_stride;
	n->in_slice = op->in_slice_stride;
	n->out_base = op->out_ref.offset;
	n->out_row = out_row;
	n->out_slice = op->out_slice_stride;
	if (!nbg_cpu_nn16_addressing(p, s, n, op, cmd, (uint64_t)n->in_x * e, n->in_y, slices, (uint64_t)n->in_y * e,
				     n->in_x, slices))
		return;
	char each[48] = "";
	if (e > 4)
		snprintf(each, sizeof(each), " of %u-byte elements", e);
	/* the description is cut at what's 95 characters when ten-digit sizes
	 * would not fit it (the plan's verdict does not depend on it) */
	int w = slices > 1 ? snprintf(s->what, sizeof(s->what), "NN transpose %ux%ux%u -> %ux%ux%u%s (each slice)",
				      n->in_x, n->in_y, slices, n->in_y, n->in_x, slices, each)
			   : snprintf(s->what, sizeof(s->what), "NN transpose %ux%ux1 -> %ux%ux1%s", n->in_x, n->in_y,
				      n->in_y, n->in_x, each);
	(void)w;
	s->verdict = NBG_CPU_EXECUTE;
	s->reason_id = "";
}

/* Input, output and (kernel) data all int16, on the target whose int16
 * commands are established, with every zero point 0 and a per-tensor
 * scale; 0 with the step refused. */
static int nn16_fields(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd_op *op, const nbg_cmd *cmd)
{
	const char *names[3] = { "in_image_data_type", "out_image_data_type", "kernel_data_type" };
	uint32_t codes[3] = { op->in_type, op->out_type, op->kernel_type };
	for (int i = 0; i < 3; i++)
		if (codes[i] != NN16_TYPE) {
			const char *t = nbg_command_data_type_name(codes[i]);
			nbg_cpu_refuse(s, "data-type-unsupported", "%s is %u (%s) with in_image_data_type %u: an "
				       "int16 operation is executed with input, output and kernels all int16", names[i],
				       codes[i], t ? t : "unknown", op->in_type);
			return 0;
		}
	if (p->m->target != NN16_TARGET) {
		nbg_cpu_refuse(s, "data-type-unsupported", "int16 data on target 0x%x: its commands' scale "
			       "fields are established for target 0x%x only", p->m->target, NN16_TARGET);
		return 0;
	}
	const struct { enum nbg_nn_fid f; const char *why; } zero[] = {
		{ NBG_NNF_PER_CHANNEL_POST_MUL, "per-channel requantization has no int16 sample" },
		{ NBG_NNF_IN_IMAGE_BORDER_MODE, "executed is 0, the constant border" },
		{ NBG_NNF_IN_IMAGE_BORDER_CONST, "dynamic fixed point has no zero point" },
		{ NBG_NNF_OUT_ZERO_POINT, "dynamic fixed point has no zero point" },
		{ NBG_NNF_COEF_ZERO_POINT, "dynamic fixed point has no zero point" },
	};
	for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++)
		if (nbg_cmd_nn(cmd, zero[i].f)) {
			nbg_cpu_refuse(s, "int16-field-unsupported", "an int16 operation with %s %u: %s",
				       nbg_command_fields(NBG_CMD_NN, NULL)[zero[i].f].key, nbg_cmd_nn(cmd, zero[i].f),
				       zero[i].why);
			return 0;
		}
	/* the 0x1000003b encoding: 23 mantissa bits, post_shift | bit_5_6 << 5 the exponent */
	n->mantissa = nbg_cpu_nn_multiplier(cmd);
	n->exponent = nbg_cmd_nn(cmd, NBG_NNF_POST_SHIFT) | nbg_cmd_nn(cmd, NBG_NNF_POST_SHIFT_BIT_5_6) << 5;
	n->relu = op->relu;
	/* the requantization's rounding (quant.h, doc/cpu-backend.md) */
	if (!nbg_cpu_rounding(s, "rounding-mode-unsupported", "an int16 NN operation", "rounding_mode",
			      nbg_cmd_nn(cmd, NBG_NNF_ROUNDING_MODE), &n->even))
		return 0;
	uint32_t xo = nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_X_OFFSET) | nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_X_OFFSET_BIT_3) << 3;
	uint32_t yo = nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_Y_OFFSET) | nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_Y_OFFSET_BIT_3) << 3;
	n->x_off = xo >= 8 ? (int32_t)xo - 16 : (int32_t)xo;
	n->y_off = yo >= 8 ? (int32_t)yo - 16 : (int32_t)yo;
	n->in_x = nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_X_SIZE);
	n->in_y = nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_Y_SIZE);
	n->out_x = op->out_conv[0];
	n->out_y = op->out_conv[1];
	n->out_z = op->out_conv[2];
	return 1;
}

/* The written image: the output, 2x2 max-pooled (pooling 1 of size 2), or
 * subsampled by 2 where the decoder infers a stride (first pixel); 0 with
 * the step refused when it does not follow. */
static int nn16_written(nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd_op *op)
{
	uint32_t pool = op->pooling;
	if (!pool && op->out_subsample_inferred && op->out_subsample == 2)
		pool = 3;
	uint32_t sub = pool ? 2 : 1;
	n->pooling = pool;
	n->pool_x = op->out[0];
	n->pool_y = op->out[1];
	if ((pool != 0 && pool != 1 && pool != 3) || (pool == 1 && op->pooling_size != 2) ||
	    op->out[2] != n->out_z || !n->pool_x || !n->pool_y || n->pool_x * sub > n->out_x + sub - 1 ||
	    n->pool_y * sub > n->out_y + sub - 1 || (!pool && (n->pool_x != n->out_x || n->pool_y != n->out_y))) {
		nbg_cpu_refuse(s, "shape-inconsistent", "the written image %ux%ux%u does not follow from the "
			       "output %ux%ux%u and its pooling %u (%ux%u) or subsampling %u: executed are none, 2x2 "
			       "max and a stride of 2", op->out[0], op->out[1], op->out[2], n->out_x, n->out_y,
			       n->out_z, pool, op->pooling_size, op->pooling_size, op->out_subsample);
		return 0;
	}
	return 1;
}

/* The rows of the image an operation reads: its own, or, for a row tile of
 * an image an NN-engine operation wrote at the same slice stride, that
 * operation's written rows. */
static uint32_t nn16_image_rows(const nbg_cpu_plan *p, const nbg_cmd_op *op, uint32_t rows)
{
	const nbg_cmd_op *w = op->producer >= 0 ? nbg_commands_op_of(p->c, (size_t)op->producer) : NULL;
	if (w && w->engine == NBG_CMD_NN && w->out_ref.source_type == op->in_ref.source_type &&
	    w->out_ref.index == op->in_ref.index && w->out_slice_stride == op->in_slice_stride &&
	    w->out_row_stride == op->in_row_stride && w->out[1] > rows)
		return w->out[1];
	return rows;
}

/* The second image of a fused addition: its address, strides and circular
 * buffer (which it must not pass), inside its memory. */
static int plan_add16(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd *cmd)
{
	cpu_add *a = &n->add;
	const uint32_t *w = cmd->words;
	nbg_cmd_ref r;
	memset(a, 0, sizeof(*a));
	if (cmd->word_count < ADD16_WORDS || n->pooling == 1) {
		nbg_cpu_refuse(s, "fused-add-unsupported", "an int16 addition %s: executed are commands of at least "
			       "%d words with no max pooling", n->pooling == 1 ? "with max pooling" : "in a short command",
			       ADD16_WORDS);
		return 0;
	}
	if (!nbg_cpu_add_second16(p, s, &n->add, n->pool_x, n->pool_y, n->out_z, w, ADD16_W_ADDRESS, ADD16_W_STRIDES, "int16", &n->add_grouped, &r))
		return 0;
	/* words 35 (relocated, bits 0-25) and 33 (32-byte units): where the
	 * image ends and its bytes, in every corpus command but those whose
	 * word 35 holds, unrelocated, the end 0x3ffffff of no buffer (as a
	 * circular buffer's end field: the image bounded by its memory alone);
	 * another reading (a circular buffer it would wrap through) is not
	 * established */
	nbg_cmd_ref end;
	uint64_t bytes = n->add_grouped ? a->slice * (n->out_z / 16) : a->slice * n->out_z;
	n->add_xstep = n->add_grouped ? 32 : 2;
	int none = (w[ADD16_W_END] & ADD16_NO_BUFFER) == ADD16_NO_BUFFER &&
		   !nbg_command_word_ref(p->g, s->operation, ADD16_W_END, w[ADD16_W_END], &end);
	if (!none && (!nbg_command_word_ref(p->g, s->operation, ADD16_W_END, w[ADD16_W_END], &end) ||
	    end.source_type != r.source_type || end.index != r.index ||
	    (end.offset & 0x3ffffffu) != a->base + 32ull * w[ADD16_W_BYTES] || 32ull * w[ADD16_W_BYTES] < bytes)) {
		nbg_cpu_refuse(s, "fused-add-unsupported", "its command words %d (0x%08x, relocated 0x%llx) and %d "
			       "(0x%x) are not the end and the size / 32 of a buffer that starts with its second image "
			       "(0x%llx + %llu bytes): a circular buffer there is not established", ADD16_W_END,
			       w[ADD16_W_END], (unsigned long long)end.offset, ADD16_W_BYTES, w[ADD16_W_BYTES],
			       (unsigned long long)a->base, (unsigned long long)bytes);
		return 0;
	}
	/* |acc| < 2^55 and |b| <= 2^15: the convolution's shift at most 45 and
	 * the second image's at most 84 keep every term below 2^126 */
	uint32_t v[3] = { (w[ADD16_W_SCALE] >> 2) | (w[ADD16_W_SCALE_HI] >> 31) << 30, w[ADD16_W_MAX],
			  w[ADD16_W_MIN] };
	if (!nbg_cpu_add_fixed(s, a, n->mantissa, n->exponent, v, 45, 84,
			       "words 23 bits 2-31 and 27 bit 31, 29, 30"))
		return 0;
	/* the sum's ReLU is word 31 bit 16; the convolution's own ReLU field
	 * applies to its term, before the addition (the source's RELU between
	 * its CONV_2D and ADD: doc/cpu-backend.md, "int16 data") */
	int sum_relu = (int)(w[ADD16_W_FLAGS] >> ADD16_RELU_BIT & 1u);
	if (n->relu && sum_relu) {
		nbg_cpu_refuse(s, "fused-add-unsupported", "an int16 addition whose convolution sets relu and whose "
			       "command word %d bit %d (the ReLU after the addition) is set: both together are not "
			       "established", ADD16_W_FLAGS, ADD16_RELU_BIT);
		return 0;
	}
	n->relu = n->relu ? NBG_CPU_NN16_RELU_TERM : sum_relu ? NBG_CPU_NN16_RELU_SUM : 0;
	a->on = 1;
	return 1;
}

/* The kernel: the decoded int16 stream and its 48-bit biases, or, for the
 * max pooling the compiler writes as a 1x1 depthwise command with no
 * kernel stream, the identity (weight 1, bias 0) at scale 1. */
static int nn16_kernel(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd_op *op, int kind,
		       const nbg_weights_op *wo)
{
	n->depthwise = kind == CPU_CMD_DEPTHWISE_CONV;
	if (!wo || nbg_weights_op_status(wo) != NBG_WEIGHTS_DECODED) {
		if (!n->depthwise || op->kernel[0] != 1 || op->kernel[1] != 1 || op->kernel_ref.patched ||
		    op->pooling != 1 || n->mantissa || n->exponent != 127 || n->relu) {
			nbg_cpu_refuse(s, "weights-not-decoded", "its kernel stream is not decoded (%s: %s), and it is "
				       "no max pooling (a 1x1 depthwise command with 2x2 max pooling, scale 1, no ReLU "
				       "and no kernel reference)", wo ? nbg_weights_op_reason_id(wo) : "no stream",
				       wo ? nbg_weights_op_reason(wo) : "no weights record");
			return 0;
		}
		n->kind = CPU_NN16_MAXPOOL;
		n->k = 1;
		n->in_z = n->out_z;
		return 1;
	}
	const uint32_t *shape = nbg_weights_op_shape(wo);
	size_t count = 0;
	n->kind = CPU_NN16_CONV;
	n->k = shape[2];
	n->in_z = n->depthwise ? n->out_z : shape[1];
	n->codes = nbg_weights_op_codes(wo, &count);
	n->bias = nbg_weights_op_bias_stored64(wo);
	uint64_t taps = (uint64_t)(n->depthwise ? 1 : n->in_z) * n->k * n->k;
	if (nbg_weights_op_data_type(wo) != NN16_TYPE || shape[2] != shape[3] || shape[0] != n->out_z ||
	    (n->depthwise && shape[1] != 1) || !n->codes || !n->bias || count < taps * n->out_z ||
	    taps > NN16_MAX_TAPS) {
		nbg_cpu_refuse(s, "weights-not-decoded", "its decoded int16 kernel %ux%ux%ux%u (%zu codes) does not "
			       "match the command's output z %u or holds more than %u taps a sum", shape[0], shape[1],
			       shape[2], shape[3], count, n->out_z, NN16_MAX_TAPS);
		return 0;
	}
	(void)p;
	return 1;
}

/* Where the operation reads and writes: planar images at the command's
 * strides, an interleaved input record, images stored in groups of 16
 * channels (nbg_cpu_nn16_grouped), row tiles the data flow places; every
 * byte inside its memory or circular buffer.  0 with the step refused. */
static int nn16_images(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd_op *op, const nbg_cmd *cmd)
{
	n->in_base = op->in_ref.offset;
	n->in_row = op->in_row_stride;
	n->in_slice = op->in_slice_stride;
	n->in_xstep = 2;
	if (!n->depthwise && nbg_cpu_input_interleaved(p, op, n->in_z, n->in_x, n->in_y, 2)) {
		n->in_row = op->in_row_stride * n->in_z;
		n->in_slice = 2;
		n->in_xstep = 2ull * n->in_z;
	}
	n->out_base = op->out_ref.offset;
	n->out_row = op->out_row_stride;
	n->out_slice = op->out_slice_stride;
	n->out_xstep = 2;
	uint32_t in_rows = nn16_image_rows(p, op, n->in_y), in_slices = n->in_z, out_slices = n->out_z;
	n->in_grouped = n->in_xstep == 2 && n->in_z % 16 == 0 &&
			nbg_cpu_nn16_grouped(n->in_slice, n->in_row, in_rows);
	n->out_grouped = n->out_z % 16 == 0 && nbg_cpu_nn16_grouped(n->out_slice, n->out_row, n->pool_y);
	if (n->in_grouped) { /* the tiles' stored addresses step 16 rows of the command's a row */
		n->in_slice = 16 * n->in_row * in_rows;
		n->in_row *= 16;
		n->in_xstep = 32;
		in_slices /= 16;
	} else if (op->tile_placed == 1) {
		/* a row tile whose image the data flow places by its other
		 * image's step (doc/commands.md, "row tiles") */
		n->in_base = op->tile_offset;
	}
	if (n->out_grouped) {
		n->out_slice = 16 * n->out_row * n->pool_y;
		n->out_row *= 16;
		n->out_xstep = 32;
		out_slices /= 16;
	} else if (op->tile_placed == 2) {
		n->out_base = op->tile_offset;
	}
	if (op->in_element_bytes != 2 || op->out_element_bytes != 2) {
		nbg_cpu_refuse(s, "shape-inconsistent", "an int16 operation whose images the data flow reads with "
			       "%u- and %u-byte elements", op->in_element_bytes, op->out_element_bytes);
		return 0;
	}
	return nbg_cpu_nn16_addressing(p, s, n, op, cmd, ((uint64_t)n->in_x - 1) * n->in_xstep + 2, n->in_y,
				       in_slices, (uint64_t)n->pool_x * n->out_xstep, n->pool_y, out_slices);
}

/* An NN_LUT convolution's table (doc/weights.md, "A convolution and its
 * table in one stream"): executed with the one tail of the corpus's such
 * table (0x36000000: bits 28 and 25 set, 24 clear), a scale that is a
 * power of two, no pooling, ReLU or addition.  0 with the step refused. */
#define NN16_LUT_TAIL 0x36000000u
static int nn16_lut(nbg_cpu_step *s, cpu_nn16 *n, const nbg_weights_op *wo)
{
	uint64_t at = 0;
	const uint8_t *tab = nbg_weights_op_lut_table(wo, &at);
	const uint32_t *tail = nbg_weights_op_lut_tail(wo);
	if (!tab || !tail || tail[0] != NN16_LUT_TAIL || n->mantissa || n->exponent == 0 || n->exponent >= 255 ||
	    n->pooling || n->relu || n->add.on) {
		nbg_cpu_refuse(s, "nn16-lut-unsupported", "an int16 convolution with its table (tail word 0x%08x, "
			       "scale mantissa 0x%06x, pooling %u, relu %d): executed is the tail 0x%08x (8 entries a "
			       "binade of the sum) with a power-of-two scale, no pooling and no ReLU",
			       tail ? tail[0] : 0, n->mantissa, n->pooling, n->relu, NN16_LUT_TAIL);
		return 0;
	}
	n->lut = tab;
	return 1;
}

static void plan_conv16(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *opu, const cpu_match *m, const nbg_cmd *cmd)
{
	cpu_nn16 *n = &opu->u.nn16;
	const nbg_cmd_op *op = m->cop;
	/* an NN_LUT convolution (nn16_lut_conv): a convolution's command */
	int kind = m->type == NBG_GRAPH_OP_NN_LUT && m->cmd_kind == CPU_CMD_NN_LUT ? CPU_CMD_CONV : m->cmd_kind;
	if (kind != CPU_CMD_CONV && kind != CPU_CMD_DEPTHWISE_CONV) {
		nbg_cpu_refuse(s, "operation-kind-unsupported", "an int16 NN %s: executed are conv and depthwise "
			       "conv", op->kind);
		return;
	}
	if (!nn16_fields(p, s, n, op, cmd) || !nn16_kernel(p, s, n, op, kind, p->wop[m->operation]) ||
	    !nn16_written(s, n, op) || (m->type == NBG_GRAPH_OP_NN_LUT && !nn16_lut(s, n, p->wop[m->operation])))
		return;
	if (!n->in_x || !n->in_y || !n->in_z || !n->out_x || !n->out_y || !n->out_z || n->in_x > (1u << 16) ||
	    n->in_y > (1u << 16) || n->out_x > (1u << 16) || n->out_y > (1u << 16)) {
		nbg_cpu_refuse(s, "shape-invalid", "a size of the command is 0 or above 65536 (input %ux%ux%u, "
			       "output %ux%ux%u)", n->in_x, n->in_y, n->in_z, n->out_x, n->out_y, n->out_z);
		return;
	}
	uint64_t macs = (uint64_t)n->out_x * n->out_y * n->out_z * n->k * n->k * (n->depthwise ? 1 : n->in_z);
	if (macs > NBG_CPU_MAX_MACS) {
		nbg_cpu_refuse(s, "work-limit", "%llu multiply-accumulates, above the limit of %llu",
			       (unsigned long long)macs, (unsigned long long)NBG_CPU_MAX_MACS);
		return;
	}
	if (!nn16_images(p, s, n, op, cmd))
		return;
	if (m->add_layer && !plan_add16(p, s, n, cmd))
		return;
	if (!m->add_layer && cmd->word_count > ADD16_W_FLAGS && (cmd->words[ADD16_W_FLAGS] >> ADD16_RELU_BIT & 1u)) {
		nbg_cpu_refuse(s, "int16-field-unsupported", "command word %d bit %d (the ReLU of a fused "
			       "addition) is set on a command with no addition: its meaning there is not established",
			       ADD16_W_FLAGS, ADD16_RELU_BIT);
		return;
	}
	if (n->lut) {
		size_t at = strlen(s->what);
		snprintf(s->what + at, sizeof(s->what) - at, ", conv and its table read at the sums");
	}
	s->verdict = NBG_CPU_EXECUTE;
	s->reason_id = "";
	s->macs = macs;
}

/* Whether an NN_LUT operation is a convolution with its table. */
static int nn16_lut_conv(const nbg_cpu_plan *p, const nbg_cmd_op *op)
{
	uint64_t size = 0;
	return nbg_command_coef_bytes(p->m, p->g, &op->kernel_ref, &size) && nbg_nnlut_convolution(op, size);
}

/* An NN-engine operation on int16 data, or an NT transpose (its data type
 * fields are not set; its element size the strides give). */
static int nn16_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	return m->cop && m->cop->engine == NBG_CMD_NN &&
	       (m->type == NBG_GRAPH_OP_NT || m->cop->in_type == NN16_TYPE || m->cop->out_type == NN16_TYPE ||
		nbg_cpu_nnf16_is(p, m->cop, m->type));
}

static void nn16_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	const nbg_cmd *cmd = nbg_commands_at(p->c, NBG_CMD_NN, m->cop->command);
	memset(&op->u.nn16, 0, sizeof(op->u.nn16));
	if (!cmd) {
		nbg_cpu_refuse(s, "command-not-decoded", "its NN command is not decoded");
		return;
	}
	if (m->type == NBG_GRAPH_OP_NT && p->m->target != NN16_TARGET)
		nbg_cpu_refuse(s, "operation-type-unsupported", "an NN-engine operation of type NT on target 0x%x: "
			       "its transpose is established on target 0x%x only", p->m->target, NN16_TARGET);
	else if (m->type == NBG_GRAPH_OP_NT)
		plan_transpose(p, s, &op->u.nn16, m->cop, cmd);
	else if (m->type == NBG_GRAPH_OP_NN_LUT && m->cop->in_type == NN16_TYPE && m->cop->out_type == NN16_TYPE &&
		 nn16_lut_conv(p, m->cop))
		plan_conv16(p, s, op, m, cmd); /* a convolution with its table */
	else if (nbg_cpu_nnf16_is(p, m->cop, m->type))
		nbg_cpu_nnf16_plan(p, s, &op->u.nn16, m->cop, cmd, m->type, m->cmd_kind, m->layer);
	else if (m->type == NBG_GRAPH_OP_NN)
		plan_conv16(p, s, op, m, cmd);
	else
		nbg_cpu_refuse(s, "operation-type-unsupported", "an int16 NN-engine operation of type %s: executed "
			       "are NN and NT", nbg_graph_op_type_name(m->type) ? nbg_graph_op_type_name(m->type) : "?");
	if (s->verdict == NBG_CPU_EXECUTE)
		op->kind = CPU_OP_NN16;
}

static int nn16_run(const cpu_op *op, uint8_t *const *buf)
{
	return nbg_cpu_nn16_run(&op->u.nn16, buf);
}

/* Work: the multiply-accumulates and a step per value gathered or
 * written; scratch: the gathered input (int32), one channel's sums and
 * the written image (int16), or the transpose's copy. */
static void nn16_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	const cpu_nn16 *n = &op->u.nn16;
	if (n->kind == CPU_NN16_TRANSPOSE) {
		*scratch = nbg_cpu_mul_sat((uint64_t)n->in_x * n->in_y * n->esize, n->out_z);
		*work = nbg_cpu_mul_sat(2, *scratch);
		return;
	}
	uint64_t in = (uint64_t)n->in_x * n->in_y * n->in_z, plane = (uint64_t)n->out_x * n->out_y;
	uint64_t out = nbg_cpu_mul_sat((uint64_t)n->pool_x * n->pool_y, n->out_z);
	uint64_t taps = (uint64_t)(n->depthwise ? 1 : n->in_z) * n->k * n->k;
	*scratch = nbg_cpu_add_sat(nbg_cpu_add_sat(nbg_cpu_mul_sat(in, 4), nbg_cpu_mul_sat(plane, 8)),
				   nbg_cpu_mul_sat(out, 2));
	*work = nbg_cpu_add_sat(nbg_cpu_mul_sat(nbg_cpu_mul_sat(plane, n->out_z), taps),
				nbg_cpu_add_sat(in, out));
}

const cpu_op_def nbg_cpu_op_nn16 = { "nn16", nn16_match, nn16_plan, nn16_run, nn16_cost };
