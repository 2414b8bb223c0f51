/*
 * test_memory.c - the memory analysis (nbg_mem_analyze) against the vendor
 * inspector's own output: every figure of `nbinfo -m -d`, its input /
 * memory-pool overlap summary, and the per-operation command, instruction and
 * coefficient sizes and I/O memory sizes of `nbinfo -a`, for every file of
 * the reference directory (NBG_REFERENCE_DIR) whose NBG is in the corpus.
 * The reference text is parsed here, independently of the library: the
 * expected numbers are the vendor's.  Also: the rules of doc/memory.md are the
 * library's, synthesized v2 files change one component at a time (expected
 * values derived by hand from the bytes the test writes), and the CLI.
 *
 * The synthesized cases run everywhere; those on real files are the part
 * --corpus, those also on the vendor's output the part --reference, each
 * skipped when its directory is absent (tests/corpus.h).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <zlib.h>

#include "corpus.h"
#include "fixture.h"
#include "nbg/graph.h"
#include "nbg/memory.h"
#include "nbg/nbg.h"
#include "seeds.h"

#define A64(x) (((uint64_t)(x) + 63) / 64 * 64)
#define A256(x) (((uint64_t)(x) + 255) / 256 * 256)

/* ----------------------------------------------------------------- helpers */

typedef struct loaded {
	uint8_t *buf;
	size_t size;
	nbg_model *m;
	nbg_graph *g;
	nbg_mem_report *r;
} loaded;

static void load_buf(loaded *l)
{
	nbg_error err;
	nbg_code rc = nbg_parse(l->buf, l->size, NULL, &l->m, &err);
	if (rc != NBG_OK)
		fail_msg("parse failed: %s at %llu: %s", nbg_code_name(rc),
			 (unsigned long long)err.offset, err.message);
	assert_int_equal(nbg_graph_decode(l->m, &l->g, &err), NBG_OK);
	assert_int_equal(nbg_mem_analyze(l->m, l->g, &l->r, &err), NBG_OK);
}

static void unload(loaded *l)
{
	nbg_mem_free(l->r);
	nbg_graph_free(l->g);
	nbg_model_free(l->m);
	free(l->buf);
	memset(l, 0, sizeof(*l));
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The reference part runs only when both directories exist (tests/corpus.h). */
static void need_reference(void)
{
	if (!is_dir(NBG_REFERENCE_DIR) || !is_dir(NBG_CORPUS_DIR))
		fail_msg("reference %s or corpus %s absent", NBG_REFERENCE_DIR, NBG_CORPUS_DIR);
}

static char *slurp(const char *path)
{
	size_t n;
	char *s = (char *)fx_read_file(path, &n);
	if (s)
		s[n] = '\0';
	return s;
}

/* Copies line [p, end of line) without surrounding blanks into buf. */
static const char *trimmed_line(const char *p, char *buf, size_t cap)
{
	const char *e = strchr(p, '\n');
	size_t n;
	if (!e)
		e = p + strlen(p);
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	n = (size_t)(e - p);
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		n--;
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return *e ? e + 1 : e;
}

/* "Label: <blanks> value" -> value; NULL when the line is not of that form. */
static const char *value_of(const char *line, const char *label)
{
	size_t n = strlen(label);
	if (strncmp(line, label, n) || line[n] != ':')
		return NULL;
	line += n + 1;
	while (*line == ' ')
		line++;
	return line;
}

/* The lines of the section whose title line is `title`: every non-empty line
 * after it that is not a line of stars, up to the first empty line. */
static size_t section_lines(const char *text, const char *title, char lines[][160], size_t cap)
{
	const char *p = strstr(text, title);
	char buf[160];
	size_t n = 0;

	if (!p)
		return 0;
	p = trimmed_line(p, buf, sizeof(buf));
	while (*p) {
		p = trimmed_line(p, buf, sizeof(buf));
		if (!buf[0])
			break;
		if (buf[0] != '*' && n < cap)
			snprintf(lines[n++], 160, "%s", buf);
	}
	return n;
}

typedef void (*ref_fn)(const char *fam, const char *base, loaded *l, const char *md,
		       const char *a, void *ctx);

/* Calls fn for every reference pair (BASE.md.txt, BASE.a.txt) whose NBG is
 * in the corpus; returns how many. */
static size_t each_reference(ref_fn fn, void *ctx)
{
	static const char *const fams[] = { "v1", "v2" };
	size_t files = 0;

	for (int f = 0; f < 2; f++) {
		char dir[1024];
		DIR *d;
		struct dirent *e;
		snprintf(dir, sizeof(dir), "%s/%s", NBG_REFERENCE_DIR, fams[f]);
		if (!(d = opendir(dir)))
			continue;
		while ((e = readdir(d)) != NULL) {
			size_t n = strlen(e->d_name);
			char base[256], nb[1600], md[1600], a[1600];
			loaded l = { 0 };
			if (n < 8 || strcmp(e->d_name + n - 7, ".md.txt") || n - 7 >= sizeof(base))
				continue;
			memcpy(base, e->d_name, n - 7);
			base[n - 7] = '\0';
			snprintf(nb, sizeof(nb), "%s/%s/%s.nb", NBG_CORPUS_DIR, fams[f], base);
			snprintf(md, sizeof(md), "%s/%s.md.txt", dir, base);
			snprintf(a, sizeof(a), "%s/%s.a.txt", dir, base);
			if (!(l.buf = fx_read_file(nb, &l.size)))
				continue;
			char *mdt = slurp(md), *at = slurp(a);
			assert_non_null(mdt);
			assert_non_null(at);
			load_buf(&l);
			fn(fams[f], base, &l, mdt, at, ctx);
			unload(&l);
			free(mdt);
			free(at);
			files++;
		}
		closedir(d);
	}
	return files;
}

/* The vendor's labels, written here independently of the library's table. */
static const struct {
	const char *label;
	nbg_mem_figure f;
} vendor_labels[] = {
	{ "Total Video Memory (bytes)", NBG_MEM_VIDEO_TOTAL },
	{ "-- Memory Pool (bytes)", NBG_MEM_POOL },
	{ "-- Total Input Memory (bytes)", NBG_MEM_INPUTS },
	{ "-- Total Output Memory (bytes)", NBG_MEM_OUTPUTS },
	{ "-- Total Operation Memory (bytes)", NBG_MEM_OPERATIONS },
	{ "-- Total Read Only(Coeff) Memory (bytes)", NBG_MEM_COEFFICIENTS },
	{ "-- Total Command buffer (bytes)", NBG_MEM_COMMAND_BUFFER },
	{ "-- Total Load States (bytes)", NBG_MEM_LOAD_STATES },
	{ "-- Total NN, TP and SP instruction (bytes)", NBG_MEM_NN_TP_INSTRUCTIONS },
	{ "-- Total PPU instruction (bytes)", NBG_MEM_PPU_INSTRUCTIONS },
	{ "-- Dynamic Input or Output (bytes)", NBG_MEM_DYNAMIC },
	{ "-- Total Dynamic Input (bytes)", NBG_MEM_DYNAMIC_INPUTS },
	{ "-- Total Dynamic Output (bytes)", NBG_MEM_DYNAMIC_OUTPUTS },
	{ "-- Video memory heap node reserved (bytes)", NBG_MEM_HEAP_RESERVE },
	{ "Total System Memory (bytes)", NBG_MEM_SYSTEM_TOTAL },
	{ "-- NBG header Size (bytes)", NBG_MEM_NBG_HEADER },
	{ "-- Allocate memory size (bytes)", NBG_MEM_ALLOCATED },
};
#define N_VENDOR_LABELS (sizeof(vendor_labels) / sizeof(vendor_labels[0]))

/* ------------------------------------------------ against the reference */

typedef struct counts {
	size_t files, figures, summaries, operations, io, features;
} counts;

static void check_memory_info(const char *what, const loaded *l, const char *text,
			      size_t expect, counts *c)
{
	char lines[64][160];
	size_t n = section_lines(text, "Memory Info", lines, 64), found = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < N_VENDOR_LABELS; k++) {
			const char *v = value_of(lines[i], vendor_labels[k].label);
			uint64_t want, got;
			if (!v)
				continue;
			want = strtoull(v, NULL, 10);
			got = nbg_mem_value_of(l->r, vendor_labels[k].f).vendor;
			if (got != want)
				fail_msg("%s: \"%s\" is %llu in the reference, nbgkit says %llu", what,
					 vendor_labels[k].label, (unsigned long long)want,
					 (unsigned long long)got);
			found++;
		}
	if (found != expect)
		fail_msg("%s: %zu of the %zu memory figures found in the reference", what, found,
			 expect);
	c->figures += found;
}

/* The vendor's two fixed summaries. */
#define VENDOR_POOL_EMPTY "memory pool size is 0, don't need the reuse optimization"
#define VENDOR_NOT_SUPPORTED "not support share buffer between input and memory pool."

