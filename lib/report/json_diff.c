/*
 * json_diff.c - the JSON form of nbg diff (diff.h, doc/diff.md): both
 * files, the verdict, the summary counts, the reconstruction, the differing
 * owners in file order and every difference item.
 */
#include <stdio.h>
#include <stdlib.h>

#include "nbg/diff.h"
#include "report/report_internal.h"

static json_t *side(const nbg_model *m, const char *path, int checksums_match)
{
	return json_pack("{s:o,s:I,s:I,s:I,s:I,s:o,s:b}", "path", nbg_json_path(path), "family",
			 (json_int_t)m->family, "version", (json_int_t)m->version, "target",
			 (json_int_t)m->target, "file_size", (json_int_t)m->file_size, "sha256",
			 nbg_json_sha(m->file_sha256), "checksums_match", checksums_match);
}

static json_t *hex32(uint32_t v)
{
	char s[16];
	snprintf(s, sizeof(s), "0x%08x", v);
	return json_string(s);
}

static json_t *recon_range(const nbg_recon_range *x)
{
	return json_pack("{s:o,s:I,s:I,s:I,s:o,s:b,s:s,s:s}", "owner", nbg_json_str(x->owner),
			 "offset", (json_int_t)x->offset, "length", (json_int_t)x->length,
			 "bytes", (json_int_t)x->bytes, "detail", nbg_json_str(x->detail),
			 "checksum_word", x->checksum_word, "result", x->result, "b", x->b);
}

static json_t *recon_json(const nbg_reconstruction *r)
{
	if (!r)
		return json_null();
	json_t *o = json_pack("{s:b,s:b,s:o}", "attempted", r->attempted, "explained",
			      r->explained, "reason", nbg_json_str(r->reason));
	if (!r->attempted || !o)
		return o;
	json_t *ents = json_array(), *cks = json_array(), *ranges = json_array();
	for (size_t i = 0; i < r->entry_count; i++) {
		const nbg_recon_entry *e = &r->entries[i];
		json_array_append_new(ents, json_pack("{s:I,s:I,s:I,s:I,s:I}", "entry",
						      (json_int_t)e->index, "region_offset",
						      (json_int_t)e->region_offset, "size",
						      (json_int_t)e->size, "file_offset",
						      (json_int_t)e->file_offset, "bytes_changed",
						      (json_int_t)e->bytes_changed));
	}
	for (size_t i = 0; i < r->checksum_count; i++) {
		const nbg_recon_checksum *c = &r->checksums[i];
		json_array_append_new(cks, json_pack("{s:s,s:I,s:o,s:o,s:o,s:b}", "word", c->word,
						     "offset", (json_int_t)c->offset, "a",
						     hex32(c->a), "recomputed", hex32(c->recomputed),
						     "b", hex32(c->b), "matches_b",
						     c->recomputed == c->b));
	}
	for (size_t i = 0; i < r->range_count; i++)
		json_array_append_new(ranges, recon_range(&r->ranges[i]));
	json_object_set_new(o, "entries_substituted", ents);
	json_object_set_new(o, "checksums_recomputed", cks);
	json_object_set_new(o, "sha256_result", nbg_json_sha(r->sha256));
	json_object_set_new(o, "sha256_b", nbg_json_sha(r->sha256_b));
	json_object_set_new(o, "unexplained_bytes", json_integer((json_int_t)r->unexplained_bytes));
	json_object_set_new(o, "checksum_word_bytes", json_integer((json_int_t)r->checksum_bytes));
	json_object_set_new(o, "first_unexplained", r->first ? recon_range(r->first)
								  : json_null());
	json_object_set_new(o, "unexplained_ranges", ranges);
	json_object_set_new(o, "unexplained_ranges_truncated", json_boolean(r->ranges_truncated));
	return o;
}

