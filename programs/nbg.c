/*
 * nbg.c - the nbg command: dispatch to subcommands.  Exit codes: 0 ok,
 * 1 invalid / checks failed, 2 usage, 3 cannot read or write, 4 NPU runtime
 * or device unavailable; diff as cmp (0 identical, 1 different, 2 trouble).
 */
#include <string.h>

#include "cli.h"

static int help(int argc, char **argv)
{
	if (argc < 2) {
		cli_commands_usage(stdout);
		return NBG_EXIT_OK;
	}
	if (argc == 2 && !strcmp(argv[1], "--man")) {
		cli_man(stdout);
		return NBG_EXIT_OK;
	}
	if (argc == 2 && !strcmp(argv[1], "--completion")) {
		cli_completion(stdout);
		return NBG_EXIT_OK;
	}
	if (argc == 2 && !strcmp(argv[1], "--options")) {
		cli_option_list(stdout);
		return NBG_EXIT_OK;
	}
	if (argc == 2)
		return cli_help(stdout, argv[1]);
	fprintf(stderr, "usage: nbg help [COMMAND | --man | --completion | --options]\n");
	return NBG_EXIT_USAGE;
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
	/* A truncated input must not kill the process; an interrupted write
	 * must not leave its temporary (doc/security.md). */
	nbg_install_signal_guards();
	if (cli_env_limits_check() != 0)
		return NBG_EXIT_USAGE;
	int rc = cli_finish_stdout(dispatch(argc, argv));
	/* nbg diff follows cmp: any trouble, a failed write included, is 2 */
	if (rc == NBG_EXIT_IO && argc > 1 && !strcmp(argv[1], "diff"))
		rc = NBG_EXIT_USAGE;
	return rc;
}

static int dispatch(int argc, char **argv)
{
	const char *cmd;
	int handled, rc;

	if (argc < 2) {
		cli_commands_usage(stderr);
		return NBG_EXIT_USAGE;
	}
	cmd = argv[1];
	rc = cli_dispatch(argc - 1, argv + 1, &handled);
	if (handled)
		return rc;
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
		return help(argc - 1, argv + 1);
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		printf("nbg (nbgkit) %s\n", nbg_version_string());
		return NBG_EXIT_OK;
	}
	fprintf(stderr, "nbg: unknown command '%s'\n\n", cli_esc(cmd));
	cli_commands_usage(stderr);
	return NBG_EXIT_USAGE;
}
