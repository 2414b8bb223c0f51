/*
 * run.c - the CPU backend's arithmetic and its run: the buffers of the
 * machine, the convolution of an NN command with its decoded kernels, the
 * ReLU and pooling.  The rules that are inferred rather than read from a
 * source live in nbg_cpu_requant alone (cpu_internal.h; doc/cpu-backend.md).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_internal.h"
#include "runtime/errors.h"


struct nbg_cpu_state {
	size_t count;
	cpu_region regions[sizeof(((nbg_cpu_plan *)0)->regions) / sizeof(cpu_region)];
	uint8_t *buf[sizeof(((nbg_cpu_plan *)0)->regions) / sizeof(cpu_region)];
};

/* The output positions [lo, hi) whose input coordinate pos + k + off lies in
 * [0, size): outside it the input is the constant border, the zero point,
 * whose term (x - zero point) is 0, so those positions get nothing. */
static void valid_range(uint32_t out, uint32_t size, int64_t k_off, uint32_t *lo, uint32_t *hi)
{
	int64_t l = -k_off, h = (int64_t)size - k_off;
	l = l < 0 ? 0 : l;
	h = h > (int64_t)out ? (int64_t)out : h;
	*lo = (uint32_t)l;
	*hi = h > l ? (uint32_t)h : (uint32_t)l;
}

/* A fused addition (ops/add.c): each position the pooling writes (every
 * one, or the first pixel of each 2x2 window) requantized with the second
 * image's byte at the position it is written to; the others are never
 * written. */
static void add_channel(const cpu_conv *cv, const uint8_t *add, uint32_t o, const int64_t *acc,
			uint8_t *plane)
{
	const cpu_add *a = &cv->add;
	uint32_t sub = cv->pooling == 3 ? 2 : 1;
	for (uint32_t py = 0; py < cv->pool_y; py++)
		for (uint32_t px = 0; px < cv->pool_x; px++) {
			size_t i = (size_t)(py * sub) * cv->out_x + px * sub;
			uint8_t b = add[a->base + o * a->slice + py * a->row + px];
			plane[i] = nbg_cpu_requant_add(acc[i], a, b, cv->out_zp);
		}
}

/* The 64-bit path, for a convolution whose sums the plan could not bound
 * in int32: one output channel's convolution at every position into acc,
 * then requantized into plane[out_y][out_x].  Loop order: each kernel tap over a
 * whole row of outputs, so the inner loop walks contiguous input bytes. */
static void conv_channel(const cpu_conv *cv, const uint8_t *in, const uint8_t *add, uint32_t o,
			 int64_t *acc, uint8_t *plane)
{
	uint32_t kz = cv->depthwise ? 1 : cv->in_z;
	const uint8_t *w = cv->codes + (size_t)o * kz * cv->k * cv->k;
	int32_t wz = (int32_t)cv->w_zp, xz = (int32_t)cv->in_zp;
	size_t n = (size_t)cv->out_x * cv->out_y;
	for (size_t i = 0; i < n; i++)
		acc[i] = cv->bias[o];
	for (uint32_t z = 0; z < kz; z++) {
		const uint8_t *slice = in + cv->in_base + (uint64_t)(cv->depthwise ? o : z) * cv->in_slice;
		for (uint32_t ky = 0; ky < cv->k; ky++) {
			uint32_t y0, y1;
			valid_range(cv->out_y, cv->in_y, (int64_t)ky + cv->y_off, &y0, &y1);
			for (uint32_t kx = 0; kx < cv->k; kx++) {
				int32_t wv = (int32_t)w[((size_t)z * cv->k + ky) * cv->k + kx] - wz;
				uint32_t x0, x1;
				valid_range(cv->out_x, cv->in_x, (int64_t)kx + cv->x_off, &x0, &x1);
				if (wv == 0 || x0 >= x1)
					continue;
				for (uint32_t oy = y0; oy < y1; oy++) {
					const uint8_t *row = slice + (uint64_t)((int64_t)oy + ky + cv->y_off) * cv->in_row +
							     (uint64_t)((int64_t)kx + cv->x_off);
					int64_t *a = acc + (size_t)oy * cv->out_x;
					for (uint32_t ox = x0; ox < x1; ox++)
						a[ox] += wv * ((int32_t)row[ox] - xz);
				}
			}
		}
	}
	if (add) {
		add_channel(cv, add, o, acc, plane);
		return;
	}
	for (size_t i = 0; i < n; i++)
		plane[i] = nbg_cpu_requant(acc[i], cv->mantissa, cv->exponent, cv->out_zp, cv->relu);
}

