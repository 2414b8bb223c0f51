/*
 * cli_temp.c - temporaries of the commands that write their output files
 * themselves (`nbg graph`, `nbg run`): a hidden name beside the file to
 * replace, cut to fit NAME_MAX, created with SIGINT/SIGTERM/SIGHUP blocked
 * until it is registered for removal, so that no signal leaves one behind.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int nbg_temp_create(char *tmp, int *slot)
{
	sigset_t block, old;
	int fd;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	fd = mkstemp(tmp);
	*slot = fd >= 0 ? nbg_temp_register(tmp) : -1;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return fd;
}
