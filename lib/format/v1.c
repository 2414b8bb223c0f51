/*
 * parse_v1.c - NBG v1 (versions 0x0001xxxx): the fixed header, the feature
 * database (from 0x10003), the memory requirements, the version-gated table
 * of (offset, size) entries, record strides against the header counts, the
 * I/O records, the nbg_crc_sum finding and the bytes no entry references.
 *
 * Order of work, as in parse_v2.c: each fixed structure is checked against
 * the file size before a field inside it is read; the entry count is settled
 * (measured table, or the input-table rule) before any entry is used; every
 * entry range is bounds-checked before any record inside it is read; strides
 * and counts are checked before records are decoded.  doc/format-v1.md gives
 * the reasons and the corpus figures behind every rule here.
 */
#include <stdio.h>
#include <stdlib.h>


#include "common/hash.h"
#include "common/internal.h"
#include "format/checksum.h"
#include "format/records.h"
#include "format/regions.h"

#define V1_HEADER_SIZE 92u     /* magic .. output_count */
#define V1_FEATURE_DB_SIZE 256u
#define V1_MEMORY_SIZE 20u     /* pool size, alignment, base; AXI-SRAM base, size */
#define V1_VIP_SRAM_SIZE 8u    /* VIP-SRAM base, size */
#define V1_ENTRY_SIZE 8u
#define V1_ENTRY_MIN 12u       /* the twelve tables every version has */
#define V1_ENTRY_MAX 34u       /* v2 types 1..34; 35 and up are v2-only structures */

#define V1_FEATURE_DB_FROM 0x10003u
#define V1_VIP_SRAM_FROM 0x10008u
#define V1_CRC_SUM_FROM 0x10016u /* the word is named nbg_crc_sum from here on */
#define V1_NEWEST_KNOWN 0x1001Fu /* newest version whose record layouts are known */

/* Entries that hold records; entry i names v2 section type i + 1. */
enum {
	E_INPUT = 0, E_OUTPUT = 1, E_LAYER = 2, E_OPERATIONS = 3, E_SH = 8, E_PATCH = 9,
	E_SW = 11,
};

/* Entry counts measured on real files (doc/format-v1.md); 0: no sample. */
static uint32_t measured_entry_count(uint32_t v)
{
	if (v >= 0x10003u && v < 0x1000Cu)
		return 12;
	switch (v) {
	case 0x1000Cu: return 15;
	case 0x1000Eu: return 16;
	case 0x1000Fu: return 17;
	case 0x10014u: return 18;
	case 0x1001Eu: return 27;
	default: return 0;
	}
}

/* Record strides by version.  The patch stride of 0x10010-0x10013 (between
 * the last 28-byte sample and the first 40-byte one) is left 0 here and
 * decided from the records by choose_patch_stride(). */
static void set_strides(nbg_v1_info *v1, uint32_t v)
{
	if (v > V1_NEWEST_KNOWN)
		v = V1_NEWEST_KNOWN;
	v1->io_stride = v < 0x10004u ? 44 : v < 0x1000Bu ? 108 : 116;
	v1->layer_stride = v < 0x10008u ? 72 : 76;
	v1->operation_stride = v < 0x10011u ? 24 : v < 0x10017u ? 28 : 32;
	v1->patch_stride = v < 0x10006u ? 24 : v < 0x10010u ? 28 : v < 0x10014u ? 0 : 40;
	v1->sh_stride = v < 0x1000Eu ? 4 : 8;
	v1->sw_stride = v < 0x10009u ? 4 : 68;
}

/* Every record read with `stride` looks like a patch record: type 0 or 1,
 * source_type below 16, and for 40-byte records the three high-half words
 * (used only with 40-bit addresses) zero.  On the corpus the true stride
 * passes on every record and a wrong one fails on most of them. */
