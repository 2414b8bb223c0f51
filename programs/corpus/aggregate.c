/*
 * aggregate.c - the corpus aggregate: what every valid file adds to the corpus
 * tables (families, versions and targets; section sets, entry sizes and
 * alignments; checksum records and file checksums; dynamic-I/O totals;
 * distinct connection tails; I/O formats and quantization; notes), how
 * failures are counted, and how two aggregates merge.  A corpus invariant
 * is not a format rule: the aggregate says what was seen.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus_internal.h"

#define VS(c, s, v) corpus_valset_add((c), (s), (v), 1)
#define RG(r, v) corpus_range_add((r), (v), (v))

static void add_io(corpus_agg *c, const nbg_model *m, int outputs)
{
	size_t n = outputs ? nbg_model_output_count(m) : nbg_model_input_count(m);

	for (size_t i = 0; i < n; i++) {
		const nbg_io *io = outputs ? nbg_model_output_at(m, i) : nbg_model_input_at(m, i);
		c->io_records++;
		VS(c, &c->io_format, io->data_format);
		VS(c, &c->io_quant, io->quant_format);
		VS(c, &c->io_type, io->data_type);
		VS(c, &c->io_dim_count, io->dim_count);
	}
}

static void add_network_info(corpus_agg *c, const nbg_model *m)
{
	const nbg_network_info *ni = nbg_model_network_info(m);

	if (!ni->present)
		return;
	VS(c, &c->core_count, ni->core_count);
	VS(c, &c->address_width, ni->address_width);
	VS(c, &c->attribute, ni->attribute);
	VS(c, &c->vsi_nonzero, ni->vsi_reserved_nonzero);
	RG(&c->ni_inputs, ni->input_count);
	RG(&c->ni_outputs, ni->output_count);
	RG(&c->ni_layers, ni->layer_count);
	RG(&c->ni_opcount, ni->operation_count);
	const nbg_section *ops = nbg_model_section(m, NBG_SEC_OPERATIONS);
	if (ops && ops->entry_size) {
		c->opcount_checked++;
		c->opcount_plus3_holds += ni->operation_count == ops->size / ops->entry_size + 3;
	}
}

static void add_v2(corpus_agg *c, const nbg_model *m)
{
	const nbg_file_checksum *fc = nbg_model_file_checksum(m); /* a valid v2 has one */
	const nbg_dynaio *dyn = nbg_model_dynaio(m);
	const nbg_memory *mem = nbg_model_memory(m);

	c->v2_files++;
	VS(c, &c->section_count, nbg_model_section_count(m));
	for (size_t i = 0; i < nbg_model_section_count(m); i++) {
		const nbg_section *s = nbg_model_section_at(m, i);
		if (s->type >= NBG_SECTION_TYPE_COUNT)
			continue;
		c->type_files[s->type]++;
		VS(c, &c->type_entsize[s->type], s->entry_size);
		VS(c, &c->type_align[s->type], s->alignment);
	}
	for (size_t i = 0; i < nbg_model_checksum_record_count(m); i++) {
		const nbg_checksum_record *r = nbg_model_checksum_record_at(m, i);
		c->checksum_records++;
		c->checksum_match += r->stored == r->computed;
	}
	if (fc) {
		c->file_checksum_match += fc->recorded == fc->computed;
		c->covered_section_bytes += fc->covered_section_bytes;
	}
	if (dyn->present) {
		c->dyn_files++;
		c->dyn_entries += dyn->entry_count;
		RG(&c->dyn_entry_count, dyn->entry_count);
		c->dyn_region += dyn->region_size;
		c->dyn_mapped += dyn->mapped_bytes;
		c->dyn_padding += dyn->padding_bytes;
	}
	add_network_info(c, m);
	if (mem->has_memory_pool)
		RG(&c->mem_pool, mem->memory_pool_bytes);
}

corpus_agg *corpus_agg_new(void)
{
	return calloc(1, sizeof(corpus_agg));
}

static void vs_free(corpus_valset *s)
{
	free(s->v);
	free(s->n);
}