/* The vendor's overlap summary, rendered here from the library's values. */
static size_t render_summary(const loaded *l, char out[][160], size_t cap)
{
	const nbg_mem_sharing *s = nbg_mem_sharing_of(l->r);
	size_t n = 0;

	for (size_t i = 0; i < nbg_mem_conflict_count(l->r); i++) {
		const nbg_mem_conflict *x = nbg_mem_conflict_at(l->r, i);
		if (!x->output && x->command && n < cap)
			snprintf(out[n++], 160, "input[%u] layer[%u] name=%s, output into memory pool",
				 x->io_index, x->layer_id, x->layer_id < nbg_graph_summary_of(l->g)->layer_count
				 ? nbg_graph_layer_at(l->g, x->layer_id)->name : "?");
	}
	if (s->inputs_clear) {
		snprintf(out[n++], 160, "memory pool size=%llubytes",
			 (unsigned long long)s->pool_bytes);
		snprintf(out[n++], 160, "Not overlap input:");
		for (size_t i = 0; i < nbg_model_input_count(l->m) && n < cap; i++)
			snprintf(out[n++], 160, "input[%zu], size=%llubytes", i,
				 (unsigned long long)nbg_mem_share_buffer_at(l->r, i)->aligned_bytes);
	}
	snprintf(out[n++], 160, "Summary:");
	if (s->verdict == NBG_MEM_SHARE_POOL_EMPTY)
		snprintf(out[n++], 160, VENDOR_POOL_EMPTY);
	else if (s->verdict != NBG_MEM_SHARE_POSSIBLE)
		snprintf(out[n++], 160, VENDOR_NOT_SUPPORTED);
	else
		for (size_t i = 0; i < nbg_model_input_count(l->m) && n + 1 < cap; i++) {
			snprintf(out[n++], 160, "input[%zu] can share with memory pool, should "
				 "allocate %llubytes memory", i, (unsigned long long)
				 nbg_mem_share_buffer_at(l->r, i)->allocation);
			snprintf(out[n++], 160, "for share buffer.");
		}
	return n;
}

static void check_summary(const char *what, const loaded *l, const char *text, counts *c)
{
	char want[64][160], got[64][160];
	size_t nw = section_lines(text, "Input and memory_pool overlap info", want, 64);
	size_t ng = render_summary(l, got, 64);

	assert_true(nw > 0);
	for (size_t i = 0; i < nw || i < ng; i++)
		if (i >= nw || i >= ng || strcmp(want[i], got[i]))
			fail_msg("%s: overlap summary line %zu: reference \"%s\", nbgkit \"%s\"", what,
				 i, i < nw ? want[i] : "(none)", i < ng ? got[i] : "(none)");
	c->summaries++;
}

static void check_figures(const char *fam, const char *base, loaded *l, const char *md,
			  const char *a, void *ctx)
{
	char what[600];

	snprintf(what, sizeof(what), "%s/%s", fam, base);
	check_memory_info(what, l, md, N_VENDOR_LABELS, ctx);
	check_memory_info(what, l, a, 2, ctx); /* -a: the two totals */
	check_summary(what, l, md, ctx);
	check_summary(what, l, a, ctx);
	((counts *)ctx)->files++;
}

static void test_reference_memory(void **state)
{
	counts c = { 0 };

	(void)state;
	need_reference();
	each_reference(check_figures, &c);
	print_message("%zu reference files: %zu memory figures and %zu overlap summaries equal "
		      "the vendor's\n", c.files, c.figures, c.summaries);
	assert_true(c.files > 0);
	assert_int_equal(c.figures, c.files * (N_VENDOR_LABELS + 2));
}

typedef struct vendor_op {
	char type[32];
	uint64_t command, instruction, coefficient;
	int has_coefficient;
} vendor_op;

static void compare_op(const char *what, const loaded *l, size_t k, const vendor_op *v)
{
	const nbg_mem_operation *x = nbg_mem_operation_at(l->r, k);
	const char *name;

	if (!x)
		fail_msg("%s: the reference has operation %zu, nbgkit has %zu", what, k,
			 nbg_mem_operation_count(l->r));
	name = nbg_graph_op_type_name(x->type);
	if (!name || strcasecmp(name, v->type))
		fail_msg("%s: operation %zu is %s in the reference, %s here", what, k, v->type,
			 name ? name : "?");
	if (x->command_bytes != v->command || x->instruction_bytes_vendor != v->instruction ||
	    (x->coefficient_patches != 0) != v->has_coefficient ||
	    (v->has_coefficient && x->coefficient_bytes_vendor != v->coefficient))
		fail_msg("%s: operation %zu (%s): reference command %llu instr %llu coeff %s%llx, "
			 "nbgkit %llu %llu %s%llx", what, k, v->type,
			 (unsigned long long)v->command, (unsigned long long)v->instruction,
			 v->has_coefficient ? "0x" : "none ", (unsigned long long)v->coefficient,
			 (unsigned long long)x->command_bytes,
			 (unsigned long long)x->instruction_bytes_vendor,
			 x->coefficient_patches ? "0x" : "none ",
			 (unsigned long long)x->coefficient_bytes_vendor);
}

/* The Operation Table of nbinfo -a: one record per "Operation Type:" line.
 * The coefficient line is "Coeff header Size" for v1, "Coeff data Size" for
 * v2, in hex. */
static void check_operations(const char *what, const loaded *l, const char *a, counts *c)
{
	const char *p = strstr(a, "\nOperation Table"), *end = strstr(a, "\nInput Table");
	const char *coef = nbg_model_family(l->m) == 1 ? "Coeff header Size (bytes)"
					     : "Coeff data Size (bytes)";
	const char *other = nbg_model_family(l->m) == 1 ? "Coeff data Size (bytes)"
					      : "Coeff header Size (bytes)";
	vendor_op v;
	size_t k = 0;
	int have = 0;
	char buf[160];

	assert_non_null(p);
	assert_non_null(end);
	while (p < end) {
		const char *x;
		p = trimmed_line(p, buf, sizeof(buf));
		if ((x = value_of(buf, "Operation Type"))) {
			if (have)
				compare_op(what, l, k++, &v);
			memset(&v, 0, sizeof(v));
			snprintf(v.type, sizeof(v.type), "%s", x);
			have = 1;
		} else if ((x = value_of(buf, "Command Size (bytes)"))) {
			v.command = strtoull(x, NULL, 10);
		} else if ((x = value_of(buf, "Instr Size (bytes)"))) {
			v.instruction = strtoull(x, NULL, 10);
		} else if ((x = value_of(buf, coef))) {
			v.coefficient = strtoull(x, NULL, 16);
			v.has_coefficient = 1;
		} else if (value_of(buf, other)) {
			fail_msg("%s: \"%s\" in a v%u file", what, other, nbg_model_family(l->m));
		}
	}
	if (have)
		compare_op(what, l, k++, &v);
	assert_int_equal(k, nbg_mem_operation_count(l->r));
	c->operations += k;
}

/* "Memory Size (bytes)" of every Input N / Output N record: the aligned size. */
static void check_io(const char *what, const loaded *l, const char *a, counts *c)
{
	const char *p = strstr(a, "\nInput Table"), *end = strstr(a, "overlap info");
	const nbg_io *io = NULL;
	char buf[160];
	size_t seen = 0;
	unsigned i;

	assert_non_null(p);
	assert_non_null(end);
	while (p < end) {
		const char *x;
		p = trimmed_line(p, buf, sizeof(buf));
		if (sscanf(buf, "Input %u", &i) == 1 && !strchr(buf, ':'))
			io = nbg_model_input_at(l->m, i);
		else if (sscanf(buf, "Output %u", &i) == 1 && !strchr(buf, ':'))
			io = nbg_model_output_at(l->m, i);
		else if ((x = value_of(buf, "Memory Size (bytes)"))) {
			if (!io || !io->byte_size_known)
				fail_msg("%s: \"%s\" for a record nbgkit has no size for", what, buf);
			if (nbg_mem_aligned_buffer(io->byte_size) != strtoull(x, NULL, 10) ||
			    A64(io->byte_size) != strtoull(x, NULL, 10))
				fail_msg("%s: %s; nbgkit: %llu aligned %llu", what, buf,
					 (unsigned long long)io->byte_size,
					 (unsigned long long)nbg_mem_aligned_buffer(io->byte_size));
			seen++;
		}
	}
	assert_int_equal(seen, nbg_model_input_count(l->m) + nbg_model_output_count(l->m));
	c->io += seen;
}

/* The second "Overall Info" block: NN / TP command size and change-PPU bit,
 * against the library and, for v1, feature word 0 decoded here. */
static void check_features(const char *what, const loaded *l, const char *a, counts *c)
{
	const char *p = strstr(a, "nn command size");
	uint32_t nn, tp, ppu, w;
	char buf[160];
	const char *x;

	assert_non_null(p);
	p = trimmed_line(p, buf, sizeof(buf));
	assert_non_null((x = value_of(buf, "nn command size")));
	nn = (uint32_t)strtoul(x, NULL, 10);
	p = trimmed_line(p, buf, sizeof(buf));
	assert_non_null((x = value_of(buf, "tp command size")));
	tp = (uint32_t)strtoul(x, NULL, 10);
	trimmed_line(p, buf, sizeof(buf));
	assert_non_null((x = value_of(buf, "change ppu param")));
	ppu = (uint32_t)strtoul(x, NULL, 10);
	if (nbg_model_family(l->m) == 2) {
		const nbg_network_info *ni = nbg_model_network_info(l->m);
		if (ni->nn_command_bytes != nn || ni->tp_command_bytes != tp ||
		    ni->change_ppu_param != ppu)
			fail_msg("%s: reference nn %u tp %u ppu %u", what, nn, tp, ppu);
	} else {
		const nbg_v1_info *v1 = nbg_model_v1(l->m);
		assert_true(v1->has_feature_db);
		w = fx_get32(l->buf + v1->feature_db_offset);
		if (v1->nn_command_bytes != nn || v1->tp_command_bytes != tp ||
		    v1->change_ppu_param != ppu || ((w >> 5) & 3) != (tp == 192) ||
		    ((w >> 4) & 1) != ppu || ((w >> 2) & 3) != (nn == 192))
			fail_msg("%s: word 0 0x%08x; reference nn %u tp %u ppu %u; nbgkit %u %u %u",
				 what, w, nn, tp, ppu, v1->nn_command_bytes, v1->tp_command_bytes,
				 v1->change_ppu_param);
	}
	c->features++;
}

