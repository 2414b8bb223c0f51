/*
 * test_export.c - `nbg inspect --format` on synthesized files, for what the
 * real corpus does not hold (tests/check_export.py covers the real files): an
 * affine v2 input, a name that needs escaping, and a 4-bit output that
 * ACUITY's nbg_meta.json cannot describe.  Each expected line is written
 * here from the record the test builds, by the grammar of doc/export.md.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "fixture.h"

static char dir[] = "/tmp/nbgexport-XXXXXX";

/* The default fixture with INPUT replaced by one affine UINT8 record named
 * `name`, and output 1 given data format `out1_fmt`; written to dir/NAME. */
static const char *build(const char *file, const char *name, uint32_t out1_fmt)
{
	static char path[600];
	uint8_t rec[112], *out, *b;
	uint32_t dims[4] = { 28, 28, 1, 1 }, half = 0x3f000000; /* 0.5f */
	size_t n;
	fx_spec *s = fx_default();
	FILE *f;

	fx_io_record(rec, 4, dims, 2, 2, half, (uint32_t)-3, name);
	fx_set(s, 1, rec, 112, 0, 112);
	out = fx_find(s, 2)->data;
	fx_put32(out + 112 + 0x1c, out1_fmt);
	b = fx_build(s, &n);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
	free(b);
	fx_free(s);
	return path;
}

static void test_affine_and_escapes(void **state)
{
	/* ',' and '\' end or escape the vpm name field: both become \xNN */
	const char *p = build("a.nb", "in,put\\x\xff", 1);
	fx_run_result r = fx_run_nbg("", "inspect --format vpm %s", p);

	assert_int_equal(r.status, 0);
	assert_string_equal(r.out,
			    "input 0 dim 28 28 1 1, data_format=2, quant_format=2, "
			    "name=in\\x2cput\\x5cx\\xff, scale=0.5, zero_point=-3\n"
			    "output 0 dim 16 896 1, data_format=5, quant_format=1, "
			    "name=uid_90_out_0, dfp=7\n"
			    "output 1 dim 1 896 1, data_format=1, quant_format=0, "
			    "name=uid_89_out_0\n");
	fx_run_free(&r);

	r = fx_run_nbg("", "inspect --format jevois %s", p);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "intensors: \"8U:1x1x28x28:AA:0.5:-3\"\n"
				   "outtensors: \"16S:1x896x16:DFP:7, 16F:1x896x1\"\n");
	fx_run_free(&r);

	r = fx_run_nbg("", "inspect --format meta %s", p);
	assert_int_equal(r.status, 0);
	json_t *j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	json_t *in = json_object_get(json_object_get(j, "Inputs"), "in,put\\x5cx\\xff_0");
	assert_non_null(in);
	assert_string_equal(json_string_value(json_object_get(in, "quantizer")),
			    "asymmetric_affine");
	json_t *q = json_object_get(in, "quantize");
	assert_string_equal(json_string_value(json_object_get(q, "qtype")), "u8");
	assert_true(json_real_value(json_object_get(q, "scale")) == 0.5);
	assert_int_equal(json_integer_value(json_object_get(q, "zero_point")), -3);
	json_t *shape = json_object_get(in, "shape");
	assert_int_equal(json_array_size(shape), 4);
	assert_int_equal(json_integer_value(json_array_get(shape, 0)), 1);
	assert_int_equal(json_integer_value(json_array_get(shape, 3)), 28);
	json_decref(j);
	fx_run_free(&r);
	(void)state;
}

static void test_meta_refuses_int4(void **state)
{
	const char *p = build("b.nb", "input", 13);
	fx_run_result r = fx_run_nbg("", "inspect --format meta %s", p);

	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	assert_non_null(strstr(r.err, "output 1 has data format INT4 (13), which ACUITY's "
				      "nbg_meta.json has no dtype for"));
	fx_run_free(&r);
	/* vpm names every format by its number */
	r = fx_run_nbg("", "inspect --format vpm %s", p);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "output 1 dim 1 896 1, data_format=13, quant_format=0"));
	fx_run_free(&r);
	(void)state;
}

