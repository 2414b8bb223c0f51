/*
 * test_sha256.c - libnbg's portable SHA-256 (lib/common/sha256.c), linked
 * from the static library: the examples of FIPS 180-2 (appendix B) and the
 * empty message, then OpenSSL's digest of the same bytes for every length
 * up to 1,100 and a few large ones, each fed whole and in pieces of many
 * sizes, so that every way a block boundary can fall is met.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "common/sha256.h"

static void portable(const uint8_t *p, size_t n, size_t piece, uint8_t out[32])
{
	nbg_sha256_portable s;

	nbg_sha256_portable_init(&s);
	if (!piece)
		nbg_sha256_portable_update(&s, p, n);
	for (size_t at = 0; piece && at < n; at += piece)
		nbg_sha256_portable_update(&s, p + at, n - at < piece ? n - at : piece);
	nbg_sha256_portable_final(&s, out);
}

static void hex(const uint8_t d[32], char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* FIPS 180-2, appendix B.1-B.3, and SHA-256 of no bytes. */
static void test_standard_examples(void **state)
{
	static const char b2[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	uint8_t d[32];
	char h[65];
	uint8_t *million = malloc(1000000);

	(void)state;
	portable((const uint8_t *)"", 0, 0, d);
	hex(d, h);
	assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	portable((const uint8_t *)"abc", 3, 0, d);
	hex(d, h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	portable((const uint8_t *)b2, sizeof(b2) - 1, 0, d);
	hex(d, h);
	assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	assert_non_null(million);
	memset(million, 'a', 1000000);
	portable(million, 1000000, 0, d);
	hex(d, h);
	assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	portable(million, 1000000, 4093, d);
	hex(d, h);
	assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
}

static void openssl(const uint8_t *p, size_t n, uint8_t out[32])
{
	unsigned int len = 0;

	assert_int_equal(EVP_Digest(p, n, out, &len, EVP_sha256(), NULL), 1);
	assert_int_equal(len, 32);
}

static void test_against_openssl(void **state)
{
	static const size_t pieces[] = { 0, 1, 3, 55, 56, 63, 64, 65, 127, 200 };
	static const size_t large[] = { 4095, 65536, 65537, 1048583 };
	size_t cap = 1048583;
	uint8_t *buf = malloc(cap), want[32], got[32];
	uint32_t x = 2463534242u;

	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i < cap; i++) { /* xorshift32: bytes of every value */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (uint8_t)x;
	}
	for (size_t n = 0; n <= 1100; n++) {
		openssl(buf, n, want);
		for (size_t k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
			portable(buf, n, pieces[k], got);
			if (memcmp(got, want, 32))
				fail_msg("length %zu in pieces of %zu differs from OpenSSL", n, pieces[k]);
		}
	}
	for (size_t i = 0; i < sizeof(large) / sizeof(large[0]); i++) {
		openssl(buf, large[i], want);
		portable(buf, large[i], 0, got);
		assert_memory_equal(got, want, 32);
		portable(buf, large[i], 8191, got);
		assert_memory_equal(got, want, 32);
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_standard_examples),
		cmocka_unit_test(test_against_openssl),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
