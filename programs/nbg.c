/*
 * nbg.c - the nbg command; commands.c dispatches to the subcommands.  Exit
 * codes: 0 ok, 1 invalid / checks failed, 2 usage, 3 cannot read or write,
 * 4 NPU runtime or device unavailable; diff and compare as cmp (0 identical, 1
 * different, 2 trouble).
 */
#include "cli.h"
#include "cli_temp.h"

int main(int argc, char **argv)
{
	/* A truncated input must not kill the process; an interrupted write
	 * must not leave its temporary (doc/security.md).  The temporaries'
	 * handler first: the library's, installed after it, chains to it. */
	cli_temp_guard();
	nbg_install_signal_guards();
	if (cli_env_limits_check() != 0)
		return NBG_EXIT_USAGE;
	return cli_main(argc, argv);
}
