/*
 * json_stream.h - JSON documents written as they are produced, in exactly
 * the bytes json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) gives for
 * the whole document, without the whole document ever being in memory.
 *
 * The writer opens objects and arrays itself (their members are streamed);
 * a member that is small (one record, a summary) is built as a jansson value
 * and dumped by jansson in place, indented to its depth, so every scalar,
 * string escape and number is jansson's own.  Private to libnbg.
 */
#ifndef NBG_REPORT_JSON_STREAM_H
#define NBG_REPORT_JSON_STREAM_H

#include <stdio.h>

#include <jansson.h>

#include "common/internal.h"

#define NBG_JW_MAX_DEPTH 16

#define NBG_JW_BUFFER 16384

typedef struct nbg_jw {
	FILE *f;
	unsigned depth;                     /* containers open */
	char close[NBG_JW_MAX_DEPTH];       /* '}' or ']' of each */
	size_t items[NBG_JW_MAX_DEPTH];     /* members written into each */
	int failed;                         /* 1: a value was missing (allocation),
					     * 2: the stream failed */
	size_t len;                         /* bytes in buf, not yet in f */
	char buf[NBG_JW_BUFFER];            /* jansson hands over a token at a time */
} nbg_jw;

NBG_INTERNAL void nbg_jw_init(nbg_jw *w, FILE *f);
/* Opens an object or array as the member `key` of the enclosing object
 * (key NULL: an element of an array, or the document itself). */
NBG_INTERNAL void nbg_jw_object(nbg_jw *w, const char *key);
NBG_INTERNAL void nbg_jw_array(nbg_jw *w, const char *key);
/* Closes the innermost open object or array; closing the document itself
 * hands everything to the stream. */
NBG_INTERNAL void nbg_jw_end(nbg_jw *w);
/* Writes v (any jansson value; stolen) as member `key` or array element.
 * NULL (an allocation that failed) marks the writer failed. */
NBG_INTERNAL void nbg_jw_put(nbg_jw *w, const char *key, json_t *v);
/* Writes every member of the object obj (stolen), in its order. */
NBG_INTERNAL void nbg_jw_members(nbg_jw *w, json_t *obj);
/* NBG_OK, or NBG_E_OUT_OF_MEMORY / NBG_E_IO (err filled) when a value was
 * missing or the stream failed. */
NBG_INTERNAL nbg_code nbg_jw_status(nbg_jw *w, nbg_error *err);

#endif
