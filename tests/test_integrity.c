/*
 * test_integrity.c - what `nbg verify` and `nbg inspect` say a file's bytes
 * were checked with, per version: v2 section CRCs and the file checksum;
 * the v1 nbg_crc_sum under its version's rule (0x1001e: the whole file with
 * the word read as zero; 0x10020: the file from its first section on),
 * enforced; a checksum word no rule gives (checksum-unknown); versions with
 * no checksum (structure only); the whole-file SHA-256 given by the caller
 * (--sha256-expect, --manifest); the report of a file whose checksum fails;
 * the one-pass parse (NBG_PARSE_KEEP_UNVERIFIED) against the strict and the
 * NBG_PARSE_NO_CRC_CHECK parses it stands for, both run in the test.
 *
 * Every expected checksum is computed here with zlib from raw bytes at
 * offsets written out from doc/format-v1.md, and every expected SHA-256
 * with OpenSSL; v1 files are synthesized by the fuzz seed writer (which
 * does not use libnbg) or taken from the real files.
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
#include <openssl/sha.h>
#include <zlib.h>

#include "corpus.h"
#include "fixture.h"
#include "nbg/nbg.h"
#include "seeds.h"

#define CRC_AT 108u /* nbg_crc_sum: feature database (offset 92) word 4 */
#define SAMPLE NBG_SOURCE_DIR "/samples/sample.nb"
#define LENET_V3 NBG_MODELS_DIR "/lenet-caffe/lenet_v3_0x10020.nb"
#define LENET_V2 NBG_MODELS_DIR "/lenet-caffe/lenet_v2_0x10016.nb"
#define F_1001E NBG_CORPUS_DIR "/v1/1001e_ba_conv2d_relu_maxpool2d_fp32.nb"

static char *tmp;

/* ------------------------------------------------------------ helpers */

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* zlib's CRC-32 of the whole buffer with the nbg_crc_sum word read as zero. */
static uint32_t crc_whole(const uint8_t *b, size_t n)
{
	static const uint8_t zero4[4];
	uLong c = crc32(0, b, CRC_AT);
	c = crc32(c, zero4, 4);
	return (uint32_t)crc32(c, b + CRC_AT + 4, (uInt)(n - CRC_AT - 4));
}

/* The first byte of the first non-empty section of a v1 file, from the raw
 * (offset, size) entry table: it starts at 92 + 256 (feature database) + 20
 * (memory) + 8 (VIP SRAM, from 0x10008) and ends where the input table
 * (entry 0's offset) begins. */
static uint32_t v1_first_section(const uint8_t *b, size_t n)
{
	uint32_t es = 92 + 256 + 20 + 8, end = rd32(b + es), first = (uint32_t)n;

	for (uint32_t at = es; at + 8 <= end && at + 8 <= n; at += 8)
		if (rd32(b + at + 4) && rd32(b + at) < first)
			first = rd32(b + at);
	return first;
}

static uint32_t crc_from(const uint8_t *b, size_t n, uint32_t from)
{
	return (uint32_t)crc32(0, b + from, (uInt)(n - from));
}

static nbg_model *parse(const uint8_t *b, size_t n, unsigned flags, nbg_error *err)
{
	nbg_parse_options o = { .size = sizeof(o), .flags = flags };
	nbg_model *m = NULL;

	nbg_parse(b, n, &o, &m, err);
	return m;
}

static nbg_model *parse_ok(const uint8_t *b, size_t n)
{
	nbg_error err;
	nbg_model *m = parse(b, n, 0, &err);

	if (!m)
		fail_msg("unexpected failure %s at %llu: %s", nbg_code_name(err.code),
			 (unsigned long long)err.offset, err.message);
	return m;
}

static const char *describe(const nbg_model *m)
{
	static char buf[256];
	return nbg_integrity_describe(m, buf, sizeof(buf));
}

