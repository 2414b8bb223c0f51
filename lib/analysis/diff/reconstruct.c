/*
 * reconstruct.c - is B exactly A with dynamic-I/O payloads substituted?
 *
 * In memory only: a copy of A receives B's bytes inside A's dynamic-I/O
 * entry payloads (and nowhere else), then every section checksum record and
 * the header file checksum are recomputed with the functions the parser
 * verifies files with (format/checksum.h), then the result is compared with
 * B: SHA-256 and bytes.  Where they still differ, the bytes are attributed
 * to A's ledger owners, checksum words apart from everything else, so the
 * first byte the substitution cannot account for is named by its owner.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/diff/diff_internal.h"
#include "common/hash.h"
#include "format/checksum.h"

int nbg_model_checksums_match(const nbg_model *m)
{
	return m && m->integrity != NBG_INTEGRITY_FAILED;
}

void nbg_reconstruction_free(nbg_reconstruction *r)
{
	if (!r)
		return;
	free(r->entries);
	free(r->checksums);
	free(r->ranges);
	free(r);
}

const nbg_recon_entry *nbg_reconstruction_entry_at(const nbg_reconstruction *r, size_t i)
{
	return r && i < r->entry_count ? &r->entries[i] : NULL;
}

const nbg_recon_checksum *nbg_reconstruction_checksum_at(const nbg_reconstruction *r, size_t i)
{
	return r && i < r->checksum_count ? &r->checksums[i] : NULL;
}

const nbg_recon_range *nbg_reconstruction_range_at(const nbg_reconstruction *r, size_t i)
{
	return r && i < r->range_count ? &r->ranges[i] : NULL;
}

/* The first stored checksum of m that its bytes do not give, by name. */
static void first_bad_checksum(const nbg_model *m, char *out, size_t n)
{
	for (size_t i = 0; i < m->checksum_record_count; i++) {
		const nbg_checksum_record *c = nbg_model_checksum_record_at(m, i);
		if (c->stored != c->computed) {
			const char *t = nbg_section_type_name(c->section_type);
			snprintf(out, n, "the CHECKSUM record of section %s", t ? t : "?");
			return;
		}
	}
	snprintf(out, n, "the header crc32");
}

/* Same size, same sub-header, same directory records: the sections lie at
 * the same places in both files.  Otherwise says where the layouts part. */
static int same_layout(const nbg_model *a, const nbg_model *b, char *why, size_t n)
{
	if (a->file_size != b->file_size) {
		snprintf(why, n,
			 "the files differ in size (A %" PRIu64 " bytes, B %" PRIu64 "): the "
			 "layout differs, so no substitution inside dynamic-I/O payloads can "
			 "explain the difference", a->file_size, b->file_size);
		return 0;
	}
	if (a->header.sub_header_offset != b->header.sub_header_offset ||
	    memcmp(a->data + a->header.sub_header_offset, b->data + b->header.sub_header_offset,
		   NBG_V2_SUB_HEADER_SIZE)) {
		snprintf(why, n,
			 "the sub-headers differ: the section directory lies elsewhere or holds "
			 "a different number of records, so the layout differs");
		return 0;
	}
	for (size_t i = 0; i < a->section_count; i++) {
		const nbg_section *sa = nbg_model_section_at(a, i), *sb = nbg_model_section_at(b, i);
		const uint8_t *ra = a->data + sa->record_offset, *rb = b->data + sb->record_offset;
		for (uint64_t k = 0; k < NBG_V2_SECTION_HEADER_SIZE; k++) {
			if (ra[k] == rb[k])
				continue;
			nbg_ledger_range rec = { .offset = sa->record_offset,
						 .size = NBG_V2_SECTION_HEADER_SIZE,
						 .section = -1 };
			char where[128];
			snprintf(rec.owner, sizeof(rec.owner), "directory entry %zu", i);
			nbg_diff_locate(a, &rec, rec.offset + k, where, sizeof(where));
			snprintf(why, n,
				 "the section directories differ (directory entry %zu, %s): the "
				 "layout differs, so no substitution inside dynamic-I/O payloads "
				 "can explain the difference", i, where);
			return 0;
		}
	}
	return 1;
}

