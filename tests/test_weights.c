/*
 * test_weights.c - the kernel-stream decoder (lib/coef/, nbg/weights.h).
 *
 * Synthesized: streams written by tests/coef_encode.c, an encoder that
 * follows Mesa etnaviv's encoders loop for loop, decode back to the layer
 * they were written from, for every format, writer order, coding mode and
 * core split; each rejection path of doc/weights.md's checks has a stream
 * that takes it; a synthesized NBG file carries a stream through the public
 * API, the ledger and `nbg weights`.
 *
 * Real files: every corpus file decodes with its counts of decoded /
 * not-decoded operations per target as pinned below, each decoded stream
 * passes checks re-read here from the raw bytes, its ledger re-emits
 * byte-identical, and the emotion family -- one network compiled for seven
 * targets and three stream formats -- decodes to the same per-channel
 * weights and corrected biases on every target, layer by layer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "coef/coef_internal.h"
#include "coef_encode.h"
#include "corpus.h"
#include "fixture.h"
#include "nbg/commands.h"
#include "nbg/graph.h"
#include "nbg/ledger.h"
#include "nbg/nbg.h"
#include "nbg/tensor.h"
#include "nbg/weights.h"

#define V1_DIR NBG_CORPUS_DIR "/v1"

/* ------------------------------------------------------------ layers */

typedef struct tlayer {
	ce_layer l;
	uint8_t *w;
	int32_t *bias;
	float *scale;
} tlayer;

static uint32_t rng_state = 12345;

static uint32_t rnd(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 8;
}

/* Random kernels with zero-point runs (a quarter of the values, in runs),
 * random biases. */
static tlayer make_layer(uint32_t out, uint32_t kz, uint32_t k, uint32_t cores,
			uint32_t superblocks, int depthwise, int with_scale)
{
	tlayer L;
	size_t n = (size_t)out * kz * k * k;

	memset(&L, 0, sizeof(L));
	L.w = malloc(n + 1);
	L.bias = malloc(out * sizeof(int32_t));
	L.scale = with_scale ? malloc(out * sizeof(float)) : NULL;
	L.l.zp = (uint8_t)(rnd() & 0xff);
	for (size_t i = 0; i < n;) {
		if (rnd() % 4 == 0) {
			size_t run = 1 + rnd() % 40;
			for (; run && i < n; run--)
				L.w[i++] = L.l.zp;
		} else {
			L.w[i++] = (uint8_t)rnd();
		}
	}
	for (uint32_t c = 0; c < out; c++) {
		L.bias[c] = (int32_t)((rnd() << 8) - 0x40000000u);
		if (L.scale)
			L.scale[c] = 0.001f * (float)(c + 1);
	}
	L.l.out = out;
	L.l.kz = kz;
	L.l.ky = L.l.kx = k;
	L.l.in_zp = (int32_t)(rnd() & 0xff);
	L.l.w = L.w;
	L.l.bias = L.bias;
	L.l.scale = L.scale;
	L.l.cores = cores;
	L.l.superblocks = superblocks;
	L.l.depthwise = depthwise;
	L.l.plane = 30 * 30;
	L.l.seed = rnd() | 1;
	return L;
}

static void free_layer(tlayer *L)
{
	free(L->w);
	free(L->bias);
	free(L->scale);
}

static nbg_coef_shape shape_of(const ce_layer *l, int six_first)
{
	nbg_coef_shape s;

	memset(&s, 0, sizeof(s));
	s.out = l->out;
	s.kz = l->kz;
	s.ky = l->ky;
	s.kx = l->kx;
	s.superblock = ce_superblock(l);
	s.zero_point = l->zp;
	s.in_zero_point = l->in_zp;
	s.depthwise = l->depthwise;
	s.per_channel = l->scale != NULL;
	s.plane[0] = l->plane;
	s.v7_cores = 16;
	s.six_first = six_first;
	return s;
}

/* Decodes s and checks every array against the layer. */
static void check_decodes(const ce_layer *l, const uint8_t *p, size_t n, const nbg_coef_shape *s,
			  int format, unsigned order)
{
	nbg_coef_out o;
	size_t ks = (size_t)l->kz * l->ky * l->kx;
	int r = nbg_coef_decode(p, n, s, (nbg_weights_format)format, &o);

	if (r != NBG_COEF_DECODED)
		print_error("format %d order %u: %s at bit %llu: %s\n", format, order, o.reason_id,
			    (unsigned long long)o.bit, o.reason);
	assert_int_equal(r, NBG_COEF_DECODED);
	assert_int_equal(o.format, format);
	if (order)
		assert_int_equal(o.order, order);
	assert_int_equal(o.cores, l->cores);
	assert_memory_equal(o.codes, l->w, l->out * ks);
	for (uint32_t c = 0; c < l->out; c++) {
		assert_int_equal(o.bias[c], l->bias[c]);
		assert_int_equal(o.bias_stored[c], ce_stored_bias(l, format, c));
	}
	if (l->scale) {
		assert_non_null(o.scale);
		assert_memory_equal(o.scale, l->scale, l->out * sizeof(float));
	} else {
		assert_null(o.scale);
	}
	nbg_coef_out_free(&o);
}

static void roundtrip(tlayer *L, const ce_opts *o, int six_first, unsigned want)
{
	size_t n;
	uint8_t *p = ce_encode(&L->l, o, &n);
	nbg_coef_shape s = shape_of(&L->l, six_first);

	check_decodes(&L->l, p, n, &s, o->format, want);
	free(p);
}

/* ------------------------------------------------------ round trips */

/* v7: each writer, each zero-run width, several core and pass splits. */
static void test_v7_writers(void **state)
{
	static const struct {
		uint32_t out, kz, k, cores, sb;
		unsigned order;
	} cases[] = {
		{ 16, 13, 1, 8, 1, CE_SIX },         { 16, 4, 1, 8, 2, CE_SIX },
		{ 7, 13, 1, 4, 1, CE_SIX },          { 8, 5, 3, 8, 1, CE_INTERLEAVED },
		{ 24, 16, 3, 8, 3, CE_INTERLEAVED }, { 7, 3, 2, 3, 2, CE_INTERLEAVED },
		{ 5, 2, 3, 2, 1, CE_INTERLEAVED },   { 8, 1, 3, 8, 1, CE_SEQUENTIAL },
		{ 20, 1, 3, 6, 2, CE_SEQUENTIAL },   { 1, 2, 2, 1, 1, CE_INTERLEAVED },
		{ 1, 1, 1, 1, 1, CE_SEQUENTIAL },
	};
	static const unsigned zrl[] = { 0, 1, 3, 5, 8 };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (size_t z = 0; z < sizeof(zrl) / sizeof(zrl[0]); z++) {
			tlayer L = make_layer(cases[i].out, cases[i].kz, cases[i].k, cases[i].cores,
					     cases[i].sb, 0, 0);
			ce_opts o = { .format = CE_V7, .order = cases[i].order, .zrl_bits = zrl[z] };
			roundtrip(&L, &o, cases[i].order == CE_SIX, cases[i].order);
			free_layer(&L);
		}
}

