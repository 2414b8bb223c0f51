/*
 * text_diff.c - the human form of nbg diff (diff.h, doc/diff.md).
 *
 * The summary comes first and fits one screen: both files, the verdict
 * (identical / explained by a dynamic-I/O substitution / different), the
 * first byte range the substitution cannot account for, the differing
 * owners in file order with what explains each, and the reconstruction in
 * one line.  The details follow: the reconstruction's entries and checksum
 * words, the decoded fields, every byte run.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/internal.h"
#include "nbg/diff.h"
#include "report/text_internal.h"

/* Owners listed in the summary before "... N more". */
#define SUMMARY_OWNERS 16

static void side_line(FILE *out, const char *tag, const char *path, const nbg_model *m,
		      int checksums_match)
{
	char hex[65];
	nbg_hex32(m->file_sha256, hex);
	fprintf(out, "  %s: ", tag);
	nbg_text_put(out, path);
	fprintf(out, "  v%u 0x%08x target 0x%08x  %" PRIu64 " bytes  sha256 %.16s%s\n",
		m->family, m->version, m->target, m->file_size, hex,
		checksums_match ? "" : "  (its stored checksums do not match its bytes)");
}

static const nbg_recon_range *recon_find(const nbg_reconstruction *r, const char *owner,
					 int checksum_word)
{
	for (size_t i = 0; i < r->range_count; i++)
		if (r->ranges[i].checksum_word == checksum_word &&
		    !strcmp(r->ranges[i].owner, owner))
			return &r->ranges[i];
	return NULL;
}

/* What the reconstruction says about one changed owner. */
static const char *owner_status(const nbg_diff *d, const nbg_diff_owner *o)
{
	const nbg_reconstruction *r = nbg_diff_reconstruction(d);

	if (!r || !r->attempted || o->kind != NBG_DIFF_BYTES)
		return "";
	if (recon_find(r, o->owner, 0))
		return "NOT EXPLAINED";
	if (recon_find(r, o->owner, 1))
		return r->unexplained_bytes ? "checksum word: follows from the unexplained bytes"
					    : "checksum word: not the one B's bytes give";
	if (r->ranges_truncated)
		return "-";
	char dynaio[64];
	snprintf(dynaio, sizeof(dynaio), "section %u %s", NBG_SEC_DYNAIO,
		 nbg_section_type_name(NBG_SEC_DYNAIO));
	if (!strcmp(o->owner, dynaio))
		return "explained: dynamic-I/O payload substituted";
	return "explained: checksum word recomputed";
}

static void owner_line(FILE *out, const nbg_diff *d, const nbg_diff_owner *o)
{
	char where[48];

	if (o->kind == NBG_DIFF_ADDED) {
		fprintf(out, "    + %-38s @%-10" PRIu64 " only in B (%" PRIu64 " bytes)\n", o->owner,
			o->offset_b, o->size_b);
		return;
	}
	if (o->kind == NBG_DIFF_REMOVED) {
		fprintf(out, "    - %-38s @%-10" PRIu64 " only in A (%" PRIu64 " bytes)\n", o->owner,
			o->offset_a, o->size_a);
		return;
	}
	if (o->size_a != o->size_b) {
		fprintf(out, "    ~ %-38s @%-10" PRIu64 " size %" PRIu64 " -> %" PRIu64 "\n",
			o->owner, o->offset_a, o->size_a, o->size_b);
		return;
	}
	snprintf(where, sizeof(where), "%" PRIu64 " byte%s", o->bytes_changed,
		 o->bytes_changed == 1 ? "" : "s");
	const char *st = owner_status(d, o);
	fprintf(out, "    ~ %-38s @%-10" PRIu64 " %-11s%s%s\n", o->owner, o->first_change, where,
		st[0] ? " " : "", st);
}

