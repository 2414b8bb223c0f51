/*
 * mapfile.c - read-only file mapping.  Inputs larger than memory work
 * through the page cache; nothing is copied.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/internal.h"

static nbg_code map_fail(nbg_error *err, const char *path, const char *what)
{
	int e = errno;

	nbg_error_io(err, e, 0, "file", "cannot %s %s", what, path);
	errno = e;
	return NBG_E_IO;
}

nbg_code nbg_map_file(const char *path, nbg_mapping *m, nbg_error *err)
{
	struct stat st;
	int fd;

	memset(m, 0, sizeof(*m));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return map_fail(err, path, "open");
	if (fstat(fd, &st) != 0) {
		nbg_code rc = map_fail(err, path, "stat");
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return map_fail(err, path, "map (not a regular file)");
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
	if (m->priv_base)
		munmap(m->priv_base, m->priv_len);
	memset(m, 0, sizeof(*m));
}
