/*
 * mapfile.c - read-only file mapping.  Inputs larger than memory work
 * through the page cache; nothing is copied.  nbg_read_file reads a file
 * into memory instead, for a process that cannot survive a mapping cut
 * short (one without the SIGBUS guard).
 *
 * Only regular files are read.  The path is stat()ed before anything opens
 * it, so a FIFO never blocks, a terminal never becomes the controlling one
 * and no device driver sees an open(); the open itself adds O_NONBLOCK and
 * O_NOCTTY for the file swapped in between, and fstat() checks that what was
 * opened is the same regular file.  The mapping is registered with the
 * SIGBUS guard (guard.c) so that a file truncated while mapped is reported
 * (nbg_mapping_changed) instead of killing the process.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/escape.h"
#include "common/guard.h"

static nbg_code map_fail(nbg_error *err, const char *path, const char *what)
{
	int e = errno;
	nbg_path_text t;

	nbg_error_io(err, e, 0, "file", "cannot %s %s", what, nbg_path_text_of(&t, path));
	errno = e;
	return NBG_E_IO;
}

const char *nbg_file_kind(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFDIR: return "a directory";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	case S_IFLNK: return "a symbolic link";
	default: return "not a regular file";
	}
}

static nbg_code not_regular(nbg_error *err, const char *path, unsigned mode)
{
	nbg_path_text t;

	return nbg_error_set(err, NBG_E_NOT_REGULAR_FILE, 0, "file",
			     "%s is %s, not a regular file: not opened (nbg reads regular "
			     "files, or - for standard input)",
			     nbg_path_text_of(&t, path), nbg_file_kind(mode));
}

/* Opens path read-only when it is a regular file, checked before the open
 * and after it (the same file): *fd and *st, or the failure. */
static nbg_code open_regular(const char *path, nbg_mapping *m, int *fd, struct stat *st,
			     nbg_error *err)
{
	struct stat before;

	if (!m || !path) {
		if (m)
			memset(m, 0, sizeof(*m));
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "path",
				     "no path or mapping was given");
	}
	memset(m, 0, sizeof(*m));
	if (stat(path, &before) != 0)
		return map_fail(err, path, "open");
	if (!S_ISREG(before.st_mode))
		return not_regular(err, path, before.st_mode);
	*fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (*fd < 0)
		return map_fail(err, path, "open");
	if (fstat(*fd, st) != 0) {
		nbg_code rc = map_fail(err, path, "stat");
		close(*fd);
		return rc;
	}
	if (!S_ISREG(st->st_mode) || st->st_dev != before.st_dev || st->st_ino != before.st_ino) {
		close(*fd);
		return S_ISREG(st->st_mode) ? (errno = EAGAIN, map_fail(err, path,
						"open (it was replaced while being opened)"))
					    : not_regular(err, path, st->st_mode);
	}
	if ((uint64_t)st->st_size > SIZE_MAX) {
		close(*fd);
		errno = EFBIG;
		return map_fail(err, path, "map");
	}
	return NBG_OK;
}

nbg_code nbg_map_file(const char *path, nbg_mapping *m, nbg_error *err)
{
	struct stat st;
	int fd;
	nbg_code rc = open_regular(path, m, &fd, &st, err);

	if (rc != NBG_OK)
		return rc;
	if (st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			rc = map_fail(err, path, "map");
			close(fd);
			return rc;
		}
		madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
		nbg_guard_map_add(p, (size_t)st.st_size);
		m->priv_base = p;
		m->priv_len = (size_t)st.st_size;
		m->data = p;
		m->size = (size_t)st.st_size;
	} else {
		static const uint8_t empty[1];
		m->data = empty;
	}
	close(fd);
	return NBG_OK;
}

/* Reads fd's n bytes into a new buffer: *out, or the failure (a file that
 * ends early shrank while it was read: FILE_CHANGED). */
static nbg_code read_all(int fd, const char *path, size_t n, uint8_t **out, nbg_error *err)
{
	uint8_t *buf = malloc(n);
	size_t got = 0;
	nbg_path_text t;

	if (!buf)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory",
				     "out of memory reading %zu bytes of %s", n,
				     nbg_path_text_of(&t, path));
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			nbg_code rc = map_fail(err, path, "read");
			free(buf);
			return rc;
		}
		if (r == 0) {
			free(buf);
			return nbg_error_set(err, NBG_E_FILE_CHANGED, got, "file",
					     "%s shrank from %zu to %zu bytes while it was read "
					     "(another process truncated it)",
					     nbg_path_text_of(&t, path), n, got);
		}
		got += (size_t)r;
	}
	*out = buf;
	return NBG_OK;
}

nbg_code nbg_read_file(const char *path, uint64_t max, nbg_mapping *m, nbg_error *err)
{
	struct stat st;
	int fd;
	nbg_code rc = open_regular(path, m, &fd, &st, err);
	uint8_t *buf = NULL;
	nbg_path_text t;

	if (rc != NBG_OK)
		return rc;
	if (!max)
		max = NBG_DEFAULT_MAX_STDIN;
	if ((uint64_t)st.st_size > max)
		rc = nbg_error_set(err, NBG_E_INPUT_TOO_LARGE, max, "file",
				   "%s holds %llu bytes, more than %llu, the bound for a file "
				   "read into memory: map it instead",
				   nbg_path_text_of(&t, path), (unsigned long long)st.st_size,
				   (unsigned long long)max);
	else if (st.st_size > 0)
		rc = read_all(fd, path, (size_t)st.st_size, &buf, err);
	close(fd);
	if (rc != NBG_OK)
		return rc;
	if (!buf) {
		static const uint8_t empty[1];
		m->data = empty;
		return NBG_OK;
	}
	m->priv_base = buf; /* priv_len 0: heap memory, freed by nbg_unmap_file */
	m->data = buf;
	m->size = (size_t)st.st_size;
	return NBG_OK;
}

void nbg_unmap_file(nbg_mapping *m)
{
	if (!m)
		return;
	if (m->priv_base && m->priv_len) {
		nbg_guard_map_remove(m->priv_base);
		munmap(m->priv_base, m->priv_len);
	} else if (m->priv_base) {
		free(m->priv_base); /* read from standard input (input.c) */
	}
	memset(m, 0, sizeof(*m));
}
