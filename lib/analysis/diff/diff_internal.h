/*
 * diff_internal.h - what the differential pieces share (diff.c,
 * reconstruct.c, diff_locate.c).  Private to libnbg.
 */
#ifndef NBG_DIFF_INTERNAL_H
#define NBG_DIFF_INTERNAL_H

#include "common/internal.h"
#include "analysis/diff/diff_struct.h"
#include "nbg/ledger.h"

/* Where byte `off` of model m lies inside its ledger owner r, as a person
 * reads it: "crc32 +0", "record 0 data_format", "region +3, dynaio entry 0
 * +3", "record 2 +5", "+17". */
NBG_INTERNAL void nbg_diff_locate(const nbg_model *m, const nbg_ledger_range *r, uint64_t off,
				  char *out, size_t n);

/* Hex of p[0..len) into out (nothing when len > 8). */
NBG_INTERNAL void nbg_diff_hex(char *out, size_t n, const uint8_t *p, uint64_t len);

/* nbg_reconstruct with A's ledger already built (la may be NULL: built here). */
NBG_INTERNAL nbg_code nbg_reconstruct_with(const nbg_model *a, const nbg_model *b,
					   const nbg_ledger *la, nbg_reconstruction **out,
					   nbg_error *err);

#endif
