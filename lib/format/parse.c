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

static uint64_t limit_or(uint64_t v, uint64_t dflt)
{
	return v ? v : dflt;
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

	*out = NULL;
	if (structure_passed)
		*structure_passed = 0;
	if (err)
		memset(err, 0, sizeof(*err));
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
		return rc;
	}
	if (!nbg_tail_view(c.m, c.data, c.size)) {
		nbg_model_free(m);
		return nbg_fail(&c, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	}
	*out = m;
	return NBG_OK;
}
