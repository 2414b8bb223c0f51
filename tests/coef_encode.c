/*
 * coef_encode.c - kernel streams written the way Mesa etnaviv's encoders
 * write them (coef_encode.h).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "coef_encode.h"
#include "fixture.h"

/* ------------------------------------------------------------- bits */

typedef struct bw {
	uint8_t *p;
	size_t cap;
	uint64_t bits;
} bw;

static void bw_put(bw *b, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++, b->bits++) {
		size_t at = (size_t)(b->bits >> 3);
		if (at >= b->cap) {
			size_t cap = b->cap ? b->cap * 2 : 256;
			b->p = realloc(b->p, cap);
			memset(b->p + b->cap, 0, cap - b->cap);
			b->cap = cap;
		}
		if (i < 64 && (v >> i & 1))
			b->p[at] |= (uint8_t)(1u << (b->bits & 7));
	}
}

/* Zeros to the next multiple of `bits`. */
static void bw_align(bw *b, unsigned bits)
{
	while (b->bits % bits)
		bw_put(b, 0, 1);
}

/* ----------------------------------------------------------- layers */

static uint32_t ksize(const ce_layer *l)
{
	return l->kz * l->ky * l->kx;
}

int32_t ce_stored_bias(const ce_layer *l, int format, uint32_t c)
{
	if (format == CE_TPFC || l->int8)
		return l->bias[c]; /* int8 kernels (input zero point 0): as is */
	uint32_t corr = 0, ks = ksize(l);
	for (uint32_t j = 0; j < ks; j++) {
		int32_t d = (int32_t)l->w[(size_t)c * ks + j] - l->zp;
		corr += (uint32_t)d * (uint32_t)(format == CE_V8A ? 128 - l->in_zp : l->in_zp);
	}
	return (int32_t)(format == CE_V8A ? (uint32_t)l->bias[c] + corr
					  : (uint32_t)l->bias[c] - corr);
}

uint32_t ce_superblock(const ce_layer *l)
{
	uint32_t per_core = (l->out + l->cores - 1) / l->cores;
	return (per_core + l->superblocks - 1) / l->superblocks;
}

/* The passes the kernels take (at most l->superblocks: Mesa's count of
 * passes always leaves the last one kernels). */
static uint32_t passes(const ce_layer *l)
{
	uint32_t per_core = (l->out + l->cores - 1) / l->cores, full = ce_superblock(l);
	return (per_core + full - 1) / full;
}

/* Kernels of core c in superblock sb (Mesa's fill_weights split). */
static uint32_t kernels_in(const ce_layer *l, uint32_t c, uint32_t sb)
{
	uint32_t full = ce_superblock(l), nsb = passes(l);
	if (sb >= nsb)
		return 0;
	if (sb + 1 < nsb)
		return full;
	uint32_t rest = l->out - l->cores * (nsb - 1) * full;
	return rest / l->cores + (c < rest % l->cores);
}

/* v7 and v8b: a channel order over the cores, shuffled from l->seed (0: in order). */
static uint32_t *channel_order(const ce_layer *l)
{
	uint32_t *o = malloc(l->out * sizeof(*o)), s = l->seed * 2654435761u + 1;
	for (uint32_t i = 0; i < l->out; i++)
		o[i] = i;
	for (uint32_t i = l->out; l->seed && i > 1; i--) {
		s = s * 1103515245u + 12345u;
		uint32_t j = (s >> 8) % i, t = o[i - 1];
		o[i - 1] = o[j];
		o[j] = t;
	}
	return o;
}

/* ------------------------------------------------- the v7 writers' order */

/* Value t of kernel slice z in the writer's order: its index within the
 * kernel (Mesa's loops over x in pairs, y up to 3). */
static void spatial(uint32_t k, uint32_t *idx)
{
	uint32_t stride = k > 3 ? 3 : k, t = 0;
	for (uint32_t block = 0; block < (k + 1) / 2; block++) {
		for (uint32_t x = block * 2; x < block * 2 + 2 && x < k; x++)
			for (uint32_t y = 0; y < stride; y++)
				idx[t++] = x * k + y;
		if (stride < k)
			for (uint32_t x = block * 2; x < block * 2 + 2 && x < k; x++)
				for (uint32_t y = stride; y < k; y++)
					idx[t++] = x * k + y;
	}
}

/* The vendor's order beyond 3x3 on targets 0x88 and 0x99 (doc/weights.md,
 * "Kernels beyond 3x3"): rows in pairs; per pair, columns three at a time,
 * each three written row by row. */