/* A strict parse fails with `code` at `offset`; a parse without the CRC
 * checks gives a model whose integrity is failed and whose
 * nbg_integrity_failure() is that very error. */
static void fails_then_unverified(const uint8_t *b, size_t n, nbg_code code, uint64_t offset)
{
	nbg_error strict, again;
	nbg_model *m = parse(b, n, 0, &strict);

	assert_null(m);
	assert_int_equal(strict.code, code);
	assert_int_equal(strict.offset, offset);
	m = parse(b, n, NBG_PARSE_NO_CRC_CHECK, &again);
	assert_non_null(m);
	assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_FAILED);
	assert_string_equal(nbg_integrity_name(nbg_model_integrity(m)), "failed");
	assert_int_equal(nbg_integrity_failure(m, &again), code);
	assert_int_equal(again.offset, strict.offset);
	assert_string_equal(again.field, strict.field);
	assert_string_equal(again.message, strict.message);
	nbg_model_free(m);
}

/* Writes n bytes at tmp/name; returns the path (static, one at a time). */
static const char *put(const char *name, const uint8_t *b, size_t n)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	return path;
}

static void sha_hex(const uint8_t *b, size_t n, char hex[65])
{
	uint8_t d[32];
	SHA256(b, n, d);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* nbg run in the temporary directory */
static char in_tmp[600];
#define run_in_tmp(...) fx_run_nbg(in_tmp, __VA_ARGS__)

static void expect_run(fx_run_result r, int status, const char *out_has)
{
	if (r.status != status || (out_has && !strstr(r.out, out_has)))
		fail_msg("wanted exit %d with \"%s\"; got %d:\n%s\n%s", status,
			 out_has ? out_has : "", r.status, r.out, r.err);
	fx_run_free(&r);
}

static int setup(void **state)
{
	tmp = fx_tmpdir("nbg-integrity");
	snprintf(in_tmp, sizeof(in_tmp), "cd '%s' &&", tmp);
	return 0;
}

static int teardown(void **state)
{
	fx_rmtree(tmp);
	free(tmp);
	return 0;
}

/* ------------------------------------------------------- synthesized */

/* The committed sample (v2): every CRC record and the file checksum. */
static void test_v2_verified_and_failed(void **state)
{
	size_t n;
	uint8_t *b = fx_read_file(SAMPLE, &n);
	size_t cks = fx_dir_entry(b, n, NBG_SEC_CHECKSUM);
	size_t coef = fx_dir_entry(b, n, NBG_SEC_COEF_DATA);
	nbg_model *m;
	char want[128];

	assert_non_null(b);
	assert_true(cks && coef);
	m = parse_ok(b, n);
	assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_VERIFIED);
	/* CHECKSUM records are 8 bytes: the directory record's size word / 8 */
	snprintf(want, sizeof(want), "%u section CRC-32s and the file checksum match",
		 rd32(b + cks + 12) / 8);
	assert_string_equal(describe(m), want);
	nbg_model_free(m);

	/* One COEF_DATA byte: its CHECKSUM record (the one naming type 24)
	 * no longer matches; the report says which record. */
	uint32_t coef_at = rd32(b + coef + 4), cks_at = rd32(b + cks + 4), rec = 0;
	for (uint32_t i = 0; i < rd32(b + cks + 12) / 8; i++)
		if (rd32(b + cks_at + 8 * i) == NBG_SEC_COEF_DATA)
			rec = cks_at + 8 * i;
	assert_true(rec);
	b[coef_at + 10] ^= 0x20;
	fails_then_unverified(b, n, NBG_E_SECTION_CHECKSUM_MISMATCH, rec + 4);
	free(b);
}

/* A version that carries no checksum: a changed byte is not detectable and
 * the model says only the structure was checked. */
