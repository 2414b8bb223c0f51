/*
 * diff_locate.c - where a byte lies inside its ledger owner, named by the
 * field map: the header or directory field, the I/O record and field, the
 * NETWORK_INFO field, the CHECKSUM or DYNAIO_TABLE record, the dynamic-I/O
 * entry, or the record index of a section with an entry size.
 */
#include <inttypes.h>
#include <stdio.h>

#include "analysis/diff/diff_internal.h"

void nbg_diff_hex(char *out, size_t n, const uint8_t *p, uint64_t len)
{
	size_t o = 0;

	if (n)
		out[0] = '\0';
	if (len > 8)
		return;
	for (uint64_t k = 0; k < len && o + 3 <= n; k++)
		o += (size_t)snprintf(out + o, n - o, "%02x", p[k]);
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

/* Inside a v2 DYNAIO region: the entry that maps byte `rel`, or padding. */
static void locate_dynaio(const nbg_model *m, uint64_t rel, char *out, size_t n)
{
	for (size_t i = 0; i < m->dynaio.entry_count; i++) {
		const nbg_dynaio_entry *e = nbg_model_dynaio_entry_at(m, i);
		if (rel >= e->offset && rel < (uint64_t)e->offset + e->size) {
			snprintf(out, n, "region +%" PRIu64 ", dynaio entry %zu +%" PRIu64, rel, i,
				 rel - e->offset);
			return;
		}
	}
	snprintf(out, n, "region +%" PRIu64 ", padding", rel);
}

/* Inside a section payload of model m, at `rel` from its start. */
static void locate_in_section(const nbg_model *m, const nbg_section *s, uint64_t rel,
			      char *out, size_t n)
{
	const nbg_field *f;
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
		locate_dynaio(m, rel, out, n);
	} else if (es > 1 && s->size % es == 0) {
		snprintf(out, n, "record %" PRIu64 " +%" PRIu64, rel / es, rel % es);
	} else {
		snprintf(out, n, "+%" PRIu64, rel);
	}
}

void nbg_diff_locate(const nbg_model *m, const nbg_ledger_range *r, uint64_t off, char *out,
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
	const nbg_section *sec = r->section >= 0 ? nbg_model_section_at(m, (size_t)r->section)
						  : NULL;
	if (sec && (off < sec->offset || off - sec->offset >= sec->size))
		sec = NULL;
	if (fixed || !sec) {
		if (f)
			snprintf(out, n, "%s +%" PRIu64, f->key, off - r->offset - f->offset);
		else
			snprintf(out, n, "+%" PRIu64, off - r->offset);
		return;
	}
	locate_in_section(m, sec, off - sec->offset, out, n);
}
