/*
 * test_v2_rules.c - every v2 rule: a synthesized file that breaks exactly one
 * rule fails with exactly that code (and the byte offset involved); valid
 * files of several shapes parse with the values they were built with.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "fixture.h"
#include "nbg/nbg.h"

static int codes_hit[NBG_E__COUNT];

static nbg_model *parse_ok(const uint8_t *buf, size_t size)
{
	nbg_model *m = NULL;
	nbg_error err;
	nbg_code rc = nbg_parse(buf, size, NULL, &m, &err);
	if (rc != NBG_OK)
		print_error("unexpected failure %s at %llu: %s\n", nbg_code_name(rc),
			    (unsigned long long)err.offset, err.message);
	assert_int_equal(rc, NBG_OK);
	assert_non_null(m);
	return m;
}

/* Asserts the exact code, and the offset unless want_offset is (uint64_t)-1. */
static void expect_fail(const uint8_t *buf, size_t size, nbg_code want, uint64_t want_offset)
{
	nbg_model *m = (nbg_model *)1;
	nbg_error err;
	nbg_code rc = nbg_parse(buf, size, NULL, &m, &err);
	if (rc != want)
		print_error("wanted %s, got %s: %s\n", nbg_code_name(want), nbg_code_name(rc),
			    err.message);
	assert_int_equal(rc, want);
	assert_null(m);
	assert_int_equal(err.code, want);
	assert_true(strlen(err.message) > 10);
	if (want_offset != (uint64_t)-1)
		assert_int_equal(err.offset, want_offset);
	codes_hit[want] = 1;
}

static uint8_t *build_default(size_t *size)
{
	fx_spec *s = fx_default();
	uint8_t *b = fx_build(s, size);
	fx_free(s);
	return b;
}

static void test_default_valid(void **state)
{
	size_t size;
	uint8_t *b = build_default(&size);
	nbg_model *m = parse_ok(b, size);

	assert_int_equal(nbg_model_family(m), 2);
	assert_int_equal(nbg_model_version(m), 0x00020000);
	assert_int_equal(nbg_model_target(m), 0x1000003b);
	assert_int_equal(nbg_model_section_count(m), 19);
	assert_int_equal(nbg_model_input_count(m), 1);
	assert_int_equal(nbg_model_output_count(m), 2);
	/* input 0: [1,128,128,3] INT16 dfp fl=15 */
	assert_int_equal(nbg_model_input_at(m, 0)->dim_count, 4);
	assert_int_equal(nbg_io_dim_outer(nbg_model_input_at(m, 0), 0), 1);
	assert_int_equal(nbg_io_dim_outer(nbg_model_input_at(m, 0), 3), 3);
	assert_int_equal(nbg_model_input_at(m, 0)->data_format, 5);
	assert_int_equal(nbg_model_input_at(m, 0)->quant_format, NBG_QUANT_DFP);
	assert_int_equal(nbg_model_input_at(m, 0)->fixed_point_pos, 15);
	assert_int_equal(nbg_model_input_at(m, 0)->byte_size, 128 * 128 * 3 * 2);
	assert_string_equal(nbg_model_input_at(m, 0)->name, "input/output[0]");
	assert_int_equal(nbg_model_output_at(m, 1)->data_format, 1);
	assert_int_equal(nbg_model_output_at(m, 1)->quant_raw[0], 0x3f800000);
	assert_int_equal(nbg_model_output_at(m, 1)->byte_size, 896 * 2);
	assert_true(nbg_model_network_info(m)->present);
	assert_string_equal(nbg_model_network_info(m)->name, "nbgkit_sample_NHWC");
	assert_int_equal(nbg_model_network_info(m)->nn_command_bytes, 192);
	assert_int_equal(nbg_model_network_info(m)->tp_command_bytes, 192);
	assert_int_equal(nbg_model_memory(m)->memory_pool_bytes, 648448);
	assert_int_equal(nbg_model_memory(m)->vip_sram_bytes, 262144);
	assert_false(nbg_model_memory(m)->has_axi_sram);
	/* checksum records: NN, COEF_DATA, PPU_INSTR, LOADSTATE */
	assert_int_equal(nbg_model_checksum_record_count(m), 4);
	for (size_t i = 0; i < nbg_model_checksum_record_count(m); i++) {
		const nbg_checksum_record *r = nbg_model_checksum_record_at(m, i);
		const nbg_section *s = nbg_model_section(m, r->section_type);
		assert_non_null(s);
		assert_int_equal(r->stored, (uint32_t)crc32(0, b + s->offset, (uInt)s->size));
		assert_int_equal(s->cls, NBG_CLASS_CRC_VERIFIED);
	}
	assert_int_equal(nbg_model_file_checksum(m)->recorded, fx_get32(b + 12));
	assert_int_equal(nbg_model_file_checksum(m)->computed, fx_get32(b + 12));
	assert_int_equal(nbg_model_file_checksum(m)->normalized_checksum_value_words, 4);
	/* dynamic I/O */
	assert_true(nbg_model_dynaio(m)->present);
	assert_int_equal(nbg_model_dynaio(m)->entry_count, 2);
	assert_int_equal(nbg_model_dynaio(m)->mapped_bytes, 132);
	assert_int_equal(nbg_model_dynaio(m)->padding_bytes, 60);
	/* the last section reaches EOF: the tail is a section-covered view */
	assert_int_equal(nbg_model_tail(m)->cover, NBG_TAIL_COVERED);
	assert_int_equal(nbg_model_tail(m)->offset, size - 512);
	nbg_model_free(m);
	free(b);
}

