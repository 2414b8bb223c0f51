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
#include "nbg/weights.h"

/* Bytes of the coefficient data kernel patches point into (COEF_DATA; v1:
 * the LCD), 0 when the file has none. */
NBG_INTERNAL uint64_t nbg_weights_coefficient_bytes(const nbg_graph *g);
/* A min or max of nbg_weights_op_stats as the reports print it: 1 with *v
 * the value where the codes are floats (fp16 kernels, NN_LUT tables), else
 * 0 with *v the integer code. */
NBG_INTERNAL int nbg_weights_stat_value(const nbg_weights_op *o, uint32_t stat, double *v);

#endif