/* Whether the reconstruction applies; if not, why (into r->reason). */
static int applicable(const nbg_model *a, const nbg_model *b, nbg_reconstruction *r)
{
	char bad[96];

	if (a->file_size == b->file_size && !memcmp(a->data, b->data, (size_t)a->file_size)) {
		snprintf(r->reason, sizeof(r->reason),
			 "the files are identical: there is nothing to explain");
		return 0;
	}
	if (a->family != 2 || b->family != 2) {
		snprintf(r->reason, sizeof(r->reason),
			 "not applicable: %s NBG v1, and v1 has no dynamic-I/O table, so there "
			 "is no payload to substitute",
			 a->family != 2 && b->family != 2 ? "both files are"
			 : a->family != 2		   ? "A is"
							   : "B is");
		return 0;
	}
	if (!nbg_model_checksums_match(a)) {
		first_bad_checksum(a, bad, sizeof(bad));
		snprintf(r->reason, sizeof(r->reason),
			 "A's stored checksums do not match its bytes (%s): the substitution "
			 "starts from a valid A, so nothing can be proved", bad);
		return 0;
	}
	if (!same_layout(a, b, r->reason, sizeof(r->reason)))
		return 0;
	if (!a->dynaio.present) {
		snprintf(r->reason, sizeof(r->reason),
			 "the files have no dynamic-I/O sections (DYNAIO and DYNAIO_TABLE): there "
			 "is no payload to substitute");
		return 0;
	}
	return 1;
}

/* Copies B's bytes into res inside every dynamic-I/O entry whose payload
 * differs, recording the entry. */
static int substitute(const nbg_model *a, const nbg_model *b, uint8_t *res,
		      nbg_reconstruction *r)
{
	const nbg_dynaio *d = &a->dynaio;

	r->entries = calloc(d->entry_count ? d->entry_count : 1, sizeof(*r->entries));
	if (!r->entries)
		return 0;
	for (size_t i = 0; i < d->entry_count; i++) {
		const nbg_dynaio_entry *e = nbg_model_dynaio_entry_at(a, i);
		uint64_t fo = d->region_offset + e->offset, changed = 0;
		for (uint64_t k = 0; k < e->size; k++)
			changed += a->data[fo + k] != b->data[fo + k];
		if (!changed)
			continue;
		memcpy(res + fo, b->data + fo, e->size);
		nbg_recon_entry *x = &r->entries[r->entry_count++];
		x->index = (uint32_t)i;
		x->region_offset = e->offset;
		x->size = e->size;
		x->file_offset = fo;
		x->bytes_changed = changed;
	}
	return 1;
}

static void set_checksum(nbg_recon_checksum *c, const char *word, uint64_t off, uint32_t va,
			 uint32_t v, const nbg_model *b)
{
	snprintf(c->word, sizeof(c->word), "%s", word);
	c->offset = off;
	c->a = va;
	c->recomputed = v;
	c->b = le32(b->data + off);
}

/* Recomputes, in res, every CHECKSUM record value and the header crc_sum
 * (which reads the value words as zero, so their order is free).  The list
 * is in file order: the header word, then the records. */
