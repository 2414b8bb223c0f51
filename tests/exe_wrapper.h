/*
 * exe_wrapper.h - tests that start a program of this build themselves
 * (the nbg binary, or the test binary again) start it the way meson starts
 * the test: through the exe wrapper of a cross build.
 *
 * In a cross build (cross/aarch64-linux-gnu.ini, say) meson runs every
 * compiled test under the cross file's exe_wrapper (qemu-aarch64 -L ...) and
 * names that wrapper in MESON_EXE_WRAPPER, as shell words.  A child the test
 * starts is an aarch64 binary too, and the kernel runs it only where
 * binfmt_misc has qemu registered for it; going through the wrapper works
 * without.  In a native build the variable is unset and nothing changes.
 */
#ifndef NBG_TESTS_EXE_WRAPPER_H
#define NBG_TESTS_EXE_WRAPPER_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The wrapper as shell words, or NULL in a native build. */
static inline const char *nbg_exe_wrapper(void)
{
	const char *w = getenv("MESON_EXE_WRAPPER");
	return w && *w ? w : NULL;
}

/* The wrapper and a space, to put before a program in a shell command line
 * (system, popen); "" in a native build. */
static inline const char *nbg_exe_wrapper_prefix(void)
{
	static char *prefix;
	const char *w = nbg_exe_wrapper();
	if (!w)
		return "";
	if (!prefix) {
		size_t n = strlen(w);
		prefix = malloc(n + 2);
		if (!prefix)
			abort();
		memcpy(prefix, w, n);
		memcpy(prefix + n, " ", 2);
	}
	return prefix;
}

/* execv(path, argv), through the wrapper if there is one: the shell splits
 * the wrapper's words as meson quoted them and passes path and argv[1..] on
 * unchanged.  Returns only on failure, as execv does. */
static inline int nbg_execv(const char *path, char *const argv[])
{
	const char *w = nbg_exe_wrapper();
	size_t n = 0;
	char **a;

	if (!w)
		return execv(path, argv);
	while (argv[n])
		n++;
	a = calloc(n + 5, sizeof(*a));
	if (!a)
		return -1;
	a[0] = "sh";
	a[1] = "-c";
	a[2] = "eval \"exec $MESON_EXE_WRAPPER \\\"\\$@\\\"\"";
	a[3] = "sh";
	a[4] = (char *)path;
	for (size_t i = 1; i < n; i++)
		a[4 + i] = argv[i];
	execv("/bin/sh", a);
	free(a);
	return -1;
}

#endif
