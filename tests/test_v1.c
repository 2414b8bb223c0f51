/*
 * test_v1.c - NBG v1: every real file of the corpus (v1/) parses, and what
 * the library decodes is compared with a second decoder written here from
 * the plain offsets of doc/format-v1.md (no field map, no library code),
 * with zlib and OpenSSL for checksums.  Each v1 failure code is provoked by
 * changing exactly one thing in a copy of a real file, and the exact code and
 * byte offset are asserted.  Versions with no sample (below 0x10003, in the
 * gaps of the measured table, newer than 0x1001F) are built from real files
 * by patching the version word.
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
#include "nbg/report.h"

#define V1_DIR NBG_CORPUS_DIR "/v1"

static const char F_10003_FACE_AGE[] = "10003_88_face_age_88.nb";
static const char F_10009_EMOTION[] = "10009_88_emotion_88.nb";
static const char F_1000F_EMOTION[] = "1000f_88_emotion_88.nb";
static const char F_1000F_YOLO[] = "1000f_88_yolov8n.nb";
static const char F_10014_1E[] = "10014_1000000e_image_classify_1e_A311X2.nb";
static const char F_10014_99[] = "10014_99_image_classify_99_S905D3.nb";
static const char F_1001E[] = "1001e_ba_conv2d_relu_maxpool2d_fp32.nb";

static int codes_hit[NBG_E__COUNT];

/* ------------------------------------------------------------ helpers */

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* A malloc'd copy of a corpus file (+ `extra` spare bytes at the end). */
static uint8_t *load(const char *name, size_t *size, size_t extra)
{
	char path[512];
	FILE *f;
	long n;
	uint8_t *b;

	snprintf(path, sizeof(path), "%s/%s", V1_DIR, name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)n + extra + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return b;
}

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

static void expect_fail(const uint8_t *buf, size_t size, nbg_code want, uint64_t want_offset)
{
	nbg_model *m = (nbg_model *)1;
	nbg_error err;
	nbg_code rc = nbg_parse(buf, size, NULL, &m, &err);
	if (rc != want || err.offset != want_offset)
		print_error("wanted %s at %llu, got %s at %llu: %s\n", nbg_code_name(want),
			    (unsigned long long)want_offset, nbg_code_name(rc),
			    (unsigned long long)err.offset, err.message);
	assert_int_equal(rc, want);
	assert_null(m);
	assert_int_equal(err.code, want);
	assert_int_equal(err.offset, want_offset);
	assert_true(strlen(err.message) > 20);
	codes_hit[want] = 1;
}

static int has_note(const nbg_model *m, const char *id)
{
	for (size_t i = 0; i < nbg_model_note_count(m); i++)
		if (!strcmp(nbg_model_note_at(m, i)->id, id))
			return 1;
	return 0;
}

/* ------------------------------------------- the independent decoder */

/* doc/format-v1.md's layout, written out with plain offsets. */
typedef struct ref_io {
	uint32_t dim_count, dims[6], fmt, type, quant, fp_raw, scale_raw, zp_raw;
	int has_name;
	char name[65];
} ref_io;

typedef struct ref_v1 {
	uint32_t version, target, layers, ops, inputs, outputs;
	uint32_t entries_start, n;
	uint32_t off[40], size[40];
	uint32_t io_stride, layer_stride, op_stride, patch_stride, sh_stride, sw_stride;
	uint32_t pool_size, axi_size, vip_size;
	ref_io in[16], out[16];
	uint32_t n_in, n_out;
} ref_v1;

static void ref_io_read(const uint8_t *r, uint32_t stride, ref_io *io)
{
	uint32_t nd = stride == 116 ? 6 : 4, k = 4 + 4 * nd;

	memset(io, 0, sizeof(*io));
	io->dim_count = rd32(r);
	for (uint32_t d = 0; d < nd; d++)
		io->dims[d] = rd32(r + 4 + 4 * d);
	io->fmt = rd32(r + k);
	io->type = rd32(r + k + 4);
	io->quant = rd32(r + k + 8);
	io->fp_raw = rd32(r + k + 12);
	io->scale_raw = rd32(r + k + 16);
	io->zp_raw = rd32(r + k + 20);
	if (stride > 44) {
		io->has_name = 1;
		memcpy(io->name, r + k + 24, 64);
	}
}

static void ref_parse(const uint8_t *b, size_t size, ref_v1 *r)
{
	uint32_t v, p = 92;

	memset(r, 0, sizeof(*r));
	assert_true(size > 400);
	assert_memory_equal(b, "VPMN", 4);
	r->version = v = rd32(b + 4);
	r->target = rd32(b + 8);
	r->layers = rd32(b + 76);
	r->ops = rd32(b + 80);
	r->inputs = rd32(b + 84);
	r->outputs = rd32(b + 88);
	if (v >= 0x10003)
		p += 256;
	r->pool_size = rd32(b + p);
	r->axi_size = rd32(b + p + 16);
	p += 20;
	if (v >= 0x10008) {
		r->vip_size = rd32(b + p + 4);
		p += 8;
	}
	r->entries_start = p;
	r->n = (rd32(b + p) - p) / 8;
	assert_true(r->n <= 40);
	for (uint32_t i = 0; i < r->n; i++) {
		r->off[i] = rd32(b + p + 8 * i);
		r->size[i] = rd32(b + p + 8 * i + 4);
	}
	r->io_stride = v < 0x10004 ? 44 : v < 0x1000b ? 108 : 116;
	r->layer_stride = v < 0x10008 ? 72 : 76;
	r->op_stride = v < 0x10011 ? 24 : v < 0x10017 ? 28 : 32;
	r->patch_stride = v < 0x10006 ? 24 : v <= 0x1000f ? 28 : 40;
	r->sh_stride = v < 0x1000e ? 4 : 8;
	r->sw_stride = v < 0x10009 ? 4 : 68;
	r->n_in = r->size[0] / r->io_stride;
	r->n_out = r->size[1] / r->io_stride;
	assert_true(r->n_in <= 16 && r->n_out <= 16);
	for (uint32_t i = 0; i < r->n_in; i++)
		ref_io_read(b + r->off[0] + i * r->io_stride, r->io_stride, &r->in[i]);
	for (uint32_t i = 0; i < r->n_out; i++)
		ref_io_read(b + r->off[1] + i * r->io_stride, r->io_stride, &r->out[i]);
}

