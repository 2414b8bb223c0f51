/*
 * coef_v8.c - "v8a" and "v8b" kernel streams.  Both start with Mesa's
 * struct etna_nn_header_v8 (64 bytes: flags and version, run_length_size,
 * run_length_table[18], symbol_map, avg_bias, then stream_size[] in bits,
 * one per core) and carry per core, 64-byte aligned, Huffman-coded bytes
 * (coef_huffman.c): a 16-bit kernel count, then
 *   v8a: (weight - zero point) in blocks of 9 across each superblock's
 *        kernels (Mesa's encode_superblock, fill_weights), the int32 biases
 *        (with per_channel_post_mul: int32 bias, float32 pairs) after the
 *        last core in channel order (fill_biases);
 *   v8b: the v7 layout as bytes: per kernel its 32-bit bias before its
 *        first weight, raw weights, its 32-bit output offset after the last
 *        (Mesa's customer_id 0x99 branch of encode_value).
 * avg_bias is added back to every byte; precode is delta coding mod 256
 * over a core's bytes.
 */
#include <stdlib.h>

#include "coef/coef_internal.h"

#define V8_HEADER 64u
#define V8_MAX_CORES 9u

typedef struct v8_core {
	uint64_t at, nbits, region; /* byte offset, bits, bytes to the next core */
	uint64_t start;             /* its bytes in the buffer */
	uint32_t kpc;
} v8_core;

typedef struct v8_ctx {
	const uint8_t *p;
	size_t n;
	const nbg_coef_shape *s;
	int precode;
	uint8_t avg;
	uint32_t ncores, remaining;
	uint64_t unit;              /* bytes per kernel */
	unsigned esz;               /* bytes per value: 2 in a 16-bit stream */
	v8_core core[V8_MAX_CORES];
	nbg_coef_buf bytes;         /* every core's bytes, back to back */
	uint64_t end;               /* first byte after the last core's region */
} v8_ctx;

static uint64_t want(void *ctx, const uint8_t *got)
{
	v8_ctx *c = ctx;
	uint8_t b0 = (uint8_t)(got[0] + c->avg), b1 = (uint8_t)(got[1] + c->avg);
	uint32_t kpc;

	if (c->precode)
		b1 = (uint8_t)(b0 + b1);
	kpc = b0 | (uint32_t)b1 << 8;
	if (kpc == 0 || kpc > c->remaining)
		return UINT64_MAX;
	return 2 + kpc * c->unit;
}

int nbg_coef_v8_header(const uint8_t *p, size_t n, int bit16, int *precode, uint8_t *avg_out,
		       nbg_huff *h, nbg_coef_out *o)
{
	unsigned flags, version, avg;

	if (n < V8_HEADER)
		return nbg_coef_reject(o, "stream-too-short", (uint64_t)n * 8,
				       "%zu bytes: less than the 64-byte header", n);
	flags = p[0] & 15;
	version = p[0] >> 4;
	avg = p[24] | (unsigned)p[25] << 8;
	if (version != 1)
		return nbg_coef_reject(o, "header-invalid", 4,
				       "header version %u (streams carry 1)", version);
	if ((flags & 4) || ((flags & 2) && !bit16))
		return nbg_coef_reject(o, "unsupported-stream-flags", 1,
				       "unsupported (a %s stream: not established%s)",
				       flags & 4 ? "floating-point" : "16-bit",
				       flags & 4 ? "" : " for these kernels");
	if (bit16 && !(flags & 2))
		return nbg_coef_reject(o, "header-invalid", 1,
				       "the header's bit16 is clear; the command has 16-bit kernels");
	if (bit16 && ((flags & 1) || avg))
		return nbg_coef_reject(o, "unsupported-stream-flags", (flags & 1) ? 0 : 192,
				       "unsupported (a 16-bit stream with %s: no sample)",
				       (flags & 1) ? "precode" : "a non-zero avg_bias");
	if (flags & 8)
		return nbg_coef_reject(o, "header-invalid", 3, "reserved header bit 3 is set");
	if (avg > 255)
		return nbg_coef_reject(o, "header-invalid", 192, "avg_bias %u is not a byte", avg);
	*precode = flags & 1;
	*avg_out = (uint8_t)avg;
	if (*precode && *avg_out)
		return nbg_coef_reject(o, "unsupported-stream-flags", 0,
				       "unsupported (precode with a non-zero avg_bias: no sample)");
	return nbg_huff_init(h, p, o);
}

