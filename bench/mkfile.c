/*
 * mkfile.c - writes a synthesized v2 NBG for bench/run.sh.
 *
 *   bench_mkfile MiB OUT.nb
 *     about MiB mebibytes with the section mix of the public corpus's
 *     largest model (face_landmarks_detector_nbg_fp16.nb): COEF_DATA about
 *     89 % of the bytes, PPU_INSTR about 6 %, LOADSTATE about 5 %, the
 *     decoded records and the tables of the fixture builder around them.
 *
 *   bench_mkfile --records K OUT.nb
 *     the fixture's graph K times over (fx_many_records: about 850 bytes of
 *     records per group) with small payloads: a file that is almost all
 *     records, for the memory the graph reports need per byte.
 *
 * The payload bytes are a fixed pseudo-random sequence, so every run builds
 * the same file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

static void fill(fx_spec *s, uint32_t type, size_t size, uint32_t seed)
{
	fx_section *x = fx_find(s, type);
	if (!x) {
		fprintf(stderr, "bench_mkfile: the fixture has no section %u\n", type);
		exit(1);
	}
	fx_resize(x, size);
	for (size_t i = 0; i < size; i++)
		x->data[i] = (uint8_t)((i + seed) * 2654435761u >> 13);
}

int main(int argc, char **argv)
{
	size_t n = argc == 3 ? strtoul(argv[1], NULL, 10) : 0, size;
	int records = argc == 4 && !strcmp(argv[1], "--records");
	fx_spec *s;

	if (records)
		n = strtoul(argv[2], NULL, 10);
	if ((argc != 3 && !records) || n == 0) {
		fprintf(stderr, "usage: bench_mkfile MiB OUT.nb | bench_mkfile --records K OUT.nb\n");
		return 2;
	}
	s = fx_default();
	if (records) {
		fx_many_records(s, n);
	} else {
		size_t total = n << 20;
		fill(s, 24, total / 100 * 89, 1);
		fill(s, 19, total / 100 * 6 / 256 * 256, 2);
		fill(s, 21, total / 100 * 5, 3);
	}
	uint8_t *buf = fx_build(s, &size);
	const char *out = argv[argc - 1];
	FILE *f = fopen(out, "wb");
	if (!f || fwrite(buf, 1, size, f) != size || fclose(f) != 0) {
		perror(out);
		return 3;
	}
	free(buf);
	fx_free(s);
	return 0;
}
