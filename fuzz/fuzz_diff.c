/*
 * fuzz_diff.c - libFuzzer harness: nbg_diff_models, the reconstruction,
 * nbg_diff_json and nbg_text_diff.
 *
 * The input is file A; file B is A with a few bytes changed at places and
 * to values derived from the input (so the fuzzer steers both).  A against
 * itself must be identical with no item; when B parses too, A against B and
 * B against A must succeed, agree on the counts, report a change when bytes
 * differ, and write JSON that reads back with every item.
 *
 * The reconstruction is checked against a second implementation: A with its
 * checksums made consistent by the test fixture's zlib code (fx_refresh), B
 * that A with bytes changed inside and outside its dynamic-I/O payloads,
 * refreshed or not; the harness substitutes the payloads itself, refreshes
 * with the fixture, and the library's verdict, entries and SHA-256 must
 * agree with that.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/sha.h>

#include "fixture.h"
#include "fuzz_common.h"
#include "nbg/diff.h"

static nbg_diff *diff_checked(const nbg_model *a, const nbg_model *b)
{
	nbg_diff *d = NULL;
	nbg_error err;
	nbg_code rc = nbg_diff_models(a, b, &d, &err);
	json_error_t jerr;

	if (rc != NBG_OK)
		fprintf(stderr, "diff: %s: %s\n", nbg_code_name(rc), err.message);
	FZ_CHECK(rc == NBG_OK && d != NULL);
	FZ_CHECK(nbg_diff_item_count(d) <= NBG_DIFF_MAX_ITEMS);
	for (size_t i = 0; i < nbg_diff_item_count(d); i++) {
		const nbg_diff_item *it = nbg_diff_item_at(d, i);
		FZ_CHECK(nbg_diff_kind_name(it->kind) != NULL);
		FZ_CHECK(fz_terminated(it->path, sizeof(it->path)));
		FZ_CHECK(fz_terminated(it->a, sizeof(it->a)) && fz_terminated(it->b, sizeof(it->b)));
		FZ_CHECK(fz_terminated(it->detail, sizeof(it->detail)));
		if (it->kind == NBG_DIFF_BYTES && it->length && !strstr(it->detail, "size differs")) {
			FZ_CHECK(it->offset_a <= nbg_model_file_size(a) &&
				 it->length <= nbg_model_file_size(a) - it->offset_a);
			FZ_CHECK(it->offset_b <= nbg_model_file_size(b) &&
				 it->length <= nbg_model_file_size(b) - it->offset_b);
		}
	}
	FILE *devnull = fopen("/dev/null", "w");
	if (devnull) {
		nbg_text_diff(devnull, d, a, "a.nb", b, "b\x1b.nb");
		fclose(devnull);
	}
	char *s = nbg_diff_json(d, a, "a.nb", b, "b \"x\".nb");
	FZ_CHECK(s != NULL);
	json_t *doc = json_loads(s, 0, &jerr);
	FZ_CHECK(doc != NULL && json_is_object(doc));
	json_t *items = NULL;
	const char *key;
	json_t *v;
	json_object_foreach(doc, key, v)
		if (json_is_array(v))
			items = v;
	/* an item jansson refused (text that is not UTF-8) would be missing */
	FZ_CHECK(items != NULL && json_array_size(items) == nbg_diff_item_count(d));
	json_decref(doc);
	free(s);
	return d;
}

