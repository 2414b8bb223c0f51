/*
 * ledger.c - the byte-ownership ledger of a parsed NBG file and lossless
 * re-emission from it (doc/ledger.md).
 *
 * Building works from "claims": every structure the parser proved (header,
 * sub-header, directory records, v1 prefix blocks, section payloads) claims
 * its exact byte range.  Claims are sorted and walked once; the bytes
 * between them become alignment (the minimum a following section's declared
 * alignment requires, directly before it) or padding; the final 512 bytes
 * become a connection-tail owner only when no claim touches them.  The
 * result is checked against the tiling invariant before anyone sees it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "common/internal.h"
#include "nbg/ledger.h"
#include "report/report_internal.h"

struct nbg_ledger {
	uint32_t family, version;
	uint64_t file_size;
	uint8_t file_sha256[32];
	size_t nranges, rcap;
	nbg_ledger_range *ranges;
	size_t nviews, vcap;
	nbg_ledger_view *views;
	uint64_t class_bytes[NBG_LEDGER_CLASS_COUNT];
	size_t class_ranges[NBG_LEDGER_CLASS_COUNT];
};

static const char *const class_names[NBG_LEDGER_CLASS_COUNT] = {
	"decoded-record", "alignment", "padding", "preserved-opaque", "connection-tail",
	"opaque-fixed-extension",
};

static const char *const view_names[NBG_VIEW_KIND_COUNT] = {
	"section-covered-view", "partly-covered-view", "connection-tail-view",
	"dynaio-entry-view", "nested-entry-view", "empty-section",
};

const char *nbg_ledger_class_name(nbg_ledger_class c)
{
	return (unsigned)c < NBG_LEDGER_CLASS_COUNT ? class_names[c] : NULL;
}

const char *nbg_ledger_view_kind_name(nbg_ledger_view_kind k)
{
	return (unsigned)k < NBG_VIEW_KIND_COUNT ? view_names[k] : NULL;
}

const char *nbg_ledger_code_name(nbg_code code)
{
	if (code == NBG_LEDGER_E_INVARIANT)
		return "ledger-invariant-broken";
	if (code == NBG_LEDGER_E_IO)
		return "io-error";
	if (code == NBG_LEDGER_E_RESOURCE)
		return "resource-error";
	return nbg_code_name(code);
}


/* ------------------------------------------------------------ building */

typedef struct claim {
	uint64_t offset, size;
	nbg_ledger_class cls;
	char owner[NBG_LEDGER_NAME_MAX];
	int32_t section;
	uint32_t section_type;
	uint32_t align;  /* declared alignment of the section (v2), else 0 */
	size_t order;    /* insertion order: ties stay stable */
} claim;

typedef struct builder {
	const nbg_model *m;
	nbg_ledger *l;
	claim *c;
	size_t n, cap;
	nbg_error *err;
} builder;

static bool add_claim(builder *b, uint64_t off, uint64_t size, nbg_ledger_class cls,
		      int32_t section, uint32_t type, uint32_t align, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));
static bool add_claim(builder *b, uint64_t off, uint64_t size, nbg_ledger_class cls,
		      int32_t section, uint32_t type, uint32_t align, const char *fmt, ...)
{
	va_list ap;
	claim *c;

	if (size == 0)
		return true;
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		claim *p = realloc(b->c, cap * sizeof(*p));
		if (!p)
			return false;
		b->c = p;
		b->cap = cap;
	}
	c = &b->c[b->n];
	c->offset = off;
	c->size = size;
	c->cls = cls;
	c->section = section;
	c->section_type = type;
	c->align = align;
	c->order = b->n;
	va_start(ap, fmt);
	vsnprintf(c->owner, sizeof(c->owner), fmt, ap);
	va_end(ap);
	b->n++;
	return true;
}

static bool push_range(nbg_ledger *l, const uint8_t *data, uint64_t off, uint64_t size,
		       nbg_ledger_class cls, int32_t section, uint32_t type, const char *owner)
{
	nbg_ledger_range *r;

	if (l->nranges == l->rcap) {
		size_t cap = l->rcap ? l->rcap * 2 : 64;
		nbg_ledger_range *p = realloc(l->ranges, cap * sizeof(*p));
		if (!p)
			return false;
		l->ranges = p;
		l->rcap = cap;
	}
	r = &l->ranges[l->nranges++];
	memset(r, 0, sizeof(*r));
	r->offset = off;
	r->size = size;
	r->cls = cls;
	r->section = section;
	r->section_type = type;
	snprintf(r->owner, sizeof(r->owner), "%s", owner);
	if (data)
		nbg_sha256(data + off, (size_t)size, r->sha256);
	return true;
}

