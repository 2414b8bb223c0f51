/*
 * test_half.c - the library's one fp16 / bf16 converter (lib/common/half.c),
 * linked from the static library, against values derived here from the
 * formats' definitions with ldexp, not from its bit manipulations:
 *  - widening: all 65,536 fp16 and all 65,536 bf16 values, each the number
 *    its sign, exponent and mantissa fields define (subnormals, signed
 *    zeros, infinities), a NaN keeping its sign and payload;
 *  - narrowing: the nearest value found by binary search in the table of
 *    all finite values of the format, ties to the even mantissa, past the
 *    largest finite value's half-way point infinity: for every finite value,
 *    every half-way point between two neighbours and the numbers one and a
 *    few units of the last place (float and double) either side, the
 *    overflow threshold, a stride of 2^20 floats over all bit patterns; the
 *    fp16 of a double is rounded once (a double just past a half-way point
 *    that a float would round onto it); NaNs of every sign and payload.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/half.h"

/* A format of 16 bits: 1 sign, E exponent, M mantissa bits. */
typedef struct {
	unsigned e, m;
	double value[0x8000]; /* the non-negative codes 0..0x7fff; NaN marked */
	unsigned finite;      /* codes 0..finite-1 are the finite ones */
} format;

static format fp16 = { 5, 10, { 0 }, 0 }, bf16 = { 8, 7, { 0 }, 0 };

static uint32_t float_bits(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof(x));
	return x;
}

static float bits_float(uint32_t x)
{
	float f;
	memcpy(&f, &x, sizeof(f));
	return f;
}

/* What code c (sign bit clear) is, from the definition: a subnormal
 * mantissa x 2^(1 - bias - M), a normal (2^M + mantissa) x 2^(exp - bias - M),
 * infinity, NaN. */
static double definition(const format *f, unsigned c)
{
	unsigned ex = c >> f->m, man = c & ((1u << f->m) - 1);
	int bias = (1 << (f->e - 1)) - 1;
	if (ex == (1u << f->e) - 1)
		return man ? NAN : INFINITY;
	if (ex == 0)
		return ldexp(man, 1 - bias - (int)f->m);
	return ldexp((double)((1u << f->m) + man), (int)ex - bias - (int)f->m);
}

static void build(format *f)
{
	for (unsigned c = 0; c < 0x8000; c++)
		f->value[c] = definition(f, c);
	f->finite = ((1u << f->e) - 1) << f->m;
	for (unsigned c = 1; c < f->finite; c++)
		assert_true(f->value[c] > f->value[c - 1]); /* the table is sorted */
}

/* The code nearest v (not NaN), ties to even; at or past the half-way point
 * between the largest finite value and the next power of two: infinity. */
static uint16_t nearest(const format *f, double v)
{
	uint16_t sign = signbit(v) ? 0x8000 : 0;
	v = fabs(v);
	double top = ldexp(1.0, (1 << (f->e - 1))); /* where the exponent would run out */
	if (v >= top)
		return (uint16_t)(sign | f->finite);
	unsigned lo = 0, hi = f->finite; /* value[lo] <= v < value[hi] (top at finite) */
	while (hi - lo > 1) {
		unsigned mid = (lo + hi) / 2;
		if (f->value[mid] <= v)
			lo = mid;
		else
			hi = mid;
	}
	double a = f->value[lo], b = hi == f->finite ? top : f->value[hi];
	double below = v - a, above = b - v; /* exact: v is within a factor of 2 of a (or a is 0) */
	unsigned c = below < above ? lo : below > above ? hi : (lo & 1 ? hi : lo);
	return (uint16_t)(sign | c);
}

static void check_fp16_double(double v)
{
	uint16_t want = nearest(&fp16, v), got = nbg_fp16_from_double(v);
	if (got != want)
		fail_msg("fp16 of %a: 0x%04x, the nearest is 0x%04x", v, got, want);
}

