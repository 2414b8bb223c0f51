/*
 * text_corpus.c - the human report of a corpus aggregate (`nbg corpus`): the
 * corpus tables, one aligned line per value set or range.
 */
#include <inttypes.h>
#include <stdio.h>

#include "analysis/corpus_internal.h"

static void print_vs(FILE *out, const char *key, const nbg_valset *s, nbg_corpus_namer f)
{
	char buf[48];
	fprintf(out, "  %-30s ", key);
	if (!s->count)
		fprintf(out, "-");
	for (size_t i = 0; i < s->count; i++) {
		const char *name = f ? f(s->v[i], buf, sizeof(buf))
				     : (snprintf(buf, sizeof(buf), "%" PRIu64, s->v[i]), buf);
		fprintf(out, "%s%s x%" PRIu64, i ? ", " : "", name, s->n[i]);
	}
	fprintf(out, "%s\n", s->overflow ? ", ... (more than 16 values)" : "");
}

static void print_rg(FILE *out, const char *key, const nbg_range64 *r)
{
	if (r->seen)
		fprintf(out, "  %-30s %" PRIu64 "-%" PRIu64 "\n", key, r->lo, r->hi);
	else
		fprintf(out, "  %-30s -\n", key);
}

static void print_types(FILE *out, const nbg_corpus *c)
{
	fprintf(out, "  %-30s %-8s %-22s %s\n", "section type", "files", "entry sizes",
		"alignments");
	for (uint32_t t = 0; t < NBG_SECTION_TYPE_COUNT; t++) {
		if (!c->type_files[t])
			continue;
		char name[48], es[64] = "", al[64] = "";
		size_t o = 0, p = 0;
		snprintf(name, sizeof(name), "%s(%u)", nbg_section_type_name(t), t);
		for (size_t i = 0; i < c->type_entsize[t].count && o < sizeof(es); i++)
			o += (size_t)snprintf(es + o, sizeof(es) - o, "%s%" PRIu64, i ? "," : "",
					      c->type_entsize[t].v[i]);
		for (size_t i = 0; i < c->type_align[t].count && p < sizeof(al); i++)
			p += (size_t)snprintf(al + p, sizeof(al) - p, "%s%" PRIu64, i ? "," : "",
					      c->type_align[t].v[i]);
		fprintf(out, "    %-28s %-8" PRIu64 " %-22s %s\n", name, c->type_files[t], es, al);
	}
}

static void print_v2(FILE *out, const nbg_corpus *c)
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
	print_vs(out, "attribute", &c->attribute, nbg_corpus_hex_name);
	print_vs(out, "vsi_reserved non-zero words", &c->vsi_nonzero, NULL);
	fprintf(out, "  %-30s %" PRIu64 " of %" PRIu64 " files\n", "operation_count = entries + 3",
		c->opcount_plus3_holds, c->opcount_checked);
	print_rg(out, "input_count", &c->ni_inputs);
	print_rg(out, "output_count", &c->ni_outputs);
	print_rg(out, "layer_count", &c->ni_layers);
	print_rg(out, "operation_count", &c->ni_opcount);
	print_rg(out, "memory_pool_bytes", &c->mem_pool);
}

void nbg_text_corpus(FILE *out, const nbg_corpus *c)
{
	fprintf(out, "Corpus: %" PRIu64 " files, %" PRIu64 " valid, %" PRIu64
		" bytes in valid files\n", c->files, c->valid, c->bytes);
	for (int k = 1; k < NBG_E__COUNT; k++)
		if (c->fail_by_code[k])
			fprintf(out, "  invalid: %-28s %" PRIu64 "\n", nbg_code_name((nbg_code)k),
				c->fail_by_code[k]);
	if (c->unreadable)
		fprintf(out, "  unreadable paths: %" PRIu64 "\n", c->unreadable);
	print_vs(out, "families", &c->family, NULL);
	print_vs(out, "versions", &c->version, nbg_corpus_hex_name);
	print_vs(out, "targets", &c->target, nbg_corpus_hex_name);

	fprintf(out, "\nv2 files: %" PRIu64 "\n", c->v2_files);
	if (c->v2_files)
		print_v2(out, c);
	fprintf(out, "\nv1 files: %" PRIu64 "\n", c->v1_files);
	if (c->v1_files) {
		print_vs(out, "entry counts", &c->v1_entry_count, NULL);
		print_vs(out, "I/O record strides", &c->v1_io_stride, NULL);
		print_vs(out, "nbg_crc_sum findings", &c->crc_finding, nbg_corpus_finding_name);
	}
	fprintf(out, "\nI/O records: %" PRIu64 "\n", c->io_records);
	print_vs(out, "data formats", &c->io_format, nbg_corpus_format_name);
	print_vs(out, "quantization", &c->io_quant, nbg_corpus_quant_name);
	print_vs(out, "data types", &c->io_type, NULL);
	print_vs(out, "dimension counts", &c->io_dim_count, NULL);
	fprintf(out, "\nConnection tails: %zu distinct SHA-256 values\n", c->tails.count);
	print_vs(out, "coverage", &c->tail_cover, nbg_corpus_cover_name);
	if (c->note_kinds) {
		fprintf(out, "\nNotes (deviations from the seed corpus, not failures):\n");
		for (size_t i = 0; i < c->note_kinds; i++)
			fprintf(out, "  %-34s %" PRIu64 "\n", c->notes[i].id, c->notes[i].n);
	}
}