/* A writer that is not the target's first choice is found by trying the
 * next one (1x1 kernels: interleaved after six, six after interleaved). */
static void test_v7_tried_in_turn(void **state)
{
	tlayer L = make_layer(16, 8, 1, 4, 1, 0, 0);
	ce_opts o = { .format = CE_V7, .order = CE_INTERLEAVED, .zrl_bits = 2 };
	roundtrip(&L, &o, 1, CE_INTERLEAVED);
	o.order = CE_SIX;
	roundtrip(&L, &o, 0, CE_SIX);
	free_layer(&L);
}

/* Kernels beyond 3x3 in the v7 layout: no sample fixes the order of their
 * values, so they are unsupported, whatever the stream. */
static void test_v7_large_kernel(void **state)
{
	tlayer L = make_layer(6, 1, 5, 3, 1, 0, 0);
	ce_opts o = { .format = CE_V7, .order = CE_SEQUENTIAL };
	size_t n;
	uint8_t *p = ce_encode(&L.l, &o, &n);
	nbg_coef_shape s = shape_of(&L.l, 0);
	nbg_coef_out out;

	assert_int_equal(nbg_coef_decode(p, n, &s, NBG_WEIGHTS_FORMAT_V7, &out), NBG_COEF_REJECTED);
	assert_string_equal(out.reason_id, "unsupported-kernel-shape");
	free(p);
	free_layer(&L);
}

/* v8a: plain and ZRL coding, symbol maps, depthwise orders, passes,
 * avg_bias, precode, per-channel floats. */
