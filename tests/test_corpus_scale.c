/*
 * test_corpus_scale.c - `nbg corpus` at scale: per-file records, --jobs,
 * mergeable parts, manifests, the hostile-environment rules of the walk, and
 * a synthesized tree of 20,000 files.
 *
 * Expected values come from outside the program: the real corpus' raw
 * header, directory and record words decoded here, SHA-256 from OpenSSL,
 * manifests written and checked by coreutils' sha256sum, file sets built
 * here with the fixture builder; a run that changes a file while it is read
 * uses tests/corpus_shim.c (LD_PRELOAD) to change it at a known moment.
 * Outputs are compared across --jobs and across merges byte for byte.
 */
#define NBG_STATIC_LINKING_ONLY /* nbg_hex32 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <openssl/sha.h>

#include "corpus.h"
#include "exe_wrapper.h"
#include "fixture.h"
#include "corpus/corpus.h"

/* ------------------------------------------------------------ helpers */

static int have_corpus(void)
{
	DIR *d = opendir(NBG_CORPUS_DIR "/v2");
	if (d)
		closedir(d);
	return d != NULL;
}

/* The cases that use this run only when the corpus directory exists
 * (tests/corpus.h): without v2/ in it the corpus is incomplete. */
#define NEED_CORPUS()                                                                   \
	do {                                                                            \
		if (!have_corpus())                                                     \
			fail_msg(NBG_CORPUS_DIR " lacks v2/: the corpus is incomplete"); \
	} while (0)

static char *tmpdir(void)
{
	return fx_tmpdir("nbgscale");
}

static void rmtree(const char *dir)
{
	assert_int_equal(fx_rmtree(dir), 0);
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static char *slurp(const char *path, size_t *n)
{
	size_t len;
	char *s = (char *)fx_read_file(path, &len);
	if (s)
		s[len] = '\0';
	if (n)
		*n = len;
	return s;
}

static fx_run_result run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static fx_run_result run(const char *fmt, ...)
{
	char args[4000];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	return fx_run_nbg(NULL, "%s", args);
}

static void sha_hex(const void *p, size_t n, char hex[65])
{
	uint8_t d[32];
	SHA256(p, n, d);
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", d[i]);
}

static json_int_t geti(json_t *o, const char *dotted)
{
	char key[128];
	snprintf(key, sizeof(key), "%s", dotted);
	for (char *k = key, *dot; k; k = dot) {
		dot = strchr(k, '.');
		if (dot)
			*dot++ = '\0';
		o = json_object_get(o, k);
	}
	assert_true(json_is_integer(o));
	return json_integer_value(o);
}

/* The count of value `raw` in a value list of the document ("raw" when the
 * value is a name, else "value"); 0 when absent. */
static json_int_t count_of(json_t *list, uint64_t raw)
{
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e) {
		json_t *r = json_object_get(e, "raw");
		if (!r)
			r = json_object_get(e, "value");
		if ((uint64_t)json_integer_value(r) == raw)
			return json_integer_value(json_object_get(e, "files_or_records"));
	}
	return 0;
}

static json_t *at(json_t *o, const char *dotted)
{
	char key[128];
	snprintf(key, sizeof(key), "%s", dotted);
	for (char *k = key, *dot; k && o; k = dot) {
		dot = strchr(k, '.');
		if (dot)
			*dot++ = '\0';
		o = json_object_get(o, k);
	}
	return o;
}

/* A multiset of u64 built here, compared with a value list. */
typedef struct hist {
	uint64_t v[64], n[64];
	int count;
} hist;

static void hist_add(hist *h, uint64_t v)
{
	for (int i = 0; i < h->count; i++)
		if (h->v[i] == v) {
			h->n[i]++;
			return;
		}
	assert_true(h->count < 64);
	h->v[h->count] = v;
	h->n[h->count++] = 1;
}

static void hist_check(const hist *h, json_t *list, const char *what)
{
	assert_true(json_is_array(list));
	if ((int)json_array_size(list) != h->count)
		fail_msg("%s: %zu distinct values, expected %d", what, json_array_size(list), h->count);
	for (int i = 0; i < h->count; i++)
		if ((uint64_t)count_of(list, h->v[i]) != h->n[i])
			fail_msg("%s: value %llu seen %lld times, expected %llu", what,
				 (unsigned long long)h->v[i], (long long)count_of(list, h->v[i]),
				 (unsigned long long)h->n[i]);
	/* ascending, the documented order */
	for (size_t i = 1; i < json_array_size(list); i++) {
		json_t *a = json_array_get(list, i - 1), *b = json_array_get(list, i);
		json_t *ra = json_object_get(a, "raw") ? json_object_get(a, "raw") : json_object_get(a, "value");
		json_t *rb = json_object_get(b, "raw") ? json_object_get(b, "raw") : json_object_get(b, "value");
		assert_true(json_integer_value(ra) < json_integer_value(rb));
	}
}

/* ------------------------------------------------ the independent scan */

typedef struct scan_file {
	char path[1024];
	size_t size;
	char sha[65];
	uint32_t family, version, target, sections, inputs, outputs;
} scan_file;

typedef struct scan {
	scan_file f[128];
	int files;
	uint64_t bytes;
	hist family, version, target, section_count, formats, quant, dims;
	uint64_t type_files[41];
	hist entsize[41], align[41];
	uint64_t checksum_records, dyn_files, dyn_entries, dyn_region, io_records;
	uint64_t layers_lo, layers_hi;
	char tails[128][65];
	int ntails;
} scan;