void corpus_agg_free(corpus_agg *c)
{
	size_t n;
	const corpus_field *f = corpus_fields(&n);

	if (!c)
		return;
	for (size_t i = 0; i < n; i++)
		if (f[i].kind == CF_VALSET)
			vs_free(corpus_member(c, &f[i]));
	for (uint32_t t = 0; t < NBG_SECTION_TYPE_COUNT; t++) {
		vs_free(&c->type_entsize[t]);
		vs_free(&c->type_align[t]);
	}
	free(c->tails.d);
	free(c->tails.used);
	free(c->notes);
	free(c);
}

static nbg_code result(const corpus_agg *c)
{
	return c->oom ? NBG_E_OUT_OF_MEMORY : NBG_OK;
}

nbg_code corpus_add_model(corpus_agg *c, const nbg_model *m)
{
	if (!c || !m)
		return NBG_E_INVALID_ARGUMENT;
	const nbg_tail *tail = nbg_model_tail(m);
	const nbg_v1_info *v1 = nbg_model_v1(m);

	c->files++;
	c->bytes += nbg_model_file_size(m);
	c->valid++;
	VS(c, &c->family, nbg_model_family(m));
	VS(c, &c->version, nbg_model_version(m));
	VS(c, &c->target, nbg_model_target(m));
	add_io(c, m, 0);
	add_io(c, m, 1);
	if (tail->cover != NBG_TAIL_NONE) {
		corpus_shaset_add(c, &c->tails, tail->sha256);
		VS(c, &c->tail_cover, tail->cover);
	}
	for (size_t i = 0; i < nbg_model_note_count(m); i++)
		corpus_note_add(c, nbg_model_note_at(m, i)->id, 1);

	if (nbg_model_family(m) == 1) {
		c->v1_files++;
		VS(c, &c->v1_entry_count, v1->entry_count);
		VS(c, &c->v1_io_stride, v1->io_stride);
		if (v1->crc_sum_finding)
			VS(c, &c->crc_finding, (unsigned char)v1->crc_sum_finding[0]);
	} else {
		add_v2(c, m);
	}
	return result(c);
}

nbg_code corpus_add_failure(corpus_agg *c, nbg_code code)
{
	if (!c)
		return NBG_E_INVALID_ARGUMENT;
	c->files++;
	c->fail_by_code[code > NBG_OK && code < NBG_E__COUNT ? code : 0]++;
	return result(c);
}

nbg_code corpus_add_unmeasured(corpus_agg *c, corpus_status status)
{
	if (!c)
		return NBG_E_INVALID_ARGUMENT;
	if (status <= CORPUS_INVALID || status >= CORPUS_STATUS_COUNT)
		return NBG_E_INVALID_ARGUMENT;
	c->files++;
	c->not_measured[status]++;
	return result(c);
}

nbg_code corpus_add_skipped(corpus_agg *c, corpus_skip reason)
{
	if (!c)
		return NBG_E_INVALID_ARGUMENT;
	if (reason >= CORPUS_SKIP_COUNT)
		return NBG_E_INVALID_ARGUMENT;
	c->skipped[reason]++;
	return result(c);
}

static void merge_types(corpus_agg *dst, const corpus_agg *src)
{
	for (uint32_t t = 0; t < NBG_SECTION_TYPE_COUNT; t++) {
		const corpus_valset *pair[2] = { &src->type_entsize[t], &src->type_align[t] };
		corpus_valset *into[2] = { &dst->type_entsize[t], &dst->type_align[t] };
		corpus_count(dst, &dst->type_files[t], src->type_files[t]);
		for (int k = 0; k < 2; k++)
			for (size_t i = 0; i < pair[k]->cap; i++)
				if (pair[k]->n[i])
					corpus_valset_add(dst, into[k], pair[k]->v[i], pair[k]->n[i]);
	}
}

