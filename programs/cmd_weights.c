/*
 * cmd_weights.c - `nbg weights FILE [--out DIR] [--json] [--op N] [--float]`:
 * the weights and biases of every NN-engine operation and TP fully
 * connected layer, decoded from its kernel stream (doc/weights.md).
 * Without --out a table (or, with --json, the "weights" document); with
 * --out DIR, per decoded operation N:
 *   opN_weights.npy        the stored codes, shape [out, z, ky, kx], uint8
 *                          (int8, int16, float16 for those kernels)
 *   opN_bias.npy           int32, the bias with the zero-point correction undone
 *   opN_bias_stored.npy    int16 kernels: int64, the 48-bit biases as stored
 *   opN_prelu_slope.npy    fp16 kernels: float32 per channel, the slope
 *   opN_scale.npy          float32 per channel, where the stream carries one
 *   opN_weights_float.npy  with --float, float32: (q - zp) x scale where a
 *                          scale is known, the values of float16 codes
 * and DIR/weights.json: the document with each operation's files (an
 * operation sharing the decode of a stream an operation before it names
 * refers to that one's files).  The export is one set (cli_out_dir): staged
 * in a directory beside DIR and put in its place whole, or refused before
 * anything is written (doc/weights.md, doc/security.md's OUT rules).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "cli_opts.h"
#include "cli_out.h"
#include "nbg/decoded.h"
#include "nbg/report.h"
#include "nbg/tensor.h"
#include "nbg/weights.h"

typedef struct weights_args {
	cli_weights_opts o;
	const char *file;
} weights_args;

/* The options from the table (cli_table.c); 0, or the usage exit code. */
static int parse_args(int argc, char **argv, weights_args *a)
{
	const char **files = calloc((size_t)argc + 1, sizeof(*files));
	int n = 0, rc = 0;

	memset(a, 0, sizeof(*a));
	if (!files) {
		fprintf(stderr, "nbg weights: out of memory\n");
		return NBG_EXIT_IO;
	}
	if (cli_parse_command("weights", argc, argv, &a->o, files, &n) != 0)
		rc = NBG_EXIT_USAGE;
	else if (n != 1)
		rc = n ? cli_usage("weights", "one file at a time; also got '%s'", cli_esc(files[1]))
		       : cli_usage("weights", "no FILE given (- reads standard input)");
	else if (a->o.dequantize && !a->o.out)
		rc = cli_usage("weights", "--float writes files: give --out DIR");
	a->file = n ? files[0] : NULL;
	free(files);
	return rc;
}

/* ------------------------------------------------------------- files */

/* The names an export writes: weights.json and opN_KIND.npy (cli_out_dir
 * replaces a directory holding only these). */
static int export_name(const char *name)
{
	static const struct {
		const char *name;
		int per_op; /* 1: after "opN_" */
	} files[] = { { "weights.json", 0 },     { "weights.npy", 1 }, { "bias.npy", 1 },
		      { "scale.npy", 1 },        { "weights_float.npy", 1 },
		      { "bias_stored.npy", 1 },  { "prelu_slope.npy", 1 } };
	size_t i = 0;
	long k;

	if (!strncmp(name, "op", 2)) {
		for (i = 2; name[i] >= '0' && name[i] <= '9';)
			i++;
		if (i == 2 || name[i++] != '_')
			return 0;
	}
	k = CLI_LOOKUP(files, name + i);
	return k >= 0 && files[k].per_op == (i > 0);
}

/* An export being staged: the directory and the files written to it, to
 * be named once the set is committed. */
typedef struct export_set {
	cli_out_dir dir;
	json_t *wrote; /* [name, bytes] pairs */
} export_set;