static void scan_v2(scan *e, scan_file *sf, const uint8_t *b, int v2_io)
{
	uint32_t dir = fx_get32(b + 48), cnt = fx_get32(b + 56);
	sf->sections = cnt;
	hist_add(&e->section_count, cnt);
	for (uint32_t i = 0; i < cnt; i++) {
		const uint8_t *r = b + dir + 44 * i;
		uint32_t type = fx_get32(r), off = fx_get32(r + 4), size = fx_get32(r + 12);
		e->type_files[type]++;
		hist_add(&e->entsize[type], fx_get32(r + 0x20));
		hist_add(&e->align[type], fx_get32(r + 0x1c));
		if (type == 35) {
			sf->inputs = fx_get32(b + off + 0x40);
			sf->outputs = fx_get32(b + off + 0x44);
			uint32_t layers = fx_get32(b + off + 0x48);
			if (!e->layers_hi || layers < e->layers_lo)
				e->layers_lo = layers;
			if (layers > e->layers_hi)
				e->layers_hi = layers;
		}
		if (type == 40)
			e->checksum_records += size / 8;
		if (type == 26) {
			e->dyn_files++;
			e->dyn_entries += size / 8;
		}
		if (type == 20)
			e->dyn_region += size;
		if ((type == 1 || type == 2) && v2_io)
			for (uint32_t k = 0; k < size / 112; k++) {
				const uint8_t *io = b + off + 112 * k;
				hist_add(&e->dims, fx_get32(io));
				hist_add(&e->formats, fx_get32(io + 0x1c));
				hist_add(&e->quant, fx_get32(io + 0x24));
			}
	}
}

static void scan_one(scan *e, const char *path, int v2_io)
{
	size_t n;
	uint8_t *b = fx_read_file(path, &n);
	scan_file *sf = &e->f[e->files++];
	char tail[65];

	assert_non_null(b);
	snprintf(sf->path, sizeof(sf->path), "%s", path);
	sf->size = n;
	e->bytes += n;
	sha_hex(b, n, sf->sha);
	sf->version = fx_get32(b + 4);
	sf->target = fx_get32(b + 8);
	sf->family = sf->version == 0x00020000 ? 2 : 1;
	hist_add(&e->family, sf->family);
	hist_add(&e->version, sf->version);
	hist_add(&e->target, sf->target);
	sha_hex(b + n - 512, 512, tail);
	int seen = 0;
	for (int i = 0; i < e->ntails; i++)
		seen |= !strcmp(e->tails[i], tail);
	if (!seen)
		strcpy(e->tails[e->ntails++], tail);
	if (sf->family == 2) {
		scan_v2(e, sf, b, v2_io);
	} else {
		sf->inputs = fx_get32(b + 84); /* v1 prefix: input and output counts */
		sf->outputs = fx_get32(b + 88);
	}
	e->io_records += sf->inputs + sf->outputs;
	free(b);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.nb files of dir in name order (the documented walk order). */
static void scan_dir(scan *e, const char *dir, int v2_io)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *names[128];
	int n = 0;
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		if (l > 3 && !strcmp(de->d_name + l - 3, ".nb") && de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(*names), cmp_str);
	for (int i = 0; i < n; i++) {
		char p[1024];
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		scan_one(e, p, v2_io);
		free(names[i]);
	}
}

static int cmp_hex(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* ------------------------------------------- the aggregate, field by field */

static void check_types(const scan *e, json_t *types)
{
	size_t i;
	json_t *t;
	int listed = 0;
	json_array_foreach(types, i, t) {
		json_int_t type = json_integer_value(json_object_get(t, "type"));
		assert_true(type >= 0 && type < 41);
		assert_int_equal(json_integer_value(json_object_get(t, "files")), e->type_files[type]);
		hist_check(&e->entsize[type], json_object_get(t, "entry_sizes"), "entry sizes");
		hist_check(&e->align[type], json_object_get(t, "alignments"), "alignments");
		listed++;
	}
	int present = 0;
	for (int k = 0; k < 41; k++)
		present += e->type_files[k] > 0;
	assert_int_equal(listed, present);
}

static void check_aggregate(const scan *e, json_t *j)
{
	assert_int_equal(geti(j, "files"), e->files);
	assert_int_equal(geti(j, "valid"), e->files);
	assert_int_equal(geti(j, "bytes"), e->bytes);
	hist_check(&e->family, at(j, "families"), "families");
	hist_check(&e->version, at(j, "versions"), "versions");
	hist_check(&e->target, at(j, "targets"), "targets");
	hist_check(&e->section_count, at(j, "v2.section_counts"), "section counts");
	check_types(e, at(j, "v2.section_types"));
	assert_int_equal(geti(j, "v2.section_checksums.records"), e->checksum_records);
	assert_int_equal(geti(j, "v2.section_checksums.match"), e->checksum_records);
	assert_int_equal(geti(j, "v2.dynamic_io.paired_files"), e->dyn_files);
	assert_int_equal(geti(j, "v2.dynamic_io.entries"), e->dyn_entries);
	assert_int_equal(geti(j, "v2.dynamic_io.region_bytes"), e->dyn_region);
	assert_int_equal(json_integer_value(json_array_get(at(j, "v2.layer_count"), 0)), e->layers_lo);
	assert_int_equal(json_integer_value(json_array_get(at(j, "v2.layer_count"), 1)), e->layers_hi);
	assert_int_equal(geti(j, "io_records.count"), e->io_records);

	/* the distinct connection tails: the same set, sorted */
	char sorted[128][65];
	memcpy(sorted, e->tails, sizeof(sorted));
	qsort(sorted, (size_t)e->ntails, 65, cmp_hex);
	json_t *list = at(j, "connection_tails.sha256");
	assert_int_equal(geti(j, "connection_tails.distinct_sha256"), e->ntails);
	assert_int_equal(json_array_size(list), e->ntails);
	for (int i = 0; i < e->ntails; i++)
		assert_string_equal(json_string_value(json_array_get(list, (size_t)i)), sorted[i]);
}

static const char *const record_keys[] = {
	"path", "size", "sha256", "status", "valid", "family", "version", "target",
	"failure_code", "failure_offset", "failure_message", "section_count", "input_count",
	"output_count", "notes", NULL,
};

/* Parses JSON Lines: one object per line, keys in the documented order. */
static json_t *parse_records(const char *text, size_t *lines)
{
	json_t *all = json_array();
	const char *p = text;
	*lines = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		assert_non_null(nl); /* every record ends with a newline */
		json_error_t jerr;
		json_t *o = json_loadb(p, (size_t)(nl - p), 0, &jerr);
		if (!o)
			fail_msg("record line %zu is not JSON: %s", *lines + 1, jerr.text);
		assert_true(json_is_object(o));
		const char *k;
		json_t *v;
		int i = 0;
		json_object_foreach(o, k, v) {
			assert_non_null(record_keys[i]);
			assert_string_equal(k, record_keys[i]);
			i++;
		}
		assert_null(record_keys[i]);
		json_array_append_new(all, o);
		(*lines)++;
		p = nl + 1;
	}
	return all;
}

