/*
 * diff.h - controlled differentials between two parsed NBG files, mapped to
 * the structures that changed, and the test of whether B is exactly A with
 * dynamic-I/O payloads substituted (doc/diff.md).
 *
 * A difference is reported twice over, on purpose, at two levels:
 *  - fields: decoded values that differ (header and sub-header words, network
 *    info, memory sizes, directory records, I/O records, checksum records,
 *    dynamic-I/O entries), named by their parser keys;
 *  - bytes: owner ranges of the byte-ownership ledger (ledger.h) whose bytes
 *    differ, matched by owner name, with the changed byte runs located inside
 *    the owner (record index and field, dynamic-I/O entry, ...).
 * Every changed byte of two equal-length files is counted in bytes_changed.
 *
 * Then the reconstruction (nbg_reconstruct): when both files are v2 with the
 * same layout, B's bytes are copied into a copy of A, in memory, only inside
 * A's dynamic-I/O entry payloads; every section checksum record and the
 * header file checksum are recomputed by the code the parser verifies files
 * with; the result is compared with B.  Equal SHA-256: B is A with those
 * payloads substituted ("explained").  Nothing is ever written to a file.
 *
 * Thread safety: reentrant.  Memory: results are allocated by the library
 * and freed by the caller (nbg_diff_free, nbg_reconstruction_free); their
 * arrays are read through the *_at accessors (doc/api.md).
 */
#ifndef NBG_DIFF_H
#define NBG_DIFF_H

#include <stdio.h>

#include "nbg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------- reconstruction */

/* A dynamic-I/O entry whose payload differs, substituted from B. */
typedef struct nbg_recon_entry {
	uint32_t index;            /* table entry */
	uint32_t region_offset;    /* offset inside the DYNAIO region */
	uint32_t size;             /* payload bytes */
	uint64_t file_offset;      /* file offset of the payload */
	uint64_t bytes_changed;    /* bytes of B that differ from A in it */
} nbg_recon_entry;

/* A checksum word recomputed over the substituted bytes. */
typedef struct nbg_recon_checksum {
	char word[64];             /* "header.crc32", "section_checksums.COEF_DATA" */
	uint64_t offset;           /* file offset of the word */
	uint32_t a;                /* as stored in A */
	uint32_t recomputed;       /* over the result */
	uint32_t b;                /* as stored in B */
} nbg_recon_checksum;

/* Bytes of one owner where the result and B still differ. */
typedef struct nbg_recon_range {
	char owner[64];            /* ledger owner of A: "section 24 COEF_DATA" */
	char detail[128];          /* where the first byte lies in the owner */
	uint64_t offset, length;   /* the first run of differing bytes */
	uint64_t bytes;            /* every differing byte of this kind in the owner */
	int checksum_word;         /* 1: bytes of recomputed checksum words only */
	char result[24], b[24];    /* hex of the first run (up to 8 bytes), result / B */
} nbg_recon_range;

#define NBG_RECON_MAX_RANGES 64

typedef struct nbg_reconstruction {
	int attempted;             /* 0: not applicable; reason says why */
	int explained;             /* 1: the result is byte for byte B */
	char reason[512];          /* one sentence: why not attempted / the verdict */
	size_t entry_count;        /* entries substituted, file order */
	nbg_recon_entry *entries;
	size_t checksum_count;     /* every checksum word recomputed, file order */
	nbg_recon_checksum *checksums;
	uint8_t sha256[32];        /* of the result */
	uint8_t sha256_b[32];      /* of B */
	uint64_t unexplained_bytes;/* bytes outside checksum words where result != B */
	uint64_t checksum_bytes;   /* bytes of checksum words where result != B */
	size_t range_count;        /* owners with differing bytes, file order */
	nbg_recon_range *ranges;   /* at most NBG_RECON_MAX_RANGES; counts stay exact */
	int ranges_truncated;
	/* The first range the substitution cannot account for: the first range
	 * outside checksum words, else the first checksum word; one of ranges.
	 * NULL when explained or not attempted. */
	const nbg_recon_range *first;
} nbg_reconstruction;

/* ------------------------------------------------------------------ diff */

typedef enum nbg_diff_kind {
	NBG_DIFF_FIELD = 0,   /* a decoded value differs: a -> b */
	NBG_DIFF_ADDED = 1,   /* a structure only B has */
	NBG_DIFF_REMOVED = 2, /* a structure only A has */
	NBG_DIFF_BYTES = 3,   /* a run of changed bytes inside an owner present in both */
} nbg_diff_kind;

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

/* The counts of a comparison (nbg_diff_summary_of). */
typedef struct nbg_diff_summary {
	int identical;           /* 1: the two files are byte-identical */
	size_t field_count;      /* items of kind FIELD */
	size_t owners_changed;   /* owner ranges in both whose bytes differ */
	size_t owners_added, owners_removed;
	uint64_t bytes_changed;  /* changed bytes inside owners present in both (same size) */
	int truncated;           /* 1: more items than NBG_DIFF_MAX_ITEMS; counts stay exact */
	int checksums_match_a, checksums_match_b; /* nbg_model_checksums_match */
	size_t records_added, records_removed;    /* I/O records only in B / only in A */
} nbg_diff_summary;

