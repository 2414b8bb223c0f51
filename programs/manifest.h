/*
 * manifest.h - the lines of a sha256sum manifest, as `sha256sum` writes them
 * and `sha256sum -c` reads them: "<64 hex digits>  <path>" ('*' in place of
 * the second space: binary mode, the same here); a line that starts with a
 * backslash has its path escaped (\\ a backslash, \n a newline, \r a
 * carriage return); a line may end in CRLF.  Text in, text out, no file
 * access: `nbg corpus` reads and writes manifests through these
 * (corpus_manifest.c), and the fuzz harness `manifest` drives them.
 */
#ifndef NBG_MANIFEST_H
#define NBG_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

/* 1 when p[0..n) starts like a manifest line ("<64 hex>  " or "<64 hex> *"),
 * with the digest in d. */
int manifest_head(const char *p, size_t n, uint8_t d[32]);
/* One line p[0..n) without its line end: 1 with the digest in d and the
 * path unescaped in place (*name points into p, NUL-terminated at
 * (*name)[*len], which writes p[n]: the caller's buffer has that byte), or
 * 0 for a line that is not a manifest line. */
int manifest_line_parse(char *p, size_t n, uint8_t d[32], char **name, size_t *len);
/* Calls fn(ctx, number, line, length) for every line of text[0..len), line
 * numbers from 1, the "\n" and a final "\r" not included. */
void manifest_each_line(char *text, size_t len,
			void (*fn)(void *ctx, size_t no, char *line, size_t n), void *ctx);
/* One "<sha256>  <path>\n" line (malloc'd; NULL when memory runs out),
 * escaped the way sha256sum escapes a path holding a backslash, newline or
 * carriage return. */
char *manifest_line(const uint8_t sha256[32], const char *path);

#endif