static int header(v8_ctx *c, nbg_huff *h, nbg_coef_out *o)
{
	return nbg_coef_v8_header(c->p, c->n, c->esz == 2, &c->precode, &c->avg, h, o);
}

/* The cores' regions: stream sizes a non-empty prefix of the nine. */
static int regions(v8_ctx *c, nbg_coef_out *o)
{
	uint64_t pos = V8_HEADER;
	uint32_t i;

	for (i = 0; i < V8_MAX_CORES && le32(c->p + 28 + 4 * i); i++) {
		v8_core *k = &c->core[i];
		k->at = pos;
		k->nbits = le32(c->p + 28 + 4 * i);
		k->region = (k->nbits + 511) / 512 * 64;
		if (k->region > c->n - pos)
			return nbg_coef_reject(o, "core-outside-entry", 224 + 32ull * i,
					       "core %u's %llu bits pass the end of the entry", i,
					       (unsigned long long)k->nbits);
		pos += k->region;
	}
	c->ncores = i;
	for (; i < V8_MAX_CORES; i++)
		if (le32(c->p + 28 + 4 * i))
			return nbg_coef_reject(o, "header-invalid", 224 + 32ull * i,
					       "core %u has a stream after an empty core", i);
	if (!c->ncores)
		return nbg_coef_reject(o, "kernel-count-mismatch", 224, "no core has a stream");
	c->end = pos;
	return NBG_COEF_DECODED;
}

/* Bits after a core's stream_size, to its region's end, are zero. */
static int core_padding(const v8_ctx *c, const v8_core *k, nbg_coef_out *o)
{
	const uint8_t *p = c->p + k->at;
	uint64_t i = k->nbits / 8;

	if (k->nbits % 8 && (p[i++] >> (k->nbits % 8)))
		return nbg_coef_reject(o, "nonzero-padding", k->at * 8 + k->nbits,
				       "the bits after the core's stream are not zero");
	for (; i < k->region; i++)
		if (p[i])
			return nbg_coef_reject(o, "nonzero-padding", (k->at + i) * 8,
					       "byte %llu of the core's padding is not zero",
					       (unsigned long long)i);
	return NBG_COEF_DECODED;
}

/* Every core's bytes, with avg_bias and precode undone. */
static int cores(v8_ctx *c, const nbg_huff *h, nbg_coef_out *o)
{
	uint32_t total = 0;

	for (uint32_t i = 0; i < c->ncores; i++) {
		v8_core *k = &c->core[i];
		uint64_t start = c->bytes.len;
		int r;
		c->remaining = c->s->out - total;
		r = (c->esz == 2 ? nbg_huff_core16 : nbg_huff_core)(h, c->p + k->at, k->nbits,
								    k->at * 8, &c->bytes, want, c, o);
		if (r != NBG_COEF_DECODED || (r = core_padding(c, k, o)) != NBG_COEF_DECODED)
			return r;
		uint8_t *b = c->bytes.p + start, prev = 0, avg = c->avg;
		uint64_t len = c->bytes.len - start;
		if (c->precode) {
			for (uint64_t j = 0; j < len; j++)
				b[j] = prev = (uint8_t)(prev + b[j] + avg);
		} else if (avg) {
			nbg_coef_add_bytes(b, len, avg);
		}
		k->start = start;
		k->kpc = b[0] | (uint32_t)b[1] << 8;
		total += k->kpc;
	}
	if (total != c->s->out)
		return nbg_coef_reject(o, "kernel-count-mismatch", c->end * 8,
				       "the cores hold %u kernels; the command has %u", total,
				       c->s->out);
	return NBG_COEF_DECODED;
}

