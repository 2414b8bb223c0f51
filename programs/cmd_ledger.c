/*
 * cmd_ledger.c - `nbg ledger`, `nbg reemit` and `nbg map`: the byte-ownership
 * ledger as a table or JSON, lossless re-emission from it, and its picture.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opts.h"
#include "cli_out.h"
#include "cmd_ledger.h"
#include "nbg/decoded.h"
#include "nbg/ledger.h"


static void print_ledger_error(const char *path, const nbg_error *err)
{
	fprintf(stderr, "nbg: %s: %s at offset %llu (0x%llx), field %s: %s\n", cli_esc(path),
		nbg_code_name(err->code), (unsigned long long)err->offset,
		(unsigned long long)err->offset, err->field[0] ? err->field : "-", err->message);
	if (err->code == NBG_E_LEDGER_INVARIANT)
		fprintf(stderr, "nbg: this is a bug in nbgkit (the ledger must tile every file "
				"it accepts); please report it with the file\n");
}

/* Parses `path` and builds its ledger, the bytes of the decoded kernel
 * streams as decoded-coefficients (doc/weights.md), which *dec owns (free
 * it after the ledger's last use); returns an exit code (0 on success). */
static int load_ledger(const char *path, cli_loaded *ld, nbg_decoded **dec,
		       const nbg_ledger **out)
{
	nbg_error err;
	nbg_code rc;
	int x = cli_load(path, NULL, ld);

	*dec = NULL;
	*out = NULL;
	if (x != NBG_EXIT_OK) {
		cli_print_error(path, ld);
		return x;
	}
	rc = nbg_decoded_new(ld->model, dec, &err);
	if (rc == NBG_OK)
		rc = nbg_decoded_ledger(*dec, out, &err);
	if (rc != NBG_OK) {
		print_ledger_error(path, &err);
		return nbg_code_exit(rc);
	}
	/* the ledger decoded the weights from the file after the parse */
	if ((x = cli_loaded_changed(path, ld, NULL)) != NBG_EXIT_OK)
		cli_print_error(path, ld);
	return x;
}

static void human_table(FILE *out, const nbg_ledger *l, const char *path)
{
	size_t n = nbg_ledger_range_count(l), nv = nbg_ledger_view_count(l);
	uint64_t size = nbg_ledger_file_size(l);
	int ow = 5, vw = 4;
	char hex[65];

	for (size_t i = 0; i < n; i++) {
		int k = (int)strlen(nbg_ledger_range_at(l, i)->owner);
		ow = k > ow ? k : ow;
	}
	for (size_t i = 0; i < nv; i++) {
		int k = (int)strlen(nbg_ledger_view_at(l, i)->name);
		vw = k > vw ? k : vw;
	}
	nbg_hex32(nbg_ledger_file_sha256(l), hex);
	fprintf(out, "%s: NBG v%u 0x%08x, %llu bytes, sha256 %s\n", cli_esc(path), nbg_ledger_family(l),
		nbg_ledger_version(l), (unsigned long long)size, hex);
	fprintf(out, "%zu owner ranges tile [0, %llu): no gap, no overlap\n\n", n,
		(unsigned long long)size);
	fprintf(out, "%-10s  %-10s  %10s  %-22s  %-*s  %s\n", "offset", "end", "size", "class",
		ow, "owner", "sha256");
	for (size_t i = 0; i < n; i++) {
		const nbg_ledger_range *r = nbg_ledger_range_at(l, i);
		nbg_hex32(r->sha256, hex);
		fprintf(out, "0x%08llx  0x%08llx  %10llu  %-22s  %-*s  %.16s\n",
			(unsigned long long)r->offset, (unsigned long long)(r->offset + r->size),
			(unsigned long long)r->size, nbg_ledger_class_name(r->cls), ow, r->owner,
			hex);
	}
	fprintf(out, "\nviews (never own bytes): %zu\n", nv);
	if (nv) {
		fprintf(out, "%-20s  %-10s  %10s  %7s  %-*s  %s\n", "kind", "offset", "size",
			"covered", vw, "name", "sha256");
		for (size_t i = 0; i < nv; i++) {
			const nbg_ledger_view *v = nbg_ledger_view_at(l, i);
			char cov[24] = "-";
			if (v->kind <= NBG_VIEW_CONNECTION_TAIL)
				snprintf(cov, sizeof(cov), "%llu",
					 (unsigned long long)v->covered_bytes);
			nbg_hex32(v->sha256, hex);
			fprintf(out, "%-20s  0x%08llx  %10llu  %7s  %-*s  %.16s\n",
				nbg_ledger_view_kind_name(v->kind), (unsigned long long)v->offset,
				(unsigned long long)v->size, cov, vw, v->name,
				v->size ? hex : "-");
		}
	}
	fprintf(out, "\ntotals\n%-22s  %6s  %12s  %8s\n", "class", "ranges", "bytes", "share");
	for (int c = 0; c < NBG_LEDGER_CLASS_COUNT; c++) {
		uint64_t b = nbg_ledger_class_bytes(l, (nbg_ledger_class)c);
		fprintf(out, "%-22s  %6zu  %12llu  %7.3f%%\n",
			nbg_ledger_class_name((nbg_ledger_class)c),
			nbg_ledger_class_ranges(l, (nbg_ledger_class)c), (unsigned long long)b,
			size ? 100.0 * (double)b / (double)size : 0.0);
	}
	fprintf(out, "%-22s  %6zu  %12llu  %7.3f%%\n", "total", n, (unsigned long long)size,
		100.0);
}