static int write_npy(export_set *x, const char *name, const char *descr, const uint64_t *shape,
		     uint32_t ndim, const void *data, size_t size)
{
	uint8_t *npy = NULL;
	size_t n = 0;
	nbg_error e;

	if (nbg_npy_encode(descr, shape, ndim, data, size, &npy, &n, &e) != NBG_OK) {
		fprintf(stderr, "nbg weights: %s: %s\n", nbg_code_name(e.code), cli_esc_msg(e.message));
		return nbg_code_exit(e.code);
	}
	int rc = cli_out_dir_write(&x->dir, name, npy, n);
	free(npy);
	if (!rc)
		json_array_append_new(x->wrote, json_pack("[s,I]", name, (json_int_t)n));
	return rc;
}

/* n values of w (2, 4 or 8) bytes as little-endian bytes (the .npy data
 * of "<f2", "<i4", "<f4", "<i8"). */
static uint8_t *le_bytes(const void *v, size_t n, unsigned w)
{
	uint8_t *b = malloc(n * w + 1);

	for (size_t i = 0; b && i < n; i++) {
		const uint8_t *p = (const uint8_t *)v + w * i;
		uint64_t x = 0;
		if (w == 8) {
			memcpy(&x, p, 8);
		} else if (w == 2) {
			uint16_t y;
			memcpy(&y, p, 2);
			x = y;
		} else {
			uint32_t y;
			memcpy(&y, p, 4);
			x = y;
		}
		for (unsigned k = 0; k < w; k++)
			b[w * i + k] = (uint8_t)(x >> (8 * k));
	}
	return b;
}

static uint8_t *le32_bytes(const void *v, size_t n)
{
	return le_bytes(v, n, 4);
}

/* The value of IEEE binary16 h (exact in a float). */
static float half_value(uint16_t h)
{
	int e = h >> 10 & 31;
	float m = (float)(h & 1023), v;

	if (e == 31)
		v = (h & 1023) ? NAN : INFINITY;
	else
		v = e ? ldexpf(1024.0f + m, e - 25) : ldexpf(m, -24);
	return h & 0x8000 ? -v : v;
}

/* (q - zp) x scale[channel] as float32 little-endian bytes; float16 codes:
 * their values. */
static uint8_t *dequantized(const nbg_weights_op *o)
{
	size_t n;
	const uint8_t *q = nbg_weights_op_codes(o, &n);
	const uint32_t *sh = nbg_weights_op_shape(o);
	const float *scale = nbg_weights_op_scale(o);
	size_t per = n / sh[0];
	float *f = malloc(n * sizeof(float) + 1);
	uint8_t *b;

	if (!f)
		return NULL;
	int int8 = nbg_weights_op_data_type(o) == 2;
	if (nbg_weights_op_code_bytes(o) == 4) { /* a table's float32 values */
		free(f);
		b = malloc(n * 4 + 1);
		if (b)
			memcpy(b, q, n * 4);
		return b;
	}
	for (size_t i = 0; !scale && i < n; i++) /* float16 codes: their values */
		f[i] = half_value((uint16_t)(q[2 * i] | q[2 * i + 1] << 8));
	for (size_t i = 0; scale && i < n; i++)
		f[i] = (float)((int8 ? (int32_t)(int8_t)q[i] : (int32_t)q[i]) -
			       nbg_weights_op_zero_point(o)) *
		       scale[i / per];
	b = le32_bytes(f, n);
	free(f);
	return b;
}

