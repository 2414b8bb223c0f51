/*
 * cpu_internal.h - the CPU backend's plan: its buffers, one step per
 * OPERATIONS record with its operation (a tagged union of the per-kind
 * structs of ops/), the table of operation kinds the plan and run drivers
 * loop over (ops/table.c), and what every planner shares (common.c).
 * Never installed; an operation's file includes this and the headers of
 * what it computes with (quant.h, ring.h, budget.h, its ops/ header).
 */
#ifndef NBG_CPU_INTERNAL_H
#define NBG_CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/graph/commands_lib.h"
#include "common/model.h"
#include "cpu/hidden.h"
#include "cpu/ops/conv.h"
#include "cpu/ops/nn16.h"
#include "cpu/ops/shader.h"
#include "cpu/ops/tp.h"
#include "nbg/commands.h"
#include "nbg/cpu.h"
#include "nbg/decoded.h"
#include "nbg/graph.h"
#include "nbg/weights.h"

/* One buffer of the machine: a source type and, for INPUT / OUTPUT and
 * the dynamic ones, the record or table index; init: the bytes it starts
 * with (a dynamic input's stored entry, in the model's data), else NULL
 * (zero-filled). */
/* The dynamic output and input buffers a plan models at most (plan.c). */
#define CPU_MAX_DYNAMIC_OUTPUTS 16
#define CPU_MAX_DYNAMIC_INPUTS 16

typedef struct cpu_region {
	uint32_t source_type;
	int32_t index;
	uint64_t size;
	const uint8_t *init;
} cpu_region;

/* The kinds of operation, in the order the plan tries their matches: each
 * an entry of the table nbg_cpu_ops (ops/table.c), its index this value. */
enum cpu_op_kind {
	CPU_OP_NONE = 0,
	CPU_OP_SOFTMAX,         /* ops/softmax.c: SH Softmax2Layer */
	CPU_OP_SHPOOL,          /* ops/shpool.c: SH PoolingLayer2, averaging */
	CPU_OP_SHMAX,           /* ops/shmax.c: SH PoolingLayer2, max by windows (through shpool's plan) */
	CPU_OP_SHDW,            /* ops/shdw.c: SH DepthwiseConvLayer */
	CPU_OP_SHADD,           /* ops/shelt.c: SH TensorAdd */
	CPU_OP_SHSCALE,         /* ops/shelt.c: SH TensorScale (2x upsampling) */
	CPU_OP_SHF16,           /* ops/shelt.c: SH TensorMul, TensorDiv of the A733 fp16 files */
	CPU_OP_SHPAD,           /* ops/shpad.c: SH TensorPadOperation2 */
	CPU_OP_SHCONV,          /* ops/shconv.c: SH ConvolutionLayer (im2col, matrix product) */
	CPU_OP_SHDW16,          /* ops/shdw16.c: SH DepthwiseConvLayer on fp16 (through shdw's plan) */
	CPU_OP_SHF32,           /* ops/shf32.c: SH ActivationLayer (ReLU), Max Pooling on fp32 */
	CPU_OP_SHRESIZE,        /* ops/shresize.c: SH resize_bilinear_I16toI16_UP */
	CPU_OP_SHGRAY,          /* ops/shgray.c: SH pre_process_gray_copy_U8toF16 */
	CPU_OP_SHSUB,           /* ops/shsub.c: SH TensorSub (fp16 minus a constant into int8) */
	CPU_OP_SHMUL,           /* ops/shmul.c: SH TensorMul (int8 times a constant) */
	CPU_OP_SHPRELU,         /* ops/shprelu.c: SH PReluLayer on int8 */
	CPU_OP_SHTANH,          /* ops/shtanh.c: SH ActivationLayer tanh, uint8 into fp16 */
	CPU_OP_SHADER,          /* ops/shader.c: any other SH or SW operation, refused */
	CPU_OP_TPFC,            /* ops/tpfc.c: TP fully connected */
	CPU_OP_TP,              /* ops/tp.c: every other TP operation (with ops/lut.c) */
	CPU_OP_SPMAX,           /* ops/spmax.c: SP operations of a Softmax2Layer_SP */
	CPU_OP_SPMEAN,          /* ops/spmax.c: SP operations of a ReduceMeanLayer_SP or ReduceSumLayer_SP */
	CPU_OP_SPSUB,           /* ops/spmax.c: SP operations of a TensorSub_SP */
	CPU_OP_SPMUL,           /* ops/spmax.c: SP operations of a TensorMul_SP of pairs */
	CPU_OP_NN16,            /* ops/nn16.c: NN-engine operations on int16 data, NT transposes */
	CPU_OP_CONV,            /* ops/conv.c: NN-engine operations (with ops/add.c) */
	CPU_OP__COUNT
};