static void spatial_chunks(uint32_t ky, uint32_t kx, uint32_t *idx)
{
	uint32_t t = 0;
	for (uint32_t pair = 0; 2 * pair < ky; pair++)
		for (uint32_t col = 0; col < kx; col += 3)
			for (uint32_t row = 2 * pair; row < 2 * pair + 2 && row < ky; row++)
				for (uint32_t x = col; x < col + 3 && x < kx; x++)
					idx[t++] = row * kx + x;
}

/* One value or word of a core's sequence, in the writer's order. */
typedef struct item {
	int kind;       /* 0 value, 1 bias word, 2 offset word */
	uint32_t v;
} item;

typedef struct seq {
	item *it;
	size_t n, cap;
} seq;

static void push(seq *s, int kind, uint32_t v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->it = realloc(s->it, s->cap * sizeof(*s->it));
	}
	s->it[s->n++] = (item){ kind, v };
}

/* The kernels chans[0..n) of a superblock as write_core_* orders them:
 * values, the bias at each kernel's first value, the offset at its last. */
static void superblock(const ce_layer *l, const ce_opts *o, const uint32_t *chans, uint32_t n,
		       seq *s)
{
	int format = o->format;
	unsigned order = o->order;
	uint32_t ks = ksize(l), sp = l->kx * l->ky, idx[225];
	uint32_t bias_done = 0, *first_seen = calloc(n, sizeof(*first_seen));

	(void)bias_done;
	if (o->wide == CE_WIDE_CHUNKS) {
		spatial_chunks(l->ky, l->kx, idx);
	} else if (l->kx == l->ky && o->wide != CE_WIDE_ROWS) {
		spatial(l->kx, idx);
	} else {
		/* [ky][kx]: target 0x7d's kernels beyond 3x3 and its fully
		 * connected commands' kernels one column wide (doc/weights.md) */
		for (uint32_t i = 0; i < sp && i < 225; i++)
			idx[i] = i;
	}
	/* the order of (kernel, index) pairs */
	size_t total = (size_t)n * ks, t = 0;
	uint32_t *kk = malloc(total * sizeof(*kk)), *ix = malloc(total * sizeof(*ix));
	if (order == CE_SIX) {
		uint32_t stride = l->kz < 6 ? l->kz : 6;
		for (uint32_t b = 0; b < (l->kz + stride - 1) / stride; b++)
			for (uint32_t k = 0; k < n; k++)
				for (uint32_t i = 0; i < stride && b * stride + i < l->kz; i++) {
					kk[t] = k;
					ix[t++] = b * stride + i;
				}
	} else if (order == CE_INTERLEAVED) {
		for (uint32_t z = 0; z < l->kz; z++)
			for (uint32_t k = 0; k < n; k++)
				for (uint32_t i = 0; i < sp; i++) {
					kk[t] = k;
					ix[t++] = z * sp + idx[i];
				}
	} else {
		for (uint32_t k = 0; k < n; k++)
			for (uint32_t z = 0; z < l->kz; z++)
				for (uint32_t i = 0; i < sp; i++) {
					kk[t] = k;
					ix[t++] = z * sp + idx[i];
				}
	}
	assert(t == total);
	/* each kernel's last value in this order */
	size_t *last = calloc(n, sizeof(*last));
	for (size_t i = 0; i < total; i++)
		last[kk[i]] = i;
	for (size_t i = 0; i < total; i++) {
		uint32_t k = kk[i], c = chans[k];
		if (!first_seen[k] && format == CE_V8B)
			push(s, 1, (uint32_t)ce_stored_bias(l, format, c));
		push(s, 0, l->w[(size_t)c * ks + ix[i]]);
		if (!first_seen[k] && format == CE_V7)
			push(s, 1, (uint32_t)ce_stored_bias(l, format, c));
		first_seen[k] = 1;
		if (last[k] == i)
			push(s, 2, c * l->plane);
	}
	free(kk);
	free(ix);
	free(last);
	free(first_seen);
}

