/*
 * cmd_compare.c - `nbg compare A B`: two tensors, two dumps of nbg run
 * --dump, or two nbg run output directories, measured tensor by tensor
 * (nbg_tensor_measure: max |diff| stored and dequantized, mean |diff|,
 * cosine similarity, top-k agreement), and for dumps the first operation
 * that diverges beyond the tolerance (doc/debugging.md).  Exits as cmp:
 * 0 equal within the tolerance, 1 different, 2 trouble.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli.h"
#include "cli_compare.h"
#include "cli_opts.h"
#include "nbg/tensor.h"

enum { CMP_EQUAL = 0, CMP_DIFFERENT = 1, CMP_TROUBLE = 2 };

/* A tensor as compared: its stored values, shape and type, and how it
 * dequantizes (nbg_tensor_side). */
typedef struct cmp_tensor {
	float *stored;
	uint64_t n;
	uint32_t ndim;
	uint64_t shape[NBG_NPY_MAX_DIMS];
	const char *type;        /* NBG data format name */
	double zero_point, scale;
} cmp_tensor;

/* One pair measured: what names it, its stats. */
typedef struct cmp_pair {
	json_t *entry;           /* a dump's entry of A (operation, layer, ...), or NULL */
	char name[80];
	nbg_tensor_stats st;
} cmp_pair;

typedef struct cmp_args {
	const char *a, *b, *model;
	int json, side;          /* side: 0 none, 1 --input, 2 --output */
	unsigned long index;
	double tolerance;
	int relative;
	uint32_t top;
	const nbg_model *m;
} cmp_args;

static int trouble(const char *path, nbg_code code, const char *msg)
{
	if (path)
		fprintf(stderr, "nbg compare: %s: %s: %s\n", nbg_code_name(code), cli_esc(path), cli_esc_msg(msg));
	else
		fprintf(stderr, "nbg compare: %s: %s\n", nbg_code_name(code), cli_esc_msg(msg));
	return CMP_TROUBLE;
}

/* The NBG data format of a little-endian, C-order .npy dtype; -1 for
 * another. */
static int npy_format(const nbg_npy *p)
{
	static const struct {
		char kind;
		unsigned size;
		int fmt;
	} t[] = { { 'f', 4, 0 }, { 'f', 2, 1 }, { 'u', 1, 2 }, { 'i', 1, 3 }, { 'u', 2, 4 },
		  { 'i', 2, 5 }, { 'i', 4, 8 }, { 'u', 4, 9 }, { 'f', 8, 12 }, { 'b', 1, 2 } };
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!p->big_endian && t[i].kind == p->kind && t[i].size == p->item_size)
			return t[i].fmt;
	return -1;
}

/* raw bytes in format fmt into t's stored values; 0 or CMP_TROUBLE. */
static int stored_of(const char *path, uint32_t fmt, const uint8_t *raw, size_t size, uint64_t n, cmp_tensor *t)
{
	nbg_error e;
	if (nbg_tensor_stored(fmt, raw, size, n, &t->stored, &e) != NBG_OK)
		return trouble(path, e.code, e.message);
	t->n = n;
	t->type = nbg_data_format_name(fmt);
	/* float formats are their values; a code's scale is not known here */
	t->scale = fmt == 0 || fmt == 1 || fmt == 12 ? 1 : 0;
	return 0;
}

/* A .npy file (no model): its dtype's values, its shape. */
static int load_npy(const char *path, cmp_tensor *t)
{
	nbg_mapping map;
	nbg_npy p;
	nbg_error e;
	if (nbg_map_file(path, &map, &e) != NBG_OK)
		return trouble(path, e.code, e.message);
	int rc = 0;
	if (nbg_npy_parse(map.data, map.size, &p, &e) != NBG_OK)
		rc = trouble(path, e.code, e.message);
	else if (npy_format(&p) < 0 || (p.fortran_order && p.ndim > 1))
		rc = trouble(path, NBG_E_TENSOR_TYPE_MISMATCH,
			     "compared are little-endian C-order .npy files of a numeric dtype");
	else
		rc = stored_of(path, (uint32_t)npy_format(&p), p.data, p.data_size, p.count, t);
	if (!rc) {
		t->ndim = p.ndim;
		memcpy(t->shape, p.shape, sizeof(t->shape));
	}
	nbg_unmap_file(&map);
	return rc;
}

