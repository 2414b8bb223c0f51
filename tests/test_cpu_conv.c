/*
 * test_cpu_conv.c - the CPU backend's convolution kernels
 * (lib/cpu/run.c) against a direct convolution written here.
 *
 * The backend has two paths: 32-bit blocked kernels, taken when the plan
 * proves no sum leaves int32 (nbg_cpu_conv_fits_int32), and the 64-bit
 * per-channel loop otherwise.  Both must give the same bytes as the plain
 * four-loop convolution below (64-bit sums, the requantization written
 * again in 64 bits where the sums allow it): on random shapes (conv and depthwise,
 * kernel 1 to 5, offsets -3..+3 so borders are hit, output channel counts
 * that are not multiples of the kernels' group of 4, row and slice strides
 * with gaps, pooling none / 2x2 max / first pixel), each shape run once
 * with acc32 as the plan sets it and once forced to the 64-bit path; and on
 * a layer whose sums really pass 2^31 (4096 x 3 x 3 taps of 255 x 255),
 * for which the plan's bound must refuse the 32-bit path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu/ops/conv.h"

static uint32_t rng_state = 2027;

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return (rng_state >> 8) % n;
}

/* acc x (2^23 + m) x 2^(e - 150), half away from zero, + zp, ReLU, 0..255.
 * Every sum here stays below 2^40 in magnitude (asserted: 4096 x 3 x 3 taps
 * of 255 x 255 plus a bias are below 2^32), so |acc| x (2^23 + m) < 2^64
 * is exact in 64 unsigned bits, without the backend's 128-bit arithmetic. */
