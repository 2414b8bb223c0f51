/*
 * coefficients.h - what the reports read of lib/coef beyond
 * include/nbg/weights.h: how many bytes of coefficient data a graph has,
 * by the rule the decoder locates kernel streams with.  A decoded weights
 * result is read through the accessors of nbg/weights.h; its layout stays
 * in weights_internal.h, private to lib/coef.  Private to libnbg.
 */
#ifndef NBG_COEF_COEFFICIENTS_H
#define NBG_COEF_COEFFICIENTS_H

#include "common/internal.h"
#include "nbg/graph.h"

/* Bytes of the coefficient data kernel patches point into (COEF_DATA; v1:
 * the LCD), 0 when the file has none. */
NBG_INTERNAL uint64_t nbg_weights_coefficient_bytes(const nbg_graph *g);

#endif
