/*
 * cmd_corpus.c - `nbg corpus PATH... [--json]`: corpus-wide invariants.
 *
 * Parses every file given (directories are walked for *.nb, recursively) and
 * reports the relations that hold across all of them, in the form of the
 * seed's corpus tables: families, versions and targets; section sets, entry
 * sizes and alignments; checksum records and file checksums; dynamic-I/O
 * totals; distinct connection tails; I/O formats and quantization; notes.
 * A corpus invariant is not a format rule: the report says what was seen.
 * Exit 0 when every file is a valid NBG, 1 when any is not, 3 when a path
 * cannot be read.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli.h"

#define MAX_VALUES 16

/* A small multiset of u64 values (distinct values and how often each). */
typedef struct valset {
	uint64_t v[MAX_VALUES];
	uint64_t n[MAX_VALUES];
	size_t count;
	int overflow;
} valset;

static void vs_add(valset *s, uint64_t v)
{
	for (size_t i = 0; i < s->count; i++)
		if (s->v[i] == v) {
			s->n[i]++;
			return;
		}
	if (s->count == MAX_VALUES) {
		s->overflow = 1;
		return;
	}
	s->v[s->count] = v;
	s->n[s->count++] = 1;
}

typedef struct range64 {
	int seen;
	uint64_t lo, hi;
} range64;

static void rg_add(range64 *r, uint64_t v)
{
	if (!r->seen || v < r->lo)
		r->lo = v;
	if (!r->seen || v > r->hi)
		r->hi = v;
	r->seen = 1;
}

/* Distinct SHA-256 values (connection tails). */
typedef struct shaset {
	uint8_t (*d)[32];
	size_t count, cap;
} shaset;

static void sha_add(shaset *s, const uint8_t d[32])
{
	for (size_t i = 0; i < s->count; i++)
		if (!memcmp(s->d[i], d, 32))
			return;
	if (s->count == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		void *n = realloc(s->d, cap * 32);
		if (!n)
			return;
		s->d = n;
		s->cap = cap;
	}
	memcpy(s->d[s->count++], d, 32);
}

typedef struct note_count {
	char id[40];
	uint64_t n;
} note_count;

typedef struct corpus {
	uint64_t files, valid, unreadable, bytes;
	uint64_t fail_by_code[NBG_E__COUNT];
	valset family, version, target;
	/* v2 */
	uint64_t v2_files;
	valset section_count;
	uint64_t type_files[NBG_SECTION_TYPE_COUNT];
	valset type_entsize[NBG_SECTION_TYPE_COUNT];
	valset type_align[NBG_SECTION_TYPE_COUNT];
	uint64_t checksum_records, checksum_match, file_checksum_match, covered_section_bytes;
	uint64_t dyn_files, dyn_entries, dyn_region, dyn_mapped, dyn_padding;
	range64 dyn_entry_count;
	valset core_count, address_width, attribute, vsi_nonzero;
	uint64_t opcount_plus3_holds, opcount_checked;
	range64 ni_inputs, ni_outputs, ni_layers, ni_opcount, mem_pool;
	/* v1 */
	uint64_t v1_files;
	valset v1_entry_count, v1_io_stride, crc_finding;
	/* both */
	uint64_t io_records;
	valset io_format, io_quant, io_type, io_dim_count;
	shaset tails;
	valset tail_cover;
	note_count notes[128];
	size_t note_kinds;
} corpus;

static void add_note(corpus *c, const char *id)
{
	for (size_t i = 0; i < c->note_kinds; i++)
		if (!strcmp(c->notes[i].id, id)) {
			c->notes[i].n++;
			return;
		}
	if (c->note_kinds < sizeof(c->notes) / sizeof(c->notes[0])) {
		snprintf(c->notes[c->note_kinds].id, sizeof(c->notes[0].id), "%s", id);
		c->notes[c->note_kinds++].n = 1;
	}
}

static void add_io(corpus *c, const nbg_io *io, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		c->io_records++;
		vs_add(&c->io_format, io[i].data_format);
		vs_add(&c->io_quant, io[i].quant_format);
		vs_add(&c->io_type, io[i].data_type);
		vs_add(&c->io_dim_count, io[i].dim_count);
	}
}

