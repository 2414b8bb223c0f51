/*
 * ops/spmax.c - the softmax of a Softmax2Layer_SP layer, which the NN
 * engine computes with a run of SP (stream processor) operations.  What
 * each SP operation computes is not decoded, so none is executed from its
 * command: the layer as a whole is identified by its name and its I/O and
 * run by reference semantics (doc/cpu-backend.md, "The SP softmax") at its
 * last operation, the one that writes its output.
 *
 * Read from the layer's first command: its input image (a patched address,
 * uint8, one row of n values), the zero point (coef_zero_point) and the
 * input scale s, from the float32 clamps in words 29 and 30, which hold
 * s x (255 - zp) and s x (0 - zp): s = float32((hi - lo) / 255), checked
 * against the command's 23-bit post_multiplier (s's mantissa) and both
 * clamps recomputed from s and zp bit for bit.  From the last command: the
 * output image (patched, fp16, n values).  The operations between them
 * write nothing here; the plan checks that no operation outside the layer
 * reads what they write.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/graph/commands_lib.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"
#include "cpu/quant.h"

enum {
	SPMAX_W_HI = 29,        /* float32 s x (255 - zp) */
	SPMAX_W_LO = 30,        /* float32 s x (0 - zp) */
	SPMAX_MAX_WIDTH = 1 << 20,
	SPMAX_MAX_OPS = 64,     /* operations of one layer (LeNet's: 5); bounds the plan's work */
	SPMAX_FORMAT_FP16 = 1   /* an output record's format, FP16 (nbg_data_format_name) */
};

typedef struct {
	size_t first, last;     /* the layer's operations */
	uint32_t n;
	float scale;
	nbg_cpu_step *s;
} spmax_layer;

static uint32_t bits_of(float f)
{
	uint32_t v;
	memcpy(&v, &f, sizeof(v));
	return v;
}

/* The layer's operations: one contiguous run of 2 to SPMAX_MAX_OPS SP
 * operations with decoded commands, all the operations its layer record
 * counts. */
static int spmax_span(nbg_cpu_plan *p, spmax_layer *L, size_t operation)
{
	uint32_t id = nbg_graph_operation_at(p->g, operation)->layer_id;
	const nbg_graph_layer *l = nbg_graph_layer_at(p->g, id); /* NULL: none */
	size_t first = operation, last = operation;
	while (first > 0 && operation - first < SPMAX_MAX_OPS &&
	       nbg_graph_operation_at(p->g, first - 1)->layer_id == id)
		first--;
	while (last + 1 < p->count && last - first < SPMAX_MAX_OPS &&
	       nbg_graph_operation_at(p->g, last + 1)->layer_id == id)
		last++;
	if (!l || first == last || last - first >= SPMAX_MAX_OPS || l->operation_records != last - first + 1) {
		nbg_cpu_refuse(L->s, "sp-softmax-layer-unsupported", "a softmax layer (%s) whose %u operations "
			       "are not one contiguous run of 2 to %d: executed is such a run, the first reading "
			       "the input and the last writing the output", L->s->layer,
			       l ? l->operation_records : 0, SPMAX_MAX_OPS);
		return 0;
	}
	for (size_t j = first; j <= last; j++) {
		const nbg_cmd_op *op = nbg_commands_op_of(p->c, j);
		if (nbg_graph_operation_at(p->g, j)->type != NBG_GRAPH_OP_SP || !op || op->engine != NBG_CMD_NN ||
		    !nbg_commands_at(p->c, NBG_CMD_NN, op->command)) {
			nbg_cpu_refuse(L->s, "sp-softmax-layer-unsupported", "a softmax layer (%s) whose "
				       "operation %zu is not an SP operation with a decoded command", L->s->layer, j);
			return 0;
		}
	}
	L->first = first, L->last = last;
	return 1;
}

/* The input scale from the first command's clamps, checked against its
 * post_multiplier and zero point. */