/* A file read with a model's record (--model, --input/--output): raw,
 * .npy, .tensor text or vpm_run's .dat as nbg tensor reads them, with the
 * record's shape and quantization. */
static int load_record(const char *path, const nbg_io *io, cmp_tensor *t)
{
	nbg_mapping map;
	nbg_error e;
	uint8_t *raw = NULL;
	size_t size = 0;
	if (nbg_map_file(path, &map, &e) != NBG_OK)
		return trouble(path, e.code, e.message);
	int rc = nbg_tensor_to_raw(io, nbg_tensor_kind_of(path), map.data, map.size, &raw, &size, &e) != NBG_OK
			 ? trouble(path, e.code, e.message)
			 : stored_of(path, io->data_format, raw, size, io->element_count, t);
	nbg_unmap_file(&map);
	free(raw);
	if (rc)
		return rc;
	t->ndim = io->dim_count;
	for (uint32_t d = 0; d < io->dim_count; d++)
		t->shape[d] = io->dims[io->dim_count - 1 - d];
	if (io->quant_format == NBG_QUANT_AFFINE) {
		t->zero_point = io->zero_point;
		t->scale = io->scale;
	} else if (io->quant_format == NBG_QUANT_DFP) {
		t->scale = ldexp(1.0, -io->fixed_point_pos);
	} else {
		t->scale = 1;
	}
	return 0;
}

static int same_shape(const cmp_tensor *a, const cmp_tensor *b)
{
	/* the type names are nbg_data_format_name's own strings */
	if (a->n != b->n || a->ndim != b->ndim || a->type != b->type)
		return 0;
	for (uint32_t d = 0; d < a->ndim; d++)
		if (a->shape[d] != b->shape[d])
			return 0;
	return 1;
}

static void shape_text(const cmp_tensor *t, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "[");
	for (uint32_t d = 0; d < t->ndim && n < size; d++)
		n += (size_t)snprintf(buf + n, size - n, "%s%llu", d ? "," : "", (unsigned long long)t->shape[d]);
	if (n < size)
		snprintf(buf + n, size - n, "] %s", t->type ? t->type : "?");
}

/* a against b into pair: 0, or CMP_TROUBLE (shapes or types differ). */
static int measure(const cmp_args *c, const char *what, const cmp_tensor *a, const cmp_tensor *b,
		   cmp_pair *pair)
{
	if (!same_shape(a, b)) {
		char sa[160], sb[160], msg[400];
		shape_text(a, sa, sizeof(sa));
		shape_text(b, sb, sizeof(sb));
		snprintf(msg, sizeof(msg), "%s: A holds %s, B %s; only tensors of one shape and type compare",
			 what, sa, sb);
		return trouble(NULL, NBG_E_TENSOR_SHAPE_MISMATCH, msg);
	}
	nbg_tensor_side sa = { a->stored, a->zero_point, a->scale }, sb = { b->stored, b->zero_point, b->scale };
	nbg_error e;
	if (nbg_tensor_measure(&sa, &sb, a->n, c->tolerance, c->relative, c->top, &pair->st, &e) != NBG_OK)
		return trouble(NULL, e.code, e.message);
	return 0;
}

/* A file name a dump.json lists: a plain name in the dump's directory
 * (no '/', no leading '.', no control characters). */
static int plain_name(const char *s)
{
	if (!s || !*s || *s == '.' || strlen(s) > 255)
		return 0;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c == '/' || *c < 0x20 || *c == 0x7f)
			return 0;
	return 1;
}

/* DIR/dump.json's operations array (a new reference), or NULL with the
 * trouble printed. */
