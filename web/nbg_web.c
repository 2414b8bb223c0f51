/*
 * nbg_web.c - what the page's worker calls in libnbg compiled to
 * WebAssembly (web/build.sh).  Every result is text the library already
 * writes for the command line (the JSON report of `nbg inspect --json`, the
 * SVG of `nbg map`, the DOT of `nbg graph`, the JSON of `nbg diff --json`,
 * the nbg_meta.json of `nbg inspect --format meta`, the status of each
 * kernel stream as `nbg weights` prints it), wrapped in one small
 * JSON object so the page can tell a result from a failure:
 *
 *   {"ok": true, "text": "..."}  or  {"ok": false, "error": {...}}
 *
 * Two slots hold files: 0 the file shown, 1 the file it is compared with.
 * A slot keeps the bytes (owned here) and the parsed model.  The parse runs
 * on the calling thread (the worker); the page bounds its time.
 *
 * The CPU backend runs slot 0's model in the page (nbg_web_cpu_*): its
 * plan as `nbg run --backend cpu --check --json` writes it, and a run on
 * the inputs the page hands over, each file read as `nbg run --input`
 * reads it (raw, .npy or .tensor by its name).
 *
 * Results are malloc'd; the caller frees them with nbg_web_free.
 */
/* nbg_sha256_bytes, nbg_crc32_bytes, nbg_hex32: the page links libnbg into
 * its one WebAssembly module, as nbg links libnbg.a */
#define NBG_STATIC_LINKING_ONLY
#include <emscripten/emscripten.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbg/commands.h"
#include "nbg/cpu.h"
#include "nbg/decoded.h"
#include "nbg/diff.h"
#include "nbg/export.h"
#include "nbg/ledger.h"
#include "nbg/nbg.h"
#include "nbg/report.h"
#include "nbg/runtime.h"
#include "nbg/tensor.h"
#include "nbg/weights.h"

typedef struct slot {
	uint8_t *data;
	size_t size;
	nbg_model *model;   /* NULL when the file failed */
	nbg_decoded *dec;   /* model's graph, commands, weights, ledger: each decoded once */
	int unverified;     /* a checksum failed (err); the model was kept past it */
	nbg_error err;      /* the failure of the strict parse */
} slot;

static slot slots[2];

/* The CPU backend's files for slot 0: the inputs handed over (a file's
 * content and its name, which says how to read it) and the outputs of the
 * last run as float32 .npy files. */
typedef struct cpu_file {
	uint8_t *data;
	size_t size;
	nbg_tensor_kind kind; /* how an input is read: from its whole name */
} cpu_file;

/* The outputs of the last run are kept three ways: out (float32 .npy
 * files), raw (the record's bytes, for a comparison with a golden file),
 * and, when the dump fits in the run's bound (WEB_DUMP_LIMIT at most),
 * every executed operation's output (dump: nbg_cpu_dump_list's tensors,
 * each one's data a copy; layer and kind NULL, since the plan is gone
 * after the run).  gold holds the golden files handed over, one per
 * output. */
static struct {
	cpu_file *in, *out, *raw, *gold;
	size_t in_count, out_count, raw_count, gold_count;
	nbg_cpu_tensor *dump;
	size_t dump_count, dump_seen;
} cpu;

/* The most bytes of per-operation outputs a run keeps in the page: a
 * quarter of the memory a plan may use (web_cpu_limits), beside the file,
 * the machine and the outputs in a heap of 2 GB at most. */
#define WEB_DUMP_LIMIT ((uint64_t)256 << 20)

static void cpu_files_free(cpu_file **f, size_t *n)
{
	for (size_t i = 0; *f && i < *n; i++)
		free((*f)[i].data);
	free(*f);
	*f = NULL;
	*n = 0;
}

static void cpu_dump_free(void)
{
	for (size_t k = 0; cpu.dump && k < cpu.dump_seen; k++)
		free((void *)cpu.dump[k].data);
	free(cpu.dump);
	cpu.dump = NULL;
	cpu.dump_count = cpu.dump_seen = 0;
}

static void cpu_clear(void)
{
	cpu_files_free(&cpu.in, &cpu.in_count);
	cpu_files_free(&cpu.out, &cpu.out_count);
	cpu_files_free(&cpu.raw, &cpu.raw_count);
	cpu_files_free(&cpu.gold, &cpu.gold_count);
	cpu_dump_free();
}

static void slot_clear(slot *s)
{
	if (s == &slots[0])
		cpu_clear();
	nbg_decoded_free(s->dec);
	nbg_model_free(s->model);
	free(s->data);
	memset(s, 0, sizeof(*s));
}