static void test_v1_no_checksum(void **state)
{
	size_t n;
	uint8_t *b = seed_v1_build(0x10009, 0, &n);
	nbg_model *m = parse_ok(b, n);

	assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_STRUCTURE_ONLY);
	assert_string_equal(nbg_integrity_name(nbg_model_integrity(m)), "structure-only");
	assert_string_equal(describe(m), "structure only: this version carries no checksum");
	nbg_model_free(m);
	b[n - 1] ^= 1;
	m = parse_ok(b, n);
	assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_STRUCTURE_ONLY);
	nbg_model_free(m);
	free(b);
}

/* 0x1001e: the whole file with the word read as zero, enforced. */
static void test_v1_1001e_rule(void **state)
{
	size_t n;
	uint8_t *b = seed_v1_build(0x1001e, 0, &n);
	nbg_model *m;

	wr32(b + CRC_AT, 0); /* not filled in */
	m = parse_ok(b, n);
	assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_STRUCTURE_ONLY);
	assert_string_equal(describe(m),
			    "structure only: nbg_crc_sum is 0, the file carries no checksum");
	nbg_model_free(m);

	wr32(b + CRC_AT, crc_whole(b, n));
	m = parse_ok(b, n);
	assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_VERIFIED);
	assert_true(nbg_model_v1(m)->crc_sum_enforced);
	assert_string_equal(nbg_model_v1(m)->crc_sum_rule, "whole-file");
	assert_string_equal(describe(m),
			    "nbg_crc_sum matches: CRC-32 of the whole file with the word read as zero");
	nbg_model_free(m);

	b[n - 1] ^= 1; /* any byte, the first section's or not */
	fails_then_unverified(b, n, NBG_E_V1_CRC_SUM_MISMATCH, CRC_AT);
	b[n - 1] ^= 1;
	b[20] ^= 1; /* the network name */
	fails_then_unverified(b, n, NBG_E_V1_CRC_SUM_MISMATCH, CRC_AT);
	free(b);
}

/* 0x10020: the file from its first section on, enforced; the bytes before
 * it are not covered, and the model says so. */
static void test_v1_10020_rule(void **state)
{
	size_t n;
	uint8_t *b = seed_v1_build(0x10020, 0, &n);
	uint32_t first = v1_first_section(b, n);
	nbg_model *m;
	char want[256];

	wr32(b + CRC_AT, crc_from(b, n, first));
	m = parse_ok(b, n);
	assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_VERIFIED);
	assert_string_equal(nbg_model_v1(m)->crc_sum_rule, "from-first-section");
	assert_int_equal(nbg_model_v1(m)->crc_sum_from, first);
	snprintf(want, sizeof(want), "nbg_crc_sum matches: CRC-32 from offset %u (the first "
		 "section) to the end; the %u bytes before it are checked for structure only",
		 first, first);
	assert_string_equal(describe(m), want);
	nbg_model_free(m);

	b[20] ^= 1; /* the network name: before the first section, not covered */
	m = parse_ok(b, n);
	assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_VERIFIED);
	nbg_model_free(m);
	b[20] ^= 1;

	b[n - 1] ^= 1;
	fails_then_unverified(b, n, NBG_E_V1_CRC_SUM_MISMATCH, CRC_AT);
	free(b);
}

/* A version with no established rule: a word either rule gives is a match
 * (verified, not enforced); any other is checksum-unknown, never a failure. */
static void test_v1_unruled_version(void **state)
{
	size_t n;
	uint8_t *b = seed_v1_build(0x10017, 0, &n);
	uint32_t first = v1_first_section(b, n);
	nbg_model *m;

	wr32(b + CRC_AT, crc_whole(b, n));
	m = parse_ok(b, n);
	assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_VERIFIED);
	assert_false(nbg_model_v1(m)->crc_sum_enforced);
	assert_string_equal(nbg_model_v1(m)->crc_sum_rule, "whole-file");
	nbg_model_free(m);

	wr32(b + CRC_AT, crc_from(b, n, first));
	m = parse_ok(b, n);
	assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_VERIFIED);
	assert_string_equal(nbg_model_v1(m)->crc_sum_rule, "from-first-section");
	nbg_model_free(m);

	b[n - 1] ^= 1;
	m = parse_ok(b, n);
	assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_CHECKSUM_UNKNOWN);
	assert_string_equal(nbg_integrity_name(nbg_model_integrity(m)), "checksum-unknown");
	assert_non_null(strstr(describe(m), "checksum present, algorithm unknown: not checked"));
	assert_null(nbg_model_v1(m)->crc_sum_rule);
	nbg_model_free(m);
	free(b);
}

