/*
 * wide.h - exact 128-bit integers made of two 64-bit halves, for the
 * CPU backend's requantizations (quant.h) and the fused addition's
 * fixed point (ops/add.c).  C11 has no 128-bit type and 32-bit Arm's gcc
 * has no __int128, so the arithmetic is written out here, the same code on
 * every machine.
 *
 * A cpu_wide is a two's complement value, hi its upper 64 bits.  Every
 * operation works modulo 2^128, as unsigned __int128 does, so each gives
 * the __int128 result wherever that is defined (no overflow);
 * tests/test_cpu_wide.c checks them against __int128 where the compiler
 * has it.  Never installed.
 */
#ifndef NBG_CPU_WIDE_H
#define NBG_CPU_WIDE_H

#include <stdint.h>

typedef struct cpu_wide {
	uint64_t hi, lo;
} cpu_wide;

static inline cpu_wide cpu_wide_of(int64_t v)
{
	cpu_wide r = { v < 0 ? UINT64_MAX : 0, (uint64_t)v };
	return r;
}

/* An unsigned 64-bit value (hi 0). */
static inline cpu_wide cpu_wide_of_u64(uint64_t v)
{
	cpu_wide r = { 0, v };
	return r;
}

static inline int cpu_wide_is_neg(cpu_wide a)
{
	return (int)(a.hi >> 63);
}

static inline int cpu_wide_is_zero(cpu_wide a)
{
	return (a.hi | a.lo) == 0;
}

static inline cpu_wide cpu_wide_add(cpu_wide a, cpu_wide b)
{
	cpu_wide r;
	r.lo = a.lo + b.lo;
	r.hi = a.hi + b.hi + (r.lo < a.lo);
	return r;
}

static inline cpu_wide cpu_wide_neg(cpu_wide a)
{
	cpu_wide r;
	r.lo = 0 - a.lo;
	r.hi = ~a.hi + (a.lo == 0);
	return r;
}

/* |a| as an unsigned value, and whether a was negative. */
static inline cpu_wide cpu_wide_abs(cpu_wide a, int *neg)
{
	*neg = cpu_wide_is_neg(a);
	return *neg ? cpu_wide_neg(a) : a;
}

/* a << n, n in 0..127. */
static inline cpu_wide cpu_wide_shl(cpu_wide a, unsigned n)
{
	cpu_wide r;
	if (n >= 64) {
		r.hi = a.lo << (n - 64);
		r.lo = 0;
	} else if (n == 0) {
		r = a;
	} else {
		r.hi = a.hi << n | a.lo >> (64 - n);
		r.lo = a.lo << n;
	}
	return r;
}

/* a >> n as an unsigned value (zeros shifted in), n in 0..127. */
static inline cpu_wide cpu_wide_shr(cpu_wide a, unsigned n)
{
	cpu_wide r;
	if (n >= 64) {
		r.lo = a.hi >> (n - 64);
		r.hi = 0;
	} else if (n == 0) {
		r = a;
	} else {
		r.lo = a.lo >> n | a.hi << (64 - n);
		r.hi = a.hi >> n;
	}
	return r;
}

/* A magnitude divided by 2^n, n in 1..127, rounded to nearest: with even
 * 0 halves up, (a + 2^(n-1)) >> n; with even 1 halves to the even
 * quotient, (a + 2^(n-1) - 1 + ((a >> n) & 1)) >> n.  With the sign put
 * back, the rounding is half away from zero or half to even. */
static inline cpu_wide cpu_wide_round_shr(cpu_wide a, unsigned n, int even)
{
	cpu_wide half = cpu_wide_shl(cpu_wide_of(1), n - 1);
	if (even)
		half = cpu_wide_add(half, cpu_wide_of((int64_t)(cpu_wide_shr(a, n).lo & 1) - 1));
	return cpu_wide_shr(cpu_wide_add(a, half), n);
}

/* Signed a < b. */
static inline int cpu_wide_lt(cpu_wide a, cpu_wide b)
{
	if (a.hi != b.hi)
		return (int64_t)a.hi < (int64_t)b.hi;
	return a.lo < b.lo;
}

/* Unsigned a < b. */
static inline int cpu_wide_ult(cpu_wide a, cpu_wide b)
{
	return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
}

static inline int cpu_wide_eq(cpu_wide a, cpu_wide b)
{
	return a.hi == b.hi && a.lo == b.lo;
}

/* An unsigned value, saturated to max. */
static inline uint64_t cpu_wide_sat_u64(cpu_wide a, uint64_t max)
{
	return a.hi || a.lo > max ? max : a.lo;
}

/* The exact product of two unsigned 64-bit values, from four 32 x 32-bit
 * products. */
static inline cpu_wide cpu_wide_mul_u64(uint64_t a, uint64_t b)
{
	uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
	uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	/* below 3 x 2^32: no carry is lost */
	uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
	cpu_wide r;
	r.lo = mid << 32 | (p00 & 0xffffffffu);
	r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
	return r;
}

/* The exact product of two signed 64-bit values. */
static inline cpu_wide cpu_wide_mul_i64(int64_t a, int64_t b)
{
	uint64_t ma = a < 0 ? 0 - (uint64_t)a : (uint64_t)a;
	uint64_t mb = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
	cpu_wide r = cpu_wide_mul_u64(ma, mb);
	return (a < 0) != (b < 0) ? cpu_wide_neg(r) : r;
}

#endif
