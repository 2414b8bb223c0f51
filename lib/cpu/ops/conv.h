/*
 * conv.h - an NN convolution as the plan holds it (ops/conv.c plans and
 * runs it; ops/add.c plans a fused addition; ops/shdw.c reads the
 * convolutions before it).  Never installed.
 */
#ifndef NBG_CPU_OPS_CONV_H
#define NBG_CPU_OPS_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "cpu/hidden.h"
#include "cpu/quant.h"
#include "nbg/commands.h"
#include "nbg/cpu.h"

/* An executable NN convolution, everything read from its command and
 * kernel stream. */
typedef struct cpu_conv {
	int depthwise;
	int sgn;                        /* int8 data: input, output and kernel codes in two's complement */
	uint32_t in_x, in_y, in_z;      /* the input image (z: the kernel's, or out z) */
	uint32_t k, out_x, out_y, out_z; /* kernel width; conv output before pooling */
	uint32_t kh;                    /* kernel height: k, but for a kernel one value wide
					 * (ky x 1 or 1 x kx), which takes the 64-bit path */
	int32_t x_off, y_off;           /* input offset of output (0,0): signed 4 bits */
	uint32_t in_zp;                 /* in_image_border_const: zero point and border */
	uint32_t out_zp;
	uint32_t w_zp;                  /* coef_zero_point */
	uint32_t mantissa, exponent;    /* the requantization scale as a float32's fields */
	int relu;
	int even;                       /* rounding_mode: 0 half away from zero, 1 half to even (quant.h) */
	uint32_t pooling;               /* 0 none, 1 max 2x2, 3 first pixel 2x2 */
	uint32_t pool_x, pool_y;        /* the written image (after pooling) */
	size_t in_region, out_region;   /* into the plan's regions */
	uint64_t in_base, in_row, in_slice;
	uint64_t in_xstep;              /* bytes between input pixels: 1, or in_z (interleaved) */
	uint64_t out_base, out_row, out_slice;
	/* circular buffers [lo, lo + size) an address at or past lo wraps into
	 * (lo + (address - lo) mod size); size 0: none (ops/conv.c) */
	uint64_t in_ring_lo, in_ring_size, out_ring_lo, out_ring_size;
	const uint8_t *codes;           /* [out][z][kh][k] */
	const int32_t *bias;            /* corrected: sum((w - zp)(x - in_zp)) + bias */
	int acc32;                      /* the plan proved every sum fits int32 (ops/conv.c) */
	cpu_add add;                    /* a fused addition (add.on), target 0xe8 */
	/* how the 32-bit sums are computed (ops/conv_fast.h): on `threads`
	 * threads (0, 1: the caller's), on `path` (NULL: the process's choice),
	 * or, with `portable`, by the kernels below alone */
	uint32_t threads;
	int portable;
	const struct cpu_conv_path *path;
	/* its weights as the plan laid them out for pk_path (the layout pk_from
	 * takes for them: ops/conv_fast.c), or NULL */
	const struct cpu_conv_path *pk_from, *pk_path;
	const void *pk_w;
} cpu_conv;

/* The fused addition's planner (ops/add.c): 1 with cv->add set, or 0 with
 * the step refused. */
CPU_HIDDEN int nbg_cpu_plan_add(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_conv *cv, const nbg_cmd_op *op);
/* The second image of a fused addition whose address command word `word`
 * holds (value): its reference into *r and its region, or -1 with the
 * step refused (ops/add.c; also ops/nn16.c). */
CPU_HIDDEN long nbg_cpu_add_image_at(nbg_cpu_plan *p, nbg_cpu_step *s, unsigned word, uint32_t value,
				     nbg_cmd_ref *r);
/* The second image of a 16-bit addition (ops/add.c); grouped (NULL: never
 * grouped) set when it is stored in groups of 16 channels
 * (nbg_cpu_nn16_grouped: a->slice the groups' stride, a->row 16 rows). */
CPU_HIDDEN int nbg_cpu_add_second16(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_add *a, uint32_t x, uint32_t y, uint32_t z,
				    const uint32_t *w, unsigned at, unsigned strides, const char *type, int *grouped,
				    nbg_cmd_ref *r);
/* A fused addition's scales and bounds (ops/add.c; also the int16
 * addition of ops/nn16.c): the convolution's scale (mantissa, exponent),
 * v[0] the second image's scale and v[1], v[2] the upper and lower bounds
 * of the convolution's term as float32 bits, held as integers in units of
 * 2^-frac in *a; the convolution's shift at most conv_max and the second
 * image's at most b_max (what keeps every term of the caller's sums below
 * 2^126).  0 with the step refused fused-add-unsupported, naming `words`. */
CPU_HIDDEN int nbg_cpu_add_fixed(nbg_cpu_step *s, cpu_add *a, uint32_t mantissa, uint32_t exponent,
				 const uint32_t *v, uint32_t conv_max, uint32_t b_max, const char *words);

/* A byte of the convolution's data (input pixel or kernel code) as its
 * value: uint8, or int8 (two's complement) for an int8 convolution. */
static inline int32_t nbg_cpu_conv_val(const cpu_conv *cv, uint8_t b)
{
	return cv->sgn ? (int32_t)(int8_t)b : (int32_t)b;
}

/* Executes one planned convolution on the machine's buffers; -1 when out
 * of memory (nothing written). */
CPU_HIDDEN int nbg_cpu_conv_run(const cpu_conv *cv, uint8_t *const *buf);
/* Whether the 32-bit kernels may run the convolution: every channel's
 * |bias| + 255 x sum |w - coef_zero_point| fits int32 and the scratch
 * images stay below a bound. */
CPU_HIDDEN int nbg_cpu_conv_fits_int32(const cpu_conv *cv);

/*
 * The 32-bit kernels' geometry (ops/conv.c runs them): the input, minus its
 * zero point, is copied into int16 planes padded with the border's 0 terms,
 * each row wide = out_x + k - 1, so output (oy, ox) is index oy * wide + ox
 * of a "wide" output whose last k - 1 columns are dropped; the wide output
 * is cut into blocks of CPU_BLK positions and CPU_GRP output channels
 * accumulate at once.
 */
#define CPU_BLK 64
#define CPU_GRP 4
typedef struct cpu_conv_geom {
	uint64_t wide, blocks, plane, taps, groups;
} cpu_conv_geom;

static inline cpu_conv_geom nbg_cpu_conv_geometry(const cpu_conv *cv)
{
	cpu_conv_geom g;
	g.wide = (uint64_t)cv->out_x + cv->k - 1;
	g.blocks = ((uint64_t)cv->out_y * g.wide + CPU_BLK - 1) / CPU_BLK;
	/* the last block's last position plus the largest tap shift */
	g.plane = g.blocks * CPU_BLK + (uint64_t)(cv->k - 1) * g.wide + cv->k - 1;
	g.taps = (uint64_t)(cv->depthwise ? 1 : cv->in_z) * cv->k * cv->k;
	g.groups = ((uint64_t)cv->out_z + CPU_GRP - 1) / CPU_GRP;
	return g;
}

#endif
