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

static const cpu_conv_path portable = { "portable", NULL, NULL, CPU_GRP, NULL, 2, NULL, NULL };

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

/* The 8-bit layout's row of n positions from 4 input channels' rows
 * (NULL: a missing channel, fill), each byte xor flip, the portable way
 * (a path's `quad` does it on vector instructions). */
static void quad_row(const uint8_t *const r[4], uint8_t *d, uint64_t n, uint8_t flip, uint8_t fill)
{
	for (int i = 0; i < 4; i++)
		for (uint64_t x = 0; x < n; x++)
			d[x * 4 + i] = r[i] ? r[i][x] ^ flip : fill;
}

/* What pack_lanes reads and writes: the job, the input, the image, and
 * the bands each lane's rows are cut into (items: lane x bands + band). */
typedef struct cpu_pack {
	const cpu_conv_job *j;
	const uint8_t *in;
	uint8_t *img;
	uint64_t bands;
} cpu_pack;

/* One row of positions [a, e) of a lane from its channels' input rows r
 * (NULL past the last channel) into d, the row's first position. */
static void pack_row(const cpu_conv_job *j, const uint8_t *const r[4], uint8_t *d, uint64_t a, uint64_t e)
{
	const cpu_conv *cv = j->cv;
	if (j->path->width == 4) {
		uint8_t flip = cv->sgn ? 0x80 : 0, fill = (uint8_t)(cv->sgn ? 128 : cv->in_zp);
		(j->path->quad ? j->path->quad : quad_row)(r, d + a * 4, e - a, flip, fill);
		return;
	}
	int16_t *d16 = (int16_t *)(void *)d;
	for (uint64_t i = 0; i < 2; i++)
		for (uint64_t x = a; x < e; x++)
			d16[x * 2 + i] = (int16_t)(r[i] ? nbg_cpu_conv_val(cv, r[i][x - a]) - (int32_t)cv->in_zp : 0);
}

/* The input into the job's layout: items [lo, hi), each a band of rows of
 * a lane (a pair or quad of input channels, its own part of the image, 4
 * bytes a position; the last band also the plane's tail); at each
 * position of the wide planes whose input row and column exist, x - in_zp
 * (int16 pairs) or u (8-bit quads: the byte, int8 data plus 128);
 * elsewhere (the border, the plane's tail, a missing channel) the value
 * x = in_zp takes (int16 0, 8-bit c). */
