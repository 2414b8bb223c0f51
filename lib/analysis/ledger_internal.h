/*
 * ledger_internal.h - the ledger's representation, shared by the files that
 * build it (ledger.c), write and read its document (ledger_json.c), re-emit
 * from it (reemit.c) and draw it (ledger_map.c).  Private to libnbg.
 */
#ifndef NBG_ANALYSIS_LEDGER_INTERNAL_H
#define NBG_ANALYSIS_LEDGER_INTERNAL_H

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
};

/* The class and view-kind names, indexed by their enums. */
NBG_INTERNAL extern const char *const nbg_ledger_class_names[NBG_LEDGER_CLASS_COUNT];
NBG_INTERNAL extern const char *const nbg_ledger_view_names[NBG_VIEW_KIND_COUNT];

#endif