static void test_v8a(void **state)
{
	static const struct {
		uint32_t out, kz, k, cores, sb;
		int dw, scale;
	} cases[] = {
		{ 8, 1, 3, 4, 1, 0, 0 },  { 16, 8, 1, 4, 2, 0, 0 }, { 20, 1, 5, 6, 1, 0, 0 },
		{ 33, 7, 3, 9, 2, 0, 0 }, { 10, 3, 10, 6, 3, 0, 1 }, { 16, 1, 3, 4, 2, 1, 0 },
		{ 7, 1, 4, 4, 1, 1, 0 },  { 24, 1, 7, 8, 1, 1, 0 },  { 5, 1, 3, 5, 1, 1, 1 },
		{ 1, 2, 1, 1, 1, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (int mode = 0; mode < 6; mode++) {
			tlayer L = make_layer(cases[i].out, cases[i].kz, cases[i].k, cases[i].cores,
					     cases[i].sb, cases[i].dw, cases[i].scale);
			ce_opts o = { .format = CE_V8A, .zrl = mode & 1,
				      .avg_bias = mode == 2 || mode == 3 ? 37 : 0,
				      .precode = mode >= 4, .map_seed = (uint32_t)(i * 7 + mode) };
			roundtrip(&L, &o, 0, NBG_COEF_ORDER_BLOCKS9);
			free_layer(&L);
		}
}

/* v8b: the v7 writers as Huffman-coded bytes. */
static void test_v8b(void **state)
{
	static const struct {
		uint32_t out, kz, k, cores, sb;
		unsigned order;
	} cases[] = {
		{ 16, 8, 1, 2, 1, CE_SIX },   { 16, 16, 3, 2, 2, CE_INTERLEAVED },
		{ 8, 1, 3, 8, 1, CE_SEQUENTIAL }, { 9, 5, 3, 4, 3, CE_INTERLEAVED },
		{ 1, 2, 2, 1, 1, CE_INTERLEAVED },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (int mode = 0; mode < 6; mode++) {
			tlayer L = make_layer(cases[i].out, cases[i].kz, cases[i].k, cases[i].cores,
					     cases[i].sb, 0, 0);
			ce_opts o = { .format = CE_V8B, .order = cases[i].order, .zrl = mode & 1,
				      .avg_bias = mode == 2 || mode == 3 ? 200 : 0,
				      .precode = mode >= 4, .map_seed = (uint32_t)(i * 5 + mode) };
			roundtrip(&L, &o, cases[i].order == CE_SIX, cases[i].order);
			free_layer(&L);
		}
}

/* -------------------------------------------------------- rejections */

/* Decodes expecting a rejection with the given reason id (NULL: any). */
static void expect_reject(const uint8_t *p, size_t n, const nbg_coef_shape *s, int format,
			  const char *id)
{
	nbg_coef_out o;
	int r = nbg_coef_decode(p, n, s, (nbg_weights_format)format, &o);

	if (r == NBG_COEF_DECODED)
		nbg_coef_out_free(&o);
	if (r != NBG_COEF_REJECTED || (id && strcmp(o.reason_id, id)))
		print_error("wanted %s, got %s: %s\n", id ? id : "a rejection",
			    r == NBG_COEF_DECODED ? "a decode" : o.reason_id,
			    r == NBG_COEF_DECODED ? "" : o.reason);
	assert_int_equal(r, NBG_COEF_REJECTED);
	if (id)
		assert_string_equal(o.reason_id, id);
	assert_null(o.codes);
	assert_null(o.bias);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		p[k] = (uint8_t)(v >> (8 * k));
}
static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void test_v7_rejections(void **state)
{
	tlayer L = make_layer(16, 4, 3, 4, 1, 0, 0);
	ce_opts o = { .format = CE_V7, .order = CE_INTERLEAVED, .zrl_bits = 3 };
	nbg_coef_shape s = shape_of(&L.l, 0), t;
	size_t n;
	uint8_t *p = ce_encode(&L.l, &o, &n), *q = malloc(n + 64);

	check_decodes(&L.l, p, n, &s, CE_V7, CE_INTERLEAVED);
	t = s;
	t.out = 1;
	expect_reject(p, 40, &t, CE_V7, "stream-too-short");
#define MUTATE(stmt, id)                            \
	do {                                        \
		memcpy(q, p, n);                    \
		stmt;                               \
		expect_reject(q, n, &s, CE_V7, id); \
	} while (0)
	MUTATE(put32(q + 4, get32(q + 4) + 4), "header-invalid");
	MUTATE(put32(q + 12, (uint32_t)n), "core-outside-entry");
	MUTATE(q[64] = 9, "header-invalid");                              /* zrl_bits */
	MUTATE(q[65] = 200, "kernel-count-mismatch");                     /* core 0's kernels */
	MUTATE(q[64 + get32(q) - 1] = 1, "nonzero-padding");
	MUTATE(put32(q, get32(q) + 64), NULL);   /* its size no longer rounds its words */
	memcpy(q, p, n);
	q[n] = 7; /* a byte after the last core */
	expect_reject(q, n + 1, &s, CE_V7, "nonzero-tail");
	/* the cores hold 16 kernels; a command with 17 */
	t = s;
	t.out = 17;
	expect_reject(p, n, &t, CE_V7, "kernel-count-mismatch");
	/* offsets that count another plane */
	t = s;
	t.plane[0] = 31;
	expect_reject(p, n, &t, CE_V7, "offset-not-channel");
	/* more values per kernel than the tokens give */
	t = s;
	t.kz = 5;
	expect_reject(p, n, &t, CE_V7, NULL);
	/* counts the entry cannot hold, before anything is allocated */
	t = s;
	t.kz = 900000;
	expect_reject(p, n, &t, CE_V7, "counts-exceed-entry");
	t = s;
	t.kx = 0;
	expect_reject(p, n, &t, CE_V7, "descriptor-invalid");
#undef MUTATE
	free(p);
	free(q);
	free_layer(&L);
}

static void test_v8_rejections(void **state)
{
	tlayer L = make_layer(12, 4, 3, 3, 2, 0, 0);
	ce_opts o = { .format = CE_V8A, .zrl = 1, .map_seed = 3 };
	nbg_coef_shape s = shape_of(&L.l, 0), t;
	size_t n;
	uint8_t *p = ce_encode(&L.l, &o, &n), *q = malloc(n + 64);
	uint32_t bits0;

	check_decodes(&L.l, p, n, &s, CE_V8A, NBG_COEF_ORDER_BLOCKS9);
	bits0 = get32(p + 28);
	t = s;
	t.out = 1;
	expect_reject(p, 63, &t, CE_V8A, "stream-too-short");
#define MUTATE(stmt, id)                             \
	do {                                         \
		memcpy(q, p, n);                     \
		stmt;                                \
		expect_reject(q, n, &s, CE_V8A, id); \
	} while (0)
	MUTATE(q[0] = 0x20, "header-invalid");               /* version 2 */
	MUTATE(q[0] = 0x12, "unsupported-stream-flags");     /* bit16 */
	MUTATE(q[0] = 0x14, "unsupported-stream-flags");     /* fp16 */
	MUTATE(q[0] = 0x18, "header-invalid");               /* reserved bit */
	MUTATE(q[1] = 5, "header-invalid");                  /* run_length_size */
	MUTATE(q[20] = 0x9f, "header-invalid");              /* a bit length of 15 */
	MUTATE(q[25] = 1, "header-invalid");                 /* avg_bias 256 + */
	MUTATE((q[0] = 0x11, q[24] = 3), "unsupported-stream-flags"); /* precode + avg_bias */
	MUTATE(put32(q + 28 + 4, 0), "header-invalid");      /* a core after an empty one */
	MUTATE(put32(q + 28, 1u << 30), "core-outside-entry");
	MUTATE(put32(q + 28, bits0 + 1), NULL);              /* one bit more */
	MUTATE(put32(q + 28, bits0 - 1), NULL);              /* one bit less */
	MUTATE(q[64 + (bits0 + 511) / 512 * 64 - 1] = 0x80, "nonzero-padding");
	memcpy(q, p, n);
	q[n] = 1;
	expect_reject(q, n + 1, &s, CE_V8A, "nonzero-tail");
	expect_reject(p, n - 4, &s, CE_V8A, "bias-block-outside-entry");
	t = s;
	t.out = 13;
	expect_reject(p, n, &t, CE_V8A, "kernel-count-mismatch");
	/* Another pass size gives another channel order, which is a permutation
	 * too: v8a streams carry no channel numbers, so the stream cannot tell
	 * (the targets compared in the corpus test can). */
	t = s;
	t.superblock = 1;
	{
		nbg_coef_out x;
		assert_int_equal(nbg_coef_decode(p, n, &t, NBG_WEIGHTS_FORMAT_V8A, &x),
				 NBG_COEF_DECODED);
		assert_true(memcmp(x.codes, L.w, (size_t)12 * 4 * 9) != 0);
		nbg_coef_out_free(&x);
	}
	t = s;
	t.kz = 2; /* fewer values per kernel: the cores' bytes do not end where their bits do */
	expect_reject(p, n, &t, CE_V8A, NULL);
#undef MUTATE
	free(p);
	free(q);
	free_layer(&L);
}

/* TP fully connected streams: round trips over shapes, coding modes and
 * both chunk placements, then each rejection. */
static nbg_coef_shape tpfc_shape(const ce_layer *l)
{
	nbg_coef_shape s;

	memset(&s, 0, sizeof(s));
	s.out = l->out;
	s.kz = l->kz;
	s.kx = s.ky = s.superblock = 1;
	s.zero_point = l->zp;
	return s;
}

static void test_tpfc(void **state)
{
	static const uint32_t dims[][2] = { { 5, 500 }, { 126, 64 }, { 1, 7 }, { 3, 1 }, { 2, 33 } };
	(void)state;
	for (size_t d = 0; d < sizeof(dims) / sizeof(dims[0]); d++)
		for (int mode = 0; mode < 9; mode++) {
			tlayer L = make_layer(dims[d][0], dims[d][1], 1, 1, 1, 0, 0);
			ce_opts o = { .format = CE_TPFC, .zrl = mode & 1,
				      .avg_bias = (uint8_t)(mode & 2 ? 171 : 0),
				      .chunk_align64 = mode >> 2 & 1, .map_seed = (uint32_t)(d + mode),
				      .tpfc_raw = mode == 8 };
			nbg_coef_shape s = tpfc_shape(&L.l);
			size_t n;
			uint8_t *p = ce_encode(&L.l, &o, &n);
			check_decodes(&L.l, p, n, &s, CE_TPFC,
				      mode == 8 ? NBG_COEF_ORDER_INPUTS_RAW : NBG_COEF_ORDER_INPUTS);
			free(p);
			free_layer(&L);
		}

	tlayer L = make_layer(5, 40, 1, 1, 1, 0, 0);
	ce_opts o = { .format = CE_TPFC, .avg_bias = 171, .map_seed = 2 };
	nbg_coef_shape s = tpfc_shape(&L.l), t;
	size_t n;
	uint8_t *p = ce_encode(&L.l, &o, &n), *q = malloc(n + 64);
	uint32_t table_end = 28 + (40 * 14 + 7) / 8;
#define MUTATE(stmt, id)                              \
	do {                                          \
		memcpy(q, p, n);                      \
		stmt;                                 \
		expect_reject(q, n, &s, CE_TPFC, id); \
	} while (0)
	MUTATE(q[0] = 0x20, "header-invalid");                   /* version 2 */
	MUTATE(q[0] = 0x11, "unsupported-stream-flags");         /* precode */
	MUTATE(q[28] = (uint8_t)(q[28] + 1), NULL);              /* chunk 0 one bit longer */
	MUTATE(q[table_end] = 1, "nonzero-padding");             /* after the size table */
	MUTATE(q[128 + 5 * 4] = 1, "nonzero-padding");           /* after the biases */
	memcpy(q, p, n);
	q[n] = 1;
	expect_reject(q, n + 1, &s, CE_TPFC, "nonzero-tail");
	expect_reject(p, n - 1, &s, CE_TPFC, NULL);               /* the last chunk cut */
	expect_reject(p, 100, &s, CE_TPFC, "stream-too-short");
	/* 4 or 7 outputs do not fit the chunks; 6 would: the pad byte of an odd
	 * count reads as a sixth output, and its bias word as a zero, so the
	 * output count must come from the command */
	t = s;
	t.out = 4;
	expect_reject(p, n, &t, CE_TPFC, NULL);
	t.out = 7;
	expect_reject(p, n, &t, CE_TPFC, NULL);
	t = s;
	t.kx = t.ky = 3;
	expect_reject(p, n, &t, CE_TPFC, "descriptor-invalid");
	t = s;
	t.kz = 1u << 19;
	expect_reject(p, n, &t, CE_TPFC, NULL);
#undef MUTATE
	free(p);
	free(q);
	/* the raw layout's rejections */
	o.tpfc_raw = 1;
	p = ce_encode(&L.l, &o, &n);
	q = malloc(n + 64);
	memcpy(q, p, n);
	q[0] = (uint8_t)(q[0] + 1); /* input 0's chunk 2 units */
	expect_reject(q, n, &s, CE_TPFC, NULL);
	memcpy(q, p, n);
	q[128] = 1; /* input 0's chunk mode */
	expect_reject(q, n, &s, CE_TPFC, NULL);
	memcpy(q, p, n);
	q[128 + 63] = 1; /* after input 0's codes */
	expect_reject(q, n, &s, CE_TPFC, "nonzero-padding");
	memcpy(q, p, n);
	q[n] = 1;
	expect_reject(q, n + 1, &s, CE_TPFC, NULL);
	expect_reject(p, n - 64, &s, CE_TPFC, NULL);
	free(p);
	free(q);
	free_layer(&L);
}

/* Block padding that is not the zero point, and every single-bit flip of
 * real streams: decoded or rejected, never out of bounds (ASan). */
static void test_bit_flips(void **state)
{
	for (int f = CE_V7; f <= CE_V8B; f++) {
		tlayer L = make_layer(9, 3, 3, 3, 2, 0, 0);
		ce_opts o = { .format = f, .order = CE_INTERLEAVED, .zrl_bits = 2, .zrl = 1,
			      .map_seed = 1 };
		nbg_coef_shape s = shape_of(&L.l, 0);
		size_t n, rejected = 0;
		uint8_t *p = ce_encode(&L.l, &o, &n);
		for (size_t bit = 0; bit < n * 8; bit++) {
			nbg_coef_out out;
			p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			int r = nbg_coef_decode(p, n, &s, (nbg_weights_format)f, &out);
			assert_true(r == NBG_COEF_DECODED || r == NBG_COEF_REJECTED);
			rejected += r == NBG_COEF_REJECTED;
			if (r == NBG_COEF_DECODED)
				nbg_coef_out_free(&out);
			p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
		print_message("format %d: %zu of %zu single-bit flips rejected\n", f, rejected,
			      n * 8);
		/* the values themselves are free bytes; the structure is not */
		assert_true(rejected > n * 8 / 10);
		free(p);
		free_layer(&L);
	}
}

/* ------------------------------------------------ a synthesized file */

typedef struct decoded_file {
	nbg_model *m;
	nbg_graph *g;
	nbg_commands *c;
	nbg_weights *w;
} decoded_file;

static void decode_buf(const uint8_t *b, size_t size, decoded_file *d)
{
	nbg_error e;
	assert_int_equal(nbg_parse(b, size, NULL, &d->m, &e), NBG_OK);
	assert_int_equal(nbg_graph_decode(d->m, &d->g, &e), NBG_OK);
	assert_int_equal(nbg_commands_decode(d->m, d->g, &d->c, &e), NBG_OK);
	assert_int_equal(nbg_weights_decode(d->m, d->g, d->c, &d->w, &e), NBG_OK);
}

static void free_decoded(decoded_file *d)
{
	nbg_weights_free(d->w);
	nbg_commands_free(d->c);
	nbg_graph_free(d->g);
	nbg_model_free(d->m);
}

/* The public API on a file: the operation, its arrays, the ledger. */
static void test_synth_file(void **state)
{
	static const struct {
		uint32_t target;
		int format;
		unsigned order;
	} cases[] = {
		{ 0x1000003b, CE_V8A, 0 }, { 0x88, CE_V7, CE_INTERLEAVED },
		{ 0x99, CE_V8B, CE_INTERLEAVED }, { 0x12345678, CE_V8A, 0 },
		{ 0x12345678, CE_V7, CE_INTERLEAVED },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tlayer L = make_layer(16, 4, 3, 4, 2, 0, 0);
		ce_opts o = { .format = cases[i].format, .order = cases[i].order, .zrl_bits = 2,
			      .zrl = 1, .map_seed = 5 };
		size_t n, size, count;
		uint8_t *st = ce_encode(&L.l, &o, &n), *b = ce_nbg_file(&L.l, st, n, cases[i].target,
								       &size);
		decoded_file d;
		nbg_ledger *l;
		nbg_error e;
		const nbg_weights_op *w;

		decode_buf(b, size, &d);
		/* the NN operation, and the fixture's NT operation (no kernel stream) */
		assert_int_equal(nbg_weights_count(d.w), 2);
		assert_int_equal(nbg_weights_op_status(nbg_weights_at(d.w, 1)), NBG_WEIGHTS_NO_STREAM);
		w = nbg_weights_at(d.w, 0);
		if (nbg_weights_op_status(w) != NBG_WEIGHTS_DECODED)
			print_error("%s\n", nbg_weights_op_reason(w));
		assert_int_equal(nbg_weights_op_status(w), NBG_WEIGHTS_DECODED);
		assert_int_equal(nbg_weights_op_format(w), cases[i].format);
		assert_int_equal(nbg_weights_op_operation(w), 1);
		const uint8_t *codes = nbg_weights_op_codes(w, &count);
		assert_int_equal(count, 16 * 4 * 9);
		assert_memory_equal(codes, L.w, count);
		assert_memory_equal(nbg_weights_op_bias(w), L.bias, 16 * sizeof(int32_t));
		assert_int_equal(nbg_weights_op_stream_size(w), n);
		assert_int_equal(nbg_weights_explained_bytes(d.w), n);
		/* the ledger: the stream's bytes decoded-coefficients, the rest of
		 * COEF_DATA (entry 0, the bytes after the entry) still opaque */
		assert_int_equal(nbg_ledger_build_weights(d.m, d.w, &l, &e), NBG_OK);
		assert_int_equal(nbg_ledger_class_bytes(l, NBG_LEDGER_DECODED_COEFFICIENTS), n);
		{
			const nbg_ledger_range *r = nbg_ledger_owner_of(l, nbg_weights_op_stream_offset(w));
			assert_int_equal(r->cls, NBG_LEDGER_DECODED_COEFFICIENTS);
			assert_int_equal(r->offset, nbg_weights_op_stream_offset(w));
			assert_int_equal(r->size, n);
			assert_string_equal(r->owner, "kernel stream of operation 1");
			r = nbg_ledger_owner_of(l, nbg_weights_op_stream_offset(w) + n);
			assert_int_equal(r->cls, NBG_LEDGER_PRESERVED_OPAQUE);
		}
		assert_int_equal(nbg_reemit_check(l, b, size, &e), NBG_OK);
		b[nbg_weights_op_stream_offset(w) + 5] ^= 1;
		assert_int_equal(nbg_reemit_check(l, b, size, &e), NBG_E_SEMANTIC_CHANGE_REFUSED);
		assert_int_equal(e.offset, nbg_weights_op_stream_offset(w));
		nbg_ledger_free(l);
		free_decoded(&d);
		free(b);
		free(st);
		free_layer(&L);
	}
}

/* A stream that fails a check: not-decoded, no arrays, the reason. */
static void test_synth_file_rejected(void **state)
{
	tlayer L = make_layer(8, 2, 3, 2, 1, 0, 0);
	ce_opts o = { .format = CE_V8A, .map_seed = 2 };
	size_t n, size;
	uint8_t *st = ce_encode(&L.l, &o, &n), *b;
	decoded_file d;
	const nbg_weights_op *w;
	nbg_ledger *l;
	nbg_error e;

	put32(st + 28, get32(st + 28) + 1); /* core 0: one bit more */
	b = ce_nbg_file(&L.l, st, n, 0x1000003b, &size);
	decode_buf(b, size, &d);
	w = nbg_weights_at(d.w, 0);
	assert_int_equal(nbg_weights_op_status(w), NBG_WEIGHTS_NOT_DECODED);
	assert_null(nbg_weights_op_codes(w, NULL));
	assert_null(nbg_weights_op_bias(w));
	assert_true(nbg_weights_op_bit_offset(w) != UINT64_MAX);
	assert_true(strlen(nbg_weights_op_reason(w)) > 0);
	assert_int_equal(nbg_weights_status_count(d.w, NBG_WEIGHTS_NOT_DECODED), 1);
	assert_int_equal(nbg_weights_explained_bytes(d.w), 0);
	assert_int_equal(nbg_ledger_build_weights(d.m, d.w, &l, &e), NBG_OK);
	assert_int_equal(nbg_ledger_class_bytes(l, NBG_LEDGER_DECODED_COEFFICIENTS), 0);
	nbg_ledger_free(l);
	free_decoded(&d);
	free(b);
	free(st);
	free_layer(&L);
}

/* An int16 kernel: unsupported, whatever its stream. */
static void test_synth_unsupported(void **state)
{
	tlayer L = make_layer(8, 2, 3, 2, 1, 0, 0);
	ce_opts o = { .format = CE_V8A };
	size_t n, size;
	uint8_t *st = ce_encode(&L.l, &o, &n), *b = ce_nbg_file(&L.l, st, n, 0x1000003b, &size);
	decoded_file d;
	nbg_section const *sec;
	nbg_model *m;
	nbg_error e;

	/* kernel_data_type_bit_2 (word 15, bit 19): int16 */
	assert_int_equal(nbg_parse(b, size, NULL, &m, &e), NBG_OK);
	sec = nbg_model_section(m, 7);
	b[sec->offset + 15 * 4 + 2] |= 0x08;
	nbg_model_free(m);
	fx_refresh(b, size);
	decode_buf(b, size, &d);
	assert_int_equal(nbg_weights_op_status(nbg_weights_at(d.w, 0)), NBG_WEIGHTS_UNSUPPORTED);
	assert_string_equal(nbg_weights_op_reason_id(nbg_weights_at(d.w, 0)),
			    "unsupported-data-type");
	assert_true(!strncmp(nbg_weights_op_reason(nbg_weights_at(d.w, 0)), "unsupported (", 13));
	free_decoded(&d);
	free(b);
	free(st);
	free_layer(&L);
}

/* `nbg weights --out`: the .npy files hold the arrays, weights.json their
 * SHA-256 (sha256sum's, not libnbg's). */
static void test_cli_out(void **state)
{
	tlayer L = make_layer(6, 3, 3, 3, 1, 0, 0);
	ce_opts o = { .format = CE_V8A, .zrl = 1 };
	size_t n, size, len;
	uint8_t *st = ce_encode(&L.l, &o, &n), *b = ce_nbg_file(&L.l, st, n, 0x1000003b, &size);
	char *dir = fx_tmpdir("nbg-weights"), path[512];
	FILE *f;
	fx_run_result r;
	nbg_npy npy;
	nbg_error e;
	uint8_t *buf;
	json_t *doc, *op;

	snprintf(path, sizeof(path), "%s/m.nb", dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, size, f), size);
	fclose(f);
	r = fx_run_nbg("", "weights '%s' --out '%s/out'", path, dir);
	assert_int_equal(r.status, 0);
	fx_run_free(&r);
	snprintf(path, sizeof(path), "%s/out/op1_weights.npy", dir);
	buf = fx_read_file(path, &len);
	assert_non_null(buf);
	assert_int_equal(nbg_npy_parse(buf, len, &npy, &e), NBG_OK);
	assert_string_equal(npy.descr, "|u1");
	assert_int_equal(npy.ndim, 4);
	assert_int_equal(npy.shape[0], 6);
	assert_int_equal(npy.shape[1], 3);
	assert_int_equal(npy.shape[2], 3);
	assert_int_equal(npy.shape[3], 3);
	assert_memory_equal(npy.data, L.w, 6 * 27);
	snprintf(path, sizeof(path), "%s/out/weights.json", dir);
	doc = json_load_file(path, 0, NULL);
	assert_non_null(doc);
	op = json_array_get(json_object_get(json_object_get(doc, "weights"), "operations"), 0);
	assert_string_equal(json_string_value(json_object_get(op, "status")), "decoded");
	{
		uint8_t d[32];
		const char *hex = json_string_value(json_object_get(json_object_get(op, "sha256"),
								    "weights"));
		for (int i = 0; i < 32; i++)
			sscanf(hex + 2 * i, "%2hhx", &d[i]);
		assert_true(fx_sha256sum_is(d, npy.data, npy.data_size));
	}
	json_decref(doc);
	free(buf);
	snprintf(path, sizeof(path), "%s/out/op1_bias.npy", dir);
	buf = fx_read_file(path, &len);
	assert_int_equal(nbg_npy_parse(buf, len, &npy, &e), NBG_OK);
	assert_string_equal(npy.descr, "<i4");
	for (int c = 0; c < 6; c++)
		assert_int_equal((int32_t)get32(npy.data + 4 * c), L.bias[c]);
	free(buf);
	/* inspect --weights: the same table in the report, the member in JSON */
	r = fx_run_nbg("", "inspect --weights --only '%s/m.nb'", dir);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "6x3x3x3 uint8, decoded v8a (blocks of 9, 3 cores)"));
	fx_run_free(&r);
	r = fx_run_nbg("", "inspect --json --weights --only '%s/m.nb'", dir);
	assert_int_equal(r.status, 0);
	doc = json_loads(r.out, 0, NULL);
	assert_non_null(doc);
	op = json_array_get(json_object_get(json_object_get(doc, "weights"), "operations"), 0);
	assert_string_equal(json_string_value(json_object_get(op, "status")), "decoded");
	assert_string_equal(json_string_value(json_object_get(op, "format")), "v8a");
	json_decref(doc);
	fx_run_free(&r);
	/* --op names no operation: usage, exit 2; --float without --out: 2 */
	r = fx_run_nbg("", "weights '%s/m.nb' --op 7", dir);
	assert_int_equal(r.status, 2);
	fx_run_free(&r);
	r = fx_run_nbg("", "weights '%s/m.nb' --float", dir);
	assert_int_equal(r.status, 2);
	fx_run_free(&r);
	/* an output file that is a link to a device is refused, never written
	 * through: exit 3, the link left as it is */
	snprintf(path, sizeof(path), "%s/dev", dir);
	assert_int_equal(mkdir(path, 0777), 0);
	snprintf(path, sizeof(path), "%s/dev/op1_weights.npy", dir);
	assert_int_equal(symlink("/dev/null", path), 0);
	r = fx_run_nbg("", "weights '%s/m.nb' --out '%s/dev'", dir, dir);
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.err, "not-regular-file"));
	fx_run_free(&r);
	{
		struct stat sb;
		assert_int_equal(lstat(path, &sb), 0);
		assert_true(S_ISLNK(sb.st_mode));
	}
	assert_int_equal(fx_rmtree(dir), 0);
	free(dir);
	free(b);
	free(st);
	free_layer(&L);
}

