/*
 * fuzz_common.c - the parse step and the result invariants every harness
 * shares (fuzz_common.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

void fz_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "fuzz invariant violated: %s (%s:%d)\n", what, file, line);
	abort();
}

int fz_terminated(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

static int in_file(uint64_t off, uint64_t len, size_t size)
{
	return off <= size && len <= size - off;
}

static int inside(uint64_t off, uint64_t len, const nbg_section *s)
{
	return off >= s->offset && len <= s->size && off - s->offset <= s->size - len;
}

static void check_io(const nbg_model *m, const nbg_io *io, size_t count, uint32_t type,
		     size_t size)
{
	const nbg_section *s = nbg_model_section(m, type);

	FZ_CHECK(count == 0 || io != NULL);
	FZ_CHECK(count == 0 || s != NULL);
	for (size_t i = 0; i < count; i++) {
		FZ_CHECK(io[i].index == i);
		FZ_CHECK(io[i].max_dims == 4 || io[i].max_dims == 6);
		FZ_CHECK(io[i].dim_count >= 1 && io[i].dim_count <= io[i].max_dims);
		for (uint32_t d = 0; d < io[i].dim_count; d++)
			FZ_CHECK(io[i].dims[d] != 0);
		FZ_CHECK(io[i].record_size > 0);
		FZ_CHECK(in_file(io[i].offset, io[i].record_size, size));
		FZ_CHECK(inside(io[i].offset, io[i].record_size, s));
		FZ_CHECK(io[i].name[64] == '\0');
		FZ_CHECK(io[i].quant_raw_count <= 3);
		/* a byte size is only claimed when it was computed without overflow */
		if (io[i].byte_size_known)
			FZ_CHECK(io[i].element_count > 0);
	}
}

static void check_v2(const nbg_model *m, size_t size)
{
	const uint64_t dir_end = (uint64_t)m->section_headers_offset +
				 (uint64_t)m->section_header_count * NBG_V2_SECTION_HEADER_SIZE;
	uint64_t types = 0;

	FZ_CHECK(m->declared_file_size == size);
	FZ_CHECK(m->sub_header_count == 1 && m->sub_header_size == NBG_V2_SUB_HEADER_SIZE);
	FZ_CHECK(m->section_header_size == NBG_V2_SECTION_HEADER_SIZE);
	FZ_CHECK(in_file(m->sub_header_offset, NBG_V2_SUB_HEADER_SIZE, size));
	FZ_CHECK(m->sub_header_offset >= NBG_V2_HEADER_SIZE);
	FZ_CHECK(dir_end <= size);
	FZ_CHECK(m->section_count == m->section_header_count);
	FZ_CHECK(m->section_count <= NBG_SECTION_TYPE_COUNT);

	for (size_t i = 0; i < m->section_count; i++) {
		const nbg_section *s = &m->sections[i];
		FZ_CHECK(s->type < NBG_SECTION_TYPE_COUNT);
		FZ_CHECK(!(types & ((uint64_t)1 << s->type)));
		types |= (uint64_t)1 << s->type;
		FZ_CHECK(s->index == i);
		FZ_CHECK(s->record_offset == m->section_headers_offset + 44ull * i);
		FZ_CHECK(s->alignment == 0 || s->offset % s->alignment == 0);
		if (s->size == 0)
			continue;
		/* no overlap with the header, sub-header, directory or another section */
		FZ_CHECK(s->offset >= NBG_V2_HEADER_SIZE);
		FZ_CHECK(s->offset >= (uint64_t)m->sub_header_offset + NBG_V2_SUB_HEADER_SIZE ||
			 s->offset + s->size <= m->sub_header_offset);
		FZ_CHECK(dir_end == m->section_headers_offset || s->offset >= dir_end ||
			 s->offset + s->size <= m->section_headers_offset);
		for (size_t j = 0; j < i; j++) {
			const nbg_section *t = &m->sections[j];
			if (t->size)
				FZ_CHECK(s->offset >= t->offset + t->size ||
					 t->offset >= s->offset + s->size);
		}
	}

	const nbg_section *cs = nbg_model_section(m, NBG_SEC_CHECKSUM);
	FZ_CHECK(cs ? m->checksum_record_count == cs->size / 8 : m->checksum_record_count == 0);
	for (size_t i = 0; i < m->checksum_record_count; i++) {
		const nbg_checksum_record *r = &m->checksum_records[i];
		FZ_CHECK(nbg_model_section(m, r->section_type) != NULL);
		FZ_CHECK(inside(r->offset, 8, cs));
	}
	FZ_CHECK(m->has_file_checksum);

	const nbg_network_info *ni = &m->network_info;
	if (ni->present) {
		FZ_CHECK(ni->input_count == m->input_count);
		FZ_CHECK(ni->output_count == m->output_count);
		FZ_CHECK(ni->name[64] == '\0');
	}

	const nbg_dynaio *d = &m->dynaio;
	if (d->present) {
		uint64_t pos = 0;
		const nbg_section *reg = nbg_model_section(m, NBG_SEC_DYNAIO);
		const nbg_section *tab = nbg_model_section(m, NBG_SEC_DYNAIO_TABLE);
		FZ_CHECK(reg && tab);
		FZ_CHECK(d->region_size % 64 == 0 && d->table_size % 8 == 0);
		FZ_CHECK(d->entry_count == d->table_size / 8);
		FZ_CHECK(d->entry_count == 0 || d->entries != NULL);
		for (size_t i = 0; i < d->entry_count; i++) {
			const nbg_dynaio_entry *e = &d->entries[i];
			FZ_CHECK(e->size > 0 && e->offset % 64 == 0);
			FZ_CHECK(e->offset >= pos);
			FZ_CHECK((uint64_t)e->offset + e->size <= d->region_size);
			FZ_CHECK(inside(e->record_offset, 8, tab));
			pos = (uint64_t)e->offset + e->size;
		}
		FZ_CHECK(d->mapped_bytes + d->padding_bytes == d->region_size);
	} else {
		FZ_CHECK(!nbg_model_section(m, NBG_SEC_DYNAIO) &&
			 !nbg_model_section(m, NBG_SEC_DYNAIO_TABLE));
	}
}

