/*
 * ops/conv.c - NN convolutions: an NN command whose command and kernel
 * stream say everything it computes (conv, depthwise conv, and target
 * 0x7d's fully connected command as a 1x1 convolution), with a fused
 * addition on target 0xe8 (ops/add.c).  Its plan (every field read, every
 * address range checked against its buffer before any run) and its run
 * (the 32-bit kernels and the 64-bit path, the ReLU and pooling).  The
 * arithmetic rules live in quant.h (doc/cpu-backend.md).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/graph/commands_lib.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/conv.h"
#include "cpu/ops/conv_fast.h"
#include "cpu/quant.h"
#include "cpu/ring.h"

/*
 * The requantization scale as a float32's 23 mantissa bits and biased
 * exponent, from the command's post_multiplier and post_shift fields, in
 * the encoding of the target's family (doc/cpu-backend.md, "The scale"):
 *   Mesa's: the top 15 mantissa bits in post_multiplier, _1_to_6, _7_to_14
 *     and post_shift (with _bit_5_6) = 142 - exponent (0x7d, 0x88, 0x99, 0xa1);
 *   23 mantissa bits (with _15_to_22) and post_shift = 127 - exponent (0xad,
 *     0xb9, 0xbe);
 *   23 mantissa bits and post_shift | bit_5_6 << 5 = the exponent itself
 *     (0xe8, 0xee, 0x1000000e, 0x10000016, 0x1000003b).
 * 0 for a target whose encoding is not established.
 */
static int scale_fields(uint32_t target, const nbg_cmd *cmd, uint32_t *mantissa, uint32_t *exponent)
{
	uint32_t m = nbg_cpu_nn_multiplier(cmd);
	uint32_t sh = nbg_cmd_nn(cmd, NBG_NNF_POST_SHIFT) | nbg_cmd_nn(cmd, NBG_NNF_POST_SHIFT_BIT_5_6) << 5;
	switch (target) {
	case 0x7d: case 0x88: case 0x99: case 0xa1:
		*mantissa = (m & 0x7fffu) << 8; /* the top 15 bits only */
		*exponent = sh <= 142 ? 142 - sh : 0;
		return 1;
	case 0xad: case 0xb9: case 0xbe:
		*mantissa = m;
		*exponent = sh <= 127 ? 127 - sh : 0;
		return 1;
	case 0xe8: case 0xee: case 0x1000000e: case 0x10000016: case 0x1000003b:
		*mantissa = m;
		*exponent = sh;
		return 1;
	default:
		return 0;
	}
}

int nbg_cpu_conv_fits_int32(const cpu_conv *cv)
{
	if (!cv->k || !cv->out_x || !cv->out_y || cv->out_x > (1u << 16) || cv->out_y > (1u << 16) ||
	    cv->k > (1u << 12))
		return 0;
	cpu_conv_geom g = nbg_cpu_conv_geometry(cv);
	if (g.taps > (1ull << 31) ||
	    (uint64_t)cv->in_z * g.plane * 2 > CPU_MAX_SCRATCH ||
	    g.groups * CPU_GRP * g.taps * 2 > CPU_MAX_SCRATCH)
		return 0;
	for (uint32_t o = 0; o < cv->out_z; o++) {
		int64_t b = cv->bias[o];
		uint64_t bound = (uint64_t)(b < 0 ? -b : b);
		const uint8_t *w = cv->codes + (size_t)o * g.taps;
		for (uint64_t t = 0; t < g.taps; t++) {
			int32_t d = nbg_cpu_conv_val(cv, w[t]) - (int32_t)cv->w_zp;
			/* |x - in_zp| <= 255 for any uint8 x and uint8 zero point,
			 * and for any int8 x with zero point 0 */
			bound += (uint64_t)(d < 0 ? -d : d) * 255u;
		}
		if (bound > INT32_MAX)
			return 0;
	}
	return 1;
}

/* The decoded kernel codes and biases; 0 with the step refused when the
 * stream holds fewer codes than the kernel needs.  The bound that lets the
 * 32-bit kernels run reads every code once: past the plan's budget
 * (nbg_cpu_plan_afford) the 64-bit path runs instead, with the same
 * results. */
static int conv_weights(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_conv *cv, const nbg_weights_op *wo,
			const uint32_t *shape)
{
	size_t n = 0;
	uint64_t need = (uint64_t)cv->out_z * cv->kh * cv->k * (cv->depthwise ? 1 : cv->in_z);
	cv->codes = nbg_weights_op_codes(wo, &n);
	cv->bias = nbg_weights_op_bias(wo);
	if (!cv->codes || !cv->bias || n < need) {
		nbg_cpu_refuse(s, "weights-not-decoded", "its decoded kernel stream holds %zu codes, fewer than "
		       "the %ux%ux%ux%u kernel needs", n, shape[0], shape[1], shape[2], shape[3]);
		return 0;
	}
	/* the 32-bit kernels and the vector paths take square kernels only */
	cv->acc32 = cv->kh == cv->k && nbg_cpu_plan_afford(p, need) && nbg_cpu_conv_fits_int32(cv);
	return 1;
}

/*
 * The written image: the convolution's output, 2x2-pooled (pool 1 max, 3
 * first pixel), or subsampled by 2 where no pooling field says so but the
 * output row pitch holds half a row (a strided convolution, whose
 * subsampling the decoder infers): that one is written as first-pixel
 * pooling, the convolution at even x and y (doc/cpu-backend.md: the same layer
 * compiled for targets that set pooling 3 gives the same bytes).  0 with
 * the step refused when the written image does not follow.
 */