/* ------------------------------------------------------------ corpus */

/* Decoded, not-decoded, unsupported and stream-less NN-engine operations
 * per target over the corpus (the 53 files), measured with this decoder
 * and pinned: a change in any count is a regression to explain. */
static const struct {
	uint32_t target;
	size_t counts[NBG_WEIGHTS_STATUS_COUNT];
} pinned[] = {
	{ 0x7d, { 101, 0, 0, 0 } },         { 0x88, { 267, 0, 0, 20 } },
	{ 0x99, { 407, 0, 0, 20 } },        { 0xa1, { 169, 0, 0, 20 } },
	{ 0xb9, { 176, 0, 0, 0 } },         { 0xbe, { 175, 0, 0, 0 } },
	{ 0xe8, { 81, 0, 0, 0 } },          { 0xee, { 9, 0, 0, 0 } },
	{ 0x1000000e, { 463, 0, 0, 0 } },   { 0x1000003b, { 0, 0, 205, 386 } },
};
#define NPINNED (sizeof(pinned) / sizeof(pinned[0]))

/* The same for the TP fully connected layers (103 operations): Huffman
 * chunks on the v8a targets, raw chunks on 0x7d, 0x99 and 0xa1; the
 * 0x10003 files' patches point past their entries. */
static const struct {
	uint32_t target;
	size_t counts[NBG_WEIGHTS_STATUS_COUNT];
} pinned_tp[] = {
	{ 0x7d, { 15, 0, 0, 0 } },          { 0x88, { 0, 0, 0, 15 } },
	{ 0x99, { 8, 0, 0, 15 } },          { 0xa1, { 6, 0, 0, 15 } },
	{ 0xb9, { 8, 0, 0, 0 } },           { 0xbe, { 3, 0, 0, 0 } },
	{ 0xe8, { 2, 0, 0, 0 } },           { 0xee, { 0, 0, 0, 0 } },
	{ 0x1000000e, { 16, 0, 0, 0 } },    { 0x1000003b, { 0, 0, 0, 0 } },
};