/* A step's operation: kind (enum cpu_op_kind, set with the step's verdict
 * EXECUTE; CPU_OP_NONE otherwise) and the member of that kind. */
typedef struct cpu_op {
	int kind;
	union {
		cpu_conv conv;          /* CPU_OP_CONV */
		cpu_tp tp;              /* CPU_OP_TP */
		cpu_tpfc tpfc;          /* CPU_OP_TPFC */
		cpu_nn16 nn16;          /* CPU_OP_NN16 */
		cpu_ref ref;            /* the shader kinds, CPU_OP_SPMAX, _SPMEAN, _SPSUB */
	} u;
} cpu_op;

/* The layers whose name an operation kind matches (enum cpu_layer), the
 * name read once per step (match.c). */
enum cpu_layer {
	CPU_LAYER_OTHER = 0,
	CPU_LAYER_SOFTMAX2,             /* Softmax2Layer */
	CPU_LAYER_POOLING2,             /* PoolingLayer2 */
	CPU_LAYER_DEPTHWISE_CONV,       /* DepthwiseConvLayer */
	CPU_LAYER_TENSOR_ADD,           /* TensorAdd */
	CPU_LAYER_TENSOR_SCALE,         /* TensorScale */
	CPU_LAYER_SOFTMAX2_SP,          /* Softmax2Layer_SP */
	CPU_LAYER_TENSOR_PAD2,          /* TensorPadOperation2 */
	CPU_LAYER_CONVOLUTION,          /* ConvolutionLayer */
	CPU_LAYER_MULTISTREAM_SP,       /* MultiStreamProcessor_SP */
	CPU_LAYER_REDUCE_MEAN_SP,       /* ReduceMeanLayer_SP */
	CPU_LAYER_TENSOR_SUB_SP,        /* TensorSub_SP */
	CPU_LAYER_TENSOR_ADD_SP,        /* TensorAdd_SP */
	CPU_LAYER_ACTIVATION,           /* ActivationLayer */
	CPU_LAYER_MAX_POOLING,          /* Max Pooling */
	CPU_LAYER_RESIZE_BILINEAR_I16_UP, /* com.vivantecorp.extension.evis.resize_bilinear_I16toI16_UP */
	CPU_LAYER_GRAY_COPY_U8_F16,     /* com.vivantecorp.extension.evis.pre_process_gray_copy_U8toF16 */
	CPU_LAYER_TENSOR_SUB,           /* TensorSub */
	CPU_LAYER_TENSOR_MUL,           /* TensorMul */
	CPU_LAYER_PRELU,                /* PReluLayer */
	CPU_LAYER_REDUCE_SUM_SP,        /* ReduceSumLayer_SP */
	CPU_LAYER_TENSOR_DIV,           /* TensorDiv */
	CPU_LAYER_TENSOR_MUL_SP         /* TensorMul_SP */
};

/* What a command's operation is (nbg_cmd_op.kind, doc/commands.md), read
 * once (nbg_cpu_cmd_kind). */
enum cpu_cmd_kind {
	CPU_CMD_OTHER = 0,
	CPU_CMD_CONV, CPU_CMD_DEPTHWISE_CONV, CPU_CMD_FULLY_CONNECTED, /* NN */
	CPU_CMD_SP, CPU_CMD_NN_LUT, CPU_CMD_TRANSPOSE,                  /* NN-engine SP, NN_LUT, NT */
	CPU_CMD_POOL, CPU_CMD_LUT, CPU_CMD_LAYOUT                       /* TP */
};

