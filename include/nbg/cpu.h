/*
 * cpu.h - the CPU backend: executes the operations of a compiled model on
 * this machine, from their decoded NN commands (nbg/commands.h) and kernel
 * streams (nbg/weights.h), on the integer data the NPU would hold, with no
 * board and no vendor library.
 *
 * What it executes (doc/cpu-backend.md gives the rules and the evidence for
 * each, doc/cpu-coverage.md what it runs of each corpus file):
 * NN-engine convolutions (conv, depthwise, strided) with uint8 data and
 * kernels, their bias, the requantization of the command (post_multiplier /
 * post_shift fields, out_zero_point), fused ReLU, 2x2 max and first-pixel
 * pooling, the input offset with a constant border, and target 0xe8's
 * addition fused into a convolution; the TP engine's copies, transposes,
 * reshuffles, max pooling, lookup-table activations and fully connected
 * layers; INIT and END records (nothing to compute); and, computed by
 * reference semantics from the I/O and scales their uniforms record, not
 * from the shader's code (nbg_cpu_step.reference), the softmax, global and
 * depthwise pooling, quantized addition, 2x upsampling and max pooling
 * shaders and the NN-engine's SP softmax and fp16 addition.  Everything else is refused
 * before anything runs: other SH and SW operations (shader or software
 * code nbgkit does not decode); other NN-engine operations (SP outside a
 * softmax layer, NN_LUT, NT) and NN fully connected commands other than
 * those whose kernels decode one column wide (target 0x7d's, run as a 1x1
 * convolution); TP fully connected layers whose coefficient
 * stream is not decoded; TP lookup tables and fp16 copies with pooling
 * fields; per-channel requantization; other data types, border modes,
 * pooling modes and memory sources; commands whose fields hold other
 * values than the executed rules were established with; each with a
 * stable reason id (nbg_cpu_step.reason_id, doc/cpu-backend.md) and a
 * sentence naming the operation, the field and its value.
 *
 * Memory is laid out as the file's patches say: one buffer per input and
 * output record (their byte sizes), the VIP SRAM, the AXI SRAM and the
 * memory pool (their sizes from the header); every operation reads and
 * writes at the relocated addresses of its command, so a wrong recovered
 * address gives a wrong result rather than a silently right one.  Every
 * address range an operation touches is checked against its buffer before
 * the run starts, the work of each operation is bounded (NBG_CPU_MAX_MACS),
 * and so is the whole plan's (nbg_cpu_options: the run's work, the memory
 * it holds, the planners' own walks), each checked before anything runs.
 *
 * Thread safety: a plan is immutable after nbg_cpu_plan_build and may be
 * run from several threads, each run with its own state.
 */
#ifndef NBG_CPU_H
#define NBG_CPU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decoded.h"
#include "nbg.h"
#include "runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the backend does with one OPERATIONS record. */
typedef enum nbg_cpu_verdict {
	NBG_CPU_EXECUTE = 0, /* computed from its decoded command and kernels */
	NBG_CPU_NOTHING = 1, /* INIT / END: nothing to compute */
	NBG_CPU_REFUSED = 2, /* cannot be executed: reason_id and reason say why */
} nbg_cpu_verdict;

/* "execute", "nothing", "refused"; NULL otherwise. */
NBG_API const char *nbg_cpu_verdict_name(int verdict);

/* Multiply-accumulates one operation may take; more is refused (work-limit). */
#define NBG_CPU_MAX_MACS (1ull << 32)

typedef struct nbg_cpu_step {
	size_t operation;      /* OPERATIONS record index */
	uint32_t type;         /* its type (enum nbg_graph_op_type) */
	uint32_t layer_id;
	char layer[65];        /* the layer's name, printable ASCII or "?" */
	char what[96];         /* "NN conv 5x5x1 -> 20", "TP layout", "SH", ... */
	int verdict;           /* nbg_cpu_verdict */
	const char *reason_id; /* stable kebab-case id (doc/cpu-backend.md); "" when executed */
	char reason[256];      /* a sentence naming the field and value; "" when executed */
	uint64_t macs;         /* multiply-accumulates (executed NN operations) */
	int reference;         /* 1: executed by reference semantics (an SH or SW operation
				* identified by its layer and I/O), not from the operation's code */
	/* Members added at the end (doc/api.md, rule 2): */
	uint64_t work;         /* an executed operation's steps in a run: its multiply-accumulates
				* and one per element it reads or writes otherwise (a TP walk's
				* loop turns included); 0 when not executed */
	uint64_t scratch;      /* bytes it allocates while it runs, beside the machine's buffers */
} nbg_cpu_step;