static void test_shapes_valid(void **state)
{
	fx_spec *s = fx_default();
	uint8_t rec[112 * 3];
	size_t size;

	/* INT4 ceil division, unknown format (null size), affine quantization */
	uint32_t d1[1] = { 7 }, d2[2] = { 3, 5 }, d3[6] = { 1, 2, 3, 4, 5, 6 };
	float scale = 0.5f;
	uint32_t scale_bits;
	memcpy(&scale_bits, &scale, 4);
	fx_io_record(rec, 1, d1, 13, 0, 0, 0, "int4");
	fx_io_record(rec + 112, 2, d2, 15, 0, 0, 0, "unknown-format");
	fx_io_record(rec + 224, 6, d3, 2, 2, scale_bits, (uint32_t)-3, "affine");
	fx_set(s, 2, rec, sizeof(rec), 0, 112);
	uint8_t *ni = fx_find(s, 35)->data;
	fx_put32(ni + 0x44, 3);
	/* alignment gaps, extra padding before a section, trailing bytes */
	fx_find(s, 24)->gap = 100;
	s->trailing = 1000;
	s->trailing_byte = 0xab;
	uint8_t *b = fx_build(s, &size);
	nbg_model *m = parse_ok(b, size);

	assert_int_equal(nbg_model_output_at(m, 0)->byte_size, 4); /* 7 x 4 bits = 28 bits -> 4 bytes */
	assert_true(nbg_model_output_at(m, 0)->byte_size_known);
	assert_false(nbg_model_output_at(m, 1)->byte_size_known);
	assert_int_equal(nbg_model_output_at(m, 2)->quant_format, NBG_QUANT_AFFINE);
	assert_true(nbg_model_output_at(m, 2)->scale == 0.5f);
	assert_int_equal(nbg_model_output_at(m, 2)->zero_point, -3);
	assert_int_equal(nbg_model_output_at(m, 2)->byte_size, 720);
	assert_int_equal(nbg_model_tail(m)->cover, NBG_TAIL_UNCOVERED);
	assert_true(nbg_model_file_checksum(m)->excluded_alignment_gap_bytes >= 100);
	/* the JSON report carries null for the unknown size */
	char *j = fx_document(m, "x.nb", 0);
	assert_non_null(j);
	assert_non_null(strstr(j, "\"byte_size\": null"));
	free(j);
	nbg_model_free(m);
	free(b);
	fx_free(s);
}

static void test_minimal_valid(void **state)
{
	/* No sections at all except INPUT/OUTPUT: still a valid container. */
	fx_spec *s = fx_default();
	uint32_t keep[] = { 1, 2 };
	for (size_t i = s->n; i-- > 0;) {
		uint32_t t = s->sec[i].type;
		if (t != keep[0] && t != keep[1])
			fx_remove(s, t);
	}
	size_t size;
	uint8_t *b = fx_build(s, &size);
	nbg_model *m = parse_ok(b, size);
	assert_int_equal(nbg_model_section_count(m), 2);
	assert_false(nbg_model_network_info(m)->present);
	assert_int_equal(nbg_model_tail(m)->cover, NBG_TAIL_NONE); /* smaller than 512 bytes */
	nbg_model_free(m);
	free(b);
	fx_free(s);
}

