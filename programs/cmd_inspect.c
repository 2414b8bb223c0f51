/*
 * cmd_inspect.c - `nbg inspect`, `nbg verify` and `nbg fields`.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nbg/commands.h"
#include "nbg/report.h"
#include "nbg/weights.h"

/* What `nbg inspect` was asked for. */
typedef struct inspect_opts {
	int json;           /* --json */
	int only;           /* --only: the requested tables without the report */
	int commands;       /* --commands */
	int weights;        /* --weights */
	int memory;         /* --memory */
	unsigned graph;     /* --layers, --operations, --patches */
	nbg_export_form format; /* --format, or NBG_EXPORT_NONE */
	int has_target;     /* --expect-target */
	uint32_t target;
	int many;           /* more than one FILE */
} inspect_opts;

/* The JSON report, streamed to standard output: the core report (or, with
 * --only, just the version and path) and the tables the options ask for. */
static int inspect_json(const nbg_model *m, const char *path, const inspect_opts *o,
			nbg_json_list *list)
{
	unsigned what = 0;
	nbg_error err;

	if (o->only)
		what |= NBG_JSON_DOC_NO_CORE;
	/* Any graph flag adds the summary, tables and findings too. */
	if (o->graph)
		what |= o->graph | NBG_GRAPH_JSON_SUMMARY | NBG_GRAPH_JSON_TABLES |
			NBG_GRAPH_JSON_FINDINGS;
	if (o->commands)
		what |= NBG_JSON_DOC_COMMANDS;
	if (o->memory)
		what |= NBG_JSON_DOC_MEMORY;
	if (o->weights)
		what |= NBG_JSON_DOC_WEIGHTS;
	nbg_json_list_open(list);
	if (nbg_json_document_write(stdout, m, path, what, &err) != NBG_OK) {
		/* a failed standard output is reported once, by main */
		if (err.code != NBG_E_IO)
			fprintf(stderr, "nbg: %s: %s\n", nbg_esc(path), err.message);
		return NBG_EXIT_IO;
	}
	nbg_json_list_close(list);
	return NBG_EXIT_OK;
}

/* The text report: the default report, then the tables asked for (with
 * --only, the tables alone under the file's name). */
static int inspect_text(const nbg_model *m, const char *path, const inspect_opts *o)
{
	nbg_graph *g = NULL;
	nbg_commands *c = NULL;
	nbg_weights *w = NULL;
	nbg_error err;

	if (o->only)
		printf("NBG file: %s\n", nbg_esc(path));
	else
		nbg_text_report(stdout, m, path);
	if (!o->graph && !o->commands && !o->weights)
		return o->memory ? nbg_inspect_memory_text(stdout, m) : NBG_EXIT_OK;
	if (nbg_graph_decode(m, &g, &err) != NBG_OK ||
	    ((o->commands || o->weights) && nbg_commands_decode(m, g, &c, &err) != NBG_OK) ||
	    (o->weights && nbg_weights_decode(m, g, c, &w, &err) != NBG_OK)) {
		fprintf(stderr, "nbg: %s: %s\n", nbg_esc(path), err.message);
		nbg_commands_free(c);
		nbg_graph_free(g);
		return nbg_code_exit(err.code);
	}
	if (o->graph)
		nbg_text_graph(stdout, m, g, o->graph);
	if (o->commands)
		nbg_text_commands(stdout, m, g, c);
	if (o->weights)
		nbg_text_weights(stdout, m, g, c, w);
	nbg_weights_free(w);
	nbg_commands_free(c);
	nbg_graph_free(g);
	return o->memory ? nbg_inspect_memory_text(stdout, m) : NBG_EXIT_OK;
}