static void summary(FILE *out, const nbg_diff *d)
{
	static const nbg_reconstruction none = { .reason = "-" };
	const nbg_reconstruction *r = nbg_diff_reconstruction(d) ? nbg_diff_reconstruction(d) : &none;
	char hex[65];

	if (nbg_diff_summary_of(d)->identical) {
		fprintf(out, "summary: identical: the files are byte for byte the same\n");
		return;
	}
	if (r->explained)
		fprintf(out, "summary: explained: %s\n", r->reason);
	else if (r->attempted)
		fprintf(out, "summary: different: %s\n", r->reason);
	else
		fprintf(out, "summary: different: reconstruction not attempted: %s\n", r->reason);
	const nbg_recon_range *f = r->first;
	if (r->attempted && !r->explained && f)
		fprintf(out,
			"  first unexplained: %s @%" PRIu64 " %" PRIu64 " byte%s%s%s%s%s [%s]\n",
			f->owner, f->offset, f->length, f->length == 1 ? "" : "s",
			f->result[0] ? ", result " : "", f->result, f->b[0] ? ", B " : "", f->b,
			f->detail);
	fprintf(out,
		"  %zu field%s changed, %zu I/O record%s only in A, %zu only in B; "
		"%zu owner range%s changed, %zu only in A, %zu only in B; "
		"%" PRIu64 " byte%s changed in place%s\n",
		nbg_diff_summary_of(d)->field_count, nbg_diff_summary_of(d)->field_count == 1 ? "" : "s", nbg_diff_summary_of(d)->records_removed,
		nbg_diff_summary_of(d)->records_removed == 1 ? "" : "s", nbg_diff_summary_of(d)->records_added, nbg_diff_summary_of(d)->owners_changed,
		nbg_diff_summary_of(d)->owners_changed == 1 ? "" : "s", nbg_diff_summary_of(d)->owners_removed, nbg_diff_summary_of(d)->owners_added,
		nbg_diff_summary_of(d)->bytes_changed, nbg_diff_summary_of(d)->bytes_changed == 1 ? "" : "s",
		nbg_diff_summary_of(d)->truncated ? " (details truncated; counts exact)" : "");
	fprintf(out, "  differing owners, file order:\n");
	for (size_t i = 0; i < nbg_diff_owner_count(d) && i < SUMMARY_OWNERS; i++)
		owner_line(out, d, nbg_diff_owner_at(d, i));
	if (nbg_diff_owner_count(d) > SUMMARY_OWNERS)
		fprintf(out, "    ... %zu more (listed below)\n", nbg_diff_owner_count(d) - SUMMARY_OWNERS);
	if (r->attempted) {
		nbg_hex32(r->sha256, hex);
		fprintf(out,
			"  reconstruction: %zu entr%s substituted, %zu checksum word%s recomputed, "
			"result sha256 %.16s %s B\n",
			r->entry_count, r->entry_count == 1 ? "y" : "ies", r->checksum_count,
			r->checksum_count == 1 ? "" : "s", hex,
			memcmp(r->sha256, r->sha256_b, 32) ? "!=" : "==");
	}
}