static void pack_lanes(void *ctx, uint64_t lo, uint64_t hi)
{
	const cpu_pack *pk = ctx;
	const cpu_conv_job *j = pk->j;
	const cpu_conv *cv = j->cv;
	uint64_t width = j->path->width, wide = j->g.wide, rows = (uint64_t)cv->out_y + cv->k - 1;
	int64_t xl = cv->x_off < 0 ? -(int64_t)cv->x_off : 0, xh = (int64_t)cv->in_x - cv->x_off;
	uint64_t e = (uint64_t)(xh < (int64_t)wide ? (xh > 0 ? xh : 0) : (int64_t)wide);
	uint64_t a = (uint64_t)xl < e ? (uint64_t)xl : e;
	int fill = width == 4 ? (cv->sgn ? 128 : (int)cv->in_zp) : 0;
	/* rows whose every position is the input's, one after the other in
	 * the input as in the layout (no border columns, the input's rows
	 * as long as the wide ones: a 1x1 convolution's): one run */
	int run = a == 0 && e == wide && cv->in_row == wide && cv->x_off == 0;
	for (uint64_t it = lo; it < hi; it++) {
		uint64_t l = it / pk->bands, band = it % pk->bands;
		uint64_t y = rows * band / pk->bands, y_end = rows * (band + 1) / pk->bands;
		uint8_t *plane = pk->img + l * j->g.plane * 4;
		while (y < y_end) {
			uint8_t *d = plane + y * wide * 4;
			int64_t iy = (int64_t)y + cv->y_off;
			if (iy < 0 || iy >= (int64_t)cv->in_y || a == e) {
				memset(d, fill, (size_t)(wide * 4));
				y++;
				continue;
			}
			uint64_t span = 1;
			while (run && y + span < y_end && iy + (int64_t)span < (int64_t)cv->in_y)
				span++;
			const uint8_t *r[4] = { NULL, NULL, NULL, NULL };
			for (uint64_t i = 0; i < width; i++) {
				uint64_t z = l * width + i;
				if (z < cv->in_z)
					r[i] = pk->in + cv->in_base + z * cv->in_slice + (uint64_t)iy * cv->in_row +
					       (uint64_t)((int64_t)a + cv->x_off);
			}
			memset(d, fill, (size_t)(a * 4));
			memset(d + e * 4, fill, (size_t)((wide - e) * 4));
			pack_row(j, r, d, a, a + span * (e - a));
			y += span;
		}
		if (band + 1 == pk->bands)
			memset(plane + rows * wide * 4, fill, (size_t)((j->g.plane - rows * wide) * 4));
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
	int shift = 150 - (int)cv->exponent, vec = j->path->requant && shift >= 1 && shift <= 62;
	/* a block whose positions are one run of the planes (no wide columns,
	 * within the last row): requantized in place */
	int direct = vec && j->g.wide == cv->out_x && (b + 1) * CPU_BLK <= plane_out;
	int32_t bias[8];
	uint8_t *out[8];
	for (uint32_t c = 0; c < nch; c++) {
		bias[c] = (int32_t)((uint32_t)cv->bias[o0 + c] - (j->corr ? (uint32_t)j->corr[o0 + c] : 0));
		out[c] = direct ? j->planes + (o0 + c) * plane_out + b * CPU_BLK : q[c];
	}
	if (vec)
		j->path->requant(cv, acc, nch, bias, out);
	for (uint32_t c = 0; c < nch && !vec; c++) {
		const int32_t *a = acc + c * CPU_BLK;
		for (int i = 0; i < CPU_BLK; i++) {
			/* wrapping 32-bit sums: their true value fits int32 */
			int64_t v = (int32_t)((uint32_t)a[i] + (uint32_t)bias[c]);
			q[c][i] = cv->sgn ? nbg_cpu_requant_s8(v, cv->mantissa, cv->exponent, (int32_t)cv->out_zp,
							       cv->relu, cv->even)
					  : nbg_cpu_requant(v, cv->mantissa, cv->exponent, cv->out_zp, cv->relu, cv->even);
		}
	}
	for (uint64_t pos = b * CPU_BLK, end = direct ? pos : pos + CPU_BLK; pos < end;) {
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

/* The input into j's layout (on the threads, a lane each) and the
 * weights (the plan's, or laid out here into mem[1]): 1, or 0 when out of
 * memory. */
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
	uint64_t kk = (uint64_t)cv->k * cv->k, lanes = j->path->width == 4 ? j->quads : j->pairs;
	/* a lane's rows cut into bands where the lanes are too few to give
	 * each thread several (an image of 3 channels is one lane) */
	uint64_t rows = (uint64_t)cv->out_y + cv->k - 1, bands = 1;
	if (cv->threads > 1 && lanes < 4 * (uint64_t)cv->threads)
		bands = (4 * (uint64_t)cv->threads + lanes - 1) / lanes;
	bands = bands < rows ? bands : rows;
	cpu_pack pk = { j, in, mem[0] = nbg_cpu_scratch_take((size_t)(lanes * j->g.plane * 4)), bands };
	if (!pk.img)
		return 0;
	nbg_cpu_parallel(cv->threads, lanes * bands, 1, pack_lanes, &pk);
	if (j->path->width == 4) {
		j->img8 = pk.img;
		j->wk8 = w;
		j->corr = (const int32_t *)(const void *)(j->wk8 + j->groups * j->grp * j->quads * 4 * kk);
	} else {
		j->img = (const int16_t *)(const void *)pk.img;
		j->wk = w;
	}
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
	/* chunks of whole blocks (a block's input read once for its groups),
	 * unless the blocks are too few to give each thread several: a 7x7
	 * output is one block, which would run on one thread */
	uint64_t items = j.g.blocks * j.groups, grain = j.groups;
	uint64_t least = items / (8 * (uint64_t)(cv->threads ? cv->threads : 1));
	grain = grain < least ? grain : least ? least : 1;
	if (ok)
		nbg_cpu_parallel(cv->threads, items, grain, run_items, &j);
	nbg_cpu_scratch_give(mem[0]);
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
