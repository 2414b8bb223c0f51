/*
 * cmd_inspect.c - `nbg inspect`, `nbg verify` and `nbg fields`.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"
#include "manifest.h"
#include "nbg/commands.h"
#include "nbg/decoded.h"
#include "nbg/report.h"
#include "nbg/weights.h"

/* What `nbg inspect` was asked for. */
typedef struct inspect_opts {
	cli_inspect_opts a; /* the options */
	cli_export_form format; /* --format, or NBG_EXPORT_NONE */
	int many;           /* more than one FILE */
} inspect_opts;

/* The JSON report, streamed to standard output: the core report (or, with
 * --only, just the version and path) and the tables the options ask for. */
static int inspect_json(const nbg_model *m, const char *path, const inspect_opts *o,
			cli_json_list *list)
{
	unsigned what = 0;
	nbg_error err;

	if (o->a.only)
		what |= NBG_JSON_DOC_NO_CORE;
	/* Any graph flag adds the summary, tables and findings too. */
	if (o->a.graph)
		what |= o->a.graph | NBG_GRAPH_JSON_SUMMARY | NBG_GRAPH_JSON_TABLES |
			NBG_GRAPH_JSON_FINDINGS;
	if (o->a.commands)
		what |= NBG_JSON_DOC_COMMANDS;
	if (o->a.network)
		what |= NBG_JSON_DOC_NETWORK;
	if (o->a.memory)
		what |= NBG_JSON_DOC_MEMORY;
	if (o->a.weights)
		what |= NBG_JSON_DOC_WEIGHTS;
	cli_json_list_open(list);
	if (nbg_json_document_write(stdout, m, path, what, &err) != NBG_OK) {
		/* a failed standard output is reported once, by main */
		if (err.code != NBG_E_IO)
			fprintf(stderr, "nbg: %s: %s\n", cli_esc(path), err.message);
		return NBG_EXIT_IO;
	}
	cli_json_list_close(list);
	return NBG_EXIT_OK;
}

/* The text report: the default report, then the tables asked for (with
 * --only, the tables alone under the file's name), all from one decoded
 * model. */
static int inspect_text(const nbg_model *m, const char *path, const inspect_opts *o)
{
	const nbg_graph *g = NULL;
	const nbg_commands *c = NULL;
	const nbg_weights *w = NULL;
	nbg_decoded *d = NULL;
	nbg_error err;
	int rc = NBG_EXIT_OK;

	if (nbg_decoded_new(m, &d, &err) != NBG_OK) {
		fprintf(stderr, "nbg: %s: %s\n", cli_esc(path), err.message);
		return nbg_code_exit(err.code);
	}
	if (o->a.only)
		printf("NBG file: %s\n", cli_esc(path));
	else
		nbg_text_report_decoded(stdout, d, path);
	if ((o->a.graph || o->a.commands || o->a.weights) &&
	    (nbg_decoded_graph(d, &g, &err) != NBG_OK ||
	     ((o->a.commands || o->a.weights) && nbg_decoded_commands(d, &c, &err) != NBG_OK) ||
	     (o->a.weights && nbg_decoded_weights(d, &w, &err) != NBG_OK))) {
		fprintf(stderr, "nbg: %s: %s\n", cli_esc(path), err.message);
		rc = nbg_code_exit(err.code);
	} else {
		if (o->a.graph)
			nbg_text_graph(stdout, m, g, o->a.graph);
		if (o->a.commands)
			nbg_text_commands(stdout, m, g, c);
		if (o->a.network && o->a.only)
			nbg_text_network(stdout, d);
		else if (o->a.network) /* the default report holds the table */
			nbg_text_network_edges(stdout, d);
		if (o->a.weights)
			nbg_text_weights(stdout, m, g, c, w);
		if (o->a.memory)
			rc = cli_inspect_memory_text(stdout, d);
	}
	nbg_decoded_free(d);
	return rc;
}

/* After a report that read l's mapping past the parse (the tables, the
 * weights): rc, or the file-changed failure printed and its exit code. */
static int reported(const char *path, cli_loaded *l, int rc)
{
	int x = cli_loaded_changed(path, l, "the report printed for it is void");

	if (x)
		cli_print_error(path, l);
	return cli_exit_worst(rc, x);
}

