/*
 * run_dump.c - `nbg run --backend cpu --dump DIR`: every executed
 * operation's output as the CPU backend wrote it (nbg_cpu_run_dump), one
 * .npy per tensor in execution order, and DIR/dump.json listing them
 * (doc/debugging.md).  The set is staged beside DIR and put in its place
 * whole with the run's outputs (cli_out_dir), or nothing is written: DIR
 * must be new, and a dump over --dump-limit is refused before anything
 * is written or run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run_internal.h"

/* --dump-limit's default: far above a small network's dump (LeNet's is
 * under 100 KiB), the bound --max-output puts on a run's outputs. */
#define DUMP_LIMIT ((uint64_t)1 << 30)
/* Bytes counted per file beside its data: the .npy header (nbg_npy_encode
 * pads it to 64 or 128), and dump.json's entry. */
#define DUMP_NPY_HEADER 128u
#define DUMP_JSON_ENTRY 1024u
#define DUMP_NAME_MAX 40

struct run_dump {
	cli_out_dir dir;
	json_t *ops;
	const nbg_model *m;
	int dump_float;
	size_t seq, width;
	nbg_code failed;          /* the first write that failed (the hook stops the run) */
	int exit;                 /* its exit code, the message printed */
};
typedef struct run_dump dump_set;

int run_dump_args(run_args *a, const cli_run_opts *o)
{
	a->dump = o->dump;
	a->dump_float = o->dump_float;
	a->dump_limit = o->dump_limit.set ? o->dump_limit.value : DUMP_LIMIT;
	if (!a->dump && (a->dump_float || o->dump_limit.set))
		return cli_usage("run", "--dump-float and --dump-limit apply with --dump DIR");
	if (a->dump && (a->backend != NBG_RT_SELECT_CPU || a->check || a->sample || a->batch))
		return cli_usage("run", "--dump DIR writes what the CPU backend computes: give --backend cpu "
			      "and one model with its inputs (not --check, --sample or --batch)");
	return 0;
}

/* The layer's name as a file name's part: letters, digits, '-', '_' and
 * '.' kept, every other byte '_', at most DUMP_NAME_MAX of them. */
