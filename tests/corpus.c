/*
 * corpus.c - see corpus.h.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "corpus.h"

unsigned tc_parts_of(int argc, char **argv)
{
	unsigned parts = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--synthesized"))
			parts |= TC_SYNTHESIZED;
		else if (!strcmp(argv[i], "--corpus"))
			parts |= TC_CORPUS;
		else if (!strcmp(argv[i], "--reference"))
			parts |= TC_REFERENCE;
		else {
			fprintf(stderr, "usage: %s [--synthesized] [--corpus] [--reference]\n",
				argv[0]);
			exit(2);
		}
	}
	return parts ? parts : TC_ALL;
}

int tc_have_dir(const char *dir)
{
	struct stat st;
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

int tc_have_corpus(void)
{
	return tc_have_dir(NBG_CORPUS_DIR);
}

int tc_have_reference(void)
{
	return tc_have_dir(NBG_REFERENCE_DIR);
}

unsigned tc_each_corpus_file(const char *family, void (*fn)(const char *path, void *arg),
			     void *arg)
{
	char dir[4096], path[4400];
	struct dirent *e;
	unsigned n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", NBG_CORPUS_DIR, family);
	if (!(d = opendir(dir)))
		return 0;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len < 4 || strcmp(e->d_name + len - 3, ".nb"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		fn(path, arg);
		n++;
	}
	closedir(d);
	return n;
}

/* Splits a tab-separated line in place; returns the field count (at most max). */
static size_t split_tabs(char *line, char **f, size_t max)
{
	size_t n = 0;

	line[strcspn(line, "\r\n")] = '\0';
	while (n < max) {
		f[n++] = line;
		if (!(line = strchr(line, '\t')))
			break;
		*line++ = '\0';
	}
	return n;
}

static int column(char **head, size_t nh, const char *name)
{
	for (size_t i = 0; i < nh; i++)
		if (!strcmp(head[i], name))
			return (int)i;
	fail_msg("%s/MANIFEST.tsv has no column %s", NBG_CORPUS_DIR, name);
	return -1;
}

tc_manifest_row *tc_manifest_load(size_t *n)
{
	enum { MAXF = 16 };
	char line[4096], hline[4096], *head[MAXF], *f[MAXF];
	size_t nh, cap = 64, lineno = 1;
	int c_file, c_sha, c_bytes, c_version, c_target;
	tc_manifest_row *rows = malloc(cap * sizeof(*rows));
	FILE *in = fopen(NBG_CORPUS_DIR "/MANIFEST.tsv", "r");

	*n = 0;
	if (!in || !rows || !fgets(hline, sizeof(hline), in))
		fail_msg("cannot read %s/MANIFEST.tsv: the corpus is incomplete", NBG_CORPUS_DIR);
	nh = split_tabs(hline, head, MAXF);
	c_file = column(head, nh, "file");
	c_sha = column(head, nh, "sha256");
	c_bytes = column(head, nh, "bytes");
	c_version = column(head, nh, "version");
	c_target = column(head, nh, "target");
	while (fgets(line, sizeof(line), in)) {
		tc_manifest_row *r;
		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (split_tabs(line, f, MAXF) != nh || strlen(f[c_file]) >= sizeof(r->file) ||
		    strlen(f[c_sha]) != 64)
			fail_msg("%s/MANIFEST.tsv line %zu: not %zu columns with a file name and a "
				 "SHA-256", NBG_CORPUS_DIR, lineno, nh);
		if (*n == cap && !(rows = realloc(rows, (cap *= 2) * sizeof(*rows))))
			fail_msg("out of memory");
		r = &rows[(*n)++];
		snprintf(r->file, sizeof(r->file), "%s", f[c_file]);
		snprintf(r->sha256, sizeof(r->sha256), "%s", f[c_sha]);
		r->bytes = strtoull(f[c_bytes], NULL, 10);
		r->version = (uint32_t)strtoul(f[c_version], NULL, 16);
		r->target = (uint32_t)strtoul(f[c_target], NULL, 16);
	}
	fclose(in);
	return rows;
}

const tc_manifest_row *tc_manifest_find(const tc_manifest_row *rows, size_t n, const char *path)
{
	size_t lp = strlen(path);

	for (size_t i = 0; i < n; i++) {
		size_t lf = strlen(rows[i].file);
		if (lp >= lf && !strcmp(path + lp - lf, rows[i].file) &&
		    (lp == lf || path[lp - lf - 1] == '/'))
			return &rows[i];
	}
	return NULL;
}

