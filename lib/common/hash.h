/*
 * hash.h - the digests libnbg uses: SHA-256 (sha256.c: the CPU's SHA
 * instructions where it has them, else portable C, chosen once) and
 * zlib-compatible CRC-32 (crc32.c: libdeflate, or portable C in a build
 * without it).  Every part of the library hashes through these, which count
 * the bytes they see (nbg_digest_counts, for tests); nothing else calls
 * sha256.c or crc32.c.  Private to libnbg.
 */
#ifndef NBG_COMMON_HASH_H
#define NBG_COMMON_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/crc32.h"
#include "common/internal.h"
#include "common/sha256.h"

/* One-shot SHA-256. */
NBG_INTERNAL void nbg_sha256(const void *p, size_t n, uint8_t out[32]);

/* Incremental SHA-256.  A context that never began (all zero) ignores
 * updates and ends with an all-zero digest. */
NBG_INTERNAL void nbg_sha256_begin(nbg_sha256_ctx *s);
NBG_INTERNAL void nbg_sha256_update(nbg_sha256_ctx *s, const void *p, uint64_t n);
NBG_INTERNAL void nbg_sha256_end(nbg_sha256_ctx *s, uint8_t out[32]);

/* zlib-compatible CRC-32 (reflected 0xedb88320), continuing from `crc`.
 * Combining two is nbg_crc32_combine (crc32.h). */
NBG_INTERNAL uint32_t nbg_crc32(uint32_t crc, const uint8_t *p, uint64_t n);

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
