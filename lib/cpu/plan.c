/*
 * plan.c - the CPU backend's plan: per OPERATIONS record, execute it
 * (an NN convolution whose command and kernel stream say everything it
 * computes), nothing to do (INIT, END), or refuse it with a reason id and a
 * sentence naming the field and value.  Every address range an executed
 * operation touches is checked against its buffer here, before any run.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_internal.h"
#include "runtime/errors.h"

const char *nbg_cpu_verdict_name(int v)
{
	switch (v) {
	case NBG_CPU_EXECUTE: return "execute";
	case NBG_CPU_NOTHING: return "nothing";
	case NBG_CPU_REFUSED: return "refused";
	default: return NULL;
	}
}

static void add_region(nbg_cpu_plan *p, uint32_t type, int32_t index, uint64_t size)
{
	if (p->region_count < sizeof(p->regions) / sizeof(p->regions[0]))
		p->regions[p->region_count++] = (cpu_region){ type, index, size };
}

static void build_regions(nbg_cpu_plan *p)
{
	const nbg_model *m = p->m;
	for (size_t i = 0; i < m->input_count && i < 64; i++)
		add_region(p, NBG_GRAPH_SRC_INPUT, (int32_t)i, nbg_model_input_at(m, i)->byte_size);
	for (size_t i = 0; i < m->output_count && i < 64; i++)
		add_region(p, NBG_GRAPH_SRC_OUTPUT, (int32_t)i, nbg_model_output_at(m, i)->byte_size);
	add_region(p, NBG_GRAPH_SRC_VIP_SRAM, -1, m->memory.vip_sram_bytes);
	add_region(p, NBG_GRAPH_SRC_AXI_SRAM, -1, m->memory.axi_sram_bytes);
	add_region(p, NBG_GRAPH_SRC_MEMORY_POOL, -1, m->memory.memory_pool_bytes);
}

static uint32_t field(const nbg_cmd *cmd, const char *key)
{
	return nbg_cpu_nn_field(cmd, key);
}

/*
 * The requantization scale as a float32's 23 mantissa bits and biased
 * exponent, from the command's post_multiplier and post_shift fields, in
 * the encoding of the target's family (doc/cpu-backend.md, "The scale"):
 *   Mesa's: the top 15 mantissa bits in post_multiplier, _1_to_6, _7_to_14
 *     and post_shift (with _bit_5_6) = 142 - exponent (0x7d, 0x88, 0x99, 0xa1);
 *   23 mantissa bits (with _15_to_22) and post_shift = 127 - exponent (0xb9, 0xbe);
 *   23 mantissa bits and post_shift | bit_5_6 << 5 = the exponent itself
 *     (0xe8, 0xee, 0x1000000e, 0x10000016, 0x1000003b).
 * 0 for a target whose encoding is not established.
 */
