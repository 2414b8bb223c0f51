/*
 * commands.c - the one table of nbg's commands and options.  The top-level
 * help, `nbg COMMAND --help`, `nbg help COMMAND`, the man page nbg(1) and
 * the bash completion are all printed from it (doc/nbg.1 and
 * completion/nbg are generated files, checked by tests/test_codes_doc.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_graph.h"
#include "cmd_ledger.h"
#include "cmd_run.h"
#include "cmd_tensor.h"

#define OPT_MAX 24

typedef struct option_doc {
	const char *name; /* "--json" */
	const char *arg;  /* "N", or NULL for a flag */
	const char *help;
} option_doc;

typedef struct command_doc {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *operands; /* "FILE...", shown after the options */
	const char *summary;  /* one line */
	const char *text;     /* a paragraph for --help and the man page */
	option_doc options[OPT_MAX];
} command_doc;

static const command_doc commands[] = {
	{ "inspect", nbg_cmd_inspect, "FILE...", "decode and validate files: human or JSON report",
	  "Decodes every structure of an NBG file (v1 or v2), checks every rule and checksum, "
	  "and prints the report: header, inputs and outputs, sections, notes and a summary "
	  "of the graph.  The table options (and --memory: the video and system memory a "
	  "runtime needs, per figure with its rule, input / memory-pool sharing, the "
	  "largest layers) add their tables after the report; --only "
	  "prints the tables alone.  Several files give one report each, in order, each "
	  "headed by its name (with --json, one array); the exit code is the worst.  "
	  "--format meta|vpm|jevois prints the inputs and outputs as ACUITY's "
	  "nbg_meta.json, vpm_run's lines or JeVois-Pro tensor specs (doc/export.md).  "
	  "--expect-target fails a file compiled for another target (target-mismatch, "
	  "exit 1) before it is parsed; VALUE is a number, NAME one that nbg targets "
	  "lists.  FILE - is standard input.  Exit 1 when a file is not a valid NBG.",
	  { { "--json", NULL, "one JSON document (an array for several files)" },
	    { "--layers", NULL, "add the layer table" },
	    { "--operations", NULL, "add the operation table and SH/SW/hardware-init records" },
	    { "--patches", NULL, "add the patch table" },
	    { "--commands", NULL, "add what each NN and TP operation computes" },
	    { "--memory", NULL, "add the memory a runtime needs, figure by figure" },
	    { "--only", NULL, "the tables asked for without the report" },
	    { "--format", "meta|vpm|jevois",
	      "only the I/O records, as other tools read them" },
	    { "--expect-target", "VALUE|NAME",
	      "fail unless compiled for this target" } } },
	{ "verify", nbg_cmd_verify, "FILE...", "integrity check, one line per file",
	  "Checks structure and every checksum the format carries (section CRCs, the "
	  "header's file checksum, the v1 nbg_crc_sum where its version's rule is known) "
	  "and nothing else; one line per file, every mismatching checksum listed, and "
	  "in brackets what proved the bytes: \"verified: ...\" when checksums matched, "
	  "\"structure only: ...\" when the version carries no checksum, \"checksum "
	  "present, algorithm unknown: not checked\" otherwise.  --sha256-expect and "
	  "--manifest verify any version by its whole-file SHA-256.  FILE - is standard "
	  "input.  Exit 1 when any file fails.",
	  { { "--quiet", NULL, "no line for a file that passes (also -q)" },
	    { "--status", NULL, "print nothing; the exit code says it" },
	    { "--sha256", NULL, "also compute the whole-file SHA-256 and print it on the line" },
	    { "--sha256-expect", "HEX", "fail unless the file's SHA-256 is HEX (one FILE)" },
	    { "--manifest", "FILE",
	      "fail unless each file's SHA-256 is the one this sha256sum manifest lists; "
	      "with no FILE operand, every file it lists" },
	    { "--require-checksum", NULL,
	      "fail a file that no checksum (in the file or expected) proved" },
	    { "--expect-target", "VALUE|NAME",
	      "fail unless compiled for this target" } } },
	{ "targets", nbg_cmd_targets, "", "the known NPU targets: value, configuration, SoC",
	  "Lists the header target values that public sources name: the VeriSilicon "
	  "configuration name and the SoC or board where a source states it (unknown "
	  "otherwise).  inspect shows the same names beside a file's target.",
	  { { "--json", NULL, "as a JSON array" } } },
	{ "fields", nbg_cmd_fields, "", "the field map: offsets, keys, evidence codes",
	  "Prints every field nbgkit decodes: structure, offset, width, public name, parser "
	  "key and the evidence behind it.",
	  { { "--json", NULL, "as a JSON array" } } },
	{ "codes", nbg_cmd_codes, "", "every error code, its exit code and the rule behind it",
	  "Prints the stable error codes, the exit code each one gives and the rule it "
	  "stands for.",
	  { { "--markdown", NULL, "as a Markdown table" } } },
	{ "diff", nbg_cmd_diff, "A B", "what changed between two files, and whether it is explained",
	  "Compares two NBG files field by field and owner range by owner range, locates "
	  "each changed byte inside its structure, and tests whether B is exactly A with "
	  "dynamic-I/O payloads substituted (in memory; nothing is written).  The summary "
	  "comes first.  Exit as cmp: 0 identical, 1 different, 2 trouble (usage, a file "
	  "unreadable or invalid, a failed write); a file whose only failures are its "
	  "checksums is compared.",
	  { { "--json", NULL, "one JSON document instead of text" } } },
	{ "corpus", nbg_cmd_corpus, "PATH...", "invariants across many files, one record each",
	  "Walks files, directories (for *.nb) and sha256sum manifests, measures every file "
	  "on N threads and aggregates the field map's corpus tables: families, versions, "
	  "targets, section sets, value ranges, failures by code.  The --json document is a "
	  "part that --merge combines with others into what one run over all their files "
	  "gives.  Exit 1 when a file is invalid, 3 when one cannot be read.",
	  { { "--json", NULL, "one JSON document (a mergeable part) instead of text" },
	    { "--quiet", NULL, "no line per file and no progress: only the report" },
	    { "--jobs", "N", "measure files on N threads (default: the CPUs)" },
	    { "--records", "FILE", "one JSON line per file (- for standard output)" },
	    { "--write-manifest", "FILE", "a sha256sum manifest of the files measured" },
	    { "--follow", NULL, "follow symbolic links to directories" },
	    { "--merge", NULL, "combine parts (PART.json...) written by --json" } } },
	{ "ledger", nbg_cmd_ledger, "FILE...", "who owns every byte: class, owner, SHA-256",
	  "Splits a valid file into owner ranges that tile it with no gap and no overlap, "
	  "each with its class, owner and SHA-256, plus the views that own no bytes.  "
	  "Several files give one ledger each (with --json, one array).",
	  { { "--json", NULL, "the ledger document (input of reemit --ledger)" } } },
	{ "reemit", nbg_cmd_reemit, "FILE OUT", "rewrite FILE from its ledger, byte-identical",
	  "Writes OUT from the ledger's ranges after every range and the whole output hash "
	  "to what the ledger recorded; OUT appears complete or not at all (OUT - is "
	  "standard output, never a terminal) and is read back from the device before it "
	  "replaces anything.  A changed byte is refused (semantic-change-refused, exit 1).",
	  { { "--ledger", "L.json", "check against a ledger saved from the original" },
	    { "--no-readback", NULL, "skip reading OUT back from the device (fsync and the "
				     "write's checks stay)" } } },
	{ "map", nbg_cmd_map, "FILE...", "a picture of the file's owner ranges (SVG)",
	  "Draws the ledger: one band to scale, one log-scaled band where small structures "
	  "stay visible, colored by class, labeled by owner.  One FILE: --svg OUT (- for "
	  "standard output).  Several: --svg DIR, an existing directory, where each is drawn "
	  "into NAME.svg (NAME.nb's name).",
	  { { "--svg", "OUT.svg|DIR", "where to write the picture (required)" },
	    { "--title", "TEXT", "the picture's title" },
	    { "--png", NULL, "refused: convert the SVG with any converter" } } },
	{ "graph", nbg_cmd_graph, "FILE", "the network the NN and TP commands compute (DOT, SVG)",
	  "Draws the recovered network: layers as boxes with their operation types and shapes, "
	  "edges from the chained images.  DOT on standard output by default; SVG through "
	  "Graphviz's dot program.  OUT - is standard output.",
	  { { "--dot", "OUT.dot", "write the DOT document to OUT.dot" },
	    { "--svg", "OUT.svg", "draw it with Graphviz's dot into OUT.svg" },
	    { "--title", "TEXT", "the picture's title" } } },
	{ "probe", nbg_cmd_probe, "", "which NPU device and runtime this machine has",
	  "Looks for the NPU device nodes and, for each vendor runtime (libnnsdk, VIPLite 2.x "
	  "libNBGlinker.so, VIPLite 1.x libVIPlite.so), whether its library loads, its version, "
	  "the entry points resolved, vip_init's result, devices, cores and CID; then names the "
	  "runtime nbg run would choose.  Exit 4 when that runtime is not usable.",
	  { { "--json", NULL, "one JSON document instead of text" },
	    { "--device-root", "DIR", "look for device nodes under DIR instead of /dev" },
	    { "--nnsdk", "PATH", "the libnnsdk.so to load" },
	    { "--viplite", "PATH", "the one VIPLite library to load instead of both defaults" },
	    { "--no-isolate", NULL, "call the vendor libraries in this process" } } },
	{ "run", nbg_cmd_run, "MODEL", "run a model on the NPU through the vendor runtime",
	  "Validates the model, checks its target against the device, runs it through NNSDK "
	  "or VIPLite (vendor calls in a child process), writes output_<i>.bin, "
	  "output_<i>.npy and summary.json, and compares goldens.",
	  { { "--input", "FILE...", "one input per NBG input: raw, .npy or .tensor" },
	    { "--output-dir", "DIR", "where outputs and summary.json go (required)" },
	    { "--loops", "N", "run N times (timings, output stability)" },
	    { "--golden", "FILE...", "expected outputs, compared in float" },
	    { "--tolerance", "X", "largest accepted difference from a golden" },
	    { "--top", "N", "print the N largest values of each output" },
	    { "--backend", "auto|nnsdk|viplite", "which vendor runtime" },
	    { "--lib", "PATH", "the chosen backend's library" },
	    { "--nnsdk", "PATH", "the libnnsdk.so to load when libnnsdk runs (never VIPLite)" },
	    { "--force-target", NULL, "run even when the model's target is not the device's" },
	    { "--device-root", "DIR", "look for device nodes under DIR instead of /dev" },
	    { "--timeout", "SECONDS", "give up on a vendor call after this long" },
	    { "--float32-outputs", NULL, "ask the runtime for float32 outputs" },
	    { "--input-kind", "N", "the NNSDK input descriptor kind" },
	    { "--no-isolate", NULL, "call the vendor library in this process" },
	    { "--sample", "sample.txt", "read inputs, goldens and outputs from vpm_run's file" },
	    { "--max-output", "SIZE", "most bytes the run may write (default 1G; K M G T, none)" },
	    { "--max-memory", "SIZE", "most bytes of tensors it may hold (default 2G; none)" } } },
	{ "tensor", nbg_cmd_tensor, "FILE", "convert tensors with a model's I/O record",
	  "Converts between NumPy .npy, vpm_run's .tensor text and raw bytes with one of the "
	  "model's input or output records: .npy or text to the exact bytes the record needs "
	  "(quantized with its own parameters), or raw outputs to float32 .npy (outermost "
	  "dimension first) or text.  Without --input or --output it lists the records.",
	  { { "--model", "MODEL.nb", "the model whose records describe the tensor (required)" },
	    { "--input", "N", "convert with input record N" },
	    { "--output", "N", "convert with output record N" },
	    { "--out", "OUT", "where to write the result (also -o), all or nothing" },
	    { "--from", "raw|npy|text", "how FILE is read, instead of by its extension" },
	    { "--to", "raw|npy|text", "how OUT is written, instead of by its extension" },
	    { "--keep-dtype", NULL, ".npy in the record's own dtype instead of float32" } } },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const command_doc *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static const option_doc *find_option(const command_doc *c, const char *name, size_t len)
{
	for (const option_doc *o = c->options; o->name; o++)
		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			return o;
	return NULL;
}

/*
 * The conventions every command shares, applied before it parses: --help or
 * -h anywhere before `--` prints its help; `--opt=value` becomes `--opt
 * value` for a documented option that takes a value; `--` ends the options,
 * and an operand after it that starts with '-' (other than "-" itself, which
 * means standard input or output) is passed as "./NAME", the same file,
 * which no parser takes for an option.
 */
static void free_normalized(char **v, int argc)
{
	for (char **p = v + (size_t)argc * 2 + 1; *p; p++)
		free(*p);
	free(v);
}

static char **normalize(const command_doc *c, int argc, char **argv, int *out_argc)
{
	/* Each argument becomes at most two; after the argv[] copy comes the
	 * list (NULL-terminated) of the "./NAME" strings allocated here. */
	char **v = calloc((size_t)argc * 3 + 2, sizeof(*v));
	char **owned;
	int n = 0, ended = 0;

	if (!v)
		return NULL;
	owned = v + (size_t)argc * 2 + 1;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *eq;
		const option_doc *o;
		if (i > 0 && !ended && !strcmp(a, "--")) {
			ended = 1;
			continue;
		}
		if (i > 0 && ended && a[0] == '-' && a[1]) {
			size_t len = strlen(a) + 3;
			char *p = malloc(len);
			if (!p)
				goto oom;
			snprintf(p, len, "./%s", a);
			*owned++ = p;
			v[n++] = p;
			continue;
		}
		if (i > 0 && !ended && !strncmp(a, "--", 2) && (eq = strchr(a, '=')) &&
		    (o = find_option(c, a, (size_t)(eq - a))) && o->arg) {
			v[n++] = (char *)o->name;
			v[n++] = (char *)(eq + 1);
			continue;
		}
		v[n++] = (char *)a;
	}
	*out_argc = n;
	return v;
oom:
	free_normalized(v, argc);
	return NULL;
}