/* The files of one decoded operation; their names go into `files`. */
static int write_op(export_set *x, const nbg_weights_op *o, int dequantize, json_t *files)
{
	const uint32_t *sh = nbg_weights_op_shape(o);
	uint64_t shape[4] = { sh[0], sh[1], sh[2], sh[3] };
	size_t n, op = nbg_weights_op_operation(o);
	const uint8_t *codes = nbg_weights_op_codes(o, &n);
	char name[64];
	int rc;

	unsigned cb = nbg_weights_op_code_bytes(o);
	int fp16 = cb == 2 && nbg_weights_op_data_type(o) == 1, lut = cb == 4;
	const void *q16 = codes;
	snprintf(name, sizeof(name), "op%zu_weights.npy", op);
	if ((rc = write_npy(x, name, nbg_weights_op_npy_descr(o), shape, 4, codes, n * cb)))
		return rc;
	json_object_set_new(files, "weights", json_string(name));
	struct {
		const char *key, *descr;
		const void *v;
		int dequantize;
	} arrays[5] = { { "bias", "<i4", nbg_weights_op_bias(o), 0 },
			{ "scale", "<f4", nbg_weights_op_scale(o), 0 },
			{ "weights_float", "<f4", !dequantize ? NULL : fp16 || lut ? (const void *)q16
							   : nbg_weights_op_scale(o), 1 },
			/* int16 kernels: 48-bit biases as stored */
			{ "bias_stored", "<i8", nbg_weights_op_bias_stored64(o), 0 },
			/* fp16 PReLU layers: the slope per channel */
			{ "prelu_slope", "<f4", nbg_weights_op_prelu_slope(o), 0 } };
	for (int i = 0; i < 5; i++) {
		unsigned w = arrays[i].descr[2] == '8' ? 8 : 4;
		uint8_t *b;
		json_object_set_new(files, arrays[i].key, json_null());
		if (!arrays[i].v)
			continue;
		b = arrays[i].dequantize ? dequantized(o) : le_bytes(arrays[i].v, sh[0], w);
		if (!b) {
			fprintf(stderr, "nbg weights: out of memory\n");
			return NBG_EXIT_IO;
		}
		snprintf(name, sizeof(name), "op%zu_%s.npy", op, arrays[i].key);
		/* [out, z, ky, kx] for the weights, [out] for the rest */
		rc = write_npy(x, name, arrays[i].descr, shape, arrays[i].dequantize ? 4 : 1, b,
			       arrays[i].dequantize ? n * 4 : (size_t)sh[0] * w);
		free(b);
		if (rc)
			return rc;
		json_object_set_new(files, arrays[i].key, json_string(name));
	}
	json_object_set_new(files, "lut_inputs", json_null());
	const uint16_t *in = nbg_weights_op_lut_inputs(o);
	if (in) { /* NN_LUT tables on fp16 data: each entry's input */
		uint8_t *b = le_bytes(in, sh[0], 2);
		if (!b) {
			fprintf(stderr, "nbg weights: out of memory\n");
			return NBG_EXIT_IO;
		}
		snprintf(name, sizeof(name), "op%zu_lut_inputs.npy", op);
		rc = write_npy(x, name, "<f2", shape, 1, b, (size_t)sh[0] * 2);
		free(b);
		if (rc)
			return rc;
		json_object_set_new(files, "lut_inputs", json_string(name));
	}
	json_object_set_new(files, "lut_table", json_null());
	const uint8_t *table = nbg_weights_op_lut_table(o, NULL);
	if (table) { /* a convolution's NN_LUT operation: the table after its kernels */
		uint64_t one = 1024; /* entries (nbg/weights.h) */
		snprintf(name, sizeof(name), "op%zu_lut_table.npy", op);
		rc = write_npy(x, name, "<f4", &one, 1, table, one * 4);
		if (rc)
			return rc;
		json_object_set_new(files, "lut_table", json_string(name));
	}
	/* where the floats come from */
	json_object_set_new(files, "float_source",
			    !dequantize ? json_null()
			    : lut	? json_string("table values (float32)")
			    : fp16	? json_string("float16 codes")
			    : nbg_weights_op_scale(o)
				    ? json_string("per-channel scale carried by the stream")
				    : json_null());
	if (dequantize && !fp16 && !lut && !nbg_weights_op_scale(o))
		printf("op %zu: no float weights: the stream carries no scale and the file holds "
		       "no quantization record for its weights\n", op);
	return 0;
}

/* ---------------------------------------------------------- documents */

/* The library's document (version, path, "weights"), restricted to the
 * selected operation when --op was given; NULL when memory runs out. */
