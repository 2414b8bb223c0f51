/*
 * test_cpu_nn16.c - the CPU backend's int16 NN-engine operations
 * (lib/cpu/ops/nn16.c) and the channel-padding shader (lib/cpu/ops/shpad.c)
 * on small images whose expected values are worked out by hand in the
 * comments from the rules doc/cpu-backend.md ("int16 data") states: a
 * convolution with the stored bias's 128 x code-sum term, the power-of-two
 * scale rounded half away from zero, ReLU and int16 saturation; a
 * depthwise convolution over a zero border; the max pooling with no
 * kernel; a stride (first pixel); a fused addition with its clamp, its
 * second image's scale and its ReLU; an NT transpose of 2-byte elements; a
 * padding of rows with 0; images stored in groups of 16 channels; the
 * convolution's ReLU before a fused addition; the 2x bilinear resize
 * shader (lib/cpu/ops/shresize.c); the fp16 max pooling, SP addition with its ReLU
 * and NN_LUT ReLU (lib/cpu/ops/nnf16.c, "fp16 NN-engine operations").
 * Each operation runs through its table entry
 * (nbg_cpu_ops[kind]->run) on buffers the test lays out, as the plan would
 * have set them (internal API, static library).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cpu/cpu_internal.h"

static void put16(uint8_t *b, size_t i, int16_t v)
{
	b[2 * i] = (uint8_t)((uint16_t)v & 0xff);
	b[2 * i + 1] = (uint8_t)((uint16_t)v >> 8);
}

static int16_t get16(const uint8_t *b, size_t i)
{
	return (int16_t)(uint16_t)(b[2 * i] | b[2 * i + 1] << 8);
}

/* Runs op (kind) on two buffers: 0 the input, 1 the output. */
static void run_op(cpu_op *op, int kind, uint8_t *in, uint8_t *out)
{
	uint8_t *buf[2] = { in, out };
	op->kind = kind;
	assert_int_equal(nbg_cpu_ops[kind]->run(op, buf), 0);
}

/* A planar int16 image x*y*z in buffer 0, written planar into buffer 1. */
static void planar(cpu_nn16 *n, uint32_t x, uint32_t y, uint32_t z, uint32_t ox, uint32_t oy, uint32_t oz)
{
	n->in_x = x, n->in_y = y, n->in_z = z;
	n->in_row = 2ull * x, n->in_slice = 2ull * x * y, n->in_xstep = 2;
	n->out_x = ox, n->out_y = oy, n->out_z = oz;
	n->pool_x = ox, n->pool_y = oy;
	n->out_row = 2ull * ox, n->out_slice = 2ull * ox * oy, n->out_xstep = 2;
	n->in_region = 0, n->out_region = 1;
}

/* A convolution case: op zeroed, planar x*y*z images into x*y*oz, kernel
 * k, the exponent. */
static cpu_nn16 *new_conv(cpu_op *op, uint32_t x, uint32_t y, uint32_t z, uint32_t oz, uint32_t k,
			  uint32_t exponent)
{
	memset(op, 0, sizeof(*op));
	cpu_nn16 *n = &op->u.nn16;
	planar(n, x, y, z, x, y, oz);
	n->kind = CPU_NN16_CONV;
	n->k = k;
	n->exponent = exponent;
	return n;
}