static void check_a(const char *fam, const char *base, loaded *l, const char *md,
		    const char *a, void *ctx)
{
	char what[600];

	(void)md;
	snprintf(what, sizeof(what), "%s/%s", fam, base);
	check_operations(what, l, a, ctx);
	check_io(what, l, a, ctx);
	check_features(what, l, a, ctx);
	((counts *)ctx)->files++;
}

static void test_reference_operations(void **state)
{
	counts c = { 0 };

	(void)state;
	need_reference();
	each_reference(check_a, &c);
	print_message("%zu reference files: %zu operations' command / instruction / coefficient "
		      "sizes, %zu I/O memory sizes and %zu feature blocks equal the vendor's\n",
		      c.files, c.operations, c.io, c.features);
	assert_true(c.files > 0);
	assert_int_equal(c.features, c.files);
}

/* ------------------------------------- the command against the reference */

/* The Bytes column of figure `f` in the text report's Memory section;
 * UINT64_MAX when the line is missing. */
static uint64_t text_figure(const char *out, nbg_mem_figure f)
{
	const nbg_mem_rule *u = nbg_mem_rule_of(f);
	const char *mem = strstr(out, "\nMemory:\n");
	char want[128];
	const char *p;

	snprintf(want, sizeof(want), "\n  %*s%s ", 2 * (int)u->depth, "", u->label);
	if (!mem || !(p = strstr(mem, want)))
		return UINT64_MAX;
	return strtoull(p + strlen(want), NULL, 10);
}

/* The JSON sharing object's input buffer i, or NULL. */
static json_t *json_input(json_t *sharing, unsigned i)
{
	json_t *b = json_object_get(sharing, "buffers");
	for (size_t k = 0; k < json_array_size(b); k++) {
		json_t *x = json_array_get(b, k);
		if (!strcmp(json_string_value(json_object_get(x, "kind")), "input") &&
		    json_integer_value(json_object_get(x, "index")) == (json_int_t)i)
			return x;
	}
	return NULL;
}