static bool patch_records_plausible(const uint8_t *p, uint64_t size, uint32_t stride)
{
	const nbg_field *hi = nbg_fid_desc(F_V1PATCH_HIGH_WORDS);

	for (uint64_t k = 0; k + stride <= size; k += stride) {
		const uint8_t *r = p + k;
		if (nbg_fid_u32(r, F_V1PATCH_TYPE) > 1 || nbg_fid_u32(r, F_V1PATCH_SOURCE_TYPE) > 15)
			return false;
		if (stride >= hi->offset + hi->width)
			for (uint32_t w = 0; w < hi->width / 4; w++)
				if (le32(r + hi->offset + 4 * w))
					return false;
	}
	return true;
}

/* 0x10010-0x10013: 28 or 40.  A candidate must divide the table; if both do,
 * the records decide; if they cannot, the stride stays 0 (undecided). */
static nbg_code choose_patch_stride(nbg_ctx *c, const nbg_section *s)
{
	nbg_v1_info *v1 = &c->m->v1;
	static const uint32_t cand[2] = { 28, 40 };
	uint32_t fits[2], nfit = 0, plausible = 0, pick = 0;

	v1->patch_stride_from_data = 1;
	if (s->size == 0)
		return NBG_OK;
	for (int i = 0; i < 2; i++)
		if (s->size % cand[i] == 0)
			fits[nfit++] = cand[i];
	if (nfit == 0)
		return nbg_fail(c, NBG_E_V1_RECORD_STRIDE, s->record_offset + 4, "size",
				"the PATCH table is %llu bytes, a multiple of neither 28 nor 40 "
				"(the two patch strides version 0x%05x may use)",
				(unsigned long long)s->size, c->m->version);
	for (uint32_t i = 0; i < nfit; i++)
		if (patch_records_plausible(c->data + s->offset, s->size, fits[i])) {
			plausible++;
			pick = fits[i];
		}
	if (nfit == 1 && plausible == 0)
		pick = fits[0]; /* only one stride divides: take it, say the records look odd */
	if (pick && (nfit == 1 || plausible == 1)) {
		v1->patch_stride = pick;
		nbg_note_add(c, "v1-patch-stride-from-data", s->record_offset + 4,
			     "patch stride %u chosen from the table (%s) for version 0x%05x, "
			     "which has no sample", pick,
			     nfit == 1 ? (plausible ? "only divisor" : "only divisor; records "
						      "unlike every sample") :
					 "both divide; records decide", c->m->version);
		return NBG_OK;
	}
	nbg_note_add(c, "v1-patch-stride-undecided", s->record_offset + 4,
		     "the %llu-byte PATCH table fits both 28- and 40-byte records and its "
		     "contents do not decide; stride left unknown",
		     (unsigned long long)s->size);
	return NBG_OK;
}

