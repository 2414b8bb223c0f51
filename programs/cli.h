/*
 * cli.h - shared pieces of the nbg command-line tool.
 */
#ifndef NBG_CLI_H
#define NBG_CLI_H

#include <stdio.h>

#include "nbg/decoded.h"
#include "nbg/nbg.h"

/* A parsed input file: mapping + model, or the failure (or both: see
 * cli_load). */
typedef struct cli_loaded {
	nbg_mapping map;
	nbg_model *model;
	nbg_error err;
	int io_failed; /* 1: the file could not be read (exit 3) */
} cli_loaded;

/* The one lookup of a named choice: the index of the last of `count`
 * entries of `size` bytes at `table` whose first member, a const char *
 * (NULL in none but a table's unused entries), is `name`; -1 when none is.
 * The last, so that in a table read from a file (a manifest) a later line
 * overrides an earlier; names in a table of the program are unique.
 * CLI_LOOKUP is the same over an array. */
long cli_lookup(const void *table, size_t count, size_t size, const char *name);
#define CLI_LOOKUP(table, name) \
	cli_lookup((table), sizeof(table) / sizeof((table)[0]), sizeof((table)[0]), (name))

/* 1 when `path` is "-", which names standard input as an input and
 * standard output as an output. */
int cli_is_stdio(const char *path);
/* 1 when `name` ends in `suffix` (".nb"; `name` may be the suffix alone). */
int cli_has_suffix(const char *name, const char *suffix);

/* qsort's order of names (const char *), byte by byte: a directory's
 * entries, output names. */
int cli_name_order(const void *a, const void *b);
/* 1 for "." and "..", a directory's entries for itself and its parent. */
int cli_dot_name(const char *name);

/* An input, "-" meaning standard input (nbg_read_input): standard input
 * at most NBG_MAX_STDIN bytes, once per process and never from a terminal.
 * Returns NBG_OK or the failure's code with err filled. */
nbg_code cli_input_open(const char *path, nbg_mapping *m, nbg_error *err);
void cli_input_close(nbg_mapping *m);

/* cli_load, after checking that the header's target word (offset 8) is
 * *target (when target is not NULL): else NBG_EXIT_INVALID with a
 * target-mismatch error naming both targets, before the file is parsed. */
int cli_load_expect(const char *path, const nbg_parse_options *opts, const uint32_t *target,
		    cli_loaded *out);
/* `nbg targets` and --expect-target (cmd_targets.c): a value (0x1000003b,
 * decimal) or a configuration name from the table; -1 with a message on
 * stderr otherwise.  cli_target_mismatch fills err (target-mismatch, offset
 * 8, field target) with both targets and their names. */
int cli_cmd_targets(int argc, char **argv);
int cli_target_parse(const char *arg, uint32_t *out);
void cli_target_mismatch(nbg_error *err, uint32_t have, uint32_t want);

/* Maps and parses `path` ("-": standard input); returns the exit code the
 * failure calls for (0 on success).  With NBG_PARSE_KEEP_UNVERIFIED in
 * opts, a file whose only failure is a checksum still leaves its model in
 * out->model (integrity NBG_INTEGRITY_FAILED) beside the failure in
 * out->err, so that what can be decoded is shown, marked unverified. */
int cli_load(const char *path, const nbg_parse_options *opts, cli_loaded *out);
void cli_loaded_free(cli_loaded *l);
/* Prints "nbg: PATH: code at offset N (0x..): message" to stderr. */
void cli_print_error(const char *path, const cli_loaded *l);
/* `path` escaped for text output (nbg_path_escape); valid until eight more
 * calls.  Every path a command prints in text goes through this. */
const char *cli_esc(const char *path);
/* A path in JSON: as it is when it is UTF-8, else escaped as nbg_path_escape
 * does; JSON null when memory runs out. */
struct json_t;
struct json_t *cli_json_path(const char *path);
/* A message for text output: as it is when the only bytes nbg_path_escape
 * would change are backslashes (a library message, whose paths are escaped
 * already), else escaped whole; valid until eight more cli_esc calls. */
