/*
 * checksum.h - the v2 integrity words, computed in one place: the CRC-32 a
 * CHECKSUM record holds for its section, and the header file checksum
 * (crc_sum).  The parser fingerprints and checks files with these
 * functions, and whatever must reproduce the words of a file (the
 * reconstruction of nbg diff) calls the same ones, so the two can never
 * disagree.  Private to libnbg.
 */
#ifndef NBG_FORMAT_CHECKSUM_H
#define NBG_FORMAT_CHECKSUM_H

#include "common/hash.h"
#include "common/internal.h"

/* CRC-32 (zlib) of section s's payload in data[0..size): the section
 * fingerprint of both families, and for v2 the value its CHECKSUM record
 * holds.  0 when the section does not lie inside size. */
static inline uint32_t nbg_section_crc32(const uint8_t *data, uint64_t size,
					 const nbg_section *s)
{
	if (!range_ok(s->offset, s->size, size))
		return 0;
	return nbg_crc32(0, data + s->offset, s->size);
}

/*
 * The header file checksum of data[0..size) laid out as m's directory says:
 * the CRC-32 of every section payload combined in directory order from an
 * accumulator of zero, each CHECKSUM value word read as zero; header,
 * sub-header, directory and alignment gaps excluded.
 *
 * from_model: 1 takes each section's CRC from m->sections[i].crc32 (the
 * parser's, already computed over these very bytes); 0 computes them from
 * data (a buffer with m's layout whose payloads may differ).  The CHECKSUM
 * section is always read from data.  fc (may be NULL) receives
 * covered_section_bytes and normalized_checksum_value_words.
 *
 * Returns false, with *out untouched, when a section of m does not lie
 * inside size (never for a model parsed from a buffer of that size).
 */
NBG_INTERNAL bool nbg_v2_file_checksum(const uint8_t *data, uint64_t size, const nbg_model *m,
				       int from_model, uint32_t *out, nbg_file_checksum *fc);

/* The failures a strict parse reports for a checksum that does not match,
 * built in one place so that nbg_integrity_failure() (for a model parsed
 * with NBG_PARSE_NO_CRC_CHECK) says exactly what the parse would have said.
 * Each fills err (may be NULL) and returns its code. */
NBG_INTERNAL nbg_code nbg_section_crc_error(nbg_error *err, const nbg_checksum_record *r);
NBG_INTERNAL nbg_code nbg_file_crc_error(nbg_error *err, const nbg_file_checksum *fc,
					 uint64_t offset);
NBG_INTERNAL nbg_code nbg_v1_crc_sum_error(nbg_error *err, const nbg_model *m, uint64_t offset);

#endif
