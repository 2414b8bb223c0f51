/*
 * test_cli.c - the nbg command as a user runs it: exit codes, the messages
 * people act on, and golden output (stdout compared with tests/golden/;
 * NBG_REGEN_GOLDEN=1 rewrites the golden files after an intended change).
 * The committed sample (samples/sample.nb) must equal what its builder
 * (tests/sample_model.c) makes, so it can always be rebuilt.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "corpus.h"
#include "fixture.h"
#include "nbg/nbg.h"
#include "sample_model.h"

static char *slurp(const char *path)
{
	size_t n;
	char *s = (char *)fx_read_file(path, &n);
	if (s)
		s[n] = '\0';
	return s;
}

static void golden(const char *name, const char *got)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/tests/golden/%s", NBG_SOURCE_DIR, name);
	if (getenv("NBG_REGEN_GOLDEN")) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(got, f);
		fclose(f);
		return;
	}
	char *want = slurp(path);
	if (!want)
		fail_msg("missing %s (NBG_REGEN_GOLDEN=1 creates it)", path);
	if (strcmp(want, got))
		fail_msg("%s differs from the output:\n%s", path, got);
	free(want);
}

static void test_sample_is_reproducible(void **state)
{
	size_t n, m;
	uint8_t *built = sm_build(&n);
	uint8_t *file = fx_read_file(NBG_SOURCE_DIR "/samples/sample.nb", &m);
	if (getenv("NBG_REGEN_GOLDEN")) {
		FILE *f = fopen(NBG_SOURCE_DIR "/samples/sample.nb", "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(built, 1, n, f), n);
		fclose(f);
	} else {
		assert_non_null(file);
		assert_int_equal(n, m);
		assert_memory_equal(built, file, n);
	}
	free(built);
	free(file);
}

static void test_inspect_sample(void **state)
{
	fx_run_result r = fx_run_nbg(FX_IN_SOURCE, "%s", "inspect samples/sample.nb");
	assert_int_equal(r.status, 0);
	/* the builder's input record (tests/sample_model.c): dims 1,28,28,1
	 * innermost first, UINT8 affine, scale 1/255, zero point 0 */
	assert_non_null(strstr(r.out, "  input 0: dims [1,28,28,1] (file order 1,28,28,1) "
				      "UINT8 affine scale=0.00392157 zp=0 bytes=784 aligned=832 "
				      "name=input/output[0]\n"));
	assert_non_null(strstr(r.out, "  Version:                   0x00020000 (v2)\n"));
	assert_non_null(strstr(r.out, "  Network name:              " SM_NAME "\n"));
	assert_string_equal(r.err, "");
	golden("sample.inspect.txt", r.out);
	fx_run_free(&r);
}

static void test_inspect_json(void **state)
{
	fx_run_result r = fx_run_nbg(FX_IN_SOURCE, "%s", "inspect --json samples/sample.nb");
	json_error_t je;
	assert_int_equal(r.status, 0);
	json_t *j = json_loads(r.out, 0, &je);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "valid")));
	json_t *in0 = json_array_get(json_object_get(j, "inputs"), 0);
	json_t *outer = json_object_get(in0, "dimensions_outermost_first");
	assert_int_equal(json_integer_value(json_array_get(outer, 1)), 28);
	assert_int_equal(json_integer_value(json_array_get(outer, 3)), 1);
	json_t *q = json_object_get(in0, "quantization");
	assert_int_equal(json_integer_value(json_object_get(q, "zero_point")), 0);
	assert_float_equal(json_real_value(json_object_get(q, "scale")), 1.0 / 255.0, 1e-9);
	assert_string_equal(json_string_value(json_object_get(in0, "data_format_name")), "UINT8");
	json_decref(j);
	golden("sample.inspect.json", r.out);
	fx_run_free(&r);
}

static void test_corpus_inspect(void **state)
{
	fx_run_result r = fx_run_nbg(FX_IN_SOURCE, "%s", "inspect " NBG_CORPUS_DIR "/v2/face_detector_nbg_int16.nb");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "input 0: dims [1,128,128,3] (file order 3,128,128,1) "
				      "INT16 dfp fl=15"));
	assert_non_null(strstr(r.out, "output 0: dims [1,896,16] (file order 16,896,1) INT16 "
				      "dfp fl=7"));
	assert_non_null(strstr(r.out, "0x52abdff3 (computed 0x52abdff3, matches)"));
	fx_run_free(&r);
}

static void write_file(const char *path, const uint8_t *b, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
}