/* ------------------------------------------------- the one-pass parse */

static int checksum_code(nbg_code c)
{
	return c == NBG_E_SECTION_CHECKSUM_MISMATCH || c == NBG_E_FILE_CHECKSUM_MISMATCH ||
	       c == NBG_E_V1_CRC_SUM_MISMATCH;
}

static void errors_equal(const nbg_error *a, const nbg_error *b)
{
	assert_int_equal(a->code, b->code);
	assert_int_equal(a->offset, b->offset);
	assert_string_equal(a->field, b->field);
	assert_string_equal(a->message, b->message);
	assert_memory_equal(a, b, sizeof(*a));
}

/* A parse with NBG_PARSE_KEEP_UNVERIFIED against the two parses it stands
 * for, both run here: its return value and error are the strict parse's;
 * it gives a model exactly when the strict parse does, or when the strict
 * parse failed on a checksum and a parse with NBG_PARSE_NO_CRC_CHECK gives
 * one; that model is the latter's (the same report).  Returns the strict
 * code; *unchecked gets the NO_CRC_CHECK parse's. */
static nbg_code one_pass_equals_two(const uint8_t *b, size_t n, nbg_code *unchecked)
{
	nbg_error strict, lenient, one, nul;
	nbg_model *ms = parse(b, n, 0, &strict);
	nbg_model *ml = parse(b, n, NBG_PARSE_NO_CRC_CHECK, &lenient);
	nbg_parse_options o = { .size = sizeof(o), .flags = NBG_PARSE_KEEP_UNVERIFIED };
	nbg_model *m1 = NULL;
	nbg_code rc = nbg_parse(b, n, &o, &m1, &one);
	int want_model = ms || (checksum_code(strict.code) && ml);

	*unchecked = ml ? NBG_OK : lenient.code;
	assert_int_equal(rc, ms ? NBG_OK : strict.code);
	if (ms) {
		assert_int_equal(one.code, NBG_OK);
	} else {
		errors_equal(&one, &strict);
	}
	assert_int_equal(m1 != NULL, want_model);
	if (m1) {
		char *a = fx_document(m1, "f.nb", 0), *w = fx_document(ml, "f.nb", 0);
		assert_non_null(a);
		assert_non_null(w);
		assert_string_equal(a, w);
		free(a);
		free(w);
		/* what the model says of its checksums is the strict verdict */
		assert_int_equal(nbg_integrity_failure(m1, &nul), rc);
		if (rc)
			errors_equal(&nul, &strict);
	}
	nbg_model_free(m1);
	/* with no error to fill, the same verdict and model */
	m1 = NULL;
	assert_int_equal(nbg_parse(b, n, &o, &m1, NULL), rc);
	assert_int_equal(m1 != NULL, want_model);
	nbg_model_free(m1);
	/* NO_CRC_CHECK wins: the lenient parse, error and model */
	o.flags |= NBG_PARSE_NO_CRC_CHECK;
	m1 = NULL;
	assert_int_equal(nbg_parse(b, n, &o, &m1, &one), *unchecked);
	assert_int_equal(m1 != NULL, ml != NULL);
	if (!ml)
		errors_equal(&one, &lenient);
	nbg_model_free(m1);
	nbg_model_free(ms);
	nbg_model_free(ml);
	return rc;
}

