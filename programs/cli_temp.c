/*
 * cli_temp.c - the temporaries' names for the commands that write their
 * output files themselves (`nbg graph`, `nbg run`): a hidden name beside the
 * file to replace, cut to fit NAME_MAX.  They are created with the
 * library's nbg_temp_create, registered for removal before any signal can
 * leave one behind.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

char *nbg_temp_beside(const char *path, const char *tag)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0, n = strlen(path) + strlen(tag) + 32;
	int keep = NAME_MAX - (int)strlen(tag) - 9; /* ".", ".", tag, ".XXXXXX" */
	char *t = malloc(n);

	if (t)
		snprintf(t, n, "%.*s.%.*s.%s.XXXXXX", (int)dlen, path, keep, path + dlen, tag);
	return t;
}
