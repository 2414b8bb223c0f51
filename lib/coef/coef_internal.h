/*
 * coef_internal.h - the kernel-stream decoders behind nbg/weights.h: one
 * stream (the bytes from a kernel patch's target to the end of its
 * coefficient-table entry) and what its NN command says about it, decoded
 * with one format.  Shared by the per-format decoders (coef_v7.c,
 * coef_v8.c, coef_huffman.c, coef_layout.c), the driver (weights.c), the
 * fuzz harness and the tests.  Private to libnbg.
 */
#ifndef NBG_COEF_INTERNAL_H
#define NBG_COEF_INTERNAL_H

#include "common/internal.h"
#include "nbg/weights.h"

/* What the NN command says about its kernel stream. */
typedef struct nbg_coef_shape {
	uint32_t out;          /* out_image_z_size: kernels */
	uint32_t kz, ky, kx;   /* kernel depth (1 when depthwise), height, width */
	uint32_t superblock;   /* kernels_per_core: kernels per core and pass */
	uint32_t zero_point;   /* coef_zero_point */
	int32_t in_zero_point; /* in_image_border_const */
	int depthwise;
	int per_channel;       /* per_channel_post_mul: (bias, float) pairs (v8a) */
	uint32_t plane[2];     /* output planes an offset word counts in: x*y and
				* x_stride*y_stride (0: not known) */
	uint32_t v7_cores;     /* cores a v7 header has words for (16 unless the
				* file names more) */
	int six_first;         /* 1x1 kernels: Mesa's write_core_6 order first */
	int wide;              /* v7 layout, kernels beyond 3x3: NBG_COEF_WIDE_ */
	int int8;              /* int8 codes (kernel_data_type 2, input zero point
				* 0): the stored bias is the bias */
	int bit16;             /* int16 codes (kernel_data_type 4): a v8a stream
				* with bit16 set, 48-bit biases */
	int fp16;              /* fp16 kernels (kernel_data_type 1) */
} nbg_coef_shape;

/* kernel_data_type codes (nbg_command_data_type_name) the decoders take. */
#define NBG_COEF_TYPE_UINT8 0u
#define NBG_COEF_TYPE_INT8 2u
#define NBG_COEF_TYPE_INT16 4u
#define NBG_COEF_TYPE_FP16 1u

/* The order of a z slice of a kernel beyond 3x3 in the v7 layout (v7 and
 * v8b streams), per target (doc/weights.md, "Kernels beyond 3x3"). */
enum nbg_coef_wide {
	NBG_COEF_WIDE_NONE = 0, /* not established: such kernels are refused */
	NBG_COEF_WIDE_ROWS,     /* [ky][kx], as 3x3 kernels (target 0x7d) */
	NBG_COEF_WIDE_CHUNKS    /* rows in pairs, each pair's columns in chunks
				 * of three: per chunk the pair's rows, the
				 * chunk's columns (targets 0x88, 0x99) */
};

/* Value orders of the v7 layout (Mesa's writers) and of v8a. */
enum nbg_coef_order {
	NBG_COEF_ORDER_NONE = 0,
	NBG_COEF_ORDER_BLOCKS9,     /* v8a: blocks of 9 across a superblock */
	NBG_COEF_ORDER_INTERLEAVED, /* write_core_interleaved */
	NBG_COEF_ORDER_SEQUENTIAL,  /* write_core_sequential */
	NBG_COEF_ORDER_SIX,         /* write_core_6 */
	NBG_COEF_ORDER_INPUTS,      /* TP fully connected: a Huffman chunk per input channel */
	NBG_COEF_ORDER_INPUTS_RAW,  /* TP fully connected: a raw chunk per input channel */
	NBG_COEF_ORDER_CHANNELS,    /* f32-pairs: a (weight, slope) pair per channel */
	NBG_COEF_ORDER_COUNT
};
NBG_INTERNAL const char *nbg_coef_order_name(unsigned order);

/* One decode attempt's outcome.  On success the arrays are whole (malloc'd,
 * the caller frees them with nbg_coef_out_free); on failure they are NULL
 * and reason_id, reason and bit say why. */
