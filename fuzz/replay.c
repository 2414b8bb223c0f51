/*
 * replay.c - main() for a harness outside libFuzzer: runs files, or every
 * file under directories, through LLVMFuzzerTestOneInput, so the fuzz
 * corpora and every crash ever found run under plain gcc + ASan/UBSan in the
 * normal test suite.  Each input is read into an exact-size buffer, so a read
 * past its end is a sanitizer report.
 *
 *   nbg-replay-HARNESS [--synth] [--shrink] [--min N] [--need DIR]
 *                      [--need-models DIR] [--timeout S] PATH...
 *                      [--optional PATH]...
 *
 *   --synth    also every synthesized seed (fuzz/seeds.c, fuzz/seeds_coef.c:
 *              files carrying kernel streams and the coef harness's raw
 *              streams), built in memory
 *   --shrink   also the shrunk copies (64- and 512-byte payload caps) of
 *              every input run, synthesized seeds included; a copy equal to
 *              its original is not run again
 *   --min N    fail unless at least N inputs ran (a wrong path would
 *              otherwise test nothing)
 *   --need DIR exit 77 (skipped) with a message when DIR does not exist: the
 *              real corpus is optional on a clone (tests/corpus.h)
 *   --need-models DIR  the same for models_dir (the source models and the
 *              NBG files compiled from them)
 *   --timeout S  fail, naming the input, when one input runs for more than
 *              S seconds (what fuzz/run.sh keeps as a timeout fails so)
 *   --optional PATH  a PATH that may be absent (skipped with a message):
 *              fuzz/out/ exists only after a local fuzzing run.  Any other
 *              PATH that does not exist fails.
 *   A PATH is a file (one input), a directory (every file under it) or a
 *   ustar archive, gzip-compressed or not (fuzz/archive.h: each member an
 *   input), told by its name ending in .tar.gz or .tar.  Options apply
 *   wherever they stand.  Every input also counts against libFuzzer's
 *   memory limit of fuzz/run.sh (2048 MB of resident memory, and under ASan
 *   no single allocation over it), so what a fuzzing run keeps as
 *   out-of-memory fails here too.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive.h"
#include "corpus.h"
#include "fuzz_common.h"
#include "seeds.h"

/* fuzz/run.sh's -rss_limit_mb (libFuzzer's malloc limit is the same) */
#define RSS_LIMIT_MB 2048

static size_t runs, bytes;
static int shrink;
static unsigned timeout_s;
static const char *current; /* the input running, for the timeout message */

/* Read by ASan at start-up (ASAN_OPTIONS adds to it): an allocation over the
 * limit is a report, as in libFuzzer, instead of a success with overcommit. */
const char *__asan_default_options(void);
__attribute__((used)) const char *__asan_default_options(void)
{
	return "max_allocation_size_mb=2048"; /* RSS_LIMIT_MB */
}

static char timeout_msg[128]; /* written before the first alarm */

static void on_alarm(int sig)
{
	(void)sig;
	/* async-signal-safe: write(2) only */
	if (write(2, timeout_msg, strlen(timeout_msg)) < 0 ||
	    write(2, current, strlen(current)) < 0 || write(2, "\n", 1) < 0)
		_exit(1);
	_exit(1);
}

static void run(const char *name, const uint8_t *data, size_t size)
{
	/* An exact-size heap copy even for size 0, so the harness gets a pointer
	 * ASan tracks (libFuzzer does the same). */
	uint8_t *copy = malloc(size ? size : 1);
	struct rusage ru;

	if (!copy) {
		fprintf(stderr, "replay: out of memory for %s\n", name);
		exit(3);
	}
	if (size)
		memcpy(copy, data, size);
	current = name;
	alarm(timeout_s);
	LLVMFuzzerTestOneInput(copy, size);
	alarm(0);
	free(copy);
	runs++;
	bytes += size;
	if (getrusage(RUSAGE_SELF, &ru) == 0 && ru.ru_maxrss / 1024 > RSS_LIMIT_MB) {
		fprintf(stderr, "replay: out of memory: %ld MB resident after %s (the limit is %d MB)\n",
			ru.ru_maxrss / 1024, name, RSS_LIMIT_MB);
		exit(1);
	}
}

/* The input, then (with --shrink) each shrunk copy that differs from it and
 * from the copy before. */
