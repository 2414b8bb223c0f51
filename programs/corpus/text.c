/*
 * text.c - the human report of a corpus aggregate (`nbg corpus`): the
 * corpus tables, one aligned line per value set or range, values ascending.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "corpus_internal.h"

static void print_vs(FILE *out, const char *key, const corpus_valset *s, corpus_namer f)
{
	size_t n;
	corpus_vs_pair *p = corpus_valset_sorted(s, &n);
	char buf[48];

	fprintf(out, "  %-30s ", key);
	if (n == SIZE_MAX) {
		fprintf(out, "(out of memory)\n");
		return;
	}
	if (!n)
		fprintf(out, "-");
	for (size_t i = 0; i < n && i < CORPUS_TEXT_VALUES; i++) {
		const char *name = f ? f(p[i].v, buf, sizeof(buf))
				     : (snprintf(buf, sizeof(buf), "%" PRIu64, p[i].v), buf);
		fprintf(out, "%s%s x%" PRIu64, i ? ", " : "", name, p[i].n);
	}
	if (n > CORPUS_TEXT_VALUES)
		fprintf(out, ", ... (%zu distinct values; --json lists all)", n);
	fputc('\n', out);
	free(p);
}

static void print_rg(FILE *out, const char *key, const corpus_range *r)
{
	if (r->seen)
		fprintf(out, "  %-30s %" PRIu64 "-%" PRIu64 "\n", key, r->lo, r->hi);
	else
		fprintf(out, "  %-30s -\n", key);
}

/* "v1,v2,..." of a set's values, ascending, cut to fit `size`. */
static void value_list(char *buf, size_t size, const corpus_valset *s)
{
	size_t n, o = 0;
	corpus_vs_pair *p = corpus_valset_sorted(s, &n);

	buf[0] = '\0';
	for (size_t i = 0; i < n && n != SIZE_MAX && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%" PRIu64, i ? "," : "", p[i].v);
	free(p);
}

static void print_types(FILE *out, const corpus_agg *c)
{
	fprintf(out, "  %-30s %-8s %-22s %s\n", "section type", "files", "entry sizes",
		"alignments");
	for (uint32_t t = 0; t < NBG_SECTION_TYPE_COUNT; t++) {
		if (!c->type_files[t])
			continue;
		char name[48], es[64], al[64];
		snprintf(name, sizeof(name), "%s(%u)", nbg_section_type_name(t), t);
		value_list(es, sizeof(es), &c->type_entsize[t]);
		value_list(al, sizeof(al), &c->type_align[t]);
		fprintf(out, "    %-28s %-8" PRIu64 " %-22s %s\n", name, c->type_files[t], es, al);
	}
}

static void print_v2(FILE *out, const corpus_agg *c)
{
	print_vs(out, "section counts", &c->section_count, NULL);
	print_types(out, c);
	fprintf(out, "  %-30s %" PRIu64 " records, %" PRIu64 " match\n", "section checksums",
		c->checksum_records, c->checksum_match);
	fprintf(out, "  %-30s %" PRIu64 " of %" PRIu64 " match, %" PRIu64 " section bytes covered\n",
		"file checksums", c->file_checksum_match, c->v2_files, c->covered_section_bytes);
	fprintf(out, "  %-30s %" PRIu64 " paired files, %" PRIu64 " entries, region %" PRIu64
		" bytes, mapped %" PRIu64 ", padding %" PRIu64 "\n",
		"dynamic I/O", c->dyn_files, c->dyn_entries, c->dyn_region, c->dyn_mapped,
		c->dyn_padding);
	print_rg(out, "dynamic I/O entries per file", &c->dyn_entry_count);
	print_vs(out, "core_count", &c->core_count, NULL);
	print_vs(out, "address_width", &c->address_width, NULL);
	print_vs(out, "attribute", &c->attribute, corpus_hex_name);
	print_vs(out, "vsi_reserved non-zero words", &c->vsi_nonzero, NULL);
	fprintf(out, "  %-30s %" PRIu64 " of %" PRIu64 " files\n", "operation_count = entries + 3",
		c->opcount_plus3_holds, c->opcount_checked);
	print_rg(out, "input_count", &c->ni_inputs);
	print_rg(out, "output_count", &c->ni_outputs);
	print_rg(out, "layer_count", &c->ni_layers);
	print_rg(out, "operation_count", &c->ni_opcount);
	print_rg(out, "memory_pool_bytes", &c->mem_pool);
}

static void print_failures(FILE *out, const corpus_agg *c)
{
	for (int k = 1; k < NBG_E__COUNT; k++)
		if (c->fail_by_code[k])
			fprintf(out, "  invalid: %-28s %" PRIu64 "\n", nbg_code_name((nbg_code)k),
				c->fail_by_code[k]);
	for (int k = CORPUS_UNREADABLE; k < CORPUS_STATUS_COUNT; k++)
		if (c->not_measured[k])
			fprintf(out, "  not measured: %-23s %" PRIu64 "\n",
				corpus_status_name((corpus_status)k), c->not_measured[k]);
	for (int k = 0; k < CORPUS_SKIP_COUNT; k++)
		if (c->skipped[k])
			fprintf(out, "  skipped: %-28s %" PRIu64 "\n",
				corpus_skip_name((corpus_skip)k), c->skipped[k]);
}

static void print_notes(FILE *out, const corpus_agg *c)
{
	size_t n;
	corpus_note_count *p = corpus_notes_sorted(c, &n);

	if (n && n != SIZE_MAX) {
		fprintf(out, "\nNotes (deviations from the 138-file reference corpus of the field "
			     "map, not failures):\n");
		for (size_t i = 0; i < n; i++) {
			char *id = nbg_text_escape(p[i].id, sizeof(p[i].id)); /* never raw */
			fprintf(out, "  %-34s %" PRIu64 "\n", id ? id : "?", p[i].n);
			free(id);
		}
	}
	free(p);
}

void corpus_text(FILE *out, const corpus_agg *c)
{
	if (!out || !c)
		return;
	fprintf(out, "Corpus: %" PRIu64 " files, %" PRIu64 " valid, %" PRIu64
		" bytes in valid files\n", c->files, c->valid, c->bytes);
	if (c->oom)
		fprintf(out, "  INCOMPLETE: memory ran out; some values are missing\n");
	print_failures(out, c);
	print_vs(out, "families", &c->family, NULL);
	print_vs(out, "versions", &c->version, corpus_hex_name);
	print_vs(out, "targets", &c->target, corpus_hex_name);

	fprintf(out, "\nv2 files: %" PRIu64 "\n", c->v2_files);
	if (c->v2_files)
		print_v2(out, c);
	fprintf(out, "\nv1 files: %" PRIu64 "\n", c->v1_files);
	if (c->v1_files) {
		print_vs(out, "entry counts", &c->v1_entry_count, NULL);
		print_vs(out, "I/O record strides", &c->v1_io_stride, NULL);
		print_vs(out, "nbg_crc_sum findings", &c->crc_finding, corpus_finding_name);
	}
	fprintf(out, "\nI/O records: %" PRIu64 "\n", c->io_records);
	print_vs(out, "data formats", &c->io_format, corpus_format_name);
	print_vs(out, "quantization", &c->io_quant, corpus_quant_name);
	print_vs(out, "data types", &c->io_type, NULL);
	print_vs(out, "dimension counts", &c->io_dim_count, NULL);
	fprintf(out, "\nConnection tails: %zu distinct SHA-256 values\n", c->tails.count);
	print_vs(out, "coverage", &c->tail_cover, corpus_cover_name);
	print_notes(out, c);
}