static bool push_view(nbg_ledger *l, const uint8_t *data, nbg_ledger_view_kind kind,
		      uint64_t off, uint64_t size, uint64_t covered, int32_t section,
		      const char *name)
{
	nbg_ledger_view *v;

	if (l->nviews == l->vcap) {
		size_t cap = l->vcap ? l->vcap * 2 : 16;
		nbg_ledger_view *p = realloc(l->views, cap * sizeof(*p));
		if (!p)
			return false;
		l->views = p;
		l->vcap = cap;
	}
	v = &l->views[l->nviews++];
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->offset = off;
	v->size = size;
	v->covered_bytes = covered;
	v->section = section;
	snprintf(v->name, sizeof(v->name), "%s", name);
	if (data) /* an empty view hashes zero bytes wherever it claims to start */
		nbg_sha256(size ? data + off : data, (size_t)size, v->sha256);
	return true;
}

static void section_label(const nbg_section *s, char *out, size_t n)
{
	const char *name = nbg_section_type_name(s->type);
	if (name)
		snprintf(out, n, "section %u %s", s->type, name);
	else
		snprintf(out, n, "section %u", s->type);
}

static bool claim_sections(builder *b)
{
	const nbg_model *m = b->m;
	char label[NBG_LEDGER_NAME_MAX];

	for (size_t i = 0; i < m->section_count; i++) {
		const nbg_section *s = &m->sections[i];
		nbg_ledger_class cls = s->cls == NBG_CLASS_DECODED ? NBG_LEDGER_DECODED_RECORD
								  : NBG_LEDGER_PRESERVED_OPAQUE;
		section_label(s, label, sizeof(label));
		if (s->size == 0) {
			if (!push_view(b->l, m->data, NBG_VIEW_EMPTY_SECTION, s->offset, 0, 0,
				       (int32_t)i, label))
				return false;
			continue;
		}
		if (!add_claim(b, s->offset, s->size, cls, (int32_t)i, s->type,
			       m->family == 2 ? s->alignment : 0, "%s", label))
			return false;
	}
	return true;
}

static bool claim_v2(builder *b)
{
	const nbg_model *m = b->m;

	if (!add_claim(b, 0, NBG_V2_HEADER_SIZE, NBG_LEDGER_DECODED_RECORD, -1, 0, 0, "header") ||
	    !add_claim(b, m->sub_header_offset, NBG_V2_SUB_HEADER_SIZE, NBG_LEDGER_DECODED_RECORD,
		       -1, 0, 0, "sub-header"))
		return false;
	for (size_t i = 0; i < m->section_count; i++)
		if (!add_claim(b, m->sections[i].record_offset, NBG_V2_SECTION_HEADER_SIZE,
			       NBG_LEDGER_DECODED_RECORD, (int32_t)i, m->sections[i].type, 0,
			       "directory entry %zu", i))
			return false;
	return claim_sections(b);
}

static bool claim_v1(builder *b)
{
	const nbg_model *m = b->m;
	const nbg_v1_info *v1 = &m->v1;
	uint64_t header_end = v1->has_feature_db ? v1->feature_db_offset : v1->memory_offset;

	if (!add_claim(b, 0, header_end, NBG_LEDGER_DECODED_RECORD, -1, 0, 0, "header"))
		return false;
	if (v1->has_feature_db &&
	    !add_claim(b, v1->feature_db_offset, v1->memory_offset - v1->feature_db_offset,
		       NBG_LEDGER_DECODED_RECORD, -1, 0, 0, "feature database"))
		return false;
	if (!add_claim(b, v1->memory_offset, v1->entries_offset - v1->memory_offset,
		       NBG_LEDGER_DECODED_RECORD, -1, 0, 0, "memory requirements"))
		return false;
	for (size_t i = 0; i < m->section_count; i++)
		if (!add_claim(b, m->sections[i].record_offset, 8, NBG_LEDGER_DECODED_RECORD,
			       (int32_t)i, m->sections[i].type, 0, "table entry %zu", i))
			return false;
	if (v1->opaque_size &&
	    !add_claim(b, v1->opaque_offset, v1->opaque_size, NBG_LEDGER_OPAQUE_FIXED_EXTENSION,
		       -1, 0, 0, "opaque fixed extension"))
		return false;
	return claim_sections(b);
}

