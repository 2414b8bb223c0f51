/*
 * memory.h - what a model costs a runtime in memory: the video memory (memory
 * pool, input and output buffers, coefficients, command buffers, dynamic
 * buffers, the heap reserve) and the system memory (the runtime's copies of
 * the records, its allocations), the command / instruction / coefficient bytes
 * of every operation and every layer, and whether inputs and outputs can
 * share the memory pool.
 *
 * Every figure comes in two forms:
 *   - vendor: the number VeriSilicon's closed inspector (nbinfo -m -d) prints
 *     for the same file, with its rounding and its runtime constants; nbgkit
 *     reproduces it exactly on every file of the reference corpus
 *     (doc/memory.md, checked by tests/test_memory.c);
 *   - exact: the bytes the file itself determines, before any rounding.
 * Each figure has a rule (nbg_mem_rule_of) saying which sections and records
 * it is computed from, which alignment applies and which constants it rests
 * on, and the evidence codes of doc/field-map.md.  Constants a file does not
 * determine (the runtime's heap reserve, the sizes of its in-memory records)
 * are listed by nbg_mem_constant_at with their source.
 *
 * Memory: nbg_mem_analyze() allocates the report; the caller frees it with
 * nbg_mem_free().  The report copies every value it keeps: it stays valid
 * after the model and the graph are freed.  Pointers returned by the
 * accessors belong to the report (or are static, for rules and constants) and
 * live until nbg_mem_free().
 *
 * Thread safety: nbg_mem_analyze() only reads the model and the graph; a
 * report is immutable and may be read from several threads.
 */
#ifndef NBG_MEMORY_H
#define NBG_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nbg.h"
#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The figures, in the order of the vendor's tree (indentation = depth). */
typedef enum nbg_mem_figure {
	NBG_MEM_VIDEO_TOTAL = 0,      /* total video memory */
	NBG_MEM_POOL,                 /*   memory pool */
	NBG_MEM_INPUTS,               /*   input buffers */
	NBG_MEM_OUTPUTS,              /*   output buffers */
	NBG_MEM_OPERATIONS,           /*   operation memory */
	NBG_MEM_COEFFICIENTS,         /*     read-only coefficients */
	NBG_MEM_COMMAND_BUFFER,       /*     command buffer */
	NBG_MEM_LOAD_STATES,          /*       load states (+ initial command data) */
	NBG_MEM_NN_TP_INSTRUCTIONS,   /*       NN, TP and SP instructions */
	NBG_MEM_PPU_INSTRUCTIONS,     /*       PPU (shader) instructions */
	NBG_MEM_DYNAMIC,              /*     dynamic inputs and outputs */
	NBG_MEM_DYNAMIC_INPUTS,       /*       dynamic inputs */
	NBG_MEM_DYNAMIC_OUTPUTS,      /*       dynamic outputs */
	NBG_MEM_HEAP_RESERVE,         /*   video-memory heap node reserve (runtime constant) */
	NBG_MEM_SYSTEM_TOTAL,         /* total system memory */
	NBG_MEM_NBG_HEADER,           /*   the runtime's copies of the records */
	NBG_MEM_ALLOCATED,            /*   the runtime's other allocations */
	NBG_MEM_FLASH_VIDEO_TOTAL,    /* total video memory when created from flash */
	NBG_MEM_FLASH_SYSTEM_TOTAL,   /* total system memory when created from flash */
	NBG_MEM__COUNT
} nbg_mem_figure;

/* How a figure is computed.  Static; never freed. */
typedef struct nbg_mem_rule {
	nbg_mem_figure figure;
	const char *key;          /* JSON key under memory.figures ("video_total") */
	const char *label;        /* human label ("Total video memory") */
	unsigned depth;           /* 0 top level, 1 component, ... */
	const char *vendor_line;  /* the vendor inspector's label for it, or NULL when
				   * the reference output has no such line */
	const char *rule;         /* which sections / records, which alignment, which
				   * constants: the text of doc/memory.md */
	const char *evidence;     /* evidence codes (doc/field-map.md) */
} nbg_mem_rule;

