/*
 * ledger_json.c - the ledger as a JSON document, and reading such a document
 * back (untrusted: every field type- and range-checked, the ranges must
 * tile the declared size).
 */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "analysis/ledger/ledger_internal.h"
#include "common/json.h"

char *nbg_ledger_json(const nbg_ledger *l, const char *path)
{
	json_t *root = json_object(), *ranges = json_array(), *views = json_array(),
	       *totals = json_object();
	char ver[16];
	char *s;

	if (!l || !root || !ranges || !views || !totals) {
		json_decref(root);
		json_decref(ranges);
		json_decref(views);
		json_decref(totals);
		return NULL;
	}
	snprintf(ver, sizeof(ver), "0x%08x", l->version);
	if (path)
		json_object_set_new(root, "path", nbg_json_path(path));
	json_object_set_new(root, "family", json_integer(l->family));
	json_object_set_new(root, "version", json_string(ver));
	json_object_set_new(root, "file_size", json_integer((json_int_t)l->file_size));
	json_object_set_new(root, "sha256", nbg_json_sha(l->file_sha256));
	json_object_set_new(root, "invariant", json_string("holds"));
	for (size_t i = 0; i < l->nranges; i++) {
		const nbg_ledger_range *r = &l->ranges[i];
		json_t *o = json_object();
		json_object_set_new(o, "offset", json_integer((json_int_t)r->offset));
		json_object_set_new(o, "size", json_integer((json_int_t)r->size));
		json_object_set_new(o, "end", json_integer((json_int_t)(r->offset + r->size)));
		json_object_set_new(o, "class", json_string(nbg_ledger_class_names[r->cls]));
		json_object_set_new(o, "owner", json_string(r->owner));
		if (r->section >= 0) {
			json_object_set_new(o, "section_index", json_integer(r->section));
			json_object_set_new(o, "section_type", json_integer(r->section_type));
		}
		json_object_set_new(o, "sha256", nbg_json_sha(r->sha256));
		json_array_append_new(ranges, o);
	}
	for (size_t i = 0; i < l->nviews; i++) {
		const nbg_ledger_view *v = &l->views[i];
		json_t *o = json_object();
		json_object_set_new(o, "kind", json_string(nbg_ledger_view_names[v->kind]));
		json_object_set_new(o, "name", json_string(v->name));
		json_object_set_new(o, "offset", json_integer((json_int_t)v->offset));
		json_object_set_new(o, "size", json_integer((json_int_t)v->size));
		if (v->kind <= NBG_VIEW_CONNECTION_TAIL)
			json_object_set_new(o, "covered_bytes",
					    json_integer((json_int_t)v->covered_bytes));
		if (v->section >= 0)
			json_object_set_new(o, "section_index", json_integer(v->section));
		json_object_set_new(o, "sha256", nbg_json_sha(v->sha256));
		json_array_append_new(views, o);
	}
	for (int c = 0; c < NBG_LEDGER_CLASS_COUNT; c++) {
		json_t *o = json_object();
		json_object_set_new(o, "ranges", json_integer((json_int_t)l->class_ranges[c]));
		json_object_set_new(o, "bytes", json_integer((json_int_t)l->class_bytes[c]));
		json_object_set_new(totals, nbg_ledger_class_names[c], o);
	}
	json_object_set_new(root, "ranges", ranges);
	json_object_set_new(root, "views", views);
	json_object_set_new(root, "totals", totals);
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}

static bool parse_hex32(const char *s, uint8_t out[32])
{
	if (!s || strlen(s) != 64)
		return false;
	for (int i = 0; i < 64; i++) {
		char ch = s[i];
		int v = ch >= '0' && ch <= '9' ? ch - '0'
		      : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
		      : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
		if (v < 0)
			return false;
		if (i % 2 == 0)
			out[i / 2] = (uint8_t)(v << 4);
		else
			out[i / 2] |= (uint8_t)v;
	}
	return true;
}

static bool get_u64(json_t *o, const char *key, uint64_t *v)
{
	json_t *j = json_object_get(o, key);
	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return false;
	*v = (uint64_t)json_integer_value(j);
	return true;
}

