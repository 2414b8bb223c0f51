/*
 * corpus_internal.h - the inside of an nbg_corpus, shared by the aggregation
 * (analysis/corpus.c), reading parts (analysis/corpus_part.c) and the JSON
 * and text writers (report/).  Private to libnbg.
 */
#ifndef NBG_CORPUS_INTERNAL_H
#define NBG_CORPUS_INTERNAL_H

#include "common/internal.h"
#include "nbg/corpus.h"

/* One file's measurement (nbg_corpus_item). */
struct nbg_corpus_item {
	nbg_corpus_status status;
	int has_size;
	uint64_t size;          /* bytes read, or the size stat reported */
	int has_sha256;         /* the bytes were read: their SHA-256 */
	uint8_t sha256[32];
	nbg_error err;          /* NBG_OK when valid; otherwise what happened */
	nbg_model *model;       /* VALID only */
	void *buf;              /* the file's bytes (the model points into them) */
	size_t cap;
	nbg_mapping map;        /* or, for a large file, its mapping */
};

/* The text report lists at most this many values of a set. */
#define NBG_CORPUS_TEXT_VALUES 16

/* A multiset of u64 values: an open-addressing table, n[i] == 0 is empty. */
typedef struct nbg_valset {
	uint64_t *v, *n;
	size_t count, cap;
} nbg_valset;

/* One distinct value and how often it was seen. */
typedef struct nbg_vs_pair {
	uint64_t v, n;
} nbg_vs_pair;

typedef struct nbg_range64 {
	int seen;
	uint64_t lo, hi;
} nbg_range64;

/* Distinct SHA-256 values (connection tails): an open-addressing table. */
typedef struct nbg_shaset {
	uint8_t (*d)[32];
	uint8_t *used;
	size_t count, cap;
} nbg_shaset;

typedef struct nbg_note_count {
	char id[40];
	uint64_t n;
} nbg_note_count;

struct nbg_corpus {
	uint64_t files, valid, bytes;
	uint64_t fail_by_code[NBG_E__COUNT];
	uint64_t not_measured[NBG_CORPUS_STATUS_COUNT]; /* UNREADABLE .. NOT_REGULAR */
	uint64_t skipped[NBG_CORPUS_SKIP_COUNT];
	nbg_valset family, version, target;
	/* v2 */
	uint64_t v2_files;
	nbg_valset section_count;
	uint64_t type_files[NBG_SECTION_TYPE_COUNT];
	nbg_valset type_entsize[NBG_SECTION_TYPE_COUNT];
	nbg_valset type_align[NBG_SECTION_TYPE_COUNT];
	uint64_t checksum_records, checksum_match, file_checksum_match, covered_section_bytes;
	uint64_t dyn_files, dyn_entries, dyn_region, dyn_mapped, dyn_padding;
	nbg_range64 dyn_entry_count;
	nbg_valset core_count, address_width, attribute, vsi_nonzero;
	uint64_t opcount_plus3_holds, opcount_checked;
	nbg_range64 ni_inputs, ni_outputs, ni_layers, ni_opcount, mem_pool;
	/* v1 */
	uint64_t v1_files;
	nbg_valset v1_entry_count, v1_io_stride, crc_finding;
	/* both */
	uint64_t io_records;
	nbg_valset io_format, io_quant, io_type, io_dim_count;
	nbg_shaset tails;
	nbg_valset tail_cover;
	nbg_note_count *notes;
	size_t note_kinds, note_cap;
	int oom; /* a value could not be stored: the aggregate is incomplete */
	int overflow; /* a count passed 2^64-1 (only parts can claim so many) */
};

/* *into += n; on 64-bit wraparound *into stays UINT64_MAX and c->overflow
 * is set. */
static inline void nbg_corpus_count(nbg_corpus *c, uint64_t *into, uint64_t n)
{
	if (__builtin_add_overflow(*into, n, into)) {
		*into = UINT64_MAX;
		c->overflow = 1;
	}
}

