/*
 * quant.h - the CPU backend's arithmetic rules in one place: the two
 * rounding modes, by name; the integer requantizations built on them (the
 * exact products in wide.h's portable 128-bit arithmetic: 64 x 64 -> 128
 * bits, no __int128); and the float32 a command word holds.  The 16-bit
 * floats (fp16, bf16) go through the library's one converter,
 * common/half.h (narrowing rounds half to even).  Never installed.
 *
 * The rounding modes (doc/cpu-backend.md names each rule's evidence):
 *   the integer requantizations a command's rounding field governs (NN
 *     convolutions and their fused additions, uint8, int8 and int16, by
 *     the NN command's rounding_mode; TP fully connected layers, lookup
 *     tables' and scaled copies' output scaling by the TP command's
 *     flat_rounding_mode) round per the field, in the vendor's codes:
 *     0 simple rounding, half away from zero; 1 round to nearest, ties
 *     to even (NBG_CPU_ROUND_AWAY, NBG_CPU_ROUND_EVEN: the `even` argument
 *     below); 2 and 3 are refused where the field is read;
 *   half away from zero - the shader and SP paths that requantize to an
 *     integer (the depthwise shader, the bilinear resize, the SP maximum's
 *     int16), which no such field governs (inferred);
 *   half to even - the shader paths computed in float (the average pool,
 *     TensorAdd and TensorScale) and every narrowing to fp16.
 */
#ifndef NBG_CPU_QUANT_H
#define NBG_CPU_QUANT_H

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "common/half.h"
#include "cpu/wide.h"

/* The rounding field's two executed values, as the `even` argument of
 * the functions below: the vendor's codes 0 and 1. */
enum { NBG_CPU_ROUND_AWAY = 0, NBG_CPU_ROUND_EVEN = 1 };

/* A magnitude shifted right by 1 to 63 bits (below 2^63), rounded to
 * nearest, ties up (even 0: half away from zero once the sign is applied
 * after) or to the even quotient (even 1: half to even). */
static inline uint64_t nbg_cpu_shr_round(uint64_t mag, unsigned shift, int even)
{
	uint64_t half = 1ull << (shift - 1);
	if (even)
		half = half - 1 + ((mag >> shift) & 1);
	return (mag + half) >> shift;
}

/* Rounding half away from zero, a double. */
static inline double nbg_cpu_round_half_away(double y)
{
	return y < 0 ? -floor(-y + 0.5) : floor(y + 0.5);
}

/* Rounding half to even: the nearest integer in the default rounding
 * mode (nearbyint). */
static inline double nbg_cpu_round_half_even(double v)
{
	return nearbyint(v);
}

/* A double rounded per a rounding field: even 0 half away from zero, 1
 * half to even. */
static inline double nbg_cpu_round_mode(double v, int even)
{
	return even ? nbg_cpu_round_half_even(v) : nbg_cpu_round_half_away(v);
}

/* v rounded half to even and saturated to int8, as its byte (NaN: 0). */
static inline uint8_t nbg_cpu_s8_even(double v)
{
	double q = nearbyint(v);
	if (q != q)
		return 0;
	return (uint8_t)((int)(q < -128 ? -128 : q > 127 ? 127 : q) & 0xff);
}

/* A command or uniform word read as the float32 it holds. */
static inline float nbg_cpu_f32_of(uint32_t v)
{
	float f;
	memcpy(&f, &v, sizeof(f));
	return f;
}

/*
 * The requantization (a static inline so the convolution's inner loop and
 * the TP fully connected run share it without a call): the scale is the
 * float32 of 23 mantissa bits and a biased exponent that the plan read
 * from the command (ops/conv.c, scale_fields; ops/tpfc.c for TP):
 * acc x (2^23 + mantissa) x 2^(exponent - 150), computed exactly (64 bits,
 * or 128 in wide.h's arithmetic), rounded to nearest (even 0: half away from
 * zero; 1: half to even), its magnitude saturated at INT32_MAX (nbg_cpu_requant_q).  Then the output
 * zero point is added, ReLU clamps at it, and the result saturates to the
 * output's type: 0..255 (uint8, nbg_cpu_requant) or -128..127 (int8,
 * nbg_cpu_requant_s8, written as its two's complement byte).
 */
