/*
 * nbg_diff.h - controlled differentials between two parsed NBG files, mapped
 * to the structures that changed.
 *
 * A difference is reported twice over, on purpose, at two levels:
 *  - fields: decoded values that differ (header and sub-header words, network
 *    info, memory sizes, directory records, I/O records, checksum records,
 *    dynamic-I/O entries), named by their parser keys;
 *  - bytes: owner ranges of the byte-ownership ledger (nbg_ledger.h) whose
 *    bytes differ, matched by owner name, with the changed byte runs located
 *    inside the owner (record index and field, dynamic-I/O entry, ...).
 * Every changed byte of two equal-length files is counted in bytes_changed.
 *
 * Thread safety: reentrant.  Memory: the result is owned by the caller.
 */
#ifndef NBG_DIFF_H
#define NBG_DIFF_H

#include "nbg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nbg_diff_kind {
	NBG_DIFF_FIELD = 0,   /* a decoded value differs: a -> b */
	NBG_DIFF_ADDED = 1,   /* a structure only B has */
	NBG_DIFF_REMOVED = 2, /* a structure only A has */
	NBG_DIFF_BYTES = 3,   /* a run of changed bytes inside an owner present in both */
} nbg_diff_kind;

NBG_API const char *nbg_diff_kind_name(nbg_diff_kind k);

typedef struct nbg_diff_item {
	nbg_diff_kind kind;
	char path[128];     /* "header.crc32", "input 0.dimensions", "section 20 DYNAIO" */
	char a[96], b[96];  /* values (FIELD), sizes (ADDED/REMOVED), "" otherwise */
	uint64_t offset_a, offset_b; /* file offsets in A and B (one is 0 for ADDED/REMOVED) */
	uint64_t length;    /* bytes in the run / structure */
	char detail[128];   /* where inside the owner: "dynaio entry 0 +3", "record 2 data_format" */
} nbg_diff_item;

/* One owner range that differs, with exact counts. */
typedef struct nbg_diff_owner {
	nbg_diff_kind kind;         /* BYTES (in both), ADDED or REMOVED */
	char owner[64];
	uint64_t offset_a, offset_b;/* where it starts in A / B (0 when absent) */
	uint64_t size_a, size_b;    /* 0 when absent */
	uint64_t bytes_changed;     /* same size: bytes that differ; else 0 */
	size_t runs;                /* same size: runs of differing bytes */
	uint64_t first_change;      /* same size: A's offset of the first differing byte */
} nbg_diff_owner;

typedef struct nbg_diff {
	int identical;           /* 1: the two files are byte-identical */
	size_t count;
	nbg_diff_item *items;    /* fields in model order, then owner ranges by file offset */
	size_t field_count;      /* items of kind FIELD */
	size_t owners_changed;   /* owner ranges in both whose bytes differ */
	size_t owners_added, owners_removed;
	uint64_t bytes_changed;  /* changed bytes inside owners present in both (same size) */
	int truncated;           /* 1: more items than NBG_DIFF_MAX_ITEMS; counts stay exact */
	size_t owner_count;      /* every differing owner, by file offset (A's, else B's) */
	nbg_diff_owner *owners;
} nbg_diff;

#define NBG_DIFF_MAX_ITEMS 4096
#define NBG_DIFF_MAX_RUNS_PER_OWNER 32

/* Compares two successfully parsed models (their buffers still alive).
 * Returns NBG_OK and a result in *out, or a failure (out of memory, or a
 * ledger that could not be built) with *out NULL and err filled. */
NBG_API nbg_code nbg_diff_models(const nbg_model *a, const nbg_model *b, nbg_diff **out,
				 nbg_error *err);
NBG_API void nbg_diff_free(nbg_diff *d);

/* The result as one JSON document (malloc'd), NULL on allocation failure:
 * a, b, identical, summary, owners, differences. */
NBG_API char *nbg_diff_json(const nbg_diff *d, const nbg_model *a, const char *path_a,
			    const nbg_model *b, const char *path_b);

#ifdef __cplusplus
}
#endif
#endif