/* Entry counts as measured (doc/format-v1.md); 0 for a version the table
 * does not hold, whose count comes from the rule (where the inputs begin). */
static uint32_t ref_entry_count(uint32_t v)
{
	switch (v) {
	case 0x10003: case 0x10009: case 0x1000b: return 12;
	case 0x1000c: return 15;
	case 0x1000e: return 16;
	case 0x1000f: return 17;
	case 0x10014: return 18;
	case 0x1001e: return 27;
	}
	return 0;
}

static void compare_io(const nbg_io *io, const ref_io *r, uint32_t stride, uint32_t index)
{
	static const unsigned bits[] = { 32, 16, 8, 8, 16, 16, 8, 16, 32, 32, 64, 64, 64 };
	uint64_t elems = 1;

	assert_int_equal(io->index, index);
	assert_int_equal(io->record_size, stride);
	assert_int_equal(io->max_dims, stride == 116 ? 6 : 4);
	assert_int_equal(io->dim_count, r->dim_count);
	for (uint32_t d = 0; d < r->dim_count; d++) {
		assert_int_equal(io->dims[d], r->dims[d]);
		elems *= r->dims[d];
	}
	assert_int_equal(io->data_format, r->fmt);
	assert_int_equal(io->data_type, r->type);
	assert_int_equal(io->quant_format, r->quant);
	assert_int_equal(io->quant_raw_count, 3);
	assert_int_equal(io->quant_raw[0], r->fp_raw);
	assert_int_equal(io->quant_raw[1], r->scale_raw);
	assert_int_equal(io->quant_raw[2], r->zp_raw);
	assert_int_equal(io->fixed_point_pos, (int32_t)r->fp_raw);
	assert_int_equal(io->zero_point, (int32_t)r->zp_raw);
	assert_memory_equal(&io->scale, &r->scale_raw, 4);
	assert_int_equal(io->has_name, r->has_name);
	if (r->has_name)
		assert_string_equal(io->name, r->name);
	assert_true(r->fmt < 13);
	assert_true(io->byte_size_known);
	assert_int_equal(io->element_count, elems);
	assert_int_equal(io->byte_size, elems * bits[r->fmt] / 8);
}

/* ------------------------------------------------------ the corpus */

/* The class the parser gives entry type t of `size` bytes: INPUT and OUTPUT
 * decoded by the parser; the record tables the graph layer decodes field by
 * field (layers, operations, SH, patches, SW: whole records of the stride
 * the parser checked; the (offset, size) tables: 8-byte entries; hardware
 * init 12 and PPU parameters 48 bytes) when they hold any bytes; the rest
 * opaque.  From the field map's record layouts, not from the parser. */
static nbg_section_class v1_class_expected(uint32_t t, uint32_t size)
{
	switch (t) {
	case 1: case 2:
		return NBG_CLASS_DECODED;
	case 3: case 4: case 9: case 10: case 12:
		return size ? NBG_CLASS_DECODED : NBG_CLASS_OPAQUE;
	case 5: case 14: case 23: case 25: case 27:
		return size && size % 8 == 0 ? NBG_CLASS_DECODED : NBG_CLASS_OPAQUE;
	case 13:
		return size && size % 12 == 0 ? NBG_CLASS_DECODED : NBG_CLASS_OPAQUE;
	case 16:
		return size && size % 48 == 0 ? NBG_CLASS_DECODED : NBG_CLASS_OPAQUE;
	default:
		return NBG_CLASS_OPAQUE;
	}
}

