/*
 * ops/conv_fast.c - the 32-bit convolution on the CPU's vector
 * instructions and on threads (ops/conv_fast.h): the path chosen once per
 * process, as the SHA-256 block function is (lib/common/sha256.c), the
 * input and weights laid out for it, its blocks and groups cut across
 * threads, each sum requantized as ops/conv.c requantizes it.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu/budget.h"
#include "cpu/ops/conv_fast.h"
#include "cpu/quant.h"

#if defined(__x86_64__)
#include "nbg_cpu_config.h"
#else
#define NBG_CPU_SIMD_X86 0
#endif

static const cpu_conv_path portable = { "portable", NULL, NULL, CPU_GRP, NULL, 2, NULL };

static const cpu_conv_path *const paths[] = {
#if NBG_CPU_SIMD_X86
	&nbg_cpu_conv_avx512_8,
	&nbg_cpu_conv_avx512,
	&nbg_cpu_conv_avx2,
#endif
	&portable,
};
#define PATH_COUNT (sizeof(paths) / sizeof(paths[0]))

const cpu_conv_path *const *nbg_cpu_conv_paths(size_t *n)
{
	*n = PATH_COUNT;
	return paths;
}

const cpu_conv_path *nbg_cpu_conv_path(void)
{
	static const cpu_conv_path *best;
	const cpu_conv_path *b = __atomic_load_n(&best, __ATOMIC_RELAXED);
	if (!b) {
		size_t i = 0;
		while (paths[i]->usable && !paths[i]->usable())
			i++; /* the portable one, last, has none */
		b = paths[i];
		__atomic_store_n(&best, b, __ATOMIC_RELAXED);
	}
	return b;
}

/* The path that runs cv, NULL when ops/conv.c's kernels do. */
static const cpu_conv_path *path_of(const cpu_conv *cv)
{
	const cpu_conv_path *path = cv->path ? cv->path : nbg_cpu_conv_path();
	if (cv->portable || cv->depthwise || !path->kern)
		return NULL;
	return path;
}

uint64_t nbg_cpu_conv_fast_scratch(const cpu_conv *cv)
{
	const cpu_conv_path *path = path_of(cv);
	if (!path)
		return 0;
	cpu_conv_geom g = nbg_cpu_conv_geometry(cv);
	uint64_t pairs = ((uint64_t)cv->in_z + 1) / 2, kk = (uint64_t)cv->k * cv->k;
	uint64_t groups = ((uint64_t)cv->out_z + path->grp - 1) / path->grp;
	/* the int16 pairs; the 8-bit layout takes at most as much, with corr */
	uint64_t img = nbg_cpu_mul_sat(nbg_cpu_mul_sat(pairs, g.plane), 4);
	uint64_t wk = nbg_cpu_mul_sat(nbg_cpu_mul_sat(groups * path->grp, pairs), kk * 4);
	return nbg_cpu_add_sat(nbg_cpu_add_sat(img, wk), groups * path->grp * 4);
}

/* The input minus its zero point into j->img's pairs: rows of the wide
 * planes whose input row exists, columns whose input column does (the
 * rest stays 0, the border's term). */
static void pack_image(const cpu_conv *cv, const cpu_conv_geom *g, const uint8_t *in, int16_t *img)
{
	int64_t lo = cv->x_off < 0 ? -(int64_t)cv->x_off : 0;
	int64_t hi = (int64_t)cv->in_x - cv->x_off;
	hi = hi < (int64_t)g->wide ? hi : (int64_t)g->wide;
	int32_t xz = (int32_t)cv->in_zp;
	for (uint32_t z = 0; z < cv->in_z; z++) {
		const uint8_t *src = in + cv->in_base + (uint64_t)z * cv->in_slice;
		int16_t *dst = img + (size_t)(z / 2) * g->plane * 2 + (z & 1);
		for (uint64_t y = 0; y < (uint64_t)cv->out_y + cv->k - 1; y++) {
			int64_t iy = (int64_t)y + cv->y_off;
			if (iy < 0 || iy >= (int64_t)cv->in_y)
				continue;
			const uint8_t *row = src + (uint64_t)iy * cv->in_row + cv->x_off;
			int16_t *d = dst + y * g->wide * 2;
			if (cv->sgn)
				for (int64_t x = lo; x < hi; x++)
					d[x * 2] = (int16_t)((int8_t)row[x] - xz);
			else
				for (int64_t x = lo; x < hi; x++)
					d[x * 2] = (int16_t)(row[x] - xz);
		}
	}
}