static void test_failures(void **state)
{
	size_t n;
	uint8_t *b = fx_read_file(NBG_SOURCE_DIR "/samples/sample.nb", &n);
	char bad[] = "/tmp/nbgcli-badXXXXXX", args[512];
	int fd = mkstemp(bad);
	assert_true(fd >= 0);
	close(fd);
	/* flip one byte of the NN section: its checksum record no longer matches */
	size_t nn = fx_dir_entry(b, n, 7);
	b[fx_get32(b + nn + 4) + 3] ^= 0x10;
	write_file(bad, b, n);

	snprintf(args, sizeof(args), "inspect %s", bad);
	fx_run_result r = fx_run_nbg(FX_IN_SOURCE, "%s", args);
	/* the failure, then the report marked unverified (as the vendor's
	 * inspector, which shows such a file too), exit 1 */
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "section-checksum-mismatch at offset "));
	assert_non_null(strstr(r.err, "section NN has CRC-32"));
	assert_non_null(strstr(r.out, "Integrity:                 FAILED, "
				      "section-checksum-mismatch at offset "));
	assert_non_null(strstr(r.out, "this report is unverified"));
	assert_non_null(strstr(r.out, "crc MISMATCH"));
	fx_run_free(&r);

	snprintf(args, sizeof(args), "inspect --json %s", bad);
	r = fx_run_nbg(FX_IN_SOURCE, "%s", args);
	assert_int_equal(r.status, 1);
	json_t *j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "error"), "code")),
			    "section-checksum-mismatch");
	assert_true(json_is_false(json_object_get(j, "valid")));
	assert_string_equal(json_string_value(json_object_get(j, "integrity")), "failed");
	json_decref(j);
	fx_run_free(&r);

	/* the CPU backend's plan is never made from it; --json still writes a
	 * document: the failure, as inspect --json's "error" */
	snprintf(args, sizeof(args), "run --backend cpu --check --json %s", bad);
	r = fx_run_nbg(FX_IN_SOURCE, "%s", args);
	assert_int_equal(r.status, 1);
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "error"), "code")),
			    "section-checksum-mismatch");
	assert_true(json_is_false(json_object_get(j, "valid")));
	assert_null(json_object_get(j, "steps"));
	json_decref(j);
	assert_non_null(strstr(r.err, "section-checksum-mismatch at offset "));
	fx_run_free(&r);

	/* verify: one line per file, keeps going, lists every mismatch, exit 1 */
	snprintf(args, sizeof(args), "verify samples/sample.nb %s", bad);
	r = fx_run_nbg(FX_IN_SOURCE, "%s", args);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "samples/sample.nb: OK v2 0x00020000 target 0x1000003b"));
	assert_non_null(strstr(r.out, ": FAIL section-checksum-mismatch at offset"));
	assert_non_null(strstr(r.out, ":   section NN CRC-32 0x"));
	fx_run_free(&r);

	/* missing file: exit 3, even beside an invalid one */
	snprintf(args, sizeof(args), "verify %s /nonexistent/x.nb", bad);
	r = fx_run_nbg(FX_IN_SOURCE, "%s", args);
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.out, "/nonexistent/x.nb: ERROR cannot open"));
	fx_run_free(&r);
	r = fx_run_nbg(FX_IN_SOURCE, "%s", "inspect /nonexistent/x.nb");
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.err, "No such file or directory"));
	fx_run_free(&r);
	r = fx_run_nbg(FX_IN_SOURCE, "%s", "inspect samples");
	assert_int_equal(r.status, 3);
	fx_run_free(&r);

	/* a path that is not UTF-8 still gets a complete JSON document */
	char odd[64];
	snprintf(odd, sizeof(odd), "/tmp/nbgcli-\xff-%d.nb", (int)getpid());
	write_file(odd, (const uint8_t *)"XXXX", 4);
	snprintf(args, sizeof(args), "inspect --json '%s'", odd);
	r = fx_run_nbg(FX_IN_SOURCE, "%s", args);
	assert_int_equal(r.status, 1);
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_non_null(strstr(json_string_value(json_object_get(j, "path")), "\\377"));
	json_decref(j);
	fx_run_free(&r);
	unlink(odd);

	/* not an NBG at all */
	r = fx_run_nbg(FX_IN_SOURCE, "%s", "inspect meson.build");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "bad-magic at offset 0"));
	fx_run_free(&r);

	unlink(bad);
	free(b);
}

static void test_usage(void **state)
{
	const char *cases[] = { "", "inspect", "inspect --bogus samples/sample.nb",
				"inspect --only samples/sample.nb",
				"inspect --format xml samples/sample.nb",
				"inspect --format vpm --layers samples/sample.nb",
				"inspect --expect-target NOSUCH samples/sample.nb",
				"verify --expect-target 0x1x samples/sample.nb", "targets --x",
				"verify", "fields --x", "frobnicate", "codes --x",
				"run --backend cpu --json samples/sample.nb --input x --output-dir y",
				"run --check --json samples/sample.nb" };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fx_run_result r = fx_run_nbg(FX_IN_SOURCE, "%s", cases[i]);
		if (r.status != 2)
			fail_msg("'nbg %s' exited %d, want 2", cases[i], r.status);
		assert_true(strlen(r.err) > 0);
		fx_run_free(&r);
	}
	fx_run_result r = fx_run_nbg(FX_IN_SOURCE, "%s", "help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "nbg inspect [--json]"));
	fx_run_free(&r);
}

static void test_fields(void **state)
{
	fx_run_result r = fx_run_nbg(FX_IN_SOURCE, "%s", "fields --json");
	assert_int_equal(r.status, 0);
	json_t *j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	size_t n;
	nbg_field_map(&n);
	assert_int_equal(json_array_size(j), n);
	json_t *first = json_array_get(j, 0);
	assert_string_equal(json_string_value(json_object_get(first, "key")), "magic");
	assert_string_equal(json_string_value(json_object_get(first, "evidence")), "W+P+C");
	json_decref(j);
	fx_run_free(&r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_is_reproducible),
		cmocka_unit_test(test_inspect_sample),
		cmocka_unit_test(test_inspect_json),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_fields),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_corpus_inspect),
	};
	return tc_main(argc, argv, "test_cli", tests, TC_COUNT(tests), corpus, TC_COUNT(corpus),
		       NULL, NULL);
}
