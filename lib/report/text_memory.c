/*
 * text_memory.c - the memory section of `nbg inspect --memory` and the
 * per-operation sizes table of `nbg inspect --operations`.
 */
#include <inttypes.h>
#include <string.h>

#include "common/internal.h"
#include "nbg/memory.h"
#include "report/text_internal.h"

#define LARGEST_LAYERS 10u

static void put_layer_name(FILE *out, const nbg_graph *g, size_t layer, int width)
{
	char name[65] = "";
	size_t n;

	if (layer < nbg_graph_summary_of(g)->layer_count)
		snprintf(name, sizeof(name), "%s", nbg_graph_layer_at(g, layer)->name);
	n = strlen(name);
	nbg_text_put(out, name);
	for (; (int)n < width; n++)
		fputc(' ', out);
}

static void figures(FILE *out, const nbg_mem_report *r)
{
	fprintf(out, "  %-44s %12s %12s  %-8s %s\n", "Figure", "Bytes", "Exact", "Evidence",
		"Rule");
	for (int i = 0; i < NBG_MEM__COUNT; i++) {
		const nbg_mem_rule *u = nbg_mem_rule_of((nbg_mem_figure)i);
		nbg_mem_value v = nbg_mem_value_of(r, u->figure);
		char label[64], exact[24];

		snprintf(label, sizeof(label), "%*s%s", 2 * (int)u->depth, "", u->label);
		if (!v.from_file && v.exact == v.vendor)
			snprintf(exact, sizeof(exact), "%s",
				 u->figure == NBG_MEM_HEAP_RESERVE ? "constant" : "runtime");
		else if (v.exact == v.vendor)
			snprintf(exact, sizeof(exact), "=");
		else
			snprintf(exact, sizeof(exact), "%" PRIu64, v.exact);
		fprintf(out, "  %-44s %12" PRIu64 " %12s  %-8s %s\n", label, v.vendor, exact,
			u->evidence, u->key);
	}
	fprintf(out, "  Bytes: the figure as the vendor's inspector computes it (its alignment "
		     "and constants).\n  Exact: the bytes the file determines, where they "
		     "differ; runtime: made of runtime constants.\n  Rules: doc/memory.md, or "
		     "nbg inspect --json --memory (memory.figures.*.rule).\n");
	fprintf(out, "  Constants the file does not determine:");
	for (size_t i = 0; i < nbg_mem_constant_count(); i++) {
		const nbg_mem_constant *c = nbg_mem_constant_at(i);
		fprintf(out, "%s%s %" PRIu64, i % 4 ? ", " : "\n    ", c->name, c->value);
	}
	fputc('\n', out);
	if (nbg_mem_io_incomplete(r))
		fprintf(out, "  An input or output has a data format of unknown size: counted as "
			     "0 bytes.\n");
}

/* The vendor's own conclusion, worded as its inspector words it. */
static void vendor_summary(FILE *out, const nbg_mem_report *r)
{
	const nbg_mem_sharing *s = nbg_mem_sharing_of(r);

	fprintf(out, "  %-26s ", "Vendor summary:");
	switch (s->verdict) {
	case NBG_MEM_SHARE_POOL_EMPTY:
		fprintf(out, "memory pool size is 0, don't need the reuse optimization\n");
		return;
	case NBG_MEM_SHARE_NOT_SUPPORTED:
	case NBG_MEM_SHARE_CONFLICT:
		fprintf(out, "not support share buffer between input and memory pool.\n");
		return;
	default:
		break;
	}
	for (size_t i = 0, first = 1; i < nbg_mem_share_buffer_count(r); i++) {
		const nbg_mem_share_buffer *b = nbg_mem_share_buffer_at(r, i);
		if (b->output)
			continue;
		fprintf(out, "%sinput[%u] can share with memory pool, should allocate %" PRIu64
			"bytes memory for share buffer.\n", first ? "" : "  " "                           ",
			b->index, b->allocation);
		first = 0;
	}
}

