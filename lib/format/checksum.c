/*
 * checksum.c - the v2 header file checksum, and the failures every
 * checksum mismatch is reported with (checksum.h).
 */
#include "format/checksum.h"

/* The CHECKSUM section's CRC with every value word read as zero: the 8-byte
 * records CRC'd one by one, type word as stored, then four zero bytes. */
static uint32_t normalized_checksum_crc(const uint8_t *p, uint64_t n, uint32_t *words)
{
	static const uint8_t zero4[4];
	uint32_t sc = 0;
	uint64_t k;

	for (k = 0; k + 8 <= n; k += 8) {
		sc = nbg_crc32(sc, p + k, 4);
		sc = nbg_crc32(sc, zero4, 4);
		(*words)++;
	}
	return nbg_crc32(sc, p + k, n - k);
}

bool nbg_v2_file_checksum(const uint8_t *data, uint64_t size, const nbg_model *m,
			  int from_model, uint32_t *out, nbg_file_checksum *fc)
{
	uint32_t crc = 0, words = 0;
	uint64_t covered = 0;

	for (size_t i = 0; i < m->section_count; i++) {
		const nbg_section *s = nbg_model_section_at(m, i);
		if (!range_ok(s->offset, s->size, size))
			return false;
	}
	for (size_t i = 0; i < m->section_count; i++) {
		const nbg_section *s = nbg_model_section_at(m, i);
		uint32_t sc;

		if (s->type == NBG_SEC_CHECKSUM)
			sc = normalized_checksum_crc(data + s->offset, s->size, &words);
		else
			sc = from_model ? s->crc32 : nbg_section_crc32(data, size, s);
		crc = nbg_crc32_combine(crc, sc, s->size);
		covered += s->size;
	}
	if (fc) {
		fc->covered_section_bytes = covered;
		fc->normalized_checksum_value_words = words;
	}
	*out = crc;
	return true;
}

nbg_code nbg_section_crc_error(nbg_error *err, const nbg_checksum_record *r)
{
	return nbg_error_set(err, NBG_E_SECTION_CHECKSUM_MISMATCH, r->offset + 4,
			     "checksum_value",
			     "section %s has CRC-32 0x%08x but its checksum record says 0x%08x: "
			     "the section bytes changed", nbg_section_type_name(r->section_type),
			     r->computed, r->stored);
}

nbg_code nbg_file_crc_error(nbg_error *err, const nbg_file_checksum *fc, uint64_t offset)
{
	return nbg_error_set(err, NBG_E_FILE_CHECKSUM_MISMATCH, offset, "file_checksum",
			     "the header crc_sum is 0x%08x but the section payloads give 0x%08x: "
			     "the file was changed after it was written", fc->recorded,
			     fc->computed);
}

nbg_code nbg_v1_crc_sum_error(nbg_error *err, const nbg_model *m, uint64_t offset)
{
	const nbg_v1_info *v1 = &m->v1;

	return nbg_error_set(err, NBG_E_V1_CRC_SUM_MISMATCH, offset, "nbg_crc_sum",
			     "nbg_crc_sum is 0x%08x but the CRC-32 of %s gives 0x%08x (the rule "
			     "of version 0x%05x): the file was changed after it was written",
			     v1->crc_sum,
			     v1->crc_sum_from ? "the file from its first section on"
					      : "the file with the word read as zero",
			     v1->crc_sum_computed, m->version);
}

nbg_code nbg_integrity_failure(const nbg_model *m, nbg_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (!m)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model", "no model was given");
	if (m->family == 2) {
		for (size_t i = 0; i < m->checksum_record_count; i++)
			if (m->checksum_records[i].stored != m->checksum_records[i].computed)
				return nbg_section_crc_error(err, &m->checksum_records[i]);
		if (m->has_file_checksum && m->file_checksum.recorded != m->file_checksum.computed)
			return nbg_file_crc_error(err, &m->file_checksum,
						  nbg_fid_desc(F_HDR_CRC_SUM)->offset);
		return NBG_OK;
	}
	if (m->v1.has_crc_sum && m->v1.crc_sum_enforced && m->v1.crc_sum &&
	    m->v1.crc_sum != m->v1.crc_sum_computed)
		return nbg_v1_crc_sum_error(err, m, m->v1.feature_db_offset +
						     nbg_fid_desc(F_V1_FDB_CRC_SUM)->offset);
	return NBG_OK;
}
