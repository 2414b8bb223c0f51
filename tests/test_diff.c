/*
 * test_diff.c - controlled differentials and the reconstruction.
 *
 * Expected values come from outside the code under test: positions are
 * decoded here from the raw directory and DYNAIO_TABLE bytes (fx_get32),
 * B files are made by changing bytes and recomputing their checksums with
 * the fixture's own zlib implementation (fx_refresh), SHA-256 comes from
 * OpenSSL, and changed bytes are counted byte by byte here.
 *
 * Pairs: the controlled pair of doc/diff.md (dynamic-I/O entry 0, 00 01 02 03
 * vs 00 01 02 04); real v2 files that carry dynamic I/O with one payload
 * byte changed, two entries changed, a payload byte and a coefficient byte
 * changed, a checksum word alone changed; different layouts; identical
 * files; v1 files; the command line with its exit codes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <openssl/sha.h>

#include "corpus.h"
#include "fixture.h"
#include "nbg/diff.h"
#include "nbg/ledger.h"
#include "nbg/nbg.h"

#define BLEND_FP16 NBG_CORPUS_DIR "/v2/face_blendshapes_nbg_fp16.nb"
#define BLEND_INT16 NBG_CORPUS_DIR "/v2/face_blendshapes_nbg_int16.nb"
#define DETECT_FP16 NBG_CORPUS_DIR "/v2/face_detector_nbg_fp16.nb"
#define DETECT_INT16 NBG_CORPUS_DIR "/v2/face_detector_nbg_int16.nb"
#define V1_A NBG_CORPUS_DIR "/v1/10003_88_face_age_88.nb"
#define V1_B NBG_CORPUS_DIR "/v1/10003_99_face_age_99.nb"

static nbg_model *parse(const uint8_t *b, size_t n)
{
	nbg_model *m = NULL;
	nbg_error err;
	if (nbg_parse(b, n, NULL, &m, &err) != NBG_OK)
		fail_msg("parse: %s", err.message);
	return m;
}

/* A parse that leaves checksum mismatches to the caller. */
static nbg_model *parse_lenient(const uint8_t *b, size_t n)
{
	nbg_parse_options o = { .size = sizeof(o), .flags = NBG_PARSE_NO_CRC_CHECK };
	nbg_model *m = NULL;
	nbg_error err;
	if (nbg_parse(b, n, &o, &m, &err) != NBG_OK)
		fail_msg("parse: %s", err.message);
	return m;
}

/* A corpus file (the cases that call this run only when the corpus
 * directory exists: a missing file is an incomplete corpus). */
static uint8_t *corpus(const char *path, size_t *n)
{
	uint8_t *b = fx_read_file(path, n);
	if (!b)
		fail_msg("%s is not readable: the corpus is incomplete (tests/corpus/MANIFEST.tsv "
			 "lists its files)", path);
	return b;
}

static const nbg_diff_item *find(const nbg_diff *d, nbg_diff_kind k, const char *path)
{
	for (size_t i = 0; i < nbg_diff_item_count(d); i++)
		if (nbg_diff_item_at(d, i)->kind == k && !strcmp(nbg_diff_item_at(d, i)->path, path))
			return nbg_diff_item_at(d, i);
	return NULL;
}

static const nbg_diff_owner *find_owner(const nbg_diff *d, const char *owner)
{
	for (size_t i = 0; i < nbg_diff_owner_count(d); i++)
		if (!strcmp(nbg_diff_owner_at(d, i)->owner, owner))
			return nbg_diff_owner_at(d, i);
	return NULL;
}

static uint8_t *dup_buf(const uint8_t *p, size_t n)
{
	uint8_t *q = malloc(n);
	assert_non_null(q);
	memcpy(q, p, n);
	return q;
}

/* Raw layout facts, decoded from the bytes here. */
static uint64_t sec_offset(const uint8_t *b, size_t n, uint32_t type)
{
	size_t rec = fx_dir_entry(b, n, type);
	assert_true(rec != 0);
	return fx_get32(b + rec + 4);
}

static uint64_t sec_size(const uint8_t *b, size_t n, uint32_t type)
{
	size_t rec = fx_dir_entry(b, n, type);
	assert_true(rec != 0);
	return fx_get32(b + rec + 12);
}

static uint32_t table_word(const uint8_t *b, size_t n, uint32_t entry, int size)
{
	return fx_get32(b + sec_offset(b, n, NBG_SEC_DYNAIO_TABLE) + 8 * entry + (size ? 4 : 0));
}

/* File offset of the CHECKSUM record value word for section `type`. */
static uint64_t checksum_word_of(const uint8_t *b, size_t n, uint32_t type)
{
	uint64_t off = sec_offset(b, n, NBG_SEC_CHECKSUM), size = sec_size(b, n, NBG_SEC_CHECKSUM);
	for (uint64_t k = 0; k + 8 <= size; k += 8)
		if (fx_get32(b + off + k) == type)
			return off + k + 4;
	fail_msg("no checksum record for type %u", type);
	return 0;
}

static unsigned bytes_differ(const uint8_t *x, const uint8_t *y, size_t n)
{
	unsigned c = 0;
	for (size_t i = 0; i < n; i++)
		c += x[i] != y[i];
	return c;
}

