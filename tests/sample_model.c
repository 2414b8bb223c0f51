/*
 * sample_model.c - the bundled sample, samples/sample.nb (sample_model.h).
 *
 * Layout, as the real A733 files of the corpus have it: 16 sections in
 * their order (the A733 face detector's without MEMORY_POOL, which a model
 * this small does not need: every tensor between operations lives in VIP
 * SRAM, from 0x18000 as in those files); an INIT operation whose load
 * states set the VIP SRAM base; per NN operation a 192-byte command, a
 * load state that starts it (a STATE patch from the command) and COMMAND
 * patches on its input, output, ring-buffer ends and kernel addresses; the
 * SH operation's load state carrying its input and output addresses and
 * its instruction address (STATE patches); one coefficient-table entry per
 * NN operation, 64-byte aligned.  The PPU program (the softmax) is not
 * synthesized: its 320 bytes are zeros, which nbgkit neither decodes nor
 * needs; the load-state words other than the addresses and register
 * numbers are fixed values in the shape of the corpus', not a program a
 * device would run.
 */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "sample_model.h"

enum {
	CORES = 8,                   /* the A733's NN cores: its streams carry 8 */
	IN_X = 28, IN_Y = 28,
	C_OUT = 8, C_X = 26, C_Y = 26, /* the convolution, before pooling */
	P_X = 13, P_Y = 13,          /* after 2x2 max pooling */
	FC_IN = P_X * P_Y * C_OUT,   /* 1352 */
	FC_OUT = 10,
	SRAM_BASE = 0x18000,         /* where the corpus' A733 files start their tensors */
	CONV_RING = (FC_IN + 63) / 64 * 64,
	FC_AT = SRAM_BASE + CONV_RING,
	FC_RING = 64,
	SRAM_DATA_END = FC_AT + FC_RING,
};

/* ---------------------------------------------------------- the weights */

static uint8_t conv_w[C_OUT * 9], fc_w[FC_OUT * FC_IN];
static int32_t conv_b[C_OUT], fc_b[FC_OUT];
static ce_layer layers[SM_LAYERS];

/* Eight classic 3x3 filters (identity, Sobel x and y, Laplacian, box,
 * diagonal, sharpen, emboss) as deviations from the zero point. */
static const int8_t filters[C_OUT][9] = {
	{ 0, 0, 0, 0, 32, 0, 0, 0, 0 },
	{ -8, 0, 8, -16, 0, 16, -8, 0, 8 },
	{ -8, -16, -8, 0, 0, 0, 8, 16, 8 },
	{ 0, 8, 0, 8, -32, 8, 0, 8, 0 },
	{ 4, 4, 4, 4, 4, 4, 4, 4, 4 },
	{ 12, 6, 0, 6, 0, -6, 0, -6, -12 },
	{ 0, -6, 0, -6, 30, -6, 0, -6, 0 },
	{ -12, -6, 0, -6, 6, 6, 0, 6, 12 },
};

static void make_weights(void)
{
	static const int32_t cb[C_OUT] = { 0, 40, -40, 16, -96, 0, 8, -8 };

	for (unsigned o = 0; o < C_OUT; o++) {
		for (unsigned i = 0; i < 9; i++)
			conv_w[o * 9 + i] = (uint8_t)(128 + filters[o][i]);
		conv_b[o] = cb[o];
	}
	/* deviations in [-15, 15] from the zero point, a fixed pattern */
	for (unsigned o = 0; o < FC_OUT; o++) {
		for (unsigned i = 0; i < FC_IN; i++)
			fc_w[o * FC_IN + i] = (uint8_t)(124 + (int)((o * 37 + i * 11 + i * i % 7) % 31) - 15);
		fc_b[o] = (int32_t)(o * 97 % 201) - 100;
	}
	layers[0] = (ce_layer){ .out = C_OUT, .kz = 1, .ky = 3, .kx = 3, .zp = 128, .in_zp = 0,
				.w = conv_w, .bias = conv_b, .cores = CORES, .superblocks = 1,
				.plane = C_X * C_Y };
	layers[1] = (ce_layer){ .out = FC_OUT, .kz = FC_IN, .ky = 1, .kx = 1, .zp = 124,
				.in_zp = 0, .w = fc_w, .bias = fc_b, .cores = CORES,
				.superblocks = 1, .plane = 1 };
}

