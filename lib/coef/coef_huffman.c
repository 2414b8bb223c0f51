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
 * The decoder is table-driven, computed once per stream: a pair's two first
 * parts and the four bits after the next pair's give both codes resolved
 * (second parts read) in one lookup; each code's value field gives its
 * byte, or its run, in another.
 */
#include "coef/coef_internal.h"

/* Symbol of a first part (8 for 010: the second part decides), and which
 * parts carry a free bit. */
static const uint8_t sym_p0[8] = { 0, 1, 8, 3, 0, 1, 4, 2 };
static const uint8_t sym_p1[4] = { 7, 5, 6, 5 };

/* A code's value field: nb bits from the stream, shifted by sh, below them
 * the code's free bit fb. */
typedef struct field {
	unsigned sym, nb, sh, fb;
} field;

static field field_of(const nbg_huff *h, unsigned fc)
{
	unsigned sym = fc < 8 ? sym_p0[fc] : sym_p1[fc - 8];
	int has_free = fc < 8 ? sym <= 1 : sym == 5;
	field f = { sym, h->width[sym], 0, 0 };

	if (has_free && f.nb) {
		f.nb--;
		f.sh = 1;
		f.fb = fc < 8 ? fc >> 2 : (fc - 8) >> 1;
	}
	return f;
}

/* The byte and run of every code and field value, and the resolved pairs. */
static void code_tables(nbg_huff *h, const uint8_t value[8][256])
{
	for (unsigned fc = 0; fc < NBG_HUFF_CODES; fc++) {
		if (fc == 2)
			continue; /* 010: the second part decides */
		field f = field_of(h, fc);
		for (uint32_t raw = 0; raw < (1u << f.nb); raw++) {
			uint32_t v = raw << f.sh | f.fb;
			unsigned r = h->run[f.sym];
			h->byte[fc * 256 + raw] = r ? 0 : value[f.sym][v];
			h->run_less1[fc * 256 + raw] = !r ? 0 : h->table[r == 1 ? (v & 1) : 2 + v];
		}
	}
	for (unsigned i = 0; i < 1024; i++) {
		unsigned p0a = i >> 4 & 7, p0b = i >> 7 & 7, next = i & 15, sec = 0, fa, fb;
		fa = p0a == 2 ? 8 + (next & 3) : p0a;
		sec += p0a == 2 ? 2 : 0;
		fb = p0b == 2 ? 8 + (next >> sec & 3) : p0b;
		unsigned wa = field_of(h, fa).nb, wb = field_of(h, fb).nb;
		h->pair[i] = (nbg_huff_pair){ (uint16_t)(fa * 256), (uint16_t)(fb * 256), (uint8_t)wa,
					      (uint8_t)(wa + wb), (uint8_t)((1u << wa) - 1),
					      (uint8_t)((1u << wb) - 1) };
	}
	for (unsigned p6 = 0; p6 < 64; p6++)
		h->skip[p6] = (uint8_t)(6 + ((p6 & 7) == 2 ? 2 : 0) + ((p6 >> 3) == 2 ? 2 : 0));
}

int nbg_huff_init(nbg_huff *h, const uint8_t *hdr, nbg_coef_out *o)
{
	uint32_t map = le32(hdr + 20);
	unsigned rls = hdr[1];
	uint8_t value[8][256]; /* symbol, field -> byte */

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
			value[i][f] = h->zrl && L == 7 ? (uint8_t)f
					 : (uint8_t)(!(f & 1) ? m : h->zrl ? 0u - m : ~m);
		}
	}
	code_tables(h, (const uint8_t(*)[256])value);
	return NBG_COEF_DECODED;
}

/* After the pair that completed the core's bytes: only zeros beyond them,
 * exactly nbits used, the flush codes the encoder's 00x, all alike (the
 * first parts of the last two steps, p6 and last6). */
static int core_done(const uint8_t *got, uint64_t have, uint64_t target, unsigned p6,
		     unsigned last6, uint64_t pos, uint64_t nbits, uint64_t base, nbg_coef_out *o)
{
	unsigned four = p6 | last6 << 6;

	for (uint64_t k = target; k < have; k++)
		if (got[k])
			return nbg_coef_reject(o, "run-past-end", base + pos,
					       "the core's codes give more bytes than its kernels "
					       "hold");
	if (pos != nbits)
		return nbg_coef_reject(o, "bit-count-mismatch", base + pos,
				       "the core's bytes end at bit %llu; its stream_size is %llu",
				       (unsigned long long)pos, (unsigned long long)nbits);
	for (unsigned k = 0; k < 4; k++) {
		unsigned c = four >> (3 * k) & 7;
		if ((c & 3) || c != (four & 7))
			return nbg_coef_reject(o, "flush-codes", base + pos,
					       "the codes that flush the core are not the encoder's "
					       "00x");
	}
	return NBG_COEF_DECODED;
}

