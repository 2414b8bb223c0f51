/*
 * coef_v7.c - "v7" kernel streams (etna_ml_create_coeffs_v7 and its
 * writers in Mesa's etnaviv_ml_nn_v7.c): a header of one 32-bit word per
 * core (that core's stream size in bytes, 64-aligned; 0 for an unused
 * core), padded to 64 bytes, then each core's LSB-first bit stream:
 * zrl_bits (8 bits), the core's kernel count (16), then tokens of (zero
 * run: zrl_bits, value: 8) -- run copies of the zero point, then value --
 * with each kernel's 32-bit bias after the token that holds its first value
 * and its 32-bit output offset after the token that holds its last.  The
 * stream ends on a 32-bit boundary with zero bits and is zero-padded to its
 * 64-byte size.
 */
#include <stdlib.h>

#include "coef/coef_internal.h"

typedef struct v7_core {
	const uint8_t *p;
	uint64_t at;      /* the core's byte offset in the stream */
	uint32_t size;    /* bytes */
	uint32_t slot;    /* first kernel slot */
} v7_core;

static uint64_t core_bit(const v7_core *c, const nbg_bits *b)
{
	return c->at * 8 + b->pos;
}

/* The tokens of one core's kpc kernels into l->sv, the words into l->bias
 * and l->off. */
static int tokens(nbg_coef_layout *l, const v7_core *c, nbg_bits *b, uint32_t zrl,
		  uint32_t kpc, nbg_coef_out *o)
{
	const nbg_coef_shape *s = l->s;
	size_t ne = nbg_coef_layout_events(l, kpc, c->slot), ei = 0;
	uint64_t total = (uint64_t)kpc * nbg_coef_ksize(s), vpos = 0;
	unsigned tb = zrl + 8;
	uint64_t rmask = (1ull << zrl) - 1;

	while (vpos < total) {
		if (b->nbits - b->pos < tb)
			return nbg_coef_reject(o, "stream-overrun", core_bit(c, b),
					       "core stream ends after %llu of its %llu values",
					       (unsigned long long)vpos, (unsigned long long)total);
		uint64_t v = nbg_bits_peek(b), run = v & rmask;
		b->pos += tb;
		if (run >= total - vpos)
			return nbg_coef_reject(o, "run-past-end", core_bit(c, b) - tb,
					       "a run of %llu zero points and a value passes the "
					       "core's last kernel (%llu values left)",
					       (unsigned long long)run,
					       (unsigned long long)(total - vpos));
		memset(l->sv.p + vpos, (int)s->zero_point, (size_t)run);
		l->sv.p[vpos + run] = (uint8_t)(v >> zrl);
		vpos += run + 1;
		for (; ei < ne && l->ev[ei].pos < vpos; ei++) {
			uint32_t w;
			if (!nbg_bits_get(b, 32, &w))
				return nbg_coef_reject(o, "stream-overrun", core_bit(c, b),
						       "core stream ends before a kernel's %s word",
						       l->ev[ei].offset ? "offset" : "bias");
			if (l->ev[ei].offset)
				l->off[l->ev[ei].slot] = w;
			else
				l->bias[l->ev[ei].slot] = w;
		}
	}
	return NBG_COEF_DECODED;
}

/* Zero bits to the next 32-bit boundary, zero bytes to the core's end, and a
 * size that is exactly the used words rounded up to 64 bytes. */
static int core_end(const v7_core *c, nbg_bits *b, nbg_coef_out *o)
{
	uint64_t used = (b->pos + 31) / 32 * 4;
	uint32_t pad;

	if (b->pos % 32 && (!nbg_bits_get(b, 32 - b->pos % 32, &pad) || pad))
		return nbg_coef_reject(o, "nonzero-padding", core_bit(c, b),
				       "the bits after the core's last word are not zero");
	for (uint64_t i = used; i < c->size; i++)
		if (c->p[i])
			return nbg_coef_reject(o, "nonzero-padding", (c->at + i) * 8,
					       "byte %llu of the core's padding is not zero",
					       (unsigned long long)i);
	if ((used + 63) / 64 * 64 != c->size)
		return nbg_coef_reject(o, "bit-count-mismatch", core_bit(c, b),
				       "the core uses %llu bytes; its header says %u, not that "
				       "rounded up to 64", (unsigned long long)used, c->size);
	return NBG_COEF_DECODED;
}

static int one_core(nbg_coef_layout *l, const v7_core *c, uint32_t *kpc_out, nbg_coef_out *o)
{
	nbg_bits b = { c->p, c->size, (uint64_t)c->size * 8, 0 };
	uint32_t zrl, kpc;
	int r;

	if (!nbg_bits_get(&b, 8, &zrl) || !nbg_bits_get(&b, 16, &kpc))
		return nbg_coef_reject(o, "stream-overrun", c->at * 8, "core stream too short");
	if (zrl > 8)
		return nbg_coef_reject(o, "header-invalid", c->at * 8,
				       "zrl_bits %u: beyond the 8 of any stream seen", zrl);
	if (kpc == 0 || kpc > l->s->out - c->slot)
		return nbg_coef_reject(o, "kernel-count-mismatch", c->at * 8 + 8,
				       "the core holds %u kernels; %u of the %u remain", kpc,
				       l->s->out - c->slot, l->s->out);
	/* a token of 8 + zrl_bits bits holds at most 2^zrl_bits values, a
	 * kernel 64 bits of words */
	if ((uint64_t)kpc * 64 > b.nbits ||
	    (uint64_t)kpc * nbg_coef_ksize(l->s) > (b.nbits / (8 + zrl)) << zrl)
		return nbg_coef_reject(o, "counts-exceed-entry", c->at * 8 + 8,
				       "%u kernels of %u values cannot fit in the core's %u bytes",
				       kpc, nbg_coef_ksize(l->s), c->size);
	if (!nbg_coef_layout_reserve(l, kpc, c->slot))
		return NBG_COEF_NO_MEMORY;
	if ((r = tokens(l, c, &b, zrl, kpc, o)) != NBG_COEF_DECODED ||
	    (r = core_end(c, &b, o)) != NBG_COEF_DECODED)
		return r;
	nbg_coef_layout_scatter(l, l->sv.p, kpc, c->slot, l->slot_codes.p, NULL);
	*kpc_out = kpc;
	return NBG_COEF_DECODED;
}

