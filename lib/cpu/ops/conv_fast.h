/*
 * conv_fast.h - the 32-bit convolution on the CPU's vector instructions and
 * on several threads (ops/conv_fast.c drives, ops/conv_x86.c computes on
 * x86).  ops/conv.c's 32-bit kernels stay the reference and the fallback:
 * every path here gives their bytes (integer sums, wrapping in 32 bits,
 * whose true value the plan proved fits int32: any order of the additions
 * gives it exactly).  Never installed.
 *
 * The layout the paths compute on: the input, minus its zero point, as
 * int16 pairs of consecutive input channels (2p, 2p + 1) at each position
 * of ops/conv.h's padded wide planes, img[p][position][2]; the weights,
 * minus theirs, in groups of `grp` output channels, wk[group][p][ky][kx]
 * [channel][2], 0 past the last channel and the last input channel.  A
 * kernel adds, for one block of CPU_BLK wide-output positions and one
 * group, every tap into acc[channel][position] (the bias is added after).
 */
#ifndef NBG_CPU_OPS_CONV_FAST_H
#define NBG_CPU_OPS_CONV_FAST_H

#include <stddef.h>
#include <stdint.h>

#include "cpu/hidden.h"
#include "cpu/ops/conv.h"

typedef struct cpu_conv_job {
	const cpu_conv *cv;
	cpu_conv_geom g;
	uint64_t pairs;          /* (in_z + 1) / 2 */
	uint32_t grp;            /* output channels per group (the path's) */
	uint64_t groups;         /* ceil(out_z / grp) */
	const int16_t *img;      /* [pairs][g.plane][2] */
	const int16_t *wk;       /* [groups][pairs][k][k][grp][2] */
	/* the 8-bit layout (a path whose width is 4): quads of input channels */
	uint64_t quads;          /* (in_z + 3) / 4 */
	const uint8_t *img8;     /* [quads][g.plane][4]: u, the byte as unsigned */
	const int8_t *wk8;       /* [groups][quads][k][k][grp][4]: w - zero point */
	const int32_t *corr;     /* [groups x grp]: c x the channel's sum of w - zero point */
	uint8_t *planes;         /* [out_z][out_y][out_x], the requantized output */
	const struct cpu_conv_path *path;
} cpu_conv_job;

/* acc[c * CPU_BLK + i]: channel gr * grp + c at wide position b * CPU_BLK + i. */
typedef void (*cpu_conv_kern)(const cpu_conv_job *j, uint64_t b, uint64_t gr, int32_t *acc);

/* The sums of n channels (acc[c * CPU_BLK + i], n at most 8), each
 * CPU_BLK of them plus its channel's bias[c] (wrapping in 32 bits),
 * requantized into out[c] as nbg_cpu_requant / nbg_cpu_requant_s8 do
 * (quant.h), for a scale whose shift 150 - exponent lies in [1, 62]. */
typedef void (*cpu_conv_requant)(const cpu_conv *cv, const int32_t *acc, uint32_t n, const int32_t *bias,
				 uint8_t *const *out);

/* A path: its name, whether this CPU runs it (NULL: every CPU), its
 * kernel and group size (at most 8); kern NULL: ops/conv.c's portable
 * kernels; requant NULL: quant.h's, one sum at a time.  Width 4: the
 * 8-bit layout, for a convolution whose weights minus their zero point
 * all fit int8 (nbg_cpu_conv_fits_int8), `wide` taking the others;
 * width 2: the int16 pairs. */
typedef struct cpu_conv_path {
	const char *name;        /* "avx512-vnni-8bit", "avx512-vnni", "avx2", "portable" */
	int (*usable)(void);
	cpu_conv_kern kern;
	uint32_t grp;
	cpu_conv_requant requant;
	uint32_t width;
	const struct cpu_conv_path *wide;
	/* the 8-bit layout's row (NULL: the portable code): n positions
	 * from 4 input channels' rows r (NULL: a missing channel, fill), each
	 * byte xor flip, into d[n][4] */
	void (*quad)(const uint8_t *const r[4], uint8_t *d, uint64_t n, uint8_t flip, uint8_t fill);
} cpu_conv_path;

