/*
 * inspect_memory.c - the --memory part of `nbg inspect`: the memory section
 * appended to the text report, the "memory" object merged into the JSON one.
 */
#include <stdlib.h>

#include <jansson.h>

#include "cli.h"
#include "nbg/memory.h"

int nbg_inspect_memory_text(FILE *out, const nbg_model *m)
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

char *nbg_inspect_memory_json(const nbg_model *m, char *doc)
{
	nbg_graph *g = NULL;
	nbg_mem_report *r = NULL;
	json_t *root = doc ? json_loads(doc, 0, NULL) : NULL, *mem = NULL;
	char *ms = NULL, *out = NULL;
	nbg_error err;

	if (root && nbg_graph_decode(m, &g, &err) == NBG_OK &&
	    nbg_mem_analyze(m, g, &r, &err) == NBG_OK && (ms = nbg_mem_json(m, g, r, 0)) &&
	    (mem = json_loads(ms, 0, NULL)) && json_object_update(root, mem) == 0)
		out = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(mem);
	json_decref(root);
	free(ms);
	free(doc);
	nbg_mem_free(r);
	nbg_graph_free(g);
	return out;
}
