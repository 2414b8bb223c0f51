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
 * Results are malloc'd; the caller frees them with nbg_web_free.
 */
#include <emscripten/emscripten.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbg/commands.h"
#include "nbg/diff.h"
#include "nbg/export.h"
#include "nbg/ledger.h"
#include "nbg/nbg.h"
#include "nbg/report.h"
#include "nbg/weights.h"
#include "common/hash.h"

typedef struct slot {
	uint8_t *data;
	size_t size;
	nbg_model *model;   /* NULL when the file failed */
	int unverified;     /* parsed with the checksum comparisons off */
	nbg_error err;      /* the failure of the strict parse */
} slot;

static slot slots[2];

static void slot_clear(slot *s)
{
	nbg_model_free(s->model);
	free(s->data);
	memset(s, 0, sizeof(*s));
}

static int checksum_failure(nbg_code c)
{
	return c == NBG_E_SECTION_CHECKSUM_MISMATCH || c == NBG_E_FILE_CHECKSUM_MISMATCH ||
	       c == NBG_E_V1_CRC_SUM_MISMATCH;
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
 * stored checksum that does not match its bytes is parsed again with the
 * comparisons off and marked unverified (an export is never made from it).
 * Returns {"ok": true, "unverified": bool, "error": {...} when unverified},
 * or the failure. */
EMSCRIPTEN_KEEPALIVE char *nbg_web_parse(int i)
{
	nbg_parse_options o = { .size = sizeof(o), .flags = NBG_PARSE_ONE_THREAD };
	slot *s = slot_at(i);

	if (!s || !s->data)
		return fail_text(NBG_E_INVALID_ARGUMENT, "no file was handed over");
	nbg_model_free(s->model);
	s->model = NULL;
	s->unverified = 0;
	if (nbg_parse(s->data, s->size, &o, &s->model, &s->err) != NBG_OK) {
		nbg_error again;
		if (!checksum_failure(s->err.code))
			return fail_doc(&s->err);
		o.flags |= NBG_PARSE_NO_CRC_CHECK;
		if (nbg_parse(s->data, s->size, &o, &s->model, &again) != NBG_OK)
			return fail_doc(&s->err);
		s->unverified = 1;
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
	return nbg_json_document_write(f, s->model, name, report_what, err) == NBG_OK ? 0 : -1;
}

static int write_dot(FILE *f, const slot *s, const char *name, nbg_error *err)
{
	nbg_graph *g = NULL;
	nbg_commands *c = NULL;
	int rc = -1;

	if (nbg_graph_decode(s->model, &g, err) == NBG_OK &&
	    nbg_commands_decode(s->model, g, &c, err) == NBG_OK)
		rc = nbg_commands_dot(f, s->model, g, c, name) != 0 ? -1 : 0;
	if (rc != 0 && g && c) { /* the stream failed: out of memory */
		memset(err, 0, sizeof(*err));
		err->code = NBG_E_OUT_OF_MEMORY;
		snprintf(err->message, sizeof(err->message), "the page ran out of memory");
	}
	nbg_commands_free(c);
	nbg_graph_free(g);
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

/* The histogram of one decoded stream: how many codes differ from the
 * zero point by each value from `lo` to lo + bins - 1 (one bin per value:
 * the codes are uint8, so at most 256 bins). */
static json_t *histogram(const nbg_weights_op *o)
{
	size_t n = 0;
	const uint8_t *codes = nbg_weights_op_codes(o, &n);
	uint32_t min = 0, max = 0;
	uint64_t zeros = 0, count[256] = { 0 };
	int32_t zp = nbg_weights_op_zero_point(o);

	if (!codes)
		return json_null();
	nbg_weights_op_stats(o, &min, &max, &zeros);
	for (size_t k = 0; k < n; k++)
		count[codes[k]]++;
	json_t *bins = json_array();
	for (uint32_t v = min; bins && v <= max && v < 256; v++)
		json_array_append_new(bins, json_integer((json_int_t)count[v]));
	return json_pack("{s:I, s:o*}", "lo", (json_int_t)min - zp, "counts", bins);
}

/* One operation: its node in the DOT of nbg_web_dot (the layer's box, as
 * lib/report/dot_commands.c names it), its status and reason as `nbg
 * weights` prints them, its line of `nbg weights`, the histogram. */
static json_t *weights_op(const nbg_graph *g, const nbg_weights_op *o)
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
			      (json_int_t)shape[3], "histogram", histogram(o));
	free(line);
	return j;
}

/* The graph, commands and kernel streams of a model, as `nbg weights` and
 * `nbg ledger` decode them; NBG_OK, or the failure with what was decoded
 * before it left for the caller to free. */
static nbg_code decode_weights(const nbg_model *m, nbg_graph **g, nbg_commands **c,
			       nbg_weights **w, nbg_error *err)
{
	nbg_code rc = nbg_graph_decode(m, g, err);

	if (rc == NBG_OK)
		rc = nbg_commands_decode(m, *g, c, err);
	if (rc == NBG_OK)
		rc = nbg_weights_decode(m, *g, *c, w, err);
	return rc;
}

/* The kernel streams of slot i: {"operations": [weights_op...]}. */
static char *weights_doc(const slot *s, nbg_error *err)
{
	nbg_graph *g = NULL;
	nbg_commands *c = NULL;
	nbg_weights *w = NULL;
	char *text = NULL;

	if (decode_weights(s->model, &g, &c, &w, err) == NBG_OK) {
		json_t *ops = json_array();
		for (size_t k = 0; ops && k < nbg_weights_count(w); k++)
			if (json_array_append_new(ops, weights_op(g, nbg_weights_at(w, k))) != 0) {
				json_decref(ops);
				ops = NULL;
			}
		json_t *doc = ops ? json_pack("{s:o}", "operations", ops) : NULL;
		text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
		json_decref(doc);
		if (!text) {
			memset(err, 0, sizeof(*err));
			err->code = NBG_E_OUT_OF_MEMORY;
			snprintf(err->message, sizeof(err->message), "the page ran out of memory");
		}
	}
	nbg_weights_free(w);
	nbg_commands_free(c);
	nbg_graph_free(g);
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

/* `nbg map FILE --svg -`: the ledger's picture, the bytes of the decoded
 * kernel streams as decoded-coefficients.  Not for an unverified file (a
 * ledger needs a model whose checksums hold). */
EMSCRIPTEN_KEEPALIVE char *nbg_web_map(int i, const char *title)
{
	char *failure = NULL, *svg;
	const slot *s = loaded(i, &failure);
	nbg_graph *g = NULL;
	nbg_commands *c = NULL;
	nbg_weights *w = NULL;
	nbg_ledger *l = NULL;
	nbg_error err;
	nbg_code rc;

	if (!s)
		return failure;
	if (s->unverified)
		return fail_doc(&s->err);
	rc = decode_weights(s->model, &g, &c, &w, &err);
	if (rc == NBG_OK)
		rc = nbg_ledger_build_weights(s->model, w, &l, &err);
	nbg_weights_free(w);
	nbg_commands_free(c);
	nbg_graph_free(g);
	if (rc != NBG_OK)
		return fail_doc(&err);
	svg = nbg_ledger_svg(l, title);
	nbg_ledger_free(l);
	return take_text(svg, "out of memory drawing the map");
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
		nbg_sha256(buf, sizeof(buf), d);
		crc = nbg_crc32(crc, buf, sizeof(buf)) ^ d[0];
	}
	return crc;
}

EMSCRIPTEN_KEEPALIVE void nbg_web_free(void *p)
{
	free(p);
}