static int cmp_claim(const void *a, const void *b)
{
	const claim *x = a, *y = b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	if (x->size != y->size) /* the container before what it contains */
		return x->size > y->size ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_view(const void *a, const void *b)
{
	const nbg_ledger_view *x = a, *y = b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->section != y->section)
		return x->section < y->section ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Bytes in [lo, hi) that no claim owns, before `next` (NULL: end of file).
 * The minimum bytes next's alignment requires sit directly before it. */
static bool emit_gap(builder *b, uint64_t lo, uint64_t hi, const claim *next)
{
	uint64_t need = 0;
	char name[NBG_LEDGER_NAME_MAX];

	if (next && next->align > 1) {
		need = (next->align - lo % next->align) % next->align;
		if (need > hi - lo)
			need = hi - lo; /* cannot happen for an aligned section; stay tiled */
	}
	if (hi - lo > need) {
		if (next)
			snprintf(name, sizeof(name), "gap before %.50s", next->owner);
		else
			snprintf(name, sizeof(name), "end of file");
		if (!push_range(b->l, b->m->data, lo, hi - lo - need, NBG_LEDGER_PADDING, -1, 0,
				name))
			return false;
	}
	if (need) {
		snprintf(name, sizeof(name), "alignment of %.50s", next->owner);
		if (!push_range(b->l, b->m->data, hi - need, need, NBG_LEDGER_ALIGNMENT,
				next->section, next->section_type, name))
			return false;
	}
	return true;
}

/* Bytes of [t, end) that claims own (claims sorted). */
static uint64_t tail_coverage(const builder *b, uint64_t t, uint64_t end)
{
	uint64_t covered = 0, cur = t;
	for (size_t i = 0; i < b->n; i++) {
		uint64_t lo = b->c[i].offset, hi = b->c[i].offset + b->c[i].size;
		if (hi > end)
			hi = end;
		if (lo < cur)
			lo = cur;
		if (hi > lo) {
			covered += hi - lo;
			cur = hi;
		}
	}
	return covered;
}

#define OOM(b) nbg_error_set((b)->err, NBG_LEDGER_E_RESOURCE, 0, "memory", "out of memory building the ledger")

static nbg_code build(builder *b)
{
	const nbg_model *m = b->m;
	nbg_ledger *l = b->l;
	uint64_t size = m->file_size, cur = 0;
	char name[NBG_LEDGER_NAME_MAX];

	if (!(m->family == 2 ? claim_v2(b) : claim_v1(b)))
		return OOM(b);
	for (size_t i = 0; i < b->n; i++)
		if (!range_ok(b->c[i].offset, b->c[i].size, size))
			return nbg_error_set(b->err, NBG_LEDGER_E_INVARIANT, b->c[i].offset, b->c[i].owner,
				     "%s [%llu, +%llu) lies outside the %llu-byte file the model "
				     "describes: the model and its buffer disagree", b->c[i].owner,
				     (unsigned long long)b->c[i].offset,
				     (unsigned long long)b->c[i].size, (unsigned long long)size);
	qsort(b->c, b->n, sizeof(*b->c), cmp_claim);

	/* The final 512 bytes: always a view; an owner only when nothing else is. */
	if (size >= NBG_TAIL_SIZE) {
		uint64_t t = size - NBG_TAIL_SIZE, covered = tail_coverage(b, t, size);
		nbg_ledger_view_kind k = covered == 0		    ? NBG_VIEW_CONNECTION_TAIL
					 : covered == NBG_TAIL_SIZE ? NBG_VIEW_SECTION_COVERED
								    : NBG_VIEW_PARTLY_COVERED;
		/* The parser's view counts section bytes only; every one is a claim. */
		if (m->tail.cover != NBG_TAIL_NONE && covered < m->tail.covered_bytes)
			return nbg_error_set(b->err, NBG_LEDGER_E_INVARIANT, t, "tail",
				     "the ledger sees %llu owned bytes in the final 512, the "
				     "parser's view %llu", (unsigned long long)covered,
				     (unsigned long long)m->tail.covered_bytes);
		if (!push_view(l, m->data, k, t, NBG_TAIL_SIZE, covered, -1, "connection tail"))
			return OOM(b);
		if (covered == 0 &&
		    !add_claim(b, t, NBG_TAIL_SIZE, NBG_LEDGER_CONNECTION_TAIL, -1, 0, 0,
			       "connection tail"))
			return OOM(b);
		/* the tail claim starts after every other claim ends: order holds */
	}

	for (size_t i = 0; i < b->n; i++) {
		const claim *c = &b->c[i];
		uint64_t end = c->offset + c->size;

		if (c->offset < cur) {
			/* v2 forbids overlaps outright: one here means the model lies. */
			if (m->family == 2)
				return nbg_error_set(b->err, NBG_LEDGER_E_INVARIANT, c->offset, c->owner,
					     "%s [%llu, %llu) overlaps bytes already owned up to "
					     "%llu, which the v2 parser rules out", c->owner,
					     (unsigned long long)c->offset, (unsigned long long)end,
					     (unsigned long long)cur);
			/* v1 entries may nest or overlap: the structure that starts
			 * first keeps the shared bytes and this one becomes a view.
			 * What it reaches beyond them it owns, up to where the next
			 * structure starts (that one is no less a structure). */
			if (!push_view(l, m->data, NBG_VIEW_NESTED_ENTRY, c->offset, c->size, 0,
				       c->section, c->owner))
				return OOM(b);
			uint64_t stop = end;
			for (size_t j = i + 1; j < b->n; j++)
				if (b->c[j].offset >= cur) {
					stop = b->c[j].offset < stop ? b->c[j].offset : stop;
					break;
				}
			if (stop > cur) {
				snprintf(name, sizeof(name), "%.40s beyond overlap", c->owner);
				if (!push_range(l, m->data, cur, stop - cur, c->cls, c->section,
						c->section_type, name))
					return OOM(b);
				cur = stop;
			}
			continue;
		}
		if (c->offset > cur && !emit_gap(b, cur, c->offset, c))
			return OOM(b);
		/* A claim that is a whole section payload takes the fingerprint the
		 * parser already computed for exactly those bytes: hash them once. */
		const nbg_section *whole = c->section >= 0 ? &m->sections[c->section] : NULL;
		if (whole && (whole->offset != c->offset || whole->size != c->size))
			whole = NULL;
		if (!push_range(l, whole ? NULL : m->data, c->offset, c->size, c->cls, c->section,
				c->section_type, c->owner))
			return OOM(b);
		if (whole)
			memcpy(l->ranges[l->nranges - 1].sha256, whole->sha256, 32);
		cur = end;
	}
	if (cur < size && !emit_gap(b, cur, size, NULL))
		return OOM(b);

	/* Dynamic-I/O entries: proved geometry, unproved meaning, so views. */
	if (m->dynaio.present) {
		const nbg_section *reg = nbg_model_section(m, NBG_SEC_DYNAIO);
		int32_t si = reg ? (int32_t)(reg - m->sections) : -1;
		for (size_t i = 0; i < m->dynaio.entry_count; i++) {
			const nbg_dynaio_entry *e = &m->dynaio.entries[i];
			uint64_t off = m->dynaio.region_offset + e->offset;
			if (!range_ok(off, e->size, size))
				return nbg_error_set(b->err, NBG_LEDGER_E_INVARIANT, off, "dynaio",
					     "dynaio entry %zu lies outside the file", i);
			snprintf(name, sizeof(name), "dynaio entry %zu", i);
			if (!push_view(l, m->data, NBG_VIEW_DYNAIO_ENTRY, off, e->size, 0, si,
				       name))
				return OOM(b);
		}
	}
	if (l->nviews)
		qsort(l->views, l->nviews, sizeof(*l->views), cmp_view);

	for (size_t i = 0; i < l->nranges; i++) {
		l->class_bytes[l->ranges[i].cls] += l->ranges[i].size;
		l->class_ranges[l->ranges[i].cls]++;
	}
	return nbg_ledger_check_tiling(l->ranges, l->nranges, size, b->err);
}

nbg_code nbg_ledger_build(const nbg_model *m, nbg_ledger **out, nbg_error *err)
{
	builder b = { 0 };
	nbg_code rc;

	*out = NULL;
	if (err)
		memset(err, 0, sizeof(*err));
	if (!m || !m->data || (m->family != 1 && m->family != 2))
		return nbg_error_set(err, NBG_LEDGER_E_INVARIANT, 0, "model",
			     "not a model returned by nbg_parse (or its buffer is gone)");
	b.m = m;
	b.err = err;
	b.l = calloc(1, sizeof(*b.l));
	if (!b.l)
		return OOM(&b);
	b.l->family = m->family;
	b.l->version = m->version;
	b.l->file_size = m->file_size;
	memcpy(b.l->file_sha256, m->file_sha256, 32);
	rc = build(&b);
	free(b.c);
	if (rc != NBG_OK) {
		nbg_ledger_free(b.l);
		return rc;
	}
	*out = b.l;
	return NBG_OK;
}

void nbg_ledger_free(nbg_ledger *l)
{
	if (!l)
		return;
	free(l->ranges);
	free(l->views);
	free(l);
}

nbg_code nbg_ledger_check_tiling(const nbg_ledger_range *r, size_t count, uint64_t file_size,
				 nbg_error *err)
{
	uint64_t cur = 0;

	for (size_t i = 0; i < count; i++) {
		if (r[i].size == 0)
			return nbg_error_set(err, NBG_LEDGER_E_INVARIANT, r[i].offset, r[i].owner,
				     "ledger range %zu (%s) is empty", i, r[i].owner);
		if (r[i].offset > cur)
			return nbg_error_set(err, NBG_LEDGER_E_INVARIANT, cur, r[i].owner,
				     "no range owns bytes [%llu, %llu): the ledger has a gap "
				     "before %s", (unsigned long long)cur,
				     (unsigned long long)r[i].offset, r[i].owner);
		if (r[i].offset < cur)
			return nbg_error_set(err, NBG_LEDGER_E_INVARIANT, r[i].offset, r[i].owner,
				     "%s starts at %llu, inside bytes already owned up to %llu: "
				     "two ranges overlap", r[i].owner,
				     (unsigned long long)r[i].offset, (unsigned long long)cur);
		if (add_overflow_u64(cur, r[i].size, &cur) || cur > file_size)
			return nbg_error_set(err, NBG_LEDGER_E_INVARIANT, r[i].offset, r[i].owner,
				     "%s reaches past the end of the %llu-byte file", r[i].owner,
				     (unsigned long long)file_size);
	}
	if (cur != file_size)
		return nbg_error_set(err, NBG_LEDGER_E_INVARIANT, cur, "end",
			     "the ranges own %llu bytes of a %llu-byte file",
			     (unsigned long long)cur, (unsigned long long)file_size);
	return NBG_OK;
}

/* ------------------------------------------------------------ accessors */

uint32_t nbg_ledger_family(const nbg_ledger *l) { return l->family; }
uint32_t nbg_ledger_version(const nbg_ledger *l) { return l->version; }
uint64_t nbg_ledger_file_size(const nbg_ledger *l) { return l->file_size; }
const uint8_t *nbg_ledger_file_sha256(const nbg_ledger *l) { return l->file_sha256; }
size_t nbg_ledger_range_count(const nbg_ledger *l) { return l->nranges; }
size_t nbg_ledger_view_count(const nbg_ledger *l) { return l->nviews; }

const nbg_ledger_range *nbg_ledger_range_at(const nbg_ledger *l, size_t i)
{
	return i < l->nranges ? &l->ranges[i] : NULL;
}

const nbg_ledger_view *nbg_ledger_view_at(const nbg_ledger *l, size_t i)
{
	return i < l->nviews ? &l->views[i] : NULL;
}

const nbg_ledger_range *nbg_ledger_owner_of(const nbg_ledger *l, uint64_t offset)
{
	size_t lo = 0, hi = l->nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const nbg_ledger_range *r = &l->ranges[mid];
		if (offset < r->offset)
			hi = mid;
		else if (offset - r->offset >= r->size)
			lo = mid + 1;
		else
			return r;
	}
	return NULL;
}