/* v8a: the channel of kernel kk of superblock sb on core ci. */
static int64_t v8a_channel(const v8_ctx *c, uint32_t ci, uint32_t sb, uint32_t kk,
			   uint32_t *next)
{
	const nbg_coef_shape *s = c->s;
	int64_t nc = c->ncores, out = s->out;

	if (!s->depthwise)
		return next[sb]++;
	/* fill_weights' depthwise order: cores from the last, kernels a core
	 * count apart, the remainder folded back */
	int64_t oc = nc - ci - 1 + nc * (int64_t)s->superblock * sb + (int64_t)kk * nc;
	if (out > 1 && oc >= out - out % nc)
		oc -= nc - out % nc;
	return oc;
}

/* A superblock's n kernels (channels ch) from its values v (the zero
 * point added back): blocks of 9 across the kernels, a depthwise kernel
 * whole; the padding after a kernel's values must be the zero point. */
static int v8a_superblock(const v8_ctx *c, const uint8_t *v, uint32_t n, const int64_t *ch,
			  nbg_coef_out *o)
{
	const nbg_coef_shape *s = c->s;
	size_t e = c->esz, ks = nbg_coef_ksize(s), per = (ks + 8) / 9 * 9;
	/* the zero point of 16-bit kernels is 0 (checked by the caller) */
	uint8_t zp = (uint8_t)s->zero_point, pad = 0;

	for (uint32_t kk = 0; kk < n; kk++) {
		uint8_t *dst = o->codes + (size_t)ch[kk] * ks * e;
		if (s->depthwise) {
			const uint8_t *src = v + (size_t)kk * per * e;
			memcpy(dst, src, ks * e);
			for (size_t j = ks * e; j < per * e; j++)
				pad |= src[j] ^ zp;
			continue;
		}
		size_t full = ks / 9, b;
		for (b = 0; b < full; b++)
			memcpy(dst + b * 9 * e, v + (b * n + kk) * 9 * e, 9 * e);
		if (ks % 9) {
			const uint8_t *src = v + (b * n + kk) * 9 * e;
			memcpy(dst + b * 9 * e, src, ks % 9 * e);
			for (size_t j = ks % 9 * e; j < 9 * e; j++)
				pad |= src[j] ^ zp;
		}
	}
	return pad ? nbg_coef_reject(o, "nonzero-block-padding", UINT64_MAX,
				     "a kernel's padding after its %zu values is not the zero point",
				     ks)
		   : NBG_COEF_DECODED;
}

static int v8a_place(v8_ctx *c, uint8_t *taken, uint32_t *next, nbg_coef_out *o)
{
	const nbg_coef_shape *s = c->s;
	uint32_t ks = nbg_coef_ksize(s), per = (ks + 8) / 9 * 9, S = s->superblock;
	int64_t ch[128];

	for (uint32_t ci = 0; ci < c->ncores; ci++) {
		const v8_core *k = &c->core[ci];
		uint8_t *v = c->bytes.p + k->start + 2, zp = (uint8_t)s->zero_point;
		/* the stored values are w - zp (16-bit kernels: zp 0) */
		if (c->esz == 1 && zp)
			nbg_coef_add_bytes(v, (size_t)k->kpc * per, zp);
		for (uint32_t done = 0, sb = 0; done < k->kpc; sb++) {
			uint32_t n = k->kpc - done < S ? k->kpc - done : S;
			int r;
			for (uint32_t kk = 0; kk < n; kk++) {
				ch[kk] = v8a_channel(c, ci, sb, kk, next);
				if (ch[kk] < 0 || ch[kk] >= s->out || taken[ch[kk]])
					return nbg_coef_reject(o, "channel-collision", k->at * 8,
							       "core %u's kernel %u maps to channel "
							       "%lld, %s", ci, done + kk,
							       (long long)ch[kk],
							       ch[kk] < 0 || ch[kk] >= s->out
								       ? "out of range"
								       : "taken");
				taken[ch[kk]] = 1;
			}
			if ((r = v8a_superblock(c, v, n, ch, o)) != NBG_COEF_DECODED)
				return r;
			v += (size_t)n * per * c->esz;
			done += n;
		}
	}
	return NBG_COEF_DECODED;
}