/* Which layers read an input, and what follows for sharing. */
static void input_readers(FILE *out, const nbg_mem_share_buffer *b)
{
	if (!b->reads)
		fprintf(out, "read by no operation");
	else if (b->layer_low == b->layer_high)
		fprintf(out, "read by layer %u", b->layer_low);
	else
		fprintf(out, "read by several layers (%u to %u)", b->layer_low, b->layer_high);
	fprintf(out, ": ");
	if (b->can_share)
		fprintf(out, "can share, allocate %" PRIu64 " bytes for both", b->allocation);
	else if (b->conflicts)
		fprintf(out, "cannot share: %zu of its patches sit in operations that also name "
			"the pool", b->conflicts);
	else if (!b->clear)
		fprintf(out, "cannot share: %s", b->reads ? "more than one layer reads it"
							  : "no operation reads it");
	else
		fprintf(out, "nothing to share (the pool is empty)");
}

static void sharing(FILE *out, const nbg_graph *g, const nbg_mem_report *r)
{
	const nbg_mem_sharing *s = nbg_mem_sharing_of(r);

	fprintf(out, "\nInputs, outputs and the memory pool:\n");
	KV(out, "Memory pool", "%" PRIu64 " bytes", s->pool_bytes);
	for (size_t i = 0; i < nbg_mem_share_buffer_count(r); i++) {
		const nbg_mem_share_buffer *b = nbg_mem_share_buffer_at(r, i);
		char key[32];
		snprintf(key, sizeof(key), "%s %u", b->output ? "output" : "input", b->index);
		fprintf(out, "  %-26s %" PRIu64 " bytes (aligned %" PRIu64 "), ", key, b->bytes,
			b->aligned_bytes);
		if (!b->output)
			input_readers(out, b);
		else if (b->can_share)
			fprintf(out, "can share, allocate %" PRIu64
				" bytes for both (nbgkit only, I)", b->allocation);
		else if (b->conflicts)
			fprintf(out, "cannot share: %zu of its patches sit in operations that also "
				"name the pool (nbgkit only, I)", b->conflicts);
		else
			fprintf(out, "nothing to share (the pool is empty) (nbgkit only, I)");
		fputc('\n', out);
	}
	for (size_t i = 0; i < nbg_mem_conflict_count(r); i++) {
		const nbg_mem_conflict *c = nbg_mem_conflict_at(r, i);
		const char *type = c->io_patch < nbg_graph_summary_of(g)->patch_count
			? nbg_graph_patch_type_name(nbg_graph_patch_at(g, c->io_patch)->type) : NULL;
		fprintf(out, "  %-26s %s %u: operation %zu (layer %u ", i ? "" : "Conflicts:",
			c->output ? "output" : "input", c->io_index, c->operation, c->layer_id);
		put_layer_name(out, g, c->layer_id, 0);
		fprintf(out, ") %s it through %s patch %zu and names the pool through patch "
			"%zu%s\n", c->output ? "writes" : "reads", type ? type : "a", c->io_patch,
			c->pool_patch,
			c->output || c->command ? "" : " (the vendor names no conflict for it)");
	}
	if (s->conflicts_total + s->input_other_conflicts + s->output_conflicts >
	    nbg_mem_conflict_count(r))
		fprintf(out, "  %-26s (%zu conflicts in all)\n", "",
			s->conflicts_total + s->input_other_conflicts + s->output_conflicts);
	vendor_summary(out, r);
	KV(out, "Rests on", "the patch ranges of %zu operations: %zu INPUT, %zu OUTPUT and %zu "
	   "MEMORY_POOL patches (evidence %s)", s->operations_checked, s->input_patches,
	   s->output_patches, s->pool_patches, s->evidence);
}