/* Every core's sequence (v7, v8b): the cores' kernels in superblocks. */
static seq *core_sequences(const ce_layer *l, const ce_opts *o, uint32_t *kpc)
{
	uint32_t *chans = channel_order(l), next = 0;
	seq *s = calloc(l->cores, sizeof(*s));

	/* the channel order is spread over the cores superblock by superblock */
	uint32_t **mine = calloc(l->cores, sizeof(*mine));
	for (uint32_t c = 0; c < l->cores; c++) {
		kpc[c] = 0;
		mine[c] = malloc(l->out * sizeof(uint32_t));
	}
	for (uint32_t sb = 0; sb < passes(l); sb++)
		for (uint32_t c = 0; c < l->cores; c++)
			for (uint32_t k = 0; k < kernels_in(l, c, sb); k++)
				mine[c][kpc[c]++] = chans[next++];
	assert(next == l->out);
	for (uint32_t c = 0; c < l->cores; c++)
		for (uint32_t done = 0, sb = 0; done < kpc[c]; sb++) {
			uint32_t n = kernels_in(l, c, sb);
			superblock(l, o, mine[c] + done, n, &s[c]);
			done += n;
		}
	for (uint32_t c = 0; c < l->cores; c++)
		free(mine[c]);
	free(mine);
	free(chans);
	return s;
}

/* ------------------------------------------------------------------ v7 */

/* wb_stream_write / wb_stream_flush_zeroes: (zero run, value) tokens. */
typedef struct zrl {
	bw *b;
	unsigned bits;
	uint8_t zp;
	unsigned acc;
} zrl;

static void zrl_flush(zrl *z)
{
	if (!z->acc)
		return;
	bw_put(z->b, z->acc - 1, z->bits);
	bw_put(z->b, z->zp, 8);
	z->acc = 0;
}

static void zrl_write(zrl *z, uint8_t v)
{
	unsigned max = (1u << z->bits) - 1;
	if (!z->bits) {
		bw_put(z->b, v, 8);
	} else if (z->acc == max) {
		bw_put(z->b, max, z->bits);
		bw_put(z->b, v, 8);
		z->acc = 0;
	} else if (v == z->zp) {
		z->acc++;
	} else {
		bw_put(z->b, z->acc, z->bits);
		bw_put(z->b, v, 8);
		z->acc = 0;
	}
}

static uint8_t *encode_v7(const ce_layer *l, const ce_opts *o, size_t *size)
{
	uint32_t kpc[64];
	seq *s = core_sequences(l, o, kpc);
	bw out = { 0 };

	bw_put(&out, 0, 64 * 8);
	for (uint32_t c = 0; c < l->cores; c++) {
		bw b = { 0 };
		zrl z = { &b, o->zrl_bits, l->zp, 0 };
		bw_put(&b, o->zrl_bits, 8);
		bw_put(&b, kpc[c], 16);
		for (size_t i = 0; i < s[c].n; i++) {
			if (s[c].it[i].kind == 0) {
				zrl_write(&z, (uint8_t)s[c].it[i].v);
				continue;
			}
			zrl_flush(&z);
			bw_put(&b, s[c].it[i].v, 32);
		}
		zrl_flush(&z);
		bw_align(&b, 32);
		bw_align(&b, 512);
		uint32_t bytes = (uint32_t)(b.bits / 8);
		for (int k = 0; k < 4; k++)
			out.p[4 * c + k] = (uint8_t)(bytes >> (8 * k));
		for (uint64_t i = 0; i < b.bits; i++)
			bw_put(&out, b.p[i / 8] >> (i % 8) & 1, 1);
		free(b.p);
		free(s[c].it);
	}
	free(s);
	*size = (size_t)(out.bits / 8);
	return out.p;
}

/* ------------------------------------------------------------------ v8 */

/* One byte's code: the 3-bit first part, the optional 2-bit second part,
 * the value bits (huffman_code). */
typedef struct hcode {
	unsigned p0, p1, p1len, part2, part2len;
} hcode;

typedef struct henc {
	bw *b;
	hcode ring[6];
	size_t n;
	int zrl;
	unsigned k;
	uint8_t table[18];
	int sym_of_len[9];         /* -1: no symbol for that length */
} henc;

static hcode huffman(unsigned sym, unsigned value, unsigned bits)
{
	switch (sym) {
	case 0: return (hcode){ 0 | (value & 1) << 2, 0, 0, value >> 1, bits - 1 };
	case 1: return (hcode){ 1 | (value & 1) << 2, 0, 0, value >> 1, bits - 1 };
	case 2: return (hcode){ 7, 0, 0, value, bits };
	case 3: return (hcode){ 3, 0, 0, value, bits };
	case 4: return (hcode){ 6, 0, 0, value, bits };
	case 5: return (hcode){ 2, 1 | (value & 1) << 1, 2, value >> 1, bits - 1 };
	case 6: return (hcode){ 2, 2, 2, value, bits };
	default: return (hcode){ 2, 0, 2, value, bits };
	}
}

