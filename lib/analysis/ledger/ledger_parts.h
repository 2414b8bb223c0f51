/*
 * ledger_parts.h - what a later stage gives the ledger beyond
 * include/nbg/ledger.h: the parts of section payloads it proved (lib/coef's
 * decoded kernel streams, nbg_ledger_build_weights), each to be owned on its
 * own.  The ledger's representation stays in ledger_internal.h, private to
 * lib/analysis.  Private to libnbg.
 */
#ifndef NBG_ANALYSIS_LEDGER_PARTS_H
#define NBG_ANALYSIS_LEDGER_PARTS_H

#include "common/internal.h"
#include "nbg/ledger.h"

/* A part of a section payload that a later stage proved (a decoded kernel
 * stream): it owns its bytes with its own class and owner; the rest of the
 * section stays the section's.  Parts are sorted by offset, do not overlap
 * and each lies inside one section (others are ignored). */
typedef struct nbg_ledger_part {
	uint64_t offset, size;
	nbg_ledger_class cls;
	char owner[NBG_LEDGER_NAME_MAX];
} nbg_ledger_part;

/* nbg_ledger_build, with those parts claimed on their own. */
NBG_INTERNAL nbg_code nbg_ledger_build_parts(const nbg_model *m, const nbg_ledger_part *parts,
					     size_t n, nbg_ledger **out, nbg_error *err);

#endif