static json_int_t jint(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* The vendor's conclusion from its overlap lines: the verdict (a "not
 * support" summary is a conflict when lines name one), whether it printed the
 * "Not overlap input" block, how many conflict lines. */
static const char *vendor_verdict(char lines[][160], size_t n, int *block, size_t *named)
{
	const char *verdict = NULL;

	*block = 0;
	*named = 0;
	for (size_t k = 0; k < n; k++) {
		if (strstr(lines[k], ", output into memory pool"))
			++*named;
		else if (!strcmp(lines[k], "Not overlap input:"))
			*block = 1;
		else if (!strcmp(lines[k], VENDOR_POOL_EMPTY))
			verdict = "pool-empty";
		else if (!strcmp(lines[k], VENDOR_NOT_SUPPORTED))
			verdict = *named ? "conflict" : "not-supported";
		else if (strstr(lines[k], "can share with memory pool"))
			verdict = "can-share";
	}
	return verdict;
}

/* The vendor's overlap lines against the JSON sharing object: its verdict,
 * inputs_clear and conflict count, then line by line its conflicts (COMMAND
 * input conflicts, in order), its "Not overlap input" block (the pool, the
 * aligned sizes of clear inputs) and its allocations. */
static void check_overlap_json(const char *what, const char *md, json_t *doc)
{
	json_t *sh = json_object_get(json_object_get(doc, "memory"), "sharing");
	json_t *conf = json_object_get(sh, "conflicts"), *layers = json_object_get(doc, "layers");
	char lines[64][160], name[160];
	size_t n = section_lines(md, "Input and memory_pool overlap info", lines, 64), named,
	       next = 0;
	int block;
	const char *verdict = vendor_verdict(lines, n, &block, &named);
	const char *got = json_string_value(json_object_get(sh, "verdict"));
	unsigned i, layer;
	unsigned long long bytes;

	if (!verdict)
		fail_msg("%s: the reference has no summary", what);
	if (!got || strcmp(got, verdict))
		fail_msg("%s: the reference concludes %s, nbgkit %s", what, verdict,
			 got ? got : "(nothing)");
	if (json_is_true(json_object_get(sh, "inputs_clear")) != block)
		fail_msg("%s: the reference %s the \"Not overlap input\" block, nbgkit's "
			 "inputs_clear is not %s", what, block ? "has" : "has not",
			 block ? "true" : "false");
	if (jint(sh, "conflicts_total") != (json_int_t)named)
		fail_msg("%s: the reference names %zu conflicts, nbgkit %lld", what, named,
			 (long long)jint(sh, "conflicts_total"));
	for (size_t k = 0; k < n; k++) {
		const char *v = lines[k];
		json_t *x;
		if (sscanf(v, "input[%u] layer[%u] name=%159[^\n]", &i, &layer, name) == 3) {
			*strstr(name, ", output into memory pool") = '\0';
			while ((x = json_array_get(conf, next++)) &&
			       (strcmp(json_string_value(json_object_get(x, "kind")), "input") ||
				!json_is_true(json_object_get(x, "command"))))
				;
			if (!x || jint(x, "index") != i || jint(x, "layer_id") != layer ||
			    strcmp(json_string_value(json_object_get(
					   json_array_get(layers, layer), "name")), name))
				fail_msg("%s: the reference's conflict \"%s\" is not nbgkit's next "
					 "COMMAND input conflict", what, v);
		} else if (sscanf(v, "memory pool size=%llubytes", &bytes) == 1) {
			assert_int_equal(jint(sh, "pool_bytes"), bytes);
		} else if (sscanf(v, "input[%u], size=%llubytes", &i, &bytes) == 2) {
			assert_non_null(x = json_input(sh, i));
			assert_true(json_is_true(json_object_get(x, "clear")));
			assert_int_equal(jint(x, "aligned_bytes"), bytes);
		} else if (sscanf(v, "input[%u] can share with memory pool, should allocate "
				  "%llubytes", &i, &bytes) == 2) {
			assert_non_null(x = json_input(sh, i));
			assert_int_equal(jint(x, "allocation"), bytes);
		} else if (strcmp(v, "Summary:") && strcmp(v, "Not overlap input:") &&
			   strcmp(v, "for share buffer.") &&
			   strcmp(v, VENDOR_POOL_EMPTY) && strcmp(v, VENDOR_NOT_SUPPORTED)) {
			fail_msg("%s: reference line \"%s\" not understood", what, v);
		}
	}
}

/* One corpus file: `nbg inspect --json --memory --layers` and `nbg inspect
 * --memory` against the vendor's -m -d output. */
static void check_cli_file(const char *nb, const char *md_path, counts *c)
{
	char *md = slurp(md_path);
	char lines[64][160];
	fx_run_result r;
	json_t *doc;
	size_t n;

	if (!md)
		fail_msg("%s has no reference output %s", nb, md_path);
	n = section_lines(md, "Memory Info", lines, 64);
	r = fx_run_nbg(NULL, "inspect --json --memory --layers '%s'", nb);
	assert_int_equal(r.status, 0);
	assert_non_null(doc = json_loads(r.out, 0, NULL));
	fx_run_free(&r);
	r = fx_run_nbg(NULL, "inspect --memory '%s'", nb);
	assert_int_equal(r.status, 0);
	for (size_t i = 0; i < N_VENDOR_LABELS; i++) {
		const nbg_mem_rule *u = nbg_mem_rule_of(vendor_labels[i].f);
		const char *v = NULL;
		json_t *fig = json_object_get(json_object_get(json_object_get(doc, "memory"),
							      "figures"), u->key);
		for (size_t k = 0; k < n && !v; k++)
			v = value_of(lines[k], vendor_labels[i].label);
		if (!v)
			fail_msg("%s: no \"%s\" in the reference", md_path, vendor_labels[i].label);
		uint64_t want = strtoull(v, NULL, 10), js = (uint64_t)jint(fig, "vendor_bytes"),
			 tx = text_figure(r.out, vendor_labels[i].f);
		if (js != want || tx != want)
			fail_msg("%s: \"%s\" is %llu in the reference; --json says %llu, the text "
				 "%llu", nb, vendor_labels[i].label, (unsigned long long)want,
				 (unsigned long long)js, (unsigned long long)tx);
		c->figures++;
	}
	check_overlap_json(nb, md, doc);
	c->summaries++;
	json_decref(doc);
	fx_run_free(&r);
	free(md);
}

/* Every NBG of the corpus has a reference, and the command's memory report
 * (JSON and text) equals it: the 17 figures and the overlap verdict with
 * the facts behind its lines. */
static void test_reference_cli(void **state)
{
	static const char *const fams[] = { "v1", "v2" };
	counts c = { 0 };

	(void)state;
	need_reference();
	for (int f = 0; f < 2; f++) {
		char dir[1024];
		DIR *d;
		struct dirent *e;
		snprintf(dir, sizeof(dir), "%s/%s", NBG_CORPUS_DIR, fams[f]);
		assert_non_null(d = opendir(dir));
		while ((e = readdir(d)) != NULL) {
			size_t len = strlen(e->d_name);
			char nb[1600], md[1600];
			if (len < 4 || strcmp(e->d_name + len - 3, ".nb"))
				continue;
			snprintf(nb, sizeof(nb), "%s/%s", dir, e->d_name);
			snprintf(md, sizeof(md), "%s/%s/%.*s.md.txt", NBG_REFERENCE_DIR, fams[f],
				 (int)(len - 3), e->d_name);
			check_cli_file(nb, md, &c);
			c.files++;
		}
		closedir(d);
	}
	print_message("%zu corpus files: nbg inspect --memory (text and JSON) gives the "
		      "vendor's %zu figures and %zu overlap verdicts\n", c.files, c.figures,
		      c.summaries);
	assert_true(c.files > 0);
	assert_int_equal(c.figures, c.files * N_VENDOR_LABELS);
}

/* ------------------------------------------------------ synthesized files */

/* The vendor-equivalent figures of the fixture's default v2 file, derived by
 * hand from the bytes fx_default() writes (fixture.c): */
static const uint64_t fx_pool = 648448;         /* MEMORY_POOL word */
static const uint64_t fx_in = 98304;            /* [3,128,128,1] INT16 */
static const uint64_t fx_out = 28672 + 1792;    /* [16,896,1] INT16, [1,896,1] FP16 */
static const uint64_t fx_coef = A64(1000);      /* COEF_DATA 1000 bytes */
static const uint64_t fx_ls = A64(600);         /* LOADSTATE 600, no ICD */
static const uint64_t fx_nn = A64(384);         /* NN 2 x 192, no TP */
static const uint64_t fx_ppu = A256(672);       /* the SH op's PPU_INSTR_TABLE entry */
static const uint64_t fx_dyn_out = A64(192);    /* DYNAIO 192, no dynamic input patch */
/* records: 3 layers, 4 operations, 5 patches, 3 I/O, 1 SH; tables 16+8+32+16 */
static const uint64_t fx_head = 3 * 76 + 4 * 36 + 5 * 48 + 3 * 112 + 1 * 8 + 72;
/* 2 patches name an input or an output; LOADSTATE 600 */
static const uint64_t fx_alloc = 93800 + 3 * 176 + 2 * 16 + 600;

typedef struct figures {
	uint64_t v[NBG_MEM__COUNT];
} figures;

static figures spec_figures(fx_spec *s, loaded *keep)
{
	loaded l = { 0 };
	figures f;

	l.buf = fx_build(s, &l.size);
	load_buf(&l);
	for (int i = 0; i < NBG_MEM__COUNT; i++)
		f.v[i] = nbg_mem_value_of(l.r, (nbg_mem_figure)i).vendor;
	if (keep)
		*keep = l;
	else
		unload(&l);
	return f;
}

/* The figures derived from the parts above: the totals and subtotals. */
static void derive(uint64_t *v)
{
	v[NBG_MEM_COMMAND_BUFFER] = v[NBG_MEM_LOAD_STATES] + v[NBG_MEM_NN_TP_INSTRUCTIONS] +
				    v[NBG_MEM_PPU_INSTRUCTIONS];
	v[NBG_MEM_DYNAMIC] = v[NBG_MEM_DYNAMIC_INPUTS] + v[NBG_MEM_DYNAMIC_OUTPUTS];
	v[NBG_MEM_HEAP_RESERVE] = 20480;
	v[NBG_MEM_VIDEO_TOTAL] = A256(v[NBG_MEM_POOL] + v[NBG_MEM_INPUTS] + v[NBG_MEM_OUTPUTS] +
				      v[NBG_MEM_OPERATIONS] + 20480);
	v[NBG_MEM_FLASH_VIDEO_TOTAL] = A256(v[NBG_MEM_POOL] + v[NBG_MEM_INPUTS] +
					    v[NBG_MEM_OUTPUTS] + v[NBG_MEM_OPERATIONS] -
					    v[NBG_MEM_COEFFICIENTS] + 20480);
	v[NBG_MEM_SYSTEM_TOTAL] = v[NBG_MEM_NBG_HEADER] + v[NBG_MEM_ALLOCATED];
	v[NBG_MEM_FLASH_SYSTEM_TOTAL] = v[NBG_MEM_ALLOCATED];
}

static figures fx_expected(void)
{
	figures e = { { 0 } };
	uint64_t *v = e.v;

	v[NBG_MEM_POOL] = fx_pool;
	v[NBG_MEM_INPUTS] = fx_in;
	v[NBG_MEM_OUTPUTS] = fx_out;
	v[NBG_MEM_COEFFICIENTS] = fx_coef;
	v[NBG_MEM_LOAD_STATES] = fx_ls;
	v[NBG_MEM_NN_TP_INSTRUCTIONS] = fx_nn;
	v[NBG_MEM_PPU_INSTRUCTIONS] = fx_ppu;
	v[NBG_MEM_DYNAMIC_OUTPUTS] = fx_dyn_out;
	v[NBG_MEM_NBG_HEADER] = fx_head;
	v[NBG_MEM_ALLOCATED] = fx_alloc;
	v[NBG_MEM_OPERATIONS] = fx_coef + fx_ls + fx_nn + fx_ppu + fx_dyn_out;
	derive(v);
	return e;
}

static void assert_figures(const char *what, const figures *got, const figures *want)
{
	for (int i = 0; i < NBG_MEM__COUNT; i++)
		if (got->v[i] != want->v[i])
			fail_msg("%s: %s is %llu, expected %llu", what,
				 nbg_mem_rule_of((nbg_mem_figure)i)->key,
				 (unsigned long long)got->v[i], (unsigned long long)want->v[i]);
}

static void test_synth_default(void **state)
{
	fx_spec *s = fx_default();
	figures want = fx_expected(), got;
	loaded l;

	(void)state;
	got = spec_figures(s, &l);
	assert_figures("default fixture", &got, &want);
	/* exact values where the vendor rounds: PPU 672 not 768, COEF_DATA 1000 */
	assert_int_equal(nbg_mem_value_of(l.r, NBG_MEM_PPU_INSTRUCTIONS).exact, 672);
	assert_int_equal(nbg_mem_value_of(l.r, NBG_MEM_COEFFICIENTS).exact, 1000);
	assert_int_equal(nbg_mem_value_of(l.r, NBG_MEM_HEAP_RESERVE).from_file, 0);
	assert_int_equal(nbg_mem_layout_of(l.r), NBG_MEM_LAYOUT_SECTIONS);
	/* per operation (fixture.c): INIT state 0 -> LOADSTATE_TABLE (0,40); NN state 1
	 * -> (40,32), 192-byte command; SH state 2 -> (72,104), instr entry 672, patch 3
	 * names COEF_DATA_TABLE entry 1 (512,400); NT state 3 -> (176,64) */
	static const uint64_t cmd[4] = { 40, 32, 104, 64 }, ins[4] = { 0, 192, 672, 192 },
			      insv[4] = { 0, 192, 672, 0 }, coef[4] = { 0, 0, 400, 0 };
	assert_int_equal(nbg_mem_operation_count(l.r), 4);
	for (size_t i = 0; i < 4; i++) {
		const nbg_mem_operation *x = nbg_mem_operation_at(l.r, i);
		assert_int_equal(x->command_bytes, cmd[i]);
		assert_int_equal(x->instruction_bytes, ins[i]);
		assert_int_equal(x->instruction_bytes_vendor, insv[i]);
		assert_int_equal(x->coefficient_bytes, coef[i]);
		assert_int_equal(x->coefficient_bytes_vendor, coef[i]);
		assert_int_equal(x->coefficient_bytes_owned, coef[i]);
	}
	/* layer 1 (the SH operation's) holds the most: 400 + 104 + 672 */
	assert_int_equal(nbg_mem_layer_ranked(l.r, 0)->layer, 1);
	assert_int_equal(nbg_mem_layer_ranked(l.r, 0)->total_bytes, 400 + 104 + 672);
	assert_int_equal(nbg_mem_layer_outside(l.r)->command_bytes, 40);
	/* sharing: operation 1 reads input 0 (patch 2) and names no pool */
	const nbg_mem_sharing *sh = nbg_mem_sharing_of(l.r);
	const nbg_mem_share_buffer *in = nbg_mem_share_buffer_at(l.r, 0);
	assert_int_equal(sh->verdict, NBG_MEM_SHARE_POSSIBLE);
	assert_true(sh->inputs_clear);
	assert_int_equal(in->reads, 1);
	assert_int_equal(in->layer_low, 0);
	assert_int_equal(in->layer_high, 0);
	assert_true(in->clear);
	assert_true(in->can_share);
	assert_int_equal(sh->allocation, fx_pool);
	assert_int_equal(sh->input_patches, 1);
	assert_int_equal(sh->output_patches, 1);
	assert_int_equal(nbg_mem_conflict_count(l.r), 0);
	unload(&l);
	fx_free(s);
}

/* One change to the default file; `set` gives the figures it changes. */
typedef struct variant {
	const char *what;
	void (*edit)(fx_spec *s);
	void (*expect)(uint64_t *v);
} variant;

static void ed_pool(fx_spec *s)
{
	fx_put32(fx_find(s, 37)->data, 648448 + 6400);
}
static void ex_pool(uint64_t *v)
{
	v[NBG_MEM_POOL] = 648448 + 6400;
}

static void ed_input(fx_spec *s)
{
	fx_put32(fx_find(s, 1)->data + 8, 130); /* dims [3,130,128,1] */
}
static void ex_input(uint64_t *v)
{
	v[NBG_MEM_INPUTS] = A64(3 * 130 * 128 * 2);
}

static void ed_output(fx_spec *s)
{
	fx_put32(fx_find(s, 2)->data + 112 + 4, 3); /* output 1 [3,896,1] FP16 */
}
static void ex_output(uint64_t *v)
{
	v[NBG_MEM_OUTPUTS] = 28672 + A64(3 * 896 * 2);
}

static void ed_coef(fx_spec *s)
{
	fx_resize(fx_find(s, 24), 1100);
}
static void ex_coef(uint64_t *v)
{
	v[NBG_MEM_COEFFICIENTS] = A64(1100);
	v[NBG_MEM_OPERATIONS] += A64(1100) - fx_coef;
}

static void ed_loadstate(fx_spec *s)
{
	fx_resize(fx_find(s, 21), 700);
}
static void ex_loadstate(uint64_t *v)
{
	v[NBG_MEM_LOAD_STATES] = A64(700);
	v[NBG_MEM_OPERATIONS] += A64(700) - fx_ls;
	v[NBG_MEM_ALLOCATED] = fx_alloc + 100; /* the patched copy of the load states */
}

static void ed_icd(fx_spec *s)
{
	fx_set(s, 15, NULL, 100, 0, 1);
}
static void ex_icd(uint64_t *v)
{
	v[NBG_MEM_LOAD_STATES] = fx_ls + A64(100); /* the load states include it ... */
	/* ... the operation memory does not: unchanged */
}

static void ed_nn(fx_spec *s)
{
	fx_resize(fx_find(s, 7), 3 * 192);
}
static void ex_nn(uint64_t *v)
{
	v[NBG_MEM_NN_TP_INSTRUCTIONS] = 3 * 192;
	v[NBG_MEM_OPERATIONS] += 192;
}

static void ed_tp(fx_spec *s)
{
	fx_set(s, 8, NULL, 192, 0, 192);
	fx_resize(fx_find(s, 40), 40); /* a fifth CHECKSUM record, for TP */
}
static void ex_tp(uint64_t *v)
{
	v[NBG_MEM_NN_TP_INSTRUCTIONS] = fx_nn + 192;
	v[NBG_MEM_OPERATIONS] += 192;
}

static void ed_ppu(fx_spec *s)
{
	fx_put32(fx_find(s, 25)->data + 4, 700); /* PPU_INSTR_TABLE entry 0: (0, 700) */
}
static void ex_ppu(uint64_t *v)
{
	v[NBG_MEM_PPU_INSTRUCTIONS] = A256(700);
	v[NBG_MEM_OPERATIONS] += A256(700) - fx_ppu;
}

static void ed_dynamic(fx_spec *s)
{
	/* patch 3 (STATE, index 1): MISC_DYNA_GENERIC -> MISC_DYNA_INPUT, naming
	 * DYNAIO_TABLE entry 1 (64, 128) */
	fx_put32(fx_find(s, 10)->data + 3 * 28 + 8, 6);
}
static void ex_dynamic(uint64_t *v)
{
	v[NBG_MEM_DYNAMIC_INPUTS] = 128;
	v[NBG_MEM_DYNAMIC_OUTPUTS] = A64(192) - 128;
}

static void ed_patch(fx_spec *s)
{
	fx_resize(fx_find(s, 10), 6 * 28); /* a sixth patch, source COMMAND */
}
static void ex_patch(uint64_t *v)
{
	v[NBG_MEM_NBG_HEADER] = fx_head + 48;
}

static void ed_io_patch(fx_spec *s)
{
	fx_put32(fx_find(s, 10)->data + 0 * 28 + 8, 2); /* patch 0: VIP-SRAM -> OUTPUT */
}
static void ex_io_patch(uint64_t *v)
{
	v[NBG_MEM_ALLOCATED] = fx_alloc + 16;
}

static void test_synth_components(void **state)
{
	static const variant vs[] = {
		{ "memory pool +6400", ed_pool, ex_pool },
		{ "input [3,130,128,1]", ed_input, ex_input },
		{ "output 1 [3,896,1]", ed_output, ex_output },
		{ "COEF_DATA 1100 bytes", ed_coef, ex_coef },
		{ "LOADSTATE 700 bytes", ed_loadstate, ex_loadstate },
		{ "ICD 100 bytes", ed_icd, ex_icd },
		{ "NN 3 commands", ed_nn, ex_nn },
		{ "TP 1 command", ed_tp, ex_tp },
		{ "PPU instruction entry 700 bytes", ed_ppu, ex_ppu },
		{ "a dynamic-input patch", ed_dynamic, ex_dynamic },
		{ "a sixth patch", ed_patch, ex_patch },
		{ "an output patch", ed_io_patch, ex_io_patch },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		fx_spec *s = fx_default();
		figures want = fx_expected(), got;
		vs[i].edit(s);
		vs[i].expect(want.v);
		derive(want.v);
		got = spec_figures(s, NULL);
		assert_figures(vs[i].what, &got, &want);
		fx_free(s);
	}
}

static void test_synth_conflict(void **state)
{
	fx_spec *s = fx_default();
	loaded l;

	(void)state;
	/* patch 1 (operation 1, which reads input 0 through patch 2): COMMAND ->
	 * MEMORY_POOL */
	fx_put32(fx_find(s, 10)->data + 1 * 28 + 8, 3);
	spec_figures(s, &l);
	const nbg_mem_sharing *sh = nbg_mem_sharing_of(l.r);
	assert_int_equal(sh->verdict, NBG_MEM_SHARE_CONFLICT);
	assert_int_equal(sh->conflicts_total, 1);
	assert_int_equal(sh->input_other_conflicts, 0);
	assert_false(sh->inputs_clear);
	assert_int_equal(sh->allocation, 0);
	assert_int_equal(nbg_mem_conflict_count(l.r), 1);
	const nbg_mem_conflict *c = nbg_mem_conflict_at(l.r, 0);
	assert_int_equal(c->output, 0);
	assert_int_equal(c->command, 1);
	assert_int_equal(c->io_index, 0);
	assert_int_equal(c->operation, 1);
	assert_int_equal(c->layer_id, 0);
	assert_int_equal(c->io_patch, 2);
	assert_int_equal(c->pool_patch, 1);
	assert_false(nbg_mem_share_buffer_at(l.r, 0)->can_share);
	assert_true(nbg_mem_share_buffer_at(l.r, 1)->can_share); /* output 0: no conflict */
	unload(&l);

	/* No MEMORY_POOL section: the pool is empty; the input is still clear (one
	 * layer reads it), so the vendor would list it as not overlapping. */
	fx_free(s);
	s = fx_default();
	fx_remove(s, 37);
	spec_figures(s, &l);
	sh = nbg_mem_sharing_of(l.r);
	assert_true(sh->inputs_clear);
	assert_int_equal(sh->verdict, NBG_MEM_SHARE_POOL_EMPTY);
	assert_int_equal(nbg_mem_value_of(l.r, NBG_MEM_POOL).vendor, 0);
	unload(&l);
	fx_free(s);
}

/* The readers of an input (nbg/memory.h): the operations whose range holds an
 * INPUT patch naming it; one layer and no conflict make the input clear, and
 * only COMMAND patches make conflicts the vendor names.  In the default file
 * operation 1 (NN, layer 0) reads input 0 through patch 2 (COMMAND),
 * operation 3 (NT, layer 2) holds patch 4 (OUTPUT 1, COMMAND). */
typedef struct reader_case {
	const char *what;
	void (*edit)(fx_spec *s);
	nbg_mem_share_verdict verdict;
	size_t reads;
	uint32_t low, high;
	size_t conflicts_total, other_conflicts;
} reader_case;

static void rd_two_layers(fx_spec *s)
{
	uint8_t *pa = fx_find(s, 10)->data;
	fx_put32(pa + 4 * 28 + 8, 1); /* patch 4: OUTPUT 1 -> INPUT 0 */
	fx_put32(pa + 4 * 28 + 12, 0);
}
static void rd_two_layers_no_pool(fx_spec *s)
{
	rd_two_layers(s);
	fx_remove(s, 37);
}
static void rd_state_only(fx_spec *s)
{
	fx_put32(fx_find(s, 10)->data + 2 * 28, 0); /* patch 2: COMMAND -> STATE */
}
static void rd_state_and_pool(fx_spec *s)
{
	rd_state_only(s);
	fx_put32(fx_find(s, 10)->data + 1 * 28 + 8, 3); /* patch 1: COMMAND -> MEMORY_POOL */
}
static void rd_overlap(fx_spec *s)
{
	uint8_t *op3 = fx_find(s, 4)->data + 3 * 32;
	fx_put32(op3 + 16, 2); /* operation 3 (layer 2): patches [2, 5), over patch 2 too */
	fx_put32(op3 + 20, 3);
}
static void rd_other_layer(fx_spec *s)
{
	fx_put32(fx_find(s, 4)->data + 1 * 32 + 8, 2); /* operation 1: layer 0 -> 2 */
}

static void test_synth_readers(void **state)
{
	static const reader_case cs[] = {
		{ "read by two layers", rd_two_layers, NBG_MEM_SHARE_NOT_SUPPORTED, 2, 0, 2, 0, 0 },
		{ "two layers, no pool", rd_two_layers_no_pool, NBG_MEM_SHARE_POOL_EMPTY, 2, 0, 2,
		  0, 0 },
		/* no reference file decides this one: nbgkit counts a STATE read as a read */
		{ "read through a STATE patch", rd_state_only, NBG_MEM_SHARE_POSSIBLE, 1, 0, 0, 0,
		  0 },
		/* the 0x1001E file of the corpus: not supported, no conflict named */
		{ "STATE read in an operation naming the pool", rd_state_and_pool,
		  NBG_MEM_SHARE_NOT_SUPPORTED, 1, 0, 0, 0, 1 },
		{ "overlapping ranges of two layers", rd_overlap, NBG_MEM_SHARE_NOT_SUPPORTED, 1, 0,
		  2, 0, 0 },
		{ "read by one layer, not the first", rd_other_layer, NBG_MEM_SHARE_POSSIBLE, 1, 2,
		  2, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		fx_spec *s = fx_default();
		loaded l;
		cs[i].edit(s);
		spec_figures(s, &l);
		const nbg_mem_sharing *sh = nbg_mem_sharing_of(l.r);
		const nbg_mem_share_buffer *in = nbg_mem_share_buffer_at(l.r, 0);
		int clear = cs[i].reads && cs[i].low == cs[i].high && !cs[i].other_conflicts;
		if (sh->verdict != cs[i].verdict || in->reads != cs[i].reads ||
		    (in->reads && (in->layer_low != cs[i].low ||
					     in->layer_high != cs[i].high)) ||
		    in->clear != clear || sh->inputs_clear != clear ||
		    sh->conflicts_total != cs[i].conflicts_total ||
		    sh->input_other_conflicts != cs[i].other_conflicts ||
		    in->can_share != (clear && sh->pool_bytes))
			fail_msg("%s: verdict %d, %zu reads, layers %u-%u, clear %d/%d, "
				 "conflicts %zu+%zu, can_share %d", cs[i].what, sh->verdict,
				 in->reads, in->layer_low, in->layer_high, in->clear,
				 sh->inputs_clear, sh->conflicts_total, sh->input_other_conflicts,
				 in->can_share);
		assert_int_equal(in->conflicts, cs[i].other_conflicts);
		assert_int_equal(sh->allocation, clear && sh->pool_bytes ? fx_pool : 0);
		if (cs[i].other_conflicts) { /* listed, not a vendor line */
			assert_int_equal(nbg_mem_conflict_count(l.r), 1);
			assert_int_equal(nbg_mem_conflict_at(l.r, 0)->command, 0);
		}
		unload(&l);
		fx_free(s);
	}
}

/* v1: the version plays no part.  A file built by fuzz/seeds.c (fuzz/seeds.h:
 * 1 input [3,32,32,1] UINT8 = 3072 bytes, 2 layers, 3 operations, 2 patches,
 * memory pool 4096) with its graph rewritten: INIT; operation 1 (NN, layer 0)
 * over patches [0, op1_count); operation 2 (TP, layer 1) over patch 1.
 * Patch 0 is a COMMAND patch naming input 0, patch 1 a COMMAND patch of
 * source src1 naming index idx1.  Versions from 0x10016 get their
 * nbg_crc_sum back (CRC-32 of the file with the word zero). */
static void v1_graph(uint32_t version, uint32_t op1_count, uint32_t src1, int32_t idx1,
		     loaded *l)
{
	seed_v1_strides st;
	uint32_t es = seed_v1_entries_offset(version);
	uint8_t *ops, *pa;
	static const uint32_t rec[3][6] = {
		{ 0xFFFF, 0, 0xFFFF, 0, 0, 0 }, /* type, index, layer, state, patch range */
		{ 2, 0, 0, 1, 0, 0 },
		{ 3, 0, 1, 2, 1, 1 },
	};

	memset(l, 0, sizeof(*l));
	l->buf = seed_v1_build(version, 0, &l->size);
	seed_v1_strides_of(version, &st);
	ops = l->buf + fx_get32(l->buf + es + 8 * 3);
	pa = l->buf + fx_get32(l->buf + es + 8 * 9);
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < 6; k++)
			fx_put32(ops + i * st.operation + 4 * k, rec[i][k]);
	fx_put32(ops + st.operation + 20, op1_count);
	fx_put32(pa + 8, 1); /* patch 0: source INPUT, index 0 */
	fx_put32(pa + 12, 0);
	fx_put32(pa + (st.patch ? st.patch : 40) + 8, src1);
	fx_put32(pa + (st.patch ? st.patch : 40) + 12, (uint32_t)idx1);
}

static void v1_load(uint32_t version, loaded *l)
{
	if (version >= 0x10016u) {
		fx_put32(l->buf + 108, 0);
		fx_put32(l->buf + 108, (uint32_t)crc32(0, l->buf, (uInt)l->size));
	}
	load_buf(l);
}

static void v1_sharing(uint32_t version, uint32_t op1_count, uint32_t src1, int32_t idx1,
		       loaded *l)
{
	v1_graph(version, op1_count, src1, idx1, l);
	v1_load(version, l);
}

static void test_synth_v1_versions(void **state)
{
	static const uint32_t versions[] = { 0x10003, 0x1000e, 0x10014, 0x1001e };

	(void)state;
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		loaded l;
		const nbg_mem_sharing *sh;

		v1_sharing(versions[i], 1, 3, -1, &l); /* patch 1: the pool, in layer 1 */
		sh = nbg_mem_sharing_of(l.r);
		assert_int_equal(sh->pool_bytes, 4096);
		assert_int_equal(nbg_mem_share_buffer_at(l.r, 0)->aligned_bytes, 3072);
		if (sh->verdict != NBG_MEM_SHARE_POSSIBLE || sh->allocation != 4096)
			fail_msg("v1 0x%05x: verdict %d allocation %llu, expected can share in "
				 "4096", versions[i], sh->verdict, (unsigned long long)sh->allocation);
		unload(&l);

		v1_sharing(versions[i], 1, 1, 0, &l); /* patch 1: input 0 again, in layer 1 */
		sh = nbg_mem_sharing_of(l.r);
		assert_int_equal(sh->verdict, NBG_MEM_SHARE_NOT_SUPPORTED);
		assert_int_equal(nbg_mem_share_buffer_at(l.r, 0)->layer_high, 1);
		unload(&l);

		v1_sharing(versions[i], 2, 3, -1, &l); /* operation 1 also names the pool */
		sh = nbg_mem_sharing_of(l.r);
		assert_int_equal(sh->verdict, NBG_MEM_SHARE_CONFLICT);
		assert_int_equal(sh->conflicts_total, 1);
		assert_int_equal(nbg_mem_conflict_at(l.r, 0)->layer_id, 0);
		unload(&l);
	}
}

