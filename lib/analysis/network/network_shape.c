/*
 * network_shape.c - the whole tensors of each node of the network view.
 *
 * The engine's view of a node's input (output): the extent its NN / TP
 * operations address together, each tile placed by its address and the
 * strides (the tiles' own sizes where the strides are not known).  That
 * view is the tensor's where the commands need true rows (basis COMMAND: a
 * kernel or pooling window wider than 1, a TP window) or where the node
 * reads (writes) an INPUT (OUTPUT) record whole (basis RECORD), or the
 * image is 1x1 (a vector: no rows to flatten).  Elsewhere
 * the NPU may address the same pixels flattened (a 1x1 convolution over
 * 112x112 as 64x196) or tiled, so the row length is taken from a tensor of
 * the same pixels that has a proven one (basis PROPAGATED): the producer's
 * output and the consumer's input of a proven edge that carries the whole
 * tensor (same pixel count, same z), and the two sides of an operation that
 * keeps the pixel grid (a 1x1 convolution with stride 1, no pooling; a
 * lookup-table activation).  A node with no NN / TP operation takes the
 * output of its one producer, and, for an operator that keeps its input's
 * shape (Softmax, Add, an activation, ...), gives it to its output.  A
 * layer of lookup tables or a copy writes the tensor it reads; a 1x1
 * convolution over N whole tensors reads their concatenation along
 * channels (its operands and input from each other's grid and the edges'
 * bytes).  These rules run again while they settle more.  What stays
 * unresolved is shown as the engine's view (basis ENGINE), labelled.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/graph/commands_lib.h"
#include "analysis/graph/uniforms.h"
#include "analysis/network/network_internal.h"

/* How many times the shape rules run at most (nbg_network_shapes). */
#define MAX_SHAPE_PASSES 16

/* The extent several operations address together (as tiles). */
typedef struct extent {
	int any;
	uint32_t ext[3];
} extent;

static void extent_add(extent *t, const nbg_cmd_ref *r, const uint32_t dims[3], uint64_t rp,
		       uint64_t sp, uint32_t e, uint64_t base)
{
	uint64_t rel = r->offset >= base ? r->offset - base : 0, pos[3] = { 0, 0, 0 };

	if (rp && sp && e && r->patched) {
		pos[2] = rel / sp;
		pos[1] = (rel % sp) / rp;
		pos[0] = (rel % rp) / e;
	}
	for (int i = 0; i < 3; i++)
		if (pos[i] + dims[i] > t->ext[i])
			t->ext[i] = (uint32_t)(pos[i] + dims[i] < UINT32_MAX ? pos[i] + dims[i] : UINT32_MAX);
	t->any = 1;
}

/* Does the operation need the true rows of its input (out: of its output)? */
static int spatial(const nbg_net_layer *l, const nbg_cmd_op *op, int out)
{
	if (op->type == NBG_GRAPH_OP_NN && strcmp(op->kind, "fully connected"))
		return op->kernel[0] > 1 || op->kernel[1] > 1 || (out && op->pooling);
	return op->engine == NBG_CMD_TP && l->pool[0] > 1;
}

/* Does the operation keep the pixel grid (x * y in == x * y out)? */
static int keeps_grid(const nbg_cmd_op *op)
{
	if (op->type == NBG_GRAPH_OP_NN_LUT || (op->engine == NBG_CMD_TP && !strcmp(op->kind, "lut")))
		return 1;
	return op->type == NBG_GRAPH_OP_NN && !strcmp(op->kind, "conv") && op->kernel[0] == 1 &&
	       op->kernel[1] == 1 && !op->pooling && op->out_subsample == 1;
}

/* Per node while its views are gathered: per side (input, output) the
 * lowest address and its memory, the extent, how many tiles, the sum of
 * their elements, their first dimensions and whether every tile has the
 * first one's x, y or z, and the sums of their y and z. */
typedef struct gather {
	uint64_t base[2];
	uint32_t space[2][2];    /* source type, index of the first tile */
	int other_space[2];      /* a tile in another memory */
	extent t[2];
	size_t tiles[2];
	uint64_t elements[2], sum_y[2], sum_z[2];
	uint32_t first[2][3];
	uint32_t big[2][3];      /* the tile of the most elements */
	uint64_t big_elements[2];
	int same[2][3];
	int full_depth; /* every input tile is a convolution's reading all its channels */
	uint64_t ring[2];  /* the smallest circular buffer a tile is in (bytes) */
	uint64_t slice[2]; /* the first tile's slice stride */
	int seen;
} gather;

/* One tile of side s (0 input, 1 output) of x. */
static void tile_add(gather *x, int s, const nbg_cmd_ref *r, const uint32_t d[3])
{
	if (!x->tiles[s]) {
		if (!s)
			x->full_depth = 1;
		memcpy(x->first[s], d, sizeof(x->first[s]));
		x->same[s][0] = x->same[s][1] = x->same[s][2] = 1;
		x->space[s][0] = r->source_type;
		x->space[s][1] = (uint32_t)r->index;
	}
	for (int i = 0; i < 3; i++)
		x->same[s][i] &= d[i] == x->first[s][i];
	if (r->source_type != x->space[s][0] || (uint32_t)r->index != x->space[s][1])
		x->other_space[s] = 1;
	x->tiles[s]++;
	x->elements[s] += (uint64_t)d[0] * d[1] * d[2];
	if ((uint64_t)d[0] * d[1] * d[2] > x->big_elements[s]) {
		x->big_elements[s] = (uint64_t)d[0] * d[1] * d[2];
		memcpy(x->big[s], d, sizeof(x->big[s]));
	}
	x->sum_y[s] += d[1];
	x->sum_z[s] += d[2];
}

/* tiles_whole's rules; d is the extent when none holds. */
static int tiles_image(const gather *x, int s, uint32_t d[3])
{
	const uint32_t *e = x->t[s].ext;
	uint64_t ext = (uint64_t)e[0] * e[1] * e[2];
	memcpy(d, e, 3 * sizeof(uint32_t));
	if (x->tiles[s] <= 1)
		return 1;
	/* tiles that each read every channel placed at different depths: their
	 * addresses are not positions in one image (a circular buffer of a few
	 * rows, VIP SRAM) */
	if (!s && x->full_depth && x->same[0][2] && e[2] != x->first[0][2])
		return 0;
	/* in a circular buffer smaller than the extent, an address is no
	 * position in the image */
	int ring = x->ring[s] && x->ring[s] < (uint64_t)e[2] * x->slice[s];
	if (!ring && !x->other_space[s] && (s ? ext == x->elements[s] : ext <= x->elements[s]))
		return 1;
	if (!s)
		return 0;
	if (x->same[s][0] && x->same[s][2] && x->sum_y[s] <= UINT32_MAX) {
		d[0] = x->first[s][0];
		d[1] = (uint32_t)x->sum_y[s];
		d[2] = x->first[s][2];
		return 1;
	}
	if (x->same[s][0] && x->same[s][1] && x->sum_z[s] <= UINT32_MAX) {
		d[0] = x->first[s][0];
		d[1] = x->first[s][1];
		d[2] = (uint32_t)x->sum_z[s];
		return 1;
	}
	return 0;
}

