/*
 * diff.c - controlled differentials between two NBG files (diff.h): decoded
 * fields compared by parser key, then the byte-ownership ledgers of both
 * files matched owner by owner, every changed byte run located inside its
 * owner and listed in file order, then the reconstruction (reconstruct.c).
 * The reports are written by lib/report/json_diff.c and text_diff.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/diff/diff_internal.h"
#include "common/grow.h"
#include "common/hash.h"

typedef struct dctx {
	const nbg_model *a, *b;
	nbg_diff *d;
	size_t cap, owner_cap;
	int oom;
} dctx;

const char *nbg_diff_kind_name(nbg_diff_kind k)
{
	switch (k) {
	case NBG_DIFF_FIELD: return "field";
	case NBG_DIFF_ADDED: return "added";
	case NBG_DIFF_REMOVED: return "removed";
	case NBG_DIFF_BYTES: return "bytes";
	}
	return "unknown";
}

static nbg_diff_item *add_item(dctx *c, nbg_diff_kind kind, const char *path)
{
	nbg_diff *d = c->d;

	if (kind == NBG_DIFF_FIELD)
		d->sum.field_count++;
	if (d->count == NBG_DIFF_MAX_ITEMS) {
		d->sum.truncated = 1;
		return NULL;
	}
	nbg_diff_item *grown = nbg_grow(d->items, &c->cap, d->count + 1, sizeof(*grown), 32);
	if (!grown) {
		c->oom = 1;
		return NULL;
	}
	d->items = grown;
	nbg_diff_item *it = &d->items[d->count++];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	snprintf(it->path, sizeof(it->path), "%s", path);
	return it;
}

static void field_u64(dctx *c, const char *path, uint64_t va, uint64_t vb, int hex)
{
	if (va == vb)
		return;
	nbg_diff_item *it = add_item(c, NBG_DIFF_FIELD, path);
	if (!it)
		return;
	snprintf(it->a, sizeof(it->a), hex ? "0x%08" PRIx64 : "%" PRIu64, va);
	snprintf(it->b, sizeof(it->b), hex ? "0x%08" PRIx64 : "%" PRIu64, vb);
}

/* A difference decided by the caller on the raw values (display strings may
 * be truncated or escaped, so they are never what is compared). */
static void field_text(dctx *c, const char *path, int differ, const char *va, const char *vb)
{
	if (!differ)
		return;
	nbg_diff_item *it = add_item(c, NBG_DIFF_FIELD, path);
	if (!it)
		return;
	snprintf(it->a, sizeof(it->a), "%s", va);
	snprintf(it->b, sizeof(it->b), "%s", vb);
}

/* Printable copy of file text, as the reports show it; "..." marks a copy
 * cut short to fit (display only: comparisons use the raw text). */
static void printable(char *out, size_t n, const char *s)
{
	size_t o = 0;
	for (; *s && o + 8 < n; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch >= 0x20 && ch < 0x7f)
			out[o++] = (char)ch;
		else
			o += (size_t)snprintf(out + o, n - o, "\\x%02x", ch);
	}
	if (*s)
		o += (size_t)snprintf(out + o, n - o, "...");
	out[o] = '\0';
}

/* Compares the fields first..last of one structure, read through the field
 * map at base_a / base_b, under "prefix.key". */
