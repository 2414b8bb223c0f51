/*
 * fuzz_manifest.c - libFuzzer harness: sha256sum manifests as `nbg corpus`
 * and `nbg verify --manifest` read them and `nbg corpus --write-manifest`
 * writes them (programs/manifest.c).  The input is a manifest, cut into
 * lines as cli_manifest_load cuts it.  Checked beyond memory safety, line
 * by line:
 *  - a line read as a manifest line starts with 64 hex digits and a
 *    separator (cli_manifest_head agrees, with the digest), and its path
 *    holds no NUL;
 *  - the line nbg writes for that digest and path (cli_manifest_line) is
 *    one line ending in "\n", and reads back to the same digest and path,
 *    with LF and with CRLF.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "manifest.h"

static void reread(const uint8_t d[32], const char *name, int crlf)
{
	char *line = cli_manifest_line(d, name);
	FZ_CHECK(line != NULL);
	size_t n = strlen(line);
	FZ_CHECK(n > 66 && line[n - 1] == '\n' && memchr(line, '\n', n) == line + n - 1);
	char *copy = malloc(n + 2); /* the line, maybe a CR, and room for the NUL */
	FZ_CHECK(copy != NULL);
	memcpy(copy, line, n - 1);
	size_t m = n - 1;
	if (crlf)
		copy[m++] = '\r';
	copy[m] = '\n';
	uint8_t d2[32];
	char *name2 = cli_manifest_parse_line(copy, m, d2);
	FZ_CHECK(name2 != NULL && !memcmp(d, d2, 32) && !strcmp(name2, name));
	free(copy);
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	FZ_CHECK(text != NULL);
	memcpy(text, data, size);
	text[size] = '\0';
	for (size_t at = 0, no = 0; at < size; no++) {
		char *p = text + at, *nl = memchr(p, '\n', size - at);
		size_t n = nl ? (size_t)(nl - p) : size - at;
		int escaped = n && p[0] == '\\';
		uint8_t d[32], h[32];
		int head = n > (size_t)escaped && cli_manifest_head(p + escaped, n - (size_t)escaped, h);
		char *name = cli_manifest_parse_line(p, n, d);
		at += n + 1;
		if (!name)
			continue;
		FZ_CHECK(head && !memcmp(d, h, 32));
		FZ_CHECK(name > p && name + strlen(name) <= p + n);
		reread(d, name, (int)(no & 1));
	}
	free(text);
	return 0;
}