/* The committed sample (v2) intact, with a checksum failure alone, with a
 * checksum failure before a structural defect, and with a structural
 * failure; a v1 file intact, with its nbg_crc_sum failing, and truncated. */
static void test_one_pass_verdict(void **state)
{
	size_t n, n1;
	uint8_t *b = fx_read_file(SAMPLE, &n), *c;
	size_t cks = fx_dir_entry(b, n, NBG_SEC_CHECKSUM);
	size_t coef = fx_dir_entry(b, n, NBG_SEC_COEF_DATA);
	nbg_code unchecked;

	assert_non_null(b);
	assert_true(cks && coef && fx_dir_entry(b, n, NBG_SEC_INPUT));
	assert_int_equal(one_pass_equals_two(b, n, &unchecked), NBG_OK);

	/* a COEF_DATA byte: its record's CRC and the file checksum fail; the
	 * first reported, the model kept */
	c = malloc(n);
	assert_non_null(c);
	memcpy(c, b, n);
	c[rd32(b + coef + 4) + 10] ^= 0x20;
	assert_int_equal(one_pass_equals_two(c, n, &unchecked), NBG_E_SECTION_CHECKSUM_MISMATCH);
	assert_int_equal(unchecked, NBG_OK);

	/* the header's file checksum word alone */
	memcpy(c, b, n);
	c[12] ^= 1;
	assert_int_equal(one_pass_equals_two(c, n, &unchecked), NBG_E_FILE_CHECKSUM_MISMATCH);
	assert_int_equal(unchecked, NBG_OK);

	/* the last CHECKSUM record renamed to INPUT (no record names it): its
	 * stored CRC does not match INPUT's, and then the section it named has
	 * no record; a strict parse stops at the first, so no model */
	uint32_t cks_at = rd32(b + cks + 4), records = rd32(b + cks + 12) / 8;
	assert_true(records > 0);
	for (uint32_t i = 0; i < records; i++)
		assert_int_not_equal(rd32(b + cks_at + 8 * i), NBG_SEC_INPUT);
	memcpy(c, b, n);
	wr32(c + cks_at + 8 * (records - 1), NBG_SEC_INPUT);
	assert_int_equal(one_pass_equals_two(c, n, &unchecked), NBG_E_SECTION_CHECKSUM_MISMATCH);
	assert_int_equal(unchecked, NBG_E_SECTION_CHECKSUM_MISSING);

	/* a structural failure (the file cut short): the same error from all
	 * three */
	nbg_code cut = one_pass_equals_two(b, 100, &unchecked);
	assert_int_equal(cut, unchecked);
	assert_true(cut != NBG_OK && !checksum_code(cut));
	free(c);
	free(b);

	b = seed_v1_build(0x1001e, 0, &n1);
	wr32(b + CRC_AT, crc_whole(b, n1));
	assert_int_equal(one_pass_equals_two(b, n1, &unchecked), NBG_OK);
	b[n1 - 1] ^= 1;
	assert_int_equal(one_pass_equals_two(b, n1, &unchecked), NBG_E_V1_CRC_SUM_MISMATCH);
	assert_int_equal(unchecked, NBG_OK);
	cut = one_pass_equals_two(b, 200, &unchecked);
	assert_int_equal(cut, unchecked);
	assert_true(cut != NBG_OK && !checksum_code(cut));
	free(b);
}

/* The verify line and exit code of each case; scripts tell them apart by
 * the bracket, --require-checksum, or inspect --json's "integrity". */