/* One file's report; `list` collects JSON documents in operand order. */
static int inspect_one(const char *path, const inspect_opts *o, nbg_json_list *list)
{
	int json_out = o->json || o->format == NBG_EXPORT_META, rc;
	nbg_loaded l;

	rc = nbg_load_expect(path, NULL, o->has_target ? &o->target : NULL, &l);
	if (rc != NBG_EXIT_OK) {
		nbg_print_error(path, &l);
		/* one file: the error document only for a file that was read */
		if (json_out && (o->many || !l.io_failed)) {
			char *s = nbg_error_json(&l.err, path);
			if (s)
				nbg_json_list_item(list, s);
			free(s);
		}
		nbg_loaded_free(&l);
		return rc;
	}
	if (o->format != NBG_EXPORT_NONE) {
		rc = nbg_inspect_export(l.model, path, o->format, o->many, list);
	} else if (o->json) {
		rc = inspect_json(l.model, path, o, list);
	} else {
		if (list->count++)
			putchar('\n');
		rc = inspect_text(l.model, path, o);
	}
	nbg_loaded_free(&l);
	return rc;
}

/* Parses the options; fills o and the FILE operands.  Returns -1 after a
 * usage message, else the number of files. */
static int inspect_args(int argc, char **argv, inspect_opts *o, const char **files)
{
	int n = 0;

	memset(o, 0, sizeof(*o));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--json"))
			o->json = 1;
		else if (!strcmp(a, "--only"))
			o->only = 1;
		else if (!strcmp(a, "--layers"))
			o->graph |= NBG_TEXT_GRAPH_LAYERS;
		else if (!strcmp(a, "--operations"))
			o->graph |= NBG_TEXT_GRAPH_OPERATIONS;
		else if (!strcmp(a, "--patches"))
			o->graph |= NBG_TEXT_GRAPH_PATCHES;
		else if (!strcmp(a, "--commands"))
			o->commands = 1;
		else if (!strcmp(a, "--memory"))
			o->memory = 1;
		else if (!strcmp(a, "--weights"))
			o->weights = 1;
		else if (!strcmp(a, "--format") && i + 1 < argc) {
			if ((o->format = nbg_export_form_parse(argv[++i])) == NBG_EXPORT_NONE)
				return -1;
		} else if (!strcmp(a, "--expect-target") && i + 1 < argc) {
			if (nbg_target_parse(argv[++i], &o->target) != 0)
				return -1;
			o->has_target = 1;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "nbg inspect: unknown option '%s'\n", nbg_esc(a));
			return -1;
		} else
			files[n++] = a;
	}
	if (o->only && !o->graph && !o->commands && !o->memory && !o->weights) {
		fprintf(stderr, "nbg inspect: --only keeps just the tables asked for: add "
				"--layers, --operations, --patches, --commands, --memory or "
				"--weights\n");
		return -1;
	}
	if (o->format != NBG_EXPORT_NONE &&
	    (o->json || o->only || o->graph || o->commands || o->memory || o->weights)) {
		fprintf(stderr, "nbg inspect: --format prints only the inputs and outputs; it "
				"takes no --json, --only or tables\n");
		return -1;
	}
	o->many = n > 1;
	return n;
}

int nbg_cmd_inspect(int argc, char **argv)
{
	const char **files = calloc((size_t)argc, sizeof(*files));
	int n, worst = NBG_EXIT_OK;
	inspect_opts o;
	nbg_json_list list = { 0 };

	if (!files) {
		fprintf(stderr, "nbg inspect: out of memory\n");
		return NBG_EXIT_IO;
	}
	n = inspect_args(argc, argv, &o, files);
	if (n == 0)
		fprintf(stderr, "usage: nbg inspect [--json] [--layers] [--operations] [--patches] "
			"[--commands] [--memory] [--weights] [--only] [--format meta|vpm|jevois] "
			"[--expect-target T] "
			"FILE...\n");
	if (n <= 0) {
		free(files);
		return NBG_EXIT_USAGE;
	}
	list.many = o.many;
	for (int i = 0; i < n; i++)
		worst = nbg_exit_worst(worst, inspect_one(files[i], &o, &list));
	if (o.json || o.format == NBG_EXPORT_META)
		nbg_json_list_end(&list);
	free(files);
	return worst; /* main checks every write to standard output */
}