typedef struct corpus_walk {
	size_t counts[NPINNED][NBG_WEIGHTS_STATUS_COUNT];
	size_t tp_counts[NPINNED][NBG_WEIGHTS_STATUS_COUNT];
	size_t files, decoded, raw_checked;
} corpus_walk;

/* The checks of a decoded stream, re-read from its raw bytes. */
static void raw_checks(const uint8_t *p, size_t n, const nbg_weights_op *o)
{
	const uint32_t *sh = nbg_weights_op_shape(o);
	uint32_t kernels = 0;

	if (nbg_weights_op_format(o) == NBG_WEIGHTS_FORMAT_TPFC &&
	    !strcmp(nbg_weights_op_order(o), "a raw chunk per input")) {
		/* 5-bit sizes in 64-byte units, the biases at the next 64-byte
		 * boundary, the chunks after the next one, only zeros after them */
		uint64_t tbl = ((uint64_t)sh[1] * 5 + 7) / 8, bias = (tbl + 63) / 64 * 64;
		uint64_t pos = (bias + 4ull * sh[0] + 63) / 64 * 64;
		for (uint32_t i = 0; i < sh[1]; i++) {
			uint64_t at = 5ull * i, v = p[at / 8] | (uint64_t)p[at / 8 + 1] << 8;
			uint64_t units = v >> (at % 8) & 31;
			assert_true(units * 512 >= 4 + 8ull * sh[0]);
			assert_int_equal(p[pos] & 15, 0);
			pos += units * 64;
		}
		assert_true(pos <= n);
		for (; pos < n; pos++)
			assert_int_equal(p[pos], 0);
		return;
	}
	if (nbg_weights_op_format(o) == NBG_WEIGHTS_FORMAT_TPFC) {
		/* header version 1, the 14-bit size table, the biases at the next
		 * 64-byte boundary, the chunks' bytes (packed, or each 64-byte
		 * aligned) within the entry, only zeros after the last */
		uint64_t tbl = 28 + ((uint64_t)sh[1] * 14 + 7) / 8, bias = (tbl + 63) / 64 * 64;
		uint64_t pos = (bias + 4ull * sh[0] + 63) / 64 * 64, packed = pos, aligned = pos;
		assert_int_equal(p[0] >> 4, 1);
		for (uint32_t i = 0; i < sh[1]; i++) {
			uint64_t at = 28 * 8 + 14ull * i, v = 0;
			for (int k = 0; k < 3; k++)
				v |= (uint64_t)p[at / 8 + k] << (8 * k);
			uint64_t bytes = ((v >> (at % 8) & 0x3fff) + 7) / 8;
			packed += bytes;
			aligned = (i + 1 < sh[1] ? (aligned + bytes + 63) / 64 * 64 : aligned + bytes);
		}
		assert_true(packed <= n);
		for (pos = packed; pos < n && !p[pos]; pos++)
			;
		if (pos < n) { /* not packed: the aligned layout ends the data */
			assert_true(aligned <= n);
			for (pos = aligned; pos < n; pos++)
				assert_int_equal(p[pos], 0);
		}
		return;
	}
	if (nbg_weights_op_format(o) == NBG_WEIGHTS_FORMAT_V7) {
		size_t pos = 64;
		for (int c = 0; c < 16; c++) {
			uint32_t size = get32(p + 4 * c);
			if (!size)
				continue;
			assert_int_equal(size % 64, 0);
			assert_true(pos + size <= n);
			assert_true(p[pos] <= 8);                      /* zrl_bits */
			kernels += p[pos + 1] | (uint32_t)p[pos + 2] << 8; /* kernels */
			pos += size;
		}
		for (; pos < n; pos++)
			assert_int_equal(p[pos], 0);
	} else {
		size_t pos = 64;
		assert_int_equal(p[0] >> 4, 1);
		for (int c = 0; c < 9 && get32(p + 28 + 4 * c); c++) {
			uint64_t bits = get32(p + 28 + 4 * c);
			pos += (size_t)(bits + 511) / 512 * 64;
			assert_true(pos <= n);
		}
		if (nbg_weights_op_format(o) == NBG_WEIGHTS_FORMAT_V8A)
			pos += (size_t)sh[0] * 4;
		assert_true(pos <= n);
		for (; pos < n; pos++)
			assert_int_equal(p[pos], 0);
		kernels = sh[0];
	}
	assert_int_equal(kernels, sh[0]);
}