/* A constant the figures use that the file does not determine.  Static. */
typedef struct nbg_mem_constant {
	const char *name;         /* "heap_reserve" */
	uint64_t value;
	const char *meaning;
	const char *source;       /* where the value comes from */
} nbg_mem_constant;

/* Where a model keeps coefficients, load states and PPU instructions. */
typedef enum nbg_mem_layout {
	NBG_MEM_LAYOUT_SECTIONS = 0, /* v2 and late v1: COEF_DATA, LOADSTATE, PPU_INSTR,
				      * DYNAIO, each with its (offset, size) table */
	NBG_MEM_LAYOUT_LCD = 1,      /* v1 before them: all four inside the LCD (the
				      * COEF_HEADER slot) through the LCDT */
} nbg_mem_layout;

typedef struct nbg_mem_value {
	uint64_t vendor;  /* the vendor-equivalent figure (its alignment, its constants) */
	uint64_t exact;   /* the bytes the file determines, no rounding; for figures made of
			   * runtime constants the same as vendor */
	int from_file;    /* 1: the file alone determines it; 0: a runtime constant is part */
} nbg_mem_value;

typedef struct nbg_mem_report nbg_mem_report;

/* ------------------------------------------------------- per operation */

typedef struct nbg_mem_operation {
	size_t record;            /* OPERATIONS record index */
	uint32_t type;            /* enum nbg_graph_op_type or the stored value */
	uint32_t layer_id;        /* as stored */
	/* command: the load-state entry state_id names (LOADSTATE_TABLE, or the
	 * LCDT before it); the vendor prints the same */
	uint64_t command_bytes;
	int command_known;        /* 0: state_id names no entry (counted 0) */
	/* instruction: the NN command size for NN, NT, NN_LUT and SP (all live in
	 * the NN section), the TP command size for TP, the PPU-instruction entry
	 * of its SH record for SH, 0 for INIT / END / other types */
	uint64_t instruction_bytes;
	uint64_t instruction_bytes_vendor; /* the vendor prints 0 for NT and NN_LUT */
	/* coefficients: the table entries its MISC_DYNA_GENERIC patches name
	 * (COEF_DATA_TABLE, or the LCDT before it) */
	uint32_t coefficient_patches;      /* such patches in its range */
	uint64_t coefficient_bytes;        /* the entries they name, summed (an entry
					    * named twice counts twice) */
	uint64_t coefficient_bytes_vendor; /* the first one only (what the vendor prints) */
	uint64_t coefficient_bytes_owned;  /* entries no earlier operation names (layers
					    * sum these, so shared entries count once) */
} nbg_mem_operation;

/* ---------------------------------------------------------- per layer */

typedef struct nbg_mem_layer {
	size_t layer;             /* LAYER record index; (size_t)-1 for the operations
				   * no layer owns (INIT, END) */
	size_t operations;
	uint64_t coefficient_bytes; /* owned coefficient entries of its operations */
	uint64_t command_bytes;     /* load states of its operations */
	uint64_t instruction_bytes; /* exact instruction bytes of its operations */
	uint64_t total_bytes;       /* the three summed */
} nbg_mem_layer;

/* --------------------------------------- inputs, outputs and the pool */

/*
 * The vendor's inspector decides per input, from the patch records (doc/memory.md,
 * evidence C+I: it reproduces the vendor on every reference file; the rule was
 * inferred from them):
 *   - the input's readers are the operations whose patch range holds an INPUT
 *     patch naming it;
 *   - a reader whose range also names the memory pool is a conflict; the vendor
 *     prints one line "input[i] layer[l] name=..., output into memory pool" per
 *     such pair whose INPUT patch is a COMMAND patch, none for a STATE patch;
 *   - the input is clear when its readers all belong to one layer and none is a
 *     conflict.  Read by several layers (or by none) it is not clear, and the
 *     vendor names no conflict for it.
 * The version of the file plays no part.
 */
