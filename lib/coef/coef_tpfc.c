/*
 * coef_tpfc.c - the coefficient stream of a TP fully connected layer: a TP
 * command that reads it through alu_load_pwl_lut_address (no LUT load, no
 * piecewise-linear unit) over a 1x1xZ input.  No open driver writes this
 * stream; its layout is established from the data (doc/weights.md, "TP
 * fully connected streams"):
 *
 *   the first 28 bytes of the v8 header (flags and version, run-length
 *     table, symbol map, avg_bias), nothing after them;
 *   at byte 28, one 14-bit field per input channel (LSB first): the bit
 *     size of that channel's chunk; zero bits to the next 64-byte boundary;
 *   one int32 bias per output of the operation; zero bytes to the next
 *     64-byte boundary;
 *   per input channel, in order, a chunk: the v8 Huffman coder
 *     (coef_huffman.c) carrying that channel's weight for every output, in
 *     output order, each byte the code minus avg_bias (with precode: the
 *     difference from the chunk's previous code, the first from 0); the chunk ends
 *     exactly at its size with the encoder's flush and zero bits to the next
 *     byte; the next chunk starts there, or at the next 64-byte boundary
 *     (zero bytes between) in the files of some targets;
 *   zero bytes to the end of the entry.
 *
 * On the v7 and v8b targets the chunks are raw codes instead (decode_raw
 * below).
 *
 * The weights come out [output][input] (a 1x1 kernel per output), the
 * bias as stored (the layers of the corpus all have input zero point 0,
 * where no correction applies).
 */
#include <stdlib.h>

#include "coef/coef_internal.h"

#define TPFC_TABLE 28u   /* where the size table starts */
#define TPFC_SIZE_BITS 14u

static uint64_t align64(uint64_t x)
{
	return (x + 63) / 64 * 64;
}

static uint64_t want_out(void *ctx, const uint8_t *got)
{
	(void)got;
	return *(const uint32_t *)ctx;
}

/* Bytes [from, to) of p are zero; else rejects with id. */
static int zeros(const uint8_t *p, uint64_t from, uint64_t to, const char *id, const char *what,
		 nbg_coef_out *o)
{
	for (uint64_t i = from; i < to; i++)
		if (p[i])
			return nbg_coef_reject(o, id, i * 8, "byte %llu (%s) is not zero",
					       (unsigned long long)i, what);
	return NBG_COEF_DECODED;
}

/* What both layouts share before the chunks: the size table's nbits from
 * byte `at` then zero bits to bias_at, the biases, zero bytes to `chunks`. */
static int prelude(const uint8_t *p, uint64_t at, uint64_t nbits, uint64_t bias_at, uint32_t nout,
		   uint64_t chunks, nbg_coef_out *o)
{
	uint64_t table_end = at + (nbits + 7) / 8;
	int r;

	if (nbits % 8 && p[at + nbits / 8] >> (nbits % 8))
		return nbg_coef_reject(o, "nonzero-padding", at * 8 + nbits,
				       "the bits after the size table are not zero");
	if ((r = zeros(p, table_end, bias_at, "nonzero-padding", "after the size table", o)) !=
	    NBG_COEF_DECODED)
		return r;
	return zeros(p, bias_at + 4ull * nout, chunks, "nonzero-padding", "after the biases", o);
}

/* The result's arrays: codes [nout][nin] from chunk-major bytes (NULL: the
 * caller fills o->codes), the biases as stored. */
static int finish(const uint8_t *p, uint64_t bias_at, uint32_t nin, uint32_t nout,
		  const uint8_t *by_input, unsigned order, nbg_coef_out *o)
{
	o->codes = malloc((size_t)nin * nout);
	o->bias_stored = malloc(4ull * nout);
	o->bias = malloc(4ull * nout);
	if (!o->codes || !o->bias_stored || !o->bias) {
		nbg_coef_out_free(o);
		return NBG_COEF_NO_MEMORY;
	}
	for (uint32_t k = 0; k < nout; k++) {
		o->bias_stored[k] = o->bias[k] = (int32_t)le32(p + bias_at + 4ull * k);
		for (uint32_t i = 0; by_input && i < nin; i++)
			o->codes[(size_t)k * nin + i] = by_input[(size_t)i * nout + k];
	}
	o->format = NBG_WEIGHTS_FORMAT_TPFC;
	o->order = order;
	o->cores = 1;
	return NBG_COEF_DECODED;
}

