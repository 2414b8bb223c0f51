/*
 * network_internal.h - what the network view's parts share: the view
 * (network.c builds the nodes and names their operators), the shapes
 * (network_shape.c) and the edges (network_edges.c).  Private to libnbg.
 */
#ifndef NBG_ANALYSIS_NETWORK_INTERNAL_H
#define NBG_ANALYSIS_NETWORK_INTERNAL_H

#include "analysis/graph/uniforms.h"
#include "common/internal.h"
#include "nbg/layers.h"

/* A node the A733 fp16 convolution shaders compute (network_shconv.c). */
enum { NET_SHC_NONE = 0, NET_SHC_CONV, NET_SHC_DEPTHWISE };
typedef struct net_shconv {
	int kind;                /* NET_SHC_* */
	nbg_sh_conv g;           /* the im2col's geometry with the product's n, or the
				  * depthwise shader's */
} net_shconv;

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
	net_shconv *shc;         /* per node */
	size_t warn_n;
	nbg_net_warning warn[NBG_NET_MAX_WARNINGS];
};

/* Per node, what its fp16 convolution shaders compute (n->shc); 0, or -1
 * when memory runs out.  nbg_network_shconv_spatial: whether the shader
 * needs its images' true rows -- a window wider than one pixel, a stride or
 * padding place each output pixel's window by the rows, as does an output
 * of another size than the input; a 1x1 window with stride 1 and no padding
 * reads pixel q for output pixel q in any row length (as an NN 1x1
 * convolution does). */
NBG_INTERNAL int nbg_network_shconv(nbg_network *n);
NBG_INTERNAL int nbg_network_shconv_spatial(const nbg_sh_conv *g);
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
