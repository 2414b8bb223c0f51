/*
 * report_json_v1.c - the v1 part of the JSON report: a "v1" object with the
 * prefix fields under their field-map keys, the decoded feature database,
 * the memory block, the entry table's count and strides, the nbg_crc_sum
 * finding and the unreferenced bytes; plus the top-level keys v1 and v2
 * reports share where the meaning is shared.
 */
#include <stdio.h>

#include "report/report_internal.h"

static json_t *sha_or_null(uint64_t size, const uint8_t d[32])
{
	return size ? nbg_json_sha(d) : json_null();
}

static json_t *stride_or_null(uint32_t stride)
{
	return stride ? json_integer(stride) : json_null();
}

static json_t *json_feature_db(const nbg_model *m)
{
	const nbg_v1_info *v1 = &m->v1;
	const uint8_t *f = m->data + v1->feature_db_offset;
	json_t *holder = json_object(), *fdb;

	/* Keys are "feature_db.*" in the field map: emit into a holder, take the object. */
	nbg_json_emit_fields(holder, f, F_V1_FDB_WORD0, F_V1_FDB_TP_CORES, 0, F_V1_FDB_WORD0);
	fdb = json_incref(json_object_get(holder, "feature_db"));
	json_decref(holder);
	if (!fdb)
		fdb = json_object();
	json_object_set_new(fdb, "offset", json_integer((json_int_t)v1->feature_db_offset));
	json_object_set_new(fdb, "size", json_integer(256));
	json_object_set_new(fdb, "nn_command_bytes", v1->nn_command_bytes
				? json_integer(v1->nn_command_bytes) : json_null());
	json_object_set_new(fdb, "tp_command_bytes", v1->tp_command_bytes
				? json_integer(v1->tp_command_bytes) : json_null());
	json_object_set_new(fdb, "sha256", nbg_json_sha(v1->feature_db_sha256));
	return fdb;
}

static json_t *json_crc_sum(const nbg_v1_info *v1)
{
	char stored[16], computed[16];

	if (!v1->has_crc_sum)
		return json_null();
	snprintf(stored, sizeof(stored), "0x%08x", v1->crc_sum);
	snprintf(computed, sizeof(computed), "0x%08x", v1->crc_sum_computed);
	return json_pack("{s:I,s:I,s:s,s:I,s:s,s:s,s:s?,s:b,s:I,s:I,s:I,s:s}", "offset",
			 (json_int_t)(v1->feature_db_offset +
				      nbg_fid_desc(F_V1_FDB_CRC_SUM)->offset),
			 "stored", (json_int_t)v1->crc_sum, "stored_hex", stored, "computed",
			 (json_int_t)v1->crc_sum_computed, "computed_hex", computed, "algorithm",
			 v1->crc_sum_from ? "crc32-ieee from the first section to the end of the file"
					  : "crc32-ieee over the whole file, this word read as zero",
			 "rule", v1->crc_sum_rule, "enforced", v1->crc_sum_enforced,
			 "covered_from", (json_int_t)v1->crc_sum_from, "whole_file",
			 (json_int_t)v1->crc_sum_whole_file, "from_first_section",
			 (json_int_t)v1->crc_sum_from_first_section, "finding",
			 v1->crc_sum_finding ? v1->crc_sum_finding : "zero");
}

void nbg_json_v1(json_t *root, const nbg_model *m)
{
	const nbg_v1_info *v1 = &m->v1;
	const nbg_memory *mem = &m->memory;
	const uint8_t *d = m->data;
	json_t *o = json_object(), *mb = json_object(), *strides, *unref;

	/* Shared with v2 reports: same keys, same meaning. */
	nbg_json_emit_fields(root, d, F_V1_NAME, F_V1_OUTPUT_COUNT, 0, F_V1_NAME);
	json_object_set_new(root, "memory_pool_bytes",
			    json_integer((json_int_t)mem->memory_pool_bytes));
	json_object_set_new(root, "vip_sram_bytes", mem->has_vip_sram
				? json_integer(mem->vip_sram_bytes) : json_null());
	json_object_set_new(root, "axi_sram_bytes", json_integer(mem->axi_sram_bytes));

	nbg_json_emit_fields(o, d, F_V1_MAGIC, F_V1_OUTPUT_COUNT, 0, F_V1_MAGIC);
	json_object_set_new(o, "feature_db", v1->has_feature_db ? json_feature_db(m) : json_null());

	/* memory block: "memory_pool.*", "axi_sram.*", "vip_sram.*" keys */
	nbg_json_emit_fields(mb, d + v1->memory_offset, F_V1_POOL_SIZE,
			     v1->has_vip_sram ? F_V1_VIP_SIZE : F_V1_AXI_SIZE, 0, F_V1_POOL_SIZE);
	if (!v1->has_vip_sram)
		json_object_set_new(mb, "vip_sram", json_null());
	json_object_set_new(mb, "offset", json_integer((json_int_t)v1->memory_offset));
	json_object_set_new(o, "memory", mb);

	json_object_set_new(o, "entries_offset", json_integer((json_int_t)v1->entries_offset));
	json_object_set_new(o, "entry_count", json_integer(v1->entry_count));
	json_object_set_new(o, "entry_count_derived", json_boolean(v1->entry_count_derived));
	json_object_set_new(o, "entry_count_source", json_string(v1->entry_count_derived
				? "derived from the input table offset" : "measured for this version"));
	json_object_set_new(o, "entry_count_input_rule", json_integer(v1->entry_count_rule));
	json_object_set_new(o, "prefix_end", json_integer((json_int_t)v1->prefix_end));

	strides = json_object();
	json_object_set_new(strides, "io", json_integer(v1->io_stride));
	json_object_set_new(strides, "layer", json_integer(v1->layer_stride));
	json_object_set_new(strides, "operation", json_integer(v1->operation_stride));
	json_object_set_new(strides, "patch", stride_or_null(v1->patch_stride));
	json_object_set_new(strides, "sh", json_integer(v1->sh_stride));
	json_object_set_new(strides, "sw", json_integer(v1->sw_stride));
	json_object_set_new(strides, "patch_from_data", json_boolean(v1->patch_stride_from_data));
	json_object_set_new(strides, "assumed", json_boolean(v1->strides_assumed));
	json_object_set_new(o, "strides", strides);

	json_object_set_new(o, "nbg_crc_sum", json_crc_sum(v1));

	json_object_set_new(o, "opaque_prefix_bytes",
			    json_pack("{s:I,s:I,s:o}", "offset", (json_int_t)v1->opaque_offset,
				      "size", (json_int_t)v1->opaque_size, "sha256",
				      sha_or_null(v1->opaque_size, v1->opaque_sha256)));
	unref = json_pack("{s:I,s:I,s:I,s:o}", "count", (json_int_t)v1->gap_count, "bytes",
			  (json_int_t)v1->gap_bytes, "nonzero_bytes",
			  (json_int_t)v1->gap_nonzero_bytes, "sha256",
			  sha_or_null(v1->gap_bytes, v1->gap_sha256));
	json_object_set_new(o, "gaps_between_sections", unref);
	json_object_set_new(o, "bytes_after_sections",
			    json_pack("{s:I,s:I,s:o}", "offset", (json_int_t)v1->trailer_offset,
				      "size", (json_int_t)v1->trailer_size, "sha256",
				      sha_or_null(v1->trailer_size, v1->trailer_sha256)));
	json_object_set_new(root, "v1", o);
}
