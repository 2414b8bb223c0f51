/*
 * ops/conv_x86.c - the 32-bit convolution's kernels on x86-64 vector
 * instructions (ops/conv_fast.h's layout): AVX-512 VNNI (vpdpwssd: two
 * int16 products added into each int32 lane, 16 lanes) and AVX2 (vpmaddwd,
 * then vpaddd; 8 lanes).  Each is compiled for its instructions alone (a
 * target attribute, not a build flag) and called only where the CPU runs
 * them (ops/conv_fast.c chooses).  The lanes wrap modulo 2^32, as the
 * portable kernels' sums would; the plan proved the true sums fit int32,
 * so both give them exactly.
 */
#if defined(__x86_64__)
#include "nbg_cpu_config.h"
#endif

#if defined(__x86_64__) && NBG_CPU_SIMD_X86
#include <immintrin.h>
#include <string.h>

#include "cpu/ops/conv_fast.h"

static int32_t pair_at(const int16_t *w)
{
	int32_t v;
	memcpy(&v, w, sizeof(v));
	return v;
}

#define NBG_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define GRP512 6

static int avx512_usable(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

/*
 * One block of 64 positions (4 registers of 16) by GRP512 channels: 24
 * sums in registers over every tap's pair (int16 layout, vpdpwssd) or
 * quad (8-bit layout, vpdpbusd: unsigned input bytes times signed
 * weights) of input channels.  Both layouts hold 4 bytes a position and a
 * weight, so one walk serves both; `eight` is a constant where it is
 * inlined.
 */
NBG_AVX512 static inline __attribute__((always_inline)) void kern512(const cpu_conv_job *j, uint64_t b, uint64_t gr,
								 int32_t *acc, int eight)
{
	__m512i a[GRP512][4]; /* every loop over it unrolled: the array stays in registers */
#pragma GCC unroll 8
	for (int c = 0; c < GRP512; c++)
#pragma GCC unroll 4
		for (int r = 0; r < 4; r++)
			a[c][r] = _mm512_setzero_si512();
	uint64_t k = j->cv->k, lanes = eight ? j->quads : j->pairs, row = j->g.wide * 4, plane = j->g.plane * 4;
	const uint8_t *w = (const uint8_t *)(eight ? (const void *)j->wk8 : (const void *)j->wk) +
			   gr * lanes * k * k * GRP512 * 4;
	const uint8_t *base = (const uint8_t *)(eight ? (const void *)j->img8 : (const void *)j->img) + b * CPU_BLK * 4;
	for (uint64_t p = 0; p < lanes; p++)
		for (uint64_t ky = 0; ky < k; ky++) {
			const uint8_t *x = base + p * plane + ky * row;
			for (uint64_t kx = 0; kx < k; kx++, x += 4, w += GRP512 * 4) {
				__m512i x0 = _mm512_loadu_si512((const void *)x);
				__m512i x1 = _mm512_loadu_si512((const void *)(x + 64));
				__m512i x2 = _mm512_loadu_si512((const void *)(x + 128));
				__m512i x3 = _mm512_loadu_si512((const void *)(x + 192));
#pragma GCC unroll 8
				for (int c = 0; c < GRP512; c++) {
					int32_t wq;
					memcpy(&wq, w + 4 * c, sizeof(wq));
					__m512i wv = _mm512_set1_epi32(wq);
					if (eight) {
						a[c][0] = _mm512_dpbusd_epi32(a[c][0], x0, wv);
						a[c][1] = _mm512_dpbusd_epi32(a[c][1], x1, wv);
						a[c][2] = _mm512_dpbusd_epi32(a[c][2], x2, wv);
						a[c][3] = _mm512_dpbusd_epi32(a[c][3], x3, wv);
					} else {
						a[c][0] = _mm512_dpwssd_epi32(a[c][0], x0, wv);
						a[c][1] = _mm512_dpwssd_epi32(a[c][1], x1, wv);
						a[c][2] = _mm512_dpwssd_epi32(a[c][2], x2, wv);
						a[c][3] = _mm512_dpwssd_epi32(a[c][3], x3, wv);
					}
				}
			}
		}
#pragma GCC unroll 8
	for (int c = 0; c < GRP512; c++)
#pragma GCC unroll 4
		for (int r = 0; r < 4; r++)
			_mm512_storeu_si512((void *)(acc + c * CPU_BLK + r * 16), a[c][r]);
}

NBG_AVX512 static void kern_avx512(const cpu_conv_job *j, uint64_t b, uint64_t gr, int32_t *acc)
{
	kern512(j, b, gr, acc, 0);
}

NBG_AVX512 static void kern_avx512_8(const cpu_conv_job *j, uint64_t b, uint64_t gr, int32_t *acc)
{
	kern512(j, b, gr, acc, 1);
}

/* quant.h's requantization, 16 sums at a time in two sets of 8 64-bit
 * lanes (the even sums and the odd ones): p = acc x (2^23 + mantissa),
 * |p| below 2^55, rounded by an arithmetic shift: half away from zero
 * (even 0) as floor((p + half - (p < 0)) / 2^shift), that rounding of |p|
 * with the sign put back; half to even (even 1) as floor((p + half - 1 +
 * (floor(p / 2^shift) & 1)) / 2^shift), which rounds p itself to nearest
 * with ties to the even quotient, as quant.h rounds |p| (the rule is
 * symmetric).  Then the zero point added, ReLU and the output type's range
 * as bounds, the low byte kept. */
NBG_AVX512 static inline __m512i requant_half(__m512i prod, __m512i half, __m128i sh, __m512i vzp, __m512i vlo,
					      __m512i vhi, int even)
{
	__m512i adj = even ? _mm512_sub_epi64(_mm512_and_si512(_mm512_srl_epi64(prod, sh), _mm512_set1_epi64(1)),
					      _mm512_set1_epi64(1))
			   : _mm512_srai_epi64(prod, 63);
	__m512i q = _mm512_add_epi64(_mm512_add_epi64(prod, half), adj);
	q = _mm512_add_epi64(_mm512_sra_epi64(q, sh), vzp);
	return _mm512_min_epi64(_mm512_max_epi64(q, vlo), vhi);
}

NBG_AVX512 static void requant_avx512(const cpu_conv *cv, const int32_t *acc, uint32_t n, const int32_t *bias,
				       uint8_t *const *out)
{
	int shift = 150 - (int)cv->exponent;
	int64_t tmin = cv->sgn ? -128 : 0, tmax = cv->sgn ? 127 : 255, zp = cv->sgn ? (int32_t)cv->out_zp : (int64_t)cv->out_zp;
	int64_t lo = cv->relu && zp > tmin ? zp : tmin;
	const __m512i mul = _mm512_set1_epi64((1 << 23) | (cv->mantissa & 0x7fffff));
	const __m512i half = _mm512_set1_epi64((int64_t)1 << (shift - 1));
	const __m512i vzp = _mm512_set1_epi64(zp), vlo = _mm512_set1_epi64(lo), vhi = _mm512_set1_epi64(tmax);
	const __m128i sh = _mm_cvtsi32_si128(shift);
	for (uint32_t c = 0; c < n; c++) {
		const __m512i vb = _mm512_set1_epi32(bias[c]);
		for (int i = 0; i < CPU_BLK; i += 16) {
			__m512i a = _mm512_add_epi32(_mm512_loadu_si512((const void *)(acc + c * CPU_BLK + i)), vb);
			__m512i even = requant_half(_mm512_mul_epi32(a, mul), half, sh, vzp, vlo, vhi, cv->even);
			__m512i odd = requant_half(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), mul), half, sh, vzp, vlo, vhi,
						   cv->even);
			__m512i q = _mm512_mask_blend_epi32((__mmask16)0xaaaa, even, _mm512_slli_epi64(odd, 32));
			_mm_storeu_si128((__m128i *)(void *)(out[c] + i), _mm512_cvtepi32_epi8(q));
		}
	}
}