static void add_model(corpus *c, const nbg_model *m)
{
	c->valid++;
	vs_add(&c->family, m->family);
	vs_add(&c->version, m->version);
	vs_add(&c->target, m->target);
	add_io(c, m->inputs, m->input_count);
	add_io(c, m->outputs, m->output_count);
	if (m->tail.cover != NBG_TAIL_NONE) {
		sha_add(&c->tails, m->tail.sha256);
		vs_add(&c->tail_cover, m->tail.cover);
	}
	for (size_t i = 0; i < m->note_count; i++)
		add_note(c, m->notes[i].id);

	if (m->family == 1) {
		c->v1_files++;
		vs_add(&c->v1_entry_count, m->v1.entry_count);
		vs_add(&c->v1_io_stride, m->v1.io_stride);
		if (m->v1.crc_sum_finding)
			vs_add(&c->crc_finding, m->v1.crc_sum_finding[0]);
		return;
	}
	c->v2_files++;
	vs_add(&c->section_count, m->section_count);
	for (size_t i = 0; i < m->section_count; i++) {
		const nbg_section *s = &m->sections[i];
		c->type_files[s->type]++;
		vs_add(&c->type_entsize[s->type], s->entry_size);
		vs_add(&c->type_align[s->type], s->alignment);
	}
	for (size_t i = 0; i < m->checksum_record_count; i++) {
		c->checksum_records++;
		c->checksum_match += m->checksum_records[i].stored ==
				     m->checksum_records[i].computed;
	}
	c->file_checksum_match += m->file_checksum.recorded == m->file_checksum.computed;
	c->covered_section_bytes += m->file_checksum.covered_section_bytes;
	if (m->dynaio.present) {
		c->dyn_files++;
		c->dyn_entries += m->dynaio.entry_count;
		rg_add(&c->dyn_entry_count, m->dynaio.entry_count);
		c->dyn_region += m->dynaio.region_size;
		c->dyn_mapped += m->dynaio.mapped_bytes;
		c->dyn_padding += m->dynaio.padding_bytes;
	}
	const nbg_network_info *ni = &m->network_info;
	if (ni->present) {
		vs_add(&c->core_count, ni->core_count);
		vs_add(&c->address_width, ni->address_width);
		vs_add(&c->attribute, ni->attribute);
		vs_add(&c->vsi_nonzero, ni->vsi_reserved_nonzero);
		rg_add(&c->ni_inputs, ni->input_count);
		rg_add(&c->ni_outputs, ni->output_count);
		rg_add(&c->ni_layers, ni->layer_count);
		rg_add(&c->ni_opcount, ni->operation_count);
		const nbg_section *ops = nbg_model_section(m, NBG_SEC_OPERATIONS);
		if (ops && ops->entry_size) {
			c->opcount_checked++;
			c->opcount_plus3_holds += ni->operation_count ==
						  ops->size / ops->entry_size + 3;
		}
	}
	if (m->memory.has_memory_pool)
		rg_add(&c->mem_pool, m->memory.memory_pool_bytes);
}

static int visit_file(corpus *c, const char *path, int quiet)
{
	nbg_loaded l;
	int rc = nbg_load(path, NULL, &l);

	c->files++;
	if (rc == NBG_EXIT_OK) {
		c->bytes += l.model->file_size;
		add_model(c, l.model);
	} else if (l.io_failed) {
		c->unreadable++;
		fprintf(stderr, "nbg corpus: %s\n", l.err.message);
	} else {
		c->fail_by_code[l.err.code < NBG_E__COUNT ? l.err.code : 0]++;
		if (!quiet)
			fprintf(stderr, "nbg corpus: %s: %s at offset %" PRIu64 ": %s\n", path,
				nbg_code_name(l.err.code), l.err.offset, l.err.message);
	}
	nbg_loaded_free(&l);
	return rc;
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Walks a directory for *.nb in name order (stable reports). */
static int visit_path(corpus *c, const char *path, int depth, int quiet)
{
	struct stat st;
	int worst = NBG_EXIT_OK;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "nbg corpus: cannot read %s\n", path);
		c->unreadable++;
		return NBG_EXIT_IO;
	}
	if (!S_ISDIR(st.st_mode))
		return visit_file(c, path, quiet);
	if (depth > 16)
		return NBG_EXIT_OK;
	DIR *d = opendir(path);
	if (!d) {
		fprintf(stderr, "nbg corpus: cannot open directory %s\n", path);
		c->unreadable++;
		return NBG_EXIT_IO;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nn = realloc(names, cap * sizeof(*names));
			if (!nn)
				break;
			names = nn;
		}
		size_t len = strlen(path) + strlen(e->d_name) + 2;
		names[n] = malloc(len);
		if (!names[n])
			break;
		snprintf(names[n++], len, "%s/%s", path, e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		struct stat cs;
		int rc = NBG_EXIT_OK;
		if (stat(names[i], &cs) == 0 && S_ISDIR(cs.st_mode))
			rc = visit_path(c, names[i], depth + 1, quiet);
		else if (ends_with(names[i], ".nb"))
			rc = visit_file(c, names[i], quiet);
		if (rc == NBG_EXIT_IO || (rc == NBG_EXIT_INVALID && worst == NBG_EXIT_OK))
			worst = rc;
		free(names[i]);
	}
	free(names);
	return worst;
}

