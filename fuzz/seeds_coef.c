/*
 * seeds_coef.c - the kernel-stream seeds (seeds.h): layers written by
 * tests/coef_encode.c, which follows Mesa etnaviv's encoders, in the v7, v8a
 * and v8b formats (and the TP fully connected layouts), as the fixture's v2 file carrying each stream and as the
 * raw inputs of the coef harness.  Apart from seeds.c so that the programs
 * that only need seed_synth_all do not need the encoder.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coef_encode.h"
#include "seeds.h"

/* ------------------------------------------------- kernel streams */

/* The layers the kernel-stream seeds carry, each in the formats that can
 * hold it (tests/coef_encode.c writes them as Mesa's encoders do). */
static const struct coef_seed {
	const char *name;
	uint32_t target;
	uint32_t out, kz, k, cores, superblocks;
	int depthwise, format;
	unsigned order;
	ce_opts opts;
	uint32_t ky; /* 0: k (square) */
	int int8;    /* int8 codes, zero points 0 */
} coef_seeds[] = {
	{ "v8a", 0x1000003b, 12, 4, 3, 3, 2, 0, CE_V8A, 0, { .format = CE_V8A, .zrl = 1, .map_seed = 3 }, 0, 0 },
	{ "v8a-plain", 0xb9, 8, 2, 1, 4, 1, 0, CE_V8A, 0, { .format = CE_V8A, .map_seed = 1 }, 0, 0 },
	{ "v8a-dw", 0xb9, 16, 1, 3, 4, 2, 1, CE_V8A, 0, { .format = CE_V8A, .zrl = 1, .map_seed = 5 }, 0, 0 },
	{ "v7", 0x88, 16, 4, 3, 8, 1, 0, CE_V7, CE_INTERLEAVED,
	  { .format = CE_V7, .order = CE_INTERLEAVED, .zrl_bits = 3 }, 0, 0 },
	{ "v7-six", 0x88, 16, 8, 1, 8, 1, 0, CE_V7, CE_SIX,
	  { .format = CE_V7, .order = CE_SIX, .zrl_bits = 0 }, 0, 0 },
	{ "v7-seq", 0x7d, 8, 1, 3, 8, 1, 0, CE_V7, CE_SEQUENTIAL,
	  { .format = CE_V7, .order = CE_SEQUENTIAL, .zrl_bits = 5 }, 0, 0 },
	{ "v8b", 0x99, 9, 5, 3, 2, 2, 0, CE_V8B, CE_INTERLEAVED,
	  { .format = CE_V8B, .order = CE_INTERLEAVED, .zrl = 1, .avg_bias = 12, .map_seed = 2 }, 0, 0 },
	{ "v8b-six", 0xa1, 16, 8, 1, 8, 1, 0, CE_V8B, CE_SIX,
	  { .format = CE_V8B, .order = CE_SIX, .precode = 1, .map_seed = 4 }, 0, 0 },
	/* TP fully connected streams (raw inputs reach them with flag bit 3;
	 * as a file they sit under an NN command, which rejects them) */
	{ "tpfc", 0x1000000e, 5, 40, 1, 1, 1, 0, CE_TPFC, 0,
	  { .format = CE_TPFC, .zrl = 1, .avg_bias = 171, .map_seed = 6 }, 0, 0 },
	{ "tpfc-aligned", 0xb9, 7, 9, 1, 1, 1, 0, CE_TPFC, 0,
	  { .format = CE_TPFC, .chunk_align64 = 1, .map_seed = 7 }, 0, 0 },
	{ "tpfc-raw", 0x99, 3, 12, 1, 1, 1, 0, CE_TPFC, 0, { .format = CE_TPFC, .tpfc_raw = 1 }, 0, 0 },
	{ "tpfc-precode", 0xe8, 3, 30, 1, 1, 1, 0, CE_TPFC, 0,
	  { .format = CE_TPFC, .precode = 1, .zrl = 1, .map_seed = 11 }, 0, 0 },
	/* kernels beyond 3x3 in the v7 layout, in each target's order, and a
	 * kernel one value wide */
	{ "v7-7x7-chunks", 0x88, 8, 3, 7, 4, 1, 0, CE_V7, CE_INTERLEAVED,
	  { .format = CE_V7, .order = CE_INTERLEAVED, .zrl_bits = 4, .wide = CE_WIDE_CHUNKS }, 0, 0 },
	{ "v7-5x5-rows", 0x7d, 8, 2, 5, 8, 1, 0, CE_V7, CE_INTERLEAVED,
	  { .format = CE_V7, .order = CE_INTERLEAVED, .zrl_bits = 2, .wide = CE_WIDE_ROWS }, 0, 0 },
	{ "v8b-5x5-chunks", 0x99, 6, 4, 5, 2, 1, 0, CE_V8B, CE_INTERLEAVED,
	  { .format = CE_V8B, .order = CE_INTERLEAVED, .zrl = 1, .wide = CE_WIDE_CHUNKS, .map_seed = 8 },
	  0, 0 },
	{ "v8a-dw-3x1", 0xe8, 16, 1, 1, 8, 1, 1, CE_V8A, 0, { .format = CE_V8A, .map_seed = 9 }, 3, 0 },
	/* int8 kernels (input zero point 0: the stored bias is the bias) */
	{ "v8a-int8", 0xad, 12, 5, 3, 2, 1, 0, CE_V8A, 0, { .format = CE_V8A, .zrl = 1, .map_seed = 10 },
	  0, 1 },
	{ "v7-int8", 0x88, 8, 3, 3, 4, 1, 0, CE_V7, CE_INTERLEAVED,
	  { .format = CE_V7, .order = CE_INTERLEAVED, .zrl_bits = 3 }, 0, 1 },
};