static void hex1(char out[3], uint8_t v)
{
	snprintf(out, 3, "%02x", v);
}

static void sha_hex(const uint8_t *p, size_t n, char out[65])
{
	uint8_t d[32];
	SHA256(p, n, d);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* The reconstruction of B from A must have B's SHA-256 (OpenSSL's). */
static void assert_result_is_b(const nbg_reconstruction *r, const uint8_t *b, size_t nb)
{
	uint8_t d[32];
	SHA256(b, nb, d);
	assert_true(r->attempted);
	assert_true(r->explained);
	assert_memory_equal(r->sha256, d, 32);
	assert_memory_equal(r->sha256_b, d, 32);
	assert_int_equal(r->unexplained_bytes, 0);
	assert_int_equal(r->checksum_bytes, 0);
	assert_null(r->first);
}

/* The checksum words recomputed: the header word, then one per CHECKSUM
 * record; the header word as the fixture's zlib code computes it for B. */
static void assert_checksums(const nbg_reconstruction *r, const uint8_t *a, const uint8_t *b,
			     size_t n)
{
	assert_int_equal(r->checksum_count, 1 + sec_size(a, n, NBG_SEC_CHECKSUM) / 8);
	assert_string_equal(nbg_reconstruction_checksum_at(r, 0)->word, "header.crc32");
	assert_int_equal(nbg_reconstruction_checksum_at(r, 0)->offset, 12);
	assert_int_equal(nbg_reconstruction_checksum_at(r, 0)->a, fx_get32(a + 12));
	assert_int_equal(nbg_reconstruction_checksum_at(r, 0)->b, fx_get32(b + 12));
	for (size_t i = 1; i < r->checksum_count; i++) {
		uint64_t off = sec_offset(a, n, NBG_SEC_CHECKSUM) + 8 * (i - 1) + 4;
		assert_int_equal(nbg_reconstruction_checksum_at(r, i)->offset, off);
		assert_int_equal(nbg_reconstruction_checksum_at(r, i)->a, fx_get32(a + off));
		assert_int_equal(nbg_reconstruction_checksum_at(r, i)->b, fx_get32(b + off));
	}
}

static nbg_diff *diff_of(const nbg_model *a, const nbg_model *b)
{
	nbg_diff *d = NULL;
	nbg_error err;
	if (nbg_diff_models(a, b, &d, &err) != NBG_OK)
		fail_msg("diff: %s", err.message);
	return d;
}

/* ----------------------------------------------- the controlled pair */

static void test_controlled_ab(void **state)
{
	static const uint8_t va[4] = { 0, 1, 2, 3 }, vb[4] = { 0, 1, 2, 4 };
	size_t na, nb;
	uint8_t *a = fx_dynaio_constant(va, &na), *b = fx_dynaio_constant(vb, &nb);
	nbg_model *ma = parse(a, na), *mb = parse(b, nb);

	assert_int_equal(na, nb);
	nbg_diff *d = diff_of(ma, mb);
	assert_false(nbg_diff_summary_of(d)->identical);
	assert_string_equal(nbg_diff_verdict(d), "explained");

	/* every changed byte, counted independently */
	uint64_t changed = bytes_differ(a, b, na);
	assert_int_equal(nbg_diff_summary_of(d)->bytes_changed, changed);

	/* table entry 0 is (offset 0, size 4); the changed byte is region +3 */
	uint64_t region = sec_offset(a, na, NBG_SEC_DYNAIO);
	assert_int_equal(table_word(a, na, 0, 0), 0);
	assert_int_equal(table_word(a, na, 0, 1), 4);
	const nbg_diff_item *it = find(d, NBG_DIFF_BYTES, "section 20 DYNAIO");
	assert_non_null(it);
	assert_int_equal(it->offset_a, region + 3);
	assert_int_equal(it->length, 1);
	assert_string_equal(it->a, "03");
	assert_string_equal(it->b, "04");
	assert_string_equal(it->detail, "region +3, dynaio entry 0 +3");

	/* the only other owner that changed is the header, in its crc32 word */
	assert_int_equal(nbg_diff_summary_of(d)->owners_changed, 2);
	assert_int_equal(nbg_diff_owner_count(d), 2);
	assert_int_equal(nbg_diff_summary_of(d)->owners_added + nbg_diff_summary_of(d)->owners_removed, 0);
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
	assert_int_equal(nbg_diff_summary_of(d)->field_count, 3);

	/* the reconstruction: entry 0 substituted, checksums recomputed, B */
	const nbg_reconstruction *r = nbg_diff_reconstruction(d);
	assert_result_is_b(r, b, nb);
	assert_int_equal(r->entry_count, 1);
	assert_int_equal(nbg_reconstruction_entry_at(r, 0)->index, 0);
	assert_int_equal(nbg_reconstruction_entry_at(r, 0)->region_offset, 0);
	assert_int_equal(nbg_reconstruction_entry_at(r, 0)->size, 4);
	assert_int_equal(nbg_reconstruction_entry_at(r, 0)->file_offset, region);
	assert_int_equal(nbg_reconstruction_entry_at(r, 0)->bytes_changed, 1);
	assert_checksums(r, a, b, na);
	assert_int_equal(nbg_reconstruction_checksum_at(r, 0)->recomputed, fx_get32(b + 12));

	char *js = nbg_diff_json(d, ma, "a.nb", mb, "b.nb");
	json_t *j = json_loads(js, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "summary"),
							    "bytes_changed")), changed);
	json_t *rj = json_object_get(j, "reconstruction");
	assert_true(json_is_true(json_object_get(rj, "attempted")));
	assert_true(json_is_true(json_object_get(rj, "explained")));
	json_t *e0 = json_array_get(json_object_get(rj, "entries_substituted"), 0);
	assert_int_equal(json_integer_value(json_object_get(e0, "region_offset")), 0);
	assert_int_equal(json_integer_value(json_object_get(e0, "size")), 4);
	char hb[65];
	sha_hex(b, nb, hb);
	assert_string_equal(json_string_value(json_object_get(rj, "sha256_result")), hb);
	assert_string_equal(json_string_value(json_object_get(rj, "sha256_b")), hb);
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "explained");
	json_decref(j);
	free(js);
	nbg_diff_free(d);

	/* B to A is the same substitution the other way */
	d = diff_of(mb, ma);
	assert_result_is_b(nbg_diff_reconstruction(d), a, na);
	nbg_diff_free(d);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
}

