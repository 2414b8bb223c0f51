/*
 * cpu_exec.c - the CPU backend's arithmetic and its run: the buffers of the
 * machine, the convolution of an NN command with its decoded kernels, the
 * requantization, ReLU and pooling.  The rules that are inferred rather than
 * read from a source live in nbg_cpu_requant alone (doc/cpu.md).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/cpu_internal.h"
#include "runtime/runtime_internal.h"

__extension__ typedef __int128 cpu_i128;
__extension__ typedef unsigned __int128 cpu_u128;

struct nbg_cpu_state {
	size_t count;
	cpu_region regions[sizeof(((nbg_cpu_plan *)0)->regions) / sizeof(cpu_region)];
	uint8_t *buf[sizeof(((nbg_cpu_plan *)0)->regions) / sizeof(cpu_region)];
};

/*
 * The scale is the float32 of 23 mantissa bits and a biased exponent that
 * the plan read from the command (cpu_plan.c, scale_fields): acc x (2^23 +
 * mantissa) x 2^(exponent - 150), computed exactly in 128 bits.  Rounding:
 * half away from zero (inferred: rounding_mode 1, no source states the
 * rule).  ReLU clamps at the zero point; the result saturates to 0..255.
 */
uint8_t nbg_cpu_requant(int64_t acc, uint32_t mantissa, uint32_t exponent, uint32_t out_zp, int relu)
{
	cpu_i128 prod = (cpu_i128)acc * (cpu_i128)((1u << 23) | (mantissa & 0x7fffffu));
	int shift = 150 - (int)exponent;
	int neg = prod < 0;
	cpu_u128 mag = neg ? (cpu_u128)(-prod) : (cpu_u128)prod;
	int64_t q;
	if (shift <= 0) {
		q = mag == 0 ? 0 : INT32_MAX; /* scale >= 1: any non-zero product saturates */
		if (shift > -32 && (mag << -shift) >> -shift == mag && (mag << -shift) < INT32_MAX)
			q = (int64_t)(mag << -shift);
	} else if (shift >= 127) {
		q = 0;
	} else {
		cpu_u128 r = (mag + ((cpu_u128)1 << (shift - 1))) >> shift;
		q = r > INT32_MAX ? INT32_MAX : (int64_t)r;
	}
	if (neg)
		q = -q;
	q += out_zp;
	if (relu && q < (int64_t)out_zp)
		q = out_zp;
	return (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
}

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

/* One output channel's convolution at every position into acc, then
 * requantized into plane[out_y][out_x].  Loop order: each kernel tap over a
 * whole row of outputs, so the inner loop walks contiguous input bytes. */
static void conv_channel(const cpu_conv *cv, const uint8_t *in, uint32_t o, int64_t *acc,
			 uint8_t *plane)
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
	for (size_t i = 0; i < n; i++)
		plane[i] = nbg_cpu_requant(acc[i], cv->mantissa, cv->exponent, cv->out_zp, cv->relu);
}

int nbg_cpu_conv_run(const cpu_conv *cv, uint8_t *const *buf)
{
	const uint8_t *in = buf[cv->in_region];
	uint8_t *out = buf[cv->out_region];
	uint8_t *plane = malloc((size_t)cv->out_x * cv->out_y);
	uint8_t *stage = malloc((size_t)cv->pool_x * cv->pool_y * cv->out_z);
	int64_t *acc = malloc((size_t)cv->out_x * cv->out_y * sizeof(*acc));
	if (!plane || !stage || !acc) {
		free(plane);
		free(stage);
		free(acc);
		return -1;
	}
	/* every channel is computed before any byte is written: the operation
	 * may write over the image it reads */
	for (uint32_t o = 0; o < cv->out_z; o++) {
		conv_channel(cv, in, o, acc, plane);
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
		for (uint32_t py = 0; py < cv->pool_y; py++)
			memcpy(out + cv->out_base + o * cv->out_slice + py * cv->out_row,
			       stage + ((size_t)o * cv->pool_y + py) * cv->pool_x, cv->pool_x);
	free(plane);
	free(stage);
	free(acc);
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

/* Buffers above this are refused (a header can declare 4 GiB of SRAM). */
#define CPU_MAX_BUFFER (1ull << 30)

nbg_code nbg_cpu_run(const nbg_cpu_plan *p, const nbg_rt_buffer *inputs, size_t count,
		     size_t stop_before, nbg_cpu_state **out, nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!p || !out || (count && !inputs))
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "cpu run: NULL argument");
	*out = NULL;
	size_t end = stop_before < p->count ? stop_before : p->count;
	for (size_t i = 0; i < end; i++) {
		const nbg_cpu_step *s = &p->steps[i];
		if (s->verdict == NBG_CPU_REFUSED)
			return nbg_rt_fail(err, NBG_E_UNSUPPORTED_OPERATION, -1,
					   "operation %zu (layer %u %s, %s) cannot run on the CPU backend: "
					   "%s: %s", i, s->layer_id, s->layer, s->what, s->reason_id,
					   s->reason);
	}
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
		uint64_t n = st->regions[i].size;
		if (n > CPU_MAX_BUFFER) {
			const char *what = nbg_graph_source_type_name(st->regions[i].source_type);
			nbg_cpu_state_free(st); /* st is not read after this */
			return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1,
					   "the model declares %s of %llu bytes, more than the CPU backend "
					   "allocates (%llu)",
					   what, (unsigned long long)n, (unsigned long long)CPU_MAX_BUFFER);
		}
		st->buf[i] = calloc((size_t)n + 1, 1);
		if (!st->buf[i]) {
			nbg_cpu_state_free(st);
			return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
		}
		if (st->regions[i].source_type == NBG_GRAPH_SRC_INPUT && st->regions[i].index >= 0 &&
		    (size_t)st->regions[i].index < count && n)
			memcpy(st->buf[i], inputs[st->regions[i].index].data, (size_t)n);
	}
	for (size_t i = 0; i < end; i++) {
		const cpu_op *op = &p->ops[i];
		if (p->steps[i].verdict != NBG_CPU_EXECUTE)
			continue;
		int rc = op->kind == CPU_OP_CONV ? nbg_cpu_conv_run(&op->conv, st->buf)
		       : op->kind == CPU_OP_TP	 ? nbg_cpu_tp_run(&op->tp, st->buf)
		       : op->kind == CPU_OP_TPFC ? nbg_cpu_tpfc_run(&op->tpfc, st->buf)
		       : op->kind == CPU_OP_REF	 ? nbg_cpu_ref_run(&op->ref, st->buf)
						 : 0;
		if (rc) {
			nbg_cpu_state_free(st);
			return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
		}
	}
	*out = st;
	return NBG_OK;
}
