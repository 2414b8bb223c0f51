/*
 * mapfile.c - read-only file mapping.  Inputs larger than memory work
 * through the page cache; nothing is copied.
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

nbg_code nbg_map_file(const char *path, nbg_mapping *m, nbg_error *err)
{
	struct stat st, before;
	int fd;

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
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return map_fail(err, path, "open");
	if (fstat(fd, &st) != 0) {
		nbg_code rc = map_fail(err, path, "stat");
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode) || st.st_dev != before.st_dev || st.st_ino != before.st_ino) {
		close(fd);
		return S_ISREG(st.st_mode) ? (errno = EAGAIN, map_fail(err, path,
						"open (it was replaced while being opened)"))
					   : not_regular(err, path, st.st_mode);
	}
	if (st.st_size > 0) {
		if ((uint64_t)st.st_size > SIZE_MAX) {
			close(fd);
			errno = EFBIG;
			return map_fail(err, path, "map");
		}
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			nbg_code rc = map_fail(err, path, "map");
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
