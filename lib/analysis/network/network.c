/*
 * network.c - nbg_network_build(): the network as its layers compute it
 * (nbg/layers.h).  A node per layer that has an operation in the data flow
 * (an NN / TP operation with a decoded command, or another one that
 * references memory), in the order its first operation runs; an operation
 * that names no layer is a node of its own.  Each node's operator comes from
 * its commands where they say it (an NN command's kernel, depthwise and
 * fully-connected fields, its fused ReLU and pooling; a TP command's
 * pooling and lookup fields), else from the vendor's layer name (SH and SW
 * programs are not decoded), else "?".  Shapes: network_shape.c; edges:
 * network_edges.c.  doc/commands.md ("The network view").
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/graph/commands_lib.h"
#include "analysis/network/network_internal.h"

/* The vendor's layer names, by prefix: the operator each names.  Longest
 * prefixes first where one extends another. */
static const struct vendor_op {
	const char *prefix, *op, *activation, *fused;
} vendor_ops[] = {
	{ "ConvolutionReluPoolingAddLayer", "Conv2D", NULL, "add" },
	{ "ConvolutionReluPoolingLayer", "Conv2D", NULL, NULL },
	{ "ConvolutionReluLayer", "Conv2D", "relu", NULL },
	{ "ConvolutionLayer", "Conv2D", NULL, NULL },
	{ "DepthwiseConvLayer", "DepthwiseConv2D", NULL, NULL },
	{ "FullyConnectedReluLayer", "FullyConnected", NULL, NULL },
	{ "FullyConnectedLayer", "FullyConnected", NULL, NULL },
	{ "PoolingLayer", "Pool", NULL, NULL },
	{ "Max Pooling", "MaxPool", NULL, NULL },
	{ "Average Pooling", "AvgPool", NULL, NULL },
	{ "ActivationLayer", "Activation", NULL, NULL },
	{ "PReluLayer", "PReLU", "prelu", NULL },
	{ "LeakyReluLayer", "LeakyReLU", "leaky-relu", NULL },
	{ "TensorTranspose", "Transpose", NULL, NULL },
	{ "TensorAdd", "Add", NULL, NULL },
	{ "TensorSub", "Sub", NULL, NULL },
	{ "TensorMul", "Mul", NULL, NULL },
	{ "TensorDiv", "Div", NULL, NULL },
	{ "TensorScale", "Scale", NULL, NULL },
	{ "TensorCopy", "Copy", NULL, NULL },
	{ "TensorPadOperation", "Pad", NULL, NULL },
	{ "TensorStrideSlice", "StridedSlice", NULL, NULL },
	{ "Softmax2Layer", "Softmax", NULL, NULL },
	{ "SoftMax2", "Softmax", NULL, NULL },
	{ "ReduceMeanLayer", "Mean", NULL, NULL },
	{ "ReduceSumLayer", "Sum", NULL, NULL },
	{ "ConcatLayer", "Concat", NULL, NULL },
	{ "Max", "Maximum", NULL, NULL },
};

static const struct vendor_op *vendor_op(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(vendor_ops) / sizeof(vendor_ops[0]); i++) {
		size_t len = strlen(vendor_ops[i].prefix);
		/* "Max" names the layer whole; the others are prefixes */
		if (!strncmp(name, vendor_ops[i].prefix, len) &&
		    (name[len] == 0 || name[len] == '_' || strcmp(vendor_ops[i].prefix, "Max")))
			return &vendor_ops[i];
	}
	return NULL;
}

/* An NN convolution's operator, attributes and fused operations. */
static void nn_operator(nbg_net_layer *l, const nbg_cmd_op *op)
{
	/* a kernel that covers its whole image, giving one pixel, is a fully
	 * connected layer over the image's values (a 1x1 convolution of a 1x1
	 * image; LeNet's 800 inputs as a 10x10 kernel over 10x10x8) */
	int fc = op->kernel[0] == op->in[0] && op->kernel[1] == op->in[1] && op->out[0] == 1 &&
		 op->out[1] == 1 && !op->pooling;
	l->op = !strcmp(op->kind, "fully connected") || fc ? "FullyConnected"
	      : !strcmp(op->kind, "depthwise conv")        ? "DepthwiseConv2D"
							   : "Conv2D";
	l->op_basis = NBG_NET_OP_COMMAND;
	if (!fc && strcmp(op->kind, "fully connected")) {
		l->kernel[0] = op->kernel[0];
		l->kernel[1] = op->kernel[1];
	}
	if (op->relu)
		l->activation = "relu";
	if (op->pooling == 1 || op->pooling == 2) {
		l->fused = op->pooling == 1 ? "max-pool" : "avg-pool";
		l->pool[0] = l->pool[1] = op->pooling_size;
		l->stride = 1;
	} else {
		l->stride = op->out_subsample;
		l->stride_inferred = op->out_subsample_inferred;
	}
}