static void fields_range(dctx *c, const char *prefix, const uint8_t *base_a,
			 const uint8_t *base_b, enum nbg_fid first, enum nbg_fid last)
{
	for (int id = (int)first; id <= (int)last; id++) {
		const nbg_field *f = nbg_fid_desc((enum nbg_fid)id);
		const uint8_t *pa = base_a + f->offset, *pb = base_b + f->offset;
		size_t pl = strlen(prefix);
		char path[128];

		/* a key that already names its structure ("network_info.name") is
		 * not prefixed twice */
		if (!strncmp(f->key, prefix, pl) && f->key[pl] == '.')
			snprintf(path, sizeof(path), "%s", f->key);
		else
			snprintf(path, sizeof(path), "%s.%s", prefix, f->key);
		switch (f->kind) {
		case NBG_FIELD_HI:
			break;
		case NBG_FIELD_LO:
			field_u64(c, path, (uint64_t)le32(pa) | (uint64_t)le32(pa + 4) << 32,
				  (uint64_t)le32(pb) | (uint64_t)le32(pb + 4) << 32, 0);
			break;
		case NBG_FIELD_ASCII: {
			char sa[65] = { 0 }, sb[65] = { 0 }, pa_s[96], pb_s[96];
			uint32_t n = f->width < 64 ? f->width : 64;
			memcpy(sa, pa, n);
			memcpy(sb, pb, n);
			printable(pa_s, sizeof(pa_s), sa);
			printable(pb_s, sizeof(pb_s), sb);
			field_text(c, path, strcmp(sa, sb) != 0, pa_s, pb_s);
			break;
		}
		case NBG_FIELD_U32_ARRAY:
		case NBG_FIELD_OPAQUE:
			if (memcmp(pa, pb, f->width)) {
				nbg_diff_item *it = add_item(c, NBG_DIFF_FIELD, path);
				if (it) {
					uint8_t ha[32], hb[32];
					char xa[65], xb[65];
					nbg_sha256(pa, f->width, ha);
					nbg_sha256(pb, f->width, hb);
					nbg_hex32(ha, xa);
					nbg_hex32(hb, xb);
					snprintf(it->a, sizeof(it->a), "sha256 %.16s", xa);
					snprintf(it->b, sizeof(it->b), "sha256 %.16s", xb);
				}
			}
			break;
		default:
			field_u64(c, path, nbg_fid_u32(base_a, (enum nbg_fid)id),
				  nbg_fid_u32(base_b, (enum nbg_fid)id),
				  !strcmp(f->key, "crc32") || !strcmp(f->key, "target") ||
					  !strcmp(f->key, "version"));
		}
	}
}

static void dims_text(const nbg_io *io, char *out, size_t n)
{
	size_t o = (size_t)snprintf(out, n, "[");
	for (uint32_t d = 0; d < io->dim_count && o < n; d++)
		o += (size_t)snprintf(out + o, n - o, "%s%u", d ? "," : "", nbg_io_dim_outer(io, d));
	if (o < n)
		snprintf(out + o, n - o, "]");
}

static const char *fmt_name(uint32_t f, char *buf, size_t n)
{
	const char *s = nbg_data_format_name(f);
	if (s)
		return s;
	snprintf(buf, n, "format(%u)", f);
	return buf;
}

static void io_records(dctx *c, const char *what, const nbg_io *ia, size_t na,
		       const nbg_io *ib, size_t nb)
{
	size_t n = na > nb ? na : nb;
	for (size_t i = 0; i < n; i++) {
		char path[128], va[72], vb[72], fa[24], fb[24];
		if (i >= na || i >= nb) {
			snprintf(path, sizeof(path), "%s %zu", what, i);
			const nbg_io *io = i < na ? &ia[i] : &ib[i];
			nbg_diff_item *it = add_item(c, i < na ? NBG_DIFF_REMOVED : NBG_DIFF_ADDED,
						     path);
			if (i < na)
				c->d->sum.records_removed++;
			else
				c->d->sum.records_added++;
			if (it) {
				dims_text(io, va, sizeof(va));
				snprintf(i < na ? it->a : it->b, sizeof(it->a), "%s %s", va,
					 fmt_name(io->data_format, fa, sizeof(fa)));
				if (i < na)
					it->offset_a = io->offset;
				else
					it->offset_b = io->offset;
				it->length = io->record_size;
			}
			continue;
		}
		const nbg_io *x = &ia[i], *y = &ib[i];
		snprintf(path, sizeof(path), "%s %zu.dimensions", what, i);
		dims_text(x, va, sizeof(va));
		dims_text(y, vb, sizeof(vb));
		field_text(c, path,
			   x->dim_count != y->dim_count ||
				   memcmp(x->dims, y->dims, x->dim_count * sizeof(x->dims[0])),
			   va, vb);
		snprintf(path, sizeof(path), "%s %zu.data_format", what, i);
		field_text(c, path, x->data_format != y->data_format,
			   fmt_name(x->data_format, fa, sizeof(fa)),
			   fmt_name(y->data_format, fb, sizeof(fb)));
		snprintf(path, sizeof(path), "%s %zu.data_type", what, i);
		field_u64(c, path, x->data_type, y->data_type, 0);
		snprintf(path, sizeof(path), "%s %zu.quantization.format", what, i);
		field_u64(c, path, x->quant_format, y->quant_format, 0);
		for (unsigned w = 0; w < x->quant_raw_count && w < y->quant_raw_count; w++) {
			snprintf(path, sizeof(path), "%s %zu.quantization.raw_words[%u]", what, i, w);
			field_u64(c, path, x->quant_raw[w], y->quant_raw[w], 1);
		}
		snprintf(path, sizeof(path), "%s %zu.name", what, i);
		printable(va, sizeof(va), x->name);
		printable(vb, sizeof(vb), y->name);
		field_text(c, path, strcmp(x->name, y->name) != 0, va, vb);
	}
}

