/*
 * test_cpu_paths.c - every convolution path this build compiled and this
 * CPU runs (lib/cpu/ops/conv_fast.h: AVX-512 VNNI 8-bit and int16, AVX2), on one and
 * on several threads, against the portable 32-bit kernels of
 * lib/cpu/ops/conv.c byte for byte.  The expected bytes come from those
 * portable kernels, an independent implementation (scalar loops over the
 * unpaired int16 planes, no vector instructions, one thread), which the
 * test cpu-conv checks against a direct four-loop convolution.  Half the
 * random layers have weights within 128 of their zero point, so that a
 * path with an 8-bit layout (AVX-512 VNNI's vpdpbusd) computes them; the
 * others take its int16 one.
 *
 * The layers: random shapes, and the edges a vector kernel could get
 * wrong: zero points 0, 128 and 255 for input, weights and output; int8
 * data; kernel sizes 1, 3, 5 and 7; input offsets that put the border on
 * every side; subsampled (strided) outputs; odd input and output channel
 * counts; widths that are not a multiple of a vector's positions; a 1x1
 * convolution as a matrix product; a fully connected layer (the kernel
 * the whole image); depthwise convolutions (which the vector paths hand
 * back to the portable kernels); weights and inputs at their extremes;
 * both rounding modes (rounding_mode 0, half away from zero, and 1, half
 * to even: each layer one of them), and tie-heavy layers (small sums,
 * scales 1/2 to 1/8 and 3/4 to 3/16, where a quarter or more of the
 * outputs are exact ties), whose outputs under the two modes must differ
 * (counted: the ties reach every path under both rules).  Which paths ran,
 * and which this CPU lacks, is printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu/ops/conv_fast.h"

static uint32_t seed = 4511;

static uint32_t rnd(uint32_t n)
{
	seed = seed * 1664525u + 1013904223u;
	return (seed >> 9) % n;
}

typedef struct shape {
	uint32_t in_x, in_y, in_z, out_x, out_y, out_z, k;
	int32_t x_off, y_off;
	uint32_t in_zp, w_zp, out_zp, pooling;
	int depthwise, sgn, extreme; /* extreme: codes and inputs 0 or 255 only */
	int narrow;                  /* codes within 128 of the weights' zero point (the 8-bit layout) */
	int ties;                    /* small sums at a scale of few fraction bits: many exact ties */
} shape;

typedef struct layer {
	cpu_conv cv;
	uint8_t *codes, *in;
	int32_t *bias;
	size_t in_size, out_size;
} layer;

static uint8_t byte_of(const shape *s)
{
	return s->extreme ? (rnd(2) ? 255 : 0) : (uint8_t)rnd(256);
}

static void make_layer(layer *l, const shape *s)
{
	memset(l, 0, sizeof(*l));
	cpu_conv *cv = &l->cv;
	cv->in_x = s->in_x, cv->in_y = s->in_y, cv->in_z = s->depthwise ? s->out_z : s->in_z;
	cv->out_x = s->out_x, cv->out_y = s->out_y, cv->out_z = s->out_z, cv->k = s->k;
	cv->x_off = s->x_off, cv->y_off = s->y_off, cv->depthwise = s->depthwise, cv->sgn = s->sgn;
	cv->in_zp = s->in_zp, cv->w_zp = s->w_zp, cv->out_zp = s->out_zp;
	cv->relu = (int)rnd(2);
	cv->even = (int)rnd(2);
	cv->mantissa = rnd(1u << 23);
	cv->exponent = 127 - 6 - rnd(12);
	if (s->ties) { /* (2^23 or 3 x 2^22) x 2^(exponent - 150): 1/2 .. 1/8 or 3/4 .. 3/16 */
		cv->mantissa = rnd(2) ? 0x400000u : 0;
		cv->exponent = 126 - rnd(3);
	}
	cv->pooling = s->pooling;
	cv->pool_x = s->pooling ? (s->out_x + 1) / 2 : s->out_x;
	cv->pool_y = s->pooling ? (s->out_y + 1) / 2 : s->out_y;
	cv->in_base = rnd(5);
	cv->in_row = cv->in_x + rnd(3);
	cv->in_slice = (uint64_t)cv->in_row * cv->in_y + rnd(3);
	cv->out_row = cv->pool_x;
	cv->out_slice = (uint64_t)cv->pool_x * cv->pool_y;
	cv->out_region = 1;
	l->in_size = cv->in_base + (size_t)cv->in_slice * cv->in_z;
	l->out_size = (size_t)cv->out_slice * cv->out_z;
	size_t n = (size_t)(s->depthwise ? 1 : cv->in_z) * cv->k * cv->k * cv->out_z;
	l->codes = malloc(n);
	l->bias = malloc(cv->out_z * sizeof(int32_t));
	l->in = malloc(l->in_size);
	assert_true(l->codes && l->bias && l->in);
	for (size_t i = 0; i < n; i++) {
		l->codes[i] = byte_of(s);
		if (s->ties) /* w - w_zp in -1..1 */
			l->codes[i] = s->sgn ? (uint8_t)(rnd(3) + 255) : (uint8_t)(s->w_zp == 0 ? rnd(2) : s->w_zp == 255 ? 254 + rnd(2) : s->w_zp - 1 + rnd(3));
		else if (s->narrow && !s->sgn) /* w - w_zp in [-128, 127] */
			l->codes[i] = (uint8_t)(s->w_zp < 128 ? l->codes[i] % (s->w_zp + 128)
							     : s->w_zp - 128 + l->codes[i] % (383 - s->w_zp));
	}
	for (uint32_t o = 0; o < cv->out_z; o++)
		l->bias[o] = s->ties ? (int32_t)rnd(401) - 200 : (int32_t)rnd(200001) - 100000;
	for (size_t i = 0; i < l->in_size; i++)
		l->in[i] = byte_of(s);
	cv->codes = l->codes;
	cv->bias = l->bias;
}