static void check_records(const scan *e, const char *text)
{
	size_t lines;
	json_t *all = parse_records(text, &lines);
	char hex[16];
	assert_int_equal(lines, e->files);
	for (int i = 0; i < e->files; i++) {
		const scan_file *f = &e->f[i];
		json_t *r = json_array_get(all, (size_t)i);
		assert_string_equal(json_string_value(json_object_get(r, "path")), f->path);
		assert_int_equal(json_integer_value(json_object_get(r, "size")), f->size);
		assert_string_equal(json_string_value(json_object_get(r, "sha256")), f->sha);
		assert_string_equal(json_string_value(json_object_get(r, "status")), "valid");
		assert_true(json_is_true(json_object_get(r, "valid")));
		assert_int_equal(json_integer_value(json_object_get(r, "family")), f->family);
		snprintf(hex, sizeof(hex), "0x%08x", f->version);
		assert_string_equal(json_string_value(json_object_get(r, "version")), hex);
		snprintf(hex, sizeof(hex), "0x%08x", f->target);
		assert_string_equal(json_string_value(json_object_get(r, "target")), hex);
		assert_true(json_is_null(json_object_get(r, "failure_code")));
		assert_int_equal(json_integer_value(json_object_get(r, "input_count")), f->inputs);
		assert_int_equal(json_integer_value(json_object_get(r, "output_count")), f->outputs);
		if (f->family == 2)
			assert_int_equal(json_integer_value(json_object_get(r, "section_count")),
					 f->sections);
		assert_true(json_is_array(json_object_get(r, "notes")));
	}
	json_decref(all);
}

static void test_aggregate_and_records(void **state)
{
	static scan e, e2;
	char *dir = tmpdir(), rec[600];
	(void)state;
	NEED_CORPUS();
	memset(&e, 0, sizeof(e));
	scan_dir(&e, NBG_CORPUS_DIR "/v1", 0);
	scan_dir(&e, NBG_CORPUS_DIR "/v2", 0);

	snprintf(rec, sizeof(rec), "%s/records.jsonl", dir);
	fx_run_result r = run("corpus --json --records '%s' " NBG_CORPUS_DIR, rec);
	assert_int_equal(r.status, 0);
	json_t *j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	check_aggregate(&e, j);
	json_decref(j);
	fx_run_free(&r);
	char *text = slurp(rec, NULL);
	assert_non_null(text);
	check_records(&e, text);
	free(text);

	/* the v2 files alone: I/O formats, quantization and dimension counts
	 * from the 112-byte INPUT and OUTPUT records */
	memset(&e2, 0, sizeof(e2));
	scan_dir(&e2, NBG_CORPUS_DIR "/v2", 1);
	r = run("corpus --json " NBG_CORPUS_DIR "/v2");
	assert_int_equal(r.status, 0);
	j = json_loads(r.out, 0, NULL);
	check_aggregate(&e2, j);
	hist_check(&e2.formats, at(j, "io_records.data_formats"), "data formats");
	hist_check(&e2.quant, at(j, "io_records.quantization"), "quantization");
	hist_check(&e2.dims, at(j, "io_records.dimension_counts"), "dimension counts");
	json_decref(j);
	fx_run_free(&r);
	rmtree(dir);
	free(dir);
}

/* ------------------------------------------------- synthesized file sets */

/* A valid model whose size and connection tail differ with k. */
static uint8_t *variant(int k, size_t *n)
{
	fx_spec *s = fx_default();
	s->trailing = (size_t)(7 * k);
	s->trailing_byte = (uint8_t)(k + 1);
	uint8_t *b = fx_build(s, n);
	fx_free(s);
	return b;
}

/* dir/a/ and dir/b/ with 12 valid variants and three invalid files. */
static void make_set(const char *dir)
{
	char p[1024];
	size_t n;
	snprintf(p, sizeof(p), "%s/a", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/b", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	for (int k = 0; k < 12; k++) {
		uint8_t *b = variant(k, &n);
		snprintf(p, sizeof(p), "%s/%s/v%02d.nb", dir, k % 2 ? "a" : "b", k);
		write_file(p, b, n);
		if (k == 0) {
			b[0] = 'X';
			snprintf(p, sizeof(p), "%s/a/bad-magic.nb", dir);
			write_file(p, b, n);
			b[0] = 'V';
			snprintf(p, sizeof(p), "%s/b/truncated.nb", dir);
			write_file(p, b, 100);
			size_t coef = fx_dir_entry(b, n, 24);
			assert_true(coef > 0);
			b[fx_get32(b + coef + 4)] ^= 0x55; /* a byte of COEF_DATA: its CRC breaks */
			snprintf(p, sizeof(p), "%s/b/crc.nb", dir);
			write_file(p, b, n);
		}
		free(b);
	}
}

/* The synthesized set alone, or (corpus part) the real corpus beside it. */
static void jobs_identical(const char *corpus)
{
	char *dir = tmpdir(), *first[3] = { NULL }, *recs[3] = { NULL };
	char rec[600];
	int status = -1;
	make_set(dir);
	for (int mode = 0; mode < 2; mode++) {
		const int jobs[] = { 1, 2, 4 };
		for (int i = 0; i < 3; i++) {
			snprintf(rec, sizeof(rec), "%s/r%d.jsonl", dir, jobs[i]);
			fx_run_result r = run("corpus %s --jobs %d --records '%s' '%s' %s",
					      mode ? "--json" : "", jobs[i], rec, dir, corpus);
			if (i == 0) {
				status = r.status;
				first[0] = r.out;
				first[1] = r.err;
				recs[0] = slurp(rec, NULL);
			} else {
				assert_int_equal(r.status, status);
				assert_string_equal(r.out, first[0]);
				assert_string_equal(r.err, first[1]);
				char *t = slurp(rec, NULL);
				assert_string_equal(t, recs[0]);
				free(t);
				fx_run_free(&r);
			}
		}
		assert_int_equal(status, 1); /* three invalid files */
		print_message("%s report identical for --jobs 1, 2, 4 (%zu bytes, %zu record bytes)\n",
			      mode ? "JSON" : "text", strlen(first[0]), strlen(recs[0]));
		free(first[0]);
		free(first[1]);
		free(recs[0]);
	}
	rmtree(dir);
	free(dir);
}