const ce_layer *sm_layer(unsigned i)
{
	if (!layers[0].w)
		make_weights();
	return i < SM_LAYERS ? &layers[i] : NULL;
}

/* ----------------------------------------------------------- records */

static void put_words(uint8_t *p, const uint32_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fx_put32(p + 4 * i, w[i]);
}

static void layer(uint8_t *r, const char *name, uint32_t node, uint32_t uid)
{
	memset(r, 0, 76);
	strncpy((char *)r, name, 63);
	fx_put32(r + 64, node);
	fx_put32(r + 68, 1);
	fx_put32(r + 72, uid);
}

/* An OPERATIONS record: type, index, layer, state, patches, abs_op_id. */
static void operation(uint8_t *r, uint32_t type, uint32_t index, uint32_t lay, uint32_t state,
		      uint32_t pidx, uint32_t pcnt, uint32_t abs)
{
	const uint32_t w[8] = { type, index, lay, state, pidx, pcnt, 0, abs };
	put_words(r, w, 8);
}

/* A PATCH record: type (0 STATE, 1 COMMAND), dest_offset, source type,
 * index, src_offset, transformed (address >> 6). */
static void patch(uint8_t *r, uint32_t type, uint32_t dest, uint32_t src, int32_t index,
		  uint32_t src_offset, uint32_t transformed)
{
	const uint32_t w[7] = { type, dest, src, (uint32_t)index, src_offset, transformed, 0 };
	put_words(r, w, 7);
}

/* ----------------------------------------------------------- commands */

/* What differs between the two NN commands. */
typedef struct nn_desc {
	const ce_layer *l;
	uint32_t in_x, in_y, out_x, out_y;    /* the stated output, before pooling */
	uint32_t pool;                         /* 1: 2x2 max pooling */
	uint32_t relu;
	uint32_t in_stride_x, in_stride_y, out_stride_x, out_stride_y;
	uint32_t in_ring, out_ring;            /* ring-buffer sizes, bytes */
	uint32_t out_zp;
	uint32_t multiplier, shift;            /* requantization */
	uint32_t cache_lo, cache_hi;           /* kernel cache in VIP SRAM */
} nn_desc;

/* A 192-byte NN command with the fields of Mesa's etnaviv layout
 * (doc/commands.md); uint8 data (hardware code 0) everywhere.  The
 * addresses stay 0: the patches relocate them. */
