/*
 * commands_fields.c - the NN and TP command descriptor layouts as data: for
 * every field its name, word, first bit, width, how an address is stored,
 * its role and its evidence.
 *
 * Source of the layout: Mesa's open etnaviv driver for the same VeriSilicon
 * NPU cores (MIT), repository bminor/mesa-mesa,
 * src/gallium/drivers/etnaviv/etnaviv_ml_nn.c at commit
 * 0ef5aa5fb6e32626f03053d0e5f7a2fb7fc08412 (struct etna_nn_params) and
 * src/gallium/drivers/etnaviv/etnaviv_ml_tp.c at commit
 * 104309ede383b8ca328b7405d28e707998fa6dae (struct etna_tp_params).  The
 * tables below are nbgkit's own, written from those layouts (field names
 * kept so a reader can find them there); the driver's padding fields are left
 * out, so bits no field names stay visible as unknown.  Evidence codes:
 * doc/commands.md.
 *
 * The hardware data-type codes are named by VeriSilicon's OpenVX driver
 * (getHWDataFormat in driver/driver/khronos/libOpenVX/driver/src/
 * gc_vx_nn_command.c, repository flycat0101/gpu-viv6-andy, commit
 * 04c7e5004a05ad3af5901d978fe0c7521262f170); the pooling window code by
 * getHwPoolingSze in the same file.
 */
#include <string.h>

#include "analysis/commands_internal.h"

#define F(k, w, lo, n, sh, role, ev, text) { k, w, lo, n, sh, role, ev, text }