static int spmax_scale(spmax_layer *L, const nbg_cmd *cmd)
{
	uint32_t hi_w = cmd->words[SPMAX_W_HI], lo_w = cmd->words[SPMAX_W_LO];
	float hi = nbg_cpu_f32_of(hi_w), lo = nbg_cpu_f32_of(lo_w);
	uint32_t zp = nbg_cmd_nn(cmd, NBG_NNF_COEF_ZERO_POINT);
	uint32_t m = nbg_cpu_nn_multiplier(cmd);
	float s = isfinite(hi) && isfinite(lo) ? (float)(((double)hi - (double)lo) / 255.0) : 0.0f;
	int ok = isfinite(s) && s > 0 && isnormal(s) && zp <= 255 && (bits_of(s) & 0x7fffffu) == m &&
		 bits_of(s * (float)(255 - (int)zp)) == hi_w && bits_of(s * (float)(0 - (int)zp)) == lo_w;
	if (!ok) {
		nbg_cpu_refuse(L->s, "sp-softmax-scale-inconsistent", "a softmax layer (%s) whose first "
			       "command's words %d and %d (0x%08x, 0x%08x) are not s x (255 - zp) and s x (0 - "
			       "zp) for the zero point %u (coef_zero_point) and a scale s whose mantissa is "
			       "the post_multiplier 0x%06x", L->s->layer, SPMAX_W_HI, SPMAX_W_LO, hi_w, lo_w, zp, m);
		return 0;
	}
	L->scale = s;
	return 1;
}

/* An SP operation's image: its region, and that n values of `bytes` each
 * lie inside it (and its circular buffer's lap, when it has one). */
static int spmax_image(nbg_cpu_plan *p, spmax_layer *L, const nbg_cmd_op *op, const nbg_cmd *cmd, int out,
		       size_t *region, uint64_t *base)
{
	const char *what = out ? "output" : "input";
	const nbg_cmd_ref *r = out ? &op->out_ref : &op->in_ref;
	if (!r->patched) {
		nbg_cpu_refuse(L->s, "address-not-relocated", "a softmax layer (%s) whose %s address (operation "
			       "%zu) is relocated by no patch", L->s->layer, what, op->operation);
		return 0;
	}
	/* the buffer's end is relocated by a patch of that operation */
	nbg_cpu_step t = *L->s;
	t.operation = op->operation;
	long ri = nbg_cpu_find_region(p, &t, what, r);
	uint64_t lo, size;
	if (ri < 0 || !nbg_cpu_nn_ring(p, &t, cmd, what, out, (size_t)ri, r->offset, &lo, &size)) {
		nbg_cpu_refuse(L->s, t.reason_id, "operation %zu: %s", op->operation, t.reason);
		return 0;
	}
	uint64_t bytes = (uint64_t)L->n * (out ? 2 : 1), last;
	if (!nbg_cpu_image_fits(p, (size_t)ri, r->offset, bytes, 1, 1, bytes, bytes, &last) ||
	    (size && last >= lo + size)) {
		nbg_cpu_refuse(L->s, "address-outside-memory", "a softmax layer (%s) whose %s (%llu bytes at "
			       "%s+0x%llx) does not lie inside its memory%s", L->s->layer, what,
			       (unsigned long long)bytes, nbg_graph_source_type_name(r->source_type),
			       (unsigned long long)r->offset, size ? " and before its circular buffer's end" : "");
		return 0;
	}
	*region = (size_t)ri;
	*base = r->offset;
	return 1;
}

/* No operation outside the layer reads what its operations before the last
 * write: skipping their writes changes nothing another operation sees.  The
 * operations whose writes are read outside their layer (or by an output
 * record) are found once per plan, in one pass over the data flow. */
static int spmax_sealed(nbg_cpu_plan *p, spmax_layer *L)
{
	if (!p->read_outside) {
		p->read_outside = calloc(p->count ? p->count : 1, 1);
		if (!p->read_outside) {
			nbg_cpu_refuse(L->s, "work-limit", "out of memory for the data flow of a softmax layer (%s)",
				       L->s->layer);
			return 0;
		}
		for (size_t i = 0; i < nbg_commands_edge_count(p->c); i++) {
			const nbg_cmd_edge *e = nbg_commands_edge_at(p->c, i);
			if (e->from >= p->count || (e->kind != NBG_CMD_EDGE_OUTPUT && e->kind != NBG_CMD_EDGE_OP))
				continue;
			if (e->kind == NBG_CMD_EDGE_OUTPUT || e->to >= p->count ||
			    nbg_graph_operation_at(p->g, e->to)->layer_id !=
				    nbg_graph_operation_at(p->g, e->from)->layer_id)
				p->read_outside[e->from] = 1;
		}
	}
	for (size_t j = L->first; j < L->last; j++)
		if (p->read_outside[j]) {
			nbg_cpu_refuse(L->s, "sp-softmax-intermediate-read", "a softmax layer (%s) whose operation "
				       "%zu writes bytes that an operation of another layer or an output record "
				       "reads: only the layer's output is computed", L->s->layer, j);
			return 0;
		}
	return 1;
}

