/*
 * cmd_tensor.c - `nbg tensor`: converts between the tensor forms people
 * use (NumPy .npy, vpm_run's .tensor text, raw bytes) with one of a
 * model's I/O records, on any machine: an input made on a PC becomes the
 * exact bytes the record needs (quantized with the record's own
 * parameters), and an output_<i>.bin from a board becomes float32 .npy or
 * text with the outermost-first shape (doc/runtime.md, "nbg tensor").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_out.h"
#include "cmd_tensor.h"
#include "nbg/tensor.h"

static const char tensor_usage[] =
	"usage: nbg tensor --model MODEL.nb (--input N | --output N) FILE --out OUT\n"
	"                  [--from raw|npy|text] [--to raw|npy|text] [--keep-dtype]\n"
	"       nbg tensor --model MODEL.nb          (lists the I/O records)\n"
	"FILE and OUT: .npy (NumPy), .tensor/.txt (one number per line), anything else raw\n";

typedef struct tensor_args {
	const char *model, *file, *out;
	int side; /* 0: none given, 1: --input, 2: --output */
	unsigned long index;
	nbg_tensor_kind from, to; /* NBG_TENSOR_AUTO: by the file's extension */
	int keep_dtype;
} tensor_args;

static int tensor_usage_error(const char *what, const char *arg)
{
	char *e = arg ? nbg_text_escape(arg, 200) : NULL;
	fprintf(stderr, "nbg tensor: %s%s%s%s\n%s", what, e ? " '" : "", e ? e : "", e ? "'" : "",
		tensor_usage);
	free(e);
	return NBG_EXIT_USAGE;
}

static void put_escaped(FILE *f, const char *s)
{
	char *e = nbg_text_escape(s, SIZE_MAX);
	fputs(e ? e : "?", f);
	free(e);
}

static int parse_kind(const char *v, nbg_tensor_kind *k)
{
	static const nbg_tensor_kind kinds[] = { NBG_TENSOR_RAW, NBG_TENSOR_NPY, NBG_TENSOR_TEXT };
	for (size_t i = 0; i < 3; i++)
		if (!strcmp(v, nbg_tensor_kind_name(kinds[i]))) {
			*k = kinds[i];
			return 0;
		}
	return -1;
}

/* One option with its value; 0, or the exit code of a usage error. */
static int tensor_option(const char *o, const char *v, tensor_args *a)
{
	if (!strcmp(o, "--model")) {
		a->model = v;
	} else if (!strcmp(o, "--out") || !strcmp(o, "-o")) {
		a->out = v;
	} else if (!strcmp(o, "--from") || !strcmp(o, "--to")) {
		if (parse_kind(v, o[2] == 'f' ? &a->from : &a->to) != 0)
			return tensor_usage_error("a tensor kind is raw, npy or text, not", v);
	} else { /* --input / --output N */
		char *end;
		errno = 0;
		unsigned long n = strtoul(v, &end, 10);
		if (errno || *end || !*v || v[0] == '-' || n > 65535)
			return tensor_usage_error("a record index is an integer 0..65535, not", v);
		if (a->side)
			return tensor_usage_error("one record at a time: --input N or --output N", NULL);
		a->side = !strcmp(o, "--input") ? 1 : 2;
		a->index = n;
	}
	return 0;
}