/* Which dynamic patches count (the table of memory_rules.c), one patch at a
 * time.  LCD layout: the v1 file of v1_sharing (version 0x1000E, as the
 * corpus's gender network) given an LCD of 1024 bytes and an LCDT of five
 * entries, (0,40) (64,32) (128,64) (256,132) (448,500); operations 0-2 name
 * entries 0-2 as their load states (136 bytes, 192 rounded up to 64), no SH
 * operation.  Patch 1, in the TP operation's range, names entry 3 (132 bytes,
 * 192 rounded): as MISC_DYNA_GENERIC it is a coefficient, so the
 * coefficients are 1024 - 192 = 832; as MISC_DYNA_OUTPUT or MISC_DYNA_INPUT
 * it is a dynamic buffer of 192 and the coefficients 640, whether the patch
 * is COMMAND (as the gender network's NN output address) or STATE; the
 * operation memory stays the same. */
static void v1_dynamic(uint32_t type1, uint32_t src1, uint64_t *dyn_in, uint64_t *dyn_out,
		       uint64_t *coef, uint64_t *ops)
{
	static const uint32_t lcdt[5][2] = { { 0, 40 }, { 64, 32 }, { 128, 64 }, { 256, 132 },
					     { 448, 500 } };
	const uint32_t version = 0x1000e, es = seed_v1_entries_offset(version);
	seed_v1_strides st;
	loaded l;
	size_t at;

	v1_graph(version, 1, src1, 3, &l);
	seed_v1_strides_of(version, &st);
	fx_put32(l.buf + fx_get32(l.buf + es + 8 * 9) + (st.patch ? st.patch : 40), type1);
	at = l.size;
	l.size += 40 + 1024;
	assert_non_null(l.buf = realloc(l.buf, l.size));
	memset(l.buf + at, 0, 40 + 1024);
	for (int i = 0; i < 5; i++) {
		fx_put32(l.buf + at + 8 * i, lcdt[i][0]);
		fx_put32(l.buf + at + 8 * i + 4, lcdt[i][1]);
	}
	fx_put32(l.buf + es + 8 * 4, (uint32_t)at); /* entry 4: COEF_HEADER_TABLE (LCDT) */
	fx_put32(l.buf + es + 8 * 4 + 4, 40);
	fx_put32(l.buf + es + 8 * 5, (uint32_t)at + 40); /* entry 5: COEF_HEADER (LCD) */
	fx_put32(l.buf + es + 8 * 5 + 4, 1024);
	v1_load(version, &l);
	assert_int_equal(nbg_mem_layout_of(l.r), NBG_MEM_LAYOUT_LCD);
	*dyn_in = nbg_mem_value_of(l.r, NBG_MEM_DYNAMIC_INPUTS).vendor;
	*dyn_out = nbg_mem_value_of(l.r, NBG_MEM_DYNAMIC_OUTPUTS).vendor;
	*coef = nbg_mem_value_of(l.r, NBG_MEM_COEFFICIENTS).vendor;
	*ops = nbg_mem_value_of(l.r, NBG_MEM_OPERATIONS).vendor;
	unload(&l);
}

