/*
 * commands.c - running a command of the table (cli_table.c), and printing
 * the table: the top-level help, `nbg COMMAND --help`, `nbg help COMMAND`,
 * the man page nbg(1) and the bash completion (doc/nbg.1 and completion/nbg
 * are generated files, checked by tests/check_cli_help.py).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"
#include "cmd_graph.h"
#include "cmd_ledger.h"
#include "cmd_run.h"
#include "cmd_tensor.h"
#include "nbg/report.h"

static int help(int argc, char **argv);
static int version(int argc, char **argv);

/* What runs each command of the table (cli_table.c), then the words nbg
 * answers besides (commands of no table entry: no options, no --help). */
static const struct runner {
	const char *name;
	int (*run)(int argc, char **argv);
	int cmp; /* 1: exits as cmp, any trouble (a failed write included) 2 */
} runners[] = {
	{ "inspect", cli_cmd_inspect, 0 },
	{ "verify", cli_cmd_verify, 0 },
	{ "targets", cli_cmd_targets, 0 },
	{ "fields", cli_cmd_fields, 0 },
	{ "codes", cli_cmd_codes, 0 },
	{ "diff", cli_cmd_diff, 1 },
	{ "compare", cli_cmd_compare, 1 },
	{ "corpus", cli_cmd_corpus, 0 },
	{ "ledger", cli_cmd_ledger, 0 },
	{ "reemit", cli_cmd_reemit, 0 },
	{ "map", cli_cmd_map, 0 },
	{ "graph", cli_cmd_graph, 0 },
	{ "probe", cli_cmd_probe, 0 },
	{ "run", cli_cmd_run, 0 },
	{ "tensor", cli_cmd_tensor, 0 },
	{ "weights", cli_cmd_weights, 0 },
	{ "help", help, 0 },
	{ "--help", help, 0 },
	{ "-h", help, 0 },
	{ "version", version, 0 },
	{ "--version", version, 0 },
};

static const struct runner *runner_of(const char *name)
{
	long i = CLI_LOOKUP(runners, name);
	return i < 0 ? NULL : &runners[i];
}

/*
 * The conventions every command shares, applied before it parses: --help or
 * -h anywhere before `--` prints its help; `--opt=value` becomes `--opt
 * value` for a documented option that takes a value; `--` ends the options,
 * and an operand after it that starts with '-' (other than "-" itself, which
 * means standard input or output) is passed as "./NAME", the same file,
 * which no parser takes for an option.
 */
/* What an argument is to these conventions: `--`, a request for help, or
 * anything else. */
enum { ARG_OTHER, ARG_END, ARG_HELP };
static int shared_arg(const char *a)
{
	static const struct {
		const char *name;
		int kind;
	} words[] = { { "--", ARG_END }, { "--help", ARG_HELP }, { "-h", ARG_HELP } };
	long k = CLI_LOOKUP(words, a);

	return k < 0 ? ARG_OTHER : words[k].kind;
}

static void free_normalized(char **v, int argc)
{
	for (char **p = v + (size_t)argc * 2 + 1; *p; p++)
		free(*p);
	free(v);
}

static char **normalize(const cli_command *c, int argc, char **argv, int *out_argc)
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
		const cli_option *o;
		if (i > 0 && !ended && shared_arg(a) == ARG_END) {
			ended = 1;
			continue;
		}
		if (i > 0 && ended && a[0] == '-' && !cli_is_stdio(a)) {
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
		    (o = cli_option_find(c->options, a, (size_t)(eq - a))) && o->arg) {
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

/* Runs command argv[0] of the table (or a word of runners[]). */
static int dispatch(const struct runner *r, int argc, char **argv)
{
	const cli_command *c = cli_command_find(r->name);
	char **v;
	int n, rc;

	if (!c)
		return r->run(argc, argv);
	for (int i = 1; i < argc && shared_arg(argv[i]) != ARG_END; i++)
		if (shared_arg(argv[i]) == ARG_HELP)
			return cli_help(stdout, c->name);
	v = normalize(c, argc, argv, &n);
	if (!v) {
		fprintf(stderr, "nbg %s: out of memory\n", c->name);
		return NBG_EXIT_IO;
	}
	rc = r->run(n, v);
	free_normalized(v, argc);
	return rc;
}

int cli_main(int argc, char **argv)
{
	const struct runner *r = argc > 1 ? runner_of(argv[1]) : NULL;
	int rc;

	if (argc < 2) {
		cli_commands_usage(stderr);
		rc = NBG_EXIT_USAGE;
	} else if (!r) {
		fprintf(stderr, "nbg: unknown command '%s'\n\n", cli_esc(argv[1]));
		cli_commands_usage(stderr);
		rc = NBG_EXIT_USAGE;
	} else {
		rc = dispatch(r, argc - 1, argv + 1);
	}
	rc = cli_finish_stdout(rc);
	return rc == NBG_EXIT_IO && r && r->cmp ? NBG_EXIT_USAGE : rc;
}

/* nbg help [COMMAND | --man | --completion | --options] */
static int help(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*print)(FILE *out);
	} topics[] = { { "--man", cli_man },
		       { "--completion", cli_completion },
		       { "--options", cli_option_list } };
	long t = argc == 2 ? CLI_LOOKUP(topics, argv[1]) : -1;

	if (argc < 2) {
		cli_commands_usage(stdout);
		return NBG_EXIT_OK;
	}
	if (t >= 0) {
		topics[t].print(stdout);
		return NBG_EXIT_OK;
	}
	if (argc == 2)
		return cli_help(stdout, argv[1]);
	fprintf(stderr, "usage: nbg help [COMMAND | --man | --completion | --options]\n");
	return NBG_EXIT_USAGE;
}

