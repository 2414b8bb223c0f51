/*
 * test_first_screen.c - what a new user reads first says what the bytes say:
 * target names as `nbg targets` prints them, limits that are refused when
 * they are not numbers, the operation count explained, the v1 coefficient
 * table under one name, a stored core count of 0 said as such, the network
 * name under one JSON key, and diff counts that match the lines below them.
 * Expected values come from the files' raw bytes (written here or read at
 * the offsets of doc/format-v1.md and doc/format-v2.md) and from
 * TARGETS-style facts the test states.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "corpus.h"
#include "fixture.h"
#include "seeds.h"

static char *tmp;
static char in_tmp[600];
#define run_in_tmp(...) fx_run_nbg(in_tmp, __VA_ARGS__)

static int setup(void **state)
{
	tmp = fx_tmpdir("nbg-first-screen");
	snprintf(in_tmp, sizeof(in_tmp), "cd '%s' &&", tmp);
	return 0;
}

static int teardown(void **state)
{
	fx_rmtree(tmp);
	free(tmp);
	return 0;
}

static void put(const char *name, const uint8_t *b, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static void expect(fx_run_result r, int status, const char *out_has, const char *err_has)
{
	if (r.status != status || (out_has && !strstr(r.out, out_has)) ||
	    (err_has && !strstr(r.err, err_has)))
		fail_msg("wanted exit %d, \"%s\" / \"%s\"; got %d:\n%s\n%s", status,
			 out_has ? out_has : "", err_has ? err_has : "", r.status, r.out, r.err);
	fx_run_free(&r);
}

/* --expect-target takes the SoC names nbg targets prints: one SoC, one
 * target; a name two targets share is refused, naming both. */
static void test_expect_target_soc(void **state)
{
	/* the sample's header target word (offset 8) is 0x1000003b, the A733 */
	expect(fx_run_nbg(FX_IN_SOURCE, "verify --expect-target A733 samples/sample.nb"), 0,
	       "samples/sample.nb: OK", NULL);
	expect(fx_run_nbg(FX_IN_SOURCE, "verify --expect-target a311d samples/sample.nb"), 1,
	       "FAIL target-mismatch at offset 8", NULL);
	expect(fx_run_nbg(FX_IN_SOURCE, "verify --expect-target T931 samples/sample.nb"), 2, NULL,
	       "names the SoC of 2 targets: 0x0000007d");
	expect(fx_run_nbg(FX_IN_SOURCE, "verify --expect-target T93 samples/sample.nb"), 2, NULL,
	       "nor a SoC name");
}

/* A limit variable that is not a byte count is refused, not ignored. */
static void test_limits_refused(void **state)
{
	expect(fx_run_nbg(FX_IN_SOURCE " NBG_MAX_STDIN=abc", "verify - < samples/sample.nb"), 2,
	       NULL, "NBG_MAX_STDIN='abc' is not a byte count");
	expect(fx_run_nbg(FX_IN_SOURCE " NBG_MAX_FILE_SIZE=12Q", "verify samples/sample.nb"), 2,
	       NULL, "NBG_MAX_FILE_SIZE='12Q' is not a byte count");
	expect(fx_run_nbg(FX_IN_SOURCE " NBG_MAX_STDIN=1K", "verify - < samples/sample.nb"), 3,
	       "more than 1024 bytes", NULL);
	expect(fx_run_nbg(FX_IN_SOURCE " NBG_MAX_STDIN=none", "verify - < samples/sample.nb"), 0,
	       "-: OK", NULL);
}

/* v2: operation_count (NETWORK_INFO +0x50) is the OPERATIONS records
 * (directory size / entry size) + 3; the text leads with the records (what
 * the runtime and the vendor's inspector count) and gives NETWORK_INFO's
 * figure beside; the JSON has the network name at network_name as for v1. */
static void test_v2_counts_and_name(void **state)
{
	size_t n;
	uint8_t *b = fx_read_file(NBG_SOURCE_DIR "/samples/sample.nb", &n);
	size_t ni = fx_dir_entry(b, n, 35), ops = fx_dir_entry(b, n, 4);
	uint32_t count = fx_get32(b + fx_get32(b + ni + 4) + 0x50);
	uint32_t recs = fx_get32(b + ops + 12) / fx_get32(b + ops + 32);
	char want[160];

	assert_int_equal(count, recs + 3);
	snprintf(want, sizeof(want), "  Operations:                %u (OPERATIONS records; "
		 "NETWORK_INFO says %u, adding the 3 implicit run operations; absolute ", recs, count);
	expect(fx_run_nbg(FX_IN_SOURCE, "inspect samples/sample.nb"), 0, want, NULL);

	fx_run_result r = fx_run_nbg(FX_IN_SOURCE, "inspect --json samples/sample.nb");
	json_t *doc = json_loads(r.out, 0, NULL);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "network_name")),
			    (const char *)b + fx_get32(b + ni + 4));
	json_decref(doc);
	fx_run_free(&r);
	free(b);
}

/* v1: entries 5 and 6 are the coefficient table and data, named LCDT and
 * LCD in the section table and the ledger; a stored core count of 0 (the
 * feature database's byte 8) is shown as stored, with what the vendor's
 * inspector prints. */
static void test_v1_names(void **state)
{
	size_t n;
	uint8_t *b = seed_v1_build(0x1000f, 0, &n);

	b[92 + 8] = 0; /* core count */
	put("v1.nb", b, n);
	expect(run_in_tmp("inspect %s", "v1.nb"), 0,
	       "  Cores:                     0 as stored (the vendor's inspector prints 1)", NULL);
	expect(run_in_tmp("inspect %s", "v1.nb"), 0, "] LCD(6) ", NULL);
	expect(run_in_tmp("inspect %s", "v1.nb"), 0, "] LCDT(5) ", NULL);
	expect(run_in_tmp("ledger %s", "v1.nb"), 0, " section 6 LCD ", NULL);
	fx_run_result r = run_in_tmp("inspect %s", "v1.nb");
	assert_null(strstr(r.out, "COEF_HEADER"));
	fx_run_free(&r);
	free(b);
}

/* diff: the summary counts the I/O records only in one file apart from the
 * owner ranges, so "only in A" above "- output 1 ... only in A" agrees. */
static void test_diff_counts(void **state)
{
	fx_spec *s = fx_default();
	size_t na, nb;
	uint8_t *a = fx_build(s, &na), *b;

	fx_resize(fx_find(s, 2), 112); /* one output record */
	fx_put32(fx_find(s, 35)->data + 0x44, 1);
	b = fx_build(s, &nb);
	put("a.nb", a, na);
	put("b.nb", b, nb);
	fx_run_result r = run_in_tmp("diff a.nb %s", "b.nb");
	if (r.status != 1 || !strstr(r.out, ", 1 I/O record only in A, 0 only in B;") ||
	    !strstr(r.out, "  - output 1 "))
		fail_msg("diff: %d\n%s%s", r.status, r.out, r.err);
	fx_run_free(&r);
	fx_free(s);
	free(a);
	free(b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest synth[] = {
		cmocka_unit_test(test_expect_target_soc),
		cmocka_unit_test(test_limits_refused),
		cmocka_unit_test(test_v2_counts_and_name),
		cmocka_unit_test(test_v1_names),
		cmocka_unit_test(test_diff_counts),
	};
	return tc_main(argc, argv, "test_first_screen", synth, TC_COUNT(synth), NULL, 0, setup,
		       teardown);
}