static void section_fields(dctx *c)
{
	const nbg_model *a = c->a, *b = c->b;
	for (size_t i = 0; i < a->section_count; i++) {
		const nbg_section *x = &a->sections[i];
		const nbg_section *y = nbg_model_section(b, x->type);
		const char *n = nbg_section_type_name(x->type);
		char p[96];
		if (!y)
			continue; /* reported by the owner comparison */
#define SEC(key, field, hex)                                                       \
	do {                                                                        \
		snprintf(p, sizeof(p), "section %u %s.%s", x->type, n ? n : "?", key); \
		field_u64(c, p, x->field, y->field, hex);                           \
	} while (0)
		SEC("offset", offset, 0);
		SEC("size", size, 0);
		SEC("alignment", alignment, 0);
		SEC("entry_size", entry_size, 0);
		SEC("load_address", load_address, 1);
		SEC("crc32", crc32, 1);
#undef SEC
	}
}

static void model_fields(dctx *c)
{
	const nbg_model *a = c->a, *b = c->b;

	field_u64(c, "family", a->family, b->family, 0);
	field_u64(c, "version", a->version, b->version, 1);
	field_u64(c, "target", a->target, b->target, 1);
	field_u64(c, "file_size", a->file_size, b->file_size, 0);
	if (a->family != b->family)
		return;
	if (a->family == 2) {
		fields_range(c, "header", a->data, b->data, F_HDR_VERSION, F_HDR_RESERVED3);
		fields_range(c, "sub_header", a->data + a->header.sub_header_offset,
			     b->data + b->header.sub_header_offset, F_SUB_SH_OFFSET, F_SUB_SH_COUNT);
		if (a->network_info.present && b->network_info.present)
			fields_range(c, "network_info", a->data + a->network_info.offset,
				     b->data + b->network_info.offset, F_NI_NAME,
				     F_NI_VSI_RESERVED);
		else
			field_u64(c, "network_info.present", (uint64_t)a->network_info.present,
				  (uint64_t)b->network_info.present, 0);
	} else {
		fields_range(c, "v1", a->data, b->data, F_V1_VERSION, F_V1_OUTPUT_COUNT);
		field_u64(c, "v1.entry_count", a->v1.entry_count, b->v1.entry_count, 0);
	}
	const nbg_memory *ma = &a->memory, *mb = &b->memory;
	field_u64(c, "memory_pool_bytes", ma->memory_pool_bytes, mb->memory_pool_bytes, 0);
	field_u64(c, "vip_sram_bytes", ma->vip_sram_bytes, mb->vip_sram_bytes, 0);
	field_u64(c, "axi_sram_bytes", ma->axi_sram_bytes, mb->axi_sram_bytes, 0);
	section_fields(c);
	io_records(c, "input", a->inputs, a->input_count, b->inputs, b->input_count);
	io_records(c, "output", a->outputs, a->output_count, b->outputs, b->output_count);

	for (size_t i = 0; i < a->checksum_record_count; i++) {
		const nbg_checksum_record *x = &a->checksum_records[i];
		for (size_t j = 0; j < b->checksum_record_count; j++) {
			const nbg_checksum_record *y = &b->checksum_records[j];
			if (x->section_type != y->section_type)
				continue;
			char p[96];
			const char *n = nbg_section_type_name(x->section_type);
			snprintf(p, sizeof(p), "section_checksums.%s", n ? n : "?");
			field_u64(c, p, x->stored, y->stored, 1);
		}
	}
	if (a->has_file_checksum && b->has_file_checksum)
		field_u64(c, "file_checksum.computed_crc32", a->file_checksum.computed,
			  b->file_checksum.computed, 1);
	if (a->dynaio.present && b->dynaio.present) {
		field_u64(c, "dynamic_io.entry_count", a->dynaio.entry_count,
			  b->dynaio.entry_count, 0);
		size_t n = a->dynaio.entry_count < b->dynaio.entry_count ? a->dynaio.entry_count
									  : b->dynaio.entry_count;
		for (size_t i = 0; i < n; i++) {
			char p[96];
			snprintf(p, sizeof(p), "dynaio entry %zu.offset", i);
			field_u64(c, p, a->dynaio.entries[i].offset, b->dynaio.entries[i].offset, 0);
			snprintf(p, sizeof(p), "dynaio entry %zu.size", i);
			field_u64(c, p, a->dynaio.entries[i].size, b->dynaio.entries[i].size, 0);
		}
	}
}

