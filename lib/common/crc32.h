/*
 * crc32.h - CRC-32 as zlib computes it (crc32.c): the implementation this
 * build chose (-Dcrc32=libdeflate|portable) and the combination of two CRCs.
 * Private to libnbg: the rest of the library calls nbg_crc32 (hash.h).
 */
#ifndef NBG_COMMON_CRC32_H
#define NBG_COMMON_CRC32_H

#include <stdint.h>

#include "common/internal.h"
#include "nbg_hash_config.h"

/* CRC-32 of p[0..n) continuing from crc (0 to start), as zlib's crc32(). */
NBG_INTERNAL uint32_t nbg_crc32_portable(uint32_t crc, const uint8_t *p, uint64_t n);
#if NBG_CRC32_LIBDEFLATE
NBG_INTERNAL uint32_t nbg_crc32_libdeflate(uint32_t crc, const uint8_t *p, uint64_t n);
#define nbg_crc32_impl nbg_crc32_libdeflate
#else
#define nbg_crc32_impl nbg_crc32_portable
#endif
/* "libdeflate" or "portable". */
NBG_INTERNAL const char *nbg_crc32_impl_name(void);

/* CRC-32 of A||B from crc(A), crc(B) and len(B). */
NBG_INTERNAL uint32_t nbg_crc32_combine(uint32_t a, uint32_t b, uint64_t len_b);

#endif