static json_t *owners_json(const nbg_diff *d)
{
	json_t *a = json_array();
	for (size_t i = 0; i < nbg_diff_owner_count(d); i++) {
		const nbg_diff_owner *o = nbg_diff_owner_at(d, i);
		json_t *x = json_pack("{s:s,s:o}", "kind", nbg_diff_kind_name(o->kind), "owner",
				      nbg_json_str(o->owner));
		if (o->kind != NBG_DIFF_ADDED) {
			json_object_set_new(x, "offset_a", json_integer((json_int_t)o->offset_a));
			json_object_set_new(x, "size_a", json_integer((json_int_t)o->size_a));
		}
		if (o->kind != NBG_DIFF_REMOVED) {
			json_object_set_new(x, "offset_b", json_integer((json_int_t)o->offset_b));
			json_object_set_new(x, "size_b", json_integer((json_int_t)o->size_b));
		}
		if (o->kind == NBG_DIFF_BYTES && o->size_a == o->size_b) {
			json_object_set_new(x, "bytes_changed",
					    json_integer((json_int_t)o->bytes_changed));
			json_object_set_new(x, "runs", json_integer((json_int_t)o->runs));
		}
		json_array_append_new(a, x);
	}
	return a;
}

static json_t *items_json(const nbg_diff *d)
{
	json_t *items = json_array();
	for (size_t i = 0; i < nbg_diff_item_count(d); i++) {
		const nbg_diff_item *it = nbg_diff_item_at(d, i);
		json_t *o = json_pack("{s:s,s:o}", "kind", nbg_diff_kind_name(it->kind), "path",
				      nbg_json_str(it->path));
		if (it->kind != NBG_DIFF_ADDED)
			json_object_set_new(o, "a", nbg_json_str(it->a));
		if (it->kind != NBG_DIFF_REMOVED)
			json_object_set_new(o, "b", nbg_json_str(it->b));
		if (it->kind != NBG_DIFF_FIELD) {
			if (it->kind != NBG_DIFF_ADDED)
				json_object_set_new(o, "offset_a", json_integer((json_int_t)it->offset_a));
			if (it->kind != NBG_DIFF_REMOVED)
				json_object_set_new(o, "offset_b", json_integer((json_int_t)it->offset_b));
			json_object_set_new(o, "length", json_integer((json_int_t)it->length));
		}
		if (it->detail[0])
			json_object_set_new(o, "detail", nbg_json_str(it->detail));
		json_array_append_new(items, o);
	}
	return items;
}

char *nbg_diff_json(const nbg_diff *d, const nbg_model *a, const char *path_a,
		    const nbg_model *b, const char *path_b)
{
	if (!d || !a || !b)
		return NULL;
	json_t *root = json_pack(
		"{s:s,s:o,s:o,s:b,s:s,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b},s:o,s:o,s:o}",
		"nbgkit_version", NBG_VERSION_STRING, "a", side(a, path_a, nbg_diff_summary_of(d)->checksums_match_a),
		"b", side(b, path_b, nbg_diff_summary_of(d)->checksums_match_b), "identical", nbg_diff_summary_of(d)->identical, "verdict",
		nbg_diff_verdict(d), "summary", "fields_changed", (json_int_t)nbg_diff_summary_of(d)->field_count,
		"records_added", (json_int_t)nbg_diff_summary_of(d)->records_added, "records_removed",
		(json_int_t)nbg_diff_summary_of(d)->records_removed,
		"owners_changed", (json_int_t)nbg_diff_summary_of(d)->owners_changed, "owners_added",
		(json_int_t)nbg_diff_summary_of(d)->owners_added, "owners_removed", (json_int_t)nbg_diff_summary_of(d)->owners_removed,
		"bytes_changed", (json_int_t)nbg_diff_summary_of(d)->bytes_changed, "truncated", nbg_diff_summary_of(d)->truncated,
		"reconstruction", recon_json(nbg_diff_reconstruction(d)), "owners", owners_json(d),
		"differences", items_json(d));
	char *s = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(root);
	return s;
}

char *nbg_diff_error_json(const char *which, const char *path, const nbg_error *err)
{
	if (!err)
		return NULL;
	const char *code = nbg_code_name(err->code);
	json_t *e = json_object();
	if (which)
		json_object_set_new(e, "file", json_string(which));
	json_object_set_new(e, "path", nbg_json_path(path));
	json_object_set_new(e, "code", json_string(code ? code : "unknown"));
	json_object_set_new(e, "offset", json_integer((json_int_t)err->offset));
	json_object_set_new(e, "field", nbg_json_str(err->field));
	json_object_set_new(e, "message", nbg_json_str(err->message));
	json_t *root = json_pack("{s:s,s:o}", "nbgkit_version", NBG_VERSION_STRING, "error", e);
	char *s = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(root);
	return s;
}
