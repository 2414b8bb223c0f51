/*
 * report.h - the reports `nbg inspect` writes.
 *
 * nbg_json_document_write writes the JSON report and its tables (graph,
 * commands, memory, weights) as one document: the stable way to read
 * everything libnbg decodes from a file.
 *
 * The human (text) reports are static-linking-only (at the end).  Each
 * writes to `out` and returns nothing: a write error is the stream's (check
 * ferror(out) after the call).  Text from the file (names) and paths are
 * printed escaped: printable ASCII kept, every other byte as \xNN, so
 * nothing a file holds reaches a terminal raw.
 */
#ifndef NBG_REPORT_H
#define NBG_REPORT_H

#include <stdio.h>

#include "nbg.h"
#include "decoded.h"
#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What nbg_text_graph prints: the NBG_GRAPH_JSON_* bits of the same tables. */
#define NBG_TEXT_GRAPH_LAYERS NBG_GRAPH_JSON_LAYERS
#define NBG_TEXT_GRAPH_OPERATIONS NBG_GRAPH_JSON_OPERATIONS
#define NBG_TEXT_GRAPH_PATCHES NBG_GRAPH_JSON_PATCHES

/* What nbg_json_document_write puts in the document besides the
 * NBG_GRAPH_JSON_* bits (graph.h), which add those graph keys. */
#define NBG_JSON_DOC_NO_CORE 0x100u  /* only "nbgkit_version" and "path" instead
				      * of the whole core report */
#define NBG_JSON_DOC_COMMANDS 0x200u /* "commands" (doc/commands.md) */
#define NBG_JSON_DOC_MEMORY 0x400u   /* "memory" (doc/memory.md) */
#define NBG_JSON_DOC_WEIGHTS 0x800u  /* "weights" (doc/weights.md) */
#define NBG_JSON_DOC_NETWORK 0x1000u /* "network": layers, tensors, edges (doc/commands.md) */

/*
 * Writes one JSON document to `out`: the core report of the model (the
 * parsed fields under the field map's parser keys, its integrity, sections,
 * inputs, outputs and notes; with NBG_JSON_DOC_NO_CORE only its version and
 * path), then the graph's keys that what & NBG_GRAPH_JSON_ALL selects (the
 * operations with their sizes from the memory analysis), "commands",
 * "memory" and "weights" as `what` selects, in that order: the bytes
 * json_dumps(JSON_INDENT(2) | JSON_PRESERVE_ORDER) gives for the object
 * holding all of them, no newline after it.  The document is streamed: the
 * memory it needs is that of the decoded graph, not of the document (what
 * `nbg inspect --json` writes).  Returns NBG_OK, NBG_E_OUT_OF_MEMORY, or
 * NBG_E_IO when `out` failed (err filled); on a failure part of the
 * document may have been written.
 */
NBG_API nbg_code nbg_json_document_write(FILE *out, const nbg_model *m, const char *path,
					 unsigned what, nbg_error *err);
/* The same document from a decoded model (decoded.h): its parts are decoded
 * at most once, whatever else has used them or will. */
NBG_API nbg_code nbg_json_document_write_decoded(FILE *out, nbg_decoded *d, const char *path,
						 unsigned what, nbg_error *err);

#ifdef __cplusplus
}
#endif
#endif

/* Static-linking-only: not part of the stable interface (doc/api.md). */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_REPORT_H_STATIC_LINKING_ONLY)
#define NBG_REPORT_H_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

/* The whole default report of a parsed model: header, I/O records, sections,
 * notes, then the graph summary.  `path` is shown as the file's name. */
NBG_API void nbg_text_report(FILE *out, const nbg_model *m, const char *path);
/* The same report from a decoded model (decoded.h), whose graph and
 * commands it decodes at most once and leaves for the caller's tables. */
NBG_API void nbg_text_report_decoded(FILE *out, nbg_decoded *d, const char *path);
/* `nbg inspect --network`: the Network table of the report, then every edge
 * of the network view with its bytes and basis (nbg/layers.h). */
NBG_API void nbg_text_network(FILE *out, nbg_decoded *d);
/* Only the edges: for a caller that printed the default report, which holds
 * the Network table already. */
NBG_API void nbg_text_network_edges(FILE *out, nbg_decoded *d);

/* The tables `what` selects, then the tables' coverage and every finding. */
NBG_API void nbg_text_graph(FILE *out, const nbg_model *m, const nbg_graph *g, unsigned what);

#ifdef __cplusplus
}
#endif
#endif
