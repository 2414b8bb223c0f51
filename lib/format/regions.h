/*
 * regions.h - the fixed structures in front of the sections (v2 header,
 * sub-header and directory; the v1 header, feature database, memory block,
 * entry table and opaque extension) and the byte coverage they and the
 * sections give: the one place the parser's overlap check, the final-512
 * view and the ledger learn where they are.  Private to libnbg.
 */
#ifndef NBG_FORMAT_REGIONS_H
#define NBG_FORMAT_REGIONS_H

#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

#define NBG_FIXED_REGIONS_MAX 5

typedef struct nbg_region {
	uint64_t offset, size;
	const char *owner;  /* "header", "sub-header", "directory", ... */
	int opaque;         /* 1: kept as bytes (the v1 opaque fixed extension) */
} nbg_region;

/* The fixed regions of a model whose header (v2) or prefix (v1) is decoded,
 * in file order for v1, header/sub-header/directory for v2; empty ones are
 * left out.  Returns how many were written to out. */
NBG_INTERNAL size_t nbg_fixed_regions(const nbg_model *m, nbg_region out[NBG_FIXED_REGIONS_MAX]);

/* Bytes of [lo, hi) that a section payload or a fixed region owns (each byte
 * counted once; v1 entries may nest).  Returns UINT64_MAX when memory runs
 * out. */
NBG_INTERNAL uint64_t nbg_owned_bytes(const nbg_model *m, uint64_t lo, uint64_t hi);

/* Sets m->tail: the final-512-byte view and how much of it others own.
 * Returns false when memory runs out. */
NBG_INTERNAL bool nbg_tail_view(nbg_model *m, const uint8_t *data, uint64_t size);

/* SHA-256 of a region's n bytes at p into out, or all zero when m was parsed
 * with NBG_PARSE_NO_SECTION_SHA256 (io.c). */
NBG_INTERNAL void nbg_region_sha256(const nbg_model *m, const uint8_t *p, uint64_t n,
				    uint8_t out[32]);

#endif