/* The weights minus their zero point into j->wk's groups and pairs. */
static void pack_weights(const cpu_conv *cv, const cpu_conv_job *j, int16_t *wk)
{
	uint64_t kk = (uint64_t)cv->k * cv->k;
	int32_t wz = (int32_t)cv->w_zp;
	for (uint64_t gr = 0; gr < j->groups; gr++)
		for (uint64_t p = 0; p < j->pairs; p++)
			for (uint64_t t = 0; t < kk; t++)
				for (uint32_t c = 0; c < j->grp; c++)
					for (uint32_t h = 0; h < 2; h++) {
						uint64_t o = gr * j->grp + c, z = 2 * p + h;
						int16_t v = 0;
						if (o < cv->out_z && z < cv->in_z)
							v = (int16_t)(nbg_cpu_conv_val(cv, cv->codes[(o * cv->in_z + z) * kk + t]) - wz);
						*wk++ = v;
					}
}

int nbg_cpu_conv_fits_int8(const cpu_conv *cv)
{
	uint64_t n = (uint64_t)cv->out_z * cv->in_z * cv->k * cv->k;
	for (uint64_t i = 0; i < n; i++) {
		int32_t d = nbg_cpu_conv_val(cv, cv->codes[i]) - (int32_t)cv->w_zp;
		if (d < -128 || d > 127)
			return 0;
	}
	return 1;
}

/* The input bytes as u into j->img8's quads (every other byte is c,
 * memset by the caller). */
static void pack_image8(const cpu_conv *cv, const cpu_conv_geom *g, const uint8_t *in, uint8_t *img)
{
	int64_t lo = cv->x_off < 0 ? -(int64_t)cv->x_off : 0;
	int64_t hi = (int64_t)cv->in_x - cv->x_off;
	hi = hi < (int64_t)g->wide ? hi : (int64_t)g->wide;
	uint8_t flip = cv->sgn ? 0x80 : 0; /* int8: the byte plus 128 */
	for (uint32_t z = 0; z < cv->in_z; z++) {
		const uint8_t *src = in + cv->in_base + (uint64_t)z * cv->in_slice;
		uint8_t *dst = img + (size_t)(z / 4) * g->plane * 4 + (z & 3);
		for (uint64_t y = 0; y < (uint64_t)cv->out_y + cv->k - 1; y++) {
			int64_t iy = (int64_t)y + cv->y_off;
			if (iy < 0 || iy >= (int64_t)cv->in_y)
				continue;
			const uint8_t *row = src + (uint64_t)iy * cv->in_row + cv->x_off;
			uint8_t *d = dst + y * g->wide * 4;
			for (int64_t x = lo; x < hi; x++)
				d[x * 4] = row[x] ^ flip;
		}
	}
}

/* The weights minus their zero point (each in int8: the caller checked)
 * into j->wk8's groups and quads, and corr = c x each channel's sum. */
static void pack_weights8(const cpu_conv *cv, const cpu_conv_job *j, int8_t *wk, int32_t *corr)
{
	uint64_t kk = (uint64_t)cv->k * cv->k;
	int32_t wz = (int32_t)cv->w_zp, c0 = cv->sgn ? 128 : (int32_t)cv->in_zp;
	for (uint64_t gr = 0; gr < j->groups; gr++) {
		for (uint32_t c = 0; c < j->grp; c++)
			corr[gr * j->grp + c] = 0;
		for (uint64_t q = 0; q < j->quads; q++)
			for (uint64_t t = 0; t < kk; t++)
				for (uint32_t c = 0; c < j->grp; c++)
					for (uint32_t h = 0; h < 4; h++) {
						uint64_t o = gr * j->grp + c, z = 4 * q + h;
						int32_t v = 0;
						if (o < cv->out_z && z < cv->in_z)
							v = nbg_cpu_conv_val(cv, cv->codes[(o * cv->in_z + z) * kk + t]) - wz;
						/* |sum| <= 128 x taps < 2^31 / 255 (the plan's bound) */
						corr[gr * j->grp + c] += v * c0;
						*wk++ = (int8_t)v;
					}
	}
}

/* One block's sums of one group, the bias added, requantized (by the
 * path's vector code where the scale allows) and copied into the planes:
 * the block's positions in each row of the wide output, less its last
 * k - 1 columns. */
