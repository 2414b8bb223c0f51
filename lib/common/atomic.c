/*
 * atomic.c - writing an output file so that it either appears whole or not
 * at all: a temporary next to the target, fsync, an optional read-back
 * check, the target's mode, rename, directory fsync; the temporary is
 * removed on every failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic.h"

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

/* Mode for a new output: an existing target's, else 0666 less the umask,
 * read without changing it (umask() would race other threads). */
static mode_t output_mode(const char *path)
{
	struct stat st;
	mode_t um = 022;
	FILE *f;
	char line[128];

	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		return st.st_mode & 07777;
	f = fopen("/proc/self/status", "r");
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

nbg_code nbg_atomic_write(const char *path, nbg_emit_fn emit, nbg_emit_fn verify, void *ctx,
			  nbg_error *err)
{
	size_t n = strlen(path);
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
	char *tmp = malloc(n + 16), *dir = NULL;
	nbg_code rc;
	int fd, e;

	if (!tmp)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	/* Hidden name next to the target: same file system, so rename is atomic. */
	memcpy(tmp, path, dlen);
	snprintf(tmp + dlen, n + 16 - dlen, ".%s.XXXXXX", path + dlen);
	fd = mkstemp(tmp);
	if (fd < 0) {
		e = errno;
		rc = nbg_error_io(err, e, 0, "output", "cannot create a temporary file next to %s", path);
		free(tmp);
		return rc;
	}
	rc = emit(fd, ctx, err);
	if (rc == NBG_OK && fsync(fd) != 0) {
		e = errno;
		rc = nbg_error_io(err, e, 0, "output", "cannot sync %s", tmp);
	}
	if (rc == NBG_OK && verify)
		rc = verify(fd, ctx, err);
	if (rc == NBG_OK && fchmod(fd, output_mode(path)) != 0) {
		e = errno;
		rc = nbg_error_io(err, e, 0, "output", "cannot set the mode of %s",
			   tmp);
	}
	if (close(fd) != 0 && rc == NBG_OK) {
		e = errno;
		rc = nbg_error_io(err, e, 0, "output", "cannot close %s", tmp);
	}
	if (rc == NBG_OK && rename(tmp, path) != 0) {
		e = errno;
		rc = nbg_error_io(err, e, 0, "output", "cannot rename %s to %s", tmp,
			   path);
	}
	if (rc != NBG_OK) {
		unlink(tmp);
		free(tmp);
		return rc;
	}
	/* The rename is durable once the directory is synced (best effort). */
	dir = malloc(dlen + 2);
	if (dir) {
		if (dlen)
			memcpy(dir, path, dlen);
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
	free(tmp);
	return NBG_OK;
}
