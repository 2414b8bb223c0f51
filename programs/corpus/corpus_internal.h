/*
 * corpus_internal.h - the inside of a corpus_agg and a corpus_item, shared
 * by the aggregation (aggregate.c, sets.c), measuring a file (measure.c),
 * reading parts (part.c) and the JSON and text writers (json.c, text.c).
 */
#ifndef NBG_PROGRAMS_CORPUS_INTERNAL_H
#define NBG_PROGRAMS_CORPUS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "corpus.h"

/* One file's measurement (corpus_item). */
struct corpus_item {
	corpus_status status;
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
#define CORPUS_TEXT_VALUES 16

/* A multiset of u64 values: an open-addressing table, n[i] == 0 is empty. */
typedef struct corpus_valset {
	uint64_t *v, *n;
	size_t count, cap;
} corpus_valset;

/* One distinct value and how often it was seen. */
typedef struct corpus_vs_pair {
	uint64_t v, n;
} corpus_vs_pair;

typedef struct corpus_range {
	int seen;
	uint64_t lo, hi;
} corpus_range;

/* Distinct SHA-256 values (connection tails): an open-addressing table. */
typedef struct corpus_shaset {
	uint8_t (*d)[32];
	uint8_t *used;
	size_t count, cap;
} corpus_shaset;

typedef struct corpus_note_count {
	char id[40];
	uint64_t n;
} corpus_note_count;

struct corpus_agg {
	uint64_t files, valid, bytes;
	uint64_t fail_by_code[NBG_E__COUNT];
	uint64_t not_measured[CORPUS_STATUS_COUNT]; /* UNREADABLE .. NOT_REGULAR */
	uint64_t skipped[CORPUS_SKIP_COUNT];
	corpus_valset family, version, target;
	/* v2 */
	uint64_t v2_files;
	corpus_valset section_count;
	uint64_t type_files[NBG_SECTION_TYPE_COUNT];
	corpus_valset type_entsize[NBG_SECTION_TYPE_COUNT];
	corpus_valset type_align[NBG_SECTION_TYPE_COUNT];
	uint64_t checksum_records, checksum_match, file_checksum_match, covered_section_bytes;
	uint64_t dyn_files, dyn_entries, dyn_region, dyn_mapped, dyn_padding;
	corpus_range dyn_entry_count;
	corpus_valset core_count, address_width, attribute, vsi_nonzero;
	uint64_t opcount_plus3_holds, opcount_checked;
	corpus_range ni_inputs, ni_outputs, ni_layers, ni_opcount, mem_pool;
	/* v1 */
	uint64_t v1_files;
	corpus_valset v1_entry_count, v1_io_stride, crc_finding;
	/* both */
	uint64_t io_records;
	corpus_valset io_format, io_quant, io_type, io_dim_count;
	corpus_shaset tails;
	corpus_valset tail_cover;
	corpus_note_count *notes;
	size_t note_kinds, note_cap;
	int oom; /* a value could not be stored: the aggregate is incomplete */
	int overflow; /* a count passed 2^64-1 (only parts can claim so many) */
};

/* *into += n; on 64-bit wraparound *into stays UINT64_MAX and c->overflow
 * is set. */
static inline void corpus_count(corpus_agg *c, uint64_t *into, uint64_t n)
{
	if (__builtin_add_overflow(*into, n, into)) {
		*into = UINT64_MAX;
		c->overflow = 1;
	}
}

nbg_code corpus_valset_add(corpus_agg *c, corpus_valset *s, uint64_t v, uint64_t n);
/* The distinct values in ascending order (malloc'd; *count set); NULL with
 * *count 0 for an empty set, NULL with *count SIZE_MAX when memory runs out. */
corpus_vs_pair *corpus_valset_sorted(const corpus_valset *s, size_t *count);
void corpus_range_add(corpus_range *r, uint64_t lo, uint64_t hi);
nbg_code corpus_shaset_add(corpus_agg *c, corpus_shaset *s, const uint8_t d[32]);
/* The distinct digests in ascending byte order (malloc'd), as above. */
uint8_t (*corpus_shaset_sorted(const corpus_shaset *s, size_t *count))[32];
nbg_code corpus_note_add(corpus_agg *c, const char *id, uint64_t n);
/* The note kinds sorted by id (malloc'd), as above. */
corpus_note_count *corpus_notes_sorted(const corpus_agg *c, size_t *count);
/* Files and walk entries that call for exit 3 (cannot read). */
uint64_t corpus_unreadable(const corpus_agg *c);

/* Fills err (may be NULL) as libnbg fills one: the code, offset and field,
 * index -1, the sentence; returns code. */
nbg_code corpus_error(nbg_error *err, nbg_code code, uint64_t offset, const char *field,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The member of `root` a dotted key ("v2.dynamic_io.entries") names: with
 * `leaf` NULL, the value at the key, or NULL when a step is missing; with
 * `leaf`, the object that holds the last step, the objects on the way made
 * when missing, and the last step's name in *leaf. */
json_t *corpus_json_at(json_t *root, const char *key, const char **leaf);

/* The keys of the slots of fail_by_code, not_measured and skipped in the
 * JSON document (a code's, a status's, a reason's name); NULL for a slot
 * the document does not list (NBG_OK, valid, invalid). */
const char *corpus_code_key(int k);
const char *corpus_status_key(int k);
const char *corpus_skip_key(int k);

/* How a value set's values are shown: a name, or the number when NULL. */
typedef const char *(*corpus_namer)(uint64_t v, char *buf, size_t n);

const char *corpus_hex_name(uint64_t v, char *buf, size_t n);
const char *corpus_format_name(uint64_t v, char *buf, size_t n);
const char *corpus_quant_name(uint64_t v, char *buf, size_t n);
const char *corpus_cover_name(uint64_t v, char *buf, size_t n);
const char *corpus_finding_name(uint64_t v, char *buf, size_t n);

/* The aggregate's members in JSON document order: the one table the writer
 * (json.c), the reader (part.c) and the merge share, so a part always reads
 * back what was written. */
typedef enum corpus_field_kind {
	CF_U64,       /* a uint64_t count, summed by a merge */
	CF_VALSET,    /* a corpus_valset: [{value, raw?, files_or_records}] */
	CF_RANGE,     /* a corpus_range: [lo, hi] or null */
	CF_UNREADABLE,/* the derived count of corpus_unreadable() */
	CF_CODES,     /* fail_by_code: {code name: count} */
	CF_STATUSES,  /* not_measured: {status name: count} */
	CF_SKIPS,     /* skipped: {reason name: count} */
	CF_TYPES,     /* the section-type table */
	CF_TAILS,     /* the number of distinct connection-tail digests */
	CF_TAIL_LIST, /* the distinct digests, sorted, as hex */
	CF_NOTES,     /* {note id: count} */
} corpus_field_kind;

typedef struct corpus_field {
	const char *key;          /* dotted JSON path */
	corpus_field_kind kind;
	size_t offset;            /* of the member in struct corpus_agg (U64, VALSET, RANGE) */
	corpus_namer namer;       /* VALSET: how values are shown, NULL for numbers */
} corpus_field;

const corpus_field *corpus_fields(size_t *count);

/* The member a field names (void *: the caller's pointer type says what it
 * is, and offsetof keeps it aligned). */
static inline void *corpus_member(corpus_agg *c, const corpus_field *f)
{
	return (char *)c + f->offset;
}
static inline const void *corpus_cmember(const corpus_agg *c, const corpus_field *f)
{
	return (const char *)c + f->offset;
}

#endif
