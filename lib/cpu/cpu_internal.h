/*
 * cpu_internal.h - the CPU backend's plan (what each operation does, with
 * the command fields it reads) shared by plan.c and run.c.  Never
 * installed.
 */
#ifndef NBG_CPU_INTERNAL_H
#define NBG_CPU_INTERNAL_H

#include <limits.h>
#include <math.h>
#include <string.h>

#include "nbg/commands.h"
#include "nbg/cpu.h"
#include "nbg/graph.h"
#include "common/model.h"
#include "nbg/weights.h"
#include "analysis/graph/commands_lib.h"
#include "analysis/graph/uniforms.h"
#include "cpu/wide.h"

/* One buffer of the machine: a source type and, for INPUT / OUTPUT, the
 * record index. */
typedef struct cpu_region {
	uint32_t source_type;
	int32_t index;
	uint64_t size;
} cpu_region;

/*
 * The addition an NN command of target 0xe8 fuses to its convolution
 * (doc/cpu-backend.md, "Fused additions"): per written pixel, the
 * convolution's sum times its scale, clamped to [lo, hi], plus (b - zp) x
 * scale_b, where b is the second image's byte at the same position, then
 * rounded and offset by the output zero point (nbg_cpu_requant_add).  The
 * plan holds every term as an integer in units of 2^-frac: a float32 m x
 * 2^(e - 150) as m << (e - 150 + frac).
 */
typedef struct cpu_add {
	int on;
	size_t region;                  /* the second image: pool_x x pool_y x out_z */
	uint64_t base, row, slice;
	uint32_t zp;                    /* its zero point */
	uint32_t frac;                  /* fraction bits of the fixed point, 1..120 */
	uint32_t conv_m, conv_shift;    /* the convolution's scale */
	int32_t b_m;                    /* the second image's scale (signed) */
	uint32_t b_shift;
	int has_lo, has_hi;             /* 0: -inf / +inf, no bound */
	cpu_wide lo, hi;
} cpu_add;

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
	uint64_t in_xstep;              /* bytes between input pixels: 1, or in_z (interleaved) */
	uint64_t out_base, out_row, out_slice;
	/* circular buffers [lo, lo + size) an address at or past lo wraps into
	 * (lo + (address - lo) mod size); size 0: none (plan.c) */
	uint64_t in_ring_lo, in_ring_size, out_ring_lo, out_ring_size;
	const uint8_t *codes;           /* [out][z][k][k] */
	const int32_t *bias;            /* corrected: sum((w - zp)(x - in_zp)) + bias */
	int acc32;                      /* the plan proved every sum fits int32 (run.c) */
	cpu_add add;                    /* a fused addition (add.on), target 0xe8 */
} cpu_conv;

/* An executable TP operation (ops/tp.c): a walk over the input window in
 * tiles, one element per pixel (a copy) or per pooling window (max), each
 * element written where the output loop counters point. */
typedef struct cpu_tp {
	int pool;                       /* 0: copy; 1: max over a pw x ph window */
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
	uint8_t map[256];               /* ops/lut.c */
	/* a copy into IEEE half elements (2 bytes, the counter counting
	 * elements): each pixel v is written as half((v - f16_zp) x f16_scale),
	 * the product a float32 rounded to the nearest half, ties to even */
	int f16_out;
	uint32_t f16_zp;
	float f16_scale;
} cpu_tp;

/* A TP fully connected layer: coefficients read through
 * alu_load_pwl_lut_address (ops/tpfc.c).  out[o] = requant(bias[o] +
 * sum over i of (codes[o][i] - w_zp) x in[i]). */
typedef struct cpu_tpfc {
	uint32_t nin, nout;
	uint32_t w_zp, out_zp;
	uint32_t mantissa, exponent;    /* the scale as a float32's fields */
	size_t in_region, out_region;
	uint64_t in_base, in_step;      /* input i at in_base + i x in_step */
	uint64_t out_base;              /* output o at out_base + o */
	const uint8_t *codes;           /* [nout][nin] */
	const int32_t *bias;
} cpu_tpfc;

