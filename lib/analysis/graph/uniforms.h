/*
 * uniforms.h - an SH operation's shader uniforms, read from its state
 * buffer (the LOAD_STATE stream the state table's entry state_id holds),
 * and the image descriptors among them.  Shared by the data flow
 * (dataflow.c) and the CPU backend's shader planners.  Private to libnbg.
 *
 * The stream: a word with opcode 1 in bits 31..27 loads `count` values
 * (bits 25..16, 0 meaning 1024) into the registers from bits 15..0 on,
 * the values after it, padded to an even word count; any other command
 * word takes two words.  The uniforms are the registers at byte address
 * 0x36000 + 4 i, i < NBG_SH_UNIFORMS.
 *
 * An image descriptor is eight uniforms: the image's address (relocated by
 * a STATE patch of the operation), its row stride in bytes, height << 16 |
 * width, a format word (0x444 in bits 31..20; bits 1..0 give the element
 * size, 1 << (format & 3) bytes), its slice stride in bytes, its depth,
 * then two words not read here (doc/commands.md, "Data flow").
 */
#ifndef NBG_ANALYSIS_UNIFORMS_H
#define NBG_ANALYSIS_UNIFORMS_H

#include "common/internal.h"
#include "nbg/graph.h"

#define NBG_SH_UNIFORMS 80
#define NBG_SH_UNIFORM_BASE 0x36000u
#define NBG_SH_MAX_STATE_BYTES (1u << 20) /* the corpus's: 784..848 */

typedef struct nbg_sh_uniforms {
	uint32_t value[NBG_SH_UNIFORMS];
	uint32_t at[NBG_SH_UNIFORMS];  /* byte offset of the value in the state buffer */
	int loaded[NBG_SH_UNIFORMS];   /* times loaded */
} nbg_sh_uniforms;

/* Why the uniforms could not be read (nbg_sh_uniforms_load). */
typedef struct nbg_sh_uniforms_cut {
	uint32_t word;           /* the LOAD_STATE word that runs past the buffer */
	uint64_t at;             /* its byte offset in the buffer */
	uint32_t count;          /* the values it loads */
	uint64_t size;           /* the buffer's bytes */
} nbg_sh_uniforms_cut;

enum nbg_sh_uniforms_status {
	NBG_SHU_OK = 0,
	NBG_SHU_NO_BUFFER,       /* no in-bounds state buffer of 1 to NBG_SH_MAX_STATE_BYTES bytes */
	NBG_SHU_TRUNCATED        /* a LOAD_STATE word runs past the buffer (*cut says which) */
};

/* The uniforms of OPERATIONS record `operation` into *u (zeroed first);
 * cut may be NULL. */
NBG_INTERNAL enum nbg_sh_uniforms_status nbg_sh_uniforms_load(const nbg_model *m, const nbg_graph *g,
							      size_t operation, nbg_sh_uniforms *u,
							      nbg_sh_uniforms_cut *cut);

/* The uniform whose value lies at byte `at` of the state buffer (where a
 * STATE patch lands), or -1. */
NBG_INTERNAL int nbg_sh_uniform_at(const nbg_sh_uniforms *u, uint32_t at);

typedef struct nbg_sh_image {
	uint64_t row, slice;     /* strides in bytes */
	uint32_t width, height, depth, element; /* element: bytes */
} nbg_sh_image;

/* The image descriptor whose address is uniform j: 1 with *im filled when
 * uniforms j..j+5 are loaded once each and j+3 is a format word. */
NBG_INTERNAL int nbg_sh_image_at(const nbg_sh_uniforms *u, int j, nbg_sh_image *im);

/* The A733 fp16 convolution shaders' uniforms (uniforms_conv.c), read by
 * the CPU backend (lib/cpu/ops/shconv.c, shdw16.c) that executes them and
 * by the network view (lib/analysis/network/) that shows their tensors;
 * doc/cpu-backend.md ("The fp16 convolution shaders", "The fp16 depthwise
 * convolution shader") gives each word with its evidence.
 *
 * nbg_sh_f16_image: the image descriptor at uniform j, fp16 (f32: a
 * float32 bias row), depth 1 unless depth_any, its last two words the
 * corpus's; its size into *w, *h and row stride into *row. */
NBG_INTERNAL int nbg_sh_f16_image(const nbg_sh_uniforms *u, unsigned j, int f32, int depth_any, uint32_t *w,
				  uint32_t *h, uint64_t *row);

/* What a convolution shader computes, from its uniforms.
 * im2col: c planes of w x h (rows in_row, planes in_slice bytes apart)
 *   into p = ow x oh rows (out_row apart) of k = c kx ky values, the window
 *   of output pixel (ox, oy) at (ox sx - px, oy sy - py);
 * matrix product: p rows of k values (in_row apart) times n kernels of k
 *   values (w_row apart) into n rows of p values (out_row apart);
 * fp16 depthwise: c planes of w x h into c planes of ow x oh (out_row,
 *   out_slice), kernels kx x ky (w_row apart), stride sx = sy, padding
 *   px = py before. */
typedef struct nbg_sh_conv {
	uint32_t w, h, c, kx, ky, sx, sy, px, py, ow, oh, p, k, n;
	uint32_t esize;          /* bytes a value: 2 (fp16), 4 (the fp32 shaders) */
	uint64_t in_row, in_slice, out_row, out_slice, w_row;
} nbg_sh_conv;

enum nbg_sh_conv_status {
	NBG_SHC_OK = 0,
	NBG_SHC_LAYOUT,          /* the uniforms are not that shader's layout */
	NBG_SHC_SHAPE            /* its layout, with sizes that do not fit together
				  * or are not executed (unequal pairs, ...) */
};

/* Whether a ConvolutionLayer SH operation's uniforms are the matrix
 * product's (uniform 0x36090 loaded, the input not an fp32 plane) rather
 * than the im2col's. */
NBG_INTERNAL int nbg_sh_conv_is_product(const nbg_sh_uniforms *u);
/* Whether a DepthwiseConvLayer SH operation's uniforms are the fp16
 * shader's (uniform 0x36000's format word fp16). */
NBG_INTERNAL int nbg_sh_dwconv16_is(const nbg_sh_uniforms *u);
/* The shader's geometry into *c (zeroed first); NBG_SHC_OK when it is
 * that shader's layout with sizes that fit. */
NBG_INTERNAL enum nbg_sh_conv_status nbg_sh_im2col(const nbg_sh_uniforms *u, nbg_sh_conv *c);
NBG_INTERNAL enum nbg_sh_conv_status nbg_sh_product(const nbg_sh_uniforms *u, nbg_sh_conv *c);
NBG_INTERNAL enum nbg_sh_conv_status nbg_sh_dwconv16(const nbg_sh_uniforms *u, nbg_sh_conv *c);

#endif