/*
 * The 32-bit kernels (geometry in cpu_internal.h).  Used when the plan
 * proved that no sum leaves int32 (nbg_cpu_conv_fits_int32): the result is
 * then the 64-bit one, bit for bit.  Per block of the wide output, CPU_GRP
 * output channels accumulate at once, so each input value read serves
 * CPU_GRP multiply-accumulates.  The inner loops have fixed trip counts,
 * int16 x int16 products and int32 sums, which the compiler vectorizes at
 * -O2 (gcc 12: -fopt-info-vec reports tap_shared and tap_own).
 */
/* acc[j] += w[j] x x[i] for the CPU_GRP channels j of one block. */
static void tap_shared(int32_t acc[CPU_GRP][CPU_BLK], const int16_t *restrict x, const int16_t *w)
{
	int16_t w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
	for (int i = 0; i < CPU_BLK; i++) {
		int16_t v = x[i];
		acc[0][i] += (int32_t)w0 * v;
		acc[1][i] += (int32_t)w1 * v;
		acc[2][i] += (int32_t)w2 * v;
		acc[3][i] += (int32_t)w3 * v;
	}
}

/* Depthwise: channel j reads its own plane x[j]. */
static void tap_own(int32_t acc[CPU_GRP][CPU_BLK], const int16_t *const *x, const int16_t *w)
{
	for (int j = 0; j < CPU_GRP; j++) {
		const int16_t *restrict xj = x[j];
		int16_t wj = w[j];
		for (int i = 0; i < CPU_BLK; i++)
			acc[j][i] += (int32_t)wj * xj[i];
	}
}

/* Every channel's convolution, requantized, into planes[out_z][out_y][out_x]. */
static int conv_planes32(const cpu_conv *cv, const uint8_t *in, uint8_t *planes)
{
	cpu_conv_geom g = nbg_cpu_conv_geometry(cv);
	int16_t *img = calloc((size_t)cv->in_z * g.plane, sizeof(*img));
	int16_t *wk = malloc((size_t)(g.groups * CPU_GRP * g.taps) * sizeof(*wk));
	if (!img || !wk) {
		free(img);
		free(wk);
		return -1;
	}
	int32_t xz = (int32_t)cv->in_zp, wz = (int32_t)cv->w_zp;
	for (uint32_t z = 0; z < cv->in_z; z++) {
		const uint8_t *src = in + cv->in_base + (uint64_t)z * cv->in_slice;
		int16_t *dst = img + (size_t)z * g.plane;
		for (uint64_t y = 0; y < (uint64_t)cv->out_y + cv->k - 1; y++) {
			int64_t iy = (int64_t)y + cv->y_off;
			if (iy < 0 || iy >= (int64_t)cv->in_y)
				continue;
			uint32_t x0, x1; /* the columns whose input lies in the image */
			valid_range((uint32_t)g.wide, cv->in_x, cv->x_off, &x0, &x1);
			const uint8_t *row = src + (uint64_t)iy * cv->in_row;
			for (uint32_t x = x0; x < x1; x++)
				dst[y * g.wide + x] = (int16_t)((int32_t)row[(int64_t)x + cv->x_off] - xz);
		}
	}
	/* wk[group][tap][j]: weight minus its zero point, 0 past the last channel */
	for (uint64_t gr = 0; gr < g.groups; gr++)
		for (uint64_t t = 0; t < g.taps; t++)
			for (uint32_t j = 0; j < CPU_GRP; j++) {
				uint64_t o = gr * CPU_GRP + j;
				wk[(gr * g.taps + t) * CPU_GRP + j] =
					o < cv->out_z ? (int16_t)((int32_t)cv->codes[o * g.taps + t] - wz) : 0;
			}
	size_t plane_out = (size_t)cv->out_x * cv->out_y;
	for (uint64_t b = 0; b < g.blocks; b++) {
		for (uint64_t gr = 0; gr < g.groups; gr++) {
			int32_t acc[CPU_GRP][CPU_BLK];
			for (uint32_t j = 0; j < CPU_GRP; j++) {
				uint64_t o = gr * CPU_GRP + j;
				int32_t bias = o < cv->out_z ? cv->bias[o] : 0;
				for (int i = 0; i < CPU_BLK; i++)
					acc[j][i] = bias;
			}
			const int16_t *w = wk + gr * g.taps * CPU_GRP;
			const int16_t *base = img + b * CPU_BLK;
			if (!cv->depthwise) {
				for (uint32_t z = 0; z < cv->in_z; z++)
					for (uint32_t ky = 0; ky < cv->k; ky++)
						for (uint32_t kx = 0; kx < cv->k; kx++, w += CPU_GRP)
							tap_shared(acc, base + z * g.plane + ky * g.wide + kx, w);
			} else {
				const int16_t *x[CPU_GRP];
				for (uint32_t ky = 0; ky < cv->k; ky++)
					for (uint32_t kx = 0; kx < cv->k; kx++, w += CPU_GRP) {
						for (uint32_t j = 0; j < CPU_GRP; j++) {
							uint64_t o = gr * CPU_GRP + j;
							/* past the last channel: any plane, weight 0 */
							o = o < cv->out_z ? o : cv->out_z - 1;
							x[j] = base + o * g.plane + ky * g.wide + kx;
						}
						tap_own(acc, x, w);
					}
			}
			uint64_t first = b * CPU_BLK, oy = first / g.wide, ox = first % g.wide;
			for (int i = 0; i < CPU_BLK && oy < cv->out_y; i++) {
				if (ox < cv->out_x)
					for (uint32_t j = 0; j < CPU_GRP; j++) {
						uint64_t o = gr * CPU_GRP + j;
						if (o < cv->out_z)
							planes[o * plane_out + oy * cv->out_x + ox] = nbg_cpu_requant(
								acc[j][i], cv->mantissa, cv->exponent, cv->out_zp, cv->relu);
					}
				if (++ox == g.wide) {
					ox = 0;
					oy++;
				}
			}
		}
	}
	free(img);
	free(wk);
	return 0;
}

