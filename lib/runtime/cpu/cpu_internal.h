/*
 * cpu_internal.h - the CPU backend's plan (what each operation does, with
 * the command fields it reads) shared by cpu_plan.c and cpu_exec.c.  Never
 * installed.
 */
#ifndef NBG_CPU_INTERNAL_H
#define NBG_CPU_INTERNAL_H

#include "nbg/commands.h"
#include "nbg/cpu.h"
#include "analysis/graph_struct.h"
#include "common/model.h"
#include "nbg/weights.h"

/* One buffer of the machine: a source type and, for INPUT / OUTPUT, the
 * record index. */
typedef struct cpu_region {
	uint32_t source_type;
	int32_t index;
	uint64_t size;
} cpu_region;

/* An executable NN convolution, everything read from its command and
 * kernel stream. */
typedef struct cpu_conv {
	int depthwise;
	uint32_t in_x, in_y, in_z;      /* the input image (z: the kernel's, or out z) */
	uint32_t k, out_x, out_y, out_z; /* kernel size; conv output before pooling */
	int32_t x_off, y_off;           /* input offset of output (0,0): signed 4 bits */
	uint32_t in_zp;                 /* in_image_border_const: zero point and border */
	uint32_t out_zp;
	uint32_t w_zp;                  /* coef_zero_point */
	uint32_t mantissa, exponent;    /* the requantization scale as a float32's fields */
	int relu;
	uint32_t pooling;               /* 0 none, 1 max 2x2, 3 first pixel 2x2 */
	uint32_t pool_x, pool_y;        /* the written image (after pooling) */
	size_t in_region, out_region;   /* into the plan's regions */
	uint64_t in_base, in_row, in_slice;
	uint64_t out_base, out_row, out_slice;
	const uint8_t *codes;           /* [out][z][k][k] */
	const int32_t *bias;            /* corrected: sum((w - zp)(x - in_zp)) + bias */
} cpu_conv;

struct nbg_cpu_plan {
	nbg_model *m;
	nbg_graph *g;
	nbg_commands *c;
	nbg_weights *w;
	size_t count;
	nbg_cpu_step *steps;
	cpu_conv *convs;                /* one per step (used when executed) */
	size_t region_count;
	cpu_region regions[5 + 2 * 64];
};

/* The requantization: acc times the float32 scale whose mantissa field and
 * exponent field the command holds, rounded, plus the zero point, ReLU,
 * saturated to uint8 (cpu_exec.c; doc/cpu.md names each rule's evidence). */
__attribute__((visibility("hidden"))) uint8_t nbg_cpu_requant(int64_t acc, uint32_t mantissa,
							       uint32_t exponent, uint32_t out_zp,
							       int relu);
/* Executes one planned convolution on the machine's buffers; -1 when out
 * of memory (nothing written). */
__attribute__((visibility("hidden"))) int nbg_cpu_conv_run(const cpu_conv *cv, uint8_t *const *buf);

#endif
