/*
 * json.c - a corpus aggregate as one JSON document (`nbg corpus --json`),
 * which is also a part corpus_from_json() reads back; one file's record as
 * one JSON line.  doc/corpus.md lists the keys.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "corpus_internal.h"

/* An unsigned 64-bit value exactly: a number up to INT64_MAX, else its
 * decimal digits as a string (JSON readers lose such numbers). */
static json_t *ju64(uint64_t v)
{
	char buf[24];
	if (v <= INT64_MAX)
		return json_integer((json_int_t)v);
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return json_string(buf);
}

static json_t *sha_json(const uint8_t d[32])
{
	char hex[65];
	nbg_hex32(d, hex);
	return json_string(hex);
}

static json_t *vs_json(const corpus_valset *s, corpus_namer f, int *oom)
{
	size_t n;
	corpus_vs_pair *p = corpus_valset_sorted(s, &n);
	json_t *a = json_array();
	char buf[48];

	if (n == SIZE_MAX || !a) {
		*oom = 1;
		return a;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "value", f ? json_string(f(p[i].v, buf, sizeof(buf)))
						  : ju64(p[i].v));
		if (f)
			json_object_set_new(o, "raw", ju64(p[i].v));
		json_object_set_new(o, "files_or_records", ju64(p[i].n));
		if (json_array_append_new(a, o) != 0)
			*oom = 1;
	}
	free(p);
	return a;
}

static json_t *rg_json(const corpus_range *r)
{
	return r->seen ? json_pack("[o,o]", ju64(r->lo), ju64(r->hi)) : json_null();
}

static json_t *types_json(const corpus_agg *c, int *oom)
{
	json_t *types = json_array();
	for (uint32_t t = 0; t < NBG_SECTION_TYPE_COUNT; t++)
		if (c->type_files[t])
			json_array_append_new(
				types, json_pack("{s:i,s:s,s:o,s:o,s:o}", "type", (int)t, "name",
						 nbg_section_type_name(t), "files",
						 ju64(c->type_files[t]), "entry_sizes",
						 vs_json(&c->type_entsize[t], NULL, oom), "alignments",
						 vs_json(&c->type_align[t], NULL, oom)));
	return types;
}

static json_t *counts_json(const uint64_t *n, int count, const char *(*name)(int), int all)
{
	json_t *o = json_object();
	for (int k = 0; k < count; k++)
		if (name(k) && (all || n[k]))
			json_object_set_new(o, name(k), ju64(n[k]));
	return o;
}

static json_t *tails_json(const corpus_agg *c, int *oom)
{
	size_t n;
	uint8_t(*d)[32] = corpus_shaset_sorted(&c->tails, &n);
	json_t *a = json_array();

	if (n == SIZE_MAX)
		*oom = 1;
	for (size_t i = 0; i < n && n != SIZE_MAX; i++)
		if (json_array_append_new(a, sha_json(d[i])) != 0)
			*oom = 1;
	free(d);
	return a;
}

static json_t *notes_json(const corpus_agg *c, int *oom)
{
	size_t n;
	corpus_note_count *p = corpus_notes_sorted(c, &n);
	json_t *o = json_object();

	if (n == SIZE_MAX)
		*oom = 1;
	for (size_t i = 0; i < n && n != SIZE_MAX; i++)
		json_object_set_new(o, p[i].id, ju64(p[i].n));
	free(p);
	return o;
}

static json_t *field_json(const corpus_agg *c, const corpus_field *f, int *oom)
{
	const void *m = corpus_cmember(c, f);
	const uint64_t *u = m;

	switch (f->kind) {
	case CF_U64:
		return ju64(*u);
	case CF_VALSET:
		return vs_json(m, f->namer, oom);
	case CF_RANGE:
		return rg_json(m);
	case CF_UNREADABLE:
		return ju64(corpus_unreadable(c));
	case CF_CODES:
		return counts_json(c->fail_by_code, NBG_E__COUNT, corpus_code_key, 0);
	case CF_STATUSES:
		return counts_json(c->not_measured, CORPUS_STATUS_COUNT, corpus_status_key, 1);
	case CF_SKIPS:
		return counts_json(c->skipped, CORPUS_SKIP_COUNT, corpus_skip_key, 1);
	case CF_TYPES:
		return types_json(c, oom);
	case CF_TAILS:
		return ju64(c->tails.count);
	case CF_TAIL_LIST:
		return tails_json(c, oom);
	case CF_NOTES:
		return notes_json(c, oom);
	}
	return NULL;
}

