/*
 * commands_fields.h - the NN and TP command descriptor layouts as X-macro
 * lists: X(ID, key, word, first bit, width, address shift, role, evidence,
 * meaning) per field.  One list gives both the field tables of
 * commands_fields.c (nbg_command_fields) and the field ids of
 * commands_lib.h (enum nbg_nn_fid, enum nbg_tp_fid), so code names a
 * field by an id the compiler checks, never by a string.  The source of the
 * layouts is said at the top of commands_fields.c.  Private to libnbg.
 */
#ifndef NBG_COMMANDS_FIELDS_H
#define NBG_COMMANDS_FIELDS_H

#define NBG_NN_FIELDS(X) \
	/* word 0 */ \
	X(LAYER_TYPE, "layer_type", 0, 0, 1, 0, NBG_CMDF_VALUE, "O", \
	  "operation kind: 0 convolution, 1 fully connected") \
	X(NO_Z_OFFSET, "no_z_offset", 0, 1, 1, 0, NBG_CMDF_VALUE, "O", \
	  "no z offset") \
	X(KERNEL_XY_SIZE, "kernel_xy_size", 0, 2, 4, 0, NBG_CMDF_VALUE, "O", \
	  "kernel width (and height where kernel_y_size is 0)") \
	X(KERNEL_Z_SIZE, "kernel_z_size", 0, 6, 14, 0, NBG_CMDF_VALUE, "O", \
	  "kernel depth, bits 0-13 (input channels)") \
	X(KERNELS_PER_CORE, "kernels_per_core", 0, 20, 7, 0, NBG_CMDF_VALUE, "O", \
	  "output channels each NN core computes per pass") \
	X(POOLING, "pooling", 0, 27, 2, 0, NBG_CMDF_VALUE, "O", \
	  "pooling: 0 none, 1 max, 2 average, 3 first pixel") \
	X(POOLING_XY_SIZE, "pooling_xy_size", 0, 29, 1, 0, NBG_CMDF_VALUE, "O+P", \
	  "pooling window: 0 is 2x2, 1 is 3x3") \
	X(PRELU, "prelu", 0, 30, 1, 0, NBG_CMDF_VALUE, "O", \
	  "parametric ReLU") \
	X(NN_LAYER_FLUSH, "nn_layer_flush", 0, 31, 1, 0, NBG_CMDF_VALUE, "O", \
	  "flush at the end of the layer") \
	/* word 1 */ \
	X(KERNEL_DATA_TYPE, "kernel_data_type", 1, 0, 2, 0, NBG_CMDF_DATA_TYPE, "O+P", \
	  "kernel data type, bits 0-1 of the hardware code") \
	X(IN_IMAGE_DATA_TYPE, "in_image_data_type", 1, 2, 2, 0, NBG_CMDF_DATA_TYPE, "O+P+C", \
	  "input data type, bits 0-1 of the hardware code") \
	X(OUT_IMAGE_DATA_TYPE, "out_image_data_type", 1, 4, 2, 0, NBG_CMDF_DATA_TYPE, "O+P+C", \
	  "output data type, bits 0-1 of the hardware code") \
	X(IN_IMAGE_X_SIZE, "in_image_x_size", 1, 6, 13, 0, NBG_CMDF_VALUE, "O", \
	  "input width") \
	X(IN_IMAGE_Y_SIZE, "in_image_y_size", 1, 19, 13, 0, NBG_CMDF_VALUE, "O", \
	  "input height") \
	/* word 2 */ \
	X(IN_IMAGE_X_OFFSET, "in_image_x_offset", 2, 0, 3, 0, NBG_CMDF_VALUE, "O", \
	  "input x offset (padding), bits 0-2") \
	X(IN_IMAGE_Y_OFFSET, "in_image_y_offset", 2, 3, 3, 0, NBG_CMDF_VALUE, "O", \
	  "input y offset (padding), bits 0-2") \
	X(BRICK_MODE, "brick_mode", 2, 7, 1, 0, NBG_CMDF_VALUE, "O", \
	  "brick mode") \
	X(BRICK_DISTANCE, "brick_distance", 2, 8, 16, 0, NBG_CMDF_VALUE, "O", \
	  "brick distance") \
	X(RELU, "relu", 2, 24, 1, 0, NBG_CMDF_VALUE, "O", \
	  "ReLU on the output") \
	X(POST_MULTIPLIER, "post_multiplier", 2, 26, 1, 0, NBG_CMDF_VALUE, "O", \
	  "requantization multiplier, bit 0") \
	X(POST_SHIFT, "post_shift", 2, 27, 5, 0, NBG_CMDF_VALUE, "O", \
	  "requantization shift, bits 0-4") \
	/* word 3 */ \
	X(NO_FLUSH, "no_flush", 3, 3, 1, 0, NBG_CMDF_VALUE, "O", \
	  "no flush") \
	X(OUT_IMAGE_X_SIZE, "out_image_x_size", 3, 6, 13, 0, NBG_CMDF_VALUE, "O", \
	  "output width") \
	X(OUT_IMAGE_Y_SIZE, "out_image_y_size", 3, 19, 13, 0, NBG_CMDF_VALUE, "O", \
	  "output height") \
	/* word 4 */ \
	X(OUT_IMAGE_Z_SIZE, "out_image_z_size", 4, 0, 14, 0, NBG_CMDF_VALUE, "O", \
	  "output depth (output channels)") \
	X(ROUNDING_MODE, "rounding_mode", 4, 14, 2, 0, NBG_CMDF_VALUE, "O", \
	  "rounding mode") \
	X(IN_IMAGE_X_OFFSET_BIT_3, "in_image_x_offset_bit_3", 4, 16, 1, 0, NBG_CMDF_VALUE, "O", \
	  "input x offset, bit 3") \
	X(IN_IMAGE_Y_OFFSET_BIT_3, "in_image_y_offset_bit_3", 4, 17, 1, 0, NBG_CMDF_VALUE, "O", \
	  "input y offset, bit 3") \
	X(OUT_IMAGE_TILE_X_SIZE, "out_image_tile_x_size", 4, 18, 7, 0, NBG_CMDF_VALUE, "O", \
	  "output tile width") \
	X(OUT_IMAGE_TILE_Y_SIZE, "out_image_tile_y_size", 4, 25, 7, 0, NBG_CMDF_VALUE, "O", \
	  "output tile height") \
	/* word 5 */ \
	X(KERNEL_ADDRESS, "kernel_address", 5, 0, 26, 6, NBG_CMDF_ADDRESS, "O+C", \
	  "kernel (coefficient) stream address >> 6") \
	X(KERNEL_Z_SIZE2, "kernel_z_size2", 5, 26, 6, 0, NBG_CMDF_VALUE, "O", \
	  "kernel depth, bits 14-19") \
	/* word 6 */ \
	X(IN_IMAGE_ADDRESS, "in_image_address", 6, 0, 32, 0, NBG_CMDF_ADDRESS, "O+C", \
	  "input image address") \
	/* word 7 */ \
	X(OUT_IMAGE_ADDRESS, "out_image_address", 7, 0, 32, 0, NBG_CMDF_ADDRESS, "O+C", \
	  "output image address") \
	/* word 8 */ \
	X(IMAGE_CACHING_MODE, "image_caching_mode", 8, 0, 2, 0, NBG_CMDF_VALUE, "O", \
	  "on-chip SRAM caching of the input image") \
	X(KERNEL_CACHING_MODE, "kernel_caching_mode", 8, 2, 2, 0, NBG_CMDF_VALUE, "O", \
	  "on-chip SRAM caching of the kernels") \
	X(PARTIAL_CACHE_DATA_UNIT, "partial_cache_data_unit", 8, 4, 2, 0, NBG_CMDF_VALUE, "O", \
	  "partial cache data unit") \
	X(KERNEL_PATTERN_MSB, "kernel_pattern_msb", 8, 6, 6, 0, NBG_CMDF_VALUE, "O", \
	  "kernel cache pattern, top bit index") \
	X(KERNEL_Y_SIZE, "kernel_y_size", 8, 12, 4, 0, NBG_CMDF_VALUE, "O", \
	  "kernel height") \
	X(OUT_IMAGE_Y_STRIDE, "out_image_y_stride", 8, 16, 16, 0, NBG_CMDF_VALUE, "O", \
	  "output y stride") \
	/* word 9 */ \
	X(KERNEL_PATTERN_LOW, "kernel_pattern_low", 9, 0, 32, 0, NBG_CMDF_VALUE, "O", \
	  "kernel cache pattern, low word") \
	/* word 10 */ \
	X(KERNEL_PATTERN_HIGH, "kernel_pattern_high", 10, 0, 32, 0, NBG_CMDF_VALUE, "O", \
	  "kernel cache pattern, high word") \
	/* word 11 */ \
	X(KERNEL_CACHE_START_ADDRESS, "kernel_cache_start_address", 11, 0, 32, 0, NBG_CMDF_VALUE, "O", \
	  "kernel cache start (on-chip SRAM offset)") \
	/* word 12 */ \
	X(KERNEL_CACHE_END_ADDRESS, "kernel_cache_end_address", 12, 0, 32, 0, NBG_CMDF_VALUE, "O", \
	  "kernel cache end (on-chip SRAM offset)") \
	/* word 13 */ \
	X(IMAGE_CACHE_START_ADDRESS, "image_cache_start_address", 13, 0, 32, 0, NBG_CMDF_VALUE, "O", \
	  "image cache start (on-chip SRAM offset)") \
	/* word 14 */ \
	X(IMAGE_CACHE_END_ADDRESS, "image_cache_end_address", 14, 0, 32, 0, NBG_CMDF_VALUE, "O", \
	  "image cache end (on-chip SRAM offset)") \
	/* word 15 */ \
	X(IN_IMAGE_BORDER_MODE, "in_image_border_mode", 15, 0, 2, 0, NBG_CMDF_VALUE, "O", \
	  "input border mode") \
	X(IN_IMAGE_BORDER_CONST, "in_image_border_const", 15, 2, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input border constant") \
	X(KERNEL_DATA_TYPE_BIT_2, "kernel_data_type_bit_2", 15, 19, 1, 0, NBG_CMDF_DATA_TYPE_HI, "O+P", \
	  "kernel data type, bit 2 of the hardware code") \
	X(IN_IMAGE_DATA_TYPE_BIT_2, "in_image_data_type_bit_2", 15, 20, 1, 0, NBG_CMDF_DATA_TYPE_HI, "O+P+C", \
	  "input data type, bit 2 of the hardware code") \
	X(OUT_IMAGE_DATA_TYPE_BIT_2, "out_image_data_type_bit_2", 15, 21, 1, 0, NBG_CMDF_DATA_TYPE_HI, "O+P+C", \
	  "output data type, bit 2 of the hardware code") \
	X(POST_MULTIPLIER_1_TO_6, "post_multiplier_1_to_6", 15, 22, 6, 0, NBG_CMDF_VALUE, "O", \
	  "requantization multiplier, bits 1-6") \
	X(POST_SHIFT_BIT_5_6, "post_shift_bit_5_6", 15, 28, 2, 0, NBG_CMDF_VALUE, "O", \
	  "requantization shift, bits 5-6") \
	/* word 16 */ \
	X(IN_IMAGE_X_STRIDE, "in_image_x_stride", 16, 0, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input x stride") \
	X(IN_IMAGE_Y_STRIDE, "in_image_y_stride", 16, 16, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input y stride") \
	/* word 17 */ \
	X(OUT_IMAGE_X_STRIDE, "out_image_x_stride", 17, 0, 16, 0, NBG_CMDF_VALUE, "O", \
	  "output x stride") \
	X(POST_MULTIPLIER_7_TO_14, "post_multiplier_7_to_14", 17, 24, 8, 0, NBG_CMDF_VALUE, "O", \
	  "requantization multiplier, bits 7-14") \
	/* word 18 */ \
	X(OUT_IMAGE_CIRCULAR_BUF_SIZE, "out_image_circular_buf_size", 18, 0, 26, 6, NBG_CMDF_VALUE, "O", \
	  "output circular buffer size >> 6") \
	X(PER_CHANNEL_POST_MUL, "per_channel_post_mul", 18, 26, 1, 0, NBG_CMDF_VALUE, "O", \
	  "per-channel requantization multiplier") \
	/* word 19 */ \
	X(OUT_IMAGE_CIRCULAR_BUF_END_ADDR_PLUS_1, "out_image_circular_buf_end_addr_plus_1", 19, 0, 26, 6, NBG_CMDF_ADDRESS, "O+C", \
	  "output circular buffer end + 1, >> 6") \
	/* word 20 */ \
	X(IN_IMAGE_CIRCULAR_BUF_SIZE, "in_image_circular_buf_size", 20, 0, 26, 6, NBG_CMDF_VALUE, "O", \
	  "input circular buffer size >> 6") \
	/* word 21 */ \
	X(IN_IMAGE_CIRCULAR_BUF_END_ADDR_PLUS_1, "in_image_circular_buf_end_addr_plus_1", 21, 0, 26, 6, NBG_CMDF_ADDRESS, "O+C", \
	  "input circular buffer end + 1, >> 6") \
	/* word 22 */ \
	X(COEF_ZERO_POINT, "coef_zero_point", 22, 0, 8, 0, NBG_CMDF_VALUE, "O", \
	  "kernel zero point") \
	X(OUT_ZERO_POINT, "out_zero_point", 22, 8, 8, 0, NBG_CMDF_VALUE, "O", \
	  "output zero point") \
	X(KERNEL_DIRECT_STREAM_FROM_VIP_SRAM, "kernel_direct_stream_from_VIP_sram", 22, 16, 1, 0, NBG_CMDF_VALUE, "O", \
	  "kernel streamed from VIP SRAM") \
	X(DEPTHWISE, "depthwise", 22, 17, 1, 0, NBG_CMDF_VALUE, "O", \
	  "depthwise convolution") \
	X(POST_MULTIPLIER_15_TO_22, "post_multiplier_15_to_22", 22, 18, 8, 0, NBG_CMDF_VALUE, "O", \
	  "requantization multiplier, bits 15-22") \
	/* end */

#define NBG_TP_FIELDS(X) \
	/* word 0 */ \
	X(IN_IMAGE_X_SIZE, "in_image_x_size", 0, 0, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input x size") \
	/* word 1 */ \
	X(IN_IMAGE_Y_SIZE, "in_image_y_size", 1, 0, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input y size") \
	X(IN_IMAGE_Z_SIZE, "in_image_z_size", 1, 16, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input z size") \
	/* word 2 */ \
	X(IN_IMAGE_STRIDE, "in_image_stride", 2, 0, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input stride") \
	/* word 3 */ \
	X(IN_IMAGE_SLICE, "in_image_slice", 3, 0, 32, 0, NBG_CMDF_VALUE, "O", \
	  "input slice size") \
	/* word 4 */ \
	X(IN_WINDOW_X_START, "in_window_x_start", 4, 0, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input window x start") \
	X(IN_WINDOW_Y_START, "in_window_y_start", 4, 16, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input window y start") \
	/* word 5 */ \
	X(IN_WINDOW_X_END, "in_window_x_end", 5, 0, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input window x end") \
	X(IN_WINDOW_Y_END, "in_window_y_end", 5, 16, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input window y end") \
	/* word 6 */ \
	X(IN_TILE_SEQUENCE, "in_tile_sequence", 6, 0, 2, 0, NBG_CMDF_VALUE, "O", \
	  "input tile sequence") \
	X(IN_TILE_GLOBAL_MEM, "in_tile_global_mem", 6, 2, 1, 0, NBG_CMDF_VALUE, "O", \
	  "input tile in global memory") \
	X(IN_IMAGE_GLOBAL_MEM, "in_image_global_mem", 6, 3, 1, 0, NBG_CMDF_VALUE, "O", \
	  "input image in global memory") \
	X(ALU_I2F_ENABLE, "alu_i2f_enable", 6, 4, 1, 0, NBG_CMDF_VALUE, "O", \
	  "integer to float conversion") \
	X(ALU_SQUARE_ENABLE, "alu_square_enable", 6, 5, 1, 0, NBG_CMDF_VALUE, "O", \
	  "square") \
	X(ALU_HORZ_PROCESSING, "alu_horz_processing", 6, 6, 3, 0, NBG_CMDF_VALUE, "O", \
	  "horizontal processing (pooling) mode") \
	X(ALU_HORZ_PROC_COUNT, "alu_horz_proc_count", 6, 9, 6, 0, NBG_CMDF_VALUE, "O", \
	  "horizontal processing count") \
	X(ALU_HORZ_PROC_STRIDE, "alu_horz_proc_stride", 6, 15, 1, 0, NBG_CMDF_VALUE, "O", \
	  "horizontal processing stride") \
	X(ALU_VERT_PROCESSING, "alu_vert_processing", 6, 16, 2, 0, NBG_CMDF_VALUE, "O", \
	  "vertical processing (pooling) mode") \
	X(ALU_VERT_PROC_COUNT, "alu_vert_proc_count", 6, 19, 6, 0, NBG_CMDF_VALUE, "O", \
	  "vertical processing count") \
	X(ALU_VERT_PROC_STRIDE, "alu_vert_proc_stride", 6, 25, 1, 0, NBG_CMDF_VALUE, "O", \
	  "vertical processing stride") \
	X(ALU_NMS_ENABLE, "alu_nms_enable", 6, 26, 1, 0, NBG_CMDF_VALUE, "O", \
	  "non-maximum suppression") \
	X(ALU_PWL_ENABLE, "alu_pwl_enable", 6, 27, 1, 0, NBG_CMDF_VALUE, "O", \
	  "piecewise-linear lookup (activation)") \
	X(ALU_MULT_ENABLE, "alu_mult_enable", 6, 28, 1, 0, NBG_CMDF_VALUE, "O", \
	  "multiply") \
	X(ALU_F2I_ENABLE, "alu_f2i_enable", 6, 29, 1, 0, NBG_CMDF_VALUE, "O", \
	  "float to integer conversion") \
	X(ALU_LOAD_PWL_LUT, "alu_load_pwl_lut", 6, 30, 1, 0, NBG_CMDF_VALUE, "O", \
	  "load the piecewise-linear table") \
	X(ALU_LOAD_PWL_LUT_GLOBAL_MEM, "alu_load_pwl_lut_global_mem", 6, 31, 1, 0, NBG_CMDF_VALUE, "O", \
	  "piecewise-linear table in global memory") \
	/* word 7 */ \
	X(IN_TILE_LIST_ADDRESS, "in_tile_list_address", 7, 0, 32, 0, NBG_CMDF_ADDRESS, "O", \
	  "input tile list address") \
	/* word 8 */ \
	X(IN_TILE_X_SIZE, "in_tile_x_size", 8, 0, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input tile x size") \
	X(IN_TILE_Y_SIZE, "in_tile_y_size", 8, 16, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input tile y size") \
	/* word 9 */ \
	X(IN_TILE_X_INC, "in_tile_x_inc", 9, 0, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input tile x increment") \
	X(IN_TILE_Y_INC, "in_tile_y_inc", 9, 16, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input tile y increment") \
	/* word 10 */ \
	X(IN_IMAGE_BASE_ADDRESS, "in_image_base_address", 10, 0, 32, 0, NBG_CMDF_ADDRESS, "O+C", \
	  "input image address") \
	/* word 11 */ \
	X(ALU_LOAD_PWL_LUT_ADDRESS, "alu_load_pwl_lut_address", 11, 0, 32, 0, NBG_CMDF_ADDRESS, "O+C", \
	  "piecewise-linear table address") \
	/* word 12 */ \
	X(OUT_TILE_SKIP_AT_BORDER, "out_tile_skip_at_border", 12, 0, 1, 0, NBG_CMDF_VALUE, "O", \
	  "skip output tiles at the border") \
	X(OUT_IMAGE_GLOBAL_MEM, "out_image_global_mem", 12, 1, 1, 0, NBG_CMDF_VALUE, "O", \
	  "output image in global memory") \
	X(OUT_LOOP_1_RESET, "out_loop_1_reset", 12, 2, 1, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 1 reset") \
	X(OUT_LOOP_2_RESET, "out_loop_2_reset", 12, 3, 1, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 2 reset") \
	X(OUT_LOOP_3_RESET, "out_loop_3_reset", 12, 4, 1, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 3 reset") \
	X(OUT_BRICK_MODE, "out_brick_mode", 12, 5, 1, 0, NBG_CMDF_VALUE, "O", \
	  "output brick mode") \
	X(ALU_Z_FILTER_MODE, "alu_z_filter_mode", 12, 6, 1, 0, NBG_CMDF_VALUE, "O", \
	  "z filter mode") \
	X(IN_WINDOW_Z_START_OVERFETCH, "in_window_z_start_overfetch", 12, 8, 2, 0, NBG_CMDF_VALUE, "O", \
	  "input window z start overfetch") \
	X(IN_WINDOW_Z_END_OVERFETCH, "in_window_z_end_overfetch", 12, 11, 2, 0, NBG_CMDF_VALUE, "O", \
	  "input window z end overfetch") \
	X(ALU_SQUARE_PRESHIFT, "alu_square_preshift", 12, 14, 4, 0, NBG_CMDF_VALUE, "O", \
	  "square pre-shift") \
	X(IN_IMAGE_DATA_TYPE, "in_image_data_type", 12, 18, 3, 0, NBG_CMDF_DATA_TYPE, "O+P+C", \
	  "input data type (hardware code)") \
	X(OUT_IMAGE_DATA_TYPE, "out_image_data_type", 12, 21, 3, 0, NBG_CMDF_DATA_TYPE, "O+P+C", \
	  "output data type (hardware code)") \
	X(ALU_PWL_SIGN_SUPPORT, "alu_pwl_sign_support", 12, 28, 1, 0, NBG_CMDF_VALUE, "O", \
	  "piecewise-linear sign support") \
	X(ALU_RELU_ENABLE, "alu_relu_enable", 12, 29, 1, 0, NBG_CMDF_VALUE, "O", \
	  "ReLU on the output") \
	X(NO_FLUSH, "no_flush", 12, 30, 1, 0, NBG_CMDF_VALUE, "O", \
	  "no flush") \
	X(LAST, "last", 12, 31, 1, 0, NBG_CMDF_VALUE, "O", \
	  "last command") \
	/* word 13 */ \
	X(OUT_IMAGE_BASE_ADDRESS, "out_image_base_address", 13, 0, 32, 0, NBG_CMDF_ADDRESS, "O+C", \
	  "output image address") \
	/* word 14 */ \
	X(OUT_LOOP_0_INC, "out_loop_0_inc", 14, 0, 32, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 0 increment") \
	/* word 15 */ \
	X(OUT_LOOP_1_INC, "out_loop_1_inc", 15, 0, 32, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 1 increment") \
	/* word 16 */ \
	X(OUT_LOOP_0_COUNT, "out_loop_0_count", 16, 0, 16, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 0 count") \
	X(OUT_LOOP_1_COUNT, "out_loop_1_count", 16, 16, 16, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 1 count") \
	/* word 17 */ \
	X(OUT_LOOP_2_INC, "out_loop_2_inc", 17, 0, 32, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 2 increment") \
	/* word 18 */ \
	X(OUT_LOOP_3_INC, "out_loop_3_inc", 18, 0, 32, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 3 increment") \
	/* word 19 */ \
	X(OUT_LOOP_2_COUNT, "out_loop_2_count", 19, 0, 16, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 2 count") \
	X(OUT_LOOP_3_COUNT, "out_loop_3_count", 19, 16, 16, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 3 count") \
	/* word 20 */ \
	X(OUT_LOOP_4_INC, "out_loop_4_inc", 20, 0, 32, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 4 increment") \
	/* word 21 */ \
	X(OUT_LOOP_5_INC, "out_loop_5_inc", 21, 0, 32, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 5 increment") \
	/* word 22 */ \
	X(OUT_LOOP_4_COUNT, "out_loop_4_count", 22, 0, 16, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 4 count") \
	X(OUT_LOOP_5_COUNT, "out_loop_5_count", 22, 16, 16, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 5 count") \
	/* word 23 */ \
	X(OUT_LOOP_6_INC, "out_loop_6_inc", 23, 0, 32, 0, NBG_CMDF_VALUE, "O", \
	  "output loop 6 increment") \
	/* word 24 */ \
	X(ALU_FILTER_PWL_SWAP, "alu_filter_pwl_swap", 24, 0, 1, 0, NBG_CMDF_VALUE, "O", \
	  "filter / piecewise-linear swap") \
	X(FLAT_ROUNDING_MODE, "flat_rounding_mode", 24, 1, 2, 0, NBG_CMDF_VALUE, "O", \
	  "flat rounding mode") \
	X(INTEGER_ROUNDING_MODE, "integer_rounding_mode", 24, 3, 2, 0, NBG_CMDF_VALUE, "O", \
	  "integer rounding mode") \
	X(ALU_INPUT_PRESHIFT, "alu_input_preshift", 24, 5, 5, 0, NBG_CMDF_VALUE, "O", \
	  "input pre-shift") \
	X(ALU_OUTPUT_POSTSHIFT, "alu_output_postshift", 24, 10, 5, 0, NBG_CMDF_VALUE, "O", \
	  "output post-shift, bits 0-4") \
	X(ALU_REORDER_BITS_USED, "alu_reorder_bits_used", 24, 15, 4, 0, NBG_CMDF_VALUE, "O", \
	  "reorder bits used") \
	X(ALU_REORDER_LOOP_2_MODE, "alu_reorder_loop_2_mode", 24, 19, 1, 0, NBG_CMDF_VALUE, "O", \
	  "reorder loop 2 mode") \
	X(IN_IMAGE_BORDER_MODE, "in_image_border_mode", 24, 24, 2, 0, NBG_CMDF_VALUE, "O", \
	  "input border mode") \
	X(ALU_OUTPUT_POSTSHIFT_5_6, "alu_output_postshift_5_6", 24, 26, 2, 0, NBG_CMDF_VALUE, "O", \
	  "output post-shift, bits 5-6") \
	/* word 25 */ \
	X(IN_IMAGE_CIRCULAR_BUF_SIZE, "in_image_circular_buf_size", 25, 0, 32, 6, NBG_CMDF_VALUE, "O", \
	  "input circular buffer size >> 6") \
	/* word 26 */ \
	X(IN_IMAGE_CIRCULAR_BUF_END_ADDRESS_PLUS_1, "in_image_circular_buf_end_address_plus_1", 26, 0, 32, 6, NBG_CMDF_ADDRESS, "O+C", \
	  "input circular buffer end + 1, >> 6") \
	/* word 27 */ \
	X(OUT_IMAGE_CIRCULAR_BUF_SIZE, "out_image_circular_buf_size", 27, 0, 32, 6, NBG_CMDF_VALUE, "O", \
	  "output circular buffer size >> 6") \
	/* word 28 */ \
	X(OUT_IMAGE_CIRCULAR_BUF_END_ADDRESS_PLUS_1, "out_image_circular_buf_end_address_plus_1", 28, 0, 32, 6, NBG_CMDF_ADDRESS, "O+C", \
	  "output circular buffer end + 1, >> 6") \
	/* word 29 */ \
	X(IN_IMAGE_BORDER_CONST, "in_image_border_const", 29, 0, 16, 0, NBG_CMDF_VALUE, "O", \
	  "input border constant") \
	X(COEF_ZP, "coef_zp", 29, 16, 8, 0, NBG_CMDF_VALUE, "O", \
	  "coefficient zero point") \
	X(IN_ZP, "in_zp", 29, 24, 8, 0, NBG_CMDF_VALUE, "O", \
	  "input zero point") \
	/* word 30 */ \
	X(OUT_ZP, "out_zp", 30, 0, 8, 0, NBG_CMDF_VALUE, "O", \
	  "output zero point") \
	X(ALU_OUTPUT_POST_MULTIPLIER, "alu_output_post_multiplier", 30, 8, 15, 0, NBG_CMDF_VALUE, "O", \
	  "output post-multiplier") \
	/* end */

#endif
