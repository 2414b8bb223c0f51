/*
 * fuzz_manifest.c - libFuzzer harness: sha256sum manifests as `nbg corpus`
 * reads and writes them (programs/manifest.c).  The input is a manifest.
 * Checked beyond memory safety, line by line:
 *  - a line read as a manifest line has 64 hex digits and a separator, and
 *    a path without a NUL;
 *  - the line nbg writes for that digest and path (manifest_line) is one
 *    line, ends in "\n", and reads back to the same digest and path, also
 *    with CRLF;
 *  - manifest_head agrees with the parse on the lines it accepts.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "manifest.h"

typedef struct seen {
	size_t lines, good;
} seen;

static void reread(const uint8_t d[32], const char *name, size_t len, int crlf)
{
	char *line = manifest_line(d, name);
	FZ_CHECK(line != NULL);
	size_t n = strlen(line);
	FZ_CHECK(n > 66 && line[n - 1] == '\n' && memchr(line, '\n', n) == line + n - 1);
	/* room for the CR, and for the NUL the parse writes */
	char *copy = malloc(n + 2);
	FZ_CHECK(copy != NULL);
	memcpy(copy, line, n - 1);
	size_t m = n - 1;
	if (crlf)
		copy[m++] = '\r';
	copy[m] = '\n';
	uint8_t d2[32];
	char *name2;
	size_t len2;
	/* the line end as manifest_each_line hands it: no "\n", no final "\r" */
	FZ_CHECK(manifest_line_parse(copy, n - 1, d2, &name2, &len2) == 1);
	FZ_CHECK(!memcmp(d, d2, 32) && len2 == len && !memcmp(name2, name, len));
	free(copy);
	free(line);
}

static void one_line(void *ctx, size_t no, char *p, size_t n)
{
	seen *s = ctx;
	uint8_t d[32], h[32];
	char *name;
	size_t len;
	int escaped = n && p[0] == '\\';
	int head = manifest_head(p + escaped, n - (size_t)escaped, h);

	FZ_CHECK(no == ++s->lines);
	FZ_CHECK(!memchr(p, '\n', n));
	if (!manifest_line_parse(p, n, d, &name, &len))
		return;
	s->good++;
	FZ_CHECK(head && !memcmp(d, h, 32));
	FZ_CHECK(strlen(name) == len);
	reread(d, name, len, (int)(no & 1));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	seen s = { 0, 0 };

	FZ_CHECK(text != NULL);
	memcpy(text, data, size);
	text[size] = '\0';
	manifest_each_line(text, size, one_line, &s);
	FZ_CHECK(s.good <= s.lines);
	size_t newlines = 0;
	for (size_t i = 0; i < size; i++)
		newlines += data[i] == '\n';
	FZ_CHECK(s.lines == newlines + (size && data[size - 1] != '\n'));
	free(text);
	return 0;
}
