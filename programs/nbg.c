/*
 * nbg.c - the nbg command: dispatch to subcommands.  Exit codes: 0 ok, 1 invalid / checks failed / differences,
 * 2 usage, 3 cannot read or write, 4 NPU runtime or device unavailable.
 */
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "cmd_run.h"

static void usage(FILE *out)
{
	fputs("usage: nbg COMMAND [OPTIONS] FILE...\n"
	      "\n"
	      "Inspect, verify and run VeriSilicon NPU compiled models (NBG, *.nb).\n"
	      "\n"
	      "commands:\n"
	      "  inspect [--json] FILE     decode and validate one file; human or JSON report\n"
	      "  verify FILE...            integrity check, one line per file\n"
	      "  fields [--json]           the field map: offsets, keys, evidence codes\n"
	      "  codes [--markdown]        the failure codes and the rule each stands for\n"
	      "  diff [--json] A B         what changed between two files, by structure\n"
	      "  corpus [--json] PATH...   invariants across many files (directories walked)\n"
	      "  ledger [--json] FILE      who owns every byte: class, owner, SHA-256 per range\n"
	      "  reemit FILE OUT [--ledger L.json]   rewrite FILE from its ledger, byte-identical\n"
	      "  map FILE --svg OUT.svg    a picture of the file: owner ranges, colored by class\n"
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

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		usage(stderr);
		return NBG_EXIT_USAGE;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "inspect"))
		return nbg_cmd_inspect(argc - 1, argv + 1);
	if (!strcmp(cmd, "verify"))
		return nbg_cmd_verify(argc - 1, argv + 1);
	if (!strcmp(cmd, "fields"))
		return nbg_cmd_fields(argc - 1, argv + 1);
	if (!strcmp(cmd, "diff"))
		return nbg_cmd_diff(argc - 1, argv + 1);
	if (!strcmp(cmd, "corpus"))
		return nbg_cmd_corpus(argc - 1, argv + 1);
	if (!strcmp(cmd, "codes"))
		return nbg_cmd_codes(argc - 1, argv + 1);
	/* @@dispatch: ledger, reemit, map (issue 5) */
#include "cmd_ledger.h" /* prototypes only; kept inside the marked block */
	if (!strcmp(cmd, "ledger"))
		return nbg_cmd_ledger(argc - 1, argv + 1);
	if (!strcmp(cmd, "reemit"))
		return nbg_cmd_reemit(argc - 1, argv + 1);
	if (!strcmp(cmd, "map"))
		return nbg_cmd_map(argc - 1, argv + 1);
	/* @@end-dispatch */
	if (!strcmp(cmd, "probe"))
		return nbg_cmd_probe(argc - 1, argv + 1);
	if (!strcmp(cmd, "run"))
		return nbg_cmd_run(argc - 1, argv + 1);
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
