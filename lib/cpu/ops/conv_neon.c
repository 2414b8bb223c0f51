/*
 * ops/conv_neon.c - the 32-bit convolution's kernel on aarch64's NEON
 * (Advanced SIMD, which every aarch64 CPU has), on ops/conv_fast.h's
 * int16 pairs: per tap pair, smull / smull2 multiply 4 positions' two
 * input channels by the pair of weights and addp adds each position's two
 * products, 4 int32 lanes a register.  The lanes wrap modulo 2^32, as the
 * portable kernels' sums would; the plan proved the true sums fit int32,
 * so both give them exactly.
 */
#if defined(__aarch64__)
#include "nbg_cpu_config.h"
#endif

#if defined(__aarch64__) && NBG_CPU_SIMD_ARM
#include <arm_neon.h>
#include <string.h>

#include "cpu/ops/conv_fast.h"

#define GRPNEON 4

/* One block as 4 quarters of 16 positions (4 registers of 4) by GRPNEON
 * channels: 16 sums in registers. */
static void kern_neon(const cpu_conv_job *j, uint64_t b, uint64_t gr, int32_t *acc)
{
	uint64_t k = j->cv->k, wide2 = j->g.wide * 2;
	for (int q = 0; q < 4; q++) {
		int32x4_t a[GRPNEON][4];
		for (int c = 0; c < GRPNEON; c++)
			for (int r = 0; r < 4; r++)
				a[c][r] = vdupq_n_s32(0);
		const int16_t *w = j->wk + gr * j->pairs * k * k * GRPNEON * 2;
		const int16_t *base = j->img + (b * CPU_BLK + (uint64_t)q * 16) * 2;
		for (uint64_t p = 0; p < j->pairs; p++)
			for (uint64_t ky = 0; ky < k; ky++) {
				const int16_t *x = base + p * j->g.plane * 2 + ky * wide2;
				for (uint64_t kx = 0; kx < k; kx++, x += 2, w += GRPNEON * 2) {
					int16x8_t xv[4];
					for (int r = 0; r < 4; r++)
						xv[r] = vld1q_s16(x + 8 * r);
					for (int c = 0; c < GRPNEON; c++) {
						int32_t pair;
						memcpy(&pair, w + 2 * c, sizeof(pair));
						int16x8_t wv = vreinterpretq_s16_s32(vdupq_n_s32(pair));
						for (int r = 0; r < 4; r++) {
							int32x4_t lo = vmull_s16(vget_low_s16(xv[r]), vget_low_s16(wv));
							int32x4_t hi = vmull_high_s16(xv[r], wv);
							a[c][r] = vaddq_s32(a[c][r], vpaddq_s32(lo, hi));
						}
					}
				}
			}
		for (int c = 0; c < GRPNEON; c++)
			for (int r = 0; r < 4; r++)
				vst1q_s32(acc + c * CPU_BLK + q * 16 + r * 4, a[c][r]);
	}
}

const cpu_conv_path nbg_cpu_conv_neon = { "neon", NULL, kern_neon, GRPNEON, NULL, 2, NULL, NULL };

#else
/* Another target, or -Dcpu_kernels=portable: nothing here (ISO C wants a
 * declaration). */
typedef int cpu_conv_neon_none;
#endif