static inline int64_t nbg_cpu_requant_q(int64_t acc, uint32_t mantissa, uint32_t exponent, int even)
{
	int shift = 150 - (int)exponent;
	int64_t q;
	if (acc >= -INT32_MAX && acc <= INT32_MAX && shift > 0 && shift < 63) {
		/* the same arithmetic in 64 bits: |acc| x 2^24 stays below 2^55 */
		int64_t prod = acc * (int64_t)((1u << 23) | (mantissa & 0x7fffffu));
		uint64_t mag = prod < 0 ? (uint64_t)-prod : (uint64_t)prod;
		q = (int64_t)nbg_cpu_shr_round(mag, (unsigned)shift, even);
		return prod < 0 ? -q : q;
	}
	int neg = acc < 0;
	cpu_wide mag = cpu_wide_mul_u64(neg ? 0 - (uint64_t)acc : (uint64_t)acc,
					(1u << 23) | (mantissa & 0x7fffffu));
	if (shift <= 0) {
		q = cpu_wide_is_zero(mag) ? 0 : INT32_MAX; /* scale >= 1: any non-zero product saturates */
		cpu_wide up = shift > -32 ? cpu_wide_shl(mag, (unsigned)-shift) : mag;
		if (shift > -32 && cpu_wide_eq(cpu_wide_shr(up, (unsigned)-shift), mag) &&
		    cpu_wide_ult(up, cpu_wide_of(INT32_MAX)))
			q = (int64_t)up.lo;
	} else if (shift >= 127) {
		q = 0;
	} else {
		q = (int64_t)cpu_wide_sat_u64(cpu_wide_round_shr(mag, (unsigned)shift, even), INT32_MAX);
	}
	return neg ? -q : q;
}

static inline uint8_t nbg_cpu_requant(int64_t acc, uint32_t mantissa, uint32_t exponent,
				      uint32_t out_zp, int relu, int even)
{
	int64_t q = nbg_cpu_requant_q(acc, mantissa, exponent, even) + out_zp;
	if (relu && q < (int64_t)out_zp)
		q = out_zp;
	return (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
}

/* int8 output: the same value saturated to -128..127, as its byte. */
static inline uint8_t nbg_cpu_requant_s8(int64_t acc, uint32_t mantissa, uint32_t exponent,
					 int32_t out_zp, int relu, int even)
{
	int64_t q = nbg_cpu_requant_q(acc, mantissa, exponent, even) + out_zp;
	if (relu && q < (int64_t)out_zp)
		q = out_zp;
	q = q < -128 ? -128 : q > 127 ? 127 : q;
	return (uint8_t)(q & 0xff);
}

/*
 * The addition an NN command of target 0xe8 fuses to its convolution
 * (doc/cpu-backend.md, "Fused additions"): per written pixel, the
 * convolution's sum times its scale, clamped to [lo, hi], plus (b - zp) x
 * scale_b, where b is the second image's byte at the same position, then
 * rounded and offset by the output zero point (nbg_cpu_requant_add).  The
 * plan (ops/add.c) holds every term as an integer in units of 2^-frac: a
 * float32 m x 2^(e - 150) as m << (e - 150 + frac).
 */
typedef struct cpu_add {
	int on;
	size_t region;                  /* the second image: pool_x x pool_y x out_z */
	uint64_t base, row, slice;
	uint32_t zp;                    /* its zero point */
	uint32_t frac;                  /* fraction bits of the fixed point, 1..120 */
	uint32_t conv_m, conv_shift;    /* the convolution's scale */
	int32_t b_m;                    /* the second image's scale (signed) */
	uint32_t b_shift;
	int has_lo, has_hi;             /* 0: -inf / +inf, no bound */
	cpu_wide lo, hi;
} cpu_add;

/*
 * The sum of a convolution fused with an addition:
 * t = clamp(acc x conv scale, lo, hi) + b x scale_b (b the second image's
 * value less its zero point), computed exactly in the plan's fixed point
 * (the plan bounds every term below 2^126), rounded per the command's
 * rounding_mode (even: wide.h's cpu_wide_round_shr on the magnitude), its
 * magnitude saturated
 * at max.  nbg_cpu_requant_add: uint8, plus the output zero point,
 * saturated to 0..255.
 */
static inline int64_t nbg_cpu_add_sum(int64_t acc, const cpu_add *a, int64_t b, uint64_t max, int even)
{
	cpu_wide t = cpu_wide_shl(cpu_wide_mul_i64(acc, a->conv_m), a->conv_shift);
	if (a->has_hi && cpu_wide_lt(a->hi, t))
		t = a->hi;
	if (a->has_lo && cpu_wide_lt(t, a->lo))
		t = a->lo;
	t = cpu_wide_add(t, cpu_wide_shl(cpu_wide_mul_i64(b, a->b_m), a->b_shift));
	int neg;
	cpu_wide mag = cpu_wide_round_shr(cpu_wide_abs(t, &neg), a->frac, even);
	int64_t q = (int64_t)cpu_wide_sat_u64(mag, max);
	return neg ? -q : q;
}

static inline uint8_t nbg_cpu_requant_add(int64_t acc, const cpu_add *a, uint8_t b, uint32_t out_zp, int even)
{
	int64_t q = nbg_cpu_add_sum(acc, a, (int32_t)b - (int32_t)a->zp, 1024, even) + (int64_t)out_zp;
	return (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
}

#endif