/* ------------------------------------------------------ real v2 pairs */

/* B = A with bytes xor'ed at offs[i] ^= x[i], checksums refreshed by the
 * fixture's zlib code (or not). */
static uint8_t *mutate(const uint8_t *a, size_t n, const uint64_t *offs, const uint8_t *x,
		       size_t k, int refresh)
{
	uint8_t *b = dup_buf(a, n);
	for (size_t i = 0; i < k; i++)
		b[offs[i]] ^= x[i];
	if (refresh)
		fx_refresh(b, n);
	return b;
}

/* One payload byte of entry 1 (region +67) changed, checksums refreshed:
 * explained, entry 1 named with its region offset and size. */
static void test_real_one_payload_byte(void **state)
{
	size_t n;
	uint8_t *a = corpus(BLEND_FP16, &n);
	uint64_t region = sec_offset(a, n, NBG_SEC_DYNAIO);
	uint64_t off = region + 67;
	const uint8_t x = 0x01;
	uint8_t *b = mutate(a, n, &off, &x, 1, 1);
	nbg_model *ma = parse(a, n), *mb = parse(b, n);
	nbg_diff *d = diff_of(ma, mb);
	char ha[3], hb[3];

	/* the changed byte and where it lies, as the table says */
	assert_true(table_word(a, n, 1, 0) <= 67 &&
		    67 < table_word(a, n, 1, 0) + table_word(a, n, 1, 1));
	const nbg_diff_item *it = find(d, NBG_DIFF_BYTES, "section 20 DYNAIO");
	assert_non_null(it);
	assert_int_equal(it->offset_a, off);
	hex1(ha, a[off]);
	hex1(hb, b[off]);
	assert_string_equal(it->a, ha);
	assert_string_equal(it->b, hb);
	char want[64];
	snprintf(want, sizeof(want), "region +67, dynaio entry 1 +%u",
		 67 - table_word(a, n, 1, 0));
	assert_string_equal(it->detail, want);

	const nbg_reconstruction *r = nbg_diff_reconstruction(d);
	assert_result_is_b(r, b, n);
	assert_int_equal(r->entry_count, 1);
	assert_int_equal(nbg_reconstruction_entry_at(r, 0)->index, 1);
	assert_int_equal(nbg_reconstruction_entry_at(r, 0)->region_offset, table_word(a, n, 1, 0));
	assert_int_equal(nbg_reconstruction_entry_at(r, 0)->size, table_word(a, n, 1, 1));
	assert_int_equal(nbg_reconstruction_entry_at(r, 0)->file_offset, region + table_word(a, n, 1, 0));
	assert_int_equal(nbg_reconstruction_entry_at(r, 0)->bytes_changed, 1);
	assert_checksums(r, a, b, n);
	assert_int_equal(nbg_reconstruction_checksum_at(r, 0)->recomputed, fx_get32(b + 12));
	assert_int_equal(nbg_diff_summary_of(d)->checksums_match_a, 1);
	assert_int_equal(nbg_diff_summary_of(d)->checksums_match_b, 1);
	nbg_diff_free(d);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
}

