/*
 * shrink_preload.c - LD_PRELOAD shim for tests/test_hostile.c and
 * tests/test_hostile_weights.c: right after the nbg command maps a file
 * whose name ends in "shrink.nb", the file is truncated to 64 bytes, as
 * another process could do at any moment.  This makes "truncated while
 * mapped" deterministic for the command-line tests.  Likewise right before
 * a read() of a file whose name ends in "shrink-on-read.nb" (the Python
 * package's tests: a file cut short while it is read into memory).  A
 * mapped file whose name ends in "shrinks-late.nb" is truncated later:
 * right after the Nth stat() of it returned (N from NBG_SHRINK_AFTER_STAT,
 * default 1), so that the command's check after the parse (which stats the
 * file) still sees it whole and what the command reads afterwards is
 * zeros: points counted in the command's own steps, not in time.
 */
#undef _FILE_OFFSET_BITS /* define mmap and mmap64 (stat, stat64) both, not one renamed */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define SHIM __attribute__((visibility("default")))
SHIM void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
SHIM void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off);
SHIM ssize_t read(int fd, void *buf, size_t len);
SHIM int stat(const char *path, struct stat *st);
SHIM int stat64(const char *path, struct stat64 *st);

static int late_mapped, late_stats; /* a "shrinks-late.nb" was mapped; stats of it since */
static __thread int in_stat; /* a stat inside a stat (a sanitizer's) is not counted again */

static void *(*real_mmap(void))(void *, size_t, int, int, int, off_t)
{
	static void *(*fn)(void *, size_t, int, int, int, off_t);
	if (!fn)
		*(void **)&fn = dlsym(RTLD_NEXT, "mmap");
	return fn;
}

static int ends_with(const char *s, const char *tail)
{
	size_t k = strlen(s), t = strlen(tail);
	return k >= t && !strcmp(s + k - t, tail);
}

/* The file descriptor fd names, else "". */
static void fd_name(int fd, char name[PATH_MAX])
{
	char link[64];
	ssize_t n;

	name[0] = '\0';
	if (fd < 0)
		return;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, name, PATH_MAX - 1);
	name[n > 0 ? n : 0] = '\0';
}

static void maybe_shrink(int fd, const char *suffix)
{
	char name[PATH_MAX];

	fd_name(fd, name);
	if (*name && ends_with(name, suffix))
		(void)truncate(name, 64);
}

SHIM void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = real_mmap()(addr, len, prot, flags, fd, off);
	char name[PATH_MAX];

	if (p != MAP_FAILED) {
		maybe_shrink(fd, "shrink.nb");
		fd_name(fd, name);
		if (ends_with(name, "shrinks-late.nb"))
			late_mapped = 1;
	}
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

/* After a stat of `path` returned: the Nth since the mapping truncates it. */
static void after_stat(const char *path)
{
	const char *n = getenv("NBG_SHRINK_AFTER_STAT");

	if (late_mapped && path && ends_with(path, "shrinks-late.nb") &&
	    ++late_stats == (n && *n ? atoi(n) : 1))
		(void)truncate(path, 64);
}

/* stat and stat64 alike: the real one, then after_stat at the outermost call. */
#define STAT_SHIM(name, type)                                                              \
	SHIM int name(const char *path, type *st)                                          \
	{                                                                                  \
		static int (*fn)(const char *, type *);                                    \
		if (!fn)                                                                   \
			*(void **)&fn = dlsym(RTLD_NEXT, #name);                           \
		in_stat++;                                                                 \
		int r = fn(path, st);                                                      \
		if (!--in_stat)                                                            \
			after_stat(path);                                                  \
		return r;                                                                  \
	}

STAT_SHIM(stat, struct stat)
STAT_SHIM(stat64, struct stat64)
