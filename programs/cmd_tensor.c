/*
 * cmd_tensor.c - `nbg tensor`: converts between the tensor forms people
 * use (NumPy .npy, vpm_run's .tensor text, raw bytes) with one of a
 * model's I/O records, on any machine: an input made on a PC becomes the
 * exact bytes the record needs (quantized with the record's own
 * parameters), and an output_<i>.bin from a board becomes float32 .npy or
 * text with the outermost-first shape (doc/runtime.md, "nbg tensor").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"
#include "cli_out.h"
#include "cmd_tensor.h"
#include "nbg/tensor.h"
#include "run_internal.h"

typedef struct tensor_args {
	const char *model, *file, *out;
	int side; /* 0: none given, 1: --input, 2: --output */
	unsigned long index;
	nbg_tensor_kind from, to; /* NBG_TENSOR_AUTO: by the file's extension */
	int keep_dtype;
	nbg_tensor_layout layout; /* --layout: a 4-D .npy FILE's */
	run_args image;           /* an image FILE's --mean, --scale, --channel-order */
} tensor_args;

static void put_escaped(FILE *f, const char *s)
{
	char *e = nbg_text_escape(s, SIZE_MAX);
	fputs(e ? e : "?", f);
	free(e);
}

/* The options from the table (cli_table.c); 0, or the exit code of a usage
 * error.  --from and --to are 1 + their place in raw|npy|text, which are
 * nbg_tensor_kind's values. */
static int parse_tensor_args(int argc, char **argv, tensor_args *a)
{
	cli_tensor_opts o = { 0 };
	const char **files;
	int n, rc = cli_parse_operands("tensor", argc, argv, &o, &files, &n);

	memset(a, 0, sizeof(*a));
	a->file = rc == NBG_EXIT_OK && n ? files[0] : NULL;
	if (rc == NBG_EXIT_OK && n > 1)
		rc = cli_usage("tensor", "one tensor file at a time; also got '%s'", cli_esc(files[1]));
	free(files);
	if (rc != NBG_EXIT_OK)
		return rc;
	a->model = o.model;
	a->out = o.out;
	a->from = (nbg_tensor_kind)o.from;
	a->to = (nbg_tensor_kind)o.to;
	a->keep_dtype = o.keep_dtype;
	a->layout = (nbg_tensor_layout)o.layout;
	a->image.mean = o.mean;
	a->image.scale = o.scale;
	a->image.channel_order = o.channel_order;
	a->image.max_memory = (uint64_t)2 << 30; /* nbg run's default --max-memory */
	a->side = o.input.set ? 1 : o.output.set ? 2 : 0;
	a->index = o.input.set ? o.input.value : o.output.value;
	if (!a->model)
		return cli_usage("tensor", "no --model given (the records come from it)");
	if (o.input.set && o.output.set)
		return cli_usage("tensor", "one record at a time: --input N or --output N");
	if (!a->side && (a->file || a->out))
		return cli_usage("tensor", "--input N or --output N names the record to convert with");
	if (a->side && (!a->file || !a->out))
		return cli_usage("tensor", a->file ? "no --out given" : "no tensor FILE given");
	if (a->keep_dtype && a->side &&
	    (a->to ? a->to : nbg_tensor_kind_of(a->out)) != NBG_TENSOR_NPY)
		return cli_usage("tensor", "--keep-dtype applies to .npy output only");
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
	fputs(cli_esc(path), stderr);
	fprintf(stderr, " (as %s) at offset %llu: ", nbg_tensor_kind_name(kind),
		(unsigned long long)e->offset);
	fprintf(stderr, "%s\n", cli_esc_msg(e->message));
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
	fputs(cli_esc(a->file), f);
	int image = !a->from && a->side == 1 ? run_image_kind(a->file) : RUN_IMAGE_NONE;
	fprintf(f, " (%s) -> ", image == RUN_IMAGE_PNG ? "png" : image == RUN_IMAGE_JPEG ? "jpeg"
							 : nbg_tensor_kind_name(from));
	if (to_stdout)
		fputs("standard output", f);
	else
		fputs(cli_esc(a->out), f);
	fprintf(f, " (%s%s, %zu bytes)\n", nbg_tensor_kind_name(to),
		to == NBG_TENSOR_NPY ? (a->keep_dtype ? " in the record's dtype" : " float32") : "",
		size);
	return ferror(f) ? NBG_EXIT_IO : NBG_EXIT_OK;
}

/* FILE shrank while it was read: what was converted is zeros. */
static int tensor_changed(const char *path)
{
	fprintf(stderr, "nbg tensor: %s: ", nbg_code_name(NBG_E_FILE_CHANGED));
	fputs(cli_esc(path), stderr);
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
		fprintf(stderr, "nbg tensor: %s\n", cli_esc_msg(e.message));
		return NBG_EXIT_IO;
	}
	uint8_t *raw = NULL, *bytes = NULL;
	size_t raw_size = 0, size = 0;
	int rc = 0, to_stdout = 0;
	cli_out o;
	/* an image: decoded and converted as nbg run converts it (run_image.c) */
	int image = !a->from && a->side == 1 && run_image_kind(a->file);
	nbg_code got = image ? run_image_to_raw("tensor", a->file, io, &a->image, map.data, map.size,
						&raw, &e)
			     : nbg_tensor_to_raw_layout(io, from, a->layout, map.data, map.size, &raw,
							&raw_size, &e);
	if (image && got == NBG_OK)
		raw_size = (size_t)io->byte_size;
	if (got != NBG_OK && image) { /* an image has no offset to name */
		fprintf(stderr, "nbg tensor: %s: %s: %s\n", nbg_code_name(e.code), cli_esc(a->file),
			cli_esc_msg(e.message));
		rc = nbg_code_exit(e.code);
	} else if (got != NBG_OK)
		rc = tensor_fail(a->file, from, &e);
	else if (nbg_tensor_from_raw(io, to, a->keep_dtype, raw, raw_size, &bytes, &size, &e) !=
		 NBG_OK)
		rc = tensor_fail(a->out, to, &e);
	else if (cli_input_shrank(a->file, &map))
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

int cli_cmd_tensor(int argc, char **argv)
{
	tensor_args a;
	int rc = parse_tensor_args(argc, argv, &a);
	if (rc)
		return rc;
	cli_loaded l;
	rc = cli_load(a.model, NULL, &l);
	if (rc != NBG_EXIT_OK) {
		cli_print_error(a.model, &l);
		cli_loaded_free(&l);
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
	cli_loaded_free(&l);
	return rc;
}
