/*
 * report_graph.c - `nbg inspect --layers / --operations / --patches` and the
 * graph part of the default report: fixed-width tables in the spirit of the
 * vendor's `nbinfo -l` / `nbinfo -o`, one row per record, file order.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nbg/report.h"
#include "report/text_internal.h"

#define SUMMARY_LAYERS 8

/* File text as printable ASCII, anything else \xNN, padded to `width`. */
static void put_name(FILE *out, const char *s, int width)
{
	int n = 0;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c < 0x7f) {
			fputc(c, out);
			n++;
		} else {
			n += fprintf(out, "\\x%02x", c);
		}
	}
	for (; n < width; n++)
		fputc(' ', out);
}

static void records_line(FILE *out, const char *what, size_t count,
			 const nbg_graph_records *r)
{
	if (!r->present) {
		fprintf(out, "%s: none (no %s section)\n", what,
			nbg_section_type_name(r->section_type));
		return;
	}
	if (!r->decoded) {
		fprintf(out, "%s: not decoded (%u-byte records in %" PRIu64 " bytes at offset %"
			PRIu64 ")\n", what, r->record_size, r->size, r->offset);
		return;
	}
	fprintf(out, "%s (%zu records of %u bytes at offset %" PRIu64 "%s):\n", what, count,
		r->record_size, r->offset, r->trailing_bytes ? ", trailing bytes not decoded" : "");
}

static const char *op_name(uint32_t type, char buf[16])
{
	const char *n = nbg_graph_op_type_name(type);
	if (n)
		return n;
	snprintf(buf, 16, "0x%x", type);
	return buf;
}

static void print_layers(FILE *out, const nbg_graph *g, size_t limit)
{
	bool abs = nbg_graph_summary_of(g)->operation_count && nbg_graph_operation_at(g, 0)->has_abs_op_id;

	fprintf(out, "  [Nr]  %-40s %8s %5s %6s %10s\n", "Name", "NodeId", "Ops",
		abs ? "AbsOps" : "Recs", "UID");
	for (size_t i = 0; i < nbg_graph_summary_of(g)->layer_count && i < limit; i++) {
		const nbg_graph_layer *l = nbg_graph_layer_at(g, i);
		uint32_t have = abs ? l->distinct_abs_ops : l->operation_records;
		fprintf(out, "  [%3zu] ", i);
		put_name(out, l->name, 40);
		fprintf(out, " %8u %5u %5u%c ", l->node_id, l->operation_count, have,
			have == l->operation_count ? ' ' : '!');
		if (l->has_uid && l->uid == 0xFFFFFFFFu)
			fprintf(out, "%10s\n", "-1");
		else if (l->has_uid)
			fprintf(out, "%10u\n", l->uid);
		else
			fprintf(out, "%10s\n", "-");
	}
	fprintf(out, "  (Ops: the record's operation_count; %s: counted from the OPERATIONS records%s; "
		"! where they differ. The Network table counts OPERATIONS records, each tile "
		"one)\n", abs ? "AbsOps" : "Recs",
		abs ? ", distinct absolute operation ids (the tiles of one operation once)" : "");
}

static void print_operations(FILE *out, const nbg_graph *g)
{
	char buf[16], patches[32];

	records_line(out, "Operations", nbg_graph_summary_of(g)->operation_count, &nbg_graph_summary_of(g)->operation_records);
	if (!nbg_graph_summary_of(g)->operation_count)
		return;
	fprintf(out, "  [Nr]   %-7s %6s %6s %6s %-15s %7s %6s  %s\n", "Type", "Index", "Layer",
		"State", "Patches", "Preempt", "AbsOp", "Layer name");
	for (size_t i = 0; i < nbg_graph_summary_of(g)->operation_count; i++) {
		const nbg_graph_operation *o = nbg_graph_operation_at(g, i);
		fprintf(out, "  [%4zu] %-7s ", i, op_name(o->type, buf));
		if (o->index == 0xFFFFu || o->index == 0xFFFFFFFFu)
			fprintf(out, "%6s ", "-");
		else
			fprintf(out, "%6u ", o->index);
		if (o->layer_id == NBG_GRAPH_NO_LAYER16 || o->layer_id == NBG_GRAPH_NO_LAYER32)
			fprintf(out, "%6s ", "-");
		else
			fprintf(out, "%6u ", o->layer_id);
		snprintf(patches, sizeof(patches), "%u+%u", o->patch_index, o->patch_count);
		fprintf(out, "%6u %-15s ", o->state_id, o->patch_count ? patches : "-");
		if (o->has_preempt)
			fprintf(out, "%7u ", o->preempt_word);
		else
			fprintf(out, "%7s ", "-");
		if (o->has_abs_op_id && o->abs_op_id != 0xFFFFFFFFu)
			fprintf(out, "%6u  ", o->abs_op_id);
		else
			fprintf(out, "%6s  ", "-");
		if (o->layer_id < nbg_graph_summary_of(g)->layer_count)
			put_name(out, nbg_graph_layer_at(g, o->layer_id)->name, 0);
		fputc('\n', out);
	}
}