/* An SH or SW operation executed by reference semantics (ops/ref.c):
 * a softmax over width uint8 values (row 0 of the input image) into width
 * fp16 values, exp2((x - max) * scale_log2e) normalised, over the whole row
 * or over each run of group values (group > 0: the pair softmax). */
enum cpu_ref_kind { CPU_REF_NONE = 0, CPU_REF_SOFTMAX, CPU_REF_POOL, CPU_REF_DWCONV, CPU_REF_ADD,
		    CPU_REF_UPSAMPLE, CPU_REF_MAXPOOL };
typedef struct cpu_ref {
	int kind;                       /* enum cpu_ref_kind */
	uint32_t width;
	uint32_t group;                 /* CPU_REF_SOFTMAX: values per softmax; 0: the whole width */
	double scale_log2e;             /* the input scale times log2(e): the SH softmax's float32
					 * uniform, the SP softmax's scale times log2(e) in double */
	/* CPU_REF_POOL: rows rows of width uint8 each averaged into one uint8,
	 * ((sum * pool_a - pool_b) * pool_c + pool_d) rounded (ops/ref.c). */
	uint32_t rows, in_stride, out_stride;
	float pool_a, pool_b, pool_c, pool_d;
	/* CPU_REF_DWCONV (ops/shdw.c): per channel c < rows, the kx x ky input
	 * window at in_base + c x in_slice (rows in_stride apart) times the row
	 * of codes at codes + c x w_row, requantized with the float32 fields
	 * mantissa and exponent, written at out_base + c x out_slice. */
	uint32_t kx, ky, mantissa, exponent;
	uint64_t in_slice, w_row, out_slice;
	/* CPU_REF_MAXPOOL (ops/shmax.c): kx channels of rows x width pixels
	 * (in_stride, in_slice apart), each the 5x5 max around it written at
	 * out_stride, out_slice. */
	const uint8_t *codes;           /* into the model's bytes (an LCDT entry) */
	size_t in_region, out_region;   /* into the plan's regions */
	uint64_t in_base, out_base;
	/* CPU_REF_ADD, CPU_REF_UPSAMPLE (ops/shelt.c): images x x y x z of
	 * uint8, image i at region[i] + base[i] with its row and slice strides
	 * (0, 1: the inputs; 2: the output).  ADD: out = round((in0 - zp0) x a
	 * + (in1 - zp1) x b + zpo); UPSAMPLE: out[z][2y + j][2x + i] =
	 * in0[z][y][x], x, y, z the input's.  in1_f16: input 1 holds IEEE half
	 * values (2 bytes each, zp1 0), read as float32. */
	struct {
		uint32_t x, y, z;
		uint64_t row[3], slice[3], base[3];
		size_t region[3];
		float a, b;
		uint32_t zp0, zp1, zpo;
		int in1_f16;
	} elt;
} cpu_ref;

/* Which of an operation's members the run executes. */
enum cpu_op_kind { CPU_OP_NONE = 0, CPU_OP_CONV, CPU_OP_TP, CPU_OP_TPFC, CPU_OP_REF };

typedef struct cpu_op {
	int kind; /* enum cpu_op_kind, set with the step's verdict EXECUTE */
	cpu_conv conv;
	cpu_tp tp;
	cpu_tpfc tpfc;
	cpu_ref ref;
} cpu_op;

struct nbg_cpu_plan {
	nbg_model *m;
	nbg_graph *g;
	nbg_commands *c;
	nbg_weights *w;
	size_t count;
	nbg_cpu_step *steps;
	cpu_op *ops;                    /* one per step (used when executed) */
	unsigned char *read_outside;    /* per operation: its writes are read outside its layer
					 * (ops/spmax.c; NULL until needed) */
	size_t region_count;
	cpu_region regions[5 + 2 * 64];
	char caveat[256];               /* nbg_cpu_plan_caveat; "" when none */
	const nbg_weights_op **wop;     /* per operation: its weights record, NULL when none (the
					 * weights indexed once, plan.c) */
	nbg_cpu_totals totals;          /* the limits, resolved at the build; the planners' steps as
					 * they are taken (nbg_cpu_plan_spend); the rest added up after */
};