/* Reads the fixed header, feature database and memory block (sizes checked). */
static nbg_code parse_prefix(nbg_ctx *c)
{
	nbg_model *m = c->m;
	nbg_v1_info *v1 = &m->v1;
	const uint8_t *d = c->data;
	uint64_t pos = V1_HEADER_SIZE;

	if (c->size < V1_HEADER_SIZE)
		return nbg_fail(c, NBG_E_TRUNCATED, 0, "header",
				"the file is %llu bytes; the v1 header needs %u",
				(unsigned long long)c->size, V1_HEADER_SIZE);
	memcpy(v1->network_name, d + nbg_fid_desc(F_V1_NAME)->offset, 64);
	v1->network_name[64] = '\0';
	v1->layer_count = nbg_fid_u32(d, F_V1_LAYER_COUNT);
	v1->operation_count = nbg_fid_u32(d, F_V1_OP_COUNT);
	v1->input_count = nbg_fid_u32(d, F_V1_INPUT_COUNT);
	v1->output_count = nbg_fid_u32(d, F_V1_OUTPUT_COUNT);

	if (m->version >= V1_FEATURE_DB_FROM) {
		const uint8_t *f = d + pos;
		if (!range_ok(pos, V1_FEATURE_DB_SIZE, c->size))
			return nbg_fail(c, NBG_E_TRUNCATED, pos, "feature_db",
					"the feature database at %llu needs %u bytes; the file "
					"has %llu", (unsigned long long)pos, V1_FEATURE_DB_SIZE,
					(unsigned long long)c->size);
		v1->has_feature_db = 1;
		v1->feature_db_offset = pos;
		v1->feature_word0 = nbg_fid_u32(f, F_V1_FDB_WORD0);
		v1->nn_command_size_code = nbg_fid_u32(f, F_V1_FDB_NN_CMD);
		v1->nn_command_bytes = v1->nn_command_size_code == 0 ? 128
				     : v1->nn_command_size_code == 1 ? 192 : 0;
		v1->change_ppu_param = nbg_fid_u32(f, F_V1_FDB_PPU);
		v1->tp_command_size_code = nbg_fid_u32(f, F_V1_FDB_TP_CMD);
		v1->tp_command_bytes = v1->tp_command_size_code == 0 ? 128
				     : v1->tp_command_size_code == 1 ? 192 : 0;
		v1->core_count = nbg_fid_u32(f, F_V1_FDB_CORE_COUNT);
		v1->axi_bus_width_index = nbg_fid_u32(f, F_V1_FDB_AXI_WIDTH);
		v1->nn_core_count = nbg_fid_u32(f, F_V1_FDB_NN_CORES);
		v1->tp_core_count = nbg_fid_u32(f, F_V1_FDB_TP_CORES);
		pos += V1_FEATURE_DB_SIZE; /* fingerprinted once the structure passed */
	} else {
		nbg_note_add(c, "v1-no-feature-db", 4,
			     "version 0x%05x predates the feature database (0x10003); none "
			     "decoded", m->version);
	}

	uint32_t mem_size = V1_MEMORY_SIZE;
	if (m->version >= V1_VIP_SRAM_FROM)
		mem_size += V1_VIP_SRAM_SIZE;
	if (!range_ok(pos, mem_size, c->size))
		return nbg_fail(c, NBG_E_TRUNCATED, pos, "memory_pool",
				"the memory block at %llu needs %u bytes; the file has %llu",
				(unsigned long long)pos, mem_size, (unsigned long long)c->size);
	const uint8_t *mp = d + pos;
	nbg_memory *mem = &m->memory;
	v1->memory_offset = pos;
	mem->has_memory_pool = 1;
	mem->memory_pool_bytes = nbg_fid_u32(mp, F_V1_POOL_SIZE);
	mem->memory_pool_alignment = nbg_fid_u32(mp, F_V1_POOL_ALIGN);
	mem->memory_pool_base = nbg_fid_u32(mp, F_V1_POOL_BASE);
	mem->has_axi_sram = 1;
	mem->axi_sram_base = nbg_fid_u32(mp, F_V1_AXI_BASE);
	mem->axi_sram_bytes = nbg_fid_u32(mp, F_V1_AXI_SIZE);
	if (m->version >= V1_VIP_SRAM_FROM) {
		v1->has_vip_sram = 1;
		mem->has_vip_sram = 1;
		mem->vip_sram_base = nbg_fid_u32(mp, F_V1_VIP_BASE);
		mem->vip_sram_bytes = nbg_fid_u32(mp, F_V1_VIP_SIZE);
	}
	v1->entries_offset = pos + mem_size;
	return NBG_OK;
}

/* Settles the entry count: measured versions must agree with the input-table
 * rule; other versions take it from the rule, clamped to 34 entries. */
