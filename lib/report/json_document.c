/*
 * json_document.c - nbg_json_document_write(): the one JSON document of
 * `nbg inspect --json` and its tables, written straight to a stream.  The
 * parts (core report, graph, commands, memory, weights) are written by the
 * members' writers of report_internal.h, in that order; each is decoded once
 * (nbg_decoded) and shared by them.
 */
#include <stdlib.h>

#include "nbg/decoded.h"
#include "nbg/report.h"
#include "report/report_internal.h"

/* The decoded inputs of the parts `what` asks for, from d; NBG_OK or the
 * failure. */
typedef struct doc_parts {
	const nbg_graph *g;
	const nbg_commands *c;
	const nbg_mem_report *r;
	const nbg_weights *w;
	const nbg_network *n;
	int sizes; /* r gives the graph's operations their sizes */
} doc_parts;

static nbg_code decode_parts(nbg_decoded *d, unsigned what, doc_parts *p, nbg_error *err)
{
	nbg_code rc;

	memset(p, 0, sizeof(*p));
	if (!(what & (NBG_GRAPH_JSON_ALL | NBG_JSON_DOC_COMMANDS | NBG_JSON_DOC_MEMORY |
		      NBG_JSON_DOC_WEIGHTS | NBG_JSON_DOC_NETWORK)))
		return NBG_OK;
	if ((rc = nbg_decoded_graph(d, &p->g, err)) != NBG_OK)
		return rc;
	if ((what & (NBG_JSON_DOC_COMMANDS | NBG_JSON_DOC_WEIGHTS)) &&
	    (rc = nbg_decoded_commands(d, &p->c, err)) != NBG_OK)
		return rc;
	if ((what & NBG_JSON_DOC_WEIGHTS) && (rc = nbg_decoded_weights(d, &p->w, err)) != NBG_OK)
		return rc;
	if ((what & NBG_JSON_DOC_NETWORK) && (rc = nbg_decoded_network(d, &p->n, err)) != NBG_OK)
		return rc;
	if (what & NBG_JSON_DOC_MEMORY) {
		if ((rc = nbg_decoded_memory(d, &p->r, err)) != NBG_OK)
			return rc;
		p->sizes = 1;
	} else if (what & NBG_GRAPH_JSON_OPERATIONS) {
		/* without the analysis the operations have no sizes */
		p->sizes = nbg_decoded_memory(d, &p->r, NULL) == NBG_OK;
	}
	return NBG_OK;
}

nbg_code nbg_json_document_write(FILE *out, const nbg_model *m, const char *path, unsigned what,
				 nbg_error *err)
{
	nbg_decoded *d = NULL;
	nbg_code rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!out || !m)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model",
				     "nbg_json_document_write needs a stream and a model");
	if ((rc = nbg_decoded_new(m, &d, err)) == NBG_OK)
		rc = nbg_json_document_write_decoded(out, d, path, what, err);
	nbg_decoded_free(d);
	return rc;
}

nbg_code nbg_json_document_write_decoded(FILE *out, nbg_decoded *d, const char *path,
					 unsigned what, nbg_error *err)
{
	const nbg_model *m = nbg_decoded_model(d);
	doc_parts p;
	nbg_jw w;
	nbg_code rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!out || !m)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model",
				     "nbg_json_document_write_decoded needs a stream and a decoded "
				     "model");
	if ((rc = decode_parts(d, what, &p, err)) != NBG_OK)
		return rc;
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
	if (what & NBG_JSON_DOC_NETWORK)
		nbg_network_json_write(&w, m, p.n);
	nbg_jw_end(&w);
	return nbg_jw_status(&w, err);
}
