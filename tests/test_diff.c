/*
 * test_diff.c - controlled differentials: the field map's A/B pair (one byte of
 * dynamic-I/O entry 0 changed, 00 01 02 03 -> 00 01 02 04) is located at
 * region +3 of entry 0 and nothing else but the checksums it implies changes;
 * identical files are identical; added sections, real corpus pairs and the
 * command line behave as documented.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <jansson.h>

#include "fixture.h"
#include "nbg/nbg.h"
#include "nbg/diff.h"

static nbg_model *parse(const uint8_t *b, size_t n)
{
	nbg_model *m = NULL;
	nbg_error err;
	if (nbg_parse(b, n, NULL, &m, &err) != NBG_OK)
		fail_msg("parse: %s", err.message);
	return m;
}

static const nbg_diff_item *find(const nbg_diff *d, nbg_diff_kind k, const char *path)
{
	for (size_t i = 0; i < d->count; i++)
		if (d->items[i].kind == k && !strcmp(d->items[i].path, path))
			return &d->items[i];
	return NULL;
}

static uint8_t *build_ab(uint8_t last, size_t *n)
{
	fx_spec *s = fx_default();
	uint8_t *region = fx_find(s, 20)->data;
	region[0] = 0, region[1] = 1, region[2] = 2, region[3] = last;
	uint8_t *b = fx_build(s, n);
	fx_free(s);
	return b;
}

static void test_controlled_ab(void **state)
{
	size_t na, nb;
	uint8_t *a = build_ab(3, &na), *b = build_ab(4, &nb);
	nbg_model *ma = parse(a, na), *mb = parse(b, nb);
	nbg_diff *d = NULL;
	nbg_error err;

	assert_int_equal(na, nb);
	assert_int_equal(nbg_diff_models(ma, mb, &d, &err), NBG_OK);
	assert_false(d->identical);

	/* every changed byte, counted independently */
	uint64_t changed = 0;
	for (size_t i = 0; i < na; i++)
		changed += a[i] != b[i];
	assert_int_equal(d->bytes_changed, changed);

	/* the one payload byte: region +3, entry 0 +3 */
	uint64_t region = ma->dynaio.region_offset;
	const nbg_diff_item *it = find(d, NBG_DIFF_BYTES, "section 20 DYNAIO");
	assert_non_null(it);
	assert_int_equal(it->offset_a, region + 3);
	assert_int_equal(it->length, 1);
	assert_string_equal(it->a, "03");
	assert_string_equal(it->b, "04");
	assert_string_equal(it->detail, "region +3, dynaio entry 0 +3");

	/* the only other owner that changed is the header, in its crc32 word */
	assert_int_equal(d->owners_changed, 2);
	assert_int_equal(d->owners_added + d->owners_removed, 0);
	it = find(d, NBG_DIFF_BYTES, "header");
	assert_non_null(it);
	assert_true(it->offset_a >= 12 && it->offset_a + it->length <= 16);
	assert_non_null(strstr(it->detail, "crc32"));

	/* fields: the header checksum, the computed one, the DYNAIO section CRC */
	char want_a[16], want_b[16];
	snprintf(want_a, sizeof(want_a), "0x%08x", fx_get32(a + 12));
	snprintf(want_b, sizeof(want_b), "0x%08x", fx_get32(b + 12));
	it = find(d, NBG_DIFF_FIELD, "header.crc32");
	assert_non_null(it);
	assert_string_equal(it->a, want_a);
	assert_string_equal(it->b, want_b);
	assert_non_null(find(d, NBG_DIFF_FIELD, "file_checksum.computed_crc32"));
	assert_non_null(find(d, NBG_DIFF_FIELD, "section 20 DYNAIO.crc32"));
	assert_int_equal(d->field_count, 3);

	char *js = nbg_diff_json(d, ma, "a.nb", mb, "b.nb");
	json_t *j = json_loads(js, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "summary"),
							    "bytes_changed")), changed);
	json_decref(j);
	free(js);
	nbg_diff_free(d);

	/* identical */
	assert_int_equal(nbg_diff_models(ma, ma, &d, &err), NBG_OK);
	assert_true(d->identical);
	assert_int_equal(d->count, 0);
	nbg_diff_free(d);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
}

static void test_added_section(void **state)
{
	fx_spec *s = fx_default();
	size_t na, nb;
	uint8_t *a = fx_build(s, &na);
	uint8_t axi[4] = { 0, 0, 1, 0 };
	fx_set(s, 39, axi, 4, 0, 4);
	uint8_t *b = fx_build(s, &nb);
	nbg_model *ma = parse(a, na), *mb = parse(b, nb);
	nbg_diff *d;
	nbg_error err;

	assert_int_equal(nbg_diff_models(ma, mb, &d, &err), NBG_OK);
	const nbg_diff_item *it = find(d, NBG_DIFF_ADDED, "section 39 AXI_SRAM");
	assert_non_null(it);
	assert_int_equal(it->length, 4);
	assert_int_equal(it->offset_b, nbg_model_section(mb, 39)->offset);
	it = find(d, NBG_DIFF_FIELD, "axi_sram_bytes");
	assert_non_null(it);
	assert_string_equal(it->a, "0");
	assert_string_equal(it->b, "65536");
	assert_non_null(find(d, NBG_DIFF_FIELD, "sub_header.section_header_count"));
	assert_true(d->owners_added >= 2); /* the section and its directory record */
	nbg_diff_free(d);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
	fx_free(s);
}

