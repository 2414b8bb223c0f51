/*
 * cmd_run.c - `nbg probe` and `nbg run`: drive a compiled NBG through the
 * vendor's libnnsdk.so (see doc/runtime.md).  Outputs are written under
 * temporary names and renamed only when the whole run succeeded, so a failed
 * run never leaves partial files behind.
 */
/* nbg_sha256_bytes: nbg links libnbg.a */
#define NBG_STATIC_LINKING_ONLY

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "cli_opts.h"
#include "cli_out.h"
#include "cmd_run.h"
#include "nbg/cpu.h"
#include "nbg/runtime.h"
#include "nbg/session.h"
#include "nbg/targets.h"
#include "nbg/tensor.h"

/* ------------------------------------------------------------ helpers */

/* Paths (from the command line or a sample.txt) are printed as every
 * command prints them (cli_esc, doc/security.md); messages through
 * cli_esc_msg, which keeps the paths a library message escaped already. */
static void print_rt_error(const char *cmd, const nbg_error *e)
{
	fprintf(stderr, "nbg %s: %s: %s\n", cmd, nbg_code_name(e->code), cli_esc_msg(e->message));
}

static json_t *json_hex32(const uint8_t d[32])
{
	char h[65];
	nbg_hex32(d, h);
	return json_string(h);
}

static json_t *json_hex_u32(uint32_t v)
{
	char b[16];
	snprintf(b, sizeof(b), "0x%08x", v);
	return json_string(b);
}

/* Names come from the model file and paths from the command line: neither is
 * guaranteed UTF-8, and json_string() rejects what is not. */
static json_t *json_text(const char *s)
{
	char *e = nbg_text_escape(s, SIZE_MAX);
	json_t *j = e ? json_string(e) : NULL;
	free(e);
	return j ? j : json_null();
}

static json_t *json_shape(const nbg_io *io)
{
	json_t *a = json_array();
	for (uint32_t i = 0; i < io->dim_count; i++)
		json_array_append_new(a, json_integer(nbg_io_dim_outer(io, i)));
	return a;
}

static void print_shape(FILE *f, const nbg_io *io)
{
	fputc('[', f);
	for (uint32_t i = 0; i < io->dim_count; i++)
		fprintf(f, "%s%u", i ? "," : "", nbg_io_dim_outer(io, i));
	fputc(']', f);
}

static const char *format_name(uint32_t fmt)
{
	const char *n = nbg_data_format_name(fmt);
	return n ? n : "unknown";
}

/* A finite double as a JSON real, NaN/inf as null (JSON has no infinity). */
static json_t *json_finite(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* -------------------------------------------------------------- run */

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
} run_args;

/* What a run may write and hold unless --max-output / --max-memory say
 * otherwise (doc/runtime.md, "nbg run"): far above any model seen, far
 * below what a declared size can claim (an output record may declare 4 GiB). */
#define RUN_MAX_OUTPUT ((uint64_t)1 << 30)
#define RUN_MAX_MEMORY ((uint64_t)2 << 30)

/* An output file, staged through the one output writer (cli_out.c) and
 * renamed with the others once the run succeeded. */
typedef struct staged_file {
	char final[NBG_RT_PATH_MAX]; /* DIR/NAME, as reported */
	cli_out out;
} staged_file;

/* The options from the table (cli_table.c) into a; 0, or the exit code of
 * a usage error.  --backend is 1 + its place in auto|nnsdk|viplite|cpu,
 * which are nbg_rt_select's values. */
static int parse_run_args(int argc, char **argv, run_args *a)
{
	cli_run_opts o = { 0 };
	const char **ops;
	int n, rc = cli_parse_operands("run", argc, argv, &o, &ops, &n);

	memset(a, 0, sizeof(*a));
	a->inputs = o.inputs.v;
	a->input_count = o.inputs.n;
	a->goldens = o.goldens.v;
	a->golden_count = o.goldens.n;
	a->model = rc == NBG_EXIT_OK && n ? ops[0] : NULL;
	if (rc == NBG_EXIT_OK && n > 1)
		rc = cli_usage("run", "one model at a time; also got '%s' (inputs follow --input)",
			       cli_esc(ops[1]));
	free(ops);
	if (rc != NBG_EXIT_OK)
		return rc;
	a->output_dir = o.output_dir;
	a->nnsdk = o.nnsdk;
	a->device_root = o.device_root;
	a->lib = o.lib;
	a->sample = o.sample;
	a->loops = o.loops ? (unsigned long)o.loops : 1;
	a->top = (unsigned long)o.top;
	a->timeout_s = (unsigned long)o.timeout;
	a->tolerance = o.tolerance.value;
	a->tolerance_given = o.tolerance.set;
	a->float32_outputs = o.float32_outputs;
	a->force_target = o.force_target;
	a->no_isolate = o.no_isolate;
	a->check = o.check;
	a->json = o.json;
	a->input_kind = (uint32_t)o.input_kind.value;
	a->input_kind_given = o.input_kind.set;
	a->backend = o.backend ? o.backend - 1 : NBG_RT_SELECT_AUTO;
	a->backend_given = o.backend != 0;
	a->max_output = o.max_output.set ? o.max_output.value : RUN_MAX_OUTPUT;
	a->max_memory = o.max_memory.set ? o.max_memory.value : RUN_MAX_MEMORY;
	cli_cpu_options(&a->cpu, &o.max_memory, &o.max_work, &o.max_plan_steps);
	if ((o.max_work.set || o.max_plan_steps.set) && a->backend != NBG_RT_SELECT_CPU)
		return cli_usage("run", "--max-work and --max-plan-steps bound the CPU backend; give "
			      "--backend cpu");
	/* --nnsdk alone asks for libnnsdk, as it did before VIPLite existed;
	 * with --backend it only names libnnsdk's library. */
	if (a->nnsdk && !a->backend_given && !a->lib)
		a->backend = NBG_RT_SELECT_NNSDK;
	if (a->nnsdk && a->backend == NBG_RT_SELECT_VIPLITE)
		fprintf(stderr, "nbg run: note: --nnsdk names the libnnsdk library, which --backend "
				"viplite does not load; --lib names the VIPLite library\n");
	if (a->sample && (a->model || a->input_count || a->golden_count))
		return cli_usage("run", "--sample names the model, inputs and goldens itself");
	if (a->sample && !a->output_dir)
		return cli_usage("run", "no --output-dir given");
	if (a->sample)
		return 0;
	if (!a->model)
		return cli_usage("run", "no model given");
	if (a->check && a->backend != NBG_RT_SELECT_CPU)
		return cli_usage("run", "--check lists what --backend cpu would run; give --backend cpu");
	if (a->check)
		return 0;
	if (a->json)
		return cli_usage("run", "--json only applies with --check (a run writes summary.json)");
	if (!a->input_count)
		return cli_usage("run", "no --input given (one file per model input)");
	if (!a->output_dir)
		return cli_usage("run", "no --output-dir given");
	if (a->tolerance_given && !a->golden_count)
		return cli_usage("run", "--tolerance only applies with --golden");
	return 0;
}

