/*
 * test_codes_doc.c - the docs and the code share one list: the generated
 * blocks of doc/failure-codes.md and doc/field-map.md equal what the nbg
 * binary prints now, and every code name fixed so far still exists with
 * the same spelling (codes are never renamed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "nbg/nbg.h"

static char *run_capture(const char *args)
{
	fx_run_result r = fx_run_nbg(FX_IN_SOURCE, "%s", args);
	assert_int_equal(r.status, 0);
	free(r.err);
	return r.out;
}

/* The text between the BEGIN/END markers of `marker` in a doc file. */
static char *doc_block(const char *rel, const char *marker)
{
	char path[1024], begin[128], end[128];
	size_t size;

	snprintf(path, sizeof(path), "%s/%s", NBG_SOURCE_DIR, rel);
	char *doc = (char *)fx_read_file(path, &size);
	assert_non_null(doc);
	doc[size] = '\0';
	snprintf(begin, sizeof(begin), "<!-- BEGIN %s -->\n", marker);
	snprintf(end, sizeof(end), "<!-- END %s -->", marker);
	char *b = strstr(doc, begin), *e;
	assert_non_null(b);
	b += strlen(begin);
	e = strstr(b, end);
	assert_non_null(e);
	char *out = strndup(b, (size_t)(e - b));
	free(doc);
	return out;
}

static void test_failure_codes_doc(void **state)
{
	char *gen = run_capture("codes --markdown");
	char *doc = doc_block("doc/failure-codes.md", "nbg codes --markdown");
	if (strcmp(gen, doc))
		fail_msg("doc/failure-codes.md is stale: run scripts/gen-docs.sh");
	free(gen);
	free(doc);
}

static void test_field_map_doc(void **state)
{
	char *gen = run_capture("fields");
	char *doc = doc_block("doc/field-map.md", "nbg fields");
	/* the block wraps the output in a code fence */
	size_t gl = strlen(gen);
	assert_true(strlen(doc) == gl + 8);
	if (strncmp(doc + 4, gen, gl))
		fail_msg("doc/field-map.md is stale: run scripts/gen-docs.sh");
	free(gen);
	free(doc);
}

/* doc/cli.md's first example is the main job's real output. */
static void test_cli_doc_sample(void **state)
{
	char *gen = run_capture("inspect samples/sample.nb");
	char *doc = doc_block("doc/cli.md", "nbg inspect samples/sample.nb");
	const char *prefix = "```\n$ nbg inspect samples/sample.nb\n";
	size_t pl = strlen(prefix), gl = strlen(gen);
	assert_true(strlen(doc) == pl + gl + 4);
	assert_memory_equal(doc, prefix, pl);
	if (strncmp(doc + pl, gen, gl))
		fail_msg("doc/cli.md sample output is stale: run scripts/gen-docs.sh");
	free(gen);
	free(doc);
}

static void test_stable_names(void **state)
{
	/* Every code's name and number is a contract: the format rules first, then
	 * each code appended since, in order (never renamed or renumbered). */
	static const char *const fixed[] = {
		"truncated", "bad-magic", "unsupported-version", "file-size-mismatch",
		"sub-header-count", "section-header-size", "unknown-section-type",
		"duplicate-section", "section-out-of-bounds", "section-overlap",
		"section-misaligned", "io-record-size", "io-dimension-count", "io-dimension-zero",
		"network-info-size", "memory-section-size", "metadata-count-mismatch",
		"checksum-record-size", "section-checksum-missing", "section-checksum-duplicate",
		"section-checksum-target-missing", "section-checksum-mismatch",
		"file-checksum-mismatch", "dynaio-unpaired", "dynaio-region-size",
		"dynaio-table-size", "dynaio-entry-empty", "dynaio-entry-misaligned",
		"dynaio-entry-out-of-bounds", "dynaio-entry-order", "dynaio-nonzero-padding",
		"semantic-change-refused", "v1-entry-out-of-bounds", "v1-record-stride",
		"v1-count-mismatch", "sub-header-size", "directory-overlap", "v1-entry-count",
		"out-of-memory", "ledger-invariant-broken", "io-error", "resource-error",
		"invalid-argument", "abi-unsupported", "no-device", "backend-unsupported",
		"library-missing", "symbol-missing", "runtime-conflict", "model-invalid",
		"model-too-large", "io-size-unknown", "create-failed", "input-count-mismatch",
		"input-size-mismatch", "input-set-failed", "bad-state", "run-failed", "output-null",
		"output-data-null", "output-invalid", "destroy-failed", "golden-format",
		"target-mismatch", "runtime-crashed", "descriptor-invalid", "init-failed",
		"query-failed", "prepare-failed", "buffer-failed", "run-timeout",
		"runtime-io-mismatch", "npy-invalid", "tensor-shape-mismatch", "tensor-type-mismatch",
		"tensor-text-invalid", "tensor-format-unsupported", "sample-invalid",
		"file-changed", "digest-mismatch", "not-regular-file", "corpus-part", "work-limit",
		"input-too-large",
	};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		assert_string_equal(nbg_code_name((nbg_code)(i + 1)), fixed[i]);
		assert_true(strlen(nbg_code_text((nbg_code)(i + 1))) > 20);
	}
	assert_string_equal(nbg_code_name(NBG_OK), "ok");
	assert_null(nbg_code_name(NBG_E__COUNT));
	/* names are unique */
	for (int a = 1; a < NBG_E__COUNT; a++)
		for (int b = a + 1; b < NBG_E__COUNT; b++)
			assert_true(strcmp(nbg_code_name((nbg_code)a), nbg_code_name((nbg_code)b)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_failure_codes_doc),
		cmocka_unit_test(test_field_map_doc),
		cmocka_unit_test(test_cli_doc_sample),
		cmocka_unit_test(test_stable_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
