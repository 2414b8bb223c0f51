/*
 * cli_names.c - the comparisons of names the program makes, each once
 * (cli.h): a named choice looked up in a table, "-" for standard input or
 * output, a file name's suffix, the order of names, "." and "..".  No
 * dependency but the C library, so that a harness compiling a file of the
 * program alone (the manifest's) links it too.
 */
#include <string.h>

#include "cli.h"

long cli_lookup(const void *table, size_t count, size_t size, const char *name)
{
	for (size_t i = count; i-- > 0;) {
		const char *key;
		memcpy(&key, (const char *)table + i * size, sizeof(key));
		if (key && !strcmp(key, name))
			return (long)i;
	}
	return -1;
}

int cli_is_stdio(const char *path)
{
	return !strcmp(path, "-");
}

int cli_has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);
	return n >= k && !memcmp(name + n - k, suffix, k);
}

int cli_name_order(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int cli_dot_name(const char *name)
{
	static const char *const dots[] = { ".", ".." };
	return CLI_LOOKUP(dots, name) >= 0;
}
