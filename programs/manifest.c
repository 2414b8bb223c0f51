/*
 * manifest.c - reading and writing manifests in the format sha256sum writes
 * and `sha256sum -c` checks, shared by `nbg corpus --manifest` and `nbg
 * verify --manifest`: one "<sha256>  <path>" line per file (a '*' in place of the
 * second space marks binary mode and means the same here); a line that
 * starts with a backslash has its path escaped (\\ for a backslash, \n for
 * a newline, \r for a carriage return); a line may end in CR LF, as
 * `sha256sum -c` accepts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "corpus_cli.h"
#include "manifest.h"

static int hexval(unsigned char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0'
	     : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
	     : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

int cli_manifest_head(const char *p, size_t n, uint8_t d[32])
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

char *cli_manifest_parse_line(char *p, size_t n, uint8_t d[32])
{
	int escaped = n && p[0] == '\\';

	/* CR LF: sha256sum escapes a CR that belongs to a name (\r), so a raw
	 * CR at the end of a line is always the line ending's. */
	if (n && p[n - 1] == '\r')
		n--;
	if (escaped) {
		p++;
		n--;
	}
	if (!cli_manifest_head(p, n, d) || n == 66 || memchr(p, '\0', n))
		return NULL;
	char *name = p + 66;
	size_t len = n - 66;
	if (escaped && (len = unescape(name, len)) == SIZE_MAX)
		return NULL;
	name[len] = '\0';
	return name;
}

int cli_manifest_load(const char *path, cli_manifest *mf, void (*bad)(void *ctx, size_t line),
		      void *ctx)
{
	size_t len, cap = 0;
	int e;

	memset(mf, 0, sizeof(*mf));
	if ((e = corpus_read_file(path, &mf->data, &len)) != 0)
		return e;
	for (size_t at = 0, no = 0; at < len; no++) {
		char *nl = memchr(mf->data + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (mf->data + at)) : len - at;
		uint8_t d[32];
		char *name = cli_manifest_parse_line(mf->data + at, n, d);

		at += n + 1;
		if (!name) {
			if (!mf->bad_lines++)
				mf->first_bad_line = no + 1;
			if (bad)
				bad(ctx, no + 1);
			continue;
		}
		if (mf->count == cap) {
			size_t c2 = cap ? cap * 2 : 16;
			cli_manifest_entry *ne = realloc(mf->entries, c2 * sizeof(*ne));
			if (!ne) {
				cli_manifest_free(mf);
				return ENOMEM;
			}
			mf->entries = ne;
			cap = c2;
		}
		mf->entries[mf->count].name = name;
		memcpy(mf->entries[mf->count].sha256, d, 32);
		mf->count++;
	}
	return 0;
}

const cli_manifest_entry *cli_manifest_find(const cli_manifest *mf, const char *name)
{
	/* the last line naming a file wins, as a later line of sha256sum -c
	 * would be checked last */
	long i = cli_lookup(mf->entries, mf->count, sizeof(*mf->entries), name);
	return i < 0 ? NULL : &mf->entries[i];
}

void cli_manifest_free(cli_manifest *mf)
{
	free(mf->entries);
	free(mf->data);
	memset(mf, 0, sizeof(*mf));
}

char *cli_manifest_line(const uint8_t sha256[32], const char *path)
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