static const nbg_cmd_field nn_fields[] = {
	/* word 0 */
	F("layer_type", 0, 0, 1, 0, NBG_CMDF_VALUE, "O",
	  "operation kind: 0 convolution, 1 fully connected"),
	F("no_z_offset", 0, 1, 1, 0, NBG_CMDF_VALUE, "O",
	  "no z offset"),
	F("kernel_xy_size", 0, 2, 4, 0, NBG_CMDF_VALUE, "O",
	  "kernel width (and height where kernel_y_size is 0)"),
	F("kernel_z_size", 0, 6, 14, 0, NBG_CMDF_VALUE, "O",
	  "kernel depth, bits 0-13 (input channels)"),
	F("kernels_per_core", 0, 20, 7, 0, NBG_CMDF_VALUE, "O",
	  "output channels each NN core computes per pass"),
	F("pooling", 0, 27, 2, 0, NBG_CMDF_VALUE, "O",
	  "pooling: 0 none, 1 max, 2 average, 3 first pixel"),
	F("pooling_xy_size", 0, 29, 1, 0, NBG_CMDF_VALUE, "O+P",
	  "pooling window: 0 is 2x2, 1 is 3x3"),
	F("prelu", 0, 30, 1, 0, NBG_CMDF_VALUE, "O",
	  "parametric ReLU"),
	F("nn_layer_flush", 0, 31, 1, 0, NBG_CMDF_VALUE, "O",
	  "flush at the end of the layer"),
	/* word 1 */
	F("kernel_data_type", 1, 0, 2, 0, NBG_CMDF_DATA_TYPE, "O+P",
	  "kernel data type, bits 0-1 of the hardware code"),
	F("in_image_data_type", 1, 2, 2, 0, NBG_CMDF_DATA_TYPE, "O+P+C",
	  "input data type, bits 0-1 of the hardware code"),
	F("out_image_data_type", 1, 4, 2, 0, NBG_CMDF_DATA_TYPE, "O+P+C",
	  "output data type, bits 0-1 of the hardware code"),
	F("in_image_x_size", 1, 6, 13, 0, NBG_CMDF_VALUE, "O",
	  "input width"),
	F("in_image_y_size", 1, 19, 13, 0, NBG_CMDF_VALUE, "O",
	  "input height"),
	/* word 2 */
	F("in_image_x_offset", 2, 0, 3, 0, NBG_CMDF_VALUE, "O",
	  "input x offset (padding), bits 0-2"),
	F("in_image_y_offset", 2, 3, 3, 0, NBG_CMDF_VALUE, "O",
	  "input y offset (padding), bits 0-2"),
	F("brick_mode", 2, 7, 1, 0, NBG_CMDF_VALUE, "O",
	  "brick mode"),
	F("brick_distance", 2, 8, 16, 0, NBG_CMDF_VALUE, "O",
	  "brick distance"),
	F("relu", 2, 24, 1, 0, NBG_CMDF_VALUE, "O",
	  "ReLU on the output"),
	F("post_multiplier", 2, 26, 1, 0, NBG_CMDF_VALUE, "O",
	  "requantization multiplier, bit 0"),
	F("post_shift", 2, 27, 5, 0, NBG_CMDF_VALUE, "O",
	  "requantization shift, bits 0-4"),
	/* word 3 */
	F("no_flush", 3, 3, 1, 0, NBG_CMDF_VALUE, "O",
	  "no flush"),
	F("out_image_x_size", 3, 6, 13, 0, NBG_CMDF_VALUE, "O",
	  "output width"),
	F("out_image_y_size", 3, 19, 13, 0, NBG_CMDF_VALUE, "O",
	  "output height"),
	/* word 4 */
	F("out_image_z_size", 4, 0, 14, 0, NBG_CMDF_VALUE, "O",
	  "output depth (output channels)"),
	F("rounding_mode", 4, 14, 2, 0, NBG_CMDF_VALUE, "O",
	  "rounding mode"),
	F("in_image_x_offset_bit_3", 4, 16, 1, 0, NBG_CMDF_VALUE, "O",
	  "input x offset, bit 3"),
	F("in_image_y_offset_bit_3", 4, 17, 1, 0, NBG_CMDF_VALUE, "O",
	  "input y offset, bit 3"),
	F("out_image_tile_x_size", 4, 18, 7, 0, NBG_CMDF_VALUE, "O",
	  "output tile width"),
	F("out_image_tile_y_size", 4, 25, 7, 0, NBG_CMDF_VALUE, "O",
	  "output tile height"),
	/* word 5 */
	F("kernel_address", 5, 0, 26, 6, NBG_CMDF_ADDRESS, "O+C",
	  "kernel (coefficient) stream address >> 6"),
	F("kernel_z_size2", 5, 26, 6, 0, NBG_CMDF_VALUE, "O",
	  "kernel depth, bits 14-19"),
	/* word 6 */
	F("in_image_address", 6, 0, 32, 0, NBG_CMDF_ADDRESS, "O+C",
	  "input image address"),
	/* word 7 */
	F("out_image_address", 7, 0, 32, 0, NBG_CMDF_ADDRESS, "O+C",
	  "output image address"),
	/* word 8 */
	F("image_caching_mode", 8, 0, 2, 0, NBG_CMDF_VALUE, "O",
	  "on-chip SRAM caching of the input image"),
	F("kernel_caching_mode", 8, 2, 2, 0, NBG_CMDF_VALUE, "O",
	  "on-chip SRAM caching of the kernels"),
	F("partial_cache_data_unit", 8, 4, 2, 0, NBG_CMDF_VALUE, "O",
	  "partial cache data unit"),
	F("kernel_pattern_msb", 8, 6, 6, 0, NBG_CMDF_VALUE, "O",
	  "kernel cache pattern, top bit index"),
	F("kernel_y_size", 8, 12, 4, 0, NBG_CMDF_VALUE, "O",
	  "kernel height"),
	F("out_image_y_stride", 8, 16, 16, 0, NBG_CMDF_VALUE, "O",
	  "output y stride"),
	/* word 9 */
	F("kernel_pattern_low", 9, 0, 32, 0, NBG_CMDF_VALUE, "O",
	  "kernel cache pattern, low word"),
	/* word 10 */
	F("kernel_pattern_high", 10, 0, 32, 0, NBG_CMDF_VALUE, "O",
	  "kernel cache pattern, high word"),
	/* word 11 */
	F("kernel_cache_start_address", 11, 0, 32, 0, NBG_CMDF_VALUE, "O",
	  "kernel cache start (on-chip SRAM offset)"),
	/* word 12 */
	F("kernel_cache_end_address", 12, 0, 32, 0, NBG_CMDF_VALUE, "O",
	  "kernel cache end (on-chip SRAM offset)"),
	/* word 13 */
	F("image_cache_start_address", 13, 0, 32, 0, NBG_CMDF_VALUE, "O",
	  "image cache start (on-chip SRAM offset)"),
	/* word 14 */
	F("image_cache_end_address", 14, 0, 32, 0, NBG_CMDF_VALUE, "O",
	  "image cache end (on-chip SRAM offset)"),
	/* word 15 */
	F("in_image_border_mode", 15, 0, 2, 0, NBG_CMDF_VALUE, "O",
	  "input border mode"),
	F("in_image_border_const", 15, 2, 16, 0, NBG_CMDF_VALUE, "O",
	  "input border constant"),
	F("kernel_data_type_bit_2", 15, 19, 1, 0, NBG_CMDF_DATA_TYPE_HI, "O+P",
	  "kernel data type, bit 2 of the hardware code"),
	F("in_image_data_type_bit_2", 15, 20, 1, 0, NBG_CMDF_DATA_TYPE_HI, "O+P+C",
	  "input data type, bit 2 of the hardware code"),
	F("out_image_data_type_bit_2", 15, 21, 1, 0, NBG_CMDF_DATA_TYPE_HI, "O+P+C",
	  "output data type, bit 2 of the hardware code"),
	F("post_multiplier_1_to_6", 15, 22, 6, 0, NBG_CMDF_VALUE, "O",
	  "requantization multiplier, bits 1-6"),
	F("post_shift_bit_5_6", 15, 28, 2, 0, NBG_CMDF_VALUE, "O",
	  "requantization shift, bits 5-6"),
	/* word 16 */
	F("in_image_x_stride", 16, 0, 16, 0, NBG_CMDF_VALUE, "O",
	  "input x stride"),
	F("in_image_y_stride", 16, 16, 16, 0, NBG_CMDF_VALUE, "O",
	  "input y stride"),
	/* word 17 */
	F("out_image_x_stride", 17, 0, 16, 0, NBG_CMDF_VALUE, "O",
	  "output x stride"),
	F("post_multiplier_7_to_14", 17, 24, 8, 0, NBG_CMDF_VALUE, "O",
	  "requantization multiplier, bits 7-14"),
	/* word 18 */
	F("out_image_circular_buf_size", 18, 0, 26, 6, NBG_CMDF_VALUE, "O",
	  "output circular buffer size >> 6"),
	F("per_channel_post_mul", 18, 26, 1, 0, NBG_CMDF_VALUE, "O",
	  "per-channel requantization multiplier"),
	/* word 19 */
	F("out_image_circular_buf_end_addr_plus_1", 19, 0, 26, 6, NBG_CMDF_ADDRESS, "O+C",
	  "output circular buffer end + 1, >> 6"),
	/* word 20 */
	F("in_image_circular_buf_size", 20, 0, 26, 6, NBG_CMDF_VALUE, "O",
	  "input circular buffer size >> 6"),
	/* word 21 */
	F("in_image_circular_buf_end_addr_plus_1", 21, 0, 26, 6, NBG_CMDF_ADDRESS, "O+C",
	  "input circular buffer end + 1, >> 6"),
	/* word 22 */
	F("coef_zero_point", 22, 0, 8, 0, NBG_CMDF_VALUE, "O",
	  "kernel zero point"),
	F("out_zero_point", 22, 8, 8, 0, NBG_CMDF_VALUE, "O",
	  "output zero point"),
	F("kernel_direct_stream_from_VIP_sram", 22, 16, 1, 0, NBG_CMDF_VALUE, "O",
	  "kernel streamed from VIP SRAM"),
	F("depthwise", 22, 17, 1, 0, NBG_CMDF_VALUE, "O",
	  "depthwise convolution"),
	F("post_multiplier_15_to_22", 22, 18, 8, 0, NBG_CMDF_VALUE, "O",
	  "requantization multiplier, bits 15-22"),
};

