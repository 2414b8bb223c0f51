/*
 * fuzz_corpus_part.c - libFuzzer harness: the parts `nbg corpus --merge`
 * reads (corpus_from_json), an untrusted document.  The input is the
 * part.  Checked beyond memory safety:
 *  - a refusal is corpus-part (or out-of-memory) with a message and no
 *    aggregate;
 *  - an accepted part written back (corpus_json) reads back and writes
 *    the same document byte for byte;
 *  - its text report is printable ASCII and newlines only (note ids and
 *    every other string come from the part);
 *  - merged twice into an empty aggregate it either passes 2^64-1 in some
 *    count (corpus-part) or gives a document that reads back: the sums
 *    still add up;
 *  - the exit code it calls for is 0, 1 or 3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "corpus/corpus.h"

static void printable_report(const corpus_agg *c)
{
	fz_text t;

	corpus_text(fz_text_open(&t), c);
	fz_text_check(&t);
}

/* The document of c reads back to a part that writes the same document. */
static void round_trip(const corpus_agg *c)
{
	corpus_agg *back = NULL;
	nbg_error err;
	char *doc = corpus_json(c);

	FZ_CHECK(doc != NULL);
	FZ_CHECK(corpus_from_json(doc, strlen(doc), "written", &back, &err) == NBG_OK);
	char *again = corpus_json(back);
	FZ_CHECK(again != NULL && !strcmp(doc, again));
	free(again);
	free(doc);
	corpus_agg_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	corpus_agg *c = NULL;
	nbg_error err;
	nbg_code rc = corpus_from_json((const char *)data, size, "part", &c, &err);

	if (rc != NBG_OK) {
		FZ_CHECK(c == NULL);
		FZ_CHECK(rc == NBG_E_CORPUS_PART || rc == NBG_E_OUT_OF_MEMORY);
		FZ_CHECK(err.code == rc && fz_terminated(err.message, sizeof(err.message)));
		return 0;
	}
	FZ_CHECK(c != NULL);
	int x = corpus_exit(c);
	FZ_CHECK(x == NBG_EXIT_OK || x == NBG_EXIT_INVALID || x == NBG_EXIT_IO);
	round_trip(c);
	printable_report(c);

	corpus_agg *sum = corpus_agg_new();
	FZ_CHECK(sum != NULL);
	FZ_CHECK(corpus_merge(sum, c) == NBG_OK);
	rc = corpus_merge(sum, c);
	FZ_CHECK(rc == NBG_OK || rc == NBG_E_CORPUS_PART);
	if (rc == NBG_OK) {
		FZ_CHECK(corpus_file_count(sum) / 2 == corpus_file_count(c));
		round_trip(sum);
		printable_report(sum);
	}
	corpus_agg_free(sum);
	corpus_agg_free(c);
	return 0;
}
