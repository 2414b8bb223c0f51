/*
 * bench_conv.c - the CPU backend's convolution paths against this
 * machine's measured peak, in one run:
 *
 *  1. The peak: a loop of independent VNNI instructions on registers
 *     (vpdpbusd, 64 8-bit multiply-accumulates each, and vpdpwssd, 32
 *     16-bit ones, which the AVX-512 path computes with), G MAC/s of one
 *     core.
 *  2. Single convolutions, 56x56x64 -> 64 with a 3x3 kernel (border 1) and
 *     with a 1x1 kernel: every path compiled and usable here (the
 *     portable kernels, AVX2, AVX-512 VNNI) on one thread, G MAC/s of
 *     CPU time, the ratio to the portable kernels and to the peaks; then
 *     the process's path on 2 threads, the wall time's speedup over 1.
 *
 * Each per-core figure is the least CPU time of this process of ROUNDS
 * runs, and more until 0.5 s are spent (the run other programs on the
 * machine disturbed least: they slow the wall clock, and through the
 * caches and the core's time the CPU time too).  The thread scaling is wall time, which another program
 * on a core does slow: 8 x ROUNDS runs on 1 and on 2 threads in turn, the
 * ratio of the least of each (the runs least disturbed), and of the
 * medians.  It reports; it never fails on a time.
 *
 * Usage: bench_conv [ROUNDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_internal.h"
#include "cpu/ops/conv_fast.h"

#include "bench_time.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define NBG_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

/* n rounds of 12 independent instructions (enough to cover their latency
 * on 2 ports); the sums go out so the loop is not removed. */
#define PEAK_LOOP(INSN)                                                                      \
	__m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, \
		a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;                                     \
	__m512i x = _mm512_set1_epi32(0x01020304), y = _mm512_set1_epi32(0x05060708);          \
	for (uint64_t i = 0; i < n; i++) {                                                   \
		a0 = INSN(a0, x, y), a1 = INSN(a1, x, y), a2 = INSN(a2, x, y), a3 = INSN(a3, x, y); \
		a4 = INSN(a4, x, y), a5 = INSN(a5, x, y), a6 = INSN(a6, x, y), a7 = INSN(a7, x, y); \
		a8 = INSN(a8, x, y), a9 = INSN(a9, x, y), a10 = INSN(a10, x, y), a11 = INSN(a11, x, y); \
		__asm__ volatile("" : "+v"(x));                                                      \
	}                                                                                    \
	__m512i s = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)), \
				     _mm512_add_epi32(_mm512_add_epi32(a4, a5), _mm512_add_epi32(a6, a7))); \
	s = _mm512_add_epi32(s, _mm512_add_epi32(_mm512_add_epi32(a8, a9), _mm512_add_epi32(a10, a11))); \
	return _mm512_reduce_add_epi32(s)

NBG_VNNI static int32_t loop_busd(uint64_t n)
{
	PEAK_LOOP(_mm512_dpbusd_epi32);
}

NBG_VNNI static int32_t loop_wssd(uint64_t n)
{
	PEAK_LOOP(_mm512_dpwssd_epi32);
}

/* G MAC/s of one core: the median of rounds runs of n x 12 instructions
 * of macs each. */
static double peak(int32_t (*loop)(uint64_t), unsigned macs, int rounds)
{
	uint64_t n = 20u << 20;
	double t[64];
	volatile int32_t sink = 0;
	for (int r = 0; r < rounds; r++) {
		double t0 = bench_cpu();
		sink += loop(n);
		t[r] = bench_cpu() - t0;
	}
	(void)sink;
	qsort(t, (size_t)rounds, sizeof(double), bench_cmp_double);
	return (double)n * 12 * macs / t[rounds / 2] / 1e9;
}
#endif

typedef struct conv_case {
	cpu_conv cv;
	nbg_cpu_plan *plan; /* holds the weights laid out once per path, as a plan does */
	uint8_t *in, *out, *codes;
	int32_t *bias;
} conv_case;

static void case_make(conv_case *c, uint32_t k)
{
	memset(c, 0, sizeof(*c));
	cpu_conv *cv = &c->cv;
	cv->in_x = cv->in_y = cv->out_x = cv->out_y = cv->pool_x = cv->pool_y = 56;
	cv->in_z = cv->out_z = 64;
	cv->k = k;
	cv->x_off = cv->y_off = -(int32_t)(k / 2);
	cv->in_zp = 128, cv->w_zp = 128, cv->out_zp = 3; /* w - 128 fits int8: the 8-bit layout */
	cv->mantissa = 0x123456, cv->exponent = 127 - 12;
	cv->in_row = cv->out_row = 56;
	cv->in_slice = cv->out_slice = 56 * 56;
	cv->out_region = 1;
	size_t n = 64u * 64u * k * k;
	c->codes = malloc(n);
	c->bias = malloc(64 * sizeof(int32_t));
	c->in = malloc(56 * 56 * 64);
	c->out = malloc(56 * 56 * 64);
	if (!c->codes || !c->bias || !c->in || !c->out) {
		fprintf(stderr, "bench_conv: out of memory\n");
		exit(1);
	}
	uint32_t s = 7;
	for (size_t i = 0; i < n; i++)
		c->codes[i] = (uint8_t)((s = s * 1103515245u + 12345u) >> 24);
	for (size_t i = 0; i < 56 * 56 * 64; i++)
		c->in[i] = (uint8_t)((s = s * 1103515245u + 12345u) >> 24);
	for (int i = 0; i < 64; i++)
		c->bias[i] = i * 1000 - 32000;
	cv->codes = c->codes;
	cv->bias = c->bias;
	cv->acc32 = nbg_cpu_conv_fits_int32(cv);
	c->plan = calloc(1, sizeof(*c->plan));
	if (!c->plan) {
		fprintf(stderr, "bench_conv: out of memory\n");
		exit(1);
	}
	c->plan->totals.limits.max_plan_steps = UINT64_MAX;
	c->plan->totals.limits.max_memory = UINT64_MAX;
}

