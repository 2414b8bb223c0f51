/*
 * corpus.h - the aggregate of `nbg corpus`: the relations that hold across
 * many NBG files, one record per file, and parts that merge (doc/corpus.md).
 * Part of the nbg program (the static library nbgcli_corpus that nbg, its
 * test and its fuzz harness link), not of libnbg: it is built on libnbg's
 * public interface alone.
 *
 * A corpus_agg keeps counts, value sets, ranges, distinct connection-tail
 * digests and failure counts, never the models: its memory grows with the
 * distinct values seen, not with the number of files.  Add to it the
 * measurement of every file (corpus_add_item, or the models and failures
 * directly); read it back as the JSON document (corpus_json), which is also
 * a part that corpus_from_json reads back, or as the human report
 * (corpus_text).  Its output is canonical (every set sorted), so the same
 * files give the same document whatever order they were added in, and
 * merging aggregates of disjoint sets of files gives exactly the aggregate
 * of their union.
 *
 * Ownership: corpus_agg_new() and corpus_from_json() return aggregates the
 * caller frees with corpus_agg_free(); every char * returned is the caller's
 * to free(); an item (corpus_item_new) owns its model and its buffer until
 * corpus_item_free().
 *
 * Threads: an aggregate has no lock.  Calls that change one aggregate must
 * not overlap with any other call on the same aggregate; different
 * aggregates may be used on different threads at once (one per thread, then
 * corpus_merge, is how `nbg corpus --jobs` works), and functions taking a
 * const aggregate may run concurrently with each other.  The same holds for
 * items.
 */
#ifndef NBG_PROGRAMS_CORPUS_H
#define NBG_PROGRAMS_CORPUS_H

#include <stdio.h>

#include "nbg/nbg.h"

typedef struct corpus_agg corpus_agg;

/* What became of one file of a corpus. */
typedef enum corpus_status {
	CORPUS_VALID = 0,           /* a valid NBG, aggregated */
	CORPUS_INVALID = 1,         /* read, not a valid NBG: the parser's code and offset */
	CORPUS_UNREADABLE = 2,      /* could not be opened or read (errno kept) */
	CORPUS_VANISHED = 3,        /* did not exist when it was to be read */
	CORPUS_CHANGED = 4,         /* its size changed after the walk or while read */
	CORPUS_DIGEST_MISMATCH = 5, /* its SHA-256 differs from the manifest's */
	CORPUS_NOT_REGULAR = 6,     /* a FIFO, device, socket or directory: never opened */
	CORPUS_STATUS_COUNT = 7
} corpus_status;

/* "valid", "invalid", "unreadable", "vanished", "changed", "digest-mismatch",
 * "not-regular"; NULL out of range. */
const char *corpus_status_name(corpus_status s);

/* Entries of a walk that are not files of the corpus, by reason. */
typedef enum corpus_skip {
	CORPUS_SKIP_UNREADABLE = 0,    /* a path, directory or manifest that could not be read */
	CORPUS_SKIP_SYMLINK = 1,       /* a symbolic link to a directory, not followed */
	CORPUS_SKIP_REVISITED = 2,     /* a directory reached again (a loop or a second link) */
	CORPUS_SKIP_MANIFEST_LINE = 3, /* a manifest line that is not "<sha256>  <path>" */
	CORPUS_SKIP_COUNT = 4
} corpus_skip;

/* "unreadable", "directory-symlink", "directory-revisited", "manifest-line";
 * NULL out of range. */
const char *corpus_skip_name(corpus_skip s);

/* A new, empty aggregate; NULL when memory runs out. */
corpus_agg *corpus_agg_new(void);
void corpus_agg_free(corpus_agg *c);

/*
 * Adding.  Each returns NBG_OK, or NBG_E_OUT_OF_MEMORY when a value could
 * not be stored; the aggregate is then incomplete and corpus_json() returns
 * NULL (corpus_ok() tells).
 */
/* One valid file: its model (not kept). */
nbg_code corpus_add_model(corpus_agg *c, const nbg_model *m);
/* One file that is not a valid NBG: the code nbg_parse returned. */
nbg_code corpus_add_failure(corpus_agg *c, nbg_code code);
/* One file that was not measured: status UNREADABLE .. NOT_REGULAR. */
nbg_code corpus_add_unmeasured(corpus_agg *c, corpus_status status);
/* One entry of a walk that is not a file of the corpus. */
nbg_code corpus_add_skipped(corpus_agg *c, corpus_skip reason);
/* Adds everything in src to dst: dst becomes the aggregate of both files'
 * sets (src is unchanged).  NBG_E_CORPUS_PART when a count of the sum
 * would pass 2^64-1 (parts read back can claim such counts; the count
 * stays at 2^64-1), NBG_E_OUT_OF_MEMORY when a value could not be kept. */
