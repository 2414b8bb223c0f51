/*
 * cli_out.c - the one output writer of nbg (cli_out.h states the policy;
 * doc/security.md, section 7, describes it for users).  The library writes
 * to descriptors and strings only; which file becomes an output, what may
 * be replaced and how, is decided here, once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_out.h"
#include "cli_temp.h"

/* ------------------------------------------------------------ names */

int cli_out_is_stdout(const char *path)
{
	static const char *const names[] = { "-", "/dev/stdout" };
	struct stat a, b;

	if (CLI_LOOKUP(names, path) >= 0)
		return 1;
	/* /dev/fd/1, /proc/self/fd/1, or the file standard output was
	 * redirected to: the same device and inode, as cp compares files */
	return fstat(STDOUT_FILENO, &b) == 0 && stat(path, &a) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* ".NAME[.TAG].XXXXXX" beside `path`, NAME cut so the whole fits NAME_MAX. */
static char *hidden_beside(const char *path, const char *tag)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0, n = dlen + NAME_MAX + 1;
	int keep = NAME_MAX - 8 - (tag ? (int)strlen(tag) + 1 : 0); /* ".", ".XXXXXX" */
	char *t = malloc(n);

	if (t)
		snprintf(t, n, "%.*s.%.*s%s%s.XXXXXX", (int)dlen, path, keep, path + dlen,
			 tag ? "." : "", tag ? tag : "");
	return t;
}

/* SIGINT, SIGTERM and SIGHUP held off (hold 1) or let through again. */
static void hold_signals(int hold, sigset_t *old)
{
	sigset_t block;

	if (!hold) {
		sigprocmask(SIG_SETMASK, old, NULL);
		return;
	}
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, old);
}

/* mkstemp (or, `dir`, mkdtemp and its descriptor) with SIGINT, SIGTERM and
 * SIGHUP held off until the name is registered (cli_temp.c), so
 * no signal between the two can leave it behind.  The descriptor, or -1
 * with errno. */
