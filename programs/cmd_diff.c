/*
 * cmd_diff.c - `nbg diff [--json] A B`: what changed between two NBG files,
 * mapped to the structures that changed, and whether B is exactly A with
 * dynamic-I/O payloads substituted (doc/diff.md).
 *
 * Exit codes as cmp(1): 0 identical, 1 different, 2 trouble (usage, a file
 * that cannot be read or is not a valid NBG, out of memory, output that
 * cannot be written).  A file whose only failures are stored checksums that
 * do not match its bytes is still compared: that is a difference to report,
 * not trouble.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"
#include "nbg/diff.h"

enum { DIFF_SAME = 0, DIFF_DIFFERENT = 1, DIFF_TROUBLE = 2 };

static int checksum_failure(nbg_code c)
{
	return c == NBG_E_SECTION_CHECKSUM_MISMATCH || c == NBG_E_FILE_CHECKSUM_MISMATCH;
}

/* Loads one side, in one parse without the checksum comparisons: a file
 * that fails only on its v2 checksums is compared all the same (every other
 * rule holds) and a note goes to stderr.  Returns 0, or prints the failure
 * (the first rule that fails, the checksums last) and returns -1. */
static int load_side(const char *which, const char *path, int json, cli_loaded *l)
{
	nbg_parse_options o = { .size = sizeof(o), .flags = NBG_PARSE_NO_CRC_CHECK };
	nbg_error strict;

	if (cli_load(path, &o, l) == NBG_EXIT_OK) {
		nbg_code sc = nbg_integrity_failure(l->model, &strict);
		if (sc == NBG_OK)
			return 0;
		if (checksum_failure(sc)) {
			fprintf(stderr,
				"nbg diff: %s: %s at offset %llu: %s; compared as it is (every "
				"other rule holds)\n",
				path, nbg_code_name(strict.code), (unsigned long long)strict.offset,
				strict.message);
			return 0;
		}
		/* a v1 nbg_crc_sum: trouble, as any other rule */
		nbg_model_free(l->model);
		l->model = NULL;
		l->err = strict;
	}
	cli_print_error(path, l);
	if (json) {
		char *s = nbg_diff_error_json(which, path, &l->err);
		if (s)
			puts(s);
		free(s);
	}
	return -1;
}

static int compare(const char *const paths[2], int json, cli_loaded *la, cli_loaded *lb)
{
	nbg_diff *d = NULL;
	nbg_error err;
	int rc;

	if (load_side("a", paths[0], json, la) || load_side("b", paths[1], json, lb))
		return DIFF_TROUBLE;
	if (nbg_diff_models(la->model, lb->model, &d, &err) != NBG_OK) {
		fprintf(stderr, "nbg diff: %s\n", err.message);
		if (json) {
			char *s = nbg_diff_error_json(NULL, NULL, &err);
			if (s)
				puts(s);
			free(s);
		}
		return DIFF_TROUBLE;
	}
	rc = nbg_diff_summary_of(d)->identical ? DIFF_SAME : DIFF_DIFFERENT;
	if (json) {
		char *s = nbg_diff_json(d, la->model, paths[0], lb->model, paths[1]);
		if (s)
			puts(s);
		else
			rc = DIFF_TROUBLE;
		free(s);
	} else {
		nbg_text_diff(stdout, d, la->model, paths[0], lb->model, paths[1]);
	}
	nbg_diff_free(d);
	return rc;
}

int cli_cmd_diff(int argc, char **argv)
{
	const char **paths = calloc((size_t)argc, sizeof(*paths));
	cli_json_opts o = { 0 };
	int n, rc, json;

	if (!paths) {
		fprintf(stderr, "nbg diff: out of memory\n");
		return DIFF_TROUBLE;
	}
	if (cli_parse_command("diff", argc, argv, &o, paths, &n) != 0 ||
	    (n < 2 && cli_usage("diff", "give two files, A and B (%d given)", n)) ||
	    (n > 2 && cli_usage("diff", "two files only, not also '%s'", cli_esc(paths[2])))) {
		free(paths);
		return DIFF_TROUBLE;
	}
	json = o.json;
	cli_loaded la, lb;
	memset(&la, 0, sizeof(la));
	memset(&lb, 0, sizeof(lb));
	rc = compare(paths, json, &la, &lb);
	free(paths);
	cli_loaded_free(&la);
	cli_loaded_free(&lb);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "nbg diff: cannot write the report\n");
		return DIFF_TROUBLE;
	}
	return rc;
}
