/*
 * manifest.c - the lines of a sha256sum manifest (manifest.h): parsed and
 * written as text, with no file access.
 */
#include <stdlib.h>
#include <string.h>

#include "manifest.h"
#include "nbg/nbg.h"

static int hexval(unsigned char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0'
	     : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
	     : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* The digest and the separator of a line: 1 when p[0..66) is
 * "<64 hex>  " or "<64 hex> *". */
int manifest_head(const char *p, size_t n, uint8_t d[32])
{
	if (n < 66 || p[64] != ' ' || (p[65] != ' ' && p[65] != '*'))
		return 0;
	for (int i = 0; i < 32; i++) {
		int hi = hexval((unsigned char)p[2 * i]), lo = hexval((unsigned char)p[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return 0;
		d[i] = (uint8_t)(hi << 4 | lo);
	}
	return 1;
}

/* Undoes sha256sum's escaping in place; returns the new length, or
 * SIZE_MAX for an escape sha256sum never writes. */
static size_t unescape(char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\') {
			s[o++] = s[i];
			continue;
		}
		if (++i == n)
			return SIZE_MAX;
		if (s[i] == '\\')
			s[o++] = '\\';
		else if (s[i] == 'n')
			s[o++] = '\n';
		else if (s[i] == 'r')
			s[o++] = '\r';
		else
			return SIZE_MAX;
	}
	return o;
}

int manifest_line_parse(char *p, size_t n, uint8_t d[32], char **name, size_t *len)
{
	int escaped = n && p[0] == '\\';

	if (escaped) {
		p++;
		n--;
	}
	if (!manifest_head(p, n, d) || n == 66 || memchr(p, '\0', n))
		return 0;
	*name = p + 66;
	*len = n - 66;
	if (escaped && (*len = unescape(*name, *len)) == SIZE_MAX)
		return 0;
	(*name)[*len] = '\0';
	return 1;
}

void manifest_each_line(char *text, size_t len,
			void (*fn)(void *ctx, size_t no, char *line, size_t n), void *ctx)
{
	size_t no = 0;

	for (size_t at = 0; at < len;) {
		char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at, next = at + n + 1;
		/* CRLF, as sha256sum -c accepts: a carriage return in a name is
		 * written escaped (\r), never raw at the end of a line */
		if (n && text[at + n - 1] == '\r')
			n--;
		fn(ctx, ++no, text + at, n);
		at = next;
	}
}

char *manifest_line(const uint8_t sha256[32], const char *path)
{
	int escape = strpbrk(path, "\\\n\r") != NULL;
	size_t n = strlen(path);
	char *line = malloc(2 * n + 70), *o = line;

	if (!line)
		return NULL;
	if (escape)
		*o++ = '\\';
	nbg_hex32(sha256, o);
	o += 64;
	*o++ = ' ';
	*o++ = ' ';
	for (const char *p = path; *p; p++) {
		char rep = !escape ? 0 : *p == '\\' ? '\\' : *p == '\n' ? 'n' : *p == '\r' ? 'r' : 0;
		if (rep) {
			*o++ = '\\';
			*o++ = rep;
		} else {
			*o++ = *p;
		}
	}
	*o++ = '\n';
	*o = '\0';
	return line;
}