static int conv_written(nbg_cpu_step *s, cpu_conv *cv, const nbg_cmd_op *op, uint32_t pool)
{
	if (!pool && op->out_subsample_inferred && op->out_subsample == 2)
		pool = 3;
	cv->pooling = pool;
	cv->pool_x = op->out[0];
	cv->pool_y = op->out[1];
	uint32_t sub = pool ? 2 : 1;
	if (op->out[2] != cv->out_z || cv->pool_x * sub > cv->out_x + sub - 1 ||
	    cv->pool_y * sub > cv->out_y + sub - 1 || !cv->pool_x || !cv->pool_y ||
	    (!pool && (cv->pool_x != cv->out_x || cv->pool_y != cv->out_y))) {
		nbg_cpu_refuse(s, "shape-inconsistent", "the written image %ux%ux%u does not follow from the "
		       "convolution's %ux%ux%u and its pooling or subsampling (%u)", op->out[0], op->out[1],
		       op->out[2], cv->out_x, cv->out_y, cv->out_z, op->out_subsample);
		return 0;
	}
	return 1;
}

/* The signed 4-bit in_image_y_offset of an NN operation's command. */
static int32_t y_offset(const nbg_cpu_plan *p, const nbg_cmd_op *op)
{
	const nbg_cmd *cmd = nbg_commands_at(p->c, NBG_CMD_NN, op->command);
	uint32_t yo = cmd ? nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_Y_OFFSET) | nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_Y_OFFSET_BIT_3) << 3 : 0;
	return yo >= 8 ? (int32_t)yo - 16 : (int32_t)yo;
}

/*
 * Tiles: an operation that computes rows of a layer whose earlier rows an
 * earlier operation of the same layer computed (same kind, same memories)
 * must read as many rows further on as it writes further on, times its
 * subsampling (the row pitch as planned: an interleaved input's row holds
 * every channel).  Where the data flow places one of its images by the
 * other's step (dataflow.tile_placed: that image's address steps k > 1
 * times what the other's implies; doc/commands.md, "row tiles"), it is
 * read or written there: the 0xb9 image_classify file's layer-2 outputs
 * (k 16) so placed compute what the 0xbe and 0xe8 files compute, value for
 * value, the 0xb9 face detector's layer-3 inputs and layer-6 outputs (k 9)
 * what the 0xa1 one computes (doc/cpu-backend.md, "Row tiles, interleaved
 * input records and circular buffers").  Any other disagreement is refused.
 */
static int tile_consistent(const nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd_op *op, cpu_conv *cv)
{
	uint32_t sub = cv->pooling ? 2 : 1;
	if (op->tile_placed == 1 || op->tile_placed == 2) {
		size_t n = strlen(s->what);
		if (op->tile_placed == 1)
			cv->in_base = op->tile_offset;
		else
			cv->out_base = op->tile_offset;
		snprintf(s->what + n, sizeof(s->what) - n, ", rows placed by its %s (x%u)",
			 op->tile_placed == 1 ? "output" : "input", op->tile_scale);
		return 1;
	}
	for (size_t j = op->operation, seen = 0; j-- > 0 && seen < 64; seen++) {
		const nbg_cmd_op *q = nbg_commands_op_of(p->c, j);
		if (!q || q->engine != NBG_CMD_NN || q->layer_id != op->layer_id)
			continue;
		if (nbg_cpu_cmd_kind(q) != nbg_cpu_cmd_kind(op) || q->in_ref.source_type != op->in_ref.source_type ||
		    q->in_ref.index != op->in_ref.index || q->out_ref.source_type != op->out_ref.source_type ||
		    q->out_ref.index != op->out_ref.index || q->in_row_stride != op->in_row_stride ||
		    q->out_row_stride != op->out_row_stride || !cv->in_row || !op->out_row_stride ||
		    op->in_ref.offset <= q->in_ref.offset || op->out_ref.offset <= q->out_ref.offset)
			return 1;
		uint64_t din = op->in_ref.offset - q->in_ref.offset, dout = op->out_ref.offset - q->out_ref.offset;
		/* the first convolution row reads input row (offset / row) + y offset,
		 * the row pitch as planned (an interleaved input's holds every channel) */
		int64_t rin = (int64_t)(din / cv->in_row) + y_offset(p, op) - y_offset(p, q);
		if (din % cv->in_row || dout % op->out_row_stride ||
		    rin == (int64_t)(dout / op->out_row_stride * sub))
			return 1;
		nbg_cpu_refuse(s, "tile-offsets-inconsistent", "operation %zu of the same layer starts %lld input "
		       "rows before it and writes %llu rows before it (subsampling %u): how its tile's addresses "
		       "map to rows is not established", j, (long long)rin,
		       (unsigned long long)(dout / op->out_row_stride), sub);
		return 0;
	}
	return 1;
}

/*
 * An input record the command reads interleaved: the record's dimensions
 * (file order, innermost first) are (z, x, y) of the command's image, one
 * pixel's channels side by side, where the command's fields describe a
 * planar image with rows of x bytes.  Pixel (x, y, z) is then at
 * y x row x z + x x z + z (doc/cpu-backend.md, "Row tiles, interleaved
 * input records and circular buffers": the image_classify family's layer 0 computes what the targets
 * that transpose the record first compute only when read so).
 */
static int input_interleaved(const nbg_cpu_plan *p, const nbg_cmd_op *op, const cpu_conv *cv)
{
	return !cv->depthwise && nbg_cpu_input_interleaved(p, op, cv->in_z, cv->in_x, cv->in_y, 1);
}

/*
 * Where the convolution reads and writes: regions, bases, strides (an
 * interleaved input record's), circular buffers, the tile's rows
 * (tile_consistent); every byte touched lies inside its buffer (through the ring when
 * there is one).  0 with the step refused.
 */
