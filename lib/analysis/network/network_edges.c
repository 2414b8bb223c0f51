/*
 * network_edges.c - the edges of the network view: the operation edges of
 * the data flow (dataflow.c: the last writer of every byte read) between
 * nodes, INPUT records and OUTPUT records, one edge per pair.  Its bytes:
 * per producing operation what the readers read of it, never more than it
 * wrote (two readers of the same bytes count them once).  Its basis: proven
 * when every operation edge behind it joins decoded footprints, inferred
 * when one rests on an SH / SW operation's references or on an operand at
 * an unnamed command word.  Backward: the reader started before the writer
 * (tile interleaving in reused memory), not an edge of the network.
 */
#include <stdlib.h>

#include "analysis/network/network_internal.h"

typedef struct raw_edge {
	unsigned fk, tk;
	size_t from, to;
	uint64_t bytes, producer; /* producing operation, or UINT64_MAX - record */
	unsigned basis;
} raw_edge;

static int cmp_raw(const void *x, const void *y)
{
	const raw_edge *p = x, *q = y;
	if (p->fk != q->fk)
		return p->fk < q->fk ? -1 : 1;
	if (p->from != q->from)
		return p->from < q->from ? -1 : 1;
	if (p->tk != q->tk)
		return p->tk < q->tk ? -1 : 1;
	return (p->to > q->to) - (p->to < q->to);
}

/* The bytes of the operation edges v[0..k) of one pair (see above). */
static uint64_t flow_bytes(const nbg_commands *c, raw_edge *v, size_t k)
{
	uint64_t total = 0;

	for (size_t i = 0; i < k; i++) {
		uint64_t read = 0, w = v[i].producer;
		if (w == UINT64_MAX - 1) /* counted with an earlier one */
			continue;
		for (size_t j = i; j < k; j++)
			if (v[j].producer == w) {
				read += v[j].bytes;
				if (j > i)
					v[j].producer = UINT64_MAX - 1;
			}
		uint64_t written = w < UINT64_MAX / 2 ? nbg_commands_bytes_written(c, (size_t)w) : 0;
		if (written && read > written)
			read = written;
		total += read;
	}
	return total;
}

/* The operation edge e as a raw edge between view ends; 0 when an end is
 * not drawn or both ends are one node. */
static int raw_of(const nbg_network *n, const nbg_cmd_edge *e, raw_edge *r)
{
	r->fk = e->kind == NBG_CMD_EDGE_INPUT ? NBG_NET_INPUT : NBG_NET_LAYER;
	r->tk = e->kind == NBG_CMD_EDGE_OUTPUT ? NBG_NET_OUTPUT : NBG_NET_LAYER;
	if (e->kind == NBG_CMD_EDGE_INPUT) {
		if (e->from >= nbg_model_input_count(n->m))
			return 0;
		r->from = e->from;
		r->producer = UINT64_MAX / 2 + e->from;
	} else {
		if (e->from >= n->ops || n->node_of[e->from] == SIZE_MAX)
			return 0;
		r->from = n->node_of[e->from];
		r->producer = e->from;
	}
	if (e->kind == NBG_CMD_EDGE_OUTPUT) {
		if (e->to >= nbg_model_output_count(n->m))
			return 0;
		r->to = e->to;
	} else {
		if (e->to >= n->ops || n->node_of[e->to] == SIZE_MAX)
			return 0;
		r->to = n->node_of[e->to];
	}
	r->bytes = e->bytes;
	r->basis = e->basis == NBG_CMD_EDGE_FOOTPRINT ? NBG_NET_EDGE_PROVEN : NBG_NET_EDGE_INFERRED;
	return !(r->fk == NBG_NET_LAYER && r->tk == NBG_NET_LAYER && r->from == r->to);
}

int nbg_network_edges(nbg_network *n)
{
	size_t total = nbg_commands_edge_count(n->c), k = 0;
	raw_edge *v = calloc(total + 1, sizeof(*v));

	n->edges = calloc(total + 1, sizeof(*n->edges));
	if (!v || !n->edges) {
		free(v);
		return -1;
	}
	for (size_t i = 0; i < total; i++)
		k += (size_t)raw_of(n, nbg_commands_edge_at(n->c, i), &v[k]);
	if (k)
		qsort(v, k, sizeof(*v), cmp_raw);
	for (size_t i = 0; i < k;) {
		size_t j = i;
		nbg_net_edge *e = &n->edges[n->edge_n++];
		e->from_kind = v[i].fk;
		e->to_kind = v[i].tk;
		e->from = v[i].from;
		e->to = v[i].to;
		for (; j < k && !cmp_raw(&v[i], &v[j]); j++)
			if (v[j].basis > e->basis)
				e->basis = v[j].basis;
		e->bytes = flow_bytes(n->c, v + i, j - i);
		/* nodes are in first-run order: a reader that started first is
		 * an earlier node */
		e->backward = e->from_kind == NBG_NET_LAYER && e->to_kind == NBG_NET_LAYER &&
			      e->to < e->from;
		i = j;
	}
	free(v);
	return 0;
}
