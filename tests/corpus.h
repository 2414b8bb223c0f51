/*
 * corpus.h - the real NBG files tests read, and what a test does without
 * them.
 *
 * NBG_CORPUS_DIR (meson option corpus_dir) holds the real files: v1/, v2/
 * with the vendor's *.meta.json, MANIFEST.tsv.  NBG_REFERENCE_DIR (option
 * reference_dir) holds the vendor inspector's output for each of them.  Both
 * are optional on a clone.  A test program whose cases need real files keeps
 * them apart from its synthesized cases: meson runs `PROGRAM --synthesized`
 * in the default suite, `PROGRAM --corpus` (and, for cases that also compare
 * with the vendor inspector's output, `PROGRAM --reference`) in the suite
 * 'corpus'.  A real-file part whose directory is absent exits TC_SKIP (77,
 * meson's SKIP) with a message saying how to get the files, so every
 * synthesized case runs everywhere.  Without an argument a program runs
 * every part whose files are there, for running it by hand.
 */
#ifndef NBG_TEST_CORPUS_H
#define NBG_TEST_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#define TC_SKIP 77

/* printf(TC_CORPUS_SKIP, program, what, dir, dir): why a corpus test is
 * skipped and the two ways to get the files.  tests/tc_corpus.py prints
 * the same sentence for the Python checks. */
#define TC_CORPUS_SKIP                                                                     \
	"%s: %s skipped: %s does not exist. Get the files with "                          \
	"`sh scripts/fetch-corpus.sh %s` (it downloads them from their public "           \
	"repositories and checks each SHA-256), or point the build at a copy: "          \
	"`meson configure BUILD -Dcorpus_dir=DIR`.\n"
#define TC_REFERENCE_HOWTO                                                                 \
	"The vendor inspector's output is not downloadable; point the build at a copy: "  \
	"`meson configure BUILD -Dreference_dir=DIR`."
#define TC_MODELS_HOWTO                                                                    \
	"The source models with the NBG files compiled from them are not downloadable; "  \
	"point the build at a copy: `meson configure BUILD -Dmodels_dir=DIR`."

/* The parts of a test program, as bits (argv: --synthesized, --corpus,
 * --reference; no argument: all three). */
enum {
	TC_SYNTHESIZED = 1,
	TC_CORPUS = 2,
	TC_REFERENCE = 4,
	TC_ALL = 7,
};

/* The parts argv asks for; exits 2 with a usage line on anything else. */
unsigned tc_parts_of(int argc, char **argv);

/* 1 when `dir` is an existing directory. */
int tc_have_dir(const char *dir);
int tc_have_corpus(void);    /* NBG_CORPUS_DIR */
int tc_have_reference(void); /* NBG_REFERENCE_DIR */

/* Calls fn(path, arg) for every *.nb file of NBG_CORPUS_DIR/family ("v1",
 * "v2"); returns how many (0 when the directory is absent). */
unsigned tc_each_corpus_file(const char *family, void (*fn)(const char *path, void *arg),
			     void *arg);

/* One row of NBG_CORPUS_DIR/MANIFEST.tsv, the corpus's own list of its
 * files (columns found by their header names: file, sha256, bytes, version,
 * target).  Tests count and classify the corpus by it instead of holding
 * lists of file names or totals: the corpus grows. */
typedef struct tc_manifest_row {
	char file[256]; /* "v1/NAME.nb", "v2/NAME.nb" */
	char sha256[65];
	uint64_t bytes;
	uint32_t version, target;
} tc_manifest_row;

/* The rows of the manifest; *n their count.  Fails the calling cmocka test
 * when the manifest cannot be read or a row lacks a column.  free() it. */
tc_manifest_row *tc_manifest_load(size_t *n);
/* The row of the corpus file at `path` (any path ending in FAMILY/NAME);
 * NULL when none. */
const tc_manifest_row *tc_manifest_find(const tc_manifest_row *rows, size_t n,
					const char *path);
/* Rows whose file is in FAMILY/ ("v1", "v2"); distinct versions among them. */
size_t tc_manifest_count(const tc_manifest_row *rows, size_t n, const char *family);
size_t tc_manifest_versions(const tc_manifest_row *rows, size_t n, const char *family);
/* tc_manifest_count on a freshly loaded manifest. */
size_t tc_manifest_files(const char *family);

/* Print TC_CORPUS_SKIP for NBG_CORPUS_DIR, or "PROGRAM: WHAT skipped: DIR
 * does not exist. HOWTO" for another directory (the reference output), and
 * return TC_SKIP, for `return tc_skip...(...)` from main. */
int tc_skip_corpus(const char *program, const char *what);
int tc_skip(const char *program, const char *what, const char *dir, const char *howto);

/* For a program that does not use tc_main: 0 when the parts argv asks for
 * have their files; otherwise prints why the first missing one is skipped
 * and returns TC_SKIP.  (--synthesized needs nothing.) */
int tc_need(unsigned parts, const char *program);

struct CMUnitTest;
typedef struct tc_group {
	const struct CMUnitTest *tests;
	size_t count;
} tc_group;
#define TC_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define TC_GROUP(a) ((tc_group){ (a), TC_COUNT(a) })
#define TC_NONE ((tc_group){ NULL, 0 })

/* main() of a program with a synthesized, a corpus and a reference group
 * of cmocka tests (any may be empty): runs the groups argv asks for,
 * through one group setup and teardown.  Returns the number of failed
 * tests, or TC_SKIP when a part asked for by name lacks its files. */
int tc_run(int argc, char **argv, const char *program, tc_group synth, tc_group corpus,
	   tc_group reference, int (*setup)(void **state), int (*teardown)(void **state));

/* tc_run without a reference group. */
int tc_main(int argc, char **argv, const char *program,
	    const struct CMUnitTest *synth, size_t nsynth,
	    const struct CMUnitTest *corpus, size_t ncorpus,
	    int (*setup)(void **state), int (*teardown)(void **state));

#endif