/* The input image as planes [z][y][x], read at the strides, pixel step and
 * circular buffer the plan set (an interleaved input record, a ring of
 * rows); NULL when out of memory. */
static uint8_t *gather_input(const cpu_conv *cv, const uint8_t *in)
{
	uint8_t *g = malloc((size_t)cv->in_x * cv->in_y * cv->in_z);
	uint8_t *d = g;
	for (uint32_t z = 0; g && z < cv->in_z; z++)
		for (uint32_t y = 0; y < cv->in_y; y++) {
			uint64_t a = cv->in_base + (uint64_t)z * cv->in_slice + (uint64_t)y * cv->in_row;
			nbg_cpu_ring_read(d, in, a, cv->in_x, cv->in_xstep, cv->in_ring_lo, cv->in_ring_size);
			d += cv->in_x;
		}
	return g;
}

/* The bytes nbg_cpu_conv_run allocates: the gathered input (an
 * interleaved record or a ring), the planes and the pooled stage, and
 * either the 64-bit sums of a plane or conv_planes32's int16 image and
 * weights. */
uint64_t nbg_cpu_conv_scratch(const cpu_conv *cv)
{
	uint64_t plane_out = (uint64_t)cv->out_x * cv->out_y, n = 0;
	if (cv->in_xstep > 1 || cv->in_ring_size)
		n = (uint64_t)cv->in_x * cv->in_y * cv->in_z;
	n = nbg_cpu_add_sat(n, nbg_cpu_mul_sat(plane_out, cv->out_z));
	n = nbg_cpu_add_sat(n, nbg_cpu_mul_sat((uint64_t)cv->pool_x * cv->pool_y, cv->out_z));
	if (!cv->acc32 || cv->add.on)
		return nbg_cpu_add_sat(n, nbg_cpu_mul_sat(plane_out, sizeof(int64_t)));
	cpu_conv_geom g = nbg_cpu_conv_geometry(cv);
	n = nbg_cpu_add_sat(n, nbg_cpu_mul_sat(nbg_cpu_mul_sat(cv->in_z, g.plane), sizeof(int16_t)));
	return nbg_cpu_add_sat(n, nbg_cpu_mul_sat(g.groups * CPU_GRP * g.taps, sizeof(int16_t)));
}

/* Its steps: the multiply-accumulates of the path it takes (the 32-bit
 * kernels compute every position of the wide output for CPU_GRP channels
 * at once), plus one per byte of the planes, the stage and the gathered
 * input. */