static int cmp_owner(const void *x, const void *y)
{
	const nbg_ledger_range *a = *(const nbg_ledger_range *const *)x;
	const nbg_ledger_range *b = *(const nbg_ledger_range *const *)y;
	int r = strcmp(a->owner, b->owner);
	if (r)
		return r;
	return a->offset < b->offset ? -1 : a->offset > b->offset;
}

static const nbg_ledger_range **sorted_ranges(const nbg_ledger *l)
{
	size_t n = nbg_ledger_range_count(l);
	const nbg_ledger_range **v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		v[i] = nbg_ledger_range_at(l, i);
	qsort(v, n, sizeof(*v), cmp_owner);
	return v;
}

/* An owner of A matched with the owner of B of the same name (either NULL
 * when only the other file has it), in the order the report lists them. */
typedef struct owner_pair {
	const nbg_ledger_range *x, *y;
} owner_pair;

/* File order: by A's offset, an owner only B has by B's offset; at equal
 * offsets A's owners first. */
static int cmp_pair(const void *p, const void *q)
{
	const owner_pair *u = p, *v = q;
	uint64_t ou = u->x ? u->x->offset : u->y->offset, ov = v->x ? v->x->offset : v->y->offset;
	if (ou != ov)
		return ou < ov ? -1 : 1;
	if (!u->x != !v->x)
		return u->x ? -1 : 1;
	return strcmp(u->x ? u->x->owner : u->y->owner, v->x ? v->x->owner : v->y->owner);
}

static nbg_diff_owner *add_owner(dctx *c, nbg_diff_kind kind, const nbg_ledger_range *x,
				 const nbg_ledger_range *y)
{
	nbg_diff *d = c->d;
	nbg_diff_owner *grown =
		nbg_grow(d->owners, &c->owner_cap, d->owner_count + 1, sizeof(*grown), 16);
	if (!grown) {
		c->oom = 1;
		return NULL;
	}
	d->owners = grown;
	nbg_diff_owner *o = &d->owners[d->owner_count++];
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	snprintf(o->owner, sizeof(o->owner), "%s", x ? x->owner : y->owner);
	if (x) {
		o->offset_a = x->offset;
		o->size_a = x->size;
	}
	if (y) {
		o->offset_b = y->offset;
		o->size_b = y->size;
	}
	return o;
}