static const nbg_cmd_field tp_fields[] = {
	/* word 0 */
	F("in_image_x_size", 0, 0, 16, 0, NBG_CMDF_VALUE, "O",
	  "input x size"),
	/* word 1 */
	F("in_image_y_size", 1, 0, 16, 0, NBG_CMDF_VALUE, "O",
	  "input y size"),
	F("in_image_z_size", 1, 16, 16, 0, NBG_CMDF_VALUE, "O",
	  "input z size"),
	/* word 2 */
	F("in_image_stride", 2, 0, 16, 0, NBG_CMDF_VALUE, "O",
	  "input stride"),
	/* word 3 */
	F("in_image_slice", 3, 0, 32, 0, NBG_CMDF_VALUE, "O",
	  "input slice size"),
	/* word 4 */
	F("in_window_x_start", 4, 0, 16, 0, NBG_CMDF_VALUE, "O",
	  "input window x start"),
	F("in_window_y_start", 4, 16, 16, 0, NBG_CMDF_VALUE, "O",
	  "input window y start"),
	/* word 5 */
	F("in_window_x_end", 5, 0, 16, 0, NBG_CMDF_VALUE, "O",
	  "input window x end"),
	F("in_window_y_end", 5, 16, 16, 0, NBG_CMDF_VALUE, "O",
	  "input window y end"),
	/* word 6 */
	F("in_tile_sequence", 6, 0, 2, 0, NBG_CMDF_VALUE, "O",
	  "input tile sequence"),
	F("in_tile_global_mem", 6, 2, 1, 0, NBG_CMDF_VALUE, "O",
	  "input tile in global memory"),
	F("in_image_global_mem", 6, 3, 1, 0, NBG_CMDF_VALUE, "O",
	  "input image in global memory"),
	F("alu_i2f_enable", 6, 4, 1, 0, NBG_CMDF_VALUE, "O",
	  "integer to float conversion"),
	F("alu_square_enable", 6, 5, 1, 0, NBG_CMDF_VALUE, "O",
	  "square"),
	F("alu_horz_processing", 6, 6, 3, 0, NBG_CMDF_VALUE, "O",
	  "horizontal processing (pooling) mode"),
	F("alu_horz_proc_count", 6, 9, 6, 0, NBG_CMDF_VALUE, "O",
	  "horizontal processing count"),
	F("alu_horz_proc_stride", 6, 15, 1, 0, NBG_CMDF_VALUE, "O",
	  "horizontal processing stride"),
	F("alu_vert_processing", 6, 16, 2, 0, NBG_CMDF_VALUE, "O",
	  "vertical processing (pooling) mode"),
	F("alu_vert_proc_count", 6, 19, 6, 0, NBG_CMDF_VALUE, "O",
	  "vertical processing count"),
	F("alu_vert_proc_stride", 6, 25, 1, 0, NBG_CMDF_VALUE, "O",
	  "vertical processing stride"),
	F("alu_nms_enable", 6, 26, 1, 0, NBG_CMDF_VALUE, "O",
	  "non-maximum suppression"),
	F("alu_pwl_enable", 6, 27, 1, 0, NBG_CMDF_VALUE, "O",
	  "piecewise-linear lookup (activation)"),
	F("alu_mult_enable", 6, 28, 1, 0, NBG_CMDF_VALUE, "O",
	  "multiply"),
	F("alu_f2i_enable", 6, 29, 1, 0, NBG_CMDF_VALUE, "O",
	  "float to integer conversion"),
	F("alu_load_pwl_lut", 6, 30, 1, 0, NBG_CMDF_VALUE, "O",
	  "load the piecewise-linear table"),
	F("alu_load_pwl_lut_global_mem", 6, 31, 1, 0, NBG_CMDF_VALUE, "O",
	  "piecewise-linear table in global memory"),
	/* word 7 */
	F("in_tile_list_address", 7, 0, 32, 0, NBG_CMDF_ADDRESS, "O",
	  "input tile list address"),
	/* word 8 */
	F("in_tile_x_size", 8, 0, 16, 0, NBG_CMDF_VALUE, "O",
	  "input tile x size"),
	F("in_tile_y_size", 8, 16, 16, 0, NBG_CMDF_VALUE, "O",
	  "input tile y size"),
	/* word 9 */
	F("in_tile_x_inc", 9, 0, 16, 0, NBG_CMDF_VALUE, "O",
	  "input tile x increment"),
	F("in_tile_y_inc", 9, 16, 16, 0, NBG_CMDF_VALUE, "O",
	  "input tile y increment"),
	/* word 10 */
	F("in_image_base_address", 10, 0, 32, 0, NBG_CMDF_ADDRESS, "O+C",
	  "input image address"),
	/* word 11 */
	F("alu_load_pwl_lut_address", 11, 0, 32, 0, NBG_CMDF_ADDRESS, "O+C",
	  "piecewise-linear table address"),
	/* word 12 */
	F("out_tile_skip_at_border", 12, 0, 1, 0, NBG_CMDF_VALUE, "O",
	  "skip output tiles at the border"),
	F("out_image_global_mem", 12, 1, 1, 0, NBG_CMDF_VALUE, "O",
	  "output image in global memory"),
	F("out_loop_1_reset", 12, 2, 1, 0, NBG_CMDF_VALUE, "O",
	  "output loop 1 reset"),
	F("out_loop_2_reset", 12, 3, 1, 0, NBG_CMDF_VALUE, "O",
	  "output loop 2 reset"),
	F("out_loop_3_reset", 12, 4, 1, 0, NBG_CMDF_VALUE, "O",
	  "output loop 3 reset"),
	F("out_brick_mode", 12, 5, 1, 0, NBG_CMDF_VALUE, "O",
	  "output brick mode"),
	F("alu_z_filter_mode", 12, 6, 1, 0, NBG_CMDF_VALUE, "O",
	  "z filter mode"),
	F("in_window_z_start_overfetch", 12, 8, 2, 0, NBG_CMDF_VALUE, "O",
	  "input window z start overfetch"),
	F("in_window_z_end_overfetch", 12, 11, 2, 0, NBG_CMDF_VALUE, "O",
	  "input window z end overfetch"),
	F("alu_square_preshift", 12, 14, 4, 0, NBG_CMDF_VALUE, "O",
	  "square pre-shift"),
	F("in_image_data_type", 12, 18, 3, 0, NBG_CMDF_DATA_TYPE, "O+P+C",
	  "input data type (hardware code)"),
	F("out_image_data_type", 12, 21, 3, 0, NBG_CMDF_DATA_TYPE, "O+P+C",
	  "output data type (hardware code)"),
	F("alu_pwl_sign_support", 12, 28, 1, 0, NBG_CMDF_VALUE, "O",
	  "piecewise-linear sign support"),
	F("alu_relu_enable", 12, 29, 1, 0, NBG_CMDF_VALUE, "O",
	  "ReLU on the output"),
	F("no_flush", 12, 30, 1, 0, NBG_CMDF_VALUE, "O",
	  "no flush"),
	F("last", 12, 31, 1, 0, NBG_CMDF_VALUE, "O",
	  "last command"),
	/* word 13 */
	F("out_image_base_address", 13, 0, 32, 0, NBG_CMDF_ADDRESS, "O+C",
	  "output image address"),
	/* word 14 */
	F("out_loop_0_inc", 14, 0, 32, 0, NBG_CMDF_VALUE, "O",
	  "output loop 0 increment"),
	/* word 15 */
	F("out_loop_1_inc", 15, 0, 32, 0, NBG_CMDF_VALUE, "O",
	  "output loop 1 increment"),
	/* word 16 */
	F("out_loop_0_count", 16, 0, 16, 0, NBG_CMDF_VALUE, "O",
	  "output loop 0 count"),
	F("out_loop_1_count", 16, 16, 16, 0, NBG_CMDF_VALUE, "O",
	  "output loop 1 count"),
	/* word 17 */
	F("out_loop_2_inc", 17, 0, 32, 0, NBG_CMDF_VALUE, "O",
	  "output loop 2 increment"),
	/* word 18 */
	F("out_loop_3_inc", 18, 0, 32, 0, NBG_CMDF_VALUE, "O",
	  "output loop 3 increment"),
	/* word 19 */
	F("out_loop_2_count", 19, 0, 16, 0, NBG_CMDF_VALUE, "O",
	  "output loop 2 count"),
	F("out_loop_3_count", 19, 16, 16, 0, NBG_CMDF_VALUE, "O",
	  "output loop 3 count"),
	/* word 20 */
	F("out_loop_4_inc", 20, 0, 32, 0, NBG_CMDF_VALUE, "O",
	  "output loop 4 increment"),
	/* word 21 */
	F("out_loop_5_inc", 21, 0, 32, 0, NBG_CMDF_VALUE, "O",
	  "output loop 5 increment"),
	/* word 22 */
	F("out_loop_4_count", 22, 0, 16, 0, NBG_CMDF_VALUE, "O",
	  "output loop 4 count"),
	F("out_loop_5_count", 22, 16, 16, 0, NBG_CMDF_VALUE, "O",
	  "output loop 5 count"),
	/* word 23 */
	F("out_loop_6_inc", 23, 0, 32, 0, NBG_CMDF_VALUE, "O",
	  "output loop 6 increment"),
	/* word 24 */
	F("alu_filter_pwl_swap", 24, 0, 1, 0, NBG_CMDF_VALUE, "O",
	  "filter / piecewise-linear swap"),
	F("flat_rounding_mode", 24, 1, 2, 0, NBG_CMDF_VALUE, "O",
	  "flat rounding mode"),
	F("integer_rounding_mode", 24, 3, 2, 0, NBG_CMDF_VALUE, "O",
	  "integer rounding mode"),
	F("alu_input_preshift", 24, 5, 5, 0, NBG_CMDF_VALUE, "O",
	  "input pre-shift"),
	F("alu_output_postshift", 24, 10, 5, 0, NBG_CMDF_VALUE, "O",
	  "output post-shift, bits 0-4"),
	F("alu_reorder_bits_used", 24, 15, 4, 0, NBG_CMDF_VALUE, "O",
	  "reorder bits used"),
	F("alu_reorder_loop_2_mode", 24, 19, 1, 0, NBG_CMDF_VALUE, "O",
	  "reorder loop 2 mode"),
	F("in_image_border_mode", 24, 24, 2, 0, NBG_CMDF_VALUE, "O",
	  "input border mode"),
	F("alu_output_postshift_5_6", 24, 26, 2, 0, NBG_CMDF_VALUE, "O",
	  "output post-shift, bits 5-6"),
	/* word 25 */
	F("in_image_circular_buf_size", 25, 0, 32, 6, NBG_CMDF_VALUE, "O",
	  "input circular buffer size >> 6"),
	/* word 26 */
	F("in_image_circular_buf_end_address_plus_1", 26, 0, 32, 6, NBG_CMDF_ADDRESS, "O+C",
	  "input circular buffer end + 1, >> 6"),
	/* word 27 */
	F("out_image_circular_buf_size", 27, 0, 32, 6, NBG_CMDF_VALUE, "O",
	  "output circular buffer size >> 6"),
	/* word 28 */
	F("out_image_circular_buf_end_address_plus_1", 28, 0, 32, 6, NBG_CMDF_ADDRESS, "O+C",
	  "output circular buffer end + 1, >> 6"),
	/* word 29 */
	F("in_image_border_const", 29, 0, 16, 0, NBG_CMDF_VALUE, "O",
	  "input border constant"),
	F("coef_zp", 29, 16, 8, 0, NBG_CMDF_VALUE, "O",
	  "coefficient zero point"),
	F("in_zp", 29, 24, 8, 0, NBG_CMDF_VALUE, "O",
	  "input zero point"),
	/* word 30 */
	F("out_zp", 30, 0, 8, 0, NBG_CMDF_VALUE, "O",
	  "output zero point"),
	F("alu_output_post_multiplier", 30, 8, 15, 0, NBG_CMDF_VALUE, "O",
	  "output post-multiplier"),
};