static void emit_pair(henc *e)
{
	hcode *c = &e->ring[(e->n - 2) % 6];
	bw_put(e->b, c[0].p0, 3);
	bw_put(e->b, c[1].p0, 3);
	if (e->n > 2) {
		c = &e->ring[(e->n - 4) % 6];
		bw_put(e->b, c[0].p1, c[0].p1len);
		bw_put(e->b, c[1].p1, c[1].p1len);
	}
	if (e->n > 4) {
		c = &e->ring[(e->n - 6) % 6];
		bw_put(e->b, c[0].part2, c[0].part2len);
		bw_put(e->b, c[1].part2, c[1].part2len);
	}
}

static void put_code(henc *e, hcode c)
{
	e->ring[e->n++ % 6] = c;
	if (e->n % 2 == 0)
		emit_pair(e);
}

static unsigned bitlen(unsigned v)
{
	unsigned n = 0;
	while (v >> n)
		n++;
	return n;
}

/* A byte that is not a run (encode_byte). */
static void put_byte(henc *e, uint8_t byte)
{
	unsigned sign = byte >> 7, m, L;
	if (!e->zrl) {
		m = sign ? (uint8_t)~byte : byte;
		L = bitlen(m);
		unsigned field = (m & ~(1u << (L ? L - 1 : 0)) & 0xff) << 1 | sign;
		put_code(e, huffman((unsigned)e->sym_of_len[L], L ? field : sign, L ? L : 1));
		return;
	}
	m = sign ? (uint8_t)(0u - byte) : byte;
	L = bitlen(m);
	if (byte == 0 || byte == 0x80 || L >= 7 || e->sym_of_len[L] < 0) {
		put_code(e, huffman((unsigned)e->sym_of_len[7], byte, 8)); /* raw */
		return;
	}
	put_code(e, huffman((unsigned)e->sym_of_len[L], (m & ~(1u << (L - 1))) << 1 | sign, L));
}

/* A run of zeros: the longest table runs first; what no run fits, raw. */
static void put_zeros(henc *e, size_t n)
{
	while (n) {
		int best = -1;
		for (int i = 0; i < 2 + (1 << e->k); i++)
			if (e->table[i] + 1u <= n && (best < 0 || e->table[i] > e->table[best]))
				best = i;
		if (best < 0) {
			put_byte(e, 0);
			n--;
			continue;
		}
		if (best < 2)
			put_code(e, huffman((unsigned)e->sym_of_len[0], (unsigned)best, 1));
		else
			put_code(e, huffman((unsigned)e->sym_of_len[8], (unsigned)best - 2, e->k));
		n -= e->table[best] + 1u;
	}
}

/* encoder_flush: a pad byte for an odd count, two pairs of 00x. */
static void h_flush(henc *e)
{
	unsigned flag = e->n & 1;
	if (flag)
		put_byte(e, 0);
	hcode z = { flag << 2, 0, 0, 0, 0 };
	for (int i = 0; i < 4; i++)
		put_code(e, z);
}

/* The symbol map: a permutation of bit lengths over the 8 symbols (ZRL: 0,
 * 7 and 8 always, one of 1..6 left out). */
static uint32_t symbol_map(const ce_opts *o, henc *e)
{
	unsigned len[8], n = 0, drop = 1 + o->map_seed % 6;
	uint32_t s = o->map_seed * 747796405u + 1, map = 0;
	for (unsigned L = 0; L <= 8; L++)
		if (o->zrl ? L != drop : L < 8)
			len[n++] = L;
	for (unsigned i = 8; o->map_seed && i > 1; i--) {
		s = s * 1103515245u + 12345u;
		unsigned j = (s >> 8) % i, t = len[i - 1];
		len[i - 1] = len[j];
		len[j] = t;
	}
	for (int L = 0; L < 9; L++)
		e->sym_of_len[L] = -1;
	for (unsigned i = 0; i < 8; i++) {
		e->sym_of_len[len[i]] = (int)i;
		map |= len[i] << (4 * i);
	}
	return map;
}

/* One core's bytes coded; returns the bits (stream_size); zeros follow to
 * a multiple of `align` bits. */