/* 1x1 convolution of 2 channels into 1 at scale 2^-4 (exponent 123). */
static void test_conv_1x1(void **state)
{
	(void)state;
	cpu_op op;
	cpu_nn16 *n = new_conv(&op, 4, 1, 2, 1, 1, 123);
	/* w = (3, -5); true bias 7, stored 7 + 128 x (3 - 5) = -249 */
	uint8_t codes[4];
	put16(codes, 0, 3);
	put16(codes, 1, -5);
	int64_t bias = -249;
	n->codes = codes;
	n->bias = &bias;
	uint8_t in[16], out[8];
	/* channel 0 then channel 1, four pixels */
	const int16_t x0[4] = { 1000, 0, -24, 32767 }, x1[4] = { -2000, 5, 0, -32768 };
	for (int i = 0; i < 4; i++) {
		put16(in, (size_t)i, x0[i]);
		put16(in, 4 + (size_t)i, x1[i]);
	}
	run_op(&op, CPU_OP_NN16, in, out);
	/* 7 + 3000 + 10000 = 13007, / 16 = 812.94 -> 813;  7 - 25 = -18,
	 * / 16 = -1.125 -> -1;  7 - 72 = -65, / 16 = -4.06 -> -4;
	 * 7 + 98301 + 163840 = 262148, / 16 = 16384.25 -> 16384 */
	assert_int_equal(get16(out, 0), 813);
	assert_int_equal(get16(out, 1), -1);
	assert_int_equal(get16(out, 2), -4);
	assert_int_equal(get16(out, 3), 16384);
	/* with ReLU the negatives are 0; at scale 2^-1 (exponent 126) the last
	 * is 131074 and saturates to 32767; -18 / 2 = -9; 13007 / 2 = 6503.5
	 * rounds away from zero to 6504 */
	n->relu = 1;
	n->exponent = 126;
	run_op(&op, CPU_OP_NN16, in, out);
	assert_int_equal(get16(out, 0), 6504);
	assert_int_equal(get16(out, 1), 0);
	assert_int_equal(get16(out, 2), 0);
	assert_int_equal(get16(out, 3), 32767);
}

/* Depthwise 3x3 of ones over a 3x3 image with offset -1 (the border 0),
 * scale 1 (exponent 127), and the same with a stride of 2 (pooling 3). */
static void test_depthwise_border_stride(void **state)
{
	(void)state;
	cpu_op op;
	cpu_nn16 *n = new_conv(&op, 3, 3, 1, 1, 3, 127);
	n->depthwise = 1;
	n->x_off = n->y_off = -1;
	uint8_t codes[18];
	for (int i = 0; i < 9; i++)
		put16(codes, (size_t)i, 1);
	int64_t bias = 128 * 9; /* true bias 0 */
	n->codes = codes;
	n->bias = &bias;
	uint8_t in[18], out[18];
	for (int i = 0; i < 9; i++)
		put16(in, (size_t)i, (int16_t)(i + 1)); /* 1 2 3 / 4 5 6 / 7 8 9 */
	run_op(&op, CPU_OP_NN16, in, out);
	/* corner (0,0): 1+2+4+5 = 12; top middle: 1+2+3+4+5+6 = 21; centre 45;
	 * bottom right: 5+6+8+9 = 28 */
	assert_int_equal(get16(out, 0), 12);
	assert_int_equal(get16(out, 1), 21);
	assert_int_equal(get16(out, 4), 45);
	assert_int_equal(get16(out, 8), 28);
	/* stride 2: the written 2x2 image is the sums at (0,0), (2,0), (0,2), (2,2) */
	n->pooling = 3;
	n->pool_x = n->pool_y = 2;
	n->out_row = 4, n->out_slice = 8;
	run_op(&op, CPU_OP_NN16, in, out);
	assert_int_equal(get16(out, 0), 12);
	assert_int_equal(get16(out, 1), 16); /* 2+3+5+6 */
	assert_int_equal(get16(out, 2), 24); /* 4+5+7+8 */
	assert_int_equal(get16(out, 3), 28);
}

/* The max pooling with no kernel: 2x2 windows, stride 2, values compared
 * as signed. */