typedef struct nbg_coef_out {
	nbg_weights_format format;
	unsigned order;
	uint32_t cores;
	uint32_t plane;          /* the output plane the kernels' offset words are
				  * the channels times (s->plane[0] or [1]); 0 when
				  * none was read (v8a, tp-fc, one kernel) */
	uint8_t *codes;          /* out * kz * ky * kx, [out][z][ky][kx]; 16-bit
				  * kernels: int16 little-endian, 2 bytes each */
	int32_t *bias_stored, *bias; /* NULL for 16-bit kernels */
	int64_t *bias64;         /* 16-bit kernels: the stored 48-bit biases */
	float *slope;            /* f32-pairs: the PReLU slope per channel */
	float *scale;            /* NULL unless per_channel */
	const char *reason_id;   /* static */
	char reason[200];
	uint64_t bit;            /* from the stream's start; UINT64_MAX: none */
} nbg_coef_out;

/* Results of nbg_coef_decode. */
#define NBG_COEF_DECODED 1
#define NBG_COEF_REJECTED 0
#define NBG_COEF_NO_MEMORY (-1)

/*
 * Decodes stream p[0..n) with format fmt.  Reads nothing outside p[0..n);
 * allocates only after the shape's counts are checked against n.  Returns
 * NBG_COEF_DECODED (o's arrays filled), NBG_COEF_REJECTED (o's reason set)
 * or NBG_COEF_NO_MEMORY.  o is reset first.
 */
NBG_INTERNAL int nbg_coef_decode(const uint8_t *p, size_t n, const nbg_coef_shape *s,
				 nbg_weights_format fmt, nbg_coef_out *o);
NBG_INTERNAL void nbg_coef_out_free(nbg_coef_out *o);

/* --------------------------------------------- shared by the decoders */

