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
 *
 * LD_PRELOAD (the shims some tests put in front of nbg) is meant for the
 * program, not for the emulator: qemu-user is a host program, and the host
 * loader would try the aarch64 shim on it first and print "cannot be
 * preloaded".  Going through the wrapper, LD_PRELOAD is handed to qemu as
 * QEMU_SET_ENV=LD_PRELOAD=... (which qemu sets in the program's environment
 * only) and removed from the emulator's own.  QEMU_SET_ENV separates
 * variables with commas, so such a shim's path must not hold one.
 */
#ifndef NBG_TESTS_EXE_WRAPPER_H
#define NBG_TESTS_EXE_WRAPPER_H

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* The wrapper as shell words, or NULL in a native build. */
static inline const char *nbg_exe_wrapper(void)
{
	const char *w = getenv("MESON_EXE_WRAPPER");
	return w && *w ? w : NULL;
}

/* A shell snippet: LD_PRELOAD, if set, moves into QEMU_SET_ENV (above). */
#define NBG_EXE_WRAPPER_MOVE_PRELOAD                                                     \
	"if [ -n \"${LD_PRELOAD:-}\" ]; then "                                            \
	"QEMU_SET_ENV=\"LD_PRELOAD=$LD_PRELOAD${QEMU_SET_ENV:+,$QEMU_SET_ENV}\"; "        \
	"export QEMU_SET_ENV; unset LD_PRELOAD; fi; "

/* The wrapper and a space, to put before a program in a shell command line
 * (system, popen); "" in a native build.  The words only: for a command
 * line that is itself quoted (script -c "..."), with no LD_PRELOAD. */
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

/* As nbg_exe_wrapper_prefix(), for a command line that may set LD_PRELOAD
 * before the program ("LD_PRELOAD=shim.so <this>'nbg' ..."): the wrapper's
 * words behind a shell that moves LD_PRELOAD out of the emulator's way. */
static inline const char *nbg_exe_wrapper_shell(void)
{
	static char *prefix;
	static const char head[] = "sh -c '" NBG_EXE_WRAPPER_MOVE_PRELOAD "exec \"$@\"' sh ";
	const char *w = nbg_exe_wrapper();
	if (!w)
		return "";
	if (!prefix) {
		size_t n = strlen(w);
		prefix = malloc(sizeof(head) + n + 1);
		if (!prefix)
			abort();
		memcpy(prefix, head, sizeof(head) - 1);
		memcpy(prefix + sizeof(head) - 1, w, n);
		memcpy(prefix + sizeof(head) - 1 + n, " ", 2);
	}
	return prefix;
}

/* The argument vector that runs path with argv[1..] through the wrapper:
 * the shell splits the wrapper's words as meson quoted them and passes path
 * and argv[1..] on unchanged (LD_PRELOAD moved as above).  NULL when out of
 * memory; free() it. */
static inline char **nbg_wrapped_argv(const char *path, char *const argv[])
{
	size_t n = 0;
	char **a;

	while (argv[n])
		n++;
	a = calloc(n + 5, sizeof(*a));
	if (!a)
		return NULL;
	a[0] = "sh";
	a[1] = "-c";
	a[2] = NBG_EXE_WRAPPER_MOVE_PRELOAD "eval \"exec $MESON_EXE_WRAPPER \\\"\\$@\\\"\"";
	a[3] = "sh";
	a[4] = (char *)path;
	for (size_t i = 1; i < n; i++)
		a[4 + i] = argv[i];
	return a;
}

/* execv(path, argv), through the wrapper if there is one.  Returns only on
 * failure, as execv does. */
static inline int nbg_execv(const char *path, char *const argv[])
{
	char **a;

	if (!nbg_exe_wrapper())
		return execv(path, argv);
	a = nbg_wrapped_argv(path, argv);
	if (!a)
		return -1;
	execv("/bin/sh", a);
	free(a);
	return -1;
}

/* Starts path with argv (through the wrapper if there is one), its standard
 * output and error on /dev/null, and returns its pid, or -1.  posix_spawn
 * does not copy the parent's page tables as fork does: a test that has
 * grown a large heap (a sanitizer build's, with its quarantine) starts each
 * child in a fraction of the time. */
static inline pid_t nbg_spawn_quiet(const char *path, char *const argv[])
{
	extern char **environ;
	posix_spawn_file_actions_t fa;
	char **a = NULL;
	pid_t pid = -1;
	int ok;

	if (nbg_exe_wrapper() && !(a = nbg_wrapped_argv(path, argv)))
		return -1;
	if (posix_spawn_file_actions_init(&fa) != 0) {
		free(a);
		return -1;
	}
	ok = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0) == 0 &&
	     posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0) == 0 &&
	     posix_spawn(&pid, a ? "/bin/sh" : path, &fa, NULL, a ? a : argv, environ) == 0;
	posix_spawn_file_actions_destroy(&fa);
	free(a);
	return ok ? pid : -1;
}

/* Runs this test program again with argv (argv[0] its name), as the
 * current process: natively /proc/self/exe, under the wrapper the path the
 * emulator reports for it (the kernel's /proc/self/exe is the emulator).
 * Returns only on failure. */
static inline void nbg_exec_self(char *const argv[])
{
	char self[4096];
	ssize_t k;

	if (!nbg_exe_wrapper()) {
		execv("/proc/self/exe", argv);
		return;
	}
	k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (k > 0) {
		self[k] = '\0';
		nbg_execv(self, argv);
	}
}

#endif