static void test_maxpool(void **state)
{
	(void)state;
	cpu_op op;
	memset(&op, 0, sizeof(op));
	cpu_nn16 *n = &op.u.nn16;
	planar(n, 4, 2, 1, 4, 2, 1);
	n->kind = CPU_NN16_MAXPOOL;
	n->depthwise = 1;
	n->k = 1;
	n->exponent = 127;
	n->pooling = 1;
	n->pool_x = 2, n->pool_y = 1;
	n->out_row = 4, n->out_slice = 4;
	uint8_t in[16], out[4];
	const int16_t v[8] = { -5, -7, 300, -32768, -1, -9, 299, 12 };
	for (int i = 0; i < 8; i++)
		put16(in, (size_t)i, v[i]);
	run_op(&op, CPU_OP_NN16, in, out);
	assert_int_equal(get16(out, 0), -1);  /* max(-5, -7, -1, -9) */
	assert_int_equal(get16(out, 1), 300); /* max(300, -32768, 299, 12) */
}

/* A fused addition: conv term acc / 16 clamped to [-100, 100], plus the
 * second image times 0.5, rounded half away from zero, ReLU after. */
static void test_fused_add(void **state)
{
	(void)state;
	cpu_op op;
	cpu_nn16 *n = new_conv(&op, 3, 1, 1, 1, 1, 123);
	uint8_t codes[2];
	put16(codes, 0, 1);
	int64_t bias = 128; /* true bias 0: acc = x */
	n->codes = codes;
	n->bias = &bias;
	/* fixed point 2^-27: conv 2^23 << 0 (2^-4), b 2^23 << 3 (2^-1), bounds
	 * 100 = 1.5625 x 2^6: 13107200 << 10 */
	cpu_add *a = &n->add;
	a->on = 1;
	a->region = 0;
	a->base = 6; /* after the input's three pixels */
	a->row = 6, a->slice = 6;
	n->add_xstep = 2;
	a->frac = 27;
	a->conv_m = 1u << 23, a->conv_shift = 0;
	a->b_m = 1 << 23, a->b_shift = 3;
	a->has_hi = a->has_lo = 1;
	a->hi = cpu_wide_shl(cpu_wide_of(13107200), 10);
	a->lo = cpu_wide_neg(a->hi);
	uint8_t in[12], out[6];
	const int16_t x[3] = { 800, 3200, 3200 }, b[3] = { 21, -300, 301 };
	for (int i = 0; i < 3; i++) {
		put16(in, (size_t)i, x[i]);
		put16(in, 3 + (size_t)i, b[i]);
	}
	run_op(&op, CPU_OP_NN16, in, out);
	/* 50 + 10.5 = 60.5 -> 61;  min(200, 100) - 150 = -50;  100 + 150.5 = 250.5 -> 251 */
	assert_int_equal(get16(out, 0), 61);
	assert_int_equal(get16(out, 1), -50);
	assert_int_equal(get16(out, 2), 251);
	n->relu = 1;
	run_op(&op, CPU_OP_NN16, in, out);
	assert_int_equal(get16(out, 1), 0);
	assert_int_equal(nbg_cpu_nn16_add(a, -3200, -32768, 0, NBG_CPU_ROUND_AWAY), -16484); /* -100 - 16384 */
	/* the convolution's ReLU before the addition: a negative term is 0,
	 * the sum may stay negative; 50 + 10.5 -> 61 unchanged */
	put16(in, 1, -3200);
	n->relu = NBG_CPU_NN16_RELU_TERM;
	run_op(&op, CPU_OP_NN16, in, out);
	assert_int_equal(get16(out, 0), 61);
	assert_int_equal(get16(out, 1), -150); /* 0 + (-300) x 0.5 */
	assert_int_equal(get16(out, 2), 251);
	/* ReLU after the sum instead: max(-100 - 150, 0) */
	n->relu = NBG_CPU_NN16_RELU_SUM;
	run_op(&op, CPU_OP_NN16, in, out);
	assert_int_equal(get16(out, 1), 0);
	assert_int_equal(nbg_cpu_nn16_add(a, -3200, -300, NBG_CPU_NN16_RELU_TERM, NBG_CPU_ROUND_AWAY), -150);
}