typedef enum nbg_mem_share_verdict {
	NBG_MEM_SHARE_POOL_EMPTY = 0,    /* the memory pool is 0 bytes: nothing to share */
	NBG_MEM_SHARE_NOT_SUPPORTED = 1, /* an input is not clear and the vendor names no
					  * conflict: read by several layers, or its only
					  * conflicts are through STATE patches */
	NBG_MEM_SHARE_CONFLICT = 2,      /* an operation reads an input through a COMMAND
					  * patch and names the pool */
	NBG_MEM_SHARE_POSSIBLE = 3,      /* every input is clear: each can live inside the pool */
} nbg_mem_share_verdict;

typedef struct nbg_mem_sharing {
	uint64_t pool_bytes;
	nbg_mem_share_verdict verdict; /* for the inputs, as the vendor concludes */
	int inputs_clear;          /* every input is clear: the vendor prints its "memory
				    * pool size" and "Not overlap input" lines (also when
				    * the pool is empty) */
	uint64_t allocation;       /* POSSIBLE: bytes a runtime allocates for the pool and
				    * the inputs together (the largest of them) */
	/* the records the conclusion rests on */
	size_t operations_checked; /* operations whose patch ranges were read */
	size_t input_patches;      /* INPUT patches inside those ranges */
	size_t output_patches;     /* OUTPUT patches inside them */
	size_t pool_patches;       /* MEMORY_POOL patches inside them */
	size_t conflicts_total;    /* (operation, INPUT COMMAND patch) pairs in conflict: one
				    * line each in the vendor's output */
	size_t input_other_conflicts; /* (operation, INPUT patch of another type) pairs in
				    * conflict: nbgkit's analysis, the vendor prints none */
	size_t output_conflicts;   /* (operation, OUTPUT patch) pairs, nbgkit's analysis */
	const char *evidence;      /* "C+I": reproduces the vendor on the reference corpus;
				    * the rule is inferred from it */
} nbg_mem_sharing;

/* An operation whose patch range reads an input (or writes an output) and
 * also names the memory pool: that buffer cannot live inside the pool. */
typedef struct nbg_mem_conflict {
	int output;                /* 0 input, 1 output */
	int command;               /* the INPUT / OUTPUT patch is a COMMAND patch (for an
				    * input: the vendor prints a line for it) */
	uint32_t io_index;
	size_t operation;          /* OPERATIONS record */
	uint32_t layer_id;
	size_t io_patch;           /* the INPUT / OUTPUT PATCH record */
	size_t pool_patch;         /* the first MEMORY_POOL PATCH record of the operation */
} nbg_mem_conflict;

/* One input or output and the pool. */
typedef struct nbg_mem_share_buffer {
	int output;                /* 0 input, 1 output (outputs: nbgkit's analysis, I) */
	uint32_t index;
	uint64_t bytes;            /* exact tensor bytes */
	uint64_t aligned_bytes;    /* rounded up to 64 as a runtime allocates it */
	/* inputs (0 for outputs): */
	size_t reads;              /* INPUT patches naming it inside operation ranges */
	uint32_t layer_low, layer_high; /* lowest and highest layer_id of the operations
				    * holding them (reads > 0) */
	int clear;                 /* read by one layer, no conflict */
	size_t conflicts;          /* conflicts naming this buffer, every patch type */
	int can_share;             /* pool non-empty, no conflict, and for an input clear */
	uint64_t allocation;       /* can_share: the larger of the pool and aligned_bytes */
} nbg_mem_share_buffer;

#ifdef __cplusplus
}
#endif
#endif

/* Static-linking-only: not part of the stable interface (doc/api.md). */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_MEMORY_H_STATIC_LINKING_ONLY)
#define NBG_MEMORY_H_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

