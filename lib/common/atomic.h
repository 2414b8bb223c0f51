/*
 * atomic.h - all-or-nothing output files and complete writes.  Private to
 * libnbg.
 */
#ifndef NBG_COMMON_ATOMIC_H
#define NBG_COMMON_ATOMIC_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"

/* Writes all n bytes (retrying short writes and EINTR); false with errno. */
NBG_INTERNAL bool nbg_write_all(int fd, const void *p, uint64_t n);

/* Writes the output through a file descriptor; returns NBG_OK or fills err. */
typedef nbg_code (*nbg_emit_fn)(int fd, void *ctx, nbg_error *err);

/*
 * Creates `path` atomically: emit() writes a hidden temporary in the same
 * directory, which is synced, checked by verify() (may be NULL; it gets the
 * same descriptor, opened read-write), given the target's mode (or 0666 less
 * the umask), renamed over the target, and the directory synced.  On any
 * failure the temporary is removed and the target is untouched.  Returns
 * NBG_OK, NBG_E_IO (err->sys_errno set), NBG_E_OUT_OF_MEMORY or what emit()
 * or verify() returned.
 */
NBG_INTERNAL nbg_code nbg_atomic_write(const char *path, nbg_emit_fn emit, nbg_emit_fn verify,
				       void *ctx, nbg_error *err);

#endif