static int recompute(const nbg_model *a, const nbg_model *b, uint8_t *res,
		     nbg_reconstruction *r)
{
	const uint64_t crc_at = nbg_fid_desc(F_HDR_CRC_SUM)->offset;
	size_t n = 1;
	uint32_t crc;
	char word[64];

	r->checksums = calloc(a->checksum_record_count + 1, sizeof(*r->checksums));
	if (!r->checksums)
		return 0;
	for (size_t i = 0; i < a->checksum_record_count; i++) {
		const nbg_checksum_record *rec = nbg_model_checksum_record_at(a, i);
		const nbg_section *t = nbg_model_section(a, rec->section_type);
		const char *name = nbg_section_type_name(rec->section_type);
		if (!t)
			continue; /* never for a parsed model */
		crc = nbg_section_crc32(res, a->file_size, t);
		put_le32(res + rec->offset + 4, crc);
		snprintf(word, sizeof(word), "section_checksums.%s", name ? name : "?");
		set_checksum(&r->checksums[n++], word, rec->offset + 4, rec->stored, crc, b);
	}
	if (!nbg_v2_file_checksum(res, a->file_size, a, 0, &crc, NULL))
		crc = a->header.crc_sum; /* never for a parsed model */
	put_le32(res + crc_at, crc);
	snprintf(word, sizeof(word), "header.%s", nbg_fid_desc(F_HDR_CRC_SUM)->key);
	set_checksum(&r->checksums[0], word, crc_at, a->header.crc_sum, crc, b);
	r->checksum_count = n;
	return 1;
}

static int in_checksum_word(const nbg_reconstruction *r, uint64_t off)
{
	for (size_t i = 0; i < r->checksum_count; i++)
		if (off >= r->checksums[i].offset && off - r->checksums[i].offset < 4)
			return 1;
	return 0;
}

/* One owner's differing bytes of one kind (content, or checksum words). */
typedef struct acc {
	nbg_recon_range x;
	int used;
} acc;

static void acc_byte(acc *g, const nbg_ledger_range *o, uint64_t off, int cks)
{
	if (!g->used) {
		memset(&g->x, 0, sizeof(g->x));
		snprintf(g->x.owner, sizeof(g->x.owner), "%s", o->owner);
		g->x.offset = off;
		g->x.checksum_word = cks;
		g->used = 1;
	}
	if (g->x.bytes == g->x.length && g->x.offset + g->x.length == off)
		g->x.length++; /* still inside the first run */
	g->x.bytes++;
}

static void acc_flush(nbg_reconstruction *r, const nbg_model *a, const nbg_ledger_range *o,
		      acc *g, const uint8_t *res, const uint8_t *bdata)
{
	if (!g->used)
		return;
	nbg_diff_locate(a, o, g->x.offset, g->x.detail, sizeof(g->x.detail));
	nbg_diff_hex(g->x.result, sizeof(g->x.result), res + g->x.offset, g->x.length);
	nbg_diff_hex(g->x.b, sizeof(g->x.b), bdata + g->x.offset, g->x.length);
	if (g->x.checksum_word)
		r->checksum_bytes += g->x.bytes;
	else
		r->unexplained_bytes += g->x.bytes;
	if (r->range_count < NBG_RECON_MAX_RANGES)
		r->ranges[r->range_count++] = g->x;
	else
		r->ranges_truncated = 1;
	g->used = 0;
}

/* Attributes every byte where res and B differ to A's owner ranges, each
 * owner's checksum words apart from its other bytes. */
static void attribute(nbg_reconstruction *r, const nbg_model *a, const nbg_model *b,
		      const nbg_ledger *la, const uint8_t *res)
{
	size_t n = nbg_ledger_range_count(la);

	for (size_t i = 0; i < n; i++) {
		const nbg_ledger_range *o = nbg_ledger_range_at(la, i);
		const uint8_t *p = res + o->offset, *q = b->data + o->offset;
		acc g[2] = { { .used = 0 }, { .used = 0 } };

		if (!memcmp(p, q, (size_t)o->size))
			continue;
		for (uint64_t k = 0; k < o->size; k++) {
			if (p[k] == q[k])
				continue;
			int cks = in_checksum_word(r, o->offset + k);
			acc_byte(&g[cks], o, o->offset + k, cks);
		}
		/* the two kinds in the file order of their first bytes */
		int swap = g[0].used && g[1].used && g[1].x.offset < g[0].x.offset;
		acc_flush(r, a, o, &g[swap], res, b->data);
		acc_flush(r, a, o, &g[!swap], res, b->data);
	}
	/* Only the header and the CHECKSUM section hold checksum words, so the
	 * first range outside them is among the first three listed. */
	for (size_t i = 0; i < r->range_count && !r->first; i++)
		if (!r->ranges[i].checksum_word)
			r->first = &r->ranges[i];
	if (!r->first && r->range_count)
		r->first = &r->ranges[0];
}