static void test_jobs_identical(void **state)
{
	(void)state;
	jobs_identical("");
}

static void test_jobs_identical_corpus(void **state)
{
	(void)state;
	NEED_CORPUS();
	jobs_identical(NBG_CORPUS_DIR);
}

/* ------------------------------------------------------------ merging */

/* Writes lines [from, to) of text to path. */
static void write_lines(const char *path, const char *text, int from, int to)
{
	FILE *f = fopen(path, "w");
	int line = 0;
	assert_non_null(f);
	for (const char *p = text; *p; line++) {
		const char *nl = strchr(p, '\n');
		if (line >= from && line < to)
			fwrite(p, 1, (size_t)(nl - p + 1), f);
		p = nl + 1;
	}
	assert_int_equal(fclose(f), 0);
}

static char *part_of(const char *dir, const char *name, const char *manifest)
{
	char p[700];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fx_run_result r = run("corpus --json --quiet '%s'", manifest);
	assert_true(r.status == 0 || r.status == 1);
	write_file(p, r.out, strlen(r.out));
	fx_run_free(&r);
	return strdup(p);
}

/* The synthesized set alone, or (corpus part) the real corpus beside it. */
static void merge(const char *corpus)
{
	char *dir = tmpdir(), man[600], chunk[600];
	make_set(dir);

	/* the whole run, which also writes the manifest of its files */
	snprintf(man, sizeof(man), "%s/all.sha256", dir);
	fx_run_result whole = run("corpus --json --quiet --write-manifest '%s' '%s' %s", man, dir,
				  corpus);
	fx_run_result whole_text = run("corpus --quiet '%s' %s", dir, corpus);
	assert_int_equal(whole.status, 1);
	char *m = slurp(man, NULL);
	int lines = 0;
	for (const char *p = m; *p; p++)
		lines += *p == '\n';
	assert_true(lines >= 15);
	/* the whole run over the manifest gives the same document */
	fx_run_result viaman = run("corpus --json --quiet '%s'", man);
	assert_string_equal(viaman.out, whole.out);
	fx_run_free(&viaman);

	/* halves and thirds of the manifest, measured apart */
	char *part[5];
	const int cut[][2] = { { 0, lines / 2 }, { lines / 2, lines }, { 0, lines / 3 },
			       { lines / 3, 2 * lines / 3 }, { 2 * lines / 3, lines } };
	for (int i = 0; i < 5; i++) {
		char name[16];
		snprintf(chunk, sizeof(chunk), "%s/chunk%d.sha256", dir, i);
		write_lines(chunk, m, cut[i][0], cut[i][1]);
		snprintf(name, sizeof(name), "part%d.json", i);
		part[i] = part_of(dir, name, chunk);
	}
	const int orders[][3] = { { 0, 1, -1 }, { 1, 0, -1 }, { 2, 3, 4 }, { 2, 4, 3 },
				  { 3, 2, 4 }, { 3, 4, 2 }, { 4, 2, 3 }, { 4, 3, 2 } };
	for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
		const int *x = orders[o];
		fx_run_result r = run("corpus --merge --json '%s' '%s' %s%s%s", part[x[0]],
				      part[x[1]], x[2] >= 0 ? "'" : "", x[2] >= 0 ? part[x[2]] : "",
				      x[2] >= 0 ? "'" : "");
		if (r.status != whole.status)
			print_message("%s", r.err);
		assert_int_equal(r.status, whole.status);
		assert_string_equal(r.out, whole.out);
		fx_run_free(&r);
		r = run("corpus --merge '%s' '%s' %s%s%s", part[x[0]], part[x[1]],
			x[2] >= 0 ? "'" : "", x[2] >= 0 ? part[x[2]] : "", x[2] >= 0 ? "'" : "");
		assert_string_equal(r.out, whole_text.out);
		fx_run_free(&r);
	}
	print_message("halves (2 orders) and thirds (6 orders) merge into the whole run's %zu-byte "
		      "document\n", strlen(whole.out));

	/* parts of another version, edited parts and non-parts are refused */
	char *doc = slurp(part[0], NULL), *v = strstr(doc, "\"nbgkit_version\": \"");
	assert_non_null(v);
	v += strlen("\"nbgkit_version\": \"");
	memcpy(v, "9.9.9", 5);
	snprintf(chunk, sizeof(chunk), "%s/other.json", dir);
	write_file(chunk, doc, strlen(doc));
	fx_run_result r = run("corpus --merge '%s' '%s'", part[1], chunk);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	assert_non_null(strstr(r.err, "9.9.9"));
	assert_non_null(strstr(r.err, "parts merge only within one version"));
	fx_run_free(&r);
	free(doc);
	doc = slurp(part[0], NULL);
	v = strstr(doc, "\"valid\": ");
	v[strlen("\"valid\": ")] = v[strlen("\"valid\": ")] == '9' ? '8' : '9';
	write_file(chunk, doc, strlen(doc));
	r = run("corpus --merge '%s'", chunk);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "do not add up"));
	fx_run_free(&r);
	free(doc);
	r = run("corpus --merge '%s'", man);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "corpus-part"));
	fx_run_free(&r);

	for (int i = 0; i < 5; i++)
		free(part[i]);
	free(m);
	fx_run_free(&whole);
	fx_run_free(&whole_text);
	rmtree(dir);
	free(dir);
}

static void test_merge(void **state)
{
	(void)state;
	merge("");
}

static void test_merge_corpus(void **state)
{
	(void)state;
	NEED_CORPUS();
	merge(NBG_CORPUS_DIR);
}

/* ----------------------------------------------------------- manifests */