/* Images stored in groups of 16 channels (nbg_cpu_nn16_grouped): channel
 * c of pixel (x, y) at (c / 16) x group + y x row + x x 32 + (c % 16) x 2.
 * A 1x1 depthwise convolution (weights 1, 2, ..., 32, scale 1) of a 2x2x32
 * grouped image into a grouped output, its second image (the fused
 * addition at scale 1) grouped too. */
static void test_grouped(void **state)
{
	(void)state;
	cpu_op op;
	cpu_nn16 *n = new_conv(&op, 2, 2, 32, 32, 1, 127);
	n->depthwise = 1;
	uint8_t codes[64];
	int64_t bias[32];
	for (int c = 0; c < 32; c++) {
		put16(codes, (size_t)c, (int16_t)(c + 1));
		bias[c] = 128 * (c + 1); /* true bias 0 */
	}
	n->codes = codes;
	n->bias = bias;
	/* a 2-pixel row of 16 channels is 64 bytes; a group of 2 rows 128 */
	n->in_grouped = n->out_grouped = 1;
	n->in_row = n->out_row = 64, n->in_slice = n->out_slice = 128;
	n->in_xstep = n->out_xstep = 32;
	static uint8_t in[512], out[256];
	memset(out, 0xee, sizeof(out));
	for (int c = 0; c < 32; c++)
		for (int y = 0; y < 2; y++)
			for (int x = 0; x < 2; x++) /* value 100 c + 10 y + x */
				put16(in, (size_t)(((c / 16) * 128 + y * 64 + x * 32 + (c % 16) * 2) / 2),
				      (int16_t)(100 * c + 10 * y + x));
	run_op(&op, CPU_OP_NN16, in, out);
	/* channel 17 of pixel (1, 1): (1700 + 11) x 18 = 30798, at 128 + 64 + 32 + 2 */
	assert_int_equal(get16(out, (128 + 64 + 32 + 2) / 2), 30798);
	/* channel 0 of (0, 0): 0; channel 1 of (1, 0): 101 x 2, at 32 + 2 */
	assert_int_equal(get16(out, 0), 0);
	assert_int_equal(get16(out, 17), 202);
	/* the fused addition: its second image the input's bytes (at 256),
	 * grouped; channel 17 of (1, 1): 30798 + 1711 = 32509; channel 1 of
	 * (1, 0): 202 + 101 */
	memcpy(in + 256, in, 256);
	cpu_add *a = &n->add;
	a->on = 1, a->region = 0, a->base = 256, a->row = 64, a->slice = 128;
	n->add_grouped = 1, n->add_xstep = 32;
	a->frac = 23, a->conv_m = 1u << 23, a->b_m = 1 << 23;
	run_op(&op, CPU_OP_NN16, in, out);
	assert_int_equal(get16(out, (128 + 64 + 32 + 2) / 2), 32509);
	assert_int_equal(get16(out, 17), 303);
}

/* resize_bilinear_I16toI16_UP (ops/shresize.c): a 2x2 image into 4x4,
 * half-pixel centres.  Output x 0 samples input -0.25 (pixel 0 alone), x 1
 * 0.25 (3/4 of pixel 0, 1/4 of pixel 1), x 2 0.75, x 3 1.25 (pixel 1
 * alone); the same in y; sums in 1/16 rounded half away from zero. */