/* One file's ledger, as a table or (json) a document in the list `list`. */
static int ledger_one(const char *path, int json, cli_json_list *list)
{
	cli_loaded ld;
	nbg_decoded *dec;
	const nbg_ledger *l;
	int x = load_ledger(path, &ld, &dec, &l);

	if (x == NBG_EXIT_OK) {
		if (json) {
			char *s = nbg_ledger_json(l, path);
			if (!s) {
				fprintf(stderr, "nbg: out of memory writing the ledger\n");
				x = NBG_EXIT_IO;
			} else {
				cli_json_list_item(list, s);
				free(s);
			}
		} else {
			if (list->count++)
				putchar('\n');
			human_table(stdout, l, path);
		}
	} else if (json && list->many) {
		/* keep the array in operand order: a failed file is its error */
		char *s = nbg_error_json(&ld.err, path);
		if (s)
			cli_json_list_item(list, s);
		free(s);
	}
	nbg_decoded_free(dec);
	cli_loaded_free(&ld);
	return x;
}

int cli_cmd_ledger(int argc, char **argv)
{
	cli_json_opts o = { 0 };
	const char **files;
	int n, worst;
	cli_json_list list = { 0 };

	worst = cli_parse_operands("ledger", argc, argv, &o, &files, &n);
	if (worst == NBG_EXIT_OK && !n)
		worst = cli_usage("ledger", "no FILE given (- reads standard input)");
	if (worst != NBG_EXIT_OK) {
		free(files);
		return worst;
	}
	list.many = n > 1;
	for (int i = 0; i < n; i++)
		worst = cli_exit_worst(worst, ledger_one(files[i], o.json, &list));
	free(files);
	if (o.json)
		cli_json_list_end(&list);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "nbg: cannot write the ledger\n");
		return NBG_EXIT_IO;
	}
	return worst;
}

/* Reads a ledger document written by `nbg ledger --json`. */
static int read_ledger_doc(const char *path, nbg_ledger **out)
{
	nbg_mapping map;
	nbg_error err;
	nbg_code rc;

	*out = NULL;
	if (cli_input_open(path, &map, &err) != NBG_OK) {
		fprintf(stderr, "nbg: %s\n", err.message);
		return NBG_EXIT_IO;
	}
	rc = nbg_ledger_from_json((const char *)map.data, map.size, out, &err);
	cli_input_close(&map);
	if (rc != NBG_OK) {
		fprintf(stderr, "nbg: %s: %s: %s\n", cli_esc(path), nbg_code_name(rc), err.message);
		return NBG_EXIT_INVALID;
	}
	return NBG_EXIT_OK;
}

/* The line of a re-emission that succeeded; with OUT standard output the
 * file went there and the line goes to standard error. */
static void print_reemitted(const char *in, const cli_out *o, uint64_t bytes, size_t ranges,
			    const uint8_t sha[32])
{
	char hex[65];

	nbg_hex32(sha, hex);
	fprintf(o->to_stdout ? stderr : stdout,
		"%s -> %s: %llu bytes from %zu ledger ranges, sha256 %s (identical)\n",
		cli_esc(in), o->to_stdout ? "standard output" : cli_esc(o->name),
		(unsigned long long)bytes, ranges, hex);
}

/* OUT for a re-emission: the file is read back from the device unless it
 * is standard output or --no-readback was given. */
