/*
 * test_digests.c - the parse flags that leave out the SHA-256 digests, the
 * CRC-32 work split over two threads, and `nbg verify` with and without
 * --sha256.
 *
 * How many bytes SHA-256 and CRC-32 saw comes from libnbg's counters
 * (nbg_digest_counts, NBG_STATIC_LINKING_ONLY); the threads a parse starts
 * are counted by interposing pthread_create (this executable defines it,
 * found first through the dynamic linker; it forwards with dlsym
 * RTLD_NEXT).  Expected digests are computed here with OpenSSL on the raw
 * file bytes, expected CRC-32s with zlib.
 */
#define NBG_STATIC_LINKING_ONLY
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <zlib.h>

#include "corpus.h"
#include "fixture.h"
#include "nbg/ledger.h"
#include "nbg/nbg.h"

/* SHA-256 with OpenSSL, called here directly (libnbg's counts do not see
 * it). */
static void openssl_sha256(const uint8_t *p, size_t n, uint8_t out[32])
{
	unsigned len = 32;
	assert_int_equal(EVP_Digest(p, n, out, &len, EVP_sha256(), NULL), 1);
}

static int all_zero(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (d[i])
			return 0;
	return 1;
}

/* Parses buf with `flags` and checks the digests: computed and equal to
 * OpenSSL's when asked for, all zero, marked and not computed when not. */
static void check_flags(const uint8_t *buf, size_t size, unsigned flags)
{
	nbg_parse_options o = { .size = sizeof(o), .flags = flags };
	nbg_model *m = NULL;
	nbg_error err;
	uint8_t want[32];

	uint64_t before, after, sections = 0;
	nbg_digest_counts(&before, NULL);
	assert_int_equal(nbg_parse(buf, size, &o, &m, &err), NBG_OK);
	nbg_digest_counts(&after, NULL);
	assert_int_equal(nbg_model_sha256_skipped(m),
			 flags & (NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256));
	openssl_sha256(buf, size, want);
	if (flags & NBG_PARSE_NO_FILE_SHA256)
		assert_true(all_zero(nbg_model_file_sha256(m), 32));
	else
		assert_memory_equal(nbg_model_file_sha256(m), want, 32);
	for (size_t i = 0; i < nbg_model_section_count(m); i++) {
		const nbg_section *s = nbg_model_section_at(m, i);
		if (flags & NBG_PARSE_NO_SECTION_SHA256) {
			assert_true(all_zero(s->sha256, 32));
		} else {
			openssl_sha256(buf + s->offset, (size_t)s->size, want);
			assert_memory_equal(s->sha256, want, 32);
		}
	}
	for (size_t i = 0; i < nbg_model_section_count(m); i++)
		sections += nbg_model_section_at(m, i)->size;
	/* the bytes SHA-256 saw: none when both are skipped, at least the file and every section when neither is */
	if ((flags & NBG_PARSE_NO_SECTION_SHA256) && (flags & NBG_PARSE_NO_FILE_SHA256))
		assert_int_equal(after - before, 0);
	else if (!flags)
		assert_true(after - before >= size + sections);
	/* a model without its fingerprints makes no ledger */
	nbg_ledger *l = NULL;
	nbg_code lrc = nbg_ledger_build(m, &l, &err);
	if (flags)
		assert_int_equal(lrc, NBG_E_LEDGER_INVARIANT);
	else
		assert_int_equal(lrc, NBG_OK);
	nbg_ledger_free(l);
	nbg_model_free(m);
}

static void check_all_flags(const uint8_t *buf, size_t size)
{
	check_flags(buf, size, 0);
	check_flags(buf, size, NBG_PARSE_NO_FILE_SHA256);
	check_flags(buf, size, NBG_PARSE_NO_SECTION_SHA256);
	check_flags(buf, size, NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256);
}

static void test_flags_fixture(void **state)
{
	(void)state;
	size_t n;
	fx_spec *s = fx_default();
	/* 2 MiB of coefficients: the whole-file hash runs on its own thread */
	fx_resize(fx_find(s, 24), (size_t)2 << 20);
	uint8_t *buf = fx_build(s, &n);
	check_all_flags(buf, n);
	free(buf);
	fx_free(s);
}

static unsigned long threads_started;

/* Counts the threads libnbg starts (the same interposition as above). */
__attribute__((visibility("default")))
int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
	__atomic_add_fetch(&threads_started, 1, __ATOMIC_SEQ_CST);
	return real(t, attr, fn, arg);
}

/* Parses buf with flags; every section's CRC-32 must be zlib's over its
 * bytes here, each byte CRC'd once (the CHECKSUM section twice: as it is,
 * and with its value words read as zero for the header checksum), and
 * `threads` threads started. */
static void check_crcs(const uint8_t *buf, size_t size, unsigned flags, unsigned long threads)
{
	nbg_parse_options o = { .size = sizeof(o), .flags = flags };
	nbg_model *m = NULL;
	nbg_error err;
	uint64_t crc0, crc1, want = 0;

	nbg_digest_counts(NULL, &crc0);
	threads_started = 0;
	assert_int_equal(nbg_parse(buf, size, &o, &m, &err), NBG_OK);
	assert_int_equal(threads_started, threads);
	nbg_digest_counts(NULL, &crc1);
	for (size_t i = 0; i < nbg_model_section_count(m); i++) {
		const nbg_section *s = nbg_model_section_at(m, i);
		assert_int_equal(s->crc32, (uint32_t)crc32(0, buf + s->offset, (uInt)s->size));
		want += s->size * (s->type == NBG_SEC_CHECKSUM ? 2 : 1);
	}
	assert_int_equal(crc1 - crc0, want);
	nbg_model_free(m);
}