static json_t *record_of(json_t *all, const char *suffix)
{
	size_t i;
	json_t *r;
	json_array_foreach(all, i, r) {
		const char *p = json_string_value(json_object_get(r, "path"));
		if (strlen(p) >= strlen(suffix) && !strcmp(p + strlen(p) - strlen(suffix), suffix))
			return r;
	}
	fail_msg("no record for %s", suffix);
	return NULL;
}

static void test_manifest(void **state)
{
	char *dir = tmpdir(), p[700], rec[700];
	size_t n, lines;
	uint64_t valid_bytes = 0;
	(void)state;
	for (int k = 0; k < 3; k++) {
		uint8_t *b = variant(k, &n);
		snprintf(p, sizeof(p), "%s/m%d.nb", dir, k);
		write_file(p, b, n);
		if (k != 1)
			valid_bytes += n;
		free(b);
	}
	snprintf(p, sizeof(p), "%s/gone.nb", dir);
	write_file(p, "VPMN", 4);
	/* sha256sum writes the manifest; then one hash is made wrong and one
	 * listed file is removed */
	snprintf(p, sizeof(p), "cd '%s' && sha256sum m0.nb m1.nb m2.nb gone.nb > man.sha256", dir);
	assert_int_equal(system(p), 0);
	snprintf(p, sizeof(p), "%s/man.sha256", dir);
	char *m = slurp(p, NULL);
	char *line2 = strchr(m, '\n') + 1; /* m1.nb */
	line2[0] = line2[0] == '0' ? '1' : '0';
	write_file(p, m, strlen(m));
	free(m);
	snprintf(p, sizeof(p), "%s/gone.nb", dir);
	unlink(p);

	/* manifest paths are relative to the current directory, as for sha256sum -c */
	char prefix[700];
	snprintf(rec, sizeof(rec), "%s/r.jsonl", dir);
	snprintf(prefix, sizeof(prefix), "cd '%s' &&", dir);
	fx_run_result r = fx_run_nbg(prefix, "corpus --json --records r.jsonl man.sha256");
	assert_int_equal(r.status, 3);
	json_t *j = json_loads(r.out, 0, NULL);
	assert_int_equal(geti(j, "files"), 4);
	assert_int_equal(geti(j, "valid"), 2);
	assert_int_equal(geti(j, "bytes"), valid_bytes);
	assert_int_equal(geti(j, "not_measured.digest-mismatch"), 1);
	assert_int_equal(geti(j, "not_measured.vanished"), 1);
	assert_non_null(strstr(r.err, "m1.nb has SHA-256"));
	json_decref(j);
	fx_run_free(&r);
	char *text = slurp(rec, NULL);
	json_t *all = parse_records(text, &lines);
	assert_int_equal(lines, 4);
	assert_string_equal(json_string_value(json_object_get(record_of(all, "m1.nb"), "status")),
			    "digest-mismatch");
	assert_string_equal(json_string_value(json_object_get(record_of(all, "m1.nb"),
							      "failure_code")), "digest-mismatch");
	assert_string_equal(json_string_value(json_object_get(record_of(all, "gone.nb"), "status")),
			    "vanished");
	assert_string_equal(json_string_value(json_object_get(record_of(all, "m0.nb"), "status")),
			    "valid");
	json_decref(all);
	free(text);

	/* only the wrong hash: a failed check, exit 1; a malformed line is
	 * counted and reported with its number */
	snprintf(p, sizeof(p), "cd '%s' && grep -v gone.nb man.sha256 > m2.sha256 && "
		 "echo 'not a manifest line' >> m2.sha256", dir);
	assert_int_equal(system(p), 0);
	r = fx_run_nbg(prefix, "corpus --json m2.sha256");
	assert_int_equal(r.status, 1);
	j = json_loads(r.out, 0, NULL);
	assert_int_equal(geti(j, "skipped.manifest-line"), 1);
	assert_non_null(strstr(r.err, "m2.sha256 line 4"));
	json_decref(j);
	fx_run_free(&r);

	/* --write-manifest: sha256sum -c accepts it, names with a backslash and
	 * a newline included */
	uint8_t *b = variant(5, &n);
	snprintf(p, sizeof(p), "%s/odd\\name\nx.nb", dir);
	write_file(p, b, n);
	free(b);
	r = fx_run_nbg(prefix, "corpus --quiet --write-manifest out.sha256 m0.nb m2.nb \"$(printf "
			       "'odd\\\\name\\nx.nb')\"");
	assert_int_equal(r.status, 0);
	fx_run_free(&r);
	snprintf(p, sizeof(p), "cd '%s' && sha256sum --quiet --strict -c out.sha256", dir);
	assert_int_equal(system(p), 0);
	snprintf(p, sizeof(p), "%s/out.sha256", dir);
	m = slurp(p, NULL);
	char hex[65];
	b = variant(0, &n);
	sha_hex(b, n, hex);
	free(b);
	assert_memory_equal(m, hex, 64); /* the first line: m0.nb, digest from OpenSSL */
	assert_memory_equal(m + 64, "  m0.nb\n", 8);
	int count = 0;
	for (char *q = m; *q; q++)
		count += *q == '\n';
	assert_int_equal(count, 3);
	/* the escaped line: a backslash first, then the name with \\ and \n */
	char *esc = strstr(m, "  odd\\\\name\\nx.nb\n");
	assert_non_null(esc);
	assert_int_equal(esc[-65], '\\');
	free(m);
	/* and reads it back: the same three files, all valid; also with CRLF
	 * line ends, which sha256sum -c accepts (every file was `vanished`
	 * then: the name kept its carriage return) */
	snprintf(p, sizeof(p), "cd '%s' && sed 's/$/\r/' out.sha256 > crlf.sha256 && "
		 "sha256sum --quiet --strict -c crlf.sha256", dir);
	assert_int_equal(system(p), 0);
	const char *again[] = { "out.sha256", "crlf.sha256" };
	for (int k = 0; k < 2; k++) {
		r = fx_run_nbg(prefix, "corpus --json %s", again[k]);
		assert_int_equal(r.status, 0);
		j = json_loads(r.out, 0, NULL);
		assert_int_equal(geti(j, "valid"), 3);
		assert_int_equal(geti(j, "not_measured.vanished"), 0);
		json_decref(j);
		fx_run_free(&r);
	}
	rmtree(dir);
	free(dir);
}