static json_t *dump_ops(const char *dir)
{
	char path[4096];
	nbg_mapping map;
	nbg_error e;
	json_error_t je;
	snprintf(path, sizeof(path), "%s/dump.json", dir);
	if (nbg_map_file(path, &map, &e) != NBG_OK) {
		trouble(path, NBG_E_DUMP_INVALID, e.message);
		return NULL;
	}
	json_t *doc = json_loadb((const char *)map.data, map.size, 0, &je);
	nbg_unmap_file(&map);
	json_t *ops = json_incref(json_object_get(doc, "operations"));
	json_decref(doc);
	if (!json_is_array(ops)) {
		json_decref(ops);
		trouble(path, NBG_E_DUMP_INVALID, "not the dump.json nbg run --dump writes (no operations array)");
		return NULL;
	}
	return ops;
}

/* Entry i of a dump: its tensor, shaped and quantized as dump.json says. */
static int load_entry(const char *dir, json_t *entry, cmp_tensor *t)
{
	const char *file = json_string_value(json_object_get(entry, "file"));
	json_t *shape = json_object_get(entry, "shape"), *q = json_object_get(entry, "quantization");
	char path[4096];
	if (!plain_name(file))
		return trouble(dir, NBG_E_DUMP_INVALID, "dump.json lists a file that is not a plain name in it");
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	int rc = load_npy(path, t);
	if (rc)
		return rc;
	int ok = json_is_array(shape) && json_array_size(shape) == t->ndim;
	for (uint32_t d = 0; ok && d < t->ndim; d++)
		ok = json_integer_value(json_array_get(shape, d)) == (json_int_t)t->shape[d];
	if (!ok)
		return trouble(path, NBG_E_DUMP_INVALID, "its shape is not the one dump.json lists");
	if (json_is_integer(json_object_get(q, "zero_point")))
		t->zero_point = (double)json_integer_value(json_object_get(q, "zero_point"));
	if (json_is_number(json_object_get(q, "scale")) && json_number_value(json_object_get(q, "scale")) > 0)
		t->scale = json_number_value(json_object_get(q, "scale"));
	return 0;
}

static void free_tensor(cmp_tensor *t)
{
	free(t->stored);
	memset(t, 0, sizeof(*t));
}

/* The two dumps' entries i measured into pairs[i]. */
static int measure_entry(const cmp_args *c, json_t *ea, json_t *eb, size_t i, cmp_pair *pair)
{
	json_int_t oa = json_integer_value(json_object_get(ea, "operation"));
	json_int_t ob = json_integer_value(json_object_get(eb, "operation"));
	if (oa != ob || json_is_true(json_object_get(ea, "whole_layer")) !=
				json_is_true(json_object_get(eb, "whole_layer"))) {
		char msg[200];
		snprintf(msg, sizeof(msg), "entry %zu is operation %lld in A, %lld in B: dumps of other models",
			 i, (long long)oa, (long long)ob);
		return trouble(NULL, NBG_E_DUMP_INVALID, msg);
	}
	cmp_tensor ta = { 0 }, tb = { 0 };
	int rc = load_entry(c->a, ea, &ta);
	rc = rc ? rc : load_entry(c->b, eb, &tb);
	snprintf(pair->name, sizeof(pair->name), "operation %lld%s", (long long)oa,
		 json_is_true(json_object_get(ea, "whole_layer")) ? " (whole layer)" : "");
	pair->entry = json_incref(ea);
	rc = rc ? rc : measure(c, pair->name, &ta, &tb, pair);
	free_tensor(&ta);
	free_tensor(&tb);
	return rc;
}