static nbg_code settle_entry_count(nbg_ctx *c)
{
	nbg_model *m = c->m;
	nbg_v1_info *v1 = &m->v1;
	uint64_t es = v1->entries_offset;
	uint32_t measured = measured_entry_count(m->version);
	uint64_t input_offset, span;

	if (!range_ok(es, V1_ENTRY_SIZE, c->size))
		return nbg_fail(c, NBG_E_TRUNCATED, es, "entries",
				"the entry table at %llu needs at least one 8-byte entry; the "
				"file has %llu", (unsigned long long)es,
				(unsigned long long)c->size);
	input_offset = nbg_fid_u32(c->data + es, F_V1_ENTRY_OFFSET);
	span = input_offset >= es ? input_offset - es : 0;
	v1->entry_count_rule = span % V1_ENTRY_SIZE ? 0 : (uint32_t)(span / V1_ENTRY_SIZE);

	if (measured) {
		if (!range_ok(es, (uint64_t)measured * V1_ENTRY_SIZE, c->size))
			return nbg_fail(c, NBG_E_TRUNCATED, es, "entries",
					"version 0x%05x has %u entries (%u bytes at %llu); the file "
					"has %llu bytes", m->version, measured,
					measured * V1_ENTRY_SIZE, (unsigned long long)es,
					(unsigned long long)c->size);
		if (input_offset != es + (uint64_t)measured * V1_ENTRY_SIZE)
			return nbg_fail(c, NBG_E_V1_ENTRY_COUNT, es, "offset",
					"version 0x%05x has %u entries, so the input table should "
					"begin at %llu, right after them; entry 0 says %llu",
					m->version, measured,
					(unsigned long long)(es + (uint64_t)measured * V1_ENTRY_SIZE),
					(unsigned long long)input_offset);
		v1->entry_count = measured;
		v1->prefix_end = es + (uint64_t)measured * V1_ENTRY_SIZE;
		return NBG_OK;
	}

	/* No sample of this version: the input table is taken to begin right after
	 * the last entry, as it does in every file of every measured version. */
	if (input_offset < es + (uint64_t)V1_ENTRY_MIN * V1_ENTRY_SIZE || span % V1_ENTRY_SIZE)
		return nbg_fail(c, NBG_E_V1_ENTRY_COUNT, es, "offset",
				"version 0x%05x has no sample, so its entry count comes from where "
				"the input table begins; entry 0 says %llu, which is not %u or "
				"more whole 8-byte entries after %llu",
				m->version, (unsigned long long)input_offset, V1_ENTRY_MIN,
				(unsigned long long)es);
	uint64_t n = span / V1_ENTRY_SIZE;
	if (n > V1_ENTRY_MAX)
		n = V1_ENTRY_MAX;
	if (!range_ok(es, span, c->size))
		return nbg_fail(c, NBG_E_TRUNCATED, es, "entries",
				"the entry table at %llu runs to the input table at %llu; the "
				"file has %llu bytes", (unsigned long long)es,
				(unsigned long long)input_offset, (unsigned long long)c->size);
	v1->entry_count = (uint32_t)n;
	v1->entry_count_derived = 1;
	v1->prefix_end = es + n * V1_ENTRY_SIZE;
	nbg_note_add(c, "v1-entry-count-derived", es,
		     "version 0x%05x has no sample: %u entries derived from the input table "
		     "at %llu%s", m->version, v1->entry_count, (unsigned long long)input_offset,
		     span / V1_ENTRY_SIZE > V1_ENTRY_MAX ? " (clamped to 34; the rest kept opaque)"
							: "");
	return NBG_OK;
}