static void name_part(const char *layer, char *out)
{
	size_t n = 0;
	for (const unsigned char *c = (const unsigned char *)layer; *c && n < DUMP_NAME_MAX; c++)
		out[n++] = (char)((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
					  (*c >= 'A' && *c <= 'Z') || *c == '-' || *c == '_' || *c == '.'
				  ? *c : '_');
	if (!n)
		memcpy(out + n, "layer", 5), n = 5;
	out[n] = '\0';
}

/* No file is an earlier dump's: DIR must be new (cli_out_dir_open). */
static int mine_none(const char *name)
{
	(void)name;
	return 0;
}

static json_t *shape_json(const nbg_cpu_tensor *t)
{
	json_t *a = json_array();
	for (uint32_t d = 0; d < t->ndim; d++)
		json_array_append_new(a, json_integer((json_int_t)t->shape[d]));
	return a;
}

/* What the dump knows of a tensor's quantization: an output record's
 * own, fp16 values by value, else the zero point its command states (the
 * scale of an inner tensor is not in the file). */
static json_t *quant_json(const dump_set *d, const nbg_cpu_tensor *t, const nbg_io **io)
{
	*io = t->output_record >= 0 ? nbg_model_output_at(d->m, (size_t)t->output_record) : NULL;
	if (*io && (*io)->data_format != t->data_format)
		*io = NULL;
	if (*io)
		return json_pack("{s:s, s:f, s:I, s:I}", "format", nbg_quant_format_name((*io)->quant_format),
				 "scale", (double)(*io)->scale, "zero_point", (json_int_t)(*io)->zero_point,
				 "fixed_point_pos", (json_int_t)(*io)->fixed_point_pos);
	if (t->data_format != 2)
		return json_pack("{s:s}", "format", "none");
	return json_pack("{s:o, s:n}", "zero_point",
			 t->zero_point_known ? json_integer(t->zero_point) : json_null(), "scale");
}

/* A .npy of the tensor's elements (descr) into the set: 0 or the exit code. */
static int write_npy(dump_set *d, const char *name, const char *descr, const nbg_cpu_tensor *t,
		     const void *data, size_t size)
{
	uint8_t *buf = NULL;
	size_t n = 0;
	nbg_error e;
	if (nbg_npy_encode(descr, t->shape, t->ndim, data, size, &buf, &n, &e) != NBG_OK) {
		fprintf(stderr, "nbg run: %s: %s\n", nbg_code_name(e.code), cli_esc_msg(e.message));
		return nbg_code_exit(e.code);
	}
	int rc = cli_out_dir_write(&d->dir, name, buf, n);
	free(buf);
	return rc;
}

/* The float32 file beside the tensor's, where its values are known:
 * fp16 by value, an output record's elements dequantized; its name or
 * NULL. */
static json_t *write_float(dump_set *d, const nbg_cpu_tensor *t, const nbg_io *io, const char *stem, int *rc)
{
	unsigned es = nbg_tensor_element_size(t->data_format);
	uint64_t count = t->bytes / (es ? es : 1);
	if (!d->dump_float || (!io && t->data_format != 1))
		return json_null();
	nbg_io fp16 = { .data_format = 1, .element_count = count, .byte_size = t->bytes };
	float *f = malloc(count ? (size_t)count * sizeof(float) : 1);
	nbg_error e;
	char name[DUMP_NAME_MAX + 64];
	snprintf(name, sizeof(name), "%s.f32.npy", stem);
	if (!f || nbg_tensor_dequantize(io ? io : &fp16, t->data, (size_t)t->bytes, f, count, &e) != NBG_OK) {
		*rc = f ? nbg_code_exit(e.code) : NBG_EXIT_IO;
		fprintf(stderr, "nbg run: %s\n", f ? cli_esc_msg(e.message) : "out of memory");
	} else {
		*rc = write_npy(d, name, "<f4", t, f, (size_t)count * sizeof(float));
	}
	free(f);
	return *rc ? json_null() : json_string(name);
}

/* The hook (nbg_cpu_run_dump): the tensor's file(s) and its dump.json entry. */
static nbg_code dump_tensor(void *ctx, const nbg_cpu_tensor *t)
{
	dump_set *d = ctx;
	char part[DUMP_NAME_MAX + 1], stem[DUMP_NAME_MAX + 48], name[DUMP_NAME_MAX + 64];
	const nbg_io *io;
	name_part(t->layer, part);
	snprintf(stem, sizeof(stem), "%0*zu-op%zu-%s%s", (int)d->width, d->seq++, t->operation, part,
		 t->whole_layer ? "-whole" : "");
	snprintf(name, sizeof(name), "%s.npy", stem);
	json_t *q = quant_json(d, t, &io);
	int rc = write_npy(d, name, nbg_npy_descr(t->data_format), t, t->data, (size_t)t->bytes);
	json_t *ff = rc ? json_null() : write_float(d, t, io, stem, &rc);
	json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:s, s:o, s:o, s:s, s:o, s:I, s:b, s:I, s:o}",
			      "operation", (json_int_t)t->operation, "layer_id", (json_int_t)t->layer_id,
			      "layer", t->layer, "operator", t->kind ? t->kind : "?", "file", name,
			      "float_file", ff, "shape", shape_json(t), "data_type",
			      nbg_data_format_name(t->data_format), "quantization", q,
			      "bytes", (json_int_t)t->bytes, "whole_layer", t->whole_layer,
			      "tiles", (json_int_t)(t->whole_layer ? t->tiles : 1), "output_record",
			      t->output_record >= 0 ? json_integer(t->output_record) : json_null());
	if (!o || json_array_append_new(d->ops, o)) {
		if (!rc)
			fprintf(stderr, "nbg run: %s: dump.json's entry for operation %zu could not be made "
					"(out of memory?)\n", nbg_code_name(NBG_E_IO), t->operation);
		rc = rc ? rc : NBG_EXIT_IO;
	}
	if (rc) {
		d->exit = rc;
		d->failed = NBG_E_IO;
	}
	return rc ? NBG_E_IO : NBG_OK;
}

/* What the dump writes, against --dump-limit: 0, or WORK_LIMIT's exit with
 * the figure, the limit and how to raise it. */