static void owner_presence(dctx *c, const nbg_ledger_range *r, int added)
{
	nbg_diff_item *it = add_item(c, added ? NBG_DIFF_ADDED : NBG_DIFF_REMOVED, r->owner);
	if (added)
		c->d->sum.owners_added++;
	else
		c->d->sum.owners_removed++;
	add_owner(c, added ? NBG_DIFF_ADDED : NBG_DIFF_REMOVED, added ? NULL : r,
		  added ? r : NULL);
	if (!it)
		return;
	snprintf(added ? it->b : it->a, sizeof(it->a), "%" PRIu64 " bytes, %s", r->size,
		 nbg_ledger_class_name(r->cls));
	if (added)
		it->offset_b = r->offset;
	else
		it->offset_a = r->offset;
	it->length = r->size;
}

static void byte_run(dctx *c, const nbg_ledger_range *x, const nbg_ledger_range *y, uint64_t i,
		     uint64_t j)
{
	nbg_diff_item *it = add_item(c, NBG_DIFF_BYTES, x->owner);
	if (!it)
		return;
	it->offset_a = x->offset + i;
	it->offset_b = y->offset + i;
	it->length = j - i;
	nbg_diff_locate(c->a, x, x->offset + i, it->detail, sizeof(it->detail));
	nbg_diff_hex(it->a, sizeof(it->a), c->a->data + x->offset + i, j - i);
	nbg_diff_hex(it->b, sizeof(it->b), c->b->data + y->offset + i, j - i);
}

static void owner_bytes(dctx *c, const nbg_ledger_range *x, const nbg_ledger_range *y)
{
	const uint8_t *pa = c->a->data + x->offset, *pb = c->b->data + y->offset;
	nbg_diff_owner *o;

	if (!memcmp(x->sha256, y->sha256, 32) && x->size == y->size)
		return;
	c->d->sum.owners_changed++;
	o = add_owner(c, NBG_DIFF_BYTES, x, y);
	if (x->size != y->size) {
		nbg_diff_item *it = add_item(c, NBG_DIFF_BYTES, x->owner);
		if (it) {
			snprintf(it->a, sizeof(it->a), "%" PRIu64 " bytes", x->size);
			snprintf(it->b, sizeof(it->b), "%" PRIu64 " bytes", y->size);
			snprintf(it->detail, sizeof(it->detail), "size differs; contents not aligned");
			it->offset_a = x->offset;
			it->offset_b = y->offset;
			it->length = x->size > y->size ? x->size : y->size;
		}
		return;
	}
	size_t runs = 0;
	for (uint64_t i = 0; i < x->size;) {
		if (pa[i] == pb[i]) {
			i++;
			continue;
		}
		uint64_t j = i;
		while (j < x->size && pa[j] != pb[j])
			j++;
		c->d->sum.bytes_changed += j - i;
		if (o) {
			if (!o->runs)
				o->first_change = x->offset + i;
			o->bytes_changed += j - i;
			o->runs++;
		}
		if (runs++ < NBG_DIFF_MAX_RUNS_PER_OWNER)
			byte_run(c, x, y, i, j);
		else if (runs == NBG_DIFF_MAX_RUNS_PER_OWNER + 1)
			c->d->sum.truncated = 1;
		i = j;
	}
}

/* Matches the owners of both ledgers by name (the k-th of a name in A with
 * the k-th in B), then reports them in file order. */
static void compare_owners(dctx *c, const nbg_ledger *la, const nbg_ledger *lb)
{
	size_t na = nbg_ledger_range_count(la), nb = nbg_ledger_range_count(lb), i = 0, j = 0,
	       np = 0;
	const nbg_ledger_range **ra = sorted_ranges(la), **rb = sorted_ranges(lb);
	owner_pair *pairs = malloc((na + nb ? na + nb : 1) * sizeof(*pairs));

	if (!ra || !rb || !pairs) {
		c->oom = 1;
		goto out;
	}
	while (i < na || j < nb) {
		int r = i >= na ? 1 : j >= nb ? -1 : strcmp(ra[i]->owner, rb[j]->owner);
		pairs[np].x = r <= 0 ? ra[i++] : NULL;
		pairs[np].y = r >= 0 ? rb[j++] : NULL;
		np++;
	}
	qsort(pairs, np, sizeof(*pairs), cmp_pair);
	for (size_t k = 0; k < np && !c->oom; k++) {
		if (!pairs[k].y)
			owner_presence(c, pairs[k].x, 0);
		else if (!pairs[k].x)
			owner_presence(c, pairs[k].y, 1);
		else
			owner_bytes(c, pairs[k].x, pairs[k].y);
	}
out:
	free(pairs);
	free(ra);
	free(rb);
}