const char *nbg_command_engine_name(unsigned engine)
{
	return engine == NBG_CMD_NN ? "NN" : engine == NBG_CMD_TP ? "TP" : NULL;
}

const nbg_cmd_field *nbg_command_fields(unsigned engine, size_t *count)
{
	size_t n = 0;
	const nbg_cmd_field *t = NULL;

	if (engine == NBG_CMD_NN) {
		t = nn_fields;
		n = sizeof(nn_fields) / sizeof(nn_fields[0]);
	} else if (engine == NBG_CMD_TP) {
		t = tp_fields;
		n = sizeof(tp_fields) / sizeof(tp_fields[0]);
	}
	if (count)
		*count = n;
	return t;
}

int nbg_command_field_index(unsigned engine, const char *key)
{
	size_t n;
	const nbg_cmd_field *t = nbg_command_fields(engine, &n);

	for (size_t i = 0; key && i < n; i++)
		if (!strcmp(t[i].key, key))
			return (int)i;
	return -1;
}

const char *nbg_command_data_type_name(uint32_t code)
{
	switch (code) {
	case 0: return "uint8";
	case 1: return "fp16";
	case 2: return "int8";
	case 4: return "int16";
	case 7: return "bf16";
	default: return NULL;
	}
}

const char *nbg_command_pooling_name(uint32_t code)
{
	static const char *const names[] = { "none", "max", "avg", "first-pixel" };
	return code < 4 ? names[code] : NULL;
}

/* ------------------------------------------------ helpers of the decoder */

int nbg_command_format_code(uint32_t data_format)
{
	switch (data_format) {
	case 1: return 1; /* FP16 */
	case 2: return 0; /* UINT8 */
	case 3: return 2; /* INT8 */
	case 5: return 4; /* INT16 */
	case 7: return 7; /* BFP16 */
	default: return -1;
	}
}

unsigned nbg_command_type_bytes(uint32_t code)
{
	return code == 1 || code == 4 || code == 7 ? 2u : 1u;
}

uint32_t nbg_command_value(const nbg_cmd *cmd, const char *key)
{
	int i = nbg_command_field_index(cmd->engine, key);
	return i < 0 ? 0 : cmd->values[i];
}

/* The address a patch gives: its source offset plus the value stored at
 * the patched word, except in 0x10003 files, where the word holds the
 * compile-time address and the source offset that buffer's compile-time
 * base (so the offset is their difference; every reference of the three
 * 0x10003 files has value >= base, and equality at a buffer's start). */
uint64_t nbg_command_patched_offset(uint32_t version, uint32_t src_offset, uint64_t value)
{
	if (version < 0x10009u && src_offset && value >= src_offset)
		return value - src_offset;
	return (uint64_t)src_offset + value;
}