static int ensure_dir(const char *dir)
{
	struct stat st;
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "nbg run: cannot create output directory %s: %s\n", cli_esc(dir), strerror(errno));
		return NBG_EXIT_IO;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "nbg run: %s is not a directory\n", cli_esc(dir));
		return NBG_EXIT_IO;
	}
	return 0;
}

/* Stages DIR/name as files[*n] (the OUT rules of doc/security.md; never
 * standard output, where the report goes) and writes data to it.  Two
 * outputs of one run that are the same file -- the same name, or links to
 * one file -- are refused before anything is renamed.  0 or the exit code,
 * with the reason printed. */
static int stage_file(const char *dir, const char *name, const void *data, size_t size,
		      staged_file *files, size_t *n)
{
	staged_file *f = &files[*n];
	int k = snprintf(f->final, sizeof(f->final), "%s/%s", dir, name), rc;

	if (k < 0 || (size_t)k >= sizeof(f->final)) {
		fprintf(stderr, "nbg run: output path under %s is too long\n", cli_esc(dir));
		return NBG_EXIT_IO;
	}
	if ((rc = cli_out_open(&f->out, "run", f->final, 0)) != 0)
		return rc;
	++*n;
	for (size_t i = 0; i + 1 < *n; i++)
		if (cli_out_same(&files[i].out, &f->out)) {
			fprintf(stderr, "nbg run: %s and ", cli_esc(files[i].final));
			fprintf(stderr, "%s are the same file: one output would replace the other; "
					"nothing is written\n", cli_esc(f->final));
			return NBG_EXIT_IO;
		}
	if (cli_out_write(&f->out, data, size) != 0) {
		fprintf(stderr, "nbg run: cannot write %s: %s\n", cli_esc(f->final),
			strerror(f->out.err));
		return NBG_EXIT_IO;
	}
	return 0;
}

static int rt_exit(const char *cmd, const nbg_error *e)
{
	print_rt_error(cmd, e);
	if (e->code == NBG_E_MODEL_INVALID)
		fprintf(stderr, "nbg %s: parser: %s at offset %llu, field %s\n", cmd,
			nbg_code_name(e->cause), (unsigned long long)e->offset,
			e->field[0] ? e->field : "-");
	return nbg_code_exit(e->code);
}

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
	staged_file *staged;
	size_t staged_count;
	size_t *raw_staged;         /* output i's raw file is staged[raw_staged[i]] */
	nbg_rt_session_result *res;
	json_t *summary;
	nbg_error e;
	int golden_ok;
} run_state;

static int tensor_fail(const char *path, const char *what, const nbg_error *e)
{
	fprintf(stderr, "nbg run: %s: %s %s: %s\n", nbg_code_name(e->code), what, cli_esc(path),
		cli_esc_msg(e->message));
	return nbg_code_exit(e->code);
}

/* A file that shrank while it was read: what was read from it is zeros
 * (doc/security.md), so nothing computed from it may be run or written. */
static int file_changed(const char *path, const char *what)
{
	fprintf(stderr, "nbg run: %s: %s %s shrank while it was being read (another process "
			"truncated it): nothing is run or written\n",
		nbg_code_name(NBG_E_FILE_CHANGED), what, cli_esc(path));
	return nbg_code_exit(NBG_E_FILE_CHANGED);
}

/* Reads a whole file into a tensor of the record io. */
static int load_tensor(const char *path, const nbg_io *io, uint8_t **raw, float **vals)
{
	nbg_mapping map;
	nbg_error e;
	if (nbg_map_file(path, &map, &e) != 0) {
		fprintf(stderr, "nbg run: %s\n", cli_esc_msg(e.message));
		return NBG_EXIT_IO;
	}
	size_t rs;
	nbg_code rc = raw ? nbg_tensor_to_raw(io, nbg_tensor_kind_of(path), map.data, map.size, raw, &rs, &e)
			  : nbg_tensor_floats(io, nbg_tensor_kind_of(path), map.data, map.size, vals, &e);
	int shrank = cli_input_shrank(path, &map);
	nbg_unmap_file(&map);
	if (shrank)
		return file_changed(path, raw ? "input" : "golden");
	return rc == NBG_OK ? 0 : tensor_fail(path, raw ? "input" : "golden", &e);
}