/* --------------------------------------------- files changed mid-run */

static void test_changed_mid_run(void **state)
{
	char *dir = tmpdir(), p[700], prefix[1200];
	size_t n, lines;
	const char *shim = getenv("NBG_SHIM");
	(void)state;
	assert_non_null(shim);
	for (int k = 0; k < 6; k++) {
		uint8_t *b = variant(k, &n);
		snprintf(p, sizeof(p), "%s/f%d.nb", dir, k);
		write_file(p, b, n);
		free(b);
	}
	/* f1 is cut in half at its first read, f3 removed when it is opened,
	 * f4's reads fail: the run goes on and counts each */
	snprintf(prefix, sizeof(prefix),
		 "LD_PRELOAD='%s' ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:verify_asan_link_order=0\" "
		 "NBG_SHIM_TRUNCATE=/f1.nb NBG_SHIM_VANISH=/f3.nb NBG_SHIM_EIO=/f4.nb", shim);
	fx_run_result r = fx_run_nbg(prefix, "corpus --jobs 2 --json --records '%s/r.jsonl' '%s'",
				     dir, dir);
	assert_int_equal(r.status, 3);
	json_t *j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_int_equal(geti(j, "files"), 6);
	assert_int_equal(geti(j, "valid"), 3);
	assert_int_equal(geti(j, "not_measured.changed"), 1);
	assert_int_equal(geti(j, "not_measured.vanished"), 1);
	assert_int_equal(geti(j, "not_measured.unreadable"), 1);
	assert_int_equal(geti(j, "unreadable"), 3);
	assert_non_null(strstr(r.err, "changed while it was read"));
	json_decref(j);
	fx_run_free(&r);
	snprintf(p, sizeof(p), "%s/r.jsonl", dir);
	char *text = slurp(p, NULL);
	json_t *all = parse_records(text, &lines);
	assert_int_equal(lines, 6);
	const char *want[] = { "valid", "changed", "valid", "vanished", "unreadable", "valid" };
	for (int k = 0; k < 6; k++)
		assert_string_equal(json_string_value(json_object_get(json_array_get(all, (size_t)k),
								      "status")), want[k]);
	assert_string_equal(json_string_value(json_object_get(json_array_get(all, 1),
							      "failure_code")), "file-changed");
	json_decref(all);
	free(text);
	/* the file really was cut: half its size now */
	struct stat st;
	snprintf(p, sizeof(p), "%s/f1.nb", dir);
	assert_int_equal(stat(p, &st), 0);
	uint8_t *b = variant(1, &n);
	free(b);
	assert_int_equal((size_t)st.st_size, n / 2);
	rmtree(dir);
	free(dir);
}

/* -------------------------------------------------- 20,000 tiny files */

/* The peak resident size (KiB) and the exit status of one run, measured in
 * a fresh child so that earlier runs do not count. */
static long run_maxrss_kb(int *status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static long run_maxrss_kb(int *status, const char *fmt, ...)
{
	char args[2000];
	int fd[2];
	long res[2] = { -1, -1 };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	assert_int_equal(pipe(fd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rusage ru;
		close(fd[0]);
		fx_run_result r = fx_run_nbg(NULL, "%s", args);
		getrusage(RUSAGE_CHILDREN, &ru);
		res[0] = ru.ru_maxrss;
		res[1] = r.status;
		fx_run_free(&r);
		_exit(write(fd[1], res, sizeof(res)) == sizeof(res) ? 0 : 1);
	}
	close(fd[1]);
	assert_int_equal(read(fd[0], res, sizeof(res)), sizeof(res));
	close(fd[0]);
	waitpid(pid, NULL, 0);
	*status = (int)res[1];
	return res[0];
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

static void make_tree(const char *dir, int files, const uint8_t *valid, size_t n)
{
	char p[700];
	for (int i = 0; i < files; i++) {
		if (i % 100 == 0) {
			snprintf(p, sizeof(p), "%s/d%03d", dir, i / 100);
			assert_int_equal(mkdir(p, 0755), 0);
		}
		snprintf(p, sizeof(p), "%s/d%03d/f%05d.nb", dir, i / 100, i);
		/* every 100th file valid, the others its first 64 bytes */
		write_file(p, valid, i % 100 == 0 ? n : 64);
	}
}

static void test_many_files(void **state)
{
	char *dir = tmpdir(), small[700], big[700], p[2600], rec[700];
	size_t n, lines;
	(void)state;
	fx_spec *s = fx_default();
	uint8_t *b = fx_build(s, &n);
	fx_free(s);
	snprintf(small, sizeof(small), "%s/small", dir);
	snprintf(big, sizeof(big), "%s/big", dir);
	assert_int_equal(mkdir(small, 0755), 0);
	assert_int_equal(mkdir(big, 0755), 0);
	make_tree(small, 2000, b, n);
	make_tree(big, 20000, b, n);
	/* a chain 400 directories deep (the walk has no depth limit), a link
	 * to a directory (not followed without --follow) and a loop */
	size_t o = (size_t)snprintf(p, sizeof(p), "%s", big);
	for (int i = 0; i < 400; i++) {
		o += (size_t)snprintf(p + o, sizeof(p) - o, "/z");
		assert_int_equal(mkdir(p, 0755), 0);
	}
	snprintf(p + o, sizeof(p) - o, "/deep.nb");
	write_file(p, b, n);
	snprintf(p, sizeof(p), "%s/d000/up", big);
	assert_int_equal(symlink("..", p), 0);
	free(b);

	int st_small, st_big;
	snprintf(rec, sizeof(rec), "%s/r-small.jsonl", dir);
	long rss_small = run_maxrss_kb(&st_small, "corpus --json --records '%s' '%s' > /dev/null",
				       rec, small);
	unlink(rec);
	snprintf(rec, sizeof(rec), "%s/r.jsonl", dir);
	/* the big run's outputs go to files (the exit status is kept) */
	long rss_big = run_maxrss_kb(&st_big, "corpus --json --records '%s' '%s' > '%s/out.json' "
				     "2> '%s/err.txt'; exit $?", rec, big, dir, dir);
	assert_int_equal(st_small, 1);
	assert_int_equal(st_big, 1);
	snprintf(p, sizeof(p), "%s/out.json", dir);
	char *out = slurp(p, NULL);
	json_t *j = json_loads(out, 0, NULL);
	free(out);
	assert_int_equal(geti(j, "files"), 20001);
	assert_int_equal(geti(j, "valid"), 201);
	/* a 64-byte prefix of a v2 file: its header declares the full size */
	assert_int_equal(geti(j, "invalid_by_code.file-size-mismatch"), 19800);
	assert_int_equal(geti(j, "skipped.directory-symlink"), 1);
	json_decref(j);
	snprintf(p, sizeof(p), "%s/err.txt", dir);
	char *err = slurp(p, NULL);
	/* --quiet was not given: one line per invalid file and the link */
	int err_lines = 0;
	for (const char *q = err; *q; q++)
		err_lines += *q == '\n';
	assert_int_equal(err_lines, 19801);
	free(err);
	char *text = slurp(rec, NULL);
	json_t *all = parse_records(text, &lines);
	assert_int_equal(lines, 20001);
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(all, 0), "path")),
			       "/d000/f00000.nb"));
	const char *last = json_string_value(json_object_get(json_array_get(all, 20000), "path"));
	assert_true(strlen(last) > 800); /* the file at the bottom of the chain, walked last */
	assert_string_equal(last + strlen(last) - 10, "/z/deep.nb");
	json_decref(all);
	free(text);
	print_message("2,000 files: max RSS %ld KiB; 20,001 files: max RSS %ld KiB\n", rss_small,
		      rss_big);
	/* memory grows with the file list (tens of bytes a file), not with
	 * what is measured: 18,000 more files stay well under 16 MiB more
	 * (not under ASan, whose quarantine keeps freed memory resident) */
