/*
 * report_json.c - the JSON report: one document per file, keys are the
 * seed's parser keys, taken from the field map wherever a field is read
 * straight from the file.
 */
#include <stdio.h>
#include <stdlib.h>

#include "report.h"

void nbg_json_set_path(json_t *obj, const char *key, json_t *v)
{
	const char *dot;

	while ((dot = strchr(key, '.')) != NULL) {
		char part[64];
		size_t n = (size_t)(dot - key);
		json_t *child;

		if (n >= sizeof(part))
			n = sizeof(part) - 1;
		memcpy(part, key, n);
		part[n] = '\0';
		child = json_object_get(obj, part);
		if (!json_is_object(child)) {
			child = json_object();
			json_object_set_new(obj, part, child);
		}
		obj = child;
		key = dot + 1;
	}
	json_object_set_new(obj, key, v);
}

char *nbg_text_escape(const char *s, size_t max)
{
	size_t n = strnlen(s, max), o = 0;
	char *buf = malloc(4 * n + 1);

	if (!buf)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			buf[o++] = (char)ch;
		else
			o += (size_t)snprintf(buf + o, 5, "\\x%02x", ch);
	}
	buf[o] = '\0';
	return buf;
}

/* Text from the file as JSON: printable ASCII kept, anything else \xNN. */
json_t *nbg_json_text(const char *s, size_t max)
{
	char *e = nbg_text_escape(s, max);
	json_t *j = e ? json_string(e) : NULL;
	free(e);
	return j ? j : json_null();
}

json_t *nbg_json_str(const char *s)
{
	json_t *j;

	if (!s)
		return json_null();
	if ((j = json_string(s)) != NULL)
		return j;
	return nbg_json_text(s, SIZE_MAX);
}

json_t *nbg_json_sha(const uint8_t d[32])
{
	char hex[65];
	nbg_hex32(d, hex);
	return json_string(hex);
}

void nbg_json_emit_fields(json_t *obj, const uint8_t *base, enum nbg_fid first,
			  enum nbg_fid last, uint32_t shift_after, enum nbg_fid shift_from)
{
	for (int id = (int)first; id <= (int)last; id++) {
		const nbg_field *f = nbg_fid_desc((enum nbg_fid)id);
		uint32_t shift = (shift_after && id >= (int)shift_from) ? shift_after : 0;
		const uint8_t *p = base + f->offset + shift;
		json_t *v = NULL;

		switch (f->kind) {
		case NBG_FIELD_U32:
		case NBG_FIELD_BITS:
		case NBG_FIELD_U8:
			v = json_integer(nbg_fid_u32_at(base, (enum nbg_fid)id, shift));
			break;
		case NBG_FIELD_I32:
			v = json_integer((int32_t)le32(p));
			break;
		case NBG_FIELD_LO:
			v = json_integer((json_int_t)((uint64_t)le32(p) |
						      ((uint64_t)le32(p + 4) << 32)));
			break;
		case NBG_FIELD_HI:
			continue; /* emitted with its low half */
		case NBG_FIELD_ASCII: {
			char tmp[65];
			uint32_t n = f->width < 64 ? f->width : 64;
			memcpy(tmp, p, n);
			tmp[n] = '\0';
			v = nbg_json_text(tmp, n);
			break;
		}
		case NBG_FIELD_U32_ARRAY:
			v = json_array();
			for (uint32_t w = 0; w < f->width / 4; w++)
				json_array_append_new(v, json_integer(le32(p + 4 * w)));
			break;
		case NBG_FIELD_OPAQUE: {
			uint8_t d[32];
			unsigned nz = 0;
			for (uint32_t w = 0; w < f->width / 4; w++)
				nz += le32(p + 4 * w) != 0;
			nbg_sha256(p, f->width, d);
			v = json_pack("{s:I,s:I,s:o}", "bytes", (json_int_t)f->width,
				      "nonzero_words", (json_int_t)nz, "sha256", nbg_json_sha(d));
			break;
		}
		}
		if (f->alias)
			nbg_json_set_path(obj, f->alias, json_deep_copy(v));
		nbg_json_set_path(obj, f->key, v);
	}
}