static void largest_layers(FILE *out, const nbg_graph *g, const nbg_mem_report *r)
{
	size_t n = nbg_mem_layer_count(r);
	const nbg_mem_layer *o = nbg_mem_layer_outside(r);

	fprintf(out, "\nLargest layers by memory (%zu of %zu; coefficients each counted once, at "
		     "the first operation naming them):\n",
		n < LARGEST_LAYERS ? n : (size_t)LARGEST_LAYERS, n);
	fprintf(out, "  [Nr]   %-36s %4s %12s %10s %12s %12s\n", "Name", "Ops", "Coefficients",
		"Commands", "Instructions", "Total");
	for (size_t k = 0; k < n && k < LARGEST_LAYERS; k++) {
		const nbg_mem_layer *l = nbg_mem_layer_ranked(r, k);
		fprintf(out, "  [%4zu] ", l->layer);
		put_layer_name(out, g, l->layer, 36);
		fprintf(out, " %4zu %12" PRIu64 " %10" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n",
			l->operations, l->coefficient_bytes, l->command_bytes,
			l->instruction_bytes, l->total_bytes);
	}
	if (o->operations)
		fprintf(out, "  %-43s %4zu %12" PRIu64 " %10" PRIu64 " %12" PRIu64 " %12" PRIu64
			"\n", "(no layer: INIT, END)", o->operations, o->coefficient_bytes,
			o->command_bytes, o->instruction_bytes, o->total_bytes);
	fprintf(out, "  (every layer: nbg inspect --json --memory, key memory.layers)\n");
}

void nbg_text_memory(FILE *out, const nbg_model *m, const nbg_graph *g,
		     const nbg_mem_report *r)
{
	if (!out || !m || !g || !r)
		return;
	fprintf(out, "\nMemory:\n");
	KV(out, "Layout", "%s", nbg_mem_layout_of(r) == NBG_MEM_LAYOUT_LCD
	   ? "LCD (coefficients, load states and PPU instructions inside the LCD, through "
	     "the LCDT)"
	   : "sections (COEF_DATA, LOADSTATE, PPU_INSTR, DYNAIO and their tables)");
	figures(out, r);
	sharing(out, g, r);
	largest_layers(out, g, r);
}

static void both(FILE *out, uint64_t exact, uint64_t vendor, int width)
{
	char buf[48];
	if (exact == vendor)
		snprintf(buf, sizeof(buf), "%" PRIu64, exact);
	else
		snprintf(buf, sizeof(buf), "%" PRIu64 "/%" PRIu64, exact, vendor);
	fprintf(out, " %*s", width, buf);
}

void nbg_text_memory_operations(FILE *out, const nbg_graph *g, const nbg_mem_report *r)
{
	if (!out || !g || !r)
		return;
	size_t n = nbg_mem_operation_count(r);

	(void)g;
	fprintf(out, "\nOperation sizes (%zu; bytes; a/b: nbgkit's exact value / the vendor's "
		     "figure where they differ):\n", n);
	if (!n)
		return;
	fprintf(out, "  [Nr]   %-7s %10s %12s %20s %8s\n", "Type", "Command", "Instruction",
		"Coefficients", "Entries");
	for (size_t i = 0; i < n; i++) {
		const nbg_mem_operation *x = nbg_mem_operation_at(r, i);
		const char *name = nbg_graph_op_type_name(x->type);
		char tbuf[16];
		if (!name) {
			snprintf(tbuf, sizeof(tbuf), "%u", x->type);
			name = tbuf;
		}
		fprintf(out, "  [%4zu] %-7s", i, name);
		if (x->command_known)
			fprintf(out, " %10" PRIu64, x->command_bytes);
		else
			fprintf(out, " %10s", "-");
		both(out, x->instruction_bytes, x->instruction_bytes_vendor, 12);
		if (x->coefficient_patches)
			both(out, x->coefficient_bytes, x->coefficient_bytes_vendor, 20);
		else
			fprintf(out, " %20s", "-");
		fprintf(out, " %8u\n", x->coefficient_patches);
	}
}

void nbg_text_graph_sizes(FILE *out, const nbg_model *m, const nbg_graph *g)
{
	nbg_mem_report *r = NULL;
	nbg_error err;

	if (nbg_mem_analyze(m, g, &r, &err) != NBG_OK) {
		fprintf(out, "\nOperation sizes: (not computed: %s)\n", err.message);
		return;
	}
	nbg_text_memory_operations(out, g, r);
	nbg_mem_free(r);
}