static int compare_dumps(const cmp_args *c, cmp_pair **pairs, size_t *n)
{
	json_t *a = dump_ops(c->a), *b = a ? dump_ops(c->b) : NULL;
	int rc = b ? 0 : CMP_TROUBLE;
	if (!rc && json_array_size(a) != json_array_size(b))
		rc = trouble(NULL, NBG_E_DUMP_INVALID, "A and B list another number of tensors: dumps of other models");
	size_t count = rc ? 0 : json_array_size(a);
	*pairs = calloc(count + 1, sizeof(**pairs));
	if (!*pairs)
		rc = trouble(NULL, NBG_E_OUT_OF_MEMORY, "out of memory");
	for (size_t i = 0; !rc && i < count; i++, (*n)++)
		rc = measure_entry(c, json_array_get(a, i), json_array_get(b, i), i, &(*pairs)[i]);
	json_decref(a);
	json_decref(b);
	return rc;
}

/* nbg run's output directories: output_<i>.npy (float32) one by one. */
static int compare_runs(const cmp_args *c, cmp_pair **pairs, size_t *n)
{
	int rc = 0;
	*pairs = calloc(65, sizeof(**pairs));
	if (!*pairs)
		return trouble(NULL, NBG_E_OUT_OF_MEMORY, "out of memory");
	for (size_t i = 0; !rc && i < 64; i++) {
		char pa[4096], pb[4096];
		struct stat st;
		snprintf(pa, sizeof(pa), "%s/output_%zu.npy", c->a, i);
		snprintf(pb, sizeof(pb), "%s/output_%zu.npy", c->b, i);
		int ha = stat(pa, &st) == 0, hb = stat(pb, &st) == 0;
		if (!ha && !hb)
			break;
		cmp_tensor ta = { 0 }, tb = { 0 };
		snprintf((*pairs)[i].name, sizeof((*pairs)[i].name), "output_%zu.npy", i);
		rc = load_npy(pa, &ta);
		rc = rc ? rc : load_npy(pb, &tb);
		rc = rc ? rc : measure(c, (*pairs)[i].name, &ta, &tb, &(*pairs)[i]);
		free_tensor(&ta);
		free_tensor(&tb);
		*n += !rc;
	}
	if (!rc && !*n)
		rc = trouble(c->a, NBG_E_DUMP_INVALID, "no output_0.npy: not an nbg run output directory");
	return rc;
}

/* Two tensor files: .npy alone, or any kind with the model's record. */
static int compare_files(const cmp_args *c, cmp_pair **pairs, size_t *n)
{
	cmp_tensor ta = { 0 }, tb = { 0 };
	const nbg_io *io = !c->m ? NULL : c->side == 1 ? nbg_model_input_at(c->m, c->index)
						      : nbg_model_output_at(c->m, c->index);
	int rc = io ? load_record(c->a, io, &ta) : load_npy(c->a, &ta);
	rc = rc ? rc : io ? load_record(c->b, io, &tb) : load_npy(c->b, &tb);
	*pairs = calloc(2, sizeof(**pairs)); /* one more than measured, as the others */
	if (!rc && !*pairs)
		rc = trouble(NULL, NBG_E_OUT_OF_MEMORY, "out of memory");
	if (!rc) {
		snprintf((*pairs)[0].name, sizeof((*pairs)[0].name), "tensor");
		rc = measure(c, "the tensors", &ta, &tb, &(*pairs)[0]);
		*n = !rc;
	}
	free_tensor(&ta);
	free_tensor(&tb);
	return rc;
}

/* A finite double as a JSON real, else null. */
static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

void cli_compare_json_add(json_t *o, const nbg_tensor_stats *s, const char *unit)
{
	char key[64];
	json_object_set_new(o, "elements", json_integer((json_int_t)s->elements));
	json_object_set_new(o, "beyond", json_integer((json_int_t)s->beyond));
	json_object_set_new(o, "first_beyond", s->beyond ? json_integer((json_int_t)s->first_beyond) : json_null());
	snprintf(key, sizeof(key), "max_abs_diff_%s", unit);
	json_object_set_new(o, key, real_or_null(s->max_abs_stored));
	snprintf(key, sizeof(key), "mean_abs_diff_%s", unit);
	json_object_set_new(o, key, real_or_null(s->mean_abs_stored));
	json_object_set_new(o, "max_abs_diff_dequantized", real_or_null(s->max_abs));
	json_object_set_new(o, "mean_abs_diff_dequantized", real_or_null(s->mean_abs));
	json_object_set_new(o, "cosine", real_or_null(s->cosine));
	json_object_set_new(o, "top_k", json_integer(s->top_k));
	json_object_set_new(o, "top_k_common", json_integer(s->top_common));
	json_object_set_new(o, "top1_equal", json_boolean(s->top1_equal));
}