typedef const char *(*namer)(uint64_t v, char *buf, size_t n);

static const char *hex_namer(uint64_t v, char *buf, size_t n)
{
	snprintf(buf, n, "0x%08" PRIx64, v);
	return buf;
}

static const char *fmt_namer(uint64_t v, char *buf, size_t n)
{
	const char *s = nbg_data_format_name((uint32_t)v);
	if (s)
		return s;
	snprintf(buf, n, "format(%" PRIu64 ")", v);
	return buf;
}

static const char *quant_namer(uint64_t v, char *buf, size_t n)
{
	const char *s = nbg_quant_format_name((uint32_t)v);
	if (s)
		return s;
	snprintf(buf, n, "quant(%" PRIu64 ")", v);
	return buf;
}

static const char *cover_namer(uint64_t v, char *buf, size_t n)
{
	static const char *const names[] = { "none", "uncovered", "partly covered",
					     "section-covered-view" };
	return v < 4 ? names[v] : (snprintf(buf, n, "%" PRIu64, v), buf);
}

static const char *finding_namer(uint64_t v, char *buf, size_t n)
{
	return v == 'z' ? "zero" : v == 'm' ? "match" : v == 'n' ? "no-match"
							 : (snprintf(buf, n, "?"), buf);
}

static void print_vs(const char *key, const valset *s, namer f)
{
	char buf[48];
	printf("  %-30s ", key);
	if (!s->count)
		printf("-");
	for (size_t i = 0; i < s->count; i++) {
		const char *name = f ? f(s->v[i], buf, sizeof(buf))
				     : (snprintf(buf, sizeof(buf), "%" PRIu64, s->v[i]), buf);
		printf("%s%s x%" PRIu64, i ? ", " : "", name, s->n[i]);
	}
	printf("%s\n", s->overflow ? ", ... (more than 16 values)" : "");
}

static json_t *vs_json(const valset *s, namer f)
{
	json_t *a = json_array();
	char buf[48];
	for (size_t i = 0; i < s->count; i++)
		json_array_append_new(a, json_pack("{s:o,s:I}", "value",
						   f ? json_string(f(s->v[i], buf, sizeof(buf)))
						     : json_integer((json_int_t)s->v[i]),
						   "files_or_records", (json_int_t)s->n[i]));
	return a;
}

static json_t *rg_json(const range64 *r)
{
	return r->seen ? json_pack("[I,I]", (json_int_t)r->lo, (json_int_t)r->hi) : json_null();
}

static void print_rg(const char *key, const range64 *r)
{
	if (r->seen)
		printf("  %-30s %" PRIu64 "-%" PRIu64 "\n", key, r->lo, r->hi);
	else
		printf("  %-30s -\n", key);
}

