/*
 * fuzz_graph.c - libFuzzer harness: graph decoding (nbg_graph_decode), its
 * JSON (nbg_json_document_write's graph keys) and its text tables (lib/report/text_graph.c).
 * Whenever the parse succeeds the graph must decode (findings, never a
 * failure), every record it kept must lie inside its section, record and
 * table counts must follow from the section sizes, table coverage must add up,
 * the JSON must read back, and the text must be text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_common.h"
#include "nbg/graph.h"
#include "nbg/report.h"
#include "report/text_internal.h" /* nbg_text_graph_summary */

/* `first` points at the record_offset of the first of n elements that are
 * `stride_bytes` apart. */
static void check_records(const nbg_graph_records *r, size_t n, size_t size)
{
	if (!r->present) {
		FZ_CHECK(n == 0);
		return;
	}
	FZ_CHECK(r->offset <= size && r->size <= size - r->offset);
	if (r->decoded && r->record_size) {
		FZ_CHECK(r->count == r->size / r->record_size);
		FZ_CHECK(r->trailing_bytes == r->size % r->record_size);
	}
	FZ_CHECK(n <= r->count || !r->decoded);
}

static void check_record_offset(const nbg_graph_records *r, uint64_t o)
{
	FZ_CHECK(o >= r->offset);
	FZ_CHECK(r->record_size == 0 ||
		 (o - r->offset <= r->size && r->record_size <= r->size - (o - r->offset)));
}

#define RECORDS(rec, at, n)                                                          \
	do {                                                                         \
		const nbg_graph_summary *s_ = nbg_graph_summary_of(g);               \
		check_records(&s_->rec, s_->n, size);                                \
		for (size_t i_ = 0; i_ < s_->n; i_++)                                \
			check_record_offset(&s_->rec, at(g, i_)->record_offset);     \
	} while (0)

