/*
 * corpus_io.c - the file list of `nbg corpus` and whole-file reads that
 * never open a FIFO or device.  Its output files (records, manifests) are
 * written through the one output writer (cli_out.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corpus_cli.h"

int corpus_list_add(corpus_list *l, const char *path, size_t len, const uint64_t *size,
		    const uint8_t *sha256)
{
	if (l->n == l->cap_e) {
		size_t cap = l->cap_e ? l->cap_e * 2 : 1024;
		corpus_entry *e = realloc(l->e, cap * sizeof(*e));
		if (!e)
			return !(l->oom = 1);
		l->e = e;
		l->cap_e = cap;
	}
	if (l->cap - l->used < len + 1) {
		size_t cap = l->cap ? l->cap : 65536;
		while (cap - l->used < len + 1)
			cap *= 2;
		char *a = realloc(l->arena, cap);
		if (!a)
			return !(l->oom = 1);
		l->arena = a;
		l->cap = cap;
	}
	corpus_entry *e = &l->e[l->n++];
	memset(e, 0, sizeof(*e));
	e->path = l->used;
	memcpy(l->arena + l->used, path, len);
	l->arena[l->used + len] = '\0';
	l->used += len + 1;
	if (size) {
		e->has_size = 1;
		e->size = *size;
		l->bytes += *size;
	}
	if (sha256) {
		e->has_sha256 = 1;
		memcpy(e->sha256, sha256, 32);
	}
	return 1;
}

const char *corpus_list_path(const corpus_list *l, size_t i)
{
	return l->arena + l->e[i].path;
}

void corpus_list_free(corpus_list *l)
{
	free(l->arena);
	free(l->e);
	memset(l, 0, sizeof(*l));
}

int corpus_read_file(const char *path, char **data, size_t *len)
{
	struct stat st;
	int fd, e;

	*data = NULL;
	*len = 0;
	if (stat(path, &st) != 0)
		return errno;
	if (!S_ISREG(st.st_mode))
		return EINVAL;
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0)
		return errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size >= SIZE_MAX / 2) {
		e = errno ? errno : EINVAL;
		close(fd);
		return e;
	}
	size_t cap = (size_t)st.st_size + 1, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		if (n == cap) {
			char *b = realloc(buf, cap * 2 + 1);
			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			e = r < 0 ? errno : 0;
			close(fd);
			if (e) {
				free(buf);
				return e;
			}
			buf[n] = '\0';
			*data = buf;
			*len = n;
			return 0;
		}
		n += (size_t)r;
	}
	free(buf);
	close(fd);
	return ENOMEM;
}