static int create_registered(char *tmpl, int dir, int *slot)
{
	sigset_t old;
	int fd, e;

	hold_signals(1, &old);
	if (!dir)
		fd = mkostemp(tmpl, O_CLOEXEC);
	else if (!mkdtemp(tmpl))
		fd = -1;
	else if ((fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		rmdir(tmpl);
	e = errno;
	*slot = fd >= 0 ? cli_temp_register(tmpl) : -1;
	hold_signals(0, &old);
	errno = e;
	return fd;
}

int cli_scratch_create(const char *path, const char *tag, char **name, int *slot)
{
	int fd;

	*slot = -1;
	if (!(*name = hidden_beside(path, tag))) {
		errno = ENOMEM;
		return -1;
	}
	if ((fd = create_registered(*name, 0, slot)) < 0) {
		int e = errno;
		free(*name);
		*name = NULL;
		errno = e;
	}
	return fd;
}

void cli_scratch_remove(char *name, int slot)
{
	if (name)
		unlink(name);
	cli_temp_unregister(slot);
	free(name);
}

/* ------------------------------------------------------------ the target */

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
	     : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket"
	     : S_ISLNK(m) ? "a symbolic link" : "not a regular file";
}

/* "nbg CMD: not-regular-file: NAME " + why (what names the kind met). */
static int refuse(const cli_out *o, const char *why, const char *what)
{
	fprintf(stderr, "nbg %s: %s: %s %s%s%s\n", o->cmd, nbg_code_name(NBG_E_NOT_REGULAR_FILE),
		cli_esc(o->name), what ? "is a symbolic link to " : "", what ? what : "", why);
	return NBG_EXIT_IO;
}

static int failed(const cli_out *o, const char *what, const char *path, int e)
{
	fprintf(stderr, "nbg %s: %s: %s %s: %s\n", o->cmd, nbg_code_name(NBG_E_IO), what,
		cli_esc(path), strerror(e));
	return NBG_EXIT_IO;
}

/* The file to replace: the path itself, or what a symbolic link names; o->st
 * its status when it exists.  0 or the exit code, with the reason printed. */
static int resolve(cli_out *o)
{
	struct stat st;

	if (lstat(o->name, &st) != 0) {
		if (errno != ENOENT)
			return failed(o, "cannot examine", o->name, errno);
		o->target = strdup(o->name);
	} else if (S_ISREG(st.st_mode)) {
		o->target = strdup(o->name);
		o->exists = 1;
		o->st = st;
	} else if (S_ISLNK(st.st_mode)) {
		o->target = realpath(o->name, NULL);
		if (!o->target || stat(o->target, &st) != 0)
			return refuse(o, "is a symbolic link to nothing that exists: refused (give the "
					 "path of a regular file or a new name)", NULL);
		if (!S_ISREG(st.st_mode))
			return refuse(o, ", not to a regular file: refused, left as it is",
				      kind_of(st.st_mode));
		o->exists = 1;
		o->st = st;
	} else {
		fprintf(stderr, "nbg %s: %s: %s is %s, not a regular file: refused, left as it is "
				"(nbg writes regular files, or - for standard output)\n", o->cmd,
			nbg_code_name(NBG_E_NOT_REGULAR_FILE), cli_esc(o->name), kind_of(st.st_mode));
		return NBG_EXIT_IO;
	}
	if (!o->target)
		return failed(o, "cannot write", o->name, ENOMEM);
	return 0;
}

/* Which file the output is: the target's device and inode, or for a new
 * file its directory's and its name. */
static int identify(cli_out *o)
{
	const char *slash = strrchr(o->target, '/');
	char *dir;
	struct stat st;

	if (o->exists) {
		o->id_dev = o->st.st_dev;
		o->id_ino = o->st.st_ino;
		return 0;
	}
	if (!(o->id_base = strdup(slash ? slash + 1 : o->target)))
		return failed(o, "cannot write", o->name, ENOMEM);
	dir = slash ? strndup(o->target, (size_t)(slash - o->target) + 1) : strdup(".");
	if (!dir)
		return failed(o, "cannot write", o->name, ENOMEM);
	int ok = stat(dir, &st) == 0;
	int e = errno;
	free(dir);
	if (!ok)
		return failed(o, "cannot create", o->name, e);
	o->id_dev = st.st_dev;
	o->id_ino = st.st_ino;
	return 0;
}

int cli_out_open(cli_out *o, const char *cmd, const char *path, unsigned flags)
{
	struct stat st;
	int rc;

	memset(o, 0, sizeof(*o));
	o->name = path;
	o->cmd = cmd;
	o->fd = -1;
	o->slot = -1;
	/* a file-size limit ends in a failed write, not a signal that leaves
	 * the temporary behind */
	signal(SIGXFSZ, SIG_IGN);
	if (cli_out_is_stdout(path)) {
		if (!(flags & CLI_OUT_STDOUT)) {
			fprintf(stderr, "nbg %s: %s is standard output, where nbg %s writes its "
					"report: refused (name a file)\n", cmd, cli_esc(path), cmd);
			return NBG_EXIT_USAGE;
		}
		o->to_stdout = 1;
		o->fd = STDOUT_FILENO;
		if (fstat(STDOUT_FILENO, &st) == 0) {
			o->id_dev = st.st_dev;
			o->id_ino = st.st_ino;
		}
		fflush(stdout); /* what the command printed before comes first */
		return 0;
	}
	if ((rc = resolve(o)) != 0 || (rc = identify(o)) != 0) {
		cli_out_free(o);
		return rc;
	}
	if (!(o->tmp = hidden_beside(o->target, NULL))) {
		cli_out_free(o);
		return failed(o, "cannot write", path, ENOMEM);
	}
	if ((o->fd = create_registered(o->tmp, 0, &o->slot)) < 0) {
		int e = errno;
		fprintf(stderr, "nbg %s: %s: cannot create a temporary file beside %s: %s\n", cmd,
			nbg_code_name(NBG_E_IO), cli_esc(o->target), strerror(e));
		cli_out_free(o);
		return NBG_EXIT_IO;
	}
	return 0;
}

/* ------------------------------------------------------------ writing */

static void keep_error(cli_out *o, int e)
{
	if (!o->err)
		o->err = e ? e : EIO;
}

int cli_write_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : ENOSPC;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int cli_out_write(cli_out *o, const void *buf, size_t n)
{
	if (o->stream && fflush(o->stream) != 0)
		keep_error(o, errno);
	if (!o->err) {
		int e = cli_write_all(o->fd, buf, n);
		if (e)
			keep_error(o, e);
	}
	return o->err ? -1 : 0;
}

FILE *cli_out_stream(cli_out *o)
{
	int fd;

	if (o->stream)
		return o->stream;
	if ((fd = dup(o->fd)) < 0 || !(o->stream = fdopen(fd, "w"))) {
		keep_error(o, errno);
		if (fd >= 0)
			close(fd);
	}
	return o->stream;
}

static void close_stream(cli_out *o)
{
	if (o->stream && fclose(o->stream) != 0)
		keep_error(o, errno);
	o->stream = NULL;
}

/* ------------------------------------------------------------ committing */

/* The umask, read without changing it (umask() would race other threads);
 * where /proc is not mounted, read by setting it back at once. */
static mode_t current_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	mode_t um;

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "Umask:", 6)) {
				fclose(f);
				return (mode_t)strtoul(line + 6, NULL, 8);
			}
		fclose(f);
	}
	um = umask(077);
	umask(um);
	return um;
}