/* The rule of figure f; NULL outside 0..NBG_MEM__COUNT-1. */
NBG_API const nbg_mem_rule *nbg_mem_rule_of(nbg_mem_figure f);

NBG_API size_t nbg_mem_constant_count(void);
/* NULL when i >= nbg_mem_constant_count(). */
NBG_API const nbg_mem_constant *nbg_mem_constant_at(size_t i);

/*
 * Computes every figure of model m, whose graph g was decoded from it
 * (nbg_graph_decode).  On success returns NBG_OK and stores a new report in
 * *out.  Fails, leaving *out NULL and filling *err (may be NULL), only when
 * memory runs out (NBG_E_OUT_OF_MEMORY) or an argument is NULL
 * (NBG_E_INVALID_ARGUMENT, field "model").  File contents never make it fail:
 * a record that names a table entry that does not exist counts 0 bytes.
 */
NBG_API nbg_code nbg_mem_analyze(const nbg_model *m, const nbg_graph *g, nbg_mem_report **out,
				 nbg_error *err);
/* NULL is allowed. */
NBG_API void nbg_mem_free(nbg_mem_report *r);

NBG_API nbg_mem_layout nbg_mem_layout_of(const nbg_mem_report *r);
/* The figure f; all zero outside 0..NBG_MEM__COUNT-1. */
NBG_API nbg_mem_value nbg_mem_value_of(const nbg_mem_report *r, nbg_mem_figure f);
/* 1 when an input or output has a data format whose size nbgkit does not
 * know (its bytes are counted as 0). */
NBG_API int nbg_mem_io_incomplete(const nbg_mem_report *r);

NBG_API size_t nbg_mem_operation_count(const nbg_mem_report *r);
/* NULL when i >= nbg_mem_operation_count(r). */
NBG_API const nbg_mem_operation *nbg_mem_operation_at(const nbg_mem_report *r, size_t i);

NBG_API size_t nbg_mem_layer_count(const nbg_mem_report *r);
/* Layer i in record order; NULL when i >= nbg_mem_layer_count(r). */
NBG_API const nbg_mem_layer *nbg_mem_layer_at(const nbg_mem_report *r, size_t i);
/* The k-th largest layer by total_bytes (ties: lower record first). */
NBG_API const nbg_mem_layer *nbg_mem_layer_ranked(const nbg_mem_report *r, size_t k);
/* The operations no layer owns. */
NBG_API const nbg_mem_layer *nbg_mem_layer_outside(const nbg_mem_report *r);

NBG_API const nbg_mem_sharing *nbg_mem_sharing_of(const nbg_mem_report *r);
/* Conflicts listed one by one (inputs and outputs, in operation order; at
 * most 1000, the totals above count them all). */
NBG_API size_t nbg_mem_conflict_count(const nbg_mem_report *r);
NBG_API const nbg_mem_conflict *nbg_mem_conflict_at(const nbg_mem_report *r, size_t i);
/* Inputs first, then outputs. */
NBG_API size_t nbg_mem_share_buffer_count(const nbg_mem_report *r);
NBG_API const nbg_mem_share_buffer *nbg_mem_share_buffer_at(const nbg_mem_report *r, size_t i);

/* Bytes a runtime allocates for a tensor of `bytes`: rounded up to 64. */
NBG_API uint64_t nbg_mem_aligned_buffer(uint64_t bytes);

/* The memory section of `nbg inspect --memory`: the figures with their exact
 * and vendor-equivalent values and rule keys, the sharing analysis and the
 * largest layers.  Names from the file are printed escaped. */
NBG_API void nbg_text_memory(FILE *out, const nbg_model *m, const nbg_graph *g,
			     const nbg_mem_report *r);

/* The per-operation sizes table (`nbg inspect --operations`). */
NBG_API void nbg_text_memory_operations(FILE *out, const nbg_graph *g,
					const nbg_mem_report *r);

#ifdef __cplusplus
}
#endif
#endif