static void test_truncated(void **state)
{
	size_t size;
	uint8_t *b = build_default(&size);
	expect_fail(b, 2, NBG_E_TRUNCATED, 0);
	expect_fail(b, 8, NBG_E_TRUNCATED, 8);
	expect_fail(b, 40, NBG_E_TRUNCATED, 40);
	/* directory reaching past the end */
	fx_put32(b + 0x10, 100);
	expect_fail(b, 100, NBG_E_TRUNCATED, 60);
	free(b);
}

static void test_bad_magic(void **state)
{
	size_t size;
	uint8_t *b = build_default(&size);
	b[3] = 'X';
	expect_fail(b, size, NBG_E_BAD_MAGIC, 0);
	free(b);
}

static void test_unsupported_version(void **state)
{
	size_t size;
	uint8_t *b = build_default(&size);
	fx_put32(b + 4, 0x00030000);
	expect_fail(b, size, NBG_E_UNSUPPORTED_VERSION, 4);
	fx_put32(b + 4, 0x00020001);
	expect_fail(b, size, NBG_E_UNSUPPORTED_VERSION, 4);
	free(b);
}

static void test_file_size(void **state)
{
	size_t size;
	uint8_t *b = build_default(&size);
	uint8_t *big = calloc(1, size + 10);
	memcpy(big, b, size);
	expect_fail(big, size + 10, NBG_E_FILE_SIZE_MISMATCH, 0x10);
	fx_put32(b + 0x14, 1); /* high word: 4 GiB more */
	expect_fail(b, size, NBG_E_FILE_SIZE_MISMATCH, 0x10);
	free(big);
	free(b);
}

static void test_sub_header(void **state)
{
	size_t size;
	uint8_t *b = build_default(&size);
	fx_put32(b + 0x20, 2);
	expect_fail(b, size, NBG_E_SUB_HEADER_COUNT, 0x20);
	fx_put32(b + 0x20, 0);
	expect_fail(b, size, NBG_E_SUB_HEADER_COUNT, 0x20);
	fx_put32(b + 0x20, 1);
	fx_put32(b + 0x1c, 16);
	expect_fail(b, size, NBG_E_SUB_HEADER_SIZE, 0x1c);
	fx_put32(b + 0x1c, 12);
	fx_put32(b + 0x18, 40);
	expect_fail(b, size, NBG_E_DIRECTORY_OVERLAP, 0x18);
	fx_put32(b + 0x18, 48);
	fx_put32(b + 48, 20); /* directory inside the header */
	expect_fail(b, size, NBG_E_DIRECTORY_OVERLAP, 48);
	fx_put32(b + 48, 60);
	fx_put32(b + 52, 48);
	expect_fail(b, size, NBG_E_SECTION_HEADER_SIZE, 52);
	free(b);
}

static void test_unknown_and_duplicate(void **state)
{
	size_t size;
	uint8_t *b = build_default(&size);
	size_t rec = fx_dir_entry(b, size, 9); /* SH */
	fx_put32(b + rec, 41);
	fx_refresh(b, size);
	expect_fail(b, size, NBG_E_UNKNOWN_SECTION_TYPE, rec);
	fx_put32(b + rec, 0xffffffff);
	expect_fail(b, size, NBG_E_UNKNOWN_SECTION_TYPE, rec);
	fx_put32(b + rec, 10); /* PATCH again */
	fx_refresh(b, size);
	/* the second record of the pair (the original PATCH, right after SH) */
	expect_fail(b, size, NBG_E_DUPLICATE_SECTION, rec + 44);
	free(b);
}

/* More directory records than types: refused before anything sized by the
 * count is allocated, with the code of the first bad record. */
