/*
 * corpus.h - libnbg corpus aggregates: the relations that hold across many
 * NBG files, one record per file, and parts that merge (doc/corpus.md).
 *
 * An nbg_corpus is an opaque aggregate the library allocates.  Add to it the
 * measurement of every file (nbg_corpus_add_item, or the models and
 * failures directly); read it back as the JSON document (nbg_corpus_json),
 * which is also a part that nbg_corpus_from_json reads back, or as the
 * human report (nbg_text_corpus).  It keeps counts, value sets, ranges,
 * distinct connection-tail digests and failure counts, never the models:
 * its memory grows with the distinct values seen, not with the number of
 * files.  Its output is canonical (every set sorted), so the same files
 * give the same document whatever order they were added in, and merging
 * aggregates of disjoint sets of files gives exactly the aggregate of their
 * union.
 *
 * Ownership: nbg_corpus_new() and nbg_corpus_from_json() return aggregates
 * the caller frees with nbg_corpus_free(); every char * returned is the
 * caller's to free(); an item (nbg_corpus_item_new) owns its model and its
 * buffer until nbg_corpus_item_free().  Both are opaque, so they can grow
 * without changing what a caller compiled against.
 *
 * Thread safety: an aggregate has no lock.  Calls that change one aggregate
 * must not overlap with any other call on the same aggregate; different
 * aggregates may be used on different threads at once (one per thread, then
 * nbg_corpus_merge, is how `nbg corpus --jobs` works), and functions taking
 * a const aggregate may run concurrently with each other.  The same holds
 * for items.
 */
#ifndef NBG_CORPUS_H
#define NBG_CORPUS_H

#include <stdio.h>

#include "nbg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nbg_corpus nbg_corpus;

/* What became of one file of a corpus. */
typedef enum nbg_corpus_status {
	NBG_CORPUS_VALID = 0,           /* a valid NBG, aggregated */
	NBG_CORPUS_INVALID = 1,         /* read, not a valid NBG: the parser's code and offset */
	NBG_CORPUS_UNREADABLE = 2,      /* could not be opened or read (errno kept) */
	NBG_CORPUS_VANISHED = 3,        /* did not exist when it was to be read */
	NBG_CORPUS_CHANGED = 4,         /* its size changed after the walk or while read */
	NBG_CORPUS_DIGEST_MISMATCH = 5, /* its SHA-256 differs from the manifest's */
	NBG_CORPUS_NOT_REGULAR = 6,     /* a FIFO, device, socket or directory: never opened */
	NBG_CORPUS_STATUS_COUNT = 7
} nbg_corpus_status;

/* "valid", "invalid", "unreadable", "vanished", "changed", "digest-mismatch",
 * "not-regular"; NULL out of range. */
NBG_API const char *nbg_corpus_status_name(nbg_corpus_status s);

/* Entries of a walk that are not files of the corpus, by reason. */
typedef enum nbg_corpus_skip {
	NBG_CORPUS_SKIP_UNREADABLE = 0,    /* a path, directory or manifest that could not be read */
	NBG_CORPUS_SKIP_SYMLINK = 1,       /* a symbolic link to a directory, not followed */
	NBG_CORPUS_SKIP_REVISITED = 2,     /* a directory reached again (a loop or a second link) */
	NBG_CORPUS_SKIP_MANIFEST_LINE = 3, /* a manifest line that is not "<sha256>  <path>" */
	NBG_CORPUS_SKIP_COUNT = 4
} nbg_corpus_skip;

/* "unreadable", "directory-symlink", "directory-revisited", "manifest-line";
 * NULL out of range. */
NBG_API const char *nbg_corpus_skip_name(nbg_corpus_skip s);

/* A new, empty aggregate; NULL when memory runs out. */
NBG_API nbg_corpus *nbg_corpus_new(void);
NBG_API void nbg_corpus_free(nbg_corpus *c);

/*
 * Adding.  Each returns NBG_OK, or NBG_E_OUT_OF_MEMORY when a value could
 * not be stored; the aggregate is then incomplete and nbg_corpus_json()
 * returns NULL (nbg_corpus_ok() tells).
 */
/* One valid file: its model (not kept). */
NBG_API nbg_code nbg_corpus_add_model(nbg_corpus *c, const nbg_model *m);
/* One file that is not a valid NBG: the code nbg_parse returned. */
NBG_API nbg_code nbg_corpus_add_failure(nbg_corpus *c, nbg_code code);
/* One file that was not measured: status UNREADABLE .. NOT_REGULAR. */
NBG_API nbg_code nbg_corpus_add_unmeasured(nbg_corpus *c, nbg_corpus_status status);
/* One entry of a walk that is not a file of the corpus. */
NBG_API nbg_code nbg_corpus_add_skipped(nbg_corpus *c, nbg_corpus_skip reason);
/* Adds everything in src to dst: dst becomes the aggregate of both files'
 * sets (src is unchanged).  NBG_E_CORPUS_PART when a count of the sum
 * would pass 2^64-1 (parts read back can claim such counts; the count
 * stays at 2^64-1), NBG_E_OUT_OF_MEMORY when a value could not be kept. */