static void check_graph(const nbg_model *m, const nbg_graph *g, size_t size)
{
	FZ_CHECK(nbg_graph_summary_of(g)->family == nbg_model_family(m) && nbg_graph_summary_of(g)->version == nbg_model_version(m));
	if (nbg_graph_summary_of(g)->layer_count)
		RECORDS(layer_records, nbg_graph_layer_at, layer_count);
	if (nbg_graph_summary_of(g)->operation_count)
		RECORDS(operation_records, nbg_graph_operation_at, operation_count);
	if (nbg_graph_summary_of(g)->patch_count)
		RECORDS(patch_records, nbg_graph_patch_at, patch_count);
	if (nbg_graph_summary_of(g)->sh_count)
		RECORDS(sh_records, nbg_graph_sh_operation_at, sh_count);
	if (nbg_graph_summary_of(g)->sw_count)
		RECORDS(sw_records, nbg_graph_sw_operation_at, sw_count);
	if (nbg_graph_summary_of(g)->hw_init_count)
		RECORDS(hw_init_records, nbg_graph_hw_init_at, hw_init_count);
	if (nbg_graph_summary_of(g)->ppu_param_count)
		RECORDS(ppu_param_records, nbg_graph_ppu_param_at, ppu_param_count);
	for (size_t i = 0; i < nbg_graph_summary_of(g)->layer_count; i++)
		FZ_CHECK(nbg_graph_layer_at(g, i)->name[64] == '\0');
	for (size_t i = 0; i < nbg_graph_summary_of(g)->sw_count; i++)
		FZ_CHECK(nbg_graph_sw_operation_at(g, i)->name[64] == '\0');
	for (size_t i = 0; i < nbg_graph_summary_of(g)->patch_count; i++)
		FZ_CHECK(nbg_graph_patch_at(g, i)->operation >= -1 &&
			 nbg_graph_patch_at(g, i)->operation < (int64_t)nbg_graph_summary_of(g)->operation_count);

	for (int t = 0; t < NBG_GRAPH_TABLE_COUNT; t++) {
		const nbg_graph_table *tb = nbg_graph_table_at(g, t);
		size_t oob = 0;
		FZ_CHECK(tb->name != NULL && tb->data_name != NULL);
		if (!tb->present)
			continue;
		FZ_CHECK(tb->table_offset <= size && tb->table_size <= size - tb->table_offset);
		FZ_CHECK(tb->entry_count == 0 || tb->entries != NULL);
		if (tb->decoded && tb->entry_size)
			FZ_CHECK(tb->entry_count == tb->table_size / tb->entry_size);
		for (size_t i = 0; i < tb->entry_count; i++) {
			const nbg_graph_table_entry *e = &tb->entries[i];
			int in = tb->data_present && e->offset <= tb->data_size &&
				 e->size <= tb->data_size - e->offset;
			FZ_CHECK(e->in_bounds == in);
			oob += !in;
			FZ_CHECK(e->record_offset >= tb->table_offset &&
				 e->record_offset - tb->table_offset < tb->table_size);
		}
		FZ_CHECK(tb->out_of_bounds == oob);
		if (tb->data_present && tb->entry_count) {
			FZ_CHECK(tb->covered_bytes + tb->uncovered_bytes == tb->data_size);
			FZ_CHECK(tb->uncovered_nonzero_bytes <= tb->uncovered_bytes);
		}
	}
	FZ_CHECK(nbg_graph_summary_of(g)->relation_count <= NBG_GRAPH_RELATION_MAX);
	for (size_t i = 0; i < nbg_graph_summary_of(g)->relation_count; i++)
		FZ_CHECK(nbg_graph_relation_at(g, i)->id && nbg_graph_relation_at(g, i)->held <= nbg_graph_relation_at(g, i)->checked);
	FZ_CHECK(nbg_graph_summary_of(g)->finding_count <= NBG_GRAPH_MAX_FINDINGS);
	FZ_CHECK(nbg_graph_summary_of(g)->finding_count == 0 || nbg_graph_finding_at(g, 0) != NULL);
	for (size_t i = 0; i < nbg_graph_summary_of(g)->finding_count; i++) {
		FZ_CHECK(fz_terminated(nbg_graph_finding_at(g, i)->id, sizeof(nbg_graph_finding_at(g, i)->id)));
		FZ_CHECK(fz_terminated(nbg_graph_finding_at(g, i)->text, sizeof(nbg_graph_finding_at(g, i)->text)));
	}
}

static void check_text(const nbg_model *m, const nbg_graph *g)
{
	fz_text t;
	FILE *out = fz_text_open(&t);

	nbg_text_graph_summary(out, m);
	nbg_text_graph(out, m, g, NBG_GRAPH_JSON_ALL);
	fz_text_check(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nbg_model *m = NULL;
	nbg_graph *g = NULL;
	nbg_error err;
	nbg_code rc;
	json_error_t jerr;

	if (fz_parse(data, size, &m, &err) != NBG_OK)
		return 0;
	rc = nbg_graph_decode(m, &g, &err);
	if (rc != NBG_OK)
		fprintf(stderr, "graph: %s: %s\n", nbg_code_name(rc), err.message);
	FZ_CHECK(rc == NBG_OK);
	check_graph(m, g, size);

	char *s = fz_document(m, "fuzz.nb", NBG_JSON_DOC_NO_CORE | NBG_GRAPH_JSON_ALL);
	FZ_CHECK(s != NULL);
	json_t *doc = json_loads(s, 0, &jerr);
	FZ_CHECK(doc != NULL && json_is_object(doc));
	json_t *f = json_object_get(doc, "graph_findings");
	FZ_CHECK(f == NULL || json_array_size(f) == nbg_graph_summary_of(g)->finding_count);
	json_decref(doc);
	free(s);

	check_text(m, g);
	nbg_graph_free(g);
	nbg_model_free(m);
	return 0;
}