/* One file's report; `list` collects JSON documents in operand order. */
static int inspect_one(const char *path, const inspect_opts *o, cli_json_list *list)
{
	int json_out = o->a.json || o->format == NBG_EXPORT_META, rc;
	cli_loaded l;

	/* A checksum that does not match: the failure, then everything that
	 * can still be decoded, marked unverified (the exit code stays 1).  An
	 * export is never made from such bytes: it parses without the flag. */
	nbg_parse_options keep = { .size = sizeof(keep), .flags = NBG_PARSE_KEEP_UNVERIFIED };
	rc = cli_load_expect(path, o->format == NBG_EXPORT_NONE ? &keep : NULL,
			     o->a.target.set ? &o->a.target.value : NULL, &l);
	if (rc != NBG_EXIT_OK && l.model) {
		cli_print_error(path, &l);
		if (o->a.json) {
			inspect_json(l.model, path, o, list);
		} else {
			if (list->count++)
				putchar('\n');
			inspect_text(l.model, path, o);
		}
		rc = reported(path, &l, rc);
		cli_loaded_free(&l);
		return rc;
	}
	if (rc != NBG_EXIT_OK) {
		cli_print_error(path, &l);
		/* one file: the error document only for a file that was read */
		if (json_out && (o->many || !l.io_failed)) {
			char *s = nbg_error_json(&l.err, path);
			if (s)
				cli_json_list_item(list, s);
			free(s);
		}
		cli_loaded_free(&l);
		return rc;
	}
	if (o->format != NBG_EXPORT_NONE) {
		rc = cli_inspect_export(l.model, path, o->format, o->many, list);
	} else if (o->a.json) {
		rc = inspect_json(l.model, path, o, list);
	} else {
		if (list->count++)
			putchar('\n');
		rc = inspect_text(l.model, path, o);
	}
	rc = reported(path, &l, rc);
	cli_loaded_free(&l);
	return rc;
}

/* Parses the options; fills o and the FILE operands.  Returns -1 after a
 * usage message, else the number of files. */
static int inspect_args(int argc, char **argv, inspect_opts *o, const char **files)
{
	int n;

	memset(o, 0, sizeof(*o));
	if (cli_parse_command("inspect", argc, argv, &o->a, files, &n) != 0)
		return -1;
	o->format = (cli_export_form)o->a.format;
	if (o->a.only && !o->a.graph && !o->a.commands && !o->a.network && !o->a.memory &&
	    !o->a.weights) {
		fprintf(stderr, "nbg inspect: --only keeps just the tables asked for: add "
				"--layers, --operations, --patches, --commands, --network, --memory "
				"or --weights\n");
		return -1;
	}
	if (o->format != NBG_EXPORT_NONE &&
	    (o->a.json || o->a.only || o->a.graph || o->a.commands || o->a.network ||
	     o->a.memory || o->a.weights)) {
		fprintf(stderr, "nbg inspect: --format prints only the inputs and outputs; it "
				"takes no --json, --only or tables\n");
		return -1;
	}
	o->many = n > 1;
	return n;
}

int cli_cmd_inspect(int argc, char **argv)
{
	const char **files = calloc((size_t)argc, sizeof(*files));
	int n, worst = NBG_EXIT_OK;
	inspect_opts o;
	cli_json_list list = { 0 };

	if (!files) {
		fprintf(stderr, "nbg inspect: out of memory\n");
		return NBG_EXIT_IO;
	}
	n = inspect_args(argc, argv, &o, files);
	if (n == 0)
		cli_usage("inspect", "no FILE given (- reads standard input)");
	if (n <= 0) {
		free(files);
		return NBG_EXIT_USAGE;
	}
	list.many = o.many;
	for (int i = 0; i < n; i++)
		worst = cli_exit_worst(worst, inspect_one(files[i], &o, &list));
	if (o.a.json || o.format == NBG_EXPORT_META)
		cli_json_list_end(&list);
	free(files);
	return worst; /* main checks every write to standard output */
}

/* After an integrity failure, every mismatching checksum, not just the
 * first: from the model the parse kept (NBG_PARSE_KEEP_UNVERIFIED), when
 * every other rule holds. */
static void list_integrity(const char *shown, const nbg_model *m)
{
	const nbg_file_checksum *fc = nbg_model_file_checksum(m);

	if (!m)
		return;
	for (size_t i = 0; i < nbg_model_checksum_record_count(m); i++) {
		const nbg_checksum_record *r = nbg_model_checksum_record_at(m, i);
		if (r->stored != r->computed)
			printf("%s:   section %s CRC-32 0x%08x, record says 0x%08x\n", shown,
			       nbg_section_type_name(r->section_type), r->computed, r->stored);
	}
	if (fc && fc->recorded != fc->computed)
		printf("%s:   file checksum 0x%08x, header says 0x%08x\n", shown, fc->computed,
		       fc->recorded);
}