static void add_sat(uint64_t *a, uint64_t b)
{
	if (__builtin_add_overflow(*a, b, a))
		*a = UINT64_MAX;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* What the run would write and hold for its tensors, from the records the
 * model declares, checked against --max-output and --max-memory before
 * anything is read, allocated or run: each output's bytes as the runtime
 * returns them (R), its float32 copy and .npy (4 bytes an element each, F),
 * a golden's floats; each input's bytes and the floats a .npy or text file
 * is converted through. */
static int check_budget(const run_state *s)
{
	uint64_t written = 0, memory = 0;

	for (size_t i = 0; i < s->n_in; i++) {
		const nbg_io *io = nbg_model_input_at(s->m, i);
		add_sat(&memory, io->byte_size);
		add_sat(&memory, mul_sat(io->element_count, 4));
	}
	for (size_t i = 0; i < s->n_out; i++) {
		const nbg_io *io = nbg_model_output_at(s->m, i);
		uint64_t f = mul_sat(io->element_count, 4);
		uint64_t r = s->a.float32_outputs ? f : io->byte_size;
		uint64_t npy = s->a.float32_outputs || nbg_tensor_element_size(io->data_format)
			       ? f : 0; /* 4-bit outputs: the raw file only */
		add_sat(&written, r);
		add_sat(&written, npy ? npy + 128 : 0);
		add_sat(&written, 1024); /* its lines in summary.json */
		add_sat(&memory, r);
		add_sat(&memory, npy ? 2 * npy + 128 : 0);
		add_sat(&memory, i < s->a.golden_count ? f : 0);
	}
	const char *what = written > s->a.max_output ? "--max-output"
			 : memory > s->a.max_memory ? "--max-memory" : NULL;
	if (!what)
		return 0;
	fprintf(stderr, "nbg run: %s: %s's records declare outputs that would make this run "
			"write %llu bytes (raw, float32 .npy and summary.json) and hold about %llu "
			"bytes of tensors, over %s %llu: refused before anything is read, "
			"allocated or run; %s SIZE raises the limit (K, M, G, T; none lifts it)\n",
		nbg_code_name(NBG_E_WORK_LIMIT), cli_esc(s->a.model), (unsigned long long)written,
		(unsigned long long)memory, what,
		(unsigned long long)(what[6] == 'o' ? s->a.max_output : s->a.max_memory), what);
	return nbg_code_exit(NBG_E_WORK_LIMIT);
}

/* Inputs (raw, .npy or text) converted to the records' bytes; goldens read
 * as float; all before the device is touched. */
static int run_inputs(run_state *s)
{
	if (s->a.input_count != s->n_in) {
		fprintf(stderr, "nbg run: input-count-mismatch: %zu --input file%s given; %s declares %zu input%s\n",
			s->a.input_count, s->a.input_count == 1 ? "" : "s", cli_esc(s->a.model), s->n_in, s->n_in == 1 ? "" : "s");
		return nbg_code_exit(NBG_E_INPUT_COUNT_MISMATCH);
	}
	if (s->a.golden_count && s->a.golden_count != s->n_out) {
		fprintf(stderr, "nbg run: %zu --golden file%s given; %s declares %zu output%s\n",
			s->a.golden_count, s->a.golden_count == 1 ? "" : "s", cli_esc(s->a.model), s->n_out, s->n_out == 1 ? "" : "s");
		return NBG_EXIT_USAGE;
	}
	int refused = check_budget(s);
	if (refused)
		return refused;
	size_t ni = s->n_in ? s->n_in : 1, no = s->n_out ? s->n_out : 1;
	s->in_raw = calloc(ni, sizeof(*s->in_raw));
	s->bufs = calloc(ni, sizeof(*s->bufs));
	s->out_io = calloc(no, sizeof(*s->out_io));
	s->out_f = calloc(no, sizeof(*s->out_f));
	s->gold_f = calloc(no, sizeof(*s->gold_f));
	s->cmp = calloc(no, sizeof(*s->cmp));
	s->staged = calloc(2 * s->n_out + 1, sizeof(*s->staged));
	s->raw_staged = calloc(no, sizeof(*s->raw_staged));
	if (!s->in_raw || !s->bufs || !s->out_io || !s->out_f || !s->gold_f || !s->cmp || !s->staged ||
	    !s->raw_staged) {
		fprintf(stderr, "nbg run: out of memory\n");
		return NBG_EXIT_IO;
	}
	for (size_t i = 0; i < s->n_in; i++) {
		const nbg_io *io = nbg_model_input_at(s->m, i);
		int rc = load_tensor(s->a.inputs[i], io, &s->in_raw[i], NULL);
		if (rc)
			return rc;
		s->bufs[i].data = s->in_raw[i];
		s->bufs[i].size = (size_t)io->byte_size;
	}
	for (size_t i = 0; i < s->n_out; i++) {
		nbg_io *io = &s->out_io[i];
		*io = *nbg_model_output_at(s->m, i);
		if (s->a.float32_outputs) { /* libnnsdk converts to FP32 itself */
			io->data_format = 0;
			io->quant_format = NBG_QUANT_NONE;
			io->byte_size = io->element_count * 4;
		}
		int rc = i < s->a.golden_count ? load_tensor(s->a.goldens[i], io, NULL, &s->gold_f[i]) : 0;
		if (rc)
			return rc;
	}
	return ensure_dir(s->a.output_dir);
}

static int run_session(run_state *s)
{
	nbg_rt_session_options o = { .size = sizeof(o), .backend = s->a.backend, .lib_path = s->a.lib,
				     .nnsdk_path = s->a.nnsdk, .device_root = s->a.device_root, .loops = s->a.loops,
				     .input_kind = s->a.input_kind,
				     .timeout_ms = (uint32_t)(s->a.timeout_s * 1000), .cpu = &s->a.cpu };
	o.flags = (s->a.force_target ? NBG_RT_SESSION_FORCE_TARGET : 0) |
		  (s->a.no_isolate ? NBG_RT_SESSION_NO_ISOLATE : 0) |
		  (s->a.float32_outputs ? NBG_RT_SESSION_FLOAT32_OUTPUTS : 0) |
		  (s->a.input_kind_given ? NBG_RT_SESSION_INPUT_KIND : 0);
	nbg_code c = nbg_rt_session_run(&o, s->model.map.data, s->model.map.size, s->bufs, s->n_in,
					&s->res, &s->e);
	/* the runtime read the mapping: a model cut meanwhile was zeros to it */
	if (cli_input_shrank(s->a.model, &s->model.map))
		return file_changed(s->a.model, "model");
	return c == NBG_OK ? 0 : rt_exit("run", &s->e);
}

/* output_<i>.bin (raw) and output_<i>.npy (float32), staged; goldens compared. */
static int run_outputs(run_state *s)
{
	for (size_t i = 0; i < s->n_out; i++) {
		const nbg_rt_session_output *o = nbg_rt_session_output_at(s->res, i);
		char name[300];
		if (i < s->a.out_name_count) {
			const char *slash = strrchr(s->a.out_names[i], '/');
			snprintf(name, sizeof(name), "%s", slash ? slash + 1 : s->a.out_names[i]);
		} else {
			snprintf(name, sizeof(name), "output_%zu.bin", i);
		}
		s->raw_staged[i] = s->staged_count;
		int rc = stage_file(s->a.output_dir, name, o->data, o->size, s->staged, &s->staged_count);
		if (rc)
			return rc;
		uint8_t *npy;
		size_t nsz;
		nbg_error e;
		const nbg_io *io = &s->out_io[i];
		uint64_t shape[6];
		for (uint32_t d = 0; d < io->dim_count && d < 6; d++)
			shape[d] = nbg_io_dim_outer(io, d);
		/* the .npy is the float32 copy itself (what nbg_tensor_from_raw
		 * writes), not a second dequantization */
		s->out_f[i] = malloc((size_t)io->element_count * sizeof(float) + 1);
		if (!s->out_f[i] ||
		    nbg_tensor_dequantize(io, o->data, o->size, s->out_f[i], io->element_count, &e) !=
			    NBG_OK ||
		    nbg_npy_encode("<f4", shape, io->dim_count, s->out_f[i],
				   (size_t)io->element_count * sizeof(float), &npy, &nsz, &e) != NBG_OK) {
			free(s->out_f[i]);
			s->out_f[i] = NULL; /* 4-bit outputs: raw only */
		} else {
			snprintf(name, sizeof(name), "output_%zu.npy", i);
			rc = stage_file(s->a.output_dir, name, npy, nsz, s->staged, &s->staged_count);
			free(npy);
			if (rc)
				return rc;
		}
		if (i < s->a.golden_count) {
			if (!s->out_f[i]) {
				fprintf(stderr, "nbg run: golden-format: output %zu has no float form\n", i);
				return nbg_code_exit(NBG_E_GOLDEN_FORMAT);
			}
			nbg_tensor_compare(s->out_f[i], s->gold_f[i], s->out_io[i].element_count,
					   s->a.tolerance, &s->cmp[i], &e);
			if (s->cmp[i].mismatches)
				s->golden_ok = 0;
		}
	}
	return 0;
}

static json_t *rstat_json(const nbg_rt_stat *st)
{
	json_t *o = json_object();
	json_object_set_new(o, "first", json_real(st->first));
	json_object_set_new(o, "min", json_real(st->min));
	json_object_set_new(o, "mean", json_real(st->n ? st->sum / (double)st->n : 0));
	json_object_set_new(o, "max", json_real(st->max));
	return o;
}

#define REFERENCE_NOTE "computed by reference semantics, not from the operation's code"

/* What the CPU backend's plan adds to the summary: the operations it
 * computed by reference semantics (SH / SW operations identified by their
 * layer and I/O, doc/cpu-backend.md), each with REFERENCE_NOTE, and the
 * caveat when the plan stands on an inferred record layout.  Nothing for
 * another backend. */
static void cpu_plan_json(const run_state *s, json_t *jr)
{
	nbg_cpu_plan *p = NULL;
	nbg_error e;
	if (nbg_rt_session_info_of(s->res)->backend != NBG_RT_SELECT_CPU ||
	    nbg_cpu_plan_build_opts(s->model.map.data, s->model.map.size, &s->a.cpu, &p, &e) != NBG_OK)
		return;
	json_t *a = json_array();
	for (size_t i = 0; i < nbg_cpu_plan_count(p); i++) {
		const nbg_cpu_step *st = nbg_cpu_plan_at(p, i);
		if (st->verdict != NBG_CPU_EXECUTE || !st->reference)
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "operation", json_integer((json_int_t)st->operation));
		json_object_set_new(o, "layer", json_string(st->layer));
		json_object_set_new(o, "what", json_string(st->what));
		json_object_set_new(o, "note", json_string(REFERENCE_NOTE));
		json_array_append_new(a, o);
	}
	json_object_set_new(jr, "reference_semantics", a);
	const char *caveat = nbg_cpu_plan_caveat(p);
	json_object_set_new(jr, "caveat", caveat ? json_string(caveat) : json_null());
	nbg_cpu_plan_free(p);
}