/* What the table's matches read of a step, decoded once (match.c). */
typedef struct cpu_match {
	size_t operation;
	uint32_t type;                  /* its OPERATIONS type (enum nbg_graph_op_type) */
	int layer;                      /* enum cpu_layer */
	int add_layer;                  /* its layer's name holds "AddLayer" (a fused addition) */
	const nbg_cmd_op *cop;          /* its command's operation, NULL when none */
	int cmd_kind;                   /* enum cpu_cmd_kind of cop */
} cpu_match;

/*
 * One kind of operation, an entry of the table: match says whether a step
 * is this kind's (NULL: reached only through another kind's plan); plan
 * sets the step's verdict and, when executed, op->kind and op->u; run
 * executes it on the machine's buffers (-1: out of memory); cost gives the
 * work and scratch of its run (doc/cpu-backend.md, "Limits").  NULL run
 * and cost: a kind that only refuses.
 */
typedef struct cpu_op_def {
	const char *name;
	int (*match)(const nbg_cpu_plan *p, const cpu_match *m);
	void (*plan)(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m);
	int (*run)(const cpu_op *op, uint8_t *const *buf);
	void (*cost)(const cpu_op *op, uint64_t *work, uint64_t *scratch);
} cpu_op_def;

/* The table (ops/table.c), indexed by enum cpu_op_kind (entry 0 NULL),
 * and its entries, each defined in its kind's file. */
CPU_HIDDEN extern const cpu_op_def *const nbg_cpu_ops[CPU_OP__COUNT];
CPU_HIDDEN extern const cpu_op_def nbg_cpu_op_softmax, nbg_cpu_op_shpool, nbg_cpu_op_shmax, nbg_cpu_op_shdw,
	nbg_cpu_op_shadd, nbg_cpu_op_shscale, nbg_cpu_op_shf16, nbg_cpu_op_shpad, nbg_cpu_op_shconv, nbg_cpu_op_shdw16,
	nbg_cpu_op_shf32, nbg_cpu_op_shresize, nbg_cpu_op_shgray, nbg_cpu_op_shsub, nbg_cpu_op_shmul,
	nbg_cpu_op_shprelu, nbg_cpu_op_shtanh, nbg_cpu_op_shader, nbg_cpu_op_tpfc, nbg_cpu_op_tp,
	nbg_cpu_op_spmax, nbg_cpu_op_spmean, nbg_cpu_op_spsub, nbg_cpu_op_spmul, nbg_cpu_op_nn16, nbg_cpu_op_conv;

struct nbg_cpu_plan {
	const nbg_model *m;             /* the model planned (the caller's, or own) */
	nbg_model *own;                 /* the model the plan parsed itself (nbg_cpu_plan_build), or NULL */
	nbg_decoded *own_d;             /* the decoded model the plan made itself, or NULL when
					 * the caller's (nbg_cpu_plan_build_decoded) */
	const nbg_graph *g;             /* the decoded model's parts */
	const nbg_commands *c;
	const nbg_weights *w;
	size_t count;
	nbg_cpu_step *steps;
	cpu_op *ops;                    /* one per step (used when executed) */
	unsigned char *read_outside;    /* per operation: its writes are read outside its layer
					 * (ops/spmax.c; NULL until needed) */
	size_t region_count;
	cpu_region regions[5 + 2 * 64 + CPU_MAX_DYNAMIC_OUTPUTS + CPU_MAX_DYNAMIC_INPUTS];
	char caveat[256];               /* nbg_cpu_plan_caveat; "" when none */
	const nbg_weights_op **wop;     /* per operation: its weights record, NULL when none (the
					 * weights indexed once, plan.c) */
	nbg_cpu_totals totals;          /* the limits, resolved at the build; the planners' steps as
					 * they are taken (nbg_cpu_plan_spend); the rest added up after */
	struct cpu_kept *kept;          /* memory kept for the runs (ops/conv_fast.c), or NULL */
};

/* The step's match facts (match.c); the kind of a command's operation. */
CPU_HIDDEN void nbg_cpu_match_of(const nbg_cpu_plan *p, const nbg_cpu_step *s, cpu_match *m);
CPU_HIDDEN int nbg_cpu_cmd_kind(const nbg_cmd_op *cop);

