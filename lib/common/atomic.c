/*
 * atomic.c - writing an output file so that it either appears whole or not
 * at all: a temporary next to the target, fsync, an optional read-back
 * check, the target's mode (and owner, as root), rename, directory fsync;
 * the temporary is removed on every failure and, once the program called
 * nbg_install_signal_guards(), when SIGINT, SIGTERM or SIGHUP end it.
 *
 * What OUT may be (doc/security.md): a new name; a regular file, replaced
 * (a hard link to it keeps the old content, as with any replace-by-rename);
 * a symbolic link to a regular file, which is written through (the file it
 * names is replaced, the link stays).  Anything else -- a device node, FIFO,
 * socket, directory, a link to one of those or a dangling link -- is refused
 * with NBG_E_NOT_REGULAR_FILE and left as it is.  "-" and /dev/stdout write
 * standard output.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic.h"
#include "common/escape.h"
#include "common/guard.h"

bool nbg_write_all(int fd, const void *buf, uint64_t n)
{
	const uint8_t *p = buf;

	while (n) {
		size_t k = n > ((size_t)1 << 30) ? (size_t)1 << 30 : (size_t)n;
		ssize_t w = write(fd, p, k);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		if (w == 0) {
			errno = ENOSPC;
			return false;
		}
		p += w;
		n -= (uint64_t)w;
	}
	return true;
}

/* 0666 less the umask, read without changing it (umask() would race other
 * threads). */
static mode_t new_file_mode(void)
{
	mode_t um = 022;
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "Umask:", 6)) {
				um = (mode_t)strtoul(line + 6, NULL, 8);
				break;
			}
		fclose(f);
	}
	return 0666 & ~um;
}

/* The file to replace for OUT `path`: itself, or what a symbolic link
 * names; *st its status (st_mode 0 for a new file).  malloc'd; NULL with
 * err filled when OUT is refused. */
static char *output_target(const char *path, struct stat *st, nbg_error *err)
{
	nbg_path_text t;
	char *target;

	memset(st, 0, sizeof(*st));
	if (lstat(path, st) != 0) {
		if (errno != ENOENT) {
			nbg_error_io(err, errno, 0, "output", "cannot stat %s",
				     nbg_path_text_of(&t, path));
			return NULL;
		}
		memset(st, 0, sizeof(*st));
		target = strdup(path);
	} else if (S_ISREG(st->st_mode)) {
		target = strdup(path);
	} else if (S_ISLNK(st->st_mode)) {
		target = realpath(path, NULL);
		if (!target || stat(target, st) != 0) {
			nbg_error_set(err, NBG_E_NOT_REGULAR_FILE, 0, "output",
				      "%s is a symbolic link to nothing that exists: refused "
				      "(give the path of a regular file or a new name)",
				      nbg_path_text_of(&t, path));
			free(target);
			return NULL;
		}
		if (!S_ISREG(st->st_mode)) {
			nbg_error_set(err, NBG_E_NOT_REGULAR_FILE, 0, "output",
				      "%s is a symbolic link to %s, not to a regular file: "
				      "refused, left as it is", nbg_path_text_of(&t, path),
				      nbg_file_kind(st->st_mode));
			free(target);
			return NULL;
		}
	} else {
		nbg_error_set(err, NBG_E_NOT_REGULAR_FILE, 0, "output",
			      "%s is %s, not a regular file: refused, left as it is (nbg "
			      "writes regular files, or - for standard output)",
			      nbg_path_text_of(&t, path), nbg_file_kind(st->st_mode));
		return NULL;
	}
	if (!target)
		nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	return target;
}

nbg_code nbg_output_target(const char *path, char **target, nbg_error *err)
{
	struct stat st;

	if (!path || !target)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "output",
				     "nbg_output_target needs a path and a result pointer");
	*target = output_target(path, &st, err);
	return *target ? NBG_OK : err ? err->code : NBG_E_NOT_REGULAR_FILE;
}

int nbg_temp_register(const char *path)
{
	return path ? nbg_guard_temp_add(path) : -1;
}

void nbg_temp_unregister(int slot)
{
	nbg_guard_temp_remove(slot);
}

/* ".NAME.XXXXXX" next to target, NAME cut so the whole fits NAME_MAX. */
static char *temp_name(const char *target)
{
	const char *slash = strrchr(target, '/');
	size_t dlen = slash ? (size_t)(slash - target) + 1 : 0;
	size_t blen = strlen(target + dlen), keep = NAME_MAX - 8;
	char *tmp = malloc(dlen + NAME_MAX + 1);

	if (!tmp)
		return NULL;
	memcpy(tmp, target, dlen);
	snprintf(tmp + dlen, NAME_MAX + 1, ".%.*s.XXXXXX", (int)(blen < keep ? blen : keep),
		 target + dlen);
	return tmp;
}