static int decode_aligned(const uint8_t *p, size_t n, const nbg_coef_shape *s, uint64_t align,
			  nbg_coef_out *o)
{
	uint32_t nin = s->kz, nout = s->out;
	uint64_t table_end, bias_at, pos, values;
	nbg_coef_buf buf = { 0 };
	nbg_huff h;
	uint8_t avg;
	int precode, r;

	memset(o, 0, sizeof(*o));
	o->bit = UINT64_MAX;
	if (!nin || !nout || s->kx != 1 || s->ky != 1 || nin > 0xFFFF || nout > 0xFFFF)
		return nbg_coef_reject(o, "descriptor-invalid", UINT64_MAX,
				       "a fully connected layer of %u inputs and %u outputs: a size "
				       "of 0 or beyond the command's fields", nin, nout);
	/* a chunk takes at least 8 bits for its outputs' bytes (codes of 3 bits
	 * or more, a pair at least 6 bits for 2 bytes: 3 bits a byte) */
	values = (uint64_t)nin * nout;
	if (values > (uint64_t)n * 8 / 3 + (uint64_t)nin * 2)
		return nbg_coef_reject(o, "counts-exceed-entry", UINT64_MAX,
				       "%u inputs x %u outputs cannot fit in a %zu-byte stream", nin,
				       nout, n);
	if ((r = nbg_coef_v8_header(p, n, 0, &precode, &avg, &h, o)) != NBG_COEF_DECODED)
		return r;
	table_end = TPFC_TABLE + ((uint64_t)nin * TPFC_SIZE_BITS + 7) / 8;
	bias_at = align64(table_end);
	pos = align64(bias_at + 4ull * nout);
	if (pos > n)
		return nbg_coef_reject(o, "stream-too-short", (uint64_t)n * 8,
				       "the size table of %u inputs and %u biases pass the %zu-byte "
				       "entry", nin, nout, n);
	if ((r = prelude(p, TPFC_TABLE, (uint64_t)nin * TPFC_SIZE_BITS, bias_at, nout, pos, o)) !=
	    NBG_COEF_DECODED)
		return r;
	if (!nbg_coef_buf_reserve(&buf, values))
		return NBG_COEF_NO_MEMORY;
	nbg_bits tbl = { p + TPFC_TABLE, table_end - TPFC_TABLE, (uint64_t)nin * TPFC_SIZE_BITS, 0 };
	for (uint32_t i = 0; i < nin; i++) {
		uint32_t bits = 0;
		(void)nbg_bits_get(&tbl, TPFC_SIZE_BITS, &bits);
		uint64_t bytes = (bits + 7) / 8, start = buf.len;
		if (!bits || bytes > n - pos) {
			free(buf.p);
			return nbg_coef_reject(o, "core-outside-entry", TPFC_TABLE * 8ull + 14ull * i,
					       "input %u's chunk of %u bits at byte %llu %s", i, bits,
					       (unsigned long long)pos,
					       bits ? "passes the end of the entry" : "is empty");
		}
		r = nbg_huff_core(&h, p + pos, bits, pos * 8, &buf, want_out, &nout, o);
		if (r != NBG_COEF_DECODED) {
			free(buf.p);
			return r;
		}
		if (bits % 8 && p[pos + bits / 8] >> (bits % 8)) {
			free(buf.p);
			return nbg_coef_reject(o, "nonzero-padding", pos * 8 + bits,
					       "the bits after input %u's chunk are not zero", i);
		}
		/* precode: differences mod 256 within the chunk, from 0 (the
		 * header check leaves avg_bias 0 with it) */
		uint8_t prev = 0;
		for (uint64_t j = start; precode && j < buf.len; j++)
			buf.p[j] = prev = (uint8_t)(buf.p[j] + prev);
		if (!precode)
			nbg_coef_add_bytes(buf.p + start, buf.len - start, avg);
		pos += bytes;
		if (i + 1 < nin && pos % align) {
			uint64_t next = (pos + align - 1) / align * align;
			if (next > n || (r = zeros(p, pos, next, "nonzero-padding",
						   "between two chunks", o)) != NBG_COEF_DECODED) {
				free(buf.p);
				return next > n ? nbg_coef_reject(o, "core-outside-entry", pos * 8,
								  "input %u's chunk passes the end of "
								  "the entry", i + 1)
						: r;
			}
			pos = next;
		}
	}
	if ((r = zeros(p, pos, n, "nonzero-tail", "after the last chunk", o)) != NBG_COEF_DECODED) {
		free(buf.p);
		return r;
	}
	r = finish(p, bias_at, nin, nout, buf.p, NBG_COEF_ORDER_INPUTS, o);
	free(buf.p);
	return r;
}

/*
 * The layout of the v7 and v8b targets (0x7d, 0x99, 0xa1): one 5-bit field
 * per input channel (LSB first), its chunk's size in 64-byte units; zero
 * bits to the next 64-byte boundary; the biases as above; then per input
 * channel a chunk of that size: 4 bits 0, that channel's uint8 code for
 * every output in output order, zero bits to the chunk's end, which is the
 * first 64-byte boundary after them; zero bytes to the entry's end.
 */
