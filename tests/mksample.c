/*
 * mksample.c - writes the bundled sample (tests/sample_model.h), and the
 * weights and biases it encoded, for tests/check_sample.py.
 * Usage: nbg-mksample OUT.nb          the file (samples/sample.nb)
 *        nbg-mksample --values DIR    DIR/conv_w.u8, conv_b.i32, fc_w.u8,
 *                                     fc_b.i32: the kernels [out][kz][ky][kx]
 *                                     and true biases, raw little-endian
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_model.h"

static int put(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;
	int ok;

	if (dir)
		snprintf(path, sizeof(path), "%s/%s", dir, name);
	else
		snprintf(path, sizeof(path), "%s", name);
	f = fopen(path, "wb");
	ok = f && fwrite(p, 1, n, f) == n;
	if (f && fclose(f) != 0)
		ok = 0;
	if (!ok)
		fprintf(stderr, "nbg-mksample: cannot write %s\n", path);
	return ok;
}

static int values(const char *dir)
{
	static const char *const names[SM_LAYERS][2] = { { "conv_w.u8", "conv_b.i32" },
							 { "fc_w.u8", "fc_b.i32" } };
	for (unsigned i = 0; i < SM_LAYERS; i++) {
		const ce_layer *l = sm_layer(i);
		uint8_t b[4 * 64];
		for (uint32_t c = 0; c < l->out && c < 64; c++)
			for (int k = 0; k < 4; k++)
				b[4 * c + k] = (uint8_t)((uint32_t)l->bias[c] >> (8 * k));
		if (!put(dir, names[i][0], l->w, (size_t)l->out * l->kz * l->ky * l->kx) ||
		    !put(dir, names[i][1], b, 4 * (size_t)l->out))
			return 3;
	}
	return 0;
}

int main(int argc, char **argv)
{
	size_t n;
	uint8_t *b;
	int ok;

	if (argc == 3 && !strcmp(argv[1], "--values"))
		return values(argv[2]);
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: nbg-mksample OUT.nb | --values DIR\n");
		return 2;
	}
	b = sm_build(&n);
	ok = put(NULL, argv[1], b, n);
	free(b);
	return ok ? 0 : 3;
}