static void check_corpus_file(const char *name, const uint8_t *b, size_t size)
{
	ref_v1 r;
	nbg_model *m;
	uint32_t fv, ft;
	char fmt_end;

	ref_parse(b, size, &r);
	m = parse_ok(b, size);

	/* The file name says "<version>_<target>_..." (hex). */
	assert_int_equal(sscanf(name, "%x_%x%c", &fv, &ft, &fmt_end), 3);
	assert_int_equal(nbg_model_family(m), 1);
	assert_int_equal(nbg_model_version(m), fv);
	assert_int_equal(nbg_model_target(m), ft);
	assert_int_equal(nbg_model_version(m), r.version);

	const nbg_v1_info *v1 = nbg_model_v1(m);
	assert_int_equal(v1->layer_count, r.layers);
	assert_int_equal(v1->operation_count, r.ops);
	assert_int_equal(v1->input_count, r.inputs);
	assert_int_equal(v1->output_count, r.outputs);
	assert_int_equal(v1->has_feature_db, 1);
	assert_int_equal(v1->feature_db_offset, 92);
	assert_int_equal(v1->has_vip_sram, r.version >= 0x10008);
	assert_int_equal(nbg_model_memory(m)->memory_pool_bytes, r.pool_size);
	assert_int_equal(nbg_model_memory(m)->axi_sram_bytes, r.axi_size);
	assert_int_equal(nbg_model_memory(m)->vip_sram_bytes, r.vip_size);

	/* Entry table: the measured count, confirmed by where the inputs begin. */
	assert_int_equal(v1->entries_offset, r.entries_start);
	if (!ref_entry_count(r.version))
		print_message("%s: version 0x%x is not in the measured table: its entry count "
			      "comes from the rule alone\n", name, r.version);
	assert_int_equal(v1->entry_count, ref_entry_count(r.version) ? ref_entry_count(r.version) : r.n);
	assert_int_equal(v1->entry_count, r.n);
	assert_int_equal(v1->entry_count_rule, r.n);
	assert_int_equal(v1->entry_count_derived, ref_entry_count(r.version) == 0);
	assert_int_equal(v1->prefix_end, r.entries_start + 8 * r.n);
	assert_int_equal(nbg_model_section_count(m), r.n);
	for (uint32_t i = 0; i < r.n; i++) {
		const nbg_section *s = nbg_model_section_at(m, i);
		assert_int_equal(s->index, i);
		assert_int_equal(s->type, i + 1);
		assert_int_equal(s->record_offset, r.entries_start + 8 * i);
		assert_int_equal(s->offset, r.off[i]);
		assert_int_equal(s->size, r.size[i]);
		assert_true((uint64_t)r.off[i] + r.size[i] <= size);
		assert_int_equal(s->cls, v1_class_expected(i + 1, r.size[i]));
		assert_int_equal(s->crc32, (uint32_t)crc32(0, b + r.off[i], r.size[i]));
		uint8_t d[32];
		SHA256(b + r.off[i], r.size[i], d);
		assert_memory_equal(s->sha256, d, 32);
	}

	/* Strides, and counts x strides == table sizes where the header counts. */
	assert_int_equal(v1->io_stride, r.io_stride);
	assert_int_equal(v1->layer_stride, r.layer_stride);
	assert_int_equal(v1->operation_stride, r.op_stride);
	assert_int_equal(v1->patch_stride, r.patch_stride);
	assert_int_equal(v1->sh_stride, r.sh_stride);
	assert_int_equal(v1->sw_stride, r.sw_stride);
	assert_int_equal(v1->strides_assumed, 0);
	assert_int_equal(v1->patch_stride_from_data, 0);
	assert_int_equal((uint64_t)r.inputs * r.io_stride, r.size[0]);
	assert_int_equal((uint64_t)r.outputs * r.io_stride, r.size[1]);
	assert_int_equal((uint64_t)r.layers * r.layer_stride, r.size[2]);
	assert_int_equal((uint64_t)r.ops * r.op_stride, r.size[3]);
	assert_int_equal(r.size[8] % r.sh_stride, 0);
	assert_int_equal(r.size[9] % r.patch_stride, 0);
	assert_int_equal(r.size[11] % r.sw_stride, 0);
	assert_int_equal(nbg_model_section_at(m, 0)->entry_size, r.io_stride);
	assert_int_equal(nbg_model_section_at(m, 2)->entry_size, r.layer_stride);
	assert_int_equal(nbg_model_section_at(m, 3)->entry_size, r.op_stride);
	assert_int_equal(nbg_model_section_at(m, 8)->entry_size, r.sh_stride);
	assert_int_equal(nbg_model_section_at(m, 9)->entry_size, r.patch_stride);
	assert_int_equal(nbg_model_section_at(m, 11)->entry_size, r.sw_stride);
	assert_int_equal(nbg_model_section_at(m, 4)->entry_size, 0);

	/* I/O records against the second decoder. */
	assert_int_equal(nbg_model_input_count(m), r.inputs);
	assert_int_equal(nbg_model_output_count(m), r.outputs);
	for (uint32_t i = 0; i < r.n_in; i++)
		compare_io(nbg_model_input_at(m, i), &r.in[i], r.io_stride, i);
	for (uint32_t i = 0; i < r.n_out; i++)
		compare_io(nbg_model_output_at(m, i), &r.out[i], r.io_stride, i);

	/* Every byte after the prefix: sections, zero gaps, bytes after the last one. */
	uint64_t last_end = 0;
	for (uint32_t i = 0; i < r.n; i++)
		if (r.size[i] && (uint64_t)r.off[i] + r.size[i] > last_end)
			last_end = (uint64_t)r.off[i] + r.size[i];
	assert_int_equal(v1->opaque_size, 0);
	assert_int_equal(v1->gap_nonzero_bytes, 0);
	assert_int_equal(v1->trailer_offset, last_end);
	assert_int_equal(v1->trailer_size, size - last_end);

	/* nbg_crc_sum exists from 0x10016; only the 0x1001E file has one. */
	assert_int_equal(v1->has_crc_sum, r.version >= 0x10016);
	assert_int_equal(nbg_model_note_count(m),
			 (r.version >= 0x10016) + (ref_entry_count(r.version) == 0));
	nbg_model_free(m);
}

/* Every v1 file of the corpus; the files and versions seen are those the
 * corpus's MANIFEST.tsv lists, and each file's size, version and target
 * words are its manifest row's. */
static void test_corpus(void **state)
{
	DIR *dir = opendir(V1_DIR);
	struct dirent *e;
	size_t files = 0, versions_seen = 0, nrows;
	uint32_t *seen;
	tc_manifest_row *rows = tc_manifest_load(&nrows);

	assert_non_null(dir);
	seen = calloc(nrows + 1, sizeof(*seen));
	assert_non_null(seen);
	while ((e = readdir(dir)) != NULL) {
		size_t size, n = strlen(e->d_name), k;
		uint8_t *b;
		char rel[300];
		const tc_manifest_row *row;
		if (n < 4 || strcmp(e->d_name + n - 3, ".nb"))
			continue;
		snprintf(rel, sizeof(rel), "v1/%s", e->d_name);
		if (!(row = tc_manifest_find(rows, nrows, rel)))
			fail_msg("%s is in the corpus but not in its MANIFEST.tsv", rel);
		b = load(e->d_name, &size, 0);
		check_corpus_file(e->d_name, b, size);
		assert_int_equal(size, row->bytes);
		assert_int_equal(rd32(b + 4), row->version);
		assert_int_equal(rd32(b + 8), row->target);
		uint32_t v = rd32(b + 4);
		for (k = 0; k < versions_seen && seen[k] != v; k++)
			;
		if (k == versions_seen && versions_seen < nrows)
			seen[versions_seen++] = v;
		free(b);
		files++;
	}
	closedir(dir);
	print_message("v1: %zu files, %zu versions\n", files, versions_seen);
	assert_int_equal(files, tc_manifest_count(rows, nrows, "v1"));
	assert_int_equal(versions_seen, tc_manifest_versions(rows, nrows, "v1"));
	free(seen);
	free(rows);
}