/* Two entries changed: explained, both named in file order. */
static void test_real_two_entries(void **state)
{
	size_t n;
	uint8_t *a = corpus(BLEND_FP16, &n);
	uint64_t region = sec_offset(a, n, NBG_SEC_DYNAIO);
	uint64_t offs[3] = { region + table_word(a, n, 0, 0) + 1,
			     region + table_word(a, n, 1, 0) + 5,
			     region + table_word(a, n, 1, 0) + 100 };
	const uint8_t x[3] = { 0x10, 0xff, 0x42 };
	uint8_t *b = mutate(a, n, offs, x, 3, 1);
	nbg_model *ma = parse(a, n), *mb = parse(b, n);
	nbg_diff *d = diff_of(ma, mb);
	const nbg_reconstruction *r = nbg_diff_reconstruction(d);

	assert_result_is_b(r, b, n);
	assert_int_equal(r->entry_count, 2);
	assert_int_equal(nbg_reconstruction_entry_at(r, 0)->index, 0);
	assert_int_equal(nbg_reconstruction_entry_at(r, 0)->bytes_changed, 1);
	assert_int_equal(nbg_reconstruction_entry_at(r, 1)->index, 1);
	assert_int_equal(nbg_reconstruction_entry_at(r, 1)->bytes_changed, 2);
	assert_non_null(strstr(r->reason, "entries 0, 1"));
	assert_string_equal(nbg_diff_verdict(d), "explained");
	nbg_diff_free(d);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
}

/* A payload byte and a coefficient byte, checksums refreshed: not
 * explained; the coefficient byte is the first range named, the checksum
 * words that cover it are told apart. */
static void test_real_payload_and_coefficient(void **state)
{
	size_t n;
	uint8_t *a = corpus(BLEND_FP16, &n);
	uint64_t region = sec_offset(a, n, NBG_SEC_DYNAIO);
	uint64_t coef = sec_offset(a, n, NBG_SEC_COEF_DATA);
	uint64_t offs[2] = { region + 67, coef + 1000 };
	const uint8_t x[2] = { 0x01, 0x5a };
	uint8_t *b = mutate(a, n, offs, x, 2, 1);
	/* what the substitution alone gives, by the fixture's code */
	uint8_t *only = mutate(a, n, offs, x, 1, 1);
	nbg_model *ma = parse(a, n), *mb = parse(b, n);
	nbg_diff *d = diff_of(ma, mb);
	const nbg_reconstruction *r = nbg_diff_reconstruction(d);
	char ha[3], hb[3];

	assert_true(r->attempted);
	assert_false(r->explained);
	assert_string_equal(nbg_diff_verdict(d), "different");
	assert_int_equal(r->entry_count, 1);
	assert_int_equal(nbg_reconstruction_entry_at(r, 0)->index, 1);
	assert_int_equal(r->unexplained_bytes, 1);
	assert_non_null(r->first);
	assert_string_equal(r->first->owner, "section 24 COEF_DATA");
	assert_int_equal(r->first->offset, coef + 1000);
	assert_int_equal(r->first->length, 1);
	assert_false(r->first->checksum_word);
	hex1(ha, a[coef + 1000]);
	hex1(hb, b[coef + 1000]);
	assert_string_equal(r->first->result, ha);
	assert_string_equal(r->first->b, hb);
	/* the result's SHA-256 is the substitution-only file's */
	uint8_t dg[32];
	SHA256(only, n, dg);
	assert_memory_equal(r->sha256, dg, 32);
	/* checksum words still differing: the header word (result = the
	 * substitution-only file's) and the COEF_DATA record (result = A's) */
	uint64_t cw = checksum_word_of(a, n, NBG_SEC_COEF_DATA);
	assert_int_equal(r->checksum_bytes,
			 bytes_differ(only + 12, b + 12, 4) + bytes_differ(a + cw, b + cw, 4));
	assert_true(r->checksum_bytes > 0);
	assert_non_null(strstr(r->reason, "section 24 COEF_DATA"));
	/* in the owner list, the COEF_DATA owner carries the one changed byte */
	const nbg_diff_owner *o = find_owner(d, "section 24 COEF_DATA");
	assert_non_null(o);
	assert_int_equal(o->bytes_changed, 1);
	assert_int_equal(o->first_change, coef + 1000);
	nbg_diff_free(d);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
	free(only);
}

/* A checksum word alone changed: B fails verify, is still compared, and is
 * not explained: its stored checksum is not the one its bytes give. */
