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
 *
 * The mean of a ReduceMeanLayer_SP layer (doc/cpu-backend.md, "The SP
 * mean") is run the same way: two SP operations, the first reading an
 * x x y x z image of fp16 values or int16 codes and writing nothing, the
 * second reading nothing and writing the fp16 means over x, y or z, which
 * its output shape names by a size of 1.  The second command's scale is
 * 2^-fl / n: the int16 input's fraction length fl (0 for fp16) and the
 * count n.  A ReduceSumLayer_SP layer is pairs of the same kind, each
 * summing its own image (scale 2^-fl).  The subtraction of a TensorSub_SP layer ("The SP subtraction")
 * likewise: the first operation loads b (negated: word 27 bit 28), the
 * second reads a and writes a x s_a - b x s_b; the product of a TensorMul_SP
 * layer's pairs likewise, a x s_a x b x s_b, b along a's x or y.
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
	SPMAX_FORMAT_FP16 = 1,  /* an output record's format, FP16 (nbg_data_format_name) */
	SP_W_FLAGS = 27,        /* bit 30: bit 7 of an SP command's scale exponent; bits 28-31 flags */
	SP_SCALE_ONE = 0x3f800000u /* float32 1.0 */
};

/* One SP layer run by reference semantics: the softmax or the mean. */
typedef struct {
	const char *what;       /* "softmax", "mean": in messages */
	const char *id_layer;   /* the refusal id of a layer that is not such a run */
	const char *id_read;    /* the refusal id of an intermediate read outside the layer */
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
		nbg_cpu_refuse(L->s, L->id_layer, "a %s layer (%s) whose %u operations "
			       "are not one contiguous run of 2 to %d: executed is such a run, the first reading "
			       "the input and the last writing the output", L->what, L->s->layer,
			       l ? l->operation_records : 0, SPMAX_MAX_OPS);
		return 0;
	}
	for (size_t j = first; j <= last; j++) {
		const nbg_cmd_op *op = nbg_commands_op_of(p->c, j);
		if (nbg_graph_operation_at(p->g, j)->type != NBG_GRAPH_OP_SP || !op || op->engine != NBG_CMD_NN ||
		    !nbg_commands_at(p->c, NBG_CMD_NN, op->command)) {
			nbg_cpu_refuse(L->s, L->id_layer, "a %s layer (%s) whose operation %zu is not an "
				       "SP operation with a decoded command", L->what, L->s->layer, j);
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

/* An SP operation's image: its region, and that its rows of `bytes` each,
 * `row` apart, lie inside it (and its circular buffer's lap, when it has
 * one). */
static int spmax_image(nbg_cpu_plan *p, spmax_layer *L, const nbg_cmd_op *op, const nbg_cmd *cmd, int out,
		       uint64_t bytes, uint32_t rows, uint64_t row, size_t *region, uint64_t *base)
{
	const char *what = out ? "output" : "input";
	const nbg_cmd_ref *r = out ? &op->out_ref : &op->in_ref;
	if (!r->patched) {
		nbg_cpu_refuse(L->s, "address-not-relocated", "a %s layer (%s) whose %s address (operation "
			       "%zu) is relocated by no patch", L->what, L->s->layer, what, op->operation);
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
	uint64_t last;
	if (!nbg_cpu_image_fits(p, (size_t)ri, r->offset, bytes, rows, 1, row, row * rows, &last) ||
	    (size && last >= lo + size)) {
		nbg_cpu_refuse(L->s, "address-outside-memory", "a %s layer (%s) whose %s (%u rows of %llu bytes "
			       "at %s+0x%llx) does not lie inside its memory%s", L->what, L->s->layer, what, rows,
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
			nbg_cpu_refuse(L->s, "work-limit", "out of memory for the data flow of a %s layer (%s)",
				       L->what, L->s->layer);
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
			nbg_cpu_refuse(L->s, L->id_read, "a %s layer (%s) whose operation %zu writes bytes "
				       "that an operation of another layer or an output record reads: only the "
				       "layer's output is computed", L->what, L->s->layer, j);
			return 0;
		}
	return 1;
}

static void plan_spmax(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation)
{
	spmax_layer L = { .what = "softmax", .id_layer = "sp-softmax-layer-unsupported",
			  .id_read = "sp-softmax-intermediate-read", .s = s };
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
	if (!spmax_scale(&L, ca) || !spmax_image(p, &L, a, ca, 0, n, 1, n, &r->in_region, &r->in_base) ||
	    !spmax_image(p, &L, z, cz, 1, 2 * n, 1, 2 * n, &r->out_region, &r->out_base) || !spmax_sealed(p, &L))
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

/* ------------------------------------------------------------- the mean */

/* The axis a reduction pair sums over (0: x, 1: y, 2: z), -1 when its
 * commands are not fp16 (or int16) x x y x z in and the same with that axis
 * 1 out, or when the first writes or the second reads memory (a patch
 * relocates the first's output or the second's input: the pair would not
 * pass its sums internally). */
static int spmean_axis(nbg_cpu_step *s, const char *what, const nbg_cmd_op *a, const nbg_cmd_op *z, size_t first)
{
	int axis = -1;
	if ((a->in_type == 1 || a->in_type == 4) && z->out_type == 1 && a->in[0] && a->in[1] && a->in[2])
		for (int d = 0; d < 3; d++)
			if (z->out[d] == 1 && a->in[d] > 1 && z->out[(d + 1) % 3] == a->in[(d + 1) % 3] &&
			    z->out[(d + 2) % 3] == a->in[(d + 2) % 3])
				axis = d;
	if (axis < 0) {
		nbg_cpu_refuse(s, "sp-mean-shape-unsupported", "a %s layer (%s) reading %ux%ux%u of data type "
			       "%u (operation %zu) and writing %ux%ux%u of data type %u (operation %zu): executed "
			       "is x x y x z fp16 (1) or int16 (4) values to fp16 values with x, y or z 1, the %s "
			       "over it", what, s->layer, a->in[0], a->in[1], a->in[2], a->in_type, first, z->out[0],
			       z->out[1], z->out[2], z->out_type, first + 1, what);
		return -1;
	}
	if (a->out_ref.patched || z->in_ref.patched) {
		nbg_cpu_refuse(s, "sp-mean-shape-unsupported", "a %s layer (%s) whose first operation's output "
			       "or second operation's input is relocated by a patch: executed is a pair that "
			       "passes its sums through no memory", what, s->layer);
		return -1;
	}
	return axis;
}

/* An SP command's scale: the float32 whose exponent is post_shift |
 * post_shift_bit_5_6 << 5 | word 27 bit 30 << 7 and whose mantissa is the
 * 23-bit post_multiplier (doc/cpu-backend.md, "The SP mean"); its bits. */
static uint32_t sp_scale_bits(const nbg_cmd *cmd)
{
	uint32_t e = nbg_cmd_nn(cmd, NBG_NNF_POST_SHIFT) | nbg_cmd_nn(cmd, NBG_NNF_POST_SHIFT_BIT_5_6) << 5 |
		     (cmd->words[SP_W_FLAGS] >> 30 & 1u) << 7;
	return e << 23 | nbg_cpu_nn_multiplier(cmd);
}

/* The reduction's fraction length: the first command's scale 1, the
 * second's float32(2^-fl / d) (d: n for a mean, 1 for a sum), fl 0 for fp16
 * input, 0 to 31 for int16; the flag bits 28-31 of word 27 clear in both.
 * -1 (refused) otherwise. */
static int spmean_fl(nbg_cpu_step *s, const char *what, const nbg_cmd *ca, const nbg_cmd *cz, int int16,
		     uint32_t d)
{
	uint32_t first = sp_scale_bits(ca), second = sp_scale_bits(cz);
	if (ca->word_count > SP_W_FLAGS && cz->word_count > SP_W_FLAGS && first == SP_SCALE_ONE &&
	    !(ca->words[SP_W_FLAGS] >> 28) && !(cz->words[SP_W_FLAGS] >> 28))
		for (int fl = 0; fl <= (int16 ? 31 : 0); fl++)
			if (bits_of((float)(ldexp(1.0, -fl) / d)) == second)
				return fl;
	nbg_cpu_refuse(s, "sp-mean-scale-inconsistent", "a %s layer (%s) whose scales (0x%08x, 0x%08x: "
		       "post_shift, post_shift_bit_5_6, word %d bit 30 and post_multiplier) are not 1 and "
		       "2^-fl / %u, fl %s, or whose word %d sets bits 28-31", what, s->layer, first, second,
		       SP_W_FLAGS, d, int16 ? "0 to 31 (the int16 input's fraction length)" : "0 (fp16 input)",
		       SP_W_FLAGS);
	return -1;
}

/* The layer's pairs (first, second) of SP operations: the one of
 * `operation`; 0 with the step refused. */
static int spmean_pair(nbg_cpu_plan *p, nbg_cpu_step *s, spmax_layer *L, size_t operation)
{
	if (!spmax_span(p, L, operation))
		return 0;
	if ((L->last - L->first + 1) % 2) {
		nbg_cpu_refuse(s, L->id_layer, "a %s layer (%s) of %zu operations: executed are pairs", L->what,
			       s->layer, L->last - L->first + 1);
		return 0;
	}
	L->first += (operation - L->first) / 2 * 2;
	L->last = L->first + 1;
	return 1;
}

/* A mean (ReduceMeanLayer_SP) or a sum (ReduceSumLayer_SP: sum 1): each
 * pair of the layer reduces its own image over one axis. */
static void plan_spmean(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation, int sum)
{
	const char *what = sum ? "sum" : "mean";
	spmax_layer L = { .what = what, .id_layer = "sp-mean-layer-unsupported",
			  .id_read = "sp-mean-intermediate-read", .s = s };
	if (!spmean_pair(p, s, &L, operation))
		return;
	const nbg_cmd_op *a = nbg_commands_op_of(p->c, L.first), *z = nbg_commands_op_of(p->c, L.last);
	const nbg_cmd *ca = nbg_commands_at(p->c, NBG_CMD_NN, a->command);
	const nbg_cmd *cz = nbg_commands_at(p->c, NBG_CMD_NN, z->command);
	int axis = spmean_axis(s, what, a, z, L.first);
	if (axis < 0)
		return;
	uint32_t n = a->in[axis];
	int fl = spmean_fl(s, what, ca, cz, a->in_type == 4, sum ? 1 : n);
	if (fl < 0)
		return;
	if ((uint64_t)a->in[0] * a->in[1] * a->in[2] > SPMAX_MAX_WIDTH) {
		nbg_cpu_refuse(s, "work-limit", "a %s over %ux%ux%u values, above the limit of %u", what, a->in[0],
			       a->in[1], a->in[2], SPMAX_MAX_WIDTH);
		return;
	}
	cpu_ref *r = &op->u.ref;
	uint64_t in_row = a->in_row_stride, in_slice = a->in_slice_stride;
	uint64_t out_row = z->out_row_stride, out_slice = z->out_slice_stride;
	uint32_t ox = z->out[0], oz = z->out[2];
	if (in_row < 2ull * a->in[0] || in_slice < in_row * a->in[1] || out_row < 2ull * ox ||
	    out_slice < out_row * z->out[1] || in_row >= (1ull << 32) || out_row >= (1ull << 32)) {
		nbg_cpu_refuse(s, "sp-mean-shape-unsupported", "a %s layer (%s) whose strides (rows %llu, slices "
			       "%llu in; %llu, %llu out) are shorter than its rows and slices", what, s->layer,
			       (unsigned long long)in_row, (unsigned long long)in_slice,
			       (unsigned long long)out_row, (unsigned long long)out_slice);
		return;
	}
	/* each slice's rows, then the slices: the extent of the whole image */
	if (!spmax_image(p, &L, a, ca, 0, (a->in[2] - 1) * in_slice + 2ull * a->in[0], a->in[1], in_row,
			 &r->in_region, &r->in_base) ||
	    !spmax_image(p, &L, z, cz, 1, (oz - 1) * out_slice + 2ull * ox, z->out[1], out_row, &r->out_region,
			 &r->out_base) ||
	    !spmax_sealed(p, &L))
		return;
	if (operation != L.last) {
		snprintf(s->what, sizeof(s->what), "SP, part of the %s computed at op %zu", what, L.last);
		nbg_cpu_ref_executed(s, op, CPU_OP_SPMEAN, CPU_REF_NONE);
		return;
	}
	r->width = a->in[0];
	r->rows = a->in[1];
	r->kx = a->in[2];
	r->group = (uint32_t)axis;
	r->ky = sum ? 1 : n;
	r->in_flip = a->in_type == 4;
	r->exponent = (uint32_t)fl;
	r->in_stride = (uint32_t)in_row;
	r->in_slice = in_slice;
	r->out_stride = (uint32_t)out_row;
	r->out_slice = out_slice;
	snprintf(s->what, sizeof(s->what), "SP %s over %c of %ux%ux%u %s -> fp16 (ops %zu-%zu), scale "
		 "2^-%d / %u", what, "xyz"[axis], r->width, r->rows, r->kx, r->in_flip ? "int16" : "fp16", L.first,
		 L.last, fl, r->ky);
	nbg_cpu_ref_executed(s, op, CPU_OP_SPMEAN, CPU_REF_MEAN);
}

static int spmean_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SP &&
	       (m->layer == CPU_LAYER_REDUCE_MEAN_SP || m->layer == CPU_LAYER_REDUCE_SUM_SP);
}

static void spmean_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	plan_spmean(p, s, op, m->operation, m->layer == CPU_LAYER_REDUCE_SUM_SP);
}

/* An input value: a half, or an int16 code (its 2^-fl in the scale). */
static double spmean_at(const uint8_t *in, uint64_t a, int int16)
{
	uint16_t v = (uint16_t)(in[a] | in[a + 1] << 8);
	return int16 ? (double)(int16_t)v : (double)nbg_fp16_to_float(v);
}

/* Each mean (sum): the sum of its halves or int16 codes in double
 * precision (exact for sums of fewer than 2^20 values: every half is a
 * multiple of 2^-24 below 2^16, every code an integer below 2^15), times
 * 2^-fl / d (exact but for the division by d: n for a mean, 1 for a sum),
 * rounded once to fp16 (to nearest, ties to even). */
static int spmean_run(const cpu_op *op, uint8_t *const *buf)
{
	const cpu_ref *r = &op->u.ref;
	if (r->kind != CPU_REF_MEAN)
		return 0;
	const uint8_t *in = buf[r->in_region] + r->in_base;
	uint8_t *out = buf[r->out_region] + r->out_base;
	uint32_t dims[3] = { r->width, r->rows, r->kx }, axis = r->group;
	uint64_t steps[3] = { 2, r->in_stride, r->in_slice };
	uint32_t n = dims[axis];                             /* values per mean */
	dims[axis] = 1;
	for (uint32_t z = 0; z < dims[2]; z++)
		for (uint32_t y = 0; y < dims[1]; y++)
			for (uint32_t x = 0; x < dims[0]; x++) {
				uint64_t a = z * r->in_slice + (uint64_t)y * r->in_stride + 2ull * x;
				double sum = 0;
				for (uint32_t i = 0; i < n; i++)
					sum += spmean_at(in, a + i * steps[axis], r->in_flip);
				uint16_t h = nbg_fp16_from_double(ldexp(sum, -(int)r->exponent) / r->ky);
				uint64_t o = z * r->out_slice + (uint64_t)y * r->out_stride + 2ull * x;
				out[o] = (uint8_t)(h & 0xffu);
				out[o + 1] = (uint8_t)(h >> 8);
			}
	return 0;
}

static void spmean_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	const cpu_ref *r = &op->u.ref;
	*work = r->kind == CPU_REF_MEAN ? nbg_cpu_mul_sat(nbg_cpu_mul_sat(r->width, r->rows), r->kx) : 0;
	*scratch = 0;
}

const cpu_op_def nbg_cpu_op_spmean = { "sp-mean", spmean_match, spmean_plan, spmean_run, spmean_cost };

/* ------------------------------------------------------ the subtraction */

#define SP_NEGATE (1u << 28)    /* word 27: the operand is subtracted */
#define SP_FLAG_BITS 0xb0000000u /* word 27 bits 28, 29, 31: none but 28 established */

/* An SP command's scale as a power of two 2^k (mantissa 0, exponent 1 to
 * 254), the word 27 flags flags and no other of bits 28, 29, 31; 0 when
 * not. */
static double spsub_scale(const nbg_cmd *cmd, uint32_t flags)
{
	uint32_t b = sp_scale_bits(cmd), e = b >> 23;
	if (cmd->word_count <= SP_W_FLAGS || (cmd->words[SP_W_FLAGS] & SP_FLAG_BITS) != flags || (b & 0x7fffffu) ||
	    e == 0 || e == 255)
		return 0;
	return ldexp(1.0, (int)e - 127);
}

/* The pair: the first loads b (n fp16 values, n x 1 x 1) and writes no
 * memory; the second reads a (x x y x z, fp16 or int16) and writes a - b
 * (a x b) in its shape (fp16 or int16), b one value per x (n = x), or, for
 * a product, per y (n = y, not x).  The axis b runs along (0, 1), -1 with
 * the step refused. */
static int spsub_shape(nbg_cpu_step *s, const char *what, const nbg_cmd_op *a, const nbg_cmd_op *z, size_t first,
		       int mul)
{
	/* b: fp16, or int16 codes in a product (the int16 blendshapes file's) */
	int ok = (a->in_type == 1 || (mul && a->in_type == 4)) && a->in[1] == 1 && a->in[2] == 1 && z->in[0] && z->in[1] && z->in[2] &&
		 (z->in_type == 1 || z->in_type == 4) && (z->out_type == 1 || z->out_type == 4) &&
		 z->out[0] == z->in[0] && z->out[1] == z->in[1] && z->out[2] == z->in[2];
	int axis = a->in[0] == z->in[0] ? 0 : mul && a->in[0] == z->in[1] ? 1 : -1;
	if (!ok || axis < 0 || a->out_ref.patched) {
		nbg_cpu_refuse(s, "sp-sub-shape-unsupported", "a %s layer (%s) loading %ux%ux%u of data "
			       "type %u (operation %zu) and reading %ux%ux%u of data type %u into %ux%ux%u of data "
			       "type %u (operation %zu)%s: executed is n x 1 x 1 fp16 (1) values b, loaded without "
			       "writing memory (a product's: or int16 (4) codes), and x x y x z fp16 or int16 (4) values a, n = x%s, into a result of "
			       "a's shape, fp16 or int16", what, s->layer, a->in[0], a->in[1], a->in[2], a->in_type,
			       first, z->in[0], z->in[1], z->in[2], z->in_type, z->out[0], z->out[1], z->out[2],
			       z->out_type, first + 1, a->out_ref.patched ? ", the first writing memory" : "",
			       mul ? " (or y)" : "");
		return -1;
	}
	return axis;
}

/* The operand images: b (region 1), a (region 0) and the output (2). */
static int spsub_images(nbg_cpu_plan *p, spmax_layer *L, const nbg_cmd_op *a, const nbg_cmd_op *z, cpu_ref *r)
{
	const nbg_cmd *ca = nbg_commands_at(p->c, NBG_CMD_NN, a->command);
	const nbg_cmd *cz = nbg_commands_at(p->c, NBG_CMD_NN, z->command);
	uint64_t bytes = 2ull * z->in[0], bbytes = 2ull * a->in[0];
	r->elt.x = z->in[0], r->elt.y = z->in[1], r->elt.z = z->in[2];
	r->elt.row[0] = z->in_row_stride, r->elt.slice[0] = z->in_slice_stride;
	r->elt.row[2] = z->out_row_stride, r->elt.slice[2] = z->out_slice_stride;
	for (int i = 0; i < 3; i += 2)
		if (r->elt.row[i] < bytes || r->elt.slice[i] < r->elt.row[i] * r->elt.y) {
			nbg_cpu_refuse(L->s, "sp-sub-shape-unsupported", "a subtraction layer (%s) whose %s strides "
				       "(rows %llu, slices %llu) are shorter than its rows and slices", L->s->layer,
				       i ? "output" : "input", (unsigned long long)r->elt.row[i],
				       (unsigned long long)r->elt.slice[i]);
			return 0;
		}
	/* each image's extent: its slices' rows, as the mean's */
	return spmax_image(p, L, a, ca, 0, bbytes, 1, bbytes, &r->elt.region[1], &r->elt.base[1]) &&
	       spmax_image(p, L, z, cz, 0, (r->elt.z - 1) * r->elt.slice[0] + bytes, r->elt.y, r->elt.row[0],
			   &r->elt.region[0], &r->elt.base[0]) &&
	       spmax_image(p, L, z, cz, 1, (r->elt.z - 1) * r->elt.slice[2] + bytes, r->elt.y, r->elt.row[2],
			   &r->elt.region[2], &r->elt.base[2]);
}

/* A TensorSub_SP layer (mul 0) or a TensorMul_SP layer of pairs (mul 1). */
static void plan_spsub(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation, int mul)
{
	const char *what = mul ? "product" : "subtraction";
	spmax_layer L = { .what = what, .id_layer = "sp-sub-layer-unsupported",
			  .id_read = "sp-sub-intermediate-read", .s = s };
	if (!spmean_pair(p, s, &L, operation))
		return;
	const nbg_cmd_op *a = nbg_commands_op_of(p->c, L.first), *z = nbg_commands_op_of(p->c, L.last);
	const nbg_cmd *ca = nbg_commands_at(p->c, NBG_CMD_NN, a->command);
	const nbg_cmd *cz = nbg_commands_at(p->c, NBG_CMD_NN, z->command);
	cpu_ref *r = &op->u.ref;
	int axis = spsub_shape(s, what, a, z, L.first, mul);
	if (axis < 0)
		return;
	double sb = spsub_scale(ca, mul ? 0 : SP_NEGATE), sa = spsub_scale(cz, 0);
	if (sb == 0 || sa == 0) {
		nbg_cpu_refuse(s, "sp-sub-scale-inconsistent", "a %s layer (%s) whose scales (0x%08x, "
			       "0x%08x) are not powers of two, or whose word %d flags (0x%08x, 0x%08x) are not %s "
			       "in the first and none in the second", what, s->layer, sp_scale_bits(ca),
			       sp_scale_bits(cz), SP_W_FLAGS, ca->word_count > SP_W_FLAGS ? ca->words[SP_W_FLAGS] : 0,
			       cz->word_count > SP_W_FLAGS ? cz->words[SP_W_FLAGS] : 0,
			       mul ? "none" : "bit 28 (the negation)");
		return;
	}
	if ((uint64_t)z->in[0] * z->in[1] * z->in[2] > SPMAX_MAX_WIDTH) {
		nbg_cpu_refuse(s, "work-limit", "a %s over %ux%ux%u values, above the limit of %u", what,
			       z->in[0], z->in[1], z->in[2], SPMAX_MAX_WIDTH);
		return;
	}
	if (!spsub_images(p, &L, a, z, r) || !spmax_sealed(p, &L))
		return;
	if (operation != L.last) {
		snprintf(s->what, sizeof(s->what), "SP, part of the %s computed at op %zu", what, L.last);
		nbg_cpu_ref_executed(s, op, mul ? CPU_OP_SPMUL : CPU_OP_SPSUB, CPU_REF_NONE);
		return;
	}
	/* a product of int16 codes by int16 codes: a x b x s_b, the second
	 * command's scale (2^-fl of a) not applied (doc/cpu-backend.md, "The
	 * SP product") */
	int codes = mul && z->in_type == 4 && a->in_type == 4 && z->out_type == 4;
	r->elt.a = codes ? 1.0f : (float)sa;
	r->elt.b = (float)sb;
	r->elt.zp0 = z->in_type == 4;   /* int16 a */
	r->elt.zp1 = a->in_type == 4;   /* int16 b */
	r->elt.zpo = z->out_type == 4;  /* int16 out */
	r->group = (uint32_t)axis;
	snprintf(s->what, sizeof(s->what), "SP %s %ux%ux%u %s x %g %c %u %s (along %c) x %g -> %s (ops %zu-%zu)",
		 mul ? "product" : "subtraction", r->elt.x, r->elt.y, r->elt.z, r->elt.zp0 ? "int16" : "fp16", sa,
		 mul ? '*' : '-', a->in[0], r->elt.zp1 ? "int16" : "fp16", "xy"[axis], sb, r->elt.zpo ? "int16" : "fp16", L.first, L.last);
	nbg_cpu_ref_executed(s, op, mul ? CPU_OP_SPMUL : CPU_OP_SPSUB, mul ? CPU_REF_SPMUL : CPU_REF_SUB);
}

static int spsub_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SP && m->layer == CPU_LAYER_TENSOR_SUB_SP;
}

static void spsub_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	plan_spsub(p, s, op, m->operation, 0);
}