#define CPU_HIDDEN __attribute__((visibility("hidden")))

/* Sums and products of counts from the file, saturating at UINT64_MAX
 * (a figure past every limit). */
static inline uint64_t nbg_cpu_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline uint64_t nbg_cpu_mul_sat(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/*
 * The plan's budget (budget.c, doc/cpu-backend.md "Limits"): the
 * limits with their defaults (nbg_cpu_limits_resolve); a planner's walk
 * whose length the file controls charged before it is taken
 * (nbg_cpu_plan_spend: 1, or 0 with the step refused work-limit, `what`
 * naming the walk); the totals once every step is planned and costed
 * (nbg_cpu_plan_add_up; each step's cost comes from the cost functions
 * beside each run below, plan.c).
 */
CPU_HIDDEN void nbg_cpu_limits_resolve(nbg_cpu_options *lim, const nbg_cpu_options *opts);
CPU_HIDDEN int nbg_cpu_plan_spend(nbg_cpu_plan *p, nbg_cpu_step *s, uint64_t steps, const char *what);
/* The same for a walk the planner can do without (1 and charged, or 0 and
 * nothing charged nor refused). */
CPU_HIDDEN int nbg_cpu_plan_afford(nbg_cpu_plan *p, uint64_t steps);
CPU_HIDDEN void nbg_cpu_plan_add_up(nbg_cpu_plan *p);


/* Shared by the planners (common.c): refuse a step with a reason id and
 * a sentence; the region an address reference lands in (-1 with the step
 * refused); the reference a patch gives a command word (0: none);
 * whether an image x*y*z at base with its strides lies inside a
 * region (*last: its last byte). */
CPU_HIDDEN void nbg_cpu_refuse(nbg_cpu_step *s, const char *id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
CPU_HIDDEN long nbg_cpu_find_region(const nbg_cpu_plan *p, nbg_cpu_step *s, const char *what,
				    const nbg_cmd_ref *r);
CPU_HIDDEN int nbg_cpu_word_ref(const nbg_cpu_plan *p, const nbg_cpu_step *s, unsigned word,
				uint64_t value, nbg_cmd_ref *r);
CPU_HIDDEN int nbg_cpu_image_fits(const nbg_cpu_plan *p, size_t region, uint64_t base, uint64_t x,
				  uint64_t y, uint64_t z, uint64_t row, uint64_t slice, uint64_t *last);
/* A TP command field and the one value an executed rule was established
 * with.  nbg_cpu_tp_fields_ok: 1 when every field of the table holds its
 * value; else 0 with the step refused `id`: "<what> with FIELD V: executed
 * is FIELD W, <basis>". */
typedef struct {
	enum nbg_tp_fid f;
	const char *name;
	uint32_t want;
} cpu_tp_field;
CPU_HIDDEN int nbg_cpu_tp_fields_ok(nbg_cpu_step *s, const nbg_cmd *cmd, const cpu_tp_field *t, size_t n,
				    const char *id, const char *what, const char *basis);

/*
 * Circular buffers (doc/cpu-backend.md, "Row tiles, interleaved input
 * records and circular buffers"): a command's size field (bytes, here
 * already << 6) and its end field, the stored value of command word `word`
 * (the address >> 6 in files before 0x10009, the byte address after),
 * relocated by the operation's patch, give the buffer [end - size, end); an
 * image address at or past its start wraps to start + (address - start)
 * mod size (nbg_cpu_ring_at; size 0: no buffer).
 *
 * nbg_cpu_ring: the buffer of an image at `base` of `region` (*ring_size 0
 * when size is 0); its end must be relocated into that memory and the image
 * start inside the buffer and the memory, else 0 with the step refused.  A
 * buffer ending past the memory's end gives *ring_size 0 too: an image the
 * caller then finds inside the memory never reaches the buffer's end.
 * nbg_cpu_image_in: an image x*y*z at base with its strides lies inside its
 * buffer: without a circular buffer its last byte does; with one, it passes
 * the buffer's end at most once (every corpus ring does; a second lap is not
 * established) and holds at most CPU_MAX_SCRATCH pixels, so a run's copy
 * through it is bounded.  *last (when not NULL): its last byte, unwrapped
 * (base when a size is past those bounds).
 */
CPU_HIDDEN int nbg_cpu_ring(const nbg_cpu_plan *p, nbg_cpu_step *s, const char *what, uint64_t size,
			    unsigned word, uint64_t raw, size_t region, uint64_t base, uint64_t *lo,
			    uint64_t *ring_size);
CPU_HIDDEN int nbg_cpu_image_in(const nbg_cpu_plan *p, size_t region, uint64_t base, uint64_t x, uint64_t y,
				uint64_t z, uint64_t row, uint64_t slice, uint64_t ring_lo, uint64_t ring_size,
				uint64_t *last);
/* An NN command's field by its layout name (0 when the layout has none),
 * and the circular buffer an NN-engine image is read or written through:
 * the size field (64-byte units) and the end field named, nbg_cpu_ring. */
static inline uint32_t nbg_cpu_nn_field(const nbg_cmd *cmd, const char *key)
{
	int i = nbg_command_field_index(NBG_CMD_NN, key);
	return i < 0 ? 0 : cmd->values[i];
}
/* An NN command's post_multiplier fields as one number: bits 0-14 from
 * post_multiplier, _1_to_6 and _7_to_14, bits 15-22 from _15_to_22 (the
 * float32 mantissa of the targets that write 23 bits, doc/cpu-backend.md
 * "The scale"). */
static inline uint32_t nbg_cpu_nn_multiplier(const nbg_cmd *cmd)
{
	return nbg_cpu_nn_field(cmd, "post_multiplier") | nbg_cpu_nn_field(cmd, "post_multiplier_1_to_6") << 1 |
	       nbg_cpu_nn_field(cmd, "post_multiplier_7_to_14") << 7 |
	       nbg_cpu_nn_field(cmd, "post_multiplier_15_to_22") << 15;
}
CPU_HIDDEN int nbg_cpu_nn_ring(const nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd *cmd, const char *what,
			       const char *size_key, const char *end_key, size_t region, uint64_t base,
			       uint64_t *lo, uint64_t *size);
/* A command or uniform word read as the float32 it holds. */
static inline float nbg_cpu_f32_of(uint32_t v)
{
	float f;
	memcpy(&f, &v, sizeof(f));
	return f;
}
static inline uint64_t nbg_cpu_ring_at(uint64_t a, uint64_t lo, uint64_t size)
{
	return size && a >= lo ? lo + (a - lo) % size : a;
}

/* n bytes at addresses a, a + step, ... of buf read into d (write: d
 * written there), through the ring: one division for the first, then
 * contiguous runs up to the ring's end (step 1) or a step and at most one
 * subtraction each (step < size); the same addresses nbg_cpu_ring_at
 * gives. */
static inline void nbg_cpu_ring_read(uint8_t *d, const uint8_t *buf, uint64_t a, uint64_t n, uint64_t step,
				     uint64_t lo, uint64_t size)
{
	if (!size || a < lo || step >= size) {
		for (uint64_t i = 0; i < n; i++)
			d[i] = buf[nbg_cpu_ring_at(a + i * step, lo, size)];
		return;
	}
	uint64_t p = nbg_cpu_ring_at(a, lo, size), end = lo + size;
	if (step == 1) {
		/* runs up to the ring's end */
		while (n) {
			uint64_t k = end - p < n ? end - p : n;
			memcpy(d, buf + p, (size_t)k);
			d += k;
			n -= k;
			p = lo;
		}
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		d[i] = buf[p];
		p += step;
		if (p >= end)
			p -= size;
	}
}

static inline void nbg_cpu_ring_write(uint8_t *buf, const uint8_t *s, uint64_t a, uint64_t n, uint64_t lo,
				      uint64_t size)
{
	if (!size || a < lo) {
		for (uint64_t i = 0; i < n; i++)
			buf[nbg_cpu_ring_at(a + i, lo, size)] = s[i];
		return;
	}
	uint64_t p = nbg_cpu_ring_at(a, lo, size), end = lo + size;
	while (n) {
		uint64_t k = end - p < n ? end - p : n;
		memcpy(buf + p, s, (size_t)k);
		s += k;
		n -= k;
		p = lo;
	}
}

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

/* An SH operation's shader uniforms (analysis/graph/uniforms.h): the words its
 * state buffer (the LOAD_STATE stream its state_id names) loads at 0x36000 +
 * 4 i, i < CPU_UNIFORMS, with where each value lies in the buffer and how
 * often it is loaded.  nbg_cpu_load_uniforms (common.c) reads them (0 with the step refused:
 * no in-bounds buffer of 1 to CPU_MAX_STATE_BYTES bytes, or a cut stream);
 * nbg_cpu_patched_ref gives the patch of the operation that relocates the
 * state word at byte `at` (its offset: the stored value); nbg_cpu_locate_io
 * the input (uniform 0x36000) and output (uniform index ou) image addresses
 * and their regions (0 with the step refused). */
#define CPU_UNIFORMS NBG_SH_UNIFORMS
#define CPU_UNIFORM_BASE NBG_SH_UNIFORM_BASE
#define CPU_MAX_STATE_BYTES NBG_SH_MAX_STATE_BYTES
typedef nbg_sh_uniforms cpu_uniforms; /* analysis/graph/uniforms.h */
CPU_HIDDEN int nbg_cpu_load_uniforms(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const char *what,
				     cpu_uniforms *u);
CPU_HIDDEN int nbg_cpu_patched_ref(const nbg_cpu_plan *p, size_t operation, uint32_t at, uint32_t value,
				   nbg_cmd_ref *r);
CPU_HIDDEN int nbg_cpu_locate_io(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const cpu_uniforms *u,
				 size_t ou, const char *what, nbg_cmd_ref *in, nbg_cmd_ref *out, long *ri,
				 long *ro);

/* The TP planner and run (ops/tp.c): the plan sets s->verdict and, when
 * executed, op->kind = CPU_OP_TP; the run returns -1 when out of memory. */
CPU_HIDDEN void nbg_cpu_plan_tp(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const nbg_cmd_op *cop);
CPU_HIDDEN int nbg_cpu_tp_run(const cpu_tp *t, uint8_t *const *buf);
/* Bytes the run of t copies its input into (0: none). */
CPU_HIDDEN uint64_t nbg_cpu_tp_scratch(const cpu_tp *t);

/* A TP lookup-table activation's value for each input code into map
 * (ops/lut.c); 0 with the step refused. */
CPU_HIDDEN int nbg_cpu_plan_lut(const nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd *cmd, uint8_t map[256]);

/* The TP fully connected planner and run (ops/tpfc.c): returns 0 when the
 * operation is not a fully connected layer (the TP planner goes on), else
 * 1 with the step executed (op->kind = CPU_OP_TPFC) or refused. */
CPU_HIDDEN int nbg_cpu_plan_tpfc(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const nbg_cmd_op *cop);
CPU_HIDDEN int nbg_cpu_tpfc_run(const cpu_tpfc *t, uint8_t *const *buf);

/* The reference-semantics planner and run for SH and SW operations
 * (ops/ref.c), likewise with op->kind = CPU_OP_REF. */
CPU_HIDDEN void nbg_cpu_plan_ref(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation);
/* A Softmax2Layer_SP layer's NN-engine SP operations (ops/spmax.c): the
 * layer's softmax by reference semantics, computed at its last operation. */
CPU_HIDDEN void nbg_cpu_plan_spmax(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation);

CPU_HIDDEN int nbg_cpu_ref_run(const cpu_ref *r, uint8_t *const *buf);
/* Runs the operations [from, to) on a state nbg_cpu_run returned (whose
 * operations below from ran): UNSUPPORTED_OPERATION, before computing
 * anything, when one of them is refused; OUT_OF_MEMORY.  A test program
 * dumps the buffers at several points of one run with it. */
CPU_HIDDEN nbg_code nbg_cpu_run_range(const nbg_cpu_plan *p, nbg_cpu_state *st, size_t from, size_t to,
				      nbg_error *err);
/* A step executed by reference semantics (common.c, shared by the
 * shader planners): op->ref.kind = kind (its other members set by the
 * planner), labelled nbg_cpu_step.reference. */
CPU_HIDDEN void nbg_cpu_ref_executed(nbg_cpu_step *s, cpu_op *op, int kind);
/* The depthwise convolution shader (ops/shdw.c), planned and run through
 * the two above. */
CPU_HIDDEN void nbg_cpu_plan_shdw(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation);
CPU_HIDDEN void nbg_cpu_shdw_run(const cpu_ref *r, uint8_t *const *buf);
/* The TensorAdd and TensorScale shaders (ops/shelt.c), likewise. */
CPU_HIDDEN void nbg_cpu_plan_shadd(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation);
CPU_HIDDEN void nbg_cpu_plan_shscale(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation);
CPU_HIDDEN void nbg_cpu_shelt_run(const cpu_ref *r, uint8_t *const *buf);
/* The max pooling shader (ops/shmax.c): whether a PoolingLayer2's uniforms
 * are in its image format; its plan (the step refused with a shmax-* id
 * when the layout is not the corpus's) and run (-1: out of memory). */
CPU_HIDDEN int nbg_cpu_shmax_is(const cpu_uniforms *u);
CPU_HIDDEN void nbg_cpu_plan_shmax(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation,
				   const cpu_uniforms *u);
CPU_HIDDEN int nbg_cpu_shmax_run(const cpu_ref *r, uint8_t *const *buf);
CPU_HIDDEN void nbg_cpu_shmax_cost(const cpu_ref *r, uint64_t *work, uint64_t *scratch);

/*
 * The requantization, the one place its rules live (a static inline so the
 * convolution's inner loop and the TP fully connected run share it without
 * a call): the scale is the float32 of 23 mantissa bits and a biased
 * exponent that the plan read from the command (plan.c, scale_fields;
 * ops/tpfc.c for TP): acc x (2^23 + mantissa) x 2^(exponent - 150),
 * computed exactly (64 bits, or 128 in wide.h's arithmetic).  Rounding:
 * half away from zero (inferred: rounding_mode 1, no source states the
 * rule).  ReLU clamps at the zero point; the result saturates to 0..255.
 */
static inline uint8_t nbg_cpu_requant(int64_t acc, uint32_t mantissa, uint32_t exponent,
				      uint32_t out_zp, int relu)
{
	int shift = 150 - (int)exponent;
	int64_t q;
	if (acc >= -INT32_MAX && acc <= INT32_MAX && shift > 0 && shift < 63) {
		/* the same arithmetic in 64 bits: |acc| x 2^24 stays below 2^55 */
		int64_t prod = acc * (int64_t)((1u << 23) | (mantissa & 0x7fffffu));
		uint64_t mag = prod < 0 ? (uint64_t)-prod : (uint64_t)prod;
		q = (int64_t)((mag + (1ull << (shift - 1))) >> shift);
		if (prod < 0)
			q = -q;
	} else {
		int neg = acc < 0;
		cpu_wide mag = cpu_wide_mul_u64(neg ? 0 - (uint64_t)acc : (uint64_t)acc,
						(1u << 23) | (mantissa & 0x7fffffu));
		if (shift <= 0) {
			q = cpu_wide_is_zero(mag) ? 0 : INT32_MAX; /* scale >= 1: any non-zero product saturates */
			cpu_wide up = shift > -32 ? cpu_wide_shl(mag, (unsigned)-shift) : mag;
			if (shift > -32 && cpu_wide_eq(cpu_wide_shr(up, (unsigned)-shift), mag) &&
			    cpu_wide_ult(up, cpu_wide_of(INT32_MAX)))
				q = (int64_t)up.lo;
		} else if (shift >= 127) {
			q = 0;
		} else {
			q = (int64_t)cpu_wide_sat_u64(cpu_wide_round_shr(mag, (unsigned)shift), INT32_MAX);
		}
		if (neg)
			q = -q;
	}
	q += out_zp;
	if (relu && q < (int64_t)out_zp)
		q = out_zp;
	return (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
}

/*
 * The requantization of a convolution fused with an addition (target 0xe8,
 * doc/cpu-backend.md "Fused additions"), the one place its rules live:
 * t = clamp(acc x conv scale, lo, hi) + (b - zp) x scale_b, computed exactly
 * in the plan's fixed point (the plan bounds every term below 2^126), then
 * rounded half away from zero (inferred, as nbg_cpu_requant), plus the
 * output zero point, saturated to 0..255.
 */
static inline uint8_t nbg_cpu_requant_add(int64_t acc, const cpu_add *a, uint8_t b, uint32_t out_zp)
{
	cpu_wide t = cpu_wide_shl(cpu_wide_mul_i64(acc, a->conv_m), a->conv_shift);
	if (a->has_hi && cpu_wide_lt(a->hi, t))
		t = a->hi;
	if (a->has_lo && cpu_wide_lt(t, a->lo))
		t = a->lo;
	t = cpu_wide_add(t, cpu_wide_shl(cpu_wide_of(((int32_t)b - (int32_t)a->zp) * (int64_t)a->b_m), a->b_shift));
	int neg;
	cpu_wide mag = cpu_wide_round_shr(cpu_wide_abs(t, &neg), a->frac);
	int64_t q = (int64_t)cpu_wide_sat_u64(mag, 1024);
	q = (neg ? -q : q) + (int64_t)out_zp;
	return (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
}

/* The fused addition's planner (ops/add.c): 1 with cv->add set, or 0 with
 * the step refused. */
CPU_HIDDEN int nbg_cpu_plan_add(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_conv *cv, const nbg_cmd_op *op);

/* Executes one planned convolution on the machine's buffers; -1 when out
 * of memory (nothing written).  Its steps and the bytes it allocates
 * (run.c, beside the run). */
CPU_HIDDEN int nbg_cpu_conv_run(const cpu_conv *cv, uint8_t *const *buf);
CPU_HIDDEN uint64_t nbg_cpu_conv_work(const cpu_conv *cv);
CPU_HIDDEN uint64_t nbg_cpu_conv_scratch(const cpu_conv *cv);
/* Whether the 32-bit kernels may run the convolution: every channel's
 * |bias| + 255 x sum |w - coef_zero_point| fits int32 and the scratch
 * images stay below a bound (plan.c). */
CPU_HIDDEN int nbg_cpu_conv_fits_int32(const cpu_conv *cv);

/*
 * The 32-bit kernels' geometry (run.c runs them): the input, minus its
 * zero point, is copied into int16 planes padded with the border's 0 terms,
 * each row wide = out_x + k - 1, so output (oy, ox) is index oy * wide + ox
 * of a "wide" output whose last k - 1 columns are dropped; the wide output
 * is cut into blocks of CPU_BLK positions and CPU_GRP output channels
 * accumulate at once.
 */
#define CPU_BLK 64
#define CPU_GRP 4
/* Above this many bytes of scratch the 64-bit path (no copies) runs. */
#define CPU_MAX_SCRATCH (1ull << 26)

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