/* The 8-bit layout's row (conv_fast.h): 64 positions at a time, the 4
 * channels' bytes interleaved into pairs, then quads (within each 128-bit
 * lane), the lanes then put in order (a 4 x 4 transpose of lanes). */
NBG_AVX512 static void quad_avx512(const uint8_t *const r[4], uint8_t *d, uint64_t n, uint8_t flip, uint8_t fill)
{
	const __m512i vf = _mm512_set1_epi8((char)flip), vfill = _mm512_set1_epi8((char)fill);
	for (uint64_t x = 0; x < n; x += 64) {
		uint64_t left = n - x;
		__mmask64 m = left >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << left) - 1);
		__m512i v[4];
		for (int i = 0; i < 4; i++)
			v[i] = r[i] ? _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, r[i] + x), vf) : vfill;
		__m512i ab0 = _mm512_unpacklo_epi8(v[0], v[1]), ab1 = _mm512_unpackhi_epi8(v[0], v[1]);
		__m512i cd0 = _mm512_unpacklo_epi8(v[2], v[3]), cd1 = _mm512_unpackhi_epi8(v[2], v[3]);
		__m512i q0 = _mm512_unpacklo_epi16(ab0, cd0), q1 = _mm512_unpackhi_epi16(ab0, cd0);
		__m512i q2 = _mm512_unpacklo_epi16(ab1, cd1), q3 = _mm512_unpackhi_epi16(ab1, cd1);
		__m512i t0 = _mm512_shuffle_i32x4(q0, q1, 0x44), t1 = _mm512_shuffle_i32x4(q2, q3, 0x44);
		__m512i t2 = _mm512_shuffle_i32x4(q0, q1, 0xee), t3 = _mm512_shuffle_i32x4(q2, q3, 0xee);
		__m512i o[4] = { _mm512_shuffle_i32x4(t0, t1, 0x88), _mm512_shuffle_i32x4(t0, t1, 0xdd),
				 _mm512_shuffle_i32x4(t2, t3, 0x88), _mm512_shuffle_i32x4(t2, t3, 0xdd) };
		for (uint64_t k = 0; k < 4 && 16 * k < left; k++) {
			uint64_t c = left - 16 * k >= 16 ? 16 : left - 16 * k;
			__mmask16 mk = (__mmask16)(((uint32_t)1 << c) - 1);
			_mm512_mask_storeu_epi32(d + 4 * (x + 16 * k), mk, o[k]);
		}
	}
}