const char *cli_esc_msg(const char *msg);
/* 1 when the file `path` was mapped into m and shrank since (results from
 * it must be dropped). */
int cli_input_shrank(const char *path, const nbg_mapping *m);
/* The check of cli_input_shrank wherever a command reads l's mapping after
 * the parse (decoding weights, planning, a report, before its outputs are
 * committed): 0 while the file is as it was parsed; else l->err is the
 * file-changed failure (io_failed set; `dropped` says what of the command's
 * work it voids, NULL: nothing read is reported) and NBG_EXIT_IO is
 * returned, for the caller to print (cli_print_error) and drop its work. */
int cli_loaded_changed(const char *path, cli_loaded *l, const char *dropped);
/* A byte count: digits with an optional K, M, G or T suffix (powers of
 * 1024), or "none" (UINT64_MAX).  0 with *out set, or -1. */
int cli_size_parse(const char *v, uint64_t *out);
/* A limit from the environment variable `name` (0: unset). */
uint64_t cli_env_limit(const char *name);
/* 0 when every limit variable that is set holds a byte count (a count for
 * NBG_MAX_CPU_WORK and NBG_MAX_CPU_PLAN_STEPS); else -1 after a sentence on
 * standard error (main then exits 2). */
int cli_env_limits_check(void);
/* Flushes and closes standard output: rc, or NBG_EXIT_IO with a message when
 * any write to it failed. */
int cli_finish_stdout(int rc);

/* The exit code of several files: the most severe (I/O, 3, outranks an
 * invalid file, 1). */
static inline int cli_exit_worst(int a, int b)
{
	return a > b ? a : b;
}

/* JSON documents of several files as one array, in operand order; one file's
 * document alone when `many` is 0 (as before, for one operand). */
typedef struct cli_json_list {
	int many;
	size_t count;
} cli_json_list;
void cli_json_list_item(cli_json_list *list, const char *doc);
/* The same for a document written to standard output between the two
 * calls (streamed). */
void cli_json_list_open(const cli_json_list *list);
void cli_json_list_close(cli_json_list *list);
void cli_json_list_end(const cli_json_list *list);


/* nbg itself (commands.c): runs the command argv[1] names, of the table
 * (cli_table.c) or one of the words help, version, --help, -h, --version;
 * flushes standard output and returns the exit code. */
int cli_main(int argc, char **argv);
/* Top-level help: every command and every option. */
void cli_commands_usage(FILE *out);
/* One command's help; NBG_EXIT_USAGE for an unknown name. */
int cli_help(FILE *out, const char *name);
/* The man page nbg(1) in roff, the bash completion script, and one line
 * "COMMAND OPTION" per documented option. */
void cli_man(FILE *out);
void cli_completion(FILE *out);
void cli_option_list(FILE *out);
/* `nbg inspect --memory` (inspect_memory.c): the memory section after a text
 * report, from the report's decoded model (returns an exit code); the JSON
 * report's "memory" object is nbg_json_document_write's. */
int cli_inspect_memory_text(FILE *out, nbg_decoded *d);

/* `nbg inspect --format` (inspect_export.c): the form the option table's
 * choice meta|vpm|jevois selects (1 + its place, as cli_args.c's CHOICE
 * gives it), and one file's inputs and outputs in it (JSON through `list`,
 * text headed by the file's name when `many`). */
typedef enum cli_export_form {
	NBG_EXPORT_NONE = 0,
	NBG_EXPORT_META,
	NBG_EXPORT_VPM,
	NBG_EXPORT_JEVOIS,
} cli_export_form;
int cli_inspect_export(const nbg_model *m, const char *path, cli_export_form form, int many,
		       cli_json_list *list);

int cli_cmd_inspect(int argc, char **argv);
int cli_cmd_verify(int argc, char **argv);
int cli_cmd_fields(int argc, char **argv);
int cli_cmd_codes(int argc, char **argv);
int cli_cmd_diff(int argc, char **argv);
int cli_cmd_compare(int argc, char **argv);
int cli_cmd_corpus(int argc, char **argv);
int cli_cmd_weights(int argc, char **argv);

#endif
