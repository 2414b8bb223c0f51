/*
 * fuzz_common.c - the parse step and the result invariants every harness
 * shares (fuzz_common.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "nbg/report.h"

void fz_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "fuzz invariant violated: %s (%s:%d)\n", what, file, line);
	abort();
}

char *fz_document(const nbg_model *m, const char *path, unsigned what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	FZ_CHECK(f != NULL);
	FZ_CHECK(nbg_json_document_write(f, m, path, what, NULL) == NBG_OK);
	FZ_CHECK(fclose(f) == 0);
	return buf;
}

FILE *fz_text_open(fz_text *t)
{
	t->buf = NULL;
	t->len = 0;
	t->f = open_memstream(&t->buf, &t->len);
	FZ_CHECK(t->f != NULL);
	return t->f;
}

const char *fz_text_close(fz_text *t)
{
	FZ_CHECK(fclose(t->f) == 0);
	t->f = NULL;
	FZ_CHECK(strlen(t->buf) == t->len);
	for (size_t i = 0; i < t->len; i++)
		FZ_CHECK(t->buf[i] == '\n' ||
			 ((unsigned char)t->buf[i] >= 0x20 && (unsigned char)t->buf[i] < 0x7f));
	return t->buf;
}

void fz_text_free(fz_text *t)
{
	free(t->buf);
	t->buf = NULL;
	t->len = 0;
}

void fz_text_check(fz_text *t)
{
	fz_text_close(t);
	fz_text_free(t);
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

static void check_io(const nbg_model *m, int outputs, uint32_t type, size_t size)
{
	const nbg_section *s = nbg_model_section(m, type);
	size_t count = outputs ? nbg_model_output_count(m) : nbg_model_input_count(m);

	FZ_CHECK(count == 0 || s != NULL);
	for (size_t i = 0; i < count; i++) {
		const nbg_io *io = outputs ? nbg_model_output_at(m, i) : nbg_model_input_at(m, i);

		FZ_CHECK(io != NULL);
		FZ_CHECK(io->index == i);
		FZ_CHECK(io->max_dims == 4 || io->max_dims == 6);
		FZ_CHECK(io->dim_count >= 1 && io->dim_count <= io->max_dims);
		for (uint32_t d = 0; d < io->dim_count; d++)
			FZ_CHECK(io->dims[d] != 0);
		FZ_CHECK(io->record_size > 0);
		FZ_CHECK(in_file(io->offset, io->record_size, size));
		FZ_CHECK(inside(io->offset, io->record_size, s));
		FZ_CHECK(io->name[64] == '\0');
		FZ_CHECK(io->quant_raw_count <= 3);
		/* a byte size is only claimed when it was computed without overflow */
		if (io->byte_size_known)
			FZ_CHECK(io->element_count > 0);
	}
}