/* v8a: the biases (and floats) after the cores; zeros to the entry's end. */
static int v8a_biases(const v8_ctx *c, nbg_coef_out *o)
{
	const nbg_coef_shape *s = c->s;
	uint64_t step = c->esz == 2 ? 6 : s->per_channel ? 8 : 4, at = c->end;
	uint64_t ks = nbg_coef_ksize(s);

	if ((uint64_t)s->out * step > c->n - at)
		return nbg_coef_reject(o, "bias-block-outside-entry", at * 8,
				       "%u biases of %llu bytes pass the end of the entry", s->out,
				       (unsigned long long)step);
	for (uint64_t i = at + s->out * step; i < c->n; i++)
		if (c->p[i])
			return nbg_coef_reject(o, "nonzero-tail", i * 8,
					       "byte %llu after the biases is not zero",
					       (unsigned long long)i);
	/* 16-bit kernels: a 48-bit bias per channel, as stored (its correction,
	 * if any, is not established) */
	for (uint32_t ch = 0; c->esz == 2 && ch < s->out; ch++) {
		const uint8_t *b = c->p + at + ch * step;
		uint64_t u = le32(b) | (uint64_t)(b[4] | (uint32_t)b[5] << 8) << 32;
		o->bias64[ch] = (int64_t)(u << 16) / 65536;
	}
	for (uint32_t ch = 0; c->esz == 1 && ch < s->out; ch++) {
		const uint8_t *w = o->codes + (size_t)ch * ks;
		uint32_t stored = le32(c->p + at + ch * step);
		uint32_t corr = s->int8 ? 0
					: (nbg_coef_sum(w, ks) - (uint32_t)ks * s->zero_point) *
						  (uint32_t)(128 - s->in_zero_point);
		/* stored = bias + sum((w - zp) * (128 - in_zp)), modulo 2^32;
		 * int8 (input zero point 0): stored = bias */
		o->bias_stored[ch] = (int32_t)stored;
		o->bias[ch] = (int32_t)(stored - corr);
		if (o->scale) {
			uint32_t f = le32(c->p + at + ch * step + 4);
			memcpy(&o->scale[ch], &f, 4);
		}
	}
	return NBG_COEF_DECODED;
}

static int v8a(v8_ctx *c, nbg_coef_out *o)
{
	const nbg_coef_shape *s = c->s;
	uint8_t *taken = calloc(s->out, 1);
	uint32_t *next = malloc((size_t)s->out * sizeof(*next));
	int r = NBG_COEF_NO_MEMORY;

	o->codes = malloc((size_t)s->out * nbg_coef_ksize(s) * c->esz);
	if (c->esz == 2) {
		o->bias64 = malloc(s->out * sizeof(int64_t));
	} else {
		o->bias_stored = malloc(s->out * sizeof(int32_t));
		o->bias = malloc(s->out * sizeof(int32_t));
		o->scale = s->per_channel ? malloc(s->out * sizeof(float)) : NULL;
	}
	if (taken && next && o->codes &&
	    (c->esz == 2 ? o->bias64 != NULL
			 : o->bias_stored && o->bias && (o->scale || !s->per_channel))) {
		/* fill_weights: superblock sb's channels start at sb x
		 * kernels_per_core x cores and go core by core */
		for (uint32_t sb = 0; sb < s->out; sb++)
			next[sb] = sb * s->superblock * c->ncores;
		r = v8a_place(c, taken, next, o);
		if (r == NBG_COEF_DECODED)
			r = v8a_biases(c, o);
	}
	free(taken);
	free(next);
	if (r == NBG_COEF_DECODED) {
		o->format = NBG_WEIGHTS_FORMAT_V8A;
		o->order = NBG_COEF_ORDER_BLOCKS9;
		o->cores = c->ncores;
	}
	return r;
}

/* v8b: a core's kpc kernels (slots from slot) at b: each kernel's bias
 * word before its first value and offset word after its last; the words
 * into l->bias and l->off, and (vals not NULL) the values alone into vals. */