/* Layer i of coef_seeds: kernels with zero-point runs, biases; the arrays
 * are malloc'd into w and bias. */
static ce_layer coef_layer(size_t i, uint8_t **w, int32_t **bias)
{
	const struct coef_seed *c = &coef_seeds[i];
	uint32_t ky = c->ky ? c->ky : c->k;
	size_t n = (size_t)c->out * c->kz * ky * c->k;
	ce_layer l;

	memset(&l, 0, sizeof(l));
	*w = malloc(n + 1);
	*bias = malloc(c->out * sizeof(int32_t));
	if (!*w || !*bias)
		abort();
	for (size_t j = 0, x = i + 77; j < n; j++) {
		x = x * 1103515245u + 12345u;
		(*w)[j] = (uint8_t)(x >> 16);
	}
	for (size_t j = 0; j < n; j++)
		if ((*w)[j] % 3 == 0)
			(*w)[j] = c->int8 ? 0 : 100; /* the zero point, in runs and alone */
	for (uint32_t ch = 0; ch < c->out; ch++)
		(*bias)[ch] = (int32_t)(ch * 7919u) - 30000;
	l.out = c->out;
	l.kz = c->kz;
	l.ky = ky;
	l.kx = c->k;
	l.zp = c->int8 ? 0 : 100;
	l.in_zp = c->int8 ? 0 : 9;
	l.int8 = c->int8;
	l.w = *w;
	l.bias = *bias;
	l.cores = c->cores;
	l.superblocks = c->superblocks;
	l.depthwise = c->depthwise;
	l.plane = 64;
	l.seed = (uint32_t)i + 1;
	return l;
}

#define COEF_SEEDS (sizeof(coef_seeds) / sizeof(coef_seeds[0]))

/* After coef_seeds: a v8a stream of int16 kernels (ce_encode16; its file
 * seed carries it under a uint8 command, which refuses it at the header). */
static uint8_t *int16_stream(size_t *n)
{
	static int16_t w[4 * 2 * 3 * 3];
	static const int64_t bias[4] = { 5, -70000, (int64_t)1 << 40, -((int64_t)1 << 46) };
	for (size_t j = 0, x = 91; j < sizeof(w) / sizeof(w[0]); j++) {
		x = x * 1103515245u + 12345u;
		w[j] = (int16_t)(x >> 8) >> (j % 11);
	}
	ce16_layer l = { 4, 2, 3, 3, 2, w, bias };
	return ce_encode16(&l, n);
}

size_t seed_coef_count(void)
{
	return COEF_SEEDS + 2;
}

/* After the int16 one: an fp16 1x1 depthwise stream (f32-pairs): 3
 * channels of (weight, slope) float32 pairs, zero bytes after them. */
