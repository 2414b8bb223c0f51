/*
 * mkfile.c - writes a synthesized v2 NBG of about MiB mebibytes for
 * bench/run.sh, with the section mix of the public corpus's largest model
 * (face_landmarks_detector_nbg_fp16.nb): COEF_DATA about 89 % of the bytes,
 * PPU_INSTR about 6 %, LOADSTATE about 5 %, the decoded records and the
 * tables of the fixture builder around them.  The payload bytes are a fixed
 * pseudo-random sequence, so every run builds the same file.
 * Usage: bench_mkfile MiB OUT.nb
 */
#include <stdio.h>
#include <stdlib.h>

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
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 0, size;
	if (argc != 3 || mib == 0) {
		fprintf(stderr, "usage: bench_mkfile MiB OUT.nb\n");
		return 2;
	}
	size_t total = mib << 20;
	fx_spec *s = fx_default();
	fill(s, 24, total / 100 * 89, 1);
	fill(s, 19, total / 100 * 6 / 256 * 256, 2);
	fill(s, 21, total / 100 * 5, 3);
	uint8_t *buf = fx_build(s, &size);
	FILE *f = fopen(argv[2], "wb");
	if (!f || fwrite(buf, 1, size, f) != size || fclose(f) != 0) {
		perror(argv[2]);
		return 3;
	}
	free(buf);
	fx_free(s);
	return 0;
}
