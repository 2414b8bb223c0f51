/*
 * decoded.c - nbg_decoded: the graph, commands, weights, memory report and
 * ledger of one parsed model, each decoded on first use and kept, a failure
 * kept as well (include/nbg/decoded.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "nbg/decoded.h"

/* The parts, and the one each is decoded from (-1: the model). */
enum { P_GRAPH, P_COMMANDS, P_WEIGHTS, P_MEMORY, P_LEDGER, P_NETWORK, P__COUNT };
static const int input_of[P__COUNT] = { -1, P_GRAPH, P_COMMANDS, P_GRAPH, P_WEIGHTS, P_COMMANDS };

/* One part's outcome: whether it was computed, its code and its error. */
typedef struct part {
	int done;
	nbg_code rc;
	nbg_error err;
} part;

struct nbg_decoded {
	const nbg_model *m;
	part p[P__COUNT];
	nbg_graph *g;
	nbg_commands *c;
	nbg_weights *w;
	nbg_mem_report *r;
	nbg_ledger *l;
	nbg_network *n;
};

nbg_code nbg_decoded_new(const nbg_model *m, nbg_decoded **out, nbg_error *err)
{
	if (out)
		*out = NULL;
	if (!m || !out)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model",
				     "nbg_decoded_new needs a parsed model and a result pointer");
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	(*out)->m = m;
	return NBG_OK;
}

void nbg_decoded_free(nbg_decoded *d)
{
	if (!d)
		return;
	nbg_network_free(d->n);
	nbg_ledger_free(d->l);
	nbg_mem_free(d->r);
	nbg_weights_free(d->w);
	nbg_commands_free(d->c);
	nbg_graph_free(d->g);
	free(d);
}

const nbg_model *nbg_decoded_model(const nbg_decoded *d)
{
	return d ? d->m : NULL;
}

/* Decodes part k, its input decoded already. */
static nbg_code decode(nbg_decoded *d, int k, nbg_error *err)
{
	switch (k) {
	case P_GRAPH:
		return nbg_graph_decode(d->m, &d->g, err);
	case P_COMMANDS:
		return nbg_commands_decode(d->m, d->g, &d->c, err);
	case P_WEIGHTS:
		return nbg_weights_decode(d->m, d->g, d->c, &d->w, err);
	case P_MEMORY:
		return nbg_mem_analyze(d->m, d->g, &d->r, err);
	case P_NETWORK:
		return nbg_network_build(d->m, d->g, d->c, &d->n, err);
	default:
		return nbg_ledger_build_weights(d->m, d->w, &d->l, err);
	}
}

/* Part k's outcome, decoding it (and its inputs) the first time: its code,
 * its error copied into err. */
static nbg_code part_of(nbg_decoded *d, int k, nbg_error *err)
{
	part *p = &d->p[k];

	if (!p->done) {
		nbg_code rc = input_of[k] < 0 ? NBG_OK : part_of(d, input_of[k], &p->err);
		if (rc == NBG_OK)
			rc = decode(d, k, &p->err);
		p->done = 1;
		p->rc = rc;
		if (rc == NBG_OK)
			memset(&p->err, 0, sizeof(p->err));
	}
	if (err)
		*err = p->err;
	return p->rc;
}

/* A getter's work: part k's outcome, or NBG_E_INVALID_ARGUMENT without an
 * object (where nbg_decoded_new failed: out of memory) or a result
 * pointer. */
static nbg_code get(nbg_decoded *d, int k, int has_out, nbg_error *err)
{
	if (!d || !has_out)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "decoded", "%s",
				     d ? "no result pointer was given"
				       : "no decoded model was given (out of memory making it?)");
	return part_of(d, k, err);
}

nbg_code nbg_decoded_graph(nbg_decoded *d, const nbg_graph **out, nbg_error *err)
{
	nbg_code rc = get(d, P_GRAPH, out != NULL, err);

	if (out)
		*out = rc == NBG_OK ? d->g : NULL;
	return rc;
}

nbg_code nbg_decoded_commands(nbg_decoded *d, const nbg_commands **out, nbg_error *err)
{
	nbg_code rc = get(d, P_COMMANDS, out != NULL, err);

	if (out)
		*out = rc == NBG_OK ? d->c : NULL;
	return rc;
}

nbg_code nbg_decoded_weights(nbg_decoded *d, const nbg_weights **out, nbg_error *err)
{
	nbg_code rc = get(d, P_WEIGHTS, out != NULL, err);

	if (out)
		*out = rc == NBG_OK ? d->w : NULL;
	return rc;
}

nbg_code nbg_decoded_memory(nbg_decoded *d, const nbg_mem_report **out, nbg_error *err)
{
	nbg_code rc = get(d, P_MEMORY, out != NULL, err);

	if (out)
		*out = rc == NBG_OK ? d->r : NULL;
	return rc;
}

nbg_code nbg_decoded_ledger(nbg_decoded *d, const nbg_ledger **out, nbg_error *err)
{
	nbg_code rc = get(d, P_LEDGER, out != NULL, err);

	if (out)
		*out = rc == NBG_OK ? d->l : NULL;
	return rc;
}

nbg_code nbg_decoded_network(nbg_decoded *d, const nbg_network **out, nbg_error *err)
{
	nbg_code rc = get(d, P_NETWORK, out != NULL, err);

	if (out)
		*out = rc == NBG_OK ? d->n : NULL;
	return rc;
}