static void check_fp16_float(float v)
{
	uint16_t want = nearest(&fp16, v), got = nbg_fp16_from_float(v);
	if (got != want)
		fail_msg("fp16 of float %a: 0x%04x, the nearest is 0x%04x", (double)v, got, want);
}

static void check_bf16(float v)
{
	uint16_t want = nearest(&bf16, v), got = nbg_bf16_from_float(v);
	if (got != want)
		fail_msg("bf16 of %a: 0x%04x, the nearest is 0x%04x", (double)v, got, want);
}

static void test_widen(void **state)
{
	(void)state;
	for (uint32_t h = 0; h < 0x10000; h++) {
		double want = definition(&fp16, h & 0x7fff);
		float got = nbg_fp16_to_float((uint16_t)h);
		uint32_t bits = float_bits(got);
		if (isnan(want)) { /* a NaN: its sign, and its payload in the top mantissa bits */
			assert_true(isnan(got));
			assert_int_equal(bits, (h & 0x8000u) << 16 | 0x7f800000u | (h & 0x3ffu) << 13);
		} else {
			assert_int_equal(bits, float_bits((float)(h & 0x8000 ? -want : want)));
		}
		want = definition(&bf16, h & 0x7fff);
		got = nbg_bf16_to_float((uint16_t)h);
		bits = float_bits(got);
		assert_int_equal(bits, (uint32_t)h << 16); /* a NaN's payload too */
		if (!isnan(want))
			assert_true((double)got == (h & 0x8000 ? -want : want));
		else
			assert_true(isnan(got));
	}
}

/* Every finite value, every half-way point and its neighbours: a float and
 * a double ulp either side, and a double a few parts in 2^30..2^50 off. */
static void test_fp16_rounding(void **state)
{
	(void)state;
	for (unsigned c = 0; c < fp16.finite; c++) {
		double a = fp16.value[c], b = c + 1 < fp16.finite ? fp16.value[c + 1] : 65536.0;
		double mid = (a + b) / 2; /* exact, and as a float too: 12 significant bits */
		double cases[] = { a, mid, nextafter(mid, 0), nextafter(mid, INFINITY),
				   mid + ldexp(mid, -30), mid - ldexp(mid, -30),
				   mid + ldexp(mid, -50), mid - ldexp(mid, -50) };
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			check_fp16_double(cases[i]);
			check_fp16_double(-cases[i]);
		}
		float fcases[] = { (float)a, (float)mid, nextafterf((float)mid, 0),
				   nextafterf((float)mid, INFINITY) };
		for (size_t i = 0; i < sizeof(fcases) / sizeof(fcases[0]); i++) {
			check_fp16_float(fcases[i]);
			check_fp16_float(-fcases[i]);
		}
	}
	/* a stride over every float bit pattern that is not a NaN */
	for (uint64_t x = 0; x <= 0xffffffffu; x += 4099) {
		float f = bits_float((uint32_t)x);
		if (!isnan(f)) {
			check_fp16_float(f);
			check_fp16_double(f);
		}
	}
}