/* A TP operation's operator: max pooling where its processing fields are
 * one of the modes the CPU backend executes as max pooling (lib/cpu/ops/
 * tp.c), a lookup-table activation, else a layout operation (copy,
 * transpose, reshape, pad, concatenation: the fields move bytes, the
 * vendor's name says which). */
static void tp_operator(const nbg_network *n, nbg_net_layer *l, const nbg_cmd_op *op)
{
	const nbg_cmd *cmd = nbg_commands_at(n->c, NBG_CMD_TP, op->command);
	uint32_t hm = cmd ? nbg_cmd_tp(cmd, NBG_TPF_ALU_HORZ_PROCESSING) : 0;
	uint32_t hc = cmd ? nbg_cmd_tp(cmd, NBG_TPF_ALU_HORZ_PROC_COUNT) : 0;
	uint32_t hs = cmd ? nbg_cmd_tp(cmd, NBG_TPF_ALU_HORZ_PROC_STRIDE) : 0;

	l->op_basis = NBG_NET_OP_COMMAND;
	if (!strcmp(op->kind, "lut")) {
		const char *f = nbg_network_lut_function(n, op);
		l->op = "Activation";
		l->activation = f ? f : "lut";
	} else if (!strcmp(op->kind, "pool")) {
		l->op = "Pool";
		if ((hm == 3 && hc == 1 && !hs) || (hm == 3 && hc == 2 && hs) || (hm == 1 && hc == 1 && !hs)) {
			l->op = "MaxPool";
			l->pool[0] = l->pool[1] = hc + 1;
			l->stride = hm == 3 ? 2 : 1;
		}
	} else {
		l->op = NULL; /* the vendor's name says which layout */
		l->op_basis = NBG_NET_OP_NONE;
	}
}

/* An NN_LUT operation that is a convolution with a table
 * (nbg_nnlut_convolution, over its coefficient bytes). */
static int nnlut_convolution(const nbg_network *n, const nbg_cmd_op *op)
{
	uint64_t size = 0;
	return nbg_command_coef_bytes(n->m, n->g, &op->kernel_ref, &size) && nbg_nnlut_convolution(op, size);
}

/* The node's operator from its first NN / TP operation, else the vendor's
 * layer name. */
static void name_operator(nbg_network *n, nbg_net_layer *l, const nbg_cmd_op *first)
{
	const struct vendor_op *v = vendor_op(l->vendor_name);

	if (first && first->engine == NBG_CMD_NN) {
		if (first->type == NBG_GRAPH_OP_NN)
			nn_operator(l, first);
		else if (first->type == NBG_GRAPH_OP_NN_LUT && nnlut_convolution(n, first)) {
			nn_operator(l, first); /* the table is its activation */
			l->activation = "lut";
		} else if (first->type == NBG_GRAPH_OP_NN_LUT) {
			const char *f = nbg_network_nnlut_function(n, first);
			l->op = "Activation";
			l->activation = f ? f : "lut";
			l->op_basis = NBG_NET_OP_COMMAND;
		} else if (first->type == NBG_GRAPH_OP_NT) {
			l->op = "Transpose";
			l->op_basis = NBG_NET_OP_COMMAND;
		}
	} else if (first) {
		tp_operator(n, l, first);
	}
	/* a 1x1 depthwise convolution computes what the vendor names a
	 * pooling: the pooling, its stride from the command; or a PReLU (the
	 * fp16 files: a weight of 1 and the slope per channel in its kernel
	 * stream, doc/weights.md "fp16 streams") */
	if (l->op && !strcmp(l->op, "DepthwiseConv2D") && l->kernel[0] == 1 && l->kernel[1] == 1 && v &&
	    (strstr(v->op, "Pool") || !strcmp(v->op, "PReLU"))) {
		l->op = NULL;
		l->kernel[0] = l->kernel[1] = 0;
		if (l->fused) { /* the command's fused pooling is the layer's */
			l->op = !strcmp(l->fused, "max-pool") ? "MaxPool" : "AvgPool";
			l->fused = NULL;
		}
	}
	if (!l->op && v) {
		l->op = v->op;
		l->op_basis = NBG_NET_OP_VENDOR;
	}
	if (!l->op) {
		l->op = first && first->engine == NBG_CMD_TP ? "Layout" : "?";
		l->op_basis = first ? NBG_NET_OP_COMMAND : NBG_NET_OP_NONE;
	}
	if (v && !l->activation && v->activation)
		l->activation = v->activation;
	if (v && !l->fused && v->fused)
		l->fused = v->fused;
}

