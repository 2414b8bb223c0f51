/*
 * cpu_hostile.c - the hostile models of the CPU backend's limits
 * (cpu_hostile.h), target 0x1000003b, built with tests/cpu_model.c and
 * kernel streams from tests/coef_encode.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbg/graph.h"

#include "coef_encode.h"
#include "cpu_hostile.h"
#include "cpu_model.h"

#define CH_TARGET 0x1000003Bu
#define SRC_INPUT 1u
#define SRC_OUTPUT 2u
#define SRC_MISC_DYNA_GENERIC 5u

/* A UINT8 record of n bytes, one dimension. */
static void io(cm_io *r, uint32_t n)
{
	memset(r, 0, sizeof(*r));
	r->dims[0] = n;
	r->dims[1] = r->dims[2] = r->dims[3] = 1;
	r->dim_count = 1;
	r->format = 2;
}

static cm_model *model(uint32_t ins, uint32_t outs, uint32_t in_bytes, uint32_t out_bytes)
{
	cm_model *m = calloc(1, sizeof(*m));
	if (!m)
		abort();
	m->target = CH_TARGET;
	m->ins = ins;
	m->outs = outs;
	for (uint32_t i = 0; i < ins; i++)
		io(&m->in[i], in_bytes);
	for (uint32_t i = 0; i < outs; i++)
		io(&m->out[i], out_bytes);
	return m;
}

/* The file; m and the kernel streams it points at are freed. */
static uint8_t *build(cm_model *m, size_t *size)
{
	uint8_t *b = cm_build(m, size);
	for (size_t i = 0; i < m->coefs; i++)
		free((void *)m->coef[i]);
	free(m);
	return b;
}

/* An NN convolution k x k x in_z -> out_z from input 0 (in_x x in_y
 * planar) into output 0 (out_x x out_y, its rows and slices out_row and
 * out_slice apart), its kernels a stream of codes 100..106 (zero point 100),
 * named by `repeat` records. */
static void conv(cm_model *m, uint32_t in_x, uint32_t in_y, uint32_t in_z, uint32_t k, uint32_t out_x,
		 uint32_t out_y, uint32_t out_z, uint32_t out_row, uint32_t out_slice, uint32_t repeat)
{
	size_t nw = (size_t)out_z * in_z * k * k;
	uint8_t *w = malloc(nw);
	int32_t *b = calloc(out_z, sizeof(*b));
	if (!w || !b)
		abort();
	for (size_t i = 0; i < nw; i++)
		w[i] = (uint8_t)(100 + i % 7);
	ce_layer l = { .out = out_z, .kz = in_z, .ky = k, .kx = k, .zp = 100, .w = w, .bias = b,
		       .cores = out_z < 3 ? out_z : 3, .superblocks = 2, .plane = out_x * out_y };
	ce_opts o = { .format = CE_V8A, .zrl = 1, .map_seed = 1 };
	size_t n = 0;
	uint8_t *stream = ce_encode(&l, &o, &n);
	if (!stream)
		abort();
	int32_t s = cm_coef(m, stream, n);
	cm_op *op = cm_add_op(m, NBG_GRAPH_OP_NN, "ConvolutionReluPoolingLayer2");
	op->repeat = repeat;
	cm_field(op, "kernel_xy_size", k);
	cm_field(op, "kernel_z_size", in_z);
	cm_field(op, "kernels_per_core", ce_superblock(&l));
	cm_field(op, "in_image_x_size", in_x);
	cm_field(op, "in_image_y_size", in_y);
	cm_field(op, "out_image_x_size", out_x);
	cm_field(op, "out_image_y_size", out_y);
	cm_field(op, "out_image_z_size", out_z);
	cm_field(op, "rounding_mode", 1);
	cm_field(op, "in_image_x_stride", in_x);
	cm_field(op, "in_image_y_stride", in_x * in_y);
	cm_field(op, "out_image_x_stride", out_row);
	cm_field(op, "out_image_y_stride", out_slice);
	cm_field(op, "coef_zero_point", 100);
	cm_field(op, "post_shift", 0x1e); /* exponent 126: the scale 1/2 */
	cm_field(op, "post_shift_bit_5_6", 3);
	cm_field_address(op, "kernel_address", SRC_MISC_DYNA_GENERIC, s, 0);
	cm_field_address(op, "in_image_address", SRC_INPUT, 0, 0);
	cm_field_address(op, "out_image_address", SRC_OUTPUT, 0, 0);
	free(w);
	free(b);
}

/* A TP command over an x x y x z image of input 0 (rows x bytes apart,
 * slices `slice`) through the window (wx0, wy0)..(wx1, wy1) in tiles
 * tile_x x tile_y, into output 0 at loops 0 and 1 (x by 1, y by x); a 2x2
 * max pooling (border mode 1) in tiles one pixel apart, or a copy in tiles
 * side by side; `repeat` records. */