static void recon_details(FILE *out, const nbg_reconstruction *r)
{
	char hex[65];

	if (!r || !r->attempted)
		return;
	fprintf(out, "\nReconstruction (in memory; nothing is written):\n");
	fprintf(out, "  entries substituted (%zu):\n", r->entry_count);
	for (size_t i = 0; i < r->entry_count; i++) {
		const nbg_recon_entry *e = &r->entries[i];
		fprintf(out,
			"    dynaio entry %-4u region +%-8u %6u bytes  @%-10" PRIu64
			" %" PRIu64 " byte%s\n",
			e->index, e->region_offset, e->size, e->file_offset, e->bytes_changed,
			e->bytes_changed == 1 ? " differs" : "s differ");
	}
	fprintf(out, "  checksum words recomputed (%zu):\n", r->checksum_count);
	for (size_t i = 0; i < r->checksum_count; i++) {
		const nbg_recon_checksum *c = &r->checksums[i];
		fprintf(out, "    %-36s @%-8" PRIu64 " A 0x%08x -> 0x%08x  B 0x%08x  %s\n",
			c->word, c->offset, c->a, c->recomputed, c->b,
			c->recomputed == c->b ? "== B" : "!= B");
	}
	nbg_hex32(r->sha256, hex);
	fprintf(out, "  result sha256 %s\n", hex);
	nbg_hex32(r->sha256_b, hex);
	fprintf(out, "  B      sha256 %s\n", hex);
	if (r->explained)
		return;
	fprintf(out,
		"  still differing (%zu owner part%s%s; %" PRIu64 " byte%s outside checksum words, "
		"%" PRIu64 " in them):\n",
		r->range_count, r->range_count == 1 ? "" : "s",
		r->ranges_truncated ? ", list truncated" : "", r->unexplained_bytes,
		r->unexplained_bytes == 1 ? "" : "s", r->checksum_bytes);
	for (size_t i = 0; i < r->range_count; i++) {
		const nbg_recon_range *x = &r->ranges[i];
		fprintf(out, "    %s %-36s @%-10" PRIu64 " %" PRIu64 " byte%s%s%s%s%s [%s]\n",
			x->checksum_word ? "c" : "!", x->owner, x->offset, x->bytes,
			x->bytes == 1 ? "" : "s", x->result[0] ? ", first run " : "", x->result,
			x->b[0] ? " -> " : "", x->b, x->detail);
	}
}

static void item_line(FILE *out, const nbg_diff_item *it)
{
	int size_differs = !strncmp(it->detail, "size differs", 12);

	switch (it->kind) {
	case NBG_DIFF_REMOVED:
		fprintf(out, "  - %-40s @%-9" PRIu64 " only in A (%s)\n", it->path, it->offset_a,
			it->a);
		break;
	case NBG_DIFF_ADDED:
		fprintf(out, "  + %-40s @%-9" PRIu64 " only in B (%s)\n", it->path, it->offset_b,
			it->b);
		break;
	case NBG_DIFF_BYTES:
		fprintf(out, "  ~ %-40s @%" PRIu64 "", it->path, it->offset_a);
		if (it->offset_b != it->offset_a)
			fprintf(out, " (B @%" PRIu64 ")", it->offset_b);
		if (size_differs)
			fprintf(out, " %s -> %s", it->a, it->b);
		else
			fprintf(out, " %" PRIu64 " byte%s", it->length, it->length == 1 ? "" : "s");
		if (it->a[0] && !size_differs)
			fprintf(out, " %s -> %s", it->a, it->b);
		if (it->detail[0])
			fprintf(out, " [%s]", it->detail);
		fputc('\n', out);
		break;
	default:
		break;
	}
}

void nbg_text_diff(FILE *out, const nbg_diff *d, const nbg_model *a, const char *path_a,
		   const nbg_model *b, const char *path_b)
{
	if (!out || !d || !a || !b)
		return;
	fprintf(out, "nbg diff\n");
	side_line(out, "A", path_a, a, nbg_diff_summary_of(d)->checksums_match_a);
	side_line(out, "B", path_b, b, nbg_diff_summary_of(d)->checksums_match_b);
	summary(out, d);
	if (nbg_diff_summary_of(d)->identical)
		return;
	recon_details(out, nbg_diff_reconstruction(d));
	fprintf(out, "\nFields (%zu):\n", nbg_diff_summary_of(d)->field_count);
	for (size_t i = 0; i < nbg_diff_item_count(d); i++) {
		const nbg_diff_item *it = nbg_diff_item_at(d, i);
		if (it->kind == NBG_DIFF_FIELD) {
			fprintf(out, "  %-44s ", it->path);
			nbg_text_put(out, it->a);
			fputs(" -> ", out);
			nbg_text_put(out, it->b);
			fputc('\n', out);
		}
	}
	fprintf(out, "\nOwner ranges, file order (%zu changed, %zu only in A, %zu only in B):\n",
		nbg_diff_summary_of(d)->owners_changed, nbg_diff_summary_of(d)->owners_removed, nbg_diff_summary_of(d)->owners_added);
	for (size_t i = 0; i < nbg_diff_item_count(d); i++)
		item_line(out, nbg_diff_item_at(d, i));
}
