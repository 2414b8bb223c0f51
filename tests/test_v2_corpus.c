/*
 * test_v2_corpus.c - every real v2 file of the corpus (v2/) parses; its
 * size, version and target are its MANIFEST.tsv row's; its inputs/outputs
 * match the vendor compiler's *.meta.json where one is beside it (shapes
 * outermost first, formats, fixed-point positions; a file without one is
 * reported as not judged); its section and file checksums match values
 * computed here independently with zlib; its directory, NETWORK_INFO words,
 * dynamic-I/O table and tail coverage are re-read from the raw bytes.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <openssl/sha.h>
#include <zlib.h>

#include "corpus.h"
#include "fixture.h"
#include "nbg/nbg.h"

#define V2_DIR NBG_CORPUS_DIR "/v2"

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* Expected data format from the meta.json entry. */
static uint32_t meta_format(json_t *e)
{
	json_t *q = json_object_get(e, "quantize");
	const char *dt = json_string_value(json_object_get(e, "dtype"));
	if (q) {
		const char *qt = json_string_value(json_object_get(q, "qtype"));
		if (!strcmp(qt, "i16"))
			return 5;
		if (!strcmp(qt, "i8"))
			return 3;
		if (!strcmp(qt, "u8"))
			return 2;
		fail_msg("unknown qtype %s", qt);
	}
	if (dt && !strcmp(dt, "float16"))
		return 1;
	if (dt && !strcmp(dt, "float32"))
		return 0;
	fail_msg("meta entry without dtype or quantize");
	return 99;
}

static void check_io_against_meta(const nbg_model *m, int outputs, json_t *meta)
{
	const char *key;
	json_t *e;
	size_t i = 0;
	size_t n = outputs ? nbg_model_output_count(m) : nbg_model_input_count(m);

	assert_int_equal(json_object_size(meta), n);
	json_object_foreach(meta, key, e) {
		const nbg_io *io = outputs ? nbg_model_output_at(m, i) : nbg_model_input_at(m, i);
		i++;
		json_t *shape = json_object_get(e, "shape");
		json_t *q = json_object_get(e, "quantize");
		size_t d;
		json_t *v;

		assert_int_equal(json_array_size(shape), io->dim_count);
		json_array_foreach(shape, d, v)
			assert_int_equal(json_integer_value(v), nbg_io_dim_outer(io, (uint32_t)d));
		assert_int_equal(io->data_format, meta_format(e));
		if (q) {
			assert_string_equal(json_string_value(json_object_get(e, "quantizer")),
					    "dynamic_fixed_point");
			assert_int_equal(io->quant_format, NBG_QUANT_DFP);
			assert_int_equal(io->fixed_point_pos,
					 json_integer_value(json_object_get(q, "fl")));
		} else {
			assert_int_equal(io->quant_format, NBG_QUANT_NONE);
			assert_int_equal(io->quant_raw[0], 0x3f800000); /* 1.0f kept raw */
		}
		assert_true(io->byte_size_known);
		assert_int_equal(io->byte_size,
				 io->element_count * nbg_data_format_bits(io->data_format) / 8);
	}
}

/* The file checksum rule (doc/format-v2.md), computed here from the raw bytes with zlib. */
static uint32_t independent_file_crc(const uint8_t *b, size_t size)
{
	uint32_t dir = fx_get32(b + 48), n = fx_get32(b + 56);
	uLong crc = crc32(0, Z_NULL, 0);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *r = b + dir + 44 * i;
		uint32_t off = fx_get32(r + 4), len = fx_get32(r + 12);
		assert_true((size_t)off + len <= size);
		if (fx_get32(r) == 40) {
			for (uint32_t k = 0; k < len; k += 8) {
				static const uint8_t z[4];
				crc = crc32(crc, b + off + k, 4);
				crc = crc32(crc, z, 4);
			}
		} else {
			crc = crc32(crc, b + off, len);
		}
	}
	return (uint32_t)crc;
}

