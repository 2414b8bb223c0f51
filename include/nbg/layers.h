/*
 * nbg/layers.h - the network as its layers compute it: each layer's
 * operator (Conv2D, DepthwiseConv2D, FullyConnected, MaxPool, Softmax, ...)
 * with its attributes, the whole tensors it reads and writes (recovered
 * from its tiles and the engine's flattened views), and the edges between
 * layers, input records and output records with the bytes that flow and
 * the evidence each rests on.  Built from the decoded commands and their
 * data flow (nbg/commands.h), the one geometry the CPU backend executes;
 * doc/commands.md ("The network view") gives every rule.
 *
 * Everything here is static-linking-only (doc/api.md): the layout may
 * change between releases.
 */
#ifndef NBG_LAYERS_H
#define NBG_LAYERS_H

#include "commands.h"
#include "graph.h"
#include "nbg.h"

#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_LAYERS_H_STATIC_LINKING_ONLY)
#define NBG_LAYERS_H_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

/* Where a shape comes from, strongest first. */
enum nbg_net_shape_basis {
	NBG_NET_SHAPE_NONE = 0,       /* no operation of the layer says */
	NBG_NET_SHAPE_RECORD = 1,     /* an INPUT or OUTPUT record the layer reads or
				       * writes whole: the record's dimensions */
	NBG_NET_SHAPE_COMMAND = 2,    /* the commands address the image as rows: a kernel
				       * or pooling window wider than 1, or a TP window,
				       * needs the true row length */
	NBG_NET_SHAPE_PROPAGATED = 3, /* the row length of a tensor of the same pixels
				       * (the producer's output, a consumer's input, or
				       * the other side of a 1x1 operation) that has one
				       * of the bases above */
	NBG_NET_SHAPE_ENGINE = 4,     /* only the engine's view: x and y may be a
				       * flattened or tiled layout, not the tensor's */
};

/* A tensor of a layer: x, y, z (0: unknown), the hardware data-type code
 * (nbg_command_data_type_name; UINT32_MAX unknown), its zero point where a
 * command states it, and, when the tensor is an I/O record's, that record
 * (else -1) whose quantization it has. */
typedef struct nbg_net_tensor {
	uint32_t dims[3];
	uint32_t data_type;
	unsigned basis;          /* enum nbg_net_shape_basis */
	int32_t record;          /* INPUT (for an input) or OUTPUT record, or -1 */
	uint32_t view[3];        /* the engine's view: the extent the commands address */
	int32_t zero_point;      /* the commands' zero point of the tensor (a TP command's
				  * in_zp / out_zp, an NN command's out_zero_point), or -1
				  * where no command states it; the scale is in no command */
} nbg_net_tensor;

/* Where an operator name comes from. */
enum nbg_net_op_basis {
	NBG_NET_OP_NONE = 0,      /* neither the commands nor the vendor's name say */
	NBG_NET_OP_COMMAND = 1,   /* the NN / TP command's fields, or the uniforms of the
				   * A733 fp16 convolution shaders (doc/commands.md) */
	NBG_NET_OP_VENDOR = 2,    /* the vendor's layer name (SH / SW operations: their
				   * programs are not decoded) */
};

/* A node of the network: a layer of the LAYERS table, or an operation that
 * names no layer (layer == UINT32_MAX). */
typedef struct nbg_net_layer {
	uint32_t layer;          /* LAYERS index, or UINT32_MAX */
	size_t first_operation;  /* its first operation (OPERATIONS index) */
	const char *vendor_name; /* the file's layer name (escape before printing) or NULL */
	const char *op;          /* operator: "Conv2D", "DepthwiseConv2D", "FullyConnected",
				  * "MaxPool", "AvgPool", "Softmax", "Add", ... or "?" */
	unsigned op_basis;       /* enum nbg_net_op_basis */
	const char *activation;  /* "relu", "prelu", "leaky-relu", "lut" or NULL */
	const char *fused;       /* a fused operation: "max-pool", "avg-pool", "add" or NULL */
	uint32_t kernel[2];      /* x, y (0: none) */
	uint32_t pool[2];        /* fused pooling window (0: none) */
	uint32_t stride;         /* output step in x and y (1, 2; 0 unknown) */
	int stride_inferred;     /* 1: no field states it (doc/commands.md) */
	size_t nn_tp_ops, other_ops;  /* its operations with a decoded command, others */
	const char *other_type;  /* the first other operation's type ("SH", "SW", ...) */
	nbg_net_tensor in, out;
} nbg_net_layer;

