/*
 * fuzz_graph.c - libFuzzer harness: graph decoding (nbg_graph_decode), its
 * JSON (nbg_graph_json) and its text tables (lib/report/text_graph.c).
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

/* `first` points at the record_offset of the first of n elements that are
 * `stride_bytes` apart. */
static void check_records(const nbg_graph_records *r, const void *first, size_t n,
			  size_t stride_bytes, size_t size)
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
	for (size_t i = 0; i < n; i++) {
		uint64_t o;
		memcpy(&o, (const uint8_t *)first + i * stride_bytes, sizeof(o));
		FZ_CHECK(o >= r->offset);
		FZ_CHECK(r->record_size == 0 ||
			 (o - r->offset <= r->size && r->record_size <= r->size - (o - r->offset)));
	}
}

#define RECORDS(rec, arr, n) \
	check_records(&g->rec, &g->arr[0].record_offset, g->n, sizeof(g->arr[0]), size)

static void check_graph(const nbg_model *m, const nbg_graph *g, size_t size)
{
	FZ_CHECK(g->family == m->family && g->version == m->version);
	if (g->layer_count)
		RECORDS(layer_records, layers, layer_count);
	if (g->operation_count)
		RECORDS(operation_records, operations, operation_count);
	if (g->patch_count)
		RECORDS(patch_records, patches, patch_count);
	if (g->sh_count)
		RECORDS(sh_records, sh_operations, sh_count);
	if (g->sw_count)
		RECORDS(sw_records, sw_operations, sw_count);
	if (g->hw_init_count)
		RECORDS(hw_init_records, hw_inits, hw_init_count);
	if (g->ppu_param_count)
		RECORDS(ppu_param_records, ppu_params, ppu_param_count);
	for (size_t i = 0; i < g->layer_count; i++)
		FZ_CHECK(g->layers[i].name[64] == '\0');
	for (size_t i = 0; i < g->sw_count; i++)
		FZ_CHECK(g->sw_operations[i].name[64] == '\0');
	for (size_t i = 0; i < g->patch_count; i++)
		FZ_CHECK(g->patches[i].operation >= -1 &&
			 g->patches[i].operation < (int64_t)g->operation_count);

	for (int t = 0; t < NBG_GRAPH_TABLE_COUNT; t++) {
		const nbg_graph_table *tb = &g->tables[t];
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
	FZ_CHECK(g->relation_count <= sizeof(g->relations) / sizeof(g->relations[0]));
	for (size_t i = 0; i < g->relation_count; i++)
		FZ_CHECK(g->relations[i].id && g->relations[i].held <= g->relations[i].checked);
	FZ_CHECK(g->finding_count <= NBG_GRAPH_MAX_FINDINGS);
	FZ_CHECK(g->finding_count == 0 || g->findings != NULL);
	for (size_t i = 0; i < g->finding_count; i++) {
		FZ_CHECK(fz_terminated(g->findings[i].id, sizeof(g->findings[i].id)));
		FZ_CHECK(fz_terminated(g->findings[i].text, sizeof(g->findings[i].text)));
	}
}

static void check_text(const nbg_model *m, const nbg_graph *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	FZ_CHECK(out != NULL);
	nbg_text_graph_summary(out, m);
	nbg_text_graph(out, m, g, NBG_GRAPH_JSON_ALL);
	FZ_CHECK(fclose(out) == 0);
	FZ_CHECK(strlen(buf) == len);
	for (size_t i = 0; i < len; i++)
		FZ_CHECK(buf[i] == '\n' || ((unsigned char)buf[i] >= 0x20 &&
					    (unsigned char)buf[i] < 0x7f));
	free(buf);
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

	char *s = nbg_graph_json(m, g, NBG_GRAPH_JSON_ALL);
	FZ_CHECK(s != NULL);
	json_t *doc = json_loads(s, 0, &jerr);
	FZ_CHECK(doc != NULL && json_is_object(doc));
	json_t *f = json_object_get(doc, "graph_findings");
	FZ_CHECK(f == NULL || json_array_size(f) == g->finding_count);
	json_decref(doc);
	free(s);

	check_text(m, g);
	nbg_graph_free(g);
	nbg_model_free(m);
	return 0;
}