static void walk_file(const char *path, void *arg)
{
	corpus_walk *cw = arg;
	size_t size;
	uint8_t *b = fx_read_file(path, &size);
	decoded_file d;
	nbg_ledger *l;
	nbg_error e;
	size_t t = NPINNED;

	assert_non_null(b);
	decode_buf(b, size, &d);
	for (size_t i = 0; i < NPINNED; i++)
		if (pinned[i].target == nbg_model_target(d.m))
			t = i;
	cw->files++;
	for (size_t i = 0; i < nbg_weights_count(d.w); i++) {
		const nbg_weights_op *o = nbg_weights_at(d.w, i);
		size_t cnt;
		assert_true(t < NPINNED);
		if (nbg_graph_operation_at(d.g, nbg_weights_op_operation(o))->type == NBG_GRAPH_OP_TP)
			cw->tp_counts[t][nbg_weights_op_status(o)]++;
		else
			cw->counts[t][nbg_weights_op_status(o)]++;
		if (nbg_weights_op_status(o) != NBG_WEIGHTS_DECODED)
			continue;
		cw->decoded++;
		const uint32_t *sh = nbg_weights_op_shape(o);
		assert_non_null(nbg_weights_op_codes(o, &cnt));
		assert_int_equal(cnt, (size_t)sh[0] * sh[1] * sh[2] * sh[3]);
		raw_checks(b + nbg_weights_op_stream_offset(o), nbg_weights_op_stream_size(o), o);
		cw->raw_checked++;
	}
	/* the ledger with the decoded streams: theirs exactly, re-emitted whole */
	assert_int_equal(nbg_ledger_build_weights(d.m, d.w, &l, &e), NBG_OK);
	assert_int_equal(nbg_ledger_class_bytes(l, NBG_LEDGER_DECODED_COEFFICIENTS),
			 nbg_weights_explained_bytes(d.w));
	assert_int_equal(nbg_reemit_check(l, b, size, &e), NBG_OK);
	nbg_ledger_free(l);
	free_decoded(&d);
	free(b);
}