static json_t *runtime_json(const run_state *s)
{
	const nbg_rt_session_info *r = nbg_rt_session_info_of(s->res);
	char t[200];
	json_t *jr = json_object();
	json_object_set_new(jr, "backend_selected", json_string(nbg_rt_select_name(r->backend)));
	json_object_set_new(jr, "library", cli_json_path(r->library));
	json_object_set_new(jr, "device_root", cli_json_path(r->probe.device_root));
	json_object_set_new(jr, "backend", json_integer(r->probe.backend));
	json_object_set_new(jr, "backend_name", json_string(nbg_rt_backend_name(r->probe.backend)));
	if (r->backend == NBG_RT_SELECT_NNSDK) {
		json_object_set_new(jr, "flush", json_boolean(r->flush));
		json_object_set_new(jr, "output_format", json_string(s->a.float32_outputs ? "float32" : "raw"));
		json_object_set_new(jr, "input_kind", json_integer(r->input_kind));
	}
	if (r->has_version)
		json_object_set_new(jr, "version", json_hex_u32(r->version_word));
	json_t *jt = json_object();
	json_object_set_new(jt, "model", json_string(nbg_target_describe(nbg_model_target(s->m), t, sizeof(t))));
	json_object_set_new(jt, "device_cid", r->cid_known ? json_string(nbg_target_describe(r->cid, t, sizeof(t)))
							  : json_null());
	json_object_set_new(jt, "checked", json_boolean(r->cid_known));
	json_object_set_new(jt, "forced", json_boolean(r->target_forced));
	json_object_set_new(jr, "target_check", jt);
	cpu_plan_json(s, jr);
	return jr;
}

