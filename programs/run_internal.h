/*
 * run_internal.h - what the files of `nbg run` share (cmd_run.c and
 * run_one.c name them): the options, one run's state, and each step.
 */
#ifndef NBG_RUN_INTERNAL_H
#define NBG_RUN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "cli.h"
#include "cli_opts.h"
#include "cli_out.h"
#include "nbg/cpu.h"
#include "nbg/runtime.h"
#include "nbg/session.h"
#include "nbg/targets.h"
#include "nbg/tensor.h"

/* --channel-order */
enum { RUN_ORDER_DEFAULT = 0, RUN_ORDER_RGB, RUN_ORDER_BGR, RUN_ORDER_GRAY };

typedef struct run_args {
	const char *model;
	const char **inputs;
	size_t input_count;
	const char **goldens;
	size_t golden_count;
	const char *output_dir;
	const char *nnsdk;
	const char *device_root;
	unsigned long loops;
	double tolerance;
	int tolerance_given;
	int float32_outputs;
	int input_kind_given;
	uint32_t input_kind;
	nbg_tensor_layout layout; /* --layout: a 4-D .npy input's, NBG_LAYOUT_MODEL if not given */
	int backend;             /* nbg_rt_select */
	int backend_given;       /* --backend was given */
	const char *lib;         /* --lib: the chosen backend's library */
	int force_target, no_isolate;
	int check;               /* --check: the CPU backend's plan, nothing run */
	int json;                /* --json: that plan as JSON */
	unsigned long top;       /* --top N, 0: none */
	unsigned long timeout_s; /* --timeout, 0: the default */
	const char *sample;      /* --sample FILE */
	char **out_names;        /* raw output file names ([output] of sample.txt) */
	size_t out_name_count;
	uint64_t max_output;     /* --max-output: bytes the run may write */
	uint64_t max_memory;     /* --max-memory: bytes it may hold for tensors */
	nbg_cpu_options cpu;     /* the CPU backend's limits (cli_cpu_options) */
	const char *dump;        /* --dump DIR, --dump-float, --dump-limit (run_dump.c) */
	int dump_float;
	uint64_t dump_limit;
	cli_channels mean, scale; /* an image input's normalization (run_image.c) */
	int channel_order;       /* RUN_ORDER_* */
	const char *batch;       /* --batch DIR (run_batch.c) */
	const char *labels;      /* --labels FILE: class names for --top */
	unsigned long jobs;      /* --jobs N, 0: not given */
	int quiet;               /* one entry of a batch: its report is one line */
	char **label_v;          /* --labels' names, label_count of them */
	size_t label_count;
	char *label_text;        /* the file they point into */
} run_args;

/* An output file, staged through the one output writer (cli_out.c) and
 * renamed with the others once the run succeeded. */
typedef struct staged_file {
	char final[NBG_RT_PATH_MAX]; /* DIR/NAME, as reported */
	cli_out out;
} staged_file;

/* Everything one nbg run holds, released by run_cleanup(). */
typedef struct run_state {
	run_args a;
	cli_loaded model;
	const nbg_model *m;
	size_t n_in, n_out;
	uint8_t **in_raw;           /* each input as the record's raw bytes */
	nbg_rt_buffer *bufs;
	nbg_io *out_io;             /* each output as the runtime reports it */
	float **out_f, **gold_f;    /* dequantized outputs and goldens */
	nbg_tensor_diff *cmp;
	nbg_tensor_stats *stats;    /* the goldens' figures (run_golden.c) */
	staged_file *staged;
	size_t staged_count;
	size_t *raw_staged;         /* output i's raw file is staged[raw_staged[i]] */
	nbg_rt_session_result *res;
	nbg_cpu_plan *plan;         /* --backend cpu: the plan, built once (run_cpu.c) */
	json_t *summary;
	nbg_error e;
	int golden_ok;
	struct run_dump *dump;      /* --dump: the staged directory (run_dump.c) */
	size_t dump_count;          /* the tensors it holds */
	int borrowed;               /* model and plan belong to a batch (run_batch.c) */
	char *line;                 /* a batch entry's report line (run_report.c) */
} run_state;

