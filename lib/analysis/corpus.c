/*
 * corpus.c - the corpus aggregate: what every valid file adds to the corpus
 * tables (families, versions and targets; section sets, entry sizes and
 * alignments; checksum records and file checksums; dynamic-I/O totals;
 * distinct connection tails; I/O formats and quantization; notes) and how
 * failures are counted.  A corpus invariant is not a format rule: the
 * aggregate says what was seen.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/corpus_internal.h"

static void vs_add(nbg_valset *s, uint64_t v)
{
	for (size_t i = 0; i < s->count; i++)
		if (s->v[i] == v) {
			s->n[i]++;
			return;
		}
	if (s->count == NBG_CORPUS_MAX_VALUES) {
		s->overflow = 1;
		return;
	}
	s->v[s->count] = v;
	s->n[s->count++] = 1;
}

static void rg_add(nbg_range64 *r, uint64_t v)
{
	if (!r->seen || v < r->lo)
		r->lo = v;
	if (!r->seen || v > r->hi)
		r->hi = v;
	r->seen = 1;
}

static void sha_add(nbg_shaset *s, const uint8_t d[32])
{
	for (size_t i = 0; i < s->count; i++)
		if (!memcmp(s->d[i], d, 32))
			return;
	if (s->count == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		void *n = realloc(s->d, cap * 32);
		if (!n)
			return;
		s->d = n;
		s->cap = cap;
	}
	memcpy(s->d[s->count++], d, 32);
}

static void add_note(nbg_corpus *c, const char *id)
{
	for (size_t i = 0; i < c->note_kinds; i++)
		if (!strcmp(c->notes[i].id, id)) {
			c->notes[i].n++;
			return;
		}
	if (c->note_kinds < sizeof(c->notes) / sizeof(c->notes[0])) {
		snprintf(c->notes[c->note_kinds].id, sizeof(c->notes[0].id), "%s", id);
		c->notes[c->note_kinds++].n = 1;
	}
}

static void add_io(nbg_corpus *c, const nbg_model *m, int outputs)
{
	size_t n = outputs ? m->output_count : m->input_count;

	for (size_t i = 0; i < n; i++) {
		const nbg_io *io = outputs ? nbg_model_output_at(m, i) : nbg_model_input_at(m, i);
		c->io_records++;
		vs_add(&c->io_format, io->data_format);
		vs_add(&c->io_quant, io->quant_format);
		vs_add(&c->io_type, io->data_type);
		vs_add(&c->io_dim_count, io->dim_count);
	}
}

static void add_network_info(nbg_corpus *c, const nbg_model *m)
{
	const nbg_network_info *ni = &m->network_info;

	if (!ni->present)
		return;
	vs_add(&c->core_count, ni->core_count);
	vs_add(&c->address_width, ni->address_width);
	vs_add(&c->attribute, ni->attribute);
	vs_add(&c->vsi_nonzero, ni->vsi_reserved_nonzero);
	rg_add(&c->ni_inputs, ni->input_count);
	rg_add(&c->ni_outputs, ni->output_count);
	rg_add(&c->ni_layers, ni->layer_count);
	rg_add(&c->ni_opcount, ni->operation_count);
	const nbg_section *ops = nbg_model_section(m, NBG_SEC_OPERATIONS);
	if (ops && ops->entry_size) {
		c->opcount_checked++;
		c->opcount_plus3_holds += ni->operation_count == ops->size / ops->entry_size + 3;
	}
}

static void add_v2(nbg_corpus *c, const nbg_model *m)
{
	c->v2_files++;
	vs_add(&c->section_count, m->section_count);
	for (size_t i = 0; i < m->section_count; i++) {
		const nbg_section *s = nbg_model_section_at(m, i);
		c->type_files[s->type]++;
		vs_add(&c->type_entsize[s->type], s->entry_size);
		vs_add(&c->type_align[s->type], s->alignment);
	}
	for (size_t i = 0; i < m->checksum_record_count; i++) {
		const nbg_checksum_record *r = nbg_model_checksum_record_at(m, i);
		c->checksum_records++;
		c->checksum_match += r->stored == r->computed;
	}
	c->file_checksum_match += m->file_checksum.recorded == m->file_checksum.computed;
	c->covered_section_bytes += m->file_checksum.covered_section_bytes;
	if (m->dynaio.present) {
		c->dyn_files++;
		c->dyn_entries += m->dynaio.entry_count;
		rg_add(&c->dyn_entry_count, m->dynaio.entry_count);
		c->dyn_region += m->dynaio.region_size;
		c->dyn_mapped += m->dynaio.mapped_bytes;
		c->dyn_padding += m->dynaio.padding_bytes;
	}
	add_network_info(c, m);
	if (m->memory.has_memory_pool)
		rg_add(&c->mem_pool, m->memory.memory_pool_bytes);
}

nbg_corpus *nbg_corpus_new(void)
{
	return calloc(1, sizeof(nbg_corpus));
}

void nbg_corpus_free(nbg_corpus *c)
{
	if (!c)
		return;
	free(c->tails.d);
	free(c);
}

void nbg_corpus_add_model(nbg_corpus *c, const nbg_model *m)
{
	c->files++;
	c->bytes += m->file_size;
	c->valid++;
	vs_add(&c->family, m->family);
	vs_add(&c->version, m->version);
	vs_add(&c->target, m->target);
	add_io(c, m, 0);
	add_io(c, m, 1);
	if (m->tail.cover != NBG_TAIL_NONE) {
		sha_add(&c->tails, m->tail.sha256);
		vs_add(&c->tail_cover, m->tail.cover);
	}
	for (size_t i = 0; i < m->note_count; i++)
		add_note(c, nbg_model_note_at(m, i)->id);

	if (m->family == 1) {
		c->v1_files++;
		vs_add(&c->v1_entry_count, m->v1.entry_count);
		vs_add(&c->v1_io_stride, m->v1.io_stride);
		if (m->v1.crc_sum_finding)
			vs_add(&c->crc_finding, (unsigned char)m->v1.crc_sum_finding[0]);
		return;
	}
	add_v2(c, m);
}

void nbg_corpus_add_failure(nbg_corpus *c, nbg_code code)
{
	c->files++;
	if (code == NBG_E_IO)
		c->unreadable++;
	else
		c->fail_by_code[code < NBG_E__COUNT ? code : 0]++;
}

void nbg_corpus_add_unreadable_path(nbg_corpus *c)
{
	c->unreadable++;
}

const char *nbg_corpus_hex_name(uint64_t v, char *buf, size_t n)
{
	snprintf(buf, n, "0x%08" PRIx64, v);
	return buf;
}

const char *nbg_corpus_format_name(uint64_t v, char *buf, size_t n)
{
	const char *s = nbg_data_format_name((uint32_t)v);
	if (s)
		return s;
	snprintf(buf, n, "format(%" PRIu64 ")", v);
	return buf;
}

const char *nbg_corpus_quant_name(uint64_t v, char *buf, size_t n)
{
	const char *s = nbg_quant_format_name((uint32_t)v);
	if (s)
		return s;
	snprintf(buf, n, "quant(%" PRIu64 ")", v);
	return buf;
}

const char *nbg_corpus_cover_name(uint64_t v, char *buf, size_t n)
{
	static const char *const names[] = { "none", "uncovered", "partly covered",
					     "section-covered-view" };
	return v < 4 ? names[v] : (snprintf(buf, n, "%" PRIu64, v), buf);
}

const char *nbg_corpus_finding_name(uint64_t v, char *buf, size_t n)
{
	return v == 'z' ? "zero" : v == 'm' ? "match" : v == 'n' ? "no-match"
							 : (snprintf(buf, n, "?"), buf);
}