static void test_resize(void **state)
{
	(void)state;
	cpu_op op;
	memset(&op, 0, sizeof(op));
	cpu_ref *r = &op.u.ref;
	r->kind = CPU_REF_RESIZE;
	r->elt.x = 2, r->elt.y = 2, r->elt.z = 2;
	r->elt.region[0] = 0, r->elt.region[2] = 1;
	r->elt.row[0] = 4, r->elt.slice[0] = 8;
	r->elt.row[2] = 8, r->elt.slice[2] = 32;
	uint8_t in[16], out[64];
	/* channel 0: (0 16 / 32 48); channel 1: (-1 0 / 0 0) */
	const int16_t v[8] = { 0, 16, 32, 48, -1, 0, 0, 0 };
	for (int i = 0; i < 8; i++)
		put16(in, (size_t)i, v[i]);
	run_op(&op, CPU_OP_SHRESIZE, in, out);
	/* channel 0 is 16 x + 32 y at the sample point, clamped to [0, 1]:
	 * rows y = 0, 0.25, 0.75, 1 and columns the same */
	const int16_t want[16] = { 0, 4, 12, 16, 8, 12, 20, 24, 24, 28, 36, 40, 32, 36, 44, 48 };
	for (int i = 0; i < 16; i++)
		assert_int_equal(get16(out, (size_t)i), want[i]);
	/* channel 1 at (1, 1): -1 x 9/16 = -0.5625 -> -1; at (1, 0): -3/4 ->
	 * -1; at (2, 1): -3/16 -> 0; at (0, 0): -1 */
	assert_int_equal(get16(out, 16 + 5), -1);
	assert_int_equal(get16(out, 16 + 1), -1);
	assert_int_equal(get16(out, 16 + 6), 0);
	assert_int_equal(get16(out, 16), -1);
}

/* fp16 (ops/nnf16.c): halves as bits.  1.0 0x3c00, 2.0 0x4000, -1.5
 * 0xbe00, 0.5 0x3800, 2^-14 0x0400 (the smallest normal), 2^-15 0x0200. */
static void fp16_op(cpu_op *op, int kind, uint32_t x)
{
	memset(op, 0, sizeof(*op));
	cpu_nn16 *n = &op->u.nn16;
	planar(n, x, 1, 1, x, 1, 1);
	n->kind = kind;
	n->k = 1;
	n->depthwise = 1;
}

/* The 2x2 max pooling of a 4x2 fp16 image: the largest value unchanged;
 * the SP addition then the ReLU (a sum below the normal range is +0); the
 * NN_LUT ReLU (negative and -0 -> +0). */
static void test_fp16(void **state)
{
	(void)state;
	cpu_op op;
	fp16_op(&op, CPU_NN16_F16_MAXPOOL, 4);
	cpu_nn16 *n = &op.u.nn16;
	n->in_y = n->out_y = 2;
	n->in_slice = 16;
	n->pool_x = 2, n->pool_y = 1;
	n->out_row = 4, n->out_slice = 4;
	uint8_t in[24], out[8];
	const uint16_t v[8] = { 0xbe00, 0x3800, 0x4000, 0xc000, 0xbc00, 0xbe00, 0x3c00, 0x3800 };
	for (int i = 0; i < 8; i++)
		put16(in, (size_t)i, (int16_t)v[i]);
	run_op(&op, CPU_OP_NN16, in, out);
	assert_int_equal((uint16_t)get16(out, 0), 0x3800); /* max(-1.5, 0.5, -1, -1.5) */
	assert_int_equal((uint16_t)get16(out, 1), 0x4000); /* max(2, -2, 1, 0.5) */

	fp16_op(&op, CPU_NN16_F16_ADD, 4);
	n->relu = 1;
	n->add.on = 1;
	n->add.region = 0;
	n->add.base = 8; /* after the input's four values */
	n->add.row = 8, n->add.slice = 8;
	const uint16_t a[4] = { 0x3c00, 0x3c00, 0x0400, 0x3800 }, b[4] = { 0x3800, 0xbe00, 0x8200, 0x3800 };
	for (int i = 0; i < 4; i++) {
		put16(in, (size_t)i, (int16_t)a[i]);
		put16(in, 4 + (size_t)i, (int16_t)b[i]);
	}
	run_op(&op, CPU_OP_NN16, in, out);
	assert_int_equal((uint16_t)get16(out, 0), 0x3e00); /* 1 + 0.5 = 1.5 */
	assert_int_equal((uint16_t)get16(out, 1), 0);      /* 1 - 1.5 < 0: ReLU */
	assert_int_equal((uint16_t)get16(out, 2), 0);      /* 2^-14 - 2^-15 = 2^-15: subnormal, +0 */
	assert_int_equal((uint16_t)get16(out, 3), 0x3c00); /* 0.5 + 0.5 */

	fp16_op(&op, CPU_NN16_F16_RELU, 4);
	n->relu = 1;
	const uint16_t r[4] = { 0xbe00, 0x8000, 0x3800, 0x7bff };
	for (int i = 0; i < 4; i++)
		put16(in, (size_t)i, (int16_t)r[i]);
	run_op(&op, CPU_OP_NN16, in, out);
	assert_int_equal((uint16_t)get16(out, 0), 0);
	assert_int_equal((uint16_t)get16(out, 1), 0);
	assert_int_equal((uint16_t)get16(out, 2), 0x3800);
	assert_int_equal((uint16_t)get16(out, 3), 0x7bff); /* the largest half, unchanged */
}

