/*
 * fuzz_memory.c - libFuzzer harness: the memory analysis (nbg_mem_analyze),
 * its JSON (nbg_json_document_write's "memory") and its text (nbg_text_memory and the
 * per-operation table).  Whenever the parse succeeds the analysis must
 * succeed; the figures must add up the way doc/memory.md says (unless a sum
 * saturated), the rounded figures must be multiples of their unit and never
 * below the exact ones, the lists must have the lengths of the records they
 * come from, the JSON must read back, and the text must be text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_common.h"
#include "nbg/memory.h"
#include "nbg/report.h"

static uint64_t vend(const nbg_mem_report *r, nbg_mem_figure f)
{
	return nbg_mem_value_of(r, f).vendor;
}

static int sat(uint64_t v)
{
	return v == UINT64_MAX;
}

static void check_figures(const nbg_model *m, const nbg_graph *g, const nbg_mem_report *r)
{
	static const nbg_mem_figure aligned64[] = { NBG_MEM_INPUTS, NBG_MEM_OUTPUTS,
						    NBG_MEM_COEFFICIENTS, NBG_MEM_LOAD_STATES,
						    NBG_MEM_NN_TP_INSTRUCTIONS,
						    NBG_MEM_DYNAMIC_INPUTS };
	uint64_t cb = vend(r, NBG_MEM_LOAD_STATES) + vend(r, NBG_MEM_NN_TP_INSTRUCTIONS) +
		      vend(r, NBG_MEM_PPU_INSTRUCTIONS);

	for (size_t i = 0; i < sizeof(aligned64) / sizeof(aligned64[0]); i++) {
		nbg_mem_value v = nbg_mem_value_of(r, aligned64[i]);
		FZ_CHECK(sat(v.vendor) || v.vendor % 64 == 0);
		FZ_CHECK(sat(v.vendor) || aligned64[i] == NBG_MEM_COEFFICIENTS ||
			 v.vendor >= v.exact);
	}
	FZ_CHECK(sat(vend(r, NBG_MEM_PPU_INSTRUCTIONS)) || vend(r, NBG_MEM_PPU_INSTRUCTIONS) % 256 == 0);
	FZ_CHECK(sat(vend(r, NBG_MEM_VIDEO_TOTAL)) || vend(r, NBG_MEM_VIDEO_TOTAL) % 256 == 0);
	if (!sat(cb))
		FZ_CHECK(vend(r, NBG_MEM_COMMAND_BUFFER) == cb);
	FZ_CHECK(vend(r, NBG_MEM_DYNAMIC) ==
		 vend(r, NBG_MEM_DYNAMIC_INPUTS) + vend(r, NBG_MEM_DYNAMIC_OUTPUTS) ||
		 sat(vend(r, NBG_MEM_DYNAMIC)));
	FZ_CHECK(vend(r, NBG_MEM_HEAP_RESERVE) == 20480);
	FZ_CHECK(vend(r, NBG_MEM_POOL) == nbg_model_memory(m)->memory_pool_bytes);
	FZ_CHECK(vend(r, NBG_MEM_SYSTEM_TOTAL) ==
		 vend(r, NBG_MEM_NBG_HEADER) + vend(r, NBG_MEM_ALLOCATED) ||
		 sat(vend(r, NBG_MEM_SYSTEM_TOTAL)));
	FZ_CHECK(vend(r, NBG_MEM_FLASH_VIDEO_TOTAL) <= vend(r, NBG_MEM_VIDEO_TOTAL));
	FZ_CHECK(nbg_mem_operation_count(r) == nbg_graph_summary_of(g)->operation_count);
	FZ_CHECK(nbg_mem_layer_count(r) == nbg_graph_summary_of(g)->layer_count);
	FZ_CHECK(nbg_mem_share_buffer_count(r) == nbg_model_input_count(m) + nbg_model_output_count(m));
	FZ_CHECK(nbg_mem_conflict_count(r) <= 1000);
	{
		const nbg_mem_sharing *s = nbg_mem_sharing_of(r);
		int clear = 1;
		for (size_t i = 0; i < nbg_model_input_count(m); i++) {
			const nbg_mem_share_buffer *b = nbg_mem_share_buffer_at(r, i);
			FZ_CHECK(!b->clear || (b->reads && b->layer_low == b->layer_high &&
					       !b->conflicts));
			FZ_CHECK(!b->can_share || (b->clear && s->pool_bytes));
			clear &= b->clear;
		}
		FZ_CHECK(s->inputs_clear == clear);
		FZ_CHECK((s->verdict == NBG_MEM_SHARE_POOL_EMPTY) == !s->pool_bytes);
		FZ_CHECK(!s->pool_bytes || (s->verdict == NBG_MEM_SHARE_POSSIBLE) == clear);
		FZ_CHECK(s->verdict != NBG_MEM_SHARE_CONFLICT || s->conflicts_total);
	}
	for (size_t k = 1; k < nbg_mem_layer_count(r); k++)
		FZ_CHECK(nbg_mem_layer_ranked(r, k - 1)->total_bytes >=
			 nbg_mem_layer_ranked(r, k)->total_bytes);
	for (size_t i = 0; i < nbg_mem_operation_count(r); i++) {
		const nbg_mem_operation *x = nbg_mem_operation_at(r, i);
		FZ_CHECK(x->coefficient_bytes_vendor <= x->coefficient_bytes ||
			 sat(x->coefficient_bytes));
		FZ_CHECK(x->coefficient_patches || !x->coefficient_bytes);
	}
}

static void check_text(const nbg_model *m, const nbg_graph *g, const nbg_mem_report *r)
{
	fz_text t;
	FILE *out = fz_text_open(&t);

	nbg_text_memory(out, m, g, r);
	nbg_text_memory_operations(out, g, r);
	fz_text_check(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nbg_model *m = NULL;
	nbg_graph *g = NULL;
	nbg_mem_report *r = NULL;
	nbg_error err;
	json_error_t jerr;

	if (fz_parse(data, size, &m, &err) != NBG_OK)
		return 0;
	FZ_CHECK(nbg_graph_decode(m, &g, &err) == NBG_OK);
	FZ_CHECK(nbg_mem_analyze(m, g, &r, &err) == NBG_OK);
	check_figures(m, g, r);

	char *s = fz_document(m, "fuzz.nb", NBG_JSON_DOC_NO_CORE | NBG_JSON_DOC_MEMORY);
	FZ_CHECK(s != NULL);
	json_t *doc = json_loads(s, 0, &jerr);
	FZ_CHECK(doc != NULL && json_is_object(json_object_get(doc, "memory")));
	json_decref(doc);
	free(s);

	check_text(m, g, r);
	nbg_mem_free(r);
	nbg_graph_free(g);
	nbg_model_free(m);
	return 0;
}