char *corpus_json(const corpus_agg *c)
{
	if (!c)
		return NULL;
	size_t n;
	const corpus_field *f = corpus_fields(&n);
	json_t *root = json_object();
	int oom = c->oom;
	char *s = NULL;

	if (!root)
		return NULL;
	json_object_set_new(root, "nbgkit_version", json_string(nbg_version_string()));
	for (size_t i = 0; i < n; i++) {
		json_t *v = field_json(c, &f[i], &oom);
		if (!v) {
			oom = 1;
			break;
		}
		const char *leaf;
		json_t *parent = corpus_json_at(root, f[i].key, &leaf);
		json_object_set_new(parent, leaf, v);
	}
	if (!oom)
		s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}

static json_t *hex32(uint32_t v)
{
	char buf[16];
	snprintf(buf, sizeof(buf), "0x%08" PRIx32, v);
	return json_string(buf);
}

/* A record's figures of the model: the first three after "valid", the rest
 * after the failure; null for a file that did not parse. */
enum { FAMILY, VERSION, TARGET, SECTIONS, INPUTS, OUTPUTS, MODEL_PARTS };
static const char *const model_keys[MODEL_PARTS] = {
	[FAMILY] = "family",
	[VERSION] = "version",
	[TARGET] = "target",
	[SECTIONS] = "section_count",
	[INPUTS] = "input_count",
	[OUTPUTS] = "output_count",
};

static json_t *model_part(const nbg_model *m, int part)
{
	if (!m)
		return json_null();
	switch (part) {
	case FAMILY:
		return json_integer(nbg_model_family(m));
	case VERSION:
		return hex32(nbg_model_version(m));
	case TARGET:
		return hex32(nbg_model_target(m));
	case SECTIONS:
		return ju64(nbg_model_section_count(m));
	case INPUTS:
		return ju64(nbg_model_input_count(m));
	default:
		return ju64(nbg_model_output_count(m));
	}
}

static void set_model_parts(json_t *o, const nbg_model *m, int from, int to)
{
	for (int i = from; i < to; i++)
		json_object_set_new(o, model_keys[i], model_part(m, i));
}

/* A message for JSON: as it is when it is UTF-8, else escaped as
 * nbg_text_escape does. */
static json_t *message_json(const char *s)
{
	json_t *j = json_string(s);
	char *e = j ? NULL : nbg_text_escape(s, SIZE_MAX);

	if (!j && e)
		j = json_string(e);
	free(e);
	return j ? j : json_null();
}

char *corpus_record_json(const corpus_item *it, json_t *path)
{
	if (!it) {
		json_decref(path);
		return NULL;
	}
	const nbg_model *m = corpus_item_model(it);
	int failed = it->status != CORPUS_VALID;
	json_t *o = json_object(), *notes = m ? json_array() : json_null();
	char *s = NULL;

	if (!o || !notes) {
		json_decref(o);
		json_decref(notes);
		json_decref(path);
		return NULL;
	}
	json_object_set_new(o, "path", path ? path : json_null());
	json_object_set_new(o, "size", it->has_size ? ju64(it->size) : json_null());
	json_object_set_new(o, "sha256", it->has_sha256 ? sha_json(it->sha256) : json_null());
	json_object_set_new(o, "status", json_string(corpus_status_name(it->status)));
	json_object_set_new(o, "valid", json_boolean(!failed));
	set_model_parts(o, m, FAMILY, SECTIONS);
	json_object_set_new(o, "failure_code",
			    failed ? json_string(nbg_code_name(it->err.code)) : json_null());
	json_object_set_new(o, "failure_offset",
			    failed && it->status == CORPUS_INVALID ? ju64(it->err.offset)
								      : json_null());
	json_object_set_new(o, "failure_message",
			    failed ? message_json(it->err.message) : json_null());
	set_model_parts(o, m, SECTIONS, MODEL_PARTS);
	for (size_t i = 0; m && i < nbg_model_note_count(m); i++)
		json_array_append_new(notes, json_string(nbg_model_note_at(m, i)->id));
	json_object_set_new(o, "notes", notes);
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}