static void test_real_checksum_word_alone(void **state)
{
	size_t n;
	uint8_t *a = corpus(BLEND_FP16, &n);
	uint64_t cw = checksum_word_of(a, n, NBG_SEC_COEF_DATA);
	const uint8_t x = 0x01;
	uint8_t *b = mutate(a, n, &cw, &x, 1, 0);
	nbg_model *ma = parse(a, n), *mb = NULL;
	nbg_error err;

	assert_int_equal(nbg_parse(b, n, NULL, &mb, &err), NBG_E_SECTION_CHECKSUM_MISMATCH);
	mb = parse_lenient(b, n);
	nbg_diff *d = diff_of(ma, mb);
	const nbg_reconstruction *r = nbg_diff_reconstruction(d);

	assert_int_equal(nbg_diff_summary_of(d)->checksums_match_a, 1);
	assert_int_equal(nbg_diff_summary_of(d)->checksums_match_b, 0);
	assert_true(r->attempted);
	assert_false(r->explained);
	assert_int_equal(r->entry_count, 0);
	assert_int_equal(r->unexplained_bytes, 0);
	assert_int_equal(r->checksum_bytes, 1);
	assert_non_null(r->first);
	assert_true(r->first->checksum_word);
	assert_string_equal(r->first->owner, "section 40 CHECKSUM");
	assert_int_equal(r->first->offset, cw);
	assert_non_null(strstr(r->reason, "corrupt"));
	/* the result is A itself: nothing substituted, A's checksums hold */
	uint8_t dg[32];
	SHA256(a, n, dg);
	assert_memory_equal(r->sha256, dg, 32);
	nbg_diff_free(d);

	/* the other way round A is the file whose checksums fail: the
	 * substitution starts from a valid A, so it is not attempted */
	d = diff_of(mb, ma);
	assert_false(nbg_diff_reconstruction(d)->attempted);
	assert_non_null(strstr(nbg_diff_reconstruction(d)->reason, "A's stored checksums do not match"));
	nbg_diff_free(d);
	nbg_model_free(mb);
	free(b);

	/* the header word alone changed */
	uint64_t hw = 12;
	b = mutate(a, n, &hw, &x, 1, 0);
	assert_int_equal(nbg_parse(b, n, NULL, &mb, &err), NBG_E_FILE_CHECKSUM_MISMATCH);
	mb = parse_lenient(b, n);
	d = diff_of(ma, mb);
	assert_false(nbg_diff_reconstruction(d)->explained);
	assert_string_equal(nbg_diff_reconstruction(d)->first->owner, "header");
	assert_string_equal(nbg_diff_reconstruction(d)->first->detail, "crc32 +0");
	assert_int_equal(nbg_diff_reconstruction(d)->first->offset, 12);
	nbg_diff_free(d);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
}

/* Different section sizes: structural; the reconstruction is not attempted
 * and says why.  Then the same file size with one directory field changed. */
static void test_structural(void **state)
{
	size_t na, nb;
	uint8_t *a = corpus(BLEND_FP16, &na), *b = corpus(BLEND_INT16, &nb);
	nbg_model *ma = parse(a, na), *mb = parse(b, nb);
	nbg_diff *d = diff_of(ma, mb);

	assert_true(sec_size(a, na, NBG_SEC_COEF_DATA) != sec_size(b, nb, NBG_SEC_COEF_DATA));
	assert_false(nbg_diff_reconstruction(d)->attempted);
	assert_false(nbg_diff_reconstruction(d)->explained);
	assert_non_null(strstr(nbg_diff_reconstruction(d)->reason, "differ in size"));
	assert_string_equal(nbg_diff_verdict(d), "different");

	/* owners and byte runs in file order: directory entry 2 before 10 */
	size_t i5 = SIZE_MAX, i10 = SIZE_MAX;
	for (size_t i = 0; i < nbg_diff_owner_count(d); i++) {
		const nbg_diff_owner *o = nbg_diff_owner_at(d, i);
		if (i) {
			const nbg_diff_owner *p = nbg_diff_owner_at(d, i - 1);
			uint64_t kp = p->kind == NBG_DIFF_ADDED ? p->offset_b : p->offset_a;
			uint64_t ko = o->kind == NBG_DIFF_ADDED ? o->offset_b : o->offset_a;
			assert_true(kp <= ko);
		}
		if (!strcmp(o->owner, "directory entry 5"))
			i5 = i;
		if (!strcmp(o->owner, "directory entry 10"))
			i10 = i;
	}
	assert_true(i5 != SIZE_MAX && i10 != SIZE_MAX && i5 < i10);
	uint64_t last = 0;
	for (size_t i = 0; i < nbg_diff_item_count(d); i++) {
		const nbg_diff_item *it = nbg_diff_item_at(d, i);
		if (it->kind == NBG_DIFF_BYTES && it->offset_a == it->offset_b) {
			assert_true(it->offset_a >= last);
			last = it->offset_a;
		}
	}
	nbg_diff_free(d);
	nbg_model_free(mb);
	free(b);

	/* same size, one directory record field changed (load address of
	 * COEF_DATA; no checksum covers the directory) */
	b = dup_buf(a, na);
	size_t rec = fx_dir_entry(b, na, NBG_SEC_COEF_DATA);
	fx_put32(b + rec + 0x14, 0x40); /* low byte: the first that differs */
	mb = parse(b, na);
	d = diff_of(ma, mb);
	char want[64];
	snprintf(want, sizeof(want), "directory entry %zu, load_address +0",
		 (rec - fx_get32(b + 48)) / 44);
	assert_false(nbg_diff_reconstruction(d)->attempted);
	assert_non_null(strstr(nbg_diff_reconstruction(d)->reason, want));
	nbg_diff_free(d);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
}