static void plan_spmax(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation)
{
	spmax_layer L = { .s = s };
	if (!spmax_span(p, &L, operation))
		return;
	const nbg_cmd_op *a = nbg_commands_op_of(p->c, L.first), *z = nbg_commands_op_of(p->c, L.last);
	const nbg_cmd *ca = nbg_commands_at(p->c, NBG_CMD_NN, a->command);
	const nbg_cmd *cz = nbg_commands_at(p->c, NBG_CMD_NN, z->command);
	uint64_t n = (uint64_t)a->in[0] * a->in[1] * a->in[2];
	if (a->in_type != 0 || z->out_type != 1 || a->in[1] != 1 || a->in[2] != 1 || n == 0 ||
	    (uint64_t)z->out[0] * z->out[1] * z->out[2] != n || ca->word_count <= SPMAX_W_LO) {
		nbg_cpu_refuse(s, "sp-softmax-shape-unsupported", "a softmax layer (%s) reading %ux%ux%u of data "
			       "type %u (operation %zu) and writing %ux%ux%u of data type %u (operation %zu): "
			       "executed is one row of n uint8 (0) values to n fp16 (1) values", s->layer,
			       a->in[0], a->in[1], a->in[2], a->in_type, L.first, z->out[0], z->out[1], z->out[2],
			       z->out_type, L.last);
		return;
	}
	if (n > SPMAX_MAX_WIDTH) {
		nbg_cpu_refuse(s, "work-limit", "a softmax over %llu values, above the limit of %u",
			       (unsigned long long)n, SPMAX_MAX_WIDTH);
		return;
	}
	L.n = (uint32_t)n;
	cpu_ref *r = &op->u.ref;
	if (!spmax_scale(&L, ca) || !spmax_image(p, &L, a, ca, 0, &r->in_region, &r->in_base) ||
	    !spmax_image(p, &L, z, cz, 1, &r->out_region, &r->out_base) || !spmax_sealed(p, &L))
		return;
	if (z->out_ref.source_type == NBG_GRAPH_SRC_OUTPUT) {
		const nbg_io *io = nbg_model_output_at(p->m, (size_t)z->out_ref.index);
		const char *fn = io ? nbg_data_format_name(io->data_format) : NULL;
		if (!io || io->data_format != SPMAX_FORMAT_FP16) {
			nbg_cpu_refuse(s, "sp-softmax-shape-unsupported", "a softmax layer (%s) writing output %d "
				       "whose record's format is %s, not the fp16 its command says", s->layer,
				       z->out_ref.index, fn ? fn : "unknown");
			return;
		}
	}
	if (r->in_region == r->out_region && r->in_base < r->out_base + 2ull * n && r->out_base < r->in_base + n) {
		nbg_cpu_refuse(s, "sp-softmax-shape-unsupported", "a softmax layer (%s) whose output overlaps its "
			       "input", s->layer);
		return;
	}
	if (operation != L.last) {
		snprintf(s->what, sizeof(s->what), "SP, part of the softmax computed at op %zu", L.last);
		nbg_cpu_ref_executed(s, op, CPU_OP_SPMAX, CPU_REF_NONE);
		return;
	}
	r->width = L.n;
	r->scale_log2e = (double)L.scale * M_LOG2E; /* not rounded to a float32: exp(s x (q - max)) */
	snprintf(s->what, sizeof(s->what), "SP softmax %u uint8 -> fp16 (ops %zu-%zu), scale %.9g", L.n,
		 L.first, L.last, (double)L.scale);
	nbg_cpu_ref_executed(s, op, CPU_OP_SPMAX, CPU_REF_SOFTMAX);
}

static int spmax_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SP && m->layer == CPU_LAYER_SOFTMAX2_SP;
}

static void spmax_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	plan_spmax(p, s, op, m->operation);
}

/* The layer's softmax, at its last operation; the others compute nothing. */
static int spmax_run(const cpu_op *op, uint8_t *const *buf)
{
	if (op->u.ref.kind == CPU_REF_SOFTMAX)
		/* no board output shows what the SP softmax does below the normal
		 * range: its results are written as they round */
		nbg_cpu_softmax_run(&op->u.ref, buf, 0);
	return 0;
}

/* The softmax's: the maximum, the sum, the quotients. */
static void spmax_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	*work = op->u.ref.kind == CPU_REF_SOFTMAX ? nbg_cpu_mul_sat(3, op->u.ref.width) : 0;
	*scratch = 0;
}

const cpu_op_def nbg_cpu_op_spmax = { "sp-softmax", spmax_match, spmax_plan, spmax_run, spmax_cost };
