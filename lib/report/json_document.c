/*
 * json_document.c - nbg_json_document_write(): the one JSON document of
 * `nbg inspect --json` and its tables, written straight to a stream.  The
 * parts (core report, graph, commands, memory, weights) are written by the
 * members' writers of report_internal.h, in that order; the graph is decoded
 * once and shared by them.
 */
#include <stdlib.h>

#include "nbg/report.h"
#include "report/report_internal.h"

/* The decoded inputs of the parts `what` asks for; NBG_OK or the failure. */
typedef struct doc_parts {
	nbg_graph *g;
	nbg_commands *c;
	nbg_mem_report *r;
	nbg_weights *w;
	int sizes; /* r gives the graph's operations their sizes */
} doc_parts;

static nbg_code decode_parts(const nbg_model *m, unsigned what, doc_parts *p, nbg_error *err)
{
	nbg_code rc;

	memset(p, 0, sizeof(*p));
	if (!(what & (NBG_GRAPH_JSON_ALL | NBG_JSON_DOC_COMMANDS | NBG_JSON_DOC_MEMORY |
		      NBG_JSON_DOC_WEIGHTS)))
		return NBG_OK;
	if ((rc = nbg_graph_decode(m, &p->g, err)) != NBG_OK)
		return rc;
	if ((what & (NBG_JSON_DOC_COMMANDS | NBG_JSON_DOC_WEIGHTS)) &&
	    (rc = nbg_commands_decode(m, p->g, &p->c, err)) != NBG_OK)
		return rc;
	if ((what & NBG_JSON_DOC_WEIGHTS) &&
	    (rc = nbg_weights_decode(m, p->g, p->c, &p->w, err)) != NBG_OK)
		return rc;
	if (what & NBG_JSON_DOC_MEMORY) {
		if ((rc = nbg_mem_analyze(m, p->g, &p->r, err)) != NBG_OK)
			return rc;
		p->sizes = 1;
	} else if (what & NBG_GRAPH_JSON_OPERATIONS) {
		/* without the analysis the operations have no sizes */
		p->sizes = nbg_mem_analyze(m, p->g, &p->r, NULL) == NBG_OK;
	}
	return NBG_OK;
}

static void free_parts(doc_parts *p)
{
	nbg_mem_free(p->r);
	nbg_weights_free(p->w);
	nbg_commands_free(p->c);
	nbg_graph_free(p->g);
}

nbg_code nbg_json_document_write(FILE *out, const nbg_model *m, const char *path, unsigned what,
				 nbg_error *err)
{
	doc_parts p;
	nbg_jw w;
	nbg_code rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!out || !m)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model",
				     "nbg_json_document_write needs a stream and a model");
	if ((rc = decode_parts(m, what, &p, err)) != NBG_OK) {
		free_parts(&p);
		return rc;
	}
	nbg_jw_init(&w, out);
	nbg_jw_object(&w, NULL);
	if (what & NBG_JSON_DOC_NO_CORE) {
		nbg_jw_put(&w, "nbgkit_version", json_string(NBG_VERSION_STRING));
		nbg_jw_put(&w, "path", nbg_json_path(path));
	} else {
		nbg_report_json_write(&w, m, path);
	}
	if (what & NBG_GRAPH_JSON_ALL)
		nbg_graph_json_write(&w, m, p.g, what & NBG_GRAPH_JSON_ALL, p.sizes ? p.r : NULL);
	if (what & NBG_JSON_DOC_COMMANDS)
		nbg_commands_json_write(&w, m, p.g, p.c);
	if (what & NBG_JSON_DOC_MEMORY)
		nbg_mem_json_write(&w, m, p.g, p.r);
	if (what & NBG_JSON_DOC_WEIGHTS)
		nbg_weights_json_write(&w, m, p.g, p.c, p.w);
	nbg_jw_end(&w);
	free_parts(&p);
	return nbg_jw_status(&w, err);
}
