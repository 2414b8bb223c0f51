/*
 * mkpair.c - writes the controlled pair of doc/diff.md: DIR/A.nb and
 * DIR/B.nb, the fixture default whose dynamic-I/O entry 0 holds 00 01 02 03
 * and 00 01 02 04 (scripts/gen-docs.sh runs nbg diff on them).
 * Usage: nbg-fixture-pair DIR
 */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

static int put(const char *dir, const char *name, const uint8_t v[4])
{
	char path[4096];
	size_t n;
	uint8_t *b = fx_dynaio_constant(v, &n);
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	ok = f && fwrite(b, 1, n, f) == n;
	if (f && fclose(f) != 0)
		ok = 0;
	free(b);
	if (!ok)
		fprintf(stderr, "nbg-fixture-pair: cannot write %s\n", path);
	return ok;
}

int main(int argc, char **argv)
{
	static const uint8_t a[4] = { 0, 1, 2, 3 }, b[4] = { 0, 1, 2, 4 };

	if (argc != 2) {
		fprintf(stderr, "usage: nbg-fixture-pair DIR\n");
		return 2;
	}
	return put(argv[1], "A.nb", a) && put(argv[1], "B.nb", b) ? 0 : 3;
}