static void test_directory_count_beyond_types(void **state)
{
	size_t size;
	uint8_t *b = build_default(&size);
	uint32_t n = (uint32_t)((size - 60) / 44);
	fx_put32(b + 56, n);
	/* record 19 is the start of NETWORK_INFO: "nbgk" is no section type */
	expect_fail(b, size, NBG_E_UNKNOWN_SECTION_TYPE, 60 + 19 * 44);
	/* all records the same type: the second one is the duplicate */
	for (uint32_t i = 0; i < 42; i++)
		memcpy(b + 60 + 44 * i, b + 60 + 44 * 9, 44);
	fx_put32(b + 56, 42);
	expect_fail(b, size, NBG_E_DUPLICATE_SECTION, 60 + 44);
	free(b);
}

static void test_out_of_bounds(void **state)
{
	size_t size;
	uint8_t *b = build_default(&size);
	size_t rec = fx_dir_entry(b, size, 21); /* LOADSTATE, the last section */
	fx_put32(b + rec + 12, fx_get32(b + rec + 12) + 1);
	expect_fail(b, size, NBG_E_SECTION_OUT_OF_BOUNDS, rec + 4);
	fx_put32(b + rec + 12, 100);
	fx_put32(b + rec + 8, 1); /* offset high word */
	expect_fail(b, size, NBG_E_SECTION_OUT_OF_BOUNDS, rec + 4);
	fx_put32(b + rec + 8, 0xffffffff);
	fx_put32(b + rec + 16, 0xffffffff); /* 64-bit offset + size overflows */
	expect_fail(b, size, NBG_E_SECTION_OUT_OF_BOUNDS, rec + 4);
	free(b);
}

static void test_overlap_and_alignment(void **state)
{
	size_t size;
	uint8_t *b = build_default(&size);
	size_t sh = fx_dir_entry(b, size, 9), patch = fx_dir_entry(b, size, 10);
	uint32_t sh_off = fx_get32(b + sh + 4);
	/* PATCH starts inside SH */
	fx_put32(b + patch + 4, sh_off + 4);
	fx_refresh(b, size);
	expect_fail(b, size, NBG_E_SECTION_OVERLAP, patch + 4);
	free(b);

	b = build_default(&size);
	sh = fx_dir_entry(b, size, 9);
	fx_put32(b + sh + 4, 64); /* over the directory */
	fx_refresh(b, size);
	expect_fail(b, size, NBG_E_SECTION_OVERLAP, sh + 4);
	fx_put32(b + sh + 4, 0); /* over the header */
	fx_refresh(b, size);
	expect_fail(b, size, NBG_E_SECTION_OVERLAP, sh + 4);
	free(b);

	b = build_default(&size);
	size_t coef = fx_dir_entry(b, size, 24);
	fx_put32(b + coef + 0x1c, 128 * 1024); /* its offset is not that aligned */
	expect_fail(b, size, NBG_E_SECTION_MISALIGNED, coef + 0x1c);
	fx_put32(b + coef + 0x1c, 64);
	fx_put32(b + coef + 4, fx_get32(b + coef + 4) + 4);
	fx_put32(b + coef + 12, fx_get32(b + coef + 12) - 4);
	fx_refresh(b, size);
	expect_fail(b, size, NBG_E_SECTION_MISALIGNED, coef + 0x1c);
	free(b);
}

static void test_io_records(void **state)
{
	fx_spec *s = fx_default();
	size_t size;
	uint8_t *b;
	fx_section *in = fx_find(s, 1);

	fx_resize(in, 100);
	b = fx_build(s, &size);
	expect_fail(b, size, NBG_E_IO_RECORD_SIZE, fx_dir_entry(b, size, 1) + 12);
	free(b);
	fx_resize(in, 112);

	b = fx_build(s, &size);
	size_t off = fx_get32(b + fx_dir_entry(b, size, 1) + 4);
	fx_put32(b + off, 0);
	expect_fail(b, size, NBG_E_IO_DIMENSION_COUNT, off);
	fx_put32(b + off, 7);
	expect_fail(b, size, NBG_E_IO_DIMENSION_COUNT, off);
	fx_put32(b + off, 4);
	fx_put32(b + off + 4 + 8, 0); /* third dimension */
	expect_fail(b, size, NBG_E_IO_DIMENSION_ZERO, off + 12);
	free(b);
	fx_free(s);
}