static void print_other_operations(FILE *out, const nbg_graph *g)
{
	if (nbg_graph_summary_of(g)->sh_records.present) {
		fputc('\n', out);
		records_line(out, "SH operations", nbg_graph_summary_of(g)->sh_count, &nbg_graph_summary_of(g)->sh_records);
		if (nbg_graph_summary_of(g)->sh_count)
			fprintf(out, "  [Nr]   %10s %14s\n", "InstrIndex", "PPUParamIndex");
		for (size_t i = 0; i < nbg_graph_summary_of(g)->sh_count; i++) {
			const nbg_graph_sh_operation *s = nbg_graph_sh_operation_at(g, i);
			fprintf(out, "  [%4zu] %10u ", i, s->instr_index);
			if (s->has_ppu_param_index)
				fprintf(out, "%14u\n", s->ppu_param_index);
			else
				fprintf(out, "%14s\n", "-");
		}
	}
	if (nbg_graph_summary_of(g)->sw_records.present) {
		fputc('\n', out);
		records_line(out, "SW operations", nbg_graph_summary_of(g)->sw_count, &nbg_graph_summary_of(g)->sw_records);
		for (size_t i = 0; i < nbg_graph_summary_of(g)->sw_count; i++) {
			fprintf(out, "  [%4zu] type %u ", i, nbg_graph_sw_operation_at(g, i)->sw_operation_type);
			if (nbg_graph_sw_operation_at(g, i)->has_name)
				put_name(out, nbg_graph_sw_operation_at(g, i)->name, 0);
			fputc('\n', out);
		}
	}
	if (nbg_graph_summary_of(g)->hw_init_records.present) {
		fputc('\n', out);
		records_line(out, "Hardware-init operations", nbg_graph_summary_of(g)->hw_init_count,
			     &nbg_graph_summary_of(g)->hw_init_records);
		for (size_t i = 0; i < nbg_graph_summary_of(g)->hw_init_count; i++)
			fprintf(out, "  [%4zu] state %u patches %u+%u\n", i,
				nbg_graph_hw_init_at(g, i)->state_id, nbg_graph_hw_init_at(g, i)->patch_index,
				nbg_graph_hw_init_at(g, i)->patch_count);
	}
	if (nbg_graph_summary_of(g)->ppu_param_records.present) {
		fputc('\n', out);
		records_line(out, "PPU parameters", nbg_graph_summary_of(g)->ppu_param_count, &nbg_graph_summary_of(g)->ppu_param_records);
		for (size_t i = 0; i < nbg_graph_summary_of(g)->ppu_param_count; i++) {
			const nbg_graph_ppu_param *q = nbg_graph_ppu_param_at(g, i);
			fprintf(out, "  [%4zu] offset %u,%u,%u scale %u,%u,%u group size %u,%u,%u "
				"count %u,%u,%u\n", i, q->global_offset[0], q->global_offset[1],
				q->global_offset[2], q->global_scale[0], q->global_scale[1],
				q->global_scale[2], q->group_size[0], q->group_size[1],
				q->group_size[2], q->group_count[0], q->group_count[1],
				q->group_count[2]);
		}
	}
}