static int decode_raw(const uint8_t *p, size_t n, const nbg_coef_shape *s, nbg_coef_out *o)
{
	uint32_t nin = s->kz, nout = s->out;
	uint64_t table_end = ((uint64_t)nin * 5 + 7) / 8, bias_at = align64(table_end);
	uint64_t pos = align64(bias_at + 4ull * nout), unit = align64((4 + 8ull * nout + 7) / 8);
	int r;

	memset(o, 0, sizeof(o[0]));
	o->bit = UINT64_MAX;
	if (pos > n || (uint64_t)nin * unit > n - pos)
		return nbg_coef_reject(o, "stream-too-short", (uint64_t)n * 8,
				       "%u chunks of %llu bytes after the size table and %u biases "
				       "pass the %zu-byte entry", nin, (unsigned long long)unit, nout, n);
	if ((r = prelude(p, 0, (uint64_t)nin * 5, bias_at, nout, pos, o)) != NBG_COEF_DECODED)
		return r;
	nbg_bits tbl = { p, table_end, (uint64_t)nin * 5, 0 };
	for (uint32_t i = 0; i < nin; i++) {
		uint32_t units = 0, mode = 0;
		(void)nbg_bits_get(&tbl, 5, &units);
		if (units * 64ull != unit)
			return nbg_coef_reject(o, "bit-count-mismatch", 5ull * i,
					       "input %u's chunk is %u x 64 bytes; %u outputs take %llu",
					       i, units, nout, (unsigned long long)unit);
		nbg_bits c = { p + pos + i * unit, unit, unit * 8, 0 };
		(void)nbg_bits_get(&c, 4, &mode);
		if (mode)
			return nbg_coef_reject(o, "unsupported-stream-flags", (pos + i * unit) * 8,
					       "unsupported (input %u's chunk starts with %u, not 0: no "
					       "sample of another chunk mode)", i, mode);
		c.pos = 4 + 8ull * nout;
		for (uint64_t b = c.pos; b < unit * 8; b += 32) {
			uint32_t v = 0;
			unsigned k = unit * 8 - b < 32 ? (unsigned)(unit * 8 - b) : 32;
			(void)nbg_bits_get(&c, k, &v);
			if (v)
				return nbg_coef_reject(o, "nonzero-padding", (pos + i * unit) * 8 + b,
						       "the bits after input %u's codes are not zero", i);
		}
	}
	if ((r = zeros(p, pos + nin * unit, n, "nonzero-tail", "after the last chunk", o)) !=
	    NBG_COEF_DECODED)
		return r;
	if ((r = finish(p, bias_at, nin, nout, NULL, NBG_COEF_ORDER_INPUTS_RAW, o)) !=
	    NBG_COEF_DECODED)
		return r;
	for (uint32_t i = 0; i < nin; i++) {
		nbg_bits c = { p + pos + i * unit, unit, unit * 8, 4 };
		for (uint32_t k = 0; k < nout; k++) {
			uint32_t v = 0;
			(void)nbg_bits_get(&c, 8, &v);
			o->codes[(size_t)k * nin + i] = (uint8_t)v;
		}
	}
	return NBG_COEF_DECODED;
}

/* Huffman chunks follow each other byte by byte (targets 0x1000000e,
 * 0x10000016, 0xe8) or each at a 64-byte boundary (0xb9, 0xbe); raw chunks
 * (0x7d, 0x99, 0xa1) have a layout of their own.  The one layout that
 * decodes exactly is kept; two would be ambiguous. */
int nbg_coef_decode_tpfc(const uint8_t *p, size_t n, const nbg_coef_shape *s, nbg_coef_out *o)
{
	nbg_coef_out a, raw;
	int r = decode_aligned(p, n, s, 1, o), rr;

	if (r == NBG_COEF_REJECTED && strcmp(o->reason_id, "descriptor-invalid") &&
	    strcmp(o->reason_id, "counts-exceed-entry") && strncmp(o->reason_id, "unsupported", 11) &&
	    strcmp(o->reason_id, "header-invalid")) {
		r = decode_aligned(p, n, s, 64, &a);
		if (r != NBG_COEF_REJECTED) {
			nbg_coef_out_free(o);
			*o = a;
		}
	}
	if (r == NBG_COEF_NO_MEMORY || !strcmp(o->reason_id ? o->reason_id : "", "descriptor-invalid") ||
	    !strcmp(o->reason_id ? o->reason_id : "", "counts-exceed-entry"))
		return r;
	rr = decode_raw(p, n, s, &raw);
	if (rr == NBG_COEF_NO_MEMORY) {
		nbg_coef_out_free(o);
		return rr;
	}
	if (rr == NBG_COEF_DECODED && r == NBG_COEF_DECODED) {
		nbg_coef_out_free(o);
		nbg_coef_out_free(&raw);
		return nbg_coef_reject(o, "ambiguous-format", UINT64_MAX,
				       "the stream decodes both as Huffman and as raw chunks");
	}
	if (rr == NBG_COEF_DECODED) {
		*o = raw;
		return rr;
	}
	/* neither: the Huffman layout's reason, unless its header is not one */
	if (r == NBG_COEF_REJECTED && !strcmp(o->reason_id, "header-invalid") &&
	    strcmp(raw.reason_id, "stream-too-short"))
		*o = raw;
	return r;
}