static uint8_t *run(const layer *l, const cpu_conv_path *path, uint32_t threads, int portable)
{
	cpu_conv cv = l->cv;
	cv.acc32 = 1;
	cv.path = path;
	cv.threads = threads;
	cv.portable = portable;
	uint8_t *out = malloc(l->out_size);
	assert_non_null(out);
	memset(out, 0x5a, l->out_size);
	uint8_t *buf[2] = { l->in, out };
	assert_int_equal(nbg_cpu_conv_run(&cv, buf), 0);
	return out;
}

static int paths_run; /* layers a vector path computed */
static long mode_differs; /* bytes the two rounding modes give differently, over the tie-heavy layers */
static int int8_weights; /* layers whose weights fit the 8-bit layout */

/* Every usable path on 1, 2 and 3 threads against the portable kernels. */
static void check_layer(const shape *s, const char *what)
{
	layer l;
	make_layer(&l, s);
	if (!nbg_cpu_conv_fits_int32(&l.cv))
		fail_msg("%s: the layer's sums are not bounded in int32; the test needs them to be", what);
	uint8_t *expect = run(&l, NULL, 1, 1);
	if (s->ties) {
		l.cv.even = !l.cv.even;
		uint8_t *other = run(&l, NULL, 1, 1);
		l.cv.even = !l.cv.even;
		for (size_t i = 0; i < l.out_size; i++)
			mode_differs += other[i] != expect[i];
		free(other);
	}
	int8_weights += !s->depthwise && nbg_cpu_conv_fits_int8(&l.cv);
	size_t n;
	const cpu_conv_path *const *paths = nbg_cpu_conv_paths(&n);
	for (size_t p = 0; p < n; p++) {
		if (paths[p]->usable && !paths[p]->usable())
			continue;
		for (uint32_t t = 1; t <= 3; t++) {
			uint8_t *got = run(&l, paths[p], t, 0);
			for (size_t i = 0; i < l.out_size; i++)
				if (got[i] != expect[i])
					fail_msg("%s on %s, %u threads (%ux%ux%u -> %ux%ux%u, k %u, dw %d, int8 %d, "
						 "off %d,%d, zero points %u/%u/%u, pool %u, rounding mode %d): byte %zu "
						 "is %u, the portable kernels give %u", what, paths[p]->name, t, s->in_x,
						 s->in_y, l.cv.in_z, s->out_x, s->out_y, s->out_z, s->k, s->depthwise,
						 s->sgn, s->x_off, s->y_off, s->in_zp, s->w_zp, s->out_zp, s->pooling,
						 l.cv.even, i, got[i], expect[i]);
			free(got);
		}
		paths_run += paths[p]->kern && !s->depthwise;
	}
	free(expect);
	free(l.codes);
	free(l.in);
	free(l.bias);
}

/* The same output size for kernel k and offset off: out + k - 1 input
 * columns starting at off, within in (+-2 past each side). */
