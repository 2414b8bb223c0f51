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
#include "cpu/cpu_internal.h"
#include "cpu/ops/conv_fast.h"
#include "cpu/quant.h"

#if defined(__x86_64__) || defined(__aarch64__)
#include "nbg_cpu_config.h"
#else
#define NBG_CPU_SIMD_X86 0
#define NBG_CPU_SIMD_ARM 0
#endif

static const cpu_conv_path portable = { "portable", NULL, NULL, CPU_GRP, NULL, 2, NULL };

static const cpu_conv_path *const paths[] = {
#if NBG_CPU_SIMD_X86
	&nbg_cpu_conv_avx512_8,
	&nbg_cpu_conv_avx512,
	&nbg_cpu_conv_avx2,
#endif
#if NBG_CPU_SIMD_ARM
	&nbg_cpu_conv_neon,
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
	/* the same figure whichever path this machine and the options take
	 * (the plan's figures do not depend on the CPU): the most any path
	 * allocates, the int16 pairs with groups of up to 8 channels, which
	 * pad out_z by 7 at most (the 8-bit layout takes at most as much,
	 * with corr) */
	if (cv->depthwise || !cv->acc32 || cv->add.on)
		return 0;
	cpu_conv_geom g = nbg_cpu_conv_geometry(cv);
	uint64_t pairs = ((uint64_t)cv->in_z + 1) / 2, kk = (uint64_t)cv->k * cv->k;
	uint64_t chans = (uint64_t)cv->out_z + 7;
	uint64_t img = nbg_cpu_mul_sat(nbg_cpu_mul_sat(pairs, g.plane), 4);
	uint64_t wk = nbg_cpu_mul_sat(nbg_cpu_mul_sat(chans, pairs), kk * 4);
	return nbg_cpu_add_sat(nbg_cpu_add_sat(img, wk), chans * 4);
}

/* The input into a layout, at each position of the wide planes whose
 * input row and column exist (the rest is the border, set by the caller):
 * width 2, the int16 pairs, x - in_zp; width 4, the 8-bit quads, u (the
 * byte, int8 data plus 128). */