static uint8_t *fp16_stream(size_t *n)
{
	static const float v[6] = { 1.0f, 0.25f, -2.0f, 0.5f, 0.0009765625f, -1.5f };
	uint8_t *b = calloc(64, 1);
	if (!b)
		abort();
	for (int i = 0; i < 6; i++) {
		uint32_t x;
		memcpy(&x, &v[i], 4);
		for (int k = 0; k < 4; k++)
			b[4 * i + k] = (uint8_t)(x >> (8 * k));
	}
	*n = 64;
	return b;
}

uint8_t *seed_coef_file(size_t i, char *name, size_t name_size, size_t *size)
{
	uint8_t *w, *st, *b;
	int32_t *bias;
	ce_layer l = coef_layer(i < COEF_SEEDS ? i : 0, &w, &bias);
	size_t n;

	/* the int16 and fp16 streams after coef_seeds, under a uint8 command:
	 * refused at the stream's header or layout */
	if (i >= COEF_SEEDS) {
		st = i == COEF_SEEDS ? int16_stream(&n) : fp16_stream(&n);
		l.out = i == COEF_SEEDS ? 4 : 3, l.kz = i == COEF_SEEDS ? 2 : 1;
		l.ky = l.kx = i == COEF_SEEDS ? 3 : 1, l.depthwise = i > COEF_SEEDS;
		b = ce_nbg_file(&l, st, n, 0x1000003b, size);
		snprintf(name, name_size, "synth-coef-%s", i == COEF_SEEDS ? "int16" : "fp16");
	} else {
		st = ce_encode(&l, &coef_seeds[i].opts, &n);
		b = ce_nbg_file(&l, st, n, coef_seeds[i].target, size);
		snprintf(name, name_size, "synth-coef-%s", coef_seeds[i].name);
	}
	free(st);
	free(w);
	free(bias);
	return b;
}

uint8_t *seed_coef_raw(size_t i, char *name, size_t name_size, size_t *size)
{
	if (i >= COEF_SEEDS) {
		size_t n;
		uint8_t *st = i == COEF_SEEDS ? int16_stream(&n) : fp16_stream(&n);
		uint8_t *b = calloc(SEED_COEF_HEADER + n, 1);
		if (!b)
			abort();
		/* v8a, 4 kernels of 3x3x2, 2 per core and pass, flag bit 7: int16;
		 * f32-pairs (format 5), 3 depthwise 1x1 kernels */
		memcpy(b, i == COEF_SEEDS ? "COEF\x02\x04\x00\x02\x00\x00\x03\x02\x00\x00\x80"
					  : "COEF\x05\x03\x00\x01\x00\x00\x01\x01\x00\x00\x01",
		       15);
		memcpy(b + SEED_COEF_HEADER, st, n);
		*size = SEED_COEF_HEADER + n;
		snprintf(name, name_size, i == COEF_SEEDS ? "coef-raw-int16" : "coef-raw-fp16");
		free(st);
		return b;
	}
	const struct coef_seed *c = &coef_seeds[i];
	uint8_t *w, *st, *b;
	int32_t *bias;
	ce_layer l = coef_layer(i, &w, &bias);
	size_t n;

	st = ce_encode(&l, &c->opts, &n);
	b = malloc(SEED_COEF_HEADER + n);
	if (!b)
		abort();
	memcpy(b, "COEF", 4);
	b[4] = (uint8_t)c->format;
	b[5] = (uint8_t)c->out;
	b[6] = (uint8_t)(c->out >> 8);
	b[7] = (uint8_t)c->kz;
	b[8] = (uint8_t)(c->kz >> 8);
	b[9] = (uint8_t)(c->kz >> 16);
	b[10] = (uint8_t)(c->k | (c->ky & 15) << 4);
	b[11] = (uint8_t)ce_superblock(&l);
	b[12] = l.zp;
	b[13] = (uint8_t)l.in_zp;
	b[14] = (uint8_t)(c->depthwise | (c->order == CE_SIX) << 2 | (c->format == CE_TPFC) << 3 |
			  (c->opts.wide & 3) << 4 | c->int8 << 6);
	b[15] = (uint8_t)l.plane;
	b[16] = (uint8_t)(l.plane >> 8);
	b[17] = (uint8_t)(l.plane >> 16);
	b[18] = (uint8_t)(l.plane >> 24);
	memcpy(b + SEED_COEF_HEADER, st, n);
	*size = SEED_COEF_HEADER + n;
	snprintf(name, name_size, "coef-raw-%s", c->name);
	free(st);
	free(w);
	free(bias);
	return b;
}

