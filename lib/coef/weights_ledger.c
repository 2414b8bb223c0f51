/*
 * weights_ledger.c - nbg_ledger_build_weights(): the ledger with the bytes
 * the decoded kernel streams explain (from each stream's start to the end of
 * its coefficient-table entry: header, core streams, padding, bias block,
 * zero tail, every byte of it checked) owned by ranges of class
 * decoded-coefficients.
 */
#include <stdio.h>
#include <stdlib.h>

#include "analysis/ledger/ledger_parts.h"
#include "coef/weights_internal.h"

nbg_code nbg_ledger_build_weights(const nbg_model *m, const nbg_weights *w, nbg_ledger **out,
				  nbg_error *err)
{
	nbg_ledger_part *parts;
	nbg_code rc;

	if (out)
		*out = NULL;
	if (!w || !out)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "weights",
				     "nbg_ledger_build_weights needs decoded weights and a result "
				     "pointer");
	parts = calloc(w->span_count ? w->span_count : 1, sizeof(*parts));
	if (!parts)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory",
				     "out of memory building the ledger");
	for (size_t i = 0; i < w->span_count; i++) {
		parts[i].offset = w->spans[i].offset;
		parts[i].size = w->spans[i].size;
		parts[i].cls = NBG_LEDGER_DECODED_COEFFICIENTS;
		snprintf(parts[i].owner, sizeof(parts[i].owner), "kernel stream of operation %zu",
			 w->spans[i].operation);
	}
	rc = nbg_ledger_build_parts(m, parts, w->span_count, out, err);
	free(parts);
	return rc;
}
