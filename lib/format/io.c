/*
 * io.c - what the v1 and v2 parsers share once a record's fields are read:
 * an I/O record's derived values (quantization, element count, byte size)
 * and each section's fingerprints (skipped on request).
 */
#include <math.h>
#include <stdlib.h>

#include "common/hash.h"
#include "common/internal.h"
#include "format/checksum.h"
#include "format/regions.h"

void nbg_io_derive(nbg_io *io)
{
	unsigned bits = nbg_data_format_bits(io->data_format);
	uint64_t n = 1, total_bits;

	io->byte_size_known = 0;
	io->byte_size = 0;
	/* v2 keeps an 8-byte union; v1 records carry the three values apart. */
	if (io->quant_raw_count == 2) {
		if (io->quant_format == NBG_QUANT_DFP) {
			io->fixed_point_pos = (int32_t)io->quant_raw[0];
		} else if (io->quant_format == NBG_QUANT_AFFINE) {
			memcpy(&io->scale, &io->quant_raw[0], 4);
			io->zero_point = (int32_t)io->quant_raw[1];
		}
	}
	for (uint32_t i = 0; i < io->dim_count; i++)
		if (mul_overflow_u64(n, io->dims[i], &n))
			return;
	io->element_count = n;
	if (bits == 0 || mul_overflow_u64(n, bits, &total_bits))
		return;
	io->byte_size = total_bits / 8 + (total_bits % 8 != 0);
	io->byte_size_known = 1;
}

void nbg_note_scale(nbg_ctx *c, const nbg_io *io, uint64_t at, const char *what, size_t i)
{
	if (io->quant_format == NBG_QUANT_AFFINE && !isfinite(io->scale))
		nbg_note_add(c, "io-scale-not-finite", at,
			     "%s %zu affine scale is %s (word 0x%08x): not a number a tensor can "
			     "be scaled by; reports write null for it", what, i,
			     isnan(io->scale) ? "NaN" : io->scale > 0 ? "+infinity" : "-infinity",
			     io->quant_raw[io->quant_raw_count == 3 ? 1 : 0]);
}

/* Each section's CRC-32, and SHA-256 unless skipped: every CRC first, so
 * that on a large file they run while the whole-file hash thread loads
 * OpenSSL, which the section hashes then use.  When the second core is
 * free (nbg verify: no whole-file hash beside) the CRC bytes are shared
 * between the two. */
void nbg_fingerprint_sections(nbg_ctx *c)
{
	size_t n = c->m->section_count;
	nbg_crc_range *r = n ? calloc(n, sizeof(*r)) : NULL;

	if (r) {
		for (size_t i = 0; i < n; i++) {
			const nbg_section *s = &c->m->sections[i];
			if (range_ok(s->offset, s->size, c->size)) {
				r[i].p = c->data + s->offset;
				r[i].n = s->size;
			}
		}
		nbg_crc32_ranges(r, n, nbg_second_core_free(c));
	}
	for (size_t i = 0; i < n; i++) {
		nbg_section *s = &c->m->sections[i];
		s->crc32 = r ? r[i].crc : nbg_section_crc32(c->data, c->size, s);
		nbg_region_sha256(c->m, c->data + s->offset, s->size, s->sha256);
	}
	free(r);
}

void nbg_region_sha256(const nbg_model *m, const uint8_t *p, uint64_t n, uint8_t out[32])
{
	if (m->sha256_skipped & NBG_PARSE_NO_SECTION_SHA256)
		memset(out, 0, 32);
	else
		nbg_sha256(p, (size_t)n, out);
}