/* 0666 less the umask. */
static mode_t new_file_mode(void)
{
	return 0666 & ~current_umask();
}

static void sync_dir_of(const char *target)
{
	const char *slash = strrchr(target, '/');
	char *dir = slash ? strndup(target, (size_t)(slash - target) + 1) : strdup(".");
	int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	free(dir);
}

/* Everything but the rename: the bytes synced, the mode (and, as root,
 * the owner) of the file replaced, the temporary closed.  0 or the exit
 * code with the reason printed; on failure the temporary is removed. */
static int finish(cli_out *o)
{
	close_stream(o);
	if (o->to_stdout) {
		/* a pipe or terminal cannot be synced; a file can and is */
		if (!o->err && fsync(STDOUT_FILENO) != 0 && errno != EINVAL && errno != EROFS)
			keep_error(o, errno);
		if (o->err) {
			fprintf(stderr, "nbg %s: %s: cannot write to standard output: %s\n", o->cmd,
				nbg_code_name(NBG_E_IO), strerror(o->err));
			return NBG_EXIT_IO;
		}
		return 0;
	}
	if (!o->err && fsync(o->fd) != 0)
		keep_error(o, errno);
	if (!o->err && o->exists && geteuid() == 0 && fchown(o->fd, o->st.st_uid, o->st.st_gid) != 0)
		keep_error(o, errno); /* before fchmod: chown clears the set-id bits */
	if (!o->err && fchmod(o->fd, o->exists ? o->st.st_mode & 07777 : new_file_mode()) != 0)
		keep_error(o, errno);
	if (close(o->fd) != 0)
		keep_error(o, errno);
	o->fd = -1;
	if (o->err) {
		int e = o->err;
		cli_out_discard(o);
		return failed(o, "cannot write", o->name, e);
	}
	return 0;
}

/* The rename, then the directory synced.  0 or the exit code. */
static int place(cli_out *o)
{
	if (o->to_stdout) {
		o->renamed = 1;
		return 0;
	}
	if (rename(o->tmp, o->target) != 0) {
		int e = errno;
		cli_out_discard(o);
		return failed(o, "cannot rename a temporary file to", o->target, e);
	}
	cli_temp_unregister(o->slot);
	o->slot = -1;
	free(o->tmp);
	o->tmp = NULL;
	o->renamed = 1;
	sync_dir_of(o->target); /* the rename is durable once the directory is synced */
	return 0;
}

int cli_out_commit(cli_out *o)
{
	int rc = finish(o);

	return rc ? rc : place(o);
}

int cli_out_commit_all(cli_out *const *o, size_t n)
{
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++)
		rc = finish(o[i]);
	for (size_t i = 0; i < n && !rc; i++)
		rc = place(o[i]);
	if (rc)
		for (size_t i = 0; i < n; i++) {
			if (o[i]->renamed && !o[i]->to_stdout)
				unlink(o[i]->target);
			o[i]->renamed = 0;
			cli_out_discard(o[i]);
		}
	return rc;
}

void cli_out_discard(cli_out *o)
{
	close_stream(o);
	if (!o->to_stdout && o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp)
		unlink(o->tmp);
	cli_temp_unregister(o->slot);
	o->slot = -1;
	free(o->tmp);
	o->tmp = NULL;
}

void cli_out_free(cli_out *o)
{
	cli_out_discard(o);
	free(o->target);
	free(o->id_base);
	o->target = o->id_base = NULL;
}

int cli_out_same(const cli_out *a, const cli_out *b)
{
	if (a->id_dev != b->id_dev || a->id_ino != b->id_ino)
		return 0;
	if (!a->id_base || !b->id_base)
		return !a->id_base && !b->id_base;
	return !strcmp(a->id_base, b->id_base);
}

/* ------------------------------------------------------- a set in a directory */

static int dir_failed(const cli_out_dir *d, const char *what, int e)
{
	fprintf(stderr, "nbg %s: %s: %s %s: %s\n", d->cmd, nbg_code_name(NBG_E_IO), what,
		cli_esc(d->name), strerror(e));
	return NBG_EXIT_IO;
}