/* Side s's whole image from its tiles: the extent their addresses give
 * where the tiles fill it exactly (outputs; inputs: cover it, their halos
 * overlapping), else rows or channels split evenly (outputs: equal x and
 * z, y summed; equal x and y, z summed), else 0 -- the engine's view only,
 * which is then the largest tile as the engine addresses it: an extent
 * over tiles that make no one image (a mean and the tensor it is
 * subtracted from, rings of a few rows) is the shape of nothing. */
static int tiles_whole(const gather *x, int s, uint32_t d[3])
{
	if (!tiles_image(x, s, d)) {
		memcpy(d, x->big[s], 3 * sizeof(uint32_t));
		return 0;
	}
	return 1;
}

/* A zero point a command states: TP field tf or NN field nf (-1: none);
 * -1 for an integer type it does not apply to (fp16, bf16: no zero point). */
static int32_t zero_point(const nbg_cmd *cmd, int tf, int nf)
{
	if (!cmd)
		return -1;
	if (cmd->engine == NBG_CMD_TP && tf >= 0)
		return (int32_t)nbg_cmd_tp(cmd, (enum nbg_tp_fid)tf);
	if (cmd->engine == NBG_CMD_NN && nf >= 0)
		return (int32_t)nbg_cmd_nn(cmd, (enum nbg_nn_fid)nf);
	return -1;
}

/* One operation of node k's views: its tiles' extents, data types and the
 * COMMAND bases of the sides `sides` names (bit 0 its input, bit 1 its
 * output; pass 0 finds each node's lowest addresses). */
static void view_op(nbg_net_layer *l, gather *x, const nbg_cmd_op *op, const nbg_cmd *cmd, int pass,
		    unsigned sides, int *grid)
{
	if (pass == 0) {
		for (int k = 0; k < 2 && cmd; k++) {
			uint64_t b = k ? (cmd->engine == NBG_CMD_NN ? nbg_cmd_nn(cmd, NBG_NNF_OUT_IMAGE_CIRCULAR_BUF_SIZE)
							     : nbg_cmd_tp(cmd, NBG_TPF_OUT_IMAGE_CIRCULAR_BUF_SIZE))
				       : (cmd->engine == NBG_CMD_NN ? nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_CIRCULAR_BUF_SIZE)
							     : nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_CIRCULAR_BUF_SIZE));
			b <<= 6; /* the fields count 64-byte units */
			if ((sides & (1u << k)) && b && (!x->ring[k] || b < x->ring[k]))
				x->ring[k] = b;
		}
	if ((sides & 1) && op->in_ref.offset < x->base[0])
			x->base[0] = op->in_ref.offset;
		if ((sides & 2) && op->out_ref.offset < x->base[1])
			x->base[1] = op->out_ref.offset;
		return;
	}
	if (sides & 1) {
		extent_add(&x->t[0], &op->in_ref, op->in, op->in_row_stride, op->in_slice_stride,
			   op->in_element_bytes, x->base[0]);
		if (!x->tiles[0])
			x->slice[0] = op->in_slice_stride;
		tile_add(x, 0, &op->in_ref, op->in);
		x->full_depth &= op->type == NBG_GRAPH_OP_NN && !strcmp(op->kind, "conv") && op->kernel[2] == op->in[2];
		if (!x->seen) {
			l->in.data_type = op->in_type;
			if (op->engine == NBG_CMD_TP)
				l->in.zero_point = zero_point(cmd, NBG_TPF_IN_ZP, -1);
		}
		x->seen = 1;
		if (spatial(l, op, 0))
			l->in.basis = NBG_NET_SHAPE_COMMAND;
	}
	if ((sides & 2) && op->out[0]) {
		extent_add(&x->t[1], &op->out_ref, op->out, op->out_row_stride,
			   op->out_slice_stride, op->out_element_bytes, x->base[1]);
		if (!x->tiles[1])
			x->slice[1] = op->out_slice_stride;
		tile_add(x, 1, &op->out_ref, op->out);
	}
	if (sides & 2) {
		l->out.data_type = op->out_type;
		l->out.zero_point = op->engine == NBG_CMD_TP ? zero_point(cmd, NBG_TPF_OUT_ZP, -1)
							     : zero_point(cmd, -1, NBG_NNF_OUT_ZERO_POINT);
		if (spatial(l, op, 1))
			l->out.basis = NBG_NET_SHAPE_COMMAND;
	}
	if (!keeps_grid(op))
		*grid = 0;
}

/* Per operation, which of its sides are the node's: bit 0 when it reads
 * what another node or an INPUT record wrote, bit 1 when another node or
 * an OUTPUT record reads what it writes (the operations between, inside a
 * layer, write its own buffers); a node none of whose operations has a side
 * so marked takes every operation's. */
static uint8_t *boundary(const nbg_network *n)
{
	uint8_t *f = calloc(n->ops + 1, 1), *has = calloc(n->n + 1, 1);
	if (!f || !has) {
		free(f);
		free(has);
		return NULL;
	}
	for (size_t i = 0; i < nbg_commands_edge_count(n->c); i++) {
		const nbg_cmd_edge *e = nbg_commands_edge_at(n->c, i);
		if (e->kind == NBG_CMD_EDGE_INPUT && e->to < n->ops) {
			f[e->to] |= 1;
		} else if (e->kind == NBG_CMD_EDGE_OUTPUT && e->from < n->ops) {
			f[e->from] |= 2;
		} else if (e->kind == NBG_CMD_EDGE_OP && e->from < n->ops && e->to < n->ops &&
			   n->node_of[e->from] != n->node_of[e->to]) {
			f[e->from] |= 2;
			f[e->to] |= 1;
		}
	}
	for (size_t i = 0; i < n->ops; i++)
		if (n->node_of[i] != SIZE_MAX && nbg_commands_op_of(n->c, i))
			has[n->node_of[i]] |= f[i];
	for (size_t i = 0; i < n->ops; i++)
		if (n->node_of[i] != SIZE_MAX)
			f[i] |= (uint8_t)(~has[n->node_of[i]] & 3);
	free(has);
	return f;
}

static uint64_t elements(const uint32_t d[3]);

/* The images an SH operation's uniforms describe at its references
 * (uniforms.h): the one it writes as node k's output view, the largest it
 * reads as its input view, where the node has no NN / TP operation to give
 * them.  Views only: an SH program may address its images in any layout
 * (the A733 fp16 convolutions run on 75x4096 im2col matrices, a softmax on
 * a 10x1 row), so no shape is taken from them but where nothing else gives
 * one ("engine view"). */
