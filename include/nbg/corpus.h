/*
 * corpus.h - libnbg corpus aggregates: the relations that hold across many
 * NBG files (doc/corpus.md).
 *
 * An nbg_corpus is an opaque aggregate the library allocates.  Feed it the
 * models of valid files and the failures of the others; read it back as the
 * JSON document (nbg_corpus_json) or the human report (nbg_text_corpus).
 * It keeps counts, value sets, ranges and distinct connection-tail digests,
 * never the models themselves: the caller may free a model as soon as
 * nbg_corpus_add_model() returns.
 *
 * Ownership: nbg_corpus_new() returns an aggregate the caller frees with
 * nbg_corpus_free(); the strings nbg_corpus_json() returns are the caller's
 * to free().
 *
 * Thread safety: an aggregate has no lock.  Calls that change one aggregate
 * must not overlap with any other call on the same aggregate; calls on
 * different aggregates may run on different threads at once, and functions
 * that take a const aggregate may run concurrently with each other.
 */
#ifndef NBG_CORPUS_H
#define NBG_CORPUS_H

#include <stdio.h>

#include "nbg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nbg_corpus nbg_corpus;

/* A new, empty aggregate; NULL when memory runs out. */
NBG_API nbg_corpus *nbg_corpus_new(void);
NBG_API void nbg_corpus_free(nbg_corpus *c);

/* One valid file: its model (not kept). */
NBG_API void nbg_corpus_add_model(nbg_corpus *c, const nbg_model *m);

/* One file that is not a valid NBG (code from nbg_parse), or, with
 * NBG_E_IO, one file that could not be read. */
NBG_API void nbg_corpus_add_failure(nbg_corpus *c, nbg_code code);

/* A path (not a file of the corpus) that could not be read. */
NBG_API void nbg_corpus_add_unreadable_path(nbg_corpus *c);

/* The aggregate as one JSON document (malloc'd, NUL-terminated, no final
 * newline); NULL when memory runs out. */
NBG_API char *nbg_corpus_json(const nbg_corpus *c);

/* The human report: the corpus tables (write errors are the stream's). */
NBG_API void nbg_text_corpus(FILE *out, const nbg_corpus *c);

#ifdef __cplusplus
}
#endif
#endif
