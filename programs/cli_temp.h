/*
 * cli_temp.h - the temporaries nbg removes when SIGINT, SIGTERM or SIGHUP
 * ends it (cli_temp.c): every temporary and scratch file the one output
 * writer (cli_out.c) makes, and the directories it stages outputs in.
 */
#ifndef NBG_CLI_TEMP_H
#define NBG_CLI_TEMP_H

/* Installs the handler that removes the registered temporaries, once, first
 * thing in main and before nbg_install_signal_guards(), whose handler (it
 * ends the runtime's child processes) then runs first and passes the signal
 * on to this one.  A signal ignored when it is called stays ignored.
 * Returns 0, or -1 when a handler could not be installed. */
int cli_temp_guard(void);

/* Registers a temporary file, or a temporary directory of files to be
 * emptied and removed, while it exists; returns the slot to give
 * cli_temp_unregister once the file is renamed or removed, or -1 (then it
 * is not removed on a signal).  Up to 4096 at once.  The caller blocks the
 * three signals between creating the file and registering it. */
int cli_temp_register(const char *path);
void cli_temp_unregister(int slot);

#endif