nbg_code corpus_merge(corpus_agg *dst, const corpus_agg *src)
{
	size_t n;
	const corpus_field *f = corpus_fields(&n);

	if (!dst || !src)
		return NBG_E_INVALID_ARGUMENT;
	dst->oom |= src->oom;
	dst->overflow |= src->overflow;
	for (int k = 0; k < NBG_E__COUNT; k++)
		corpus_count(dst, &dst->fail_by_code[k], src->fail_by_code[k]);
	for (int k = 0; k < CORPUS_STATUS_COUNT; k++)
		corpus_count(dst, &dst->not_measured[k], src->not_measured[k]);
	for (int k = 0; k < CORPUS_SKIP_COUNT; k++)
		corpus_count(dst, &dst->skipped[k], src->skipped[k]);
	for (size_t i = 0; i < n; i++) {
		void *d = corpus_member(dst, &f[i]);
		const void *s = corpus_cmember(src, &f[i]);
		if (f[i].kind == CF_U64) {
			corpus_count(dst, d, *(const uint64_t *)s);
		} else if (f[i].kind == CF_RANGE) {
			const corpus_range *r = s;
			if (r->seen)
				corpus_range_add(d, r->lo, r->hi);
		} else if (f[i].kind == CF_VALSET) {
			const corpus_valset *vs = s;
			for (size_t j = 0; j < vs->cap; j++)
				if (vs->n[j])
					corpus_valset_add(dst, d, vs->v[j], vs->n[j]);
		}
	}
	merge_types(dst, src);
	for (size_t i = 0; i < src->tails.cap; i++)
		if (src->tails.used[i])
			corpus_shaset_add(dst, &dst->tails, src->tails.d[i]);
	for (size_t i = 0; i < src->note_kinds; i++)
		corpus_note_add(dst, src->notes[i].id, src->notes[i].n);
	if (dst->overflow)
		return NBG_E_CORPUS_PART; /* the sum of the parts passes 2^64-1 */
	return result(dst);
}

nbg_code corpus_error(nbg_error *err, nbg_code code, uint64_t offset, const char *field,
		      const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	memset(err, 0, sizeof(*err));
	err->code = code;
	err->offset = offset;
	err->index = -1;
	snprintf(err->field, sizeof(err->field), "%s", field);
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return code;
}

int corpus_ok(const corpus_agg *c)
{
	return c ? !c->oom : 0;
}

uint64_t corpus_file_count(const corpus_agg *c)
{
	return c ? c->files : 0;
}

uint64_t corpus_unreadable(const corpus_agg *c)
{
	return c->not_measured[CORPUS_UNREADABLE] + c->not_measured[CORPUS_VANISHED] +
	       c->not_measured[CORPUS_CHANGED] + c->not_measured[CORPUS_NOT_REGULAR] +
	       c->skipped[CORPUS_SKIP_UNREADABLE];
}

int corpus_exit(const corpus_agg *c)
{
	if (!c)
		return NBG_EXIT_USAGE;
	uint64_t invalid = c->not_measured[CORPUS_DIGEST_MISMATCH] +
			   c->skipped[CORPUS_SKIP_MANIFEST_LINE];

	if (c->oom || corpus_unreadable(c) || c->fail_by_code[NBG_E_OUT_OF_MEMORY])
		return NBG_EXIT_IO;
	for (int k = 0; k < NBG_E__COUNT; k++)
		invalid += c->fail_by_code[k];
	return invalid ? NBG_EXIT_INVALID : NBG_EXIT_OK;
}

const char *corpus_status_name(corpus_status s)
{
	static const char *const names[CORPUS_STATUS_COUNT] = {
		"valid", "invalid", "unreadable", "vanished", "changed", "digest-mismatch",
		"not-regular",
	};
	return (unsigned)s < CORPUS_STATUS_COUNT ? names[s] : NULL;
}

const char *corpus_skip_name(corpus_skip s)
{
	static const char *const names[CORPUS_SKIP_COUNT] = {
		"unreadable", "directory-symlink", "directory-revisited", "manifest-line",
	};
	return (unsigned)s < CORPUS_SKIP_COUNT ? names[s] : NULL;
}

const char *corpus_code_key(int k)
{
	return k ? nbg_code_name((nbg_code)k) : NULL;
}

const char *corpus_status_key(int k)
{
	return k > CORPUS_INVALID ? corpus_status_name((corpus_status)k) : NULL;
}

const char *corpus_skip_key(int k)
{
	return corpus_skip_name((corpus_skip)k);
}

const char *corpus_hex_name(uint64_t v, char *buf, size_t n)
{
	snprintf(buf, n, "0x%08" PRIx64, v);
	return buf;
}