static void sh_views(nbg_network *n)
{
	for (size_t x = 0; x < nbg_commands_other_count(n->c); x++) {
		const nbg_cmd_other *o = nbg_commands_other_at(n->c, x);
		size_t k = o->operation < n->ops ? n->node_of[o->operation] : SIZE_MAX;
		nbg_sh_uniforms u;
		if (k == SIZE_MAX || n->nodes[k].nn_tp_ops || o->type != NBG_GRAPH_OP_SH ||
		    nbg_sh_uniforms_load(n->m, n->g, o->operation, &u, NULL) != NBG_SHU_OK)
			continue;
		nbg_net_layer *l = &n->nodes[k];
		uint64_t most = 0;
		for (size_t r = 0; r < o->ref_count && r < NBG_CMD_MAX_REFS; r++) {
			const nbg_graph_patch *p = nbg_graph_patch_at(n->g, o->refs[r].patch);
			nbg_sh_image im;
			if (!p || p->type != 0 || !nbg_sh_image_at(&u, nbg_sh_uniform_at(&u, p->dest_offset), &im))
				continue;
			uint32_t d[3] = { im.width, im.height, im.depth ? im.depth : 1 };
			nbg_net_tensor *t = o->writes && r == o->written ? &l->out : &l->in;
			if (t == &l->in && elements(d) <= most)
				continue;
			if (t == &l->in)
				most = elements(d);
			memcpy(t->view, d, sizeof(d));
		}
	}
}

/* The tensors of a node the fp16 convolution shaders compute
 * (network_shconv.c): the input planes its im2col (depthwise) shader
 * reads, output planes of the window grid, one per kernel (channel); fp16
 * (the images' format words).  Their rows are the tensor's where the
 * shader needs them (basis COMMAND); else they are views and the node keeps
 * the pixel grid. */
static void shconv_views(nbg_network *n, int *grid)
{
	for (size_t k = 0; k < n->n; k++) {
		const net_shconv *c = &n->shc[k];
		nbg_net_layer *l = &n->nodes[k];
		if (c->kind == NET_SHC_NONE)
			continue;
		l->in.view[0] = c->g.w;
		l->in.view[1] = c->g.h;
		l->in.view[2] = c->g.c;
		l->out.view[0] = c->g.ow;
		l->out.view[1] = c->g.oh;
		l->out.view[2] = c->kind == NET_SHC_CONV ? c->g.n : c->g.c;
		l->in.data_type = l->out.data_type = 1; /* fp16 (nbg_command_data_type_name) */
		grid[k] = !nbg_network_shconv_spatial(&c->g);
		if (!grid[k])
			l->in.basis = l->out.basis = NBG_NET_SHAPE_COMMAND;
	}
}

/* Whether node k's operations' geometry is decoded: NN / TP commands, or
 * the fp16 convolution shaders' uniforms. */
static int decoded(const nbg_network *n, size_t k)
{
	return n->nodes[k].nn_tp_ops || n->shc[k].kind != NET_SHC_NONE;
}

/* The engine views of every node, its data types, the COMMAND bases, and
 * grid[k]: every operation of node k keeps the pixel grid. */
static int views(nbg_network *n, int *grid)
{
	gather *x = calloc(n->n + 1, sizeof(*x));
	uint8_t *sides = boundary(n);
	if (!x || !sides) {
		free(x);
		free(sides);
		return -1;
	}
	for (size_t k = 0; k < n->n; k++) {
		x[k].base[0] = x[k].base[1] = UINT64_MAX;
		grid[k] = n->nodes[k].nn_tp_ops > 0;
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n->ops; i++) {
			const nbg_cmd_op *op = nbg_commands_op_of(n->c, i);
			size_t k = n->node_of[i];
			if (op && k != SIZE_MAX)
				view_op(&n->nodes[k], &x[k], op, nbg_commands_at(n->c, op->engine, op->command),
					pass, sides[i], &grid[k]);
		}
	for (size_t k = 0; k < n->n; k++)
		for (int s = 0; s < 2; s++) {
			nbg_net_tensor *t = s ? &n->nodes[k].out : &n->nodes[k].in;
			if (!x[k].t[s].any)
				continue;
			/* the tiles that do not make one image: no basis but the engine's */
			if (!tiles_whole(&x[k], s, t->view) && t->basis == NBG_NET_SHAPE_COMMAND)
				t->basis = NBG_NET_SHAPE_NONE;
		}
	free(sides);
	free(x);
	sh_views(n);
	shconv_views(n, grid);
	return 0;
}

static uint64_t pixels(const uint32_t d[3])
{
	return (uint64_t)d[0] * d[1];
}

static uint64_t elements(const uint32_t d[3])
{
	return (uint64_t)d[0] * d[1] * d[2];
}

/* A record's x, y, z: the order (W, H, C or C, W, H, innermost first) whose
 * z is the view's (W, H, C where the commands address no image); 0 when
 * its element count is not the view's. */
static int record_dims(const nbg_io *io, const uint32_t view[3], uint32_t d[3])
{
	uint32_t v[3] = { 1, 1, 1 };
	for (uint32_t i = 0; i < io->dim_count && i < 3; i++)
		v[i] = io->dims[i];
	for (uint32_t i = 3; i < io->dim_count && i < 6; i++)
		v[2] *= io->dims[i]; /* batch and beyond: 1 in every file seen */
	if (io->dim_count <= 2) { /* (C, N): a vector of C values */
		d[0] = d[1] = 1;
		d[2] = v[0];
		return !view[0] || elements(v) == elements(view);
	}
	if (!view[0]) { /* no image the commands address: the record's order */
		memcpy(d, v, sizeof(v));
		return 1;
	}
	if (elements(v) != elements(view))
		return 0;
	if (v[2] == view[2] || v[0] != view[2]) {
		memcpy(d, v, sizeof(v));
	} else {
		d[0] = v[1];
		d[1] = v[2];
		d[2] = v[0];
	}
	return 1;
}

/* The RECORD bases: nodes reading an INPUT record or writing an OUTPUT
 * record whole. */
static void records(nbg_network *n)
{
	for (size_t i = 0; i < nbg_commands_edge_count(n->c); i++) {
		const nbg_cmd_edge *e = nbg_commands_edge_at(n->c, i);
		int in = e->kind == NBG_CMD_EDGE_INPUT;
		size_t op = in ? e->to : e->from, rec = in ? e->from : e->to;
		if (e->kind == NBG_CMD_EDGE_OP || op >= n->ops || n->node_of[op] == SIZE_MAX)
			continue;
		const nbg_io *io = in ? nbg_model_input_at(n->m, rec) : nbg_model_output_at(n->m, rec);
		nbg_net_tensor *t = in ? &n->nodes[n->node_of[op]].in : &n->nodes[n->node_of[op]].out;
		uint32_t d[3];
		/* an SH image's view is no tensor's layout (but the fp16
		 * convolution shaders' planes, shconv_views): the record stands */
		static const uint32_t none[3];
		const uint32_t *view = decoded(n, n->node_of[op]) ? t->view : none;
		if (!io || t->basis == NBG_NET_SHAPE_RECORD || !record_dims(io, view, d))
			continue;
		t->record = (int32_t)rec;
		/* a record of another pixel grid than the image is the tensor
		 * reshaped (1x2304 for a 48x48 one): the image keeps its rows.  The
		 * record gives the grid where the image has the same rows, or where
		 * the record is a grid of its own (not a row or column) of the
		 * image's pixels, the image perhaps flattened. */
		if (view[0] && io->dim_count > 2 && !(d[0] == view[0] && d[1] == view[1]) &&
		    !(pixels(d) == pixels(view) && d[0] > 1 && d[1] > 1) &&
		    strcmp(n->nodes[n->node_of[op]].op, "Transpose")) /* its view is no image */
			continue;
		memcpy(t->dims, d, sizeof(d));
		t->basis = NBG_NET_SHAPE_RECORD;
	}
}