static void test_corpus_counts(void **state)
{
	corpus_walk cw;

	memset(&cw, 0, sizeof(cw));
	tc_each_corpus_file("v1", walk_file, &cw);
	tc_each_corpus_file("v2", walk_file, &cw);
	assert_int_equal(cw.files, 53);
	for (size_t t = 0; t < NPINNED; t++) {
		print_message("target 0x%x: decoded %zu, not-decoded %zu, unsupported %zu, "
			      "no stream %zu\n", pinned[t].target, cw.counts[t][0], cw.counts[t][1],
			      cw.counts[t][2], cw.counts[t][3]);
		for (int s = 0; s < NBG_WEIGHTS_STATUS_COUNT; s++)
			assert_int_equal(cw.counts[t][s], pinned[t].counts[s]);
		print_message("target 0x%x TP fully connected: decoded %zu, not-decoded %zu, "
			      "unsupported %zu, no stream %zu\n", pinned_tp[t].target,
			      cw.tp_counts[t][0], cw.tp_counts[t][1], cw.tp_counts[t][2],
			      cw.tp_counts[t][3]);
		assert_int_equal(pinned_tp[t].target, pinned[t].target);
		for (int s = 0; s < NBG_WEIGHTS_STATUS_COUNT; s++)
			assert_int_equal(cw.tp_counts[t][s], pinned_tp[t].counts[s]);
	}
	assert_int_equal(cw.raw_checked, cw.decoded);
}

/* ------------------------------------------------ the emotion family */

typedef struct emo_file {
	char path[512];
	uint8_t *buf;
	decoded_file d;
} emo_file;

/* Channel c's weights that are not the zero point, as w - zp, in order. */
static size_t nonzero(const nbg_weights_op *o, uint32_t c, int32_t *out)
{
	size_t n, k = 0;
	const uint8_t *q = nbg_weights_op_codes(o, &n);
	size_t per = n / nbg_weights_op_shape(o)[0];
	int32_t zp = nbg_weights_op_zero_point(o);

	for (size_t i = 0; i < per; i++)
		if (q[c * per + i] != zp)
			out[k++] = q[c * per + i] - zp;
	return k;
}

/* Two decoded operations hold the same kernels: per channel the same
 * non-zero weights (w - zp) in the same order (one side may carry zero
 * points the other leaves out: an expanded depthwise kernel, another run
 * order), and with `biases` the same corrected bias. */
static int same_kernels(const nbg_weights_op *a, const nbg_weights_op *b, int biases)
{
	uint32_t out = nbg_weights_op_shape(a)[0];
	size_t na, nb;
	int ok = out == nbg_weights_op_shape(b)[0];

	nbg_weights_op_codes(a, &na);
	nbg_weights_op_codes(b, &nb);
	int32_t *x = malloc((na + nb + 1) * sizeof(int32_t)), *y = x + na;
	for (uint32_t c = 0; ok && c < out; c++) {
		size_t kx = nonzero(a, c, x), ky = nonzero(b, c, y);
		ok = kx == ky && !memcmp(x, y, kx * sizeof(int32_t)) &&
		     (!biases || nbg_weights_op_bias(a)[c] == nbg_weights_op_bias(b)[c]);
	}
	free(x);
	return ok;
}

/* The decoded operation of ref whose per-channel non-zero weights equal
 * o's, or NULL. */
static const nbg_weights_op *counterpart(const decoded_file *ref, const nbg_weights_op *o)
{
	for (size_t i = 0; i < nbg_weights_count(ref->w); i++) {
		const nbg_weights_op *r = nbg_weights_at(ref->w, i);
		if (nbg_weights_op_status(r) == NBG_WEIGHTS_DECODED && same_kernels(o, r, 0))
			return r;
	}
	return NULL;
}

