/*
 * cli_temp.c - the temporaries of nbg's outputs, removed when SIGINT,
 * SIGTERM or SIGHUP ends the process.  An output's temporary is registered
 * while it exists (cli_temp_register, by cli_out.c); the handler unlinks
 * every registered one, empties and removes a registered directory (a set
 * of outputs being staged: files only), with system calls alone, and lets
 * the signal end the process.  The handler is installed first thing in
 * main, when each of the three signals is at its default or ignored (exec
 * resets any other disposition): an ignored one stays ignored, and the
 * default is what follows the removal.  The library's guards are installed
 * after it and chain to it: the runtime's child processes end first.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli_temp.h"

/* Temporaries registered at once: nbg run stages two files per output and a
 * summary.  Each slot's path buffer is allocated at its first use and kept
 * (a handler may be reading it), so the table itself stays small. */
#define TEMP_SLOTS 4096

static struct temp_slot {
	int used;       /* atomic: 0 free, 1 claimed, 2 holds a path */
	char *path;     /* PATH_MAX bytes once used, never freed */
} temps[TEMP_SLOTS];

static const int term_signals[3] = { SIGINT, SIGTERM, SIGHUP };
static int installed; /* atomic */

int cli_temp_register(const char *path)
{
	size_t n = path ? strlen(path) : PATH_MAX;

	if (n >= PATH_MAX)
		return -1;
	for (int i = 0; i < TEMP_SLOTS; i++) {
		int zero = 0;
		if (!__atomic_compare_exchange_n(&temps[i].used, &zero, 1, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		if (!temps[i].path && !(temps[i].path = malloc(PATH_MAX))) {
			__atomic_store_n(&temps[i].used, 0, __ATOMIC_RELEASE);
			return -1;
		}
		memcpy(temps[i].path, path, n + 1);
		__atomic_store_n(&temps[i].used, 2, __ATOMIC_RELEASE);
		return i;
	}
	return -1;
}

void cli_temp_unregister(int slot)
{
	if (slot >= 0 && slot < TEMP_SLOTS)
		__atomic_store_n(&temps[slot].used, 0, __ATOMIC_RELEASE);
}

#if defined(__linux__) && defined(SYS_getdents64)
static int dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}

/* Unlinks the entries of the directory at `path` (not recursively) with
 * system calls only, as a signal handler may: getdents64 has no libc
 * function that is async-signal-safe.  Twice over, for entries a first
 * pass may skip while the directory shrinks. */
static void empty_dir(const char *path)
{
	char buf[4096] __attribute__((aligned(8)));
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	long n;

	if (fd < 0)
		return;
	for (int pass = 0; pass < 2 && lseek(fd, 0, SEEK_SET) == 0; pass++)
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
			for (long off = 0; off + 19 < n;) {
				/* struct linux_dirent64: d_ino, d_off (8 bytes each),
				 * d_reclen (2), d_type (1), d_name */
				unsigned short len;
				const char *name = buf + off + 19;
				memcpy(&len, buf + off + 16, sizeof(len));
				if (!dot_or_dotdot(name))
					unlinkat(fd, name, 0);
				if (!len)
					break;
				off += len;
			}
	close(fd);
}
#else
static void empty_dir(const char *path)
{
	(void)path;
}
#endif

static void on_term(int sig)
{
	for (int i = 0; i < TEMP_SLOTS; i++)
		if (__atomic_load_n(&temps[i].used, __ATOMIC_ACQUIRE) == 2 &&
		    unlink(temps[i].path) != 0) { /* async-signal-safe */
			empty_dir(temps[i].path);
			rmdir(temps[i].path);
		}
	/* the default action: delivered once the handler returns */
	signal(sig, SIG_DFL);
	raise(sig);
}

int cli_temp_guard(void)
{
	struct sigaction sa, old;

	if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL))
		return 0;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_term;
	for (int i = 0; i < 3; i++) {
		if (sigaction(term_signals[i], NULL, &old) != 0)
			return -1;
		if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
			continue; /* e.g. SIGHUP under nohup */
		if (sigaction(term_signals[i], &sa, NULL) != 0)
			return -1;
	}
	return 0;
}