/* What every reconstruction promises, whatever the files. */
static void check_recon_shape(const nbg_model *a, const nbg_model *b, const nbg_reconstruction *r)
{
	FZ_CHECK(r != NULL);
	FZ_CHECK(fz_terminated(r->reason, sizeof(r->reason)) && r->reason[0]);
	if (!r->attempted) {
		FZ_CHECK(!r->explained && r->entry_count == 0 && r->checksum_count == 0 &&
			 !r->first);
		return;
	}
	FZ_CHECK(nbg_model_family(a) == 2 && nbg_model_family(b) == 2 && nbg_model_file_size(a) == nbg_model_file_size(b));
	FZ_CHECK(nbg_model_dynaio(a)->present && nbg_model_checksums_match(a));
	FZ_CHECK(r->checksum_count == nbg_model_checksum_record_count(a) + 1);
	FZ_CHECK(r->entry_count <= nbg_model_dynaio(a)->entry_count);
	for (size_t i = 0; i < r->entry_count; i++) {
		const nbg_recon_entry *e = nbg_reconstruction_entry_at(r, i);
		FZ_CHECK(e->index < nbg_model_dynaio(a)->entry_count && e->bytes_changed > 0 &&
			 e->bytes_changed <= e->size);
		FZ_CHECK(i == 0 || e->index > nbg_reconstruction_entry_at(r, i - 1)->index);
	}
	FZ_CHECK(r->explained == !memcmp(r->sha256, nbg_model_file_sha256(b), 32));
	if (r->explained) {
		FZ_CHECK(!r->first && r->unexplained_bytes == 0 && r->checksum_bytes == 0);
		return;
	}
	FZ_CHECK(r->first && r->unexplained_bytes + r->checksum_bytes > 0);
	FZ_CHECK(r->range_count >= 1 && r->range_count <= NBG_RECON_MAX_RANGES);
	int first_listed = 0;
	for (size_t i = 0; i < r->range_count; i++) {
		const nbg_recon_range *x = nbg_reconstruction_range_at(r, i);
		first_listed |= x == r->first;
		FZ_CHECK(x->length >= 1 && x->length <= x->bytes);
		FZ_CHECK(x->offset < nbg_model_file_size(a) && x->length <= nbg_model_file_size(a) - x->offset);
		FZ_CHECK(fz_terminated(x->owner, sizeof(x->owner)) &&
			 fz_terminated(x->detail, sizeof(x->detail)));
	}
	FZ_CHECK(first_listed);
	FZ_CHECK(r->first->checksum_word == (r->unexplained_bytes == 0));
}

/* The reconstruction of b from a, done here with the fixture's checksum
 * code, must agree with the library's. */
static void check_recon_independent(const uint8_t *a, const uint8_t *b, size_t size,
				    const nbg_model *ma, const nbg_reconstruction *r)
{
	uint8_t *x = malloc(size), dg[32];
	size_t k = 0;

	FZ_CHECK(x != NULL);
	memcpy(x, a, size);
	for (size_t i = 0; i < nbg_model_dynaio(ma)->entry_count; i++) {
		const nbg_dynaio_entry *e = nbg_model_dynaio_entry_at(ma, i);
		uint64_t fo = nbg_model_dynaio(ma)->region_offset + e->offset;
		if (!memcmp(a + fo, b + fo, e->size))
			continue;
		FZ_CHECK(k < r->entry_count && nbg_reconstruction_entry_at(r, k)->index == i &&
			 nbg_reconstruction_entry_at(r, k)->file_offset == fo);
		memcpy(x + fo, b + fo, e->size);
		k++;
	}
	FZ_CHECK(k == r->entry_count);
	fx_refresh(x, size);
	SHA256(x, size, dg);
	FZ_CHECK(!memcmp(dg, r->sha256, 32));
	FZ_CHECK(r->explained == !memcmp(x, b, size));
	free(x);
}

/* B from A (consistent): bytes changed inside A's dynamic-I/O payloads at
 * places steered by h, one byte anywhere when `extra`, checksums refreshed
 * by the fixture when `refresh`; then the library and the harness must agree. */
static void reconstruction_variant(const uint8_t *ca, uint8_t *cb, size_t size,
				   const nbg_model *a, uint64_t h, int extra, int refresh)
{
	nbg_model *b = NULL;
	nbg_error err;

	memcpy(cb, ca, size);
	for (int k = 0; k < 1 + (int)(h & 3); k++) {
		h = h * 6364136223846793005ull + 1442695040888963407ull;
		const nbg_dynaio_entry *e =
			nbg_model_dynaio_entry_at(a, (h >> 8) % nbg_model_dynaio(a)->entry_count);
		cb[nbg_model_dynaio(a)->region_offset + e->offset + (h >> 24) % e->size] ^=
			(uint8_t)(1 + (h >> 40) % 255);
	}
	if (extra)
		cb[(h >> 20) % size] ^= 0x20;
	if (refresh)
		fx_refresh(cb, size);
	if (fz_parse(cb, size, &b, &err) != NBG_OK)
		return;
	nbg_reconstruction *r = NULL;
	FZ_CHECK(nbg_reconstruct(a, b, &r, &err) == NBG_OK);
	check_recon_shape(a, b, r);
	if (r->attempted)
		check_recon_independent(ca, cb, size, a, r);
	/* payload bytes only, checksums refreshed: always explained */
	FZ_CHECK(extra || !refresh || r->explained || !memcmp(ca, cb, size));
	int explained = r->explained;
	nbg_reconstruction_free(r);
	nbg_diff *d = diff_checked(a, b);
	FZ_CHECK(nbg_diff_summary_of(d)->identical || nbg_diff_reconstruction(d)->explained == explained);
	nbg_diff_free(d);
	nbg_model_free(b);
}