/* Identical files, as two buffers and as one model against itself. */
static void test_identical(void **state)
{
	size_t na, nb;
	uint8_t *a = corpus(BLEND_FP16, &na), *b = corpus(BLEND_FP16, &nb);
	nbg_model *ma = parse(a, na), *mb = parse(b, nb);
	nbg_diff *d = diff_of(ma, mb);

	assert_true(nbg_diff_summary_of(d)->identical);
	assert_int_equal(nbg_diff_item_count(d), 0);
	assert_int_equal(nbg_diff_owner_count(d), 0);
	assert_string_equal(nbg_diff_verdict(d), "identical");
	assert_false(nbg_diff_reconstruction(d)->attempted);
	assert_non_null(strstr(nbg_diff_reconstruction(d)->reason, "identical"));
	nbg_diff_free(d);
	d = diff_of(ma, ma);
	assert_true(nbg_diff_summary_of(d)->identical);
	assert_int_equal(nbg_diff_item_count(d), 0);
	nbg_diff_free(d);
	/* nbg_reconstruct on its own agrees */
	nbg_reconstruction *r = NULL;
	nbg_error err;
	assert_int_equal(nbg_reconstruct(ma, mb, &r, &err), NBG_OK);
	assert_false(r->attempted);
	nbg_reconstruction_free(r);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
}

/* A file without dynamic I/O: the reconstruction does not apply. */
static void test_no_dynaio(void **state)
{
	size_t n;
	uint8_t *a = corpus(DETECT_FP16, &n);
	uint64_t coef = sec_offset(a, n, NBG_SEC_COEF_DATA);
	const uint8_t x = 0x01;
	uint8_t *b = mutate(a, n, &coef, &x, 1, 1);
	nbg_model *ma = parse(a, n), *mb = parse(b, n);
	nbg_diff *d = diff_of(ma, mb);

	assert_int_equal(fx_dir_entry(a, n, NBG_SEC_DYNAIO), 0);
	assert_false(nbg_diff_reconstruction(d)->attempted);
	assert_non_null(strstr(nbg_diff_reconstruction(d)->reason, "no dynamic-I/O sections"));
	assert_non_null(find_owner(d, "section 24 COEF_DATA"));
	nbg_diff_free(d);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
}

/* v1: the owner-by-owner diff, reconstruction not applicable. */
static void test_v1(void **state)
{
	size_t na, nb;
	uint8_t *a = corpus(V1_A, &na), *b = corpus(V1_B, &nb);
	nbg_model *ma = parse(a, na), *mb = parse(b, nb);
	nbg_diff *d = diff_of(ma, mb);

	assert_false(nbg_diff_summary_of(d)->identical);
	assert_false(nbg_diff_reconstruction(d)->attempted);
	assert_non_null(strstr(nbg_diff_reconstruction(d)->reason, "v1 has no dynamic-I/O table"));
	assert_true(nbg_diff_owner_count(d) > 0);
	nbg_diff_free(d);
	nbg_model_free(mb);
	free(b);

	/* one byte changed in the middle of the file: one owner, one byte */
	uint64_t mid = na / 2;
	const uint8_t x = 0x80;
	b = mutate(a, na, &mid, &x, 1, 0);
	mb = parse(b, na);
	d = diff_of(ma, mb);
	nbg_ledger *l = NULL;
	nbg_error err;
	assert_int_equal(nbg_ledger_build(ma, &l, &err), NBG_OK);
	assert_int_equal(nbg_diff_summary_of(d)->bytes_changed, 1);
	assert_int_equal(nbg_diff_owner_count(d), 1);
	assert_string_equal(nbg_diff_owner_at(d, 0)->owner, nbg_ledger_owner_of(l, mid)->owner);
	assert_int_equal(nbg_diff_owner_at(d, 0)->first_change, mid);
	assert_false(nbg_diff_reconstruction(d)->attempted);
	nbg_ledger_free(l);
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
	nbg_diff *d = diff_of(ma, mb);

	const nbg_diff_item *it = find(d, NBG_DIFF_ADDED, "section 39 AXI_SRAM");
	assert_non_null(it);
	assert_int_equal(it->length, 4);
	assert_int_equal(it->offset_b, nbg_model_section(mb, 39)->offset);
	it = find(d, NBG_DIFF_FIELD, "axi_sram_bytes");
	assert_non_null(it);
	assert_string_equal(it->a, "0");
	assert_string_equal(it->b, "65536");
	assert_non_null(find(d, NBG_DIFF_FIELD, "sub_header.section_header_count"));
	assert_true(nbg_diff_summary_of(d)->owners_added >= 2); /* the section and its directory record */
	assert_false(nbg_diff_reconstruction(d)->attempted);
	nbg_diff_free(d);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
	fx_free(s);
}

