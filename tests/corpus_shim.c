/*
 * corpus_shim.c - an LD_PRELOAD library for the corpus tests: it changes a
 * file while `nbg corpus` is reading it, the way another program on the
 * machine might, at exactly the moment a test needs.  The file is named by
 * the end of its path in environment variables:
 *   NBG_SHIM_TRUNCATE  cut to half its size just before its first read
 *   NBG_SHIM_VANISH    removed just before it is opened
 *   NBG_SHIM_EIO       its reads fail with EIO
 * Other files and programs are untouched.
 */
/* Both open and open64 are defined here, so neither may be renamed. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* The next definition of `name` (libc's), as a function pointer. */
static void next_fn(const char *name, void *fnp, size_t size)
{
	void *p = dlsym(RTLD_NEXT, name);
	memcpy(fnp, &p, size);
}

static int truncate_fd = -1, eio_fd = -1;
static char truncate_path[4096];

static int matches(const char *path, const char *var)
{
	const char *want = getenv(var);
	size_t a, b;
	if (!want || !*want || !path)
		return 0;
	a = strlen(path);
	b = strlen(want);
	return a >= b && !strcmp(path + a - b, want);
}

static int after_open(const char *path, int fd)
{
	if (fd >= 0 && matches(path, "NBG_SHIM_TRUNCATE")) {
		truncate_fd = fd;
		strncpy(truncate_path, path, sizeof(truncate_path) - 1);
	}
	if (fd >= 0 && matches(path, "NBG_SHIM_EIO"))
		eio_fd = fd;
	return fd;
}

typedef int (*open_fn)(const char *, int, ...);

static int do_open(const char *name, const char *path, int flags, mode_t mode)
{
	open_fn real;
	next_fn(name, &real, sizeof(real));
	if (matches(path, "NBG_SHIM_VANISH"))
		unlink(path);
	return after_open(path, real(path, flags, mode));
}

#define OPEN_WRAPPER(fn)                                      \
	EXPORT int fn(const char *path, int flags, ...)       \
	{                                                     \
		mode_t mode = 0;                              \
		if (flags & (O_CREAT | O_TMPFILE)) {          \
			va_list ap;                           \
			va_start(ap, flags);                  \
			mode = (mode_t)va_arg(ap, int);       \
			va_end(ap);                           \
		}                                             \
		return do_open(#fn, path, flags, mode);       \
	}

OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

typedef ssize_t (*read_fn)(int, void *, size_t);

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	read_fn real;
	next_fn("read", &real, sizeof(real));
	if (fd >= 0 && fd == eio_fd) {
		errno = EIO;
		return -1;
	}
	if (fd >= 0 && fd == truncate_fd) {
		struct stat st;
		truncate_fd = -1;
		if (stat(truncate_path, &st) == 0) {
			int r = truncate(truncate_path, st.st_size / 2);
			(void)r;
		}
	}
	return real(fd, buf, n);
}

EXPORT int close(int fd)
{
	int (*real)(int);
	next_fn("close", &real, sizeof(real));
	if (fd == eio_fd)
		eio_fd = -1;
	if (fd == truncate_fd)
		truncate_fd = -1;
	return real(fd);
}
