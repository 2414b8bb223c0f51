/*
 * coef_layout.c - the v7 layout, shared by v7 bit streams and v8b bytes:
 * a core's kernels come in superblocks of kernels_per_core, their values in
 * the order of one of Mesa's writers (write_core_interleaved,
 * write_core_sequential, write_core_6 in etnaviv_ml_nn_v7.c), each kernel's
 * bias word at its first value and its output-offset word at its last.  The
 * offset word names the kernel's output channel (channel x the output
 * plane): the compiler spreads channels over cores in an order of its own,
 * which the offsets undo.
 */
#include <stdlib.h>

#include "coef/coef_internal.h"

void nbg_coef_chunk_order(uint32_t ky, uint32_t kx, uint8_t *idx)
{
	uint32_t i = 0;

	for (uint32_t r0 = 0; r0 < ky; r0 += 2) {
		uint32_t r1 = r0 + 2 < ky ? r0 + 2 : ky;
		for (uint32_t x0 = 0; x0 < kx; x0 += 3) {
			uint32_t x1 = x0 + 3 < kx ? x0 + 3 : kx;
			for (uint32_t r = r0; r < r1; r++)
				for (uint32_t x = x0; x < x1; x++)
					idx[i++] = (uint8_t)(r * kx + x);
		}
	}
}

bool nbg_coef_layout_init(nbg_coef_layout *l, const nbg_coef_shape *s, unsigned order)
{
	size_t out = s->out;

	memset(l, 0, sizeof(*l));
	l->s = s;
	l->order = order;
	/* beyond 3x3 some targets write a z slice in chunks of columns (up to
	 * 3x3 the chunk order is [ky][kx]); nbg_coef_decode has checked
	 * kx, ky <= 15 */
	if (s->wide == NBG_COEF_WIDE_CHUNKS && (s->kx > 3 || s->ky > 3)) {
		l->chunked = 1;
		nbg_coef_chunk_order(s->ky, s->kx, l->chunk_order);
	}
	l->ev = malloc(2 * out * sizeof(*l->ev));
	l->off = calloc(out, sizeof(*l->off));
	l->bias = calloc(out, sizeof(*l->bias));
	l->chan_of = malloc(out * sizeof(*l->chan_of));
	/* a superblock's kernels: at most kernels_per_core, and out */
	l->dst = malloc((s->superblock < out ? s->superblock : out) * sizeof(*l->dst));
	return l->ev && l->off && l->bias && l->chan_of && l->dst;
}

bool nbg_coef_layout_reserve(nbg_coef_layout *l, uint32_t kpc, uint32_t first_slot)
{
	uint64_t ks = nbg_coef_ksize(l->s), end = ((uint64_t)first_slot + kpc) * ks;

	l->sv.len = 0;
	if (!nbg_coef_buf_reserve(&l->sv, kpc * ks))
		return false;
	if (end > l->slot_codes.len) {
		if (!nbg_coef_buf_reserve(&l->slot_codes, end - l->slot_codes.len))
			return false;
		l->slot_codes.len = end;
	}
	return true;
}

void nbg_coef_layout_free(nbg_coef_layout *l)
{
	free(l->ev);
	free(l->sv.p);
	free(l->off);
	free(l->bias);
	free(l->chan_of);
	free(l->dst);
	free(l->slot_codes.p);
	memset(l, 0, sizeof(*l));
}

/* First and last value positions of kernel k of a superblock of n kernels
 * starting at value b. */
static void kernel_span(const nbg_coef_layout *l, uint64_t b, uint32_t n, uint32_t k,
			uint64_t *first, uint64_t *last)
{
	const nbg_coef_shape *s = l->s;
	uint64_t ks = nbg_coef_ksize(s), sp = (uint64_t)s->kx * s->ky;

	switch (l->order) {
	case NBG_COEF_ORDER_INTERLEAVED:
		*first = b + k * sp;
		*last = b + (uint64_t)(s->kz - 1) * n * sp + k * sp + sp - 1;
		break;
	case NBG_COEF_ORDER_SIX: {
		uint64_t stride = s->kz < 6 ? s->kz : 6, blocks = (s->kz + stride - 1) / stride;
		uint64_t c = s->kz - (blocks - 1) * stride;
		*first = b + k * stride;
		*last = b + (blocks - 1) * n * stride + k * c + c - 1;
		break;
	}
	default: /* sequential */
		*first = b + k * ks;
		*last = *first + ks - 1;
	}
}

size_t nbg_coef_layout_events(nbg_coef_layout *l, uint32_t kpc, uint32_t first_slot)
{
	uint32_t sb = l->s->superblock;
	uint64_t ks = nbg_coef_ksize(l->s), base = 0;
	size_t ne = 0;

	for (uint32_t done = 0; done < kpc;) {
		uint32_t n = kpc - done < sb ? kpc - done : sb;
		size_t bi = ne, oi;
		/* biases and offsets each rise with k: merge the two lists */
		for (uint32_t k = 0; k < n; k++) {
			uint64_t f, z;
			kernel_span(l, base, n, k, &f, &z);
			l->ev[bi + k] = (nbg_coef_event){ f, first_slot + done + k, 0 };
			l->ev[bi + n + k] = (nbg_coef_event){ z, first_slot + done + k, 1 };
		}
		/* insertion merge of [bi, bi+n) and [bi+n, bi+2n) by position
		 * (a bias before an offset at the same value) */
		for (oi = bi + n; oi < bi + 2 * n; oi++) {
			nbg_coef_event e = l->ev[oi];
			size_t j = oi;
			while (j > bi && l->ev[j - 1].pos > e.pos) {
				l->ev[j] = l->ev[j - 1];
				j--;
			}
			l->ev[j] = e;
		}
		ne += 2 * n;
		base += n * ks;
		done += n;
	}
	return ne;
}