void cli_compare_figures(FILE *out, const nbg_tensor_stats *s, const char *unit)
{
	fprintf(out, "%llu/%llu elements beyond %g", (unsigned long long)s->beyond,
		(unsigned long long)s->elements, s->tolerance);
	if (s->beyond)
		fprintf(out, " (first at %llu)", (unsigned long long)s->first_beyond);
	fprintf(out, "; max |diff| %g %s", s->max_abs_stored, unit);
	if (isfinite(s->max_abs))
		fprintf(out, ", %g dequantized; mean |diff| %g %s, %g dequantized", s->max_abs, s->mean_abs_stored,
			unit, s->mean_abs);
	else
		fprintf(out, "; mean |diff| %g %s", s->mean_abs_stored, unit);
	fprintf(out, "; cosine %.9g; top-%u %u/%u%s\n", s->cosine, s->top_k, s->top_common, s->top_k,
		s->top1_equal ? "" : ", top-1 differs");
}

static json_t *pair_json(const cmp_pair *p)
{
	json_t *o = json_pack("{s:s, s:f}", "name", p->name, "tolerance", p->st.tolerance);
	if (!o)
		return NULL;
	cli_compare_json_add(o, &p->st, "stored");
	json_object_set_new(o, "equal", json_boolean(p->st.beyond == 0));
	if (p->entry)
		json_object_set(o, "a", p->entry);
	return o;
}

/* One pair's line. */
static void print_pair(const cmp_pair *p)
{
	printf("%s: %s, ", p->name, p->st.beyond ? "DIFFERENT" : "equal");
	cli_compare_figures(stdout, &p->st, "stored");
}

/* A dump.json entry's string member, "?" when it has none. */
static const char *text_of(json_t *entry, const char *key)
{
	const char *v = json_string_value(json_object_get(entry, key));
	return v ? v : "?";
}

/* The first pair beyond the tolerance, NULL when none. */
static const cmp_pair *first_divergent(const cmp_pair *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].st.beyond)
			return &p[i];
	return NULL;
}

static int report(const cmp_args *c, const char *kind, const cmp_pair *p, size_t n)
{
	const cmp_pair *f = first_divergent(p, n);
	if (c->json) {
		json_t *arr = json_array(), *fd = json_null();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, pair_json(&p[i]));
		if (f && f->entry)
			fd = json_deep_copy(f->entry);
		else if (f)
			fd = json_pack("{s:s}", "name", f->name);
		json_t *doc = json_pack("{s:o, s:o, s:s, s:{s:f, s:b}, s:o, s:o, s:b}", "a", cli_json_path(c->a),
					"b", cli_json_path(c->b), "kind", kind, "tolerance", "value", c->tolerance,
					"relative", c->relative, "tensors", arr, "first_divergent", fd, "equal", !f);
		char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
		json_decref(doc);
		if (!text)
			return trouble(NULL, NBG_E_OUT_OF_MEMORY, "out of memory");
		puts(text);
		free(text);
	} else {
		for (size_t i = 0; i < n; i++)
			print_pair(&p[i]);
		if (f && f->entry)
			/* dump.json's strings are the file's: escaped (up to eight at once) */
			printf("first divergent: %s, layer %lld %s (%s), %s\n", f->name,
			       (long long)json_integer_value(json_object_get(f->entry, "layer_id")),
			       cli_esc(text_of(f->entry, "layer")), cli_esc(text_of(f->entry, "operator")),
			       cli_esc(text_of(f->entry, "file")));
		printf("%s: %zu tensor%s compared, %s\n", f ? "different" : "equal", n, n == 1 ? "" : "s",
		       f ? "the first beyond the tolerance named above" : "all within the tolerance");
	}
	return f ? CMP_DIFFERENT : CMP_EQUAL;
}