static uint64_t code_core_aligned(const ce_opts *o, henc *e, const uint8_t *bytes, size_t n,
				  unsigned align)
{
	uint64_t start = e->b->bits;
	uint8_t prev = 0;
	e->n = 0;
	for (size_t i = 0; i < n;) {
		/* precode, then avg_bias (the decoder adds avg_bias back, then sums) */
		uint8_t v = (uint8_t)((o->precode ? (uint8_t)(bytes[i] - prev) : bytes[i]) - o->avg_bias);
		prev = bytes[i];
		if (e->zrl && v == 0 && i + 1 < n) {
			size_t j = i;
			uint8_t p = prev;
			/* the zeros that follow, as the coder sees them */
			while (j < n && (uint8_t)((o->precode ? (uint8_t)(bytes[j] - (j ? bytes[j - 1] : 0))
							     : bytes[j]) - o->avg_bias) == 0)
				j++;
			(void)p;
			put_zeros(e, j - i);
			prev = bytes[j - 1];
			i = j;
			continue;
		}
		put_byte(e, v);
		i++;
	}
	h_flush(e);
	uint64_t bits = e->b->bits - start;
	bw_align(e->b, align);
	return bits;
}

static uint64_t code_core(const ce_opts *o, henc *e, const uint8_t *bytes, size_t n)
{
	return code_core_aligned(o, e, bytes, n, 512);
}

/* v8a: a core's bytes: its kernel count, then (w - zp) in blocks of 9
 * across each superblock's kernels (encode_superblock, fill_weights). */
static size_t v8a_core(const ce_layer *l, uint32_t c, uint32_t *next, uint8_t *out)
{
	uint32_t ks = ksize(l), full = ce_superblock(l), blk = l->depthwise && ks > 9 ? ks : 9;
	uint32_t blocks = (ks + blk - 1) / blk, kpc = 0;
	size_t n = 2;

	for (uint32_t sb = 0; sb < passes(l); sb++)
		kpc += kernels_in(l, c, sb);
	out[0] = (uint8_t)kpc;
	out[1] = (uint8_t)(kpc >> 8);
	for (uint32_t sb = 0; sb < passes(l); sb++) {
		uint32_t kis = kernels_in(l, c, sb), first;
		first = l->depthwise ? l->cores - c - 1 + l->cores * full * sb : next[sb];
		for (uint32_t b = 0; b < blocks; b++)
			for (uint32_t k = 0; k < kis; k++) {
				uint32_t oc = l->depthwise ? first + k * l->cores : first + k;
				if (l->depthwise && l->out > 1 && oc >= l->out - l->out % l->cores)
					oc -= l->cores - l->out % l->cores;
				for (uint32_t i = 0; i < blk; i++) {
					uint32_t at = b * blk + i;
					out[n++] = at < ks ? (uint8_t)(l->w[(size_t)oc * ks + at] - l->zp) : 0;
				}
				if (l->depthwise && blk % 9)
					for (uint32_t i = 0; i < 9 - blk % 9; i++)
						out[n++] = 0;
			}
		next[sb] += kis;
	}
	return n;
}

/* v8b: a core's bytes: its kernel count, then the v7 layout as bytes. */
static size_t v8b_core(const seq *s, uint32_t kpc, uint8_t *out)
{
	size_t n = 2;
	out[0] = (uint8_t)kpc;
	out[1] = (uint8_t)(kpc >> 8);
	for (size_t i = 0; i < s->n; i++) {
		if (s->it[i].kind == 0) {
			out[n++] = (uint8_t)s->it[i].v;
			continue;
		}
		for (int k = 0; k < 4; k++)
			out[n++] = (uint8_t)(s->it[i].v >> (8 * k));
	}
	return n;
}

static const uint8_t v8_runs[6] = { 0, 2, 3, 7, 15, 63 };

/* The first 28 bytes of the v8 header: flags and version, run lengths,
 * the symbol map, avg_bias, a reserved half word. */
static void v8_header(const ce_opts *o, henc *e, bw *out)
{
	uint32_t map;

	e->zrl = o->zrl;
	e->k = 2;
	memcpy(e->table, v8_runs, sizeof(v8_runs));
	map = symbol_map(o, e);
	bw_put(out, 0x10 | (o->precode ? 1 : 0), 8);
	bw_put(out, o->zrl ? 2 + (1u << e->k) : 0, 8);
	for (int i = 0; i < 18; i++)
		bw_put(out, o->zrl && i < 6 ? v8_runs[i] : 0, 8);
	bw_put(out, map, 32);
	bw_put(out, o->avg_bias, 16);
	bw_put(out, 0, 16);
}

