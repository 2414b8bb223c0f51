/*
 * cmd_inspect.c - `nbg inspect`, `nbg verify` and `nbg fields`.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "nbg/commands.h"
#include "nbg/report.h"

/* The core report with the graph keys `what` selects merged in; NULL on
 * allocation failure.  Graph decoding never fails on file contents. */
static char *inspect_json(const nbg_model *m, const char *path, unsigned what)
{
	char *core = nbg_report_json(m, path), *gs = NULL, *out = NULL;
	json_t *root = NULL, *graph = NULL;
	nbg_graph *g = NULL;
	nbg_error err;

	if (!what || !core)
		return core;
	if (nbg_graph_decode(m, &g, &err) != NBG_OK)
		goto done;
	gs = nbg_graph_json(m, g, what);
	root = json_loads(core, 0, NULL);
	graph = gs ? json_loads(gs, 0, NULL) : NULL;
	if (root && graph && json_object_update(root, graph) == 0)
		out = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
done:
	json_decref(root);
	json_decref(graph);
	free(gs);
	free(core);
	nbg_graph_free(g);
	return out;
}

/* The report `json` with the "commands" object merged in; frees `json`.
 * NULL on allocation failure. */
static char *add_commands_json(const nbg_model *m, char *json)
{
	nbg_graph *g = NULL;
	nbg_commands *c = NULL;
	char *cs = NULL, *out = NULL;
	json_t *root = NULL, *part = NULL;

	if (!json || nbg_graph_decode(m, &g, NULL) != NBG_OK ||
	    nbg_commands_decode(m, g, &c, NULL) != NBG_OK)
		goto done;
	cs = nbg_commands_json(m, g, c);
	root = json_loads(json, 0, NULL);
	part = cs ? json_loads(cs, 0, NULL) : NULL;
	if (root && part && json_object_update(root, part) == 0)
		out = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
done:
	json_decref(root);
	json_decref(part);
	free(cs);
	free(json);
	nbg_commands_free(c);
	nbg_graph_free(g);
	return out;
}

/* `--commands` as text: one line per NN / TP operation, relations, findings. */
static int print_commands(const nbg_model *m, const char *path, int header)
{
	nbg_graph *g = NULL;
	nbg_commands *c = NULL;
	nbg_error err;

	if (nbg_graph_decode(m, &g, &err) != NBG_OK || nbg_commands_decode(m, g, &c, &err) != NBG_OK) {
		fprintf(stderr, "nbg: %s: %s\n", nbg_esc(path), err.message);
		nbg_graph_free(g);
		return NBG_EXIT_IO;
	}
	if (header)
		printf("NBG file: %s\n", nbg_esc(path));
	nbg_text_commands(stdout, m, g, c);
	nbg_commands_free(c);
	nbg_graph_free(g);
	return NBG_EXIT_OK;
}

int nbg_cmd_inspect(int argc, char **argv)
{
	const char *path = NULL;
	int json = 0, rc, commands = 0, memory = 0;
	unsigned graph = 0;
	nbg_loaded l;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--layers"))
			graph |= NBG_TEXT_GRAPH_LAYERS;
		else if (!strcmp(argv[i], "--operations"))
			graph |= NBG_TEXT_GRAPH_OPERATIONS;
		else if (!strcmp(argv[i], "--patches"))
			graph |= NBG_TEXT_GRAPH_PATCHES;
		else if (!strcmp(argv[i], "--commands"))
			commands = 1;
		else if (!strcmp(argv[i], "--memory"))
			memory = 1;
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "nbg inspect: unknown option '%s'\n", argv[i]);
			return NBG_EXIT_USAGE;
		} else if (!path)
			path = argv[i];
		else {
			fprintf(stderr, "nbg inspect: one file at a time (got '%s' too)\n", argv[i]);
			return NBG_EXIT_USAGE;
		}
	}
	if (!path) {
		fprintf(stderr, "usage: nbg inspect [--json] [--layers] [--operations] [--patches] "
			"[--commands] [--memory] FILE\n");
		return NBG_EXIT_USAGE;
	}
	rc = nbg_load(path, NULL, &l);
	if (rc != NBG_EXIT_OK) {
		nbg_print_error(path, &l);
		if (json && !l.io_failed) {
			char *s = nbg_error_json(&l.err, path);
			if (s)
				puts(s);
			free(s);
		}
		nbg_loaded_free(&l);
		return rc;
	}
	if (json) {
		/* Any graph flag adds the summary, tables and findings too. */
		char *s = inspect_json(l.model, path,
				       graph ? graph | NBG_GRAPH_JSON_SUMMARY | NBG_GRAPH_JSON_TABLES |
						       NBG_GRAPH_JSON_FINDINGS
					     : 0);
		if (commands)
			s = add_commands_json(l.model, s);
		if (memory)
			s = nbg_inspect_memory_json(l.model, s);
		if (!s) {
			fprintf(stderr, "nbg: out of memory writing the report\n");
			rc = NBG_EXIT_IO;
		} else {
			puts(s);
			free(s);
		}
	} else if (graph) {
		nbg_graph *g = NULL;
		nbg_error gerr;
		if (nbg_graph_decode(l.model, &g, &gerr) != NBG_OK) {
			fprintf(stderr, "nbg: %s: %s\n", nbg_esc(path), gerr.message);
			rc = NBG_EXIT_IO;
		} else {
			printf("NBG file: %s\n", nbg_esc(path));
			nbg_text_graph(stdout, l.model, g, graph);
			nbg_graph_free(g);
		}
		if (rc == NBG_EXIT_OK && commands)
			rc = print_commands(l.model, path, 0);
	} else if (commands) {
		rc = print_commands(l.model, path, 1);
	} else {
		nbg_text_report(stdout, l.model, path);
	}
	if (!json && memory && rc == NBG_EXIT_OK)
		rc = nbg_inspect_memory_text(stdout, l.model);
	nbg_loaded_free(&l);
	return rc; /* main checks every write to standard output */
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

int nbg_cmd_verify(int argc, char **argv)
{
	int worst = NBG_EXIT_OK, files = 0, quiet = 0, status = 0, sha = 0;
	/* Structure and CRCs only: the SHA-256 fingerprints are not checks the
	 * format carries, and the whole-file one only when asked for. */
	nbg_parse_options o = { .size = sizeof(o), .flags = NBG_PARSE_NO_SECTION_SHA256 };

	/* as sha256sum: --quiet prints no line for a file that passes, --status
	 * prints nothing at all (the exit code says it) */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
			quiet = 1;
		else if (!strcmp(argv[i], "--status"))
			status = 1;
		else if (!strcmp(argv[i], "--sha256"))
			sha = 1;
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "nbg verify: unknown option '%s'\n", argv[i]);
			return NBG_EXIT_USAGE;
		}
	}
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
		rc = nbg_load(path, &o, &l);
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
		fprintf(stderr, "usage: nbg verify [--sha256] FILE...\n");
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
