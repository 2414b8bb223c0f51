/*
 * sha256.h - SHA-256 in portable C (sha256.c).  Private to libnbg: the rest
 * of the library hashes through hash.h, which chooses between this and
 * OpenSSL.
 */
#ifndef NBG_COMMON_SHA256_H
#define NBG_COMMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

typedef struct nbg_sha256_portable {
	uint32_t h[8];
	uint64_t bytes; /* hashed so far */
	uint8_t buf[64];
	size_t fill; /* bytes of buf waiting for a whole block */
} nbg_sha256_portable;

NBG_INTERNAL void nbg_sha256_portable_init(nbg_sha256_portable *s);
NBG_INTERNAL void nbg_sha256_portable_update(nbg_sha256_portable *s, const void *data,
					     uint64_t n);
NBG_INTERNAL void nbg_sha256_portable_final(nbg_sha256_portable *s, uint8_t out[32]);

#endif
