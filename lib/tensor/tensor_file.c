/*
 * tensor_file.c - writing a tensor file all or nothing (a temporary next to
 * the target, fsync, rename), so a failed conversion never leaves a
 * partial file where a user expects a tensor.
 */
#include <errno.h>
#include <stdint.h>

#include "common/atomic.h"
#include "common/internal.h"
#include "nbg/tensor.h"

typedef struct bytes {
	const void *data;
	size_t size;
} bytes;

static nbg_code emit_bytes(int fd, void *ctx, nbg_error *err)
{
	const bytes *b = ctx;
	if (!nbg_write_all(fd, b->data, b->size))
		return nbg_error_io(err, errno, 0, "output", "cannot write %zu bytes", b->size);
	return NBG_OK;
}

nbg_code nbg_tensor_write_file(const char *path, const void *data, size_t size, nbg_error *err)
{
	if (!path || !*path || (!data && size))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "",
				     "tensor: no output path or no data given");
	bytes b = { data, size };
	return nbg_atomic_write(path, emit_bytes, NULL, &b, err);
}