typedef struct v7_stream {
	const uint8_t *p;
	size_t n;
} v7_stream;

static int attempt(void *ctx, const nbg_coef_shape *s, unsigned order, nbg_coef_out *o)
{
	const uint8_t *p = ((v7_stream *)ctx)->p;
	size_t n = ((v7_stream *)ctx)->n;
	uint64_t header = ((uint64_t)s->v7_cores * 4 + 63) / 64 * 64, pos = header;
	nbg_coef_layout l;
	uint32_t slot = 0, cores = 0;
	int r = NBG_COEF_DECODED;

	if (n < header)
		return nbg_coef_reject(o, "stream-too-short", (uint64_t)n * 8,
				       "%zu bytes: less than the %llu-byte header", n,
				       (unsigned long long)header);
	if (!nbg_coef_layout_init(&l, s, order)) {
		nbg_coef_layout_free(&l);
		return NBG_COEF_NO_MEMORY;
	}
	for (uint32_t i = 0; i < s->v7_cores && r == NBG_COEF_DECODED; i++) {
		v7_core c = { p + pos, pos, le32(p + 4 * i), slot };
		uint32_t kpc = 0;
		if (!c.size)
			continue;
		if (c.size % 64)
			r = nbg_coef_reject(o, "header-invalid", 32ull * i,
					    "core %u's stream size %u is not a multiple of 64", i,
					    c.size);
		else if (c.size > n - pos)
			r = nbg_coef_reject(o, "core-outside-entry", 32ull * i,
					    "core %u's %u bytes pass the end of the entry", i, c.size);
		else if ((r = one_core(&l, &c, &kpc, o)) == NBG_COEF_DECODED) {
			slot += kpc;
			pos += c.size;
			cores++;
		}
	}
	if (r == NBG_COEF_DECODED && slot != s->out)
		r = nbg_coef_reject(o, "kernel-count-mismatch", pos * 8,
				    "the cores hold %u kernels; the command has %u", slot, s->out);
	for (uint64_t i = pos; r == NBG_COEF_DECODED && i < n; i++)
		if (p[i])
			r = nbg_coef_reject(o, "nonzero-tail", i * 8,
					    "byte %llu after the last core stream is not zero",
					    (unsigned long long)i);
	if (r == NBG_COEF_DECODED && (r = nbg_coef_layout_finish(&l, o)) == NBG_COEF_DECODED) {
		o->format = NBG_WEIGHTS_FORMAT_V7;
		o->order = order;
		o->cores = cores;
	}
	nbg_coef_layout_free(&l);
	return r;
}

/* The writers to try, in order: 1x1 kernels over several input channels
 * are write_core_6's blocks of six on some targets and interleaved on
 * others (their bias and offset words fall at different values, so the
 * checks tell them apart); other kernels over several channels are
 * interleaved; single-channel kernels sequential. */
static size_t orders(const nbg_coef_shape *s, unsigned *o)
{
	if (s->kz > 1 && s->kx == 1 && s->ky == 1) {
		o[0] = s->six_first ? NBG_COEF_ORDER_SIX : NBG_COEF_ORDER_INTERLEAVED;
		o[1] = s->six_first ? NBG_COEF_ORDER_INTERLEAVED : NBG_COEF_ORDER_SIX;
		return 2;
	}
	o[0] = s->kz > 1 ? NBG_COEF_ORDER_INTERLEAVED : NBG_COEF_ORDER_SEQUENTIAL;
	return 1;
}

/* Tries each writer; the first whose stream is exactly consistent wins.
 * When none is, the first writer's reason stands. */
int nbg_coef_try_orders(const nbg_coef_shape *s, nbg_coef_out *o, nbg_coef_order_fn fn, void *ctx)
{
	unsigned list[2];
	size_t k = orders(s, list);
	nbg_coef_out first;
	int r = NBG_COEF_REJECTED;

	for (size_t i = 0; i < k; i++) {
		nbg_coef_out t;
		memset(&t, 0, sizeof(t));
		t.bit = UINT64_MAX;
		r = fn(ctx, s, list[i], &t);
		if (r != NBG_COEF_REJECTED) {
			if (r != NBG_COEF_DECODED)
				nbg_coef_out_free(&t);
			*o = t;
			return r;
		}
		nbg_coef_out_free(&t);
		if (i == 0)
			first = t;
	}
	*o = first;
	return r;
}

int nbg_coef_decode_v7(const uint8_t *p, size_t n, const nbg_coef_shape *s, nbg_coef_out *o)
{
	v7_stream st = { p, n };

	return nbg_coef_try_orders(s, o, attempt, &st);
}
