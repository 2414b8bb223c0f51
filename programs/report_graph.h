/*
 * report_graph.h - human tables of the decoded graph for `nbg inspect`.
 */
#ifndef NBG_REPORT_GRAPH_H
#define NBG_REPORT_GRAPH_H

#include <stdio.h>

#include "nbg.h"
#include "nbg_graph.h"

/* What to print: the NBG_GRAPH_JSON_* bits of the same tables. */
#define NBG_TEXT_GRAPH_LAYERS NBG_GRAPH_JSON_LAYERS
#define NBG_TEXT_GRAPH_OPERATIONS NBG_GRAPH_JSON_OPERATIONS
#define NBG_TEXT_GRAPH_PATCHES NBG_GRAPH_JSON_PATCHES

/* The default report's graph part: counts, tables, relation totals and the
 * first layers, pointing at the flags.  Decodes the graph itself. */
void nbg_text_graph_summary(FILE *out, const nbg_model *m);

/* The tables `what` selects, then the tables' coverage and every finding. */
void nbg_text_graph(FILE *out, const nbg_model *m, const nbg_graph *g, unsigned what);

#endif
