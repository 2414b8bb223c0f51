/*
 * bench_parse.c - how close nbg_parse comes to the irreducible work.
 *
 * Parsing a v2 file hashes every byte with SHA-256 (the whole file, and each
 * section once more for its fingerprint) and CRCs every section byte once.
 * This benchmark times, side by side on the same buffer and interleaved so
 * machine noise hits both alike:
 *   ref   = SHA-256(file) + SHA-256(every section) + CRC-32(every section),
 *           run with the same primitives (libnbg's SHA-256, libdeflate);
 *   parse = nbg_parse() on the file;
 *   sha1x = one SHA-256 pass over the file: the floor once the whole-file
 *           hash runs on a second thread beside the section work;
 *   copy  = memcpy of the file (memory bandwidth, for scale).
 * It reports ratios (parse / ref, parse / copy), never absolute times as a
 * pass/fail criterion.  Usage: bench_parse [MiB] [rounds] [file.nb]
 */
#define NBG_STATIC_LINKING_ONLY /* nbg_sha256_bytes */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libdeflate.h>

#include "fixture.h"
#include "nbg/nbg.h"

#include "bench_time.h"

static void sha(const uint8_t *p, size_t n, uint8_t out[32])
{
	nbg_sha256_bytes(p, n, out);
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? (size_t)atoi(argv[1]) : 64;
	int rounds = argc > 2 ? atoi(argv[2]) : 7;
	size_t size;
	uint8_t *buf;

	if (argc > 3) {
		buf = fx_read_file(argv[3], &size);
		if (!buf) {
			perror(argv[3]);
			return 3;
		}
	} else {
		fx_spec *s = fx_default();
		fx_section *coef = fx_find(s, 24);
		free(coef->data);
		coef->size = mib << 20;
		coef->data = malloc(coef->size);
		for (size_t i = 0; i < coef->size; i++)
			coef->data[i] = (uint8_t)(i * 2654435761u >> 13);
		buf = fx_build(s, &size);
		fx_free(s);
	}

	nbg_model *m;
	nbg_error err;
	if (nbg_parse(buf, size, NULL, &m, &err) != NBG_OK) {
		fprintf(stderr, "bench: %s: %s\n", nbg_code_name(err.code), err.message);
		return 1;
	}
	size_t nsec = nbg_model_section_count(m);
	uint64_t *off = malloc(nsec * sizeof(*off)), *len = malloc(nsec * sizeof(*len));
	for (size_t i = 0; i < nsec; i++) {
		off[i] = nbg_model_section_at(m, i)->offset;
		len[i] = nbg_model_section_at(m, i)->size;
	}
	nbg_model_free(m);

	uint8_t *dst = malloc(size), d[32];
	double *t_ref = calloc(rounds, sizeof(double)), *t_parse = calloc(rounds, sizeof(double)),
	       *t_copy = calloc(rounds, sizeof(double)), *t_sha = calloc(rounds, sizeof(double));
	volatile uint32_t sink = 0;

	(void)sink;

	for (int r = 0; r < rounds; r++) {
		double t0 = bench_wall();
		sha(buf, size, d);
		for (size_t i = 0; i < nsec; i++) {
			sha(buf + off[i], len[i], d);
			sink ^= libdeflate_crc32(0, buf + off[i], len[i]);
		}
		double t1 = bench_wall();
		if (nbg_parse(buf, size, NULL, &m, &err) != NBG_OK)
			return 1;
		nbg_model_free(m);
		double t2 = bench_wall();
		memcpy(dst, buf, size);
		sink ^= dst[size / 2];
		double t3 = bench_wall();
		sha(buf, size, d);
		double t4 = bench_wall();
		t_sha[r] = t4 - t3;
		t_ref[r] = t1 - t0;
		t_parse[r] = t2 - t1;
		t_copy[r] = t3 - t2;
	}
	qsort(t_ref, rounds, sizeof(double), bench_cmp_double);
	qsort(t_parse, rounds, sizeof(double), bench_cmp_double);
	qsort(t_copy, rounds, sizeof(double), bench_cmp_double);
	qsort(t_sha, rounds, sizeof(double), bench_cmp_double);
	double ref = t_ref[rounds / 2], parse = t_parse[rounds / 2], copy = t_copy[rounds / 2];
	printf("file: %zu bytes, %zu sections, %d rounds (medians)\n", size, nsec, rounds);
	printf("parse / reference (2x SHA-256 + CRC-32, same primitives): %.3f\n", parse / ref);
	printf("parse / one SHA-256 pass over the file: %.3f\n", parse / t_sha[rounds / 2]);
	printf("parse / memcpy: %.1f\n", parse / copy);
	printf("parse throughput: %.0f MiB/s (informative only)\n", size / parse / (1 << 20));
	free(buf);
	free(dst);
	free(off);
	free(len);
	free(t_ref);
	free(t_parse);
	free(t_copy);
	free(t_sha);
	return 0;
}