/* The directory entry of section `type` in the raw bytes: its payload
 * offset and size; 0 when the file has none. */
static int raw_section(const uint8_t *b, uint32_t type, uint32_t *off, uint32_t *len)
{
	uint32_t dir = fx_get32(b + 48), n = fx_get32(b + 56);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *r = b + dir + 44 * i;
		if (fx_get32(r) == type) {
			*off = fx_get32(r + 4);
			*len = fx_get32(r + 12);
			return 1;
		}
	}
	return 0;
}

/* The CHECKSUM records the rule requires: one per present section of type
 * 7, 8, 19, 21 or 24 (doc/format-v2.md), counted in the raw directory. */
static uint32_t raw_required_records(const uint8_t *b)
{
	static const uint32_t types[] = { 7, 8, 19, 21, 24 };
	uint32_t off, len, k = 0;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		k += (uint32_t)raw_section(b, types[i], &off, &len);
	return k;
}

/* How the sections of the raw directory cover the final 512 bytes. */
static nbg_tail_cover raw_tail_cover(const uint8_t *b, size_t size)
{
	uint32_t dir = fx_get32(b + 48), n = fx_get32(b + 56);
	size_t covered = 0;
	for (size_t at = size - 512; at < size; at++)
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *r = b + dir + 44 * i;
			uint64_t off = fx_get32(r + 4), len = fx_get32(r + 12);
			if (at >= off && at < off + len) {
				covered++;
				break;
			}
		}
	return covered == 512 ? NBG_TAIL_COVERED : covered ? NBG_TAIL_PARTIAL : NBG_TAIL_UNCOVERED;
}

/* NETWORK_INFO's words (doc/format-v2.md section 7) against the raw bytes. */
static void check_network_info(const nbg_model *m, const uint8_t *b)
{
	const nbg_network_info *ni = nbg_model_network_info(m);
	uint32_t off, len, nonzero = 0;

	assert_true(raw_section(b, 35, &off, &len));
	assert_int_equal(len, 220);
	assert_true(ni->present);
	assert_int_equal(ni->core_count, fx_get32(b + off + 0x54));
	assert_int_equal(ni->address_width, fx_get32(b + off + 0x58));
	assert_int_equal(ni->attribute, fx_get32(b + off + 0x5c));
	/* NN command size code (attribute bits 1-2): 0 is 128 bytes, 1 is 192 */
	uint32_t code = fx_get32(b + off + 0x5c) >> 1 & 3;
	assert_int_equal(ni->nn_command_bytes, code == 0 ? 128 : code == 1 ? 192 : 0);
	/* the NN section's sd_entsize agrees with the code */
	uint32_t dir = fx_get32(b + 48), n = fx_get32(b + 56);
	for (uint32_t i = 0; i < n; i++)
		if (fx_get32(b + dir + 44 * i) == 7)
			assert_int_equal(fx_get32(b + dir + 44 * i + 0x20), ni->nn_command_bytes);
	for (uint32_t w = 0; w < 31; w++)
		nonzero += fx_get32(b + off + 0x60 + 4 * w) != 0;
	assert_int_equal(ni->vsi_reserved_nonzero, nonzero);
	assert_int_equal(ni->input_count, nbg_model_input_count(m));
	assert_int_equal(ni->output_count, nbg_model_output_count(m));
	/* the three implicit run operations (doc/format-v2.md) */
	const nbg_section *ops = nbg_model_section(m, NBG_SEC_OPERATIONS);
	assert_non_null(ops);
	assert_int_equal(ni->operation_count, ops->size / ops->entry_size + 3);
}

