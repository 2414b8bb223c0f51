/*
 * test_cpu_wide.c - the CPU backend's 128-bit arithmetic in two 64-bit
 * halves (lib/cpu/wide.h) and the two requantizations built on
 * it (nbg_cpu_requant, nbg_cpu_requant_add in quant.h), against
 * their earlier formulation in the compiler's __int128, kept here as the
 * oracle (rounding half away from zero), and against the same with its
 * rounding replaced by one written apart (round_u128: the quotient, and
 * one more where the remainder is above half, or half with an odd
 * quotient) for the rounding half to even (rounding_mode 1): every operation on edge values (zero, +-1, +-2^k and its
 * neighbours, the extremes, both halves mixed) and every shift count;
 * nbg_cpu_requant at every exponent 0..255 with products that are rounding
 * ties at every shift where one exists (1..87), its 64-bit and 128-bit
 * paths alike; nbg_cpu_requant_add over the plan's whole range (ops/add.c:
 * |acc| < 2^31, frac 1..120, shifts up to 69 / 90 / 100) with ties at
 * every frac and the clamps.
 *
 * The cases are one deterministic sequence, and each group's results are
 * folded into a 64-bit FNV-1a digest.  The digests below are those of the
 * __int128 oracle (they were computed from it on x86-64): where the
 * compiler has __int128 (x86-64, aarch64) every case is compared with the
 * oracle and the digest of the results must equal them; where it has not
 * (32-bit Arm), the digests alone prove the results are the same bits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cpu/quant.h"

#define DIGEST_OPS 0xa0c2d06ce76dbb4dull
#define DIGEST_REQUANT 0xe41ecfe4250300a6ull
#define DIGEST_REQUANT_ADD 0xdff11c17a567a2f3ull
/* rounding half to even: the results of the same cases, compared with
 * the oracle on x86-64 when these were recorded */
#define DIGEST_REQUANT_EVEN 0x72c1485bf3075830ull
#define DIGEST_REQUANT_ADD_EVEN 0xfd927d8bc07f3654ull

static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* xorshift64: the same sequence on every machine */
static uint64_t rnd64(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t rnd(uint64_t n)
{
	return rnd64() % n;
}

static void fold(uint64_t *h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		*h ^= (v >> (8 * i)) & 0xffu;
		*h *= 0x100000001b3ull;
	}
}

static void fold_wide(uint64_t *h, cpu_wide w)
{
	fold(h, w.hi);
	fold(h, w.lo);
}

/* 0, 1, the extremes, and +-2^k, +-2^k +-1 for every k (as 64-bit
 * patterns, so both signs of every magnitude), then n random values. */
static size_t edge_values(uint64_t *v, size_t n)
{
	size_t c = 0;
	v[c++] = 0;
	v[c++] = (uint64_t)INT64_MAX;
	for (int k = 0; k < 64; k++)
		for (int d = -1; d <= 1; d++) {
			uint64_t p = (1ull << k) + (uint64_t)(int64_t)d;
			v[c++] = p;
			v[c++] = 0 - p;
		}
	for (size_t i = 0; i < n; i++) {
		uint64_t r = rnd64();
		v[c++] = r >> rnd(64);
	}
	return c;
}

#ifdef __SIZEOF_INT128__
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

static u128 to_u128(cpu_wide w)
{
	return (u128)w.hi << 64 | w.lo;
}

/* x / 2^s (s 1..127) rounded to nearest, ties up (even 0) or to the even
 * quotient (even 1), from the quotient and the remainder. */
static u128 round_u128(u128 x, unsigned s, int even)
{
	u128 q = x >> s, rem = x - (q << s), half = (u128)1 << (s - 1);
	if (rem > half || (rem == half && (!even || (q & 1))))
		q++;
	return q;
}

static void same(cpu_wide w, u128 want, const char *what, uint64_t a, uint64_t b)
{
	if (to_u128(w) != want)
		fail_msg("%s(0x%016llx, 0x%016llx): 0x%016llx%016llx, __int128 gives 0x%016llx%016llx", what,
			 (unsigned long long)a, (unsigned long long)b, (unsigned long long)w.hi,
			 (unsigned long long)w.lo, (unsigned long long)(want >> 64), (unsigned long long)want);
}

static void same_int(int got, int want, const char *what, cpu_wide a, cpu_wide b)
{
	if (got != want)
		fail_msg("%s(0x%016llx%016llx, 0x%016llx%016llx): %d, __int128 gives %d", what,
			 (unsigned long long)a.hi, (unsigned long long)a.lo, (unsigned long long)b.hi,
			 (unsigned long long)b.lo, got, want);
}
#endif