/* With the whole-file SHA-256 not wanted, a parse of 1 MiB or more CRCs
 * half the bytes on a second thread, wherever the half falls (within the
 * coefficients, within the PPU instructions, near their boundary); the
 * CRCs are the same as on one thread, and NBG_PARSE_ONE_THREAD starts no
 * thread at all. */
static void test_crc_split(void **state)
{
	static const size_t coef[] = { 1u << 20, (1u << 20) + 1, (3u << 20) + 7, 600000, 4096 };
	static const size_t ppu[] = { 4096, 12345, (1u << 20) + 3, 700001, (2u << 20) + 5 };
	const unsigned verify = NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256;

	(void)state;
	srand(7);
	for (size_t k = 0; k < sizeof(coef) / sizeof(coef[0]); k++) {
		fx_spec *s = fx_default();
		uint8_t *a = malloc(coef[k]), *b = malloc(ppu[k]);
		size_t n;
		assert_true(a && b);
		for (size_t i = 0; i < coef[k]; i++)
			a[i] = (uint8_t)rand();
		for (size_t i = 0; i < ppu[k]; i++)
			b[i] = (uint8_t)rand();
		fx_set(s, NBG_SEC_COEF_DATA, a, coef[k], fx_find(s, NBG_SEC_COEF_DATA)->align, 0);
		fx_set(s, NBG_SEC_PPU_INSTR, b, ppu[k], fx_find(s, NBG_SEC_PPU_INSTR)->align, 0);
		uint8_t *buf = fx_build(s, &n);
		assert_true(n >= (1u << 20));
		check_crcs(buf, n, verify, 1);
		check_crcs(buf, n, verify | NBG_PARSE_ONE_THREAD, 0);
		/* the whole-file hash takes the second core: CRCs stay on this one */
		check_crcs(buf, n, 0, 1);
		check_crcs(buf, n, NBG_PARSE_ONE_THREAD, 0);
		free(buf);
		free(a);
		free(b);
		fx_free(s);
	}
}

static void corpus_files(const char *family, void (*fn)(const char *path), int *done)
{
	char list[1024];
	snprintf(list, sizeof(list), "ls %s/%s/*.nb 2>/dev/null", NBG_CORPUS_DIR, family);
	FILE *p = popen(list, "r");
	char path[1024];
	while (p && fgets(path, sizeof(path), p)) {
		path[strcspn(path, "\n")] = '\0';
		fn(path);
		++*done;
	}
	if (p)
		pclose(p);
}

static void flags_on_file(const char *path)
{
	size_t n;
	uint8_t *buf = fx_read_file(path, &n);
	assert_non_null(buf);
	check_all_flags(buf, n);
	free(buf);
}

static void test_flags_corpus(void **state)
{
	(void)state;
	int done = 0;
	corpus_files("v2", flags_on_file, &done);
	corpus_files("v1", flags_on_file, &done);
	assert_true(done > 0);
}

/* `nbg verify --sha256 PATH` passes, and its line ends with the SHA-256
 * OpenSSL computes here. */
static void check_verify_sha256(const char *path)
{
	size_t n;
	uint8_t *buf = fx_read_file(path, &n), d[32];
	char want[80] = " sha256 ";
	assert_non_null(buf);
	openssl_sha256(buf, n, d);
	for (int i = 0; i < 32; i++)
		snprintf(want + 8 + 2 * i, 3, "%02x", d[i]);
	/* then what proved the bytes, in brackets (test_integrity.c) */
	strcat(want, " (");

	fx_run_result r = fx_run_nbg("", "verify --sha256 '%s'", path);
	assert_int_equal(r.status, 0);
	if (!strstr(r.out, want))
		fail_msg("no \"%s\" in %s", want, r.out);
	fx_run_free(&r);
	free(buf);
}

/* verify prints no sha256 field by default; --sha256 prints OpenSSL's digest. */
static void verify_on_file(const char *path)
{
	fx_run_result r = fx_run_nbg("", "verify '%s'", path);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, ": OK v"));
	assert_null(strstr(r.out, "sha256"));
	fx_run_free(&r);
	check_verify_sha256(path);
}

static void test_verify_sha256_option(void **state)
{
	(void)state;
	verify_on_file(NBG_SOURCE_DIR "/samples/sample.nb");
}

static void test_verify_sha256_corpus(void **state)
{
	(void)state;
	int done = 0;
	corpus_files("v2", verify_on_file, &done);
	corpus_files("v1", verify_on_file, &done);
	assert_true(done > 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flags_fixture),
		cmocka_unit_test(test_crc_split),
		cmocka_unit_test(test_verify_sha256_option),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_flags_corpus),
		cmocka_unit_test(test_verify_sha256_corpus),
	};
	return tc_main(argc, argv, "test_digests", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), NULL, NULL);
}