/* Union-find over the 2 * nodes tensors (2k input, 2k + 1 output). */
static size_t find(size_t *p, size_t x)
{
	while (p[x] != x)
		x = p[x] = p[p[x]];
	return x;
}

static nbg_net_tensor *slot(nbg_network *n, size_t s)
{
	return s & 1 ? &n->nodes[s / 2].out : &n->nodes[s / 2].in;
}

static int proven(const nbg_net_tensor *t)
{
	return t->basis == NBG_NET_SHAPE_RECORD || t->basis == NBG_NET_SHAPE_COMMAND;
}

static int keeps_grid_op(const char *op);

/* Joins the tensors of equal pixel grids, then gives each unresolved one
 * the row length of a proven one in its set. */
static int propagate(nbg_network *n, const int *grid)
{
	size_t slots = 2 * n->n, *p = malloc((slots + 1) * sizeof(size_t));
	size_t *best = malloc((slots + 1) * sizeof(size_t));
	if (!p || !best) {
		free(p);
		free(best);
		return -1;
	}
	for (size_t s = 0; s < slots; s++) {
		p[s] = s;
		best[s] = SIZE_MAX;
	}
	for (size_t k = 0; k < n->n; k++)
		if ((grid[k] || keeps_grid_op(n->nodes[k].op)) &&
		    pixels(n->nodes[k].in.view) == pixels(n->nodes[k].out.view))
			p[find(p, 2 * k)] = find(p, 2 * k + 1);
	for (size_t i = 0; i < n->edge_n; i++) {
		const nbg_net_edge *e = &n->edges[i];
		if (e->from_kind || e->to_kind || e->basis != NBG_NET_EDGE_PROVEN || e->backward)
			continue;
		const nbg_net_tensor *a = &n->nodes[e->from].out, *b = &n->nodes[e->to].in;
		/* the same bytes: one tensor, one grid (a concatenation along z
		 * reads each part's pixels whole) */
		if (a->view[0] && pixels(a->view) == pixels(b->view))
			p[find(p, 2 * e->from + 1)] = find(p, 2 * e->to);
		/* an operator that keeps the grid (a concatenation, an element-wise
		 * one) writes its inputs' grid, whatever its operations' reads look
		 * like together */
		const nbg_net_tensor *o = &n->nodes[e->to].out;
		if (a->view[0] && keeps_grid_op(n->nodes[e->to].op) && pixels(a->view) == pixels(o->view))
			p[find(p, 2 * e->from + 1)] = find(p, 2 * e->to + 1);
	}
	for (size_t s = 0; s < slots; s++) {
		size_t r = find(p, s);
		const nbg_net_tensor *t = slot(n, s);
		if (proven(t) && (best[r] == SIZE_MAX || (t->basis == NBG_NET_SHAPE_RECORD &&
							    slot(n, best[r])->basis != NBG_NET_SHAPE_RECORD)))
			best[r] = s;
	}
	for (size_t s = 0; s < slots; s++) {
		nbg_net_tensor *t = slot(n, s);
		size_t b = best[find(p, s)];
		if (proven(t))
			continue;
		const nbg_net_tensor *src = b != SIZE_MAX ? slot(n, b) : NULL;
		/* tiles' inputs (halos overlapping) have no z of their own to keep:
		 * the producer's shape comes to them whole (whole_edges) */
		if (!(s & 1) && n->nodes[s / 2].nn_tp_ops > 1)
			continue;
		if (src && pixels(src->dims) == pixels(t->view) && t->view[0]) {
			t->dims[0] = src->dims[0];
			t->dims[1] = src->dims[1];
			t->dims[2] = t->view[2];
			t->basis = NBG_NET_SHAPE_PROPAGATED;
		}
	}
	free(p);
	free(best);
	return 0;
}

/* Operators that keep the pixel grid whatever their operations (their
 * inputs' and output's x and y are one grid). */
static int keeps_grid_op(const char *op)
{
	static const char *const ops[] = { "Concat", "Copy", "Activation", "Add", "Sub", "Mul",
					   "Div", "PReLU", "LeakyReLU", "Maximum" };
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(op, ops[i]))
			return 1;
	return 0;
}

/* Operators that give their output their input's shape. */
static int keeps_shape(const char *op)
{
	static const char *const ops[] = { "Softmax", "Add", "Sub", "Mul", "Div",
					   "Activation", "PReLU", "LeakyReLU", "Copy", "Maximum" };
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(op, ops[i]))
			return 1;
	return 0;
}

/* Whether t may take src's shape: t has none, or only the engine's view
 * where src is proven or propagated. */
static int weaker(const nbg_net_tensor *t, const nbg_net_tensor *src)
{
	return t->basis == NBG_NET_SHAPE_NONE ||
	       (t->basis == NBG_NET_SHAPE_ENGINE && src->basis != NBG_NET_SHAPE_NONE &&
		src->basis != NBG_NET_SHAPE_ENGINE);
}

/* Nodes without NN / TP operations: the input of their one producer (the
 * proven or inferred edge carrying the most bytes), the output too for an
 * operator that keeps the shape. */
static void other_nodes(nbg_network *n)
{
	size_t *from = malloc((n->n + 1) * sizeof(size_t));
	uint64_t *most = calloc(n->n + 1, sizeof(uint64_t));
	if (!from || !most) {
		free(from);
		free(most);
		return; /* the shapes stay unknown: "?" */
	}
	for (size_t k = 0; k < n->n; k++)
		from[k] = SIZE_MAX;
	for (size_t i = 0; i < n->edge_n; i++) {
		const nbg_net_edge *e = &n->edges[i];
		if (e->to_kind || e->from_kind || e->backward || e->bytes <= most[e->to])
			continue;
		most[e->to] = e->bytes;
		from[e->to] = e->from;
	}
	for (size_t k = 0; k < n->n; k++) {
		nbg_net_layer *l = &n->nodes[k];
		const nbg_net_tensor *src = from[k] != SIZE_MAX ? &n->nodes[from[k]].out : NULL;
		if (decoded(n, k))
			continue;
		/* an operator that keeps the shape, its output known (an output
		 * record): its input is that shape */
		if (l->in.basis == NBG_NET_SHAPE_NONE && l->out.basis != NBG_NET_SHAPE_NONE &&
		    keeps_shape(l->op) && (!src || src->basis == NBG_NET_SHAPE_NONE)) {
			memcpy(l->in.dims, l->out.dims, sizeof(l->in.dims));
			l->in.data_type = UINT32_MAX; /* the data type may change (uint8 -> fp16) */
			l->in.basis = l->out.basis == NBG_NET_SHAPE_ENGINE ? NBG_NET_SHAPE_ENGINE
									   : NBG_NET_SHAPE_PROPAGATED;
		}
		if (src && src->basis != NBG_NET_SHAPE_NONE && weaker(&l->in, src)) {
			memcpy(l->in.dims, src->dims, sizeof(l->in.dims));
			l->in.data_type = src->data_type;
			l->in.basis = src->basis == NBG_NET_SHAPE_ENGINE ? NBG_NET_SHAPE_ENGINE
									 : NBG_NET_SHAPE_PROPAGATED;
		}
		if (l->in.basis != NBG_NET_SHAPE_NONE && weaker(&l->out, &l->in) && keeps_shape(l->op)) {
			memcpy(l->out.dims, l->in.dims, sizeof(l->out.dims));
			l->out.data_type = l->in.data_type;
			l->out.basis = l->in.basis == NBG_NET_SHAPE_ENGINE ? NBG_NET_SHAPE_ENGINE
									   : NBG_NET_SHAPE_PROPAGATED;
		}
	}
	free(from);
	free(most);
}