static int in_family(const tc_manifest_row *r, const char *family)
{
	size_t l = strlen(family);
	return !strncmp(r->file, family, l) && r->file[l] == '/';
}

size_t tc_manifest_count(const tc_manifest_row *rows, size_t n, const char *family)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += in_family(&rows[i], family);
	return k;
}

size_t tc_manifest_versions(const tc_manifest_row *rows, size_t n, const char *family)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j;
		for (j = 0; j < i; j++)
			if (in_family(&rows[j], family) && rows[j].version == rows[i].version)
				break;
		k += in_family(&rows[i], family) && j == i;
	}
	return k;
}

size_t tc_manifest_files(const char *family)
{
	size_t n, k;
	tc_manifest_row *rows = tc_manifest_load(&n);

	k = tc_manifest_count(rows, n, family);
	free(rows);
	return k;
}

int tc_skip_corpus(const char *program, const char *what)
{
	/* stdout: meson keeps it in the test log beside the SKIP. */
	printf(TC_CORPUS_SKIP, program, what, NBG_CORPUS_DIR, NBG_CORPUS_DIR);
	fflush(stdout);
	return TC_SKIP;
}

int tc_skip(const char *program, const char *what, const char *dir, const char *howto)
{
	/* stdout: meson keeps it in the test log beside the SKIP. */
	printf("%s: %s skipped: %s does not exist. %s\n", program, what, dir, howto);
	fflush(stdout);
	return TC_SKIP;
}

/* 0 when `part` has its files, else TC_SKIP with the reason printed. */
static int part_missing(unsigned part, const char *program)
{
	if (part == TC_SYNTHESIZED)
		return 0;
	if (!tc_have_corpus())
		return tc_skip_corpus(program, part == TC_CORPUS ? "real-file cases"
								  : "cases on the vendor inspector's output");
	if (part == TC_REFERENCE && !tc_have_reference())
		return tc_skip(program, "cases on the vendor inspector's output", NBG_REFERENCE_DIR,
			       TC_REFERENCE_HOWTO);
	return 0;
}

int tc_need(unsigned parts, const char *program)
{
	for (unsigned part = TC_CORPUS; part <= TC_REFERENCE; part <<= 1)
		if ((parts & part) && part_missing(part, program))
			return TC_SKIP;
	return 0;
}

int tc_run(int argc, char **argv, const char *program, tc_group synth, tc_group corpus,
	   tc_group reference, int (*setup)(void **state), int (*teardown)(void **state))
{
	unsigned parts = tc_parts_of(argc, argv);
	int named = argc > 1;
	const tc_group *group[3] = { &synth, &corpus, &reference };
	struct CMUnitTest *all;
	size_t n = 0, total = synth.count + corpus.count + reference.count;
	int rc;

	all = malloc((total + 1) * sizeof(*all));
	if (!all) {
		fprintf(stderr, "%s: out of memory\n", program);
		return 1;
	}
	for (unsigned k = 0; k < 3; k++) {
		unsigned part = 1u << k;
		if (!(parts & part) || (!named && !group[k]->count))
			continue;
		if (part_missing(part, program)) {
			if (named) {
				free(all);
				return TC_SKIP;
			}
			continue;
		}
		for (size_t i = 0; i < group[k]->count; i++)
			all[n++] = group[k]->tests[i];
	}
	if (!n) {
		free(all);
		if (!named)
			return TC_SKIP; /* every part skipped, each with its reason */
		fprintf(stderr, "%s: no test case in the parts asked for\n", program);
		return 1;
	}
	/* One group, so the group setup and teardown run once. */
	rc = _cmocka_run_group_tests(program, all, n, setup, teardown);
	free(all);
	return rc;
}

int tc_main(int argc, char **argv, const char *program,
	    const struct CMUnitTest *synth, size_t nsynth,
	    const struct CMUnitTest *corpus, size_t ncorpus,
	    int (*setup)(void **state), int (*teardown)(void **state))
{
	tc_group s = { synth, nsynth }, c = { corpus, ncorpus };
	return tc_run(argc, argv, program, s, c, TC_NONE, setup, teardown);
}
