/*
 * corpus_manifest.c - manifests in the format sha256sum writes and
 * `sha256sum -c` checks: one "<sha256>  <path>" line per file (a '*' in
 * place of the second space marks binary mode and means the same here); a
 * line that starts with a backslash has its path escaped (\\ for a
 * backslash, \n for a newline, \r for a carriage return).  Lines may end
 * in CRLF.  Paths are relative to the current directory, as for
 * sha256sum -c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corpus_cli.h"

static int hexval(unsigned char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0'
	     : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
	     : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* The digest and the separator of a line: 1 when p[0..66) is
 * "<64 hex>  " or "<64 hex> *". */
static int line_head(const char *p, size_t n, uint8_t d[32])
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

int corpus_manifest_sniff(const char *path)
{
	char buf[67];
	uint8_t d[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	do
		n = read(fd, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return 0;
	return buf[0] == '\\' ? line_head(buf + 1, (size_t)n - 1, d) : line_head(buf, (size_t)n, d);
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

static void bad_line(corpus_walk *w, const char *path, size_t line)
{
	nbg_corpus_add_skipped(w->agg, NBG_CORPUS_SKIP_MANIFEST_LINE);
	if (!w->quiet)
		corpus_warn("%s line %zu: not \"<sha256>  <path>\" as sha256sum writes it; skipped",
			    path, line);
}

/* One line (without its newline): adds the file it lists, or reports it. */
static void manifest_entry(corpus_walk *w, const char *path, size_t no, char *p, size_t n)
{
	uint8_t d[32];
	int escaped = n && p[0] == '\\';
	struct stat st;

	if (escaped) {
		p++;
		n--;
	}
	if (!line_head(p, n, d) || n == 66 || memchr(p, '\0', n)) {
		bad_line(w, path, no);
		return;
	}
	char *name = p + 66;
	size_t len = n - 66;
	if (escaped && (len = unescape(name, len)) == SIZE_MAX) {
		bad_line(w, path, no);
		return;
	}
	name[len] = '\0';
	int known = stat(name, &st) == 0 && S_ISREG(st.st_mode);
	uint64_t size = known ? (uint64_t)st.st_size : 0;
	if (!corpus_list_add(w->list, name, len, known ? &size : NULL, d)) {
		nbg_corpus_add_skipped(w->agg, NBG_CORPUS_SKIP_UNREADABLE);
		corpus_warn("%s line %zu: out of memory for the file list", path, no);
	}
}

void corpus_manifest_read(corpus_walk *w, const char *path)
{
	char *data;
	size_t len, no = 0;
	int e = corpus_read_file(path, &data, &len);

	if (e) {
		nbg_corpus_add_skipped(w->agg, NBG_CORPUS_SKIP_UNREADABLE);
		if (!w->quiet)
			corpus_warn("cannot read manifest %s: %s", path, strerror(e));
		return;
	}
	for (size_t at = 0; at < len;) {
		char *nl = memchr(data + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (data + at)) : len - at, next = at + n + 1;
		/* CRLF, as sha256sum -c accepts: a carriage return in a name is
		 * written escaped (\r), never raw at the end of a line */
		if (n && data[at + n - 1] == '\r')
			n--;
		manifest_entry(w, path, ++no, data + at, n);
		at = next;
	}
	free(data);
}

char *corpus_manifest_line(const uint8_t sha256[32], const char *path)
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