#define NO_PRODUCER (SIZE_MAX - 1)

/* Per node, the one producer of its input over non-backward edges between
 * layers: a node index, NO_PRODUCER, or SIZE_MAX (several, or a record). */
static size_t *producers(const nbg_network *n)
{
	size_t *p = malloc((n->n + 1) * sizeof(size_t));
	if (!p)
		return NULL;
	for (size_t k = 0; k < n->n; k++)
		p[k] = NO_PRODUCER;
	for (size_t i = 0; i < n->edge_n; i++) {
		const nbg_net_edge *e = &n->edges[i];
		if (e->to_kind || e->backward)
			continue;
		if (e->from_kind || (p[e->to] != NO_PRODUCER && p[e->to] != e->from))
			p[e->to] = SIZE_MAX;
		else
			p[e->to] = e->from;
	}
	return p;
}

/* Outputs no command gives an image (TP output loops): the input of the
 * consumer that reads the most of it, when the node is that consumer's
 * only producer. */
static void outputs_from_consumers(nbg_network *n, const size_t *prod)
{
	/* edges are sorted by their writer: each writer's edges in one run */
	for (size_t i = 0; i < n->edge_n;) {
		size_t k = n->edges[i].from, j = i;
		unsigned kind = n->edges[i].from_kind;
		const nbg_net_tensor *to = NULL;
		uint64_t most = 0;
		for (; j < n->edge_n && n->edges[j].from == k && n->edges[j].from_kind == kind; j++) {
			const nbg_net_edge *e = &n->edges[j];
			if (e->from_kind || e->to_kind || e->backward || e->bytes <= most ||
			    n->nodes[e->to].in.basis == NBG_NET_SHAPE_NONE || prod[e->to] != k)
				continue;
			most = e->bytes;
			to = &n->nodes[e->to].in;
		}
		i = j;
		if (kind || !to || n->nodes[k].out.basis != NBG_NET_SHAPE_NONE)
			continue;
		memcpy(n->nodes[k].out.dims, to->dims, sizeof(to->dims));
		n->nodes[k].out.basis = to->basis == NBG_NET_SHAPE_ENGINE ? NBG_NET_SHAPE_ENGINE
									  : NBG_NET_SHAPE_PROPAGATED;
	}
}

/* A layout transpose keeps the tensor and changes its memory order: where
 * it reads a record, the record's dimensions are taken in the order of
 * the tensor it writes (W, H, C or C, W, H, innermost first). */
static void transposed_records(nbg_network *n)
{
	for (size_t k = 0; k < n->n; k++) {
		nbg_net_layer *l = &n->nodes[k];
		uint32_t *d = l->in.dims, *o = l->out.dims;
		if (l->in.basis != NBG_NET_SHAPE_RECORD || strcmp(l->op, "Transpose") || !o[0])
			continue;
		if (d[2] != o[2] && d[0] == o[2] && d[1] == o[0] && d[2] == o[1]) {
			uint32_t c = d[0];
			d[0] = d[1];
			d[1] = d[2];
			d[2] = c;
		}
	}
}

static int known(const nbg_net_tensor *t)
{
	return t->basis != NBG_NET_SHAPE_NONE && t->basis != NBG_NET_SHAPE_ENGINE;
}

/* An edge that carries a whole tensor (its reader's only producer, equal
 * element counts) joins one tensor: a side known only by the engine's view
 * takes the other's shape. */
static void whole_edges(nbg_network *n, const size_t *prod)
{
	for (size_t i = 0; i < n->edge_n; i++) {
		const nbg_net_edge *e = &n->edges[i];
		if (e->from_kind || e->to_kind || e->backward || prod[e->to] != e->from)
			continue;
		nbg_net_tensor *a = &n->nodes[e->from].out, *b = &n->nodes[e->to].in;
		const uint32_t *av = a->view[0] ? a->view : a->dims, *bv = b->view[0] ? b->view : b->dims;
		/* a fully connected layer reads its producer's tensor whole, in
		 * whatever shape that has: the network's tensor is the producer's */
		int fc = !strcmp(n->nodes[e->to].op, "FullyConnected") && known(a);
		/* tiles reading their only producer's tensor (halos overlapping):
		 * their addresses' extent is no shape, the producer's is */
		int tiled = n->nodes[e->to].nn_tp_ops > 1 && known(a) && !known(b);
		if (!av[0] || (elements(av) != elements(bv) && !tiled) ||
		    (known(a) == known(b) && !fc))
			continue;
		nbg_net_tensor *to = fc || tiled || known(a) ? b : a;
		memcpy(to->dims, to == b ? a->dims : b->dims, sizeof(to->dims));
		to->basis = NBG_NET_SHAPE_PROPAGATED;
	}
}

/* Edges into each node (non-backward, from a layer): in[at[k] .. at[k+1]). */
typedef struct into {
	size_t *at, *from;
} into;

static int into_build(const nbg_network *n, into *x)
{
	x->at = calloc(n->n + 2, sizeof(size_t));
	x->from = calloc(n->edge_n + 1, sizeof(size_t));
	if (!x->at || !x->from)
		return -1;
	for (size_t i = 0; i < n->edge_n; i++)
		if (!n->edges[i].from_kind && !n->edges[i].to_kind && !n->edges[i].backward)
			x->at[n->edges[i].to + 2]++;
	for (size_t k = 0; k < n->n; k++)
		x->at[k + 2] += x->at[k + 1];
	for (size_t i = 0; i < n->edge_n; i++)
		if (!n->edges[i].from_kind && !n->edges[i].to_kind && !n->edges[i].backward)
			x->from[x->at[n->edges[i].to + 1]++] = n->edges[i].from;
	return 0;
}

/* The x and y every producer of node k writes, when they all have a whole
 * shape and agree; 0 otherwise. */
static int producers_grid(const nbg_network *n, const into *x, size_t k, uint32_t xy[2])
{
	if (x->at[k] == x->at[k + 1])
		return 0;
	for (size_t i = x->at[k]; i < x->at[k + 1]; i++) {
		const nbg_net_tensor *t = &n->nodes[x->from[i]].out;
		if (!known(t) || (i > x->at[k] && (t->dims[0] != xy[0] || t->dims[1] != xy[1])))
			return 0;
		xy[0] = t->dims[0];
		xy[1] = t->dims[1];
	}
	return 1;
}

/* Gives t the grid xy with its own z (from its view or dims) when the
 * pixel counts agree. */