/* The network name is reported once under its key, not doubled. */
static void test_network_name_key(void **state)
{
	fx_spec *s = fx_default();
	size_t na, nb;
	uint8_t *a = fx_build(s, &na);
	snprintf((char *)fx_find(s, 35)->data, 64, "another_name");
	uint8_t *b = fx_build(s, &nb);
	nbg_model *ma = parse(a, na), *mb = parse(b, nb);
	nbg_diff *d = diff_of(ma, mb);

	const nbg_diff_item *it = find(d, NBG_DIFF_FIELD, "network_info.name");
	assert_non_null(it);
	assert_string_equal(it->a, "nbgkit_sample_NHWC");
	assert_string_equal(it->b, "another_name");
	for (size_t i = 0; i < nbg_diff_item_count(d); i++)
		assert_null(strstr(nbg_diff_item_at(d, i)->path, "network_info.network_info"));
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
	fx_spec *s = fx_default(); /* with dynamic I/O: the reconstruction is tried */
	uint8_t *a = fx_build(s, &na);
	uint8_t *b = fx_build(s, &nb);
	fx_free(s);
	nbg_model *ma = parse(a, na);
	const nbg_section *coef = nbg_model_section(ma, NBG_SEC_COEF_DATA);
	b[coef->offset - 1] ^= 0xff; /* gap bytes are outside every checksum */
	nbg_model *mb = parse(b, nb);
	nbg_diff *d = diff_of(ma, mb);

	assert_int_equal(nbg_diff_summary_of(d)->bytes_changed, 1);
	const nbg_diff_item *it = NULL;
	for (size_t i = 0; i < nbg_diff_item_count(d); i++)
		if (nbg_diff_item_at(d, i)->kind == NBG_DIFF_BYTES)
			it = nbg_diff_item_at(d, i);
	assert_non_null(it);
	assert_string_equal(it->path, "alignment of section 24 COEF_DATA");
	assert_int_equal(it->offset_a, coef->offset - 1);
	char want[32];
	/* "+k" with k < 64: inside the alignment range */
	assert_true(it->detail[0] == '+');
	assert_true(strtoull(it->detail + 1, NULL, 10) < 64);
	snprintf(want, sizeof(want), "%02x", a[coef->offset - 1]);
	assert_string_equal(it->a, want);
	/* not explained: an alignment byte is no dynamic-I/O payload */
	assert_true(nbg_diff_reconstruction(d)->attempted);
	assert_false(nbg_diff_reconstruction(d)->explained);
	assert_non_null(nbg_diff_reconstruction(d)->first);
	assert_string_equal(nbg_diff_reconstruction(d)->first->owner, "alignment of section 24 COEF_DATA");
	nbg_diff_free(d);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
}

static void test_corpus_pair(void **state)
{
	size_t na, nb;
	uint8_t *a = corpus(DETECT_FP16, &na), *b = corpus(DETECT_INT16, &nb);
	nbg_model *ma = parse(a, na), *mb = parse(b, nb);
	nbg_diff *d = diff_of(ma, mb);

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
	for (size_t i = 0; i < nbg_diff_item_count(d); i++)
		located += nbg_diff_item_at(d, i)->kind == NBG_DIFF_BYTES &&
			   !strcmp(nbg_diff_item_at(d, i)->path, "section 1 INPUT") &&
			   !strcmp(nbg_diff_item_at(d, i)->detail, "record 0 data_format");
	assert_int_equal(located, 1);
	nbg_diff_free(d);
	nbg_model_free(ma);
	nbg_model_free(mb);
	free(a);
	free(b);
}

/* ------------------------------------------------------- command line */

static fx_run_result run_in(const char *dir, const char *args)
{
	char prefix[1024];
	snprintf(prefix, sizeof(prefix), "cd '%s' &&", dir);
	return fx_run_nbg(prefix, "%s", args);
}

static void write_file(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* A temporary directory with the controlled pair as A.nb and B.nb. */
static char *pair_dir(uint8_t **a, size_t *na, uint8_t **b, size_t *nb)
{
	static const uint8_t va[4] = { 0, 1, 2, 3 }, vb[4] = { 0, 1, 2, 4 };
	char *dir = strdup("/tmp/nbg-diff-XXXXXX");
	assert_non_null(mkdtemp(dir));
	*a = fx_dynaio_constant(va, na);
	*b = fx_dynaio_constant(vb, nb);
	write_file(dir, "A.nb", *a, *na);
	write_file(dir, "B.nb", *b, *nb);
	return dir;
}

static void remove_dir(char *dir)
{
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

static void test_cli_exit_codes(void **state)
{
	uint8_t *a, *b;
	size_t na, nb;
	char *dir = pair_dir(&a, &na, &b, &nb);
	fx_run_result r;

	/* identical: 0, the summary says so */
	r = run_in(dir, "diff A.nb A.nb");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\nsummary: identical"));
	fx_run_free(&r);

	/* explained: 1, the summary comes first */
	r = run_in(dir, "diff A.nb B.nb");
	assert_int_equal(r.status, 1);
	const char *l4 = r.out;
	for (int i = 0; i < 3 && l4; i++)
		l4 = strchr(l4, '\n') ? strchr(l4, '\n') + 1 : NULL;
	assert_non_null(l4);
	const char *want = "summary: explained: B is A with 1 dynamic-I/O entry payload "
			   "substituted (entry 0)";
	assert_memory_equal(l4, want, strlen(want));
	fx_run_free(&r);

	/* B truncated: 2, with the failure as JSON */
	write_file(dir, "T.nb", b, nb - 100);
	r = run_in(dir, "diff --json A.nb T.nb");
	assert_int_equal(r.status, 2);
	json_t *j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	json_t *e = json_object_get(j, "error");
	assert_string_equal(json_string_value(json_object_get(e, "file")), "b");
	assert_string_equal(json_string_value(json_object_get(e, "code")), "file-size-mismatch");
	assert_int_equal(json_integer_value(json_object_get(e, "offset")), 16);
	json_decref(j);
	assert_non_null(strstr(r.err, "file-size-mismatch"));
	fx_run_free(&r);
	r = run_in(dir, "diff A.nb T.nb");
	assert_int_equal(r.status, 2);
	fx_run_free(&r);

	/* B with a stale checksum: compared (1), with a note on stderr */
	uint8_t *s = dup_buf(b, nb);
	s[12] ^= 1;
	write_file(dir, "S.nb", s, nb);
	r = run_in(dir, "diff --json A.nb S.nb");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "file-checksum-mismatch"));
	assert_non_null(strstr(r.err, "compared as it is"));
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_false(json_is_true(json_object_get(json_object_get(j, "b"), "checksums_match")));
	assert_false(json_is_true(
		json_object_get(json_object_get(j, "reconstruction"), "explained")));
	json_decref(j);
	fx_run_free(&r);

	/* trouble: unreadable, not an NBG, usage */
	r = run_in(dir, "diff A.nb /nonexistent.nb");
	assert_int_equal(r.status, 2);
	fx_run_free(&r);
	r = run_in(dir, "diff --json /nonexistent.nb A.nb");
	assert_int_equal(r.status, 2);
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	e = json_object_get(j, "error");
	assert_string_equal(json_string_value(json_object_get(e, "file")), "a");
	assert_string_equal(json_string_value(json_object_get(e, "code")), "io-error");
	json_decref(j);
	fx_run_free(&r);
	write_file(dir, "text.nb", (const uint8_t *)"hello\n", 6);
	r = run_in(dir, "diff A.nb text.nb");
	assert_int_equal(r.status, 2);
	fx_run_free(&r);
	r = run_in(dir, "diff A.nb");
	assert_int_equal(r.status, 2);
	fx_run_free(&r);
	r = run_in(dir, "diff A.nb B.nb A.nb");
	assert_int_equal(r.status, 2);
	fx_run_free(&r);
	r = run_in(dir, "diff --bogus A.nb B.nb");
	assert_int_equal(r.status, 2);
	fx_run_free(&r);
	free(s);
	free(a);
	free(b);
	remove_dir(dir);
}