static void print_patches(FILE *out, const nbg_graph *g)
{
	bool high = nbg_graph_summary_of(g)->patch_count && nbg_graph_patch_at(g, 0)->has_high;

	records_line(out, "Patches", nbg_graph_summary_of(g)->patch_count, &nbg_graph_summary_of(g)->patch_records);
	if (!nbg_graph_summary_of(g)->patch_count)
		return;
	fprintf(out, "  [Nr]    %6s %-8s %6s %-18s %6s %10s %3s %10s", "Op", "Type", "Dest",
		"Source", "Index", "SrcOffset", "Tr", "Name");
	if (high)
		fprintf(out, " %10s %10s %10s", "DestH", "SrcH", "MaskH");
	fputc('\n', out);
	for (size_t i = 0; i < nbg_graph_summary_of(g)->patch_count; i++) {
		const nbg_graph_patch *x = nbg_graph_patch_at(g, i);
		const char *tn = nbg_graph_patch_type_name(x->type);
		const char *sn = nbg_graph_source_type_name(x->source_type);
		char ty[16], src[24];

		snprintf(ty, sizeof(ty), "%s", tn ? tn : "?");
		if (!tn)
			snprintf(ty, sizeof(ty), "%u", x->type);
		snprintf(src, sizeof(src), "%s", sn ? sn : "?");
		if (!sn)
			snprintf(src, sizeof(src), "%u", x->source_type);
		fprintf(out, "  [%5zu] ", i);
		if (x->operation >= 0)
			fprintf(out, "%6" PRId64 " ", x->operation);
		else
			fprintf(out, "%6s ", x->hw_init ? "hwinit" : "-");
		fprintf(out, "%-8s %6u %-18s %6d %10u %3u ", ty, x->dest_offset, src, x->index,
			x->src_offset, x->transformed);
		if (x->has_name)
			fprintf(out, "%10u", x->name);
		else
			fprintf(out, "%10s", "-");
		if (x->has_high)
			fprintf(out, " 0x%08x 0x%08x 0x%08x", x->dest_offset_h, x->src_offset_h,
				x->mask_h);
		fputc('\n', out);
	}
}

static void print_tables(FILE *out, const nbg_graph *g, const char *indent)
{
	for (int i = 0; i < NBG_GRAPH_TABLE_COUNT; i++) {
		const nbg_graph_table *t = nbg_graph_table_at(g, i);
		if (!t->present)
			continue;
		fprintf(out, "%s%-16s ", indent, t->name);
		if (!t->decoded) {
			fprintf(out, "not decoded (%u-byte entries)\n", t->entry_size);
			continue;
		}
		fprintf(out, "%zu entries -> %s ", t->entry_count, t->data_name);
		if (!t->data_present) {
			fprintf(out, "(absent)\n");
			continue;
		}
		fprintf(out, "%" PRIu64 " bytes: %zu out of bounds, %" PRIu64
			" bytes uncovered in %u ranges (%" PRIu64 " non-zero)", t->data_size,
			t->out_of_bounds, t->uncovered_bytes, t->uncovered_ranges,
			t->uncovered_nonzero_bytes);
		if (t->overlap_bytes)
			fprintf(out, ", %" PRIu64 " bytes claimed twice", t->overlap_bytes);
		fputc('\n', out);
	}
}

static void relation_totals(const nbg_graph *g, uint64_t *checks, uint64_t *failed,
			    size_t *relations)
{
	*checks = *failed = 0;
	*relations = 0;
	for (size_t r = 0; r < nbg_graph_summary_of(g)->relation_count; r++) {
		if (!nbg_graph_relation_at(g, r)->checked)
			continue;
		(*relations)++;
		*checks += nbg_graph_relation_at(g, r)->checked;
		*failed += nbg_graph_relation_at(g, r)->checked - nbg_graph_relation_at(g, r)->held;
	}
}

static void print_findings(FILE *out, const nbg_graph *g)
{
	uint64_t checks, failed;
	size_t rels;

	relation_totals(g, &checks, &failed, &rels);
	fprintf(out, "\nCross-references: %zu relations, %" PRIu64 " checks, %" PRIu64
		" do not hold\n", rels, checks, failed);
	fprintf(out, "  %-32s %8s/%-8s %-6s %s\n", "relation (finding id)", "held", "checked",
		"basis", "what is checked");
	for (size_t r = 0; r < nbg_graph_summary_of(g)->relation_count; r++) {
		const nbg_graph_relation *x = nbg_graph_relation_at(g, r);
		if (x->checked)
			fprintf(out, "  %-32s %8" PRIu64 "/%-8" PRIu64 " %-6s %s\n", x->id, x->held,
				x->checked, x->evidence, x->text);
	}
	if (!nbg_graph_summary_of(g)->finding_count)
		return;
	fprintf(out, "\nGraph findings (%zu%s, not failures):\n", nbg_graph_summary_of(g)->finding_count,
		nbg_graph_summary_of(g)->findings_dropped ? ", more dropped" : "");
	for (size_t i = 0; i < nbg_graph_summary_of(g)->finding_count; i++)
		fprintf(out, "  %-32s @%-8" PRIu64 " %s\n", nbg_graph_finding_at(g, i)->id,
			nbg_graph_finding_at(g, i)->offset, nbg_graph_finding_at(g, i)->text);
}