static shape random_shape(void)
{
	static const uint32_t ks[] = { 1, 3, 5, 7 };
	static const uint32_t zps[] = { 0, 128, 255 };
	shape s = { 0 };
	s.k = ks[rnd(4)];
	s.out_x = 1 + rnd(37);
	s.out_y = 1 + rnd(13);
	s.out_z = 1 + rnd(15);
	s.in_z = 1 + rnd(19);
	s.x_off = -(int32_t)(s.k / 2) - (int32_t)rnd(2);
	s.y_off = -(int32_t)(s.k / 2) + (int32_t)rnd(2);
	s.in_x = s.out_x + rnd(3);
	s.in_y = s.out_y + rnd(3);
	s.depthwise = rnd(5) == 0;
	s.sgn = rnd(4) == 0;
	if (!s.sgn) {
		s.in_zp = rnd(2) ? zps[rnd(3)] : rnd(256);
		s.w_zp = rnd(2) ? zps[rnd(3)] : rnd(256);
		s.out_zp = rnd(2) ? zps[rnd(3)] : rnd(256);
	}
	s.pooling = rnd(4) == 0 ? 3 : rnd(4) == 0 ? 1 : 0;
	s.extreme = rnd(8) == 0;
	s.narrow = rnd(2) == 0;
	return s;
}

/* A tie-heavy layer: kernels 1 or 3, 1 to 4 input channels, weights
 * within 1 of their zero point and small biases, so that the sums stay
 * within a few hundred and the scale (make_layer) leaves ties in range. */
static shape ties_shape(void)
{
	shape s = random_shape();
	s.k = rnd(2) ? 1 : 3;
	s.x_off = -(int32_t)(s.k / 2);
	s.y_off = -(int32_t)(s.k / 2);
	s.in_x = s.out_x;
	s.in_y = s.out_y;
	s.in_z = 1 + rnd(4);
	s.extreme = 0;
	s.narrow = 1;
	s.ties = 1;
	return s;
}

static void test_random(void **state)
{
	(void)state;
	char what[32];
	for (int i = 0; i < 300; i++) {
		shape s = random_shape();
		snprintf(what, sizeof(what), "random layer %d", i);
		check_layer(&s, what);
	}
	for (int i = 0; i < 100; i++) {
		shape s = ties_shape();
		snprintf(what, sizeof(what), "tie-heavy layer %d", i);
		check_layer(&s, what);
	}
}

static void test_edges(void **state)
{
	(void)state;
	static const shape edges[] = {
		/* 56x56x64 -> 64, 3x3 and 1x1 (the benchmark's) */
		{ 56, 56, 64, 56, 56, 64, 3, -1, -1, 128, 128, 128, 0, 0, 0, 0, 0, 0 },
		{ 56, 56, 64, 56, 56, 64, 1, 0, 0, 0, 255, 255, 0, 0, 0, 0, 1, 0 },
		/* a fully connected layer: the kernel is the image */
		{ 7, 7, 33, 1, 1, 1001 % 97, 7, 0, 0, 3, 140, 7, 0, 0, 0, 0, 0, 0 },
		/* odd channels, 7x7 stride 2 (subsampled as first-pixel pooling) */
		{ 35, 21, 3, 35, 21, 13, 7, -3, -3, 255, 0, 0, 3, 0, 0, 0, 1, 0 },
		/* int8 data, odd everything */
		{ 17, 9, 31, 17, 9, 7, 5, -2, -2, 0, 0, 0, 0, 0, 1, 0, 0, 0 },
		/* extremes: every term +-255 x 255 (then 8-bit: -128 or -1 x 255), 128 taps */
		{ 19, 5, 128, 19, 5, 6, 1, 0, 0, 0, 0, 255, 1, 0, 0, 1, 0, 0 },
		{ 19, 5, 128, 19, 5, 6, 1, 0, 0, 255, 255, 0, 0, 0, 0, 1, 1, 0 },
		/* depthwise, handed back to the portable kernels */
		{ 23, 11, 0, 23, 11, 9, 3, -1, -1, 128, 128, 128, 0, 1, 0, 0, 0, 0 },
		/* one position, one channel */
		{ 1, 1, 1, 1, 1, 1, 1, 0, 0, 7, 9, 11, 0, 0, 0, 0, 1, 0 },
	};
	char what[32];
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		snprintf(what, sizeof(what), "edge layer %zu", i);
		check_layer(&edges[i], what);
	}
}

static void test_report(void **state)
{
	(void)state;
	size_t n;
	const cpu_conv_path *const *paths = nbg_cpu_conv_paths(&n);
	for (size_t p = 0; p < n; p++)
		printf("path %s: %s\n", paths[p]->name,
		       !paths[p]->usable || paths[p]->usable() ? "tested" : "not run: this CPU lacks its instructions");
	printf("the process's choice: %s; layers a vector path computed: %d; layers whose weights fit the "
	       "8-bit layout: %d; bytes of the tie-heavy layers the two rounding modes give differently: %ld\n",
	       nbg_cpu_conv_path()->name, paths_run, int8_weights, mode_differs);
	/* the random layers reach both layouts of the paths that have two */
	assert_true(int8_weights > 50);
	/* the ties reach the paths, which must round them as the mode says */
	assert_true(mode_differs > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