/* ------------------------------------------------- concrete values */

static void test_emotion_inputs(void **state)
{
	static const char *const names[] = {
		"10009_7d_emotion_7d.nb", "10009_be_emotion_be.nb", "1000b_a1_emotion_a1.nb",
		"1000c_b9_emotion_b9.nb", "1000e_88_emotion_88_A311D.nb", "1000e_e8_emotion_e8.nb",
		"1000f_99_emotion_99.nb", "1000f_be_emotion_be.nb",
	};
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		size_t size;
		uint8_t *b = load(names[k], &size, 0);
		nbg_model *m = parse_ok(b, size);
		const nbg_io *in = nbg_model_input_at(m, 0), *out = nbg_model_output_at(m, 0);

		assert_int_equal(nbg_model_input_count(m), 1);
		assert_int_equal(nbg_model_output_count(m), 1);
		/* NHWC [1, 64, 64, 1] grey face, UINT8 affine scale 1/128 zero point 128 */
		assert_int_equal(in->dim_count, 4);
		assert_int_equal(nbg_io_dim_outer(in, 0), 1);
		assert_int_equal(nbg_io_dim_outer(in, 1), 64);
		assert_int_equal(nbg_io_dim_outer(in, 2), 64);
		assert_int_equal(nbg_io_dim_outer(in, 3), 1);
		assert_int_equal(in->data_format, 2);
		assert_int_equal(in->quant_format, NBG_QUANT_AFFINE);
		assert_true(in->scale == 0.0078125f);
		assert_int_equal(in->zero_point, 128);
		assert_int_equal(in->byte_size, 4096);
		assert_string_equal(in->name, "input[0]");
		/* 7 emotion classes, FP16 */
		assert_int_equal(out->dims[0], 7);
		assert_int_equal(out->data_format, 1);
		assert_int_equal(out->byte_size, 14);
		assert_string_equal(out->name, "uid_6_out_0");
		nbg_model_free(m);
		free(b);
	}
}

static void test_face_age_outputs(void **state)
{
	size_t size;
	uint8_t *b = load(F_10003_FACE_AGE, &size, 0);
	nbg_model *m = parse_ok(b, size);

	assert_string_equal(nbg_model_v1(m)->network_name, "age_NHWC");
	assert_int_equal(nbg_model_v1(m)->io_stride, 44);
	assert_int_equal(nbg_model_input_count(m), 1);
	assert_int_equal(nbg_model_output_count(m), 9);
	/* input NHWC [1, 64, 64, 3] UINT8; 44-byte records carry no name */
	assert_int_equal(nbg_io_dim_outer(nbg_model_input_at(m, 0), 3), 3);
	assert_int_equal(nbg_model_input_at(m, 0)->byte_size, 64 * 64 * 3);
	assert_int_equal(nbg_model_input_at(m, 0)->has_name, 0);
	for (int i = 0; i < 9; i++) {
		const nbg_io *o = nbg_model_output_at(m, i);
		assert_int_equal(o->dim_count, 2);
		assert_int_equal(o->dims[0], i < 6 ? 3 : 1);
		assert_int_equal(o->dims[1], 1);
		assert_int_equal(o->data_format, i < 3 ? 2 : 1);
		assert_int_equal(o->quant_format, i < 3 ? NBG_QUANT_AFFINE : NBG_QUANT_NONE);
		assert_int_equal(o->has_name, 0);
	}
	assert_true(nbg_model_output_at(m, 0)->scale > 0.000215f && nbg_model_output_at(m, 0)->scale < 0.000217f);
	assert_int_equal(nbg_model_v1(m)->layer_stride, 72);
	assert_int_equal(nbg_model_v1(m)->patch_stride, 24);
	assert_int_equal(nbg_model_v1(m)->entries_offset, 368);
	assert_int_equal(nbg_model_memory(m)->has_vip_sram, 0);
	nbg_model_free(m);
	free(b);
}

static void test_yolo_and_classify(void **state)
{
	size_t size;
	uint8_t *b = load(F_1000F_YOLO, &size, 0);
	nbg_model *m = parse_ok(b, size);
	static const uint32_t grid[3] = { 80, 40, 20 };

	/* an NCHW model: file order [640, 640, 3, 1] */
	assert_int_equal(nbg_model_input_at(m, 0)->dims[0], 640);
	assert_int_equal(nbg_model_input_at(m, 0)->dims[1], 640);
	assert_int_equal(nbg_io_dim_outer(nbg_model_input_at(m, 0), 1), 3);
	assert_int_equal(nbg_model_output_count(m), 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(nbg_model_output_at(m, i)->dims[0], grid[i]);
		assert_int_equal(nbg_model_output_at(m, i)->dims[2], 144);
	}
	nbg_model_free(m);
	free(b);

	b = load(F_10014_99, &size, 0);
	m = parse_ok(b, size);
	assert_int_equal(nbg_model_output_at(m, 0)->dims[0], 1001);
	assert_int_equal(nbg_model_v1(m)->operation_stride, 28);
	assert_int_equal(nbg_model_v1(m)->patch_stride, 40);
	assert_int_equal(nbg_model_v1(m)->axi_bus_width_index, 2);
	assert_int_equal(nbg_model_v1(m)->nn_core_count, 2);
	assert_int_equal(nbg_model_v1(m)->tp_core_count, 1);
	assert_int_equal(nbg_model_v1(m)->has_crc_sum, 0);
	assert_int_equal(nbg_model_section_count(m), 18);
	assert_int_equal(nbg_model_section_at(m, 17)->type, NBG_SEC_DMA_SBI_INFO);
	nbg_model_free(m);
	free(b);
}