/* A comparison: opaque, read through the nbg_diff_* accessors below. */
typedef struct nbg_diff nbg_diff;

#define NBG_DIFF_MAX_ITEMS 4096
#define NBG_DIFF_MAX_RUNS_PER_OWNER 32

#ifdef __cplusplus
}
#endif
#endif

/* Static-linking-only: not part of the stable interface (doc/api.md). */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_DIFF_H_STATIC_LINKING_ONLY)
#define NBG_DIFF_H_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

/*
 * Attempts the reconstruction of B from A (see the top of this file) and
 * stores a new result in *out.  Not attempted (attempted 0, reason set,
 * NBG_OK) when the files are identical, either is v1 (v1 has no dynamic-I/O
 * table), A's stored checksums do not match its bytes, the sizes or section
 * directories differ, or the files have no dynamic-I/O sections.  B's
 * checksums need not match its bytes (then B is never explained).  Returns
 * NBG_OK, or NBG_E_OUT_OF_MEMORY (or a ledger failure) with *out NULL and
 * err filled.
 */
NBG_API nbg_code nbg_reconstruct(const nbg_model *a, const nbg_model *b,
				 nbg_reconstruction **out, nbg_error *err);
NBG_API void nbg_reconstruction_free(nbg_reconstruction *r);

/* Element i of the result's arrays, or NULL past the end. */
NBG_API const nbg_recon_entry *nbg_reconstruction_entry_at(const nbg_reconstruction *r,
							   size_t i);
NBG_API const nbg_recon_checksum *nbg_reconstruction_checksum_at(const nbg_reconstruction *r,
								 size_t i);
NBG_API const nbg_recon_range *nbg_reconstruction_range_at(const nbg_reconstruction *r,
							   size_t i);

/* 1 when every checksum the model's file carries and its version's rules
 * check (v2 section records and header crc_sum, a v1 nbg_crc_sum under its
 * version's rule) equals the one its bytes give: its integrity is not
 * NBG_INTEGRITY_FAILED (possible only for a model parsed with
 * NBG_PARSE_NO_CRC_CHECK). */
NBG_API int nbg_model_checksums_match(const nbg_model *m);

NBG_API const char *nbg_diff_kind_name(nbg_diff_kind k);

/* Compares two parsed models (their buffers still alive) and attempts the
 * reconstruction.  Returns NBG_OK and a result in *out, or a failure (out
 * of memory, or a ledger that could not be built) with *out NULL and err
 * filled. */
NBG_API nbg_code nbg_diff_models(const nbg_model *a, const nbg_model *b, nbg_diff **out,
				 nbg_error *err);
NBG_API void nbg_diff_free(nbg_diff *d);

/* Element i of the items and of the owners, or NULL past the end.  Items:
 * fields in model order, then owner ranges by file offset; owners: every
 * differing owner, by file offset (A's, else B's). */
NBG_API size_t nbg_diff_item_count(const nbg_diff *d);
NBG_API const nbg_diff_item *nbg_diff_item_at(const nbg_diff *d, size_t i);
NBG_API size_t nbg_diff_owner_count(const nbg_diff *d);
NBG_API const nbg_diff_owner *nbg_diff_owner_at(const nbg_diff *d, size_t i);
/* The counts; NULL for a NULL result. */
NBG_API const nbg_diff_summary *nbg_diff_summary_of(const nbg_diff *d);
/* The reconstruction attempted with the comparison (never NULL in a result;
 * NULL for a NULL result).  It lives as long as d. */
NBG_API const nbg_reconstruction *nbg_diff_reconstruction(const nbg_diff *d);

/* The result as one JSON document (malloc'd), NULL on allocation failure:
 * a, b, identical, verdict, summary, reconstruction, owners, differences. */
NBG_API char *nbg_diff_json(const nbg_diff *d, const nbg_model *a, const char *path_a,
			    const nbg_model *b, const char *path_b);

/* The JSON document for a comparison that could not be made:
 * {"nbgkit_version", "error": {"file": "a"|"b", "path", "code", "offset",
 * "field", "message"}}, code as nbg_code_name names it ("io-error" for a
 * file that cannot be read); which NULL (a failure of neither file, such as
 * out of memory) leaves "file" out.  malloc'd; NULL on allocation failure. */
NBG_API char *nbg_diff_error_json(const char *which, const char *path, const nbg_error *err);

/* The verdict in one word: "identical", "explained" (a dynamic-I/O
 * substitution reproduces B) or "different"; NULL for a NULL result. */
NBG_API const char *nbg_diff_verdict(const nbg_diff *d);

/* The text report: the summary first (verdict, changed owners, the
 * reconstruction), then the details (fields, byte runs).  Paths and file
 * text are printed escaped. */
NBG_API void nbg_text_diff(FILE *out, const nbg_diff *d, const nbg_model *a, const char *path_a,
			   const nbg_model *b, const char *path_b);

#ifdef __cplusplus
}
#endif
#endif