static void check_file(const char *name, const tc_manifest_row *rows, size_t nrows, int *judged)
{
	char path[1024], meta_path[1024], rel[300];
	size_t size;
	nbg_model *m = NULL;
	nbg_error err;
	uint32_t off, len;

	snprintf(path, sizeof(path), "%s/%s", V2_DIR, name);
	snprintf(rel, sizeof(rel), "v2/%s", name);
	const tc_manifest_row *row = tc_manifest_find(rows, nrows, rel);
	if (!row)
		fail_msg("%s is in the corpus but not in its MANIFEST.tsv", rel);
	uint8_t *b = fx_read_file(path, &size);
	assert_non_null(b);
	nbg_code rc = nbg_parse(b, size, NULL, &m, &err);
	if (rc != NBG_OK)
		fail_msg("%s: %s: %s", name, nbg_code_name(rc), err.message);
	/* family, version and target: the header words and the manifest's row */
	assert_int_equal(nbg_model_family(m), 2);
	assert_int_equal(size, row->bytes);
	assert_int_equal(fx_get32(b + 4), row->version);
	assert_int_equal(fx_get32(b + 8), row->target);
	assert_int_equal(nbg_model_version(m), row->version);
	assert_int_equal(nbg_model_target(m), row->target);
	assert_int_equal(nbg_model_file_size(m), size);

	/* whole-file SHA-256 against OpenSSL's one-shot API */
	uint8_t sha[32];
	SHA256(b, size, sha);
	assert_memory_equal(sha, nbg_model_file_sha256(m), 32);

	/* file checksum: header value, library value and independent value agree */
	uint32_t indep = independent_file_crc(b, size);
	assert_int_equal(nbg_model_file_checksum(m)->recorded, fx_get32(b + 12));
	assert_int_equal(nbg_model_file_checksum(m)->computed, indep);
	assert_int_equal(indep, fx_get32(b + 12));

	/* section checksums: as many records as the CHECKSUM section holds and
	 * the rule requires, each checked independently */
	assert_true(raw_section(b, 40, &off, &len));
	assert_int_equal(nbg_model_checksum_record_count(m), len / 8);
	assert_int_equal(nbg_model_checksum_record_count(m), raw_required_records(b));
	for (size_t i = 0; i < nbg_model_checksum_record_count(m); i++) {
		const nbg_checksum_record *r = nbg_model_checksum_record_at(m, i);
		const nbg_section *s = nbg_model_section(m, r->section_type);
		assert_non_null(s);
		assert_int_equal(r->section_type, fx_get32(b + off + 8 * i));
		uint32_t c = (uint32_t)crc32(0, b + s->offset, (uInt)s->size);
		assert_int_equal(r->stored, c);
		assert_int_equal(r->computed, c);
		SHA256(b + s->offset, s->size, sha);
		assert_memory_equal(sha, s->sha256, 32);
	}
	assert_int_equal(nbg_model_section_count(m), fx_get32(b + 56));
	check_network_info(m, b);
	assert_int_equal(nbg_model_memory(m)->has_vip_sram, raw_section(b, 38, &off, &len));

	/* dynamic I/O: DYNAIO and its table, one entry per 8 table bytes */
	if (raw_section(b, 26, &off, &len)) {
		assert_true(nbg_model_dynaio(m)->present);
		assert_int_equal(nbg_model_dynaio(m)->entry_count, len / 8);
		assert_int_equal(nbg_model_dynaio(m)->mapped_bytes + nbg_model_dynaio(m)->padding_bytes,
				 nbg_model_dynaio(m)->region_size);
	} else {
		assert_false(nbg_model_dynaio(m)->present);
	}
	/* tail: as the raw directory's sections cover the last 512 bytes */
	assert_int_equal(nbg_model_tail(m)->cover, raw_tail_cover(b, size));
	SHA256(b + size - 512, 512, sha);
	assert_memory_equal(sha, nbg_model_tail(m)->sha256, 32);

	/* vendor I/O descriptions, where the vendor compiler's meta.json is beside
	 * the file (its repository has none for some) */
	snprintf(meta_path, sizeof(meta_path), "%s/%.*s.meta.json", V2_DIR,
		 (int)(strlen(name) - 3), name);
	json_error_t je;
	FILE *mf = fopen(meta_path, "r");
	if (!mf) {
		print_message("%s: I/O records not judged: no %.*s.meta.json (the vendor "
			      "compiler's description) beside it; every other check ran\n", rel,
			      (int)(strlen(name) - 3), name);
	} else {
		fclose(mf);
		json_t *meta = json_load_file(meta_path, 0, &je);
		if (!meta)
			fail_msg("%s: %s", meta_path, je.text);
		check_io_against_meta(m, 0, json_object_get(meta, "Inputs"));
		check_io_against_meta(m, 1, json_object_get(meta, "Outputs"));
		json_decref(meta);
		(*judged)++;
	}

	/* the JSON report is valid JSON and carries the decoded values */
	char *js = fx_document(m, path, 0);
	json_t *rep = json_loads(js, 0, &je);
	assert_non_null(rep);
	assert_int_equal(json_integer_value(json_object_get(rep, "target")), row->target);
	assert_int_equal(json_integer_value(json_object_get(rep, "product")), row->target);
	assert_true(json_is_true(json_object_get(json_object_get(rep, "file_checksum"), "matches")));
	assert_int_equal(json_array_size(json_object_get(rep, "sections")), nbg_model_section_count(m));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(rep, "header"),
							    "sub_header_count")), fx_get32(b + 0x20));
	json_decref(rep);
	free(js);

	nbg_model_free(m);
	free(b);
}