const cpu_conv_path nbg_cpu_conv_avx512 = { "avx512-vnni", avx512_usable, kern_avx512, GRP512, requant_avx512,
					     2, NULL, NULL };

const cpu_conv_path nbg_cpu_conv_avx512_8 = { "avx512-vnni-8bit", avx512_usable, kern_avx512_8, GRP512,
					      requant_avx512, 4, &nbg_cpu_conv_avx512, quad_avx512 };

#define NBG_AVX2 __attribute__((target("avx2")))
#define GRP256 4

static int avx2_usable(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}

/* One block as 4 quarters of 16 positions (2 registers of 8) by GRP256
 * channels: 8 sums in registers. */
NBG_AVX2 static void kern_avx2(const cpu_conv_job *j, uint64_t b, uint64_t gr, int32_t *acc)
{
	uint64_t k = j->cv->k, wide2 = j->g.wide * 2;
	for (int q = 0; q < 4; q++) {
		__m256i a[GRP256][2];
		for (int c = 0; c < GRP256; c++)
			a[c][0] = a[c][1] = _mm256_setzero_si256();
		const int16_t *w = j->wk + gr * j->pairs * k * k * GRP256 * 2;
		const int16_t *base = j->img + (b * CPU_BLK + (uint64_t)q * 16) * 2;
		for (uint64_t p = 0; p < j->pairs; p++)
			for (uint64_t ky = 0; ky < k; ky++) {
				const int16_t *x = base + p * j->g.plane * 2 + ky * wide2;
				for (uint64_t kx = 0; kx < k; kx++, x += 2, w += GRP256 * 2) {
					__m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)x);
					__m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(x + 16));
#pragma GCC unroll 4
					for (int c = 0; c < GRP256; c++) {
						__m256i wv = _mm256_set1_epi32(pair_at(w + 2 * c));
						a[c][0] = _mm256_add_epi32(a[c][0], _mm256_madd_epi16(x0, wv));
						a[c][1] = _mm256_add_epi32(a[c][1], _mm256_madd_epi16(x1, wv));
					}
				}
			}
		for (int c = 0; c < GRP256; c++)
			for (int r = 0; r < 2; r++)
				_mm256_storeu_si256((__m256i *)(void *)(acc + c * CPU_BLK + q * 16 + r * 8), a[c][r]);
	}
}

const cpu_conv_path nbg_cpu_conv_avx2 = { "avx2", avx2_usable, kern_avx2, GRP256, NULL, 2, NULL, NULL };

#else
/* Another target, or -Dcpu_kernels=portable: nothing here (ISO C wants a
 * declaration). */
typedef int cpu_conv_x86_none;
#endif
