/*
 * json.c - the JSON report: one document per file, keys are the field map's
 * parser keys wherever a field is read straight from the file.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/hash.h"
#include "nbg/targets.h"
#include "report/report_internal.h"

static json_t *hex32(uint32_t v)
{
	char b[16];
	snprintf(b, sizeof(b), "0x%08x", v);
	return json_string(b);
}

static json_t *json_tail(const nbg_model *m)
{
	const nbg_tail *t = &m->tail;
	static const char *const cover[] = { "none", "uncovered", "partial",
					     "section-covered-view" };

	if (t->cover == NBG_TAIL_NONE)
		return json_null();
	return json_pack("{s:I,s:I,s:o,s:s,s:I,s:b}", "offset", (json_int_t)t->offset, "size",
			 (json_int_t)t->size, "sha256", nbg_json_sha(t->sha256), "coverage",
			 cover[t->cover], "covered_bytes", (json_int_t)t->covered_bytes,
			 "covered_by_section", t->cover == NBG_TAIL_COVERED);
}

static void json_v2(json_t *root, const nbg_model *m)
{
	const uint8_t *d = m->data;
	json_t *hdr = json_object(), *sub = json_object();

	nbg_json_emit_fields(hdr, d, F_HDR_MAGIC, F_HDR_RESERVED3, 0, F_HDR_MAGIC);
	json_object_set_new(root, "header", hdr);
	nbg_json_emit_fields(sub, d + m->header.sub_header_offset, F_SUB_SH_OFFSET, F_SUB_SH_COUNT, 0,
			     F_SUB_SH_OFFSET);
	json_object_set_new(root, "sub_header", sub);

	if (m->network_info.present) {
		const nbg_network_info *ni = &m->network_info;
		nbg_json_emit_fields(root, d + ni->offset, F_NI_NAME, F_NI_VSI_RESERVED, 0,
				     F_NI_NAME);
		/* the name at the key v1 reports use too */
		json_object_set_new(root, "network_name", nbg_json_text(ni->name, 64));
		nbg_json_set_path(root, "attribute_bits.nn_command_bytes",
				  ni->nn_command_bytes ? json_integer(ni->nn_command_bytes)
						       : json_null());
		nbg_json_set_path(root, "attribute_bits.tp_command_bytes",
				  ni->tp_command_bytes ? json_integer(ni->tp_command_bytes)
						       : json_null());
	} else {
		json_object_set_new(root, "network_info", json_null());
		json_object_set_new(root, "network_name", json_null());
	}

	const nbg_memory *mem = &m->memory;
	json_object_set_new(root, "memory_pool_bytes", mem->has_memory_pool
				? json_integer((json_int_t)mem->memory_pool_bytes) : json_null());
	json_object_set_new(root, "vip_sram_bytes", mem->has_vip_sram
				? json_integer(mem->vip_sram_bytes) : json_null());
	json_object_set_new(root, "axi_sram_bytes", mem->has_axi_sram
				? json_integer(mem->axi_sram_bytes) : json_null());

	json_t *cks = json_array();
	for (size_t i = 0; i < m->checksum_record_count; i++) {
		const nbg_checksum_record *r = &m->checksum_records[i];
		json_array_append_new(
			cks, json_pack("{s:I,s:I,s:s?,s:I,s:I,s:b}", "record_offset",
				       (json_int_t)r->offset, "section_type",
				       (json_int_t)r->section_type, "section_type_name",
				       nbg_section_type_name(r->section_type), "stored",
				       (json_int_t)r->stored, "computed", (json_int_t)r->computed,
				       "matches", r->stored == r->computed));
	}
	json_object_set_new(root, "section_checksums", cks);

	const nbg_file_checksum *fc = &m->file_checksum;
	json_object_set_new(
		root, "file_checksum",
		json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:o,s:I,s:o,s:b}", "algorithm",
			  "crc32-ieee", "initial_value", "zero", "scope",
			  "section-payloads-in-directory-order", "covered_section_bytes",
			  (json_int_t)fc->covered_section_bytes, "excluded_alignment_gap_bytes",
			  (json_int_t)fc->excluded_alignment_gap_bytes,
			  "normalized_checksum_value_words",
			  (json_int_t)fc->normalized_checksum_value_words, "recorded_crc32",
			  (json_int_t)fc->recorded, "recorded_crc32_hex", hex32(fc->recorded),
			  "computed_crc32", (json_int_t)fc->computed, "computed_crc32_hex",
			  hex32(fc->computed), "matches", fc->recorded == fc->computed));

	const nbg_dynaio *dy = &m->dynaio;
	if (dy->present) {
		json_t *ents = json_array();
		for (size_t i = 0; i < dy->entry_count; i++)
			json_array_append_new(
				ents, json_pack("{s:I,s:I,s:I,s:I}", "record_offset",
						(json_int_t)dy->entries[i].record_offset, "offset",
						(json_int_t)dy->entries[i].offset, "size",
						(json_int_t)dy->entries[i].size, "file_offset",
						(json_int_t)(dy->region_offset +
							     dy->entries[i].offset)));
		json_object_set_new(
			root, "dynamic_io",
			json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o}", "region_offset",
				  (json_int_t)dy->region_offset, "region_size",
				  (json_int_t)dy->region_size, "table_offset",
				  (json_int_t)dy->table_offset, "table_size",
				  (json_int_t)dy->table_size, "entry_count",
				  (json_int_t)dy->entry_count, "mapped_bytes",
				  (json_int_t)dy->mapped_bytes, "padding_bytes",
				  (json_int_t)dy->padding_bytes, "entries", ents));
	} else {
		json_object_set_new(root, "dynamic_io", json_null());
	}
}