static void run_with_shrunk(const char *name, const uint8_t *data, size_t size)
{
	uint8_t *s, *prev = NULL;
	size_t ssize, psize = 0;

	run(name, data, size);
	if (!shrink)
		return;
	for (size_t cap = 64; cap <= 512; cap *= 8) {
		s = seed_shrink(data, size, cap, &ssize);
		if (!s)
			continue;
		if ((ssize != size || memcmp(s, data, size)) &&
		    (!prev || ssize != psize || memcmp(s, prev, ssize)))
			run(name, s, ssize);
		free(prev);
		prev = s;
		psize = ssize;
	}
	free(prev);
}

static void run_file(const char *path)
{
	size_t size;
	uint8_t *data = seed_read_file(path, &size);

	if (!data) {
		fprintf(stderr, "replay: cannot read %s: %s\n", path, strerror(errno));
		exit(3);
	}
	run_with_shrunk(path, data, size);
	free(data);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_member(const char *name, const uint8_t *data, size_t size, void *arg)
{
	(void)arg;
	run_with_shrunk(name, data, size);
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && !strcmp(s + n - k, tail);
}

static void run_archive(const char *path)
{
	char err[1024];
	long n = archive_each(path, run_member, NULL, err, sizeof(err));

	if (n < 0) {
		fprintf(stderr, "replay: %s\n", err);
		exit(3);
	}
	printf("replay: %s: %ld inputs\n", path, n);
}

static void run_path(const char *path, int optional)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s%s\n", path, strerror(errno),
			optional ? " (skipped)" : "");
		if (!optional)
			exit(3);
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (ends_with(path, ".tar.gz") || ends_with(path, ".tar"))
			run_archive(path);
		else
			run_file(path);
		return;
	}
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
		exit(3);
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue; /* ., .., .gitkeep */
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n] = malloc(strlen(path) + strlen(e->d_name) + 2);
		sprintf(names[n], "%s/%s", path, e->d_name);
		n++;
	}
	closedir(d);
	/* A fixed order, so a failure reproduces the same way everywhere. */
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		run_path(names[i], 0);
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	size_t min_runs = 0;
	int synth = 0;
	struct stat st;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--synth")) {
			synth = 1;
		} else if (!strcmp(argv[i], "--shrink")) {
			shrink = 1;
		} else if (!strcmp(argv[i], "--min") && i + 1 < argc) {
			min_runs = strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--need") && i + 1 < argc) {
			if (stat(argv[++i], &st) != 0 || !S_ISDIR(st.st_mode)) {
				printf(TC_CORPUS_SKIP, "replay", "real-corpus inputs", argv[i],
				       argv[i]);
				return TC_SKIP;
			}
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			timeout_s = (unsigned)strtoul(argv[++i], NULL, 10);
			snprintf(timeout_msg, sizeof(timeout_msg),
				 "replay: timeout: an input ran for more than %u s (--timeout): ",
				 timeout_s);
			signal(SIGALRM, on_alarm);
		} else if (!strcmp(argv[i], "--need-models") && i + 1 < argc) {
			if (stat(argv[++i], &st) != 0 || !S_ISDIR(st.st_mode)) {
				printf("replay: model inputs skipped: %s does not exist. %s\n", argv[i],
				       TC_MODELS_HOWTO);
				return TC_SKIP;
			}
		}
	}
	if (synth) {
		size_t count;
		seed_file *s = seed_synth_all(&count);
		for (size_t k = 0; k < count; k++)
			run_with_shrunk(s[k].name, s[k].data, s[k].size);
		seed_free_all(s, count);
		/* files carrying kernel streams, and the raw streams of the coef
		 * harness (the others refuse them at the magic) */
		for (size_t k = 0; k < seed_coef_count(); k++) {
			char name[64];
			size_t size;
			uint8_t *b = seed_coef_file(k, name, sizeof(name), &size);
			run_with_shrunk(name, b, size);
			free(b);
			b = seed_coef_raw(k, name, sizeof(name), &size);
			run(name, b, size);
			free(b);
		}
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--min") || !strcmp(argv[i], "--need") ||
		    !strcmp(argv[i], "--need-models") || !strcmp(argv[i], "--timeout"))
			i++;
		else if (!strcmp(argv[i], "--optional") && i + 1 < argc)
			run_path(argv[++i], 1);
		else if (strcmp(argv[i], "--synth") && strcmp(argv[i], "--shrink"))
			run_path(argv[i], 0);
	}
	printf("replay: %zu inputs, %zu bytes, no crash\n", runs, bytes);
	if (runs < min_runs) {
		fprintf(stderr, "replay: only %zu inputs ran; expected at least %zu\n", runs,
			min_runs);
		return 1;
	}
	return 0;
}