/*
 * The 8-bit layout: x - in_zp = u - c, with u the input byte (uint8 data,
 * c = in_zp) or the byte plus 128 (int8 data, whose zero point is 0: c =
 * 128), the border and the missing channels u = c.  Then the sum is
 * sum (w - w_zp) u - c sum (w - w_zp), the first of unsigned bytes times
 * signed ones (vpdpbusd: four products into each int32 lane), the second
 * corr.  Whether every w - w_zp of cv lies in [-128, 127]:
 */
CPU_HIDDEN int nbg_cpu_conv_fits_int8(const cpu_conv *cv);

/* The paths compiled in, best first, the portable one last; the one this
 * process uses (the first usable, chosen once). */
CPU_HIDDEN const cpu_conv_path *const *nbg_cpu_conv_paths(size_t *n);
CPU_HIDDEN const cpu_conv_path *nbg_cpu_conv_path(void);

/* Below this many multiply-accumulates the plan gives an operation one
 * thread (cpu_conv.threads): starting threads and waiting for a core
 * would cost more than they save (some 0.3 ms of one core on the
 * vector paths). */
#define CPU_THREAD_MACS ((uint64_t)1 << 22)

/* Runs a convolution the plan gave the 32-bit kernels (acc32, no fused
 * addition) on cv->path (NULL: the process's) and cv->threads threads into
 * planes: 1 when done, 0 when this path does not take it (the portable
 * path, a depthwise convolution: ops/conv.c's kernels run it), -1 when out
 * of memory. */
CPU_HIDDEN int nbg_cpu_conv_fast(const cpu_conv *cv, const uint8_t *in, uint8_t *planes);
/* The bytes it allocates at most, on any path (0 for a convolution no
 * path takes: depthwise, 64-bit, fused addition). */
CPU_HIDDEN uint64_t nbg_cpu_conv_fast_scratch(const cpu_conv *cv);
/* Lays out cv's weights once for the runs, for the process's path, kept by
 * the plan (nbg_cpu_totals.kept) while the plan's steps allow the walk
 * (two steps a weight of every convolution a vector path may run, charged
 * on every machine alike) and buffers + largest scratch + kept stay within
 * max_memory; otherwise each run lays them out.  nbg_cpu_conv_kept_free frees what the plan
 * keeps. */
CPU_HIDDEN void nbg_cpu_conv_keep(nbg_cpu_plan *p, cpu_conv *cv);
CPU_HIDDEN void nbg_cpu_conv_kept_free(nbg_cpu_plan *p);

/* ops/conv_x86.c (x86-64 builds with -Dcpu_kernels=auto). */
CPU_HIDDEN extern const cpu_conv_path nbg_cpu_conv_avx512_8, nbg_cpu_conv_avx512, nbg_cpu_conv_avx2;
/* ops/conv_neon.c (aarch64 builds with -Dcpu_kernels=auto). */
CPU_HIDDEN extern const cpu_conv_path nbg_cpu_conv_neon;

/* Calls fn(ctx, lo, hi) over [0, n) cut into contiguous chunks of at
 * least `grain` items (the last one excepted) that up to `threads`
 * threads (the caller's and a pool's that lives across calls) claim in
 * turn, and returns when all are done; [0, n) at once in the caller when
 * threads <= 1, and in chunks in the caller alone in a build without
 * threads or while another call uses the pool (lib/cpu/threads.c). */
typedef void (*cpu_range_fn)(void *ctx, uint64_t lo, uint64_t hi);
CPU_HIDDEN void nbg_cpu_parallel(uint32_t threads, uint64_t n, uint64_t grain, cpu_range_fn fn, void *ctx);

/* Scratch memory of at least n bytes (64-byte aligned, not set), from a
 * cache of blocks earlier operations gave back, or allocated: NULL when
 * out of memory; nbg_cpu_scratch_give gives it back (NULL: nothing) to
 * that cache, which keeps a few blocks across operations (lib/cpu/threads.c). */
CPU_HIDDEN void *nbg_cpu_scratch_take(size_t n);
CPU_HIDDEN void nbg_cpu_scratch_give(void *p);

/* A run's hold on the thread pool and the scratch cache
 * (lib/cpu/threads.c): between the first hold and the last release the
 * pool's workers and the cached blocks live across operations; the last
 * release joins the workers and frees the blocks.  Holds nest and may be
 * taken from several threads. */
CPU_HIDDEN void nbg_cpu_pool_hold(void);
CPU_HIDDEN void nbg_cpu_pool_release(void);

#endif