int nbg_cli_dispatch(int argc, char **argv, int *handled)
{
	const command_doc *c = find(argv[0]);
	char **v;
	int n, rc;

	*handled = c != NULL;
	if (!c)
		return NBG_EXIT_USAGE;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return nbg_cli_help(stdout, c->name);
	v = normalize(c, argc, argv, &n);
	if (!v) {
		fprintf(stderr, "nbg %s: out of memory\n", c->name);
		return NBG_EXIT_IO;
	}
	rc = c->run(n, v);
	free_normalized(v, argc);
	return rc;
}

static void wrap(FILE *out, const char *text, const char *first, const char *indent);

/* "nbg NAME [--opt ARG]... OPERANDS", wrapped, continuation lines indented. */
static void synopsis(FILE *out, const command_doc *c, const char *lead)
{
	char line[2048], cont[64];
	size_t n = (size_t)snprintf(line, sizeof(line), "nbg %s", c->name);

	for (const option_doc *o = c->options; o->name && n < sizeof(line); o++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, o->arg ? " [%s\x01%s]" : " [%s]",
				      o->name, o->arg);
	if (*c->operands && n < sizeof(line))
		snprintf(line + n, sizeof(line) - n, " %s", c->operands);
	snprintf(cont, sizeof(cont), "%*s", (int)(strlen(lead) + strlen(c->name) + 5), "");
	wrap(out, line, lead, cont);
}