/* What `nbg verify` was asked for. */
typedef struct verify_opts {
	cli_verify_opts a;        /* the options */
	cli_manifest manifest;    /* --manifest's entries */
} verify_opts;

/* What proved a file that passed, after the in-file checksums: the SHA-256
 * the caller expected (1), none was given (0). */
static void print_verified(const char *mark, const char *shown, const nbg_model *m,
			   const verify_opts *o, int sha_checked)
{
	char hex[65] = "", why[200];

	if (nbg_model_family(m) == 2)
		printf("%s%s: OK v2 0x%08x target 0x%08x sections %zu crc 0x%08x", mark, shown,
		       nbg_model_version(m), nbg_model_target(m), nbg_model_section_count(m), nbg_model_file_checksum(m)->computed);
	else
		printf("%s%s: OK v1 0x%08x target 0x%08x entries %zu", mark, shown, nbg_model_version(m),
		       nbg_model_target(m), nbg_model_section_count(m));
	if (o->a.sha)
		nbg_hex32(nbg_model_file_sha256(m), hex);
	nbg_integrity_describe(m, why, sizeof(why));
	if (sha_checked)
		printf("%s%s (verified: the SHA-256 matches %s; in the file: %s)\n",
		       o->a.sha ? " sha256 " : "", hex,
		       o->a.expect.set ? "--sha256-expect" : "the manifest", why);
	else
		printf("%s%s (%s%s)\n", o->a.sha ? " sha256 " : "", hex,
		       nbg_model_integrity(m) == NBG_INTEGRITY_VERIFIED ? "verified: " : "", why);
}

/* Parses verify's options, leaving the FILE operands in files[]; -1 after a
 * usage message, else their number. */
static int verify_args(int argc, char **argv, verify_opts *o, const char **files)
{
	int n;

	if (cli_parse_command("verify", argc, argv, &o->a, files, &n) != 0)
		return -1;
	if (o->a.expect.set && (n != 1 || o->a.manifest_path)) {
		fprintf(stderr, "nbg verify: --sha256-expect checks exactly one FILE (for "
				"several, use --manifest)\n");
		return -1;
	}
	return n;
}

/* The whole-file SHA-256 against the expected one, when one was given: 1
 * matched, 0 none expected; else NBG_EXIT_INVALID with l->err filled. */
static int check_expected(const char *path, cli_loaded *l, const verify_opts *o)
{
	const uint8_t *want = o->a.expect.set ? o->a.expect.bytes : NULL;
	char have[65], exp[65];

	if (o->a.manifest_path) {
		const cli_manifest_entry *e = cli_manifest_find(&o->manifest, path);
		if (!e) {
			l->err.code = NBG_E_NOT_IN_MANIFEST;
			l->err.offset = 0;
			snprintf(l->err.message, sizeof(l->err.message),
				 "the manifest %s lists no line for this path, so its SHA-256 was "
				 "not compared", cli_esc(o->a.manifest_path));
			return -NBG_EXIT_INVALID;
		}
		want = e->sha256;
	}
	if (!want)
		return 0;
	if (!memcmp(want, nbg_model_file_sha256(l->model), 32))
		return 1;
	nbg_hex32(nbg_model_file_sha256(l->model), have);
	nbg_hex32(want, exp);
	l->err.code = NBG_E_DIGEST_MISMATCH;
	l->err.offset = 0;
	snprintf(l->err.message, sizeof(l->err.message),
		 "the file's SHA-256 is %s, but %s expects %s", have,
		 o->a.expect.set ? "--sha256-expect" : "the manifest", exp);
	return -NBG_EXIT_INVALID;
}