static void check_v1(const nbg_model *m, size_t size)
{
	const nbg_v1_info *v = &m->v1;

	FZ_CHECK(v->entry_count >= 12 && v->entry_count <= 34);
	FZ_CHECK(m->section_count == v->entry_count);
	FZ_CHECK(v->prefix_end == v->entries_offset + 8ull * v->entry_count);
	FZ_CHECK(v->prefix_end <= size);
	FZ_CHECK(v->trailer_offset <= size && v->trailer_offset + v->trailer_size == size);
	FZ_CHECK(in_file(v->opaque_offset, v->opaque_size, size));
	FZ_CHECK(v->gap_nonzero_bytes <= v->gap_bytes && v->gap_bytes <= size);
	FZ_CHECK(v->network_name[64] == '\0');
	FZ_CHECK(m->checksum_record_count == 0);
	for (size_t i = 0; i < m->section_count; i++) {
		FZ_CHECK(m->sections[i].type == i + 1);
		FZ_CHECK(m->sections[i].record_offset == v->entries_offset + 8 * i);
	}
	if (v->crc_sum_finding)
		FZ_CHECK(v->has_crc_sum);
}

void fz_check_model(const nbg_model *m, const uint8_t *data, size_t size)
{
	FZ_CHECK(m != NULL);
	FZ_CHECK(m->data == data);
	FZ_CHECK(m->file_size == size);
	FZ_CHECK(size >= 12 && memcmp(data, "VPMN", 4) == 0);
	FZ_CHECK(m->family == 1 || m->family == 2);
	FZ_CHECK((m->family == 2) == (m->version == NBG_V2_VERSION));
	FZ_CHECK(m->family == 2 || (m->version >> 16) == 1);
	FZ_CHECK(m->section_count == 0 || m->sections != NULL);
	for (size_t i = 0; i < m->section_count; i++)
		FZ_CHECK(in_file(m->sections[i].offset, m->sections[i].size, size));

	if (m->family == 2)
		check_v2(m, size);
	else
		check_v1(m, size);
	check_io(m, m->inputs, m->input_count, NBG_SEC_INPUT, size);
	check_io(m, m->outputs, m->output_count, NBG_SEC_OUTPUT, size);

	if (size < NBG_TAIL_SIZE) {
		FZ_CHECK(m->tail.cover == NBG_TAIL_NONE);
	} else {
		FZ_CHECK(m->tail.offset == size - NBG_TAIL_SIZE && m->tail.size == NBG_TAIL_SIZE);
		FZ_CHECK(m->tail.covered_bytes <= NBG_TAIL_SIZE);
		FZ_CHECK((m->tail.cover == NBG_TAIL_UNCOVERED) == (m->tail.covered_bytes == 0));
		FZ_CHECK((m->tail.cover == NBG_TAIL_COVERED) ==
			 (m->tail.covered_bytes == NBG_TAIL_SIZE));
	}

	FZ_CHECK(m->note_count <= 4096);
	FZ_CHECK(m->note_count == 0 || m->notes != NULL);
	for (size_t i = 0; i < m->note_count; i++) {
		FZ_CHECK(fz_terminated(m->notes[i].id, sizeof(m->notes[i].id)));
		FZ_CHECK(m->notes[i].id[0] != '\0');
		FZ_CHECK(fz_terminated(m->notes[i].text, sizeof(m->notes[i].text)));
	}
}

nbg_code fz_parse(const uint8_t *data, size_t size, nbg_model **m, nbg_error *err)
{
	nbg_parse_options o = { .size = sizeof(o), .flags = NBG_PARSE_NO_CRC_CHECK };
	nbg_code rc = nbg_parse(data, size, &o, m, err);

	FZ_CHECK((unsigned)rc < NBG_E__COUNT);
	FZ_CHECK(nbg_code_name(rc) != NULL && nbg_code_text(rc) != NULL);
	if (rc != NBG_OK) {
		FZ_CHECK(*m == NULL);
		FZ_CHECK(err->code == rc);
		FZ_CHECK(fz_terminated(err->message, sizeof(err->message)));
		FZ_CHECK(fz_terminated(err->field, sizeof(err->field)));
		FZ_CHECK(err->message[0] != '\0');
		return rc;
	}
	fz_check_model(*m, data, size);
	return rc;
}
