/*
 * coef_huffman.c - the v8 Huffman coder (Mesa's etnaviv_ml_nn_v8.c:
 * huffman_code, emit_pair, encode_byte, encoder_flush), decoded.
 *
 * Bytes are coded in pairs, pipelined three deep: step s writes the 3-bit
 * codes of bytes 2s and 2s+1, then the 2-bit second parts of the codes of
 * step s-1 whose first part is 010, then the variable-length values of the
 * bytes of step s-2.  A code names one of 8 symbols; the header's symbol map
 * gives each symbol a bit length L.  Codes 00x, 10x and 010 x1 (bits as
 * written, least significant first) carry a free bit x, the lowest bit of
 * the value field.  A value of length L is a sign bit and the L-1 bits
 * below an implicit leading 1 (L 0: the sign alone); negative values are
 * the one's complement (-m in ZRL mode).
 *
 * ZRL mode (run_length_size 2 + 2^k; vendor coding Mesa does not
 * implement, established by decoders that consume exactly stream_size bits
 * on every core): length 0 plus 1 bit b is a run of table[b] + 1 zeros,
 * length 8 plus k bits i a run of table[2 + i] + 1 zeros, length 7 a raw
 * byte.
 *
 * The stream ends with the pipeline flushed: an odd byte count gets a pad
 * byte, then two pairs of codes 00x complete the last values; the core's
 * size in bits is exactly where that ends.
 *
 * The decoder is table-driven: each symbol's field width, whether it is a
 * run, and the byte of every field value are computed once per stream.
 */
#include "coef/coef_internal.h"

/* Symbol of a first part (8 for 010: the second part decides), and which
 * parts carry a free bit. */
static const uint8_t sym_p0[8] = { 0, 1, 8, 3, 0, 1, 4, 2 };
static const uint8_t sym_p1[4] = { 7, 5, 6, 5 };

int nbg_huff_init(nbg_huff *h, const uint8_t *hdr, nbg_coef_out *o)
{
	uint32_t map = le32(hdr + 20);
	unsigned rls = hdr[1];

	memset(h, 0, sizeof(*h));
	if (rls) {
		unsigned x = rls - 2;
		if (rls < 3 || rls > 18 || (x & (x - 1)))
			return nbg_coef_reject(o, "header-invalid", 8,
					       "run_length_size %u is not 0 or 2 + 2^k (k 0 to 4)",
					       rls);
		h->zrl = 1;
		while ((1u << h->k) < x)
			h->k++;
	}
	memcpy(h->table, hdr + 2, 18);
	for (int i = 0; i < 8; i++) {
		unsigned L = map >> (4 * i) & 15, n;
		if (L > 8)
			return nbg_coef_reject(o, "header-invalid", 160 + 4 * i,
					       "symbol %d has bit length %u (at most 8)", i, L);
		h->lengths[i] = (uint8_t)L;
		n = !h->zrl ? (L ? L : 1) : L == 0 ? 1 : L == 8 ? h->k : L == 7 ? 8 : L;
		h->width[i] = (uint8_t)n;
		h->run[i] = h->zrl && (L == 0 || L == 8) ? (L == 0 ? 1 : 2) : 0;
		if (h->run[i])
			continue;
		for (uint32_t f = 0; f < (1u << n); f++) {
			uint32_t m = L ? (1u << (L - 1)) | (f >> 1) : 0;
			h->value[i][f] = h->zrl && L == 7 ? (uint8_t)f
					 : (uint8_t)(!(f & 1) ? m : h->zrl ? 0u - m : ~m);
		}
	}
	return NBG_COEF_DECODED;
}

/* A code, packed for conditional moves: its symbol (bits 0-7, 8 when the
 * second part decides), and how its value field is read: nb bits (8-15)
 * from the stream, shifted by sh (16-23), the free bit fb (24-31) below. */
static uint32_t code_of(const nbg_huff *h, unsigned sym, unsigned free_bit, int has_free)
{
	unsigned nb = h->width[sym], sh = 0, fb = 0;

	if (has_free && nb) {
		nb--;
		sh = 1;
		fb = free_bit;
	}
	return sym | nb << 8 | sh << 16 | fb << 24;
}

/* The codes of every first part (p0) and second part (p1). */
static void code_tables(const nbg_huff *h, uint32_t first[8], uint32_t second[4])
{
	for (unsigned p0 = 0; p0 < 8; p0++)
		first[p0] = sym_p0[p0] == 8 ? 8 : code_of(h, sym_p0[p0], p0 >> 2, sym_p0[p0] <= 1);
	for (unsigned p1 = 0; p1 < 4; p1++)
		second[p1] = code_of(h, sym_p1[p1], p1 >> 1, sym_p1[p1] == 5);
}

/* After the pair that completed the core's bytes: only zeros beyond them,
 * exactly nbits used, the flush codes the encoder's 00x, all alike. */