static int conv_addressing(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_conv *cv, const nbg_cmd_op *op,
			   const nbg_cmd *cmd, int column)
{
	if (!nbg_cpu_find_io(p, s, op, &cv->in_region, &cv->out_region))
		return 0;
	cv->in_base = op->in_ref.offset;
	cv->in_row = op->in_row_stride;
	cv->in_slice = column ? op->in_row_stride : op->in_slice_stride; /* channel z*ky + y: row y of slice z */
	cv->in_xstep = 1;
	if (input_interleaved(p, op, cv)) {
		cv->in_row = (uint64_t)op->in_row_stride * cv->in_z;
		cv->in_slice = 1;
		cv->in_xstep = cv->in_z;
	}
	cv->out_base = op->out_ref.offset;
	cv->out_row = op->out_row_stride;
	cv->out_slice = op->out_slice_stride;
	if (!tile_consistent(p, s, op, cv) ||
	    !nbg_cpu_nn_ring(p, s, cmd, "input", 0,
		     cv->in_region, cv->in_base, &cv->in_ring_lo, &cv->in_ring_size) ||
	    !nbg_cpu_nn_ring(p, s, cmd, "output", 1,
		     cv->out_region, cv->out_base, &cv->out_ring_lo, &cv->out_ring_size))
		return 0;
	if (op->in_element_bytes != 1 || op->out_element_bytes != 1 || cv->in_x > (1u << 16) ||
	    !nbg_cpu_image_in(p, cv->in_region, cv->in_base, ((uint64_t)cv->in_x - 1) * cv->in_xstep + 1, cv->in_y,
		      cv->in_z, cv->in_row, cv->in_slice, cv->in_ring_lo, cv->in_ring_size, NULL)) {
		nbg_cpu_refuse(s, "address-outside-memory", "its input image %ux%ux%u at %s+0x%llx (row %llu, "
		       "slice %llu bytes) does not lie inside %s %llu bytes",
		       cv->in_x, cv->in_y, cv->in_z, nbg_graph_source_type_name(op->in_ref.source_type),
		       (unsigned long long)cv->in_base, (unsigned long long)cv->in_row,
		       (unsigned long long)cv->in_slice,
		       cv->in_ring_size ? "(passing its end at most once) its circular buffer's" : "that memory's",
		       (unsigned long long)(cv->in_ring_size ? cv->in_ring_size : p->regions[cv->in_region].size));
		return 0;
	}
	if (!nbg_cpu_image_in(p, cv->out_region, cv->out_base, cv->pool_x, cv->pool_y, cv->out_z, cv->out_row,
		      cv->out_slice, cv->out_ring_lo, cv->out_ring_size, NULL)) {
		nbg_cpu_refuse(s, "address-outside-memory", "its output image %ux%ux%u at %s+0x%llx (row %llu, "
		       "slice %llu bytes) does not lie inside %s %llu bytes",
		       cv->pool_x, cv->pool_y, cv->out_z,
		       nbg_graph_source_type_name(op->out_ref.source_type),
		       (unsigned long long)cv->out_base, (unsigned long long)cv->out_row,
		       (unsigned long long)cv->out_slice,
		       cv->out_ring_size ? "(passing its end at most once) its circular buffer's" : "that memory's",
		       (unsigned long long)(cv->out_ring_size ? cv->out_ring_size : p->regions[cv->out_region].size));
		return 0;
	}
	return 1;
}

/*
 * A fully connected command of target 0x7d (doc/cpu-backend.md): the other
 * targets' 1x1 convolution of x*y pixels, its image reshaped to x*y
 * columns of ky rows and z/ky slices, its kernels one column of ky rows
 * (doc/weights.md).  Output pixel x is sum over (z, y) of w[z][y] x in(x,
 * y, z): a 1x1 convolution of ky*z channels over one row of x pixels, where
 * channel z*ky + y is row y of slice z.  Planned as that when the command
 * has exactly that shape (no pooling, no offsets, one output row, as many
 * output as input pixels); 0 with the step refused otherwise.
 */
static int column_as_1x1(nbg_cpu_step *s, cpu_conv *cv, const nbg_cmd_op *op, uint32_t pool)
{
	uint32_t ky = cv->kh;
	if (cv->depthwise || cv->in_y != ky || cv->out_y != 1 || cv->out_x != cv->in_x || pool ||
	    op->out_subsample != 1 || cv->x_off || cv->y_off || cv->in_z > UINT32_MAX / ky) {
		nbg_cpu_refuse(s, "shape-inconsistent", "a fully connected command with %u-row kernels over "
		       "%ux%ux%u -> %ux%u (offsets %d,%d, pooling %u, subsampling %u): not one output row of "
		       "a column kernel", ky, cv->in_x, cv->in_y, cv->in_z, cv->out_x, cv->out_y, cv->x_off,
		       cv->y_off, pool, op->out_subsample);
		return 0;
	}
	if (op->in_slice_stride != (uint64_t)op->in_row_stride * ky || !op->in_row_stride) {
		nbg_cpu_refuse(s, "shape-inconsistent", "a fully connected command over %u rows whose input "
		       "slice stride %llu is not %u rows of %llu bytes: its image is not a reshaped 1x1 "
		       "convolution's", ky, (unsigned long long)op->in_slice_stride, ky,
		       (unsigned long long)op->in_row_stride);
		return 0;
	}
	cv->in_z *= ky;
	cv->in_y = 1;
	cv->k = cv->kh = 1;
	return 1;
}

/*
 * The data types: input, output and kernels all uint8 (code 0), or all
 * int8 (code 2: two's complement codes, doc/weights.md's int8 kernels)
 * with the input and output zero points 0, those of every int8 command of
 * the corpus (its records are dynamic fixed point); 0 with the step
 * refused.  No corpus command mixes the two.
 */
static int conv_types(nbg_cpu_step *s, cpu_conv *cv, const nbg_cmd_op *op)
{
	const char *types[3] = { "in_image_data_type", "out_image_data_type", "kernel_data_type" };
	uint32_t codes[3] = { op->in_type, op->out_type, op->kernel_type };
	for (int i = 0; i < 3; i++)
		if ((codes[i] != 0 && codes[i] != 2) || codes[i] != codes[0]) {
			const char *n = nbg_command_data_type_name(codes[i]);
			nbg_cpu_refuse(s, "data-type-unsupported", "%s is %u (%s) with in_image_data_type %u: "
				       "executed are input, output and kernels all uint8 or all int8",
				       types[i], codes[i], n ? n : "unknown", codes[0]);
			return 0;
		}
	cv->sgn = codes[0] == 2;
	return 1;
}

