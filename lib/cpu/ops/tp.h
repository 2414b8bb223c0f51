/*
 * tp.h - TP operations as the plan holds them: the TP walk (ops/tp.c, a
 * copy, a max pool, a lookup-table activation with its table from
 * ops/lut.c), TP fully connected layers (ops/tpfc.c), and the command
 * fields they share.  Never installed.
 */
#ifndef NBG_CPU_OPS_TP_H
#define NBG_CPU_OPS_TP_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/graph/commands_lib.h"
#include "cpu/hidden.h"
#include "nbg/cpu.h"

/* An executable TP operation (ops/tp.c): a walk over the input window in
 * tiles, one element per pixel (a copy) or per pooling window (max), each
 * element written where the output loop counters point. */
typedef struct cpu_tp {
	int pool;                       /* 0: copy; 1: max over a pw x ph window */
	uint8_t flip;                   /* 0x80 for int8 data (compared by value: the byte ^ 0x80), else 0 */
	size_t in_region, out_region;   /* into the plan's regions */
	uint64_t in_base, out_base;     /* offsets in them */
	uint32_t x_size, y_size, z_size;
	uint64_t stride, slice;
	int32_t wx0, wy0, wx1, wy1;     /* the input window, inclusive */
	uint32_t tile_x, tile_y, tile_xinc, tile_yinc;
	uint32_t pw, ph, ps;            /* pooling window and stride (1, 1, 1 for a copy) */
	uint32_t count[6];              /* out_loop_N_count (0: 65536) */
	uint64_t inc[7];                /* out_loop_N_inc */
	int reset1, reset2, reset3;     /* out_loop_N_reset */
	uint64_t work;                  /* the run's steps: the walk's loop turns and the pixels read */
	uint8_t border;                 /* value of a pixel outside the image (copy) */
	int overlap;                    /* input and output ranges share bytes: read a copy */
	uint64_t in_lo, in_hi;          /* the input bytes read, inclusive, from in_base */
	uint64_t in_ring_lo, in_ring_size, out_ring_lo, out_ring_size; /* circular buffers (size 0: none) */
	int lut;                        /* a table activation: each copied pixel v is written as map[v] */
	int scaled;                     /* a copy with a scale: each pixel v written as map[v] (ops/tp.c) */
	uint8_t map[256];               /* ops/lut.c */
	/* a copy or a table into IEEE half elements (2 bytes, the counter
	 * counting elements): each pixel v is written as half[v] (a copy:
	 * tp.c; a table: ops/lut.c) */
	int f16_out;
	uint16_t half[256];
	uint32_t threads;               /* the slices cut across this many threads (1: the caller's) */
	uint64_t slice_step;            /* with threads > 1: the counter's offset at each slice's start,
					 * a multiple of it (its digits all 0) */
} cpu_tp;

/* A TP fully connected layer: coefficients read through
 * alu_load_pwl_lut_address (ops/tpfc.c).  out[o] = requant(bias[o] +
 * sum over i of (codes[o][i] - w_zp) x (in[i] - in_zp)). */
typedef struct cpu_tpfc {
	uint32_t nin, nout;
	uint32_t w_zp, in_zp, out_zp;
	uint32_t mantissa, exponent;    /* the scale as a float32's fields */
	size_t in_region, out_region;
	uint64_t in_base, in_step;      /* input i at in_base + i x in_step */
	uint64_t out_base;              /* output o at out_base + o */
	const uint8_t *codes;           /* [nout][nin] */
	const int32_t *bias;
	int s8;                         /* int8 input, weights and output (zero points 0) */
	int even;                       /* flat_rounding_mode: 0 half away from zero, 1 half to even (quant.h) */
} cpu_tpfc;

/* A TP command field and the one value an executed rule was established
 * with.  nbg_cpu_tp_fields_ok (common.c): 1 when every field of the table
 * holds its value; else 0 with the step refused `id`: "<what> with FIELD
 * V: executed is FIELD W, <basis>", FIELD the field table's name. */
typedef struct {
	enum nbg_tp_fid f;
	uint32_t want;
} cpu_tp_field;
CPU_HIDDEN int nbg_cpu_tp_fields_ok(nbg_cpu_step *s, const nbg_cmd *cmd, const cpu_tp_field *t, size_t n,
				    const char *id, const char *what, const char *basis);

/* The output elements a planned TP walk writes (doc/debugging.md):
 * a malloc'd map of *n bytes, 1 at every counter offset (in elements from
 * out_base) the walk writes, 0 elsewhere; NULL when out of memory. */
CPU_HIDDEN uint8_t *nbg_cpu_tp_written(const cpu_tp *t, uint64_t *n);

/* A TP lookup-table activation's value for each input code into map
 * (ops/lut.c): codes and values uint8, or int8 (in_image_data_type 2,
 * two's complement bytes); with half (fp16 output) the IEEE half of each
 * code's value there instead, map untouched; 0 with the step refused. */
CPU_HIDDEN int nbg_cpu_plan_lut(const nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd *cmd, uint8_t map[256],
				uint16_t *half);

/* A TP command's output shift s (alu_output_postshift | _5_6 << 5), a
 * signed 7-bit number (doc/cpu-backend.md, "Lookup-table activations":
 * 127 is -1): the lookup tables and fully connected layers scale their
 * results by 2^-s. */
static inline int nbg_cpu_tp_post_shift(const nbg_cmd *cmd)
{
	int sh = (int)(nbg_cmd_tp(cmd, NBG_TPF_ALU_OUTPUT_POSTSHIFT) |
		       nbg_cmd_tp(cmd, NBG_TPF_ALU_OUTPUT_POSTSHIFT_5_6) << 5);
	return sh >= 64 ? sh - 128 : sh;
}

/* A TP command's output scale: (1 + alu_output_post_multiplier / 2^15) x
 * 2^-s, s nbg_cpu_tp_post_shift (exact in a double). */
static inline double nbg_cpu_tp_multiplier(const nbg_cmd *cmd)
{
	return ldexp(32768.0 + nbg_cmd_tp(cmd, NBG_TPF_ALU_OUTPUT_POST_MULTIPLIER), -15 - nbg_cpu_tp_post_shift(cmd));
}

#endif
