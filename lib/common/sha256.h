/*
 * sha256.h - SHA-256 (FIPS 180-4): one padding and buffering code
 * (sha256.c) over a block function chosen once per process: the CPU's SHA
 * instructions where the build has them and the CPU runs them (SHA-NI,
 * sha256_x86.c; the ARMv8 Cryptographic Extension, sha256_arm.c), else
 * portable C.  -Dsha256=portable builds the portable one alone (a build for
 * a machine without those instructions, or where they cannot be detected).
 * Private to libnbg: the rest of the library hashes through hash.h.
 */
#ifndef NBG_COMMON_SHA256_H
#define NBG_COMMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"
#include "nbg_hash_config.h"

/* Compresses nblocks 64-byte blocks of p into the state h (FIPS 180-4,
 * 6.2.2, once per block). */
typedef void (*nbg_sha256_blocks_fn)(uint32_t h[8], const uint8_t *p, size_t nblocks);

typedef struct nbg_sha256_ctx {
	uint32_t h[8];
	uint64_t bytes; /* hashed so far */
	uint8_t buf[64];
	size_t fill; /* bytes of buf waiting for a whole block */
	nbg_sha256_blocks_fn blocks;
} nbg_sha256_ctx;

/* Begins a digest with the block function this process chose. */
NBG_INTERNAL void nbg_sha256_init(nbg_sha256_ctx *s);
/* Begins a digest with the given block function (tests, benchmarks). */
NBG_INTERNAL void nbg_sha256_init_with(nbg_sha256_ctx *s, nbg_sha256_blocks_fn blocks);
NBG_INTERNAL void nbg_sha256_feed(nbg_sha256_ctx *s, const void *data, uint64_t n);
NBG_INTERNAL void nbg_sha256_final(nbg_sha256_ctx *s, uint8_t out[32]);

/* The block functions compiled in, best first, the portable one last
 * (usable NULL: every CPU runs it; else whether this one does).  The
 * process uses the first usable one. */
typedef struct nbg_sha256_impl {
	const char *name; /* "sha-ni", "armv8-ce", "portable" */
	nbg_sha256_blocks_fn blocks;
	int (*usable)(void);
} nbg_sha256_impl;
NBG_INTERNAL const nbg_sha256_impl *nbg_sha256_impls(size_t *n);
/* The name of the one this process uses. */
NBG_INTERNAL const char *nbg_sha256_impl_name(void);

#if NBG_SHA256_X86
NBG_INTERNAL int nbg_sha256_x86_usable(void);
NBG_INTERNAL void nbg_sha256_blocks_shani(uint32_t h[8], const uint8_t *p, size_t nblocks);
#endif
#if NBG_SHA256_ARM
NBG_INTERNAL int nbg_sha256_arm_usable(void);
NBG_INTERNAL void nbg_sha256_blocks_armce(uint32_t h[8], const uint8_t *p, size_t nblocks);
#endif
/* The round constants K (FIPS 180-4, 4.2.2), shared by every block function. */
NBG_INTERNAL extern const uint32_t nbg_sha256_k[64];

#endif