/* One file: its line (unless quiet) and its exit code. */
static int verify_one(const char *path, const nbg_parse_options *po, const verify_opts *o)
{
	/* As sha256sum does: a line whose name needed escaping starts with a
	 * backslash, so no name can pass for another line. */
	const char *shown = cli_esc(path);
	const char *mark = nbg_path_needs_escape(path) ? "\\" : "";
	cli_loaded l;
	const uint32_t *target = o->a.target.set ? &o->a.target.value : NULL;
	int rc = cli_load_expect(path, po, target, &l), sha_checked = 0;

	if (rc == NBG_EXIT_OK) {
		sha_checked = check_expected(path, &l, o);
		if (sha_checked < 0)
			rc = -sha_checked;
	}
	if (rc == NBG_EXIT_OK && o->a.require && !sha_checked &&
	    nbg_model_integrity(l.model) != NBG_INTEGRITY_VERIFIED) {
		char why[200];
		l.err.code = NBG_E_INTEGRITY_UNVERIFIED;
		l.err.offset = 0;
		snprintf(l.err.message, sizeof(l.err.message),
			 "--require-checksum: %s; give its SHA-256 (--sha256-expect or "
			 "--manifest) to verify it",
			 nbg_integrity_describe(l.model, why, sizeof(why)));
		rc = NBG_EXIT_INVALID;
	}
	if (rc == NBG_EXIT_OK && !o->a.quiet) {
		print_verified(mark, shown, l.model, o, sha_checked);
	} else if (rc == NBG_EXIT_OK) {
		/* nothing to say */
	} else if (l.io_failed) {
		printf("%s%s: ERROR %s\n", mark, shown, l.err.message);
	} else {
		printf("%s%s: FAIL %s at offset %llu: %s\n", mark, shown,
		       nbg_code_name(l.err.code), (unsigned long long)l.err.offset,
		       l.err.message);
		if (l.err.code == NBG_E_SECTION_CHECKSUM_MISMATCH ||
		    l.err.code == NBG_E_FILE_CHECKSUM_MISMATCH)
			list_integrity(shown, l.model);
	}
	cli_loaded_free(&l);
	return rc;
}

static int verify_files(const char **files, int n, verify_opts *o)
{
	int worst = NBG_EXIT_OK;
	/* Structure and CRCs only: the SHA-256 fingerprints are not checks the
	 * format carries, and the whole-file one only when asked for or
	 * compared. */
	nbg_parse_options po = { .size = sizeof(po),
				 .flags = NBG_PARSE_NO_SECTION_SHA256 | NBG_PARSE_KEEP_UNVERIFIED };

	if ((!o->a.sha || o->a.quiet || o->a.status) && !o->a.expect.set && !o->a.manifest_path)
		po.flags |= NBG_PARSE_NO_FILE_SHA256;
	if (o->a.status && freopen("/dev/null", "w", stdout) == NULL)
		return NBG_EXIT_IO;
	for (int i = 0; i < n; i++)
		worst = cli_exit_worst(worst, verify_one(files[i], &po, o));
	if (!n)
		for (size_t i = 0; i < o->manifest.count; i++)
			worst = cli_exit_worst(worst,
					       verify_one(o->manifest.entries[i].name, &po, o));
	return worst;
}

int cli_cmd_verify(int argc, char **argv)
{
	const char **files = calloc((size_t)argc, sizeof(*files));
	verify_opts o = { 0 };
	int n, rc, e;

	if (!files) {
		fprintf(stderr, "nbg verify: out of memory\n");
		return NBG_EXIT_IO;
	}
	n = verify_args(argc, argv, &o, files);
	if (n == 0 && !o.a.manifest_path)
		cli_usage("verify", "no FILE given (- reads standard input; --manifest alone "
				    "verifies every file it lists)");
	if (n < 0 || (n == 0 && !o.a.manifest_path)) {
		free(files);
		return NBG_EXIT_USAGE;
	}
	if (o.a.manifest_path && (e = cli_manifest_load(o.a.manifest_path, &o.manifest, NULL, NULL))) {
		fprintf(stderr, "nbg verify: cannot read manifest %s: %s\n",
			cli_esc(o.a.manifest_path), strerror(e));
		free(files);
		return NBG_EXIT_IO;
	}
	if (o.a.manifest_path && o.manifest.bad_lines && !o.a.status)
		fprintf(stderr, "nbg verify: %s: %zu line%s (the first is line %zu) not "
				"\"<sha256>  <path>\" as sha256sum writes it; ignored\n",
			cli_esc(o.a.manifest_path), o.manifest.bad_lines,
			o.manifest.bad_lines == 1 ? "" : "s", o.manifest.first_bad_line);
	rc = verify_files(files, n, &o);
	cli_manifest_free(&o.manifest);
	free(files);
	return rc;
}

int cli_cmd_fields(int argc, char **argv)
{
	size_t n;
	const nbg_field *f = nbg_field_map(&n);
	cli_json_opts o = { 0 };
	int nextra;

	if (cli_parse_command("fields", argc, argv, &o, NULL, &nextra) != 0)
		return NBG_EXIT_USAGE;
	if (o.json) {
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
int cli_cmd_codes(int argc, char **argv)
{
	cli_codes_opts o = { 0 };
	int nextra, md;

	if (cli_parse_command("codes", argc, argv, &o, NULL, &nextra) != 0)
		return NBG_EXIT_USAGE;
	md = o.markdown;
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
