/*
 * half.c - fp16 and bf16 to and from float (half.h), on the bits: no libm,
 * no dependence on the floating-point environment's rounding mode.
 */
#include <string.h>

#include "common/half.h"

uint16_t nbg_fp16_from_double(double d)
{
	uint64_t x;
	memcpy(&x, &d, sizeof(x));
	uint32_t sign = (uint32_t)(x >> 48) & 0x8000u;
	uint32_t exp = (uint32_t)(x >> 52) & 0x7ffu;
	uint64_t mant = x & 0xfffffffffffffull;
	if (exp == 0x7ff) /* infinity, or a NaN: the quiet fp16 NaN */
		return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
	int e = (int)exp - 1023 + 15; /* the fp16 biased exponent */
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00u);
	if (e <= 0) { /* an fp16 subnormal (units of 2^-24) or zero */
		if (e < -10) /* below 2^-25, half the least subnormal */
			return (uint16_t)sign;
		mant |= 1ull << 52;
		unsigned shift = (unsigned)(43 - e); /* 43..53 */
		uint64_t h = mant >> shift, rem = mant & ((1ull << shift) - 1), half = 1ull << (shift - 1);
		if (rem > half || (rem == half && (h & 1)))
			h++; /* 0x400: the least normal, still correct */
		return (uint16_t)(sign | h);
	}
	uint64_t h = (uint64_t)e << 10 | mant >> 42, rem = mant & ((1ull << 42) - 1);
	if (rem > 1ull << 41 || (rem == 1ull << 41 && (h & 1)))
		h++; /* may carry into the exponent, up to infinity: still correct */
	return (uint16_t)(sign | h);
}

uint16_t nbg_fp16_from_float(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof(x));
	if ((x & 0x7fffffffu) > 0x7f800000u) /* a NaN, its sign read from its bits */
		return (uint16_t)((x >> 16 & 0x8000u) | 0x7e00u);
	return nbg_fp16_from_double(f); /* exact: every float is a double */
}

float nbg_fp16_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
	if (exp == 0) {
		float v = (float)mant / 16777216.0f; /* mant x 2^-24, exact */
		return sign ? -v : v;
	}
	uint32_t bits = exp == 31 ? sign | 0x7f800000u | (mant << 13)
				  : sign | ((exp - 15 + 127) << 23) | (mant << 13);
	float f;
	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint16_t nbg_bf16_from_float(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof(x));
	if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu))
		return (uint16_t)((x >> 16) | 0x40u); /* NaN stays NaN */
	uint32_t lsb = (x >> 16) & 1u;
	x += 0x7fffu + lsb; /* ties to even; the carry may reach infinity */
	return (uint16_t)(x >> 16);
}

float nbg_bf16_to_float(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;
	memcpy(&f, &x, sizeof(f));
	return f;
}