static void test_network_info_and_memory(void **state)
{
	fx_spec *s = fx_default();
	size_t size;
	uint8_t *b;

	fx_resize(fx_find(s, 35), 216);
	b = fx_build(s, &size);
	expect_fail(b, size, NBG_E_NETWORK_INFO_SIZE, fx_dir_entry(b, size, 35) + 12);
	free(b);
	fx_resize(fx_find(s, 35), 220);

	fx_resize(fx_find(s, 37), 4);
	b = fx_build(s, &size);
	expect_fail(b, size, NBG_E_MEMORY_SECTION_SIZE, fx_dir_entry(b, size, 37) + 12);
	free(b);
	fx_resize(fx_find(s, 37), 8);
	fx_resize(fx_find(s, 38), 8);
	b = fx_build(s, &size);
	expect_fail(b, size, NBG_E_MEMORY_SECTION_SIZE, fx_dir_entry(b, size, 38) + 12);
	free(b);
	fx_resize(fx_find(s, 38), 4);
	uint8_t four[4] = { 1, 0, 0, 0 };
	fx_set(s, 39, four, 2, 0, 4);
	b = fx_build(s, &size);
	expect_fail(b, size, NBG_E_MEMORY_SECTION_SIZE, fx_dir_entry(b, size, 39) + 12);
	free(b);
	fx_remove(s, 39);

	uint8_t *ni = fx_find(s, 35)->data;
	fx_put32(ni + 0x40, 2);
	b = fx_build(s, &size);
	expect_fail(b, size, NBG_E_METADATA_COUNT_MISMATCH,
		    fx_get32(b + fx_dir_entry(b, size, 35) + 4) + 0x40);
	free(b);
	fx_put32(ni + 0x40, 1);
	fx_put32(ni + 0x44, 1);
	b = fx_build(s, &size);
	expect_fail(b, size, NBG_E_METADATA_COUNT_MISMATCH,
		    fx_get32(b + fx_dir_entry(b, size, 35) + 4) + 0x44);
	free(b);
	fx_free(s);
}

static void test_section_checksums(void **state)
{
	size_t size;
	uint8_t *b = build_default(&size);
	size_t cs = fx_dir_entry(b, size, 40);
	uint32_t coff = fx_get32(b + cs + 4);

	/* size not a multiple of 8 */
	fx_put32(b + cs + 12, 28);
	fx_refresh_header(b, size);
	expect_fail(b, size, NBG_E_CHECKSUM_RECORD_SIZE, cs + 12);
	fx_put32(b + cs + 12, 32);
	fx_refresh(b, size);
	nbg_model_free(parse_ok(b, size));

	/* wrong value: the record names the right section, the CRC differs */
	uint32_t v = fx_get32(b + coff + 4);
	fx_put32(b + coff + 4, v ^ 1);
	fx_refresh_header(b, size); /* value words are zeroed in the file checksum */
	expect_fail(b, size, NBG_E_SECTION_CHECKSUM_MISMATCH, coff + 4);
	fx_put32(b + coff + 4, v);

	/* a changed section byte, header checksum refreshed */
	size_t nn = fx_dir_entry(b, size, 7);
	uint32_t nn_off = fx_get32(b + nn + 4);
	b[nn_off + 5] ^= 0x40;
	fx_refresh_header(b, size);
	expect_fail(b, size, NBG_E_SECTION_CHECKSUM_MISMATCH, coff + 4);
	b[nn_off + 5] ^= 0x40;
	fx_refresh_header(b, size);

	/* duplicate record */
	uint32_t t1 = fx_get32(b + coff + 8);
	fx_put32(b + coff + 8, fx_get32(b + coff));
	fx_refresh(b, size);
	expect_fail(b, size, NBG_E_SECTION_CHECKSUM_DUPLICATE, coff + 8);
	/* record naming an absent section (TP) */
	fx_put32(b + coff + 8, 8);
	fx_refresh(b, size);
	expect_fail(b, size, NBG_E_SECTION_CHECKSUM_TARGET_MISSING, coff + 8);
	fx_put32(b + coff + 8, 99);
	fx_refresh(b, size);
	expect_fail(b, size, NBG_E_SECTION_CHECKSUM_TARGET_MISSING, coff + 8);
	/* record naming a present section without CRC requirement (SH) is accepted,
	 * but then COEF_DATA (type t1) has none */
	fx_put32(b + coff + 8, 9);
	fx_refresh(b, size);
	expect_fail(b, size, NBG_E_SECTION_CHECKSUM_MISSING, cs);
	(void)t1;
	free(b);

	/* no CHECKSUM section at all */
	fx_spec *s = fx_default();
	fx_remove(s, 40);
	b = fx_build(s, &size);
	expect_fail(b, size, NBG_E_SECTION_CHECKSUM_MISSING, (uint64_t)-1);
	free(b);
	fx_free(s);
}

