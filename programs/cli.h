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


int nbg_cmd_inspect(int argc, char **argv);
int nbg_cmd_verify(int argc, char **argv);
int nbg_cmd_fields(int argc, char **argv);
int nbg_cmd_codes(int argc, char **argv);
int nbg_cmd_diff(int argc, char **argv);
int nbg_cmd_corpus(int argc, char **argv);

#endif