static void plan_nn(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_conv *cv, const nbg_cmd_op *op, int kind,
		    const nbg_weights_op *wo)
{
	const nbg_cmd *cmd = nbg_commands_at(p->c, NBG_CMD_NN, op->command);
	if (op->type != NBG_GRAPH_OP_NN) {
		nbg_cpu_refuse(s, "operation-type-unsupported",
		       "an NN-engine operation of type %s: only convolutions (type NN) are executed",
		       nbg_graph_op_type_name(op->type) ? nbg_graph_op_type_name(op->type) : "?");
		return;
	}
	if (!cmd) {
		nbg_cpu_refuse(s, "command-not-decoded", "its NN command is not decoded");
		return;
	}
	/* a target 0x7d fully connected command whose kernels decode one column
	 * wide: a 1x1 convolution over a reshaped image (column_as_1x1) */
	const uint32_t *ws = wo && nbg_weights_op_status(wo) == NBG_WEIGHTS_DECODED ? nbg_weights_op_shape(wo) : NULL;
	int column = kind == CPU_CMD_FULLY_CONNECTED && ws && ws[3] == 1 && ws[2] > 1;
	if (!column && kind != CPU_CMD_CONV && kind != CPU_CMD_DEPTHWISE_CONV) {
		nbg_cpu_refuse(s, "operation-kind-unsupported",
		       "an NN %s (layer_type %u): only conv and depthwise conv are executed", op->kind,
		       nbg_cmd_nn(cmd, NBG_NNF_LAYER_TYPE));
		return;
	}
	if (!wo || nbg_weights_op_status(wo) != NBG_WEIGHTS_DECODED) {
		nbg_cpu_refuse(s, "weights-not-decoded", "its kernel stream is not decoded (%s: %s)",
		       wo ? nbg_weights_op_reason_id(wo) : "no stream",
		       wo ? nbg_weights_op_reason(wo) : "no weights record");
		return;
	}
	if (!conv_types(s, cv, op))
		return;
	if (nbg_cmd_nn(cmd, NBG_NNF_PER_CHANNEL_POST_MUL)) {
		nbg_cpu_refuse(s, "per-channel-scale-unsupported",
		       "per_channel_post_mul is 1: per-channel requantization has no sample to fix its rule");
		return;
	}
	if (nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_BORDER_MODE) != 0) {
		nbg_cpu_refuse(s, "border-mode-unsupported",
		       "in_image_border_mode is %u: only 0 (a constant border) is executed",
		       nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_BORDER_MODE));
		return;
	}
	/* the requantization's rounding (quant.h, doc/cpu-backend.md) */
	if (!nbg_cpu_rounding(s, "rounding-mode-unsupported", "an NN convolution", "rounding_mode",
			      nbg_cmd_nn(cmd, NBG_NNF_ROUNDING_MODE), &cv->even))
		return;
	uint32_t pool = op->pooling;
	if (pool == 2 || (pool == 1 && op->pooling_size != 2) || (pool == 3 && op->pooling_size != 2)) {
		nbg_cpu_refuse(s, "pooling-unsupported", "pooling is %u (%s) with a %ux%u window: executed are none, "
		       "2x2 max and 2x2 first pixel", pool, nbg_command_pooling_name(pool),
		       op->pooling_size, op->pooling_size);
		return;
	}
	const uint32_t *shape = nbg_weights_op_shape(wo);
	cv->depthwise = kind == CPU_CMD_DEPTHWISE_CONV;
	cv->kh = shape[2];
	cv->k = shape[3];
	cv->in_x = nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_X_SIZE);
	cv->in_y = nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_Y_SIZE);
	cv->out_x = op->out_conv[0];
	cv->out_y = op->out_conv[1];
	cv->out_z = op->out_conv[2];
	cv->in_z = cv->depthwise ? cv->out_z : shape[1];
	if (shape[0] != cv->out_z || (cv->depthwise && shape[1] != 1)) {
		nbg_cpu_refuse(s, "shape-inconsistent", "the kernel shape %ux%ux%ux%u does not match the command's "
		       "output z %u%s", shape[0], shape[1], shape[2], shape[3], cv->out_z,
		       cv->depthwise ? " with one input channel per kernel (depthwise)" : "");
		return;
	}
	/* a kernel one value wide (ky x 1, 1 x kx: the weights decoder's only
	 * non-square kernels, doc/weights.md) is computed as it is; the 0x7d
	 * column kernels are reshaped below */
	if (shape[2] != shape[3] && shape[2] != 1 && shape[3] != 1) {
		nbg_cpu_refuse(s, "shape-inconsistent", "the kernel is %u rows of %u values: executed are square "
		       "kernels and kernels one value wide", shape[2], shape[3]);
		return;
	}
	if (!cv->in_x || !cv->in_y || !cv->in_z || !cv->out_x || !cv->out_y || !cv->out_z || !cv->k || !cv->kh) {
		nbg_cpu_refuse(s, "shape-invalid", "a size of the command is 0 (input %ux%ux%u, output %ux%ux%u)",
		       cv->in_x, cv->in_y, cv->in_z, cv->out_x, cv->out_y, cv->out_z);
		return;
	}
	uint32_t xo = nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_X_OFFSET) | nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_X_OFFSET_BIT_3) << 3;
	uint32_t yo = nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_Y_OFFSET) | nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_Y_OFFSET_BIT_3) << 3;
	cv->x_off = xo >= 8 ? (int32_t)xo - 16 : (int32_t)xo;
	cv->y_off = yo >= 8 ? (int32_t)yo - 16 : (int32_t)yo;
	if (column && !column_as_1x1(s, cv, op, pool))
		return;
	cv->in_zp = nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_BORDER_CONST);
	if (cv->in_zp > 255) {
		nbg_cpu_refuse(s, "zero-point-invalid", "in_image_border_const is %u, outside uint8", cv->in_zp);
		return;
	}
	cv->out_zp = nbg_cmd_nn(cmd, NBG_NNF_OUT_ZERO_POINT);
	if (cv->sgn && (cv->in_zp || cv->out_zp || nbg_weights_op_zero_point(wo))) {
		nbg_cpu_refuse(s, "zero-point-invalid", "an int8 convolution with in_image_border_const %u, "
			       "out_zero_point %u and coef_zero_point %d: executed are all 0, those of every int8 "
			       "command of the corpus", cv->in_zp, cv->out_zp, (int)nbg_weights_op_zero_point(wo));
		return;
	}
	cv->w_zp = (uint32_t)nbg_weights_op_zero_point(wo);
	if (!scale_fields(p->m->target, cmd, &cv->mantissa, &cv->exponent)) {
		nbg_cpu_refuse(s, "scale-encoding-unknown", "target 0x%x: which of the three encodings of the "
		       "requantization scale its commands use is not established", p->m->target);
		return;
	}
	cv->relu = op->relu;
	if (!conv_written(s, cv, op, pool))
		return;
	uint64_t macs = (uint64_t)cv->out_x * cv->out_y * cv->out_z * cv->kh * cv->k *
			(cv->depthwise ? 1 : cv->in_z);
	if (macs > NBG_CPU_MAX_MACS) {
		nbg_cpu_refuse(s, "work-limit", "%llu multiply-accumulates, above the limit of %llu",
		       (unsigned long long)macs, (unsigned long long)NBG_CPU_MAX_MACS);
		return;
	}
	if (!conv_addressing(p, s, cv, op, cmd, column))
		return;
	if (!conv_weights(p, s, cv, wo, shape))
		return;
	s->verdict = NBG_CPU_EXECUTE;
	s->reason_id = "";
	s->macs = macs;
}

