/*
 * diff.c - controlled differentials between two NBG files (nbg_diff.h):
 * decoded fields compared by parser key, then the byte-ownership ledgers of
 * both files matched owner by owner and every changed byte run located
 * inside its owner.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "nbg_diff.h"
#include "nbg_ledger.h"
#include "report.h"

typedef struct dctx {
	const nbg_model *a, *b;
	nbg_diff *d;
	size_t cap;
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
		d->field_count++;
	if (d->count == NBG_DIFF_MAX_ITEMS) {
		d->truncated = 1;
		return NULL;
	}
	if (d->count == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		nbg_diff_item *n = realloc(d->items, cap * sizeof(*n));
		if (!n) {
			c->oom = 1;
			return NULL;
		}
		d->items = n;
		c->cap = cap;
	}
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
		char path[128];

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
		fields_range(c, "sub_header", a->data + a->sub_header_offset,
			     b->data + b->sub_header_offset, F_SUB_SH_OFFSET, F_SUB_SH_COUNT);
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

/* Names the field of a fixed structure that holds byte `rel`. */
static const nbg_field *field_at(enum nbg_fid first, enum nbg_fid last, uint64_t rel)
{
	for (int id = (int)first; id <= (int)last; id++) {
		const nbg_field *f = nbg_fid_desc((enum nbg_fid)id);
		if (f->kind != NBG_FIELD_BITS && rel >= f->offset && rel < f->offset + f->width)
			return f;
	}
	return NULL;
}