static json_t *outputs_json(const run_state *s)
{
	json_t *jo = json_array();
	for (size_t i = 0; i < s->n_out; i++) {
		const nbg_rt_session_output *op = nbg_rt_session_output_at(s->res, i);
		const nbg_io *io = nbg_model_output_at(s->m, i);
		json_t *x = json_object();
		const char *final = s->staged[s->raw_staged[i]].final, *slash = strrchr(final, '/');
		json_object_set_new(x, "index", json_integer((json_int_t)i));
		if (io->has_name)
			json_object_set_new(x, "name", json_text(io->name));
		json_object_set_new(x, "file", cli_json_path(slash ? slash + 1 : final));
		if (s->out_f[i]) {
			char n[64];
			snprintf(n, sizeof(n), "output_%zu.npy", i);
			json_object_set_new(x, "npy", json_string(n));
		}
		json_object_set_new(x, "shape", json_shape(io));
		json_object_set_new(x, "format", json_string(format_name(op->data_format)));
		json_object_set_new(x, "bytes", json_integer((json_int_t)op->size));
		json_object_set_new(x, "reported_bytes", json_integer(op->reported_size));
		json_object_set_new(x, "sha256", json_hex32(op->sha256));
		json_object_set_new(x, "stable_across_loops", json_boolean(op->stable));
		json_array_append_new(jo, x);
	}
	return jo;
}

static json_t *golden_json(const run_state *s)
{
	json_t *jg = json_object();
	json_object_set_new(jg, "tolerance", json_real(s->a.tolerance));
	json_object_set_new(jg, "compared_as", json_string("float32 (dequantized)"));
	json_object_set_new(jg, "match", json_boolean(s->golden_ok));
	json_t *ja = json_array();
	for (size_t i = 0; i < s->n_out; i++) {
		json_t *x = json_object();
		json_object_set_new(x, "index", json_integer((json_int_t)i));
		json_object_set_new(x, "file", cli_json_path(s->a.goldens[i]));
		json_object_set_new(x, "format", json_string(format_name(nbg_rt_session_output_at(s->res, i)->data_format)));
		json_object_set_new(x, "elements", json_integer((json_int_t)s->cmp[i].elements));
		json_object_set_new(x, "mismatches", json_integer((json_int_t)s->cmp[i].mismatches));
		json_object_set_new(x, "first_mismatch", s->cmp[i].mismatches
			? json_integer((json_int_t)s->cmp[i].first_mismatch) : json_null());
		json_object_set_new(x, "max_abs_diff", json_finite(s->cmp[i].max_abs_diff));
		json_object_set_new(x, "match", json_boolean(s->cmp[i].mismatches == 0));
		json_array_append_new(ja, x);
	}
	json_object_set_new(jg, "outputs", ja);
	return jg;
}

/* summary.json: model, runtime, inputs, outputs, timings, goldens. */
static json_t *summary_json(const run_state *s)
{
	const nbg_rt_session_info *r = nbg_rt_session_info_of(s->res);
	json_t *summary = json_object();
	json_object_set_new(summary, "nbgkit_version", json_string(nbg_version_string()));
	json_t *jm = json_object();
	json_object_set_new(jm, "path", cli_json_path(s->a.model));
	json_object_set_new(jm, "bytes", json_integer((json_int_t)s->model.map.size));
	json_object_set_new(jm, "sha256", json_hex32(nbg_model_file_sha256(s->m)));
	json_object_set_new(jm, "version", json_hex_u32(nbg_model_version(s->m)));
	json_object_set_new(jm, "target", json_hex_u32(nbg_model_target(s->m)));
	json_object_set_new(summary, "model", jm);
	json_object_set_new(summary, "runtime", runtime_json(s));
	json_object_set_new(summary, "loops", json_integer((json_int_t)r->loops));
	json_t *ji = json_array();
	for (size_t i = 0; i < s->n_in; i++) {
		uint8_t d[32];
		const nbg_io *io = nbg_model_input_at(s->m, i);
		json_t *x = json_object();
		json_object_set_new(x, "index", json_integer((json_int_t)i));
		json_object_set_new(x, "file", cli_json_path(s->a.inputs[i]));
		json_object_set_new(x, "file_kind", json_string(nbg_tensor_kind_name(nbg_tensor_kind_of(s->a.inputs[i]))));
		json_object_set_new(x, "shape", json_shape(io));
		json_object_set_new(x, "format", json_string(format_name(io->data_format)));
		json_object_set_new(x, "bytes", json_integer((json_int_t)s->bufs[i].size));
		nbg_sha256_bytes(s->bufs[i].data, s->bufs[i].size, d);
		json_object_set_new(x, "sha256", json_hex32(d));
		json_array_append_new(ji, x);
	}
	json_object_set_new(summary, "inputs", ji);
	json_object_set_new(summary, "outputs", outputs_json(s));
	json_t *jt = json_object();
	json_object_set_new(jt, "create", json_real(r->create_ms));
	if (r->backend == NBG_RT_SELECT_NNSDK)
		json_object_set_new(jt, "input_set", rstat_json(&r->input_set));
	json_object_set_new(jt, "run", rstat_json(&r->run));
	json_object_set_new(jt, "retrieve", rstat_json(&r->retrieve));
	json_object_set_new(jt, "destroy", json_real(r->destroy_ms));
	json_object_set_new(summary, "timings_ms", jt);
	if (r->profile_known) {
		json_t *jp = json_object();
		json_object_set_new(jp, "inference_time_us", rstat_json(&r->inference_us));
		json_object_set_new(jp, "total_cycles", rstat_json(&r->cycles));
		json_object_set_new(summary, "profile", jp);
	}
	if (s->a.golden_count)
		json_object_set_new(summary, "golden", golden_json(s));
	json_object_set_new(summary, "result", json_string(s->golden_ok ? "ok" : "golden-mismatch"));
	return summary;
}