/* The output positions [lo, hi) whose input coordinate pos + k + off lies in
 * [0, size): outside it the input is the constant border, the zero point,
 * whose term (x - zero point) is 0, so those positions get nothing. */
static void valid_range(uint32_t out, uint32_t size, int64_t k_off, uint32_t *lo, uint32_t *hi)
{
	int64_t l = -k_off, h = (int64_t)size - k_off;
	l = l < 0 ? 0 : l;
	h = h > (int64_t)out ? (int64_t)out : h;
	*lo = (uint32_t)l;
	*hi = h > l ? (uint32_t)h : (uint32_t)l;
}

/* A sum requantized into the output's type (quant.h): uint8, or int8 as
 * its two's complement byte. */
static inline uint8_t conv_requant(const cpu_conv *cv, int64_t acc)
{
	if (cv->sgn)
		return nbg_cpu_requant_s8(acc, cv->mantissa, cv->exponent, (int32_t)cv->out_zp, cv->relu, cv->even);
	return nbg_cpu_requant(acc, cv->mantissa, cv->exponent, cv->out_zp, cv->relu, cv->even);
}

/* A fused addition (ops/add.c): each position the pooling writes (every
 * one, or the first pixel of each 2x2 window) requantized with the second
 * image's byte at the position it is written to; the others are never
 * written. */
static void add_channel(const cpu_conv *cv, const uint8_t *add, uint32_t o, const int64_t *acc,
			uint8_t *plane)
{
	const cpu_add *a = &cv->add;
	uint32_t sub = cv->pooling == 3 ? 2 : 1;
	for (uint32_t py = 0; py < cv->pool_y; py++)
		for (uint32_t px = 0; px < cv->pool_x; px++) {
			size_t i = (size_t)(py * sub) * cv->out_x + px * sub;
			uint8_t b = add[a->base + o * a->slice + py * a->row + px];
			plane[i] = nbg_cpu_requant_add(acc[i], a, b, cv->out_zp, cv->even);
		}
}

/* The 64-bit path, for a convolution whose sums the plan could not bound
 * in int32: one output channel's convolution at every position into acc,
 * then requantized into plane[out_y][out_x].  Loop order: each kernel tap over a
 * whole row of outputs, so the inner loop walks contiguous input bytes. */
static void conv_channel(const cpu_conv *cv, const uint8_t *in, const uint8_t *add, uint32_t o,
			 int64_t *acc, uint8_t *plane)
{
	uint32_t kz = cv->depthwise ? 1 : cv->in_z;
	const uint8_t *w = cv->codes + (size_t)o * kz * cv->kh * cv->k;
	int32_t wz = (int32_t)cv->w_zp, xz = (int32_t)cv->in_zp;
	size_t n = (size_t)cv->out_x * cv->out_y;
	for (size_t i = 0; i < n; i++)
		acc[i] = cv->bias[o];
	for (uint32_t z = 0; z < kz; z++) {
		const uint8_t *slice = in + cv->in_base + (uint64_t)(cv->depthwise ? o : z) * cv->in_slice;
		for (uint32_t ky = 0; ky < cv->kh; ky++) {
			uint32_t y0, y1;
			valid_range(cv->out_y, cv->in_y, (int64_t)ky + cv->y_off, &y0, &y1);
			for (uint32_t kx = 0; kx < cv->k; kx++) {
				int32_t wv = nbg_cpu_conv_val(cv, w[((size_t)z * cv->kh + ky) * cv->k + kx]) - wz;
				uint32_t x0, x1;
				valid_range(cv->out_x, cv->in_x, (int64_t)kx + cv->x_off, &x0, &x1);
				if (wv == 0 || x0 >= x1)
					continue;
				for (uint32_t oy = y0; oy < y1; oy++) {
					const uint8_t *row = slice + (uint64_t)((int64_t)oy + ky + cv->y_off) * cv->in_row +
							     (uint64_t)((int64_t)kx + cv->x_off);
					int64_t *a = acc + (size_t)oy * cv->out_x;
					if (cv->sgn)
						for (uint32_t ox = x0; ox < x1; ox++)
							a[ox] += wv * ((int32_t)(int8_t)row[ox] - xz);
					else
						for (uint32_t ox = x0; ox < x1; ox++)
							a[ox] += wv * ((int32_t)row[ox] - xz);
				}
			}
		}
	}
	if (add) {
		add_channel(cv, add, o, acc, plane);
		return;
	}
	for (size_t i = 0; i < n; i++)
		plane[i] = conv_requant(cv, acc[i]);
}

