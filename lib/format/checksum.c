/*
 * checksum.c - the v2 header file checksum (checksum.h).
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