/* summary.json staged, then every staged file renamed into place. */
static int run_commit(run_state *s)
{
	char *text = json_dumps(s->summary, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!text) {
		fprintf(stderr, "nbg run: out of memory writing summary.json\n");
		return NBG_EXIT_IO;
	}
	size_t tl = strlen(text);
	text[tl] = '\n'; /* the file ends with a newline: it takes the NUL's byte */
	int rc = stage_file(s->a.output_dir, "summary.json", text, tl + 1, s->staged, &s->staged_count);
	free(text);
	if (rc)
		return rc;
	cli_out **outs = calloc(s->staged_count, sizeof(*outs));
	if (!outs) {
		fprintf(stderr, "nbg run: out of memory\n");
		return NBG_EXIT_IO;
	}
	for (size_t i = 0; i < s->staged_count; i++)
		outs[i] = &s->staged[i].out;
	rc = cli_out_commit_all(outs, s->staged_count);
	free(outs);
	if (rc)
		return rc;
	return 0;
}

static void print_top(const run_state *s, size_t i)
{
	size_t k = s->a.top;
	nbg_tensor_top_entry *t = calloc(k, sizeof(*t));
	if (!t || !s->out_f[i]) {
		free(t);
		return;
	}
	size_t n = nbg_tensor_top(s->out_f[i], s->out_io[i].element_count, k, t);
	printf("--- Top%zu ---\n", k);
	for (size_t j = 0; j < n; j++)
		printf("%6llu: %.6f\n", (unsigned long long)t[j].index, (double)t[j].value);
	free(t);
}