static void verdict(nbg_reconstruction *r)
{
	size_t o = 0, n = sizeof(r->reason);

	if (r->explained) {
		o = (size_t)snprintf(r->reason, n,
				     "B is A with %zu dynamic-I/O entry payload%s substituted "
				     "(entr%s",
				     r->entry_count, r->entry_count == 1 ? "" : "s",
				     r->entry_count == 1 ? "y" : "ies");
		for (size_t i = 0; i < r->entry_count && o < n; i++)
			o += (size_t)snprintf(r->reason + o, n - o, "%s %u", i ? "," : "",
					      r->entries[i].index);
		if (o < n)
			snprintf(r->reason + o, n - o,
				 ") and its checksums recomputed: the result has B's SHA-256");
	} else if (r->unexplained_bytes) {
		size_t owners = 0;
		for (size_t i = 0; i < r->range_count; i++)
			owners += !r->ranges[i].checksum_word;
		snprintf(r->reason, n,
			 "not explained: B differs from the result in %" PRIu64 " byte%s "
			 "outside dynamic-I/O payloads and checksum words, in %zu%s owner%s; the "
			 "first is in %s",
			 r->unexplained_bytes, r->unexplained_bytes == 1 ? "" : "s", owners,
			 r->ranges_truncated ? " or more" : "", owners == 1 ? "" : "s",
			 r->first ? r->first->owner : "?");
	} else {
		snprintf(r->reason, n,
			 "not explained: only checksum words differ (the first in %s): B's "
			 "stored checksum is not the one its own bytes give, so B is corrupt or "
			 "was edited without refreshing its checksums",
			 r->first ? r->first->owner : "?");
	}
}

nbg_code nbg_reconstruct_with(const nbg_model *a, const nbg_model *b, const nbg_ledger *la,
			      nbg_reconstruction **out, nbg_error *err)
{
	nbg_ledger *own = NULL;
	uint8_t *res = NULL;
	nbg_code rc = NBG_OK;
	nbg_reconstruction *r;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!out || !a || !b)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model",
				     "no models or result pointer were given");
	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		goto oom;
	memcpy(r->sha256_b, b->file_sha256, 32);
	if (!applicable(a, b, r)) {
		*out = r;
		return NBG_OK;
	}
	if (!la) {
		if ((rc = nbg_ledger_build(a, &own, err)) != NBG_OK)
			goto fail;
		la = own;
	}
	r->attempted = 1;
	res = malloc(a->file_size ? (size_t)a->file_size : 1);
	r->ranges = calloc(NBG_RECON_MAX_RANGES, sizeof(*r->ranges));
	if (!res || !r->ranges)
		goto oom;
	memcpy(res, a->data, (size_t)a->file_size);
	if (!substitute(a, b, res, r) || !recompute(a, b, res, r))
		goto oom;
	nbg_sha256(res, (size_t)a->file_size, r->sha256);
	r->explained = !memcmp(r->sha256, b->file_sha256, 32) &&
		       !memcmp(res, b->data, (size_t)a->file_size);
	if (!r->explained)
		attribute(r, a, b, la, res);
	verdict(r);
	free(res);
	nbg_ledger_free(own);
	*out = r;
	return NBG_OK;
oom:
	rc = nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory",
			   "out of memory reconstructing B from A (%" PRIu64 " bytes)",
			   a->file_size);
fail:
	free(res);
	nbg_ledger_free(own);
	nbg_reconstruction_free(r);
	return rc;
}

nbg_code nbg_reconstruct(const nbg_model *a, const nbg_model *b, nbg_reconstruction **out,
			 nbg_error *err)
{
	return nbg_reconstruct_with(a, b, NULL, out, err);
}
