/*
 * test_json_document.c - nbg_json_document_write, the streamed document of
 * `nbg inspect --json` and its tables, against the same document built from
 * documents of one part each (the core report; the graph, the commands and
 * the memory with NBG_JSON_DOC_NO_CORE), parsed with jansson, merged into
 * one object with json_object_update and dumped with json_dumps(JSON_INDENT(2)
 * | JSON_PRESERVE_ORDER).  jansson's dump is the reference for every byte:
 * brackets, indentation, separators, empty containers, escapes; the merge,
 * that a part is the same whatever else the document holds.  Compared byte
 * for byte on every real file of the corpus (v1 and v2: the part --corpus,
 * skipped without the files) with no table and with all five (--layers
 * --operations --patches --commands --memory, with and without --only), and
 * on synthesized files with every combination; then the memory the
 * streamed document needs, measured while it is written.
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "corpus.h"
#include "fixture.h"
#include "nbg/report.h"

#define GRAPH_TABLES (NBG_GRAPH_JSON_SUMMARY | NBG_GRAPH_JSON_TABLES | NBG_GRAPH_JSON_FINDINGS)

/* ------------------------------------------ the document, merged */

static void merge(json_t *root, char *part)
{
	json_error_t e;
	json_t *j;

	assert_non_null(part);
	j = json_loads(part, 0, &e);
	if (!j)
		fail_msg("a part does not parse: %s", e.text);
	assert_int_equal(json_object_update(root, j), 0);
	json_decref(j);
	free(part);
}

/* The document of `what` (NBG_GRAPH_JSON_* and NBG_JSON_DOC_*), built from
 * documents of one part each (the core report, or its version and path
 * alone; then the graph's keys, the commands and the memory, each with
 * NBG_JSON_DOC_NO_CORE), parsed and merged. */
static char *merged_document(const nbg_model *m, const char *path, unsigned what)
{
	static const unsigned part[] = { NBG_GRAPH_JSON_ALL, NBG_JSON_DOC_COMMANDS,
					 NBG_JSON_DOC_MEMORY };
	json_t *root = json_object();
	char *s;

	assert_non_null(root);
	merge(root, fx_document(m, path, what & NBG_JSON_DOC_NO_CORE));
	for (size_t i = 0; i < sizeof(part) / sizeof(part[0]); i++)
		if (what & part[i])
			merge(root, fx_document(m, path, NBG_JSON_DOC_NO_CORE | (what & part[i])));
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	assert_non_null(s);
	return s;
}

/* The flag sets `nbg inspect --json` passes: any table of --layers,
 * --operations, --patches adds the summary, tables and findings. */
static unsigned inspect_flags(unsigned mask, int only)
{
	static const unsigned bit[5] = { NBG_GRAPH_JSON_LAYERS, NBG_GRAPH_JSON_OPERATIONS,
					 NBG_GRAPH_JSON_PATCHES, NBG_JSON_DOC_COMMANDS,
					 NBG_JSON_DOC_MEMORY };
	unsigned what = only ? NBG_JSON_DOC_NO_CORE : 0;

	for (int i = 0; i < 5; i++)
		if (mask & (1u << i))
			what |= bit[i];
	if (what & NBG_GRAPH_JSON_ALL)
		what |= GRAPH_TABLES;
	return what;
}

/* Combinations of the five tables: every one of the 32 (all), or none and
 * all five (the corpus, to keep the test short: every part is in the
 * second). */
static int wanted(unsigned mask, int all)
{
	return all || mask == 0 || mask == 31;
}

/* The combinations on one model, each with and without --only; the
 * number of documents compared. */
static unsigned compare_all(const nbg_model *m, const char *path, const char *name, int all)
{
	unsigned n = 0;

	for (unsigned mask = 0; mask < 32; mask++)
		for (int only = 0; only < 2; only++) {
			/* --only needs a table */
			if ((only && !mask) || !wanted(mask, all))
				continue;
			unsigned what = inspect_flags(mask, only);
			char *want = merged_document(m, path, what), *got = fx_document(m, path, what);
			if (strcmp(want, got)) {
				size_t k = 0;
				while (want[k] && want[k] == got[k])
					k++;
				fail_msg("%s, flags 0x%x: the streamed document differs at byte %zu "
					 "(...%.40s... against ...%.40s...)", name, what, k,
					 got + (k > 20 ? k - 20 : 0), want + (k > 20 ? k - 20 : 0));
			}
			free(want);
			free(got);
			n++;
		}
	return n;
}

