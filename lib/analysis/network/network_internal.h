/*
 * network_internal.h - what the network view's parts share: the view
 * (network.c builds the nodes and names their operators), the shapes
 * (network_shape.c) and the edges (network_edges.c).  Private to libnbg.
 */
#ifndef NBG_ANALYSIS_NETWORK_INTERNAL_H
#define NBG_ANALYSIS_NETWORK_INTERNAL_H

#include "common/internal.h"
#include "nbg/layers.h"

struct nbg_network {
	const nbg_model *m;
	const nbg_graph *g;
	const nbg_commands *c;
	size_t n;                /* nodes */
	nbg_net_layer *nodes;    /* in the order their first operation runs */
	size_t ops;              /* OPERATIONS records */
	size_t *node_of;         /* per operation: its node, or SIZE_MAX (not drawn) */
	size_t edge_n;
	nbg_net_edge *edges;
	size_t warn_n;
	nbg_net_warning warn[NBG_NET_MAX_WARNINGS];
};

/* The engine views and shapes of every node (network_shape.c); 0, or -1
 * when memory runs out. */
NBG_INTERNAL int nbg_network_shapes(nbg_network *n);
/* The function a TP lookup-table activation's table holds ("tanh",
 * "sigmoid", "silu", "leaky-relu", "relu"), or NULL when none of them
 * (network_lut.c). */
NBG_INTERNAL const char *nbg_network_lut_function(const nbg_network *n, const nbg_cmd_op *op);
NBG_INTERNAL const char *nbg_network_nnlut_function(const nbg_network *n, const nbg_cmd_op *op);
/* The edges between nodes and records (network_edges.c); 0 or -1. */
NBG_INTERNAL int nbg_network_edges(nbg_network *n);

#endif
