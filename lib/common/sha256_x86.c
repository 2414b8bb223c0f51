/*
 * sha256_x86.c - the SHA-256 block function on the x86 SHA extensions
 * (SHA-NI: sha256rnds2, sha256msg1, sha256msg2), compiled for them alone
 * (a target attribute, not a build flag), and called only where cpuid says
 * the CPU has them (sha256.c chooses).  Each 128-bit register holds four
 * 32-bit words; the instructions want the state as ABEF and CDGH.
 */
#include <cpuid.h>
#include <immintrin.h>

#include "common/sha256.h"

int nbg_sha256_x86_usable(void)
{
	unsigned a, b, c, d;

	/* leaf 1: SSSE3 (ecx bit 9) and SSE4.1 (bit 19); leaf 7: SHA (ebx bit 29) */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) || !(c & (1u << 19)))
		return 0;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return (b >> 29) & 1;
}

#define NBG_SHANI __attribute__((target("sha,sse4.1,ssse3")))

/* Four rounds: K + W in m, two rounds at a time (the second pair of words
 * moved down). */
NBG_SHANI static inline void rounds4(__m128i *abef, __m128i *cdgh, __m128i m)
{
	*cdgh = _mm_sha256rnds2_epu32(*cdgh, *abef, m);
	*abef = _mm_sha256rnds2_epu32(*abef, *cdgh, _mm_shuffle_epi32(m, 0x0e));
}

/* W[t..t+3] for the next group from the four groups before it (FIPS
 * 180-4, 6.2.2 step 1): msg1 adds sigma0 of the words 15 back, the
 * alignr gives the words 7 back, msg2 adds sigma1 of the words 2 back. */
NBG_SHANI static inline __m128i schedule(__m128i w0, __m128i w1, __m128i w2, __m128i w3)
{
	__m128i t = _mm_add_epi32(_mm_sha256msg1_epu32(w0, w1), _mm_alignr_epi8(w3, w2, 4));
	return _mm_sha256msg2_epu32(t, w3);
}

NBG_SHANI void nbg_sha256_blocks_shani(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
	/* big-endian words: reverse the bytes of each 32-bit lane */
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i dcba = _mm_loadu_si128((const __m128i *)(const void *)&h[0]);
	__m128i hgfe = _mm_loadu_si128((const __m128i *)(const void *)&h[4]);
	__m128i cdab = _mm_shuffle_epi32(dcba, 0xb1);
	__m128i efgh = _mm_shuffle_epi32(hgfe, 0x1b);
	__m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
	__m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xf0);

	for (; nblocks; nblocks--, p += 64) {
		const __m128i abef0 = abef, cdgh0 = cdgh;
		__m128i w[4];

		for (int i = 0; i < 4; i++)
			w[i] = _mm_shuffle_epi8(
				_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i)), bswap);
#pragma GCC unroll 16
		for (int g = 0; g < 16; g++) {
			const __m128i k =
				_mm_loadu_si128((const __m128i *)(const void *)&nbg_sha256_k[4 * g]);
			rounds4(&abef, &cdgh, _mm_add_epi32(w[g & 3], k));
			if (g < 12)
				w[g & 3] = schedule(w[g & 3], w[(g + 1) & 3], w[(g + 2) & 3],
						    w[(g + 3) & 3]);
		}
		abef = _mm_add_epi32(abef, abef0);
		cdgh = _mm_add_epi32(cdgh, cdgh0);
	}
	/* back to h[0..7] = a..h */
	__m128i feba = _mm_shuffle_epi32(abef, 0x1b);
	__m128i dchg = _mm_shuffle_epi32(cdgh, 0xb1);
	_mm_storeu_si128((__m128i *)(void *)&h[0], _mm_blend_epi16(feba, dchg, 0xf0));
	_mm_storeu_si128((__m128i *)(void *)&h[4], _mm_alignr_epi8(dchg, feba, 8));
}