/* "integrity" (nbg_integrity_name), "integrity_detail" (the sentence),
 * and for a model whose checksums failed (parsed without the checks) the
 * "error" a normal parse reports. */
static void json_integrity(json_t *root, const nbg_model *m)
{
	char why[256];
	nbg_error err;

	json_object_set_new(root, "integrity", json_string(nbg_integrity_name(m->integrity)));
	json_object_set_new(root, "integrity_detail",
			    json_string(nbg_integrity_describe(m, why, sizeof(why))));
	if (m->integrity == NBG_INTEGRITY_FAILED && nbg_integrity_failure(m, &err) != NBG_OK)
		json_object_set_new(root, "error",
				    json_pack("{s:s,s:I,s:s,s:s}", "code", nbg_code_name(err.code),
					      "offset", (json_int_t)err.offset, "field", err.field,
					      "message", err.message));
}

static json_t *report_object(const nbg_model *m, const char *path)
{
	json_t *root = json_object(), *arr;
	char ver[16];

	json_object_set_new(root, "nbgkit_version", json_string(NBG_VERSION_STRING));
	json_object_set_new(root, "path", nbg_json_path(path));
	json_object_set_new(root, "valid", json_boolean(m->integrity != NBG_INTEGRITY_FAILED));
	json_object_set_new(root, "family", json_integer(m->family));
	json_object_set_new(root, "magic", json_string("VPMN"));
	json_object_set_new(root, "version", json_integer(m->version));
	snprintf(ver, sizeof(ver), "0x%08x", m->version);
	json_object_set_new(root, "version_hex", json_string(ver));
	json_object_set_new(root, "target", json_integer(m->target));
	/* what public sources name the target (nbg targets); null when none does */
	const nbg_target_info *ti = nbg_target_lookup(m->target);
	json_object_set_new(root, "target_name", nbg_json_str(ti ? ti->config : NULL));
	json_object_set_new(root, "target_soc", nbg_json_str(ti ? ti->soc : NULL));
	json_object_set_new(root, "product", json_integer(m->target));
	json_object_set_new(root, "file_size", json_integer((json_int_t)m->file_size));
	json_object_set_new(root, "sha256", nbg_json_sha(m->file_sha256));
	json_integrity(root, m);

	if (m->family == 2)
		json_v2(root, m);
	else
		nbg_json_v1(root, m);

	arr = json_array();
	for (size_t i = 0; i < m->section_count; i++)
		json_array_append_new(arr, nbg_json_section(m, &m->sections[i]));
	json_object_set_new(root, "sections", arr);
	arr = json_array();
	for (size_t i = 0; i < m->input_count; i++)
		json_array_append_new(arr, nbg_json_io(&m->inputs[i]));
	json_object_set_new(root, "inputs", arr);
	arr = json_array();
	for (size_t i = 0; i < m->output_count; i++)
		json_array_append_new(arr, nbg_json_io(&m->outputs[i]));
	json_object_set_new(root, "outputs", arr);
	json_object_set_new(root, "connection_tail", json_tail(m));
	arr = json_array();
	for (size_t i = 0; i < m->note_count; i++)
		json_array_append_new(arr, json_pack("{s:s,s:I,s:s}", "id", m->notes[i].id,
						     "offset", (json_int_t)m->notes[i].offset,
						     "text", m->notes[i].text));
	json_object_set_new(root, "notes", arr);
	return root;
}

void nbg_report_json_write(nbg_jw *w, const nbg_model *m, const char *path)
{
	nbg_jw_members(w, report_object(m, path));
}

char *nbg_error_json(const nbg_error *err, const char *path)
{
	if (!err)
		return NULL;
	json_t *root = json_pack("{s:s,s:o,s:b,s:{s:s,s:I,s:s,s:s}}", "nbgkit_version",
				 NBG_VERSION_STRING, "path",
				 nbg_json_path(path), "valid", 0, "error",
				 "code", nbg_code_name(err->code) ? nbg_code_name(err->code) : "io",
				 "offset", (json_int_t)err->offset, "field", err->field,
				 "message", err->message);
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}
