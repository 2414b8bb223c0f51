/*
 * ledger_internal.h - the ledger's representation, shared by the files that
 * build it (ledger.c), write and read its document (ledger_json.c), re-emit
 * from it (reemit.c) and draw it (ledger_map.c); a later stage hands it
 * the parts it proved through ledger_parts.h.  Private to lib/analysis.
 */
#ifndef NBG_ANALYSIS_LEDGER_INTERNAL_H
#define NBG_ANALYSIS_LEDGER_INTERNAL_H

#include "analysis/ledger/ledger_parts.h"
#include "common/internal.h"
#include "nbg/ledger.h"

struct nbg_ledger {
	uint32_t family, version;
	uint64_t file_size;
	uint8_t file_sha256[32];
	size_t nranges, rcap;
	nbg_ledger_range *ranges;
	size_t nviews, vcap;
	nbg_ledger_view *views;
	uint64_t class_bytes[NBG_LEDGER_CLASS_COUNT];
	size_t class_ranges[NBG_LEDGER_CLASS_COUNT];
	/* nbg_ledger_build_crc only: each range's CRC-32, in place of the
	 * SHA-256 fingerprints (all zero, as file_sha256 and the views'); else NULL */
	uint32_t *crc;
};

/*
 * The ledger nbg_reemit_model writes a file's own bytes from: the ranges of
 * nbg_ledger_build, fingerprinted by CRC-32 instead of SHA-256 (the parser's
 * CRC for a whole section payload, so the model may be parsed with
 * NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256 and no byte is
 * hashed for it).  It proves that bytes written later are the bytes the
 * parser read; it is not a fingerprint to keep and never leaves libnbg.
 */
NBG_INTERNAL nbg_code nbg_ledger_build_crc(const nbg_model *m, nbg_ledger **out,
					   nbg_error *err);

/* The class and view-kind names, indexed by their enums. */
NBG_INTERNAL extern const char *const nbg_ledger_class_names[NBG_LEDGER_CLASS_COUNT];
NBG_INTERNAL extern const char *const nbg_ledger_view_names[NBG_VIEW_KIND_COUNT];

#endif