typedef struct nbg_cpu_plan nbg_cpu_plan;

/*
 * The limits of a whole plan (doc/cpu-backend.md, "Limits"): options that
 * grow at their end, as nbg_parse_options do; set `size` to
 * sizeof(nbg_cpu_options).  0 takes a limit's default, UINT64_MAX turns it
 * off.  A run over max_work or max_memory is refused before anything is
 * allocated or computed (nbg_cpu_plan_check, work-limit); an operation
 * whose planning would take the planners past max_plan_steps is refused
 * (reason work-limit) before its walk.
 */
typedef struct nbg_cpu_options {
	size_t size;
	uint64_t max_work;       /* the steps of every operation a run executes, added up
				  * (nbg_cpu_step.work); default NBG_CPU_DEFAULT_MAX_WORK */
	uint64_t max_memory;     /* bytes a run holds at once: every buffer of the machine and
				  * the largest operation's scratch; default NBG_CPU_DEFAULT_MAX_MEMORY */
	uint64_t max_plan_steps; /* steps the planners take over all operations (a TP command's
				  * output walk, a kernel's bound, ...); default
				  * NBG_CPU_DEFAULT_MAX_PLAN_STEPS */
	/* Members added at the end (doc/api.md, rule 2); not limits: */
	uint64_t threads;        /* threads one operation's run may use (its output channels and
				  * positions cut across them; the same bytes for any number);
				  * 0 or 1: the caller's alone; at most 64 */
	uint64_t kernels;        /* NBG_CPU_KERNELS_AUTO (0): the CPU's vector instructions where
				  * the build and the CPU have them; NBG_CPU_KERNELS_PORTABLE: the
				  * portable C kernels alone (the reference the others equal) */
} nbg_cpu_options;
#define NBG_CPU_KERNELS_AUTO 0
#define NBG_CPU_KERNELS_PORTABLE 1
#define NBG_CPU_DEFAULT_MAX_WORK ((uint64_t)1 << 36)        /* 20-30 s of one core */
#define NBG_CPU_DEFAULT_MAX_MEMORY ((uint64_t)2 << 30)      /* 2 GiB */
#define NBG_CPU_DEFAULT_MAX_PLAN_STEPS ((uint64_t)1 << 30)  /* a few seconds of planning */

/* What a plan adds up to (nbg_cpu_plan_totals; grows at its end). */
typedef struct nbg_cpu_totals {
	uint64_t work;           /* nbg_cpu_step.work of every executed step, added up */
	uint64_t buffers;        /* bytes of the machine's buffers (nbg_cpu_run allocates them all) */
	uint64_t scratch;        /* the largest nbg_cpu_step.scratch */
	uint64_t plan_steps;     /* steps the planners took */
	nbg_cpu_options limits;  /* the limits the plan was built with, defaults resolved */
	/* Members added at the end (doc/api.md, rule 2): */
	uint64_t kept;           /* bytes the plan holds for its runs: convolution weights laid out
				  * once for the vector kernels, within max_memory beside buffers
				  * and scratch */
} nbg_cpu_totals;

/*
 * Decodes model[0..size) (graph, commands, weights) and decides every
 * operation's verdict.  The bytes must stay valid and unchanged while the
 * plan lives.  Returns NBG_OK and *out (nbg_cpu_plan_free); MODEL_INVALID
 * when the file does not parse, OUT_OF_MEMORY, INVALID_ARGUMENT.
 */
NBG_API nbg_code nbg_cpu_plan_build(const uint8_t *model, size_t size, nbg_cpu_plan **out,
				    nbg_error *err);
/* The same with limits (NULL: every default, as nbg_cpu_plan_build). */
NBG_API nbg_code nbg_cpu_plan_build_opts(const uint8_t *model, size_t size, const nbg_cpu_options *opts,
					 nbg_cpu_plan **out, nbg_error *err);
/* The same for a model the caller already parsed (nbg_parse), which is not
 * parsed again: m must stay valid, with its bytes, while the plan lives,
 * and the plan does not free it.  The byte builders above are this after
 * nbg_parse with the default options.  A model whose checksums do not
 * hold (parsed with NBG_PARSE_NO_CRC_CHECK) is refused as its bytes are:
 * MODEL_INVALID, the checksum failure in err->cause.  INVALID_ARGUMENT for
 * a NULL m or out or options of a wrong size, OUT_OF_MEMORY, or the code
 * of a failed decode. */
