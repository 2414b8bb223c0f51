/*
 * json_common.c - the parts of the JSON report the v2 and v1 writers share:
 * field-map driven fields, I/O records and section records.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/hash.h"
#include "nbg/memory.h"
#include "report/report_internal.h"

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
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
		/* JSON has no NaN or infinity: null, and the note
		 * io-scale-not-finite says why */
		json_object_set_new(q, "scale", isfinite(io->scale) ? json_real(io->scale)
								  : json_null());
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
	json_object_set_new(o, "aligned_byte_size", io->byte_size_known
				? json_integer((json_int_t)nbg_mem_aligned_buffer(io->byte_size))
				: json_null());
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
	json_object_set_new(o, "name", str_or_null(nbg_section_name(m->family, s->type)));
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