static void block_out(const cpu_conv_job *j, uint64_t b, uint64_t gr, const int32_t *acc)
{
	const cpu_conv *cv = j->cv;
	uint8_t q[8][CPU_BLK];
	uint64_t plane_out = (uint64_t)cv->out_x * cv->out_y, o0 = gr * j->grp;
	uint32_t nch = cv->out_z - o0 < j->grp ? (uint32_t)(cv->out_z - o0) : j->grp;
	int shift = 150 - (int)cv->exponent;
	for (uint32_t c = 0; c < nch; c++) {
		const int32_t *a = acc + c * CPU_BLK;
		int32_t bias = (int32_t)((uint32_t)cv->bias[o0 + c] - (j->corr ? (uint32_t)j->corr[o0 + c] : 0));
		if (j->path->requant && shift >= 1 && shift <= 62) {
			j->path->requant(cv, a, bias, q[c]);
			continue;
		}
		for (int i = 0; i < CPU_BLK; i++) {
			/* wrapping 32-bit sums: their true value fits int32 */
			int64_t v = (int32_t)((uint32_t)a[i] + (uint32_t)bias);
			q[c][i] = cv->sgn ? nbg_cpu_requant_s8(v, cv->mantissa, cv->exponent, (int32_t)cv->out_zp, cv->relu)
					  : nbg_cpu_requant(v, cv->mantissa, cv->exponent, cv->out_zp, cv->relu);
		}
	}
	for (uint64_t pos = b * CPU_BLK, end = pos + CPU_BLK; pos < end;) {
		uint64_t oy = pos / j->g.wide, ox = pos % j->g.wide;
		uint64_t len = j->g.wide - ox < end - pos ? j->g.wide - ox : end - pos;
		if (oy >= cv->out_y)
			break;
		if (ox < cv->out_x) {
			size_t n = (size_t)(cv->out_x - ox < len ? cv->out_x - ox : len);
			for (uint32_t c = 0; c < nch; c++)
				memcpy(j->planes + (o0 + c) * plane_out + oy * cv->out_x + ox, q[c] + (pos - b * CPU_BLK), n);
		}
		pos += len;
	}
}

/* Items [lo, hi) of the job, block-major (item = block x groups + group). */
static void run_items(void *ctx, uint64_t lo, uint64_t hi)
{
	const cpu_conv_job *j = ctx;
	int32_t acc[CPU_BLK * 8];
	for (uint64_t it = lo; it < hi; it++) {
		uint64_t b = it / j->groups, gr = it % j->groups;
		j->path->kern(j, b, gr, acc);
		block_out(j, b, gr, acc);
	}
}

/* Below this many multiply-accumulates an operation runs on one thread:
 * starting threads would cost more than they save. */
#define CPU_THREAD_MACS (1u << 20)

/* The 8-bit layout into j (1), or 0 when out of memory; *mem: what to free. */
static int layout8(cpu_conv_job *j, const uint8_t *in, void *mem[3])
{
	const cpu_conv *cv = j->cv;
	uint64_t kk = (uint64_t)cv->k * cv->k;
	j->quads = ((uint64_t)cv->in_z + 3) / 4;
	uint8_t *img = mem[0] = malloc((size_t)(j->quads * j->g.plane * 4));
	int8_t *wk = mem[1] = malloc((size_t)(j->groups * j->grp * j->quads * kk * 4));
	int32_t *corr = mem[2] = malloc((size_t)(j->groups * j->grp) * sizeof(*corr));
	if (!img || !wk || !corr)
		return 0;
	memset(img, cv->sgn ? 128 : (int)cv->in_zp, (size_t)(j->quads * j->g.plane * 4));
	pack_image8(cv, &j->g, in, img);
	pack_weights8(cv, j, wk, corr);
	j->img8 = img;
	j->wk8 = wk;
	j->corr = corr;
	return 1;
}

/* The int16 pairs into j (1), or 0 when out of memory. */
static int layout16(cpu_conv_job *j, const uint8_t *in, void *mem[3])
{
	const cpu_conv *cv = j->cv;
	uint64_t kk = (uint64_t)cv->k * cv->k;
	int16_t *img = mem[0] = calloc((size_t)(j->pairs * j->g.plane * 2), sizeof(*img));
	int16_t *wk = mem[1] = malloc((size_t)(j->groups * j->grp * j->pairs * kk * 2) * sizeof(*wk));
	if (!img || !wk)
		return 0;
	pack_image(cv, &j->g, in, img);
	pack_weights(cv, j, wk);
	j->img = img;
	j->wk = wk;
	return 1;
}

int nbg_cpu_conv_fast(const cpu_conv *cv, const uint8_t *in, uint8_t *planes)
{
	const cpu_conv_path *path = path_of(cv);
	if (!path)
		return 0;
	if (path->width == 4 && !nbg_cpu_conv_fits_int8(cv))
		path = path->wide;
	cpu_conv_job j = { .cv = cv, .g = nbg_cpu_conv_geometry(cv), .grp = path->grp, .planes = planes,
			   .path = path };
	j.pairs = ((uint64_t)cv->in_z + 1) / 2;
	j.groups = ((uint64_t)cv->out_z + path->grp - 1) / path->grp;
	void *mem[3] = { NULL, NULL, NULL };
	int ok = path->width == 4 ? layout8(&j, in, mem) : layout16(&j, in, mem);
	if (ok) {
		uint64_t macs = j.g.blocks * CPU_BLK * j.groups * path->grp * j.pairs * 2 * cv->k * cv->k;
		nbg_cpu_parallel(macs < CPU_THREAD_MACS ? 1 : cv->threads, j.g.blocks * j.groups, run_items, &j);
	}
	for (int i = 0; i < 3; i++)
		free(mem[i]);
	return ok ? 1 : -1;
}