NBG_API nbg_code nbg_corpus_merge(nbg_corpus *dst, const nbg_corpus *src);
/* 1 when nothing was lost to a memory failure. */
NBG_API int nbg_corpus_ok(const nbg_corpus *c);

/* Counts for callers: files added, and the exit code a run over them calls
 * for (0 all valid; 3 when a file or walk entry could not be read or memory
 * ran out; else 1 when a file was invalid, mismatched its manifest or a
 * manifest line was malformed). */
NBG_API uint64_t nbg_corpus_file_count(const nbg_corpus *c);
NBG_API int nbg_corpus_exit(const nbg_corpus *c);

/* The aggregate as one JSON document (malloc'd, NUL-terminated, no final
 * newline); NULL when memory runs out or the aggregate is incomplete. */
NBG_API char *nbg_corpus_json(const nbg_corpus *c);

/*
 * Reads a document nbg_corpus_json() wrote (a "part") into a new aggregate.
 * Refuses, with NBG_E_CORPUS_PART and a sentence in err, a document that is
 * not such a part, whose counts do not add up, or that another nbgkit
 * version wrote (parts merge only within one version: the document's keys
 * and the values it aggregates are defined by the version).  `name` (may be
 * NULL) names the part in messages.
 */
NBG_API nbg_code nbg_corpus_from_json(const char *text, size_t len, const char *name,
				      nbg_corpus **out, nbg_error *err);

/* The human report: the corpus tables (write errors are the stream's). */
NBG_API void nbg_text_corpus(FILE *out, const nbg_corpus *c);

/* ------------------------------------------------------------ one file */

/* What the caller knows of a file before it is read.  Set `size` to
 * sizeof(nbg_corpus_expect): the library reads only the members that fit,
 * so the struct can grow at its end. */
typedef struct nbg_corpus_expect {
	size_t size;
	int has_size;          /* 1: the size the directory walk saw */
	uint64_t file_size;
	int has_sha256;        /* 1: the digest a manifest lists */
	uint8_t sha256[32];
	uint64_t max_file_size;   /* the parse's work limits (nbg_parse_options; */
	uint64_t max_undescribed; /* 0: the defaults) */
} nbg_corpus_expect;

/* One file's measurement: opaque, read through the accessors below.  One
 * item may be reused for file after file (its buffer is kept). */
typedef struct nbg_corpus_item nbg_corpus_item;

/* A new item; NULL when memory runs out.  nbg_corpus_item_free frees it,
 * its model and its buffer. */
NBG_API nbg_corpus_item *nbg_corpus_item_new(void);
NBG_API void nbg_corpus_item_free(nbg_corpus_item *it);

/*
 * Measures the file at `path` into `it` (exp may be NULL), replacing what
 * the item held: stat first, and a path that is not a regular file is never
 * opened; then opened with O_NONBLOCK | O_NOCTTY | O_CLOEXEC, read whole,
 * checked against the expected size and digest, and parsed.  A file over
 * 1 MiB is mapped instead of read when the program installed the signal
 * guards (nbg_install_signal_guards: a file cut meanwhile is `changed`, not
 * a SIGBUS), so the size limit and the header come first: a file they
 * refuse is not read, has no SHA-256 (nbg_corpus_item_sha256 says 0) and
 * its manifest digest is not checked -- it is invalid either way.  Returns the
 * item's error code (NBG_OK when the file is valid); the status says which
 * kind of result it is.  All of it runs on the calling thread
 * (NBG_PARSE_ONE_THREAD): measure items on several threads to use several
 * cores, as nbg corpus --jobs does.
 */
NBG_API nbg_code nbg_corpus_measure(nbg_corpus_item *it, const char *path,
				    const nbg_corpus_expect *exp);

NBG_API nbg_corpus_status nbg_corpus_item_status(const nbg_corpus_item *it);
/* What happened: code NBG_OK for a valid file; the parser's code and offset
 * for an invalid one; the reason otherwise. */
NBG_API const nbg_error *nbg_corpus_item_error(const nbg_corpus_item *it);
/* 1 and *size when the size is known (bytes read, or what stat reported). */
NBG_API int nbg_corpus_item_size(const nbg_corpus_item *it, uint64_t *size);
/* 1 and the SHA-256 of the bytes read, when they were read. */
NBG_API int nbg_corpus_item_sha256(const nbg_corpus_item *it, uint8_t out[32]);
/* The model of a valid file (owned by the item, valid until the next
 * nbg_corpus_measure or nbg_corpus_item_free); NULL otherwise. */
NBG_API const nbg_model *nbg_corpus_item_model(const nbg_corpus_item *it);
/* Adds a measured item to the aggregate by its status. */
NBG_API nbg_code nbg_corpus_add_item(nbg_corpus *c, const nbg_corpus_item *it);
/* The exit code the item calls for (0 valid, 1 invalid, 3 unreadable ...). */
NBG_API int nbg_corpus_item_exit(const nbg_corpus_item *it);

/* The item's record: one JSON object on one line (no newline), keys in the
 * order doc/corpus.md lists; `path` is kept when valid UTF-8, else every
 * byte >= 0x80 as \xNN.  malloc'd; NULL when memory runs out. */
NBG_API char *nbg_corpus_record_json(const nbg_corpus_item *it, const char *path);

#ifdef __cplusplus
}
#endif
#endif
