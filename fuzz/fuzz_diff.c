/*
 * fuzz_diff.c - libFuzzer harness: nbg_diff_models and nbg_diff_json.
 * The input is file A; file B is A with a few bytes changed at places and
 * to values derived from the input (so the fuzzer steers both).  A against
 * itself must be identical with no item; when B parses too, A against B and
 * B against A must succeed, agree on the counts, report a change when bytes
 * differ, and write JSON that reads back with every item.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

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
	FZ_CHECK(d->count <= NBG_DIFF_MAX_ITEMS);
	for (size_t i = 0; i < d->count; i++) {
		const nbg_diff_item *it = &d->items[i];
		FZ_CHECK(nbg_diff_kind_name(it->kind) != NULL);
		FZ_CHECK(fz_terminated(it->path, sizeof(it->path)));
		FZ_CHECK(fz_terminated(it->a, sizeof(it->a)) && fz_terminated(it->b, sizeof(it->b)));
		FZ_CHECK(fz_terminated(it->detail, sizeof(it->detail)));
		if (it->kind == NBG_DIFF_BYTES && it->length && !strstr(it->detail, "size differs")) {
			FZ_CHECK(it->offset_a <= a->file_size &&
				 it->length <= a->file_size - it->offset_a);
			FZ_CHECK(it->offset_b <= b->file_size &&
				 it->length <= b->file_size - it->offset_b);
		}
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
	FZ_CHECK(items != NULL && json_array_size(items) == d->count);
	json_decref(doc);
	free(s);
	return d;
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
	FZ_CHECK(d->identical && d->count == 0 && d->bytes_changed == 0);
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
		FZ_CHECK(d->identical == (differ == 0) && e->identical == d->identical);
		/* owners are matched by name, so one that moved is compared at its
		 * new place: bytes_changed may exceed the bytes that differ, but
		 * never the bytes of the file */
		FZ_CHECK(d->bytes_changed <= size);
		FZ_CHECK(d->bytes_changed == e->bytes_changed);
		FZ_CHECK(d->owners_changed == e->owners_changed);
		FZ_CHECK(d->owners_added == e->owners_removed && d->owners_removed == e->owners_added);
		FZ_CHECK(d->field_count == e->field_count);
		/* a changed byte shows up somewhere */
		FZ_CHECK(differ == 0 || d->count > 0 || d->field_count > 0);
		nbg_diff_free(d);
		nbg_diff_free(e);
		nbg_model_free(b);
	}
	free(copy);
	nbg_model_free(a);
	return 0;
}
