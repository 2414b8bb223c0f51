/*
 * network_shconv.c - the convolutions the A733 fp16 files run as SH
 * programs, read from their shaders' uniforms as the CPU backend reads
 * them to execute them (analysis/graph/uniforms.h): a `ConvolutionLayer`
 * of an im2col shader and a matrix-product shader, the data flow joining
 * the first's output to the second's input, their matrix sizes equal; a
 * `DepthwiseConvLayer` of one fp16 depthwise shader.  A layer with any
 * other operation, or a shader whose uniforms are not those layouts, is
 * not read (its operator stays the vendor's name, its tensors the images'
 * views).  doc/commands.md ("The network view").
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/graph/commands_lib.h"
#include "analysis/network/network_internal.h"

/* While the shaders are read: per node, the im2col's and the product's
 * operations and geometries, how many shaders were read, and whether one
 * was not. */
typedef struct reading {
	size_t im2col, product;  /* OPERATIONS index, or SIZE_MAX */
	nbg_sh_conv a, b;        /* the im2col's (or the depthwise shader's), the product's */
	size_t read;
	int bad;
} reading;

/* SH operation `operation` of node k, whose vendor name is kind's. */
static void read_shader(const nbg_network *n, reading *r, int kind, size_t operation)
{
	nbg_sh_uniforms u;
	if (nbg_sh_uniforms_load(n->m, n->g, operation, &u, NULL) != NBG_SHU_OK) {
		r->bad = 1;
		return;
	}
	r->read++;
	if (kind == NET_SHC_DEPTHWISE) {
		r->bad |= !nbg_sh_dwconv16_is(&u) || nbg_sh_dwconv16(&u, &r->a) != NBG_SHC_OK;
	} else if (nbg_sh_conv_is_product(&u)) {
		/* a second product leaves the node unread */
		r->bad |= r->product != SIZE_MAX;
		r->bad |= nbg_sh_product(&u, &r->b) != NBG_SHC_OK;
		r->product = operation;
	} else {
		r->bad |= r->im2col != SIZE_MAX;
		r->bad |= nbg_sh_im2col(&u, &r->a) != NBG_SHC_OK;
		r->im2col = operation;
	}
}

/* The kind of convolution the vendor's layer name says node l is, when it
 * has no NN / TP operation: the names the CPU backend plans these shaders
 * by. */
static int named_kind(const nbg_net_layer *l)
{
	if (l->nn_tp_ops || !l->vendor_name)
		return NET_SHC_NONE;
	if (!strcmp(l->vendor_name, "ConvolutionLayer"))
		return NET_SHC_CONV;
	return strcmp(l->vendor_name, "DepthwiseConvLayer") ? NET_SHC_NONE : NET_SHC_DEPTHWISE;
}

/* Whether the data flow has an operation edge from `from` to `to`. */
static int flows(const nbg_network *n, size_t from, size_t to)
{
	for (size_t i = 0; i < nbg_commands_edge_count(n->c); i++) {
		const nbg_cmd_edge *e = nbg_commands_edge_at(n->c, i);
		if (e->kind == NBG_CMD_EDGE_OP && e->from == from && e->to == to)
			return 1;
	}
	return 0;
}

/* Node k's shaders read into r: its kind, or NET_SHC_NONE. */
static int settle(const nbg_network *n, size_t k, const reading *r, int kind, nbg_sh_conv *out)
{
	if (r->bad || r->read != n->nodes[k].other_ops)
		return NET_SHC_NONE;
	if (kind == NET_SHC_DEPTHWISE) {
		*out = r->a;
		return r->read == 1 ? kind : NET_SHC_NONE;
	}
	if (r->read != 2 || r->im2col == SIZE_MAX || r->product == SIZE_MAX || r->a.k != r->b.k ||
	    r->a.p != r->b.p || !flows(n, r->im2col, r->product))
		return NET_SHC_NONE;
	*out = r->a;
	out->n = r->b.n;
	return kind;
}

int nbg_network_shconv(nbg_network *n)
{
	reading *r = calloc(n->n + 1, sizeof(*r));
	n->shc = calloc(n->n + 1, sizeof(*n->shc));
	if (!r || !n->shc) {
		free(r);
		return -1;
	}
	for (size_t k = 0; k < n->n; k++)
		r[k].im2col = r[k].product = SIZE_MAX;
	for (size_t x = 0; x < nbg_commands_other_count(n->c); x++) {
		const nbg_cmd_other *o = nbg_commands_other_at(n->c, x);
		size_t k = o->operation < n->ops ? n->node_of[o->operation] : SIZE_MAX;
		int kind = k != SIZE_MAX ? named_kind(&n->nodes[k]) : NET_SHC_NONE;
		if (kind == NET_SHC_NONE)
			continue;
		if (o->type != NBG_GRAPH_OP_SH)
			r[k].bad = 1;
		else
			read_shader(n, &r[k], kind, o->operation);
	}
	for (size_t k = 0; k < n->n; k++) {
		int kind = named_kind(&n->nodes[k]);
		if (kind != NET_SHC_NONE)
			n->shc[k].kind = settle(n, k, &r[k], kind, &n->shc[k].g);
	}
	free(r);
	return 0;
}

int nbg_network_shconv_spatial(const nbg_sh_conv *g)
{
	return g->kx > 1 || g->ky > 1 || g->sx > 1 || g->sy > 1 || g->px || g->py || g->ow != g->w ||
	       g->oh != g->h;
}