static void print_text(const corpus *c)
{
	printf("Corpus: %" PRIu64 " files, %" PRIu64 " valid, %" PRIu64 " bytes in valid files\n",
	       c->files, c->valid, c->bytes);
	for (int k = 1; k < NBG_E__COUNT; k++)
		if (c->fail_by_code[k])
			printf("  invalid: %-28s %" PRIu64 "\n", nbg_code_name((nbg_code)k),
			       c->fail_by_code[k]);
	if (c->unreadable)
		printf("  unreadable paths: %" PRIu64 "\n", c->unreadable);
	print_vs("families", &c->family, NULL);
	print_vs("versions", &c->version, hex_namer);
	print_vs("targets", &c->target, hex_namer);

	printf("\nv2 files: %" PRIu64 "\n", c->v2_files);
	if (c->v2_files) {
		print_vs("section counts", &c->section_count, NULL);
		printf("  %-30s %-8s %-22s %s\n", "section type", "files", "entry sizes",
		       "alignments");
		for (uint32_t t = 0; t < NBG_SECTION_TYPE_COUNT; t++) {
			if (!c->type_files[t])
				continue;
			char name[48], es[64] = "", al[64] = "";
			size_t o = 0, p = 0;
			snprintf(name, sizeof(name), "%s(%u)", nbg_section_type_name(t), t);
			for (size_t i = 0; i < c->type_entsize[t].count && o < sizeof(es); i++)
				o += (size_t)snprintf(es + o, sizeof(es) - o, "%s%" PRIu64, i ? "," : "",
						      c->type_entsize[t].v[i]);
			for (size_t i = 0; i < c->type_align[t].count && p < sizeof(al); i++)
				p += (size_t)snprintf(al + p, sizeof(al) - p, "%s%" PRIu64, i ? "," : "",
						      c->type_align[t].v[i]);
			printf("    %-28s %-8" PRIu64 " %-22s %s\n", name, c->type_files[t], es, al);
		}
		printf("  %-30s %" PRIu64 " records, %" PRIu64 " match\n", "section checksums",
		       c->checksum_records, c->checksum_match);
		printf("  %-30s %" PRIu64 " of %" PRIu64 " match, %" PRIu64 " section bytes covered\n",
		       "file checksums", c->file_checksum_match, c->v2_files,
		       c->covered_section_bytes);
		printf("  %-30s %" PRIu64 " paired files, %" PRIu64 " entries, region %" PRIu64
		       " bytes, mapped %" PRIu64 ", padding %" PRIu64 "\n",
		       "dynamic I/O", c->dyn_files, c->dyn_entries, c->dyn_region, c->dyn_mapped,
		       c->dyn_padding);
		print_rg("dynamic I/O entries per file", &c->dyn_entry_count);
		print_vs("core_count", &c->core_count, NULL);
		print_vs("address_width", &c->address_width, NULL);
		print_vs("attribute", &c->attribute, hex_namer);
		print_vs("vsi_reserved non-zero words", &c->vsi_nonzero, NULL);
		printf("  %-30s %" PRIu64 " of %" PRIu64 " files\n",
		       "operation_count = entries + 3", c->opcount_plus3_holds, c->opcount_checked);
		print_rg("input_count", &c->ni_inputs);
		print_rg("output_count", &c->ni_outputs);
		print_rg("layer_count", &c->ni_layers);
		print_rg("operation_count", &c->ni_opcount);
		print_rg("memory_pool_bytes", &c->mem_pool);
	}
	printf("\nv1 files: %" PRIu64 "\n", c->v1_files);
	if (c->v1_files) {
		print_vs("entry counts", &c->v1_entry_count, NULL);
		print_vs("I/O record strides", &c->v1_io_stride, NULL);
		print_vs("nbg_crc_sum findings", &c->crc_finding, finding_namer);
	}
	printf("\nI/O records: %" PRIu64 "\n", c->io_records);
	print_vs("data formats", &c->io_format, fmt_namer);
	print_vs("quantization", &c->io_quant, quant_namer);
	print_vs("data types", &c->io_type, NULL);
	print_vs("dimension counts", &c->io_dim_count, NULL);
	printf("\nConnection tails: %zu distinct SHA-256 values\n", c->tails.count);
	print_vs("coverage", &c->tail_cover, cover_namer);
	if (c->note_kinds) {
		printf("\nNotes (deviations from the seed corpus, not failures):\n");
		for (size_t i = 0; i < c->note_kinds; i++)
			printf("  %-34s %" PRIu64 "\n", c->notes[i].id, c->notes[i].n);
	}
}