static void tp(cm_model *m, int pool, uint32_t x, uint32_t y, uint32_t z, uint32_t slice, int32_t wx0,
	       int32_t wy0, int32_t wx1, int32_t wy1, uint32_t tile_x, uint32_t tile_y, uint32_t repeat)
{
	cm_op *op = cm_add_op(m, NBG_GRAPH_OP_TP, pool ? "PoolingLayer2" : "TensorCopy");
	op->repeat = repeat;
	cm_field(op, "in_image_x_size", x);
	cm_field(op, "in_image_y_size", y);
	cm_field(op, "in_image_z_size", z);
	cm_field(op, "in_image_stride", x);
	cm_field(op, "in_image_slice", slice);
	cm_field(op, "in_window_x_start", (uint32_t)wx0 & 0xffff);
	cm_field(op, "in_window_y_start", (uint32_t)wy0 & 0xffff);
	cm_field(op, "in_window_x_end", (uint32_t)wx1 & 0xffff);
	cm_field(op, "in_window_y_end", (uint32_t)wy1 & 0xffff);
	cm_field(op, "in_tile_x_size", tile_x);
	cm_field(op, "in_tile_y_size", tile_y);
	cm_field(op, "in_tile_x_inc", pool ? 1 : tile_x);
	cm_field(op, "in_tile_y_inc", pool ? 1 : tile_y);
	cm_field(op, "alu_i2f_enable", 1);
	cm_field(op, "alu_f2i_enable", 1);
	cm_field(op, "flat_rounding_mode", 1);
	cm_field(op, "integer_rounding_mode", 1);
	static const char *const counts[6] = { "out_loop_0_count", "out_loop_1_count", "out_loop_2_count",
					       "out_loop_3_count", "out_loop_4_count", "out_loop_5_count" };
	for (int i = 0; i < 6; i++)
		cm_field(op, counts[i], i == 0 ? x & 0xffff : i == 1 ? y & 0xffff : 1);
	cm_field(op, "out_loop_0_inc", 1);
	cm_field(op, "out_loop_1_inc", x);
	if (pool) {
		cm_field(op, "alu_horz_processing", 3);
		cm_field(op, "alu_vert_processing", 3);
		cm_field(op, "alu_horz_proc_count", 1);
		cm_field(op, "alu_vert_proc_count", 1);
		cm_field(op, "in_image_border_mode", 1);
	}
	cm_field_address(op, "in_image_base_address", SRC_INPUT, 0, 0);
	cm_field_address(op, "out_image_base_address", SRC_OUTPUT, 0, 0);
}

uint8_t *ch_shared_conv(uint32_t ops, size_t *size)
{
	cm_model *m = model(1, 1, 64, 256);
	conv(m, 1, 1, 64, 3, 256, 256, 64, 0, 0, ops);
	return build(m, size);
}

uint8_t *ch_tp_walk(uint32_t z, size_t *size)
{
	cm_model *m = model(1, 1, 4, 4);
	tp(m, 1, 1, 1, z, 0, 0, -32768, 0, 32767, 2, 2, 1);
	return build(m, size);
}

uint8_t *ch_tp_copies(uint32_t side, uint32_t ops, size_t *size)
{
	cm_model *m = model(1, 1, side * side, side * side);
	tp(m, 0, side, side, 1, side * side, 0, 0, (int32_t)side - 1, (int32_t)side - 1, side, side, ops);
	return build(m, size);
}

uint8_t *ch_scratch(uint32_t side, size_t *size)
{
	cm_model *m = model(1, 1, 1, side);
	conv(m, 1, 1, 1, 1, side, side, 64, 0, 0, 1);
	return build(m, size);
}

uint8_t *ch_copy(uint32_t outputs, uint64_t pool, uint32_t output_bytes, size_t *size)
{
	if (outputs > CM_MAX_IO)
		abort();
	cm_model *m = model(1, outputs, 16, 16);
	if (output_bytes)
		io(&m->out[0], output_bytes);
	m->pool = pool;
	tp(m, 0, 16, 1, 1, 16, 0, 0, 15, 0, 16, 1, 1);
	return build(m, size);
}

uint8_t *ch_copy_nhwc(size_t *size)
{
	cm_model *m = model(1, 1, 16, 16);
	static const uint32_t nhwc[4] = { 2, 2, 4, 1 }; /* c, w, h, n: shape (1, 4, 2, 2) */
	memcpy(m->in[0].dims, nhwc, sizeof(nhwc));
	m->in[0].dim_count = 4;
	tp(m, 0, 16, 1, 1, 16, 0, 0, 15, 0, 16, 1, 1);
	return build(m, size);
}

uint8_t *ch_copy_two_inputs(size_t *size)
{
	cm_model *m = model(2, 1, 16, 16);
	tp(m, 0, 16, 1, 1, 16, 0, 0, 15, 0, 16, 1, 1);
	return build(m, size);
}

uint8_t *ch_records(uint32_t n, size_t *size)
{
	cm_model *m = model(1, 1, 16, 16);
	conv(m, 4, 4, 1, 1, 4, 4, 1, 4, 16, n);
	tp(m, 0, 16, 1, 1, 16, 0, 0, 15, 0, 16, 1, n);
	return build(m, size);
}