static int parse_tensor_args(int argc, char **argv, tensor_args *a)
{
	memset(a, 0, sizeof(*a));
	/* "--" never arrives: the dispatcher passes an operand after it that
	 * starts with '-' as "./NAME". */
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!strcmp(s, "--keep-dtype")) {
			a->keep_dtype = 1;
		} else if (!strcmp(s, "--model") || !strcmp(s, "--out") || !strcmp(s, "-o") ||
			   !strcmp(s, "--from") || !strcmp(s, "--to") || !strcmp(s, "--input") ||
			   !strcmp(s, "--output")) {
			if (i + 1 >= argc)
				return tensor_usage_error("this option needs a value:", s);
			int rc = tensor_option(s, argv[++i], a);
			if (rc)
				return rc;
		} else if (s[0] == '-' && s[1]) {
			return tensor_usage_error("unknown option", s);
		} else if (!a->file) {
			a->file = s;
		} else {
			return tensor_usage_error("one tensor file at a time; also got", s);
		}
	}
	if (!a->model)
		return tensor_usage_error("no --model given (the records come from it)", NULL);
	if (!a->side && (a->file || a->out))
		return tensor_usage_error("--input N or --output N names the record to convert with",
					  NULL);
	if (a->side && (!a->file || !a->out))
		return tensor_usage_error(a->file ? "no --out given" : "no tensor FILE given", NULL);
	if (a->keep_dtype && a->side &&
	    (a->to ? a->to : nbg_tensor_kind_of(a->out)) != NBG_TENSOR_NPY)
		return tensor_usage_error("--keep-dtype applies to .npy output only", NULL);
	return 0;
}

/* "INT16, dynamic fixed point 15, shape [1,128,128,3], 49152 elements, 98304 bytes" */
static void describe_record(FILE *f, const nbg_io *io)
{
	const char *fmt = nbg_data_format_name(io->data_format);
	fprintf(f, "%s", fmt ? fmt : "unknown format");
	if (io->quant_format == NBG_QUANT_DFP)
		fprintf(f, ", dynamic fixed point %d", io->fixed_point_pos);
	else if (io->quant_format == NBG_QUANT_AFFINE)
		fprintf(f, ", affine scale %.9g zero point %d", (double)io->scale, io->zero_point);
	else
		fputs(", not quantized", f);
	fputs(", shape [", f);
	for (uint32_t d = 0; d < io->dim_count; d++)
		fprintf(f, "%s%u", d ? "," : "", nbg_io_dim_outer(io, d));
	fprintf(f, "], %llu elements, ", (unsigned long long)io->element_count);
	if (io->byte_size_known)
		fprintf(f, "%llu bytes", (unsigned long long)io->byte_size);
	else
		fputs("byte size unknown", f);
}

static void record_head(FILE *f, int side, size_t i, const nbg_io *io)
{
	fprintf(f, "%s %zu", side == 1 ? "input" : "output", i);
	if (io->has_name) {
		fputs(" \"", f);
		put_escaped(f, io->name);
		fputc('"', f);
	}
}

static int list_records(const nbg_model *m)
{
	for (int side = 1; side <= 2; side++) {
		size_t n = side == 1 ? nbg_model_input_count(m) : nbg_model_output_count(m);
		for (size_t i = 0; i < n; i++) {
			const nbg_io *io = side == 1 ? nbg_model_input_at(m, i) : nbg_model_output_at(m, i);
			const char *descr = nbg_npy_descr(io->data_format);
			record_head(stdout, side, i, io);
			fputs(": ", stdout);
			describe_record(stdout, io);
			printf(", npy dtype %s\n", descr ? descr : "none (float32 only)");
		}
	}
	return ferror(stdout) ? NBG_EXIT_IO : NBG_EXIT_OK;
}

static int tensor_fail(const char *path, nbg_tensor_kind kind, const nbg_error *e)
{
	fprintf(stderr, "nbg tensor: %s: ", nbg_code_name(e->code));
	put_escaped(stderr, path);
	fprintf(stderr, " (as %s) at offset %llu: ", nbg_tensor_kind_name(kind),
		(unsigned long long)e->offset);
	fprintf(stderr, "%s\n", nbg_esc_msg(e->message));
	return nbg_code_exit(e->code);
}

/* The line that says what was done: on standard output, or on standard
 * error when the tensor itself went to standard output. */
