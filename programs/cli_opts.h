/*
 * cli_opts.h - what each command's options fill (the destinations of the
 * option table in cli_table.c).  A command parses its arguments with
 * cli_parse_command and reads its choices from here.
 */
#ifndef NBG_CLI_OPTS_H
#define NBG_CLI_OPTS_H

#include <stdint.h>

#include "cli_args.h"

/* --expect-target VALUE|NAME */
typedef struct cli_target {
	int set;
	uint32_t value;
} cli_target;
int cli_target_arg(const char *value, void *dest);

typedef struct cli_inspect_opts {
	int json, only, commands, network, memory, weights;
	unsigned graph;   /* NBG_TEXT_GRAPH_LAYERS | ..._OPERATIONS | ..._PATCHES */
	int format;       /* 0, or 1 + its place in meta|vpm|jevois (cli_export_form) */
	cli_target target;
} cli_inspect_opts;

/* --sha256-expect HEX */
typedef struct cli_digest {
	int set;
	uint8_t bytes[32];
} cli_digest;

int cli_digest_arg(const char *value, void *dest);

typedef struct cli_verify_opts {
	int quiet, status, sha, require;
	cli_target target;
	cli_digest expect;
	const char *manifest_path;
} cli_verify_opts;

typedef struct cli_json_opts {
	int json;
} cli_json_opts;

typedef struct cli_codes_opts {
	int markdown;
} cli_codes_opts;

/* --op N: an OPERATIONS record */
typedef struct cli_op {
	int set;
	uint32_t value;
} cli_op;
int cli_op_arg(const char *value, void *dest);

typedef struct cli_weights_opts {
	int json, dequantize;
	const char *out;
	cli_op op;
} cli_weights_opts;

typedef struct cli_probe_opts {
	int json, no_isolate;
	const char *device_root, *nnsdk, *viplite;
} cli_probe_opts;

/* Parses argv against the options of command `cmd` (cli_table.c) into
 * `dest` (the command's struct above, zeroed first by the caller), the
 * operands into operands[] (room for argc; NULL when the command takes
 * none) and their number into *n.
 * Returns 0, or -1 after one sentence on standard error. */
int cli_parse_command(const char *cmd, int argc, char **argv, void *dest, const char **operands,
		      int *n);

/* cli_parse_command with the operands in a new array *operands (room for
 * all of argv; the caller frees it, also on failure).  Returns NBG_EXIT_OK,
 * NBG_EXIT_USAGE after one sentence on standard error, or NBG_EXIT_IO when
 * memory runs out. */
int cli_parse_operands(const char *cmd, int argc, char **argv, void *dest, const char ***operands,
		       int *n);

typedef struct cli_reemit_opts {
	const char *ledger;
	int no_readback;
} cli_reemit_opts;

typedef struct cli_map_opts {
	const char *svg, *title;
	int png;
} cli_map_opts;

typedef struct cli_graph_opts {
	const char *dot, *svg, *title;
} cli_graph_opts;

typedef struct cli_corpus_opts {
	int json, quiet, follow, merge;
	uint64_t jobs;                 /* 0: one per CPU */
	const char *records, *manifest;
	const char **paths;            /* the operands, not from the table */
	int npaths;
} cli_corpus_opts;

/* nbg run's and nbg tensor's --mean / --scale X[,X,X]: one value, or one per channel */
typedef struct cli_channels {
	unsigned n; /* 0: not given */
	double v[3];
} cli_channels;
int cli_channels_arg(const char *value, void *dest);

/* --input N / --output N of nbg tensor: a record index */
typedef struct cli_record {
	int set;
	unsigned long value;
} cli_record;
int cli_record_arg(const char *value, void *dest);

typedef struct cli_tensor_opts {
	const char *model, *out;
	int from, to;            /* 0, or 1 + its place in raw|npy|text (nbg_tensor_kind) */
	cli_record input, output;
	int keep_dtype;
	int layout;              /* 0, or 1 + its place in nchw|nhwc (nbg_tensor_layout) */
	cli_channels mean, scale; /* an image FILE's, as nbg run's */
	int channel_order;
} cli_tensor_opts;

/* nbg run's --tolerance X (finite, >= 0) */
typedef struct cli_real {
	int set;
	double value;
} cli_real;
int cli_tolerance_arg(const char *value, void *dest);

/* nbg run's --max-output / --max-memory SIZE (cli_size_parse), and the
 * counts --max-work / --max-plan-steps N (the same syntax) */
typedef struct cli_size {
	int set;
	uint64_t value;
} cli_size;
int cli_size_arg(const char *value, void *dest);
int cli_count_arg(const char *value, void *dest);

/* nbg run's --input-kind N (0..255, decimal or 0x hex) */
int cli_input_kind_arg(const char *value, void *dest);

typedef struct cli_run_opts {
	cli_list inputs, goldens;
	const char *output_dir, *nnsdk, *device_root, *lib, *sample;
	uint64_t loops, top, timeout;  /* 0: not given */
	cli_real tolerance;
	int float32_outputs, force_target, no_isolate, check, json;
	cli_record input_kind;
	int backend;                   /* 0, or 1 + its place in auto|nnsdk|viplite|cpu */
	int layout;                    /* 0, or 1 + its place in nchw|nhwc (nbg_tensor_layout) */
	cli_size max_output, max_memory, max_work, max_plan_steps;
	const char *dump;              /* --dump DIR (run_dump.c) */
	int dump_float;
	cli_size dump_limit;
	cli_channels mean, scale;      /* an image input's normalization */
	int channel_order;             /* 0, or 1 + its place in rgb|bgr|gray */
	const char *batch, *labels;
	uint64_t jobs;                 /* 0: not given */
	uint64_t threads;              /* --threads N, 0: not given */
	int kernels;                   /* 0, or 1 + its place in auto|portable */
} cli_run_opts;

typedef struct cli_compare_opts {
	int json;
	const char *model, *tolerance;
	cli_record input, output;
	uint64_t top;                  /* 0: 5 */
} cli_compare_opts;

/* "nbg CMD: MESSAGE" and the command's synopsis on standard error;
 * returns NBG_EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
