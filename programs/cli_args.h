/*
 * cli_args.h - options as data: each command's options are a table of
 * entries saying the option's name, the value it takes and where that value
 * goes in the command's options struct.  One parser (cli_args.c) reads
 * every command's arguments from the table, so a missing value, an unknown
 * option and a typo get the same message everywhere, and the help, the man
 * page and the completion (commands.c) print from the same table
 * (cli_table.c).
 */
#ifndef NBG_CLI_ARGS_H
#define NBG_CLI_ARGS_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

typedef enum cli_kind {
	CLI_END = 0,  /* the end of a table */
	CLI_FLAG,     /* int: 1 when given */
	CLI_BITS,     /* unsigned: `bits` ORed in when given */
	CLI_STRING,   /* const char *: the value */
	CLI_UINT,     /* uint64_t: a decimal number in [min, max] */
	CLI_CHOICE,   /* int: 1 + the value's place in arg's '|'-separated list */
	CLI_CUSTOM,   /* parse(value, dest): 0, or -1 after a sentence on stderr */
	CLI_LIST,     /* cli_list: every value up to the next option, at least one */
} cli_kind;

/* The values of a CLI_LIST option, in order, over all its uses; v is
 * allocated (the caller frees it) and points into argv. */
typedef struct cli_list {
	const char **v;
	size_t n;
} cli_list;

typedef struct cli_option {
	const char *name;   /* "--json" */
	const char *alias;  /* "-q", or NULL */
	const char *arg;    /* what the value is ("N", "meta|vpm|jevois"), NULL for a flag */
	const char *help;
	cli_kind kind;
	size_t offset;      /* of the destination in the options struct */
	unsigned bits;      /* CLI_BITS */
	uint64_t min, max;  /* CLI_UINT */
	int (*parse)(const char *value, void *dest);
} cli_option;

#define CLI_OPT_FLAG(name, alias, help, type, field) \
	{ name, alias, NULL, help, CLI_FLAG, offsetof(type, field), 0, 0, 0, NULL }
#define CLI_OPT_BITS(name, help, type, field, b) \
	{ name, NULL, NULL, help, CLI_BITS, offsetof(type, field), b, 0, 0, NULL }
#define CLI_OPT_STRING(name, alias, arg, help, type, field) \
	{ name, alias, arg, help, CLI_STRING, offsetof(type, field), 0, 0, 0, NULL }
#define CLI_OPT_UINT(name, arg, help, type, field, lo, hi) \
	{ name, NULL, arg, help, CLI_UINT, offsetof(type, field), 0, lo, hi, NULL }
#define CLI_OPT_CHOICE(name, arg, help, type, field) \
	{ name, NULL, arg, help, CLI_CHOICE, offsetof(type, field), 0, 0, 0, NULL }
#define CLI_OPT_CUSTOM(name, arg, help, type, field, fn) \
	{ name, NULL, arg, help, CLI_CUSTOM, offsetof(type, field), 0, 0, 0, fn }
#define CLI_OPT_LIST(name, arg, help, type, field) \
	{ name, NULL, arg, help, CLI_LIST, offsetof(type, field), 0, 0, 0, NULL }

/*
 * Reads argv[1..argc) (already normalized by the dispatcher: no "--", no
 * "--opt=value") against the table `opts` of command `cmd`: option values
 * into the struct at `dest`, every other argument into operands[] (room for
 * argc; NULL: the command takes none), their number into *n.  Returns 0, or -1 after one sentence on
 * standard error ("nbg CMD: --format needs a value: meta, vpm or jevois",
 * "unknown option '--jsn'; did you mean --json?").
 */
int cli_parse(const char *cmd, const cli_option *opts, int argc, char **argv, void *dest,
	      const char **operands, int *n);

/* A command of the table (cli_table.c): its name, the operands shown after
 * its options ("FILE..."), a one-line summary, a paragraph for --help and
 * the man page, and its options, ended by an entry of kind CLI_END. */
#define CLI_OPT_MAX 40
typedef struct cli_command {
	const char *name;
	const char *operands;
	const char *summary;
	const char *text;
	cli_option options[CLI_OPT_MAX];
} cli_command;
size_t cli_command_count(void);
const cli_command *cli_command_at(size_t i);
const cli_command *cli_command_find(const char *name);

/* "nbg NAME [--opt ARG]... OPERANDS" after `lead`, wrapped at 78 columns. */
void cli_synopsis(FILE *out, const cli_command *c, const char *lead);
/* A paragraph wrapped at 78 columns: the first line after `first`, the
 * others after `indent`.  \x01 is a space that never breaks. */
void cli_wrap(FILE *out, const char *text, const char *first, const char *indent);

/* The option of the table named `name` (or its alias), or NULL. */
const cli_option *cli_option_find(const cli_option *opts, const char *name, size_t len);

#endif