uint64_t nbg_ledger_class_bytes(const nbg_ledger *l, nbg_ledger_class c)
{
	return (unsigned)c < NBG_LEDGER_CLASS_COUNT ? l->class_bytes[c] : 0;
}

size_t nbg_ledger_class_ranges(const nbg_ledger *l, nbg_ledger_class c)
{
	return (unsigned)c < NBG_LEDGER_CLASS_COUNT ? l->class_ranges[c] : 0;
}

/* ------------------------------------------------------------ JSON */

static json_t *sha_json(const uint8_t d[32])
{
	char hex[65];
	nbg_hex32(d, hex);
	return json_string(hex);
}

char *nbg_ledger_json(const nbg_ledger *l, const char *path)
{
	json_t *root = json_object(), *ranges = json_array(), *views = json_array(),
	       *totals = json_object();
	char ver[16];
	char *s;

	if (!root || !ranges || !views || !totals) {
		json_decref(root);
		json_decref(ranges);
		json_decref(views);
		json_decref(totals);
		return NULL;
	}
	snprintf(ver, sizeof(ver), "0x%08x", l->version);
	if (path)
		json_object_set_new(root, "path", nbg_json_str(path));
	json_object_set_new(root, "family", json_integer(l->family));
	json_object_set_new(root, "version", json_string(ver));
	json_object_set_new(root, "file_size", json_integer((json_int_t)l->file_size));
	json_object_set_new(root, "sha256", sha_json(l->file_sha256));
	json_object_set_new(root, "invariant", json_string("holds"));
	for (size_t i = 0; i < l->nranges; i++) {
		const nbg_ledger_range *r = &l->ranges[i];
		json_t *o = json_object();
		json_object_set_new(o, "offset", json_integer((json_int_t)r->offset));
		json_object_set_new(o, "size", json_integer((json_int_t)r->size));
		json_object_set_new(o, "end", json_integer((json_int_t)(r->offset + r->size)));
		json_object_set_new(o, "class", json_string(class_names[r->cls]));
		json_object_set_new(o, "owner", json_string(r->owner));
		if (r->section >= 0) {
			json_object_set_new(o, "section_index", json_integer(r->section));
			json_object_set_new(o, "section_type", json_integer(r->section_type));
		}
		json_object_set_new(o, "sha256", sha_json(r->sha256));
		json_array_append_new(ranges, o);
	}
	for (size_t i = 0; i < l->nviews; i++) {
		const nbg_ledger_view *v = &l->views[i];
		json_t *o = json_object();
		json_object_set_new(o, "kind", json_string(view_names[v->kind]));
		json_object_set_new(o, "name", json_string(v->name));
		json_object_set_new(o, "offset", json_integer((json_int_t)v->offset));
		json_object_set_new(o, "size", json_integer((json_int_t)v->size));
		if (v->kind <= NBG_VIEW_CONNECTION_TAIL)
			json_object_set_new(o, "covered_bytes",
					    json_integer((json_int_t)v->covered_bytes));
		if (v->section >= 0)
			json_object_set_new(o, "section_index", json_integer(v->section));
		json_object_set_new(o, "sha256", sha_json(v->sha256));
		json_array_append_new(views, o);
	}
	for (int c = 0; c < NBG_LEDGER_CLASS_COUNT; c++) {
		json_t *o = json_object();
		json_object_set_new(o, "ranges", json_integer((json_int_t)l->class_ranges[c]));
		json_object_set_new(o, "bytes", json_integer((json_int_t)l->class_bytes[c]));
		json_object_set_new(totals, class_names[c], o);
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

#define BADDOC(...) nbg_error_set(err, NBG_LEDGER_E_RESOURCE, 0, "ledger", __VA_ARGS__)

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
		return BADDOC("out of memory");
	json_array_foreach(ranges, i, e) {
		nbg_ledger_range *r = &l->ranges[i];
		const char *owner = json_string_value(json_object_get(e, "owner"));
		int cls = lookup(class_names, NBG_LEDGER_CLASS_COUNT,
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
			return BADDOC("out of memory");
		json_array_foreach(views, i, e) {
			nbg_ledger_view *v = &l->views[i];
			const char *name = json_string_value(json_object_get(e, "name"));
			int kind = lookup(view_names, NBG_VIEW_KIND_COUNT,
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

	*out = NULL;
	if (err)
		memset(err, 0, sizeof(*err));
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return nbg_error_set(err, NBG_LEDGER_E_RESOURCE, (uint64_t)jerr.position, "ledger",
			     "the ledger document is not JSON: %s (line %d)", jerr.text,
			     jerr.line);
	l = calloc(1, sizeof(*l));
	if (!l) {
		json_decref(root);
		return nbg_error_set(err, NBG_LEDGER_E_RESOURCE, 0, "memory", "out of memory");
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

/* ------------------------------------------------------------ re-emission */

typedef struct sha_ctx {
	EVP_MD_CTX *md;
	bool ok;
} sha_ctx;

static void sha_begin(sha_ctx *s)
{
	s->md = EVP_MD_CTX_new();
	s->ok = s->md && EVP_DigestInit_ex(s->md, EVP_sha256(), NULL);
}

static void sha_update(sha_ctx *s, const uint8_t *p, uint64_t n)
{
	/* EVP takes size_t; feed huge ranges in pieces. */
	while (s->ok && n) {
		size_t k = n > ((size_t)1 << 30) ? (size_t)1 << 30 : (size_t)n;
		s->ok = EVP_DigestUpdate(s->md, p, k);
		p += k;
		n -= k;
	}
}

static bool sha_end(sha_ctx *s, uint8_t out[32])
{
	unsigned int len = 32;
	bool ok = s->ok && EVP_DigestFinal_ex(s->md, out, &len);
	EVP_MD_CTX_free(s->md);
	s->md = NULL;
	return ok;
}

static nbg_code refuse(nbg_error *err, const nbg_ledger_range *r)
{
	return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED, r->offset, r->owner,
		     "the bytes of %s [%llu, %llu) (%s) are not the bytes the ledger "
		     "fingerprinted: re-emitting them would serialize a change, which nbgkit "
		     "refuses", r->owner, (unsigned long long)r->offset,
		     (unsigned long long)(r->offset + r->size), class_names[r->cls]);
}

nbg_code nbg_reemit_check(const nbg_ledger *l, const uint8_t *data, size_t size, nbg_error *err)
{
	sha_ctx whole;
	uint8_t d[32];

	if (err)
		memset(err, 0, sizeof(*err));
	if ((uint64_t)size != l->file_size)
		return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED,
			     (uint64_t)size < l->file_size ? (uint64_t)size : l->file_size,
			     "file_size",
			     "the bytes to emit are %llu long; the ledger fingerprinted %llu: "
			     "re-emission refused", (unsigned long long)size,
			     (unsigned long long)l->file_size);
	sha_begin(&whole);
	for (size_t i = 0; i < l->nranges; i++) {
		const nbg_ledger_range *r = &l->ranges[i];
		sha_ctx one;
		sha_begin(&one);
		sha_update(&one, data + r->offset, r->size);
		sha_update(&whole, data + r->offset, r->size);
		if (!sha_end(&one, d)) {
			sha_end(&whole, d);
			return nbg_error_set(err, NBG_LEDGER_E_RESOURCE, r->offset, "sha256",
				     "SHA-256 could not be computed");
		}
		if (memcmp(d, r->sha256, 32)) {
			sha_end(&whole, d);
			return refuse(err, r);
		}
	}
	if (!sha_end(&whole, d))
		return nbg_error_set(err, NBG_LEDGER_E_RESOURCE, 0, "sha256",
			     "SHA-256 could not be computed");
	if (memcmp(d, l->file_sha256, 32))
		return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED, 0, "sha256",
			     "every range matches but the whole output's SHA-256 is not the "
			     "source's: the ledger is inconsistent; re-emission refused");
	return NBG_OK;
}

static bool write_all(int fd, const uint8_t *p, uint64_t n)
{
	while (n) {
		size_t k = n > ((size_t)1 << 30) ? (size_t)1 << 30 : (size_t)n;
		ssize_t w = write(fd, p, k);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		if (w == 0) {
			errno = ENOSPC;
			return false;
		}
		p += w;
		n -= (uint64_t)w;
	}
	return true;
}

nbg_code nbg_reemit_write(const nbg_ledger *l, const uint8_t *data, size_t size, int fd,
			  nbg_error *err)
{
	nbg_code rc = nbg_reemit_check(l, data, size, err);
	sha_ctx out;
	uint8_t d[32];

	if (rc != NBG_OK)
		return rc;
	/* Range by range, from the ledger; what goes out is hashed again as it
	 * goes, so a buffer changing under us (a mapped file being rewritten)
	 * is caught too. */
	sha_begin(&out);
	for (size_t i = 0; i < l->nranges; i++) {
		const nbg_ledger_range *r = &l->ranges[i];
		sha_update(&out, data + r->offset, r->size);
		if (!write_all(fd, data + r->offset, r->size)) {
			int e = errno;
			sha_end(&out, d);
			return nbg_error_set(err, NBG_LEDGER_E_IO, r->offset, r->owner,
				     "writing %s [%llu, %llu) failed: %s", r->owner,
				     (unsigned long long)r->offset,
				     (unsigned long long)(r->offset + r->size), strerror(e));
		}
	}
	if (!sha_end(&out, d))
		return nbg_error_set(err, NBG_LEDGER_E_RESOURCE, 0, "sha256", "SHA-256 could not be computed");
	if (memcmp(d, l->file_sha256, 32))
		return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED, 0, "sha256",
			     "the bytes written do not hash to the source's SHA-256 (the input "
			     "changed while it was being written): output refused");
	return NBG_OK;
}

/* ------------------------------------------------------------ atomic files */

/* Mode for a new output: an existing target's, else 0666 less the umask,
 * read without changing it (umask() would race other threads). */
static mode_t output_mode(const char *path)
{
	struct stat st;
	mode_t um = 022;
	FILE *f;
	char line[128];

	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		return st.st_mode & 07777;
	f = fopen("/proc/self/status", "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "Umask:", 6)) {
				um = (mode_t)strtoul(line + 6, NULL, 8);
				break;
			}
		fclose(f);
	}
	return 0666 & ~um;
}

typedef nbg_code (*emit_fn)(int fd, void *ctx, nbg_error *err);
/* Re-reads the temporary file and checks it (NULL: no check). */
typedef nbg_code (*verify_fn)(int fd, void *ctx, nbg_error *err);

static nbg_code atomic_write(const char *path, emit_fn emit, verify_fn verify, void *ctx,
			     nbg_error *err)
{
	size_t n = strlen(path);
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
	char *tmp = malloc(n + 16), *dir = NULL;
	nbg_code rc;
	int fd, e;

	if (!tmp)
		return nbg_error_set(err, NBG_LEDGER_E_RESOURCE, 0, "memory", "out of memory");
	/* Hidden name next to the target: same file system, so rename is atomic. */
	memcpy(tmp, path, dlen);
	snprintf(tmp + dlen, n + 16 - dlen, ".%s.XXXXXX", path + dlen);
	fd = mkstemp(tmp);
	if (fd < 0) {
		e = errno;
		rc = nbg_error_set(err, NBG_LEDGER_E_IO, 0, "output",
			   "cannot create a temporary file next to %s: %s", path, strerror(e));
		free(tmp);
		return rc;
	}
	rc = emit(fd, ctx, err);
	if (rc == NBG_OK && fsync(fd) != 0) {
		e = errno;
		rc = nbg_error_set(err, NBG_LEDGER_E_IO, 0, "output", "cannot sync %s: %s", tmp,
			   strerror(e));
	}
	if (rc == NBG_OK && verify)
		rc = verify(fd, ctx, err);
	if (rc == NBG_OK && fchmod(fd, output_mode(path)) != 0) {
		e = errno;
		rc = nbg_error_set(err, NBG_LEDGER_E_IO, 0, "output", "cannot set the mode of %s: %s",
			   tmp, strerror(e));
	}
	if (close(fd) != 0 && rc == NBG_OK) {
		e = errno;
		rc = nbg_error_set(err, NBG_LEDGER_E_IO, 0, "output", "cannot close %s: %s", tmp,
			   strerror(e));
	}
	if (rc == NBG_OK && rename(tmp, path) != 0) {
		e = errno;
		rc = nbg_error_set(err, NBG_LEDGER_E_IO, 0, "output", "cannot rename %s to %s: %s", tmp,
			   path, strerror(e));
	}
	if (rc != NBG_OK) {
		unlink(tmp);
		free(tmp);
		return rc;
	}
	/* The rename is durable once the directory is synced (best effort). */
	dir = malloc(dlen + 2);
	if (dir) {
		if (dlen)
			memcpy(dir, path, dlen);
		else
			dir[dlen++] = '.';
		dir[dlen] = '\0';
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			(void)fsync(dfd);
			close(dfd);
		}
		free(dir);
	}
	free(tmp);
	return NBG_OK;
}

typedef struct reemit_ctx {
	const nbg_ledger *l;
	const uint8_t *data;
	size_t size;
} reemit_ctx;

static nbg_code reemit_emit(int fd, void *ctx, nbg_error *err)
{
	reemit_ctx *r = ctx;
	return nbg_reemit_write(r->l, r->data, r->size, fd, err);
}

/* What reached the file system, read back, must hash to the source's SHA-256. */
static nbg_code reemit_verify(int fd, void *ctx, nbg_error *err)
{
	reemit_ctx *r = ctx;
	uint8_t buf[1 << 16], d[32];
	uint64_t total = 0;
	sha_ctx s;
	ssize_t k;

	if (lseek(fd, 0, SEEK_SET) != 0)
		return nbg_error_set(err, NBG_LEDGER_E_IO, 0, "output", "cannot re-read the output: %s",
			     strerror(errno));
	sha_begin(&s);
	while ((k = read(fd, buf, sizeof(buf))) != 0) {
		if (k < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			sha_end(&s, d);
			return nbg_error_set(err, NBG_LEDGER_E_IO, total, "output",
				     "cannot re-read the output: %s", strerror(e));
		}
		sha_update(&s, buf, (uint64_t)k);
		total += (uint64_t)k;
	}
	if (!sha_end(&s, d))
		return nbg_error_set(err, NBG_LEDGER_E_RESOURCE, 0, "sha256", "SHA-256 could not be computed");
	if (total != r->l->file_size || memcmp(d, r->l->file_sha256, 32))
		return nbg_error_set(err, NBG_LEDGER_E_IO, total, "output",
			     "the written file (%llu bytes) does not read back as the source "
			     "(%llu bytes, same SHA-256): output discarded",
			     (unsigned long long)total, (unsigned long long)r->l->file_size);
	return NBG_OK;
}

nbg_code nbg_reemit_file(const nbg_ledger *l, const uint8_t *data, size_t size, const char *path,
			 nbg_error *err)
{
	reemit_ctx ctx = { l, data, size };
	nbg_code rc;

	/* Refuse before anything, not even a temporary file, exists. */
	if ((rc = nbg_reemit_check(l, data, size, err)) != NBG_OK)
		return rc;
	return atomic_write(path, reemit_emit, reemit_verify, &ctx, err);
}

typedef struct buf_ctx {
	const char *p;
	size_t n;
} buf_ctx;

static nbg_code buf_emit(int fd, void *ctx, nbg_error *err)
{
	buf_ctx *b = ctx;
	if (!write_all(fd, (const uint8_t *)b->p, b->n))
		return nbg_error_set(err, NBG_LEDGER_E_IO, 0, "output", "writing the picture failed: %s",
			     strerror(errno));
	return NBG_OK;
}

nbg_code nbg_ledger_svg_file(const nbg_ledger *l, const char *title, const char *path,
			     nbg_error *err)
{
	char *svg = nbg_ledger_svg(l, title);
	buf_ctx b;
	nbg_code rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!svg)
		return nbg_error_set(err, NBG_LEDGER_E_RESOURCE, 0, "memory",
			     "out of memory drawing the map");
	b.p = svg;
	b.n = strlen(svg);
	rc = atomic_write(path, buf_emit, NULL, &b, err);
	free(svg);
	return rc;
}