static void take_grid(nbg_net_tensor *t, const uint32_t xy[2])
{
	const uint32_t *v = t->view[0] ? t->view : t->dims;
	if (known(t) || !v[0] || (uint64_t)xy[0] * xy[1] != pixels(v))
		return;
	t->dims[2] = v[2];
	t->dims[0] = xy[0];
	t->dims[1] = xy[1];
	t->basis = NBG_NET_SHAPE_PROPAGATED;
}

/* In the order the layers run (every drawn edge runs forward): a layer
 * whose producers all write one grid reads that grid, and a layer that
 * keeps the grid writes its input's. */
static int forward(nbg_network *n, const int *grid)
{
	into x;
	if (into_build(n, &x) != 0) {
		free(x.at);
		free(x.from);
		return -1;
	}
	for (size_t k = 0; k < n->n; k++) {
		nbg_net_layer *l = &n->nodes[k];
		uint32_t xy[2];
		int keeps = grid[k] || keeps_grid_op(l->op);
		if (producers_grid(n, &x, k, xy)) {
			if (x.at[k + 1] - x.at[k] == 1 || keeps)
				take_grid(&l->in, xy);
			if (keeps)
				take_grid(&l->out, xy);
		}
		if (keeps && known(&l->in))
			take_grid(&l->out, l->in.dims);
	}
	free(x.at);
	free(x.from);
	return 0;
}

/* Tensors with no shape get the engine's view, labelled so: those of
 * nodes with NN / TP operations first, the SH images' (all) last, after
 * every other rule had its turn. */
static void engine_views(nbg_network *n, int all)
{
	for (size_t k = 0; k < n->n; k++)
		for (int s = 0; s < 2; s++) {
			nbg_net_tensor *t = s ? &n->nodes[k].out : &n->nodes[k].in;
			if (t->basis == NBG_NET_SHAPE_NONE && t->view[0] && (all || decoded(n, k))) {
				memcpy(t->dims, t->view, sizeof(t->dims));
				t->basis = NBG_NET_SHAPE_ENGINE;
			}
		}
}

/* Bytes per element of a command data type, 0 when unknown. */
static unsigned element_bytes(uint32_t type)
{
	return nbg_command_data_type_name(type) ? nbg_command_type_bytes(type) : 0;
}

/* Edges that carry channels of their producer's tensor to a reader they
 * alone feed (a split: each half of a tensor read by its own layer). */
static void slices(nbg_network *n, const size_t *prod)
{
	for (size_t i = 0; i < n->edge_n; i++) {
		nbg_net_edge *e = &n->edges[i];
		if (e->from_kind || e->to_kind || e->backward || prod[e->to] != e->from)
			continue;
		const nbg_net_tensor *a = &n->nodes[e->from].out, *b = &n->nodes[e->to].in;
		unsigned eb = element_bytes(b->data_type);
		if (known(a) && known(b) && eb && a->dims[0] == b->dims[0] && a->dims[1] == b->dims[1] &&
		    b->dims[2] < a->dims[2] && e->bytes == elements(b->dims) * eb)
			e->slice_of = a->dims[2];
	}
}

/* Per node, the non-backward edges into it (edge[at[k] .. at[k+1]): any
 * producer) and its operations (op[oat[k] .. oat[k+1]]), so that the
 * passes below visit each edge and operation once per node they touch. */
typedef struct incoming {
	size_t *at, *edge, *oat, *op;
} incoming;

static void incoming_free(incoming *x)
{
	free(x->at);
	free(x->edge);
	free(x->oat);
	free(x->op);
}

static int incoming_build(const nbg_network *n, incoming *x)
{
	x->at = calloc(n->n + 2, sizeof(size_t));
	x->edge = calloc(n->edge_n + 1, sizeof(size_t));
	x->oat = calloc(n->n + 2, sizeof(size_t));
	x->op = calloc(n->ops + 1, sizeof(size_t));
	if (!x->at || !x->edge || !x->oat || !x->op)
		return -1;
	for (size_t i = 0; i < n->edge_n; i++)
		if (!n->edges[i].to_kind && !n->edges[i].backward)
			x->at[n->edges[i].to + 2]++;
	for (size_t i = 0; i < n->ops; i++)
		if (n->node_of[i] != SIZE_MAX)
			x->oat[n->node_of[i] + 2]++;
	for (size_t k = 0; k < n->n; k++) {
		x->at[k + 2] += x->at[k + 1];
		x->oat[k + 2] += x->oat[k + 1];
	}
	for (size_t i = 0; i < n->edge_n; i++)
		if (!n->edges[i].to_kind && !n->edges[i].backward)
			x->edge[x->at[n->edges[i].to + 1]++] = i;
	for (size_t i = 0; i < n->ops; i++)
		if (n->node_of[i] != SIZE_MAX)
			x->op[x->oat[n->node_of[i] + 1]++] = i;
	return 0;
}

/* The 1x1 convolution kernel depth (*kz) and output depth (*oz) every NN
 * convolution of node k has; 0 when they differ or there is none. */
static int conv_depths(const nbg_network *n, const incoming *x, size_t k, uint32_t *kz, uint32_t *oz)
{
	*kz = *oz = 0;
	for (size_t j = x->oat[k]; j < x->oat[k + 1]; j++) {
		const nbg_cmd_op *op = nbg_commands_op_of(n->c, x->op[j]);
		if (!op || op->engine != NBG_CMD_NN)
			continue;
		if (op->type != NBG_GRAPH_OP_NN || strcmp(op->kind, "conv") || op->kernel[0] != 1 ||
		    op->kernel[1] != 1 || (*kz && (op->kernel[2] != *kz || op->out[2] != *oz)))
			return 0;
		*kz = op->kernel[2];
		*oz = op->out[2];
	}
	return *kz != 0;
}

/* The layers feeding node k, when each is a layer and each edge carries
 * its whole tensor, all of one byte count: their number, how many are
 * known only by the engine's view, and a known one's tensor (NULL when
 * none is known or two known ones differ). */
static const nbg_net_tensor *operand_shape(const nbg_network *n, const incoming *x, size_t k, unsigned eb,
					   uint32_t *count, uint32_t *unknown)
{
	const nbg_net_tensor *s = NULL;
	uint64_t bytes = 0;
	*count = *unknown = 0;
	for (size_t j = x->at[k]; j < x->at[k + 1]; j++) {
		const nbg_net_edge *e = &n->edges[x->edge[j]];
		const nbg_net_tensor *t = e->from_kind ? NULL : &n->nodes[e->from].out;
		/* an SH image's view is its dims only once every rule had its turn */
		const uint32_t *d = !t ? NULL : known(t) || t->dims[0] ? t->dims : t->view;
		if (!t || (*count && e->bytes != bytes) || elements(d) * eb != e->bytes)
			return NULL;
		bytes = e->bytes;
		++*count;
		if (!known(t))
			++*unknown;
		else if (s && memcmp(t->dims, s->dims, sizeof(t->dims)))
			return NULL;
		else
			s = t;
	}
	return s;
}

/* Node k's operands have tensor s: those known only by the engine's view
 * take it, and so do the node's input and (same count) output. */
