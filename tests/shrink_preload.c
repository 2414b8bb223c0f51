/*
 * shrink_preload.c - LD_PRELOAD shim for tests/test_hostile.c: right after
 * the nbg command maps a file whose name ends in "shrink.nb", the file is
 * truncated to 64 bytes, as another process could do at any moment.  This
 * makes "truncated while mapped" deterministic for the command-line tests.
 * Likewise right before a read() of a file whose name ends in
 * "shrink-on-read.nb" (the Python package's tests: a file cut short while
 * it is read into memory).
 */
#undef _FILE_OFFSET_BITS /* define mmap and mmap64 both, not one renamed */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#define SHIM __attribute__((visibility("default")))
SHIM void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
SHIM void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off);
SHIM ssize_t read(int fd, void *buf, size_t len);

static void *(*real_mmap(void))(void *, size_t, int, int, int, off_t)
{
	static void *(*fn)(void *, size_t, int, int, int, off_t);
	if (!fn)
		*(void **)&fn = dlsym(RTLD_NEXT, "mmap");
	return fn;
}

static void maybe_shrink(int fd, const char *suffix)
{
	char link[64], name[PATH_MAX];
	ssize_t n;
	size_t k;

	if (fd < 0)
		return;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, name, sizeof(name) - 1);
	if (n <= 0)
		return;
	name[n] = '\0';
	k = strlen(name);
	if (k >= strlen(suffix) && !strcmp(name + k - strlen(suffix), suffix))
		(void)truncate(name, 64);
}

SHIM void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = real_mmap()(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED)
		maybe_shrink(fd, "shrink.nb");
	return p;
}

SHIM void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	return mmap(addr, len, prot, flags, fd, (off_t)off);
}

SHIM ssize_t read(int fd, void *buf, size_t len)
{
	static ssize_t (*fn)(int, void *, size_t);
	if (!fn)
		*(void **)&fn = dlsym(RTLD_NEXT, "read");
	maybe_shrink(fd, "shrink-on-read.nb");
	return fn(fd, buf, len);
}
