/*
 * part.c - reading back a document corpus_json() wrote (a part)
 * into an aggregate, so that parts of a corpus measured apart merge into
 * exactly what one run over all their files gives.  Everything is checked:
 * the version that wrote it, every key the field table names, the types,
 * and that the counts add up; a document that fails is refused whole.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "corpus_internal.h"

typedef struct reader {
	corpus_agg *c;
	nbg_error *err;
	const char *name;
	int failed;
} reader;

static int refuse(reader *r, const char *key, const char *fmt, const char *what)
{
	if (r->failed++)
		return 0;
	corpus_error(r->err, NBG_E_CORPUS_PART, 0, key ? key : "", "%s: %s%s%s%s", r->name,
		     fmt, what ? what : "", key ? " at key " : "", key ? key : "");
	return 0;
}

json_t *corpus_json_at(json_t *root, const char *key, const char **leaf)
{
	const char *dot = strchr(key, '.');
	char step[64];

	if (!root || !dot) {
		if (leaf)
			*leaf = key;
		return leaf ? root : root ? json_object_get(root, key) : NULL;
	}
	snprintf(step, sizeof(step), "%.*s", (int)(dot - key), key);
	json_t *next = json_object_get(root, step);
	if (leaf && !json_is_object(next)) {
		next = json_object();
		json_object_set_new(root, step, next);
	}
	return corpus_json_at(next, dot + 1, leaf);
}

/* A count or value: a non-negative integer, or decimal digits in a string
 * (how values above INT64_MAX are written). */
static int to_u64(reader *r, json_t *j, const char *key, uint64_t *out)
{
	if (json_is_integer(j) && json_integer_value(j) >= 0) {
		*out = (uint64_t)json_integer_value(j);
		return 1;
	}
	if (json_is_string(j)) {
		const char *s = json_string_value(j);
		char *end;
		errno = 0;
		unsigned long long v = strtoull(s, &end, 10);
		if (*s >= '0' && *s <= '9' && !*end && !errno) {
			*out = v;
			return 1;
		}
	}
	refuse(r, key, "not a corpus part (a count is missing or not a non-negative integer)",
	       NULL);
	return 0;
}

static int read_valset(reader *r, json_t *a, const char *key, corpus_valset *s, int named)
{
	size_t i;
	json_t *e;

	if (!json_is_array(a))
		return refuse(r, key, "not a corpus part (a value list is missing)", NULL);
	json_array_foreach(a, i, e) {
		uint64_t v, n;
		json_t *value = json_object_get(e, named ? "raw" : "value");
		if (!to_u64(r, value, key, &v) ||
		    !to_u64(r, json_object_get(e, "files_or_records"), key, &n))
			return 0;
		if (!n)
			return refuse(r, key, "not a corpus part (a value seen 0 times)", NULL);
		corpus_valset_add(r->c, s, v, n);
	}
	if (s->count != json_array_size(a))
		return refuse(r, key, "not a corpus part (a value is listed twice)", NULL);
	return 1;
}

static int read_range(reader *r, json_t *j, const char *key, corpus_range *g)
{
	uint64_t lo, hi;

	if (json_is_null(j))
		return 1;
	if (!json_is_array(j) || json_array_size(j) != 2)
		return refuse(r, key, "not a corpus part (a range is not [low, high] or null)", NULL);
	if (!to_u64(r, json_array_get(j, 0), key, &lo) ||
	    !to_u64(r, json_array_get(j, 1), key, &hi))
		return 0;
	if (lo > hi)
		return refuse(r, key, "not a corpus part (a range's low end is above its high end)",
			      NULL);
	corpus_range_add(g, lo, hi);
	return 1;
}

/* {name: count} into n[k], where name(k) names slot k. */
static int read_counts(reader *r, json_t *o, const char *key, uint64_t *n, int count,
			const char *(*name)(int))
{
	const char *k;
	json_t *v;

	if (!json_is_object(o))
		return refuse(r, key, "not a corpus part (a table of counts is missing)", NULL);
	json_object_foreach(o, k, v) {
		int slot = -1;
		for (int i = 0; i < count && slot < 0; i++)
			if (name(i) && !strcmp(name(i), k))
				slot = i;
		if (slot < 0)
			return refuse(r, key, "not a corpus part (unknown name ", k);
		if (!to_u64(r, v, key, &n[slot]))
			return 0;
	}
	return 1;
}