/* The networks of a->sample in turn (run_sample.c). */
int run_sample(run_args *a);
/* One model with its inputs (run_one.c); *mismatch: 1 when the run
 * completed and only a golden mismatched. */
int run_one(const run_args *a, int *mismatch);

/* An image input (run_image.c): RUN_IMAGE_PNG or _JPEG by the path's
 * extension (.png, .jpg, .jpeg), else RUN_IMAGE_NONE; the file's content
 * buf[0..size) -> the record's raw bytes (a note on standard error
 * when values were clipped) (*raw malloc'ed, io->byte_size),
 * with a's --mean, --scale, --channel-order and --max-memory (nbg run, and
 * nbg tensor through the same fields; cmd names the command in a note). */
enum { RUN_IMAGE_NONE = 0, RUN_IMAGE_PNG, RUN_IMAGE_JPEG };
int run_image_kind(const char *path);
nbg_code run_image_to_raw(const char *cmd, const char *path, const nbg_io *io, const run_args *a,
			  const uint8_t *buf, size_t size, uint8_t **raw, nbg_error *e);

/* A run in steps (run_one.c): the model loaded into s (0, or the exit
 * code, printed); its inputs read, run, outputs written and reported;
 * what s holds released (not the model and plan when s->borrowed), rc
 * returned. */
int run_load(run_state *s, const run_args *a);
int run_loaded(run_state *s, int *mismatch);
int run_cleanup(run_state *s, int rc);
/* --batch DIR (run_batch.c). */
int run_batch(const run_args *a);
/* --labels FILE read into a (0, or the exit code, printed); released. */
int run_labels_load(run_args *a);
void run_labels_free(run_args *a);

/* How an image input was converted, for summary.json's inputs[] (its
 * decoder, channel order, mean and scale per channel, resize); NULL for
 * another file. */
json_t *run_image_json(const nbg_io *io, const run_args *a, const char *path);

/* The inputs and goldens read, the budget checked (run_inputs.c). */
int run_inputs(run_state *s);
/* The message and exit code for a file that shrank while it was read. */
int run_file_changed(const char *path, const char *what);
/* The session run (run_session.c). */
int run_session(run_state *s);
/* A runtime error printed; its exit code. */
int run_rt_exit(const char *cmd, const nbg_error *e);

/* DIR made if missing; 0 or the exit code (run_outputs.c). */
int run_ensure_dir(const char *dir);
/* The outputs staged and compared (run_outputs.c, run_golden.c). */
int run_outputs(run_state *s);
int run_compare(run_state *s, size_t i);
/* summary.json staged, then every staged file renamed into place. */
int run_commit(run_state *s);

/* summary.json (run_summary.c); its golden part (run_golden.c). */
json_t *run_summary_json(const run_state *s);
json_t *run_golden_json(const run_state *s);
/* The report on standard output (run_report.c); a data format's name, as
 * the report and summary.json print it. */
int run_report(run_state *s, int rc);
const char *run_format_name(uint32_t fmt);

/* --dump (run_dump.c): the options checked (0 or a usage exit); the
 * dump staged before the session (every tensor, dump.json); committed
 * with the outputs; freed (a staged dump removed).  run_dump_check: DIR
 * new, the dump within --dump-limit and its directory staged, before the
 * inputs are read or the output directory made. */
int run_dump_args(run_args *a, const cli_run_opts *o);
int run_dump_check(run_state *s);
int run_dump(run_state *s);
int run_dump_commit(run_state *s);
void run_dump_free(run_state *s);

/* --backend cpu: s->plan built once, for the session and summary.json
 * (NULL when it cannot be: the session then refuses the model as it would
 * its own plan); the CPU backend's part of summary.json's runtime object,
 * nothing for another backend; --backend cpu --check (run_cpu.c). */
void run_cpu_plan(run_state *s);
void run_cpu_json(const run_state *s, json_t *jr);
int run_check(const run_args *a);

#endif