nbg_code corpus_merge(corpus_agg *dst, const corpus_agg *src);
/* 1 when nothing was lost to a memory failure. */
int corpus_ok(const corpus_agg *c);

/* Counts for callers: files added, and the exit code a run over them calls
 * for (0 all valid; 3 when a file or walk entry could not be read or memory
 * ran out; else 1 when a file was invalid, mismatched its manifest or a
 * manifest line was malformed). */
uint64_t corpus_file_count(const corpus_agg *c);
int corpus_exit(const corpus_agg *c);

/* The aggregate as one JSON document (malloc'd, NUL-terminated, no final
 * newline); NULL when memory runs out or the aggregate is incomplete. */
char *corpus_json(const corpus_agg *c);

/*
 * Reads a document corpus_json() wrote (a "part") into a new aggregate.
 * Refuses, with NBG_E_CORPUS_PART and a sentence in err, a document that is
 * not such a part, whose counts do not add up, or that another nbgkit
 * version wrote (parts merge only within one version: the document's keys
 * and the values it aggregates are defined by the version).  `name` (may be
 * NULL) names the part in messages.
 */
nbg_code corpus_from_json(const char *text, size_t len, const char *name, corpus_agg **out,
			  nbg_error *err);

/* The human report: the corpus tables (write errors are the stream's). */
void corpus_text(FILE *out, const corpus_agg *c);

/* ------------------------------------------------------------ one file */

/* What the caller knows of a file before it is read, and how to read it. */
typedef struct corpus_expect {
	int has_size;          /* 1: the size the directory walk saw */
	uint64_t file_size;
	int has_sha256;        /* 1: the digest a manifest lists */
	uint8_t sha256[32];
	uint64_t max_file_size;   /* the parse's work limits (nbg_parse_options; */
	uint64_t max_undescribed; /* 0: the defaults) */
	int map_large;         /* 1: the process installed the SIGBUS guard
				* (nbg_install_signal_guards), so a file over
				* 1 MiB is mapped instead of read */
} corpus_expect;

/* One file's measurement, read through the accessors below.  One item may
 * be reused for file after file (its buffer is kept). */
typedef struct corpus_item corpus_item;

/* A new item; NULL when memory runs out.  corpus_item_free frees it, its
 * model and its buffer. */
corpus_item *corpus_item_new(void);
void corpus_item_free(corpus_item *it);

/*
 * Measures the file at `path` into `it` (exp may be NULL), replacing what
 * the item held: stat first, and a path that is not a regular file is never
 * opened; then opened with O_NONBLOCK | O_NOCTTY | O_CLOEXEC, read whole,
 * checked against the expected size and digest, and parsed.  A file over
 * 1 MiB is mapped instead of read when exp->map_large says the SIGBUS guard
 * is in (a file cut meanwhile is `changed`, not a SIGBUS), so the size
 * limit and the header come first: a file they refuse is not read, has no
 * SHA-256 (corpus_item_sha256 says 0) and its manifest digest is not
 * checked -- it is invalid either way.  Returns the item's error code
 * (NBG_OK when the file is valid); the status says which kind of result it
 * is.  All of it runs on the calling thread (NBG_PARSE_ONE_THREAD): measure
 * items on several threads to use several cores, as nbg corpus --jobs does.
 */
nbg_code corpus_measure(corpus_item *it, const char *path, const corpus_expect *exp);

corpus_status corpus_item_status(const corpus_item *it);
/* What happened: code NBG_OK for a valid file; the parser's code and offset
 * for an invalid one; the reason otherwise. */
const nbg_error *corpus_item_error(const corpus_item *it);
/* 1 and *size when the size is known (bytes read, or what stat reported). */
int corpus_item_size(const corpus_item *it, uint64_t *size);
/* 1 and the SHA-256 of the bytes read, when they were read. */
int corpus_item_sha256(const corpus_item *it, uint8_t out[32]);
/* The model of a valid file (owned by the item, valid until the next
 * corpus_measure or corpus_item_free); NULL otherwise. */
const nbg_model *corpus_item_model(const corpus_item *it);
/* Adds a measured item to the aggregate by its status. */
nbg_code corpus_add_item(corpus_agg *c, const corpus_item *it);
/* The exit code the item calls for (0 valid, 1 invalid, 3 unreadable ...). */
int corpus_item_exit(const corpus_item *it);

/* The item's record: one JSON object on one line (no newline), keys in the
 * order doc/corpus.md lists; `path` is the file's name as JSON (the caller
 * escapes it as every report does; stolen).  malloc'd; NULL when memory
 * runs out. */
struct json_t;
char *corpus_record_json(const corpus_item *it, struct json_t *path);

#endif