static void test_cli_corpus(void **state)
{
	size_t n;
	free(corpus(DETECT_FP16, &n));
	fx_run_result r = fx_run_nbg(FX_IN_SOURCE, "diff %s %s", DETECT_FP16, DETECT_INT16);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "input 0.data_format"));
	assert_non_null(strstr(r.out, "FP16 -> INT16"));
	assert_non_null(strstr(r.out, "summary: different: reconstruction not attempted"));
	fx_run_free(&r);

	r = fx_run_nbg(FX_IN_SOURCE, "diff --json %s %s", V1_A, V1_B);
	assert_int_equal(r.status, 1);
	json_t *j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	json_t *rj = json_object_get(j, "reconstruction");
	assert_false(json_is_true(json_object_get(rj, "attempted")));
	assert_non_null(strstr(json_string_value(json_object_get(rj, "reason")), "v1"));
	assert_true(json_array_size(json_object_get(j, "owners")) > 0);
	json_decref(j);
	fx_run_free(&r);
}

/* doc/diff.md shows the controlled pair's real output. */
static void test_doc_example(void **state)
{
	uint8_t *a, *b;
	size_t na, nb, size;
	char *dir = pair_dir(&a, &na, &b, &nb);
	fx_run_result r = run_in(dir, "diff A.nb B.nb");
	char *doc = (char *)fx_read_file(NBG_SOURCE_DIR "/doc/diff.md", &size);
	const char *begin = "<!-- BEGIN nbg diff A.nb B.nb -->\n```\n$ nbg diff A.nb B.nb\n";
	const char *end = "```\n<!-- END nbg diff A.nb B.nb -->";

	assert_int_equal(r.status, 1);
	assert_non_null(doc);
	doc[size] = '\0';
	char *p = strstr(doc, begin), *q;
	assert_non_null(p);
	p += strlen(begin);
	q = strstr(p, end);
	assert_non_null(q);
	if ((size_t)(q - p) != strlen(r.out) || memcmp(p, r.out, (size_t)(q - p)))
		fail_msg("doc/diff.md worked example is stale: run scripts/gen-docs.sh");
	fx_run_free(&r);
	free(doc);
	free(a);
	free(b);
	remove_dir(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_controlled_ab),
		cmocka_unit_test(test_added_section),
		cmocka_unit_test(test_network_name_key),
		cmocka_unit_test(test_alignment_byte),
		cmocka_unit_test(test_cli_exit_codes),
		cmocka_unit_test(test_doc_example),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_real_one_payload_byte),
		cmocka_unit_test(test_real_two_entries),
		cmocka_unit_test(test_real_payload_and_coefficient),
		cmocka_unit_test(test_real_checksum_word_alone),
		cmocka_unit_test(test_structural),
		cmocka_unit_test(test_identical),
		cmocka_unit_test(test_no_dynaio),
		cmocka_unit_test(test_v1),
		cmocka_unit_test(test_corpus_pair),
		cmocka_unit_test(test_cli_corpus),
	};
	return tc_main(argc, argv, "test_diff", tests, TC_COUNT(tests), corpus, TC_COUNT(corpus),
		       NULL, NULL);
}