static int scale_fields(uint32_t target, const nbg_cmd *cmd, uint32_t *mantissa, uint32_t *exponent)
{
	uint32_t m = nbg_cpu_nn_multiplier(cmd);
	uint32_t sh = field(cmd, "post_shift") | field(cmd, "post_shift_bit_5_6") << 5;
	switch (target) {
	case 0x7d: case 0x88: case 0x99: case 0xa1:
		*mantissa = (m & 0x7fffu) << 8; /* the top 15 bits only */
		*exponent = sh <= 142 ? 142 - sh : 0;
		return 1;
	case 0xb9: case 0xbe:
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
			int32_t d = (int32_t)w[t] - (int32_t)cv->w_zp;
			/* |x - in_zp| <= 255 for any uint8 x and uint8 zero point */
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
	uint64_t need = (uint64_t)cv->out_z * cv->k * cv->k * (cv->depthwise ? 1 : cv->in_z);
	cv->codes = nbg_weights_op_codes(wo, &n);
	cv->bias = nbg_weights_op_bias(wo);
	if (!cv->codes || !cv->bias || n < need) {
		nbg_cpu_refuse(s, "weights-not-decoded", "its decoded kernel stream holds %zu codes, fewer than "
		       "the %ux%ux%ux%u kernel needs", n, shape[0], shape[1], shape[2], shape[3]);
		return 0;
	}
	cv->acc32 = nbg_cpu_plan_afford(p, need) && nbg_cpu_conv_fits_int32(cv);
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
	uint32_t yo = cmd ? field(cmd, "in_image_y_offset") | field(cmd, "in_image_y_offset_bit_3") << 3 : 0;
	return yo >= 8 ? (int32_t)yo - 16 : (int32_t)yo;
}

/*
 * Tiles: an operation that computes rows of a layer whose earlier rows an
 * earlier operation of the same layer computed (same kind, same memories)
 * must read as many rows further on as it writes further on, times its
 * subsampling (the row pitch as planned: an interleaved input's row holds
 * every channel).  One exception is measured (doc/cpu-backend.md, "Row
 * tiles, interleaved input records and circular buffers"): the 0xb9
 * image_classify file's layer-2 tiles store output offsets exactly 16
 * times the bytes their input step implies; run with their rows placed where the input puts them (the
 * previous tile's placed output plus those rows), the file computes what
 * the 0xbe and 0xe8 files compute, value for value.  A tile whose output
 * steps 16 times its rows is placed so; any other disagreement is refused.
 */
static int tile_consistent(const nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd_op *op, cpu_conv *cv)
{
	uint32_t sub = cv->pooling ? 2 : 1;
	for (size_t j = op->operation, seen = 0; j-- > 0 && seen < 64; seen++) {
		const nbg_cmd_op *q = nbg_commands_op_of(p->c, j);
		if (!q || q->engine != NBG_CMD_NN || q->layer_id != op->layer_id)
			continue;
		if (strcmp(q->kind, op->kind) || q->in_ref.source_type != op->in_ref.source_type ||
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
		const cpu_op *prev = &p->ops[j];
		uint64_t rows = rin > 0 && rin % sub == 0 ? (uint64_t)rin / sub : 0;
		if (rows && rows < (1u << 20) && dout == 16 * rows * op->out_row_stride &&
		    p->steps[j].verdict == NBG_CPU_EXECUTE && prev->kind == CPU_OP_CONV &&
		    prev->conv.out_region == cv->out_region && !cv->out_ring_size) {
			cv->out_base = prev->conv.out_base + rows * op->out_row_stride;
			size_t n = strlen(s->what);
			snprintf(s->what + n, sizeof(s->what) - n, ", rows placed by its input");
			return 1;
		}
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
	if (op->in_ref.source_type != NBG_GRAPH_SRC_INPUT || op->in_ref.index < 0 ||
	    (size_t)op->in_ref.index >= p->m->input_count || cv->in_z < 2 || cv->depthwise)
		return 0;
	const nbg_io *io = nbg_model_input_at(p->m, (size_t)op->in_ref.index);
	if (!io || io->dim_count < 3 || io->dim_count > 6)
		return 0;
	for (uint32_t i = 3; i < io->dim_count; i++)
		if (io->dims[i] != 1)
			return 0;
	return io->dims[0] == cv->in_z && io->dims[0] != io->dims[1] && io->dims[1] == op->in_row_stride &&
	       io->dims[1] >= cv->in_x && io->dims[2] >= cv->in_y;
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
	long ri = nbg_cpu_find_region(p, s, "input", &op->in_ref);
	long ro = ri < 0 ? -1 : nbg_cpu_find_region(p, s, "output", &op->out_ref);
	if (ri < 0 || ro < 0)
		return 0;
	cv->in_region = (size_t)ri, cv->out_region = (size_t)ro;
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
	if (!nbg_cpu_nn_ring(p, s, cmd, "input", "in_image_circular_buf_size", "in_image_circular_buf_end_addr_plus_1",
		     cv->in_region, cv->in_base, &cv->in_ring_lo, &cv->in_ring_size) ||
	    !nbg_cpu_nn_ring(p, s, cmd, "output", "out_image_circular_buf_size", "out_image_circular_buf_end_addr_plus_1",
		     cv->out_region, cv->out_base, &cv->out_ring_lo, &cv->out_ring_size) ||
	    !tile_consistent(p, s, op, cv))
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
	uint32_t ky = cv->k;
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
	cv->k = 1;
	return 1;
}

static void plan_nn(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_conv *cv, const nbg_cmd_op *op,
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
	int column = !strcmp(op->kind, "fully connected") && ws && ws[3] == 1 && ws[2] > 1;
	if (!column && strcmp(op->kind, "conv") && strcmp(op->kind, "depthwise conv")) {
		nbg_cpu_refuse(s, "operation-kind-unsupported",
		       "an NN %s (layer_type %u): only conv and depthwise conv are executed", op->kind,
		       field(cmd, "layer_type"));
		return;
	}
	if (!wo || nbg_weights_op_status(wo) != NBG_WEIGHTS_DECODED) {
		nbg_cpu_refuse(s, "weights-not-decoded", "its kernel stream is not decoded (%s: %s)",
		       wo ? nbg_weights_op_reason_id(wo) : "no stream",
		       wo ? nbg_weights_op_reason(wo) : "no weights record");
		return;
	}
	const char *types[3] = { "in_image_data_type", "out_image_data_type", "kernel_data_type" };
	uint32_t codes[3] = { op->in_type, op->out_type, op->kernel_type };
	for (int i = 0; i < 3; i++)
		if (codes[i] != 0) {
			const char *n = nbg_command_data_type_name(codes[i]);
			nbg_cpu_refuse(s, "data-type-unsupported", "%s is %u (%s): only uint8 is executed",
			       types[i], codes[i], n ? n : "unknown");
			return;
		}
	if (field(cmd, "per_channel_post_mul")) {
		nbg_cpu_refuse(s, "per-channel-scale-unsupported",
		       "per_channel_post_mul is 1: per-channel requantization has no sample to fix its rule");
		return;
	}
	if (field(cmd, "in_image_border_mode") != 0) {
		nbg_cpu_refuse(s, "border-mode-unsupported",
		       "in_image_border_mode is %u: only 0 (a constant border) is executed",
		       field(cmd, "in_image_border_mode"));
		return;
	}
	uint32_t pool = op->pooling;
	if (pool == 2 || (pool == 1 && op->pooling_size != 2) || (pool == 3 && op->pooling_size != 2)) {
		nbg_cpu_refuse(s, "pooling-unsupported", "pooling is %u (%s) with a %ux%u window: executed are none, "
		       "2x2 max and 2x2 first pixel", pool, nbg_command_pooling_name(pool),
		       op->pooling_size, op->pooling_size);
		return;
	}
	const uint32_t *shape = nbg_weights_op_shape(wo);
	cv->depthwise = !strcmp(op->kind, "depthwise conv");
	cv->k = shape[2];
	cv->in_x = field(cmd, "in_image_x_size");
	cv->in_y = field(cmd, "in_image_y_size");
	cv->out_x = op->out_conv[0];
	cv->out_y = op->out_conv[1];
	cv->out_z = op->out_conv[2];
	cv->in_z = cv->depthwise ? cv->out_z : shape[1];
	if ((shape[2] != shape[3] && !column) || shape[0] != cv->out_z || (cv->depthwise && shape[1] != 1)) {
		nbg_cpu_refuse(s, "shape-inconsistent", "the kernel shape %ux%ux%ux%u does not match the command's "
		       "output z %u", shape[0], shape[1], shape[2], shape[3], cv->out_z);
		return;
	}
	if (!cv->in_x || !cv->in_y || !cv->in_z || !cv->out_x || !cv->out_y || !cv->out_z || !cv->k) {
		nbg_cpu_refuse(s, "shape-invalid", "a size of the command is 0 (input %ux%ux%u, output %ux%ux%u)",
		       cv->in_x, cv->in_y, cv->in_z, cv->out_x, cv->out_y, cv->out_z);
		return;
	}
	uint32_t xo = field(cmd, "in_image_x_offset") | field(cmd, "in_image_x_offset_bit_3") << 3;
	uint32_t yo = field(cmd, "in_image_y_offset") | field(cmd, "in_image_y_offset_bit_3") << 3;
	cv->x_off = xo >= 8 ? (int32_t)xo - 16 : (int32_t)xo;
	cv->y_off = yo >= 8 ? (int32_t)yo - 16 : (int32_t)yo;
	if (column && !column_as_1x1(s, cv, op, pool))
		return;
	cv->in_zp = field(cmd, "in_image_border_const");
	if (cv->in_zp > 255) {
		nbg_cpu_refuse(s, "zero-point-invalid", "in_image_border_const is %u, outside uint8", cv->in_zp);
		return;
	}
	cv->out_zp = field(cmd, "out_zero_point");
	cv->w_zp = (uint32_t)nbg_weights_op_zero_point(wo);
	if (!scale_fields(p->m->target, cmd, &cv->mantissa, &cv->exponent)) {
		nbg_cpu_refuse(s, "scale-encoding-unknown", "target 0x%x: which of the three encodings of the "
		       "requantization scale its commands use is not established", p->m->target);
		return;
	}
	cv->relu = op->relu;
	if (!conv_written(s, cv, op, pool))
		return;
	uint64_t macs = (uint64_t)cv->out_x * cv->out_y * cv->out_z * cv->k * cv->k *
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

/* An operation executed by reference semantics: one step per value read
 * or written (ops/ref.c, ops/shdw.c, ops/shelt.c, ops/shmax.c). */
static void ref_cost(const cpu_ref *r, uint64_t *work, uint64_t *scratch)
{
	*scratch = 0;
	switch (r->kind) {
	case CPU_REF_SOFTMAX: /* the maximum, the sum, the quotients */
		*work = nbg_cpu_mul_sat(3, r->width);
		return;
	case CPU_REF_POOL:
		*work = nbg_cpu_mul_sat(r->rows, r->width);
		return;
	case CPU_REF_DWCONV:
		*work = nbg_cpu_mul_sat(nbg_cpu_mul_sat(r->rows, r->kx), r->ky);
		return;
	case CPU_REF_ADD:
		*work = nbg_cpu_mul_sat(nbg_cpu_mul_sat(r->elt.x, r->elt.y), r->elt.z);
		return;
	case CPU_REF_UPSAMPLE: /* four outputs per input */
		*work = nbg_cpu_mul_sat(4, nbg_cpu_mul_sat(nbg_cpu_mul_sat(r->elt.x, r->elt.y), r->elt.z));
		return;
	case CPU_REF_MAXPOOL:
		nbg_cpu_shmax_cost(r, work, scratch);
		return;
	default:
		*work = 0;
		return;
	}
}

/* An executed step's work and scratch (nbg_cpu_step), from the cost of
 * its run (doc/cpu-backend.md, "Limits"). */
static void step_cost(nbg_cpu_step *s, const cpu_op *op)
{
	uint64_t work = 0, scratch = 0;
	switch (op->kind) {
	case CPU_OP_CONV:
		work = nbg_cpu_conv_work(&op->conv);
		scratch = nbg_cpu_conv_scratch(&op->conv);
		break;
	case CPU_OP_TP:
		work = op->tp.work;
		scratch = nbg_cpu_tp_scratch(&op->tp);
		break;
	case CPU_OP_TPFC: /* a sum per output over every input, then its requantization */
		work = nbg_cpu_add_sat(nbg_cpu_mul_sat(op->tpfc.nin, op->tpfc.nout), op->tpfc.nout);
		break;
	case CPU_OP_REF:
		ref_cost(&op->ref, &work, &scratch);
		break;
	default:
		break;
	}
	s->work = work;
	s->scratch = scratch;
}

static void plan_step(nbg_cpu_plan *p, size_t i)
{
	const nbg_graph_operation *go = nbg_graph_operation_at(p->g, i);
	nbg_cpu_step *s = &p->steps[i];
	s->operation = i;
	s->type = go->type;
	s->layer_id = go->layer_id;
	const nbg_graph_layer *l = nbg_graph_layer_at(p->g, go->layer_id); /* NULL: none */
	snprintf(s->layer, sizeof(s->layer), "%s", l && l->name_printable ? l->name : "?");
	const char *tn = nbg_graph_op_type_name(go->type);
	snprintf(s->what, sizeof(s->what), "%s", tn ? tn : "?");
	s->reason_id = "";
	if (go->type == NBG_GRAPH_OP_INIT || go->type == NBG_GRAPH_OP_END) {
		s->verdict = NBG_CPU_NOTHING;
		return;
	}
	const nbg_cmd_op *op = nbg_commands_op_of(p->c, i);
	if (op) {
		char d[160];
		snprintf(s->what, sizeof(s->what), "%s %s", nbg_command_engine_name(op->engine),
			 nbg_command_describe(op, d, sizeof(d)));
	}
	switch (go->type) {
	case NBG_GRAPH_OP_SH:
	case NBG_GRAPH_OP_SW:
		nbg_cpu_plan_ref(p, s, &p->ops[i], i);
		return;
	case NBG_GRAPH_OP_TP:
		nbg_cpu_plan_tp(p, s, &p->ops[i], op);
		return;
	case NBG_GRAPH_OP_SP:
		if (!strcmp(s->layer, "Softmax2Layer_SP")) {
			nbg_cpu_plan_spmax(p, s, &p->ops[i], i);
			return;
		}
		break;
	default:
		break;
	}
	if (!op || op->engine != NBG_CMD_NN) {
		nbg_cpu_refuse(s, "operation-type-unsupported", "an operation of type %s (%u) the CPU backend does "
		       "not execute", tn ? tn : "?", go->type);
		return;
	}
	/* A layer that adds a second image to its convolution's result (the
	 * 0xe8 emotion files' ConvolutionReluPoolingAddLayer): planned by
	 * ops/add.c for target 0xe8, refused elsewhere (doc/cpu-backend.md,
	 * "Fused additions"). */
	int add = strstr(s->layer, "AddLayer") != NULL;
	if (add && p->m->target != 0xe8) {
		nbg_cpu_refuse(s, "fused-add-unsupported", "layer %s adds a second image to the convolution's "
			       "result; which command fields locate that image is established for target 0xe8 "
			       "only (this file: 0x%x)", s->layer, p->m->target);
		return;
	}
	plan_nn(p, s, &p->ops[i].conv, op, p->wop[i]);
	if (add && s->verdict == NBG_CPU_EXECUTE && !nbg_cpu_plan_add(p, s, &p->ops[i].conv, op))
		return;
	if (s->verdict == NBG_CPU_EXECUTE)
		p->ops[i].kind = CPU_OP_CONV;
}

/* A v1 file whose version has no sample is read with a record layout the
 * parser inferred (doc/format-v1.md, its notes); every verdict and every
 * address the plan reads stands on that reading, so the plan says so. */
static void set_caveat(nbg_cpu_plan *p)
{
	const nbg_v1_info *v1 = nbg_model_v1(p->m);
	if (nbg_model_family(p->m) != 1 || !v1)
		return;
	const char *how[3];
	size_t n = 0;
	if (v1->strides_assumed)
		how[n++] = "its record strides assumed from the newest known layout";
	if (v1->patch_stride_from_data)
		how[n++] = "its patch record stride chosen from the data";
	if (v1->entry_count_derived)
		how[n++] = "its entry count derived from the input table";
	if (n)
		snprintf(p->caveat, sizeof(p->caveat),
			 "version 0x%05x has no sample, so it is read with %s%s%s%s%s (nbg inspect's "
			 "notes): the plan stands on that reading", nbg_model_version(p->m), how[0],
			 n > 2 ? ", " : n > 1 ? " and " : "", n > 1 ? how[1] : "",
			 n > 2 ? " and " : "", n > 2 ? how[2] : "");
}

const char *nbg_cpu_plan_caveat(const nbg_cpu_plan *p)
{
	return p && p->caveat[0] ? p->caveat : NULL;
}

nbg_code nbg_cpu_plan_build(const uint8_t *model, size_t size, nbg_cpu_plan **out, nbg_error *err)
{
	return nbg_cpu_plan_build_opts(model, size, NULL, out, err);
}

nbg_code nbg_cpu_plan_build_opts(const uint8_t *model, size_t size, const nbg_cpu_options *opts,
				 nbg_cpu_plan **out, nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!out || !model || (opts && opts->size < sizeof(opts->size)))
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "cpu plan: NULL argument or options size "
				   "not sizeof(nbg_cpu_options)");
	*out = NULL;
	nbg_cpu_plan *p = calloc(1, sizeof(*p));
	if (!p)
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	nbg_cpu_limits_resolve(&p->totals.limits, opts);
	nbg_error e;
	if (nbg_parse(model, size, NULL, &p->m, &e) != NBG_OK) {
		nbg_cpu_plan_free(p);
		nbg_rt_fail(err, NBG_E_MODEL_INVALID, -1, "the NBG failed validation: %s", e.message);
		if (err)
			err->cause = e.code;
		return NBG_E_MODEL_INVALID;
	}
	nbg_code rc = nbg_graph_decode(p->m, &p->g, &e);
	if (rc == NBG_OK)
		rc = nbg_commands_decode(p->m, p->g, &p->c, &e);
	if (rc == NBG_OK)
		rc = nbg_weights_decode(p->m, p->g, p->c, &p->w, &e);
	if (rc != NBG_OK) {
		nbg_cpu_plan_free(p);
		return nbg_rt_fail(err, rc, -1, "decoding the model: %s", e.message);
	}
	p->count = nbg_graph_summary_of(p->g)->operation_count;
	p->steps = calloc(p->count + 1, sizeof(*p->steps));
	p->ops = calloc(p->count + 1, sizeof(*p->ops));
	p->wop = calloc(p->count + 1, sizeof(*p->wop));
	if (!p->steps || !p->ops || !p->wop) {
		nbg_cpu_plan_free(p);
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	}
	/* every planner finds an operation's weights here: one pass over them,
	 * not one per operation */
	for (size_t i = 0; i < nbg_weights_count(p->w); i++) {
		const nbg_weights_op *wo = nbg_weights_at(p->w, i);
		size_t o = nbg_weights_op_operation(wo);
		if (o < p->count)
			p->wop[o] = wo;
	}
	build_regions(p);
	set_caveat(p);
	for (size_t i = 0; i < p->count; i++) {
		plan_step(p, i);
		if (p->steps[i].verdict == NBG_CPU_EXECUTE)
			step_cost(&p->steps[i], &p->ops[i]);
	}
	nbg_cpu_plan_add_up(p);
	*out = p;
	return NBG_OK;
}

void nbg_cpu_plan_free(nbg_cpu_plan *p)
{
	if (!p)
		return;
	nbg_weights_free(p->w);
	nbg_commands_free(p->c);
	nbg_graph_free(p->g);
	nbg_model_free(p->m);
	free(p->steps);
	free(p->ops);
	free(p->wop);
	free(p->read_outside);
	free(p);
}

size_t nbg_cpu_plan_count(const nbg_cpu_plan *p)
{
	return p ? p->count : 0;
}

const nbg_cpu_step *nbg_cpu_plan_at(const nbg_cpu_plan *p, size_t i)
{
	return p && i < p->count ? &p->steps[i] : NULL;
}

size_t nbg_cpu_plan_verdict_count(const nbg_cpu_plan *p, int verdict)
{
	size_t n = 0;
	for (size_t i = 0; p && i < p->count; i++)
		n += p->steps[i].verdict == verdict;
	return n;
}

const nbg_cpu_step *nbg_cpu_plan_first_refused(const nbg_cpu_plan *p)
{
	for (size_t i = 0; p && i < p->count; i++)
		if (p->steps[i].verdict == NBG_CPU_REFUSED)
			return &p->steps[i];
	return NULL;
}

/* A limit as a number, or "none". */
static const char *limit_text(uint64_t v, char *buf, size_t n)
{
	if (v == UINT64_MAX)
		return "none";
	snprintf(buf, n, "%llu", (unsigned long long)v);
	return buf;
}

/* The whole run's figures against the plan's limits (doc/cpu-backend.md,
 * "Limits"). */
static void print_totals(FILE *out, const nbg_cpu_totals *t)
{
	char a[24], b[24], c[24];
	fprintf(out, "limits: work %llu steps (max_work %s), memory %llu bytes: %llu of buffers and %llu of "
		"scratch (max_memory %s), planning %llu steps (max_plan_steps %s)\n",
		(unsigned long long)t->work, limit_text(t->limits.max_work, a, sizeof(a)),
		(unsigned long long)nbg_cpu_add_sat(t->buffers, t->scratch), (unsigned long long)t->buffers,
		(unsigned long long)t->scratch, limit_text(t->limits.max_memory, b, sizeof(b)),
		(unsigned long long)t->plan_steps, limit_text(t->limits.max_plan_steps, c, sizeof(c)));
}

void nbg_cpu_plan_print(FILE *out, const nbg_cpu_plan *p)
{
	if (!out || !p)
		return;
	fprintf(out, "CPU backend plan (doc/cpu-backend.md): %zu operations, %zu executed, %zu with nothing to "
		"compute, %zu refused\n", p->count, nbg_cpu_plan_verdict_count(p, NBG_CPU_EXECUTE),
		nbg_cpu_plan_verdict_count(p, NBG_CPU_NOTHING),
		nbg_cpu_plan_verdict_count(p, NBG_CPU_REFUSED));
	if (p->caveat[0])
		fprintf(out, "caveat: %s\n", p->caveat);
	for (size_t i = 0; i < p->count; i++) {
		const nbg_cpu_step *s = &p->steps[i];
		fprintf(out, "  op %zu [layer %u %s] %s: %s", s->operation, s->layer_id, s->layer, s->what,
			nbg_cpu_verdict_name(s->verdict));
		if (s->verdict == NBG_CPU_EXECUTE && s->reference)
			fprintf(out, " (reference semantics, not from the operation's code)");
		else if (s->verdict == NBG_CPU_EXECUTE)
			fprintf(out, " (%llu MACs)", (unsigned long long)s->macs);
		if (s->verdict == NBG_CPU_REFUSED)
			fprintf(out, " %s: %s", s->reason_id, s->reason);
		fputc('\n', out);
	}
	print_totals(out, &p->totals);
	/* the verdict a run gives (nbg_cpu_plan_check), nothing else's */
	nbg_error e;
	nbg_code rc = nbg_cpu_plan_check(p, SIZE_MAX, &e);
	const nbg_cpu_step *r = nbg_cpu_plan_first_refused(p);
	if (rc == NBG_OK)
		fprintf(out, "verdict: the CPU backend runs every operation of this model\n");
	else if (rc == NBG_E_UNSUPPORTED_OPERATION && r)
		fprintf(out, "verdict: the CPU backend cannot run this model: op %zu is refused (%s)\n",
			r->operation, r->reason_id);
	else
		fprintf(out, "verdict: the CPU backend cannot run this model: %s: %s\n", nbg_code_name(rc),
			e.message);
}
