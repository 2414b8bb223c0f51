/*
 * nn16.h - an NN-engine operation on int16 data (dynamic fixed point, the
 * A733 files of target 0x1000003b) as the plan holds it: a convolution or
 * depthwise convolution (with 2x2 max pooling, a stride, ReLU, or a fused
 * addition), a max pooling with no kernel stream, and the NT transpose of
 * a 2-D image of any element size (ops/nn16.c plans and runs them;
 * doc/cpu-backend.md, "int16 data").  Never installed.
 */
#ifndef NBG_CPU_OPS_NN16_H
#define NBG_CPU_OPS_NN16_H

#include <stddef.h>
#include <stdint.h>

#include "cpu/hidden.h"
#include "cpu/quant.h"

/* What a cpu_nn16 computes. */
enum cpu_nn16_kind { CPU_NN16_CONV = 1, CPU_NN16_MAXPOOL, CPU_NN16_TRANSPOSE,
		     /* fp16 data (ops/nnf16.c): 2x2 max pooling, an SP addition (then ReLU),
		      * an NN_LUT ReLU, a PReLU (a 1x1 depthwise command with f32-pairs kernels),
		      * an NN_LUT table interpolated, an SP operation scaling (negating) its
		      * input (mantissa, exponent: the scale's float32 fields, exponent bit 8
		      * the sign), the product with a second image (add: its image), an NN_LUT
		      * sigmoid executed as the function */
		     CPU_NN16_F16_MAXPOOL, CPU_NN16_F16_ADD, CPU_NN16_F16_RELU, CPU_NN16_F16_PRELU,
		     CPU_NN16_F16_LUT, CPU_NN16_F16_SCALE, CPU_NN16_F16_MUL,
		     CPU_NN16_F16_SIGMOID };

typedef struct cpu_nn16 {
	int kind;                       /* enum cpu_nn16_kind */
	int depthwise, relu;
	int even;                       /* rounding_mode of an int16 output: 0 half away from zero, 1 half to even */
	uint32_t in_x, in_y, in_z;      /* the input image (z: the kernel's, or out z) */
	uint32_t k, out_x, out_y, out_z; /* kernel size; the output before pooling */
	int32_t x_off, y_off;           /* input offset of output (0, 0): signed 4 bits */
	uint32_t mantissa, exponent;    /* the scale as a float32's fields */
	uint32_t pooling;               /* 0 none, 1 max 2x2 stride 2, 3 first pixel of 2x2 (a stride) */
	uint32_t pool_x, pool_y;        /* the written image */
	size_t in_region, out_region;
	uint64_t in_base, in_row, in_slice, in_xstep; /* bytes; xstep: between pixels of a row */
	uint64_t out_base, out_row, out_slice, out_xstep;
	/* an image stored in groups of 16 channels (nbg_cpu_nn16_grouped): its
	 * slice the groups' stride, channel c at (c / 16) x slice + (c % 16) x 2,
	 * its row 16 rows of the command's, its pixels 32 bytes apart */
	int in_grouped, out_grouped, add_grouped;
	uint64_t add_xstep;             /* the second image's pixel step */
	uint64_t in_ring_lo, in_ring_size, out_ring_lo, out_ring_size;
	uint32_t esize;                 /* CPU_NN16_TRANSPOSE: bytes per element */
	const uint8_t *codes;           /* int16 little-endian [out][z][k][k] */
	const int64_t *bias;            /* 48-bit, in the sum's units */
	const float *slope;             /* CPU_NN16_F16_PRELU: the negative slope per channel (float16 values) */
	const uint8_t *lut;             /* CPU_NN16_F16_LUT: the NN_LUT table's 1,024 words; lut_sign: its tail's bit 28;
					 * CPU_NN16_CONV: the table after its kernels (1,024 float32), read at the sum */
	int lut_sign;
	const char *lut_name;           /* the function the table holds (a static string) */
	double lut_p;                   /* CPU_NN16_F16_SIGMOID: 1 / (1 + e^(-p x)) */
	/* the int16 blendshapes file: int16 codes in (out) where fp16 values
	 * would be; a table (CPU_NN16_F16_LUT) or scale (CPU_NN16_F16_SCALE)
	 * only: the value the code, the result rounded half away from zero
	 * and saturated */
	int in_i16, out_i16;
	cpu_add add;                    /* a fused addition (add.on): zero point 0, ops/add.c's fixed point */
} cpu_nn16;

struct nbg_cpu_plan;
struct nbg_cpu_step;
struct nbg_cmd_op;
struct nbg_cmd;
/* The input (x_bytes a row, rows, slices) and written image of an NN-engine
 * operation inside their memories and circular buffers (common.c); 0 with
 * the step refused. */
/* Whether an int16 image of `rows` rows of `row` bytes whose command gives
 * the slice stride `field` is stored in groups of 16 channels: the field
 * the power of two just above its dense plane (common.c). */
CPU_HIDDEN int nbg_cpu_nn16_grouped(uint64_t field, uint64_t row, uint64_t rows);
/* The byte offset of channel z in an image of slice stride `slice`,
 * grouped or not. */
static inline uint64_t nbg_cpu_nn16_chan(uint64_t slice, int grouped, uint32_t z)
{
	return grouped ? (uint64_t)(z / 16) * slice + (uint64_t)(z % 16) * 2 : (uint64_t)z * slice;
}
CPU_HIDDEN int nbg_cpu_nn16_addressing(struct nbg_cpu_plan *p, struct nbg_cpu_step *s, cpu_nn16 *n,
				       const struct nbg_cmd_op *op, const struct nbg_cmd *cmd, uint64_t x_bytes,
				       uint32_t rows, uint32_t slices, uint64_t out_x_bytes, uint32_t out_rows,
				       uint32_t out_slices);
/* The fp16 NN-engine operations of the A733 files (ops/nnf16.c): whether
 * the step is one (target 0x1000003b, fp16 input and output, type NN, SP
 * or NN_LUT; or an SP or NN_LUT operation between fp16 and int16 data,
 * one side int16); its plan (layer: its enum cpu_layer); its run. */
CPU_HIDDEN int nbg_cpu_nnf16_is(const struct nbg_cpu_plan *p, const struct nbg_cmd_op *op, uint32_t type);
CPU_HIDDEN void nbg_cpu_nnf16_plan(struct nbg_cpu_plan *p, struct nbg_cpu_step *s, cpu_nn16 *n,
				   const struct nbg_cmd_op *op, const struct nbg_cmd *cmd, uint32_t type, int cmd_kind,
				   int layer);
CPU_HIDDEN void nbg_cpu_nnf16_run(const cpu_nn16 *n, uint8_t *const *buf);

/* Executes one planned operation on the machine's buffers; -1 when out of
 * memory (nothing written). */
CPU_HIDDEN int nbg_cpu_nn16_run(const cpu_nn16 *n, uint8_t *const *buf);
/* The per-pixel sum of an addition fused to an int16 convolution
 * (nbg_cpu_add_sum, rounded per `even`: quant.h), saturated to int16;
 * relu: NBG_CPU_NN16_RELU_SUM the sum at least 0, NBG_CPU_NN16_RELU_TERM
 * the convolution's term at least 0 before the addition. */
#define NBG_CPU_NN16_RELU_SUM 1
#define NBG_CPU_NN16_RELU_TERM 2
CPU_HIDDEN int16_t nbg_cpu_nn16_add(const cpu_add *a, int64_t acc, int16_t b, int relu, int even);

#endif