static nbg_code read_entries(nbg_ctx *c)
{
	nbg_model *m = c->m;
	nbg_v1_info *v1 = &m->v1;

	m->section_count = v1->entry_count;
	m->sections = calloc(v1->entry_count, sizeof(nbg_section));
	if (!m->sections)
		return nbg_fail(c, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	for (uint32_t i = 0; i < v1->entry_count; i++) {
		uint64_t ro = v1->entries_offset + (uint64_t)i * V1_ENTRY_SIZE;
		const uint8_t *r = c->data + ro;
		nbg_section *s = &m->sections[i];
		uint64_t end;

		s->index = i;
		s->type = i + 1;
		s->record_offset = ro;
		s->offset = nbg_fid_u32(r, F_V1_ENTRY_OFFSET);
		s->size = nbg_fid_u32(r, F_V1_ENTRY_SIZE);
		s->cls = (i == E_INPUT || i == E_OUTPUT) ? NBG_CLASS_DECODED : NBG_CLASS_OPAQUE;
		if (add_overflow_u64(s->offset, s->size, &end) || end > c->size)
			return nbg_fail(c, NBG_E_V1_ENTRY_OUT_OF_BOUNDS, ro, "offset",
					"entry %u (%s) [offset %llu, size %llu] reaches past the end "
					"of the %llu-byte file", i, nbg_section_type_name(s->type),
					(unsigned long long)s->offset, (unsigned long long)s->size,
					(unsigned long long)c->size);
	}
	return NBG_OK;
}

/* One record table: size a multiple of the stride and, where the header has a
 * count for it (count_field != F__COUNT), exactly that many records. */
static nbg_code check_table(nbg_ctx *c, uint32_t entry, uint32_t stride, enum nbg_fid count_field)
{
	nbg_section *s = &c->m->sections[entry];
	uint64_t want;

	if (stride == 0)
		return NBG_OK;
	s->entry_size = stride;
	if (s->size % stride)
		return nbg_fail(c, NBG_E_V1_RECORD_STRIDE, s->record_offset + 4, "size",
				"the %s table is %llu bytes, not a multiple of version 0x%05x's "
				"%u-byte record", nbg_section_type_name(s->type),
				(unsigned long long)s->size, c->m->version, stride);
	if (count_field == F__COUNT)
		return NBG_OK;

	const nbg_field *cf = nbg_fid_desc(count_field);
	uint32_t count = nbg_fid_u32(c->data, count_field);
	if (mul_overflow_u64(count, stride, &want) || want != s->size)
		return nbg_fail(c, NBG_E_V1_COUNT_MISMATCH, cf->offset, cf->key,
				"the header's %s is %u but the %s table holds %llu records "
				"(%llu bytes of %u)", cf->key, count,
				nbg_section_type_name(s->type),
				(unsigned long long)(s->size / stride), (unsigned long long)s->size,
				stride);
	return NBG_OK;
}

static nbg_code check_tables(nbg_ctx *c)
{
	nbg_v1_info *v1 = &c->m->v1;
	nbg_code rc;

	if (v1->patch_stride == 0 && (rc = choose_patch_stride(c, &c->m->sections[E_PATCH])))
		return rc;
	if ((rc = check_table(c, E_INPUT, v1->io_stride, F_V1_INPUT_COUNT)) ||
	    (rc = check_table(c, E_OUTPUT, v1->io_stride, F_V1_OUTPUT_COUNT)) ||
	    (rc = check_table(c, E_LAYER, v1->layer_stride, F_V1_LAYER_COUNT)) ||
	    (rc = check_table(c, E_OPERATIONS, v1->operation_stride, F_V1_OP_COUNT)) ||
	    (rc = check_table(c, E_SH, v1->sh_stride, F__COUNT)) ||
	    (rc = check_table(c, E_PATCH, v1->patch_stride, F__COUNT)) ||
	    (rc = check_table(c, E_SW, v1->sw_stride, F__COUNT)))
		return rc;
	return NBG_OK;
}

static nbg_code parse_io(nbg_ctx *c, uint32_t entry, nbg_io **out, size_t *count)
{
	const nbg_section *s = &c->m->sections[entry];
	const char *what = entry == E_INPUT ? "input" : "output";
	uint32_t stride = c->m->v1.io_stride;
	uint32_t max_dims = stride == 116 ? 6 : 4;
	uint32_t shift = (max_dims - 4) * 4; /* fields after the dims move with them */
	const nbg_field *fd = nbg_fid_desc(F_V1IO_DIMS);
	size_t n = (size_t)(s->size / stride);

	*out = calloc(n ? n : 1, sizeof(nbg_io));
	if (!*out)
		return nbg_fail(c, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	*count = n;
	for (size_t i = 0; i < n; i++) {
		uint64_t ro = s->offset + i * stride;
		const uint8_t *r = c->data + ro;
		nbg_io *io = &(*out)[i];

		io->index = (uint32_t)i;
		io->offset = ro;
		io->record_size = stride;
		io->max_dims = max_dims;
		io->dim_count = nbg_fid_u32(r, F_V1IO_DIM_COUNT);
		if (io->dim_count < 1 || io->dim_count > max_dims)
			return nbg_fail(c, NBG_E_IO_DIMENSION_COUNT, ro, "dimension_count",
					"%s %zu declares %u dimensions; %u-byte records hold 1 to %u",
					what, i, io->dim_count, stride, max_dims);
		for (uint32_t d = 0; d < max_dims; d++)
			io->dims[d] = le32(r + fd->offset + 4 * d);
		for (uint32_t d = 0; d < io->dim_count; d++)
			if (io->dims[d] == 0)
				return nbg_fail(c, NBG_E_IO_DIMENSION_ZERO, ro + fd->offset + 4 * d,
						"dimensions",
						"%s %zu dimension %u (file order) is zero", what, i,
						d);
		io->data_format = nbg_fid_u32_at(r, F_V1IO_FORMAT, shift);
		io->data_type = nbg_fid_u32_at(r, F_V1IO_TYPE, shift);
		io->quant_format = nbg_fid_u32_at(r, F_V1IO_QUANT_FORMAT, shift);
		io->quant_raw[0] = nbg_fid_u32_at(r, F_V1IO_FIXED_POINT, shift);
		io->quant_raw[1] = nbg_fid_u32_at(r, F_V1IO_SCALE, shift);
		io->quant_raw[2] = nbg_fid_u32_at(r, F_V1IO_ZERO_POINT, shift);
		io->quant_raw_count = 3;
		io->fixed_point_pos = (int32_t)io->quant_raw[0];
		memcpy(&io->scale, &io->quant_raw[1], 4);
		io->zero_point = (int32_t)io->quant_raw[2];
		if (stride > nbg_fid_desc(F_V1IO_NAME)->offset + shift) {
			io->has_name = 1;
			memcpy(io->name, r + nbg_fid_desc(F_V1IO_NAME)->offset + shift, 64);
			io->name[64] = '\0';
		}
		nbg_io_derive(io);
		if (!nbg_data_format_name(io->data_format))
			nbg_note_add(c, "io-format-unknown", ro + 4 + 4 * max_dims,
				     "%s %zu data format %u is not public; size left unknown", what,
				     i, io->data_format);
		if (!nbg_quant_format_name(io->quant_format))
			nbg_note_add(c, "io-quant-unknown", ro + 12 + 4 * max_dims,
				     "%s %zu quantization format %u is not public; raw words kept",
				     what, i, io->quant_format);
		nbg_note_scale(c, io, ro + nbg_fid_desc(F_V1IO_SCALE)->offset + shift, what, i);
	}
	return NBG_OK;
}

/* The nbg_crc_sum rule of a version, established on every real file of that
 * version seen (doc/format-v1.md): NULL for a version with no rule. */
static const char *crc_sum_rule_of(uint32_t version)
{
	switch (version) {
	case 0x1001Eu: return "whole-file";
	case 0x10020u: return "from-first-section";
	default: return NULL;
	}
}

/* The first byte of the first section that holds bytes (the file's size
 * when none does). */
static uint64_t first_section_offset(const nbg_model *m)
{
	uint64_t first = m->file_size;
	for (size_t i = 0; i < m->section_count; i++)
		if (m->sections[i].size && m->sections[i].offset < first)
			first = m->sections[i].offset;
	return first;
}

/* Feature database word 4 from 0x10016: both known rules computed in one
 * pass over the mapping (the whole file with the word read as zero, and
 * the file from its first section on), the version's rule enforced. */
static nbg_code crc_sum_check(nbg_ctx *c)
{
	nbg_v1_info *v1 = &c->m->v1;
	static const uint8_t zero4[4];
	uint64_t at = v1->feature_db_offset + nbg_fid_desc(F_V1_FDB_CRC_SUM)->offset;
	uint64_t from = first_section_offset(c->m);
	const char *rule;

	if (!v1->has_feature_db || c->m->version < V1_CRC_SUM_FROM)
		return NBG_OK;
	v1->has_crc_sum = 1;
	v1->crc_sum = nbg_fid_u32(c->data + v1->feature_db_offset, F_V1_FDB_CRC_SUM);
	/* A first section that starts inside the word's own bytes leaves the
	 * second rule undefined: it then covers the whole file like the first. */
	if (from < at + 4)
		from = at + 4;
	nbg_crc_range r[4] = { { c->data, at, 0 }, { zero4, 4, 0 },
			       { c->data + at + 4, from - at - 4, 0 },
			       { c->data + from, c->size - from, 0 } };
	nbg_crc32_ranges(r, 4, nbg_second_core_free(c));
	v1->crc_sum_whole_file = nbg_crc32_combine(
		nbg_crc32_combine(nbg_crc32_combine(r[0].crc, r[1].crc, 4), r[2].crc, r[2].n),
		r[3].crc, r[3].n);
	v1->crc_sum_from_first_section = r[3].crc;

	rule = crc_sum_rule_of(c->m->version);
	v1->crc_sum_enforced = rule != NULL;
	if (!rule && v1->crc_sum && v1->crc_sum == v1->crc_sum_whole_file)
		rule = "whole-file";
	else if (!rule && v1->crc_sum && v1->crc_sum == v1->crc_sum_from_first_section)
		rule = "from-first-section";
	v1->crc_sum_rule = rule;
	v1->crc_sum_from = rule && !strcmp(rule, "from-first-section") ? from : 0;
	v1->crc_sum_computed = v1->crc_sum_from ? v1->crc_sum_from_first_section
						: v1->crc_sum_whole_file;
	if (v1->crc_sum == 0) {
		v1->crc_sum_finding = "zero";
		nbg_note_add(c, "v1-crc-sum-zero", at,
			     "nbg_crc_sum is 0 (not filled in): the file carries no checksum, "
			     "only its structure is checked");
	} else if (v1->crc_sum == v1->crc_sum_computed) {
		v1->crc_sum_finding = "match";
		nbg_note_add(c, "v1-crc-sum-match", at,
			     "nbg_crc_sum 0x%08x equals the CRC-32 of %s%s", v1->crc_sum,
			     v1->crc_sum_from ? "the file from its first section on"
					      : "the file with the word read as zero",
			     v1->crc_sum_enforced ? "" : " (no rule is established for this "
							 "version; this one matched)");
	} else if (!v1->crc_sum_enforced) {
		v1->crc_sum_finding = "no-match";
		nbg_note_add(c, "v1-crc-sum-no-match", at,
			     "nbg_crc_sum 0x%08x matches neither known rule (whole file 0x%08x, "
			     "from offset %llu 0x%08x): no rule is established for version "
			     "0x%05x, so it is not checked", v1->crc_sum, v1->crc_sum_whole_file,
			     (unsigned long long)from, v1->crc_sum_from_first_section,
			     c->m->version);
	} else {
		v1->crc_sum_finding = "no-match";
		if (!(c->flags & NBG_PARSE_NO_CRC_CHECK)) {
			nbg_error e;
			return nbg_checksum_failed(c, nbg_v1_crc_sum_error(&e, c->m, at), &e);
		}
	}
	return NBG_OK;
}

static int cmp_range(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Accounts for every byte after the decoded prefix that no entry references:
 * the stretch before the first section (opaque), gaps between sections, and
 * the bytes after the last one.  None gets a name; each is fingerprinted. */
static void unreferenced_bytes(nbg_ctx *c)
{
	nbg_model *m = c->m;
	nbg_v1_info *v1 = &m->v1;
	uint64_t r[V1_ENTRY_MAX][2];
	size_t n = 0;

	for (size_t i = 0; i < m->section_count; i++) {
		const nbg_section *s = &m->sections[i];
		if (s->size == 0)
			continue;
		r[n][0] = s->offset;
		r[n][1] = s->offset + s->size;
		if (s->offset < v1->prefix_end)
			nbg_note_add(c, "v1-entry-in-prefix", s->record_offset,
				     "entry %zu (%s) [%llu, %llu) overlaps the decoded prefix, "
				     "which ends at %llu", i, nbg_section_type_name(s->type),
				     (unsigned long long)r[n][0], (unsigned long long)r[n][1],
				     (unsigned long long)v1->prefix_end);
		n++;
	}
	qsort(r, n, sizeof(r[0]), cmp_range);

	uint64_t first = n ? r[0][0] : c->size;
	if (first > v1->prefix_end) {
		v1->opaque_offset = v1->prefix_end;
		v1->opaque_size = first - v1->prefix_end;
		nbg_region_sha256(c->m, c->data + v1->opaque_offset, v1->opaque_size,
				  v1->opaque_sha256);
		nbg_note_add(c, "v1-opaque-prefix-bytes", v1->opaque_offset,
			     "%llu bytes between the decoded prefix and the first section are "
			     "kept opaque (fingerprinted, not decoded)",
			     (unsigned long long)v1->opaque_size);
	} else {
		v1->opaque_offset = v1->prefix_end;
	}

	/* a context that never began ignores updates and ends all zero */
	nbg_sha256_ctx gap_hash = { 0 };
	if (!(c->m->sha256_skipped & NBG_PARSE_NO_SECTION_SHA256))
		nbg_sha256_begin(&gap_hash);
	uint64_t cur = n ? r[0][0] : c->size, first_nonzero = 0;
	for (size_t i = 0; i < n; i++) {
		if (r[i][0] > cur) {
			const uint8_t *g = c->data + cur;
			uint64_t len = r[i][0] - cur;
			v1->gap_count++;
			v1->gap_bytes += len;
			for (uint64_t k = 0; k < len; k++)
				if (g[k] && !v1->gap_nonzero_bytes++)
					first_nonzero = cur + k;
			nbg_sha256_update(&gap_hash, g, len);
		} else if (r[i][0] < cur) {
			nbg_note_add(c, "v1-entry-overlap", r[i][0],
				     "a section [%llu, %llu) overlaps the one before it, which ends "
				     "at %llu", (unsigned long long)r[i][0],
				     (unsigned long long)r[i][1], (unsigned long long)cur);
		}
		if (r[i][1] > cur)
			cur = r[i][1];
	}
	nbg_sha256_end(&gap_hash, v1->gap_sha256);
	if (v1->gap_nonzero_bytes)
		nbg_note_add(c, "v1-gap-nonzero", first_nonzero,
			     "%llu of the %llu bytes between sections are not zero (zero in every "
			     "corpus file)", (unsigned long long)v1->gap_nonzero_bytes,
			     (unsigned long long)v1->gap_bytes);

	if (cur < v1->prefix_end)
		cur = v1->prefix_end;
	v1->trailer_offset = cur;
	v1->trailer_size = c->size - cur;
	nbg_region_sha256(c->m, c->data + cur, v1->trailer_size, v1->trailer_sha256);
}

nbg_code nbg_parse_v1(nbg_ctx *c)
{
	nbg_model *m = c->m;
	nbg_v1_info *v1 = &m->v1;
	nbg_code rc;

	if ((rc = parse_prefix(c)) || (rc = settle_entry_count(c)) || (rc = read_entries(c)))
		return rc;
	set_strides(v1, m->version);
	if (m->version > V1_NEWEST_KNOWN) {
		v1->strides_assumed = 1;
		nbg_note_add(c, "v1-version-unsampled", 4,
			     "version 0x%05x is newer than every known layout: record strides "
			     "of 0x%05x assumed and checked against the header counts",
			     m->version, V1_NEWEST_KNOWN);
	}
	if ((rc = check_tables(c)) || (rc = nbg_structure_checked(c)))
		return rc;
	/* the CRCs first, beside the whole-file hash thread's OpenSSL load */
	nbg_fingerprint_sections(c);
	if (v1->has_feature_db)
		nbg_region_sha256(m, c->data + v1->feature_db_offset, V1_FEATURE_DB_SIZE,
				  v1->feature_db_sha256);
	if ((rc = parse_io(c, E_INPUT, &m->inputs, &m->input_count)) ||
	    (rc = parse_io(c, E_OUTPUT, &m->outputs, &m->output_count)))
		return rc;
	if ((rc = crc_sum_check(c)))
		return rc;
	unreferenced_bytes(c);
	nbg_class_record_sections(m);
	return NBG_OK;
}
