/*
 * mkname.c - writes a copy of a v2 NBG whose 64-byte name field at OFFSET
 * (a LAYER record's name, say) holds TEXT, NUL-padded, with every checksum
 * recomputed by the fixture's own zlib code (tests/fixture.c), so the copy
 * is a valid file that carries a hostile name.  For the page's tests.
 * Usage: nbg-fixture-name IN OUT OFFSET TEXT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

int main(int argc, char **argv)
{
	size_t size, len, off;
	uint8_t *b;
	FILE *f;
	int ok;

	if (argc != 5) {
		fprintf(stderr, "usage: nbg-fixture-name IN OUT OFFSET TEXT\n");
		return 2;
	}
	off = strtoul(argv[3], NULL, 0);
	len = strlen(argv[4]);
	if (!(b = fx_read_file(argv[1], &size)) || len > 63 || off + 64 > size) {
		fprintf(stderr, "nbg-fixture-name: cannot read %s, or TEXT or OFFSET too large\n",
			argv[1]);
		free(b);
		return 3;
	}
	memset(b + off, 0, 64);
	memcpy(b + off, argv[4], len);
	fx_refresh(b, size);
	f = fopen(argv[2], "wb");
	ok = f && fwrite(b, 1, size, f) == size;
	if (f && fclose(f) != 0)
		ok = 0;
	free(b);
	if (!ok)
		fprintf(stderr, "nbg-fixture-name: cannot write %s\n", argv[2]);
	return ok ? 0 : 3;
}
