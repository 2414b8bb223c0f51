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
 * Real files: every operation's verdict (decoded, a refusal, no stream) is
 * what the raw bytes of its command, stream header and kernel patch say
 * (test_corpus_streams; no stream fails a check), each decoded stream
 * passes checks re-read here from the raw bytes, every file's ledger
 * re-emits byte-identical; and each network the corpus holds compiled for
 * several targets -- stream formats that share nothing -- decodes to the
 * same per-channel weights and corrected biases on every target
 * (test_family_targets).  Files are found and grouped by rule, never by
 * name; one a check cannot judge is printed as not judged, with why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <math.h>
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

/* Kernels beyond 3x3 in the v7 layout (v7, v8b): [ky][kx] on target
 * 0x7d, chunks of three columns per pair of rows on 0x88 and 0x99, each
 * written by the encoder and decoded with the target's order; the other
 * order gives other weights (the stream cannot tell them apart, the
 * networks compiled for several targets do: doc/weights.md). */
static void test_v7_large_kernel(void **state)
{
	static const struct {
		uint32_t out, kz, k, cores, sb;
		int format, wide;
	} cases[] = {
		{ 16, 3, 7, 4, 1, CE_V7, CE_WIDE_ROWS },   { 16, 3, 7, 4, 2, CE_V7, CE_WIDE_CHUNKS },
		{ 12, 5, 5, 3, 2, CE_V7, CE_WIDE_CHUNKS }, { 9, 2, 4, 2, 1, CE_V7, CE_WIDE_CHUNKS },
		{ 8, 4, 5, 4, 1, CE_V8B, CE_WIDE_ROWS },   { 8, 4, 7, 2, 2, CE_V8B, CE_WIDE_CHUNKS },
		{ 5, 3, 11, 2, 1, CE_V8B, CE_WIDE_CHUNKS },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tlayer L = make_layer(cases[i].out, cases[i].kz, cases[i].k, cases[i].cores,
				     cases[i].sb, 0, 0);
		ce_opts o = { .format = cases[i].format, .order = CE_INTERLEAVED, .zrl_bits = 3,
			      .wide = cases[i].wide, .map_seed = (uint32_t)i };
		size_t n;
		uint8_t *p = ce_encode(&L.l, &o, &n);
		nbg_coef_shape s = shape_of(&L.l, 0);
		nbg_coef_out out;

		s.wide = cases[i].wide == CE_WIDE_ROWS ? NBG_COEF_WIDE_ROWS : NBG_COEF_WIDE_CHUNKS;
		check_decodes(&L.l, p, n, &s, cases[i].format, CE_INTERLEAVED);
		/* the other order: the same structure, other weights */
		s.wide = s.wide == NBG_COEF_WIDE_ROWS ? NBG_COEF_WIDE_CHUNKS : NBG_COEF_WIDE_ROWS;
		assert_int_equal(nbg_coef_decode(p, n, &s, (nbg_weights_format)cases[i].format, &out),
				 NBG_COEF_DECODED);
		assert_memory_not_equal(out.codes, L.l.w, (size_t)L.l.out * nbg_coef_ksize(&s));
		nbg_coef_out_free(&out);
		/* a target whose order is not established */
		s.wide = NBG_COEF_WIDE_NONE;
		assert_int_equal(nbg_coef_decode(p, n, &s, (nbg_weights_format)cases[i].format, &out),
				 NBG_COEF_REJECTED);
		assert_string_equal(out.reason_id, "unsupported-kernel-shape");
		free(p);
		free_layer(&L);
	}
}

/* Single-channel kernels beyond 3x3 (write_core_sequential, which Mesa
 * splits only for depthwise layers and wide inputs): no file shows their
 * order, so they are unsupported on every target, whatever the stream. */
static void test_v7_large_single_channel(void **state)
{
	tlayer L = make_layer(6, 1, 5, 3, 1, 0, 0);
	ce_opts o = { .format = CE_V7, .order = CE_SEQUENTIAL };
	size_t n;
	uint8_t *p = ce_encode(&L.l, &o, &n);
	nbg_coef_shape s = shape_of(&L.l, 0);
	nbg_coef_out out;

	for (int wide = NBG_COEF_WIDE_NONE; wide <= NBG_COEF_WIDE_CHUNKS; wide++) {
		s.wide = wide;
		assert_int_equal(nbg_coef_decode(p, n, &s, NBG_WEIGHTS_FORMAT_V7, &out),
				 NBG_COEF_REJECTED);
		assert_string_equal(out.reason_id, "unsupported-kernel-shape");
	}
	free(p);
	free_layer(&L);
}

/* The chunk order against the one read off the corpus: the gender
 * network's 5x5 kernels of its 0x88 and 0x99 files, decoded in [ky][kx]
 * order, hold at stream position i the value its 0xb9 file (v8a, whose
 * 5x5 order LeNet's Caffe source fixes) has at [ky][kx] index want[i], for
 * every kernel and z slice. */
static void test_chunk_order(void **state)
{
	static const uint8_t want5[25] = { 0,  1,  2,  5,  6,  7,  3,  4,  8,  9,  10, 11, 12,
					   15, 16, 17, 13, 14, 18, 19, 20, 21, 22, 23, 24 };
	static const uint8_t want7[14] = { 0, 1, 2, 7, 8, 9, 3, 4, 5, 10, 11, 12, 6, 13 };
	uint8_t idx[225];

	nbg_coef_chunk_order(5, 5, idx);
	assert_memory_equal(idx, want5, 25);
	nbg_coef_chunk_order(7, 7, idx);
	assert_memory_equal(idx, want7, 14); /* the first pair of rows */
	assert_int_equal(idx[48], 48);
	nbg_coef_chunk_order(3, 3, idx);      /* up to 3x3: [ky][kx] */
	for (int i = 0; i < 9; i++)
		assert_int_equal(idx[i], i);
}

/* Kernels one value wide or high (3x1, 1x5): one order of values whatever
 * the axes' order; they decode in every format (v8a depthwise, v7 and v8b
 * interleaved, 1x5 on a target of either order beyond 3x3). */
