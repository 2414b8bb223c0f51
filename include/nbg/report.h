/*
 * report.h - libnbg's human (text) reports: the ones `nbg inspect` prints.
 *
 * Every function writes to `out` and returns nothing: a write error is the
 * stream's (check ferror(out) after the call).  Text from the file (names)
 * and paths are printed escaped: printable ASCII kept, every other byte as
 * \xNN, so nothing a file holds reaches a terminal raw.
 *
 * The JSON reports are declared in nbg.h (nbg_report_json) and graph.h
 * (nbg_graph_json).
 */
#ifndef NBG_REPORT_H
#define NBG_REPORT_H

#include <stdio.h>

#include "nbg.h"
#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The whole default report of a parsed model: header, I/O records, sections,
 * notes, then the graph summary.  `path` is shown as the file's name. */
NBG_API void nbg_text_report(FILE *out, const nbg_model *m, const char *path);

/* The v1 part of the report (prefix, strides, opaque bytes); called by
 * nbg_text_report for v1 models, public for tools that print it alone. */
NBG_API void nbg_text_v1(FILE *out, const nbg_model *m);

/* What nbg_text_graph prints: the NBG_GRAPH_JSON_* bits of the same tables. */
#define NBG_TEXT_GRAPH_LAYERS NBG_GRAPH_JSON_LAYERS
#define NBG_TEXT_GRAPH_OPERATIONS NBG_GRAPH_JSON_OPERATIONS
#define NBG_TEXT_GRAPH_PATCHES NBG_GRAPH_JSON_PATCHES

/* The default report's graph part: counts, tables, relation totals and the
 * first layers.  Decodes the graph itself. */
NBG_API void nbg_text_graph_summary(FILE *out, const nbg_model *m);

/* The tables `what` selects, then the tables' coverage and every finding. */
NBG_API void nbg_text_graph(FILE *out, const nbg_model *m, const nbg_graph *g, unsigned what);

#ifdef __cplusplus
}
#endif
#endif