#ifndef UNDER_ASAN
	assert_true(rss_big < rss_small + 16 * 1024);
#endif

	/* with --follow the loop is found and not walked twice */
	fx_run_result r = run("corpus --json --quiet --follow '%s'", big);
	j = json_loads(r.out, 0, NULL);
	assert_int_equal(geti(j, "files"), 20001);
	assert_int_equal(geti(j, "skipped.directory-revisited"), 1);
	json_decref(j);
	fx_run_free(&r);
	rmtree(dir);
	free(dir);
}

/* -------------------------------------------------- a hostile directory */

static void test_hostile_entries(void **state)
{
	char *dir = tmpdir(), p[700];
	size_t n, lines;
	(void)state;
	uint8_t *b = variant(0, &n);
	snprintf(p, sizeof(p), "%s/fifo.nb", dir);
	assert_int_equal(mkfifo(p, 0644), 0);
	snprintf(p, sizeof(p), "%s/null.nb", dir);
	assert_int_equal(symlink("/dev/null", p), 0);
	snprintf(p, sizeof(p), "%s/name\x01\xff.nb", dir);
	write_file(p, "XXXX", 4);
	snprintf(p, sizeof(p), "%s/ok.nb", dir);
	write_file(p, b, n);
	free(b);

	/* a FIFO and a device are never opened (opening the FIFO would block:
	 * the run is bounded by timeout, which exits 124) */
	fx_run_result r = fx_run_nbg("timeout 60", "corpus --records - '%s'", dir);
	assert_int_equal(r.status, 3);
	json_t *all = parse_records(r.out, &lines);
	assert_int_equal(lines, 4);
	assert_string_equal(json_string_value(json_object_get(record_of(all, "fifo.nb"), "status")),
			    "not-regular");
	assert_string_equal(json_string_value(json_object_get(record_of(all, "null.nb"), "status")),
			    "not-regular");
	/* the odd name: escaped in the record, never raw */
	json_t *odd = json_array_get(all, 1);
	const char *op = json_string_value(json_object_get(odd, "path"));
	assert_non_null(strstr(op, "name\\001\\377.nb"));
	json_decref(all);
	/* stderr: the report and the messages, every byte printable */
	for (const unsigned char *q = (const unsigned char *)r.err; *q; q++)
		assert_true(*q == '\n' || (*q >= 0x20 && *q < 0x7f));
	assert_non_null(strstr(r.err, "name\\001\\377.nb: bad-magic"));
	assert_non_null(strstr(r.err, "is a FIFO, not a regular file"));
	assert_non_null(strstr(r.err, "is a character device"));
	fx_run_free(&r);

	/* a device as the records file is refused like every output's
	 * (doc/security.md), never opened; every write to standard output is
	 * checked: exit 3 and a message naming it */
	r = run("corpus --records /dev/full '%s/ok.nb'", dir);
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.err, "not-regular-file: /dev/full is a character device"));
	fx_run_free(&r);
	static const struct {
		const char *opts, *says;
	} full[] = {
		{ "--records -", "cannot write to standard output: No space left on device" },
		{ "", "cannot write the report to standard output" },
	};
	for (size_t k = 0; k < 2; k++) {
		r = run("corpus %s '%s/ok.nb' > /dev/full 2> '%s/err.txt'; exit $?", full[k].opts,
			dir, dir);
		assert_int_equal(r.status, 3);
		fx_run_free(&r);
		snprintf(p, sizeof(p), "%s/err.txt", dir);
		char *err = slurp(p, NULL);
		assert_non_null(strstr(err, full[k].says));
		free(err);
	}
	/* no partial output: the records file is not created when the manifest
	 * cannot be */
	r = run("corpus --records '%s/r.jsonl' --write-manifest '%s/no/such/dir/m' '%s/ok.nb'", dir,
		dir, dir);
	assert_int_equal(r.status, 3);
	snprintf(p, sizeof(p), "%s/r.jsonl", dir);
	assert_int_not_equal(access(p, F_OK), 0);
	fx_run_free(&r);
	/* no temporary left beside the outputs either */
	DIR *d = opendir(dir);
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		assert_null(strstr(de->d_name, ".r.jsonl."));
	closedir(d);

	/* usage */
	const char *bad[] = { "corpus --jobs 0 x", "corpus --jobs", "corpus --merge --records r x",
			      "corpus --json --records - x", "corpus --bogus x", "corpus" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = run("%s", bad[i]);
		assert_int_equal(r.status, 2);
		assert_non_null(strstr(r.err, "nbg corpus: "));
		assert_true(strstr(r.err, "usage: nbg corpus") ||
			    strstr(r.err, "(nbg corpus --help lists the options)"));
		fx_run_free(&r);
	}
	rmtree(dir);
	free(dir);
}