static void print_json(const corpus *c)
{
	json_t *fails = json_object(), *types = json_array(), *notes = json_object();
	for (int k = 1; k < NBG_E__COUNT; k++)
		if (c->fail_by_code[k])
			json_object_set_new(fails, nbg_code_name((nbg_code)k),
					    json_integer((json_int_t)c->fail_by_code[k]));
	for (uint32_t t = 0; t < NBG_SECTION_TYPE_COUNT; t++)
		if (c->type_files[t])
			json_array_append_new(
				types, json_pack("{s:i,s:s,s:I,s:o,s:o}", "type", (int)t, "name",
						 nbg_section_type_name(t), "files",
						 (json_int_t)c->type_files[t], "entry_sizes",
						 vs_json(&c->type_entsize[t], NULL), "alignments",
						 vs_json(&c->type_align[t], NULL)));
	for (size_t i = 0; i < c->note_kinds; i++)
		json_object_set_new(notes, c->notes[i].id, json_integer((json_int_t)c->notes[i].n));
	json_t *root = json_pack(
		"{s:s,s:I,s:I,s:I,s:I,s:o,s:o,s:o,s:o}", "nbgkit_version", NBG_VERSION_STRING,
		"files", (json_int_t)c->files, "valid", (json_int_t)c->valid, "unreadable",
		(json_int_t)c->unreadable, "bytes", (json_int_t)c->bytes, "invalid_by_code", fails,
		"families", vs_json(&c->family, NULL), "versions", vs_json(&c->version, hex_namer),
		"targets", vs_json(&c->target, hex_namer));
	json_object_set_new(
		root, "v2",
		json_pack("{s:I,s:o,s:o,s:{s:I,s:I},s:{s:I,s:I},s:{s:I,s:I,s:I,s:I,s:I,s:o},"
			  "s:o,s:o,s:o,s:o,s:{s:I,s:I},s:o,s:o,s:o,s:o,s:o}",
			  "files", (json_int_t)c->v2_files, "section_counts",
			  vs_json(&c->section_count, NULL), "section_types", types,
			  "section_checksums", "records", (json_int_t)c->checksum_records, "match",
			  (json_int_t)c->checksum_match, "file_checksums", "match",
			  (json_int_t)c->file_checksum_match, "covered_section_bytes",
			  (json_int_t)c->covered_section_bytes, "dynamic_io", "paired_files",
			  (json_int_t)c->dyn_files, "entries", (json_int_t)c->dyn_entries,
			  "region_bytes", (json_int_t)c->dyn_region, "mapped_bytes",
			  (json_int_t)c->dyn_mapped, "padding_bytes", (json_int_t)c->dyn_padding,
			  "entries_per_file", rg_json(&c->dyn_entry_count), "core_count",
			  vs_json(&c->core_count, NULL), "address_width",
			  vs_json(&c->address_width, NULL), "attribute",
			  vs_json(&c->attribute, hex_namer), "vsi_reserved_nonzero_words",
			  vs_json(&c->vsi_nonzero, NULL), "operation_count_plus_3", "holds",
			  (json_int_t)c->opcount_plus3_holds, "checked",
			  (json_int_t)c->opcount_checked, "input_count", rg_json(&c->ni_inputs),
			  "output_count", rg_json(&c->ni_outputs), "layer_count",
			  rg_json(&c->ni_layers), "operation_count", rg_json(&c->ni_opcount),
			  "memory_pool_bytes", rg_json(&c->mem_pool)));
	json_object_set_new(root, "v1",
			    json_pack("{s:I,s:o,s:o,s:o}", "files", (json_int_t)c->v1_files,
				      "entry_counts", vs_json(&c->v1_entry_count, NULL),
				      "io_strides", vs_json(&c->v1_io_stride, NULL),
				      "crc_sum_findings", vs_json(&c->crc_finding, finding_namer)));
	json_object_set_new(root, "io_records",
			    json_pack("{s:I,s:o,s:o,s:o,s:o}", "count", (json_int_t)c->io_records,
				      "data_formats", vs_json(&c->io_format, fmt_namer),
				      "quantization", vs_json(&c->io_quant, quant_namer),
				      "data_types", vs_json(&c->io_type, NULL), "dimension_counts",
				      vs_json(&c->io_dim_count, NULL)));
	json_object_set_new(root, "connection_tails",
			    json_pack("{s:I,s:o}", "distinct_sha256", (json_int_t)c->tails.count,
				      "coverage", vs_json(&c->tail_cover, cover_namer)));
	json_object_set_new(root, "notes", notes);
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (s)
		puts(s);
	free(s);
	json_decref(root);
}

int nbg_cmd_corpus(int argc, char **argv)
{
	int json = 0, quiet = 0, paths = 0, worst = NBG_EXIT_OK;
	corpus *c;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--quiet"))
			quiet = 1;
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "nbg corpus: unknown option '%s'\n", argv[i]);
			return NBG_EXIT_USAGE;
		} else
			paths++;
	}
	if (!paths) {
		fprintf(stderr, "usage: nbg corpus [--json] [--quiet] FILE|DIR...\n");
		return NBG_EXIT_USAGE;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		fprintf(stderr, "nbg corpus: out of memory\n");
		return NBG_EXIT_IO;
	}
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1])
			continue;
		int rc = visit_path(c, argv[i], 0, quiet);
		if (rc == NBG_EXIT_IO || (rc == NBG_EXIT_INVALID && worst == NBG_EXIT_OK))
			worst = rc;
	}
	if (json)
		print_json(c);
	else
		print_text(c);
	free(c->tails.d);
	free(c);
	if (fflush(stdout) != 0)
		return NBG_EXIT_IO;
	return worst;
}
