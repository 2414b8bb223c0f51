/*
 * cli.h - shared pieces of the nbg command-line tool.
 */
#ifndef NBG_CLI_H
#define NBG_CLI_H

#include <stdio.h>

#include "nbg/nbg.h"

/* A parsed input file: mapping + model, or the failure. */
typedef struct nbg_loaded {
	nbg_mapping map;
	nbg_model *model;
	nbg_error err;
	int io_failed; /* 1: the file could not be read (exit 3) */
} nbg_loaded;

/* Maps and parses `path`; returns the exit code the failure calls for (0 on success). */
int nbg_load(const char *path, const nbg_parse_options *opts, nbg_loaded *out);
void nbg_loaded_free(nbg_loaded *l);
/* Prints "nbg: PATH: code at offset N (0x..): message" to stderr. */
void nbg_print_error(const char *path, const nbg_loaded *l);
/* `path` escaped for text output (nbg_path_escape); valid until eight more
 * calls.  Every path a command prints in text goes through this. */
const char *nbg_esc(const char *path);
/* 1 when the file `path` was mapped into m and shrank since (results from
 * it must be dropped). */
int nbg_input_shrank(const char *path, const nbg_mapping *m);
/* A byte-count limit from the environment variable `name` (0: unset). */
uint64_t nbg_env_limit(const char *name);
/* Flushes and closes standard output: rc, or NBG_EXIT_IO with a message when
 * any write to it failed. */
int nbg_finish_stdout(int rc);


/* The command table (commands.c): runs argv[0] as a command, or `nbg
 * argv[0] --help`; *handled is 0 when argv[0] names no command. */
int nbg_cli_dispatch(int argc, char **argv, int *handled);
/* Top-level help: every command and every option. */
void nbg_cli_usage(FILE *out);
/* One command's help; NBG_EXIT_USAGE for an unknown name. */
int nbg_cli_help(FILE *out, const char *name);
/* The man page nbg(1) in roff, the bash completion script, and one line
 * "COMMAND OPTION" per documented option. */
void nbg_cli_man(FILE *out);
void nbg_cli_completion(FILE *out);
void nbg_cli_option_list(FILE *out);
/* `nbg inspect --memory` (inspect_memory.c): the memory section after a text
 * report (returns an exit code), the "memory" object merged into a JSON
 * report (takes doc, returns a new document or NULL on allocation failure). */
int nbg_inspect_memory_text(FILE *out, const nbg_model *m);
char *nbg_inspect_memory_json(const nbg_model *m, char *doc);

int nbg_cmd_inspect(int argc, char **argv);
int nbg_cmd_verify(int argc, char **argv);
int nbg_cmd_fields(int argc, char **argv);
int nbg_cmd_codes(int argc, char **argv);
int nbg_cmd_diff(int argc, char **argv);
int nbg_cmd_corpus(int argc, char **argv);

#endif