/* A convolution the A733 fp16 shaders compute: its operator, kernel and
 * stride from their uniforms. */
static void shader_operator(nbg_net_layer *l, const net_shconv *c)
{
	if (c->kind == NET_SHC_NONE)
		return;
	/* a window over the whole input giving one pixel: a fully connected
	 * layer, as the NN engine's whole-image commands are named */
	int fc = c->kind == NET_SHC_CONV && c->g.kx == c->g.w && c->g.ky == c->g.h && !c->g.px && !c->g.py &&
		 c->g.ow == 1 && c->g.oh == 1;
	l->op = fc ? "FullyConnected" : c->kind == NET_SHC_CONV ? "Conv2D" : "DepthwiseConv2D";
	l->op_basis = NBG_NET_OP_COMMAND;
	l->kernel[0] = c->g.kx;
	l->kernel[1] = c->g.ky;
	l->stride = c->g.sx;
	l->stride_inferred = 0;
}

/* Is OPERATIONS record i in the data flow, and its other-operation record. */
static int drawn(const nbg_commands *c, size_t i, size_t *x)
{
	if (nbg_commands_op_of(c, i))
		return 1;
	while (*x < nbg_commands_other_count(c) && nbg_commands_other_at(c, *x)->operation < i)
		(*x)++;
	return *x < nbg_commands_other_count(c) && nbg_commands_other_at(c, *x)->operation == i;
}

/* The nodes: one per layer with a drawn operation, in first-run order. */
static int build_nodes(nbg_network *n)
{
	const nbg_graph_summary *s = nbg_graph_summary_of(n->g);
	size_t layers = s->layer_count, x = 0;
	size_t *layer_node = calloc(layers + 1, sizeof(size_t));
	const nbg_cmd_op **first = calloc(n->ops + 1, sizeof(*first));

	n->node_of = malloc((n->ops + 1) * sizeof(size_t));
	n->nodes = calloc(n->ops + 1, sizeof(*n->nodes));
	if (!layer_node || !first || !n->node_of || !n->nodes) {
		free(layer_node);
		free(first);
		return -1;
	}
	for (size_t i = 0; i <= layers; i++)
		layer_node[i] = SIZE_MAX;
	for (size_t i = 0; i < n->ops; i++) {
		const nbg_graph_operation *o = nbg_graph_operation_at(n->g, i);
		const nbg_cmd_op *op = nbg_commands_op_of(n->c, i);
		n->node_of[i] = SIZE_MAX;
		if (!drawn(n->c, i, &x))
			continue;
		size_t k = o->layer_id < layers ? layer_node[o->layer_id] : SIZE_MAX;
		if (k == SIZE_MAX) {
			k = n->n++;
			nbg_net_layer *l = &n->nodes[k];
			l->layer = o->layer_id < layers ? o->layer_id : UINT32_MAX;
			l->first_operation = i;
			l->vendor_name = l->layer != UINT32_MAX ? nbg_graph_layer_at(n->g, l->layer)->name
								: NULL;
			l->in.record = l->out.record = -1;
			if (o->layer_id < layers)
				layer_node[o->layer_id] = k;
		}
		n->node_of[i] = k;
		if (op) {
			n->nodes[k].nn_tp_ops++;
			/* an NN convolution names the layer before any other operation */
			if (!first[k] || (op->type == NBG_GRAPH_OP_NN && first[k]->type != NBG_GRAPH_OP_NN))
				first[k] = op;
		} else if (!n->nodes[k].other_ops++) {
			n->nodes[k].other_type = nbg_graph_op_type_name(o->type);
		}
	}
	if (nbg_network_shconv(n) != 0) {
		free(layer_node);
		free(first);
		return -1;
	}
	for (size_t k = 0; k < n->n; k++) {
		name_operator(n, &n->nodes[k], first[k]);
		shader_operator(&n->nodes[k], &n->shc[k]);
	}
	free(layer_node);
	free(first);
	return 0;
}

/* The data-flow relations that fail, for the banner. */
static void warnings(nbg_network *n)
{
	static const int flow[] = { NBG_CMDR_PRODUCER, NBG_CMDR_CHAIN_TYPE, NBG_CMDR_CHAIN_SHAPE };
	for (size_t k = 0; k < sizeof(flow) / sizeof(flow[0]); k++) {
		const nbg_graph_relation *rel = nbg_commands_relation_at(n->c, (size_t)flow[k]);
		if (rel && rel->checked > rel->held && n->warn_n < NBG_NET_MAX_WARNINGS) {
			nbg_net_warning *w = &n->warn[n->warn_n++];
			w->relation = rel->id;
			w->failed = rel->checked - rel->held;
			w->checked = rel->checked;
		}
	}
	for (size_t f = 0; f < nbg_commands_finding_count(n->c); f++)
		if (!strcmp(nbg_commands_finding_at(n->c, f)->id, "dataflow-work-limit") &&
		    n->warn_n < NBG_NET_MAX_WARNINGS) {
			n->warn[n->warn_n].relation = "dataflow-work-limit";
			n->warn[n->warn_n].failed = n->warn[n->warn_n].checked = 1;
			n->warn_n++;
			break;
		}
}

