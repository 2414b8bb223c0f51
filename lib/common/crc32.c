/*
 * crc32.c - CRC-32 as zlib computes it (reflected polynomial 0xedb88320,
 * register inverted before and after), in one of two implementations
 * chosen when libnbg is built (-Dcrc32): libdeflate's, which picks
 * carry-less multiplication (PCLMULQDQ on x86, PMULL or the CRC32
 * instructions on Arm) at run time, or portable C, slicing-by-8, for a
 * build without libdeflate.  Combining two CRCs is always the GF(2)
 * arithmetic below.  tests/test_hash.c checks each implementation built
 * against zlib.
 */
#include "common/crc32.h"
#include "common/crc32_tables.h"

#if NBG_CRC32_LIBDEFLATE
#include <libdeflate.h>
#endif

static inline uint32_t load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Eight bytes per step, each looked up in the table of its distance from
 * the end of the step (crc32_tables.h). */
uint32_t nbg_crc32_portable(uint32_t crc, const uint8_t *p, uint64_t n)
{
	crc = ~crc;
	for (; n >= 8; n -= 8, p += 8) {
		uint32_t lo = load_le32(p) ^ crc, hi = load_le32(p + 4);
		crc = crc32_slice[7][lo & 0xff] ^ crc32_slice[6][(lo >> 8) & 0xff] ^
		      crc32_slice[5][(lo >> 16) & 0xff] ^ crc32_slice[4][lo >> 24] ^
		      crc32_slice[3][hi & 0xff] ^ crc32_slice[2][(hi >> 8) & 0xff] ^
		      crc32_slice[1][(hi >> 16) & 0xff] ^ crc32_slice[0][hi >> 24];
	}
	for (; n; n--, p++)
		crc = (crc >> 8) ^ crc32_slice[0][(crc ^ *p) & 0xff];
	return ~crc;
}

#if NBG_CRC32_LIBDEFLATE
uint32_t nbg_crc32_libdeflate(uint32_t crc, const uint8_t *p, uint64_t n)
{
	/* libdeflate takes size_t: huge lengths in pieces (32-bit builds) */
	while (n > SIZE_MAX) {
		crc = libdeflate_crc32(crc, p, SIZE_MAX);
		p += SIZE_MAX;
		n -= SIZE_MAX;
	}
	return libdeflate_crc32(crc, p, (size_t)n);
}
#endif

const char *nbg_crc32_impl_name(void)
{
	return NBG_CRC32_LIBDEFLATE ? "libdeflate" : "portable";
}

/* a times b modulo the polynomial, polynomials over GF(2) in the CRC's bit
 * order: the coefficient of x^0 is bit 31, that of x^31 bit 0. */
static uint32_t mult_mod(uint32_t a, uint32_t b)
{
	uint32_t prod = 0;

	for (uint32_t m = 0x80000000u; m && a; m >>= 1) {
		if (a & m) {
			prod ^= b;
			a ^= m;
		}
		b = b & 1 ? (b >> 1) ^ 0xedb88320u : b >> 1; /* b times x */
	}
	return prod;
}

/*
 * With the register inverted before and after, crc(A||B) = crc(A) x^(8|B|)
 * + crc(B) modulo the polynomial (the inversions of A's end and B's start
 * cancel).  x^(8n) is the product of x^(2^k) over the bits k of 8n, from
 * crc32_x2n; x^(2^32) = x (the order of x divides 2^32 - 1), so the table
 * repeats and any 64-bit length works.  The same derivation as zlib's
 * crc32_combine (1.2.12 and later).
 */
uint32_t nbg_crc32_combine(uint32_t a, uint32_t b, uint64_t len_b)
{
	uint32_t xn = 0x80000000u; /* x^0 */
	unsigned k = 3;            /* 8 len_b: start at x^(2^3) */

	for (; len_b; len_b >>= 1, k = (k + 1) & 31)
		if (len_b & 1)
			xn = mult_mod(crc32_x2n[k], xn);
	return mult_mod(xn, a) ^ b;
}
