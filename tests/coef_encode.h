/*
 * coef_encode.h - an encoder for kernel streams, written for the tests and
 * the fuzz seeds from Mesa etnaviv's encoders (etnaviv_ml_nn_v7.c:
 * write_core_sequential, write_core_interleaved, write_core_6,
 * wb_stream_write; etnaviv_ml_nn_v8.c: encode_byte, huffman_code,
 * emit_pair, encoder_flush, encode_superblock, fill_weights, fill_biases)
 * and the vendor extensions doc/weights.md describes (ZRL runs).  It goes
 * the other way from the library's decoder, loop for loop as the encoders
 * do, so a test compares two independent directions.
 */
#ifndef NBG_TEST_COEF_ENCODE_H
#define NBG_TEST_COEF_ENCODE_H

#include <stddef.h>
#include <stdint.h>

/* Stream formats and writer orders, as the library names them. */
enum { CE_V7 = 1, CE_V8A = 2, CE_V8B = 3, CE_TPFC = 4 };
enum { CE_INTERLEAVED = 2, CE_SEQUENTIAL = 3, CE_SIX = 4 };
/* A z slice of a kernel beyond 3x3 in the v7 layout (the library's
 * NBG_COEF_WIDE_): Mesa's write_core_interleaved, rows in [ky][kx] order,
 * the vendor's chunks of three columns. */
enum { CE_WIDE_MESA = 0, CE_WIDE_ROWS = 1, CE_WIDE_CHUNKS = 2 };

/* A layer: its kernels and what the command says about them. */
typedef struct ce_layer {
	uint32_t out, kz, ky, kx;  /* kz 1 for a depthwise layer */
	uint8_t zp;
	int32_t in_zp;
	const uint8_t *w;          /* [out][kz][ky][kx] */
	const int32_t *bias;       /* the true bias per channel */
	const float *scale;        /* v8a per-channel floats, or NULL */
	uint32_t cores;
	uint32_t superblocks;      /* passes (kernels_per_core follows, as in Mesa) */
	int depthwise;
	uint32_t plane;            /* output plane: the offset word is channel x plane */
	uint32_t seed;             /* v7/v8b: the channels' order over the cores */
	int int8;                  /* int8 codes (two's complement bytes in w), in_zp 0 */
} ce_layer;

typedef struct ce_opts {
	int format;                /* CE_V7, CE_V8A, CE_V8B */
	unsigned order;            /* v7, v8b: a writer */
	unsigned zrl_bits;         /* v7 */
	int wide;                  /* v7, v8b: a CE_WIDE_ order */
	int zrl;                   /* v8: runs of zeros with a run-length table */
	uint8_t avg_bias;          /* v8 */
	int precode;               /* v8 */
	uint32_t map_seed;         /* v8: which symbol gets which bit length */
	int chunk_align64;         /* TP fully connected: each chunk at a 64-byte boundary */
	int tpfc_raw;              /* TP fully connected: the raw chunks of the v7/v8b targets */
} ce_opts;

/* kernels_per_core of the command for l (Mesa's create_nn_config). */
uint32_t ce_superblock(const ce_layer *l);

/* The stream (what a coefficient-table entry holds), malloc'd.  CE_TPFC:
 * a TP fully connected layer (doc/weights.md): l->out outputs, l->kz
 * inputs, 1x1 kernels, raw codes, the bias stored as it is. */
uint8_t *ce_encode(const ce_layer *l, const ce_opts *o, size_t *size);

/* A layer of int16 kernels (kernel_data_type 4): one core, superblocks of
 * `superblock` kernels, not depthwise. */
typedef struct ce16_layer {
	uint32_t out, kz, ky, kx, superblock;
	const int16_t *w;          /* [out][kz][ky][kx] */
	const int64_t *bias;       /* stored 48-bit biases */
} ce16_layer;

/* Its v8a stream with header bit16 (doc/weights.md, "16-bit kernels"): each
 * value its low byte raw and its high byte in the 8-bit coder's field, symbol
 * i of length i, no runs; the 48-bit biases after the core.  malloc'd. */
uint8_t *ce_encode16(const ce16_layer *l, size_t *size);

/* The stored bias of channel c in format f: v7 and v8b subtract
 * sum((w - zp) * in_zp), v8a adds sum((w - zp) * (128 - in_zp)); int8
 * kernels store the bias as it is. */
int32_t ce_stored_bias(const ce_layer *l, int format, uint32_t c);

/* Sets bits lo..lo+n-1 of little-endian word w of a command to v. */
void ce_put_bits(uint8_t *cmd, unsigned w, unsigned lo, unsigned n, uint32_t v);

/* The fixture's v2 file (tests/fixture.h) with its NN command describing l,
 * its kernel patch naming COEF_DATA_TABLE entry 1 and that entry holding
 * the stream, 64 bytes of 0xEE after it; the header's target word set to
 * `target`.  malloc'd. */
uint8_t *ce_nbg_file(const ce_layer *l, const uint8_t *stream, size_t n, uint32_t target,
		     size_t *size);
/* The same file before it is laid out (fx_build; the header's target is
 * then the fixture's, 0x1000003b), for a test that changes it further. */
struct fx_spec;
struct fx_spec *ce_nbg_spec(const ce_layer *l, const uint8_t *stream, size_t n);

#endif