/* Sections layout: a sixth patch in the NT operation's range (its count
 * becomes 2) names DYNAIO_TABLE entry 1 (64, 128) as MISC_DYNA_INPUT. */
static void ed_sixth_dynamic(fx_spec *s, uint32_t type)
{
	fx_section *pa = fx_find(s, 10);
	fx_resize(pa, 6 * 28);
	memset(pa->data + 5 * 28, 0, 28);
	fx_put32(pa->data + 5 * 28, type);
	fx_put32(pa->data + 5 * 28 + 4, 24);
	fx_put32(pa->data + 5 * 28 + 8, 6);
	fx_put32(pa->data + 5 * 28 + 12, 1);
	fx_put32(fx_find(s, 4)->data + 96 + 20, 2);
}

static void test_synth_dynamic_patches(void **state)
{
	static const struct {
		const char *what;
		uint32_t type, src; /* patch 1: 0 STATE, 1 COMMAND; 5, 6, 7 */
		uint64_t in, out;   /* expected dynamic inputs and outputs */
	} cs[] = {
		{ "a coefficient (MISC_DYNA_GENERIC)", 1, 5, 0, 0 },
		{ "COMMAND MISC_DYNA_OUTPUT", 1, 7, 0, A64(132) },
		{ "COMMAND MISC_DYNA_INPUT", 1, 6, A64(132), 0 },
		{ "STATE MISC_DYNA_INPUT", 0, 6, A64(132), 0 },
		{ "STATE MISC_DYNA_OUTPUT", 0, 7, 0, A64(132) },
	};
	const uint64_t lcd = 1024, states = A64(40 + 32 + 64);
	uint64_t in, out, coef, ops, ops0 = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		v1_dynamic(cs[i].type, cs[i].src, &in, &out, &coef, &ops);
		if (in != cs[i].in || out != cs[i].out || coef != lcd - states - in - out)
			fail_msg("LCD layout, %s: dynamic %llu + %llu, coefficients %llu; expected "
				 "%llu + %llu, %llu", cs[i].what, (unsigned long long)in,
				 (unsigned long long)out, (unsigned long long)coef,
				 (unsigned long long)cs[i].in, (unsigned long long)cs[i].out,
				 (unsigned long long)(lcd - states - cs[i].in - cs[i].out));
		if (i == 0)
			ops0 = ops;
		assert_int_equal(ops, ops0); /* moved from coefficients to dynamic buffers */
	}

	/* Sections layout: a COMMAND patch's entry stays in the DYNAIO remainder
	 * (every figure as the default file's but the sixth patch record's 48
	 * header bytes); a STATE patch's is a dynamic input, as in
	 * test_synth_components. */
	for (uint32_t type = 0; type < 2; type++) {
		fx_spec *s = fx_default();
		figures want = fx_expected(), got;
		ed_sixth_dynamic(s, type);
		want.v[NBG_MEM_NBG_HEADER] = fx_head + 48;
		if (type == 0) {
			want.v[NBG_MEM_DYNAMIC_INPUTS] = 128;
			want.v[NBG_MEM_DYNAMIC_OUTPUTS] = A64(192) - 128;
		}
		derive(want.v);
		got = spec_figures(s, NULL);
		assert_figures(type ? "sections, COMMAND MISC_DYNA_INPUT" :
				      "sections, STATE MISC_DYNA_INPUT", &got, &want);
		fx_free(s);
	}
}