/* The quantization object of side[i] in an inspect --json document. */
static json_t *quant_of(json_t *doc, const char *side, size_t i)
{
	json_t *q = json_object_get(json_array_get(json_object_get(doc, side), i), "quantization");
	assert_non_null(q);
	return q;
}

/* An affine scale that is NaN or infinite: json_real() refuses it, and the
 * `scale` key disappeared from inspect --json and --format meta.  It is
 * null there, and the note io-scale-not-finite, at the scale's word, says
 * why. */
static void test_scale_not_finite(void **state)
{
	uint8_t rec[112], *out, *b;
	uint32_t dims[4] = { 28, 28, 1, 1 };
	size_t n;
	char path[600];
	fx_spec *s = fx_default();
	(void)state;
	fx_io_record(rec, 4, dims, 2, 2, 0x7fc00000u /* NaN */, 5, "nan-scale");
	fx_set(s, 1, rec, 112, 0, 112);
	out = fx_find(s, 2)->data; /* output 0: INT16, made affine with +infinity */
	fx_put32(out + 0x24, 2);
	fx_put32(out + 0x28, 0x7f800000u);
	b = fx_build(s, &n);
	fx_free(s);
	snprintf(path, sizeof(path), "%s/scale.nb", dir);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
	/* where the two records are, from the raw directory (INPUT type 1,
	 * OUTPUT type 2: the payload offset at +4 of the entry) */
	uint64_t in_at = fx_get32(b + fx_dir_entry(b, n, 1) + 4);
	uint64_t out_at = fx_get32(b + fx_dir_entry(b, n, 2) + 4);
	free(b);

	fx_run_result r = fx_run_nbg("", "inspect --json %s", path);
	assert_int_equal(r.status, 0);
	json_t *doc = json_loads(r.out, 0, NULL);
	assert_non_null(doc);
	json_t *qi = quant_of(doc, "inputs", 0), *qo = quant_of(doc, "outputs", 0);
	assert_string_equal(json_string_value(json_object_get(qi, "interpretation")), "affine");
	assert_true(json_is_null(json_object_get(qi, "scale")));
	assert_int_equal(json_integer_value(json_object_get(qi, "zero_point")), 5);
	assert_true(json_is_null(json_object_get(qo, "scale")));
	size_t i, seen = 0;
	json_t *note;
	json_array_foreach(json_object_get(doc, "notes"), i, note) {
		if (strcmp(json_string_value(json_object_get(note, "id")), "io-scale-not-finite"))
			continue;
		json_int_t at = json_integer_value(json_object_get(note, "offset"));
		const char *text = json_string_value(json_object_get(note, "text"));
		if (at == (json_int_t)(in_at + 0x28))
			assert_non_null(strstr(text, "input 0 affine scale is NaN"));
		else if (at == (json_int_t)(out_at + 0x28))
			assert_non_null(strstr(text, "output 0 affine scale is +infinity"));
		else
			fail_msg("a note at %lld", (long long)at);
		seen++;
	}
	assert_int_equal(seen, 2);
	json_decref(doc);
	fx_run_free(&r);

	r = fx_run_nbg("", "inspect --format meta %s", path);
	assert_int_equal(r.status, 0);
	doc = json_loads(r.out, 0, NULL);
	assert_non_null(doc);
	json_t *qm = json_object_get(json_object_get(json_object_get(json_object_get(doc, "Inputs"),
								     "nan-scale_0"), "quantize"),
				     "scale");
	assert_non_null(qm); /* the key is there */
	assert_true(json_is_null(qm));
	json_decref(doc);
	fx_run_free(&r);
	/* the text report names the note */
	r = fx_run_nbg("", "inspect %s", path);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "io-scale-not-finite"));
	fx_run_free(&r);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[64];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_affine_and_escapes),
		cmocka_unit_test(test_meta_refuses_int4),
		cmocka_unit_test(test_scale_not_finite),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