/* After an integrity failure, list every mismatching checksum, not just the first. */
static void list_integrity(const char *shown, const nbg_loaded *l)
{
	nbg_parse_options o = { .size = sizeof(o), .flags = NBG_PARSE_NO_CRC_CHECK | NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256 };
	nbg_model *m = NULL;

	if (nbg_parse(l->map.data, l->map.size, &o, &m, NULL) != NBG_OK)
		return;
	for (size_t i = 0; i < m->checksum_record_count; i++) {
		const nbg_checksum_record *r = &m->checksum_records[i];
		if (r->stored != r->computed)
			printf("%s:   section %s CRC-32 0x%08x, record says 0x%08x\n", shown,
			       nbg_section_type_name(r->section_type), r->computed, r->stored);
	}
	if (m->has_file_checksum && m->file_checksum.recorded != m->file_checksum.computed)
		printf("%s:   file checksum 0x%08x, header says 0x%08x\n", shown,
		       m->file_checksum.computed, m->file_checksum.recorded);
	nbg_model_free(m);
}

/* The verdict line of a file that passed; the whole-file SHA-256 only when
 * it was asked for (--sha256). */
static void print_verified(const char *mark, const char *shown, const nbg_model *m, int sha)
{
	char hex[65] = "";

	if (m->family == 2)
		printf("%s%s: OK v2 0x%08x target 0x%08x sections %zu crc 0x%08x", mark, shown,
		       m->version, m->target, m->section_count, m->file_checksum.computed);
	else
		printf("%s%s: OK v1 0x%08x target 0x%08x entries %zu", mark, shown, m->version,
		       m->target, m->section_count);
	if (sha)
		nbg_hex32(m->file_sha256, hex);
	printf("%s%s\n", sha ? " sha256 " : "", hex);
}

static int verify_option(const char *a)
{
	return !strcmp(a, "--quiet") || !strcmp(a, "-q") || !strcmp(a, "--status") ||
	       !strcmp(a, "--sha256");
}

/* Parses verify's options; -1 after a usage message. */
static int verify_args(int argc, char **argv, int *quiet, int *status, int *sha,
		       const uint32_t **target, uint32_t *value)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
			*quiet = 1;
		else if (!strcmp(argv[i], "--status"))
			*status = 1;
		else if (!strcmp(argv[i], "--sha256"))
			*sha = 1;
		else if (!strcmp(argv[i], "--expect-target") && i + 1 < argc) {
			if (nbg_target_parse(argv[++i], value) != 0)
				return -1;
			*target = value;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "nbg verify: unknown option '%s'\n", nbg_esc(argv[i]));
			return -1;
		}
	}
	return 0;
}

int nbg_cmd_verify(int argc, char **argv)
{
	int worst = NBG_EXIT_OK, files = 0, quiet = 0, status = 0, sha = 0;
	const uint32_t *target = NULL;
	uint32_t value = 0;
	/* Structure and CRCs only: the SHA-256 fingerprints are not checks the
	 * format carries, and the whole-file one only when asked for. */
	nbg_parse_options o = { .size = sizeof(o), .flags = NBG_PARSE_NO_SECTION_SHA256 };

	/* as sha256sum: --quiet prints no line for a file that passes, --status
	 * prints nothing at all (the exit code says it) */
	if (verify_args(argc, argv, &quiet, &status, &sha, &target, &value) != 0)
		return NBG_EXIT_USAGE;
	if (!sha || quiet || status)
		o.flags |= NBG_PARSE_NO_FILE_SHA256;
	if (status && freopen("/dev/null", "w", stdout) == NULL)
		return NBG_EXIT_IO;
	for (int i = 1; i < argc; i++) {
		const char *path = argv[i];
		nbg_loaded l;
		int rc;
		/* As sha256sum does: a line whose name needed escaping starts
		 * with a backslash, so no name can pass for another line. */
		const char *shown = nbg_esc(path);
		const char *mark = nbg_path_needs_escape(path) ? "\\" : "";

		if (verify_option(path))
			continue;
		if (!strcmp(path, "--expect-target")) {
			i++;
			continue;
		}
		rc = nbg_load_expect(path, &o, target, &l);
		files++;
		if (rc == NBG_EXIT_OK && quiet) {
			/* nothing to say */
		} else if (rc == NBG_EXIT_OK) {
			print_verified(mark, shown, l.model, sha);
		} else if (l.io_failed) {
			printf("%s%s: ERROR %s\n", mark, shown, l.err.message);
		} else {
			printf("%s%s: FAIL %s at offset %llu: %s\n", mark, shown,
			       nbg_code_name(l.err.code),
			       (unsigned long long)l.err.offset, l.err.message);
			if (l.err.code == NBG_E_SECTION_CHECKSUM_MISMATCH ||
			    l.err.code == NBG_E_FILE_CHECKSUM_MISMATCH)
				list_integrity(shown, &l);
		}
		/* I/O trouble outranks an invalid file in the exit code. */
		if (rc == NBG_EXIT_IO || (rc == NBG_EXIT_INVALID && worst == NBG_EXIT_OK))
			worst = rc;
		nbg_loaded_free(&l);
	}
	if (!files) {
		fprintf(stderr, "usage: nbg verify [--sha256] [--expect-target T] FILE...\n");
		return NBG_EXIT_USAGE;
	}
	return worst;
}