static void test_one_wide_kernels(void **state)
{
	static const struct {
		uint32_t out, kz, ky, kx;
		int format, dw, wide;
	} cases[] = {
		{ 16, 1, 3, 1, CE_V8A, 1, 0 },             { 6, 4, 1, 3, CE_V8A, 0, 0 },
		{ 8, 3, 3, 1, CE_V7, 0, CE_WIDE_ROWS },    { 8, 3, 1, 5, CE_V7, 0, CE_WIDE_CHUNKS },
		{ 8, 3, 5, 1, CE_V8B, 0, CE_WIDE_CHUNKS }, { 8, 2, 1, 5, CE_V8B, 0, CE_WIDE_ROWS },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tlayer L = make_layer(cases[i].out, cases[i].kz, 1, 4, 1, cases[i].dw, 0);
		unsigned order = cases[i].format == CE_V8A ? NBG_COEF_ORDER_BLOCKS9 : CE_INTERLEAVED;
		ce_opts o = { .format = cases[i].format, .order = CE_INTERLEAVED, .zrl_bits = 2,
			      .wide = cases[i].wide, .map_seed = (uint32_t)i };
		size_t n;
		uint8_t *p;
		nbg_coef_shape s;

		/* make_layer's kernels are square: new values for ky x kx */
		free(L.w);
		L.w = malloc((size_t)cases[i].out * cases[i].kz * cases[i].ky * cases[i].kx);
		for (size_t j = 0; j < (size_t)cases[i].out * cases[i].kz * cases[i].ky * cases[i].kx; j++)
			L.w[j] = (uint8_t)rnd();
		L.l.w = L.w;
		L.l.ky = cases[i].ky;
		L.l.kx = cases[i].kx;
		p = ce_encode(&L.l, &o, &n);
		s = shape_of(&L.l, 0);
		s.wide = cases[i].wide == CE_WIDE_ROWS ? NBG_COEF_WIDE_ROWS : NBG_COEF_WIDE_CHUNKS;
		check_decodes(&L.l, p, n, &s, cases[i].format, order);
		free(p);
		free_layer(&L);
	}
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

/* 16-bit kernels (header bit16): a layer written by ce_encode16 decodes
 * back, values across the int16 range, 48-bit biases; each check takes a
 * stream broken for it. */
static void test_v8a_int16(void **state)
{
	enum { OUT = 5, KZ = 3, K = 3 };
	int16_t w[OUT * KZ * K * K];
	int64_t bias[OUT];
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		w[i] = (int16_t)((i * 40503u + 17) % 65536 - 32768) >> (i % 9);
	w[0] = -32768, w[1] = 32767, w[2] = 0, w[3] = -1, w[4] = 255, w[5] = -256;
	for (int c = 0; c < OUT; c++)
		bias[c] = (c % 2 ? -1 : 1) * ((int64_t)c << 40) + c * 77;
	ce16_layer l = { OUT, KZ, K, K, 2, w, bias };
	size_t n;
	uint8_t *p = ce_encode16(&l, &n), *q = malloc(n);
	nbg_coef_shape s = { .out = OUT, .kz = KZ, .ky = K, .kx = K, .superblock = 2, .bit16 = 1 };
	nbg_coef_out o;

	assert_non_null(q);
	assert_int_equal(nbg_coef_decode(p, n, &s, NBG_WEIGHTS_FORMAT_V8A, &o), NBG_COEF_DECODED);
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		assert_int_equal((int16_t)(o.codes[2 * i] | o.codes[2 * i + 1] << 8), w[i]);
	assert_memory_equal(o.bias64, bias, sizeof(bias));
	assert_null(o.bias);
	assert_null(o.bias_stored);
	nbg_coef_out_free(&o);
	uint32_t bits0 = get32(p + 28);
	nbg_coef_shape t = s;
	t.bit16 = 0;
	expect_reject(p, n, &t, CE_V8A, "unsupported-stream-flags"); /* uint8 kernels */
	expect_reject(p, n, &s, CE_V8B, "unsupported-data-type");
	expect_reject(p, n, &s, CE_V7, "unsupported-data-type");
	t = s;
	t.per_channel = 1;
	expect_reject(p, n, &t, CE_V8A, "unsupported-data-type");
	const struct {
		size_t at;
		uint32_t v;
		int word;
		const char *id;
	} m[] = {
		{ 0, 0x10, 0, "header-invalid" },           /* bit16 clear */
		{ 0, 0x13, 0, "unsupported-stream-flags" }, /* precode */
		{ 24, 1, 0, "unsupported-stream-flags" },   /* avg_bias */
		{ 28, bits0 + 1, 1, "bit-count-mismatch" },
		{ 28, bits0 - 3, 1, "stream-overrun" },
		{ 64, p[64] ^ 1u, 0, NULL },                /* the first code */
	};
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		memcpy(q, p, n);
		if (m[i].word)
			put32(q + m[i].at, m[i].v);
		else
			q[m[i].at] = (uint8_t)m[i].v;
		expect_reject(q, n, &s, CE_V8A, m[i].id);
	}
	t = s;
	t.out = OUT + 1;
	expect_reject(p, n, &t, CE_V8A, "kernel-count-mismatch");
	expect_reject(p, n - 64 - 6 * OUT + 2, &s, CE_V8A, "bias-block-outside-entry");
	free(p);
	free(q);
	(void)state;
}

/* fp16 1x1 depthwise kernels (f32-pairs): float32 (weight, slope) pairs
 * decode to float16 weights and float32 slopes; each check takes a stream. */