uint64_t nbg_cpu_conv_work(const cpu_conv *cv)
{
	uint64_t plane_out = (uint64_t)cv->out_x * cv->out_y;
	uint64_t taps = (uint64_t)(cv->depthwise ? 1 : cv->in_z) * cv->k * cv->k;
	uint64_t macs = nbg_cpu_mul_sat(nbg_cpu_mul_sat(plane_out, cv->out_z), taps);
	if (cv->acc32 && !cv->add.on) {
		cpu_conv_geom g = nbg_cpu_conv_geometry(cv);
		macs = nbg_cpu_mul_sat(nbg_cpu_mul_sat(g.blocks * CPU_BLK, g.groups * CPU_GRP), g.taps);
		macs = nbg_cpu_add_sat(macs, nbg_cpu_mul_sat(cv->in_z, g.plane));
	}
	return nbg_cpu_add_sat(macs, nbg_cpu_conv_scratch(cv));
}

int nbg_cpu_conv_run(const cpu_conv *cv, uint8_t *const *buf)
{
	const uint8_t *in = buf[cv->in_region];
	uint8_t *out = buf[cv->out_region];
	cpu_conv planar;
	uint8_t *gathered = NULL;
	if (cv->in_xstep > 1 || cv->in_ring_size) {
		if (!(gathered = gather_input(cv, in)))
			return -1;
		planar = *cv;
		planar.in_base = 0;
		planar.in_row = cv->in_x;
		planar.in_slice = (uint64_t)cv->in_x * cv->in_y;
		planar.in_xstep = 1;
		planar.in_ring_size = 0;
		in = gathered;
		cv = &planar;
	}
	size_t plane_out = (size_t)cv->out_x * cv->out_y;
	uint8_t *planes = malloc(plane_out * cv->out_z);
	uint8_t *stage = malloc((size_t)cv->pool_x * cv->pool_y * cv->out_z);
	/* a fused addition takes the 64-bit path, whose sums it needs */
	int wide = !cv->acc32 || cv->add.on;
	int64_t *acc = wide ? malloc(plane_out * sizeof(*acc)) : NULL;
	if (!planes || !stage || (wide && !acc)) {
		free(planes);
		free(stage);
		free(acc);
		free(gathered);
		return -1;
	}
	/* every channel is computed before any byte is written: the operation
	 * may write over the image it reads */
	if (!wide) {
		if (conv_planes32(cv, in, planes)) {
			free(planes);
			free(stage);
			free(gathered);
			return -1;
		}
	} else {
		for (uint32_t o = 0; o < cv->out_z; o++)
			conv_channel(cv, in, cv->add.on ? buf[cv->add.region] : NULL, o, acc,
				     planes + o * plane_out);
	}
	for (uint32_t o = 0; o < cv->out_z; o++) {
		const uint8_t *plane = planes + o * plane_out;
		uint8_t *dst = stage + (size_t)o * cv->pool_x * cv->pool_y;
		for (uint32_t py = 0; py < cv->pool_y; py++)
			for (uint32_t px = 0; px < cv->pool_x; px++) {
				uint8_t v;
				if (cv->pooling == 0) {
					v = plane[(size_t)py * cv->out_x + px];
				} else if (cv->pooling == 3) { /* first pixel of the 2x2 window */
					v = plane[(size_t)(2 * py) * cv->out_x + 2 * px];
				} else { /* max over the 2x2 window, clipped at the edge */
					v = 0;
					for (uint32_t dy = 0; dy < 2; dy++)
						for (uint32_t dx = 0; dx < 2; dx++) {
							uint32_t y = 2 * py + dy, x = 2 * px + dx;
							if (y < cv->out_y && x < cv->out_x &&
							    plane[(size_t)y * cv->out_x + x] > v)
								v = plane[(size_t)y * cv->out_x + x];
						}
				}
				dst[(size_t)py * cv->pool_x + px] = v;
			}
	}
	for (uint32_t o = 0; o < cv->out_z; o++)
		for (uint32_t py = 0; py < cv->pool_y; py++) {
			uint64_t a = cv->out_base + o * cv->out_slice + py * cv->out_row;
			const uint8_t *src = stage + ((size_t)o * cv->pool_y + py) * cv->pool_x;
			if (!cv->out_ring_size) {
				memcpy(out + a, src, cv->pool_x);
				continue;
			}
			nbg_cpu_ring_write(out, src, a, cv->pool_x, cv->out_ring_lo, cv->out_ring_size);
		}
	free(planes);
	free(stage);
	free(acc);
	free(gathered);
	return 0;
}

void nbg_cpu_state_free(nbg_cpu_state *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->count; i++)
		free(s->buf[i]);
	free(s);
}