/* DIR (a link resolved): a new name, or an existing directory that is not
 * the working one. */
static int dir_resolve(cli_out_dir *d)
{
	struct stat st, cwd;
	size_t n;
	int root;

	if (lstat(d->name, &st) != 0) {
		if (errno != ENOENT)
			return dir_failed(d, "cannot examine", errno);
		if (!(d->target = strdup(d->name)))
			return dir_failed(d, "cannot write", ENOMEM);
		for (n = strlen(d->target); n > 1 && d->target[n - 1] == '/';)
			d->target[--n] = '\0'; /* "out/": the directory out */
		return 0;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
		fprintf(stderr, "nbg %s: %s: %s is %s, not a directory: refused, left as it is\n",
			d->cmd, nbg_code_name(NBG_E_NOT_REGULAR_FILE), cli_esc(d->name),
			S_ISREG(st.st_mode) ? "a regular file" : kind_of(st.st_mode));
		return NBG_EXIT_IO;
	}
	if (!(d->target = realpath(d->name, NULL)) || stat(d->target, &st) != 0 ||
	    !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "nbg %s: %s: %s is a symbolic link to no directory: refused, left "
				"as it is\n", d->cmd, nbg_code_name(NBG_E_NOT_REGULAR_FILE),
			cli_esc(d->name));
		return NBG_EXIT_IO;
	}
	root = !strcmp(d->target, "/");
	if (root || (stat(".", &cwd) == 0 && cwd.st_dev == st.st_dev && cwd.st_ino == st.st_ino)) {
		fprintf(stderr, "nbg %s: %s is the %s directory, which the set would replace "
				"whole: refused (name a directory for the set alone)\n", d->cmd,
			cli_esc(d->name), root ? "root" : "working");
		return NBG_EXIT_IO;
	}
	d->exists = 1;
	d->st = st;
	return 0;
}

/* Every entry of the existing DIR is a regular file of the command's own
 * (an earlier set): 0, or the refusal printed. */
static int dir_entries_mine(const cli_out_dir *d, int (*mine)(const char *name))
{
	DIR *dir = opendir(d->target);
	struct dirent *e;
	struct stat st;
	int rc = 0;

	if (!dir)
		return dir_failed(d, "cannot read the directory", errno);
	while (!rc && (e = readdir(dir)) != NULL) {
		if (cli_dot_name(e->d_name))
			continue;
		if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			rc = dir_failed(d, "cannot examine an entry of", errno);
			break;
		}
		if (S_ISREG(st.st_mode) && mine(e->d_name))
			continue;
		if (!S_ISREG(st.st_mode))
			fprintf(stderr, "nbg %s: %s: %s/%s is %s: refused, %s left as it is (the set "
					"replaces the directory whole)\n", d->cmd,
				nbg_code_name(NBG_E_NOT_REGULAR_FILE), cli_esc(d->name),
				cli_esc(e->d_name), kind_of(st.st_mode), cli_esc(d->name));
		else
			fprintf(stderr, "nbg %s: %s: %s holds %s, a file nbg %s does not write: "
					"refused, left as it is (the set replaces the directory whole: "
					"name a new or empty directory, or one nbg %s wrote)\n", d->cmd,
				nbg_code_name(NBG_E_IO), cli_esc(d->name), cli_esc(e->d_name),
				d->cmd, d->cmd);
		rc = NBG_EXIT_IO;
	}
	closedir(dir);
	return rc;
}

int cli_out_dir_open(cli_out_dir *d, const char *cmd, const char *path,
		     int (*mine)(const char *name))
{
	int rc;

	memset(d, 0, sizeof(*d));
	d->name = path;
	d->cmd = cmd;
	d->mine = mine;
	d->fd = -1;
	d->slot = -1;
	signal(SIGXFSZ, SIG_IGN);
	if ((rc = dir_resolve(d)) != 0 || (d->exists && (rc = dir_entries_mine(d, mine)) != 0)) {
		cli_out_dir_discard(d);
		return rc;
	}
	if (!(d->stage = hidden_beside(d->target, NULL)) ||
	    (d->fd = create_registered(d->stage, 1, &d->slot)) < 0) {
		int e = d->stage ? errno : ENOMEM;
		free(d->stage);
		d->stage = NULL;
		fprintf(stderr, "nbg %s: %s: cannot create a directory beside %s: %s\n", cmd,
			nbg_code_name(NBG_E_IO), cli_esc(path), strerror(e));
		cli_out_dir_discard(d);
		return NBG_EXIT_IO;
	}
	return 0;
}