void nbg_text_graph(FILE *out, const nbg_model *m, const nbg_graph *g, unsigned what)
{
	if (!out || !m || !g)
		return;
	if (what & NBG_TEXT_GRAPH_LAYERS) {
		fputc('\n', out);
		records_line(out, "Layers", nbg_graph_summary_of(g)->layer_count, &nbg_graph_summary_of(g)->layer_records);
		if (nbg_graph_summary_of(g)->layer_count)
			print_layers(out, g, SIZE_MAX);
	}
	if (what & NBG_TEXT_GRAPH_OPERATIONS) {
		fputc('\n', out);
		print_operations(out, g);
		nbg_text_graph_sizes(out, m, g);
		print_other_operations(out, g);
	}
	if (what & NBG_TEXT_GRAPH_PATCHES) {
		fputc('\n', out);
		print_patches(out, g);
	}
	fprintf(out, "\nTables:\n");
	print_tables(out, g, "  ");
	print_findings(out, g);
}

void nbg_text_graph_summary_decoded(FILE *out, nbg_decoded *d)
{
	const nbg_graph *g = NULL;
	nbg_error err;
	uint64_t checks, failed;
	size_t rels;
	const char *sep = ": ";

	fprintf(out, "\nGraph:\n");
	if (nbg_decoded_graph(d, &g, &err) != NBG_OK) {
		fprintf(out, "  (not decoded: %s)\n", err.message);
		return;
	}
	fprintf(out, "  %-26s %zu", "Layers:", nbg_graph_summary_of(g)->layer_count);
	if (nbg_graph_summary_of(g)->layer_records.decoded)
		fprintf(out, " (%u-byte records)", nbg_graph_summary_of(g)->layer_records.record_size);
	fprintf(out, "\n  %-26s %zu", "Operations:", nbg_graph_summary_of(g)->operation_count);
	if (nbg_graph_summary_of(g)->operation_records.decoded)
		fprintf(out, " (%u-byte records)", nbg_graph_summary_of(g)->operation_records.record_size);
	for (size_t t = 0; t < NBG_GRAPH_OP_BUCKETS; t++)
		if (nbg_graph_summary_of(g)->ops_by_type[t]) {
			fprintf(out, "%s%s %zu", sep, nbg_graph_op_bucket_name(t), nbg_graph_summary_of(g)->ops_by_type[t]);
			sep = ", ";
		}
	fprintf(out, "\n  %-26s %zu", "Patches:", nbg_graph_summary_of(g)->patch_count);
	if (nbg_graph_summary_of(g)->patch_records.decoded)
		fprintf(out, " (%u-byte records), %zu referenced by no operation",
			nbg_graph_summary_of(g)->patch_records.record_size, nbg_graph_summary_of(g)->patches_unreferenced);
	fprintf(out, "\n  %-26s %zu / %zu / %zu / %zu\n", "SH / SW / HW-init / PPU:", nbg_graph_summary_of(g)->sh_count,
		nbg_graph_summary_of(g)->sw_count, nbg_graph_summary_of(g)->hw_init_count, nbg_graph_summary_of(g)->ppu_param_count);
	print_tables(out, g, "  Table ");
	relation_totals(g, &checks, &failed, &rels);
	fprintf(out, "  %-26s %zu relations, %" PRIu64 " checks, ", "Cross-references:", rels,
		checks);
	if (nbg_graph_summary_of(g)->finding_count)
		fprintf(out, "%zu findings (listed with --layers, --operations or --patches)\n",
			nbg_graph_summary_of(g)->finding_count);
	else
		fprintf(out, "all hold\n");
	if (nbg_graph_summary_of(g)->layer_count) {
		fprintf(out, "  First %zu of %zu layers:\n",
			nbg_graph_summary_of(g)->layer_count < SUMMARY_LAYERS ? nbg_graph_summary_of(g)->layer_count : (size_t)SUMMARY_LAYERS,
			nbg_graph_summary_of(g)->layer_count);
		print_layers(out, g, SUMMARY_LAYERS);
	}
	fprintf(out, "  (all of them: nbg inspect --layers, --operations, --patches FILE)\n");
}

void nbg_text_graph_summary(FILE *out, const nbg_model *m)
{
	if (out && m)
		nbg_text_decoded_part(out, m, nbg_text_graph_summary_decoded);
}
