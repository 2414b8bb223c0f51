/*
 * corpus_internal.h - the inside of an nbg_corpus, shared by the aggregation
 * (analysis/corpus.c) and its JSON and text writers (report/).  Private to
 * libnbg.
 */
#ifndef NBG_CORPUS_INTERNAL_H
#define NBG_CORPUS_INTERNAL_H

#include "common/internal.h"
#include "nbg/corpus.h"

#define NBG_CORPUS_MAX_VALUES 16

/* A small multiset of u64 values (distinct values and how often each). */
typedef struct nbg_valset {
	uint64_t v[NBG_CORPUS_MAX_VALUES];
	uint64_t n[NBG_CORPUS_MAX_VALUES];
	size_t count;
	int overflow;
} nbg_valset;

typedef struct nbg_range64 {
	int seen;
	uint64_t lo, hi;
} nbg_range64;

/* Distinct SHA-256 values (connection tails). */
typedef struct nbg_shaset {
	uint8_t (*d)[32];
	size_t count, cap;
} nbg_shaset;

typedef struct nbg_note_count {
	char id[40];
	uint64_t n;
} nbg_note_count;

struct nbg_corpus {
	uint64_t files, valid, unreadable, bytes;
	uint64_t fail_by_code[NBG_E__COUNT];
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
	nbg_note_count notes[128];
	size_t note_kinds;
};

/* How a value set's values are shown: a name, or the number when NULL. */
typedef const char *(*nbg_corpus_namer)(uint64_t v, char *buf, size_t n);

NBG_INTERNAL const char *nbg_corpus_hex_name(uint64_t v, char *buf, size_t n);
NBG_INTERNAL const char *nbg_corpus_format_name(uint64_t v, char *buf, size_t n);
NBG_INTERNAL const char *nbg_corpus_quant_name(uint64_t v, char *buf, size_t n);
NBG_INTERNAL const char *nbg_corpus_cover_name(uint64_t v, char *buf, size_t n);
NBG_INTERNAL const char *nbg_corpus_finding_name(uint64_t v, char *buf, size_t n);

#endif
