/*
 * test_hash.c - libnbg's SHA-256 and CRC-32 (lib/common/sha256*.c,
 * crc32.c), linked from the static library, against independent oracles:
 *  - SHA-256: FIPS 180-2's examples (appendix B) and the empty message,
 *    then OpenSSL's digest of the same bytes for every length up to 1,100
 *    and a few large ones, each fed whole and in pieces of many sizes, so
 *    that every way a block boundary can fall is met; for every block
 *    function compiled in that this CPU runs (the others are named as not
 *    tested), and for the one the library chose, which must be the first
 *    of them, also on 2^29 + 3 bytes (a length of more than 2^32 bits);
 *  - CRC-32: zlib's crc32 for every length up to 1,100 at every alignment
 *    of 0 to 7 and a few large ones, from several starting values, for
 *    each implementation built, every byte value at every position of a
 *    slicing step, and through nbg_crc32_bytes, the public call; zlib's
 *    crc32_combine64 for lengths up to 2^40;
 *  - the tables of the portable CRC-32 are the generator's
 *    (scripts/gen-crc32-tables.py, run by the meson test crc32-tables).
 */
#define NBG_STATIC_LINKING_ONLY /* nbg_crc32_bytes */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <zlib.h>

#include "common/crc32.h"
#include "common/hash.h"
#include "common/sha256.h"
#include "nbg/nbg.h"

static const nbg_sha256_impl *impl; /* the one under test */

static void ours(const uint8_t *p, size_t n, size_t piece, uint8_t out[32])
{
	nbg_sha256_ctx s;

	nbg_sha256_init_with(&s, impl->blocks);
	if (!piece)
		nbg_sha256_feed(&s, p, n);
	for (size_t at = 0; piece && at < n; at += piece)
		nbg_sha256_feed(&s, p + at, n - at < piece ? n - at : piece);
	nbg_sha256_final(&s, out);
}