/* A z slice of a kernel: 9, 4 or 1 values in the corpus' kernels, copied
 * inline rather than through a library call per slice. */
static inline void copy_slice(uint8_t *dst, const uint8_t *src, uint32_t n)
{
	switch (n) {
	case 9:
		memcpy(dst, src, 9);
		break;
	case 4:
		memcpy(dst, src, 4);
		break;
	case 1:
		*dst = *src;
		break;
	default:
		memcpy(dst, src, n);
	}
}

void nbg_coef_layout_scatter(nbg_coef_layout *l, const uint8_t *src, uint32_t kpc,
			     uint32_t first_slot, uint8_t *codes, const uint32_t *chan)
{
	const nbg_coef_shape *s = l->s;
	uint32_t sp = s->kx * s->ky, ks = nbg_coef_ksize(s), sb = s->superblock;

	for (uint32_t done = 0; done < kpc;) {
		uint32_t n = kpc - done < sb ? kpc - done : sb;
		uint8_t **dst = l->dst;
		for (uint32_t k = 0, slot = first_slot + done; k < n; k++, slot++)
			dst[k] = codes + (size_t)(chan ? chan[slot] : slot) * ks;
		if (l->order == NBG_COEF_ORDER_SIX) {
			uint32_t stride = s->kz < 6 ? s->kz : 6, blocks = (s->kz + stride - 1) / stride;
			for (uint32_t b = 0; b < blocks; b++) {
				uint32_t c = b + 1 < blocks ? stride : s->kz - b * stride;
				for (uint32_t k = 0; k < n; k++, src += c)
					for (uint32_t t = 0; t < c; t++)
						dst[k][b * stride + t] = src[t];
			}
		} else if (l->order == NBG_COEF_ORDER_INTERLEAVED) {
			for (uint32_t z = 0; z < s->kz; z++)
				for (uint32_t k = 0; k < n; k++, src += sp) {
					uint8_t *d = dst[k] + z * sp;
					if (!l->chunked) {
						copy_slice(d, src, sp);
						continue;
					}
					for (uint32_t i = 0; i < sp; i++)
						d[l->chunk_order[i]] = src[i];
				}
		} else {
			for (uint32_t k = 0; k < n; k++, src += ks)
				memcpy(dst[k], src, ks);
		}
		done += n;
	}
}

/* Channels from the offset words with one output plane size; 0 when they
 * are not exactly the channels 0..out-1. */
static int channels_by(nbg_coef_layout *l, uint32_t plane, uint8_t *seen)
{
	uint32_t out = l->s->out;

	if (!plane)
		return 0;
	memset(seen, 0, out);
	for (uint32_t i = 0; i < out; i++) {
		uint32_t c = l->off[i] / plane;
		if (l->off[i] % plane || c >= out || seen[c])
			return 0;
		seen[c] = 1;
		l->chan_of[i] = c;
	}
	return 1;
}

int nbg_coef_layout_channels(nbg_coef_layout *l, nbg_coef_out *o)
{
	const nbg_coef_shape *s = l->s;
	uint32_t out = s->out, ks = nbg_coef_ksize(s);
	uint8_t *seen = malloc(out);
	int ok;

	if (!seen)
		return NBG_COEF_NO_MEMORY;
	/* one kernel: its offset word names nothing to check (an addition's
	 * offset, in Mesa's writer) */
	if (out == 1)
		ok = 1;
	else if ((ok = channels_by(l, s->plane[0], seen)) != 0)
		o->plane = s->plane[0];
	else if ((ok = channels_by(l, s->plane[1], seen)) != 0)
		o->plane = s->plane[1];
	free(seen);
	if (out == 1)
		l->chan_of[0] = 0;
	if (!ok)
		return nbg_coef_reject(o, "offset-not-channel", UINT64_MAX,
				       "the kernels' output offsets are not the %u channels times "
				       "the output plane (%u or %u values)", out, s->plane[0],
				       s->plane[1]);
	o->codes = malloc((size_t)out * ks);
	o->bias_stored = malloc(out * sizeof(int32_t));
	o->bias = malloc(out * sizeof(int32_t));
	if (!o->codes || !o->bias_stored || !o->bias)
		return NBG_COEF_NO_MEMORY;
	return NBG_COEF_DECODED;
}

void nbg_coef_layout_biases(const nbg_coef_layout *l, nbg_coef_out *o)
{
	const nbg_coef_shape *s = l->s;
	uint32_t out = s->out, ks = nbg_coef_ksize(s);

	for (uint32_t i = 0; i < out; i++) {
		uint32_t c = l->chan_of[i];
		const uint8_t *w = o->codes + (size_t)c * ks;
		/* stored = bias - sum((w - zp) * in_zp), modulo 2^32; int8:
		 * stored = bias */
		uint32_t corr = s->int8 ? 0
					: (nbg_coef_sum(w, ks) - ks * s->zero_point) *
						  (uint32_t)s->in_zero_point;
		o->bias_stored[c] = (int32_t)l->bias[i];
		o->bias[c] = (int32_t)(l->bias[i] + corr);
	}
}

int nbg_coef_layout_finish(nbg_coef_layout *l, nbg_coef_out *o)
{
	uint32_t ks = nbg_coef_ksize(l->s);
	int r = nbg_coef_layout_channels(l, o);

	if (r != NBG_COEF_DECODED)
		return r;
	for (uint32_t i = 0; i < l->s->out; i++)
		memcpy(o->codes + (size_t)l->chan_of[i] * ks, l->slot_codes.p + (size_t)i * ks, ks);
	nbg_coef_layout_biases(l, o);
	return NBG_COEF_DECODED;
}