static json_t *document(nbg_decoded *d, const weights_args *a)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	json_t *root = NULL, *ops;
	int ok = f && nbg_json_document_write_decoded(f, d, a->file,
						       NBG_JSON_DOC_NO_CORE | NBG_JSON_DOC_WEIGHTS,
						       NULL) == NBG_OK;

	if (f && fclose(f) != 0)
		ok = 0;
	if (ok)
		root = json_loads(s, 0, NULL);
	free(s);
	if (!root)
		return NULL;
	ops = json_object_get(json_object_get(root, "weights"), "operations");
	for (size_t i = json_array_size(ops); a->o.op.set && i-- > 0;)
		if (json_integer_value(json_object_get(json_array_get(ops, i), "operation")) !=
		    (json_int_t)a->o.op.value)
			json_array_remove(ops, i);
	return root;
}

/* Each operation's files: its own, or (an operation naming the stream of
 * one exported before it, whose decode it shares) a reference to that
 * operation's files, "same_as_operation" saying which: a stream's arrays are
 * written once.  0 or the exit code. */
static int write_ops(export_set *x, const nbg_weights *w, const weights_args *a, json_t *ops)
{
	json_t **files_of = calloc(nbg_weights_count(w) + 1, sizeof(*files_of));
	int rc = files_of ? 0 : NBG_EXIT_IO;

	for (size_t i = 0, k = 0; !rc && i < nbg_weights_count(w); i++) {
		const nbg_weights_op *o = nbg_weights_at(w, i);
		size_t f = nbg_weights_op_first(o);
		json_t *files;
		if (a->o.op.set && nbg_weights_op_operation(o) != a->o.op.value)
			continue;
		if (f != i && files_of[f]) {
			files = json_deep_copy(files_of[f]);
			json_object_set_new(files, "same_as_operation",
					    json_integer((json_int_t)nbg_weights_op_operation(
						    nbg_weights_at(w, f))));
		} else {
			files = json_object();
			if (nbg_weights_op_status(o) == NBG_WEIGHTS_DECODED &&
			    !(rc = write_op(x, o, a->o.dequantize, files)))
				files_of[i] = files;
		}
		json_object_set_new(json_array_get(ops, k++), "files", files);
	}
	if (!files_of)
		fprintf(stderr, "nbg weights: out of memory\n");
	free(files_of);
	return rc;
}

/* The export as one set (cli_out_dir): the files and weights.json staged
 * beside DIR, then put in its place together; or nothing written, as when
 * the file shrank meanwhile (what was read from it since is zeros). */
static int write_out(nbg_decoded *d, cli_loaded *l, const nbg_graph *g, const nbg_commands *c,
		     const nbg_weights *w, const weights_args *a)
{
	json_t *doc = document(d, a);
	export_set x = { .wrote = json_array() };
	char *text = NULL;
	int rc;

	if (!doc || !x.wrote) {
		fprintf(stderr, "nbg weights: out of memory\n");
		json_decref(doc);
		json_decref(x.wrote);
		return NBG_EXIT_IO;
	}
	rc = cli_out_dir_open(&x.dir, "weights", a->o.out, export_name);
	if (!rc)
		rc = write_ops(&x, w, a, json_object_get(json_object_get(doc, "weights"),
							   "operations"));
	if (!rc && !(text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER))) {
		fprintf(stderr, "nbg weights: out of memory\n");
		rc = NBG_EXIT_IO;
	}
	if (!rc)
		rc = cli_out_dir_write(&x.dir, "weights.json", text, strlen(text));
	/* everything written was read from the file after the parse */
	if (!rc && (rc = cli_loaded_changed(a->file, l, "nothing is written")) != 0)
		cli_print_error(a->file, l);
	if (!rc)
		rc = cli_out_dir_commit(&x.dir);
	else
		cli_out_dir_discard(&x.dir);
	for (size_t i = 0; !rc && i < json_array_size(x.wrote); i++) {
		json_t *e = json_array_get(x.wrote, i);
		printf("wrote %s/%s (%" JSON_INTEGER_FORMAT " bytes)\n", cli_esc(a->o.out),
		       json_string_value(json_array_get(e, 0)), json_integer_value(json_array_get(e, 1)));
	}
	if (!rc)
		printf("wrote %s/weights.json\n", cli_esc(a->o.out));
	free(text);
	json_decref(doc);
	json_decref(x.wrote);
	return rc;
}