/* Where byte `off` of model m lies inside the ledger owner r. */
static void locate(const nbg_model *m, const nbg_ledger_range *r, uint64_t off, char *out,
		   size_t n)
{
	const nbg_field *f = NULL;

	uint32_t k;
	int fixed = 0;

	out[0] = '\0';
	/* Header, sub-header and directory records are named by their owner
	 * (a directory record also carries the index of the section it describes). */
	if (m->family == 2 && !strcmp(r->owner, "header")) {
		f = field_at(F_HDR_MAGIC, F_HDR_RESERVED3, off - r->offset);
		fixed = 1;
	} else if (m->family == 2 && !strcmp(r->owner, "sub-header")) {
		f = field_at(F_SUB_SH_OFFSET, F_SUB_SH_COUNT, off - r->offset);
		fixed = 1;
	} else if (m->family == 2 && sscanf(r->owner, "directory entry %u", &k) == 1) {
		f = field_at(F_SEC_TYPE, F_SEC_RESERVED2, off - r->offset);
		fixed = 1;
	}
	/* Owners that name a section without lying inside it (the alignment
	 * before a section, a v1 table entry) are located relative to themselves. */
	const nbg_section *sec = r->section >= 0 ? &m->sections[r->section] : NULL;
	if (sec && (off < sec->offset || off - sec->offset >= sec->size))
		sec = NULL;
	if (fixed || !sec) {
		if (f)
			snprintf(out, n, "%s +%" PRIu64, f->key,
				 off - r->offset - f->offset);
		else
			snprintf(out, n, "+%" PRIu64, off - r->offset);
		return;
	}
	const nbg_section *s = sec;
	uint64_t rel = off - s->offset;
	uint64_t es = s->entry_size;

	if (m->family == 2 && (s->type == NBG_SEC_INPUT || s->type == NBG_SEC_OUTPUT)) {
		f = field_at(F_IO_DIM_COUNT, F_IO_NAME, rel % NBG_V2_IO_RECORD_SIZE);
		snprintf(out, n, "record %" PRIu64 " %s", rel / NBG_V2_IO_RECORD_SIZE,
			 f ? f->key : "?");
	} else if (m->family == 2 && s->type == NBG_SEC_NETWORK_INFO) {
		f = field_at(F_NI_NAME, F_NI_VSI_RESERVED, rel);
		snprintf(out, n, "%s", f ? f->key : "?");
	} else if (m->family == 2 && s->type == NBG_SEC_CHECKSUM) {
		snprintf(out, n, "record %" PRIu64 " %s", rel / 8,
			 rel % 8 < 4 ? "section_type" : "checksum_value");
	} else if (m->family == 2 && s->type == NBG_SEC_DYNAIO_TABLE) {
		snprintf(out, n, "entry %" PRIu64 " %s", rel / 8, rel % 8 < 4 ? "offset" : "size");
	} else if (m->family == 2 && s->type == NBG_SEC_DYNAIO && m->dynaio.present) {
		for (size_t i = 0; i < m->dynaio.entry_count; i++) {
			const nbg_dynaio_entry *e = &m->dynaio.entries[i];
			if (rel >= e->offset && rel < (uint64_t)e->offset + e->size) {
				snprintf(out, n, "region +%" PRIu64 ", dynaio entry %zu +%" PRIu64,
					 rel, i, rel - e->offset);
				return;
			}
		}
		snprintf(out, n, "region +%" PRIu64 ", padding", rel);
	} else if (es > 1 && s->size % es == 0) {
		snprintf(out, n, "record %" PRIu64 " +%" PRIu64, rel / es, rel % es);
	} else {
		snprintf(out, n, "+%" PRIu64, rel);
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

static void owner_presence(dctx *c, const nbg_ledger_range *r, int added)
{
	nbg_diff_item *it = add_item(c, added ? NBG_DIFF_ADDED : NBG_DIFF_REMOVED, r->owner);
	if (added)
		c->d->owners_added++;
	else
		c->d->owners_removed++;
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

static void owner_bytes(dctx *c, const nbg_ledger_range *x, const nbg_ledger_range *y)
{
	const uint8_t *pa = c->a->data + x->offset, *pb = c->b->data + y->offset;
	size_t runs = 0;

	if (!memcmp(x->sha256, y->sha256, 32) && x->size == y->size)
		return;
	c->d->owners_changed++;
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
	for (uint64_t i = 0; i < x->size;) {
		if (pa[i] == pb[i]) {
			i++;
			continue;
		}
		uint64_t j = i;
		while (j < x->size && pa[j] != pb[j])
			j++;
		c->d->bytes_changed += j - i;
		if (runs++ < NBG_DIFF_MAX_RUNS_PER_OWNER) {
			nbg_diff_item *it = add_item(c, NBG_DIFF_BYTES, x->owner);
			if (it) {
				it->offset_a = x->offset + i;
				it->offset_b = y->offset + i;
				it->length = j - i;
				locate(c->a, x, x->offset + i, it->detail, sizeof(it->detail));
				if (j - i <= 8) {
					size_t o = 0, p = 0;
					for (uint64_t k = i; k < j; k++) {
						o += (size_t)snprintf(it->a + o, sizeof(it->a) - o, "%02x", pa[k]);
						p += (size_t)snprintf(it->b + p, sizeof(it->b) - p, "%02x", pb[k]);
					}
				}
			}
		} else if (runs == NBG_DIFF_MAX_RUNS_PER_OWNER + 1) {
			c->d->truncated = 1;
		}
		i = j;
	}
}

static nbg_code compare_owners(dctx *c, nbg_error *err)
{
	nbg_ledger *la = NULL, *lb = NULL;
	const nbg_ledger_range **ra = NULL, **rb = NULL;
	nbg_code rc;

	if ((rc = nbg_ledger_build(c->a, &la, err)) != NBG_OK ||
	    (rc = nbg_ledger_build(c->b, &lb, err)) != NBG_OK)
		goto out;
	ra = sorted_ranges(la);
	rb = sorted_ranges(lb);
	if (!ra || !rb) {
		c->oom = 1;
		goto out;
	}
	size_t na = nbg_ledger_range_count(la), nb = nbg_ledger_range_count(lb), i = 0, j = 0;
	while ((i < na || j < nb) && !c->oom) {
		int r = i >= na ? 1 : j >= nb ? -1 : strcmp(ra[i]->owner, rb[j]->owner);
		if (r < 0)
			owner_presence(c, ra[i++], 0);
		else if (r > 0)
			owner_presence(c, rb[j++], 1);
		else
			owner_bytes(c, ra[i++], rb[j++]);
	}
out:
	free(ra);
	free(rb);
	nbg_ledger_free(la);
	nbg_ledger_free(lb);
	return rc;
}

nbg_code nbg_diff_models(const nbg_model *a, const nbg_model *b, nbg_diff **out,
			 nbg_error *err)
{
	dctx c = { a, b, NULL, 0, 0 };
	nbg_code rc = NBG_OK;

	*out = NULL;
	c.d = calloc(1, sizeof(*c.d));
	if (!c.d)
		goto oom;
	c.d->identical = a->file_size == b->file_size &&
			 !memcmp(a->file_sha256, b->file_sha256, 32) &&
			 !memcmp(a->data, b->data, (size_t)a->file_size);
	if (!c.d->identical) {
		model_fields(&c);
		if (!c.oom && (rc = compare_owners(&c, err)) != NBG_OK) {
			nbg_diff_free(c.d);
			return rc;
		}
	}
	if (c.oom)
		goto oom;
	*out = c.d;
	return NBG_OK;
oom:
	nbg_diff_free(c.d);
	if (err) {
		memset(err, 0, sizeof(*err));
		err->code = NBG_E_OUT_OF_MEMORY;
		snprintf(err->message, sizeof(err->message), "out of memory comparing the files");
	}
	return NBG_E_OUT_OF_MEMORY;
}

void nbg_diff_free(nbg_diff *d)
{
	if (!d)
		return;
	free(d->items);
	free(d);
}

static json_t *side(const nbg_model *m, const char *path)
{
	return json_pack("{s:o,s:I,s:I,s:I,s:I,s:o}", "path", nbg_json_str(path), "family", (json_int_t)m->family,
			 "version", (json_int_t)m->version, "target", (json_int_t)m->target,
			 "file_size", (json_int_t)m->file_size, "sha256",
			 nbg_json_sha(m->file_sha256));
}

char *nbg_diff_json(const nbg_diff *d, const nbg_model *a, const char *path_a,
		    const nbg_model *b, const char *path_b)
{
	json_t *items = json_array();
	for (size_t i = 0; i < d->count; i++) {
		const nbg_diff_item *it = &d->items[i];
		json_t *o = json_pack("{s:s,s:s}", "kind", nbg_diff_kind_name(it->kind), "path",
				      it->path);
		if (it->kind != NBG_DIFF_ADDED)
			json_object_set_new(o, "a", json_string(it->a));
		if (it->kind != NBG_DIFF_REMOVED)
			json_object_set_new(o, "b", json_string(it->b));
		if (it->kind != NBG_DIFF_FIELD) {
			if (it->kind != NBG_DIFF_ADDED)
				json_object_set_new(o, "offset_a", json_integer((json_int_t)it->offset_a));
			if (it->kind != NBG_DIFF_REMOVED)
				json_object_set_new(o, "offset_b", json_integer((json_int_t)it->offset_b));
			json_object_set_new(o, "length", json_integer((json_int_t)it->length));
		}
		if (it->detail[0])
			json_object_set_new(o, "detail", json_string(it->detail));
		json_array_append_new(items, o);
	}
	json_t *root = json_pack(
		"{s:s,s:o,s:o,s:b,s:{s:I,s:I,s:I,s:I,s:I,s:b},s:o}", "nbgkit_version",
		NBG_VERSION_STRING, "a", side(a, path_a), "b", side(b, path_b), "identical",
		d->identical, "summary", "fields_changed", (json_int_t)d->field_count,
		"owners_changed", (json_int_t)d->owners_changed, "owners_added",
		(json_int_t)d->owners_added, "owners_removed", (json_int_t)d->owners_removed,
		"bytes_changed", (json_int_t)d->bytes_changed, "truncated", d->truncated,
		"differences", items);
	char *s = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(root);
	return s;
}
