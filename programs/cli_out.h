/*
 * cli_out.h - the one way nbg writes an output file (cli_out.c).  Every
 * command that writes a file -- reemit, map, graph, tensor, run and the
 * records and manifest of corpus -- goes through it, so every output
 * follows the same policy (doc/security.md, "Outputs: what OUT may be"):
 *
 *  - OUT is a new name, a regular file (replaced: its mode kept, and as root
 *    its owner and group), or a symbolic link to a regular file (written
 *    through: the file it names is replaced, the link stays).  A device,
 *    FIFO, socket, directory, a link to one of them or a dangling link is
 *    refused (not-regular-file, exit 3) and left as it is; the target is
 *    never opened, so nothing blocks and no driver sees an open().
 *  - The bytes go to a hidden temporary beside the file replaced
 *    (".NAME.XXXXXX", NAME cut so the whole fits NAME_MAX), registered
 *    (cli_temp.c) from the moment it exists; commit syncs it,
 *    gives it the mode (0666 less the umask for a new file) and owner,
 *    renames it over the target and syncs the directory.  Any failure, or
 *    SIGINT, SIGTERM or SIGHUP, removes the temporary.
 *  - "-", /dev/stdout and any path that is the file standard output is
 *    (same device and inode) are standard output, written in place, when
 *    the command allows it (CLI_OUT_STDOUT); otherwise refused.
 *  - Several outputs of one command are staged first and renamed together
 *    (cli_out_commit_all); two of them that are the same file (compared by
 *    device and inode, or by directory and name for new files) are refused
 *    (cli_out_same) before anything is written.
 *  - A directory of outputs is committed whole (cli_out_dir_*, below).
 */
#ifndef NBG_CLI_OUT_H
#define NBG_CLI_OUT_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

typedef struct cli_out {
	const char *name;  /* as the user gave it (messages) */
	const char *cmd;   /* "reemit", "corpus", ...: messages start "nbg CMD: " */
	char *target;      /* the file replaced: name, or the file a link names */
	char *tmp;         /* the temporary while it exists, else NULL */
	int fd;            /* where the bytes go: the temporary or standard output */
	int slot;          /* the temporary's registration (cli_temp.c) */
	int to_stdout;
	int exists;        /* target existed: st is its status */
	struct stat st;
	dev_t id_dev;      /* which file this is: the target's device and inode, */
	ino_t id_ino;      /* or for a new file its directory's, with id_base */
	char *id_base;     /* the new file's name in that directory, else NULL */
	int err;           /* errno of the first failed write, 0 */
	FILE *stream;      /* cli_out_stream's */
	int renamed;       /* committed: the target is this output now */
} cli_out;

/* Standard output ("-", /dev/stdout, or the file it is) is allowed. */
#define CLI_OUT_STDOUT 0x1u

/* 1 when `path` names standard output: "-", /dev/stdout, or a path whose
 * file is the one standard output writes to (same device and inode). */
int cli_out_is_stdout(const char *path);

/* Prepares OUT `path` for command `cmd`: resolves and checks the target,
 * creates the registered temporary.  0, or the exit code (3) with the
 * reason printed ("nbg CMD: not-regular-file: ..."). */
int cli_out_open(cli_out *o, const char *cmd, const char *path, unsigned flags);
/* n bytes to fd, every write checked (short writes, EINTR): 0 or the
 * errno of the failure. */
int cli_write_all(int fd, const void *buf, size_t n);
/* Writes n bytes; a failure is kept (o->err) for the commit.  0 or -1. */
int cli_out_write(cli_out *o, const void *p, size_t n);
/* A stdio stream onto the output (for the report writers that take a
 * FILE *); flushed and closed by the commit or the discard.  NULL when
 * memory runs out (o->err set). */
FILE *cli_out_stream(cli_out *o);
/* Syncs, sets mode and owner, renames over the target, syncs the
 * directory.  0, or the exit code with the reason printed; the temporary is
 * gone either way. */
int cli_out_commit(cli_out *o);
/* Removes the temporary (nothing is renamed) and frees. */
void cli_out_discard(cli_out *o);
/* Frees what a committed or discarded output still holds. */
void cli_out_free(cli_out *o);

/* 1 when a and b would be written to the same file. */
int cli_out_same(const cli_out *a, const cli_out *b);
/* Commits n staged outputs: every one synced and given its attributes
 * first, then all renamed; when a rename fails, the temporaries left are
 * removed and the files this call renamed already are removed too (a
 * partial set is worse than none).  0, or the exit code with the reason
 * printed. */
int cli_out_commit_all(cli_out *const *o, size_t n);

/*
 * A directory of outputs committed as one set (`nbg weights --out DIR`):
 *
 *  - DIR is a new name, an empty directory, or a directory (or a link to
 *    one) whose every entry is a regular file `mine` accepts as one of the
 *    command's own (an earlier set); anything else -- another file, a FIFO,
 *    device, link or directory inside, DIR itself not a directory, the
 *    working directory -- is refused before anything is written (exit 3)
 *    and left as it is.
 *  - The files go into a hidden staging directory beside DIR
 *    (".NAME.XXXXXX", 0700 while it is written), registered with the signal
 *    guards: a failure, SIGINT, SIGTERM or SIGHUP removes it with its files.
 *  - The commit syncs every file and the staging directory, gives it DIR's
 *    mode (a new DIR: 0777 less the umask; as root DIR's owner and group,
 *    its files too) and puts it in DIR's place in one step: exchanged with
 *    DIR (renameat2 RENAME_EXCHANGE), or renamed to a new DIR; where the file
 *    system cannot exchange, DIR is renamed aside and the set into its
 *    place, signals held.  The earlier set is then removed and the parent
 *    synced (only the files `mine` accepts: one put there since the check
 *    stays, with the directory).  Whoever reads DIR sees the earlier set or
 *    the new one whole, never a mix.
 */
typedef struct cli_out_dir {
	const char *name;  /* as the user gave it (messages) */
	const char *cmd;
	int (*mine)(const char *name); /* the names of the command's own files */
	char *target;      /* the directory replaced: DIR, or the one a link names */
	char *stage;       /* the staging directory while it exists, else NULL */
	int fd;            /* the staging directory's descriptor */
	int slot;          /* its registration (cli_temp.c) */
	int exists;        /* target existed: st is its status */
	struct stat st;
} cli_out_dir;

/* Prepares DIR `path` for command `cmd`: checks it and its entries, creates
 * the staging directory.  0, or the exit code (3) with the reason printed. */
int cli_out_dir_open(cli_out_dir *d, const char *cmd, const char *path,
		     int (*mine)(const char *name));
/* Writes the file `name` (a plain name) of the set: 0, or the exit code with
 * the reason printed (the staging directory is then removed). */
int cli_out_dir_write(cli_out_dir *d, const char *name, const void *p, size_t n);
/* Puts the set in DIR's place: 0, or the exit code with the reason printed;
 * the staging directory is gone either way. */
int cli_out_dir_commit(cli_out_dir *d);
/* Removes the staging directory with its files (nothing is committed). */
void cli_out_dir_discard(cli_out_dir *d);

/* A scratch file beside `path` (".NAME.TAG.XXXXXX"), registered to be
 * removed on a signal (cli_temp.c): for a file another program reads (nbg graph's DOT document
 * for Graphviz).  The descriptor, or -1 with errno; *name (malloc'd) and
 * *slot to give cli_scratch_remove. */
int cli_scratch_create(const char *path, const char *tag, char **name, int *slot);
void cli_scratch_remove(char *name, int slot);

#endif
