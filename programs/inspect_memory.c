/*
 * inspect_memory.c - the --memory part of `nbg inspect`: the memory section
 * appended to the text report (the JSON one is nbg_json_document_write's).
 */
#include "cli.h"
#include "nbg/memory.h"

int cli_inspect_memory_text(FILE *out, const nbg_model *m)
{
	nbg_graph *g = NULL;
	nbg_mem_report *r = NULL;
	nbg_error err;

	if (nbg_graph_decode(m, &g, &err) != NBG_OK || nbg_mem_analyze(m, g, &r, &err) != NBG_OK) {
		fprintf(stderr, "nbg: memory analysis: %s\n", err.message);
		nbg_graph_free(g);
		return nbg_code_exit(err.code);
	}
	nbg_text_memory(out, m, g, r);
	nbg_mem_free(r);
	nbg_graph_free(g);
	return NBG_EXIT_OK;
}