/* mkstemp with INT/TERM/HUP held off until the name is registered, so no
 * signal can end the process between the two and leave the file. */
int nbg_temp_create(char *tmp, int *slot)
{
	sigset_t block, old;
	int fd, e;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	fd = mkstemp(tmp);
	e = errno;
	*slot = fd >= 0 ? nbg_guard_temp_add(tmp) : -1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return fd;
}

static void sync_dir_of(const char *target)
{
	const char *slash = strrchr(target, '/');
	size_t dlen = slash ? (size_t)(slash - target) + 1 : 0;
	char *dir = malloc(dlen + 2);

	if (!dir)
		return;
	if (dlen)
		memcpy(dir, target, dlen);
	else
		dir[dlen++] = '.';
	dir[dlen] = '\0';
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	free(dir);
}

/* Mode and, as root, owner of the file being replaced (a new file: 0666
 * less the umask). */
static nbg_code keep_attributes(int fd, const struct stat *st, const char *tmp,
				nbg_error *err)
{
	nbg_path_text t;

	if (st->st_mode && geteuid() == 0)
		(void)fchown(fd, st->st_uid, st->st_gid); /* before fchmod: chown clears set-id bits */
	if (fchmod(fd, st->st_mode ? st->st_mode & 07777 : new_file_mode()) != 0)
		return nbg_error_io(err, errno, 0, "output", "cannot set the mode of %s",
				    nbg_path_text_of(&t, tmp));
	return NBG_OK;
}

static nbg_code write_stdout(nbg_emit_fn emit, void *ctx, nbg_error *err)
{
	nbg_code rc = emit(STDOUT_FILENO, ctx, err);

	if (rc != NBG_OK && err) {
		static const char pre[] = "cannot write to standard output: ";
		size_t k = sizeof(pre) - 1, n = strnlen(err->message, sizeof(err->message) - 1 - k);
		memmove(err->message + k, err->message, n);
		memcpy(err->message, pre, k);
		err->message[k + n] = '\0';
	}
	/* A pipe or terminal cannot be synced; a file can and is. */
	if (rc == NBG_OK && fsync(STDOUT_FILENO) != 0 && errno != EINVAL && errno != EROFS)
		rc = nbg_error_io(err, errno, 0, "output", "cannot sync standard output");
	return rc;
}

nbg_code nbg_atomic_write(const char *path, nbg_emit_fn emit, nbg_emit_fn verify, void *ctx,
			  nbg_error *err)
{
	struct stat st;
	nbg_path_text t;
	char *target, *tmp;
	nbg_code rc;
	int fd, slot;

	/* /dev/stdout names a pipe or terminal as often as a file: the same
	 * as "-", written in place, never resolved and replaced. */
	if (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
		return write_stdout(emit, ctx, err);
	if (!(target = output_target(path, &st, err)))
		return err ? err->code : NBG_E_NOT_REGULAR_FILE;
	/* Hidden name next to the target: same file system, so rename is atomic. */
	if (!(tmp = temp_name(target))) {
		free(target);
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	}
	fd = nbg_temp_create(tmp, &slot);
	if (fd < 0) {
		rc = nbg_error_io(err, errno, 0, "output", "cannot create a temporary file next to %s",
				  nbg_path_text_of(&t, path));
		goto out;
	}
	rc = emit(fd, ctx, err);
	if (rc == NBG_OK && fsync(fd) != 0)
		rc = nbg_error_io(err, errno, 0, "output", "cannot sync %s", nbg_path_text_of(&t, tmp));
	if (rc == NBG_OK && verify)
		rc = verify(fd, ctx, err);
	if (rc == NBG_OK)
		rc = keep_attributes(fd, &st, tmp, err);
	if (close(fd) != 0 && rc == NBG_OK)
		rc = nbg_error_io(err, errno, 0, "output", "cannot close %s", nbg_path_text_of(&t, tmp));
	if (rc == NBG_OK && rename(tmp, target) != 0)
		rc = nbg_error_io(err, errno, 0, "output", "cannot rename the temporary to %s",
				  nbg_path_text_of(&t, target));
	if (rc != NBG_OK)
		unlink(tmp);
	nbg_guard_temp_remove(slot);
	if (rc == NBG_OK)
		sync_dir_of(target); /* the rename is durable once the directory is synced */
out:
	free(tmp);
	free(target);
	return rc;
}
