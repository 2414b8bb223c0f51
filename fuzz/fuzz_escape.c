/*
 * fuzz_escape.c - libFuzzer harness: file names as the command layer prints
 * them (nbg_path_escape, nbg_escape_path_buf, and the path in nbg_map_file's
 * messages).  The input, up to its first NUL, is a file name.  Checked
 * against a decoder written here, independently of lib/common/escape.c:
 * the escaped text holds no control byte, is valid UTF-8 without a code
 * point that hides or reorders text, decodes back to the name exactly, and
 * a cut copy always fits its buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/escape.h"
#include "nbg/nbg.h"
#include "fuzz_common.h"

/* Strict UTF-8 decode of one code point; 0 when invalid. */
static size_t utf8(const unsigned char *p, unsigned *cp)
{
	unsigned c;
	size_t n;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if ((p[0] & 0xe0) == 0xc0)
		n = 2, c = p[0] & 0x1fu;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, c = p[0] & 0x0fu;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, c = p[0] & 0x07u;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3fu);
	}
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

static int bad_code_point(unsigned c)
{
	return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) || c == 0x061c ||
	       c == 0x200e || c == 0x200f || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x2066 && c <= 0x2069) || c == 0x2028 || c == 0x2029;
}

/* Decodes the escapes; returns the length written to out, or -1. */
static long unescape(const char *s, char *out)
{
	static const char letters[] = "abtnvfr";
	long o = 0;

	while (*s) {
		if (*s != '\\') {
			out[o++] = *s++;
			continue;
		}
		s++;
		const char *l = *s ? strchr(letters, *s) : NULL;
		if (*s == '\\') {
			out[o++] = '\\';
			s++;
		} else if (l) {
			out[o++] = (char)(7 + (l - letters));
			s++;
		} else if (s[0] >= '0' && s[0] <= '3' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' &&
			   s[2] <= '7') {
			out[o++] = (char)((s[0] - '0') << 6 | (s[1] - '0') << 3 | (s[2] - '0'));
			s += 3;
		} else {
			return -1;
		}
	}
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = strnlen((const char *)data, size);
	char *name = malloc(n + 1);

	FZ_CHECK(name != NULL);
	memcpy(name, data, n);
	name[n] = '\0';

	char *e = nbg_path_escape(name);
	FZ_CHECK(e != NULL);
	size_t len = strlen(e);
	for (size_t i = 0; i < len;) {
		unsigned cp;
		size_t k = utf8((const unsigned char *)e + i, &cp);
		FZ_CHECK(k > 0 && !bad_code_point(cp));
		i += k;
	}
	char *back = malloc(len + 1);
	FZ_CHECK(back != NULL);
	long b = unescape(e, back);
	FZ_CHECK(b == (long)n && !memcmp(back, name, n));
	FZ_CHECK(nbg_path_needs_escape(name) == (strcmp(e, name) != 0));
	free(back);

	/* A cut copy fits and is a prefix of the full one (then "..."). */
	size_t cap = size ? (size_t)data[size - 1] % 64 + 1 : 1;
	char small[64];
	FZ_CHECK(nbg_escape_path_buf(small, cap, name) == len);
	FZ_CHECK(strlen(small) < cap);
	if (len < cap)
		FZ_CHECK(!strcmp(small, e));

	/* The path in a library message is escaped too. */
	char path[512];
	snprintf(path, sizeof(path), "/nonexistent-nbg-fuzz/%s", name);
	nbg_mapping m;
	nbg_error err;
	FZ_CHECK(nbg_map_file(path, &m, &err) != NBG_OK);
	for (const char *p = err.message; *p; p++)
		FZ_CHECK((unsigned char)*p >= 0x20 && (unsigned char)*p != 0x7f);

	free(e);
	free(name);
	return 0;
}