static void pack_image(const cpu_conv *cv, const cpu_conv_geom *g, const uint8_t *in, uint32_t width, void *img)
{
	int64_t lo = cv->x_off < 0 ? -(int64_t)cv->x_off : 0;
	int64_t hi = (int64_t)cv->in_x - cv->x_off;
	hi = hi < (int64_t)g->wide ? hi : (int64_t)g->wide;
	int32_t xz = (int32_t)cv->in_zp;
	uint8_t flip = cv->sgn ? 0x80 : 0;
	for (uint32_t z = 0; z < cv->in_z; z++) {
		const uint8_t *src = in + cv->in_base + (uint64_t)z * cv->in_slice;
		uint64_t first = (uint64_t)(z / width) * g->plane * width + z % width;
		for (uint64_t y = 0; y < (uint64_t)cv->out_y + cv->k - 1; y++) {
			int64_t iy = (int64_t)y + cv->y_off;
			if (iy < 0 || iy >= (int64_t)cv->in_y)
				continue;
			const uint8_t *row = src + (uint64_t)iy * cv->in_row + cv->x_off;
			uint64_t at = first + y * g->wide * width;
			if (width == 4) {
				uint8_t *d = (uint8_t *)img + at;
				for (int64_t x = lo; x < hi; x++)
					d[x * 4] = row[x] ^ flip;
			} else {
				int16_t *d = (int16_t *)img + at;
				for (int64_t x = lo; x < hi; x++)
					d[x * 2] = (int16_t)(nbg_cpu_conv_val(cv, row[x]) - xz);
			}
		}
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

/* The weights' bytes in a path's layout: width 2 (int16 pairs) or 4
 * (int8 quads), with the groups' corr after the 8-bit one's. */
static uint64_t weights_bytes(const cpu_conv *cv, const cpu_conv_path *path)
{
	uint64_t groups = ((uint64_t)cv->out_z + path->grp - 1) / path->grp;
	uint64_t lanes = ((uint64_t)cv->in_z + path->width - 1) / path->width;
	uint64_t n = groups * path->grp * lanes * path->width * cv->k * cv->k;
	return path->width == 4 ? n + groups * path->grp * 4 : n * 2;
}

/* The weights minus their zero point into a path's layout at w (zeroed by
 * the caller, weights_bytes long), read in their own order: [group][lane]
 * [ky][kx][channel][width], each pair (int16) or quad (int8: the caller
 * checked they fit) of input channels side by side; the 8-bit layout's
 * corr (c x each channel's sum) after them. */
static void pack_weights(const cpu_conv *cv, const cpu_conv_path *path, void *w)
{
	uint64_t kk = (uint64_t)cv->k * cv->k, width = path->width, grp = path->grp;
	uint64_t groups = ((uint64_t)cv->out_z + grp - 1) / grp, lanes = ((uint64_t)cv->in_z + width - 1) / width;
	int32_t wz = (int32_t)cv->w_zp, c0 = cv->sgn ? 128 : (int32_t)cv->in_zp;
	int16_t *w16 = w;
	int8_t *w8 = w;
	int32_t *corr = (int32_t *)(void *)(w8 + groups * grp * lanes * width * kk);
	const uint8_t *code = cv->codes;
	for (uint64_t o = 0; o < cv->out_z; o++) {
		int32_t sum = 0; /* |sum| <= 128 x taps, below 2^31 / 255 (the plan's bound) */
		for (uint64_t z = 0; z < cv->in_z; z++)
			for (uint64_t t = 0; t < kk; t++) {
				int32_t v = nbg_cpu_conv_val(cv, *code++) - wz;
				uint64_t at = (((o / grp * lanes + z / width) * kk + t) * grp + o % grp) * width + z % width;
				if (width == 4)
					w8[at] = (int8_t)v;
				else
					w16[at] = (int16_t)v;
				sum += v;
			}
		if (width == 4)
			corr[o] = sum * c0;
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

/* The input into j's layout and the weights (the plan's, or laid out here
 * into mem[1]): 1, or 0 when out of memory. */
static int lay_out(cpu_conv_job *j, const uint8_t *in, void *mem[2])
{
	const cpu_conv *cv = j->cv;
	const void *w = cv->pk_path == j->path ? cv->pk_w : NULL;
	if (!w) {
		w = mem[1] = calloc(1, (size_t)weights_bytes(cv, j->path));
		if (!w)
			return 0;
		pack_weights(cv, j->path, mem[1]);
	}
	uint64_t kk = (uint64_t)cv->k * cv->k;
	if (j->path->width == 4) {
		uint8_t *img = mem[0] = malloc((size_t)(j->quads * j->g.plane * 4));
		if (!img)
			return 0;
		memset(img, cv->sgn ? 128 : (int)cv->in_zp, (size_t)(j->quads * j->g.plane * 4));
		pack_image(cv, &j->g, in, 4, img);
		j->img8 = img;
		j->wk8 = w;
		j->corr = (const int32_t *)(const void *)(j->wk8 + j->groups * j->grp * j->quads * 4 * kk);
		return 1;
	}
	int16_t *img = mem[0] = calloc((size_t)(j->pairs * j->g.plane * 2), sizeof(*img));
	if (!img)
		return 0;
	pack_image(cv, &j->g, in, 2, img);
	j->img = img;
	j->wk = w;
	return 1;
}

/* The path that runs cv's sums: the path's 8-bit layout where the weights
 * fit it (as the plan found, when it laid them out), else its int16 one. */
static const cpu_conv_path *layout_of(const cpu_conv *cv, const cpu_conv_path *path)
{
	if (path->width != 4)
		return path;
	if (cv->pk_from == path)
		return cv->pk_path;
	return nbg_cpu_conv_fits_int8(cv) ? path : path->wide;
}

int nbg_cpu_conv_fast(const cpu_conv *cv, const uint8_t *in, uint8_t *planes)
{
	const cpu_conv_path *path = path_of(cv);
	if (!path)
		return 0;
	path = layout_of(cv, path);
	cpu_conv_job j = { .cv = cv, .g = nbg_cpu_conv_geometry(cv), .grp = path->grp, .planes = planes,
			   .path = path };
	j.pairs = ((uint64_t)cv->in_z + 1) / 2;
	j.quads = ((uint64_t)cv->in_z + 3) / 4;
	j.groups = ((uint64_t)cv->out_z + path->grp - 1) / path->grp;
	void *mem[2] = { NULL, NULL };
	int ok = lay_out(&j, in, mem);
	if (ok)
		nbg_cpu_parallel(cv->threads, j.g.blocks * j.groups, run_items, &j);
	free(mem[0]);
	free(mem[1]);
	return ok ? 1 : -1;
}

/* Most bytes of weights a plan keeps laid out (the corpus's largest
 * model: some 50 MB); past them each run lays its weights out. */
#define CPU_MAX_KEPT ((uint64_t)1 << 29)

/* A block of memory the plan keeps (one convolution's weights laid out),
 * freed with it, with what they were laid out from: a later operation of
 * the same weights and layout (operations naming one command) shares it. */
typedef struct cpu_kept {
	struct cpu_kept *next;
	const uint8_t *codes;
	const cpu_conv_path *path;
	uint32_t in_z, out_z, k, w_zp, in_zp;
	int sgn;
	int32_t data[]; /* the weights (int16 or int8, then corr: int32 alignment is enough) */
} cpu_kept;

/* Whether k holds cv's weights laid out for path. */
static int kept_is(const cpu_kept *k, const cpu_conv *cv, const cpu_conv_path *path)
{
	return k && k->codes == cv->codes && k->path == path && k->in_z == cv->in_z && k->out_z == cv->out_z &&
	       k->k == cv->k && k->w_zp == cv->w_zp && k->in_zp == cv->in_zp && k->sgn == cv->sgn;
}

void nbg_cpu_conv_keep(nbg_cpu_plan *p, cpu_conv *cv)
{
	if (cv->depthwise || !cv->acc32 || cv->add.on || cv->pk_path)
		return;
	/* the plan's steps, the same on every machine and path (the plan's
	 * figures do not depend on the CPU): a walk to check int8, one to lay
	 * the weights out */
	uint64_t n = (uint64_t)cv->out_z * cv->in_z * cv->k * cv->k;
	const cpu_conv_path *from = path_of(cv);
	if (!nbg_cpu_plan_afford(p, 2 * n) || !from)
		return;
	const cpu_conv_path *path = from->width == 4 && !nbg_cpu_conv_fits_int8(cv) ? from->wide : from;
	cpu_kept *k = p->kept;
	if (!kept_is(k, cv, path)) {
		uint64_t bytes = weights_bytes(cv, path) + sizeof(cpu_kept);
		uint64_t held = nbg_cpu_add_sat(nbg_cpu_add_sat(p->totals.buffers, p->totals.scratch), p->totals.kept);
		if (nbg_cpu_add_sat(held, bytes) > p->totals.limits.max_memory ||
		    p->totals.kept + bytes > CPU_MAX_KEPT || !(k = calloc(1, (size_t)bytes)))
			return; /* laid out at each run instead, within the run's scratch */
		*k = (cpu_kept){ p->kept, cv->codes, path, cv->in_z, cv->out_z, cv->k, cv->w_zp, cv->in_zp, cv->sgn };
		p->kept = k;
		p->totals.kept += bytes;
		pack_weights(cv, path, k->data);
	}
	cv->pk_from = from;
	cv->pk_path = path;
	cv->pk_w = k->data;
}

void nbg_cpu_conv_kept_free(nbg_cpu_plan *p)
{
	while (p->kept) {
		cpu_kept *k = p->kept;
		p->kept = k->next;
		free(k);
	}
}