static int lookup(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

#define BADDOC(...) nbg_error_set(err, NBG_E_RESOURCE, 0, "ledger", __VA_ARGS__)

static nbg_code load_doc(json_t *root, nbg_ledger *l, nbg_error *err)
{
	json_t *ranges = json_object_get(root, "ranges"), *views = json_object_get(root, "views");
	const char *ver = json_string_value(json_object_get(root, "version"));
	uint64_t fam;
	size_t i;
	json_t *e;

	if (!json_is_object(root))
		return BADDOC("the ledger document is not a JSON object");
	if (!get_u64(root, "family", &fam) || (fam != 1 && fam != 2))
		return BADDOC("the ledger document has no family 1 or 2");
	l->family = (uint32_t)fam;
	if (!ver || strncmp(ver, "0x", 2) || strlen(ver) > 10)
		return BADDOC("the ledger document has no version");
	l->version = (uint32_t)strtoul(ver + 2, NULL, 16);
	if (!get_u64(root, "file_size", &l->file_size) ||
	    !parse_hex32(json_string_value(json_object_get(root, "sha256")), l->file_sha256))
		return BADDOC("the ledger document lacks file_size or sha256");
	if (!json_is_array(ranges) || json_array_size(ranges) == 0)
		return BADDOC("the ledger document has no ranges");

	l->rcap = json_array_size(ranges);
	l->ranges = calloc(l->rcap, sizeof(*l->ranges));
	if (!l->ranges)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	json_array_foreach(ranges, i, e) {
		nbg_ledger_range *r = &l->ranges[i];
		const char *owner = json_string_value(json_object_get(e, "owner"));
		int cls = lookup(nbg_ledger_class_names, NBG_LEDGER_CLASS_COUNT,
				 json_string_value(json_object_get(e, "class")));
		uint64_t si = 0, st = 0;
		if (!json_is_object(e) || !get_u64(e, "offset", &r->offset) ||
		    !get_u64(e, "size", &r->size) || cls < 0 || !owner ||
		    strlen(owner) >= NBG_LEDGER_NAME_MAX ||
		    !parse_hex32(json_string_value(json_object_get(e, "sha256")), r->sha256))
			return BADDOC("ledger range %zu lacks offset, size, a known class, an "
				      "owner or a SHA-256", i);
		r->cls = (nbg_ledger_class)cls;
		snprintf(r->owner, sizeof(r->owner), "%s", owner);
		r->section = -1;
		if (get_u64(e, "section_index", &si) && si < INT32_MAX) {
			r->section = (int32_t)si;
			if (get_u64(e, "section_type", &st) && st <= UINT32_MAX)
				r->section_type = (uint32_t)st;
		}
		l->nranges++;
		l->class_bytes[r->cls] += r->size;
		l->class_ranges[r->cls]++;
	}
	if (json_is_array(views) && json_array_size(views)) {
		l->vcap = json_array_size(views);
		l->views = calloc(l->vcap, sizeof(*l->views));
		if (!l->views)
			return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
		json_array_foreach(views, i, e) {
			nbg_ledger_view *v = &l->views[i];
			const char *name = json_string_value(json_object_get(e, "name"));
			int kind = lookup(nbg_ledger_view_names, NBG_VIEW_KIND_COUNT,
					  json_string_value(json_object_get(e, "kind")));
			uint64_t si;
			if (!json_is_object(e) || kind < 0 || !name ||
			    strlen(name) >= NBG_LEDGER_NAME_MAX ||
			    !get_u64(e, "offset", &v->offset) || !get_u64(e, "size", &v->size) ||
			    !range_ok(v->offset, v->size, l->file_size) ||
			    !parse_hex32(json_string_value(json_object_get(e, "sha256")),
					 v->sha256))
				return BADDOC("ledger view %zu lacks a known kind, a name, an "
					      "in-file range or a SHA-256", i);
			v->kind = (nbg_ledger_view_kind)kind;
			snprintf(v->name, sizeof(v->name), "%s", name);
			get_u64(e, "covered_bytes", &v->covered_bytes);
			v->section = get_u64(e, "section_index", &si) && si < INT32_MAX
					     ? (int32_t)si : -1;
			l->nviews++;
		}
	}
	return nbg_ledger_check_tiling(l->ranges, l->nranges, l->file_size, err);
}

nbg_code nbg_ledger_from_json(const char *text, size_t len, nbg_ledger **out, nbg_error *err)
{
	json_error_t jerr;
	json_t *root;
	nbg_ledger *l;
	nbg_code rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!out || !text)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "ledger",
				     "no ledger document or result pointer was given");
	*out = NULL;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return nbg_error_set(err, NBG_E_RESOURCE, (uint64_t)jerr.position, "ledger",
			     "the ledger document is not JSON: %s (line %d)", jerr.text,
			     jerr.line);
	l = calloc(1, sizeof(*l));
	if (!l) {
		json_decref(root);
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	}
	rc = load_doc(root, l, err);
	json_decref(root);
	if (rc != NBG_OK) {
		nbg_ledger_free(l);
		return rc;
	}
	*out = l;
	return NBG_OK;
}