static int core_done(const uint8_t *got, uint64_t have, uint64_t target, const uint8_t *p0,
		     unsigned last, uint64_t pos, uint64_t nbits, uint64_t base, nbg_coef_out *o)
{
	for (uint64_t k = target; k < have; k++)
		if (got[k])
			return nbg_coef_reject(o, "run-past-end", base + pos,
					       "the core's codes give more bytes than its kernels "
					       "hold");
	if (pos != nbits)
		return nbg_coef_reject(o, "bit-count-mismatch", base + pos,
				       "the core's bytes end at bit %llu; its stream_size is %llu",
				       (unsigned long long)pos, (unsigned long long)nbits);
	/* the last two steps' first parts: ring slots last-2, last-1, last, last+1 */
	for (unsigned k = 0; k < 4; k++) {
		unsigned c = p0[(last + 4 + k) % 6];
		if ((c & 3) || c != p0[(last + 4) % 6])
			return nbg_coef_reject(o, "flush-codes", base + pos,
					       "the codes that flush the core are not the encoder's "
					       "00x");
	}
	return NBG_COEF_DECODED;
}

/* The most one step writes: two runs. */
#define STEP_MAX 512u

/* The decoder's state: the codes of the last three pairs in a ring of six
 * slots (pair s in slots 2s mod 6 and the next), their first parts (for the
 * flush check), where the next byte goes. */
typedef struct hstate {
	const nbg_huff *h;
	uint32_t first[8], second[4];
	uint32_t c[6];
	uint8_t p0[6];
	uint8_t *w;
} hstate;

/* One step, the pair in slot i read, the second parts of slot j, the values
 * of slot k (constants once inlined: the ring stays in registers); returns
 * the bits it used. */
static inline unsigned step(hstate *st, uint64_t v, unsigned i, unsigned j, unsigned k,
			    int seconds, int values)
{
	const nbg_huff *h = st->h;
	unsigned used = 6;

	st->p0[i] = v & 7;
	st->p0[i + 1] = v >> 3 & 7;
	st->c[i] = st->first[v & 7];
	st->c[i + 1] = st->first[v >> 3 & 7];
	v >>= 6;
	for (unsigned t = j; seconds && t < j + 2; t++) {
		unsigned more = st->c[t] == 8 ? 2 : 0;
		st->c[t] = more ? st->second[v & 3] : st->c[t];
		v >>= more;
		used += more;
	}
	for (unsigned t = k; values && t < k + 2; t++) {
		uint32_t c = st->c[t];
		unsigned sym = c & 0xff, nb = c >> 8 & 0xff;
		uint32_t f = (uint32_t)((v & ((1ull << nb) - 1)) << (c >> 16 & 0xff) | c >> 24);
		v >>= nb;
		used += nb;
		if (!h->run[sym]) {
			*st->w++ = h->value[sym][f];
		} else {
			unsigned run = h->table[h->run[sym] == 1 ? (f & 1) : 2 + f] + 1u;
			memset(st->w, 0, run);
			st->w += run;
		}
	}
	return used;
}

int nbg_huff_core(const nbg_huff *h, const uint8_t *p, uint64_t nbits, uint64_t base,
		  nbg_coef_buf *buf, nbg_huff_want_fn want, void *ctx, nbg_coef_out *o)
{
	nbg_bits b = { p, (nbits + 7) / 8, nbits, 0 };
	uint64_t start = buf->len, target;
	hstate st;
	uint8_t *end;
	unsigned last;

	if (!nbg_coef_buf_reserve(buf, STEP_MAX))
		return NBG_COEF_NO_MEMORY;
	memset(&st, 0, sizeof(st));
	st.h = h;
	code_tables(h, st.first, st.second);
	st.w = buf->p + start;
	/* steps 0-2: the pipeline fills; step 2 completes the first two bytes */
	b.pos += step(&st, nbg_bits_peek(&b), 0, 4, 2, 0, 0);
	b.pos += step(&st, nbg_bits_peek(&b), 2, 0, 4, 1, 0);
	b.pos += step(&st, nbg_bits_peek(&b), 4, 2, 0, 1, 1);
	if (b.pos > nbits)
		return nbg_coef_reject(o, "stream-overrun", base + nbits,
				       "the core's codes pass its %llu bits",
				       (unsigned long long)nbits);
	/* a code takes at least 3 bits for at most 256 bytes */
	target = want(ctx, buf->p + start);
	if (target == UINT64_MAX || target > (nbits / 3 + 2) * 256)
		return nbg_coef_reject(o, "kernel-count-mismatch", base + b.pos,
				       "the core's kernel count does not fit the command's kernels "
				       "or the core's bits");
	/* room for every byte and the most a last step can add past them */
	buf->len = (uint64_t)(st.w - buf->p);
	if (!nbg_coef_buf_reserve(buf, target + STEP_MAX))
		return NBG_COEF_NO_MEMORY;
	st.w = buf->p + buf->len;
	end = buf->p + start + target;
	last = 4;
	while (st.w < end && b.pos <= nbits) {
		b.pos += step(&st, nbg_bits_peek(&b), 0, 4, 2, 1, 1);
		last = 0;
		if (st.w >= end || b.pos > nbits)
			break;
		b.pos += step(&st, nbg_bits_peek(&b), 2, 0, 4, 1, 1);
		last = 2;
		if (st.w >= end || b.pos > nbits)
			break;
		b.pos += step(&st, nbg_bits_peek(&b), 4, 2, 0, 1, 1);
		last = 4;
	}
	if (b.pos > nbits)
		return nbg_coef_reject(o, "stream-overrun", base + nbits,
				       "the core's codes pass its %llu bits",
				       (unsigned long long)nbits);
	int r = core_done(buf->p + start, (uint64_t)(st.w - buf->p) - start, target, st.p0, last,
			  b.pos, nbits, base, o);
	buf->len = start + target;
	return r;
}