/* --------------------------------------------------------- progress */

static void test_progress(void **state)
{
	char *dir = tmpdir(), p[700], log[700], cmd[2600];
	size_t n;
	(void)state;
	for (int k = 0; k < 40; k++) {
		uint8_t *b = variant(k, &n);
		snprintf(p, sizeof(p), "%s/p%02d.nb", dir, k);
		write_file(p, b, n);
		free(b);
	}
	/* stderr a terminal (script gives the command a pseudo-terminal) */
	snprintf(log, sizeof(log), "%s/tty.log", dir);
	snprintf(cmd, sizeof(cmd), "script -qec \"%s'%s' corpus '%s' >/dev/null\" '%s' >/dev/null",
		 nbg_exe_wrapper_prefix(), getenv("NBG_BIN"), dir, log);
	assert_int_equal(system(cmd), 0);
	char *t = slurp(log, NULL);
	assert_non_null(strstr(t, "40/40 files, "));
	assert_non_null(strstr(t, "/s"));
	/* cleared at the end: the last thing written is "\r<spaces>\r" */
	char *last = strrchr(t, '\r');
	assert_non_null(last);
	assert_true(last > t && last[-1] == ' ');
	free(t);
	/* --quiet: no progress */
	snprintf(cmd, sizeof(cmd), "script -qec \"%s'%s' corpus --quiet '%s' >/dev/null\" '%s' "
		 ">/dev/null", nbg_exe_wrapper_prefix(), getenv("NBG_BIN"), dir, log);
	assert_int_equal(system(cmd), 0);
	t = slurp(log, NULL);
	assert_null(strstr(t, "files, "));
	free(t);
	/* stderr not a terminal: nothing */
	fx_run_result r = run("corpus '%s' >/dev/null", dir);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	fx_run_free(&r);
	rmtree(dir);
	free(dir);
}

/* ------------------------------------------------ the aggregate directly */

static void test_library(void **state)
{
	char *dir = tmpdir(), p[700];
	size_t n;
	corpus_item *it = corpus_item_new();
	corpus_agg *a = corpus_agg_new(), *bc = corpus_agg_new(), *all = corpus_agg_new(), *back;
	corpus_agg *none = a; /* set to NULL by a refusal */
	nbg_error err;
	uint64_t size;
	uint8_t sha[32];
	(void)state;
	assert_non_null(it);
	for (int k = 0; k < 6; k++) {
		uint8_t *b = variant(k, &n);
		char hex[65], got[65];
		snprintf(p, sizeof(p), "%s/l%d.nb", dir, k);
		write_file(p, b, n);
		corpus_expect exp = { .has_size = 1, .file_size = n };
		assert_int_equal(corpus_measure(it, p, &exp), NBG_OK);
		assert_int_equal(corpus_item_status(it), CORPUS_VALID);
		assert_true(corpus_item_size(it, &size));
		assert_int_equal(size, n);
		assert_true(corpus_item_sha256(it, sha));
		sha_hex(b, n, hex); /* OpenSSL */
		nbg_hex32(sha, got);
		assert_string_equal(got, hex);
		assert_non_null(corpus_item_model(it));
		assert_int_equal(corpus_add_item(k < 3 ? a : bc, it), NBG_OK);
		assert_int_equal(corpus_add_item(all, it), NBG_OK);
		/* the size the walk saw differs: changed, and no model */
		exp.file_size = n + 1;
		assert_int_equal(corpus_measure(it, p, &exp), NBG_E_FILE_CHANGED);
		assert_int_equal(corpus_item_status(it), CORPUS_CHANGED);
		assert_null(corpus_item_model(it));
		free(b);
	}
	snprintf(p, sizeof(p), "%s/fifo", dir);
	assert_int_equal(mkfifo(p, 0644), 0);
	assert_int_equal(corpus_measure(it, p, NULL), NBG_E_NOT_REGULAR_FILE);
	assert_int_equal(corpus_item_exit(it), 3);
	assert_false(corpus_item_size(it, &size));
	assert_false(corpus_item_sha256(it, sha));
	corpus_item_free(it);

	/* merge(a, b) == all; a document read back writes the same document */
	assert_int_equal(corpus_merge(a, bc), NBG_OK);
	char *ja = corpus_json(a), *jall = corpus_json(all);
	assert_string_equal(ja, jall);
	assert_int_equal(corpus_from_json(jall, strlen(jall), "all", &back, &err), NBG_OK);
	char *jback = corpus_json(back);
	assert_string_equal(jback, jall);
	assert_int_equal(corpus_file_count(back), 6);
	assert_int_equal(corpus_exit(back), 0);
	assert_int_equal(corpus_from_json("[]", 2, "x", &none, &err), NBG_E_CORPUS_PART);
	assert_null(none);
	assert_non_null(strstr(err.message, "not a corpus part"));
	assert_int_equal(nbg_code_exit(NBG_E_CORPUS_PART), 2);
	free(ja);
	free(jall);
	free(jback);
	corpus_agg_free(a);
	corpus_agg_free(bc);
	corpus_agg_free(all);
	corpus_agg_free(back);
	rmtree(dir);
	free(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jobs_identical),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_manifest),
		cmocka_unit_test(test_changed_mid_run),
		cmocka_unit_test(test_many_files),
		cmocka_unit_test(test_hostile_entries),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_library),
	};
	/* The aggregate against the raw words of every real file; --jobs and
	 * merging with the real corpus beside the synthesized set. */
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_aggregate_and_records),
		cmocka_unit_test(test_jobs_identical_corpus),
		cmocka_unit_test(test_merge_corpus),
	};
	return tc_main(argc, argv, "test_corpus_scale", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), NULL, NULL);
}