/* A changed byte in the alignment before a section is located relative to
 * the alignment range, not to the section it precedes. */
static void test_alignment_byte(void **state)
{
	size_t na, nb;
	uint8_t *a = fx_read_file(NBG_SOURCE_DIR "/samples/sample.nb", &na);
	uint8_t *b = fx_read_file(NBG_SOURCE_DIR "/samples/sample.nb", &nb);
	nbg_model *ma = parse(a, na);
	const nbg_section *coef = nbg_model_section(ma, NBG_SEC_COEF_DATA);
	b[coef->offset - 1] ^= 0xff; /* gap bytes are outside every checksum */
	nbg_model *mb = parse(b, nb);
	nbg_diff *d;
	nbg_error err;

	assert_int_equal(nbg_diff_models(ma, mb, &d, &err), NBG_OK);
	assert_int_equal(d->bytes_changed, 1);
	const nbg_diff_item *it = NULL;
	for (size_t i = 0; i < d->count; i++)
		if (d->items[i].kind == NBG_DIFF_BYTES)
			it = &d->items[i];
	assert_non_null(it);
	assert_string_equal(it->path, "alignment of section 24 COEF_DATA");
	assert_int_equal(it->offset_a, coef->offset - 1);
	char want[32];
	/* "+k" with k < 64: inside the alignment range */
	assert_true(it->detail[0] == '+');
	assert_true(strtoull(it->detail + 1, NULL, 10) < 64);
	snprintf(want, sizeof(want), "%02x", a[coef->offset - 1]);
	assert_string_equal(it->a, want);
	nbg_diff_free(d);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
}

static void test_corpus_pair(void **state)
{
	size_t na, nb;
	uint8_t *a = fx_read_file(NBG_CORPUS_DIR "/v2/face_detector_nbg_fp16.nb", &na);
	uint8_t *b = fx_read_file(NBG_CORPUS_DIR "/v2/face_detector_nbg_int16.nb", &nb);
	assert_non_null(a);
	assert_non_null(b);
	nbg_model *ma = parse(a, na), *mb = parse(b, nb);
	nbg_diff *d;
	nbg_error err;

	assert_int_equal(nbg_diff_models(ma, mb, &d, &err), NBG_OK);
	const nbg_diff_item *it = find(d, NBG_DIFF_FIELD, "input 0.data_format");
	assert_non_null(it);
	assert_string_equal(it->a, "FP16");
	assert_string_equal(it->b, "INT16");
	it = find(d, NBG_DIFF_FIELD, "output 1.quantization.raw_words[0]");
	assert_non_null(it);
	assert_string_equal(it->b, "0x00000008"); /* fl = 8 in the vendor's meta.json */
	assert_null(find(d, NBG_DIFF_FIELD, "input 0.dimensions"));
	/* record-level location of a changed byte in the INPUT record */
	int located = 0;
	for (size_t i = 0; i < d->count; i++)
		located += d->items[i].kind == NBG_DIFF_BYTES &&
			   !strcmp(d->items[i].path, "section 1 INPUT") &&
			   !strcmp(d->items[i].detail, "record 0 data_format");
	assert_int_equal(located, 1);
	nbg_diff_free(d);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
}

static int run(const char *args, char **out)
{
	fx_run_result r = fx_run_nbg(FX_IN_SOURCE, "%s", args);
	if (out)
		*out = r.out;
	else
		free(r.out);
	free(r.err);
	return r.status;
}

static void test_cli(void **state)
{
	char *out;
	assert_int_equal(run("diff samples/sample.nb samples/sample.nb", &out), 0);
	assert_non_null(strstr(out, "summary: identical: the files are byte for byte the same"));
	free(out);
	assert_int_equal(run("diff " NBG_CORPUS_DIR "/v2/face_detector_nbg_fp16.nb "
			     NBG_CORPUS_DIR "/v2/face_detector_nbg_int16.nb", &out), 1);
	assert_non_null(strstr(out, "input 0.data_format"));
	assert_non_null(strstr(out, "FP16 -> INT16"));
	free(out);
	assert_int_equal(run("diff --json samples/sample.nb " NBG_CORPUS_DIR
			     "/v2/face_detector_nbg_int16.nb", &out), 1);
	json_t *j = json_loads(out, 0, NULL);
	assert_non_null(j);
	assert_false(json_is_true(json_object_get(j, "identical")));
	json_decref(j);
	free(out);
	assert_int_equal(run("diff samples/sample.nb", NULL), 2);
	assert_int_equal(run("diff a b c", NULL), 2);
	assert_int_equal(run("diff samples/sample.nb /nonexistent.nb", NULL), 2);
	assert_int_equal(run("diff samples/sample.nb meson.build", NULL), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_controlled_ab),
		cmocka_unit_test(test_added_section),
		cmocka_unit_test(test_alignment_byte),
		cmocka_unit_test(test_corpus_pair),
		cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