static void test_cli_verify_lines(void **state)
{
	size_t n1, n2, n3;
	uint8_t *none = seed_v1_build(0x10009, 0, &n1);
	uint8_t *ruled = seed_v1_build(0x1001e, 0, &n2);
	uint8_t *unknown = seed_v1_build(0x10017, 0, &n3);

	wr32(ruled + CRC_AT, crc_whole(ruled, n2));
	wr32(unknown + CRC_AT, crc_whole(unknown, n3) ^ 0x5a5a5a5a);
	put("none.nb", none, n1);
	put("ruled.nb", ruled, n2);
	put("unknown.nb", unknown, n3);

	expect_run(run_in_tmp("verify %s", "none.nb"), 0,
		   "none.nb: OK v1 0x00010009 target 0x00000088 entries 12 (structure only: "
		   "this version carries no checksum)\n");
	expect_run(run_in_tmp("verify %s", "ruled.nb"), 0,
		   "(verified: nbg_crc_sum matches: CRC-32 of the whole file with the word "
		   "read as zero)\n");
	expect_run(run_in_tmp("verify %s", "unknown.nb"), 0,
		   "(checksum present, algorithm unknown: not checked");
	/* -q and --status keep their meaning: exit 0 and silence for a pass */
	expect_run(run_in_tmp("verify --status %s unknown.nb ruled.nb", "none.nb"), 0, NULL);
	fx_run_result r = run_in_tmp("verify -q %s unknown.nb ruled.nb", "none.nb");
	assert_string_equal(r.out, "");
	expect_run(r, 0, NULL);
	/* --require-checksum: only a file a checksum proved passes */
	expect_run(run_in_tmp("verify --require-checksum %s", "none.nb"), 1,
		   "none.nb: FAIL integrity-unverified at offset 0: --require-checksum: "
		   "structure only: this version carries no checksum");
	expect_run(run_in_tmp("verify --require-checksum %s", "unknown.nb"), 1,
		   "FAIL integrity-unverified");
	expect_run(run_in_tmp("verify --require-checksum %s", "ruled.nb"), 0, "(verified: ");

	ruled[n2 - 1] ^= 1;
	put("ruled.nb", ruled, n2);
	expect_run(run_in_tmp("verify %s", "ruled.nb"), 1,
		   "ruled.nb: FAIL v1-crc-sum-mismatch at offset 108: nbg_crc_sum is ");
	free(none);
	free(ruled);
	free(unknown);
}

/* --sha256-expect and --manifest verify any version by its SHA-256
 * (computed here with OpenSSL); a CRLF manifest is read as sha256sum -c
 * reads it. */
static void test_cli_sha256(void **state)
{
	size_t n1, n2;
	uint8_t *a = seed_v1_build(0x10009, 0, &n1), *s = fx_read_file(SAMPLE, &n2);
	char ha[65], hs[65], cmd[400], man[300];

	put("a.nb", a, n1);
	put("s.nb", s, n2);
	sha_hex(a, n1, ha);
	sha_hex(s, n2, hs);
	snprintf(cmd, sizeof(cmd), "verify --sha256-expect %s a.nb", ha);
	expect_run(run_in_tmp("%s", cmd), 0,
		   "a.nb: OK v1 0x00010009 target 0x00000088 entries 12 (verified: the SHA-256 "
		   "matches --sha256-expect; in the file: structure only: this version carries "
		   "no checksum)\n");
	snprintf(cmd, sizeof(cmd), "verify --require-checksum --sha256-expect=%s a.nb", ha);
	expect_run(run_in_tmp("%s", cmd), 0, "(verified: the SHA-256 matches");
	char keep = ha[0];
	ha[0] = keep == '0' ? '1' : '0';
	snprintf(cmd, sizeof(cmd), "verify --sha256-expect %s a.nb", ha);
	expect_run(run_in_tmp("%s", cmd), 1, "a.nb: FAIL digest-mismatch at offset 0: the file's "
					      "SHA-256 is ");
	ha[0] = keep;

	snprintf(man, sizeof(man), "%s  a.nb\r\n%s *s.nb\r\n", ha, hs);
	put("m.sha256", (const uint8_t *)man, strlen(man));
	fx_run_result r = run_in_tmp("verify --manifest %s", "m.sha256");
	if (r.status != 0 || !strstr(r.out, "a.nb: OK") || !strstr(r.out, "s.nb: OK") ||
	    !strstr(r.out, "(verified: the SHA-256 matches the manifest; in the file: 4 section "
			   "CRC-32s and the file checksum match)"))
		fail_msg("manifest: %d\n%s\n%s", r.status, r.out, r.err);
	fx_run_free(&r);
	put("b.nb", a, n1);
	expect_run(run_in_tmp("verify --manifest m.sha256 a.nb %s", "b.nb"), 1,
		   "b.nb: FAIL not-in-manifest at offset 0: the manifest m.sha256 lists no line "
		   "for this path");
	a[n1 - 1] ^= 1;
	put("a.nb", a, n1);
	expect_run(run_in_tmp("verify --manifest %s", "m.sha256"), 1,
		   "a.nb: FAIL digest-mismatch");
	expect_run(run_in_tmp("verify --sha256-expect %s", "zz a.nb"), 2, NULL);
	free(a);
	free(s);
}