/* Sets o's reason; returns NBG_COEF_REJECTED. */
NBG_INTERNAL int nbg_coef_reject(nbg_coef_out *o, const char *id, uint64_t bit,
				 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The sum of n codes (a kernel's), for the bias corrections: eight bytes
 * at a time in four 16-bit lanes, folded before a lane can overflow. */
static inline uint32_t nbg_coef_sum(const uint8_t *w, size_t n)
{
	const uint64_t m = 0x00FF00FF00FF00FFull;
	uint32_t sum = 0;
	size_t i = 0;

	while (n - i >= 8) {
		uint64_t lanes = 0;
		for (unsigned k = 0; k < 128 && n - i >= 8; k++, i += 8) {
			uint64_t x;
			memcpy(&x, w + i, 8);
			lanes += (x & m) + (x >> 8 & m);
		}
		lanes = (lanes & 0x0000FFFF0000FFFFull) + (lanes >> 16 & 0x0000FFFF0000FFFFull);
		sum += (uint32_t)lanes + (uint32_t)(lanes >> 32);
	}
	for (; i < n; i++)
		sum += w[i];
	return sum;
}

/* Adds a to each of n bytes, modulo 256: eight bytes at a time, the low
 * seven bits of each added apart from its top bit so no carry crosses. */
static inline void nbg_coef_add_bytes(uint8_t *w, size_t n, uint8_t a)
{
	const uint64_t lo = 0x7F7F7F7F7F7F7F7Full, ones = 0x0101010101010101ull;
	uint64_t av = a * ones;
	size_t i = 0;

	for (; n - i >= 8; i += 8) {
		uint64_t x;
		memcpy(&x, w + i, 8);
		x = ((x & lo) + (av & lo)) ^ ((x ^ av) & ~lo);
		memcpy(w + i, &x, 8);
	}
	for (; i < n; i++)
		w[i] = (uint8_t)(w[i] + a);
}

/* Kernel values: kz * ky * kx (fits 32 bits: checked by nbg_coef_decode). */
static inline uint32_t nbg_coef_ksize(const nbg_coef_shape *s)
{
	return s->kz * s->ky * s->kx;
}

/* The LSB-first bit reader of every format: bits [0, nbits) of p. */
typedef struct nbg_bits {
	const uint8_t *p;
	uint64_t nbytes, nbits, pos;
} nbg_bits;

/* The 64 bits from pos on (zeros past the end of p). */
static inline uint64_t nbg_bits_peek(const nbg_bits *b)
{
	uint64_t at = b->pos >> 3, v = 0;

	if (at + 8 <= b->nbytes) {
		memcpy(&v, b->p + at, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		v = __builtin_bswap64(v);
#endif
	} else {
		for (uint64_t i = 0; at + i < b->nbytes; i++)
			v |= (uint64_t)b->p[at + i] << (8 * i);
	}
	return v >> (b->pos & 7);
}

/* Reads k <= 32 bits; false (nothing consumed) past nbits. */
static inline bool nbg_bits_get(nbg_bits *b, unsigned k, uint32_t *v)
{
	uint64_t x;

	if (b->pos > b->nbits || k > b->nbits - b->pos)
		return false;
	x = nbg_bits_peek(b);
	*v = (uint32_t)(k >= 32 ? x : x & ((1ull << k) - 1));
	b->pos += k;
	return true;
}

/* A growable byte buffer. */
typedef struct nbg_coef_buf {
	uint8_t *p;
	uint64_t len, cap;
} nbg_coef_buf;
/* Room for `more` bytes after len; false when memory runs out. */
NBG_INTERNAL bool nbg_coef_buf_reserve(nbg_coef_buf *b, uint64_t more);

/* The v7 layout (v7 bit streams and v8b bytes): per core, kernels in
 * superblocks, each kernel's bias and output offset words placed at the
 * first and last of its values in the writer's order.  A z slice's values
 * are in [ky][kx] order except beyond 3x3 on NBG_COEF_WIDE_CHUNKS targets,
 * where they are permuted; the first and last stay in place. */
typedef struct nbg_coef_event {
	uint64_t pos;            /* value index within the core */
	uint32_t slot;           /* kernel, counted over all cores */
	uint8_t offset;          /* 0: bias, 1: output offset */
} nbg_coef_event;

typedef struct nbg_coef_layout {
	const nbg_coef_shape *s;
	unsigned order;
	nbg_coef_event *ev;      /* one core's events, 2 per kernel */
	nbg_coef_buf sv;         /* one core's values in stream order */
	uint32_t *off;           /* per slot: the output offset word */
	uint32_t *bias;          /* per slot: the bias word */
	uint32_t *chan_of;       /* per slot: its channel, filled by nbg_coef_layout_place */
	uint8_t **dst;           /* a superblock's kernels: where each goes */
	nbg_coef_buf slot_codes; /* per slot: its values, [z][ky][kx] */
	int chunked;             /* the z slices' values come in chunk_order */
	uint8_t chunk_order[225];/* value i of a slice in the stream: its index
				  * in [ky][kx] (NBG_COEF_WIDE_CHUNKS) */
} nbg_coef_layout;

/* NBG_COEF_WIDE_CHUNKS: fills idx[i] with the [ky][kx] index of a z
 * slice's i-th value in the stream (ky, kx <= 15).  Mesa's
 * write_core_interleaved writes one chunk of three columns and then the
 * rest, the same order up to 6 columns. */
NBG_INTERNAL void nbg_coef_chunk_order(uint32_t ky, uint32_t kx, uint8_t *idx);

/* Prepares the buffers for out kernels (false when memory runs out). */
NBG_INTERNAL bool nbg_coef_layout_init(nbg_coef_layout *l, const nbg_coef_shape *s,
				       unsigned order);
NBG_INTERNAL void nbg_coef_layout_free(nbg_coef_layout *l);
/* Room for a core of kpc kernels starting at slot first_slot (false when
 * memory runs out); the caller has checked kpc against the core's bits. */
NBG_INTERNAL bool nbg_coef_layout_reserve(nbg_coef_layout *l, uint32_t kpc, uint32_t first_slot);
/* The events of a core's kpc kernels (slots first_slot...), sorted; returns
 * their count. */
NBG_INTERNAL size_t nbg_coef_layout_events(nbg_coef_layout *l, uint32_t kpc,
					   uint32_t first_slot);
/* Moves a core's kpc kernels from stream order (src) to their places in
 * codes: kernel (slot) i at chan[i] * ksize, or at i * ksize when chan is
 * NULL. */
NBG_INTERNAL void nbg_coef_layout_scatter(nbg_coef_layout *l, const uint8_t *src,
					  uint32_t kpc, uint32_t first_slot, uint8_t *codes,
					  const uint32_t *chan);
/* Every slot's offset names a distinct channel: fills l->chan_of and
 * allocates o's codes and biases, or rejects. */
NBG_INTERNAL int nbg_coef_layout_channels(nbg_coef_layout *l, nbg_coef_out *o);
/* o's biases (v7 bias correction) from its codes, in channel order. */
NBG_INTERNAL void nbg_coef_layout_biases(const nbg_coef_layout *l, nbg_coef_out *o);
/* The two above with the kernels placed from l->slot_codes. */
NBG_INTERNAL int nbg_coef_layout_finish(nbg_coef_layout *l, nbg_coef_out *o);

/* The v8 Huffman coder: one core's bytes.  A code as read (a final code,
 * fc): its first part p0 (0-7, not 2), or 8 + its second part after a
 * first part 010. */
#define NBG_HUFF_CODES 12
/* A pair of codes resolved: where their bytes and runs are in the tables
 * (fc x 256), their value fields' bits and masks. */
typedef struct nbg_huff_pair {
	uint16_t ta, tb;
	uint8_t wa, wsum, ma, mb;
} nbg_huff_pair;
typedef struct nbg_huff {
	uint8_t lengths[8];      /* symbol -> bit length */
	uint8_t width[8];        /* symbol -> value field bits */
	uint8_t run[8];          /* symbol -> 0 a byte, 1 a short run, 2 a long run */
	uint8_t table[18];       /* run-length table */
	unsigned k;              /* index bits of a long run */
	int zrl;
	/* fc x 256 + the bits read for its value field (its free bit apart)
	 * -> the byte (0 for a run), and the zeros of a run less one (0 for a
	 * byte) */
	uint8_t byte[NBG_HUFF_CODES * 256], run_less1[NBG_HUFF_CODES * 256];
	/* a pair's two first parts (6 bits) and the 4 bits after the next
	 * pair's first parts -> the pair's codes resolved */
	nbg_huff_pair pair[1024];
	uint8_t skip[64];        /* a pair's first parts -> 6 + the bits of
				  * their second parts */
} nbg_huff;

/* Validates and loads the coding tables of a v8 header (64 bytes at p). */
NBG_INTERNAL int nbg_huff_init(nbg_huff *h, const uint8_t *hdr, nbg_coef_out *o);
/*
 * Decodes one core's nbits bits at p into buf (after buf->len): `want(ctx,
 * got)` returns the bytes the core must hold once its first two are known
 * (UINT64_MAX: no count fits); the decoder stops at the pair of codes that
 * completes them, checks that only zeros follow them in that pair, that
 * exactly nbits bits were used and that the flush codes are the encoder's.
 * On success buf->len has grown by the core's bytes.  Returns
 * NBG_COEF_DECODED, NBG_COEF_REJECTED (o's reason; bit offsets from `base`)
 * or NBG_COEF_NO_MEMORY.
 */
typedef uint64_t (*nbg_huff_want_fn)(void *ctx, const uint8_t *got);
NBG_INTERNAL int nbg_huff_core(const nbg_huff *h, const uint8_t *p, uint64_t nbits,
			       uint64_t base, nbg_coef_buf *buf, nbg_huff_want_fn want,
			       void *ctx, nbg_coef_out *o);

/* Checks the first 26 bytes of a v8 header at p (n bytes in the entry,
 * at least 64): version 1, no float flag, the bit16 flag as bit16 says
 * (with neither precode nor avg_bias), avg_bias a byte, no precode with
 * avg_bias; sets *precode, *avg and the Huffman tables. */
NBG_INTERNAL int nbg_coef_v8_header(const uint8_t *p, size_t n, int bit16, int *precode,
				    uint8_t *avg, nbg_huff *h, nbg_coef_out *o);
/* nbg_huff_core for a stream of 16-bit values (header bit16, coef_huff16.c):
 * buf gets each value as two bytes, little-endian; want() is given the first
 * value's two bytes and returns bytes. */
NBG_INTERNAL int nbg_huff_core16(const nbg_huff *h, const uint8_t *p, uint64_t nbits,
				 uint64_t base, nbg_coef_buf *buf, nbg_huff_want_fn want,
				 void *ctx, nbg_coef_out *o);

/* Runs fn(ctx, s, order, o) with each of the v7 writers that can apply to
 * s's kernels, in turn, until one decodes (or memory runs out); the first
 * writer's reason when none does. */
typedef int (*nbg_coef_order_fn)(void *ctx, const nbg_coef_shape *s, unsigned order,
				 nbg_coef_out *o);
NBG_INTERNAL int nbg_coef_try_orders(const nbg_coef_shape *s, nbg_coef_out *o,
				     nbg_coef_order_fn fn, void *ctx);

NBG_INTERNAL int nbg_coef_decode_v7(const uint8_t *p, size_t n, const nbg_coef_shape *s,
				    nbg_coef_out *o);
/* A TP fully connected layer's stream (coef_tpfc.c): s->kz inputs,
 * s->out outputs, kx = ky = 1. */
NBG_INTERNAL int nbg_coef_decode_tpfc(const uint8_t *p, size_t n, const nbg_coef_shape *s,
				      nbg_coef_out *o);
/* An fp16 PReLU layer's stream (coef_f32.c). */
NBG_INTERNAL int nbg_coef_decode_f32(const uint8_t *p, size_t n, const nbg_coef_shape *s,
				     nbg_coef_out *o);
NBG_INTERNAL int nbg_coef_decode_v8(const uint8_t *p, size_t n, const nbg_coef_shape *s,
				    int layout_v7, nbg_coef_out *o);

#endif