static int read_types(reader *r, json_t *a, const char *key)
{
	size_t i;
	json_t *e;

	if (!json_is_array(a))
		return refuse(r, key, "not a corpus part (the section-type table is missing)", NULL);
	json_array_foreach(a, i, e) {
		uint64_t t, files;
		if (!to_u64(r, json_object_get(e, "type"), key, &t) ||
		    !to_u64(r, json_object_get(e, "files"), key, &files))
			return 0;
		if (t >= NBG_SECTION_TYPE_COUNT || r->c->type_files[t] || !files)
			return refuse(r, key, "not a corpus part (a section type out of range, "
					      "repeated or seen in no file)", NULL);
		r->c->type_files[t] = files;
		if (!read_valset(r, json_object_get(e, "entry_sizes"), key, &r->c->type_entsize[t], 0) ||
		    !read_valset(r, json_object_get(e, "alignments"), key, &r->c->type_align[t], 0))
			return 0;
	}
	return 1;
}

static int hex_digit(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

static int read_tails(reader *r, json_t *a, const char *key)
{
	size_t i;
	json_t *e;

	if (!json_is_array(a))
		return refuse(r, key, "not a corpus part (the connection-tail digests are missing)",
			      NULL);
	json_array_foreach(a, i, e) {
		const char *s = json_string_value(e);
		uint8_t d[32];
		int ok = s && strlen(s) == 64;
		for (int k = 0; ok && k < 32; k++) {
			int hi = hex_digit(s[2 * k]), lo = hex_digit(s[2 * k + 1]);
			ok = hi >= 0 && lo >= 0;
			d[k] = ok ? (uint8_t)(hi << 4 | lo) : 0; /* never -1 << 4 */
		}
		if (!ok)
			return refuse(r, key, "not a corpus part (a digest is not 64 lowercase hex "
					      "digits)", NULL);
		corpus_shaset_add(r->c, &r->c->tails, d);
	}
	if (r->c->tails.count != json_array_size(a))
		return refuse(r, key, "not a corpus part (a digest is listed twice)", NULL);
	return 1;
}

/* A note id as the parsers write them: lowercase letters, digits and '-'
 * (a part is untrusted: an id is printed by the text report). */
static int note_id_ok(const char *k)
{
	if (!*k || strlen(k) >= sizeof(((corpus_agg *)0)->notes[0].id))
		return 0;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || *k == '-'))
			return 0;
	return 1;
}

static int read_notes(reader *r, json_t *o, const char *key)
{
	const char *k;
	json_t *v;

	if (!json_is_object(o))
		return refuse(r, key, "not a corpus part (the notes are missing)", NULL);
	json_object_foreach(o, k, v) {
		uint64_t n;
		if (!note_id_ok(k))
			return refuse(r, key, "not a corpus part (a note id holds a character no "
					      "note id has: only a-z, 0-9 and '-')", NULL);
		if (!to_u64(r, v, key, &n) || !n)
			return refuse(r, key, "not a corpus part (a note id or count is wrong)", NULL);
		corpus_note_add(r->c, k, n);
	}
	return 1;
}

static int read_field(reader *r, json_t *root, const corpus_field *f)
{
	json_t *j = corpus_json_at(root, f->key, NULL);
	void *m = corpus_member(r->c, f);
	uint64_t v;

	if (!j)
		return refuse(r, f->key, "not a corpus part nbg corpus --json wrote (missing key)",
			      NULL);
	switch (f->kind) {
	case CF_U64:
		return to_u64(r, j, f->key, m);
	case CF_VALSET:
		return read_valset(r, j, f->key, m, f->namer != NULL);
	case CF_RANGE:
		return read_range(r, j, f->key, m);
	case CF_CODES:
		return read_counts(r, j, f->key, r->c->fail_by_code, NBG_E__COUNT, corpus_code_key);
	case CF_STATUSES:
		return read_counts(r, j, f->key, r->c->not_measured, CORPUS_STATUS_COUNT,
				   corpus_status_key);
	case CF_SKIPS:
		return read_counts(r, j, f->key, r->c->skipped, CORPUS_SKIP_COUNT, corpus_skip_key);
	case CF_TYPES:
		return read_types(r, j, f->key);
	case CF_TAIL_LIST:
		return read_tails(r, j, f->key);
	case CF_NOTES:
		return read_notes(r, j, f->key);
	case CF_UNREADABLE: /* derived: checked once everything is read */
	case CF_TAILS:
		return to_u64(r, j, f->key, &v);
	}
	return 0;
}

/* a + b into *sum; 0 when it does not fit in 64 bits. */
static int add_ok(uint64_t a, uint64_t b, uint64_t *sum)
{
	return !__builtin_add_overflow(a, b, sum);
}

