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
	__m512i a[GRP512][4];
	for (int c = 0; c < GRP512; c++)
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
	for (int c = 0; c < GRP512; c++)
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

/* quant.h's requantization, 8 sums at a time in 64-bit lanes: |acc| x
 * (2^23 + mantissa) below 2^55, rounded half away from zero by the shift,
 * the sign put back, the zero point added, ReLU and the output type's range
 * as bounds, the low byte kept. */
NBG_AVX512 static void requant_avx512(const cpu_conv *cv, const int32_t *acc, int32_t bias, uint8_t *out)
{
	int shift = 150 - (int)cv->exponent;
	int64_t tmin = cv->sgn ? -128 : 0, tmax = cv->sgn ? 127 : 255, zp = cv->sgn ? (int32_t)cv->out_zp : (int64_t)cv->out_zp;
	int64_t lo = cv->relu && zp > tmin ? zp : tmin;
	const __m512i mul = _mm512_set1_epi64((1 << 23) | (cv->mantissa & 0x7fffff));
	const __m512i half = _mm512_set1_epi64((int64_t)1 << (shift - 1)), zero = _mm512_setzero_si512();
	const __m512i vzp = _mm512_set1_epi64(zp), vlo = _mm512_set1_epi64(lo), vhi = _mm512_set1_epi64(tmax);
	const __m128i sh = _mm_cvtsi32_si128(shift);
	const __m256i vb = _mm256_set1_epi32(bias);
	for (int i = 0; i < CPU_BLK; i += 8) {
		__m256i a = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(acc + i)), vb);
		__m512i prod = _mm512_mul_epi32(_mm512_cvtepi32_epi64(a), mul);
		__m512i q = _mm512_srl_epi64(_mm512_add_epi64(_mm512_abs_epi64(prod), half), sh);
		q = _mm512_mask_sub_epi64(q, _mm512_cmplt_epi64_mask(prod, zero), zero, q);
		q = _mm512_min_epi64(_mm512_max_epi64(_mm512_add_epi64(q, vzp), vlo), vhi);
		_mm_storel_epi64((__m128i *)(void *)(out + i), _mm512_cvtepi64_epi8(q));
	}
}

/* The 8-bit layout's row (conv_fast.h): 16 positions at a time, each
 * channel's 16 bytes widened to 32-bit lanes and shifted into place. */
NBG_AVX512 static void quad_avx512(const uint8_t *const r[4], uint8_t *d, uint64_t n, uint8_t flip, uint8_t fill)
{
	const __m128i vf = _mm_set1_epi8((char)flip), vfill = _mm_set1_epi8((char)fill);
	for (uint64_t x = 0; x < n; x += 16) {
		__mmask16 m = n - x >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - x)) - 1);
		__m512i q = _mm512_setzero_si512();
		for (int i = 0; i < 4; i++) {
			__m128i b = r[i] ? _mm_xor_si128(_mm_maskz_loadu_epi8(m, r[i] + x), vf) : vfill;
			q = _mm512_or_si512(q, _mm512_slli_epi32(_mm512_cvtepu8_epi32(b), 8 * i));
		}
		_mm512_mask_storeu_epi32(d + 4 * x, m, q);
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