/* The most one step writes: two runs; a run's zeros are written 16 bytes
 * at a time, up to SLACK bytes past them. */
#define STEP_MAX 512u
#define SLACK 16u

/* The decoder's state between steps: where the next step reads, the first
 * parts of the last two pairs, the pair before them resolved (its values
 * come next), where the next byte goes. */
typedef struct hstate {
	uint64_t pos;
	unsigned p6, last6;
	nbg_huff_pair pend;
	uint8_t *w;
} hstate;

/* A code's value: its byte, or (ZRL) its run of zeros. */
static inline __attribute__((always_inline)) uint8_t *put(const nbg_huff *h, uint8_t *w,
							   unsigned t, int zrl)
{
	if (!zrl) {
		*w = h->byte[t];
		return w + 1;
	}
	unsigned n = h->run_less1[t] + 1u;
	if (n <= SLACK) {
		memset(w, 0, SLACK);
		*w = h->byte[t];
	} else {
		memset(w, 0, n);
	}
	return w + n;
}

/* One step: the pair of first parts read, the second parts of the pair
 * before, the values of the pair before that (values 0: the pipeline is
 * filling).  The bits it takes are known before it reads them (the last
 * pair's first parts, the pair before resolved), which keeps the bit
 * position's dependency chain short. */
static inline __attribute__((always_inline)) void step(const nbg_huff *h, const nbg_bits *b,
							hstate *st, int values, int zrl)
{
	nbg_bits at = *b;
	unsigned skip = h->skip[st->last6];
	nbg_huff_pair pend = st->pend;
	uint64_t x;

	at.pos = st->pos;
	st->pos += skip + (values ? pend.wsum : 0);
	x = nbg_bits_peek(&at);
	if (values) {
		uint64_t y = x >> skip;
		st->w = put(h, st->w, pend.ta + ((unsigned)y & pend.ma), zrl);
		st->w = put(h, st->w, pend.tb + ((unsigned)(y >> pend.wa) & pend.mb), zrl);
	}
	st->pend = h->pair[st->last6 << 4 | (x >> 6 & 15)];
	st->p6 = st->last6;
	st->last6 = (unsigned)x & 63;
}

/* Steps until the bytes reach end or the bits run out. */
static inline __attribute__((always_inline)) void steps(const nbg_huff *h, const nbg_bits *b,
							 hstate *st, const uint8_t *end, int zrl)
{
	while (st->w < end && st->pos <= b->nbits)
		step(h, b, st, 1, zrl);
}

int nbg_huff_core(const nbg_huff *h, const uint8_t *p, uint64_t nbits, uint64_t base,
		  nbg_coef_buf *buf, nbg_huff_want_fn want, void *ctx, nbg_coef_out *o)
{
	nbg_bits b = { p, (nbits + 7) / 8, nbits, 0 };
	uint64_t start = buf->len, target;
	hstate st;
	uint8_t *end;

	if (!nbg_coef_buf_reserve(buf, STEP_MAX + SLACK))
		return NBG_COEF_NO_MEMORY;
	memset(&st, 0, sizeof(st));
	st.w = buf->p + start;
	/* steps 0-2: the pipeline fills (the pair before the first has no
	 * 010 codes: its second parts take no bits); step 2 completes the
	 * first two bytes */
	step(h, &b, &st, 0, h->zrl);
	step(h, &b, &st, 0, h->zrl);
	step(h, &b, &st, 1, h->zrl);
	if (st.pos > nbits)
		return nbg_coef_reject(o, "stream-overrun", base + nbits,
				       "the core's codes pass its %llu bits",
				       (unsigned long long)nbits);
	/* a code takes at least 3 bits for at most 256 bytes */
	target = want(ctx, buf->p + start);
	if (target == UINT64_MAX || target > (nbits / 3 + 2) * 256)
		return nbg_coef_reject(o, "kernel-count-mismatch", base + st.pos,
				       "the core's kernel count does not fit the command's kernels "
				       "or the core's bits");
	/* room for every byte and the most a last step can add past them */
	buf->len = (uint64_t)(st.w - buf->p);
	if (!nbg_coef_buf_reserve(buf, target + STEP_MAX + SLACK))
		return NBG_COEF_NO_MEMORY;
	st.w = buf->p + buf->len;
	end = buf->p + start + target;
	if (h->zrl)
		steps(h, &b, &st, end, 1);
	else
		steps(h, &b, &st, end, 0);
	if (st.pos > nbits)
		return nbg_coef_reject(o, "stream-overrun", base + nbits,
				       "the core's codes pass its %llu bits",
				       (unsigned long long)nbits);
	int r = core_done(buf->p + start, (uint64_t)(st.w - buf->p) - start, target, st.p6,
			  st.last6, st.pos, nbits, base, o);
	buf->len = start + target;
	return r;
}