static int version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("nbg (nbgkit) %s\n", nbg_version_string());
	return NBG_EXIT_OK;
}


static void options(FILE *out, const cli_command *c, const char *indent)
{
	for (const cli_option *o = c->options; o->name; o++) {
		char head[64];
		snprintf(head, sizeof(head), "%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		fprintf(out, "%s%-28s %s\n", indent, head, o->help);
	}
	fprintf(out, "%s%-28s %s\n", indent, "-h, --help", "this help");
}

void cli_commands_usage(FILE *out)
{
	fputs("usage: nbg COMMAND [OPTIONS] [--] FILE...\n"
	      "       nbg help [COMMAND]    nbg COMMAND --help    nbg version\n"
	      "\n"
	      "Inspect, verify and run VeriSilicon NPU compiled models (NBG, *.nb).\n"
	      "\ncommands:\n",
	      out);
	for (size_t i = 0; i < cli_command_count(); i++)
		fprintf(out, "  %-9s %s\n", cli_command_at(i)->name, cli_command_at(i)->summary);
	fputs("\noptions:\n", out);
	for (size_t i = 0; i < cli_command_count(); i++) {
		fputc('\n', out);
		cli_synopsis(out, cli_command_at(i), "  ");
		options(out, cli_command_at(i), "      ");
	}
	fputs("\nexit codes: 0 ok, 1 invalid file or failed check, 2 usage, 3 cannot read or\n"
	      "write a file, 4 NPU runtime or device not available (nbg codes lists the code\n"
	      "behind each); diff and compare as cmp: 0 identical, 1 different, 2 trouble.\n"
	      "Manual: man nbg; documentation: README.md and doc/.\n",
	      out);
}

int cli_help(FILE *out, const char *name)
{
	const cli_command *c = cli_command_find(name);

	if (!c) {
		fprintf(stderr, "nbg: unknown command '%s'\n", cli_esc(name));
		return NBG_EXIT_USAGE;
	}
	cli_synopsis(out, c, "usage: ");
	fputc('\n', out);
	cli_wrap(out, c->text, "", "");
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

static void man_command(FILE *out, const cli_command *c)
{
	fprintf(out, ".SS \"nbg %s\"\n.B nbg %s\n", c->name, c->name);
	for (const cli_option *o = c->options; o->name; o++) {
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
	for (const cli_option *o = c->options; o->name; o++) {
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

void cli_man(FILE *out)
{
	fprintf(out, ".\\\" nbg(1), generated by `nbg help --man` from programs/cli_table.c\n"
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
	for (size_t i = 0; i < cli_command_count(); i++)
		man_command(out, cli_command_at(i));
	fputs(".SH \"EXIT STATUS\"\n.TP\n0\nsuccess\n.TP\n1\nthe file is not a valid NBG, or a "
	      "check failed\n.TP\n2\na usage error\n.TP\n3\n"
	      "an input cannot be read or an output written\n.TP\n4\nthe NPU runtime or device "
	      "is not available\n.PP\n\\fBnbg diff\\fR and \\fBnbg compare\\fR exit as \\fBcmp\\fR(1): 0 "
	      "the files are identical (the tensors equal within the tolerance), 1 they differ, 2 "
	      "trouble (a usage error, a file that cannot be read or is not a valid NBG or tensor, "
	      "a report that cannot be written).\n.SH \"ERROR CODES\"\nEvery failure has a stable code; the "
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

void cli_completion(FILE *out)
{
	fputs("# bash completion for nbg, generated by `nbg help --completion` from\n"
	      "# programs/cli_table.c: commands, each command's options, *.nb files.\n"
	      "_nbg()\n{\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} opts\n"
	      "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"",
	      out);
	for (size_t i = 0; i < cli_command_count(); i++)
		fprintf(out, "%s ", cli_command_at(i)->name);
	fputs("help version\" -- \"$cur\"))\n\t\treturn\n\tfi\n\tcase $cmd in\n", out);
	for (size_t i = 0; i < cli_command_count(); i++) {
		fprintf(out, "\t%s) opts=\"", cli_command_at(i)->name);
		for (const cli_option *o = cli_command_at(i)->options; o->name; o++)
			fprintf(out, "%s ", o->name);
		fputs("--help\" ;;\n", out);
	}
	fputs("\thelp) COMPREPLY=($(compgen -W \"", out);
	for (size_t i = 0; i < cli_command_count(); i++)
		fprintf(out, "%s%s", i ? " " : "", cli_command_at(i)->name);
	fputs("\" -- \"$cur\")); return ;;\n"
	      "\t*) return ;;\n\tesac\n"
	      "\tif [[ $cur == -* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "\telse\n"
	      "\t\tCOMPREPLY=($(compgen -f -X '!*.nb' -- \"$cur\") $(compgen -d -- \"$cur\"))\n"
	      "\tfi\n}\ncomplete -o filenames -F _nbg nbg\n",
	      out);
}

void cli_option_list(FILE *out)
{
	for (size_t i = 0; i < cli_command_count(); i++)
		for (const cli_option *o = cli_command_at(i)->options; o->name; o++)
			fprintf(out, "%s %s\n", cli_command_at(i)->name, o->name);
}