const uint8_t *nbg_cpu_state_buffer(const nbg_cpu_state *s, uint32_t source_type, int32_t index,
				    size_t *size)
{
	if (size)
		*size = 0;
	for (size_t i = 0; s && i < s->count; i++) {
		const cpu_region *r = &s->regions[i];
		if (r->source_type != source_type ||
		    ((source_type == NBG_GRAPH_SRC_INPUT || source_type == NBG_GRAPH_SRC_OUTPUT) &&
		     r->index != index))
			continue;
		if (size)
			*size = (size_t)r->size;
		return s->buf[i];
	}
	return NULL;
}

/* UNSUPPORTED_OPERATION naming the first refused step in [from, to), else NBG_OK. */
static nbg_code refused_in(const nbg_cpu_plan *p, size_t from, size_t to, nbg_error *err)
{
	for (size_t i = from; i < to; i++) {
		const nbg_cpu_step *s = &p->steps[i];
		if (s->verdict == NBG_CPU_REFUSED)
			return nbg_rt_fail(err, NBG_E_UNSUPPORTED_OPERATION, -1,
					   "operation %zu (layer %u %s, %s) cannot run on the CPU backend: "
					   "%s: %s", i, s->layer_id, s->layer, s->what, s->reason_id,
					   s->reason);
	}
	return NBG_OK;
}

nbg_code nbg_cpu_run_range(const nbg_cpu_plan *p, nbg_cpu_state *st, size_t from, size_t to,
			   nbg_error *err)
{
	size_t end = to < p->count ? to : p->count;
	nbg_code rc = refused_in(p, from, end, err);
	if (rc != NBG_OK)
		return rc;
	for (size_t i = from; i < end; i++) {
		const cpu_op *op = &p->ops[i];
		if (p->steps[i].verdict != NBG_CPU_EXECUTE)
			continue;
		int r = op->kind == CPU_OP_CONV ? nbg_cpu_conv_run(&op->conv, st->buf)
		      : op->kind == CPU_OP_TP	? nbg_cpu_tp_run(&op->tp, st->buf)
		      : op->kind == CPU_OP_TPFC ? nbg_cpu_tpfc_run(&op->tpfc, st->buf)
		      : op->kind == CPU_OP_REF	? nbg_cpu_ref_run(&op->ref, st->buf)
						: 0;
		if (r)
			return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	}
	return NBG_OK;
}

nbg_code nbg_cpu_run(const nbg_cpu_plan *p, const nbg_rt_buffer *inputs, size_t count,
		     size_t stop_before, nbg_cpu_state **out, nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!p || !out || (count && !inputs))
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "cpu run: NULL argument");
	*out = NULL;
	/* the one verdict (budget.c): refused operations, I/O records the
	 * machine cannot hold, work and memory over the plan's limits */
	nbg_code rc = nbg_cpu_plan_check(p, stop_before, err);
	if (rc != NBG_OK)
		return rc;
	size_t end = stop_before < p->count ? stop_before : p->count;
	if (count != p->m->input_count)
		return nbg_rt_fail(err, NBG_E_INPUT_COUNT_MISMATCH, -1,
				   "%zu inputs given; the NBG declares %zu", count, p->m->input_count);
	for (size_t i = 0; i < count; i++)
		if (inputs[i].size != nbg_model_input_at(p->m, i)->byte_size || (!inputs[i].data && inputs[i].size))
			return nbg_rt_fail(err, NBG_E_INPUT_SIZE_MISMATCH, (int32_t)i,
					   "input %zu has %zu bytes; its record needs %llu", i,
					   inputs[i].size,
					   (unsigned long long)nbg_model_input_at(p->m, i)->byte_size);
	nbg_cpu_state *st = calloc(1, sizeof(*st));
	if (!st)
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	st->count = p->region_count;
	memcpy(st->regions, p->regions, sizeof(st->regions));
	for (size_t i = 0; i < st->count; i++) {
		uint64_t n = st->regions[i].size; /* below SIZE_MAX: nbg_cpu_plan_check */
		st->buf[i] = calloc((size_t)n + 1, 1);
		if (!st->buf[i]) {
			nbg_cpu_state_free(st);
			return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
		}
		if (st->regions[i].source_type == NBG_GRAPH_SRC_INPUT && st->regions[i].index >= 0 &&
		    (size_t)st->regions[i].index < count && n)
			memcpy(st->buf[i], inputs[st->regions[i].index].data, (size_t)n);
	}
	rc = nbg_cpu_run_range(p, st, 0, end, err);
	if (rc != NBG_OK) {
		nbg_cpu_state_free(st);
		return rc;
	}
	*out = st;
	return NBG_OK;
}