/*
 * The 32-bit kernels (geometry in ops/conv.h).  Used when the plan
 * proved that no sum leaves int32 (nbg_cpu_conv_fits_int32): the result is
 * then the 64-bit one, bit for bit.  Per block of the wide output, CPU_GRP
 * output channels accumulate at once, so each input value read serves
 * CPU_GRP multiply-accumulates.  The inner loops have fixed trip counts,
 * int16 x int16 products and int32 sums, which the compiler vectorizes at
 * -O2 (gcc 12: -fopt-info-vec reports tap_shared and tap_own).
 */
/* acc[j] += w[j] x x[i] for the CPU_GRP channels j of one block. */
static void tap_shared(int32_t acc[CPU_GRP][CPU_BLK], const int16_t *restrict x, const int16_t *w)
{
	int16_t w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
	for (int i = 0; i < CPU_BLK; i++) {
		int16_t v = x[i];
		acc[0][i] += (int32_t)w0 * v;
		acc[1][i] += (int32_t)w1 * v;
		acc[2][i] += (int32_t)w2 * v;
		acc[3][i] += (int32_t)w3 * v;
	}
}

/* Depthwise: channel j reads its own plane x[j]. */
static void tap_own(int32_t acc[CPU_GRP][CPU_BLK], const int16_t *const *x, const int16_t *w)
{
	for (int j = 0; j < CPU_GRP; j++) {
		const int16_t *restrict xj = x[j];
		int16_t wj = w[j];
		for (int i = 0; i < CPU_BLK; i++)
			acc[j][i] += (int32_t)wj * xj[i];
	}
}

/* Every channel's convolution, requantized, into planes[out_z][out_y][out_x]. */
static int conv_planes32(const cpu_conv *cv, const uint8_t *in, uint8_t *planes)
{
	cpu_conv_geom g = nbg_cpu_conv_geometry(cv);
	int16_t *img = calloc((size_t)cv->in_z * g.plane, sizeof(*img));
	int16_t *wk = malloc((size_t)(g.groups * CPU_GRP * g.taps) * sizeof(*wk));
	if (!img || !wk) {
		free(img);
		free(wk);
		return -1;
	}
	int32_t xz = (int32_t)cv->in_zp, wz = (int32_t)cv->w_zp;
	for (uint32_t z = 0; z < cv->in_z; z++) {
		const uint8_t *src = in + cv->in_base + (uint64_t)z * cv->in_slice;
		int16_t *dst = img + (size_t)z * g.plane;
		for (uint64_t y = 0; y < (uint64_t)cv->out_y + cv->k - 1; y++) {
			int64_t iy = (int64_t)y + cv->y_off;
			if (iy < 0 || iy >= (int64_t)cv->in_y)
				continue;
			uint32_t x0, x1; /* the columns whose input lies in the image */
			valid_range((uint32_t)g.wide, cv->in_x, cv->x_off, &x0, &x1);
			const uint8_t *row = src + (uint64_t)iy * cv->in_row;
			for (uint32_t x = x0; x < x1; x++)
				dst[y * g.wide + x] = (int16_t)(nbg_cpu_conv_val(cv, row[(int64_t)x + cv->x_off]) - xz);
		}
	}
	/* wk[group][tap][j]: weight minus its zero point, 0 past the last channel */
	for (uint64_t gr = 0; gr < g.groups; gr++)
		for (uint64_t t = 0; t < g.taps; t++)
			for (uint32_t j = 0; j < CPU_GRP; j++) {
				uint64_t o = gr * CPU_GRP + j;
				wk[(gr * g.taps + t) * CPU_GRP + j] =
					o < cv->out_z ? (int16_t)(nbg_cpu_conv_val(cv, cv->codes[o * g.taps + t]) - wz) : 0;
			}
	size_t plane_out = (size_t)cv->out_x * cv->out_y;
	for (uint64_t b = 0; b < g.blocks; b++) {
		for (uint64_t gr = 0; gr < g.groups; gr++) {
			int32_t acc[CPU_GRP][CPU_BLK];
			for (uint32_t j = 0; j < CPU_GRP; j++) {
				uint64_t o = gr * CPU_GRP + j;
				int32_t bias = o < cv->out_z ? cv->bias[o] : 0;
				for (int i = 0; i < CPU_BLK; i++)
					acc[j][i] = bias;
			}
			const int16_t *w = wk + gr * g.taps * CPU_GRP;
			const int16_t *base = img + b * CPU_BLK;
			if (!cv->depthwise) {
				for (uint32_t z = 0; z < cv->in_z; z++)
					for (uint32_t ky = 0; ky < cv->k; ky++)
						for (uint32_t kx = 0; kx < cv->k; kx++, w += CPU_GRP)
							tap_shared(acc, base + z * g.plane + ky * g.wide + kx, w);
			} else {
				const int16_t *x[CPU_GRP];
				for (uint32_t ky = 0; ky < cv->k; ky++)
					for (uint32_t kx = 0; kx < cv->k; kx++, w += CPU_GRP) {
						for (uint32_t j = 0; j < CPU_GRP; j++) {
							uint64_t o = gr * CPU_GRP + j;
							/* past the last channel: any plane, weight 0 */
							o = o < cv->out_z ? o : cv->out_z - 1;
							x[j] = base + o * g.plane + ky * g.wide + kx;
						}
						tap_own(acc, x, w);
					}
			}
			uint64_t first = b * CPU_BLK, oy = first / g.wide, ox = first % g.wide;
			for (int i = 0; i < CPU_BLK && oy < cv->out_y; i++) {
				if (ox < cv->out_x)
					for (uint32_t j = 0; j < CPU_GRP; j++) {
						uint64_t o = gr * CPU_GRP + j;
						if (o < cv->out_z)
							planes[o * plane_out + oy * cv->out_x + ox] =
								conv_requant(cv, acc[j][i]);
					}
				if (++ox == g.wide) {
					ox = 0;
					oy++;
				}
			}
		}
	}
	free(img);
	free(wk);
	return 0;
}

/* What gather_range reads and writes. */
typedef struct conv_gather {
	const cpu_conv *cv;
	const uint8_t *in;
	uint8_t *g;
} conv_gather;

