/*
 * fuzz_ledger.c - libFuzzer harness: the byte-ownership ledger and
 * re-emission.  Whenever the parse succeeds: the ledger must build (a broken
 * tiling is a bug, never an input problem), its ranges must tile the file and
 * fingerprint the bytes they own, re-emission must write the input back byte
 * for byte, and the same ledger must refuse the input with one byte changed
 * or one byte short, writing nothing.  The ledger's JSON document must read
 * back to the same ledger.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "fuzz_common.h"
#include "nbg/ledger.h"

/* One memory file for every run: truncated before each use. */
static int out_fd = -1;

static size_t out_size(void)
{
	off_t end = lseek(out_fd, 0, SEEK_END);
	FZ_CHECK(end >= 0);
	return (size_t)end;
}

static void out_reset(void)
{
	if (out_fd < 0) {
		out_fd = memfd_create("nbg-fuzz-reemit", 0);
		FZ_CHECK(out_fd >= 0);
	}
	FZ_CHECK(ftruncate(out_fd, 0) == 0);
	FZ_CHECK(lseek(out_fd, 0, SEEK_SET) == 0);
}

static void check_ranges(const nbg_ledger *l, const uint8_t *data, size_t size)
{
	size_t n = nbg_ledger_range_count(l);
	uint64_t pos = 0, total = 0;

	FZ_CHECK(nbg_ledger_file_size(l) == size);
	FZ_CHECK(n > 0 || size == 0);
	for (size_t i = 0; i < n; i++) {
		const nbg_ledger_range *r = nbg_ledger_range_at(l, i);
		uint8_t d[32];
		unsigned len = 32;
		FZ_CHECK(r != NULL);
		FZ_CHECK(r->offset == pos && r->size > 0 && r->size <= size - pos);
		FZ_CHECK(nbg_ledger_class_name(r->cls) != NULL);
		FZ_CHECK(fz_terminated(r->owner, sizeof(r->owner)) && r->owner[0]);
		FZ_CHECK(EVP_Digest(data + r->offset, r->size, d, &len, EVP_sha256(), NULL));
		FZ_CHECK(!memcmp(d, r->sha256, 32));
		/* the owner lookup agrees at both ends of the range */
		FZ_CHECK(nbg_ledger_owner_of(l, r->offset) == r);
		FZ_CHECK(nbg_ledger_owner_of(l, r->offset + r->size - 1) == r);
		pos += r->size;
	}
	FZ_CHECK(pos == size);
	FZ_CHECK(nbg_ledger_range_at(l, n) == NULL);
	FZ_CHECK(nbg_ledger_owner_of(l, size) == NULL);
	for (int c = 0; c < NBG_LEDGER_CLASS_COUNT; c++)
		total += nbg_ledger_class_bytes(l, (nbg_ledger_class)c);
	FZ_CHECK(total == size);
	for (size_t i = 0; i < nbg_ledger_view_count(l); i++) {
		const nbg_ledger_view *v = nbg_ledger_view_at(l, i);
		FZ_CHECK(v != NULL && nbg_ledger_view_kind_name(v->kind) != NULL);
		FZ_CHECK(v->offset <= size && v->size <= size - v->offset);
		FZ_CHECK(fz_terminated(v->name, sizeof(v->name)));
	}
}

static void check_reemit(const nbg_ledger *l, const uint8_t *data, size_t size)
{
	nbg_error err;
	uint8_t *back, *changed;

	FZ_CHECK(nbg_reemit_check(l, data, size, &err) == NBG_OK);
	out_reset();
	FZ_CHECK(nbg_reemit_write(l, data, size, out_fd, 0, &err) == NBG_OK);
	FZ_CHECK(out_size() == size);
	back = malloc(size ? size : 1);
	FZ_CHECK(back != NULL);
	FZ_CHECK(pread(out_fd, back, size, 0) == (ssize_t)size);
	FZ_CHECK(!memcmp(back, data, size)); /* byte-exact */
	free(back);

	/* one byte changed (where depends on the input), then one byte short:
	 * refused, and nothing written */
	changed = malloc(size ? size : 1);
	FZ_CHECK(changed != NULL);
	memcpy(changed, data, size);
	size_t at = size ? (size_t)(((uint64_t)data[size / 2] * 2654435761u) % size) : 0;
	if (size) {
		changed[at] ^= 0x01;
		FZ_CHECK(nbg_reemit_check(l, changed, size, &err) ==
			 NBG_E_SEMANTIC_CHANGE_REFUSED);
		FZ_CHECK(nbg_ledger_owner_of(l, at) != NULL);
		out_reset();
		FZ_CHECK(nbg_reemit_write(l, changed, size, out_fd, 0, &err) ==
			 NBG_E_SEMANTIC_CHANGE_REFUSED);
		FZ_CHECK(out_size() == 0);
		FZ_CHECK(nbg_reemit_check(l, data, size - 1, &err) ==
			 NBG_E_SEMANTIC_CHANGE_REFUSED);
	}
	free(changed);
}

static void check_document(const nbg_ledger *l, const uint8_t *data, size_t size)
{
	char *doc = nbg_ledger_json(l, "fuzz.nb");
	nbg_ledger *back = NULL;
	nbg_error err;

	FZ_CHECK(doc != NULL);
	FZ_CHECK(nbg_ledger_from_json(doc, strlen(doc), &back, &err) == NBG_OK);
	FZ_CHECK(nbg_ledger_range_count(back) == nbg_ledger_range_count(l));
	FZ_CHECK(nbg_ledger_view_count(back) == nbg_ledger_view_count(l));
	FZ_CHECK(!memcmp(nbg_ledger_file_sha256(back), nbg_ledger_file_sha256(l), 32));
	FZ_CHECK(nbg_reemit_check(back, data, size, &err) == NBG_OK);
	nbg_ledger_free(back);
	free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nbg_model *m = NULL;
	nbg_ledger *l = NULL;
	nbg_error err;
	nbg_code rc;

	if (fz_parse(data, size, &m, &err) != NBG_OK)
		return 0;
	rc = nbg_ledger_build(m, &l, &err);
	if (rc != NBG_OK)
		fprintf(stderr, "ledger: %s: %s\n", nbg_code_name(rc), err.message);
	FZ_CHECK(rc == NBG_OK);
	/* the ledger keeps no pointer to the model or its buffer */
	nbg_model_free(m);
	FZ_CHECK(nbg_ledger_family(l) == (size >= 8 && data[6] == 2 ? 2u : 1u));
	check_ranges(l, data, size);
	check_reemit(l, data, size);
	check_document(l, data, size);
	nbg_ledger_free(l);
	return 0;
}