static void test_file_checksum(void **state)
{
	size_t size;
	uint8_t *b = build_default(&size);
	fx_put32(b + 12, fx_get32(b + 12) ^ 0x80000000u);
	expect_fail(b, size, NBG_E_FILE_CHECKSUM_MISMATCH, 12);
	fx_put32(b + 12, fx_get32(b + 12) ^ 0x80000000u);
	/* a byte in an opaque section without a checksum record (SH) */
	size_t sh = fx_dir_entry(b, size, 9);
	b[fx_get32(b + sh + 4)] ^= 1;
	expect_fail(b, size, NBG_E_FILE_CHECKSUM_MISMATCH, 12);
	b[fx_get32(b + sh + 4)] ^= 1;
	/* a gap byte is outside the checksum: still valid */
	size_t coef = fx_dir_entry(b, size, 24);
	uint32_t coef_off = fx_get32(b + coef + 4);
	size_t tab = fx_dir_entry(b, size, 26);
	uint32_t tab_end = fx_get32(b + tab + 4) + fx_get32(b + tab + 12);
	assert_true(coef_off > tab_end);
	b[coef_off - 1] ^= 0xff;
	nbg_model *m = parse_ok(b, size);
	assert_int_equal(nbg_model_file_checksum(m)->excluded_alignment_gap_bytes, coef_off - tab_end +
			 /* PPU_INSTR alignment gap */
			 (fx_get32(b + fx_dir_entry(b, size, 19) + 4) -
			  (coef_off + fx_get32(b + coef + 12))));
	nbg_model_free(m);
	free(b);
}