/* inspect on a file whose checksum fails: the failure, then the report
 * marked unverified, exit 1; a structural failure shows no report. */
static void test_cli_inspect_unverified(void **state)
{
	size_t n;
	uint8_t *b = fx_read_file(SAMPLE, &n);
	size_t coef = fx_dir_entry(b, n, NBG_SEC_COEF_DATA);
	fx_run_result r;
	json_t *doc;

	b[rd32(b + coef + 4) + 10] ^= 0x20;
	put("bad.nb", b, n);
	r = run_in_tmp("inspect %s", "bad.nb");
	if (r.status != 1 || !strstr(r.err, "section-checksum-mismatch") ||
	    !strstr(r.out, "  Integrity:                 FAILED, section-checksum-mismatch at "
			   "offset ") ||
	    !strstr(r.out, "this report is unverified") || !strstr(r.out, "crc MISMATCH") ||
	    !strstr(r.out, "Inputs (1):") || !strstr(r.out, "Sections (16):"))
		fail_msg("inspect: %d\n%s\n%s", r.status, r.out, r.err);
	fx_run_free(&r);

	r = run_in_tmp("inspect --json %s", "bad.nb");
	assert_int_equal(r.status, 1);
	doc = json_loads(r.out, 0, NULL);
	assert_non_null(doc);
	assert_true(json_is_false(json_object_get(doc, "valid")));
	assert_string_equal(json_string_value(json_object_get(doc, "integrity")), "failed");
	assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "error"),
								"code")),
			    "section-checksum-mismatch");
	assert_int_equal(json_array_size(json_object_get(doc, "inputs")), 1);
	json_decref(doc);
	fx_run_free(&r);

	/* --format never exports unverified bytes */
	expect_run(run_in_tmp("inspect --format meta %s", "bad.nb"), 1, NULL);
	/* truncated: structure, so the report stops as before */
	put("short.nb", b, n - 700);
	r = run_in_tmp("inspect %s", "short.nb");
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	fx_run_free(&r);
	free(b);
}

/* inspect --json: the integrity of the good sample. */
static void test_json_integrity(void **state)
{
	fx_run_result r = fx_run_nbg(FX_IN_SOURCE, "inspect --json samples/sample.nb");
	json_t *doc = json_loads(r.out, 0, NULL);

	assert_int_equal(r.status, 0);
	assert_non_null(doc);
	assert_true(json_is_true(json_object_get(doc, "valid")));
	assert_string_equal(json_string_value(json_object_get(doc, "integrity")), "verified");
	assert_string_equal(json_string_value(json_object_get(doc, "integrity_detail")),
			    "4 section CRC-32s and the file checksum match");
	assert_null(json_object_get(doc, "error"));
	json_decref(doc);
	fx_run_free(&r);
}

/* ------------------------------------------------------------ corpus */

