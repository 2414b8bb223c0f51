/*
 * fdio.h - complete writes to a file descriptor.  Private to libnbg.  The
 * library writes to descriptors (or returns strings) only; which file an
 * output becomes, and how it is replaced, is the program's business
 * (nbg: programs/cli_out.c, doc/security.md).
 */
#ifndef NBG_COMMON_FDIO_H
#define NBG_COMMON_FDIO_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"

/* Writes all n bytes (retrying short writes and EINTR); false with errno. */
NBG_INTERNAL bool nbg_write_all(int fd, const void *p, uint64_t n);

#endif
