/*
 * diff_struct.h - the definition of the opaque nbg_diff (include/nbg/diff.h).
 * Callers outside libnbg use the nbg_diff_* accessors.  Never installed.
 */
#ifndef NBG_DIFF_STRUCT_H
#define NBG_DIFF_STRUCT_H

#include "nbg/diff.h"

struct nbg_diff {
	nbg_diff_summary sum;
	size_t count;
	nbg_diff_item *items;    /* fields in model order, then owner ranges by file offset */
	size_t owner_count;      /* every differing owner, by file offset (A's, else B's) */
	nbg_diff_owner *owners;
	nbg_reconstruction *reconstruction; /* never NULL in a result */
};

#endif