static void v8b_words(nbg_coef_layout *l, const uint8_t *b, uint32_t kpc, uint32_t slot,
		      uint8_t *vals)
{
	size_t ne = nbg_coef_layout_events(l, kpc, slot);
	uint64_t vpos = 0;

	for (size_t e = 0; e < ne; e++) {
		uint64_t upto = l->ev[e].pos + l->ev[e].offset;
		if (vals)
			memcpy(vals + vpos, b, (size_t)(upto - vpos));
		b += upto - vpos;
		vpos = upto;
		if (l->ev[e].offset)
			l->off[l->ev[e].slot] = le32(b);
		else
			l->bias[l->ev[e].slot] = le32(b);
		b += 4;
	}
}

/* v8b with one writer's order: the words out of the bytes, the channels
 * from the offset words, then each core's values straight to their
 * channels' kernels. */
static int v8b_order(void *ctx, const nbg_coef_shape *s, unsigned order, nbg_coef_out *o)
{
	v8_ctx *c = ctx;
	nbg_coef_layout l;
	uint32_t slot = 0;
	int r;

	if (!nbg_coef_layout_init(&l, s, order)) {
		nbg_coef_layout_free(&l);
		return NBG_COEF_NO_MEMORY;
	}
	for (uint32_t ci = 0; ci < c->ncores; ci++) {
		const v8_core *k = &c->core[ci];
		v8b_words(&l, c->bytes.p + k->start + 2, k->kpc, slot, NULL);
		slot += k->kpc;
	}
	for (uint64_t i = c->end; i < c->n; i++)
		if (c->p[i]) {
			nbg_coef_layout_free(&l);
			return nbg_coef_reject(o, "nonzero-tail", i * 8,
					       "byte %llu after the last core is not zero",
					       (unsigned long long)i);
		}
	r = nbg_coef_layout_channels(&l, o);
	slot = 0;
	for (uint32_t ci = 0; ci < c->ncores && r == NBG_COEF_DECODED; ci++) {
		const v8_core *k = &c->core[ci];
		l.sv.len = 0;
		if (!nbg_coef_buf_reserve(&l.sv, (uint64_t)k->kpc * nbg_coef_ksize(s))) {
			r = NBG_COEF_NO_MEMORY;
			break;
		}
		v8b_words(&l, c->bytes.p + k->start + 2, k->kpc, slot, l.sv.p);
		nbg_coef_layout_scatter(&l, l.sv.p, k->kpc, slot, o->codes, l.chan_of);
		slot += k->kpc;
	}
	if (r == NBG_COEF_DECODED)
		nbg_coef_layout_biases(&l, o);
	nbg_coef_layout_free(&l);
	if (r == NBG_COEF_DECODED) {
		o->format = NBG_WEIGHTS_FORMAT_V8B;
		o->order = order;
		o->cores = c->ncores;
	}
	return r;
}

int nbg_coef_decode_v8(const uint8_t *p, size_t n, const nbg_coef_shape *s, int layout_v7,
		       nbg_coef_out *o)
{
	v8_ctx c = { .p = p, .n = n, .s = s, .esz = s->bit16 ? 2 : 1 };
	nbg_huff h;
	uint64_t ks = nbg_coef_ksize(s);
	int r;

	if (s->bit16 && (layout_v7 || s->per_channel || s->zero_point))
		return nbg_coef_reject(o, "unsupported-data-type", UINT64_MAX,
				       "unsupported (16-bit kernels %s: no sample)",
				       layout_v7 ? "in a v8b stream"
				       : s->per_channel ? "with per_channel_post_mul"
							: "with a non-zero coef_zero_point");
	c.unit = (layout_v7 ? ks + 8 : (ks + 8) / 9 * 9) * c.esz;
	if ((r = header(&c, &h, o)) != NBG_COEF_DECODED || (r = regions(&c, o)) != NBG_COEF_DECODED ||
	    (r = cores(&c, &h, o)) != NBG_COEF_DECODED)
		goto done;
	if (layout_v7) {
		r = nbg_coef_try_orders(s, o, v8b_order, &c);
	} else {
		r = v8a(&c, o);
	}
done:
	free(c.bytes.p);
	if (r != NBG_COEF_DECODED)
		nbg_coef_out_free(o);
	return r;
}