static void test_f32_pairs(void **state)
{
	/* 1.0, 0.25; -2.0, 0.5; 2^-24 (the smallest fp16), -1.5; 0, 3 */
	static const uint32_t f[8] = { 0x3f800000, 0x3e800000, 0xc0000000, 0x3f000000,
				       0x33800000, 0xbfc00000, 0x00000000, 0x40400000 };
	static const uint16_t h[4] = { 0x3c00, 0xc000, 0x0001, 0x0000 };
	uint8_t p[40] = { 0 };
	for (int i = 0; i < 8; i++)
		put32(p + 4 * i, f[i]);
	nbg_coef_shape s = { .out = 4, .kz = 1, .ky = 1, .kx = 1, .superblock = 1,
			     .depthwise = 1, .fp16 = 1 };
	nbg_coef_out o;

	assert_int_equal(nbg_coef_decode(p, sizeof(p), &s, NBG_WEIGHTS_FORMAT_F32, &o),
			 NBG_COEF_DECODED);
	for (int c = 0; c < 4; c++) {
		assert_int_equal(o.codes[2 * c] | o.codes[2 * c + 1] << 8, h[c]);
		assert_memory_equal(&o.slope[c], &f[2 * c + 1], 4);
	}
	assert_null(o.bias);
	nbg_coef_out_free(&o);
	expect_reject(p, 31, &s, CE_V8A, "unsupported-data-type");
	expect_reject(p, 31, &s, NBG_WEIGHTS_FORMAT_F32, "stream-too-short");
	p[39] = 1;
	expect_reject(p, sizeof(p), &s, NBG_WEIGHTS_FORMAT_F32, "nonzero-tail");
	p[39] = 0;
	put32(p + 8, 0x3f800001); /* one bit below fp16's mantissa */
	expect_reject(p, sizeof(p), &s, NBG_WEIGHTS_FORMAT_F32, "value-not-fp16");
	put32(p + 8, 0x7f800000); /* infinity */
	expect_reject(p, sizeof(p), &s, NBG_WEIGHTS_FORMAT_F32, "value-not-fp16");
	put32(p + 8, 0x33000000); /* 2^-25: below fp16 */
	expect_reject(p, sizeof(p), &s, NBG_WEIGHTS_FORMAT_F32, "value-not-fp16");
	s.depthwise = 0;
	expect_reject(p, sizeof(p), &s, NBG_WEIGHTS_FORMAT_F32, "unsupported-data-type");
	(void)state;
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
		for (int mode = 0; mode < 11; mode++) {
			/* modes 9, 10: precode, each chunk's differences from 0 */
			tlayer L = make_layer(dims[d][0], dims[d][1], 1, 1, 1, 0, 0);
			ce_opts o = { .format = CE_TPFC, .zrl = mode & 1,
				      .avg_bias = (uint8_t)(mode & 2 && mode < 9 ? 171 : 0),
				      .chunk_align64 = mode >> 2 & 1, .map_seed = (uint32_t)(d + mode),
				      .tpfc_raw = mode == 8, .precode = mode >= 9 };
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

/* A synthesized file's target, and the format and writer of its stream. */
typedef struct synth_case {
	uint32_t target;
	int format;
	unsigned order;
} synth_case;

/* The public API on a file: the operation, its arrays, the ledger. */
static void test_synth_file(void **state)
{
	static const synth_case cases[] = {
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

/* int8 kernels (input zero point 0): the stored bias is the bias in every
 * format (the v8a uint8 rule would add sum(w) x 128); the codes are two's
 * complement, their range signed; a file with another input zero point is
 * unsupported. */
static void test_synth_int8(void **state)
{
	static const synth_case cases[] = {
		{ 0xad, CE_V8A, 0 }, { 0x88, CE_V7, CE_INTERLEAVED }, { 0x99, CE_V8B, CE_SIX },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tlayer L = make_layer(16, 4, i == 2 ? 1 : 3, 4, 1, 0, 0);
		ce_opts o = { .format = cases[i].format, .order = cases[i].order, .zrl_bits = 2,
			      .zrl = 1, .map_seed = 7 };
		size_t n, size, count;
		uint8_t *st, *b;
		const uint8_t *codes;
		decoded_file d;
		const nbg_weights_op *w;
		uint32_t lo, hi;
		int8_t want_lo = 127, want_hi = -128;

		L.l.int8 = 1;
		L.l.zp = 0;
		L.l.in_zp = 0;
		for (size_t j = 0; j < (size_t)16 * 4 * L.l.ky * L.l.kx; j++) {
			want_lo = (int8_t)L.w[j] < want_lo ? (int8_t)L.w[j] : want_lo;
			want_hi = (int8_t)L.w[j] > want_hi ? (int8_t)L.w[j] : want_hi;
		}
		st = ce_encode(&L.l, &o, &n);
		b = ce_nbg_file(&L.l, st, n, cases[i].target, &size);
		decode_buf(b, size, &d);
		w = nbg_weights_at(d.w, 0);
		if (nbg_weights_op_status(w) != NBG_WEIGHTS_DECODED)
			print_error("%s\n", nbg_weights_op_reason(w));
		assert_int_equal(nbg_weights_op_status(w), NBG_WEIGHTS_DECODED);
		assert_int_equal(nbg_weights_op_data_type(w), 2);
		codes = nbg_weights_op_codes(w, &count);
		assert_int_equal(count, (size_t)16 * 4 * L.l.ky * L.l.kx);
		assert_memory_equal(codes, L.w, count);
		assert_memory_equal(nbg_weights_op_bias(w), L.bias, 16 * sizeof(int32_t));
		assert_memory_equal(nbg_weights_op_bias_stored(w), L.bias, 16 * sizeof(int32_t));
		nbg_weights_op_stats(w, &lo, &hi, NULL);
		assert_int_equal((int32_t)lo, want_lo);
		assert_int_equal((int32_t)hi, want_hi);
		free_decoded(&d);
		free(b);
		/* an input zero point other than 0 */
		L.l.in_zp = 3;
		b = ce_nbg_file(&L.l, st, n, cases[i].target, &size);
		decode_buf(b, size, &d);
		w = nbg_weights_at(d.w, 0);
		assert_int_equal(nbg_weights_op_status(w), NBG_WEIGHTS_UNSUPPORTED);
		assert_string_equal(nbg_weights_op_reason_id(w), "unsupported-input-zero-point");
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

/* The value of a 21-bit table word, from its bits (doc/weights.md, "Lookup
 * tables of the NN engine"); exponent 0 holds +-0 only. */
static double word_value(uint32_t w)
{
	uint32_t e = w >> 15 & 31, m = w & 0x7fff;
	double v = e ? ldexp(1.0 + m / 32768.0, (int)e - 15) : 0.0;
	return w >> 20 & 1 ? -v : v;
}

/* A synthesized file whose one NN operation is an NN_LUT one (OPERATIONS
 * type 7) on fp16 kernels, its stream `table` of n bytes. */
static uint8_t *lut_file(const uint8_t *table, size_t n, size_t *size)
{
	tlayer L = make_layer(4, 1, 1, 1, 1, 0, 0);
	uint8_t *b = ce_nbg_file(&L.l, table, n, 0x1000003b, size);
	nbg_model *m;
	nbg_error e;

	assert_int_equal(nbg_parse(b, *size, NULL, &m, &e), NBG_OK);
	b[nbg_model_section(m, 4)->offset + 32] = 7;                 /* operation 1: NN_LUT */
	uint8_t *cmd = b + nbg_model_section(m, 7)->offset;
	cmd[4] = (uint8_t)((cmd[4] & ~3u) | 1);                      /* kernel_data_type fp16 */
	nbg_model_free(m);
	fx_refresh(b, *size);
	free_layer(&L);
	return b;
}

/* NN_LUT tables: 1,024 words of values and three words; the codes are the
 * words' values (computed here from their bits), the inputs the mapping of
 * the first tail word's bit 28; a word that is no value, or another size,
 * is refused with its reason and the word's bit offset. */
static void test_synth_lut(void **state)
{
	uint8_t table[4108];

	(void)state;
	for (int sign = 0; sign < 2; sign++) {
		for (uint32_t i = 0; i < 1024; i++)
			put32(table + 4 * i, (i & 1) << 20 | (1 + i % 29) << 15 | ((i * 97) & 0x7fff));
		put32(table + 4096, sign ? 0x35000000u : 0x25b23958u);
		put32(table + 4100, 0x4a3504);
		put32(table + 4104, 0);
		size_t size, count;
		uint8_t *b = lut_file(table, sizeof(table), &size);
		decoded_file d;
		decode_buf(b, size, &d);
		const nbg_weights_op *w = nbg_weights_at(d.w, 0);
		assert_int_equal(nbg_weights_op_status(w), NBG_WEIGHTS_DECODED);
		assert_int_equal(nbg_weights_op_format(w), NBG_WEIGHTS_FORMAT_LUT);
		assert_string_equal(nbg_weights_op_npy_descr(w), "<f4");
		const uint8_t *codes = nbg_weights_op_codes(w, &count);
		const uint16_t *in = nbg_weights_op_lut_inputs(w);
		assert_int_equal(count, 1024);
		assert_non_null(in);
		for (uint32_t i = 0; i < 1024; i++) {
			uint32_t bits = get32(codes + 4 * i);
			float f;
			memcpy(&f, &bits, sizeof(f));
			assert_true((double)f == word_value(get32(table + 4 * i)));
			/* sign: the exponent's top bit flipped, bit 9 the sign;
			 * else 5 mantissa bits of the non-negative halves */
			uint16_t want = sign ? (uint16_t)((((i & 511) << 6) ^ 0x4000) | (i & 512) << 6)
					     : (uint16_t)(((i << 5) & 0xffff) ^ 0x4000);
			assert_int_equal(in[i], want);
		}
		assert_int_equal(nbg_weights_op_lut_tail(w)[0], get32(table + 4096));
		assert_int_equal(nbg_weights_op_lut_tail(w)[1], 0x4a3504);
		assert_int_equal(nbg_weights_explained_bytes(d.w), sizeof(table));
		free_decoded(&d);
		free(b);
	}
	/* entry 5 with bit 25 set: no value of the layout */
	put32(table + 20, get32(table + 20) | 1u << 25);
	size_t size;
	uint8_t *b = lut_file(table, sizeof(table), &size);
	decoded_file d;
	decode_buf(b, size, &d);
	assert_int_equal(nbg_weights_op_status(nbg_weights_at(d.w, 0)), NBG_WEIGHTS_NOT_DECODED);
	assert_string_equal(nbg_weights_op_reason_id(nbg_weights_at(d.w, 0)), "lut-entry-invalid");
	assert_int_equal(nbg_weights_op_bit_offset(nbg_weights_at(d.w, 0)), 5 * 32);
	free_decoded(&d);
	free(b);
	/* a stream of 4,100 bytes */
	b = lut_file(table, 4100, &size);
	decode_buf(b, size, &d);
	assert_int_equal(nbg_weights_op_status(nbg_weights_at(d.w, 0)), NBG_WEIGHTS_UNSUPPORTED);
	assert_string_equal(nbg_weights_op_reason_id(nbg_weights_at(d.w, 0)), "unsupported-lut-size");
	free_decoded(&d);
	free(b);
}

/* An NN_LUT operation under a convolution's command whose stream is a
 * kernel stream, then a table in its last 4,160 bytes: the kernels decode
 * as the plain NN operation's (the same stream without the table, decoded
 * here side by side), the table's values are its words; a non-zero byte
 * after the table is refused where it is, a table word that is no value
 * at its bit. */
static void test_synth_conv_lut(void **state)
{
	tlayer L = make_layer(4, 3, 3, 3, 1, 0, 0);
	ce_opts o = { .format = CE_V8A, .zrl = 1 };
	size_t n, size, count, plain_count;
	uint8_t *st = ce_encode(&L.l, &o, &n);
	size_t k = (n + 63) / 64 * 64, total = k + 4160;
	uint8_t *both = calloc(1, total);

	(void)state;
	assert_non_null(both);
	memcpy(both, st, n);
	for (uint32_t i = 0; i < 1024; i++)
		put32(both + k + 4 * i, (i & 1) << 20 | (1 + i % 29) << 15 | ((i * 31) & 0x7fff));
	put32(both + k + 4096, 0x36000000u);
	for (int round = 0; round < 3; round++) {
		size_t plain_size;
		uint8_t *plain = ce_nbg_file(&L.l, st, n, 0x1000003b, &plain_size);
		uint8_t *b = ce_nbg_file(&L.l, both, total, 0x1000003b, &size);
		nbg_model *m;
		nbg_error e;
		assert_int_equal(nbg_parse(b, size, NULL, &m, &e), NBG_OK);
		b[nbg_model_section(m, 4)->offset + 32] = 7; /* operation 1: NN_LUT */
		nbg_model_free(m);
		fx_refresh(b, size);
		decoded_file d, dp;
		decode_buf(b, size, &d);
		decode_buf(plain, plain_size, &dp);
		const nbg_weights_op *w = nbg_weights_at(d.w, 0), *wp = nbg_weights_at(dp.w, 0);
		if (round == 1) { /* a byte after the table */
			assert_int_equal(nbg_weights_op_status(w), NBG_WEIGHTS_NOT_DECODED);
			assert_string_equal(nbg_weights_op_reason_id(w), "nonzero-tail");
			assert_int_equal(nbg_weights_op_bit_offset(w), 8 * (k + 4150));
		} else if (round == 2) { /* entry 7 with bit 24 set */
			assert_int_equal(nbg_weights_op_status(w), NBG_WEIGHTS_NOT_DECODED);
			assert_string_equal(nbg_weights_op_reason_id(w), "lut-entry-invalid");
			assert_int_equal(nbg_weights_op_bit_offset(w), 8 * k + 7 * 32);
		} else {
			uint64_t at = 0;
			assert_int_equal(nbg_weights_op_status(w), NBG_WEIGHTS_DECODED);
			assert_int_equal(nbg_weights_op_status(wp), NBG_WEIGHTS_DECODED);
			assert_int_equal(nbg_weights_op_format(w), NBG_WEIGHTS_FORMAT_V8A);
			const uint8_t *c = nbg_weights_op_codes(w, &count), *cp = nbg_weights_op_codes(wp, &plain_count);
			assert_int_equal(count, plain_count);
			assert_memory_equal(c, cp, count);
			assert_memory_equal(nbg_weights_op_bias(w), nbg_weights_op_bias(wp), 4 * sizeof(int32_t));
			const uint8_t *t = nbg_weights_op_lut_table(w, &at);
			assert_non_null(t);
			assert_int_equal(at, k);
			for (uint32_t i = 0; i < 1024; i++) {
				uint32_t bits = get32(t + 4 * i);
				float f;
				memcpy(&f, &bits, sizeof(f));
				assert_true((double)f == word_value(get32(both + k + 4 * i)));
			}
			assert_int_equal(nbg_weights_op_lut_tail(w)[0], 0x36000000u);
			assert_null(nbg_weights_op_lut_table(wp, NULL));
		}
		free_decoded(&d);
		free_decoded(&dp);
		free(b);
		free(plain);
		if (round == 0)
			both[k + 4150] = 1;
		else if (round == 1) {
			both[k + 4150] = 0;
			put32(both + k + 28, get32(both + k + 28) | 1u << 24);
		}
	}
	free(both);
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

/* Every operation's verdict is judged from the raw bytes, file by file,
 * rather than by counts per target: a stream nbgkit decodes is of a kind a
 * rule of doc/weights.md covers, and a refusal names a kind no rule covers
 * (the data type, the kernel shape, the stream flags, the input zero point,
 * the operation type) that the command's raw words, or the stream's header,
 * show; "no stream" is a kernel address no patch relocates to a
 * coefficient-table entry.  No stream of the corpus fails a check: every
 * file is valid, so a not-decoded stream is a decoder defect. */

/* What an operation's command says about its kernel stream, its bits cut
 * here from the stored words (doc/commands.md's field table). */
typedef struct raw_kind {
	int tp;                     /* a TP fully connected layer */
	uint32_t type;              /* OPERATIONS type */
	uint32_t dtype;             /* NN: the kernel's data type; TP: the input's, else the output's */
	uint32_t kx, ky, depthwise; /* kernel_xy_size, kernel_y_size, depthwise */
	uint32_t kz;                /* kernel_z_size | kernel_z_size2 << 14 */
	int tp_int8;                /* TP: int8 input and output */
	uint32_t fc;                /* NN layer_type 1: fully connected */
	uint32_t in_x, in_y, out_x, out_y, in_zp;
} raw_kind;

static uint32_t field_bits(uint32_t w, unsigned lo, unsigned n)
{
	return (w >> lo) & ((1u << n) - 1u);
}

static raw_kind raw_kind_of(const uint8_t *b, const decoded_file *d, const nbg_weights_op *o)
{
	const nbg_graph_operation *g = nbg_graph_operation_at(d->g, nbg_weights_op_operation(o));
	raw_kind k;

	memset(&k, 0, sizeof(k));
	k.type = g->type;
	k.tp = g->type == NBG_GRAPH_OP_TP;
	const nbg_cmd *c = nbg_commands_at(d->c, k.tp ? NBG_CMD_TP : NBG_CMD_NN,
					   nbg_weights_op_command(o));
	assert_non_null(c);
	const uint8_t *w = b + c->offset;
	if (k.tp) {
		uint32_t in_t = field_bits(get32(w + 48), 18, 3), out_t = field_bits(get32(w + 48), 21, 3);
		k.dtype = in_t ? in_t : out_t;
		k.tp_int8 = in_t == 2 && out_t == 2;
		k.in_zp = field_bits(get32(w + 4 * 29), 24, 8);
		return k;
	}
	k.fc = field_bits(get32(w), 0, 1);
	k.kx = field_bits(get32(w), 2, 4);
	k.kz = field_bits(get32(w), 6, 14) | field_bits(get32(w + 20), 26, 6) << 14;
	k.dtype = field_bits(get32(w + 4), 0, 2) | field_bits(get32(w + 60), 19, 1) << 2;
	k.in_x = field_bits(get32(w + 4), 6, 13);
	k.in_y = field_bits(get32(w + 4), 19, 13);
	k.out_x = field_bits(get32(w + 12), 6, 13);
	k.out_y = field_bits(get32(w + 12), 19, 13);
	k.ky = field_bits(get32(w + 32), 12, 4);
	k.in_zp = field_bits(get32(w + 60), 2, 16); /* in_image_border_const */
	k.depthwise = field_bits(get32(w + 88), 17, 1);
	return k;
}

static const char *dtype_name(uint32_t code)
{
	static const char *const names[8] = { "uint8", "fp16", "int8", NULL, "int16", NULL, NULL, "bf16" };
	return names[code & 7] ? names[code & 7] : "unknown";
}

/* A fully connected command of target 0x7d read as one column of ky rows
 * (doc/weights.md, "Fully connected commands of target 0x7d"). */
static int fc_column(const raw_kind *k)
{
	return !k->depthwise && (!k->ky || k->ky == k->kx) && k->kx >= 2 && k->in_y == k->kx &&
	       k->out_y == 1 && k->out_x == k->in_x;
}

/* The kernel's shape is one a format's rule covers, with format f (NONE:
 * every format is tried, v8a among them). */
static int shape_covered(const raw_kind *k, uint32_t target, nbg_weights_format f)
{
	uint32_t kx = k->kx;
	if (target == 0x7d && k->fc) {
		if (!fc_column(k))
			return 0;
		kx = 1;
	} else if (k->ky && k->ky != k->kx && k->kx != 1 && k->ky != 1) {
		return 0; /* non-square, neither side 1: the axis order is open */
	}
	if (f == NBG_WEIGHTS_FORMAT_V8A || f == NBG_WEIGHTS_FORMAT_NONE)
		return 1;
	if (k->depthwise)
		return 0;
	/* the v7 layout beyond 3x3: kernels over several channels, on the
	 * targets whose order the networks compiled for several targets fix */
	return kx <= 3 || (k->kz > 1 && (target == 0x7d || target == 0x88 || target == 0x99));
}

/* The kernel address's patch (NN word 5, TP word 11) and its entry: 1 when
 * it relocates to bytes inside an entry of the coefficient table. */
static int kernel_entry(const uint8_t *b, const decoded_file *d, const nbg_weights_op *o, int tp,
			int *patched, uint64_t *where)
{
	const nbg_graph_operation *g = nbg_graph_operation_at(d->g, nbg_weights_op_operation(o));
	const nbg_cmd *c = nbg_commands_at(d->c, tp ? NBG_CMD_TP : NBG_CMD_NN,
					   nbg_weights_op_command(o));
	int t = NBG_GRAPH_TABLE_COEF_DATA;

	if (!nbg_graph_table_at(d->g, (size_t)t)->present)
		t = NBG_GRAPH_TABLE_LCD;
	*patched = 0;
	for (uint64_t i = g->patch_index; i < (uint64_t)g->patch_index + g->patch_count; i++) {
		const nbg_graph_patch *p = nbg_graph_patch_at(d->g, i);
		const nbg_graph_table *tb = nbg_graph_table_at(d->g, (size_t)t);
		if (!p || p->type != 1 || p->dest_offset != (tp ? 44u : 20u))
			continue;
		*patched = 1;
		/* the stream's offset in the entry: the source offset; before
		 * 0x10009 the address the command stores (NN kernel_address:
		 * word 5 bits 0-25, >> 6; TP word 11) less the source offset,
		 * the buffer's compile-time base (doc/weights.md) */
		uint64_t at = p->src_offset;
		if (nbg_model_version(d->m) < 0x10009u && c && p->src_offset) {
			uint32_t word = get32(b + c->offset + p->dest_offset);
			uint64_t addr = tp ? word : (uint64_t)(word & 0x3FFFFFFu) << 6;
			at = addr >= p->src_offset ? addr - p->src_offset : addr + p->src_offset;
		}
		if (!(p->source_type == NBG_GRAPH_SRC_MISC_DYNA_GENERIC && tb->present &&
		      p->index >= 0 && (size_t)p->index < tb->entry_count &&
		      at < tb->entries[p->index].size))
			return 0;
		*where = tb->data_offset + tb->entries[p->index].offset + at;
		return 1;
	}
	return 0;
}

static int has(const char *s, const char *part)
{
	return strstr(s, part) != NULL;
}

/* The verdict of one operation, judged from the raw bytes; 0 when it does
 * not hold (the caller prints the operation). */
static int verdict_holds(const uint8_t *b, const decoded_file *d, const nbg_weights_op *o,
			 const raw_kind *k)
{
	uint32_t target = nbg_model_target(d->m);
	nbg_weights_format f = nbg_weights_target_format(target);
	const char *id = nbg_weights_op_reason_id(o), *why = nbg_weights_op_reason(o);
	const uint8_t *p = b + nbg_weights_op_stream_offset(o);
	char text[64];
	uint64_t where = UINT64_MAX;
	int patched, entry = kernel_entry(b, d, o, k->tp, &patched, &where);

	/* a located stream starts where the patch says */
	if (entry && nbg_weights_op_status(o) != NBG_WEIGHTS_NO_STREAM &&
	    nbg_weights_op_stream_offset(o) != where)
		return 0;

	switch (nbg_weights_op_status(o)) {
	case NBG_WEIGHTS_NO_STREAM:
		return !strcmp(id, patched ? "no-coefficient-entry" : "no-kernel-reference") && !entry;
	case NBG_WEIGHTS_DECODED:
		if (k->tp)
			return entry && (k->dtype == 0 || k->tp_int8);
		/* an NN_LUT table: 4,108 bytes to its entry's end (raw_checks); or,
		 * under a convolution's command (kernel_z_size set), a longer
		 * stream: int16 kernels in a v8a stream, then the table */
		if (k->type == NBG_GRAPH_OP_NN_LUT && nbg_weights_op_stream_size(o) == 4108)
			return entry && nbg_weights_op_format(o) == NBG_WEIGHTS_FORMAT_LUT;
		if (k->type == NBG_GRAPH_OP_NN_LUT)
			return entry && k->kz && nbg_weights_op_stream_size(o) > 4160 && k->dtype == 4 &&
			       (p[0] & 15) == 2 && nbg_weights_op_format(o) == NBG_WEIGHTS_FORMAT_V8A &&
			       nbg_weights_op_lut_table(o, NULL);
		/* uint8 kernels; int8 ones with input zero point 0; int16 ones in
		 * a v8a stream whose header (byte 0) has bit16 set */
		return entry && k->type == NBG_GRAPH_OP_NN &&
		       (k->dtype == 0 || (k->dtype == 2 && k->in_zp == 0) ||
			(k->dtype == 4 && (p[0] & 15) == 2 &&
			 nbg_weights_op_format(o) == NBG_WEIGHTS_FORMAT_V8A) ||
			(k->dtype == 1 && k->depthwise && k->kx == 1 && k->kz == 1 &&
			 nbg_weights_op_format(o) == NBG_WEIGHTS_FORMAT_F32)) &&
		       shape_covered(k, target, f);
	case NBG_WEIGHTS_UNSUPPORTED:
		break;
	default:
		return 0; /* a stream of a valid file failed a check */
	}
	if (!entry)
		return 0;
	if (!strcmp(id, "unsupported-lut-size")) {
		snprintf(text, sizeof(text), "stream of %" PRIu64 " bytes", nbg_weights_op_stream_size(o));
		return k->type == NBG_GRAPH_OP_NN_LUT && nbg_weights_op_stream_size(o) != 4108 &&
		       has(why, text);
	}
	if (!strcmp(id, "unsupported-operation-type"))
		return !k->tp && k->type != NBG_GRAPH_OP_NN &&
		       has(why, nbg_graph_op_type_name(k->type));
	if (!strcmp(id, "unsupported-data-type"))
		return k->dtype != 0 && (k->tp ? !k->tp_int8 : k->dtype != 2) &&
		       has(why, dtype_name(k->dtype));
	if (!strcmp(id, "unsupported-input-zero-point")) {
		snprintf(text, sizeof(text), "in_image_border_const %d", (int)k->in_zp);
		return !k->tp && k->dtype == 2 && k->in_zp != 0 && has(why, text);
	}
	if (!strcmp(id, "unsupported-fully-connected"))
		return !k->tp && target == 0x7d && k->fc && !fc_column(k);
	if (!strcmp(id, "unsupported-kernel-shape")) {
		snprintf(text, sizeof(text), "%ux%u", k->kx, k->ky ? k->ky : k->kx);
		return !k->tp && k->dtype == 0 && !shape_covered(k, target, f) &&
		       (has(why, text) || (k->depthwise && has(why, "depthwise")));
	}
	if (!strcmp(id, "unsupported-stream-flags")) {
		/* the v8 header's byte 0: precode, bit16, fp16; avg_bias at 24 */
		unsigned flags = p[0] & 15, avg = p[24] | (unsigned)p[25] << 8;
		return k->dtype == 0 &&
		       ((flags & 2 && has(why, "16-bit")) || (flags & 4 && has(why, "floating-point")) ||
			(flags & 1 && (k->tp || avg) && has(why, "precode")));
	}
	return 0;
}

typedef struct kind_count {
	char kind[48];   /* "NN uint8 v7", "TP uint8 tp-fc" */
	char what[48];   /* "decoded", a reason id */
	size_t n;
} kind_count;

typedef struct corpus_walk {
	kind_count k[128];
	size_t nk, files, decoded, raw_checked, failed;
} corpus_walk;

static void tally(corpus_walk *cw, const char *kind, const char *what)
{
	size_t i;
	for (i = 0; i < cw->nk && (strcmp(cw->k[i].kind, kind) || strcmp(cw->k[i].what, what)); i++)
		;
	if (i == cw->nk) {
		assert_true(cw->nk < sizeof(cw->k) / sizeof(cw->k[0]));
		snprintf(cw->k[i].kind, sizeof(cw->k[i].kind), "%s", kind);
		snprintf(cw->k[i].what, sizeof(cw->k[i].what), "%s", what);
		cw->nk++;
	}
	cw->k[i].n++;
}

/* An NN_LUT table at p: 1,024 words of 21 bits (a sign, 5 exponent bits of
 * bias 15, 15 mantissa bits; exponent 0 only for +-0), then 3 words; each
 * value in `values` (float32 little-endian) the word's, computed here from
 * the bits; the tail the words after the entries. */
static void lut_words(const uint8_t *p, const uint8_t *values, const nbg_weights_op *o)
{
	for (size_t i = 0; i < 1024; i++) {
		uint32_t w = get32(p + 4 * i), e = w >> 15 & 31, mant = w & 0x7fff;
		assert_int_equal(w >> 21, 0);
		assert_true(e != 31 && (e || !mant));
		double v = e ? ldexp(1.0 + mant / 32768.0, (int)e - 15) : 0.0;
		uint32_t bits = get32(values + 4 * i);
		float f;
		memcpy(&f, &bits, sizeof(f));
		assert_true((double)f == (w >> 20 ? -v : v) && (signbit(f) != 0) == (w >> 20 != 0));
	}
	for (int k = 0; k < 3; k++)
		assert_int_equal(nbg_weights_op_lut_tail(o)[k], get32(p + 4096 + 4 * k));
}

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
	if (nbg_weights_op_format(o) == NBG_WEIGHTS_FORMAT_LUT) {
		size_t cn;
		const uint8_t *codes = nbg_weights_op_codes(o, &cn);
		assert_int_equal(n, 4108);
		assert_int_equal(cn, 1024);
		assert_int_equal(nbg_weights_op_code_bytes(o), 4);
		lut_words(p, codes, o);
		assert_true((nbg_weights_op_lut_inputs(o) != NULL) == (nbg_weights_op_data_type(o) == 1));
		return;
	}
	uint64_t at;
	const uint8_t *table = nbg_weights_op_lut_table(o, &at);
	if (table) {
		/* a convolution's NN_LUT stream: the table in the last 4,160
		 * bytes (4,108 and zeros to the 64-byte end), the kernels before */
		assert_true(n > 4160);
		assert_int_equal(at, n - 4160);
		lut_words(p + at, table, o);
		for (size_t i = (size_t)at + 4108; i < n; i++)
			assert_int_equal(p[i], 0);
		n = (size_t)at;
	}
	if (nbg_weights_op_format(o) == NBG_WEIGHTS_FORMAT_F32) {
		/* a float32 pair per channel, the first an fp16 value exactly */
		assert_true((size_t)sh[0] * 8 <= n);
		for (size_t c = 0; c < sh[0]; c++)
			assert_int_equal(get32(p + 8 * c) & 0x1fff, 0);
		for (size_t pos = (size_t)sh[0] * 8; pos < n; pos++)
			assert_int_equal(p[pos], 0);
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
		/* the biases: 48 bits each in a 16-bit stream (bit16, byte 0) */
		if (nbg_weights_op_format(o) == NBG_WEIGHTS_FORMAT_V8A)
			pos += (size_t)sh[0] * (p[0] & 2 ? 6 : 4);
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

	assert_non_null(b);
	decode_buf(b, size, &d);
	cw->files++;
	for (size_t i = 0; i < nbg_weights_count(d.w); i++) {
		const nbg_weights_op *o = nbg_weights_at(d.w, i);
		raw_kind k = raw_kind_of(b, &d, o);
		char kind[48];
		size_t cnt;
		snprintf(kind, sizeof(kind), "%s %s %s", k.tp ? "TP" : "NN",
			 k.tp || k.type == NBG_GRAPH_OP_NN ? dtype_name(k.dtype)
							   : nbg_graph_op_type_name(k.type),
			 nbg_weights_format_name(k.tp ? NBG_WEIGHTS_FORMAT_TPFC
						      : nbg_weights_target_format(nbg_model_target(d.m))));
		tally(cw, kind, nbg_weights_op_status(o) == NBG_WEIGHTS_DECODED ? "decoded"
					: nbg_weights_op_reason_id(o));
		if (!verdict_holds(b, &d, o, &k)) {
			print_error("%s op %zu (%s, %ux%u kernel): %s %s: not what its raw bytes "
				    "say\n", path, nbg_weights_op_operation(o), kind, k.kx, k.ky,
				    nbg_weights_status_name(nbg_weights_op_status(o)),
				    nbg_weights_op_reason(o));
			cw->failed++;
		}
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

static void test_corpus_streams(void **state)
{
	corpus_walk *cw = calloc(1, sizeof(*cw));

	assert_non_null(cw);
	tc_each_corpus_file("v1", walk_file, cw);
	tc_each_corpus_file("v2", walk_file, cw);
	assert_int_equal(cw->files, tc_manifest_files("v1") + tc_manifest_files("v2"));
	print_message("kernel streams by kind (engine, kernel data type, format of the target):\n");
	for (size_t i = 0; i < cw->nk; i++)
		print_message("  %-24s %-30s %zu\n", cw->k[i].kind, cw->k[i].what, cw->k[i].n);
	assert_int_equal(cw->failed, 0);
	assert_true(cw->decoded > 0);
	assert_int_equal(cw->raw_checked, cw->decoded);
	free(cw);
}

/* ------------------------------------ networks compiled for several targets */

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
	int ok = 1;

	if (!out || out != nbg_weights_op_shape(b)[0])
		return 0;
	nbg_weights_op_codes(a, &na);
	nbg_weights_op_codes(b, &nb);
	/* one channel of each at a time */
	int32_t *x = malloc((na / out + nb / out + 1) * sizeof(int32_t)), *y = x + na / out;
	assert_non_null(x);
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

/* Operations a compilation lowers for some targets only, so that the
 * reference of their family may have no counterpart: a 4x4 depthwise kernel
 * of one constant (the global average pooling some targets run on the NN
 * cores), 1x1x2 additions, kernels of the zero point alone (no weight:
 * a 2x2 one some compilations put where others pool), and single-channel
 * kernels of one non-zero weight each (an identity, as the 3x1 ones some
 * compilations put before a max pooling). */
static int lowered_apart(const nbg_weights_op *o)
{
	const uint32_t *sh = nbg_weights_op_shape(o);
	uint32_t min, max;
	uint64_t zp;

	nbg_weights_op_stats(o, &min, &max, &zp);
	if ((sh[1] == 1 && sh[2] == 4 && sh[3] == 4 && min == max) ||
	    (sh[0] == 1 && sh[1] == 2 && sh[2] == 1 && sh[3] == 1) ||
	    (min == max && (int32_t)min == nbg_weights_op_zero_point(o)))
		return 1;
	/* one non-zero weight per single-channel kernel: an identity */
	if (sh[1] != 1 || zp != (uint64_t)sh[0] * (sh[2] * sh[3] - 1))
		return 0;
	int32_t v[225];
	for (uint32_t c = 0; c < sh[0]; c++)
		if (sh[2] * sh[3] > 225 || nonzero(o, c, v) != 1)
			return 0;
	return 1;
}

/* The networks compiled for several targets.  A family is one compilation
 * of one network: the files of one version whose network name and input
 * and output shapes and formats are the same.  Its
 * files of different targets use stream formats that share nothing, so
 * equal weights across them are evidence for each format's decoding.  The
 * reference of a family is its file with the most decoded operations (the
 * lowest target on a tie); every decoded operation of every file of
 * another target must have an operation of the reference with, channel by
 * channel, the same non-zero weights (w - zp, in order) and then the same
 * corrected bias -- unless it is lowered apart (lowered_apart) or the
 * reference has an operation of its kernel shape that is not decoded.  A
 * TP fully connected layer is compared whole, output by output, since
 * targets split its outputs over different numbers of operations (with an
 * NN operation of the reference where that runs it on the NN cores).  A file
 * with no other target in its family is then judged across compiler
 * versions (fam_versions): the same I/O (network names differ between
 * versions: "sdk_" prefixes), weights only (compiler versions differ in
 * the biases), against the file of another target that decodes every NN
 * operation and holds the weights of most of its operations; a file with
 * no such file holding half is reported as not judged. */
typedef struct fam_file {
	char path[4400];
	char key[1024];
	size_t io;         /* where the I/O shapes and formats start in key */
	int done, judged;  /* judged: against a file of another target */
} fam_file;

typedef struct fam_list {
	fam_file *f;
	size_t n, cap;
} fam_list;

/* The family key of a file: version, network name, I/O shapes and formats. */
static void fam_collect(const char *path, void *arg)
{
	fam_list *l = arg;
	size_t size, k;
	uint8_t *b = fx_read_file(path, &size);
	nbg_model *m;
	fam_file *f;

	assert_non_null(b);
	assert_int_equal(nbg_parse(b, size, NULL, &m, NULL), NBG_OK);
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->f = realloc(l->f, l->cap * sizeof(*l->f));
		assert_non_null(l->f);
	}
	f = &l->f[l->n++];
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s", path);
	k = (size_t)snprintf(f->key, sizeof(f->key), "0x%x %s", nbg_model_version(m),
			     nbg_model_family(m) == 1 ? nbg_model_v1(m)->network_name
						      : nbg_model_network_info(m)->name);
	f->io = k;
	for (int out = 0; out < 2; out++) {
		size_t n = out ? nbg_model_output_count(m) : nbg_model_input_count(m);
		for (size_t i = 0; i < n && k < sizeof(f->key) - 64; i++) {
			const nbg_io *io = out ? nbg_model_output_at(m, i) : nbg_model_input_at(m, i);
			k += (size_t)snprintf(f->key + k, sizeof(f->key) - k, " %c%u:", out ? '>' : '<',
					      io->data_format);
			for (uint32_t d = 0; d < io->dim_count && k < sizeof(f->key) - 16; d++)
				k += (size_t)snprintf(f->key + k, sizeof(f->key) - k, "%u,", io->dims[d]);
		}
	}
	nbg_model_free(m);
	free(b);
}

typedef struct fam_member {
	fam_file *file;
	uint8_t *buf;
	decoded_file d;
	size_t decoded;
	int versions_alone; /* weights only: a file its version's family left unjudged */
} fam_member;

typedef struct fam_totals {
	size_t families, files, decoded, matched, apart, undecoded_ref, partial, failed;
	unsigned seen, across; /* stream formats decoded; matched by another format */
	int weights_only;      /* across compiler versions: the biases may differ */
} fam_totals;

/* An operation of ref of o's kernel shape that is not decoded. */
static int undecoded_of_shape(const decoded_file *ref, const nbg_weights_op *o)
{
	for (size_t i = 0; i < nbg_weights_count(ref->w); i++) {
		const nbg_weights_op *r = nbg_weights_at(ref->w, i);
		if (nbg_weights_op_status(r) != NBG_WEIGHTS_DECODED &&
		    !memcmp(nbg_weights_op_shape(r), nbg_weights_op_shape(o), 4 * sizeof(uint32_t)))
			return 1;
	}
	return 0;
}

/* A TP fully connected layer: its operations in operation order, each
 * computing the next of its outputs from every input (doc/weights.md). */
typedef struct fc_layer {
	const nbg_weights_op *ops[64];
	size_t n;
	uint32_t layer, outputs, inputs;
	int whole; /* every operation decoded */
} fc_layer;

/* The TP fully connected layers of d; returns how many (at most max). */
static size_t fc_layers(const decoded_file *d, fc_layer *L, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < nbg_weights_count(d->w); i++) {
		const nbg_weights_op *o = nbg_weights_at(d->w, i);
		const nbg_graph_operation *g = nbg_graph_operation_at(d->g, nbg_weights_op_operation(o));
		size_t k;
		if (g->type != NBG_GRAPH_OP_TP)
			continue;
		for (k = 0; k < n && L[k].layer != g->layer_id; k++)
			;
		if (k == n) {
			assert_true(n < max);
			memset(&L[n], 0, sizeof(L[n]));
			L[n].layer = g->layer_id;
			L[n].inputs = nbg_weights_op_shape(o)[1];
			L[n++].whole = 1;
		}
		assert_true(L[k].n < sizeof(L[k].ops) / sizeof(L[k].ops[0]));
		L[k].ops[L[k].n++] = o;
		L[k].outputs += nbg_weights_op_shape(o)[0];
		L[k].whole &= nbg_weights_op_status(o) == NBG_WEIGHTS_DECODED &&
			      nbg_weights_op_shape(o)[1] == L[k].inputs;
	}
	return n;
}

/* Output r of a layer: its operation, and its channel there. */
static const nbg_weights_op *fc_row(const fc_layer *L, uint32_t r, uint32_t *c)
{
	for (size_t i = 0; i < L->n; i++) {
		uint32_t out = nbg_weights_op_shape(L->ops[i])[0];
		if (r < out) {
			*c = r;
			return L->ops[i];
		}
		r -= out;
	}
	return NULL;
}

/* Two whole layers compute the same outputs: per output the same non-zero
 * weights and the same bias, however the outputs are split. */
static int same_rows(const fc_layer *a, const fc_layer *b, int biases)
{
	int32_t *x, *y;
	int ok = a->whole && b->whole && a->outputs == b->outputs && a->inputs == b->inputs;

	x = malloc(2 * ((size_t)a->inputs + 1) * sizeof(int32_t));
	assert_non_null(x);
	y = x + a->inputs + 1;
	for (uint32_t r = 0; ok && r < a->outputs; r++) {
		uint32_t ca = 0, cb = 0;
		const nbg_weights_op *oa = fc_row(a, r, &ca), *ob = fc_row(b, r, &cb);
		size_t ka = nonzero(oa, ca, x), kb = nonzero(ob, cb, y);
		ok = ka == kb && !memcmp(x, y, ka * sizeof(int32_t)) &&
		     (!biases || nbg_weights_op_bias(oa)[ca] == nbg_weights_op_bias(ob)[cb]);
	}
	free(x);
	return ok;
}

/* A whole TP fully connected layer the reference runs on the NN cores: an
 * NN operation of its outputs whose channels hold, output by output, the
 * layer's non-zero weights (and bias). */
static int fc_as_nn(const fc_layer *a, const decoded_file *ref, int biases)
{
	int32_t *x = malloc(2 * ((size_t)a->inputs + 1) * sizeof(int32_t)), *y = x + a->inputs + 1;
	int found = 0;

	assert_non_null(x);
	for (size_t i = 0; !found && i < nbg_weights_count(ref->w); i++) {
		const nbg_weights_op *r = nbg_weights_at(ref->w, i);
		size_t n;
		if (nbg_weights_op_status(r) != NBG_WEIGHTS_DECODED ||
		    nbg_weights_op_format(r) == NBG_WEIGHTS_FORMAT_TPFC ||
		    nbg_weights_op_shape(r)[0] != a->outputs)
			continue;
		nbg_weights_op_codes(r, &n);
		if (n / a->outputs > a->inputs)
			continue;
		found = 1;
		for (uint32_t o = 0; found && o < a->outputs; o++) {
			uint32_t c = 0;
			const nbg_weights_op *oa = fc_row(a, o, &c);
			size_t ka = nonzero(oa, c, x), kb = nonzero(r, o, y);
			found = ka == kb && !memcmp(x, y, ka * sizeof(int32_t)) &&
				(!biases || nbg_weights_op_bias(oa)[c] == nbg_weights_op_bias(r)[o]);
		}
	}
	free(x);
	return found;
}

/* The TP fully connected layers of a member against the reference's. */
static void fam_fc(const fam_member *f, const fam_member *ref, fam_totals *t)
{
	fc_layer a[16], b[16];
	size_t na = fc_layers(&f->d, a, 16), nb = fc_layers(&ref->d, b, 16), j;

	for (size_t i = 0; i < na; i++) {
		size_t decoded = 0;
		for (size_t k = 0; k < a[i].n; k++)
			decoded += nbg_weights_op_status(a[i].ops[k]) == NBG_WEIGHTS_DECODED;
		t->decoded += decoded;
		if (!a[i].whole) {
			t->partial += decoded;
			if (decoded)
				print_message("%s: fully connected layer %u not judged across "
					      "targets: %zu of its %zu operations decode\n",
					      f->file->path, a[i].layer, decoded, a[i].n);
			continue;
		}
		for (j = 0; j < nb && !same_rows(&a[i], &b[j], !t->weights_only); j++)
			;
		if (j < nb || fc_as_nn(&a[i], &ref->d, !t->weights_only)) {
			t->matched += a[i].n;
			continue;
		}
		/* a layer of its size the reference does not decode whole */
		for (j = 0; j < nb && (b[j].whole || b[j].outputs != a[i].outputs ||
				       b[j].inputs != a[i].inputs); j++)
			;
		if (j < nb) {
			t->undecoded_ref += a[i].n;
			continue;
		}
		print_error("%s: fully connected layer %u (%u outputs of %u inputs, %zu operations) "
			    "equals none of %s's\n", f->file->path, a[i].layer, a[i].outputs,
			    a[i].inputs, a[i].n, ref->file->path);
		t->failed++;
	}
}

/* One decoded operation of a member (not a TP fully connected one) against
 * the reference. */
static void fam_op(const fam_member *f, const fam_member *ref, const nbg_weights_op *o,
		   fam_totals *t)
{
	const nbg_weights_op *r = counterpart(&ref->d, o);

	t->decoded++;
	t->seen |= 1u << nbg_weights_op_format(o);
	if (r && same_kernels(o, r, !t->weights_only)) {
		t->matched++;
		if (nbg_weights_op_format(r) != nbg_weights_op_format(o))
			t->across |= 1u << nbg_weights_op_format(o) | 1u << nbg_weights_op_format(r);
	} else if (r) {
		print_error("%s op %zu and %s op %zu: the biases differ\n", f->file->path,
			    nbg_weights_op_operation(o), ref->file->path, nbg_weights_op_operation(r));
		t->failed++;
	} else if (lowered_apart(o)) {
		t->apart++;
	} else if (undecoded_of_shape(&ref->d, o)) {
		t->undecoded_ref++;
	} else {
		print_error("%s op %zu: no counterpart in %s\n", f->file->path,
			    nbg_weights_op_operation(o), ref->file->path);
		t->failed++;
	}
}

/* Every decoded operation of member f against ref. */
static void fam_against(const fam_member *f, const fam_member *ref, fam_totals *t)
{
	t->files++;
	fam_fc(f, ref, t);
	for (size_t i = 0; i < nbg_weights_count(f->d.w); i++) {
		const nbg_weights_op *o = nbg_weights_at(f->d.w, i);
		if (nbg_weights_op_status(o) == NBG_WEIGHTS_DECODED &&
		    nbg_weights_op_format(o) != NBG_WEIGHTS_FORMAT_TPFC)
			fam_op(f, ref, o, t);
	}
}

/* One family: its members against its reference; members alone on their
 * target (the reference's included) are reported as not judged. */
static void fam_compare(fam_member *mem, size_t n, fam_totals *t)
{
	size_t ref = 0, others = 0;

	for (size_t i = 1; i < n; i++)
		if (mem[i].decoded > mem[ref].decoded ||
		    (mem[i].decoded == mem[ref].decoded &&
		     nbg_model_target(mem[i].d.m) < nbg_model_target(mem[ref].d.m)))
			ref = i;
	for (size_t k = 0; k < n; k++)
		others += nbg_model_target(mem[k].d.m) != nbg_model_target(mem[ref].d.m);
	if (!others) {
		for (size_t k = 0; k < n; k++)
			print_message("%s: not judged across targets in its version: no file of "
				      "another target has its version, network name and I/O\n",
				      mem[k].file->path);
		return;
	}
	for (size_t k = 0; k < n; k++)
		mem[k].file->judged = 1;
	t->families++;
	t->seen |= mem[ref].decoded ? 1u << NBG_WEIGHTS_FORMAT_NONE : 0;
	print_message("family %s: %zu files, reference %s\n", mem[ref].file->key, n,
		      mem[ref].file->path);
	for (size_t k = 0; k < n; k++) {
		const decoded_file *f = &mem[k].d;
		if (nbg_model_target(f->m) == nbg_model_target(mem[ref].d.m))
			continue;
		fam_against(&mem[k], &mem[ref], t);
	}
}

/* Every NN operation of d decoded: a reference across compiler versions,
 * whose operations may be lowered in other ways, must leave none out. */
static int nn_complete(const decoded_file *d)
{
	for (size_t i = 0; i < nbg_weights_count(d->w); i++) {
		const nbg_weights_op *o = nbg_weights_at(d->w, i);
		const nbg_graph_operation *g = nbg_graph_operation_at(d->g, nbg_weights_op_operation(o));
		if (g->type == NBG_GRAPH_OP_NN && nbg_weights_op_status(o) != NBG_WEIGHTS_DECODED)
			return 0;
	}
	return 1;
}

/* The decoded NN operations of f with an operation of ref holding their
 * weights. */
static size_t weight_matches(const decoded_file *f, const decoded_file *ref)
{
	size_t n = 0;

	for (size_t i = 0; i < nbg_weights_count(f->w); i++) {
		const nbg_weights_op *o = nbg_weights_at(f->w, i);
		n += nbg_weights_op_status(o) == NBG_WEIGHTS_DECODED &&
		     nbg_weights_op_format(o) != NBG_WEIGHTS_FORMAT_TPFC && counterpart(ref, o);
	}
	return n;
}

/* Across compiler versions, weights only: each member its version's
 * family left unjudged against the member of another target (same I/O,
 * any network name) that decodes every NN operation and holds the weights
 * of most of its operations (at least half, else it is not judged). */
static void fam_versions(fam_member *mem, size_t n, fam_totals *t)
{
	for (size_t k = 0; k < n; k++) {
		const decoded_file *f = &mem[k].d;
		size_t ref = n, best = 0, nn = 0;
		if (!mem[k].versions_alone)
			continue;
		for (size_t i = 0; i < nbg_weights_count(f->w); i++)
			nn += nbg_weights_op_status(nbg_weights_at(f->w, i)) == NBG_WEIGHTS_DECODED &&
			      nbg_weights_op_format(nbg_weights_at(f->w, i)) != NBG_WEIGHTS_FORMAT_TPFC;
		for (size_t i = 0; i < n; i++) {
			size_t m;
			if (nbg_model_target(mem[i].d.m) == nbg_model_target(f->m) ||
			    !nn_complete(&mem[i].d) || (m = weight_matches(f, &mem[i].d)) <= best)
				continue;
			best = m;
			ref = i;
		}
		if (ref == n || 2 * best < nn) {
			print_message("%s: not judged across targets: no file of another target "
				      "with its I/O that decodes every NN operation holds the weights "
				      "of half its operations\n", mem[k].file->path);
			continue;
		}
		print_message("%s: weights against %s (another compiler version)\n",
			      mem[k].file->path, mem[ref].file->path);
		t->families++;
		fam_against(&mem[k], &mem[ref], t);
	}
}

/* The members of the family of l->f[i] (by_io: the files of its I/O
 * shapes and formats, every version and network name), decoded; returns
 * how many. */
static size_t fam_load(fam_list *l, size_t i, fam_member *mem, int by_io)
{
	size_t n = 0;

	for (size_t j = i; j < l->n; j++) {
		size_t size;
		if (l->f[j].done ||
		    strcmp(l->f[j].key + (by_io ? l->f[j].io : 0),
			   l->f[i].key + (by_io ? l->f[i].io : 0)))
			continue;
		l->f[j].done = 1;
		mem[n].file = &l->f[j];
		mem[n].versions_alone = by_io && !l->f[j].judged;
		mem[n].buf = fx_read_file(l->f[j].path, &size);
		assert_non_null(mem[n].buf);
		decode_buf(mem[n].buf, size, &mem[n].d);
		mem[n].decoded = nbg_weights_status_count(mem[n].d.w, NBG_WEIGHTS_DECODED);
		n++;
	}
	return n;
}

/* Every family (by_net: network, every version) with a member to judge
 * compared; the totals in t. */
static void fam_pass(fam_list *l, fam_totals *t)
{
	for (size_t i = 0; i < l->n; i++)
		l->f[i].done = 0;
	for (size_t i = 0; i < l->n; i++) {
		fam_member *mem;
		size_t n, alone = 0;
		if (l->f[i].done)
			continue;
		mem = calloc(l->n, sizeof(*mem));
		assert_non_null(mem);
		n = fam_load(l, i, mem, t->weights_only);
		for (size_t k = 0; k < n; k++)
			alone += mem[k].versions_alone;
		if (!t->weights_only)
			fam_compare(mem, n, t);
		else if (alone)
			fam_versions(mem, n, t);
		for (size_t k = 0; k < n; k++) {
			free_decoded(&mem[k].d);
			free(mem[k].buf);
		}
		free(mem);
	}
}

static void fam_summary(fam_totals *t)
{
	print_message("%zu %s of several targets: %zu files besides their references' "
		      "target, %zu decoded operations; %zu equal the reference's, %s; "
		      "%zu lowered apart; %zu whose counterpart the reference does not decode; %zu "
		      "in fully connected layers not decoded whole\n", t->families,
		      t->weights_only ? "files judged across compiler versions" : "families", t->files,
		      t->decoded, t->matched, t->weights_only ? "weights only" : "biases included",
		      t->apart, t->undecoded_ref, t->partial);
	assert_int_equal(t->failed, 0);
	assert_int_equal(t->decoded, t->matched + t->apart + t->undecoded_ref + t->partial);
}

static void test_family_targets(void **state)
{
	fam_list l = { 0 };
	fam_totals t = { 0 }, v = { 0 };

	tc_each_corpus_file("v1", fam_collect, &l);
	tc_each_corpus_file("v2", fam_collect, &l);
	fam_pass(&l, &t);
	fam_summary(&t);
	/* every stream format these families decode is matched by another */
	t.seen &= ~(1u << NBG_WEIGHTS_FORMAT_NONE | 1u << NBG_WEIGHTS_FORMAT_TPFC);
	for (int f = 0; f < NBG_WEIGHTS_FORMAT_COUNT; f++)
		if (t.seen >> f & 1)
			print_message("  %s: %s\n", nbg_weights_format_name((nbg_weights_format)f),
				      t.across >> f & 1 ? "matched by another format" : "not matched across formats");
	assert_true(t.families > 0);
	assert_int_equal(t.across & t.seen, t.seen);
	/* the files no family judged, weights only, against their network
	 * compiled by another compiler version for another target (the
	 * compiler versions differ in biases: doc/weights.md) */
	v.weights_only = 1;
	fam_pass(&l, &v);
	fam_summary(&v);
	free(l.f);
}

/* doc/cli.md's example is `nbg weights` on a corpus file, as
 * scripts/gen-docs.sh writes it (the path as the docs name it). */
static void test_cli_doc_block(void **state)
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
	doc = (char *)fx_read_file(NBG_SOURCE_DIR "/doc/cli.md", &len);
	assert_non_null(doc);
	snprintf(marker, sizeof(marker), "<!-- BEGIN nbg weights %s -->\n", shown);
	b = strstr(doc, marker);
	assert_non_null(b);
	b += strlen(marker);
	snprintf(marker, sizeof(marker), "<!-- END nbg weights %s -->\n", shown);
	e = strstr(b, marker);
	assert_non_null(e);
	if ((size_t)(e - b) != strlen(want) || memcmp(b, want, strlen(want)))
		fail_msg("doc/cli.md's nbg weights example is stale: run scripts/gen-docs.sh");
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
		cmocka_unit_test(test_v7_large_single_channel),
		cmocka_unit_test(test_chunk_order),
		cmocka_unit_test(test_one_wide_kernels),
		cmocka_unit_test(test_v8a),              cmocka_unit_test(test_v8b),
		cmocka_unit_test(test_v8a_int16),        cmocka_unit_test(test_f32_pairs),
		cmocka_unit_test(test_v7_rejections),    cmocka_unit_test(test_v8_rejections),
		cmocka_unit_test(test_bit_flips),        cmocka_unit_test(test_synth_file),
		cmocka_unit_test(test_synth_int8),
		cmocka_unit_test(test_synth_file_rejected), cmocka_unit_test(test_synth_unsupported),
		cmocka_unit_test(test_synth_lut),
		cmocka_unit_test(test_synth_conv_lut),
		cmocka_unit_test(test_cli_out),         cmocka_unit_test(test_tpfc),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_corpus_streams),
		cmocka_unit_test(test_family_targets),
		cmocka_unit_test(test_cli_doc_block),
	};
	return tc_main(argc, argv, "test_weights", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), NULL, NULL);
}