static int report(nbg_decoded *d, const nbg_model *m, const nbg_graph *g, const nbg_commands *c,
		  const nbg_weights *w, const weights_args *a)
{
	if (a->o.json) {
		json_t *doc = document(d, a);
		if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
			json_decref(doc);
			return NBG_EXIT_IO;
		}
		json_decref(doc);
		putchar('\n');
		return 0;
	}
	printf("NBG file: %s\n", cli_esc(a->file));
	if (!a->o.op.set) {
		nbg_text_weights(stdout, m, g, c, w);
		return 0;
	}
	for (size_t i = 0; i < nbg_weights_count(w); i++)
		if (nbg_weights_op_operation(nbg_weights_at(w, i)) == a->o.op.value)
			nbg_text_weights_op(stdout, g, nbg_weights_at(w, i));
	return 0;
}

/* The operation --op names; NULL (with a message) when there is none. */
static const nbg_weights_op *selected(const nbg_weights *w, const weights_args *a)
{
	for (size_t i = 0; i < nbg_weights_count(w); i++)
		if (nbg_weights_op_operation(nbg_weights_at(w, i)) == a->o.op.value)
			return nbg_weights_at(w, i);
	fprintf(stderr, "nbg weights: %s has no NN-engine operation or TP fully connected layer "
			"%u; those it has are:", cli_esc(a->file), a->o.op.value);
	for (size_t i = 0; i < nbg_weights_count(w) && i < 64; i++)
		fprintf(stderr, " %zu", nbg_weights_op_operation(nbg_weights_at(w, i)));
	fprintf(stderr, "%s\n", nbg_weights_count(w) > 64 ? " ..." : nbg_weights_count(w) ? "" : " none");
	return NULL;
}

int cli_cmd_weights(int argc, char **argv)
{
	weights_args a;
	cli_loaded l;
	nbg_decoded *d = NULL;
	const nbg_graph *g = NULL;
	const nbg_commands *c = NULL;
	const nbg_weights *w = NULL;
	const nbg_weights_op *one = NULL;
	nbg_error err;
	int rc = parse_args(argc, argv, &a);

	if (rc)
		return rc;
	if ((rc = cli_load(a.file, NULL, &l)) != NBG_EXIT_OK) {
		cli_print_error(a.file, &l);
		cli_loaded_free(&l);
		return rc;
	}
	if (nbg_decoded_new(l.model, &d, &err) != NBG_OK || nbg_decoded_graph(d, &g, &err) != NBG_OK ||
	    nbg_decoded_commands(d, &c, &err) != NBG_OK ||
	    nbg_decoded_weights(d, &w, &err) != NBG_OK) {
		fprintf(stderr, "nbg weights: %s: %s\n", cli_esc(a.file), cli_esc_msg(err.message));
		rc = nbg_code_exit(err.code);
	} else if ((rc = cli_loaded_changed(a.file, &l, NULL)) != 0) {
		/* the decode read the file after the parse: a shrink since is zeros */
		cli_print_error(a.file, &l);
	} else if (a.o.op.set && !(one = selected(w, &a))) {
		rc = NBG_EXIT_USAGE;
	} else if (a.o.out) {
		rc = write_out(d, &l, g, c, w, &a);
	} else if (!(rc = report(d, l.model, g, c, w, &a)) &&
		   (rc = cli_loaded_changed(a.file, &l, "the report printed for it is void")) != 0) {
		cli_print_error(a.file, &l);
	}
	/* the one operation asked for was not decoded: a check failed */
	if (!rc && one && nbg_weights_op_status(one) != NBG_WEIGHTS_DECODED)
		rc = NBG_EXIT_INVALID;
	nbg_decoded_free(d);
	cli_loaded_free(&l);
	return rc;
}