static json_t *hex32(uint32_t v)
{
	char b[16];
	snprintf(b, sizeof(b), "0x%08x", v);
	return json_string(b);
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *nbg_json_io(const nbg_io *io)
{
	json_t *o = json_object(), *outer = json_array(), *q;

	json_object_set_new(o, "index", json_integer(io->index));
	json_object_set_new(o, "record_offset", json_integer((json_int_t)io->offset));
	json_object_set_new(o, "record_size", json_integer(io->record_size));
	json_object_set_new(o, "dimension_count", json_integer(io->dim_count));
	json_t *dims = json_array();
	for (uint32_t d = 0; d < io->dim_count; d++) {
		json_array_append_new(dims, json_integer(io->dims[d]));
		json_array_append_new(outer, json_integer(nbg_io_dim_outer(io, d)));
	}
	json_object_set_new(o, "dimensions", dims);
	json_object_set_new(o, "dimensions_outermost_first", outer);
	json_object_set_new(o, "data_format", json_integer(io->data_format));
	json_object_set_new(o, "data_format_name", str_or_null(nbg_data_format_name(io->data_format)));
	json_object_set_new(o, "data_type", json_integer(io->data_type));
	json_object_set_new(o, "data_type_name", str_or_null(nbg_data_type_name(io->data_type)));

	q = json_object();
	json_object_set_new(q, "format", json_integer(io->quant_format));
	json_object_set_new(q, "format_name", str_or_null(nbg_quant_format_name(io->quant_format)));
	json_t *raw = json_array();
	for (unsigned i = 0; i < io->quant_raw_count; i++)
		json_array_append_new(raw, json_integer(io->quant_raw[i]));
	json_object_set_new(q, "raw_words", raw);
	switch (io->quant_format) {
	case NBG_QUANT_NONE:
		json_object_set_new(q, "interpretation", json_string("none"));
		break;
	case NBG_QUANT_DFP:
		json_object_set_new(q, "interpretation", json_string("dynamic_fixed_point"));
		json_object_set_new(q, "fixed_point_position", json_integer(io->fixed_point_pos));
		break;
	case NBG_QUANT_AFFINE:
		json_object_set_new(q, "interpretation", json_string("affine"));
		json_object_set_new(q, "scale", json_real(io->scale));
		json_object_set_new(q, "zero_point", json_integer(io->zero_point));
		break;
	default:
		json_object_set_new(q, "interpretation", json_string("unknown"));
		break;
	}
	json_object_set_new(o, "quantization", q);
	json_object_set_new(o, "element_count", io->byte_size_known || io->element_count
				? json_integer((json_int_t)io->element_count) : json_null());
	json_object_set_new(o, "byte_size", io->byte_size_known
				? json_integer((json_int_t)io->byte_size) : json_null());
	json_object_set_new(o, "name", io->has_name ? nbg_json_text(io->name, 64) : json_null());
	return o;
}

json_t *nbg_json_section(const nbg_model *m, const nbg_section *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "index", json_integer(s->index));
	json_object_set_new(o, "record_offset", json_integer((json_int_t)s->record_offset));
	if (m->family == 2) {
		nbg_json_emit_fields(o, m->data + s->record_offset, F_SEC_TYPE, F_SEC_RESERVED2, 0,
				     F_SEC_TYPE);
		/* reserved_words[0]/[1] read better as an array */
		json_object_del(o, "reserved_words[0]");
		json_object_del(o, "reserved_words[1]");
		json_object_set_new(o, "reserved_words",
				    json_pack("[I,I]", (json_int_t)s->reserved[0],
					      (json_int_t)s->reserved[1]));
	} else {
		json_object_set_new(o, "type", json_integer(s->type));
		json_object_set_new(o, "offset", json_integer((json_int_t)s->offset));
		json_object_set_new(o, "size", json_integer((json_int_t)s->size));
		json_object_set_new(o, "stride", s->entry_size ? json_integer(s->entry_size)
							       : json_null());
	}
	json_object_set_new(o, "type_name", str_or_null(nbg_section_type_name(s->type)));
	json_object_set_new(o, "end", json_integer((json_int_t)(s->offset + s->size)));
	json_object_set_new(o, "class", json_string(nbg_section_class_name(s->cls)));
	json_object_set_new(o, "crc32", json_integer(s->crc32));
	json_object_set_new(o, "sha256", nbg_json_sha(s->sha256));
	if (s->has_checksum_record)
		json_object_set_new(o, "checksum",
				    json_pack("{s:I,s:I,s:b}", "stored",
					      (json_int_t)s->stored_checksum, "computed",
					      (json_int_t)s->crc32, "matches",
					      s->stored_checksum == s->crc32));
	return o;
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
	nbg_json_emit_fields(sub, d + m->sub_header_offset, F_SUB_SH_OFFSET, F_SUB_SH_COUNT, 0,
			     F_SUB_SH_OFFSET);
	json_object_set_new(root, "sub_header", sub);

	if (m->network_info.present) {
		const nbg_network_info *ni = &m->network_info;
		nbg_json_emit_fields(root, d + ni->offset, F_NI_NAME, F_NI_VSI_RESERVED, 0,
				     F_NI_NAME);
		nbg_json_set_path(root, "attribute_bits.nn_command_bytes",
				  ni->nn_command_bytes ? json_integer(ni->nn_command_bytes)
						       : json_null());
		nbg_json_set_path(root, "attribute_bits.tp_command_bytes",
				  ni->tp_command_bytes ? json_integer(ni->tp_command_bytes)
						       : json_null());
	} else {
		json_object_set_new(root, "network_info", json_null());
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

static json_t *report_object(const nbg_model *m, const char *path)
{
	json_t *root = json_object(), *arr;
	char ver[16];

	json_object_set_new(root, "nbgkit_version", json_string(NBG_VERSION_STRING));
	json_object_set_new(root, "path", nbg_json_str(path));
	json_object_set_new(root, "valid", json_true());
	json_object_set_new(root, "family", json_integer(m->family));
	json_object_set_new(root, "magic", json_string("VPMN"));
	json_object_set_new(root, "version", json_integer(m->version));
	snprintf(ver, sizeof(ver), "0x%08x", m->version);
	json_object_set_new(root, "version_hex", json_string(ver));
	json_object_set_new(root, "target", json_integer(m->target));
	json_object_set_new(root, "product", json_integer(m->target));
	json_object_set_new(root, "file_size", json_integer((json_int_t)m->file_size));
	json_object_set_new(root, "sha256", nbg_json_sha(m->file_sha256));

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

char *nbg_report_json(const nbg_model *m, const char *path)
{
	json_t *root = report_object(m, path);
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}

char *nbg_error_json(const nbg_error *err, const char *path)
{
	json_t *root = json_pack("{s:s,s:o,s:b,s:{s:s,s:I,s:s,s:s}}", "nbgkit_version",
				 NBG_VERSION_STRING, "path",
				 nbg_json_str(path), "valid", 0, "error",
				 "code", nbg_code_name(err->code) ? nbg_code_name(err->code) : "io",
				 "offset", (json_int_t)err->offset, "field", err->field,
				 "message", err->message);
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}