/* What an edge rests on. */
enum nbg_net_edge_basis {
	NBG_NET_EDGE_PROVEN = 0,   /* every operation edge behind it joins bytes the
				    * commands write and read (footprints) */
	NBG_NET_EDGE_INFERRED = 1, /* an end is an SH / SW operation, or the read is an
				    * operand at an unnamed command word: the bytes are
				    * where the patches point, the extent is inferred */
};

enum nbg_net_end { NBG_NET_LAYER = 0, NBG_NET_INPUT = 1, NBG_NET_OUTPUT = 2 };

/* An edge: node `from` (a layer index into the view, or an INPUT record)
 * to `to` (a layer index, or an OUTPUT record).  `backward`: the reader's
 * first operation runs before the writer's, so the bytes were read by a
 * later tile of a layer that had started earlier -- tile interleaving in
 * reused memory, not a network edge; such edges are kept, counted and never
 * drawn as the network's. */
typedef struct nbg_net_edge {
	unsigned from_kind, to_kind; /* enum nbg_net_end */
	size_t from, to;
	uint64_t bytes;
	unsigned basis;          /* enum nbg_net_edge_basis */
	int backward;
	/* A channel slice: the reader's only producer, whose tensor it reads
	 * channels of (same x and y, fewer channels, the edge's bytes exactly
	 * the reader's tensor): slice_of the producer's channel count, else 0. */
	uint32_t slice_of;
} nbg_net_edge;

/* A data-flow relation that fails: the view's edges are then unreliable
 * where it fails, and every rendering says so (a banner). */
typedef struct nbg_net_warning {
	const char *relation;    /* the relation's id (nbg_commands_relation_at) */
	uint64_t failed, checked;
} nbg_net_warning;
#define NBG_NET_MAX_WARNINGS 4u

typedef struct nbg_network nbg_network;

/* The network view of a parsed model's decoded graph and commands.  NBG_OK
 * and a new view in *out (free with nbg_network_free), or OUT_OF_MEMORY /
 * INVALID_ARGUMENT with *out NULL. */
NBG_API nbg_code nbg_network_build(const nbg_model *m, const nbg_graph *g, const nbg_commands *c,
				   nbg_network **out, nbg_error *err);
NBG_API void nbg_network_free(nbg_network *n);
/* Layers in the order their first operation runs. */
NBG_API size_t nbg_network_layer_count(const nbg_network *n);
NBG_API const nbg_net_layer *nbg_network_layer_at(const nbg_network *n, size_t i);
/* The view's node of OPERATIONS record `operation`, or SIZE_MAX. */
NBG_API size_t nbg_network_layer_of(const nbg_network *n, size_t operation);
/* Edges, sorted by (from, to); backward ones included. */
NBG_API size_t nbg_network_edge_count(const nbg_network *n);
NBG_API const nbg_net_edge *nbg_network_edge_at(const nbg_network *n, size_t i);
NBG_API size_t nbg_network_warning_count(const nbg_network *n);
NBG_API const nbg_net_warning *nbg_network_warning_at(const nbg_network *n, size_t i);

/* "record", "command", "propagated", "engine view", "none". */
NBG_API const char *nbg_net_shape_basis_name(unsigned basis);
/* "commands", "vendor name", "none". */
NBG_API const char *nbg_net_op_basis_name(unsigned basis);
/* The operator with its attributes ("Conv2D 3x3 /2 relu +max-pool 2x2")
 * into buf; returns buf. */
NBG_API char *nbg_net_operator_text(const nbg_net_layer *l, char *buf, size_t size);
/* A tensor's shape ("112x112x32"; "?" unknown), with " (engine view)"
 * where only the engine's view is known; returns buf. */
NBG_API char *nbg_net_shape_text(const nbg_net_tensor *t, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
#endif