static void test_dynaio(void **state)
{
	fx_spec *s = fx_default();
	size_t size;
	uint8_t *b;

	fx_remove(s, 26);
	b = fx_build(s, &size);
	expect_fail(b, size, NBG_E_DYNAIO_UNPAIRED, fx_dir_entry(b, size, 20));
	free(b);
	fx_spec *s2 = fx_default();
	fx_remove(s2, 20);
	b = fx_build(s2, &size);
	expect_fail(b, size, NBG_E_DYNAIO_UNPAIRED, fx_dir_entry(b, size, 26));
	free(b);
	fx_free(s2);
	fx_free(s);

	s = fx_default();
	fx_resize(fx_find(s, 20), 190);
	b = fx_build(s, &size);
	expect_fail(b, size, NBG_E_DYNAIO_REGION_SIZE, fx_dir_entry(b, size, 20) + 12);
	free(b);
	fx_resize(fx_find(s, 20), 192);
	fx_resize(fx_find(s, 26), 12);
	b = fx_build(s, &size);
	expect_fail(b, size, NBG_E_DYNAIO_TABLE_SIZE, fx_dir_entry(b, size, 26) + 12);
	free(b);
	fx_resize(fx_find(s, 26), 16);

	uint8_t *t = fx_find(s, 26)->data;
	struct {
		uint32_t o0, s0, o1, s1;
		nbg_code code;
		unsigned rec, word;
	} cases[] = {
		{ 0, 0, 64, 128, NBG_E_DYNAIO_ENTRY_EMPTY, 0, 4 },
		{ 0, 4, 60, 128, NBG_E_DYNAIO_ENTRY_MISALIGNED, 1, 0 },
		{ 0, 4, 128, 128, NBG_E_DYNAIO_ENTRY_OUT_OF_BOUNDS, 1, 0 },
		{ 0, 4, 0xffffffc0u, 0x80, NBG_E_DYNAIO_ENTRY_OUT_OF_BOUNDS, 1, 0 },
		{ 0, 4, 0, 64, NBG_E_DYNAIO_ENTRY_ORDER, 1, 0 },
		{ 0, 100, 64, 128, NBG_E_DYNAIO_ENTRY_ORDER, 1, 0 },
		{ 0, 4, 64, 100, NBG_E_DYNAIO_NONZERO_PADDING, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fx_put32(t, cases[i].o0);
		fx_put32(t + 4, cases[i].s0);
		fx_put32(t + 8, cases[i].o1);
		fx_put32(t + 12, cases[i].s1);
		b = fx_build(s, &size);
		uint64_t want = fx_get32(b + fx_dir_entry(b, size, 26) + 4) + 8 * cases[i].rec +
				cases[i].word;
		if (cases[i].code == NBG_E_DYNAIO_NONZERO_PADDING) /* first nonzero byte: region + 164 */
			want = fx_get32(b + fx_dir_entry(b, size, 20) + 4) + 164;
		expect_fail(b, size, cases[i].code, want);
		free(b);
	}
	/* a non-zero byte in the gap between the entries */
	fx_put32(t, 0);
	fx_put32(t + 4, 4);
	fx_put32(t + 8, 64);
	fx_put32(t + 12, 128);
	fx_find(s, 20)->data[10] = 1;
	b = fx_build(s, &size);
	expect_fail(b, size, NBG_E_DYNAIO_NONZERO_PADDING,
		    fx_get32(b + fx_dir_entry(b, size, 20) + 4) + 10);
	free(b);
	fx_free(s);
}

static void test_notes_not_failures(void **state)
{
	size_t size;
	uint8_t *b = build_default(&size);
	size_t sh = fx_dir_entry(b, size, 9);
	fx_put32(b + sh + 0x14, 0x1000);  /* load address */
	fx_put32(b + sh + 0x24, 7);       /* reserved word */
	fx_put32(b + 0x28, 1);            /* header reserved2 */
	nbg_model *m = parse_ok(b, size);
	int load = 0, res = 0, hdr = 0;
	for (size_t i = 0; i < nbg_model_note_count(m); i++) {
		load += !strcmp(nbg_model_note_at(m, i)->id, "load-address-nonzero");
		res += !strcmp(nbg_model_note_at(m, i)->id, "section-reserved-nonzero");
		hdr += !strcmp(nbg_model_note_at(m, i)->id, "header-reserved-nonzero");
	}
	assert_int_equal(load, 1);
	assert_int_equal(res, 1);
	assert_int_equal(hdr, 1);
	nbg_model_free(m);
	free(b);
}

/* Runs last: every v2 failure code was produced by at least one test above. */
static void test_every_v2_code_covered(void **state)
{
	for (int c = 1; c < NBG_E__COUNT; c++) {
		const char *n = nbg_code_name((nbg_code)c);
		if (!strncmp(n, "v1-", 3) || c == NBG_E_SEMANTIC_CHANGE_REFUSED)
			continue; /* tested by the v1 and ledger suites */
		if (c == NBG_E_OUT_OF_MEMORY)
			continue; /* a property of the machine, not of a file */
		if (c >= NBG_E_LEDGER_INVARIANT && c <= NBG_E_SAMPLE_INVALID)
			continue; /* ledger, I/O, runtime and tensor codes: their own suites */
		if (c >= NBG_E_FILE_CHANGED && c <= NBG_E_CORPUS_PART)
			continue; /* corpus runs: tests/test_corpus_scale.c */
		if (c >= NBG_E_WORK_LIMIT)
			continue; /* limits and standard input: tests/test_hostile.c */
		if (!codes_hit[c])
			print_error("no test produced %s\n", n);
		assert_true(codes_hit[c]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_valid),
		cmocka_unit_test(test_shapes_valid),
		cmocka_unit_test(test_minimal_valid),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_unsupported_version),
		cmocka_unit_test(test_file_size),
		cmocka_unit_test(test_sub_header),
		cmocka_unit_test(test_unknown_and_duplicate),
		cmocka_unit_test(test_directory_count_beyond_types),
		cmocka_unit_test(test_out_of_bounds),
		cmocka_unit_test(test_overlap_and_alignment),
		cmocka_unit_test(test_io_records),
		cmocka_unit_test(test_network_info_and_memory),
		cmocka_unit_test(test_section_checksums),
		cmocka_unit_test(test_file_checksum),
		cmocka_unit_test(test_dynaio),
		cmocka_unit_test(test_notes_not_failures),
		cmocka_unit_test(test_every_v2_code_covered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