/* What the run did, on stdout. */
static int run_report(run_state *s, int rc)
{
	const nbg_rt_session_info *r = nbg_rt_session_info_of(s->res);
	char t[200];
	printf("model: %s (target 0x%08x), %lu loop%s on %s via %s (%s)\n", cli_esc(s->a.model),
	       nbg_model_target(s->m), r->loops, r->loops == 1 ? "" : "s",
	       r->backend == NBG_RT_SELECT_CPU ? "this machine" : nbg_rt_backend_name(r->probe.backend),
	       cli_esc(r->library),
	       nbg_rt_select_name(r->backend));
	if (r->cid_known)
		printf("target: device CID %s%s\n", nbg_target_describe(r->cid, t, sizeof(t)),
		       r->target_forced ? " differs from the model's: run anyway (--force-target)" : ", matches");
	printf("times: create %.3f ms, run %.3f ms (mean), retrieve %.3f ms (mean), destroy %.3f ms\n",
	       r->create_ms, r->run.sum / (double)r->run.n, r->retrieve.sum / (double)r->retrieve.n, r->destroy_ms);
	const json_t *rt = json_object_get(s->summary, "runtime");
	if (json_string_value(json_object_get(rt, "caveat")))
		printf("caveat: %s\n", cli_esc(json_string_value(json_object_get(rt, "caveat"))));
	const json_t *ref = json_object_get(rt, "reference_semantics");
	for (size_t i = 0; i < json_array_size(ref); i++) {
		const json_t *o = json_array_get(ref, i);
		printf("op %lld [layer %s] %s: %s\n",
		       (long long)json_integer_value(json_object_get(o, "operation")),
		       cli_esc(json_string_value(json_object_get(o, "layer"))),
		       cli_esc(json_string_value(json_object_get(o, "what"))), REFERENCE_NOTE);
	}
	if (r->profile_known)
		printf("profile: inference %.0f us (mean), %.0f cycles (mean)\n",
		       r->inference_us.sum / (double)r->inference_us.n, r->cycles.sum / (double)r->cycles.n);
	for (size_t i = 0; i < s->n_out; i++) {
		char h[65];
		const nbg_rt_session_output *o = nbg_rt_session_output_at(s->res, i);
		nbg_hex32(o->sha256, h);
		printf("output %zu: %s ", i, format_name(o->data_format));
		print_shape(stdout, nbg_model_output_at(s->m, i));
		printf(" %zu bytes sha256 %s -> %s%s\n", o->size, h, cli_esc(s->staged[s->raw_staged[i]].final),
		       o->stable ? "" : " (differs between loops)");
		if (s->a.golden_count)
			printf("  golden %s: %s, %llu/%llu elements beyond %g, max abs diff %g\n",
			       cli_esc(s->a.goldens[i]), s->cmp[i].mismatches ? "MISMATCH" : "match",
			       (unsigned long long)s->cmp[i].mismatches, (unsigned long long)s->cmp[i].elements,
			       s->a.tolerance, s->cmp[i].max_abs_diff);
		if (s->a.top)
			print_top(s, i);
	}
	printf("summary: %s\n", cli_esc(s->staged[s->staged_count - 1].final));
	if (!s->golden_ok) {
		fprintf(stderr, "nbg run: golden mismatch (see summary.json)\n");
		rc = NBG_EXIT_INVALID;
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		rc = rc ? rc : NBG_EXIT_IO;
	return rc;
}

static int run_cleanup(run_state *s, int rc)
{
	for (size_t i = 0; s->staged && i < s->staged_count; i++)
		cli_out_free(&s->staged[i].out); /* a temporary not renamed is removed */
	nbg_rt_session_free(s->res);
	json_decref(s->summary);
	for (size_t i = 0; s->in_raw && i < s->n_in; i++)
		free(s->in_raw[i]);
	for (size_t i = 0; s->out_f && i < s->n_out; i++) {
		free(s->out_f[i]);
		free(s->gold_f[i]);
	}
	free(s->in_raw);
	free(s->bufs);
	free(s->out_io);
	free(s->out_f);
	free(s->gold_f);
	free(s->cmp);
	free(s->staged);
	free(s->raw_staged);
	cli_loaded_free(&s->model);
	return rc;
}

/* One model with its inputs: validate, convert, run, write, report. */
/* One model with its inputs: validate, convert, run, write, report.
 * *mismatch: 1 when the run completed and only a golden mismatched. */
static int run_one(const run_args *a, int *mismatch)
{
	run_state st, *s = &st;
	memset(s, 0, sizeof(*s));
	s->a = *a;
	s->golden_ok = 1;
	*mismatch = 0;
	int rc = cli_load(s->a.model, NULL, &s->model);
	if (rc != NBG_EXIT_OK) {
		cli_print_error(s->a.model, &s->model);
		if (rc == NBG_EXIT_INVALID)
			fprintf(stderr, "nbg run: model-invalid: refusing to run a file that fails validation\n");
		cli_loaded_free(&s->model);
		return rc;
	}
	s->m = s->model.model;
	s->n_in = nbg_model_input_count(s->m);
	s->n_out = nbg_model_output_count(s->m);
	if ((rc = run_inputs(s)) == 0 && (rc = run_session(s)) == 0 && (rc = run_outputs(s)) == 0) {
		s->summary = summary_json(s);
		if ((rc = run_commit(s)) == 0) {
			rc = run_report(s, rc);
			*mismatch = rc == NBG_EXIT_INVALID && !s->golden_ok;
		}
	}
	return run_cleanup(s, rc);
}

/* The file name output i of a sample's network is written under: its
 * [output] name without directories, or output_<i>.bin. */
static const char *out_base(const char *name)
{
	const char *slash = strrchr(name, '/');
	return slash ? slash + 1 : name;
}

/* A name nbg run writes itself for some output: summary.json,
 * output_<n>.npy, or output_<n>.bin for an output the sample names no file
 * for (n >= named). */
static int reserved_name(const char *base, size_t named)
{
	unsigned long long n;
	int end = 0;

	if (!strcmp(base, "summary.json"))
		return 1;
	if (sscanf(base, "output_%llu.npy%n", &n, &end) == 1 && end && !base[end])
		return 1;
	end = 0;
	return sscanf(base, "output_%llu.bin%n", &n, &end) == 1 && end && !base[end] && n >= named;
}

/* [output] names that would land on the same file in DIR -- two equal
 * names, or the name of a file nbg run writes itself -- are refused before
 * any network runs: one output would silently replace another. */
static int check_output_names(const char *sample, const nbg_sample *smp)
{
	for (size_t k = 0; k < smp->network_count; k++) {
		const nbg_sample_network *w = &smp->networks[k];
		const char **sorted = w->output_count ? malloc(w->output_count * sizeof(*sorted)) : NULL;
		const char *clash = NULL, *why = NULL;
		if (w->output_count && !sorted) {
			fprintf(stderr, "nbg run: out of memory\n");
			return NBG_EXIT_IO;
		}
		for (size_t i = 0; i < w->output_count; i++) {
			const char *b = sorted[i] = out_base(w->outputs[i]);
			if (!clash && (!*b || cli_dot_name(b)))
				clash = b, why = "is not a file name";
			else if (!clash && reserved_name(b, w->output_count))
				clash = b, why = "is a file nbg run writes itself (summary.json, "
						 "output_<n>.npy, output_<n>.bin)";
		}
		if (w->output_count)
			qsort(sorted, w->output_count, sizeof(*sorted), cli_name_order);
		for (size_t i = 1; !clash && i < w->output_count; i++)
			if (!cli_name_order(&sorted[i - 1], &sorted[i]))
				clash = sorted[i], why = "names two outputs";
		free(sorted);
		if (clash) {
			fprintf(stderr, "nbg run: %s: %s: the network at line %u: [output] '%s' %s: "
					"one output would replace another; nothing is run\n",
				nbg_code_name(NBG_E_SAMPLE_INVALID), cli_esc(sample), w->line,
				cli_esc(clash), why);
			return nbg_code_exit(NBG_E_SAMPLE_INVALID);
		}
	}
	return 0;
}

/* vpm_run's sample.txt: each [network] in turn, into DIR (one network) or
 * DIR/network_<n>; stops at the first failure other than a golden mismatch. */
static int run_sample(run_args *a)
{
	nbg_mapping map;
	nbg_error e;
	nbg_sample *smp = NULL;
	if (nbg_map_file(a->sample, &map, &e) != 0) {
		fprintf(stderr, "nbg run: %s\n", cli_esc_msg(e.message));
		return NBG_EXIT_IO;
	}
	nbg_code c = nbg_sample_parse((const char *)map.data, map.size, &smp, &e);
	nbg_unmap_file(&map);
	if (c != NBG_OK) {
		fprintf(stderr, "nbg run: %s: %s: %s\n", nbg_code_name(c), cli_esc(a->sample),
			cli_esc_msg(e.message));
		return nbg_code_exit(c);
	}
	int worst = 0, rc = check_output_names(a->sample, smp);
	if (rc == 0)
		rc = ensure_dir(a->output_dir);
	for (size_t k = 0; rc == 0 && k < smp->network_count; k++) {
		const nbg_sample_network *w = &smp->networks[k];
		run_args one = *a;
		char dir[NBG_RT_PATH_MAX];
		int mismatch;
		if (smp->network_count > 1) {
			snprintf(dir, sizeof(dir), "%s/network_%zu", a->output_dir, k);
			one.output_dir = dir;
		}
		one.model = w->model;
		one.inputs = (const char **)w->inputs;
		one.input_count = w->input_count;
		one.goldens = (const char **)w->goldens;
		one.golden_count = w->golden_count;
		one.out_names = w->outputs;
		one.out_name_count = w->output_count;
		printf("network %zu of %zu: %s\n", k + 1, smp->network_count, cli_esc(w->model));
		rc = run_one(&one, &mismatch);
		if (mismatch) {
			worst = rc; /* only a golden mismatched: the next network still runs */
			rc = 0;
		}
	}
	nbg_sample_free(smp);
	return rc ? rc : worst;
}

static void print_error_json(const nbg_error *e, const char *path)
{
	char *s = nbg_error_json(e, path);
	if (s)
		puts(s);
	free(s);
}

/* --check --json: {"model": {path, target}, ...nbg_cpu_plan_json's document
 * with every step}; nonzero when out of memory. */
static int print_plan_json(const char *path, uint32_t target, const nbg_cpu_plan *p)
{
	char *doc = nbg_cpu_plan_json(p, NBG_CPU_JSON_STEPS), t[16];
	json_t *plan = doc ? json_loads(doc, 0, NULL) : NULL, *o = json_object();
	free(doc);
	snprintf(t, sizeof(t), "0x%08x", target);
	json_object_set_new(o, "model", json_pack("{s:o, s:s}", "path", cli_json_path(path), "target", t));
	char *s = json_is_object(plan) && !json_object_update(o, plan)
			  ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER)
			  : NULL;
	json_decref(plan);
	json_decref(o);
	if (!s) {
		fprintf(stderr, "nbg run: out of memory writing the plan\n");
		return -1;
	}
	puts(s);
	free(s);
	return 0;
}