int cli_out_dir_write(cli_out_dir *d, const char *name, const void *p, size_t n)
{
	int fd = openat(d->fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	int e = fd < 0 ? errno : cli_write_all(fd, p, n);

	if (!e && fsync(fd) != 0)
		e = errno;
	if (!e && d->exists && geteuid() == 0 && fchown(fd, d->st.st_uid, d->st.st_gid) != 0)
		e = errno;
	if (fd >= 0 && close(fd) != 0 && !e)
		e = errno;
	if (e) {
		fprintf(stderr, "nbg %s: %s: cannot write %s/%s: %s\n", d->cmd, nbg_code_name(NBG_E_IO),
			cli_esc(d->name), cli_esc(name), strerror(e));
		cli_out_dir_discard(d);
		return NBG_EXIT_IO;
	}
	return 0;
}

/* Removes the files of the directory at `path`, then the directory (a set:
 * files only); with `mine`, only the regular files it accepts (an earlier
 * set replaced: a file someone put there since the check stays, and so
 * does the directory).  0 or the errno of what failed. */
static int remove_set(const char *path, int (*mine)(const char *name))
{
	DIR *dir = opendir(path);
	struct dirent *e;
	struct stat st;
	int err = 0;

	if (!dir)
		return errno;
	while ((e = readdir(dir)) != NULL) {
		if (cli_dot_name(e->d_name))
			continue;
		if (mine && (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
			     !S_ISREG(st.st_mode) || !mine(e->d_name)))
			continue;
		if (unlinkat(dirfd(dir), e->d_name, 0) != 0 && !err)
			err = errno;
	}
	closedir(dir);
	return rmdir(path) != 0 && !err ? errno : err;
}

/* The set in DIR's place, signals held by the caller: 0 or the errno.  The
 * earlier set (if any) is then at d->stage; a new DIR leaves no stage. */
static int dir_swap(cli_out_dir *d)
{
	char *aside;
	int e;

	if (!d->exists) {
		if (rename(d->stage, d->target) != 0)
			return errno;
		free(d->stage);
		d->stage = NULL;
		return 0;
	}
	if (renameat2(AT_FDCWD, d->stage, AT_FDCWD, d->target, RENAME_EXCHANGE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
		return errno;
	/* no exchange on this file system: DIR aside (onto an empty directory
	 * made for it), then the set in; the earlier set is removed from aside */
	if (!(aside = hidden_beside(d->target, "old")))
		return ENOMEM;
	if (!mkdtemp(aside) || rename(d->target, aside) != 0) {
		e = errno;
		rmdir(aside);
		free(aside);
		return e;
	}
	if (rename(d->stage, d->target) != 0) {
		e = errno;
		rename(aside, d->target);
		free(aside);
		return e;
	}
	free(d->stage);
	d->stage = aside;
	return 0;
}

int cli_out_dir_commit(cli_out_dir *d)
{
	mode_t mode = d->exists ? d->st.st_mode & 07777 : 0777 & ~current_umask();
	sigset_t old;
	int e = 0;

	if (d->exists && geteuid() == 0 && fchown(d->fd, d->st.st_uid, d->st.st_gid) != 0)
		e = errno; /* before fchmod: chown clears the set-id bits */
	if (!e && fchmod(d->fd, mode) != 0)
		e = errno;
	if (!e && fsync(d->fd) != 0)
		e = errno;
	if (!e) {
		hold_signals(1, &old);
		e = dir_swap(d);
		hold_signals(0, &old);
	}
	if (e) {
		fprintf(stderr, "nbg %s: %s: cannot put the new set in the place of %s: %s\n",
			d->cmd, nbg_code_name(NBG_E_IO), cli_esc(d->name), strerror(e));
		cli_out_dir_discard(d);
		return NBG_EXIT_IO;
	}
	sync_dir_of(d->target);
	if (d->stage && (e = remove_set(d->stage, d->mine)) != 0)
		fprintf(stderr, "nbg %s: the earlier set could not all be removed (%s): %s is left\n",
			d->cmd, strerror(e), cli_esc(d->stage));
	free(d->stage);
	d->stage = NULL;
	cli_out_dir_discard(d);
	return 0;
}

void cli_out_dir_discard(cli_out_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	if (d->stage)
		remove_set(d->stage, NULL);
	cli_temp_unregister(d->slot);
	d->slot = -1;
	free(d->stage);
	free(d->target);
	d->stage = d->target = NULL;
}