/* Operations with no A311D counterpart: a 4x4 depthwise kernel of one
 * constant (the global average pooling some targets run on the NN cores)
 * and 1x1x2 additions (1000c on 0xbe; the A311D file adds differently). */
static int lowered_apart(const nbg_weights_op *o)
{
	const uint32_t *sh = nbg_weights_op_shape(o);
	uint32_t min, max;
	uint64_t zp;

	nbg_weights_op_stats(o, &min, &max, &zp);
	return (sh[1] == 1 && sh[2] == 4 && sh[3] == 4 && min == max) ||
	       (sh[0] == 1 && sh[1] == 2 && sh[2] == 1 && sh[3] == 1);
}

/* The emotion network compiled for seven targets, five times (compiler
 * versions): every decoded operation of a target other than the A311D
 * (v7) whose per-channel non-zero weights equal those of an operation of
 * the A311D file of the same compiler version has the same corrected
 * biases, channel by channel -- biases stored by three formulas and
 * channel orders of three formats, undone independently. */
static void test_emotion_targets(void **state)
{
	static const char *const versions[] = { "10009", "1000b", "1000c", "1000e", "1000f" };
	static const char *const names[] = {
		"_7d_emotion_7d.nb", "_99_emotion_99.nb", "_a1_emotion_a1.nb",
		"_a1_emotion_a1_C308X.nb", "_b9_emotion_b9.nb", "_be_emotion_be.nb",
		"_be_emotion_be_C305X.nb", "_e8_emotion_e8.nb",
	};
	size_t files = 0, decoded = 0, matched = 0, apart = 0;
	unsigned formats = 0;

	for (size_t v = 0; v < sizeof(versions) / sizeof(versions[0]); v++) {
		emo_file ref;
		size_t size;
		snprintf(ref.path, sizeof(ref.path), "%s/%s_88_emotion_88%s.nb", V1_DIR, versions[v],
			 !strcmp(versions[v], "1000e") ? "_A311D" : "");
		ref.buf = fx_read_file(ref.path, &size);
		assert_non_null(ref.buf);
		decode_buf(ref.buf, size, &ref.d);
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			emo_file f;
			snprintf(f.path, sizeof(f.path), "%s/%s%s", V1_DIR, versions[v], names[k]);
			if (!(f.buf = fx_read_file(f.path, &size)))
				continue;
			decode_buf(f.buf, size, &f.d);
			files++;
			formats |= 1u << nbg_weights_target_format(nbg_model_target(f.d.m));
			for (size_t i = 0; i < nbg_weights_count(f.d.w); i++) {
				const nbg_weights_op *o = nbg_weights_at(f.d.w, i), *r;
				if (nbg_weights_op_status(o) != NBG_WEIGHTS_DECODED)
					continue;
				decoded++;
				if (!(r = counterpart(&ref.d, o))) {
					if (!lowered_apart(o))
						print_error("%s op %zu: no A311D counterpart\n", f.path,
							    nbg_weights_op_operation(o));
					assert_true(lowered_apart(o));
					apart++;
					continue;
				}
				if (!same_kernels(o, r, 1))
					print_error("%s op %zu and %s op %zu: the biases differ\n",
						    f.path, nbg_weights_op_operation(o), ref.path,
						    nbg_weights_op_operation(r));
				assert_true(same_kernels(o, r, 1));
				matched++;
			}
			free_decoded(&f.d);
			free(f.buf);
		}
		free_decoded(&ref.d);
		free(ref.buf);
	}
	print_message("emotion: %zu files, %zu decoded operations; %zu equal an A311D "
		      "operation, biases included; %zu lowered apart\n", files, decoded, matched,
		      apart);
	/* 25 files besides the five A311D ones, of formats v7 (0x7d), v8a, v8b */
	assert_int_equal(files, 25);
	assert_int_equal(formats, 1u << NBG_WEIGHTS_FORMAT_V7 | 1u << NBG_WEIGHTS_FORMAT_V8A |
					  1u << NBG_WEIGHTS_FORMAT_V8B);
	assert_int_equal(decoded, matched + apart);
	assert_int_equal(apart, 16);
}

/* README's example is `nbg weights` on a corpus file, as scripts/gen-docs.sh
 * writes it (the path as the docs name it). */
static void test_readme_block(void **state)
{
	static const char shown[] = "../shared/corpus/v1/1000f_ee_lenet_model.nb";
	char marker[160], *doc, *b, *e, *want, *out, *at;
	size_t len, n;
	fx_run_result r = fx_run_nbg("", "weights '%s/1000f_ee_lenet_model.nb'", V1_DIR);

	assert_int_equal(r.status, 0);
	/* the path as the docs show it */
	at = strstr(r.out, V1_DIR "/1000f_ee_lenet_model.nb");
	assert_non_null(at);
	n = strlen(r.out) + sizeof(shown) + 64;
	out = malloc(n);
	snprintf(out, n, "%.*s%s%s", (int)(at - r.out), r.out, shown,
		 at + strlen(V1_DIR "/1000f_ee_lenet_model.nb"));
	n += 2 * sizeof(shown) + 16;
	want = malloc(n);
	snprintf(want, n, "```\n$ nbg weights %s\n%s```\n", shown, out);
	doc = (char *)fx_read_file(NBG_SOURCE_DIR "/README.md", &len);
	assert_non_null(doc);
	snprintf(marker, sizeof(marker), "<!-- BEGIN nbg weights %s -->\n", shown);
	b = strstr(doc, marker);
	assert_non_null(b);
	b += strlen(marker);
	snprintf(marker, sizeof(marker), "<!-- END nbg weights %s -->\n", shown);
	e = strstr(b, marker);
	assert_non_null(e);
	if ((size_t)(e - b) != strlen(want) || memcmp(b, want, strlen(want)))
		fail_msg("README.md's nbg weights example is stale: run scripts/gen-docs.sh");
	free(doc);
	free(want);
	free(out);
	fx_run_free(&r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v7_writers),       cmocka_unit_test(test_v7_tried_in_turn),
		cmocka_unit_test(test_v7_large_kernel),
		cmocka_unit_test(test_v8a),              cmocka_unit_test(test_v8b),
		cmocka_unit_test(test_v7_rejections),    cmocka_unit_test(test_v8_rejections),
		cmocka_unit_test(test_bit_flips),        cmocka_unit_test(test_synth_file),
		cmocka_unit_test(test_synth_file_rejected), cmocka_unit_test(test_synth_unsupported),
		cmocka_unit_test(test_cli_out),         cmocka_unit_test(test_tpfc),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_corpus_counts),
		cmocka_unit_test(test_emotion_targets),
		cmocka_unit_test(test_readme_block),
	};
	return tc_main(argc, argv, "test_weights", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), NULL, NULL);
}
