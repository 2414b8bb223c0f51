/*
 * input.c - one input path, read safely: "-" is standard input, read into
 * memory up to a bound (a pipe cannot be mapped); anything else goes through
 * nbg_map_file (regular files only, never blocking, guarded against
 * truncation).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/internal.h"

#define NBG_STDIN_CHUNK ((size_t)1 << 20)

static nbg_code read_stdin(uint64_t max, nbg_mapping *m, nbg_error *err)
{
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		if (cap - len < NBG_STDIN_CHUNK) {
			size_t ncap = cap ? cap * 2 : 4 * NBG_STDIN_CHUNK;
			uint8_t *nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, len, "memory",
						     "out of memory reading standard input");
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t r = read(STDIN_FILENO, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			return nbg_error_io(err, e, len, "file", "cannot read standard input");
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > max) {
			free(buf);
			return nbg_error_set(err, NBG_E_INPUT_TOO_LARGE, max, "file",
					     "standard input holds more than %llu bytes, the bound "
					     "for input read into memory: give the file's path "
					     "instead, or raise NBG_MAX_STDIN",
					     (unsigned long long)max);
		}
	}
	if (!len) {
		static const uint8_t empty[1];
		free(buf);
		m->data = empty;
		return NBG_OK;
	}
	m->priv_base = buf; /* priv_len 0: heap memory, freed by nbg_unmap_file */
	m->data = buf;
	m->size = len;
	return NBG_OK;
}

nbg_code nbg_read_input(const char *path, uint64_t max_stdin, nbg_mapping *m, nbg_error *err)
{
	if (!path || !m)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "file",
				     "nbg_read_input needs a path and a mapping");
	if (strcmp(path, "-"))
		return nbg_map_file(path, m, err);
	memset(m, 0, sizeof(*m));
	if (err)
		memset(err, 0, sizeof(*err));
	return read_stdin(max_stdin ? max_stdin : NBG_DEFAULT_MAX_STDIN, m, err);
}