static void test_crc_sum_match(void **state)
{
	size_t size;
	uint8_t *b = load(F_1001E, &size, 0);
	nbg_model *m = parse_ok(b, size);
	static const uint8_t zero4[4];
	uint32_t stored = rd32(b + 108);
	uLong crc = crc32(0, b, 108);

	crc = crc32(crc, zero4, 4);
	crc = crc32(crc, b + 112, (uInt)(size - 112));
	assert_int_equal(stored, 0x48739b09);
	assert_int_equal((uint32_t)crc, stored);
	assert_int_equal(nbg_model_v1(m)->has_crc_sum, 1);
	assert_int_equal(nbg_model_v1(m)->crc_sum, stored);
	assert_int_equal(nbg_model_v1(m)->crc_sum_computed, (uint32_t)crc);
	assert_string_equal(nbg_model_v1(m)->crc_sum_finding, "match");
	assert_true(has_note(m, "v1-crc-sum-match"));
	/* 27 entries: the field map's "eight opaque bytes" are the 27th (LOADSTATE_TABLE). */
	assert_int_equal(nbg_model_v1(m)->entry_count, 27);
	assert_int_equal(nbg_model_section_at(m, 26)->type, NBG_SEC_LOADSTATE_TABLE);
	assert_int_equal(nbg_model_section_at(m, 26)->offset, 2028);
	assert_int_equal(nbg_model_section_at(m, 26)->size, 40);
	assert_int_equal(nbg_model_v1(m)->opaque_size, 0);
	assert_int_equal(nbg_model_v1(m)->gap_count, 2);
	assert_int_equal(nbg_model_v1(m)->gap_bytes, 300);
	assert_int_equal(nbg_model_v1(m)->operation_stride, 32);
	assert_int_equal(nbg_model_input_at(m, 0)->data_format, 0);
	assert_int_equal(nbg_model_input_at(m, 0)->byte_size, 64 * 64 * 3 * 4);
	nbg_model_free(m);

	/* One changed byte anywhere else: 0x1001e's rule is enforced, so the
	 * file fails at the word (a corrupted file, not a finding). */
	b[size - 1] ^= 1;
	expect_fail(b, size, NBG_E_V1_CRC_SUM_MISMATCH, 108);
	b[size - 1] ^= 1;

	wr32(b + 108, 0);
	m = parse_ok(b, size);
	assert_string_equal(nbg_model_v1(m)->crc_sum_finding, "zero");
	assert_int_equal(nbg_model_v1(m)->crc_sum_computed, (uint32_t)crc);
	nbg_model_free(m);
	free(b);
}

static void test_trailer_bytes(void **state)
{
	size_t size;
	uint8_t *b = load(F_10009_EMOTION, &size, 0);
	nbg_model *m = parse_ok(b, size);
	uint8_t d[32];

	assert_int_equal(nbg_model_v1(m)->trailer_size, 90);
	assert_int_equal(nbg_model_v1(m)->trailer_offset, size - 90);
	SHA256(b + size - 90, 90, d);
	assert_memory_equal(nbg_model_v1(m)->trailer_sha256, d, 32);
	assert_int_equal(nbg_model_v1(m)->gap_count, 1);
	assert_int_equal(nbg_model_v1(m)->gap_bytes, 220);
	nbg_model_free(m);
	free(b);
}

/* ---------------------------------------------------- failure codes */

/* 0x1000F file: entries at 376, 17 of them; input record at 512. */
static void test_entry_out_of_bounds(void **state)
{
	size_t size;
	uint8_t *b = load(F_1000F_EMOTION, &size, 0);
	uint8_t *e5 = b + 376 + 5 * 8;
	uint32_t off = rd32(e5), sz = rd32(e5 + 4);

	wr32(e5 + 4, 0xffffffffu); /* size */
	expect_fail(b, size, NBG_E_V1_ENTRY_OUT_OF_BOUNDS, 376 + 5 * 8);
	wr32(e5 + 4, sz);
	wr32(e5, 0xfffffff0u); /* offset: 64-bit sum does not wrap, still past the end */
	expect_fail(b, size, NBG_E_V1_ENTRY_OUT_OF_BOUNDS, 376 + 5 * 8);
	wr32(e5, off);
	/* A zero-size entry must still point inside the file. */
	wr32(b + 376 + 16 * 8, (uint32_t)size + 1);
	expect_fail(b, size, NBG_E_V1_ENTRY_OUT_OF_BOUNDS, 376 + 16 * 8);
	free(b);

	/* A file cut short inside the largest table. */
	b = load(F_1000F_EMOTION, &size, 0);
	expect_fail(b, 50000, NBG_E_V1_ENTRY_OUT_OF_BOUNDS, 376 + 5 * 8);
	free(b);
}

static void test_record_stride(void **state)
{
	size_t size;
	uint8_t *b = load(F_1000F_EMOTION, &size, 0);
	uint8_t *layer_size = b + 376 + 2 * 8 + 4;

	wr32(layer_size, rd32(layer_size) + 4);
	expect_fail(b, size, NBG_E_V1_RECORD_STRIDE, 376 + 2 * 8 + 4);
	free(b);

	b = load(F_1000F_EMOTION, &size, 0);
	uint8_t *patch_size = b + 376 + 9 * 8 + 4;
	wr32(patch_size, rd32(patch_size) - 4);
	expect_fail(b, size, NBG_E_V1_RECORD_STRIDE, 376 + 9 * 8 + 4);
	free(b);

	b = load(F_1000F_EMOTION, &size, 0);
	uint8_t *sh_size = b + 376 + 8 * 8 + 4; /* 16 bytes of 8-byte SH records */
	wr32(sh_size, 12);
	expect_fail(b, size, NBG_E_V1_RECORD_STRIDE, 376 + 8 * 8 + 4);
	free(b);
}

