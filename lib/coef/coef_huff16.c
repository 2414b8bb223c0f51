/*
 * coef_huff16.c - the v8 Huffman coder carrying 16-bit values (header flag
 * bit16: the int16 kernels of target 0x1000003b), decoded.  No open driver
 * writes it; established from the data (doc/weights.md, "16-bit kernels"):
 * every core of the corpus' int16 streams ends exactly at its stream_size,
 * and the values equal the quantized weights of the TensorFlow Lite models
 * the files were compiled from.
 *
 * The codes and their three-deep pipeline are those of the 8-bit coder
 * (coef_huffman.c).  A value's field is 8 raw bits, its low byte, then the
 * symbol's field of the 8-bit coder, which gives its high byte: a sign bit
 * and the L-1 bits below an implicit leading 1 (L 0: the sign alone).  A
 * code's free bit is the sign.  Without ZRL a negative high byte is the one's
 * complement (~m); in ZRL mode it is -m and a positive one m - 1 (a value
 * whose high byte is 0 has a symbol of length 1: length 0 is a run); ZRL
 * length 7 is a raw 16-bit value, lengths 0 and 8 zero runs as in 8 bits.
 *
 * Plain and unoptimised: the corpus' 16-bit streams are small.
 */
#include "coef/coef_internal.h"

static const uint8_t sym_p0[8] = { 0, 1, 8, 3, 0, 1, 4, 2 };
static const uint8_t sym_p1[4] = { 7, 5, 6, 5 };

typedef struct h16 {
	const nbg_huff *h;
	nbg_bits b;
	uint8_t sym[6], fb[6], has_free[6], p0[6];
	nbg_coef_buf *buf;
	uint64_t base;
	nbg_coef_out *o;
	int over;                /* a read passed the core's bits */
} h16;

/* k bits (0 past the core's bits, which sets over). */
static uint32_t get(h16 *st, unsigned k)
{
	uint32_t v = 0;

	if (!nbg_bits_get(&st->b, k, &v))
		st->over = 1;
	return v;
}

static int put(h16 *st, int32_t v)
{
	if (!nbg_coef_buf_reserve(st->buf, 2))
		return NBG_COEF_NO_MEMORY;
	st->buf->p[st->buf->len++] = (uint8_t)(v & 0xff);
	st->buf->p[st->buf->len++] = (uint8_t)((uint32_t)v >> 8 & 0xff);
	return NBG_COEF_DECODED;
}

/* The value of ring slot t; bits that run out read as zeros and set over
 * (the caller rejects the core). */
static int value(h16 *st, unsigned t)
{
	const nbg_huff *h = st->h;
	unsigned sym = st->sym[t], L = h->lengths[sym], nb = h->width[sym];
	uint32_t f = 0, r;

	if (h->run[sym]) {
		if (st->has_free[t] && nb)
			f = get(st, nb - 1) << 1 | st->fb[t];
		else if (nb)
			f = get(st, nb);
		unsigned run = h->table[h->run[sym] == 1 ? (f & 1) : 2 + f] + 1u;
		if (!nbg_coef_buf_reserve(st->buf, 2ull * run))
			return NBG_COEF_NO_MEMORY;
		memset(st->buf->p + st->buf->len, 0, 2ull * run);
		st->buf->len += 2ull * run;
		return NBG_COEF_DECODED;
	}
	/* the field: 8 low bits, then the 8-bit coder's (sign first) */
	unsigned w = 8 + (h->zrl && L == 7 ? 8 : L ? L : 1);
	if (st->has_free[t]) {
		r = get(st, w - 1);
		f = (r & 0xff) | ((r >> 8) << 9) | (uint32_t)st->fb[t] << 8;
	} else {
		f = get(st, w);
	}
	if (h->zrl && L == 7)
		return put(st, (int32_t)(int16_t)(uint16_t)f);
	uint32_t lo = f & 0xff, sign = f >> 8 & 1, m = L ? (1u << (L - 1)) | f >> 9 : 0;
	int32_t hi = sign ? (h->zrl ? -(int32_t)m : ~(int32_t)m) : (int32_t)m - (h->zrl ? 1 : 0);
	if (hi < -128 || hi > 127)
		return nbg_coef_reject(st->o, "value-out-of-range", st->base + st->b.pos,
				       "a 16-bit value's high byte %d is outside int16", hi);
	return put(st, hi * 256 + (int32_t)lo);
}

