/*
 * manifest.h - sha256sum manifests (manifest.c).
 */
#ifndef NBG_CLI_MANIFEST_H
#define NBG_CLI_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

/* 1 when p[0..66) is "<64 hex>  " or "<64 hex> *", with the digest in d. */
int cli_manifest_head(const char *p, size_t n, uint8_t d[32]);
/* One line p[0..n) without its '\n' (a trailing CR is dropped), parsed in
 * place: the NUL-terminated path inside p, with the digest in d, or NULL
 * for a line that is not "<sha256>  <path>" as sha256sum writes it. */
char *cli_manifest_parse_line(char *p, size_t n, uint8_t d[32]);

typedef struct cli_manifest_entry {
	const char *name;
	uint8_t sha256[32];
} cli_manifest_entry;

typedef struct cli_manifest {
	char *data;
	cli_manifest_entry *entries;
	size_t count;
	size_t bad_lines, first_bad_line;
} cli_manifest;

/* Reads a whole manifest (a regular file; never blocks); 0, or an errno.
 * Lines that are not "<sha256>  <path>" are counted in bad_lines and, when
 * `bad` is given, passed to it by number (from 1). */
int cli_manifest_load(const char *path, cli_manifest *mf, void (*bad)(void *ctx, size_t line),
		      void *ctx);
/* The entry naming `name` exactly, or NULL. */
const cli_manifest_entry *cli_manifest_find(const cli_manifest *mf, const char *name);
void cli_manifest_free(cli_manifest *mf);
/* One "<sha256>  <path>\n" line (malloc'd; NULL when memory runs out),
 * escaped the way sha256sum escapes a path holding a backslash, newline or
 * carriage return. */
char *cli_manifest_line(const uint8_t sha256[32], const char *path);

#endif
