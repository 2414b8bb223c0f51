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

#include "common/hash.h"
#include "common/grow.h"
#include "common/internal.h"
#include "nbg/ledger.h"

#include "analysis/ledger/ledger_internal.h"
#include "format/regions.h"

const char *const nbg_ledger_class_names[NBG_LEDGER_CLASS_COUNT] = {
	"decoded-record", "alignment", "padding", "preserved-opaque", "connection-tail",
	"opaque-fixed-extension", "decoded-coefficients",
};

const char *const nbg_ledger_view_names[NBG_VIEW_KIND_COUNT] = {
	"section-covered-view", "partly-covered-view", "connection-tail-view",
	"dynaio-entry-view", "nested-entry-view", "empty-section",
};

const char *nbg_ledger_class_name(nbg_ledger_class c)
{
	return (unsigned)c < NBG_LEDGER_CLASS_COUNT ? nbg_ledger_class_names[c] : NULL;
}

const char *nbg_ledger_view_kind_name(nbg_ledger_view_kind k)
{
	return (unsigned)k < NBG_VIEW_KIND_COUNT ? nbg_ledger_view_names[k] : NULL;
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
	char section_owner[NBG_LEDGER_NAME_MAX]; /* a part of a section: the section's owner
						  * name, for the gap and alignment before it */
} claim;