static int reemit_open(const char *out, int readback, cli_out *o, unsigned *flags)
{
	int x = cli_out_open(o, "reemit", out, CLI_OUT_STDOUT);

	*flags = !x && readback && !o->to_stdout ? NBG_REEMIT_READBACK : 0;
	return x;
}

/* After the re-emission: the output committed, or discarded when the input
 * shrank (the bytes written were checked against zeros, not the file) or
 * the re-emission failed. */
static int reemit_end(const char *in, int shrank, nbg_code rc, const nbg_error *err, cli_out *o)
{
	int x = NBG_EXIT_OK;

	if (shrank) {
		fprintf(stderr, "nbg: %s shrank while it was being read (another process "
				"truncated it): %s is not its re-emission\n", cli_esc(in),
			cli_esc(o->name));
		x = NBG_EXIT_IO;
	} else if (rc == NBG_E_IO && o->to_stdout) {
		fprintf(stderr, "nbg reemit: %s: cannot write to standard output: %s\n",
			nbg_code_name(rc), err->message);
		x = NBG_EXIT_IO;
	} else if (rc != NBG_OK) {
		print_ledger_error(in, err);
		x = nbg_code_exit(rc);
	}
	if (x != NBG_EXIT_OK)
		cli_out_discard(o);
	else
		x = cli_out_commit(o);
	return x;
}

/* FILE re-emitted from its own ledger: parsed without SHA-256 (the
 * re-emission computes the one it needs while writing). */
static int reemit_own(const char *in, const char *out, int readback)
{
	nbg_parse_options po = { .size = sizeof(po),
				 .flags = NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256 };
	nbg_reemit_info info = { .size = sizeof(info) };
	cli_loaded ld;
	nbg_error err;
	nbg_code rc = NBG_OK;
	unsigned flags;
	cli_out o;
	int x = cli_load(in, &po, &ld);

	if (x != NBG_EXIT_OK) {
		cli_print_error(in, &ld);
		cli_loaded_free(&ld);
		return x;
	}
	if ((x = reemit_open(out, readback, &o, &flags)) == NBG_EXIT_OK) {
		rc = nbg_reemit_model(ld.model, o.fd, flags, &info, &err);
		x = reemit_end(in, cli_input_shrank(in, &ld.map), rc, &err, &o);
		if (x == NBG_EXIT_OK)
			print_reemitted(in, &o, info.bytes, info.ranges, info.sha256);
		cli_out_free(&o);
	}
	cli_loaded_free(&ld);
	return x;
}

/* FILE re-emitted after the check against the fingerprints of a ledger
 * document: FILE need not even parse, it only has to be byte for byte what
 * the ledger was taken from. */
static int reemit_with(const char *in, const char *out, const char *ledger_doc, int readback)
{
	nbg_mapping map;
	nbg_ledger *l = NULL;
	nbg_error err;
	unsigned flags;
	cli_out o;
	int x;

	if ((x = read_ledger_doc(ledger_doc, &l)) != NBG_EXIT_OK)
		return x;
	if (cli_input_open(in, &map, &err) != NBG_OK) {
		fprintf(stderr, "nbg: %s\n", err.message);
		nbg_ledger_free(l);
		return nbg_code_exit(err.code);
	}
	if ((x = reemit_open(out, readback, &o, &flags)) == NBG_EXIT_OK) {
		nbg_code rc = nbg_reemit_write(l, map.data, map.size, o.fd, flags, &err);
		x = reemit_end(in, cli_input_shrank(in, &map), rc, &err, &o);
		if (x == NBG_EXIT_OK)
			print_reemitted(in, &o, nbg_ledger_file_size(l), nbg_ledger_range_count(l),
					nbg_ledger_file_sha256(l));
		cli_out_free(&o);
	}
	nbg_ledger_free(l);
	cli_input_close(&map);
	return x;
}

int cli_cmd_reemit(int argc, char **argv)
{
	cli_reemit_opts o = { 0 };
	const char **ops, *in, *out;
	int n, x = cli_parse_operands("reemit", argc, argv, &o, &ops, &n);

	if (x == NBG_EXIT_OK && n != 2)
		x = n > 2 ? cli_usage("reemit", "FILE and OUT only; also got '%s'", cli_esc(ops[2]))
			  : cli_usage("reemit", "needs FILE and OUT (- for standard output)");
	in = x == NBG_EXIT_OK ? ops[0] : NULL;
	out = x == NBG_EXIT_OK ? ops[1] : NULL;
	free(ops);
	if (x != NBG_EXIT_OK)
		return x;
	if (cli_out_is_stdout(out) && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "nbg reemit: standard output is a terminal, and an NBG is binary: "
				"redirect it (nbg reemit FILE - > OUT.nb) or name OUT\n");
		return NBG_EXIT_USAGE;
	}
	return o.ledger ? reemit_with(in, out, o.ledger, !o.no_readback)
			: reemit_own(in, out, !o.no_readback);
}

