/*
 * cli_compare.h - the figures of a comparison of two tensors
 * (nbg_tensor_measure) as nbg compare and nbg run --golden print them, in
 * text and JSON (cmd_compare.c), so both say the same.
 */
#ifndef NBG_CLI_COMPARE_H
#define NBG_CLI_COMPARE_H

#include <stdio.h>

#include <jansson.h>

#include "nbg/tensor.h"

/* "B/N elements beyond T (first at I); max |diff| X UNIT[, Y dequantized];
 * mean |diff| ...; cosine C; top-K k/K", and a newline; unit names the
 * values compared ("stored", "float32"). */
void cli_compare_figures(FILE *out, const nbg_tensor_stats *s, const char *unit);
/* The same into o: elements, beyond, first_beyond, max_abs_diff_UNIT,
 * mean_abs_diff_UNIT, max_abs_diff_dequantized, mean_abs_diff_dequantized,
 * cosine, top_k, top_k_common, top1_equal. */
void cli_compare_json_add(json_t *o, const nbg_tensor_stats *s, const char *unit);

#endif
