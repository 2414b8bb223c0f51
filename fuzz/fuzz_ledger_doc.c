/*
 * fuzz_ledger_doc.c - libFuzzer harness: nbg_ledger_from_json, the reader of
 * ledger documents (`nbg reemit --ledger`), which are untrusted input.
 *
 * Input starting with the NBG magic is first turned into its ledger document
 * (so NBG seeds and the replay's corpus serve here too) and that document is
 * read, whole and cut short; anything else is read as a document directly.
 * A document that loads must describe a tiling of its file size; written
 * again it must load again to the same ledger; and re-emission against bytes
 * it does not fingerprint must refuse without writing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "nbg/ledger.h"

static void check_loaded(const nbg_ledger *l, const uint8_t *other, size_t other_size)
{
	size_t n = nbg_ledger_range_count(l);
	nbg_error err;
	nbg_code rc;

	FZ_CHECK(nbg_ledger_family(l) == 1 || nbg_ledger_family(l) == 2);
	if (n)
		FZ_CHECK(nbg_ledger_check_tiling(nbg_ledger_range_at(l, 0), n,
						 nbg_ledger_file_size(l), &err) == NBG_OK);
	/* written and read again: the same ledger */
	char *doc = nbg_ledger_json(l, NULL);
	nbg_ledger *again = NULL;
	FZ_CHECK(doc != NULL);
	rc = nbg_ledger_from_json(doc, strlen(doc), &again, &err);
	if (rc != NBG_OK)
		fprintf(stderr, "reload: %s: %s\n", nbg_code_name(rc), err.message);
	FZ_CHECK(rc == NBG_OK);
	FZ_CHECK(nbg_ledger_range_count(again) == n);
	FZ_CHECK(nbg_ledger_file_size(again) == nbg_ledger_file_size(l));
	FZ_CHECK(!memcmp(nbg_ledger_file_sha256(again), nbg_ledger_file_sha256(l), 32));
	for (size_t i = 0; i < n; i++)
		FZ_CHECK(!memcmp(nbg_ledger_range_at(again, i), nbg_ledger_range_at(l, i),
				 sizeof(nbg_ledger_range)));
	nbg_ledger_free(again);
	free(doc);
	/* other bytes: any answer but a crash; OK only if they really match */
	rc = nbg_reemit_check(l, other, other_size, &err);
	FZ_CHECK(rc == NBG_OK || rc == NBG_E_SEMANTIC_CHANGE_REFUSED ||
		 rc == NBG_E_RESOURCE);
	if (rc == NBG_OK)
		FZ_CHECK(nbg_ledger_file_size(l) == other_size);
}

static void load(const char *text, size_t len, const uint8_t *other, size_t other_size)
{
	nbg_ledger *l = NULL;
	nbg_error err;
	nbg_code rc = nbg_ledger_from_json(text, len, &l, &err);

	FZ_CHECK(nbg_code_name(rc) != NULL);
	if (rc != NBG_OK) {
		FZ_CHECK(l == NULL);
		FZ_CHECK(rc == NBG_E_RESOURCE || rc == NBG_E_LEDGER_INVARIANT);
		FZ_CHECK(fz_terminated(err.message, sizeof(err.message)) && err.message[0]);
		return;
	}
	check_loaded(l, other, other_size);
	nbg_ledger_free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nbg_model *m = NULL;
	nbg_ledger *l = NULL;
	nbg_error err;

	if (size < 4 || memcmp(data, "VPMN", 4) != 0) {
		load((const char *)data, size, data, size);
		return 0;
	}
	if (fz_parse(data, size, &m, &err) != NBG_OK)
		return 0;
	FZ_CHECK(nbg_ledger_build(m, &l, &err) == NBG_OK);
	char *doc = nbg_ledger_json(l, "seed.nb");
	FZ_CHECK(doc != NULL);
	size_t len = strlen(doc);
	load(doc, len, data, size);
	/* cut short at a few places derived from the input */
	for (int k = 1; k <= 4; k++)
		load(doc, (len * (size_t)k) / 5 + data[size - 1] % 7, data, size);
	free(doc);
	nbg_ledger_free(l);
	nbg_model_free(m);
	return 0;
}