/* Where `nbg map` draws input `in`: `svg` itself, or inside the directory
 * `svg` the input's name with .nb replaced by (or .svg appended). */
static char *map_target(const char *in, const char *svg, int into_dir)
{
	const char *base = strrchr(in, '/');
	size_t n, cap;
	char *t;

	if (!into_dir)
		return strdup(svg);
	base = cli_is_stdio(in) ? "stdin" : base ? base + 1 : in;
	n = strlen(base);
	if (n > 3 && cli_has_suffix(base, ".nb"))
		n -= 3;
	cap = strlen(svg) + n + 6;
	t = malloc(cap);
	if (t)
		snprintf(t, cap, "%s/%.*s.svg", svg, (int)n, base);
	return t;
}

static int map_one(const char *in, const char *out, const char *title)
{
	const char *base = strrchr(in, '/');
	cli_loaded ld;
	nbg_decoded *dec;
	const nbg_ledger *l;
	cli_out o;
	int x = load_ledger(in, &ld, &dec, &l);

	if (!title)
		title = base ? base + 1 : in;
	if (x == NBG_EXIT_OK && (x = cli_out_open(&o, "map", out, CLI_OUT_STDOUT)) == NBG_EXIT_OK) {
		char *doc = nbg_ledger_svg(l, title);
		if (!doc) {
			fprintf(stderr, "nbg map: out of memory drawing the map\n");
			cli_out_discard(&o);
			x = NBG_EXIT_IO;
		} else {
			cli_out_write(&o, doc, strlen(doc));
			x = cli_out_commit(&o);
		}
		free(doc);
		cli_out_free(&o);
	}
	nbg_decoded_free(dec);
	cli_loaded_free(&ld);
	return x;
}

/* Two inputs that would be drawn into the same file: usage error. */
static int map_targets_clash(char **targets, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (!strcmp(targets[i], targets[j])) {
				fprintf(stderr, "nbg map: two inputs would both be drawn into %s; "
						"map them one at a time\n", targets[i]);
				return 1;
			}
	return 0;
}

int cli_cmd_map(int argc, char **argv)
{
	cli_map_opts o = { 0 };
	const char **in, *svg;
	char **targets = NULL;
	int n, x, into_dir;
	struct stat st;

	x = cli_parse_operands("map", argc, argv, &o, &in, &n);
	if (x != NBG_EXIT_OK)
		goto done;
	x = NBG_EXIT_USAGE;
	if (o.png) {
		fprintf(stderr, "nbg map: PNG output is not built in; convert the SVG "
				"with any SVG viewer or converter (doc/ledger.md)\n");
		goto done;
	}
	if (!n) {
		cli_usage("map", "no FILE given");
		goto done;
	}
	if (!(svg = o.svg)) {
		cli_usage("map", "--svg is required: --svg OUT.svg (- for standard output), or "
				 "--svg DIR for several files");
		goto done;
	}
	if (!(targets = calloc((size_t)n, sizeof(*targets)))) {
		fprintf(stderr, "nbg map: out of memory\n");
		x = NBG_EXIT_IO;
		goto done;
	}
	into_dir = !cli_is_stdio(svg) && stat(svg, &st) == 0 && S_ISDIR(st.st_mode);
	if (n > 1 && !into_dir) {
		fprintf(stderr, "nbg map: several inputs need --svg DIR, an existing directory "
				"(each drawn into DIR/NAME.svg); '%s' is not one\n", cli_esc(svg));
		goto done;
	}
	for (int i = 0; i < n; i++)
		if (!(targets[i] = map_target(in[i], svg, into_dir))) {
			fprintf(stderr, "nbg map: out of memory\n");
			x = NBG_EXIT_IO;
			goto done;
		}
	if (map_targets_clash(targets, n))
		goto done;
	x = NBG_EXIT_OK;
	for (int i = 0; i < n; i++)
		x = cli_exit_worst(x, map_one(in[i], targets[i], o.title));
done:
	for (int i = 0; targets && i < n; i++)
		free(targets[i]);
	free(targets);
	free(in);
	return x;
}
