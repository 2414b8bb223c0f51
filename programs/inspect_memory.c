/*
 * inspect_memory.c - the --memory part of `nbg inspect`: the memory section
 * appended to the text report (the JSON one is nbg_json_document_write's).
 */
#include "cli.h"
#include "nbg/decoded.h"
#include "nbg/memory.h"

int cli_inspect_memory_text(FILE *out, nbg_decoded *d)
{
	const nbg_graph *g = NULL;
	const nbg_mem_report *r = NULL;
	nbg_error err;

	if (nbg_decoded_graph(d, &g, &err) != NBG_OK || nbg_decoded_memory(d, &r, &err) != NBG_OK) {
		fprintf(stderr, "nbg: memory analysis: %s\n", err.message);
		return nbg_code_exit(err.code);
	}
	nbg_text_memory(out, nbg_decoded_model(d), g, r);
	return NBG_EXIT_OK;
}