static void check_v2(const nbg_model *m, size_t size)
{
	const uint64_t dir_end = (uint64_t)nbg_model_v2_header(m)->section_headers_offset +
				 (uint64_t)nbg_model_v2_header(m)->section_header_count * NBG_V2_SECTION_HEADER_SIZE;
	uint64_t types = 0;

	FZ_CHECK(nbg_model_v2_header(m)->declared_file_size == size);
	FZ_CHECK(nbg_model_v2_header(m)->sub_header_count == 1 && nbg_model_v2_header(m)->sub_header_size == NBG_V2_SUB_HEADER_SIZE);
	FZ_CHECK(nbg_model_v2_header(m)->section_header_size == NBG_V2_SECTION_HEADER_SIZE);
	FZ_CHECK(in_file(nbg_model_v2_header(m)->sub_header_offset, NBG_V2_SUB_HEADER_SIZE, size));
	FZ_CHECK(nbg_model_v2_header(m)->sub_header_offset >= NBG_V2_HEADER_SIZE);
	FZ_CHECK(dir_end <= size);
	FZ_CHECK(nbg_model_section_count(m) == nbg_model_v2_header(m)->section_header_count);
	FZ_CHECK(nbg_model_section_count(m) <= NBG_SECTION_TYPE_COUNT);

	for (size_t i = 0; i < nbg_model_section_count(m); i++) {
		const nbg_section *s = nbg_model_section_at(m, i);
		FZ_CHECK(s->type < NBG_SECTION_TYPE_COUNT);
		FZ_CHECK(!(types & ((uint64_t)1 << s->type)));
		types |= (uint64_t)1 << s->type;
		FZ_CHECK(s->index == i);
		FZ_CHECK(s->record_offset == nbg_model_v2_header(m)->section_headers_offset + 44ull * i);
		FZ_CHECK(s->alignment == 0 || s->offset % s->alignment == 0);
		if (s->size == 0)
			continue;
		/* no overlap with the header, sub-header, directory or another section */
		FZ_CHECK(s->offset >= NBG_V2_HEADER_SIZE);
		FZ_CHECK(s->offset >= (uint64_t)nbg_model_v2_header(m)->sub_header_offset + NBG_V2_SUB_HEADER_SIZE ||
			 s->offset + s->size <= nbg_model_v2_header(m)->sub_header_offset);
		FZ_CHECK(dir_end == nbg_model_v2_header(m)->section_headers_offset || s->offset >= dir_end ||
			 s->offset + s->size <= nbg_model_v2_header(m)->section_headers_offset);
		for (size_t j = 0; j < i; j++) {
			const nbg_section *t = nbg_model_section_at(m, j);
			if (t->size)
				FZ_CHECK(s->offset >= t->offset + t->size ||
					 t->offset >= s->offset + s->size);
		}
	}

	const nbg_section *cs = nbg_model_section(m, NBG_SEC_CHECKSUM);
	FZ_CHECK(cs ? nbg_model_checksum_record_count(m) == cs->size / 8 : nbg_model_checksum_record_count(m) == 0);
	for (size_t i = 0; i < nbg_model_checksum_record_count(m); i++) {
		const nbg_checksum_record *r = nbg_model_checksum_record_at(m, i);
		FZ_CHECK(nbg_model_section(m, r->section_type) != NULL);
		FZ_CHECK(inside(r->offset, 8, cs));
	}
	FZ_CHECK((nbg_model_file_checksum(m) != NULL));

	const nbg_network_info *ni = nbg_model_network_info(m);
	if (ni->present) {
		FZ_CHECK(ni->input_count == nbg_model_input_count(m));
		FZ_CHECK(ni->output_count == nbg_model_output_count(m));
		FZ_CHECK(ni->name[64] == '\0');
	}

	const nbg_dynaio *d = nbg_model_dynaio(m);
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
	const nbg_v1_info *v = nbg_model_v1(m);

	FZ_CHECK(v->entry_count >= 12 && v->entry_count <= 34);
	FZ_CHECK(nbg_model_section_count(m) == v->entry_count);
	FZ_CHECK(v->prefix_end == v->entries_offset + 8ull * v->entry_count);
	FZ_CHECK(v->prefix_end <= size);
	FZ_CHECK(v->trailer_offset <= size && v->trailer_offset + v->trailer_size == size);
	FZ_CHECK(in_file(v->opaque_offset, v->opaque_size, size));
	FZ_CHECK(v->gap_nonzero_bytes <= v->gap_bytes && v->gap_bytes <= size);
	FZ_CHECK(v->network_name[64] == '\0');
	FZ_CHECK(nbg_model_checksum_record_count(m) == 0);
	for (size_t i = 0; i < nbg_model_section_count(m); i++) {
		FZ_CHECK(nbg_model_section_at(m, i)->type == i + 1);
		FZ_CHECK(nbg_model_section_at(m, i)->record_offset == v->entries_offset + 8 * i);
	}
	if (v->crc_sum_finding)
		FZ_CHECK(v->has_crc_sum);
}

void fz_check_model(const nbg_model *m, const uint8_t *data, size_t size)
{
	FZ_CHECK(m != NULL);
	FZ_CHECK(nbg_model_data(m) == data);
	FZ_CHECK(nbg_model_file_size(m) == size);
	FZ_CHECK(size >= 12 && memcmp(data, "VPMN", 4) == 0);
	FZ_CHECK(nbg_model_family(m) == 1 || nbg_model_family(m) == 2);
	FZ_CHECK((nbg_model_family(m) == 2) == (nbg_model_version(m) == NBG_V2_VERSION));
	FZ_CHECK(nbg_model_family(m) == 2 || (nbg_model_version(m) >> 16) == 1);
	FZ_CHECK(nbg_model_section_count(m) == 0 || nbg_model_section_at(m, 0) != NULL);
	for (size_t i = 0; i < nbg_model_section_count(m); i++)
		FZ_CHECK(in_file(nbg_model_section_at(m, i)->offset, nbg_model_section_at(m, i)->size, size));

	if (nbg_model_family(m) == 2)
		check_v2(m, size);
	else
		check_v1(m, size);
	check_io(m, 0, NBG_SEC_INPUT, size);
	check_io(m, 1, NBG_SEC_OUTPUT, size);

	if (size < NBG_TAIL_SIZE) {
		FZ_CHECK(nbg_model_tail(m)->cover == NBG_TAIL_NONE);
	} else {
		FZ_CHECK(nbg_model_tail(m)->offset == size - NBG_TAIL_SIZE && nbg_model_tail(m)->size == NBG_TAIL_SIZE);
		FZ_CHECK(nbg_model_tail(m)->covered_bytes <= NBG_TAIL_SIZE);
		FZ_CHECK((nbg_model_tail(m)->cover == NBG_TAIL_UNCOVERED) == (nbg_model_tail(m)->covered_bytes == 0));
		FZ_CHECK((nbg_model_tail(m)->cover == NBG_TAIL_COVERED) ==
			 (nbg_model_tail(m)->covered_bytes == NBG_TAIL_SIZE));
	}

	FZ_CHECK(nbg_model_note_count(m) <= 4096);
	FZ_CHECK(nbg_model_note_count(m) == 0 || nbg_model_note_at(m, 0) != NULL);
	for (size_t i = 0; i < nbg_model_note_count(m); i++) {
		FZ_CHECK(fz_terminated(nbg_model_note_at(m, i)->id, sizeof(nbg_model_note_at(m, i)->id)));
		FZ_CHECK(nbg_model_note_at(m, i)->id[0] != '\0');
		FZ_CHECK(fz_terminated(nbg_model_note_at(m, i)->text, sizeof(nbg_model_note_at(m, i)->text)));
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