/* Step s: reads its pair of codes into slots i, i+1, the second parts of
 * slots j (step s-1), the values of slots k (step s-2). */
static int step(h16 *st, unsigned i, int seconds, int values)
{
	unsigned j = (i + 4) % 6, k = (i + 2) % 6;
	uint32_t v;

	for (unsigned t = i; t < i + 2; t++) {
		v = get(st, 3);
		st->p0[t] = (uint8_t)v;
		st->sym[t] = sym_p0[v];
		st->has_free[t] = sym_p0[v] <= 1;
		st->fb[t] = (uint8_t)(v >> 2);
	}
	for (unsigned t = j; seconds && t < j + 2; t++) {
		if (st->sym[t] != 8)
			continue;
		v = get(st, 2);
		st->sym[t] = sym_p1[v];
		st->has_free[t] = sym_p1[v] == 5;
		st->fb[t] = (uint8_t)(v >> 1);
	}
	for (unsigned t = k; values && t < k + 2; t++) {
		int r = value(st, t);
		if (r != NBG_COEF_DECODED)
			return r;
	}
	return NBG_COEF_DECODED;
}

int nbg_huff_core16(const nbg_huff *h, const uint8_t *p, uint64_t nbits, uint64_t base,
		    nbg_coef_buf *buf, nbg_huff_want_fn want, void *ctx, nbg_coef_out *o)
{
	h16 st;
	uint64_t start = buf->len, target = 0;
	unsigned i = 0, last = 0;
	int r;

	memset(&st, 0, sizeof(st));
	st.h = h;
	st.b = (nbg_bits){ p, (nbits + 7) / 8, nbits, 0 };
	st.buf = buf;
	st.base = base;
	st.o = o;
	for (uint64_t s = 0;; s++, i = (i + 2) % 6) {
		if ((r = step(&st, i, s >= 1, s >= 2)) != NBG_COEF_DECODED)
			return r;
		last = i;
		if (st.over)
			return nbg_coef_reject(o, "stream-overrun", base + nbits,
					       "the core's codes pass its %llu bits",
					       (unsigned long long)nbits);
		if (s < 2)
			continue;
		if (!target) {
			/* the first value is the kernel count; a code takes at
			 * least 3 bits for at most 256 values */
			target = want(ctx, buf->p + start);
			if (target == UINT64_MAX || target % 2 ||
			    target / 2 > (nbits / 3 + 2) * 256)
				return nbg_coef_reject(o, "kernel-count-mismatch", base + st.b.pos,
						       "the core's kernel count does not fit the "
						       "command's kernels or the core's bits");
		}
		if (buf->len - start >= target)
			break;
	}
	for (uint64_t k = start + target; k < buf->len; k++)
		if (buf->p[k])
			return nbg_coef_reject(o, "run-past-end", base + st.b.pos,
					       "the core's codes give more values than its kernels "
					       "hold");
	buf->len = start + target;
	if (st.b.pos != nbits)
		return nbg_coef_reject(o, "bit-count-mismatch", base + st.b.pos,
				       "the core's values end at bit %llu; its stream_size is %llu",
				       (unsigned long long)st.b.pos, (unsigned long long)nbits);
	/* the last two steps' codes flush the pipeline: the encoder's 00x */
	for (unsigned k = 0; k < 4; k++) {
		unsigned c = st.p0[(last + 4 + k) % 6];
		if ((c & 3) || c != st.p0[(last + 4) % 6])
			return nbg_coef_reject(o, "flush-codes", base + st.b.pos,
					       "the codes that flush the core are not the encoder's "
					       "00x");
	}
	return NBG_COEF_DECODED;
}