static void hex(const uint8_t d[32], char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void check_examples(void)
{
	static const char b2[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	uint8_t d[32];
	char h[65];
	uint8_t *million = malloc(1000000);

	ours((const uint8_t *)"", 0, 0, d);
	hex(d, h);
	assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	ours((const uint8_t *)"abc", 3, 0, d);
	hex(d, h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	ours((const uint8_t *)b2, sizeof(b2) - 1, 0, d);
	hex(d, h);
	assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	assert_non_null(million);
	memset(million, 'a', 1000000);
	ours(million, 1000000, 0, d);
	hex(d, h);
	assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	ours(million, 1000000, 4093, d);
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

/* xorshift32: bytes of every value */
static uint8_t *noise(size_t n, uint32_t x)
{
	uint8_t *b = malloc(n);

	assert_non_null(b);
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (uint8_t)x;
	}
	return b;
}

static void check_against_openssl(void)
{
	static const size_t pieces[] = { 0, 1, 3, 55, 56, 63, 64, 65, 127, 200 };
	static const size_t large[] = { 4095, 65536, 65537, 1048583 };
	uint8_t *buf = noise(1048583, 2463534242u), want[32], got[32];

	for (size_t n = 0; n <= 1100; n++) {
		openssl(buf, n, want);
		for (size_t k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
			ours(buf, n, pieces[k], got);
			if (memcmp(got, want, 32))
				fail_msg("%s: length %zu in pieces of %zu differs from OpenSSL",
					 impl->name, n, pieces[k]);
		}
	}
	for (size_t i = 0; i < sizeof(large) / sizeof(large[0]); i++) {
		openssl(buf, large[i], want);
		ours(buf, large[i], 0, got);
		assert_memory_equal(got, want, 32);
		ours(buf, large[i], 8191, got);
		assert_memory_equal(got, want, 32);
	}
	free(buf);
}

/* Every block function compiled in that this CPU runs. */
static void test_sha256_implementations(void **state)
{
	size_t n, tested = 0;
	const nbg_sha256_impl *all = nbg_sha256_impls(&n);

	(void)state;
	assert_true(n >= 1);
	assert_string_equal(all[n - 1].name, "portable");
	for (size_t i = 0; i < n; i++) {
		impl = &all[i];
		if (impl->usable && !impl->usable()) {
			print_message("SHA-256 %s: compiled in, not run by this CPU: not tested\n",
				      impl->name);
			continue;
		}
		print_message("SHA-256 %s: tested\n", impl->name);
		check_examples();
		check_against_openssl();
		tested++;
	}
	assert_true(tested >= 1);
}

/* The library's choice is the first usable one, and nbg_sha256 (what
 * every part of the library calls) gives OpenSSL's digests. */
static void test_sha256_chosen(void **state)
{
	size_t n, i = 0;
	const nbg_sha256_impl *all = nbg_sha256_impls(&n);
	uint8_t *buf = noise(70000, 88172645u), want[32], got[32];

	(void)state;
	while (all[i].usable && !all[i].usable())
		i++;
	print_message("SHA-256 chosen here: %s\n", nbg_sha256_impl_name());
	assert_string_equal(nbg_sha256_impl_name(), all[i].name);
	for (size_t len = 0; len < 70000; len = len * 3 + 1) {
		openssl(buf, len, want);
		nbg_sha256(buf, len, got);
		assert_memory_equal(got, want, 32);
	}
	free(buf);
	/* 2^29 + 3 bytes (of zero pages: no memory touched): 2^32 + 24 bits,
	 * so the high word of the length in the padding is not zero */
	size_t big = ((size_t)1 << 29) + 3;
	uint8_t *zeros = calloc(1, big);
	assert_non_null(zeros);
	openssl(zeros, big, want);
	nbg_sha256(zeros, big, got);
	assert_memory_equal(got, want, 32);
	free(zeros);
}

typedef uint32_t (*crc_fn)(uint32_t, const uint8_t *, uint64_t);

static void check_crc(const char *name, crc_fn f)
{
	static const uint32_t starts[] = { 0, 1, 0xffffffffu, 0x12345678u };
	static const size_t large[] = { 65536, 65537, 1048583, 3u << 20 };
	size_t cap = (3u << 20) + 8;
	uint8_t *buf = noise(cap, 2463534242u);

	for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++)
		for (size_t align = 0; align < 8; align++)
			for (size_t n = 0; n <= 1100; n++) {
				uint32_t want = (uint32_t)crc32(starts[s], buf + align, (uInt)n);
				uint32_t got = f(starts[s], buf + align, n);
				if (got != want)
					fail_msg("CRC-32 %s: start 0x%08x, offset %zu, length %zu: "
						 "0x%08x, zlib 0x%08x", name, starts[s], align, n,
						 got, want);
			}
	for (size_t i = 0; i < sizeof(large) / sizeof(large[0]); i++)
		assert_int_equal(f(0, buf + 1, large[i]), (uint32_t)crc32(0, buf + 1, (uInt)large[i]));
	/* every byte value at every position of an 8-byte step, in front of
	 * both a zero and a non-zero register */
	for (unsigned pos = 0; pos < 16; pos++)
		for (unsigned v = 0; v < 256; v++) {
			uint8_t b[16] = { 0 };
			b[pos] = (uint8_t)v;
			assert_int_equal(f(0, b, 16), (uint32_t)crc32(0, b, 16));
			assert_int_equal(f(0x9e3779b9u, b, 16), (uint32_t)crc32(0x9e3779b9u, b, 16));
		}
	free(buf);
}

static uint32_t crc32_bytes(uint32_t crc, const uint8_t *p, uint64_t n)
{
	return nbg_crc32_bytes(crc, p, (size_t)n);
}

static void test_crc32_implementations(void **state)
{
	(void)state;
	print_message("CRC-32 of this build: %s\n", nbg_crc32_impl_name());
	check_crc("portable", nbg_crc32_portable);
#if NBG_CRC32_LIBDEFLATE
	check_crc("libdeflate", nbg_crc32_libdeflate);
#endif
	check_crc("nbg_crc32", nbg_crc32);
	check_crc("nbg_crc32_bytes", crc32_bytes);
	assert_int_equal(nbg_crc32_bytes(0x12345678u, NULL, 16), 0x12345678u);
}

/* crc(A||B) from crc(A), crc(B) and len(B), against zlib: lengths around
 * every power of two up to 2^40 (the order of x repeats the table every
 * 32 powers), with B's CRC taken as given (any 32-bit value). */
static void test_crc32_combine(void **state)
{
	uint8_t *buf = noise(5000, 5381u);
	uint32_t x = 12345u;

	(void)state;
	for (size_t a = 0; a < 5000; a += 997)
		for (size_t b = 0; a + b <= 5000; b = b * 2 + 1) {
			uint32_t ca = (uint32_t)crc32(0, buf, (uInt)a);
			uint32_t cb = (uint32_t)crc32(0, buf + a, (uInt)b);
			assert_int_equal(nbg_crc32_combine(ca, cb, b),
					 (uint32_t)crc32(0, buf, (uInt)(a + b)));
		}
	for (int k = 0; k <= 40; k++)
		for (int d = -2; d <= 2; d++) {
			int64_t len = ((int64_t)1 << k) + d;
			if (len < 0)
				continue;
			x = x * 1103515245u + 12345u;
			uint32_t ca = x, cb = x * 2654435761u;
			assert_int_equal(nbg_crc32_combine(ca, cb, (uint64_t)len),
					 (uint32_t)crc32_combine64(ca, cb, (z_off64_t)len));
		}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_implementations),
		cmocka_unit_test(test_sha256_chosen),
		cmocka_unit_test(test_crc32_implementations),
		cmocka_unit_test(test_crc32_combine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
