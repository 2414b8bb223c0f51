/*
 * model.h - the definition of the opaque nbg_model (include/nbg/nbg.h):
 * what nbg_parse fills and the library reads directly.  Callers outside
 * libnbg use the nbg_model_* accessors.  Never installed.
 */
#ifndef NBG_MODEL_H
#define NBG_MODEL_H

#include "nbg/nbg.h"

struct nbg_model {
	const uint8_t *data; /* the caller's buffer given to nbg_parse (not owned) */
	uint32_t family; /* 1 or 2 */
	uint32_t magic, version, target;
	uint64_t file_size;
	uint8_t file_sha256[32];

	nbg_v2_header header; /* v2 header and sub-header words, as stored */

	size_t section_count;
	nbg_section *sections; /* directory order */

	size_t input_count, output_count;
	nbg_io *inputs, *outputs;

	nbg_network_info network_info;
	nbg_memory memory;

	size_t checksum_record_count;
	nbg_checksum_record *checksum_records;
	nbg_file_checksum file_checksum;
	int has_file_checksum;

	nbg_dynaio dynaio;
	nbg_tail tail;
	nbg_v1_info v1;

	size_t note_count;
	nbg_note *notes;

	/* The NBG_PARSE_NO_*_SHA256 bits the parse honoured: each names digests
	 * that were not computed (left all zero), 0 when every one was. */
	unsigned sha256_skipped;

	/* What the bytes were checked with (nbg_integrity_describe says it in
	 * a sentence). */
	nbg_integrity integrity;
};

#endif