static void options(FILE *out, const command_doc *c, const char *indent)
{
	for (const option_doc *o = c->options; o->name; o++) {
		char head[64];
		snprintf(head, sizeof(head), "%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		fprintf(out, "%s%-28s %s\n", indent, head, o->help);
	}
	fprintf(out, "%s%-28s %s\n", indent, "-h, --help", "this help");
}

void nbg_cli_usage(FILE *out)
{
	fputs("usage: nbg COMMAND [OPTIONS] [--] FILE...\n"
	      "       nbg help [COMMAND]    nbg COMMAND --help    nbg version\n"
	      "\n"
	      "Inspect, verify and run VeriSilicon NPU compiled models (NBG, *.nb).\n"
	      "\ncommands:\n",
	      out);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fputs("\noptions:\n", out);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		fputc('\n', out);
		synopsis(out, &commands[i], "  ");
		options(out, &commands[i], "      ");
	}
	fputs("\nexit codes: 0 ok, 1 invalid file or failed check, 2 usage, 3 cannot read or\n"
	      "write a file, 4 NPU runtime or device not available (nbg codes lists the code\n"
	      "behind each); diff as cmp: 0 identical, 1 different, 2 trouble.\n"
	      "Manual: man nbg; documentation: README.md and doc/.\n",
	      out);
}