NBG_INTERNAL nbg_code nbg_valset_add(nbg_corpus *c, nbg_valset *s, uint64_t v, uint64_t n);
/* The distinct values in ascending order (malloc'd; *count set); NULL with
 * *count 0 for an empty set, NULL with *count SIZE_MAX when memory runs out. */
NBG_INTERNAL nbg_vs_pair *nbg_valset_sorted(const nbg_valset *s, size_t *count);
NBG_INTERNAL void nbg_range_add(nbg_range64 *r, uint64_t lo, uint64_t hi);
NBG_INTERNAL nbg_code nbg_shaset_add(nbg_corpus *c, nbg_shaset *s, const uint8_t d[32]);
/* The distinct digests in ascending byte order (malloc'd), as above. */
NBG_INTERNAL uint8_t (*nbg_shaset_sorted(const nbg_shaset *s, size_t *count))[32];
NBG_INTERNAL nbg_code nbg_corpus_note_add(nbg_corpus *c, const char *id, uint64_t n);
/* The note kinds sorted by id (malloc'd), as above. */
NBG_INTERNAL nbg_note_count *nbg_corpus_notes_sorted(const nbg_corpus *c, size_t *count);
/* Files and walk entries that call for exit 3 (cannot read). */
NBG_INTERNAL uint64_t nbg_corpus_unreadable(const nbg_corpus *c);

/* How a value set's values are shown: a name, or the number when NULL. */
typedef const char *(*nbg_corpus_namer)(uint64_t v, char *buf, size_t n);

NBG_INTERNAL const char *nbg_corpus_hex_name(uint64_t v, char *buf, size_t n);
NBG_INTERNAL const char *nbg_corpus_format_name(uint64_t v, char *buf, size_t n);
NBG_INTERNAL const char *nbg_corpus_quant_name(uint64_t v, char *buf, size_t n);
NBG_INTERNAL const char *nbg_corpus_cover_name(uint64_t v, char *buf, size_t n);
NBG_INTERNAL const char *nbg_corpus_finding_name(uint64_t v, char *buf, size_t n);

/* The aggregate's members in JSON document order: the one table the writer
 * (report/json_corpus.c), the reader (analysis/corpus_part.c) and the merge
 * share, so a part always reads back what was written. */
typedef enum nbg_corpus_field_kind {
	NBG_CF_U64,       /* a uint64_t count, summed by a merge */
	NBG_CF_VALSET,    /* an nbg_valset: [{value, raw?, files_or_records}] */
	NBG_CF_RANGE,     /* an nbg_range64: [lo, hi] or null */
	NBG_CF_UNREADABLE,/* the derived count of nbg_corpus_unreadable() */
	NBG_CF_CODES,     /* fail_by_code: {code name: count} */
	NBG_CF_STATUSES,  /* not_measured: {status name: count} */
	NBG_CF_SKIPS,     /* skipped: {reason name: count} */
	NBG_CF_TYPES,     /* the section-type table */
	NBG_CF_TAILS,     /* the number of distinct connection-tail digests */
	NBG_CF_TAIL_LIST, /* the distinct digests, sorted, as hex */
	NBG_CF_NOTES,     /* {note id: count} */
} nbg_corpus_field_kind;

typedef struct nbg_corpus_field {
	const char *key;          /* dotted JSON path */
	nbg_corpus_field_kind kind;
	size_t offset;            /* of the member in struct nbg_corpus (U64, VALSET, RANGE) */
	nbg_corpus_namer namer;   /* VALSET: how values are shown, NULL for numbers */
} nbg_corpus_field;

NBG_INTERNAL const nbg_corpus_field *nbg_corpus_fields(size_t *count);

/* The member a field names (void *: the caller's pointer type says what it
 * is, and offsetof keeps it aligned). */
static inline void *nbg_corpus_member(nbg_corpus *c, const nbg_corpus_field *f)
{
	return (char *)c + f->offset;
}
static inline const void *nbg_corpus_cmember(const nbg_corpus *c, const nbg_corpus_field *f)
{
	return (const char *)c + f->offset;
}

#endif