/* Channels [lo, hi) of the input image as planes [z][y][x]. */
static void gather_range(void *ctx, uint64_t lo, uint64_t hi)
{
	const conv_gather *c = ctx;
	const cpu_conv *cv = c->cv;
	for (uint64_t z = lo; z < hi; z++) {
		uint8_t *d = c->g + z * cv->in_x * cv->in_y;
		for (uint32_t y = 0; y < cv->in_y; y++, d += cv->in_x)
			nbg_cpu_ring_read(d, c->in, cv->in_base + z * cv->in_slice + (uint64_t)y * cv->in_row, cv->in_x,
					  cv->in_xstep, cv->in_ring_lo, cv->in_ring_size);
	}
}

/* The input image as planes [z][y][x], read at the strides, pixel step and
 * circular buffer the plan set (an interleaved input record, a ring of
 * rows), a channel at a time on the threads; NULL when out of memory. */
static uint8_t *gather_input(const cpu_conv *cv, const uint8_t *in)
{
	conv_gather c = { cv, in, malloc((size_t)cv->in_x * cv->in_y * cv->in_z) };
	if (c.g)
		nbg_cpu_parallel(cv->threads, cv->in_z, 1, gather_range, &c);
	return c.g;
}

/* The bytes nbg_cpu_conv_run allocates: the gathered input (an
 * interleaved record or a ring), the planes and the pooled stage, and
 * either the 64-bit sums of a plane or conv_planes32's int16 image and
 * weights. */
static uint64_t conv_scratch(const cpu_conv *cv)
{
	uint64_t plane_out = (uint64_t)cv->out_x * cv->out_y, n = 0;
	if (cv->in_xstep > 1 || cv->in_ring_size)
		n = (uint64_t)cv->in_x * cv->in_y * cv->in_z;
	n = nbg_cpu_add_sat(n, nbg_cpu_mul_sat(plane_out, cv->out_z));
	n = nbg_cpu_add_sat(n, nbg_cpu_mul_sat((uint64_t)cv->pool_x * cv->pool_y, cv->out_z));
	if (!cv->acc32 || cv->add.on)
		return nbg_cpu_add_sat(n, nbg_cpu_mul_sat(plane_out, sizeof(int64_t)));
	cpu_conv_geom g = nbg_cpu_conv_geometry(cv);
	uint64_t own = nbg_cpu_mul_sat(nbg_cpu_mul_sat(cv->in_z, g.plane), sizeof(int16_t));
	own = nbg_cpu_add_sat(own, nbg_cpu_mul_sat(g.groups * CPU_GRP * g.taps, sizeof(int16_t)));
	uint64_t fast = nbg_cpu_conv_fast_scratch(cv); /* the vector paths' layout, when they run it */
	return nbg_cpu_add_sat(n, fast > own ? fast : own);
}

/* Its steps: the multiply-accumulates of the path it takes (the 32-bit
 * kernels compute every position of the wide output for CPU_GRP channels
 * at once), plus one per byte of the planes, the stage and the gathered
 * input. */
static uint64_t conv_work(const cpu_conv *cv)
{
	uint64_t plane_out = (uint64_t)cv->out_x * cv->out_y;
	uint64_t taps = (uint64_t)(cv->depthwise ? 1 : cv->in_z) * cv->kh * cv->k;
	uint64_t macs = nbg_cpu_mul_sat(nbg_cpu_mul_sat(plane_out, cv->out_z), taps);
	if (cv->acc32 && !cv->add.on) {
		cpu_conv_geom g = nbg_cpu_conv_geometry(cv);
		macs = nbg_cpu_mul_sat(nbg_cpu_mul_sat(g.blocks * CPU_BLK, g.groups * CPU_GRP), g.taps);
		macs = nbg_cpu_add_sat(macs, nbg_cpu_mul_sat(cv->in_z, g.plane));
	}
	return nbg_cpu_add_sat(macs, conv_scratch(cv));
}

/* What conv_emit_range reads and writes. */
typedef struct conv_emit {
	const cpu_conv *cv;
	const uint8_t *planes;
	uint8_t *stage, *out;
} conv_emit;

/* Channels [lo, hi) of the planes pooled into the stage (without pooling
 * the stage is the planes) and copied into the output. */
static void conv_emit_range(void *ctx, uint64_t lo, uint64_t hi)
{
	const conv_emit *e = ctx;
	const cpu_conv *cv = e->cv;
	size_t plane_out = (size_t)cv->out_x * cv->out_y;
	uint8_t *stage = e->stage, *out = e->out;
	for (uint64_t o = lo; o < hi; o++) {
		const uint8_t *plane = e->planes + o * plane_out;
		uint8_t *dst = stage + (size_t)o * cv->pool_x * cv->pool_y;
		uint8_t flip = cv->sgn ? 0x80 : 0;
		for (uint32_t py = 0; py < cv->pool_y && cv->pooling; py++) {
			/* the window's rows (its first always in the plane: pool_y is
			 * at most (out_y + 1) / 2), the second NULL past the edge */
			const uint8_t *r0 = plane + (size_t)(2 * py) * cv->out_x;
			const uint8_t *r1 = 2 * py + 1 < cv->out_y ? r0 + cv->out_x : NULL;
			uint8_t *d = dst + (size_t)py * cv->pool_x;
			for (uint32_t px = 0; px < cv->pool_x; px++) {
				uint32_t x = 2 * px;
				if (cv->pooling == 3) { /* first pixel of the 2x2 window */
					d[px] = r0[x];
					continue;
				}
				/* max over the 2x2 window, clipped at the edge (a pixel past
				 * it takes no part); int8 compared by value: its bytes with
				 * the sign bit flipped */
				uint8_t v = r0[x] ^ flip, b;
				int two = x + 1 < cv->out_x;
				b = two ? r0[x + 1] ^ flip : 0;
				v = b > v ? b : v;
				b = r1 ? r1[x] ^ flip : 0;
				v = b > v ? b : v;
				b = r1 && two ? r1[x + 1] ^ flip : 0;
				v = b > v ? b : v;
				d[px] = v ^ flip;
			}
		}
		/* rows one after the other in the output as in the stage: one
		 * copy a channel */
		if (!cv->out_ring_size && cv->out_row == cv->pool_x) {
			memcpy(out + cv->out_base + o * cv->out_slice, dst, (size_t)cv->pool_y * cv->pool_x);
			continue;
		}
		for (uint32_t py = 0; py < cv->pool_y; py++) {
			uint64_t a = cv->out_base + o * cv->out_slice + py * cv->out_row;
			const uint8_t *src = dst + (size_t)py * cv->pool_x;
			if (!cv->out_ring_size)
				memcpy(out + a, src, cv->pool_x);
			else
				nbg_cpu_ring_write(out, src, a, cv->pool_x, cv->out_ring_lo, cv->out_ring_size);
		}
	}
}