static unsigned compare_buffer(const uint8_t *b, size_t size, const char *path,
			       const char *name, int all)
{
	nbg_model *m = NULL;
	nbg_error err;
	unsigned n;

	if (nbg_parse(b, size, NULL, &m, &err) != NBG_OK)
		fail_msg("%s does not parse: %s", name, err.message);
	n = compare_all(m, path, name, all);
	nbg_model_free(m);
	return n;
}

/* ------------------------------------------------------------ tests */

static void corpus_one(const char *path, void *arg)
{
	unsigned *docs = arg;
	size_t size;
	uint8_t *b = fx_read_file(path, &size);

	assert_non_null(b);
	*docs += compare_buffer(b, size, path, path, 0);
	free(b);
}

static void test_corpus(void **state)
{
	unsigned docs = 0, files;

	(void)state;
	files = tc_each_corpus_file("v1", corpus_one, &docs) +
		tc_each_corpus_file("v2", corpus_one, &docs);
	print_message("%u real files, %u documents identical\n", files, docs);
	assert_true(files > 0);
}

static void test_synthesized(void **state)
{
	fx_spec *s = fx_default();
	size_t size;
	uint8_t *b = fx_build(s, &size);

	(void)state;
	/* a path that needs escaping, one that is not UTF-8, and none at all */
	compare_buffer(b, size, "dir/\"quoted\"\\\ttab\n\x01.nb", "the fixture, escaped path", 1);
	compare_buffer(b, size, "caf\xe9.nb", "the fixture, Latin-1 path", 0);
	compare_buffer(b, size, NULL, "the fixture, no path", 0);
	free(b);
	fx_free(s);

	s = fx_default();
	fx_many_records(s, 40);
	b = fx_build(s, &size);
	compare_buffer(b, size, "many.nb", "40 groups of records", 1);
	free(b);
	fx_free(s);
}

/* --------------------------------------------- memory while writing */

typedef struct sink {
	size_t bytes;      /* document bytes written */
	size_t heap_first; /* heap in use at the first write */
	size_t heap_peak;  /* the most in use at any later write */
	int writes;
} sink;

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
	sink *k = cookie;
	size_t h = heap_in_use();

	(void)buf;
	if (k->writes++ == 0)
		k->heap_first = h;
	if (h > k->heap_peak)
		k->heap_peak = h;
	k->bytes += n;
	return (ssize_t)n;
}

/* The document is written as it is produced: while 1000 groups of records
 * (a document of several MiB) are written, the heap grows by less than a
 * tenth of the document (before streaming it held the whole document, and
 * three parsed copies of its parts, at once). */
static void test_streamed(void **state)
{
	fx_spec *s = fx_default();
	cookie_io_functions_t io = { .write = sink_write };
	sink k = { 0 };
	nbg_model *m = NULL;
	size_t size;
	uint8_t *b;
	FILE *f;

	(void)state;
	fx_many_records(s, 1000);
	b = fx_build(s, &size);
	assert_int_equal(nbg_parse(b, size, NULL, &m, NULL), NBG_OK);
	f = fopencookie(&k, "w", io);
	assert_non_null(f);
	assert_int_equal(nbg_json_document_write(f, m, "many.nb",
						 NBG_GRAPH_JSON_ALL | NBG_JSON_DOC_COMMANDS |
							 NBG_JSON_DOC_MEMORY, NULL),
			 NBG_OK);
	assert_int_equal(fclose(f), 0);
	print_message("%zu-byte file: %zu-byte document in %d writes, heap grew by %zu bytes "
		      "while it was written\n", size, k.bytes, k.writes,
		      k.heap_peak - k.heap_first);
	assert_true(k.bytes > 4 * size);
	if (k.heap_first == 0) {
		/* a sanitizer's allocator: mallinfo2 reports nothing */
		print_message("mallinfo2 reports no heap here: growth not checked\n");
	} else {
		assert_true(k.heap_peak - k.heap_first < k.bytes / 10);
	}
	nbg_model_free(m);
	free(b);
	fx_free(s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synthesized),
		cmocka_unit_test(test_streamed),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_corpus),
	};
	return tc_main(argc, argv, "test_json_document", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), NULL, NULL);
}