static void test_count_mismatch(void **state)
{
	size_t size;
	uint8_t *b = load(F_1000F_EMOTION, &size, 0);

	wr32(b + 76, rd32(b + 76) + 1); /* layer_count */
	expect_fail(b, size, NBG_E_V1_COUNT_MISMATCH, 76);
	free(b);
	b = load(F_1000F_EMOTION, &size, 0);
	wr32(b + 80, rd32(b + 80) - 1); /* operation_count */
	expect_fail(b, size, NBG_E_V1_COUNT_MISMATCH, 80);
	free(b);
	b = load(F_1000F_EMOTION, &size, 0);
	wr32(b + 88, 2); /* output_count */
	expect_fail(b, size, NBG_E_V1_COUNT_MISMATCH, 88);
	free(b);
	b = load(F_10003_FACE_AGE, &size, 0);
	wr32(b + 84, 0); /* input_count, 44-byte records */
	expect_fail(b, size, NBG_E_V1_COUNT_MISMATCH, 84);
	free(b);
}

static void test_entry_count(void **state)
{
	size_t size;
	uint8_t *b = load(F_1000F_EMOTION, &size, 0);

	/* The input table no longer begins right after the 17th entry. */
	wr32(b + 376, rd32(b + 376) + 8);
	expect_fail(b, size, NBG_E_V1_ENTRY_COUNT, 376);
	free(b);
	b = load(F_10003_FACE_AGE, &size, 0);
	wr32(b + 368, rd32(b + 368) - 8);
	expect_fail(b, size, NBG_E_V1_ENTRY_COUNT, 368);
	free(b);
}

static void test_io_dimension_count(void **state)
{
	size_t size;
	uint8_t *b = load(F_1000F_EMOTION, &size, 0);

	wr32(b + 512, 7); /* 116-byte records hold 1..6 */
	expect_fail(b, size, NBG_E_IO_DIMENSION_COUNT, 512);
	wr32(b + 512, 6); /* legal: the unused dims are stored as 1 */
	nbg_model *m = parse_ok(b, size);
	assert_int_equal(nbg_model_input_at(m, 0)->dim_count, 6);
	assert_int_equal(nbg_model_input_at(m, 0)->dims[5], 1);
	nbg_model_free(m);
	wr32(b + 512, 0);
	expect_fail(b, size, NBG_E_IO_DIMENSION_COUNT, 512);
	free(b);

	/* 44-byte records (0x10003) and 108-byte ones (0x10009) hold 1..4. */
	b = load(F_10003_FACE_AGE, &size, 0);
	wr32(b + 464, 5);
	expect_fail(b, size, NBG_E_IO_DIMENSION_COUNT, 464);
	free(b);
	b = load(F_10009_EMOTION, &size, 0);
	wr32(b + 580, 5); /* the output record */
	expect_fail(b, size, NBG_E_IO_DIMENSION_COUNT, 580);
	free(b);
}

static void test_io_dimension_zero(void **state)
{
	size_t size;
	uint8_t *b = load(F_1000F_EMOTION, &size, 0);

	wr32(b + 512 + 4 + 2 * 4, 0); /* input dims[2] */
	expect_fail(b, size, NBG_E_IO_DIMENSION_ZERO, 512 + 4 + 2 * 4);
	free(b);
	b = load(F_10003_FACE_AGE, &size, 0);
	wr32(b + 508 + 44 + 4, 0); /* output 1 dims[0] */
	expect_fail(b, size, NBG_E_IO_DIMENSION_ZERO, 508 + 44 + 4);
	free(b);
}

static void test_truncated(void **state)
{
	size_t size;
	uint8_t *b = load(F_1000F_EMOTION, &size, 0);

	expect_fail(b, 60, NBG_E_TRUNCATED, 0);    /* inside the header */
	expect_fail(b, 200, NBG_E_TRUNCATED, 92);  /* inside the feature database */
	expect_fail(b, 360, NBG_E_TRUNCATED, 348); /* inside the memory block */
	expect_fail(b, 380, NBG_E_TRUNCATED, 376); /* inside entry 0 */
	expect_fail(b, 400, NBG_E_TRUNCATED, 376); /* inside the entry table */
	free(b);
	b = load(F_10003_FACE_AGE, &size, 0);
	expect_fail(b, 361, NBG_E_TRUNCATED, 348); /* 20-byte memory block before 0x10008 */
	free(b);
}

/* ------------------------------------------- versions with no sample */

static void test_future_version(void **state)
{
	size_t size;
	uint8_t *b = load(F_1001E, &size, 0);
	nbg_model *m;

	wr32(b + 4, 0x10025);
	m = parse_ok(b, size);
	assert_int_equal(nbg_model_version(m), 0x10025);
	assert_int_equal(nbg_model_v1(m)->entry_count_derived, 1);
	assert_int_equal(nbg_model_v1(m)->entry_count, 27);
	assert_int_equal(nbg_model_v1(m)->entry_count_rule, 27);
	assert_int_equal(nbg_model_v1(m)->strides_assumed, 1);
	assert_int_equal(nbg_model_v1(m)->operation_stride, 32);
	assert_int_equal(nbg_model_v1(m)->patch_stride, 40);
	assert_true(has_note(m, "v1-entry-count-derived"));
	assert_true(has_note(m, "v1-version-unsampled"));
	/* the version word is covered by the CRC: the finding changes, parsing does not */
	assert_string_equal(nbg_model_v1(m)->crc_sum_finding, "no-match");
	assert_int_equal(nbg_model_input_at(m, 0)->dims[0], 64);
	nbg_model_free(m);

	/* Derived rule refused: the input table is not whole entries away. */
	wr32(b + 376, rd32(b + 376) + 4);
	expect_fail(b, size, NBG_E_V1_ENTRY_COUNT, 376);
	wr32(b + 376, 376 + 8 * 11); /* fewer than the 12 tables every version has */
	expect_fail(b, size, NBG_E_V1_ENTRY_COUNT, 376);
	free(b);

	/* Counts that no longer fit the assumed strides are refused, not misread. */
	b = load(F_1000F_EMOTION, &size, 0);
	wr32(b + 4, 0x10025);
	expect_fail(b, size, NBG_E_V1_RECORD_STRIDE, 376 + 3 * 8 + 4); /* 24-byte ops */
	free(b);
}

