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

/* An input, "-" meaning standard input (nbg_read_input): standard input
 * at most NBG_MAX_STDIN bytes, once per process and never from a terminal.
 * Returns NBG_OK or the failure's code with err filled. */
nbg_code nbg_input_open(const char *path, nbg_mapping *m, nbg_error *err);
void nbg_input_close(nbg_mapping *m);

/* nbg_load, after checking that the header's target word (offset 8) is
 * *target (when target is not NULL): else NBG_EXIT_INVALID with a
 * target-mismatch error naming both targets, before the file is parsed. */
int nbg_load_expect(const char *path, const nbg_parse_options *opts, const uint32_t *target,
		    nbg_loaded *out);
/* `nbg targets` and --expect-target (cmd_targets.c): a value (0x1000003b,
 * decimal) or a configuration name from the table; -1 with a message on
 * stderr otherwise.  nbg_target_mismatch fills err (target-mismatch, offset
 * 8, field target) with both targets and their names. */
int nbg_cmd_targets(int argc, char **argv);
int nbg_target_parse(const char *arg, uint32_t *out);
void nbg_target_mismatch(nbg_error *err, uint32_t have, uint32_t want);

/* After nbg_load or nbg_load_expect failed on a checksum mismatch (and
 * only then): parses the same bytes again without the checksum checks, into
 * l->model (integrity NBG_INTEGRITY_FAILED), so that what can be decoded is
 * still shown, marked unverified; l->err keeps the failure.  1 when a
 * model was made, 0 otherwise (another failure, or a structural failure
 * behind the checksum one: nothing is shown then). */
int nbg_load_unverified(const char *path, const nbg_parse_options *opts, nbg_loaded *l);
/* Maps and parses `path` ("-": standard input); returns the exit code the failure calls for (0 on success). */
int nbg_load(const char *path, const nbg_parse_options *opts, nbg_loaded *out);
void nbg_loaded_free(nbg_loaded *l);
/* Prints "nbg: PATH: code at offset N (0x..): message" to stderr. */
void nbg_print_error(const char *path, const nbg_loaded *l);
/* `path` escaped for text output (nbg_path_escape); valid until eight more
 * calls.  Every path a command prints in text goes through this. */
const char *nbg_esc(const char *path);
/* A message for text output: as it is when the only bytes nbg_path_escape
 * would change are backslashes (a library message, whose paths are escaped
 * already), else escaped whole; valid until eight more nbg_esc calls. */
const char *nbg_esc_msg(const char *msg);
/* A hidden temporary name beside `path` (malloc'd): ".NAME.TAG.XXXXXX" in
 * the same directory, NAME cut so the whole fits NAME_MAX (cli_temp.c),
 * to be created with nbg_temp_create (nbg/nbg.h). */
char *nbg_temp_beside(const char *path, const char *tag);
/* 1 when the file `path` was mapped into m and shrank since (results from
 * it must be dropped). */
int nbg_input_shrank(const char *path, const nbg_mapping *m);
/* A byte-count limit from the environment variable `name` (0: unset). */
uint64_t nbg_env_limit(const char *name);
/* 0 when every limit variable that is set holds a byte count; else -1
 * after a sentence on standard error (main then exits 2). */
int nbg_env_limits_check(void);
/* Flushes and closes standard output: rc, or NBG_EXIT_IO with a message when
 * any write to it failed. */
int nbg_finish_stdout(int rc);

/* The exit code of several files: the most severe (I/O, 3, outranks an
 * invalid file, 1). */
static inline int nbg_exit_worst(int a, int b)
{
	return a > b ? a : b;
}

/* JSON documents of several files as one array, in operand order; one file's
 * document alone when `many` is 0 (as before, for one operand). */
typedef struct nbg_json_list {
	int many;
	size_t count;
} nbg_json_list;
void nbg_json_list_item(nbg_json_list *list, const char *doc);
/* The same for a document written to standard output between the two
 * calls (streamed). */
void nbg_json_list_open(const nbg_json_list *list);
void nbg_json_list_close(nbg_json_list *list);
void nbg_json_list_end(const nbg_json_list *list);


/* The command table (cli_table.c, run by commands.c): runs argv[0] as a command, or `nbg
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
 * report (returns an exit code); the JSON report's "memory" object is
 * nbg_json_document_write's. */
int nbg_inspect_memory_text(FILE *out, const nbg_model *m);

/* `nbg inspect --format` (inspect_export.c): the form a name selects
 * (NBG_EXPORT_NONE with a message for an unknown one), and one file's
 * inputs and outputs in it (JSON through `list`, text headed by the file's
 * name when `many`). */
typedef enum nbg_export_form {
	NBG_EXPORT_NONE = 0,
	NBG_EXPORT_META,
	NBG_EXPORT_VPM,
	NBG_EXPORT_JEVOIS,
} nbg_export_form;
nbg_export_form nbg_export_form_parse(const char *name);
int nbg_inspect_export(const nbg_model *m, const char *path, nbg_export_form form, int many,
		       nbg_json_list *list);

int nbg_cmd_inspect(int argc, char **argv);
int nbg_cmd_verify(int argc, char **argv);
int nbg_cmd_fields(int argc, char **argv);
int nbg_cmd_codes(int argc, char **argv);
int nbg_cmd_diff(int argc, char **argv);
int nbg_cmd_corpus(int argc, char **argv);

#endif
