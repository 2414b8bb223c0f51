/*
 * cli_opts.h - what each command's options fill (the destinations of the
 * option table in cli_table.c).  A command parses its arguments with
 * cli_parse_command and reads its choices from here.
 */
#ifndef NBG_CLI_OPTS_H
#define NBG_CLI_OPTS_H

#include <stdint.h>

#include "cli_args.h"

/* --expect-target VALUE|NAME */
typedef struct cli_target {
	int set;
	uint32_t value;
} cli_target;
int cli_target_arg(const char *value, void *dest);

typedef struct cli_inspect_opts {
	int json, only, commands, memory;
	unsigned graph;   /* NBG_TEXT_GRAPH_LAYERS | ..._OPERATIONS | ..._PATCHES */
	int format;       /* 0, or 1 + its place in meta|vpm|jevois (nbg_export_form) */
	cli_target target;
} cli_inspect_opts;

/* --sha256-expect HEX */
typedef struct cli_digest {
	int set;
	uint8_t bytes[32];
} cli_digest;

int cli_digest_arg(const char *value, void *dest);

typedef struct cli_verify_opts {
	int quiet, status, sha, require;
	cli_target target;
	cli_digest expect;
	const char *manifest_path;
} cli_verify_opts;

typedef struct cli_json_opts {
	int json;
} cli_json_opts;

typedef struct cli_codes_opts {
	int markdown;
} cli_codes_opts;

typedef struct cli_probe_opts {
	int json, no_isolate;
	const char *device_root, *nnsdk, *viplite;
} cli_probe_opts;

/* Parses argv against the options of command `cmd` (cli_table.c) into
 * `dest` (the command's struct above, zeroed first by the caller), the
 * operands into operands[] (room for argc; NULL when the command takes
 * none) and their number into *n.
 * Returns 0, or -1 after one sentence on standard error. */
int cli_parse_command(const char *cmd, int argc, char **argv, void *dest, const char **operands,
		      int *n);

/* "nbg CMD: MESSAGE" and the command's synopsis on standard error;
 * returns NBG_EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