const char *corpus_format_name(uint64_t v, char *buf, size_t n)
{
	const char *s = v <= UINT32_MAX ? nbg_data_format_name((uint32_t)v) : NULL;
	if (s)
		return s;
	snprintf(buf, n, "format(%" PRIu64 ")", v);
	return buf;
}

const char *corpus_quant_name(uint64_t v, char *buf, size_t n)
{
	const char *s = v <= UINT32_MAX ? nbg_quant_format_name((uint32_t)v) : NULL;
	if (s)
		return s;
	snprintf(buf, n, "quant(%" PRIu64 ")", v);
	return buf;
}

const char *corpus_cover_name(uint64_t v, char *buf, size_t n)
{
	static const char *const names[] = { "none", "uncovered", "partly covered",
					     "section-covered-view" };
	return v < 4 ? names[v] : (snprintf(buf, n, "%" PRIu64, v), buf);
}

const char *corpus_finding_name(uint64_t v, char *buf, size_t n)
{
	return v == 'z' ? "zero" : v == 'm' ? "match" : v == 'n' ? "no-match"
							 : (snprintf(buf, n, "?"), buf);
}

#define U(key, m) { key, CF_U64, offsetof(corpus_agg, m), NULL }
#define V(key, m, f) { key, CF_VALSET, offsetof(corpus_agg, m), f }
#define R(key, m) { key, CF_RANGE, offsetof(corpus_agg, m), NULL }
#define K(key, kind) { key, kind, 0, NULL }

static const corpus_field fields[] = {
	U("files", files), U("valid", valid), K("unreadable", CF_UNREADABLE),
	U("bytes", bytes), K("invalid_by_code", CF_CODES),
	K("not_measured", CF_STATUSES), K("skipped", CF_SKIPS),
	V("families", family, NULL), V("versions", version, corpus_hex_name),
	V("targets", target, corpus_hex_name),
	U("v2.files", v2_files), V("v2.section_counts", section_count, NULL),
	K("v2.section_types", CF_TYPES),
	U("v2.section_checksums.records", checksum_records),
	U("v2.section_checksums.match", checksum_match),
	U("v2.file_checksums.match", file_checksum_match),
	U("v2.file_checksums.covered_section_bytes", covered_section_bytes),
	U("v2.dynamic_io.paired_files", dyn_files), U("v2.dynamic_io.entries", dyn_entries),
	U("v2.dynamic_io.region_bytes", dyn_region), U("v2.dynamic_io.mapped_bytes", dyn_mapped),
	U("v2.dynamic_io.padding_bytes", dyn_padding),
	R("v2.dynamic_io.entries_per_file", dyn_entry_count),
	V("v2.core_count", core_count, NULL), V("v2.address_width", address_width, NULL),
	V("v2.attribute", attribute, corpus_hex_name),
	V("v2.vsi_reserved_nonzero_words", vsi_nonzero, NULL),
	U("v2.operation_count_plus_3.holds", opcount_plus3_holds),
	U("v2.operation_count_plus_3.checked", opcount_checked),
	R("v2.input_count", ni_inputs), R("v2.output_count", ni_outputs),
	R("v2.layer_count", ni_layers), R("v2.operation_count", ni_opcount),
	R("v2.memory_pool_bytes", mem_pool),
	U("v1.files", v1_files), V("v1.entry_counts", v1_entry_count, NULL),
	V("v1.io_strides", v1_io_stride, NULL),
	V("v1.crc_sum_findings", crc_finding, corpus_finding_name),
	U("io_records.count", io_records),
	V("io_records.data_formats", io_format, corpus_format_name),
	V("io_records.quantization", io_quant, corpus_quant_name),
	V("io_records.data_types", io_type, NULL),
	V("io_records.dimension_counts", io_dim_count, NULL),
	K("connection_tails.distinct_sha256", CF_TAILS),
	V("connection_tails.coverage", tail_cover, corpus_cover_name),
	K("connection_tails.sha256", CF_TAIL_LIST),
	K("notes", CF_NOTES),
};

const corpus_field *corpus_fields(size_t *count)
{
	*count = sizeof(fields) / sizeof(fields[0]);
	return fields;
}