/* A TensorMul_SP layer of more than one operation (one: ops/nnf16.c, the
 * scaling). */
static int spmul_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	const nbg_graph_layer *l = m->type == NBG_GRAPH_OP_SP && m->layer == CPU_LAYER_TENSOR_MUL_SP
					   ? nbg_graph_layer_at(p->g, nbg_graph_operation_at(p->g, m->operation)->layer_id)
					   : NULL;
	return l && l->operation_records > 1;
}

static void spmul_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	plan_spsub(p, s, op, m->operation, 1);
}

/* The values of b: one per x, or per y (a product along y). */
static uint32_t spsub_b_count(const cpu_ref *r)
{
	return r->group ? r->elt.y : r->elt.x;
}

/* out = a x sa - b[x] x sb (a x sa x b[x or y] x sb) in double (exact:
 * powers of two times halves or int16 codes, a product of two of them),
 * rounded once: to fp16 (to nearest, ties to even) or to an int16 code
 * (half away from zero, saturated).  b is copied before any value is
 * written: the first command loads it, and the output may cover where it
 * was (the int16 blendshapes file's op 99 writes over all of
 * it). */
static int spsub_run(const cpu_op *op, uint8_t *const *buf)
{
	const cpu_ref *r = &op->u.ref;
	if (r->kind != CPU_REF_SUB && r->kind != CPU_REF_SPMUL)
		return 0;
	const uint8_t *in = buf[r->elt.region[0]] + r->elt.base[0];
	size_t nb = 2u * (size_t)spsub_b_count(r);
	uint8_t *bv = malloc(nb ? nb : 1);
	if (!bv)
		return -1;
	memcpy(bv, buf[r->elt.region[1]] + r->elt.base[1], nb);
	uint8_t *out = buf[r->elt.region[2]] + r->elt.base[2];
	for (uint32_t z = 0; z < r->elt.z; z++)
		for (uint32_t y = 0; y < r->elt.y; y++)
			for (uint32_t x = 0; x < r->elt.x; x++) {
				uint64_t i = z * r->elt.slice[0] + y * r->elt.row[0] + 2ull * x;
				uint64_t o = z * r->elt.slice[2] + y * r->elt.row[2] + 2ull * x;
				double va = spmean_at(in, i, (int)r->elt.zp0) * r->elt.a;
				double vb = spmean_at(bv, 2ull * (r->group ? y : x), (int)r->elt.zp1) * r->elt.b;
				double v = r->kind == CPU_REF_SPMUL ? va * vb : va - vb;
				uint16_t h;
				if (r->elt.zpo) {
					double q = v == v ? nbg_cpu_round_half_away(v) : 0; /* NaN: 0 (unmeasured) */
					h = (uint16_t)(int16_t)(q < -32768 ? -32768 : q > 32767 ? 32767 : q);
				} else {
					h = nbg_fp16_from_double(v);
				}
				out[o] = (uint8_t)(h & 0xffu);
				out[o + 1] = (uint8_t)(h >> 8);
			}
	free(bv);
	return 0;
}

static void spsub_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	const cpu_ref *r = &op->u.ref;
	int on = r->kind == CPU_REF_SUB || r->kind == CPU_REF_SPMUL;
	*work = on ? nbg_cpu_mul_sat(nbg_cpu_mul_sat(r->elt.x, r->elt.y), r->elt.z) : 0;
	*scratch = on ? 2ull * spsub_b_count(r) : 0;
}

const cpu_op_def nbg_cpu_op_spsub = { "sp-sub", spsub_match, spsub_plan, spsub_run, spsub_cost };
const cpu_op_def nbg_cpu_op_spmul = { "sp-mul", spmul_match, spmul_plan, spsub_run, spsub_cost };