/* A TP fully connected layer: the 28-byte header, a 14-bit chunk size per
 * input, the biases at the next 64-byte boundary, then per input its
 * weight for every output coded as one core, the chunks at the next
 * 64-byte boundary after the biases, each packed after the previous one or
 * at a 64-byte boundary. */
/* The raw layout (0x7d, 0x99, 0xa1): a 5-bit size per input in 64-byte
 * units, the biases, then per input 4 zero bits and its code for every
 * output, zeros to the chunk's 64-byte end. */
static uint8_t *encode_tpfc_raw(const ce_layer *l, size_t *size)
{
	uint64_t unit = (4 + 8ull * l->out + 511) / 512;
	bw out = { 0 };

	for (uint32_t i = 0; i < l->kz; i++)
		bw_put(&out, unit, 5);
	bw_align(&out, 512);
	for (uint32_t k = 0; k < l->out; k++)
		bw_put(&out, (uint32_t)l->bias[k], 32);
	bw_align(&out, 512);
	for (uint32_t i = 0; i < l->kz; i++) {
		bw_put(&out, 0, 4);
		for (uint32_t k = 0; k < l->out; k++)
			bw_put(&out, l->w[(size_t)k * l->kz + i], 8);
		bw_align(&out, 512);
	}
	*size = (size_t)(out.bits / 8);
	return out.p;
}

static uint8_t *encode_tpfc(const ce_layer *l, const ce_opts *o, size_t *size)
{
	if (o->tpfc_raw)
		return encode_tpfc_raw(l, size);
	uint8_t *col = malloc(l->out + 1);
	uint64_t *bits = calloc(l->kz, sizeof(uint64_t));
	bw out = { 0 }, chunks = { 0 };
	henc e;

	memset(&e, 0, sizeof(e));
	v8_header(o, &e, &out);
	e.b = &chunks;
	for (uint32_t i = 0; i < l->kz; i++) {
		for (uint32_t k = 0; k < l->out; k++)
			col[k] = l->w[(size_t)k * l->kz + i];
		if (i && o->chunk_align64)
			bw_align(&chunks, 512);
		bits[i] = code_core_aligned(o, &e, col, l->out, 8);
	}
	for (uint32_t i = 0; i < l->kz; i++)
		bw_put(&out, bits[i], 14);
	bw_align(&out, 512);
	for (uint32_t k = 0; k < l->out; k++)
		bw_put(&out, (uint32_t)l->bias[k], 32);
	bw_align(&out, 512);
	for (uint64_t b = 0; b < chunks.bits; b += 8)
		bw_put(&out, chunks.p[b / 8], 8);
	free(chunks.p);
	free(bits);
	free(col);
	*size = (size_t)(out.bits / 8);
	return out.p;
}

static uint8_t *encode_v8(const ce_layer *l, const ce_opts *o, size_t *size)
{
	uint32_t kpc[64], next[256], full = ce_superblock(l);
	seq *s = o->format == CE_V8B ? core_sequences(l, o, kpc) : NULL;
	size_t cap = 2 + (size_t)l->out * (ksize(l) + 8 + 9);
	uint8_t *bytes = malloc(cap);
	bw out = { 0 };
	henc e;

	memset(&e, 0, sizeof(e));
	e.b = &out;
	v8_header(o, &e, &out);
	bw_put(&out, 0, 9 * 32);
	for (uint32_t sb = 0; sb < passes(l) && sb < 256; sb++)
		next[sb] = sb * full * l->cores;
	for (uint32_t c = 0; c < l->cores; c++) {
		size_t n = s ? v8b_core(&s[c], kpc[c], bytes) : v8a_core(l, c, next, bytes);
		uint64_t bits = code_core(o, &e, bytes, n);
		for (int k = 0; k < 4; k++)
			out.p[28 + 4 * c + k] = (uint8_t)(bits >> (8 * k));
		if (s)
			free(s[c].it);
	}
	free(s);
	free(bytes);
	for (uint32_t c = 0; o->format == CE_V8A && c < l->out; c++) {
		bw_put(&out, (uint32_t)ce_stored_bias(l, CE_V8A, c), 32);
		if (l->scale) {
			uint32_t f;
			memcpy(&f, &l->scale[c], 4);
			bw_put(&out, f, 32);
		}
	}
	bw_align(&out, 8);
	*size = (size_t)(out.bits / 8);
	return out.p;
}

