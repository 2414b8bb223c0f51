/*
 * bench_hash.c - MB/s per core of every SHA-256 and CRC-32 implementation
 * libnbg can use, beside the libraries it could use instead, on the same
 * buffer in interleaved rounds (so that machine noise hits all alike):
 *   SHA-256: each block function of libnbg this CPU runs (sha256.h: SHA-NI
 *            or ARMv8 CE, portable C), and OpenSSL's EVP (what linking
 *            OpenSSL would give);
 *   CRC-32:  libnbg's portable slicing-by-8 and zlib, and libdeflate and
 *            ISA-L where they were found at build time.
 * One thread: pin it to a core (taskset -c 0) for figures per core.  It
 * prints each one's median MB/s (10^6 bytes per second) and its ratio to
 * OpenSSL's SHA-256 or zlib's CRC-32.
 * Usage: bench_hash [MiB per buffer (16)] [rounds (9)] [small bytes (4096)]
 * The small size times many calls on a buffer of that size instead (the
 * cost of a section's or a range's digest).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <zlib.h>
#ifdef NBG_BENCH_ISAL
#include <isa-l/crc.h>
#endif
#ifdef NBG_BENCH_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "common/crc32.h"
#include "common/sha256.h"

#include "bench_time.h"

#define MAX_IMPLS 8

typedef struct bench {
	const char *name;
	void (*run)(const struct bench *b, const uint8_t *p, size_t n);
	nbg_sha256_blocks_fn blocks;
	double t[64];
} bench;

static volatile uint32_t sink;

static void run_ours(const bench *b, const uint8_t *p, size_t n)
{
	nbg_sha256_ctx s;
	uint8_t d[32];

	nbg_sha256_init_with(&s, b->blocks);
	nbg_sha256_feed(&s, p, n);
	nbg_sha256_final(&s, d);
	sink ^= d[0];
}

static void run_openssl(const bench *b, const uint8_t *p, size_t n)
{
	uint8_t d[32];
	unsigned len = 32;

	(void)b;
	EVP_Digest(p, n, d, &len, EVP_sha256(), NULL);
	sink ^= d[0];
}

#ifdef NBG_BENCH_LIBDEFLATE
static void run_libdeflate(const bench *b, const uint8_t *p, size_t n)
{
	(void)b;
	sink ^= libdeflate_crc32(0, p, n);
}
#endif

static void run_portable_crc(const bench *b, const uint8_t *p, size_t n)
{
	(void)b;
	sink ^= nbg_crc32_portable(0, p, n);
}

static void run_zlib(const bench *b, const uint8_t *p, size_t n)
{
	(void)b;
	sink ^= (uint32_t)crc32(0, p, (uInt)n);
}

#ifdef NBG_BENCH_ISAL
static void run_isal(const bench *b, const uint8_t *p, size_t n)
{
	(void)b;
	sink ^= crc32_gzip_refl(0, p, n);
}
#endif

/* Each round runs every implementation once over `total` bytes, in calls
 * of `piece` bytes; prints the medians and the ratios to the reference
 * (the entry `ref`). */
static void measure(const char *what, bench *bs, size_t nb, size_t ref, const uint8_t *buf,
		    size_t total, size_t piece, int rounds)
{
	double med[MAX_IMPLS];

	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < nb; i++) {
			double t0 = bench_wall();
			for (size_t at = 0; at + piece <= total; at += piece)
				bs[i].run(&bs[i], buf + at, piece);
			bs[i].t[r] = bench_wall() - t0;
		}
	for (size_t i = 0; i < nb; i++) {
		qsort(bs[i].t, (size_t)rounds, sizeof(double), bench_cmp_double);
		med[i] = bs[i].t[rounds / 2];
	}
	for (size_t i = 0; i < nb; i++)
		printf("%-8s %-22s %9zu-byte calls %8.0f MB/s  %5.2fx %s\n", what, bs[i].name, piece,
		       (double)(total / piece * piece) / med[i] / 1e6, med[ref] / med[i],
		       bs[ref].name);
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? (size_t)atoi(argv[1]) : 16;
	int rounds = argc > 2 ? atoi(argv[2]) : 9;
	size_t small = argc > 3 ? (size_t)atoi(argv[3]) : 4096;
	size_t total = mib << 20, n_impl;
	uint8_t *buf = malloc(total);
	bench sha[MAX_IMPLS] = { { 0 } }, crc[MAX_IMPLS] = { { 0 } };
	size_t ns = 0, nc = 0;
	const nbg_sha256_impl *impls = nbg_sha256_impls(&n_impl);

	if (!buf || rounds < 1 || rounds > 64 || !small || small > total) {
		fprintf(stderr, "usage: bench_hash [MiB] [rounds, 1-64] [small bytes]\n");
		return 2;
	}
	for (size_t i = 0; i < total; i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 13);
	sha[ns++] = (bench){ .name = "OpenSSL EVP", .run = run_openssl };
	for (size_t i = 0; i < n_impl && ns < MAX_IMPLS; i++)
		if (!impls[i].usable || impls[i].usable())
			sha[ns++] = (bench){ .name = impls[i].name, .run = run_ours,
					     .blocks = impls[i].blocks };
	crc[nc++] = (bench){ .name = "zlib", .run = run_zlib };
#ifdef NBG_BENCH_LIBDEFLATE
	crc[nc++] = (bench){ .name = "libdeflate", .run = run_libdeflate };
#endif
#ifdef NBG_BENCH_ISAL
	crc[nc++] = (bench){ .name = "ISA-L", .run = run_isal };
#endif
	crc[nc++] = (bench){ .name = "portable (slicing-8)", .run = run_portable_crc };
	printf("%zu MiB buffer, %d rounds (medians), one thread; libnbg's SHA-256 here: %s\n", mib,
	       rounds, nbg_sha256_impl_name());
	measure("SHA-256", sha, ns, 0, buf, total, total, rounds);
	measure("SHA-256", sha, ns, 0, buf, total, small, rounds);
	measure("CRC-32", crc, nc, 0, buf, total, total, rounds);
	measure("CRC-32", crc, nc, 0, buf, total, small, rounds);
	free(buf);
	return 0;
}