/* n operations over the same n patches, half INPUT, half MEMORY_POOL: n*n/2
 * conflicting pairs; the list stops at 1000, the total counts them all. */
static void test_conflicts_capped(void **state)
{
	const uint32_t n = 2000;
	fx_spec *s = fx_default();
	uint8_t *ops = calloc(n, 32), *pat = calloc(n, 28);
	loaded l;

	(void)state;
	for (uint32_t i = 0; i < n; i++) {
		fx_put32(ops + 32 * i, 2);          /* NN */
		fx_put32(ops + 32 * i + 16, 0);     /* patches 0 .. n-1 */
		fx_put32(ops + 32 * i + 20, n);
		fx_put32(pat + 28 * i, 1);
		fx_put32(pat + 28 * i + 8, i % 2 ? 3 : 1);
	}
	fx_set(s, 4, ops, (size_t)n * 32, 0, 32);
	fx_set(s, 10, pat, (size_t)n * 28, 0, 28);
	free(ops);
	free(pat);
	spec_figures(s, &l);
	const nbg_mem_sharing *sh = nbg_mem_sharing_of(l.r);
	assert_int_equal(sh->verdict, NBG_MEM_SHARE_CONFLICT);
	assert_int_equal(sh->conflicts_total, (size_t)n * (n / 2));
	assert_int_equal(nbg_mem_conflict_count(l.r), 1000);
	assert_int_equal(nbg_mem_share_buffer_at(l.r, 0)->conflicts, n / 2);
	/* n patches: header counts every record */
	assert_int_equal(nbg_mem_value_of(l.r, NBG_MEM_NBG_HEADER).vendor,
			 3 * 76 + n * 36 + n * 48 + 3 * 112 + 8 + 72);
	unload(&l);
	fx_free(s);
}

/* v1: the feature-word bits, changed one at a time in a copy of a real file. */
static void test_v1_feature_bits(void **state)
{
	loaded l = { 0 };
	uint32_t w;
	uint64_t tp_before = 0;
	size_t tps = 0;

	(void)state;
	l.buf = fx_read_file(NBG_CORPUS_DIR "/v1/1000f_ee_lenet_model.nb", &l.size);
	if (!l.buf)
		fail_msg("v1/1000f_ee_lenet_model.nb is missing: the corpus is incomplete");
	load_buf(&l);
	w = fx_get32(l.buf + 92);
	assert_int_equal(nbg_model_v1(l.m)->tp_command_bytes, ((w >> 5) & 3) ? 192 : 128);
	assert_int_equal(nbg_model_v1(l.m)->change_ppu_param, (w >> 4) & 1);
	for (size_t i = 0; i < nbg_mem_operation_count(l.r); i++)
		if (nbg_mem_operation_at(l.r, i)->type == NBG_GRAPH_OP_TP) {
			tp_before += nbg_mem_operation_at(l.r, i)->instruction_bytes;
			tps++;
		}
	assert_true(tps > 0);
	uint8_t *copy = l.buf;
	size_t size = l.size;
	l.buf = NULL;
	unload(&l);

	fx_put32(copy + 92, (w & ~0x70u) | 0x30u); /* change_ppu 1, TP code 1 */
	l.buf = copy;
	l.size = size;
	load_buf(&l);
	assert_int_equal(nbg_model_v1(l.m)->change_ppu_param, 1);
	assert_int_equal(nbg_model_v1(l.m)->tp_command_size_code, 1);
	assert_int_equal(nbg_model_v1(l.m)->tp_command_bytes, 192);
	uint64_t tp_after = 0;
	for (size_t i = 0; i < nbg_mem_operation_count(l.r); i++)
		if (nbg_mem_operation_at(l.r, i)->type == NBG_GRAPH_OP_TP)
			tp_after += nbg_mem_operation_at(l.r, i)->instruction_bytes;
	assert_int_equal(tp_after, 192 * tps);
	assert_true(tp_before == 128 * tps);
	unload(&l);
}

/* ------------------------------------------------------ doc/memory.md */

/* The cells of a table row "| a | b | c |" into cells[]; returns the count. */
static size_t row_cells(const char *line, char cells[][1024], size_t cap)
{
	size_t n = 0;
	const char *p = strchr(line, '|');

	while (p && n < cap) {
		const char *q = strstr(p + 1, " |");
		size_t len;
		if (!q)
			break;
		p++;
		while (*p == ' ')
			p++;
		len = (size_t)(q - p);
		if (len >= 1024)
			len = 1023;
		memcpy(cells[n], p, len);
		cells[n++][len] = '\0';
		p = q + 1;
	}
	return n;
}

