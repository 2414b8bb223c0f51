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
