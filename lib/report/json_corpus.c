/*
 * json_corpus.c - a corpus aggregate as one JSON document (`nbg corpus
 * --json`); doc/corpus.md lists its keys.
 */
#include <stdlib.h>

#include <jansson.h>

#include "analysis/corpus_internal.h"

#define JI(x) ((json_int_t)(x))

static json_t *vs_json(const nbg_valset *s, nbg_corpus_namer f)
{
	json_t *a = json_array();
	char buf[48];
	for (size_t i = 0; i < s->count; i++)
		json_array_append_new(a, json_pack("{s:o,s:I}", "value",
						   f ? json_string(f(s->v[i], buf, sizeof(buf)))
						     : json_integer(JI(s->v[i])),
						   "files_or_records", JI(s->n[i])));
	return a;
}

static json_t *rg_json(const nbg_range64 *r)
{
	return r->seen ? json_pack("[I,I]", JI(r->lo), JI(r->hi)) : json_null();
}

static json_t *types_json(const nbg_corpus *c)
{
	json_t *types = json_array();
	for (uint32_t t = 0; t < NBG_SECTION_TYPE_COUNT; t++)
		if (c->type_files[t])
			json_array_append_new(
				types, json_pack("{s:i,s:s,s:I,s:o,s:o}", "type", (int)t, "name",
						 nbg_section_type_name(t), "files",
						 JI(c->type_files[t]), "entry_sizes",
						 vs_json(&c->type_entsize[t], NULL), "alignments",
						 vs_json(&c->type_align[t], NULL)));
	return types;
}

static json_t *v2_json(const nbg_corpus *c)
{
	return json_pack(
		"{s:I,s:o,s:o,s:{s:I,s:I},s:{s:I,s:I},s:{s:I,s:I,s:I,s:I,s:I,s:o},"
		"s:o,s:o,s:o,s:o,s:{s:I,s:I},s:o,s:o,s:o,s:o,s:o}",
		"files", JI(c->v2_files), "section_counts", vs_json(&c->section_count, NULL),
		"section_types", types_json(c), "section_checksums", "records",
		JI(c->checksum_records), "match", JI(c->checksum_match), "file_checksums", "match",
		JI(c->file_checksum_match), "covered_section_bytes", JI(c->covered_section_bytes),
		"dynamic_io", "paired_files", JI(c->dyn_files), "entries", JI(c->dyn_entries),
		"region_bytes", JI(c->dyn_region), "mapped_bytes", JI(c->dyn_mapped),
		"padding_bytes", JI(c->dyn_padding), "entries_per_file", rg_json(&c->dyn_entry_count),
		"core_count", vs_json(&c->core_count, NULL), "address_width",
		vs_json(&c->address_width, NULL), "attribute",
		vs_json(&c->attribute, nbg_corpus_hex_name), "vsi_reserved_nonzero_words",
		vs_json(&c->vsi_nonzero, NULL), "operation_count_plus_3", "holds",
		JI(c->opcount_plus3_holds), "checked", JI(c->opcount_checked), "input_count",
		rg_json(&c->ni_inputs), "output_count", rg_json(&c->ni_outputs), "layer_count",
		rg_json(&c->ni_layers), "operation_count", rg_json(&c->ni_opcount),
		"memory_pool_bytes", rg_json(&c->mem_pool));
}

char *nbg_corpus_json(const nbg_corpus *c)
{
	json_t *fails = json_object(), *notes = json_object();
	for (int k = 1; k < NBG_E__COUNT; k++)
		if (c->fail_by_code[k])
			json_object_set_new(fails, nbg_code_name((nbg_code)k),
					    json_integer(JI(c->fail_by_code[k])));
	for (size_t i = 0; i < c->note_kinds; i++)
		json_object_set_new(notes, c->notes[i].id, json_integer(JI(c->notes[i].n)));
	json_t *root = json_pack(
		"{s:s,s:I,s:I,s:I,s:I,s:o,s:o,s:o,s:o}", "nbgkit_version", NBG_VERSION_STRING,
		"files", JI(c->files), "valid", JI(c->valid), "unreadable", JI(c->unreadable),
		"bytes", JI(c->bytes), "invalid_by_code", fails, "families",
		vs_json(&c->family, NULL), "versions", vs_json(&c->version, nbg_corpus_hex_name),
		"targets", vs_json(&c->target, nbg_corpus_hex_name));
	if (!root)
		return NULL;
	json_object_set_new(root, "v2", v2_json(c));
	json_object_set_new(root, "v1",
			    json_pack("{s:I,s:o,s:o,s:o}", "files", JI(c->v1_files),
				      "entry_counts", vs_json(&c->v1_entry_count, NULL),
				      "io_strides", vs_json(&c->v1_io_stride, NULL),
				      "crc_sum_findings",
				      vs_json(&c->crc_finding, nbg_corpus_finding_name)));
	json_object_set_new(root, "io_records",
			    json_pack("{s:I,s:o,s:o,s:o,s:o}", "count", JI(c->io_records),
				      "data_formats", vs_json(&c->io_format, nbg_corpus_format_name),
				      "quantization", vs_json(&c->io_quant, nbg_corpus_quant_name),
				      "data_types", vs_json(&c->io_type, NULL), "dimension_counts",
				      vs_json(&c->io_dim_count, NULL)));
	json_object_set_new(root, "connection_tails",
			    json_pack("{s:I,s:o}", "distinct_sha256", JI(c->tails.count),
				      "coverage", vs_json(&c->tail_cover, nbg_corpus_cover_name)));
	json_object_set_new(root, "notes", notes);
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}