/* {"ok": false, "error": {code, offset, field, message}} */
static char *fail_doc(const nbg_error *err)
{
	json_t *o = json_pack("{s:b, s:{s:s, s:I, s:s, s:s}}", "ok", 0, "error", "code",
			      nbg_code_name(err->code), "offset", (json_int_t)err->offset,
			      "field", err->field, "message", err->message);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

/* {"ok": false, "error": {code, field, message}}: a failure of a run, which
 * has no place in the file (errorLine in app.js shows no offset then). */
static char *fail_run(const nbg_error *err)
{
	json_t *o = json_pack("{s:b, s:{s:s, s:s, s:s}}", "ok", 0, "error", "code",
			      nbg_code_name(err->code), "field", err->field, "message", err->message);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

static char *fail_text(nbg_code code, const char *message)
{
	nbg_error err;

	memset(&err, 0, sizeof(err));
	err.code = code;
	snprintf(err.message, sizeof(err.message), "%s", message);
	return fail_doc(&err);
}

/* {"ok": true, "text": TEXT} */
static char *text_doc(const char *text)
{
	json_t *o = json_pack("{s:b, s:s}", "ok", 1, "text", text);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

/* text_doc of a malloc'd text, which it frees; the failure `what` names
 * (out of memory) when text is NULL. */
static char *take_text(char *text, const char *what)
{
	char *r;

	if (!text)
		return fail_text(NBG_E_OUT_OF_MEMORY, what);
	r = text_doc(text);
	free(text);
	return r;
}

/* The bytes handed over by nbg_web_buffer; NULL when the slot is bad. */
static slot *slot_at(int i)
{
	return i == 0 || i == 1 ? &slots[i] : NULL;
}

/* A buffer of `size` bytes in slot i for the page to fill; the slot's
 * previous file is dropped. */
EMSCRIPTEN_KEEPALIVE uint8_t *nbg_web_buffer(int i, size_t size)
{
	slot *s = slot_at(i);

	if (!s)
		return NULL;
	slot_clear(s);
	s->data = malloc(size ? size : 1);
	s->size = size;
	return s->data;
}

/* Parses slot i as `nbg inspect` does: a file whose only failure is a
 * stored checksum that does not match its bytes keeps its model
 * (NBG_PARSE_KEEP_UNVERIFIED), marked unverified (an export is never made
 * from it).  Returns {"ok": true, "unverified": bool, "error": {...} when
 * unverified}, or the failure. */
EMSCRIPTEN_KEEPALIVE char *nbg_web_parse(int i)
{
	nbg_parse_options o = { .size = sizeof(o),
				.flags = NBG_PARSE_ONE_THREAD | NBG_PARSE_KEEP_UNVERIFIED };
	slot *s = slot_at(i);

	if (!s || !s->data)
		return fail_text(NBG_E_INVALID_ARGUMENT, "no file was handed over");
	nbg_decoded_free(s->dec);
	s->dec = NULL;
	nbg_model_free(s->model);
	s->model = NULL;
	s->unverified = 0;
	if (nbg_parse(s->data, s->size, &o, &s->model, &s->err) != NBG_OK) {
		if (!s->model)
			return fail_doc(&s->err);
		s->unverified = 1;
	}
	nbg_error derr;
	if (nbg_decoded_new(s->model, &s->dec, &derr) != NBG_OK) {
		nbg_model_free(s->model);
		s->model = NULL;
		return fail_doc(&derr);
	}
	json_t *r = json_pack("{s:b, s:b}", "ok", 1, "unverified", s->unverified);
	if (r && s->unverified)
		json_object_set_new(r, "error",
				    json_pack("{s:s, s:I, s:s, s:s}", "code",
					      nbg_code_name(s->err.code), "offset",
					      (json_int_t)s->err.offset, "field", s->err.field,
					      "message", s->err.message));
	char *t = r ? json_dumps(r, JSON_COMPACT) : NULL;
	json_decref(r);
	return t;
}

/* Runs `write` into a memory stream; the text, or NULL with err filled. */
typedef int (*writer)(FILE *f, const slot *s, const char *name, nbg_error *err);

static char *capture(writer write, const slot *s, const char *name, nbg_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	memset(err, 0, sizeof(*err));
	err->code = NBG_E_OUT_OF_MEMORY;
	snprintf(err->message, sizeof(err->message), "the page ran out of memory");
	if (!f)
		return NULL;
	int rc = write(f, s, name, err);
	if (fclose(f) != 0 || rc != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static unsigned report_what; /* nbg_web_report's `what` */

static int write_report(FILE *f, const slot *s, const char *name, nbg_error *err)
{
	return nbg_json_document_write_decoded(f, s->dec, name, report_what, err) == NBG_OK ? 0 : -1;
}

static int write_dot(FILE *f, const slot *s, const char *name, nbg_error *err)
{
	const nbg_network *net = NULL;
	int rc = -1;

	if (nbg_decoded_network(s->dec, &net, err) == NBG_OK)
		rc = nbg_commands_dot(f, s->dec, name) != 0 ? -1 : 0;
	if (rc != 0 && net) { /* the stream failed: out of memory */
		memset(err, 0, sizeof(*err));
		err->code = NBG_E_OUT_OF_MEMORY;
		snprintf(err->message, sizeof(err->message), "the page ran out of memory");
	}
	return rc;
}

static const slot *loaded(int i, char **failure)
{
	const slot *s = slot_at(i);

	if (!s || !s->model) {
		*failure = fail_text(NBG_E_INVALID_ARGUMENT, "no file is loaded");
		return NULL;
	}
	return s;
}

/* The JSON report of slot i, shown under `name`: the document of
 * nbg_json_document_write with `what` (report.h; 0: the core report alone,
 * what `nbg inspect --json` writes).  The document is JSON already: it is
 * returned as it is (not wrapped), a failure as fail_doc. */
EMSCRIPTEN_KEEPALIVE char *nbg_web_report(int i, const char *name, unsigned what)
{
	char *failure = NULL;
	const slot *s = loaded(i, &failure);

	if (!s)
		return failure;
	nbg_error err;
	report_what = what;
	char *doc = capture(write_report, s, name, &err);
	return doc ? doc : fail_doc(&err);
}

/* `nbg graph FILE --dot -` */
EMSCRIPTEN_KEEPALIVE char *nbg_web_dot(int i, const char *title)
{
	char *failure = NULL, *dot;
	const slot *s = loaded(i, &failure);
	nbg_error err;

	if (!s)
		return failure;
	if (!(dot = capture(write_dot, s, title, &err)))
		return fail_doc(&err);
	return take_text(dot, "out of memory");
}

/* A finite value as a JSON real, else null (JSON has no NaN or infinity). */
static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* The values of a decoded stream's n codes into v: the stored code
 * (uint8, int8, int16 two's complement) minus the zero point, or an fp16
 * code's or a table entry's value (nbg_tensor_stored, data format 1: FP16,
 * 0: FP32).  0 on failure. */
static int code_values(const nbg_weights_op *o, const uint8_t *codes, size_t n, double *v)
{
	unsigned dt = nbg_weights_op_data_type(o);
	int32_t zp = nbg_weights_op_zero_point(o);
	/* float32 (data format 0: an NN_LUT table's values) or fp16 codes */
	unsigned cb = nbg_weights_op_code_bytes(o);
	if (cb == 4 || dt == 1) {
		float *f = NULL;
		if (nbg_tensor_stored(cb == 4 ? 0 : 1, codes, cb * n, n, &f, NULL) != NBG_OK)
			return 0;
		for (size_t k = 0; k < n; k++)
			v[k] = f[k];
		free(f);
		return 1;
	}
	for (size_t k = 0; k < n; k++)
		v[k] = (nbg_weights_op_code_bytes(o) == 2 ? (double)(int16_t)(codes[2 * k] | codes[2 * k + 1] << 8)
			: dt == 2 ? (double)(int8_t)codes[k] : (double)codes[k]) - zp;
	return 1;
}

/* A histogram being counted (histogram_of): how many finite values fall
 * in each bin of `width` from `lo` on -- one bin per value where integer
 * values span at most 256 (uint8, int8 codes), else 256 bins over the
 * range (int16, fp16, float) -- with the smallest, largest and mean finite
 * value and the count of the others (NaN, infinities).  Values come in
 * pieces: all of them to hist_range, then all again to hist_count. */
typedef struct hist {
	double lo, hi, sum, width;
	size_t n, finite, bins;
	int integer;
	uint64_t count[256];
} hist;

static void hist_range(hist *h, const double *v, size_t n)
{
	h->n += n;
	for (size_t k = 0; k < n; k++)
		if (isfinite(v[k])) {
			h->lo = v[k] < h->lo ? v[k] : h->lo;
			h->hi = v[k] > h->hi ? v[k] : h->hi;
			h->sum += v[k];
			h->finite++;
		}
}

static void hist_count(hist *h, const double *v, size_t n)
{
	if (!h->bins) { /* the bins, once the range is known */
		h->width = h->integer && h->hi - h->lo < 256 ? 1 : (h->hi - h->lo) / 256;
		if (!(h->width > 0))
			h->width = 1;
		h->bins = h->integer && h->width == 1 ? (size_t)(h->hi - h->lo) + 1 : h->hi > h->lo ? 256 : 1;
	}
	for (size_t k = 0; k < n; k++)
		if (isfinite(v[k])) {
			size_t b = (size_t)((v[k] - h->lo) / h->width);
			h->count[b < h->bins ? b : h->bins - 1]++;
		}
}

/* {lo, width, counts, min, max, mean, nonfinite}; null when no value is
 * finite. */
static json_t *hist_json(const hist *h)
{
	if (!h->finite)
		return json_null();
	json_t *arr = json_array();
	for (size_t b = 0; arr && b < h->bins; b++)
		json_array_append_new(arr, json_integer((json_int_t)h->count[b]));
	return json_pack("{s:f, s:f, s:o*, s:f, s:f, s:f, s:I}", "lo", h->lo, "width", h->width, "counts", arr, "min",
			 h->lo, "max", h->hi, "mean", h->sum / (double)h->finite, "nonfinite",
			 (json_int_t)(h->n - h->finite));
}

static void hist_init(hist *h, int integer)
{
	memset(h, 0, sizeof(*h));
	h->lo = INFINITY;
	h->hi = -INFINITY;
	h->integer = integer;
}

/* The histogram of v[0..n) (hist). */
static json_t *histogram_of(const double *v, size_t n, int integer)
{
	hist h;

	hist_init(&h, integer);
	hist_range(&h, v, n);
	if (h.finite)
		hist_count(&h, v, n);
	return hist_json(&h);
}

/* Per output channel (the outermost dimension of the kernel shape, whose
 * values are contiguous): [min, max, mean] of its values, or null. */
static json_t *channel_stats(const double *v, size_t n, uint32_t out)
{
	if (!out || n % out)
		return json_null();
	json_t *a = json_array();
	size_t per = n / out;
	for (uint32_t c = 0; a && c < out; c++) {
		const double *x = v + (size_t)c * per;
		double lo = x[0], hi = x[0], sum = 0;
		for (size_t k = 0; k < per; k++) {
			lo = x[k] < lo ? x[k] : lo;
			hi = x[k] > hi ? x[k] : hi;
			sum += x[k];
		}
		json_array_append_new(a, json_pack("[o,o,o]", real_or_null(lo), real_or_null(hi),
						   real_or_null(sum / (double)per)));
	}
	return a ? a : json_null();
}

/* The histogram of one decoded stream's values (code_values), with its
 * per-channel figures ("channels"). */
static json_t *histogram(const nbg_weights_op *o)
{
	size_t n = 0;
	const uint8_t *codes = nbg_weights_op_codes(o, &n);
	double *v = codes && n ? malloc(n * sizeof(*v)) : NULL;
	json_t *h = v && code_values(o, codes, n, v) ? histogram_of(v, n, nbg_weights_op_data_type(o) != 1)
		: json_null();

	if (json_is_object(h))
		json_object_set_new(h, "channels", channel_stats(v, n, nbg_weights_op_shape(o)[0]));
	free(v);
	return h;
}

/* One operation: its node in the DOT of nbg_web_dot (the layer's box, as
 * lib/report/dot_commands.c names it), its status and reason as `nbg
 * weights` prints them, its line of `nbg weights`, the histogram: counted
 * once per decoded stream (shared_histogram), given as `hist`; stream_of:
 * the operation whose stream it is (nbg_weights_op_first: the first naming
 * it, as the row tiles of a layer name one; its own where none decoded). */
static json_t *weights_op(const nbg_graph *g, const nbg_weights_op *o, json_t *hist, size_t stream_of)
{
	const nbg_graph_operation *r = nbg_graph_operation_at(g, nbg_weights_op_operation(o));
	const uint32_t *shape = nbg_weights_op_shape(o);
	char node[48], *line = NULL;
	size_t len = 0;
	FILE *f;

	if (r && r->layer_id < nbg_graph_summary_of(g)->layer_count)
		snprintf(node, sizeof(node), "L%u", r->layer_id);
	else
		snprintf(node, sizeof(node), "op%zu", nbg_weights_op_operation(o));
	if ((f = open_memstream(&line, &len)) != NULL) {
		nbg_text_weights_op(f, g, o);
		if (fclose(f) != 0) {
			free(line);
			line = NULL;
		}
	}
	json_t *j = json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:I, s:[I,I,I,I], s:o}", "node",
			      node, "operation", (json_int_t)nbg_weights_op_operation(o), "command",
			      (json_int_t)nbg_weights_op_command(o), "status",
			      nbg_weights_status_name(nbg_weights_op_status(o)), "reason_id",
			      nbg_weights_op_reason_id(o), "reason", nbg_weights_op_reason(o), "line",
			      line ? line : "", "zero_point", (json_int_t)nbg_weights_op_zero_point(o),
			      "shape", (json_int_t)shape[0], (json_int_t)shape[1], (json_int_t)shape[2],
			      (json_int_t)shape[3], "histogram", hist);
	json_object_set_new(j, "stream_of", json_integer((json_int_t)stream_of));
	free(line);
	return j;
}

/* The histogram of o's stream, shared by the operations naming it. */
static json_t *shared_histogram(const nbg_weights *w, const nbg_weights_op *o, json_t **hist)
{
	size_t f = nbg_weights_op_first(o);

	if (!hist[f])
		hist[f] = histogram(nbg_weights_at(w, f));
	return json_incref(hist[f]);
}

/* The kernel streams of slot i: {"operations": [weights_op...]}. */
static char *weights_doc(const slot *s, nbg_error *err)
{
	const nbg_graph *g = NULL;
	const nbg_weights *w = NULL;
	char *text = NULL;

	/* the weights need the graph: once they are decoded, so is it */
	if (nbg_decoded_weights(s->dec, &w, err) == NBG_OK &&
	    nbg_decoded_graph(s->dec, &g, err) == NBG_OK) {
		json_t *ops = json_array(), **hist = calloc(nbg_weights_count(w) + 1, sizeof(*hist));
		for (size_t k = 0; ops && k < nbg_weights_count(w); k++) {
			const nbg_weights_op *o = nbg_weights_at(w, k);
			json_t *h = hist ? shared_histogram(w, o, hist) : NULL;
			size_t of = nbg_weights_op_operation(nbg_weights_at(w, nbg_weights_op_first(o)));
			if (!hist || json_array_append_new(ops, weights_op(g, o, h, of)) != 0) {
				json_decref(ops);
				ops = NULL;
			}
		}
		for (size_t k = 0; hist && k < nbg_weights_count(w); k++)
			json_decref(hist[k]);
		free(hist);
		json_t *doc = ops ? json_pack("{s:o}", "operations", ops) : NULL;
		text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
		json_decref(doc);
		if (!text) {
			memset(err, 0, sizeof(*err));
			err->code = NBG_E_OUT_OF_MEMORY;
			snprintf(err->message, sizeof(err->message), "the page ran out of memory");
		}
	}
	return text;
}

/* Each NN operation's kernel stream, decoded as `nbg weights` decodes it. */
EMSCRIPTEN_KEEPALIVE char *nbg_web_weights(int i)
{
	char *failure = NULL, *doc;
	const slot *s = loaded(i, &failure);
	nbg_error err;

	if (!s)
		return failure;
	if (!(doc = weights_doc(s, &err)))
		return fail_doc(&err);
	return take_text(doc, "out of memory");
}

/* The stored kernel codes of entry k of nbg_web_weights (slot i) as `nbg weights
 * --out` writes them (opN_weights.npy: shape [out, z, ky, kx], uint8 or
 * int8), in a buffer the caller frees (nbg_web_free), *size its bytes;
 * NULL when the entry did not decode or is out of range. */
EMSCRIPTEN_KEEPALIVE uint8_t *nbg_web_weights_npy(int i, size_t k, size_t *size)
{
	char *failure = NULL;
	const slot *s = loaded(i, &failure);
	const nbg_weights *w = NULL;
	uint8_t *npy = NULL;
	nbg_error err;

	*size = 0;
	free(failure);
	if (!s || nbg_decoded_weights(s->dec, &w, &err) != NBG_OK || k >= nbg_weights_count(w))
		return NULL;
	const nbg_weights_op *o = nbg_weights_at(w, k);
	const uint32_t *sh = nbg_weights_op_shape(o);
	const uint64_t shape[4] = { sh[0], sh[1], sh[2], sh[3] };
	size_t n = 0;
	const uint8_t *codes = nbg_weights_op_codes(o, &n);
	if (!codes || nbg_npy_encode(nbg_weights_op_npy_descr(o), shape, 4, codes,
				     n * nbg_weights_op_code_bytes(o), &npy, size, &err) != NBG_OK) {
		*size = 0;
		return NULL;
	}
	return npy;
}

/* `nbg map FILE --svg -`: the ledger's picture, the bytes of the decoded
 * kernel streams as decoded-coefficients.  Not for an unverified file (a
 * ledger needs a model whose checksums hold). */
EMSCRIPTEN_KEEPALIVE char *nbg_web_map(int i, const char *title)
{
	char *failure = NULL;
	const slot *s = loaded(i, &failure);
	const nbg_ledger *l = NULL;
	nbg_error err;

	if (!s)
		return failure;
	if (s->unverified)
		return fail_doc(&s->err);
	if (nbg_decoded_ledger(s->dec, &l, &err) != NBG_OK)
		return fail_doc(&err);
	return take_text(nbg_ledger_svg(l, title), "out of memory drawing the map");
}

/* `nbg inspect --format meta FILE`: never from an unverified file. */
EMSCRIPTEN_KEEPALIVE char *nbg_web_meta(int i)
{
	char *failure = NULL;
	const slot *s = loaded(i, &failure);

	if (!s)
		return failure;
	if (s->unverified)
		return fail_doc(&s->err);
	return take_text(nbg_export_meta_json(s->model), "out of memory writing nbg_meta.json");
}

/* `nbg diff --json A B` of slots 0 and 1. */
EMSCRIPTEN_KEEPALIVE char *nbg_web_diff(const char *name_a, const char *name_b)
{
	char *failure = NULL, *doc;
	nbg_diff *d = NULL;
	nbg_error err;

	if (!loaded(0, &failure) || !loaded(1, &failure))
		return failure;
	if (nbg_diff_models(slots[0].model, slots[1].model, &d, &err) != NBG_OK)
		return fail_doc(&err);
	doc = nbg_diff_json(d, slots[0].model, name_a, slots[1].model, name_b);
	nbg_diff_free(d);
	return take_text(doc, "out of memory writing the comparison");
}

/* ------------------------------------------------------------ CPU backend */

/* The plan's limits in the page (doc/web.md): the library's defaults, but
 * memory: the page's heap grows to 2 GB at most and holds the file, the
 * inputs and the outputs' .npy files beside the machine. */
static const nbg_cpu_options web_cpu_limits = { .size = sizeof(nbg_cpu_options),
						 .max_memory = (uint64_t)1 << 30 };

/* The CPU plan of slot s with the page's limits, from its decoded model
 * (a file whose checksums do not hold is refused there, as the command
 * refuses it). */
static nbg_code slot_plan(const slot *s, nbg_cpu_plan **p, nbg_error *err)
{
	return nbg_cpu_plan_build_decoded(s->dec, &web_cpu_limits, p, err);
}

/* The plan of slot 0's model: what `nbg run --backend cpu --check --json`
 * prints, without "model".  A file whose checksums do not hold is refused,
 * as the command refuses it. */
EMSCRIPTEN_KEEPALIVE char *nbg_web_cpu_plan(void)
{
	char *failure = NULL;
	const slot *s = loaded(0, &failure);
	nbg_cpu_plan *p = NULL;
	nbg_error err;

	if (!s)
		return failure;
	if (slot_plan(s, &p, &err) != NBG_OK)
		return fail_doc(&err);
	char *doc = nbg_cpu_plan_json(p, NBG_CPU_JSON_STEPS);
	nbg_cpu_plan_free(p);
	return take_text(doc, "out of memory writing the plan");
}

/* A buffer of `size` bytes in entry k of (*files)[0..n) -- allocated on
 * first use, *count then n -- for a file named `name` (its extension says
 * how it is read); NULL when k is not below n, or out of memory. */
static uint8_t *file_buffer(cpu_file **files, size_t *count, size_t n, size_t k, const char *name, size_t size)
{
	if (k >= n || !name)
		return NULL;
	if (!*files) {
		if (!(*files = calloc(n, sizeof(**files))))
			return NULL;
		*count = n;
	}
	cpu_file *f = &(*files)[k];
	free(f->data);
	f->data = malloc(size ? size : 1);
	f->size = f->data ? size : 0;
	f->kind = nbg_tensor_kind_of(name);
	return f->data;
}

/* A buffer of `size` bytes for the content of input k's file, named `name`
 * (its extension says how it is read); NULL when slot 0 has no model or no
 * such input, or out of memory. */
EMSCRIPTEN_KEEPALIVE uint8_t *nbg_web_cpu_input(size_t k, const char *name, size_t size)
{
	const slot *s = &slots[0];

	return file_buffer(&cpu.in, &cpu.in_count, s->model ? nbg_model_input_count(s->model) : 0, k, name, size);
}

/* Input k's file as the record's raw bytes (*raw malloc'd), as nbg run
 * reads --input. */
static nbg_code cpu_input_raw(const nbg_model *m, size_t k, uint8_t **raw, size_t *n,
			      nbg_error *err)
{
	const cpu_file *f = k < cpu.in_count ? &cpu.in[k] : NULL;

	if (!f || !f->data) {
		memset(err, 0, sizeof(*err));
		err->code = NBG_E_INPUT_COUNT_MISMATCH;
		snprintf(err->message, sizeof(err->message), "no file was given for input %zu", k);
		return err->code;
	}
	return nbg_tensor_to_raw(nbg_model_input_at(m, k), f->kind, f->data, f->size, raw, n, err);
}

/* A name from the file as a JSON string: kept as it is when it is UTF-8,
 * else printable ASCII kept and every other byte \xNN (nbg_text_escape). */
static json_t *json_name(const char *s)
{
	json_t *j = json_string(s);
	char *e;

	if (j)
		return j;
	e = nbg_text_escape(s, SIZE_MAX);
	j = e ? json_string(e) : NULL;
	free(e);
	return j ? j : json_null();
}

/* One output of a run: its record, SHA-256 of the raw bytes, the five
 * largest dequantized values; its float32 .npy kept for nbg_web_cpu_output. */
static json_t *cpu_output(const nbg_model *m, const nbg_cpu_state *st, size_t i, nbg_error *err)
{
	const nbg_io *io = nbg_model_output_at(m, i);
	size_t n = 0;
	const uint8_t *d = nbg_cpu_state_buffer(st, NBG_GRAPH_SRC_OUTPUT, (int32_t)i, &n);
	uint8_t h[32];
	char hex[65];
	float *v = NULL;
	nbg_tensor_top_entry top[5];
	size_t tops = 0;

	if (!d || !io->byte_size_known || n < io->byte_size) {
		memset(err, 0, sizeof(*err));
		err->code = NBG_E_RUNTIME_IO_MISMATCH;
		snprintf(err->message, sizeof(err->message), "output %zu has no buffer of its record's size", i);
		return NULL;
	}
	nbg_sha256_bytes(d, (size_t)io->byte_size, h);
	nbg_hex32(h, hex);
	if ((cpu.raw[i].data = malloc(io->byte_size ? (size_t)io->byte_size : 1)) != NULL) {
		memcpy(cpu.raw[i].data, d, (size_t)io->byte_size);
		cpu.raw[i].size = (size_t)io->byte_size;
	}
	if (nbg_tensor_from_raw(io, NBG_TENSOR_NPY, 0, d, (size_t)io->byte_size, &cpu.out[i].data,
				&cpu.out[i].size, err) != NBG_OK ||
	    nbg_tensor_floats(io, NBG_TENSOR_RAW, d, (size_t)io->byte_size, &v, err) != NBG_OK)
		return NULL;
	tops = nbg_tensor_top(v, io->element_count, 5, top);
	free(v);
	json_t *shape = json_array(), *jt = json_array();
	for (uint32_t k = 0; k < io->dim_count; k++)
		json_array_append_new(shape, json_integer(nbg_io_dim_outer(io, k)));
	for (size_t k = 0; k < tops; k++) /* +-inf (NaN is never listed) as a string */
		json_array_append_new(jt, json_pack("{s:I, s:o}", "index", (json_int_t)top[k].index, "value",
						    isfinite(top[k].value) ? json_real((double)top[k].value)
						    : json_string(top[k].value > 0 ? "inf" : "-inf")));
	const char *format = nbg_data_format_name(io->data_format);
	/* the name is the file's bytes: kept as they are when UTF-8, else escaped */
	json_t *o = json_pack("{s:I, s:o, s:o, s:s, s:I, s:s, s:o, s:I}", "index", (json_int_t)i, "name",
			      json_name(io->has_name ? io->name : ""), "shape", shape, "format",
			      format ? format : "?", "bytes", (json_int_t)io->byte_size, "sha256", hex, "top",
			      jt, "npy_bytes", (json_int_t)cpu.out[i].size);
	if (!o) {
		memset(err, 0, sizeof(*err));
		err->code = NBG_E_OUT_OF_MEMORY;
		snprintf(err->message, sizeof(err->message), "out of memory describing output %zu", i);
	}
	return o;
}

/* The run's details (nbg_cpu_run_details_json: the operations computed by
 * reference semantics, the caveat) added to doc, each operation without
 * the note the summary of `nbg run` gives it; 0, or -1 out of memory. */
static int run_details(const nbg_cpu_plan *p, json_t *doc)
{
	char *text = nbg_cpu_run_details_json(p);
	json_t *d = text ? json_loads(text, 0, NULL) : NULL, *op;
	size_t k;
	int rc = d ? json_object_update(doc, d) : -1;

	json_array_foreach(json_object_get(doc, "reference_semantics"), k, op)
		json_object_del(op, "note");
	json_decref(d);
	free(text);
	return rc;
}

/* The histogram of a kept tensor's stored values (nbg_tensor_stored:
 * codes, or fp16 values), read in pieces of 512 elements so that a large
 * tensor needs no copy of its values; null when its format has none or out
 * of memory. */
static json_t *tensor_histogram(const nbg_cpu_tensor *t)
{
	enum { PIECE = 512 };
	unsigned es = nbg_tensor_element_size(t->data_format);
	size_t n = es ? (size_t)(t->bytes / es) : 0;
	double v[PIECE];
	hist h;

	if (!es)
		return json_null();
	hist_init(&h, t->data_format != 1);
	for (int pass = 0; pass < 2 && (pass == 0 || h.finite); pass++)
		for (size_t at = 0; at < n; at += PIECE) {
			size_t m = n - at < PIECE ? n - at : PIECE;
			float *f = NULL;
			if (nbg_tensor_stored(t->data_format, t->data + at * es, m * es, m, &f, NULL) != NBG_OK)
				return json_null();
			for (size_t k = 0; k < m; k++)
				v[k] = f[k];
			free(f);
			(pass ? hist_count : hist_range)(&h, v, m);
		}
	return hist_json(&h);
}

/* The hook of a dumping run: the tensor copied into cpu.dump, its entry
 * (as dump.json lists it, with the histogram and figures of its stored
 * values) appended to the array ctx. */
static nbg_code keep_tensor(void *ctx, const nbg_cpu_tensor *t)
{
	if (cpu.dump_seen >= cpu.dump_count)
		return NBG_E_INVALID_ARGUMENT; /* more tensors than nbg_cpu_dump_list listed */
	nbg_cpu_tensor *k = &cpu.dump[cpu.dump_seen];
	uint8_t *d = malloc(t->bytes ? (size_t)t->bytes : 1);
	if (!d)
		return NBG_E_OUT_OF_MEMORY;
	memcpy(d, t->data, (size_t)t->bytes);
	*k = *t;
	k->data = d;
	k->layer = k->kind = NULL;
	cpu.dump_seen++;
	json_t *shape = json_array();
	for (uint32_t i = 0; shape && i < t->ndim; i++)
		json_array_append_new(shape, json_integer((json_int_t)t->shape[i]));
	const char *fmt = nbg_data_format_name(t->data_format);
	json_t *e = json_pack("{s:I, s:I, s:o, s:s, s:o, s:s, s:o, s:I, s:b, s:I, s:o, s:o}", "operation",
			      (json_int_t)t->operation, "layer_id", (json_int_t)t->layer_id, "layer",
			      json_name(t->layer ? t->layer : ""), "operator", t->kind ? t->kind : "?", "shape", shape,
			      "data_type", fmt ? fmt : "?", "zero_point",
			      t->zero_point_known ? json_integer(t->zero_point) : json_null(), "bytes",
			      (json_int_t)t->bytes, "whole_layer", t->whole_layer, "tiles",
			      (json_int_t)(t->whole_layer ? t->tiles : 1), "output_record",
			      t->output_record >= 0 ? json_integer(t->output_record) : json_null(), "values",
			      tensor_histogram(k));
	return e && json_array_append_new(ctx, e) == 0 ? NBG_OK : NBG_E_OUT_OF_MEMORY;
}

/* The run of plan p: a dumping run keeping every operation's output when
 * their .npy files would fit in `limit` bytes, else a plain one; *dump
 * says which ({kept, bytes, limit, tensors}). */
static nbg_code cpu_execute(const nbg_cpu_plan *p, const nbg_rt_buffer *bufs, size_t nin, uint64_t limit,
			    nbg_cpu_state **st, json_t **dump, nbg_error *err)
{
	nbg_cpu_tensor *list = NULL;
	size_t n = 0;
	uint64_t total = 0;
	nbg_code rc = nbg_cpu_dump_list(p, SIZE_MAX, &list, &n, err);

	/* each as its .npy file: the data and a header of at most 128 bytes */
	for (size_t k = 0; rc == NBG_OK && k < n; k++)
		total += (list[k].bytes < WEB_DUMP_LIMIT ? list[k].bytes : WEB_DUMP_LIMIT) + 128; /* no overflow */
	free(list);
	if (rc != NBG_OK)
		return rc;
	json_t *tensors = json_array();
	int keep = total <= limit && tensors && (cpu.dump = calloc(n + 1, sizeof(*cpu.dump)));
	cpu.dump_count = keep ? n : 0;
	rc = keep ? nbg_cpu_run_dump(p, bufs, nin, SIZE_MAX, keep_tensor, tensors, st, err)
		  : nbg_cpu_run(p, bufs, nin, SIZE_MAX, st, err);
	if (rc != NBG_OK || !keep)
		cpu_dump_free();
	*dump = json_pack("{s:b, s:I, s:I, s:o}", "kept", keep, "bytes", (json_int_t)total, "limit",
			  (json_int_t)limit, "tensors", keep ? tensors : json_array());
	if (!keep)
		json_decref(tensors);
	return rc;
}

/* The run's outputs described (cpu_output), with the run's details and
 * its dump: the document nbg_web_cpu_run returns, or NULL. */
static json_t *run_doc(const slot *s, const nbg_cpu_plan *p, const nbg_cpu_state *st, json_t *dump,
		       nbg_code *rc, nbg_error *err)
{
	size_t nout = nbg_model_output_count(s->model);
	json_t *outs = json_array();

	for (size_t i = 0; *rc == NBG_OK && i < nout; i++) {
		json_t *o = cpu_output(s->model, st, i, err);
		*rc = o ? NBG_OK : err->code;
		json_array_append_new(outs, o);
	}
	json_t *doc = json_pack("{s:o, s:O}", "outputs", outs, "dump", dump);
	if (doc && run_details(p, doc) != 0) {
		json_decref(doc);
		doc = NULL;
	}
	return doc;
}

/* Runs slot 0's model once on the inputs handed over: {outputs: [...],
 * reference_semantics: [op, ...], caveat, dump: {kept, bytes, limit,
 * tensors}}, or the failure (a refused operation: unsupported-operation
 * naming it, as nbg run says; a plan over its limits: work-limit, before
 * any input is read).  The operations' outputs are kept within `keep`
 * bytes, WEB_DUMP_LIMIT at most (a negative keep: that). */
EMSCRIPTEN_KEEPALIVE char *nbg_web_cpu_run(double keep)
{
	char *failure = NULL;
	const slot *s = loaded(0, &failure);
	nbg_cpu_plan *p = NULL;
	nbg_cpu_state *st = NULL;
	nbg_rt_buffer *bufs = NULL;
	uint8_t **raw = NULL;
	nbg_error err;
	json_t *doc = NULL, *dump = NULL;

	if (!s)
		return failure;
	size_t nin = nbg_model_input_count(s->model), nout = nbg_model_output_count(s->model);
	cpu_files_free(&cpu.out, &cpu.out_count);
	cpu_files_free(&cpu.raw, &cpu.raw_count);
	cpu_dump_free();
	memset(&err, 0, sizeof(err));
	nbg_code rc = slot_plan(s, &p, &err);
	/* refused (nbg_cpu_plan_check) before any input is converted */
	if (rc == NBG_OK)
		rc = nbg_cpu_plan_check(p, SIZE_MAX, &err);
	bufs = calloc(nin + 1, sizeof(*bufs));
	raw = calloc(nin + 1, sizeof(*raw));
	cpu.out = calloc(nout + 1, sizeof(*cpu.out));
	cpu.raw = calloc(nout + 1, sizeof(*cpu.raw));
	cpu.out_count = cpu.out ? nout : 0;
	cpu.raw_count = cpu.raw ? nout : 0;
	if (rc == NBG_OK && (!bufs || !raw || !cpu.out || !cpu.raw))
		rc = err.code = NBG_E_OUT_OF_MEMORY;
	for (size_t k = 0; rc == NBG_OK && k < nin; k++) {
		rc = cpu_input_raw(s->model, k, &raw[k], &bufs[k].size, &err);
		bufs[k].data = raw[k];
	}
	if (rc == NBG_OK)
		rc = cpu_execute(p, bufs, nin, keep >= 0 && keep < (double)WEB_DUMP_LIMIT ? (uint64_t)keep : WEB_DUMP_LIMIT,
				 &st, &dump, &err);
	if (rc == NBG_OK)
		doc = run_doc(s, p, st, dump, &rc, &err);
	json_decref(dump);
	for (size_t k = 0; raw && k < nin; k++)
		free(raw[k]);
	free(raw);
	free(bufs);
	nbg_cpu_state_free(st);
	nbg_cpu_plan_free(p);
	if (rc != NBG_OK || !doc) {
		json_decref(doc);
		cpu_files_free(&cpu.out, &cpu.out_count);
		cpu_files_free(&cpu.raw, &cpu.raw_count);
		cpu_dump_free();
		if (!err.message[0]) {
			err.code = rc != NBG_OK ? rc : NBG_E_OUT_OF_MEMORY;
			snprintf(err.message, sizeof(err.message), "out of memory");
		}
		return fail_run(&err);
	}
	char *text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	return take_text(text, "out of memory writing the run's outputs");
}

/* Tensor k of the last run's dump as `nbg run --dump` writes its file
 * (its stored type, the shape outermost first), in a buffer the caller
 * frees (nbg_web_free), *size its bytes; NULL when there is none. */
EMSCRIPTEN_KEEPALIVE uint8_t *nbg_web_cpu_tensor_npy(size_t k, size_t *size)
{
	uint8_t *npy = NULL;
	const nbg_cpu_tensor *t = k < cpu.dump_seen ? &cpu.dump[k] : NULL;
	const char *descr = t ? nbg_npy_descr(t->data_format) : NULL;

	*size = 0;
	if (!descr || nbg_npy_encode(descr, t->shape, t->ndim, t->data, (size_t)t->bytes, &npy, size, NULL) != NBG_OK) {
		*size = 0;
		return NULL;
	}
	return npy;
}

/* A buffer of `size` bytes for the golden file of output i, named `name`
 * (its extension says how it is read: raw, .npy, .tensor text, as nbg run
 * --golden reads it); NULL when there is no such output. */
EMSCRIPTEN_KEEPALIVE uint8_t *nbg_web_cpu_golden(size_t i, const char *name, size_t size)
{
	const slot *s = &slots[0];

	return file_buffer(&cpu.gold, &cpu.gold_count, s->model ? nbg_model_output_count(s->model) : 0, i, name, size);
}

/* The figures of nbg_tensor_measure as nbg compare --json names them,
 * `unit` the values compared ("float32", "stored"). */
static json_t *figures(const nbg_tensor_stats *st, const char *unit)
{
	char max[48], mean[48];

	snprintf(max, sizeof(max), "max_abs_diff_%s", unit);
	snprintf(mean, sizeof(mean), "mean_abs_diff_%s", unit);
	return json_pack("{s:I, s:f, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:b, s:b}", "elements",
			 (json_int_t)st->elements, "tolerance", st->tolerance, "beyond", (json_int_t)st->beyond,
			 "first_beyond", st->beyond ? json_integer((json_int_t)st->first_beyond) : json_null(), max,
			 real_or_null(st->max_abs_stored), mean, real_or_null(st->mean_abs_stored),
			 "max_abs_diff_dequantized", real_or_null(st->max_abs), "mean_abs_diff_dequantized",
			 real_or_null(st->mean_abs), "cosine", real_or_null(st->cosine), "top_k",
			 (json_int_t)st->top_k, "top_k_common", (json_int_t)st->top_common, "top1_equal",
			 st->top1_equal, "equal", st->beyond == 0);
}

/* Output i of the last run against its golden file, as nbg run --golden
 * measures them: both as float32 (dequantized with the record), the
 * tolerance in their units. */
static json_t *golden_output(const nbg_model *m, size_t i, double tolerance, nbg_error *err)
{
	const nbg_io *io = nbg_model_output_at(m, i);
	float *a = NULL, *b = NULL;
	nbg_tensor_stats st;
	json_t *o = NULL;

	if (nbg_tensor_floats(io, NBG_TENSOR_RAW, cpu.raw[i].data, cpu.raw[i].size, &a, err) == NBG_OK &&
	    nbg_tensor_floats(io, cpu.gold[i].kind, cpu.gold[i].data, cpu.gold[i].size, &b, err) == NBG_OK) {
		nbg_tensor_side sa = { a, 0, 0 }, sb = { b, 0, 0 };
		if (nbg_tensor_measure(&sa, &sb, io->element_count, tolerance, 0, 0, &st, err) == NBG_OK &&
		    (o = figures(&st, "float32")) != NULL)
			json_object_set_new(o, "index", json_integer((json_int_t)i));
	}
	free(a);
	free(b);
	return o;
}

/* The last run's outputs against the golden files handed over
 * (nbg_web_cpu_golden): {compared_as, match, outputs: [figures...]}, each
 * output with a golden; the failure of the first that cannot be read. */
EMSCRIPTEN_KEEPALIVE char *nbg_web_cpu_compare(double tolerance)
{
	const slot *s = &slots[0];
	nbg_error err;
	int match = 1;

	memset(&err, 0, sizeof(err));
	if (!s->model || !cpu.raw || cpu.raw_count != nbg_model_output_count(s->model))
		return fail_text(NBG_E_INVALID_ARGUMENT, "run the model first: there is no output to compare");
	json_t *outs = json_array();
	for (size_t i = 0; outs && i < cpu.raw_count; i++) {
		if (!cpu.gold || i >= cpu.gold_count || !cpu.gold[i].data || !cpu.raw[i].data)
			continue;
		json_t *o = golden_output(s->model, i, tolerance, &err);
		if (!o) {
			json_decref(outs);
			if (!err.message[0])
				snprintf(err.message, sizeof(err.message), "out of memory");
			return fail_run(&err);
		}
		match = match && json_is_true(json_object_get(o, "equal"));
		json_array_append_new(outs, o);
	}
	json_t *doc = outs ? json_pack("{s:s, s:b, s:o}", "compared_as", "float32 (dequantized)", "match", match,
				       "outputs", outs) : NULL;
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	return take_text(text, "out of memory comparing the outputs");
}

/* Kept tensor k's side of a comparison: its stored values, the zero point
 * its command states, the scale where it is known (an output record's
 * own; fp16 values are their values), as its dump.json entry gives them. */
static nbg_tensor_side kept_side(const nbg_cpu_tensor *t, float *stored)
{
	const nbg_model *m = slots[0].model;
	const nbg_io *io = t->output_record >= 0 && m ? nbg_model_output_at(m, (size_t)t->output_record) : NULL;
	nbg_tensor_side a = { stored, t->zero_point_known ? t->zero_point : 0, t->data_format == 1 ? 1 : 0 };

	if (io && io->data_format == t->data_format && t->data_format != 1) {
		a.zero_point = io->zero_point;
		a.scale = io->scale > 0 ? io->scale : 0;
	}
	return a;
}

/* A dump's side: the .npy's values, shaped as the kept tensor t, of its
 * type (the descr nbg run --dump writes for it), quantized as the entry's
 * "quantization" says (nbg compare's reading of a dump). */
static nbg_code dump_side(const nbg_cpu_tensor *t, json_t *entry, const uint8_t *npy, size_t size,
			  nbg_tensor_side *b, float **values, nbg_error *err)
{
	nbg_npy p;
	json_t *q = json_object_get(entry, "quantization"), *shape = json_object_get(entry, "shape");
	const char *descr = nbg_npy_descr(t->data_format);
	nbg_code rc = nbg_npy_parse(npy, size, &p, err);
	int same = rc == NBG_OK && descr && !strcmp(p.descr, descr) && !p.fortran_order && p.ndim == t->ndim &&
		   json_array_size(shape) == t->ndim;

	for (uint32_t d = 0; same && d < t->ndim; d++)
		same = p.shape[d] == t->shape[d] && json_integer_value(json_array_get(shape, d)) == (json_int_t)t->shape[d];
	if (rc == NBG_OK && !same) {
		memset(err, 0, sizeof(*err));
		err->code = NBG_E_TENSOR_SHAPE_MISMATCH;
		snprintf(err->message, sizeof(err->message), "operation %zu: the dump's file is not of the shape "
			 "and type of the page's tensor (%s): only tensors of one shape and type compare",
			 t->operation, descr ? descr : "?");
		return err->code;
	}
	if (rc != NBG_OK || nbg_tensor_stored(t->data_format, p.data, p.data_size, p.count, values, err) != NBG_OK)
		return err->code;
	b->stored = *values;
	b->zero_point = json_is_integer(json_object_get(q, "zero_point"))
		? (double)json_integer_value(json_object_get(q, "zero_point")) : 0;
	b->scale = json_number_value(json_object_get(q, "scale")) > 0 ? json_number_value(json_object_get(q, "scale"))
		: t->data_format == 1 ? 1 : 0;
	return NBG_OK;
}

/* Tensor k of the last run's dump against entry k of a dump.json written
 * by nbg run --dump (`entry`, its JSON) and its .npy file, measured as
 * nbg compare measures two dumps (stored values, the tolerance in stored
 * units): the figures, or dump-invalid when the entry is of another
 * operation (a dump of another model), tensor-shape-mismatch, npy-invalid. */
EMSCRIPTEN_KEEPALIVE char *nbg_web_cpu_compare_entry(size_t k, const char *entry, const uint8_t *npy, size_t size,
						    double tolerance)
{
	const nbg_cpu_tensor *t = k < cpu.dump_seen ? &cpu.dump[k] : NULL;
	json_t *e = entry ? json_loads(entry, 0, NULL) : NULL, *o = NULL;
	nbg_tensor_side a = { 0 }, b = { 0 };
	nbg_tensor_stats st;
	nbg_error err;
	float *sa = NULL, *sb = NULL;

	memset(&err, 0, sizeof(err));
	if (!t || !json_is_object(e) || json_integer_value(json_object_get(e, "operation")) != (json_int_t)t->operation ||
	    json_is_true(json_object_get(e, "whole_layer")) != !!t->whole_layer) {
		json_decref(e);
		err.code = NBG_E_DUMP_INVALID;
		snprintf(err.message, sizeof(err.message), t ? "entry %zu is not operation %zu%s as in the page's run: "
			 "a dump of another model" : "entry %zu: the page's run kept no such tensor", k,
			 t ? t->operation : 0, t && t->whole_layer ? " (whole layer)" : "");
		return fail_run(&err);
	}
	nbg_code rc = nbg_tensor_stored(t->data_format, t->data, (size_t)t->bytes,
					(uint64_t)t->bytes / nbg_tensor_element_size(t->data_format), &sa, &err);
	a = kept_side(t, sa);
	if (rc == NBG_OK)
		rc = dump_side(t, e, npy, size, &b, &sb, &err);
	if (rc == NBG_OK)
		rc = nbg_tensor_measure(&a, &b, (uint64_t)t->bytes / nbg_tensor_element_size(t->data_format), tolerance,
					0, 0, &st, &err);
	if (rc == NBG_OK && !(o = figures(&st, "stored")))
		rc = err.code = NBG_E_OUT_OF_MEMORY;
	free(sa);
	free(sb);
	json_decref(e);
	if (rc != NBG_OK) {
		if (!err.message[0])
			snprintf(err.message, sizeof(err.message), "out of memory");
		return fail_run(&err);
	}
	char *text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return take_text(text, "out of memory comparing the tensors");
}

/* 1 when slot i holds a parsed model (a worker restarted after a time
 * limit holds none). */
EMSCRIPTEN_KEEPALIVE int nbg_web_loaded(int i)
{
	const slot *s = slot_at(i);
	return s && s->model;
}

/* The number of outputs the last run kept (nbg_web_cpu_output). */
EMSCRIPTEN_KEEPALIVE size_t nbg_web_cpu_output_count(void)
{
	return cpu.out_count;
}

/* Output i of the last run as a float32 .npy: its bytes, *size their count;
 * NULL when there is none. */
EMSCRIPTEN_KEEPALIVE const uint8_t *nbg_web_cpu_output(size_t i, size_t *size)
{
	*size = i < cpu.out_count && cpu.out[i].data ? cpu.out[i].size : 0;
	return *size ? cpu.out[i].data : NULL;
}

/* Runs the digests a parse spends its time in, many times over small
 * pieces, so that the browser compiles them with its optimizing tier
 * before a file comes: a browser first runs WebAssembly from a quick
 * baseline compile and swaps in the optimized code only for later calls,
 * which the one long call hashing a large file would never be.  Returns a
 * value of the work so that it is not optimized away. */
EMSCRIPTEN_KEEPALIVE unsigned nbg_web_warm(void)
{
	static uint8_t buf[4096];
	uint8_t d[32];
	uint32_t crc = 0;

	for (unsigned i = 0; i < 400; i++) {
		buf[i % sizeof(buf)] = (uint8_t)i;
		nbg_sha256_bytes(buf, sizeof(buf), d);
		crc = nbg_crc32_bytes(crc, buf, sizeof(buf)) ^ d[0];
	}
	return crc;
}

EMSCRIPTEN_KEEPALIVE void nbg_web_free(void *p)
{
	free(p);
}