/* Above this many bytes of scratch the convolution's 64-bit path (no
 * copies) runs; a copy through a circular buffer holds at most this many
 * pixels (nbg_cpu_image_in). */
#define CPU_MAX_SCRATCH (1ull << 26)

/* Shared by the planners (common.c): refuse a step with a reason id and
 * a sentence; the region an address reference lands in (-1 with the step
 * refused); whether an image x*y*z at base with its strides lies inside a
 * region (*last: its last byte).  The reference a patch gives a command
 * word is nbg_command_word_ref (analysis/graph/commands_lib.h). */
CPU_HIDDEN void nbg_cpu_refuse(nbg_cpu_step *s, const char *id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
CPU_HIDDEN long nbg_cpu_find_region(const nbg_cpu_plan *p, nbg_cpu_step *s, const char *what,
				    const nbg_cmd_ref *r);
/* Whether a (non-depthwise) NN operation reads an input record
 * interleaved: the record's dimensions (file order, innermost first) are
 * (z, x, y) of the command's image, one pixel's channels side by side,
 * where the command's fields describe a planar image whose rows hold x
 * elements of esize bytes (doc/cpu-backend.md, "Row tiles, interleaved
 * input records and circular buffers"; ops/conv.c, ops/nn16.c). */
CPU_HIDDEN int nbg_cpu_input_interleaved(const nbg_cpu_plan *p, const nbg_cmd_op *op, uint32_t z, uint32_t x,
					 uint32_t y, uint32_t esize);
/* Both of an operation's: its input's region into *in, its output's into
 * *out (0 with the step refused). */
CPU_HIDDEN int nbg_cpu_find_io(const nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd_op *op, size_t *in,
			       size_t *out);
CPU_HIDDEN int nbg_cpu_image_fits(const nbg_cpu_plan *p, size_t region, uint64_t base, uint64_t x,
				  uint64_t y, uint64_t z, uint64_t row, uint64_t slice, uint64_t *last);

/*
 * Circular buffers (doc/cpu-backend.md, "Row tiles, interleaved input
 * records and circular buffers"): a command's size field (size_units, 64
 * bytes each) and the stored value raw of its end word `word` give the
 * buffer [end - size, end) by the rule the data flow reads too
 * (nbg_command_ring, analysis/graph/commands_lib.h); an image address at or
 * past its start wraps to start + (address - start) mod size (ring.h;
 * size 0: no buffer).
 *
 * nbg_cpu_ring: the buffer of an image at `base` of `region` (*ring_size 0
 * when the size is 0); its end must be relocated into that memory and the image
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
CPU_HIDDEN int nbg_cpu_ring(const nbg_cpu_plan *p, nbg_cpu_step *s, const char *what, uint32_t size_units,
			    unsigned word, uint64_t raw, size_t region, uint64_t base, uint64_t *lo,
			    uint64_t *ring_size);
CPU_HIDDEN int nbg_cpu_image_in(const nbg_cpu_plan *p, size_t region, uint64_t base, uint64_t x, uint64_t y,
				uint64_t z, uint64_t row, uint64_t slice, uint64_t ring_lo, uint64_t ring_size,
				uint64_t *last);
/* The circular buffer an NN-engine image is read or written through: its
 * input (out 0) or output (out 1) buffer's size field (64-byte units) and
 * end field, nbg_cpu_ring. */
CPU_HIDDEN int nbg_cpu_nn_ring(const nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd *cmd, const char *what,
			       int out, size_t region, uint64_t base, uint64_t *lo, uint64_t *size);
/* A rounding field (an NN command's rounding_mode, a TP command's
 * flat_rounding_mode: the output tensor's rounding mode in the vendor's
 * codes, 0 simple rounding, 1 round to nearest even, 2 toward zero, 3
 * RTNI) as quant.h's `even` argument: 0 half away from zero, 1 half to
 * even; 2 and 3 refused with the id, naming `what` and the field (0). */
CPU_HIDDEN int nbg_cpu_rounding(nbg_cpu_step *s, const char *id, const char *what, const char *field,
				uint32_t mode, int *even);
/* An NN command's post_multiplier fields as one number: bits 0-14 from
 * post_multiplier, _1_to_6 and _7_to_14, bits 15-22 from _15_to_22 (the
 * float32 mantissa of the targets that write 23 bits, doc/cpu-backend.md
 * "The scale"). */
static inline uint32_t nbg_cpu_nn_multiplier(const nbg_cmd *cmd)
{
	return nbg_cmd_nn(cmd, NBG_NNF_POST_MULTIPLIER) | nbg_cmd_nn(cmd, NBG_NNF_POST_MULTIPLIER_1_TO_6) << 1 |
	       nbg_cmd_nn(cmd, NBG_NNF_POST_MULTIPLIER_7_TO_14) << 7 |
	       nbg_cmd_nn(cmd, NBG_NNF_POST_MULTIPLIER_15_TO_22) << 15;
}

/* An SH operation's uniforms (common.c): nbg_cpu_load_uniforms reads them
 * (0 with the step refused: no in-bounds buffer of 1 to
 * CPU_MAX_STATE_BYTES bytes, or a cut stream); nbg_cpu_patched_ref gives
 * the patch of the operation that relocates the state word at byte `at`
 * (its offset: the stored value); nbg_cpu_locate_io the input (uniform
 * 0x36000) and output (uniform index ou) image addresses and their regions
 * (0 with the step refused). */
CPU_HIDDEN int nbg_cpu_load_uniforms(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const char *what,
				     cpu_uniforms *u);
CPU_HIDDEN int nbg_cpu_patched_ref(const nbg_cpu_plan *p, size_t operation, uint32_t at, uint32_t value,
				   nbg_cmd_ref *r);
CPU_HIDDEN int nbg_cpu_locate_io(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const cpu_uniforms *u,
				 size_t ou, const char *what, nbg_cmd_ref *in, nbg_cmd_ref *out, long *ri,
				 long *ro);
/* nbg_cpu_table_bytes (common.c): the `need` bytes of a constant table entry
 * (MISC_DYNA_INPUT: the LCDT; MISC_DYNA_GENERIC: the COEF_DATA_TABLE) that
 * the patch of the state word at byte `at` points at, or NULL. */
CPU_HIDDEN const uint8_t *nbg_cpu_table_bytes(const nbg_cpu_plan *p, size_t operation, uint32_t at,
					      uint32_t value, uint32_t source_type, uint64_t need);
/* A step executed by reference semantics (common.c, shared by the shader
 * planners): op->kind = kind, op->u.ref.kind = ref_kind (its other members
 * set by the planner), labelled nbg_cpu_step.reference. */
CPU_HIDDEN void nbg_cpu_ref_executed(nbg_cpu_step *s, cpu_op *op, int kind, int ref_kind);

/* The elementwise shaders' image readers (ops/shelt.c), shared by the
 * shaders whose images are eight-word descriptors: nbg_cpu_loaded_once
 * (each uniform of idx loaded once), nbg_cpu_elt_image (image k of
 * r->elt from the descriptor at uniform j: x x y x z elements of esize
 * bytes inside its memory; *last its last byte), nbg_cpu_elt_apart (the
 * output, image 2, apart from input k, or with same_ok that very image);
 * each 0 with the step refused. */
CPU_HIDDEN int nbg_cpu_loaded_once(nbg_cpu_step *s, const cpu_uniforms *u, const char *what, const unsigned *idx,
				   size_t n);
CPU_HIDDEN int nbg_cpu_elt_image(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const cpu_uniforms *u,
				 unsigned j, const char *what, cpu_ref *r, int k, uint32_t esize, uint32_t x,
				 uint32_t y, uint32_t z, uint64_t *last);
CPU_HIDDEN int nbg_cpu_elt_apart(nbg_cpu_step *s, const cpu_ref *r, const char *what, int k, const uint64_t *last,
				 int same_ok);

/* nbg_cpu_pinned (ops/shelt.c): uniforms first.. loaded once each and
 * equal to words[0..n) (0 with the step refused, shader-uniforms-unknown);
 * nbg_cpu_elt_rows: row() over the rows of images 0 and 2 of r->elt (the
 * one-input elementwise shaders' run); nbg_cpu_const_bytes (common.c): the
 * `need` bytes of the constant image whose address is uniform j, relocated
 * into the LCDT (MISC_DYNA_INPUT) or the coefficient table
 * (MISC_DYNA_GENERIC), or NULL. */
typedef void (*cpu_elt_row_fn)(const cpu_ref *r, const uint8_t *in, uint8_t *out, uint32_t y);
CPU_HIDDEN int nbg_cpu_pinned(nbg_cpu_step *s, const cpu_uniforms *u, const char *what, unsigned first,
			      const uint32_t *words, size_t n);
CPU_HIDDEN void nbg_cpu_elt_rows(const cpu_ref *r, uint8_t *const *buf, cpu_elt_row_fn row);
/* nbg_cpu_elt_io (ops/shelt.c): a one-input shader's images, r->elt's
 * image 0 from uniform 0 and image 2 from uniform jo, x x y x z elements
 * of esize[0] and esize[1] bytes, apart (or with same_ok the same image),
 * and r->elt.x, y, z; 0 with the step refused. */
CPU_HIDDEN int nbg_cpu_elt_io(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const cpu_uniforms *u, unsigned jo,
			      const char *what, cpu_ref *r, const uint32_t *esize, uint32_t x, uint32_t y, uint32_t z,
			      int same_ok);
/* The elementwise shaders' cost (ops/shelt.c): a step per value of x x y
 * x z, four for the 2x upsampling; no scratch. */
CPU_HIDDEN void nbg_cpu_elt_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch);
CPU_HIDDEN const uint8_t *nbg_cpu_const_bytes(const nbg_cpu_plan *p, size_t operation, const cpu_uniforms *u,
					      unsigned j, uint64_t need);

