/*
 * run_inputs.c - what `nbg run` reads before the device is touched: the
 * budget of what the run would write and hold, checked first, the inputs
 * converted to the records' bytes, the goldens as float.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "run_internal.h"

static int tensor_fail(const char *path, const char *what, const nbg_error *e)
{
	fprintf(stderr, "nbg run: %s: %s %s: %s\n", nbg_code_name(e->code), what, cli_esc(path),
		cli_esc_msg(e->message));
	return nbg_code_exit(e->code);
}

/* A file that shrank while it was read: what was read from it is zeros
 * (doc/security.md), so nothing computed from it may be run or written. */
int run_file_changed(const char *path, const char *what)
{
	fprintf(stderr, "nbg run: %s: %s %s shrank while it was being read (another process "
			"truncated it): nothing is run or written\n",
		nbg_code_name(NBG_E_FILE_CHANGED), what, cli_esc(path));
	return nbg_code_exit(NBG_E_FILE_CHANGED);
}

/* Reads a whole file into a tensor of the record io: an input (raw, with
 * --layout; an image with --mean, --scale, --channel-order) or a golden
 * (vals). */
static int load_tensor(const char *path, const nbg_io *io, const run_args *a, uint8_t **raw,
		       float **vals)
{
	nbg_mapping map;
	nbg_error e;
	if (nbg_map_file(path, &map, &e) != 0) {
		fprintf(stderr, "nbg run: %s\n", cli_esc_msg(e.message));
		return NBG_EXIT_IO;
	}
	size_t rs;
	nbg_tensor_kind kind = nbg_tensor_kind_of(path);
	nbg_code rc = raw && run_image_kind(path) ? run_image_to_raw("run", path, io, a, map.data, map.size, raw, &e)
		      : raw ? nbg_tensor_to_raw_layout(io, kind, a->layout, map.data, map.size, raw, &rs, &e)
			    : nbg_tensor_floats(io, kind, map.data, map.size, vals, &e);
	int shrank = cli_input_shrank(path, &map);
	nbg_unmap_file(&map);
	if (shrank)
		return run_file_changed(path, raw ? "input" : "golden");
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
int run_inputs(run_state *s)
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
		int rc = load_tensor(s->a.inputs[i], io, &s->a, &s->in_raw[i], NULL);
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
		int rc = i < s->a.golden_count ? load_tensor(s->a.goldens[i], io, &s->a, NULL, &s->gold_f[i]) : 0;
		if (rc)
			return rc;
	}
	return run_ensure_dir(s->a.output_dir);
}