typedef struct builder {
	const nbg_model *m;
	nbg_ledger *l;
	claim *c;
	size_t n, cap;
	nbg_error *err;
	const uint8_t *hash; /* the bytes ranges and views are hashed from; NULL: none */
	const nbg_ledger_part *parts; /* parts of section payloads proved later, sorted */
	size_t nparts;
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
	claim *grown = nbg_grow(b->c, &b->cap, b->n + 1, sizeof(*grown), 64);
	if (!grown)
		return false;
	b->c = grown;
	c = &b->c[b->n];
	c->offset = off;
	c->size = size;
	c->cls = cls;
	c->section = section;
	c->section_type = type;
	c->align = align;
	c->order = b->n;
	c->section_owner[0] = '\0';
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

	nbg_ledger_range *grown = nbg_grow(l->ranges, &l->rcap, l->nranges + 1, sizeof(*grown), 64);
	if (!grown)
		return false;
	l->ranges = grown;
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

	nbg_ledger_view *grown = nbg_grow(l->views, &l->vcap, l->nviews + 1, sizeof(*grown), 16);
	if (!grown)
		return false;
	l->views = grown;
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

static void section_label(uint32_t family, const nbg_section *s, char *out, size_t n)
{
	const char *name = nbg_section_name(family, s->type);
	if (name)
		snprintf(out, n, "section %u %s", s->type, name);
	else
		snprintf(out, n, "section %u", s->type);
}

/* A section's payload: one claim, or, where parts of it were proved later,
 * the parts with their classes and owners and the rest as the section. */
static bool claim_section(builder *b, size_t i, nbg_ledger_class cls, const char *label)
{
	const nbg_section *s = &b->m->sections[i];
	uint32_t align = b->m->family == 2 ? s->alignment : 0;
	uint64_t cur = s->offset, end = s->offset + s->size;

	for (size_t k = 0; k < b->nparts; k++) {
		const nbg_ledger_part *p = &b->parts[k];
		if (p->offset < cur || p->offset >= end || p->size > end - p->offset)
			continue;
		if (p->offset > cur) {
			if (!add_claim(b, cur, p->offset - cur, cls, (int32_t)i, s->type, align, "%s",
				       label))
				return false;
			snprintf(b->c[b->n - 1].section_owner, NBG_LEDGER_NAME_MAX, "%s", label);
			align = 0;
		}
		if (!add_claim(b, p->offset, p->size, p->cls, (int32_t)i, s->type, align, "%s",
			       p->owner))
			return false;
		snprintf(b->c[b->n - 1].section_owner, NBG_LEDGER_NAME_MAX, "%s", label);
		align = 0;
		cur = p->offset + p->size;
	}
	if (cur < end && !add_claim(b, cur, end - cur, cls, (int32_t)i, s->type, align, "%s", label))
		return false;
	if (cur > s->offset && cur < end)
		snprintf(b->c[b->n - 1].section_owner, NBG_LEDGER_NAME_MAX, "%s", label);
	return true;
}

static bool claim_sections(builder *b)
{
	const nbg_model *m = b->m;
	char label[NBG_LEDGER_NAME_MAX];

	for (size_t i = 0; i < m->section_count; i++) {
		const nbg_section *s = &m->sections[i];
		nbg_ledger_class cls = s->cls == NBG_CLASS_DECODED ? NBG_LEDGER_DECODED_RECORD
								  : NBG_LEDGER_PRESERVED_OPAQUE;
		section_label(m->family, s, label, sizeof(label));
		if (s->size == 0) {
			if (!push_view(b->l, b->hash, NBG_VIEW_EMPTY_SECTION, s->offset, 0, 0,
				       (int32_t)i, label))
				return false;
			continue;
		}
		if (!claim_section(b, i, cls, label))
			return false;
	}
	return true;
}

/* The fixed regions (format/regions.c), the records inside the directory or
 * entry table one by one, then the sections. */
static bool claim_fixed(builder *b)
{
	const nbg_model *m = b->m;
	nbg_region fixed[NBG_FIXED_REGIONS_MAX];
	size_t nf = nbg_fixed_regions(m, fixed);

	for (size_t f = 0; f < nf; f++) {
		const nbg_region *r = &fixed[f];
		int records = !strcmp(r->owner, "directory") || !strcmp(r->owner, "entry table");
		if (records)
			continue; /* claimed record by record below */
		if (!add_claim(b, r->offset, r->size,
			       r->opaque ? NBG_LEDGER_OPAQUE_FIXED_EXTENSION : NBG_LEDGER_DECODED_RECORD,
			       -1, 0, 0, "%s", r->owner))
			return false;
	}
	for (size_t i = 0; i < m->section_count; i++)
		if (!add_claim(b, m->sections[i].record_offset,
			       m->family == 2 ? NBG_V2_SECTION_HEADER_SIZE : 8,
			       NBG_LEDGER_DECODED_RECORD, (int32_t)i, m->sections[i].type, 0,
			       m->family == 2 ? "directory entry %zu" : "table entry %zu", i))
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
	const char *owner = next && next->section_owner[0] ? next->section_owner
						      : next ? next->owner : "";

	if (next && next->align > 1) {
		need = (next->align - lo % next->align) % next->align;
		if (need > hi - lo)
			need = hi - lo; /* cannot happen for an aligned section; stay tiled */
	}
	if (hi - lo > need) {
		if (next)
			snprintf(name, sizeof(name), "gap before %.50s", owner);
		else
			snprintf(name, sizeof(name), "end of file");
		if (!push_range(b->l, b->hash, lo, hi - lo - need, NBG_LEDGER_PADDING, -1, 0,
				name))
			return false;
	}
	if (need) {
		snprintf(name, sizeof(name), "alignment of %.50s", owner);
		if (!push_range(b->l, b->hash, hi - need, need, NBG_LEDGER_ALIGNMENT,
				next->section, next->section_type, name))
			return false;
	}
	return true;
}

/* Bytes of [t, end) that claims own (claims sorted). */
#define OOM(b) nbg_error_set((b)->err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory building the ledger")

static nbg_code build(builder *b)
{
	const nbg_model *m = b->m;
	nbg_ledger *l = b->l;
	uint64_t size = m->file_size, cur = 0;
	char name[NBG_LEDGER_NAME_MAX];

	if (!claim_fixed(b))
		return OOM(b);
	for (size_t i = 0; i < b->n; i++)
		if (!range_ok(b->c[i].offset, b->c[i].size, size))
			return nbg_error_set(b->err, NBG_E_LEDGER_INVARIANT, b->c[i].offset, b->c[i].owner,
				     "%s [%llu, +%llu) lies outside the %llu-byte file the model "
				     "describes: the model and its buffer disagree", b->c[i].owner,
				     (unsigned long long)b->c[i].offset,
				     (unsigned long long)b->c[i].size, (unsigned long long)size);
	qsort(b->c, b->n, sizeof(*b->c), cmp_claim);

	/* The final 512 bytes: always a view; an owner only when nothing else is. */
	if (size >= NBG_TAIL_SIZE) {
		/* Who else owns the final 512 bytes is the parser's fact (the tail
		 * view); a tail claim that overlaps a claim breaks the tiling. */
		uint64_t t = size - NBG_TAIL_SIZE, covered = m->tail.covered_bytes;
		nbg_ledger_view_kind k = covered == 0		    ? NBG_VIEW_CONNECTION_TAIL
					 : covered == NBG_TAIL_SIZE ? NBG_VIEW_SECTION_COVERED
								    : NBG_VIEW_PARTLY_COVERED;
		if (!push_view(l, b->hash, k, t, NBG_TAIL_SIZE, covered, -1, "connection tail"))
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
				return nbg_error_set(b->err, NBG_E_LEDGER_INVARIANT, c->offset, c->owner,
					     "%s [%llu, %llu) overlaps bytes already owned up to "
					     "%llu, which the v2 parser rules out", c->owner,
					     (unsigned long long)c->offset, (unsigned long long)end,
					     (unsigned long long)cur);
			/* v1 entries may nest or overlap: the structure that starts
			 * first keeps the shared bytes and this one becomes a view.
			 * What it reaches beyond them it owns, up to where the next
			 * structure starts (that one is no less a structure). */
			if (!push_view(l, b->hash, NBG_VIEW_NESTED_ENTRY, c->offset, c->size, 0,
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
				if (!push_range(l, b->hash, cur, stop - cur, c->cls, c->section,
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
		if (!push_range(l, whole ? NULL : b->hash, c->offset, c->size, c->cls, c->section,
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
				return nbg_error_set(b->err, NBG_E_LEDGER_INVARIANT, off, "dynaio",
					     "dynaio entry %zu lies outside the file", i);
			snprintf(name, sizeof(name), "dynaio entry %zu", i);
			if (!push_view(l, b->hash, NBG_VIEW_DYNAIO_ENTRY, off, e->size, 0, si,
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

/* The CRC-32 of every range (the re-emission ledger's fingerprints): the
 * parser's for a range that is a whole section payload, computed for the
 * rest (headers, records, gaps: small). */
static nbg_code range_crcs(builder *b)
{
	const nbg_model *m = b->m;
	nbg_ledger *l = b->l;

	l->crc = malloc((l->nranges ? l->nranges : 1) * sizeof(*l->crc));
	if (!l->crc)
		return OOM(b);
	for (size_t i = 0; i < l->nranges; i++) {
		const nbg_ledger_range *r = &l->ranges[i];
		const nbg_section *s = r->section >= 0 ? &m->sections[r->section] : NULL;
		l->crc[i] = s && s->offset == r->offset && s->size == r->size
				    ? s->crc32
				    : nbg_crc32(0, m->data + r->offset, r->size);
	}
	return NBG_OK;
}

/* crc_mode 0: nbg_ledger_build; 1: nbg_ledger_build_crc. */
static nbg_code ledger_build(const nbg_model *m, int crc_mode, const nbg_ledger_part *parts,
			     size_t nparts, nbg_ledger **out, nbg_error *err)
{
	builder b = { 0 };
	nbg_code rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!out || !m || (!parts && nparts))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model",
				     "no model, part list or result pointer was given");
	*out = NULL;
	if (!m->data || (m->family != 1 && m->family != 2))
		return nbg_error_set(err, NBG_E_LEDGER_INVARIANT, 0, "model",
			     "not a model returned by nbg_parse (or its buffer is gone)");
	if (m->sha256_skipped && !crc_mode)
		return nbg_error_set(err, NBG_E_LEDGER_INVARIANT, 0, "model",
			     "the model was parsed without its SHA-256 fingerprints "
			     "(NBG_PARSE_NO_FILE_SHA256 / NBG_PARSE_NO_SECTION_SHA256): parse it "
			     "again without them to build a ledger");
	b.m = m;
	b.err = err;
	b.hash = crc_mode ? NULL : m->data;
	b.parts = parts;
	b.nparts = nparts;
	b.l = calloc(1, sizeof(*b.l));
	if (!b.l)
		return OOM(&b);
	b.l->family = m->family;
	b.l->version = m->version;
	b.l->file_size = m->file_size;
	if (!crc_mode)
		memcpy(b.l->file_sha256, m->file_sha256, 32);
	rc = build(&b);
	if (rc == NBG_OK && crc_mode)
		rc = range_crcs(&b);
	free(b.c);
	if (rc != NBG_OK) {
		nbg_ledger_free(b.l);
		return rc;
	}
	*out = b.l;
	return NBG_OK;
}

nbg_code nbg_ledger_build(const nbg_model *m, nbg_ledger **out, nbg_error *err)
{
	return ledger_build(m, 0, NULL, 0, out, err);
}

nbg_code nbg_ledger_build_crc(const nbg_model *m, nbg_ledger **out, nbg_error *err)
{
	return ledger_build(m, 1, NULL, 0, out, err);
}

nbg_code nbg_ledger_build_parts(const nbg_model *m, const nbg_ledger_part *parts, size_t n,
				nbg_ledger **out, nbg_error *err)
{
	return ledger_build(m, 0, parts, n, out, err);
}

void nbg_ledger_free(nbg_ledger *l)
{
	if (!l)
		return;
	free(l->ranges);
	free(l->views);
	free(l->crc);
	free(l);
}

nbg_code nbg_ledger_check_tiling(const nbg_ledger_range *r, size_t count, uint64_t file_size,
				 nbg_error *err)
{
	uint64_t cur = 0;

	if (!r && count)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "ranges",
				     "no ranges were given for a count of %zu", count);
	for (size_t i = 0; i < count; i++) {
		if (r[i].size == 0)
			return nbg_error_set(err, NBG_E_LEDGER_INVARIANT, r[i].offset, r[i].owner,
				     "ledger range %zu (%s) is empty", i, r[i].owner);
		if (r[i].offset > cur)
			return nbg_error_set(err, NBG_E_LEDGER_INVARIANT, cur, r[i].owner,
				     "no range owns bytes [%llu, %llu): the ledger has a gap "
				     "before %s", (unsigned long long)cur,
				     (unsigned long long)r[i].offset, r[i].owner);
		if (r[i].offset < cur)
			return nbg_error_set(err, NBG_E_LEDGER_INVARIANT, r[i].offset, r[i].owner,
				     "%s starts at %llu, inside bytes already owned up to %llu: "
				     "two ranges overlap", r[i].owner,
				     (unsigned long long)r[i].offset, (unsigned long long)cur);
		if (add_overflow_u64(cur, r[i].size, &cur) || cur > file_size)
			return nbg_error_set(err, NBG_E_LEDGER_INVARIANT, r[i].offset, r[i].owner,
				     "%s reaches past the end of the %llu-byte file", r[i].owner,
				     (unsigned long long)file_size);
	}
	if (cur != file_size)
		return nbg_error_set(err, NBG_E_LEDGER_INVARIANT, cur, "end",
			     "the ranges own %llu bytes of a %llu-byte file",
			     (unsigned long long)cur, (unsigned long long)file_size);
	return NBG_OK;
}

/* ------------------------------------------------------------ accessors */

uint32_t nbg_ledger_family(const nbg_ledger *l) { return l ? l->family : 0; }
uint32_t nbg_ledger_version(const nbg_ledger *l) { return l ? l->version : 0; }
uint64_t nbg_ledger_file_size(const nbg_ledger *l) { return l ? l->file_size : 0; }
const uint8_t *nbg_ledger_file_sha256(const nbg_ledger *l) { return l ? l->file_sha256 : NULL; }
size_t nbg_ledger_range_count(const nbg_ledger *l) { return l ? l->nranges : 0; }
size_t nbg_ledger_view_count(const nbg_ledger *l) { return l ? l->nviews : 0; }

const nbg_ledger_range *nbg_ledger_range_at(const nbg_ledger *l, size_t i)
{
	return l && i < l->nranges ? &l->ranges[i] : NULL;
}

const nbg_ledger_view *nbg_ledger_view_at(const nbg_ledger *l, size_t i)
{
	return l && i < l->nviews ? &l->views[i] : NULL;
}

const nbg_ledger_range *nbg_ledger_owner_of(const nbg_ledger *l, uint64_t offset)
{
	if (!l)
		return NULL;
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
	return l && (unsigned)c < NBG_LEDGER_CLASS_COUNT ? l->class_bytes[c] : 0;
}

size_t nbg_ledger_class_ranges(const nbg_ledger *l, nbg_ledger_class c)
{
	return l && (unsigned)c < NBG_LEDGER_CLASS_COUNT ? l->class_ranges[c] : 0;
}