NBG_API nbg_code nbg_cpu_plan_build_model(const nbg_model *m, const nbg_cpu_options *opts,
					  nbg_cpu_plan **out, nbg_error *err);
/* The same from a decoded model (decoded.h), whose graph, commands and
 * weights the plan uses, decoding only what d has not decoded yet: d (and
 * its model) must stay valid while the plan lives, and the plan does not
 * free it; a model whose checksums do not hold is refused as above.  The
 * builders above decode into a decoded model of their own. */
NBG_API nbg_code nbg_cpu_plan_build_decoded(nbg_decoded *d, const nbg_cpu_options *opts,
					    nbg_cpu_plan **out, nbg_error *err);
NBG_API void nbg_cpu_plan_free(nbg_cpu_plan *p);
NBG_API size_t nbg_cpu_plan_count(const nbg_cpu_plan *p);
NBG_API const nbg_cpu_step *nbg_cpu_plan_at(const nbg_cpu_plan *p, size_t i);
/* Steps with a verdict; the first refused step (NULL when none). */
NBG_API size_t nbg_cpu_plan_verdict_count(const nbg_cpu_plan *p, int verdict);
NBG_API const nbg_cpu_step *nbg_cpu_plan_first_refused(const nbg_cpu_plan *p);
/* A sentence when the plan stands on a record layout the parser inferred
 * (a v1 version with no sample: doc/format-v1.md), else NULL; it lives as
 * long as the plan. */
NBG_API const char *nbg_cpu_plan_caveat(const nbg_cpu_plan *p);
/* The plan's totals and limits; NULL for a NULL plan.  They live as long
 * as the plan. */
NBG_API const nbg_cpu_totals *nbg_cpu_plan_totals(const nbg_cpu_plan *p);
/*
 * Whether nbg_cpu_run accepts to run the operations below stop_before
 * (SIZE_MAX: all), as far as the model decides (the inputs aside): NBG_OK,
 * or the code it refuses them with before anything is allocated or computed,
 * err saying why -- UNSUPPORTED_OPERATION: one of them is refused (err
 * names it); RUNTIME_IO_MISMATCH: more input or output records than the
 * machine holds (64 of each); WORK_LIMIT: their work or the memory the run
 * holds is over the plan's limit (err->field "max_work" or "max_memory";
 * the message gives the figure, the limit and how to raise it).  nbg_cpu_run
 * asks it first; `nbg run --backend cpu --check`'s verdict, its exit code
 * and the JSON's runs_whole are its answer for SIZE_MAX.  err may be NULL.
 */
NBG_API nbg_code nbg_cpu_plan_check(const nbg_cpu_plan *p, size_t stop_before, nbg_error *err);
/* The plan as one JSON document (doc/cpu-backend.md, "The plan as JSON"):
 * the counts, runs_whole and the refusal (nbg_cpu_plan_check), the
 * totals and limits, the caveat, the first refused step and, with
 * NBG_CPU_JSON_STEPS, every step.  Returns a malloc'd NUL-terminated
 * string (free()), NULL for a NULL plan or on allocation failure. */
#define NBG_CPU_JSON_STEPS 1u
NBG_API char *nbg_cpu_plan_json(const nbg_cpu_plan *p, unsigned flags);
/* What a run of p says beside its outputs (`nbg run`'s summary.json
 * "runtime", the page, Model.run(details=True) in Python), as one JSON
 * document: {"reference_semantics": [{"operation", "layer", "what",
 * "note"}, ...], every step executed by reference semantics, not from its
 * code (nbg_cpu_step.reference), in plan order; "caveat":
 * nbg_cpu_plan_caveat's sentence or null}.  Returns a malloc'd string
 * (free()), NULL for a NULL plan or on allocation failure. */
NBG_API char *nbg_cpu_run_details_json(const nbg_cpu_plan *p);
/* `nbg run --backend cpu --check`: one line per operation (after the
 * caveat, when there is one), the totals against their limits and a
 * verdict line (nbg_cpu_plan_check's). */
NBG_API void nbg_cpu_plan_print(FILE *out, const nbg_cpu_plan *p);

typedef struct nbg_cpu_state nbg_cpu_state;

/*
 * Runs the operations whose OPERATIONS index is below stop_before (SIZE_MAX:
 * all) on inputs[0..count) (raw bytes in the input records' formats).
 * Refuses, before allocating or computing anything, what nbg_cpu_plan_check
 * refuses (UNSUPPORTED_OPERATION, RUNTIME_IO_MISMATCH, WORK_LIMIT), then
 * INPUT_COUNT_MISMATCH, INPUT_SIZE_MISMATCH; OUT_OF_MEMORY,
 * INVALID_ARGUMENT.  On NBG_OK *out holds every buffer (nbg_cpu_state_free).
 */
