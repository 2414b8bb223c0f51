/*
 * cmd_corpus.c - `nbg corpus PATH... [--json]`: corpus-wide invariants.
 *
 * Parses every file given (directories are walked for *.nb, recursively)
 * and feeds each to a corpus aggregate of libnbg (nbg/corpus.h), which
 * holds the tables and prints them.  This file is the command: arguments
 * and the walk.
 * Exit 0 when every file is a valid NBG, 1 when any is not, 3 when a path
 * cannot be read.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "nbg/corpus.h"

static int visit_file(nbg_corpus *c, const char *path, int quiet)
{
	nbg_loaded l;
	int rc = nbg_load(path, NULL, &l);

	if (rc == NBG_EXIT_OK) {
		nbg_corpus_add_model(c, l.model);
	} else if (l.io_failed) {
		nbg_corpus_add_failure(c, NBG_E_IO);
		fprintf(stderr, "nbg corpus: %s\n", l.err.message);
	} else {
		nbg_corpus_add_failure(c, l.err.code);
		if (!quiet)
			fprintf(stderr, "nbg corpus: %s: %s at offset %" PRIu64 ": %s\n", path,
				nbg_code_name(l.err.code), l.err.offset, l.err.message);
	}
	nbg_loaded_free(&l);
	return rc;
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Walks a directory for *.nb in name order (stable reports). */
static int visit_path(nbg_corpus *c, const char *path, int depth, int quiet)
{
	struct stat st;
	int worst = NBG_EXIT_OK;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "nbg corpus: cannot read %s\n", path);
		nbg_corpus_add_unreadable_path(c);
		return NBG_EXIT_IO;
	}
	if (!S_ISDIR(st.st_mode))
		return visit_file(c, path, quiet);
	if (depth > 16)
		return NBG_EXIT_OK;
	DIR *d = opendir(path);
	if (!d) {
		fprintf(stderr, "nbg corpus: cannot open directory %s\n", path);
		nbg_corpus_add_unreadable_path(c);
		return NBG_EXIT_IO;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nn = realloc(names, cap * sizeof(*names));
			if (!nn)
				break;
			names = nn;
		}
		size_t len = strlen(path) + strlen(e->d_name) + 2;
		names[n] = malloc(len);
		if (!names[n])
			break;
		snprintf(names[n++], len, "%s/%s", path, e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		struct stat cs;
		int rc = NBG_EXIT_OK;
		if (stat(names[i], &cs) == 0 && S_ISDIR(cs.st_mode))
			rc = visit_path(c, names[i], depth + 1, quiet);
		else if (ends_with(names[i], ".nb"))
			rc = visit_file(c, names[i], quiet);
		if (rc == NBG_EXIT_IO || (rc == NBG_EXIT_INVALID && worst == NBG_EXIT_OK))
			worst = rc;
		free(names[i]);
	}
	free(names);
	return worst;
}

int nbg_cmd_corpus(int argc, char **argv)
{
	int json = 0, quiet = 0, paths = 0, worst = NBG_EXIT_OK;
	nbg_corpus *c;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--quiet"))
			quiet = 1;
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "nbg corpus: unknown option '%s'\n", argv[i]);
			return NBG_EXIT_USAGE;
		} else
			paths++;
	}
	if (!paths) {
		fprintf(stderr, "usage: nbg corpus [--json] [--quiet] FILE|DIR...\n");
		return NBG_EXIT_USAGE;
	}
	c = nbg_corpus_new();
	if (!c) {
		fprintf(stderr, "nbg corpus: out of memory\n");
		return NBG_EXIT_IO;
	}
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1])
			continue;
		int rc = visit_path(c, argv[i], 0, quiet);
		if (rc == NBG_EXIT_IO || (rc == NBG_EXIT_INVALID && worst == NBG_EXIT_OK))
			worst = rc;
	}
	if (json) {
		char *s = nbg_corpus_json(c);
		if (!s) {
			nbg_corpus_free(c);
			fprintf(stderr, "nbg corpus: out of memory\n");
			return NBG_EXIT_IO;
		}
		puts(s);
		free(s);
	} else {
		nbg_text_corpus(stdout, c);
	}
	nbg_corpus_free(c);
	if (fflush(stdout) != 0)
		return NBG_EXIT_IO;
	return worst;
}