int nbg_cpu_conv_run(const cpu_conv *cv, uint8_t *const *buf)
{
	const uint8_t *in = buf[cv->in_region];
	uint8_t *out = buf[cv->out_region];
	cpu_conv planar;
	uint8_t *gathered = NULL;
	if (cv->in_xstep > 1 || cv->in_ring_size) {
		if (!(gathered = gather_input(cv, in)))
			return -1;
		planar = *cv;
		planar.in_base = 0;
		planar.in_row = cv->in_x;
		planar.in_slice = (uint64_t)cv->in_x * cv->in_y;
		planar.in_xstep = 1;
		planar.in_ring_size = 0;
		in = gathered;
		cv = &planar;
	}
	size_t plane_out = (size_t)cv->out_x * cv->out_y;
	/* from the scratch cache: taken again by the next operation rather
	 * than handed back to the kernel */
	uint8_t *planes = nbg_cpu_scratch_take(plane_out * cv->out_z);
	/* without pooling the written image is the planes */
	uint8_t *stage = cv->pooling ? nbg_cpu_scratch_take((size_t)cv->pool_x * cv->pool_y * cv->out_z) : planes;
	/* a fused addition takes the 64-bit path, whose sums it needs */
	int wide = !cv->acc32 || cv->add.on;
	int64_t *acc = wide ? malloc(plane_out * sizeof(*acc)) : NULL;
	if (!planes || !stage || (wide && !acc)) {
		nbg_cpu_scratch_give(planes);
		nbg_cpu_scratch_give(stage != planes ? stage : NULL);
		free(acc);
		free(gathered);
		return -1;
	}
	/* every channel is computed before any byte is written: the operation
	 * may write over the image it reads */
	if (!wide) {
		int fast = nbg_cpu_conv_fast(cv, in, planes); /* the vector paths, threads */
		if (fast < 0 || (!fast && conv_planes32(cv, in, planes))) {
			nbg_cpu_scratch_give(planes);
			nbg_cpu_scratch_give(stage != planes ? stage : NULL);
			free(gathered);
			return -1;
		}
	} else {
		for (uint32_t o = 0; o < cv->out_z; o++)
			conv_channel(cv, in, cv->add.on ? buf[cv->add.region] : NULL, o, acc,
				     planes + o * plane_out);
	}
	/* the pooling and the copy into the output, a channel at a time: on
	 * the threads where no two channels write the same byte (the rows
	 * within their slice; through a ring, every channel's bytes within
	 * one lap of it) */
	conv_emit e = { cv, planes, stage, out };
	uint64_t span = (uint64_t)(cv->pool_y - 1) * cv->out_row + cv->pool_x;
	uint64_t all = nbg_cpu_add_sat(nbg_cpu_mul_sat(cv->out_z - 1, cv->out_slice), span);
	int apart = cv->out_row >= cv->pool_x && cv->out_slice >= span && (!cv->out_ring_size || all <= cv->out_ring_size);
	nbg_cpu_parallel(apart ? cv->threads : 1, cv->out_z, 1, conv_emit_range, &e);
	nbg_cpu_scratch_give(planes);
	nbg_cpu_scratch_give(stage != planes ? stage : NULL);
	free(acc);
	free(gathered);
	return 0;
}

/* An NN-engine operation: planned as a convolution, with a fused addition
 * for a layer that adds a second image to its convolution's result (the
 * 0xe8 emotion files' ConvolutionReluPoolingAddLayer): planned by
 * ops/add.c for target 0xe8, refused elsewhere (doc/cpu-backend.md, "Fused
 * additions"). */
static void conv_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	if (m->add_layer && p->m->target != 0xe8) {
		nbg_cpu_refuse(s, "fused-add-unsupported", "layer %s adds a second image to the convolution's "
			       "result; which command fields locate that image is established for target 0xe8 "
			       "only (this file: 0x%x)", s->layer, p->m->target);
		return;
	}
	plan_nn(p, s, &op->u.conv, m->cop, m->cmd_kind, p->wop[m->operation]);
	if (m->add_layer && s->verdict == NBG_CPU_EXECUTE && op->u.conv.sgn) {
		nbg_cpu_refuse(s, "fused-add-unsupported", "layer %s adds a second image to an int8 "
			       "convolution's result: established are uint8 ones only", s->layer);
		return;
	}
	if (m->add_layer && s->verdict == NBG_CPU_EXECUTE && !nbg_cpu_plan_add(p, s, &op->u.conv, m->cop))
		return;
	if (s->verdict == NBG_CPU_EXECUTE) {
		op->kind = CPU_OP_CONV;
		op->u.conv.threads = s->macs >= CPU_THREAD_MACS ? (uint32_t)p->totals.limits.threads : 1;
		op->u.conv.portable = p->totals.limits.kernels == NBG_CPU_KERNELS_PORTABLE;
	}
}

static int conv_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->cop && m->cop->engine == NBG_CMD_NN;
}

static int conv_run(const cpu_op *op, uint8_t *const *buf)
{
	return nbg_cpu_conv_run(&op->u.conv, buf);
}

static void conv_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	*work = conv_work(&op->u.conv);
	*scratch = conv_scratch(&op->u.conv);
}

const cpu_op_def nbg_cpu_op_conv = { "conv", conv_match, conv_plan, conv_run, conv_cost };