static void nn_command(uint8_t *c, const nn_desc *d)
{
	const ce_layer *l = d->l;

	memset(c, 0, 192);
	ce_put_bits(c, 0, 1, 1, 1);                 /* no_z_offset */
	ce_put_bits(c, 0, 2, 4, l->kx);             /* kernel_xy_size */
	ce_put_bits(c, 0, 6, 14, l->kz);            /* kernel_z_size */
	ce_put_bits(c, 0, 20, 7, ce_superblock(l)); /* kernels_per_core */
	ce_put_bits(c, 0, 27, 2, d->pool);          /* pooling: 1 max */
	ce_put_bits(c, 0, 31, 1, 1);                /* nn_layer_flush */
	ce_put_bits(c, 1, 6, 13, d->in_x);
	ce_put_bits(c, 1, 19, 13, d->in_y);
	ce_put_bits(c, 2, 24, 1, d->relu);
	ce_put_bits(c, 2, 26, 1, d->multiplier & 1);
	ce_put_bits(c, 2, 27, 5, d->shift & 31);
	ce_put_bits(c, 3, 3, 1, 1);                 /* no_flush */
	ce_put_bits(c, 3, 6, 13, d->out_x);
	ce_put_bits(c, 3, 19, 13, d->out_y);
	ce_put_bits(c, 4, 0, 14, l->out);           /* out_image_z_size */
	ce_put_bits(c, 4, 14, 2, 1);                /* rounding_mode */
	ce_put_bits(c, 4, 18, 7, d->out_x);         /* out_image_tile_x_size */
	ce_put_bits(c, 4, 25, 7, d->out_y < 8 ? d->out_y : 8);
	ce_put_bits(c, 8, 2, 2, 1);                 /* kernel_caching_mode: full */
	ce_put_bits(c, 8, 12, 4, l->ky);            /* kernel_y_size */
	ce_put_bits(c, 8, 16, 16, d->out_stride_y);
	ce_put_bits(c, 11, 0, 32, d->cache_lo);     /* kernel cache */
	ce_put_bits(c, 12, 0, 32, d->cache_hi);
	ce_put_bits(c, 13, 0, 32, d->cache_hi);     /* no image cache */
	ce_put_bits(c, 14, 0, 32, d->cache_hi);
	ce_put_bits(c, 15, 2, 16, (uint32_t)l->in_zp); /* in_image_border_const */
	ce_put_bits(c, 15, 22, 6, d->multiplier >> 1 & 63);
	ce_put_bits(c, 15, 28, 2, d->shift >> 5 & 3);
	ce_put_bits(c, 16, 0, 16, d->in_stride_x);
	ce_put_bits(c, 16, 16, 16, d->in_stride_y);
	ce_put_bits(c, 17, 0, 16, d->out_stride_x);
	ce_put_bits(c, 17, 24, 8, d->multiplier >> 7 & 255);
	ce_put_bits(c, 18, 0, 26, d->out_ring >> 6);
	ce_put_bits(c, 20, 0, 26, d->in_ring >> 6);
	if (!d->in_ring)
		ce_put_bits(c, 21, 0, 26, 0x3ffffff); /* no input ring: as the corpus' */
	ce_put_bits(c, 22, 0, 8, l->zp);            /* coef_zero_point */
	ce_put_bits(c, 22, 8, 8, d->out_zp);
	ce_put_bits(c, 22, 18, 8, d->multiplier >> 15 & 255);
	fx_put32(c + 4 * 29, 0x7f800000);           /* +inf, -inf: the open driver's */
	fx_put32(c + 4 * 30, 0xff800000);           /* fixed words 29-30 */
}

/* -------------------------------------------------------------- file */

static uint32_t pad64(size_t n)
{
	return (uint32_t)((n + 63) / 64 * 64);
}