static void reconstruction_pairs(const uint8_t *data, size_t size, uint64_t h)
{
	nbg_model *a = NULL;
	nbg_error err;
	uint8_t *ca, *cb;

	if (size < 60 || size > ((size_t)1 << 24))
		return;
	ca = malloc(size);
	cb = malloc(size);
	FZ_CHECK(ca && cb);
	memcpy(ca, data, size);
	fx_refresh(ca, size);
	if (fz_parse(ca, size, &a, &err) == NBG_OK && nbg_model_dynaio(a)->present &&
	    nbg_model_dynaio(a)->entry_count && nbg_model_checksums_match(a))
		for (int v = 0; v < 4; v++)
			reconstruction_variant(ca, cb, size, a, h + 0x9e3779b97f4a7c15ull * v,
					       v & 1, !(v & 2));
	nbg_model_free(a);
	free(ca);
	free(cb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nbg_model *a = NULL, *b = NULL;
	nbg_error err;
	nbg_diff *d, *e;
	uint8_t *copy;
	uint64_t h = 1469598103934665603ull, differ = 0;

	if (fz_parse(data, size, &a, &err) != NBG_OK)
		return 0;
	d = diff_checked(a, a);
	FZ_CHECK(nbg_diff_summary_of(d)->identical && nbg_diff_item_count(d) == 0 && nbg_diff_summary_of(d)->bytes_changed == 0);
	nbg_diff_free(d);

	/* B: up to four bytes changed, where and how taken from the input */
	copy = malloc(size);
	FZ_CHECK(copy != NULL);
	memcpy(copy, data, size);
	for (size_t i = 0; i < size; i += 1 + size / 64)
		h = (h ^ data[i]) * 1099511628211ull;
	for (int k = 0; k < 1 + (int)(h & 3); k++) {
		h = h * 6364136223846793005ull + 1442695040888963407ull;
		copy[(h >> 16) % size] ^= (uint8_t)(1 + (h >> 40) % 255);
	}
	for (size_t i = 0; i < size; i++)
		differ += copy[i] != data[i];
	if (fz_parse(copy, size, &b, &err) == NBG_OK) {
		d = diff_checked(a, b);
		e = diff_checked(b, a);
		check_recon_shape(a, b, nbg_diff_reconstruction(d));
		check_recon_shape(b, a, nbg_diff_reconstruction(e));
		FZ_CHECK(nbg_diff_summary_of(d)->identical == (differ == 0) && nbg_diff_summary_of(e)->identical == nbg_diff_summary_of(d)->identical);
		/* owners are matched by name, so one that moved is compared at its
		 * new place: bytes_changed may exceed the bytes that differ, but
		 * never the bytes of the file */
		FZ_CHECK(nbg_diff_summary_of(d)->bytes_changed <= size);
		FZ_CHECK(nbg_diff_summary_of(d)->bytes_changed == nbg_diff_summary_of(e)->bytes_changed);
		FZ_CHECK(nbg_diff_summary_of(d)->owners_changed == nbg_diff_summary_of(e)->owners_changed);
		FZ_CHECK(nbg_diff_summary_of(d)->owners_added == nbg_diff_summary_of(e)->owners_removed && nbg_diff_summary_of(d)->owners_removed == nbg_diff_summary_of(e)->owners_added);
		FZ_CHECK(nbg_diff_summary_of(d)->field_count == nbg_diff_summary_of(e)->field_count);
		/* a changed byte shows up somewhere */
		FZ_CHECK(differ == 0 || nbg_diff_item_count(d) > 0 || nbg_diff_summary_of(d)->field_count > 0);
		nbg_diff_free(d);
		nbg_diff_free(e);
		nbg_model_free(b);
	}
	free(copy);
	nbg_model_free(a);
	reconstruction_pairs(data, size, h);
	return 0;
}
