/*
 * parse.c - the entry point shared by both families: the common envelope
 * (magic, version, target), dispatch to the v1 or v2 parser, the whole-file
 * fingerprint, freeing a model and reaching its records.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/internal.h"
#include "format/lookalike.h"
#include "format/regions.h"

static const uint8_t nbg_magic[4] = { 'V', 'P', 'M', 'N' };

int nbg_fuzzing_no_crc; /* common/internal.h */

static uint64_t limit_or(uint64_t v, uint64_t dflt)
{
	return v ? v : dflt;
}

/* What the parse proved the bytes with (every mismatch already failed it,
 * unless NBG_PARSE_NO_CRC_CHECK). */
static nbg_integrity integrity_of(const nbg_model *m)
{
	const nbg_v1_info *v1 = &m->v1;

	if (m->family == 2) {
		for (size_t i = 0; i < m->checksum_record_count; i++)
			if (m->checksum_records[i].stored != m->checksum_records[i].computed)
				return NBG_INTEGRITY_FAILED;
		return m->file_checksum.recorded == m->file_checksum.computed
			       ? NBG_INTEGRITY_VERIFIED : NBG_INTEGRITY_FAILED;
	}
	if (!v1->has_crc_sum || v1->crc_sum == 0)
		return NBG_INTEGRITY_STRUCTURE_ONLY;
	if (v1->crc_sum == v1->crc_sum_computed)
		return NBG_INTEGRITY_VERIFIED;
	return v1->crc_sum_enforced ? NBG_INTEGRITY_FAILED : NBG_INTEGRITY_CHECKSUM_UNKNOWN;
}

const char *nbg_integrity_name(nbg_integrity i)
{
	static const char *const names[] = { "verified", "structure-only", "checksum-unknown",
					      "failed" };
	return (unsigned)i < sizeof(names) / sizeof(names[0]) ? names[i] : NULL;
}

char *nbg_integrity_describe(const nbg_model *m, char *buf, size_t size)
{
	size_t bad = 0;

	if (!size || !buf)
		return buf;
	if (!m) {
		snprintf(buf, size, "no model was given");
		return buf;
	}
	const nbg_v1_info *v1 = &m->v1;
	if (m->family == 2) {
		for (size_t i = 0; i < m->checksum_record_count; i++)
			bad += m->checksum_records[i].stored != m->checksum_records[i].computed;
		int file_ok = m->file_checksum.recorded == m->file_checksum.computed;
		if (m->integrity != NBG_INTEGRITY_FAILED)
			snprintf(buf, size, "%zu section CRC-32%s and the file checksum match",
				 m->checksum_record_count,
				 m->checksum_record_count == 1 ? "" : "s");
		else if (bad)
			snprintf(buf, size, "%zu of %zu section CRC-32s do not match; the file "
				 "checksum %s", bad, m->checksum_record_count,
				 file_ok ? "matches" : "does not match either");
		else
			snprintf(buf, size, "the file checksum does not match; the %zu section "
				 "CRC-32s do", m->checksum_record_count);
		return buf;
	}
	switch (m->integrity) {
	case NBG_INTEGRITY_STRUCTURE_ONLY:
		snprintf(buf, size, "%s", v1->has_crc_sum
				? "structure only: nbg_crc_sum is 0, the file carries no checksum"
				: "structure only: this version carries no checksum");
		break;
	case NBG_INTEGRITY_CHECKSUM_UNKNOWN:
		snprintf(buf, size, "checksum present, algorithm unknown: not checked "
			 "(nbg_crc_sum matches no rule known for version 0x%05x)", m->version);
		break;
	default:
		if (v1->crc_sum_from)
			snprintf(buf, size, "nbg_crc_sum %s: CRC-32 from offset %llu (the first "
				 "section) to the end; the %llu bytes before it are checked for "
				 "structure only",
				 m->integrity == NBG_INTEGRITY_FAILED ? "does not match" : "matches",
				 (unsigned long long)v1->crc_sum_from,
				 (unsigned long long)v1->crc_sum_from);
		else
			snprintf(buf, size, "nbg_crc_sum %s: CRC-32 of the whole file with the "
				 "word read as zero",
				 m->integrity == NBG_INTEGRITY_FAILED ? "does not match" : "matches");
		break;
	}
	return buf;
}

/* What the parse reports, rc being where it ended.  Under
 * NBG_PARSE_KEEP_UNVERIFIED, once a checksum failed, that failure whatever
 * came after it (a failure or a model): a parse without the flag stops at
 * it. */