static void check_digest(uint64_t got, uint64_t want, const char *what)
{
	if (got != want)
		fail_msg("%s: digest 0x%016llx, the __int128 oracle's is 0x%016llx", what, (unsigned long long)got,
			 (unsigned long long)want);
}

/* The products of two 64-bit values. */
static void ops_products(uint64_t *h, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			cpu_wide pu = cpu_wide_mul_u64(v[i], v[j]);
			cpu_wide ps = cpu_wide_mul_i64((int64_t)v[i], (int64_t)v[j]);
			fold_wide(h, pu);
			fold_wide(h, ps);
#ifdef __SIZEOF_INT128__
			same(pu, (u128)v[i] * v[j], "cpu_wide_mul_u64", v[i], v[j]);
			same(ps, (u128)((i128)(int64_t)v[i] * (int64_t)v[j]), "cpu_wide_mul_i64", v[i], v[j]);
#endif
		}
}

/* The one-operand operations on w, the shifts at every count. */
static void ops_unary(uint64_t *h, cpu_wide w)
{
	int neg;
	cpu_wide a = cpu_wide_abs(w, &neg);
	fold_wide(h, cpu_wide_neg(w));
	fold_wide(h, a);
	fold(h, (uint64_t)neg);
	fold(h, cpu_wide_sat_u64(w, INT32_MAX));
	fold(h, cpu_wide_sat_u64(w, 1024));
#ifdef __SIZEOF_INT128__
	u128 x = to_u128(w);
	same(cpu_wide_neg(w), -x, "cpu_wide_neg", w.hi, w.lo);
	same(a, (i128)x < 0 ? -x : x, "cpu_wide_abs", w.hi, w.lo);
	assert_int_equal(neg, (i128)x < 0);
	assert_true(cpu_wide_sat_u64(w, INT32_MAX) == (x > INT32_MAX ? INT32_MAX : (uint64_t)x));
	assert_true(cpu_wide_sat_u64(w, 1024) == (x > 1024 ? 1024 : (uint64_t)x));
#endif
	for (unsigned s = 0; s < 128; s++) {
		cpu_wide l = cpu_wide_shl(w, s), r = cpu_wide_shr(w, s);
		fold_wide(h, l);
		fold_wide(h, r);
		if (s)
			fold_wide(h, cpu_wide_round_shr(w, s, 0));
#ifdef __SIZEOF_INT128__
		same(l, x << s, "cpu_wide_shl", w.hi, s);
		same(r, x >> s, "cpu_wide_shr", w.hi, s);
		if (s) {
			same(cpu_wide_round_shr(w, s, 0), (x + ((u128)1 << (s - 1))) >> s, "cpu_wide_round_shr", w.hi, s);
			if (x < ~(u128)0 >> 1) /* a magnitude: the sum below 2^128 */
				same(cpu_wide_round_shr(w, s, 1), round_u128(x, s, 1), "cpu_wide_round_shr even", w.hi, s);
		}
#endif
	}
}

/* The two-operand operations. */
static void ops_binary(uint64_t *h, cpu_wide a, cpu_wide b)
{
	cpu_wide s = cpu_wide_add(a, b);
	int lt = cpu_wide_lt(a, b), ult = cpu_wide_ult(a, b), eq = cpu_wide_eq(a, b);
	fold_wide(h, s);
	fold(h, (uint64_t)(lt | ult << 1 | eq << 2));
#ifdef __SIZEOF_INT128__
	u128 x = to_u128(a), y = to_u128(b);
	same(s, x + y, "cpu_wide_add", a.lo, b.lo);
	same_int(lt, (i128)x < (i128)y, "cpu_wide_lt", a, b);
	same_int(ult, x < y, "cpu_wide_ult", a, b);
	same_int(eq, x == y, "cpu_wide_eq", a, b);
#endif
}

static void test_ops(void **state)
{
	(void)state;
	uint64_t v[512], h = 0xcbf29ce484222325ull;
	size_t n = edge_values(v, 64);
	ops_products(&h, v, n);
	/* 128-bit values: every pair of a smaller edge set as (hi, lo) */
	uint64_t e[40];
	cpu_wide w[1600];
	size_t ne = 0, nw = 0;
	for (size_t i = 0; i < n && ne < 40; i += 11)
		e[ne++] = v[i];
	for (size_t i = 0; i < ne; i++)
		for (size_t j = 0; j < ne; j++)
			w[nw++] = (cpu_wide){ e[i], e[j] };
	for (size_t i = 0; i < nw; i++)
		ops_unary(&h, w[i]);
	for (size_t i = 0; i < nw; i++)
		for (size_t j = 0; j < nw; j += 1 + (i + j) % 3)
			ops_binary(&h, w[i], w[j]);
	check_digest(h, DIGEST_OPS, "the operations");
}

