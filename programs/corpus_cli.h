/*
 * corpus_cli.h - the parts of `nbg corpus`: the file list and the walk that
 * fills it (corpus_walk.c), manifests (corpus_manifest.c), safe reads
 * (corpus_io.c), the parallel run (corpus_jobs.c), and stderr:
 * warnings and the progress line (corpus_progress.c).
 */
#ifndef NBG_CORPUS_CLI_H
#define NBG_CORPUS_CLI_H

#include <stdio.h>

#include "cli_out.h"
#include "corpus/corpus.h"

/* ------------------------------------------------------- the file list */

/* One file to measure: its path (in the list's arena) and what is known of
 * it before it is read.  Kept small: a list of 100,000 files is a few MB. */
typedef struct corpus_entry {
	size_t path;            /* offset in the arena */
	uint64_t size;          /* the size the walk saw, when has_size */
	uint8_t has_size, has_sha256;
	uint8_t sha256[32];     /* from a manifest */
} corpus_entry;

typedef struct corpus_list {
	char *arena;
	size_t used, cap;
	corpus_entry *e;
	size_t n, cap_e;
	uint64_t bytes;         /* sum of the known sizes (for progress) */
	int oom;
} corpus_list;

/* Appends a file; 0 when memory runs out (l->oom set). */
int corpus_list_add(corpus_list *l, const char *path, size_t len, const uint64_t *size,
		    const uint8_t *sha256);
const char *corpus_list_path(const corpus_list *l, size_t i);
void corpus_list_free(corpus_list *l);

/* ------------------------------------------------------------ the walk */

typedef struct corpus_walk {
	corpus_list *list;
	corpus_agg *agg;        /* skipped entries are counted here */
	int follow;             /* follow symbolic links to directories */
	int quiet;
} corpus_walk;

/* Adds the files of one command-line PATH (a file, a directory walked for
 * *.nb without recursion, or a manifest) in walk order.  Problems are
 * reported on stderr and counted in w->agg. */
void corpus_walk_path(corpus_walk *w, const char *path);

/* ----------------------------------------------------------- manifests */

/* 1 when the regular file at `path` starts like a sha256sum line. */
int corpus_manifest_sniff(const char *path);
/* Adds every file the manifest lists, with its digest. */
void corpus_manifest_read(corpus_walk *w, const char *path);

/* -------------------------------------------------------- files, output */

/* Reads a whole regular file (stat first; FIFOs and devices are never
 * opened).  Returns 0 and a malloc'd NUL-terminated buffer, or an errno
 * value (EINVAL for a path that is not a regular file). */
int corpus_read_file(const char *path, char **data, size_t *len);

/* -------------------------------------------------------------- the run */

typedef struct corpus_run {
	const corpus_list *list;
	int jobs;
	int quiet;
	int progress;           /* show the progress line */
	cli_out *records;       /* NULL: none */
	cli_out *manifest;      /* NULL: none */
	corpus_agg *agg;        /* every file's measurement is added here */
	uint64_t max_file_size, max_undescribed; /* NBG_MAX_FILE_SIZE, ..._UNDESCRIBED */
} corpus_run;

/* Measures every file of the list on `jobs` threads; records, manifest
 * lines and messages come out in list order.  Returns 0, or NBG_EXIT_IO
 * when an output could not be written or a thread not started (the
 * message is printed). */
int corpus_run_files(corpus_run *r);

/* ------------------------------------------------------- stderr, progress */

/* "nbg corpus: " + the message, escaped (file paths are not text), after
 * clearing the progress line. */
void corpus_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void corpus_progress_start(int on, size_t files, uint64_t bytes);
void corpus_progress_update(size_t files_done, uint64_t bytes_done);
/* Clears the line for good. */
void corpus_progress_end(void);

#endif
