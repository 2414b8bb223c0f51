/*
 * fdio.c - complete writes to a file descriptor.
 */
#include <errno.h>
#include <unistd.h>

#include "common/fdio.h"

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
