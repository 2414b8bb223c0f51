/*
 * hash.h - the digests libnbg uses: SHA-256 through OpenSSL's EVP (SHA-NI /
 * AVX2 chosen at run time; libcrypto loaded when first worth it) or, for
 * small inputs and where OpenSSL cannot be loaded, the portable
 * implementation of sha256.c; and zlib-compatible CRC-32 through ISA-L.
 * Every part of the library hashes through these; nothing else calls EVP,
 * sha256.c or crc32_gzip_refl.  Private to libnbg.
 */
#ifndef NBG_COMMON_HASH_H
#define NBG_COMMON_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

#include "common/sha256.h"

/* A caller about to hash `total` bytes in several digests (a parse: about
 * twice the file): when that is more than the portable implementation's
 * allowance has left, OpenSSL is used for all of them, even the small ones,
 * instead of a portable start followed by the load anyway. */
NBG_INTERNAL void nbg_sha256_expect(uint64_t total);

/* One-shot SHA-256; where OpenSSL fails, the portable code computes it. */
NBG_INTERNAL void nbg_sha256(const void *p, size_t n, uint8_t out[32]);

/* Incremental SHA-256 of at least `total` bytes (which decides the
 * implementation with what nbg_sha256_expect said; 0 when not known).  A
 * context keeps the implementation it began with: a portable one stays
 * portable past the allowance (the bytes still count against it), which is
 * why a caller that knows its size says it.  `ok` turns false on the first
 * OpenSSL failure after a successful start and stays false; nbg_sha256_end
 * reports it and frees the context. */
typedef struct nbg_sha256_ctx {
	void *md; /* OpenSSL's, or NULL for the portable one */
	bool ok;
	uint64_t promised; /* of total, the bytes not fed yet */
	nbg_sha256_portable portable;
} nbg_sha256_ctx;
NBG_INTERNAL void nbg_sha256_begin(nbg_sha256_ctx *s, uint64_t total);
NBG_INTERNAL void nbg_sha256_update(nbg_sha256_ctx *s, const void *p, uint64_t n);
NBG_INTERNAL bool nbg_sha256_end(nbg_sha256_ctx *s, uint8_t out[32]);

/* zlib-compatible CRC-32 (reflected 0xedb88320), continuing from `crc`. */
NBG_INTERNAL uint32_t nbg_crc32(uint32_t crc, const uint8_t *p, uint64_t n);
/* CRC-32 of A||B from crc(A), crc(B) and len(B). */
NBG_INTERNAL uint32_t nbg_crc32_combine(uint32_t a, uint32_t b, uint64_t len_b);

/* The CRC-32 (from 0) of each of n byte ranges, into its crc.  With
 * two_cores and NBG_CRC_SPLIT_MIN bytes or more in all, the ranges are
 * treated as one stream cut in half by bytes: a second thread CRCs the
 * second half (the range cut in two is joined with nbg_crc32_combine), so
 * each byte is still CRC'd once.  Where the thread cannot start, all of it
 * runs here.  The results do not depend on two_cores. */
typedef struct nbg_crc_range {
	const uint8_t *p;
	uint64_t n;
	uint32_t crc;
} nbg_crc_range;
#define NBG_CRC_SPLIT_MIN ((uint64_t)1 << 20)
NBG_INTERNAL void nbg_crc32_ranges(nbg_crc_range *r, size_t n, int two_cores);

#endif