uint8_t *sm_build(size_t *size)
{
	fx_spec *s = calloc(1, sizeof(*s));
	uint8_t buf[1024], *coef, *streams[SM_LAYERS], *out;
	size_t sn[SM_LAYERS];
	uint32_t at[SM_LAYERS], coef_size = 0, cache = 0;
	const ce_opts v8a = { .format = CE_V8A, .zrl = 1, .map_seed = 1 };

	if (!s)
		abort();
	for (unsigned i = 0; i < SM_LAYERS; i++) {
		streams[i] = ce_encode(sm_layer(i), &v8a, &sn[i]);
		at[i] = coef_size;
		coef_size += pad64(sn[i]);
		if (pad64(sn[i]) > cache)
			cache = pad64(sn[i]);
	}
	cache = (cache + 255) / 256 * 256;
	const uint32_t sram = SRAM_DATA_END + cache;

	/* NETWORK_INFO: name, 1 input, 1 output, 3 layers, 3 absolute
	 * operations, 4 OPERATIONS records + 3, 1 core, 32-bit addresses,
	 * 192-byte NN and TP commands */
	memset(buf, 0, 220);
	strcpy((char *)buf, SM_NAME);
	const uint32_t info[8] = { 1, 1, 3, 3, 4 + 3, 1, 32, 0x0a };
	put_words(buf + 0x40, info, 8);
	fx_set(s, 35, buf, 220, 0, 220);
	fx_put32(buf, sram);
	fx_set(s, 38, buf, 4, 0, 4);               /* VIP_SRAM */
	fx_set(s, 40, NULL, 32, 0, 8);             /* CHECKSUM: filled by fx_build */
	{
		const uint32_t din[4] = { 1, IN_X, IN_Y, 1 }, dout[2] = { FC_OUT, 1 };
		const float scale = 1.0f / 255.0f;
		uint32_t bits;
		memcpy(&bits, &scale, 4);
		fx_io_record(buf, 4, din, 2 /* UINT8 */, 2 /* affine */, bits, 0,
			     "input/output[0]");
		fx_set(s, 1, buf, 112, 0, 112);
		fx_io_record(buf, 2, dout, 1 /* FP16 */, 0, 0x3f800000, 0, "uid_4_out_0");
		fx_set(s, 2, buf, 112, 0, 112);
	}
	layer(buf, "ConvolutionReluPoolingLayer2", 0, 2);
	layer(buf + 76, "FullyConnectedReluLayer", 1, 3);
	layer(buf + 152, "Softmax2Layer", 2, 4);
	fx_set(s, 3, buf, 3 * 76, 0, 76);          /* LAYER */
	operation(buf, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0, 0, 1, 0xFFFFFFFF); /* INIT */
	operation(buf + 32, 2, 0, 0, 1, 1, 5, 0);   /* NN 0 */
	operation(buf + 64, 2, 1, 1, 2, 6, 6, 1);   /* NN 1 */
	operation(buf + 96, 1, 0, 2, 3, 12, 3, 2);  /* SH 0 */
	fx_set(s, 4, buf, 4 * 32, 0, 32);          /* OPERATIONS */
	{
		const nn_desc conv = {
			.l = sm_layer(0), .in_x = IN_X, .in_y = IN_Y, .out_x = C_X, .out_y = C_Y,
			.pool = 1, .relu = 1, .in_stride_x = IN_X, .in_stride_y = IN_X * IN_Y,
			.out_stride_x = P_X, .out_stride_y = P_X * P_Y, .out_ring = CONV_RING,
			.out_zp = 0, .multiplier = 0x5a3c71, .shift = 54,
			.cache_lo = SRAM_DATA_END, .cache_hi = SRAM_DATA_END + pad64(sn[0]) };
		const nn_desc fc = {
			.l = sm_layer(1), .in_x = 1, .in_y = 1, .out_x = 1, .out_y = 1,
			.in_stride_x = 1, .in_stride_y = 1, .out_stride_x = 1, .out_stride_y = 1,
			.in_ring = CONV_RING, .out_ring = FC_RING, .out_zp = 140,
			.multiplier = 0x61b2e4, .shift = 57,
			.cache_lo = SRAM_DATA_END, .cache_hi = SRAM_DATA_END + pad64(sn[1]) };
		nn_command(buf, &conv);
		nn_command(buf + 192, &fc);
		fx_set(s, 7, buf, 2 * 192, 0, 192); /* NN */
	}
	memset(buf, 0, 8);
	fx_set(s, 9, buf, 8, 0, 8);                /* SH: instruction entry 0 */
	patch(buf, 1, 20, 8, -1, 0, 0);                        /* INIT: VIP SRAM base */
	patch(buf + 28 * 1, 0, 20, 0, 0, 0, 1);                /* NN 0: its command */
	patch(buf + 28 * 2, 1, 24, 1, 0, 0, 0);                /* in: input 0 */
	patch(buf + 28 * 3, 1, 28, 8, -1, SRAM_BASE, 0);       /* out */
	patch(buf + 28 * 4, 1, 76, 8, -1, SRAM_BASE + CONV_RING, 1); /* out ring end */
	patch(buf + 28 * 5, 1, 20, 5, 0, 0, 1);                /* kernels: entry 0 */
	patch(buf + 28 * 6, 0, 20, 0, 0, 0, 1);                /* NN 1: its command */
	patch(buf + 28 * 7, 1, 24, 8, -1, SRAM_BASE, 0);       /* in */
	patch(buf + 28 * 8, 1, 84, 8, -1, SRAM_BASE + CONV_RING, 1); /* in ring end */
	patch(buf + 28 * 9, 1, 28, 8, -1, FC_AT, 0);           /* out */
	patch(buf + 28 * 10, 1, 76, 8, -1, FC_AT + FC_RING, 1); /* out ring end */
	patch(buf + 28 * 11, 1, 20, 5, 1, 0, 1);               /* kernels: entry 1 */
	patch(buf + 28 * 12, 0, 76, 0, -1, 0, 0);              /* SH: its instructions */
	patch(buf + 28 * 13, 0, 28, 8, -1, FC_AT, 0);          /* reads */
	patch(buf + 28 * 14, 0, 52, 2, 0, 0, 0);               /* writes output 0 */
	fx_set(s, 10, buf, 15 * 28, 0, 28);        /* PATCH */
	{
		const uint32_t ct[4] = { at[0], pad64(sn[0]), at[1], pad64(sn[1]) };
		const uint32_t pt[2] = { 0, 320 };
		const uint32_t lt[8] = { 0, 40, 40, 24, 64, 32, 96, 112 };
		put_words(buf, ct, 4);
		fx_set(s, 23, buf, 16, 0, 8);      /* COEF_DATA_TABLE */
		put_words(buf, pt, 2);
		fx_set(s, 25, buf, 8, 0, 8);       /* PPU_INSTR_TABLE */
		put_words(buf, lt, 8);
		fx_set(s, 27, buf, 32, 0, 8);      /* LOADSTATE_TABLE */
	}
	coef = calloc(1, coef_size);
	if (!coef)
		abort();
	for (unsigned i = 0; i < SM_LAYERS; i++) {
		memcpy(coef + at[i], streams[i], sn[i]);
		free(streams[i]);
	}
	fx_set(s, 24, coef, coef_size, 64, 1);     /* COEF_DATA */
	free(coef);
	fx_set(s, 19, NULL, 512, 256, 1);          /* PPU_INSTR: not synthesized */
	{
		/* LOAD_STATE commands (0x08000000 | count << 16 | register),
		 * values after them, NOPs (0x18000000) to 8 bytes; the
		 * registers as the corpus' A733 files load them */
		static const uint32_t ls[52] = {
			/* INIT (40 bytes): word 5 receives the VIP SRAM base */
			0x0801028a, 0x00000011, 0x08010e13, 0x00000002, 0x08010e4e, 0,
			0x08010e4f, 0, 0x08010e50, 0,
			/* NN 0 (24): word 5 receives its command's address */
			0x08010e4c, 0x04b3e040, 0x08010e5a, 0x00451440, 0x08010428, 1,
			/* NN 1 (32), before a PPU operation: as NN 0, then 0x0429 */
			0x08010e4c, 0x04b3e040, 0x08010e5a, 0x00451440, 0x08010428, 0,
			0x08010429, 0,
			/* SH (112): the input image (word 7), the output (word 13),
			 * the instruction address (word 19) */
			0x08015580, 0x00000002, 0x08010e02, 0x00000701, 0x48000000, 0x00000701,
			0x0804d800, 0, 0, 0, 0, 0x18000000,
			0x0804d808, 0, 0, 0, 0, 0x18000000,
			0x0801040a, 0, 0x08010424, 0x00000014, 0x08010e03, 0x00000024,
			0x08010e02, 0x00000701, 0x48000000, 0x00000701,
		};
		put_words(buf, ls, 52);
		fx_set(s, 21, buf, 208, 0, 1);     /* LOADSTATE */
	}
	out = fx_build(s, size);
	fx_free(s);
	return out;
}
