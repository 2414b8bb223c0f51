/*
 * nbg.c - the nbg command: dispatch to subcommands.  Exit codes: 0 ok,
 * 1 invalid / checks failed / differences, 2 usage, 3 cannot read or write,
 * 4 NPU runtime or device unavailable.
 */
#include <string.h>

#include "cli.h"
#include "cmd_graph.h"
#include "cmd_ledger.h"
#include "cmd_run.h"

static void usage(FILE *out)
{
	fputs("usage: nbg COMMAND [OPTIONS] FILE...\n"
	      "\n"
	      "Inspect, verify and run VeriSilicon NPU compiled models (NBG, *.nb).\n"
	      "\n"
	      "commands:\n"
	      "  inspect [--json] FILE     decode and validate one file; human or JSON report\n"
	      "                            (--commands: what each NN / TP operation computes)\n"
	      "  verify FILE...            integrity check, one line per file\n"
	      "  fields [--json]           the field map: offsets, keys, evidence codes\n"
	      "  codes [--markdown]        the failure codes and the rule each stands for\n"
	      "  diff [--json] A B         what changed between two files, by structure\n"
	      "  corpus [--json] PATH...   invariants across many files (directories walked)\n"
	      "  ledger [--json] FILE      who owns every byte: class, owner, SHA-256 per range\n"
	      "  reemit FILE OUT [--ledger L.json]   rewrite FILE from its ledger, byte-identical\n"
	      "  map FILE --svg OUT.svg    a picture of the file: owner ranges, colored by class\n"
	      "  graph FILE [--svg OUT]    the network its NN / TP commands compute (DOT; SVG\n"
	      "                            with Graphviz's dot)\n"
	      "  probe [--json]            which NPU device and backend this machine has\n"
	      "  run MODEL --input F... --output-dir DIR   run a model through libnnsdk.so\n"
	      "  help                      this text\n"
	      "  version                   the nbgkit version\n"
	      "\n"
	      "exit codes: 0 ok, 1 invalid file or failed check, 2 usage, 3 cannot read or\n"
	      "write a file, 4 NPU runtime or device not available.\n"
	      "Documentation: README.md and doc/ in the nbgkit source tree.\n",
	      out);
}

/* Every command, in the order of the help text. */
static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "inspect", nbg_cmd_inspect }, { "verify", nbg_cmd_verify },
	{ "fields", nbg_cmd_fields },   { "codes", nbg_cmd_codes },
	{ "diff", nbg_cmd_diff },       { "corpus", nbg_cmd_corpus },
	{ "ledger", nbg_cmd_ledger },   { "reemit", nbg_cmd_reemit },
	{ "map", nbg_cmd_map },         { "graph", nbg_cmd_graph },
	{ "probe", nbg_cmd_probe },
	{ "run", nbg_cmd_run },
};

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		usage(stderr);
		return NBG_EXIT_USAGE;
	}
	cmd = argv[1];
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage(stdout);
		return NBG_EXIT_OK;
	}
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		printf("nbg (nbgkit) %s\n", nbg_version_string());
		return NBG_EXIT_OK;
	}
	fprintf(stderr, "nbg: unknown command '%s'\n\n", cmd);
	usage(stderr);
	return NBG_EXIT_USAGE;
}