/* The cases named by the format's rules, checked by value. */
static void test_fp16_edges(void **state)
{
	(void)state;
	assert_int_equal(nbg_fp16_from_float(65504.0f), 0x7bff);  /* the largest finite */
	assert_int_equal(nbg_fp16_from_float(65519.99f), 0x7bff); /* below the half-way point */
	assert_int_equal(nbg_fp16_from_float(65520.0f), 0x7c00);  /* the half-way point: to even, inf */
	assert_int_equal(nbg_fp16_from_float(FLT_MAX), 0x7c00);
	assert_int_equal(nbg_fp16_from_double(1e300), 0x7c00);
	assert_int_equal(nbg_fp16_from_double(-INFINITY), 0xfc00);
	assert_int_equal(nbg_fp16_from_double(0x1p-24), 0x0001);  /* the least subnormal */
	assert_int_equal(nbg_fp16_from_double(0x1p-25), 0x0000);  /* half of it: to even, 0 */
	assert_int_equal(nbg_fp16_from_double(nextafter(0x1p-25, 1)), 0x0001);
	assert_int_equal(nbg_fp16_from_double(0x3p-25), 0x0002);  /* 1.5 units: to even, 2 */
	assert_int_equal(nbg_fp16_from_double(-0x1p-26), 0x8000); /* a negative zero */
	assert_int_equal(nbg_fp16_from_double(0x1p-14 - 0x1p-25), 0x0400); /* carries into the least normal */
	assert_int_equal(nbg_fp16_from_double(5e-324), 0x0000);   /* a double subnormal */
	assert_int_equal(nbg_fp16_from_float(1.0f + 0x1p-11f), 0x3c00); /* a tie: to even */
	assert_int_equal(nbg_fp16_from_float(1.0f + 0x3p-11f), 0x3c02);
	/* rounded once: as a float this double would be the tie 1 + 2^-11 */
	assert_int_equal(nbg_fp16_from_double(1.0 + 0x1p-11 + 0x1p-40), 0x3c01);
	assert_int_equal(nbg_fp16_from_float((float)(1.0 + 0x1p-11 + 0x1p-40)), 0x3c00);
	/* NaNs: the quiet NaN of the same sign, whatever the payload */
	const uint32_t nans[] = { 0x7f800001u, 0x7fc00000u, 0x7fbfffffu, 0x7fffffffu, 0x7f802000u };
	for (size_t i = 0; i < sizeof(nans) / sizeof(nans[0]); i++) {
		assert_int_equal(nbg_fp16_from_float(bits_float(nans[i])), 0x7e00);
		assert_int_equal(nbg_fp16_from_float(bits_float(nans[i] | 0x80000000u)), 0xfe00);
	}
	assert_int_equal(nbg_fp16_from_double(NAN), 0x7e00);
	assert_int_equal(nbg_fp16_from_double(-NAN), 0xfe00);
}

static void test_bf16(void **state)
{
	(void)state;
	for (unsigned c = 0; c < bf16.finite; c++) {
		double a = bf16.value[c], b = c + 1 < bf16.finite ? bf16.value[c + 1] : 0x1p128;
		float mid = (float)((a + b) / 2); /* 9 significant bits: exact */
		assert_true((double)mid == (a + b) / 2);
		float cases[] = { (float)a, mid, nextafterf(mid, 0), nextafterf(mid, INFINITY) };
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			check_bf16(cases[i]);
			check_bf16(-cases[i]);
		}
	}
	for (uint64_t x = 0; x <= 0xffffffffu; x += 4099) {
		float f = bits_float((uint32_t)x);
		if (!isnan(f))
			check_bf16(f);
	}
	assert_int_equal(nbg_bf16_from_float(FLT_MAX), 0x7f80); /* past the half-way point: inf */
	assert_int_equal(nbg_bf16_from_float(1.0f + 0x1p-8f), 0x3f80); /* a tie: to even */
	assert_int_equal(nbg_bf16_from_float(1.0f + 0x3p-8f), 0x3f82);
	/* NaNs stay NaNs: sign and the payload's top bits kept, quiet bit set */
	const uint32_t nans[] = { 0x7f800001u, 0x7fc00000u, 0xffbfffffu, 0x7f9e0000u };
	for (size_t i = 0; i < sizeof(nans) / sizeof(nans[0]); i++) {
		uint16_t b = nbg_bf16_from_float(bits_float(nans[i]));
		assert_true(isnan(nbg_bf16_to_float(b)));
		assert_int_equal(b & 0x8000u, nans[i] >> 16 & 0x8000u);
		assert_int_equal(b & 0x40u, 0x40u);
		assert_int_equal(b & 0xffbfu, nans[i] >> 16 & 0xffbfu);
	}
}

int main(void)
{
	build(&fp16);
	build(&bf16);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_widen),
		cmocka_unit_test(test_fp16_rounding),
		cmocka_unit_test(test_fp16_edges),
		cmocka_unit_test(test_bf16),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
