/*
 * parse_common.c - the entry point shared by both families: the common
 * envelope (magic, version, target), fingerprints, derived I/O sizes, the
 * final 512-byte view, and freeing a model.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/hash.h"
#include "common/internal.h"

static const uint8_t nbg_magic[4] = { 'V', 'P', 'M', 'N' };

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

void nbg_fingerprint_sections(nbg_ctx *c)
{
	for (size_t i = 0; i < c->m->section_count; i++) {
		nbg_section *s = &c->m->sections[i];
		const uint8_t *p = c->data + s->offset;
		s->crc32 = nbg_crc32(0, p, s->size);
		nbg_sha256(p, (size_t)s->size, s->sha256);
	}
}

static int cmp_range(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

void nbg_tail_view(nbg_ctx *c)
{
	nbg_model *m = c->m;
	nbg_tail *t = &m->tail;
	uint64_t (*r)[2];
	size_t n = 0;

	memset(t, 0, sizeof(*t));
	if (c->size < NBG_TAIL_SIZE)
		return;
	t->offset = c->size - NBG_TAIL_SIZE;
	t->size = NBG_TAIL_SIZE;
	nbg_sha256(c->data + t->offset, NBG_TAIL_SIZE, t->sha256);

	/* Union, clipped to the tail, of every other owner: the sections (v1
	 * entries may nest) and the fixed structures in front of them (v2
	 * header, sub-header and directory; the v1 prefix).  NOTES.md: the tail
	 * owns bytes only where nothing else does. */
	r = malloc((m->section_count + 3) * sizeof(*r));
	if (!r) {
		t->cover = NBG_TAIL_PARTIAL;
		return;
	}
	uint64_t fixed[3][2] = { { 0, 0 }, { 0, 0 }, { 0, 0 } };
	if (m->family == 2) {
		fixed[0][1] = NBG_V2_HEADER_SIZE;
		fixed[1][0] = m->sub_header_offset;
		fixed[1][1] = (uint64_t)m->sub_header_offset + NBG_V2_SUB_HEADER_SIZE;
		fixed[2][0] = m->section_headers_offset;
		fixed[2][1] = m->section_headers_offset +
			      (uint64_t)m->section_header_count * NBG_V2_SECTION_HEADER_SIZE;
	} else {
		fixed[0][1] = m->v1.prefix_end;
	}
	for (size_t i = 0; i < m->section_count + 3; i++) {
		uint64_t lo, hi;
		if (i < m->section_count) {
			lo = m->sections[i].offset;
			hi = lo + m->sections[i].size;
		} else {
			lo = fixed[i - m->section_count][0];
			hi = fixed[i - m->section_count][1];
		}
		if (hi <= t->offset || hi == lo)
			continue;
		r[n][0] = lo < t->offset ? t->offset : lo;
		r[n][1] = hi;
		n++;
	}
	qsort(r, n, sizeof(*r), cmp_range);
	uint64_t covered = 0, cur = t->offset;
	for (size_t i = 0; i < n; i++) {
		uint64_t lo = r[i][0] < cur ? cur : r[i][0];
		if (r[i][1] > lo) {
			covered += r[i][1] - lo;
			cur = r[i][1];
		}
	}
	free(r);
	t->covered_bytes = covered;
	t->cover = covered == 0 ? NBG_TAIL_UNCOVERED
		 : covered == NBG_TAIL_SIZE ? NBG_TAIL_COVERED : NBG_TAIL_PARTIAL;
}

/* The whole-file SHA-256 is independent of the structure walk, which hashes
 * and CRCs each section: on large files it runs on a second thread, so a
 * parse costs about one pass of SHA-256 instead of two. */
#define NBG_PARALLEL_SHA_MIN ((size_t)1 << 20)

typedef struct file_sha_job {
	const uint8_t *data;
	size_t size;
	uint8_t *out;
} file_sha_job;

static void *file_sha_thread(void *arg)
{
	file_sha_job *j = arg;
	nbg_sha256(j->data, j->size, j->out);
	return NULL;
}

nbg_code nbg_parse(const uint8_t *data, size_t size, const nbg_parse_options *opts,
		   nbg_model **out, nbg_error *err)
{
	nbg_ctx c = { 0 };
	nbg_code rc;
	nbg_model *m;

	*out = NULL;
	if (err)
		memset(err, 0, sizeof(*err));
	c.data = data;
	c.size = size;
	c.err = err;
	if (opts && opts->size >= offsetof(nbg_parse_options, flags) + sizeof(opts->flags))
		c.flags = opts->flags;
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	c.flags |= NBG_PARSE_NO_CRC_CHECK;
#endif

	if (size < 4)
		return nbg_fail(&c, NBG_E_TRUNCATED, 0, "magic",
				"the file is %zu bytes; an NBG starts with a 4-byte magic", size);
	if (memcmp(data, nbg_magic, 4) != 0)
		return nbg_fail(&c, NBG_E_BAD_MAGIC, 0, "magic",
				"the file starts with %02x %02x %02x %02x, not \"VPMN\": "
				"this is not an NBG file",
				data[0], data[1], data[2], data[3]);
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

	file_sha_job job = { data, size, m->file_sha256 };
	pthread_t sha_thread;
	int threaded = size >= NBG_PARALLEL_SHA_MIN &&
		       pthread_create(&sha_thread, NULL, file_sha_thread, &job) == 0;

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
	if (threaded)
		pthread_join(sha_thread, NULL);
	if (rc != NBG_OK) {
		nbg_model_free(m);
		return rc;
	}
	if (!threaded)
		nbg_sha256(data, size, m->file_sha256);
	nbg_tail_view(&c);
	*out = m;
	return NBG_OK;
}

void nbg_model_free(nbg_model *m)
{
	if (!m)
		return;
	free(m->sections);
	free(m->inputs);
	free(m->outputs);
	free(m->checksum_records);
	free(m->dynaio.entries);
	free(m->notes);
	free(m);
}

const nbg_section *nbg_model_section(const nbg_model *m, uint32_t type)
{
	for (size_t i = 0; i < m->section_count; i++)
		if (m->sections[i].type == type)
			return &m->sections[i];
	return NULL;
}