static void test_corpus_v2(void **state)
{
	DIR *d = opendir(V2_DIR);
	struct dirent *e;
	size_t n = 0, nrows;
	int judged = 0;
	tc_manifest_row *rows = tc_manifest_load(&nrows);

	if (!d)
		fail_msg("cannot open %s: the corpus is incomplete", V2_DIR);
	while ((e = readdir(d)) != NULL) {
		if (!ends_with(e->d_name, ".nb"))
			continue;
		check_file(e->d_name, rows, nrows, &judged);
		n++;
	}
	closedir(d);
	print_message("v2: %zu files, %d with their I/O judged against the vendor's meta.json\n",
		      n, judged);
	assert_int_equal(n, tc_manifest_count(rows, nrows, "v2"));
	free(rows);
}

/* Concrete values read off the files by hand, as a person would check them. */
static void test_face_detector_int16(void **state)
{
	size_t size;
	nbg_model *m;
	uint8_t *b = fx_read_file(V2_DIR "/face_detector_nbg_int16.nb", &size);
	assert_non_null(b);
	assert_int_equal(nbg_parse(b, size, NULL, &m, NULL), NBG_OK);
	assert_int_equal(nbg_model_v2_header(m)->crc_sum, 0x52abdff3);
	assert_int_equal(nbg_model_section_count(m), 17);
	assert_string_equal(nbg_model_network_info(m)->name, "face_detector_NHWC");
	assert_int_equal(nbg_model_network_info(m)->layer_count, 55);
	assert_int_equal(nbg_model_memory(m)->memory_pool_bytes, 0x09e500);
	assert_int_equal(nbg_model_memory(m)->vip_sram_bytes, 0x078a00);
	assert_int_equal(nbg_model_input_at(m, 0)->byte_size, 1 * 128 * 128 * 3 * 2);
	assert_string_equal(nbg_model_input_at(m, 0)->name, "input/output[0]");
	assert_string_equal(nbg_model_output_at(m, 0)->name, "uid_90_out_0");
	assert_int_equal(nbg_model_output_at(m, 0)->fixed_point_pos, 7);
	assert_int_equal(nbg_model_output_at(m, 1)->fixed_point_pos, 8);
	assert_false(nbg_model_dynaio(m)->present);
	nbg_model_free(m);
	free(b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_corpus_v2),
		cmocka_unit_test(test_face_detector_int16),
	};
	return tc_main(argc, argv, "test_v2_corpus", NULL, 0, corpus, TC_COUNT(corpus), NULL,
		       NULL);
}