/* The counts a writer derives must agree with what was read.  Every sum is
 * checked for 64-bit wraparound: "0 files = 2^64-1 valid + 1 invalid" adds
 * up modulo 2^64 and is refused. */
static int check_sums(reader *r, json_t *root)
{
	const corpus_agg *c = r->c;
	uint64_t sum = c->valid, versions, unreadable = 0, reasons = 0, tails = 0;
	int ok = 1;

	for (int k = 0; k < NBG_E__COUNT; k++)
		ok &= add_ok(sum, c->fail_by_code[k], &sum);
	for (int k = 0; k < CORPUS_STATUS_COUNT; k++)
		ok &= add_ok(sum, c->not_measured[k], &sum);
	if (!ok || sum != c->files)
		return refuse(r, "files", "counts do not add up (files is not valid + invalid + "
					  "not measured)", NULL);
	if (!add_ok(c->v1_files, c->v2_files, &versions) || versions != c->valid)
		return refuse(r, "valid", "counts do not add up (valid is not v1 + v2 files)", NULL);
	ok = add_ok(reasons, c->skipped[CORPUS_SKIP_UNREADABLE], &reasons);
	for (int k = CORPUS_UNREADABLE; k < CORPUS_STATUS_COUNT; k++)
		if (k != CORPUS_DIGEST_MISMATCH)
			ok &= add_ok(reasons, c->not_measured[k], &reasons);
	to_u64(r, json_object_get(root, "unreadable"), "unreadable", &unreadable);
	if (!ok || unreadable != reasons || reasons != corpus_unreadable(c))
		return refuse(r, "unreadable", "counts do not add up (unreadable is not the sum of "
					       "its reasons)", NULL);
	to_u64(r, corpus_json_at(root, "connection_tails.distinct_sha256", NULL),
	       "connection_tails.distinct_sha256", &tails);
	if (tails != c->tails.count)
		return refuse(r, "connection_tails.distinct_sha256",
			      "counts do not add up (not the number of digests listed)", NULL);
	return 1;
}

static int check_version(reader *r, json_t *root)
{
	const char *v = json_string_value(json_object_get(root, "nbgkit_version"));

	if (!json_is_object(root) || !v) {
		refuse(r, NULL, "not a corpus part: no nbgkit_version (parts are the documents "
				"`nbg corpus --json` writes)", NULL);
		return 0;
	}
	if (strcmp(v, nbg_version_string()) != 0) {
		corpus_error(r->err, NBG_E_CORPUS_PART, 0, "nbgkit_version",
			     "%s was written by nbgkit %.32s and this is nbgkit %s: parts merge "
			     "only within one version; measure that part again with this version",
			     r->name, v, nbg_version_string());
		r->failed = 1;
		return 0;
	}
	return 1;
}

nbg_code corpus_from_json(const char *text, size_t len, const char *name,
			  corpus_agg **out, nbg_error *err)
{
	if (!out || !text)
		return corpus_error(err, NBG_E_INVALID_ARGUMENT, 0, "",
				    "no corpus part or result pointer was given");
	reader r = { corpus_agg_new(), err, name ? name : "corpus part", 0 };
	json_error_t jerr;
	json_t *root;
	size_t n;
	const corpus_field *f = corpus_fields(&n);

	*out = NULL;
	if (!r.c)
		return corpus_error(err, NBG_E_OUT_OF_MEMORY, 0, "", "no memory for a corpus part");
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		corpus_agg_free(r.c);
		return corpus_error(err, NBG_E_CORPUS_PART, (uint64_t)jerr.position, "",
				    "%s is not JSON: %s (line %d); parts are the documents "
				    "`nbg corpus --json` writes", r.name, jerr.text, jerr.line);
	}
	if (check_version(&r, root)) {
		for (size_t i = 0; i < n && !r.failed; i++)
			read_field(&r, root, &f[i]);
		if (!r.failed && r.c->overflow)
			refuse(&r, NULL, "counts do not add up (a value or note is counted more "
					 "than 2^64-1 times)", NULL);
		if (!r.failed)
			check_sums(&r, root);
	}
	json_decref(root);
	if (!r.failed && r.c->oom) {
		corpus_agg_free(r.c);
		return corpus_error(err, NBG_E_OUT_OF_MEMORY, 0, "", "no memory for %s", r.name);
	}
	if (r.failed) {
		corpus_agg_free(r.c);
		return NBG_E_CORPUS_PART;
	}
	*out = r.c;
	return NBG_OK;
}