static void take_operands(nbg_network *n, const incoming *x, size_t k, const nbg_net_tensor *s)
{
	nbg_net_layer *l = &n->nodes[k];
	for (size_t j = x->at[k]; j < x->at[k + 1]; j++) {
		const nbg_net_edge *e = &n->edges[x->edge[j]];
		nbg_net_tensor *t = e->from_kind ? NULL : &n->nodes[e->from].out;
		if (t && !known(t)) {
			memcpy(t->dims, s->dims, sizeof(t->dims));
			t->basis = NBG_NET_SHAPE_PROPAGATED;
		}
	}
	memcpy(l->in.dims, s->dims, sizeof(l->in.dims));
	l->in.basis = NBG_NET_SHAPE_PROPAGATED;
	if (!known(&l->out) || elements(l->out.dims) == elements(s->dims)) {
		memcpy(l->out.dims, s->dims, sizeof(l->out.dims));
		l->out.basis = NBG_NET_SHAPE_PROPAGATED;
	}
}

/* An element-wise operator the vendor names (Add, Sub, Mul, Div,
 * Maximum): operands of one shape. */
static int elementwise(const char *op)
{
	static const char *const ops[] = { "Add", "Sub", "Mul", "Div", "Maximum" };
	for (size_t i = 0; op && i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(op, ops[i]))
			return 1;
	return 0;
}

/* A convolution with a fused addition adds an operand of its output's
 * shape: a producer known only by the engine's view whose whole tensor,
 * of the output's element count, the node reads takes the output's shape. */
static void fused_operands(nbg_network *n, const incoming *x, size_t k, unsigned eb)
{
	const nbg_net_tensor *o = &n->nodes[k].out;
	if (!n->nodes[k].fused || strcmp(n->nodes[k].fused, "add") || !known(o))
		return;
	for (size_t j = x->at[k]; j < x->at[k + 1]; j++) {
		const nbg_net_edge *e = &n->edges[x->edge[j]];
		nbg_net_tensor *t = e->from_kind ? NULL : &n->nodes[e->from].out;
		const uint32_t *v = t && t->dims[0] ? t->dims : t ? t->view : NULL;
		if (t && !known(t) && v[0] && elements(v) == elements(o->dims) &&
		    e->bytes == elements(o->dims) * eb) {
			memcpy(t->dims, o->dims, sizeof(t->dims));
			t->basis = NBG_NET_SHAPE_PROPAGATED;
		}
	}
}

/* A 1x1 convolution of kernel depth kz reading the whole tensors of N >= 2
 * layers (each edge carries its producer's whole output): a convolution of
 * their concatenation along channels, each operand planes of one x * y
 * grid -- the known operands' (and its input's, when known).  An operand
 * known only by the engine's view, whose edge carries all of that view,
 * then is x * y * (its bytes / (x * y)), and the convolution's input
 * x * y * kz, where those depths and the known operands' add up to kz
 * exactly (and, its input not known, its view has x * y pixels). */
static void concatenation(nbg_network *n, const incoming *x, size_t k, unsigned eb, uint32_t kz)
{
	nbg_net_layer *l = &n->nodes[k];
	uint32_t xy[2] = { 0, 0 };
	uint64_t z = 0;
	size_t count = 0, unknown = 0;
	if (known(&l->in)) {
		if (l->in.dims[2] != kz)
			return;
		xy[0] = l->in.dims[0];
		xy[1] = l->in.dims[1];
	}
	for (size_t j = x->at[k]; j < x->at[k + 1]; j++) {
		const nbg_net_edge *e = &n->edges[x->edge[j]];
		const nbg_net_tensor *t = e->from_kind ? NULL : &n->nodes[e->from].out;
		if (!t)
			return;
		count++;
		if (!known(t)) {
			/* its view is what it writes: the edge must carry all of it */
			if (!t->view[0] || elements(t->view) * eb != e->bytes)
				return;
			unknown++;
			continue;
		}
		if (elements(t->dims) * eb != e->bytes || (xy[0] && (t->dims[0] != xy[0] || t->dims[1] != xy[1])))
			return;
		xy[0] = t->dims[0];
		xy[1] = t->dims[1];
	}
	uint64_t plane = (uint64_t)xy[0] * xy[1] * eb;
	if (count < 2 || !plane || (unknown && !known(&l->in) && pixels(l->in.view) != (uint64_t)xy[0] * xy[1]))
		return;
	for (size_t j = x->at[k]; j < x->at[k + 1]; j++) {
		const nbg_net_edge *e = &n->edges[x->edge[j]];
		if (e->bytes % plane)
			return;
		z += e->bytes / plane;
	}
	if (z != kz)
		return;
	for (size_t j = x->at[k]; j < x->at[k + 1]; j++) {
		const nbg_net_edge *e = &n->edges[x->edge[j]];
		nbg_net_tensor *t = &n->nodes[e->from].out;
		if (!known(t)) {
			uint32_t d[3] = { xy[0], xy[1], (uint32_t)(e->bytes / plane) };
			memcpy(t->dims, d, sizeof(d));
			t->basis = NBG_NET_SHAPE_PROPAGATED;
		}
	}
	if (!known(&l->in)) {
		uint32_t d[3] = { xy[0], xy[1], kz };
		memcpy(l->in.dims, d, sizeof(d));
		l->in.basis = NBG_NET_SHAPE_PROPAGATED;
	}
}

/* Whether every operation of node k is a lookup table (an NN_LUT
 * operation, a TP one with its piecewise-linear lookup) with no kernel:
 * one output element per input element. */
static int lookup_only(const nbg_network *n, const incoming *x, size_t k)
{
	if (!n->nodes[k].nn_tp_ops || n->nodes[k].other_ops)
		return 0;
	for (size_t j = x->oat[k]; j < x->oat[k + 1]; j++) {
		const nbg_cmd_op *op = nbg_commands_op_of(n->c, x->op[j]);
		if (!op)
			continue;
		if (op->kernel[2] || !(op->type == NBG_GRAPH_OP_NN_LUT ||
				       (op->engine == NBG_CMD_TP && !strcmp(op->kind, "lut"))))
			return 0;
	}
	return 1;
}

/* A layer that writes its input's tensor (a lookup-table activation: one
 * element out per element in; a copy): a side known only by the engine's
 * view takes the other side's shape, when its view holds as many elements
 * (both ways), or (a copy's input, both = 0) is that shape. */
static void one_tensor(nbg_net_layer *l, int both)
{
	nbg_net_tensor *a = &l->in, *b = &l->out;
	if (known(a) == known(b))
		return;
	nbg_net_tensor *to = known(a) ? b : a, *from = known(a) ? a : b;
	if (!to->view[0] || (to == b && !both))
		return;
	if (both ? elements(to->view) != elements(from->dims) : memcmp(to->view, from->dims, sizeof(to->view)))
		return;
	memcpy(to->dims, from->dims, sizeof(to->dims));
	to->basis = NBG_NET_SHAPE_PROPAGATED;
}

/* Bytes per element of node k's input, or, for a node without NN / TP
 * operations, of the first layer producer's output that has a known data
 * type; 0 unknown. */