NBG_API nbg_code nbg_cpu_run(const nbg_cpu_plan *p, const nbg_rt_buffer *inputs, size_t count,
			     size_t stop_before, nbg_cpu_state **out, nbg_error *err);
NBG_API void nbg_cpu_state_free(nbg_cpu_state *s);
/* A buffer after the run: source type (enum nbg_graph_source: INPUT, OUTPUT,
 * MEMORY_POOL, AXI_SRAM, VIP_SRAM) and index (the record for INPUT / OUTPUT,
 * else ignored); NULL and *size 0 when the model has no such buffer. */
NBG_API const uint8_t *nbg_cpu_state_buffer(const nbg_cpu_state *s, uint32_t source_type,
					    int32_t index, size_t *size);

#ifdef __cplusplus
}
#endif
#endif

/* Static-linking-only: not part of the stable interface (doc/api.md). */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_CPU_H_STATIC_LINKING_ONLY)
#define NBG_CPU_H_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

/*
 * What an executed operation wrote, as a tensor (`nbg run --dump`,
 * doc/debugging.md): the elements its kind of operation writes, gathered
 * from where it wrote them into one C-order array.  An NN convolution, a
 * TP fully connected layer and the shader kinds give the image they write
 * (channels, rows, columns); a TP walk its elements in the order of their
 * addresses, shaped as its command's output image when the count agrees,
 * else flat.  Where a layer is tiled -- two or more convolutions of it
 * write images of one width and channel count, or two or more TP fully
 * connected operations parts of its outputs -- a whole-layer tensor
 * follows its last tile: the tiles stacked in the order they ran, along
 * the rows (convolutions) or the outputs (fully connected).
 */
typedef struct nbg_cpu_tensor {
	size_t operation;        /* the step (OPERATIONS record); a whole layer: its last tile */
	uint32_t layer_id;
	const char *layer;       /* the step's layer name (nbg_cpu_step.layer) */
	const char *kind;        /* nbg_cpu_step_kind: the backend's kind of operation */
	int whole_layer;         /* 1: the layer's tiles stacked (tiles of them) */
	size_t tiles;
	uint32_t ndim;
	uint64_t shape[3];       /* outermost first */
	uint32_t data_format;    /* of the elements: UINT8 (2), INT8 (3) or FP16 (1) */
	int zero_point_known;    /* the command states the output's zero point */
	int32_t zero_point;
	int32_t output_record;   /* the tensor is OUTPUT record n's bytes, whole; else -1 */
	uint64_t bytes;
	const uint8_t *data;     /* the run's hook only: the elements, valid during the call */
} nbg_cpu_tensor;

/* The kind of operation the CPU backend executes for step i ("conv",
 * "tp", "tp-fc", "softmax", "sh-pool", ...: its table's names,
 * doc/cpu-backend.md); NULL when the step is not executed. */
NBG_API const char *nbg_cpu_step_kind(const nbg_cpu_plan *p, size_t i);

/* The tensors a dumping run of the operations below stop_before gives, in
 * the order its hook receives them (data NULL): *out malloc'd (free()),
 * *count of them.  NBG_OK, OUT_OF_MEMORY, INVALID_ARGUMENT. */
NBG_API nbg_code nbg_cpu_dump_list(const nbg_cpu_plan *p, size_t stop_before, nbg_cpu_tensor **out,
				   size_t *count, nbg_error *err);

/* Called after each executed operation with what it wrote, in the order of
 * nbg_cpu_dump_list; anything but NBG_OK stops the run, which returns it. */
typedef nbg_code (*nbg_cpu_dump_fn)(void *ctx, const nbg_cpu_tensor *t);

/* nbg_cpu_run calling hook with every tensor of nbg_cpu_dump_list, each
 * gathered into memory of its own (a tiled layer's whole tensor is held
 * until its last tile ran): bound them by the list's bytes first. */
NBG_API nbg_code nbg_cpu_run_dump(const nbg_cpu_plan *p, const nbg_rt_buffer *inputs, size_t count,
				  size_t stop_before, nbg_cpu_dump_fn hook, void *ctx, nbg_cpu_state **out,
				  nbg_error *err);

#ifdef __cplusplus
}
#endif
#endif
