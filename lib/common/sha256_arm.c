/*
 * sha256_arm.c - the SHA-256 block function on the ARMv8 Cryptographic
 * Extension (sha256h, sha256h2, sha256su0, sha256su1), compiled for it
 * alone (a target attribute, not a build flag), and called only where the
 * kernel's hardware capabilities say the CPU has it (sha256.c chooses).
 */
#include <arm_neon.h>
#include <sys/auxv.h>

#include "common/sha256.h"

#ifndef HWCAP_SHA2
#define HWCAP_SHA2 (1 << 6) /* arch/arm64/include/uapi/asm/hwcap.h */
#endif

int nbg_sha256_arm_usable(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_SHA2) != 0;
}

__attribute__((target("+crypto"))) void nbg_sha256_blocks_armce(uint32_t h[8], const uint8_t *p,
								size_t nblocks)
{
	uint32x4_t abcd = vld1q_u32(&h[0]), efgh = vld1q_u32(&h[4]);

	for (; nblocks; nblocks--, p += 64) {
		const uint32x4_t abcd0 = abcd, efgh0 = efgh;
		uint32x4_t w[4];

		/* big-endian words */
		for (int i = 0; i < 4; i++)
			w[i] = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(p + 16 * i)));
#pragma GCC unroll 16
		for (int g = 0; g < 16; g++) {
			uint32x4_t wk = vaddq_u32(w[g & 3], vld1q_u32(&nbg_sha256_k[4 * g]));
			uint32x4_t prev = abcd;
			/* the next group's W from the four before it (FIPS 180-4,
			 * 6.2.2 step 1): su0 adds sigma0 of the words 15 back, su1
			 * the words 7 back and sigma1 of those 2 back */
			if (g < 12)
				w[g & 3] = vsha256su1q_u32(vsha256su0q_u32(w[g & 3], w[(g + 1) & 3]),
							   w[(g + 2) & 3], w[(g + 3) & 3]);
			abcd = vsha256hq_u32(abcd, efgh, wk);
			efgh = vsha256h2q_u32(efgh, prev, wk);
		}
		abcd = vaddq_u32(abcd, abcd0);
		efgh = vaddq_u32(efgh, efgh0);
	}
	vst1q_u32(&h[0], abcd);
	vst1q_u32(&h[4], efgh);
}