/* NT: a 3x2 image of 2-byte elements (rows 8 bytes apart) into 2x3 (rows
 * 6 bytes apart): out(x, y) = in(y, x). */
static void test_transpose(void **state)
{
	(void)state;
	cpu_op op;
	memset(&op, 0, sizeof(op));
	cpu_nn16 *n = &op.u.nn16;
	n->kind = CPU_NN16_TRANSPOSE;
	n->esize = 2;
	n->in_x = 3, n->in_y = 2;
	n->out_z = 1; /* one slice */
	n->in_row = 8, n->out_row = 6;
	n->in_region = 0, n->out_region = 1;
	uint8_t in[16], out[18];
	memset(out, 0xee, sizeof(out));
	const int16_t v[8] = { 1, 2, 3, 99, 4, 5, 6, 99 }; /* rows (1 2 3) and (4 5 6), one gap each */
	for (int i = 0; i < 8; i++)
		put16(in, (size_t)i, v[i]);
	run_op(&op, CPU_OP_NN16, in, out);
	/* rows (1 4), (2 5), (3 6), each 6 bytes apart: element 3k and 3k + 1 */
	const int16_t want[6] = { 1, 4, 2, 5, 3, 6 };
	for (int k = 0; k < 3; k++) {
		assert_int_equal(get16(out, 3 * (size_t)k), want[2 * k]);
		assert_int_equal(get16(out, 3 * (size_t)k + 1), want[2 * k + 1]);
		assert_int_equal(out[6 * k + 4], 0xee); /* the row's gap untouched */
	}
}

/* TensorPadOperation2: 2 rows of 4 bytes into 3 rows, the last 0. */
static void test_pad(void **state)
{
	(void)state;
	cpu_op op;
	memset(&op, 0, sizeof(op));
	cpu_ref *r = &op.u.ref;
	r->kind = CPU_REF_PAD;
	r->width = 4;
	r->elt.y = 2;
	r->rows = 3;
	r->elt.region[0] = 0, r->elt.region[2] = 1;
	r->elt.row[0] = 4, r->elt.row[2] = 8;
	uint8_t in[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, out[24];
	memset(out, 0xee, sizeof(out));
	run_op(&op, CPU_OP_SHPAD, in, out);
	const uint8_t want[24] = { 1, 2, 3, 4, 0xee, 0xee, 0xee, 0xee, 5, 6, 7, 8, 0xee, 0xee, 0xee, 0xee,
				   0, 0, 0, 0, 0xee, 0xee, 0xee, 0xee };
	assert_memory_equal(out, want, sizeof(want));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conv_1x1),
		cmocka_unit_test(test_depthwise_border_stride),
		cmocka_unit_test(test_maxpool),
		cmocka_unit_test(test_fused_add),
		cmocka_unit_test(test_grouped),
		cmocka_unit_test(test_resize),
		cmocka_unit_test(test_fp16),
		cmocka_unit_test(test_transpose),
		cmocka_unit_test(test_pad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