void cli_cpu_options(nbg_cpu_options *o, const cli_size *memory, const cli_size *work, const cli_size *steps)
{
	memset(o, 0, sizeof(*o));
	o->size = sizeof(*o);
	o->max_memory = memory && memory->set ? memory->value : cli_env_limit("NBG_MAX_CPU_MEMORY");
	o->max_work = work && work->set ? work->value : cli_env_limit("NBG_MAX_CPU_WORK");
	o->max_plan_steps = steps && steps->set ? steps->value : cli_env_limit("NBG_MAX_CPU_PLAN_STEPS");
}

/* --check on a model that could not be read, parsed or planned (model->err,
 * printed): exit code rc. */
static int check_failed(const run_args *a, cli_loaded *model, nbg_cpu_plan *p, int rc)
{
	if (a->json) /* the document nbg inspect --json writes for it */
		print_error_json(&model->err, a->model);
	cli_print_error(a->model, model);
	nbg_cpu_plan_free(p);
	cli_loaded_free(model);
	return rc;
}

/* --backend cpu --check: every operation's verdict; the exit code is the
 * one a run of the model would give for what the model decides
 * (nbg_cpu_plan_check: 4 for a refused operation or I/O records the
 * machine cannot hold, 1 over a limit), 0 when it runs whole. */
static int run_check(const run_args *a)
{
	cli_loaded model;
	int rc = cli_load(a->model, NULL, &model);
	if (rc != NBG_EXIT_OK)
		return check_failed(a, &model, NULL, rc);
	nbg_cpu_plan *p = NULL;
	nbg_error e;
	nbg_code built = nbg_cpu_plan_build_opts(model.map.data, model.map.size, &a->cpu, &p, &e);
	/* the plan read the file after the parse: a shrink since was zeros to
	 * it, whatever it concluded */
	if ((rc = cli_loaded_changed(a->model, &model, NULL)) != NBG_EXIT_OK)
		return check_failed(a, &model, p, rc);
	if (built != NBG_OK) {
		if (a->json)
			print_error_json(&e, a->model);
		cli_loaded_free(&model);
		return rt_exit("check", &e);
	}
	nbg_code verdict = nbg_cpu_plan_check(p, SIZE_MAX, &e);
	rc = verdict == NBG_OK ? NBG_EXIT_OK : nbg_code_exit(verdict);
	if (a->json) {
		rc = print_plan_json(a->model, nbg_model_target(model.model), p) ? NBG_EXIT_IO : rc;
	} else {
		printf("model: %s (target 0x%08x)\n", cli_esc(a->model), nbg_model_target(model.model));
		nbg_cpu_plan_print(stdout, p);
	}
	nbg_cpu_plan_free(p);
	cli_loaded_free(&model);
	return rc;
}

int cli_cmd_run(int argc, char **argv)
{
	run_args a;
	int mismatch;
	int rc = parse_run_args(argc, argv, &a);
	if (rc == 0 && a.check)
		rc = run_check(&a);
	else if (rc == 0)
		rc = a.sample ? run_sample(&a) : run_one(&a, &mismatch);
	free(a.inputs);
	free(a.goldens);
	return rc;
}