uint8_t *ce_encode(const ce_layer *l, const ce_opts *o, size_t *size)
{
	if (o->format == CE_TPFC)
		return encode_tpfc(l, o, size);
	assert(l->cores >= 1 && l->cores <= 9 && l->superblocks >= 1);
	return o->format == CE_V7 ? encode_v7(l, o, size) : encode_v8(l, o, size);
}

/* ------------------------------------------------------------ a file */

static void put32le(uint8_t *p, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		p[k] = (uint8_t)(v >> (8 * k));
}

static uint32_t get32le(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

void ce_put_bits(uint8_t *cmd, unsigned w, unsigned lo, unsigned n, uint32_t v)
{
	uint32_t x = get32le(cmd + 4 * w), mask = ((n >= 32 ? 0u : 1u << n) - 1u) << lo;
	put32le(cmd + 4 * w, (x & ~mask) | ((v << lo) & mask));
}

/* The fixture's v2 file with its NN command describing l, its kernel patch
 * naming COEF_DATA_TABLE entry 1 and that entry holding the stream. */
fx_spec *ce_nbg_spec(const ce_layer *l, const uint8_t *stream, size_t n)
{
	fx_spec *s = fx_default();
	uint8_t nn[384] = { 0 }, pat[5 * 28];
	fx_section *patch = fx_find(s, 10), *coef;
	uint32_t table[4] = { 0, 500, 512, (uint32_t)n };

	ce_put_bits(nn, 0, 2, 4, l->kx);
	if (l->ky != l->kx)
		ce_put_bits(nn, 8, 12, 4, l->ky); /* kernel_y_size */
	ce_put_bits(nn, 0, 6, 14, l->kz);
	ce_put_bits(nn, 0, 20, 7, ce_superblock(l));
	ce_put_bits(nn, 1, 19, 13, 10);              /* in_image_y_size */
	ce_put_bits(nn, 3, 6, 13, l->plane);         /* out x */
	ce_put_bits(nn, 3, 19, 13, 1);               /* out y */
	ce_put_bits(nn, 4, 0, 14, l->out);
	ce_put_bits(nn, 15, 2, 16, (uint32_t)l->in_zp);
	ce_put_bits(nn, 18, 26, 1, l->scale != NULL);
	ce_put_bits(nn, 22, 0, 8, l->zp);
	ce_put_bits(nn, 22, 17, 1, (uint32_t)l->depthwise);
	if (l->int8)
		ce_put_bits(nn, 1, 0, 2, 2); /* kernel_data_type: int8 */
	fx_set(s, 7, nn, sizeof(nn), 0, 192);
	/* patch 1 (the NN operation's first): kernel_address from entry 1 */
	memcpy(pat, patch->data, sizeof(pat));
	put32le(pat + 28, 1);      /* COMMAND */
	put32le(pat + 32, 20);     /* word 5 */
	put32le(pat + 36, 5);      /* MISC_DYNA_GENERIC */
	put32le(pat + 40, 1);      /* entry 1 */
	put32le(pat + 44, 0);
	put32le(pat + 48, 1);      /* transformed: address >> 6 */
	fx_set(s, 10, pat, sizeof(pat), 0, 28);
	for (int i = 0; i < 4; i++)
		put32le((uint8_t *)&table[i], table[i]);
	fx_set(s, 23, table, sizeof(table), 0, 8);
	coef = fx_find(s, 24);
	fx_resize(coef, 512 + n + 64);
	memcpy(coef->data + 512, stream, n);
	memset(coef->data + 512 + n, 0xEE, 64); /* not the entry's: opaque bytes after it */
	return s;
}

uint8_t *ce_nbg_file(const ce_layer *l, const uint8_t *stream, size_t n, uint32_t target,
		     size_t *size)
{
	fx_spec *s = ce_nbg_spec(l, stream, n);
	uint8_t *b = fx_build(s, size);

	fx_free(s);
	put32le(b + 8, target); /* the header's target (outside the file checksum) */
	return b;
}


/* ------------------------------------------------ 16-bit v8a streams */

/* A value's code: symbol L (the map gives symbol i length i), its p0 and,
 * for p0 2, p1 (doc/weights.md, "16-bit kernels"). */
static void code16(int16_t v, unsigned *p0, int *p1, unsigned *L, uint32_t *field,
		   unsigned *nfield)
{
	int hi = v >> 8, sign = hi < 0;
	unsigned m = (unsigned)(sign ? ~hi : hi), lo = (uint16_t)v & 0xffu;

	*L = 0;
	if (hi != 0 && hi != -1)
		while ((1u << *L) <= m)
			(*L)++;
	/* symbols 0, 1 and 5 carry the sign in the code (their free bit) */
	static const unsigned p0_of[8] = { 0, 1, 7, 3, 6, 2, 2, 2 };
	static const int p1_of[8] = { -1, -1, -1, -1, -1, 1, 2, 0 };
	int free_bit = *L == 0 || *L == 1 || *L == 5;
	*p0 = p0_of[*L] | (*L <= 1 ? (unsigned)sign << 2 : 0);
	*p1 = p1_of[*L] < 0 ? -1 : p1_of[*L] | (*L == 5 ? sign << 1 : 0);
	uint32_t below = *L ? m & ((1u << (*L - 1)) - 1) : 0;
	if (free_bit) {
		*field = lo | below << 8;
		*nfield = 8 + (*L ? *L - 1 : 0);
	} else {
		*field = lo | (uint32_t)sign << 8 | below << 9;
		*nfield = 9 + (*L ? *L - 1 : 0);
	}
}

/* One core's values, coded in pairs, the pipeline three deep, flushed. */
static void core16(bw *b, const int16_t *v, size_t n)
{
	size_t pairs = (n + 1) / 2;
	unsigned p0[2][2] = { { 0 } }, nf[3][2] = { { 0 } };
	int p1[2][2];
	uint32_t f[3][2] = { { 0 } };

	for (size_t s = 0; s < pairs + 2; s++) {
		unsigned L;
		int q1[2] = { -1, -1 };
		unsigned q0[2] = { 0, 0 };
		for (int k = 0; k < 2; k++) {
			size_t i = 2 * s + (size_t)k;
			f[2][k] = 0;
			nf[2][k] = 0;
			if (s < pairs)
				code16(i < n ? v[i] : 0, &q0[k], &q1[k], &L, &f[2][k], &nf[2][k]);
			bw_put(b, q0[k], 3);
		}
		for (int k = 0; s >= 1 && k < 2; k++)
			if (p1[1][k] >= 0)
				bw_put(b, (uint64_t)p1[1][k], 2);
		for (int k = 0; s >= 2 && k < 2; k++)
			bw_put(b, f[0][k], nf[0][k]);
		for (int k = 0; k < 2; k++) {
			f[0][k] = f[1][k];
			nf[0][k] = nf[1][k];
			f[1][k] = f[2][k];
			nf[1][k] = nf[2][k];
			p1[1][k] = q1[k];
			p0[1][k] = q0[k];
		}
	}
	(void)p0;
}

uint8_t *ce_encode16(const ce16_layer *l, size_t *size)
{
	uint32_t ks = l->kz * l->ky * l->kx, per = (ks + 8) / 9 * 9, S = l->superblock;
	size_t n = 1 + (size_t)l->out * per, k = 0;
	int16_t *v = calloc(n, sizeof(*v));
	bw core = { 0 };

	assert(v && S >= 1);
	v[k++] = (int16_t)l->out;
	for (uint32_t first = 0; first < l->out; first += S) {
		uint32_t m = l->out - first < S ? l->out - first : S;
		for (uint32_t blk = 0; blk < per / 9; blk++)
			for (uint32_t kk = 0; kk < m; kk++)
				for (uint32_t j = blk * 9; j < blk * 9 + 9; j++, k++)
					v[k] = j < ks ? l->w[(size_t)(first + kk) * ks + j] : 0;
	}
	core16(&core, v, n);
	uint64_t nbits = core.bits;
	size_t region = (size_t)(nbits + 511) / 512 * 64, total = 64 + region + 6u * l->out + 64;
	uint8_t *p = calloc(total, 1);
	assert(p);
	p[0] = 0x12; /* version 1, bit16 */
	p[20] = 0x10, p[21] = 0x32, p[22] = 0x54, p[23] = 0x76; /* symbol i: length i */
	for (int i = 0; i < 4; i++)
		p[28 + i] = (uint8_t)(nbits >> (8 * i));
	memcpy(p + 64, core.p, (size_t)(nbits + 7) / 8);
	for (uint32_t c = 0; c < l->out; c++)
		for (int i = 0; i < 6; i++)
			p[64 + region + 6 * c + (size_t)i] = (uint8_t)((uint64_t)l->bias[c] >> (8 * i));
	free(core.p);
	free(v);
	*size = total;
	return p;
}