static int dump_fits(const run_state *s, const nbg_cpu_tensor *list, size_t n)
{
	uint64_t total = DUMP_JSON_ENTRY;
	for (size_t i = 0; i < n && total < UINT64_MAX / 8; i++) {
		uint64_t b = list[i].bytes < UINT64_MAX / 8 ? list[i].bytes : UINT64_MAX / 8; /* saturated */
		total += b + DUMP_NPY_HEADER + DUMP_JSON_ENTRY;
		unsigned es = nbg_tensor_element_size(list[i].data_format);
		if (s->a.dump_float) /* a float32 per element */
			total += b / (es ? es : 1) * 4 + DUMP_NPY_HEADER;
	}
	if (total <= s->a.dump_limit)
		return 0;
	fprintf(stderr, "nbg run: %s: the dump of %zu tensors would write %llu bytes, over --dump-limit "
			"%llu; nothing was written (give --dump-limit SIZE, or none)\n",
		nbg_code_name(NBG_E_WORK_LIMIT), n, (unsigned long long)total,
		(unsigned long long)s->a.dump_limit);
	return nbg_code_exit(NBG_E_WORK_LIMIT);
}

/* DIR must be new: OUTPUT_EXISTS's exit when anything is there (another
 * failure to look is cli_out_dir_open's to report). */
static int dump_new(const char *dir)
{
	struct stat st;
	if (lstat(dir, &st) != 0)
		return 0;
	fprintf(stderr, "nbg run: %s: %s exists; --dump writes a new directory (nothing was written)\n",
		nbg_code_name(NBG_E_OUTPUT_EXISTS), cli_esc(dir));
	return nbg_code_exit(NBG_E_OUTPUT_EXISTS);
}

/* The dump's directory staged (s->dump): 0 or the exit code. */
static int dump_open(run_state *s)
{
	dump_set *d = calloc(1, sizeof(*d));
	if (!d) {
		fprintf(stderr, "nbg run: %s: out of memory\n", nbg_code_name(NBG_E_OUT_OF_MEMORY));
		return NBG_EXIT_IO;
	}
	d->m = s->m;
	d->dump_float = s->a.dump_float;
	d->ops = json_array();
	int rc = cli_out_dir_open(&d->dir, "run", s->a.dump, mine_none);
	if (rc) {
		json_decref(d->ops);
		free(d);
		return rc;
	}
	s->dump = d;
	return 0;
}

int run_dump_check(run_state *s)
{
	if (!s->a.dump)
		return 0;
	int rc = dump_new(s->a.dump);
	if (rc || !s->plan) /* no plan: the session refuses the model as it would its own */
		return rc;
	nbg_cpu_tensor *list = NULL;
	nbg_error e;
	if (nbg_cpu_dump_list(s->plan, SIZE_MAX, &list, &s->dump_count, &e) != NBG_OK)
		return run_rt_exit("run", &e);
	rc = dump_fits(s, list, s->dump_count);
	free(list);
	return rc ? rc : dump_open(s);
}

int run_dump(run_state *s)
{
	dump_set *d = s->dump;
	if (!d)
		return 0;
	nbg_cpu_state *st = NULL;
	nbg_error e;
	for (size_t k = s->dump_count; k >= 10; k /= 10)
		d->width++;
	d->width = d->width < 3 ? 3 : d->width + 1;
	nbg_code rc = nbg_cpu_run_dump(s->plan, s->bufs, s->n_in, SIZE_MAX, dump_tensor, d, &st, &e);
	nbg_cpu_state_free(st);
	if (rc != NBG_OK && d->exit)
		return d->exit;
	if (rc != NBG_OK)
		return run_rt_exit("run", &e);
	return 0;
}

int run_dump_commit(run_state *s)
{
	dump_set *d = s->dump;
	if (!d)
		return 0;
	json_t *doc = json_pack("{s:o, s:s, s:O}", "model", cli_json_path(s->a.model), "backend", "cpu",
				"operations", d->ops);
	char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(doc);
	int rc = text ? cli_out_dir_write(&d->dir, "dump.json", text, strlen(text)) : NBG_EXIT_IO;
	if (!text)
		fprintf(stderr, "nbg run: %s: out of memory writing dump.json\n", nbg_code_name(NBG_E_OUT_OF_MEMORY));
	free(text);
	if (rc == 0)
		rc = cli_out_dir_commit(&d->dir);
	return rc;
}

void run_dump_free(run_state *s)
{
	dump_set *d = s->dump;
	if (!d)
		return;
	cli_out_dir_discard(&d->dir);
	json_decref(d->ops);
	free(d);
	s->dump = NULL;
}