static nbg_code diff_all(dctx *c, nbg_error *err)
{
	nbg_ledger *la = NULL, *lb = NULL;
	nbg_code rc;

	model_fields(c);
	if (c->oom)
		return NBG_E_OUT_OF_MEMORY;
	if ((rc = nbg_ledger_build(c->a, &la, err)) != NBG_OK ||
	    (rc = nbg_ledger_build(c->b, &lb, err)) != NBG_OK)
		goto out;
	compare_owners(c, la, lb);
	if (c->oom) {
		rc = NBG_E_OUT_OF_MEMORY;
		goto out;
	}
	rc = nbg_reconstruct_with(c->a, c->b, la, &c->d->reconstruction, err);
out:
	nbg_ledger_free(la);
	nbg_ledger_free(lb);
	return rc;
}

nbg_code nbg_diff_models(const nbg_model *a, const nbg_model *b, nbg_diff **out,
			 nbg_error *err)
{
	dctx c = { a, b, NULL, 0, 0, 0 };
	nbg_code rc = NBG_OK;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!out || !a || !b)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model",
				     "no models or result pointer were given");
	*out = NULL;
	c.d = calloc(1, sizeof(*c.d));
	if (!c.d)
		goto oom;
	c.d->sum.identical = a->file_size == b->file_size &&
			 !memcmp(a->file_sha256, b->file_sha256, 32) &&
			 !memcmp(a->data, b->data, (size_t)a->file_size);
	c.d->sum.checksums_match_a = nbg_model_checksums_match(a);
	c.d->sum.checksums_match_b = nbg_model_checksums_match(b);
	if (c.d->sum.identical)
		rc = nbg_reconstruct_with(a, b, NULL, &c.d->reconstruction, err); /* says why not */
	else
		rc = diff_all(&c, err);
	if (rc != NBG_OK) {
		nbg_diff_free(c.d);
		if (rc == NBG_E_OUT_OF_MEMORY)
			goto oom;
		return rc;
	}
	*out = c.d;
	return NBG_OK;
oom:
	nbg_diff_free(c.d);
	return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory",
			     "out of memory comparing the files");
}

void nbg_diff_free(nbg_diff *d)
{
	if (!d)
		return;
	nbg_reconstruction_free(d->reconstruction);
	free(d->items);
	free(d->owners);
	free(d);
}

const nbg_diff_item *nbg_diff_item_at(const nbg_diff *d, size_t i)
{
	return d && i < d->count ? &d->items[i] : NULL;
}

const nbg_diff_owner *nbg_diff_owner_at(const nbg_diff *d, size_t i)
{
	return d && i < d->owner_count ? &d->owners[i] : NULL;
}

size_t nbg_diff_item_count(const nbg_diff *d)
{
	return d ? d->count : 0;
}

size_t nbg_diff_owner_count(const nbg_diff *d)
{
	return d ? d->owner_count : 0;
}

const nbg_diff_summary *nbg_diff_summary_of(const nbg_diff *d)
{
	return d ? &d->sum : NULL;
}

const nbg_reconstruction *nbg_diff_reconstruction(const nbg_diff *d)
{
	return d ? d->reconstruction : NULL;
}

const char *nbg_diff_verdict(const nbg_diff *d)
{
	if (!d)
		return NULL;
	if (d->sum.identical)
		return "identical";
	return d->reconstruction && d->reconstruction->explained ? "explained" : "different";
}
