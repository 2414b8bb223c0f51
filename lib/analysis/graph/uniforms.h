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

#endif