/* --tolerance X (stored units) or X% (of B's range). */
static int tolerance_of(const char *v, cmp_args *c)
{
	char *end;
	c->tolerance = v ? strtod(v, &end) : 0;
	if (!v)
		return 0;
	c->relative = *end == '%';
	if (end == v || (*end && (*end != '%' || end[1])) || !isfinite(c->tolerance) || c->tolerance < 0)
		return cli_usage("compare", "--tolerance takes a number >= 0, or a percentage (1%%)");
	c->tolerance /= c->relative ? 100 : 1;
	return 0;
}

static int parse_args(int argc, char **argv, cmp_args *c)
{
	cli_compare_opts o = { 0 };
	const char **ops;
	int n, rc = cli_parse_operands("compare", argc, argv, &o, &ops, &n);
	memset(c, 0, sizeof(*c));
	if (rc == NBG_EXIT_OK && n != 2)
		rc = cli_usage("compare", "two operands: A and B");
	if (rc == NBG_EXIT_OK) {
		c->a = ops[0];
		c->b = ops[1];
	}
	free(ops);
	if (rc != NBG_EXIT_OK)
		return rc;
	c->json = o.json;
	c->model = o.model;
	c->side = o.input.set ? 1 : o.output.set ? 2 : 0;
	c->index = o.input.set ? o.input.value : o.output.value;
	c->top = (uint32_t)o.top;
	if (o.input.set && o.output.set)
		return cli_usage("compare", "--input N or --output N, not both");
	if (!c->model != !c->side)
		return cli_usage("compare", "--model M goes with --input N or --output N (the record)");
	return tolerance_of(o.tolerance, c);
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Which comparison A and B ask for, run. */
static int compare(cmp_args *c)
{
	cmp_pair *pairs = NULL;
	size_t n = 0;
	int rc;
	const char *kind = "tensor";
	char probe[4096];
	struct stat st;
	if (is_dir(c->a) != is_dir(c->b)) {
		rc = trouble(NULL, NBG_E_INVALID_ARGUMENT, "A and B must both be directories or both files");
	} else if (is_dir(c->a)) {
		snprintf(probe, sizeof(probe), "%s/dump.json", c->a);
		kind = stat(probe, &st) == 0 ? "dump" : "run";
		rc = c->model ? cli_usage("compare", "--model applies to two tensor files")
			      : *kind == 'd' ? compare_dumps(c, &pairs, &n) : compare_runs(c, &pairs, &n);
	} else {
		rc = compare_files(c, &pairs, &n);
	}
	if (!rc)
		rc = report(c, kind, pairs, n);
	/* every list holds one entry past those measured: a failed one's */
	for (size_t i = 0; pairs && i < n + 1; i++)
		json_decref(pairs[i].entry);
	free(pairs);
	return rc;
}

int cli_cmd_compare(int argc, char **argv)
{
	cmp_args c;
	int rc = parse_args(argc, argv, &c);
	if (rc)
		return rc == NBG_EXIT_USAGE ? CMP_TROUBLE : rc;
	cli_loaded l = { 0 };
	if (c.model) {
		if (cli_load(c.model, NULL, &l) != NBG_EXIT_OK) {
			cli_print_error(c.model, &l);
			cli_loaded_free(&l);
			return CMP_TROUBLE;
		}
		c.m = l.model;
		size_t have = c.side == 1 ? nbg_model_input_count(c.m) : nbg_model_output_count(c.m);
		if (c.index >= have) {
			fprintf(stderr, "nbg compare: the model has %zu %s records\n", have,
				c.side == 1 ? "input" : "output");
			cli_loaded_free(&l);
			return CMP_TROUBLE;
		}
	}
	rc = compare(&c);
	if (c.model)
		cli_loaded_free(&l);
	return rc;
}