static nbg_code verdict(nbg_ctx *c, nbg_code rc)
{
	if (c->kept_rc == NBG_OK)
		return rc;
	if (c->err)
		*c->err = c->kept;
	return c->kept_rc;
}

nbg_code nbg_parse(const uint8_t *data, size_t size, const nbg_parse_options *opts,
		   nbg_model **out, nbg_error *err)
{
	return nbg_parse_reached(data, size, opts, out, err, NULL);
}

nbg_code nbg_parse_reached(const uint8_t *data, size_t size, const nbg_parse_options *opts,
			   nbg_model **out, nbg_error *err, int *structure_passed)
{
	nbg_ctx c = { 0 };
	nbg_code rc;
	nbg_model *m;

	if (structure_passed)
		*structure_passed = 0;
	if (err)
		memset(err, 0, sizeof(*err));
	if (!out || (!data && size))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model",
				     "no file bytes or result pointer was given");
	*out = NULL;
	c.data = data;
	c.size = size;
	c.err = err;
	uint64_t max_file = NBG_DEFAULT_MAX_FILE_SIZE;
	c.max_undescribed = NBG_DEFAULT_MAX_UNDESCRIBED;
	if (opts && opts->size >= offsetof(nbg_parse_options, flags) + sizeof(opts->flags))
		c.flags = opts->flags;
	if (opts && opts->size >= offsetof(nbg_parse_options, max_undescribed) +
				  sizeof(opts->max_undescribed)) {
		max_file = limit_or(opts->max_file_size, NBG_DEFAULT_MAX_FILE_SIZE);
		c.max_undescribed = limit_or(opts->max_undescribed, NBG_DEFAULT_MAX_UNDESCRIBED);
	}
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	c.flags |= NBG_PARSE_NO_CRC_CHECK;
#endif
	if (nbg_fuzzing_no_crc)
		c.flags |= NBG_PARSE_NO_CRC_CHECK;

	if (size < 4)
		return nbg_fail(&c, NBG_E_TRUNCATED, 0, "magic",
				"the file is %zu bytes; an NBG starts with a 4-byte magic", size);
	if (memcmp(data, nbg_magic, 4) != 0) {
		/* Still bad-magic, so scripts keep working; the sentence names
		 * what the file appears to be when its header says so. */
		char kind[320];
		nbg_lookalike(data, size, kind, sizeof(kind));
		return nbg_fail(&c, NBG_E_BAD_MAGIC, 0, "magic",
				"the file starts with %02x %02x %02x %02x, not \"VPMN\": "
				"this is not an NBG file%s%s",
				data[0], data[1], data[2], data[3], kind[0] ? "; it appears to be " : "",
				kind);
	}
	if (size > max_file)
		return nbg_fail(&c, NBG_E_WORK_LIMIT, 0, "file_size",
				"the file is %zu bytes, over the %llu-byte limit: refused "
				"before hashing; raise the limit (NBG_MAX_FILE_SIZE, "
				"doc/security.md) to read it", size, (unsigned long long)max_file);
	if (size < 12)
		return nbg_fail(&c, NBG_E_TRUNCATED, size, "version",
				"the file is %zu bytes; the magic, version and target words "
				"need 12", size);

	m = calloc(1, sizeof(*m));
	if (!m)
		return nbg_fail(&c, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	c.m = m;
	m->data = data;
	m->magic = le32(data);
	m->version = le32(data + 4);
	m->target = le32(data + 8);
	m->file_size = size;
	m->sha256_skipped = c.flags & (NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256);

	if (m->version == NBG_V2_VERSION) {
		m->family = 2;
		rc = nbg_parse_v2(&c);
	} else if ((m->version >> 16) == 1) {
		m->family = 1;
		rc = nbg_parse_v1(&c);
	} else {
		rc = nbg_fail(&c, NBG_E_UNSUPPORTED_VERSION, 4, "version",
			      "version 0x%08x is neither NBG v1 (0x0001xxxx) nor v2 "
			      "(0x00020000)", m->version);
	}
	if (rc == NBG_OK && !c.file_hash)
		rc = nbg_structure_checked(&c); /* a parser that never reached it */
	nbg_file_hash_finish(&c, rc);
	if (structure_passed)
		*structure_passed = c.structure_passed;
	if (rc != NBG_OK) {
		nbg_model_free(m);
		return verdict(&c, rc);
	}
	m->integrity = integrity_of(m);
	if (!nbg_tail_view(c.m, c.data, c.size)) {
		nbg_model_free(m);
		return verdict(&c, nbg_fail(&c, NBG_E_OUT_OF_MEMORY, 0, "memory",
					    "out of memory"));
	}
	*out = m;
	return verdict(&c, NBG_OK);
}