int nbg_cmd_fields(int argc, char **argv)
{
	size_t n;
	const nbg_field *f = nbg_field_map(&n);
	int json = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else {
			fprintf(stderr, "usage: nbg fields [--json]\n");
			return NBG_EXIT_USAGE;
		}
	}
	if (json) {
		printf("[\n");
		for (size_t i = 0; i < n; i++) {
			printf("  {\"structure\": \"%s\", \"offset\": %u, \"width\": %u, ",
			       f[i].structure, f[i].offset, f[i].width);
			if (f[i].kind == NBG_FIELD_BITS)
				printf("\"bits\": [%u, %u], ", f[i].bit_lo,
				       f[i].bit_lo + f[i].bit_count - 1);
			printf("\"public_name\": \"%s\", \"key\": \"%s\", ", f[i].public_name,
			       f[i].key);
			if (f[i].alias)
				printf("\"alias\": \"%s\", ", f[i].alias);
			printf("\"evidence\": \"%s\", \"meaning\": \"%s\"}%s\n", f[i].evidence,
			       f[i].meaning, i + 1 < n ? "," : "");
		}
		printf("]\n");
		return NBG_EXIT_OK;
	}
	const char *cur = "";
	for (size_t i = 0; i < n; i++) {
		char where[24], key[96];
		if (strcmp(cur, f[i].structure)) {
			cur = f[i].structure;
			printf("%s%s\n  %-10s %-5s %-24s %-40s %s\n", i ? "\n" : "", cur, "offset",
			       "width", "public name", "parser key", "evidence  meaning");
		}
		if (f[i].kind == NBG_FIELD_BITS)
			snprintf(where, sizeof(where), "0x%02x.%u-%u", f[i].offset, f[i].bit_lo,
				 f[i].bit_lo + f[i].bit_count - 1);
		else
			snprintf(where, sizeof(where), "0x%02x", f[i].offset);
		snprintf(key, sizeof(key), "%s%s%s", f[i].key, f[i].alias ? " / " : "",
			 f[i].alias ? f[i].alias : "");
		char width[16];
		if (f[i].kind == NBG_FIELD_BITS)
			snprintf(width, sizeof(width), "%ub", f[i].bit_count);
		else
			snprintf(width, sizeof(width), "%u", f[i].width);
		printf("  %-10s %-5s %-24s %-40s %-9s %s\n", where, width, f[i].public_name,
		       key, f[i].evidence, f[i].meaning);
	}
	return NBG_EXIT_OK;
}

/* `nbg codes [--markdown]`: the failure codes, from the one list the library
 * uses; doc/failure-codes.md embeds the --markdown output (checked by a test). */
int nbg_cmd_codes(int argc, char **argv)
{
	int md = argc > 1 && !strcmp(argv[1], "--markdown");

	if (argc > 2 || (argc == 2 && !md)) {
		fprintf(stderr, "usage: nbg codes [--markdown]\n");
		return NBG_EXIT_USAGE;
	}
	if (md)
		printf("| code | exit | meaning |\n|---|---|---|\n");
	for (int c = 1; c < NBG_E__COUNT; c++) {
		if (md)
			printf("| `%s` | %d | %s |\n", nbg_code_name((nbg_code)c),
			       nbg_code_exit((nbg_code)c), nbg_code_text((nbg_code)c));
		else
			printf("%-34s %d  %s\n", nbg_code_name((nbg_code)c),
			       nbg_code_exit((nbg_code)c), nbg_code_text((nbg_code)c));
	}
	return NBG_EXIT_OK;
}