/* More entries than the 34 v2 types 1..34: the first 34 are decoded, the rest
 * stays opaque.  Built from the 0x1001E file by inserting 80 bytes (7 more
 * zero entries + 24 marked bytes) after its entry table. */
static void test_clamped_entry_count(void **state)
{
	size_t size;
	uint8_t *src = load(F_1001E, &size, 0);
	size_t nsize = size + 80;
	uint8_t *b = malloc(nsize), d[32];
	nbg_model *m;

	memcpy(b, src, 592);
	memset(b + 592, 0, 56);
	memset(b + 648, 0xab, 24);
	memcpy(b + 672, src + 592, size - 592);
	wr32(b + 4, 0x10025);
	for (int i = 0; i < 27; i++)
		wr32(b + 376 + 8 * i, rd32(b + 376 + 8 * i) + 80);
	m = parse_ok(b, nsize);
	assert_int_equal(nbg_model_v1(m)->entry_count_rule, 37);
	assert_int_equal(nbg_model_v1(m)->entry_count, 34);
	assert_int_equal(nbg_model_section_count(m), 34);
	assert_int_equal(nbg_model_section_at(m, 33)->type, 34);
	assert_int_equal(nbg_model_section_at(m, 33)->size, 0);
	assert_int_equal(nbg_model_v1(m)->prefix_end, 376 + 34 * 8);
	assert_int_equal(nbg_model_v1(m)->opaque_offset, 648);
	assert_int_equal(nbg_model_v1(m)->opaque_size, 24);
	SHA256(b + 648, 24, d);
	assert_memory_equal(nbg_model_v1(m)->opaque_sha256, d, 32);
	assert_true(has_note(m, "v1-opaque-prefix-bytes"));
	assert_int_equal(nbg_model_input_at(m, 0)->offset, 672);
	nbg_model_free(m);
	free(b);
	free(src);
}

/* Below 0x10003 there is no feature database: the 0x10003 file with its 256
 * feature bytes removed and version 0x10002 decodes by the derived rule. */
static void test_before_feature_db(void **state)
{
	size_t size;
	uint8_t *src = load(F_10003_FACE_AGE, &size, 0);
	size_t nsize = size - 256;
	uint8_t *b = malloc(nsize);
	nbg_model *m, *ref;

	memcpy(b, src, 92);
	memcpy(b + 92, src + 348, size - 348);
	wr32(b + 4, 0x10002);
	for (int i = 0; i < 12; i++) {
		uint8_t *e = b + 112 + 8 * i;
		wr32(e, rd32(e) - 256);
	}
	m = parse_ok(b, nsize);
	ref = parse_ok(src, size);
	assert_int_equal(nbg_model_v1(m)->has_feature_db, 0);
	assert_int_equal(nbg_model_v1(m)->memory_offset, 92);
	assert_int_equal(nbg_model_v1(m)->entries_offset, 112);
	assert_int_equal(nbg_model_v1(m)->entry_count, 12);
	assert_int_equal(nbg_model_v1(m)->entry_count_derived, 1);
	assert_true(has_note(m, "v1-no-feature-db"));
	assert_int_equal(nbg_model_output_count(m), 9);
	for (int i = 0; i < 9; i++)
		assert_memory_equal(nbg_model_output_at(m, i)->dims, nbg_model_output_at(ref, i)->dims, sizeof(uint32_t) * 4);
	for (int i = 0; i < 12; i++)
		assert_memory_equal(nbg_model_section_at(m, i)->sha256, nbg_model_section_at(ref, i)->sha256, 32);
	nbg_model_free(m);
	nbg_model_free(ref);
	free(b);
	free(src);
}

/* 0x10010-0x10013: the patch stride is 28 or 40, decided by the table. */
static void test_patch_stride_from_data(void **state)
{
	size_t size;
	uint8_t *b = load(F_10014_99, &size, 0);
	nbg_model *m;

	/* 12520 bytes: only 40 divides */
	wr32(b + 4, 0x10012);
	m = parse_ok(b, size);
	assert_int_equal(nbg_model_v1(m)->entry_count_derived, 1);
	assert_int_equal(nbg_model_v1(m)->patch_stride_from_data, 1);
	assert_int_equal(nbg_model_v1(m)->patch_stride, 40);
	assert_int_equal(nbg_model_section_at(m, 9)->entry_size, 40);
	assert_true(has_note(m, "v1-patch-stride-from-data"));
	nbg_model_free(m);
	free(b);

	/* 66640 bytes: 28 and 40 both divide; the records say 40 */
	b = load(F_10014_1E, &size, 0);
	uint32_t poff = rd32(b + 376 + 9 * 8), psize = rd32(b + 376 + 9 * 8 + 4);
	assert_int_equal(psize % 280, 0);
	wr32(b + 4, 0x10012);
	m = parse_ok(b, size);
	assert_int_equal(nbg_model_v1(m)->patch_stride, 40);
	nbg_model_free(m);

	/* all-zero records fit both: the stride is left unknown, with a note */
	memset(b + poff, 0, psize);
	m = parse_ok(b, size);
	assert_int_equal(nbg_model_v1(m)->patch_stride, 0);
	assert_int_equal(nbg_model_section_at(m, 9)->entry_size, 0);
	assert_true(has_note(m, "v1-patch-stride-undecided"));
	nbg_model_free(m);

	/* a multiple of neither */
	wr32(b + 376 + 9 * 8 + 4, psize - 4);
	expect_fail(b, size, NBG_E_V1_RECORD_STRIDE, 376 + 9 * 8 + 4);
	free(b);
}