static void check_corpus_file(const char *path, void *arg)
{
	size_t n;
	uint8_t *b = fx_read_file(path, &n);
	nbg_model *m = parse_ok(b, n);
	uint32_t version = rd32(b + 4);
	unsigned *count = arg;

	if (version == 0x00020000)
		assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_VERIFIED);
	else if (version < 0x10016)
		assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_STRUCTURE_ONLY);
	else if (version == 0x1001e) {
		assert_int_equal(rd32(b + CRC_AT), crc_whole(b, n));
		assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_VERIFIED);
	} else
		fail_msg("%s: a corpus version this test does not know (0x%x)", path, version);
	nbg_model_free(m);
	free(b);
	(*count)++;
}

static void test_corpus_integrity(void **state)
{
	unsigned count = 0;

	tc_each_corpus_file("v2", check_corpus_file, &count);
	tc_each_corpus_file("v1", check_corpus_file, &count);
	assert_true(count > 50);
}

/* The issue a user met: one flipped bit in a real 0x1001e file. */
static void test_corpus_1001e_flip(void **state)
{
	size_t n;
	uint8_t *b = fx_read_file(F_1001E, &n);

	assert_non_null(b);
	b[n / 2] ^= 0x10;
	fails_then_unverified(b, n, NBG_E_V1_CRC_SUM_MISMATCH, CRC_AT);
	put("1001e-flipped.nb", b, n);
	expect_run(run_in_tmp("verify %s", "1001e-flipped.nb"), 1,
		   "1001e-flipped.nb: FAIL v1-crc-sum-mismatch at offset 108");
	free(b);
}

/* The two LeNet files: 0x10016 leaves the word 0; 0x10020's word is the
 * CRC-32 from the first section (920, from the raw entry table) on. */
static void test_lenet_files(void **state)
{
	size_t n;
	uint8_t *b;
	nbg_model *m;

	if (!tc_have_dir(NBG_MODELS_DIR))
		fail_msg("models_dir %s is absent", NBG_MODELS_DIR);
	b = fx_read_file(LENET_V3, &n);
	assert_non_null(b);
	assert_int_equal(v1_first_section(b, n), 920);
	assert_int_equal(rd32(b + CRC_AT), crc_from(b, n, 920));
	assert_int_not_equal(rd32(b + CRC_AT), crc_whole(b, n));
	m = parse_ok(b, n);
	assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_VERIFIED);
	assert_int_equal(nbg_model_v1(m)->crc_sum_from, 920);
	nbg_model_free(m);
	b[n - 5] ^= 1;
	fails_then_unverified(b, n, NBG_E_V1_CRC_SUM_MISMATCH, CRC_AT);
	free(b);

	b = fx_read_file(LENET_V2, &n);
	assert_non_null(b);
	assert_int_equal(rd32(b + CRC_AT), 0);
	m = parse_ok(b, n);
	assert_int_equal(nbg_model_integrity(m), NBG_INTEGRITY_STRUCTURE_ONLY);
	nbg_model_free(m);
	free(b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest synth[] = {
		cmocka_unit_test(test_v2_verified_and_failed),
		cmocka_unit_test(test_v1_no_checksum),
		cmocka_unit_test(test_v1_1001e_rule),
		cmocka_unit_test(test_v1_10020_rule),
		cmocka_unit_test(test_v1_unruled_version),
		cmocka_unit_test(test_one_pass_verdict),
		cmocka_unit_test(test_cli_verify_lines),
		cmocka_unit_test(test_cli_sha256),
		cmocka_unit_test(test_cli_inspect_unverified),
		cmocka_unit_test(test_json_integrity),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_corpus_integrity),
		cmocka_unit_test(test_corpus_1001e_flip),
		cmocka_unit_test(test_lenet_files),
	};
	return tc_main(argc, argv, "test_integrity", synth, TC_COUNT(synth), corpus,
		       TC_COUNT(corpus), setup, teardown);
}