/* Seconds of one run of c on path and threads threads (CPU time, or wall
 * time when wall). */
static double time_once(conv_case *c, const cpu_conv_path *path, uint32_t threads, int wall)
{
	cpu_conv cv = c->cv;
	cv.path = path;
	cv.portable = !path->kern;
	cv.threads = threads;
	nbg_cpu_conv_keep(c->plan, &cv); /* the path's layout, once: found again after the first run */
	uint8_t *buf[2] = { c->in, c->out };
	double t0 = wall ? bench_wall() : bench_cpu();
	if (nbg_cpu_conv_run(&cv, buf)) {
		fprintf(stderr, "bench_conv: out of memory\n");
		exit(1);
	}
	return (wall ? bench_wall() : bench_cpu()) - t0;
}

/* The least CPU seconds of one run on one thread: of rounds runs, and
 * more until LEAST_SECONDS of CPU time are spent (at most LEAST_RUNS): a
 * run of 0.1 ms needs many for one that nothing disturbed. */
#define LEAST_SECONDS 0.5
#define LEAST_RUNS 5000
static double time_conv(conv_case *c, const cpu_conv_path *path, int rounds)
{
	double least = 0, spent = 0;
	for (int r = 0; r < rounds || (spent < LEAST_SECONDS && r < LEAST_RUNS); r++) {
		double t = time_once(c, path, 1, 0);
		least = r == 0 || t < least ? t : least;
		spent += t;
	}
	return least;
}

/* The 2-thread scaling: SCALE_RUN runs back to back on 1 thread, then on
 * 2, in turn (so the machine's other work weighs on both alike; back to
 * back, as a model's operations or a loop over inputs run them), in all
 * SCALE_ROUNDS x rounds of each; into w[0], w[1] the least wall time of
 * each (the runs the other programs disturbed least), into w[2], w[3]
 * the median. */
#define SCALE_ROUNDS 8
#define SCALE_RUN 4
static void time_scaling(conv_case *c, const cpu_conv_path *path, int rounds, double w[4])
{
	int n = rounds * SCALE_ROUNDS;
	double *t1 = malloc((size_t)n * sizeof(double)), *t2 = malloc((size_t)n * sizeof(double));
	if (!t1 || !t2) {
		fprintf(stderr, "bench_conv: out of memory\n");
		exit(1);
	}
	for (int r = 0; r < n; r += SCALE_RUN) {
		for (int i = 0; i < SCALE_RUN; i++)
			t1[r + i] = time_once(c, path, 1, 1);
		for (int i = 0; i < SCALE_RUN; i++)
			t2[r + i] = time_once(c, path, 2, 1);
	}
	qsort(t1, (size_t)n, sizeof(double), bench_cmp_double);
	qsort(t2, (size_t)n, sizeof(double), bench_cmp_double);
	w[0] = t1[0], w[1] = t2[0], w[2] = t1[n / 2], w[3] = t2[n / 2];
	free(t1);
	free(t2);
}

static void bench_case(uint32_t k, int rounds, double busd, double wssd)
{
	conv_case c;
	case_make(&c, k);
	double macs = 56.0 * 56 * 64 * 64 * k * k, portable = 0;
	size_t n;
	const cpu_conv_path *const *paths = nbg_cpu_conv_paths(&n);
	for (size_t i = n; i-- > 0;) { /* the portable path, last, first */
		if (paths[i]->usable && !paths[i]->usable())
			continue;
		double g = macs / time_conv(&c, paths[i], rounds) / 1e9;
		portable = paths[i]->kern ? portable : g;
		printf("conv %ux%u 56x56x64->64  %-12s 1 thread  %8.2f GMAC/s  %6.2fx portable", k, k,
		       paths[i]->name, g, g / portable);
		if (busd > 0)
			printf("  %5.1f%% of vpdpbusd peak  %5.1f%% of vpdpwssd peak", 100 * g / busd, 100 * g / wssd);
		printf("\n");
	}
	const cpu_conv_path *best = nbg_cpu_conv_path();
	double w[4];
	time_scaling(&c, best, rounds, w);
	printf("conv %ux%u 56x56x64->64  %-12s 2 threads %8.2f GMAC/s wall  %5.2fx 1 thread's wall time (least "
	       "of %d each), %5.2fx (medians)\n", k, k, best->name, macs / w[1] / 1e9, w[0] / w[1],
	       rounds * SCALE_ROUNDS, w[2] / w[3]);
	nbg_cpu_conv_kept_free(c.plan);
	free(c.plan);
	free(c.codes);
	free(c.bias);
	free(c.in);
	free(c.out);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 9;
	rounds = rounds < 1 ? 1 : rounds > 64 ? 64 : rounds;
	double busd = 0, wssd = 0;
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw")) {
		busd = peak(loop_busd, 64, rounds);
		wssd = peak(loop_wssd, 32, rounds);
		printf("peak of one core: vpdpbusd %.1f GMAC/s (8-bit), vpdpwssd %.1f GMAC/s (16-bit)\n", busd,
		       wssd);
	} else {
		printf("peak: not measured (this CPU has no AVX-512 VNNI)\n");
	}
#endif
	/* the pool lives across the runs, as across a model run's operations */
	nbg_cpu_pool_hold();
	bench_case(3, rounds, busd, wssd);
	bench_case(1, rounds, busd, wssd);
	nbg_cpu_pool_release();
	return 0;
}