static unsigned node_element_bytes(const nbg_network *n, const incoming *x, size_t k)
{
	const nbg_net_layer *l = &n->nodes[k];
	unsigned eb = element_bytes(l->in.data_type);
	for (size_t j = x->at[k]; !eb && l->in.data_type == UINT32_MAX && j < x->at[k + 1]; j++)
		if (!n->edges[x->edge[j]].from_kind)
			eb = element_bytes(n->nodes[n->edges[x->edge[j]].from].out.data_type);
	return eb;
}

/* Layers reading the whole tensors of N >= 2 layers of one byte count:
 * - a 1x1 convolution of kernel depth N and one output channel: the N
 *   tensors are its N input planes and each output value a weighted sum of
 *   the operands' values -- an element-wise addition (the compiler's
 *   lowering of Add): operator Add, its input and output their shape;
 * - an element-wise operator the vendor names, whose input the commands
 *   show only as the engine's view: its input and output their shape;
 * - a 1x1 convolution whose kernel depth is N x their channels: a
 *   convolution of their concatenation along channels, its input their x
 *   and y with that depth.
 * And a fused addition's operand (fused_operands).  -1: out of memory. */
static int operands(nbg_network *n)
{
	incoming x;
	if (incoming_build(n, &x) != 0) {
		incoming_free(&x);
		return -1;
	}
	for (size_t k = 0; k < n->n; k++) {
		nbg_net_layer *l = &n->nodes[k];
		uint32_t kz = 0, oz = 0, count, unknown;
		unsigned eb = node_element_bytes(n, &x, k);
		int conv = l->op && !strcmp(l->op, "Conv2D") && conv_depths(n, &x, k, &kz, &oz);
		if (eb)
			fused_operands(n, &x, k, eb);
		if (!eb || (!conv && known(&l->in)))
			continue;
		const nbg_net_tensor *s = operand_shape(n, &x, k, eb, &count, &unknown);
		if (!s || count < 2)
			continue;
		/* whatever the operator: it reads N whole tensors of one shape and
		 * addresses exactly that shape */
		if (!conv && !elementwise(l->op)) {
			if (!memcmp(l->in.view, s->dims, sizeof(l->in.view))) {
				memcpy(l->in.dims, s->dims, sizeof(l->in.dims));
				l->in.basis = NBG_NET_SHAPE_PROPAGATED;
			}
			continue;
		}
		if (!conv || (kz == count && oz == 1)) {
			if (conv) {
				l->op = "Add";
				l->kernel[0] = l->kernel[1] = 0;
			}
			take_operands(n, &x, k, s);
		}
	}
	for (size_t k = 0; k < n->n; k++) {
		uint32_t kz, oz;
		unsigned eb = node_element_bytes(n, &x, k);
		const char *op = n->nodes[k].op;
		if (eb && op && !strcmp(op, "Conv2D") && conv_depths(n, &x, k, &kz, &oz))
			concatenation(n, &x, k, eb, kz);
		if (op && !strcmp(op, "Activation") && lookup_only(n, &x, k))
			one_tensor(&n->nodes[k], 1);
		if (op && !strcmp(op, "Copy") && !n->nodes[k].other_ops)
			one_tensor(&n->nodes[k], 0);
	}
	incoming_free(&x);
	return 0;
}

/* A Copy layer whose commands give its output no extent (TP copies into
 * a concatenation's buffer) writes its input's tensor: where its
 * operations write exactly the input's bytes, the output is the input's
 * shape. */
static int copies(nbg_network *n)
{
	uint64_t *written = calloc(n->n + 1, sizeof(*written));
	if (!written)
		return -1;
	for (size_t i = 0; i < n->ops; i++)
		if (n->node_of[i] != SIZE_MAX)
			written[n->node_of[i]] += nbg_commands_bytes_written(n->c, i);
	for (size_t k = 0; k < n->n; k++) {
		nbg_net_layer *l = &n->nodes[k];
		unsigned eb = element_bytes(l->in.data_type);
		if (l->op && !strcmp(l->op, "Copy") && l->out.basis == NBG_NET_SHAPE_NONE && !l->out.view[0] &&
		    known(&l->in) && eb && written[k] == elements(l->in.dims) * eb) {
			memcpy(l->out.dims, l->in.dims, sizeof(l->out.dims));
			l->out.basis = NBG_NET_SHAPE_PROPAGATED;
		}
	}
	free(written);
	return 0;
}

int nbg_network_shapes(nbg_network *n)
{
	int *grid = calloc(n->n + 1, sizeof(int));
	if (!grid)
		return -1;
	for (size_t k = 0; k < n->n; k++) {
		n->nodes[k].in.data_type = n->nodes[k].out.data_type = UINT32_MAX;
		n->nodes[k].in.zero_point = n->nodes[k].out.zero_point = -1;
	}
	if (views(n, grid) != 0) {
		free(grid);
		return -1;
	}
	for (size_t k = 0; k < n->n; k++) {
		nbg_net_layer *l = &n->nodes[k];
		for (int s = 0; s < 2; s++) {
			nbg_net_tensor *t = s ? &l->out : &l->in;
			/* a 1x1 image (a vector) has no row layout to flatten */
			if (t->view[0] == 1 && t->view[1] == 1)
				t->basis = NBG_NET_SHAPE_COMMAND;
			if (t->basis == NBG_NET_SHAPE_COMMAND && t->view[0])
				memcpy(t->dims, t->view, sizeof(t->dims));
			else
				t->basis = NBG_NET_SHAPE_NONE;
		}
	}
	records(n);
	if (propagate(n, grid) != 0) {
		free(grid);
		return -1;
	}
	engine_views(n, 0);
	size_t *prod = producers(n);
	int rc = prod ? 0 : -1;
	/* each rule fills only tensors no other has proven, so a tensor one
	 * rule settles may let an earlier one settle another: the rules run
	 * again while they settle more, at most MAX_SHAPE_PASSES times (every
	 * corpus file settles within 3 passes and a fourth that changes
	 * nothing; a file that would need more keeps engine views, labelled
	 * so, rather than take passes quadratic in its layers) */
	for (size_t pass = 0, settled = SIZE_MAX; rc == 0 && pass < MAX_SHAPE_PASSES; pass++) {
		size_t now = 0;
		other_nodes(n);
		rc = forward(n, grid);
		if (rc == 0) {
			outputs_from_consumers(n, prod);
			whole_edges(n, prod);
			rc = forward(n, grid);
			/* what forward() settled joins the ends it left to the engine */
			whole_edges(n, prod);
		}
		if (rc == 0)
			rc = copies(n);
		if (rc == 0)
			rc = operands(n);
		for (size_t k = 0; k < n->n; k++)
			for (int s = 0; s < 2; s++) {
				const nbg_net_tensor *t = s ? &n->nodes[k].out : &n->nodes[k].in;
				now += 2 * (size_t)known(t) + (t->basis != NBG_NET_SHAPE_NONE);
			}
		if (now == settled)
			break;
		settled = now;
	}
	if (rc == 0)
		slices(n, prod);
	free(prod);
	free(grid);
	transposed_records(n);
	engine_views(n, 1);
	return rc;
}