static int summary(const tensor_args *a, const nbg_io *io, nbg_tensor_kind from,
		   nbg_tensor_kind to, size_t size, int to_stdout)
{
	FILE *f = to_stdout ? stderr : stdout;

	record_head(f, a->side, a->index, io);
	fputs(" (", f);
	describe_record(f, io);
	fputs("): ", f);
	put_escaped(f, a->file);
	fprintf(f, " (%s) -> ", nbg_tensor_kind_name(from));
	if (to_stdout)
		fputs("standard output", f);
	else
		put_escaped(f, a->out);
	fprintf(f, " (%s%s, %zu bytes)\n", nbg_tensor_kind_name(to),
		to == NBG_TENSOR_NPY ? (a->keep_dtype ? " in the record's dtype" : " float32") : "",
		size);
	return ferror(f) ? NBG_EXIT_IO : NBG_EXIT_OK;
}

/* FILE shrank while it was read: what was converted is zeros. */
static int tensor_changed(const char *path)
{
	fprintf(stderr, "nbg tensor: %s: ", nbg_code_name(NBG_E_FILE_CHANGED));
	put_escaped(stderr, path);
	fputs(" shrank while it was being read (another process truncated it): nothing is "
	      "written\n", stderr);
	return nbg_code_exit(NBG_E_FILE_CHANGED);
}

/* FILE -> the record's raw bytes -> OUT. */
static int convert(const tensor_args *a, const nbg_io *io)
{
	nbg_tensor_kind from = a->from ? a->from : nbg_tensor_kind_of(a->file);
	nbg_tensor_kind to = a->to ? a->to : nbg_tensor_kind_of(a->out);
	nbg_mapping map;
	nbg_error e;
	if (nbg_map_file(a->file, &map, &e) != NBG_OK) {
		fprintf(stderr, "nbg tensor: %s\n", nbg_esc_msg(e.message));
		return NBG_EXIT_IO;
	}
	uint8_t *raw = NULL, *bytes = NULL;
	size_t raw_size = 0, size = 0;
	int rc = 0, to_stdout = 0;
	cli_out o;
	if (nbg_tensor_to_raw(io, from, map.data, map.size, &raw, &raw_size, &e) != NBG_OK)
		rc = tensor_fail(a->file, from, &e);
	else if (nbg_tensor_from_raw(io, to, a->keep_dtype, raw, raw_size, &bytes, &size, &e) !=
		 NBG_OK)
		rc = tensor_fail(a->out, to, &e);
	else if (nbg_input_shrank(a->file, &map))
		rc = tensor_changed(a->file);
	else if ((rc = cli_out_open(&o, "tensor", a->out, CLI_OUT_STDOUT)) == 0) {
		to_stdout = o.to_stdout;
		cli_out_write(&o, bytes, size);
		rc = cli_out_commit(&o);
		cli_out_free(&o);
	}
	nbg_unmap_file(&map);
	free(raw);
	free(bytes);
	return rc ? rc : summary(a, io, from, to, size, to_stdout);
}

int nbg_cmd_tensor(int argc, char **argv)
{
	tensor_args a;
	int rc = parse_tensor_args(argc, argv, &a);
	if (rc)
		return rc;
	nbg_loaded l;
	rc = nbg_load(a.model, NULL, &l);
	if (rc != NBG_EXIT_OK) {
		nbg_print_error(a.model, &l);
		nbg_loaded_free(&l);
		return rc;
	}
	const nbg_model *m = l.model;
	if (!a.side) {
		rc = list_records(m);
	} else if (a.index >= (a.side == 1 ? nbg_model_input_count(m) : nbg_model_output_count(m))) {
		size_t n = a.side == 1 ? nbg_model_input_count(m) : nbg_model_output_count(m);
		fprintf(stderr, "nbg tensor: --%s %lu: the model has %zu %s%s\n",
			a.side == 1 ? "input" : "output", a.index, n, a.side == 1 ? "input" : "output",
			n == 1 ? " (index 0)" : n ? "s (indexes from 0)" : "s");
		rc = NBG_EXIT_USAGE;
	} else {
		rc = convert(&a, a.side == 1 ? nbg_model_input_at(m, a.index)
					     : nbg_model_output_at(m, a.index));
	}
	nbg_loaded_free(&l);
	return rc;
}