#ifdef __SIZEOF_INT128__
/* nbg_cpu_requant as it was written in __int128, verbatim but for the
 * rounding half to even (even 1: round_u128). */
static uint8_t oracle_requant(int64_t acc, uint32_t mantissa, uint32_t exponent, uint32_t out_zp, int relu, int even)
{
	int shift = 150 - (int)exponent;
	int64_t q;
	if (acc >= -INT32_MAX && acc <= INT32_MAX && shift > 0 && shift < 63) {
		int64_t prod = acc * (int64_t)((1u << 23) | (mantissa & 0x7fffffu));
		uint64_t mag = prod < 0 ? (uint64_t)-prod : (uint64_t)prod;
		q = even ? (int64_t)round_u128(mag, (unsigned)shift, 1) : (int64_t)((mag + (1ull << (shift - 1))) >> shift);
		if (prod < 0)
			q = -q;
	} else {
		i128 prod = (i128)acc * (i128)((1u << 23) | (mantissa & 0x7fffffu));
		int neg = prod < 0;
		u128 mag = neg ? (u128)(-prod) : (u128)prod;
		if (shift <= 0) {
			q = mag == 0 ? 0 : INT32_MAX;
			if (shift > -32 && (mag << -shift) >> -shift == mag && (mag << -shift) < INT32_MAX)
				q = (int64_t)(mag << -shift);
		} else if (shift >= 127) {
			q = 0;
		} else {
			u128 r = even ? round_u128(mag, (unsigned)shift, 1) : (mag + ((u128)1 << (shift - 1))) >> shift;
			q = r > INT32_MAX ? INT32_MAX : (int64_t)r;
		}
		if (neg)
			q = -q;
	}
	q += out_zp;
	if (relu && q < (int64_t)out_zp)
		q = out_zp;
	return (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
}

/* nbg_cpu_requant_add as it was written in __int128, verbatim but for the
 * bounds' type. */
static uint8_t oracle_requant_add(int64_t acc, const cpu_add *a, uint8_t b, uint32_t out_zp, int even)
{
	i128 hi = (i128)to_u128(a->hi), lo = (i128)to_u128(a->lo);
	i128 t = (i128)acc * a->conv_m * ((i128)1 << a->conv_shift);
	if (a->has_hi && t > hi)
		t = hi;
	if (a->has_lo && t < lo)
		t = lo;
	t += (i128)((int32_t)b - (int32_t)a->zp) * a->b_m * ((i128)1 << a->b_shift);
	int neg = t < 0;
	u128 mag = neg ? (u128)-t : (u128)t;
	mag = even ? round_u128(mag, a->frac, 1) : (mag + ((u128)1 << (a->frac - 1))) >> a->frac;
	int64_t q = mag > 1024 ? 1024 : (int64_t)mag;
	q = (neg ? -q : q) + (int64_t)out_zp;
	return (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
}
#endif

/* Trailing zero bits of a non-zero value. */
static int tz64(uint64_t v)
{
	int n = 0;
	while (!(v & 1)) {
		v >>= 1;
		n++;
	}
	return n;
}

static void test_requant(void **state)
{
	(void)state;
	/* acc = +-(2^j x o + d): with an odd mantissa the product is a tie at
	 * shift j + 1, with 2^23 (mantissa 0) at j + 24, with 3 x 2^22 at j + 23 */
	static const uint64_t odd[] = { 1, 3, 0x2b, 0x7fff };
	static const uint32_t mant[] = { 0, 1, 2, 0x400000, 0x7fffff, 0x555555, 0x2aaaab, 0x123456 };
	int64_t acc[1600];
	size_t na = 0;
	acc[na++] = 0;
	acc[na++] = INT64_MIN;
	acc[na++] = INT64_MAX;
	acc[na++] = INT32_MIN;
	for (int j = 0; j < 63; j++)
		for (size_t o = 0; o < sizeof(odd) / sizeof(odd[0]); o++)
			for (int d = -1; d <= 1; d++) {
				if (odd[o] > ((uint64_t)INT64_MAX >> j))
					continue;
				int64_t a = (int64_t)(odd[o] << j) + d;
				acc[na++] = a;
				acc[na++] = -a;
			}
	uint64_t h = 0xcbf29ce484222325ull, he = h;
	int tie[128] = { 0 };
	for (size_t i = 0; i < na; i++)
		for (size_t m = 0; m < sizeof(mant) / sizeof(mant[0]); m++)
			for (uint32_t e = 0; e < 256; e++) {
				uint32_t zp = (uint32_t)((i * 7 + m * 3 + e) % 4 == 0 ? 0 : (i + e) % 256);
				int relu = (int)((i + m + e) & 1);
				uint8_t got = nbg_cpu_requant(acc[i], mant[m], e, zp, relu, 0);
				uint8_t got_even = nbg_cpu_requant(acc[i], mant[m], e, zp, relu, 1);
				fold(&h, got);
				fold(&he, got_even);
				int shift = 150 - (int)e;
				if (acc[i] && shift > 0 && shift < 128 &&
				    tz64(acc[i] < 0 ? 0 - (uint64_t)acc[i] : (uint64_t)acc[i]) +
						    tz64((1u << 23) | mant[m]) == shift - 1)
					tie[shift] = 1;
#ifdef __SIZEOF_INT128__
				uint8_t want = oracle_requant(acc[i], mant[m], e, zp, relu, 0);
				if (got != want)
					fail_msg("nbg_cpu_requant(%lld, 0x%06x, %u, %u, %d): %u, the __int128 code gives %u",
						 (long long)acc[i], mant[m], e, zp, relu, got, want);
				want = oracle_requant(acc[i], mant[m], e, zp, relu, 1);
				if (got_even != want)
					fail_msg("nbg_cpu_requant(%lld, 0x%06x, %u, %u, %d, even): %u, the __int128 code "
						 "gives %u", (long long)acc[i], mant[m], e, zp, relu, got_even, want);
#endif
			}
	for (int s = 1; s <= 87; s++)
		if (!tie[s])
			fail_msg("no rounding tie at shift %d among the cases", s);
	check_digest(h, DIGEST_REQUANT, "nbg_cpu_requant");
	check_digest(he, DIGEST_REQUANT_EVEN, "nbg_cpu_requant, half to even");
}

/* One fused addition's parameters within the plan's bounds (ops/add.c,
 * add_fixed_point): frac 1..120, conv_shift <= 69, b_shift <= 90, the
 * bounds m x 2^s with s <= 100, lo <= hi. */
static void add_params(cpu_add *a, uint32_t frac)
{
	memset(a, 0, sizeof(*a));
	a->frac = frac;
	a->zp = (uint32_t)rnd(256);
	a->conv_m = (1u << 23) | (uint32_t)rnd(1u << 23);
	a->conv_shift = (uint32_t)rnd(70);
	a->b_m = rnd(8) ? (int32_t)((1u << 23) | (uint32_t)rnd(1u << 23)) : 0;
	if (rnd(2))
		a->b_m = -a->b_m;
	a->b_shift = a->b_m ? (uint32_t)rnd(91) : 0;
	cpu_wide bound[2];
	for (int i = 0; i < 2; i++) {
		uint64_t m = rnd(8) ? (1u << 23) | rnd(1u << 23) : 0;
		bound[i] = cpu_wide_shl(cpu_wide_of_u64(m), (unsigned)rnd(101));
		if (rnd(2))
			bound[i] = cpu_wide_neg(bound[i]);
	}
	int swap = cpu_wide_lt(bound[1], bound[0]);
	a->lo = bound[swap];
	a->hi = bound[!swap];
	a->has_lo = (int)rnd(2);
	a->has_hi = (int)rnd(2);
}

/* The accumulator of case k: random, a tie of the convolution's term
 * (conv_m odd, acc = +-o x 2^(frac - 1 - conv_shift), the second term 0),
 * or an extreme. */
static int64_t add_acc(cpu_add *a, uint32_t frac, unsigned k, uint8_t *b)
{
	static const int64_t ext[] = { 0, 1, -1, INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1 };
	*b = (uint8_t)rnd(256);
	switch (k % 4) {
	case 0:
		return (int64_t)(int32_t)(uint32_t)rnd64();
	case 1: {
		uint32_t lo = frac > 31 ? frac - 31 : 0, hi = frac - 1 < 69 ? frac - 1 : 69;
		if (lo > hi)
			return INT32_MIN;
		a->conv_shift = lo + (uint32_t)rnd(hi - lo + 1);
		a->conv_m |= 1;
		*b = (uint8_t)a->zp;
		uint32_t j = frac - 1 - a->conv_shift;
		int64_t v = (int64_t)((rnd(1u << 7) | 1) << j);
		if (v > INT32_MAX)
			v = 1ll << j;
		v += (int64_t)rnd(3) - 1;
		if (v > INT32_MAX)
			v = INT32_MAX;
		return rnd(2) ? -v : v;
	}
	case 2: {
		/* a tie of the second term, acc 0: (b - zp) x b_m x 2^b_shift with
		 * frac - 1 trailing zero bits, b_shift <= 90, tz(b_m) <= 23, tz(b - zp) <= 7 */
		uint32_t r = frac - 1 > 90 ? frac - 1 - 90 : 0, rd = r > 23 ? r - 23 : (uint32_t)rnd((r < 7 ? r : 7) + 1);
		uint32_t rb = r - rd;
		a->b_shift = frac - 1 - r;
		a->b_m = (int32_t)((1u << 23) | ((((uint32_t)rnd(1u << 23) | 1u) << rb) & 0x7fffffu));
		if (rnd(2))
			a->b_m = -a->b_m;
		int32_t d = (int32_t)(((uint32_t)rnd(256u >> (rd + 1)) * 2 + 1) << rd);
		if (rnd(2))
			d = -d;
		a->zp = d > 0 ? (uint32_t)rnd((uint64_t)(256 - d)) : (uint32_t)(-d + (int32_t)rnd((uint64_t)(256 + d)));
		*b = (uint8_t)((int32_t)a->zp + d);
		return 0;
	}
	default:
		return ext[rnd(sizeof(ext) / sizeof(ext[0]))];
	}
}

static void test_requant_add(void **state)
{
	(void)state;
	uint64_t h = 0xcbf29ce484222325ull, he = h;
	int tie[121] = { 0 };
	for (uint32_t frac = 1; frac <= 120; frac++)
		for (unsigned k = 0; k < 2000; k++) {
			cpu_add a;
			uint8_t b;
			add_params(&a, frac);
			int64_t acc = add_acc(&a, frac, k, &b);
			uint32_t out_zp = (uint32_t)rnd(256);
			uint8_t got = nbg_cpu_requant_add(acc, &a, b, out_zp, 0);
			uint8_t got_even = nbg_cpu_requant_add(acc, &a, b, out_zp, 1);
			fold(&h, got);
			fold(&he, got_even);
			/* a tie where the sum, clamped as the backend does, has its low
			 * frac bits exactly a half */
			cpu_wide t = cpu_wide_shl(cpu_wide_mul_i64(acc, a.conv_m), a.conv_shift);
			if (a.has_hi && cpu_wide_lt(a.hi, t))
				t = a.hi;
			if (a.has_lo && cpu_wide_lt(t, a.lo))
				t = a.lo;
			t = cpu_wide_add(t, cpu_wide_shl(cpu_wide_of(((int32_t)b - (int32_t)a.zp) * (int64_t)a.b_m),
							 a.b_shift));
			int neg;
			cpu_wide mag = cpu_wide_abs(t, &neg);
			if (cpu_wide_eq(cpu_wide_shr(cpu_wide_shl(mag, 128 - frac), 128 - frac),
					cpu_wide_shl(cpu_wide_of(1), frac - 1)))
				tie[frac] = 1;
#ifdef __SIZEOF_INT128__
			for (int even = 0; even <= 1; even++) {
				uint8_t want = oracle_requant_add(acc, &a, b, out_zp, even);
				if ((even ? got_even : got) != want)
					fail_msg("nbg_cpu_requant_add(%lld, frac %u, conv 0x%x << %u, b %u - %u, b_m %d << "
						 "%u, lo %d, hi %d, even %d): %u, the __int128 code gives %u", (long long)acc,
						 frac, a.conv_m, a.conv_shift, b, a.zp, a.b_m, a.b_shift, a.has_lo, a.has_hi,
						 even, even ? got_even : got, want);
			}
#endif
		}
	for (uint32_t f = 1; f <= 120; f++)
		if (!tie[f])
			fail_msg("no rounding tie at frac %u among the cases", f);
	check_digest(h, DIGEST_REQUANT_ADD, "nbg_cpu_requant_add");
	check_digest(he, DIGEST_REQUANT_ADD_EVEN, "nbg_cpu_requant_add, half to even");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops),
		cmocka_unit_test(test_requant),
		cmocka_unit_test(test_requant_add),
	};
#ifndef __SIZEOF_INT128__
	printf("# no __int128 on this machine: the results are checked by their digests alone\n");
#endif
	return cmocka_run_group_tests(tests, NULL, NULL);
}