static uint8_t ref_requant(int64_t acc, uint32_t m, uint32_t e, uint32_t zp, int relu)
{
	int shift = 150 - (int)e; /* the cases below keep 0 < shift < 64 */
	assert_true(shift > 0 && shift < 64);
	assert_true(acc > -(1ll << 40) && acc < (1ll << 40));
	uint64_t mag = (uint64_t)(acc < 0 ? -acc : acc) * ((1u << 23) | m);
	int64_t q = (int64_t)((mag >> shift) + ((mag >> (shift - 1)) & 1)); /* the bit below rounds up */
	if (acc < 0)
		q = -q;
	q += zp;
	if (relu && q < zp)
		q = zp;
	return (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
}

typedef struct layer {
	cpu_conv cv;
	uint8_t *codes;
	int32_t *bias;
	uint8_t *in, *out_fast, *out_slow;
	size_t in_size, out_size;
} layer;

/* The written image, computed directly into out (same addressing). */
static void reference(const cpu_conv *cv, const uint8_t *in, uint8_t *out)
{
	uint32_t kz = cv->depthwise ? 1 : cv->in_z;
	uint8_t *plane = malloc((size_t)cv->out_x * cv->out_y);
	assert_non_null(plane);
	for (uint32_t o = 0; o < cv->out_z; o++) {
		for (uint32_t y = 0; y < cv->out_y; y++)
			for (uint32_t x = 0; x < cv->out_x; x++) {
				int64_t acc = cv->bias[o];
				for (uint32_t z = 0; z < kz; z++)
					for (uint32_t ky = 0; ky < cv->k; ky++)
						for (uint32_t kx = 0; kx < cv->k; kx++) {
							int64_t iy = (int64_t)y + ky + cv->y_off;
							int64_t ix = (int64_t)x + kx + cv->x_off;
							uint32_t c = cv->depthwise ? o : z;
							int64_t v = cv->in_zp; /* the border */
							if (iy >= 0 && iy < cv->in_y && ix >= 0 && ix < cv->in_x)
								v = in[cv->in_base + c * cv->in_slice + iy * cv->in_row + ix];
							int64_t w = cv->codes[((o * kz + z) * cv->k + ky) * cv->k + kx];
							acc += (w - cv->w_zp) * (v - cv->in_zp);
						}
				plane[y * cv->out_x + x] = ref_requant(acc, cv->mantissa, cv->exponent,
								       cv->out_zp, cv->relu);
			}
		for (uint32_t py = 0; py < cv->pool_y; py++)
			for (uint32_t px = 0; px < cv->pool_x; px++) {
				uint8_t v;
				if (cv->pooling == 0) {
					v = plane[py * cv->out_x + px];
				} else if (cv->pooling == 3) {
					v = plane[2 * py * cv->out_x + 2 * px];
				} else {
					v = 0;
					for (uint32_t y = 2 * py; y < 2 * py + 2 && y < cv->out_y; y++)
						for (uint32_t x = 2 * px; x < 2 * px + 2 && x < cv->out_x; x++)
							v = plane[y * cv->out_x + x] > v ? plane[y * cv->out_x + x] : v;
				}
				out[cv->out_base + o * cv->out_slice + py * cv->out_row + px] = v;
			}
	}
	free(plane);
}

static void layer_free(layer *l)
{
	free(l->codes);
	free(l->bias);
	free(l->in);
	free(l->out_fast);
	free(l->out_slow);
}

/* Runs l through the backend (acc32 as given) into out and compares. */
static void run_and_compare(layer *l, uint8_t *out, int acc32, const char *what)
{
	cpu_conv cv = l->cv;
	cv.acc32 = acc32;
	memset(out, 0xa5, l->out_size);
	uint8_t *buf[2] = { l->in, out };
	assert_int_equal(nbg_cpu_conv_run(&cv, buf), 0);
	uint8_t *expect = malloc(l->out_size);
	assert_non_null(expect);
	memset(expect, 0xa5, l->out_size);
	reference(&cv, l->in, expect);
	for (size_t i = 0; i < l->out_size; i++)
		if (expect[i] != out[i])
			fail_msg("%s (%s path, %ux%ux%u -> %ux%ux%u, k %u, dw %d, off %d,%d, pool %u): byte %zu is "
				 "%u, the direct convolution gives %u", what, acc32 ? "32-bit" : "64-bit",
				 cv.in_x, cv.in_y, cv.in_z, cv.out_x, cv.out_y, cv.out_z, cv.k, cv.depthwise,
				 cv.x_off, cv.y_off, cv.pooling, i, out[i], expect[i]);
	free(expect);
}

static void random_layer(layer *l)
{
	memset(l, 0, sizeof(*l));
	cpu_conv *cv = &l->cv;
	cv->depthwise = rnd(3) == 0;
	cv->k = cv->kh = 1 + rnd(5);
	cv->out_x = 1 + rnd(40);
	cv->out_y = 1 + rnd(20);
	cv->out_z = 1 + rnd(11);
	cv->in_z = cv->depthwise ? cv->out_z : 1 + rnd(9);
	cv->x_off = (int32_t)rnd(7) - 3;
	cv->y_off = (int32_t)rnd(7) - 3;
	cv->in_x = 1 + rnd(cv->out_x + cv->k + 2);
	cv->in_y = 1 + rnd(cv->out_y + cv->k + 2);
	cv->in_zp = rnd(256);
	cv->out_zp = rnd(256);
	cv->w_zp = rnd(256);
	cv->relu = (int)rnd(2);
	/* scales 2^-8 .. 2^-20: shifts 9..21 with the mantissa */
	cv->mantissa = rnd(1u << 23);
	cv->exponent = 127 - 8 - rnd(13);
	uint32_t p = rnd(3);
	cv->pooling = p == 0 ? 0 : p == 1 ? 1 : 3;
	cv->pool_x = cv->pooling ? (cv->out_x + 1) / 2 : cv->out_x;
	cv->pool_y = cv->pooling ? (cv->out_y + 1) / 2 : cv->out_y;
	if (cv->pooling == 3) { /* the first pixel exists for every window */
		cv->pool_x = (cv->out_x + 1) / 2;
		cv->pool_y = (cv->out_y + 1) / 2;
	}
	cv->in_base = rnd(9);
	cv->in_row = cv->in_x + rnd(4);
	cv->in_slice = (uint64_t)cv->in_row * cv->in_y + rnd(5);
	cv->out_base = rnd(7);
	cv->out_row = cv->pool_x + rnd(3);
	cv->out_slice = (uint64_t)cv->out_row * cv->pool_y + rnd(4);
	l->in_size = cv->in_base + (size_t)cv->in_slice * cv->in_z;
	l->out_size = cv->out_base + (size_t)cv->out_slice * cv->out_z;
	cv->in_region = 0;
	cv->out_region = 1;
	size_t taps = (size_t)(cv->depthwise ? 1 : cv->in_z) * cv->k * cv->k;
	l->codes = malloc(taps * cv->out_z);
	l->bias = malloc(cv->out_z * sizeof(int32_t));
	l->in = malloc(l->in_size);
	l->out_fast = malloc(l->out_size);
	l->out_slow = malloc(l->out_size);
	assert_true(l->codes && l->bias && l->in && l->out_fast && l->out_slow);
	for (size_t i = 0; i < taps * cv->out_z; i++)
		l->codes[i] = (uint8_t)rnd(256);
	for (uint32_t o = 0; o < cv->out_z; o++)
		l->bias[o] = (int32_t)rnd(2000001) - 1000000;
	for (size_t i = 0; i < l->in_size; i++)
		l->in[i] = (uint8_t)rnd(256);
	cv->codes = l->codes;
	cv->bias = l->bias;
}

static void test_random_layers(void **state)
{
	(void)state;
	int fast = 0;
	for (int i = 0; i < 400; i++) {
		layer l;
		random_layer(&l);
		int acc32 = nbg_cpu_conv_fits_int32(&l.cv);
		fast += acc32;
		char what[32];
		snprintf(what, sizeof(what), "layer %d", i);
		run_and_compare(&l, l.out_fast, acc32, what);
		run_and_compare(&l, l.out_slow, 0, what);
		layer_free(&l);
	}
	/* the bound holds for these small layers: the 32-bit path was tested */
	assert_int_equal(fast, 400);
}

/* 4096 x 3 x 3 taps of (255 - 0) x (255 - 0): the centre's sum is 2.4e9 > 2^31. */
static void test_sums_past_int32(void **state)
{
	(void)state;
	layer l;
	memset(&l, 0, sizeof(l));
	cpu_conv *cv = &l.cv;
	cv->k = cv->kh = 3;
	cv->in_x = cv->in_y = cv->out_x = cv->out_y = 3;
	cv->x_off = cv->y_off = -1;
	cv->in_z = 4096;
	cv->out_z = 2;
	cv->pool_x = cv->pool_y = 3;
	cv->in_row = cv->out_row = 3;
	cv->in_slice = cv->out_slice = 9;
	cv->exponent = 127 - 24; /* the scale 2^-24 */
	cv->out_region = 1;
	l.in_size = 9 * 4096;
	l.out_size = 18;
	l.codes = malloc(2 * 4096 * 9);
	l.bias = calloc(2, sizeof(int32_t));
	l.in = malloc(l.in_size);
	l.out_fast = malloc(l.out_size);
	assert_true(l.codes && l.bias && l.in && l.out_fast);
	memset(l.codes, 255, 4096 * 9);          /* channel 0: w - 0 = 255 */
	memset(l.codes + 4096 * 9, 0, 4096 * 9); /* channel 1: w - 0 = 0 */
	memset(l.in, 255, l.in_size);
	cv->codes = l.codes;
	cv->bias = l.bias;
	assert_false(nbg_cpu_conv_fits_int32(cv));
	run_and_compare(&l, l.out_fast, 0, "sums past int32");
	/* by hand: centre 9 x 4096 x 65025 = 2397081600, / 2^24 = 142.88 -> 143;
	 * corner 4 x 4096 x 65025 = 1065369600, / 2^24 = 63.50009 -> 64 */
	assert_int_equal(l.out_fast[4], 143);
	assert_int_equal(l.out_fast[0], 64);
	assert_int_equal(l.out_fast[9 + 4], 0);
	/* channel 1 alone (all weights at the zero point) is bounded by 0 */
	cv->out_z = 1;
	cv->codes = l.codes + 4096 * 9;
	cv->bias = l.bias + 1;
	assert_true(nbg_cpu_conv_fits_int32(cv));
	layer_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_layers),
		cmocka_unit_test(test_sums_past_int32),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