/* ------------------------------------------------------------ reports */

static void test_json_report(void **state)
{
	size_t size;
	uint8_t *b = load(F_1001E, &size, 0);
	nbg_model *m = parse_ok(b, size);
	char *s = fx_document(m, "x.nb", 0);
	json_error_t je;
	json_t *root = json_loads(s, 0, &je), *v1;

	assert_non_null(root);
	assert_string_equal(json_string_value(json_object_get(root, "network_name")),
			    "dummy_network_name");
	assert_int_equal(json_integer_value(json_object_get(root, "layer_count")), 3);
	assert_int_equal(json_integer_value(json_object_get(root, "operation_count")), 5);
	assert_int_equal(json_integer_value(json_object_get(root, "input_count")), 1);
	assert_int_equal(json_integer_value(json_object_get(root, "output_count")), 1);
	assert_int_equal(json_integer_value(json_object_get(root, "memory_pool_bytes")), 460032);
	assert_int_equal(json_integer_value(json_object_get(root, "vip_sram_bytes")), 131584);
	assert_int_equal(json_integer_value(json_object_get(root, "axi_sram_bytes")), 0);
	v1 = json_object_get(root, "v1");
	assert_non_null(v1);
	assert_int_equal(json_integer_value(json_object_get(v1, "entry_count")), 27);
	assert_true(json_is_false(json_object_get(v1, "entry_count_derived")));
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(v1, "nbg_crc_sum"), "finding")), "match");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(v1, "strides"),
							    "patch")), 40);
	json_t *fdb = json_object_get(v1, "feature_db");
	assert_int_equal(json_integer_value(json_object_get(fdb, "nn_command_bytes")), 192);
	assert_int_equal(strlen(json_string_value(json_object_get(fdb, "sha256"))), 64);
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(json_object_get(v1, "memory"), "vip_sram"), "size")),
			 131584);
	assert_int_equal(json_array_size(json_object_get(root, "sections")), 27);
	json_decref(root);
	free(s);
	nbg_model_free(m);
	free(b);

	/* before 0x10008 there is no VIP-SRAM; before 0x10016 no nbg_crc_sum */
	b = load(F_10003_FACE_AGE, &size, 0);
	m = parse_ok(b, size);
	s = fx_document(m, NULL, 0);
	root = json_loads(s, 0, &je);
	assert_true(json_is_null(json_object_get(root, "vip_sram_bytes")));
	assert_true(json_is_null(json_object_get(json_object_get(root, "v1"), "nbg_crc_sum")));
	assert_int_equal(json_array_size(json_object_get(root, "outputs")), 9);
	json_decref(root);
	free(s);
	nbg_model_free(m);
	free(b);
}

static void test_text_report(void **state)
{
	size_t size, len = 0;
	uint8_t *b = load(F_1001E, &size, 0);
	nbg_model *m = parse_ok(b, size);
	char *text = NULL;
	FILE *f = open_memstream(&text, &len);

	nbg_text_report(f, m, "x.nb");
	fclose(f);
	assert_non_null(strstr(text, "  Network name:              dummy_network_name\n"));
	assert_non_null(strstr(text, "  Entry table:               offset 376, 27 entries"));
	assert_non_null(strstr(text, "I/O 116, layer 76, operation 32, patch 40, SH 8, SW 68"));
	assert_non_null(strstr(text, "0x48739b09 (CRC-32 of the file with the word zeroed 0x48739b09: match; "
				   "this version's rule, enforced)"));
	assert_non_null(strstr(text, "  VIP SRAM:                  131584 bytes"));
	free(text);
	nbg_model_free(m);
	free(b);
}

static void test_every_v1_code_covered(void **state)
{
	static const nbg_code want[] = {
		NBG_E_V1_ENTRY_OUT_OF_BOUNDS, NBG_E_V1_RECORD_STRIDE, NBG_E_V1_COUNT_MISMATCH,
		NBG_E_V1_ENTRY_COUNT, NBG_E_IO_DIMENSION_COUNT, NBG_E_IO_DIMENSION_ZERO,
		NBG_E_TRUNCATED, NBG_E_V1_CRC_SUM_MISMATCH,
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!codes_hit[want[i]])
			print_error("no test provoked %s\n", nbg_code_name(want[i]));
		assert_true(codes_hit[want[i]]);
	}
}

/* Every case reads real files: the whole program is the corpus group. */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_emotion_inputs),
		cmocka_unit_test(test_face_age_outputs),
		cmocka_unit_test(test_yolo_and_classify),
		cmocka_unit_test(test_crc_sum_match),
		cmocka_unit_test(test_trailer_bytes),
		cmocka_unit_test(test_entry_out_of_bounds),
		cmocka_unit_test(test_record_stride),
		cmocka_unit_test(test_count_mismatch),
		cmocka_unit_test(test_entry_count),
		cmocka_unit_test(test_io_dimension_count),
		cmocka_unit_test(test_io_dimension_zero),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_future_version),
		cmocka_unit_test(test_clamped_entry_count),
		cmocka_unit_test(test_before_feature_db),
		cmocka_unit_test(test_patch_stride_from_data),
		cmocka_unit_test(test_json_report),
		cmocka_unit_test(test_text_report),
		cmocka_unit_test(test_every_v1_code_covered),
	};
	return tc_main(argc, argv, "test_v1", NULL, 0, tests, TC_COUNT(tests), NULL, NULL);
}