/* The fp16 depthwise convolution shader (ops/shdw16.c), planned through
 * the DepthwiseConvLayer entry (ops/shdw.c) where nbg_sh_dwconv16_is
 * (analysis/graph/uniforms.h): its plan. */
CPU_HIDDEN void nbg_cpu_shdw16_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation,
				    const cpu_uniforms *u);
/* The max pooling shader (ops/shmax.c), planned through the PoolingLayer2
 * entry (ops/shpool.c): whether a PoolingLayer2's uniforms are in its
 * image format; its plan (the step refused with a shmax-* id when the
 * layout is not the corpus's). */
CPU_HIDDEN int nbg_cpu_shmax_is(const cpu_uniforms *u);
CPU_HIDDEN void nbg_cpu_plan_shmax(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation,
				   const cpu_uniforms *u);
/* The average pooling by windows (the same file), in the average shader's
 * image format: the face-age files' layout, else refused. */
CPU_HIDDEN void nbg_cpu_plan_shavg(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation,
				   const cpu_uniforms *u);

/* Runs one executed operation through its table entry (run.c); -1 when
 * out of memory. */
CPU_HIDDEN int nbg_cpu_op_run(const cpu_op *op, uint8_t *const *buf);
/* Runs the operations [from, to) on a state nbg_cpu_run returned (whose
 * operations below from ran): UNSUPPORTED_OPERATION, before computing
 * anything, when one of them is refused; OUT_OF_MEMORY.  A test program
 * dumps the buffers at several points of one run with it. */
CPU_HIDDEN nbg_code nbg_cpu_run_range(const nbg_cpu_plan *p, nbg_cpu_state *st, size_t from, size_t to,
				      nbg_error *err);
/* nbg_cpu_run with `after` (when not NULL) called after each executed
 * operation i with the machine's buffers; anything but NBG_OK stops the
 * run, which returns it (run.c; the dumps of dump.c). */
typedef nbg_code (*cpu_after_fn)(void *ctx, size_t i, uint8_t *const *buf, nbg_error *err);
CPU_HIDDEN nbg_code nbg_cpu_run_hooked(const nbg_cpu_plan *p, const nbg_rt_buffer *inputs, size_t count,
				       size_t stop_before, cpu_after_fn after, void *ctx, nbg_cpu_state **out,
				       nbg_error *err);

#endif