nbg_code nbg_network_build(const nbg_model *m, const nbg_graph *g, const nbg_commands *c,
			   nbg_network **out, nbg_error *err)
{
	if (out)
		*out = NULL;
	if (!m || !g || !c || !out)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model",
				     "nbg_network_build needs a model, its graph and commands");
	nbg_network *n = calloc(1, sizeof(*n));
	if (!n)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	n->m = m;
	n->g = g;
	n->c = c;
	n->ops = nbg_graph_summary_of(g)->operation_count;
	if (build_nodes(n) != 0 || nbg_network_edges(n) != 0 || nbg_network_shapes(n) != 0) {
		nbg_network_free(n);
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	}
	warnings(n);
	*out = n;
	return NBG_OK;
}

void nbg_network_free(nbg_network *n)
{
	if (!n)
		return;
	free(n->nodes);
	free(n->node_of);
	free(n->edges);
	free(n->shc);
	free(n);
}

size_t nbg_network_layer_count(const nbg_network *n)
{
	return n ? n->n : 0;
}

const nbg_net_layer *nbg_network_layer_at(const nbg_network *n, size_t i)
{
	return n && i < n->n ? &n->nodes[i] : NULL;
}

size_t nbg_network_layer_of(const nbg_network *n, size_t operation)
{
	return n && operation < n->ops ? n->node_of[operation] : SIZE_MAX;
}

size_t nbg_network_edge_count(const nbg_network *n)
{
	return n ? n->edge_n : 0;
}

const nbg_net_edge *nbg_network_edge_at(const nbg_network *n, size_t i)
{
	return n && i < n->edge_n ? &n->edges[i] : NULL;
}

size_t nbg_network_warning_count(const nbg_network *n)
{
	return n ? n->warn_n : 0;
}

const nbg_net_warning *nbg_network_warning_at(const nbg_network *n, size_t i)
{
	return n && i < n->warn_n ? &n->warn[i] : NULL;
}

const char *nbg_net_shape_basis_name(unsigned basis)
{
	static const char *const names[] = { "none", "record", "command", "propagated",
					     "engine view" };
	return basis < sizeof(names) / sizeof(names[0]) ? names[basis] : "none";
}

const char *nbg_net_op_basis_name(unsigned basis)
{
	return basis == NBG_NET_OP_COMMAND ? "commands" : basis == NBG_NET_OP_VENDOR ? "vendor name" : "none";
}

/* Appends to buf (of size, used len) like snprintf, never past its end. */
static size_t put(char *buf, size_t size, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static size_t put(char *buf, size_t size, size_t len, const char *fmt, ...)
{
	va_list ap;
	if (len >= size)
		return len;
	va_start(ap, fmt);
	int k = vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
	return k < 0 ? len : len + (size_t)k;
}

char *nbg_net_operator_text(const nbg_net_layer *l, char *buf, size_t size)
{
	size_t len = 0;
	if (!buf || !size)
		return buf;
	buf[0] = 0;
	if (!l)
		return buf;
	len = put(buf, size, len, "%s", l->op ? l->op : "?");
	if (l->kernel[0])
		len = put(buf, size, len, " %ux%u", l->kernel[0], l->kernel[1]);
	else if (l->pool[0] && !l->fused)
		len = put(buf, size, len, " %ux%u", l->pool[0], l->pool[1]);
	if (l->stride > 1)
		len = put(buf, size, len, " /%u%s", l->stride, l->stride_inferred ? "?" : "");
	if (l->activation && strcmp(l->op ? l->op : "", "Activation"))
		len = put(buf, size, len, " %s", l->activation);
	else if (l->activation)
		len = put(buf, size, len, " (%s)", l->activation);
	if (l->fused && l->pool[0])
		len = put(buf, size, len, " +%s %ux%u", l->fused, l->pool[0], l->pool[1]);
	else if (l->fused)
		put(buf, size, len, " +%s", l->fused);
	return buf;
}

char *nbg_net_shape_text(const nbg_net_tensor *t, char *buf, size_t size)
{
	if (!buf || !size)
		return buf;
	if (!t || !t->dims[0] || t->basis == NBG_NET_SHAPE_NONE)
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%ux%ux%u%s", t->dims[0], t->dims[1], t->dims[2],
			 t->basis == NBG_NET_SHAPE_ENGINE ? " (engine view)" : "");
	return buf;
}