/* A paragraph wrapped at 78 columns: the first line after `first`, the
 * others after `indent`.  \x01 is a space that never breaks. */
static void wrap(FILE *out, const char *text, const char *first, const char *indent)
{
	size_t col = 0;
	int line = 0;

	while (*text) {
		size_t n = strcspn(text, " ");
		if (col && col + 1 + n > 78) {
			fputc('\n', out);
			col = 0;
		}
		if (!col) {
			fputs(line++ ? indent : first, out);
			col = strlen(line > 1 ? indent : first);
		} else {
			fputc(' ', out);
			col++;
		}
		for (size_t k = 0; k < n; k++)
			fputc(text[k] == '\x01' ? ' ' : text[k], out);
		col += n;
		text += n;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

int nbg_cli_help(FILE *out, const char *name)
{
	const command_doc *c = find(name);

	if (!c) {
		fprintf(stderr, "nbg: unknown command '%s'\n", nbg_esc(name));
		return NBG_EXIT_USAGE;
	}
	synopsis(out, c, "usage: ");
	fputc('\n', out);
	wrap(out, c->text, "", "");
	fputs("\noptions:\n", out);
	options(out, c, "  ");
	return NBG_EXIT_OK;
}

/* roff with every backslash and leading dot or quote made literal. */
static void roff(FILE *out, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", out);
	for (; *s; s++)
		if (*s == '\\')
			fputs("\\e", out);
		else if (*s == '-')
			fputs("\\-", out);
		else
			fputc(*s, out);
}

static void man_command(FILE *out, const command_doc *c)
{
	fprintf(out, ".SS \"nbg %s\"\n.B nbg %s\n", c->name, c->name);
	for (const option_doc *o = c->options; o->name; o++) {
		fputs("[\\fB", out);
		roff(out, o->name);
		fputs("\\fR", out);
		if (o->arg) {
			fputs(" \\fI", out);
			roff(out, o->arg);
			fputs("\\fR", out);
		}
		fputs("]\n", out);
	}
	if (*c->operands) {
		fputs(".I ", out);
		roff(out, c->operands);
		fputc('\n', out);
	}
	fputs(".PP\n", out);
	roff(out, c->text);
	fputc('\n', out);
	for (const option_doc *o = c->options; o->name; o++) {
		fputs(".TP\n.B ", out);
		roff(out, o->name);
		if (o->arg) {
			fputs(" \\fI", out);
			roff(out, o->arg);
			fputs("\\fR", out);
		}
		fputc('\n', out);
		roff(out, o->help);
		fputc('\n', out);
	}
}

void nbg_cli_man(FILE *out)
{
	fprintf(out, ".\\\" nbg(1), generated by `nbg help --man` from programs/commands.c\n"
		     ".TH NBG 1 \"\" \"nbgkit %s\" \"User Commands\"\n"
		     ".SH NAME\nnbg \\- inspect, verify and run VeriSilicon NPU compiled models (NBG)\n"
		     ".SH SYNOPSIS\n.B nbg\n.I COMMAND\n[\\fIOPTIONS\\fR] [\\fB\\-\\-\\fR] "
		     "\\fIFILE\\fR...\n.br\n.B nbg help\n[\\fICOMMAND\\fR]\n"
		     ".SH DESCRIPTION\nnbg reads NBG files (\"Network Binary Graph\", magic VPMN), "
		     "the compiled models that VeriSilicon VIP NPUs run: it checks each file's "
		     "integrity with the checksums its version carries (and says when there are "
		     "none), decodes what it can field by field, gives every byte an owner (the "
		     "ledger says which bytes are decoded and which are kept as fingerprinted "
		     "opaque data), compares files and runs a model through the vendor runtime.\n"
		     "Every command answers \\fB\\-\\-help\\fR; \\fB\\-\\-\\fR ends the options; "
		     "\\fB\\-\\-opt=value\\fR is \\fB\\-\\-opt value\\fR.\n"
		     ".PP\nA \\fIFILE\\fR of \\fB\\-\\fR is standard input, read into memory, at "
		     "most \\fBNBG_MAX_STDIN\\fR bytes (default 1G; K, M, G, T suffixes), once per "
		     "command and never from a terminal; an \\fIOUT\\fR of \\fB\\-\\fR is "
		     "standard output.  Commands that take \\fIFILE\\fR... treat each file in "
		     "turn and exit with the worst status; with \\fB\\-\\-json\\fR they print "
		     "one array.\n"
		     ".SH COMMANDS\n",
		nbg_version_string());
	for (size_t i = 0; i < NCOMMANDS; i++)
		man_command(out, &commands[i]);
	fputs(".SH \"EXIT STATUS\"\n.TP\n0\nsuccess\n.TP\n1\nthe file is not a valid NBG, or a "
	      "check failed\n.TP\n2\na usage error\n.TP\n3\n"
	      "an input cannot be read or an output written\n.TP\n4\nthe NPU runtime or device "
	      "is not available\n.PP\n\\fBnbg diff\\fR exits as \\fBcmp\\fR(1): 0 the files are "
	      "identical, 1 they differ, 2 trouble (a usage error, a file that cannot be read "
	      "or is not a valid NBG, a report that cannot be written).\n.SH \"ERROR CODES\"\nEvery failure has a stable code; the "
	      "exit status follows from it.\n",
	      out);
	for (int code = 1; code < NBG_E__COUNT; code++) {
		fputs(".TP\n.B ", out);
		roff(out, nbg_code_name((nbg_code)code));
		fprintf(out, "\n(exit %d) ", nbg_code_exit((nbg_code)code));
		roff(out, nbg_code_text((nbg_code)code));
		fputc('\n', out);
	}
	fputs(".SH ENVIRONMENT\nByte counts take an optional K, M, G or T suffix; \\fBnone\\fR "
	      "lifts the limit.\n.TP\n.B NBG_MAX_FILE_SIZE\nlargest input file read (default "
	      "64G); larger files fail with work\\-limit before any byte is hashed\n.TP\n"
	      ".B NBG_MAX_UNDESCRIBED\nmost bytes of a file that no header, directory or "
	      "section owns (default 256M)\n.TP\n.B NBG_MAX_STDIN\nmost bytes read from "
	      "standard input for the file name \\- (default 1G)\n",
	      out);
	fputs(".SH \"SEE ALSO\"\nThe nbgkit documentation: README.md and doc/ in its source "
	      "tree.\n",
	      out);
}

void nbg_cli_completion(FILE *out)
{
	fputs("# bash completion for nbg, generated by `nbg help --completion` from\n"
	      "# programs/commands.c: commands, each command's options, *.nb files.\n"
	      "_nbg()\n{\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} opts\n"
	      "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"",
	      out);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "%s ", commands[i].name);
	fputs("help version\" -- \"$cur\"))\n\t\treturn\n\tfi\n\tcase $cmd in\n", out);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		fprintf(out, "\t%s) opts=\"", commands[i].name);
		for (const option_doc *o = commands[i].options; o->name; o++)
			fprintf(out, "%s ", o->name);
		fputs("--help\" ;;\n", out);
	}
	fputs("\thelp) COMPREPLY=($(compgen -W \"", out);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "%s%s", i ? " " : "", commands[i].name);
	fputs("\" -- \"$cur\")); return ;;\n"
	      "\t*) return ;;\n\tesac\n"
	      "\tif [[ $cur == -* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "\telse\n"
	      "\t\tCOMPREPLY=($(compgen -f -X '!*.nb' -- \"$cur\") $(compgen -d -- \"$cur\"))\n"
	      "\tfi\n}\ncomplete -o filenames -F _nbg nbg\n",
	      out);
}

void nbg_cli_option_list(FILE *out)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		for (const option_doc *o = commands[i].options; o->name; o++)
			fprintf(out, "%s %s\n", commands[i].name, o->name);
}
