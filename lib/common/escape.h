/*
 * escape.h - printable file names (escape.c).  Private to libnbg; programs
 * use nbg_path_escape() from nbg/nbg.h.
 */
#ifndef NBG_COMMON_ESCAPE_H
#define NBG_COMMON_ESCAPE_H

#include <stddef.h>

#include "common/internal.h"

/* Writes the escaped form of path into out[cap] (NUL-terminated; cut short
 * ending in "..." when it does not fit).  Returns the full escaped length.
 * out may be NULL with cap 0 to measure. */
NBG_INTERNAL size_t nbg_escape_path_buf(char *out, size_t cap, const char *path);

/* "a FIFO", "a character device", ... for a stat mode (mapfile.c). */
NBG_INTERNAL const char *nbg_file_kind(unsigned mode);

/* A short escaped copy for messages (at most 240 bytes). */
typedef struct nbg_path_text {
	char s[244];
} nbg_path_text;

static inline const char *nbg_path_text_of(nbg_path_text *t, const char *path)
{
	nbg_escape_path_buf(t->s, sizeof(t->s), path);
	return t->s;
}

#endif