/* The row of doc/memory.md whose first cell is `key` in backquotes. */
static size_t doc_row(const char *doc, const char *key, char cells[][1024], size_t cap)
{
	char want[128];
	const char *p;

	snprintf(want, sizeof(want), "\n| `%s` |", key);
	p = strstr(doc, want);
	if (!p)
		return 0;
	char line[4096];
	trimmed_line(p + 1, line, sizeof(line));
	return row_cells(line, cells, cap);
}

static void test_doc_rules(void **state)
{
	char *doc = slurp(NBG_SOURCE_DIR "/doc/memory.md");
	char cells[6][1024], v[32];

	(void)state;
	assert_non_null(doc);
	for (int i = 0; i < NBG_MEM__COUNT; i++) {
		const nbg_mem_rule *u = nbg_mem_rule_of((nbg_mem_figure)i);
		if (doc_row(doc, u->key, cells, 6) != 4)
			fail_msg("doc/memory.md has no 4-cell row for figure `%s`", u->key);
		if (strcmp(cells[1], u->vendor_line ? u->vendor_line : "(none)") ||
		    strcmp(cells[2], u->rule) || strcmp(cells[3], u->evidence))
			fail_msg("doc/memory.md, figure `%s`: the row says\n  %s | %s | %s\nthe "
				 "library says\n  %s | %s | %s", u->key, cells[1], cells[2],
				 cells[3], u->vendor_line ? u->vendor_line : "(none)", u->rule,
				 u->evidence);
	}
	for (size_t i = 0; i < nbg_mem_constant_count(); i++) {
		const nbg_mem_constant *c = nbg_mem_constant_at(i);
		snprintf(v, sizeof(v), "%llu", (unsigned long long)c->value);
		if (doc_row(doc, c->name, cells, 6) != 4 || strcmp(cells[1], v) ||
		    strcmp(cells[2], c->meaning) || strcmp(cells[3], c->source))
			fail_msg("doc/memory.md, constant `%s`: expected | %s | %s | %s |", c->name,
				 v, c->meaning, c->source);
	}
	assert_null(nbg_mem_rule_of(NBG_MEM__COUNT));
	assert_null(nbg_mem_constant_at(nbg_mem_constant_count()));
	free(doc);
}

/* The example of doc/memory.md is the command's real output
 * (scripts/gen-docs.sh writes it). */
static void test_doc_example(void **state)
{
	static const char begin[] = "<!-- BEGIN nbg inspect --memory face_detector_nbg_int16 -->\n"
				    "```\n$ nbg inspect --memory "
				    "../shared/corpus/v2/face_detector_nbg_int16.nb\n...\n";
	static const char end[] = "```\n<!-- END nbg inspect --memory face_detector_nbg_int16 -->";
	char *doc = slurp(NBG_SOURCE_DIR "/doc/memory.md"), *b, *e, *mem;
	fx_run_result r;

	(void)state;
	assert_non_null(doc);
	b = strstr(doc, begin);
	assert_non_null(b);
	b += strlen(begin);
	e = strstr(b, end);
	assert_non_null(e);
	r = fx_run_nbg(NULL, "inspect --memory '%s'",
		       NBG_CORPUS_DIR "/v2/face_detector_nbg_int16.nb");
	assert_int_equal(r.status, 0);
	mem = strstr(r.out, "\nMemory:\n");
	assert_non_null(mem);
	mem++;
	if (strlen(mem) != (size_t)(e - b) || strncmp(mem, b, (size_t)(e - b)))
		fail_msg("doc/memory.md's example is stale: run scripts/gen-docs.sh");
	fx_run_free(&r);
	free(doc);
}

/* ------------------------------------------------------------------ CLI */

#define FDET "/v2/face_detector_nbg_int16"

static void test_cli_memory(void **state)
{
	char *md;
	char lines[64][160], want[200];
	fx_run_result r;

	(void)state;
	need_reference();
	md = slurp(NBG_REFERENCE_DIR FDET ".md.txt");
	if (!md)
		fail_msg("%s is missing: the reference output is incomplete",
			 NBG_REFERENCE_DIR FDET ".md.txt");
	r = fx_run_nbg(NULL, "inspect --memory '%s'", NBG_CORPUS_DIR FDET ".nb");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_non_null(strstr(r.out, "NBG file: ")); /* the default report stays */
	assert_non_null(strstr(r.out, "\nMemory:\n"));
	/* every vendor figure, with its value from the reference, on its line */
	size_t n = section_lines(md, "Memory Info", lines, 64);
	assert_int_equal(n, N_VENDOR_LABELS);
	for (size_t i = 0; i < N_VENDOR_LABELS; i++) {
		const nbg_mem_rule *u = nbg_mem_rule_of(vendor_labels[i].f);
		const char *v = NULL;
		for (size_t k = 0; k < n && !v; k++)
			v = value_of(lines[k], vendor_labels[i].label);
		assert_non_null(v);
		snprintf(want, sizeof(want), " %s  ", u->label);
		const char *line = strstr(strstr(r.out, "\nMemory:\n"), want);
		if (!line)
			fail_msg("no line for %s", u->label);
		char got[256];
		trimmed_line(line, got, sizeof(got));
		if (!strstr(got, v) || !strstr(got, u->key))
			fail_msg("line \"%s\" lacks the reference value %s or the rule key %s", got, v,
				 u->key);
	}
	assert_non_null(strstr(r.out, "Vendor summary:            input[0] can share with memory "
				      "pool, should allocate 648448bytes memory for share "
				      "buffer.\n"));
	fx_run_free(&r);

	r = fx_run_nbg(NULL, "inspect --json --memory '%s'", NBG_CORPUS_DIR FDET ".nb");
	assert_int_equal(r.status, 0);
	json_t *j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	json_t *vt = json_object_get(json_object_get(json_object_get(j, "memory"), "figures"),
				     "video_total");
	assert_int_equal(json_integer_value(json_object_get(vt, "vendor_bytes")), 1018368);
	assert_string_equal(json_string_value(json_object_get(vt, "rule")),
			    nbg_mem_rule_of(NBG_MEM_VIDEO_TOTAL)->rule);
	json_decref(j);
	fx_run_free(&r);
	free(md);
}

static void test_cli_operations(void **state)
{
	fx_run_result r;

	(void)state;
	/* nbinfo -a, operation 1: Command Size 24, Instr Size 192, Coeff data 0xe80 */
	r = fx_run_nbg(NULL, "inspect --operations '%s'", NBG_CORPUS_DIR FDET ".nb");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\nOperation sizes (57;"));
	assert_non_null(strstr(r.out, "\n  [   1] NN              24          192"
				      "                 3712        1\n"));
	fx_run_free(&r);
	r = fx_run_nbg(NULL, "inspect --json --operations '%s'", NBG_CORPUS_DIR FDET ".nb");
	assert_int_equal(r.status, 0);
	json_t *j = json_loads(r.out, 0, NULL), *op;
	assert_non_null(j);
	op = json_object_get(json_array_get(json_object_get(j, "operations"), 1), "sizes");
	assert_int_equal(json_integer_value(json_object_get(op, "command_bytes")), 24);
	assert_int_equal(json_integer_value(json_object_get(op, "instruction_bytes")), 192);
	assert_int_equal(json_integer_value(json_object_get(op, "coefficient_bytes_vendor")),
			 0xe80);
	json_decref(j);
	fx_run_free(&r);
}

static void test_cli_failures(void **state)
{
	fx_run_result r;
	char path[] = "/tmp/nbgmem-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "VPMN\x00\x00\x02\x00", 8), 8);
	close(fd);
	r = fx_run_nbg(NULL, "inspect --memory /nonexistent/x.nb");
	assert_int_equal(r.status, 3);
	assert_string_equal(r.out, "");
	fx_run_free(&r);
	r = fx_run_nbg(NULL, "inspect --memory '%s'", path);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "truncated"));
	assert_null(strstr(r.out, "Memory:"));
	fx_run_free(&r);
	r = fx_run_nbg(NULL, "inspect --memry '%s'", path);
	assert_int_equal(r.status, 2);
	fx_run_free(&r);
	unlink(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synth_default),
		cmocka_unit_test(test_synth_components),
		cmocka_unit_test(test_synth_conflict),
		cmocka_unit_test(test_synth_readers),
		cmocka_unit_test(test_synth_v1_versions),
		cmocka_unit_test(test_synth_dynamic_patches),
		cmocka_unit_test(test_conflicts_capped),
		cmocka_unit_test(test_doc_rules),
		cmocka_unit_test(test_cli_failures),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_v1_feature_bits),
		cmocka_unit_test(test_doc_example),
		cmocka_unit_test(test_cli_operations),
	};
	/* Real files against the vendor inspector's output (NBG_REFERENCE_DIR). */
	const struct CMUnitTest reference[] = {
		cmocka_unit_test(test_reference_memory),
		cmocka_unit_test(test_reference_operations),
		cmocka_unit_test(test_reference_cli),
		cmocka_unit_test(test_cli_memory),
	};
	return tc_run(argc, argv, "test_memory", TC_GROUP(tests), TC_GROUP(corpus),
		      TC_GROUP(reference), NULL, NULL);
}
